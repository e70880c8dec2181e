"""Kernel (system) time of `pegasos train` with the data file's page cache cold and warm, with and
without transparent huge pages.

The reader advises huge pages (MADV_HUGEPAGE) on its large buffers.  Where the kernel's THP
``defrag`` setting is "madvise" (the common default) a fault in such a buffer compacts memory
synchronously when no free 2 MiB block is at hand.  This benchmark separates that cost from the
cost of reading the file from disk: each round drops the page cache (``/proc/sys/vm/drop_caches``,
root only), runs the command cold, then again warm, once with THP as the system has it and once with
``/sys/kernel/mm/transparent_hugepage/enabled`` set to "never" (restored afterwards).  Without the
rights to write those files it times warm runs only and says so.

Usage: python benchmarks/bench_cold_cache.py FILE [--repeats 4] [--lam 1e-4]
(FILE: e.g. the 1M x 50k synthetic set, data_scripts/make_synthetic.py --rows 1000000 --features
50000 --nnz-per-row 50 --seed 0).  Prints a markdown table of medians (wall, user, sys seconds) and
the load average.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

THP = "/sys/kernel/mm/transparent_hugepage/enabled"
DROP = "/proc/sys/vm/drop_caches"


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def thp_mode():
    try:
        with open(THP) as f:
            text = f.read()
    except OSError:
        return None
    return text[text.index("[") + 1:text.index("]")] if "[" in text else None


def write(path, value):
    try:
        with open(path, "w") as f:
            f.write(value)
        return True
    except OSError:
        return False


def drop_caches():
    os.sync()
    return write(DROP, "3")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--lam", type=float, default=1e-4)
    args = parser.parse_args()
    cmd = [sys.executable, "-c", "import sys; from pegasos.cli import main; sys.argv[0] = 'pegasos'; main()",
           "train", "-q", "-l", repr(args.lam), args.file, os.path.join(tempfile.gettempdir(), "bench_cold.model")]
    system_mode = thp_mode()
    modes = [system_mode]
    if system_mode is not None and system_mode != "never" and write(THP, system_mode):
        modes.append("never")
    can_drop = drop_caches()
    rows = {}
    try:
        for _ in range(args.repeats):
            for mode in modes:
                if mode is not None:
                    write(THP, mode)
                states = ("cold", "warm") if can_drop else ("warm",)
                if can_drop:
                    drop_caches()
                else:
                    timed(cmd)              # a first run warms the page cache
                for state in states:
                    rows.setdefault((mode, state), []).append(timed(cmd))
    finally:
        if system_mode is not None:
            write(THP, system_mode)
    load = os.getloadavg()
    print(f"`pegasos train -q -l {args.lam:g} {os.path.basename(args.file)}`, medians of {args.repeats} runs; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; THP as the system has it: {system_mode}")
    if not can_drop:
        print("(no rights to drop the page cache: warm runs only)")
    print()
    print("| THP | page cache | wall s | user s | sys s |")
    print("|---|---|---|---|---|")
    for (mode, state), values in rows.items():
        wall, user, sys_ = (statistics.median(v[i] for v in values) for i in range(3))
        print(f"| {mode} | {state} | {wall:.2f} | {user:.2f} | {sys_:.2f} |")


if __name__ == "__main__":
    main()
