"""Regression learns an intercept by default (``bias="feature"``, :data:`pegasos.options.DEFAULT_BIAS`).

Targets y = <w, x> + 150 + noise: the default of the command line, of :func:`pegasos.fit` and of
:class:`pegasos.sklearn.PegasosRegressor` must reach the R^2 of an independent reference, the
eps-insensitive fit with an intercept solved exactly as a linear program (dense, scipy's HiGHS);
``--bias none`` / ``bias="none"`` must still fit no intercept (and its R^2 is then below 0: the
targets' mean is far from 0).  Scikit-learn's LinearSVR with its intercept is a second peer where
installed."""

import json

import numpy as np
import pytest
import scipy.optimize

import pegasos
from pegasos.options import TrainOptions

import small_data
from conftest import ok, run_pegasos

EPS = 0.1
OFFSET = 150.0


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    """(path of the LIBSVM file, X dense (m, n), y (m,)) as read back from the file."""
    rng = np.random.default_rng(5)
    m, n = 400, 8
    X = rng.normal(size=(m, n))
    y = X @ rng.normal(scale=3.0, size=n) + OFFSET + 4.0 * rng.normal(size=m)
    path = small_data.write_svm(tmp_path_factory.mktemp("reg") / "offset.svm", X, y)
    Xr, yr = pegasos.load_svmlight(str(path))
    return path, Xr.toarray(), np.asarray(yr, dtype=np.float64)


def r2(y, f):
    return 1.0 - float(np.sum((y - f) ** 2)) / float(np.sum((y - y.mean()) ** 2))


def eps_insensitive_fit(X, y, eps):
    """(w, b) minimising sum_i max(0, |<w, x_i> + b - y_i| - eps), exactly: the linear program over
    (w, b, s) of min sum s subject to -s - eps <= Xw + b - y <= s + eps, s >= 0."""
    m, n = X.shape
    A = np.hstack([X, np.ones((m, 1))])
    c = np.r_[np.zeros(n + 1), np.ones(m)]
    A_ub = np.vstack([np.hstack([A, -np.eye(m)]), np.hstack([-A, -np.eye(m)])])
    b_ub = np.r_[y + eps, eps - y]
    bounds = [(None, None)] * (n + 1) + [(0, None)] * m
    res = scipy.optimize.linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return res.x[:n], float(res.x[n])


@pytest.fixture(scope="module")
def reference_r2(problem):
    _, X, y = problem
    w, b = eps_insensitive_fit(X, y, EPS)
    assert abs(b - OFFSET) < 2.0                    # the reference found the offset
    value = r2(y, X @ w + b)
    assert value > 0.6                              # the problem has signal to fit
    return value


def test_the_default_bias_is_the_tasks():
    assert TrainOptions().bias == "none" and TrainOptions(loss="rank").bias == "none"
    assert TrainOptions(loss="log").bias == "none" and TrainOptions(loss="squared-hinge").bias == "none"
    assert TrainOptions(loss="eps-insensitive").bias == "feature"
    assert TrainOptions(bias=None).bias == "none"                   # None: the task's, as when not given
    assert TrainOptions(loss="eps-insensitive", bias=None).bias == "feature"
    assert TrainOptions(loss="eps-insensitive", bias="none").bias == "none"
    assert TrainOptions(loss="eps-insensitive", bias="unregularized").bias == "unregularized"
    # a bias not given follows a changed loss; a bias given stays
    assert TrainOptions(lam=1e-3).replace(loss="eps-insensitive").bias == "feature"
    assert TrainOptions(loss="eps-insensitive").replace(loss="hinge").bias == "none"
    assert TrainOptions(bias="none").replace(loss="eps-insensitive").bias == "none"
    assert TrainOptions(loss="eps-insensitive", bias="none").replace(lam=1e-3).bias == "none"
    assert TrainOptions(loss="eps-insensitive").bias_defaulted
    assert not TrainOptions(loss="eps-insensitive", bias="feature").bias_defaulted
    # a header's bias_mode is a bias given: an old regression model without b retrains without b
    assert TrainOptions.from_header({"loss": "eps-insensitive", "bias_mode": "none"}).bias == "none"
    assert TrainOptions.from_header({"loss": "eps-insensitive", "bias_mode": "feature"}).bias == "feature"


