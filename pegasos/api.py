"""The training entry point: :func:`fit` (data + :class:`TrainOptions` -> model).

:func:`fit` decides, once, which trainer a run needs — binary, multiclass
(one-vs-rest or Crammer-Singer), regression, ranking, kernel, or streaming
through a shuffle buffer — makes the automatic choices of the "auto" preset
(:mod:`pegasos.autotune`), and records where the examples came from in the
model.
"""

import os

import numpy as np

from . import autotune
from .errors import DataError, ExampleError, ParameterError
from .examples import as_examples
from .kernel import fit_kernel
from .labels import BinaryLabels
from .linear import fit_linear
from .multiclass import fit_multiclass
from .options import TrainOptions
from .trace import Monitor


def fit(data, options=None, *, progress=None, on_plan=None, trace=None, validation=None, **settings):
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
    trace : pegasos.trace.Trace or None
        Record the convergence trace: after ``fit``, ``trace.rows`` holds
        one dict per check point (``options.trace_points`` per decade of t
        and every epoch end; see :mod:`pegasos.trace`) and ``trace.header``
        the model header.  The model is the same with and without it.
    validation : tuple (X, y) or SVMLightData, optional
        Validation examples, evaluated at the check points (trace columns
        ``validation_*``) and, with ``options.early_stop``, for early
        stopping: the run stops once the validation metric has not improved
        for ``early_stop`` checks and the best model seen is returned (its
        header has ``stopping``, ``best_iteration``, ``best_validation``).
        Columns beyond the training data's are ignored, as in predict; an
        :class:`pegasos.io.SVMLightData` should be read with the training
        file's index base.
    **settings
        TrainOptions fields that replace those of ``options``
        (``fit((X, y), lam=1e-4, epochs=5)``).

    Automatic choices (``options.preset == "auto"``, the default): for a
    linear binary classifier or regression, an unset step offset is
    calibrated on a sample (:func:`pegasos.autotune.calibrate_step_offset`)
    and, when neither T nor epochs is given, the epochs double until the
    training objective stops improving by more than ``options.tol``
    (:func:`pegasos.autotune.train_until_converged`); the model header records
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
    if options is None:
        options = TrainOptions(**settings)
    elif settings:
        options = options.replace(**settings)
    options.validate()
    checks = None
    if trace is not None or validation is not None or options.early_stop is not None:
        if options.early_stop is not None and validation is None:
            raise ParameterError(f"{options.name('early_stop')} needs validation examples "
                                 f"({options.name('validation')})")
        checks = (trace, validation)
    if options.shuffle_buffer is not None:
        if checks is not None:
            _refuse_checks(options, f"{options.name('shuffle_buffer')}")
        return _fit_streaming(data, options, progress, on_plan)
    if isinstance(data, (str, os.PathLike)):
        from .io import read_svmlight

        data = read_svmlight(os.fspath(data))
    ex = as_examples(data)
    try:
        model = _fit_examples(ex, options, progress, on_plan, checks)
        if trace is not None:
            trace.header = dict(model.info)
        return model
    except ExampleError as error:
        if getattr(error, "memory_bound", False) and error.example is None and ex.indices.size:
            # name the example that holds the largest feature index
            row = int(np.searchsorted(ex.indptr, int(np.argmax(ex.indices)), side="right") - 1)
            raise ExampleError(f"example {row + 1}: {error.detail}", row, error.detail) from None
        raise


def _refuse_checks(options, trainer):
    given = options.name("trace") if options.spelling == "cli" else "trace=, validation= and early_stop="
    raise ParameterError(f"{given} {'is' if options.spelling == 'cli' else 'are'} for linear binary "
                         f"classification and regression trained in memory, not for {trainer}")


