#!/usr/bin/env python3
"""Which defaults reach the optimum: today's, the README recipe, the automatic ones, and peers.

    .venv/bin/python benchmarks/bench_defaults.py                 # writes benchmarks/RESULTS_defaults.md
    .venv/bin/python benchmarks/bench_defaults.py --seeds 1 --only a9a,w8a

For every data set of the shared data with a certified optimum f* (lambda =
1e-4, a9a also at 3.07e-5; f(w) = lambda/2 ||w||^2 + mean hinge, labels
mapped to +-1, no bias) each setting's relative suboptimality (f - f*)/f*
(the worst over the seeds), test accuracy (seed 1, where a test file exists),
training seconds (seed 1, data in memory, the median of ``--repeat`` runs,
peers too: the CPU is shared) and epochs:

* ``today``: ``pegasos.train`` defaults (10 epochs, uniform sampling, last
  iterate, the paper's step eta_t = 1/(lambda t));
* ``today -T 100000``: the same with T = 100000 (the design-card command);
* ``recipe``: the README's fast setting (permutation, ``average_from`` 0.5,
  eta0 = 0.01, 1 epoch);
* ``auto``: ``pegasos.fit((X, y), lam=lam)``, the defaults (calibrated t0,
  permutation, ``average_from`` 0.5, one run lengthened to E = 1, 2, 4, ...
  epochs until the objective improves by less than ``tol`` = 0.002, the
  work cap of :func:`pegasos.autotune.double_until_converged`, handing a
  slow run over; then the dual finish of :mod:`pegasos.finish`); epochs =
  E of the model (epochs trained);
* ``auto --finish none``: the same without the dual finish (plain
  averaged Pegasos, the automatic length alone);
* ``auto -T 100000`` and ``auto 3 epochs``: ``pegasos.fit`` with the given
  T (calibrated t0, permutation, ``average_from`` 0.5), then the dual finish
  (a given length with the step left automatic is finished by default);
* LIBLINEAR (liblinear-official) ``-s 3 -c 1/(lambda m) -B -1`` with its
  default stopping tolerance: the same problem, so its f is comparable;
* scikit-learn ``LinearSVC()`` and ``SGDClassifier()`` with their defaults
  (other problems: squared hinge with C = 1 and a bias, and SGD's own
  stopping), test accuracy and time only.

dna (3 classes) and sector (105 classes) are trained one-vs-rest (one
binary problem per class, the class with the largest decision value wins)
by ``pegasos.fit`` (its lengthened one-vs-rest run), one timed run; rel.
subopt is that of the summed binary objectives, LIBLINEAR's one-vs-rest
model's included, against the best lower bound on f* of the run: the largest
of the finished models' certified lower bounds f (1 - certified_gap) and (dna)
the dual values of 5000 passes of pegasos.duality_gap from each row's model,
so an upper bound ("<=").  ``cat /proc/loadavg`` is recorded
before and after.
"""

import argparse
import ctypes
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, data_dir, fmt, markdown_table, objective, to_pm1  # noqa: E402

# name, train file, test file or None, lambda, f*
BINARY = [
    ("a9a", "a9a/a9a", "a9a/a9a.t", 1e-4, 0.3517618027),
    ("a9a", "a9a/a9a", "a9a/a9a.t", 3.071158748195694e-05, 0.3511503859),
    ("w8a", "w8a/w8a", None, 1e-4, 0.1443258917),
    ("ijcnn1", "ijcnn1/ijcnn1.trn.bz2", "ijcnn1/ijcnn1.tst.bz2", 1e-4, 0.1758112740),
    ("reuters", "reuters/reuters.trn.bz2", "reuters/reuters.tst.bz2", 1e-4, 0.0422014018),
    ("mushrooms", "mushrooms/mushrooms.txt", None, 1e-4, 0.0007573911),
    ("a8a", "a8a/a8a", None, 1e-4, 0.3558189170),
    ("agaricus", "agaricus/agaricus.txt.train", "agaricus/agaricus.txt.test", 1e-4, 0.0006624677),
    ("heart_scale", "heart_scale/heart_scale", None, 1e-4, 0.3516439591),
]
MULTICLASS = [
    # the last entry: passes of pegasos.duality_gap from each row's model, for the lower bound on f*
    ("dna", "dna/dna.scale", "dna/dna.scale.t", 1e-4, 5000),
    ("sector", "sector/sector.scale.bz2", "sector/sector.t.scale.bz2", 1e-4, 0),
]
DESIGN_T = 100_000
RECIPE_ETA0 = 0.01


