"""Checks of the example arrays the Python API receives.

The compiled loops (``pegasos._core``, ``pegasos._kernel``) index the weight
vector with the CSR column indices and walk the rows with the row pointers
without bounds checks; a negative index or a decreasing ``indptr`` would read
or write outside their buffers.  :func:`csr_arrays` is the one place where a
matrix handed to ``train``, ``train_multiclass``, ``train_kernel`` or a
model's ``decision_function`` is checked and converted, in O(nnz) vectorised
passes over bounded blocks (no temporary larger than a few MiB).

Arrays of a :class:`pegasos.io.Chunk` or :class:`pegasos.io.SVMLightData`
are checked too: they were well formed when the reader made them, but the
caller holds them (``d.X`` shares them) and may have edited them in place
since; a well-formed chunk is returned without a copy.
"""

import os

import numpy as np

from .errors import ExampleError, ParameterError, counted

# elements per block of the vectorised checks (temporaries stay at a few MiB)
CHECK_BLOCK = 1 << 19
INT32_MAX = np.iinfo(np.int32).max


def csr_arrays(X, n_features=None, trusted=None):
    """Checked CSR arrays of a matrix of examples, as the solver loops need them.

    Parameters
    ----------
    X : scipy.sparse matrix or array (any format) of shape (m, d), dense
        array-like of shape (m, d) (or (d,) for one example),
        :class:`pegasos.io.Chunk` or :class:`pegasos.io.SVMLightData`
        The examples x_i, one per row.  Integer and boolean values are
        converted to float64; float32 and float64 are kept.
    n_features : int or None
        When given (training: the dimension of w), every stored column index
        must be below it.  None checks the indices against the matrix's own
        width d only (scoring: columns at or beyond a model's n_features
        contribute 0).
    trusted : bool or None
        True skips the structural and value checks (for arrays that no
        caller could have changed since they were checked); False or None
        (default) checks whatever X is, a Chunk or SVMLightData included.

    Returns
    -------
    indptr : ndarray (m + 1,), int64
        Row pointers, indptr[0] = 0, non-decreasing.
    indices : ndarray (nnz,), int32
        Column of each stored value, in [0, d), increasing within each row
        (a scipy matrix with unsorted or repeated columns is sorted and its
        repeated entries summed, scipy's meaning of duplicates).
    data : ndarray (nnz,), float64 or float32
        Finite stored values.

    Raises
    ------
    ParameterError
        X is not a matrix (wrong number of dimensions, complex or non-numeric
        values), its row pointers are inconsistent (not starting at 0,
        decreasing, pointing past the stored values, wrong length), or a
        column index is at or beyond ``n_features``.
    ExampleError
        A column index outside [0, d) or a NaN/infinite value, with the
        0-based example that holds it in ``example``.
    """
    from .io import Chunk, SVMLightData

    if isinstance(X, SVMLightData):
        X = X.chunk
    if isinstance(X, Chunk):
        indptr, indices, data = X.indptr, X.indices, X.data
        if not trusted:
            indptr, indices, data = chunk_arrays(indptr, indices, data)
    elif trusted:
        indptr, indices, data = _convert_trusted(X)
    else:
        indptr, indices, data = _checked(X)
    if n_features is not None:
        check_n_features(indices, n_features)
    return indptr, indices, data


def chunk_arrays(indptr, indices, data):
    """The checked (indptr int64, indices int32, data float) of a :class:`pegasos.io.Chunk`'s arrays,
    as :func:`csr_arrays` returns them: the same arrays when they are well formed (no copy), rows
    sorted and repeated columns summed when they are not; ParameterError or ExampleError when they
    would make a compiled loop read or write outside its buffers (row pointers not from 0 to nnz or
    decreasing, pointing past the stored values, a negative column index) or hold a value that is not finite."""
    indptr = np.asarray(indptr)
    if indptr.ndim != 1 or indptr.shape[0] < 1:
        raise ParameterError(f"the row pointers (indptr) have shape {indptr.shape}; they must be a 1-D array of "
                             "m + 1 integers")
    m = int(indptr.shape[0]) - 1
    width = INT32_MAX + 1
    indptr, indices, data, unsorted = _check_compressed(indptr, indices, data, m, width, "csr")
    if unsorted:
        import scipy.sparse as sp

        n = int(indices.max()) + 1 if indices.size else 0
        X = sp.csr_matrix((data, indices, indptr), shape=(m, n), copy=True)
        X.sum_duplicates()
        indptr, indices, data, _ = _check_compressed(X.indptr, X.indices, X.data, m, n, "csr")
    return indptr, indices, data


