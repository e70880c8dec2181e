"""Start-up of the command, and the fixed cost of a Pegasos run.

1. Whole processes, each against ``python -c pass`` of the same interpreter in the same rounds:
   ``python -c "import pegasos"``, ``pegasos --help`` and ``pegasos train -q`` on a 10-line file.  The
   commands take turns, --rounds rounds after one warm-up round; the table gives the medians of wall and
   cpu (user + system, from the children's rusage) time and the median over the rounds of each command's
   wall time minus that round's ``python -c pass``.  The environment is the one of this interpreter
   (its ``pegasos`` script beside it); --before BIN adds another environment's bin directory (an install
   of the earlier version), timed in the same rounds.  How each environment has pegasos installed is
   printed: editable through setuptools' import hook (a module every start of its Python imports),
   editable through a plain .pth line, or a regular install.
2. The import profile of ``pegasos train``: the median over --rounds runs of ``-X importtime``'s
   cumulative microseconds of the top-level imports (and of NumPy, click and the editable-install hook
   wherever they are imported), per environment.
3. The fixed cost of a Pegasos run on a9a: the training time of ``pegasos.fit`` (in process, the data
   read once) and the ``train_seconds`` of ``pegasos train --solver pegasos --finish none --epochs E
   --json``, medians over --rounds runs, for E = 1 and 2; fixed = 2 t(1) - t(2), the time a run costs
   besides its epochs (step calibration, set-up, checks).  With --before the models written by both
   environments for the same settings are compared byte for byte.

   --svmasgd PROGRAM times Bottou's svmasgd (sgd-2.x, compiled with -DLOSS=HingeLoss -DBIAS=0) the same
   way on the same file (-lambda 1e-4 -dontnormalize, 1 and 2 epochs), from its own cpu timer.

Usage: python benchmarks/bench_startup.py [--rounds 21] [--before BIN] [--data a9a] [--svmasgd PROGRAM]
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EPOCHS = (1, 2)
TRAIN = ["train", "--solver", "pegasos", "--finish", "none"]
PROFILED = ("numpy", "click", "pegasos.cli", "pegasos.model", "numpy.random", "__editable___pegasos_0_1_0_finder")


def timed(cmd, env=None):
    """(wall, cpu) seconds of one run of ``cmd``, output thrown away."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def install_kind(python):
    """How pegasos is installed in the environment of ``python``."""
    code = ("import sys, json, importlib.metadata as md\n"
            "hook = any('__editable__' in m for m in sys.modules)\n"
            "url = md.distribution('pegasos').read_text('direct_url.json')\n"
            "editable = bool(url and json.loads(url).get('dir_info', {}).get('editable'))\n"
            "print('editable, through setuptools import hook' if hook else "
            "'editable, through a .pth line' if editable else 'regular install (not editable)')\n")
    return subprocess.run([python, "-c", code], capture_output=True, text=True, cwd="/").stdout.strip()


def ten_lines(path):
    rng = random.Random(0)
    with open(path, "w") as f:
        for i in range(10):
            cols = sorted(rng.sample(range(1, 31), 4))
            f.write(("+1" if i % 2 else "-1") + "".join(f" {c}:{rng.uniform(-1, 1):.3f}" for c in cols) + "\n")


def startup(envs, rounds, tmp):
    data = os.path.join(tmp, "ten.svm")
    ten_lines(data)
    commands = []
    for name, bin_dir in envs:
        python, script = str(bin_dir / "python"), str(bin_dir / "pegasos")
        commands += [(name, "python -c pass", [python, "-c", "pass"]),
                     (name, "python -c 'import pegasos'", [python, "-c", "import pegasos"]),
                     (name, "pegasos --help", [script, "--help"]),
                     (name, "pegasos train -q (10 lines)", [script, "train", "-q", data,
                                                            os.path.join(tmp, name + ".ten.model")])]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)          # a user's interpreter caches bytecode
    for _, _, cmd in commands:
        timed(cmd, env)
    runs = {(n, c): [] for n, c, _ in commands}
    loads = []
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        for name, label, cmd in commands:
            runs[(name, label)].append(timed(cmd, env))
    loads.append(os.getloadavg()[0])
    print(f"\n{rounds} rounds, load average (1 min) {min(loads):.2f}-{max(loads):.2f} on {os.cpu_count()} cores")
    print("| environment | command | wall ms | cpu ms | wall - python -c pass, ms | cpu - python -c pass, ms |")
    print("|---|---|---|---|---|---|")
    for name, label, _ in commands:
        r, base = runs[(name, label)], runs[(name, "python -c pass")]
        over = [f"{1e3 * statistics.median(a[i] - b[i] for a, b in zip(r, base)):.1f}" for i in (0, 1)]
        if label == "python -c pass":
            over = ["", ""]
        print(f"| {name} | {label} | {1e3 * statistics.median(x[0] for x in r):.1f} | "
              f"{1e3 * statistics.median(x[1] for x in r):.1f} | {over[0]} | {over[1]} |")


def import_profile(envs, rounds, tmp):
    data = os.path.join(tmp, "ten.svm")
    print(f"\nImport profile of `pegasos train -q` on 10 lines: median -X importtime cumulative ms over {rounds} runs")
    print("| environment | module | imported by | ms |")
    print("|---|---|---|---|")
    for name, bin_dir in envs:
        cum = {}
        for _ in range(rounds):
            err = subprocess.run([str(bin_dir / "python"), "-X", "importtime", str(bin_dir / "pegasos"), "train",
                                  "-q", data, os.path.join(tmp, "p.model")], capture_output=True, text=True).stderr
            for line in err.splitlines():
                if not line.startswith("import time:") or "self [us]" in line:
                    continue
                _, c, mod = line[len("import time:"):].split("|")
                depth = (len(mod) - len(mod.lstrip())) // 2      # 0: imported by the command's own code
                cum.setdefault((mod.strip(), depth), []).append(int(c))
        rows = sorted(((statistics.median(v), m, d) for (m, d), v in cum.items()
                       if d == 0 or m in PROFILED), reverse=True)
        for ms, mod, depth in rows[:14]:
            print(f"| {name} | {mod} | {'the command' if depth == 0 else 'a module (nested)'} | {ms / 1e3:.1f} |")


