"""Model selection: k-fold cross-validation and a search over lambda (and gamma).

:func:`cross_validate` splits the examples into folds (:func:`fold_assignment`:
stratified by class for classification, whole queries for ranking, shuffled
for regression), trains with :func:`pegasos.fit` on all folds but one and
scores the held-out fold with :func:`pegasos.scoring.evaluate`.
:func:`search` runs that (or a fixed validation set) for every point of a
grid; linear binary and regression runs go from the largest lambda to the
smallest, each started from the previous lambda's weights
(:func:`pegasos.linear.fit_linear`'s ``start``).  Folds run in parallel in
processes (``jobs``); every fold is seeded on its own, so the numbers are the
same for any number of processes.

On a cluster (``engine``, a :class:`pegasos.engine_dask.DaskEngine`) the
data are a file that every worker reads (:class:`DataFile`; a shared
filesystem, or the same path on every node): one Dask task per fold, which
reads the file (once per worker process), assigns the folds as here and runs
the fold's whole lambda path (warm starts go along lambda within a fold, so
a fold is the natural task).  The numbers are the ones of the local run.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from . import autotune
from .api import finish_given_length, fit, problem_of
from .defaults import MAX_POINTS
from .errors import DataError, ExampleError, ParameterError, PegasosError
from .examples import Examples, as_examples, rank_pairs
from .labels import BinaryLabels
from .linear import fit_linear
from .scoring import evaluate, objective
from .outcome import record_outcome
from .solver import plan, run_options

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .api import Data
    from .engine_dask import DaskEngine
    from .options import TrainOptions

#: the metrics cross-validation reports for each task (keys of ``pegasos eval --json``)
TASK_METRICS = {
    "binary": ("accuracy", "f1", "roc_auc"),
    "multiclass": ("accuracy", "macro_f1"),
    "regression": ("mse", "r2"),
    "ranking": ("ndcg_at_10",),
}
#: the metric a search ranks by when none is given
DEFAULT_METRIC = {"binary": "accuracy", "multiclass": "accuracy", "regression": "mse", "ranking": "ndcg_at_10"}
#: metrics where smaller is better (losses and errors); every other metric is a score
LOWER_IS_BETTER = frozenset({"mse", "mae", "hinge_loss", "log_loss", "eps_insensitive_loss", "error_rate"})
#: grid points of ``lo:hi`` when no number of points is given
DEFAULT_POINTS = 13


# ------------------------------------------------------------------------------------------ folds --

def _task_of(ex, options):
    """"binary", "multiclass", "regression" or "ranking": what fit() trains on these examples."""
    if options.task != "binary":
        return options.task
    if options.multiclass is not None or np.unique(ex.y).size > 2:
        return "multiclass"
    return "binary"


def fold_assignment(y, folds=5, seed=1, task="binary", qid=None):
    """The fold (0..folds-1) of every example.

    Classification (``task`` "binary" or "multiclass"): stratified — the
    examples of each class, in a random order, are dealt to the folds in
    turn, continuing from class to class, so every class is spread evenly
    (its counts in two folds differ by at most one) and the fold sizes too.
    Ranking: whole queries (all examples with one qid) are dealt to the folds
    in a random order, largest query first into the currently smallest fold,
    so no query is split.  Regression: a random permutation dealt in turn.

    Parameters
    ----------
    y : ndarray (m,), float64
        Label values or targets.
    folds : int >= 2
    seed : int >= 0
        Seed of the PCG64 generator of the random orders.
    task : {"binary", "multiclass", "regression", "ranking"}
    qid : ndarray (m,), int64, or None
        Queries (ranking).

    Returns
    -------
    ndarray (m,), int64

    Raises
    ------
    ParameterError
        Fewer than 2 folds, more folds than examples (queries), a class with a
        single example (no training fold would hold it), ranking without qid.
    """
    y = np.asarray(y, dtype=np.float64)
    m = int(y.shape[0])
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ParameterError(f"the number of folds must be an integer >= 2, got {folds!r}")
    rng = np.random.Generator(np.random.PCG64(seed))
    out = np.empty(m, dtype=np.int64)
    if task == "ranking":
        if qid is None:
            raise ParameterError("cross-validation of a ranking model needs the qid of every example")
        queries, inverse, counts = np.unique(np.asarray(qid), return_inverse=True, return_counts=True)
        if queries.size < folds:
            raise ParameterError(f"{folds} folds need at least {folds} queries, the data have {queries.size}")
        order = rng.permutation(queries.size)
        order = order[np.argsort(-counts[order], kind="stable")]
        sizes = np.zeros(folds, dtype=np.int64)
        fold_of_query = np.empty(queries.size, dtype=np.int64)
        for q in order:
            f = int(np.argmin(sizes))
            fold_of_query[q] = f
            sizes[f] += counts[q]
        out[:] = fold_of_query[inverse.reshape(-1)]
        return out
    if m < folds:
        raise ParameterError(f"{folds} folds need at least {folds} examples, the data have {m}")
    if task in ("binary", "multiclass"):
        fractional = np.flatnonzero(y != np.round(y))
        if fractional.size:
            i = int(fractional[0])
            detail = (f"label {float(y[i])!r} is not an integer: classification needs class labels; for "
                      "real-valued targets use --loss eps-insensitive (regression)")
            raise ExampleError(f"example {i + 1}: {detail}", i, detail)      # the command line names file and line
        classes, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
        lonely = np.flatnonzero(counts < 2)
        if lonely.size:
            raise ParameterError(f"class {classes[lonely[0]]:g} has a single example: cross-validation needs at "
                                 "least 2 of every class (each must be in some training folds)")
        inverse = inverse.reshape(-1)
        dealt = np.concatenate([rng.permutation(np.flatnonzero(inverse == c)) for c in range(classes.size)])
    else:
        dealt = rng.permutation(m)
    out[dealt] = np.arange(m) % folds
    return out


def subset(ex, rows):
    """The examples ``rows`` (int array, in that order) of ``ex`` as a new :class:`Examples` (copies)."""
    rows = np.asarray(rows, dtype=np.int64)
    starts, ends = ex.indptr[rows], ex.indptr[rows + 1]
    lengths = ends - starts
    indptr = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    take = np.repeat(starts - indptr[:-1], lengths) + np.arange(int(indptr[-1]), dtype=np.int64)
    return Examples(indptr, ex.indices[take], ex.data[take], ex.y[rows], ex.n_features,
                    None if ex.qid is None else ex.qid[rows],
                    None if ex.sample_weight is None else ex.sample_weight[rows])


def _load(data):
    if isinstance(data, DataFile):
        return as_examples(data.read())
    if isinstance(data, (str, os.PathLike)):
        from .io import read_svmlight

        data = read_svmlight(os.fspath(data))
    return as_examples(data)


@dataclass(frozen=True)
class DataFile:
    """An SVMlight file to be read where the work runs (a cluster's workers), as
    :func:`pegasos.read_svmlight` reads it (``zero_based``, ``dtype`` "float64" or "float32")."""

    path: str
    zero_based: bool = False
    dtype: str = "float64"

    def read(self):
        """The file's :class:`pegasos.io.SVMLightData`; the last one read in this process is kept
        (the tasks of one search on one worker read it once) while the file is unchanged."""
        from .io import read_svmlight

        st = os.stat(self.path)
        key = (self, st.st_size, st.st_mtime_ns)
        with _READ_LOCK:                  # the threads of one worker process share the entry
            if _READ_CACHE.get("key") != key:
                data = read_svmlight(self.path, zero_based=self.zero_based, dtype=np.dtype(self.dtype))
                _READ_CACHE.clear()
                _READ_CACHE.update(key=key, data=data)
            return _READ_CACHE["data"]


_READ_CACHE: dict = {}
_READ_LOCK = threading.Lock()


def _data_file(data):
    """``data`` as a DataFile for the workers (a file name or a DataFile; arrays are refused)."""
    if isinstance(data, DataFile):
        return data
    if isinstance(data, (str, os.PathLike)):
        return DataFile(os.path.abspath(os.fspath(data)))
    path = getattr(data, "path", None)
    raise ParameterError("with an engine, the data are a file the workers read (a file name or "
                         f"pegasos.selection.DataFile), not {'the data read from ' + path if path else 'arrays'}")


def _describe_task(source, options, folds, seed, validation=False):
    """On a worker: (task, examples) of the file, after the fold assignment's checks (without a validation set)."""
    ex = _load(source)
    task = _task_of(ex, options)
    if not validation:
        fold_assignment(ex.y, folds, seed, task, ex.qid)
    return task, ex.m


def _fold_task(source, fold, folds, seed, options, points, warm, metric_names):
    """On a worker: fold ``fold``'s lambda path (as _run_path), and the fold's sizes."""
    ex = _load(source)
    assignment = fold_assignment(ex.y, folds, seed, _task_of(ex, options), ex.qid)
    train = subset(ex, np.flatnonzero(assignment != fold))
    test = subset(ex, np.flatnonzero(assignment == fold))
    return _run_path(train, test, options, points, warm, metric_names), train.m, test.m


def _validation_task(source, validation, options, points, warm, metric_names):
    """On a worker: the path trained on all of ``source``, scored on ``validation``."""
    ex, test = _load(source), _load(validation)
    if test.n_features != ex.n_features:
        width = max(test.n_features, ex.n_features)
        ex, test = as_examples(ex, width), as_examples(test, width)
    return _run_path(ex, test, options, points, warm, metric_names)


def fit_task(source, options):
    """On a worker: :func:`pegasos.fit` of ``options`` on the file ``source`` (a DataFile); the model."""
    return fit(source.read(), options)


# ------------------------------------------------------------------------------------ one fold run --

def _metric_values(result, names):
    return {name: (None if result.get(name) is None else float(result[name])) for name in names}


def _fit_from(train, options, start):
    """A linear binary or regression run at ``options.lam`` from the weights ``start`` = (w, b).

    The step offset: as given (t0), else calibrated at this lambda
    (:func:`pegasos.autotune.calibrate_step_offset`, as :func:`pegasos.fit`
    does); the epochs: as given, else the doubling rule of
    :func:`pegasos.autotune.train_until_converged`, its run from ``start``.
    """
    labels = BinaryLabels.from_values(train.y, options.allow_one_class) if options.task == "binary" else None
    chosen = plan(problem_of(train, options), options)
    options = run_options(chosen, options)
    if options.length_is_automatic:
        model, _, _ = autotune.train_until_converged(train, options, labels=labels, start=start)
    else:
        t0 = autotune.step_offset_for(train, options, labels) if options.step_is_automatic else options.plan(train.m).t0
        model = fit_linear(train, options.replace(step_offset=t0), labels=labels, start=start)
        if options.finishes_given_length:      # as a cold run of these options is (pegasos.fit)
            model = finish_given_length(model, train, options)
    model.info["warm_start"] = "previous lambda"
    return record_outcome(model, chosen, options)


def warm_startable(options, task):
    """Whether a lambda path can start each run from the previous lambda's weights:
    linear binary classification or regression with a step offset (t0 = 0 forgets any start)."""
    if options.kernel != "linear" or task not in ("binary", "regression"):
        return False
    return options.step_offset != 0


def _run_path(train, test, options, points, warm, metric_names):
    """Train at every point (dicts of TrainOptions fields) on ``train``, score on ``test``.

    Returns one dict per point: the metrics on ``test``, the training
    objective (``objective``, on ``train``) and ``seconds`` of training.
    """
    out = []
    start = None
    if options.loss == "rank" and train.qid is not None and (train.qid >= 0).all() \
            and not rank_pairs(train.qid, train.y)[0].size:
        raise ExampleError("the training part of a fold has no pair of examples with the same qid and different "
                           "labels (the fold's held-out queries hold every pair): fewer folds, or more queries "
                           "with different labels")
    for point in points:
        opts = options.replace(**point)
        t = time.perf_counter()
        model = fit(train, opts) if start is None else _fit_from(train, opts, start)
        seconds = time.perf_counter() - t
        if warm:
            start = (np.asarray(model.w, dtype=np.float64), float(model.bias))
        row = {"seconds": seconds,
               "objective": objective(model, train.chunk, train.y, qid=train.qid,
                                      sample_weight=None if opts.loss == "rank" else train.sample_weight)["objective"],
               "certified_gap": _certified_gap(model)}
        if test is not None:
            row.update(_scores(model, test, metric_names))
        out.append(row)
    return out


def _scores(model, test, metric_names):
    """The metrics of ``model`` on the validation examples ``test``; an example the model cannot score (a label
    it does not have) is reported in the validation file, at its line."""
    try:
        return _metric_values(evaluate(model, test.chunk, test.y, qid=test.qid), metric_names)
    except ExampleError as error:
        if test.source is None:
            raise
        from .io import example_line

        raise error.in_file(test.source.path, example_line(test.source.path, error.example)) from None


def _certified_gap(model):
    """The relative duality gap the run proved for ``model`` (its header's ``certified_gap``), or None
    where no certificate was made (a kernel, Crammer-Singer or plain Pegasos run)."""
    value = getattr(model, "info", {}).get("certified_gap")
    return None if value is None else float(value)


def _fold_job(args):
    """One fold in a worker process: (train, test, options, points, warm, metric names) -> rows or an error."""
    try:
        return _run_path(*args)
    except PegasosError as e:
        return e.__class__.__name__, str(e)


def _run_folds(jobs_args, jobs):
    if jobs is None or jobs <= 1 or len(jobs_args) <= 1:
        results = [_run_path(*a) for a in jobs_args]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(int(jobs), len(jobs_args))) as pool:
            results = list(pool.map(_fold_job, jobs_args))
        for r in results:
            if isinstance(r, tuple):
                raise (DataError if r[0] == "DataError" else ParameterError)(r[1])
    return results


