"""A certified duality gap for a linear SVM: how far a model is from the optimum, proven.

For the primal problem of ``pegasos objective`` (paper Eq. (1), with class
weights c_i and optionally the bias as a regularised constant feature)::

    P(w) = lambda/2 ||w||^2 + 1/m sum_i c_i loss(y_i <w, x_i>)

the Lagrange dual, in the same scaling (C_i = c_i / (lambda m), LIBLINEAR's
C times the class weight), is::

    D(alpha) = lambda * ( sum_i alpha_i - 1/2 ||sum_i alpha_i y_i x_i||^2 - sum_i alpha_i^2 / (4 C_i) )

with 0 <= alpha_i <= C_i and no last term for the hinge loss, and
alpha_i >= 0 for the squared hinge.  By weak duality D(alpha) <= f* <= P(w)
for every feasible alpha and every w, so gap = P(model) - D(alpha) bounds
P(model) - f* from above: the model is proven to be within ``gap`` of the
optimum.

The dual point starts from the model's margins z_i = y_i <w, x_i> (the
optimality conditions: alpha_i = C_i where z_i < 1, 0 where z_i > 1; for the
squared hinge alpha_i = 2 C_i max(0, 1 - z_i)), scaled by the factor that
maximises D along that direction, and is then improved by passes of dual
coordinate ascent (Hsieh, Chang, Lin, Keerthi and Sundararajan, ICML 2008;
compiled in ``pegasos._dual``).  The dual value reported is recomputed from
alpha at the end, not taken from the solver's running sums.
"""

import math
import numbers
import time

import numpy as np

from .errors import ExampleError, ParameterError

DEFAULT_GAP_PASSES = 20
MAX_GAP_PASSES = 1_000_000
GAP_LOSSES = ("hinge", "squared-hinge")
GAP_BIAS_MODES = ("none", "feature")


def check_gap_model(model):
    """Raise ParameterError unless the duality gap is available for ``model``.

    Available: binary linear models with the hinge or the squared hinge loss
    and bias mode "none" or "feature" (class weights allowed).
    """
    from .linear import LinearModel

    if not isinstance(model, LinearModel):
        kind = "multiclass" if getattr(model, "task", None) == "multiclass" else (
            "kernel" if hasattr(model, "support_matrix") else type(model).__name__)
        raise ParameterError(f"the duality gap is not available for {kind} models "
                             "(only binary linear models with the hinge or squared hinge loss)")
    if model.task != "binary" or model.loss not in GAP_LOSSES:
        raise ParameterError(f"the duality gap is not available for the {model.loss} loss "
                             "(only the hinge and the squared hinge)")
    if model.bias_mode not in GAP_BIAS_MODES:
        raise ParameterError(f"the duality gap is not available with bias mode {model.bias_mode} "
                             "(only none and feature: an unregularized bias adds an equality constraint "
                             "to the dual)")


def check_passes(passes, name="passes"):
    """``passes`` as an int in [0, MAX_GAP_PASSES]; ParameterError naming ``name`` otherwise."""
    if isinstance(passes, bool) or not isinstance(passes, numbers.Integral):
        raise ParameterError(f"{name} must be a whole number, got {passes!r}")
    if not 0 <= passes <= MAX_GAP_PASSES:
        raise ParameterError(f"{name} must be between 0 and {MAX_GAP_PASSES}, got {passes}")
    return int(passes)


def _csr(X):
    """(indptr int64, indices int32, data float32/64, n_cols) of a CSR matrix, Chunk or dense array."""
    from .io import Chunk

    if isinstance(X, Chunk):
        indptr, indices, data = X.indptr, X.indices, X.data
        n_cols = int(indices.max()) + 1 if indices.size else 0
        return indptr, indices, data, n_cols
    import scipy.sparse as sp

    if not sp.issparse(X):
        X = sp.csr_matrix(np.atleast_2d(np.asarray(X, dtype=np.float64)))
    X = X.tocsr()
    data = X.data if X.data.dtype in (np.float32, np.float64) else X.data.astype(np.float64)
    return (np.ascontiguousarray(X.indptr, dtype=np.int64), np.ascontiguousarray(X.indices, dtype=np.int32),
            np.ascontiguousarray(data), int(X.shape[1]))


