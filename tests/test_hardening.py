"""Bad input at the Python API, in data files, caches and model files gives a
PegasosError (never a crash, a NaN objective or unbounded memory)."""

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos
from pegasos.data import csr_arrays
from pegasos.errors import ExampleError, ParameterError


def _data(m=40, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(m, d, density=0.5, format="csr", random_state=seed)
    y = np.where(rng.random(m) > 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    return X, y


def _row_of(X, p):
    return int(np.searchsorted(X.indptr, p, side="right")) - 1


@pytest.fixture(scope="module")
def models():
    X, y = _data()
    X50 = sp.random(40, 50, density=0.3, format="csr", random_state=1)
    y3 = np.arange(40) % 3.0
    return {
        "linear": pegasos.train(X, y, epochs=1),
        "kernel": pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, epochs=1),
        "multiclass": pegasos.train_multiclass(X50, y3, epochs=1),
    }


def _negative_index(X, v=-1, p=5):
    Z = X.copy()
    Z.indices[p] = v
    return Z


def _decreasing_indptr(X):
    Z = X.copy()
    Z.indptr[5] = Z.indptr[7] + 1
    return Z


TRAINERS = {
    "linear": lambda X, y: pegasos.train(X, y, epochs=1),
    "kernel": lambda X, y: pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, epochs=1),
    "multiclass": lambda X, y: pegasos.train_multiclass(X, np.arange(X.shape[0]) % 3.0, epochs=1),
}


@pytest.mark.parametrize("trainer", TRAINERS)
@pytest.mark.parametrize("v", [-1, -7, -10 ** 6, 6, 2 ** 31 - 1])
def test_column_index_out_of_range_is_an_example_error(trainer, v):
    X, y = _data()
    with pytest.raises(ExampleError, match=f"column index {v} is") as e:
        TRAINERS[trainer](_negative_index(X, v), y)
    assert e.value.example == _row_of(X, 5)


@pytest.mark.parametrize("kind", ["linear", "kernel", "multiclass"])
def test_decision_function_checks_the_matrix(models, kind):
    X, _ = _data()
    model = models[kind]
    with pytest.raises(ExampleError, match="column index -1 is negative"):
        model.decision_function(_negative_index(X))
    with pytest.raises(ParameterError, match="decreasing row pointers"):
        model.decision_function(_decreasing_indptr(X))
    Z = X.copy()
    Z.data[3] = np.nan
    with pytest.raises(ExampleError, match="value nan is not finite"):
        model.decision_function(Z)
    with pytest.raises(ExampleError, match="not finite"):
        pegasos.objective(model, Z, np.arange(40) % 3.0 if kind == "multiclass" else _data()[1])


@pytest.mark.parametrize("trainer", TRAINERS)
def test_broken_row_pointers(trainer):
    X, y = _data()
    with pytest.raises(ParameterError, match="decreasing row pointers"):
        TRAINERS[trainer](_decreasing_indptr(X), y)
    Z = X.copy()
    Z.indptr[-1] += 5
    with pytest.raises(ParameterError, match=r"indptr\[-1\] = \d+ but"):
        TRAINERS[trainer](Z, y)
    Z = X.copy()
    Z.indptr[0] = 1
    with pytest.raises(ParameterError, match=r"indptr\[0\] = 1"):
        TRAINERS[trainer](Z, y)
    with pytest.raises(ParameterError, match="row pointers"):
        TRAINERS[trainer](_short_indptr(X), y)


def _short_indptr(X):
    Z = X.copy()
    Z.indptr = Z.indptr[:-3]
    return Z


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_values_refused(value):
    X, y = _data()
    Z = X.copy()
    Z.data[-1] = value
    with pytest.raises(ExampleError, match="not finite") as e:
        pegasos.train(Z, y, epochs=1)
    assert e.value.example == _row_of(X, X.nnz - 1)
    D = X.toarray()
    D[2, 3] = value
    with pytest.raises(ExampleError, match="column 3 is not finite") as e:
        pegasos.train(D, y, epochs=1)
    assert e.value.example == 2


def test_multiclass_n_features_below_the_data():
    X = sp.random(40, 50, density=0.3, format="csr", random_state=0)
    with pytest.raises(ParameterError, match="n_features = 3 is less than the 50 columns"):
        pegasos.train_multiclass(X, np.arange(40) % 3.0, n_features=3)


