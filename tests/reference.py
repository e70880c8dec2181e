"""Dense, deliberately plain NumPy reference for the Pegasos tests.

Nothing here is shared with the solver: no ``w = a*v`` scaling, no lazy
averaging, no sampling code, no CSR arithmetic.  Every function follows the
text of Shalev-Shwartz, Singer, Srebro, Cotter, "Pegasos: Primal Estimated
sub-GrAdient SOlver for SVM", Math. Programming B 127(1), 2011 (the "MPB"
paper), and the project notes /work/shared/docs/pegasos-paper-notes.md
(sections 1 and 6), line by line, with a dense weight vector.

Conventions (all functions):

* ``X`` is a dense float64 array of shape (m, n) (``to_dense`` converts a
  scipy CSR matrix), ``y`` holds -1.0 / +1.0.
* Iterations are numbered t = 1, 2, ..., T and the iterates w_1, w_2, ...,
  w_{T+1}; w_1 = 0 and iteration t turns w_t into w_{t+1}.
* Batches are given explicitly as a list of integer index arrays A_1..A_T
  (``cut_batches`` builds them from a visiting order the way the solver's
  docstrings describe).  A batch may repeat an index (i.i.d. sampling with
  replacement, which the paper's analysis also covers, end of Sec. 2.3).
"""

import math

import numpy as np


# --------------------------------------------------------------- helpers --

def to_dense(X):
    """A scipy sparse matrix (or array-like) as a dense float64 ndarray."""
    if hasattr(X, "toarray"):
        X = X.toarray()
    return np.array(X, dtype=np.float64)


def labels_pm(y):
    """Map two label values to -1.0/+1.0, the larger value becoming +1."""
    y = np.asarray(y, dtype=np.float64)
    values = np.unique(y)
    assert values.size == 2, values
    return np.where(y == values[1], 1.0, -1.0)


def cut_batches(order, k, m, sampling, T):
    """Split a visiting order into the batches A_1..A_T.

    * ``sampling == "uniform"``: A_t = order[(t-1)k : tk] (consecutive
      slices of k draws; no epochs).
    * ``"permutation"`` / ``"sequential"``: the order is a concatenation of
      epochs of m indices each; every epoch is cut into ceil(m/k) batches of
      k, the last one short (m mod k) when k does not divide m, and the next
      epoch starts a new batch.
    """
    order = np.asarray(order, dtype=np.int64)
    batches = []
    if sampling == "uniform":
        for t in range(T):
            batches.append(order[t * k:(t + 1) * k])
    else:
        per_epoch = math.ceil(m / k)
        for t in range(T):
            e, j = divmod(t, per_epoch)
            lo = e * m + j * k
            hi = e * m + min((j + 1) * k, m)
            batches.append(order[lo:hi])
    for t, A in enumerate(batches):
        assert A.size >= 1, f"order too short for batch {t + 1}"
    return batches


# ------------------------------------------------------------ objective --

def primal_objective(X, y, lam, w, b=0.0, bias="none"):
    """Primal objective, paper Eq. (1) with the hinge loss of Eq. (2).

        f(w) = lam/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i (<w, x_i> + b))

    With ``bias="feature"`` the bias is the weight of a constant feature 1
    and is regularised too, so the regulariser is lam/2 (||w||^2 + b^2)
    (notes Sec. 1.2, "regularised-bias variant"); with
    ``bias="unregularized"`` it is Eq. (23) (b not in the regulariser).
    """
    X = to_dense(X)
    w = np.asarray(w, dtype=np.float64)
    margins = y * (X[:, :w.shape[0]] @ w + b)
    hinge = np.maximum(0.0, 1.0 - margins).mean()
    sq = float(w @ w) + (b * b if bias == "feature" else 0.0)
    return 0.5 * lam * sq + hinge


# ------------------------------------------------------- Fig. 1 / Fig. 2 --

