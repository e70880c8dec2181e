"""Which solver should ``solver="auto"`` pick?  Pegasos against the dual, on every shared set and on
generated data of small and large lambda*m.

For each (data, lambda): ``pegasos.fit`` with ``solver="dual"`` (dual coordinate ascent from w = 0
until certified within the default tol), with ``solver="pegasos"`` (the calibrated, lengthened
Pegasos run) and with the default ``solver="auto"``, taking turns; the train time (median of
--repeat) and the relative suboptimality (f - f*)/f* of each, f* from the shared data README where
it is known, else an upper bound on it, (f - D)/D with D the best certified dual bound of a tight
dual run (tol 1e-5).  Prints a markdown table and the load beside it.

    .venv/bin/python benchmarks/bench_solver_choice.py [--repeat 3] [--synthetic DIR] [--quick] [--before CMD]

--synthetic DIR names a folder holding s100k.svm, s1m.svm and s4m.svm (data_scripts/make_synthetic.py
--features 50000 --nnz-per-row 50 --seed 0, 4M rows, and its first 1M and 100k lines); without it the
generated rows are made at 100k only (in benchmarks/out/solver-choice).  --before CMD compares the default of another build (its
``pegasos`` command) with this one's, whole process, the two in turn: time and suboptimality.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REFERENCE_OPTIMA, data_dir, machine_info, make_synthetic, markdown_table  # noqa: E402

#: (file under the shared data, lambda values)
SHARED = (
    ("a9a/a9a", (1e-2, 3e-3, 1e-3, 1e-4, 1e-5)),
    ("a8a/a8a", (1e-3, 1e-4)),
    ("w8a/w8a", (1e-3, 1e-4)),
    ("ijcnn1/ijcnn1.trn.bz2", (1e-3, 1e-4)),
    ("reuters/reuters.trn.bz2", (1e-4, 1e-5)),
    ("mushrooms/mushrooms.txt", (1e-3, 1e-4)),
    ("agaricus/agaricus.txt.train", (1e-3, 1e-4)),
    ("heart_scale/heart_scale", (1e-2, 1e-4)),
    ("svmguide1/svmguide1.txt", (1e-4,)),
)
SYNTHETIC = (("s100k.svm", (1e-3, 1e-4, 1e-5)), ("s1m.svm", (1e-4, 1e-5, 1e-6)), ("s4m.svm", (1e-4,)))
F_STAR_EXTRA = {
    ("a8a/a8a", 1e-4): 0.3558189170, ("a8a/a8a", 1e-3): 0.3607686733,
    ("w8a/w8a", 1e-3): 0.1766516579, ("ijcnn1/ijcnn1.trn.bz2", 1e-3): 0.1935071455,
    ("mushrooms/mushrooms.txt", 1e-3): 0.0073080675, ("mushrooms/mushrooms.txt", 1e-4): 0.0007573911,
    ("agaricus/agaricus.txt.train", 1e-3): 0.0064885588, ("agaricus/agaricus.txt.train", 1e-4): 0.0006624677,
    ("heart_scale/heart_scale", 1e-2): 0.3657335768, ("heart_scale/heart_scale", 1e-4): 0.3516439591,
    ("reuters/reuters.trn.bz2", 1e-4): 0.0422014018, ("reuters/reuters.trn.bz2", 1e-5): 0.0098729906,
}


def run(d, lam, solver, repeat):
    import pegasos

    times, model = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        model = pegasos.fit(d, lam=lam, solver=solver)
        times.append(time.perf_counter() - start)
    f = float(pegasos.objective(model, d.X, d.y)["objective"])
    return model, f, statistics.median(times)


def lower_bound(d, lam):
    """The certified dual bound D <= f* of a tight dual run (tol 1e-5)."""
    import pegasos

    model = pegasos.fit(d, lam=lam, solver="dual", tol=1e-5)
    f = float(pegasos.objective(model, d.X, d.y)["objective"])
    return f * (1.0 - float(model.info["certified_gap"]))


def whole_process(before, after, path, lam, repeat, tmp):
    """Whole-process seconds (median of ``repeat``, the two commands in turn) and rel. suboptimality of
    ``pegasos train -q -l lam DATA`` for the ``before`` and ``after`` commands."""
    import json
    import subprocess

    times = {"before": [], "after": []}
    for _ in range(repeat):
        for name, command in (("before", before), ("after", after)):
            start = time.perf_counter()
            subprocess.run([command, "train", "-q", "-l", repr(lam), str(path), f"{tmp}/{name}.model"], check=True)
            times[name].append(time.perf_counter() - start)
    out = {}
    for name, command in (("before", before), ("after", after)):
        r = subprocess.run([after, "objective", "--json", str(path), f"{tmp}/{name}.model"], check=True,
                           capture_output=True, text=True)
        info = {}
        for line in open(f"{tmp}/{name}.model"):
            key, _, value = line.rstrip("\n").partition(" ")
            if key in ("iterations", "solver", "finish_passes", "epochs"):
                info[key] = value
            if key in ("weights", "class"):
                break
        out[name] = (statistics.median(times[name]), float(json.loads(r.stdout)["objective"]), info)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--synthetic", help="folder of s100k.svm, s1m.svm, s4m.svm")
    parser.add_argument("--quick", action="store_true", help="a9a and 100k rows only")
    parser.add_argument("--only", help="run only files whose name contains this")
    parser.add_argument("--before", help="another build's pegasos command: whole-process time and suboptimality "
                                         "of its default against this one's, the two in turn")
    args = parser.parse_args()
    import pegasos

    cases = [(data_dir() / name, name, lams) for name, lams in SHARED]
    folder = Path(args.synthetic) if args.synthetic else Path(__file__).resolve().parent / "out" / "solver-choice"
    if not args.synthetic:
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / "s100k.svm").exists():
            make_synthetic(folder / "s100k.svm", 1e15, features=50_000, nnz=50, extra=("--rows", "100000"))
    cases += [(folder / name, f"generated {name[1:-4]} rows x 50k", lams) for name, lams in SYNTHETIC]
    if args.quick:
        cases = [c for c in cases if "a9a" in c[1] or "100k" in c[1]]
    if args.only:
        cases = [c for c in cases if args.only in c[1]]
    print(f"load before: {open('/proc/loadavg').read().strip()}", flush=True)
    if args.before:
        return compare(args, cases)
    rows = []
    for path, name, lams in cases:
        if not path.exists():
            print(f"skipped {name}: {path} is not there", flush=True)
            continue
        d = pegasos.read_svmlight(str(path))
        for lam in lams:
            f_star = REFERENCE_OPTIMA.get((name, lam)) or F_STAR_EXTRA.get((name, lam))
            bound = "f*"
            if f_star is None:
                f_star, bound = lower_bound(d, lam), "D"
            row = [name, f"{lam:g}", f"{lam * d.n_examples:.3g}"]
            picked = None
            for solver in ("dual", "pegasos", "auto"):
                model, f, t = run(d, lam, solver, args.repeat)
                if solver == "auto":
                    picked = model.info.get("solver")
                row += [f"{t:.3f}", "-" if f_star is None else f"{100 * (f - f_star) / f_star:.3g}%"]
            row += [picked, bound]
            rows.append(row)
            print(" | ".join(row), flush=True)
    print(f"load after: {open('/proc/loadavg').read().strip()}")
    print()
    print(markdown_table(["data", "lambda", "lambda*m", "dual s", "dual subopt", "pegasos s", "pegasos subopt",
                          "auto s", "auto subopt", "auto picks", "subopt against"], rows))
    print()
    print(machine_info())


def compare(args, cases):
    """--before: the default of two builds, whole process, in turn."""
    import shutil
    import tempfile

    import pegasos

    after = shutil.which("pegasos") or str(Path(sys.executable).parent / "pegasos")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path, name, lams in cases:
            if not path.exists():
                continue
            d = None
            for lam in lams:
                f_star = REFERENCE_OPTIMA.get((name, lam)) or F_STAR_EXTRA.get((name, lam))
                if f_star is None:
                    d = d or pegasos.read_svmlight(str(path))
                    f_star = lower_bound(d, lam)
                r = whole_process(args.before, after, path, lam, args.repeat, tmp)
                row = [name, f"{lam:g}"]
                for key in ("before", "after"):
                    t, f, info = r[key]
                    how = (f"{info.get('solver', 'dual' if info['iterations'] == '0' else 'pegasos')} "
                           f"T={info['iterations']}" + (f", {info['finish_passes']} passes" if 'finish_passes' in info
                                                         else ""))
                    row += [f"{t:.3f}", f"{100 * (f - f_star) / f_star:.3g}%", how]
                row.append(f"{r['after'][0] / r['before'][0]:.2f}")
                rows.append(row)
                print(" | ".join(row), flush=True)
    print(f"load after: {open('/proc/loadavg').read().strip()}")
    print()
    print(markdown_table(["data", "lambda", "before s", "before subopt", "before run", "after s", "after subopt",
                          "after run", "after/before"], rows))


if __name__ == "__main__":
    main()
