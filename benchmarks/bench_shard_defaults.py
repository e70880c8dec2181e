"""The defaults of training on shards with an engine, before and after the automatic batch size.

    .venv/bin/python benchmarks/bench_shard_defaults.py [--repeats 3] [--before-rounds 2000]

Before: k = 1 unless given (``pegasos train`` on shards: t0 calibrated on a sample, 10 epochs;
the estimators with ``engine``: t0 = 1/(0.1 lambda), 50 epochs).  After: no -k / ``batch_size=None``
takes k = ceil(m / 128) (``pegasos.engine_dask.automatic_batch_size``), t0 calibrated on the
sample with the same share of it (k s / m), 10 epochs.

Two cases, lambda = 1e-4:

* ``pegasos train-shards --engine dask --local-workers 2 --split 2 a9a`` (32561 examples; f* = 0.3517618027,
  no bias, from the shared data README);
* ``PegasosClassifier(engine=DaskEngine(local_workers=2), bias="feature").fit`` on the first 2000 rows of a9a
  (bias "feature", regularised: f* from LIBLINEAR's dual CD through scikit-learn's LinearSVC at
  tol 1e-10, C = 1/(lambda m), whose bias is regularised the same way).

The relative suboptimality (f - f*)/f* is that of the model of the local shard engine (bit for bit the Dask
model, checked for the runs timed on Dask); median over seeds 1-3.  Seconds: the whole ``train`` command
(cluster start included) or the estimator's ``fit`` (cluster started before), median of ``--repeats``.
The old defaults need 325610 (train) and 100000 (estimator) exact rounds, hours at load: their time is
measured on ``--before-rounds`` rounds and extrapolated (seconds a round x rounds of the run).
Writes benchmarks/RESULTS_shard_defaults.md.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, machine_info, markdown_table  # noqa: E402

HERE = Path(__file__).resolve().parent
LAM = 1e-4
F_STAR_A9A = 0.3517618027
SEEDS = (1, 2, 3)


def load1():
    return f"{os.getloadavg()[0]:.1f}"


def primal(X, y_pm, w, b, lam, bias_feature):
    z = y_pm * (X @ w + b)
    return 0.5 * lam * (float(w @ w) + (b * b if bias_feature else 0.0)) + float(np.maximum(0.0, 1.0 - z).mean())


def exe():
    return str(Path(sys.executable).parent / "pegasos")


def median_seconds(fn, repeats):
    """The median wall time of ``repeats`` calls of ``fn()``, and the list of them."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def train_cmd(data, model, extra):
    return [exe(), "train-shards", "-q", "-l", repr(LAM), "--split", "2", *extra, str(data), str(model)]


def cli_case(a9a, repeats, before_rounds, out):
    import pegasos

    X, y = pegasos.load_svmlight(str(a9a))
    y_pm = np.where(y > 0, 1.0, -1.0)
    rows = []
    for label, extra in (("before: -k 1 (the old default)", ["-k", "1"]), ("after: no -k (k = ceil(m/128))", [])):
        subs, header = [], None
        for seed in SEEDS:
            model = out / f"local-{len(extra)}-{seed}.model"
            subprocess.run(train_cmd(a9a, model, extra + ["--seed", str(seed)]), check=True)
            m = pegasos.load_model(str(model))
            subs.append((primal(X, y_pm, np.asarray(m.w), 0.0, LAM, False) - F_STAR_A9A) / F_STAR_A9A)
            header = m.info if seed == 1 else header
        T, k = int(header["iterations"]), int(header["batch_size"])
        dask = ["--engine", "dask", "--local-workers", "2"]
        if extra:          # the old default: time before_rounds rounds, extrapolate to T
            cmd = train_cmd(a9a, out / "dask-before.model", extra + dask + ["-T", str(before_rounds)])
            median, times = median_seconds(lambda: subprocess.run(cmd, check=True), repeats)
            seconds = median / before_rounds * T
            how = f"extrapolated from {before_rounds} rounds ({statistics.median(times):.1f} s, cluster start included)"
            same = "-"
        else:
            load_before = load1()
            seconds, times = median_seconds(
                lambda: subprocess.run(train_cmd(a9a, out / "dask-after.model", extra + dask), check=True), repeats)
            how = f"measured, median of {repeats} ({', '.join(f'{t:.1f}' for t in times)} s), load {load_before}"
            local = (out / "local-0-1.model").read_text().replace("engine local", "engine dask")
            same = "yes" if local == (out / "dask-after.model").read_text() else "NO"
        rows.append([label, k, T, f"{100 * statistics.median(subs):.3f}%",
                     ", ".join(f"{100 * s:.3f}%" for s in subs), f"{seconds:.1f}", how, same, load1()])
    return ("## `pegasos train` on a9a in 2 shards, Dask with 2 local worker processes\n\n"
            + markdown_table(["run", "k", "rounds T", "(f - f*)/f*, median", "seeds 1-3", "Dask seconds", "how",
                              "Dask model == local", "load after"], rows) + "\n")


