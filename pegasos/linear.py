"""Linear Pegasos: the model and the driver of the compiled solver loop.

Implements Fig. 1 (k = 1) and Fig. 2 (mini-batch k) of Shalev-Shwartz,
Singer, Srebro and Cotter, "Pegasos: Primal Estimated sub-GrAdient SOlver for
SVM", Math. Programming B 127(1), 2011, for the problem (Eq. (1))::

    min_w  lambda/2 ||w||^2 + 1/m sum_i loss(y_i, <w, x_i>)

with step eta_t = 1/(lambda (t + t0)) (t0 = 0 is the paper's), the optional
projection of Eq. (6), and as output the last iterate w_{T+1} (as in the
paper's experiments, Sec. 7), the mean of w_1..w_T (Theorem 1), or the mean
of a suffix.  The losses are those of Sec. 5, the bias options those of Sec. 6.

:func:`fit_linear` trains binary classifiers, regression and ranking from
:class:`pegasos.examples.Examples` and :class:`pegasos.options.TrainOptions`;
:func:`solve` is the one Python caller of the compiled loop, shared with the
streaming and one-vs-rest trainers.  Most users call :func:`pegasos.fit` or
:func:`pegasos.train`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .errors import DivergenceError, ExampleError, ParameterError
from .data import check_weight_memory, csr_arrays, finite_decisions
from .labels import BinaryLabels, sample_weights
from .model import linear_model_text, model_array, save_model
from .options import LOSSES, TASK_OF_LOSS
from .sampling import Orders, PairOrders

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from .io import Matrix
    from .solver import Plan

__all__ = ["LinearModel", "BinaryLabels", "LOSSES", "TASK_OF_LOSS", "example_losses", "fit_linear", "solve",
           "new_state", "start_state", "LinearRun", "restart_average", "grow_state", "check_weight_memory", "objective_at_zero", "projection_radius2", "available_cpus",
           "second_processor"]


@dataclass
class LinearModel:
    """A trained linear SVM: decision value f(x) = <w, x> + bias.

    Attributes
    ----------
    w : ndarray of shape (n_features,), float64
        Weights (zero-based columns).
    bias : float
        Offset added to every decision value (0 without a bias).
    labels : BinaryLabels or None
        Which label values the signs of f stand for (f > 0: positive);
        None for regression and ranking.
    lam : float
        The lambda the model was trained with.
    bias_mode : str
        "none", "feature" (regularised constant feature 1) or "unregularized".
    info : dict
        Training settings recorded in the model file header (str -> str).
    solver_state : dict or None
        The compiled solver's state after the run
        (``_core.LinearState.get_state``, plus the example order's state
        under ``"orders"``), for continuing it with :func:`fit_linear`'s
        ``init``; read from the model file's resume section when it has one,
        else None for a model read from a file.
    columns : int64 array (n,) or None
        Set by :func:`pegasos.modelfile.load_model` with ``written_columns``:
        the feature of each entry of ``w`` (None: ``w`` is of every feature).
    save_state : bool
        Whether ``save`` writes ``solver_state`` as the model file's resume
        section (what ``pegasos train --init`` continues exactly).
    plan : pegasos.solver.Plan or None
        The solver plan of the run that trained the model (which solver and why, the settings as the user
        spelled them), set by :func:`pegasos.outcome.record_outcome` for ``pegasos train``'s summary; not
        written to the model file (None for a model read from one).
    """

    w: NDArray[np.float64]
    bias: float
    labels: BinaryLabels | None
    lam: float
    bias_mode: str = "none"
    info: dict = field(default_factory=dict)
    loss: str = "hinge"
    epsilon: float | None = None
    solver_state: dict | None = field(default=None, repr=False, compare=False)
    save_state: bool = field(default=False, repr=False, compare=False)
    columns: NDArray[np.int64] | None = field(default=None, repr=False, compare=False)
    #: the objective dict of the training data where the trainer computed it (a streamed run's last pass)
    train_objective: dict | None = field(default=None, repr=False, compare=False)
    plan: Plan | None = field(default=None, repr=False, compare=False)

    @property
    def task(self) -> str:
        """"binary", "regression" or "ranking" (from the loss)."""
        return TASK_OF_LOSS[self.loss]

    @property
    def n_features(self) -> int:
        return int(self.w.shape[0])

    def decision_function(self, X: Matrix) -> NDArray[np.float64]:
        """Decision values <w, x_i> + bias.

        Parameters
        ----------
        X : scipy.sparse matrix or :class:`pegasos.io.Chunk`, shape (m, d)
            Any d: columns at or beyond ``n_features`` contribute 0.

        Returns
        -------
        ndarray of shape (m,), float64

        Raises
        ------
        ParameterError
            X is not a matrix of numbers; ExampleError for a NaN or infinite
            value (naming the example).
        """
        w = self.checked_weights()
        indptr, indices, data = csr_arrays(X)
        return finite_decisions(decision_values(indptr, indices, data, w, self.bias), X)

    def checked_weights(self) -> NDArray[np.float64]:
        """``w`` checked (:func:`pegasos.model.model_array`), float64 (n_features,).

        Raises
        ------
        ParameterError
            ``w`` is not a 1-D array of numbers (edited or replaced since training).
        """
        return model_array(self.w, "w", (None,))

    def predict(self, X: Matrix) -> NDArray[np.float64]:
        """Predictions (float64): for classification the label values
        (positive where the decision value is > 0); for regression and
        ranking the decision values themselves; shape (m,).  Raises as
        :meth:`decision_function`."""
        f = self.decision_function(X)
        if self.labels is None:
            return f
        return np.where(f > 0, self.labels.positive, self.labels.negative)

    def predict_proba(self, X: Matrix) -> NDArray[np.float64]:
        """P(positive label | x) = 1 / (1 + exp(-f(x))) for a model trained
        with the log loss; shape (m,), float64.

        Raises
        ------
        ParameterError
            The model was not trained with the log loss.
        """
        if self.loss != "log":
            raise ParameterError(f"probabilities need a model trained with the log loss, not {self.loss}")
        return logistic(self.decision_function(X))

    def losses(self, f: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """Per-example loss of decision values f against targets y (label
        values for classification), float64 (m,)."""
        return example_losses(self.loss, f, y if self.labels is None else self.labels.encode(y), self.epsilon)

    def regularizer(self) -> float:
        """lambda/2 times the squared norm of the regularised parameters
        (w, and b too when the bias is a constant feature)."""
        sq = self.squared_norm()
        if self.bias_mode == "feature":
            sq += self.bias * self.bias
        return 0.5 * self.lam * sq

    def squared_norm(self) -> float:
        """||w||^2 (the bias excluded), float.  By np.einsum, not BLAS: a threaded ddot of 55,197 weights
        took 8 ms on a busy 2-core machine, einsum 0.1 ms."""
        return float(np.einsum("i,i->", self.w, self.w))

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


def example_losses(loss, f, y, epsilon=None):
    """Loss of each decision value f_i against y_i (+-1 for classification), float64 (m,)."""
    if loss in ("hinge", "rank"):
        return np.maximum(0.0, 1.0 - y * f)
    if loss == "squared-hinge":
        return np.maximum(0.0, 1.0 - y * f) ** 2
    if loss == "log":
        return np.logaddexp(0.0, -y * f)
    return np.maximum(0.0, np.abs(f - y) - (epsilon or 0.0))


def run_targets(ex, options, labels=None):
    """What the loop trains on: (labels, y, per-example loss weights or None).

    Binary: the label mapping (from the values when not given), y as +-1 and the
    class weights times the sample weights; regression and ranking: no labels, the
    targets (finite) and the sample weights (none for the rank loss, which samples pairs).

    Raises
    ------
    ExampleError
        A label that is not one of the two, or a target that is not finite.
    ParameterError
        Sample weights with the rank loss.
    """
    if options.task == "binary":
        labels = labels if labels is not None else BinaryLabels.from_values(ex.y)
        return labels, labels.encode(ex.y), _combine(sample_weights(ex.y, options.class_weight), ex.sample_weight)
    if not np.all(np.isfinite(ex.y)):
        i = int(np.argmin(np.isfinite(ex.y)))
        raise ExampleError(f"target {ex.y[i]} (example {i + 1}) is not finite", i, f"target {ex.y[i]} is not finite")
    if options.task == "ranking" and ex.sample_weight is not None:
        raise ParameterError("sample weights do not apply to the rank loss (it samples pairs)")
    if options.task == "regression":
        with np.errstate(over="ignore"):
            total = float(np.abs(ex.y).sum())
        if not math.isfinite(total):         # the loss at w = 0 and every mean of the losses would be inf
            i = int(np.argmax(np.abs(ex.y)))
            raise ExampleError(f"target {float(ex.y[i])!r} (example {i + 1}): the targets' sum overflows float64; "
                               "rescale the targets", i, f"target {float(ex.y[i])!r} makes the targets' sum overflow "
                               "float64; rescale the targets")
    return None, ex.y, ex.sample_weight


def fit_linear(ex, options, *, labels=None, progress=None, order=None, on_plan=None, init=None, start=None,
               monitor=None):
    """Train a linear binary classifier, regression or ranking model (Fig. 1/2).

    Parameters
    ----------
    ex : pegasos.examples.Examples
        The m training examples (label values, targets, or targets with qid).
    options : pegasos.options.TrainOptions
        Validated settings; ``options.loss`` picks the task (Sec. 5).
    labels : BinaryLabels, optional
        Label mapping of a binary task (default: from the two values in ``ex.y``).
    progress : callable(int) or None
        Called with the number of iterations done after each block.
    order : array of int, optional
        Explicit sequence of example indices to visit instead of drawing them
        (batches are consecutive slices; for permutation/sequential sampling
        each epoch takes the next m entries; for ranking, pairs a0 b0 a1 b1 ...).
    on_plan : callable(int) or None
        Called once with T before training (to size a progress bar).
    init : dict or None
        Warm start: the ``solver_state`` of an earlier model trained with the
        same lambda, loss, epsilon, bias, step offset, projection, averaging
        (on or off) and number of features.  The run continues it for T more
        iterations: the counter t goes on (step eta_t = 1/(lambda (t + t0))),
        the average goes on over the iterates since the saved run's first
        averaged one.  The random generator of the order goes on from the
        saved one too (its ``bit_generator.state``, kept under ``"rng"``
        with the ``"sampling"`` it drew for), unless an explicit ``order``
        is given or the sampling differs.  So runs of T1 and T2 iterations
        equal, bit for bit, one run of T1 + T2 with sequential sampling (file
        order), with uniform sampling, and with permutation sampling when T1
        is a whole number of epochs (a permutation cut by the end of a run is
        not resumed: the next run starts a new one).
    start : (w, b) or None
        Warm start with a fresh schedule: w_1 = w (float64 array of any
        length: entries beyond ``ex.n_features`` are dropped, missing ones
        are 0) and bias b, then t counts from 1 again with this run's lambda
        and step offset (what a lambda path or a retraining from an earlier
        model's weights needs).  A third entry t >= 1 makes the schedule go
        on from iteration t instead; an average of every iterate then counts
        (w, b) as the mean of the t iterates before (what partial_fit after a
        fit without a solver state needs), a suffix average starts where it
        would in a run of t + T.  Not together with ``init``.
    monitor : pegasos.trace.Monitor or None
        Checks the run at its points (trace, validation, early stopping; see
        :mod:`pegasos.trace`); with early stopping the best model it saw is
        returned and the header records ``stopping`` and ``best_iteration``.

    Returns
    -------
    LinearModel
        With ``solver_state`` set to the state after the run (the dict of
        ``_core.LinearState.get_state`` plus ``"sampling"`` and ``"rng"``).

    Raises
    ------
    ParameterError
        k > m, a target that is not finite, weights too large for memory,
        divergence; ExampleError for a label that is not one of the two.
    """
    task = options.task
    m = ex.m
    labels, y_run, sample_weight = run_targets(ex, options, labels)
    if task == "ranking":
        orders = PairOrders(ex.qid, ex.y, options.seed, order)
        plan = options.plan(orders.n_pairs)
    else:
        plan = options.plan(m)
        orders = Orders(m, plan.k, options.sampling, options.seed, order)
    sampling = "pairs" if task == "ranking" else options.sampling
    if init is not None and order is None:
        if task != "ranking" and init.get("orders") is not None:
            orders.set_state(init["orders"])
        elif init.get("sampling") == sampling and "rng" in init:
            try:
                orders.rng.bit_generator.state = init["rng"]
            except (TypeError, ValueError, KeyError, OverflowError) as e:
                raise ParameterError(f"init: the saved generator state is unusable ({type(e).__name__}: {e})") \
                    from None
    n_features = ex.n_features
    if init is not None:
        n_features = max(n_features, int(init.get("n_features", 0)))
        init = grow_state(init, n_features)
        init = _suffix_ahead(init, plan)
    if on_plan is not None:
        on_plan(plan.T)
    f0 = objective_at_zero(options.loss, y_run, options.epsilon, sample_weight)
    radius2 = projection_radius2(options.loss, options.lam, f0, sample_weight)
    if start is not None:
        if init is not None:
            raise ParameterError("init and start exclude each other (continue a run, or start one from weights)")
        init = start_state(start[0], start[1], n_features, options, plan, radius2)
        if len(start) > 2 and start[2]:
            t = int(start[2])
            init["t"] = t
            if init["avg_start"] == 1:          # the start is the mean of the t iterates before
                init.update(n_avg=t, A=t * init["a"], b_sum=t * init["b"])
            elif init["avg_start"]:
                init["avg_start"] = t + plan.avg_start
        resumed = False
    else:
        resumed = init is not None
    blocks = ((ex.indptr, ex.indices, ex.data, y_run, sample_weight, block, n)
              for block, n in orders.blocks(plan.T, plan.k))
    if monitor is not None:
        monitor.begin(ex.indptr, ex.indices, ex.data, y_run, sample_weight, plan)
    w, b, final = solve(blocks, n_features, options, plan, radius2, progress=progress,
                        load_from=(ex.indices, m), state=init, return_state=True, monitor=monitor)
    best = None if monitor is None else monitor.end()
    if best is not None:
        w, b = np.ascontiguousarray(best[0], dtype=np.float64), float(best[1])
        final = None          # the best model seen is not where the run's state ends: nothing to resume
    if final is not None:
        final["sampling"] = sampling
        final["rng"] = orders.rng.bit_generator.state
        if task != "ranking":
            final["orders"] = orders.get_state()
    info = options.header(plan, examples=m)
    if resumed and final is not None:
        # the header describes the whole run: t counts every iteration since w_1 = 0
        info["iterations"] = str(final["t"])
        if final["avg_start"]:
            info["averaged_iterates"] = f"{final['avg_start']}..{final['t']}"
    if task != "binary":
        info["task"] = task
    if monitor is not None:
        info.update(monitor.header())
    return LinearModel(w=w, bias=b, labels=labels, lam=float(options.lam), bias_mode=options.bias, info=info,
                       loss=options.loss, epsilon=float(options.epsilon) if options.loss == "eps-insensitive"
                       else None, solver_state=final)


class OffsetRuns:
    """Runs of :func:`fit_linear` on the same examples that differ only in the step offset t0.

    ``run(t0)`` returns the model ``fit_linear(ex, options.replace(step_offset=t0), labels=labels)``
    returns, bit for bit (without its solver state): what the runs share is done once, not for each
    t0: the targets and weights, the order of the examples (drawn from ``options.seed`` as every run
    draws it), f(0) and the radius of the projection.  For the step calibration
    (:func:`pegasos.autotune.calibrate_step_offset`), whose runs are short.

    Parameters
    ----------
    ex : pegasos.examples.Examples
    options : pegasos.options.TrainOptions
        Validated, binary classification or regression.
    labels : BinaryLabels, optional
        As :func:`fit_linear`.

    Raises
    ------
    ParameterError
        The rank loss (it samples pairs), k > m; ExampleError for a label that is not one of the two.
    """

    def __init__(self, ex, options, labels=None):
        if options.task == "ranking":
            raise ParameterError("runs of several step offsets sample examples, which the rank loss (pairs) does not")
        self.ex, self.options = ex, options
        self.labels, self.y_run, self.sample_weight = run_targets(ex, options, labels)
        plan = options.plan(ex.m)
        orders = Orders(ex.m, plan.k, options.sampling, options.seed, None)
        self.blocks = list(orders.blocks(plan.T, plan.k))
        f0 = objective_at_zero(options.loss, self.y_run, options.epsilon, self.sample_weight)
        self.radius2 = projection_radius2(options.loss, options.lam, f0, self.sample_weight)

    def run(self, t0):
        """The model of the run with step offset ``t0`` (iterations, >= 0).

        Raises
        ------
        ParameterError
            Divergence to non-finite weights (as :func:`solve`).
        """
        ex, options = self.ex, self.options.replace(step_offset=t0)
        plan = options.plan(ex.m)
        blocks = ((ex.indptr, ex.indices, ex.data, self.y_run, self.sample_weight, block, n) for block, n in self.blocks)
        w, b = solve(blocks, ex.n_features, options, plan, self.radius2, load_from=(ex.indices, ex.m))
        info = options.header(plan, examples=ex.m)
        if options.task != "binary":
            info["task"] = options.task
        return LinearModel(w=w, bias=b, labels=self.labels, lam=float(options.lam), bias_mode=options.bias, info=info,
                           loss=options.loss, epsilon=float(options.epsilon) if options.loss == "eps-insensitive"
                           else None)


def logistic(f: ArrayLike) -> NDArray[np.float64]:
    """1 / (1 + exp(-f)) of decision values f (any shape), float64: the probability of the log loss's
    model.  Computed as 1/(1 + e^-|f|) for f >= 0 and e^-|f|/(1 + e^-|f|) below, without the cancellation
    of 0.5 (1 + tanh(f/2)), which loses the relative precision of small probabilities."""
    f = np.asarray(f, dtype=np.float64)
    e = np.exp(-np.abs(f))
    return np.where(f >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))


def ovr_log_probabilities(f: ArrayLike) -> NDArray[np.float64]:
    """log P(class c | x) of a one-vs-rest log-loss model from its decision values f (float64 (m, K)):
    each class's logistic probability s(f_c) over their sum, as LIBLINEAR's -b 1 and scikit-learn's
    SGDClassifier normalise them, in logs (log s(f) = -log(1 + e^-f), the sum by log-sum-exp), so that
    the log loss of a confident model keeps its precision.  Shape (m, K), float64."""
    f = np.asarray(f, dtype=np.float64)
    log_s = -np.logaddexp(0.0, -f)
    if not log_s.size:
        return log_s
    top = log_s.max(axis=1, keepdims=True)
    return log_s - (top + np.log(np.exp(log_s - top).sum(axis=1, keepdims=True)))


def decision_values(indptr, indices, data, w, bias):
    """<w, x_i> + bias for each row of CSR arrays checked as :func:`pegasos.data.csr_arrays` returns them
    (columns at or beyond w's length contribute 0): float64 (m,), not checked for finiteness."""
    from . import _core

    out = np.empty(indptr.shape[0] - 1, dtype=np.float64)
    _core.decision_values(indptr, indices, data, w, float(bias), out)
    return out


def _combine(class_weights, example_weights):
    """The product of per-class and per-example weights (either may be None)."""
    if example_weights is None:
        return class_weights
    if class_weights is None:
        return example_weights
    return class_weights * example_weights


def _suffix_ahead(state, plan):
    """With suffix averaging, the state whose average starts where one run of t + T would start it.

    One run of T_total iterations averages the iterates from ceil(F T_total)
    on.  When that is still ahead (after the saved t), the saved average is
    dropped and starts there, so the continued run is that one run; when it
    is behind, the saved average goes on from its own start (the iterates
    between cannot be recovered).
    """
    F = plan.average_from
    if not F or not state.get("avg_start") or state.get("u") is None:
        return state
    t = int(state["t"])
    start = max(1, math.ceil(F * (t + plan.T)))
    if start <= t or start == state["avg_start"]:
        return state
    return dict(state, avg_start=start, n_avg=0, A=0.0, b_sum=0.0, u=np.zeros_like(np.asarray(state["u"])))


def grow_state(state, n_features):
    """The solver state ``state`` (a ``get_state`` dict) for ``n_features`` >= its own.

    The weights of the new features are 0 in every past iterate, so v and the
    running sums of the average get zeros there; the constant feature of
    ``bias="feature"`` (the last entry of v) stays last.  Returns ``state``
    itself when the dimension is unchanged, else a new dict.

    Raises
    ------
    ParameterError
        ``state`` is not a ``get_state`` dict of one weight vector.
    """
    try:
        old = int(state["n_features"])
        dim = int(state["dim"])
        classes = int(state.get("n_classes", 1))
    except (KeyError, TypeError, ValueError):
        raise ParameterError("init: the saved state is not a solver state (n_features, dim)") from None
    if n_features == old:
        return state
    if classes != 1 or n_features < old:
        raise ParameterError(f"init: the saved state has {old} features, this run {n_features}")
    extra = dim - old                      # 1 with the constant-feature bias
    new_dim = n_features + extra
    out = dict(state, n_features=int(n_features), dim=int(new_dim))
    for key in ("v", "u"):
        vec = state.get(key)
        if vec is None:
            continue
        vec = np.asarray(vec, dtype=np.float64)
        grown = np.zeros(new_dim, dtype=np.float64)
        grown[:old] = vec[:old]
        grown[n_features:] = vec[old:]
        out[key] = grown
    return out


def new_state(n_features, options, plan, radius2, n_classes=1):
    """The compiled solver state (``_core.LinearState``) for a run of ``options``.

    ``radius2`` is the squared radius of the projection ball
    (:func:`projection_radius2`); ``n_classes`` > 1 for Crammer-Singer.
    """
    from . import _core

    check_weight_memory(n_features, n_classes * (2 if plan.avg_start else 1))
    loss = options.loss if n_classes == 1 else "hinge"
    return _core.LinearState(n_features, float(options.lam), plan.projection, plan.avg_start,
                             _core.BIAS_CODES[options.bias], _core.LOSS_CODES[loss],
                             float(options.epsilon) if n_classes == 1 else 0.0, radius2, loss == "rank" and
                             n_classes == 1, n_classes, float(plan.t0), _core.SCHEDULE_CODES[plan.schedule],
                             float(plan.eta))


def start_state(w, b, n_features, options, plan, radius2):
    """A solver state (dict of ``_core.LinearState.get_state``) whose first
    iterate is (w, b) and whose schedule starts at t = 1.

    Parameters
    ----------
    w : array-like of float, shape (d,)
        Starting weights; d may differ from ``n_features`` (entries beyond it
        are dropped, missing ones are 0).
    b : float
        Starting bias (the constant feature's weight with ``bias="feature"``,
        the unregularised offset with ``bias="unregularized"``, ignored
        without a bias).
    n_features, options, plan, radius2
        As for :func:`new_state`.  With the projection of Eq. (6) on, a start
        outside the ball of radius sqrt(radius2) is projected onto it.

    Raises
    ------
    ParameterError
        w or b not finite.
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    b = float(b)
    if not np.all(np.isfinite(w)) or not math.isfinite(b):
        raise ParameterError("the starting weights are not finite")
    state = new_state(n_features, options, plan, radius2).get_state()
    v = state["v"]
    n = min(n_features, w.shape[0])
    v[:n] = w[:n]
    if options.bias == "feature":
        v[n_features] = b
    elif options.bias == "unregularized":
        state["b"] = b
    sqnorm = float(np.dot(v, v))
    if plan.projection and sqnorm > radius2:
        v *= math.sqrt(radius2 / sqnorm)
        sqnorm = float(np.dot(v, v))
    state["sqnorm"] = sqnorm
    return state


def solve(blocks, n_features, options, plan, radius2, *, progress=None, load_from=None, state=None,
          return_state=False, monitor=None):
    """Drive the compiled Pegasos loop (Fig. 1/2) over a sequence of blocks.

    Parameters
    ----------
    blocks : iterable of (indptr, indices, data, y, sample_weight, order, n_iter)
        CSR arrays (int64, int32, float64/float32) with sorted column indices,
        labels y (float64, -1/+1 or targets), per-example weights (float64 or
        None), the int64 example indices to visit and the number of
        iterations to run on them (see ``_core.LinearState.run``).  The
        arrays may change from block to block (streaming); the state carries
        over, so the blocks together make one run of ``plan.T`` iterations.
    n_features : int
        Dimension of w.
    options : TrainOptions
        lambda, loss, epsilon, bias and the number of threads.
    plan : RunPlan
        k, the first averaged iteration, t0 and the projection.
    radius2 : float
        Squared radius of the projection ball.
    progress : callable(int) or None
    load_from : (indices, m) or None
        Columns of the whole matrix, to share the features among threads by
        their number of stored values; None: equal ranges of features.
    state : dict or None
        Continue from this ``_core.LinearState.get_state()`` dict (t and the
        average go on) instead of w_1 = 0.
    return_state : bool
        Also return the state after the run (``get_state()``).
    monitor : pegasos.trace.Monitor or None
        Checked after the iterations of ``monitor.points`` (counted from the
        start of this call) with the model the run would output then; the
        run stops early when ``monitor.check`` returns True.  The blocks are
        cut at those points without changing the iterates.

    Returns
    -------
    (w, b) : float64 array of shape (n_features,), float
        ``(w, b, state)`` with ``return_state``.

    Raises
    ------
    ParameterError
        Weights too large for memory, divergence to non-finite weights, or a
        ``state`` that does not fit this run (named setting or shape).
    """
    from . import _core

    # more threads than processors only adds contention (and OpenMP fails to start
    # tens of thousands); the model is the same for any count
    n_threads = min(int(options.n_threads), available_cpus())
    k, bias = plan.k, options.bias
    init = state
    state = new_state(n_features, options, plan, radius2)
    if init is not None:
        try:
            state.set_state(init)
        except ValueError as e:
            raise ParameterError(f"init: {e}") from None
    load = None
    if options.loss != "rank" and load_from is not None and load_from[1] and _core.batch_uses_threads(
            k, load_from[0].shape[0] / load_from[1] + (bias == "feature"), n_threads):
        # stored values per feature, so that each thread's feature range gets an equal share
        indices, m = load_from
        load = _core.feature_load(indices, state.dim, m if bias == "feature" else 0)
    if monitor is None:
        for indptr, indices, data, y, sample_weight, order, n in blocks:
            state.run(indptr, indices, data, y, order, n, k, sample_weight, n_threads, load)
            if progress is not None:
                progress(n)
    else:
        _run_monitored(state, blocks, k, n_threads, load, progress, monitor, plan, bias)
    w, b = _output(state, plan, bias)
    if not np.all(np.isfinite(w)) or not math.isfinite(b):
        raise DivergenceError("training diverged to non-finite weights (check the scale of the data and lambda)")
    if return_state:
        return np.ascontiguousarray(w, dtype=np.float64), float(b), state.get_state()
    return np.ascontiguousarray(w, dtype=np.float64), float(b)


def _output(state, plan, bias):
    """The model the run outputs now: the mean of the averaged iterates (the
    current iterate while there is none yet), or the current iterate; (w, b)
    with the constant feature's weight split off as b.  Reads the state only."""
    if plan.avg_start and state.n_avg:
        w, b, _ = state.average()
    else:
        w, b = state.weights()
    if bias == "feature":
        w, b = w[:-1].copy(), float(w[-1])
    return w, float(b)


def _run_monitored(state, blocks, k, n_threads, load, progress, monitor, plan, bias):
    """The loop of :func:`solve`, cut at the monitor's check points.

    A block of n iterations is run as consecutive calls on the rest of its
    order (iteration j of a call takes the batch after those of the calls
    before), so the iterates are those of one call; ``monitor.check(t,
    output)`` sees t = iterations done in this run and may stop the run."""
    step = 2 if state.pairs else 1
    start = state.t
    points = iter(monitor.points)
    target = next(points, None)
    for indptr, indices, data, y, sample_weight, order, n in blocks:
        done = 0
        while done < n:
            todo = n - done if target is None else min(n - done, target - (state.t - start))
            part = order if done == 0 else order[done * k * step:]
            state.run(indptr, indices, data, y, part, todo, k, sample_weight, n_threads, load)
            done += todo
            if progress is not None:
                progress(todo)
            if target is not None and state.t - start == target:
                if monitor.check(target, lambda: _output(state, plan, bias)):
                    return
                target = next(points, None)


def available_cpus():
    """Processors this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def second_processor(n_threads):
    """Whether a run allowed ``n_threads`` threads may use a second processor: ``n_threads`` >= 2 and
    two processors available (for the two-thread reader and the loops' helper thread)."""
    return min(int(n_threads), available_cpus()) >= 2


def objective_at_zero(loss, y_run, epsilon, sample_weight):
    """f(0): the mean (weighted) loss of w = 0."""
    wmean = 1.0 if sample_weight is None else float(sample_weight.mean())
    if loss == "log":
        return math.log(2.0) * wmean
    if loss == "eps-insensitive":
        if not y_run.size:
            return 0.0
        losses = np.maximum(0.0, np.abs(y_run) - epsilon)
        return float(losses.mean() if sample_weight is None else (losses * sample_weight).mean())
    return wmean


def projection_radius2(loss, lam, f0, sample_weight=None):
    """Squared radius of the projection ball.

    1/lambda for the (unweighted) hinge loss, proven by duality (paper Sec. 2.2);
    otherwise 2 f(0) / lambda, valid for any loss because
    lambda/2 ||w*||^2 <= f(w*) <= f(0).
    """
    if loss in ("hinge", "rank") and sample_weight is None:
        return 1.0 / lam
    return max(2.0 * f0 / lam, 1e-300)


class LinearRun:
    """One linear Pegasos run that can be lengthened: T1 iterations, then on to T2 > T1, ...

    ``advance(T)`` returns the model :func:`fit_linear` returns for
    ``options`` with T iterations, bit for bit, while the iterations
    t <= the previous T are not run again: the compiled state and the
    generator of the order go on.  What changes with T is the suffix average
    (the mean of w_t for t >= ceil(F T), F = ``options.average_from``): it
    restarts at that iteration.  When the next length is known (``next_T``),
    the average of the next run starting at or before T is kept from its
    first iterate on: the iterations from ceil(F next_T) to T run on a copy
    as well (one iteration when the lengths double), so the model at T and
    the state that goes on are each the one of a run from scratch.  So a
    doubling schedule E, 2E, 4E, ... costs its last E epochs, not 2E - 1.

    Parameters
    ----------
    ex : pegasos.examples.Examples
    options : pegasos.options.TrainOptions
        Validated, binary classification or regression (``iterations`` and
        ``epochs`` are ignored: each ``advance`` gives T).
    labels : BinaryLabels, optional
        As :func:`fit_linear`.
    progress : callable(int) or None
        Called with the iterations done after each block (each iteration once).
    start : (w, b) or None
        As :func:`fit_linear`: the first iterate.
    seed : int, numpy SeedSequence or None
        Seed of the order's generator instead of ``options.seed`` (one-vs-rest
        gives each class its own stream).

    Raises
    ------
    ParameterError
        The rank loss (it samples pairs), k > m, or any error of :func:`fit_linear`.
    """

    def __init__(self, ex, options, *, labels=None, progress=None, start=None, seed=None):
        task = options.task
        if task == "ranking":
            raise ParameterError("a lengthened run samples examples, which the rank loss (pairs) does not")
        self.labels, self.y_run, self.sample_weight = run_targets(ex, options, labels)
        self.ex, self.options, self.progress = ex, options, progress
        plan = self._plan(1)
        self.orders = Orders(ex.m, plan.k, options.sampling, options.seed if seed is None else seed, None)
        f0 = objective_at_zero(options.loss, self.y_run, options.epsilon, self.sample_weight)
        self.radius2 = projection_radius2(options.loss, options.lam, f0, self.sample_weight)
        self.state = None if start is None else start_state(start[0], start[1], ex.n_features, options, plan,
                                                            self.radius2)
        self.t = 0

    def _plan(self, T):
        return self.options.replace(iterations=int(T), epochs=None).plan(self.ex.m)

    def _blocks(self, n, k):
        ex = self.ex
        return ((ex.indptr, ex.indices, ex.data, self.y_run, self.sample_weight, block, count)
                for block, count in self.orders.blocks(n, k))

    def _solve(self, n, plan, state, progress):
        return solve(self._blocks(n, plan.k), self.ex.n_features, self.options, plan, self.radius2,
                     progress=progress, load_from=(self.ex.indices, self.ex.m), state=state, return_state=True)

    def advance(self, T, next_T=None):
        """Go on to T iterations in all; the model of a run of T from scratch.

        Parameters
        ----------
        T : int > the iterations done so far
        next_T : int > T or None
            The length the run will be advanced to next, if known (see the class).

        Returns
        -------
        LinearModel
            Equal to ``fit_linear(ex, options.replace(iterations=T))``.

        Raises
        ------
        ParameterError
            T not beyond the iterations done, a suffix average that would have
            to start at an iteration already run (give ``next_T`` in the
            call before), divergence.
        """
        T = int(T)
        if T <= self.t:
            raise ParameterError(f"the run has done {self.t} iterations; it can only go on to more, not {T}")
        opts = self.options
        plan = self._plan(T)
        state = self.state
        if state is None:
            state = new_state(self.ex.n_features, opts, plan, self.radius2).get_state()
        if plan.avg_start and plan.avg_start != state["avg_start"]:
            if plan.avg_start <= self.t:
                raise ParameterError(f"the average of a run of {T} iterations starts at iteration {plan.avg_start}, "
                                     f"already run ({self.t}): give next_T when advancing to {self.t}")
            state = restart_average(state, plan.avg_start)
        split = None
        if plan.avg_start and next_T is not None:
            s = self._plan(next_T).avg_start - 1
            if self.t <= s < T:
                split = s
        if split is None:
            w, b, state = self._solve(T - self.t, plan, state, self.progress)
            end = state
        else:
            if split > self.t:
                _, _, state = self._solve(split - self.t, plan, state, self.progress)
            tail = list(self._blocks(T - split, plan.k))       # replayed: once for the model, once going on
            w, b, end = solve(iter(tail), self.ex.n_features, opts, plan, self.radius2,
                              load_from=(self.ex.indices, self.ex.m), state=state, return_state=True)
            _, _, state = solve(iter(tail), self.ex.n_features, opts, plan, self.radius2, progress=self.progress,
                                load_from=(self.ex.indices, self.ex.m), state=restart_average(state, split + 1),
                                return_state=True)
        self.state, self.t = state, T
        end["sampling"] = opts.sampling
        end["rng"] = self.orders.rng.bit_generator.state
        end["orders"] = self.orders.get_state()
        info = opts.header(plan, examples=self.ex.m)
        if opts.task != "binary":
            info["task"] = opts.task
        return LinearModel(w=w, bias=b, labels=self.labels, lam=float(opts.lam), bias_mode=opts.bias, info=info,
                           loss=opts.loss, epsilon=float(opts.epsilon) if opts.loss == "eps-insensitive" else None,
                           solver_state=end)


def restart_average(state, avg_start):
    """The solver state ``state`` (a ``get_state`` dict) with its running
    average emptied and starting at iteration ``avg_start`` (> t): the state
    a run whose average starts there has before that iteration."""
    u = state.get("u")
    return dict(state, avg_start=int(avg_start), n_avg=0, A=0.0, b_sum=0.0,
                u=None if u is None else np.zeros_like(np.asarray(u)))
