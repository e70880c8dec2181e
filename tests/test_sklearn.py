"""pegasos.sklearn: scikit-learn's estimator checks, equality with the pegasos
trainers, labels of any type, model files, and use in Pipeline / GridSearchCV /
cross_val_score."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import pegasos
from pegasos import autotune
from pegasos.errors import ParameterError
from pegasos.sklearn import PegasosClassifier, PegasosRanker, PegasosRegressor, pairwise_counts

from conftest import data_file, ok, run_pegasos

# ---------------------------------------------------------- estimator checks --

_SAMPLE_WEIGHT_EQUIVALENCE = (
    "the objective is lambda/2 |w|^2 + (1/m) sum_i s_i loss_i (paper Eq. 1 with weights, LIBLINEAR's C sum_i "
    "s_i loss_i at lambda = 1/(C m)): a weight of 2 doubles a row's loss, while a repeated row also raises m, "
    "which lowers every other row's share, so the two problems differ (and Pegasos' runs also visit other rows)")
_KERNEL_WEIGHTS = "the kernelized trainer (Fig. 3) takes no per-example weights: fit refuses sample_weight"

_NO_INTERCEPT = ("without an intercept (bias='none', the command line's default) the decision boundary passes through "
                 "the origin, so class weights of 1000 and 0.0001 cannot put all the test points in one class; "
                 "bias='feature' passes the check")

_PARTIAL_FIT_REFUSED = ("partial_fit trains linear models, one-vs-rest for more than two classes; the check passes "
                        "three classes to a kernel or a Crammer-Singer classifier, which it refuses with a "
                        "ParameterError")


def _expected_failures(estimator):
    failures = {"check_sample_weight_equivalence_on_dense_data": _SAMPLE_WEIGHT_EQUIVALENCE,
                "check_sample_weight_equivalence_on_sparse_data": _SAMPLE_WEIGHT_EQUIVALENCE}
    if isinstance(estimator, PegasosRanker):
        return {}                      # no sample weights: those checks do not run
    if isinstance(estimator, PegasosClassifier):
        if estimator.kernel is not None or estimator.multiclass != "ovr":
            for check in ("check_fit_score_takes_y", "check_n_features_in_after_fitting",
                          "check_estimators_partial_fit_n_features"):
                failures[check] = _PARTIAL_FIT_REFUSED
        if estimator.bias == "none" and estimator.kernel is None:
            failures["check_class_weight_classifiers"] = _NO_INTERCEPT
    if isinstance(estimator, PegasosClassifier) and estimator.kernel is not None:
        # (check_sample_weights_pandas_series runs only where pandas is installed)
        for check in ("check_sample_weights_not_an_array", "check_sample_weights_list", "check_sample_weights_shape",
                      "check_sample_weights_not_overwritten", "check_classifiers_one_label_sample_weights",
                      "check_sample_weights_pandas_series"):
            failures[check] = _KERNEL_WEIGHTS
        failures["check_class_weight_classifiers"] = "the kernelized trainer takes no class weights"
    return failures


@parametrize_with_checks([PegasosClassifier(), PegasosClassifier(bias="feature"), PegasosClassifier(loss="log"), PegasosClassifier(loss="squared-hinge"),
                          PegasosClassifier(multiclass="crammer-singer"), PegasosClassifier(kernel="rbf"),
                          PegasosRegressor(), PegasosRanker()],
                         expected_failed_checks=_expected_failures, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ------------------------------------------------------------------ data --

def _problem(m=300, d=40, classes=2, seed=0, density=0.3):
    """Sparse CSR data with a linear signal and labels 0..classes-1."""
    rng = np.random.default_rng(seed)
    X = sp.random(m, d, density=density, format="csr", random_state=seed, dtype=np.float64)
    W = rng.normal(size=(classes, d))
    y = np.argmax(X @ W.T + 0.1 * rng.normal(size=(m, classes)), axis=1)
    return X, y


# ----------------------------------------------- equality with the trainers --

SETTINGS = dict(epochs=3, batch_size=4, sampling="permutation", average_from=0.25, projection=True,
                step_offset=50.0)
LAM = dict(lam=1e-3)          # pegasos.train's lambda, the estimators' alpha
ALPHA = dict(alpha=1e-3)


def test_binary_model_is_pegasos_train_bit_for_bit():
    X, y = _problem()
    labels = np.where(y == 1, 1.0, -1.0)
    for bias in ("none", "feature", "unregularized"):
        est = PegasosClassifier(bias=bias, random_state=7, class_weight={1: 2.0}, **ALPHA, **SETTINGS).fit(X, labels)
        ref = pegasos.train(X, labels, bias=bias, seed=7, class_weight={1.0: 2.0}, **LAM, **SETTINGS)
        assert np.array_equal(est.coef_.ravel(), ref.w) and est.coef_.shape == (1, X.shape[1])
        assert est.intercept_[0] == ref.bias
        assert np.array_equal(est.decision_function(X), ref.decision_function(X))
        assert est.t_ == int(ref.info["iterations"]) == 3 * 75
        assert est.n_iter_ == 3


def test_other_losses_multiclass_kernel_regression_ranking_equal_their_trainers():
    X, y = _problem(classes=3)
    for loss, method in (("log", "ovr"), ("squared-hinge", "ovr"), ("hinge", "crammer-singer")):
        est = PegasosClassifier(loss=loss, multiclass=method, bias="none", random_state=3, **ALPHA, **SETTINGS).fit(X, y)
        ref = pegasos.train_multiclass(X, y.astype(float), method=method, loss=loss, seed=3, **LAM, **SETTINGS)
        assert np.array_equal(est.coef_, ref.W) and np.array_equal(est.intercept_, ref.biases)
        assert np.array_equal(est.predict(X), ref.predict(X).astype(int))
    kernel_settings = {k: v for k, v in SETTINGS.items() if k not in ("step_offset", "projection")}
    yb = (y == 0).astype(int)
    est = PegasosClassifier(kernel="poly", gamma=0.5, degree=2, coef0=1.0, random_state=5, **ALPHA, **kernel_settings).fit(X, yb)
    ref = pegasos.train_kernel(X, yb, kernel="poly", gamma=0.5, degree=2, coef0=1.0, seed=5, **LAM, **kernel_settings)
    assert np.array_equal(est.dual_coef_.ravel(), ref.coef)
    assert np.array_equal(est.decision_function(X), ref.decision_function(X))
    target = X @ np.arange(X.shape[1], dtype=float) / 10
    reg = PegasosRegressor(epsilon=0.05, bias="feature", random_state=2, **ALPHA, **SETTINGS).fit(X, target)
    ref = pegasos.train(X, target, loss="eps-insensitive", epsilon=0.05, bias="feature", seed=2, **LAM, **SETTINGS)
    assert np.array_equal(reg.coef_, ref.w) and reg.intercept_[0] == ref.bias
    qid = np.arange(X.shape[0]) // 30
    rank_settings = {k: v for k, v in SETTINGS.items() if k != "sampling"}
    ranker = PegasosRanker(random_state=4, **ALPHA, **rank_settings).fit(X, y, qid=qid)
    ref = pegasos.train(X, y.astype(float), loss="rank", qid=qid, seed=4, sampling="uniform", **LAM, **rank_settings)
    assert np.array_equal(ranker.coef_, ref.w)


def test_kernel_linear_is_the_linear_model():
    # pegasos train --kernel linear and scikit-learn's SVC(kernel="linear") spell the explicit w so;
    # the estimator refused it
    X, y = _problem(classes=2)
    Xm, ym = _problem(classes=3, seed=1)
    for X_, y_ in ((X, y), (Xm, ym)):
        a = PegasosClassifier(kernel="linear", random_state=2).fit(X_, y_)
        b = PegasosClassifier(random_state=2).fit(X_, y_)
        assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
        assert a.get_params()["kernel"] == "linear"
    part = PegasosClassifier(kernel="linear", random_state=2).fit(X, y)
    before = part.coef_.copy()
    part.partial_fit(X, y)                                  # goes on from the fitted weights
    assert part.coef_.shape == before.shape
    with pytest.raises(ParameterError, match="kernel must be None, 'linear', 'rbf'"):
        PegasosClassifier(kernel="rfb").fit(X, y)


def test_sample_weight_equals_the_same_class_weights():
    """Per-example weights that are a function of the class give the model of those class weights."""
    X, y = _problem(classes=2)
    Xm, ym = _problem(classes=3, seed=1)
    for X_, y_, cw in ((X, y, {0: 0.5, 1: 3.0}), (Xm, ym, {0: 0.5, 1: 3.0, 2: 1.5})):
        sw = np.array([cw[c] for c in y_])
        a = PegasosClassifier(class_weight=cw).fit(X_, y_)
        b = PegasosClassifier().fit(X_, y_, sample_weight=sw)
        assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    c = PegasosClassifier().fit(X, y, sample_weight=np.ones(X.shape[0]))
    assert np.array_equal(c.coef_, PegasosClassifier().fit(X, y).coef_)
    target = np.asarray(X.sum(axis=1)).ravel()
    sw = np.where(target > np.median(target), 3.0, 0.5)
    r = PegasosRegressor(random_state=9).fit(X, target, sample_weight=sw)
    ref = pegasos.fit((X, target, None, sw), loss="eps-insensitive", seed=9)   # its defaults
    assert np.array_equal(r.coef_, ref.w)


def test_dense_and_every_sparse_format_give_the_same_model():
    X, y = _problem()
    models = [PegasosClassifier().fit(A, y) for A in (X, X.tocsc(), X.tocoo(), X.toarray(), sp.csr_array(X))]
    for est in models[1:]:
        assert np.array_equal(est.coef_, models[0].coef_)
        assert np.array_equal(est.decision_function(X.toarray()), models[0].decision_function(X))


def test_objective_matches_liblinear_on_heart_scale():
    """The estimator's defaults reach LIBLINEAR's optimum (an independent solver) to 1%."""
    X, y = pegasos.load_svmlight(str(data_file("heart_scale/heart_scale")))
    lam = 1e-2
    est = PegasosClassifier(alpha=lam).fit(X, y)
    svc = LinearSVC(C=1 / (lam * X.shape[0]), loss="hinge", fit_intercept=False, dual=True, tol=1e-8,
                    max_iter=1_000_000).fit(X, y)
    ys = np.where(y > 0, 1.0, -1.0)

    def f(w):
        return lam / 2 * w @ w + np.mean(np.maximum(0.0, 1 - ys * (X @ w)))

    opt = f(svc.coef_.ravel())
    assert opt <= f(est.coef_.ravel()) <= 1.01 * opt
    assert pegasos.objective(est.model_, X, y)["objective"] == pytest.approx(f(est.coef_.ravel()), rel=1e-12)


def test_defaults_reach_the_certified_optimum_of_a9a():
    """The estimator's defaults are pegasos.fit's (calibrated t0, the doubling rule) and end within 1% of f*
    (the data README's LIBLINEAR optimum).  They used to be their own: 50 epochs with t0 = 1/(0.1 lambda),
    6% above the optimum on a small set where pegasos train was at 0.06%."""
    X, y = pegasos.load_svmlight(str(data_file("a9a/a9a")))
    est = PegasosClassifier().fit(X, y)
    f = pegasos.objective(est.model_, X, y)["objective"]
    assert 0.3517618027 * (1 - 1e-9) <= f <= 1.01 * 0.3517618027
    ref = pegasos.fit((X, y))
    assert np.array_equal(est.coef_.ravel(), ref.w) and est.model_.info == ref.info
    # a9a is certified by the dual passes from w = 0: no Pegasos iteration, n_iter_ the passes
    assert est.model_.info["solver"] == "dual" and est.model_.info["stop"] == "certified"
    assert est.t_ == 0 and "iterations" not in ref.info and est.n_iter_ == int(ref.info["finish_passes"]) > 0


# -------------------------------------------------------------------- labels --

def test_string_labels_predict_and_survive_save_load(tmp_path):
    X, y = _problem(classes=3)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    est = PegasosClassifier().fit(X, names)
    assert list(est.classes_) == ["setosa", "versicolor", "virginica"]
    pred = est.predict(X)
    assert pred.dtype.kind == "U" and np.mean(pred == names) > 0.8
    path = tmp_path / "iris.model"
    est.save(path)
    assert (tmp_path / "iris.model.classes").exists()
    back = PegasosClassifier.load(path)
    assert list(back.classes_) == list(est.classes_)
    assert np.array_equal(back.predict(X), pred)
    assert np.array_equal(back.decision_function(X), est.decision_function(X))
    assert back.get_params()["alpha"] == est.alpha and back.get_params()["iterations"] == est.iterations is None
    # binary string labels; a later save with numeric labels removes the label file
    yes_no = np.where(y == 0, "yes", "no")
    est2 = PegasosClassifier().fit(X, yes_no)
    assert list(est2.classes_) == ["no", "yes"]
    assert np.array_equal(est2.predict(X) == "yes", est2.decision_function(X) > 0)
    est2.save(path)
    assert np.array_equal(PegasosClassifier.load(path).predict(X), est2.predict(X))
    PegasosClassifier().fit(X, y).save(path)
    assert not (tmp_path / "iris.model.classes").exists()


@pytest.mark.parametrize("kind", [bool, np.int32, np.uint8, np.float32])
def test_numeric_label_kinds_survive_save_and_load(tmp_path, kind):
    # a bool-labelled classifier came back with int64 classes: the model file holds numbers only, so the
    # label file records the kind
    X, y = _problem(classes=2)
    labels = (y == 1).astype(kind)
    est = PegasosClassifier().fit(X, labels)
    path = tmp_path / "m.model"
    est.save(path)
    back = PegasosClassifier.load(path)
    assert back.classes_.dtype == np.dtype(kind) and np.array_equal(back.classes_, est.classes_)
    assert back.predict(X).dtype == np.dtype(kind) and np.array_equal(back.predict(X), est.predict(X))
    PegasosClassifier().fit(X, y.astype(np.int64)).save(path)        # int64 needs no label file
    assert not (tmp_path / "m.model.classes").exists()
    assert PegasosClassifier.load(path).classes_.dtype == np.int64


def test_a_damaged_label_kind_is_refused(tmp_path):
    X, y = _problem(classes=2)
    path = tmp_path / "m.model"
    PegasosClassifier().fit(X, y == 1).save(path)
    (tmp_path / "m.model.classes").write_text('{"dtype": "<U5"}\n')
    with pytest.raises(pegasos.ModelFormatError, match="label kind"):
        PegasosClassifier.load(path)


def test_string_labels_of_a_model_file_written_again_by_the_command_line_are_not_applied(tmp_path):
    # `pegasos train` writes MODEL and leaves MODEL.classes alone: the labels of the earlier model were
    # applied to the new one without a word
    from conftest import ok, run_pegasos

    X, y = _problem(classes=2)
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    path = tmp_path / "m.model"
    PegasosClassifier().fit(X, np.where(y == 1, "spam", "ham")).save(path)
    assert list(PegasosClassifier.load(path).classes_) == ["ham", "spam"]
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{int(y[i])} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(X[i]))
                            + "\n" for i in range(X.shape[0])))
    ok(run_pegasos("train", "-q", data, path))
    with pytest.warns(UserWarning, match="written with another model file"):
        back = PegasosClassifier.load(path)
    assert list(back.classes_) == [0, 1]


def test_numeric_labels_are_written_as_such_and_the_command_line_reads_the_file(tmp_path):
    X, y = _problem()
    labels = np.where(y == 1, 5, -3)
    est = PegasosClassifier(loss="log").fit(X, labels)
    path = tmp_path / "m.model"
    est.save(path)
    model = pegasos.load_model(str(path))
    assert (model.labels.negative, model.labels.positive) == (-3.0, 5.0)
    assert np.array_equal(model.w, est.coef_.ravel())
    back = PegasosClassifier.load(path)
    assert back.classes_.dtype.kind == "i" and list(back.classes_) == [-3, 5]
    assert back.loss == "log" and np.allclose(back.predict_proba(X), est.predict_proba(X), rtol=0, atol=0)
    data = tmp_path / "d.svm"
    pegasos_rows = [f"{lab} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(row.indices, row.data))
                    for lab, row in zip(labels, X)]
    data.write_text("\n".join(pegasos_rows) + "\n")
    out = tmp_path / "f.txt"
    ok(run_pegasos("predict", data, path, out))
    assert np.array_equal(np.loadtxt(out), est.decision_function(X))


def test_multiclass_and_regression_and_ranking_files_round_trip(tmp_path):
    X, y = _problem(classes=4)
    for est, target in ((PegasosClassifier(multiclass="crammer-singer"), y + 1),
                        (PegasosRegressor(epsilon=0.2), y * 0.5), (PegasosRanker(), y)):
        est.fit(X, target)
        path = tmp_path / "x.model"
        est.save(path)
        back = type(est).load(path)
        assert np.array_equal(back.predict(X), est.predict(X))
        assert back.t_ == est.t_
    with pytest.raises(pegasos.ModelFormatError, match="not a regression model"):
        PegasosRegressor.load(tmp_path / "x.model")


def test_average_true_alone_averages_every_iterate():
    """average=True (SGDClassifier's spelling) raised 'give either average= or average_from=, not
    both' over an average_from the user never set (its default 0.5)."""
    X, y = _problem()
    for est, target in ((PegasosClassifier(average=True, epochs=2), y), (PegasosClassifier(average=True), y),
                        (PegasosClassifier(average=True, kernel="rbf", epochs=1), y),
                        (PegasosRegressor(average=True, epochs=2), y * 1.0), (PegasosRanker(average=True), y)):
        est.fit(X, target)
        assert est.model_.info["averaging"] == "all", est
        assert est.get_params()["average_from"] == 0.5          # the parameter itself is left as given
    est = PegasosClassifier(average=True)
    est.partial_fit(X, y, classes=np.unique(y))
    est.partial_fit(X, y)
    assert est.model_.info["averaging"] == "all"
    for est in (PegasosClassifier(average=True, average_from=0.25), PegasosRegressor(average=True, average_from=0.0)):
        with pytest.raises(ParameterError, match=r"average=True averages every iterate and average_from="):
            est.fit(X, y * 1.0)


def test_load_gives_back_the_recorded_settings(tmp_path):
    X, y = _problem()
    labels = np.where(y == 1, "spam", "ham")
    for est in (PegasosClassifier(class_weight={"spam": 2.5}), PegasosClassifier(average=True, epochs=2),
                PegasosClassifier(average_from=0.25, epochs=3, sampling="uniform", projection=True, random_state=7)):
        est.fit(X, labels)
        path = tmp_path / "m.model"
        est.save(path)
        back = PegasosClassifier.load(path)
        given, loaded = est.get_params(), back.get_params()
        for name in ("class_weight", "sampling", "projection", "random_state", "average"):
            assert loaded[name] == given[name], (est, name)
        assert loaded["average_from"] == (None if est.average else given["average_from"])
        automatic = est.epochs is None and est.iterations is None
        assert loaded["iterations"] == (None if automatic else est.t_) and loaded["epochs"] is None
        assert loaded["step_offset"] == "auto"
        assert np.array_equal(back.decision_function(X), est.decision_function(X))
        # a loaded estimator refits and clones (iterations 0, the dual passes' T, was refused on refit)
        again = clone(back).fit(X, labels)
        if automatic:
            assert np.array_equal(again.decision_function(X), est.decision_function(X))
        assert cross_val_score(clone(back), X, labels, cv=3).shape == (3,)
    for est in (PegasosRegressor(), PegasosRanker()):
        est.fit(X, y * 1.0)
        est.save(tmp_path / "r.model")
        back = type(est).load(tmp_path / "r.model")
        assert back.get_params()["iterations"] in (None, est.t_)
        assert np.array_equal(clone(back).fit(X, y * 1.0).predict(X), est.predict(X))


def test_pickle_and_clone():
    X, y = _problem(classes=3)
    for est in (PegasosClassifier(loss="log").fit(X, y), PegasosClassifier(kernel="rbf").fit(X, y),
                PegasosRegressor().fit(X, y * 1.0)):
        again = pickle.loads(pickle.dumps(est))
        assert np.array_equal(again.predict(X), est.predict(X))
        fresh = clone(est)
        assert fresh.get_params() == est.get_params() and not hasattr(fresh, "model_")


# ------------------------------------------------------------- probabilities --

def test_predict_proba_only_for_the_log_loss():
    X, y = _problem(classes=3)
    assert not hasattr(PegasosClassifier(), "predict_proba")
    with pytest.raises(AttributeError, match="predict_proba"):
        PegasosClassifier().fit(X, y).predict_proba(X)
    p = PegasosClassifier(loss="log").fit(X, y).predict_proba(X)
    assert p.shape == (X.shape[0], 3) and np.allclose(p.sum(axis=1), 1.0)
    est = PegasosClassifier(loss="log").fit(X, y == 1)
    p2 = est.predict_proba(X)
    assert np.allclose(p2[:, 1], 1 / (1 + np.exp(-est.decision_function(X))), rtol=1e-12)
    assert np.array_equal(est.model_.predict_proba(X), p2[:, 1])


# ---------------------------------------------------------------- the ranker --

def test_ranker_score_is_pairwise_accuracy():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 5))
    w = np.array([1.0, -2.0, 0.5, 0.0, 1.0])
    y = np.round(X @ w + 0.3 * rng.normal(size=120)).clip(-2, 2)
    qid = rng.integers(0, 6, size=120)
    ranker = PegasosRanker(alpha=1e-3).fit(X, y, qid=qid)
    f = ranker.predict(X)
    pairs = correct = 0
    for a in range(120):
        for b in range(120):
            if qid[a] == qid[b] and y[a] > y[b]:
                pairs += 1
                correct += f[a] > f[b]
    assert ranker.score(X, y, qid=qid) == correct / pairs
    assert ranker.score(X, y, qid=qid) > 0.85
    f_ties = np.round(f)
    assert pairwise_counts(f_ties, y, qid.astype(np.int64)) == (
        pairs, sum(1 for a in range(120) for b in range(120)
                   if qid[a] == qid[b] and y[a] > y[b] and f_ties[a] > f_ties[b]))
    with pytest.raises(ParameterError, match="qid"):
        ranker.fit(X, y, qid=np.arange(3))