def loadavg():
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def width(X, n):
    """X with exactly n columns (a test file may use fewer or more features)."""
    import scipy.sparse as sp

    X = X.tocsr()
    if X.shape[1] == n:
        return X
    if X.shape[1] > n:
        return X[:, :n]
    return sp.hstack([X, sp.csr_matrix((X.shape[0], n - X.shape[1]))], format="csr")


REPEAT = [3]


def timed(fn, repeat=None):
    """(result of the first call, median seconds of ``repeat`` calls)."""
    times, out = [], None
    for i in range(REPEAT[0] if repeat is None else repeat):
        start = time.perf_counter()
        r = fn()
        times.append(time.perf_counter() - start)
        out = r if i == 0 else out
    return out, float(np.median(times))


def liblinear_fit(X, y_pm, lam, multi_y=None):
    """LIBLINEAR -s 3 with C = 1/(lambda m), no bias, default -e; rand() seeded (it has no seed option).
    Returns a callable that trains it: the problem (LIBLINEAR's copy of the data, built from scipy in
    0.02 s on reuters, more than its training) is built before, so the time is its train() alone, like
    pegasos.fit's on arrays in memory."""
    from liblinear.liblinearutil import parameter, problem, train

    C = 1.0 / (lam * X.shape[0])
    labels = y_pm if multi_y is None else multi_y
    prob, param = problem(labels, X), parameter(f"-s 3 -c {C!r} -B -1 -q")

    def run():
        ctypes.CDLL(None).srand(1)
        return train(prob, param)
    return run


def ovr_objective(model, X, y, lam):
    """Sum over LIBLINEAR's one-vs-rest classes of lambda/2 |w_c|^2 + mean hinge(y_c <w_c, x>), y_c = +1 for
    the class, -1 for the rest: the objective pegasos' one-vs-rest models report."""
    total = 0.0
    for i, label in enumerate(model.get_labels()):
        w = np.asarray(model.get_decfun(i)[0])
        y_c = np.where(y == label, 1.0, -1.0)
        total += lam / 2 * float(w @ w) + float(np.mean(np.maximum(0.0, 1.0 - y_c * (X @ w))))
    return total


def liblinear_w(model):
    w, _ = model.get_decfun()
    w = np.asarray(w)
    return w if model.get_labels()[0] == 1 else -w


