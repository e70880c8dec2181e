"""Helpers shared by the benchmark scripts: timing, memory, objective, reporting.

Nothing here depends on pegasos itself, so the peer benchmarks can run (and be
tested) without it.
"""

import datetime
import gc
import importlib
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DATA_SCRIPTS = REPO / "data_scripts"

#: Reference optima f* from the shared data README: (relative path, lambda) -> f*.
#: f(w) = lambda/2 ||w||^2 + mean hinge, labels mapped to +-1 (larger = +1), no bias.
REFERENCE_OPTIMA = {
    ("a9a/a9a", 1e-4): 0.3517618027,
    ("a9a/a9a", 1e-5): 0.3509246501,
    ("a9a/a9a", 1e-3): 0.3565243311,
    ("a9a/a9a", 3.071158748195694e-05): 0.3511503859,
    ("w8a/w8a", 1e-4): 0.1443258917,
    ("ijcnn1/ijcnn1.trn.bz2", 1e-4): 0.1758112740,
}


# ----------------------------------------------------------------- timing / memory

def median_time(fn, repeats):
    """Call ``fn()`` ``repeats`` times; return ``(median seconds, all times, last result)``.

    Garbage is collected before each call so that one run's leftovers do not
    slow the next.
    """
    times, result = [], None
    for _ in range(max(1, repeats)):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


# A tiny launcher run as a separate interpreter: it forks, execs the command
# and reports the command's rusage.  Reading the rusage of a direct child of
# the benchmark process would be wrong: Linux carries the RSS high-water mark
# of the mm that exec replaces into ru_maxrss, so a child started from a big
# parent (vfork or fork) reports at least the parent's size.  The launcher is
# small (about 10 MiB), which bounds that error.
_LAUNCHER = """
import json, os, sys, time
report, cmd = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    except OSError as err:
        sys.stderr.write(f"cannot run {cmd[0]}: {err}\\n")
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(report, "w") as f:
    json.dump(dict(seconds=seconds, maxrss_kb=usage.ru_maxrss, user=usage.ru_utime, system=usage.ru_stime,
                   returncode=os.waitstatus_to_exitcode(status)), f)
"""


def run_measured(cmd, env=None, cwd=None):
    """Run a command; return wall seconds, its peak RSS and its output.

    The command runs under a small launcher interpreter (see ``_LAUNCHER``)
    that reads the command's rusage with ``os.wait4``, so neither
    ``/usr/bin/time`` nor the size of this process affects the figure.
    Returns a dict with ``seconds`` (of the command alone), ``maxrss_mb``
    (MiB), ``user`` and ``system`` (its processor seconds), ``returncode``,
    ``stdout`` and ``stderr`` (text).
    """
    fd, report = tempfile.mkstemp(prefix="rss-", suffix=".json")
    os.close(fd)
    try:
        done = subprocess.run([sys.executable, "-c", _LAUNCHER, report, *map(str, cmd)],
                              capture_output=True, text=True, env=env, cwd=cwd)
        try:
            with open(report) as f:
                info = json.load(f)
        except (OSError, ValueError):  # the launcher itself failed
            info = dict(seconds=float("nan"), maxrss_kb=0, user=float("nan"), system=float("nan"),
                        returncode=done.returncode or 1)
    finally:
        os.remove(report)
    return dict(seconds=info["seconds"], maxrss_mb=info["maxrss_kb"] / 1024.0, user=info["user"],
                system=info["system"], returncode=info["returncode"], stdout=done.stdout, stderr=done.stderr)


def warm_cache(path):
    """Read a file once so that every timed parse sees it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


# ----------------------------------------------------------------- objective

def to_pm1(y):
    """Labels as +-1 floats: the larger of two distinct values becomes +1."""
    y = np.asarray(y, dtype=np.float64)
    values = np.unique(y)
    if values.size > 2:
        raise ValueError(f"more than two labels: {values[:5]}")
    return np.where(y == values.max(), 1.0, -1.0)


def objective(w, X, y_pm, lam, bias=0.0):
    """Primal SVM objective ``lam/2 ||w||^2 + mean(max(0, 1 - y (Xw + b)))``.

    ``w`` may be shorter or longer than ``X.shape[1]`` (a model trained on a
    file whose largest index differs): it is zero-padded or truncated, extra
    weights still counting in ``||w||``.
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    n = X.shape[1]
    w_x = np.zeros(n)
    w_x[: min(n, w.size)] = w[:n]
    margins = y_pm * (X @ w_x + bias)
    hinge = np.maximum(0.0, 1.0 - margins).mean()
    return 0.5 * lam * float(w @ w) + float(hinge)


