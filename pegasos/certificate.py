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
coordinate ascent with shrinking (Hsieh, Chang, Lin, Keerthi and
Sundararajan, ICML 2008, Algorithm 1 and Sec. 3.2; compiled in
``pegasos._dual``), the passes the dual finish runs
(:class:`ShrinkingPasses`).  The dual value reported is recomputed from
alpha at the end, not taken from the solver's running sums.
"""

from __future__ import annotations

import math
import numbers
import time
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .data import csr_arrays, expand_columns
from .defaults import MAX_GAP_PASSES, lambda_problem
from .errors import ExampleError, ParameterError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from .io import Matrix
    from .linear import LinearModel
    from .multiclass import MulticlassModel

# The bound of the passes run until the gap stops shrinking (``until_stalled``), whatever the data:
# the rounds also stop at AUTO_GAP_UPDATES (2^28) coefficient updates a problem, the work the
# shrinking passes actually did (as the dual finish counts it: the pass bound m + nnz of before,
# shrinking aside, left the default model of 3 generated classes at 1.06% after 3117 passes where
# its finish had proven 0.155%).  The bound of the passes only binds on small data; it was 1000
# with plain passes, which left the default heart_scale model (lambda = 1e-4) at 0.39% certified
# where its dual finish had proven 0.07% after 4096 passes.
AUTO_GAP_PASSES = 1 << 16
AUTO_GAP_UPDATES = 1 << 28      # bound of their coefficient updates (passes times m + nnz, shrinking aside)
STALL = 0.1                     # a doubling of the passes that closes less of the gap than this ...
STALL_FROM = 16                 # ... and less than the doubling before, from this many passes on, ends them
_BLOCK_UPDATES = 1 << 26      # coefficient updates per call into the compiled loop
SHRINK_SPREAD = 0.1             # the first spread of projected gradients at which shrunk coordinates return
GAP_LOSSES = ("hinge", "squared-hinge")
GAP_BIAS_MODES = ("none", "feature")


def check_gap_model(model):
    """Raise ParameterError unless the duality gap is available for ``model``.

    Available: linear models with the hinge or the squared hinge loss and
    bias mode "none" or "feature" (class weights allowed), binary,
    one-vs-rest or Crammer-Singer multiclass; ranking models of the rank loss (the hinge of
    the pair differences); kernel models of a positive semi-definite kernel
    without a bias (:func:`kernel_duality_gap`).
    """
    from .kernel import KernelModel
    from .linear import LinearModel
    from .multiclass import MulticlassModel
    from .solver import psd_kernel

    if isinstance(model, KernelModel):
        if not psd_kernel(model.kernel, model.coef0):
            raise ParameterError(f"the duality gap is not available for a {model.kernel} kernel with coef0 "
                                 f"{model.coef0!r} (not positive semi-definite: the dual bounds nothing)")
        if model.bias_mode != "none":
            raise ParameterError(f"the duality gap is not available with bias mode {model.bias_mode}")
        return
    if isinstance(model, MulticlassModel):
        if model.method not in ("ovr", "crammer-singer"):
            raise ParameterError(f"the duality gap is not available for {model.method} multiclass models")
    elif not isinstance(model, LinearModel):
        kind = "kernel" if hasattr(model, "support_matrix") else type(model).__name__
        raise ParameterError(f"the duality gap is not available for {kind} models "
                             "(only linear models with the hinge or squared hinge loss)")
    if model.task == "ranking" and model.loss == "rank":
        pass            # the hinge of the pair differences (pegasos.examples.pair_differences)
    elif model.task not in ("binary", "multiclass") or model.loss not in GAP_LOSSES:
        raise ParameterError(f"the duality gap is not available for the {model.loss} loss "
                             "(only the hinge, the squared hinge and the rank loss)")
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
    from .io import Chunk, SVMLightData

    indptr, indices, data = csr_arrays(X)         # checked: the compiled passes index with them unchecked
    if isinstance(X, SVMLightData):
        n_cols = int(X.n_features)
    elif isinstance(X, Chunk):
        n_cols = int(indices.max()) + 1 if indices.size else 0
    elif hasattr(X, "shape") and len(X.shape) == 2:
        n_cols = int(X.shape[1])
    else:
        n_cols = int(np.atleast_2d(np.asarray(X)).shape[1])
    return indptr, indices, data, n_cols


def _example_weights(model, raw):
    from .scoring import class_weights

    c = np.ones(raw.shape[0], dtype=np.float64)
    for label, weight in class_weights(model).items():
        if not (math.isfinite(weight) and weight >= 0):
            raise ParameterError(f"the model's class weight {weight!r} of label {label!r} is not a non-negative "
                                 "number: no duality gap for such a problem")
        c[raw == label] = weight
    return c


def _used_columns(indices, n_cols):
    """The examples' columns renumbered 0..u-1 when they use fewer than half of ``n_cols``.

    The dual side ``sum_i alpha_i y_i x_i`` is 0 at every column no example
    has, so the dual of the problem on the used columns, renumbered, is the
    dual in ``n_cols`` columns restricted to them (the same alpha, the same
    values bit for bit: the missing entries only add zeros to the sums), and
    a pass costs O(nnz + u) instead of O(nnz + n_cols) (hashed or sparse ids
    with a huge largest index).

    Parameters
    ----------
    indices : int32 (nnz,)
        Column indices of the CSR rows, each below ``n_cols``.
    n_cols : int

    Returns
    -------
    (indices, n_cols, columns)
        ``indices`` and ``n_cols`` as given and ``columns`` None when that
        does not pay; else the renumbered indices (int32 (nnz,)), u and the
        used columns (int64 (u,), increasing).
    """
    from .data import compact_columns

    if indices.shape[0] >= n_cols // 2:
        return indices, n_cols, None
    columns, compact = compact_columns(indices)
    if columns.shape[0] >= n_cols // 2:
        return indices, n_cols, None
    return compact, int(columns.shape[0]), columns


def _on_all_columns(w_dual, columns, n_cols):
    """``w_dual`` (float64 (u + 1,)) of a dual on the used ``columns`` (:func:`_used_columns`) in all
    ``n_cols`` columns: float64 (n_cols + 1,), the constant feature's weight last."""
    full = expand_columns(w_dual, columns, n_cols + 1)
    full[n_cols] = w_dual[columns.shape[0]]
    return full


