"""Threaded mini-batch step (paper Fig. 2, Eq. (8)): the model does not depend
on the number of threads.

``train(..., n_threads=N)`` splits the margins of a batch among N OpenMP
threads and adds the sub-gradient sum to w by feature ranges when the batch
is large enough (``pegasos._core.PARALLEL_MIN_BATCH`` examples and
``PARALLEL_MIN_VALUES`` stored values).  Every coordinate
receives the same floating-point operations in the same order as with one
thread, so these tests demand bit-identical w and bias (``np.array_equal``)
for 1, 2 and 3 threads, and agreement with the dense NumPy reference
(``reference.pegasos``) to 1e-9.

Small synthetic matrices (empty rows, one-value rows, unused columns, more
threads than features) run with the threshold lowered to 2 so that tiny
batches take the threaded path; a9a and heart_scale from $PEGASOS_DATA run
with the real threshold or the lowered one.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import reference as ref
from conftest import data_file, run_pegasos
from pegasos import _core
from pegasos.errors import ParameterError
from pegasos.io import load_svmlight
from pegasos import linear
from pegasos.trainers import train
from pegasos.data import csr_arrays
from pegasos.modelfile import load_model

EXACT = 1e-9                 # max |w - w_ref| / max |w_ref|
THREADS = (1, 2, 3)
LOSSES = ("hinge", "log", "squared-hinge", "eps-insensitive")

pytestmark = pytest.mark.skipif(not _core.OPENMP, reason="pegasos._core was built without OpenMP")


# ----------------------------------------------------------------- helpers --

@pytest.fixture(autouse=True)
def always_threads(monkeypatch):
    """No switching to the serial loop by timing: every run with n_threads > 1
    and k at the threshold runs on the team (the adaptive switch has its own
    test); and train's cap at the processor count lifted, so that 3 threads
    run 3 threads on a 2-core machine."""
    monkeypatch.setattr(_core, "ADAPT", False)
    monkeypatch.setattr(linear, "available_cpus", lambda: 64)


@pytest.fixture
def low_threshold(monkeypatch):
    """Let batches of k >= 2 take the threaded path, however short their rows."""
    monkeypatch.setattr(_core, "PARALLEL_MIN_BATCH", 2)
    monkeypatch.setattr(_core, "PARALLEL_MIN_VALUES", 0)


def first_threaded_k(X):
    """Smallest k for which the library's thresholds let X's batches run on threads."""
    mean_row = X.nnz / X.shape[0]
    return max(_core.PARALLEL_MIN_BATCH, math.ceil(_core.PARALLEL_MIN_VALUES / mean_row))


def synthetic(m=61, n=23, seed=0):
    """CSR (m, n) with empty rows, one-value rows, an unused column and a few
    dense rows; labels -1/+1 from a hidden w plus noise; real targets."""
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=0.25, random_state=rng, format="lil")
    X[:, 4] = 0.0                                      # a column no example uses
    for i in range(0, m, 7):
        X[i, :] = 0.0                                  # empty rows
    for i in range(3, m, 11):
        X[i, :] = 0.0
        X[i, int(rng.integers(0, n))] = rng.normal()    # one-value rows
    X[5, :] = rng.normal(size=n)                        # dense rows
    X[5, 4] = 0.0
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    X.data = rng.normal(size=X.nnz) * 2.0
    w_true = rng.normal(size=n)
    score = X @ w_true
    y = np.where(score + 0.3 * rng.normal(size=m) > 0, 1.0, -1.0)
    y[:2] = (-1.0, 1.0)
    y_reg = score + 0.1 * rng.normal(size=m)
    return X, y, y_reg


def radius2(loss, lam, X, y, sw=None, epsilon=0.0):
    """Projection ball: 1/lam for the unweighted hinge, else 2 f(0) / lam."""
    if loss == "hinge" and sw is None:
        return 1.0 / lam
    f0 = ref.objective(X, y, lam, np.zeros(X.shape[1]), loss=loss, epsilon=epsilon, sample_weight=sw)
    return 2.0 * f0 / lam


def fit_all(X, y, threads=THREADS, **kw):
    """The models for each thread count; asserts they are bit-identical."""
    models = [train(X, y, n_threads=nt, **kw) for nt in threads]
    for nt, model in zip(threads[1:], models[1:]):
        assert np.array_equal(model.w, models[0].w), f"w differs with {nt} threads"
        assert model.bias == models[0].bias or (math.isnan(model.bias) and math.isnan(models[0].bias))
        assert model.info == models[0].info
    return models[0]


def state_run(X, y, k, n_iter, n_threads, seed=0, **state_kw):
    """A LinearState run on CSR X with a uniform order; returns the state."""
    indptr, indices, data = csr_arrays(X)
    order = np.random.default_rng(seed).integers(0, X.shape[0], size=n_iter * k)
    opts = dict(projection=False, avg_start=0, bias_mode=0, loss=0)
    opts.update(state_kw)
    state = _core.LinearState(X.shape[1], 1e-3, **opts)
    state.run(indptr, indices, data, y, order, n_iter, k, None, n_threads)
    return state


# ------------------------------------------------ synthetic, lowered threshold --

@pytest.mark.parametrize("k", [2, 3, 5, 8, 61])
@pytest.mark.parametrize("loss", LOSSES)
def test_synthetic_identical_and_equal_to_reference(low_threshold, k, loss):
    X, ypm, y_reg = synthetic()
    y = y_reg if loss == "eps-insensitive" else ypm
    m, lam, T = X.shape[0], 1e-2, 40
    order = np.random.default_rng(k).integers(0, m, size=T * k)
    model = fit_all(X, y, lam=lam, iterations=T, batch_size=k, order=order, loss=loss, epsilon=0.2,
                    average_from=0.5)
    w_ref, b_ref = ref.pegasos(X, y, lam, ref.cut_batches(order, k, m, "uniform", T), loss=loss, epsilon=0.2,
                               bias=model.bias_mode,        # the task's default (regression: "feature")
                               projection=model.info["projection"] == "on", average_from_t=20,
                               radius2=radius2(loss, lam, X.toarray(), y, epsilon=0.2))
    assert ref.rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


@pytest.mark.parametrize("bias", ["none", "feature", "unregularized"])
@pytest.mark.parametrize("projection", [False, True], ids=["noproj", "proj"])
@pytest.mark.parametrize("output", ["last", "average", "suffix"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_synthetic_options(low_threshold, bias, projection, output, weighted):
    X, y, _ = synthetic(seed=1)
    m, lam, k, T = X.shape[0], 1e-2, 7, 30             # m = 61 is not a multiple of k
    class_weight = {1.0: 3.0, -1.0: 0.5} if weighted else None
    sw = np.where(y > 0, 3.0, 0.5) if weighted else None
    avg = {"last": {}, "average": dict(average=True), "suffix": dict(average_from=0.6)}[output]
    start = {"last": None, "average": 1, "suffix": math.ceil(0.6 * T)}[output]
    for sampling in ("uniform", "permutation"):
        model = fit_all(X, y, lam=lam, iterations=T, batch_size=k, sampling=sampling, seed=4, bias=bias,
                        projection=projection, class_weight=class_weight, **avg)
        if sampling == "uniform":
            order = np.random.Generator(np.random.PCG64(4)).integers(0, m, size=T * k)
        else:
            rng = np.random.Generator(np.random.PCG64(4))
            order = np.concatenate([rng.permutation(m) for _ in range(math.ceil(T / math.ceil(m / k)))])
        batches = ref.cut_batches(order, k, m, sampling, T)
        w_ref, b_ref = ref.pegasos(X, y, lam, batches, projection=projection, bias=bias, average_from_t=start,
                                   sample_weight=sw, radius2=radius2("hinge", lam, X.toarray(), y, sw))
        assert ref.rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT
        if bias != "none":
            assert model.bias != 0.0


def test_team_actually_runs_and_state_is_identical(low_threshold):
    """The threaded path is taken (team of the requested size) and leaves the
    whole state (scale, tracked norm, running average) as the serial loop."""
    X, y, _ = synthetic(seed=2)
    runs = {nt: state_run(X, y, 9, 50, nt, avg_start=10, bias_mode=1, projection=True) for nt in THREADS}
    assert runs[1].team_size == 0 and runs[1].team_iterations == 0
    for nt in (2, 3):
        assert runs[nt].team_size == nt and runs[nt].team_iterations == 50
        for attr in ("a", "sqnorm", "A", "b", "b_sum", "n_avg", "t", "n_refold"):
            assert getattr(runs[nt], attr) == getattr(runs[1], attr), attr
        assert np.array_equal(runs[nt].weights()[0], runs[1].weights()[0])
        assert np.array_equal(runs[nt].average()[0], runs[1].average()[0])


def test_adaptive_switching_keeps_the_iterates(low_threshold, monkeypatch):
    """With ADAPT, run() alternates timed chunks of threads and serial loop;
    with tiny chunks and frequent re-timing both are used, in any mix, and
    the state is the serial loop's."""
    monkeypatch.setattr(_core, "ADAPT", True)
    monkeypatch.setattr(_core, "ADAPT_CHUNK_EXAMPLES", 16)
    monkeypatch.setattr(_core, "ADAPT_PROBE", 1.0)
    X, y, _ = synthetic(seed=6)
    serial = state_run(X, y, 4, 200, 1, avg_start=50, bias_mode=2, projection=True, loss=1)
    mixed = state_run(X, y, 4, 200, 2, avg_start=50, bias_mode=2, projection=True, loss=1)
    assert mixed.team_chunks > 2 and mixed.serial_chunks > 2, (mixed.team_chunks, mixed.serial_chunks)
    assert 0 < mixed.team_iterations < 200
    for attr in ("a", "sqnorm", "A", "b", "b_sum", "n_avg", "t"):
        assert getattr(mixed, attr) == getattr(serial, attr), attr
    assert np.array_equal(mixed.average()[0], serial.average()[0])


