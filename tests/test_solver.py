"""Tests of the linear Pegasos solver (pegasos.linear over pegasos._core).

1. Exactness against the dense NumPy reference in ``reference.py`` (Fig. 1,
   Fig. 2, projection, averaging, both bias modes) fed the same batches.
2. Sequential k = 1 equals the authors'-style dense loop.
3. Exact values of the shared cases (/work/shared/cases) through the API.
4. Facts from the paper: ||w_2|| = ||x||/lambda, the projection radius,
   Eq. (13).
5. Convergence on a9a and w8a to the reference optima of
   /work/shared/data/README.md.
6. Parameter errors.
"""

import math
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

import reference as ref
from reference import rel_err
from conftest import case_file, data_file
from pegasos import _core
from pegasos.errors import ParameterError
from pegasos.scoring import evaluate, objective
from pegasos.io import load_svmlight
from pegasos.trainers import train
from pegasos.data import csr_arrays
from pegasos.labels import BinaryLabels
from pegasos.sampling import BLOCK_SAMPLES

SAMPLINGS = ("uniform", "permutation", "sequential")
BIASES = ("none", "feature", "unregularized")
EXACT = 1e-9          # max |w - w_ref| / max |w_ref|


# ----------------------------------------------------------------- helpers --

def expected_T(m, k, epochs, sampling):
    """T for ``epochs`` passes, as documented: ceil(epochs m / k) draws of k
    (uniform), ceil(epochs * ceil(m/k)) batches (permutation, sequential)."""
    if sampling == "uniform":
        return math.ceil(epochs * m / k)
    return math.ceil(epochs * math.ceil(m / k))


