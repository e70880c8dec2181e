"""The kernel default (`pegasos train --kernel rbf DATA`, nothing else set: the dual solver) against
scikit-learn's SVC on the same problem, in the same run.

For each data set: the command as a user runs it (whole-process wall time, with its summary's
objective; and the train time it reports), `pegasos objective` of the model (paper Eq. (1), lambda = 1e-4), the header's
certified gap and support vectors, and the accuracy on the test file where there is one (else on
the training file, marked).  SVC: C = 1/(lambda m), gamma = 1/n_features (pegasos' default), default
tolerance and cache; it fits an unregularised bias that pegasos' problem (no bias) does not have.

    python benchmarks/bench_kernel_dual.py [--data DIR] [--only NAME ...] [--no-svc]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEGASOS = str(Path(sys.executable).with_name("pegasos"))
LAMBDA = 1e-4
SETS = {            # name: (training file, test file or None), under the data directory
    "heart_scale": ("heart_scale/heart_scale", None),
    "svmguide1": ("svmguide1/svmguide1.txt", None),
    "mushrooms": ("mushrooms/mushrooms.txt", None),
    "a9a": ("a9a/a9a", "a9a/a9a.t"),
}


def _run(*args):
    done = subprocess.run([PEGASOS, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pegasos {' '.join(args)} failed: {done.stderr.strip()}")
    return done


def _header(path):
    out = {}
    with open(path) as f:
        next(f)
        for line in f:
            key, _, value = line.rstrip("\n").partition(" ")
            if key == "support_vectors":
                out[key] = value
                break
            out[key] = value
    return out


def bench_pegasos(train, test, tmp):
    model = os.path.join(tmp, "m.model")
    t = time.perf_counter()
    done = _run("train", "--kernel", "rbf", "-q", "--json", train, model)
    wall = time.perf_counter() - t
    record = json.loads(done.stdout)
    h = _header(model)
    obj = json.loads(_run("objective", "--json", "-q", train, model).stdout)
    ev = json.loads(_run("eval", "--json", test or train, model).stdout)
    return {"wall_s": wall, "train_s": record.get("train_seconds", record.get("timing", {}).get("train")),
            "objective": obj["objective"], "certified_gap": float(h["certified_gap"]),
            "updates": int(h["dual_updates"]), "support_vectors": int(h["support_vectors"]),
            "accuracy": ev["accuracy"], "stopping": h["stopping"], "record": record}


def bench_svc(train, test):
    import numpy as np
    from sklearn.svm import SVC

    import pegasos

    X, y = pegasos.load_svmlight(train)
    m, n = X.shape
    clf = SVC(kernel="rbf", C=1.0 / (LAMBDA * m), gamma=1.0 / n)
    t = time.perf_counter()
    clf.fit(X, y)
    fit_s = time.perf_counter() - t
    if test:
        Xt, yt = pegasos.load_svmlight(test, n_features=n)
    else:
        Xt, yt = X, y
    return {"train_s": fit_s, "support_vectors": int(clf.n_support_.sum()),
            "accuracy": float(np.mean(clf.predict(Xt) == yt)), "C": 1.0 / (LAMBDA * m), "gamma": 1.0 / n}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("PEGASOS_DATA", str(HERE.parent.parent / "shared" / "data")))
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--no-svc", action="store_true")
    args = ap.parse_args()
    print(f"load average at start: {', '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
    rows = []
    for name, (train, test) in SETS.items():
        if args.only and name not in args.only:
            continue
        train = os.path.join(args.data, train)
        test = os.path.join(args.data, test) if test else None
        with tempfile.TemporaryDirectory() as tmp:
            p = bench_pegasos(train, test, tmp)
        s = None if args.no_svc else bench_svc(train, test)
        rows.append((name, p, s))
        print(json.dumps({"data": name, "pegasos": {k: v for k, v in p.items() if k != "record"}, "svc": s}),
              flush=True)
    print(f"load average at end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print()
    print("| data | pegasos train s | whole process s | objective | certified gap | updates | SVs | accuracy "
          "| SVC train s | SVC SVs | SVC accuracy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, p, s in rows:
        acc_of = "test" if SETS[name][1] else "train"
        svc = (f"{s['train_s']:.2f} | {s['support_vectors']} | {s['accuracy']:.4f}" if s else "- | - | -")
        print(f"| {name} | {p['train_s']:.2f} | {p['wall_s']:.2f} | {p['objective']:.6g} | "
              f"{100 * p['certified_gap']:.3f}% | {p['updates']} | {p['support_vectors']} | "
              f"{p['accuracy']:.4f} ({acc_of}) | {svc} |")


if __name__ == "__main__":
    main()
