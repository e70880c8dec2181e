"""Command line: ``pegasos train | train-shards | predict | eval | objective | plot | cv | search | info``.

A thin layer over the Python API: it parses options, shows progress on a
terminal, prints results, and turns :class:`pegasos.errors.PegasosError` into
a one-line ``Error: ...`` with exit status 1.  Heavy modules (NumPy, SciPy,
the compiled core) are imported inside the commands so that ``--help`` is fast.

This module holds the group :func:`main`; each command is a module of this package
(``train``, ``shards`` for train-shards, ``predict``, ``evaluate``, ``objective``, ``plot``, ``selection`` for cv and search,
``info``), over the shared ``common``, ``progress``, ``options``, ``notes``, ``reading`` and ``summary``.
"""

import os
import warnings

# NumPy's BLAS would start a pool of threads at import, which pegasos never uses (its loops are its own)
# and which spin after a call on the processor --jobs gave the run; a user's own setting is kept
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# and NumPy's advice of transparent huge pages on its large arrays: where the system's THP defrag is
# "madvise", a fault in them may compact memory first; on the 1M x 50k set, with the file's page cache
# cold, it cost 0.4 s of a 3.1 s run and gained nothing warm (benchmarks/bench_cold_cache.py)
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

import click

from .common import terminate
from .evaluate import eval_
from .info import info
from .objective import objective
from .options import SHORT_HELP_OPTIONS
from .plot import plot
from .predict import predict
from .selection import cv, search
from .shards import train_shards
from .train import train

__all__ = ["main", "train", "train_shards", "predict", "eval_", "objective", "plot", "cv", "search", "info", "SHORT_HELP_OPTIONS"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pegasos")
def main():
    """Train and use SVMs (linear or kernel, binary, multiclass, regression,
    ranking) with Pegasos, on SVMlight/LIBSVM files.

    \b
      pegasos train -l 1e-4 data.svm                    # writes data.svm.model
      pegasos predict test.svm data.svm.model out.txt
      pegasos eval test.svm data.svm.model
      pegasos objective data.svm data.svm.model
      pegasos plot run.trace.csv -o run.png       # after train --trace run.trace.csv
    """
    # SIGTERM and SIGHUP (the terminal or ssh session closed) unwind like Ctrl-C, so temporary files are
    # removed; a SIGHUP ignored by the caller (nohup) stays ignored
    import signal

    from ..errors import ConvergenceWarning

    # pegasos.fit's warnings are the commands' notes, said from the same outcome (train) or per fold
    warnings.filterwarnings("ignore", category=ConvergenceWarning)

    signal.signal(signal.SIGTERM, terminate)
    if signal.getsignal(signal.SIGHUP) == signal.SIG_DFL:
        signal.signal(signal.SIGHUP, terminate)


for _command in (train, train_shards, predict, eval_, objective, plot, cv, search, info):
    main.add_command(_command)
