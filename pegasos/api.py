"""The training entry point: :func:`fit` (data + :class:`TrainOptions` -> model).

:func:`fit` decides, once, which trainer a run needs — binary, multiclass
(one-vs-rest or Crammer-Singer), regression, ranking, kernel, or streaming
through a shuffle buffer — makes the automatic choices of the "auto" preset
(:mod:`pegasos.autotune`), and records where the examples came from in the
model.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from . import autotune
from .data import check_weight_memory, compact_columns, expand_columns
from .errors import DataError, ExampleError, ParameterError
from .examples import as_examples
from .labels import BinaryLabels
from .linear import fit_linear
from .options import OPTION_FIELDS, TrainOptions
from .outcome import record_outcome, warn_diagnostics
from .solver import Problem, Solver, plan, run_options

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias

    from .engine_dask import DaskEngine
    from .examples import Examples
    from .io import SVMLightData
    from .linear import LinearModel
    from .modelfile import Model
    from .trace import Trace

    #: What :func:`fit` trains on: (X, y), (X, y, qid) or (X, y, qid, sample_weight), an SVMLightData
    #: (or its stream.Scan), an examples.Examples, or a file name.
    Data: TypeAlias = "tuple | SVMLightData | Examples | str | os.PathLike[str]"


def fit(data: Data, options: TrainOptions | None = None, *, progress: Callable[[int], object] | None = None,
        on_plan: Callable[[int], object] | None = None, init: LinearModel | str | os.PathLike[str] | None = None,
        trace: Trace | None = None, validation: tuple | SVMLightData | None = None, engine: DaskEngine | None = None,
        **settings: Any) -> Model:
    """Train a model with Pegasos.

    Parameters
    ----------
    data : tuple, SVMLightData, Examples, Scan or str
        ``(X, y)``, ``(X, y, qid)`` or ``(X, y, qid, sample_weight)`` with X a
        scipy.sparse matrix or a dense array of shape (m, n) and y, qid,
        sample_weight arrays of shape (m,); an :class:`pegasos.io.SVMLightData`
        from :func:`pegasos.read_svmlight` or :func:`pegasos.stream.load_cached`
        (the model then records the file name, the label spellings and the
        index base); with ``shuffle_buffer``, a file name or the
        :class:`pegasos.stream.Scan` of one.  A file name without
        ``shuffle_buffer`` is read into memory.
    options : TrainOptions, optional
        The settings (default ``TrainOptions()``).
    progress : callable(int) or None
        Called with the number of iterations done after each block.
    on_plan : callable(int) or None
        Called once, before training, with the number of iterations the run
        will report to ``progress``.
    init : LinearModel, str or path-like, optional
        Resume: a linear binary or regression model (or its file) to go on
        from.  With its resume section (``solver_state``) the run continues
        it exactly: t, the step schedule, the average and the random order
        go on, so T1 iterations and then T2 more from the model give the
        model of one run of T1 + T2.  ``iterations``/``epochs`` are the
        iterations to add (default: one epoch of ``data``); settings not
        given are the model's (:meth:`TrainOptions.from_header`); loss,
        lambda, k, bias, epsilon, projection, averaging, step offset and
        class weights must be the model's (lambda, k, projection, averaging,
        step offset and class weights may change with
        ``restart_schedule=True``); the seed (a new random stream), the
        sampling, the threads and the data may change.  ``data`` may have
        more features than the model (their weights start at 0) or fewer
        (the model keeps its dimension).  A model without the section goes
        on from its weights with t from its header (the average restarts
        over the new iterates; the order is drawn from the seed).
    trace : pegasos.trace.Trace or None
        Record the convergence trace: after ``fit``, ``trace.rows`` holds
        one dict per check point (``options.trace_points`` per decade of t
        and every epoch end; see :mod:`pegasos.trace`) and ``trace.header``
        the model header.  The model is the same with and without it.
    validation : tuple (X, y) or SVMLightData, optional
        Validation examples, evaluated at the check points (trace columns
        ``validation_*``) and, with ``options.early_stop``, for early
        stopping: the run stops once the validation metric has not improved
        for ``early_stop`` checks (with suffix averaging, counted from the
        average's start) and the best model seen is returned (its
        header has ``stopping``, ``best_iteration``, ``best_validation``).
        Columns beyond the training data's are ignored, as in predict; an
        :class:`pegasos.io.SVMLightData` should be read with the training
        file's index base.
    engine : pegasos.engine_dask.DaskEngine or None
        Train on this Dask cluster: ``data`` is then shard files (a file, a
        glob, a directory or ``@list.txt``) read on the workers, and the run
        is exact mini-batch Pegasos over the union of the shards
        (:func:`pegasos.engine_dask.fit_shards`, which also offers model
        averaging and checkpoints); the model is the one of the local shard
        engine, bit for bit.  A batch size k = 1 that was not given as the
        ``batch_size`` keyword (the default, also that of a TrainOptions) is
        the automatic k = ceil(n / 128) of ``pegasos train`` on shards
        without -k (each step is a round trip to every worker: at k = 1 a9a
        would take hours); the header's ``batch_size_rule`` records it.
    **settings
        TrainOptions fields that replace those of ``options``
        (``fit((X, y), lam=1e-4, epochs=5)``).

    Notes
    -----
    Automatic choices (``options.preset == "auto"``, the default): for a
    linear binary classifier or regression, an unset step offset is
    calibrated on a sample (:func:`pegasos.autotune.calibrate_step_offset`)
    and, when neither T nor epochs is given, the epochs of one run double until the
    training objective stops improving by more than ``options.tol``
    (:func:`pegasos.autotune.train_until_converged`), or until the certified
    duality gap is at most ``options.tol_gap``
    (:func:`pegasos.autotune.train_until_certified`); the model header records
    the t0 and T used (and how they were chosen), so its settings retrain it.

    Returns
    -------
    LinearModel, MulticlassModel or KernelModel
        Binary classification for two labels and a classification loss;
        multiclass for more labels or when ``options.multiclass`` is set;
        regression for ``loss="eps-insensitive"``; ranking for ``loss="rank"``
        (needs qid); a kernel model when ``options.kernel`` is not "linear".

    Raises
    ------
    ParameterError
        A setting out of range (named as in ``TrainOptions``), arrays of the
        wrong shape, labels that are not numbers (ExampleError); a trace,
        validation or early stopping for a trainer other than the in-memory
        linear binary and regression ones, or early stopping without
        validation examples.
    DataError
        A file that cannot be read, labels unfit for the task, or a
        validation label that is not one of the two training labels.
    """
    if options is not None and not isinstance(options, TrainOptions):
        raise ParameterError(f"fit takes the data as one argument, (X, y), (X, y, qid) or (X, y, qid, "
                             f"sample_weight): its second is the TrainOptions, not {type(options).__name__}")
    for name in ("qid", "sample_weight"):
        if name in settings:
            raise ParameterError(f"fit takes {name} inside the data: (X, y, qid) or (X, y, qid, sample_weight), "
                                 f"not {name}=")
    unknown = sorted(set(settings) - set(OPTION_FIELDS) - {"spelling", "given"})
    if unknown:
        from difflib import get_close_matches

        close = get_close_matches(unknown[0], OPTION_FIELDS, n=1)
        hint = {"C": " (lambda = 1/(C m): give lam)", "alpha": " (the estimators' alpha is lam here)"}.get(
            unknown[0], f" (did you mean {close[0]}?)" if close else "")
        raise ParameterError(f"fit takes no setting {unknown[0]!r}{hint}; its settings are the fields of "
                             "pegasos.TrainOptions")
    if options is None:
        options = TrainOptions(**settings)
    elif settings:
        options = options.replace(**settings)
    options.validate()
    if engine is not None:
        from .engine_dask import fit_shards


        if not isinstance(data, (str, os.PathLike)):
            raise ParameterError("with an engine, data are shard files read on the workers (a file name, a glob, "
                                 "a directory or @list.txt), not arrays")
        if init is not None or trace is not None or validation is not None:
            raise ParameterError("training on shards takes no init, trace or validation")
        automatic = options.preset == "auto" and options.batch_size == 1 and "batch_size" not in settings
        return warn_diagnostics(fit_shards(os.fspath(data), options, progress=progress, on_plan=on_plan,
                                           cluster=engine, auto_batch=automatic))
    check_checks(options, trace is not None, validation is not None, init is not None)
    checks = (trace, validation) if trace is not None or validation is not None else None
    if init is not None:
        chosen = plan(Problem(m=0, resumed=True), options)
        return warn_diagnostics(record_outcome(_fit_resumed(data, run_options(chosen, options), init, set(settings),
                                                            progress, on_plan), chosen, options))
    if options.shuffle_buffer is not None:
        chosen = plan(Problem(m=0, in_memory=False, streamed=True), options)
        return warn_diagnostics(record_outcome(_fit_streaming(data, options, chosen, progress, on_plan), chosen,
                                               options))
    if isinstance(data, (str, os.PathLike)):
        from .io import read_svmlight

        data = read_svmlight(os.fspath(data))
    ex = as_examples(data)
    chosen = plan(problem_of(ex, options), options)
    try:
        model = record_outcome(_fit_examples(ex, run_options(chosen, options), progress, on_plan, checks), chosen,
                               options)
        if trace is not None:
            trace.header = dict(model.info)
        return warn_diagnostics(_keep_state(model, options))
    except ExampleError as error:
        if getattr(error, "memory_bound", False) and error.example is None and ex.indices.size:
            # name the example that holds the largest feature index
            row = int(np.searchsorted(ex.indptr, int(np.argmax(ex.indices)), side="right") - 1)
            raise ExampleError(f"example {row + 1}: {error.detail}", row, error.detail) from None
        raise


def problem_of(ex, options):
    """The :class:`pegasos.solver.Problem` of examples ``ex`` in memory, for ``options``."""
    pairs_fit = True
    if options.loss == "rank" and options.kernel == "linear":
        from .examples import pairs_fit_in_memory

        pairs_fit = pairs_fit_in_memory(ex)
    return Problem(m=ex.m, pairs_fit=pairs_fit)


def check_checks(options: TrainOptions, trace: bool, validation: bool, init: bool) -> None:
    """The refusals of :func:`fit`'s checks during the run (a trace, validation examples, early stopping)
    that the settings alone decide, before any data are read: early stopping without validation examples,
    and checks with a trainer other than the in-memory linear binary and regression ones (a resumed or
    streamed run, ranking, a kernel, ``multiclass``).  A multiclass run that the data's labels decide
    refuses them in :func:`fit`.

    Raises
    ------
    ParameterError
        Naming the options as the user spelled them.
    """
    if options.early_stop is not None and not validation:
        raise ParameterError(f"{options.name('early_stop')} needs validation examples "
                             f"({options.name('validation')})")
    if not (trace or validation):
        return
    for refused, trainer in ((init, f"a resumed run ({options.name('init')})"),
                             (options.shuffle_buffer is not None, options.name("shuffle_buffer")),
                             (options.task == "ranking", "ranking"), (options.kernel != "linear", "kernels"),
                             (options.multiclass is not None, "multiclass models")):
        if refused:
            _refuse_checks(options, trainer)


def _refuse_checks(options, trainer):
    given = ("--trace, --validation and --early-stop" if options.spelling == "cli"
             else "trace=, validation= and early_stop=")
    raise ParameterError(f"{given} are for linear binary classification and regression trained in memory, "
                         f"not for {trainer}")


def _keep_state(model, options):
    """Mark a linear binary or regression model to write its resume section (``resume_state=True``)."""
    if options.resume_state:
        if getattr(model, "task", None) not in ("binary", "regression") or model.solver_state is None:
            raise ParameterError(f"{options.subject('resume_state')}: the resume section is written for linear binary "
                                 "classifiers and regression only")
        model.save_state = True
    return model


def _fit_examples(ex, options, progress, on_plan, checks=None):
    """fit() on examples in memory: the trainer the task and the labels need."""
    source = ex.source
    if options.task == "binary":
        n_labels = (65 if source.labels_overflow else len(source.distinct_labels)) if source is not None \
            else int(np.unique(ex.y).size)
        if options.multiclass is not None or n_labels > 2:
            if checks is not None:              # (labels that make a multiclass run: check_checks refuses the rest)
                _refuse_checks(options, "multiclass models")
            model = _fit_multiclass(ex, options, n_labels, progress, on_plan)
        else:
            labels = (BinaryLabels.from_data(source, allow_one_class=options.allow_one_class)
                      if source is not None else BinaryLabels.from_values(ex.y, options.allow_one_class))
            if options.kernel == "linear":
                model = _fit_linear_auto(ex, options, labels, progress, on_plan, checks)
            else:
                from .kernel import fit_kernel

                model = fit_kernel(ex, options, labels=labels, progress=progress, on_plan=on_plan)
    else:
        if source is not None and ex.m == 0:
            raise DataError(source.path, "no training examples found (the file is empty or holds only "
                                         "comments and blank lines)")
        model = _fit_linear_auto(ex, options, None, progress, on_plan, checks)
    if options.finishes_given_length:
        model = finish_given_length(model, ex, options)
    return _record_source(model, source)


def finish_given_length(model, ex, options):
    """``model``, trained by a run of a given T or epochs of ``options`` on ``ex``, after the dual finish
    (:mod:`pegasos.finish`, when :attr:`TrainOptions.finishes_given_length`).

    Exactly ``options.finish_passes`` passes (what a finished model's header records: its settings
    retrain it), or passes until certified within ``options.tol`` (or at their bound of work,
    :data:`pegasos.finish.FINISH_UPDATES`).

    Parameters
    ----------
    model : LinearModel or MulticlassModel (one-vs-rest)
    ex : pegasos.examples.Examples
        The examples it was trained on.
    options : TrainOptions

    Returns
    -------
    The better of ``model`` and w(alpha) (per class), with the ``finish`` header entries.

    Raises
    ------
    ParameterError
        The finish does not apply to ``options``, or ``finish_passes`` has the wrong number of entries.
    """
    from .finish import applicable, check_finish_passes, finish_binary, finish_ovr, finish_ranking
    from .linear import second_processor

    name = options.name("finish_passes" if options.finish_passes is not None else "finish")
    why = applicable(options, ex)
    if why is not None:
        raise ParameterError(f"{name}: the dual finish does not apply here: {why}")
    multiclass = model.task == "multiclass"
    crammer_singer = multiclass and model.method == "crammer-singer"
    passes = None
    if options.finish_passes is not None:
        passes = check_finish_passes(options.finish_passes, model.n_classes if multiclass and not crammer_singer
                                     else 1, name)
    tol = None if passes else options.tol
    # on the used columns, as the run was (its weights elsewhere are 0): each pass O(nnz + used columns)
    small, columns = _on_used_columns(ex, vectors=model.n_classes if multiclass else 1)
    part = model if columns is None else _on_columns(model, columns[0], small.n_features)
    if crammer_singer:          # one problem of K classes, from W = 0 (options.finish_unavailable)
        from .finish import finish_crammer_singer

        done = finish_crammer_singer(part, small, passes=None if passes is None else passes[0], tol=tol)
    elif model.task == "ranking":
        # the pair differences are the problem (pegasos.examples.pair_differences): its examples and work
        from .examples import pair_differences

        try:
            pairs = pair_differences(small)
        except ParameterError as e:
            raise ParameterError(f"{name}: {e}") from None
        done = finish_ranking(part, small, pairs=pairs, passes=None if passes is None else passes[0], tol=tol,
                              helper=second_processor(options.n_threads))
    elif multiclass:
        done = finish_ovr(part, small, passes=passes, tol=tol, n_threads=options.n_threads)
    else:
        done = finish_binary(part, small, passes=None if passes is None else passes[0], tol=tol,
                             helper=second_processor(options.n_threads))
    if columns is None:
        return done
    if not multiclass and done.info["finish_kept"] == "pegasos":
        return dataclasses.replace(model, info=done.info)        # its weights and solver state as trained
    return _on_all_columns(done, columns[0], columns[1])


def _on_columns(model, columns, used):
    """A copy of a linear ``model`` on the ``used`` >= len(columns) renumbered ``columns``
    (:func:`_on_used_columns`): its weights there, in order, and no solver state."""
    if model.task == "multiclass":
        W = np.zeros((model.n_classes, used), dtype=np.float64)
        W[:, :columns.shape[0]] = model.W[:, columns]
        return dataclasses.replace(model, W=W)
    w = np.zeros(used, dtype=np.float64)
    w[:columns.shape[0]] = model.w[columns]
    return dataclasses.replace(model, w=w, solver_state=None)


def _fit_multiclass(ex, options, n_labels, progress, on_plan):
    source = ex.source
    if source is not None:
        values = sorted(label.value for label in source.distinct_labels)
        if options.multiclass is None and values == [-1.0, 0.0, 1.0]:
            BinaryLabels.from_data(source)        # SVMlight's label 0 = unlabelled: refuse, naming the line
        if n_labels < 2:
            BinaryLabels.from_data(source)        # no examples / one class: the binary messages
    if options.kernel != "linear":
        raise ParameterError(f"kernels support binary classification only (the data have {n_labels} classes)")
    _check_class_labels(ex, options)
    class_texts = None
    if source is not None and not source.labels_overflow:
        texts = {label.value: label.text for label in source.distinct_labels}
        class_texts = [texts.get(v) or None for v in np.unique(ex.y)]
    options = options.replace(multiclass=options.multiclass or "ovr")
    # the K weight vectors of the result in all n_features must fit; the run is then on the used columns
    ex, columns = _on_used_columns(ex, vectors=int(np.unique(ex.y).size))
    if options.preset == "auto" and (options.step_is_automatic or options.length_is_automatic):
        options.plan(ex.m)            # k <= m and T, checked under the options' own spelling of their names
        if on_plan is not None:
            on_plan(None)
        model = autotune.fit_multiclass_auto(ex, options, class_texts=class_texts, progress=progress)
    else:
        from .multiclass import fit_multiclass

        model = fit_multiclass(ex, options, class_texts=class_texts, progress=progress, on_plan=on_plan)
    if columns is not None:
        model = _on_all_columns(model, columns[0], columns[1])
    return model


def _check_class_labels(ex, options):
    """Multiclass labels must be integers and at most ``options.max_classes`` distinct values:
    real-valued targets would silently become thousands of classes (K weight vectors each)."""
    fractional = np.flatnonzero(ex.y != np.round(ex.y))
    if fractional.size:
        i = int(fractional[0])
        detail = (f"label {float(ex.y[i])!r} is not an integer: classification needs class labels; for real-valued "
                  f"targets use {options.name('loss')} eps-insensitive (regression)")
        raise ExampleError(f"example {i + 1}: {detail}", i, detail)
    classes = int(np.unique(ex.y).size)
    if classes > options.max_classes:
        raise ParameterError(f"the data have {classes} classes, more than {options.name('max_classes')} "
                             f"{options.max_classes} (each class is a weight vector of {ex.n_features} features): "
                             f"raise {options.name('max_classes')}, or for real-valued targets use "
                             f"{options.name('loss')} eps-insensitive")


def _fit_streaming(data, options, chosen, progress, on_plan):
    from .stream import Scan, fit_block_dual, fit_shuffled, first_pass_learner, scan

    scanned = None
    dual = chosen.solver is Solver.DUAL
    if isinstance(data, (str, os.PathLike)):
        data = scanned = scan(os.fspath(data), epsilon=options.epsilon if options.task == "regression" else None,
                              seed=options.seed, learner=first_pass_learner(options) if dual else None)
    if not isinstance(data, Scan):
        raise ParameterError("shuffle_buffer= trains from a file: give its name or its pegasos.stream.scan()")
    if dual:
        try:
            if on_plan is not None:
                on_plan(0)
            return _record_source(fit_block_dual(data, options, progress=progress), data)
        finally:
            if scanned is not None and scanned.spill is not None:
                scanned.spill.close()
    calibrated = (options.preset == "auto" and options.step_is_automatic and data.sample is not None
                  and data.sample.labels.shape[0] > 0 and data.m > 0)
    if calibrated:
        options = options.replace(step_offset=_stream_step_offset(data, options))
    try:
        model = fit_shuffled(data, options, progress=progress, on_plan=on_plan)
    finally:
        if scanned is not None and scanned.spill is not None:
            scanned.spill.close()
    if calibrated:
        model.info["step_offset_rule"] = "calibrated"
    return _record_source(model, data)


def _stream_step_offset(scanned, options):
    """The calibrated t0 of a shuffle-buffer run (:func:`pegasos.autotune.calibrate_step_offset`, as in
    memory) on the first pass's uniform sample of s rows (``scanned.sample``), carried to the file's m
    examples: t0_s sqrt(m / s), the factor the calibration applies when it draws its sample from m rows
    itself.  Without it the stream took the paper's t0 = 0, whose first steps of 1/lambda left 10 epochs
    of 2000 separable rows at 0.291 against an optimum of 0.0305 (0.035 calibrated)."""
    from .examples import Examples
    from .labels import BinaryLabels

    sample = scanned.sample
    s = int(sample.labels.shape[0])
    labels = None
    if options.task == "binary":
        labels = BinaryLabels.from_data(scanned, allow_one_class=options.allow_one_class)
    ex = Examples(indptr=sample.indptr, indices=sample.indices, data=sample.data,
                  y=np.asarray(sample.labels, dtype=np.float64), n_features=int(scanned.n_features))
    t0_s = autotune.step_offset_for(ex, options.replace(sampling="permutation", shuffle_buffer=None), labels)
    return float(t0_s * math.sqrt(scanned.m / s))


def _record_source(model, source):
    if source is not None:
        model.info["index_base"] = "0" if source.zero_based else "1"
        model.info["train_file"] = source.path
    return model


def _validation_arrays(validation, options, labels):
    """The validation examples as the monitor's (indptr, indices, data, y, class weights)."""
    vex = as_examples(validation)
    if vex.m == 0:
        if vex.source is not None:
            raise DataError(vex.source.path, "no validation examples found (the file is empty or holds only "
                                             "comments and blank lines)")
        raise ParameterError("validation= holds no examples")
    if labels is None:
        bad = np.flatnonzero(~np.isfinite(vex.y))
        if bad.size:
            raise ExampleError(f"validation example {bad[0] + 1}: target {vex.y[bad[0]]} is not finite")
        return vex.indptr, vex.indices, vex.data, vex.y, None
    try:
        y = labels.encode(vex.y)
    except ExampleError as error:
        if vex.source is not None:
            from .io import example_line

            path = vex.source.path
            raise error.in_file(path, example_line(path, error.example)) from None
        raise ParameterError(f"validation example {error.example + 1}: {error.detail}") from None
    weight = None
    if options.class_weight:
        weight = np.ones(vex.y.shape[0], dtype=np.float64)
        for label, w in options.class_weight.items():
            weight[vex.y == float(label)] = float(w)
    return vex.indptr, vex.indices, vex.data, y, weight