# ---------------------------------------------------------------- meta tools --

def test_pipeline_grid_search_and_cross_val_score():
    X, y = _problem(m=240, classes=3)
    pipe = make_pipeline(MaxAbsScaler(), PegasosClassifier())
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.7
    grid = GridSearchCV(PegasosClassifier(), {"alpha": [1e-4, 1e-2], "loss": ["hinge", "log"]}, cv=3, n_jobs=2)
    grid.fit(X, y)
    assert set(grid.best_params_) == {"alpha", "loss"} and grid.best_score_ > 0.7
    assert np.array_equal(grid.predict(X), grid.best_estimator_.predict(X))
    reg = make_pipeline(StandardScaler(with_mean=False), PegasosRegressor())
    target = np.asarray(X @ np.linspace(-1, 1, X.shape[1])).ravel()
    assert cross_val_score(reg, X, target, cv=3).mean() > 0.8


# ------------------------------------------------------------------- errors --

@pytest.mark.parametrize("params, message", [
    (dict(alpha=0), "alpha"), (dict(alpha="x"), "alpha"), (dict(n_jobs=0), "n_jobs"), (dict(n_jobs=1.5), "n_jobs"), (dict(loss="rank"), "loss"),
    (dict(multiclass="ovo"), "multiclass"), (dict(kernel="linearish"), "kernel"),
    (dict(kernel="rbf", loss="log"), "loss"), (dict(kernel="rbf", step_offset=3.0), "step_offset"),
    (dict(step_offset="fast"), "step_offset"), (dict(class_weight={"zz": 2.0}), "class_weight"),
    (dict(class_weight="even"), "class_weight"), (dict(random_state=-1), "random_state"),
    (dict(batch_size=10_000), "batch size"), (dict(epochs=1, iterations=5), "either"),
])
def test_bad_settings_are_parameter_errors(params, message):
    X, y = _problem(m=50)
    with pytest.raises(ParameterError, match=message):
        PegasosClassifier(**params).fit(X, y)


