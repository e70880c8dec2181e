"""A run lengthened in place (pegasos.linear.LinearRun, pegasos.multiclass.OvrRun) is, at every
length, the run of that length from scratch: the same weights, bias, header and solver state, bit
for bit; the automatic length trains each epoch once.

The reference is fit_linear / fit_multiclass of each length from w_1 = 0 (the trainers whose golden
models tests/test_golden.py pins)."""

import numpy as np
import pytest

import pegasos
from pegasos.errors import ParameterError
from pegasos.examples import as_examples
from pegasos.linear import LinearRun, fit_linear
from pegasos.multiclass import OvrRun, fit_multiclass
from pegasos.options import TrainOptions

from conftest import data_file


@pytest.fixture(scope="module")
def heart():
    X, y = pegasos.load_svmlight(str(data_file("heart_scale/heart_scale")))
    return as_examples((X.tocsr(), y))


def same_state(a, b):
    assert a.keys() == b.keys()
    for key in b:
        if isinstance(b[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        else:
            assert a[key] == b[key], key


SETTINGS = [
    {},                                                    # the automatic defaults: permutation, last half averaged
    {"batch_size": 7},                                     # 270 = 38 * 7 + 4: a short last batch every epoch
    {"bias": "feature"},
    {"bias": "unregularized", "loss": "log"},
    {"sampling": "uniform"},
    {"sampling": "sequential", "average_from": 0.75},
    {"average": True},                                     # Theorem 1's mean of every iterate: never restarts
    {"average": False},                                    # the last iterate
    {"projection": True, "loss": "squared-hinge"},
    {"loss": "eps-insensitive", "epsilon": 0.2},
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_a_lengthened_run_is_each_length_from_scratch(heart, settings):
    options = TrainOptions(lam=1e-3, step_offset=100.0, seed=3, **settings).validate()
    per_epoch = -(-heart.m // options.batch_size)
    schedule = [1, 2, 4, 8, 13]              # doubling, then a cap that is not a power of two
    run = LinearRun(heart, options)
    for i, E in enumerate(schedule):
        nxt = schedule[i + 1] * per_epoch if i + 1 < len(schedule) else None
        got = run.advance(E * per_epoch, nxt)
        want = fit_linear(heart, options.replace(iterations=E * per_epoch))
        np.testing.assert_array_equal(got.w, want.w)
        assert got.bias == want.bias and got.info == want.info
        same_state(got.solver_state, want.solver_state)
        assert got.to_text() == want.to_text()


def test_lengths_that_do_not_double_and_warm_starts(heart):
    """Lengths 100, 250, 251, 900 (the average of the next starts after, at or before the end of the
    last), from given start weights as a lambda path does."""
    options = TrainOptions(lam=1e-2, step_offset=30.0, seed=9).validate()
    w0 = np.linspace(-0.1, 0.1, heart.n_features)
    lengths = [100, 250, 251, 900]
    run = LinearRun(heart, options, start=(w0, 0.0))
    for i, T in enumerate(lengths):
        got = run.advance(T, lengths[i + 1] if i + 1 < len(lengths) else None)
        want = fit_linear(heart, options.replace(iterations=T), start=(w0, 0.0))
        np.testing.assert_array_equal(got.w, want.w)
        same_state(got.solver_state, want.solver_state)


def test_a_run_refuses_to_go_back_or_to_an_average_already_past(heart):
    options = TrainOptions(lam=1e-3, step_offset=100.0).validate()
    run = LinearRun(heart, options)
    run.advance(1000)
    with pytest.raises(ParameterError, match="only go on"):
        run.advance(1000)
    with pytest.raises(ParameterError, match="next_T"):
        run.advance(1500)                    # its average starts at 750, before the 1000 done


def test_rank_loss_is_refused(heart):
    ex = as_examples((np.eye(4), np.array([1.0, 2.0, 1.0, 2.0]), np.array([1, 1, 2, 2])))
    with pytest.raises(ParameterError, match="rank"):
        LinearRun(ex, TrainOptions(loss="rank", sampling="uniform").validate())


@pytest.mark.parametrize("settings", [{}, {"n_threads": 2, "batch_size": 3}, {"class_weight": {1.0: 2.0}}])
def test_one_vs_rest_lengthened_is_each_length_from_scratch(settings):
    from pegasos.io import read_svmlight

    ex = as_examples(read_svmlight(data_file("dna/dna.scale")))
    options = TrainOptions(lam=1e-4, step_offset=1000.0, seed=5, multiclass="ovr", **settings).validate()
    per_epoch = -(-ex.m // options.batch_size)
    run = OvrRun(ex, options)
    for E, nxt in ((1, 2), (2, 4), (4, None)):
        got = run.advance(E * per_epoch, None if nxt is None else nxt * per_epoch)
        want = fit_multiclass(ex, options.replace(iterations=E * per_epoch))
        assert got.to_text() == want.to_text()


def test_the_automatic_length_is_one_run_and_its_header_retrains_it(heart, tmp_path):
    """pegasos.fit with the defaults: epochs_trained is the last length (not the sum of every
    length), the same seed gives the same bytes, and the header's settings retrain the model."""
    model = pegasos.fit(heart, lam=1e-3, seed=4, finish="none")     # the finish's retraining: test_finish.py
    again = pegasos.fit(heart, lam=1e-3, seed=4, finish="none")
    assert model.to_text() == again.to_text()
    info = model.info
    assert int(info["epochs_trained"]) >= int(info["epochs"])
    assert int(info["epochs_trained"]) & (int(info["epochs_trained"]) - 1) == 0 or "epoch cap" in info["stopping"]
    path = tmp_path / "m"
    model.save(path)
    header = pegasos.load_model(path).info
    retrained = fit_linear(heart, TrainOptions.from_header(header).validate())
    np.testing.assert_array_equal(retrained.w, model.w)


def test_an_average_of_more_than_the_last_half_trains_each_length_from_scratch(heart):
    """average_from 0.25: the average of 2T starts before T/2, so the lengths are separate runs."""
    from pegasos import autotune

    options = TrainOptions(lam=1e-3, step_offset=100.0, seed=2, average_from=0.25, finish="none").validate()
    model, epochs, history = autotune.train_until_converged(heart, options, max_epochs=256)
    want = fit_linear(heart, options.replace(epochs=epochs))
    np.testing.assert_array_equal(model.w, want.w)
    assert int(model.info["epochs_trained"]) == sum(h["epochs"] for h in history)


@pytest.mark.parametrize("m, k", [(4, 1), (6, 3), (270, 1), (5, 2)])
def test_small_data_epochs_drawn_together_are_the_epochs_drawn_one_by_one(m, k):
    """Permutation sampling of a few examples draws many epochs at once (numpy's permuted, row by
    row): the same indices as one permutation() per epoch, the generator left in the same state, and
    no batch across an epoch's end (5 examples in batches of 2 are drawn epoch by epoch)."""
    from pegasos.sampling import Orders

    epochs = 3000
    per_epoch = -(-m // k)
    orders = Orders(m, k, "permutation", 13, None)
    blocks = list(orders.blocks(epochs * per_epoch + 1, k))        # and one batch of a new epoch
    assert sum(n for _, n in blocks) == epochs * per_epoch + 1
    if m % k == 0:
        assert len(blocks) < epochs
    got = np.concatenate([b[:n * k] if m % k == 0 else b for b, n in blocks])[:epochs * m]
    rng = np.random.Generator(np.random.PCG64(13))
    want = np.concatenate([rng.permutation(m) for _ in range(epochs)])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(blocks[-1][0][:k], rng.permutation(m)[:k])
    assert orders.rng.bit_generator.state == rng.bit_generator.state


def test_the_doubling_weighs_work_against_gain():
    """Past 2^24 iterations a length is trained only while the last doubling gained more than 1%;
    below it the tolerance decides.  Objectives f(E) = 1 + 1/E (the 1/E decay of averaged SGD)."""
    from pegasos import autotune

    asked = []

    def run(E, next_E):
        asked.append(E)
        return pegasos.LinearModel(w=np.zeros(1), bias=0.0, labels=None, lam=1.0, info={"iterations": "1"}), \
            1.0 + 1.0 / E

    per_epoch = 1 << 14
    model, E, history, reason = autotune.double_until_converged(run, per_epoch, 1e-6, 1 << 12)
    # E = 512 gains 1/512 (0.195%) <= 1%; 1024 epochs would be 2^24 iterations (not beyond): trained;
    # 2048 would pass 2^24 after a gain of 0.098%: not trained
    assert asked == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] and reason == "work cap" and E == 1024
    asked.clear()
    autotune.double_until_converged(run, per_epoch, 1e-6, 1 << 12, work_per_epoch=1 << 20)
    # 64 one-vs-rest problems: the work per epoch is theirs summed, so from 32 epochs on a length must
    # follow a gain above 1%: 128 (after 1/64) is trained, 256 (after 1/128) is not
    assert asked[-1] == 128
    asked.clear()
    model, E, history, reason = autotune.double_until_converged(run, per_epoch, 0.01, 1 << 12)
    assert reason == "converged" and asked[-1] == 128      # 1/128 - 1/256 of about 1: within tol 1%


# ------------------------------------------------------------------ tol_gap --

A9A_FSTAR = 0.3517618027       # lambda = 1e-4, tests/../shared/data/README.md


def test_tol_gap_stops_with_a_certified_gap_and_the_header_retrains_the_model(tmp_path):
    """a9a at lambda = 1e-4, EPS = 1%, plain Pegasos (--finish none): the run stops at the first length
    whose gap is certified; the certificate recomputed for the model holds, the truth (against the
    certified f*) is within it, the length before was not certified, and the header's settings give
    the same bytes."""
    from pegasos.certificate import duality_gap
    from pegasos.io import read_svmlight

    d = read_svmlight(data_file("a9a/a9a"))
    model = pegasos.fit(d, lam=1e-4, seed=1, tol_gap=0.01, finish="none")
    info = model.info
    assert info["stopping"].endswith("certified") and float(info["certified_gap"]) <= 0.01
    E = int(info["epochs"])
    again = duality_gap(model, d.X, d.y, passes=E, tol=0.01, seed=1)
    assert again["rel_gap"] == float(info["certified_gap"])
    f = pegasos.objective(model, d.X, d.y)["objective"]
    assert A9A_FSTAR <= f <= A9A_FSTAR / (1 - 0.01)
    if E > 1:
        shorter = pegasos.fit(d, lam=1e-4, seed=1, epochs=E // 2, step_offset=float(info["step_offset"]))
        assert duality_gap(shorter, d.X, d.y, passes=E // 2, tol=0.01, seed=1)["rel_gap"] > 0.01
    path = tmp_path / "a9a.model"
    model.save(path)
    retrained = fit_linear(as_examples(d), TrainOptions.from_header(pegasos.load_model(path).info).validate())
    np.testing.assert_array_equal(retrained.w, model.w)
    assert pegasos.fit(d, lam=1e-4, seed=1, tol_gap=0.01, finish="none").to_text() == model.to_text()


def test_tol_gap_one_vs_rest_and_its_cap(heart):
    """dna (3 classes), plain Pegasos: one-vs-rest runs lengthened together until the summed gap is
    certified; an unreachable EPS ends at the epoch cap with the gap reached recorded."""
    from pegasos import autotune
    from pegasos.certificate import duality_gap
    from pegasos.io import read_svmlight

    d = read_svmlight(data_file("dna/dna.scale"))
    model = pegasos.fit(d, lam=1e-3, tol_gap=0.05, finish="none")
    assert model.method == "ovr" and model.info["stopping"].endswith("certified")
    E = int(model.info["epochs"])
    assert duality_gap(model, d.X, d.y, passes=E, tol=0.05, seed=1)["rel_gap"] <= 0.05
    capped = autotune.train_until_certified(heart, TrainOptions(lam=1e-3, tol_gap=1e-9, finish="none").validate(),
                                            max_epochs=8)
    assert capped.info["stopping"].endswith("epoch cap") and capped.info["epochs"] == "8"
    assert float(capped.info["certified_gap"]) > 1e-9


@pytest.mark.parametrize("settings, word", [
    ({"tol_gap": 0.0}, "in \\(0, 1\\)"),
    ({"tol_gap": 1.5}, "in \\(0, 1\\)"),
    ({"tol_gap": 0.01, "epochs": 3}, "drop epochs="),
    ({"tol_gap": 0.01, "loss": "log"}, "hinge"),
    ({"tol_gap": 0.01, "bias": "unregularized"}, "bias"),
    ({"tol_gap": 0.01, "multiclass": "crammer-singer", "finish": "none"}, "dual passes from W = 0"),
    ({"tol_gap": 0.01, "schedule": "constant", "eta": 0.01}, "lengthens a run of the Pegasos step"),
])
def test_tol_gap_refuses_what_it_cannot_certify(settings, word):
    with pytest.raises(ParameterError, match=word):
        TrainOptions(**settings).validate()


def test_the_command_line_asks_for_the_certificate_with_tol(tmp_path):
    """Where the dual solver runs, tol_gap=EPS is tol=EPS (the same model): the command line spells it
    --tol EPS only, and the header says the run stopped certified within it."""
    from conftest import ok, run_pegasos

    rng = np.random.default_rng(2)
    lines = []
    for i in range(300):
        x = rng.normal(size=5)
        label = "+1" if x[0] + 0.3 * rng.normal() > 0 else "-1"
        lines.append(label + "".join(f" {j + 1}:{v:.4f}" for j, v in enumerate(x)))
    data = tmp_path / "d.svm"
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "d.model"
    ok(run_pegasos("train", "-q", "-l", "1e-2", "--tol", "0.001", data, model))
    header = pegasos.load_model(model).info
    assert header["solver"] == "dual" and header["tol"] == "0.001" and header["stop"] == "certified"
    assert float(header["certified_gap"]) <= 0.001
    from pegasos.io import read_svmlight

    d = read_svmlight(str(data))
    assert pegasos.fit(d, lam=1e-2, tol_gap=0.001).to_text() == pegasos.fit(d, lam=1e-2, tol=0.001).to_text()


@pytest.mark.parametrize("settings", [{"schedule": "norma", "eta": 0.5}, {"schedule": "constant", "eta": 0.01},
                                      {"sampling": "shuffle-once"}])
def test_step_rules_and_shuffle_once_lengthen_as_runs_from_scratch(heart, settings):
    """The other step rules of Sec. 7.6 (no step offset) and one shuffle for the whole run."""
    options = TrainOptions(lam=1e-3, seed=6, **settings).validate()
    run = LinearRun(heart, options)
    lengths = [270, 540, 1080, 1350]
    for i, T in enumerate(lengths):
        got = run.advance(T, lengths[i + 1] if i + 1 < len(lengths) else None)
        want = fit_linear(heart, options.replace(iterations=T))
        assert got.to_text() == want.to_text()
        same_state(got.solver_state, want.solver_state)