def pegasos_outputs(X, y, lam, batches, projection=False, bias="none", average_starts=(),
                    record=False, loss="hinge", epsilon=0.0, sample_weight=None, pairs=False,
                    radius2=None, t0=0.0, schedule="pegasos", eta=None):
    """Mini-batch Pegasos, paper Fig. 2 (Fig. 1 when every |A_t| = 1), dense.

    For t = 1..T, with eta_t = 1/(lam t) and w_1 = 0:

        A_t+    = { i in A_t : y_i (<w_t, x_i> + b_t) < 1 }        (margins at w_t, strict <)
        w_t+1   = (1 - eta_t lam) w_t + eta_t/|A_t| sum_{i in A_t+} y_i x_i    (Fig. 2, Eq. (8))
        w_t+1  <- min(1, (1/sqrt(lam)) / ||w_t+1||) w_t+1          (optional, Eq. (6); no-op at 0)

    The shrink (1 - eta_t lam) = 1 - 1/t (Eq. (5)) is 0 at t = 1 (notes Sec.
    1.9.1).  Division is by the batch size |A_t| (k, except for a short last
    batch of an epoch), never by the number of violators (notes Sec. 1.4).

    Bias (paper Sec. 6, notes Sec. 2):

    * ``"none"``: b = 0 always (the paper's experiments).
    * ``"feature"`` (option A): a constant feature 1 is appended to every x;
      its weight is the bias, regularised, shrunk and projected like w.
    * ``"unregularized"`` (option B): b_1 = 0 and
      b_{t+1} = b_t + eta_t/|A_t| sum_{i in A_t+} y_i (no shrink, not part of
      the projected norm); the margin test uses <w_t, x> + b_t.

    Parameters
    ----------
    X : (m, n) array or scipy sparse matrix
    y : (m,) array of -1.0 / +1.0
    lam : float > 0
    batches : sequence of integer arrays (A_1, ..., A_T)
    average_starts : iterable of int s, 1 <= s <= T
        For each s, also return the mean of w_s, ..., w_T.  s = 1 is the
        average (1/T) sum_{t=1..T} w_t of Theorem 1 (it includes w_1 = 0 and
        excludes w_{T+1}); s > 1 is a suffix average.  b is averaged alike.
    record : bool
        Also return the iterates [(w_1, b_1), ..., (w_{T+1}, b_{T+1})] and the
        v_t = 1/|A_t| sum_{i in A_t+} y_i x_i of Eq. (12)-(13).

    loss, epsilon, sample_weight, pairs, radius2
        Other losses (paper Sec. 5, notes Sec. 3); with the defaults the
        loop is the hinge loop above, unchanged.  Otherwise
        :func:`pegasos_general_outputs` runs (see there): the step uses
        g_i = -dloss/dz times ``sample_weight[i]``, ``pairs`` makes every
        batch a (k, 2) array of example pairs (ranking), and the projection
        radius is sqrt(``radius2``) (default 1/lam).  ``t0`` offsets the step:
        eta_t = 1/(lam (t + t0)) and the shrink is 1 - 1/(t + t0).
        ``schedule`` "norma" or "constant" with ``eta``: the other step rules
        of Sec. 7.6 (see :func:`step_rule`).

    Returns
    -------
    dict
        ``"last"``: (w_{T+1}, b_{T+1}) (the output of Fig. 1 / Fig. 2); for
        each s in ``average_starts``, key s: (w_bar, b_bar); with ``record``,
        ``"iterates"`` and ``"v"``.  w has shape (n,); with
        ``bias="feature"`` the constant feature's weight is returned as b.
    """
    if (loss != "hinge" or sample_weight is not None or pairs or radius2 is not None or t0
            or schedule != "pegasos"):
        return pegasos_general_outputs(X, y, lam, batches, loss=loss, epsilon=epsilon,
                                       sample_weight=sample_weight, pairs=pairs, projection=projection,
                                       radius2=radius2, bias=bias, average_starts=average_starts, t0=t0,
                                       schedule=schedule, eta=eta)
    X = to_dense(X)
    y = np.asarray(y, dtype=np.float64)
    m, n = X.shape
    if bias == "feature":
        X = np.hstack([X, np.ones((m, 1))])
    T = len(batches)
    averages = _Averages(average_starts, T, X.shape[1])
    w = np.zeros(X.shape[1])
    b = 0.0
    iterates = [(w.copy(), b)] if record else None
    vs = [] if record else None
    for t in range(1, T + 1):
        A = np.asarray(batches[t - 1], dtype=np.int64)
        # margins of the whole batch at w_t (Fig. 2: A_t+ is defined with w_t)
        margins = y[A] * (X[A] @ w + b)
        viol = A[margins < 1.0]
        averages.add(t, w, b)
        eta = 1.0 / (lam * t)
        v = (y[viol][:, None] * X[viol]).sum(axis=0) / A.size
        w = (1.0 - 1.0 / t) * w + eta * v
        if bias == "unregularized":
            b = b + eta * y[viol].sum() / A.size
        if projection:
            norm = math.sqrt(float(w @ w))
            if norm > 0.0:
                w = min(1.0, (1.0 / math.sqrt(lam)) / norm) * w
        if record:
            iterates.append((w.copy(), b))
            vs.append(v)

    out = averages.outputs(w, b, bias)
    if record:
        out["iterates"] = [_split(it, bias) for it in iterates]
        out["v"] = [vi[:-1] if bias == "feature" else vi for vi in vs]
    return out


