# cython: language_level=3
"""Pegasos solver loops and sparse scoring kernels (compiled core).

Nothing here knows about files, labels as written, or the command line: the
functions take CSR arrays (``indptr`` int64, ``indices`` int32, ``data``
float64 or float32), labels in {-1, +1} as float64, and an explicit order in
which examples are visited.  :mod:`pegasos.linear` draws that order, drives
the loop in blocks, and raises errors; the loops themselves run without the GIL.

Problem solved (paper Eq. (1); with a bias, Eq. (22)-(23))::

    min_w  f(w) = lambda/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i <w, x_i>)

Iteration t = 1, 2, ... on the batch A_t (Fig. 1 for |A_t| = 1, Fig. 2 else):

    A_t+   = { i in A_t : y_i <w_t, x_i> < 1 }                (margins at w_t)
    eta_t  = 1 / (lambda t)        (or Norma's p/(lambda sqrt(t)), or a constant; see schedule)
    w_t+1  = (1 - eta_t lambda) w_t + eta_t / |A_t| sum_{i in A_t+} y_i x_i
    w_t+1 <- min(1, (1/sqrt(lambda)) / ||w_t+1||) w_t+1       (if projecting, Eq. (6))

w is stored as ``a * v`` (scalar times dense vector) with ||w||^2 tracked, so
the shrink and the projection are O(1) and an iteration costs O(nnz of the
batch).  The mean of the iterates w_s for s >= avg_start is kept lazily as
``(A v - u) / count`` (A = running sum of the scale a, u corrects for the
changes of v), which is also O(nnz) per iteration.

Large mini-batches (PARALLEL_MIN_BATCH, PARALLEL_MIN_VALUES) can run on a team of OpenMP threads
(``LinearState.run(n_threads=N)``): the margins of the batch are split among
the threads and v is updated by feature ranges, with the operations of the
serial loop in its order, so the iterates are bit-identical for any N.  The
Crammer-Singer loop (``run_multiclass``) and ranking pairs stay serial.

The order of the next examples is known, so the loops of ``run`` prefetch
the rows (and optionally the weights) of the examples a few entries ahead
(:func:`prefetch_distances`): a random order then waits less for memory on
sets larger than the caches.  Where the caller allows a second processor, a
helper thread walks the order ahead of the loop and reads those rows into
the shared caches (:func:`prefetch_thread`, csrc/warm.h).  Neither changes a
value.
"""

from libc.math cimport exp, sqrt
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset
from cython cimport floating
from cython.parallel cimport parallel
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

# OpenMP helpers in plain C, usable whether or not the module was compiled
# with -fopenmp (setup.py adds it when the compiler supports it; without it
# a team has one thread and the barrier is a no-op).  The barrier is an
# orphaned OpenMP directive: it binds to the enclosing `parallel` region.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int pg_have_openmp(void) { return 1; }
    static int pg_thread_num(void) { return omp_get_thread_num(); }
    static int pg_num_threads(void) { return omp_get_num_threads(); }
    static void pg_barrier(void) {
    #pragma omp barrier
    }
    #else
    static int pg_have_openmp(void) { return 0; }
    static int pg_thread_num(void) { return 0; }
    static int pg_num_threads(void) { return 1; }
    static void pg_barrier(void) { }
    #endif
    """
    int pg_have_openmp() noexcept nogil
    int pg_thread_num() noexcept nogil
    int pg_num_threads() noexcept nogil
    void pg_barrier() noexcept nogil

# Software prefetch (csrc/prefetch.h): hints that change no value.
cdef extern from "prefetch.h":
    void pg_prefetch(const void* p) noexcept nogil
    void pg_prefetch_w(const void* p) noexcept nogil
    void pg_prefetch_row(const int64_t* indptr, int64_t i, const int32_t* indices, const void* data,
                         size_t value_size) noexcept nogil

# The helper thread (csrc/warm.h, csrc/warm.pxi): prefetch_thread, WARM_MIN_BYTES, WARM_MIN_ENTRIES.
include "warm.pxi"

import math

import numpy as np
cimport numpy as cnp
cnp.import_array()

DEF REFOLD_BELOW = 1e-9
DEF AVG_FOLD_RATIO = 1e3    # fold the running sum when A / a > this * n_avg

BIAS_NONE = 0
BIAS_FEATURE = 1
BIAS_UNREGULARIZED = 2

#: the codes the loops take, by the names the options use (the rank loss is the
#: hinge on pair differences: code 0 with ``pairs``); see _subgradient
LOSS_CODES = {"hinge": 0, "log": 1, "squared-hinge": 2, "eps-insensitive": 3, "rank": 0}
BIAS_CODES = {"none": BIAS_NONE, "feature": BIAS_FEATURE, "unregularized": BIAS_UNREGULARIZED}
#: the step rules the loops take (see LinearState's ``schedule``)
SCHEDULE_CODES = {"pegasos": 0, "norma": 1, "constant": 2}

#: True when the module was compiled with OpenMP (threads are available).
OPENMP = bool(pg_have_openmp())

#: ``LinearState.run(n_threads > 1)`` uses a team of threads only for batches
#: of k >= PARALLEL_MIN_BATCH examples holding on average at least
#: PARALLEL_MIN_VALUES stored values (k times the mean row length, the
#: constant feature included); smaller batches take the serial loop.  Chosen
#: from benchmarks/bench_batch.py on 2 cores (RESULTS.md, "Threads for the
#: mini-batch step"): 2 threads break even at k = 128 on a9a (14 values a
#: row, 1780 a batch; v of 123 features stays in L1) and win from k = 256;
#: on a 50000-feature synthetic set (50 a row) they break even at k = 16 (800
#: a batch) and win from k = 32; never below k = 16.  The pair puts the
#: switch at k = 116 on a9a and k = 32 on the synthetic set.
PARALLEL_MIN_BATCH = 16
PARALLEL_MIN_VALUES = 1600

#: With ADAPT, run(n_threads > 1) runs its iterations in timed chunks of about
#: ADAPT_CHUNK_EXAMPLES examples and uses whichever of the threads and the
#: serial loop was faster at its last timing, timing the slower one again
#: after ADAPT_PROBE times its cost, and cutting a chunk of the threads short
#: once it has taken ADAPT_SLACK times the serial loop's time: on a machine
#: whose cores are busy, the barriers of the team wait for descheduled threads
#: (measured: up to 100 times slower than one thread), and the run falls back
#: to the serial loop.  Both paths give the same iterates, so the choice never
#: changes a result.
ADAPT = True
ADAPT_CHUNK_EXAMPLES = 16384
ADAPT_PROBE = 20.0
ADAPT_SLACK = 2.0

# Prefetch distances of the loops (see prefetch_distances): the entries of
# the order that far ahead of the example being scored get their row's
# pointers and label (2 PF_ROWS ahead), their index and value arrays
# (PF_ROWS ahead) and the weights v_j, u_j of their features (PF_WEIGHTS
# ahead) requested from memory, so that the random rows of a permutation
# arrive while earlier examples are computed.  0 turns prefetching off.
# Measured on the 1M x 50k synthetic set (benchmarks/bench_prefetch.py,
# RESULTS.md "Prefetching the rows of a random order"): 16 to 24 rows ahead
# is best at k = 1; prefetching the weights too is slower there (v and u,
# 0.8 MB, are served by the 512 KB L2 and the 32 MB L3 of that machine; the
# hints only cost instructions).
cdef Py_ssize_t PF_ROWS = 16
cdef Py_ssize_t PF_WEIGHTS = 0


def prefetch_distances(rows=None, weights=None):
    """The prefetch distances of the training loops, optionally set first.

    Parameters
    ----------
    rows : int >= 0 or None
        Order entries ahead whose index and value arrays are prefetched (the
        row pointers and labels: twice as far); 0 turns prefetching off.
    weights : int >= 0 or None
        Order entries ahead whose weights v_j (and running-sum corrections
        u_j) are prefetched; at most ``rows`` (their indices must be there).

    Returns
    -------
    (rows, weights) : the distances now in force.  Prefetching only moves
    data into the caches earlier, so no setting changes a result.

    Raises
    ------
    ValueError
        A negative distance, or ``weights`` > ``rows`` > 0.
    """
    global PF_ROWS, PF_WEIGHTS
    r = PF_ROWS if rows is None else int(rows)
    w = PF_WEIGHTS if weights is None else int(weights)
    if r < 0 or w < 0:
        raise ValueError("prefetch distances must be >= 0")
    if r and w > r:
        raise ValueError("the weights' prefetch distance must be at most the rows'")
    PF_ROWS, PF_WEIGHTS = r, (w if r else 0)
    return PF_ROWS, PF_WEIGHTS


cdef bint _in_row_order(const int64_t[::1] order, Py_ssize_t n):
    """Whether the first entries of ``order[:n]`` are consecutive rows (a pass in file order)."""
    cdef Py_ssize_t j
    for j in range(1, min(n, 16)):
        if order[j] != order[j - 1] + 1:
            return False
    return True


cdef inline double _seconds() noexcept nogil:
    """Monotonic clock in seconds."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline double _subgradient(int loss, double yy, double z, double eps) noexcept nogil:
    """g = -dloss/dz at decision value z for target yy (paper Sec. 5)."""
    cdef double s
    if loss == 0:                          # hinge: max(0, 1 - y z)
        return yy if yy * z < 1.0 else 0.0
    elif loss == 1:                        # log: log(1 + exp(-y z))
        if yy * z > 0.0:
            s = exp(-yy * z)
            return yy * s / (1.0 + s)
        return yy / (1.0 + exp(yy * z))
    elif loss == 2:                        # squared hinge: max(0, 1 - y z)^2
        return 2.0 * yy * (1.0 - yy * z) if yy * z < 1.0 else 0.0
    else:                                  # epsilon-insensitive: max(0, |z - y| - eps)
        if yy - z > eps:
            return 1.0
        elif z - yy > eps:
            return -1.0
        return 0.0


