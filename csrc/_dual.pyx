# cython: language_level=3
"""Dual coordinate ascent for the linear SVM dual (compiled core).

Hsieh, Chang, Lin, Keerthi and Sundararajan, "A Dual Coordinate Descent
Method for Large-scale Linear SVM", ICML 2008: Algorithm 1 in
:func:`coordinate_ascent`, with shrinking (Sec. 3.2) in
:func:`coordinate_ascent_shrinking`, the passes the duality gap and the
dual finish run; the plain loop is their reference.  In LIBLINEAR's
scaling, with per-example upper bounds U_i and diagonal terms D_ii, the
dual is

    max_alpha  D(alpha) = sum_i alpha_i - 1/2 ||v(alpha)||^2 - 1/2 sum_i D_ii alpha_i^2,
               0 <= alpha_i <= U_i,      v(alpha) = sum_i alpha_i y_i x_i

(hinge loss: U_i = C_i, D_ii = 0; squared hinge: U_i = inf, D_ii = 1/(2 C_i)).
One coordinate step maximises D exactly along alpha_i (a Newton step on the one-variable
quadratic, clipped to the box):

    G        = y_i <v, x_i> - 1 + D_ii alpha_i
    alpha_i <- min(max(alpha_i - G / (||x_i||^2 + D_ii), 0), U_i)
    v       <- v + (alpha_i,new - alpha_i,old) y_i x_i

A pass visits every coordinate once in a new random order; it costs
O(nnz).  An optional constant feature (``bias_value``, e.g. 1) is appended
to every row: its weight is v[n_cols], the last slot of ``v``.

Nothing here knows about files, models or options: the caller
(:mod:`pegasos.certificate`) builds U, D and the starting point and
evaluates the final dual value exactly.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memcpy
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
from cython cimport floating

# Software prefetch (csrc/prefetch.h): hints that change no value.
cdef extern from "prefetch.h":
    void pg_prefetch(const void* p) noexcept nogil
    void pg_prefetch_row(const int64_t* indptr, int64_t i, const int32_t* indices, const void* data,
                         size_t value_size) noexcept nogil

# The helper thread (csrc/warm.h, csrc/warm.pxi): prefetch_thread, WARM_MIN_BYTES, WARM_MIN_ENTRIES.
include "warm.pxi"

# How far ahead in a pass's random order the shrinking loop prefetches: the
# row's index and value arrays PF_ROWS coordinates ahead, its row pointers,
# label, alpha_i, U_i, D_ii and ||x_i||^2 twice as far (the Pegasos loop's
# distances, pegasos._core.prefetch_distances).  0 turns it off.
cdef Py_ssize_t PF_ROWS = 16


def prefetch_distance(rows=None):
    """The prefetch distance of :func:`coordinate_ascent_shrinking`, optionally set first.

    Parameters
    ----------
    rows : int >= 0 or None
        Coordinates ahead in the pass's order whose index and value arrays
        are prefetched (their row pointers, labels, alpha_i, U_i, D_ii and
        ||x_i||^2: twice as far); 0 turns prefetching off.

    Returns
    -------
    int : the distance now in force.  Prefetching only moves data into the
    caches earlier, so no setting changes a result.

    Raises
    ------
    ValueError
        A negative distance.
    """
    global PF_ROWS
    if rows is not None:
        if rows < 0:
            raise ValueError("the prefetch distance must be >= 0")
        PF_ROWS = rows
    return PF_ROWS


cdef inline double _seconds() noexcept nogil:
    """Monotonic clock in seconds."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline void _prefetch(const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
                           const double[::1] y, const double[::1] upper, const double[::1] diag,
                           const double[::1] qii, const double[::1] alpha, const int64_t[::1] active, Py_ssize_t s,
                           Py_ssize_t n_act) noexcept nogil:
    """Prefetch for the coordinates after entry ``s`` of ``active`` (``n_act``
    of them active): the per-example entries 2 PF_ROWS ahead, the row's
    index and value arrays PF_ROWS ahead.  Reads only ``active`` and the row
    pointers; writes nothing."""
    cdef Py_ssize_t q, d = PF_ROWS
    cdef int64_t i
    if d <= 0:
        return
    q = s + 2 * d
    if q < n_act:
        i = active[q]
        pg_prefetch(&indptr[i])
        pg_prefetch(&indptr[i + 1])
        pg_prefetch(&y[i])
        pg_prefetch(&alpha[i])
        pg_prefetch(&upper[i])
        pg_prefetch(&diag[i])
        pg_prefetch(&qii[i])
    q = s + d
    if q < n_act:
        i = active[q]
        if indptr[i + 1] > indptr[i]:          # (so indices and data are not empty)
            pg_prefetch_row(&indptr[0], i, &indices[0], &data[0], sizeof(floating))