def _fit_examples(ex, options, progress, on_plan, checks=None):
    """fit() on examples in memory: the trainer the task and the labels need."""
    source = ex.source
    if checks is not None and options.task == "ranking":
        _refuse_checks(options, "ranking")
    if options.task == "binary":
        n_labels = (65 if source.labels_overflow else len(source.distinct_labels)) if source is not None \
            else int(np.unique(ex.y).size)
        if options.multiclass is not None or n_labels > 2:
            if checks is not None:
                _refuse_checks(options, "multiclass models")
            model = _fit_multiclass(ex, options, n_labels, progress, on_plan)
        else:
            labels = (BinaryLabels.from_data(source, allow_one_class=options.allow_one_class)
                      if source is not None else BinaryLabels.from_values(ex.y))
            if options.kernel == "linear":
                model = _fit_linear_auto(ex, options, labels, progress, on_plan, checks)
            else:
                if checks is not None:
                    _refuse_checks(options, "kernels")
                model = fit_kernel(ex, options, labels=labels, progress=progress, on_plan=on_plan)
    else:
        if source is not None and ex.m == 0:
            raise DataError(source.path, "no training examples found (the file is empty or holds only "
                                         "comments and blank lines)")
        model = _fit_linear_auto(ex, options, None, progress, on_plan, checks)
    return _record_source(model, source)


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
    if options.preset == "auto" and (options.step_is_automatic or options.length_is_automatic):
        options.plan(ex.m)            # k <= m and T, checked under the options' own spelling of their names
        if on_plan is not None:
            on_plan(None)
        return autotune.fit_multiclass_auto(ex, options, class_texts=class_texts, progress=progress)
    return fit_multiclass(ex, options, class_texts=class_texts, progress=progress, on_plan=on_plan)


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


def _fit_streaming(data, options, progress, on_plan):
    from .stream import Scan, fit_shuffled, scan

    if isinstance(data, (str, os.PathLike)):
        data = scan(os.fspath(data), epsilon=options.epsilon if options.task == "regression" else None)
    if not isinstance(data, Scan):
        raise ParameterError("shuffle_buffer= trains from a file: give its name or its pegasos.stream.scan()")
    return _record_source(fit_shuffled(data, options, progress=progress, on_plan=on_plan), data)


def _record_source(model, source):
    if source is not None:
        model.info["index_base"] = "0" if source.zero_based else "1"
        model.info["train_file"] = source.path
    return model


def _validation_arrays(validation, options, labels):
    """The validation examples as the monitor's (indptr, indices, data, y, class weights)."""
    vex = as_examples(validation)
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
        if trace is not None or options.early_stop is not None:      # else nothing would use the checks
            monitor = Monitor(options, trace, arrays)
    model = _fit_linear_chosen(ex, options, labels, progress, on_plan, monitor)
    if monitor is not None and checks[0] is not None:
        checks[0].select_run(int(model.info["iterations"]))
    return model


def _fit_linear_chosen(ex, options, labels, progress, on_plan, monitor):
    automatic = options.preset == "auto" and options.loss != "rank"
    if not automatic or not (options.step_is_automatic or options.length_is_automatic):
        return fit_linear(ex, options, labels=labels, progress=progress, on_plan=on_plan, monitor=monitor)
    options.plan(ex.m)            # k <= m and T, checked under the options' own spelling of their names
    settings = dict(lam=options.lam, batch_size=options.batch_size, projection=options.projection,
                    bias=options.bias, loss=options.loss, epsilon=options.epsilon, n_threads=options.n_threads,
                    n_features=ex.n_features, sample_weight=ex.sample_weight)
    if labels is not None:
        settings["labels"] = labels
    X = ex.chunk
    step_offset = options.step_offset if not options.step_is_automatic else None
    if options.length_is_automatic:
        if on_plan is not None:
            on_plan(None)
        model, _, _ = autotune.train_until_converged(
            X, ex.y, options.lam, tol=options.tol, seed=options.seed, step_offset=step_offset,
            average_from=options.average_from, sampling=options.sampling, class_weight=options.class_weight,
            progress=progress, **({} if monitor is None else {"monitor": monitor}),
            **{k: v for k, v in settings.items() if k != "lam"})
        if model.info.get("step_offset_rule") == "given" and not step_offset:
            model.info.pop("step_offset_rule")
        return model
    t0 = autotune.calibrate_step_offset(X, ex.y, options.lam, loss=options.loss, class_weight=options.class_weight,
                                        seed=options.seed, average_from=options.average_from,
                                        sampling=options.sampling,
                                        **{k: v for k, v in settings.items() if k not in ("lam", "loss", "n_threads")})
    model = fit_linear(ex, options.replace(step_offset=t0), labels=labels, progress=progress, on_plan=on_plan,
                       monitor=monitor)
    model.info["step_offset_rule"] = "calibrated"
    return model