def _check_jobs(jobs):
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ParameterError(f"jobs must be an integer >= 1, got {jobs!r}")


def _summary(values):
    """(mean, sample standard deviation) of the numbers in ``values`` (None entries are skipped)."""
    v = [x for x in values if x is not None]
    if not v:
        return None, None
    mean = float(np.mean(v))
    return mean, (float(np.std(v, ddof=1)) if len(v) > 1 else 0.0)


# ------------------------------------------------------------------------------- cross-validation --

def cross_validate(data: Data | DataFile, options: TrainOptions | None = None, folds: int = 5, seed: int | None = None,
                   jobs: int = 1, engine: DaskEngine | None = None, **settings: Any) -> dict[str, Any]:
    """k-fold cross-validation of :func:`pegasos.fit` with ``options``.

    Fold i trains ``pegasos.fit`` on the examples of the other folds (in their
    order in the data) and evaluates the model on the examples of fold i
    with :func:`pegasos.scoring.evaluate`.

    Parameters
    ----------
    data : as :func:`pegasos.fit` (tuple of arrays, SVMLightData, Examples or a file name)
    options : TrainOptions, optional
        The settings of every fold's run (``**settings`` replace fields).
        ``shuffle_buffer`` is refused (the folds need the data in memory).
    folds : int >= 2
    seed : int >= 0 or None
        Seed of the fold assignment (:func:`fold_assignment`); None: ``options.seed``.
    jobs : int >= 1
        Folds trained at once, each in its own process
        (:class:`concurrent.futures.ProcessPoolExecutor`); the results do not
        depend on it.
    engine : pegasos.engine_dask.DaskEngine or None
        Run every fold as a task on this cluster instead (``jobs`` must be
        1); ``data`` is then a file name or :class:`DataFile` read on the
        workers.  The numbers are those of the local run (``seconds`` aside).

    Returns
    -------
    dict
        ``task``, ``folds``, ``seed``, ``examples``, ``metrics`` (the names:
        binary accuracy, f1, roc_auc; multiclass accuracy, macro_f1;
        regression mse, r2; ranking ndcg_at_10), ``per_fold`` (a list of
        dicts: ``fold`` (1-based), ``train_examples``, ``test_examples``,
        each metric, ``objective`` (training objective of the fold's model),
        ``certified_gap`` (the relative duality gap its run proved, as in
        its header; None where no certificate is made) and ``seconds``
        (training time)), ``mean`` and ``sd`` ({metric: value};
        sd is the sample standard deviation over folds, ddof = 1; a metric
        undefined on a fold, None there, is left out of both).

    Raises
    ------
    ParameterError
        Bad folds, jobs or settings (see :func:`fold_assignment`, :func:`pegasos.fit`).
    """
    if engine is not None:
        options, source, task, m, seed = _prepare_remote(data, options, folds, seed, jobs, settings, engine)
        metric_names = TASK_METRICS[task]
        runs = engine.map(_fold_task, [(source, i, folds, seed, options, [{}], False, metric_names)
                                       for i in range(int(folds))], what="cross-validation")
        sizes = [(r[1], r[2]) for r in runs]
        rows = [r[0][0] for r in runs]
    else:
        options, ex, task, assignment, seed = _prepare(data, options, folds, seed, jobs, settings)
        m = ex.m
        metric_names = TASK_METRICS[task]
        args = _fold_args(ex, assignment, folds, options, [{}], False, metric_names)
        rows = [r[0] for r in _run_folds(args, jobs)]
        sizes = [(a[0].m, a[1].m) for a in args]
    per_fold = []
    for i, (row, (n_train, n_test)) in enumerate(zip(rows, sizes)):
        per_fold.append({"fold": i + 1, "train_examples": n_train, "test_examples": n_test,
                         **{k: row[k] for k in metric_names}, "objective": row["objective"],
                         "certified_gap": row.get("certified_gap"), "seconds": row["seconds"]})
    mean, sd = {}, {}
    for name in metric_names:
        mean[name], sd[name] = _summary([r[name] for r in per_fold])
    return {"task": task, "folds": int(folds), "seed": int(seed), "examples": m, "metrics": list(metric_names),
            "per_fold": per_fold, "mean": mean, "sd": sd}


