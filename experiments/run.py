#!/usr/bin/env python3
"""The experiments of the Pegasos paper's Sec. 7, redone with this package.

Shalev-Shwartz, Singer, Srebro, Cotter, "Pegasos: Primal Estimated
sub-GrAdient SOlver for SVM", Math. Programming B 127(1), 2011: Table 1
(Sec. 7.1), Fig. 4 and 5 with Table 2 (Sec. 7.2), Fig. 6 (lambda, Sec. 7.3),
Fig. 7 (mini-batches, Sec. 7.4), Fig. 8 (sampling, Sec. 7.5), Fig. 9 (other
step rules, Sec. 7.6), and the output averaging and step offset that the
paper does not show.  The settings and the paper's numbers are those of
docs/pegasos-paper-notes.md Sec. 4 (shared docs).

Usage::

    python experiments/run.py [--quick] [--out DIR] [--only NAME ...] [--publish]

Every experiment writes its raw results as JSON lines (``DIR/NAME.jsonl``)
and its figure as PNG and SVG (``DIR/NAME.png``, ``.svg``); then
``DIR/REPORT.md`` is generated from the results (``experiments/report.py``).
``--publish`` copies the PNGs to experiments/figures/ and the report to
experiments/REPORT.md.  Data come from PEGASOS_DATA (default ../shared/data);
an experiment whose data are absent is skipped with one line on the console and
in the report that names the missing file and PEGASOS_DATA.
``--quick`` runs every experiment at a size that takes a few minutes on two
cores (subsampled kernel sets, fewer epochs, seeds and lambdas).
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import report  # noqa: E402  (experiments/report.py, beside this file)

sys.path.insert(0, str(REPO / "benchmarks"))
from common import machine_info  # noqa: E402  (benchmarks/common.py: CPU, date, commit, versions)

#: f* of the shared data README (certified by a duality gap below 1e-8): (file, lambda) -> f*
README_OPTIMA = {
    ("a9a/a9a", 1e-4): 0.3517618027, ("a9a/a9a", 1e-5): 0.3509246501, ("a9a/a9a", 1e-3): 0.3565243311,
    ("w8a/w8a", 1e-4): 0.1443258917, ("w8a/w8a", 1e-3): 0.1766516579,
    ("ijcnn1/ijcnn1.trn.bz2", 1e-4): 0.1758112740, ("ijcnn1/ijcnn1.trn.bz2", 1e-3): 0.1935071455,
    ("reuters/reuters.trn.bz2", 1e-4): 0.0422014018,
}

#: what each mode runs; on 2 cores the full run takes 3.5 min idle (19 min at load 10), the quick one 45 s
#: idle (5.5 min at load 10); the kernel sets are
#: subsampled to 4000 examples and T to 30000 (the paper's Adult has 32562, Reuters 7770)
SIZES = {
    "quick": dict(seeds=(1, 2, 3), linear_epochs=6, synthetic_rows=(20000, 10000), kernel_m=1200,
                  kernel_T=(100, 300, 1000, 3000), kernel_test=1500, lambdas=(1e-6, 1e-5, 1e-4, 1e-3),
                  lambda_T=(1000, 4000, 16000), gap_passes=60, batch_kT=(4096, 16384, 65536),
                  batch_k=(1, 4, 16, 64, 256, 1024, 4096), batch_right_max=2**18, sampling_epochs=20,
                  norma_T=(100, 1000, 10000, 100000), constant_T=100000, beyond_epochs=10,
                  peer_eps=(1.0, 0.1, 0.01, 0.001), sgd_epochs=(1, 2, 4, 8), whole_repeats=1),
    "full": dict(seeds=(1, 2, 3), linear_epochs=12, synthetic_rows=(72309, 20000), kernel_m=4000,
                 kernel_T=(300, 1000, 3000, 10000, 30000), kernel_test=5000,
                 lambdas=(1e-7, 3e-7, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3), lambda_T=(1000, 4000, 16000),
                 gap_passes=300, batch_kT=(4096, 16384, 65536), batch_k=(1, 4, 16, 64, 256, 1024, 4096),
                 batch_right_max=2**20, sampling_epochs=60, norma_T=(100, 316, 1000, 3162, 10000, 31623, 100000,
                                                                    316228, 1000000),
                 constant_T=1000000, beyond_epochs=20, peer_eps=(1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001),
                 sgd_epochs=(1, 2, 4, 8, 16, 32), whole_repeats=3),
}
KERNEL_SECONDS = {"quick": 30.0, "full": 300.0}   # a kernel set stops growing T past this much training

# ---------------------------------------------------------------------------- data


class Data:
    """A binary problem: X (CSR float64), y in {-1, +1}, an optional test set, lambda, its name."""

    def __init__(self, name, X, y, Xt, yt, lam, source, note="", path=None):
        self.name, self.X, self.y, self.Xt, self.yt, self.lam = name, X, y, Xt, yt, lam
        self.source, self.note, self.path = source, note, path
        self.m = X.shape[0]

    def test(self):
        """(X, y) the test error is measured on: the test set, or the training set when there is none."""
        return (self.Xt, self.yt) if self.Xt is not None else (self.X, self.y)


def data_root():
    return Path(os.environ.get("PEGASOS_DATA", REPO.parent / "shared" / "data")).resolve()


def _read(path, n_features=None):
    import pegasos

    d = pegasos.read_svmlight(str(path), n_features=n_features)
    X = sp.csr_matrix(d.X, dtype=np.float64)
    X.sort_indices()
    return X, np.asarray(d.y, dtype=np.float64)


def _pm(y, positive=None):
    if positive is None:
        positive = np.max(y)
    return np.where(y == positive, 1.0, -1.0)


def absent(name, relative, hint=""):
    """The one-line reason an experiment or a data set is skipped: which file is missing under which
    PEGASOS_DATA."""
    return f"{name}: {relative}{hint} is absent under PEGASOS_DATA={data_root()}"


def _pair(name, train, test, lam, positive=None, note=""):
    root = data_root()
    if not (root / train).exists():
        return None, absent(name, train)
    X, y = _read(root / train)
    Xt = yt = None
    if test is not None and (root / test).exists():
        Xt, yt = _read(root / test, n_features=X.shape[1])
        if Xt.shape[1] > X.shape[1]:
            Xt = Xt[:, :X.shape[1]]
        yt = _pm(yt, positive if positive is not None else np.max(y))
    return Data(name, X, _pm(y, positive), Xt, yt, lam, train, note), None


def synthetic(out, rows, test_rows, seed=1):
    """A real-sim-like sparse set from data_scripts/make_synthetic.py (written once under out/data)."""
    folder = out / "data"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"synthetic-{rows}-{test_rows}-{seed}.svm"
    if not path.exists():
        subprocess.run([sys.executable, str(REPO / "data_scripts" / "make_synthetic.py"), "-q", "--rows",
                        str(rows + test_rows), "--features", "20958", "--nnz-per-row", "50", "--seed", str(seed),
                        str(path) + ".tmp"], check=True)
        os.replace(str(path) + ".tmp", path)
    X, y = _read(path)
    X = X.tocsr()
    return Data("synthetic", X[:rows], _pm(y[:rows], 1.0), X[rows:], _pm(y[rows:], 1.0), 1e-4, path.name,
                note=f"{rows} + {test_rows} examples, 20958 features (real-sim's), 50 values a row, 5% label noise",
                path=path)


def load(name, out, size):
    """The named problem (Data) and None, or None and the reason it is skipped."""
    if name == "a9a":
        return _pair("a9a", "a9a/a9a", "a9a/a9a.t", 1e-4)
    if name == "w8a":
        return _pair("w8a", "w8a/w8a", None, 1e-4, note="no test file: the error shown is the training error")
    if name == "ijcnn1":
        return _pair("ijcnn1", "ijcnn1/ijcnn1.trn.bz2", "ijcnn1/ijcnn1.tst.bz2", 1e-4)
    if name == "reuters":
        return _pair("reuters", "reuters/reuters.trn.bz2", "reuters/reuters.tst.bz2", 1e-4)
    if name == "sector":
        d, why = _pair("sector", "sector/sector.scale.bz2", "sector/sector.t.scale.bz2", 1e-4, positive=1.0,
                       note="class 1 against the other 104")
        return d, why
    if name == "synthetic":
        rows, test_rows = SIZES[size]["synthetic_rows"]
        return synthetic(out, rows, test_rows), None
    if name == "astro-ph":
        return _pair("astro-ph", "astro-ph/astro-ph.train", "astro-ph/astro-ph.test", 5e-5)
    if name == "ccat":
        return _pair("ccat", "ccat/ccat.train", "ccat/ccat.test", 1e-4)
    if name == "cov1":
        return cov1()
    raise ValueError(name)


def cov1():
    """covtype class 1 against the rest (the paper's cov1), split 522911 / 58101 by a fixed permutation."""
    root = data_root()
    path = root / "covtype" / "covtype.bz2"
    if not path.exists():
        return None, absent("cov1", "covtype/covtype.bz2", " (LIBSVM multiclass covtype, see data_scripts/get_data.py)")
    X, y = _read(path)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    tr, te = perm[:522911], perm[522911:]
    yy = _pm(y, 1.0)
    return Data("cov1", X[tr], yy[tr], X[te], yy[te], 1e-6, "covtype/covtype.bz2",
                note="class 1 against the rest, 522911 / 58101 split (seed 0)"), None


# ----------------------------------------------------------------- measurements


def objective(X, y, lam, w):
    """Paper Eq. (1): lambda/2 ||w||^2 + mean hinge."""
    return 0.5 * lam * float(w @ w) + float(np.maximum(0.0, 1.0 - y * (X @ w)).mean())


def error(X, y, w, b=0.0):
    return float(np.mean(np.where(X @ w + b > 0, 1.0, -1.0) != y))


def hinge(X, y, w):
    return float(np.maximum(0.0, 1.0 - y * (X @ w)).mean())


def optimum(d, out, passes):
    """f* of d: the README's certified value, or a certified lower bound (duality gap of
    pegasos.duality_gap after a long run), cached in out/optima.json.  Returns a dict
    (f_star, primal, rel_gap, how, w or None)."""
    cache = out / "optima.json"
    table = json.loads(cache.read_text()) if cache.exists() else {}
    key = f"{d.source}|{d.lam!r}|{d.m}"
    known = README_OPTIMA.get((d.source, d.lam))
    if key in table and "w" in table[key]:
        entry = table[key]
        entry["w"] = np.asarray(entry["w"])
        return entry
    import pegasos
    from pegasos.certificate import duality_gap

    model = pegasos.fit((d.X, d.y), lam=d.lam, epochs=20, seed=1)
    gap = duality_gap(model, d.X, d.y, passes=passes, tol=1e-9, return_alpha=True)
    w_dual = np.asarray(gap["w_dual"])[:d.X.shape[1]]
    primal_dual = objective(d.X, d.y, d.lam, w_dual)
    w = w_dual if primal_dual < gap["primal"] else np.asarray(model.w)
    if known is not None:
        entry = dict(f_star=known, primal=known, rel_gap=None, how="certified optimum of the shared data README")
    else:
        entry = dict(f_star=float(gap["dual"]), primal=min(primal_dual, float(gap["primal"])),
                     rel_gap=float((min(primal_dual, gap["primal"]) - gap["dual"]) / min(primal_dual, gap["primal"])),
                     how=f"certified lower bound: dual coordinate ascent ({gap['passes']} passes) from a 20-epoch run")
    entry["w"] = w.tolist()
    table[key] = entry
    cache.write_text(json.dumps(table))
    entry = dict(entry)
    entry["w"] = w
    return entry


def trace_run(d, f_star, seed, epochs=None, iterations=None, points=10, **settings):
    """A pegasos.fit run with its convergence trace (pegasos.trace): rows of t, epoch, seconds,
    suboptimality, test error."""
    import pegasos
    from pegasos.trace import Trace

    trace = Trace(budget=0.0)
    Xv, yv = d.test()
    model = pegasos.fit((d.X, d.y), lam=d.lam, seed=seed, epochs=epochs, iterations=iterations,
                        trace=trace, validation=(Xv, yv), trace_points=points, **settings)
    rows = [dict(t=r["t"], epoch=r["epoch"], seconds=r["seconds"], subopt=r["objective"] - f_star,
                 objective=r["objective"], test_error=r["validation_error"]) for r in trace.rows]
    return model, rows


def timed_fit(seed, d, **settings):
    import pegasos

    start = time.perf_counter()
    model = pegasos.fit((d.X, d.y), lam=d.lam, seed=seed, **settings)
    return model, time.perf_counter() - start


# ------------------------------------------------------------------------ peers


def peer_points(d, f_star, size, log):
    """Separate runs of the peers at growing accuracy: dicts of method, setting, seconds
    (training only, the data already in the peer's format), subopt, test_error."""
    points = []
    Xv, yv = d.test()
    C = 1.0 / (d.lam * d.m)
    try:
        from liblinear.liblinearutil import parameter, problem, train
        prob = problem(d.y, d.X)
        for eps in size["peer_eps"]:
            param = parameter(f"-s 3 -c {C!r} -B -1 -e {eps!r} -q")
            start = time.perf_counter()
            model = train(prob, param)
            seconds = time.perf_counter() - start
            w, _ = model.get_decfun()
            n = d.X.shape[1]
            w = np.r_[np.asarray(w, float), np.zeros(max(0, n - len(w)))][:n] if w else np.zeros(n)
            if model.get_labels()[0] == -1:     # LIBLINEAR's first label is its positive class
                w = -w
            points.append(dict(method="LIBLINEAR (dual CD)", setting=f"-e {eps:g}", seconds=seconds,
                               subopt=objective(d.X, d.y, d.lam, w) - f_star, test_error=error(Xv, yv, w)))
    except ImportError:
        log("  liblinear-official is not installed: no LIBLINEAR points")
    try:
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import SGDClassifier
        from sklearn.svm import LinearSVC

        def point(clf, method, setting):
            """Fit clf (training seconds only), and its point: suboptimality and test error."""
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                start = time.perf_counter()
                clf.fit(d.X, d.y)
            seconds = time.perf_counter() - start
            w = clf.coef_.ravel()
            return dict(method=method, setting=setting, seconds=seconds,
                        subopt=objective(d.X, d.y, d.lam, w) - f_star, test_error=error(Xv, yv, w))

        for epochs in size["sgd_epochs"]:
            clf = SGDClassifier(loss="hinge", alpha=d.lam, fit_intercept=False, max_iter=epochs, tol=None,
                                random_state=1)
            points.append(point(clf, "scikit-learn SGDClassifier", f"{epochs} epochs"))
        for tol in (1e-1, 1e-2, 1e-3, 1e-4):
            clf = LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=False, tol=tol, max_iter=20000,
                            random_state=1)
            points.append(point(clf, "scikit-learn LinearSVC", f"tol {tol:g}"))
    except ImportError:
        log("  scikit-learn is not installed: no SGDClassifier / LinearSVC points")
    return points


