"""The kernel dual solver of two builds, and scikit-learn's SVC, on the same cases in one run.

Written to measure shrinking in ``pegasos._kernel.KernelDual`` (commit 711b20c, reverted: see
benchmarks/RESULTS_kernel.md).  Each case trains the default kernel dual (rbf, gamma = 1/n_features,
tol 0.002, 100 MiB row cache) through the Python API on data already in memory and times the fit
alone, each run in a fresh process; the tools take turns within each repeat, so a change of load
hits every tool alike, and the table gives the median of --repeats runs with the 1-minute load
average at the start of each.  "before" loads another build of ``pegasos._kernel`` (the path of its
compiled module, --before-so) in place of this tree's; "after" is this tree's.  SVC: C = 1/(lambda m),
the same gamma, default tolerance and cache, whole ``fit`` time; it also fits an unregularised bias,
which pegasos' problem (Eq. (1)) has not.  The solver's counters (kernel values, rebuilds, ...) are
printed where the build has them.

    python benchmarks/bench_kernel_shrink.py --before-so /path/to/_kernel.cpython-311-x86_64-linux-gnu.so
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = [("a9a", None, 1e-4), ("a9a", 20000, 1e-4), ("a9a", 20000, 1e-6), ("a9a", 20000, 1e-7)]

CHILD = r"""
import importlib.util, json, sys, time
import numpy as np
so, path, rows, lam, tool = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
if so:
    spec = importlib.util.spec_from_file_location("pegasos._kernel", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["pegasos._kernel"] = mod
import pegasos
X, y = pegasos.load_svmlight(path)
if rows:
    X, y = X[:rows], y[:rows]
m, n = X.shape
out = {"m": m}
if tool == "svc":
    from sklearn.svm import SVC
    clf = SVC(kernel="rbf", C=1.0 / (lam * m), gamma=1.0 / n)
    t = time.perf_counter(); clf.fit(X, y); out["seconds"] = time.perf_counter() - t
    out["support_vectors"] = int(clf.n_support_.sum())
else:
    t = time.perf_counter()
    model, state = pegasos.train_kernel(X, y, kernel="rbf", lam=lam, preset="auto", return_state=True)
    out["seconds"] = time.perf_counter() - t
    out.update(gap=float(model.info["certified_gap"]), updates=int(model.info["dual_updates"]),
               stopping=model.info["stopping"], support_vectors=int(model.n_support),
               objective=pegasos.objective(model, X, y)["objective"], rows_computed=int(state.rows_computed))
    for key in ("kernel_values", "rebuild_values", "unshrinks", "shrink_events", "shrunk"):
        if hasattr(state, key):
            out[key] = int(getattr(state, key))
print(json.dumps(out))
"""


def one(so, path, rows, lam, tool):
    done = subprocess.run([sys.executable, "-c", CHILD, so or "", path, str(rows or 0), repr(lam), tool],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("PEGASOS_DATA", str(HERE.parent.parent / "shared" / "data")))
    ap.add_argument("--before-so", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-svc", action="store_true")
    ap.add_argument("--cases", type=int, nargs="*", default=None, help="indices into CASES (default: all)")
    args = ap.parse_args()
    tools = [("before", args.before_so), ("after", None)] + ([] if args.no_svc else [("svc", None)])
    table = []
    for c, (name, rows, lam) in enumerate(CASES):
        if args.cases is not None and c not in args.cases:
            continue
        path = os.path.join(args.data, "a9a", "a9a")
        res = {}
        for r in range(args.repeats):          # interleaved, so a change of load hits every tool alike
            for tool, so in tools:
                load = os.getloadavg()[0]
                got = one(so, path, rows, lam, "svc" if tool == "svc" else "pegasos")
                got["load1"] = load
                res.setdefault(tool, []).append(got)
                print(json.dumps({"case": [name, rows, lam], "tool": tool, "repeat": r, **got}), flush=True)
        table.append((name, rows, lam, res))
    print()
    print("| data | lambda | tool | median s (runs) | load (1 min) | gap | updates | rows computed | stopping |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rows, lam, res in table:
        for tool, runs in res.items():
            secs = [x["seconds"] for x in runs]
            last = runs[-1]
            where = name if rows is None else f"{name} first {rows}"
            times = ", ".join(f"{s:.1f}" for s in secs)
            loads = ", ".join(f"{x['load1']:.2f}" for x in runs)
            gap = "-" if tool == "svc" else f"{100 * last['gap']:.3f}%"
            stop = "-" if tool == "svc" else last["stopping"].split(" by the dual")[0]
            print(f"| {where} | {lam:g} | {tool} | {statistics.median(secs):.2f} ({times}) | {loads} | {gap} | "
                  f"{last.get('updates', '-')} | {last.get('rows_computed', '-')} | {stop} |")


if __name__ == "__main__":
    main()
