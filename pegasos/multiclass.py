"""Multiclass linear SVMs: one-vs-rest and Crammer-Singer (paper Sec. 5).

* One-vs-rest (``method="ovr"``): one binary Pegasos problem per class
  (class c against the others), each with its own random stream derived from
  the seed, run in parallel threads (the solver loop releases the GIL); the
  result does not depend on the number of threads.
* Crammer-Singer (``method="crammer-singer"``): one weight vector per class
  and the multiclass hinge loss of Eq. (20),

      l(W; (x, y)) = max_r [ delta(r, y) + <W_r, x> - <W_y, x> ],   delta(y, y) = 0,

  whose sub-gradient step adds eta_t x to row y and subtracts it from the
  most violating row; delta is 1[r != y] or a cost matrix.

The predicted class is the one with the largest decision value (the first in
label order on ties).
"""

from __future__ import annotations

import dataclasses
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .defaults import MAX_COST
from .errors import DataError, DivergenceError, ExampleError, ParameterError, counted
from .data import csr_arrays, finite_decisions
from .labels import sample_weights
from .data import check_weight_memory
from .labels import BinaryLabels
from .linear import LinearRun, new_state, objective_at_zero, projection_radius2, solve
from .model import linear_model_text, model_array, save_model
from .options import fmt_label
from .sampling import Orders

if TYPE_CHECKING:
    import os

    from numpy.typing import ArrayLike, NDArray

    from .io import Matrix
    from .solver import Plan


class _Stopped(Exception):
    """Ends a one-vs-rest worker thread whose run the caller stopped."""


