"""The dual passes (pegasos.finish): from w = 0 (``solver="dual"``, the default where they can run) or
after a Pegasos run of a given length (``finish="dual"``), passes of dual coordinate ascent until the
better model is certified within tol of f*.

References: the certified optima of ../shared/data/README.md, scikit-learn's LinearSVC (LIBLINEAR's
dual solver, an independent implementation) on generated data, and the certificate of
pegasos.certificate recomputed from scratch."""

import numpy as np
import pytest

import pegasos
from pegasos import autotune, finish
from pegasos.certificate import duality_gap
from pegasos.errors import ParameterError
from pegasos.examples import as_examples
from pegasos.options import TrainOptions

from conftest import data_file, ok, one_error, usage_error, run_pegasos
from small_data import binary, multiclass, write_svm

# certified optima at lambda = 1e-4 (../shared/data/README.md)
OPTIMA = {"reuters/reuters.trn.bz2": 0.0422014018, "mushrooms/mushrooms.txt": 0.0007573911,
          "agaricus/agaricus.txt.train": 0.0006624677, "heart_scale/heart_scale": 0.3516439591,
          "w8a/w8a": 0.1443258917}


@pytest.mark.parametrize("relative", sorted(OPTIMA))
def test_defaults_are_within_one_percent_and_the_certificate_holds(relative):
    """The data sets where plain Pegasos needed 16 to 16384 epochs: the default model is within 1% of
    f*, and the header's certified gap is at least the true relative suboptimality (a proven bound)."""
    d = pegasos.read_svmlight(str(data_file(relative)))
    model = pegasos.fit(d, lam=1e-4)
    f = pegasos.objective(model, d.X, d.y)["objective"]
    f_star = OPTIMA[relative]
    assert (f - f_star) / f_star <= 0.01
    assert model.info["solver"] == "dual" and model.info["stop"] == "certified"
    # f* is given to 10 digits: allow its rounding (5e-11)
    assert (f - f_star - 5e-11) / f <= float(model.info["certified_gap"])
    assert float(model.info["certified_gap"]) <= autotune.DEFAULT_TOL


def test_the_finish_reaches_liblinears_optimum_on_generated_data():
    """With a tiny tol the finished model is the optimum: the primal of LIBLINEAR's dual solver (via
    scikit-learn, C = 1/(lambda m), no intercept) to 1e-7, and never above the Pegasos model's."""
    sklearn_svm = pytest.importorskip("sklearn.svm")
    X, y = binary(m=300, n=15, seed=3, noise=0.1)
    lam = 1e-3
    model = pegasos.fit((X, y), lam=lam, tol=1e-9, solver="dual")
    assert model.info["finish"] == "dual" and float(model.info["certified_gap"]) <= 1e-9
    ref = sklearn_svm.LinearSVC(C=1.0 / (lam * X.shape[0]), loss="hinge", dual=True, fit_intercept=False,
                                tol=1e-10, max_iter=1_000_000).fit(X, y)
    w = ref.coef_.ravel()
    f_ref = lam / 2 * w @ w + np.maximum(0.0, 1.0 - y * (X @ w)).mean()
    f = pegasos.objective(model, X, y)["objective"]
    assert f <= f_ref * (1 + 1e-7)                       # at least as low as LIBLINEAR's
    assert f_ref <= f * (1 + 1e-3)                       # and LIBLINEAR's is close: the same problem
    plain = pegasos.fit((X, y), lam=lam, tol=1e-9, finish="none")
    assert f <= pegasos.objective(plain, X, y)["objective"]


@pytest.mark.parametrize("settings", [dict(loss="squared-hinge"), dict(bias="feature"),
                                      dict(class_weight={1.0: 3.0})])
def test_the_finish_certifies_other_problems_the_dual_knows(settings):
    """Squared hinge, the regularised bias and class weights: the certificate recomputed from scratch
    (pegasos.certificate.duality_gap, many passes) agrees that the model is within tol."""
    from pegasos.certificate import duality_gap

    X, y = binary(m=400, n=20, seed=5, noise=0.1)
    model = pegasos.fit((X, y), lam=1e-4, solver="dual", **settings)
    assert model.info["finish"] == "dual"
    gap = duality_gap(model, X, y, passes=20000, tol=1e-6)
    assert gap["rel_gap"] <= float(model.info["certified_gap"]) + 1e-9
    assert gap["rel_gap"] <= 2 * autotune.DEFAULT_TOL


def test_a_finished_model_is_retrained_by_its_header(tmp_path):
    """Binary and one-vs-rest: the header's settings (T, t0, seed and finish_passes) give the same
    weights, bit for bit; one thread or two give the same one-vs-rest model."""
    X, y = binary(m=500, n=30, seed=1, noise=0.1)
    model = pegasos.fit((X, y), lam=1e-4, solver="dual")
    assert model.info["finish"] == "dual"
    path = tmp_path / "b.model"
    model.save(path)
    again = pegasos.fit((X, y), TrainOptions.from_header(pegasos.load_model(path).info))
    assert np.array_equal(again.w, model.w)

    Xm, ym = multiclass(m=600, n=20, classes=4, seed=2)
    one = pegasos.fit((Xm, ym), lam=1e-4, n_threads=1, solver="dual")
    two = pegasos.fit((Xm, ym), lam=1e-4, n_threads=2, solver="dual")
    assert one.info["finish"] == "dual" and len(one.info["finish_passes"].split(",")) == 4
    assert np.array_equal(one.W, two.W)
    path = tmp_path / "m.model"
    one.save(path)
    again = pegasos.fit((Xm, ym), TrainOptions.from_header(pegasos.load_model(path).info))
    assert np.array_equal(again.W, one.W)


