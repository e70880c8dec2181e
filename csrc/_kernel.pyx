# cython: language_level=3
"""Kernelized Pegasos (paper Sec. 4, Fig. 3) and kernel scoring (compiled core).

Like :mod:`pegasos._core`, nothing here knows about files or options: the
functions take CSR arrays (``indptr`` int64, ``indices`` int32, ``data``
float64 for training, float64 or float32 for scoring), labels in {-1, +1},
and an explicit visiting order drawn by :mod:`pegasos.kernel`.

Kernels (LIBSVM's names and parameters), ``code`` in parentheses::

    linear  (0)  K(u, v) = <u, v>
    poly    (1)  K(u, v) = (gamma <u, v> + coef0)^degree
    rbf     (2)  K(u, v) = exp(-gamma ||u - v||^2),  ||u - v||^2 = |u|^2 + |v|^2 - 2 <u, v>
    sigmoid (3)  K(u, v) = tanh(gamma <u, v> + coef0)

State of a run (Fig. 3 with the corrections of the project's paper notes,
Sec. 1.7, and the mini-batch generalisation of Fig. 2)::

    w_{t+1} = pi / (lambda t k) * sum_j alpha_j y_j phi(x_j)

alpha_j counts the iterations in which example j was a margin violator (an
integer as long as every batch is full and nothing is projected); a violator
in a batch of |A_t| < k examples (the short last batch of a permutation or
sequential epoch) adds k/|A_t| instead of 1, which makes the step
eta_t/|A_t| sum y_i phi(x_i) exactly the linear trainer's.  pi is 1 unless
the projection of Eq. (6) has shrunk w (then the increment is k/(pi |A_t|)).
The margin of example i at iteration t >= 2 is therefore

    y_i * pi / (lambda (t - 1) k) * sum_j alpha_j y_j K(x_j, x_i)

(the printed Fig. 3 has 1/(lambda t) and y_{i_t} inside the sum, both
misprints), and at t = 1 (w_1 = 0) every example of the batch is a violator.

Only the support set S = {j : alpha_j > 0} is visited, so an iteration costs
O(|S| nnz) kernel work: the sampled example is scattered into a dense buffer
and each support vector's CSR row is gathered against it.  Rows of kernel
values K(x_i, x_j), j in S, are kept for examples sampled again, in a cache of
bounded size (least recently used rows are dropped); a row holds the support
vectors in the order they joined S, so a cached row only needs the support
vectors added since it was filled.  Cached and recomputed values are the same
doubles summed in the same order, so the cache size never changes a result.

With a budget B the support vector with the smallest alpha_j^2 K(x_j, x_j)
(the one whose removal changes w the least, ||dw|| = scale alpha_j
sqrt(K(x_j, x_j))) is dropped while |S| > B; ties go to the one that joined
S first.  Dropped support vectors leave a dead slot until more than half the
slots are dead; then the slots are compacted and the cache is cleared.
(:mod:`pegasos.kernel` does not combine a budget with projection or averaging.)
"""

from libc.math cimport exp, sqrt, tanh, INFINITY
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memset
from cython cimport floating

import numpy as np
cimport numpy as cnp
cnp.import_array()

DEF PI_REFOLD_BELOW = 1e-9

KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3}


cdef inline double _powi(double x, int n) noexcept nogil:
    cdef double r = 1.0
    while n > 0:
        if n & 1:
            r *= x
        x *= x
        n >>= 1
    return r


cdef inline double _kfun(int code, double dot, double sq_a, double sq_b,
                         double gamma, double coef0, int degree) noexcept nogil:
    cdef double d
    if code == 2:
        d = sq_a + sq_b - 2.0 * dot
        if d < 0.0:
            d = 0.0
        return exp(-gamma * d)
    if code == 1:
        return _powi(gamma * dot + coef0, degree)
    if code == 3:
        return tanh(gamma * dot + coef0)
    return dot