def batch_uses_threads(Py_ssize_t k, double mean_row, int n_threads):
    """Whether ``LinearState.run(n_threads)`` may run batches of k examples with
    ``mean_row`` stored values each (the constant feature included) on a team
    of threads: n_threads > 1, an OpenMP build, k >= PARALLEL_MIN_BATCH and
    k * mean_row >= PARALLEL_MIN_VALUES (ranking pairs never do)."""
    return (n_threads > 1 and pg_have_openmp() != 0 and k >= PARALLEL_MIN_BATCH
            and k * mean_row >= PARALLEL_MIN_VALUES)


cdef double _mean_row(const int64_t[::1] indptr, bint constant_feature):
    """Mean stored values per row of a CSR matrix (plus 1 for the constant feature)."""
    cdef Py_ssize_t m = indptr.shape[0] - 1
    if m <= 0:
        return 0.0
    return (indptr[m] - indptr[0]) / <double> m + (1.0 if constant_feature else 0.0)


cdef inline double _shrink_factor(int64_t t, double t0) noexcept nogil:
    """1 - eta_t lambda = 1 - 1/(t + t0) (Eq. (5) with the step offset)."""
    return 1.0 - 1.0 / (t + t0)


cdef inline double _step_size(double lam, int64_t t, double t0) noexcept nogil:
    """eta_t = 1/(lambda (t + t0))."""
    return 1.0 / (lam * (t + t0))