def test_the_finish_never_returns_a_worse_model():
    """finish_binary keeps the Pegasos weights when w(alpha) is not better (0 passes: w(alpha) is the
    scaled start point) and says which it kept."""
    X, y = binary(m=200, n=10, seed=4)
    ex = as_examples((X, y))
    model = pegasos.fit((X, y), lam=1e-2, epochs=50, finish="none")
    out = finish.finish_binary(model, ex, passes=0)
    f0 = pegasos.objective(model, X, y)["objective"]
    f1 = pegasos.objective(out, X, y)["objective"]
    assert f1 <= f0
    assert out.info["finish_kept"] in ("dual", "pegasos")
    if out.info["finish_kept"] == "pegasos":
        assert np.array_equal(out.w, model.w)


def test_a_given_length_is_finished_on_request():
    """--finish dual after -T/--epochs: the Pegasos run of that length, then passes until certified
    within tol; the header's finish_passes retrain it."""
    X, y = binary(m=400, n=15, seed=12, noise=0.1)
    plain = pegasos.fit((X, y), lam=1e-4, epochs=3)
    model = pegasos.fit((X, y), lam=1e-4, epochs=3, finish="dual")
    assert float(model.info["certified_gap"]) <= autotune.DEFAULT_TOL
    assert pegasos.objective(model, X, y)["objective"] <= pegasos.objective(plain, X, y)["objective"]
    again = pegasos.fit((X, y), TrainOptions.from_header(model.info))
    assert np.array_equal(again.w, model.w)
    paper = pegasos.fit((X, y), lam=1e-4, preset="paper", epochs=10, finish="dual")
    assert paper.info["finish"] == "dual" and paper.info["iterations"] == str(10 * X.shape[0])
    with pytest.raises(ParameterError, match="after a Pegasos run of a given length"):
        pegasos.fit((X, y), lam=1e-4, finish="dual")


def test_plain_pegasos_and_the_paper_preset_have_no_finish():
    X, y = binary(m=300, n=10, seed=6)
    for model in (pegasos.fit((X, y), lam=1e-4, finish="none"), pegasos.fit((X, y), lam=1e-4, preset="paper"),
                  pegasos.fit((X, y), lam=1e-4, epochs=5, finish="none"),
                  pegasos.fit((X, y), lam=1e-4, epochs=5, step_offset=100.0),      # a given step: that run
                  pegasos.fit((X, y), lam=1e-4, epochs=5, sampling="uniform", average=False, step_offset=0.0),
                  pegasos.fit((X, y), lam=1e-4, epochs=5, step_offset=2e4)):
        assert not any(key.startswith("finish") for key in model.info)


@pytest.mark.parametrize("length", [dict(epochs=3), dict(iterations=1000), dict(epochs=0.25)])
def test_a_given_length_writes_that_pegasos_run(length):
    """-T N / --epochs E: the model written is that Pegasos run (with the step calibrated), bit for bit
    the one of solver="pegasos", with no dual pass after it; the header says so and retrains it."""
    X, y = binary(m=400, n=20, seed=8)
    lam = 1e-4
    model = pegasos.fit((X, y), lam=lam, **length)
    plain = pegasos.fit((X, y), lam=lam, solver="pegasos", **length)
    np.testing.assert_array_equal(model.w, plain.w)
    assert not any(key.startswith("finish") for key in model.info)
    assert model.info["solver"] == "pegasos" and model.info["stop"] == "length"
    assert model.info["iterations"] == str(TrainOptions(lam=lam, **length).plan(400).T)
    again = pegasos.fit((X, y), TrainOptions.from_header(model.info))
    np.testing.assert_array_equal(again.w, model.w)


