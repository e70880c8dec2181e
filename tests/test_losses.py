"""Tests of the losses other than the hinge (paper Sec. 5, notes Sec. 3),
class weights and pairwise ranking, through ``pegasos.train``.

1. Exactness: the compiled loop equals the dense NumPy reference
   (``reference.pegasos_general_outputs``) fed the same visiting order, for
   log, squared hinge, eps-insensitive (real-valued target) and rank losses,
   k in {1, 5}, projection on/off, last iterate / average / suffix average,
   with and without class weights.  The projection radius is computed here
   from f(0), independently of ``pegasos.linear.projection_radius2``.
2. Convergence to optima computed independently: scipy L-BFGS for the
   smooth losses (log, squared hinge), LIBLINEAR (``liblinear-official``)
   for eps-insensitive regression (-s 13) and class-weighted hinge (-s 3),
   each LIBLINEAR reference certified by its own dual value.
3. Ranking: a hand-written qid file is ranked perfectly; pairs are drawn
   uniformly among the ordered pairs of a query with different labels.
4. predict_proba of a log-loss model.
"""

import math

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

import reference as ref
from reference import rel_err
from conftest import data_file
import pegasos
from pegasos.errors import ParameterError
from pegasos.io import load_svmlight
from pegasos.trainers import train
from pegasos.sampling import BLOCK_SAMPLES, PairOrders

EXACT = 1e-9          # max |w - w_ref| / max |w_ref|
LAM = 0.01            # heart_scale


# ----------------------------------------------------------------- helpers --



def permutation_order(m, seed, epochs):
    """The order ``train(sampling="permutation", seed=seed)`` visits:
    PCG64(seed), one rng.permutation(m) per epoch."""
    rng = np.random.Generator(np.random.PCG64(seed))
    return np.concatenate([rng.permutation(m) for _ in range(epochs)]).astype(np.int64)


def cut(order, k, m, sampling, T):
    return ref.cut_batches(order, k, m, sampling, T)


def radius2_for(loss, lam, X, y, sample_weight=None, epsilon=0.0, pairs=None):
    """Squared projection radius: 1/lam for the unweighted hinge and the rank
    loss (paper Sec. 2.2), else 2 f(0) / lam (lam/2 ||w*||^2 <= f(w*) <= f(0))."""
    if loss == "rank" or (loss == "hinge" and sample_weight is None):
        return 1.0 / lam
    f0 = ref.objective(X, y, lam, np.zeros(X.shape[1]), loss=loss, epsilon=epsilon,
                       sample_weight=sample_weight, pairs=pairs)
    return 2.0 * f0 / lam


def pairwise_accuracy(f, qid, y):
    """Fraction of pairs (same qid, y_a > y_b) with f_a > f_b."""
    P = ref.all_pairs(qid, y)
    P = P[y[P[:, 0]] > y[P[:, 1]]]
    assert P.shape[0] > 0
    return float(np.mean(f[P[:, 0]] > f[P[:, 1]]))


# ---------------------------------------------------------------- problems --

RANK_FILE = """\
# Hand-written ranking data: within each query the grade rises with feature 1.
# Across queries it does not (query 2 has low feature 1 and high grades), so
# a model that mixed queries, or ranked the grades globally, gets pairs wrong.
3 qid:1 1:3 2:0.5 3:1
2 qid:1 1:2 2:-1
0 qid:1 1:0.5 2:1 3:-1
1 qid:1 1:1 3:2
2 qid:2 1:-4 2:0.3 # a comment
0 qid:2 1:-6 2:0.5 3:0.5

1 qid:2 1:-5 3:-0.5
3 qid:1 1:3.5 2:-0.5
1 qid:3 1:10
0 qid:3 1:9 3:1
5 qid:4 1:0
"""
# qid 1: 5 examples, grades 3 2 0 1 3 -> 5*4 - 2 (the tied 3s) = 18 ordered pairs;
# qid 2: 3 distinct grades -> 6; qid 3: 2; qid 4: a single example -> 0.
RANK_FILE_PAIRS = 26


