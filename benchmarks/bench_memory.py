"""Peak memory of ``pegasos predict`` on a file and on one 10 times larger.

``pegasos predict DATA MODEL OUT`` should stream: its peak resident set size
(read with os.wait4 on the child, see common.run_measured) must not grow with
the size of DATA.  The model is trained with ``pegasos train`` (1 epoch) on the
smaller file; both files come from make_synthetic.py with the same seed and
feature count, so the small one is a prefix of the large one.
"""

from pathlib import Path

from common import markdown_table, pegasos_command, run_measured

#: Peak RSS ratio (large / small) above which memory is said to grow.
GROWTH_LIMIT = 1.25


def run(small, large, tmpdir, log=print):
    """Measure predict on ``small`` and ``large``; return ``(table, notes, raw)``."""
    exe = pegasos_command()
    if exe is None:
        return "", ["pegasos console script not found: memory benchmark skipped"], []
    tmpdir = Path(tmpdir)
    model = tmpdir / "synthetic.model"
    train = run_measured([exe, "train", "--epochs", "1", "-q", "--no-objective", str(small), str(model)])
    if train["returncode"] != 0:
        return "", [f"`pegasos train` on {small.name} failed: {train['stderr'].strip()[-300:]}"], []

    rows, raw, notes = [], [], []
    for path in (small, large):
        out = tmpdir / (path.name + ".pred")
        log(f"  pegasos predict {path.name} ...")
        res = run_measured([exe, "predict", str(path), str(model), str(out)])
        size_mb = path.stat().st_size / 1e6
        if res["returncode"] != 0:
            notes.append(f"`pegasos predict {path.name}` failed: {res['stderr'].strip()[-300:]}")
            rows.append([path.name, f"{size_mb:.0f}", "-", "-", "-", "failed"])
            continue
        lines = _count_lines(out)
        out.unlink()
        raw.append(dict(file=path.name, mb=size_mb, **{k: res[k] for k in ("seconds", "maxrss_mb")}))
        log(f"    {res['seconds']:.1f} s, peak RSS {res['maxrss_mb']:.0f} MiB")
        rows.append([path.name, f"{size_mb:.0f}", f"{res['seconds']:.2f}",
                     f"{size_mb / res['seconds']:.1f}", f"{res['maxrss_mb']:.0f}", lines])
    if len(raw) == 2:
        ratio = raw[1]["maxrss_mb"] / raw[0]["maxrss_mb"]
        verdict = "flat" if ratio <= GROWTH_LIMIT else "GROWS"
        notes.append(f"peak RSS large/small = {ratio:.2f} for {raw[1]['mb'] / raw[0]['mb']:.1f}x "
                     f"the data: {verdict} (limit {GROWTH_LIMIT})")
    notes.append("one run per file; peak RSS (ru_maxrss) of the whole `pegasos predict` "
                 "process, interpreter and imports included, read by a small fork/exec launcher")
    headers = ["file", "MB", "seconds", "MB/s", "peak RSS MiB", "predictions written"]
    return markdown_table(headers, rows), notes, raw


def _count_lines(path):
    """Number of lines in a file."""
    count = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            count += block.count(b"\n")
    return count