def finite_decisions(f, X):
    """``f`` (float64 (m,) or (m, K), the decision values of the examples X) when all are finite; else
    ExampleError for the first example whose value is not (its values times the model's weights overflow
    float64: a value near 1e308, or a model file edited by hand).  A :class:`pegasos.io.Chunk` counts its
    examples from its ``first_row``, so the command line can name the file's line."""
    ok = np.isfinite(f)
    if ok.all():
        return f
    row = int(np.flatnonzero(~ok.reshape(ok.shape[0], -1).all(axis=1))[0])
    i = int(getattr(X, "first_row", 0)) + row
    values = np.asarray(f[row]).ravel()
    if np.isnan(values).any():
        # a nan among the model's weights (set in Python) or products that overflow with both signs
        detail = ("its decision value is not a finite number but not a number (nan): a nan among the model's "
                  "weights, or its values times the weights overflowing float64 with both signs")
    else:
        detail = ("its decision value is not a finite number (its values times the model's weights overflow "
                  "float64)")
    raise ExampleError(f"example {i + 1}: {detail}", i, detail)


def check_n_features(indices, n_features):
    """Raise ParameterError unless every column index is below ``n_features``
    (int, the dimension of w); ``indices`` int (nnz,), already known >= 0."""
    if indices.size and int(indices.max()) >= n_features:
        raise ParameterError(f"n_features = {n_features} is less than the {counted(int(indices.max()) + 1, 'column')} "
                             "the data use")


def _convert_trusted(X):
    import scipy.sparse as sp

    if not sp.issparse(X):
        X = sp.csr_matrix(_dense(X))
    X = X.tocsr()
    if not X.has_sorted_indices:
        X = X.sorted_indices()
    return (np.ascontiguousarray(X.indptr, dtype=np.int64), np.ascontiguousarray(X.indices, dtype=np.int32),
            np.ascontiguousarray(_float_values(X.data)))


def _dense(X):
    """A dense array-like as a finite float64 2-D array."""
    try:
        a = np.asarray(X)
        if a.dtype.kind == "c":
            raise ParameterError("the examples X hold complex numbers; they must be real")
        a = np.atleast_2d(a.astype(np.float64, copy=False))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ParameterError):
            raise
        raise ParameterError(f"the examples X are not a numeric matrix ({exc})") from None
    if a.ndim != 2:
        raise ParameterError(f"the examples X must be a 2-D matrix, got shape {a.shape}")
    finite = np.isfinite(a)
    if not finite.all():
        i, j = (int(v[0]) for v in np.nonzero(~finite))
        raise ExampleError(f"example {i + 1}: value {a[i, j]} in column {j} is not finite "
                           "(nan and inf are not allowed)", i,
                           f"value {a[i, j]} in column {j} is not finite (nan and inf are not allowed)")
    return a


def _float_values(data):
    """Stored values as float64, or float32 kept; ParameterError for other kinds."""
    data = np.asarray(data)
    if data.dtype in (np.float32, np.float64):
        return data
    if data.dtype.kind in "biuf":
        return data.astype(np.float64)
    raise ParameterError(f"the examples X hold values of type {data.dtype}; they must be real numbers")


def _checked(X):
    import scipy.sparse as sp

    if not sp.issparse(X):
        # a validated dense array makes a well-formed matrix
        return _convert_trusted(_dense(X))
    shape = X.shape
    if len(shape) != 2:
        raise ParameterError(f"the examples X must be a 2-D matrix, got shape {shape}")
    m, d = int(shape[0]), int(shape[1])
    fmt = X.format
    if fmt in ("csr", "csc"):
        major, minor = (m, d) if fmt == "csr" else (d, m)
        indptr, indices, data, unsorted = _check_compressed(X.indptr, X.indices, X.data, major, minor, fmt)
        if fmt == "csr" and not unsorted:
            return indptr, indices, data
        cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
        X = cls((data, indices, indptr), shape=(m, d), copy=fmt == "csr")
    elif fmt == "coo":
        row, col = np.asarray(X.row), np.asarray(X.col)
        data = _float_values(X.data)
        if not (row.shape == col.shape == data.shape and row.ndim == 1):
            raise ParameterError(f"the COO matrix X has {row.size} rows, {col.size} columns and {data.size} "
                                 "values: they must be as many")
        _check_index_range(row, m, "row")
        _check_index_range(col, d, "column", lambda p: int(row[p]))
        _check_finite(data, lambda p: int(row[p]))
        X = sp.coo_matrix((data, (row, col)), shape=(m, d))
    else:
        X = X.tocsr()                         # dia, lil, dok, bsr: built by scipy itself
        return _checked(X)
    X = X.tocsr()
    X.sum_duplicates()                        # sorts the indices of every row, adds repeated ones
    indptr, indices, data, _ = _check_compressed(X.indptr, X.indices, X.data, m, d, "csr")
    return indptr, indices, data


