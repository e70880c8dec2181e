"""Per-round cost of training on shards: Dask (2 local worker processes) against the
local shard engine and the plain compiled loop, on a9a cut into 2 shards (--split 2).

    .venv/bin/python benchmarks/bench_dask.py [--rounds 300] [--out benchmarks/RESULTS_dask.md]

For k = 1, 64, 1024 it runs R rounds of exact mini-batch Pegasos (--sync-every 1)
and one averaging run (--sync-every 100, k = 64), timing every round from the
progress callback (cluster start and shard reading excluded), and reports the
median and p90 round, rounds/s, and the plain loop's seconds per iteration
(pegasos.fit on the whole file, uniform sampling, same k). Run it once: it
takes a few minutes on a loaded 2-core machine.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, machine_info, markdown_table  # noqa: E402


def timed_rounds(run):
    """Call run(progress) and return the seconds of each progress step after the first."""
    stamps = []

    def progress(n):
        stamps.append((time.perf_counter(), n))

    run(progress)
    out = []
    for (t0, _), (t1, n) in zip(stamps, stamps[1:]):
        out.append((t1 - t0) / n)
    return out


def summary(per_round):
    per_round = sorted(per_round)
    med = statistics.median(per_round)
    p90 = per_round[int(0.9 * (len(per_round) - 1))]
    return med, p90, 1.0 / med


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "RESULTS_dask.md"))
    args = parser.parse_args()

    import distributed
    import numpy as np

    import pegasos
    from pegasos import TrainOptions
    from pegasos.engine_dask import EngineSettings, fit_shards

    a9a = data_dir() / "a9a" / "a9a"
    info = machine_info()
    d = pegasos.read_svmlight(str(a9a))
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    rows = []
    try:
        dask = EngineSettings(engine="dask", scheduler=cluster.scheduler_address)
        for k in (1, 64, 1024):
            opts = TrainOptions(lam=1e-4, iterations=args.rounds, batch_size=k, seed=1, step_offset=1e4,
                                average_from=0.5, n_threads=1)
            t = time.perf_counter()
            plain = pegasos.fit((d.X, d.y), opts.replace(sampling="uniform", iterations=max(args.rounds, 20000 // k)))
            plain_s = (time.perf_counter() - t) / max(args.rounds, 20000 // k)
            local = summary(timed_rounds(lambda p: fit_shards(str(a9a), opts, split=2, progress=p)))
            models = {}

            def run_dask(p):
                models["dask"] = fit_shards(str(a9a), opts, dask, split=2, progress=p)

            remote = summary(timed_rounds(run_dask))
            same = np.array_equal(models["dask"].w, fit_shards(str(a9a), opts, split=2).w)
            rows.append([k, f"{plain_s * 1e3:.3f}", f"{local[0] * 1e3:.3f}", f"{remote[0] * 1e3:.1f}",
                         f"{remote[1] * 1e3:.1f}", f"{remote[2]:.0f}", f"{local[2]:.0f}", "yes" if same else "NO"])
            print(rows[-1], flush=True)
            del plain
        opts = TrainOptions(lam=1e-4, iterations=100 * 30, batch_size=64, seed=1, step_offset=1e4,
                            average_from=0.5)
        avg = EngineSettings(engine="dask", scheduler=cluster.scheduler_address, sync_every=100)
        avg_rounds = timed_rounds(lambda p: fit_shards(str(a9a), opts, avg, split=2, progress=p))
        avg_s = summary([x * 100 for x in avg_rounds])
    finally:
        cluster.close()
    end_load = machine_info()["load"]
    text = f"""# Training on shards: Dask against local (`benchmarks/bench_dask.py`)

- date: {info['date']}
- git commit: {info['commit']}
- CPU: {info['cpu']}, {info['cores']} cores; Python {info['python']}, dask/distributed {distributed.__version__}
- load average (1, 5, 15 min) at start: {info['load']}; at the end: {end_load} (the machine is shared: the
  driver, both workers and other work compete for 2 cores)
- data: a9a (32561 examples, 123 features, 14 values per row), `--split 2` (two byte ranges of the one file);
  lambda = 1e-4, t0 = 1e4, {args.rounds} rounds of exact mini-batch Pegasos (`--sync-every 1`) per k.

Per round (= one iteration of Fig. 2 with batch k): the plain compiled loop (`pegasos.fit`, uniform sampling,
one process), the local shard engine (`--engine local`: the same draws and the same compiled step in one
process), and Dask with 2 local worker processes (`--engine dask --local-workers 2`: one actor call per worker
per round, the violators' rows broadcast). Times exclude cluster start (about 2-3 s) and reading the shards;
the plain loop's column is the whole `fit` divided by its T (max(R, 20000/k)), setup included.

{markdown_table(["k", "plain loop ms/iteration", "local shards ms/round", "Dask ms/round (median)",
                 "Dask p90 ms", "Dask rounds/s", "local shard rounds/s", "Dask model == local"], rows)}

Averaging mode (`--sync-every 100`, k = 64, 30 averages): {avg_s[0]:.3f} s per average of 100 local steps
per shard (p90 {avg_s[1]:.3f} s), i.e. {100 / avg_s[0]:.0f} local steps/s per shard including the exchange of
the dense w (123 features).

Reading: a Dask round costs tens of milliseconds here (one actor round trip per worker on a loaded 2-core
machine; the design note measured a 4-7 ms floor on an idle one) whatever k is, against well under a
millisecond for a local step on a9a, so on data that fit one machine the local engine is always faster; the Dask engine is for shards
that do not fit one machine (or are read in parallel where they are stored), with k in the hundreds or more,
or averaging mode, so that each round carries enough work.
"""
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