# ------------------------------------------------------------------ the runner


class Runner:
    def __init__(self, out, size_name, log):
        self.out, self.size_name, self.size, self.log = out, size_name, SIZES[size_name], log
        self.cache = {}
        self.machine = machine()
        self.skipped = {}       # experiment -> the reasons it ran nothing

    def skip(self, name, reasons):
        """Record that experiment ``name`` runs nothing, and why (its raw results hold the reasons)."""
        self.skipped[name] = list(reasons)
        self.write(name, [], dict(skipped=list(reasons)))
        return []

    def data(self, name):
        if name not in self.cache:
            self.cache[name] = load(name, self.out, self.size_name)
        return self.cache[name]

    def write(self, name, records, meta):
        """Raw results: one JSON line of metadata, then one per record."""
        path = self.out / f"{name}.jsonl"
        with open(path, "w") as f:
            f.write(json.dumps(dict(kind="meta", experiment=name, mode=self.size_name, **meta,
                                    machine=self.machine)) + "\n")
            for r in records:
                f.write(json.dumps(r) + "\n")
        return path


def machine():
    """The machine facts stamped on every figure and the report (benchmarks' header, plus the load)."""
    info = machine_info()
    return dict(cpu=info["cpu"], cores=info["cores"], load=", ".join(f"{x:.2f}" for x in os.getloadavg()),
                date=info["date"], commit=info["commit"], python=info["python"])

