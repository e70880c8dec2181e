"""Training examples as the solvers take them: CSR arrays, labels, query ids, weights.

:func:`as_examples` accepts what :func:`pegasos.fit` accepts — a tuple
``(X, y[, qid[, sample_weight]])`` of arrays, a
:class:`pegasos.io.SVMLightData` from the reader, or an :class:`Examples` —
and returns one :class:`Examples`, the single place where arrays are coerced
(:func:`pegasos.data.csr_arrays` checks the matrix) and their shapes checked.
"""

import operator
from dataclasses import dataclass, field

import numpy as np

from .defaults import MAX_WEIGHT
from .data import check_n_features, chunk_arrays, csr_arrays
from .errors import ExampleError, ParameterError, counted
from .labels import label_values


@dataclass
class Examples:
    """m training examples.

    Attributes
    ----------
    indptr : ndarray (m + 1,), int64; indices : ndarray (nnz,), int32; data : ndarray (nnz,), float64 or float32
        The rows, CSR, sorted column indices, zero-based.
    y : ndarray (m,), float64
        Label values (classification) or targets (regression, ranking) as given.
    n_features : int
        Dimension of w (at least 1 + the largest column index).
    qid : ndarray (m,), int64, or None
        Query of each example (rank loss).
    sample_weight : ndarray (m,), float64, or None
        Per-example weights of the loss (multiplied by any class weight).
    source : SVMLightData or None
        The file the examples were read from: its label spellings, lines,
        index base and name go into the model.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    y: np.ndarray
    n_features: int
    qid: np.ndarray | None = None
    sample_weight: np.ndarray | None = None
    source: object = field(default=None, repr=False)

    @property
    def m(self):
        return int(self.indptr.shape[0] - 1)

    @property
    def nnz(self):
        return int(self.indices.shape[0])

    @property
    def chunk(self):
        """The rows as a :class:`pegasos.io.Chunk` (no copy)."""
        from .io import Chunk

        return Chunk(self.y, self.indptr, self.indices, self.data, 0, self.qid)

    def distinct_labels(self):
        """Sorted distinct label values (float64)."""
        return np.unique(self.y)


def as_examples(data, n_features=None):
    """One :class:`Examples` from what :func:`pegasos.fit` accepts.

    Parameters
    ----------
    data : tuple (X, y), (X, y, qid), (X, y, qid, sample_weight), SVMLightData or Examples
        X: scipy.sparse matrix, dense array-like or Chunk, shape (m, n);
        y: array-like (m,) of numbers; qid: int array-like (m,) or None;
        sample_weight: array-like (m,) of positive finite numbers, or None.
    n_features : int, optional
        Dimension of w; at least the number of columns the data use.

    Raises
    ------
    ParameterError
        Shapes that do not agree, n_features below the data's columns, non-finite
        or non-positive sample weights; ExampleError for a label that is not a number.
    """
    from .io import SVMLightData

    if isinstance(data, Examples):
        ex = _checked_examples(data)
    elif isinstance(data, SVMLightData):
        chunk = data.chunk
        ex = _checked_examples(Examples(chunk.indptr, chunk.indices, chunk.data, chunk.labels, data.n_features,
                                        chunk.qid, None, data))
    elif isinstance(data, tuple) and 2 <= len(data) <= 4:
        X, y, qid, sw = (tuple(data) + (None, None))[:4]
        indptr, indices, values = csr_arrays(X, n_features)
        m = indptr.shape[0] - 1
        cols = X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else (
            int(indices.max()) + 1 if indices.size else 0)
        if np.shape(y) != (m,):
            raise ParameterError(f"y has shape {np.shape(y)}; it needs one label per example ({m})")
        y = label_values(y)
        if qid is not None:
            qid = np.asarray(qid, dtype=np.int64)
            if qid.shape != (m,):
                raise ParameterError(f"qid has shape {qid.shape}; it needs one query id per example ({m})")
        if sw is not None:
            sw = check_sample_weight(sw, m)
        ex = Examples(indptr, indices, values, y, int(cols), qid, sw)
    else:
        raise ParameterError("the training data must be (X, y), (X, y, qid), (X, y, qid, sample_weight), "
                             f"an SVMLightData or Examples, not {type(data).__name__}")
    if n_features is not None:
        if ex.indices.size and int(ex.indices.max()) >= n_features:
            raise ParameterError(f"n_features = {n_features} is less than the {int(ex.indices.max()) + 1} "
                                 "columns the data use")
        ex = Examples(ex.indptr, ex.indices, ex.data, ex.y, int(n_features), ex.qid, ex.sample_weight, ex.source)
    return ex


def _checked_examples(ex):
    """``ex`` (an Examples, or the arrays of an SVMLightData) with its arrays checked as a matrix handed in
    is: the caller holds them and may have edited them in place since they were made, and the compiled
    loops index with them unchecked.  Well-formed arrays are kept as they are (no copy)."""
    indptr, indices, values = chunk_arrays(ex.indptr, ex.indices, ex.data)
    m = indptr.shape[0] - 1
    try:
        n_features = operator.index(ex.n_features)
    except TypeError:
        raise ParameterError(f"n_features must be an integer, not {type(ex.n_features).__name__}") from None
    check_n_features(indices, n_features)
    y = np.asarray(ex.y)
    if y.shape != (m,):
        raise ParameterError(f"y has shape {y.shape}; it needs one label per example ({m})")
    y = np.ascontiguousarray(label_values(y))
    qid = ex.qid
    if qid is not None:
        qid = np.asarray(qid)
        if qid.shape != (m,) or qid.dtype.kind not in "iu":
            raise ParameterError(f"qid has shape {qid.shape} and type {qid.dtype}; it needs one integer query id "
                                 f"per example ({m})")
        qid = qid.astype(np.int64, copy=False)
    sw = ex.sample_weight
    if sw is not None:
        sw = check_sample_weight(sw, m)
    return Examples(indptr, indices, values, y, int(n_features), qid, sw, ex.source)


def check_sample_weight(sw, m):
    """Example weights ``sw`` as a contiguous float64 (m,) array of finite numbers >= 0.

    Raises
    ------
    ParameterError
        Not numbers, or not one weight per example.
    ExampleError
        A weight that is not a number in [0, MAX_WEIGHT] (the example named; larger ones overflow).
    """
    try:
        sw = np.asarray(sw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("sample_weight must hold numbers") from None
    if sw.shape != (m,):
        raise ParameterError(f"sample_weight has {counted(sw.size, 'weight')} for {counted(m, 'example')} (shape "
                             f"{sw.shape}; it needs one weight per example)")
    bad = np.flatnonzero(~((sw >= 0) & (sw <= MAX_WEIGHT)))
    if bad.size:
        i = int(bad[0])
        detail = f"sample weight {float(sw[i])!r} is not a finite number in [0, {MAX_WEIGHT:g}]"
        raise ExampleError(f"example {i + 1}: {detail}", i, detail)
    return np.ascontiguousarray(sw)


def check_query_ids(qid, needs):
    """Raise ExampleError unless every example of ``qid`` (int64 array (m,) as the
    reader gives it: -1 where a line has no ``qid:``, -2 where it is not an integer
    below 10^18) has a query id >= 0.

    Parameters
    ----------
    qid : ndarray (m,), int64, or None
        None: no example has one (the first, of m >= 1, is named).
    needs : str
        Who needs them, for the message (``"the rank loss needs"``).

    Raises
    ------
    ExampleError
        Naming the first example without a usable query id.
    """
    bad = np.zeros(1, dtype=np.int64) if qid is None else np.flatnonzero(np.asarray(qid) < 0)
    if bad.size:
        i = int(bad[0])
        detail = ("no qid: token" if qid is None or qid[i] == -1
                  else "its qid: is not a whole number from 0 to below 10^18") + \
            f" ({needs} one on every line)"
        raise ExampleError(f"example {i + 1}: {detail}", i, detail)


#: bytes the building of one stored value of the pair problem takes at its peak (the rows of the a's and
#: of the b's gathered, the difference, in float64 and int32): a pair problem is built only within
#: PAIR_MEMORY_SHARE of what the process can allocate
PAIR_BYTES_PER_VALUE = 48
PAIR_MEMORY_SHARE = 0.25


def rank_pairs(qid, y):
    """Every pair (a, b) of examples of one query with y_a > y_b, the pairs the rank loss averages over.

    Parameters
    ----------
    qid : ndarray (m,), int64
        Query ids, all >= 0 (:func:`check_query_ids`).
    y : ndarray (m,), float64
        Relevance labels.

    Returns
    -------
    (a, b) : two int64 arrays (P,)
        Example indices, a the more relevant; in the order of (qid, y_a, a's position), then b's
        (qid, y) order: deterministic for the data.
    """
    qid = np.asarray(qid, dtype=np.int64)
    y = np.asarray(y, dtype=np.float64)
    m = int(qid.shape[0])
    if m == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    srt = np.lexsort((y, qid))
    qs, ys = qid[srt], y[srt]
    new_q = np.r_[True, qs[1:] != qs[:-1]]
    new_l = new_q | np.r_[True, ys[1:] != ys[:-1]]
    q_start = np.flatnonzero(new_q)[np.cumsum(new_q) - 1]
    l_start = np.flatnonzero(new_l)[np.cumsum(new_l) - 1]
    below = l_start - q_start                   # examples of the query with a lower label (sorted before)
    P = int(below.sum())
    a_pos = np.repeat(np.arange(m, dtype=np.int64), below)
    first = np.cumsum(below) - below            # where each a's pairs start
    b_pos = np.repeat(q_start, below) + (np.arange(P, dtype=np.int64) - np.repeat(first, below))
    return srt[a_pos], srt[b_pos]


def _pair_memory(ex, a, b, limit=None):
    """(stored values, bytes to build, bytes allowed or None) of the pair differences of pairs (a, b)."""
    lengths = np.diff(ex.indptr)
    total = int((lengths[a] + lengths[b]).sum())
    if limit is None:
        from .data import memory_limit

        available = memory_limit()
        limit = None if available is None else int(PAIR_MEMORY_SHARE * available)
    return total, PAIR_BYTES_PER_VALUE * total + 16 * int(a.shape[0]), limit


def pairs_fit_in_memory(ex) -> bool:
    """Whether :func:`pair_differences` of ``ex`` (with usable qid) fits in the memory it may take: what
    decides whether the rank loss's dual can run (:func:`pegasos.solver.plan`).  True where ``ex`` has no
    usable qid or no pair (the dual then names the problem)."""
    if ex.qid is None or not (np.asarray(ex.qid) >= 0).all():
        return True
    a, b = rank_pairs(ex.qid, ex.y)
    _, need, limit = _pair_memory(ex, a, b)
    return limit is None or need <= limit


def pair_differences(ex, limit=None):
    """The rank loss's problem as a binary one: the examples x_a - x_b of every pair of :func:`rank_pairs`.

    The rank objective lambda/2 ||w||^2 + 1/P sum over pairs max(0, 1 - <w, x_a - x_b>)
    (:func:`pegasos.scoring.objective` for a ranking model) is the binary hinge objective (paper
    Eq. (1)) of these P examples, all labelled +1, with no bias: the dual finish and the certificate
    run on them unchanged.

    Parameters
    ----------
    ex : Examples
        With ``qid`` (>= 0 everywhere) and relevance labels ``y``.
    limit : int or None
        Bytes the build may take; default PAIR_MEMORY_SHARE (1/4) of
        :func:`pegasos.data.memory_limit`.

    Returns
    -------
    (Examples, a, b)
        P rows (float64 values, explicit zeros of cancelling entries dropped, columns sorted), labels
        1.0, ``n_features`` of ``ex``; and the pairs (:func:`rank_pairs`).

    Raises
    ------
    ExampleError
        An example without a usable qid; no pair (every query has one label).
    ParameterError
        The pairs would take more than ``limit`` bytes to build (about PAIR_BYTES_PER_VALUE a stored
        value: the sum over pairs of nnz(x_a) + nnz(x_b)).
    """
    check_query_ids(ex.qid, "the rank loss needs")
    a, b = rank_pairs(ex.qid, ex.y)
    P = int(a.shape[0])
    if P == 0:
        raise ExampleError("no pair of examples with the same qid and different labels")
    total, need, limit = _pair_memory(ex, a, b, limit)
    if limit is not None and need > limit:
        raise ParameterError(f"the {P} pairs of the rank loss hold {total} stored values, {need / 2**30:.3g} GiB "
                             f"to build, more than the {limit / 2**30:.3g} GiB allowed (a quarter of the "
                             "memory available)")
    # SciPy's row gathering and sorted-row subtraction (compiled; its sum drops the entries that cancel)
    import scipy.sparse as sp

    X = sp.csr_matrix((ex.data.astype(np.float64, copy=False), ex.indices, ex.indptr),
                      shape=(ex.m, int(ex.n_features)))
    D = (X[a] - X[b]).tocsr()
    D.sum_duplicates()
    indptr = np.ascontiguousarray(D.indptr, dtype=np.int64)
    cols, vals = D.indices, D.data
    out = Examples(indptr, np.ascontiguousarray(cols, dtype=np.int32), np.ascontiguousarray(vals, dtype=np.float64),
                   np.ones(P), int(ex.n_features))
    return out, a, b
