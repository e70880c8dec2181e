"""The default solver where it can run: passes of dual coordinate ascent from w = 0 (T = 0, no Pegasos
iteration) until they certify the model within tol; resumed runs are Pegasos, finished in the dual on
request.

References: the certified optima of ../shared/data/README.md and the certificate recomputed from
scratch (pegasos.certificate.duality_gap)."""

import numpy as np
import pytest

import pegasos
from pegasos import autotune
from pegasos.certificate import duality_gap
from pegasos.errors import ParameterError
from pegasos.options import TrainOptions

from conftest import data_file, ok, one_error, usage_error, run_pegasos
from small_data import binary, multiclass, write_svm

A9A_FSTAR = 0.3517618027
REUTERS_FSTAR = 0.0422014018


@pytest.mark.parametrize("relative, f_star", [("a9a/a9a", A9A_FSTAR), ("reuters/reuters.trn.bz2", REUTERS_FSTAR)])
def test_the_default_is_certified_from_zero_and_its_header_retrains_it(relative, f_star):
    d = pegasos.read_svmlight(str(data_file(relative)))
    model = pegasos.fit(d, lam=1e-4)
    info = model.info
    assert "iterations" not in info and info["solver"] == "dual" and info["stop"] == "certified"
    assert info["finish"] == "dual" and info["finish_kept"] == "dual" and "step_offset" not in info
    f = pegasos.objective(model, d.X, d.y)["objective"]
    gap = float(info["certified_gap"])
    assert gap <= autotune.DEFAULT_TOL and (f - f_star - 5e-11) / f <= gap      # the proof holds against f*
    assert (f - f_star) / f_star <= 0.01
    again = pegasos.fit(d, TrainOptions.from_header(info))
    np.testing.assert_array_equal(again.w, model.w)


def test_one_vs_rest_from_zero_is_retrained_by_its_header():
    X, y = multiclass(m=450, n=20, classes=3, seed=4)
    model = pegasos.fit((X, y), lam=1e-3)
    assert "iterations" not in model.info and model.info["stop"] == "certified"
    assert len(model.info["finish_passes"].split(",")) == 3
    again = pegasos.fit((X, y), TrainOptions.from_header(model.info))
    np.testing.assert_array_equal(again.W, model.W)
    two = pegasos.fit((X, y), lam=1e-3, n_threads=2)
    np.testing.assert_array_equal(two.W, model.W)


def test_t_zero_goes_with_the_dual_finish_only(tmp_path):
    X, y = binary(m=300, n=10, seed=2, noise=0.1)
    with pytest.raises(ParameterError, match="T = 0, no Pegasos iteration, goes with the dual finish"):
        pegasos.fit((X, y), lam=1e-3, iterations=0)
    with pytest.raises(ParameterError, match="must be positive"):
        pegasos.fit((X, y), lam=1e-3, iterations=-1, finish="dual")
    data = write_svm(tmp_path / "d.svm", X, y)
    usage_error(run_pegasos("train", "-l", "1e-3", "-T", "0", data, tmp_path / "m"), "-T", "--finish dual")
    assert not (tmp_path / "m").exists()
    r = ok(run_pegasos("train", "-l", "1e-3", "-T", "0", "--finish", "dual", data, tmp_path / "m"))
    assert "solver dual (auto: the dual can run: -T/--iterations 0)" in r and "dual solver:" in r
    assert "certified within" in r and "T=0" not in r
    asked = pegasos.load_model(str(tmp_path / "m"))
    default = pegasos.fit((X, y), lam=1e-3)
    np.testing.assert_array_equal(asked.w, default.w)          # the default's first try, which certified
    gap = duality_gap(asked, X, y, passes=20000, tol=1e-9)
    assert gap["rel_gap"] <= float(asked.info["certified_gap"]) + 1e-12


def test_resuming_a_model_of_the_passes_from_zero_keeps_its_weights():
    """Such a model has no step schedule (no Pegasos iteration): the resumed run starts one with a
    calibrated step offset, since with t0 = 0 its first step would forget the weights (a9a: 0.352 -> 0.570
    after one epoch); the run is Pegasos, and with finish="dual" it is finished in the dual."""
    d = pegasos.read_svmlight(str(data_file("a9a/a9a")))
    model = pegasos.fit(d, lam=1e-4)
    assert "iterations" not in model.info
    f0 = pegasos.objective(model, d.X, d.y)["objective"]
    resumed = pegasos.fit(d, lam=1e-4, init=model)
    assert resumed.info["solver"] == "pegasos" and "finish" not in resumed.info
    assert resumed.info["step_offset_rule"] == "calibrated" and int(resumed.info["iterations"]) == d.X.shape[0]
    assert pegasos.objective(resumed, d.X, d.y)["objective"] <= 1.01 * f0          # the weights are kept
    finished = pegasos.fit(d, lam=1e-4, init=model, finish="dual")
    f1 = pegasos.objective(finished, d.X, d.y)["objective"]
    assert f1 <= (1 + autotune.DEFAULT_TOL) * A9A_FSTAR and f1 <= 1.001 * f0
    assert "finish_passes" in finished.info