def _checked(options, seed, jobs, settings):
    from .options import TrainOptions

    if options is None:
        options = TrainOptions(**settings)
    elif settings:
        options = options.replace(**settings)
    options.validate()
    if options.shuffle_buffer is not None:
        raise ParameterError(f"{options.name('shuffle_buffer')} does not apply to cross-validation, whose folds "
                             "are held in memory")
    _check_jobs(jobs)
    seed = options.seed if seed is None else seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"the fold seed must be an integer >= 0, got {seed!r}")
    return options, int(seed)


def _prepare(data, options, folds, seed, jobs, settings):
    options, seed = _checked(options, seed, jobs, settings)
    ex = _load(data)
    task = _task_of(ex, options)
    return options, ex, task, fold_assignment(ex.y, folds, seed, task, ex.qid), seed


def _prepare_remote(data, options, folds, seed, jobs, settings, engine, validation=None):
    """(options, DataFile, task, examples, seed) of a run on ``engine``: one worker reads the file and checks the folds."""
    options, seed = _checked(options, seed, jobs, settings)
    if jobs != 1:
        raise ParameterError("jobs runs folds in local processes: with an engine the cluster's workers run them "
                             "(leave jobs at 1)")
    if validation is None and (isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2):
        raise ParameterError(f"the number of folds must be an integer >= 2, got {folds!r}")
    source = _data_file(data)
    task, m = engine.map(_describe_task, [(source, options, folds, seed, validation is not None)],
                         what="reading the data")[0]
    return options, source, task, m, seed


