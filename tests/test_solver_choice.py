"""One solver choice, made once (pegasos.solver.plan) and read back from the model (pegasos.outcome).

- the rule of solver="auto": the dual where it can run, Pegasos where a Pegasos setting is given or the
  dual cannot run;
- every entry point (the command line, pegasos.fit, the estimators, the lambda path) writes the same
  model for the same settings;
- a given T writes that Pegasos run; --explain trains nothing;
- the typed outcome round-trips through the model file, and no module decides from the text of the
  header's ``stopping``.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import pegasos
from pegasos.errors import ParameterError
from pegasos.options import TrainOptions
from pegasos.outcome import Outcome, Stop
from pegasos.solver import Problem, Solver, plan

from conftest import ok, one_error, run_pegasos
from small_data import binary, multiclass, write_svm


@pytest.mark.parametrize("settings, solver, words", [
    ({}, Solver.DUAL, "the dual can run"),
    (dict(multiclass="crammer-singer"), Solver.DUAL, "the dual can run"),
    (dict(loss="rank"), Solver.DUAL, "the dual can run"),
    (dict(loss="squared-hinge", bias="feature"), Solver.DUAL, "the dual can run"),
    (dict(kernel="rbf"), Solver.DUAL, "the dual can run"),
    (dict(iterations=1000), Solver.PEGASOS, "a setting of Pegasos is given: iterations="),
    (dict(epochs=2), Solver.PEGASOS, "given: epochs="),
    (dict(step_offset=1e4), Solver.PEGASOS, "given: step_offset="),
    (dict(batch_size=8), Solver.PEGASOS, "given: batch_size="),
    (dict(sampling="uniform"), Solver.PEGASOS, "given: sampling="),     # a fresh user's trial: they were ignored
    (dict(average=False), Solver.PEGASOS, "given: average="),
    (dict(average_from=0.9), Solver.PEGASOS, "given: average_from="),
    (dict(sampling="permutation", average_from=0.5), Solver.DUAL, "the dual can run"),     # the preset's own
    (dict(finish="none"), Solver.PEGASOS, 'given: finish="none"'),
    (dict(preset="paper"), Solver.PEGASOS, "given: preset="),
    (dict(loss="log"), Solver.PEGASOS, "the log loss has no dual"),
    (dict(loss="eps-insensitive"), Solver.PEGASOS, "the eps-insensitive loss has no dual"),
    (dict(bias="unregularized"), Solver.PEGASOS, "unregularized bias"),
    (dict(kernel="sigmoid"), Solver.PEGASOS, "not positive semi-definite"),
    (dict(iterations=0, finish="dual"), Solver.DUAL, "the dual can run: iterations 0"),
    (dict(solver="pegasos"), Solver.PEGASOS, "asked for"),
    (dict(solver="dual"), Solver.DUAL, "asked for"),
])
def test_the_rule_of_auto(settings, solver, words):
    chosen = plan(Problem(m=1000), TrainOptions(**settings).validate())
    assert chosen.solver is solver and words in chosen.why, chosen
    if chosen.detail:       # the header's reason is one of a few phrases: the settings are the detail
        assert chosen.reason == "a setting of Pegasos is given" or chosen.reason == "the dual can run"


@pytest.mark.parametrize("m, lam", [(10, 1e-6), (10 ** 7, 1.0)])
def test_auto_does_not_depend_on_the_size(m, lam):
    """Measured (benchmarks/RESULTS_solver_choice.md): the dual reached tol first from lambda*m = 0.03 to
    400, so the rule has no threshold on lambda*m."""
    assert plan(Problem(m=m), TrainOptions(lam=lam).validate()).solver is Solver.DUAL


def test_data_not_in_memory_and_resumed_runs_are_pegasos():
    options = TrainOptions().validate()
    assert plan(Problem(m=0, in_memory=False), options).solver is Solver.PEGASOS
    assert plan(Problem(m=0, resumed=True), options).solver is Solver.PEGASOS
    for problem in (Problem(m=0, in_memory=False), Problem(m=0, resumed=True)):
        with pytest.raises(ParameterError, match="solver dual"):
            plan(problem, options.replace(solver="dual"))


def test_solver_dual_refuses_pegasos_settings_naming_them():
    with pytest.raises(ParameterError, match=r"drop epochs=, step_offset= \(settings of Pegasos\)"):
        plan(Problem(m=100), TrainOptions(solver="dual", epochs=2, step_offset=1e4).validate())
    with pytest.raises(ParameterError, match="the solver must be one of auto, pegasos, dual"):
        TrainOptions(solver="sgd").validate()


def test_every_entry_point_writes_the_same_model(tmp_path):
    """The command line, pegasos.fit on the file and on arrays, and the estimator with its defaults (the CLI's:
    no bias; it had its own bias="auto", an intercept): the same weights and the same solver, stop and
    certificate."""
    from pegasos.sklearn import PegasosClassifier

    X, y = binary(m=500, n=20, seed=3, noise=0.1)
    data = write_svm(tmp_path / "d.svm", X, y)
    ok(run_pegasos("train", "-q", "-l", "1e-3", data, tmp_path / "cli.model"))
    cli = pegasos.load_model(str(tmp_path / "cli.model"))
    on_file = pegasos.fit(pegasos.read_svmlight(str(data)), lam=1e-3)
    on_arrays = pegasos.fit((X, y), lam=1e-3)
    estimator = PegasosClassifier(alpha=1e-3).fit(X, y).model_
    on_file.save(tmp_path / "fit.model")
    assert (tmp_path / "fit.model").read_bytes() == (tmp_path / "cli.model").read_bytes()
    for model in (on_arrays, estimator):
        np.testing.assert_array_equal(model.w, cli.w)
        for key in ("solver", "solver_reason", "stop", "tol", "certified_gap", "finish_passes"):
            assert model.info[key] == cli.info[key], key
    assert cli.info["solver"] == "dual" and cli.info["stop"] == "certified"
    # --solver dual is the same run as the default's
    ok(run_pegasos("train", "-q", "-l", "1e-3", "--solver", "dual", data, tmp_path / "dual.model"))
    np.testing.assert_array_equal(pegasos.load_model(str(tmp_path / "dual.model")).w, cli.w)


def test_the_lambda_path_chooses_as_a_cold_fit_does():
    from pegasos.examples import as_examples
    from pegasos.selection import _fit_from as fit_from

    X, y = binary(m=300, n=10, seed=4, noise=0.2)
    for options in (TrainOptions(lam=1e-3), TrainOptions(lam=1e-3, epochs=3), TrainOptions(lam=1e-3, loss="log")):
        options = options.validate()
        warm = fit_from(as_examples((X, y)), options, None)
        cold = pegasos.fit((X, y), options)
        assert warm.info["solver"] == cold.info["solver"] and warm.info["stop"] == cold.info["stop"]


def test_a_given_length_is_that_pegasos_run_on_the_command_line(tmp_path):
    """The design card's command: -T N writes N Pegasos iterations, and the summary says which solver
    ran and why; no dual pass replaces them."""
    X, y = binary(m=400, n=15, seed=5, noise=0.1)
    data = write_svm(tmp_path / "d.svm", X, y)
    out = ok(run_pegasos("train", "-l", "1e-4", "-T", "5000", data, tmp_path / "m"))
    # the summary names the setting behind the reason, as spelled (the header's reason is spelling-free)
    assert "solver pegasos (auto: a setting of Pegasos is given: -T/--iterations)" in out and "dual" not in out
    info = pegasos.load_model(str(tmp_path / "m")).info
    assert info["iterations"] == "5000" and info["solver"] == "pegasos" and info["stop"] == "length"
    assert not any(key.startswith("finish") for key in info) and "tol" not in info


def test_explain_trains_nothing(tmp_path):
    X, y = binary(m=200, n=5, seed=6)
    data = write_svm(tmp_path / "d.svm", X, y)
    out = ok(run_pegasos("train", "--explain", "-l", "1e-3", data, tmp_path / "m"))
    assert out.startswith("m=200 lambda=0.001 | solver dual (auto: the dual can run)") and out.count("\n") == 1
    assert not (tmp_path / "m").exists()
    out = ok(run_pegasos("train", "--explain", "--epochs", "2", data, tmp_path / "m"))
    assert "solver pegasos (auto: a setting of Pegasos is given: --epochs)" in out
    assert not (tmp_path / "m").exists()
    out = ok(run_pegasos("train", "--explain", "--stream", data, tmp_path / "m"))
    assert "solver dual (auto: the dual can run)" in out and not (tmp_path / "m").exists()   # block by block
    one_error(run_pegasos("train", "--explain", "--solver", "dual", "--loss", "log", data, tmp_path / "m"),
              "--solver dual", "log loss")


@pytest.mark.parametrize("settings", [dict(lam=1e-3), dict(lam=1e-3, epochs=2), dict(lam=1e-3, solver="pegasos"),
                                      dict(lam=1e-3, kernel="rbf"), dict(lam=1e-3, iterations=0, finish_passes=3)])
def test_the_outcome_round_trips_through_the_model_file(tmp_path, settings):
    X, y = binary(m=200, n=8, seed=7, noise=0.1)
    model = pegasos.fit((X, y), **settings)
    before = Outcome.from_header(model.info)
    model.save(tmp_path / "m")
    after = Outcome.from_header(pegasos.load_model(str(tmp_path / "m")).info)
    assert before == after and isinstance(after.stop, Stop) and isinstance(after.solver, Solver)
    assert after.solver.value == model.info["solver"]


def test_the_outcome_of_multiclass_models():
    X, y = multiclass(m=300, n=10, classes=3, seed=2)
    for method in ("ovr", "crammer-singer"):
        model = pegasos.fit((X, y), lam=1e-3, multiclass=method)
        outcome = Outcome.from_header(model.info)
        assert outcome.solver is Solver.DUAL and outcome.stop is Stop.CERTIFIED and outcome.certified
        model = pegasos.fit((X, y), lam=1e-3, multiclass=method, epochs=2)
        assert Outcome.from_header(model.info).solver is Solver.PEGASOS


def test_fit_warns_where_the_model_falls_short(recwarn):
    X, y = binary(m=200, n=8, seed=7, noise=0.1)
    with pytest.warns(pegasos.ConvergenceWarning, match="1 dual pass asked for left a certified relative gap"):
        pegasos.fit((X, y), lam=1e-6, iterations=0, finish_passes=1)
    pegasos.fit((X, y), lam=1e-3)
    assert not [w for w in recwarn if issubclass(w.category, pegasos.ConvergenceWarning)]


def test_no_module_decides_from_the_stopping_text():
    """The header's ``stopping`` is words for a reader: the code reads the typed ``stop`` (pegasos.outcome).
    Only the automatic length, which writes those words, may extend them."""
    package = Path(pegasos.__file__).parent
    reads = re.compile(r"""(\.get\(\s*["']stopping["']|\[["']stopping["']\](?!\s*=[^=])|["']stopping["']\s+in\b)""")
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "autotune.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if reads.search(line):
                found.append(f"{path.relative_to(package)}:{n}: {line.strip()}")
    assert not found, found




def test_uncertified_passes_keep_their_best_model(monkeypatch):
    """A fresh user's trial: one feature x1000 at lambda = 1e-6; the objective of w(alpha) was 0.19 at
    1000 passes and above 1 at the end of the bound (700,000 passes), so w = 0 was written.  Passes that
    end uncertified now return the best model they checked, with the passes that retrain it."""
    from pegasos import finish
    from pegasos.examples import as_examples

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=600) > 0, 1.0, -1.0)
    X[:, 1] *= 1000
    checks, real = [], finish._primal

    def spy(*args):
        value = real(*args)
        checks.append(value)
        return value

    monkeypatch.setattr(finish, "_primal", spy)
    zero = pegasos.fit((X, y), lam=1e-6, iterations=0, finish_passes=0)
    checks.clear()
    out = finish.finish_binary(zero, as_examples((X, y)), tol=1e-9, max_work=1 << 20)
    monkeypatch.undo()
    assert float(out.info["certified_gap"]) > 1e-9 and len(checks) >= 2
    f = pegasos.objective(out, X, y)["objective"]
    assert f == pytest.approx(min([*checks, pegasos.objective(zero, X, y)["objective"]]), rel=1e-9)
    again = finish.finish_binary(zero, as_examples((X, y)), passes=int(out.info["finish_passes"]))
    np.testing.assert_array_equal(again.w, out.w)


# ------------------------------------------ the header of a model of the dual alone --

def _header_keys(path):
    keys = []
    for line in Path(path).read_text().splitlines()[1:]:
        key = line.split(" ", 1)[0]
        if key in ("weights", "class", "support_vectors"):
            return keys
        keys.append(key)
    raise AssertionError("no end of the header")


@pytest.mark.parametrize("settings", [dict(lam=1e-3), dict(lam=1e-3, kernel="rbf", gamma=0.5),
                                      dict(lam=1e-3, multiclass="crammer-singer")])
def test_a_model_of_the_dual_alone_lists_only_the_dual_settings(tmp_path, settings):
    """A model no Pegasos iteration trained is written without Pegasos' settings (T, k, sampling, averaging,
    projection), keeps the seed (it orders the dual's passes), reads back, writes the same bytes and
    retrains from its header; a Pegasos model that lacks one of them is a damaged file."""
    from pegasos.outcome import PEGASOS_KEYS

    multi = "multiclass" in settings
    X, y = multiclass(m=200, n=8, classes=3, seed=2) if multi else binary(m=200, n=8, seed=7, noise=0.1)
    model = pegasos.fit((X, y), **settings)
    path = tmp_path / "m"
    model.save(path)
    keys = _header_keys(path)
    assert model.info["solver"] == "dual" and not set(keys) & set(PEGASOS_KEYS), keys
    assert "seed" in keys and "lambda" in keys and "stop" in keys
    loaded = pegasos.load_model(str(path))
    assert loaded.to_text() == path.read_text() and Outcome.from_header(loaded.info) == Outcome.from_header(model.info)
    options = TrainOptions.from_header(loaded.info)
    assert options.iterations == 0
    if "kernel" in settings:
        options = options.replace(kernel=loaded.kernel, gamma=loaded.gamma)
    again = pegasos.fit((X, y), options)
    assert again.to_text() == model.to_text()
    out = ok(run_pegasos("info", path))
    assert "sampling" not in out and "averaging" not in out and "iterations" not in out
    # a Pegasos model keeps them, and needs them
    pegasos.fit((X, y), lam=1e-3, epochs=2, **({"multiclass": "crammer-singer"} if multi else {})).save(path)
    text = path.read_text()
    assert set(_header_keys(path)) >= {"iterations", "batch_size", "sampling", "averaging", "projection"}
    path.write_text(re.sub(r"\nsampling [^\n]*", "", text))
    with pytest.raises(pegasos.ModelFormatError, match="header lacks sampling"):
        pegasos.load_model(str(path))


# ------------------------------------------------------------ a user's trial --

def test_explain_refuses_the_data_train_refuses(tmp_path):
    """--explain on an empty file said it would run the dual; it gives train's error (so does one class)."""
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    one = tmp_path / "one.svm"
    one.write_text("1 1:1\n1 2:1\n")
    for data, words in ((empty, "no training examples found"), (one, "only one class")):
        trained = run_pegasos("train", data, tmp_path / "m")
        one_error(trained, words)
        for extra in ([], ["--json"]):
            explained = run_pegasos("train", "--explain", *extra, data, tmp_path / "m")
            one_error(explained, words)
            assert explained.stderr == trained.stderr and explained.stdout == ""
    assert not (tmp_path / "m").exists()


def test_explain_json_prints_the_plan_as_json(tmp_path):
    import json

    X, y = binary(m=200, n=5, seed=6)
    data = write_svm(tmp_path / "d.svm", X, y)
    record = json.loads(ok(run_pegasos("train", "--explain", "--json", "-T", "100", data, tmp_path / "m")))
    chosen = plan(Problem(m=200), TrainOptions(iterations=100, spelling="cli").validate())
    assert record == {"examples": 200, "lambda": 1e-4, "solver": "pegasos", "asked": "auto",
                      "reason": chosen.reason, "detail": "-T/--iterations", "why": chosen.why,
                      "how": chosen.how(TrainOptions(iterations=100).validate())}
    assert json.loads(ok(run_pegasos("train", "--explain", "--json", data, tmp_path / "m")))["solver"] == "dual"
    assert not (tmp_path / "m").exists()


def test_kernel_pegasos_without_a_length_says_it_ran_the_default_epochs(tmp_path):
    """--solver pegasos --kernel rbf trained 10 epochs with no word: kernel Pegasos has no automatic length
    (linear Pegasos doubles its epochs until tol), so the outcome says it (a note; a ConvergenceWarning)."""
    X, y = binary(m=200, n=5, seed=6)
    data = write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "--solver", "pegasos", "--kernel", "rbf", data, tmp_path / "m")
    said = "no length was given and this run has no automatic one (a kernel, the paper's settings"
    assert r.returncode == 0 and said in r.stderr and "it ran the default 10 epochs" in r.stderr
    info = pegasos.load_model(str(tmp_path / "m")).info
    assert info["stop"] == "default length" and info["iterations"] == "2000" and "tol" not in info
    with pytest.warns(pegasos.ConvergenceWarning, match="no automatic one"):
        pegasos.fit((X, y), kernel="rbf", solver="pegasos")
    r = run_pegasos("train", "--solver", "pegasos", "--kernel", "rbf", "--epochs", "3", data, tmp_path / "m")
    assert r.returncode == 0 and "no automatic one" not in r.stderr
    assert pegasos.load_model(str(tmp_path / "m")).info["stop"] == "length"


