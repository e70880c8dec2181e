"""Linear Pegasos: the Python API over the compiled solver loop.

Implements Fig. 1 (k = 1) and Fig. 2 (mini-batch k) of Shalev-Shwartz,
Singer, Srebro and Cotter, "Pegasos: Primal Estimated sub-GrAdient SOlver for
SVM", Math. Programming B 127(1), 2011, for the problem (Eq. (1))::

    min_w  lambda/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i <w, x_i>)

with step eta_t = 1/(lambda t), the optional projection of Eq. (6) onto the
ball of radius 1/sqrt(lambda), and as output the last iterate w_{T+1} (as in
the paper's experiments, Sec. 7), the mean of w_1..w_T (Theorem 1), or the
mean of a suffix w_{t0}..w_T.  The bias options are those of Sec. 6.
"""

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from .errors import ParameterError

from .defaults import BIAS_MODES, DEFAULT_EPOCHS, DEFAULT_LAMBDA, DEFAULT_SEED, SAMPLINGS

_BIAS_CODE = {"none": 0, "feature": 1, "unregularized": 2}
_BLOCK_SAMPLES = 1 << 20      # example indices drawn per block in uniform sampling


def _fmt_label(value, text=None):
    if text:
        return text
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass
class BinaryLabels:
    """Mapping of the two label values of a file onto -1/+1.

    The larger value becomes +1 (so -1/+1, 0/1 and 1/2 files all keep the
    usual orientation).  ``negative_text`` / ``positive_text`` keep the
    spelling used in the training file for output.
    """

    negative: float
    positive: float
    negative_text: str = ""
    positive_text: str = ""

    def __post_init__(self):
        self.negative_text = _fmt_label(self.negative, self.negative_text)
        self.positive_text = _fmt_label(self.positive, self.positive_text)

    @classmethod
    def from_data(cls, data, allow_one_class=False):
        """Build the mapping from an :class:`pegasos.io.SVMLightData`.

        With ``allow_one_class``, a file whose labels are all -1, all 0 or all
        +1 is accepted; the missing class is the other member of the usual
        pair (-1/+1, or 0/1 for 0).

        Raises
        ------
        DataError
            No examples, a single class, or more than two classes (the message
            names the line where each class first appears).
        """
        from .errors import DataError

        labels = data.distinct_labels
        if data.n_examples == 0:
            raise DataError(data.path, "no training examples found (the file is empty or holds only "
                                       "comments and blank lines)")
        if len(labels) == 1 and allow_one_class and labels[0].value in (-1.0, 0.0, 1.0):
            only = labels[0]
            if only.value == -1.0:
                return cls(-1.0, 1.0, only.text, "+1")
            if only.value == 0.0:
                return cls(0.0, 1.0, only.text, "1")
            return cls(-1.0, 1.0, "-1", only.text)
        if len(labels) == 1:
            hint = ("; --allow-one-class accepts only -1, 0 or +1" if allow_one_class
                    else " (--allow-one-class to train anyway)")
            raise DataError(data.path, f"the data contain only one class ({labels[0].text}); "
                                       f"binary training needs examples of two classes{hint}")
        if len(labels) > 2:
            third = labels[2]
            seen = " and ".join(f"{l.text!r} on line {l.line}" for l in labels[:2])
            hint = (" (SVMlight's label 0 marks unlabelled examples for transduction, "
                    "which pegasos does not support)") if third.value == 0 else ""
            raise DataError(data.path, f"label {third.text!r} is a third class, after {seen}; "
                                       f"binary training needs exactly two classes{hint}",
                            line=third.line)
        a, b = sorted(labels, key=lambda l: l.value)
        return cls(a.value, b.value, a.text, b.text)

    @classmethod
    def from_values(cls, y):
        """Build the mapping from an array of labels (API use)."""
        values = np.unique(np.asarray(y, dtype=np.float64))
        if values.size != 2:
            raise ParameterError(f"binary training needs exactly two label values, got {values.size}: "
                                 f"{values[:5].tolist()}")
        return cls(float(values[0]), float(values[1]))

    def encode(self, y):
        """Map label values to -1.0/+1.0 (float64 array).

        Raises
        ------
        ParameterError
            A value that is neither of the two labels.
        """
        y = np.asarray(y, dtype=np.float64)
        out = np.where(y == self.positive, 1.0, -1.0)
        bad = (y != self.positive) & (y != self.negative)
        if bad.any():
            i = int(np.argmax(bad))
            raise ParameterError(f"label {_fmt_label(y[i])} (example {i + 1}) is not one of the "
                                 f"model's labels ({self.negative_text}, {self.positive_text})")
        return out

    def decode(self, positive_mask):
        """Label texts for a boolean array of positive predictions."""
        return np.where(positive_mask, self.positive_text, self.negative_text)


