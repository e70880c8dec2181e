"""Training on a file several times the memory the process may use: `pegasos train` under a memory cgroup.

The process runs in a cgroup v1 memory group whose limit (default 1 GiB) also holds its page cache, so
a file larger than the limit cannot stay cached between passes: every pass is a read from disk.  Before
every run the file's pages (and the spill's, which lives in an unnamed file) are dropped from the page
cache with posix_fadvise(DONTNEED) on the files themselves (not drop_caches, which would disturb every
other process on the machine).

Rows of the table, each a whole process in the cgroup, medians of ``--repeats`` runs:

* one read of the file (``cat FILE > /dev/null``) and ``wc -l``: what reading the data costs;
* ``pegasos train DATA`` with no option: the file does not fit, so it streams by itself (a note says so);
* ``pegasos train --stream --tol 0.01``: certified within 1%, the target of three reads, with the
  values in float64 (the default ``--dtype``) and in float32 (a spill of 8 bytes a value, not 12);
* Vowpal Wabbit (``--loss_function hinge --l2 LAMBDA --noconstant --holdout_off``, 1 to 3 passes, a
  ``--cache_file`` for more than one), when a Python with ``vowpalwabbit`` is given (``--vw-python``);
  its input is the same file in VW's text format (``LABEL | i:v ...``), converted once beforehand.

Each model's relative suboptimality (P - f*) / f* uses the certified f* of the in-memory dual solver
(``pegasos train --solver dual --tol 1e-4``, run outside the cgroup, its certified lower bound used);
pegasos' own certified gap is read from the model header.  For VW, a lower bound of its objective is
computed outside the timing: the mean hinge loss of its raw predictions (``-t -r``).

Run as root (joining a cgroup needs it)::

    python benchmarks/bench_out_of_core.py --data /work/synth/s4m.svm --vw-python /tmp/vwenv/bin/python \\
        --output benchmarks/RESULTS_out_of_core.md
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import machine_info, markdown_table, pegasos_command, run_measured

CGROUP_ROOT = Path("/sys/fs/cgroup/memory")


def make_cgroup(name, limit):
    """The cgroup v1 memory group ``name`` with ``limit`` bytes (memory and page cache); its directory."""
    group = CGROUP_ROOT / name
    group.mkdir(exist_ok=True)
    (group / "memory.limit_in_bytes").write_text(str(limit))
    return group


def evict(*paths):
    """Drop the clean pages of ``paths`` from the page cache (only theirs)."""
    for path in paths:
        if path and os.path.exists(path):
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def in_group(group, cmd):
    """``cmd`` run inside the cgroup: a shell that joins it, then execs the command."""
    return ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh", *map(str, cmd)]


def timed(group, cmd, repeats, evicted):
    """Median seconds and peak RSS (MiB) of ``cmd`` in the cgroup; the last run's output."""
    runs = []
    for _ in range(repeats):
        evict(*evicted)
        r = run_measured(in_group(group, cmd))
        if r["returncode"] != 0:
            raise SystemExit(f"{cmd} failed ({r['returncode']}): {r['stderr'][-2000:]}")
        runs.append(r)
    return (statistics.median(r["seconds"] for r in runs), max(r["maxrss_mb"] for r in runs), runs[-1])


def header_of(model):
    """The model file's header entries (up to the weights) as a dict of strings."""
    info = {}
    with open(model) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition(" ")
            if key == "weights":
                break
            info[key] = value
    return info


def certified_optimum(pegasos, data, lam, workdir):
    """f* bracketed by the in-memory dual solver: (lower bound P (1 - gap), P)."""
    model = Path(workdir) / "fstar.model"
    r = subprocess.run([pegasos, "train", "--solver", "dual", "--tol", "1e-4", "-l", repr(lam), data, model],
                       capture_output=True, text=True, check=True)
    objective = float(re.search(r"objective (\S+)", r.stdout).group(1))
    gap = float(header_of(model)["certified_gap"])
    return objective * (1 - gap), objective


