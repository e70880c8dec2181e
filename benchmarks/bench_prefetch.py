"""Per-epoch time of the compiled training loop for each sampling, with and without prefetching.

On a set whose rows do not fit in the caches (the 1M x 50k synthetic set: 50 stored values a
row, 0.6 GB of CSR arrays), a random order (permutation, uniform) waits for memory on every
row, where a pass in file order (sequential) streams.  The loops prefetch the rows and the
weights of the examples a few entries ahead in the order (``_core.prefetch_distances``); this
script times one epoch of ``LinearState.run`` (m examples, k = 1 and a larger k, hinge loss,
averaging on, lambda = 1e-6, one thread unless --threads) for:

* each sampling (sequential, permutation, uniform) with prefetching off, at the chosen
  distances, and at the chosen distances with the helper thread that reads the rows ahead of
  the loop on the other core (``_core.prefetch_thread``; "+ helper" rows), so the ratio to the
  sequential pass is measured in the same run;
* a grid of distances (--grid), to choose them;
* optionally the loop of another build (--core PATH to a compiled ``_core`` module, e.g. the
  one before prefetching), as "before";
* with --dual, the shrinking passes of the dual finish (hinge, lambda = 1e-4, from alpha = 0:
  the first two passes, the third, and the mean of six more) with the helper thread off and on
  (``_dual.prefetch_thread``), alternated, with their dual values compared.

The orders are drawn before the clock starts; each timing is a fresh state over one epoch,
the median of --repeats runs.  The load average is printed beside.  The weights of every
setting are compared with those of the first (prefetching changes no arithmetic).

Usage: python benchmarks/bench_prefetch.py [/tmp/synth1m/train.svm] [--repeats 5] [--grid]
Generate the set with data_scripts/make_synthetic.py --rows 1000000 --features 50000
--nnz-per-row 50 --seed 0 (about 640 MB, outside the repository).
"""

import argparse
import importlib.util
import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pegasos import _core  # noqa: E402
from pegasos.io import read_svmlight  # noqa: E402

LAM = 1e-6
T0 = 1e4
GRID = [(0, 0), (8, 0), (16, 0), (24, 0), (32, 0), (64, 0), (8, 4), (16, 2), (16, 8), (32, 8), (32, 16)]


