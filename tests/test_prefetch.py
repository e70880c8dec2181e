"""Prefetching in the training loops changes no result.

``pegasos._core`` prefetches the rows (and, if asked, the weights) of the
examples some entries ahead in the order (``_core.prefetch_distances``).
These tests train on a generated set with many more examples than the
distances (so every stage of the prefetch is taken, and its last entries
run out at the end of the order) and demand bit-identical weights, state
and model text with prefetching off, at the default distances and at
others: k = 1 (Fig. 1), k > 1 (Fig. 2), the threaded batch step, ranking
pairs and float32 values; and the result equals the dense NumPy reference.
The dual coordinate ascent of the certificate and the finish
(``_dual.prefetch_distance``) is held to the same: identical alpha, v and
dual values, shrinking included.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import reference as ref
from pegasos import _core, _dual, certificate, linear
from pegasos.data import csr_arrays
from pegasos.trainers import train

#: (rows, weights) distances tried; (0, 0) is off, the last ones run past whole batches and orders
SETTINGS = [(0, 0), None, (1, 1), (16, 8), (3, 0), (5000, 5000)]
EXACT = 1e-9


@pytest.fixture(autouse=True)
def restore_distances():
    chosen = _core.prefetch_distances()
    dual = _dual.prefetch_distance()
    yield
    _core.prefetch_distances(*chosen)
    _dual.prefetch_distance(dual)


def generated(m=6000, n=700, seed=0, dtype=np.float64):
    """CSR (m, n): rows of 0 to 60 values (empty rows included), labels from a hidden w plus noise."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 61, size=m)
    lengths[::97] = 0
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(n, size=r, replace=False)) for r in lengths]).astype(np.int32)
    data = rng.normal(size=indptr[-1]).astype(dtype)
    X = sp.csr_matrix((data, indices, indptr), shape=(m, n))
    w_true = rng.normal(size=n)
    y = np.where(X @ w_true + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    return X, y


def at(setting, fn):
    """fn() with the prefetch distances ``setting`` (None: the library's default)."""
    chosen = _core.prefetch_distances()
    try:
        if setting is not None:
            _core.prefetch_distances(*setting)
        return fn()
    finally:
        _core.prefetch_distances(*chosen)


def same_models(models):
    first = models[0]
    for setting, model in zip(SETTINGS[1:], models[1:]):
        assert np.array_equal(model.w, first.w), f"w differs at prefetch distances {setting}"
        assert model.bias == first.bias
        assert model.to_text() == first.to_text(), f"model text differs at {setting}"


def test_distances_are_set_checked_and_off_means_off():
    assert _core.prefetch_distances() == (16, 0)
    assert _core.prefetch_distances(8, 4) == (8, 4)
    assert _core.prefetch_distances() == (8, 4)
    assert _core.prefetch_distances(rows=0) == (0, 0)        # no rows, no weights either
    with pytest.raises(ValueError, match=">= 0"):
        _core.prefetch_distances(-1, 0)
    with pytest.raises(ValueError, match="at most"):
        _core.prefetch_distances(4, 8)
    assert _core.prefetch_distances() == (0, 0)              # a refused setting changes nothing


@pytest.mark.parametrize("sampling", ["uniform", "permutation", "sequential"])
@pytest.mark.parametrize("k", [1, 7])
def test_models_identical_for_any_distance(sampling, k):
    X, y = generated()
    kw = dict(lam=1e-4, epochs=2, batch_size=k, sampling=sampling, seed=3, bias="feature", average_from=0.5)
    same_models([at(s, lambda: train(X, y, **kw)) for s in SETTINGS])


def test_float32_values_identical():
    X, y = generated(seed=1, dtype=np.float32)
    kw = dict(lam=1e-3, epochs=1, sampling="permutation", seed=2)
    same_models([at(s, lambda: train(X, y, **kw)) for s in SETTINGS])


def test_equal_to_dense_reference_with_prefetch():
    """The prefetching loop computes Fig. 1 as the dense reference does (not only as itself)."""
    X, y = generated(m=1500, n=120, seed=4)
    m, lam, T = X.shape[0], 1e-3, 3000
    order = np.random.default_rng(5).integers(0, m, size=T)
    model = at((16, 8), lambda: train(X, y, lam=lam, iterations=T, order=order, projection=True))
    w_ref, b_ref = ref.pegasos(X, y, lam, ref.cut_batches(order, 1, m, "uniform", T), projection=True,
                               radius2=1.0 / lam)
    assert ref.rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


def run_state(X, y, order, n_iter, k, n_threads=1, **state_kw):
    indptr, indices, data = csr_arrays(X)
    state = _core.LinearState(X.shape[1], 1e-3, **state_kw)
    state.run(indptr, indices, data, y, order, n_iter, k, None, n_threads)
    return state


def same_states(states):
    first = states[0]
    for setting, state in zip(SETTINGS[1:], states[1:]):
        for attr in ("a", "sqnorm", "A", "b", "b_sum", "n_avg", "t", "n_refold"):
            assert getattr(state, attr) == getattr(first, attr), (attr, setting)
        assert np.array_equal(state.weights()[0], first.weights()[0]), setting
        assert np.array_equal(state.average()[0], first.average()[0]), setting


@pytest.mark.skipif(not _core.OPENMP, reason="pegasos._core was built without OpenMP")
def test_threaded_batch_step_identical(monkeypatch):
    """The team's margin phase prefetches too; its iterates stay those of the serial loop."""
    monkeypatch.setattr(_core, "ADAPT", False)
    monkeypatch.setattr(_core, "PARALLEL_MIN_BATCH", 2)
    monkeypatch.setattr(_core, "PARALLEL_MIN_VALUES", 0)
    X, y = generated(seed=6)
    k = 24
    n_iter = math.ceil(X.shape[0] / k)
    order = np.random.default_rng(7).permutation(X.shape[0]).astype(np.int64)
    kw = dict(avg_start=5, bias_mode=1, projection=True)
    serial = at((0, 0), lambda: run_state(X, y, order, n_iter, k, 1, **kw))
    teams = [at(s, lambda: run_state(X, y, order, n_iter, k, 2, **kw)) for s in SETTINGS]
    assert all(s.team_iterations == n_iter for s in teams)
    same_states([serial] + teams[1:])
    same_states(teams)


def ranking_pairs(seed, order_seed):
    """X, relevance grades of 3 levels, and an order of 20000 drawn pairs (those of unequal grades) with
    the iterations of batches of 3 pairs it holds."""
    X, _ = generated(seed=seed)
    rng = np.random.default_rng(order_seed)
    grade = rng.integers(0, 3, size=X.shape[0]).astype(np.float64)
    a = rng.integers(0, X.shape[0], size=20000)
    b = rng.integers(0, X.shape[0], size=20000)
    keep = grade[a] != grade[b]
    order = np.stack([a[keep], b[keep]], axis=1).ravel().astype(np.int64)
    return X, grade, order, order.shape[0] // 2 // 3


def test_ranking_pairs_identical():
    """Pair mode prefetches both examples of a pair."""
    X, grade, order, n_iter = ranking_pairs(8, 9)
    states = [at(s, lambda: run_state(X, grade, order, n_iter, 3, pairs=True, avg_start=1)) for s in SETTINGS]
    assert states[0].t == n_iter
    same_states(states)


def test_threads_capped_keeps_result(monkeypatch):
    """train(n_threads=2) on the real thresholds (k large) gives the one-thread model with prefetching."""
    monkeypatch.setattr(linear, "available_cpus", lambda: 2)
    X, y = generated(seed=10)
    kw = dict(lam=1e-4, epochs=1, batch_size=64, sampling="permutation", seed=1)
    one = train(X, y, n_threads=1, **kw)
    two = train(X, y, n_threads=2, **kw)
    assert np.array_equal(one.w, two.w) and one.to_text() == two.to_text()


def test_dual_distance_is_set_checked_and_kept():
    assert _dual.prefetch_distance() == 16
    assert _dual.prefetch_distance(0) == 0
    with pytest.raises(ValueError, match=">= 0"):
        _dual.prefetch_distance(-1)
    assert _dual.prefetch_distance() == 0                    # a refused setting changes nothing


def dual_passes(X, y, lam, passes, dtype=np.float64):
    """alpha, v and the dual values of ``passes`` shrinking passes from alpha = 0 (hinge, no bias)."""
    Xc = X.astype(dtype).tocsr()
    m = Xc.shape[0]
    upper = np.full(m, 1.0 / (lam * m))
    diag = np.zeros(m)
    qii = np.asarray(Xc.multiply(Xc).sum(axis=1), dtype=np.float64).ravel()
    alpha = np.zeros(m)
    v = np.zeros(Xc.shape[1] + 1)
    run = certificate.ShrinkingPasses(Xc.indptr.astype(np.int64), Xc.indices.astype(np.int32), Xc.data,
                                      y, upper, diag, qii, 0.0, alpha, v, seed=7)
    values = []
    for _ in range(passes):
        assert run.run(1) == 1
        values.append(run.value)
    return alpha, v, values


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dual_passes_identical_for_any_distance(dtype):
    """Enough passes that shrinking removes coordinates (so the prefetched entry can move) and puts them back."""
    X, y = generated(m=3000, n=400, seed=6)
    got = [at_dual(d, lambda: dual_passes(X, y, 1e-4, 30, dtype)) for d in (0, None, 1, 3, 5000)]
    alpha0, v0, values0 = got[0]
    assert np.count_nonzero(alpha0 == 1.0 / (1e-4 * 3000)) > 0 and np.count_nonzero(alpha0 == 0) > 0
    for alpha, v, values in got[1:]:
        assert np.array_equal(alpha, alpha0) and np.array_equal(v, v0)
        assert values == values0


def at_dual(distance, fn):
    """fn() with the dual loop's prefetch distance (None: the library's default)."""
    chosen = _dual.prefetch_distance()
    try:
        if distance is not None:
            _dual.prefetch_distance(distance)
        return fn()
    finally:
        _dual.prefetch_distance(chosen)
