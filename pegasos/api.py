"""The training entry point: :func:`fit` (data + :class:`TrainOptions` -> model).

:func:`fit` decides, once, which trainer a run needs — binary, multiclass
(one-vs-rest or Crammer-Singer), regression, ranking, kernel, or streaming
through a shuffle buffer — and records where the examples came from in the
model.  :func:`train`, :func:`train_multiclass` and :func:`train_kernel` are
the keyword-argument forms of the binary/regression/ranking, multiclass and
kernel trainers.
"""

import os

import numpy as np

from .errors import DataError, ParameterError
from .examples import as_examples
from .kernel import fit_kernel
from .labels import BinaryLabels
from .linear import fit_linear
from .multiclass import fit_multiclass
from .options import TrainOptions


def fit(data, options=None, *, progress=None, on_plan=None, **settings):
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
    **settings
        TrainOptions fields that replace those of ``options``
        (``fit((X, y), lam=1e-4, epochs=5)``).

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
        wrong shape, labels that are not numbers (ExampleError).
    DataError
        A file that cannot be read, or labels unfit for the task.
    """
    if options is None:
        options = TrainOptions(**settings)
    elif settings:
        options = options.replace(**settings)
    options.validate()
    if options.shuffle_buffer is not None:
        return _fit_streaming(data, options, progress, on_plan)
    if isinstance(data, (str, os.PathLike)):
        from .io import read_svmlight

        data = read_svmlight(os.fspath(data))
    ex = as_examples(data)
    source = ex.source
    if options.task == "binary":
        n_labels = (65 if source.labels_overflow else len(source.distinct_labels)) if source is not None \
            else int(np.unique(ex.y).size)
        if options.multiclass is not None or n_labels > 2:
            model = _fit_multiclass(ex, options, n_labels, progress, on_plan)
        else:
            labels = (BinaryLabels.from_data(source, allow_one_class=options.allow_one_class)
                      if source is not None else BinaryLabels.from_values(ex.y))
            trainer = fit_linear if options.kernel == "linear" else fit_kernel
            model = trainer(ex, options, labels=labels, progress=progress, on_plan=on_plan)
    else:
        if source is not None and ex.m == 0:
            raise DataError(source.path, "no training examples found (the file is empty or holds only "
                                         "comments and blank lines)")
        model = fit_linear(ex, options, progress=progress, on_plan=on_plan)
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
    class_texts = None
    if source is not None and not source.labels_overflow:
        texts = {label.value: label.text for label in source.distinct_labels}
        class_texts = [texts.get(v) or None for v in np.unique(ex.y)]
    return fit_multiclass(ex, options.replace(multiclass=options.multiclass or "ovr"), class_texts=class_texts,
                          progress=progress, on_plan=on_plan)


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


def train(X, y, *, labels=None, n_features=None, order=None, progress=None, qid=None, sample_weight=None,
          **settings):
    """Train a linear binary classifier, regression or ranking model (Fig. 1 for k = 1, Fig. 2 for k > 1).

    Parameters
    ----------
    X : scipy.sparse matrix, dense array or :class:`pegasos.io.Chunk`, shape (m, n_features)
        Training examples; float64 or float32 values.
    y : array of shape (m,)
        Labels (any two distinct numbers; the larger is the positive class),
        or real targets for the eps-insensitive and rank losses.
    labels : BinaryLabels, optional
        Label mapping; by default built from the values in y.
    n_features : int, optional
        Dimension of w; by default the number of columns of X.
    order : array of int, optional
        Explicit sequence of example indices to visit instead of drawing them.
    progress : callable(int) or None
    qid : int64 array of shape (m,) or None
        Query of each example (the rank loss).
    sample_weight : array of shape (m,) or None
        Per-example weights of the loss (times any class weight).
    **settings
        The fields of :class:`pegasos.options.TrainOptions`: ``lam`` (lambda;
        LIBLINEAR's C = 1/(lambda m)), ``iterations`` (T) or ``epochs``,
        ``batch_size`` (k), ``sampling``, ``projection``, ``average``,
        ``average_from``, ``bias``, ``seed``, ``loss``, ``epsilon``,
        ``class_weight``, ``step_offset`` (t0) or ``eta0``, ``n_threads``.

    Returns
    -------
    LinearModel

    Raises
    ------
    ParameterError
        A parameter out of range (lambda <= 0, T or k <= 0, k > m, ...), or
        labels that are not exactly two values (use :func:`fit` or
        :func:`train_multiclass` for more).
    """
    options = TrainOptions(**settings).validate()
    ex = as_examples((X, y, qid, sample_weight), n_features)
    if labels is None and options.task == "binary":
        labels = BinaryLabels.from_values(ex.y)
    return fit_linear(ex, options, labels=labels, progress=progress, order=order)


def train_multiclass(X, y, *, method="ovr", n_features=None, cost=None, class_texts=None, n_jobs=2,
                     progress=None, sample_weight=None, **settings):
    """Train a multiclass linear SVM with Pegasos (one-vs-rest or Crammer-Singer, Sec. 5).

    Parameters
    ----------
    X : scipy.sparse matrix, dense array or Chunk, shape (m, n_features)
    y : array of shape (m,), label values (two or more distinct numbers)
    method : {"ovr", "crammer-singer"}
    n_features : int, optional
    cost : array of K*K (or K x K) floats, optional
        Crammer-Singer costs delta(true, predicted) (default 1[r != y]).
    class_texts : list of str, optional
        Spelling of the labels for the model file.
    n_jobs : int >= 1
        Threads for one-vs-rest (the classes are independent).
    sample_weight : array of shape (m,), optional
    **settings
        The other fields of :class:`pegasos.options.TrainOptions` (``loss``:
        the binary loss of each one-vs-rest problem).

    Returns
    -------
    MulticlassModel

    Raises
    ------
    ParameterError
        Fewer than two classes, an unknown method, or a parameter out of range.
    """
    options = TrainOptions(multiclass=method, cost=cost, n_threads=n_jobs, **settings).validate()
    ex = as_examples((X, y, None, sample_weight), n_features)
    return fit_multiclass(ex, options, class_texts=class_texts, progress=progress)


def train_kernel(X, y, *, kernel="rbf", labels=None, n_features=None, order=None, progress=None,
                 return_state=False, **settings):
    """Train a kernel SVM with Pegasos (Fig. 3; Fig. 2's mini-batches for k > 1).

    Parameters
    ----------
    X, y, labels, n_features, order, progress
        As :func:`train`.
    kernel : {"linear", "poly", "rbf", "sigmoid"}
    return_state : bool
        Also return the compiled state (for tests).
    **settings
        The fields of :class:`pegasos.options.TrainOptions`: ``gamma``,
        ``degree``, ``coef0``, ``budget``, ``cache_mb`` and the solver settings.

    Returns
    -------
    KernelModel (and the state with ``return_state``)
    """
    options = TrainOptions(kernel=kernel, **settings).validate()
    ex = as_examples((X, y), n_features)
    if labels is None:
        labels = BinaryLabels.from_values(ex.y)
    return fit_kernel(ex, options, labels=labels, progress=progress, order=order, return_state=return_state)