@dataclass
class MulticlassModel:
    """K linear decision functions f_c(x) = <W_c, x> + b_c.

    Attributes
    ----------
    W : ndarray of shape (K, n_features), float64
    biases : ndarray of shape (K,), float64
    classes : ndarray of shape (K,), float64
        The label values, increasing.
    class_texts : list of str
        The labels as written in the training file.
    method : "ovr" or "crammer-singer"
    loss : str
        The binary loss of each one-vs-rest problem, or "hinge" for Crammer-Singer.
    columns : int64 array (n,) or None
        Set by :func:`pegasos.modelfile.load_model` with ``written_columns``:
        the feature of each column of ``W`` (None: ``W`` has every feature's).
    plan : pegasos.solver.Plan or None
        The solver plan of the run that trained the model (which solver and why, the settings as the user
        spelled them), set by :func:`pegasos.outcome.record_outcome` for ``pegasos train``'s summary; not
        written to the model file (None for a model read from one).
    """

    W: NDArray[np.float64]
    biases: NDArray[np.float64]
    classes: NDArray[np.float64]
    class_texts: list[str]
    lam: float
    method: str = "ovr"
    loss: str = "hinge"
    bias_mode: str = "none"
    info: dict = field(default_factory=dict)
    cost: NDArray[np.float64] | None = None
    columns: NDArray[np.int64] | None = field(default=None, repr=False, compare=False)
    plan: Plan | None = field(default=None, repr=False, compare=False)

    task = "multiclass"
    labels = None
    epsilon = None

    @property
    def n_features(self) -> int:
        return int(self.W.shape[1])

    @property
    def n_classes(self) -> int:
        return int(self.W.shape[0])

    def decision_function(self, X: Matrix) -> NDArray[np.float64]:
        """Decision values, shape (m, K), float64; column c is <W_c, x> + b_c.

        Columns of X at or beyond ``n_features`` contribute 0.

        Raises
        ------
        ParameterError
            X is not a matrix of numbers; ExampleError for a NaN or infinite
            value (naming the example).
        """
        from . import _core

        W, biases = self.checked_weights()
        indptr, indices, data = csr_arrays(X)
        m = indptr.shape[0] - 1
        out = np.empty((self.n_classes, m), dtype=np.float64)
        for c in range(self.n_classes):
            _core.decision_values(indptr, indices, data, W[c], float(biases[c]), out[c])
        return finite_decisions(out.T, X)

    def checked_weights(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(W, biases) checked (:func:`pegasos.model.model_array`): float64 (K, n_features) and (K,),
        K the number of ``classes`` and of ``class_texts``.

        Raises
        ------
        ParameterError
            An array edited or replaced since training to another shape or to what is not numbers.
        """
        K = len(self.class_texts)
        classes = model_array(self.classes, "classes", (K,))
        W = model_array(self.W, "W", (K, None))
        return W, model_array(self.biases, "biases", (classes.shape[0],))

    def predict_proba(self, X: Matrix) -> NDArray[np.float64]:
        """Class probabilities of a one-vs-rest log-loss model, shape (m, K), float64, rows summing to 1:
        each class's logistic probability 1/(1 + exp(-f_c(x))) divided by their sum over the K classes (as
        LIBLINEAR's -b 1 and scikit-learn's SGDClassifier normalise one-vs-rest probabilities).

        Raises
        ------
        ParameterError
            The model was not trained one-vs-rest with the log loss; or as :meth:`decision_function`.
        """
        from .linear import ovr_log_probabilities

        if self.method != "ovr" or self.loss != "log":
            raise ParameterError(f"probabilities need a one-vs-rest model trained with the log loss, not "
                                 f"{self.method} with {self.loss}")
        return np.exp(ovr_log_probabilities(self.decision_function(X)))

    def predict_index(self, X: Matrix) -> NDArray[np.int64]:
        """Index (0..K-1) of the predicted class of each row, int64 (m,).  Raises as
        :meth:`decision_function`."""
        return np.argmax(self.decision_function(X), axis=1)

    def predict(self, X: Matrix) -> NDArray[np.float64]:
        """Predicted label values, float64 (m,).  Raises as :meth:`decision_function`."""
        return self.classes[self.predict_index(X)]

    def class_index(self, y: ArrayLike, path: str | None = None) -> NDArray[np.int32]:
        """Map label values to class indices (int32).

        Raises
        ------
        ParameterError
            A label the model does not know.
        """
        y = np.asarray(y, dtype=np.float64)
        idx = np.searchsorted(self.classes, y)
        idx = np.minimum(idx, self.n_classes - 1)
        bad = self.classes[idx] != y
        if bad.any():
            i = int(np.argmax(bad))
            detail = f"label {fmt_label(y[i])} is not one of the model's {self.n_classes} classes"
            raise ExampleError(f"example {i + 1}: {detail}", i, detail)
        return idx.astype(np.int32)

    def regularizer(self) -> float:
        """lambda/2 ||W||_F^2 (biases included when they are a regularised feature)."""
        sq = float(np.sum(self.W * self.W))
        if self.bias_mode == "feature":
            sq += float(np.sum(self.biases ** 2))
        return 0.5 * self.lam * sq

    def to_text(self) -> str:
        """The model file contents (str; see :mod:`pegasos.model`)."""
        return linear_model_text(self)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model file atomically (see :func:`pegasos.model.save_model`).

        Raises
        ------
        PegasosError
            The file cannot be written; no partial file is left.
        """
        save_model(self, path)


def read_cost_matrix(path, n_classes):
    """Read a K x K cost matrix: line y (true class, in increasing label
    order) holds K numbers, delta(r, y) for r = 1..K; zero diagonal, costs >= 0.

    Returns
    -------
    ndarray of shape (K * K,), float64, row-major as [y * K + r]

    Raises
    ------
    DataError
        Wrong shape, a non-number, a negative cost or a non-zero diagonal.
    """
    try:
        with open(path) as f:
            lines = [ln.split("#", 1)[0].split() for ln in f]
    except OSError as e:
        raise DataError(path, f"cannot read the cost matrix: {e.strerror or e}") from None
    rows = [(i + 1, ln) for i, ln in enumerate(lines) if ln]
    if len(rows) != n_classes:
        raise DataError(path, f"the cost matrix has {counted(len(rows), 'row')}; the data have {n_classes} classes")
    cost = np.zeros((n_classes, n_classes))
    for r, (line, tokens) in enumerate(rows):
        if len(tokens) != n_classes:
            raise DataError(path, f"{len(tokens)} costs on the line, expected {n_classes}", line)
        for c, tok in enumerate(tokens):
            try:
                v = float(tok)
            except ValueError:
                raise DataError(path, f"cost {tok!r} is not a number", line) from None
            if not (math.isfinite(v) and v >= 0):
                raise DataError(path, f"cost {tok!r} must be finite and >= 0", line)
            if v > MAX_COST:
                raise DataError(path, f"cost {tok!r} is above {MAX_COST:g} (larger costs overflow the losses)", line)
            if r == c and v != 0:
                raise DataError(path, f"the cost of the true class must be 0, not {tok}", line)
            cost[r, c] = v
    return cost.ravel()


