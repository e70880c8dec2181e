"""Whole-process time and peak memory of `pegasos train` on 1M and 4M rows, against LIBLINEAR and sofia-ml.

Does the whole process (read the text, train, write the model) grow linearly with the rows, and does
its peak memory stay near the size of the data's CSR arrays?  Each command runs as its own process
under a small launcher (common.run_measured: wall seconds, user and system seconds and peak RSS from
os.wait4); the commands take turns, run by run, in a rotated order each round, --repeats rounds;
the table gives medians (peak RSS: the largest), the growth from the smallest to the largest file
and the 1-minute load average read before each run.

Commands (lambda = 1e-4, which is also `pegasos train`'s default; C = 1/(lambda m) for LIBLINEAR):

* ``pegasos train -q DATA MODEL`` (default settings), as ``python -c "from pegasos.cli import main"``
  so that --before (a directory holding another version of the package, its extensions built in
  place, put first on PYTHONPATH) runs the same way; the model files of the two are compared;
* LIBLINEAR's C program ``train -s 3 -c C -B -1 -q`` (--liblinear PATH: a build of LIBLINEAR's
  ``train``, made outside this repository);
* sofia-ml's Pegasos, one epoch (``--learner_type pegasos --loop_type stochastic --iterations m``;
  --sofia PATH, a build made outside this repository).

Data: ``s1m.svm`` / ``s4m.svm`` style files in --data-dir (``s<rows/10^6>m.svm``), made there when
missing with data_scripts/make_synthetic.py --rows R --features 50000 --nnz-per-row 50 --seed 0
(each a prefix of the next; 4M rows are 2.5 GB).  The CSR bytes column is what the arrays of a
float64 CSR matrix take (indptr int64, indices int32, data float64), counted from the text's lines
and ':'; the memory target is at most ``RSS_FACTOR`` times that plus ``RSS_SLACK_MIB``.

With --profile it only runs each pegasos command once per file, sampling its VmRSS every 50 ms, and
prints the samples where it moved (by 32 MiB or more): which step of the run holds the peak.

Usage: python benchmarks/bench_scale_peers.py [--rows 1000000 4000000] [--data-dir DIR] [--repeats 3]
       [--liblinear PATH] [--sofia PATH] [--before DIR] [--output FILE] [--profile]
"""

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import machine_info, make_synthetic, markdown_table, run_measured

HERE = Path(__file__).resolve().parent
LAM = 1e-4
FEATURES, NNZ_PER_ROW = 50_000, 50
#: peak RSS target: at most RSS_FACTOR x the CSR arrays' bytes + RSS_SLACK_MIB
RSS_FACTOR, RSS_SLACK_MIB = 1.15, 64
MIB = 1 << 20


def data_file(directory, rows):
    """The synthetic file of ``rows`` rows in ``directory``, made there when missing."""
    name = f"s{rows // 10**6}m.svm" if rows % 10**6 == 0 else f"s{rows}.svm"
    path = Path(directory) / name
    if not path.exists():
        print(f"making {path} ...", flush=True)
        make_synthetic(path, 1e15, features=FEATURES, nnz=NNZ_PER_ROW, extra=("--rows", str(rows)))
    return path


def count_text(path):
    """(lines, ':' tokens) of a file: its rows and stored values (the synthetic files have no comments,
    no qid and no zero values)."""
    lines = colons = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            lines += block.count(b"\n")
            colons += block.count(b":")
    return lines, colons


def csr_bytes(rows, nnz):
    """Bytes of a float64 CSR matrix's arrays: indptr int64, indices int32, data float64."""
    return 8 * (rows + 1) + (4 + 8) * nnz


def pegasos_cmd(args):
    return [sys.executable, "-c", "import sys; from pegasos.cli import main; sys.argv[0] = 'pegasos'; main()",
            *args]