def binary_rows(case, seeds, log):
    import pegasos
    from pegasos.autotune import calibrate_step_offset, train_until_converged

    name, train_file, test_file, lam, f_star = case
    root = data_dir()
    X, y = pegasos.load_svmlight(str(root / train_file))
    X = X.tocsr()
    n = X.shape[1]
    y_pm = to_pm1(y)
    Xt = yt_pm = None
    if test_file:
        Xt, yt = pegasos.load_svmlight(str(root / test_file))
        Xt, yt_pm = width(Xt, n), np.where(yt == y.max(), 1.0, -1.0)
    m = X.shape[0]

    def acc(w):
        return None if Xt is None else float(np.mean(np.where(Xt @ w > 0, 1.0, -1.0) == yt_pm))

    def sub(w):
        return (objective(w, X, y_pm, lam) - f_star) / f_star

    settings = [
        ("today (10 epochs, uniform, last, t0 = 0)", lambda s: pegasos.train(X, y, lam=lam, seed=s)),
        ("today -T 100000", lambda s: pegasos.train(X, y, lam=lam, iterations=DESIGN_T, seed=s)),
        ("recipe (perm, avg 0.5, eta0 0.01, 1 epoch)",
         lambda s: pegasos.train(X, y, lam=lam, epochs=1, sampling="permutation", average_from=0.5,
                                 step_offset=1.0 / (lam * RECIPE_ETA0), seed=s)),
        ("auto: pegasos.fit defaults (then the dual finish)", lambda s: pegasos.fit((X, y), lam=lam, seed=s)),
        ("auto --finish none (plain Pegasos, one run lengthened)",
         lambda s: pegasos.fit((X, y), lam=lam, seed=s, finish="none")),
        ("auto -T 100000", lambda s: pegasos.fit((X, y), lam=lam, iterations=DESIGN_T, seed=s)),
        ("auto 3 epochs", lambda s: pegasos.fit((X, y), lam=lam, epochs=3, seed=s)),
    ]
    rows = []
    label = f"{name} λ={lam:.3g}"
    for title, fit in settings:
        subs, secs, first = [], None, None
        for s in seeds:
            model, dt = timed(lambda: fit(s), None if first is None else 1)
            subs.append(sub(model.w))
            if first is None:
                first, secs = model, dt
        T = int(first.info["iterations"])
        epochs = f"{T / m:.3g}"
        if "epochs_trained" in first.info:
            epochs = f"{first.info['epochs']} ({first.info['epochs_trained']})"
        extra = f"eta0 {float(first.info['eta0']):.3g}" if "eta0" in first.info else (
            f"t0 {float(first.info['step_offset']):.3g}" if "step_offset" in first.info else "")
        if "finish_passes" in first.info:
            extra += (f"{', then ' if T else 'from w = 0: '}{first.info['finish_passes']} dual passes "
                      f"(certified {float(first.info['certified_gap']):.2g})")
        rows.append([label, title, f"{100 * max(subs):.3g}%", fmt(acc(first.w), 4), f"{secs:.3f}", epochs, extra])
        log(f"  {label:22s} {title:45s} worst {100 * max(subs):8.3f}%  {secs:.3f}s  {epochs} {extra}")
    model, dt = timed(liblinear_fit(X, y_pm, lam))
    w = liblinear_w(model)
    rows.append([label, "LIBLINEAR -s 3 (default -e 0.1)", f"{100 * sub(w):.3g}%", fmt(acc(w), 4), f"{dt:.3f}", "-",
                 f"C {1 / (lam * m):.3g}"])
    log(f"  {label:22s} LIBLINEAR {100 * sub(w):8.3f}% {dt:.3f}s")
    rows.extend(sklearn_rows(label, X, y_pm, Xt, yt_pm))
    return rows