def crammer_singer_costs(cost, K):
    """The costs delta(y, r) of Crammer-Singer as K * K float64 values, row-major [y * K + r]: ``cost``
    (a model's or the options') or, for None, 1[r != y].  ParameterError for a wrong size."""
    out = (1.0 - np.eye(K)).ravel() if cost is None else np.ascontiguousarray(cost, dtype=np.float64).ravel()
    if out.shape != (K * K,):
        raise ParameterError(f"the cost matrix must be {K} x {K}")
    problem = cost_problem(out, K)
    if problem is not None:
        raise ParameterError(f"the cost matrix's {problem}")
    return out


def cost_problem(cost, K):
    """Why the K * K costs ``cost`` (row-major [y * K + r]) cannot be Crammer-Singer's (a phrase naming the first
    bad entry, "entry (row 2, column 3) = 1e+308 ..."), or None: each must be a number in [0, MAX_COST]
    (larger ones overflow the losses and the objective, as class weights above MAX_WEIGHT do)."""
    bad = np.flatnonzero(~((cost >= 0) & (cost <= MAX_COST)))
    if not bad.size:
        return None
    p = int(bad[0])
    return (f"entry (row {p // K + 1}, column {p % K + 1}) = {float(cost[p])!r} is not a number in [0, {MAX_COST:g}] "
            "(larger costs overflow the losses)")


def _classes(y, options):
    """The distinct labels (sorted float64), checked: at least two, and a loss that classifies."""
    classes = np.unique(y)
    if classes.size < 2:
        raise ParameterError(f"multiclass training needs at least two classes, got {classes.size}")
    if options.loss not in ("hinge", "log", "squared-hinge"):
        raise ParameterError(f"one-vs-rest needs a classification loss (hinge, log, squared-hinge), "
                             f"not {options.loss}")
    return classes


def largest_class(y):
    """The class with the most examples: the value occurring most often in ``y``, the smallest one on a
    tie (the first in a model's increasing class order).

    One-vs-rest (Sec. 5) lets this class against the rest stand for the K problems twice: the step
    offset is calibrated on it (:func:`pegasos.autotune.ovr_step_offset`), and the dual finish
    (:func:`pegasos.finish.finish_ovr`) runs its passes first and decides from them whether the
    others run; both pick it here, so that they pick the same class.

    Parameters
    ----------
    y : array-like of shape (m,), m >= 1
        Label values (float64) or class indices (int); the same examples give the same class either
        way, as indices follow the increasing label order.

    Returns
    -------
    scalar of ``y``'s dtype
        The label value or class index.

    Raises
    ------
    ValueError
        ``y`` is empty.
    """
    classes, counts = np.unique(np.asarray(y), return_counts=True)
    if classes.size == 0:
        raise ValueError("the largest class of no examples is not defined")
    return classes[int(np.argmax(counts))]