def _fold_args(ex, assignment, folds, options, points, warm, metric_names):
    args = []
    for i in range(int(folds)):
        train = subset(ex, np.flatnonzero(assignment != i))
        test = subset(ex, np.flatnonzero(assignment == i))
        args.append((train, test, options, points, warm, metric_names))
    return args


# --------------------------------------------------------------------------------------- search --

def round_grid(values, lo, hi):
    """Log-spaced grid values as a user would write them: each rounded to the fewest significant digits,
    at least 4, that keep them distinct, with the ends ``lo`` and ``hi`` as given.  NumPy's logspace
    gives 9.999999999999999e-06 for the 1e-05 of 1e-7:1e-1; the search's table showed 1e-05 and its
    ``best:`` line (and the model) the other value."""
    for digits in range(4, 18):
        rounded = [lo] + [float(f"{v:.{digits}g}") for v in values[1:-1]] + [hi]
        if all(a < b for a, b in zip(rounded[:-1], rounded[1:])):
            return rounded
    return [lo] + list(values[1:-1]) + [hi]


def parse_grid(text, points=None, name="--lambda"):
    """Grid values from ``lo:hi`` (``points`` values spaced evenly in log scale, default
    :data:`DEFAULT_POINTS`), a comma list ``a,b,c``, or one number; all must be finite and > 0.

    Returns
    -------
    list of float, in the order given (``lo:hi``: increasing).

    Raises
    ------
    ParameterError
        Naming ``name``: text that is not such a grid, values <= 0, lo >= hi, points < 2.
    """
    text = str(text).strip()

    def numbers(parts):
        try:
            return [float(p) for p in parts]
        except ValueError:
            raise ParameterError(f"{name}: expected lo:hi or a comma-separated list of numbers, "
                                 f"got {text!r}") from None

    if ":" in text:
        lo, hi = numbers(text.split(":", 1))
        n = DEFAULT_POINTS if points is None else points
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= MAX_POINTS:
            raise ParameterError(f"{name}: a range lo:hi takes 2 to {MAX_POINTS} points, got {n!r}")
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo < hi):
            raise ParameterError(f"{name}: a range lo:hi needs 0 < lo < hi, got {text!r}")
        values = round_grid(np.logspace(math.log10(lo), math.log10(hi), int(n)).tolist(), lo, hi)
    else:
        if points is not None:
            raise ParameterError(f"{name}: --points applies to a range lo:hi, not to a list")
        values = numbers(text.split(","))
    bad = [v for v in values if not (math.isfinite(v) and v > 0)]
    if bad:
        raise ParameterError(f"{name}: every value must be a positive number, got {bad[0]!r}")
    if len(values) > MAX_POINTS:
        raise ParameterError(f"{name}: at most {MAX_POINTS} values, got {len(values)}")
    if len(set(values)) != len(values):
        raise ParameterError(f"{name}: a value is repeated in {text!r}")
    return values


