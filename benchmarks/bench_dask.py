"""Training, cross-validation and lambda search on a Dask cluster: per-round cost,
time to 1% of f*, search speed-up, and a model of larger clusters.

    .venv/bin/python benchmarks/bench_dask.py [--part rounds|a9a|search|model|all] [--repeats 3]

Parts (each writes benchmarks/out/dask/PART.md, not committed; RESULTS_dask.md is put together from them):

* rounds: exact rounds (``--sync-every 1``) on a 2-worker LocalCluster with processes, for
  d = 1e3..1e6 features and k = 1..4096, on synthetic shards (2 x 5000 rows, 20 values each,
  written under /tmp); every round timed from the progress callback (first round dropped):
  median and p10-p90 ms per round, rounds/s, and the local shard engine's ms per round (the
  same draws and compiled step in one process: the per-round work without the cluster).
* a9a: a9a cut into 4 shards (``--split 4``), lambda = 1e-4, no bias (f* = 0.3517618027 from
  the data README), the automatic t0 (calibrated on a sample of the shards): the smallest number
  of epochs of a doubling grid whose model is within 1% of f*, found with the local shard engine
  (which gives the Dask model bit for bit, in both modes), then that run timed on Dask
  (cluster start excluded); against the in-memory ``pegasos.fit`` (default settings, and k = 256).
* search: ``pegasos search a9a`` (13 lambdas x 5 folds, warm starts) with ``--jobs 1``,
  ``--jobs 2`` and ``--engine dask --local-workers 2`` (cluster start included), the outputs
  compared; median of ``--repeats`` runs.
* model: time to 1% on 8, 64 and 512 workers for 100 GB of data, from the numbers above
  (assumptions written with it).

The machine is shared: the 1-minute load average is written beside every number.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, machine_info, markdown_table  # noqa: E402

HERE = Path(__file__).resolve().parent
PARTS = HERE / "out" / "dask"          # git-ignored; RESULTS_dask.md is put together from these
F_STAR = 0.3517618027          # a9a, lambda = 1e-4, no bias (shared data README)


def load1():
    return f"{os.getloadavg()[0]:.1f}"


def timed_rounds(run):
    """Call run(progress); the seconds per iteration of each progress step after the first."""
    stamps = []

    def progress(n):
        stamps.append((time.perf_counter(), n))

    run(progress)
    return [(t1 - t0) / n for (t0, _), (t1, n) in zip(stamps, stamps[1:])]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def cluster2():
    import distributed

    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                    dashboard_address=None)


# ------------------------------------------------------------------ rounds --

def write_shards(folder, d, rows=5000, nnz=20, seed=0):
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    for j in range(2):
        path = folder / f"part{j}.svm"
        if path.exists():
            continue
        lines = []
        for _ in range(rows):
            cols = np.sort(rng.choice(d, nnz, replace=False))
            vals = rng.normal(size=nnz) / math.sqrt(nnz)
            y = 1 if float(vals @ w[cols]) > 0 else -1
            lines.append(f"{y} " + " ".join(f"{c + 1}:{v:.4g}" for c, v in zip(cols, vals)))
        path.write_text("\n".join(lines) + "\n")


def part_rounds(args):
    from pegasos import TrainOptions
    from pegasos.engine_dask import EngineSettings, fit_shards

    cluster = cluster2()
    rows = []
    try:
        dask = EngineSettings(engine="dask", scheduler=cluster.scheduler_address)
        for d in (1_000, 10_000, 100_000, 1_000_000):
            folder = Path("/tmp/pegasos-bench-dask") / f"d{d}"
            write_shards(folder, d)
            for k in (1, 16, 256, 4096):
                opts = TrainOptions(lam=1e-4, iterations=args.rounds, batch_size=k, seed=1, step_offset=1e4,
                                    n_threads=1)
                local = timed_rounds(lambda p: fit_shards(str(folder), opts, progress=p))
                before = load1()
                remote = timed_rounds(lambda p: fit_shards(str(folder), opts, dask, progress=p))
                med = statistics.median(remote)
                rows.append([f"{d:.0e}", k, f"{med * 1e3:.1f}", f"{pct(remote, 0.1) * 1e3:.1f}-"
                             f"{pct(remote, 0.9) * 1e3:.1f}", f"{1 / med:.0f}",
                             f"{statistics.median(local) * 1e3:.2f}", f"{before}/{load1()}"])
                print(rows[-1], flush=True)
    finally:
        cluster.close()
    table = markdown_table(["d", "k", "Dask ms/round (median)", "p10-p90 ms", "rounds/s",
                            "local shard engine ms/round", "load before/after"], rows)
    return (f"## Exact rounds on a 2-worker LocalCluster (processes)\n\n"
            f"Synthetic shards: 2 files of 5000 rows, 20 values per row at random columns of d; "
            f"{args.rounds} rounds per cell (the first dropped), lambda = 1e-4, t0 = 1e4.\n\n{table}\n")


# --------------------------------------------------------------------- a9a --

def part_a9a(args):
    import pegasos
    from pegasos import TrainOptions
    from pegasos.engine_dask import EngineSettings, fit_shards

    a9a = str(data_dir() / "a9a" / "a9a")
    d = pegasos.read_svmlight(a9a)

    def gap(model):
        return pegasos.objective(model, d.X, d.y)["objective"] / F_STAR - 1

    rows = []
    base = TrainOptions(lam=1e-4, bias="none", seed=1, n_threads=1)
    t = time.perf_counter()
    m = pegasos.fit(d, base)
    rows.append(["in memory, pegasos.fit defaults (permutation, t0 calibrated, epochs by the doubling rule)",
                 m.info.get("epochs", "-"), "-", f"{time.perf_counter() - t:.2f}", f"{100 * gap(m):.2f}", load1()])
    print(rows[-1], flush=True)
    grid = (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64)

    def first_within(run):
        """(epochs, model) of the first grid point within 1% of f*, else of the last point."""
        for e in grid:
            model = run(e)
            if gap(model) <= 0.01:
                break
        return e, model

    k = 256
    e, m = first_within(lambda e: pegasos.fit(d, base.replace(epochs=e, batch_size=k, sampling="uniform")))
    t = time.perf_counter()
    pegasos.fit(d, base.replace(epochs=e, batch_size=k, sampling="uniform"))
    rows.append([f"in memory, k = {k}, uniform, t0 calibrated", e, round(e * d.n_examples / k),
                 f"{time.perf_counter() - t:.2f}", f"{100 * gap(m):.2f}", load1()])
    print(rows[-1], flush=True)
    modes = [("exact (--sync-every 1)", 1, 64), ("exact (--sync-every 1)", 1, 256),
             ("averaging (--sync-every 10)", 10, 64), ("averaging (--sync-every epoch)", "epoch", 64)]
    cluster = cluster2()
    try:
        for name, sync, kk in modes:
            opts = base.replace(batch_size=kk)
            local = EngineSettings(sync_every=sync)
            e, m = first_within(lambda e: fit_shards(a9a, opts.replace(epochs=e), local, split=4))
            t = time.perf_counter()
            fit_shards(a9a, opts.replace(epochs=e), local, split=4)
            local_s = time.perf_counter() - t
            dask = EngineSettings(engine="dask", scheduler=cluster.scheduler_address, sync_every=sync)
            before = load1()
            t = time.perf_counter()
            md = fit_shards(a9a, opts.replace(epochs=e), dask, split=4)
            dask_s = time.perf_counter() - t
            same = (md.w == m.w).all()
            rounds = m.info["iterations"] if sync == 1 else \
                math.ceil(int(m.info["iterations"]) / (math.ceil(d.n_examples / kk) if sync == "epoch" else sync))
            rows.append([f"shards, {name}, k = {kk}: local shard engine", e, rounds, f"{local_s:.2f}",
                         f"{100 * gap(m):.2f}", before])
            rows.append([f"shards, {name}, k = {kk}: Dask, 2 worker processes (model == local: "
                         f"{'yes' if same else 'NO'})", e, rounds, f"{dask_s:.2f}", f"{100 * gap(md):.2f}",
                         f"{before}/{load1()}"])
            print(rows[-2:], flush=True)
    finally:
        cluster.close()
    table = markdown_table(["run", "epochs to 1% of f*", "rounds (averages)", "seconds", "above f* %", "load"],
                           rows)
    return (f"## Time to 1% of f* on a9a in 4 shards (lambda = 1e-4, no bias)\n\n"
            f"Epochs: the first of {', '.join(map(str, grid))} whose model is within 1% of f* = {F_STAR} "
            f"(seed 1; the last when none is); seconds: one run of that length (Dask: reading the shards and starting the actors "
            f"included, cluster start excluded).\n\n{table}\n")


# ------------------------------------------------------------------ search --

def part_search(args):
    a9a = str(data_dir() / "a9a" / "a9a")
    exe = str(Path(sys.executable).with_name("pegasos"))
    runs = {"local, --jobs 1": [], "local, --jobs 2": ["--jobs", "2"],
            "Dask, --local-workers 2 (start included)": ["--engine", "dask", "--local-workers", "2"]}
    rows, outputs = [], {}
    for name, extra in runs.items():
        times, loads = [], []
        for _ in range(args.repeats):
            loads.append(load1())
            t = time.perf_counter()
            r = subprocess.run([exe, "search", "--json"] + extra + [a9a], capture_output=True, text=True,
                               check=True)
            times.append(time.perf_counter() - t)
            out = json.loads(r.stdout)
            for row in out["rows"]:
                row.pop("seconds")
            out.pop("data", None)
            out["options"].pop("n_threads")       # --jobs 2 trains each fold with one thread, as it says
            outputs[name] = out
        rows.append([name, f"{statistics.median(times):.1f}", f"{min(times):.1f}-{max(times):.1f}",
                     ", ".join(loads)])
        print(rows[-1], flush=True)
    base = float(rows[0][1])
    for r in rows:
        r.insert(2, f"{base / float(r[1]):.2f}")
    same = all(o == outputs["local, --jobs 1"] for o in outputs.values())
    table = markdown_table(["pegasos search a9a (13 lambdas 1e-7..1e-1, 5 folds)", "median s", "speed-up",
                            "min-max s", "load at each start"], rows)
    return (f"## `pegasos search`: local against Dask\n\n{args.repeats} runs each; every number of the "
            f"`--json` outputs (training times and the threads per fold aside) identical: "
            f"{'yes' if same else 'NO'}.\n\n{table}\n")


# ------------------------------------------------------------------- main --

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="all", choices=["rounds", "a9a", "search", "all", "report"])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    PARTS.mkdir(parents=True, exist_ok=True)
    todo = ["rounds", "a9a", "search"] if args.part == "all" else ([] if args.part == "report" else [args.part])
    for part in todo:
        info = machine_info()
        text = {"rounds": part_rounds, "a9a": part_a9a, "search": part_search}[part](args)
        import distributed

        text += (f"\n(date {info['date']}, commit {info['commit']}, {info['cpu']}, {info['cores']} cores, "
                 f"Python {info['python']}, distributed {distributed.__version__}; load average at start "
                 f"{info['load']}, at the end {machine_info()['load']})\n")
        (PARTS / f"{part}.md").write_text(text)
        print(text, flush=True)


if __name__ == "__main__":
    main()
