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
import os
from dataclasses import dataclass, field

import numpy as np

from .errors import ExampleError, ParameterError

from .defaults import BIAS_MODES, DEFAULT_EPOCHS, DEFAULT_LAMBDA, DEFAULT_SEED, SAMPLINGS

_BIAS_CODE = {"none": 0, "feature": 1, "unregularized": 2}
LOSSES = ("hinge", "log", "squared-hinge", "eps-insensitive", "rank")
_LOSS_CODE = {"hinge": 0, "log": 1, "squared-hinge": 2, "eps-insensitive": 3, "rank": 0}
TASK_OF_LOSS = {"hinge": "binary", "log": "binary", "squared-hinge": "binary", "eps-insensitive": "regression",
                "rank": "ranking"}
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
                    "which pegasos does not support; --multiclass ovr treats 0 as a class)") if third.value == 0 else ""
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
            detail = (f"label {_fmt_label(y[i])} is not one of the model's labels "
                      f"({self.negative_text}, {self.positive_text})")
            raise ExampleError(f"example {i + 1}: {detail}", i, detail)
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
    labels : BinaryLabels or None
        Which label values the signs of f stand for (f > 0: positive);
        None for regression and ranking.
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
    loss: str = "hinge"
    epsilon: float = None

    @property
    def task(self):
        """"binary", "regression" or "ranking" (from the loss)."""
        return TASK_OF_LOSS[self.loss]

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
        """Predictions (float64): for classification the label values
        (positive where the decision value is > 0); for regression and
        ranking the decision values themselves."""
        f = self.decision_function(X)
        if self.labels is None:
            return f
        return np.where(f > 0, self.labels.positive, self.labels.negative)

    def predict_proba(self, X):
        """P(positive label | x) = 1 / (1 + exp(-f(x))) for a model trained
        with the log loss; shape (m,), float64.

        Raises
        ------
        ParameterError
            The model was not trained with the log loss.
        """
        if self.loss != "log":
            raise ParameterError(f"probabilities need a model trained with the log loss, not {self.loss}")
        f = self.decision_function(X)
        e = np.exp(-np.abs(f))          # 1/(1+e^-f) for f >= 0, e^f/(1+e^f) below: no cancellation
        return np.where(f >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))

    def losses(self, f, y):
        """Per-example loss of decision values f against targets y (label
        values for classification), float64 (m,)."""
        return example_losses(self.loss, f, y if self.labels is None else self.labels.encode(y), self.epsilon)

    def regularizer(self):
        """lambda/2 times the squared norm of the regularised parameters
        (w, and b too when the bias is a constant feature)."""
        sq = float(np.dot(self.w, self.w))
        if self.bias_mode == "feature":
            sq += self.bias * self.bias
        return 0.5 * self.lam * sq

    def squared_norm(self):
        """||w||^2 (the bias excluded)."""
        return float(np.dot(self.w, self.w))

    def save(self, path):
        """Write the model file atomically (see :func:`pegasos.model.save_model`)."""
        from .model import save_model
        save_model(self, path)


def example_losses(loss, f, y, epsilon=None):
    """Loss of each decision value f_i against y_i (+-1 for classification)."""
    if loss in ("hinge", "rank"):
        return np.maximum(0.0, 1.0 - y * f)
    if loss == "squared-hinge":
        return np.maximum(0.0, 1.0 - y * f) ** 2
    if loss == "log":
        return np.logaddexp(0.0, -y * f)
    return np.maximum(0.0, np.abs(f - y) - (epsilon or 0.0))