@pytest.mark.parametrize("settings, words", [
    (dict(finish="dual", loss="log", epochs=2), "the dual finish does not apply here"),
    (dict(finish="dual", multiclass="crammer-singer", epochs=2), "start from W = 0"),
    (dict(finish="bogus"), "finish must be one of"),
    (dict(finish_passes=5), "finishes a run of a given length"),
    (dict(finish_passes=-1, epochs=2), "whole numbers between 0"),
    (dict(finish_passes=3, epochs=2, finish="none"), "runs the dual finish: drop finish"),
    (dict(finish_passes=3, epochs=2, loss="log"), "does not apply here"),
    (dict(finish="dual", kernel="rbf", epochs=2), "with a kernel it is the dual solver alone"),
    (dict(finish="dual", kernel="sigmoid", epochs=2), "positive semi-definite"),
    (dict(finish="dual", schedule="norma", epochs=2), "Pegasos step"),
    (dict(finish="dual", shuffle_buffer=100, epochs=2), "in memory"),
    (dict(finish="dual", bias="unregularized", epochs=2), "equality constraint"),
    (dict(finish="dual"), "after a Pegasos run of a given length"),
    (dict(solver="dual", loss="log"), "the log loss has no dual solver"),
    (dict(solver="dual", epochs=2), "drop epochs="),
    (dict(solver="dual", shuffle_buffer=100), "trains from a file"),
    (dict(solver="bogus"), "the solver must be one of"),
    (dict(finish_passes=2, epochs=2, resume_state=True), "resume_state"),
])
def test_bad_finish_settings_are_refused(settings, words):
    X, y = binary(m=100, n=5, seed=7)
    with pytest.raises(ParameterError, match=words):
        pegasos.fit((X, y), lam=1e-4, **settings)


def test_the_finish_and_the_checks_of_a_run():
    """A trace leaves the model as it is without one (finished); early stopping returns the best model
    seen, so it keeps plain Pegasos and refuses an explicit finish; so does resume_state (the state is
    that of a Pegasos run)."""
    from pegasos.trace import Trace

    X, y = binary(m=300, n=10, seed=8, noise=0.1)
    Xv, yv = binary(m=100, n=10, seed=18, noise=0.1)
    for length in (dict(epochs=5, finish="dual"), {}):    # {}: the dual from w = 0, no Pegasos run to trace
        plain = pegasos.fit((X, y), lam=1e-4, **length)
        trace = Trace()
        traced = pegasos.fit((X, y), lam=1e-4, trace=trace, **length)
        assert np.array_equal(traced.w, plain.w) and traced.info == plain.info
        assert bool(trace.rows) == bool(length) and trace.header["finish"] == "dual"
    with pytest.raises(ParameterError, match="best model seen"):
        pegasos.fit((X, y), lam=1e-4, epochs=5, finish="dual", validation=(Xv, yv), early_stop=3)
    stopped = pegasos.fit((X, y), lam=1e-4, epochs=5, validation=(Xv, yv), early_stop=3)
    assert "finish" not in stopped.info
    kept = pegasos.fit((X, y), lam=1e-4, resume_state=True)
    assert "finish" not in kept.info and kept.solver_state is not None
    with pytest.raises(ParameterError, match="resume_state"):
        pegasos.fit((X, y), lam=1e-4, resume_state=True, finish="dual")


def test_example_weights_in_the_finish_are_class_weights_when_they_are_the_same():
    """Weights per example that follow the class give the model of those class weights, finished (the
    dual's box is c_i / (lambda m) with c_i the product of both), and the certificate holds for the
    weighted problem against LIBLINEAR's optimum of the same weights."""
    sklearn_svm = pytest.importorskip("sklearn.svm")
    X, y = binary(m=400, n=15, seed=11, noise=0.1)
    cw = {-1.0: 0.5, 1.0: 3.0}
    sw = np.array([cw[v] for v in y])
    a = pegasos.fit((X, y), lam=1e-4, class_weight=cw, solver="dual")
    b = pegasos.fit((X, y, None, sw), lam=1e-4, solver="dual")
    assert np.array_equal(a.w, b.w) and a.info["finish_passes"] == b.info["finish_passes"]
    lam, m = 1e-4, X.shape[0]
    ref = sklearn_svm.LinearSVC(C=1.0 / (lam * m), loss="hinge", dual=True, fit_intercept=False, tol=1e-10,
                                max_iter=1_000_000).fit(X, y, sample_weight=sw)
    w_ref = ref.coef_.ravel()

    def weighted(w):
        return lam / 2 * w @ w + np.mean(sw * np.maximum(0.0, 1.0 - y * (X @ w)))

    f, f_ref = weighted(b.w), weighted(w_ref)
    assert f <= f_ref * (1 + 1e-9) + 1e-12 or (f - f_ref) / f <= float(b.info["certified_gap"])


def test_the_command_line_finish(tmp_path):
    X, y = binary(m=300, n=10, seed=9, noise=0.1)
    data = tmp_path / "d.svm"
    write_svm(data, X, y)
    r = run_pegasos("train", "-l", "1e-4", "--solver", "dual", data, tmp_path / "m")
    assert r.returncode == 0, r.stderr
    # the dual alone: the summary names the dual solver and its passes, no T, k or dual finish
    assert "dual solver:" in r.stdout and "certified within" in r.stdout
    assert "dual finish" not in r.stdout and "T=" not in r.stdout and "k=" not in r.stdout
    header = pegasos.load_model(tmp_path / "m").info
    assert header["finish"] == "dual" and int(header["finish_passes"]) > 0
    r = run_pegasos("train", "-l", "1e-4", "--solver", "pegasos", data, tmp_path / "p")
    assert r.returncode == 0 and "dual finish" not in r.stdout
    # the passes from w = 0 certified it: -T 0 and the passes retrain it
    assert "iterations" not in header and "step_offset" not in header
    r = run_pegasos("train", "-l", "1e-4", "-T", "0",
                    "--finish-passes", header["finish_passes"], data, tmp_path / "again")
    assert r.returncode == 0, r.stderr
    assert np.array_equal(pegasos.load_model(tmp_path / "again").w, pegasos.load_model(tmp_path / "m").w)
    usage_error(run_pegasos("train", "-l", "1e-4", "--finish-passes", "x", data, tmp_path / "q"),
              "--finish-passes takes whole numbers")
    usage_error(run_pegasos("train", "-l", "1e-4", "--finish-passes", "4", data, tmp_path / "q"),
              "--finish-passes finishes a run of a given length")
    assert not (tmp_path / "q").exists()