def _fit_linear_auto(ex, options, labels, progress, on_plan, checks=None):
    """fit_linear, with the step offset and the epochs chosen from the data where the options leave them."""
    monitor = None
    if checks is not None:
        trace, validation = checks
        if labels is None and options.task == "binary":
            labels = BinaryLabels.from_values(ex.y)
        arrays = None if validation is None else _validation_arrays(validation, options, labels)
        if (trace is not None or options.early_stop is not None) and options.iterations != 0:
            # (else nothing would use the checks: no Pegasos iteration to check with T = 0)
            from .trace import Monitor

            monitor = Monitor(options, trace, arrays)
            if options.early_stop is not None:
                options = options.replace(finish="none")      # the best model seen is returned, not finished
    columns = None
    if monitor is None and options.task in ("binary", "regression", "ranking"):
        ex, columns = _on_used_columns(ex)
    model = _fit_linear_chosen(ex, options, labels, progress, on_plan, monitor)
    if columns is not None:
        model = _on_all_columns(model, columns[0], columns[1])
    if monitor is not None and checks[0] is not None:
        checks[0].select_run(int(model.info["iterations"]))
    return model


def _on_used_columns(ex, vectors=1):
    """``ex`` on the columns it uses, renumbered, when they are fewer than half of its n_features
    (hashed or sparse ids with a huge largest index): every dense pass of the run (averaging, the
    objective, copies of the state) is then O(used columns), not O(n_features).  A weight whose
    feature no example has stays exactly 0 under every step (binary, one-vs-rest and Crammer-Singer
    alike), so the run on the used columns is the run in the full dimension restricted to them.
    ``vectors`` weight vectors of the model (1, or K for a multiclass one) must still fit in all
    n_features (ExampleError otherwise).  Returns (examples, None) when that does not pay, else
    (examples, (columns, n_features))."""
    if ex.nnz >= ex.n_features // 2:
        return ex, None
    check_weight_memory(ex.n_features, vectors)       # the model's dense weights in all n_features
    columns, compact = compact_columns(ex.indices)
    if columns.shape[0] >= ex.n_features // 2:
        return ex, None
    used = max(int(columns.shape[0]), 1)
    return dataclasses.replace(ex, indices=compact, n_features=used), (columns, ex.n_features)