@pytest.mark.parametrize("fmt", ["csc", "coo"])
def test_other_sparse_formats_are_checked(fmt):
    X, y = _data()
    Z = X.asformat(fmt, copy=True)
    if fmt == "csc":
        Z.indices = Z.indices.copy()
        Z.indices[0] = -3
        match = "row index -3"
    else:
        Z.col = Z.col.copy()
        Z.col[0] = 9
        match = "column index 9 is outside the matrix's 6 columns"
    with pytest.raises(ParameterError, match=match):
        pegasos.train(Z, y, epochs=1)


@pytest.mark.parametrize("X, match", [
    (np.zeros((2, 2, 2)), "2-D matrix"),
    ([["a", "b"], ["c", "d"]], "not a numeric matrix"),
    (sp.csr_matrix(np.eye(2, dtype=np.complex128)), "complex128"),
    (np.eye(2, dtype=np.complex128), "complex"),
])
def test_not_a_matrix(X, match):
    with pytest.raises(ParameterError, match=match):
        pegasos.train(X, [1.0, -1.0], iterations=3)


def test_unsorted_and_repeated_columns_match_a_dense_product():
    rng = np.random.default_rng(3)
    m, d = 30, 8
    rows = np.repeat(np.arange(m), 5)
    cols = rng.integers(0, d, rows.size)                  # repeats within rows
    vals = rng.normal(size=rows.size)
    dense = np.zeros((m, d))
    np.add.at(dense, (rows, cols), vals)
    perm = rng.permutation(5)
    indptr = np.arange(0, rows.size + 1, 5)
    indices = cols.reshape(m, 5)[:, perm].ravel()      # unsorted within rows
    data = vals.reshape(m, 5)[:, perm].ravel()
    X = sp.csr_matrix((data, indices, indptr), shape=(m, d))
    X.has_sorted_indices = True                          # a wrong flag must not be believed
    p, i, v = csr_arrays(X)
    assert p.dtype == np.int64 and i.dtype == np.int32 and v.dtype == np.float64
    np.testing.assert_allclose(sp.csr_matrix((v, i, p), shape=(m, d)).toarray(), dense, rtol=0, atol=1e-12)
    for r in range(m):
        assert np.all(np.diff(i[p[r]:p[r + 1]]) > 0)
    w = rng.normal(size=d)
    model = pegasos.linear.LinearModel(w=w, bias=0.5, labels=None, lam=1.0, loss="eps-insensitive")
    np.testing.assert_allclose(model.decision_function(X), dense @ w + 0.5, rtol=1e-12, atol=1e-12)


def test_dtypes_converted_and_kept():
    X, _ = _data()
    for dt, want in ((np.int64, np.float64), (np.bool_, np.float64), (np.float32, np.float32),
                     (np.longdouble, np.float64)):
        p, i, v = csr_arrays(X.astype(dt))
        assert v.dtype == want and p.dtype == np.int64 and i.dtype == np.int32
    Z = X.copy()
    Z.indptr = Z.indptr.astype(np.uint64)
    Z.indices = Z.indices.astype(np.int64)
    p, i, v = csr_arrays(Z)
    np.testing.assert_array_equal(p, X.indptr)
    np.testing.assert_array_equal(i, X.indices)


def test_valid_csr_is_not_copied():
    X, _ = _data()
    X = X.astype(np.float64)
    X.indptr = X.indptr.astype(np.int64)
    p, i, v = csr_arrays(X)
    assert np.shares_memory(v, X.data) and np.shares_memory(p, X.indptr)


def test_reader_arrays_are_trusted(tmp_path):
    f = tmp_path / "d.svm"
    f.write_text("+1 1:1 3:2\n-1 2:1\n")
    d = pegasos.read_svmlight(str(f))
    p, i, v = csr_arrays(d)
    assert p is d.chunk.indptr and i is d.chunk.indices and v is d.chunk.data
    d.chunk.indices[0] = -1                          # a damaged Chunk is still checked when asked to
    with pytest.raises(ExampleError, match="column index -1"):
        csr_arrays(d.chunk.matrix(3), trusted=False)