cdef inline uint64_t splitmix64(uint64_t *state) noexcept nogil:
    """Next value of Vigna's splitmix64 generator (public-domain constants)."""
    state[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef inline uint64_t below(uint64_t *state, uint64_t n) noexcept nogil:
    """Uniform integer in [0, n), n >= 1, by rejection (no modulo bias)."""
    cdef uint64_t limit = (<uint64_t>0xFFFFFFFFFFFFFFFF) - ((<uint64_t>0xFFFFFFFFFFFFFFFF) % n)
    cdef uint64_t r = splitmix64(state)
    while r >= limit:
        r = splitmix64(state)
    return r % n


cdef inline void _shuffle(int64_t[::1] a, Py_ssize_t n, uint64_t *state) noexcept nogil:
    """Fisher-Yates: a new uniform random order of a[:n] (the generator advanced n - 1 times)."""
    cdef Py_ssize_t r, s
    cdef int64_t t
    for r in range(n - 1, 0, -1):
        s = <Py_ssize_t> below(state, <uint64_t>(r + 1))
        t = a[r]
        a[r] = a[s]
        a[s] = t


cdef _check_active(const int64_t[::1] active, const int64_t[::1] counts, Py_ssize_t m, Py_ssize_t passes,
                   const double[::1] values):
    """ValueError unless ``active`` is a permutation of 0..m-1 with counts[0] in [0, m] and ``values`` holds
    ``passes`` entries: the state the shrinking passes resume from."""
    cdef Py_ssize_t i
    if values.shape[0] < passes:
        raise ValueError("values is shorter than passes")
    if counts[0] < 0 or counts[0] > m:
        raise ValueError("counts[0] must be in [0, m]")
    for i in range(m):
        if active[i] < 0 or active[i] >= m:
            raise ValueError("active is not a permutation")


cdef inline void _class_scores(const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
                               const double[:, ::1] W, Py_ssize_t K, Py_ssize_t n_cols, double bias_value,
                               Py_ssize_t i, double* out) noexcept nogil:
    """out[r] = <w_r, x_i> + bias_value W[n_cols, r] for the K classes (W: one row a feature)."""
    cdef Py_ssize_t j, r
    cdef double x
    cdef const double* wrow
    for r in range(K):
        out[r] = bias_value * W[n_cols, r]
    for j in range(indptr[i], indptr[i + 1]):
        x = data[j]
        wrow = &W[indices[j], 0]
        for r in range(K):
            out[r] += x * wrow[r]


cdef Py_ssize_t _first_bad_column(const int32_t[::1] indices, int64_t nnz, Py_ssize_t n_cols) noexcept nogil:
    """The position of the first column index outside [0, n_cols) among indices[:nnz], or -1.

    A loop without branches finds whether there is one (vectorised: 0.06 ms on reuters' 340k indices
    against 0.2 ms for the loop that stops at it), then the position is looked for only if so."""
    cdef int64_t j
    cdef int32_t c
    cdef int bad = 0
    cdef const int32_t* idx
    # compared unsigned, a negative index wraps to 2^31 or more: above every int32 width
    cdef Py_ssize_t cap = (<Py_ssize_t> 1) << 31
    cdef unsigned int limit = 0
    if n_cols > 0:
        limit = <unsigned int> (n_cols if n_cols < cap else cap)
    if nnz <= 0:
        return -1
    idx = &indices[0]
    for j in range(nnz):
        bad |= <unsigned int> idx[j] >= limit
    if not bad:
        return -1
    for j in range(nnz):
        c = idx[j]
        if c < 0 or c >= n_cols:
            return j
    return -1


cdef _check_columns(const int32_t[::1] indices, int64_t nnz, Py_ssize_t n_cols):
    cdef Py_ssize_t bad
    with nogil:
        bad = _first_bad_column(indices, nnz, n_cols)
    if bad >= 0:
        raise ValueError(f"column index {indices[bad]} outside [0, {n_cols})")


def check_columns(const int64_t[::1] indptr, const int32_t[::1] indices, Py_ssize_t n_cols):
    """Raise ValueError unless the first indptr[-1] column indices lie in [0, n_cols) (and there are
    that many): the test every function here makes, once for the calls of
    :func:`coordinate_ascent_shrinking` with ``checked=True``."""
    cdef Py_ssize_t m = indptr.shape[0] - 1
    if m < 0 or indices.shape[0] < indptr[m]:
        raise ValueError("array lengths do not match")
    _check_columns(indices, indptr[m], n_cols)


cdef inline double _product(const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
                            const double[::1] v, Py_ssize_t n_cols, double bias_value, Py_ssize_t i) noexcept nogil:
    """<v, x_i> with the constant feature (bias_value, weight v[n_cols])."""
    cdef double g = bias_value * v[n_cols]
    cdef Py_ssize_t j
    for j in range(indptr[i], indptr[i + 1]):
        g = g + v[indices[j]] * data[j]
    return g


cdef inline void _move(const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
                       const double[::1] y, const double[::1] upper, const double[::1] qii, double[::1] alpha,
                       double[::1] v, Py_ssize_t n_cols, double bias_value, Py_ssize_t i, double g) noexcept nogil:
    """The exact step along alpha_i for the gradient g, clipped to [0, U_i], and v kept up to date."""
    cdef double a_old = alpha[i]
    cdef double a_new = a_old - g / qii[i]
    cdef double d
    cdef Py_ssize_t j
    if a_new < 0.0:
        a_new = 0.0
    elif a_new > upper[i]:
        a_new = upper[i]
    if a_new != a_old:
        alpha[i] = a_new
        d = (a_new - a_old) * y[i]
        for j in range(indptr[i], indptr[i + 1]):
            v[indices[j]] += d * data[j]
        v[n_cols] += d * bias_value


cdef inline double _dual_of(const double[::1] alpha, const double[::1] diag, const double[::1] v,
                            Py_ssize_t m, Py_ssize_t n_cols) noexcept nogil:
    """D(alpha) = sum alpha - 1/2 ||v||^2 - 1/2 sum D_ii alpha_i^2 from the maintained v."""
    cdef double total = 0.0, reg = 0.0, sq = 0.0
    cdef Py_ssize_t i, j
    for i in range(m):
        total = total + alpha[i]
        reg = reg + diag[i] * alpha[i] * alpha[i]
    for j in range(n_cols + 1):
        sq = sq + v[j] * v[j]
    return total - 0.5 * sq - 0.5 * reg


def coordinate_ascent(const int64_t[::1] indptr, const int32_t[::1] indices,
                      const floating[::1] data, const double[::1] y,
                      const double[::1] upper, const double[::1] diag, const double[::1] qii,
                      double bias_value, double[::1] alpha, double[::1] v, int64_t[::1] order,
                      uint64_t[::1] state, Py_ssize_t passes, double stop_at, double[::1] values):
    """Run up to ``passes`` passes of dual coordinate ascent in place.

    Parameters
    ----------
    indptr : int64 (m + 1,); indices : int32 (nnz,), each in [0, n_cols);
    data : float64 or float32 (nnz,)
        The examples x_i as CSR rows.
    y : float64 (m,)
        Labels in {-1, +1}.
    upper : float64 (m,)
        U_i >= 0 (``inf`` for no upper bound).
    diag : float64 (m,)
        D_ii >= 0.
    qii : float64 (m,)
        ||x_i||^2 + bias_value^2 + D_ii (the curvature along alpha_i).
    bias_value : float
        Value of the constant feature appended to each row (0: none).
    alpha : float64 (m,), in/out
        A feasible starting point (0 <= alpha_i <= U_i); on return the last iterate.
    v : float64 (n_cols + 1,), in/out
        sum_i alpha_i y_i x_i on entry (last slot: the constant feature's
        weight); kept up to date.
    order : int64 (m,), in/out
        A permutation of 0..m-1, shuffled again before each pass.
    state : uint64 (1,), in/out
        State of the random generator (splitmix64) of the orders.  Calling
        twice with p passes gives the same iterates as once with 2p.
    passes : int >= 0
    stop_at : float
        Stop after the first pass whose dual value is >= this (``inf``: never).
    values : float64 (>= passes,), out
        values[p] = D(alpha) after pass p + 1, from the maintained v (the
        caller recomputes the final value exactly).

    Returns
    -------
    int
        The number of passes run.
    """
    cdef Py_ssize_t m = indptr.shape[0] - 1
    cdef Py_ssize_t n_cols = v.shape[0] - 1
    cdef Py_ssize_t i, j, p, r, s, done = 0
    cdef double g, a_old
    if n_cols < 0:
        raise ValueError("v must have at least one slot (the constant feature's)")
    if (y.shape[0] != m or upper.shape[0] != m or diag.shape[0] != m or alpha.shape[0] != m
            or qii.shape[0] != m or order.shape[0] != m or state.shape[0] != 1
            or indices.shape[0] < indptr[m] or data.shape[0] < indptr[m]):
        raise ValueError("array lengths do not match")
    if values.shape[0] < passes:
        raise ValueError("values is shorter than passes")
    for i in range(m):
        if order[i] < 0 or order[i] >= m:
            raise ValueError("order is not a permutation")
    _check_columns(indices, indptr[m], n_cols)
    if m == 0 or passes <= 0:
        return 0
    with nogil:
        for p in range(passes):
            _shuffle(order, m, &state[0])        # a new random order of the coordinates every pass
            for r in range(m):
                i = order[r]
                a_old = alpha[i]
                if qii[i] <= 0.0:
                    # an all-zero row with the hinge loss: D is linear in alpha_i, increasing
                    alpha[i] = upper[i]
                    continue
                g = y[i] * _product(indptr, indices, data, v, n_cols, bias_value, i) - 1.0 + diag[i] * a_old
                _move(indptr, indices, data, y, upper, qii, alpha, v, n_cols, bias_value, i, g)
            values[p] = _dual_of(alpha, diag, v, m, n_cols)
            done = p + 1
            if values[p] >= stop_at:
                break
    return done


def coordinate_ascent_shrinking(const int64_t[::1] indptr, const int32_t[::1] indices,
                                const floating[::1] data, const double[::1] y,
                                const double[::1] upper, const double[::1] diag, const double[::1] qii,
                                double bias_value, double[::1] alpha, double[::1] v, int64_t[::1] active,
                                int64_t[::1] counts, double[::1] bounds, uint64_t[::1] state,
                                Py_ssize_t passes, double[::1] values, double stop_at=INFINITY,
                                bint checked=False, bint helper=False, int64_t[::1] helper_counts=None,
                                double[::1] helper_timing=None):
    """:func:`coordinate_ascent` with shrinking (Hsieh et al. 2008, Sec. 3.2 / Algorithm 3).

    A pass visits only the active coordinates, in a new random order.  A
    coordinate at a bound whose gradient points out of the box by more than
    the previous pass's extreme projected gradient leaves the active set;
    when the active coordinates' projected gradients all lie within
    ``bounds[2]`` of each other, every coordinate becomes active again, and
    when that also holds for all of them the threshold is divided by 10 (the
    caller stops on the duality gap, not on this test).

    Parameters
    ----------
    (as :func:`coordinate_ascent`, without ``order``; ``stop_at`` last and
    by default ``inf``), and
    checked : bool
        The column indices were already found in [0, n_cols) by
        :func:`check_columns` (the same arrays, unchanged): the O(nnz) test
        is skipped.  A caller that runs many calls on one problem tests once.
    helper : bool
        The caller may use a second processor: in the automatic mode of
        :func:`prefetch_thread`, passes over large sets run with its helper
        thread.  No result depends on it.
    helper_timing : float64 (3,) or None, in/out
        The automatic mode's timings, kept from call to call: seconds per
        unit of work of the last pass with and without the helper (-1: none
        yet) and the passes since the slower way was timed.  Each pass of at
        least ``WARM_MIN_ENTRIES`` coordinates runs the faster way, the
        slower every ``WARM_PROBE`` passes (where other work holds the
        processors the helper only takes the loop's time).  None: timed
        afresh in this call.
    helper_counts : int64 (2,) or None
        If given, the helper threads this call started and the rows they
        read are added to ``helper_counts[0]`` and ``[1]`` (for tests and
        benchmarks; a helper stopped before its first row reads none).
    active : int64 (m,), in/out
        Its first ``counts[0]`` entries are the active coordinates (a
        permutation of 0..m-1 on the first call, with counts[0] = m).
    counts : int64 (2,), in/out
        The number of active coordinates, and a running count of the work
        done: each visit of coordinate i adds 1 + nnz(x_i), and each pass
        m + n_cols + 1 (its dual value; what a pass costs when shrinking
        has left few coordinates active).
    bounds : float64 (3,), in/out
        The largest and smallest projected gradient of the last pass
        (+inf, -inf on the first call) and the threshold of the test above
        (e.g. 0.1).

    The state (alpha, v, active, counts, bounds, the generator's state) is
    all the iteration depends on: two calls of p passes give the iterates of
    one call of 2p.

    Returns
    -------
    int
        The number of passes run; ``values[p]`` as in :func:`coordinate_ascent`.
    """
    cdef Py_ssize_t m = indptr.shape[0] - 1
    cdef Py_ssize_t n_cols = v.shape[0] - 1
    cdef Py_ssize_t i, j, p, r, s, n_act, done = 0
    cdef double g, pg, a_old, pg_max, pg_min
    cdef double old_max, old_min, tight
    cdef int64_t t, work = 0, read = 0, started = 0, work_start = 0
    cdef bint warm_on, adapt = WARM_MODE == -1, timed = False, use
    cdef double timing[3]
    cdef double t_start = 0.0, probe = WARM_PROBE
    cdef int64_t min_entries = 1 if WARM_MODE == 1 else WARM_MIN_ENTRIES
    cdef int64_t* snapshot = NULL
    cdef pg_warm* warm = NULL
    if n_cols < 0:
        raise ValueError("v must have at least one slot (the constant feature's)")
    if (y.shape[0] != m or upper.shape[0] != m or diag.shape[0] != m or alpha.shape[0] != m
            or qii.shape[0] != m or active.shape[0] != m or state.shape[0] != 1 or counts.shape[0] != 2
            or bounds.shape[0] != 3 or indices.shape[0] < indptr[m] or data.shape[0] < indptr[m]):
        raise ValueError("array lengths do not match")
    _check_active(active, counts, m, passes, values)
    if not checked:
        _check_columns(indices, indptr[m], n_cols)
    if m == 0 or passes <= 0:
        return 0
    if helper_counts is not None and helper_counts.shape[0] != 2:
        raise ValueError("helper_counts must have two entries")
    timing[0] = timing[1] = -1.0
    timing[2] = 0.0
    if helper_timing is not None:
        if helper_timing.shape[0] != 3:
            raise ValueError("helper_timing must have three entries")
        timing[0], timing[1], timing[2] = helper_timing[0], helper_timing[1], helper_timing[2]
    n_act = counts[0]
    old_max = bounds[0]
    old_min = bounds[1]
    tight = bounds[2]
    warm_on = indptr[m] > 0 and (WARM_MODE == 1 or (WARM_MODE == -1 and helper and m >= WARM_MIN_ENTRIES and
                                 indptr[m] * (sizeof(int32_t) + sizeof(floating)) >= WARM_MIN_BYTES))
    if warm_on:
        snapshot = <int64_t*> malloc(sizeof(int64_t) * m)
        warm_on = snapshot != NULL
    with nogil:
        for p in range(passes):
            _shuffle(active, n_act, &state[0])
            timed = warm_on and n_act >= min_entries
            if timed:
                use = pg_warm_choose(timing, probe) if adapt else True
                if use:
                    # the helper walks its own copy: this loop moves shrunk coordinates within active
                    memcpy(snapshot, &active[0], sizeof(int64_t) * n_act)
                    warm = pg_warm_start(snapshot, n_act, &indptr[0], &indices[0], &data[0], sizeof(floating),
                                         WARM_AHEAD, WARM_HINT)
                work_start = work
                t_start = _seconds()
            pg_max = -1e300
            pg_min = 1e300
            s = 0
            while s < n_act:
                pg_warm_publish(warm, s)
                _prefetch(indptr, indices, data, y, upper, diag, qii, alpha, active, s, n_act)
                i = active[s]
                a_old = alpha[i]
                work = work + 1 + indptr[i + 1] - indptr[i]
                if qii[i] <= 0.0:
                    alpha[i] = upper[i]
                    s = s + 1
                    continue
                if upper[i] <= 0.0:
                    # a weight of 0: alpha_i is held at 0 = U_i, its projected gradient is 0 (counted as the
                    # lower bound's, a g < 0 kept the spread of the others from closing, so that shrunk
                    # coordinates never returned: 50 zero-weight rows of 100 stalled 21% above the optimum)
                    s = s + 1
                    continue
                g = y[i] * _product(indptr, indices, data, v, n_cols, bias_value, i) - 1.0 + diag[i] * a_old
                pg = 0.0
                if a_old == 0.0:
                    if g > old_max:
                        n_act = n_act - 1
                        active[s] = active[n_act]
                        active[n_act] = i
                        continue
                    if g < 0.0:
                        pg = g
                elif a_old == upper[i]:
                    if g < old_min:
                        n_act = n_act - 1
                        active[s] = active[n_act]
                        active[n_act] = i
                        continue
                    if g > 0.0:
                        pg = g
                else:
                    pg = g
                if pg > pg_max:
                    pg_max = pg
                if pg < pg_min:
                    pg_min = pg
                if pg != 0.0:
                    _move(indptr, indices, data, y, upper, qii, alpha, v, n_cols, bias_value, i, g)
                s = s + 1
            use = warm != NULL
            if use:
                read = read + pg_warm_stop(warm)
                started = started + 1
                warm = NULL
            if timed:
                pg_warm_timed(timing, use, (_seconds() - t_start) / (1 + work - work_start))
            if n_act == 0 or pg_max - pg_min <= tight:
                if n_act == m:
                    tight = tight * 0.1
                n_act = m
                old_max = 1e300
                old_min = -1e300
            else:
                old_max = pg_max if pg_max > 0.0 else 1e300
                old_min = pg_min if pg_min < 0.0 else -1e300
            values[p] = _dual_of(alpha, diag, v, m, n_cols)
            work = work + m + n_cols + 1        # the dual value: O(m + n) a pass, however few are active
            done = p + 1
            if values[p] >= stop_at:
                break
    free(snapshot)
    if helper_timing is not None:
        helper_timing[0], helper_timing[1], helper_timing[2] = timing[0], timing[1], timing[2]
    if helper_counts is not None:
        helper_counts[0] += started
        helper_counts[1] += read
    counts[0] = n_act
    counts[1] += work
    bounds[0] = old_max
    bounds[1] = old_min
    bounds[2] = tight
    return done


def primal_value(const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
                 const double[::1] y, const double[::1] c, const double[::1] v, double bias_value, double lam,
                 bint squared, bint checked=False):
    """The primal objective P(w) = lambda/2 ||v||^2 + 1/m sum_i c_i loss(y_i (<w, x_i> + b)) of the
    weights w = v[:n_cols] and the constant feature's weight b = v[n_cols] (whose square is in the
    regulariser only when ``bias_value`` is not 0), without the GIL: the hinge loss, or its square
    with ``squared``.  The sums are plain float64 sums in example order.

    Parameters
    ----------
    indptr, indices, data : the examples' CSR arrays (indices in [0, n_cols))
    y, c : float64 (m,): labels in {-1, +1} and weights c_i
    v : float64 (n_cols + 1,)
    checked : bool
        The column indices were already found in [0, n_cols) by :func:`check_columns` (the finish's
        checks of w(alpha) between its passes): the O(nnz) test is skipped.
    """
    cdef Py_ssize_t m = indptr.shape[0] - 1
    cdef Py_ssize_t n_cols = v.shape[0] - 1
    cdef Py_ssize_t i, j
    cdef double z, slack, loss = 0.0, sq = 0.0
    if n_cols < 0 or y.shape[0] != m or c.shape[0] != m or indices.shape[0] < indptr[m] or data.shape[0] < indptr[m]:
        raise ValueError("array lengths do not match")
    if not checked:
        _check_columns(indices, indptr[m], n_cols)
    if m == 0:
        raise ValueError("no examples")
    with nogil:
        for i in range(m):
            z = bias_value * v[n_cols]
            for j in range(indptr[i], indptr[i + 1]):
                z = z + v[indices[j]] * data[j]
            slack = 1.0 - y[i] * z
            if slack > 0.0:
                loss = loss + c[i] * (slack * slack if squared else slack)
        for j in range(n_cols):
            sq = sq + v[j] * v[j]
        if bias_value != 0.0:
            sq = sq + v[n_cols] * v[n_cols]
    return 0.5 * lam * sq + loss / m


def row_norms(const int64_t[::1] indptr, const floating[::1] data, double[::1] out):
    """out[i] = ||x_i||^2 (sum of the squared stored values of row i), float64 (m,)."""
    cdef Py_ssize_t m = indptr.shape[0] - 1
    cdef Py_ssize_t i, j
    cdef double s
    if out.shape[0] != m or data.shape[0] < indptr[m]:
        raise ValueError("array lengths do not match")
    with nogil:
        for i in range(m):
            s = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                s = s + data[j] * data[j]
            out[i] = s


def combine_rows(const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
                 const double[::1] coef, double bias_value, double[::1] out):
    """out = sum_i coef_i x_i, with the constant feature's weight bias_value sum_i coef_i in the last
    slot; out float64 (n_cols + 1,), overwritten (every index below n_cols)."""
    cdef Py_ssize_t m = indptr.shape[0] - 1
    cdef Py_ssize_t n_cols = out.shape[0] - 1
    cdef Py_ssize_t i, j
    cdef double total = 0.0
    if n_cols < 0 or coef.shape[0] != m or indices.shape[0] < indptr[m] or data.shape[0] < indptr[m]:
        raise ValueError("array lengths do not match")
    _check_columns(indices, indptr[m], n_cols)
    with nogil:
        for j in range(n_cols + 1):
            out[j] = 0.0
        for i in range(m):
            total = total + coef[i]
            if coef[i] != 0.0:
                for j in range(indptr[i], indptr[i + 1]):
                    out[indices[j]] += coef[i] * data[j]
        out[n_cols] = bias_value * total


cdef inline void _add(double *total, double *lost, double x) noexcept nogil:
    """Neumaier's compensated step: total + lost is the running sum, lost the rounding error so far."""
    cdef double t = total[0] + x
    if (total[0] if total[0] >= 0.0 else -total[0]) >= (x if x >= 0.0 else -x):
        lost[0] += (total[0] - t) + x
    else:
        lost[0] += (x - t) + total[0]
    total[0] = t


def dual_sums(const double[::1] alpha, const double[::1] v, const double[::1] diag):
    """(sum_i alpha_i, ||v||^2, sum_i D_ii alpha_i^2), each a compensated (Neumaier) float64 sum, without
    the GIL: the three terms of D(alpha) = sum alpha - 1/2 ||v||^2 - 1/2 sum D_ii alpha_i^2.

    alpha, diag : float64 (m,); v : float64 (any length, every entry counted)."""
    cdef Py_ssize_t m = alpha.shape[0]
    cdef Py_ssize_t i
    cdef double a = 0.0, a_lost = 0.0, b = 0.0, b_lost = 0.0, d = 0.0, d_lost = 0.0
    if diag.shape[0] != m:
        raise ValueError("array lengths do not match")
    with nogil:
        for i in range(m):
            _add(&a, &a_lost, alpha[i])
            _add(&d, &d_lost, diag[i] * alpha[i] * alpha[i])
        for i in range(v.shape[0]):
            _add(&b, &b_lost, v[i] * v[i])
    return a + a_lost, b + b_lost, d + d_lost


# ------------------------------------------------------- Crammer-Singer --
#
# Keerthi, Sundararajan, Chang, Hsieh and Lin, "A sequential dual method for large scale multi-class
# linear SVMs", KDD 2008 (LIBLINEAR -s 4): coordinate ascent on the dual of Crammer and Singer's
# multiclass SVM, one example's K variables at a time.  With C_i = c_i / (lambda m) and the costs
# e_i^r = delta(y_i, r) (0 for r = y_i), the primal (paper Eq. (20), times 1/lambda)
#
#     min_W  1/2 sum_r ||w_r||^2 + sum_i C_i max_r (e_i^r + <w_r, x_i> - <w_{y_i}, x_i>)
#
# has the dual
#
#     max_alpha  D(alpha) = -1/2 sum_r ||w_r(alpha)||^2 - sum_i sum_r e_i^r alpha_i^r,
#                w_r(alpha) = sum_i alpha_i^r x_i,
#                alpha_i^r <= C_i [r = y_i],   sum_r alpha_i^r = 0   (each i).
#
# For example i, with A = ||x_i||^2 and B_r = <w_r, x_i> + e_i^r - A alpha_i^r (W with the current
# alpha_i), the best alpha_i is alpha_i^r = min(C_i [r = y_i], (beta - B_r) / A), beta the root of
# sum_r alpha_i^r = 0: with D_r = B_r + A C_i [r = y_i] sorted decreasing, beta = (D_(1) + ... +
# D_(k) - A C_i) / k for the first k with beta >= D_(k+1) (or k = K).
#
# Shrinking (as Hsieh et al. 2008, Sec. 3.2, do for the binary dual): alpha_i = 0 is optimal for its
# example when the margin is met, v_i = max_{r != y_i} (<w_r, x_i> + e_i^r) - <w_{y_i}, x_i> <= 0; an
# example at 0 whose v_i is below -M, M the largest move A max_r |change of alpha_i^r| of the previous
# pass, leaves the passes until the moves of the active examples fall below a threshold (then all
# return, and the threshold shrinks tenfold once all were active).


cdef int _descending(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*> a)[0]
    cdef double y = (<const double*> b)[0]
    return -1 if x > y else (1 if x < y else 0)


def cs_passes(const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
              const int32_t[::1] yc, const double[::1] cost, const double[::1] upper, const double[::1] qii,
              double bias_value, double[:, ::1] alpha, double[:, ::1] W, int64_t[::1] active, int64_t[::1] counts,
              double[::1] bounds, int32_t[:, ::1] classes, int32_t[::1] n_classes, uint64_t[::1] state,
              Py_ssize_t passes, double[::1] values, double stop_at=INFINITY, bint checked=False):
    """Passes of the sequential dual method for Crammer-Singer, with shrinking (see above), in place.

    Parameters
    ----------
    indptr : int64 (m + 1,); indices : int32 (nnz,), each in [0, n_cols); data : float64 or float32 (nnz,)
        The examples x_i as CSR rows.
    yc : int32 (m,)
        Class index y_i in [0, K).
    cost : float64 (K * K,)
        e^r for true class y at [y * K + r]: finite, >= 0, 0 on the diagonal.
    upper : float64 (m,)
        C_i >= 0 (an example of C_i = 0 keeps alpha_i = 0).
    qii : float64 (m,)
        ||x_i||^2 + bias_value^2.
    bias_value : float
        Value of the constant feature appended to each row (0: none); its weights are W's last row.
    alpha : float64 (m, K), in/out
        A feasible point; on return the last iterate.
    W : float64 (n_cols + 1, K), in/out
        sum_i alpha_i^r x_i for each class r (column r), kept up to date.
    active : int64 (m,), in/out
        A permutation of 0..m-1 whose first ``counts[0]`` entries are the active examples (a pass visits
        them in a new random order).
    counts : int64 (2,), in/out
        The number of active examples (m on the first call), and a running count of the work: K (1 +
        nnz(x_i)) for each visit of example i.
    bounds : float64 (2,), in/out
        The largest move of the last pass (inf on the first call: no example is shrunk), and the
        threshold below which the shrunk examples return (e.g. 0.1).
    classes, n_classes : int32 (m, K) and (m,), in/out
        Per example, a permutation of 0..K-1 whose first ``n_classes[i]`` entries are its active
        classes (K on the first call).  A class r != y_i at alpha_i^r = 0 whose gradient <w_r, x_i> +
        e_i^r is below that of every class inside its bound leaves the example's subproblem (as
        LIBLINEAR's -s 4 shrinks); all return with the shrunk examples.
    state : uint64 (1,), in/out
        The generator of the orders (splitmix64).  The state (alpha, W, active, counts, bounds, state)
        is all the iteration depends on: two calls of p passes give the iterates of one of 2p.
    passes : int >= 0
    values : float64 (>= passes,), out
        D(alpha) after each pass, from the maintained W (the caller recomputes the final value exactly).
    stop_at : float
        Stop after the first pass whose dual value is >= this.
    checked : bool
        The column indices were already found in [0, n_cols) (:func:`check_columns`).

    Returns
    -------
    int : the passes run.

    Raises
    ------
    ValueError
        Arrays of mismatched shapes, a class index outside [0, K), a column index outside [0, n_cols).
    MemoryError
    """
    cdef Py_ssize_t m = indptr.shape[0] - 1
    cdef Py_ssize_t K = W.shape[1]
    cdef Py_ssize_t n_cols = W.shape[0] - 1
    cdef Py_ssize_t i, j, p, r, s, k, t, kk, yi, col, done = 0, n_moved, n_act
    cdef double A, Ci, beta, total, x, a_new, sq, lin, worst, viol, move, largest, last_move, tight, least
    cdef int32_t* cls
    cdef int32_t swap
    cdef int64_t work = 0
    cdef double* B
    cdef double* Dsorted
    cdef double* step
    cdef Py_ssize_t* moved
    cdef double* wrow
    cdef const double* e
    if n_cols < 0 or K < 2:
        raise ValueError("W needs at least one row (the constant feature's) and two classes")
    if (yc.shape[0] != m or upper.shape[0] != m or qii.shape[0] != m or alpha.shape[0] != m
            or alpha.shape[1] != K or cost.shape[0] != K * K or active.shape[0] != m or state.shape[0] != 1
            or counts.shape[0] != 2 or bounds.shape[0] != 2 or indices.shape[0] < indptr[m]
            or data.shape[0] < indptr[m] or classes.shape[0] != m or classes.shape[1] != K
            or n_classes.shape[0] != m):
        raise ValueError("array lengths do not match")
    _check_active(active, counts, m, passes, values)
    for i in range(m):
        if yc[i] < 0 or yc[i] >= K:
            raise ValueError("a class index is outside [0, K)")
        if n_classes[i] < 1 or n_classes[i] > K:
            raise ValueError("n_classes must be in [1, K]")
        for r in range(K):
            if classes[i, r] < 0 or classes[i, r] >= K:
                raise ValueError("classes is not a permutation")
    if not checked:
        _check_columns(indices, indptr[m], n_cols)
    if m == 0 or passes <= 0:
        return 0
    B = <double*> malloc(sizeof(double) * K)
    Dsorted = <double*> malloc(sizeof(double) * K)
    step = <double*> malloc(sizeof(double) * K)
    moved = <Py_ssize_t*> malloc(sizeof(Py_ssize_t) * K)
    if B == NULL or Dsorted == NULL or step == NULL or moved == NULL:
        free(B); free(Dsorted); free(step); free(moved)
        raise MemoryError()
    n_act = counts[0]
    last_move = bounds[0]
    tight = bounds[1]
    with nogil:
        for p in range(passes):
            _shuffle(active, n_act, &state[0])
            largest = 0.0
            s = 0
            while s < n_act:
                i = active[s]
                s = s + 1
                kk = n_classes[i]
                cls = &classes[i, 0]
                work = work + kk * (1 + indptr[i + 1] - indptr[i])
                yi = yc[i]
                Ci = upper[i]
                e = &cost[yi * K]
                A = qii[i]
                if Ci <= 0.0:
                    continue
                if A <= 0.0:
                    # an all-zero row: W does not depend on alpha_i, and D gains most with all of C_i on
                    # the class of the largest cost
                    k = -1
                    worst = 0.0
                    for r in range(K):
                        alpha[i, r] = 0.0
                        if r != yi and e[r] > worst:
                            worst = e[r]
                            k = r
                    if k >= 0:
                        alpha[i, yi] = Ci
                        alpha[i, k] = -Ci
                    continue
                # the scores of the active classes: B[t] for class cls[t]
                for t in range(kk):
                    B[t] = bias_value * W[n_cols, cls[t]]
                for j in range(indptr[i], indptr[i + 1]):
                    x = data[j]
                    wrow = &W[indices[j], 0]
                    for t in range(kk):
                        B[t] += x * wrow[cls[t]]
                if alpha[i, yi] == 0.0:
                    # at 0 (every alpha_i^r then is): optimal while the margin is met; well met, shrunk
                    viol = -INFINITY
                    for t in range(kk):
                        if cls[t] != yi and B[t] + e[cls[t]] > viol:
                            viol = B[t] + e[cls[t]]
                    for t in range(kk):
                        if cls[t] == yi:
                            viol = viol - B[t]
                    if viol < -last_move:
                        s = s - 1
                        n_act = n_act - 1
                        active[s] = active[n_act]
                        active[n_act] = i
                        continue
                # gradients G = B + e; the classes at their bound (0, r != y_i) below every class inside
                # its bound leave the example's subproblem
                least = INFINITY
                for t in range(kk):
                    B[t] = B[t] + e[cls[t]]
                    r = cls[t]
                    if (alpha[i, r] < Ci if r == yi else alpha[i, r] < 0.0) and B[t] < least:
                        least = B[t]
                t = 0
                while t < kk:
                    r = cls[t]
                    if r != yi and alpha[i, r] == 0.0 and B[t] < least:
                        kk = kk - 1
                        swap = cls[t]
                        cls[t] = cls[kk]
                        cls[kk] = swap
                        B[t] = B[kk]
                    else:
                        t = t + 1
                n_classes[i] = kk
                if kk <= 1:
                    continue            # y_i alone: alpha_i = 0 (the sum is 0) stays
                for t in range(kk):
                    r = cls[t]
                    B[t] = B[t] - A * alpha[i, r]
                    Dsorted[t] = B[t] + (A * Ci if r == yi else 0.0)
                qsort(Dsorted, kk, sizeof(double), _descending)
                total = Dsorted[0] - A * Ci
                k = 1
                while k < kk and total < k * Dsorted[k]:
                    total = total + Dsorted[k]
                    k += 1
                beta = total / k
                n_moved = 0
                move = 0.0
                for t in range(kk):
                    r = cls[t]
                    a_new = (beta - B[t]) / A
                    if r == yi:
                        if a_new > Ci:
                            a_new = Ci
                    elif a_new > 0.0:
                        a_new = 0.0
                    if a_new != alpha[i, r]:
                        step[n_moved] = a_new - alpha[i, r]
                        if A * (step[n_moved] if step[n_moved] > 0.0 else -step[n_moved]) > move:
                            move = A * (step[n_moved] if step[n_moved] > 0.0 else -step[n_moved])
                        moved[n_moved] = r
                        n_moved += 1
                        alpha[i, r] = a_new
                if n_moved:
                    for j in range(indptr[i], indptr[i + 1]):
                        x = data[j]
                        wrow = &W[indices[j], 0]
                        for k in range(n_moved):
                            wrow[moved[k]] += step[k] * x
                    if bias_value != 0.0:
                        for k in range(n_moved):
                            W[n_cols, moved[k]] += step[k] * bias_value
                if move > largest:
                    largest = move
            if n_act == 0 or largest <= tight:
                # the active examples have settled: all return, with all their classes (and, if all were
                # active, the bar is raised)
                if n_act == m:
                    tight = tight * 0.1
                n_act = m
                last_move = INFINITY
                for i in range(m):
                    n_classes[i] = K
            else:
                last_move = largest
            work = work + (n_cols + 1) * K + m * K       # the dual value below
            sq = 0.0
            for col in range(n_cols + 1):
                for r in range(K):
                    sq = sq + W[col, r] * W[col, r]
            lin = 0.0
            for i in range(m):
                e = &cost[yc[i] * K]
                for r in range(K):
                    lin = lin + e[r] * alpha[i, r]
            values[p] = -0.5 * sq - lin
            done = p + 1
            if values[p] >= stop_at:
                break
    free(B); free(Dsorted); free(step); free(moved)
    counts[0] = n_act
    counts[1] += work
    bounds[0] = last_move
    bounds[1] = tight
    return done


def cs_primal(const int64_t[::1] indptr, const int32_t[::1] indices, const floating[::1] data,
              const int32_t[::1] yc, const double[::1] cost, const double[::1] c, const double[:, ::1] W,
              double bias_value, bint checked=False):
    """(sum_i c_i xi_i, ||W||^2) for the Crammer-Singer loss xi_i = max_r (e^r + <w_r, x_i> - <w_{y_i}, x_i>)
    (paper Eq. (20); e^r = cost[y_i * K + r], 0 for r = y_i) of the weights W, float64 (n_cols + 1, K)
    (column r is class r's; the last row the constant feature's, of value ``bias_value``: its
    square counts only when ``bias_value`` is not 0).  Without the GIL; plain float64 sums.

    Raises ValueError for arrays of mismatched shapes or a column index outside [0, n_cols)."""
    cdef Py_ssize_t m = indptr.shape[0] - 1
    cdef Py_ssize_t K = W.shape[1]
    cdef Py_ssize_t n_cols = W.shape[0] - 1
    cdef Py_ssize_t i, j, r, col
    cdef double loss = 0.0, sq = 0.0, x, top, own, z
    cdef double* s
    cdef const double* wrow
    cdef const double* e
    if (n_cols < 0 or K < 1 or yc.shape[0] != m or c.shape[0] != m or cost.shape[0] != K * K
            or indices.shape[0] < indptr[m] or data.shape[0] < indptr[m]):
        raise ValueError("array lengths do not match")
    for i in range(m):
        if yc[i] < 0 or yc[i] >= K:
            raise ValueError("a class index is outside [0, K)")
    if not checked:
        _check_columns(indices, indptr[m], n_cols)
    s = <double*> malloc(sizeof(double) * K)
    if s == NULL:
        raise MemoryError()
    with nogil:
        for i in range(m):
            _class_scores(indptr, indices, data, W, K, n_cols, bias_value, i, s)
            e = &cost[yc[i] * K]
            own = s[yc[i]]
            top = 0.0
            for r in range(K):
                z = e[r] + s[r] - own
                if z > top:
                    top = z
            loss = loss + c[i] * top
        for col in range(n_cols):
            for r in range(K):
                sq = sq + W[col, r] * W[col, r]
        if bias_value != 0.0:
            for r in range(K):
                sq = sq + W[n_cols, r] * W[n_cols, r]
    free(s)
    return loss, sq