def test_fit_learns_the_intercept_by_default(problem, reference_r2):
    _, X, y = problem
    model = pegasos.fit((X, y), loss="eps-insensitive")
    assert model.bias_mode == "feature" and "\nbias_mode feature\n" in model.to_text()
    got = r2(y, model.decision_function(X))
    assert got >= reference_r2 - 0.01, (got, reference_r2)
    # the options' replace of the loss (fit(data, options, loss=...)) resolves the bias again
    again = pegasos.fit((X, y), TrainOptions(), loss="eps-insensitive")
    np.testing.assert_array_equal(again.w, model.w)
    assert again.bias == model.bias
    # the header's settings (its bias_mode among them) retrain the same weights and bias
    back = pegasos.fit((X, y), TrainOptions.from_header(model.info | {"loss": model.loss,
                                                                      "bias_mode": model.bias_mode}))
    assert back.bias_mode == "feature" and back.bias == model.bias
    np.testing.assert_array_equal(back.w, model.w)
    none = pegasos.fit((X, y), loss="eps-insensitive", bias="none")
    assert none.bias_mode == "none" and none.bias == 0.0
    assert r2(y, none.decision_function(X)) < 0.0


def test_the_keyword_trainer_learns_the_intercept_by_default(problem, reference_r2):
    _, X, y = problem
    model = pegasos.train(X, y, loss="eps-insensitive", epochs=50, average_from=0.5, step_offset=1e4)
    assert model.bias_mode == "feature"
    assert r2(y, model.decision_function(X)) >= reference_r2 - 0.02


def test_the_command_line_learns_the_intercept_by_default(problem, reference_r2, tmp_path):
    path, _, _ = problem
    ok(run_pegasos("train", "-q", "--loss", "eps-insensitive", path, tmp_path / "d.model"))
    text = (tmp_path / "d.model").read_text()
    assert "\nbias_mode feature\n" in text
    got = json.loads(ok(run_pegasos("eval", "--json", path, tmp_path / "d.model")))["r2"]
    assert got >= reference_r2 - 0.01, (got, reference_r2)
    # the same bytes as pegasos.fit with the same settings
    X, y = pegasos.load_svmlight(str(path))
    assert pegasos.load_model(tmp_path / "d.model").bias == pegasos.fit(pegasos.read_svmlight(str(path)),
                                                                         loss="eps-insensitive").bias
    ok(run_pegasos("train", "-q", "--loss", "eps-insensitive", "--bias", "none", path, tmp_path / "n.model"))
    assert "\nbias_mode none\nbias 0.0\n" in (tmp_path / "n.model").read_text()
    assert json.loads(ok(run_pegasos("eval", "--json", path, tmp_path / "n.model")))["r2"] < 0.0
    # classification keeps no bias
    Xb, yb = small_data.binary(m=200)
    binary = small_data.write_svm(tmp_path / "b.svm", Xb, yb)
    ok(run_pegasos("train", "-q", binary, tmp_path / "b.model"))
    assert "\nbias_mode none\n" in (tmp_path / "b.model").read_text()


def test_a_resumed_run_keeps_the_models_bias(problem, tmp_path):
    """A regression model without b (trained with --bias none, or before b was the default) resumes
    without b: the default is not a bias given."""
    path, X, y = problem
    ok(run_pegasos("train", "-q", "--loss", "eps-insensitive", "--bias", "none", "-T", "300", path,
                   tmp_path / "n.model"))
    ok(run_pegasos("train", "-q", "--init", tmp_path / "n.model", path, tmp_path / "n2.model"))
    assert "\nbias_mode none\nbias 0.0\n" in (tmp_path / "n2.model").read_text()
    ok(run_pegasos("train", "-q", "--loss", "eps-insensitive", "--init", tmp_path / "n.model", path,
                   tmp_path / "n3.model"))
    assert "\nbias_mode none\n" in (tmp_path / "n3.model").read_text()
    model = pegasos.fit((X, y), loss="eps-insensitive", init=str(tmp_path / "n.model"))
    assert model.bias_mode == "none" and model.bias == 0.0
    with pytest.raises(pegasos.ParameterError, match="bias"):
        pegasos.fit((X, y), loss="eps-insensitive", bias="feature", init=str(tmp_path / "n.model"))


