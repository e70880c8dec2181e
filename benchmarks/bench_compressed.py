"""Reading compressed input against the decompressor alone.

Compressed input is limited by the decompressor; this measures by how much pegasos adds to it.
A synthetic file (about 200 MB of text, 50 non-zeros a row, 50,000 features) is
compressed with gzip (-6), bzip2 (-9) and xz (-1, two threads; xz's default -6 takes
minutes for 200 MB on this machine and decompresses at about the same speed), and each
compressed file is read

* by ``pegasos.io.read_svmlight(path)`` (decompression and parsing in one thread, in
  blocks of 4 MiB of text),
* by ``pegasos.io.read_svmlight("-")`` fed by the decompressor binary through a pipe
  (``xz -dc FILE | ...``: the decompressor runs on the other core),
* by the decompressor alone: Python's gzip / bz2 / lzma module reading the file in
  4 MiB blocks that are thrown away (what pegasos's reader asks of it), and the
  ``gzip -dc`` / ``bzip2 -dc`` / ``xz -dc`` binaries writing to /dev/null.

The plain file parsed by read_svmlight gives the parser's own share.  Every read runs
in a fresh process; Python readers time only the read call (imports done before),
binaries are timed from outside.  MB/s are MB (10^6 bytes) of uncompressed text per
second.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import make_synthetic, markdown_table, run_measured, warm_cache

BYTES, QUICK_BYTES = 2e8, 5e7
FEATURES, NNZ = 50_000, 50

#: suffix -> (binary, compression options, Python module for the fallback and the reads)
FORMATS = {
    "gz": ("gzip", ["-6"], "gzip"),
    "bz2": ("bzip2", ["-9"], "bz2"),
    "xz": ("xz", ["-1", "-T2"], "lzma"),
}

_READ = """
import json, sys, time
import pegasos.io
from pegasos import _svmlight  # noqa: F401  (imports outside the timing)
start = time.perf_counter()
d = pegasos.io.read_svmlight(sys.argv[1])
print(json.dumps(dict(seconds=time.perf_counter() - start, rows=d.n_examples, nnz=d.nnz)))
"""

_DECOMPRESS = """
import bz2, gzip, json, lzma, sys, time
opener = {"gz": gzip.open, "bz2": bz2.open, "xz": lzma.open}[sys.argv[1]]
start = time.perf_counter()
size = 0
with opener(sys.argv[2], "rb") as f:
    while True:
        block = f.read(4 << 20)
        if not block:
            break
        size += len(block)
print(json.dumps(dict(seconds=time.perf_counter() - start, bytes=size)))
"""


def compress(plain, log):
    """Write plain.gz, plain.bz2, plain.xz; return {suffix: (path, how, seconds)}.

    gzip and bzip2 run side by side (one core each), then xz with two threads.
    A missing binary falls back to the Python module at the same level.
    """
    out, procs = {}, []

    def start(suffix):
        binary, opts, module = FORMATS[suffix]
        target = Path(f"{plain}.{suffix}")
        exe = shutil.which(binary)
        if exe:
            cmd = [exe, *opts, "-c", str(plain)]
            how = f"{binary} {' '.join(opts)}"
        else:
            level = {"gz": "compresslevel=6", "bz2": "compresslevel=9", "xz": "preset=1"}[suffix]
            code = (f"import {module}, shutil, sys; src = open(sys.argv[1], 'rb'); "
                    f"dst = {module}.open(sys.argv[2], 'wb', {level}); shutil.copyfileobj(src, dst, 1 << 22); "
                    "dst.close()")
            cmd = [sys.executable, "-c", code, str(plain), str(target)]
            how = f"Python {module} ({level})"
        f = open(target, "wb") if exe else None
        proc = subprocess.Popen(cmd, stdout=f if f else subprocess.DEVNULL)
        return suffix, target, how, proc, f, time.perf_counter()

    def finish(item):
        suffix, target, how, proc, f, t0 = item
        if proc.wait() != 0:
            raise RuntimeError(f"compressing {plain} to .{suffix} failed")
        if f:
            f.close()
        out[suffix] = (target, how, time.perf_counter() - t0)
        log(f"    .{suffix}: {target.stat().st_size / 1e6:.0f} MB ({how}) in {out[suffix][2]:.0f} s")

    procs = [start("gz"), start("bz2")]
    for item in procs:
        finish(item)
    finish(start("xz"))
    return out


def measure(cmd, from_outside=False):
    """One run: seconds (the worker's own figure, or the wall time of the command
    when ``from_outside``) and the worker's JSON (or {})."""
    run = run_measured(cmd)
    if run["returncode"] != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))[:200]} failed: {run['stderr'].strip()[-300:]}")
    if from_outside:
        return run["seconds"], {}
    info = json.loads(run["stdout"].strip().splitlines()[-1])
    return info["seconds"], info


def interleaved(jobs, repeats, log):
    """Run every job once per round, ``repeats`` rounds, so that other work on the
    machine falls on all of them alike.  ``jobs`` maps a key to (cmd, from_outside).
    Returns {key: (median seconds, last JSON)}."""
    times = {key: [] for key in jobs}
    info = {}
    for r in range(repeats):
        log(f"    round {r + 1}/{repeats} ...")
        for key, (cmd, outside) in jobs.items():
            seconds, info[key] = measure(cmd, outside)
            times[key].append(seconds)
    return {key: (statistics.median(times[key]), info[key]) for key in jobs}


