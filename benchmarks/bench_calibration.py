#!/usr/bin/env python3
"""The step calibration's walk against the whole grid, on every shared data set.

    .venv/bin/python benchmarks/bench_calibration.py          # writes benchmarks/RESULTS_calibration.md
    .venv/bin/python benchmarks/bench_calibration.py --only a9a,dna --lams 1e-4 --seeds 1
    .venv/bin/python benchmarks/bench_calibration.py --files a9a/a9a.t,dna/dna.scale.t --out /tmp/held_out.md

:func:`pegasos.autotune.calibrate_step_offset` scores a grid point eta0 by the sample objective of one
epoch on its sample and walks downhill over the grid (:func:`pegasos.autotune.walk_to_minimum`) instead
of scoring every point.  For each training file of the shared data, lambda and seed, the calibration is
called exactly as the default Pegasos run calls it (``pegasos.fit(..., solver="pegasos",
finish="none")``: the call's arguments are recorded and the run stopped there; multiclass sets go
through one-vs-rest, whose calibration is that of the largest class against the rest), then

* once as it is: the grid point chosen, the points visited;
* once for each grid point alone (``grid=(eta0,)``: the same sample, settings and score, ``inf`` when
  every run diverged): the exhaustive argmin (the smaller eta0 on a tie) over the default grid.

Where the two differ, the default Pegasos run (``pegasos.fit``, automatic length, no finish) is trained
with both step offsets and its final objective (:func:`pegasos.scoring.objective`; one-vs-rest: the sum
over the classes) printed for each.
"""

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import data_dir, machine_info, markdown_table  # noqa: E402

SETS = ("a8a/a8a", "a9a/a9a", "agaricus/agaricus.txt.train", "heart_scale/heart_scale", "ijcnn1/ijcnn1.trn.bz2",
        "mushrooms/mushrooms.txt", "reuters/reuters.trn.bz2", "svmguide1/svmguide1.txt", "w8a/w8a",
        "dna/dna.scale", "sector/sector.scale.bz2")
LAMS = (1e-3, 1e-4, 1e-5, 1e-6)
SEEDS = (1, 2, 3)


class Recorded(Exception):
    """Stops pegasos.fit at its calibration, whose arguments it carries."""


def calibration_call(X, y, lam, seed):
    """The (args, kwargs) with which the default Pegasos run calls calibrate_step_offset."""
    import pegasos
    from pegasos import autotune

    real = autotune.calibrate_step_offset

    def record(*args, **kwargs):
        raise Recorded(args, kwargs)

    autotune.calibrate_step_offset = record
    try:
        pegasos.fit((X, y), lam=lam, seed=seed, solver="pegasos", finish="none")
    except Recorded as call:
        return call.args
    finally:
        autotune.calibrate_step_offset = real
    raise RuntimeError("the default Pegasos run did not calibrate its step")


def whole_grid(args, kwargs):
    """{eta0: sample objective} of every point of the default grid, each scored alone."""
    from pegasos import autotune
    from pegasos.errors import ParameterError

    out = {}
    for eta0 in autotune.DEFAULT_ETA0_GRID:
        try:
            _, _, table = autotune.calibrate_step_offset(*args, **{**kwargs, "grid": (eta0,), "details": True})
            out[eta0] = table[0][1]
        except ParameterError as exc:
            if "diverged" not in str(exc):
                raise
            out[eta0] = math.inf
    return out


def final_objective(X, y, lam, seed, step_offset=None):
    import pegasos
    from pegasos.scoring import objective

    model = pegasos.fit((X, y), lam=lam, seed=seed, solver="pegasos", finish="none", step_offset=step_offset)
    return float(objective(model, X, y)["objective"]), model.info.get("epochs")


def one_set(name, lams, seeds, log):
    import numpy as np

    import pegasos
    from pegasos import autotune

    X, y = pegasos.load_svmlight(str(data_dir() / name))
    X = X.tocsr()
    grid = list(autotune.DEFAULT_ETA0_GRID)
    classes = int(np.unique(y).size)
    rows, differ = [], []
    for lam in lams:
        for seed in seeds:
            args, kwargs = calibration_call(X, y, lam, seed)
            t0, eta0, visited = autotune.calibrate_step_offset(*args, **{**kwargs, "details": True})
            walk = min(visited, key=lambda r: (r[1], r[0]))[0]
            every = whole_grid(args, kwargs)
            best = min(every, key=lambda e: (every[e], e))
            assert all(every[e] == v for e, v in visited), "a visited score differs from the point scored alone"
            row = dict(set=name.split("/")[0], classes=classes, lam=lam, seed=seed, visits=len(visited),
                       walk=grid.index(walk), best=grid.index(best), same=walk == best, f_walk=every[walk],
                       f_best=every[best])
            rows.append(row)
            log(f"  {row['set']:10s} lambda {lam:g} seed {seed}: walk {row['walk']:2d}, grid argmin {row['best']:2d}, "
                f"{len(visited):2d} visits")
            if walk != best:
                t0_best = autotune.calibrate_step_offset(*args, **{**kwargs, "grid": (best,)})
                f_w, e_w = final_objective(X, y, lam, seed)
                f_b, e_b = final_objective(X, y, lam, seed, step_offset=t0_best)
                differ.append(dict(row, final_walk=f_w, final_best=f_b, epochs_walk=e_w, epochs_best=e_b))
                log(f"    final objective: walk {f_w:.6g} ({e_w} epochs), grid argmin {f_b:.6g} ({e_b} epochs)")
    return rows, differ