def commands(path, rows, tmp, args):
    """[(tool name, command, environment, model path)] for one data file."""
    env = dict(os.environ)
    out = Path(tmp) / path.stem
    cmds = []
    variants = [("pegasos", env)]
    if args.before:
        variants.insert(0, ("pegasos before", dict(env, PYTHONPATH=args.before + os.pathsep
                                                   + env.get("PYTHONPATH", ""))))
    for name, e in variants:
        model = f"{out}.{name.replace(' ', '-')}.model"
        cmds.append((f"{name} train (default, lambda 1e-4)", pegasos_cmd(["train", "-q", str(path), model]), e,
                     model))
    if args.liblinear:
        model = f"{out}.liblinear.model"
        cmds.append(("LIBLINEAR -s 3 (C train)", [args.liblinear, "-s", "3", "-c", repr(1.0 / (LAM * rows)),
                                                  "-B", "-1", "-q", str(path), model], env, model))
    if args.sofia:
        model = f"{out}.sofia.model"
        cmds.append(("sofia-ml pegasos, 1 epoch", [args.sofia, "--learner_type", "pegasos", "--loop_type",
                                                   "stochastic", "--lambda", repr(LAM), "--iterations", str(rows),
                                                   "--dimensionality", str(FEATURES + 1), "--training_file",
                                                   str(path), "--model_out", model], env, model))
    return cmds


