"""The helper thread of the training loop changes no result (csrc/warm.h).

``LinearState.run`` can start a second thread that walks the order ahead of
the loop and reads the rows it will visit (``_core.prefetch_thread``).  It
only reads, so the iterates must be bit-identical with it on and off: every
sampling, k = 1 and k > 1, ranking pairs, float32 values, the averaging
state, and whole models through ``train`` with two threads allowed.  The
helper must really run when asked (it reports the rows it read), stay off in
the automatic mode on sets that fit in the caches and on orders in row
order, and end with every call, whatever the lengths involved.
"""

import numpy as np
import pegasos
import pytest

from pegasos import _core, _dual, linear
from pegasos.trainers import train
from test_prefetch import generated, ranking_pairs, run_state

MODES = ("off", "on")


@pytest.fixture(autouse=True)
def restore_helper():
    chosen = _core.prefetch_thread()
    yield
    _core.prefetch_thread(*chosen)


def with_helper(mode, fn, ahead=None, hint=None):
    chosen = _core.prefetch_thread()
    try:
        _core.prefetch_thread(mode, ahead, hint)
        return fn()
    finally:
        _core.prefetch_thread(*chosen)


def assert_same_state(a, b):
    for attr in ("a", "sqnorm", "A", "b", "b_sum", "n_avg", "t", "n_refold"):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert np.array_equal(a.weights()[0], b.weights()[0])
    assert np.array_equal(a.average()[0], b.average()[0])


def test_settings_are_checked_and_kept():
    assert _core.prefetch_thread() == ("auto", 256, 16)
    assert _core.prefetch_thread("on", 64, 0) == ("on", 64, 0)
    assert _core.prefetch_thread() == ("on", 64, 0)
    for bad in (dict(mode="sometimes"), dict(ahead=0), dict(hint=-1)):
        with pytest.raises(ValueError, match="helper thread"):
            _core.prefetch_thread(**bad)
    assert _core.prefetch_thread() == ("on", 64, 0)            # a refused setting changes nothing


