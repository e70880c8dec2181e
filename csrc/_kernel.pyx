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

from libc.math cimport exp, sqrt, tanh
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

cdef class KernelDual:
    """Greedy dual coordinate ascent for the kernel SVM without a bias (box constraints only).

    The primal is paper Eq. (1) in feature space, min_w lambda/2 ||w||^2 +
    1/m sum_i max(0, 1 - y_i <w, phi(x_i)>).  Multiplied by 1/lambda it is
    LIBSVM's C-SVM without its bias, C = 1/(lambda m), whose dual is::

        max_alpha  D(alpha) = sum_i alpha_i - 1/2 alpha^T Q alpha,   0 <= alpha_i <= C,
        Q_ij = y_i y_j K(x_i, x_j),   w(alpha) = sum_i alpha_i y_i phi(x_i)

    (no equality constraint: there is no unregularised bias).  The state keeps
    alpha and the gradient G = Q alpha - 1 of -D.  An update picks the
    coordinate whose exact one-variable step, alpha_i <- clip(alpha_i - G_i /
    Q_ii, 0, C), raises D the most (the step's gain -(G_i d + Q_ii d^2 / 2) for
    d the change; ties to the smallest index), and adds d Q_i. to G: one row
    of Q, from a cache of whole rows (least recently used rows dropped past
    ``cache_bytes``; a cached row and a recomputed one are the same doubles).

    Since y_i <w(alpha), phi(x_i)> = (Q alpha)_i = G_i + 1 and
    alpha^T Q alpha = sum_i alpha_i (G_i + 1), the scan that picks the
    coordinate also gives, for the current alpha, in Eq. (1)'s scaling::

        P = lambda (1/2 alpha^T Q alpha + C sum_i max(0, -G_i))   (the primal of w(alpha))
        D = lambda (sum_i alpha_i - 1/2 alpha^T Q alpha)           (a lower bound of min P)

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
    cdef double* alpha
    cdef double* G
    cdef double* qd
    cdef double* dense
    cdef double** c_row
    cdef int64_t* lru_prev
    cdef int64_t* lru_next
    cdef int64_t lru_head, lru_tail
    cdef readonly int64_t cache_used
    # after the last scan: the sums of P and D, the best gain seen
    cdef readonly double sum_alpha, aqa, sum_hinge, best_gain
    cdef readonly int64_t updates, rows_computed, rows_cached

    def __cinit__(self, const int64_t[::1] indptr, const int32_t[::1] indices,
                  const double[::1] data, const double[::1] y, Py_ssize_t n_features,
                  int code, double gamma, double coef0, int degree, double C,
                  int64_t cache_bytes=0):
        cdef Py_ssize_t i
        self.lru_head = self.lru_tail = -1
        self.m = indptr.shape[0] - 1
        self.n_features = n_features
        self.indptr_mv, self.indices_mv, self.data_mv, self.y_mv = indptr, indices, data, y
        self.sqn_mv = row_sqnorms(indptr, data)
        self.code, self.gamma, self.coef0, self.degree, self.C = code, gamma, coef0, degree, C
        self.cache_limit = cache_bytes
        self.cache_used = 0
        self.updates = self.rows_computed = self.rows_cached = 0
        self.alpha = <double*> calloc(self.m + 1, sizeof(double))
        self.G = <double*> malloc(sizeof(double) * (self.m + 1))
        self.qd = <double*> malloc(sizeof(double) * (self.m + 1))
        self.dense = <double*> calloc(n_features + 1, sizeof(double))
        self.c_row = <double**> calloc(self.m + 1, sizeof(double*))
        self.lru_prev = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        self.lru_next = <int64_t*> malloc(sizeof(int64_t) * (self.m + 1))
        if (self.alpha == NULL or self.G == NULL or self.qd == NULL or self.dense == NULL
                or self.c_row == NULL or self.lru_prev == NULL or self.lru_next == NULL):
            raise MemoryError()
        for i in range(self.m):
            self.G[i] = -1.0
            self.qd[i] = _kfun(code, self.sqn_mv[i], self.sqn_mv[i], self.sqn_mv[i], gamma, coef0, degree)
        self._scan()

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.c_row != NULL:
            for i in range(self.m):
                free(self.c_row[i])
        free(self.alpha); free(self.G); free(self.qd); free(self.dense)
        free(self.c_row); free(self.lru_prev); free(self.lru_next)

    # ------------------------------------------------------------ rows --
    cdef void _unlink(self, int64_t i) noexcept nogil:
        lru_unlink(self.lru_prev, self.lru_next, &self.lru_head, &self.lru_tail, i)

    cdef void _front(self, int64_t i) noexcept nogil:
        lru_front(self.lru_prev, self.lru_next, &self.lru_head, &self.lru_tail, i)

    cdef void _fill(self, int64_t i, double* row) noexcept nogil:
        """row[j] = Q_ij = y_i y_j K(x_i, x_j) for every j."""
        cdef const int64_t* ip = &self.indptr_mv[0]
        cdef const int32_t* ind = &self.indices_mv[0] if self.indices_mv.shape[0] else NULL
        cdef const double* dat = &self.data_mv[0] if self.data_mv.shape[0] else NULL
        cdef const double* y = &self.y_mv[0]
        cdef double* sqn = &self.sqn_mv[0]
        cdef double* dense = self.dense
        cdef double yi = y[i], sq = sqn[i], dot
        cdef int64_t p, j
        for p in range(ip[i], ip[i + 1]):
            dense[ind[p]] = dat[p]
        for j in range(self.m):
            dot = 0.0
            for p in range(ip[j], ip[j + 1]):
                dot = dot + dense[ind[p]] * dat[p]
            row[j] = yi * y[j] * _kfun(self.code, dot, sq, sqn[j], self.gamma, self.coef0, self.degree)
        for p in range(ip[i], ip[i + 1]):
            dense[ind[p]] = 0.0
        self.rows_computed += 1

    cdef double* _row(self, int64_t i, double* spare) noexcept nogil:
        """Row i of Q: the cached one, else computed into a new cache entry, else into ``spare``."""
        cdef int64_t size = self.m * <int64_t> sizeof(double), p
        cdef double* row = self.c_row[i]
        if row != NULL:
            self._unlink(i)
            self._front(i)
            self.rows_cached += 1
            return row
        if size > self.cache_limit:
            self._fill(i, spare)
            return spare
        while self.cache_used + size > self.cache_limit and self.lru_tail >= 0:
            p = self.lru_tail
            self._unlink(p)
            free(self.c_row[p])
            self.c_row[p] = NULL
            self.cache_used -= size
        row = <double*> malloc(size)
        if row == NULL:
            self._fill(i, spare)
            return spare
        self._fill(i, row)
        self.c_row[i] = row
        self.cache_used += size
        self._front(i)
        return row

    # ------------------------------------------------------------ ascent --
    cdef int64_t _scan(self) noexcept nogil:
        """The coordinate of the largest gain (-1 when no step raises D), and the sums of P and D."""
        cdef Py_ssize_t j, best = -1
        cdef double g, a, q, d, gain, best_gain = 0.0, C = self.C
        cdef double s_a = 0.0, s_aqa = 0.0, s_h = 0.0
        for j in range(self.m):
            g = self.G[j]
            a = self.alpha[j]
            s_a += a
            s_aqa += a * (g + 1.0)
            if g < 0.0:
                s_h -= g
            q = self.qd[j]
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
        self.sum_alpha, self.aqa, self.sum_hinge, self.best_gain = s_a, s_aqa, s_h, best_gain
        return best

    cdef double _gap(self) noexcept nogil:
        cdef double p = 0.5 * self.aqa + self.C * self.sum_hinge
        cdef double d = self.sum_alpha - 0.5 * self.aqa
        if not p > 0.0:
            return 0.0 if p == 0.0 else 1.0 / 0.0
        return (p - d) / p

    def run(self, int64_t max_updates, double tol=-1.0):
        """At most ``max_updates`` updates; stop before an update where the relative gap
        (P - D) / P <= ``tol`` (a negative tol: never) or where no step raises D.

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
        cdef int64_t done = 0, i, j
        cdef double* row
        cdef double a, d, q, g, C = self.C
        cdef int why = 2
        if spare == NULL:
            raise MemoryError()
        with nogil:
            while True:
                i = self._scan()
                if tol >= 0.0 and self._gap() <= tol:
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
                    d = a - g / q
                    d = (0.0 if d < 0.0 else (C if d > C else d)) - a
                else:
                    d = (C - a) if g < 0.0 else -a
                self.alpha[i] = a + d
                row = self._row(i, spare)
                for j in range(self.m):
                    self.G[j] += d * row[j]
                done += 1
                self.updates += 1
        free(spare)
        return done, ("gap", "optimal", "updates")[why]

    def values(self):
        """(P, D) of the current alpha in the 1/lambda scaling: 1/2 a'Qa + C sum max(0, -G_i)
        and sum alpha - 1/2 a'Qa (multiply both by lambda for Eq. (1)'s)."""
        return 0.5 * self.aqa + self.C * self.sum_hinge, self.sum_alpha - 0.5 * self.aqa

    @property
    def gap(self):
        """The relative gap (P - D) / P of the current alpha."""
        return self._gap()

    def alphas(self):
        """alpha, float64 of shape (m,) (a copy)."""
        out = np.empty(self.m, dtype=np.float64)
        cdef double[::1] o = out
        cdef Py_ssize_t j
        for j in range(self.m):
            o[j] = self.alpha[j]
        return out