def rss_profile(cmd, env, cwd, every=0.05, step_mib=32):
    """Run ``cmd`` sampling its VmRSS every ``every`` seconds; the samples where it moved by at least
    ``step_mib`` MiB since the last one kept, as (seconds, MiB) pairs, and the largest sample."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kept, last, peak = [], None, 0
    while child.poll() is None:
        try:
            with open(f"/proc/{child.pid}/status") as f:
                mib = next((int(line.split()[1]) >> 10 for line in f if line.startswith("VmRSS:")), None)
        except OSError:
            mib = None
        if mib is not None:
            peak = max(peak, mib)
            if last is None or abs(mib - last) >= step_mib:
                kept.append((time.perf_counter() - start, mib))
                last = mib
        time.sleep(every)
    return kept, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 4_000_000])
    ap.add_argument("--data-dir", default=str(HERE / "out"), help="where the synthetic files are (made if missing)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--liblinear", help="LIBLINEAR's train program (a C build)")
    ap.add_argument("--sofia", help="sofia-ml's program")
    ap.add_argument("--before", help="directory holding the pegasos version to time as 'before'")
    ap.add_argument("--output", help="also write the results (markdown) to this file")
    ap.add_argument("--profile", action="store_true",
                    help="only sample the pegasos commands' VmRSS (every 50 ms) once per file and print where it moves")
    args = ap.parse_args()
    Path(args.data_dir).mkdir(parents=True, exist_ok=True)
    info = machine_info()
    files = [(rows, data_file(args.data_dir, rows)) for rows in sorted(args.rows)]
    sizes = {}
    for rows, path in files:
        lines, nnz = count_text(path)
        sizes[rows] = dict(path=path, lines=lines, nnz=nnz, csr=csr_bytes(lines, nnz), mb=path.stat().st_size / 1e6)
    tmp = tempfile.mkdtemp(prefix="pegasos-scale-peers-")
    plan = {rows: commands(path, rows, tmp, args) for rows, path in files}
    tools = [name for name, _, _, _ in plan[files[0][0]]]
    for name, _, env, _ in plan[files[0][0]]:
        if name.startswith("pegasos"):
            where = run_measured([sys.executable, "-c", "import pegasos; print(pegasos.__file__)"], env=env, cwd=tmp)
            print(f"{name}: {where['stdout'].strip()}", flush=True)
    if args.profile:
        for rows, _ in files:
            for name, cmd, env, _ in plan[rows]:
                if name.startswith("pegasos"):
                    kept, peak = rss_profile(cmd, env, tmp)
                    print(f"{rows:,} rows, {name}: peak {peak} MiB; " + ", ".join(f"{t:.1f} s {m}" for t, m in kept))
        return
    runs = {(name, rows): [] for rows in plan for name in tools}
    loads = []
    for r in range(args.repeats):
        for j, (rows, _) in enumerate(files):
            cmds = plan[rows]
            k = (r + j) % len(cmds)
            for name, cmd, env, _ in cmds[k:] + cmds[:k]:
                load = os.getloadavg()[0]
                loads.append(load)
                run = run_measured(cmd, env=env, cwd=tmp)     # not the checkout: '' would come before PYTHONPATH
                if run["returncode"] != 0:
                    raise SystemExit(f"{name} on {rows} rows failed: {run['stderr'].strip()[-400:]}")
                run["load"] = load
                runs[name, rows].append(run)
                print(f"round {r + 1}, {rows:,} rows, {name}: {run['seconds']:.2f} s (user {run['user']:.2f}, "
                      f"sys {run['system']:.2f}), peak RSS {run['maxrss_mb']:.0f} MiB, load {load:.2f}", flush=True)
    small, large = files[0][0], files[-1][0]
    med = lambda xs: statistics.median(xs)  # noqa: E731
    table = []
    for name in tools:
        cells = [name]
        for rows in (small, large):
            rs = runs[name, rows]
            cells.append(f"{med([x['seconds'] for x in rs]):.2f} (user {med([x['user'] for x in rs]):.2f}, "
                         f"sys {med([x['system'] for x in rs]):.2f})")
        t_small, t_large = (med([x["seconds"] for x in runs[name, rows]]) for rows in (small, large))
        c_small, c_large = (med([x["user"] + x["system"] for x in runs[name, rows]]) for rows in (small, large))
        cells.append(f"{t_large / t_small:.2f}x (CPU {c_large / c_small:.2f}x)")
        rss = [max(x["maxrss_mb"] for x in runs[name, rows]) for rows in (small, large)]
        cells.append(" / ".join(f"{x:.0f}" for x in rss))
        cells.append(" / ".join(f"{x * MIB / sizes[rows]['csr']:.2f}" for x, rows in zip(rss, (small, large))))
        table.append(cells)
    rows_label = lambda m: f"{m / 10**6:g}M" if m % 10**5 == 0 else f"{m:,}"  # noqa: E731
    headers = ["command", f"{rows_label(small)} rows: wall s", f"{rows_label(large)} rows: wall s",
               f"growth {rows_label(small)} -> {rows_label(large)}",
               f"peak RSS MiB {rows_label(small)} / {rows_label(large)}", "peak RSS / CSR bytes"]
    limits = ", ".join(f"{rows_label(m)}: {sizes[m]['mb']:.0f} MB of text, {sizes[m]['lines']:,} rows, "
                       f"{sizes[m]['nnz']:,} values, CSR {sizes[m]['csr'] / MIB:.0f} MiB, target peak "
                       f"<= {(RSS_FACTOR * sizes[m]['csr'] / MIB + RSS_SLACK_MIB):.0f} MiB" for m in (small, large))
    notes = [
        "growth: of the median wall seconds (in brackets: of the median user + system seconds, which other "
        "work on the machine disturbs less)",
        f"{args.repeats} rounds, the commands taking turns in a rotated order; wall, user and system seconds: "
        "medians; peak RSS: the largest of the runs",
        f"load average (1 min) before the runs: {min(loads):.2f}-{max(loads):.2f}, median {med(loads):.2f} "
        f"({info['cores']} cores)",
        limits,
        f"peak RSS target: at most {RSS_FACTOR} x the CSR bytes + {RSS_SLACK_MIB} MiB",
    ]
    if args.before:
        same = [filecmp.cmp(plan[rows][0][3], plan[rows][1][3], shallow=False) for rows in plan]
        notes.append(f"model files of `pegasos before` and `pegasos` identical: {all(same)} "
                     f"({', '.join(rows_label(m) for m in plan)})")
    text = "\n".join([f"- date: {info['date']}; commit: {info['commit']}; CPU: {info['cpu']}, {info['cores']} cores, "
                      f"{info['memory_gb']} GiB", f"- command: `python benchmarks/bench_scale_peers.py "
                      f"{' '.join(sys.argv[1:])}`", "", markdown_table(headers, table), ""]
                     + [f"- {n}" for n in notes])
    print()
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n")


if __name__ == "__main__":
    main()
