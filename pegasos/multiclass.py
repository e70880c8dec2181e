"""Multiclass linear SVMs: one-vs-rest and Crammer-Singer (paper Sec. 5).

* One-vs-rest (``method="ovr"``): one binary Pegasos problem per class
  (class c against the others), each with its own random stream derived from
  the seed, run in parallel threads (the solver loop releases the GIL); the
  result does not depend on the number of threads.
* Crammer-Singer (``method="crammer-singer"``): one weight vector per class
  and the multiclass hinge loss of Eq. (20),

      l(W; (x, y)) = max_r [ delta(r, y) + <W_r, x> - <W_y, x> ],   delta(y, y) = 0,

  whose sub-gradient step adds eta_t x to row y and subtracts it from the
  most violating row; delta is 1[r != y] or a cost matrix.

The predicted class is the one with the largest decision value (the first in
label order on ties).
"""

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .errors import DataError, ExampleError, ParameterError
from .linear import (
    _BIAS_CODE, _csr_arrays, _fit, _fmt_label, _info, _Orders, _sample_weights, averaging_start, check_parameters,
    iterations_for, projection_radius2, _objective_at_zero, _format_class_weights,
)
from .defaults import DEFAULT_EPOCHS, DEFAULT_LAMBDA, DEFAULT_SEED

METHODS = ("ovr", "crammer-singer")


@dataclass
class MulticlassModel:
    """K linear decision functions f_c(x) = <W_c, x> + b_c.

    Attributes
    ----------
    W : ndarray of shape (K, n_features), float64
    biases : ndarray of shape (K,), float64
    classes : ndarray of shape (K,), float64
        The label values, increasing.
    class_texts : list of str
        The labels as written in the training file.
    method : "ovr" or "crammer-singer"
    loss : str
        The binary loss of each one-vs-rest problem, or "hinge" for Crammer-Singer.
    """

    W: np.ndarray
    biases: np.ndarray
    classes: np.ndarray
    class_texts: list
    lam: float
    method: str = "ovr"
    loss: str = "hinge"
    bias_mode: str = "none"
    info: dict = field(default_factory=dict)
    cost: np.ndarray = None

    task = "multiclass"
    labels = None
    epsilon = None

    @property
    def n_features(self):
        return int(self.W.shape[1])

    @property
    def n_classes(self):
        return int(self.W.shape[0])

    def decision_function(self, X):
        """Decision values, shape (m, K), float64; column c is <W_c, x> + b_c.

        Columns of X at or beyond ``n_features`` contribute 0.
        """
        from . import _core

        indptr, indices, data = _csr_arrays(X)
        m = indptr.shape[0] - 1
        out = np.empty((self.n_classes, m), dtype=np.float64)
        for c in range(self.n_classes):
            _core.decision_values(indptr, indices, data, self.W[c], float(self.biases[c]), out[c])
        return out.T

    def predict_index(self, X):
        """Index (0..K-1) of the predicted class of each row, int64 (m,)."""
        return np.argmax(self.decision_function(X), axis=1)

    def predict(self, X):
        """Predicted label values, float64 (m,)."""
        return self.classes[self.predict_index(X)]

    def class_index(self, y, path=None):
        """Map label values to class indices (int32).

        Raises
        ------
        ParameterError
            A label the model does not know.
        """
        y = np.asarray(y, dtype=np.float64)
        idx = np.searchsorted(self.classes, y)
        idx = np.minimum(idx, self.n_classes - 1)
        bad = self.classes[idx] != y
        if bad.any():
            i = int(np.argmax(bad))
            detail = f"label {_fmt_label(y[i])} is not one of the model's {self.n_classes} classes"
            raise ExampleError(f"example {i + 1}: {detail}", i, detail)
        return idx.astype(np.int32)

    def regularizer(self):
        """lambda/2 ||W||_F^2 (biases included when they are a regularised feature)."""
        sq = float(np.sum(self.W * self.W))
        if self.bias_mode == "feature":
            sq += float(np.sum(self.biases ** 2))
        return 0.5 * self.lam * sq

    def save(self, path):
        from .model import save_model
        save_model(self, path)


