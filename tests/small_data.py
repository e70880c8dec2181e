"""Small generated data sets (binary, multiclass, regression, ranking) and an SVMlight writer
for the tests of cross-validation, search, guards and model descriptions."""

import numpy as np
import scipy.sparse as sp


def binary(m=400, n=20, seed=0, noise=0.05):
    """Sparse X (m, n) and labels -1/+1 from a hidden w, a fraction ``noise`` flipped."""
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=0.3, random_state=rng, format="csr")
    w = rng.normal(size=n)
    y = np.where(X @ w > 0, 1.0, -1.0)
    flip = rng.random(m) < noise
    y[flip] = -y[flip]
    return X, y


def multiclass(m=450, n=20, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=0.3, random_state=rng, format="csr")
    W = rng.normal(size=(classes, n))
    return X, np.argmax(X @ W.T, axis=1).astype(np.float64) + 1.0


def regression(m=400, n=20, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=0.3, random_state=rng, format="csr")
    return X, X @ rng.normal(size=n) + 0.05 * rng.normal(size=m)


def ranking(queries=30, per_query=8, n=15, seed=0):
    rng = np.random.default_rng(seed)
    m = queries * per_query
    X = sp.random(m, n, density=0.4, random_state=rng, format="csr")
    score = X @ rng.normal(size=n)
    qid = np.repeat(np.arange(1, queries + 1), per_query).astype(np.int64)
    y = np.zeros(m)
    for q in range(queries):
        rows = slice(q * per_query, (q + 1) * per_query)
        y[rows] = np.digitize(score[rows], np.quantile(score[rows], [0.5, 0.8]))
    return X, y, qid


def write_svm(path, X, y, qid=None, zero_based=False):
    X = sp.csr_matrix(X)
    base = 0 if zero_based else 1
    lines = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        feats = " ".join(f"{j + base}:{v!r}" for j, v in zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist()))
        q = f" qid:{int(qid[i])}" if qid is not None else ""
        lines.append(f"{y[i]:g}{q} {feats}")
    path.write_text("\n".join(lines) + "\n")
    return path
