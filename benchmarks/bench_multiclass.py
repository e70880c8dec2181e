#!/usr/bin/env python3
"""Multiclass linear SVMs on dna (3 classes) and sector (105 classes): test accuracy and training time.

Tools, each at the same lambda (LIBLINEAR's C = 1/(lambda m)), no bias:

* pegasos one-vs-rest and Crammer-Singer, Python API (data in memory, ``n_jobs=1``) and the
  CLI (whole ``pegasos train`` process: start-up, reading the file, training, writing the model;
  accuracy from ``pegasos eval --json`` on the test file), permutation sampling, mean of the
  second half of the iterates;
* LIBLINEAR (liblinear-official) ``-s 3`` (one-vs-rest, L1-loss SVM dual CD) and ``-s 4``
  (Crammer-Singer), ``-B -1``, default stopping tolerance;
* scikit-learn ``SGDClassifier(loss="hinge", alpha=lambda, fit_intercept=False)`` (one-vs-rest,
  otherwise default settings);
* pegasos one-vs-rest wall time with ``n_jobs=2`` against ``n_jobs=1`` on sector.

Times are the median of ``repeats`` runs.  Run alone (writes benchmarks/RESULTS_multiclass.md)::

    .venv/bin/python benchmarks/bench_multiclass.py [--repeats 3]

or through ``run_all.py --only multiclass``.
"""

import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from common import markdown_table, median_time, pegasos_command, run_measured

#: name -> (train file, test file, lambda, epochs)
DATASETS = {
    "dna": ("dna/dna.scale", "dna/dna.scale.t", 1e-3, 50),
    "sector": ("sector/sector.scale.bz2", "sector/sector.t.scale.bz2", 1e-4, 5),
}
TARGETS = {("dna", "ovr"): 0.94, ("dna", "crammer-singer"): 0.92}
SEED = 1


def _acc(pred, y):
    return float(np.mean(np.asarray(pred, dtype=np.float64) == np.asarray(y, dtype=np.float64)))


def pegasos_api(X, y, Xt, yt, lam, epochs, method, repeats, n_jobs=1):
    from pegasos.multiclass import train_multiclass

    def fit():
        return train_multiclass(X, y, method=method, lam=lam, epochs=epochs, sampling="permutation",
                                average_from=0.5, seed=SEED, n_jobs=n_jobs)

    cpu0 = time.process_time()
    seconds, times, model = median_time(fit, repeats)
    cpu = (time.process_time() - cpu0) / max(1, repeats)
    return dict(seconds=seconds, times=times, cpu=cpu, accuracy=_acc(model.predict(Xt), yt), model=model)


def pegasos_cli(train_path, test_path, lam, epochs, method, repeats, tmp):
    import json

    exe = pegasos_command()
    if exe is None:
        return dict(seconds=None, accuracy=None, check="pegasos console script not found")
    model = Path(tmp) / f"{Path(train_path).name}.{method}.model"
    cmd = [exe, "train", "-l", repr(lam), "--epochs", str(epochs), "--average-from", "0.5", "--sampling",
           "permutation", "--multiclass", method, "--seed", str(SEED), "-q", "--jobs", "1",
           str(train_path), str(model)]
    times = []
    for _ in range(repeats):
        run = run_measured(cmd)
        if run["returncode"] != 0:
            return dict(seconds=None, accuracy=None, check=f"train failed: {run['stderr'].strip()[-300:]}")
        times.append(run["seconds"])
    ev = run_measured([exe, "eval", str(test_path), str(model), "--json"])
    if ev["returncode"] != 0:
        return dict(seconds=statistics.median(times), accuracy=None,
                    check=f"eval failed: {ev['stderr'].strip()[-300:]}")
    return dict(seconds=statistics.median(times), times=times, accuracy=json.loads(ev["stdout"])["accuracy"])


def liblinear(X, y, Xt, yt, lam, solver, repeats):
    try:
        from liblinear.liblinearutil import parameter, predict, problem, train
    except ImportError as err:
        return dict(seconds=None, accuracy=None, check=f"liblinear not importable: {err}")
    C = 1.0 / (lam * X.shape[0])
    prob = problem(y, X)
    seconds, times, model = median_time(lambda: train(prob, parameter(f"-s {solver} -c {C!r} -B -1 -q")), repeats)
    pred, _, _ = predict(yt, Xt, model, "-q")
    return dict(seconds=seconds, times=times, accuracy=_acc(pred, yt), C=C)