def test_bad_input_is_a_parameter_error():
    X, y = _problem(m=50)
    dense = X.toarray()
    dense[3, 2] = np.nan
    with pytest.raises(ParameterError, match="NaN"):
        PegasosClassifier().fit(dense, y)
    with pytest.raises(ParameterError, match="one class"):
        PegasosClassifier().fit(X, np.zeros(50))
    with pytest.raises(ParameterError, match="sample_weight"):
        PegasosClassifier().fit(X, y, sample_weight=-np.ones(50))
    with pytest.raises(ParameterError, match="features"):
        PegasosClassifier().fit(X, y).predict(X[:, :10])
    with pytest.raises(ParameterError, match="kernel"):
        PegasosClassifier(kernel="rbf").fit(X, y, sample_weight=np.ones(50))
    with pytest.raises(ParameterError, match="one-vs-rest kernel"):
        PegasosClassifier(kernel="rbf").fit(X, np.arange(50) % 3).save("never-written.model")


def test_import_pegasos_does_not_import_sklearn_and_a_missing_sklearn_names_the_extra():
    code = "import sys, pegasos; pegasos.train; assert 'sklearn' not in sys.modules, 'sklearn imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
    code = ("import sys; sys.modules['sklearn'] = None\n"
            "try:\n    import pegasos.sklearn\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert "pip install 'pegasos[sklearn]'" in out


def test_messages_show_labels_as_python_values():
    """Messages printed numpy's repr: '(np.float64(1.0) only)'."""
    with pytest.raises(ParameterError) as e:
        PegasosClassifier().fit(np.ones((3, 2)), np.array([1.0, 1.0, 1.0]))
    assert "(1.0 only)" in str(e.value) and "np." not in str(e.value)
    with pytest.raises(ParameterError) as e:
        PegasosClassifier(class_weight={np.float64(0.0): -1}).fit(np.ones((4, 2)), np.array([0.0, 1.0, 1.0, 0.0]))
    assert "label 0.0 must be a positive number, got -1" in str(e.value)


def test_an_engine_given_as_a_string_is_a_clear_error():
    """engine="dask" raised a bare AttributeError ('str' object has no attribute 'scheduler_info')."""
    for engine in ("dask", "local"):
        with pytest.raises(ParameterError, match="engine must be a pegasos.engine_dask.DaskEngine"):
            PegasosClassifier(engine=engine).fit(np.eye(4), [0, 1, 0, 1])


def test_the_finish_of_the_classifier_is_checked_by_the_options_rule():
    """A finish asked for where it does not apply (a kernel, an engine) or a bad finish value is the one
    ParameterError of TrainOptions, in its wording, for the estimator as for pegasos.fit; no cluster is
    needed to be told (the check precedes the run)."""
    from types import SimpleNamespace

    from pegasos.options import TrainOptions

    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.array([0, 1] * 10)

    def message(call):
        with pytest.raises(ParameterError) as e:
            call()
        assert "\n" not in str(e.value)
        return str(e.value)

    # with a kernel, finish="dual" is the dual solver alone (no Pegasos epochs before it)
    rule = message(lambda: TrainOptions(kernel="rbf", finish="dual", epochs=2).validate())
    assert message(lambda: PegasosClassifier(kernel="rbf", finish="dual", epochs=2).fit(X, y)) == rule
    assert rule.startswith("finish='dual': the dual finish does not apply here: with a kernel it is the dual "
                           "solver alone")
    model = PegasosClassifier(kernel="rbf", finish="dual").fit(X, y).model_
    assert model.info["finish"] == "dual" and "dual_updates" in model.info
    rule = message(lambda: TrainOptions(finish="yes").validate())
    assert message(lambda: PegasosClassifier(kernel="rbf", finish="yes").fit(X, y)) == rule
    one_worker = SimpleNamespace(client=SimpleNamespace(scheduler_info=lambda: {"workers": {"w": {}}}))
    assert message(lambda: PegasosClassifier(engine=one_worker, finish="dual").fit(X, y)) == (
        "finish='dual': the dual finish does not apply here: it needs the data in memory (on shards the run is "
        "plain mini-batch Pegasos over the blocks)")


def test_ranker_score_without_the_queries_of_its_fit_warns():
    """GridSearchCV passed qid to fit but scored without it: pairs across queries, silently."""
    import warnings

    import sklearn
    from sklearn.model_selection import GroupKFold

    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    qid = np.repeat(np.arange(30), 10)
    y = np.clip(np.round(X[:, 0] + rng.normal(size=300)), 0, 4)
    est = PegasosRanker().fit(X, y, qid=qid)
    with pytest.warns(UserWarning, match="score without qid puts every example in one query"):
        est.score(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grouped = est.score(X, y, qid=qid)
        PegasosRanker().fit(X, y).score(X, y)                  # one query in fit: nothing to warn of
    with sklearn.config_context(enable_metadata_routing=True):
        routed = PegasosRanker(alpha=1e-2).set_fit_request(qid=True).set_score_request(qid=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            g = GridSearchCV(routed, {"alpha": [1e-2]}, cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
    assert 0.5 < g.best_score_ <= 1.0 and 0.5 < grouped <= 1.0


# ------------------------------------------- tol, cache_size and gamma's names --

def _blobs(seed=0, m=120, n=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n)) * np.linspace(0.5, 3.0, n)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=m) > 0, 1, -1)
    return X, y


def test_tol_reaches_the_run_and_comes_back_from_the_model_file(tmp_path):
    X, y = _blobs()
    loose = PegasosClassifier(alpha=1e-3, tol=0.05).fit(X, y)
    tight = PegasosClassifier(alpha=1e-3).fit(X, y)
    assert loose.model_.info["tol"] == "0.05" and loose.model_.info["stop"] == "certified"
    assert tight.model_.info["tol"] == "0.002" and tight.model_.info["stop"] == "certified"
    assert float(loose.model_.info["certified_gap"]) <= 0.05
    assert float(tight.model_.info["certified_gap"]) <= 0.002
    assert int(loose.model_.info["finish_passes"]) < int(tight.model_.info["finish_passes"])
    loose.save(tmp_path / "m.txt")
    assert PegasosClassifier.load(tmp_path / "m.txt").tol == 0.05
    kernel = PegasosClassifier(kernel="rbf", alpha=1e-3, tol=0.05).fit(X, y)
    assert kernel.model_.info["tol"] == "0.05" and kernel.model_.info["solver"] == "dual"
    assert float(kernel.model_.info["certified_gap"]) <= 0.05
    rank = PegasosRanker(alpha=1e-3, tol=0.05).fit(X, X[:, 0] > 0, qid=np.arange(120) // 20)
    assert rank.model_.info["tol"] == "0.05" and rank.model_.info["stop"] == "certified"


@pytest.mark.parametrize("tol", [0.0, 1.0, 5.0, -0.1, float("nan"), float("inf")])
def test_tol_outside_zero_one_is_refused(tol):
    X, y = _blobs()
    with pytest.raises(ParameterError, match=r"tol.*\(0, 1\)"):
        PegasosClassifier(tol=tol).fit(X, y)
    with pytest.raises(ParameterError, match=r"tol.*\(0, 1\)"):
        PegasosClassifier(kernel="rbf", tol=tol).fit(X, y)


def test_tol_five_on_the_command_line_is_one_line_error(tmp_path):
    """`--tol 5` was accepted, and with a kernel it wrote the empty model as certified (gap 1 <= 5)."""
    for extra in ([], ["--kernel", "rbf"]):
        out = tmp_path / "m.txt"
        r = run_pegasos("train", "--tol", "5", *extra, "tests/data/binary.svm", out)
        assert r.returncode != 0 and "Traceback" not in r.stderr
        assert "--tol" in r.stderr and "(0, 1)" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert not out.exists()


def test_cache_size_changes_no_kernel_model():
    X, y = _blobs(m=200)
    models = [PegasosClassifier(kernel="rbf", alpha=1e-4, cache_size=c).fit(X, y).model_.to_text() for c in (0, 0.01, 100)]
    assert models[0] == models[1] == models[2]
    for kernel in ("rbf", None):          # named as the estimator spells it, with a linear model too
        with pytest.raises(ParameterError, match="cache_size must be a number of MiB"):
            PegasosClassifier(kernel=kernel, cache_size=-1).fit(X, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_gamma_scale_and_auto_are_those_of_svc(sparse):
    from sklearn.svm import SVC

    X, y = _blobs(n=7)
    X[np.abs(X) < 0.7] = 0.0
    Xs = sp.csr_matrix(X) if sparse else X
    for name in ("scale", "auto"):
        ours = PegasosClassifier(kernel="rbf", gamma=name).fit(Xs, y)
        svc = SVC(kernel="rbf", gamma=name).fit(Xs, y)
        assert ours.model_.gamma == pytest.approx(svc._gamma, rel=1e-12)
    assert (PegasosClassifier(kernel="rbf", gamma="auto").fit(X, y).model_.to_text()
            == PegasosClassifier(kernel="rbf").fit(X, y).model_.to_text())
    with pytest.raises(ParameterError, match="gamma"):
        PegasosClassifier(kernel="rbf", gamma="wide").fit(X, y)


def test_gamma_scale_is_svcs_on_offset_and_constant_features():
    """E[x^2] - mean^2 cancelled for features near 1e8 (half SVC's gamma); constant X is SVC's 1."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(0)
    for offset in (1e6, 1e8, 1.7e9):
        X = offset + rng.normal(size=(200, 3))
        y = (X[:, 0] > offset).astype(int)
        ours = PegasosClassifier(kernel="rbf", gamma="scale", alpha=1e-2)._gamma(sp.csr_matrix(X))
        assert ours == pytest.approx(1.0 / (3 * X.var()), rel=1e-6)       # SVC's formula for dense X
        if offset < 1e9:                                                  # (SVC's own fit fails beyond)
            assert ours == pytest.approx(SVC(gamma="scale").fit(X, y)._gamma, rel=1e-6)
    X = np.full((20, 4), 3.0)
    assert PegasosClassifier(gamma="scale")._gamma(sp.csr_matrix(X)) == 1.0 == SVC(gamma="scale").fit(
        X, np.r_[np.zeros(10), np.ones(10)])._gamma


@pytest.mark.parametrize("seed", [2 ** 64, 10 ** 20])
def test_a_seed_beyond_64_bits_is_one_line_error(seed, tmp_path):
    """2^64 crashed the dual passes' generator with an OverflowError traceback."""
    X, y = _blobs()
    with pytest.raises(ParameterError, match="2\\^64"):
        PegasosClassifier(random_state=seed).fit(X, y)
    with pytest.raises(ParameterError, match="2\\^64"):
        pegasos.fit((X, y), seed=seed)
    for command in (["train", "-q"], ["cv"]):
        r = run_pegasos(*command, "--seed", seed, "tests/data/binary.svm", *([tmp_path / "m"] if command[0] == "train" else []))
        assert r.returncode == 2 and "Traceback" not in r.stderr and "2^64" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_parameters_have_scikit_learns_names_and_the_command_lines_defaults():
    """alpha (lambda, as SGDClassifier's alpha) and n_jobs, with pegasos train's defaults: the bias of the
    task (the classifier's own bias="auto" learned one where the command line has none; the regressor
    fits one as --loss eps-insensitive does), lambda 1e-4, tol, seed 1."""
    import os

    from pegasos.defaults import DEFAULT_LAMBDA, DEFAULT_SEED, DEFAULT_TOL
    from pegasos.options import TrainOptions

    cli = TrainOptions()
    for est, loss in ((PegasosClassifier(), "hinge"), (PegasosRegressor(), "eps-insensitive"),
                      (PegasosRanker(), "rank")):
        params = est.get_params()
        assert "lam" not in params and "n_threads" not in params
        assert params["alpha"] == DEFAULT_LAMBDA == cli.lam and params["n_jobs"] is None
        assert params["tol"] == DEFAULT_TOL == cli.tol and params["random_state"] == DEFAULT_SEED == cli.seed
        assert params.get("bias", "none") == TrainOptions(loss=loss).bias
        again = clone(est.set_params(alpha=1e-2, n_jobs=-1))
        assert again.get_params()["alpha"] == 1e-2 and again._threads() == (os.cpu_count() or 1)
    assert PegasosRegressor().get_params()["bias"] == "feature"
    assert PegasosClassifier(n_jobs=2)._threads() == 2 and PegasosClassifier()._threads() == 1
    X, y = _problem(classes=3)
    one, two = PegasosClassifier(n_jobs=1).fit(X, y), PegasosClassifier(n_jobs=2).fit(X, y)
    assert np.array_equal(one.coef_, two.coef_)          # the model does not depend on the threads