def test_more_threads_than_features_and_empty_matrix(low_threshold):
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, -2.0], [0.0, 0.0], [0.5, 0.5]]))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    model = fit_all(X, y, threads=(1, 2, 3, 8), lam=0.1, iterations=25, batch_size=4, bias="feature")
    assert np.any(model.w != 0.0)
    empty = sp.csr_matrix((6, 3))                        # no stored value at all
    model = fit_all(empty, np.array([1.0, -1.0] * 3), lam=0.1, iterations=10, batch_size=3, bias="unregularized")
    assert np.all(model.w == 0.0)


def test_float32_data(low_threshold):
    X, y, _ = synthetic(seed=3)
    X32 = X.astype(np.float32)
    model = fit_all(X32, y, lam=1e-2, iterations=30, batch_size=6, average_from=0.5, bias="feature")
    w_ref, b_ref = ref.pegasos(X32.astype(np.float64), y, 1e-2,
                               ref.cut_batches(np.random.Generator(np.random.PCG64(1)).integers(
                                   0, X.shape[0], size=30 * 6), 6, X.shape[0], "uniform", 30),
                               bias="feature", average_from_t=15)
    assert ref.rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


def test_repeated_example_in_a_batch(low_threshold):
    """Sampling with replacement: the same row twice in one batch is added
    twice, the second add seeing the first (as in the serial loop)."""
    X, y, _ = synthetic(seed=4)
    order = np.tile(np.array([5, 5, 6, 5, 1, 6], dtype=np.int64), 20)
    model = fit_all(X, y, lam=1e-2, iterations=20, batch_size=6, order=order, projection=True)
    w_ref, b_ref = ref.pegasos(X, y, 1e-2, ref.cut_batches(order, 6, X.shape[0], "uniform", 20), projection=True)
    assert ref.rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