def sgd(X, y, Xt, yt, lam, repeats):
    try:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import SGDClassifier
    except ImportError as err:
        return dict(seconds=None, accuracy=None, check=f"scikit-learn not importable: {err}")

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return SGDClassifier(loss="hinge", alpha=lam, fit_intercept=False, random_state=SEED).fit(X, y)

    seconds, times, clf = median_time(fit, repeats)
    return dict(seconds=seconds, times=times, accuracy=_acc(clf.predict(Xt), yt), epochs=int(clf.n_iter_))


def run(root, repeats=3, pegasos=None, pegasos_error=None, log=print):
    """Markdown table and notes of the multiclass benchmark, and the raw results."""
    import tempfile

    rows, notes, raw = [], [], {}
    with tempfile.TemporaryDirectory(prefix="pegasos-mc-") as tmp:
        for name, (train_rel, test_rel, lam, epochs) in DATASETS.items():
            train_path, test_path = Path(root) / train_rel, Path(root) / test_rel
            if not (train_path.exists() and test_path.exists()):
                notes.append(f"{name}: {train_path} or {test_path} not found")
                continue
            from pegasos.io import read_svmlight

            d = read_svmlight(str(train_path))
            t = read_svmlight(str(test_path), n_features=d.n_features)
            X, y, Xt, yt = d.X, d.y, t.X, t.y
            m, K = X.shape[0], np.unique(y).size
            C = 1.0 / (lam * m)
            log(f"  {name}: m = {m}, n = {X.shape[1]}, K = {K}, lambda = {lam:g} (C = {C:.4g})")
            setting = f"{epochs} epochs, permutation, average-from 0.5"
            res = {}
            if pegasos is not None:
                for method, label in (("ovr", "one-vs-rest"), ("crammer-singer", "Crammer-Singer")):
                    r = pegasos_api(X, y, Xt, yt, lam, epochs, method, repeats)
                    res[("api", method)] = r
                    log(f"    pegasos API {method}: {r['seconds']:.3f} s, accuracy {r['accuracy']:.4f}")
                    rows.append([name, f"pegasos API, {label}", setting, f"{r['accuracy']:.4f}",
                                 f"{r['seconds']:.3f}"])
                    r = pegasos_cli(train_path, test_path, lam, epochs, method, repeats, tmp)
                    res[("cli", method)] = r
                    log(f"    pegasos CLI {method}: {r.get('seconds')} s, accuracy {r.get('accuracy')}")
                    rows.append([name, f"pegasos CLI (whole process), {label}", setting + ", --jobs 1",
                                 "-" if r["accuracy"] is None else f"{r['accuracy']:.4f}",
                                 "-" if r["seconds"] is None else f"{r['seconds']:.3f}"])
                    if r.get("check"):
                        notes.append(f"{name} pegasos CLI {method}: {r['check']}")
                    target = TARGETS.get((name, method))
                    if target is not None and r["accuracy"] is not None:
                        notes.append(f"target {name} {label} through the CLI: accuracy >= {target}: "
                                     f"{'met' if r['accuracy'] >= target else 'NOT met'} ({r['accuracy']:.4f})")
            else:
                notes.append(f"pegasos not importable: {pegasos_error}")
            for solver, label in ((3, "-s 3 (one-vs-rest, L1-loss dual CD)"), (4, "-s 4 (Crammer-Singer)")):
                r = liblinear(X, y, Xt, yt, lam, solver, repeats)
                res[("liblinear", solver)] = r
                log(f"    LIBLINEAR -s {solver}: {r.get('seconds')} s, accuracy {r.get('accuracy')}")
                rows.append([name, f"LIBLINEAR {label}", f"-c {C:.4g} -B -1, default -e",
                             "-" if r["accuracy"] is None else f"{r['accuracy']:.4f}",
                             "-" if r["seconds"] is None else f"{r['seconds']:.3f}"])
            r = sgd(X, y, Xt, yt, lam, repeats)
            res["sgd"] = r
            log(f"    SGDClassifier: {r.get('seconds')} s, accuracy {r.get('accuracy')}")
            rows.append([name, "scikit-learn SGDClassifier (one-vs-rest)",
                         f"hinge, alpha={lam:g}, no intercept, defaults"
                         + (f" (stopped after {r['epochs']} epochs)" if r.get("epochs") else ""),
                         "-" if r["accuracy"] is None else f"{r['accuracy']:.4f}",
                         "-" if r["seconds"] is None else f"{r['seconds']:.3f}"])
            if name == "sector" and pegasos is not None:
                one = res[("api", "ovr")]
                load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
                two = pegasos_api(X, y, Xt, yt, lam, epochs, "ovr", repeats, n_jobs=2)
                res[("api", "ovr", 2)] = two
                same = bool(np.array_equal(one["model"].W, two["model"].W))
                log(f"    pegasos OvR n_jobs=2: {two['seconds']:.3f} s (n_jobs=1 {one['seconds']:.3f} s)")
                rows.append([name, "pegasos API, one-vs-rest, n_jobs=2", setting, f"{two['accuracy']:.4f}",
                             f"{two['seconds']:.3f}"])
                notes.append(f"sector one-vs-rest threads: n_jobs=1 {one['seconds']:.3f} s wall "
                             f"({one['cpu']:.3f} s CPU per run), n_jobs=2 {two['seconds']:.3f} s wall "
                             f"({two['cpu']:.3f} s CPU per run): speed-up x{one['seconds'] / two['seconds']:.2f}; "
                             f"models {'bit-identical' if same else 'DIFFERENT'}; load average before the n_jobs=2 runs: {load} on "
                             f"{os.cpu_count()} cores (a second core only helps when one is idle)")
            for r in res.values():
                r.pop("model", None)
            raw[name] = res
    notes += [
        f"median of {repeats} runs; API and peer times exclude reading the files (data in memory); "
        "CLI times are the whole `pegasos train` process timed from outside (start-up, reading the "
        "file, training, writing the model), test accuracy from `pegasos eval --json`",
        "lambda: dna 1e-3, sector 1e-4; C = 1/(lambda m) for LIBLINEAR; no bias for every tool",
        "pegasos epochs are passes per binary problem (one-vs-rest) or over the data (Crammer-Singer); "
        "pegasos API and CLI rows run one thread (n_jobs=1 / --jobs 1) except the n_jobs=2 row",
        "LIBLINEAR time excludes building its problem structure; scikit-learn SGDClassifier runs its "
        "one-vs-rest problems in one thread (n_jobs=None)",
    ]
    table = markdown_table(["data", "tool", "setting", "test accuracy", "train s (median)"], rows)
    return table, notes, raw