LINEAR_SETS = ("a9a", "w8a", "ijcnn1", "sector", "synthetic", "astro-ph", "ccat", "cov1")
PAPER = dict(preset="paper")                      # Fig. 1 as run in Sec. 7: i.i.d., last iterate, 1/(lambda t)
OURS = dict()                                     # the defaults: permutation, suffix average, calibrated t0


def exp_linear(r):
    """Table 1 and Fig. 4: time to epsilon and the traces, Pegasos (paper setting, ours) and the peers."""
    size = r.size
    records, skipped = [], []
    for name in LINEAR_SETS:
        d, why = r.data(name)
        if d is None:
            skipped.append(why)
            r.log(f"  skipped: {why}")
            continue
        r.log(f"  {name}: m = {d.m}, n = {d.X.shape[1]}, lambda = {d.lam:g}")
        opt = optimum(d, r.out, size["gap_passes"])
        Xv, yv = d.test()
        err_star = error(Xv, yv, opt["w"])
        records.append(dict(kind="dataset", dataset=name, m=d.m, n=d.X.shape[1], lam=d.lam, f_star=opt["f_star"],
                            f_how=opt["how"], rel_gap=opt["rel_gap"], test_error_at_optimum=err_star,
                            test=d.Xt is not None, note=d.note))
        for label, settings in (("Pegasos (paper setting)", PAPER), ("Pegasos (our defaults)", OURS)):
            for seed in size["seeds"]:
                _, rows = trace_run(d, opt["f_star"], seed, epochs=size["linear_epochs"], **settings)
                records.append(dict(kind="trace", dataset=name, method=label, seed=seed, rows=rows))
        for p in peer_points(d, opt["f_star"], size, r.log):
            records.append(dict(kind="peer", dataset=name, **p))
        records.append(dict(kind="whole", dataset=name, **whole_process(d, size["whole_repeats"])))
    r.write("linear", records, dict(skipped=skipped, seeds=list(size["seeds"])))
    return records