def _on_all_columns(model, columns, n_features):
    """The model of a run on the used ``columns`` (:func:`_on_used_columns`) in all ``n_features``:
    its weights (the K rows of a multiclass model's W), and the vectors of its solver state, put back
    at their columns."""
    if getattr(model, "task", None) == "multiclass":
        W = np.zeros((model.n_classes, n_features), dtype=np.float64)
        W[:, columns] = model.W[:, :columns.shape[0]]
        model.W = W
        return model
    w = np.zeros(n_features, dtype=np.float64)
    w[columns] = model.w[:columns.shape[0]]
    model.w = w
    state = getattr(model, "solver_state", None)
    if state is not None:
        used = int(state["n_features"])
        extra = int(state["dim"]) - used                 # 1 with the constant-feature bias
        out = dict(state, n_features=int(n_features), dim=int(n_features + extra))
        for key in ("v", "u"):
            vec = state.get(key)
            if vec is None:
                continue
            vec = np.asarray(vec, dtype=np.float64)
            full = expand_columns(vec, columns, n_features + extra)
            full[n_features:] = vec[used:]
            out[key] = full
        model.solver_state = out
    return model


def _fit_linear_chosen(ex, options, labels, progress, on_plan, monitor):
    automatic = options.preset == "auto" and options.loss != "rank" and options.iterations != 0
    if not automatic or not (options.step_is_automatic or options.length_is_automatic):
        return fit_linear(ex, options, labels=labels, progress=progress, on_plan=on_plan, monitor=monitor)
    options.plan(ex.m)            # k <= m and T, checked under the options' own spelling of their names
    if options.tol_gap is not None:
        if monitor is not None:
            _refuse_checks(options, f"{options.name('tol_gap')}")
        if on_plan is not None:
            on_plan(None)
        return autotune.train_until_certified(ex, options, labels=labels, progress=progress)
    if options.length_is_automatic:
        if on_plan is not None:
            on_plan(None)
        model, epochs, _ = autotune.train_until_converged(ex, options, labels=labels, progress=progress)
        if monitor is not None and epochs > 0:      # (0: the dual passes from w = 0, no Pegasos run to follow)
            # the checks follow the chosen length's run, trained once more under the monitor: the same model
            t0 = float(model.info.get("step_offset", 0.0))
            watched = fit_linear(ex, options.replace(step_offset=t0, epochs=epochs), labels=labels,
                                 progress=progress, monitor=monitor)
            for key in ("epochs", "epochs_trained", "step_offset_rule", "eta0", "stopping", "stop",
                        "certified_gap"):
                if key in model.info:
                    watched.info[key] = model.info[key]
            if "finish" not in model.info:     # a finished model stays: the trace follows its Pegasos part
                model = watched
        if model.info.get("step_offset_rule") == "given" and not options.t0:
            model.info.pop("step_offset_rule")
        return model
    t0 = autotune.step_offset_for(ex, options, labels)
    model = fit_linear(ex, options.replace(step_offset=t0), labels=labels, progress=progress, on_plan=on_plan,
                       monitor=monitor)
    model.info["step_offset_rule"] = "calibrated"
    return model