def sampler_order(m, k, sampling, seed, T):
    """The visiting order ``train(seed=seed)`` draws, rebuilt from the
    documented Generator calls: PCG64(seed); uniform = blocks of
    rng.integers(0, m, size=n*k) with n = min(left, max(1, 2**20 // k));
    permutation = rng.permutation(m) per epoch; sequential = file order."""
    rng = np.random.Generator(np.random.PCG64(seed))
    if sampling == "uniform":
        parts, done = [], 0
        while done < T:
            n = min(T - done, max(1, BLOCK_SAMPLES // k))
            parts.append(rng.integers(0, m, size=n * k, dtype=np.int64))
            done += n
        return np.concatenate(parts)
    epochs = math.ceil(T / math.ceil(m / k))
    if sampling == "permutation":
        return np.concatenate([rng.permutation(m) for _ in range(epochs)]).astype(np.int64)
    return np.tile(np.arange(m, dtype=np.int64), epochs)




def scipy_objective(X, y, w, lam, b=0.0, bias="none"):
    """lambda/2 ||w||^2 (+ b^2 for the feature bias) + mean hinge, from scipy
    sparse algebra, labels mapped with the larger value as +1."""
    ypm = np.where(y == np.max(y), 1.0, -1.0)
    f = X @ w + b
    sq = float(w @ w) + (b * b if bias == "feature" else 0.0)
    return 0.5 * lam * sq + float(np.maximum(0.0, 1.0 - ypm * f).mean())


def load_case(name, **kw):
    return load_svmlight(str(case_file(name)), **kw)


def accuracy(model, X, y):
    return float(np.mean(model.predict(X) == y))


# ---------------------------------------------------------------- problems --

def _random_problem():
    """60 x 25 sparse problem, ~25% dense, with empty rows, an unused column,
    non-unit scale and labels 1/2 (2 is the positive class)."""
    rng = np.random.default_rng(20240601)
    m, n = 60, 25
    dense = rng.normal(scale=1.5, size=(m, n)) * (rng.random((m, n)) < 0.25)
    dense[[3, 17, 41]] = 0.0          # label-only examples
    dense[:, 9] = 0.0                 # a feature no example uses
    w_true = rng.normal(size=n)
    score = dense @ w_true + 0.7 * rng.normal(size=m)
    y = np.where(score > 0, 2.0, 1.0)
    return sp.csr_matrix(dense), y


@pytest.fixture(scope="module")
def problems():
    Xh, yh = load_svmlight(str(data_file("heart_scale/heart_scale")))
    Xr, yr = _random_problem()
    out = {}
    for name, X, y, lam in (("heart_scale", Xh, yh, 0.01), ("random", Xr, yr, 0.05)):
        out[name] = (X, y, ref.labels_pm(y), X.toarray(), lam)
    return out


# ============================================================ 1. exactness ==

@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("output", ["last", "average", "suffix"])
@pytest.mark.parametrize("projection", [False, True], ids=["noproj", "proj"])
@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("k", [1, 7, "m"])
@pytest.mark.parametrize("problem", ["heart_scale", "random"])
def test_matches_dense_reference(problems, problem, k, sampling, projection, output, bias):
    """train() (seeded sampler) == reference fed the same batches; and
    train(order=...) with that order gives bit-identical weights."""
    X, y, ypm, Xd, lam = problems[problem]
    m = X.shape[0]
    k = m if k == "m" else k
    epochs, seed = 2.5, 11          # a partial last epoch; 270 = 38*7 + 4 and 60 = 8*7 + 4
    T = expected_T(m, k, epochs, sampling)
    kw = dict(lam=lam, epochs=epochs, batch_size=k, sampling=sampling, projection=projection, bias=bias,
              seed=seed, average=output == "average", average_from=0.5 if output == "suffix" else None)
    model = train(X, y, **kw)
    assert model.info["iterations"] == str(T)

    order = sampler_order(m, k, sampling, seed, T)
    start = {"last": None, "average": 1, "suffix": max(1, math.ceil(0.5 * T))}[output]
    w_ref, b_ref = ref.pegasos(Xd, ypm, lam, ref.cut_batches(order, k, m, sampling, T),
                               projection=projection, average_from_t=start, bias=bias)
    assert rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT
    if bias == "none":
        assert model.bias == 0.0

    again = train(X, y, order=order, **kw)
    np.testing.assert_array_equal(again.w, model.w)
    assert again.bias == model.bias


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_float32_data_matches_reference(problems, sampling):
    """float32 values are used as they are (widened to float64 in the sums)."""
    X, y, ypm, _, lam = problems["random"]
    X32 = X.astype(np.float32)
    m, k = X.shape[0], 7
    model = train(X32, y, lam=lam, epochs=3, batch_size=k, sampling=sampling, seed=3, average_from=0.25)
    T = expected_T(m, k, 3, sampling)
    order = sampler_order(m, k, sampling, 3, T)
    w_ref, b_ref = ref.pegasos(X32.toarray().astype(np.float64), ypm, lam, ref.cut_batches(order, k, m, sampling, T),
                               average_from_t=max(1, math.ceil(0.25 * T)))
    assert rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


def test_uniform_sampler_crosses_block_boundary(problems):
    """T k > 2**20 draws: the uniform sampler continues the same generator in
    a second block; the seeded run equals the reference on that order."""
    X, y, ypm, Xd, lam = problems["heart_scale"]
    m, k = X.shape[0], 270
    T = BLOCK_SAMPLES // k + 40
    model = train(X, y, lam=lam, iterations=T, batch_size=k, sampling="uniform", seed=5)
    order = sampler_order(m, k, "uniform", 5, T)
    w_ref, b_ref = ref.pegasos(Xd, ypm, lam, ref.cut_batches(order, k, m, "uniform", T))
    assert rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


@pytest.mark.parametrize("lam", [1e-6, 1e-5, 1e-3, 0.1, 49.0])
@pytest.mark.parametrize("projection", [False, True], ids=["noproj", "proj"])
def test_lambda_range_all_outputs(problems, lam, projection):
    """Small and large lambda (1e-5 and 49 are values for which
    1 - (1/lambda)*lambda is not exactly 0 in floating point)."""
    X, y, ypm, Xd, _ = problems["heart_scale"]
    m, k, T = X.shape[0], 3, 3000
    order = np.random.default_rng(7).integers(0, m, size=T * k)
    batches = ref.cut_batches(order, k, m, "uniform", T)
    out = ref.pegasos_outputs(Xd, ypm, lam, batches, projection=projection, average_starts=(1, 1500))
    for average_from, key in ((None, "last"), (0.0, 1), (0.5, 1500)):
        model = train(X, y, lam=lam, iterations=T, batch_size=k, order=order, projection=projection,
                      average_from=average_from)
        assert rel_err(model.w, model.bias, *out[key]) <= EXACT, key


@pytest.mark.parametrize("setting", [
    dict(k=1, T=200_000, bias="none", lam=1e-6),
    dict(k=7, T=30_000, bias="feature", lam=1e-6),
    dict(k=1, T=50_000, bias="unregularized", lam=1e-5),
], ids=["k1-T2e5-none", "k7-T3e4-feature", "k1-T5e4-unreg"])
def test_long_run_small_lambda_refolds(problems, setting):
    """LinearState driven directly on heart_scale with a tiny lambda and
    projection: the scale a of w = a v falls below 1e-9, so v is refolded
    (n_refold > 0); last iterate, full average and suffix average still
    equal the dense reference."""
    X, y, ypm, Xd, _ = problems["heart_scale"]
    k, T, bias, lam = setting["k"], setting["T"], setting["bias"], setting["lam"]
    m, n = X.shape
    order = np.random.default_rng(T).integers(0, m, size=T * k)
    indptr, indices, data = csr_arrays(X)
    code = {"none": 0, "feature": 1, "unregularized": 2}[bias]
    states = {}
    for s in (1, T // 2):
        st = _core.LinearState(n, lam, True, s, code)
        # in two calls, to cross a call boundary as train() does between blocks
        st.run(indptr, indices, data, ypm, order[:(T // 3) * k], T // 3, k)
        st.run(indptr, indices, data, ypm, order[(T // 3) * k:], T - T // 3, k)
        assert st.t == T
        assert st.n_refold > 0
        states[s] = st
    out = ref.pegasos_outputs(Xd, ypm, lam, ref.cut_batches(order, k, m, "uniform", T), projection=True,
                              bias=bias, average_starts=(1, T // 2))

    def split(w, b):
        return (w[:-1], w[-1]) if bias == "feature" else (w, b)

    assert rel_err(*split(*states[1].weights()), *out["last"]) <= EXACT
    for s, st in states.items():
        w, b, count = st.average()
        assert count == T - s + 1
        assert rel_err(*split(w, b), *out[s]) <= EXACT, s


def test_no_projection_long_run_scale_is_one_over_t(problems):
    """Without projection a = 1/t after the t = 1 reset (notes Sec. 1.9.2):
    no refold in 2e5 steps, and the long run still matches the reference."""
    X, y, ypm, Xd, _ = problems["heart_scale"]
    m, n = X.shape
    T, lam = 200_000, 1e-6
    order = np.random.default_rng(1).integers(0, m, size=T)
    indptr, indices, data = csr_arrays(X)
    st = _core.LinearState(n, lam, False, 0, 0)
    st.run(indptr, indices, data, ypm, order, T, 1)
    assert st.n_refold == 0
    assert st.a == pytest.approx(1.0 / T, rel=1e-9)
    w_ref, _ = ref.pegasos(Xd, ypm, lam, ref.cut_batches(order, 1, m, "uniform", T))
    assert rel_err(st.weights()[0], 0.0, w_ref, 0.0) <= EXACT


# ====================================================== 2. authors' loop ==

@pytest.mark.parametrize("source,lam,epochs", [
    ("heart_scale", 0.01, 3),
    ("heart_scale", 1e-4, 2),
    ("random", 0.05, 5),
    ("CASE-17", 0.01, 100),
])
def test_sequential_equals_matlab_style_loop(problems, source, lam, epochs):
    if source == "CASE-17":
        X, y = load_case("CASE-17.svm")
    else:
        X, y = problems[source][:2]
    model = train(X, y, lam=lam, epochs=epochs, batch_size=1, sampling="sequential")
    w_ref = ref.pegasos_matlab_style(X, ref.labels_pm(y), lam, epochs)
    assert rel_err(model.w, model.bias, w_ref, 0.0) <= EXACT


# ==================================================== 3. the shared cases ==

def sequential(X, y, lam, epochs, **kw):
    return train(X, y, lam=lam, epochs=epochs, sampling="sequential", **kw)


@pytest.mark.parametrize("k,epochs", [(1, 1), (2, 2)])
def test_margin_exactly_one_is_not_a_violation(k, epochs):
    """Fig. 1 / Fig. 2 update only when y <w_t, x> < 1 (strict).  Here
    w_2 = 1 and at t = 2 every margin is exactly 1, so w_3 = w_2 / 2."""
    X = sp.csr_matrix(np.array([[1.0], [-1.0]]))
    y = np.array([1.0, -1.0])
    model = sequential(X, y, 1.0, epochs, batch_size=k)
    assert model.info["iterations"] == "2"
    assert model.w[0] == 0.5


@pytest.mark.parametrize("k,epochs,w1,w2,steps", [
    (1, 1, -10 / 3, 10 / 3, 3),
    (1, 3, -10 / 9, 10 / 9, 9),
    (2, 1, -5 / 2, 5 / 2, 2),
    (2, 3, -5 / 6, 5 / 6, 6),
    (3, 1, 0.0, 40 / 3, 1),
    (3, 3, -20 / 9, 10 / 3, 3),
])
def test_case13_first_step_zero_factor(k, epochs, w1, w2, steps):
    X, y = load_case("CASE-13.svm")
    model = sequential(X, y, 0.1, epochs, batch_size=k)
    assert model.info["iterations"] == str(steps)
    assert np.all(np.isfinite(model.w))
    np.testing.assert_allclose(model.w, [w1, w2], rtol=1e-12, atol=1e-12)
    if (k, epochs) == (1, 1):
        assert objective(model, X, y)["objective"] == pytest.approx(10 / 9, rel=1e-12)


def test_case12_label_only_lines():
    X, y = load_case("CASE-12.svm")
    assert X.shape[0] == 4
    model = sequential(X, y, 1.0, 1)
    assert model.info["iterations"] == "4"
    np.testing.assert_allclose(model.w, [-0.25, -0.125], rtol=1e-12)
    assert objective(model, X, y)["objective"] == pytest.approx(0.9609375, rel=1e-12)
    assert scipy_objective(X, y, model.w, 1.0) == pytest.approx(0.9609375, rel=1e-12)
    np.testing.assert_allclose(model.decision_function(X), [0.0, -0.25, 0.0, -0.0625], rtol=1e-12, atol=1e-15)


def test_case09_test_features_differ_from_training():
    X, y = load_case("CASE-09.train.svm")
    model = sequential(X, y, 1.0, 1)
    assert model.n_features == 3
    np.testing.assert_allclose(model.w, [0.5, 0.0, -0.5], rtol=1e-12, atol=1e-15)
    Xt, yt = load_case("CASE-09.test.svm")           # 9 columns, 5 and 9 unseen
    assert Xt.shape[1] > 3
    np.testing.assert_allclose(model.decision_function(Xt), [1.0, -0.5, 0.5], rtol=1e-12)
    np.testing.assert_array_equal(model.predict(Xt), [1.0, -1.0, 1.0])
    assert evaluate(model, Xt, yt)["accuracy"] == 1.0
    Xs, _ = load_case("CASE-09.test_small.svm")       # 1 column < 3
    np.testing.assert_allclose(model.decision_function(Xs), [0.5], rtol=1e-12)


@pytest.fixture(scope="module")
def case11_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("case11")
    subprocess.run(["sh", str(case_file("CASE-11.sh")), str(out)], check=True)
    return out


def test_case11_very_long_line(case11_dir):
    X, y = load_svmlight(str(case11_dir / "CASE-11.svm"))
    assert X.shape == (2, 300000) and X[0].nnz == 300000
    model = sequential(X, y, 1.0, 1)
    assert model.w[0] == 0.0
    np.testing.assert_allclose(model.w[1:], 0.5, rtol=1e-12)
    assert float(model.w @ model.w) == pytest.approx(74999.75, rel=1e-12)
    assert objective(model, X, y)["objective"] == pytest.approx(37500.375, rel=1e-12)
    assert scipy_objective(X, y, model.w, 1.0) == pytest.approx(37500.375, rel=1e-12)


def test_case11_long_comment(case11_dir):
    X, y = load_svmlight(str(case11_dir / "CASE-11.longcomment.svm"))
    model = sequential(X, y, 1.0, 1)
    np.testing.assert_allclose(model.w, [0.0, 0.5], rtol=1e-12, atol=1e-15)


def test_case05_zero_one_labels():
    X, y = load_case("CASE-05.zero_one.svm")
    model = sequential(X, y, 0.5, 3)
    assert (model.labels.negative, model.labels.positive) == (0.0, 1.0)
    np.testing.assert_allclose(model.w, [0.8333333333333331, -0.9999999999999999, -0.16666666666666669],
                               rtol=1e-12)
    Xp, yp = load_case("CASE-05.zero_one.as_pm.svm")
    np.testing.assert_array_equal(sequential(Xp, yp, 0.5, 3).w, model.w)


def test_case07_unsorted_equals_sorted():
    X, y = load_case("CASE-07.svm")
    Xs, ys = load_case("CASE-07.sorted.svm")
    model, model_s = sequential(X, y, 1.0, 2), sequential(Xs, ys, 1.0, 2)
    np.testing.assert_array_equal(model.w, model_s.w)
    expected = np.zeros(model.n_features)
    expected[[0, 2, 4]] = [0.33333333333333337, 0.16666666666666669, -0.33333333333333337]
    np.testing.assert_allclose(model.w, expected, rtol=1e-12, atol=1e-15)


def test_case17_imbalanced_file_order():
    X, y = load_case("CASE-17.svm")
    model = sequential(X, y, 0.01, 100)
    np.testing.assert_allclose(model.w, [-1.47, 0.875], rtol=1e-9)
    f = model.decision_function(X)
    assert f[-1] == pytest.approx(1.0185, rel=1e-9)
    assert accuracy(model, X, y) == 1.0


def test_case17_seeded_permutation_all_seeds():
    X, y = load_case("CASE-17.svm")
    failing = [seed for seed in range(50)
               if accuracy(train(X, y, lam=0.01, epochs=100, sampling="permutation", seed=seed), X, y) != 1.0]
    assert failing == []


@pytest.mark.parametrize("lam,epochs,sampling", [
    (0.01, 200, "sequential"), (1.0, 1, "sequential"), (1e-4, 50, "permutation"), (0.1, 10, "uniform"),
])
def test_case16_no_bias_is_half_right(lam, epochs, sampling):
    X, y = load_case("CASE-16.svm")
    model = train(X, y, lam=lam, epochs=epochs, sampling=sampling, bias="none")
    assert model.bias == 0.0
    assert accuracy(model, X, y) == 0.5


@pytest.mark.parametrize("bias", ["feature", "unregularized"])
@pytest.mark.parametrize("sampling,seed", [("sequential", 1)] + [("permutation", s) for s in range(10)])
def test_case16_bias_separates(bias, sampling, seed):
    X, y = load_case("CASE-16.svm")
    model = train(X, y, lam=0.01, epochs=200, sampling=sampling, seed=seed, bias=bias)
    assert accuracy(model, X, y) == 1.0
    Xt, _ = load_case("CASE-16.test.svm")
    assert model.decision_function(Xt)[0] == pytest.approx(model.w[0] * 3 + model.bias, abs=1e-12)


def test_case19_first_step_is_the_row_exactly():
    X, y = load_case("CASE-19.svm")
    # a single +1 row: the label mapping has to be given (from_values needs two classes)
    model = sequential(X, y, 1.0, 1, labels=BinaryLabels(-1.0, 1.0))
    np.testing.assert_array_equal(model.w, X.toarray()[0])
    Xt, _ = load_case("CASE-19.test.svm", n_features=5)
    np.testing.assert_array_equal(model.decision_function(Xt),
                                  [1.0, 0.4333333333343333, 0.30000000000000004, 18014398509481982.0])


@pytest.mark.parametrize("sampling", ["permutation", "uniform"])
@pytest.mark.parametrize("k", [1, 4])
def test_case18_same_seed_same_model(sampling, k):
    X, y = load_case("CASE-18.svm")
    a = train(X, y, lam=0.01, epochs=3, batch_size=k, sampling=sampling, seed=7)
    b = train(X, y, lam=0.01, epochs=3, batch_size=k, sampling=sampling, seed=7)
    assert a.w.tobytes() == b.w.tobytes() and a.bias == b.bias
    assert a.info["seed"] == "7"


@pytest.mark.parametrize("sampling", ["permutation", "uniform"])
def test_case18_different_seeds_differ(sampling):
    X, y = load_case("CASE-18.svm")
    ws = {train(X, y, lam=0.01, epochs=1, sampling=sampling, seed=s).w.tobytes() for s in range(1, 6)}
    assert len(ws) == 5


def test_case18_sequential_ignores_seed():
    X, y = load_case("CASE-18.svm")
    ws = {train(X, y, lam=0.01, epochs=3, batch_size=4, sampling="sequential", seed=s).w.tobytes()
          for s in (0, 1, 7, 12345)}
    assert len(ws) == 1


# ======================================================== 4. paper facts ==

@pytest.mark.parametrize("lam", [1.0, 0.1, 1e-5, 49.0, 1e-6])
@pytest.mark.parametrize("i", [0, 1, 100])
def test_first_step_norm_is_norm_x_over_lambda(problems, lam, i):
    """w_2 = y x / lambda exactly (the t = 1 shrink factor is 0), so
    ||w_2|| = ||x|| / lambda (notes Sec. 1.3)."""
    X, y, ypm, Xd, _ = problems["heart_scale"]
    model = train(X, y, lam=lam, iterations=1, order=[i])
    np.testing.assert_array_equal(model.w, (1.0 / lam) * ypm[i] * Xd[i])
    assert np.linalg.norm(model.w) == pytest.approx(np.linalg.norm(Xd[i]) / lam, rel=1e-12)


@pytest.mark.parametrize("lam", [0.01, 1e-4, 1e-6])
@pytest.mark.parametrize("k", [1, 7])
@pytest.mark.parametrize("bias", ["none", "feature"])
def test_projection_radius_every_step(problems, lam, k, bias):
    """With projection, ||w_t|| <= 1/sqrt(lambda) (1 + 1e-12) after every step
    (exact norm recomputed from v), the ball is actually reached, and the
    tracked ||w||^2 stays close to the exact one."""
    X, y, ypm, _, _ = problems["heart_scale"]
    m, n = X.shape
    T = 3000
    order = np.random.default_rng(2).integers(0, m, size=T * k)
    indptr, indices, data = csr_arrays(X)
    st = _core.LinearState(n, lam, True, 0, 1 if bias == "feature" else 0)
    radius = 1.0 / math.sqrt(lam)
    norms = np.empty(T)
    for t in range(T):
        st.run(indptr, indices, data, ypm, order[t * k:(t + 1) * k], 1, k)
        exact = st.exact_sqnorm()
        norms[t] = math.sqrt(exact)
        assert abs(st.sqnorm - exact) <= 1e-9 * exact
    assert norms.max() <= radius * (1 + 1e-12)
    assert norms.max() >= radius * (1 - 1e-12)        # the projection did act


@pytest.mark.parametrize("k", [1, 7])
def test_eq13_unprojected_iterate_is_sum_of_v(problems, k):
    """Eq. (13): w_{T+1} = 1/(lambda T) sum_t v_t with
    v_t = 1/|A_t| sum_{A_t} 1[y <w_t, x> < 1] y x, the w_t being read from the
    compiled solver one step at a time."""
    X, y, ypm, Xd, lam = problems["heart_scale"]
    m, n = X.shape
    T = 2000
    order = np.random.default_rng(3).integers(0, m, size=T * k)
    indptr, indices, data = csr_arrays(X)
    st = _core.LinearState(n, lam, False, 0, 0)
    v_sum = np.zeros(n)
    for t in range(T):
        A = order[t * k:(t + 1) * k]
        w_t = st.weights()[0]
        viol = A[ypm[A] * (Xd[A] @ w_t) < 1]
        v_sum += (ypm[viol][:, None] * Xd[viol]).sum(axis=0) / A.size
        st.run(indptr, indices, data, ypm, A, 1, k)
    assert rel_err(st.weights()[0], 0.0, v_sum / (lam * T), 0.0) <= 1e-12
    # and the reference satisfies it too (a check of the reference itself)
    out = ref.pegasos_outputs(Xd, ypm, lam, ref.cut_batches(order, k, m, "uniform", T), record=True)
    assert rel_err(out["last"][0], 0.0, ref.eq13_last_iterate(lam, out["v"]), 0.0) <= 1e-12


# ========================================================= 5. convergence ==

REFERENCE = {
    # file, lambda, f* (primal), dual bound   (/work/shared/data/README.md)
    "a9a": ("a9a/a9a", 1e-4, 0.3517618027, 0.3517618005),
    "w8a": ("w8a/w8a", 1e-4, 0.1443258917, 0.1443258916),
}


@pytest.fixture(scope="module")
def real_data():
    out = {name: load_svmlight(str(data_file(path))) for name, (path, *_) in REFERENCE.items()}
    n = out["a9a"][0].shape[1]
    out["a9a.t"] = load_svmlight(str(data_file("a9a/a9a.t")), n_features=n)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("sampling", ["uniform", "permutation"])
@pytest.mark.parametrize("name", ["a9a", "w8a"])
def test_converges_to_reference_optimum(real_data, name, sampling, seed):
    _, lam, f_star, dual = REFERENCE[name]
    X, y = real_data[name]
    model = train(X, y, lam=lam, epochs=100, average_from=0.5, sampling=sampling, seed=seed)
    f = objective(model, X, y)["objective"]
    f_scipy = scipy_objective(X, y, model.w, lam)
    assert f == pytest.approx(f_scipy, rel=1e-12)
    assert f >= dual * (1 - 1e-12)                 # nothing can beat the optimum
    assert (f - f_star) / f_star <= 0.01
    if name == "a9a":
        Xt, yt = real_data["a9a.t"]
        assert evaluate(model, Xt, yt)["accuracy"] >= 0.84


@pytest.mark.parametrize("sampling,seed", [("uniform", 1), ("permutation", 2)])
def test_feature_bias_converges_on_a9a(real_data, sampling, seed):
    """Regularised bias = LIBLINEAR -B 1 problem: f* = 0.3517514502."""
    f_star, dual, lam = 0.3517514502, 0.3517514484, 1e-4
    X, y = real_data["a9a"]
    model = train(X, y, lam=lam, epochs=100, average_from=0.5, sampling=sampling, seed=seed, bias="feature")
    f = objective(model, X, y)["objective"]
    assert f == pytest.approx(scipy_objective(X, y, model.w, lam, model.bias, "feature"), rel=1e-12)
    assert f >= dual * (1 - 1e-12)
    assert (f - f_star) / f_star <= 0.01


# ==================================================== 6. parameter errors ==

@pytest.mark.parametrize("kwargs", [
    dict(lam=0.0), dict(lam=-1.0), dict(lam=float("nan")), dict(lam=float("inf")),
    dict(iterations=0), dict(iterations=-3), dict(epochs=0), dict(epochs=-1.0),
    dict(iterations=10, epochs=1),
    dict(batch_size=0), dict(batch_size=-1), dict(batch_size=271),
    dict(average_from=1.0), dict(average_from=-0.1), dict(average_from=1.5),
    dict(sampling="shuffle"), dict(sampling="Uniform"), dict(bias="yes"), dict(bias=""),
    dict(order=[0, 1, 270]), dict(order=[-1]), dict(iterations=10, order=[1, 2, 3]),
    dict(n_features=5),
], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_parameter_errors(problems, kwargs):
    X, y = problems["heart_scale"][:2]
    kw = dict(lam=0.01, epochs=1)
    kw.update(kwargs)
    if "iterations" in kwargs and "epochs" not in kwargs:
        kw.pop("epochs")
    with pytest.raises(ParameterError):
        train(X, y, **kw)


@pytest.mark.parametrize("labels", [[1.0] * 5, [1.0, 2.0, 3.0, 1.0, 2.0], [0.0, 0.0], [-1.0, 0.0, 1.0]])
def test_label_values_must_be_two(labels):
    with pytest.raises(ParameterError):
        BinaryLabels.from_values(labels)
    X = sp.csr_matrix(np.ones((len(labels), 2)))
    with pytest.raises(ParameterError):
        train(X, np.array(labels), lam=0.1, epochs=1)


def test_label_count_must_match_examples(problems):
    X, y = problems["heart_scale"][:2]
    with pytest.raises(ParameterError):
        train(X, y[:-1], lam=0.01, epochs=1)


# ---------------------------------------------------------------------------------------- step offset

@pytest.mark.parametrize("t0", [1.0, 37.5, 1e5])
@pytest.mark.parametrize("k, projection, average_from, bias",
                         [(1, False, None, "none"), (7, True, 0.5, "none"), (1, False, 0.0, "unregularized"),
                          (5, False, None, "feature")])
def test_step_offset_matches_reference(t0, k, projection, average_from, bias):
    """eta_t = 1/(lambda (t + t0)), shrink 1 - 1/(t + t0): the compiled loop equals the dense loop."""
    X, y = load_svmlight(str(data_file("heart_scale/heart_scale")))
    ypm = np.where(y > 0, 1.0, -1.0)
    lam, T = 0.01, 300
    order = np.random.default_rng(3).integers(0, X.shape[0], size=T * k)
    model = train(X, y, lam=lam, iterations=T, batch_size=k, projection=projection, average_from=average_from,
                  bias=bias, order=order, step_offset=t0)
    batches = [order[i * k:(i + 1) * k] for i in range(T)]
    start = max(1, math.ceil(average_from * T)) if average_from is not None else None
    out = ref.pegasos_outputs(X, ypm, lam, batches, projection=projection, bias=bias,
                                    average_starts=() if start is None else (start,), t0=t0)
    w_ref, b_ref = out["last"] if start is None else out[start]
    scale = max(np.abs(w_ref).max(), abs(b_ref), 1e-300)
    assert np.abs(model.w - w_ref).max() <= 1e-9 * scale
    assert abs(model.bias - b_ref) <= 1e-9 * scale
    assert model.info["step_offset"] == repr(t0)


def test_step_offset_zero_is_the_paper_step():
    X, y = load_svmlight(str(data_file("heart_scale/heart_scale")))
    a = train(X, y, lam=0.01, epochs=3, seed=4)
    b = train(X, y, lam=0.01, epochs=3, seed=4, step_offset=0.0)
    assert np.array_equal(a.w, b.w) and "step_offset" not in b.info
    with pytest.raises(ParameterError):
        train(X, y, lam=0.01, epochs=1, step_offset=-1.0)


def test_small_weight_states_skip_the_memory_files(monkeypatch):
    """A state of at most SMALL_STATE_BYTES does not read /proc and /sys (28 times in a short fit);
    a larger one still asks, and is refused above the limit."""
    import pegasos.data as data

    def unreadable():
        raise AssertionError("memory_limit read for a small state")

    monkeypatch.setattr(data, "memory_limit", unreadable)
    small = data.SMALL_STATE_BYTES // (8 * 3) - 2          # the largest n_features of one vector not checked
    data.check_weight_memory(small, 1)
    with pytest.raises(AssertionError, match="small state"):
        data.check_weight_memory(small + 1, 1)
    monkeypatch.setattr(data, "memory_limit", lambda: float(data.SMALL_STATE_BYTES))
    with pytest.raises(ParameterError, match="stray huge index"):
        data.check_weight_memory(small + 1, 1)


def test_weight_memory_check(monkeypatch):
    """A stray huge feature index is refused with a message, not an OOM kill."""
    from pegasos import linear

    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": (1 << 30) // 4096}      # pretend 1 GiB
    monkeypatch.setattr(linear.os, "sysconf", lambda name: pages[name])
    linear.check_weight_memory(10_000_000, 1)                               # 240 MB: fine
    with pytest.raises(ParameterError, match="n_features = 100000000"):
        linear.check_weight_memory(100_000_000, 1)                          # 2.4 GB
    X = sp.csr_matrix(([1.0, 1.0], ([0, 1], [0, 99_999_999])), shape=(2, 100_000_000))
    with pytest.raises(ParameterError, match="stray huge index"):
        train(X, np.array([1.0, -1.0]), lam=0.1, iterations=2)