def whole_process(d, repeats):
    """Seconds of `pegasos train --paper` (one epoch) as a whole process, data loading included,
    beside the training time the trace measures (median of ``repeats``)."""
    root = data_root()
    path = root / d.source if (root / d.source).exists() else None      # the synthetic file holds the test rows too
    if path is None:
        return dict(whole_seconds=None, whole_command=None)
    exe = Path(sys.executable).parent / "pegasos"
    cmd = [str(exe), "train", "--paper", "-q", "--no-objective", "-l", repr(d.lam), "--epochs", "1", str(path),
           os.devnull]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            return dict(whole_seconds=None, whole_command=" ".join(cmd[1:]), whole_error=done.stderr.strip()[-300:])
    return dict(whole_seconds=float(np.median(times)), whole_command="pegasos " + " ".join(cmd[2:-2]) + " DATA")


# ------------------------------------------------------------------- kernels


def kernel_objective(model, X, y, lam):
    """Primal objective (Eq. (17)-(18)) of a kernel model without bias: ||w||^2 = sum_s coef_s f(sv_s)."""
    sv = sp.csr_matrix((model.sv_data, model.sv_indices, model.sv_indptr), shape=(model.n_support, X.shape[1]))
    f_sv = model.decision_function(sv) - model.bias if model.n_support else np.zeros(0)
    sq = float(model.coef @ f_sv) if model.n_support else 0.0
    f = model.decision_function(X) - model.bias
    return 0.5 * lam * sq + float(np.maximum(0.0, 1.0 - y * f).mean())