def test_the_papers_run_without_a_length_says_it_ran_the_default_epochs(tmp_path):
    """pegasos.train(X, y, lam=...) is the paper's run (10 i.i.d. epochs, the last iterate): a user took it for
    what `pegasos train` does and got an objective 18 times the optimum with no word.  It warns, as --paper
    without -T notes; a given length, or a resumed run (one epoch), says nothing."""
    X, y = binary(m=200, n=5, seed=6)
    with pytest.warns(pegasos.ConvergenceWarning, match="it ran the default 10 epochs"):
        model = pegasos.train(X, y, lam=1e-4)
    assert model.info["stop"] == "default length"
    with pytest.warns(pegasos.ConvergenceWarning, match="no automatic one"):
        pegasos.train_multiclass(*multiclass(m=200, n=8, classes=3, seed=2), lam=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pegasos.ConvergenceWarning)
        assert pegasos.train(X, y, lam=1e-4, epochs=10).info["stop"] == "length"
    data = write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "--paper", data, tmp_path / "p")
    assert r.returncode == 0 and "it ran the default 10 epochs" in r.stderr
    ok(run_pegasos("train", "-q", data, tmp_path / "d"))
    r = run_pegasos("train", "--init", tmp_path / "d", data, tmp_path / "r")
    assert r.returncode == 0 and "no automatic one" not in r.stderr
    assert pegasos.load_model(str(tmp_path / "r")).info["stop"] == "length"