def search(data: Data | DataFile, options: TrainOptions | None = None,
           lambdas: Sequence[float] = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2), gammas: Sequence[float] | None = None, *,
           folds: int = 5, validation: Data | DataFile | None = None, metric: str | None = None,
           seed: int | None = None, jobs: int = 1, warm_start: bool = True, engine: DaskEngine | None = None,
           **settings: Any) -> dict[str, Any]:
    """Choose lambda (and gamma, for kernels) by cross-validation or on a validation set.

    Every grid point (lambda, or each pair (lambda, gamma)) is scored by the
    mean over ``folds`` folds of :func:`cross_validate`'s metrics (same folds
    for every point) or, with ``validation``, by the metrics on those
    examples of the model trained on all of ``data``.

    Warm starts (``warm_start``, linear binary classification and regression,
    a step offset t0 > 0): the lambdas are run from the largest to the
    smallest; the run at each lambda after the first starts from the weights
    of the previous one with a fresh step schedule
    (:func:`pegasos.linear.fit_linear`'s ``start``).  When the options leave
    the step to the data, t0 is calibrated at every lambda, as
    :func:`pegasos.fit` does (:func:`pegasos.autotune.calibrate_step_offset`,
    on a sample: cheap); keeping the first step eta0 = 1/(lambda t0) of the
    largest lambda instead ended 1.6-1.8% above cold runs on w8a at lambda
    <= 1e-6 (calibrating at each: within 0.2%).  On w8a, 13 lambdas from 1e-7
    to 1e-1 with 5 folds took 35 s warm and 589 s cold, the warm objectives
    at most 1.04% above the cold ones (benchmarks/RESULTS_search.md).  When they leave the epochs to
    the data, every run keeps the doubling rule of
    :func:`pegasos.autotune.train_until_converged`, each of its runs from the
    start weights.  Kernel grids, multiclass data and the rank loss start cold.

    Parameters
    ----------
    data : as :func:`pegasos.fit`
    options : TrainOptions, optional (``**settings`` replace fields)
    lambdas : sequence of float > 0
    gammas : sequence of float > 0 or None
        Kernel widths (needs ``options.kernel`` other than "linear").
    folds : int >= 2
        Folds of the cross-validation (ignored with ``validation``).
    validation : as :func:`pegasos.fit`'s data, or None
        Held-out examples to score on instead of cross-validation.
    metric : str or None
        What "best" means: one of the task's metrics (:data:`TASK_METRICS`)
        or another key of ``pegasos eval --json`` (hinge_loss, mae, ...);
        None: :data:`DEFAULT_METRIC`.  Larger is better except for
        :data:`LOWER_IS_BETTER`.
    seed, jobs : as :func:`cross_validate` (jobs: folds at once in processes)
    warm_start : bool
        False runs every point from scratch with :func:`pegasos.fit`.
    engine : pegasos.engine_dask.DaskEngine or None
        Run on this cluster: one task per fold, which runs the fold's whole
        grid in the order above (with a validation set, one task); ``data``
        and ``validation`` are then file names or :class:`DataFile` read on
        the workers, ``jobs`` must be 1.  The numbers are those of the
        local run (``seconds`` aside).

    Returns
    -------
    dict
        ``task``, ``metric``, ``folds`` (None with validation), ``warm_start``
        (whether it was used), ``rows``: one dict per grid point in increasing
        lambda (then gamma) order — ``lam`` (and ``gamma``), ``mean`` and
        ``sd`` ({metric: value}; sd 0 with a validation set), ``objective``
        (mean training objective), ``seconds`` (training time summed over the
        folds), ``best`` (bool); ``best``: the best row's settings
        ({"lam": ..., "gamma": ...}) — of equal rows the one of the largest
        lambda (then the first gamma): the most regularised model, whose
        training is also the best conditioned (a tie between lambda = 3e-7
        and 0.01 on 300 rows chose 3e-7, where the run ends several percent
        above its optimum).

    Raises
    ------
    ParameterError
        An empty or bad grid, gammas for a linear model, an unknown metric,
        or what :func:`cross_validate` raises.
    """
    from .options import TrainOptions

    if options is None:
        options = TrainOptions(**settings)
    elif settings:
        options = options.replace(**settings)
    lambdas = _positive_values(lambdas, "lambdas")
    if gammas is not None:
        gammas = _positive_values(gammas, "gammas")
        if options.kernel == "linear":
            raise ParameterError("a gamma grid needs a kernel (poly, rbf or sigmoid)")
    if engine is not None:
        options, source, task, _, seed = _prepare_remote(data, options, folds, seed, jobs, {}, engine, validation)
        if validation is not None:
            validation, seed = _data_file(validation), None
    elif validation is None:
        options, ex, task, assignment, seed = _prepare(data, options, folds, seed, jobs, {})
    else:
        options.validate()
        _check_jobs(jobs)
        ex = _load(data)
        task = _task_of(ex, options)
        seed = None
    metric, names = _search_metric(metric, task, options)
    warm = bool(warm_start) and gammas is None and warm_startable(options, task)
    lams = sorted(lambdas, reverse=True) if warm else sorted(lambdas)
    points = [{"lam": lam} for lam in lams] if gammas is None else \
        [{"lam": lam, "gamma": g} for lam in lams for g in sorted(gammas)]
    if engine is not None and validation is None:
        per_fold = [r[0] for r in engine.map(_fold_task, [(source, i, folds, seed, options, points, warm, names)
                                                          for i in range(int(folds))], what="the search")]
    elif engine is not None:
        per_fold = engine.map(_validation_task, [(source, validation, options, points, warm, names)],
                              what="the search")
    elif validation is None:
        per_fold = _run_folds(_fold_args(ex, assignment, folds, options, points, warm, names), jobs)
    else:
        test = _load(validation)
        if test.m == 0:
            raise ParameterError("the validation data hold no examples: nothing to score the grid on")
        if test.n_features != ex.n_features:
            width = max(test.n_features, ex.n_features)
            ex = as_examples(ex, width)
            test = as_examples(test, width)
        per_fold = [_run_path(ex, test, options, points, warm, names)]
    rows, best_point = _grid_rows(points, per_fold, names, metric)
    return {"task": task, "metric": metric, "folds": None if validation is not None else int(folds),
            "seed": seed, "warm_start": warm, "metrics": list(names), "rows": rows, "best": best_point}