KERNEL_SETS = (("Adult", "a9a/a9a", "a9a/a9a.t", 0.05, 3.07e-5), ("Reuters", "reuters/reuters.trn.bz2",
                                                                   "reuters/reuters.tst.bz2", 1.0, 1.29e-4))


def exp_kernel(r):
    """Table 2 and Fig. 5: kernel Pegasos (Gaussian kernel, the paper's gamma and lambda) against LIBSVM
    and scikit-learn's SVC, on a subsample of the training set in quick mode and for Adult in full mode."""
    import pegasos

    size = r.size
    records, skipped = [], []
    root = data_root()
    for name, train, test, gamma, lam in KERNEL_SETS:
        missing = next((f for f in (train, test) if not (root / f).exists()), None)
        if missing is not None:
            skipped.append(absent(name, missing))
            r.log(f"  skipped: {skipped[-1]}")
            continue
        X, y = _read(root / train)
        y = _pm(y)
        Xt, yt = _read(root / test, n_features=X.shape[1])
        Xt = Xt[:, :X.shape[1]]
        yt = _pm(yt)
        m_full = X.shape[0]
        rng = np.random.default_rng(0)
        if size["kernel_m"] and size["kernel_m"] < m_full:
            keep = np.sort(rng.permutation(m_full)[:size["kernel_m"]])
            X, y = X[keep], y[keep]
        if size["kernel_test"] and size["kernel_test"] < Xt.shape[0]:
            keep = np.sort(rng.permutation(Xt.shape[0])[:size["kernel_test"]])
            Xt, yt = Xt[keep], yt[keep]
        m = X.shape[0]
        r.log(f"  {name}: m = {m} of {m_full}, gamma = {gamma}, lambda = {lam}")
        records.append(dict(kind="dataset", dataset=name, m=m, m_full=m_full, test_m=Xt.shape[0], gamma=gamma,
                            lam=lam))
        spent = 0.0
        pegasos.fit((X, y), lam=lam, iterations=10, kernel="rbf", gamma=gamma, preset="paper")     # warm-up
        for T in size["kernel_T"]:
            if spent > KERNEL_SECONDS[r.size_name]:
                records.append(dict(kind="cut", dataset=name, T=T, reason=f"training time so far {spent:.0f} s"))
                break
            for seed in size["seeds"][:3]:
                start = time.perf_counter()
                model = pegasos.fit((X, y), lam=lam, iterations=T, kernel="rbf", gamma=gamma, preset="paper",
                                    seed=seed)
                seconds = time.perf_counter() - start
                spent += seconds
                records.append(dict(kind="pegasos", dataset=name, T=T, seed=seed, seconds=seconds,
                                    objective=kernel_objective(model, X, y, lam),
                                    test_error=float(np.mean(np.where(model.decision_function(Xt) > 0, 1, -1) != yt)),
                                    n_sv=int(model.n_support)))
        C = 1.0 / (lam * m)
        try:
            from libsvm.svmutil import svm_predict, svm_problem, svm_parameter, svm_train
            prob = svm_problem(y, X)
            start = time.perf_counter()
            model = svm_train(prob, svm_parameter(f"-t 2 -c {C!r} -g {gamma!r} -q"))
            seconds = time.perf_counter() - start
            labels, _, _ = svm_predict(yt, Xt, model, "-q")
            records.append(dict(kind="peer", dataset=name, method="LIBSVM (libsvm-official)", seconds=seconds,
                                test_error=float(np.mean(np.asarray(labels) != yt)), n_sv=int(model.get_nr_sv())))
        except ImportError:
            r.log("  libsvm-official is not installed: no LIBSVM row")
        try:
            from sklearn.svm import SVC
            clf = SVC(kernel="rbf", C=C, gamma=gamma)
            start = time.perf_counter()
            clf.fit(X, y)
            seconds = time.perf_counter() - start
            f = clf.decision_function(X)
            dual = clf.dual_coef_
            dual = np.asarray(dual.todense() if sp.issparse(dual) else dual).ravel()
            Ksv = np.exp(-gamma * _sqdist(clf.support_vectors_, clf.support_vectors_))
            # the same w minimises 1/2 ||w||^2 + C sum hinge and f (C = 1/(lambda m)); its bias is kept
            obj = 0.5 * lam * float(dual @ Ksv @ dual) + float(np.maximum(0, 1 - y * f).mean())
            records.append(dict(kind="peer", dataset=name, method="scikit-learn SVC", seconds=seconds,
                                test_error=float(np.mean(clf.predict(Xt) != yt)), n_sv=int(clf.n_support_.sum()),
                                objective_with_bias=obj))
        except ImportError:
            r.log("  scikit-learn is not installed: no SVC row")
    if not records:
        return r.skip("kernel", skipped)
    r.write("kernel", records, dict(skipped=skipped, seeds=list(size["seeds"][:3]),
                                    budget_seconds=KERNEL_SECONDS[r.size_name]))
    return records


