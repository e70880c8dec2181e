"""The scale curve m = 10^5, 10^6, 10^7.

Synthetic sets with a fixed row length (10 non-zeros a row, 20,000 features,
make_synthetic.py seed 0, so each file is a prefix of the next; 10^7 rows are about
1.26 GB of text), lambda = 1e-4, no bias.  For each m:

* read time and peak RSS of ``pegasos.io.read_svmlight`` in a fresh process;
* f*: LIBLINEAR -s 3 -e 1e-4 (C = 1/(lambda m)) in this process, or, above
  ``LIBLINEAR_MAX_M`` examples or without liblinear-official, the lowest objective of
  a long averaged pegasos run; either way lowered to the best f seen in the section;
* for the three pegasos settings of bench_synthetic (paper default; permutation with
  --average-from 0.5; the same with the first step eta0 = 0.01): the smallest number of iterations T
  in a grid that reaches f <= 1.01 f* for each of the seeds 1, 2, 3, its training
  time through the Python API (median), and the whole ``pegasos train -T T`` process
  (its own read and train times, wall time, peak RSS);
* the gap f/f* - 1 after a fixed T = 10^6 iterations (mean over the seeds).

The paper's claim (Sec. 1, Sec. 7): the number of iterations to a given accuracy, and
so the run time of Pegasos, does not depend on the number of examples m.
"""

import gc
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import bench_synthetic as bs
from bench_compressed import _READ
from common import make_synthetic, markdown_table, median_time, run_measured, to_pm1, warm_cache

M_LIST, QUICK_M_LIST = (10**5, 10**6, 10**7), (10**4, 10**5, 10**6)
FEATURES, NNZ = 20_000, 10
LAM = 1e-4
TOL = 0.01
SEEDS = (1, 2, 3)
T_GRID = [int(a * 10**k) for k in range(4, 8) for a in (1, 1.5, 2, 3, 5, 7)]
T_GRID = [t for t in T_GRID if t <= 3 * 10**7]
T_FIXED = 10**6
LIBLINEAR_MAX_M = 10**7
TIGHT_EPS = 1e-4
#: Fallback f*: a long averaged run of this many epochs (permutation, --average-from 0.5).
FALLBACK_EPOCHS = 30

SUMMARY = re.compile(r"read ([0-9.]+) s, train ([0-9.]+) s")


def reference_optimum(pegasos, X, y, m, score, log):
    """(f*, how it was found)."""
    if m <= LIBLINEAR_MAX_M:
        try:
            ll = bs.Liblinear(X, y, LAM)
            start = time.perf_counter()
            f = score(bs.liblinear_weights(ll.fit(TIGHT_EPS)))
            seconds = time.perf_counter() - start
            how = (f"LIBLINEAR -e {TIGHT_EPS:g}: {ll.build_seconds:.1f} s building its problem + "
                   f"{seconds:.1f} s training")
            del ll
            gc.collect()
            return f, how
        except ImportError:
            pass
    start = time.perf_counter()
    model = bs.pegasos_fit(pegasos, X, y, LAM, dict(sampling="permutation", average_from=0.5), 1,
                           epochs=FALLBACK_EPOCHS)
    return score(model.w), (f"pegasos, {FALLBACK_EPOCHS} epochs, permutation, --average-from 0.5 "
                            f"({time.perf_counter() - start:.0f} s; LIBLINEAR not run)")


def cli_runs(cmd, repeats):
    """Whole `pegasos train` runs: medians of wall, read and train seconds, max peak RSS."""
    walls, reads, trains, rss = [], [], [], []
    for _ in range(repeats):
        run = run_measured(cmd)
        if run["returncode"] != 0:
            raise RuntimeError(f"`{' '.join(map(str, cmd[1:]))}` failed: {run['stderr'].strip()[-300:]}")
        walls.append(run["seconds"])
        rss.append(run["maxrss_mb"])
        found = SUMMARY.search(run["stdout"])
        if found:
            reads.append(float(found.group(1)))
            trains.append(float(found.group(2)))
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    return dict(wall=med(walls), read=med(reads), train=med(trains), rss=max(rss))