def test_a_dual_that_does_not_certify_is_said(tmp_path, monkeypatch):
    """A nearly hard margin on tiny data (lambda = 1e-7, C = 1/(lambda m) = 3e4): the dual passes from
    w = 0 certify it within their full bound of work.  With a bound made too small to, the model says so:
    stop "bound" in its header, a ConvergenceWarning from pegasos.fit, and the same diagnostic as a note of
    pegasos train (with -q too); so do passes asked for that leave the gap above tol."""
    from click.testing import CliRunner

    from pegasos import cli

    X, y = binary(m=300, n=10, seed=2, noise=0.1)
    data = write_svm(tmp_path / "d.svm", X, y)
    model = pegasos.fit((X, y), lam=1e-7)
    assert model.info["solver"] == "dual" and model.info["stop"] == "certified"
    assert float(model.info["certified_gap"]) <= autotune.DEFAULT_TOL

    monkeypatch.setattr(finish, "FINISH_UPDATES", 1 << 12)
    with pytest.warns(pegasos.ConvergenceWarning, match="not certified"):
        short = pegasos.fit((X, y), lam=1e-7)
    outcome = pegasos.Outcome.from_header(short.info)
    assert outcome.stop.value == "bound" and not outcome.certified and outcome.certified_gap > outcome.tol
    r = CliRunner().invoke(cli.main, ["train", "-q", "-l", "1e-7", str(data), str(tmp_path / "m")])
    assert r.exit_code == 0 and r.stdout == ""
    assert f"pegasos: note: {outcome.diagnostics[0]}" in r.stderr
    assert pegasos.load_model(str(tmp_path / "m")).info["stop"] == "bound"
    monkeypatch.undo()

    r = run_pegasos("train", "-q", "-l", "1e-7", "-T", "0", "--finish-passes", "3", data, tmp_path / "m")
    assert r.returncode == 0 and "the 3 dual passes asked for left a certified relative gap" in r.stderr
    assert "; -T 0 --finish-passes 12 runs four times its passes" in r.stderr
    assert pegasos.load_model(str(tmp_path / "m")).info["stop"] == "passes"


def test_the_calibration_takes_the_largest_class_with_the_smallest_label_on_a_tie(monkeypatch):
    """One-vs-rest calibrates t0 on the largest class against the rest: on a tie the smallest label
    (classes 2 and 3 have 40 examples each, class 3's first in the data), in label values as in class
    indices."""
    from pegasos.multiclass import largest_class

    y = np.array([3.0] * 40 + [1.0] * 20 + [2.0] * 40)
    X = np.random.default_rng(3).normal(size=(100, 5)) + y[:, None]
    assert largest_class(y) == 2.0 and largest_class(np.array([2, 0, 1, 1, 2])) == 1
    ex = as_examples((X, y))
    positives = []
    monkeypatch.setattr(autotune, "step_offset_for", lambda binary, *args: positives.append(binary.y > 0) or 1.0)
    autotune.ovr_step_offset(ex, TrainOptions(lam=1e-3).validate())
    assert len(positives) == 1 and np.array_equal(positives[0], y == 2.0)


def test_the_epoch_cap_note_names_the_certificate(tmp_path):
    X, y = multiclass(m=300, n=10, classes=3, seed=1)
    data = write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "-l", "1e-6", "--solver", "pegasos", data, tmp_path / "m")
    assert r.returncode == 0 and "reached its cap of epochs" in r.stderr
    assert "pegasos objective --gap DATA MODEL says how far" in r.stderr
    ok(run_pegasos("objective", "--gap", data, tmp_path / "m"))


def test_one_vs_rest_from_a_short_run_finishes_every_class():
    """From one epoch the largest class's w(alpha) beats Pegasos' weights: the others are finished too."""
    X, y = multiclass(m=300, n=10, classes=3, seed=4)
    model = pegasos.fit((X, y), lam=1e-4, epochs=1, finish="dual")
    assert all(int(p) > 0 for p in model.info["finish_passes"].split(","))
    assert float(model.info["certified_gap"]) <= autotune.DEFAULT_TOL
    # every class took w(alpha): the header says so in the binary finish's words, and the outcome names the dual
    assert model.info["finish_kept"] == "dual" and model.info["solver"] == "dual"