@pytest.mark.parametrize("sampling", ["permutation", "uniform", "sequential"])
@pytest.mark.parametrize("k", [1, 7])
@pytest.mark.parametrize("ahead,hint", [(None, None), (1, 0), (3, 40), (100000, 100000)])
def test_states_identical_with_the_helper(sampling, k, ahead, hint):
    X, y = generated(seed=11)
    m = X.shape[0]
    rng = np.random.default_rng(12)
    order = {"permutation": rng.permutation(m), "uniform": rng.integers(0, m, size=m),
             "sequential": np.arange(m)}[sampling].astype(np.int64)
    n_iter = -(-m // k)
    kw = dict(avg_start=40, bias_mode=1, projection=True)
    off = with_helper("off", lambda: run_state(X, y, order, n_iter, k, **kw))
    on = with_helper("on", lambda: run_state(X, y, order, n_iter, k, **kw), ahead, hint)
    assert off.warm_rows == -1
    assert 0 <= on.warm_rows <= m          # it ran (it may be stopped before the end of the order)
    assert_same_state(off, on)


def test_a_short_call_and_an_order_longer_than_the_call():
    """The helper walks only the entries the call visits; a 1-iteration call starts and ends one too."""
    X, y = generated(seed=13)
    order = np.random.default_rng(14).permutation(X.shape[0]).astype(np.int64)
    for n_iter in (1, 2, 500):
        off = with_helper("off", lambda: run_state(X, y, order, n_iter, 3, avg_start=1))
        on = with_helper("on", lambda: run_state(X, y, order, n_iter, 3, avg_start=1))
        assert 0 <= on.warm_rows <= 3 * n_iter
        assert_same_state(off, on)


def test_ranking_pairs_identical_with_the_helper():
    X, grade, order, n_iter = ranking_pairs(15, 16)
    off = with_helper("off", lambda: run_state(X, grade, order, n_iter, 3, pairs=True, avg_start=1))
    on = with_helper("on", lambda: run_state(X, grade, order, n_iter, 3, pairs=True, avg_start=1))
    assert on.warm_rows >= 0
    assert_same_state(off, on)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_models_identical_through_train(monkeypatch, dtype):
    """train(n_threads=2), k = 1 (the serial loop, so the helper's core is free): the same model text."""
    monkeypatch.setattr(linear, "available_cpus", lambda: 2)
    X, y = generated(seed=17, dtype=dtype)
    kw = dict(lam=1e-4, epochs=3, sampling="permutation", seed=4, average_from=0.5, n_threads=2)
    off = with_helper("off", lambda: train(X, y, **kw))
    on = with_helper("on", lambda: train(X, y, **kw))
    assert np.array_equal(off.w, on.w)
    assert off.to_text() == on.to_text()


def test_automatic_mode_starts_only_where_it_can_help(monkeypatch):
    X, y = generated(seed=18)
    m = X.shape[0]
    perm = np.random.default_rng(19).permutation(m).astype(np.int64)
    # a set far below WARM_MIN_BYTES: not started, even with two threads allowed
    assert with_helper("auto", lambda: run_state(X, y, perm, m, 1, n_threads=2)).warm_rows == -1
    monkeypatch.setattr(_core, "WARM_MIN_BYTES", 0)
    monkeypatch.setattr(_core, "WARM_MIN_ENTRIES", 0)
    assert with_helper("auto", lambda: run_state(X, y, perm, m, 1, n_threads=2)).warm_rows >= 0
    # one thread allowed, or rows in file order: not started
    assert with_helper("auto", lambda: run_state(X, y, perm, m, 1, n_threads=1)).warm_rows == -1
    in_order = np.arange(m, dtype=np.int64)
    assert with_helper("auto", lambda: run_state(X, y, in_order, m, 1, n_threads=2)).warm_rows == -1
    # too few entries for a thread's start
    monkeypatch.setattr(_core, "WARM_MIN_ENTRIES", m + 1)
    assert with_helper("auto", lambda: run_state(X, y, perm, m, 1, n_threads=2)).warm_rows == -1


def test_empty_rows_and_no_values():
    """Rows without values (and a matrix with none at all) are walked without reading anything."""
    X, y = generated(m=300, seed=20)
    X = X.tolil()
    X[::2] = 0
    X = X.tocsr()
    X.eliminate_zeros()
    order = np.random.default_rng(21).permutation(X.shape[0]).astype(np.int64)
    off = with_helper("off", lambda: run_state(X, y, order, 300, 1, avg_start=1))
    on = with_helper("on", lambda: run_state(X, y, order, 300, 1, avg_start=1))
    assert_same_state(off, on)
    Z = X.multiply(0).tocsr()
    Z.eliminate_zeros()
    assert Z.nnz == 0
    state = with_helper("on", lambda: run_state(Z, y, order, 300, 1))
    assert state.warm_rows == -1                    # nothing to read: no helper


# -- the dual passes (pegasos._dual.coordinate_ascent_shrinking) --------------------------------------------


@pytest.fixture
def restore_dual_helper():
    chosen = _dual.prefetch_thread()
    yield
    _dual.prefetch_thread(*chosen)


def dual_run(X, y, lam, passes, mode, dtype=np.float64, helper=False, ahead=None, hint=None):
    """alpha, v, the dual values, the helpers started and the counts of ``passes`` shrinking passes from
    alpha = 0."""
    Xc = X.astype(dtype).tocsr()
    m = Xc.shape[0]
    indptr, indices = Xc.indptr.astype(np.int64), Xc.indices.astype(np.int32)
    upper, diag = np.full(m, 1.0 / (lam * m)), np.zeros(m)
    qii = np.asarray(Xc.multiply(Xc).sum(axis=1), dtype=np.float64).ravel()
    alpha, v = np.zeros(m), np.zeros(Xc.shape[1] + 1)
    active = np.arange(m, dtype=np.int64)
    counts = np.array([m, 0], dtype=np.int64)
    bounds = np.array([np.inf, -np.inf, 0.1])
    state = np.array([7], dtype=np.uint64)
    values, helpers = np.empty(passes), np.zeros(2, dtype=np.int64)
    chosen = _dual.prefetch_thread()
    try:
        _dual.prefetch_thread(mode, ahead, hint)
        done = _dual.coordinate_ascent_shrinking(indptr, indices, Xc.data, y, upper, diag, qii, 0.0, alpha, v, active,
                                                 counts, bounds, state, passes, values, helper=helper,
                                                 helper_counts=helpers)
    finally:
        _dual.prefetch_thread(*chosen)
    assert done == passes
    assert 0 <= helpers[1] <= helpers[0] * m
    return alpha, v, values, int(helpers[0]), counts.copy()


def test_dual_settings_are_checked_and_kept(restore_dual_helper):
    assert _dual.prefetch_thread() == ("auto", 256, 16)
    assert _dual.prefetch_thread("off", 8, 2) == ("off", 8, 2)
    with pytest.raises(ValueError, match="helper thread"):
        _dual.prefetch_thread("maybe")
    assert _dual.prefetch_thread() == ("off", 8, 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ahead,hint", [(None, None), (1, 0), (7, 300)])
def test_dual_passes_identical_with_the_helper(dtype, ahead, hint):
    """Enough passes for shrinking to move coordinates within the order the helper copied, and back."""
    X, y = generated(m=3000, n=400, seed=6)
    a0, v0, d0, helpers0, c0 = dual_run(X, y, 1e-4, 30, "off", dtype)
    a1, v1, d1, helpers1, c1 = dual_run(X, y, 1e-4, 30, "on", dtype, ahead=ahead, hint=hint)
    assert np.count_nonzero(a0 == 1.0 / (1e-4 * 3000)) > 0 and np.count_nonzero(a0 == 0) > 0
    assert c0[0] < 3000 or np.array_equal(c0, c1)          # (shrinking removed some, or all came back)
    assert np.array_equal(a0, a1) and np.array_equal(v0, v1) and np.array_equal(d0, d1)
    assert np.array_equal(c0, c1)
    assert helpers0 == 0 and helpers1 == 30     # a helper for each pass (it may be stopped before a row)


def test_dual_automatic_mode_needs_the_caller_and_a_large_set(monkeypatch):
    X, y = generated(m=2000, n=300, seed=22)
    assert dual_run(X, y, 1e-3, 3, "auto", helper=True)[3] == 0       # far below WARM_MIN_BYTES
    monkeypatch.setattr(_dual, "WARM_MIN_BYTES", 0)
    monkeypatch.setattr(_dual, "WARM_MIN_ENTRIES", 0)
    assert dual_run(X, y, 1e-3, 3, "auto", helper=False)[3] == 0      # the caller keeps to one processor
    # timed: the first pass with the helper, the second without, the third the faster way
    assert dual_run(X, y, 1e-3, 3, "auto", helper=True)[3] in (1, 2)
    assert dual_run(X, y, 1e-3, 1, "auto", helper=True)[3] == 1


def helper_calls(monkeypatch, module, name):
    """The ``helper`` keyword of every call of ``module.name`` from now on, in a list."""
    seen = []
    real = getattr(module, name)

    def spy(*args, **keywords):
        seen.append(keywords["helper"])
        return real(*args, **keywords)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_the_finish_may_use_the_helper_only_with_two_threads(monkeypatch):
    from pegasos import finish

    X, y = generated(m=200, seed=23)
    seen = helper_calls(monkeypatch, finish, "finish_problem")
    monkeypatch.setattr(linear, "available_cpus", lambda: 2)
    pegasos.fit((X, y), lam=1e-3, n_threads=2)
    pegasos.fit((X, y), lam=1e-3, n_threads=1)
    monkeypatch.setattr(linear, "available_cpus", lambda: 1)
    pegasos.fit((X, y), lam=1e-3, n_threads=2)
    assert seen == [True, False, False]


def test_the_gap_is_the_same_with_the_helper(monkeypatch):
    """duality_gap(helper=True) (objective --gap on two processors): the same numbers,
    binary and one-vs-rest, and the helper did run."""
    import pegasos

    X, y = generated(m=3000, n=400, seed=24)
    model = train(X, y, lam=1e-4, epochs=2, sampling="permutation", seed=1, average_from=0.5)
    monkeypatch.setattr(_dual, "WARM_MIN_BYTES", 0)
    monkeypatch.setattr(_dual, "WARM_MIN_ENTRIES", 0)
    calls = helper_calls(monkeypatch, _dual, "coordinate_ascent_shrinking")
    plain = pegasos.duality_gap(model, X, y, return_alpha=True)
    assert calls and not any(calls)
    calls.clear()
    helped = pegasos.duality_gap(model, X, y, return_alpha=True, helper=True)
    assert calls and all(calls)
    assert np.array_equal(plain["alpha"], helped["alpha"]) and plain["dual"] == helped["dual"]
    labels = np.arange(X.shape[0]) % 3
    multi = pegasos.fit((X, labels), lam=1e-3, epochs=1, finish="none")
    a = pegasos.duality_gap(multi, X, labels, passes=5)
    b = pegasos.duality_gap(multi, X, labels, passes=5, helper=True)
    assert a["dual"] == b["dual"] and a["rel_gap"] == b["rel_gap"]


def test_a_helper_that_waits_long_sleeps_and_skips_to_the_loop():
    """Batches of 1500 publish the loop's position once an iteration: a helper 1 entry ahead waits a whole
    batch (it sleeps after its spins), then finds itself behind and skips to the loop's position."""
    X, y = generated(seed=25)
    order = np.random.default_rng(26).permutation(X.shape[0]).astype(np.int64)
    n_iter = -(-X.shape[0] // 1500)
    off = with_helper("off", lambda: run_state(X, y, order, n_iter, 1500, avg_start=1))
    on = with_helper("on", lambda: run_state(X, y, order, n_iter, 1500, avg_start=1), ahead=1, hint=0)
    assert 0 <= on.warm_rows < X.shape[0]          # it skipped the rows the loop had passed
    assert_same_state(off, on)


def test_the_automatic_mode_times_both_ways_and_keeps_the_result(monkeypatch):
    """Where the processors are busy the helper only takes the loop's time (measured twice as slow): the
    automatic mode runs chunks with and without it, keeps the faster and times the slower again; the
    iterates are those of one call without it."""
    X, y = generated(seed=27)
    m = X.shape[0]
    order = np.random.default_rng(28).permutation(m).astype(np.int64)
    monkeypatch.setattr(_core, "WARM_MIN_BYTES", 0)
    monkeypatch.setattr(_core, "WARM_MIN_ENTRIES", 0)
    monkeypatch.setattr(_core, "WARM_CHUNK_ENTRIES", 200)
    monkeypatch.setattr(_core, "WARM_PROBE", 3)
    for k in (1, 7):
        n_iter = -(-m // k)
        off = with_helper("off", lambda: run_state(X, y, order, n_iter, k, avg_start=3))
        auto = with_helper("auto", lambda: run_state(X, y, order, n_iter, k, n_threads=2, avg_start=3))
        chunks = -(-n_iter // max(1, 200 // k))
        assert auto.warm_chunks + auto.cold_chunks == chunks
        assert auto.warm_chunks >= 1 and auto.cold_chunks >= chunks // 4     # the first chunk, and the probes
        assert_same_state(off, auto)


def test_the_dual_passes_keep_their_timings_from_call_to_call(monkeypatch):
    """ShrinkingPasses hands its timing array to every call: one pass a call still alternates, then keeps
    the faster way, instead of starting the helper at every call's first pass."""
    X, y = generated(m=2000, n=300, seed=29)
    monkeypatch.setattr(_dual, "WARM_MIN_BYTES", 0)
    monkeypatch.setattr(_dual, "WARM_MIN_ENTRIES", 0)
    m = X.shape[0]
    upper, diag = np.full(m, 1.0 / (1e-3 * m)), np.zeros(m)
    qii = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    from pegasos import certificate

    run = certificate.ShrinkingPasses(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, y, upper,
                                      diag, qii, 0.0, np.zeros(m), np.zeros(X.shape[1] + 1), seed=3, helper=True)
    for _ in range(6):
        run.run(1)
    on, off, since = run._helper_timing
    assert on > 0 and off > 0 and since >= 1
