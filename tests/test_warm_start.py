"""Warm start: the solver state moved between runs continues them exactly.

1. ``_core.LinearState.get_state`` / ``set_state``: T1 iterations, the state
   moved into a new object, T2 more iterations give the bits of one run of
   T1 + T2 on the same order (hinge, k = 1 and 8, averaging on and off, the
   three bias modes).
2. ``set_state`` refuses a state of another problem (shape, settings).
3. ``pegasos.linear.fit_linear(init=...)`` through ``pegasos.train``: two
   sequential runs of one epoch equal one run of two epochs.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from pegasos import _core
from pegasos.errors import ParameterError
from pegasos.trainers import train


def problem(m=60, d=25, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(m, d, density=0.3, format="csr", random_state=seed, dtype=np.float64)
    X.sort_indices()
    w_true = rng.normal(size=d)
    y = np.where(X @ w_true + 0.1 * rng.normal(size=m) > 0, 1.0, -1.0)
    return X, y


def make_state(d, avg_start, bias_mode, lam=0.05, t0=3.0, projection=False):
    return _core.LinearState(d, lam, projection, avg_start, bias_mode, 0, 0.0, None, False, 1, t0)


def result(state):
    return state.average() if state.avg_start else state.weights()


@pytest.mark.parametrize("k", [1, 8])
@pytest.mark.parametrize("avg_start", [0, 1, 7])
@pytest.mark.parametrize("bias_mode", [0, 1, 2])
@pytest.mark.parametrize("projection", [False, True])
def test_state_moves_bit_for_bit(k, avg_start, bias_mode, projection):
    X, y = problem()
    m, d = X.shape
    order = np.random.default_rng(3).integers(0, m, size=40 * k).astype(np.int64)
    T1, T2 = 13, 27
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, y)
    one = make_state(d, avg_start, bias_mode, projection=projection)
    one.run(*args, order, T1 + T2, k)
    first = make_state(d, avg_start, bias_mode, projection=projection)
    first.run(*args, order[:T1 * k], T1, k)
    saved = first.get_state()
    second = make_state(d, avg_start, bias_mode, projection=projection)
    second.set_state(saved)
    assert second.t == T1
    second.run(*args, order[T1 * k:], T2, k)
    assert second.t == one.t == T1 + T2
    w1, w2 = result(one), result(second)
    np.testing.assert_array_equal(w1[0], w2[0])
    assert w1[1] == w2[1]
    np.testing.assert_array_equal(one.weights()[0], second.weights()[0])
    assert one.get_state()["n_avg"] == second.get_state()["n_avg"]
    # the saved dict is a copy: running on does not change it
    assert saved["t"] == T1
    np.testing.assert_array_equal(saved["v"], first.get_state()["v"])


def test_state_is_not_trivially_equal():
    """The continuation test above can fail: a state restarted from zero differs."""
    X, y = problem()
    m, d = X.shape
    order = np.arange(m, dtype=np.int64)
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, y)
    one = make_state(d, 0, 0)
    one.run(*args, np.r_[order, order], 2 * m, 1)
    fresh = make_state(d, 0, 0)
    fresh.run(*args, order, m, 1)
    fresh.run(*args, order, m, 1)
    np.testing.assert_array_equal(one.weights()[0], fresh.weights()[0])   # one object: t goes on
    restarted = make_state(d, 0, 0)
    restarted.run(*args, order, m, 1)
    assert not np.array_equal(one.weights()[0], restarted.weights()[0])


def test_get_state_holds_the_loop_variables():
    X, y = problem()
    d = X.shape[1]
    st = make_state(d, 1, 1)
    st.run(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, y,
           np.arange(X.shape[0], dtype=np.int64), 10, 1)
    s = st.get_state()
    assert s["v"].shape == (d + 1,) and s["u"].shape == (d + 1,)
    assert s["t"] == 10 and s["n_avg"] == 10 and s["avg_start"] == 1
    np.testing.assert_allclose(s["a"] * s["v"], st.weights()[0], rtol=0, atol=0)
    np.testing.assert_allclose((s["A"] * s["v"] - s["u"]) / s["n_avg"], st.average()[0], rtol=0, atol=0)
    assert make_state(d, 0, 0).get_state()["u"] is None


@pytest.mark.parametrize("change, message", [
    (dict(d=24), "n_features"),
    (dict(bias_mode=1), "n_features|shape|bias_mode"),
    (dict(lam=0.5), "lam"),
    (dict(t0=0.0), "t0"),
    (dict(avg_start=0), "average"),
    (dict(projection=True), "projection"),
])
def test_set_state_refuses_another_problem(change, message):
    base = dict(d=25, avg_start=1, bias_mode=0, lam=0.05, t0=3.0, projection=False)
    saved = make_state(**base).get_state()
    other = make_state(**{**base, **change})
    with pytest.raises(ValueError, match=message):
        other.set_state(saved)


@pytest.mark.parametrize("mutate", [
    lambda s: s.pop("t"),
    lambda s: s.update(v=np.zeros(3)),
    lambda s: s.update(u=np.zeros((5, 5))),
    lambda s: s.update(v=np.full(25, np.nan)),
    lambda s: s.update(t=-1),
    lambda s: s.update(a=0.0),
    lambda s: s.update(v="text"),
])
def test_set_state_refuses_bad_input(mutate):
    saved = make_state(25, 1, 0).get_state()
    mutate(saved)
    with pytest.raises(ValueError):
        make_state(25, 1, 0).set_state(saved)
    with pytest.raises(ValueError):
        make_state(25, 1, 0).set_state("not a dict")


SETTINGS = dict(lam=1e-2, sampling="sequential", step_offset=5.0, seed=3)


@pytest.mark.parametrize("k", [1, 8])
@pytest.mark.parametrize("averaging", [dict(average=True), dict(average_from=None)])
@pytest.mark.parametrize("bias", ["none", "feature", "unregularized"])
def test_fit_linear_continues_sequential_epochs(k, averaging, bias):
    X, y = problem(m=70)
    both = train(X, y, epochs=2, batch_size=k, bias=bias, **averaging, **SETTINGS)
    first = train(X, y, epochs=1, batch_size=k, bias=bias, **averaging, **SETTINGS)
    second = train(X, y, epochs=1, batch_size=k, bias=bias, init=first.solver_state, **averaging, **SETTINGS)
    np.testing.assert_array_equal(both.w, second.w)
    assert both.bias == second.bias
    assert second.solver_state["t"] == both.solver_state["t"] == 2 * -(-70 // k)
    assert not np.array_equal(first.w, second.w)


def test_fit_linear_init_of_another_problem_is_a_parameter_error():
    X, y = problem()
    first = train(X, y, epochs=1, **SETTINGS)
    with pytest.raises(ParameterError, match="init: .*lam"):
        train(X, y, epochs=1, init=first.solver_state, **{**SETTINGS, "lam": 0.5})


def test_solver_state_is_not_in_the_model_file(tmp_path):
    X, y = problem()
    model = train(X, y, epochs=1, **SETTINGS)
    assert model.solver_state is not None
    model.save(tmp_path / "m")
    text = (tmp_path / "m").read_text()
    assert "solver_state" not in text and "n_refold" not in text


@pytest.mark.parametrize("sampling, k, T1, T2", [
    ("permutation", 1, 70, 140), ("permutation", 8, 9, 18), ("uniform", 1, 33, 50), ("uniform", 8, 5, 12),
])
@pytest.mark.parametrize("averaging", [dict(average=True), dict(average_from=None)])
def test_fit_linear_continues_the_random_order(sampling, k, T1, T2, averaging):
    """The generator state travels with the solver state: runs of T1 and T2
    iterations are one run of T1 + T2 (permutation: T1 a whole number of epochs)."""
    X, y = problem(m=70)
    settings = {**SETTINGS, "sampling": sampling, "batch_size": k, **averaging}
    both = train(X, y, iterations=T1 + T2, **settings)
    first = train(X, y, iterations=T1, **settings)
    second = train(X, y, iterations=T2, init=first.solver_state, **settings)
    np.testing.assert_array_equal(both.w, second.w)
    restarted = train(X, y, iterations=T2, init={**first.solver_state, "rng": None, "sampling": None, "orders": None},
                      **settings)
    assert not np.array_equal(both.w, restarted.w)     # the generator state is what makes them equal


@pytest.mark.parametrize("rng", ["text", {"bit_generator": "PCG64", "state": 3}, {"bit_generator": "PCG64"},
                                 {"bit_generator": "PCG64", "state": {"state": -1, "inc": 1}, "has_uint32": 0,
                                  "uinteger": 0}])
def test_fit_linear_refuses_a_broken_generator_state(rng):
    X, y = problem()
    settings = {**SETTINGS, "sampling": "permutation"}
    first = train(X, y, epochs=1, **settings)
    with pytest.raises(ParameterError, match="generator"):
        train(X, y, epochs=1, init={**first.solver_state, "rng": rng, "orders": None}, **settings)
    with pytest.raises(ParameterError, match="generator"):
        train(X, y, epochs=1, init={**first.solver_state, "orders": {**first.solver_state["orders"], "rng": rng}},
              **settings)


def reference_pegasos_from(X, y, lam, order, w1, t0=0.0):
    """Dense NumPy Fig. 1 (k = 1, hinge, no projection) from w_1 = w1, with
    eta_t = 1/(lambda (t + t0))."""
    A = X.toarray()
    w = np.array(w1, dtype=np.float64)
    for t, i in enumerate(order, start=1):
        eta = 1.0 / (lam * (t + t0))
        margin = y[i] * A[i] @ w
        w = (1.0 - eta * lam) * w
        if margin < 1.0:
            w = w + eta * y[i] * A[i]
    return w


@pytest.mark.parametrize("t0", [0.0, 5.0])
def test_start_runs_a_fresh_schedule_from_the_given_weights(t0):
    """fit_linear(start=(w, 0)) is Fig. 1 from w_1 = w (t counts from 1 again)."""
    from pegasos.examples import as_examples
    from pegasos.linear import fit_linear
    from pegasos.options import TrainOptions

    X, y = problem()
    rng = np.random.default_rng(3)
    w1 = rng.normal(size=X.shape[1] + 4)          # longer than the data: the extra entries are dropped
    order = rng.integers(0, X.shape[0], size=150)
    options = TrainOptions(lam=0.05, iterations=150, sampling="uniform", average=False, step_offset=t0,
                           preset="paper")
    model = fit_linear(as_examples((X, y)), options, order=order, start=(w1, 0.0))
    expected = reference_pegasos_from(X, y, 0.05, order, w1[:X.shape[1]], t0)
    np.testing.assert_allclose(model.w, expected, rtol=1e-10, atol=1e-12)
    cold = fit_linear(as_examples((X, y)), options, order=order)
    if t0 == 0.0:
        # eta_1 lambda = 1: the paper's schedule scales w_1 by 0 at t = 1, so it forgets any start
        assert np.array_equal(cold.w, model.w)
    else:
        assert np.max(np.abs(cold.w - model.w)) > 1e-3       # the start mattered
    zero = fit_linear(as_examples((X, y)), options, order=order, start=(np.zeros(3), 0.0))
    assert np.array_equal(zero.w, cold.w)                      # a zero start is the cold run, bit for bit


def test_start_is_projected_and_refuses_non_finite_weights():
    from pegasos.examples import as_examples
    from pegasos.linear import fit_linear
    from pegasos.options import TrainOptions

    X, y = problem()
    options = TrainOptions(lam=0.05, iterations=1, sampling="uniform", average=False, projection=True,
                           preset="paper")
    with pytest.raises(ParameterError, match="not finite"):
        fit_linear(as_examples((X, y)), options, start=(np.full(X.shape[1], np.nan), 0.0))
    with pytest.raises(ParameterError, match="exclude"):
        first = fit_linear(as_examples((X, y)), options)
        fit_linear(as_examples((X, y)), options, start=(first.w, 0.0), init=first.solver_state)
