"""Kernel SVMs with Pegasos (paper Sec. 4, Fig. 3): training API, model, model file.

The problem is Eq. (1) in the feature space of a kernel (paper Eq. (17)-(18))::

    min_w  lambda/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i <w, phi(x_i)>)

solved by Fig. 3 with the corrections of the project's paper notes (Sec. 1.7):
the margin of the sampled example is computed from the current support set
with the scale 1/(lambda (t-1)) of the linear algorithm's w_t (an update is
certain at t = 1), and y_j (not y_{i_t}) inside the kernel sum.  Mini-batches
of k follow Fig. 2: every margin of the batch at w_t, each violator's count
alpha_j increases by 1, and w_{t+1} = 1/(lambda t k) sum_j alpha_j y_j phi(x_j).
The compiled loop is :class:`pegasos._kernel.KernelState`; its docstring
gives the exact state, the cache and the budget rule.

By default (no T or epochs, no budget, a positive semi-definite kernel) the
same problem is solved in its dual instead (:func:`fit_kernel_dual`, greedy
coordinate ascent, :class:`pegasos._kernel.KernelDual`), until the model is
certified within ``tol`` of the optimum: no fixed number of Pegasos epochs
is right for every lambda m (at lambda = 1e-4, 10 epochs cost a9a 46 times
one epoch for 1.6% of the objective, and leave heart_scale far from it).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .defaults import MAX_DEGREE, MIN_LAMBDA, lambda_problem, max_cache_mb
from .errors import DivergenceError, ModelFormatError, ParameterError, PegasosError
from .data import INT32_MAX, chunk_arrays, compact_columns, csr_arrays, finite_decisions
from .labels import BinaryLabels
from .model import (HEADER_KEYS, MAGIC, VERSION, check_float, check_header_consistency,
                    check_pegasos_keys, header_float, header_keys, read_header, read_index_value, save_model)
from .options import KERNELS
from .outcome import PEGASOS_KEYS
from .solver import psd_kernel
from .sampling import Orders

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from scipy.sparse import csr_matrix

    from .io import Matrix
    from .solver import Plan

DEFAULT_DEGREE = 3
DEFAULT_COEF0 = 0.0
DEFAULT_CACHE_MB = 100.0
_HUGE = 2**62                       # budgets and cache sizes beyond this mean "no limit" to the C code
_PARALLEL_MIN_WORK = 200_000        # (rows x support vectors) below which predict uses one thread

#: header keys of a kernel model file, in the order they are written
KERNEL_KEYS = ("kernel", "gamma", "degree", "coef0", "budget", "support_vectors_removed")
#: written after those when they apply: the dual solver's model (fit_kernel_dual)
KERNEL_OPTIONAL_KEYS = ("solver", "solver_reason", "stop", "tol", "epochs", "stopping", "finish", "dual_updates", "certified_gap")
#: the dual solver's bound of work: updates times (m + DUAL_UPDATE_COST) (each update adds a row of Q to
#: the gradient, its scan reads m coordinates, and its choice and step cost about as much as 256 of
#: those), 2^32: 131,900 updates on a9a's 32,561 rows (the default lambda certifies in 14,522, 11.5 s),
#: 8.2e6 on heart_scale's 270 (6,668 certify).  Single-coordinate ascent is slow where examples
#: contradict each other and C = 1/(lambda m) is huge (x with both labels at lambda = 1e-9: alpha grows
#: by 1 an update up to C = 2.5e8): without the 256, four such rows ran 5e8 updates (18 s) to certify
DUAL_MAX_WORK = 1 << 32
DUAL_UPDATE_COST = 256
DUAL_MIN_UPDATES = 1000


@dataclass
class KernelModel:
    """A trained kernel SVM: f(x) = sum_s coef_s K(sv_s, x) + bias.

    Attributes
    ----------
    kernel, gamma, degree, coef0 : the kernel (LIBSVM's names and meanings)
    sv_indptr, sv_indices, sv_data : CSR arrays of the support vectors
        (int64, int32 zero-based columns, float64)
    coef : ndarray of shape (n_sv,), float64
    labels, lam, bias, bias_mode, info : as in :class:`pegasos.linear.LinearModel`
    n_features : int
        Number of features of the training data.
    plan : pegasos.solver.Plan or None
        The solver plan of the run that trained the model (which solver and why, the settings as the user
        spelled them), set by :func:`pegasos.outcome.record_outcome` for ``pegasos train``'s summary; not
        written to the model file (None for a model read from one).
    """

    kernel: str
    gamma: float
    degree: int
    coef0: float
    sv_indptr: NDArray[np.int64]
    sv_indices: NDArray[np.int32]
    sv_data: NDArray[np.float64]
    coef: NDArray[np.float64]
    labels: BinaryLabels
    lam: float
    n_features: int
    bias: float = 0.0
    bias_mode: str = "none"
    info: dict = field(default_factory=dict)
    threads: int = 0
    _sv_sqn: np.ndarray | None = field(default=None, repr=False)
    plan: Plan | None = field(default=None, repr=False, compare=False)

    kind = "kernel"

    @property
    def n_support(self) -> int:
        return int(self.coef.shape[0])

    @property
    def sv_sqnorms(self):
        self._checked_support()
        return self._sv_sqn

    def _checked_support(self):
        """The support vectors' CSR arrays and coefficients, checked before the compiled loop indexes with
        them: the attributes are the caller's and may have been edited or replaced since training."""
        try:
            sv_indptr, sv_indices, sv_data = chunk_arrays(self.sv_indptr, self.sv_indices, self.sv_data)
        except PegasosError as error:
            raise ParameterError(f"the model's support vectors: {error}") from None
        n_sv = sv_indptr.shape[0] - 1
        coef = np.asarray(self.coef)
        if coef.shape != (n_sv,) or coef.dtype.kind not in "fiu":
            raise ParameterError(f"the model's coef has shape {coef.shape} and type {coef.dtype} for {n_sv} support "
                                 "vectors; it needs one number per support vector")
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        sv_data = np.ascontiguousarray(sv_data, dtype=np.float64)
        if (sv_indptr is not self.sv_indptr or sv_indices is not self.sv_indices or sv_data is not self.sv_data
                or self._sv_sqn is None or self._sv_sqn.shape != (n_sv,)):
            from . import _kernel
            self._sv_sqn = _kernel.row_sqnorms(sv_indptr, sv_data)
        return sv_indptr, sv_indices, sv_data, coef

    def decision_function(self, X: Matrix) -> NDArray[np.float64]:
        """Decision values sum_s coef_s K(sv_s, x_i) + bias, shape (m,) float64.

        X is a scipy sparse matrix or :class:`pegasos.io.Chunk` of any width.
        Rows are split among threads (one per core by default, ``threads``
        to override); the values do not depend on the number of threads.

        Raises
        ------
        ParameterError
            X is not a matrix of numbers; ExampleError for a NaN or infinite
            value (naming the example).
        """
        from . import _kernel

        indptr, indices, data = csr_arrays(X)
        m = indptr.shape[0] - 1
        out = np.empty(m, dtype=np.float64)
        sv_indptr, sv_indices, sv_data, coef = self._checked_support()
        top = int(sv_indices.max()) + 1 if sv_indices.size else 0
        if top > 2 * sv_indices.shape[0] + 64:
            # the compiled loop scatters each x into a buffer as wide as the largest support-vector column:
            # on the support vectors' columns renumbered, x's other columns (which meet only zeros in the
            # dot products but count in ||x||^2) at u, past the buffer's u columns
            columns, sv_indices = compact_columns(sv_indices)
            u = columns.shape[0]
            pos = np.searchsorted(columns, indices)
            hit = pos < u
            hit[hit] = columns[pos[hit]] == indices[hit]
            indices = np.where(hit, pos, u).astype(np.int32)
        args = (sv_indptr, sv_indices, sv_data, self._sv_sqn, coef,
                _kernel.KERNEL_CODES[self.kernel], float(self.gamma), float(self.coef0), int(self.degree),
                indptr, indices, data)
        n_threads = self.threads or os.cpu_count() or 1
        n_threads = max(1, min(n_threads, m, 64))
        if n_threads == 1 or m * self.n_support < _PARALLEL_MIN_WORK:
            _kernel.kernel_decision(*args, 0, m, float(self.bias), out)
            return finite_decisions(out, X)
        from concurrent.futures import ThreadPoolExecutor

        cuts = np.linspace(0, m, n_threads + 1).astype(np.int64)
        with ThreadPoolExecutor(n_threads) as pool:
            jobs = [pool.submit(_kernel.kernel_decision, *args, int(a), int(b), float(self.bias), out)
                    for a, b in zip(cuts[:-1], cuts[1:])]
            for j in jobs:
                j.result()
        return finite_decisions(out, X)

    def predict(self, X: Matrix) -> NDArray[np.float64]:
        """Predicted label values, float64 (m,): positive where the decision value is > 0.  Raises as
        :meth:`decision_function`."""
        f = self.decision_function(X)
        return np.where(f > 0, self.labels.positive, self.labels.negative)

    def support_matrix(self) -> csr_matrix:
        """The support vectors as a scipy CSR matrix (n_sv, n_features)."""
        from scipy.sparse import csr_matrix

        sv_indptr, sv_indices, sv_data, _ = self._checked_support()
        return csr_matrix((sv_data, sv_indices, sv_indptr), shape=(sv_indptr.shape[0] - 1, self.n_features))

    def squared_norm(self) -> float:
        """||w||^2 = sum_ij coef_i coef_j K(sv_i, sv_j): |S|^2 kernel evaluations
        (O(|S|^2 nnz) time, O(|S|) memory, split among threads like predict)."""
        if self.n_support == 0:
            return 0.0
        bias, self.bias = self.bias, 0.0
        try:
            f = self.decision_function(self.support_matrix())
        finally:
            self.bias = bias
        return max(0.0, float(np.dot(self.coef, f)))

    def regularizer(self) -> float:
        """lambda/2 ||w||^2."""
        return 0.5 * self.lam * self.squared_norm()

    def to_text(self) -> str:
        """The model file contents (str; see :func:`kernel_model_text`)."""
        return kernel_model_text(self)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model file atomically (see :func:`pegasos.model.save_model`).

        Raises
        ------
        PegasosError
            The file cannot be written; no partial file is left.
        """
        save_model(self, path)


def dual_max_updates(m):
    """The dual solver's bound of updates on m examples: DUAL_MAX_WORK / (m + DUAL_UPDATE_COST), at least
    DUAL_MIN_UPDATES."""
    return max(DUAL_MIN_UPDATES, DUAL_MAX_WORK // (max(0, int(m)) + DUAL_UPDATE_COST))


def _kernel_settings(kernel, gamma, degree, coef0, n_features):
    if gamma is None:
        gamma = 1.0 / n_features if n_features > 0 else 1.0
    degree = DEFAULT_DEGREE if degree is None else int(degree)
    coef0 = DEFAULT_COEF0 if coef0 is None else float(coef0)
    return float(gamma), degree, coef0


def fit_kernel(ex, options, *, labels=None, progress=None, order=None, on_plan=None, return_state=False):
    """Train a kernel SVM with Pegasos (Fig. 3; Fig. 2's mini-batches for k > 1).

    Parameters
    ----------
    ex : pegasos.examples.Examples
        m examples of two classes.
    options : pegasos.options.TrainOptions
        Validated settings: ``kernel`` K(u,v) = <u,v>, (gamma <u,v> + coef0)^degree,
        exp(-gamma ||u-v||^2) or tanh(gamma <u,v> + coef0); ``gamma`` (default
        1/n_features, LIBSVM's), ``degree`` (3), ``coef0`` (0); ``budget``
        (keep at most this many support vectors; not in the paper, see
        :mod:`pegasos._kernel`); ``cache_mb`` (kernel-row cache bound in MiB;
        results do not depend on it); the solver settings as for linear models
        (the same sampler: the same seed visits the same examples).  The
        projection is Eq. (6) in feature space (not in Fig. 3, see README).
    labels : BinaryLabels, optional
        Label mapping (default: from the two values in ``ex.y``).
    progress, order, on_plan :
        As :func:`pegasos.linear.fit_linear`.
    return_state : bool
        Also return the compiled state (for tests: alphas, counters).

    Returns
    -------
    KernelModel (and the state with ``return_state``)

    Raises
    ------
    ParameterError
        k > m, or divergence to non-finite coefficients.
    """
    if options.kernel_dual:
        return fit_kernel_dual(ex, options, labels=labels, progress=progress, on_plan=on_plan,
                               return_state=return_state)
    from . import _kernel

    indptr, indices = ex.indptr, ex.indices
    data = np.ascontiguousarray(ex.data, dtype=np.float64)
    m = ex.m
    n_features = ex.n_features
    if labels is None:
        labels = BinaryLabels.from_values(ex.y)
    y_pm = np.ascontiguousarray(labels.encode(ex.y))
    gamma, degree, coef0 = _kernel_settings(options.kernel, options.gamma, options.degree, options.coef0,
                                            n_features)
    plan = options.plan(m)
    dense_indices, n_dense = dense_columns(indices, n_features)
    check_kernel_memory(options, m, n_dense, plan.T, plan.k)
    if on_plan is not None:
        on_plan(plan.T)
    state = _kernel.KernelState(indptr, dense_indices, data, y_pm, int(n_dense), _kernel.KERNEL_CODES[options.kernel],
                                gamma, coef0, degree, float(options.lam), plan.k, bool(options.projection),
                                plan.avg_start, min(int(options.budget or 0), _HUGE),
                                cache_bytes(options))
    for block, n in Orders(m, plan.k, options.sampling, options.seed, order).blocks(plan.T):
        state.run(block, n)
        if progress is not None:
            progress(n)
    ex_sv, coef = state.support()
    keep = np.argsort(ex_sv, kind="stable")
    ex_sv, coef = ex_sv[keep], coef[keep]
    if not np.all(np.isfinite(coef)):
        raise DivergenceError("training diverged to non-finite coefficients (check the scale of the data "
                             "and the kernel parameters)")
    sv_indptr, sv_indices, sv_data = _support_rows(indptr, indices, data, ex_sv)
    stats = state.stats()
    info = options.header(plan)
    info["budget"] = str(int(options.budget)) if options.budget else "-"
    info["support_vectors_removed"] = str(stats["removed"])
    model = KernelModel(kernel=options.kernel, gamma=gamma, degree=degree, coef0=coef0,
                        sv_indptr=sv_indptr, sv_indices=sv_indices, sv_data=sv_data, coef=coef,
                        labels=labels, lam=float(options.lam), n_features=int(n_features), info=info)
    return (model, state) if return_state else model


def cache_bytes(options):
    """The kernel-row cache bound of ``options`` in bytes (for the compiled trainers); ParameterError naming
    the option when ``cache_mb`` is above :func:`pegasos.defaults.max_cache_mb`, the physical memory."""
    limit = max_cache_mb()
    if float(options.cache_mb) > limit:
        raise ParameterError(f"{options.subject('cache_mb')}: a cache of {float(options.cache_mb):g} MiB is more than "
                             f"the {limit:.0f} MiB of physical memory of this machine")
    return int(min(float(options.cache_mb) * (1 << 20), _HUGE))


def dense_columns(indices, n_features):
    """(indices, n) for the compiled kernel loops, whose scatter buffers hold n doubles: ``indices``
    (int32 (nnz,)) and ``n_features`` as they are, or, when the data use fewer than half of their
    n_features columns (a stray huge index, hashed ids), the used columns renumbered 0..u-1 in order
    and u.  Kernel values depend only on dot products and norms, which the renumbering keeps, so the
    run is the same; its memory is then O(used columns), not O(largest index)."""
    if indices.shape[0] >= n_features // 2:
        return indices, n_features
    columns, compact = compact_columns(indices)
    if columns.shape[0] >= n_features // 2:
        return indices, n_features
    return compact, max(int(columns.shape[0]), 1)


def _support_rows(indptr, indices, data, ex_sv):
    """CSR arrays (int64, int32, float64) of the rows ``ex_sv`` (sorted int64) of a CSR matrix."""
    starts, ends = indptr[ex_sv], indptr[ex_sv + 1]
    lengths = ends - starts
    sv_indptr = np.zeros(ex_sv.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=sv_indptr[1:])
    take = (np.repeat(starts - sv_indptr[:-1], lengths) + np.arange(int(sv_indptr[-1]), dtype=np.int64)
            if ex_sv.size else np.zeros(0, dtype=np.int64))
    return (sv_indptr, np.ascontiguousarray(indices[take], dtype=np.int32),
            np.ascontiguousarray(data[take], dtype=np.float64))


def fit_kernel_dual(ex, options, *, labels=None, progress=None, on_plan=None, return_state=False):
    """Train a kernel SVM by greedy dual coordinate ascent until certified within ``options.tol``.

    Solves paper Eq. (1) in feature space, no bias,
    min_w lambda/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i <w, phi(x_i)>), through its dual
    max_alpha sum_i alpha_i - 1/2 alpha^T Q alpha, 0 <= alpha_i <= C = 1/(lambda m),
    Q_ij = y_i y_j K(x_i, x_j) (:class:`pegasos._kernel.KernelDual`), from alpha = 0.
    The model is w(alpha) = sum_i alpha_i y_i phi(x_i): its support vectors are the
    examples with alpha_i > 0 in file order, coef_i = alpha_i y_i.  The updates stop
    before the first one where (P - D) / P <= ``options.tol`` (P the primal value of
    w(alpha), D the dual value, D <= min P <= P), where no update raises D, or after
    :func:`dual_max_updates` updates (then the header's ``stopping`` says "not
    certified").  Deterministic: the same data and settings give the same model
    whatever ``cache_mb``.

    Parameters
    ----------
    ex : pegasos.examples.Examples
        m examples of two classes.
    options : pegasos.options.TrainOptions
        ``kernel`` (positive semi-definite: :func:`psd_kernel`), ``gamma``, ``degree``,
        ``coef0``, ``lam``, ``tol``, ``cache_mb`` (the bound of the row cache, MiB: a
        row holds m float64).
    labels, progress, on_plan, return_state :
        As :func:`fit_kernel` (``progress`` gets the updates made; ``on_plan`` None:
        their number is not known in advance).

    Returns
    -------
    KernelModel (and the :class:`pegasos._kernel.KernelDual` state with ``return_state``).
    Its header: ``iterations 0``, ``epochs 0``, ``finish dual``, ``dual_updates`` (the
    updates made), ``certified_gap`` ((P - D) / P) and ``stopping``.

    Raises
    ------
    ParameterError
        A kernel that is not positive semi-definite, or non-finite values.
    """
    from . import _kernel
    from .options import RunPlan

    if not psd_kernel(options.kernel, options.coef0):
        raise ParameterError(f"{options.subject('kernel')}: the dual solver needs a positive semi-definite kernel "
                             "(linear, rbf, poly with coef0 >= 0); give -T or --epochs for Pegasos")
    indptr, indices = ex.indptr, ex.indices
    data = np.ascontiguousarray(ex.data, dtype=np.float64)
    m, n_features = ex.m, ex.n_features
    if labels is None:
        labels = BinaryLabels.from_values(ex.y)
    y_pm = np.ascontiguousarray(labels.encode(ex.y), dtype=np.float64)
    gamma, degree, coef0 = _kernel_settings(options.kernel, options.gamma, options.degree, options.coef0,
                                            n_features)
    lam = float(options.lam)
    C = 1.0 / (lam * m)
    bound = dual_max_updates(m)
    if on_plan is not None:
        on_plan(None)
    dense_indices, n_dense = dense_columns(indices, n_features)
    state = _kernel.KernelDual(indptr, dense_indices, data, y_pm, int(n_dense), _kernel.KERNEL_CODES[options.kernel],
                               gamma, coef0, degree, C, cache_bytes(options))
    why = "updates"
    while state.updates < bound:
        chunk = min(bound - state.updates, max(1000, bound // 100))
        done, why = state.run(chunk, float(options.tol))
        if progress is not None and done:
            progress(done)
        if why != "updates":
            break
    p, d = state.values()
    gap = state.gap
    if not (math.isfinite(p) and math.isfinite(d)):
        raise ParameterError("the dual solver overflowed to non-finite values (check the scale of the data and "
                             "the kernel parameters)")
    alpha = state.alphas()
    # never worse than w = 0 (objective 1, every hinge 1: C m in the solver's scaling): an uncertified
    # alpha can be far above it (poly on features x100: 5.9), and D still bounds the optimum
    zero_kept = p > C * m
    if zero_kept:
        alpha = np.zeros(m)
        gap = 1.0 - max(0.0, lam * d) if math.isfinite(d) else 1.0
    ex_sv = np.flatnonzero(alpha > 0).astype(np.int64)
    coef = np.ascontiguousarray(alpha[ex_sv] * y_pm[ex_sv])
    sv_indptr, sv_indices, sv_data = _support_rows(indptr, indices, data, ex_sv)
    plan = RunPlan(m=int(m), T=0, k=int(options.batch_size), avg_start=0, average_from=options.average_from,
                   t0=0.0, projection=False)
    info = options.header(plan)
    info["budget"] = "-"
    info["support_vectors_removed"] = "0"
    info["epochs"] = "0"
    if gap <= options.tol:
        reason = "certified (no update raises the dual)" if why == "optimal" else "certified"
    elif why == "optimal":
        reason = "no update raises the dual, not certified (the kernel values may overflow)"
    else:
        reason = "update bound, not certified"
    if zero_kept:
        reason += "; alpha = 0 kept, of lower objective (scale the features)"
    info["stopping"] = f"tol={float(options.tol)!r} max_updates={bound} {reason} by the dual solver from alpha = 0"
    if gap > options.tol and why == "optimal":
        info["stop"] = "stuck"
    info["finish"] = "dual"
    info["dual_updates"] = str(int(state.updates))
    info["certified_gap"] = repr(min(1.0, max(0.0, float(gap))))
    model = KernelModel(kernel=options.kernel, gamma=gamma, degree=degree, coef0=coef0, sv_indptr=sv_indptr,
                        sv_indices=sv_indices, sv_data=sv_data, coef=coef, labels=labels, lam=lam,
                        n_features=int(n_features), info=info)
    return (model, state) if return_state else model


SV_SLOT_BYTES = 5 * 8 + 1          # per support-vector slot of KernelState: example, alpha, K(x,x), sums, flag
PER_EXAMPLE_BYTES = 7 * 8           # per example: slot index, cache row pointer, length, capacity, LRU links, norm


def kernel_memory(options, m, n_features, T, k):
    """Bytes the kernel trainer (:class:`pegasos._kernel.KernelState`) may allocate at its peak.

    Parameters
    ----------
    options : TrainOptions
        ``budget`` (support vectors kept, None: no bound), ``cache_mb`` (the
        kernel-row cache, MiB), ``projection`` (a k x k kernel block).
    m, n_features, T, k : int
        Examples, features, iterations and batch size of the run.

    Returns
    -------
    dict
        ``fixed`` (per-example and per-feature arrays, the batch), ``support``
        (the support-set arrays at their largest, twice during a reallocation:
        at most min(budget, m, T k) slots), ``cache`` (the cache bound, or the
        most its rows can hold: m rows of one float64 per support vector) and
        ``total``; floats, in bytes.
    """
    slots = min(int(options.budget) if options.budget else m, m, int(T) * int(k))
    fixed = PER_EXAMPLE_BYTES * (m + 1) + 8.0 * (n_features + 1) + 24.0 * k + (8.0 * k * k if options.projection else 0)
    support = 2.0 * SV_SLOT_BYTES * max(slots, 64)
    cache = min(float(options.cache_mb) * (1 << 20), 8.0 * m * slots)
    return {"fixed": fixed, "support": support, "cache": cache, "total": fixed + support + cache}


def check_kernel_memory(options, m, n_features, T, k):
    """Refuse a kernel run whose state would not fit in :func:`pegasos.data.memory_limit`,
    before anything is allocated (the data already in memory are not counted).

    Raises
    ------
    ParameterError
        Naming the option to change as the user spelled it: the kernel-row cache
        (``--cache-mb``) when it alone is too big for what is left, the batch size
        with ``--projection`` (its k x k block), else the support set (``--budget``).
    """
    from .data import memory_limit

    limit = memory_limit()
    if limit is None:
        return
    need = kernel_memory(options, m, n_features, T, k)
    if need["total"] <= limit:
        return
    gib = 2.0 ** 30
    if need["cache"] > limit - need["fixed"] - need["support"] and need["cache"] > need["fixed"] + need["support"]:
        field, why = "cache_mb", f"a kernel-row cache of {need['cache'] / gib:.1f} GiB"
    elif options.projection and 8.0 * k * k > need["fixed"] / 2:
        field, why = "batch_size", f"with projection, the {k} x {k} kernel block of a batch"
    elif 8.0 * (n_features + 1) > need["fixed"] / 2:
        raise ParameterError(f"n_features = {n_features} needs {8.0 * (n_features + 1) / gib:.1f} GiB for the "
                             f"kernel trainer's dense row, more than the {limit / gib:.1f} GiB this process can "
                             "allocate; check the data for a stray huge index")
    elif need["support"] > need["fixed"]:
        field, why = "budget", f"the support set of up to {min(m, T * k)} vectors"
    else:
        raise ParameterError(f"the kernel trainer's state for {m} examples needs {need['total'] / gib:.1f} GiB, more "
                             f"than the {limit / gib:.1f} GiB this process can allocate; train on a sample of the "
                             "data or a linear model")
    raise ParameterError(f"{options.subject(field)}: {why} needs {need['total'] / gib:.1f} GiB in all, more than the "
                         f"{limit / gib:.1f} GiB this process can allocate (physical memory, MemAvailable, cgroup, "
                         "RLIMIT_AS)")


# ------------------------------------------------------------ model files --

def _header_keys():
    return HEADER_KEYS[:2] + KERNEL_KEYS + HEADER_KEYS[2:]


def kernel_model_text(model):
    """The model file of a :class:`KernelModel` (see README, "Kernels")."""
    base = int(model.info.get("index_base", "1"))
    header = dict(model.info)
    header.update({
        "kind": "kernel",
        "loss": "hinge",
        "kernel": model.kernel,
        "gamma": repr(float(model.gamma)),
        "degree": str(int(model.degree)),
        "coef0": repr(float(model.coef0)),
        "lambda": repr(float(model.lam)),
        "bias_mode": model.bias_mode,
        "bias": repr(float(model.bias)),
        "label_negative": model.labels.negative_text,
        "label_positive": model.labels.positive_text,
        "n_features": str(model.n_features),
        "index_base": str(base),
    })
    lines = [f"{MAGIC} {VERSION}"]
    for key in header_keys(header, _header_keys() + KERNEL_OPTIONAL_KEYS):
        if key in KERNEL_OPTIONAL_KEYS and key not in header:
            continue
        value = str(header.get(key, "-")).replace("\n", " ").replace("\r", " ") or "-"
        lines.append(f"{key} {value}")
    lines.append(f"support_vectors {model.n_support}")
    ip, ind, dat, coef = model._checked_support()
    for s in range(model.n_support):
        a, b = int(ip[s]), int(ip[s + 1])
        feats = " ".join(f"{c + base}:{float(v)!r}" for c, v in zip(ind[a:b].tolist(), dat[a:b].tolist()))
        lines.append(f"{float(coef[s])!r} {feats}" if feats else repr(float(coef[s])))
    lines.append("end")
    return "\n".join(lines) + "\n"


def parse_kernel_model(path, lines):
    """Read a kernel model from its lines (CR already stripped, trailing blank
    lines removed, first line checked by :func:`pegasos.modelfile.load_model`)."""

    keys = tuple(k for k in _header_keys() if k not in PEGASOS_KEYS)
    header, i, value = read_header(path, lines, keys, KERNEL_OPTIONAL_KEYS + PEGASOS_KEYS, ("support_vectors",))
    check_pegasos_keys(path, header)
    if header["loss"] != "hinge":
        raise ModelFormatError(path, f"unsupported model kind {header['kind']}/{header['loss']}", header.line("loss"))
    if header["kernel"] not in KERNELS:
        raise ModelFormatError(path, f"unknown kernel {header['kernel']!r}", header.line("kernel"))
    sv_line = i + 1
    if not value.isdigit():
        raise ModelFormatError(path, f"bad support vector count {value!r}", sv_line)
    count = int(value)
    from .data import memory_limit

    limit = memory_limit()
    if limit is not None and 24.0 * (count + 1) > limit:      # coefficients, row offsets, one value each
        raise ModelFormatError(path, f"support_vectors {count} in the header needs {24.0 * (count + 1) / 2**30:.1f} "
                                     f"GiB, more than the {limit / 2**30:.1f} GiB this process can allocate (a "
                                     "damaged model file)", sv_line)
    for key in ("n_features", "degree"):
        if not header[key].isdigit():
            raise ModelFormatError(path, f"bad {key} {header[key]!r}", header.line(key))
    n = int(header["n_features"])
    degree = int(header["degree"])
    base = header["index_base"]
    if base not in ("0", "1"):
        raise ModelFormatError(path, f"index_base must be 0 or 1, not {base!r}", header.line("index_base"))
    base = int(base)
    lam = header_float(path, header, "lambda")
    gamma = header_float(path, header, "gamma")
    coef0 = header_float(path, header, "coef0")
    bias = header_float(path, header, "bias")
    neg = header_float(path, header, "label_negative")
    pos = header_float(path, header, "label_positive")
    if lambda_problem(lam) is not None:
        raise ModelFormatError(path, f"lambda must be positive (at least {MIN_LAMBDA:g}), not {header['lambda']}",
                               header.line("lambda"))
    if gamma <= 0 or not 1 <= degree <= MAX_DEGREE:
        raise ModelFormatError(path, f"bad kernel parameters gamma {header['gamma']}, degree {header['degree']}",
                               header.line("gamma" if gamma <= 0 else "degree"))
    if neg >= pos:
        raise ModelFormatError(path, f"label_negative {header['label_negative']} must be smaller than "
                                     f"label_positive {header['label_positive']}", header.line("label_positive"))
    if header["bias_mode"] not in ("none", "feature", "unregularized"):
        raise ModelFormatError(path, f"unknown bias_mode {header['bias_mode']!r}", header.line("bias_mode"))
    body = lines[i + 1:]
    if len(body) < count + 1 or body[count].strip() != "end":
        raise ModelFormatError(path, f"truncated or damaged model file: expected {count} support vector "
                                     "lines and a final 'end' line")
    if len(body) > count + 1:
        raise ModelFormatError(path, "unexpected text after the 'end' line", sv_line + count + 2)
    coef = np.empty(count, dtype=np.float64)
    indptr = np.zeros(count + 1, dtype=np.int64)
    cols, vals = [], []
    for s, ln in enumerate(body[:count]):
        lineno = sv_line + 1 + s
        tokens = ln.split()
        if not tokens:
            raise ModelFormatError(path, "empty support vector line", lineno)
        coef[s] = check_float(tokens[0], path, lineno, "coefficient")
        last = -1
        for tok in tokens[1:]:
            last, value = read_index_value(tok, path, lineno, base, n, last, "feature", "the model's features",
                                           "feature value")
            cols.append(last)
            vals.append(value)
        if last > INT32_MAX:
            raise ModelFormatError(path, f"feature index {last + base} is beyond the {INT32_MAX + 1} columns "
                                         "pegasos supports", lineno)
        indptr[s + 1] = len(cols)
    info = {k: header[k] for k in _header_keys() if k not in KERNEL_KEYS and k in header}
    info.update({k: header[k] for k in ("budget", "support_vectors_removed")})
    info.update({k: header[k] for k in KERNEL_OPTIONAL_KEYS if k in header})
    labels = BinaryLabels(neg, pos, header["label_negative"], header["label_positive"])
    check_header_consistency(path, header, (neg, pos))
    return KernelModel(kernel=header["kernel"], gamma=gamma, degree=degree, coef0=coef0, sv_indptr=indptr,
                       sv_indices=np.array(cols, dtype=np.int32), sv_data=np.array(vals, dtype=np.float64),
                       coef=coef, labels=labels, lam=lam, n_features=n, bias=bias,
                       bias_mode=header["bias_mode"], info=info)