def read_cost_matrix(path, n_classes):
    """Read a K x K cost matrix: line y (true class, in increasing label
    order) holds K numbers, delta(r, y) for r = 1..K; zero diagonal, costs >= 0.

    Returns
    -------
    ndarray of shape (K * K,), float64, row-major as [y * K + r]

    Raises
    ------
    DataError
        Wrong shape, a non-number, a negative cost or a non-zero diagonal.
    """
    try:
        with open(path) as f:
            lines = [ln.split("#", 1)[0].split() for ln in f]
    except OSError as e:
        raise DataError(path, f"cannot read the cost matrix: {e.strerror or e}") from None
    rows = [(i + 1, ln) for i, ln in enumerate(lines) if ln]
    if len(rows) != n_classes:
        raise DataError(path, f"the cost matrix has {len(rows)} rows; the data have {n_classes} classes")
    cost = np.zeros((n_classes, n_classes))
    for r, (line, tokens) in enumerate(rows):
        if len(tokens) != n_classes:
            raise DataError(path, f"{len(tokens)} costs on the line, expected {n_classes}", line)
        for c, tok in enumerate(tokens):
            try:
                v = float(tok)
            except ValueError:
                raise DataError(path, f"cost {tok!r} is not a number", line) from None
            if not (math.isfinite(v) and v >= 0):
                raise DataError(path, f"cost {tok!r} must be finite and >= 0", line)
            if r == c and v != 0:
                raise DataError(path, f"the cost of the true class must be 0, not {tok}", line)
            cost[r, c] = v
    return cost.ravel()


