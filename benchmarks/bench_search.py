"""Lambda search with warm starts against cold starts, and 5-fold cross-validation against LIBLINEAR -v 5.

    python benchmarks/bench_search.py [--out benchmarks/RESULTS_search.md] [--folds 5] [--points 13]

Part 1: ``pegasos.search`` over the same log grid of lambdas (1e-7:1e-1) on a9a and w8a, with
warm starts (each lambda from the previous, larger one's weights; t0 calibrated at each lambda)
and with cold starts (``warm_start=False``: ``pegasos.fit`` at every point): wall time, the
training seconds summed over folds and points, the largest relative difference of the mean
training objectives, and the best lambda of each.
Part 2: ``pegasos.cross_validate`` at lambda against ``liblinear.liblinearutil.train(y, x,
'-v 5 -s 3 -c C -q')`` (L1-loss SVM dual, no bias: the problem of Eq. (1)) at C = 1/(lambda m),
m the examples of the whole file; LIBLINEAR draws its own folds.
"""

import argparse
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("PEGASOS_DATA", REPO.parent / "shared" / "data"))


def _loadavg():
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def search_rows(name, folds, points):
    import pegasos
    from pegasos.options import TrainOptions
    from pegasos.selection import parse_grid

    d = pegasos.read_svmlight(str(DATA / name))
    grid = parse_grid("1e-7:1e-1", points)
    out = {}
    for warm in (True, False):
        t = time.perf_counter()
        r = pegasos.search(d, TrainOptions(), grid, folds=folds, warm_start=warm)
        out[warm] = (time.perf_counter() - t, r)
    (tw, rw), (tc, rc) = out[True], out[False]
    diff = max(abs(a["objective"] - b["objective"]) / b["objective"] for a, b in zip(rw["rows"], rc["rows"]))

    def best(r):
        row = next(x for x in r["rows"] if x["best"])
        return f"{row['lam']:.3g} ({row['mean']['accuracy']:.4f})"

    return (f"| {name} | {len(grid)} × {folds} folds | {tw:.1f} | {tc:.1f} | "
            f"{sum(x['seconds'] for x in rw['rows']):.1f} | {sum(x['seconds'] for x in rc['rows']):.1f} | "
            f"{100 * diff:.2f}% | {best(rw)} | {best(rc)} |"), (rw, rc)


def liblinear_rows(lams, folds):
    import pegasos
    from liblinear.liblinearutil import svm_read_problem, train
    from pegasos.options import TrainOptions

    path = str(DATA / "a9a/a9a")
    d = pegasos.read_svmlight(path)
    y, x = svm_read_problem(path, return_scipy=True)
    m = d.n_examples
    rows = []
    for lam in lams:
        C = 1.0 / (lam * m)
        t = time.perf_counter()
        r = pegasos.cross_validate(d, TrainOptions(lam=lam), folds=folds)
        tp = time.perf_counter() - t
        t = time.perf_counter()
        acc = train(y, x, f"-v {folds} -s 3 -c {C!r} -q")
        tl = time.perf_counter() - t
        rows.append(f"| {lam:.3g} | {C:.4g} | {r['mean']['accuracy']:.4f} ± {r['sd']['accuracy']:.4f} | {tp:.2f} | "
                    f"{acc / 100:.4f} | {tl:.2f} |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS_search.md"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--points", type=int, default=13)
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    before = _loadavg()
    t = time.perf_counter()
    lines = ["# Lambda search and cross-validation", "",
             f"`benchmarks/bench_search.py --folds {args.folds} --points {args.points}`, "
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}. ",
             f"`/proc/loadavg` before: `{before}`", "",
             "## Warm against cold starts (same grid 1e-7:1e-1, same folds; default automatic settings)", "",
             "| data | points | warm s (wall) | cold s (wall) | warm train s | cold train s | "
             "max objective difference | best λ warm (accuracy) | best λ cold (accuracy) |",
             "|---|---|---|---|---|---|---|---|---|"]
    details = []
    for name in ("a9a/a9a", "w8a/w8a"):
        row, (rw, rc) = search_rows(name, args.folds, args.points)
        lines.append(row)
        print(row, flush=True)
        details.append(f"{name}: per λ (warm s / cold s, warm objective / cold objective): " + "; ".join(
            f"{a['lam']:.3g}: {a['seconds']:.2f}/{b['seconds']:.2f} s, {a['objective']:.5g}/{b['objective']:.5g}"
            for a, b in zip(rw["rows"], rc["rows"])))
    lines += [""] + [f"- {d}" for d in details]
    lines += ["", f"## {args.folds}-fold cross-validation on a9a: pegasos (defaults) against LIBLINEAR "
              f"-v {args.folds} -s 3 at C = 1/(λ m), m = 32561", "",
              "| λ | C | pegasos accuracy (mean ± sd) | pegasos s | LIBLINEAR accuracy | LIBLINEAR s |",
              "|---|---|---|---|---|---|"]
    for row in liblinear_rows((1e-3, 1e-4, 3.071158748195694e-05, 1e-5), args.folds):
        lines.append(row)
        print(row, flush=True)
    lines += ["", f"{time.perf_counter() - t:.0f} s in all; `/proc/loadavg` after: `{_loadavg()}` "
              "(2 cores shared with other work: times are indicative).", ""]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