cdef inline int64_t _lower_bound(const int32_t* idx, int64_t lo, int64_t hi, int64_t key) noexcept nogil:
    """First position j in [lo, hi) with idx[j] >= key (hi if none); idx[lo:hi] sorted."""
    cdef int64_t mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if idx[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline Py_ssize_t _cut(const int64_t* load, Py_ssize_t dim, double share) noexcept nogil:
    """First feature j in [0, dim] with load[j] >= share (load non-decreasing)."""
    cdef Py_ssize_t lo = 0, hi = dim, mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if <double> load[mid] < share:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef class LinearState:
    """State of one linear Pegasos run (w = a v, optional running average).

    Parameters
    ----------
    n_features : int
        Dimension of w (columns of the data).
    lam : float > 0
        Regularisation parameter lambda.
    projection : bool
        Project onto the ball of radius 1/sqrt(lambda) after every step (Eq. (6)).
    avg_start : int >= 0
        0: no averaging.  Otherwise the iterates w_t with t >= avg_start (t =
        1, 2, ...; w_1 = 0 is the iterate before the first step) are averaged.
    bias_mode : int
        0 none, 1 constant feature of value 1 (regularised, stored as the
        extra coordinate n_features of v), 2 unregularised b updated by its
        sub-gradient with the same step eta_t (paper Sec. 6, a heuristic).
    loss : int
        0 hinge max(0, 1 - yz), 1 log log(1 + exp(-yz)), 2 squared hinge
        max(0, 1 - yz)^2, 3 epsilon-insensitive max(0, |z - y| - epsilon)
        (paper Sec. 5: the step uses the loss's sub-gradient instead of y x).
    epsilon : float >= 0
        Width of the insensitive zone (loss 3).
    radius2 : float or None
        Squared radius of the projection ball; default 1/lambda (hinge, Eq. (6)).
    pairs : bool
        Ranking: each sample is a pair (a, b) of examples, the loss is taken
        on <w, x_a - x_b> with label sign(y_a - y_b).
    t0 : float >= 0
        Step offset: eta_t = 1/(lambda (t + t0)), shrink 1 - 1/(t + t0)
        (0 is the paper's step; Bottou's averaged SGD uses an offset).
    schedule : int
        The step rule (SCHEDULE_CODES): 0 Pegasos, eta_t = 1/(lambda (t +
        t0)); 1 Norma (paper Sec. 7.6), eta_t = eta/(lambda sqrt(t)); 2 a
        constant eta_t = eta.  Every rule shrinks by 1 - eta_t lambda; when
        that factor is <= 0 (eta_t lambda >= 1) it is taken as 0: the step
        replaces w_t by eta_t/|A_t| times the sub-gradient sum of the batch.
    eta : float > 0
        p of Norma, or the constant step (unused by schedule 0).

    Attributes
    ----------
    team_size : int
        Threads of the last threaded run (0 if none; see :meth:`run`).
    team_iterations : int
        Iterations run on a team of threads so far.
    team_chunks, serial_chunks : int
        Timed chunks run on the threads / the serial loop by
        ``run(n_threads > 1)`` (see ``ADAPT``).
    warm_rows : int
        Rows the helper thread of the last run() call read (-1: that call ran
        without one; see :func:`prefetch_thread`).
    warm_chunks, cold_chunks : int
        Chunks of ``WARM_CHUNK_ENTRIES`` entries the automatic mode has run
        with and without the helper (it times both and keeps the faster).
    """
    cdef readonly Py_ssize_t n_features, dim
    cdef pg_warm* warm        # the helper thread of the running serial loop (NULL: none)
    cdef readonly int64_t warm_rows
    cdef readonly int64_t warm_chunks, cold_chunks
    cdef double w_timing[3]           # the automatic helper's timings (pg_warm_choose)
    cdef readonly double lam, a, sqnorm, b
    cdef readonly bint projection
    cdef readonly int bias_mode
    cdef readonly int64_t t, avg_start, n_avg
    cdef readonly double A, b_sum
    cdef double[::1] v_mv
    cdef double[::1] u_mv
    cdef double* v
    cdef double* u
    cdef int64_t* viol
    cdef double* viol_y
    cdef Py_ssize_t viol_cap
    cdef readonly int64_t n_refold
    cdef int64_t* viol2
    cdef readonly int loss
    cdef readonly double epsilon, radius2, t0, eta
    cdef readonly int schedule
    cdef readonly bint pairs
    cdef readonly Py_ssize_t n_classes, size
    cdef int32_t* viol_r
    # buffers of the threaded mini-batch step (see _team), shared by the team
    # (per slot: each thread lists the violators among its batch positions from its first position)
    cdef double* p_g          # per slot: the violator's g times its weight (k)
    cdef int64_t* p_r         # per slot: the example (k)
    cdef double* p_d          # per slot: d = eta/|A_t| g c / a (k)
    cdef double* p_term       # per slot: its ||w||^2 increment (k)
    cdef int64_t* p_cnt       # per thread: its violators
    cdef double* p_bias       # per violator in batch order: v[n_features] before its add (k)
    cdef Py_ssize_t p_cap     # k the four above hold
    cdef int64_t* p_off       # per thread: start of each violator's products in its buffer (k + 1)
    cdef double** p_prod      # per thread: v_j x_ij before the add, for its features' stored values
    cdef int64_t* p_prod_cap  # per thread: capacity of its buffer
    cdef int p_threads        # threads p_off, p_prod and p_prod_cap are sized for
    cdef Py_ssize_t p_nv      # violators of the current batch
    cdef int p_fail           # a thread could not grow its buffer
    cdef double p_deadline    # a team chunk stops after the iteration that ends past this (0: none)
    cdef int p_stop           # ... and sets this
    cdef int64_t p_done       # iterations the last team chunk ran
    cdef Py_ssize_t p_k       # batch size the timings below are for
    cdef double p_sec_team, p_sec_serial   # seconds per iteration of the last timed chunk (-1: none)
    cdef double p_since       # seconds run by the faster path since the slower one was timed
    cdef readonly int64_t team_chunks, serial_chunks   # chunks run each way by run(n_threads > 1)
    cdef readonly int team_size           # threads of the last threaded run (0: none yet)
    cdef readonly int64_t team_iterations # iterations run by a team of threads so far

    def __cinit__(self, Py_ssize_t n_features, double lam, bint projection=False,
                  int64_t avg_start=0, int bias_mode=0, int loss=0, double epsilon=0.0,
                  radius2=None, bint pairs=False, Py_ssize_t n_classes=1, double t0=0.0,
                  int schedule=0, double eta=0.0):
        if schedule not in (0, 1, 2) or (schedule != 0 and not eta > 0.0):
            raise ValueError(f"schedule {schedule} needs a positive eta, got {eta!r}")
        self.warm = NULL
        self.warm_rows = -1
        self.warm_chunks = self.cold_chunks = 0
        self.w_timing[0] = self.w_timing[1] = -1.0
        self.w_timing[2] = 0.0
        self.t0 = t0
        self.schedule = schedule
        self.eta = eta
        self.loss = loss
        self.epsilon = epsilon
        self.radius2 = 1.0 / lam if radius2 is None else radius2
        self.pairs = pairs
        self.viol2 = NULL
        self.viol_r = NULL
        self.n_features = n_features
        self.bias_mode = bias_mode
        self.dim = n_features + (1 if bias_mode == 1 else 0)
        self.n_classes = n_classes
        self.size = n_classes * self.dim
        self.lam = lam
        self.projection = projection
        self.a = 1.0
        self.sqnorm = 0.0
        self.b = 0.0
        self.t = 0
        self.avg_start = avg_start
        self.n_avg = 0
        self.A = 0.0
        self.b_sum = 0.0
        self.n_refold = 0
        self.v_mv = np.zeros(self.size + 1, dtype=np.float64)
        self.v = &self.v_mv[0]
        if avg_start > 0:
            self.u_mv = np.zeros(self.size + 1, dtype=np.float64)
            self.u = &self.u_mv[0]
        else:
            self.u = NULL
        self.viol = NULL
        self.viol_y = NULL
        self.viol_cap = 0
        self.p_g = self.p_d = self.p_term = self.p_bias = NULL
        self.p_r = self.p_cnt = NULL
        self.p_cap = 0
        self.p_off = NULL
        self.p_prod = NULL
        self.p_prod_cap = NULL
        self.p_threads = 0
        self.team_size = 0
        self.team_iterations = 0
        self.p_k = 0
        self.p_sec_team = self.p_sec_serial = -1.0
        self.p_since = 0.0
        self.p_deadline = 0.0
        self.p_stop = 0
        self.p_done = 0
        self.team_chunks = self.serial_chunks = 0

    def __dealloc__(self):
        free(self.viol)
        free(self.viol2)
        free(self.viol_r)
        free(self.viol_y)
        self._free_team_buffers()

    cdef void _free_team_buffers(self) noexcept:
        cdef int j
        free(self.p_g)
        free(self.p_r)
        free(self.p_cnt)
        free(self.p_d)
        free(self.p_term)
        free(self.p_bias)
        free(self.p_off)
        if self.p_prod != NULL:
            for j in range(self.p_threads):
                free(self.p_prod[j])
        free(self.p_prod)
        free(self.p_prod_cap)
        self.p_g = self.p_d = self.p_term = self.p_bias = NULL
        self.p_r = self.p_cnt = NULL
        self.p_off = NULL
        self.p_prod = NULL
        self.p_prod_cap = NULL
        self.p_cap = 0
        self.p_threads = 0

    cdef int _reserve_team(self, Py_ssize_t k, int n_threads) except -1:
        """Buffers of the threaded step for batches of k examples and up to
        n_threads threads (each thread grows its own products buffer)."""
        if k > self.p_cap or n_threads > self.p_threads:
            self._free_team_buffers()
            self.p_g = <double*> malloc(sizeof(double) * k)
            self.p_r = <int64_t*> malloc(sizeof(int64_t) * k)
            self.p_cnt = <int64_t*> malloc(sizeof(int64_t) * n_threads)
            self.p_d = <double*> malloc(sizeof(double) * k)
            self.p_term = <double*> malloc(sizeof(double) * k)
            self.p_bias = <double*> malloc(sizeof(double) * k)
            self.p_off = <int64_t*> malloc(sizeof(int64_t) * (k + 1) * n_threads)
            self.p_prod = <double**> calloc(n_threads, sizeof(double*))
            self.p_prod_cap = <int64_t*> calloc(n_threads, sizeof(int64_t))
            self.p_threads = n_threads if self.p_prod != NULL else 0
            if (self.p_g == NULL or self.p_r == NULL or self.p_cnt == NULL or self.p_d == NULL or self.p_term == NULL or self.p_bias == NULL
                    or self.p_off == NULL or self.p_prod == NULL or self.p_prod_cap == NULL):
                self._free_team_buffers()
                raise MemoryError()
            self.p_cap = k
        return 0

    cdef int _reserve(self, Py_ssize_t k) except -1:
        if k > self.viol_cap:
            free(self.viol)
            free(self.viol2)
            free(self.viol_r)
            free(self.viol_y)
            self.viol = <int64_t*> malloc(sizeof(int64_t) * k)
            self.viol2 = <int64_t*> malloc(sizeof(int64_t) * k)
            self.viol_r = <int32_t*> malloc(sizeof(int32_t) * k)
            self.viol_y = <double*> malloc(sizeof(double) * k)
            if self.viol == NULL or self.viol2 == NULL or self.viol_r == NULL or self.viol_y == NULL:
                raise MemoryError()
            self.viol_cap = k
        return 0

    # ------------------------------------------------------------ helpers --
    cdef void _refold(self) noexcept nogil:
        """w = a v -> v <- a v, a <- 1.  The running sum A v - u is folded
        into u (u <- u - A v, A <- 0) rather than rescaled by 1/a, which
        overflowed after repeated refolds."""
        cdef Py_ssize_t j
        cdef double s = 0.0, a = self.a
        if self.u != NULL:
            self._fold_average()
        for j in range(self.size):
            self.v[j] *= a
            s += self.v[j] * self.v[j]
        self.a = 1.0
        self.sqnorm = s
        self.n_refold += 1

    cdef void _fold_average(self) noexcept nogil:
        """u <- u - A v, A <- 0: same running sum A v - u, but A restarts at 0.

        A v - u cancels badly once A / a is large (A holds the scales a_s of
        earlier iterates, |v| grows like 1/a); the projection can shrink a
        by orders of magnitude within a few steps."""
        cdef Py_ssize_t j
        for j in range(self.size):
            self.u[j] -= self.A * self.v[j]
        self.A = 0.0

    cdef void _zero(self) noexcept nogil:
        """Shrink by exactly 0 (t = 1): w <- 0, keeping the average right."""
        cdef Py_ssize_t j
        if self.u != NULL and self.A != 0.0:
            for j in range(self.size):
                self.u[j] -= self.A * self.v[j]
        memset(self.v, 0, sizeof(double) * self.size)
        self.a = 1.0
        self.sqnorm = 0.0

    def run(self, const int64_t[::1] indptr, const int32_t[::1] indices,
            const floating[::1] data, const double[::1] y,
            const int64_t[::1] order, int64_t n_iter, Py_ssize_t k, sample_weight=None,
            int n_threads=1, feature_load=None):
        """Run ``n_iter`` iterations on batches cut from ``order``.

        Iteration j (0-based, within this call) uses the examples
        ``order[j*k : min((j+1)*k, len(order))]``; the batch is divided by
        its own size, so a short last batch of an epoch is an average too.

        With ``n_threads > 1``, ``k >= PARALLEL_MIN_BATCH``, at least
        PARALLEL_MIN_VALUES stored values in a batch on average (k times the
        mean row length of X) and not in pair mode, the iterations of Fig. 2 can run on a team of OpenMP
        threads (see :meth:`_team`): the margins of the batch are split among
        the threads and the sub-gradient sum (Eq. (8)) is added to v by
        feature ranges.  Every coordinate of v and every sum receives the
        same operations in the same order as in the serial loop, so the
        iterates are bit-identical for any number of threads.  With ``ADAPT``
        (the default) the iterations run in timed chunks on the team or on
        the serial loop, whichever is currently faster (see :meth:`_plan`),
        so a machine whose cores are busy falls back to one thread.
        Otherwise (k below the threshold, one thread, ranking pairs, or a
        build without OpenMP) the serial loop runs.

        Parameters
        ----------
        indptr, indices, data : CSR arrays of X, shape (m, n_features);
            with ``n_threads > 1`` the column indices of each row must be
            sorted (repeats allowed), as pegasos' reader and
            :func:`pegasos.linear._csr_arrays` guarantee
        y : float64 array of shape (m,): -1.0/+1.0 for classification, the
            target for regression, the relevance grade for ranking
        order : int64 array of example indices (0 <= i < m); in pair mode
            (ranking) each sample is two consecutive entries (a, b) with
            y[a] != y[b]
        n_iter : number of iterations to run
        k : batch size >= 1 (samples per iteration)
        sample_weight : float64 array of shape (m,) or None
            Multiplies each example's loss (class weights).
        n_threads : int >= 1
            Threads for the mini-batch step (see above); the result does not
            depend on it.
        feature_load : int64 array of shape (dim + 1,) or None
            Non-decreasing cumulative work per feature (e.g. stored values
            per column, :func:`feature_load`), used to give the threads
            feature ranges of equal work; None: ranges of equal width.

        Raises
        ------
        ValueError
            ``order`` too short, ``sample_weight`` or ``feature_load`` of the
            wrong length, ``n_threads < 1``.
        MemoryError
            The buffers of the threaded step cannot be allocated (during the
            run: the state is then unusable).
        """
        cdef Py_ssize_t n_order = order.shape[0]
        cdef Py_ssize_t step = 2 if self.pairs else 1
        cdef const double[::1] sw
        cdef const double* swp = NULL
        cdef const int64_t[::1] load
        cdef const int64_t* loadp = NULL
        cdef int64_t chunk, done, n, walk
        cdef Py_ssize_t pos
        cdef bint team
        cdef double start
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        if n_iter <= 0:
            return
        if (n_iter - 1) * k * step >= n_order or n_order % step:
            raise ValueError("order is too short for n_iter batches")
        if sample_weight is not None:
            sw = sample_weight
            if sw.shape[0] != y.shape[0]:
                raise ValueError("sample_weight must have one entry per example")
            swp = &sw[0]
        self._reserve(k)
        self.warm_rows = -1
        if self.pairs or not batch_uses_threads(k, _mean_row(indptr, self.bias_mode == 1), n_threads):
            walk = min(<int64_t> n_order, n_iter * k * step)
            if indices.shape[0] and WARM_MODE == 1:
                self._run_warm(indptr, indices, data, y, swp, order, n_iter, k, False)
            elif (indices.shape[0] and WARM_MODE == -1 and n_threads >= 2 and walk >= WARM_MIN_ENTRIES
                    and indptr[indptr.shape[0] - 1] * (sizeof(int32_t) + sizeof(floating)) >= WARM_MIN_BYTES
                    and not _in_row_order(order, walk)):
                self._run_warm(indptr, indices, data, y, swp, order, n_iter, k, True)
            else:
                with nogil:
                    self._run(&indptr[0], &indices[0] if indices.shape[0] else NULL,
                              &data[0] if data.shape[0] else NULL, &y[0], swp, &order[0],
                              n_order, n_iter, k)
            return
        if feature_load is not None:
            load = feature_load
            if load.shape[0] != self.dim + 1:
                raise ValueError(f"feature_load must have dim + 1 = {self.dim + 1} entries")
            loadp = &load[0]
        self._reserve_team(k, n_threads)
        self.p_fail = 0
        if k != self.p_k:                   # timings are per iteration of batches of k
            self.p_k = k
            self.p_sec_team = self.p_sec_serial = -1.0
            self.p_since = 0.0
        chunk = max(1, ADAPT_CHUNK_EXAMPLES // k) if ADAPT else n_iter
        done = 0
        while done < n_iter:
            n = self._plan(chunk, n_iter - done) if ADAPT else n_iter
            team = n > 0
            n = n if team else -n
            pos = done * k
            start = _seconds()
            if team:
                # a chunk of the threads gives up at ADAPT_SLACK times the serial loop's time
                self.p_deadline = (start + ADAPT_SLACK * n * self.p_sec_serial
                                   if ADAPT and self.p_sec_serial > 0.0 else 0.0)
                self.p_stop = 0
                self.p_done = 0
                with nogil, parallel(num_threads=n_threads):
                    self._team(&indptr[0], &indices[0] if indices.shape[0] else NULL,
                               &data[0] if data.shape[0] else NULL, &y[0], swp, &order[pos],
                               n_order - pos, n, k, loadp, pg_thread_num(), pg_num_threads())
                if self.p_fail:
                    raise MemoryError("cannot grow a buffer of the threaded step; the state is unusable")
                n = self.p_done
            else:
                with nogil:
                    self._run(&indptr[0], &indices[0] if indices.shape[0] else NULL,
                              &data[0] if data.shape[0] else NULL, &y[0], swp, &order[pos],
                              n_order - pos, n, k)
            self._timed(team, (_seconds() - start) / n, n)
            done += n

    cdef void _run_warm(self, const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
                        const double[::1] y, const double* swp, const int64_t[::1] order, int64_t n_iter,
                        Py_ssize_t k, bint adapt):
        """The serial loop of run() with the helper thread, in chunks of about WARM_CHUNK_ENTRIES entries
        (consecutive calls of _run on the rest of the order: the iterates of one call).  With ``adapt``
        each chunk runs with the helper or without it, whichever was faster at its last timing, the
        slower timed again every WARM_PROBE chunks: on a machine whose processors other work holds,
        the helper only takes the loop's time (measured: twice as slow).  Otherwise every chunk has it."""
        cdef Py_ssize_t step = 2 if self.pairs else 1
        cdef Py_ssize_t n_order = order.shape[0]
        cdef int64_t chunk = max(1, WARM_CHUNK_ENTRIES // (k * step))
        cdef int64_t done = 0, n, pos, length, rows = 0
        cdef bint use, ran = False
        cdef double start
        while done < n_iter:
            n = min(chunk, n_iter - done)
            pos = done * k * step
            length = min(<int64_t> (n_order - pos), n * k * step)
            use = pg_warm_choose(self.w_timing, WARM_PROBE) if adapt else True
            self.warm = pg_warm_start(&order[pos], length, &indptr[0], &indices[0], &data[0], sizeof(floating),
                                      WARM_AHEAD, WARM_HINT) if use else NULL
            use = self.warm != NULL             # (a thread that could not start: timed as the loop alone)
            start = _seconds()
            with nogil:
                self._run(&indptr[0], &indices[0], &data[0] if data.shape[0] else NULL, &y[0], swp, &order[pos],
                          n_order - pos, n, k)
                if self.warm != NULL:
                    rows += pg_warm_stop(self.warm)
                    self.warm = NULL
                    ran = True
            pg_warm_timed(self.w_timing, use, (_seconds() - start) / max(1, length))
            if use:
                self.warm_chunks += 1
            else:
                self.cold_chunks += 1
            done += n
        self.warm_rows = rows if ran else -1

    cdef int64_t _plan(self, int64_t chunk, int64_t rest):
        """Iterations of the next chunk, negative for the serial loop.

        The serial loop is timed on a short probe (chunk / 4 iterations),
        then the team runs a 2-iteration warm-up (thread start, buffer
        growth) and a probe; then the faster one runs whole chunks and the
        slower one is probed again once the time run since its last probe is
        ADAPT_PROBE times what the probe cost (so probing costs at most
        about 1/ADAPT_PROBE of the run).  A team chunk also stops after the
        iteration that takes it past ADAPT_SLACK times the serial loop's
        time for the chunk (run() sets the deadline), which bounds what a
        probe costs when other processes hold the cores."""
        cdef int64_t probe = min(max(1, chunk // 4), rest)
        cdef bint team_faster
        if self.p_sec_serial < 0.0:
            return -probe
        if self.team_chunks == 0:
            return min(2, rest)
        if self.p_sec_team < 0.0:
            return probe
        team_faster = self.p_sec_team <= self.p_sec_serial
        if self.p_since >= ADAPT_PROBE * probe * (self.p_sec_serial if team_faster else self.p_sec_team):
            return -probe if team_faster else probe
        return min(chunk, rest) if team_faster else -min(chunk, rest)

    cdef void _timed(self, bint team, double sec, int64_t n):
        """Record a chunk's seconds per iteration (see _plan)."""
        cdef bint was_faster
        if self.p_sec_team < 0.0 or self.p_sec_serial < 0.0:
            was_faster = True
        else:
            was_faster = (self.p_sec_team <= self.p_sec_serial) == team
        if team:
            if self.team_chunks > 0:        # the first one starts the threads and grows buffers
                self.p_sec_team = sec
            self.team_chunks += 1
        else:
            self.p_sec_serial = sec
            self.serial_chunks += 1
        if was_faster:
            self.p_since += sec * n
        else:
            self.p_since = 0.0

    cdef inline void _prefetch(self, const int64_t* indptr, const int32_t* indices, const floating* data,
                               const double* y, const int64_t* order, Py_ssize_t e,
                               Py_ssize_t n_ahead) noexcept nogil:
        """Prefetch for the examples after entry ``e`` of ``order`` (``n_ahead``
        entries valid): row pointers and label 2 PF_ROWS ahead, the row's
        index and value arrays PF_ROWS ahead, the weights of its features
        PF_WEIGHTS ahead.  Writes nothing; reads only entries of ``order`` (all
        of them valid example indices, as run() requires), the row pointers
        and, for the weights, the column indices of those rows."""
        cdef Py_ssize_t q, d = PF_ROWS
        cdef int64_t i, j
        if d <= 0:
            return
        q = e + 2 * d
        if q < n_ahead:
            i = order[q]
            pg_prefetch(&indptr[i])
            pg_prefetch(&indptr[i + 1])
            pg_prefetch(&y[i])
        q = e + d
        if q < n_ahead:
            pg_prefetch_row(indptr, order[q], indices, data, sizeof(floating))
        q = e + PF_WEIGHTS
        if PF_WEIGHTS > 0 and q < n_ahead:
            i = order[q]
            for j in range(indptr[i], indptr[i + 1]):
                pg_prefetch_w(&self.v[indices[j]])
                if self.u != NULL:
                    pg_prefetch_w(&self.u[indices[j]])

    cdef inline double _score(self, const int64_t* indptr, const int32_t* indices, const floating* data,
                              int64_t i, Py_ssize_t off=0) noexcept nogil:
        """<w, x_i> + b with w = a v (the constant feature included); off
        selects the class row of a multiclass weight matrix."""
        cdef Py_ssize_t j
        cdef double s = 0.0
        cdef double* v = self.v + off
        for j in range(indptr[i], indptr[i + 1]):
            s += v[indices[j]] * data[j]
        if self.bias_mode == 1:
            s += v[self.n_features]
        return self.a * s + self.b

    cdef inline void _add(self, const int64_t* indptr, const int32_t* indices, const floating* data,
                          int64_t i, double d, Py_ssize_t off=0) noexcept nogil:
        """v <- v + d x_i (x_i with its constant feature), keeping ||w||^2 and the average."""
        cdef Py_ssize_t j, jj, nf = self.n_features
        cdef double dotv = 0.0, xx = 0.0, x, old
        cdef double* v = self.v + off
        cdef double* u = NULL if self.u == NULL else self.u + off
        for j in range(indptr[i], indptr[i + 1]):
            jj = indices[j]
            x = data[j]
            old = v[jj]
            dotv += old * x
            xx += x * x
            v[jj] = old + d * x
            if u != NULL:
                u[jj] += self.A * d * x
        if self.bias_mode == 1:
            old = v[nf]
            dotv += old
            xx += 1.0
            v[nf] = old + d
            if u != NULL:
                u[nf] += self.A * d
        self.sqnorm += self.a * self.a * (2.0 * d * dotv + d * d * xx)

    cdef Py_ssize_t _collect(self, const int64_t* indptr, const int32_t* indices,
                             const floating* data, const double* y, const double* sw, const int64_t* order,
                             Py_ssize_t bsz, Py_ssize_t n_ahead) noexcept nogil:
        """Scores at w_t of the batch ``order[0 : bsz * step]``; keep the examples
        with a non-zero sub-gradient g = -dloss/dz (paper Sec. 5: only the loss's
        sub-gradient changes) in viol / viol2 / viol_y (g times the weight), in
        batch order.  Returns their number.  The examples of ``order[: n_ahead]``
        after each scored one are prefetched (_prefetch)."""
        cdef Py_ssize_t r, nv = 0, step = 2 if self.pairs else 1
        cdef int64_t i, i2
        cdef double z, yy, g, wgt
        for r in range(bsz):
            i = order[r * step]
            self._prefetch(indptr, indices, data, y, order, r * step, n_ahead)
            if self.pairs:
                self._prefetch(indptr, indices, data, y, order, r * step + 1, n_ahead)
                # ranking: the example is x_a - x_b with label sign(y_a - y_b)
                i2 = order[r * step + 1]
                z = self._score(indptr, indices, data, i) - self._score(indptr, indices, data, i2)
                yy = 1.0 if y[i] > y[i2] else -1.0
                wgt = 1.0
            else:
                i2 = -1
                z = self._score(indptr, indices, data, i)
                yy = y[i]
                wgt = 1.0 if sw == NULL else sw[i]
            g = _subgradient(self.loss, yy, z, self.epsilon)
            if g != 0.0:
                self.viol[nv] = i
                self.viol2[nv] = i2
                self.viol_y[nv] = g * wgt
                nv += 1
        return nv

    cdef void _update(self, const int64_t* indptr, const int32_t* indices, const floating* data,
                      const int64_t* rows, const int64_t* rows2, const double* gw,
                      Py_ssize_t nv, Py_ssize_t bsz, int64_t t) noexcept nogil:
        """Iteration t after the scores (Fig. 2): shrink (and the running sum),
        add eta_t/|A_t| * sum of g_r x_r over the nv violators in batch order
        (row ``rows[r]`` of the CSR arrays, or row r when ``rows`` is NULL;
        minus ``rows2[r]`` for ranking pairs), project and refold."""
        cdef Py_ssize_t r
        cdef int64_t i
        cdef double eta, c
        eta = self._begin_step(t)
        c = eta / bsz
        for r in range(nv):
            i = r if rows == NULL else rows[r]
            self._add(indptr, indices, data, i, c * gw[r] / self.a)
            if rows2 != NULL:
                self._add(indptr, indices, data, rows2[r], -c * gw[r] / self.a)
            if self.bias_mode == 2:
                self.b += c * gw[r]
        self._end_step(t)

    cdef void _run(self, const int64_t* indptr, const int32_t* indices,
                   const floating* data, const double* y, const double* sw, const int64_t* order,
                   Py_ssize_t n_order, int64_t n_iter, Py_ssize_t k) noexcept nogil:
        cdef int64_t it, t
        cdef Py_ssize_t pos = 0, bsz, nv, step = 2 if self.pairs else 1
        for it in range(n_iter):
            t = self.t + 1
            bsz = k
            if pos + bsz * step > n_order:
                bsz = (n_order - pos) // step
            nv = self._collect(indptr, indices, data, y, sw, order + pos, bsz, n_order - pos)
            pos += bsz * step
            pg_warm_publish(self.warm, pos)
            self._update(indptr, indices, data, self.viol, self.viol2 if self.pairs else NULL,
                         self.viol_y, nv, bsz, t)

    def collect(self, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                const double[::1] y, const int64_t[::1] rows, sample_weight=None):
        """The margin phase of one iteration of Fig. 2, without the update.

        Scores the examples ``rows`` (a part of the batch A_t) at the
        current w_t exactly as :meth:`run` does and returns those with a
        non-zero sub-gradient, for a step applied with :meth:`apply_step`
        (training on shards: the margins are computed where the rows are).

        Parameters
        ----------
        indptr, indices, data : CSR arrays (int64, int32, float64) of X,
            shape (m, n_features), column indices < n_features
        y : float64 array of shape (m,): -1.0/+1.0, or the regression target
        rows : int64 array of example indices in 0..m-1 (the batch, in order)
        sample_weight : float64 array of shape (m,) or None

        Returns
        -------
        (viol, g) : int64 array of the violators' positions in ``rows``
            order (their example indices), float64 array of g times the
            weight (g = -dloss/dz of Sec. 5; y for the hinge), batch order.

        Raises
        ------
        ValueError
            Pair (ranking) mode, an index out of range, arrays of the wrong length.
        """
        cdef Py_ssize_t nv, r, n = rows.shape[0], m = indptr.shape[0] - 1
        cdef int64_t j
        cdef bint bad
        cdef int64_t[::1] vv
        cdef double[::1] gv
        cdef const double* swp = NULL
        cdef const double[::1] sw
        if self.pairs or self.n_classes != 1:
            raise ValueError("collect() is for binary classification and regression")
        if y.shape[0] != m:
            raise ValueError("y must have one entry per example")
        if n and (np.min(rows) < 0 or np.max(rows) >= m):
            raise ValueError("rows holds an index outside 0..m-1")
        if indptr[0] != 0 or indptr[m] > indices.shape[0] or data.shape[0] != indices.shape[0]:
            raise ValueError("inconsistent CSR arrays")
        bad = False
        with nogil:                 # the rows' columns only: O(non-zeros of the batch), not of X
            for r in range(n):
                for j in range(indptr[rows[r]], indptr[rows[r] + 1]):
                    if indices[j] < 0 or indices[j] >= self.n_features:
                        bad = True
        if bad:
            raise ValueError("a column index of the rows is outside 0..n_features-1")
        if sample_weight is not None:
            sw = sample_weight
            if sw.shape[0] != m:
                raise ValueError("sample_weight must have one entry per example")
            swp = &sw[0]
        self._reserve(max(n, 1))
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        with nogil:
            nv = self._collect(&indptr[0], &indices[0] if indices.shape[0] else NULL,
                               &data[0] if data.shape[0] else NULL, &y[0], swp, &rows[0], n, n)
        viol = np.empty(nv, dtype=np.int64)
        g = np.empty(nv, dtype=np.float64)
        vv = viol
        gv = g
        for r in range(nv):
            vv[r] = self.viol[r]
            gv[r] = self.viol_y[r]
        return viol, g

    def apply_step(self, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                   const double[::1] g, Py_ssize_t batch_size):
        """Iteration t = self.t + 1 of Fig. 2 with the violators given from outside:
        w <- (1 - 1/t) w + eta_t/|A_t| sum_r g_r x_r, then the projection and the
        average, through the same arithmetic as :meth:`run`.

        Parameters
        ----------
        indptr, indices, data : CSR arrays (int64, int32, float64) of the nv
            violators' rows x_r, in batch order (column indices < n_features)
        g : float64 array of shape (nv,): g_r times the weight (:meth:`collect`)
        batch_size : |A_t| >= 1, the size of the whole batch (violators or not)

        Raises
        ------
        ValueError
            Pair (ranking) or multiclass state, lengths that do not agree, an index out of range.
        """
        cdef Py_ssize_t nv = indptr.shape[0] - 1
        if self.pairs or self.n_classes != 1:
            raise ValueError("apply_step() is for binary classification and regression")
        if batch_size < 1 or g.shape[0] != nv or nv > batch_size:
            raise ValueError("g needs one entry per row and batch_size >= the number of rows")
        if indptr[0] != 0 or indptr[nv] != indices.shape[0] or data.shape[0] != indices.shape[0]:
            raise ValueError("inconsistent CSR arrays")
        if indices.shape[0] and (np.max(indices) >= self.n_features or np.min(indices) < 0):
            raise ValueError("a column index is outside 0..n_features-1")
        with nogil:
            self._update(&indptr[0], &indices[0] if indices.shape[0] else NULL,
                         &data[0] if data.shape[0] else NULL, NULL, NULL,
                         &g[0] if nv else NULL, nv, batch_size, self.t + 1)

    cdef void _team(self, const int64_t* indptr, const int32_t* indices,
                    const floating* data, const double* y, const double* sw, const int64_t* order,
                    Py_ssize_t n_order, int64_t n_iter, Py_ssize_t k, const int64_t* load,
                    int tid, int nthr) noexcept nogil:
        """One thread's share of ``n_iter`` iterations of Fig. 2 (no pairs).

        Called by every thread of an OpenMP team (thread ``tid`` of
        ``nthr``).  Every thread derives the scale a and the step eta_t of
        the iteration itself (the expressions of _begin_step), and an
        iteration has four phases separated by barriers:

        A. margins: thread tid scores batch positions [bsz tid/nthr,
           bsz (tid+1)/nthr) at w_t = a v (each a dot product summed in row
           order, as in _score) and lists those with g = -dloss/dz != 0 (the
           violators), with d = eta_t/|A_t| g c / a, in slots from its first
           position: the lists of threads 0, 1, ... in turn are the
           violators in batch order;
        C. thread 0 moves w_t into the running average and shrinks
           (_begin_step); every thread walks all violators in batch order and
           adds d x to v only for the features of its range [lo, hi) (start
           found by binary search in the sorted row), recording the products
           v_j x_j before each add in its own buffer; so each coordinate
           gets its adds in the serial order;
        D. thread tid computes, for its own violators, the increment of
           ||w||^2 of _add: the products summed in row order (thread 0's part
           of the row, then thread 1's, ...) and the x_j^2;
        E. thread 0 adds the increments in batch order, updates the
           unregularised bias, projects and refolds (_end_step).

        Every operation has the operands and the order of _run/_add, so the
        iterates do not depend on nthr.
        """
        cdef int64_t it, t, i, j, j0, j1, q, cap, cnt, cv, first
        cdef Py_ssize_t pos = 0, bsz, r, r0, r1, nv, slot, nf = self.n_features, dim = self.dim
        cdef Py_ssize_t lo, hi
        cdef int jt
        cdef double a_m, b_m, A_m, a_new, A_new, rho, c, d, s, g, gw, x, old, dotv, xx, total, eta_t
        cdef double eps = self.epsilon
        cdef int loss = self.loss, bias_mode = self.bias_mode
        cdef double* v = self.v
        cdef double* u = self.u
        cdef double* pg = self.p_g          # per slot: g times the example's weight
        cdef int64_t* pr = self.p_r         # per slot: the example
        cdef double* pd = self.p_d          # per slot: d
        cdef double* pterm = self.p_term    # per slot: the ||w||^2 increment
        cdef int64_t* pcnt = self.p_cnt
        cdef double* pbias = self.p_bias    # per violator (batch order): v[nf] before its add
        cdef int64_t stride = k + 1
        cdef int64_t* my_off = self.p_off + tid * stride
        cdef int64_t* off
        cdef double* buf
        cdef bint own_bias
        # ---- this thread's feature range: equal shares of the load, or of the width
        if load != NULL and load[dim] > 0:
            total = <double> load[dim]
            lo = 0 if tid == 0 else _cut(load, dim, (total * tid) / nthr)
            hi = dim if tid == nthr - 1 else _cut(load, dim, (total * (tid + 1)) / nthr)
        else:
            lo = (dim * tid) // nthr
            hi = (dim * (tid + 1)) // nthr
        own_bias = bias_mode == 1 and lo <= nf < hi
        if tid == 0:
            self.team_size = nthr
            self.team_iterations += n_iter
        for it in range(n_iter):
            t = self.t + 1
            a_m = self.a
            b_m = self.b
            A_m = self.A
            bsz = k if pos + k <= n_order else n_order - pos
            # the scale and running-sum factor after _begin_step(t), and eta_t / |A_t|
            rho = self._rho_eta(t, &eta_t)
            a_new = a_m * rho if rho > 0.0 else 1.0
            A_new = A_m + a_m if (u != NULL and t >= self.avg_start) else A_m
            c = eta_t / bsz
            # ---- A: margins at w_t; this thread's violators, in order, from its first position
            r0 = (bsz * tid) // nthr
            r1 = (bsz * (tid + 1)) // nthr
            cnt = 0
            for r in range(r0, r1):
                i = order[pos + r]
                # the entries ahead may be another thread's: the caches they land in are shared
                self._prefetch(indptr, indices, data, y, order + pos, r, n_order - pos)
                s = 0.0
                for j in range(indptr[i], indptr[i + 1]):
                    s += v[indices[j]] * data[j]
                if bias_mode == 1:
                    s += v[nf]
                g = _subgradient(loss, y[i], a_m * s + b_m, eps)
                if g != 0.0:
                    gw = g * (1.0 if sw == NULL else sw[i])
                    pg[r0 + cnt] = gw
                    pr[r0 + cnt] = i
                    pd[r0 + cnt] = c * gw / a_new
                    cnt += 1
            pcnt[tid] = cnt
            pg_barrier()
            # ---- C: average and shrink (thread 0), then v <- v + d x over this thread's features
            if tid == 0:
                self._begin_step(t)
            if rho <= 0.0:
                pg_barrier()        # t = 1 with no offset: _begin_step zeroes v
            buf = self.p_prod[tid]
            cap = self.p_prod_cap[tid]
            nv = 0
            q = 0
            for jt in range(nthr):
                first = (bsz * jt) // nthr
                for cv in range(pcnt[jt]):
                    slot = first + cv
                    my_off[nv] = q
                    if lo < hi:
                        i = pr[slot]
                        d = pd[slot]
                        j0 = indptr[i]
                        j1 = indptr[i + 1]
                        j = j0 if lo == 0 else _lower_bound(indices, j0, j1, lo)
                        if q + (j1 - j) > cap:
                            cap = 2 * cap if 2 * cap > q + (j1 - j) + 1024 else q + (j1 - j) + 1024
                            buf = <double*> realloc(buf, sizeof(double) * cap)
                            if buf == NULL:
                                self.p_fail = 1
                                self.p_prod[tid] = NULL
                                self.p_prod_cap[tid] = 0
                                cap = 0
                                break
                            self.p_prod[tid] = buf
                            self.p_prod_cap[tid] = cap
                        while j < j1 and indices[j] < hi:
                            x = data[j]
                            old = v[indices[j]]
                            buf[q] = old * x
                            q += 1
                            v[indices[j]] = old + d * x
                            if u != NULL:
                                u[indices[j]] += A_new * d * x
                            j += 1
                        if own_bias:
                            old = v[nf]
                            pbias[nv] = old
                            v[nf] = old + d
                            if u != NULL:
                                u[nf] += A_new * d
                    nv += 1
                if self.p_fail:
                    break
            my_off[nv] = q
            pg_barrier()
            if self.p_fail:
                return
            # ---- D: the ||w||^2 increment of this thread's violators (as in _add)
            nv = 0                      # violators of the threads before this one
            for jt in range(tid):
                nv += pcnt[jt]
            for cv in range(pcnt[tid]):
                slot = r0 + cv
                i = pr[slot]
                d = pd[slot]
                dotv = 0.0
                for jt in range(nthr):
                    off = self.p_off + jt * stride
                    buf = self.p_prod[jt]
                    for q in range(off[nv + cv], off[nv + cv + 1]):
                        dotv += buf[q]
                xx = 0.0
                for j in range(indptr[i], indptr[i + 1]):
                    x = data[j]
                    xx += x * x
                if bias_mode == 1:
                    dotv += pbias[nv + cv]
                    xx += 1.0
                pterm[slot] = self.a * self.a * (2.0 * d * dotv + d * d * xx)
            pg_barrier()
            # ---- E: ||w||^2 and b in batch order, projection, refold
            if tid == 0:
                for jt in range(nthr):
                    first = (bsz * jt) // nthr
                    for cv in range(pcnt[jt]):
                        self.sqnorm += pterm[first + cv]
                        if bias_mode == 2:
                            self.b += c * pg[first + cv]
                self._end_step(t)
                self.p_done = it + 1
                if self.p_deadline > 0.0 and _seconds() > self.p_deadline:
                    self.p_stop = 1
            pg_barrier()
            if self.p_stop:
                return
            pos += bsz

    cdef inline double _rho_eta(self, int64_t t, double* eta) noexcept nogil:
        """The step rule at iteration t: sets eta[0] = eta_t and returns the
        shrink factor 1 - eta_t lambda (Pegasos: 1 - 1/(t + t0), exactly 0
        at t = 1 when t0 = 0; Norma: eta_t = p/(lambda sqrt(t)); constant:
        eta_t = eta)."""
        cdef double e
        if self.schedule == 0:
            eta[0] = _step_size(self.lam, t, self.t0)
            return _shrink_factor(t, self.t0)
        if self.schedule == 1:
            e = self.eta / (self.lam * sqrt(<double> t))
        else:
            e = self.eta
        eta[0] = e
        return 1.0 - e * self.lam

    cdef inline double _begin_step(self, int64_t t) noexcept nogil:
        """Iteration t, after the scores: w_t enters the running sum, then
        w <- (1 - eta_t lambda) w (= (1 - 1/t) w for Pegasos); a factor <= 0
        sets w to 0 (the step's add then makes w_t+1 the new gradient term).
        Returns eta_t."""
        cdef double rho, eta
        if self.u != NULL and t >= self.avg_start:
            self.A += self.a
            self.b_sum += self.b
            self.n_avg += 1
        rho = self._rho_eta(t, &eta)
        if rho <= 0.0:
            self._zero()
        else:
            self.a *= rho
            self.sqnorm *= rho * rho
        return eta

    cdef inline void _end_step(self, int64_t t) noexcept nogil:
        """Iteration t, after the sparse adds: projection onto the ball of
        radius sqrt(radius2) (1/sqrt(lambda) for the hinge, Eq. (6)), refold."""
        cdef double s
        if self.sqnorm < 0.0:
            self.sqnorm = 0.0
        if self.projection and self.sqnorm > self.radius2:
            s = sqrt(self.radius2 / self.sqnorm)
            self.a *= s
            self.sqnorm = self.radius2
        if self.a < REFOLD_BELOW:
            self._refold()
        elif self.u != NULL and self.A > AVG_FOLD_RATIO * self.n_avg * self.a:
            self._fold_average()
        self.t = t

    def run_multiclass(self, const int64_t[::1] indptr, const int32_t[::1] indices,
                       const floating[::1] data, const int32_t[::1] yc, const double[::1] cost,
                       const int64_t[::1] order, int64_t n_iter, Py_ssize_t k, sample_weight=None):
        """Crammer-Singer multiclass Pegasos (paper Sec. 5, Eq. (20)).

        W (n_classes x dim) is stored as a times the rows of v.  For each
        example, z_r = <W_r, x>; with r^ = argmax_r delta(r, y) + z_r - z_y
        (delta(y, y) = 0), a violation (r^ != y, value > 0) adds
        eta/|A_t| x to row y and subtracts it from row r^.

        Parameters
        ----------
        yc : int32 array of shape (m,), class index 0..n_classes-1 of each example
        cost : float64 array of shape (n_classes * n_classes,), row-major
            delta(r, y) at [y * n_classes + r]; zero on the diagonal
        order, n_iter, k, sample_weight : as in :meth:`run`
        """
        cdef Py_ssize_t n_order = order.shape[0]
        cdef const double[::1] sw
        cdef const double* swp = NULL
        if n_iter <= 0:
            return
        if (n_iter - 1) * k >= n_order:
            raise ValueError("order is too short for n_iter batches")
        if cost.shape[0] != self.n_classes * self.n_classes:
            raise ValueError("cost must have n_classes^2 entries")
        if sample_weight is not None:
            sw = sample_weight
            swp = &sw[0]
        self._reserve(k)
        with nogil:
            self._run_cs(&indptr[0], &indices[0] if indices.shape[0] else NULL,
                         &data[0] if data.shape[0] else NULL, &yc[0], &cost[0], swp, &order[0],
                         n_order, n_iter, k)

    cdef void _run_cs(self, const int64_t* indptr, const int32_t* indices, const floating* data,
                      const int32_t* yc, const double* cost, const double* sw, const int64_t* order,
                      Py_ssize_t n_order, int64_t n_iter, Py_ssize_t k) noexcept nogil:
        cdef int64_t it, t, i
        cdef Py_ssize_t pos = 0, bsz, r, nv, K = self.n_classes, dim = self.dim, q
        cdef int32_t y, best_r
        cdef double eta, c, d, zy, val, best
        for it in range(n_iter):
            t = self.t + 1
            bsz = k
            if pos + bsz > n_order:
                bsz = n_order - pos
            nv = 0
            for r in range(bsz):
                i = order[pos + r]
                y = yc[i]
                zy = self._score(indptr, indices, data, i, y * dim)
                best = 0.0
                best_r = y
                for q in range(K):
                    if q != y:
                        val = cost[y * K + q] + self._score(indptr, indices, data, i, q * dim) - zy
                        if val > best:
                            best = val
                            best_r = <int32_t> q
                if best_r != y:
                    self.viol[nv] = i
                    self.viol_r[nv] = best_r
                    self.viol_y[nv] = 1.0 if sw == NULL else sw[i]
                    nv += 1
            pos += bsz
            eta = self._begin_step(t)
            c = eta / bsz
            for r in range(nv):
                i = self.viol[r]
                d = c * self.viol_y[r] / self.a
                self._add(indptr, indices, data, i, d, yc[i] * dim)
                self._add(indptr, indices, data, i, -d, self.viol_r[r] * dim)
            self._end_step(t)

    # ------------------------------------------------------------ results --
    def weights(self):
        """The current iterate: (w, b) with w of shape (dim,) float64
        (dim = n_features, plus 1 for the constant-feature bias) and b the
        unregularised bias (0 unless bias_mode == 2)."""
        w = np.asarray(self.v_mv[:self.size]) * self.a
        return w, self.b

    def average(self):
        """The mean of the iterates w_t, t >= avg_start: (w_bar, b_bar, count)."""
        if self.u == NULL:
            raise ValueError("this run does not average")
        if self.n_avg == 0:
            return np.zeros(self.size), 0.0, 0
        v = np.asarray(self.v_mv[:self.size])
        u = np.asarray(self.u_mv[:self.size])
        w = (self.A * v - u) / self.n_avg
        return w, self.b_sum / self.n_avg, self.n_avg

    def exact_sqnorm(self):
        """||w||^2 recomputed from v (the tracked value drifts by rounding)."""
        v = np.asarray(self.v_mv[:self.size])
        return float(self.a * self.a * np.dot(v, v))

    # ---------------------------------------------------------- warm start --
    def get_state(self):
        """Everything the loop needs to continue this run, as a plain dict.

        Together with the same constructor settings, :meth:`set_state` of a
        new state restores it exactly, so that running T1 iterations, moving
        the state and running T2 more gives the same bits as T1 + T2
        iterations on one state (the step schedule eta_t = 1/(lambda (t +
        t0)) and the running average go on from t).

        Returns
        -------
        dict with
            ``v`` : float64 array of shape (size,), the vector of w = a v
            (size = n_classes * dim); ``u`` : float64 array of shape (size,)
            or None, the running-sum correction of the average (A v - u is
            the sum of the averaged iterates); ``a``, ``sqnorm`` (||w||^2),
            ``b`` (unregularised bias), ``A``, ``b_sum`` : float;
            ``t`` (iterations done), ``n_avg`` (iterates averaged),
            ``avg_start``, ``n_refold`` : int; and the settings the state
            is only valid with: ``n_features``, ``dim``, ``n_classes``,
            ``bias_mode``, ``loss``, ``pairs``, ``lam``, ``t0``,
            ``epsilon``, ``radius2``, ``projection``, ``schedule``, ``eta``.
        """
        return {
            "v": np.array(self.v_mv[:self.size], dtype=np.float64),
            "u": None if self.u == NULL else np.array(self.u_mv[:self.size], dtype=np.float64),
            "a": float(self.a), "sqnorm": float(self.sqnorm), "b": float(self.b),
            "A": float(self.A), "b_sum": float(self.b_sum),
            "t": int(self.t), "n_avg": int(self.n_avg), "avg_start": int(self.avg_start),
            "n_refold": int(self.n_refold),
            "n_features": int(self.n_features), "dim": int(self.dim), "n_classes": int(self.n_classes),
            "bias_mode": int(self.bias_mode), "loss": int(self.loss), "pairs": bool(self.pairs),
            "lam": float(self.lam), "t0": float(self.t0), "epsilon": float(self.epsilon),
            "schedule": int(self.schedule), "eta": float(self.eta),
            "radius2": float(self.radius2), "projection": bool(self.projection),
        }

    def set_state(self, state):
        """Continue from ``state`` (a dict of :meth:`get_state`).

        The state must come from a run with the same problem: n_features,
        n_classes, bias_mode, loss, pairs, lambda, t0, epsilon, projection, the
        step rule (schedule and eta; a state without them is Pegasos') and
        whether it averages (avg_start 0 or not) are checked.  avg_start
        is restored too (the average goes on over the iterates w_t with t >=
        the saved avg_start); the radius of the projection is this object's.
        The arrays are copied.

        Raises
        ------
        ValueError
            A missing key, a setting that differs, ``v``/``u`` of the wrong
            shape or not finite, or a negative counter.
        """
        cdef Py_ssize_t j
        cdef const double[::1] saved      # typed: an element of a Python array object costs a call
        try:
            v = np.ascontiguousarray(state["v"], dtype=np.float64)
            u = state["u"]
            a, sqnorm, b = float(state["a"]), float(state["sqnorm"]), float(state["b"])
            A, b_sum = float(state["A"]), float(state["b_sum"])
            t, n_avg, n_refold = int(state["t"]), int(state["n_avg"]), int(state["n_refold"])
            avg_start = int(state["avg_start"])
            same = {"n_features": self.n_features, "n_classes": self.n_classes, "bias_mode": self.bias_mode,
                    "loss": self.loss, "pairs": bool(self.pairs), "lam": self.lam, "t0": self.t0,
                    "epsilon": self.epsilon, "projection": bool(self.projection)}
            for key, mine in same.items():
                if state[key] != mine:
                    raise ValueError(f"the saved state has {key} = {state[key]!r}, this run {mine!r}")
            for key, mine, old in (("schedule", self.schedule, 0), ("eta", self.eta, 0.0)):
                if state.get(key, old) != mine:      # states saved before the step rules: Pegasos
                    raise ValueError(f"the saved state has {key} = {state.get(key, old)!r}, this run {mine!r}")
        except KeyError as e:
            raise ValueError(f"the saved state lacks {e.args[0]!r}") from None
        except TypeError as e:
            raise ValueError(f"the saved state is not a dict of get_state(): {e}") from None
        if v.shape != (self.size,):
            raise ValueError(f"the saved v has shape {v.shape}, this run needs ({self.size},)")
        if (u is None) != (self.u == NULL):
            raise ValueError("the saved state " + ("does not average" if u is None else "averages")
                             + ", this run " + ("does not" if u is not None else "does"))
        if u is not None:
            u = np.ascontiguousarray(u, dtype=np.float64)
            if u.shape != (self.size,):
                raise ValueError(f"the saved u has shape {u.shape}, this run needs ({self.size},)")
            if not np.all(np.isfinite(u)):
                raise ValueError("the saved u is not finite")
        if not np.all(np.isfinite(v)) or not all(math.isfinite(x) for x in (a, sqnorm, b, A, b_sum)):
            raise ValueError("the saved state is not finite")
        if (avg_start > 0) != (self.u != NULL):
            raise ValueError(f"the saved avg_start = {avg_start} does not match whether this run averages")
        if t < 0 or n_avg < 0 or n_refold < 0 or n_avg > t or a <= 0.0:
            raise ValueError("the saved state has a negative counter or a non-positive scale a")
        saved = v
        for j in range(self.size):
            self.v[j] = saved[j]
        if u is not None:
            saved = u
            for j in range(self.size):
                self.u[j] = saved[j]
        self.a, self.sqnorm, self.b, self.A, self.b_sum = a, sqnorm, b, A, b_sum
        self.t, self.n_avg, self.n_refold, self.avg_start = t, n_avg, n_refold, avg_start


def feature_load(const int32_t[::1] indices, Py_ssize_t dim, int64_t last=0):
    """Cumulative stored values per column, for :meth:`LinearState.run`'s ``feature_load``.

    Parameters
    ----------
    indices : int32 array of shape (nnz,)
        Column indices of the CSR matrix, each in [0, dim).
    dim : int
        Length of v (n_features, plus 1 with the constant-feature bias).
    last : int
        Extra load of the last column (the bias column: one per example).

    Returns
    -------
    int64 array of shape (dim + 1,): out[j] = stored values in columns < j
    (``last`` included in out[dim]).

    Raises
    ------
    ValueError
        A column index outside [0, dim).
    """
    out_arr = np.zeros(dim + 1, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    cdef Py_ssize_t n = indices.shape[0], j
    cdef int32_t c
    cdef bint bad = False
    with nogil:
        for j in range(n):
            c = indices[j]
            if c < 0 or c >= dim:
                bad = True
                break
            out[c + 1] += 1
        if not bad:
            if dim > 0:
                out[dim] += last
            for j in range(dim):
                out[j + 1] += out[j]
    if bad:
        raise ValueError(f"column index {c} outside [0, {dim})")
    return out_arr


def decision_values(const int64_t[::1] indptr, const int32_t[::1] indices,
                    const floating[::1] data, const double[::1] w, double bias,
                    double[::1] out):
    """out[i] = <w, x_i> + bias for each CSR row i.

    Columns at or beyond len(w) (features the model never saw) contribute 0.
    ``out`` must have shape (len(indptr) - 1,).
    """
    cdef Py_ssize_t m = indptr.shape[0] - 1, i, j
    cdef Py_ssize_t n = w.shape[0]
    cdef int32_t c
    cdef double s
    if out.shape[0] != m:
        raise ValueError("out has the wrong length")
    if m == 0:
        return
    with nogil:
        for i in range(m):
            s = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                c = indices[j]
                if c < n:
                    s += w[c] * data[j]
            out[i] = s + bias
