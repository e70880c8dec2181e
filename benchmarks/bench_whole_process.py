"""Whole-process time of the everyday commands on a9a, against the interpreter, NumPy and LIBLINEAR.

Each command runs as its own process (fork to exit, timed from here, user and system time from
the children's rusage), the commands taking turns, --repeats rounds; the table gives medians and
the load average beside.  ``pegasos`` is run as ``python -c "from pegasos.cli import main; ..."``
so that --before (a directory holding another version of the package, put first on PYTHONPATH)
is timed the same way.  LIBLINEAR: liblinear-official's reader, train and save_model in Python
(benchmarks/liblinear_user.py), C = 1 / (lambda m), -s 3 (hinge loss, dual), no bias.

Usage: python benchmarks/bench_whole_process.py [--data FILE ...] [--repeats 7] [--before DIR]

Several --data files are timed in the same rounds (a .bz2 file is decompressed into a temporary
directory first, for both tools: LIBLINEAR's reader takes plain text only); C = 1/(lambda m) with m
the file's examples.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LAM = 1e-4
DESIGN_T = 100_000      # pegasos train -l 1e-4 -T 100000 data.svm


def pegasos_cmd(args):
    return [sys.executable, "-c", "import sys; from pegasos.cli import main; sys.argv[0] = 'pegasos'; main()", *args]


def timed(cmd, env, cwd):
    """Run ``cmd`` in ``cwd``, outside the checkout: there ``python -c`` would import the checkout's package
    ahead of --before's PYTHONPATH."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def plain_copy(path, tmp):
    """``path``, or its decompressed copy in ``tmp`` for a .bz2 file."""
    if not path.endswith(".bz2"):
        return path
    import bz2
    import shutil

    out = os.path.join(tmp, Path(path).name[:-4])
    with bz2.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def examples(path):
    """The number of example lines (not blank, not comments) of an SVMlight file."""
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip() and not line.lstrip().startswith(b"#"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", default=[str(Path(os.environ.get("PEGASOS_DATA", HERE.parent.parent / "shared"
                                                                         / "data")) / "a9a" / "a9a")])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--before", help="directory holding the package version to time as 'before'")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pegasos-whole-")
    model, out = os.path.join(tmp, "m"), os.path.join(tmp, "p")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)          # a user's interpreter caches bytecode
    variants = [("this", env)]
    if args.before:
        env_b = dict(env, PYTHONPATH=args.before + os.pathsep + env.get("PYTHONPATH", ""))
        variants.insert(0, ("before", env_b))
    commands = [("python -c pass", [sys.executable, "-c", "pass"], env),
                ("python -c 'import numpy'", [sys.executable, "-c", "import numpy"], env)]
    for name, e in variants:
        commands += [(f"{name}: python -c 'import pegasos'", [sys.executable, "-c", "import pegasos"], e),
                     (f"{name}: pegasos --help", pegasos_cmd(["--help"]), e)]
    for data in args.data:
        data, label = plain_copy(os.path.abspath(data), tmp), Path(data).name.replace(".bz2", "")
        for name, e in variants:
            commands += [(f"{name}: pegasos train -l 1e-4 {label}",
                          pegasos_cmd(["train", "-q", "-l", str(LAM), data, model + name + label]), e),
                         (f"{name}: pegasos train -l 1e-4 -T {DESIGN_T} {label} (the design card)",
                          pegasos_cmd(["train", "-q", "-l", str(LAM), "-T", str(DESIGN_T), data,
                                       model + name + label + ".T"]), e),
                         (f"{name}: pegasos predict {label}",
                          pegasos_cmd(["predict", "-q", data, model + name + label, out]), e)]
        c = 1.0 / (LAM * examples(data))
        commands.append((f"LIBLINEAR {label} (liblinear_user.py: svm_read_problem, train -s 3, save_model)",
                         [sys.executable, str(HERE / "liblinear_user.py"), "svm_read_problem", data,
                          f"-s 3 -c {c} -B -1 -q", os.path.join(tmp, "ll")], env))
    for _, cmd, e in commands:                         # warm-up: bytecode caches, page cache, the models
        timed(cmd, e, tmp)
    runs = {name: [] for name, _, _ in commands}
    loads = []
    for _ in range(args.repeats):
        loads.append(os.getloadavg()[0])
        for name, cmd, e in commands:
            runs[name].append(timed(cmd, e, tmp))
    print(f"{args.repeats} rounds, load average (1 min) {min(loads):.2f}-{max(loads):.2f}")
    print("| command | wall ms | user ms | sys ms |")
    print("|---|---|---|---|")
    for name, _, _ in commands:
        w, u, s = (statistics.median(x[i] for x in runs[name]) for i in range(3))
        print(f"| {name} | {1e3 * w:.0f} | {1e3 * u:.0f} | {1e3 * s:.0f} |")
    if args.before:
        label = Path(args.data[0]).name.replace(".bz2", "")
        same = Path(model + "before" + label).read_bytes() == Path(model + "this" + label).read_bytes()
        print(f"model files of before and this identical: {same}")


if __name__ == "__main__":
    main()