def _check_compressed(indptr, indices, data, n_major, n_minor, fmt):
    """Check and convert the arrays of a CSR (or CSC) matrix.

    Returns (indptr int64, indices int32, data float, unsorted): ``unsorted``
    is True when a row (column for CSC) has decreasing or repeated indices.
    """
    axis, other = ("row", "column") if fmt == "csr" else ("column", "row")
    indptr, indices = np.asarray(indptr), np.asarray(indices)
    data = _float_values(data)
    for name, a in (("indptr", indptr), ("indices", indices)):
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise ParameterError(f"the {fmt.upper()} matrix X has {name} of type {a.dtype} and shape {a.shape}; "
                                 "it must be a 1-D integer array")
    if data.ndim != 1:
        raise ParameterError(f"the {fmt.upper()} matrix X has values of shape {data.shape}; they must be 1-D")
    if indptr.shape[0] != n_major + 1:
        raise ParameterError(f"the {fmt.upper()} matrix X has {indptr.shape[0]} row pointers (indptr) for "
                             f"{n_major} {axis}s; it needs {n_major + 1}")
    if indptr.dtype == np.uint64 and indptr.size and int(indptr.max()) > np.iinfo(np.int64).max:
        raise ParameterError(f"the {fmt.upper()} matrix X has a row pointer (indptr) beyond 2^63")
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    if indptr[0] != 0:
        raise ParameterError(f"the {fmt.upper()} matrix X has indptr[0] = {int(indptr[0])}; it must be 0")
    for s in range(0, n_major, CHECK_BLOCK):
        block = indptr[s:s + CHECK_BLOCK + 1]
        falls = block[1:] < block[:-1]        # compared, not subtracted: a difference of int64 extremes wraps
        if falls.any():
            i = s + int(np.argmax(falls))
            raise ParameterError(f"the {fmt.upper()} matrix X has decreasing row pointers (indptr[{i}] = "
                                 f"{int(indptr[i])} > indptr[{i + 1}] = {int(indptr[i + 1])})")
    nnz = int(indptr[-1])
    if nnz > indices.shape[0] or nnz > data.shape[0]:
        raise ParameterError(f"the {fmt.upper()} matrix X has indptr[-1] = {nnz} but {indices.shape[0]} column "
                             f"indices and {data.shape[0]} values")
    if indices.shape[0] != nnz or data.shape[0] != nnz:      # (a whole array is kept as it is, not a view)
        indices, data = indices[:nnz], data[:nnz]

    def major_of(p):
        return int(np.searchsorted(indptr, p, side="right")) - 1

    example_of = major_of if fmt == "csr" else None
    if indices.dtype in (np.int32, np.int64) and data.dtype in (np.float32, np.float64):
        from . import _svmlight

        _check_minor_count(n_minor, other)
        indices, data = np.ascontiguousarray(indices), np.ascontiguousarray(data)
        bad_index, bad_value, unsorted = _svmlight.scan_compressed(indptr, indices, data, n_minor, fmt == "csr")
        if bad_index >= 0:
            _bad_index(indices, bad_index, n_minor, other, example_of)
        if bad_value >= 0:
            _bad_value(data, bad_value, major_of)
    else:                                     # other integer kinds (uint64 beyond int64 included): NumPy
        _check_index_range(indices, n_minor, other, example_of)
        if fmt == "csr":
            _check_finite(data, major_of)
        unsorted = _unsorted(indptr, indices, n_major)
    indices = np.ascontiguousarray(indices, dtype=np.int32 if fmt == "csr" else np.int64)
    return indptr, indices, np.ascontiguousarray(data), unsorted


def _unsorted(indptr, indices, n_major):
    """Whether a row has an index not above the one before it (NumPy, in blocks)."""
    for s in range(0, int(indptr[-1]), CHECK_BLOCK):
        blk = indices[s:s + CHECK_BLOCK + 1].astype(np.int64)
        p = s + 1 + np.flatnonzero(blk[1:] <= blk[:-1])       # positions not above their predecessor
        if p.size:
            k = np.minimum(np.searchsorted(indptr, p), n_major)
            if not (indptr[k] == p).all():                    # one of them is not the first of its row
                return True
    return False