def _shrinking_problem(seed=0, m=150, n=12, lam=1e-3, loss="hinge"):
    from pegasos.certificate import problem_terms

    X, y = binary(m=m, n=n, seed=seed, noise=0.15)
    indptr = X.indptr.astype(np.int64)
    indices = X.indices.astype(np.int32)
    upper, diag, qii = problem_terms(indptr, indices, X.data, n, np.ones(m), lam, loss, 1.0)
    return X, y, indptr, indices, upper, diag, qii


def _shrinking_state(m):
    return (np.zeros(m), np.zeros(13), np.arange(m, dtype=np.int64), np.array([m, 0], dtype=np.int64),
            np.array([np.inf, -np.inf, 0.1]), np.array([3], dtype=np.uint64))


@pytest.mark.parametrize("loss", ["hinge", "squared-hinge"])
def test_shrinking_passes_reach_the_optimum_of_plain_passes_and_resume_exactly(loss):
    """The compiled passes with shrinking: alpha stays in its box, v stays sum alpha_i y_i x_i, the
    reported dual values are the exact ones, the iterates of 2 calls of p passes are those of one call
    of 2p, and the dual optimum is the one plain coordinate ascent reaches (to 1e-10)."""
    from pegasos import _dual
    from pegasos.certificate import dual_value, dual_vector

    X, y, indptr, indices, upper, diag, qii = _shrinking_problem(loss=loss)
    m = X.shape[0]
    alpha, v, active, counts, bounds, state = _shrinking_state(m)
    values = np.empty(400)
    assert _dual.coordinate_ascent_shrinking(indptr, indices, X.data, y, upper, diag, qii, 1.0, alpha, v, active,
                                             counts, bounds, state, 400, values) == 400
    assert np.all(alpha >= 0) and np.all(alpha <= upper)
    exact = dual_vector(indptr, indices, X.data, 12, alpha * y, 1.0)
    np.testing.assert_allclose(v, exact, atol=1e-10)
    assert abs(values[-1] - dual_value(alpha, exact, diag)) <= 1e-9 * abs(values[-1])
    assert np.all(np.diff(values) >= -1e-12)           # exact coordinate maximisation: D never falls
    assert 0 < counts[1] and sorted(active) == list(range(m))

    a2, v2, act2, c2, b2, s2 = _shrinking_state(m)
    for _ in range(2):
        _dual.coordinate_ascent_shrinking(indptr, indices, X.data, y, upper, diag, qii, 1.0, a2, v2, act2, c2, b2,
                                          s2, 200, values)
    assert np.array_equal(a2, alpha) and np.array_equal(v2, v) and np.array_equal(act2, active)
    assert c2[1] == counts[1] and np.array_equal(b2, bounds)

    plain, w_plain = np.zeros(m), np.zeros(13)
    order, st = np.arange(m, dtype=np.int64), np.array([3], dtype=np.uint64)
    _dual.coordinate_ascent(indptr, indices, X.data, y, upper, diag, qii, 1.0, plain, w_plain, order, st, 3000,
                            np.inf, np.empty(3000))
    more = np.empty(3000)
    _dual.coordinate_ascent_shrinking(indptr, indices, X.data, y, upper, diag, qii, 1.0, alpha, v, active, counts,
                                      bounds, state, 3000, more)
    best_plain = dual_value(plain, dual_vector(indptr, indices, X.data, 12, plain * y, 1.0), diag)
    assert abs(more[-1] - best_plain) <= 1e-10 * abs(best_plain)


def test_shrinking_refuses_inconsistent_state():
    from pegasos import _dual

    X, y, indptr, indices, upper, diag, qii = _shrinking_problem()
    m = X.shape[0]
    alpha, v, active, counts, bounds, state = _shrinking_state(m)
    args = (indptr, indices, X.data, y, upper, diag, qii, 1.0, alpha, v)
    with pytest.raises(ValueError, match="lengths"):
        _dual.coordinate_ascent_shrinking(*args, active, counts[:1], bounds, state, 1, np.empty(1))
    with pytest.raises(ValueError, match="counts"):
        _dual.coordinate_ascent_shrinking(*args, active, np.array([m + 1, 0]), bounds, state, 1, np.empty(1))
    bad = active.copy()
    bad[0] = m
    with pytest.raises(ValueError, match="permutation"):
        _dual.coordinate_ascent_shrinking(*args, bad, counts, bounds, state, 1, np.empty(1))


def test_tol_gap_with_the_finish_certifies_and_retrains(tmp_path):
    """tol_gap under the default finish: a9a at lambda = 1e-4 and EPS = 0.1% (plain Pegasos needed
    128 epochs for it): the header's gap is proven (recomputed from scratch and against the certified
    f*), and the header's settings retrain the model; one-vs-rest on dna certifies the summed gap."""
    from pegasos.certificate import duality_gap

    d = pegasos.read_svmlight(str(data_file("a9a/a9a")))
    model = pegasos.fit(d, lam=1e-4, tol_gap=0.001)
    info = model.info
    assert info["stop"] == "certified" and info["tol"] == "0.001" and info["solver"] == "dual"
    assert info["finish"] == "dual" and float(info["certified_gap"]) <= 0.001
    f = pegasos.objective(model, d.X, d.y)["objective"]
    assert 0.3517618027 - 5e-11 <= f <= 0.3517618027 / (1 - 0.001)
    assert duality_gap(model, d.X, d.y, passes=2000, tol=0.001)["rel_gap"] <= 0.001
    path = tmp_path / "a9a.model"
    model.save(path)
    again = pegasos.fit(d, TrainOptions.from_header(pegasos.load_model(path).info))
    assert np.array_equal(again.w, model.w)

    dna = pegasos.read_svmlight(str(data_file("dna/dna.scale")))
    multi = pegasos.fit(dna, lam=1e-3, tol_gap=0.01)
    assert multi.info["stop"] == "certified" and float(multi.info["certified_gap"]) <= 0.01
    assert duality_gap(multi, dna.X, dna.y, passes=5000, tol=0.01)["rel_gap"] <= 0.01