# settings that must be the model's when resuming; the second group may change with restart_schedule
_RESUME_FIXED = ("loss", "bias", "kernel", "epsilon", "multiclass")
_RESUME_SCHEDULE = ("lam", "batch_size", "projection", "averaging", "step_offset", "schedule", "eta", "class_weight")
_WORDS = {"lam": "lambda", "batch_size": "batch size k", "step_offset": "step offset t0", "schedule": "step rule",
          "eta": "step eta",
          "class_weight": "class weights", "bias": "bias", "epsilon": "epsilon"}
_RESUME_TAKEN = ("lam", "batch_size", "sampling", "projection", "average", "average_from", "seed", "step_offset",
                 "schedule", "eta", "class_weight", "loss", "epsilon", "bias")


def _given(options, keywords):
    """The settings the user gave: ``options.given`` (the command line's), else those that differ from
    the defaults (the bias: one not left to the task's default), and the keywords of fit()."""
    if options.given is not None:
        return set(options.given) | set(keywords)
    default = TrainOptions()
    out = set(keywords)
    if not options.bias_defaulted:
        out.add("bias")
    for field in ("lam", "iterations", "epochs", "batch_size", "sampling", "projection", "average",
                  "average_from", "step_offset", "schedule", "eta", "seed", "loss", "epsilon",
                  "class_weight",
                  "multiclass", "kernel", "gamma", "degree", "coef0", "budget", "shuffle_buffer", "cost"):
        if getattr(options, field) != getattr(default, field):
            out.add(field)
    return out


