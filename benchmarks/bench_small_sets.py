"""Training time to 1% of f* on the shared binary sets, pegasos against LIBLINEAR and scikit-learn.

The issue's question for the sets of the defaults table (a9a at lambda = 1e-4 and 3.07e-5, w8a,
ijcnn1, reuters, and the nearly separable mushrooms, agaricus and heart_scale): how long each tool
takes to train a model within 1% of the certified optimum f* (shared data README), with its
problem already in memory (train-only; whole-process times are bench_whole_process.py's).

Every tool gets the same treatment: the cheapest setting of a grid that reaches f <= 1.01 f* for
each of the seeds 1, 2, 3 (bench_synthetic.search), then all settings are timed in turns, the median
of --repeats rounds, with the load average beside them.

* pegasos, Python API (pegasos.fit on the reader's arrays):
  - ``default``: no option but lambda (the dual passes from w = 0, certified within tol 0.2%);
  - ``--tol 0.01``: the same, certified within 1%;
  - ``-T 0 --finish-passes N``: the smallest N of dual passes from w = 0 (no check of the primal).
* LIBLINEAR (liblinear-official) -s 3 -B -1, C = 1/(lambda m): the loosest -e of the grid; its
  rand() seeded through ctypes; its problem built before the timing.
* scikit-learn LinearSVC(loss="hinge", fit_intercept=False, dual=True, C): the loosest tol.

``--target 0.002`` asks the same for 0.2% of f* (what the default certifies): the time each tool takes to
the accuracy pegasos' default gives (written to RESULTS_small_sets_0.002.md).

Usage: python benchmarks/bench_small_sets.py [--repeats 11] [--sets reuters,mushrooms] [--target 0.01] [--out FILE]
"""

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_synthetic as bs                                          # noqa: E402
from common import (data_dir, import_pegasos, machine_info, markdown_table, objective,  # noqa: E402
                    to_pm1)

TOL = 0.01
SEEDS = (1, 2, 3)
PASS_GRID = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192,
             256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
EPS_GRID = [10.0, 3.0, 1.0, 0.5, 0.3, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.003, 0.002, 0.001, 5e-4, 2e-4,
            1e-4]
SVC_TOL_GRID = [1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5]

#: (name, file under the shared data, lambda, certified f*) from the shared data README
SETS = [
    ("a9a", "a9a/a9a", 1e-4, 0.3517618027),
    ("a9a-3.07e-5", "a9a/a9a", 3.071158748195694e-05, 0.3511503859),
    ("w8a", "w8a/w8a", 1e-4, 0.1443258917),
    ("ijcnn1", "ijcnn1/ijcnn1.trn.bz2", 1e-4, 0.1758112740),
    ("reuters", "reuters/reuters.trn.bz2", 1e-4, 0.0422014018),
    ("mushrooms", "mushrooms/mushrooms.txt", 1e-4, 0.0007573911),
    ("agaricus", "agaricus/agaricus.txt.train", 1e-4, 0.0006624677),
    ("heart_scale", "heart_scale/heart_scale", 1e-4, 0.3516439591),
]