@pytest.mark.parametrize("repeat, rows, lam", [(1, 5, 1e-4), (4, 50, 1e-4), (1, 2000, 1e-6)])
def test_the_default_is_never_worse_than_plain_pegasos(repeat, rows, lam):
    """Tiny, duplicated and weakly regularised data, where the dual passes start slowly: the default
    model is never above plain Pegasos' (a finish that does not certify lets Pegasos go on, and the
    lower objective wins) and, where it says it is finished within tol, it is (against LIBLINEAR)."""
    sklearn_svm = pytest.importorskip("sklearn.svm")
    rng = np.random.default_rng(rows)
    n = 4 if rows < 10 else 20
    X = rng.normal(size=(rows, n)) * (rng.random((rows, n)) < (1.0 if rows < 100 else 0.3))
    y = np.sign(X @ rng.normal(size=n) + 0.8 * rng.normal(size=rows))
    y[y == 0] = 1.0
    y[:2] = [1.0, -1.0]
    X, y = np.repeat(X, repeat, axis=0), np.repeat(y, repeat)
    import scipy.sparse as sp

    X = sp.csr_matrix(X)
    model = pegasos.fit((X, y), lam=lam)
    plain = pegasos.fit((X, y), lam=lam, finish="none")
    f = pegasos.objective(model, X, y)["objective"]
    assert f <= pegasos.objective(plain, X, y)["objective"] * (1 + 1e-12)
    ref = sklearn_svm.LinearSVC(C=1.0 / (lam * X.shape[0]), loss="hinge", dual=True, fit_intercept=False,
                                tol=1e-10, max_iter=1_000_000).fit(X, y)
    w = ref.coef_.ravel()
    f_ref = lam / 2 * w @ w + np.maximum(0.0, 1.0 - y * (X @ w)).mean()
    if "certified_gap" in model.info:
        assert float(model.info["certified_gap"]) >= 0.0
        assert (f - min(f, f_ref)) / f <= float(model.info["certified_gap"]) + 1e-12


def test_cross_validation_takes_the_finish_options(tmp_path):
    X, y = binary(m=200, n=10, seed=21, noise=0.1)
    data = tmp_path / "d.svm"
    write_svm(data, X, y)
    out = {}
    for extra in ((), ("--finish", "none")):
        r = run_pegasos("cv", "-v", "3", "-l", "1e-4", "--json", *extra, data)
        assert r.returncode == 0, r.stderr
        import json

        out[extra] = json.loads(r.stdout)
        assert out[extra]["options"].get("finish") == (extra[1] if extra else None)
    usage_error(run_pegasos("cv", "-v", "3", "-l", "1e-4", "--finish-passes", "7", data),
              "--finish-passes finishes a run of a given length")


def _problem(X, y, lam, model):
    """finish_problem's arguments for a binary model on (X, y), unit example weights."""
    ex = as_examples((X, y))
    y_pm = np.where(np.asarray(y) > 0, 1.0, -1.0)
    c = np.ones(X.shape[0])
    v = np.zeros(ex.n_features + 1)
    v[:ex.n_features] = model.w[:ex.n_features]
    primal = finish._primal(ex.indptr, ex.indices, ex.data, y_pm, c, v, lam, "hinge", 0.0)
    margins = y_pm * model.decision_function(X)
    return (ex.indptr, ex.indices, ex.data, ex.n_features, y_pm, c, margins, primal)


@pytest.mark.parametrize("max_work", [1, 5000, 10 ** 5, finish.FINISH_UPDATES])
@pytest.mark.parametrize("lam", [1e-2, 1e-4, 1e-6])
def test_the_finishs_primal_is_that_of_its_weights_however_its_checks_fell(lam, max_work):
    """The checks of w(alpha) are skipped while the dual still rises and come between doublings where the
    rate says tol is reached: whatever pass the loop ends at (certified, stalled, or at the bound of
    work right after a skipped check), primal_dual is P(w) of the w returned, and dual <= P(w)."""
    X, y = binary(m=300, n=10, seed=5, noise=0.1)
    model = pegasos.fit((X, y), lam=lam, epochs=1, finish="none")
    args = _problem(X, y, lam, model)
    out = finish.finish_problem(*args, lam=lam, loss="hinge", bias_value=0.0, seed=3, tol=1e-3,
                                max_work=max_work)
    ex = as_examples((X, y))
    again = finish._primal(ex.indptr, ex.indices, ex.data, args[4], args[5], out["w"], lam, "hinge", 0.0)
    assert out["primal_dual"] == again
    assert out["dual"] <= min(out["primal_dual"], args[7]) * (1 + 1e-12)
    exact = finish.finish_problem(*args, lam=lam, loss="hinge", bias_value=0.0, seed=3, passes=out["passes"])
    np.testing.assert_array_equal(exact["w"], out["w"])     # the header's finish_passes retrain it


