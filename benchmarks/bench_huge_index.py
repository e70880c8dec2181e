#!/usr/bin/env python3
"""Tiny files with one stray huge feature index: time and peak memory of the commands.

    .venv/bin/python benchmarks/bench_huge_index.py                   # this tree
    .venv/bin/python benchmarks/bench_huge_index.py --before a625136  # and the Python sources of a revision

A stray index of 10^7 in a file of a few lines used to make every dense pass
of a run O(10^7) (the averaging, the objective, the dual side of the duality
gap).  The runs now work on the columns the examples use, renumbered; this
measures the commands that had such passes (the training, the certified
gap, the dual finish), on

* ``bin.svm``: 2 binary examples, features 1 and 10^7;
* ``mc.svm``: 6 examples of 3 classes on features 1-4 and 10^7.

Each command runs ``--repeat`` times (the median wall time and the largest
peak RSS are reported, read with ``os.wait4`` on the command's process); a
run past ``--timeout`` seconds is stopped and reported as such.  With
``--before REV`` the same commands also run on the Python sources of REV
(``git archive``) with this tree's compiled modules (csrc/ must be the same
in both), in the same session, so the ratios share the load.  The load
average (``/proc/loadavg``) before and after is printed with the table.
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, markdown_table

HUGE = 10_000_000
FILES = {
    "bin.svm": f"1 1:1\n-1 {HUGE}:1\n",
    "mc.svm": f"1 1:1\n2 2:1\n3 3:1\n1 1:0.5 4:1\n2 2:0.7\n3 {HUGE}:1\n",
}
COMMANDS = [
    ("train mc.svm (one-vs-rest, defaults)", ["train", "-q", "-l", "1e-4", "mc.svm", "out.model"]),
    ("train --tol 0.01 mc.svm", ["train", "-q", "--tol", "0.01", "-l", "1e-4", "mc.svm", "out.model"]),
    ("train --epochs 8 --finish-passes 50 mc.svm",
     ["train", "-q", "--epochs", "8", "--finish-passes", "50", "-l", "1e-4", "mc.svm", "out.model"]),
    ("objective --gap bin.svm", ["objective", "--gap", "bin.svm", "bin.model"]),
]
MAIN = "import sys; from pegasos.cli import main; sys.exit(main())"


def loadavg():
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "unknown"


def measure(argv, cwd, env, timeout):
    """(seconds, peak RSS MiB, finished) of one run of ``argv``, stopped after ``timeout`` s."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - start > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return time.perf_counter() - start, usage.ru_maxrss / 1024.0, False
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv[3:])} failed: {proc.stderr.read().decode().strip()[-300:]}")
    return seconds, usage.ru_maxrss / 1024.0, True


def sources_of(revision, into):
    """The package of ``revision`` under ``into`` (git archive), with this tree's compiled modules."""
    if subprocess.run(["git", "-C", str(REPO), "diff", "--quiet", revision, "--", "csrc"]).returncode != 0:
        raise SystemExit(f"csrc/ differs between {revision} and this tree: its compiled modules are not these")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "pegasos"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for built in (REPO / "pegasos").glob("_*.so"):
        shutil.copy2(built, into / "pegasos" / built.name)
    return into


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command (default 3)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds after which a run is stopped")
    ap.add_argument("--before", default=None, help="a git revision whose Python sources are measured too")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="huge-index-") as tmp:
        tmp = Path(tmp)
        for name, text in FILES.items():
            (tmp / name).write_text(text)
        trees = [("this tree", REPO)]
        if args.before:
            (tmp / "before").mkdir()
            commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.before], check=True,
                                    capture_output=True, text=True).stdout.strip()
            trees.append((f"{args.before} ({commit})", sources_of(args.before, tmp / "before")))
        before = loadavg()
        rows = []
        for label, command in COMMANDS:
            cells = [label]
            for tree_name, tree in trees:
                env = dict(os.environ, PYTHONPATH=str(tree))
                if command[0] == "objective":       # the model of this tree's run, the same for both
                    subprocess.run([sys.executable, "-c", MAIN, "train", "-q", "-l", "1e-4", "bin.svm",
                                    "bin.model"], cwd=tmp, env=dict(os.environ, PYTHONPATH=str(REPO)), check=True)
                runs = []
                for _ in range(args.repeat):
                    runs.append(measure([sys.executable, "-c", MAIN, *command], tmp, env, args.timeout))
                    if not runs[-1][2]:
                        break                        # one stopped run says enough
                seconds = statistics.median(r[0] for r in runs)
                done = all(r[2] for r in runs)
                cells += [f"{seconds:.2f}" if done else f"> {args.timeout:.0f} (stopped)",
                          f"{max(r[1] for r in runs):.0f}"]
                print(tree_name, label, cells[-2:], file=sys.stderr)
            rows.append(cells)
        after = loadavg()
    headers = ["command"]
    for tree_name, _ in trees:
        headers += [f"{tree_name}: s (median of {args.repeat})", f"{tree_name}: peak RSS MiB"]
    print(f"`benchmarks/bench_huge_index.py --repeat {args.repeat} --timeout {args.timeout:g}"
          f"{' --before ' + args.before if args.before else ''}`; `/proc/loadavg` before: `{before}`, "
          f"after: `{after}` (2 shared cores).\n")
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