def _examples_of(X, y):
    """(indptr, indices, data, n_cols, m, labels as float64 (m,)) of the examples a duality gap is taken over.

    Raises ExampleError for X and y of different lengths, or no examples."""
    indptr, indices, data, n_cols = _csr(X)
    m = indptr.shape[0] - 1
    raw = np.asarray(y, dtype=np.float64).reshape(-1)
    if raw.shape[0] != m:
        raise ExampleError(f"X has {m} examples but y has {raw.shape[0]} labels")
    if m == 0:
        raise ExampleError("no examples: the duality gap needs at least one")
    return indptr, indices, data, n_cols, m, raw


def dual_vector(indptr, indices, data, n_cols, coef, bias_value):
    """sum_i coef_i x_i with the constant feature's weight as last entry, shape (n_cols + 1,).

    ``coef`` has shape (m,) (alpha_i y_i).  Computed from scratch in float64
    (:func:`pegasos._dual.combine_rows`, without SciPy).
    """
    from . import _dual

    v = np.empty(n_cols + 1, dtype=np.float64)
    _dual.combine_rows(indptr, indices, data, np.ascontiguousarray(coef, dtype=np.float64), float(bias_value), v)
    return v


def dual_value(alpha, v, diag):
    """D(alpha) / lambda = sum alpha - 1/2 ||v||^2 - 1/2 sum diag alpha^2, with compensated sums
    (:func:`pegasos._dual.dual_sums`, compiled: ``math.fsum`` took 7 ms for one ||v||^2 of sector's
    55,197 columns, a pass of the data's 1M values 3.7 ms)."""
    from . import _dual

    total, square, curvature = _dual.dual_sums(alpha, v, diag)
    return total - 0.5 * square - 0.5 * curvature


def dual_bound(lam, alpha, v, diag):
    """The lower bound on f* that the dual point (alpha, v) certifies: lambda D(alpha) (primal
    scaling; :func:`dual_value`), or 0 where that is not a finite number above 0.  0 is the bound of
    alpha = 0 and always holds (every loss is >= 0, so f* >= 0).  Passes whose values overflow
    (feature values or 1/(lambda m) beyond about 1e150) end in nan or -inf, which certify nothing;
    a nan once read as a gap of 0% (max(0, nan) is 0)."""
    value = lam * dual_value(alpha, v, diag)
    return value if math.isfinite(value) and value > 0.0 else 0.0


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


def scaled_start(indptr, indices, data, n_cols, y_pm, margins, upper, diag, loss, bias_value):
    """The dual start from the margins (:func:`start_point`) times the best factor s along it, and its
    v = sum alpha_i y_i x_i: D(s alpha) = s A - s^2/2 B, so s = A / B (capped at 1 for the hinge's
    box).  Returns (alpha, v), float64 (m,) and (n_cols + 1,)."""
    alpha = start_point(margins, upper, diag, loss)
    v = dual_vector(indptr, indices, data, n_cols, alpha * y_pm, bias_value)
    from . import _dual

    a, square, curvature = _dual.dual_sums(alpha, v, diag)
    b = square + curvature
    s = a / b if b > 0 else 1.0
    if loss == "hinge":
        s = min(s, 1.0)
    alpha *= s
    v *= s
    return alpha, v


def problem_terms(indptr, indices, data, n_cols, c, lam, loss, bias_value, row_norms=None):
    """The box, diagonal and curvature of one binary dual problem (:mod:`pegasos._dual`'s U, D, Q_ii).

    C_i = c_i / (lambda m); hinge: U_i = C_i, D_ii = 0; squared hinge:
    U_i = inf (0 where c_i = 0), D_ii = 1/(2 C_i); Q_ii = ||x_i||^2 +
    bias_value^2 + D_ii.  Each float64 (m,).  ``row_norms``: the ||x_i||^2
    when the caller has them.
    """
    from . import _dual

    m = indptr.shape[0] - 1
    C = c / (lam * m)
    if loss == "hinge":
        upper, diag = C, np.zeros(m)
    else:
        upper = np.where(C > 0, np.inf, 0.0)
        diag = np.zeros(m)
        np.divide(0.5, C, out=diag, where=C > 0)
    if row_norms is None:
        row_norms = np.empty(m)
        _dual.row_norms(indptr, data, row_norms)
    bad = np.flatnonzero(~np.isfinite(row_norms))
    if bad.size:
        i = int(bad[0])
        detail = "its squared norm is not a finite number (its values overflow float64)"
        raise ExampleError(f"example {i + 1}: {detail}", i, detail)
    qii = row_norms + bias_value ** 2 + diag
    return upper, diag, qii


