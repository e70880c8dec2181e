"""Resuming a run from a model file (``pegasos.fit(..., init=MODEL)``, ``pegasos train --init``).

1. T1 iterations saved with the resume section, then T2 more from the file,
   give the bytes of one run of T1 + T2 (API and command line): uniform,
   permutation and sequential sampling with T1 inside an epoch, k = 1 and
   k > 1, averaging (all iterates, last iterate, a suffix that starts after
   T1), the three bias modes; and the comparison can fail (without the saved
   order, or with another seed, the model differs).
2. The section is ignored by predict/objective, survives load/save byte for
   byte, and a model without it still loads and resumes from its weights.
3. New data: more features grow the model (equal to a run on the data padded
   with empty columns), fewer keep its dimension.
4. Errors: a setting that differs from the model's, kernel and multiclass
   models, a damaged section (file and line), --restart-schedule with t0 = 0.
"""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import pegasos
from pegasos.cli import main
from pegasos.errors import ModelFormatError, ParameterError
from pegasos.examples import as_examples
from pegasos.linear import fit_linear
from pegasos.options import TrainOptions

from conftest import error_line, ok, run_pegasos


def problem(m=203, d=30, seed=0, regression=False):
    rng = np.random.default_rng(seed)
    X = sp.random(m, d, density=0.3, format="csr", random_state=seed, dtype=np.float64)
    X.sort_indices()
    score = X @ rng.normal(size=d) + 0.1 * rng.normal(size=m)
    y = score if regression else np.where(score > 0, 1.0, -1.0)
    return X, y


def write_svm(path, X, y):
    X = sp.csr_matrix(X)
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            cells = " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi]))
            f.write(f"{y[i]:+g} {cells}\n")
    return str(path)


AVERAGING = {"all": dict(average=True), "last": dict(average=False), "suffix": dict(average_from=0.5)}


def two_runs(tmp_path, X, y, T1, T2, **settings):
    """(one run of T1 + T2, T1 then T2 from the saved file), as model texts."""
    options = TrainOptions(lam=1e-2, step_offset=5.0, resume_state=True, **settings)
    one = pegasos.fit((X, y), options, iterations=T1 + T2)
    first = pegasos.fit((X, y), options, iterations=T1)
    first.save(tmp_path / "first.model")
    second = pegasos.fit((X, y), options.replace(resume_state=None), init=tmp_path / "first.model", iterations=T2)
    return one, first, second