def _sqdist(A, B):
    A = sp.csr_matrix(A)
    B = sp.csr_matrix(B)
    a = np.asarray(A.multiply(A).sum(axis=1)).ravel()
    b = np.asarray(B.multiply(B).sum(axis=1)).ravel()
    return np.maximum(a[:, None] + b[None, :] - 2.0 * (A @ B.T).toarray(), 0.0)


# ---------------------------------------------------------- Fig. 6 to Fig. 9


def exp_lambda(r):
    """Fig. 6: suboptimality after T = 1k, 4k, 16k iterations over lambda (paper setting)."""
    size = r.size
    d, why = r.data("a9a")
    if d is None:
        return r.skip("lambda", [why])
    records = []
    for lam in size["lambdas"]:
        dl = Data(d.name, d.X, d.y, d.Xt, d.yt, lam, d.source)
        opt = optimum(dl, r.out, size["gap_passes"])
        records.append(dict(kind="optimum", lam=lam, f_star=opt["f_star"], how=opt["how"], rel_gap=opt["rel_gap"]))
        for T in size["lambda_T"]:
            for seed in size["seeds"]:
                model, _ = timed_fit(seed, dl, iterations=T, **PAPER)
                records.append(dict(kind="run", lam=lam, T=T, seed=seed,
                                    subopt=objective(d.X, d.y, lam, np.asarray(model.w)) - opt["f_star"]))
    r.write("lambda", records, dict(dataset="a9a", seeds=list(size["seeds"])))
    return records