@pytest.fixture(scope="module")
def heart():
    X, y = load_svmlight(str(data_file("heart_scale/heart_scale")))
    ypm = ref.labels_pm(y)
    Xd = X.toarray()
    m, n = X.shape
    # regression target: a fixed linear function of the features plus noise
    rng = np.random.default_rng(2024)
    w_true = rng.normal(scale=2.0, size=n)
    y_reg = Xd @ w_true + 0.3 * rng.normal(size=m)
    # ranking: 20 queries (interleaved in file order), grades 0..3 from a noisy score
    qid = rng.integers(0, 20, size=m).astype(np.int64)
    score = Xd @ rng.normal(size=n) + 0.5 * rng.normal(size=m)
    grade = np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75])).astype(np.float64)
    return dict(X=X, y=y, ypm=ypm, Xd=Xd, y_reg=y_reg, qid=qid, grade=grade)


@pytest.fixture(scope="module")
def rank_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("rank") / "ranking.svm"
    path.write_text(RANK_FILE)
    data = pegasos.read_svmlight(str(path))
    return data.X, data.y, data.chunk.qid


def test_rank_file_is_read_with_its_qids(rank_file):
    X, y, qid = rank_file
    np.testing.assert_array_equal(qid, [1, 1, 1, 1, 2, 2, 2, 1, 3, 3, 4])
    np.testing.assert_array_equal(y, [3, 2, 0, 1, 2, 0, 1, 3, 1, 0, 5])
    assert X.shape == (11, 3)
    assert ref.all_pairs(qid, y).shape == (RANK_FILE_PAIRS, 2)
    assert PairOrders(qid, y, 1).n_pairs == RANK_FILE_PAIRS


# ============================================================ 1. exactness ==

OUTPUTS = ("last", "average", "suffix")
CLASS_WEIGHTS = {-1: 0.7, 1: 2.5}


def _avg_kwargs(output):
    return dict(average=output == "average", average_from=0.5 if output == "suffix" else None)


def _avg_start(output, T):
    return {"last": None, "average": 1, "suffix": max(1, math.ceil(0.5 * T))}[output]


def _check_projection_acted(Xd, yv, lam, batches, start, w_proj, **opts):
    """The same run without projection must differ (else the projection
    half of the test would be vacuous)."""
    w_free, b_free = ref.pegasos(Xd, yv, lam, batches, projection=False, average_from_t=start, **opts)
    assert rel_err(w_free, b_free, *w_proj) > 1e-6, "the projection never acted"


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("projection", [False, True], ids=["noproj", "proj"])
@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("sampling", ["uniform", "permutation"])
@pytest.mark.parametrize("loss,weighted", [
    ("log", False), ("log", True), ("squared-hinge", False), ("squared-hinge", True), ("hinge", True),
], ids=["log", "log-weighted", "sqhinge", "sqhinge-weighted", "hinge-weighted"])   # plain hinge: test_solver.py
def test_classification_losses_match_reference(heart, loss, weighted, sampling, k, projection, output):
    X, y, ypm, Xd = heart["X"], heart["y"], heart["ypm"], heart["Xd"]
    m = X.shape[0]
    class_weight = CLASS_WEIGHTS if weighted else None
    sw = np.where(y == 1, CLASS_WEIGHTS[1], CLASS_WEIGHTS[-1]) if weighted else None
    epochs = 2 if sampling == "permutation" else 2.5
    if sampling == "uniform":
        T = math.ceil(epochs * m / k)
        order = np.random.default_rng(17).integers(0, m, size=T * k)
        kw = dict(order=order)
    else:
        T = epochs * math.ceil(m / k)
        order = permutation_order(m, 5, epochs)
        kw = dict(seed=5)            # the seeded sampler itself
    model = train(X, y, lam=LAM, epochs=epochs, batch_size=k, sampling=sampling, projection=projection,
                  loss=loss, class_weight=class_weight, **_avg_kwargs(output), **kw)
    assert model.info["iterations"] == str(T)
    assert model.loss == loss
    ran_projection = model.info["projection"] == "on"
    if loss != "squared-hinge":
        assert ran_projection == projection
    # (squared hinge: the solver may turn the projection on by itself, since
    # the gradient is unbounded; the header must then say so -- see report)
    batches = cut(order, k, m, sampling, T)
    start = _avg_start(output, T)
    opts = dict(loss=loss, sample_weight=sw, radius2=radius2_for(loss, LAM, Xd, ypm, sw))
    w_ref, b_ref = ref.pegasos(Xd, ypm, LAM, batches, projection=ran_projection, average_from_t=start, **opts)
    assert rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT
    assert model.bias == 0.0
    if projection and output == "last":
        _check_projection_acted(Xd, ypm, LAM, batches, start, (w_ref, b_ref), **opts)
    if weighted:
        # the weights matter: the unweighted run is different
        w_u, _ = ref.pegasos(Xd, ypm, LAM, batches, projection=ran_projection, average_from_t=start,
                             loss=loss, radius2=radius2_for(loss, LAM, Xd, ypm))
        assert rel_err(model.w, 0.0, w_u, 0.0) > 1e-3