def one_m(pegasos, m, tmpdir, repeats, log):
    """Every measurement for one m; returns (data row, setting rows)."""
    path = Path(tmpdir) / f"scale-{m}.svm"
    log(f"  m = {m}: writing ...")
    make_synthetic(path, 1e15, features=FEATURES, nnz=NNZ, extra=("--rows", str(m)))
    mb = path.stat().st_size / 1e6
    warm_cache(path)

    reads, read_rss = [], []
    for _ in range(repeats):
        run = run_measured([sys.executable, "-c", _READ, str(path)])
        if run["returncode"] != 0:
            raise RuntimeError(f"reading {path} failed: {run['stderr'].strip()[-300:]}")
        reads.append(float(json.loads(run["stdout"].strip().splitlines()[-1])["seconds"]))
        read_rss.append(run["maxrss_mb"])
    read_s = statistics.median(reads)
    log(f"    read {read_s:.2f} s, peak RSS {max(read_rss):.0f} MiB")

    X, y = pegasos.load_svmlight(str(path))
    y = to_pm1(y)
    score = bs.Scorer(X, y, LAM)
    f_star, how = reference_optimum(pegasos, X, y, m, score, log)
    log(f"    f* = {f_star:.10f} ({how})")
    target = (1.0 + TOL) * f_star

    settings_rows = []
    best_seen = f_star
    for name, settings, flags in bs.SETTINGS:
        log(f"    {name}: searching T ...")
        found = bs.search(T_GRID, lambda T, s: score(bs.pegasos_fit(pegasos, X, y, LAM, settings, s,
                                                                     iterations=T).w), target, SEEDS)
        best_seen = min(best_seen, found["best"])
        row = dict(m=m, setting=name, T=found["value"], f=found["f"], best=found["best"])
        fixed = [score(bs.pegasos_fit(pegasos, X, y, LAM, settings, s, iterations=T_FIXED).w) for s in SEEDS]
        best_seen = min(best_seen, *fixed)
        row["fixed"] = fixed
        if found["value"] is not None:
            T = found["value"]
            row["api"], _, _ = median_time(lambda: bs.pegasos_fit(pegasos, X, y, LAM, settings, 1,
                                                                      iterations=T), repeats)
            model = Path(tmpdir) / "scale.model"
            cmd = bs.cli_command(path, model, LAM, flags, iterations=T)
            row["cli"] = cli_runs(cmd, repeats)
            model.unlink()
            log(f"      T = {T}, API {row['api']:.3f} s, CLI {row['cli']['wall']:.2f} s, "
                f"peak RSS {row['cli']['rss']:.0f} MiB")
        settings_rows.append(row)
    del X, y, score
    gc.collect()
    path.unlink()
    data_row = dict(m=m, mb=mb, read=read_s, read_rss=max(read_rss), f_star=f_star, how=how,
                    best_seen=best_seen)
    return data_row, settings_rows