def _stand_in(r, wanted="astro-ph"):
    """The paper's data set if present, else the real-sim-like synthetic set (sparse text-like rows)."""
    d, why = r.data(wanted)
    if d is not None:
        return d, None
    d, _ = r.data("synthetic")
    return d, f"{why}; the real-sim-like synthetic set stands in for it"


def exp_batch(r):
    """Fig. 7: mini-batches, k = 1..4096 at fixed kT (left) and k = 256, 1k, 4k against kT (right)."""
    size = r.size
    d, note = _stand_in(r)
    opt = optimum(d, r.out, size["gap_passes"])
    records = [dict(kind="dataset", dataset=d.name, lam=d.lam, f_star=opt["f_star"], how=opt["how"],
                    rel_gap=opt["rel_gap"], note=note)]
    for kT in size["batch_kT"]:
        for k in size["batch_k"]:
            for seed in size["seeds"]:
                model, _ = timed_fit(seed, d, iterations=max(1, kT // k), batch_size=k, **PAPER)
                records.append(dict(kind="left", kT=kT, k=k, seed=seed,
                                    subopt=objective(d.X, d.y, d.lam, np.asarray(model.w)) - opt["f_star"]))
    for k in (256, 1024, 4096):
        for seed in size["seeds"]:
            _, rows = trace_run(d, opt["f_star"], seed, iterations=max(1, size["batch_right_max"] // k),
                                batch_size=k, points=8, **PAPER)
            records.append(dict(kind="right", k=k, seed=seed, rows=[dict(kT=k * x["t"], subopt=x["subopt"])
                                                                     for x in rows]))
    r.write("batch", records, dict(dataset=d.name, seeds=list(size["seeds"])))
    return records


def exp_sampling(r):
    """Fig. 8: i.i.d. draws, a new permutation every epoch, one permutation reused (shuffle-once)."""
    size = r.size
    records = []
    sets = []
    d, note = _stand_in(r)
    sets.append((d, note))
    a9a, _ = r.data("a9a")
    if a9a is not None:     # lambda 1e-3: the last iterate's jumps between epochs are small beside the differences
        sets.append((Data(a9a.name, a9a.X, a9a.y, a9a.Xt, a9a.yt, 1e-3, a9a.source), None))
    for d, note in sets:
        opt = optimum(d, r.out, size["gap_passes"])
        records.append(dict(kind="dataset", dataset=d.name, lam=d.lam, f_star=opt["f_star"], how=opt["how"],
                            rel_gap=opt["rel_gap"], note=note))
        for sampling in ("uniform", "permutation", "shuffle-once"):
            for seed in size["seeds"]:
                _, rows = trace_run(d, opt["f_star"], seed, epochs=size["sampling_epochs"], points=4,
                                    sampling=sampling, **PAPER)
                records.append(dict(kind="trace", dataset=d.name, sampling=sampling, seed=seed, rows=rows))
    r.write("sampling", records, dict(seeds=list(size["seeds"])))
    return records


def exp_rules(r):
    """Fig. 9: Norma (eta_t = p/(lambda sqrt(t)), projection) against Pegasos with projection over T,
    and constant steps eta in {0.001, ..., 10}; lambda = 2e-4 as in the paper."""
    size = r.size
    d0, note = _stand_in(r)
    d = Data(d0.name, d0.X, d0.y, d0.Xt, d0.yt, 2e-4, d0.source)
    opt = optimum(d, r.out, size["gap_passes"])
    Xv, yv = d.test()
    records = [dict(kind="dataset", dataset=d.name, lam=d.lam, f_star=opt["f_star"], how=opt["how"],
                    rel_gap=opt["rel_gap"], note=note)]
    for T in size["norma_T"]:
        for rule in ("pegasos", "norma"):
            for seed in size["seeds"]:
                model, _ = timed_fit(seed, d, iterations=T, projection=True, schedule=rule, **PAPER)
                w = np.asarray(model.w)
                records.append(dict(kind="norma", rule=rule, T=T, seed=seed, eta=model.info.get("eta"),
                                    subopt=objective(d.X, d.y, d.lam, w) - opt["f_star"],
                                    test_hinge=hinge(Xv, yv, w)))
    for eta in (None, 0.001, 0.01, 0.1, 1.0, 10.0):
        for seed in size["seeds"]:
            settings = dict(schedule="constant", eta=eta) if eta is not None else {}
            _, rows = trace_run(d, opt["f_star"], seed, iterations=size["constant_T"], points=6, **settings, **PAPER)
            records.append(dict(kind="constant", eta=eta, seed=seed, rows=rows))
    r.write("rules", records, dict(dataset=d.name, seeds=list(size["seeds"])))
    return records


def exp_beyond(r):
    """Beyond the paper: the output (last iterate, mean of all iterates, suffix mean of the last half)
    and the step offset (t0 = 0, the calibrated t0) on a9a, permutation sampling."""
    import pegasos

    size = r.size
    d, why = r.data("a9a")
    if d is None:
        return r.skip("beyond", [why])
    opt = optimum(d, r.out, size["gap_passes"])
    calibrated = pegasos.fit((d.X, d.y), lam=d.lam, epochs=1).info.get("step_offset")
    t0 = float(calibrated) if calibrated else 0.0
    records = [dict(kind="dataset", dataset=d.name, lam=d.lam, f_star=opt["f_star"], calibrated_t0=t0)]
    for avg_label, avg in (("last iterate", dict(average=False)), ("mean of all iterates", dict(average=True)),
                           ("mean of the last half", dict(average_from=0.5))):
        for t0_label, offset in (("t0 = 0", 0.0), (f"t0 = {t0:.3g} (calibrated)", t0)):
            for seed in size["seeds"]:
                _, rows = trace_run(d, opt["f_star"], seed, epochs=size["beyond_epochs"], points=4,
                                    sampling="permutation", step_offset=offset, preset="paper", **avg)
                records.append(dict(kind="trace", averaging=avg_label, offset=t0_label, seed=seed, rows=rows))
    r.write("beyond", records, dict(dataset="a9a", seeds=list(size["seeds"])))
    return records


def publish_png(src, dst):
    """Copy a figure as a 256-colour PNG (a third of the size; the plots have few colours)."""
    try:
        from PIL import Image
    except ImportError:
        shutil.copy(src, dst)
        return
    with Image.open(src) as im:
        im.convert("RGB").quantize(colors=256).save(dst, optimize=True)


EXPERIMENTS = {"linear": exp_linear, "kernel": exp_kernel, "lambda": exp_lambda, "batch": exp_batch,
               "sampling": exp_sampling, "rules": exp_rules, "beyond": exp_beyond}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="every experiment at a size of a few minutes in all")
    p.add_argument("--out", type=Path, default=None, help="results directory [experiments/results or "
                                                           "experiments/results/quick]")
    p.add_argument("--only", nargs="*", choices=sorted(EXPERIMENTS), help="run only these experiments")
    p.add_argument("--report-only", action="store_true", help="regenerate the report and figures from DIR")
    p.add_argument("--publish", action="store_true", help="copy the figures to experiments/figures and the report "
                                                          "to experiments/REPORT.md")
    args = p.parse_args(argv)
    mode = "quick" if args.quick else "full"
    out = args.out or (HERE / "results" / ("quick" if args.quick else "full"))
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - started:7.1f} s] {msg}", flush=True)

    if not args.report_only:
        r = Runner(out, mode, log)
        for name in args.only or EXPERIMENTS:
            log(f"{name}: {EXPERIMENTS[name].__doc__.splitlines()[0]}")
            t = time.perf_counter()
            EXPERIMENTS[name](r)
            if name in r.skipped:
                log(f"{name}: skipped, " + "; ".join(r.skipped[name]))
            else:
                log(f"{name}: done in {time.perf_counter() - t:.1f} s")
        (out / "timing.json").write_text(json.dumps(dict(mode=mode, seconds=time.perf_counter() - started)))
    path = report.build(out)
    log(f"report: {path}")
    if args.publish:
        figures = HERE / "figures"
        figures.mkdir(exist_ok=True)
        for png in sorted(out.glob("*.png")):
            publish_png(png, figures / png.name)
        report.build(out, figure_dir="figures", target=HERE / "REPORT.md")
        log(f"published: {HERE / 'REPORT.md'} and {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