def pegasos(X, y, lam, batches, projection=False, average_from_t=None, bias="none", **loss_options):
    """One output of :func:`pegasos_outputs`: the last iterate w_{T+1} when
    ``average_from_t`` is None, else the mean of w_s..w_T with s =
    ``average_from_t``.  Returns (w, b).  ``loss_options``: ``loss``,
    ``epsilon``, ``sample_weight``, ``pairs``, ``radius2`` (see
    :func:`pegasos_general_outputs`)."""
    starts = () if average_from_t is None else (average_from_t,)
    out = pegasos_outputs(X, y, lam, batches, projection=projection, bias=bias, average_starts=starts,
                          **loss_options)
    return out["last"] if average_from_t is None else out[average_from_t]


def pegasos_matlab_style(X, y, lam, epochs):
    """The authors'-style dense loop (notes Sec. 1.10): file order, k = 1.

    ::

        t = 0
        for epoch = 1..epochs
          for i = 1..m
            t = t + 1
            if y_i <w, x_i> < 1:  w = (1 - 1/t) w + 1/(lam t) y_i x_i
            else:                 w = (1 - 1/t) w

    Written independently of :func:`pegasos` (no batches, no options), as a
    second opinion on Fig. 1 with the sequential visiting order.
    """
    X = to_dense(X)
    m, n = X.shape
    w = np.zeros(n)
    t = 0
    for _ in range(epochs):
        for i in range(m):
            t += 1
            if y[i] * np.dot(w, X[i]) < 1:
                w = (1 - 1 / t) * w + (1 / (lam * t)) * y[i] * X[i]
            else:
                w = (1 - 1 / t) * w
    return w


def eq13_last_iterate(lam, vs):
    """Closed form of the unprojected iterate (proof of Thm 1, Eq. (12)-(13)):

        w_{T+1} = 1/(lam T) sum_{t=1..T} v_t,
        v_t = 1/|A_t| sum_{i in A_t} 1[y_i <w_t, x_i> < 1] y_i x_i.
    """
    T = len(vs)
    return np.sum(vs, axis=0) / (lam * T)


# ------------------------------------------------------- other losses ------
#
# Paper Sec. 5 and notes Sec. 3: only the loss's sub-gradient changes.  With
# z = <w_t, x_i> (+ b_t) and g_i = -dloss/dz at z (a sub-gradient where the
# loss has a kink, taken as 0 there, as the hinge's strict "< 1" does):
#
#   hinge          max(0, 1 - y z)          g = y            if y z < 1, else 0
#   log            log(1 + exp(-y z))       g = y / (1 + exp(y z))
#   squared-hinge  max(0, 1 - y z)^2        g = 2 y (1 - y z) if y z < 1, else 0
#   eps-insensitive max(0, |z - y| - eps)   g = +1 if y - z > eps, -1 if z - y > eps, else 0
#                                           (y real-valued)
#   rank           the hinge on z = <w, x_a - x_b> with label sign(y_a - y_b)
#                  (pairs from one query with y_a != y_b)
#
# and the step is w_{t+1} = (1 - 1/t) w_t + eta_t/|A_t| sum_{i in A_t} c_i g_i x_i
# (c_i the example's weight, 1 by default; x_a - x_b for a pair).

LOSSES = ("hinge", "log", "squared-hinge", "eps-insensitive", "rank")


