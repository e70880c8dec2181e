"""scikit-learn estimators over the Pegasos trainers.

:class:`PegasosClassifier`, :class:`PegasosRegressor` and :class:`PegasosRanker`
follow scikit-learn's estimator conventions (parameters stored as given in
``__init__``, validation in ``fit``, fitted attributes ending in ``_``), so
they work in ``Pipeline``, ``GridSearchCV``, ``cross_val_score`` and with
``clone``/pickle.  They call :func:`pegasos.train` (paper Fig. 1/2, any
loss of Sec. 5), :func:`pegasos.train_multiclass` (one-vs-rest,
Crammer-Singer, Sec. 5) and :func:`pegasos.train_kernel` (Fig. 3), so a
model equals the one these functions (and ``pegasos train``) give for the
same settings, bit for bit.

scikit-learn is an optional dependency (``pip install 'pegasos[sklearn]'``);
``import pegasos`` does not import this module.

Parameter names and meanings (shared by the three estimators)
---------------------------------------------------------------
The defaults of a linear model are :func:`pegasos.fit`'s, as ``pegasos
train`` uses them (not ``pegasos.train``'s, the paper's algorithm as such):
permutation sampling, the mean of the last half of the iterates, the step
offset t0 calibrated on a sample of the data and, when neither T nor
epochs is given, the number of epochs doubled until the objective settles
(``tol``; see the README's "What is solved"), so a model equals
``pegasos.fit`` of the same settings bit for bit.  Give
``sampling="uniform", average_from=None, step_offset=0, epochs=10`` for
``pegasos.train``'s defaults.

alpha : float > 0, default 1e-4
    The regularisation parameter lambda of the primal objective
    lambda/2 ||w||^2 + (1/m) sum_i loss_i (paper Eq. (1); ``pegasos train
    --lambda``).  Named ``alpha`` as scikit-learn's ``SGDClassifier`` names
    the same lambda (same default), rather than ``C`` = 1/(lambda m), whose
    meaning changes with the number of examples m (LIBLINEAR's and
    ``LinearSVC``'s ``C`` is that).
iterations : int > 0 or None
    The number of iterations T (each takes a batch of k examples, or k
    pairs for the ranker).
epochs : float > 0 or None
    Alternatively, passes over the data (T = epochs m / k).  Give at most one
    of the two; neither means the automatic length of :func:`pegasos.fit`
    for a linear classifier or regressor (10 epochs with ``engine``, as
    ``pegasos train`` on shards), the dual solver certified within 0.2% with
    an rbf or poly kernel (:func:`pegasos.kernel.fit_kernel_dual`), and 10
    with the sigmoid kernel and for the ranker.
batch_size : int, 1 <= k <= m, or None; default None (the ranker: 1)
    The mini-batch size k (Fig. 2).  None: k = 1, and with ``engine`` k =
    ceil(m / 128) (:func:`pegasos.engine_dask.automatic_batch_size`: an
    epoch is at most 128 rounds of the cluster, each a round trip to every
    worker; the header's ``batch_size_rule`` records it).
sampling : "uniform", "permutation" or "sequential", default "permutation"
    How batches are drawn (see :func:`pegasos.train`; the ranker always
    draws pairs uniformly).
projection : bool, default False
    Project onto the ball that holds the optimum after each step (Eq. (6)).
average : bool, default False
    Output the mean of the iterates w_1..w_T (Theorem 1); average_from
    then gives way when left at its default (another value is a
    ParameterError).
average_from : float in [0, 1) or None, default 0.5
    Output the mean of the iterates w_t for t >= ceil(average_from T);
    None outputs the last iterate w_{T+1} (the paper's experiments).
bias : "none", "feature" or "unregularized"; default "none", the regressor's "feature"
    "none": no intercept (the paper's problem, and ``pegasos train``'s
    default for classification); "feature": a constant feature 1 whose
    weight is the intercept, regularised with w (LIBLINEAR ``-B 1``; what
    scikit-learn's ``fit_intercept=True`` gives; ``pegasos train``'s default
    for regression); "unregularized": Sec. 6's heuristic.  Kernels take
    "none" only; the ranker has no intercept.
engine : pegasos.engine_dask.DaskEngine or None, default None
    Linear classifiers (one-vs-rest for more than two classes) and the
    regressor: train on this Dask cluster.  X is cut into one contiguous row block per worker, sent to the
    workers, and the run is exact mini-batch Pegasos over the union of the
    blocks (:func:`pegasos.engine_dask.fit_shards`; uniform i.i.d. batches,
    so ``sampling`` does not apply): the model is the one of the local shard
    engine on the same blocks, bit for bit, and depends on the number of
    workers only through the blocks.  No ``sample_weight``.  ``clone``
    shares the cluster.  Unset, k is chosen from m (see ``batch_size``),
    t0 is calibrated on a sample as ``pegasos train`` on shards does, and
    the run is 10 epochs.
step_offset : "auto" or float >= 0, default "auto"
    t0 of the step eta_t = 1/(lambda (t + t0)) (``pegasos train --t0``); 0
    is the paper's step.  "auto": for linear models t0 calibrated on a
    sample of the data as :func:`pegasos.fit` does (``partial_fit``: on its
    first batch, kept by the later ones; with ``engine``, on a sample of
    the blocks, :func:`pegasos.engine_dask.fit_shards`), and the paper's
    step with a kernel (the only one Fig. 3 has).
tol : float in (0, 1), default 0.002
    The stopping tolerance of the automatic runs (``pegasos train --tol``),
    a fraction of the objective: the dual passes, the kernel dual solver and
    the dual finish stop once the model is certified within it of the
    optimum, (P - D) / P <= tol (the header's ``certified_gap``; a
    ConvergenceWarning where a run ends above it); the doubling of the
    epochs stops when a doubling improves the objective by less than it.
    Runs of a given ``iterations``/``epochs`` use it only in their dual finish.
random_state : int >= 0, numpy RandomState/Generator or None, default 1
    The seed of pegasos' random generator (``pegasos train --seed``): an
    int is the seed itself, so the same int gives the same model as
    ``pegasos.train(seed=...)``; a RandomState or Generator draws the seed
    from itself; None draws it from numpy's global generator.
n_jobs : int or None, default None
    Threads (``pegasos train --jobs``), as scikit-learn counts them: None
    is 1, -1 every core, -2 all but one; they serve the mini-batch step of
    large batches (a binary linear model) and the classes of linear
    one-vs-rest; the model does not depend on it.  Kernel training runs on
    one thread (its predictions use one per core).
solver : "auto", "pegasos" or "dual", default "auto" (the classifier and the ranker)
    Which solver trains the model (``pegasos train --solver``,
    :func:`pegasos.solver.plan`): Pegasos; dual coordinate ascent from
    w = 0 until certified within ``tol``; or the rule of "auto", which
    takes Pegasos when ``iterations`` or ``epochs`` is given.
finish : None, "dual" or "none", default None (the classifier only)
    Dual passes after a Pegasos run (``pegasos train --finish``,
    :mod:`pegasos.finish`): "dual" runs them from the Pegasos model's
    margins until certified within ``tol`` and keeps the better model;
    "none" (as ``solver="pegasos"``) never.  Not with ``engine``.

Training in passes: ``partial_fit``
-----------------------------------
:meth:`PegasosClassifier.partial_fit` (linear models; one-vs-rest for more
than two classes, each class its own binary run of the class against the rest,
as ``fit`` trains it) and
:meth:`PegasosRegressor.partial_fit` run one epoch over the X they are given,
in its row order (``sampling="sequential"`` for that pass, whatever
``sampling`` says; ``iterations`` and ``epochs`` do not apply), continuing
the run: the counter t goes on, so the step eta_t = 1/(lambda (t + t0)) keeps
shrinking, and the running average goes on.  Two calls on the same data
therefore give, bit for bit, the model of ``fit`` with ``epochs=2,
sampling="sequential", finish="none"`` and the same other settings.  The length of the run
is not known in advance, so the output is the last iterate
(``average_from=None``) or the mean of all iterates since the first call
(Theorem 1's output) for any other ``average_from`` (the default 0.5
included) or ``average=True``: the ``fit`` it equals has ``average_from=0``
(or ``average_from=None``).  A call after ``fit`` continues the run ``fit``
made when it is a binary linear or regression one of plain Pegasos (the
average goes on over the iterates ``fit`` averaged).  After a ``fit`` whose
model is no Pegasos iterate (the dual finish's w(alpha), which the defaults
give, or early stopping's best model), and after a one-vs-rest ``fit`` (which
keeps no state), it goes on from the fitted weights (of each class):
the schedule at t = T plus m per finishing pass (as scikit-learn's SGD counts
``t_`` after ``fit``), the average counting the fitted model as the mean of
that many iterates, so that a pass over the same data leaves a certified
model where it is.  ``t_`` counts the iterations of all passes, ``n_iter_``
the passes.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data
except ImportError as exc:           # scikit-learn missing or older than 1.6 (no validate_data)
    raise ImportError("pegasos.sklearn needs scikit-learn >= 1.6; install it with "
                      "pip install 'pegasos[sklearn]'") from exc

from .defaults import DEFAULT_CACHE_MB, DEFAULT_LAMBDA, DEFAULT_TOL, MAX_WEIGHT, lambda_problem
from .errors import ParameterError

if TYPE_CHECKING:
    from typing import TypeAlias

    from numpy.typing import ArrayLike, NDArray
    from scipy.sparse import sparray, spmatrix
    from typing_extensions import Self

    #: The estimators' examples: a dense array-like or a scipy.sparse matrix or array, shape (m, n_features).
    Input: TypeAlias = "ArrayLike | spmatrix | sparray"

__all__ = ["PegasosClassifier", "PegasosRegressor", "PegasosRanker"]


def _warn_if_not_certified(model, X, y, sample_weight, tol):
    """A ConvergenceWarning (as LinearSVC gives one) when the dual passes stopped above the tolerance
    (the header's ``certified_gap``).  With the
    columns of most different scales, when they differ widely, or else the largest column when the
    features are all large (:func:`pegasos.data.scale_finding`; X's column numbers from 0)."""
    from .data import scale_finding

    info = getattr(model, "info", {})
    gap = info.get("certified_gap") if info.get("finish") == "dual" else None
    if gap is None or not float(gap) > tol:
        return
    solver = "the kernel dual solver" if "dual_updates" in info else "the dual finish"
    message = (f"the model is not certified within tol = {tol:g} of the optimum by {solver} (its "
               f"certified relative gap: {float(gap):.3g})")
    finding = scale_finding(X.indices, X.data, X.shape[1], X.shape[0]) if hasattr(X, "indices") else None
    if finding is not None and finding[0] == "uneven":
        large, s_large, small, s_small = finding[1]
        message += (f"; the columns' scales differ {s_large / s_small:.3g}-fold (column {large} reaches |x| = "
                    f"{s_large:.3g}, column {small} at most {s_small:.3g}): scale the features (e.g. "
                    "sklearn.preprocessing.MaxAbsScaler)")
    elif finding is not None:
        column, scale = finding[1]
        message += (f"; the features are not scaled (column {column} reaches |x| = {scale:.3g}): scale them to "
                    "[-1, 1] (e.g. sklearn.preprocessing.MaxAbsScaler) and choose alpha for the scaled data")
    warnings.warn(message, ConvergenceWarning, stacklevel=4)


_ACCEPT_SPARSE = ("csr", "csc", "coo")
_KERNELS = ("rbf", "poly", "sigmoid")
ENGINE_EPOCHS = 10       # default passes over the data of a linear model on an engine (pegasos train's on shards)
KERNEL_EPOCHS = 10       # ... of a kernel classifier (pegasos.train's default) and the ranker (over pairs)
AUTO_ETA0 = 0.1          # first step of step_offset="auto"
AVERAGE_FROM_DEFAULT = 0.5   # the estimators' average_from: the mean of the last half of the iterates


def _schedule_after_fit(model):
    """How many iterations partial_fit counts a fit whose model is no Pegasos iterate as (no solver
    state to continue): its T plus, for the dual finish's w(alpha), m per finishing pass (a pass
    visits each example once, as an epoch of k = 1 does), which is how scikit-learn's SGD counts
    t_ after fit (one-vs-rest: the most passes of any class, when any class took w(alpha); one count
    for every class, which weighs the fitted model of a class that kept its Pegasos average more, not
    less, than its own T would).  partial_fit's schedule goes on from there and its average counts the model as the
    mean of that many iterates (:func:`pegasos.linear.fit_linear`'s ``start``), so a pass over the
    data it was fitted on moves it by about 1/(passes + 1) of what the pass alone would: a9a 0.0005%,
    sparse text 0.1%, where a schedule from t = 1 undid the passes (0.0285 to 0.0915)."""
    info = model.info
    T = int(info.get("iterations", "0") or 0)
    if info.get("finish_kept", "pegasos") != "pegasos" and "finish_passes" in info:     # (one-vs-rest: any class)
        passes = max(int(p) for p in str(info["finish_passes"]).split(","))
        T += passes * int(info.get("train_examples", "0") or 0)
    return max(T, 1)


def _shown(value):
    """A label or number for a message: 1.0 and 'a', not np.float64(1.0) and np.str_('a')."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _as_csr(X):
    """A validated X (dense or scipy sparse) as a CSR matrix with sorted indices."""
    import scipy.sparse as sp

    X = sp.csr_matrix(X)
    if not X.has_sorted_indices:
        X = X.sorted_indices()
    return X


def _seed(random_state):
    """pegasos' integer seed for a scikit-learn random_state."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if not 0 <= random_state < 2 ** 64:
            raise ParameterError(f"random_state must be an integer seed from 0 to 2^64 - 1, got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    try:
        rng = check_random_state(random_state)
    except ValueError:
        raise ParameterError(f"random_state must be None, an integer >= 0, a RandomState or a Generator, "
                             f"got {random_state!r}") from None
    return int(rng.randint(0, 2**31 - 1))


def _sample_weight(sample_weight, m):
    """Per-example weights as float64 (m,), or None; ParameterError when unusable."""
    if sample_weight is None:
        return None
    try:
        sw = np.full(m, float(sample_weight)) if np.isscalar(sample_weight) \
            else np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("sample_weight must hold numbers, one per example") from None
    if sw.shape != (m,):
        raise ParameterError(f"sample_weight has shape {sw.shape}; it needs one weight per example, ({m},)")
    if not np.all((sw >= 0) & (sw <= MAX_WEIGHT)):
        raise ParameterError(f"sample_weight must be finite numbers in [0, {MAX_WEIGHT:g}]")
    if not np.any(sw > 0):
        raise ParameterError("sample_weight is zero for every example: at least one weight must be non-zero")
    return sw


def _info_settings(options, info):
    """Constructor parameters of the options a model file header records
    (:meth:`pegasos.options.TrainOptions.from_header`), such that a refit trains as the
    recorded run was asked to: the automatic length (the header's ``stop``: anything but a given
    length, or T = 0: the dual alone) is iterations None, a calibrated step offset
    (``step_offset_rule``) is "auto"."""
    automatic = info.get("stop", "length") not in ("length", "early stop") or not options.iterations
    calibrated = info.get("step_offset_rule") == "calibrated" or (automatic and "step_offset" not in info)
    return {
        "iterations": None if automatic else options.iterations,
        "epochs": None,
        "batch_size": options.batch_size,
        "sampling": options.sampling,
        "projection": bool(options.projection),
        "average": bool(options.average),
        "average_from": None if options.average else options.average_from,
        "step_offset": "auto" if calibrated else options.step_offset,
        "random_state": options.seed,
        "tol": options.tol,
    }


class _PegasosBase(BaseEstimator):
    """What the three estimators share: input checks, the common settings, fitted bookkeeping."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_X(self, X, reset):
        try:
            X = validate_data(self, X, reset=reset, accept_sparse=_ACCEPT_SPARSE,
                              dtype=(np.float64, np.float32))
        except ValueError as e:
            raise ParameterError(str(e).strip().replace("\n", " ")) from None
        return _as_csr(X)

    def _check_Xy(self, X, y, y_numeric, reset=True):
        try:
            X, y = validate_data(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=(np.float64, np.float32),
                                 y_numeric=y_numeric, reset=reset)
        except ValueError as e:
            raise ParameterError(str(e).strip().replace("\n", " ")) from None
        return _as_csr(X), y

    def _average_from(self):
        """average_from as the trainers take it: with ``average=True`` the default 0.5 gives way
        (the mean of every iterate, as SGDClassifier(average=True) asks), other values are an error."""
        af = self.average_from
        if self.average is True and af is not None:
            if af != AVERAGE_FROM_DEFAULT:
                raise ParameterError(f"average=True averages every iterate and average_from={af!r} a suffix of "
                                     "them: give one (average_from=None with average=True)")
            return None
        return af

    def _threads(self):
        """``n_jobs`` as a number of threads: None is 1, -1 every core, -2 all but one (scikit-learn's
        count); ParameterError for 0, a number below -cores or anything but an int."""
        n = self.n_jobs
        if n is None:
            return 1
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n == 0:
            raise ParameterError(f"n_jobs must be None, a positive integer or -1 (every core), got {n!r}")
        if n > 0:
            return int(n)
        cores = os.cpu_count() or 1
        if cores + 1 + n < 1:
            raise ParameterError(f"n_jobs = {n} leaves no thread of the {cores} cores")
        return int(cores + 1 + n)

    def _common(self, sampling=None, kernel=False, default_epochs=ENGINE_EPOCHS, automatic=False):
        """The keyword arguments common to pegasos.train and train_kernel (step_offset
        too for a linear model), with the estimators' defaults resolved.  ``automatic``
        (a linear fit through :func:`pegasos.fit`): no epochs when neither T nor epochs is
        given, and no step_offset for "auto", which pegasos.fit then chooses from the data."""
        problem = lambda_problem(self.alpha)
        if problem is not None:
            raise ParameterError(f"alpha (lambda): {problem}")
        epochs = self.epochs
        if epochs is None and self.iterations is None and not automatic:
            epochs = KERNEL_EPOCHS if kernel else default_epochs
        out = dict(lam=self.alpha, iterations=self.iterations, epochs=epochs,
                   batch_size=1 if self.batch_size is None else self.batch_size,
                   sampling=self.sampling if sampling is None else sampling, projection=self.projection,
                   average=self.average, average_from=self._average_from(), seed=_seed(self.random_state),
                   tol=self.tol, solver=getattr(self, "solver", "auto"))
        t0 = self.step_offset
        if kernel:
            if t0 not in ("auto", 0, 0.0):
                raise ParameterError(f"step_offset = {t0!r} is not available with a kernel (Fig. 3 has the "
                                     "paper's step): leave it at 'auto'")
        elif isinstance(t0, str):
            if t0 != "auto":
                raise ParameterError(f"step_offset must be 'auto' or a number >= 0, got {t0!r}")
            if not automatic:
                out["step_offset"] = 1.0 / (self.alpha * AUTO_ETA0)
        else:
            out["step_offset"] = t0
        return out

    def _fit_on_engine(self, X, y, sw, **problem):
        """The linear model trained on ``self.engine``: X's row blocks, one per worker, as shards."""
        from .engine_dask import EngineSettings, array_shards, fit_shards
        from .options import TrainOptions

        if not (hasattr(self.engine, "client") or hasattr(self.engine, "scheduler_info")):
            raise ParameterError(f"engine must be a pegasos.engine_dask.DaskEngine (e.g. DaskEngine(client) or "
                                 f"DaskEngine(local_workers=2)), a distributed.Client, or None; got {self.engine!r}")
        if sw is not None:
            raise ParameterError("sample_weight is not available with engine")
        common = self._common()
        common.pop("sampling")
        if self.step_offset == "auto":
            common.pop("step_offset")           # unset: fit_shards calibrates t0 on a sample of the blocks
        options = TrainOptions(n_threads=self._threads(), **problem, **common)
        client = getattr(self.engine, "client", self.engine)
        shards = array_shards(X, y, max(1, min(len(client.scheduler_info()["workers"]), X.shape[0])))
        return fit_shards(shards, options, EngineSettings(engine="dask", zero_based=True, n_features=X.shape[1]),
                          cluster=self.engine, auto_batch=self.batch_size is None)

    def _fit_linear(self, X, y, sw, **problem):
        """A linear model through :func:`pegasos.fit` with its automatic choices (preset "auto":
        t0 calibrated on a sample, the number of epochs by the doubling rule) where the
        parameters leave them, as ``pegasos train`` makes them."""
        from .api import fit
        from .errors import ConvergenceWarning as PegasosConvergenceWarning

        with warnings.catch_warnings():     # said as scikit-learn's ConvergenceWarning just below
            warnings.simplefilter("ignore", PegasosConvergenceWarning)
            model = fit((X, y, None, sw), preset="auto", **problem, **self._common(automatic=True))
        _warn_if_not_certified(model, X, y, sw, self.tol)
        return model

    def _partial_common(self, X=None, y=None, sw=None, labels=None, problem=None, first=True):
        """The keyword arguments of pegasos.train for one partial_fit pass: one
        sequential epoch, averaging that does not need T (see the module docstring).
        With step_offset "auto" the first pass calibrates t0 on its batch as
        :func:`pegasos.fit` would for ``fit(X, y, sampling="sequential")`` (``problem`` with
        ``multiclass="ovr"``: on the largest class against the rest, as fit's one-vs-rest); later
        passes keep the run's t0."""
        common = self._common(sampling="sequential")
        if self.step_offset == "auto" and problem is not None:
            if first:
                from .autotune import ovr_step_offset, step_offset_for
                from .examples import as_examples
                from .options import TrainOptions

                calibration = self._common(sampling="sequential", automatic=True)
                if common.get("average") or isinstance(common.get("average_from"), numbers.Real):
                    calibration.update(average=False, average_from=0.0)     # the pass averages every iterate
                options = TrainOptions(preset="auto", **problem, **calibration).validate()
                ex = as_examples((X, y, None, sw))
                common["step_offset"] = (ovr_step_offset(ex, options) if options.multiclass == "ovr"
                                         else step_offset_for(ex, options, labels))
            else:                   # (one-vs-rest: a state per class, all of the same t0)
                state = self.solver_state_
                common["step_offset"] = float((state[0] if isinstance(state, list) else state)["t0"])
        af = self.average_from
        if not self.average and isinstance(af, numbers.Real) and not isinstance(af, bool) and 0 <= af < 1:
            common.update(average=True, average_from=None)     # a suffix needs T, which is not known
        common.update(iterations=None, epochs=1)
        return common

    def _partial_run(self, model, state, first):
        """Record a partial_fit pass: the model, the state to go on from (one-vs-rest: the list of the
        classes' states, all at the same t), t_ and n_iter_."""
        one = state[0] if isinstance(state, list) else state
        T = int(one["t"])
        model.info["iterations"] = str(T)
        if one["avg_start"]:
            model.info["averaged_iterates"] = f"{one['avg_start']}..{T}"
        self.model_ = model
        self.solver_state_ = state
        self.n_iter_ = 1 if first else self.n_iter_ + 1
        self.t_ = T

    def _kernel(self):
        """The kernel to train with: None for the explicit linear w (``kernel`` None or "linear", and the
        estimators that have no kernel parameter)."""
        kernel = getattr(self, "kernel", None)
        return None if kernel is None or (isinstance(kernel, str) and kernel == "linear") else kernel

    def _fitted_weights(self):
        """The model of the last fit when partial_fit is to go on from its weights: a linear binary
        model with no solver state (the dual finish's w(alpha), or the best model of early stopping),
        or a one-vs-rest model (whose fit keeps no state), else None."""
        model = getattr(self, "model_", None)
        task = getattr(model, "task", None)
        if self._kernel() is not None or not (task == "multiclass" and model.method == "ovr" or task == "binary"
                                              and getattr(model, "w", None) is not None and model.solver_state is None):
            return None
        return model

    def _keep_state(self):
        """After fit: keep the solver state of a linear binary or regression model for partial_fit."""
        state = getattr(self.model_, "solver_state", None)
        if state is None:
            self.__dict__.pop("solver_state_", None)
        else:
            self.solver_state_ = state

    def _record_run(self, info):
        """t_ (iterations T of the run) and n_iter_ (passes over the data, rounded up)."""
        T = int(info.get("iterations", "0"))       # (a model of the dual alone has none)
        m = int(info["train_examples"])
        self.t_ = T
        self.n_iter_ = max(1, math.ceil(T * int(info.get("batch_size", "1")) / m - 1e-9)) if m else 0
        if T == 0 and "finish_passes" in info:      # no Pegasos iteration: the dual passes from w = 0
            self.n_iter_ = max(int(p) for p in str(info["finish_passes"]).split(","))
        elif T == 0 and "dual_updates" in info:    # the kernel dual solver: its updates, in passes of m
            self.n_iter_ = max(1, math.ceil(int(info["dual_updates"]) / m)) if m else 0

    def _set_loaded_params(self, model):
        """Set the constructor parameters ``model``'s header records; returns its
        :class:`pegasos.options.TrainOptions`."""
        from .options import TrainOptions
        from .outcome import dual_only

        options = TrainOptions.from_header(model.info)
        settings = _info_settings(options, model.info)
        if dual_only(model.info):      # no Pegasos setting recorded: the parameters keep their defaults
            settings = {k: v for k, v in settings.items() if k not in ("batch_size", "sampling", "projection",
                                                                       "average", "average_from")}
        settings.update(alpha=model.lam, bias=model.bias_mode)
        self.set_params(**{k: v for k, v in settings.items() if k in self.get_params()})
        return options

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the fitted model as a pegasos text model file (:func:`pegasos.save_model`),
        readable by ``pegasos predict/eval/objective`` and by :meth:`load`.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        PegasosError
            The file cannot be written (nothing half-written is left).
        """
        from .model import save_model

        check_is_fitted(self, "model_")
        save_model(self.model_, path)

    @classmethod
    def _load_model(cls, path):
        from .modelfile import load_model

        return load_model(path)


class PegasosClassifier(ClassifierMixin, _PegasosBase):
    """Linear or kernel SVM / logistic regression trained with Pegasos.

    Two classes train one binary problem (:func:`pegasos.train`, or
    :func:`pegasos.train_kernel` with a kernel); more train one-vs-rest or
    Crammer-Singer (:func:`pegasos.train_multiclass`; with a kernel,
    one-vs-rest of :func:`pegasos.train_kernel` problems, each with its own
    random stream derived from the seed).  Labels may be of any type that
    numpy can sort (numbers, strings); ``classes_`` holds them in increasing
    order and the class of index 1 is the positive one of a binary problem.

    Parameters
    ----------
    loss : "hinge", "log" or "squared-hinge", default "hinge"
        The loss of the primal objective (paper Sec. 5).  Kernels and
        Crammer-Singer take "hinge"; ``predict_proba`` needs "log".
    multiclass : "ovr" or "crammer-singer", default "ovr"
        How three or more classes are trained (ignored for two).
    kernel : None, "linear", "rbf", "poly" or "sigmoid", default None
        None (or "linear", as ``pegasos train --kernel linear`` and
        scikit-learn's SVC spell it) trains the explicit linear w; the others kernelized Pegasos
        (Fig. 3) with LIBSVM's kernels: (gamma <u,v> + coef0)^degree,
        exp(-gamma ||u - v||^2), tanh(gamma <u,v> + coef0).  Without ``iterations``,
        ``epochs``, ``budget``, ``projection`` or ``batch_size`` (and ``finish`` not "none"),
        rbf and poly with coef0 >= 0 solve the same problem in its dual instead, until
        certified within 0.2% of the optimum (:func:`pegasos.kernel.fit_kernel_dual`).
    gamma : float > 0, "scale", "auto" or None (1/n_features); degree : int >= 1 (3); coef0 : float (0)
        The kernel's parameters.  "auto" is None, 1/n_features (LIBSVM's
        default); "scale" is 1/(n_features Var(X)) over all entries of X,
        as scikit-learn's SVC computes it.
    cache_size : float >= 0, default 100
        Kernels: MiB of kernel rows the dual solver keeps (``pegasos train
        --cache-mb``, SVC's ``cache_size``); the model does not depend on it.
    budget : int >= 1 or None
        Kernels only: keep at most this many support vectors (not with
        projection or averaging).
    class_weight : dict {label: weight > 0}, "balanced" or None
        Multiplies the loss of each class's examples (LIBLINEAR ``-wi``);
        "balanced" gives class c the weight m / (K m_c).  Linear models only.
    alpha, iterations, epochs, batch_size, sampling, projection, average, average_from, bias,
    step_offset, random_state, n_jobs, finish, solver
        See the module docstring; ``solver`` is "auto", "pegasos" or "dual" (:func:`pegasos.solver.plan`).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The class labels, increasing.
    coef_ : ndarray of shape (1, n_features) for two classes, (K, n_features) otherwise, float64
        The weights w (linear models only).
    intercept_ : ndarray of shape (1,) or (K,), float64
        The bias b added to the decision values (0 without a bias).
    support_vectors_ : scipy CSR matrix (n_sv, n_features); dual_coef_ : ndarray (1, n_sv)
        Binary kernel models only: f(x) = sum_s dual_coef_[0, s] K(sv_s, x).
    n_features_in_ : int
    t_ : int
        The iterations T each binary (or the Crammer-Singer) problem ran.
    n_iter_ : int
        Passes over the data they amount to, ceil(T k / m); with T = 0 (the
        default where the dual passes from w = 0 certify the model) the
        most dual passes of any problem.
    model_ : pegasos LinearModel, MulticlassModel, KernelModel or list of KernelModel
        The trained model (what :meth:`save` writes).
    """

    def __init__(self, *, loss="hinge", multiclass="ovr", kernel=None, gamma=None, degree=3, coef0=0.0,
                 budget=None, alpha=DEFAULT_LAMBDA, iterations=None, epochs=None, batch_size=None,
                 sampling="permutation", projection=False, average=False, average_from=AVERAGE_FROM_DEFAULT,
                 bias="none", step_offset="auto",
                 class_weight=None, random_state=1, n_jobs=None, engine=None, finish=None, tol=DEFAULT_TOL,
                 cache_size=DEFAULT_CACHE_MB, solver="auto"):
        self.solver = solver
        self.tol = tol
        self.cache_size = cache_size
        self.engine = engine
        self.finish = finish
        self.loss = loss
        self.multiclass = multiclass
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.budget = budget
        self.alpha = alpha
        self.iterations = iterations
        self.epochs = epochs
        self.batch_size = batch_size
        self.sampling = sampling
        self.projection = projection
        self.average = average
        self.average_from = average_from
        self.bias = bias
        self.step_offset = step_offset
        self.class_weight = class_weight
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ------------------------------------------------------------- fitting --

    def fit(self, X: Input, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Train on X and labels y.

        Parameters
        ----------
        X : array-like or scipy sparse matrix (CSR, CSC, COO) of shape (m, n_features)
            float64 or float32 values (other numeric types become float64).
        y : array-like of shape (m,)
            Class labels of any sortable type, at least two distinct.
        sample_weight : array-like of shape (m,), finite and >= 0, or None
            Multiplies each example's loss (times the class weight);
            linear models only.

        Returns
        -------
        self

        Raises
        ------
        ParameterError (a ValueError)
            Bad input (NaN/inf, wrong shapes, one class) or a setting out of
            range; the message names it.
        """
        from . import trainers

        X, y = self._check_Xy(X, y, y_numeric=False)
        check_classification_targets(y)
        classes, y_index = np.unique(y, return_inverse=True)
        K = classes.size
        if K < 2:
            raise ParameterError(f"the labels hold one class ({_shown(classes[0])} only); a classifier needs at least "
                                 "two classes")
        values = self._label_values(classes)
        y_num = values[y_index]
        m = X.shape[0]
        sw = _sample_weight(sample_weight, m)
        class_weight = self._class_weights(classes, values, y_index)
        if self.loss not in ("hinge", "log", "squared-hinge"):
            raise ParameterError(f"loss must be hinge, log or squared-hinge, got {self.loss!r}")
        if self.multiclass not in ("ovr", "crammer-singer"):
            raise ParameterError(f"multiclass must be ovr or crammer-singer, got {self.multiclass!r}")
        self._check_cache_size()
        # finish: checked by the options of each run (TrainOptions.check_finish), for a kernel and an engine too
        if self.engine is not None:
            if self._kernel() is not None or (K > 2 and self.multiclass != "ovr"):
                raise ParameterError("engine trains linear classifiers, one-vs-rest for more than two classes "
                                     "(no kernel, no crammer-singer)")
            self.model_ = self._fit_on_engine(X, y_num, sw, loss=self.loss, bias=self.bias,
                                              class_weight=class_weight, finish=self.finish)
        elif self._kernel() is not None:
            self._fit_kernel(X, y_num, y_index, values, sw, class_weight)
        elif K == 2:
            self.model_ = self._fit_linear(X, y_num, sw, loss=self.loss, bias=self.bias,
                                           class_weight=class_weight, n_threads=self._threads(), finish=self.finish)
        else:
            self.model_ = self._fit_linear(X, y_num, sw, multiclass=self.multiclass, loss=self.loss,
                                           bias=self.bias, class_weight=class_weight,
                                           n_threads=self._threads(), finish=self.finish)
        self.classes_ = classes
        self._set_fitted()
        self._keep_state()
        return self

    def partial_fit(self, X: Input, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Self:
        """One more epoch over X, continuing the run (linear models; one-vs-rest for more than two classes).

        The pass visits the rows of X in their order, one batch of k after
        the other (``sampling="sequential"``), with the step schedule and the
        average going on from the earlier calls (see "Training in passes" in
        the module docstring): two calls on the same X equal ``fit`` with
        ``epochs=2, sampling="sequential"``, bit for bit.  With K > 2 classes
        each class c keeps its own binary run of c against the rest (labels
        +1/-1, the class weights and sample weights of every example, the
        same t0, t and average), as ``fit``'s one-vs-rest (paper Sec. 5)
        trains it, so the equality holds for each class; ``coef_`` is then
        (K, n_features) and ``decision_function`` (m, K).

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (m, n_features)
            The batch; later calls need the same n_features.
        y : array-like of shape (m,)
            Labels, each one of the classes.
        classes : array-like of the K >= 2 class labels, optional
            Needed on the first call when this y does not hold every class
            (scikit-learn's convention); taken from y when it does.  Later
            calls may repeat it; it must then be the same.
        sample_weight : array-like of shape (m,), finite and >= 0, or None
            Multiplies each example's loss (times ``class_weight``, which
            must be None or a dict: "balanced" needs all the data at once).

        Returns
        -------
        self

        Raises
        ------
        ParameterError (a ValueError)
            A kernel, fewer than two classes, more than two with
            ``multiclass="crammer-singer"``, a label not among the classes,
            classes that differ from the first call's,
            class_weight="balanced", k larger than m, or any bad input that
            :meth:`fit` refuses.
        """
        from . import trainers
        from .labels import BinaryLabels, sample_weights
        from .multiclass import MulticlassModel
        from .options import class_weights_text, fmt_label

        if self._kernel() is not None:
            raise ParameterError("partial_fit trains linear models: kernel must be None or 'linear'")
        if self.loss not in ("hinge", "log", "squared-hinge"):
            raise ParameterError(f"loss must be hinge, log or squared-hinge, got {self.loss!r}")
        if isinstance(self.class_weight, str):
            raise ParameterError("class_weight='balanced' needs all the data at once; partial_fit takes None or "
                                 "a dict")
        first = not hasattr(self, "solver_state_")
        fit_model = self._fitted_weights() if first else None     # a fit whose model is no Pegasos iterate
        fitted = fit_model is not None
        if fitted:
            first = False
        X, y = self._check_Xy(X, y, y_numeric=False, reset=first)
        check_classification_targets(y)
        if classes is not None:
            classes = np.unique(np.asarray(classes))
            if not first and not (classes.shape == self.classes_.shape and np.all(classes == self.classes_)):
                raise ParameterError(f"classes = {classes.tolist()!r} differ from those of the first call, "
                                     f"{self.classes_.tolist()!r}")
        elif first:
            classes = np.unique(y)
        else:
            classes = self.classes_
        K = classes.size
        if K < 2:
            raise ParameterError(f"partial_fit needs at least two classes, got {K} "
                                 f"({', '.join(map(repr, classes.tolist()))}); give classes= with all of them on the "
                                 "first call")
        if K > 2 and self.multiclass != "ovr":
            raise ParameterError(f"partial_fit trains more than two classes one-vs-rest only (multiclass='ovr'), not "
                                 f"multiclass={self.multiclass!r}; fit trains Crammer-Singer")
        y_index = np.searchsorted(classes, y)
        bad = (y_index >= K) | (classes[np.minimum(y_index, K - 1)] != y)
        if np.any(bad):
            i = int(np.argmax(bad))
            raise ParameterError(f"label {_shown(y[i])} (example {i + 1}) is not one of the classes "
                                 f"{classes.tolist()!r}")
        values = self._label_values(classes)
        y_num = values[y_index]
        sw = _sample_weight(sample_weight, X.shape[0])
        all_weights = self._class_weights(classes, values, y_index)
        # a batch may lack a class: its run takes the weights of those it holds, the header records them all
        class_weight = {v: w for v, w in (all_weights or {}).items() if np.any(y_num == v)} or None
        problem = dict(loss=self.loss, bias=self.bias, class_weight=class_weight, n_threads=self._threads())
        schedule = _schedule_after_fit(fit_model) if fitted else None
        if K == 2:
            labels = BinaryLabels(float(values[0]), float(values[1]))
            common = self._partial_common(X, y_num, sw, labels, problem, first or fitted)
            runs = [(y_num, sw, None if first or fitted else self.solver_state_,
                     (fit_model.w, fit_model.bias, schedule) if fitted else None)]
        else:
            # one-vs-rest as fit_multiclass trains it: class c (+1) against the rest (-1), each example
            # weighted by its class weight times its own weight, t0 calibrated on the largest class
            labels = BinaryLabels(-1.0, 1.0)
            common = self._partial_common(X, y_num, sw, None, dict(problem, multiclass="ovr"), first or fitted)
            weights = sample_weights(y_num, class_weight)
            if sw is not None:
                weights = sw if weights is None else weights * sw
            problem["class_weight"] = None
            states = [None] * K if first or fitted else self.solver_state_
            runs = [(np.where(y_index == c, 1.0, -1.0), weights, states[c],
                     (fit_model.W[c], float(fit_model.biases[c]), schedule) if fitted else None) for c in range(K)]
        fits = [trainers.train(X, target, labels=labels, sample_weight=weight, init=init, start=start, **problem,
                               **common) for target, weight, init, start in runs]
        W = np.vstack([f.w for f in fits])          # (1, n_features) for two classes, else (K, n_features)
        biases = np.array([float(f.bias) for f in fits])
        model: Any = fits[0]
        if K > 2:
            model = MulticlassModel(W=W.copy(), biases=biases.copy(), classes=values, lam=fits[0].lam,
                                    class_texts=[fmt_label(v) for v in values], loss=self.loss, bias_mode=self.bias,
                                    info=fits[0].info)
        if all_weights:
            model.info["class_weights"] = class_weights_text(all_weights)
        self.classes_ = classes
        self._partial_run(model, fits[0].solver_state if K == 2 else [f.solver_state for f in fits], first)
        self.coef_, self.intercept_ = W, biases
        self.n_features_in_ = int(model.n_features)
        return self

    @staticmethod
    def _label_values(classes):
        """The float label of each class in the model: the class itself when it is
        a number that float64 holds exactly, else its index 0..K-1."""
        if classes.dtype.kind in "biuf":
            values = classes.astype(np.float64)
            if np.all(values == classes) and np.all(np.isfinite(values)) and np.unique(values).size == classes.size:
                return values
        return np.arange(classes.size, dtype=np.float64)

    def _class_weights(self, classes, values, y_index):
        """class_weight as {model label value: weight}, or None."""
        cw = self.class_weight
        if cw is None:
            return None
        if isinstance(cw, str):
            if cw != "balanced":
                raise ParameterError(f"class_weight must be a dict, 'balanced' or None, got {cw!r}")
            counts = np.bincount(y_index, minlength=classes.size)
            return {float(v): y_index.size / (classes.size * c) for v, c in zip(values, counts)}
        if not isinstance(cw, dict):
            raise ParameterError(f"class_weight must be a dict, 'balanced' or None, got {type(cw).__name__}")
        out = {}
        for label, weight in cw.items():
            hit = [i for i, c in enumerate(classes.tolist()) if c == label]
            if len(hit) != 1:
                raise ParameterError(f"class_weight names label {_shown(label)}, which is not among the classes")
            if not isinstance(weight, numbers.Real) or not (math.isfinite(weight) and weight > 0):
                raise ParameterError(f"the class_weight of label {_shown(label)} must be a positive number, got {_shown(weight)}")
            out[float(values[hit[0]])] = float(weight)
        return out

    def _gamma(self, X):
        """The kernel's gamma for X (CSR, m x n): a number as given; None or "auto" 1/n (LIBSVM's and
        ``pegasos train``'s default); "scale" 1/(n Var(X)), the variance over all m n entries of X
        (zeros included; 1 where it is 0), as scikit-learn's SVC takes it."""
        gamma = self.gamma
        if not isinstance(gamma, str):
            return gamma
        n = max(1, X.shape[1])
        if gamma == "auto":
            return 1.0 / n
        if gamma != "scale":
            raise ParameterError(f"gamma must be a number > 0, 'scale', 'auto' or None, got {gamma!r}")
        size = float(X.shape[0]) * n
        if not size:
            return 1.0
        # two passes (the mean, then the squares about it, the zeros' included): E[x^2] - mean^2 cancelled,
        # features near 1e8 gave half SVC's gamma
        mean = float(X.sum()) / size
        stored = np.asarray(X.data, dtype=np.float64) - mean
        var = (float(stored @ stored) + (size - X.nnz) * mean * mean) / size
        return 1.0 / (n * var) if var > 0 else 1.0          # (SVC's 1 for constant X)

    def _check_cache_size(self):
        c = self.cache_size
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or not (math.isfinite(c) and c >= 0):
            raise ParameterError(f"cache_size must be a number of MiB >= 0, got {c!r}")

    def _fit_kernel(self, X, y_num, y_index, values, sw, class_weight):
        from .trainers import train_kernel
        from .labels import BinaryLabels

        if self.kernel not in _KERNELS:
            raise ParameterError(f"kernel must be None, 'linear', {', '.join(map(repr, _KERNELS))}, got {self.kernel!r}")
        for name, value, default in (("loss", self.loss, "hinge"), ("bias", self.bias, "none")):
            if value != default:
                raise ParameterError(f"{name} = {value!r} is not available with a kernel (it needs {default!r})")
        if class_weight is not None or sw is not None:
            raise ParameterError("class_weight and sample_weight are not available with a kernel")
        if values.size > 2 and self.multiclass != "ovr":
            raise ParameterError("a kernel trains several classes one-vs-rest only: multiclass='ovr'")
        from .options import TrainOptions
        from .outcome import record_outcome
        from .solver import Problem, Solver, plan

        # the solver as pegasos train chooses it (pegasos.solver.plan): by default the dual, certified within tol
        probe = TrainOptions(preset="auto", solver=self.solver, iterations=self.iterations, epochs=self.epochs,
                             budget=self.budget, projection=self.projection, kernel=self.kernel, coef0=self.coef0,
                             batch_size=1 if self.batch_size is None else self.batch_size, finish=self.finish,
                             tol=self.tol)
        chosen = plan(Problem(m=X.shape[0]), probe)
        dual = chosen.solver is Solver.DUAL
        common = self._common(kernel=True, automatic=dual)
        if dual:
            common["preset"] = "auto"
        kw = dict(kernel=self.kernel, gamma=self._gamma(X), degree=self.degree, coef0=self.coef0,
                  budget=self.budget, finish=self.finish, cache_mb=self.cache_size)
        if values.size == 2:
            self.model_ = record_outcome(train_kernel(X, y_num, **kw, **common), chosen, probe)
            _warn_if_not_certified(self.model_, X, y_num, None, self.tol)
            return
        seeds = np.random.SeedSequence(common.pop("seed")).spawn(values.size)
        labels = BinaryLabels(0.0, 1.0)
        self.model_ = [record_outcome(train_kernel(X, (y_index == c).astype(np.float64), labels=labels,
                                                   seed=int(seeds[c].generate_state(1)[0]), **kw, **common),
                                      chosen, probe)
                       for c in range(values.size)]

    def _set_fitted(self):
        from .kernel import KernelModel

        model = self.model_
        first = model[0] if isinstance(model, list) else model
        self.n_features_in_ = int(first.n_features)
        self._record_run(first.info)
        if isinstance(model, list):
            self.intercept_ = np.array([float(km.bias) for km in model])
        elif isinstance(model, KernelModel):
            self.intercept_ = np.array([float(model.bias)])
            self.support_vectors_ = model.support_matrix()
            self.dual_coef_ = model.coef.reshape(1, -1).copy()
        elif hasattr(model, "W"):
            self.coef_ = model.W.copy()
            self.intercept_ = np.asarray(model.biases, dtype=np.float64).copy()
        else:
            self.coef_ = model.w.reshape(1, -1).copy()
            self.intercept_ = np.array([float(model.bias)])

    # ---------------------------------------------------------- prediction --

    def decision_function(self, X: Input) -> NDArray[np.float64]:
        """Decision values.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (m, n_features_in_)

        Returns
        -------
        ndarray of shape (m,) for two classes (> 0 predicts ``classes_[1]``),
        (m, K) otherwise (column c for ``classes_[c]``), float64

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ParameterError (a ValueError)
            X with another number of features than the training data, or
            not a matrix of finite numbers.
        """
        check_is_fitted(self, "model_")
        X = self._check_X(X, reset=False)
        if isinstance(self.model_, list):
            return np.column_stack([km.decision_function(X) for km in self.model_])
        return self.model_.decision_function(X)

    def predict(self, X: Input) -> NDArray[Any]:
        """Predicted labels (elements of ``classes_``), shape (m,): the positive class
        where the decision value is > 0, or the class of the largest value."""
        f = self.decision_function(X)
        index = (f > 0).astype(np.intp) if f.ndim == 1 else np.argmax(f, axis=1)
        return self.classes_[index]

    def _has_proba(self):
        if self.loss != "log":
            raise AttributeError(f"predict_proba needs loss='log', not {self.loss!r}")
        return True

    @available_if(_has_proba)
    def predict_proba(self, X: Input) -> NDArray[np.float64]:
        """Class probabilities of a log-loss model, shape (m, K), float64, rows summing to 1.

        Two classes: P(classes_[1] | x) = 1/(1 + exp(-f(x))).  More
        (one-vs-rest): each class's logistic probability, divided by their
        sum over the classes (as scikit-learn's SGDClassifier does).
        Only with ``loss="log"`` (otherwise there is no such attribute).
        """
        check_is_fitted(self, "model_")
        p = self.model_.predict_proba(self._check_X(X, reset=False))    # as `pegasos predict --proba`
        return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p

    @available_if(_has_proba)
    def predict_log_proba(self, X: Input) -> NDArray[np.float64]:
        """Logarithm of :meth:`predict_proba`, shape (m, K)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    # --------------------------------------------------------------- files --

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model as a pegasos text model file (``pegasos predict`` reads it).

        Numeric labels are written as such (a kind other than int64 and
        float64, e.g. bool or int32, is named in ``PATH.classes``).  The file
        holds numbers only, so other labels (strings) are written as their
        indices 0..K-1 and the labels go to ``PATH.classes`` (JSON), which
        :meth:`load` reads back; the command line ignores that file and
        prints indices.

        Raises
        ------
        ParameterError
            A one-vs-rest kernel model (the kernel model file holds one
            binary model), or labels that are neither numbers nor strings.
        PegasosError
            The file cannot be written.
        """
        from .model import atomic_write

        check_is_fitted(self, "model_")
        if isinstance(self.model_, list):
            raise ParameterError("a one-vs-rest kernel model has no model file format (one binary kernel "
                                 "model per file); pickle it instead")
        sidecar = os.fspath(path) + ".classes"
        numeric = self.classes_.dtype.kind in "biuf" and np.array_equal(
            self._label_values(self.classes_), self.classes_.astype(np.float64))
        if not numeric:
            labels = self.classes_.tolist()
            if not all(isinstance(v, str) for v in labels):
                raise ParameterError("the model file keeps numeric or string labels only; pickle the estimator")
        super().save(path)
        # numeric labels of a kind the file cannot say (bool, int32, float32, ...): the sidecar names the kind
        kind = None if not numeric or self.classes_.dtype in (np.int64, np.float64) else self.classes_.dtype.str
        if numeric and kind is None:
            if os.path.isfile(sidecar):
                os.remove(sidecar)          # from an earlier model with string labels
        else:
            record = {"classes": labels} if not numeric else {"dtype": kind}
            digest = _file_digest(path)
            if digest is not None:
                record["model_sha256"] = digest     # ties the labels to this model file (see load)
            text = json.dumps(record, ensure_ascii=False) + "\n"
            atomic_write(sidecar, lambda f: f.write(text))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """A fitted classifier from a model file of :meth:`save` or ``pegasos train``.

        The constructor parameters are set from the file's header (T as
        ``iterations``, the seed as ``random_state``).  Numeric labels come
        back as int64 when they are all integers, else float64, or as the
        kind ``PATH.classes`` names; string labels from ``PATH.classes`` when
        it exists and matches the model.

        Raises
        ------
        ModelFormatError
            Not a pegasos classification model, or a damaged file.
        """
        from .errors import ModelFormatError
        from .kernel import KernelModel

        model = cls._load_model(path)
        if getattr(model, "task", "binary") not in ("binary", "multiclass"):
            raise ModelFormatError(path, f"a {model.task} model, not a classifier")
        if hasattr(model, "classes"):
            values = np.asarray(model.classes, dtype=np.float64)
        else:
            values = np.array([model.labels.negative, model.labels.positive])
        classes = values.astype(np.int64) if np.all(values == np.round(values)) else values
        sidecar = os.fspath(path) + ".classes"
        if os.path.isfile(sidecar):
            classes = _sidecar_classes(sidecar, path, values, classes)
        est = cls()
        options = est._set_loaded_params(model)
        if isinstance(model, KernelModel):
            est.set_params(kernel=model.kernel, gamma=model.gamma, degree=model.degree, coef0=model.coef0,
                           budget=None if model.info.get("budget", "-") == "-" else int(model.info["budget"]))
        else:
            est.set_params(loss=model.loss, multiclass=getattr(model, "method", "ovr"),
                           class_weight=_class_weight_of(options.class_weight, values, classes))
        est.model_ = model
        est.classes_ = classes
        est._set_fitted()
        return est


def _sidecar_classes(sidecar, path, values, classes):
    """The classes a model's ``PATH.classes`` file gives (:meth:`PegasosClassifier.save`): string labels for
    the label values 0..K-1, or the numpy kind of numeric labels (``dtype``, e.g. bool); ``classes`` as the
    model file gives them where the file does not apply or was written with another model file (a warning).

    Raises ModelFormatError for a file that is not such a record."""
    from .errors import ModelFormatError

    try:
        with open(sidecar, encoding="utf-8") as f:
            record = json.load(f)
        named, kind = record.get("classes"), record.get("dtype")
        if named is None and kind is None:
            raise KeyError("classes")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise ModelFormatError(sidecar, "not a class label file written by PegasosClassifier.save") from None
    if named is not None:
        if not np.array_equal(values, np.arange(values.size)):
            return classes
        if not (isinstance(named, list) and len(named) == values.size and all(isinstance(v, str) for v in named)):
            raise ModelFormatError(sidecar, f"it must list {values.size} string labels")
    else:
        try:
            dtype = np.dtype(kind)
        except (TypeError, ValueError):
            raise ModelFormatError(sidecar, f"unknown label kind {kind!r}") from None
        if dtype.kind not in "biuf" or not np.array_equal(values.astype(dtype).astype(np.float64), values):
            raise ModelFormatError(sidecar, f"the label kind {kind!r} does not hold the model's labels")
    digest = record.get("model_sha256")
    if digest is not None and digest != _file_digest(path):
        warnings.warn(f"{sidecar} was written with another model file than {os.fspath(path)} (which was "
                      "written again since): its labels are ignored", UserWarning, stacklevel=3)
        return classes
    return np.array(named) if named is not None else values.astype(dtype)


def _file_digest(path):
    """The SHA-256 of the regular file ``path`` (hex), or None for a pipe, a device or a file that cannot be read."""
    import hashlib

    try:
        if not os.path.isfile(path):
            return None
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return None


def _class_weight_of(weights, values, classes):
    """class_weight {class: weight} of a model header's {label value: weight} (None: none recorded)."""
    if not weights:
        return None
    out = {}
    for label, weight in weights.items():
        hit = np.flatnonzero(values == label)
        if hit.size:
            out[classes[hit[0]].item()] = weight
    return out


class PegasosRegressor(RegressorMixin, _PegasosBase):
    """Linear support vector regression trained with Pegasos.

    Minimises lambda/2 ||w||^2 + (1/m) sum_i max(0, |<w, x_i> + b - y_i| - epsilon)
    (the eps-insensitive loss, paper Sec. 5) with :func:`pegasos.train`.

    Parameters
    ----------
    epsilon : float >= 0, default 0.1
        Half-width of the insensitive zone, in the units of y.
    bias : "none", "feature" or "unregularized", default "feature"
        An intercept by default, as ``pegasos train --loss eps-insensitive``
        and scikit-learn's regressors (``fit_intercept=True``): targets seldom
        have mean 0, and without b the model predicts about 0 plus what w
        can fit.  The default is the value itself, not a rule resolved at
        fit time, because this estimator trains regression only and
        scikit-learn reports constructor values as they are (``get_params``,
        ``clone``); ``bias="none"`` fits no intercept.
    alpha, iterations, epochs, batch_size, sampling, projection, average, average_from,
    step_offset, random_state, n_jobs
        See the module docstring.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,), float64
    intercept_ : ndarray of shape (1,), float64
    n_features_in_, t_, n_iter_, model_ : as :class:`PegasosClassifier`
    """

    def __init__(self, *, epsilon=0.1, alpha=DEFAULT_LAMBDA, iterations=None, epochs=None, batch_size=None,
                 sampling="permutation", projection=False, average=False, average_from=AVERAGE_FROM_DEFAULT,
                 bias="feature", step_offset="auto", random_state=1, n_jobs=None, engine=None, tol=DEFAULT_TOL):
        self.tol = tol
        self.engine = engine
        self.epsilon = epsilon
        self.alpha = alpha
        self.iterations = iterations
        self.epochs = epochs
        self.batch_size = batch_size
        self.sampling = sampling
        self.projection = projection
        self.average = average
        self.average_from = average_from
        self.bias = bias
        self.step_offset = step_offset
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X: Input, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Train on X (array-like or sparse, shape (m, n_features)) and real targets y (m,).

        ``sample_weight`` (m,), finite and >= 0, multiplies each example's
        loss.  Returns self.  Raises ParameterError (a ValueError) for bad
        input or settings.
        """
        from .trainers import train

        X, y = self._check_Xy(X, y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        sw = _sample_weight(sample_weight, X.shape[0])
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, numbers.Real):
            raise ParameterError(f"epsilon must be a number >= 0, got {self.epsilon!r}")
        if self.engine is not None:
            self.model_ = self._fit_on_engine(X, y, sw, loss="eps-insensitive", epsilon=float(self.epsilon),
                                              bias=self.bias)
        else:
            self.model_ = self._fit_linear(X, y, sw, loss="eps-insensitive", epsilon=float(self.epsilon),
                                           bias=self.bias, n_threads=self._threads())
        self._set_fitted()
        self._keep_state()
        return self

    def partial_fit(self, X: Input, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """One more epoch over X (shape (m, n_features)) and targets y (m,),
        continuing the run.

        The rows are visited in their order, one batch of k after the other
        (``sampling="sequential"``), the step schedule and the average going
        on from the earlier calls (see "Training in passes" in the module
        docstring): two calls on the same data equal ``fit`` with
        ``epochs=2, sampling="sequential"``, bit for bit.  Later calls need
        the same n_features.  ``sample_weight`` as in :meth:`fit`.  Returns
        self.

        Raises
        ------
        ParameterError (a ValueError)
            k larger than m, or any bad input that :meth:`fit` refuses.
        """
        from .trainers import train

        first = not hasattr(self, "solver_state_")
        X, y = self._check_Xy(X, y, y_numeric=True, reset=first)
        y = np.asarray(y, dtype=np.float64)
        sw = _sample_weight(sample_weight, X.shape[0])
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, numbers.Real):
            raise ParameterError(f"epsilon must be a number >= 0, got {self.epsilon!r}")
        problem = dict(loss="eps-insensitive", epsilon=float(self.epsilon), bias=self.bias, n_threads=self._threads())
        model = train(X, y, sample_weight=sw, init=None if first else self.solver_state_, **problem,
                      **self._partial_common(X, y, sw, None, problem, first))
        self._partial_run(model, model.solver_state, first)
        self.coef_ = model.w.copy()
        self.intercept_ = np.array([float(model.bias)])
        self.n_features_in_ = model.n_features
        return self

    def _set_fitted(self):
        self.coef_ = self.model_.w.copy()
        self.intercept_ = np.array([float(self.model_.bias)])
        self.n_features_in_ = self.model_.n_features
        self._record_run(self.model_.info)

    def predict(self, X: Input) -> NDArray[np.float64]:
        """Predicted targets <w, x> + b, shape (m,), float64."""
        check_is_fitted(self, "model_")
        return self.model_.decision_function(self._check_X(X, reset=False))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """A fitted regressor from a regression model file (:meth:`save`, ``pegasos train
        --loss eps-insensitive``); raises ModelFormatError for another kind of model."""
        from .errors import ModelFormatError

        model = cls._load_model(path)
        if getattr(model, "task", None) != "regression":
            raise ModelFormatError(path, "not a regression model")
        est = cls()
        est._set_loaded_params(model)
        est.set_params(epsilon=model.epsilon)
        est.model_ = model
        est._set_fitted()
        return est


class PegasosRanker(_PegasosBase):
    """Linear pairwise ranking (SVMlight's ``-z p``) trained with Pegasos.

    Minimises lambda/2 ||w||^2 plus the mean hinge max(0, 1 - <w, x_a - x_b>)
    over the pairs (a, b) of examples with the same query id and
    y_a > y_b.  With ``step_offset`` left at "auto" it is trained as
    ``pegasos train --loss rank`` trains it: without ``iterations`` or
    ``epochs``, dual coordinate ascent on the pair differences x_a - x_b,
    certified within 0.2% of the optimum (:func:`pegasos.autotune.train_ranking`;
    ``t_`` 0 and ``n_iter_`` the passes); with one of them, that Pegasos run of
    pairs (the paper's step) and then the dual finish.  Given a step offset,
    the Pegasos run alone (:func:`pegasos.train` with ``loss="rank"``; T
    counts pairs, drawn uniformly).
    There is no intercept (it cancels in a difference) and there are no
    sample weights.

    Parameters
    ----------
    alpha, iterations, epochs, batch_size, random_state, projection, average, average_from,
    step_offset, n_jobs, solver
        See the module docstring; T and ``epochs`` count pairs: T = epochs P / k
        for the P ordered pairs (a, b) of one query with different relevance.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,), float64
    t_ : int
        The iterations T run (batches of k pairs).
    n_iter_ : int
        Passes over the P pairs they amount to, ceil(T k / P) (set by ``fit``,
        not by ``load``).
    n_features_in_, model_ : as :class:`PegasosClassifier`.
    """

    def __init__(self, *, alpha=DEFAULT_LAMBDA, iterations=None, epochs=None, batch_size=1, projection=False,
                 average=False, average_from=AVERAGE_FROM_DEFAULT, step_offset="auto", random_state=1, n_jobs=None,
                 tol=DEFAULT_TOL, solver="auto"):
        self.solver = solver
        self.tol = tol
        self.alpha = alpha
        self.iterations = iterations
        self.epochs = epochs
        self.batch_size = batch_size
        self.projection = projection
        self.average = average
        self.average_from = average_from
        self.step_offset = step_offset
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def fit(self, X: Input, y: ArrayLike, qid: ArrayLike | None = None) -> Self:
        """Train on X (array-like or sparse, shape (m, n_features)), relevance y (m,)
        and query ids qid (m,) integers >= 0; qid=None puts every example in one query.

        Returns self.  Raises ParameterError (a ValueError) for bad input,
        e.g. no pair with the same query and different relevance.
        """
        from .trainers import train

        X, y = self._check_Xy(X, y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        qid = _check_qid(qid, X.shape[0])
        if X.shape[0] < 2:
            raise ParameterError(f"ranking needs pairs of examples, got n_samples = {X.shape[0]}")
        if self.step_offset == "auto":
            # as `pegasos train --loss rank` runs it: no length, the dual passes on the pairs, certified
            # within tol (pegasos.autotune.train_ranking); a given length, that Pegasos run of pairs with
            # the paper's step, then the dual finish (it left epochs=3 8.6% above f*)
            from .api import fit

            self.model_ = fit((X, y, qid), preset="auto", loss="rank", n_threads=self._threads(),
                              **self._common(sampling="uniform", automatic=True))
        else:
            self.model_ = train(X, y, loss="rank", qid=qid, n_threads=self._threads(),
                                **self._common(sampling="uniform", default_epochs=KERNEL_EPOCHS))
        self._queries = bool(np.any(qid != qid[0]))        # several queries: score should be given them too
        self.coef_ = self.model_.w.copy()
        self.n_features_in_ = self.model_.n_features
        self.t_ = int(self.model_.info.get("iterations", "0"))      # (none: the dual alone)
        pairs = 2 * pairwise_counts(np.zeros(y.shape[0]), y, qid)[0]      # ordered pairs, as sampled
        self.n_iter_ = max(1, math.ceil(self.t_ * int(self.model_.info.get("batch_size", "1")) / pairs - 1e-9))
        if self.t_ == 0 and "finish_passes" in self.model_.info:      # the dual passes alone: count them
            self.n_iter_ = int(self.model_.info["finish_passes"])
        return self

    def predict(self, X: Input) -> NDArray[np.float64]:
        """Scores <w, x>, shape (m,), float64: a higher score ranks an example higher."""
        check_is_fitted(self, "model_")
        return self.model_.decision_function(self._check_X(X, reset=False))

    def score(self, X: Input, y: ArrayLike, qid: ArrayLike | None = None,
              sample_weight: ArrayLike | None = None) -> float:
        """Pairwise accuracy: the fraction of the pairs (a, b) with the same query id
        and y_a > y_b that the scores order correctly, f(x_a) > f(x_b) (a tie
        counts as wrong), as ``pegasos eval`` reports it.

        Parameters
        ----------
        X : array-like or sparse (m, n_features_in_); y : relevance (m,)
        qid : integers >= 0 (m,) or None (one query)
            Without it, after a fit on several queries, a UserWarning: pairs of
            different queries are compared.  scikit-learn's model selection
            passes qid to score only with metadata routing:
            ``sklearn.set_config(enable_metadata_routing=True)`` and
            ``PegasosRanker().set_fit_request(qid=True).set_score_request(qid=True)``.
        sample_weight : must be None (accepted for scikit-learn's scorers)

        Returns
        -------
        float in [0, 1]

        Raises
        ------
        ParameterError
            No such pair in (y, qid), or sample weights.
        """
        if sample_weight is not None:
            raise ParameterError("the ranker's score takes no sample weights")
        f = self.predict(X)
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.shape != f.shape or not np.all(np.isfinite(y)):
            raise ParameterError(f"y needs {f.shape[0]} finite relevance values")
        if qid is None and getattr(self, "_queries", False):
            warnings.warn("score without qid puts every example in one query, while fit was given several: "
                          "pairs of different queries are compared; pass qid (in GridSearchCV or "
                          "cross_val_score: sklearn.set_config(enable_metadata_routing=True) and "
                          "set_score_request(qid=True))", UserWarning, stacklevel=2)
        qid = _check_qid(qid, f.shape[0])
        pairs, correct = pairwise_counts(f, y, qid)
        if pairs == 0:
            raise ParameterError("no pair of examples with the same qid and different relevance to score")
        return correct / pairs

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """A fitted ranker from a ranking model file; raises ModelFormatError for another kind."""
        from .errors import ModelFormatError

        model = cls._load_model(path)
        if getattr(model, "task", None) != "ranking":
            raise ModelFormatError(path, "not a ranking model")
        est = cls()
        est._set_loaded_params(model)
        est.model_ = model
        est.coef_ = model.w.copy()
        est.n_features_in_ = model.n_features
        est.t_ = int(model.info.get("iterations", "0"))
        return est


def _check_qid(qid, m):
    if qid is None:
        return np.zeros(m, dtype=np.int64)
    q = np.asarray(qid)
    if q.shape != (m,) or q.dtype.kind not in "iu" or (q.size and q.min() < 0):
        raise ParameterError(f"qid needs {m} integer query ids >= 0, one per example")
    return q.astype(np.int64)


def pairwise_counts(f, y, qid):
    """(pairs, correctly ordered pairs) over pairs with the same qid and y_a > y_b.

    "Correct" means f_a > f_b.  O(m log m) time and O(m) memory (a Fenwick
    tree over the ranks of y within each query), whatever the query sizes.

    Parameters
    ----------
    f, y : float64 arrays of shape (m,); qid : int64 array of shape (m,)

    Returns
    -------
    (int, int)
    """
    order = np.lexsort((y, f, qid))
    pairs = correct = 0
    q_sorted = qid[order]
    cuts = np.flatnonzero(q_sorted[1:] != q_sorted[:-1]) + 1
    for group in np.split(order, cuts):
        yg, fg = y[group], f[group]          # sorted by f, then y
        _, ranks, counts = np.unique(yg, return_inverse=True, return_counts=True)
        n = yg.size
        pairs += (n * n - int(np.sum(counts.astype(np.int64) ** 2))) // 2
        tree = np.zeros(counts.size + 1, dtype=np.int64)
        start = 0
        while start < n:                     # examples with equal f: count, then insert
            stop = start
            while stop < n and fg[stop] == fg[start]:
                stop += 1
            for r in ranks[start:stop]:      # earlier examples with a smaller f and a smaller y
                i = int(r)
                while i > 0:
                    correct += int(tree[i])
                    i -= i & -i
            for r in ranks[start:stop]:
                i = int(r) + 1
                while i <= counts.size:
                    tree[i] += 1
                    i += i & -i
            start = stop
    return pairs, correct