def main(argv=None):
    import argparse

    from common import data_dir, import_pegasos, machine_info

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--output", default=str(Path(__file__).resolve().parent / "RESULTS_multiclass.md"))
    args = p.parse_args(argv)
    root = Path(args.data_dir).resolve() if args.data_dir else data_dir()
    pegasos, error = import_pegasos()
    info = machine_info()
    started = time.perf_counter()
    table, notes, _ = run(root, args.repeats, pegasos, error, log=lambda s: print(s, flush=True))
    versions = ", ".join(f"{k} {v or 'not installed'}" for k, v in info["versions"].items())
    text = "\n".join([
        "# pegasos multiclass benchmark", "",
        f"- date: {info['date']}", f"- git commit: {info['commit']}",
        f"- CPU: {info['cpu']}, {info['cores']} cores, {info['memory_gb']} GiB RAM ({info['platform']})",
        f"- load average at start (1, 5, 15 min): {info['load']} (other jobs share the machine; "
        "every tool is slowed alike, thread speed-ups are not measurable when the cores are busy)",
        f"- load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"- Python {info['python']}; {versions}",
        f"- command: `python benchmarks/bench_multiclass.py {' '.join(argv or sys.argv[1:])}`", "",
        "## Multiclass linear SVM: dna and sector", "", table, "", *[f"- {n}" for n in notes], "",
        f"_Total benchmark time: {(time.perf_counter() - started) / 60:.1f} min._", ""])
    Path(args.output).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