def _averaging(options):
    if options.average:
        return "all (mean of every iterate)"
    if options.average_from is not None:
        return f"suffix from {options.average_from!r}"
    return "last iterate"


def _model_value(field, base):
    """A setting of the model, in words, for the messages."""
    if field == "averaging":
        return _averaging(base)
    if field == "step_offset":
        return repr(base.t0)
    if field == "class_weight":
        return repr(base.class_weight)
    return repr(getattr(base, field))


def _differs(field, options, base, given):
    if field == "averaging":
        return bool({"average", "average_from"} & given) and _averaging(options) != _averaging(base)
    if field == "step_offset":
        return "step_offset" in given and options.t0 != base.t0
    return field in given and getattr(options, field) != getattr(base, field)


def _fit_resumed(data, options, init, keywords, progress, on_plan):
    """fit(..., init=MODEL): continue (or restart the schedule of) a linear binary or regression run."""
    what, init = _resumed_model(init, options)
    given = _given(options, keywords)
    info, base, restart, run = _resumed_run(options, init, what, given)
    _resume_finish(options, run)        # a finish asked for where it does not apply: before any work
    ex = _resumed_examples(data, init, info, what)
    labels = init.labels if run.task == "binary" else None
    recalibrated = False
    if restart and options.preset == "auto" and "step_offset" not in given and run.loss != "rank" \
            and run.schedule == "pegasos":
        # a new schedule (often for a new lambda) gets its own step offset, as a first run would
        run = run.replace(step_offset=autotune.step_offset_for(ex, run, labels))
        recalibrated = True
    if restart:
        if run.t0 == 0 and run.schedule == "pegasos":
            named = (options.name("restart_schedule") if options.restart_schedule
                     else "--init" if options.spelling == "cli" else "init=")
            raise ParameterError(f"{named}: with step offset t0 = 0 the first step "
                                 "(1 - 1/t) w = 0 forgets the starting weights; give "
                                 f"{options.name('step_offset')}")
        model = fit_linear(ex, run, labels=labels, progress=progress, on_plan=on_plan, start=(init.w, init.bias))
        model.info["warm_start"] = "restart-schedule" if options.restart_schedule else "weights"
    else:
        state = _resumed_state(init, info, run, ex, labels, reseeded="seed" in given and run.seed != base.seed)
        model = fit_linear(ex, run, labels=labels, progress=progress, on_plan=on_plan, init=state)
        if init.solver_state is None:
            model.info["warm_start"] = "weights"
    if recalibrated:
        model.info["step_offset_rule"] = "calibrated"
    if "step_offset_rule" in info and "step_offset_rule" not in model.info:
        model.info["step_offset_rule"] = info["step_offset_rule"]
    finishing = _resume_finish(options, run)
    if finishing is not None:
        model = finish_given_length(_lower_of(model, init, ex), ex, finishing)
    elif model.task == "binary":
        model.resume_objectives = _objectives_of(model, init, ex)[1:]
    model.save_state = run.resume_state is not False and model.task in ("binary", "regression")
    return _record_source(model, ex.source)