@pytest.mark.parametrize("sampling", ["uniform", "permutation", "sequential"])
@pytest.mark.parametrize("k", [1, 8])
@pytest.mark.parametrize("averaging", ["all", "last", "suffix"])
@pytest.mark.parametrize("bias", ["none", "feature", "unregularized"])
def test_api_resume_gives_the_bytes_of_one_run(tmp_path, sampling, k, averaging, bias):
    X, y = problem()
    per_epoch = -(-203 // k)
    T1, T2 = per_epoch + per_epoch // 3, 2 * per_epoch + 5       # T1 inside the second epoch
    one, first, second = two_runs(tmp_path, X, y, T1, T2, sampling=sampling, batch_size=k, bias=bias,
                                  **AVERAGING[averaging])
    assert second.to_text() == one.to_text()
    assert second.info["iterations"] == str(T1 + T2)
    assert "resume_state 1" in second.to_text()
    assert not np.array_equal(first.w, second.w)


def test_resume_of_regression_and_log_loss(tmp_path):
    X, y = problem(regression=True)
    one, _, second = two_runs(tmp_path, X, y, 77, 150, loss="eps-insensitive", epsilon=0.05, average=True)
    assert second.to_text() == one.to_text()
    X, y = problem()
    one, _, second = two_runs(tmp_path, X, y, 77, 150, loss="log", class_weight={1.0: 2.0}, sampling="uniform")
    assert second.to_text() == one.to_text()


@pytest.mark.parametrize("sampling", ["uniform", "permutation", "sequential"])
def test_the_saved_order_is_what_makes_them_equal(tmp_path, sampling):
    """Continuing the weights and t without the order's state gives another model; for permutation
    and sequential sampling so does forgetting where the epoch was cut.  (numpy's i.i.d. draws
    continue one stream across calls, so for uniform sampling the generator state is all it takes.)"""
    X, y = problem()
    one, first, second = two_runs(tmp_path, X, y, 51, 120, sampling=sampling, average=True)
    assert second.to_text() == one.to_text()
    ex = as_examples((X, y))
    options = TrainOptions(lam=1e-2, step_offset=5.0, sampling=sampling, average=True, iterations=120)
    fresh = fit_linear(ex, options, init={key: value for key, value in first.solver_state.items()
                                          if key not in ("orders", "rng")})
    if sampling != "sequential":
        assert not np.array_equal(fresh.w, one.w)
    if sampling != "uniform":
        cut = {**first.solver_state, "orders": dict(first.solver_state["orders"], unit_done=0)}
        assert not np.array_equal(fit_linear(ex, options, init=cut).w, one.w)


def test_a_given_seed_starts_a_new_random_stream(tmp_path):
    X, y = problem()
    one, _, _ = two_runs(tmp_path, X, y, 50, 120, sampling="permutation", average=True)
    reseeded = pegasos.fit((X, y), init=tmp_path / "first.model", iterations=120, seed=7)
    assert reseeded.info["seed"] == "7" and reseeded.info["iterations"] == "170"
    assert not np.array_equal(reseeded.w, one.w)
    # the stream is the seed's own: the same as continuing the state with an order drawn from seed 7
    first = pegasos.load_model(str(tmp_path / "first.model"))
    state = {key: value for key, value in first.solver_state.items() if key not in ("orders", "rng")}
    options = TrainOptions(lam=1e-2, step_offset=5.0, sampling="permutation", average=True, iterations=120, seed=7)
    np.testing.assert_array_equal(fit_linear(as_examples((X, y)), options, init=state).w, reseeded.w)


def test_suffix_started_before_the_cut_goes_on_from_its_own_start(tmp_path):
    """A short second run: one run would average from ceil(F (T1 + T2)) < T1, which is gone;
    the saved average goes on from its own start ceil(F T1) (iterates T1/2..T1+T2)."""
    X, y = problem()
    one, first, second = two_runs(tmp_path, X, y, 300, 50, sampling="permutation", average_from=0.5)
    assert first.info["averaged_iterates"] == "150..300"
    assert second.info["averaged_iterates"] == "150..350"
    assert one.info["averaged_iterates"] == "175..350"
    assert np.all(np.isfinite(second.w)) and not np.array_equal(second.w, one.w)


# ------------------------------------------------------------------ command line --
def same_run(a, b):
    """The model files of ``a`` and ``b`` hold the same run: their bytes but the solver's reason, which
    says how each was asked for (a resumed run is Pegasos because it resumes, a first one because of its
    -T, say)."""
    def lines(path):
        return [ln for ln in path.read_bytes().split(b"\n") if not ln.startswith(b"solver_reason ")]
    return lines(a) == lines(b)


def cli(*args):
    result = CliRunner().invoke(main, ["train", "-q", *map(str, args)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("args", [
    ("--sampling", "uniform", "--average"),
    ("--sampling", "permutation", "-k", "4", "--no-average", "--bias", "feature"),
    ("--sampling", "sequential", "--average", "--bias", "unregularized"),
    ("--sampling", "permutation", "--t0", "200"),                      # suffix averaging, start after T1
    (),                                                                # the defaults: calibrated t0 kept
])
def test_cli_resume_gives_the_bytes_of_one_run(tmp_path, args):
    X, y = problem()
    data = write_svm(tmp_path / "d.svm", X, y)
    one, first, second = (tmp_path / n for n in ("one.model", "first.model", "second.model"))
    cli("-l", "0.01", "-T", 400, "--resume-state", *args, data, one)
    cli("-l", "0.01", "-T", 130, "--resume-state", *args, data, first)
    cli("--init", first, "-T", 270, data, second)                      # the rest from the model's header
    assert same_run(second, one)
    cli("--init", first, "-T", 270, "--no-resume-state", data, second)
    cli("-l", "0.01", "-T", 400, "--solver", "pegasos", *args, data, one)    # what --init continues
    assert same_run(second, one)
    assert b"resume_state" not in one.read_bytes()


def test_cli_resume_in_place_with_epochs(tmp_path):
    """A daily job: the model file is read, then replaced; --epochs counts the iterations to add."""
    X, y = problem()
    data = write_svm(tmp_path / "d.svm", X, y)
    cli("-l", "0.01", "--epochs", 1, "--resume-state", "--average", data, tmp_path / "one.model")
    cli("-l", "0.01", "--epochs", 1, "--resume-state", "--average", data, tmp_path / "m.model")
    cli("--init", tmp_path / "m.model", data, tmp_path / "m.model")    # default: one more epoch
    model = pegasos.load_model(str(tmp_path / "m.model"))
    assert model.info["iterations"] == str(2 * 203)
    cli("-l", "0.01", "-T", 406, "--resume-state", "--average", data, tmp_path / "two.model")
    assert same_run(tmp_path / "m.model", tmp_path / "two.model")


def test_cli_refuses_a_setting_that_differs(tmp_path):
    X, y = problem()
    data = write_svm(tmp_path / "d.svm", X, y)
    cli("-l", "0.01", "-T", 100, "--resume-state", data, tmp_path / "m.model")
    r = run_pegasos("train", "--init", tmp_path / "m.model", "-l", "0.001", data, tmp_path / "n.model")
    error_line(r, "--lambda", "lambda 0.01", "--restart-schedule")
    assert not (tmp_path / "n.model").exists()
    for args, words in [(("-k", "2"), ("-k/--batch-size", "batch size k 1")),
                        (("--loss", "log"), ("--loss", "'hinge'")),
                        (("--bias", "feature"), ("--bias", "'none'")),
                        (("--average",), ("--average", "suffix from 0.5")),
                        (("--t0", "3"), ("--t0", "step offset t0")),
                        (("--restart-schedule", "--t0", "0"), ("--restart-schedule", "t0 = 0"))]:
        result = CliRunner().invoke(main, ["train", "-q", "--init", str(tmp_path / "m.model"), *args, data,
                                           str(tmp_path / "n.model")])
        assert result.exit_code == 1 and result.output.startswith("Error: "), (args, result.output)
        for word in words:
            assert word in result.output, (args, result.output)
    result = CliRunner().invoke(main, ["train", "--restart-schedule", data, str(tmp_path / "n.model")])
    assert result.exit_code == 2 and "--init" in result.output


# ----------------------------------------------------------- the model file --
def test_section_is_ignored_by_prediction_and_survives_load_save(tmp_path):
    X, y = problem()
    options = TrainOptions(lam=1e-2, iterations=300, average=True, step_offset=5.0)
    plain = pegasos.fit((X, y), options)
    with_state = pegasos.fit((X, y), options, resume_state=True)
    plain.save(tmp_path / "plain.model")
    with_state.save(tmp_path / "state.model")
    a, b = pegasos.load_model(str(tmp_path / "plain.model")), pegasos.load_model(str(tmp_path / "state.model"))
    assert a.solver_state is None and b.solver_state is not None
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert pegasos.objective(a, X, y) == pegasos.objective(b, X, y)
    b.save(tmp_path / "again.model")
    assert (tmp_path / "again.model").read_bytes() == (tmp_path / "state.model").read_bytes()
    text = (tmp_path / "state.model").read_text()
    assert text.startswith((tmp_path / "plain.model").read_text()[:-len("end\n")])
    # the section holds the last iterate beside the averaged weights: v times a is w_{T+1}
    state = b.solver_state
    last = pegasos.fit((X, y), options.replace(average=False))
    np.testing.assert_allclose(state["a"] * state["v"], last.w, rtol=1e-12, atol=1e-15)
    for command in ("predict", "objective", "eval"):
        data = write_svm(tmp_path / "d.svm", X, y)
        extra = [str(tmp_path / "out.txt")] if command == "predict" else []
        result = CliRunner().invoke(main, [command, data, str(tmp_path / "state.model"), *extra])
        assert result.exit_code == 0, result.output


def test_model_without_section_resumes_from_its_weights(tmp_path):
    X, y = problem()
    options = TrainOptions(lam=1e-2, iterations=300, average=True, step_offset=5.0, sampling="uniform")
    plain = pegasos.fit((X, y), options)
    plain.save(tmp_path / "plain.model")
    later = pegasos.fit((X, y), init=tmp_path / "plain.model", iterations=100)
    assert later.info["iterations"] == "400" and later.info["warm_start"] == "weights"
    assert later.info["averaged_iterates"] == "301..400"          # the average restarts over the new iterates
    # the same as fit_linear from w_1 = the saved weights with the counter at t = 300 (step 1/(lambda (t + t0)))
    ex = as_examples((X, y))
    run = TrainOptions(lam=1e-2, iterations=100, average=True, step_offset=5.0, sampling="uniform",
                       preset="paper")
    from pegasos.linear import projection_radius2, start_state

    state = start_state(plain.w, plain.bias, ex.n_features, run, run.plan(ex.m), projection_radius2("hinge", 1e-2, 1))
    state.update(t=300, avg_start=301)
    expected = fit_linear(ex, run, init=state)
    np.testing.assert_array_equal(later.w, expected.w)


def test_restart_schedule_is_a_fresh_run_from_the_weights(tmp_path):
    X, y = problem()
    options = TrainOptions(lam=1e-2, iterations=300, average=True, step_offset=5.0, resume_state=True)
    first = pegasos.fit((X, y), options)
    restarted = pegasos.fit((X, y), init=first, restart_schedule=True, lam=2e-2, iterations=100, step_offset=5.0)
    run = TrainOptions(lam=2e-2, iterations=100, average=True, step_offset=5.0, sampling="permutation",
                       preset="paper")
    expected = fit_linear(as_examples((X, y)), run, start=(first.w, first.bias))
    np.testing.assert_array_equal(restarted.w, expected.w)
    assert restarted.info["warm_start"] == "restart-schedule" and restarted.info["iterations"] == "100"
    with pytest.raises(ParameterError, match="forgets"):
        pegasos.fit((X, y), init=first, restart_schedule=True, step_offset=0.0)


def test_restart_schedule_for_a_new_lambda_calibrates_its_own_step_offset():
    """The old lambda's calibrated t0 would leave the weights where they were (a reported case:
    objective 11.4 at the new lambda against 0.81 for a fresh run); a restart without --t0
    calibrates t0 for the new lambda on the new data, as a first run does."""
    from pegasos.autotune import calibrate_step_offset

    X, y = problem(m=2000, d=40)
    first = pegasos.fit((X, y), lam=1e-4, epochs=5, resume_state=True)
    restarted = pegasos.fit((X, y), init=first, restart_schedule=True, lam=1e-1, epochs=5)
    fresh = pegasos.fit((X, y), lam=1e-1, epochs=5)
    assert restarted.info["step_offset_rule"] == "calibrated"
    assert float(restarted.info["step_offset"]) == pytest.approx(
        calibrate_step_offset(X, y, 1e-1, seed=1, n_features=X.shape[1], bias="none"), rel=1e-12)
    f_restarted = pegasos.objective(restarted, X, y)["objective"]
    f_fresh = pegasos.objective(fresh, X, y)["objective"]
    assert f_restarted <= 1.02 * f_fresh
    kept = pegasos.fit((X, y), init=first, restart_schedule=True, lam=1e-1, epochs=5,
                       step_offset=float(first.info["step_offset"]))
    assert pegasos.objective(kept, X, y)["objective"] > 1.5 * f_fresh          # what the old t0 gave


def test_more_features_grow_the_model_fewer_keep_it(tmp_path):
    X, y = problem(d=30)
    X1 = X[:, :20].tocsr()          # day 1 knows 20 features, day 2 30
    options = TrainOptions(lam=1e-2, iterations=250, average=True, step_offset=5.0, bias="feature",
                           resume_state=True)
    first = pegasos.fit((X1, y), options)
    grown = pegasos.fit((X, y), init=first, iterations=300)
    assert grown.n_features == 30
    # the same as day 1 on the data padded with 10 empty columns
    padded = sp.csr_matrix((X1.data, X1.indices, X1.indptr), shape=(X.shape[0], 30))
    first30 = pegasos.fit((padded, y), options)
    assert first30.n_features == 30
    expected = pegasos.fit((X, y), init=first30, iterations=300)
    np.testing.assert_array_equal(grown.w, expected.w)
    assert grown.bias == expected.bias
    kept = pegasos.fit((X1, y), init=grown, iterations=50)
    assert kept.n_features == 30
    np.testing.assert_array_equal(kept.w[20:], grown.w[20:] * 0 + kept.w[20:])
    assert pegasos.load_model(_saved(kept, tmp_path)).n_features == 30


def _saved(model, tmp_path):
    path = str(tmp_path / "saved.model")
    model.save(path)
    return path


def test_kernel_multiclass_and_ranking_models_are_refused(tmp_path):
    X, y = problem()
    kernel = pegasos.fit((X, y), kernel="rbf", gamma=0.1, epochs=1)
    with pytest.raises(ParameterError, match="resume is for linear models"):
        pegasos.fit((X, y), init=kernel)
    y3 = np.arange(X.shape[0]) % 3.0
    mc = pegasos.fit((X, y3), epochs=1, step_offset=5.0)
    with pytest.raises(ParameterError, match="3-class"):
        pegasos.fit((X, y3), init=mc)
    with pytest.raises(ParameterError, match="--resume-state|resume_state"):
        pegasos.fit((X, y), kernel="rbf", resume_state=True)
    with pytest.raises(ParameterError, match="LinearModel"):
        pegasos.fit((X, y), init=42)


@pytest.mark.parametrize("edit, words", [
    (lambda s: s.replace("\nt 300\n", "\nt 3x0\n"), ("resume state: t", "not an integer")),
    (lambda s: s.replace("\nlam 0.01\n", "\nlam nan\n"), ("lam", "not finite")),
    (lambda s: s.replace("\nn_avg 300\n", "\nn_avg 900\n"), ("counters",)),
    (lambda s: s.replace("\nn_features 30\n", "\nn_features 31\n", 2), ("n_features",)),
    (lambda s: s.replace("\nend_resume_state\n", "\n"), ("end_resume_state",)),
    (lambda s: s[:s.index("\nu ")] + "\nu 99999\nend\n", ("u count",)),
    (lambda s: s.replace("\nrng PCG64 ", "\nrng MT19937 "), ("rng",)),
    (lambda s: _first_vector_line(s, "5:1e999"), ("resume v", "not finite")),
])
def test_a_damaged_section_is_one_error_naming_file_and_line(tmp_path, edit, words):
    X, y = problem()
    model = pegasos.fit((X, y), lam=1e-2, iterations=300, average=True, step_offset=5.0, resume_state=True)
    path = tmp_path / "m.model"
    model.save(path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(ModelFormatError) as info:
        pegasos.load_model(str(path))
    message = str(info.value)
    assert str(path) in message and "\n" not in message
    for word in words:
        assert word in message, message


def _first_vector_line(text, replacement):
    lines = text.split("\n")
    i = lines.index(next(ln for ln in lines if ln.startswith("v "))) + 1
    lines[i] = replacement
    return "\n".join(lines)


def test_resumed_api_takes_unset_settings_from_the_model(tmp_path):
    X, y = problem()
    options = TrainOptions(lam=3e-2, iterations=90, batch_size=4, sampling="uniform", average=True,
                           step_offset=2.0, bias="feature", seed=5, resume_state=True)
    first = pegasos.fit((X, y), options)
    later = pegasos.fit((X, y), init=first, iterations=10)
    assert later.bias_mode == "feature"
    for key in ("lambda", "batch_size", "sampling", "averaging", "step_offset", "seed"):
        assert later.info[key] == first.info[key], key
    assert dataclasses.asdict(TrainOptions.from_header(later.info))["iterations"] == 100


def test_cli_names_the_damaged_line(tmp_path):
    X, y = problem()
    data = write_svm(tmp_path / "d.svm", X, y)
    cli("-l", "0.01", "-T", 100, "--resume-state", data, tmp_path / "m.model")
    lines = (tmp_path / "m.model").read_text().split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("sqnorm "))
    lines[at] = "sqnorm inf"
    (tmp_path / "m.model").write_text("\n".join(lines))
    r = run_pegasos("train", "--init", tmp_path / "m.model", data, tmp_path / "n.model")
    error_line(r, "sqnorm", "not finite", file=tmp_path / "m.model", line=at + 1)
    assert not (tmp_path / "n.model").exists()
    r = run_pegasos("predict", data, tmp_path / "m.model", tmp_path / "out.txt")
    error_line(r, "sqnorm", file=tmp_path / "m.model", line=at + 1)     # a damaged file is refused everywhere


def test_resume_refuses_another_index_base(tmp_path):
    """Reported: --init on a one-based model with --zero-based silently made a zero-based model,
    every feature shifted by one."""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{'+1' if i % 2 else '-1'} 1:{i % 7} 2:{(i * 3) % 5} 3:1\n" for i in range(60)))
    first = tmp_path / "m.model"
    ok(run_pegasos("train", "-q", "--resume-state", "-l", "0.01", "--epochs", "2", data, first))
    r = run_pegasos("train", "--init", first, "--zero-based", data, tmp_path / "n.model")
    error_line(r, "one-based", "zero-based", status=1)
    assert not (tmp_path / "n.model").exists()
    ok(run_pegasos("train", "-q", "--init", first, data, tmp_path / "n.model"))


def test_binary_model_file_is_named_binary(tmp_path):
    bad = tmp_path / "rand.model"
    bad.write_bytes(bytes(range(128, 256)) * 3)
    data = tmp_path / "d.svm"
    data.write_text("+1 1:1\n-1 2:1\n")
    r = run_pegasos("predict", data, bad, tmp_path / "out")
    error_line(r, "binary data", status=1)
    assert "\ufffd" not in r.stderr


def test_messages_name_the_options_given(tmp_path):
    """Reported: --init with --stream named --shuffle-buffer; --trace-budget -1 named no option; search
    offered log_loss for a hinge model."""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{'+1' if i % 2 else '-1'} 1:{i % 7} 2:{(i * 3) % 5} 3:1\n" for i in range(60)))
    first = tmp_path / "m.model"
    ok(run_pegasos("train", "-q", "--resume-state", "-l", "0.01", "--epochs", "2", data, first))
    error_line(run_pegasos("train", "--init", first, "--stream", data, tmp_path / "n.model"), "--stream",
               "cannot resume", status=1)
    error_line(run_pegasos("train", "--trace-budget", "-1", data, tmp_path / "n.model"), "--trace-budget",
               status=2)
    r = run_pegasos("search", data, "-l", "1e-2", "-v", "2", "--metric", "log_loss")
    error_line(r, "unknown metric", status=1)
    assert "log_loss" not in r.stderr.split("one of:")[1]


def test_init_summary_and_json_give_the_settings_the_run_used(tmp_path):
    """train --json --init ended in a TypeError traceback (a frozenset in the options record), and the
    summary of a resumed run showed the defaults (k=1 lambda=0.0001), not the model's k and lambda."""
    import json

    data = tmp_path / "d.svm"
    data.write_text("".join(f"{'+1' if i % 3 else '-1'} 1:{i % 7 / 7} 2:{(i * 3) % 5 / 5} 3:1\n" for i in range(80)))
    first = tmp_path / "k4.model"
    ok(run_pegasos("train", "-q", "-k", "4", "-l", "1e-3", "--resume-state", "--finish", "none", "-T", "100",
                   data, first))
    r = run_pegasos("train", "--init", first, "-T", "10", data, tmp_path / "n.model")
    assert "T=110 k=4 lambda=0.001 " in ok(r) + r.stderr
    for extra in ((), ("--restart-schedule",)):
        r = run_pegasos("train", "--json", *extra, "--init", first, data, tmp_path / "j.model")
        record = json.loads(ok(r))
        assert (record["batch_size"], record["lambda"]) == (4, 0.001), extra
        assert record["header"]["batch_size"] == "4" and isinstance(record["options"]["given"], list)


def test_init_reads_data_with_the_index_base_of_its_model(tmp_path):
    """Options not given are MODEL's: --init of a zero-based model failed unless --zero-based was given
    again ('trained on zero-based feature indices and DATA is read one-based')."""
    data = tmp_path / "z.svm"
    data.write_text("".join(f"{'+1' if i % 2 else '-1'} 0:{i % 7} 1:{(i * 3) % 5} 2:1\n" for i in range(60)))
    first = tmp_path / "z.model"
    ok(run_pegasos("train", "-q", "--zero-based", data, first))
    ok(run_pegasos("train", "-q", "--init", first, data, tmp_path / "a.model"))
    ok(run_pegasos("train", "-q", "--init", first, "--zero-based", data, tmp_path / "b.model"))
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()
    assert "\nindex_base 0\n" in (tmp_path / "a.model").read_text()