def test_cv_on_regression_learns_the_intercept_by_default(problem, reference_r2):
    path, _, _ = problem
    out = json.loads(ok(run_pegasos("cv", "-v", "4", "--json", "--loss", "eps-insensitive", path)))
    assert out["task"] == "regression"
    held_out = out["mean"]["r2"]
    assert held_out >= reference_r2 - 0.05, (held_out, reference_r2)      # held-out folds: a little below
    none = json.loads(ok(run_pegasos("cv", "-v", "4", "--json", "--loss", "eps-insensitive", "--bias", "none",
                                     path)))
    assert none["mean"]["r2"] < 0.0


def test_train_shards_learns_the_intercept_by_default(problem, tmp_path):
    path, X, y = problem
    ok(run_pegasos("train-shards", "-q", "--loss", "eps-insensitive", "--split", "2", "--epochs", "20", path,
                   tmp_path / "s.model"))
    model = pegasos.load_model(tmp_path / "s.model")
    assert model.bias_mode == "feature" and abs(model.bias - OFFSET) < 0.1 * OFFSET


def test_the_regressor_learns_the_intercept_by_default(problem, reference_r2):
    from pegasos.sklearn import PegasosRegressor

    _, X, y = problem
    est = PegasosRegressor().fit(X, y)
    assert est.get_params()["bias"] == "feature" and est.model_.bias_mode == "feature"
    assert est.score(X, y) >= reference_r2 - 0.01
    assert est.intercept_[0] == est.model_.bias != 0.0
    # the estimator's model is pegasos.fit's with the same settings
    assert est.model_.bias == pegasos.fit((X, y), loss="eps-insensitive").bias
    none = PegasosRegressor(bias="none").fit(X, y)
    assert none.intercept_[0] == 0.0 and none.score(X, y) < 0.0


def test_the_regressor_is_as_good_as_scikit_learns_linear_svr(problem):
    svm = pytest.importorskip("sklearn.svm")
    from pegasos.sklearn import PegasosRegressor

    _, X, y = problem
    peer = svm.LinearSVR(epsilon=EPS, max_iter=100_000, random_state=0).fit(X, y)
    assert PegasosRegressor().fit(X, y).score(X, y) >= peer.score(X, y) - 0.01


def test_an_intercept_held_back_by_lambda_is_said(tmp_path, problem):
    """The intercept is regularised as a weight, so at the optimum lambda |b| <= 1 (the residuals' sides
    balance lambda b): targets offset by 50000 at lambda 1e-4 leave b near 1/lambda and a model far from
    them, which train's summary and pegasos.fit said nothing of.  A note (with -q too) and a
    ConvergenceWarning; the offset of 150 says nothing."""
    import warnings

    from pegasos.outcome import HELD_INTERCEPT

    _, X, y = problem
    far = small_data.write_svm(tmp_path / "far.svm", X, y - OFFSET + 50000.0)
    r = run_pegasos("train", "-q", "--loss", "eps-insensitive", far, tmp_path / "far.model")
    assert r.returncode == 0 and "the intercept b = " in r.stderr and "held back" in r.stderr
    model = pegasos.load_model(str(tmp_path / "far.model"))
    assert model.lam * abs(model.bias) >= HELD_INTERCEPT
    with pytest.warns(pegasos.ConvergenceWarning, match="held back by its regularisation"):
        pegasos.fit((X, y - OFFSET + 50000.0), loss="eps-insensitive")
    r = run_pegasos("train", "-q", "--loss", "eps-insensitive", problem[0], tmp_path / "near.model")
    assert r.returncode == 0 and "held back" not in r.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error", pegasos.ConvergenceWarning)
        pegasos.fit((X, y), loss="eps-insensitive")