def run(tmpdir, repeats, quick, pegasos, log=print):
    """The scale curve; returns [(title, table, notes)]."""
    repeats = min(repeats, 3)
    ms = QUICK_M_LIST if quick else M_LIST
    load_start = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.perf_counter()
    data_rows, rows = [], []
    for m in ms:
        d, r = one_m(pegasos, m, tmpdir, repeats, log)
        data_rows.append(d)
        rows += r
    load_end = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    minutes = (time.perf_counter() - started) / 60

    # table 1: the data, reading, f*
    t1 = []
    for d in data_rows:
        train_rss = max((r["cli"]["rss"] for r in rows if r["m"] == d["m"] and "cli" in r), default=None)
        t1.append([f"{d['m']:,}", f"{d['mb']:.0f}", f"{d['read']:.2f}", f"{d['mb'] / d['read']:.0f}",
                   f"{d['read_rss']:.0f}", f"{train_rss:.0f}" if train_rss else "-",
                   f"{d['f_star']:.8f}", d["how"]])
    table1 = markdown_table(["m", "text MB", "read s", "MB/s", "reader peak RSS MiB",
                             "`pegasos train` peak RSS MiB", "f*", "f* from"], t1)

    # table 2: time to 1% per setting
    t2 = []
    for r in rows:
        d = next(d for d in data_rows if d["m"] == r["m"])
        gaps = " / ".join(f"{100 * (f / d['f_star'] - 1):.2f}" for f in r["fixed"])
        if r["T"] is None:
            t2.append([f"{r['m']:,}", r["setting"], f"not within {T_GRID[-1]:,}", "-", "-", "-", gaps,
                       "-", "-", "-"])
            continue
        cli = r["cli"]
        t2.append([f"{r['m']:,}", r["setting"], f"{r['T']:,}", f"{r['T'] / r['m']:.3g}", f"{r['api']:.3f}",
                   f"{1e6 * r['api'] / r['T']:.2f}", gaps,
                   f"{cli['read']:.2f}" if cli["read"] is not None else "-",
                   f"{cli['train']:.2f}" if cli["train"] is not None else "-", f"{cli['wall']:.2f}"])
    table2 = markdown_table(["m", "pegasos setting", "T to 1% (seeds 1-3)", "epochs", "train s (API)",
                             "us / iteration", f"gap % at T = 10^{int(np.log10(T_FIXED))} (seeds 1/2/3)",
                             "CLI read s", "CLI train s", "CLI wall s"], t2)

    notes = []
    for name, _, _ in bs.SETTINGS:
        mine = [r for r in rows if r["setting"] == name and r["T"] is not None]
        if len(mine) >= 2:
            a, b = mine[0], mine[-1]
            notes.append(f"{name}: from m = {a['m']:,} to {b['m']:,} ({b['m'] // a['m']} x the data) T to 1% "
                         f"goes {a['T']:,} -> {b['T']:,} ({b['T'] / a['T']:.2f} x) and training time "
                         f"{a['api']:.3f} -> {b['api']:.3f} s ({b['api'] / a['api']:.2f} x; per iteration "
                         f"{1e6 * a['api'] / a['T']:.2f} -> {1e6 * b['api'] / b['T']:.2f} us)")
    notes += [
        f"data: make_synthetic.py --rows m --features {FEATURES} --nnz-per-row {NNZ} --seed 0 (each file a "
        "prefix of the next); lambda = 1e-4, no bias, C = 1/(lambda m) for LIBLINEAR",
        f"T grid {T_GRID[0]:,} ... {T_GRID[-1]:,} (steps 1, 1.5, 2, 3, 5, 7 per decade): the smallest T whose f is "
        f"within {100 * TOL:g}% of f* for each of the seeds {list(SEEDS)}; epochs = T/m",
        "train s (API): pegasos.train on the matrix in memory, median of "
        f"{repeats} runs with seed 1 (includes per-call work that is O(m): the label mapping and, for "
        "permutation sampling, a permutation of the m examples per started epoch)",
        "CLI columns: the whole `pegasos train -T T` process (median of "
        f"{repeats}); read and train seconds from its own summary line, wall from outside; "
        "`pegasos train` peak RSS: the largest of its runs for that m",
        "read s: pegasos.io.read_svmlight in a fresh process, median of "
        f"{repeats}, file in the page cache; reader peak RSS includes the interpreter",
        "f* is lowered to the best f any run of the section reached when that is lower "
        + ("(it was not)" if all(d["best_seen"] >= d["f_star"] for d in data_rows) else
           "(it was, for m = " + ", ".join(f"{d['m']:,}" for d in data_rows if d["best_seen"] < d["f_star"])
           + "; gaps above use LIBLINEAR's value)"),
        f"load average at the start / end of this section: {load_start} / {load_end} (2 cores); the section "
        f"took {minutes:.1f} min",
    ]
    notes1 = [f"m = {', '.join(f'{m:,}' for m in ms)}; files and measurements as in the next section's notes"]
    return [("Scale curve: reading, memory and f*", table1, notes1),
            (f"Scale curve: iterations and time to within 1% of f* (lambda = {LAM:g})", table2, notes)]
