#!/usr/bin/env python3
"""Combine `pegasos cv --json` results (one file per lambda) into a table, and plot them.

    python sweep_table.py [--plot sweep.png] cv-1e-4.json cv-1e-3.json ...

Prints one row per file in increasing lambda: lambda, C = 1/(lambda m) and every metric's
mean ± sd over the folds; the row with the best first metric (accuracy, MSE or NDCG@10) is
marked with *.  With --plot and matplotlib importable, draws the first metric (mean ± sd)
against lambda on a log axis; without matplotlib it says so on stderr and draws nothing.
"""

import argparse
import json
import sys

LOWER_IS_BETTER = {"mse", "mae", "hinge_loss", "log_loss"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="files written by pegasos cv --json")
    ap.add_argument("--plot", metavar="PNG", help="also draw the first metric against lambda into PNG")
    args = ap.parse_args()
    runs = []
    for path in args.results:
        with open(path) as f:
            r = json.load(f)
        runs.append(r)
    runs.sort(key=lambda r: r["options"]["lam"])
    names = runs[0]["metrics"]
    first = names[0]
    sign = 1 if first in LOWER_IS_BETTER else -1
    scored = [(sign * r["mean"][first], i) for i, r in enumerate(runs) if r["mean"][first] is not None]
    best = min(scored)[1] if scored else None

    def cell(r, name):
        mean, sd = r["mean"][name], r["sd"][name]
        return "n/a" if mean is None else f"{mean:.4f} ± {sd:.4f}"

    print(f"{runs[0]['folds']}-fold cross-validation of {runs[0].get('data', '?')} ({runs[0]['task']})")
    print(f"  {'lambda':>10} {'C':>10} " + " ".join(f"{n:>18}" for n in names))
    for i, r in enumerate(runs):
        lam = r["options"]["lam"]
        mark = "*" if i == best else " "
        print(f"{mark} {lam:>10.3g} {1.0 / (lam * r['examples']):>10.3g} "
              + " ".join(f"{cell(r, n):>18}" for n in names))
    if args.plot:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("sweep_table.py: matplotlib is not importable, no plot", file=sys.stderr)
            return 0
        kept = [r for r in runs if r["mean"][first] is not None]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.errorbar([r["options"]["lam"] for r in kept], [r["mean"][first] for r in kept],
                    yerr=[r["sd"][first] for r in kept], marker="o", capsize=3)
        ax.set_xscale("log")
        ax.set_xlabel("lambda")
        ax.set_ylabel(f"{first} (mean ± sd over {runs[0]['folds']} folds)")
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