def fit_multiclass(ex, options, *, class_texts=None, progress=None, on_plan=None):
    """Train a multiclass linear SVM with Pegasos (one-vs-rest or Crammer-Singer).

    Parameters
    ----------
    ex : pegasos.examples.Examples
        m examples whose labels take two or more values.
    options : pegasos.options.TrainOptions
        Validated settings; ``options.multiclass`` is the method ("ovr" when
        None); ``options.cost`` the Crammer-Singer costs delta(true, predicted)
        as K*K values, row-major (default 1[r != y]).  T counts the iterations
        of each one-vs-rest problem, or of the Crammer-Singer run.
    class_texts : list of str, optional
        The labels as the training file wrote them (increasing value order).
    progress : callable(int) or None
        Called with iterations done (summed over the one-vs-rest problems).
    on_plan : callable(int) or None
        Called once with the total number of iterations before training.

    Returns
    -------
    MulticlassModel

    Raises
    ------
    ParameterError
        Fewer than two classes, a cost matrix of the wrong size, or divergence.
    """
    method = options.multiclass or "ovr"
    y = ex.y
    m = ex.m
    classes = _classes(y, options)
    K = classes.size
    plan = options.plan(m)
    if on_plan is not None:
        on_plan(plan.T * (K if method == "ovr" else 1))
    sample_weight = sample_weights(y, options.class_weight)
    if ex.sample_weight is not None:
        sample_weight = ex.sample_weight if sample_weight is None else sample_weight * ex.sample_weight
    yc = np.searchsorted(classes, y).astype(np.int32)
    n_features = ex.n_features
    cost = None if options.cost is None else np.array(options.cost, dtype=np.float64)

    if method == "ovr":
        check_weight_memory(n_features, K)         # the K weight vectors of the result
        seeds = np.random.SeedSequence(options.seed).spawn(K)
        one_thread = options.replace(n_threads=1)
        stop = threading.Event()            # set when the caller stops (Ctrl-C, SIGTERM, an error)

        def report(n):
            # called by each class's solver after every block of iterations
            if stop.is_set():
                raise _Stopped()
            if progress is not None:
                progress(n)

        def one(c):
            y_pm = np.where(yc == c, 1.0, -1.0)
            f0 = objective_at_zero(options.loss, y_pm, 0.0, sample_weight)
            orders = Orders(m, plan.k, options.sampling, seeds[c], None)
            blocks = ((ex.indptr, ex.indices, ex.data, y_pm, sample_weight, block, n)
                      for block, n in orders.blocks(plan.T, plan.k))
            return solve(blocks, n_features, one_thread, plan,
                         projection_radius2(options.loss, options.lam, f0, sample_weight), progress=report,
                         load_from=(ex.indices, m))

        n_jobs = int(options.n_threads)
        if n_jobs == 1:
            fits = [one(c) for c in range(K)]
        else:
            # the classes run in worker threads; a signal reaches the waiting main thread, which then
            # stops the workers at their next block instead of waiting for every class to finish
            pool = ThreadPoolExecutor(max_workers=n_jobs)
            futures = []
            try:
                futures = [pool.submit(one, c) for c in range(K)]
                fits = [f.result() for f in futures]
            except BaseException:
                stop.set()
                for f in futures:
                    f.cancel()
                raise
            finally:
                pool.shutdown(wait=True)
        W = np.vstack([w for w, _ in fits])
        biases = np.array([b for _, b in fits])
    else:
        cost_used = crammer_singer_costs(cost, K)
        worst = cost_used.reshape(K, K).max(axis=1)[yc]
        f0 = float(np.mean(worst if sample_weight is None else worst * sample_weight))
        state = new_state(n_features, options, plan, max(2.0 * f0 / options.lam, 1e-300), n_classes=K)
        for block, n in Orders(m, plan.k, options.sampling, options.seed, None).blocks(plan.T):
            state.run_multiclass(ex.indptr, ex.indices, ex.data, yc, cost_used, block, n, plan.k, sample_weight)
            if progress is not None:
                progress(n)
        flat = state.average()[0] if plan.avg_start else state.weights()[0]
        M = flat.reshape(K, state.dim)
        if options.bias == "feature":
            W, biases = np.ascontiguousarray(M[:, :-1]), M[:, -1].copy()
        else:
            W, biases = np.ascontiguousarray(M), np.zeros(K)
        if not np.all(np.isfinite(M)):
            raise DivergenceError("training diverged to non-finite weights (check the scale of the data and lambda)")
    info = options.header(plan)
    if class_texts is None:
        class_texts = [fmt_label(v) for v in classes]
    return MulticlassModel(W=np.ascontiguousarray(W, dtype=np.float64), biases=biases.astype(np.float64),
                           classes=classes, class_texts=list(class_texts), lam=float(options.lam), method=method,
                           loss=options.loss, bias_mode=options.bias, info=info, cost=cost)