def estimator_case(a9a, repeats, before_rounds):
    import scipy.sparse as sp
    from sklearn.svm import LinearSVC

    import pegasos
    from pegasos.engine_dask import DaskEngine, EngineSettings, array_shards, fit_shards
    from pegasos.options import TrainOptions
    from pegasos.sklearn import PegasosClassifier

    X, y = pegasos.load_svmlight(str(a9a))
    X, y = sp.csr_matrix(X[:2000]), np.asarray(y[:2000])
    y_pm = np.where(y > 0, 1.0, -1.0)
    m = X.shape[0]
    svc = LinearSVC(loss="hinge", C=1.0 / (LAM * m), dual=True, tol=1e-10, max_iter=1_000_000,
                    fit_intercept=True, intercept_scaling=1.0).fit(X, y)
    f_star = primal(X, y_pm, svc.coef_.ravel(), float(svc.intercept_[0]), LAM, True)
    old = dict(batch_size=1, epochs=50, step_offset=1.0 / (0.1 * LAM))    # the old engine defaults, spelled out
    rows = []
    with DaskEngine(local_workers=2) as engine:
        for label, params in (("before: k = 1, t0 = 1/(0.1 lambda), 50 epochs", old),
                              ("after: defaults (k = ceil(m/128), t0 calibrated, 10 epochs)", {})):
            subs, info = [], None
            for seed in SEEDS:
                # the estimator's own model, computed by the local shard engine on the same 2 blocks
                est = PegasosClassifier(random_state=seed, bias="feature", **params)
                common = est._common()
                common.pop("sampling")
                if not params:
                    common.pop("step_offset")
                opts = TrainOptions(loss="hinge", bias="feature", **common)
                model = fit_shards(array_shards(X, y_pm, 2), opts, EngineSettings(zero_based=True,
                                                                                  n_features=X.shape[1]),
                                   auto_batch=not params)
                subs.append((primal(X, y_pm, np.asarray(model.w), model.bias, LAM, True) - f_star) / f_star)
                info = model.info if seed == 1 else info
            T, k = int(info["iterations"]), int(info["batch_size"])
            if params:
                est = PegasosClassifier(engine=engine, bias="feature", **dict(old, epochs=None, iterations=before_rounds))
                median, times = median_seconds(lambda: est.fit(X, y), repeats)
                seconds = median / before_rounds * T
                how = f"extrapolated from {before_rounds} rounds ({statistics.median(times):.1f} s)"
                same = "-"
            else:
                load_before = load1()
                est = PegasosClassifier(engine=engine, bias="feature", random_state=1)
                seconds, times = median_seconds(lambda: est.fit(X, y), repeats)
                how = f"measured, median of {repeats} ({', '.join(f'{t:.1f}' for t in times)} s), load {load_before}"
                local = fit_shards(array_shards(X, y_pm, 2), opts.replace(seed=1),
                                   EngineSettings(zero_based=True, n_features=X.shape[1]), auto_batch=True)
                same = "yes" if np.array_equal(np.asarray(est.model_.w), np.asarray(local.w)) else "NO"
            rows.append([label, k, T, f"{100 * statistics.median(subs):.3f}%",
                         ", ".join(f"{100 * s:.3f}%" for s in subs), f"{seconds:.1f}", how, same, load1()])
    return (f"## `PegasosClassifier(engine=DaskEngine(local_workers=2), bias="feature")` on the first 2000 rows of a9a\n\n"
            f"f* = {f_star:.10f} (LinearSVC, dual CD, tol 1e-10, regularised bias).\n\n"
            + markdown_table(["run", "k", "rounds T", "(f - f*)/f*, median", "seeds 1-3", "Dask seconds", "how",
                              "Dask model == local", "load after"], rows) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--before-rounds", type=int, default=2000)
    args = p.parse_args()
    a9a = data_dir() / "a9a" / "a9a"
    info = machine_info()
    start_load = info["load"]
    with tempfile.TemporaryDirectory() as tmp:
        parts = [cli_case(a9a, args.repeats, args.before_rounds, Path(tmp)),
                 estimator_case(a9a, args.repeats, args.before_rounds)]
    end_load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    text = ("# Defaults of training on shards with an engine (`benchmarks/bench_shard_defaults.py`)\n\n"
            + __doc__.split("\n\n", 2)[2].rsplit("Writes", 1)[0].strip() + "\n\n" + "\n".join(parts)
            + f"\n(date {info['date']}, commit {info['commit']}, {info['cpu']}, {info['cores']} cores, Python "
              f"{info['python']}; load average at start {start_load}, at the end {end_load})\n")
    (HERE / "RESULTS_shard_defaults.md").write_text(text)
    print(text)


if __name__ == "__main__":
    if sys.platform != "win32":
        import multiprocessing

        multiprocessing.freeze_support()
    main()