@pytest.mark.parametrize("kind", ["separable", "duplicated", "sparse"])
def test_a_resumed_near_optimal_model_stays_near_the_optimum(tmp_path, kind):
    """A fresh user's report: one more epoch of a default model (certified from w = 0) went from 0.0305 to
    0.0443 on separable rows, 0.064 to 0.104 on duplicated ones and 0.047 to 0.143 on sparse text, the large
    early steps of a new Pegasos run undoing the passes.  The resumed run is that Pegasos run, and a note
    says when it ended above its start; with --finish dual it is finished in the dual and ends certified
    within tol, never above where it began."""
    rng = np.random.default_rng(1)
    if kind == "sparse":
        X = (rng.random((1500, 800)) < 0.01) * rng.random((1500, 800))
        y = np.where(X @ rng.normal(size=800) + 0.05 * rng.normal(size=1500) > 0, 1.0, -1.0)
    else:
        X = rng.normal(size=(300 if kind == "duplicated" else 1000, 20))
        w = rng.normal(size=20)
        if kind == "duplicated":
            X = np.repeat(X, 3, axis=0)
        y = np.where(X @ w + (0.5 * rng.normal(size=X.shape[0]) if kind == "duplicated" else 0) > 0, 1.0, -1.0)
    data = write_svm(tmp_path / "d.svm", X, y)
    ok(run_pegasos("train", "-q", data, tmp_path / "m"))
    first = pegasos.load_model(str(tmp_path / "m"))
    assert "iterations" not in first.info
    f0 = pegasos.objective(first, X, y)["objective"]
    r = run_pegasos("train", "--init", tmp_path / "m", "--finish", "dual", data, tmp_path / "r")
    assert "certified within" in ok(r)
    resumed = pegasos.load_model(str(tmp_path / "r"))
    f1 = pegasos.objective(resumed, X, y)["objective"]
    bound = duality_gap(resumed, X, y, passes=20000, tol=1e-6)["dual"]
    assert f1 <= (1 + autotune.DEFAULT_TOL) * bound and f1 <= (1 + autotune.DEFAULT_TOL) * f0
    assert f1 <= f0 * (1 + 1e-12)         # the finish starts from the lower of the two: never worse than it began
    assert resumed.info["warm_start"].startswith("weights") and resumed.info["step_offset_rule"] == "calibrated"
    r = run_pegasos("train", "-q", "--init", tmp_path / "m", data, tmp_path / "p")
    plain = pegasos.load_model(str(tmp_path / "p"))
    assert "finish" not in plain.info and plain.info["solver"] == "pegasos"
    assert pegasos.objective(plain, X, y)["objective"] > 1.2 * f0
    assert "the resumed model's objective" in ok(r) + r.stderr and "--finish dual finishes it" in r.stderr


def test_a_model_of_no_iteration_takes_a_given_step_and_the_dual_finish_on_resume(tmp_path):
    """No schedule to keep: a given t0 is the new run's (no finish: whoever sets the step asks for that
    run); -T 0 --finish dual runs the passes from the model's weights; a finish where none applies is
    refused before the data are read."""
    X, y = binary(m=400, n=10, seed=3, noise=0.1)
    data = write_svm(tmp_path / "d.svm", X, y)
    ok(run_pegasos("train", "-q", "-l", "1e-3", data, tmp_path / "m"))
    ok(run_pegasos("train", "-q", "--init", tmp_path / "m", "--t0", "1000", "-T", "50", data, tmp_path / "t"))
    given = pegasos.load_model(str(tmp_path / "t"))
    assert given.info["step_offset"] == "1000.0" and "finish" not in given.info
    assert given.info["iterations"] == "50"
    r = ok(run_pegasos("train", "--init", tmp_path / "m", "-T", "0", "--finish", "dual", data, tmp_path / "z"))
    assert "dual passes from the model's weights" in r and "certified within" in r
    usage_error(run_pegasos("train", "--init", tmp_path / "m", "--finish", "dual", "--loss", "log",
                          tmp_path / "missing.svm", tmp_path / "x"), "--finish dual", "log loss")