def load_core(path):
    """A compiled ``_core`` module from another build."""
    spec = importlib.util.spec_from_file_location("pegasos._core", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def order_for(sampling, m, seed=0):
    rng = np.random.default_rng(seed)
    if sampling == "sequential":
        return np.arange(m, dtype=np.int64)
    if sampling == "permutation":
        return rng.permutation(m).astype(np.int64)
    return rng.integers(0, m, size=m, dtype=np.int64)


def epoch(core, X, y, order, k, threads):
    """Seconds of one epoch (ceil(m / k) iterations) and the final v."""
    state = core.LinearState(X.shape[1], LAM, False, 1, 0, 0, 0.0, None, False, 1, T0)
    n = math.ceil(order.shape[0] / k)
    start = time.perf_counter()
    state.run(X.indptr, X.indices, X.data, y, order, n, k, None, threads, None)
    seconds = time.perf_counter() - start
    return seconds, state.weights()[0]


def measure(core, X, y, order, k, threads, repeats):
    times, w = [], None
    for _ in range(repeats):
        s, w = epoch(core, X, y, order, k, threads)
        times.append(s)
    return statistics.median(times), w


def load_text():
    return "load %.2f %.2f %.2f" % os.getloadavg()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", default="/tmp/synth1m/train.svm")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ks", default="1,64")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--samplings", default="sequential,permutation,uniform")
    ap.add_argument("--grid", action="store_true", help="time a grid of distances (permutation only)")
    ap.add_argument("--core", help="path of another build's compiled _core module, timed as 'before'")
    ap.add_argument("--dual", action="store_true", help="also time the dual passes with and without the helper")
    args = ap.parse_args()

    start = time.perf_counter()
    X, labels = _read(args.path)
    y = np.where(labels > np.min(labels), 1.0, -1.0)
    print(f"read {args.path}: {X.shape[0]} x {X.shape[1]}, {X.nnz} values, "
          f"{time.perf_counter() - start:.1f} s; {load_text()}", flush=True)
    ks = [int(s) for s in args.ks.split(",")]
    chosen = _core.prefetch_distances()
    other = load_core(args.core) if args.core else None
    print("| sampling | k | loop | prefetch (rows, weights) | s / epoch (median) | x sequential off | load |")
    print("|---|---|---|---|---|---|---|")
    for k in ks:
        reference = {}
        for sampling in args.samplings.split(","):
            order = order_for(sampling, X.shape[0])
            settings = GRID if (args.grid and sampling == "permutation") else [(0, 0), chosen]
            runs = [("before", None, other)] if other is not None else []
            runs += [("this", d, _core) for d in settings]
            if not args.grid:
                runs.append(("this + helper", chosen, _core))
            for name, dist, core in runs:
                if dist is not None:
                    _core.prefetch_distances(*dist)
                _core.prefetch_thread("on" if name.endswith("helper") else "off")
                sec, w = measure(core, X, y, order, k, args.threads, args.repeats)
                key = (sampling, k)
                if key not in reference:
                    reference[key] = w
                same = np.array_equal(w, reference[key])
                if sampling == "sequential" and dist == (0, 0):
                    reference["seq"] = sec
                ratio = sec / reference["seq"] if "seq" in reference else float("nan")
                print(f"| {sampling} | {k} | {name} | {dist if dist is not None else '-'} | {sec:.3f} | "
                      f"{ratio:.2f} | {load_text()}{'' if same else ' WEIGHTS DIFFER'} |", flush=True)
    _core.prefetch_distances(*chosen)
    _core.prefetch_thread("auto")
    if args.dual:
        dual_table(X, y, args.repeats)


def dual_table(X, y, repeats):
    """Seconds of the dual finish's shrinking passes with the helper thread off and on (medians)."""
    from pegasos import _dual, certificate

    m, n = X.shape
    upper, diag, qii = certificate.problem_terms(X.indptr, X.indices, X.data, n, np.ones(m), 1e-4, "hinge", 0.0)
    times, values = {"off": [], "on": []}, {}
    for _ in range(repeats):
        for mode in ("off", "on"):
            _dual.prefetch_thread(mode)
            alpha, v = np.zeros(m), np.zeros(n + 1)
            run = certificate.ShrinkingPasses(X.indptr, X.indices, X.data, y, upper, diag, qii, 0.0, alpha, v, seed=1)
            marks = [time.perf_counter()]
            for passes in (2, 1, 6):
                run.run(passes)
                marks.append(time.perf_counter())
            times[mode].append([marks[1] - marks[0], marks[2] - marks[1], (marks[3] - marks[2]) / 6])
            values.setdefault(mode, run.value)
    _dual.prefetch_thread("auto")
    print("\n| dual passes (lambda 1e-4, from alpha = 0) | first 2 passes | 3rd pass | passes 4-9, mean | load |")
    print("|---|---|---|---|---|")
    for mode in ("off", "on"):
        cols = [statistics.median(t[j] for t in times[mode]) for j in range(3)]
        same = "" if values[mode] == values["off"] else " DUAL VALUES DIFFER"
        print(f"| helper {mode} | {cols[0]:.3f} s | {cols[1]:.3f} s | {cols[2]:.3f} s | {load_text()}{same} |")


class _CSR:
    """The reader's CSR arrays as they are (int64 row pointers), without scipy's checks."""

    def __init__(self, chunk, n_features):
        self.indptr, self.indices, self.data = chunk.indptr, chunk.indices, chunk.data
        self.shape = (chunk.indptr.shape[0] - 1, n_features)
        self.nnz = chunk.indices.shape[0]


def _read(path):
    data = read_svmlight(path)
    return _CSR(data.chunk, data.n_features), data.y


if __name__ == "__main__":
    main()