def _search_metric(metric, task, options):
    """(the metric the search ranks by, the metrics it reports) for ``task``; ParameterError naming
    the option for an unknown metric."""
    names = TASK_METRICS[task]
    metric = DEFAULT_METRIC[task] if metric is None else metric
    known = metric_names(task)
    if task == "binary" and options.loss != "log":
        known = tuple(n for n in known if n != "log_loss")     # eval reports it for log-loss models only
    if metric not in known:
        option = "--metric" if options.spelling == "cli" else "metric="
        raise ParameterError(f"{option}: unknown metric {metric!r} for a {task} model; one of: {', '.join(known)}")
    return metric, tuple(names) + (() if metric in names else (metric,))


def _grid_rows(points, per_fold, names, metric):
    """The search's rows (one per grid point, sorted by lambda then gamma: the folds' mean and sd of
    each metric, mean objective, the worst fold's certified gap, seconds, ``best``) and the best
    point: the best mean ``metric``, ties to the largest lambda.  ParameterError when the metric is
    undefined everywhere."""
    rows = []
    for j, point in enumerate(points):
        runs = [fold[j] for fold in per_fold]
        row = dict(point)
        row["mean"], row["sd"] = {}, {}
        for name in names:
            row["mean"][name], row["sd"][name] = _summary([r[name] for r in runs])
        row["objective"] = float(np.mean([r["objective"] for r in runs]))
        gaps = [r.get("certified_gap") for r in runs]
        row["certified_gap"] = None if None in gaps else max(gaps)       # the worst fold's
        row["seconds"] = float(sum(r["seconds"] for r in runs))
        rows.append(row)
    rows.sort(key=lambda r: (r["lam"], r.get("gamma", 0.0)))
    sign = 1.0 if metric in LOWER_IS_BETTER else -1.0
    scored = [(sign * r["mean"][metric], i) for i, r in enumerate(rows) if r["mean"][metric] is not None]
    if not scored:
        raise ParameterError(f"the metric {metric} is undefined at every grid point")
    best = min(scored, key=lambda s: (s[0], -rows[s[1]]["lam"], s[1]))[1]
    for i, r in enumerate(rows):
        r["best"] = i == best
    return rows, {k: rows[best][k] for k in ("lam", "gamma") if k in rows[best]}