def fixed_cost_child(data, rounds):
    """In the environment of this interpreter: medians of pegasos.fit's seconds for each E (printed as JSON)."""
    import pegasos
    from pegasos.io import read_svmlight

    d = read_svmlight(data)
    out = {}
    for epochs in EPOCHS * 2:                       # the first pass warms up
        options = pegasos.TrainOptions(solver="pegasos", finish="none", epochs=epochs)
        wall, cpu = [], []
        for _ in range(rounds):
            start, start_cpu = time.perf_counter(), time.process_time()
            pegasos.fit(d, options)
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        out[epochs] = (statistics.median(wall), statistics.median(cpu))
    print(json.dumps(out))


def fixed_cost(envs, rounds, data, tmp, svmasgd=None):
    print(f"\nFixed cost of a Pegasos run on {Path(data).name} (--solver pegasos --finish none), medians of {rounds}; "
          f"load average (1 min) {os.getloadavg()[0]:.2f}")
    print("| environment | timed | E = 1, ms | E = 2, ms | epoch t(2) - t(1), ms | fixed 2 t(1) - t(2), ms |")
    print("|---|---|---|---|---|---|")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for name, bin_dir in envs:
        r = subprocess.run([str(bin_dir / "python"), __file__, "--fixed-child", data, "--rounds", str(rounds)],
                           capture_output=True, text=True, check=True, cwd=tmp, env=env)
        api = {int(k): v for k, v in json.loads(r.stdout).items()}
        api_wall, api_cpu = ({e: t[i] for e, t in api.items()} for i in (0, 1))
        cli = {}
        for epochs in EPOCHS:
            seconds = []
            for _ in range(rounds):
                r = subprocess.run([str(bin_dir / "pegasos"), *TRAIN, "--epochs", str(epochs), "--json", data,
                                    os.path.join(tmp, f"{name}.e{epochs}.model")],
                                   capture_output=True, text=True, check=True, env=env)
                seconds.append(json.loads(r.stdout)["train_seconds"])
            cli[epochs] = statistics.median(seconds)
        for timed_by, t in (("pegasos.fit, cpu", api_cpu), ("pegasos.fit, wall", api_wall),
                            ("train --json train_seconds (wall, the first run of its process)", cli)):
            print(f"| {name} | {timed_by} | {1e3 * t[1]:.2f} | {1e3 * t[2]:.2f} | {1e3 * (t[2] - t[1]):.2f} | "
                  f"{1e3 * (2 * t[1] - t[2]):.2f} |")
    if svmasgd:
        # Bottou's svmasgd (sgd-2.x, built with -DLOSS=HingeLoss -DBIAS=0): its "Total training time" is
        # its cpu time from its eta0 calibration on 1000 examples through each epoch; it reads .txt files
        text = os.path.join(tmp, "data.txt")
        if not os.path.exists(text):
            os.symlink(os.path.abspath(data), text)
        totals = []
        for _ in range(rounds):
            r = subprocess.run([svmasgd, "-lambda", "1e-4", "-epochs", "2", "-dontnormalize", text],
                               capture_output=True, text=True, check=True)
            totals.append([float(line.split()[3]) for line in r.stdout.splitlines()
                           if line.startswith("Total training time")])
        t = {e: statistics.median(x[e - 1] for x in totals) for e in EPOCHS}
        print(f"| svmasgd | its cpu timer | {1e3 * t[1]:.2f} | {1e3 * t[2]:.2f} | {1e3 * (t[2] - t[1]):.2f} | "
              f"{1e3 * (2 * t[1] - t[2]):.2f} |")
    if len(envs) > 1:
        same = all(Path(tmp, f"{envs[0][0]}.e{e}.model").read_bytes() == Path(tmp, f"{envs[1][0]}.e{e}.model").read_bytes()
                   for e in EPOCHS)
        print(f"models written by both environments for the same settings (E = 1, 2) identical: {same}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--before", help="bin directory of another environment with pegasos installed, timed as 'before'")
    ap.add_argument("--data", default=str(Path(os.environ.get("PEGASOS_DATA", HERE.parent.parent / "shared" / "data"))
                                          / "a9a" / "a9a"))
    ap.add_argument("--svmasgd", help="Bottou's svmasgd program (built with -DLOSS=HingeLoss -DBIAS=0), timed as a peer")
    ap.add_argument("--fixed-child", metavar="DATA", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fixed_child:
        return fixed_cost_child(args.fixed_child, args.rounds)
    envs = [("this", Path(sys.executable).parent)]
    if args.before:
        envs.insert(0, ("before", Path(args.before)))
    for name, bin_dir in envs:
        print(f"{name}: {bin_dir} ({install_kind(str(bin_dir / 'python'))})")
    with tempfile.TemporaryDirectory(prefix="pegasos-startup-") as tmp:
        startup(envs, args.rounds, tmp)
        import_profile(envs, max(5, args.rounds // 3), tmp)
        if os.path.exists(args.data):
            fixed_cost(envs, args.rounds, args.data, tmp, args.svmasgd)
        else:
            print(f"\n{args.data} not found: no fixed cost measured (set PEGASOS_DATA or --data)")


if __name__ == "__main__":
    main()
