"""Threads for the mini-batch step (paper Fig. 2): training time with 1 and 2 threads per batch size k.

For each data set and each k in ``KS`` the solver loop (``pegasos.linear.solve``,
what ``train`` runs once the visiting order is drawn, including the per-feature
load count that the threaded path needs) does a fixed amount of work: T =
ceil(10 m / k) iterations of k uniformly drawn examples, i.e. T k ~ 10 epochs;
hinge loss, lambda = 1e-4, last iterate, no projection, the same pre-drawn order
for both thread counts.  Each time is the median of ``repeats`` runs, the data
already in memory.

Three variants per k, run in turn within each repeat: 1 thread (the serial
loop); 2 threads on the team at every iteration (the library's thresholds
``pegasos._core.PARALLEL_MIN_BATCH`` and ``PARALLEL_MIN_VALUES`` lowered to 1
and 0, its adaptive switch ``ADAPT`` off), which measures the threaded step
itself; and 2 threads as the library ships them (thresholds and adaptive
switch on).  The speed-up is t(1 thread) / t(2 threads); the crossover of a
data set is the smallest k of the sweep from which 2 threads are faster at
every larger k.  At k = 4096 the three are timed again while another process
keeps one core busy.  Every model is checked to be bit-identical to the
1-thread one.

The data sets: a9a (real, 32561 x 123, 14 stored values per row) and a wider
synthetic set made by data_scripts/make_synthetic.py (200000 x 50000, 50
stored values per row) in a temporary directory.
"""

import math
import statistics
import subprocess
import sys
import time

import numpy as np

from common import markdown_table

KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096)
EPOCHS = 10
LAM = 1e-4
SYNTHETIC = dict(rows=200_000, features=50_000, nnz=50, seed=0)
BUDGET_SECONDS, BUDGET_RATIO = 10.0, 20.0   # stop repeating a variant past max(10 s, 20 x the 1-thread total)


def synthetic_args(path):
    """make_synthetic.py arguments of the wide synthetic set."""
    return ["--rows", str(SYNTHETIC["rows"]), "--features", str(SYNTHETIC["features"]),
            "--nnz-per-row", str(SYNTHETIC["nnz"]), "--seed", str(SYNTHETIC["seed"]), "-q", str(path)]


def solve_once(arrays, y, n_features, k, n_threads, order, T):
    """Seconds of one solver run, and its w."""
    from pegasos.linear import solve

    indptr, indices, data = arrays
    blocks = [(indptr, indices, data, y, None, order, T)]
    start = time.perf_counter()
    w, _ = solve(blocks, n_features, lam=LAM, k=k, projection=False, avg_start=0, bias="none",
                 n_threads=n_threads, load_from=(indices, indptr.shape[0] - 1))
    return time.perf_counter() - start, w


def time_variants(arrays, y, n_features, k, order, T, repeats):
    """Times of the three variants (1 thread, 2 threads always on the team, 2
    threads as shipped), run in turn within each repeat so that whatever else
    the machine does falls on all three alike.  Returns {name: (median s, min
    s, w)}."""
    variants = (("1", 1, dict(threshold=None, adapt=None)),
                ("2", 2, dict(threshold=1, min_values=0, adapt=False)),
                ("lib", 2, dict(threshold=None, adapt=None)))
    times = {name: [] for name, _, _ in variants}
    last = {}
    for _ in range(max(1, repeats)):
        for name, n_threads, settings in variants:
            if times[name] and sum(times[name]) > max(BUDGET_SECONDS, BUDGET_RATIO * sum(times["1"])):
                continue        # a hopeless variant (tiny k on the team) is not repeated for ever
            with library_settings(**settings):
                seconds, last[name] = solve_once(arrays, y, n_features, k, n_threads, order, T)
            times[name].append(seconds)
    return {name: (statistics.median(ts), min(ts), last[name], len(ts)) for name, ts in times.items()}


class library_settings:
    """Context: the thresholds and the adaptive switch of pegasos._core set to
    ``threshold`` / ``min_values`` / ``adapt`` (None: as shipped), restored afterwards."""

    def __init__(self, threshold=None, adapt=None, min_values=None):
        from pegasos import _core

        self.core = _core
        self.new = dict(PARALLEL_MIN_BATCH=threshold, ADAPT=adapt, PARALLEL_MIN_VALUES=min_values)

    def __enter__(self):
        self.saved = {name: getattr(self.core, name) for name in self.new}
        for name, value in self.new.items():
            if value is not None:
                setattr(self.core, name, value)

    def __exit__(self, *exc):
        for name, value in self.saved.items():
            setattr(self.core, name, value)


def crossover(rows):
    """Smallest k from which the speed-up is > 1 for every larger k (None if never)."""
    best = None
    for k, ratio in reversed(rows):
        if ratio is None or ratio <= 1.0:
            break
        best = k
    return best