@pytest.mark.parametrize("bias", ["feature", "unregularized"])
@pytest.mark.parametrize("loss", ["log", "squared-hinge", "eps-insensitive"])
def test_losses_with_bias_match_reference(heart, loss, bias):
    X, Xd = heart["X"], heart["Xd"]
    yv = heart["y_reg"] if loss == "eps-insensitive" else heart["ypm"]
    m, k, T = X.shape[0], 5, 400
    order = np.random.default_rng(3).integers(0, m, size=T * k)
    model = train(X, yv, lam=LAM, iterations=T, batch_size=k, order=order, loss=loss, bias=bias,
                  epsilon=0.25, average_from=0.5)
    w_ref, b_ref = ref.pegasos(Xd, yv, LAM, cut(order, k, m, "uniform", T), bias=bias, loss=loss, epsilon=0.25,
                               average_from_t=200, projection=model.info["projection"] == "on",
                               radius2=radius2_for(loss, LAM, Xd, yv, epsilon=0.25))
    assert b_ref != 0.0
    assert rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("projection", [False, True], ids=["noproj", "proj"])
@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("epsilon", [0.0, 0.5])
def test_eps_insensitive_matches_reference(heart, epsilon, k, projection, output):
    X, Xd, yr = heart["X"], heart["Xd"], heart["y_reg"]
    m = X.shape[0]
    T = math.ceil(2.5 * m / k)
    order = np.random.default_rng(23).integers(0, m, size=T * k)
    model = train(X, yr, lam=LAM, epochs=2.5, batch_size=k, order=order, projection=projection,
                  loss="eps-insensitive", epsilon=epsilon, **_avg_kwargs(output))
    assert model.info["iterations"] == str(T)
    assert model.labels is None and model.epsilon == epsilon
    assert model.bias_mode == "feature"         # regression's default: an intercept
    batches = cut(order, k, m, "uniform", T)
    start = _avg_start(output, T)
    opts = dict(loss="eps-insensitive", epsilon=epsilon, bias="feature",
                radius2=radius2_for("eps-insensitive", LAM, Xd, yr, epsilon=epsilon))
    w_ref, b_ref = ref.pegasos(Xd, yr, LAM, batches, projection=projection, average_from_t=start, **opts)
    assert rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT
    if projection and output == "last":
        _check_projection_acted(Xd, yr, LAM, batches, start, (w_ref, b_ref), **opts)
    # the target is real-valued: predict returns the decision values
    np.testing.assert_array_equal(model.predict(X), model.decision_function(X))


def _rank_problem(heart, rank_file, name):
    if name == "heart_scale":
        return heart["X"], heart["grade"], heart["qid"], heart["Xd"]
    X, y, qid = rank_file
    return X, y, qid, X.toarray()


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("projection", [False, True], ids=["noproj", "proj"])
@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("problem", ["heart_scale", "file"])
def test_rank_matches_reference(heart, rank_file, problem, k, projection, output):
    X, y, qid, Xd = _rank_problem(heart, rank_file, problem)
    P = ref.all_pairs(qid, y)
    T = 600
    pairs = P[np.random.default_rng(31).integers(0, P.shape[0], size=T * k)]
    order = pairs.ravel()                  # a0, b0, a1, b1, ...
    model = train(X, y, lam=LAM, iterations=T, batch_size=k, order=order, projection=projection,
                  loss="rank", qid=qid, **_avg_kwargs(output))
    assert model.labels is None and model.bias == 0.0
    batches = [pairs[t * k:(t + 1) * k] for t in range(T)]
    start = _avg_start(output, T)
    w_ref, b_ref = ref.pegasos(Xd, y, LAM, batches, projection=projection, average_from_t=start, pairs=True,
                               radius2=1.0 / LAM)
    assert rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT
    if projection and output == "last":
        _check_projection_acted(Xd, y, LAM, batches, start, (w_ref, b_ref), pairs=True)