def run(tmpdir, repeats, quick, log=print):
    """Measure; returns ``(markdown table, notes, raw rows)``."""
    tmpdir = Path(tmpdir)
    repeats = min(repeats, 3)
    target = QUICK_BYTES if quick else BYTES
    plain = tmpdir / "compressed-input.svm"
    log(f"  writing a {target / 1e6:.0f} MB synthetic file and compressing it ...")
    make_synthetic(plain, target, features=FEATURES, nnz=NNZ)
    size = plain.stat().st_size
    mb = size / 1e6
    files = compress(plain, log)
    load_avg = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.perf_counter()

    rows, raw = [], []

    def add(fmt, reader, seconds, compressed_mb, ref=None):
        raw.append(dict(format=fmt, reader=reader, seconds=seconds))
        rows.append([fmt, f"{compressed_mb:.0f}", reader, f"{seconds:.2f}", f"{mb / seconds:.0f}",
                     ref or ""])

    jobs = {("plain", "read"): ([sys.executable, "-c", _READ, str(plain)], False)}
    for suffix, (path, _, _) in files.items():
        exe = shutil.which(FORMATS[suffix][0])
        jobs[(suffix, "module")] = ([sys.executable, "-c", _DECOMPRESS, suffix, str(path)], False)
        if exe:
            jobs[(suffix, "binary")] = (["sh", "-c", f'"{exe}" -dc "$1" > /dev/null', "sh", str(path)], True)
        jobs[(suffix, "read")] = ([sys.executable, "-c", _READ, str(path)], False)
        if exe:
            jobs[(suffix, "pipe")] = (["sh", "-c", f'"{exe}" -dc "$1" | "{sys.executable}" -c "$2" -', "sh",
                                       str(path), _READ], False)
    for path in [plain] + [f[0] for f in files.values()]:
        warm_cache(path)
    log(f"  {len(jobs)} readers, {repeats} interleaved rounds ...")
    res = interleaved(jobs, repeats, log)
    parse_s, info = res[("plain", "read")]
    shape = (info["rows"], info["nnz"])
    add("plain", "pegasos read_svmlight (parsing only)", parse_s, mb)

    summary = []
    for suffix, (path, how, _) in files.items():
        binary, _, module = FORMATS[suffix]
        cmb = path.stat().st_size / 1e6
        py_s, py_info = res[(suffix, "module")]
        if py_info["bytes"] != size:
            raise RuntimeError(f"{path}: {module} gave {py_info['bytes']} bytes, not {size}")
        bin_s = res[(suffix, "binary")][0] if (suffix, "binary") in res else None
        peg_s, info = res[(suffix, "read")]
        if (info["rows"], info["nnz"]) != shape:
            raise RuntimeError(f"{path}: read {info['rows']} rows, nnz {info['nnz']}; plain file {shape}")
        pipe_s = None
        if (suffix, "pipe") in res:
            pipe_s, info = res[(suffix, "pipe")]
            if (info["rows"], info["nnz"]) != shape:
                raise RuntimeError(f"{path} through a pipe: read {info['rows']} rows; plain file {shape}")

        add(suffix, f"Python {module} module alone (4 MiB reads, discarded)", py_s, cmb)
        if bin_s is not None:
            add(suffix, f"`{binary} -dc > /dev/null`", bin_s, cmb)
        add(suffix, f"pegasos read_svmlight('file.{suffix}')", peg_s, cmb,
            f"{peg_s / py_s:.2f} x module" + (f", {peg_s / bin_s:.2f} x binary" if bin_s else ""))
        if pipe_s is not None:
            add(suffix, f"`{binary} -dc file.{suffix} |` pegasos read_svmlight('-')", pipe_s, cmb,
                f"{pipe_s / py_s:.2f} x module, {pipe_s / bin_s:.2f} x binary")
        ideal = max(py_s, parse_s)
        summary.append(
            f".{suffix} ({how}, {cmb:.0f} MB, ratio {size / path.stat().st_size:.1f}): read_svmlight takes "
            f"{peg_s:.2f} s = {peg_s / py_s:.2f} x the {module} module alone ({py_s:.2f} s)"
            + (f" and {peg_s / bin_s:.2f} x `{binary} -dc` ({bin_s:.2f} s)" if bin_s else "")
            + f"; the reader adds {peg_s - py_s:+.2f} s to the decompressor, parsing the plain file "
            f"takes {parse_s:.2f} s (decompressing then parsing, one after the other: {py_s + parse_s:.2f} s)"
            + (f"; through a pipe from `{binary} -dc` (on the other core): {pipe_s:.2f} s, "
               f"{pipe_s / peg_s:.2f} x the direct read (max(decompressor, parser) = {ideal:.2f} s)"
               if pipe_s else ""))
    minutes = (time.perf_counter() - started) / 60
    notes = summary + [
        f"file: make_synthetic.py --target-bytes {target:g} --features {FEATURES} --nnz-per-row {NNZ} "
        f"--seed 0: {mb:.0f} MB of text, {shape[0]} rows, nnz {shape[1]}",
        "MB/s: uncompressed MB per second; median of "
        f"{repeats} runs, each in a fresh process, the readers taking turns (one run of each per round), "
        "files in the page cache; Python readers time "
        "the read call alone (imports before the clock starts), binaries and pipes: the pipe's reader "
        "call (the binary starts with it), binaries alone: the process timed from outside",
        f"load average at the start of the measurements: {load_avg} (2 cores); measurements took "
        f"{minutes:.1f} min after writing and compressing the files",
    ]
    for path, _, _ in files.values():
        path.unlink()
    plain.unlink()
    headers = ["format", "file MB", "reader", "median s", "MB/s", "pegasos / decompressor"]
    return markdown_table(headers, rows), notes, raw
