"""Parse speed of SVMlight readers: pegasos vs scikit-learn vs LIBLINEAR's Python reader.

Every parse runs in a fresh process (benchmarks/parse_worker.py) which times
only the reader call; the file is read once beforehand so that all runs see it
in the page cache.  Throughput is file bytes / median seconds (MB = 10^6 bytes).
"""

import bz2
import json
import shutil
import statistics
import sys
from pathlib import Path

from common import REPO, fmt, markdown_table, run_measured, warm_cache

WORKER = REPO / "benchmarks" / "parse_worker.py"
SKIP_NAMES = {"readme", "license"}
SKIP_SUFFIXES = {".md", ".txt.sha256", ".sha256", ".json", ".part", ".py", ".sh"}

READER_NOTES = {
    "pegasos": "pegasos.load_svmlight (compiled reader)",
    "pegasos-2threads": "pegasos.io.read_svmlight(threads=2): the file cut at line starts into two byte "
                        "ranges parsed by two threads, the pieces joined in order (same arrays bit for bit)",
    "sklearn": "sklearn.datasets.load_svmlight_file (Cython)",
    "liblinear": "liblinear.liblinearutil.svm_read_problem(return_scipy=True): "
                 "pure Python, one loop per line and token; drops explicit zeros",
}


def _bz2_size(path):
    """Uncompressed size of a .bz2 file (streams through it once)."""
    size = 0
    with bz2.open(path, "rb") as f:
        while True:
            block = f.read(1 << 24)
            if not block:
                return size
            size += len(block)


def data_files(root):
    """Data files under ``root`` with their uncompressed sizes: [(path, size)]."""
    found = []
    for path in sorted(Path(root).rglob("*")):
        name = path.name.lower()
        if not path.is_file() or name.startswith(".") or name.split(".")[0] in SKIP_NAMES:
            continue
        if any(name.endswith(s) for s in SKIP_SUFFIXES):
            continue
        size = _bz2_size(path) if name.endswith(".bz2") else path.stat().st_size
        found.append((path, size))
    return found


def largest_real_file(root, tmpdir):
    """The largest data file under ``root`` by uncompressed size, as a plain file.

    A ``.bz2`` winner is decompressed into ``tmpdir`` first.  Returns
    ``(path to parse, display name)`` or ``(None, reason)``.
    """
    files = data_files(root)
    if not files:
        return None, f"no data files under {root}"
    path, _ = max(files, key=lambda item: item[1])
    shown = str(path.relative_to(root))
    if path.suffix == ".bz2":
        plain = Path(tmpdir) / path.name[: -len(".bz2")]
        with bz2.open(path, "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 24)
        return plain, shown + " (decompressed)"
    return path, shown


def parse_runs(tool, path, repeats):
    """Parse ``path`` ``repeats`` times with ``tool`` in fresh processes.

    Returns a dict with the median seconds, all times, peak RSS (MiB, max over
    runs), rows and nnz, or ``error`` if a run failed.
    """
    times, peaks, info = [], [], {}
    for _ in range(repeats):
        run = run_measured([sys.executable, str(WORKER), tool, str(path)])
        if run["returncode"] != 0:
            tail = (run["stderr"].strip().splitlines() or ["(no message)"])[-1]
            return dict(error=f"exit {run['returncode']}: {tail}")
        info = json.loads(run["stdout"].strip().splitlines()[-1])
        times.append(info["seconds"])
        peaks.append(run["maxrss_mb"])
    return dict(median=statistics.median(times), times=times, peak_rss_mb=max(peaks),
                rows=info["rows"], cols=info["cols"], nnz=info["nnz"])


def run(files, tools, repeats, peer_repeats=None, log=print):
    """Benchmark ``tools`` on ``files`` = [(name, path, is_big)].

    ``peer_repeats`` (if given) replaces ``repeats`` for the non-pegasos
    readers on big files.  Returns ``(markdown table, notes, raw results)``.
    """
    rows, notes, raw = [], [], []
    for name, path, is_big in files:
        size = Path(path).stat().st_size
        warm_cache(path)
        for tool in tools:
            n = repeats
            if is_big and not tool.startswith("pegasos") and peer_repeats is not None:
                n = min(repeats, peer_repeats)
            log(f"  parse {name} with {tool} x{n} ...")
            res = parse_runs(tool, path, n)
            raw.append(dict(file=name, bytes=size, tool=tool, **res))
            if "error" in res:
                rows.append([name, fmt(size / 1e6), tool, n, "-", "-", "-", "-",
                             f"failed: {res['error']}"])
                continue
            log(f"    {res['median']:.2f} s, {size / 1e6 / res['median']:.1f} MB/s, "
                f"peak {res['peak_rss_mb']:.0f} MiB")
            rows.append([name, fmt(size / 1e6, 4), tool, n, f"{res['median']:.3f}",
                         f"{size / 1e6 / res['median']:.1f}", f"{res['peak_rss_mb']:.0f}",
                         f"{res['rows']} x {res['cols']}", res["nnz"]])
            if n < repeats:
                notes.append(f"{tool} on {name}: {n} run(s) instead of {repeats} "
                             "(slow peer on the big file; see --peer-big-repeats)")
    notes += agreement_notes(raw)
    for name in dict.fromkeys(r["file"] for r in raw):
        speed = {r["tool"]: r["bytes"] / r["median"] for r in raw if r["file"] == name and "error" not in r}
        if "pegasos" in speed and "pegasos-2threads" in speed:
            notes.append(f"{name}: two threads parse at {speed['pegasos-2threads'] / speed['pegasos']:.2f}x "
                         "the speed of one")
    for tool in tools:
        notes.append(f"{tool}: {READER_NOTES[tool]}")
    headers = ["file", "MB", "reader", "runs", "median s", "MB/s", "peak RSS MiB",
               "shape", "nnz"]
    return markdown_table(headers, rows), notes, raw


def agreement_notes(raw):
    """Notes where readers disagree on the shape or nnz of the same file."""
    notes = []
    for name in dict.fromkeys(r["file"] for r in raw):
        ok = [r for r in raw if r["file"] == name and "error" not in r]
        shapes = {(r["rows"], r["cols"], r["nnz"]) for r in ok}
        if len(shapes) > 1:
            found = ", ".join(f"{r['tool']} {r['rows']} x {r['cols']} nnz {r['nnz']}" for r in ok)
            notes.append(f"readers disagree on {name}: {found} "
                         "(nnz differs when a reader drops explicit zeros)")
    return notes