@pytest.mark.parametrize("k", [1, 270])
def test_rank_seeded_sampler_matches_reference(heart, k):
    """train(seed=...) without an order: the pairs are the sampler's draws
    (one block of up to 2**20 pairs at a time; k = 270 crosses a block
    boundary), and the result equals the reference on those pairs."""
    X, y, qid, Xd = heart["X"], heart["grade"], heart["qid"], heart["Xd"]
    T = 3000 if k == 1 else BLOCK_SAMPLES // k + 30
    model = train(X, y, lam=LAM, iterations=T, batch_size=k, loss="rank", qid=qid, seed=9)
    sampler, parts, done = PairOrders(qid, y, 9), [], 0
    while done < T:
        n = min(T - done, max(1, BLOCK_SAMPLES // k))
        parts.append(sampler.draw(n * k))
        done += n
    pairs = np.concatenate(parts).reshape(-1, 2)
    assert pairs.shape[0] == T * k
    # every draw is a valid pair
    assert np.all(qid[pairs[:, 0]] == qid[pairs[:, 1]]) and np.all(y[pairs[:, 0]] != y[pairs[:, 1]])
    again = train(X, y, lam=LAM, iterations=T, batch_size=k, loss="rank", qid=qid, order=pairs.ravel())
    np.testing.assert_array_equal(again.w, model.w)
    if k == 1:
        w_ref, _ = ref.pegasos(Xd, y, LAM, [pairs[t:t + 1] for t in range(T)], pairs=True)
        assert rel_err(model.w, 0.0, w_ref, 0.0) <= EXACT


@pytest.mark.parametrize("loss", ["hinge", "log", "squared-hinge", "eps-insensitive"])
def test_model_losses_match_reference(heart, loss):
    yv = heart["y_reg"] if loss == "eps-insensitive" else heart["y"]
    model = train(heart["X"], yv, lam=LAM, epochs=2, loss=loss, epsilon=0.3)
    f = model.decision_function(heart["X"])
    target = heart["y_reg"] if loss == "eps-insensitive" else heart["ypm"]
    np.testing.assert_allclose(model.losses(f, yv), ref.loss_values(loss, f, target, 0.3), rtol=1e-12, atol=0)


@pytest.mark.parametrize("loss", ["hinge", "log", "squared-hinge", "eps-insensitive"])
def test_objective_with_example_weights_is_the_weighted_training_objective(heart, loss):
    """pegasos.objective(..., sample_weight=s): lambda/2 ||w||^2 + 1/m sum_i c_i s_i loss_i (c_i the class
    weight; regression has none), recomputed with the reference losses; hinge_loss stays the plain mean;
    bad weights and weights for the rank loss are refused."""
    regression = loss == "eps-insensitive"
    yv = heart["y_reg"] if regression else heart["y"]
    class_weight = None if regression else {1.0: 3.0}
    model = train(heart["X"], yv, lam=LAM, epochs=2, loss=loss, epsilon=0.3, class_weight=class_weight)
    f = model.decision_function(heart["X"])
    target = heart["y_reg"] if regression else heart["ypm"]
    sw = np.random.default_rng(5).uniform(0.0, 4.0, size=f.shape[0])
    c = sw if regression else np.where(heart["y"] == 1.0, 3.0, 1.0) * sw
    w = np.asarray(model.w, dtype=np.float64)
    expected = 0.5 * LAM * float(w @ w) + float(np.mean(c * ref.loss_values(loss, f, target, 0.3)))
    r = pegasos.objective(model, heart["X"], yv, sample_weight=sw)
    assert r["objective"] == pytest.approx(expected, rel=1e-12)
    plain = pegasos.objective(model, heart["X"], yv)
    assert plain["objective"] != pytest.approx(expected, rel=1e-3)
    assert pegasos.objective(model, heart["X"], yv, sample_weight=np.ones(f.shape[0])) == plain
    assert r.get("hinge_loss") == plain.get("hinge_loss")       # binary only: the plain mean hinge
    for bad, fragment in ((sw[:-1], "weights for"), (-sw, r"finite number in \[0, 1e\+150\]"),
                          (sw * 1e300, r"finite number in \[0, 1e\+150\]"), (["a"] * f.shape[0], "numbers")):
        with pytest.raises(ParameterError, match=fragment):
            pegasos.objective(model, heart["X"], yv, sample_weight=bad)


def test_objective_refuses_example_weights_for_the_rank_loss(heart):
    model = train(heart["X"], heart["grade"], lam=LAM, epochs=1, loss="rank", qid=heart["qid"])
    with pytest.raises(ParameterError, match="rank loss"):
        pegasos.objective(model, heart["X"], heart["grade"], qid=heart["qid"],
                          sample_weight=np.ones(heart["X"].shape[0]))


# ========================================================= 2. convergence ==

A9A_LAM = 1e-4
GAP = 0.01            # relative gap to the independent optimum


@pytest.fixture(scope="module")
def a9a():
    X, y = load_svmlight(str(data_file("a9a/a9a")))
    return X, y, np.where(y > 0, 1.0, -1.0)


def _smooth_objective(loss, X, ypm, lam):
    """f and its exact gradient for L-BFGS (log loss or squared hinge)."""
    m = X.shape[0]

    def fun(w):
        z = ypm * (X @ w)
        if loss == "log":
            value = np.logaddexp(0.0, -z).mean()
            dz = -0.5 * (1.0 - np.tanh(0.5 * z))          # d/dz log(1 + e^-z) = -sigmoid(-z)
        else:
            h = np.maximum(0.0, 1.0 - z)
            value = (h * h).mean()
            dz = -2.0 * h
        return 0.5 * lam * float(w @ w) + value, lam * w + X.T @ (ypm * dz) / m

    return fun


def _lbfgs_optimum(fun, n):
    res = scipy.optimize.minimize(fun, np.zeros(n), jac=True, method="L-BFGS-B",
                                  options=dict(maxiter=20000, gtol=1e-10, ftol=1e-15))
    assert np.linalg.norm(res.jac) < 1e-6, res.message
    return float(res.fun)


@pytest.mark.parametrize("loss", ["log", "squared-hinge"])
@pytest.mark.parametrize("problem", ["a9a", "heart_scale"])
def test_smooth_losses_converge_to_lbfgs_optimum(a9a, heart, problem, loss):
    if problem == "a9a":
        X, y, ypm = a9a
        lam = A9A_LAM
    else:
        X, y, ypm = heart["X"], heart["y"], heart["ypm"]
        # 100 epochs are only 27000 steps here; at lambda = 1e-3 the squared
        # hinge is still 13% above its optimum (1e-2: 2e-4), the log loss 1.3e-4
        lam = 1e-3 if loss == "log" else 1e-2
    fun = _smooth_objective(loss, X, ypm, lam)
    f_opt = _lbfgs_optimum(fun, X.shape[1])
    model = train(X, y, lam=lam, epochs=100, average_from=0.5, sampling="permutation", seed=1, loss=loss)
    f = fun(model.w)[0]
    print(f"{problem} {loss}: pegasos {f:.10f} L-BFGS {f_opt:.10f} gap {(f - f_opt) / f_opt:.2e}")
    assert f >= f_opt - 1e-9                 # nothing beats the optimum
    assert (f - f_opt) / f_opt <= GAP
    # the model's own losses give the same objective
    f_model = model.regularizer() + float(model.losses(model.decision_function(X), y).mean())
    assert f_model == pytest.approx(f, rel=1e-12)


@pytest.mark.parametrize("lam", [1e-3, 1e-4])
def test_squared_hinge_stays_finite_without_requested_projection(heart, lam):
    """Unprojected, the squared hinge's unbounded gradient makes these runs
    overflow (checked with the compiled loop directly); train() must keep w
    finite and say in the header that it projected."""
    model = train(heart["X"], heart["y"], lam=lam, epochs=100, average_from=0.5, sampling="permutation",
                  seed=1, loss="squared-hinge", projection=False)
    assert np.all(np.isfinite(model.w))
    assert model.info["projection"] == "on"
    assert np.linalg.norm(model.w) <= math.sqrt(2.0 / lam) * (1 + 1e-12)


def _liblinear(y, X, options, with_bias=False):
    """Train with the official LIBLINEAR bindings; returns (w, dual value in
    LIBLINEAR's scale) -- the dual is read from its "Objective value" line --
    or, ``with_bias``, (w, b, dual) (b the weight of -B's constant feature)."""
    try:
        from liblinear import liblinear, liblinearutil
    except ImportError:       # pragma: no cover
        pytest.fail("liblinear-official is not installed: pip install -e '.[test]'")
    lines = []
    param = liblinearutil.parameter(options)
    param.print_func = liblinear.PRINT_STRING_FUN(lambda s: lines.append(s.decode()))
    model = liblinearutil.train(liblinearutil.problem(y, X), param)
    text = "".join(lines)
    dual_line = [ln for ln in text.splitlines() if ln.startswith("Objective value")]
    assert dual_line, text
    dual = -float(dual_line[-1].split("=")[1])
    w, b = model.get_decfun()
    w = np.array(w, dtype=np.float64)
    if not model.is_regression_model() and model.get_labels()[0] != 1:
        w, b = -w, -b                     # LIBLINEAR's w is for its first label
    return (w, float(b), dual) if with_bias else (w, dual)


@pytest.mark.parametrize("problem, bias", [("a9a", "none"), ("heart_scale", "none"), ("heart_scale", None)],
                         ids=["a9a", "heart_scale", "heart_scale-default-bias"])
def test_eps_insensitive_converges_to_liblinear(a9a, heart, problem, bias):
    """LIBLINEAR -s 13 (L2-regularised L1-loss SVR, dual) with C = 1/(lam m)
    minimises 1/2 ||w||^2 + C sum max(0, |w.x - y| - eps) = (our objective) / lam
    (-B -1, ``bias="none"``).  The default bias of regression, a constant
    feature 1 regularised with w, is its -B 1: b^2 joins ||w||^2 and b the
    decision values; the targets are then offset by 50, which a model
    without b cannot fit."""
    eps = 0.1
    if problem == "a9a":
        X, lam = a9a[0], A9A_LAM
    else:
        X, lam = heart["X"], 1e-2      # at 1e-3 LIBLINEAR's w stays 1.4% above its dual (-e 1e-8 too)
    m, n = X.shape
    rng = np.random.default_rng(11)
    yr = X @ rng.normal(size=n) + 0.5 * rng.normal(size=m) + (0.0 if bias == "none" else 50.0)

    def f(w, b=0.0):
        return 0.5 * lam * (float(w @ w) + b * b) + float(np.maximum(0.0, np.abs(X @ w + b - yr) - eps).mean())

    w_ll, b_ll, dual = _liblinear(yr, X, f"-s 13 -c {1.0 / (lam * m)!r} -p {eps} -B {-1 if bias == 'none' else 1} "
                                         "-e 1e-4", with_bias=True)
    f_ref, d_ref = f(w_ll, b_ll), lam * dual
    assert d_ref <= f_ref and (f_ref - d_ref) / f_ref < 1e-3      # the reference is near-optimal
    settings = {} if bias is None else {"bias": bias}
    model = train(X, yr, lam=lam, epochs=100, average_from=0.5, sampling="permutation", seed=1,
                  loss="eps-insensitive", epsilon=eps, **settings)
    assert model.bias_mode == ("feature" if bias is None else bias)
    got = f(model.w, model.bias)
    print(f"{problem} eps-insensitive, bias {model.bias_mode}: pegasos {got:.10f} LIBLINEAR {f_ref:.10f} "
          f"(dual {d_ref:.10f}) gap {(got - f_ref) / f_ref:.2e}")
    assert got >= d_ref * (1 - 1e-9)
    assert (got - f_ref) / f_ref <= GAP


@pytest.mark.parametrize("weight", [3.0, 0.5])
def test_class_weights_converge_to_liblinear(a9a, weight):
    """LIBLINEAR -s 3 -c C -w1 W minimises 1/2 ||w||^2 + C sum_i C_i hinge_i
    with C_i = W for label 1, 1 otherwise; with C = 1/(lam m) that is
    (1/lam) (lam/2 ||w||^2 + (1/m) sum_i weight_i hinge_i), our objective for
    class_weight={1: W}."""
    X, y, ypm = a9a
    m = X.shape[0]
    lam = A9A_LAM
    sw = np.where(ypm > 0, weight, 1.0)

    def f(w):
        return 0.5 * lam * float(w @ w) + float((sw * np.maximum(0.0, 1.0 - ypm * (X @ w))).mean())

    w_ll, dual = _liblinear(y, X, f"-s 3 -c {1.0 / (lam * m)!r} -w1 {weight} -B -1 -e 1e-3")
    f_ref, d_ref = f(w_ll), lam * dual
    assert d_ref <= f_ref and (f_ref - d_ref) / f_ref < 1e-3
    model = train(X, y, lam=lam, epochs=100, average_from=0.5, sampling="permutation", seed=1,
                  class_weight={1: weight})
    assert model.info["class_weights"]
    got = f(model.w)
    print(f"a9a class_weight {{1: {weight}}}: pegasos {got:.10f} LIBLINEAR {f_ref:.10f} (dual {d_ref:.10f}) "
          f"gap {(got - f_ref) / f_ref:.2e}")
    assert got >= d_ref * (1 - 1e-9)
    assert (got - f_ref) / f_ref <= GAP
    f_model = model.regularizer() + float((sw * model.losses(model.decision_function(X), y)).mean())
    assert f_model == pytest.approx(got, rel=1e-12)


# ============================================================= 3. ranking ==

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rank_file_is_ranked_perfectly(rank_file, seed):
    X, y, qid = rank_file
    model = train(X, y, lam=0.01, iterations=20000, loss="rank", qid=qid, seed=seed)
    f = model.decision_function(X)
    assert pairwise_accuracy(f, qid, y) == 1.0
    # the file does test the query grouping: ignoring qid ranks pairs wrongly
    mixed = train(X, y, lam=0.01, iterations=20000, loss="rank", qid=np.zeros_like(qid), seed=seed)
    assert pairwise_accuracy(mixed.decision_function(X), qid, y) < 0.8
    assert np.array_equal(model.predict(X), f)


@pytest.mark.parametrize("problem", ["file", "heart_scale"])
def test_pairs_are_drawn_uniformly(heart, rank_file, problem):
    """Counts of each ordered pair (a, b) (same qid, y_a != y_b) among N
    draws are Binomial(N, 1/P): every count within 5 sigma, no other pair."""
    X, y, qid, _ = _rank_problem(heart, rank_file, problem)
    P = ref.all_pairs(qid, y)
    n_pairs = P.shape[0]
    N = 400 * n_pairs if problem == "heart_scale" else 10_000 * n_pairs
    sampler = PairOrders(qid, y, 12345)
    assert sampler.n_pairs == n_pairs
    drawn = sampler.draw(N).reshape(-1, 2)
    m = len(y)
    codes = drawn[:, 0] * m + drawn[:, 1]
    counts = np.bincount(codes, minlength=m * m)
    valid = np.zeros(m * m, dtype=bool)
    valid[P[:, 0] * m + P[:, 1]] = True
    assert counts[~valid].sum() == 0                     # never an invalid pair
    p = 1.0 / n_pairs
    sigma = math.sqrt(N * p * (1 - p))
    dev = np.abs(counts[valid] - N * p) / sigma
    assert dev.max() <= 5.0, (dev.max(), n_pairs)
    # and not trivially so: the spread looks binomial (chi-square per cell ~ 1)
    assert 0.5 < float(np.mean(dev ** 2)) < 1.5


def test_rank_parameter_errors(rank_file):
    X, y, qid = rank_file
    with pytest.raises(ParameterError):
        train(X, y, loss="rank", iterations=10)                       # no qid
    bad = qid.copy()
    bad[3] = -1                                                       # a line without qid:
    with pytest.raises(ParameterError):
        train(X, y, loss="rank", qid=bad, iterations=10)
    with pytest.raises(ParameterError):
        train(X, y, loss="rank", qid=np.arange(len(y)), iterations=10)  # no pair at all
    with pytest.raises(ParameterError):
        train(X, y, loss="rank", qid=qid, iterations=10, sampling="permutation")
    with pytest.raises(ParameterError):
        train(X, y, loss="rank", qid=qid, iterations=10, bias="feature")
    with pytest.raises(ParameterError):
        train(X, y, loss="rank", qid=qid, iterations=10, order=[0, 1, 2, 3])   # too short
    with pytest.raises(ParameterError):
        train(X, y, loss="rank", qid=qid, iterations=10, class_weight={1: 2.0})
    with pytest.raises(ParameterError):
        train(X, y, loss="rank", qid=qid[:-1], iterations=10)          # one qid short
    # an explicit order must hold valid pairs: same qid, different labels, indices in range
    for order in ([0, 7], [0, 4], [0, 1, 2], [0, 11], [-1, 0]):  # (0, 7): equal labels; (0, 4): two qids
        with pytest.raises(ParameterError):
            train(X, y, loss="rank", qid=qid, iterations=1, order=order)
    train(X, y, loss="rank", qid=qid, iterations=1, order=[0, 1])    # a valid pair is accepted


def test_loss_parameter_errors(heart):
    X, y = heart["X"], heart["y"]
    with pytest.raises(ParameterError):
        train(X, y, loss="logistic", epochs=1)
    with pytest.raises(ParameterError):
        train(X, heart["y_reg"], loss="eps-insensitive", epsilon=-0.1, epochs=1)
    with pytest.raises(ParameterError):
        train(X, y, loss="log", class_weight={1: 0.0}, epochs=1)
    with pytest.raises(ParameterError):
        train(X, y, loss="log", class_weight={7: 2.0}, epochs=1)       # no such label
    with pytest.raises(ParameterError):
        train(X, heart["y_reg"], loss="eps-insensitive", class_weight={1: 2.0}, epochs=1)
    for bad in (np.nan, np.inf):          # would be ignored (nan) or dominate (inf) silently
        y_bad = heart["y_reg"].copy()
        y_bad[5] = bad
        with pytest.raises(ParameterError):
            train(X, y_bad, loss="eps-insensitive", epochs=1)


# ======================================================= 4. predict_proba ==

def test_predict_proba_is_logistic_of_decision_value(heart):
    X, y = heart["X"], heart["y"]
    model = train(X, y, lam=LAM, epochs=20, loss="log", average_from=0.5)
    p = model.predict_proba(X)
    f = model.decision_function(X)
    assert p.shape == (X.shape[0],) and p.dtype == np.float64
    assert np.all((p > 0.0) & (p < 1.0))
    np.testing.assert_allclose(p, 1.0 / (1.0 + np.exp(-f)), rtol=1e-12, atol=0)
    # P(positive) > 1/2 exactly where the positive label is predicted
    np.testing.assert_array_equal(p > 0.5, model.predict(X) == 1.0)
    # not a constant: the model separates the classes somewhat
    assert p[y == 1].mean() > p[y == -1].mean() + 0.2


def test_predict_proba_extreme_decision_values():
    X = sp.csr_matrix(np.array([[1.0], [-1.0]]))
    model = train(X, np.array([1.0, -1.0]), lam=1.0, iterations=1, order=[0], loss="log")
    # w = 1/2 after one step at z = 0 (g = 1/2); scale the rows to get large |f|
    assert model.w[0] == 0.5
    Xt = sp.csr_matrix(np.array([[0.0], [80.0], [-80.0], [2000.0], [-2000.0]]))
    p = model.predict_proba(Xt)
    assert p[0] == 0.5
    np.testing.assert_allclose(p[1:3], [1.0 / (1.0 + math.exp(-40.0)), 1.0 / (1.0 + math.exp(40.0))], rtol=1e-12)
    assert p[3] == 1.0 and p[4] == 0.0 and np.all(np.isfinite(p))


@pytest.mark.parametrize("loss", ["hinge", "squared-hinge", "eps-insensitive"])
def test_predict_proba_needs_log_loss(heart, loss):
    yv = heart["y_reg"] if loss == "eps-insensitive" else heart["y"]
    model = train(heart["X"], yv, lam=LAM, epochs=1, loss=loss)
    with pytest.raises(ParameterError):
        model.predict_proba(heart["X"])
