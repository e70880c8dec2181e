"""The kernel's cost of a first write to fresh memory, by the ways of faulting it in.

A large read spends most of its system time on the first write to each page of its new arrays: the
kernel finds and zeroes a page (and on a virtual machine whose balloon reports free pages to the host,
the host may have to back it again).  Each measurement is a fresh process that maps
--mib MiB of anonymous memory and faults it in one way:

* ``4k``: small pages (``MADV_NOHUGEPAGE``), a write to each page;
* ``4k, 2 threads``: the same, each half by its own thread;
* ``huge``: transparent huge pages (``MADV_HUGEPAGE``), a write to each page;
* ``populate``: small pages faulted in by one ``madvise(MADV_POPULATE_WRITE)`` (Linux 5.14), what the
  reader's second thread does (``Parser.populate``);
* ``4k, again``: small pages, written after the same process wrote and freed as much a moment before
  (memory the host still backs).

The ways take turns, with --pause seconds between runs (free pages are reported to the host about
two seconds after they are freed), --repeats rounds; medians of wall, user and system seconds and the
load average are printed.

Usage: python benchmarks/bench_first_touch.py [--mib 2048] [--repeats 3] [--pause 4]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, mmap, resource, sys, threading, time
import numpy as np
n, way = int(sys.argv[1]) << 20, sys.argv[2]
page = mmap.PAGESIZE

def fresh(advice):
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(advice)
    return m

def write(m, lo, hi):
    np.frombuffer(m, np.uint8)[lo:hi:page] = 1      # one byte a page (NumPy lets go of the GIL)

if way == "4k, again":
    m = fresh(mmap.MADV_NOHUGEPAGE)
    write(m, 0, n)
    m.close()
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
if way in ("4k", "4k, again"):
    write(fresh(mmap.MADV_NOHUGEPAGE), 0, n)
elif way == "4k, 2 threads":
    m = fresh(mmap.MADV_NOHUGEPAGE)
    ts = [threading.Thread(target=write, args=(m, 0, n // 2)), threading.Thread(target=write, args=(m, n // 2, n))]
    [t.start() for t in ts]
    [t.join() for t in ts]
elif way == "huge":
    write(fresh(mmap.MADV_HUGEPAGE), 0, n)
elif way == "populate":
    fresh(mmap.MADV_NOHUGEPAGE).madvise(23)      # MADV_POPULATE_WRITE
wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(dict(wall=wall, user=r1.ru_utime - r0.ru_utime, sys=r1.ru_stime - r0.ru_stime)))
"""
WAYS = ["4k", "4k, 2 threads", "huge", "populate", "4k, again"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pause", type=float, default=4.0)
    args = ap.parse_args()
    runs, loads = {w: [] for w in WAYS}, []
    for r in range(args.repeats):
        for way in WAYS[r % len(WAYS):] + WAYS[:r % len(WAYS)]:
            time.sleep(args.pause)
            loads.append(os.getloadavg()[0])
            out = subprocess.run([sys.executable, "-c", CHILD, str(args.mib), way], capture_output=True, text=True,
                                 check=True).stdout
            runs[way].append(json.loads(out))
    with open("/sys/kernel/mm/transparent_hugepage/defrag") as f:
        defrag = f.read().strip()
    print(f"{args.mib} MiB a run, {args.repeats} rounds, load average (1 min) {min(loads):.2f}-{max(loads):.2f}; "
          f"THP defrag: {defrag}")
    print("| way | wall s | user s | sys s | wall s / GiB |")
    print("|---|---|---|---|---|")
    for way in WAYS:
        w, u, s = (statistics.median(x[k] for x in runs[way]) for k in ("wall", "user", "sys"))
        print(f"| {way} | {w:.2f} | {u:.2f} | {s:.2f} | {w * 1024 / args.mib:.2f} |")


if __name__ == "__main__":
    main()