# ------------------------------------------------------------- real data --

@pytest.fixture(scope="module")
def a9a():
    X, y = load_svmlight(str(data_file("a9a/a9a")))
    return X, ref.labels_pm(y)


def test_a9a_thresholds(a9a):
    """The team runs from the first k the thresholds allow, not below."""
    X, y = a9a
    k = first_threaded_k(X)
    assert 16 <= k <= 4096
    assert state_run(X, y, k, 3, 2).team_iterations == 3
    assert state_run(X, y, k - 1, 3, 2).team_iterations == 0
    assert state_run(X, y, k, 3, 1).team_iterations == 0


@pytest.mark.parametrize("k", ["first", 1001, 4096])
def test_a9a_identical_at_real_threshold(a9a, k):
    X, y = a9a
    k = first_threaded_k(X) if k == "first" else k
    model = fit_all(X, y, lam=1e-4, epochs=1, batch_size=k, sampling="permutation", average_from=0.5,
                    projection=True)
    assert np.any(model.w != 0.0)


@pytest.mark.parametrize("loss", ["log", "squared-hinge"])
def test_a9a_other_losses_weights_and_bias(a9a, loss):
    X, y = a9a
    fit_all(X, y, threads=(1, 2), lam=1e-4, iterations=20, batch_size=700, loss=loss, bias="unregularized",
            class_weight={1.0: 2.0}, average=True)