def _resumed_model(init, options):
    """(how to name it, the LinearModel) of ``init``: a model or a model file; ParameterError for a
    model that cannot be resumed (kernel, multiclass, ranking) or a streamed run."""
    from .kernel import KernelModel
    from .linear import LinearModel
    from .multiclass import MulticlassModel

    what = "init="
    if isinstance(init, (str, os.PathLike)):
        from .modelfile import load_model

        what = os.fspath(init)
        init = load_model(what)
    if isinstance(init, KernelModel):
        raise ParameterError(f"{what}: resume is for linear models; this is a {init.kernel} kernel model "
                             "(retrain it)")
    if isinstance(init, MulticlassModel):
        raise ParameterError(f"{what}: resume is for linear binary classifiers and regression; this is a "
                             f"{init.n_classes}-class model (retrain it)")
    if not isinstance(init, LinearModel):
        raise ParameterError(f"init= takes a LinearModel or a model file, not {type(init).__name__}")
    if init.task == "ranking":
        raise ParameterError(f"{what}: resume is for linear binary classifiers and regression, not ranking")
    if options.shuffle_buffer is not None:
        raise ParameterError(f"{options.name('shuffle_buffer')} cannot resume a model: train in memory or from a "
                             "cache (--cache)")
    return what, init


def _resumed_run(options, init, what, given):
    """The settings of a resumed run: (the model's header, its options, whether the step schedule
    starts again, the validated options of the run).  ParameterError where a setting the model keeps
    is given another value."""
    info = dict(init.info)
    info.setdefault("loss", init.loss)
    info.setdefault("bias_mode", init.bias_mode)
    info.setdefault("lambda", repr(float(init.lam)))
    if init.epsilon is not None:
        info.setdefault("epsilon", repr(float(init.epsilon)))
    base = TrainOptions.from_header(info)
    # a model of the dual passes from w = 0 (T = 0) ran no Pegasos iteration: it has no step schedule to continue, so its
    # run starts one (with the step offset a first run would get, or the one given), as restart_schedule does
    restart = bool(options.restart_schedule) or (init.solver_state is None and info.get("iterations", "0") == "0")
    for field in _RESUME_FIXED + (() if restart else _RESUME_SCHEDULE):
        if _differs(field, options, base, given):
            spelled = options.name("average_from" if field == "averaging" and "average_from" in given else
                                   "average" if field == "averaging" else field)
            extra = (f" (it may change with {options.name('restart_schedule')}, which starts the step schedule "
                     "again)" if field in _RESUME_SCHEDULE else "")
            raise ParameterError(f"{spelled}: the model {what} was trained with {_WORDS.get(field, field)} "
                                 f"{_model_value(field, base)}; a resumed run keeps it{extra}")
    changes = {f: getattr(base, f) for f in _RESUME_TAKEN}
    for field in _RESUME_TAKEN:
        if field in given or (field in ("average", "average_from") and {"average", "average_from"} & given):
            changes[field] = getattr(options, field)
    if {"average", "average_from"} & given:
        changes["average"] = bool(options.average)
    lengths = {f: getattr(options, f) for f in ("iterations", "epochs") if f in given}
    if not lengths:
        lengths = {"epochs": 1.0}      # one more pass over the data, as partial_fit
    run = options.replace(preset="paper", iterations=lengths.get("iterations"), epochs=lengths.get("epochs"),
                          **changes).validate()
    return info, base, restart, run