def busy_process():
    """Start a process that keeps one core busy (stopped by the caller)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def run(datasets, repeats, pegasos, log=print, ks=KS, busy_k=4096):
    """Sweep k on each (name, path) data set; return (markdown table, notes, raw rows).

    Per k: 1 thread (serial loop), 2 threads on the team at every iteration
    (threshold 1, no adaptive switch), and 2 threads as the library ships
    (threshold, adaptive switch).  At ``busy_k`` the three are timed again
    while another process keeps one core busy."""
    from pegasos import _core
    from pegasos.linear import _csr_arrays

    rows, raw, notes = [], [], []
    threshold, min_values = _core.PARALLEL_MIN_BATCH, _core.PARALLEL_MIN_VALUES
    for name, path in datasets:
        X, y_raw = pegasos.load_svmlight(str(path))
        values = np.unique(y_raw)
        y = np.where(y_raw == values.max(), 1.0, -1.0)
        arrays = _csr_arrays(X)
        m, n = X.shape
        log(f"  {name}: {m} x {n}, {X.nnz / m:.1f} stored values per row")
        ratios = []
        for k in ks + ((f"{busy_k} (busy)",) if busy_k in ks else ()):
            busy = isinstance(k, str)
            kk = busy_k if busy else k
            T = math.ceil(EPOCHS * m / kk)
            order = np.random.default_rng(kk).integers(0, m, size=T * kk, dtype=np.int64)
            hog = busy_process() if busy else None
            try:
                res = time_variants(arrays, y, n, kk, order, T, repeats)
            finally:
                if hog is not None:
                    hog.kill()
                    hog.wait()
            (t1, m1, w1, _), (t2, m2, w2, n2), (t3, m3, w3, _) = res["1"], res["2"], res["lib"]
            if n2 < repeats:
                notes.append(f"{name}, k = {k}: 2 threads on the team timed {n2} time(s) only (too slow to repeat)")
            same = bool(np.array_equal(w1, w2) and np.array_equal(w1, w3))
            if not busy:
                ratios.append((kk, t1 / t2))
            log(f"    k={k}: 1 thread {t1:.4f} s, 2 threads {t2:.4f} s (x{t1 / t2:.2f}), "
                f"as shipped {t3:.4f} s (x{t1 / t3:.2f}); fastest runs {m1:.4f} / {m2:.4f} / {m3:.4f} s"
                + ("" if same else "  MODELS DIFFER"))
            rows.append([name, k, T, f"{t1:.4f}", f"{t2:.4f}", f"{t1 / t2:.2f}", f"{t3:.4f}", f"{t1 / t3:.2f}",
                         f"{m1 / m2:.2f}", f"{1e9 * t1 / (T * kk):.0f}", f"{1e9 * t2 / (T * kk):.0f}"])
            raw.append(dict(data=name, k=k, T=T, t1=t1, t2=t2, t_lib=t3, min1=m1, min2=m2, min_lib=m3,
                            identical=same))
            if not same:
                notes.append(f"{name}, k = {k}: the models differ between thread counts (a bug)")
        k_cross = crossover(ratios)
        notes.append(f"{name}: crossover k = {k_cross} (2 threads faster for every k >= {k_cross} of the sweep)"
                     if k_cross is not None else f"{name}: 2 threads never win at the largest k of the sweep")
    notes += [
        f"work per run: T = ceil({EPOCHS} m / k) iterations of k uniformly drawn examples (about {EPOCHS} "
        f"epochs), hinge loss, lambda = {LAM:g}, last iterate; time of pegasos.linear.solve (the solver "
        f"loop and the per-feature load count), median of {repeats} run(s), the three variants taking "
        "turns within each repeat, data in memory, same order for every column; \"speed-up of fastest "
        "runs\": fastest 1-thread run / fastest 2-thread run (less sensitive to other work on the "
        "machine); ns/example = median time / (T k)",
        "\"2 threads\": the threaded step at every iteration (thresholds PARALLEL_MIN_BATCH and "
        "PARALLEL_MIN_VALUES lowered to 1 and 0, ADAPT off); speed-up = 1 thread / 2 threads.  \"as shipped\": "
        f"n_threads=2 with the library's thresholds (threads for k >= {threshold} and at least {min_values} "
        "stored values a batch, serial loop below) and its adaptive switch (timed chunks, the faster path runs)",
        f"\"{busy_k} (busy)\": the same k timed while another process (a Python busy loop) keeps one of "
        "the cores busy",
        "every model is checked bit-identical to the 1-thread model",
    ]
    headers = ["data", "k", "T", "1 thread s", "2 threads s", "speed-up", "as shipped s", "speed-up",
               "speed-up of fastest runs", "ns/ex 1 thr", "ns/ex 2 thr"]
    return markdown_table(headers, rows), notes, raw