@dataclass
class LinearModel:
    """A trained linear SVM: decision value f(x) = <w, x> + bias.

    Attributes
    ----------
    w : ndarray of shape (n_features,), float64
        Weights (zero-based columns).
    bias : float
        Offset added to every decision value (0 without a bias).
    labels : BinaryLabels
        Which label values the signs of f stand for (f > 0: positive).
    lam : float
        The lambda the model was trained with.
    bias_mode : str
        "none", "feature" (regularised constant feature 1) or "unregularized".
    info : dict
        Training settings recorded in the model file header (str -> str).
    """

    w: np.ndarray
    bias: float
    labels: BinaryLabels
    lam: float
    bias_mode: str = "none"
    info: dict = field(default_factory=dict)

    @property
    def n_features(self):
        return int(self.w.shape[0])

    def decision_function(self, X):
        """Decision values <w, x_i> + bias.

        Parameters
        ----------
        X : scipy.sparse matrix or :class:`pegasos.io.Chunk`, shape (m, d)
            Any d: columns at or beyond ``n_features`` contribute 0.

        Returns
        -------
        ndarray of shape (m,), float64
        """
        from . import _core

        indptr, indices, data = _csr_arrays(X)
        out = np.empty(indptr.shape[0] - 1, dtype=np.float64)
        _core.decision_values(indptr, indices, data, self.w, float(self.bias), out)
        return out

    def predict(self, X):
        """Predicted label values (float64): positive where the decision value is > 0."""
        f = self.decision_function(X)
        return np.where(f > 0, self.labels.positive, self.labels.negative)

    def regularizer(self):
        """lambda/2 times the squared norm of the regularised parameters
        (w, and b too when the bias is a constant feature)."""
        sq = float(np.dot(self.w, self.w))
        if self.bias_mode == "feature":
            sq += self.bias * self.bias
        return 0.5 * self.lam * sq

    def save(self, path):
        """Write the model file atomically (see :func:`pegasos.model.save_model`)."""
        from .model import save_model
        save_model(self, path)


def _csr_arrays(X):
    """(indptr int64, indices int32, data float32/64) views of a CSR matrix or Chunk."""
    from .io import Chunk

    if isinstance(X, Chunk):
        return X.indptr, X.indices, X.data
    import scipy.sparse as sp

    if not sp.issparse(X):
        X = sp.csr_matrix(np.atleast_2d(np.asarray(X, dtype=np.float64)))
    X = X.tocsr()
    if not X.has_sorted_indices:
        X = X.sorted_indices()
    data = X.data if X.data.dtype in (np.float32, np.float64) else X.data.astype(np.float64)
    return (np.ascontiguousarray(X.indptr, dtype=np.int64),
            np.ascontiguousarray(X.indices, dtype=np.int32),
            np.ascontiguousarray(data))


def iterations_for(m, k, epochs, sampling):
    """Number of iterations T for ``epochs`` passes over m examples with batch k.

    Permutation and sequential sampling cut each epoch into ceil(m/k)
    batches (the last one may be short), so T = epochs * ceil(m/k), rounded
    up; uniform sampling draws T = ceil(epochs * m / k) batches of k.
    """
    if sampling == "uniform":
        return max(1, math.ceil(epochs * m / k - 1e-9))
    return max(1, math.ceil(epochs * math.ceil(m / k) - 1e-9))


