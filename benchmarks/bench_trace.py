#!/usr/bin/env python3
"""What a convergence trace costs: training with and without ``trace=`` (and ``validation=``).

    .venv/bin/python benchmarks/bench_trace.py             # writes benchmarks/RESULTS_trace.md
    .venv/bin/python benchmarks/bench_trace.py --repeats 5

For a9a (validation a9a.t) and w8a at lambda = 1e-4, data in memory, each
setting is trained ``--repeats`` times without a trace and with the default
trace (10 points per decade of t and every epoch end; training terms on all
the examples) or a light one (3 per decade, 1000 sampled examples, no
validation), alternating, and the medians of the wall time of
``pegasos.fit`` are compared.  The trace also reports how long its checks
took (the time ``seconds`` leaves out).  The settings: the automatic
defaults (``pegasos train -l 1e-4``: calibrated t0 and the doubling
schedule, every run traced), ``-T 100000`` (calibrated t0), the paper's
``--paper`` (10 epochs, k = 1) and k = 64 for 10 epochs.  The load average is
recorded before and after: the machine is shared.
"""

import argparse
import os
import sys
import time

from common import REFERENCE_OPTIMA, data_dir, fmt, machine_info, markdown_table

import pegasos
from pegasos.trace import Trace

SETTINGS = [
    ("auto (train -l 1e-4)", {}),
    ("auto -T 100000", {"iterations": 100000}),
    ("--paper", {"preset": "paper"}),
    ("k = 64, 10 epochs", {"batch_size": 64, "epochs": 10}),
]
LIGHT_POINTS, LIGHT_SAMPLE = 3, 1000      # the "light" trace: 3 points per decade, 1000 sampled examples
DATASETS = [("a9a", "a9a/a9a", "a9a/a9a.t"), ("w8a", "w8a/w8a", None)]


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "RESULTS_trace.md"))
    args = parser.parse_args()
    info = machine_info()
    load_before = open("/proc/loadavg").read().split()[:3]
    rows = []
    for name, rel, val_rel in DATASETS:
        d = pegasos.read_svmlight(str(data_dir() / rel))
        val = pegasos.read_svmlight(str(data_dir() / val_rel)) if val_rel else None
        f_star = REFERENCE_OPTIMA.get((rel, 1e-4))
        for label, settings in SETTINGS:
            for kind in ("default", "every point", "light"):
                opts = pegasos.TrainOptions(lam=1e-4, **settings)
                if kind == "light":
                    opts = opts.replace(trace_points=LIGHT_POINTS)
                plain_t, traced_t, check_t, points = [], [], [], 0
                for _ in range(args.repeats):
                    t, _ = timed(lambda: pegasos.fit(d, opts))
                    plain_t.append(t)
                    tr = (Trace() if kind == "default" else Trace(budget=0) if kind == "every point"
                          else Trace(sample=LIGHT_SAMPLE))
                    t, model = timed(lambda: pegasos.fit(d, opts, trace=tr,
                                                         validation=val if kind != "light" else None))
                    traced_t.append(t)
                    last = tr.rows[-1]
                    points = sum(len(r) for _, r, _ in tr.runs)
                    skipped = sum(n for _, _, n in tr.runs)
                    # training time without the checks: the 'seconds' of each run's last point
                    check_t.append(sum(r[-1]["seconds"] for _, r, _ in tr.runs))
                med = lambda xs: sorted(xs)[len(xs) // 2]
                p, q, trained = med(plain_t), med(traced_t), med(check_t)
                sub = None if f_star is None else (last["objective"] - f_star) / f_star
                rows.append([name, label, kind, model.info["iterations"], len(tr.runs), f"{points} ({skipped})",
                             fmt(p), fmt(q),
                             f"{100 * (q - p) / p:+.0f}%", fmt(trained), fmt(sub),
                             fmt(last.get("validation_accuracy"))])
                print(rows[-1], file=sys.stderr)
    load_after = open("/proc/loadavg").read().split()[:3]
    table = markdown_table(["data", "setting", "trace", "T (returned run)", "runs traced", "points (skipped)", "fit s, no trace",
                            "fit s, traced", "trace cost", "training s without the checks (sum of the runs' last seconds)",
                            "(f - f*)/f* at the end", "validation accuracy"], rows)
    text = f"""# Cost of the convergence trace (`benchmarks/bench_trace.py`)

{info['date']}, commit {info['commit']}, {info['cpu']}, {info['cores']} cores (shared), Python {info['python']},
numpy {info['versions']['numpy']}. Load average before: {' '.join(load_before)}; after: {' '.join(load_after)}.
Median of {args.repeats} alternating runs of `pegasos.fit` each, lambda = 1e-4, data in memory; default =
`trace=Trace()`: 10 points per decade and every epoch end, training terms on all examples, and for a9a
`validation=` a9a.t (16281 examples), within the default budget (checks take at most 10% of the
training time: points are skipped while over it); every point = the same with `Trace(budget=0)`; light
= `trace_points=3`, `Trace(sample=1000)`, no validation. "trace cost" = (traced - untraced) / untraced; "(f - f*)/f*" is the last point's
(on the sample for light).
With the automatic defaults every run of the doubling schedule is traced (the trace keeps the returned
run's rows).

{table}

**Reading.** A check evaluates the model on every example it uses (a9a: 32561 training + 16281
validation rows, about 1.5 ms), as much work as an epoch of k = 1 training, while a whole default run
on a9a trains in about 35 ms: checking every point costs 69-172% of `fit`'s time. The default budget
(checks at most 10% of the training time so far, first and last point always) keeps 3-23 points and
costs -5% to +25% of `fit` (the two fixed checks are most of it on runs this short); the light trace
(`--trace-points 3 --trace-sample 1000`, no validation) costs +4% to +40% within the same budget, but
its sample objective is too noisy for suboptimalities below a few percent (it can fall below f*).
The `seconds` column excludes the checks in every case, so the curves of time are right whatever
the trace costs.
"""
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
