#!/usr/bin/env python3
"""Merge the sections of a partial benchmark report into an existing one.

``run_all.py --only SECTION`` measures a few sections; writing its report over
benchmarks/RESULTS.md would lose every other section's tables.  Instead, each
``## title`` section of the new report replaces the section with the same title in
the old file (or is appended), and gets a line saying when, at which commit and
with which command it was measured, since the old file's header describes the
run that produced the rest.

    python benchmarks/merge_results.py NEW.md [RESULTS.md]    # rewrites RESULTS.md
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOTAL = "_Total benchmark time"
PROVENANCE_KEYS = ("date:", "git commit:", "load average at start", "command:")


def split(text):
    """(preamble, [(heading line, body)], trailer lines): sections start at '## '."""
    lines = text.rstrip("\n").split("\n")
    trailer = []
    while lines and (lines[-1].startswith(TOTAL) or not lines[-1].strip()):
        line = lines.pop()
        if line.strip():
            trailer.insert(0, line)
    preamble, sections = [], []
    for line in lines:
        if line.startswith("## "):
            sections.append([line, []])
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    return preamble, [(h, "\n".join(b).strip("\n")) for h, b in sections], trailer


def provenance(preamble, trailer):
    """One line from the new report's header and trailer: date, commit, load, command, total time."""
    facts = []
    for line in preamble:
        text = line.lstrip("- ").strip()
        if any(text.startswith(key) for key in PROVENANCE_KEYS):
            facts.append(text.split(" (other work")[0])
    for line in trailer:
        facts.append("that run took " + line.strip("_").split(":", 1)[-1].strip().rstrip("."))
    return "_Measured separately from the rest of this file: " + "; ".join(facts) + "._" if facts else ""


def merge(old_text, new_text):
    """The old report with the new report's sections put in (see the module docstring)."""
    old_pre, old_sections, old_trailer = split(old_text)
    new_pre, new_sections, new_trailer = split(new_text)
    stamp = provenance(new_pre, new_trailer)
    merged = list(old_sections)
    titles = [h for h, _ in merged]
    for heading, body in new_sections:
        body = f"{stamp}\n\n{body}" if stamp else body
        if heading in titles:
            merged[titles.index(heading)] = (heading, body)
        else:
            merged.append((heading, body))
            titles.append(heading)
    parts = ["\n".join(old_pre).rstrip("\n")]
    parts += [f"{h}\n\n{b}" for h, b in merged]
    text = "\n\n".join(parts) + "\n"
    if old_trailer:
        text += "\n" + "\n".join(old_trailer) + "\n"
    return text


def main(argv=None):
    """Entry point."""
    argv = sys.argv[1:] if argv is None else argv
    if not 1 <= len(argv) <= 2:
        raise SystemExit(__doc__.strip().split("\n\n")[-1])
    new = Path(argv[0])
    target = Path(argv[1]) if len(argv) == 2 else HERE / "RESULTS.md"
    old = target.read_text() if target.exists() else ""
    target.write_text(merge(old, new.read_text()) if old else new.read_text())
    print(f"merged {new} into {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
