"""Dense, deliberately plain NumPy reference of kernelized Pegasos (Fig. 3).

Nothing is shared with :mod:`pegasos.kernel` or ``csrc/_kernel.pyx``: the
Gram matrix is dense, and w is kept as a coefficient vector c over all m
examples (w = sum_j c_j phi(x_j)) updated by Fig. 2 written in feature space,
not as counts alpha with a scale.  The two forms agree because, without
projection, c_j = y_j alpha_j / (lambda t k) after t iterations (paper notes
Sec. 1.7; alpha_j counts the violations of example j).

For t = 1..T, batch A_t (a list of indices, repeats allowed):

    margins   y_i <w_t, phi(x_i)> = y_i (K c)_i            for i in A_t (all at w_t)
    A_t+      = { i in A_t : margin < 1 }                   (strict)
    c        <- (1 - 1/t) c + 1/(lambda t |A_t|) sum_{i in A_t+} y_i e_i
    c        <- min(1, (1/sqrt(lambda)) / sqrt(c K c)) c    (if projecting)

Budget (not in the paper): afterwards, while more than B examples have
c_j != 0, set to 0 the c_j with the smallest c_j^2 K_jj (the one whose removal
changes w least); ties go to the example that became a support vector first.
"""

import numpy as np


def gram(A, B, kernel, gamma=1.0, coef0=0.0, degree=3):
    """Dense kernel matrix K[i, j] = K(A_i, B_j) for dense float64 A, B."""
    dot = A @ B.T
    if kernel == "linear":
        return dot
    if kernel == "poly":
        return (gamma * dot + coef0) ** degree
    if kernel == "sigmoid":
        return np.tanh(gamma * dot + coef0)
    if kernel == "rbf":
        d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * dot
        return np.exp(-gamma * np.maximum(d, 0.0))
    raise ValueError(kernel)


def kernel_pegasos(K, y, lam, batches, projection=False, average_start=None, budget=None,
                   record_support=False):
    """Fig. 3 / Fig. 2 in feature space on a dense Gram matrix.

    Returns a dict with ``"last"`` (c after T iterations), ``"average"`` (mean
    of c_t for t >= average_start, when given; c_1 = 0 counts), and with
    ``record_support`` the support-set size before each iteration.
    """
    m = K.shape[0]
    c = np.zeros(m)
    joined = np.full(m, np.inf)         # when each current support vector joined
    avg = np.zeros(m)
    n_avg = 0
    sizes = []
    for t, A in enumerate(batches, start=1):
        A = np.asarray(A)
        sizes.append(int(np.count_nonzero(c)))
        margins = y[A] * (K[A] @ c)
        viol = A[margins < 1.0]
        if average_start is not None and t >= average_start:
            avg += c
            n_avg += 1
        c = (1.0 - 1.0 / t) * c
        for i in viol:
            if c[i] == 0.0:
                joined[i] = t
            c[i] += y[i] / (lam * t * len(A))
        if projection:
            sq = float(c @ K @ c)
            if sq > 1.0 / lam:
                c *= np.sqrt((1.0 / lam) / sq)
        if budget is not None:
            while np.count_nonzero(c) > budget:
                live = np.flatnonzero(c)
                score = c[live] ** 2 * np.diag(K)[live]
                best = live[score <= score.min() * (1.0 + 1e-9)]     # equal counts: ties
                drop = best[np.argmin(joined[best])]
                c[drop] = 0.0
                joined[drop] = np.inf
        joined[c == 0.0] = np.inf
    out = {"last": c}
    if average_start is not None:
        out["average"] = avg / n_avg
    if record_support:
        out["support_sizes"] = sizes
    return out