def test_the_finish_checks_less_often_than_every_doubling(monkeypatch):
    """Where the dual is far from the optimum (the first passes on a problem of C = 1/(lambda m) = 30),
    a pass raises D by more than tol of the primal and no O(nnz) check of w(alpha) is made after it;
    the run still certifies, with fewer checks than the 1, 2, 4, ... doublings it ran through."""
    X, y = binary(m=300, n=10, seed=2, noise=0.05)
    lam = 1e-4
    model = pegasos.fit((X, y), lam=lam, epochs=1, finish="none")
    args = _problem(X, y, lam, model)
    calls = []
    real = finish._primal
    monkeypatch.setattr(finish, "_primal", lambda *a: calls.append(1) or real(*a))
    out = finish.finish_problem(*args, lam=lam, loss="hinge", bias_value=0.0, seed=1, tol=2e-3)
    assert out["certified"]
    doublings = out["passes"].bit_length()          # checks at 1, 2, 4, ... up to the last pass
    assert len(calls) < doublings


def test_the_aimed_check_follows_the_gaps_linear_rate():
    # the gap halves every 4 passes: from 0.01 at 8 to 1e-3 takes log2(10) * 4 = 13.3 more passes
    assert finish._aim((4, 0.02), (8, 0.01), 1e-3) == 8 + 14
    # no rate: a first check, a gap that grew, or one already below tol
    assert finish._aim(None, (8, 0.01), 1e-3) is None
    assert finish._aim((4, 0.01), (8, 0.02), 1e-3) is None
    assert finish._aim((4, 0.02), (8, 1e-4), 1e-3) is None
    # at least MIN_STRIDE of the passes after the last check: a fast rate does not check every pass
    assert finish._aim((512, 0.5), (1024, 0.0011), 1e-3) == 1024 + int(finish.MIN_STRIDE * 1024)


def test_the_dual_sums_are_compensated():
    """dual_sums agrees with math.fsum where plain float64 sums lose digits (large and tiny terms)."""
    import math

    from pegasos import _dual

    rng = np.random.default_rng(0)
    alpha = np.concatenate([[1e16], rng.random(1000), [-1e16]])
    diag = rng.random(alpha.shape[0])
    v = np.concatenate([[1e8], rng.random(5000), [1e8]])
    total, square, curvature = _dual.dual_sums(alpha, v, diag)
    assert total == pytest.approx(math.fsum(alpha), rel=1e-14)
    assert abs(float(np.sum(alpha[::-1].cumsum()[-1])) - math.fsum(alpha)) > 1     # a plain sum loses them
    assert square == pytest.approx(math.fsum(v * v), rel=1e-15)
    assert curvature == pytest.approx(math.fsum(diag * alpha * alpha), rel=1e-15)
    with pytest.raises(ValueError):
        _dual.dual_sums(alpha, v, diag[:-1])


@pytest.mark.parametrize("settings", [dict(), dict(bias="feature"), dict(class_weight={1.0: 3.0, 3.0: 0.5}),
                                      dict(loss="squared-hinge", weighted=True)])
def test_one_vs_rest_finish_certifies_the_objective_scoring_computes(settings):
    """finish_ovr's certified gap is that of the objective pegasos.objective computes for the model it
    returns (the sum of the K binary objectives), with a regularised bias, class weights and example
    weights; and the same model for one thread or two."""
    settings = dict(settings)
    X, y = multiclass(m=300, n=10, classes=3, seed=2)
    sw = np.random.default_rng(3).uniform(0.2, 4.0, size=300) if settings.pop("weighted", False) else None
    data = (X, y) if sw is None else (X, y, None, sw)
    model = pegasos.fit(data, lam=1e-3, epochs=1, finish="none", **settings)
    ex = as_examples(data)
    done = finish.finish_ovr(model, ex, tol=1e-3)
    f = pegasos.objective(done, X, y, sample_weight=sw)["objective"]
    best = pegasos.objective(pegasos.fit(data, lam=1e-3, solver="dual", tol=1e-7, **settings), X, y,
                             sample_weight=sw)["objective"]
    gap = float(done.info["certified_gap"])
    assert 0 <= gap <= 1e-3 and f - best <= gap * f + 1e-12     # f* >= D = f (1 - gap) >= f - gap f
    again = finish.finish_ovr(model, ex, tol=1e-3, n_threads=2)
    np.testing.assert_array_equal(again.W, done.W)