def test_a_trace_of_a_model_from_zero_is_said_to_have_no_rows(tmp_path):
    """A fresh user's report: --trace on the default wrote a trace with no rows and `pegasos plot` then
    failed with "no objective values".  train now says why in a note, and plot names the cause and the
    option that traces a Pegasos run (--finish none, whose trace has rows)."""
    X, y = binary(m=400, n=10, seed=3, noise=0.1)
    data = write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "-q", "-l", "1e-3", "--trace", tmp_path / "t.csv", data, tmp_path / "m")
    assert r.returncode == 0 and "the trace has no rows, only the model's dual bound on f*" in r.stderr
    assert "iterations" not in pegasos.load_model(str(tmp_path / "m")).info
    r = run_pegasos("train", "-q", "-l", "1e-3", "--solver", "pegasos", "--trace", tmp_path / "p.csv", data,
                    tmp_path / "p")
    assert r.returncode == 0 and "no rows" not in r.stderr
    pytest.importorskip("matplotlib")
    one_error(run_pegasos("plot", tmp_path / "t.csv", "-o", tmp_path / "t.png"), "t.csv", "no rows",
              "no Pegasos iteration", "--solver pegasos")
    assert not (tmp_path / "t.png").exists()
    ok(run_pegasos("plot", tmp_path / "p.csv", "-o", tmp_path / "p.png"))


def test_zero_epochs_points_to_t_zero():
    """--epochs 0 stays an error (an epoch count is positive), which names the spelling of no Pegasos
    iteration: -T 0 with the dual finish."""
    X, y = binary(m=100, n=5, seed=1, noise=0.1)
    with pytest.raises(ParameterError, match=r'no Pegasos iteration is iterations=0, with finish="dual"'):
        pegasos.fit((X, y), epochs=0, finish="dual")
    with pytest.raises(ParameterError, match=r'goes with the dual finish: finish="dual" or finish_passes='):
        pegasos.fit((X, y), iterations=0)


def test_a_lambda_path_starts_its_dual_passes_from_the_previous_weights():
    """search's warm start: at the next lambda the finish's passes start from the previous lambda's margins
    (as a dual warm start of LIBLINEAR's C search does) and, where they certify, no Pegasos epoch runs; the
    model is certified within tol at its own lambda, as a cold fit is (a9a's path: 0.12 against 0.21 s at
    lambda = 1e-4, folds of one search)."""
    from pegasos.examples import as_examples
    from pegasos.selection import _fit_from

    X, y = binary(m=600, n=15, seed=4, noise=0.2)
    ex = as_examples((X, y))
    first = pegasos.fit((X, y), lam=1e-2)
    model = _fit_from(ex, TrainOptions(lam=1e-3).validate(), (first.w, first.bias))
    info = model.info
    assert "iterations" not in info and info["stop"] == "certified" and info["solver"] == "dual"
    assert info["warm_start"] == "previous lambda"
    gap = duality_gap(model, X, y, passes=20000, tol=1e-9)
    assert gap["rel_gap"] <= float(info["certified_gap"]) + 1e-12 <= autotune.DEFAULT_TOL + 1e-12
    cold = pegasos.fit((X, y), lam=1e-3)
    f_cold = pegasos.objective(cold, X, y)["objective"]
    assert pegasos.objective(model, X, y)["objective"] <= (1 + autotune.DEFAULT_TOL) * f_cold
    assert int(info["finish_passes"]) <= int(cold.info["finish_passes"])    # no more passes than from w = 0


def test_a_resumed_run_that_ends_above_its_start_is_said(tmp_path):
    """A second trial: --init of a certified model with --finish none (0.0303 to 0.0557) or --t0 100 (0.155
    to 32.6) wrote a much worse model without a word, and the w = 0 note said the run had started there.
    A note now compares the resumed model with the one it started from, with -q too, and the w = 0 note no
    longer says where a resumed run started; a finished resume gets neither."""
    X, y = binary(m=600, n=12, seed=5, noise=0.0)
    data = write_svm(tmp_path / "d.svm", X, y)
    ok(run_pegasos("train", "-q", data, tmp_path / "m"))
    r = run_pegasos("train", "-q", "--init", tmp_path / "m", data, tmp_path / "r")
    assert r.returncode == 0 and "the resumed model's objective" in r.stderr
    assert "--finish dual finishes it in the dual" in r.stderr
    r = run_pegasos("train", "-q", "--init", tmp_path / "m", "--t0", "10", data, tmp_path / "r")
    assert r.returncode == 0 and "the resumed model's objective" in r.stderr
    assert "where the run started" not in r.stderr
    r = run_pegasos("train", "-q", "--init", tmp_path / "m", "--finish", "dual", data, tmp_path / "r")
    assert r.returncode == 0 and r.stderr == ""
