#!/usr/bin/env python3
"""Run every benchmark side by side and write benchmarks/RESULTS.md.

    .venv/bin/python benchmarks/run_all.py              # what `make bench` runs
    .venv/bin/python benchmarks/run_all.py --quick      # smaller files, 1 run each
    .venv/bin/python benchmarks/run_all.py --only train --repeats 3

Sections:
  parse   parse speed (MB/s) of pegasos, scikit-learn and LIBLINEAR's reader on the
          largest real file under $PEGASOS_DATA and on a ~1 GB synthetic file;
  train   time to reach within 1% of f* on a9a (lambda = 1e-4) for pegasos
          (API and CLI), scikit-learn SGDClassifier and LIBLINEAR -s 3;
  memory  peak RSS of `pegasos predict` on a ~100 MB and a ~1 GB synthetic file;
  kernel  RBF kernel SVM on a9a / a9a.t (the paper's Adult setting): pegasos (also with a
          budget) against LIBSVM (libsvm-official) and scikit-learn's SVC; about 10 minutes.
          `--only kernel` writes benchmarks/RESULTS_kernel.md instead of RESULTS.md.
  multiclass  dna and sector: pegasos one-vs-rest and Crammer-Singer (API and CLI) against
          LIBLINEAR -s 3 / -s 4 and scikit-learn SGDClassifier, test accuracy and training time;
          `--only multiclass` writes benchmarks/RESULTS_multiclass.md (use --repeats 3).
  stream  `pegasos train --stream` (shuffle buffer, binary cache) against in-memory training on
          synthetic files of --stream-bytes sizes (default 1e8,1e9; RESULTS_stream.md uses
          `--only stream --stream-bytes 1e9,1e10`, about 15 minutes): time, peak RSS, objective.
  batch   threads for the mini-batch step: solver time with 1 and 2 threads for k = 1..4096 on
          a9a and a 200000 x 50000 synthetic set, speed-up and crossover k (about 10 minutes;
          needs both cores free: the threads' barriers wait for any descheduled thread).
  synthetic  time to within 1% of f* on a 1M x 50k synthetic set (50 per row,
          lambda 1e-4) for pegasos (API, CLI), scikit-learn SGD (plain, averaged) and LIBLINEAR;
          the whole `pegasos train` process against a liblinear-official user's script on a9a
          and that set; the command's start-up cost (about 6 minutes; --quick: 100k rows).
  compressed  reading .gz, .bz2, .xz (a 200 MB synthetic file) against the
          decompressor alone (Python module and binary) and through a pipe (about 4 minutes).
  scale   the scale curve m = 1e5, 1e6, 1e7 (10 per row, 20k features, 1.26 GB at
          1e7): read time, peak RSS, iterations and time to within 1% of f* (about 6 minutes;
          --quick: m = 1e4, 1e5, 1e6).
  A report of some sections only (--only) that goes to RESULTS.md is merged into it
  (benchmarks/merge_results.py): the other sections' tables are kept.

Peers missing from the running interpreter's environment (liblinear-official,
scikit-learn) are installed with pip first.  Synthetic files live in a temporary
directory that is deleted at the end.
"""

import argparse
import importlib.util
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_batch
import bench_compressed
import bench_kernel
import bench_memory
import bench_multiclass
import bench_parse
import bench_scale
import bench_stream
import bench_synthetic
import bench_train
import merge_results
from common import (DATA_SCRIPTS, REFERENCE_OPTIMA, data_dir, ensure_packages, import_pegasos,
                    machine_info, make_synthetic)

HERE = Path(__file__).resolve().parent
SECTIONS = ("parse", "train", "memory", "kernel", "multiclass", "stream", "batch")
SECTIONS += ("synthetic", "compressed", "scale")


def parse_args(argv=None):
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=None,
                   help="timed runs per measurement, median reported (default 5, --quick 1)")
    p.add_argument("--quick", action="store_true",
                   help="100 MB instead of 1 GB synthetic file (10 MB / 100 MB for memory), "
                   "1 run per measurement")
    p.add_argument("--only", action="append", choices=SECTIONS,
                   help="run only this section (repeatable)")
    p.add_argument("--big-bytes", type=float, default=None,
                   help="size of the big synthetic file (default 1e9, --quick 1e8)")
    p.add_argument("--peer-big-repeats", type=int, default=3,
                   help="runs for scikit-learn and LIBLINEAR readers on the big synthetic "
                   "file (default 3)")
    p.add_argument("--stream-bytes", default=None,
                   help="comma-separated sizes of the stream section's synthetic files "
                   "(default 1e8,1e9; --quick 1e7,1e8)")
    p.add_argument("--data-dir", default=None, help="real data (default $PEGASOS_DATA or ../shared/data)")
    p.add_argument("--tmpdir", default=None, help="where to put the synthetic files")
    p.add_argument("--output", default=None,
                   help="markdown report to write (default RESULTS.md; RESULTS_kernel.md for --only kernel)")
    args = p.parse_args(argv)
    if args.stream_bytes is None:
        args.stream_bytes = "1e7,1e8" if args.quick else "1e8,1e9"
    args.stream_bytes = [float(x) for x in args.stream_bytes.split(",")]
    if args.output is None and args.only == ["stream"]:
        args.output = str(HERE / "RESULTS_stream.md")
    if args.output is None and args.only == ["multiclass"]:
        args.output = str(HERE / "RESULTS_multiclass.md")
    if args.output is None:
        args.output = str(HERE / ("RESULTS_kernel.md" if args.only == ["kernel"] else "RESULTS.md"))
    if args.repeats is None:
        args.repeats = 1 if args.quick else 5
    if args.big_bytes is None:
        args.big_bytes = 1e8 if args.quick else 1e9
    args.sections = args.only or list(SECTIONS)
    return args