def _check_minor_count(n, what):
    if n - 1 > INT32_MAX and what == "column":
        raise ParameterError(f"the examples X have {n} columns; at most {INT32_MAX + 1} are supported")


def _bad_index(idx, p, n, what, example_of):
    """Raise for the stored index idx[p], outside [0, n)."""
    v = int(idx[p])
    reason = "is negative" if v < 0 else f"is outside the matrix's {n} {what}s"
    if example_of is not None:
        i = example_of(p)
        detail = f"{what} index {v} {reason}"
        raise ExampleError(f"example {i + 1}: {detail}", i, detail)
    raise ParameterError(f"the examples X have a {what} index {v} that {reason}")


def _bad_value(data, p, example_of):
    """Raise for the stored value data[p], NaN or infinite."""
    i = example_of(p)
    detail = f"value {data[p]} is not finite (nan and inf are not allowed)"
    raise ExampleError(f"example {i + 1}: {detail}", i, detail)


def _check_index_range(idx, n, what, example_of=None):
    """Raise unless every index of ``idx`` (int, 1-D) is in [0, n).

    ``what`` is "row" or "column" (columns must also fit int32);
    ``example_of(p)`` gives the 0-based example holding stored value p, or
    is None when the index is itself the example's."""
    _check_minor_count(n, what)
    for s in range(0, idx.shape[0], CHECK_BLOCK):
        blk = idx[s:s + CHECK_BLOCK]
        bad = (blk < 0) | (blk >= n)
        if bad.any():
            _bad_index(idx, s + int(np.argmax(bad)), n, what, example_of)


def _check_finite(data, example_of):
    """Raise ExampleError for the first NaN or infinite stored value."""
    for s in range(0, data.shape[0], CHECK_BLOCK):
        ok = np.isfinite(data[s:s + CHECK_BLOCK])
        if not ok.all():
            _bad_value(data, s + int(np.argmin(ok)), example_of)