def _example_weights(model, raw):
    from .scoring import class_weights

    c = np.ones(raw.shape[0], dtype=np.float64)
    for label, weight in class_weights(model).items():
        c[raw == label] = weight
    return c


def dual_vector(indptr, indices, data, n_cols, coef, bias_value):
    """sum_i coef_i x_i with the constant feature's weight as last entry, shape (n_cols + 1,).

    ``coef`` has shape (m,) (alpha_i y_i).  Computed from scratch in float64.
    """
    from scipy.sparse import csr_matrix

    m = indptr.shape[0] - 1
    X = csr_matrix((data, indices, indptr), shape=(m, n_cols), copy=False)
    v = np.empty(n_cols + 1, dtype=np.float64)
    v[:n_cols] = X.T @ coef
    v[n_cols] = bias_value * math.fsum(coef)
    return v


def dual_value(alpha, v, diag):
    """D(alpha) / lambda = sum alpha - 1/2 ||v||^2 - 1/2 sum diag alpha^2, with compensated sums."""
    return math.fsum(alpha) - 0.5 * math.fsum(v * v) - 0.5 * math.fsum(diag * alpha * alpha)


def start_point(margins, upper, diag, loss):
    """The dual starting point from the model's margins z_i = y_i <w, x_i> (before scaling).

    Hinge: alpha_i = C_i where z_i < 1, else 0 (C_i = ``upper``); squared
    hinge: alpha_i = 2 C_i max(0, 1 - z_i) = max(0, 1 - z_i) / D_ii.
    """
    if loss == "hinge":
        return np.where(margins < 1.0, upper, 0.0)
    out = np.zeros_like(margins)
    ok = diag > 0
    out[ok] = np.maximum(0.0, 1.0 - margins[ok]) / diag[ok]
    return out