def test_a_plateau_of_one_doubling_does_not_end_the_passes():
    """20 classes on 400 rows with a regularised bias, tol_gap=1e-3: a class of 23 examples sits at a
    5.3% gap from 128 to 256 passes, then falls to 1.2% at 512 and below 0.1% at 2048.  Its passes ended
    at that plateau ("finish stalled", 0.44% for the sum); two doublings in a row must now stall."""
    X, y = multiclass(m=400, n=20, classes=20, seed=1)
    model = pegasos.fit((X, y), lam=1e-4, bias="feature", tol_gap=1e-3)
    assert model.info["stop"] == "certified", model.info
    assert float(model.info["certified_gap"]) <= 1e-3


def _sparse_binary(m, n, density, seed, noise=0.1):
    import scipy.sparse as sp

    X = sp.random(m, n, density=density, random_state=np.random.default_rng(seed), format="csr")
    y = np.where(X @ np.random.default_rng(seed + 10).normal(size=n) > 0, 1.0, -1.0)
    flip = np.random.default_rng(seed).random(m) < noise
    y[flip] = -y[flip]
    return X, y


def test_a_converged_run_is_finished_too():
    """The doubling's "converged" (a doubling of the epochs that gained less than tol) is a guess: with
    the calibrated t0 far above the iterations run, the step has not decayed, and 2000 rows at lambda =
    1e-6 "converge" 2.7% above f*, where the default (the dual) is certified within tol."""
    X, y = _sparse_binary(2000, 200, 0.05, seed=4)
    plain = pegasos.fit((X, y), lam=1e-6, finish="none")
    assert plain.info["stopping"].endswith("converged")
    model = pegasos.fit((X, y), lam=1e-6)
    assert model.info["finish"] == "dual" and float(model.info["certified_gap"]) <= autotune.DEFAULT_TOL
    f_plain = pegasos.objective(plain, X, y)["objective"]
    f = pegasos.objective(model, X, y)["objective"]
    assert f_plain > 1.01 * f       # the plain run's "converged" model: more than 1% above the optimum


def test_finish_dual_runs_its_passes_past_a_stall():
    """A dual slow for hundreds of passes, then fast: 200 separable dense rows at lambda = 1e-3 stalled
    at 256 passes, 4.7 times above f* under a stall rule that is gone: only tol and the bound of work
    end the passes."""
    rng = np.random.default_rng(0)
    X = 100 * rng.random((200, 20))
    s = X @ rng.normal(size=20)
    y = np.where(s > np.quantile(s, 0.9), 1.0, -1.0)
    asked = pegasos.fit((X, y), lam=1e-3, solver="dual")
    assert float(asked.info["certified_gap"]) <= autotune.DEFAULT_TOL
    gap = pegasos.fit((X, y), lam=1e-3, tol_gap=1e-3)
    assert gap.info["stop"] == "certified" and float(gap.info["certified_gap"]) <= 1e-3
    default = pegasos.fit((X, y), lam=1e-3)
    assert float(default.info["certified_gap"]) <= autotune.DEFAULT_TOL


def test_the_note_offers_four_times_the_passes():
    """The note on a dual stopped above tol offers -T 0 --finish-passes with four times its passes, which
    retrains the same dual from w = 0 further."""
    from pegasos.cli.notes import more_passes
    from pegasos.outcome import Outcome, Stop
    from pegasos.solver import Solver

    outcome = Outcome(Solver.DUAL, "asked for", Stop.BOUND, tol=0.002, passes=32768, certified_gap=0.01)
    assert more_passes(outcome) == "; -T 0 --finish-passes 131072 runs four times its passes"
    assert more_passes(Outcome(Solver.DUAL, "", Stop.STUCK, tol=0.002, certified_gap=0.01)) == ""


@pytest.mark.parametrize("loss, bias", [("hinge", "none"), ("squared-hinge", "none"), ("hinge", "feature")])
def test_examples_of_weight_zero_are_left_out_not_stuck(loss, bias):
    """A weight of 0 holds alpha_i at 0 = C_i.  Its projected gradient was counted as the lower bound's, so
    that the spread of the others never closed and shrunk coordinates never returned: 50 zero-weight rows
    of 100 stalled the passes 21% above the optimum, then ran Pegasos to its cap.  Now the model is the
    one of the 50 weighted rows alone at lambda x 2 (the same problem: the mean loss has half the rows)."""
    X, y = binary(m=100, n=5, seed=3)
    sw = np.r_[np.zeros(50), np.ones(50)]
    lam = 1e-4
    weighted = pegasos.fit((X, y, None, sw), lam=lam, loss=loss, bias=bias)
    alone = pegasos.fit((X[50:], y[50:]), lam=2 * lam, loss=loss, bias=bias)
    assert "iterations" not in weighted.info and float(weighted.info["certified_gap"]) <= autotune.DEFAULT_TOL
    f_weighted = pegasos.objective(weighted, X, y, sample_weight=sw)["objective"]
    f_alone = pegasos.objective(alone, X[50:], y[50:], lam=2 * lam)["objective"] / 2
    gap = duality_gap(alone, X[50:], y[50:], lam=2 * lam, passes=20000, tol=1e-7)
    f_star = gap["dual"] / 2
    assert f_star <= f_weighted <= f_star / (1 - autotune.DEFAULT_TOL) and f_alone >= f_star
