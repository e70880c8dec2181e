"""Keyword forms of the trainers: :func:`train`, :func:`train_multiclass`, :func:`train_kernel`.

Each builds a :class:`TrainOptions` from its keywords (with the paper's
defaults, ``preset="paper"``: i.i.d. sampling, the last iterate, the step
1/(lambda t), 10 epochs, unless the keywords say otherwise), runs one
trainer on arrays and records the outcome in the model's header
(:func:`pegasos.outcome.record_outcome`, under :func:`pegasos.solver.plan`'s
plan, as every entry point does); its diagnostics are raised as
:class:`pegasos.errors.ConvergenceWarning` (a run given no length says it ran
the default epochs, which nothing checked).  :func:`pegasos.fit` is the entry point that picks the
trainer and the automatic defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from .examples import as_examples
from .labels import BinaryLabels
from .linear import fit_linear
from .errors import ParameterError
from .options import TrainOptions
from .outcome import record_outcome, warn_diagnostics
from .solver import Problem, Solver, plan

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import ArrayLike

    from .io import Matrix
    from .kernel import KernelModel
    from .linear import LinearModel
    from .multiclass import MulticlassModel
    from .trace import Monitor


def train(X: Matrix, y: ArrayLike, *, labels: BinaryLabels | None = None, n_features: int | None = None,
          order: ArrayLike | None = None, progress: Callable[[int], object] | None = None,
          qid: ArrayLike | None = None, sample_weight: ArrayLike | None = None, init: dict | None = None,
          monitor: Monitor | None = None,
          start: tuple[ArrayLike, float] | tuple[ArrayLike, float, int | None] | None = None,
          **settings: Any) -> LinearModel:
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
    init : dict or None
        Warm start from an earlier model's ``solver_state`` (see
        :func:`pegasos.linear.fit_linear`).
    monitor : pegasos.trace.Monitor or None
        Checks during the run (see :func:`pegasos.linear.fit_linear`).
    start : (w, b), (w, b, t) or None
        Start from these weights with a fresh step schedule, or with the
        schedule going on from iteration t (see
        :func:`pegasos.linear.fit_linear`); not together with ``init``.
    **settings
        The fields of :class:`pegasos.options.TrainOptions`: ``lam`` (lambda;
        LIBLINEAR's C = 1/(lambda m)), ``iterations`` (T) or ``epochs``,
        ``batch_size`` (k), ``sampling``, ``projection``, ``average``,
        ``average_from``, ``bias``, ``seed``, ``loss``, ``epsilon``,
        ``class_weight``, ``step_offset`` (t0), ``n_threads``.

    Returns
    -------
    LinearModel

    Raises
    ------
    ParameterError
        A parameter out of range (lambda <= 0, T or k <= 0, k > m, ...), or
        labels that are not exactly two values (use :func:`pegasos.fit` or
        :func:`train_multiclass` for more).
    """
    options = TrainOptions(**{"preset": "paper", **settings}).validate()
    ex = as_examples((X, y, qid, sample_weight), n_features)
    chosen = _pegasos_plan(ex, options, resumed=init is not None or start is not None)
    if labels is None and options.task == "binary":
        labels = BinaryLabels.from_values(ex.y)
    return warn_diagnostics(record_outcome(fit_linear(ex, options, labels=labels, progress=progress, order=order,
                                                      init=init, monitor=monitor, start=start), chosen, options))


def _pegasos_plan(ex, options, resumed=False, dual_runs=False):
    """The plan of a keyword trainer's run (:func:`pegasos.solver.plan`, as every entry point makes it),
    whose outcome it records.  The linear ones run Pegasos' loop alone (``dual_runs`` False): ParameterError
    where the settings ask for the dual (T = 0)."""
    chosen = plan(Problem(m=ex.m, resumed=resumed), options)
    if chosen.solver is Solver.DUAL and not dual_runs:
        raise ParameterError(f"{options.subject('iterations')} 0 asks for the dual solver alone, and the keyword "
                             "trainers run Pegasos' loop (Fig. 1/2): pegasos.fit(..., solver=\"dual\") runs the dual")
    return chosen


def train_multiclass(X: Matrix, y: ArrayLike, *, method: str = "ovr", n_features: int | None = None,
                     cost: ArrayLike | None = None, class_texts: Sequence[str] | None = None, n_jobs: int = 2,
                     progress: Callable[[int], object] | None = None, sample_weight: ArrayLike | None = None,
                     **settings: Any) -> MulticlassModel:
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
    options = TrainOptions(**{"preset": "paper", "multiclass": method, "cost": cost, "n_threads": n_jobs,
                              **settings}).validate()
    ex = as_examples((X, y, None, sample_weight), n_features)
    chosen = _pegasos_plan(ex, options)
    from .multiclass import fit_multiclass      # imported when used: binary runs do not need it

    return warn_diagnostics(record_outcome(fit_multiclass(ex, options, class_texts=class_texts, progress=progress),
                                           chosen, options))


@overload
def train_kernel(X: Matrix, y: ArrayLike, *, kernel: str = ..., labels: BinaryLabels | None = ...,
                 n_features: int | None = ..., order: ArrayLike | None = ...,
                 progress: Callable[[int], object] | None = ..., return_state: Literal[False] = ...,
                 **settings: Any) -> KernelModel: ...
@overload
def train_kernel(X: Matrix, y: ArrayLike, *, kernel: str = ..., labels: BinaryLabels | None = ...,
                 n_features: int | None = ..., order: ArrayLike | None = ...,
                 progress: Callable[[int], object] | None = ..., return_state: Literal[True],
                 **settings: Any) -> tuple[KernelModel, Any]: ...
def train_kernel(X: Matrix, y: ArrayLike, *, kernel: str = "rbf", labels: BinaryLabels | None = None,
                 n_features: int | None = None, order: ArrayLike | None = None,
                 progress: Callable[[int], object] | None = None, return_state: bool = False,
                 **settings: Any) -> KernelModel | tuple[KernelModel, Any]:
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

    Raises
    ------
    ParameterError
        An unknown kernel, labels that are not exactly two values, or a
        setting out of range (gamma, degree, budget, lambda, ...).
    """
    options = TrainOptions(**{"preset": "paper", "kernel": kernel, **settings}).validate()
    ex = as_examples((X, y), n_features)
    chosen = _pegasos_plan(ex, options, dual_runs=True)        # (the kernel dual solver runs here)
    if labels is None:
        labels = BinaryLabels.from_values(ex.y)
    from .kernel import fit_kernel              # imported when used: linear runs do not need it

    out = fit_kernel(ex, options, labels=labels, progress=progress, order=order, return_state=return_state)
    warn_diagnostics(record_outcome(out[0] if return_state else out, chosen, options))
    return out