def row_sqnorms(const int64_t[::1] indptr, const floating[::1] data):
    """Squared Euclidean norm of every CSR row (float64, shape (m,))."""
    cdef Py_ssize_t m = indptr.shape[0] - 1, i, j
    cdef double s, x
    out = np.empty(m, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for i in range(m):
            s = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                x = data[j]
                s = s + x * x
            o[i] = s
    return out


cdef inline void lru_unlink(int64_t* prev, int64_t* nxt, int64_t* head, int64_t* tail, int64_t i) noexcept nogil:
    """Take entry i out of the doubly linked least-recently-used list (head: the most recent)."""
    cdef int64_t a = prev[i], b = nxt[i]
    if a >= 0:
        nxt[a] = b
    else:
        head[0] = b
    if b >= 0:
        prev[b] = a
    else:
        tail[0] = a


cdef inline void lru_front(int64_t* prev, int64_t* nxt, int64_t* head, int64_t* tail, int64_t i) noexcept nogil:
    """Put entry i (not in the list) at its head, as the most recently used."""
    prev[i] = -1
    nxt[i] = head[0]
    if head[0] >= 0:
        prev[head[0]] = i
    head[0] = i
    if tail[0] < 0:
        tail[0] = i


cdef class KernelState:
    """One run of kernelized Pegasos over a fixed training set.

    Parameters
    ----------
    indptr, indices, data : CSR arrays of X (float64 values), shape (m, n_features)
    y : float64 array of shape (m,), values -1.0 or +1.0
    n_features : int, columns of X
    code, gamma, coef0, degree : the kernel (see the module docstring)
    lam : float > 0
    k : int, batch size
    projection : bool, project onto the ball of radius 1/sqrt(lambda) (Eq. (6))
    avg_start : int, 0 for the last iterate, else average w_t for t >= avg_start
    budget : int, 0 for none, else the largest number of support vectors kept
    cache_bytes : int, bound on the kernel-row cache (0: no cache)
    """
    # training data (kept alive by the memoryviews)
    cdef const int64_t[::1] indptr_mv
    cdef const int32_t[::1] indices_mv
    cdef const double[::1] data_mv
    cdef const double[::1] y_mv
    cdef double[::1] sqn_mv
    cdef const int64_t* indptr
    cdef const int32_t* indices
    cdef const double* data
    cdef const double* y
    cdef double* sqn
    cdef readonly Py_ssize_t m, n_features
    # settings
    cdef readonly int code, degree
    cdef readonly double gamma, coef0, lam
    cdef readonly Py_ssize_t k
    cdef readonly bint projection
    cdef readonly int64_t avg_start, budget
    cdef readonly int64_t cache_limit
    # iterate
    cdef readonly int64_t t
    cdef readonly double pi, Q, P
    cdef readonly int64_t n_avg
    # support set: slots in order of joining S
    cdef int64_t* sv_ex
    cdef double* sv_alpha
    cdef double* sv_kself
    cdef char* sv_alive
    cdef double* sv_acc
    cdef double* sv_lastP
    cdef readonly Py_ssize_t n_slots, n_live, slot_cap
    cdef int64_t* slot_of
    # work buffers
    cdef double* dense
    cdef double* g
    cdef int64_t* bex
    cdef Py_ssize_t* vio
    cdef double* kk
    # cache of kernel rows
    cdef double** c_row
    cdef int64_t* c_len
    cdef int64_t* c_cap
    cdef int64_t* lru_prev
    cdef int64_t* lru_next
    cdef int64_t lru_head, lru_tail
    cdef readonly int64_t cache_used
    # statistics
    cdef readonly int64_t n_kernel, n_cached, n_removed, n_compact, n_refold

    def __cinit__(self, const int64_t[::1] indptr, const int32_t[::1] indices,
                  const double[::1] data, const double[::1] y, Py_ssize_t n_features,
                  int code, double gamma, double coef0, int degree, double lam,
                  Py_ssize_t k, bint projection=False, int64_t avg_start=0,
                  int64_t budget=0, int64_t cache_bytes=0):
        cdef Py_ssize_t i
        self.lru_head = self.lru_tail = -1          # an empty cache, for __dealloc__ if an allocation fails
        self.m = indptr.shape[0] - 1
        self.n_features = n_features
        self.indptr_mv = indptr
        self.indices_mv = indices
        self.data_mv = data
        self.y_mv = y
        self.sqn_mv = row_sqnorms(indptr, data)
        self.indptr = &indptr[0]
        self.indices = &indices[0] if indices.shape[0] else NULL
        self.data = &data[0] if data.shape[0] else NULL
        self.y = &y[0]
        self.sqn = &self.sqn_mv[0] if self.m else NULL
        self.code, self.gamma, self.coef0, self.degree = code, gamma, coef0, degree
        self.lam, self.k, self.projection = lam, k, projection
        self.avg_start, self.budget, self.cache_limit = avg_start, budget, cache_bytes
        self.t = 0
        self.pi = 1.0
        self.Q = 0.0
        self.P = 0.0
        self.n_avg = 0
        self.n_slots = self.n_live = self.slot_cap = 0
        self.sv_ex = NULL
        self.sv_alpha = self.sv_kself = self.sv_acc = self.sv_lastP = NULL
        self.sv_alive = NULL
        self.slot_of = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        self.dense = <double*> calloc(n_features + 1, sizeof(double))
        self.g = <double*> malloc(sizeof(double) * k)
        self.bex = <int64_t*> malloc(sizeof(int64_t) * k)
        self.vio = <Py_ssize_t*> malloc(sizeof(Py_ssize_t) * k)
        self.kk = <double*> malloc(sizeof(double) * k * k) if projection else NULL
        self.c_row = <double**> calloc(self.m + 1, sizeof(double*))
        self.c_len = <int64_t*> calloc(self.m + 1, sizeof(int64_t))
        self.c_cap = <int64_t*> calloc(self.m + 1, sizeof(int64_t))
        self.lru_prev = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        self.lru_next = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        if (self.slot_of == NULL or self.dense == NULL or self.g == NULL or self.bex == NULL
                or self.vio == NULL or (projection and self.kk == NULL) or self.c_row == NULL
                or self.c_len == NULL or self.c_cap == NULL or self.lru_prev == NULL
                or self.lru_next == NULL):
            raise MemoryError()
        for i in range(self.m):
            self.slot_of[i] = -1
        self.lru_head = self.lru_tail = -1
        self.cache_used = 0
        self.n_kernel = self.n_cached = self.n_removed = self.n_compact = self.n_refold = 0
        self._grow(64)

    def __dealloc__(self):
        if self.c_row != NULL and self.lru_next != NULL:     # not when __cinit__ failed before allocating
            self._cache_clear()
        free(self.sv_ex); free(self.sv_alpha); free(self.sv_kself); free(self.sv_alive)
        free(self.sv_acc); free(self.sv_lastP); free(self.slot_of); free(self.dense)
        free(self.g); free(self.bex); free(self.vio); free(self.kk)
        free(self.c_row); free(self.c_len); free(self.c_cap)
        free(self.lru_prev); free(self.lru_next)

    cdef int _grow(self, Py_ssize_t cap) except -1 nogil:
        cdef void* p
        if cap <= self.slot_cap:
            return 0
        p = realloc(self.sv_ex, sizeof(int64_t) * cap)
        if p == NULL:
            with gil:
                raise MemoryError()
        self.sv_ex = <int64_t*> p
        p = realloc(self.sv_alpha, sizeof(double) * cap)
        if p == NULL:
            with gil:
                raise MemoryError()
        self.sv_alpha = <double*> p
        p = realloc(self.sv_kself, sizeof(double) * cap)
        if p == NULL:
            with gil:
                raise MemoryError()
        self.sv_kself = <double*> p
        p = realloc(self.sv_acc, sizeof(double) * cap)
        if p == NULL:
            with gil:
                raise MemoryError()
        self.sv_acc = <double*> p
        p = realloc(self.sv_lastP, sizeof(double) * cap)
        if p == NULL:
            with gil:
                raise MemoryError()
        self.sv_lastP = <double*> p
        p = realloc(self.sv_alive, sizeof(char) * cap)
        if p == NULL:
            with gil:
                raise MemoryError()
        self.sv_alive = <char*> p
        self.slot_cap = cap
        return 0

    # ------------------------------------------------------------ cache --
    cdef void _lru_unlink(self, int64_t i) noexcept nogil:
        lru_unlink(self.lru_prev, self.lru_next, &self.lru_head, &self.lru_tail, i)

    cdef void _lru_front(self, int64_t i) noexcept nogil:
        lru_front(self.lru_prev, self.lru_next, &self.lru_head, &self.lru_tail, i)

    cdef void _cache_drop(self, int64_t i) noexcept nogil:
        if self.c_row[i] == NULL:
            return
        self._lru_unlink(i)
        free(self.c_row[i])
        self.c_row[i] = NULL
        self.cache_used -= self.c_cap[i] * <int64_t> sizeof(double)
        self.c_len[i] = 0
        self.c_cap[i] = 0

    cdef void _cache_clear(self) noexcept nogil:
        while self.lru_head >= 0:
            self._cache_drop(self.lru_head)

    cdef double* _cache_row(self, int64_t i, Py_ssize_t need) noexcept nogil:
        """The cached row of example i with room for ``need`` slots, or NULL
        (no cache, or a row that does not fit the bound)."""
        cdef int64_t cap, extra
        cdef void* p
        if self.cache_limit <= 0:
            return NULL
        if self.c_row[i] != NULL:
            self._lru_unlink(i)
            self._lru_front(i)
            if self.c_cap[i] >= need:
                return self.c_row[i]
        cap = need + need // 4 + 16
        extra = (cap - self.c_cap[i]) * <int64_t> sizeof(double)
        while self.cache_used + extra > self.cache_limit and self.lru_tail >= 0 and self.lru_tail != i:
            self._cache_drop(self.lru_tail)
        if self.cache_used + extra > self.cache_limit:
            self._cache_drop(i)
            return NULL
        p = realloc(self.c_row[i], sizeof(double) * cap)
        if p == NULL:
            self._cache_drop(i)
            return NULL
        if self.c_row[i] == NULL:
            self._lru_front(i)
            self.c_len[i] = 0
        self.c_row[i] = <double*> p
        self.cache_used += extra
        self.c_cap[i] = cap
        return self.c_row[i]

    # ------------------------------------------------------------ kernel --
    cdef inline void _scatter(self, int64_t i) noexcept nogil:
        cdef int64_t j
        for j in range(self.indptr[i], self.indptr[i + 1]):
            self.dense[self.indices[j]] = self.data[j]

    cdef inline void _unscatter(self, int64_t i) noexcept nogil:
        cdef int64_t j
        for j in range(self.indptr[i], self.indptr[i + 1]):
            self.dense[self.indices[j]] = 0.0

    cdef inline double _kdense(self, int64_t i, int64_t e) noexcept nogil:
        """K(x_i, x_e) with x_i scattered in the dense buffer."""
        cdef int64_t j
        cdef double dot = 0.0
        for j in range(self.indptr[e], self.indptr[e + 1]):
            dot = dot + self.dense[self.indices[j]] * self.data[j]
        return _kfun(self.code, dot, self.sqn[i], self.sqn[e], self.gamma, self.coef0, self.degree)

    cdef double _kpair(self, int64_t i, int64_t e) noexcept nogil:
        cdef double r
        self._scatter(i)
        r = self._kdense(i, e)
        self._unscatter(i)
        self.n_kernel += 1
        return r

    cdef double _gsum(self, int64_t i) noexcept nogil:
        """sum over S of alpha_j y_j K(x_j, x_i), in slot order."""
        cdef Py_ssize_t p, L = 0, ns = self.n_slots
        cdef double s = 0.0, kv
        cdef double* row = self._cache_row(i, ns)
        if row != NULL:
            L = self.c_len[i]
            self.n_cached += L
            for p in range(L):
                if self.sv_alive[p]:
                    s = s + self.sv_alpha[p] * self.y[self.sv_ex[p]] * row[p]
        if L < ns:
            self._scatter(i)
            for p in range(L, ns):
                if self.sv_alive[p]:
                    kv = self._kdense(i, self.sv_ex[p])
                    self.n_kernel += 1
                    s = s + self.sv_alpha[p] * self.y[self.sv_ex[p]] * kv
                else:
                    kv = 0.0
                if row != NULL:
                    row[p] = kv
            self._unscatter(i)
            if row != NULL:
                self.c_len[i] = ns
        return s

    # ------------------------------------------------------ support set --
    cdef void _flush(self, Py_ssize_t p) noexcept nogil:
        if self.avg_start > 0:
            self.sv_acc[p] += self.sv_alpha[p] * (self.P - self.sv_lastP[p])
            self.sv_lastP[p] = self.P

    cdef Py_ssize_t _slot(self, int64_t i) except -1 nogil:
        cdef Py_ssize_t p = self.slot_of[i]
        if p >= 0:
            return p
        if self.n_slots == self.slot_cap:
            self._grow(2 * self.slot_cap)
        p = self.n_slots
        self.n_slots += 1
        self.n_live += 1
        self.sv_ex[p] = i
        self.sv_alpha[p] = 0.0
        self.sv_acc[p] = 0.0
        self.sv_lastP[p] = self.P
        self.sv_alive[p] = 1
        self.sv_kself[p] = self._kpair(i, i) if self.budget > 0 else 1.0
        self.slot_of[i] = p
        return p

    cdef void _remove_one(self) noexcept nogil:
        """Drop the live slot with the smallest alpha^2 K(x, x) (first on ties)."""
        cdef Py_ssize_t p, best = -1
        cdef double v, best_v = 0.0
        for p in range(self.n_slots):
            if self.sv_alive[p]:
                v = self.sv_alpha[p] * self.sv_alpha[p] * self.sv_kself[p]
                if best < 0 or v < best_v:
                    best, best_v = p, v
        if best < 0:
            return
        self.sv_alive[best] = 0
        self.sv_alpha[best] = 0.0
        self.slot_of[self.sv_ex[best]] = -1
        self.n_live -= 1
        self.n_removed += 1

    cdef void _compact(self) noexcept nogil:
        cdef Py_ssize_t p, q = 0
        for p in range(self.n_slots):
            if self.sv_alive[p]:
                self.sv_ex[q] = self.sv_ex[p]
                self.sv_alpha[q] = self.sv_alpha[p]
                self.sv_kself[q] = self.sv_kself[p]
                self.sv_acc[q] = self.sv_acc[p]
                self.sv_lastP[q] = self.sv_lastP[p]
                self.sv_alive[q] = 1
                self.slot_of[self.sv_ex[q]] = q
                q += 1
        self.n_slots = q
        self._cache_clear()
        self.n_compact += 1

    cdef void _refold(self) noexcept nogil:
        """alpha <- pi alpha, Q <- pi^2 Q, pi <- 1 (same w)."""
        cdef Py_ssize_t p
        for p in range(self.n_slots):
            self._flush(p)
            self.sv_alpha[p] *= self.pi
        self.Q *= self.pi * self.pi
        self.pi = 1.0
        self.n_refold += 1

    # -------------------------------------------------------------- loop --
    def run(self, const int64_t[::1] order, int64_t n_iter):
        """Run ``n_iter`` iterations; iteration j (0-based, within this call)
        uses the batch ``order[j*k : min((j+1)*k, len(order))]``."""
        cdef Py_ssize_t n_order = order.shape[0], j
        if n_iter <= 0:
            return
        if (n_iter - 1) * self.k >= n_order:
            raise ValueError("order is too short for n_iter batches")
        for j in range(n_order):
            if order[j] < 0 or order[j] >= self.m:
                raise ValueError("order holds an index outside 0..m-1")
        with nogil:
            self._run(&order[0], n_order, n_iter)

    cdef int _run(self, const int64_t* order, Py_ssize_t n_order, int64_t n_iter) except -1 nogil:
        cdef int64_t it, t, i
        cdef Py_ssize_t pos = 0, bsz, r, r2, nv, p
        cdef double scale, inc, dq, norm2, radius2 = 1.0 / self.lam
        cdef double kf = <double> self.k
        for it in range(n_iter):
            t = self.t + 1
            bsz = self.k
            if pos + bsz > n_order:
                bsz = n_order - pos
            # ---- margins of the batch at w_t
            scale = self.pi / (self.lam * <double> (t - 1) * kf) if t > 1 else 0.0
            nv = 0
            for r in range(bsz):
                i = order[pos + r]
                self.bex[r] = i
                if t == 1:
                    self.g[r] = 0.0
                    self.vio[nv] = r
                    nv += 1
                else:
                    self.g[r] = self._gsum(i)
                    if self.y[i] * (scale * self.g[r]) < 1.0:
                        self.vio[nv] = r
                        nv += 1
            pos += bsz
            # ---- w_t enters the running mean
            if self.avg_start > 0 and t >= self.avg_start:
                self.P += scale
                self.n_avg += 1
            # ---- ||sum alpha y phi||^2 after the step (projection only)
            inc = kf / (self.pi * <double> bsz)
            if self.projection and nv > 0:
                dq = 0.0
                for r in range(nv):
                    dq += 2.0 * inc * self.y[self.bex[self.vio[r]]] * self.g[self.vio[r]]
                    for r2 in range(nv):
                        dq += (inc * inc * self.y[self.bex[self.vio[r]]] * self.y[self.bex[self.vio[r2]]]
                               * self._kpair(self.bex[self.vio[r]], self.bex[self.vio[r2]]))
                self.Q += dq
                if self.Q < 0.0:
                    self.Q = 0.0
            # ---- alpha_i += k / (pi |A_t|) for every violator (repeats count)
            for r in range(nv):
                p = self._slot(self.bex[self.vio[r]])
                self._flush(p)
                self.sv_alpha[p] += inc
            # ---- projection onto the ball of radius 1/sqrt(lambda): pi shrinks
            if self.projection:
                norm2 = (self.pi / (self.lam * <double> t * kf)) ** 2 * self.Q
                if norm2 > radius2:
                    self.pi *= sqrt(radius2 / norm2)
                if self.pi < PI_REFOLD_BELOW:
                    self._refold()
            # ---- budget
            if self.budget > 0:
                while self.n_live > self.budget:
                    self._remove_one()
                if self.n_slots - self.n_live > self.n_live and self.n_slots > 32:
                    self._compact()
            self.t = t
        return 0

    # ----------------------------------------------------------- results --
    def support(self):
        """(example indices, coefficients) of the output, coefficients in
        units of the decision value: f(x) = sum coef_j K(x_j, x).

        Last iterate: coef_j = y_j alpha_j pi / (lambda T k).  Averaged:
        coef_j = y_j (sum over averaged t of s_t alpha_t[j]) / count, with
        s_t = pi_t / (lambda (t-1) k) the scale of w_t.
        """
        cdef Py_ssize_t p, q = 0
        ex = np.empty(self.n_live, dtype=np.int64)
        coef = np.empty(self.n_live, dtype=np.float64)
        cdef int64_t[::1] e = ex
        cdef double[::1] c = coef
        cdef double s = self.pi / (self.lam * <double> self.t * <double> self.k) if self.t else 0.0
        for p in range(self.n_slots):
            if not self.sv_alive[p]:
                continue
            e[q] = self.sv_ex[p]
            if self.avg_start > 0:
                self._flush(p)
                c[q] = self.y[self.sv_ex[p]] * self.sv_acc[p] / self.n_avg if self.n_avg else 0.0
            else:
                c[q] = self.y[self.sv_ex[p]] * self.sv_alpha[p] * s
            q += 1
        return ex, coef

    def alphas(self):
        """(example indices, alpha) of the live support set, in slot order."""
        cdef Py_ssize_t p
        ex, al = [], []
        for p in range(self.n_slots):
            if self.sv_alive[p]:
                ex.append(self.sv_ex[p])
                al.append(self.sv_alpha[p])
        return np.array(ex, dtype=np.int64), np.array(al, dtype=np.float64)

    def stats(self):
        """Counters of the run (kernel evaluations, cached values used, ...)."""
        return {"iterations": self.t, "support_vectors": self.n_live, "kernel_evaluations": self.n_kernel,
                "cached_values_used": self.n_cached, "removed": self.n_removed,
                "compactions": self.n_compact, "refolds": self.n_refold,
                "cache_bytes": self.cache_used, "pi": self.pi}


def kernel_decision(const int64_t[::1] sv_indptr, const int32_t[::1] sv_indices,
                    const double[::1] sv_data, const double[::1] sv_sqn, const double[::1] coef,
                    int code, double gamma, double coef0, int degree,
                    const int64_t[::1] indptr, const int32_t[::1] indices,
                    const floating[::1] data, Py_ssize_t r0, Py_ssize_t r1,
                    double bias, double[::1] out):
    """out[i] = sum_s coef_s K(sv_s, x_i) + bias for the CSR rows r0 <= i < r1.

    The support vectors are a CSR matrix with ``n_sv_features`` = the size of
    the dense buffer (columns of x beyond it meet only zeros in the dot
    products but count in ||x||^2 for the RBF kernel).  Runs without the
    GIL; each row's value depends only on that row, so splitting the rows
    among threads gives the same doubles.
    """
    cdef Py_ssize_t n_sv = sv_indptr.shape[0] - 1
    cdef int64_t ncol = 0, j, s
    cdef Py_ssize_t i
    cdef double acc, dot, sq, x
    cdef double* dense
    cdef int32_t c
    if out.shape[0] != indptr.shape[0] - 1:
        raise ValueError("out has the wrong length")
    if r0 >= r1:
        return
    for j in range(sv_indices.shape[0]):
        if sv_indices[j] + 1 > ncol:
            ncol = sv_indices[j] + 1
    dense = <double*> calloc(ncol + 1, sizeof(double))
    if dense == NULL:
        raise MemoryError()
    with nogil:
        for i in range(r0, r1):
            sq = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                c = indices[j]
                x = data[j]
                sq = sq + x * x
                if c < ncol:
                    dense[c] = x
            acc = 0.0
            for s in range(n_sv):
                dot = 0.0
                for j in range(sv_indptr[s], sv_indptr[s + 1]):
                    dot = dot + dense[sv_indices[j]] * sv_data[j]
                acc = acc + coef[s] * _kfun(code, dot, sv_sqn[s], sq, gamma, coef0, degree)
            out[i] = acc + bias
            for j in range(indptr[i], indptr[i + 1]):
                c = indices[j]
                if c < ncol:
                    dense[c] = 0.0
    free(dense)


# ------------------------------------------------------- the dual solver --

DEF SHRINK_EVERY = 1000      # updates between two looks for coordinates to leave the active set
DEF LOG_MIN = 65536          # the log of updates holds max(4 m, LOG_MIN) entries

cdef class KernelDual:
    """Greedy dual coordinate ascent for the kernel SVM without a bias (box constraints only), with shrinking.

    The primal is paper Eq. (1) in feature space, min_w lambda/2 ||w||^2 +
    1/m sum_i max(0, 1 - y_i <w, phi(x_i)>).  Multiplied by 1/lambda it is
    LIBSVM's C-SVM without its bias, C = 1/(lambda m), whose dual is::

        max_alpha  D(alpha) = sum_i alpha_i - 1/2 alpha^T Q alpha,   0 <= alpha_i <= C,
        Q_ij = y_i y_j K(x_i, x_j),   w(alpha) = sum_i alpha_i y_i phi(x_i)

    (no equality constraint: there is no unregularised bias).  The state keeps
    alpha and the gradient G = Q alpha - 1 of -D.  An update picks the
    coordinate whose exact one-variable step, alpha_i <- clip(alpha_i - G_i /
    Q_ii, 0, C), raises D the most (the step's gain -(G_i d + Q_ii d^2 / 2) for
    d the change; ties to the smallest index), and adds d Q_iA to G_A: the
    row of Q restricted to the active set A, from a cache of such rows (least
    recently used rows dropped past ``cache_bytes``; a cached row and a
    recomputed one are the same doubles).

    Shrinking (the heuristic of Joachims 1999, Sec. 11.4, in the form of
    Chang and Lin's LIBSVM paper, ACM TIST 2011, Sec. 5.1, and of Hsieh et
    al., ICML 2008, Sec. 3.2, for a dual with bounds only): every
    SHRINK_EVERY (1000, or m if smaller) updates, counted from the start of
    the run, the extreme projected gradients over A are taken, hi = max PG_i
    > 0 and lo = min PG_i < 0 (PG_i = min(G_i, 0) at alpha_i = 0, max(G_i,
    0) at alpha_i = C, G_i between; +inf or -inf when there is none), and the
    coordinates stuck at a bound beyond them, alpha_i = 0 with G_i > hi or
    alpha_i = C with G_i < lo, leave A: the
    choice, the rows and the gradient updates then run over A only; cached
    rows are cut to the new A (the same doubles).  G_i of a coordinate out of
    A is left as it was when it left, and the updates made while A is not
    everything are logged (coordinate, change; at most max(4 m, 65536)
    entries, then the log starts again).  When the gap estimated with those
    old values reaches ``tol``, or no step over A raises D, G is rebuilt for
    every coordinate out of A ("unshrinking"): G_i(now) = G_i(when it left) +
    y_i sum_j Delta_j y_j K(x_j, x_i) over the coordinates j changed since
    (Delta_j their change, from the log), or anew as y_i sum_{j: alpha_j > 0}
    alpha_j y_j K(x_j, x_i) - 1 where that takes fewer kernel values (or the
    log started again since); A becomes every coordinate, the cache is
    emptied, and the test is made again on all m coordinates: a run stops on
    "gap" or "optimal" only with A = all, so the certificate is exact.
    (LIBSVM keeps C sum_{alpha_j = C} Q_ij instead; here that sum would need
    a row of all m values each time an alpha reaches or leaves C, which most
    updates do at moderate lambda, so the log is used.)

    Since y_i <w(alpha), phi(x_i)> = (Q alpha)_i = G_i + 1 and
    alpha^T Q alpha = sum_i alpha_i (G_i + 1), the scan that picks the
    coordinate also gives, for the current alpha, in Eq. (1)'s scaling::

        P = lambda (1/2 alpha^T Q alpha + C sum_i max(0, -G_i))   (the primal of w(alpha))
        D = lambda (sum_i alpha_i - 1/2 alpha^T Q alpha)           (a lower bound of min P)

    :meth:`values`, :attr:`gap` and :meth:`margins` are always those of the
    current alpha over all m coordinates: while some coordinates are out of
    A they are computed from a rebuilt copy of G (the solver's own state is
    not touched, so asking never changes the iterates).

    Everything is deterministic: the iterates depend neither on the cache
    size nor on how the updates are split into calls of :meth:`run`.  The
    kernel must be positive semi-definite (linear, rbf, poly with coef0 >=
    0) for D to bound the optimum; :mod:`pegasos.kernel` checks that.

    Parameters
    ----------
    indptr, indices, data : CSR arrays of X (int64, int32, float64), shape (m, n_features)
    y : float64 array of shape (m,), values -1.0 or +1.0
    n_features : int, every column index is below it
    code, gamma, coef0, degree : the kernel (see the module docstring)
    C : float > 0, the box, 1/(lambda m)
    cache_bytes : int, bound on the row cache (0: every row is recomputed)
    shrinking : bool, default True; False keeps every coordinate active

    Attributes (read-only)
    ----------------------
    updates, rows_computed, rows_cached : int, updates made, rows of Q computed, rows taken from the cache
    kernel_values : int, kernel values computed (rows and rebuilds of G)
    n_active : int, |A|
    shrink_events, shrunk, unshrinks : int, looks that removed coordinates from A, coordinates removed,
        rebuilds of G with A = all

    Raises
    ------
    MemoryError
        The per-example arrays cannot be allocated.
    """
    cdef const int64_t[::1] indptr_mv
    cdef const int32_t[::1] indices_mv
    cdef const double[::1] data_mv
    cdef const double[::1] y_mv
    cdef double[::1] sqn_mv
    cdef readonly Py_ssize_t m, n_features
    cdef readonly int code, degree
    cdef readonly double gamma, coef0, C
    cdef readonly int64_t cache_limit
    cdef readonly bint shrinking
    cdef double* alpha
    cdef double* G
    cdef double* qd
    cdef double* dense
    cdef double* Grep          # G over all m for the reports while A is not everything
    cdef int64_t* act          # the active set A, ascending, its first n_active entries
    cdef char* is_act
    cdef int64_t* tmp          # work: the support set of a rebuild, the new positions of a shrink
    cdef int64_t* touched      # work of a rebuild: the coordinates changed since a look
    cdef double* delta         # work of a rebuild: their change (0 elsewhere)
    cdef char* mark            # work of a rebuild: 1 on the touched coordinates
    # the updates made while some coordinate is out of A (coordinate, change), and the looks that removed some
    cdef int64_t* log_i
    cdef double* log_d
    cdef int64_t log_n, log_cap
    cdef int64_t* left_at      # for a coordinate out of A: the log length when it left, -1 if the log was reset since
    cdef int64_t* look_at      # the log lengths of the looks that removed coordinates, oldest first
    cdef int64_t n_looks
    cdef double** c_row
    cdef int64_t* c_len        # the length of each cached row (= n_active while cached)
    cdef int64_t* lru_prev
    cdef int64_t* lru_next
    cdef int64_t lru_head, lru_tail
    cdef readonly int64_t cache_used
    cdef readonly Py_ssize_t n_active
    # after the last scan: its sums (with the old values of the coordinates out of A), the best gain seen
    cdef double s_alpha, s_aqa, s_hinge
    cdef readonly double best_gain
    # sums over the coordinates out of A, from when they left it
    cdef double out_alpha, out_aqa, out_hinge
    # exact sums of the current alpha over all m (valid while rep_valid)
    cdef double r_alpha, r_aqa, r_hinge
    cdef bint rep_valid
    cdef int64_t checked_at
    cdef readonly int64_t updates, rows_computed, rows_cached, kernel_values
    cdef readonly int64_t shrink_events, shrunk, unshrinks, rebuild_values

    def __cinit__(self, const int64_t[::1] indptr, const int32_t[::1] indices,
                  const double[::1] data, const double[::1] y, Py_ssize_t n_features,
                  int code, double gamma, double coef0, int degree, double C,
                  int64_t cache_bytes=0, bint shrinking=True):
        cdef Py_ssize_t i
        self.lru_head = self.lru_tail = -1
        self.m = indptr.shape[0] - 1
        self.n_features = n_features
        self.indptr_mv, self.indices_mv, self.data_mv, self.y_mv = indptr, indices, data, y
        self.sqn_mv = row_sqnorms(indptr, data)
        self.code, self.gamma, self.coef0, self.degree, self.C = code, gamma, coef0, degree, C
        self.cache_limit = cache_bytes
        self.shrinking = shrinking
        self.cache_used = 0
        self.updates = self.rows_computed = self.rows_cached = self.kernel_values = 0
        self.shrink_events = self.shrunk = self.unshrinks = self.rebuild_values = 0
        self.checked_at = 0
        self.out_alpha = self.out_aqa = self.out_hinge = 0.0
        self.rep_valid = False
        self.Grep = NULL
        self.alpha = <double*> calloc(self.m + 1, sizeof(double))
        self.G = <double*> malloc(sizeof(double) * (self.m + 1))
        self.qd = <double*> malloc(sizeof(double) * (self.m + 1))
        self.dense = <double*> calloc(n_features + 1, sizeof(double))
        self.act = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        self.is_act = <char*> malloc(sizeof(char) * (self.m + 1))
        self.tmp = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        self.touched = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        self.delta = <double*> calloc(self.m + 1, sizeof(double))
        self.mark = <char*> calloc(self.m + 1, sizeof(char))
        self.left_at = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        self.log_cap = max(4 * <int64_t> self.m, <int64_t> LOG_MIN)
        self.log_i = <int64_t*> malloc(sizeof(int64_t) * self.log_cap)
        self.log_d = <double*> malloc(sizeof(double) * self.log_cap)
        self.look_at = <int64_t*> malloc(sizeof(int64_t) * (self.log_cap + 1))
        self.log_n = self.n_looks = 0
        self.c_row = <double**> calloc(self.m + 1, sizeof(double*))
        self.c_len = <int64_t*> calloc(self.m + 1, sizeof(int64_t))
        self.lru_prev = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        self.lru_next = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        if (self.alpha == NULL or self.G == NULL or self.qd == NULL or self.dense == NULL
                or self.act == NULL or self.is_act == NULL or self.tmp == NULL or self.touched == NULL
                or self.delta == NULL or self.mark == NULL or self.left_at == NULL or self.log_i == NULL
                or self.log_d == NULL or self.look_at == NULL
                or self.c_row == NULL or self.c_len == NULL or self.lru_prev == NULL or self.lru_next == NULL):
            raise MemoryError()
        for i in range(self.m):
            self.G[i] = -1.0
            self.qd[i] = _kfun(code, self.sqn_mv[i], self.sqn_mv[i], self.sqn_mv[i], gamma, coef0, degree)
            self.act[i] = i
            self.is_act[i] = 1
        self.n_active = self.m
        self._scan()

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.c_row != NULL:
            for i in range(self.m):
                free(self.c_row[i])
        free(self.alpha); free(self.G); free(self.qd); free(self.dense); free(self.Grep)
        free(self.act); free(self.is_act); free(self.tmp)
        free(self.touched); free(self.delta); free(self.mark); free(self.left_at)
        free(self.log_i); free(self.log_d); free(self.look_at)
        free(self.c_row); free(self.c_len); free(self.lru_prev); free(self.lru_next)

    # ------------------------------------------------------------ rows --
    cdef void _unlink(self, int64_t i) noexcept nogil:
        lru_unlink(self.lru_prev, self.lru_next, &self.lru_head, &self.lru_tail, i)

    cdef void _front(self, int64_t i) noexcept nogil:
        lru_front(self.lru_prev, self.lru_next, &self.lru_head, &self.lru_tail, i)

    cdef void _drop(self, int64_t i) noexcept nogil:
        self._unlink(i)
        free(self.c_row[i])
        self.c_row[i] = NULL
        self.cache_used -= self.c_len[i] * <int64_t> sizeof(double)
        self.c_len[i] = 0

    cdef void _fill(self, int64_t i, double* row) noexcept nogil:
        """row[p] = Q_ij = y_i y_j K(x_i, x_j) for j = act[p], p < n_active."""
        cdef const int64_t* ip = &self.indptr_mv[0]
        cdef const int32_t* ind = &self.indices_mv[0] if self.indices_mv.shape[0] else NULL
        cdef const double* dat = &self.data_mv[0] if self.data_mv.shape[0] else NULL
        cdef const double* y = &self.y_mv[0]
        cdef double* sqn = &self.sqn_mv[0]
        cdef double* dense = self.dense
        cdef int64_t* act = self.act
        cdef double yi = y[i], sq = sqn[i], dot
        cdef int64_t p, j, q, na = self.n_active
        cdef bint full = na == self.m
        for p in range(ip[i], ip[i + 1]):
            dense[ind[p]] = dat[p]
        for q in range(na):
            j = q if full else act[q]
            dot = 0.0
            for p in range(ip[j], ip[j + 1]):
                dot = dot + dense[ind[p]] * dat[p]
            row[q] = yi * y[j] * _kfun(self.code, dot, sq, sqn[j], self.gamma, self.coef0, self.degree)
        for p in range(ip[i], ip[i + 1]):
            dense[ind[p]] = 0.0
        self.rows_computed += 1
        self.kernel_values += na

    cdef double* _row(self, int64_t i, double* spare) noexcept nogil:
        """Row i of Q over A: the cached one, else computed into a new cache entry, else into ``spare``."""
        cdef int64_t size = self.n_active * <int64_t> sizeof(double)
        cdef double* row = self.c_row[i]
        if row != NULL:
            self._unlink(i)
            self._front(i)
            self.rows_cached += 1
            return row
        if size > self.cache_limit or size == 0:
            self._fill(i, spare)
            return spare
        while self.cache_used + size > self.cache_limit and self.lru_tail >= 0:
            self._drop(self.lru_tail)
        row = <double*> malloc(size)
        if row == NULL:
            self._fill(i, spare)
            return spare
        self._fill(i, row)
        self.c_row[i] = row
        self.c_len[i] = self.n_active
        self.cache_used += size
        self._front(i)
        return row

    # ------------------------------------------------------------ shrinking --
    cdef void _shrink(self) noexcept nogil:
        """Take out of A the coordinates stuck at a bound beyond the extreme projected gradients (see the class)."""
        cdef Py_ssize_t p, q, na = self.n_active
        cdef int64_t j, e, L
        cdef double g, a, pg, C = self.C
        cdef double hi = 0.0, lo = 0.0     # the largest PG_i > 0 and the smallest PG_i < 0 over A
        cdef double* row
        cdef double* r2
        cdef int64_t* newpos = self.tmp
        for p in range(na):
            j = self.act[p]
            g = self.G[j]
            a = self.alpha[j]
            if a <= 0.0:
                pg = g if g < 0.0 else 0.0
            elif a >= C:
                pg = g if g > 0.0 else 0.0
            else:
                pg = g
            if pg > hi:
                hi = pg
            elif pg < lo:
                lo = pg
        if not hi > 0.0:
            hi = INFINITY             # no coordinate of A wants to go down: none at 0 is judged stuck
        if not lo < 0.0:
            lo = -INFINITY            # none wants to go up: none at C is judged stuck
        q = 0
        for p in range(na):
            j = self.act[p]
            g = self.G[j]
            a = self.alpha[j]
            if (a <= 0.0 and g > hi) or (a >= C and g < lo):
                newpos[p] = -1
                self.is_act[j] = 0
                self.left_at[j] = self.log_n
                self.out_alpha += a
                self.out_aqa += a * (g + 1.0)
                if g < 0.0:
                    self.out_hinge -= g
                continue
            newpos[p] = q
            self.act[q] = j
            q += 1
        if q == na:
            return
        self.shrink_events += 1
        self.shrunk += na - q
        if self.n_looks == 0 or self.look_at[self.n_looks - 1] != self.log_n:
            self.look_at[self.n_looks] = self.log_n
            self.n_looks += 1
        self.n_active = q
        # cut every cached row to the new A: the same doubles a new row would have
        e = self.lru_head
        while e >= 0:
            row = self.c_row[e]
            L = 0
            for p in range(na):
                if newpos[p] >= 0:
                    row[L] = row[p]
                    L += 1
            if L > 0:
                r2 = <double*> realloc(row, sizeof(double) * L)
                if r2 != NULL:
                    self.c_row[e] = r2
            self.cache_used -= (self.c_len[e] - L) * <int64_t> sizeof(double)
            self.c_len[e] = L
            e = self.lru_next[e]
        if q == 0:
            while self.lru_head >= 0:
                self._drop(self.lru_head)

    cdef void _rebuild(self, double* out) noexcept nogil:
        """out[i] = G_i for every i out of A, from alpha.

        A coordinate that left A at log length L had the exact G_i then, and only the coordinates updated
        since (the log's entries from L on, aggregated: Delta) have moved, so G_i(now) = G_i(then) +
        y_i sum_j Delta_j y_j K(x_j, x_i): |Delta| kernel values.  Where |Delta| >= |S| (or the log was reset
        since it left), G_i is summed anew over S = {j: alpha_j > 0}: |S| kernel values.  The looks are taken
        from the newest, walking the log backwards once.
        """
        cdef const double* y = &self.y_mv[0]
        cdef int64_t* sv = self.tmp
        cdef int64_t i, j, k, e, pos, nt = 0, ns = 0, walk = self.log_n
        for j in range(self.m):
            if self.alpha[j] > 0.0:
                sv[ns] = j
                ns += 1
        e = self.n_looks - 1
        while e >= -1:
            pos = self.look_at[e] if e >= 0 else -1        # e = -1: those whose log was reset (left_at -1)
            while walk > pos and walk > 0:
                walk -= 1
                j = self.log_i[walk]
                if not self.mark[j]:
                    self.mark[j] = 1
                    self.touched[nt] = j
                    nt += 1
                self.delta[j] += self.log_d[walk]
            for i in range(self.m):
                if self.is_act[i] or self.left_at[i] != pos:
                    continue
                if pos >= 0 and nt < ns:
                    out[i] = self.G[i] + y[i] * self._ksum(i, self.touched, nt, self.delta)
                else:
                    out[i] = y[i] * self._ksum(i, sv, ns, self.alpha) - 1.0
            e -= 1
        for k in range(nt):
            j = self.touched[k]
            self.mark[j] = 0
            self.delta[j] = 0.0

    cdef double _ksum(self, int64_t i, int64_t* js, int64_t n, double* w) noexcept nogil:
        """sum_k w[j] y_j K(x_j, x_i) over j = js[k], k < n."""
        cdef const int64_t* ip = &self.indptr_mv[0]
        cdef const int32_t* ind = &self.indices_mv[0] if self.indices_mv.shape[0] else NULL
        cdef const double* dat = &self.data_mv[0] if self.data_mv.shape[0] else NULL
        cdef const double* y = &self.y_mv[0]
        cdef double* sqn = &self.sqn_mv[0]
        cdef double* dense = self.dense
        cdef int64_t j, p, q
        cdef double s = 0.0, dot
        for p in range(ip[i], ip[i + 1]):
            dense[ind[p]] = dat[p]
        for q in range(n):
            j = js[q]
            dot = 0.0
            for p in range(ip[j], ip[j + 1]):
                dot = dot + dense[ind[p]] * dat[p]
            s = s + w[j] * y[j] * _kfun(self.code, dot, sqn[i], sqn[j], self.gamma, self.coef0, self.degree)
        for p in range(ip[i], ip[i + 1]):
            dense[ind[p]] = 0.0
        self.kernel_values += n
        self.rebuild_values += n
        return s

    cdef void _unshrink(self) noexcept nogil:
        """Rebuild G out of A and make A every coordinate (the cache is emptied: its rows are over the old A)."""
        cdef Py_ssize_t i
        self._rebuild(self.G)
        for i in range(self.m):
            self.act[i] = i
            self.is_act[i] = 1
        self.n_active = self.m
        self.out_alpha = self.out_aqa = self.out_hinge = 0.0
        self.log_n = self.n_looks = 0
        while self.lru_head >= 0:
            self._drop(self.lru_head)
        self.unshrinks += 1

    cdef int _report(self) except -1:
        """The exact sums of P and D over all m coordinates for the current alpha (r_alpha, r_aqa, r_hinge)."""
        cdef Py_ssize_t i
        cdef double s_a = 0.0, s_aqa = 0.0, s_h = 0.0, g, a
        if self.n_active == self.m:
            self.r_alpha, self.r_aqa, self.r_hinge = self.s_alpha, self.s_aqa, self.s_hinge
            return 0
        if self.rep_valid:
            return 0
        if self.Grep == NULL:
            self.Grep = <double*> malloc(sizeof(double) * (self.m + 1))
            if self.Grep == NULL:
                raise MemoryError()
        with nogil:
            for i in range(self.m):
                self.Grep[i] = self.G[i]
            self._rebuild(self.Grep)
            for i in range(self.m):
                g = self.Grep[i]
                a = self.alpha[i]
                s_a += a
                s_aqa += a * (g + 1.0)
                if g < 0.0:
                    s_h -= g
        self.r_alpha, self.r_aqa, self.r_hinge = s_a, s_aqa, s_h
        self.rep_valid = True
        return 0

    # ------------------------------------------------------------ ascent --
    cdef int64_t _scan(self) noexcept nogil:
        """The coordinate of A of the largest gain (-1 when no step raises D), and the sums of P and D
        (exact when A is every coordinate, else with the old G of those out of A)."""
        cdef Py_ssize_t p, j, best = -1
        cdef double g, a, q, d, gain, best_gain = 0.0, C = self.C
        cdef double s_a = 0.0, s_aqa = 0.0, s_h = 0.0
        cdef double* G = self.G
        cdef double* alpha = self.alpha
        cdef double* qd = self.qd
        cdef int64_t* act = self.act
        cdef bint full = self.n_active == self.m
        for p in range(self.n_active):
            j = p if full else act[p]
            g = G[j]
            a = alpha[j]
            s_a += a
            s_aqa += a * (g + 1.0)
            if g < 0.0:
                s_h -= g
            q = qd[j]
            if q > 0.0:
                d = a - g / q
                d = (0.0 if d < 0.0 else (C if d > C else d)) - a
                gain = -(g * d + 0.5 * q * d * d)
            else:               # Q_jj = 0: row j of Q is 0 for a PSD kernel, D is linear in alpha_j
                d = (C - a) if g < 0.0 else -a
                gain = -g * d
            if gain > best_gain:
                best_gain = gain
                best = j
        self.s_alpha = s_a + self.out_alpha
        self.s_aqa = s_aqa + self.out_aqa
        self.s_hinge = s_h + self.out_hinge
        self.best_gain = best_gain
        return best

    cdef double _gap_of(self, double s_a, double s_aqa, double s_h) noexcept nogil:
        cdef double p = 0.5 * s_aqa + self.C * s_h
        cdef double d = s_a - 0.5 * s_aqa
        if not p > 0.0:
            return 0.0 if p == 0.0 else 1.0 / 0.0
        return (p - d) / p

    def run(self, int64_t max_updates, double tol=-1.0):
        """At most ``max_updates`` updates; stop before an update where the relative gap
        (P - D) / P <= ``tol`` (a negative tol: never) or where no step raises D, both judged over all
        m coordinates (the gradient out of the active set is rebuilt first).

        Returns
        -------
        (int, str)
            Updates made in this call, and why it stopped: "gap", "optimal" or "updates".

        Raises
        ------
        MemoryError
            No memory for even one row.
        """
        cdef double* spare = <double*> malloc(sizeof(double) * (self.m + 1))
        cdef int64_t done = 0, i, p, every = min(<int64_t> SHRINK_EVERY, <int64_t> self.m)
        cdef double* row
        cdef double* G
        cdef int64_t* act
        cdef double a, d, q, g, na, C = self.C
        cdef int why = 2
        if spare == NULL:
            raise MemoryError()
        if every < 1:
            every = 1
        with nogil:
            while True:
                if self.shrinking and self.updates % every == 0 and self.updates != self.checked_at:
                    self.checked_at = self.updates
                    self._shrink()
                    self.rep_valid = False
                i = self._scan()
                if self.n_active < self.m and (
                        i < 0 or (tol >= 0.0 and self._gap_of(self.s_alpha, self.s_aqa, self.s_hinge) <= tol)):
                    self._unshrink()
                    i = self._scan()
                if tol >= 0.0 and self._gap_of(self.s_alpha, self.s_aqa, self.s_hinge) <= tol:
                    why = 0
                    break
                if i < 0:
                    why = 1
                    break
                if done >= max_updates:
                    break
                a = self.alpha[i]
                g = self.G[i]
                q = self.qd[i]
                if q > 0.0:
                    na = a - g / q
                    na = 0.0 if na < 0.0 else (C if na > C else na)
                else:
                    na = C if g < 0.0 else 0.0
                d = na - a
                self.alpha[i] = na          # exactly 0 or C at a bound, as shrinking tests
                row = self._row(i, spare)
                G = self.G
                if self.n_active == self.m:
                    for p in range(self.m):
                        G[p] += d * row[p]
                else:
                    act = self.act
                    for p in range(self.n_active):
                        G[act[p]] += d * row[p]
                if self.n_active < self.m:
                    if self.log_n == self.log_cap:       # full: those out of A will be summed anew
                        for p in range(self.m):
                            if not self.is_act[p]:
                                self.left_at[p] = -1
                        self.log_n = self.n_looks = 0
                    self.log_i[self.log_n] = i
                    self.log_d[self.log_n] = d
                    self.log_n += 1
                done += 1
                self.updates += 1
                self.rep_valid = False
        free(spare)
        return done, ("gap", "optimal", "updates")[why]

    def values(self):
        """(P, D) of the current alpha in the 1/lambda scaling: 1/2 a'Qa + C sum max(0, -G_i)
        and sum alpha - 1/2 a'Qa (multiply both by lambda for Eq. (1)'s), over all m coordinates."""
        self._report()
        return 0.5 * self.r_aqa + self.C * self.r_hinge, self.r_alpha - 0.5 * self.r_aqa

    @property
    def gap(self):
        """The relative gap (P - D) / P of the current alpha, over all m coordinates."""
        self._report()
        return self._gap_of(self.r_alpha, self.r_aqa, self.r_hinge)

    @property
    def sum_alpha(self):
        """sum_i alpha_i."""
        self._report()
        return self.r_alpha

    @property
    def aqa(self):
        """alpha^T Q alpha, as sum_i alpha_i (G_i + 1)."""
        self._report()
        return self.r_aqa

    @property
    def sum_hinge(self):
        """sum_i max(0, -G_i)."""
        self._report()
        return self.r_hinge

    def alphas(self):
        """alpha, float64 of shape (m,) (a copy)."""
        out = np.empty(self.m, dtype=np.float64)
        cdef double[::1] o = out
        cdef Py_ssize_t j
        for j in range(self.m):
            o[j] = self.alpha[j]
        return out

    def margins(self):
        """y_i f(x_i) = G_i + 1 for the current alpha, float64 of shape (m,) (every coordinate's exact)."""
        out = np.empty(self.m, dtype=np.float64)
        cdef double[::1] o = out
        cdef Py_ssize_t j
        cdef double* g = self.G
        if self.n_active < self.m:
            self._report()
            g = self.Grep
        for j in range(self.m):
            o[j] = g[j] + 1.0
        return out