def train_multiclass(X, y, *, method="ovr", loss="hinge", lam=DEFAULT_LAMBDA, iterations=None, epochs=None,
                     batch_size=1, sampling="uniform", projection=False, average=False, average_from=None,
                     bias="none", seed=DEFAULT_SEED, n_features=None, class_weight=None, cost=None,
                     class_texts=None, n_jobs=2, progress=None, step_offset=0.0):
    """Train a multiclass linear SVM with Pegasos.

    Parameters
    ----------
    X : scipy.sparse matrix or pegasos.io.Chunk, shape (m, n_features)
    y : array of shape (m,), label values (two or more distinct)
    method : {"ovr", "crammer-singer"}
    loss : {"hinge", "log", "squared-hinge"}
        Loss of each one-vs-rest problem (Crammer-Singer uses its own hinge).
    cost : ndarray of shape (K * K,) or None
        Crammer-Singer costs delta(r, y) at [y * K + r] (see read_cost_matrix);
        default 1[r != y].
    n_jobs : int >= 1
        Threads for one-vs-rest (the classes are independent).
    Other parameters (step_offset included) are those of :func:`pegasos.linear.train`; T counts the
    iterations of each one-vs-rest problem, or of the Crammer-Singer run.

    Returns
    -------
    MulticlassModel

    Raises
    ------
    ParameterError
        Fewer than two classes, an unknown method, or a parameter out of range.
    """
    if method not in METHODS:
        raise ParameterError(f"multiclass must be one of {', '.join(METHODS)}, got {method!r}")
    indptr, indices, data = _csr_arrays(X, n_features)
    m = indptr.shape[0] - 1
    if n_features is None:
        n_features = X.shape[1] if hasattr(X, "shape") else (int(indices.max()) + 1 if indices.size else 0)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (m,):
        raise ParameterError(f"y has shape {y.shape}; it needs one label per example ({m})")
    classes = np.unique(y)
    K = classes.size
    if K < 2:
        raise ParameterError(f"multiclass training needs at least two classes, got {K}")
    if method == "crammer-singer" and loss != "hinge":
        raise ParameterError("Crammer-Singer uses its own multiclass hinge loss: leave the loss at hinge")
    if loss not in ("hinge", "log", "squared-hinge"):
        raise ParameterError(f"one-vs-rest needs a classification loss (hinge, log, squared-hinge), not {loss}")
    if method == "crammer-singer" and bias == "unregularized":
        raise ParameterError("Crammer-Singer supports --bias none or feature")
    if cost is not None and method != "crammer-singer":
        raise ParameterError("a cost matrix applies to Crammer-Singer only")
    if epochs is None and iterations is None:
        epochs = DEFAULT_EPOCHS
    check_parameters(m, lam, iterations, epochs, batch_size, sampling, average_from, bias, seed)
    if not (isinstance(n_jobs, int) and n_jobs >= 1):
        raise ParameterError(f"n_jobs must be a positive integer, got {n_jobs}")
    k = int(batch_size)
    T = int(iterations) if iterations is not None else iterations_for(m, k, epochs, sampling)
    if loss == "squared-hinge":
        projection = True      # as in pegasos.linear.train: bounds the gradient
    average_from, avg_start = averaging_start(average, average_from, T)
    sample_weight = _sample_weights(y, class_weight)
    yc = np.searchsorted(classes, y).astype(np.int32)
    if not (math.isfinite(step_offset) and step_offset >= 0):
        raise ParameterError(f"the step offset t0 must be >= 0, got {step_offset!r}")
    common = dict(lam=lam, T=T, k=k, projection=projection, avg_start=avg_start, bias=bias, progress=progress,
                  t0=step_offset)

    if method == "ovr":
        seeds = np.random.SeedSequence(seed).spawn(K)

        def one(c):
            y_pm = np.where(yc == c, 1.0, -1.0)
            f0 = _objective_at_zero(loss, y_pm, 0.0, sample_weight)
            return _fit(indptr, indices, data, y_pm, n_features, orders=_Orders(m, k, sampling, seeds[c], None),
                        loss=loss, radius2=projection_radius2(loss, lam, f0, sample_weight),
                        sample_weight=sample_weight, **common)

        if n_jobs == 1:
            fits = [one(c) for c in range(K)]
        else:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                fits = list(pool.map(one, range(K)))
        W = np.vstack([w for w, _ in fits])
        biases = np.array([b for _, b in fits])
        cost_used = None
    else:
        from . import _core
        from .linear import check_weight_memory

        check_weight_memory(n_features * K, 2 if avg_start else 1)
        cost_used = (1.0 - np.eye(K)).ravel() if cost is None else np.ascontiguousarray(cost, dtype=np.float64)
        if cost_used.shape != (K * K,):
            raise ParameterError(f"the cost matrix must be {K} x {K}")
        worst = cost_used.reshape(K, K).max(axis=1)[yc]
        f0 = float(np.mean(worst if sample_weight is None else worst * sample_weight))
        state = _core.LinearState(n_features, float(lam), bool(projection), avg_start, _BIAS_CODE[bias], 0, 0.0,
                                  max(2.0 * f0 / lam, 1e-300), False, K, float(step_offset))
        for block, n in _Orders(m, k, sampling, seed, None).blocks(T):
            state.run_multiclass(indptr, indices, data, yc, cost_used, block, n, k, sample_weight)
            if progress is not None:
                progress(n)
        flat = state.average()[0] if avg_start else state.weights()[0]
        M = flat.reshape(K, state.dim)
        if bias == "feature":
            W, biases = np.ascontiguousarray(M[:, :-1]), M[:, -1].copy()
        else:
            W, biases = np.ascontiguousarray(M), np.zeros(K)
        if not np.all(np.isfinite(M)):
            raise ParameterError("training diverged to non-finite weights (check the scale of the data and lambda)")
    info = _info(lam, T, k, sampling, projection, avg_start, average_from, seed, m)
    if step_offset:
        info["step_offset"] = repr(float(step_offset))
    if class_weight:
        info["class_weights"] = _format_class_weights(class_weight)
    if class_texts is None:
        class_texts = [_fmt_label(v) for v in classes]
    return MulticlassModel(W=np.ascontiguousarray(W, dtype=np.float64), biases=biases.astype(np.float64),
                           classes=classes, class_texts=list(class_texts), lam=float(lam), method=method,
                           loss=loss, bias_mode=bias, info=info, cost=cost)