def _resumed_examples(data, init, info, what):
    """The examples a resumed run trains on, in at least the model's dimension; DataError for no
    examples, ParameterError for an index base other than the model's."""
    ex = as_examples(_read(data))
    if ex.source is not None and ex.m == 0:
        raise DataError(ex.source.path, "no training examples found (the file is empty or holds only comments "
                                        "and blank lines)")
    base_of_model = info.get("index_base")
    if ex.source is not None and base_of_model in ("0", "1") and base_of_model != ("0" if ex.source.zero_based
                                                                                  else "1"):
        raise ParameterError(f"{what} was trained on {'zero' if base_of_model == '0' else 'one'}-based feature "
                             f"indices and DATA is read {'zero' if ex.source.zero_based else 'one'}-based: the same "
                             "index would be another feature (give --zero-based as MODEL was trained, or not)")
    if ex.n_features < init.n_features:
        ex = dataclasses.replace(ex, n_features=init.n_features)      # the model keeps its dimension
    return ex


def _resumed_state(init, info, run, ex, labels, reseeded):
    """The Pegasos state a resumed run continues: the model's resume section (without its random
    stream when ``reseeded``), or, for a plain model file, its weights at t = its header's
    iterations, the average starting again."""
    from .linear import objective_at_zero, projection_radius2, start_state

    state = init.solver_state
    if state is not None:
        state = dict(state)
        if reseeded:
            for key in ("orders", "rng", "sampling"):        # a new random stream from the given seed
                state.pop(key, None)
        return state
    t = int(info.get("iterations", "0") or 0)
    plan = run.plan(ex.m)
    n = max(ex.n_features, init.n_features)
    y_run = labels.encode(ex.y) if labels is not None else ex.y
    radius2 = projection_radius2(run.loss, run.lam, objective_at_zero(run.loss, y_run, run.epsilon, None))
    state = start_state(init.w, init.bias, n, run, plan, radius2)
    state["t"] = t
    if state["avg_start"]:
        state["avg_start"] = t + plan.avg_start
    return state