def loss_values(loss, z, y, epsilon=0.0):
    """The loss of decision values z against targets y (+-1, real for
    eps-insensitive; for rank, y is the pair's label sign(y_a - y_b))."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if loss in ("hinge", "rank"):
        return np.maximum(0.0, 1.0 - y * z)
    if loss == "squared-hinge":
        return np.maximum(0.0, 1.0 - y * z) ** 2
    if loss == "log":
        return np.logaddexp(0.0, -y * z)
    if loss == "eps-insensitive":
        return np.maximum(0.0, np.abs(z - y) - epsilon)
    raise ValueError(loss)


def minus_loss_derivative(loss, z, y, epsilon=0.0):
    """g = -dloss/dz (the sub-gradient of the table above), elementwise."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    yz = y * z
    if loss in ("hinge", "rank"):
        return np.where(yz < 1.0, y, 0.0)
    if loss == "squared-hinge":
        return np.where(yz < 1.0, 2.0 * y * (1.0 - yz), 0.0)
    if loss == "log":
        # y / (1 + e^{yz}) = y exp(-log(1 + e^{yz})), without overflow
        return y * np.exp(-np.logaddexp(0.0, yz))
    if loss == "eps-insensitive":
        return np.where(y - z > epsilon, 1.0, np.where(z - y > epsilon, -1.0, 0.0))
    raise ValueError(loss)


def all_pairs(qid, y):
    """Every ordered pair (a, b) with qid_a == qid_b and y_a != y_b, as an
    (n_pairs, 2) int64 array in lexicographic order of (a, b) (double loop)."""
    qid = np.asarray(qid)
    y = np.asarray(y, dtype=np.float64)
    out = [(a, b) for a in range(len(y)) for b in range(len(y))
           if qid[a] == qid[b] and y[a] != y[b]]
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def objective(X, y, lam, w, loss="hinge", epsilon=0.0, sample_weight=None, pairs=None, b=0.0):
    """lam/2 ||w||^2 + (1/m) sum_i c_i loss_i (no bias in the regulariser;
    b is added to every decision value).  With ``pairs`` ((P, 2) array, the
    rank loss), the mean is over the pairs, with label sign(y_a - y_b)."""
    X = to_dense(X)
    w = np.asarray(w, dtype=np.float64)
    f = X[:, :w.shape[0]] @ w + b
    if pairs is not None:
        P = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        z = f[P[:, 0]] - f[P[:, 1]]
        losses = loss_values("rank", z, np.sign(y[P[:, 0]] - y[P[:, 1]]))
    else:
        losses = loss_values(loss, f, y, epsilon)
        if sample_weight is not None:
            losses = losses * np.asarray(sample_weight, dtype=np.float64)
    return 0.5 * lam * float(w @ w) + float(losses.mean())


def step_rule(schedule, lam, t, t0=0.0, eta=None):
    """(eta_t, shrink factor) of iteration t for a step rule, as written in
    the paper and its Sec. 7.6:

    * "pegasos": eta_t = 1/(lam (t + t0)), shrink 1 - 1/(t + t0) (Eq. (5));
    * "norma": eta_t = p/(lam sqrt(t)) with p = ``eta`` (Kivinen et al.);
    * "constant": eta_t = ``eta`` (Zhang 2004);

    for the last two the shrink is 1 - eta_t lam, taken as 0 when that is
    negative (the step then sets w_t+1 to the new gradient term alone).
    """
    if schedule == "pegasos":
        return 1.0 / (lam * (t + t0)), 1.0 - 1.0 / (t + t0)
    step = eta / (lam * math.sqrt(t)) if schedule == "norma" else eta
    return step, max(0.0, 1.0 - step * lam)


def norma_p(T):
    """Norma's p = 0.5 (2 + 0.5 T^(-1/2))^(1/2) (paper Sec. 7.6, notes Sec. 4.8)."""
    return 0.5 * (2.0 + 0.5 * T ** -0.5) ** 0.5