def test_the_keyword_trainers_record_their_outcome(tmp_path):
    """pegasos.train (and train_multiclass, train_kernel, the stream's train_shuffled) wrote no outcome: every
    entry point records it."""
    X, y = binary(m=200, n=8, seed=7, noise=0.1)
    Xm, ym = multiclass(m=200, n=8, classes=3, seed=2)
    for model in (pegasos.train(X, y, lam=1e-3, epochs=10), pegasos.train_multiclass(Xm, ym, lam=1e-3, epochs=10),
                  pegasos.train_kernel(X, y, lam=1e-3, epochs=2)):
        outcome = Outcome.from_header(model.info)
        assert outcome is not None and outcome.solver is Solver.PEGASOS and outcome.stop is Stop.LENGTH
        model.save(tmp_path / "m")
        assert Outcome.from_header(pegasos.load_model(str(tmp_path / "m")).info) == outcome
    from pegasos.stream import train_shuffled

    streamed = train_shuffled(str(write_svm(tmp_path / "d.svm", X, y)), shuffle_buffer=50, lam=1e-3, epochs=2)
    assert Outcome.from_header(streamed.info).solver is Solver.PEGASOS
    kernel_dual = pegasos.train_kernel(X, y, lam=1e-3, iterations=0, finish="dual")
    assert Outcome.from_header(kernel_dual.info).solver is Solver.DUAL
    with pytest.raises(ParameterError, match="keyword trainers run Pegasos' loop"):
        pegasos.train(X, y, iterations=0, finish_passes=3)