def _objectives_of(model, init, ex):
    """(the run's ``model`` with the weights and bias of the resumed ``init``, in its dimension and with
    its own header; f of those weights; f of the run's model), f on ``ex`` at the run's lambda: what the
    finish after a resumed run starts from, and what ``pegasos train`` compares to say when a resumed run
    that was not finished ended above where it began (--finish none: 0.0303 to 0.0557)."""
    from .scoring import objective

    w = np.zeros(model.w.shape[0], dtype=np.float64)
    n = min(w.shape[0], init.w.shape[0])
    w[:n] = init.w[:n]
    start = dataclasses.replace(model, w=w, bias=float(init.bias), solver_state=None, info=dict(model.info))
    f_start, f_run = (float(objective(m, ex.chunk, ex.y, sample_weight=ex.sample_weight)["objective"])
                      for m in (start, model))
    return start, f_start, f_run


def _lower_of(model, init, ex):
    """The start of the dual finish after a resumed run: ``model`` (the run's), or the resumed model's own
    weights where their objective on ``ex`` (at the run's lambda) is lower, so that the finish starts from
    the better point and a resumed model is not left worse than it began: a certified model of 1000 rows
    resumed on them ended 1.58% above f* (its finish from the epoch's weights stopped at its bound) where
    it began 0.15% above.  Its ``warm_start`` then says so."""
    start, f_start, f_run = _objectives_of(model, init, ex)
    if not f_start < f_run:
        return model
    start.info["warm_start"] = (f"{model.info.get('warm_start', 'weights')} (the dual finish started from them: "
                                "their objective was below the resumed run's)")
    return start


def _resume_finish(options, run):
    """The options of the dual finish asked for after a resumed ``run`` (``finish="dual"`` or
    ``finish_passes``; :func:`finish_given_length`), or None; ParameterError where it does not apply."""
    if options.finish != "dual" and options.finish_passes is None:
        return None
    finishing = run.replace(finish="dual" if options.finish == "dual" else None, finish_passes=options.finish_passes)
    why = finishing.finish_unavailable()
    if why is not None:
        given_name = options.name("finish") + " dual" if options.finish == "dual" else options.name("finish_passes")
        raise ParameterError(f"{given_name}: the dual finish does not apply here: {why}")
    return finishing


def _read(data):
    if isinstance(data, (str, os.PathLike)):
        from .io import read_svmlight

        return read_svmlight(os.fspath(data))
    return data
