"""The step rules of Sec. 7.6 (``schedule="norma"``, ``"constant"``) and the
fixed permutation of Sec. 7.5 (``sampling="shuffle-once"``).

1. Exactness: the compiled loop equals the dense loop of reference.py
   (``step_rule``) to 1e-9 for several T, k, lambda, with and without
   averaging, projection and a bias; shuffle-once equals the reference fed
   one permutation of the seed repeated every epoch.
2. A shrink factor 1 - eta_t lambda <= 0: the step sets w_t+1 to the new
   gradient term eta_t/|A_t| sum g x alone (checked without the reference).
3. Threads, the model header (written, read back, retrains the same bytes;
   headers without the fields are Pegasos'), resuming (T1 + T2 = one run).
4. Errors, on the command line as one line naming the option.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos
import reference as ref
from conftest import one_error, usage_error, ok, run_pegasos
from pegasos.errors import ParameterError
from pegasos.modelfile import load_model
from pegasos.options import TrainOptions, norma_p
from pegasos.trainers import train
from small_data import binary, write_svm

EXACT = 1e-9


def problem(m=150, n=12, seed=0):
    X, y = binary(m=m, n=n, seed=seed)
    X = sp.csr_matrix(X)
    X.sort_indices()
    return X, y


def close(model, w_ref, b_ref):
    scale = max(np.abs(w_ref).max(), abs(b_ref))
    assert scale > 0
    assert np.abs(model.w - w_ref).max() <= EXACT * scale, np.abs(model.w - w_ref).max() / scale
    assert abs(model.bias - b_ref) <= EXACT * scale


RULES = [("norma", None), ("norma", 1.3), ("constant", 0.05), ("constant", 0.5)]


@pytest.mark.parametrize("schedule, eta", RULES)
@pytest.mark.parametrize("lam, T", [(0.01, 60), (0.1, 400)])
@pytest.mark.parametrize("k, projection, average_from, bias",
                         [(1, False, None, "none"), (7, True, 0.5, "none"), (1, False, 0.0, "unregularized"),
                          (5, True, None, "feature"), (4, False, 0.0, "none")])
def test_step_rule_matches_reference(schedule, eta, lam, T, k, projection, average_from, bias):
    X, y = problem()
    order = np.random.default_rng(5).integers(0, X.shape[0], size=T * k)
    model = train(X, y, lam=lam, iterations=T, batch_size=k, projection=projection, average_from=average_from,
                  bias=bias, order=order, schedule=schedule, eta=eta)
    p = eta if eta is not None else ref.norma_p(T)
    batches = [order[i * k:(i + 1) * k] for i in range(T)]
    start = max(1, math.ceil(average_from * T)) if average_from is not None else None
    out = ref.pegasos_outputs(X, y, lam, batches, projection=projection or schedule == "norma", bias=bias,
                              average_starts=() if start is None else (start,), schedule=schedule, eta=p)
    close(model, *(out["last"] if start is None else out[start]))
    assert model.info["schedule"] == schedule
    assert float(model.info["eta"]) == pytest.approx(p, rel=1e-15)
    assert model.info["projection"] == ("on" if projection or schedule == "norma" else "off")


def test_norma_p_is_the_papers_formula():
    """p = 0.5 (2 + 0.5 T^(-1/2))^(1/2): 0.7159 at T = 100, towards 1/sqrt(2) (notes Sec. 4.8)."""
    assert norma_p(100) == pytest.approx(0.5 * math.sqrt(2.05), rel=1e-15)
    assert 0.7 < norma_p(10**6) < norma_p(100) < 0.716
    assert norma_p(10**12) == pytest.approx(1 / math.sqrt(2), rel=1e-6)


@pytest.mark.parametrize("eta, lam", [(10.0, 0.1), (30.0, 0.1), (2.0, 1.0)])
@pytest.mark.parametrize("k, average", [(1, False), (6, True)])
def test_shrink_at_or_below_zero_sets_w_to_the_gradient_term(eta, lam, k, average):
    """eta lambda >= 1: w_t+1 = eta/|A_t| sum_{A_t+} y x (w_t forgotten), so the run stays finite."""
    X, y = problem()
    T = 40
    order = np.random.default_rng(2).integers(0, X.shape[0], size=T * k)
    before = train(X, y, lam=lam, iterations=T - 1, batch_size=k, order=order, schedule="constant", eta=eta)
    after = train(X, y, lam=lam, iterations=T, batch_size=k, order=order, schedule="constant", eta=eta,
                  average=average)
    A = order[(T - 1) * k:T * k]
    Xd = ref.to_dense(X)
    viol = A[y[A] * (Xd[A] @ before.w) < 1.0]
    assert viol.size, "the last batch has no violator: the check would be vacuous"
    w_new = eta * (y[viol][:, None] * Xd[viol]).sum(axis=0) / A.size
    last = train(X, y, lam=lam, iterations=T, batch_size=k, order=order, schedule="constant", eta=eta)
    assert np.abs(last.w - w_new).max() <= EXACT * np.abs(w_new).max()
    assert np.all(np.isfinite(after.w))
    if average:           # the mean of w_1..w_T, w_1 = 0 and each later iterate its own gradient term
        out = ref.pegasos_outputs(X, y, lam, [order[i * k:(i + 1) * k] for i in range(T)], average_starts=(1,),
                                  schedule="constant", eta=eta)
        close(after, *out[1])


@pytest.mark.parametrize("schedule, eta", [("pegasos", None), ("norma", None), ("constant", 0.05)])
@pytest.mark.parametrize("k", [1, 7, 64])
@pytest.mark.parametrize("average_from, projection", [(None, False), (0.5, True)])
def test_shuffle_once_reuses_one_permutation(schedule, eta, k, average_from, projection):
    """One permutation drawn from the seed (numpy's PCG64 permutation of m) for every epoch."""
    X, y = problem()
    m, lam, seed = X.shape[0], 0.05, 11
    T = math.ceil(3.5 * math.ceil(m / k))          # three and a half epochs
    model = pegasos.fit((X, y), lam=lam, iterations=T, batch_size=k, sampling="shuffle-once", seed=seed,
                        average_from=average_from, average=False, projection=projection, schedule=schedule, eta=eta,
                        step_offset=0.0 if schedule == "pegasos" else None)
    perm = np.random.Generator(np.random.PCG64(seed)).permutation(m)
    batches = ref.cut_batches(np.tile(perm, 4), k, m, "permutation", T)
    start = max(1, math.ceil(average_from * T)) if average_from is not None else None
    out = ref.pegasos_outputs(X, y, lam, batches, projection=projection or schedule == "norma",
                              average_starts=() if start is None else (start,), schedule=schedule,
                              eta=eta if schedule != "norma" else ref.norma_p(T))
    close(model, *(out["last"] if start is None else out[start]))
    assert model.info["sampling"] == "shuffle-once"


def test_shuffle_once_is_permutation_for_one_epoch_then_differs():
    X, y = problem()
    per_epoch = X.shape[0]
    settings = dict(lam=0.05, step_offset=0.0, seed=3)
    one = [pegasos.fit((X, y), iterations=per_epoch, sampling=s, **settings).w for s in ("shuffle-once", "permutation")]
    assert np.array_equal(one[0], one[1])           # the first epoch's permutation is the same draw
    two = [pegasos.fit((X, y), iterations=2 * per_epoch, sampling=s, **settings).w
           for s in ("shuffle-once", "permutation")]
    assert not np.array_equal(two[0], two[1])


@pytest.mark.parametrize("schedule, eta", [("norma", None), ("constant", 0.01)])
def test_threads_give_the_same_bits(schedule, eta):
    rng = np.random.default_rng(0)
    X = sp.random(600, 100, density=0.3, format="csr", random_state=1)
    X.sort_indices()
    y = np.where(X @ rng.normal(size=100) > 0, 1.0, -1.0)
    models = [pegasos.fit((X, y), lam=1e-3, iterations=200, batch_size=64, schedule=schedule, eta=eta,
                          n_threads=n, average_from=0.5) for n in (1, 2)]
    assert models[0].to_text() == models[1].to_text()


@pytest.mark.parametrize("settings", [dict(schedule="norma"), dict(schedule="norma", eta=0.9),
                                      dict(schedule="constant", eta=0.25, sampling="shuffle-once")])
def test_header_reads_back_and_retrains_the_same_bytes(tmp_path, settings):
    X, y = problem()
    model = pegasos.fit((X, y), lam=0.02, epochs=3, **settings)
    path = tmp_path / "m.model"
    model.save(path)
    loaded = load_model(str(path))
    options = TrainOptions.from_header(loaded.info)
    assert options.schedule == settings["schedule"]
    assert options.eta == float(model.info["eta"])
    again = pegasos.fit((X, y), options.replace(preset="auto"))
    assert again.to_text() == model.to_text()


def test_header_without_the_fields_is_pegasos():
    X, y = problem()
    model = pegasos.fit((X, y), lam=0.02, epochs=2, step_offset=0.0)
    assert "schedule" not in model.info and "eta" not in model.info
    options = TrainOptions.from_header(model.info)
    assert options.schedule == "pegasos" and options.eta is None


@pytest.mark.parametrize("settings", [dict(schedule="norma", eta=0.75), dict(schedule="constant", eta=0.1),
                                      dict(schedule="norma", eta=0.75, sampling="shuffle-once", batch_size=4),
                                      dict(sampling="shuffle-once", step_offset=3.0, average=True)])
def test_resume_gives_the_bytes_of_one_run(tmp_path, settings):
    X, y = problem()
    options = TrainOptions(lam=1e-2, resume_state=True, **settings)
    per_epoch = -(-X.shape[0] // options.batch_size)
    T1, T2 = per_epoch + per_epoch // 3, 2 * per_epoch + 5
    one = pegasos.fit((X, y), options, iterations=T1 + T2)
    first = pegasos.fit((X, y), options, iterations=T1)
    first.save(tmp_path / "first.model")
    text = (tmp_path / "first.model").read_text()
    if "schedule" in settings:
        assert f"\nschedule {1 if settings['schedule'] == 'norma' else 2}\neta " in text
    second = pegasos.fit((X, y), options.replace(resume_state=None), init=tmp_path / "first.model", iterations=T2)
    assert second.to_text() == one.to_text()
    assert not np.array_equal(first.w, second.w)


def test_resume_keeps_the_step_rule(tmp_path):
    X, y = problem()
    first = pegasos.fit((X, y), lam=1e-2, iterations=50, schedule="norma", resume_state=True)
    first.save(tmp_path / "n.model")
    with pytest.raises(ParameterError, match="schedule="):
        pegasos.fit((X, y), lam=1e-2, iterations=50, schedule="constant", eta=0.1, init=tmp_path / "n.model")
    # a new schedule may start from the weights (no t0 = 0 refusal: the first norma shrink is not 0)
    again = pegasos.fit((X, y), lam=1e-2, iterations=50, schedule="constant", eta=0.1, restart_schedule=True,
                        init=tmp_path / "n.model")
    assert again.info["schedule"] == "constant"


@pytest.mark.parametrize("settings, fragment", [
    (dict(schedule="constant"), "schedule= constant needs the step"),
    (dict(eta=0.5), "eta= sets the step"),
    (dict(schedule="norma", eta=-1.0), "eta: the step must be a positive number"),
    (dict(schedule="norma", step_offset=5.0), "step_offset= offsets the Pegasos step"),
    (dict(schedule="constant", eta=0.1, step_offset=5.0), "step_offset= offsets the Pegasos step"),
    (dict(schedule="norma", kernel="rbf"), "kernels use the Pegasos step"),
    (dict(schedule="fast"), "the step rule must be one of pegasos, norma, constant"),
])
def test_api_errors(settings, fragment):
    with pytest.raises(ParameterError, match=fragment):
        TrainOptions(**settings).validate()


def test_shards_refuse_another_schedule():
    from pegasos.engine_dask import _shard_options

    with pytest.raises(ParameterError, match="schedule= norma: training on shards uses the Pegasos step"):
        _shard_options(TrainOptions(schedule="norma"))


def test_other_schedules_skip_the_automatic_choices():
    options = TrainOptions(schedule="norma")
    assert not options.step_is_automatic and not options.length_is_automatic
    X, y = problem()
    model = pegasos.fit((X, y), options)
    assert "step_offset_rule" not in model.info and "step_offset" not in model.info
    assert model.info["iterations"] == str(10 * X.shape[0])        # DEFAULT_EPOCHS of permutation sampling


def test_cli(tmp_path):
    X, y = problem()
    data = write_svm(tmp_path / "d.svm", X, y)
    out = ok(run_pegasos("train", "--schedule", "norma", "-T", "300", "--sampling", "shuffle-once", data,
                         tmp_path / "n.model"))
    assert "Traceback" not in out
    text = (tmp_path / "n.model").read_text()
    assert "\nschedule norma\n" in text and f"\neta {norma_p(300)!r}\n" in text
    assert "\nsampling shuffle-once\n" in text and "\nprojection on\n" in text
    for args, fragment in [(("--schedule", "constant"), "--schedule constant needs the step: give --eta E"),
                           (("--eta", "0.3"), "--eta sets the step of --schedule norma or constant"),
                           (("--schedule", "norma", "--t0", "4"), "--t0 offsets the Pegasos step"),
                           (("--schedule", "constant", "--eta", "0"), "--eta: the step must be a positive number"),
                           (("--schedule", "norma", "--kernel", "rbf"), "--schedule norma: kernels use")]:
        r = run_pegasos("train", *args, "-T", "10", data, tmp_path / "bad.model")
        usage_error(r, fragment)
        assert not (tmp_path / "bad.model").exists()


def test_kernel_takes_shuffle_once_and_streaming_takes_a_schedule(tmp_path):
    """Kernels draw from the same orders (shuffle-once: the linear kernel equals the linear model on that
    order); the streaming trainer steps with the compiled loop, so it takes the step rules."""
    X, y = problem()
    lam, T = 0.05, 2 * X.shape[0]
    kernel = pegasos.fit((X, y), lam=lam, iterations=T, sampling="shuffle-once", kernel="poly", degree=1,
                         gamma=1.0, coef0=0.0, average=False, seed=4)
    assert kernel.info["sampling"] == "shuffle-once"
    linear = pegasos.fit((X, y), lam=lam, iterations=T, sampling="shuffle-once", average=False, seed=4,
                         step_offset=0.0)
    Xd = ref.to_dense(X)
    assert np.allclose(kernel.decision_function(X), Xd @ linear.w, rtol=1e-9, atol=1e-9)
    data = write_svm(tmp_path / "d.svm", X, y)
    streamed = pegasos.fit(str(data), lam=lam, epochs=2, schedule="constant", eta=0.05, shuffle_buffer=64)
    assert streamed.info["schedule"] == "constant" and streamed.info["eta"] == "0.05"