def duality_gap(model, X, y, *, passes=DEFAULT_GAP_PASSES, tol=None, lam=None, seed=1, return_alpha=False):
    """Certified duality gap of a binary linear model on (X, y).

    Parameters
    ----------
    model : LinearModel
        Binary, loss "hinge" or "squared-hinge", bias mode "none" or
        "feature" (the bias is then the weight of a constant feature 1),
        with or without class weights.
    X : scipy.sparse matrix, :class:`pegasos.io.Chunk` or dense array, shape (m, d)
        The examples the primal objective is taken over (usually the
        training set); any d (columns beyond the model's weights count as
        weight 0).
    y : array of shape (m,)
        Label values as in the training file (the model's two labels).
    passes : int in [0, 10^6]
        Passes of dual coordinate ascent after the start from the margins
        (each O(nnz(X))).
    tol : float in [0, 1) or None
        Stop after the first pass whose relative gap is at most ``tol``.
    lam : float > 0 or None
        lambda of the problem; default the model's.
    seed : int
        Seed of the coordinate orders.
    return_alpha : bool
        Also return the dual point (``alpha``, float64 (m,), in LIBLINEAR's
        scaling: 0 <= alpha_i <= C_i = c_i / (lambda m) for the hinge) and
        ``w_dual`` = sum_i alpha_i y_i x_i (float64 (d + 1,), the last entry
        the constant feature's weight, 0 without it).

    Returns
    -------
    dict
        ``primal`` P(model), exactly :func:`pegasos.objective`'s
        ``objective``; ``dual``, a lower bound on the optimum f* (the larger
        of D at the start and after the last pass, recomputed from alpha);
        ``dual_start``; ``gap`` = primal - dual >= P(model) - f*;
        ``rel_gap`` = gap / primal; ``passes`` (run); ``seconds`` (wall
        clock, primal included); ``examples``, ``lambda``, ``loss``,
        ``bias_mode``.

    Raises
    ------
    ParameterError
        A model kind without this dual (unregularized bias, log,
        eps-insensitive and rank losses, kernel and multiclass models), or a
        bad ``passes``, ``tol``, ``lam`` or ``seed``.
    ExampleError
        A label that is not one of the model's, X and y of different
        lengths, or no examples.
    """
    from . import _dual
    from .scoring import objective

    started = time.perf_counter()
    check_gap_model(model)
    passes = check_passes(passes)
    if tol is not None:
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (0.0 <= tol < 1.0):
            raise ParameterError(f"tol must be a number in [0, 1), got {tol!r}")
        tol = float(tol)
    if lam is None:
        lam = model.lam
    elif isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not (math.isfinite(lam) and lam > 0):
        raise ParameterError(f"lambda must be a positive number, got {lam!r}")
    lam = float(lam)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2 ** 64:
        raise ParameterError(f"seed must be a whole number in [0, 2^64), got {seed!r}")

    indptr, indices, data, n_cols = _csr(X)
    m = indptr.shape[0] - 1
    raw = np.asarray(y, dtype=np.float64).reshape(-1)
    if raw.shape[0] != m:
        raise ExampleError(f"X has {m} examples but y has {raw.shape[0]} labels")
    if m == 0:
        raise ExampleError("no examples: the duality gap needs at least one")
    y_pm = model.labels.encode(raw)

    primal = objective(model, X, raw, lam=lam)["objective"]
    if not math.isfinite(primal):
        raise ParameterError(f"the model's primal objective is not finite ({primal})")
    margins = y_pm * model.decision_function(X)

    bias_value = 1.0 if model.bias_mode == "feature" else 0.0
    C = _example_weights(model, raw) / (lam * m)
    if model.loss == "hinge":
        upper, diag = C, np.zeros(m)
    else:
        upper = np.where(C > 0, np.inf, 0.0)
        diag = np.zeros(m)
        np.divide(0.5, C, out=diag, where=C > 0)

    alpha = start_point(margins, upper, diag, model.loss)
    v = dual_vector(indptr, indices, data, n_cols, alpha * y_pm, bias_value)
    # the best multiple s alpha: D(s alpha) = s A - s^2/2 B, so s = A / B (capped at 1 for the box)
    a, b = math.fsum(alpha), math.fsum(v * v) + math.fsum(diag * alpha * alpha)
    s = a / b if b > 0 else 1.0
    if model.loss == "hinge":
        s = min(s, 1.0)
    alpha *= s
    v *= s
    dual_start = lam * dual_value(alpha, v, diag)
    alpha_start, v_start = (alpha.copy(), v.copy()) if return_alpha else (None, None)

    values = np.empty(max(passes, 1), dtype=np.float64)
    stop_at = math.inf if tol is None else primal * (1.0 - tol) / lam
    run = 0
    if passes > 0 and not (tol is not None and dual_start >= primal * (1.0 - tol)):
        run = _dual.coordinate_ascent(indptr, indices, data, y_pm, upper, diag, bias_value,
                                      alpha, v, passes, int(seed), stop_at, values)
        v = dual_vector(indptr, indices, data, n_cols, alpha * y_pm, bias_value)
    dual_end = lam * dual_value(alpha, v, diag)
    dual = max(dual_start, dual_end)
    gap = primal - dual
    out = {
        "primal": primal,
        "dual": dual,
        "dual_start": dual_start,
        "gap": gap,
        "rel_gap": gap / primal if primal > 0 else math.inf,
        "passes": int(run),
        "seconds": time.perf_counter() - started,
        "examples": m,
        "lambda": lam,
        "loss": model.loss,
        "bias_mode": model.bias_mode,
    }
    if return_alpha:
        if run == 0 or dual_start > dual_end:
            alpha, v = alpha_start, v_start
        out["alpha"], out["w_dual"] = alpha, v
    return out