def _read_number(path, field=None):
    """An integer from a /proc or /sys file (its ``field:`` line, in kB, for /proc/meminfo), or None."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    if field is None:
        text = text.strip()
        return int(text) if text.isdigit() else None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            parts = line.split()
            return int(parts[1]) * 1024 if len(parts) > 1 and parts[1].isdigit() else None
    return None


def _cgroup_files():
    """(limit, usage) file pairs of the memory cgroups this process is in, its own first (the one
    /proc/self/cgroup names: v2 ``0::PATH``, v1 ``N:...memory...:PATH``), then the roots."""
    own = []
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                path = path.rstrip("/")
                if not path:
                    continue
                if controllers == "":
                    own.append((f"/sys/fs/cgroup{path}/memory.max", f"/sys/fs/cgroup{path}/memory.current"))
                elif "memory" in controllers.split(","):
                    own.append((f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes",
                                f"/sys/fs/cgroup/memory{path}/memory.usage_in_bytes"))
    except (OSError, ValueError):
        pass
    return own + [("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                  ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes")]


def memory_limit():
    """Bytes this process can still allocate: the least of 90% of the physical memory,
    MemAvailable (/proc/meminfo), the cgroup's limit less its usage (v2 memory.max, v1
    memory.limit_in_bytes) and RLIMIT_AS less the address space in use; None if unknown."""
    bounds = []
    try:
        bounds.append(0.9 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        pass
    available = _read_number("/proc/meminfo", "MemAvailable")
    if available is not None:
        bounds.append(available)
    for limit_file, usage_file in _cgroup_files():
        limit = _read_number(limit_file)
        if limit is not None and limit < 1 << 60:
            bounds.append(max(0, limit - (_read_number(usage_file) or 0)))
            break
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            bounds.append(max(0, soft - (_read_number("/proc/self/status", "VmSize") or 0)))
    except (ImportError, ValueError, OSError):
        pass
    return min(bounds) if bounds else None


#: A weight state of at most this many bytes is not checked against :func:`memory_limit`, which
#: reads three /proc and /sys files: a short default fit makes a state for each of its calibration
#: runs and each length of its doubling.
SMALL_STATE_BYTES = 16 << 20


def check_weight_memory(n_features, vectors=1):
    """Refuse a dense weight state that cannot fit in the memory this process can still
    allocate (:func:`memory_limit`): a stray huge feature index would otherwise get the
    process killed.  States of at most ``SMALL_STATE_BYTES`` are not checked.

    Raises
    ------
    ExampleError (a ParameterError)
        The ``vectors`` float64 vectors of the solver state plus two copies
        made for the result would exceed :func:`memory_limit`.
    """
    need = 8.0 * (int(n_features) + 2) * (vectors + 2)
    if need <= SMALL_STATE_BYTES:
        return
    limit = memory_limit()
    if limit is not None and need > limit:
        error = ExampleError(f"n_features = {n_features} (the dimension the largest feature index makes) needs "
                             f"{need / 2**30:.1f} GiB for the weights, more than the {limit / 2**30:.1f} GiB this "
                             "process can allocate (physical memory, MemAvailable, cgroup, RLIMIT_AS); check the "
                             "data for a stray huge index")
        error.memory_bound = True         # callers that hold the examples name the one with that index
        raise error


def take_rows(indptr, indices, data, idx):
    """The CSR arrays of the rows ``idx`` (sorted int64 (r,)) of a CSR matrix.

    Parameters
    ----------
    indptr : int64 (m + 1,), indices : int32 (nnz,), data : float (nnz,)
    idx : int64 (r,)

    Returns
    -------
    (indptr int64 (r + 1,), indices, data) of the r rows, with the dtypes given;
    NumPy only (the command line's paths do not import scipy).
    """
    starts = indptr[idx]
    lengths = indptr[idx + 1] - starts
    new_indptr = np.zeros(idx.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_indptr[1:])
    positions = np.repeat(starts - new_indptr[:-1], lengths) + np.arange(int(new_indptr[-1]), dtype=np.int64)
    return new_indptr, np.ascontiguousarray(indices[positions]), np.ascontiguousarray(data[positions])


def compact_columns(indices):
    """Renumber the columns that ``indices`` uses as 0..u-1, in their order.

    Training on rows whose features all lie in a few of n columns gives, on
    those columns, the weights of training in n dimensions (a weight whose
    feature no example has stays 0 under every Pegasos step), at O(u)
    instead of O(n) per dense pass; the calibration sample uses it.

    Parameters
    ----------
    indices : int32 (nnz,)
        Column indices of CSR rows.

    Returns
    -------
    (columns int64 (u,), compact int32 (nnz,))
        The distinct columns, increasing, and each entry's position among
        them (so ``columns[compact] == indices``; order within rows kept).
    """
    columns, compact = np.unique(indices, return_inverse=True)
    return columns.astype(np.int64, copy=False), compact.astype(np.int32, copy=False).reshape(-1)


#: Columns in common use whose largest |values| differ by this factor or more make the problem
#: badly conditioned for Pegasos and for dual coordinate ascent.
UNEVEN_SCALE = 100.0
#: large_scale's limit of a column's largest |x| (scaled data lie in [-1, 1])
LARGE_SCALE = 10.0
#: The fraction of the rows a column must have a value in to count as in common use (a rare
#: column of tiny values constrains little).
COMMON_COLUMN = 0.01


SCALE_BLOCK = 1 << 20        # values a block of _column_scales


def expand_columns(values, columns, n):
    """``values`` of a problem renumbered to its used ``columns`` (:func:`compact_columns`), put back
    in all ``n`` columns: float64 (n,), values[j] at columns[j] and 0 elsewhere (values beyond
    len(columns), a constant feature's, are left to the caller)."""
    full = np.zeros(n, dtype=np.float64)
    full[columns] = values[:columns.shape[0]]
    return full


def _column_scales(indices, data, n_features, n_rows):
    """s_j = max_i |x_ij| of every column, and which columns are in common use (a non-zero value in at
    least ``COMMON_COLUMN`` of the rows)."""
    scale = np.zeros(n_features, dtype=np.float64)
    counts = np.zeros(n_features, dtype=np.int64)
    # in blocks: the column numbers and |values| of all nnz at once were 16 bytes a value more at the peak
    # (86 MB on 5.4M values, for a note)
    for start in range(0, indices.shape[0], SCALE_BLOCK):
        columns = np.asarray(indices[start:start + SCALE_BLOCK], dtype=np.intp)
        np.maximum.at(scale, columns, np.abs(np.asarray(data[start:start + SCALE_BLOCK], dtype=np.float64)))
        counts += np.bincount(columns, minlength=n_features)
    common = (counts >= max(1.0, COMMON_COLUMN * n_rows)) & (scale > 0)
    return scale, common


def uneven_scale(indices, data, n_features, n_rows, ratio=UNEVEN_SCALE):
    """The largest and the smallest scale of the columns in common use, when they differ by ``ratio``.

    The scale of column j is s_j = max_i |x_ij|, compared over the columns
    with a non-zero value in at least ``COMMON_COLUMN`` (1%) of the rows.
    Columns of very different scales make the problem badly conditioned:
    a large column dominates every ||x_i||^2, so the dual coordinate steps
    (of size 1/||x_i||^2) barely move the directions of the small ones and
    the Pegasos step suited to one column is wrong for the others.  Measured
    at lambda = 1e-4: svmguide1 (unscaled, scales 0.75 to 581) 22% certified
    gap after the finish's bound of work, 0.16% in 5 passes once each column
    is divided by its largest |x|; one column of 300 rows multiplied by 1000,
    33% (LIBLINEAR's dual solver stops far from f* on both).  Used for the
    note of a run whose finish did not certify.

    Parameters
    ----------
    indices : int32 (nnz,), column indices in [0, n_features)
    data : float32/float64 (nnz,)
    n_features : int >= 0
    n_rows : int >= 0, the rows the entries come from
    ratio : float > 1

    Returns
    -------
    (large, s_large, small, s_small) or None
        The zero-based columns of largest and smallest scale among the
        common ones and their scales, when s_large >= ratio x s_small;
        otherwise (or with fewer than two common columns) None.
    """
    n_features = max(int(n_features), 0)
    if not data.shape[0] or n_features < 2:
        return None
    return _uneven(*_column_scales(indices, data, n_features, n_rows), ratio)


def _uneven(scale, common, ratio):
    """uneven_scale from the columns' scales and which are in common use."""
    if np.count_nonzero(common) < 2:
        return None
    which = np.flatnonzero(common)
    large = int(which[np.argmax(scale[which])])
    small = int(which[np.argmin(scale[which])])
    if scale[large] < ratio * scale[small]:
        return None
    return large, float(scale[large]), small, float(scale[small])


def large_scale(indices, data, n_features, n_rows, limit=LARGE_SCALE):
    """The column of largest scale in common use, when its scale is at least ``limit``.

    Data scaled as SVM tools expect lie in [-1, 1] (svm-scale, MaxAbsScaler;
    binary and tf-idf features are in [0, 1]).  Features that are all large
    make every ||x_i||^2 large, and the dual coordinate ascent then
    converges slowly at small lambda (its box C = 1/(lambda m) against
    ||x_i||^2): scikit-learn's digits (values 0 to 16, one class of digits
    against the others) at lambda = 1e-4 are 50% above the dual bound after
    the finish's bound of work (4.3 s); divided by 16, within 0.2% in 741
    passes (0.07 s), a better conditioned problem at the same lambda.  Used,
    like :func:`uneven_scale` (which it does not repeat), for the note of a
    run whose finish did not certify.

    Returns
    -------
    (column, scale) or None
        The zero-based column of largest scale among those with a value in
        at least ``COMMON_COLUMN`` of the rows, and that scale, if >= ``limit``.
    """
    n_features = max(int(n_features), 0)
    if not data.shape[0] or n_features < 1:
        return None
    return _large(*_column_scales(indices, data, n_features, n_rows), limit)


def _large(scale, common, limit):
    """large_scale from the columns' scales and which are in common use."""
    which = np.flatnonzero(common)
    if not which.shape[0]:
        return None
    large = int(which[np.argmax(scale[which])])
    return (large, float(scale[large])) if scale[large] >= limit else None


def scale_finding(indices, data, n_features, n_rows):
    """What the columns' scales say about a finish that did not certify, from one O(nnz) pass over
    the values: ("uneven", :func:`uneven_scale`'s tuple) when the columns in common use differ by
    ``UNEVEN_SCALE``, else ("large", :func:`large_scale`'s pair) when they reach ``LARGE_SCALE``,
    else None.  Same arguments as :func:`uneven_scale`."""
    n_features = max(int(n_features), 0)
    if not data.shape[0] or n_features < 1:
        return None
    scale, common = _column_scales(indices, data, n_features, n_rows)
    found = _uneven(scale, common, UNEVEN_SCALE) if n_features >= 2 else None
    if found is not None:
        return "uneven", found
    found = _large(scale, common, LARGE_SCALE)
    return None if found is None else ("large", found)
