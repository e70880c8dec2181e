"""Resume on new data against retraining from scratch (a9a split in two by line order).

Day 1 trains on the first half of a9a (lines 1-16280) with the resume section;
day 2 resumes it on the second half (``pegasos train --init``).  That is
compared with retraining from scratch on the whole of a9a (both halves) for
the same total number of iterations, and for the wall time of the day-2 update.
Each model's primal objective on all of a9a (``pegasos objective``) and its
test accuracy on a9a.t (``pegasos eval``) are reported with the certified
optimum f* of the shared data README, in benchmarks/RESULTS_resume.md.

    .venv/bin/python benchmarks/bench_resume.py [--data DIR] [--out FILE]
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
F_STAR = 0.3517618027          # a9a, lambda = 1e-4 (shared data README)
LAM = "1e-4"


def pegasos(*args):
    exe = Path(sys.executable).with_name("pegasos")
    start = time.perf_counter()
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if r.returncode:
        raise SystemExit(f"pegasos {' '.join(map(str, args))} failed: {r.stderr.strip()}")
    return r.stdout + r.stderr, wall


def train(*args):
    out, wall = pegasos("train", "--no-objective", *args)
    seconds = float(re.search(r"train ([0-9.]+) s", out).group(1))
    T = int(re.search(r"T=(\d+)", out).group(1))
    return {"train_s": seconds, "wall_s": wall, "T": T}


def scores(model, train_file, test_file):
    obj, _ = pegasos("objective", "--json", "-q", train_file, model)
    ev, _ = pegasos("eval", "--json", "-q", test_file, model)
    f = json.loads(obj)["objective"]
    return {"objective": f, "excess": (f - F_STAR) / F_STAR, "accuracy": json.loads(ev)["accuracy"]}


def header_value(model, key):
    for line in open(model):
        if line.startswith(key + " "):
            return line.split(None, 1)[1].strip()
    raise SystemExit(f"{model}: no {key} line")


def header_T(model):
    return int(header_value(model, "iterations"))


def scenario(name, tmp, half1, half2, full, test, day1_args, day2_args):
    d1, d2 = tmp / f"{name}.day1.model", tmp / f"{name}.day2.model"
    r1 = train("-l", LAM, "--resume-state", *day1_args, half1, d1)
    r2 = train("--init", d1, *day2_args, half2, d2)
    total = header_T(d2)
    same_T = tmp / f"{name}.scratch_T.model"
    t0 = header_value(d1, "step_offset")       # day 1's calibrated t0: the scratch runs time the solver only
    rs = train("-l", LAM, "-T", total, "--t0", t0, full, same_T)
    rate = rs["T"] / rs["train_s"]                        # iterations per second of the scratch run
    T_time = max(1, int(rate * r2["train_s"]))
    same_time = tmp / f"{name}.scratch_time.model"
    rt = train("-l", LAM, "-T", T_time, "--t0", t0, full, same_time)
    rows = [
        (f"day 1: half 1, {' '.join(day1_args) or 'defaults'}", r1, scores(d1, full, test), header_T(d1)),
        (f"day 2: --init, half 2, {' '.join(day2_args) or 'defaults (1 epoch)'}", r2, scores(d2, full, test), total),
        ("scratch on all, same total T", rs, scores(same_T, full, test), total),
        ("scratch on all, day 2's training time", rt, scores(same_time, full, test), T_time),
    ]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("PEGASOS_DATA", REPO.parent / "shared" / "data"))
    parser.add_argument("--out", default=REPO / "benchmarks" / "RESULTS_resume.md")
    args = parser.parse_args()
    full = Path(args.data) / "a9a" / "a9a"
    test = Path(args.data) / "a9a" / "a9a.t"
    load_before = open("/proc/loadavg").read().split()[:3]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lines = full.read_bytes().splitlines(keepends=True)
        cut = len(lines) // 2
        half1, half2 = tmp / "a9a.half1", tmp / "a9a.half2"
        half1.write_bytes(b"".join(lines[:cut]))
        half2.write_bytes(b"".join(lines[cut:]))
        results = {
            "defaults (doubling rule on day 1, one epoch on day 2)": scenario("auto", tmp, half1, half2, full,
                                                                               test, (), ()),
            "5 epochs each day": scenario("e5", tmp, half1, half2, full, test, ("--epochs", "5"),
                                          ("--epochs", "5")),
        }
    load_after = open("/proc/loadavg").read().split()[:3]
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    out = [
        "# Resume on new data (`pegasos train --init`) against retraining",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}"
        f"{' (with uncommitted changes)' if dirty else ''}, `benchmarks/bench_resume.py`; "
        f"load average {' '.join(load_before)} before, {' '.join(load_after)} after (2 cores, shared).",
        "",
        f"a9a split by line order: half 1 = lines 1-{cut} (the model's day 1), half 2 = lines {cut + 1}-{len(lines)} "
        "(day 2, resumed from day 1's model file with its resume section). lambda = 1e-4; objective f on all of "
        f"a9a (`pegasos objective`), f* = {F_STAR} (certified, shared data README); accuracy on a9a.t "
        "(`pegasos eval`). 'Same total T': one run on all of a9a with day 1's plus day 2's iterations; 'day 2's "
        "training time': one run on all of a9a with as many iterations as its measured rate gives in the "
        "seconds of day 2's training.  The scratch runs take day 1's calibrated t0 (`--t0`), so their seconds are "
        "the solver's; a default retraining also calibrates t0 again (day 1's row includes that, about 0.5 s).  "
        "Times are the summary's training seconds (reading excluded), one run each.",
        "",
    ]
    for title, rows in results.items():
        out += [f"## {title}", "", "| run | iterations T (total) | train s | f(w) on a9a | (f - f*)/f* | "
                "test accuracy |", "|---|---|---|---|---|---|"]
        for name, r, s, T in rows:
            out.append(f"| {name} | {T} | {r['train_s']:.2f} | {s['objective']:.6f} | {100 * s['excess']:.2f}% | "
                       f"{s['accuracy']:.4f} |")
        out.append("")
    Path(args.out).write_text("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
