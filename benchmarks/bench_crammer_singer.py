"""Crammer-Singer multiclass SVM: pegasos' default against LIBLINEAR -s 4 and scikit-learn, train-only.

The question: what ``pegasos train --multiclass crammer-singer -l LAMBDA DATA`` gives (objective of paper
Eq. (20), no bias, relative to f*) and how long it takes, beside LIBLINEAR's -s 4 (the same problem, C =
1/(lambda m), -B -1) at its default -e 0.1 and at the loosest -e of a grid reaching the accuracy pegasos
certifies (0.2% of f*), and scikit-learn's LinearSVC(multi_class="crammer_singer") at its default tol.
pegasos is also run as before (``finish="none"``: the Pegasos run with a calibrated step and the doubling
of the epochs).  f* is the certified lower bound of pegasos' passes run to tol 1e-5 (the dual value D
<= f*; rel. subopt = f / D - 1 is then an upper bound of each tool's (f - f*) / f*).

All problems are read before the timing; each setting is timed once a round in turns, the median of
--repeats rounds, with the load average beside it.

Usage: python benchmarks/bench_crammer_singer.py [--repeats 3] [--sets dna-1e-4,sector] [--out FILE]
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_synthetic as bs                                                      # noqa: E402
from common import data_dir, import_pegasos, machine_info, markdown_table         # noqa: E402

TARGET = 0.002
EPS_GRID = [0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4]
SETS = [
    ("dna-1e-3", "dna/dna.scale", 1e-3),
    ("dna-1e-4", "dna/dna.scale", 1e-4),
    ("sector", "sector/sector.scale.bz2", 1e-4),
]


def cs_objective(X, yc, W, lam):
    """lambda/2 ||W||^2 + mean_i max_r (1[r != y_i] + <w_r - w_{y_i}, x_i>), W of shape (K, n)."""
    Z = np.asarray(X @ W.T)
    m, K = Z.shape
    own = Z[np.arange(m), yc]
    loss = np.max((1.0 - np.eye(K))[yc] + Z - own[:, None], axis=1)
    return 0.5 * lam * float(np.sum(W * W)) + float(np.mean(loss))


def liblinear_cs(X, y, lam, eps):
    from liblinear.liblinearutil import parameter, problem, train

    classes = np.unique(y)
    model = train(problem(y, X), parameter(f"-s 4 -c {1.0 / (lam * X.shape[0])!r} -B -1 -e {eps!r} -q"))
    W = np.zeros((classes.size, X.shape[1]))
    for li, label in enumerate(model.get_labels()):
        W[int(np.searchsorted(classes, label))] = model.get_decfun(li)[0]
    return W


def sklearn_cs(X, y, lam):
    from sklearn.svm import LinearSVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # ConvergenceWarning, and multi_class's deprecation
        clf = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=1.0 / (lam * X.shape[0]),
                        random_state=1).fit(X, y)
    return clf.coef_


def one_set(pegasos, name, path, lam, repeats, log):
    d = pegasos.read_svmlight(str(path))
    X = d.X.tocsr()
    y = np.asarray(d.y)
    classes = np.unique(y)
    yc = np.searchsorted(classes, y)
    log(f"{name}: m = {X.shape[0]}, K = {classes.size}, lambda = {lam:g}")

    def pegasos_W(**kw):
        model = pegasos.fit(d, lam=lam, multiclass="crammer-singer", bias="none", **kw)
        W = np.zeros((classes.size, X.shape[1]))
        W[:, :model.W.shape[1]] = model.W[:, :X.shape[1]]
        return model, W

    exact, W_exact = pegasos_W(tol=1e-5)
    g = float(exact.info["certified_gap"])
    f_exact = cs_objective(X, yc, W_exact, lam)
    lower = f_exact * (1.0 - g)                    # the passes' dual bound: D <= f*
    score = lambda W: cs_objective(X, yc, W, lam) / lower - 1.0          # noqa: E731
    rows, timers = [], []

    def add(tool, setting, W, fn, detail=""):
        row = dict(data=name, tool=tool, setting=setting, subopt=score(W), detail=detail)
        rows.append(row)
        timers.append((row, lambda: bs.timed(fn)))

    model, W = pegasos_W()
    add("pegasos", "default", W, lambda: pegasos_W(),
        f"{model.info['finish_passes']} passes, certified {float(model.info['certified_gap']):.2%}")
    model, W = pegasos_W(finish="none")
    add("pegasos", "finish none (the Pegasos run of before)", W, lambda: pegasos_W(finish="none"),
        f"{model.info.get('epochs', '?')} epochs")
    add("LIBLINEAR", "-s 4 (default -e 0.1)", liblinear_cs(X, y, lam, 0.1), lambda: liblinear_cs(X, y, lam, 0.1))
    for eps in EPS_GRID[1:]:
        W = liblinear_cs(X, y, lam, eps)
        if score(W) <= TARGET:
            add("LIBLINEAR", f"-s 4 -e {eps:g} (loosest reaching {TARGET:.1%})", W,
                lambda eps=eps: liblinear_cs(X, y, lam, eps))
            break
    add("scikit-learn", "LinearSVC(multi_class='crammer_singer')", sklearn_cs(X, y, lam),
        lambda: sklearn_cs(X, y, lam))
    load = os.getloadavg()[0]
    bs.interleaved(timers, repeats)
    for r in rows:
        r["load"] = f"{load:.2f} -> {os.getloadavg()[0]:.2f}"
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sets", default=",".join(s[0] for s in SETS))
    ap.add_argument("--out", default=str(HERE / "RESULTS_crammer_singer.md"))
    args = ap.parse_args(argv)
    pegasos, error = import_pegasos()
    if pegasos is None:
        sys.exit(f"bench_crammer_singer: cannot import pegasos ({error})")
    log = lambda msg: print(msg, file=sys.stderr, flush=True)          # noqa: E731
    info = machine_info()
    started = time.perf_counter()
    rows = []
    for name, rel, lam in SETS:
        if name in args.sets.split(","):
            rows += one_set(pegasos, name, data_dir() / rel, lam, args.repeats, log)
    table = markdown_table(
        ["data", "tool", "setting", "rel. subopt (f / D - 1)", "train s", "detail", "load (1 min)"],
        [[r["data"], r["tool"], r["setting"], f"{r['subopt']:.3%}", f"{r['seconds']:.2f}", r["detail"], r["load"]]
         for r in rows])
    text = (f"# Crammer-Singer: pegasos' default, LIBLINEAR -s 4, scikit-learn\n\n"
            f"`python benchmarks/bench_crammer_singer.py --repeats {args.repeats}`, {info['date']}, commit "
            f"{info['commit']}, {info['cpu']} ({info['cores']} cores), Python {info['python']}, "
            + ", ".join(f"{k} {v}" for k, v in info["versions"].items()) + "; "
            f"{time.perf_counter() - started:.0f} s in all.\n\n"
            "Train-only medians, problems read before the timing; D is the certified lower bound on f* of "
            "pegasos' passes run to tol 1e-5.\n\n" + table + "\n")
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
