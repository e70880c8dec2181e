"""The certified duality gap (``pegasos.duality_gap``): how tight it is and what it costs.

For each data set of the shared data README's table of certified optima (one
lambda each, plus a9a with the bias as a constant feature), a quick model is
trained (``EPOCHS`` epochs, permutation sampling, ``--average-from 0.5``),
then the dual bound is computed with 0 (the start from the model's margins),
1, 5 and 20 passes of dual coordinate ascent.  Printed per data set: the
model's primal P, the certified optimum f* from the README, the dual bound
after each number of passes, the relative gap (P - D)/P after 20 passes next
to the true relative excess (P - f*)/P, and the seconds of the 20-pass call
(primal included, data in memory).  One run each; the machine load
(/proc/loadavg) is printed before and after.

    python benchmarks/bench_gap.py            # about 15 s
    python benchmarks/bench_gap.py 20         # models of 20 epochs instead of 2
"""

import os
import sys
import time

import pegasos

from common import data_dir, markdown_table

EPOCHS = 2
PASSES = (0, 1, 5, 20)
ROWS = [  # (file, lambda, bias, f* from the data README)
    ("a9a/a9a", 1e-4, "none", 0.3517618027),
    ("a9a/a9a", 1e-4, "feature", 0.3517514502),
    ("a8a/a8a", 1e-4, "none", 0.3558189170),
    ("w8a/w8a", 1e-4, "none", 0.1443258917),
    ("ijcnn1/ijcnn1.trn.bz2", 1e-4, "none", 0.1758112740),
    ("mushrooms/mushrooms.txt", 1e-4, "none", 0.0007573911),
    ("agaricus/agaricus.txt.train", 1e-4, "none", 0.0006624677),
    ("heart_scale/heart_scale", 1e-2, "none", 0.3657335768),
    ("reuters/reuters.trn.bz2", 1e-5, "none", 0.0098729906),
]


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return f.read().strip()
    except OSError:
        return "n/a"


def main(epochs=EPOCHS):
    root = data_dir()
    print(f"load before: {loadavg()}  ({os.cpu_count()} cpus)")
    print(f"models: {epochs} epochs, sampling permutation, average_from 0.5, seed 1\n")
    rows = []
    for name, lam, bias, fstar in ROWS:
        X, y = pegasos.load_svmlight(str(root / name))
        model = pegasos.train(X, y, lam=lam, epochs=epochs, sampling="permutation", average_from=0.5, bias=bias)
        duals, last = [], None
        for p in PASSES:
            start = time.perf_counter()
            last = pegasos.duality_gap(model, X, y, passes=p)
            seconds = time.perf_counter() - start
            duals.append(last["dual"])
        P = last["primal"]
        rows.append([f"{name.split('/')[0]}{' -B 1' if bias == 'feature' else ''}", f"{lam:g}", f"{P:.6f}",
                     f"{fstar:.6f}"] + [f"{d:.6f}" for d in duals] +
                    [f"{last['rel_gap']:.2e}", f"{(P - fstar) / P:.2e}", f"{seconds:.3f}"])
        print(" | ".join(rows[-1]), file=sys.stderr)
    headers = ["data", "lambda", "primal P", "f*", "dual start"] + [f"dual {p} passes" for p in PASSES[1:]] + \
              ["rel gap (20)", "(P - f*)/P", "s (20 passes)"]
    print(markdown_table(headers, rows))
    print(f"\nload after: {loadavg()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else EPOCHS)