def svc_fit(X, y, lam, tol, seed):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    clf = LinearSVC(loss="hinge", fit_intercept=False, dual=True, C=1.0 / (lam * X.shape[0]), tol=tol,
                    max_iter=100_000, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    w = clf.coef_.ravel()
    return w if clf.classes_[1] == 1 else -w


def one_set(pegasos, name, path, lam, f_star, repeats, log, tol=TOL):
    d = pegasos.read_svmlight(str(path))
    X = d.X.tocsr()
    y = to_pm1(d.y)
    target = (1.0 + tol) * f_star
    score = lambda w: objective(w, X, y, lam)                        # noqa: E731
    rows, timers = [], []

    def fit(**kw):
        return pegasos.fit(d, lam=lam, **kw)

    def add(tool, setting, fs, fn):
        row = dict(data=name, tool=tool, setting=setting, worst=max(fs) / f_star - 1.0 if fs else None)
        rows.append(row)
        if fn is not None:
            timers.append((row, fn))
        return row

    log(f"{name}: m = {X.shape[0]}, lambda = {lam:g}")
    for label, kw in (("default (certified within 0.2%)", {}), ("--tol 0.01 (certified within 1%)",
                                                                  {"tol": 0.01})):
        models = [fit(seed=s, **kw) for s in SEEDS]
        row = add("pegasos", label, [score(m.w) for m in models], lambda kw=kw: bs.timed(lambda: fit(**kw)))
        row["detail"] = (f"{models[0].info.get('finish_passes', '-')} passes, certified "
                         f"{float(models[0].info.get('certified_gap', 'nan')):.2%}")
    found = bs.search(PASS_GRID, lambda n, s: score(fit(iterations=0, finish_passes=n, seed=s).w), target, SEEDS)
    if found["value"] is not None:
        n = found["value"]
        add("pegasos", f"-T 0 --finish-passes {n}", list(found["fs"].values()),
            lambda n=n: bs.timed(lambda: fit(iterations=0, finish_passes=n)))
    else:
        add("pegasos", "-T 0 --finish-passes (none of the grid)", [], None)
    ll = bs.Liblinear(X, y, lam)
    found = bs.search(EPS_GRID, lambda e, s: score(bs.liblinear_weights(ll.fit(e, s))), target, SEEDS)
    if found["value"] is not None:
        e = found["value"]
        add("LIBLINEAR", f"-s 3 -e {e:g}", list(found["fs"].values()), lambda e=e: bs.timed(lambda: ll.fit(e)))
    else:
        add("LIBLINEAR", "-s 3 (no -e of the grid)", [], None)
    found = bs.search(SVC_TOL_GRID, lambda t, s: score(svc_fit(X, y, lam, t, s)), target, SEEDS)
    if found["value"] is not None:
        t = found["value"]
        add("scikit-learn", f"LinearSVC(loss='hinge', tol={t:g})", list(found["fs"].values()),
            lambda t=t: bs.timed(lambda: svc_fit(X, y, lam, t, 1)))
    else:
        add("scikit-learn", "LinearSVC (no tol of the grid)", [], None)
    load_before = os.getloadavg()
    bs.interleaved(timers, repeats)
    peers = [r["seconds"] for r in rows if r["tool"] != "pegasos" and "seconds" in r]
    best_peer = min(peers) if peers else None
    for r in rows:
        r["ratio"] = r["seconds"] / best_peer if best_peer and "seconds" in r else None
        r["load"] = f"{load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}"
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--sets", default=",".join(s[0] for s in SETS))
    ap.add_argument("--target", type=float, default=TOL, help="relative suboptimality to reach (default 0.01)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = str(HERE / ("RESULTS_small_sets.md" if args.target == TOL else
                               f"RESULTS_small_sets_{args.target:g}.md"))
    pegasos, error = import_pegasos()
    if pegasos is None:
        sys.exit(f"bench_small_sets: cannot import pegasos ({error})")
    wanted = args.sets.split(",")
    log = lambda msg: print(msg, file=sys.stderr, flush=True)       # noqa: E731
    info = machine_info()
    started = time.perf_counter()
    rows = []
    for name, rel, lam, f_star in SETS:
        if name in wanted:
            rows += one_set(pegasos, name, data_dir() / rel, lam, f_star, args.repeats, log, args.target)
    table = markdown_table(
        ["data", "tool", f"setting (cheapest reaching {args.target:.2%} for seeds 1-3)", "rel. subopt (worst seed)",
         "train ms", "/ best peer", "load (1 min)"],
        [[r["data"], r["tool"], r["setting"] + (f"; {r['detail']}" if "detail" in r else ""),
          "-" if r["worst"] is None else f"{r['worst']:.3%}",
          "-" if "seconds" not in r else f"{1e3 * r['seconds']:.1f}",
          "-" if r["ratio"] is None else f"{r['ratio']:.2f}", r["load"]] for r in rows])
    text = (f"# Train-only time to {args.target:.2%} of f*: pegasos, LIBLINEAR, scikit-learn\n\n"
            f"`python benchmarks/bench_small_sets.py --repeats {args.repeats}"
            + ("" if args.target == TOL else f" --target {args.target:g}") + "`, "
            f"{info['date']}, commit "
            f"{info['commit']}, {info['cpu']} ({info['cores']} cores), Python {info['python']}, "
            + ", ".join(f"{k} {v}" for k, v in info["versions"].items()) + "; "
            f"{time.perf_counter() - started:.0f} s in all.\n\n"
            "Medians of the timed rounds (every setting once a round, in turns); problems built before the "
            "timing. rel. subopt = f/f* - 1 of the primal objective (no bias), worst of seeds 1-3.\n\n"
            + table + "\n")
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