class ShrinkingPasses:
    """Passes of dual coordinate ascent with shrinking on one binary problem, resumed from call to call.

    Hsieh, Chang, Lin, Keerthi and Sundararajan (ICML 2008), Sec. 3.2: a
    coordinate stuck at a bound of its box leaves the passes until the
    projected gradients of the others are within ``SHRINK_SPREAD`` of each
    other (:func:`pegasos._dual.coordinate_ascent_shrinking`).  The duality
    gap (:func:`binary_dual`) and the dual finish
    (:func:`pegasos.finish.finish_problem`) both run their passes here, each
    with its own stopping rule.

    Parameters
    ----------
    indptr, indices, data : CSR arrays (int64, int32, float32/64) of the m examples
    y_pm : float64 (m,)
        Labels in {-1, +1}.
    upper, diag, qii : float64 (m,)
        The box, diagonal and curvature of :func:`problem_terms`.
    bias_value : float
        1.0 for a regularised constant feature, else 0.0.
    alpha, v : float64 (m,) and (n_cols + 1,)
        A feasible start and its sum_i alpha_i y_i x_i; updated in place.
    seed : int
        Seed of the coordinate orders.
    helper : bool
        The passes may use a second processor: on sets larger than the
        caches they run with a helper thread that reads the rows of each
        pass's order ahead of the loop (:func:`pegasos._dual.prefetch_thread`).
        No value depends on it.

    The iterates depend only on the passes run so far, not on how they are
    cut into calls of :meth:`run` (nor into the blocks of about
    ``_BLOCK_UPDATES`` coefficient updates each call is cut into, so that
    Ctrl-C is seen in between).
    """

    def __init__(self, indptr, indices, data, y_pm, upper, diag, qii, bias_value, alpha, v, *, seed, helper=False):
        from . import _dual

        m = indptr.shape[0] - 1
        _dual.check_columns(indptr, indices, v.shape[0] - 1)      # once, not at every call of run
        self._args = (indptr, indices, data, y_pm, upper, diag, qii, float(bias_value), alpha, v)
        self._active = np.arange(m, dtype=np.int64)
        self._counts = np.array([m, 0], dtype=np.int64)
        self._bounds = np.array([np.inf, -np.inf, SHRINK_SPREAD])
        self._state = np.array([seed], dtype=np.uint64)
        self._helper = bool(helper)
        self._helper_timing = np.array([-1.0, -1.0, 0.0])     # the helper's timings, kept from call to call
        self._per_pass = int(indptr[m]) + m
        self._values = np.empty(0)
        self.value = math.nan
        self.rise = math.inf

    @property
    def work(self):
        """The work done so far: 1 + nnz(x_i) for each visit of a coordinate i (shrunk ones cost nothing)."""
        return int(self._counts[1])

    def run(self, passes, stop_at=math.inf):
        """Run up to ``passes`` passes (int >= 0); stop after the first whose dual value D(alpha)/lambda,
        from the maintained v, is >= ``stop_at``.  Returns the passes run; ``value`` is then that dual
        value after the last of them (nan before the first pass), and ``rise`` how much the last pass
        raised it (inf after the first)."""
        from . import _dual

        done = 0
        block = max(1, _BLOCK_UPDATES // max(1, self._per_pass))
        if self._values.shape[0] < min(block, passes):
            self._values = np.empty(min(block, passes))
        while done < passes:
            want = min(block, passes - done)
            got = _dual.coordinate_ascent_shrinking(*self._args, self._active, self._counts, self._bounds,
                                                    self._state, want, self._values, stop_at, checked=True,
                                                    helper=self._helper, helper_timing=self._helper_timing)
            done += got
            if got:
                before = self.value if got == 1 else float(self._values[got - 2])
                self.value = float(self._values[got - 1])
                self.rise = self.value - before if math.isfinite(before) else math.inf
            if got < want:
                break
        return done


class CrammerSingerPasses:
    """Passes of the sequential dual method for Crammer-Singer from W = 0 (Keerthi, Sundararajan, Chang,
    Hsieh and Lin, KDD 2008; :func:`pegasos._dual.cs_passes`, with shrinking), resumed from call to call.

    The problem is paper Eq. (20) with lambda, costs delta(y, r), example weights c_i and an optional
    regularised constant feature; C_i = c_i / (lambda m).  Every dual point alpha (m, K) gives W(alpha)
    and a lower bound lambda D(alpha) <= f*.  The dual finish
    (:func:`pegasos.finish.finish_crammer_singer`) and the duality gap of a Crammer-Singer model
    (:func:`duality_gap`) both run their passes here.

    Parameters
    ----------
    indptr, indices, data : CSR arrays (int64, int32, float32/64) of the m examples
    n_cols : int, every column index is below it
    yc : int array (m,), class indices in [0, K)
    cost : float64 (K * K,), delta(y, r) at [y * K + r]
    c : float64 (m,), the example weights c_i >= 0
    lam : float > 0
    bias_value : 1.0 for a regularised constant feature, else 0.0
    seed : int, the seed of the orders

    Raises
    ------
    ValueError
        A column index outside [0, n_cols).
    """

    def __init__(self, indptr, indices, data, n_cols, yc, cost, c, lam, bias_value, *, seed):
        from . import _dual

        m = indptr.shape[0] - 1
        K = int(round(math.sqrt(cost.shape[0])))
        _dual.check_columns(indptr, indices, n_cols)
        self.m, self.K, self.n_cols, self.lam, self.bias_value = m, K, int(n_cols), float(lam), float(bias_value)
        self._data = (indptr, indices, data, np.ascontiguousarray(yc, dtype=np.int32),
                      np.ascontiguousarray(cost, dtype=np.float64))
        self.c = np.ascontiguousarray(c, dtype=np.float64)
        qii = np.empty(m)
        _dual.row_norms(indptr, data, qii)
        qii += self.bias_value ** 2
        self._terms = (self.c / (self.lam * m), qii, self.bias_value)
        self.alpha = np.zeros((m, K))
        self.W = np.zeros((self.n_cols + 1, K))
        self._state = (np.arange(m, dtype=np.int64), np.array([m, 0], dtype=np.int64),
                       np.array([math.inf, SHRINK_SPREAD]), np.tile(np.arange(K, dtype=np.int32), (m, 1)),
                       np.full(m, K, dtype=np.int32), np.array([seed], dtype=np.uint64))
        self._values = np.empty(0)
        self.value = math.nan
        self.passes = 0

    @property
    def work(self):
        """Work so far: K (1 + nnz(x_i)) for each visit of example i (shrunk ones cost nothing)."""
        return int(self._state[1][1])

    def run(self, passes, stop_at=math.inf):
        """Up to ``passes`` passes; stop after the first whose D(alpha) (from the maintained W, the
        solver's scaling: lambda D is the bound) is >= ``stop_at``.  Returns the passes run; ``value`` is
        D after the last."""
        from . import _dual

        done = 0
        while done < passes:
            want = min(passes - done, 1 << 16)
            if self._values.shape[0] < want:
                self._values = np.empty(want)
            got = _dual.cs_passes(*self._data, *self._terms, self.alpha, self.W, *self._state, want, self._values,
                                  stop_at, True)
            done += got
            self.value = float(self._values[got - 1])
            if got < want:
                break
        self.passes += done
        return done

    def primal(self, weights):
        """Eq. (20)'s objective of weights (n_cols + 1, K) (column r class r's; the last row the constant
        feature's)."""
        from . import _dual

        loss, sq = _dual.cs_primal(*self._data[:4], self._data[4], self.c, weights, self.bias_value, True)
        return 0.5 * self.lam * sq + loss / self.m

    def primal_at_zero(self):
        """Eq. (20)'s objective of W = 0 without a pass over the rows: the mean of c_i max_r e_i^r."""
        yc, cost = self._data[3], self._data[4]
        return float(np.dot(self.c, cost.reshape(self.K, self.K).max(axis=1)[yc])) / self.m

    def exact(self):
        """(W(alpha), its objective, lambda D(alpha)) computed afresh from alpha: the certificate."""
        from scipy import sparse

        indptr, indices, data, yc, cost = self._data
        X = sparse.csr_matrix((data, indices, indptr), shape=(self.m, self.n_cols))
        W = np.zeros((self.n_cols + 1, self.K))
        W[:self.n_cols] = np.asarray(X.T @ self.alpha)
        W[self.n_cols] = self.bias_value * self.alpha.sum(axis=0)
        p = self.primal(W)
        lin = float(np.sum(cost.reshape(self.K, self.K)[yc] * self.alpha))
        dual = self.lam * (-0.5 * float(np.sum(W * W)) - lin)       # (the last row is 0 without the feature)
        return W, p, dual


def crammer_singer_problem(model, arrays, raw, c, *, lam=None, seed=None):
    """The :class:`CrammerSingerPasses` of a Crammer-Singer ``model``'s problem on the examples ``arrays``
    (indptr, indices, data, n_cols) with labels ``raw`` and weights ``c``; lambda and the seed default
    to the model's."""
    from .multiclass import crammer_singer_costs

    indptr, indices, data, n_cols = arrays
    return CrammerSingerPasses(indptr, indices, data, n_cols, model.class_index(raw),
                               crammer_singer_costs(model.cost, model.n_classes), c,
                               float(model.lam if lam is None else lam),
                               1.0 if model.bias_mode == "feature" else 0.0,
                               seed=int(model.info.get("seed", 1)) if seed is None else int(seed))


def model_weights(model, n_cols):
    """A multiclass model's W and biases as the (n_cols + 1, K) weights of :class:`CrammerSingerPasses`."""
    out = np.zeros((n_cols + 1, model.n_classes))
    cols = min(n_cols, model.n_features)
    out[:cols] = model.W[:, :cols].T
    if model.bias_mode == "feature":
        out[n_cols] = model.biases
    return out


def binary_dual(indptr, indices, data, n_cols, y_pm, c, margins, *, lam, loss, bias_value, passes,
                stop_at=math.inf, seed=1, primal=None, max_work=math.inf, helper=False):
    """Dual lower bound of one binary problem from its margins: start, then coordinate ascent
    (:class:`ShrinkingPasses`).

    Parameters
    ----------
    indptr, indices, data : CSR arrays (int64, int32, float32/64) of the m examples
    n_cols : int
        Number of columns (every index is below it).
    y_pm, c, margins : float64 (m,)
        Labels in {-1, +1}, example weights c_i >= 0, margins y_i <w, x_i> of the model.
    lam : float > 0; loss : "hinge" or "squared-hinge"; bias_value : 1.0 or 0.0
    passes : int >= 0
    stop_at : float
        Stop after the first pass whose dual value (primal scaling) is >= this.
    seed : int
    max_work : float
        With ``primal``: no round starts once the passes have done this many coefficient updates
        (:attr:`ShrinkingPasses.work`), and the last is cut to fit at their rate so far.
    helper : bool
        As :class:`ShrinkingPasses`.
    primal : float or None
        The primal value of the model: the passes then run in rounds that
        double the passes run (1, 1, 2, 4, ...) and stop after the second
        round in a row ending at 16 passes or more that closes less than
        ``STALL`` (10%) of the gap it started with, and less than the round
        before: the gap has stopped shrinking (``passes`` is the bound;
        one such round can be a plateau the passes leave: the default
        model of 3 generated classes at lambda = 1e-4 stopped at 1.06%
        after 3117 passes, where its dual finish had proven 0.155%).
        Measured on the default models at lambda = 1e-4 (bound
        :data:`AUTO_GAP_PASSES`; relative gap certified, true, and the
        header's ``certified_gap`` of the dual finish, where there is one):
        mushrooms stops at 512 passes (0.118%, 0.117%), reuters at 64
        (0.143%, 0.145%), w8a at 64 (0.121%, 0.196%), a9a without the
        finish at 128 (0.47%), heart_scale at 32768 (0.051%, 0.070%; the
        plain passes of before ended at their bound of 1000 with 0.39%),
        dna (one-vs-rest) at 16384 (0.127%, 0.128%; at its bound of 2879
        with one stalled round and the pass bound of m + nnz a pass).

    Returns
    -------
    dict
        ``dual`` (the larger of the two exact values below), ``dual_start``,
        ``dual_end``, ``passes`` (run), ``alpha`` and ``w_dual`` of the
        better point, and ``stalled``: whether the passes ended before their bounds (the gap
        stopped shrinking, or ``stop_at`` was reached).
    """
    upper, diag, qii = problem_terms(indptr, indices, data, n_cols, c, lam, loss, bias_value)
    alpha, v = scaled_start(indptr, indices, data, n_cols, y_pm, margins, upper, diag, loss, bias_value)
    dual_start = dual_bound(lam, alpha, v, diag)
    start = (alpha.copy(), v.copy())
    run, ended = 0, True
    if passes > 0 and dual_start < stop_at:
        ended = False
        ascent = ShrinkingPasses(indptr, indices, data, y_pm, upper, diag, qii, bias_value, alpha, v, seed=seed,
                                 helper=helper)
        round_end = 1 if primal is not None else passes
        before, last_cut, stalled_before = dual_start, math.inf, False
        while run < passes and ascent.work < max_work:
            want = min(passes, round_end) - run
            if run and math.isfinite(max_work):     # the round cut to the work left, at the passes' rate so far
                want = max(1, min(want, int((max_work - ascent.work) * run / max(1, ascent.work))))
            got = ascent.run(want, stop_at / lam)
            run += got
            if not math.isfinite(ascent.value):     # overflowed: no later pass can mend it
                break
            if got < want or primal is None:
                ended = got < want
                break
            now = lam * ascent.value
            cut = (now - before) / (primal - before) if primal > before else 0.0
            stalled = run >= STALL_FROM and cut < STALL and cut <= last_cut
            if ascent.work >= max_work:         # at the bound of work: "still shrinking" or not, it says so
                break
            if stalled and stalled_before:
                ended = True
                break
            before, last_cut, round_end, stalled_before = now, cut, 2 * run, stalled
        v = dual_vector(indptr, indices, data, n_cols, alpha * y_pm, bias_value)
    dual_end = dual_bound(lam, alpha, v, diag)
    if dual_start > dual_end:
        alpha, v = start
    return {"dual": max(dual_start, dual_end), "dual_start": dual_start, "dual_end": dual_end, "passes": run,
            "alpha": alpha, "w_dual": v, "stalled": ended}


CS_GAP_UPDATES = 1 << 34        # bound of the Crammer-Singer passes' work in the gap: K (1 + nnz(x_i)) a visit


def _crammer_singer_gap(model, arrays, raw, c, primal, *, lam, passes, tol, seed, until_stalled):
    """The duality gap of a Crammer-Singer model: its primal against the dual bound of the passes from
    alpha = 0 (:class:`CrammerSingerPasses`; the model's W gives no dual point), in rounds that double
    the passes (with ``until_stalled``: ending as :func:`binary_dual`'s do, and at ``CS_GAP_UPDATES``)."""
    cs = crammer_singer_problem(model, arrays, raw, c, lam=lam, seed=seed)
    stop = primal * (1.0 - tol) / lam if tol is not None else math.inf
    run, round_end, before, last_cut, stalled_before, ended = 0, 1, 0.0, math.inf, False, False
    while run < passes:
        want = (min(passes, round_end) if until_stalled else passes) - run
        got = cs.run(want, stop)
        run += got
        if not math.isfinite(cs.value) or cs.value >= stop or not until_stalled:
            ended = math.isfinite(cs.value) and cs.value >= stop
            break
        now = lam * cs.value
        cut = (now - before) / (primal - before) if primal > before else 0.0
        stalled = run >= STALL_FROM and cut < STALL and cut <= last_cut
        if cs.work >= CS_GAP_UPDATES:
            break
        if stalled and stalled_before:
            ended = True
            break
        before, last_cut, round_end, stalled_before = now, cut, 2 * run, stalled
    W, _, dual = cs.exact() if run else (cs.W, primal, 0.0)
    dual = dual if math.isfinite(dual) and dual > 0 else 0.0
    gap = primal - dual
    out = {"primal": primal, "dual": dual, "dual_start": 0.0, "gap": gap,
           "rel_gap": gap / primal if primal > 0 else math.inf, "passes": run, "lambda": lam,
           "alpha": cs.alpha, "w_dual": W}
    if until_stalled:
        out["stalled"] = ended
    return out


def duality_gap(model: LinearModel | MulticlassModel, X: Matrix, y: ArrayLike, *, passes: int | None = None,
                tol: float | None = None, lam: float | None = None, seed: int = 1, return_alpha: bool = False,
                until_stalled: bool = False, sample_weight: ArrayLike | None = None, helper: bool = False,
                qid: ArrayLike | None = None) -> dict[str, Any]:
    """Certified duality gap of a linear model on (X, y).

    Parameters
    ----------
    model : LinearModel or MulticlassModel
        Loss "hinge" or "squared-hinge", bias mode "none" or "feature" (the
        bias is then the weight of a constant feature 1), with or without
        class weights; binary, or one-vs-rest multiclass (then the primal is
        the sum of the K binary objectives, as :func:`pegasos.objective`
        reports it, and the dual the sum of the K dual bounds); Crammer-Singer
        (paper Eq. (20); the dual bound of the passes of
        :class:`CrammerSingerPasses` from alpha = 0, as the model's W gives
        no dual point; ``alpha`` (m, K) and ``w_dual`` (d + 1, K) with
        ``return_alpha``); or a ranking
        model of the rank loss, whose problem is the binary hinge problem of
        the pair differences x_a - x_b, y_a > y_b in one query
        (:func:`pegasos.examples.pair_differences`: the dual's coordinates
        are the P pairs).
    X : scipy.sparse matrix, :class:`pegasos.io.Chunk` or dense array, shape (m, d)
        The examples the primal objective is taken over (usually the
        training set); any d (columns beyond the model's weights count as
        weight 0).
    y : array of shape (m,)
        Label values as in the training file (the model's labels).
    passes : int in [0, 10^6] or None
        None (the default): the passes of ``until_stalled`` with the bound
        of :data:`AUTO_GAP_PASSES`, as ``pegasos objective --gap`` runs them
        (they go on while the gap shrinks; the result's ``stalled`` is True
        when they ended because it stopped shrinking, also for a gap
        already within reach of the optimum).  Otherwise the passes of dual coordinate ascent (with shrinking,
        :class:`ShrinkingPasses`) after the start from the margins (each
        O(nnz(X)) at most, plus the columns the examples use: a dual on fewer
        than half of the d columns runs on them, renumbered, with the same
        values); for one-vs-rest, per class.
    tol : float in [0, 1) or None
        Stop after the first pass whose relative gap is at most ``tol``
        (per class for one-vs-rest).
    lam : float > 0 or None
        lambda of the problem; default the model's.
    until_stalled : bool
        Run the passes in rounds that double the passes run and stop once
        a round closes less than a tenth of the gap, and less than the round
        before (from 16 passes on; per class for one-vs-rest): the gap has
        stopped shrinking.
        ``passes`` is then the bound (see :data:`AUTO_GAP_PASSES`), with
        ``AUTO_GAP_UPDATES`` coefficient updates per problem.
    seed : int in [0, 2^64)
        Seed of the coordinate orders.
    sample_weight : array (m,) of finite numbers >= 0, or None
        Example weights s_i of the problem (as in training with them): the
        primal is :func:`pegasos.objective` with these weights and every
        c_i is the class weight times s_i (C_i = c_i / (lambda m)).
    helper : bool
        The passes may use a second processor (:class:`ShrinkingPasses`: a
        helper thread reads the rows ahead on sets larger than the caches;
        one-vs-rest runs its classes one after another); no value depends
        on it.
    qid : int64 array (m,) or None
        The queries of a ranking model's examples (default: ``X.qid`` of a
        :class:`pegasos.io.Chunk`).
    return_alpha : bool
        Also return the dual point (``alpha``, float64 (m,), in LIBLINEAR's
        scaling: 0 <= alpha_i <= C_i = c_i / (lambda m) for the hinge) and
        ``w_dual`` = sum_i alpha_i y_i x_i (float64 (d + 1,), the last entry
        the constant feature's weight, 0 without it); for one-vs-rest, lists
        of K of each.

    Returns
    -------
    dict
        ``primal`` P(model), exactly :func:`pegasos.objective`'s
        ``objective``; ``dual``, a lower bound on the optimum f* (per
        problem, the larger of D at the start and after the last pass, each
        recomputed from alpha); ``dual_start``; ``gap`` = primal - dual >=
        P(model) - f*; ``rel_gap`` = gap / primal; ``passes`` (run; the most
        of any class for one-vs-rest); ``stalled`` (with ``until_stalled``:
        whether every class's passes ended before the bound, because the gap
        stopped shrinking or was within ``tol``); ``seconds`` (wall clock, primal
        included); ``examples``, ``lambda``, ``loss``, ``bias_mode``; for
        one-vs-rest also ``per_class_primal`` and ``per_class_dual``; for
        ranking ``pairs``.

    Raises
    ------
    ParameterError
        A model kind without this dual (unregularized bias, log and
        eps-insensitive losses, sigmoid kernels),
        or a bad ``passes``, ``tol``, ``lam``, ``seed`` or ``sample_weight``.
    ExampleError
        A label that is not one of the model's, X and y of different
        lengths, or no examples.
    """
    from .scoring import objective

    started = time.perf_counter()
    check_gap_model(model)
    if getattr(model, "kind", None) == "kernel":
        if passes:
            raise ParameterError("passes: the duality gap of a kernel model makes no passes (its dual point is "
                                 "the model's own coefficients)")
        return kernel_duality_gap(model, X, y, lam=lam, started=started)
    passes, until_stalled, tol, lam = _gap_settings(model, passes, until_stalled, tol, lam, seed)
    indptr, indices, data, n_cols, m, raw = _examples_of(X, y)
    multiclass = model.task == "multiclass"
    ranking = model.task == "ranking"
    if ranking:
        from .examples import Examples, pair_differences

        qids: NDArray[np.int64] | None = getattr(X, "qid", None) if qid is None else np.asarray(qid, dtype=np.int64)
        prim = objective(model, X, raw, lam=lam, qid=qids, sample_weight=sample_weight)   # checks both
    else:
        # (a binary model has labels: check_gap_model refused the others)
        targets = (cast("MulticlassModel", model).class_index(raw) if multiclass
                   else cast("LinearModel", model).labels.encode(raw))    # type: ignore[union-attr]
        prim = objective(model, X, raw, lam=lam, sample_weight=sample_weight)    # checks sample_weight
        c = _example_weights(model, raw)
        if sample_weight is not None:
            c = c * np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    primal = prim["objective"]
    if not math.isfinite(primal):
        raise ParameterError(f"the model's primal objective is not finite ({primal})")
    if multiclass and cast("MulticlassModel", model).method == "crammer-singer":
        out = _crammer_singer_gap(model, (indptr, indices, data, n_cols), raw, c, primal, lam=lam, passes=passes,
                                  tol=tol, seed=int(seed), until_stalled=until_stalled)
        out.update(seconds=time.perf_counter() - started, examples=m, loss=model.loss, bias_mode=model.bias_mode)
        if not return_alpha:
            out.pop("alpha")
            out.pop("w_dual")
        return out
    f = model.decision_function(X)
    if ranking:     # the problem of the pair differences: their margins, labels +1 and weights 1
        pairs, a, b = pair_differences(Examples(indptr, indices, data, raw, n_cols, qids))
        indptr, indices, data = pairs.indptr, pairs.indices, pairs.data
        targets = c = np.ones(pairs.m)
        f = f[a] - f[b]
    options = dict(lam=lam, loss="hinge" if ranking else model.loss,
                   bias_value=1.0 if model.bias_mode == "feature" else 0.0,
                   passes=passes, seed=int(seed), max_work=AUTO_GAP_UPDATES if until_stalled else math.inf)
    all_cols = n_cols
    indices, n_cols, columns = _used_columns(indices, n_cols)
    if multiclass:
        parts = []
        for k, primal_k in enumerate(prim["per_class_objective"]):
            y_k = np.where(targets == k, 1.0, -1.0)
            stop = math.inf if tol is None else primal_k * (1.0 - tol)
            parts.append(binary_dual(indptr, indices, data, n_cols, y_k, c, y_k * f[:, k], stop_at=stop,
                                     primal=primal_k if until_stalled else None, helper=helper, **options))
    else:
        stop = math.inf if tol is None else primal * (1.0 - tol)
        parts = [binary_dual(indptr, indices, data, n_cols, targets, c, targets * f, stop_at=stop,
                             primal=primal if until_stalled else None, helper=helper, **options)]
    out = _gap_result(parts, primal, lam, model, m, started, until_stalled)
    if ranking:
        out["pairs"] = int(indptr.shape[0] - 1)
    if multiclass:
        out["per_class_primal"] = list(prim["per_class_objective"])
        out["per_class_dual"] = [p["dual"] for p in parts]
    if return_alpha:
        out["alpha"] = [p["alpha"] for p in parts] if multiclass else parts[0]["alpha"]
        w_dual = [p["w_dual"] if columns is None else _on_all_columns(p["w_dual"], columns, all_cols) for p in parts]
        out["w_dual"] = w_dual if multiclass else w_dual[0]
    return out


def _gap_settings(model, passes, until_stalled, tol, lam, seed):
    """The checked settings of :func:`duality_gap`: (passes, until_stalled, tol, lambda); None passes
    are the passes until the gap stops shrinking.  ParameterError for a value out of range."""
    if passes is None:
        passes, until_stalled = AUTO_GAP_PASSES, True
    passes = check_passes(passes)
    if tol is not None:
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (0.0 <= tol < 1.0):
            raise ParameterError(f"tol must be a number in [0, 1), got {tol!r}")
        tol = float(tol)
    if lam is None:
        lam = model.lam
    elif (problem := lambda_problem(lam)) is not None:
        raise ParameterError(problem)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2 ** 64:
        raise ParameterError(f"seed must be a whole number in [0, 2^64), got {seed!r}")
    return passes, until_stalled, tol, float(lam)


def _gap_result(parts, primal, lam, model, m, started, until_stalled):
    """The dict :func:`duality_gap` returns, from the dual passes of its binary problems ``parts``."""
    dual = math.fsum(p["dual"] for p in parts)
    gap = primal - dual
    out = {
        "primal": primal,
        "dual": dual,
        "dual_start": math.fsum(p["dual_start"] for p in parts),
        "gap": gap,
        "rel_gap": gap / primal if primal > 0 else math.inf,
        "passes": max(p["passes"] for p in parts),
        "seconds": time.perf_counter() - started,
        "examples": m,
        "lambda": lam,
        "loss": model.loss,
        "bias_mode": model.bias_mode,
    }
    if until_stalled:
        out["stalled"] = all(p["stalled"] for p in parts)
    return out


def kernel_duality_gap(model, X, y, *, lam=None, started=None):
    """Certified duality gap of a kernel model (no bias, a positive semi-definite kernel) on (X, y),
    from the model's own coefficients: no passes.

    The model is f = sum_s c_s K(sv_s, .).  When every support vector is an example of X whose label
    is sign(c_s) (as for a model trained on X: support vectors are training examples), alpha_i = |c_s|
    on those examples (0 elsewhere) is a dual point with w(alpha) = w, and so is s alpha for any
    0 <= s <= C / max alpha, C = 1/(lambda m).  The dual value (Eq. (1)'s scaling)::

        D(s alpha) = lambda (s sum_i alpha_i - s^2/2 ||w||^2)  <=  f*  <=  P(w)

    is largest at s = sum alpha / ||w||^2, clipped to the box; ||w||^2 is the one
    :func:`pegasos.objective` computes for P.  For the dual solver's model on its training data,
    s = 1 is its own D, so the gap is at most the header's ``certified_gap``.

    Parameters
    ----------
    model : pegasos.kernel.KernelModel
    X : scipy.sparse matrix, Chunk or dense array, shape (m, d)
    y : array (m,), label values
    lam : float > 0 or None (the model's)
    started : float or None, a time.perf_counter() value the ``seconds`` count from

    Returns
    -------
    dict
        The keys of :func:`duality_gap` (``passes`` 0, ``stalled`` True, ``scale`` s).

    Raises
    ------
    ParameterError
        A support vector that is not an example of X with its label (one line, naming it).
    ExampleError
        X and y of different lengths, no examples, a label not the model's.
    """
    from .scoring import objective

    started = time.perf_counter() if started is None else started
    lam = float(model.lam if lam is None else lam)
    if (problem := lambda_problem(lam)) is not None:
        raise ParameterError(problem)
    indptr, indices, data, _, m, raw = _examples_of(X, y)
    targets = model.labels.encode(raw)
    prim = objective(model, X, raw, lam=lam)
    primal = float(prim["objective"])
    if not math.isfinite(primal):
        raise ParameterError(f"the model's primal objective is not finite ({primal})")
    sqw = float(prim["norm_w"]) ** 2
    # each support vector is matched with an unused example of the same row and label
    rows = {}
    for i in range(m):
        a, b = int(indptr[i]), int(indptr[i + 1])
        key = (np.asarray(indices[a:b], dtype=np.int64).tobytes(), np.asarray(data[a:b], dtype=np.float64).tobytes())
        rows.setdefault(key, []).append(i)
    coef = np.asarray(model.coef, dtype=np.float64)
    support = model.support_matrix()              # its arrays checked, as the decision values took them
    sip, sind, sdat = support.indptr, support.indices, support.data
    for s_ in range(coef.shape[0]):
        if coef[s_] == 0.0:
            continue
        a, b = int(sip[s_]), int(sip[s_ + 1])
        key = (np.asarray(sind[a:b], dtype=np.int64).tobytes(), np.asarray(sdat[a:b], dtype=np.float64).tobytes())
        sign = 1.0 if coef[s_] > 0 else -1.0
        found = rows.get(key, [])
        pick = next((j for j, i in enumerate(found) if targets[i] == sign), None)
        if pick is None:
            raise ParameterError(f"the duality gap of a kernel model needs its support vectors among DATA's "
                                 f"examples with their labels (the training data): support vector {s_ + 1} "
                                 "is not one of them")
        found.pop(pick)
    alpha = np.abs(coef)
    total = float(np.sum(alpha))
    top = float(np.max(alpha)) if alpha.size else 0.0
    C = 1.0 / (lam * m)
    limit = C / top if top > 0 else math.inf
    scale = min(total / sqw, limit) if sqw > 0 else (limit if math.isfinite(limit) else 0.0)
    dual = lam * (scale * total - 0.5 * scale * scale * sqw) if total > 0 else 0.0
    gap = primal - dual
    return {
        "primal": primal, "dual": dual, "dual_start": dual, "gap": gap,
        "rel_gap": gap / primal if primal > 0 else math.inf, "passes": 0, "stalled": True,
        "seconds": time.perf_counter() - started, "examples": m, "lambda": lam, "loss": "hinge",
        "bias_mode": model.bias_mode, "scale": scale,
    }
