"""Training on files larger than memory: `pegasos train --stream`.

For each synthetic file (make_synthetic.py, same generator and seed, so the
files differ only in length), one epoch of the fastest setting
(``--epochs 1 --average-from 0.5``, the first step eta0 = 0.01: ``--t0 1/(lambda eta0)``) is run as a whole CLI
process:

* in memory (``--sampling permutation``; only for files below a size limit),
* through the shuffle buffer (``--stream``, N = 100000 examples),
* through the binary cache (``--cache FILE --sampling permutation``): the run
  that builds it and a second run that reuses it.

Each process's peak resident set size is read two ways: ``ru_maxrss`` (all
resident pages, including the pages of the memory-mapped cache, which are
clean page cache that the kernel drops under memory pressure), and the peak
of ``RssAnon`` sampled from /proc every 20 ms (private memory, what the
process really needs).  The objective of every model is computed by
``pegasos objective`` (a streaming pass) and compared with in-memory
training, which made the same number of updates.
"""

import json
import os
import subprocess
import threading
import time
from pathlib import Path

from common import markdown_table, pegasos_command

SETTING = ["--epochs", "1", "--average-from", "0.5", "--t0", repr(1.0 / (1e-4 * 0.01)), "-l", "1e-4"]


def run_sampled(cmd):
    """Run ``cmd``; return seconds, ru_maxrss and the sampled peaks of RssAnon/RssFile (MiB)."""
    peaks = {"RssAnon": 0, "RssFile": 0}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()

    def sample():
        status = f"/proc/{proc.pid}/status"
        while not stop.is_set():
            try:
                with open(status) as f:
                    for line in f:
                        key = line.split(":", 1)[0]
                        if key in peaks:
                            peaks[key] = max(peaks[key], int(line.split()[1]))
            except OSError:
                return
            stop.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    stop.set()
    sampler.join()
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return dict(seconds=seconds, maxrss_mb=usage.ru_maxrss / 1024, anon_mb=peaks["RssAnon"] / 1024,
                file_mb=peaks["RssFile"] / 1024, returncode=proc.returncode, stdout=out, stderr=err)


def _objective(exe, data, model):
    done = subprocess.run([exe, "objective", "--json", "-q", str(data), str(model)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        return None
    return json.loads(done.stdout)["objective"]


def run(files, tmpdir, in_memory_limit=2e9, log=print):
    """Measure the four ways on each file; return ``(table, notes, raw)``.

    ``files`` is a list of (label, Path); files larger than ``in_memory_limit``
    bytes are not trained in memory.
    """
    exe = pegasos_command()
    if exe is None:
        return "", ["pegasos console script not found: stream benchmark skipped"], []
    tmpdir = Path(tmpdir)
    rows, raw, notes = [], [], []
    for label, path in files:
        size = path.stat().st_size
        cache = tmpdir / (path.name + ".cache")
        ways = []
        if size <= in_memory_limit:
            ways.append(("in memory", ["--sampling", "permutation"]))
        ways += [("--stream (shuffle buffer 100000)", ["--stream"]),
                 ("--cache, first run (builds it)", ["--cache", str(cache), "--sampling", "permutation"]),
                 ("--cache, second run (reuses it)", ["--cache", str(cache), "--sampling", "permutation"])]
        results = []
        for name, extra in ways:
            model = tmpdir / "stream.model"
            log(f"  {label}: {name} ...")
            res = run_sampled([exe, "train", "-q", "--no-objective", *SETTING, *extra, str(path), str(model)])
            if res["returncode"] != 0:
                notes.append(f"{label}, {name}: failed: {res['stderr'].strip()[-300:]}")
                continue
            f = _objective(exe, path, model)
            log(f"    {res['seconds']:.1f} s, ru_maxrss {res['maxrss_mb']:.0f} MiB, "
                f"RssAnon {res['anon_mb']:.0f} MiB, objective {f}")
            results.append(dict(file=label, way=name, bytes=size, objective=f, **{
                k: res[k] for k in ("seconds", "maxrss_mb", "anon_mb", "file_mb")}))
        # in-memory training, or the cache (the same model bit for bit) where it was not run
        reference = next((r["objective"] for r in results if r["way"] == "in memory"),
                         next((r["objective"] for r in results if r["way"].startswith("--cache")), None))
        for r in results:
            f = r["objective"]
            diff = "-" if reference is None or f is None else f"{100 * (f / reference - 1):+.3f}%"
            rows.append([label, r["way"], f"{r['seconds']:.1f}", f"{r['maxrss_mb']:.0f}", f"{r['anon_mb']:.0f}",
                         f"{r['file_mb']:.0f}", f"{f:.6f}" if f is not None else "-", diff])
        raw += results
        cache_mb = cache.stat().st_size / 2**20 if cache.exists() else 0
        notes.append(f"{label}: {size / 1e9:.2f} GB of text, cache file {cache_mb:.0f} MiB")
        if cache.exists():
            cache.unlink()
    by = {(r["file"], r["way"]): r for r in raw}
    labels = [label for label, _ in files]
    if len(labels) >= 2:
        a, b = labels[0], labels[-1]
        for way in ("--stream (shuffle buffer 100000)", "--cache, second run (reuses it)"):
            if (a, way) in by and (b, way) in by:
                notes.append(f"{way}: private memory (RssAnon) {by[(b, way)]['anon_mb']:.0f} MiB on {b} vs "
                             f"{by[(a, way)]['anon_mb']:.0f} MiB on {a} "
                             f"({by[(b, way)]['bytes'] / by[(a, way)]['bytes']:.0f}x the data)")
    notes += ["setting: `pegasos train " + " ".join(SETTING) + "` (1 epoch, the same number of updates in "
              "every way); objective by `pegasos objective`; difference relative to in-memory training "
              "(or to the cache, which gives the in-memory model bit for bit, where in-memory was not run)",
              "ru_maxrss counts the mapped cache pages the process touched (page cache, dropped by the kernel "
              "under memory pressure); RssAnon (sampled every 20 ms) is the process's private memory",
              "one run per way; the cache's first run includes parsing the text and writing the cache"]
    headers = ["file", "way", "seconds", "ru_maxrss MiB", "RssAnon MiB", "RssFile MiB", "objective", "vs memory"]
    return markdown_table(headers, rows), notes, raw