def test_explain_reads_standard_input_without_a_model_name():
    """--explain writes no model, so DATA - needs no MODEL name (a trial: it asked for one); the plan
    says the tolerance it certifies within."""
    from click.testing import CliRunner

    from pegasos.cli import main

    r = CliRunner().invoke(main, ["train", "--explain", "--tol", "0.01", "-"], input="+1 1:1\n-1 2:1\n")
    assert r.exit_code == 0, r.output
    assert "solver dual" in r.output and "within tol = 0.01" in r.output


@pytest.mark.parametrize("settings", [{}, {"epochs": 1}, {"kernel": "rbf", "epochs": 1}, {"multiclass": "ovr"}])
def test_the_plan_a_model_was_trained_by_is_a_declared_field(tmp_path, settings):
    """record_outcome leaves the solver plan on the model for train's summary: a declared dataclass field of
    each model class (it was set on models that did not declare it), not compared and not written, None for
    a model read from its file."""
    from dataclasses import fields

    from pegasos.solver import Plan

    X, y = multiclass(m=60) if "multiclass" in settings else binary(m=60)
    model = pegasos.fit((X, y), lam=1e-2, **settings)
    assert "plan" in {f.name for f in fields(type(model))}
    assert isinstance(model.plan, Plan) and model.plan.solver.value == model.info["solver"]
    model.save(tmp_path / "m")
    loaded = pegasos.load_model(tmp_path / "m")
    assert type(loaded) is type(model) and loaded.plan is None
    assert "plan" not in (tmp_path / "m").read_text()