class OvrRun:
    """One-vs-rest runs that can be lengthened: one :class:`pegasos.linear.LinearRun` per class.

    ``advance(T)`` returns the model ``fit_multiclass(ex, options)`` gives
    with T iterations per class, bit for bit (each class keeps its own
    random stream, spawned from the seed), while every class goes on from
    where the previous length left it.

    Parameters
    ----------
    ex : pegasos.examples.Examples
        m examples whose labels take two or more values.
    options : pegasos.options.TrainOptions
        Validated, ``multiclass`` "ovr" (or None) and a classification loss;
        ``iterations`` and ``epochs`` are ignored.
    class_texts, progress :
        As :func:`fit_multiclass`.

    Raises
    ------
    ParameterError
        Fewer than two classes, a loss that does not classify, k > m.
    """

    def __init__(self, ex, options, *, class_texts=None, progress=None):
        classes = _classes(ex.y, options)
        K = classes.size
        check_weight_memory(ex.n_features, K)
        sample_weight = sample_weights(ex.y, options.class_weight)
        if ex.sample_weight is not None:
            sample_weight = ex.sample_weight if sample_weight is None else sample_weight * ex.sample_weight
        yc = np.searchsorted(classes, ex.y)
        seeds = np.random.SeedSequence(options.seed).spawn(K)
        binary = options.replace(n_threads=1, class_weight=None, multiclass=None)
        self.stop = threading.Event()
        self.progress = progress
        signs = BinaryLabels.from_values(np.array([-1.0, 1.0]))
        self.runs = []
        for c in range(K):
            ex_c = dataclasses.replace(ex, y=np.where(yc == c, 1.0, -1.0), sample_weight=sample_weight, source=None)
            self.runs.append(LinearRun(ex_c, binary, labels=signs, progress=self._report, seed=seeds[c]))
        self.ex, self.options, self.classes = ex, options, classes
        self.class_texts = [fmt_label(v) for v in classes] if class_texts is None else list(class_texts)

    def _report(self, n):
        if self.stop.is_set():
            raise _Stopped()
        if self.progress is not None:
            self.progress(n)

    def advance(self, T, next_T=None):
        """Every class on to T iterations (see :meth:`pegasos.linear.LinearRun.advance`).

        Returns
        -------
        MulticlassModel
            Equal to ``fit_multiclass(ex, options.replace(iterations=T))``.
        """
        n_jobs = int(self.options.n_threads)
        if n_jobs == 1:
            fits = [run.advance(T, next_T) for run in self.runs]
        else:
            pool = ThreadPoolExecutor(max_workers=n_jobs)
            futures = []
            try:
                futures = [pool.submit(run.advance, T, next_T) for run in self.runs]
                fits = [f.result() for f in futures]
            except BaseException:
                self.stop.set()
                for f in futures:
                    f.cancel()
                raise
            finally:
                pool.shutdown(wait=True)
        plan = self.options.replace(iterations=int(T), epochs=None).plan(self.ex.m)
        W = np.vstack([fit.w for fit in fits])
        biases = np.array([fit.bias for fit in fits], dtype=np.float64)
        return MulticlassModel(W=np.ascontiguousarray(W, dtype=np.float64), biases=biases, classes=self.classes,
                               class_texts=list(self.class_texts), lam=float(self.options.lam), method="ovr",
                               loss=self.options.loss, bias_mode=self.options.bias, info=self.options.header(plan),
                               cost=None)