def sklearn_rows(label, X, y, Xt, yt):
    from sklearn.linear_model import SGDClassifier
    from sklearn.svm import LinearSVC

    rows = []
    for title, make in (("scikit-learn LinearSVC() defaults", LinearSVC),
                        ("scikit-learn SGDClassifier() defaults", lambda: SGDClassifier(random_state=1))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf, dt = timed(lambda: make().fit(X, y))
        a = None if Xt is None else float(clf.score(Xt, yt))
        rows.append([label, title, "other problem", fmt(a, 4), f"{dt:.3f}", "-", ""])
    return rows


def multiclass_rows(case, log):
    import pegasos
    from pegasos.certificate import duality_gap

    name, train_file, test_file, lam, gap_passes = case
    root = data_dir()
    X, y = pegasos.load_svmlight(str(root / train_file))
    X = X.tocsr()
    Xt, yt = pegasos.load_svmlight(str(root / test_file))
    Xt = width(Xt, X.shape[1])
    classes = np.unique(y)
    label = f"{name} ({classes.size} classes) λ={lam:.3g}"
    measured, bounds = [], []
    for title, fit in (("today (10 epochs, uniform, last, t0 = 0)",
                        lambda: pegasos.fit((X, y), lam=lam, preset="paper", n_threads=2)),
                       ("auto: pegasos.fit defaults (then the dual finish per class), 2 threads",
                        lambda: pegasos.fit((X, y), lam=lam, n_threads=2)),
                       ("auto --finish none (one-vs-rest runs lengthened), 2 threads",
                        lambda: pegasos.fit((X, y), lam=lam, n_threads=2, finish="none")),
                       ("auto 3 epochs (then the dual finish per class), 2 threads",
                        lambda: pegasos.fit((X, y), lam=lam, epochs=3, n_threads=2))):
        model, dt = timed(fit, 1)
        f = float(pegasos.objective(model, X, y)["objective"])
        if "certified_gap" in model.info:        # the finish's certificate: D >= f (1 - gap)
            bounds.append(f * (1.0 - float(model.info["certified_gap"])))
        if gap_passes:
            bounds.append(float(duality_gap(model, X, y, passes=gap_passes)["dual"]))
        a = float(np.mean(model.predict(Xt) == yt))
        epochs = model.info.get("epochs", f"{int(model.info['iterations']) / X.shape[0]:.3g}")
        how = model.info.get("stopping", "")
        if "finish_passes" in model.info:
            passes = [int(p) for p in model.info["finish_passes"].split(",")]
            zero = model.info.get("iterations") == "0"
            how = ("from W = 0: " if zero else how + ", then ") + (
                f"{min(passes)}-{max(passes)} dual passes per class (certified "
                f"{float(model.info['certified_gap']):.2g})")
        measured.append((title, f, a, dt, str(epochs), how))
        log(f"  {label:22s} {title:45s} f {f:.6g} acc {a:.4f} {dt:.3f}s {epochs}")
    model, dt = timed(liblinear_fit(X, None, lam, multi_y=y), 1)
    from liblinear.liblinearutil import predict
    pred, _, _ = predict(yt, Xt, model, "-q")
    a = float(np.mean(np.asarray(pred) == yt))
    f = ovr_objective(model, X, y, lam)
    measured.append(("LIBLINEAR -s 3 one-vs-rest (default -e 0.1)", f, a, dt, "-", ""))
    log(f"  {label:22s} LIBLINEAR f {f:.6g} acc {a:.4f} {dt:.3f}s")
    bound = max(bounds)         # the best lower bound on f* seen
    rows = [[label, title, f"<= {100 * (f - bound) / bound:.3g}%", fmt(a, 4),
             f"{dt:.3f}", epochs, how] for title, f, a, dt, epochs, how in measured]
    rows.extend(sklearn_rows(label, X, y, Xt, yt))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1,2,3", help="seeds for the worst-case suboptimality (default 1,2,3)")
    ap.add_argument("--only", default="", help="comma-separated data set names")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of seed 1 (the median is reported)")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS_defaults.md"))
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    REPEAT[0] = args.repeat
    only = set(filter(None, args.only.split(",")))
    before = loadavg()
    start = time.perf_counter()
    rows = []
    for case in BINARY:
        if not only or case[0] in only:
            rows.extend(binary_rows(case, seeds, print))
    for case in MULTICLASS:
        if not only or case[0] in only:
            rows.extend(multiclass_rows(case, print))
    total = time.perf_counter() - start
    table = markdown_table(["data", "setting", "rel. subopt (worst of seeds)", "test acc", "train s", "epochs",
                            "step"], rows)
    text = (f"# Defaults: suboptimality, test accuracy and time\n\n"
            f"`benchmarks/bench_defaults.py --seeds {args.seeds} --repeat {args.repeat}`; {total:.0f} s in all. "
            f"`/proc/loadavg` before: `{before}`, after: `{loadavg()}` (2 shared cores: times are "
            f"indicative).\n\n"
            "rel. subopt = (f - f*)/f* of the primal objective lambda/2 |w|^2 + mean hinge (no bias); "
            "test acc and train s (median of --repeat runs) for seed 1; epochs for auto: E of the model "
            "(epochs trained in all).\n\n" + table + "\n")
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