def relative_gap(f, f_star):
    """``(f - f*) / f*``."""
    return (f - f_star) / f_star


# ----------------------------------------------------------------- environment

def ensure_packages(requirements):
    """Install missing peer packages into the running interpreter's environment.

    ``requirements`` maps an importable module name to its pip requirement,
    e.g. ``{"liblinear": "liblinear-official", "sklearn": "scikit-learn"}``.
    Returns a list of messages; a failed install is reported, not raised.
    """
    messages = []
    for module, requirement in requirements.items():
        if importlib.util.find_spec(module) is not None:
            continue
        print(f"installing {requirement} into {sys.prefix} ...", flush=True)
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", requirement])
        importlib.invalidate_caches()
        if done.returncode == 0 and importlib.util.find_spec(module) is not None:
            messages.append(f"installed {requirement}")
        else:
            messages.append(f"could not install {requirement} (pip exit {done.returncode})")
    return messages


def package_version(dist):
    """Installed version of a distribution, or ``None``."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def data_dir():
    """``$PEGASOS_DATA`` (as the Makefile exports it), else ``../shared/data`` of the repo."""
    env = os.environ.get("PEGASOS_DATA")
    if env:
        path = Path(env)
        if not path.is_absolute() and not path.exists():
            path = REPO / env  # relative to the repository, like the Makefile
        return path.resolve()
    return (REPO.parent / "shared" / "data").resolve()


def pegasos_command():
    """The ``pegasos`` console script next to this interpreter (or on PATH)."""
    beside = Path(sys.executable).parent / "pegasos"
    if beside.exists():
        return str(beside)
    return shutil.which("pegasos")


def import_pegasos():
    """``(module, None)`` or ``(None, error message)``."""
    try:
        return importlib.import_module("pegasos"), None
    except Exception as err:  # report, do not hide, whatever went wrong
        return None, f"{type(err).__name__}: {err}"


def make_synthetic(path, target_bytes, seed=0, features=100_000, nnz=40, extra=()):
    """Write a synthetic data file with data_scripts/make_synthetic.py; return seconds."""
    cmd = [sys.executable, str(DATA_SCRIPTS / "make_synthetic.py"), "--target-bytes",
           str(int(target_bytes)), "--features", str(features), "--nnz-per-row", str(nnz),
           "--seed", str(seed), "-q", *extra, str(path)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def machine_info():
    """Facts for the results header: CPU, cores, date, commit, versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO,
                               capture_output=True, text=True).stdout.strip()
        commit = (commit or "no commit yet") + (" (uncommitted changes)" if dirty else "")
    except OSError:
        commit = "unknown (git not found)"
    versions = {name: package_version(dist) for name, dist in
                [("numpy", "numpy"), ("scipy", "scipy"), ("scikit-learn", "scikit-learn"),
                 ("liblinear-official", "liblinear-official"), ("libsvm-official", "libsvm-official"),
                 ("pegasos", "pegasos")]}
    return dict(
        cpu=cpu,
        cores=os.cpu_count(),
        memory_gb=_memory_gb(),
        date=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        commit=commit,
        python=platform.python_version(),
        versions=versions,
        platform=platform.platform(),
        load=", ".join(f"{x:.2f}" for x in os.getloadavg()),
    )


def _memory_gb():
    """Total RAM in GiB from /proc/meminfo, or None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


# ----------------------------------------------------------------- reporting

def markdown_table(headers, rows):
    """A GitHub markdown table from a header list and rows of cells."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


def fmt(x, digits=3):
    """Compact number formatting for tables (``-`` for None)."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}" if abs(x) < 1e4 else f"{x:,.0f}"
    return str(x)