def vw_objective_bound(python, vw_data, model, workdir):
    """A lower bound of P at a VW model: the mean hinge loss of its raw predictions (``-t -r``), and its
    train error.  The regulariser only adds to P; VW's weights under its normalized updates are not the
    ones its readable model prints, so ||w||^2 is left out."""
    raw = Path(workdir) / "vw.raw"
    script = f"from vowpalwabbit import Workspace; Workspace('-t -i {model} -d {vw_data} -r {raw} --quiet').finish()"
    subprocess.run([python, "-c", script], check=True)
    hinge, errors, m = 0.0, 0, 0
    with open(vw_data) as labels, open(raw) as preds:
        for line, pred in zip(labels, preds):
            margin = float(line.split(" ", 1)[0]) * float(pred.split()[0])
            hinge += max(0.0, 1.0 - margin)
            errors += margin <= 0
            m += 1
    return hinge / m, errors / m


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="/work/synth/s4m.svm")
    parser.add_argument("--lam", type=float, default=1e-4)
    parser.add_argument("--limit", type=int, default=1 << 30, help="bytes of the cgroup (memory and page cache)")
    parser.add_argument("--cgroup", default="pegasos-ooc")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fstar", type=float, nargs=2, metavar=("LOW", "HIGH"),
                        help="the certified f* bracket, if known (else computed in memory)")
    parser.add_argument("--vw-python", help="a Python with the vowpalwabbit package")
    parser.add_argument("--vw-data", help="DATA in VW's format (converted here when not given)")
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    parser.add_argument("--output")
    parser.add_argument("--no-peers", action="store_true", help="leave out cat and wc")
    args = parser.parse_args()

    pegasos = pegasos_command()
    info = machine_info()
    group = make_cgroup(args.cgroup, args.limit)
    data, lam = args.data, args.lam
    size = os.path.getsize(data)
    low, high = args.fstar or certified_optimum(pegasos, data, lam, args.workdir)
    rows = []

    def add(label, seconds, rss, passes, objective=None, gap=None, note="", bound=""):
        rel = "" if objective is None else f"{bound}{100 * (objective - low) / low:.3f}%"
        rows.append([label, f"{seconds:.1f}", f"{rss:.0f}", passes,
                     "" if objective is None else f"{bound}{objective:.6f}", rel,
                     "" if gap is None else f"{100 * gap:.3f}%", note])

    for label, cmd in () if args.no_peers else (("cat FILE > /dev/null", ["sh", "-c", f"cat {data} > /dev/null"]),
                                                 ("wc -l FILE", ["wc", "-l", data])):
        seconds, rss, _ = timed(group, cmd, args.repeats, [data])
        add(label, seconds, rss, "text 1")
    model = Path(args.workdir) / "ooc.model"
    for label, extra in (("pegasos train (streams by itself)", []),
                         ("pegasos train --stream --tol 0.01", ["--stream", "--tol", "0.01"]),
                         ("pegasos train --stream --tol 0.01 --dtype float32",
                          ["--stream", "--tol", "0.01", "--dtype", "float32"])):
        seconds, rss, run = timed(group, [pegasos, "train", "-l", repr(lam), *extra, data, model], args.repeats,
                                  [data])
        header = header_of(model)
        objective = float(re.search(r"objective (\S+)", run["stdout"]).group(1))
        note = "note: streams by itself" if "streaming it (--stream)" in run["stderr"] else ""
        add(label, seconds, rss, header.get("stream_reads", "text 1 (in memory)"), objective,
            float(header["certified_gap"]), note)
    if args.vw_python:
        vw_data = args.vw_data or str(Path(args.workdir) / (Path(data).stem + ".vw"))
        if not os.path.exists(vw_data):
            subprocess.run(["sh", "-c", f"sed 's/^\\([^ ]*\\) /\\1 | /' {data} > {vw_data}"], check=True)
        for passes in (1, 2, 3):
            vw_model, cache = Path(args.workdir) / "vw.model", Path(args.workdir) / "vw.cache"
            options = (f"-d {vw_data} --loss_function hinge --l2 {lam!r} --noconstant --holdout_off "
                       f"--passes {passes} -f {vw_model} --quiet")
            if passes > 1:
                options += f" --cache_file {cache} -k"
            script = f"from vowpalwabbit import Workspace; Workspace({options!r}).finish()"
            seconds, rss, _ = timed(group, [args.vw_python, "-c", script], args.repeats, [vw_data, str(cache)])
            hinge, error = vw_objective_bound(args.vw_python, vw_data, vw_model, args.workdir)
            reads = "text 1" if passes == 1 else f"text 1, cache {passes - 1}"
            add(f"Vowpal Wabbit, {passes} pass{'es' if passes > 1 else ''}", seconds, rss, reads, hinge,
                note=f"train error {error:.3f}", bound=">= ")

    lines = [
        "# Out of core: `pegasos train` on a file larger than its memory",
        "",
        f"- date: {info['date']}; git commit: {info['commit']}",
        f"- CPU: {info['cpu']}, {info['cores']} cores, {info['memory_gb']} GiB RAM ({info['platform']})",
        f"- load average at start (1, 5, 15 min): {info['load']} (the machine is shared)",
        f"- command: `python benchmarks/bench_out_of_core.py {' '.join(sys.argv[1:])}` (as root)",
        f"- data: {data}, {size / 2 ** 30:.2f} GiB of text; lambda = {lam!r}; certified f* in "
        f"[{low:.6f}, {high:.6f}] (in-memory dual solver, --tol 1e-4, outside the cgroup)",
        f"- every process ran in the cgroup v1 memory group {group} with memory.limit_in_bytes = "
        f"{args.limit / 2 ** 30:.3g} GiB (its page cache counts against it); the file's pages were dropped "
        "from the page cache before each run (posix_fadvise DONTNEED on the file)",
        f"- seconds: median of {args.repeats} whole processes; peak RSS: the largest ru_maxrss of the runs",
        "",
        markdown_table(["run", "seconds", "peak RSS MiB", "reads", "objective", "above f*", "certified gap",
                        ""], rows),
        "",
        "- reads: sequential passes over the text and over pegasos' spill (12 bytes a stored value, 8 with "
        "--dtype float32) or VW's "
        "cache file; above f*: (P - f*) / f* with f*'s certified lower bound; certified gap: (P - D) / P of "
        "the dual bound D the run itself proved; VW: >= the mean hinge loss of its raw predictions (its "
        "objective's loss part)",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        Path(args.output).write_text(text)


if __name__ == "__main__":
    main()