def metric_names(task):
    """Every metric name ``pegasos eval --json`` prints with a number for a ``task`` model."""
    common = {"binary": ("accuracy", "precision", "recall", "f1", "roc_auc", "hinge_loss", "log_loss"),
              "multiclass": ("accuracy", "macro_f1"),
              "regression": ("mse", "mae", "r2", "eps_insensitive_loss"),
              "ranking": ("pairwise_accuracy", "ndcg_at_10")}
    return common[task]


def _positive_values(values, name):
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be numbers, got {values!r}") from None
    if not out:
        raise ParameterError(f"{name}: the grid is empty")
    bad = [v for v in out if not (math.isfinite(v) and v > 0)]
    if bad:
        raise ParameterError(f"{name}: every value must be a positive number, got {bad[0]!r}")
    return out


# --------------------------------------------------------------------------- metrics and models --

def eval_metric_names(model):
    """The numeric metrics ``pegasos eval --json`` prints for ``model`` (what guards may name)."""
    task = getattr(model, "task", "binary")
    names = metric_names(task)
    if task == "binary" and getattr(model, "loss", "hinge") != "log":
        names = tuple(n for n in names if n != "log_loss")
    return names


def _weights_summary(w, bias, base, top, columns=None, n_features=None):
    """``columns``: int (u,), increasing: the feature of each entry of ``w`` (None: w is of every
    feature, ``n_features`` of them)."""
    w = np.asarray(w, dtype=np.float64)
    nonzero = np.flatnonzero(w)
    order = nonzero[np.argsort(-np.abs(w[nonzero]), kind="stable")][:top]
    feature = (lambda j: int(j)) if columns is None else (lambda j: int(columns[j]))
    return {"features": int(w.shape[0] if n_features is None else n_features), "nonzero_weights": int(nonzero.size),
            "norm_w": math.sqrt(math.fsum(w[nonzero] ** 2)), "bias": float(bias),   # exact: alike on any columns
            "top_weights": [{"feature": feature(j) + base, "weight": float(w[j])} for j in order]}