def pegasos_general_outputs(X, y, lam, batches, loss="hinge", epsilon=0.0, sample_weight=None, pairs=False,
                            projection=False, radius2=None, bias="none", average_starts=(), t0=0.0,
                            schedule="pegasos", eta=None):
    """Pegasos with another loss (paper Sec. 5), dense; same conventions and
    outputs as :func:`pegasos_outputs` (no ``record``).

    For t = 1..T, eta_t = 1/(lam t), w_1 = 0, b_1 = 0:

        z_i     = <w_t, x_i> + b_t      (pairs: z = <w_t, x_a> - <w_t, x_b>, label sign(y_a - y_b))
        g_i     = c_i * (-dloss/dz)(z_i)  (c_i = sample_weight[i], 1 for pairs)
        w_t+1   = (1 - 1/t) w_t + eta_t/|A_t| sum_{i in A_t} g_i x_i      (x_a - x_b for a pair)
        b_t+1   = b_t + eta_t/|A_t| sum g_i                                 (bias="unregularized")
        w_t+1  <- min(1, sqrt(radius2) / ||w_t+1||) w_t+1                   (projection; radius2 = 1/lam
                                                                             by default)

    ``batches``: index arrays A_t, or with ``pairs`` arrays of shape (k, 2)
    (or flat a0, b0, a1, b1, ...) of example pairs.
    """
    X = to_dense(X)
    y = np.asarray(y, dtype=np.float64)
    m, n = X.shape
    if pairs:
        assert bias == "none", "a bias cancels in a pair difference"
    if bias == "feature":
        X = np.hstack([X, np.ones((m, 1))])
    c = np.ones(m) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    radius = math.sqrt(1.0 / lam if radius2 is None else radius2)
    T = len(batches)
    averages = _Averages(average_starts, T, X.shape[1])
    w = np.zeros(X.shape[1])
    b = 0.0
    for t in range(1, T + 1):
        if pairs:
            P = np.asarray(batches[t - 1], dtype=np.int64).reshape(-1, 2)
            a_, b_ = P[:, 0], P[:, 1]
            assert np.all(y[a_] != y[b_]), "a pair needs two different labels"
            z = X[a_] @ w - X[b_] @ w
            labels = np.where(y[a_] > y[b_], 1.0, -1.0)
            rows = X[a_] - X[b_]
            g = minus_loss_derivative("rank", z, labels)
            size = P.shape[0]
        else:
            A = np.asarray(batches[t - 1], dtype=np.int64)
            z = X[A] @ w + b
            rows = X[A]
            g = c[A] * minus_loss_derivative(loss, z, y[A], epsilon)
            size = A.size
        averages.add(t, w, b)
        eta_t, shrink = step_rule(schedule, lam, t, t0, eta)
        v = (g[:, None] * rows).sum(axis=0) / size
        w = shrink * w + eta_t * v
        if bias == "unregularized":
            b = b + eta_t * g.sum() / size
        if projection:
            norm = math.sqrt(float(w @ w))
            if norm > radius:
                w = (radius / norm) * w

    return averages.outputs(w, b, bias)


def _split(wb, bias):
    """(w, b) with the constant feature's weight moved into b for bias="feature"."""
    wv, bv = wb
    if bias == "feature":
        return wv[:-1].copy(), float(wv[-1])
    return wv, float(bv)


class _Averages:
    """Running sums of the iterates for each averaging start s (1 <= s <= T)."""

    def __init__(self, average_starts, T, dim):
        self.T = T
        self.starts = sorted(set(int(s) for s in average_starts))
        for s in self.starts:
            assert 1 <= s <= T, s
        self.sums = {s: [np.zeros(dim), 0.0] for s in self.starts}

    def add(self, t, w, b):
        """The iterate w_t enters every average that has started (t >= s)."""
        for s in self.starts:
            if t >= s:
                self.sums[s][0] += w
                self.sums[s][1] += b

    def outputs(self, w, b, bias):
        """{"last": (w, b)} plus, for each averaging start s, the mean of w_s..w_T."""
        out = {"last": _split((w, b), bias)}
        for s in self.starts:
            count = self.T - s + 1
            out[s] = _split((self.sums[s][0] / count, self.sums[s][1] / count), bias)
        return out


def rel_err(w, b, w_ref, b_ref):
    """max |delta| / max |reference|, bias included as one more coordinate."""
    got = np.r_[np.asarray(w, dtype=np.float64), b]
    want = np.r_[np.asarray(w_ref, dtype=np.float64), b_ref]
    assert got.shape == want.shape
    scale = np.abs(want).max()
    assert scale > 0, "reference is identically zero; the comparison would be vacuous"
    return float(np.abs(got - want).max() / scale)