def test_a9a_whole_data_batch_equals_reference(a9a):
    """k = m (every batch is the whole data set): full sub-gradient steps."""
    X, y = a9a
    m, T, lam = X.shape[0], 12, 1e-4
    order = np.tile(np.arange(m, dtype=np.int64), T)
    model = fit_all(X, y, lam=lam, iterations=T, batch_size=m, sampling="sequential", bias="feature",
                    projection=True)
    w_ref, b_ref = ref.pegasos(X, y, lam, ref.cut_batches(order, m, m, "sequential", T), projection=True,
                               bias="feature")
    assert ref.rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


def test_a9a_equals_reference_above_threshold(a9a):
    X, y = a9a
    m, k, T, lam = X.shape[0], first_threaded_k(X) + 3, 25, 1e-4
    order = np.random.default_rng(9).integers(0, m, size=T * k)
    model = fit_all(X, y, threads=(1, 2), lam=lam, iterations=T, batch_size=k, order=order, average_from=0.4)
    w_ref, b_ref = ref.pegasos(X, y, lam, ref.cut_batches(order, k, m, "uniform", T), average_from_t=10)
    assert ref.rel_err(model.w, model.bias, w_ref, b_ref) <= EXACT


def test_heart_scale_regression_lowered_threshold(low_threshold):
    X, y = load_svmlight(str(data_file("heart_scale/heart_scale")))
    target = X @ np.linspace(-1.0, 1.0, X.shape[1])
    fit_all(X, target, lam=1e-2, epochs=3, batch_size=10, loss="eps-insensitive", epsilon=0.1,
            sampling="permutation", bias="feature", average_from=0.5)


# -------------------------------------------------- parameters and the CLI --

@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_thread_count_is_refused(bad):
    X, y, _ = synthetic()
    with pytest.raises(ParameterError, match="threads"):
        train(X, y, iterations=3, n_threads=bad)


def test_rank_loss_stays_serial_and_identical(low_threshold):
    X, _, y_reg = synthetic(seed=5)
    grade = np.digitize(y_reg, np.quantile(y_reg, [0.3, 0.7])).astype(np.float64)
    qid = np.arange(X.shape[0], dtype=np.int64) % 4
    fit_all(X, grade, lam=1e-2, iterations=30, batch_size=5, loss="rank", qid=qid)


def test_thresholds_are_documented():
    assert isinstance(_core.PARALLEL_MIN_BATCH, int) and _core.PARALLEL_MIN_BATCH >= 2
    assert isinstance(_core.PARALLEL_MIN_VALUES, int) and _core.PARALLEL_MIN_VALUES >= 0
    from pegasos.options import TrainOptions

    doc = " ".join(TrainOptions.__doc__.split())
    assert f"k >= {_core.PARALLEL_MIN_BATCH}" in doc and f"{_core.PARALLEL_MIN_VALUES} stored values" in doc


def test_cli_jobs_gives_the_same_model_file(tmp_path):
    data = data_file("a9a/a9a")
    files = []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}.model"
        done = run_pegasos("train", "-q", "-k", "2048", "--epochs", "2", "--projection", "--jobs", jobs,
                           data, out)
        assert done.returncode == 0, done.stderr
        files.append(out.read_bytes())
    assert files[0] == files[1]
    assert np.any(load_model(str(tmp_path / "jobs2.model")).w != 0.0)


def test_thread_count_beyond_the_processors_is_capped_not_a_crash():
    """--jobs 100000 used to segfault (and 40000 to fail in libgomp); the model must
    simply equal the one-thread model."""
    X, y = load_svmlight(str(data_file("a9a/a9a")))
    kw = dict(lam=1e-4, epochs=1, batch_size=256, sampling="permutation", seed=2)
    one = train(X, y, n_threads=1, **kw)
    many = train(X, y, n_threads=100_000, **kw)
    assert np.array_equal(one.w, many.w) and one.bias == many.bias