def report(rows, differ, info, args):
    from pegasos.autotune import DEFAULT_ETA0_GRID as grid

    out = ["# The step calibration: a walk over the grid against the whole grid", "",
           f"`python benchmarks/bench_calibration.py{''.join(' ' + a for a in sys.argv[1:])}`, {info['date']}, commit {info['commit']}, {info['cpu']} "
           f"({info['cores']} cores), Python {info['python']}, numpy {info['versions']['numpy']}; "
           f"load average {info['load']} (no times are measured here).", "",
           "The default Pegasos run's calibration (`pegasos.fit(..., solver=\"pegasos\", finish=\"none\")`: "
           "its sample of 1000, its settings) scores grid points by the sample objective of one epoch; the "
           "walk (`autotune.walk_to_minimum`) starts at the point nearest 1/r2 (r2: the sample's mean "
           "squared row norm). *grid argmin*: the lowest score over all "
           f"{len(grid)} points (10^-4 .. 10, quarter decades), each scored alone; indices 0..{len(grid) - 1}. "
           "dna and sector: one-vs-rest, calibrated once on the largest class against the rest.", ""]
    total = sum(r["same"] for r in rows)
    visits = [r["visits"] for r in rows]
    out += [f"**The walk chose the grid argmin in {total} of {len(rows)} calibrations**; "
            f"{sum(visits) / len(visits):.2f} grid points visited on average (at most {max(visits)}), "
            f"against {len(grid)}.", ""]
    table = []
    for name in dict.fromkeys(r["set"] for r in rows):
        for lam in dict.fromkeys(r["lam"] for r in rows):
            rs = [r for r in rows if r["set"] == name and r["lam"] == lam]
            if not rs:
                continue
            table.append([name + (f" ({rs[0]['classes']} classes)" if rs[0]["classes"] > 2 else ""), f"{lam:g}",
                          f"{sum(r['same'] for r in rs)}/{len(rs)}",
                          " ".join(str(r["best"]) for r in rs), " ".join(str(r["walk"]) for r in rs),
                          " ".join(str(r["visits"]) for r in rs)])
    out += [markdown_table(["data set", "lambda", "walk = grid argmin", "grid argmin (seeds "
                            + ", ".join(map(str, args.seeds)) + ")", "walk's choice", "points visited"], table), ""]
    if differ:
        out += ["Where the walk chose another point: the sample objectives of both, and the final objective "
                "of the default Pegasos run (automatic length, no finish) with each step offset.", "",
                markdown_table(["data set", "lambda", "seed", "walk / argmin", "sample objective walk / argmin",
                                "final objective walk (epochs)", "final objective argmin (epochs)",
                                "walk - argmin, relative"],
                               [[d["set"], f"{d['lam']:g}", d["seed"], f"{d['walk']} / {d['best']}",
                                 f"{d['f_walk']:.5g} / {d['f_best']:.5g}",
                                 f"{d['final_walk']:.6g} ({d['epochs_walk']})",
                                 f"{d['final_best']:.6g} ({d['epochs_best']})",
                                 f"{(d['final_walk'] - d['final_best']) / d['final_best']:+.3%}"] for d in differ]), ""]
    else:
        out += ["The walk chose the grid argmin everywhere: the default runs' models are those of the "
                "exhaustive calibration.", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated data set names (directory names), e.g. a9a,dna")
    ap.add_argument("--files", help="comma-separated files of the shared data instead of the training files, "
                                    "e.g. a9a/a9a.t,dna/dna.scale.t")
    ap.add_argument("--lams", type=lambda s: [float(x) for x in s.split(",")], default=list(LAMS))
    ap.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=list(SEEDS))
    ap.add_argument("--out", default=str(HERE / "RESULTS_calibration.md"))
    args = ap.parse_args()
    sets = args.files.split(",") if args.files else SETS
    sets = [s for s in sets if not args.only or s.split("/")[0] in args.only.split(",")]
    info = machine_info()
    rows, differ = [], []
    for name in sets:
        print(name, flush=True)
        r, d = one_set(name, args.lams, args.seeds, lambda msg: print(msg, flush=True))
        rows += r
        differ += d
    text = report(rows, differ, info, args)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