def _csr_arrays(X, n_features=None):
    """(indptr int64, indices int32, data float32/64) of a CSR matrix or Chunk,
    checked by :func:`pegasos.data.csr_arrays`."""
    from .data import csr_arrays

    return csr_arrays(X, n_features)


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

    def blocks(self, T, k=None):
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
          labels=None, n_features=None, order=None, progress=None, loss="hinge", epsilon=0.1,
          class_weight=None, qid=None, step_offset=0.0, n_threads=1):
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
    loss : {"hinge", "log", "squared-hinge", "eps-insensitive", "rank"}
        The loss whose sub-gradient the step uses (paper Sec. 5): binary
        classification with the hinge max(0, 1 - yz), logistic log(1 + e^-yz)
        or squared hinge max(0, 1 - yz)^2; regression with
        max(0, |z - y| - epsilon) on real-valued y; ranking with the hinge on
        <w, x_a - x_b> for pairs with the same qid and y_a != y_b (then
        ``qid`` is required, sampling is uniform over pairs and T counts pairs).
    epsilon : float >= 0
        Width of the insensitive zone of the eps-insensitive loss.
    class_weight : dict {label value: weight > 0} or None
        Multiplies the loss of the examples of each class (LIBLINEAR -wi,
        SVMlight -j); the objective is (1/m) sum_i weight_i loss_i.
    qid : int64 array of shape (m,) or None
        Query of each example (the rank loss).
    step_offset : float >= 0
        t0 of the step eta_t = 1/(lambda (t + t0)) and shrink 1 - 1/(t + t0);
        0 (default) is the paper's step.  An offset tempers the first, very
        large steps, as Bottou's averaged SGD does (it then sets t0 so that
        the first step is about the scale of the data).
    n_threads : int >= 1
        Threads for the mini-batch step of Fig. 2 (default 1).  For a batch
        of k >= 16 examples holding on average at least 1600 stored values
        (k times the mean row length; ``pegasos._core.PARALLEL_MIN_BATCH``
        and ``PARALLEL_MIN_VALUES``, from the break-even points measured on
        2 cores: k = 128 on a9a, k = 16 on a 50000-feature set; 1.5x and
        1.7x at k = 4096, benchmarks/RESULTS.md),
        the margins y_i <w_t, x_i> of the batch are split among the threads
        and the sub-gradient step w += eta_t/k sum y_i x_i (Eq. (8)) is added
        by feature ranges, one range per thread.  Every coordinate gets the
        same floating-point operations in the same order as with one thread,
        so the model is bit-identical for any ``n_threads``.  The iterations
        run in timed chunks on the threads or on one thread, whichever is
        faster at the time, so a machine whose cores are busy falls back to
        one thread.  Smaller batches, the rank loss (pairs) and a build
        without OpenMP run the serial loop; Crammer-Singer and one-vs-rest
        (pegasos.multiclass) always run this step serially.

    Returns
    -------
    LinearModel

    Raises
    ------
    ParameterError
        A parameter out of range (lambda <= 0, T or k <= 0, k > m,
        n_threads < 1, ...).
    """
    indptr, indices, data = _csr_arrays(X, n_features)
    m = indptr.shape[0] - 1
    if n_features is None:
        n_features = X.shape[1] if hasattr(X, "shape") else (int(indices.max()) + 1 if indices.size else 0)
    if np.shape(y) != (m,):
        raise ParameterError(f"y has shape {np.shape(y)}; it needs one label per example ({m})")
    if loss not in LOSSES:
        raise ParameterError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
    task = TASK_OF_LOSS[loss]
    y = np.asarray(y, dtype=np.float64)
    sample_weight = None
    if task == "binary":
        if labels is None:
            labels = BinaryLabels.from_values(y)
        y_run = labels.encode(y)
        sample_weight = _sample_weights(y, class_weight)
    else:
        if class_weight:
            raise ParameterError(f"class weights apply to classification, not to the {loss} loss")
        if not np.all(np.isfinite(y)):
            i = int(np.argmin(np.isfinite(y)))
            raise ExampleError(f"target {y[i]} (example {i + 1}) is not finite", i, f"target {y[i]} is not finite")
        labels = None
        y_run = y
    if indices.size and int(indices.max()) >= n_features:
        raise ParameterError(f"n_features = {n_features} is less than the {int(indices.max()) + 1} columns "
                             "the data use")
    if not (isinstance(step_offset, numbers.Real) and math.isfinite(step_offset) and step_offset >= 0):
        raise ParameterError(f"the step offset t0 must be >= 0, got {step_offset!r}")
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ParameterError(f"epsilon must be >= 0, got {epsilon}")
    if epochs is None and iterations is None:
        epochs = DEFAULT_EPOCHS
    if task == "ranking":
        if sampling != "uniform":
            raise ParameterError("ranking samples pairs i.i.d.: use --sampling uniform")
        if bias != "none":
            raise ParameterError("a bias cancels in pairwise ranking: use --bias none")
        orders = _PairOrders(qid, y, seed, order)
        check_parameters(orders.n_pairs, lam, iterations, epochs, batch_size, sampling, average_from, bias, seed)
    else:
        check_parameters(m, lam, iterations, epochs, batch_size, sampling, average_from, bias, seed)
        orders = _Orders(m, int(batch_size), sampling, seed, order)
    k = int(batch_size)
    T = int(iterations) if iterations is not None else iterations_for(m, k, epochs, sampling)
    average_from, avg_start = averaging_start(average, average_from, T)
    if loss == "squared-hinge":
        # its gradient grows with the margin violation; the projection onto a
        # ball that holds w* keeps it bounded (the condition of Sec. 5)
        projection = True
    f0 = _objective_at_zero(loss, y_run, epsilon, sample_weight)
    w, b = _fit(indptr, indices, data, y_run, n_features, lam=lam, T=T, k=k, projection=projection,
                avg_start=avg_start, bias=bias, orders=orders, progress=progress, loss=loss, epsilon=epsilon,
                radius2=projection_radius2(loss, lam, f0, sample_weight), sample_weight=sample_weight,
                t0=step_offset, n_threads=n_threads)
    info = model_info(lam, T, k, sampling, projection, avg_start, average_from, seed, m, task=task, loss=loss,
                      epsilon=epsilon, step_offset=step_offset, class_weight=class_weight, labels=labels)
    return LinearModel(w=w, bias=b, labels=labels, lam=float(lam), bias_mode=bias, info=info, loss=loss,
                       epsilon=float(epsilon) if loss == "eps-insensitive" else None)


def averaging_start(average, average_from, T):
    """(average_from, first averaged iteration) of a run of T iterations.

    ``average`` (Theorem 1's mean of w_1..w_T) is ``average_from`` = 0;
    the iterates w_t with t >= ceil(average_from * T), at least 1, are
    averaged; 0 means no averaging (the last iterate is the output).
    """
    if average and average_from is None:
        average_from = 0.0
    return average_from, 0 if average_from is None else max(1, math.ceil(average_from * T))


def _info(lam, T, k, sampling, projection, avg_start, average_from, seed, m):
    """The header entries that describe a training run (str -> str)."""
    return {
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


def _fit(indptr, indices, data, y_run, n_features, *, lam, T, k, projection, avg_start, bias, orders, progress,
         loss="hinge", epsilon=0.0, radius2=None, sample_weight=None, t0=0.0, n_threads=1):
    """Run T iterations of the solver loop on one CSR matrix; returns (w float64 (n_features,), b).

    ``n_threads`` (int >= 1): threads for the mini-batch step of large
    batches (see :func:`train`; bit-identical result for any value); the
    CSR rows must have sorted column indices, as ``_csr_arrays`` gives.
    Raises ParameterError for n_threads < 1.
    """
    blocks = ((indptr, indices, data, y_run, sample_weight, block, n) for block, n in orders.blocks(T, k))
    return solve(blocks, n_features, lam=lam, k=k, projection=projection, avg_start=avg_start, bias=bias,
                 progress=progress, loss=loss, epsilon=epsilon, radius2=radius2, t0=t0, n_threads=n_threads,
                 load_from=(indices, indptr.shape[0] - 1))


def solve(blocks, n_features, *, lam, k, projection, avg_start, bias, progress=None, loss="hinge", epsilon=0.0,
          radius2=None, t0=0.0, n_threads=1, load_from=None):
    """Drive the compiled Pegasos loop (Fig. 1/2) over a sequence of blocks.

    Parameters
    ----------
    blocks : iterable of (indptr, indices, data, y, sample_weight, order, n_iter)
        CSR arrays (int64, int32, float64/float32) with sorted column indices,
        labels y (float64, -1/+1 or targets), per-example weights (float64 or
        None), the int64 example indices to visit and the number of
        iterations to run on them (see ``_core.LinearState.run``).  The
        arrays may change from block to block (streaming); the state carries
        over, so the blocks together make one run of T iterations.
    n_features : int
        Dimension of w.
    lam, k, projection, avg_start, bias, loss, epsilon, radius2, t0 :
        As :func:`train` (``avg_start``: first averaged iteration, 0 for the
        last iterate; ``radius2``: squared radius of the projection ball).
    n_threads : int >= 1
        Threads for the mini-batch step when k >= ``_core.PARALLEL_MIN_BATCH``.
    load_from : (indices, m) or None
        Columns of the whole matrix, to share the features among threads by
        their number of stored values; None: equal ranges of features.

    Returns
    -------
    (w, b) : float64 array of shape (n_features,), float

    Raises
    ------
    ParameterError
        n_threads < 1, weights too large for memory, or divergence to
        non-finite weights.
    """
    from . import _core

    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) or n_threads < 1:
        raise ParameterError(f"the number of threads must be a positive integer, got {n_threads!r}")
    # more threads than processors only adds contention (and OpenMP fails to start
    # tens of thousands); the model is the same for any count
    n_threads = min(int(n_threads), _available_cpus())
    check_weight_memory(n_features, 2 if avg_start else 1)
    state = _core.LinearState(n_features, float(lam), bool(projection), avg_start, _BIAS_CODE[bias],
                              _LOSS_CODE[loss], float(epsilon), radius2, loss == "rank", 1, float(t0))
    load = None
    if loss != "rank" and load_from is not None and load_from[1] and _core.batch_uses_threads(
            k, load_from[0].shape[0] / load_from[1] + (bias == "feature"), n_threads):
        # stored values per feature, so that each thread's feature range gets an equal share
        indices, m = load_from
        load = _core.feature_load(indices, state.dim, m if bias == "feature" else 0)
    for indptr, indices, data, y, sample_weight, order, n in blocks:
        state.run(indptr, indices, data, y, order, n, k, sample_weight, n_threads, load)
        if progress is not None:
            progress(n)
    if avg_start:
        w, b, _ = state.average()
    else:
        w, b = state.weights()
    if bias == "feature":
        w, b = w[:-1].copy(), float(w[-1])
    if not np.all(np.isfinite(w)) or not math.isfinite(b):
        raise ParameterError("training diverged to non-finite weights (check the scale of the data and lambda)")
    return np.ascontiguousarray(w, dtype=np.float64), float(b)


def _available_cpus():
    """Processors this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def model_info(lam, T, k, sampling, projection, avg_start, average_from, seed, m, *, task="binary",
               loss="hinge", epsilon=None, step_offset=0.0, class_weight=None, labels=None):
    """The model-file header entries of a linear training run (str -> str)."""
    info = _info(lam, T, k, sampling, projection, avg_start, average_from, seed, m)
    if step_offset:
        info["step_offset"] = repr(float(step_offset))
    if task != "binary":
        info["task"] = task
    if loss == "eps-insensitive":
        info["epsilon"] = repr(float(epsilon))
    if class_weight:
        info["class_weights"] = _format_class_weights(class_weight, labels)
    return info


def check_weight_memory(n_features, vectors=1):
    """Refuse a dense weight state that cannot fit in this machine's memory
    (a stray huge feature index would otherwise get the process killed).

    Raises
    ------
    ParameterError
        The ``vectors`` float64 vectors of the solver state plus two copies
        made for the result would exceed 90% of the physical memory.
    """
    need = 8.0 * (int(n_features) + 2) * (vectors + 2)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return
    if need > 0.9 * total:
        raise ExampleError(f"n_features = {n_features} (1 + the largest feature index) needs "
                           f"{need / 2**30:.1f} GiB for the weights, more than this machine's "
                           f"{total / 2**30:.1f} GiB; check the data for a stray huge index")


def _sample_weights(y, class_weight):
    """Per-example weights (float64, shape (m,)) from {label value: weight}, or None."""
    if not class_weight:
        return None
    sw = np.ones(y.shape[0], dtype=np.float64)
    for label, weight in class_weight.items():
        if not (math.isfinite(weight) and weight > 0):
            raise ParameterError(f"the weight of class {_fmt_label(float(label))} must be positive, got {weight}")
        hit = y == float(label)
        if not hit.any():
            raise ExampleError(f"class weight given for label {_fmt_label(float(label))}, which is not in the data")
        sw[hit] = weight
    return sw


def _format_class_weights(class_weight, labels=None):
    return ",".join(f"{_fmt_label(float(k))}:{float(v)!r}" for k, v in sorted(class_weight.items()))


def _objective_at_zero(loss, y_run, epsilon, sample_weight):
    """f(0): the mean (weighted) loss of w = 0."""
    wmean = 1.0 if sample_weight is None else float(sample_weight.mean())
    if loss == "log":
        return math.log(2.0) * wmean
    if loss == "eps-insensitive":
        return float(np.maximum(0.0, np.abs(y_run) - epsilon).mean()) if y_run.size else 0.0
    return wmean


def projection_radius2(loss, lam, f0, sample_weight=None):
    """Squared radius of the projection ball.

    1/lambda for the (unweighted) hinge loss, proven by duality (paper Sec. 2.2);
    otherwise 2 f(0) / lambda, valid for any loss because
    lambda/2 ||w*||^2 <= f(w*) <= f(0).
    """
    if loss in ("hinge", "rank") and sample_weight is None:
        return 1.0 / lam
    return max(2.0 * f0 / lam, 1e-300)


class _PairOrders:
    """Pairs (a, b) with the same qid and different labels, drawn uniformly
    among all such ordered pairs (each sample is two consecutive entries)."""

    def __init__(self, qid, y, seed, order=None):
        if qid is None:
            raise ParameterError("the rank loss needs qid: tokens in the data")
        qid = np.asarray(qid, dtype=np.int64)
        if qid.shape != np.shape(y):
            raise ParameterError(f"qid has shape {qid.shape}; it needs one query id per example ({len(y)})")
        bad = np.flatnonzero(qid < 0)
        if bad.size:
            i = int(bad[0])
            detail = ("no qid: token (the rank loss needs one on every line)" if qid[i] == -1 else
                      "its qid: is not a decimal integer below 10^18 (the rank loss needs one on every line)")
            raise ExampleError(f"example {i + 1}: {detail}", i, detail)
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.explicit = None if order is None else np.ascontiguousarray(order, dtype=np.int64)
        self.pos = 0
        if self.explicit is not None:
            a, b = self.explicit[0::2], self.explicit[1::2]
            if self.explicit.size % 2 or (self.explicit.size and (self.explicit.min() < 0
                                                                  or self.explicit.max() >= qid.size)):
                raise ParameterError("the pair order needs an even number of indices in 0..m-1")
            bad = np.flatnonzero((qid[a] != qid[b]) | (y[a] == y[b]))
            if bad.size:
                raise ParameterError(f"pair {bad[0] + 1} of the order ({a[bad[0]]}, {b[bad[0]]}) is not two "
                                     "examples of one qid with different labels")
        srt = np.lexsort((y, qid))
        qs, ys = qid[srt], y[srt]
        m = srt.size
        new_q = np.r_[True, qs[1:] != qs[:-1]] if m else np.zeros(0, bool)
        new_l = new_q | np.r_[True, ys[1:] != ys[:-1]] if m else np.zeros(0, bool)
        q_id = np.cumsum(new_q) - 1
        l_id = np.cumsum(new_l) - 1
        q_first = np.flatnonzero(new_q)
        l_first = np.flatnonzero(new_l)
        q_len = np.diff(np.r_[q_first, m])
        l_len = np.diff(np.r_[l_first, m])
        self.srt = srt
        self.q_start = q_first[q_id]
        self.l_start = l_first[l_id]
        self.l_len = l_len[l_id]
        partners = q_len[q_id] - self.l_len
        self.cum = np.cumsum(partners)
        self.partners = partners
        self.n_pairs = int(self.cum[-1]) if m else 0
        if self.n_pairs == 0:
            raise ExampleError("no pair of examples with the same qid and different labels")

    def blocks(self, T, k):
        done = 0
        while done < T:
            n = min(T - done, max(1, _BLOCK_SAMPLES // k))
            if self.explicit is not None:
                block = self.explicit[self.pos:self.pos + 2 * n * k]
                if block.shape[0] < 2 * n * k:
                    raise ParameterError("the explicit order is shorter than the run needs")
                self.pos += block.shape[0]
            else:
                block = self.draw(n * k)
            yield block, n
            done += n

    def draw(self, count):
        """``count`` pairs as a flat int64 array a0, b0, a1, b1, ..."""
        r = self.rng.integers(0, self.n_pairs, size=count, dtype=np.int64)
        p = np.searchsorted(self.cum, r, side="right")
        off = r - (self.cum[p] - self.partners[p])
        before = self.l_start[p] - self.q_start[p]
        partner = np.where(off < before, self.q_start[p] + off, self.q_start[p] + off + self.l_len[p])
        out = np.empty(2 * count, dtype=np.int64)
        out[0::2] = self.srt[p]
        out[1::2] = self.srt[partner]
        return out
