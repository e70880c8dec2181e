"""Early stopping's patience: counted from the first epoch, or from the start of the suffix average.

    .venv/bin/python benchmarks/bench_early_stop.py

pegasos.fit with the defaults (permutation sampling, the mean of the last half of the iterates,
t0 calibrated), lambda = 1e-4, 10 epochs, seeds 1-3, validation examples at the check points
(trace_points 10 a decade and every epoch end): a9a with a9a.t, and w8a with a held-out fifth
(a fixed permutation, seed 0).  Rules: no early stopping; patience P counted from the end of the
first epoch (the rule before the change, emulated here by counting the checks before the average
too); patience 5 counted from the average's start (pegasos' rule).  Reported: the median test
accuracy of the model returned, its training objective, and the epoch of its iteration.
Writes benchmarks/RESULTS_early_stop.md.
"""

import os
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, machine_info, markdown_table  # noqa: E402

HERE = Path(__file__).resolve().parent
LAM, EPOCHS, SEEDS = 1e-4, 10, (1, 2, 3)


def datasets():
    import pegasos

    root = data_dir()
    X, y = pegasos.load_svmlight(str(root / "a9a" / "a9a"))
    Xv, yv = pegasos.load_svmlight(str(root / "a9a" / "a9a.t"), n_features=X.shape[1])
    yield "a9a (validation a9a.t)", X, y, Xv, yv
    X0, y0 = pegasos.load_svmlight(str(root / "w8a" / "w8a"))
    X0 = sp.csr_matrix(X0)
    perm = np.random.default_rng(0).permutation(X0.shape[0])
    cut = int(0.8 * X0.shape[0])
    yield "w8a (validation: a held-out fifth)", X0[perm[:cut]], y0[perm[:cut]], X0[perm[cut:]], y0[perm[cut:]]


def counted_from_first_epoch(monitor_class):
    """Monitor._early_stop with every check from the first epoch on using up the patience."""
    import pegasos.trace as tr

    def early_stop(self, t, value, w, b):
        lower = tr.LOWER_IS_BETTER[self.metric]
        if self.best is None or (value < self.best[0] if lower else value > self.best[0]):
            self.best = (value, int(t), np.array(w, dtype=np.float64), float(b))
            self.bad = 0
            return False
        self.bad += 1
        if self.bad >= self.patience:
            self.stopped = True
            return True
        return False

    return early_stop


def main():
    import pegasos
    import pegasos.trace as tr

    ours = tr.Monitor._early_stop
    rules = [("no early stopping", None, ours), ("patience 5, counted from the first epoch (before)", 5, None),
             ("patience 10, counted from the first epoch", 10, None),
             ("patience 20, counted from the first epoch", 20, None),
             ("patience 5, counted from the average's start (now)", 5, ours)]
    info = machine_info()
    rows = []
    for name, X, y, Xv, yv in datasets():
        y_pm = np.where(y > 0, 1.0, -1.0)
        for label, patience, rule in rules:
            tr.Monitor._early_stop = rule or counted_from_first_epoch(tr.Monitor)
            accs, objs, epochs = [], [], []
            for seed in SEEDS:
                kw = {} if patience is None else dict(early_stop=patience)
                m = pegasos.fit((X, y), lam=LAM, epochs=EPOCHS, seed=seed, validation=(Xv, yv), **kw)
                w = np.asarray(m.w)
                accs.append(float(np.mean(m.predict(Xv) == yv)))
                hinge = np.maximum(0, 1 - y_pm * (X[:, :len(w)] @ w + m.bias))
                objs.append(0.5 * LAM * float(w @ w) + float(hinge.mean()))
                epochs.append(int(m.info.get("best_iteration", m.info["iterations"])) / X.shape[0])
            tr.Monitor._early_stop = ours
            rows.append([name, label, f"{np.median(accs):.4f}", ", ".join(f"{a:.4f}" for a in accs),
                         f"{np.median(objs):.5f}", f"{np.median(epochs):.2f}"])
            print(rows[-1], flush=True)
    text = ("# Early stopping's patience (`benchmarks/bench_early_stop.py`)\n\n" + __doc__.split("\n\n", 2)[2]
            .rsplit("Writes", 1)[0].strip() + "\n\n"
            + markdown_table(["data", "rule", "test accuracy (median)", "seeds 1-3", "training objective",
                              "epoch of the model"], rows)
            + f"\n\n(date {info['date']}, commit {info['commit']}, {info['cpu']}, {info['cores']} cores, "
              f"load average at start {info['load']}, at the end "
              f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})\n")
    (HERE / "RESULTS_early_stop.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
