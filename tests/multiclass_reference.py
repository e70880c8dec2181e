"""Dense, deliberately plain NumPy reference of cost-sensitive multiclass
(Crammer-Singer) Pegasos, paper Sec. 5, Eq. (20), and of the multiclass
objective, for tests/test_multiclass.py.

Nothing here is shared with the solver: no ``W = a*V`` scaling, no lazy
averaging, no CSR arithmetic.  The weight matrix is a dense (K, d) array.

Conventions:

* ``X`` dense float64 (m, n); ``yc`` class indices 0..K-1 (int); ``cost`` a
  (K, K) array with cost[y, r] = delta(r, y) (row = true class), zero diagonal.
* Iterations t = 1..T, iterates W_1 = 0, ..., W_{T+1}; iteration t turns W_t
  into W_{t+1} using the batch A_t (a list of index arrays, ``batches``).
* ``bias="feature"`` appends a constant feature 1 to every row; the last
  column of W is then the class biases (regularised like W).
"""

import math

import numpy as np


def to_dense(X):
    if hasattr(X, "toarray"):
        X = X.toarray()
    return np.array(X, dtype=np.float64)


def batches_from_blocks(blocks, k):
    """Cut the (order, n_iter) pairs of ``pegasos.sampling.Orders.blocks`` into
    batches the way the solver's docstring says: iteration j of a block uses
    order[j*k : min((j+1)*k, len(order))] (a short last batch of an epoch)."""
    out = []
    for order, n in blocks:
        order = np.asarray(order, dtype=np.int64)
        for j in range(n):
            A = order[j * k:min((j + 1) * k, order.shape[0])]
            assert A.size >= 1
            out.append(A.copy())
    return out


def most_violating(scores, y, cost_row):
    """r^ for one example: argmax_r delta(r, y) + z_r - z_y with delta(y, y) = 0.

    Tie rule (the solver's): the true class y is the starting candidate with
    value 0 and a class q != y replaces the current best only if its value is
    strictly larger, scanning q = 0, 1, ..., K-1.  So y wins whenever the max
    is <= 0 (no update), and among classes q != y sharing the largest positive
    value the lowest index wins.
    """
    return _most_violating(scores, y, cost_row)[0]


def _most_violating(scores, y, cost_row, tol=1e-9):
    """(r^, exact tie?, near tie?): a near tie is a runner-up (y counts with
    value 0) within tol * (1 + |best|) of the best value without being equal,
    a case where rounding, not the rule, picks the winner."""
    best, best_r = 0.0, y
    vals = [0.0 if q == y else cost_row[q] + scores[q] - scores[y] for q in range(scores.shape[0])]
    for q, val in enumerate(vals):
        if q != y and val > best:
            best, best_r = val, q
    others = [v for q, v in enumerate(vals) if q != best_r]
    runner = max(others) if others else -math.inf
    exact = runner == best
    near = (not exact) and best - runner <= tol * (1.0 + abs(best))
    return best_r, exact, near


def crammer_singer(X, yc, K, lam, batches, *, cost=None, weights=None, projection=False, avg_start=0,
                   bias="none"):
    """Run cost-sensitive multiclass Pegasos; returns (W, biases, stats) with
    stats = {"projections", "exact_ties", "near_ties"} counted over all steps.

    Iteration t on batch A_t:
      scores z_r = <W_r, x_i> (+ b_r) at W_t for every member i of A_t;
      r^ = most_violating(...); if r^ != y_i: G_y += weight_i x_i, G_r^ -= weight_i x_i;
      W_{t+1} = (1 - 1/t) W_t + (1/(lam t)) / |A_t| * G;
      optional projection of the whole matrix onto ||W||_F^2 <= 2 f(0) / lam with
      f(0) = mean_i weight_i max_r delta(r, y_i).
    Output: W_{T+1} (avg_start = 0) or the mean of W_t for t = avg_start..T.
    """
    X = to_dense(X)
    m = X.shape[0]
    if bias == "feature":
        X = np.hstack([X, np.ones((m, 1))])
    yc = np.asarray(yc, dtype=np.int64)
    cost = (1.0 - np.eye(K)) if cost is None else np.asarray(cost, dtype=np.float64).reshape(K, K)
    wts = np.ones(m) if weights is None else np.asarray(weights, dtype=np.float64)
    f0 = float(np.mean(wts * cost.max(axis=1)[yc]))
    radius2 = max(2.0 * f0 / lam, 1e-300)
    W = np.zeros((K, X.shape[1]))
    total = np.zeros_like(W)
    count = 0
    stats = {"projections": 0, "exact_ties": 0, "near_ties": 0}
    for t, A in enumerate(batches, start=1):
        Z = X[A] @ W.T                            # scores at W_t, (|A|, K)
        G = np.zeros_like(W)
        for j, i in enumerate(A):
            y = yc[i]
            r, exact, near = _most_violating(Z[j], y, cost[y])
            stats["exact_ties"] += exact
            stats["near_ties"] += near
            if r != y:
                G[y] += wts[i] * X[i]
                G[r] -= wts[i] * X[i]
        if avg_start and t >= avg_start:
            total += W
            count += 1
        eta = 1.0 / (lam * t)
        W = (1.0 - 1.0 / t) * W + (eta / len(A)) * G
        if projection:
            sq = float(np.sum(W * W))
            if sq > radius2:
                W = W * math.sqrt(radius2 / sq)
                stats["projections"] += 1
    out = total / count if avg_start else W
    if bias == "feature":
        return out[:, :-1], out[:, -1].copy(), stats
    return out, np.zeros(K), stats


def cs_objective(X, yc, W, biases, lam, cost=None, weights=None, bias_regularized=False):
    """lam/2 ||W||_F^2 + (1/m) sum_i weight_i max_r [delta(r, y_i) + z_r - z_{y_i}]."""
    X = to_dense(X)
    K = W.shape[0]
    cost = (1.0 - np.eye(K)) if cost is None else np.asarray(cost).reshape(K, K)
    Z = X @ W.T + biases
    m = X.shape[0]
    zy = Z[np.arange(m), yc]
    loss = np.max(cost[yc] + Z - zy[:, None], axis=1)
    wts = np.ones(m) if weights is None else weights
    sq = float(np.sum(W ** 2)) + (float(np.sum(biases ** 2)) if bias_regularized else 0.0)
    return 0.5 * lam * sq + float(np.mean(wts * loss))


def binary_objective(X, y_pm, w, lam, b=0.0):
    """lam/2 ||w||^2 + mean hinge, paper Eq. (1)."""
    f = np.asarray(X @ w).ravel() + b
    return 0.5 * lam * float(w @ w) + float(np.mean(np.maximum(0.0, 1.0 - y_pm * f)))