def log(message):
    """Progress on stdout, flushed at once."""
    print(message, flush=True)


def section(title, table, notes):
    """Markdown for one section."""
    parts = [f"## {title}", ""]
    if table:
        parts += [table, ""]
    parts += [f"- {n}" for n in notes]
    return "\n".join(parts) + "\n"


def header(info, args, install_notes, pegasos_error):
    """Markdown header with the machine and software facts."""
    versions = ", ".join(f"{k} {v or 'not installed'}" for k, v in info["versions"].items())
    lines = [
        "# pegasos benchmarks",
        "",
        f"- date: {info['date']}",
        f"- git commit: {info['commit']}",
        f"- CPU: {info['cpu']}, {info['cores']} cores, {info['memory_gb']} GiB RAM ({info['platform']})",
        f"- load average at start (1, 5, 15 min): {info['load']} "
        "(other work on the machine slows every tool alike)",
        f"- Python {info['python']}; {versions}",
        f"- command: `{' '.join([Path(sys.executable).name, 'benchmarks/run_all.py'] + sys.argv[1:])}` "
        f"(repeats {args.repeats}{', quick' if args.quick else ''})",
    ]
    lines += [f"- {m}" for m in install_notes]
    if pegasos_error:
        lines.append(f"- **pegasos could not be imported**: {pegasos_error}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Entry point."""
    args = parse_args(argv)
    started = time.perf_counter()
    peers = {"sklearn": "scikit-learn", "liblinear": "liblinear-official"}
    if "kernel" in args.sections:
        peers["libsvm"] = "libsvm-official"
    install_notes = ensure_packages(peers)
    pegasos, pegasos_error = import_pegasos()
    if pegasos_error:
        log(f"WARNING: pegasos not importable ({pegasos_error}); its rows are skipped")
    root = Path(args.data_dir).resolve() if args.data_dir else data_dir()
    info = machine_info()
    have_liblinear = importlib.util.find_spec("liblinear") is not None

    parts = [header(info, args, install_notes, pegasos_error)]
    tmp = Path(tempfile.mkdtemp(prefix="pegasos-bench-", dir=args.tmpdir))
    for sig in (signal.SIGTERM, signal.SIGHUP):     # a timeout or a closed terminal: unwind, so that the
        signal.signal(sig, lambda number, frame: sys.exit(128 + number))   # 1 GB synthetic file goes too
    try:
        big = small = None
        if "parse" in args.sections or "memory" in args.sections:
            big = tmp / "synthetic-big.svm"
            log(f"writing synthetic file of {args.big_bytes / 1e6:.0f} MB ...")
            seconds = make_synthetic(big, args.big_bytes)
            log(f"  {big.stat().st_size / 1e6:.0f} MB in {seconds:.1f} s")
        synth_desc = ("make_synthetic.py --features 100000 --nnz-per-row 40 --seed 0 "
                      "(uniform values with 4 decimals, 1-based)")

        if "parse" in args.sections:
            log("== parse speed")
            real, real_name = bench_parse.largest_real_file(root, tmp)
            files = []
            if real is not None:
                files.append((real_name, real, False))
            files.append((f"synthetic {args.big_bytes / 1e9:g} GB", big, True))
            tools = (["pegasos", "pegasos-2threads"] if pegasos else []) + ["sklearn"] + (["liblinear"] if have_liblinear else [])
            table, notes, _ = bench_parse.run(files, tools, args.repeats, args.peer_big_repeats, log)
            if real is None:
                notes.insert(0, f"real data: {real_name}")
            notes += [f"real file: the largest (uncompressed) data file under {root}",
                      f"synthetic file: {synth_desc}",
                      "each parse in a fresh process; time of the reader call only, file in the "
                      "page cache; peak RSS (ru_maxrss of the process, read by a small fork/exec "
                      "launcher) includes the interpreter and imports"]
            parts.append(section("Parse speed", table, notes))

        if "train" in args.sections:
            a9a = root / "a9a" / "a9a"
            for lam in (1e-4, 3.071158748195694e-05):
                log(f"== training to 1% of f* on a9a, lambda {lam:g}")
                if a9a.exists():
                    table, notes, _ = bench_train.run(a9a, lam, REFERENCE_OPTIMA[("a9a/a9a", lam)],
                                                      args.repeats, pegasos, pegasos_error, log=log)
                else:
                    table, notes = "", [f"{a9a} not found (see data_scripts/get_data.py)"]
                parts.append(section(f"Training time to within 1% of the optimum (a9a, lambda = {lam:g})",
                                     table, notes))

        if "memory" in args.sections:
            log("== peak memory of pegasos predict")
            if pegasos is None:
                table, notes = "", ["skipped: pegasos not importable"]
            else:
                small = tmp / "synthetic-small.svm"
                make_synthetic(small, args.big_bytes / 10)
                table, notes, _ = bench_memory.run(small, big, tmp, log)
                notes.append(f"files: {synth_desc}; the small one is a prefix of the large one")
            parts.append(section("Peak memory of `pegasos predict`", table, notes))

        if "kernel" in args.sections:
            log("== RBF kernel SVM on a9a / a9a.t")
            a9a, a9a_t = root / "a9a" / "a9a", root / "a9a" / "a9a.t"
            if not (a9a.exists() and a9a_t.exists()):
                table, notes = "", [f"{a9a} or {a9a_t} not found (see data_scripts/get_data.py)"]
            else:
                table, notes, _ = bench_kernel.run(a9a, a9a_t, pegasos, pegasos_error, log=log)
            parts.append(section("RBF kernel SVM on a9a (gamma = 0.05, C = 1)", table, notes))

        if "multiclass" in args.sections:
            log("== multiclass on dna and sector")
            table, notes, _ = bench_multiclass.run(root, args.repeats, pegasos, pegasos_error, log=log)
            parts.append(section("Multiclass linear SVM: dna and sector", table, notes))
        if "stream" in args.sections:
            log("== training from files larger than memory (--stream)")
            files = []
            for size in args.stream_bytes:
                path = tmp / f"synthetic-{size:g}.svm"
                log(f"writing synthetic file of {size / 1e6:.0f} MB ...")
                make_synthetic(path, size)
                files.append((f"synthetic {size / 1e9:g} GB", path))
            table, notes, _ = bench_stream.run(files, tmp, log=log)
            for _, path in files:
                path.unlink()
            notes.append(f"files: {synth_desc}; each is a prefix of the next")
            parts.append(section("Training from files larger than memory (`train --stream`)", table, notes))

        if "batch" in args.sections:
            log("== threads for the mini-batch step")
            datasets = []
            a9a = root / "a9a" / "a9a"
            if a9a.exists():
                datasets.append(("a9a", a9a))
            wide = tmp / "synthetic-wide.svm"
            log("writing the wide synthetic set ...")
            subprocess.run([sys.executable, str(DATA_SCRIPTS / "make_synthetic.py"),
                            *bench_batch.synthetic_args(wide)], check=True)
            datasets.append(("synthetic 200000 x 50000, 50 per row", wide))
            if pegasos is None:
                table, notes = "", ["skipped: pegasos not importable"]
            else:
                table, notes, _ = bench_batch.run(datasets, args.repeats, pegasos, log=log)
            wide.unlink()
            parts.append(section("Threads for the mini-batch step (1 vs 2 threads)", table, notes))

        if "synthetic" in args.sections:
            log("== time to 1% of f* on a synthetic set, whole process, start-up")
            if pegasos is None:
                parts.append(section("Synthetic set", "", ["skipped: pegasos not importable"]))
            else:
                for title, table, notes in bench_synthetic.run(tmp, args.repeats, args.quick, pegasos,
                                                               log=log, data_root=root):
                    parts.append(section(title, table, notes))

        if "compressed" in args.sections:
            log("== compressed input against the decompressor")
            table, notes, _ = bench_compressed.run(tmp, args.repeats, args.quick, log=log)
            parts.append(section("Compressed input against the decompressor alone", table, notes))

        if "scale" in args.sections:
            log("== scale curve")
            if pegasos is None:
                parts.append(section("Scale curve", "", ["skipped: pegasos not importable"]))
            else:
                for title, table, notes in bench_scale.run(tmp, args.repeats, args.quick, pegasos, log=log):
                    parts.append(section(title, table, notes))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    minutes = (time.perf_counter() - started) / 60
    report = "\n".join(parts) + f"\n_Total benchmark time: {minutes:.1f} min._\n"
    written = report
    if args.only and Path(args.output).resolve() == (HERE / "RESULTS.md").resolve() and Path(args.output).exists():
        written = merge_results.merge(Path(args.output).read_text(), report)   # keep the other sections
    Path(args.output).write_text(written)
    print()
    print(report)
    log(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