def describe_model(model, top=10):
    """What ``pegasos info`` shows about a model.

    Parameters
    ----------
    model : LinearModel, MulticlassModel or KernelModel
    top : int >= 0
        How many weights of largest |value| to list (per class for multiclass).

    Returns
    -------
    dict
        ``header`` (the model file's header, {key: text}) and, for a linear
        model, ``features``, ``nonzero_weights``, ``norm_w`` (||w||, the bias
        excluded), ``bias`` and ``top_weights`` (a list of {"feature": index
        in the training file's index base (``index_base`` of the header,
        default 1), "weight": value}, largest |weight| first); for a
        multiclass model ``classes``, a list of those per class with its
        ``label``; for a kernel model ``support_vectors`` and ``kernel``.
    """
    info = dict(getattr(model, "info", {}))
    base = 0 if info.get("index_base", "1") == "0" else 1
    out = {"header": info, "kind": getattr(model, "kind", "linear"), "task": getattr(model, "task", "binary")}
    if getattr(model, "kind", "linear") == "kernel":
        out.update(support_vectors=int(model.n_support), kernel=model.kernel)
        return out
    # a model read on its written columns (pegasos.modelfile.load_model(written_columns=True)): their indices
    columns = getattr(model, "columns", None)
    n = None if columns is None else int(info["n_features"])
    if getattr(model, "task", None) == "multiclass":
        out["classes"] = [{"label": label, **_weights_summary(model.W[c], model.biases[c], base, top, columns, n)}
                          for c, label in enumerate(model.class_texts)]
        return out
    out.update(_weights_summary(model.w, model.bias, base, top, columns, n))
    return out