def check_parameters(m, lam, iterations, epochs, batch_size, sampling, average_from, bias, seed=None):
    """Validate training parameters; raise ParameterError with a one-line reason."""
    if isinstance(lam, bool) or not (isinstance(lam, numbers.Real) and math.isfinite(lam) and lam > 0):
        raise ParameterError(f"lambda must be a positive number, got {lam!r}")
    if iterations is not None and epochs is not None:
        raise ParameterError("give either the number of iterations T or the number of epochs, not both")
    for name, value in (("the number of iterations T", iterations), ("the batch size k", batch_size)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise ParameterError(f"{name} must be an integer, got {value!r}")
    if iterations is not None and iterations <= 0:
        raise ParameterError(f"the number of iterations T must be positive, got {iterations}")
    if epochs is not None and not (math.isfinite(epochs) and epochs > 0):
        raise ParameterError(f"the number of epochs must be a positive finite number, got {epochs}")
    if batch_size <= 0:
        raise ParameterError(f"the batch size k must be positive, got {batch_size}")
    if batch_size > m:
        raise ParameterError(f"the batch size k = {batch_size} is larger than the number of examples m = {m}")
    if sampling not in SAMPLINGS:
        raise ParameterError(f"sampling must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
    if average_from is not None and not (0.0 <= average_from < 1.0):
        raise ParameterError(f"average-from must be in [0, 1), got {average_from}")
    if bias not in BIAS_MODES:
        raise ParameterError(f"bias must be one of {', '.join(BIAS_MODES)}, got {bias!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ParameterError(f"the seed must be a non-negative integer, got {seed!r}")


class _Orders:
    """Example indices for each block of iterations (one random generator)."""

    def __init__(self, m, k, sampling, seed, order):
        self.m, self.k, self.sampling = m, k, sampling
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.explicit = None if order is None else np.ascontiguousarray(order, dtype=np.int64)
        if self.explicit is not None and self.explicit.size and (
                self.explicit.min() < 0 or self.explicit.max() >= m):
            raise ParameterError("order holds an index outside 0..m-1")
        self.pos = 0
        self.seq = np.arange(m, dtype=np.int64) if sampling == "sequential" else None

    def blocks(self, T):
        """Yield (order, n_iter) pairs covering T iterations."""
        done = 0
        m, k = self.m, self.k
        per_epoch = math.ceil(m / k)
        while done < T:
            if self.explicit is not None:
                n = min(T - done, max(1, _BLOCK_SAMPLES // k))
                if self.sampling == "uniform":
                    order = self.explicit[self.pos:self.pos + n * k]
                    need = n * k
                else:
                    n = min(T - done, per_epoch)
                    order = self.explicit[self.pos:self.pos + m]
                    need = m
                if order.shape[0] < min(need, (n - 1) * k + 1):
                    raise ParameterError("the explicit order is shorter than the run needs")
                self.pos += order.shape[0]
            elif self.sampling == "uniform":
                n = min(T - done, max(1, _BLOCK_SAMPLES // k))
                order = self.rng.integers(0, m, size=n * k, dtype=np.int64)
            elif self.sampling == "permutation":
                n = min(T - done, per_epoch)
                order = self.rng.permutation(m).astype(np.int64, copy=False)
            else:
                n = min(T - done, per_epoch)
                order = self.seq
            yield order, n
            done += n


def train(X, y, *, lam=DEFAULT_LAMBDA, iterations=None, epochs=None, batch_size=1, sampling="uniform",
          projection=False, average=False, average_from=None, bias="none", seed=DEFAULT_SEED,
          labels=None, n_features=None, order=None, progress=None):
    """Train a linear SVM with Pegasos (Fig. 1 for k = 1, Fig. 2 for k > 1).

    Parameters
    ----------
    X : scipy.sparse matrix or :class:`pegasos.io.Chunk`, shape (m, n_features)
        Training examples; float64 or float32 values.
    y : array of shape (m,)
        Labels: any two distinct values (the larger is the positive class).
    lam : float > 0
        Regularisation parameter lambda (LIBLINEAR's C = 1/(lambda m)).
    iterations : int > 0, optional
        Number of iterations T (each uses k examples).
    epochs : float > 0, optional
        Alternatively, passes over the data: T = epochs * m / k (see
        :func:`iterations_for`).  Default: 10 epochs.
    batch_size : int, 1 <= k <= m
        Mini-batch size k; the sub-gradient averages over the batch (Eq. (8)).
    sampling : {"uniform", "permutation", "sequential"}
        "uniform": i.i.d. draws with replacement (the analysed case; for k > 1
        each batch is a multiset, which the analysis also covers, Sec. 2.3);
        "permutation": a new random order every epoch (Sec. 7.5);
        "sequential": file order every epoch (no randomness).
    projection : bool
        Project onto the ball of radius 1/sqrt(lambda) after each step (Eq. (6)).
    average : bool
        Return the mean of the iterates w_1..w_T (Theorem 1) instead of w_{T+1}.
    average_from : float in [0, 1), optional
        Return the mean of w_t for t >= ceil(average_from * T) (suffix averaging).
    bias : {"none", "feature", "unregularized"}
        "none" (the paper's experiments); "feature": a constant feature 1
        whose weight is the bias, regularised like w (LIBLINEAR -B 1);
        "unregularized": b updated with the same step by its sub-gradient
        (Sec. 6; no convergence guarantee).
    seed : int
        Seed of the random generator (PCG64); the same seed gives the same model.
    labels : BinaryLabels, optional
        Label mapping; by default built from the values in y.
    n_features : int, optional
        Dimension of w; by default the number of columns of X.
    order : array of int, optional
        Explicit sequence of example indices to visit instead of drawing them
        (batches are consecutive slices; for permutation/sequential sampling,
        each epoch takes the next m entries).
    progress : callable(int) or None
        Called with the number of iterations done after each block.

    Returns
    -------
    LinearModel

    Raises
    ------
    ParameterError
        A parameter out of range (lambda <= 0, T or k <= 0, k > m, ...).
    """
    from . import _core

    indptr, indices, data = _csr_arrays(X)
    m = indptr.shape[0] - 1
    if n_features is None:
        n_features = X.shape[1] if hasattr(X, "shape") else (int(indices.max()) + 1 if indices.size else 0)
    if np.shape(y) != (m,):
        raise ParameterError(f"y has shape {np.shape(y)}; it needs one label per example ({m})")
    if labels is None:
        labels = BinaryLabels.from_values(y)
    y_pm = labels.encode(y)
    if y_pm.shape[0] != m:
        raise ParameterError(f"y holds {y_pm.shape[0]} labels for {m} examples")
    if indices.size and int(indices.max()) >= n_features:
        raise ParameterError(f"n_features = {n_features} is less than the {int(indices.max()) + 1} columns "
                             "the data use")
    if epochs is None and iterations is None:
        epochs = DEFAULT_EPOCHS
    check_parameters(m, lam, iterations, epochs, batch_size, sampling, average_from, bias, seed)
    k = int(batch_size)
    T = int(iterations) if iterations is not None else iterations_for(m, k, epochs, sampling)
    if average and average_from is None:
        average_from = 0.0
    avg_start = 0 if average_from is None else max(1, math.ceil(average_from * T))
    state = _core.LinearState(n_features, float(lam), bool(projection), avg_start, _BIAS_CODE[bias])
    done = 0
    for block, n in _Orders(m, k, sampling, seed, order).blocks(T):
        state.run(indptr, indices, data, y_pm, block, n, k)
        done += n
        if progress is not None:
            progress(n)
    if avg_start:
        w, b, _ = state.average()
    else:
        w, b = state.weights()
    if bias == "feature":
        w, b = w[:-1].copy(), float(w[-1])
    if not np.all(np.isfinite(w)) or not math.isfinite(b):
        raise ParameterError("training diverged to non-finite weights (check the scale of the data)")
    info = {
        "lambda": repr(float(lam)),
        "iterations": str(T),
        "batch_size": str(k),
        "sampling": sampling,
        "projection": "on" if projection else "off",
        "averaging": "last" if not avg_start else ("all" if avg_start == 1 else "suffix"),
        "average_from": repr(float(average_from)) if avg_start else "-",
        "averaged_iterates": f"{avg_start}..{T}" if avg_start else "-",
        "seed": str(seed),
        "train_examples": str(m),
    }
    return LinearModel(w=np.ascontiguousarray(w, dtype=np.float64), bias=float(b), labels=labels,
                       lam=float(lam), bias_mode=bias, info=info)
