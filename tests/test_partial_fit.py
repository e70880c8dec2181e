"""partial_fit of PegasosClassifier (linear; one-vs-rest for more than two classes) and PegasosRegressor.

The guarantee: passes of partial_fit over the same data equal one fit (of plain Pegasos) of as
many epochs with sampling="sequential", bit for bit (for K > 2 classes, fit's one-vs-rest); t_
counts every iteration; bad uses are one-line ParameterErrors.  Each one-vs-rest class is also
checked against the dense NumPy Pegasos of tests/reference.py.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from pegasos.errors import ParameterError
from pegasos.sklearn import PegasosClassifier, PegasosRegressor


def binary(m=80, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=m) > 0, "yes", "no")
    return X, y


def regression(m=80, d=12, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    return X, X @ rng.normal(size=d) + 0.1 * rng.normal(size=m)


SETTINGS = [dict(average_from=0.0, bias="feature"), dict(average_from=None), dict(average_from=0.0, batch_size=8),
            dict(average_from=None, batch_size=8, bias="unregularized", projection=True),
            dict(average_from=0.0, loss="log", alpha=1e-3)]


@pytest.mark.parametrize("settings", SETTINGS)
def test_two_passes_equal_two_sequential_epochs(settings):
    X, y = binary()
    fitted = PegasosClassifier(epochs=2, sampling="sequential", finish="none", **settings).fit(X, y)
    est = PegasosClassifier(**settings)
    est.partial_fit(X, y, classes=["no", "yes"])
    one_pass = est.coef_.copy()
    est.partial_fit(X, y)
    np.testing.assert_array_equal(est.coef_, fitted.coef_)
    np.testing.assert_array_equal(est.intercept_, fitted.intercept_)
    assert not np.array_equal(one_pass, est.coef_)
    k = settings.get("batch_size", 1)
    assert est.t_ == fitted.t_ == 2 * -(-80 // k)
    assert est.n_iter_ == 2
    np.testing.assert_array_equal(est.predict(X), fitted.predict(X))
    np.testing.assert_array_equal(est.decision_function(X), fitted.decision_function(X))


@pytest.mark.parametrize("settings", SETTINGS[:4])
def test_regressor_two_passes_equal_two_sequential_epochs(settings):
    X, y = regression()
    fitted = PegasosRegressor(epochs=2, sampling="sequential", **settings).fit(X, y)
    est = PegasosRegressor(**settings).partial_fit(X, y).partial_fit(X, y)
    np.testing.assert_array_equal(est.coef_, fitted.coef_)
    np.testing.assert_array_equal(est.intercept_, fitted.intercept_)
    assert est.t_ == fitted.t_


def test_passes_over_halves_equal_one_epoch_over_the_whole():
    """Consecutive batches of the rows, k = 1: one pass over each equals one epoch of fit."""
    X, y = binary(m=90)
    # a given t0: with step_offset="auto" the first pass calibrates it on its own batch (40 rows), fit on all 90
    fitted = PegasosClassifier(epochs=1, sampling="sequential", average_from=0.0, step_offset=1000.0).fit(X, y)
    est = PegasosClassifier(average_from=0.0, step_offset=1000.0)
    est.partial_fit(X[:40], y[:40], classes=["no", "yes"]).partial_fit(sp.csr_matrix(X[40:]), y[40:])
    np.testing.assert_array_equal(est.coef_, fitted.coef_)
    assert est.t_ == 90


def test_default_average_from_averages_all_iterates():
    X, y = binary()
    est = PegasosClassifier().partial_fit(X, y).partial_fit(X, y)
    fitted = PegasosClassifier(epochs=2, sampling="sequential", average_from=0.0, finish="none").fit(X, y)
    np.testing.assert_array_equal(est.coef_, fitted.coef_)


def test_partial_fit_after_fit_continues_it():
    X, y = binary()
    both = PegasosClassifier(epochs=3, sampling="sequential", average_from=0.0, finish="none").fit(X, y)
    est = PegasosClassifier(epochs=2, sampling="sequential", average_from=0.0, finish="none").fit(X, y).partial_fit(X, y)
    np.testing.assert_array_equal(est.coef_, both.coef_)
    assert est.t_ == both.t_ and est.n_iter_ == 3


def test_a_pass_with_one_class_needs_classes_on_the_first_call():
    X, y = binary()
    only_yes = y == "yes"
    with pytest.raises(ParameterError, match="at least two classes, got 1 .'yes'.; give classes="):
        PegasosClassifier().partial_fit(X[only_yes], y[only_yes])
    est = PegasosClassifier(average_from=0.0, bias="feature").partial_fit(X[only_yes], y[only_yes],
                                                                          classes=["yes", "no"])
    assert list(est.classes_) == ["no", "yes"]
    assert np.all(est.decision_function(X[only_yes]) > 0)       # "yes" is the positive class
    est.partial_fit(X[~only_yes], y[~only_yes])
    with pytest.raises(ParameterError, match="differ"):
        est.partial_fit(X, y, classes=["no", "maybe"])
    with pytest.raises(ParameterError, match="not one of the classes"):
        est.partial_fit(X[:3], np.array(["no", "maybe", "yes"]))


@pytest.mark.parametrize("kwargs, message", [
    (dict(kernel="rbf"), "partial_fit trains linear models: kernel must be None or 'linear'"),
    (dict(class_weight="balanced"), "balanced"),
])
def test_what_partial_fit_refuses(kwargs, message):
    X, y = binary()
    with pytest.raises(ParameterError, match=message):
        PegasosClassifier(**kwargs).partial_fit(X, y)


def test_crammer_singer_is_refused_for_more_than_two_classes_only():
    X, y = multiclass(K=3)
    with pytest.raises(ParameterError, match="one-vs-rest only .multiclass='ovr'., not multiclass='crammer-singer'"):
        PegasosClassifier(multiclass="crammer-singer").partial_fit(X, y)
    Xb, yb = binary()           # two classes: one binary problem, whatever multiclass says (as fit)
    a = PegasosClassifier(multiclass="crammer-singer").partial_fit(Xb, yb)
    np.testing.assert_array_equal(a.coef_, PegasosClassifier().partial_fit(Xb, yb).coef_)


def test_a_later_call_needs_the_same_features():
    X, y = binary()
    est = PegasosClassifier().partial_fit(X, y)
    with pytest.raises(ParameterError, match="features"):
        est.partial_fit(X[:, :5], y)


def test_batch_larger_than_the_pass_is_a_parameter_error():
    X, y = binary()
    with pytest.raises(ParameterError, match="batch size"):
        PegasosClassifier(batch_size=10).partial_fit(X[:4], y[:4], classes=["no", "yes"])


def test_fit_of_given_epochs_is_that_pegasos_run_unless_finish_dual():
    """A given length is that Pegasos run (pegasos train -T/--epochs), as finish="none" is; "dual" finishes
    it in the dual; a bad value is one ParameterError."""
    X, y = binary(m=300)
    finished = PegasosClassifier(epochs=2, finish="dual").fit(X, y)
    plain = PegasosClassifier(epochs=2).fit(X, y)
    assert finished.model_.info["finish"] == "dual" and "finish" not in plain.model_.info
    assert finished.t_ == plain.t_ == 600
    np.testing.assert_array_equal(plain.coef_, PegasosClassifier(epochs=2, finish="none").fit(X, y).coef_)
    with pytest.raises(ParameterError, match="finish: the finish must be one of dual, none, got 'yes'"):
        PegasosClassifier(finish="yes").fit(X, y)
    with pytest.raises(ParameterError, match="with a kernel it is the dual solver alone"):
        PegasosClassifier(finish="dual", kernel="rbf", epochs=2).fit(X, y)


def test_partial_fit_after_a_fit_replaced_by_the_dual_goes_on_from_its_weights():
    """w(alpha) is no Pegasos iterate, so there is no state to continue: the pass starts from the fitted
    weights, its schedule at t = T + m per finishing pass and its average counting the model as the mean
    of those iterates.  A fresh user's report: starting a new run from w = 0 took the objective from
    0.0285 to 0.0915; a schedule from t = 1 at the fitted weights also undoes the passes (checked below,
    which shows the test can fail)."""
    from pegasos.scoring import objective

    X, y = binary(m=300)
    est = PegasosClassifier(epochs=2, average_from=0.0, finish="dual").fit(X, y)
    info = est.model_.info
    assert info["finish_kept"] == "dual" and "solver_state_" not in vars(est)
    y_pm = np.where(y == "yes", 1.0, 0.0)          # the model's label values of "no" and "yes"
    before = objective(est.model_, X, y_pm)["objective"]
    n_iter = est.n_iter_
    est.partial_fit(X, y)
    assert est.t_ == 600 + int(info["finish_passes"]) * 300 + 300 and est.n_iter_ == n_iter + 1
    assert objective(est.model_, X, y_pm)["objective"] <= 1.002 * before
    fresh = PegasosClassifier(average_from=0.0).partial_fit(X, y, classes=["no", "yes"])
    assert objective(fresh.model_, X, y_pm)["objective"] > 1.05 * before


def test_a_start_with_a_count_averages_it_as_that_many_iterates():
    """fit_linear(start=(w, b, t)) with an average of every iterate: the output is (t w + T w_run) / (t + T),
    w_run the mean of the run's own T iterates (the same schedule from t, started by hand)."""
    from pegasos.examples import as_examples
    from pegasos.linear import fit_linear, start_state
    from pegasos.options import TrainOptions

    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 6))
    y = np.where(X @ rng.normal(size=6) > 0, 1.0, -1.0)
    w0 = rng.normal(size=6)
    options = TrainOptions(lam=1e-2, iterations=240, sampling="sequential", average=True, step_offset=3.0,
                           preset="paper").validate()
    ex = as_examples((X, y))
    counted = fit_linear(ex, options, start=(w0, 0.0, 500))
    plan = options.plan(120)
    state = start_state(w0, 0.0, 6, options, plan, 1.0 / options.lam)
    state.update(t=500, avg_start=501)
    own = fit_linear(ex, options, init=state)
    np.testing.assert_allclose(counted.w, (500 * w0 + 240 * own.w) / 740, rtol=1e-12, atol=1e-13)
    assert counted.solver_state["t"] == own.solver_state["t"] == 740


# ------------------------------------------------------- more than two classes: one-vs-rest --

def multiclass(m=90, d=12, K=3, seed=2):
    """Dense X and string labels of K classes with a linear signal."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    scores = X @ rng.normal(size=(d, K)) + 0.3 * rng.normal(size=(m, K))
    return X, np.array(["ant", "bee", "cat", "dog", "eel"])[np.argmax(scores, axis=1)]


OVR_SETTINGS = [dict(bias="feature"), dict(average_from=None),
                dict(batch_size=8, bias="unregularized", projection=True, class_weight={"bee": 2.5, "cat": 0.5}),
                dict(loss="log", alpha=1e-3), dict(loss="squared-hinge", sample_weight=True)]


@pytest.mark.parametrize("K", [3, 4])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("settings", OVR_SETTINGS)
def test_two_passes_equal_fit_one_vs_rest(K, sparse, settings):
    """Each class's run is the one of fit's one-vs-rest (labels, class and sample weights, the t0
    calibrated on the largest class, the bias), so two passes are fit(epochs=2) bit for bit."""
    X, y = multiclass(K=K)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    settings = dict(settings)
    sw = np.linspace(0.5, 2.0, y.size) if settings.pop("sample_weight", False) else None
    fitted = PegasosClassifier(epochs=2, sampling="sequential", finish="none", **{"average_from": 0.0, **settings})
    fitted.fit(X, y, sample_weight=sw)
    est = PegasosClassifier(**settings).partial_fit(X, y, sample_weight=sw)
    one_pass = est.coef_.copy()
    est.partial_fit(X, y, sample_weight=sw)
    assert est.coef_.shape == (K, 12) and est.intercept_.shape == (K,)
    np.testing.assert_array_equal(est.coef_, fitted.coef_)
    np.testing.assert_array_equal(est.intercept_, fitted.intercept_)
    assert not np.array_equal(one_pass, est.coef_)
    assert est.t_ == fitted.t_ == 2 * -(-90 // settings.get("batch_size", 1)) and est.n_iter_ == 2
    f = est.decision_function(X)
    assert f.shape == (90, K)
    np.testing.assert_array_equal(f, fitted.decision_function(X))
    np.testing.assert_array_equal(est.predict(X), fitted.predict(X))
    assert list(est.classes_) == sorted(set(y))
    assert est.model_.info["step_offset"] == fitted.model_.info["step_offset"]
    assert est.model_.info.get("class_weights") == fitted.model_.info.get("class_weights")


@pytest.mark.parametrize("K", [2, 3])
def test_each_class_is_the_reference_pegasos_of_it_against_the_rest(K):
    """Independent of fit: row c of coef_ (for two classes the one row, of classes_[1]) is the dense
    NumPy Pegasos (tests/reference.py) of class c (+1) against the rest (-1) over the rows of both
    passes in order, weighted by the class weights, averaged over every iterate.  The first pass lacks
    the class that carries a class weight (the binary path refused that: 'class weight given for label
    1, which is not in the data')."""
    import reference as ref

    X, y = multiclass(m=60, d=5, K=K, seed=4)
    weighted = y == "bee"
    first, second = np.flatnonzero(~weighted)[:30], np.arange(60)
    lam, t0 = 1e-2, 20.0
    est = PegasosClassifier(alpha=lam, step_offset=t0, average_from=0.0, class_weight={"bee": 3.0})
    est.partial_fit(X[first], y[first], classes=np.unique(y)).partial_fit(X[second], y[second])
    order = np.concatenate([first, second])
    batches = [np.array([i]) for i in range(order.size)]
    rows = [1] if K == 2 else range(K)
    assert est.coef_.shape == (len(rows), 5)
    for row, c in enumerate(rows):
        y_pm = np.where(y[order] == est.classes_[c], 1.0, -1.0)
        w, b = ref.pegasos(X[order], y_pm, lam, batches, average_from_t=1, t0=t0,
                           sample_weight=np.where(weighted[order], 3.0, 1.0))
        np.testing.assert_allclose(est.coef_[row], w, rtol=1e-10, atol=1e-12)
    assert est.model_.info["class_weights"] == "1:3.0"     # the header names every weight, as fit's


def test_classes_missing_from_a_batch_and_bad_labels():
    X, y = multiclass(K=4)
    est = PegasosClassifier(bias="feature")
    only = np.isin(y, ["ant", "bee"])
    with pytest.raises(ParameterError, match="at least two classes|classes"):
        PegasosClassifier().partial_fit(X[y == "ant"], y[y == "ant"])
    est.partial_fit(X[only], y[only], classes=["dog", "cat", "bee", "ant"])
    assert list(est.classes_) == ["ant", "bee", "cat", "dog"]
    assert est.decision_function(X).shape == (90, 4) and est.coef_.shape == (4, 12)
    assert set(est.predict(X[only])) <= {"ant", "bee"}      # the two classes seen so far
    est.partial_fit(X[~only], y[~only])                      # a later batch without those two
    est.partial_fit(X, y, classes=["ant", "bee", "cat", "dog"])
    assert est.n_iter_ == 3 and est.t_ == 180
    with pytest.raises(ParameterError, match=r"label 'eel' \(example 2\) is not one of the classes"):
        est.partial_fit(X[:3], np.array(["ant", "eel", "cat"]))
    with pytest.raises(ParameterError, match="differ from those of the first call"):
        est.partial_fit(X, y, classes=["ant", "bee", "cat"])
    with pytest.raises(ParameterError, match="differ from those of the first call"):
        est.partial_fit(X, y, classes=["ant", "bee", "cat", "dog", "eel"])
    assert est.n_iter_ == 3                                  # the refused calls changed nothing


def test_a_first_batch_of_one_class_of_several_calibrates_and_trains():
    """The step offset is calibrated on the largest class against the rest: a first batch holding one class
    of three made that problem all +1, and the calibration refused it with a message about binary training
    (the binary case, whose labels are given, took such a batch)."""
    X, y = multiclass(K=3)
    for first in ("ant", "bee"):
        est = PegasosClassifier()
        one = y == first
        est.partial_fit(X[one], y[one], classes=["ant", "bee", "cat"])
        assert est.decision_function(X).shape == (90, 3) and np.all(np.isfinite(est.coef_))
        assert np.mean(est.predict(X[one]) == first) > 0.5      # its own class scores above the rest
        est.partial_fit(X, y)
        assert est.n_iter_ == 2 and est.score(X, y) > 0.5


def test_pickled_mid_way_goes_on_as_the_original():
    X, y = multiclass(K=3)
    est = PegasosClassifier(bias="feature").partial_fit(X, y)
    copy = pickle.loads(pickle.dumps(est))
    est.partial_fit(X, y)
    copy.partial_fit(X, y)
    np.testing.assert_array_equal(copy.coef_, est.coef_)
    np.testing.assert_array_equal(copy.intercept_, est.intercept_)
    assert copy.t_ == est.t_ == 180


def test_a_multiclass_model_is_saved_and_loaded(tmp_path):
    X, y = multiclass(K=3)
    est = PegasosClassifier(class_weight={"cat": 2.0}).partial_fit(X, y).partial_fit(X, y)
    est.save(tmp_path / "m.model")
    back = PegasosClassifier.load(tmp_path / "m.model")
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.get_params()["class_weight"] == {"cat": 2.0} and back.t_ == 180


def test_partial_fit_after_a_multiclass_fit_goes_on_from_its_weights():
    """fit's one-vs-rest keeps no solver state: a pass goes on from each class's fitted weights with
    the schedule at t = T plus m per finishing pass, as the binary path does after the dual finish, so
    a pass over the same data leaves a near-optimal model near where it is; a fresh run does not."""
    from pegasos.scoring import objective

    X, y = multiclass(m=300, K=3)
    values = np.unique(y, return_inverse=True)[1].astype(float)     # the model's label values 0, 1, 2
    est = PegasosClassifier(epochs=2, average_from=0.0, finish="dual").fit(X, y)
    info = est.model_.info
    assert info["finish_kept"] != "pegasos" and "solver_state_" not in vars(est)
    before = objective(est.model_, X, values)["objective"]
    est.partial_fit(X, y)
    passes = max(int(p) for p in info["finish_passes"].split(","))
    assert est.t_ == 600 + passes * 300 + 300 and est.coef_.shape == (3, 12)
    assert objective(est.model_, X, values)["objective"] <= 1.0001 * before
    fresh = PegasosClassifier(average_from=0.0).partial_fit(X, y)
    assert objective(fresh.model_, X, values)["objective"] > 1.02 * before
    plain = PegasosClassifier(epochs=2, sampling="sequential", average_from=0.0, finish="none").fit(X, y)
    plain.partial_fit(X, y)
    assert plain.t_ == 900 and plain.n_iter_ == 3


def test_the_schedule_after_a_finish_counts_the_most_passes_when_any_class_took_w_alpha():
    """One count for every class: T plus m per pass of the class that ran the most, where some class kept
    w(alpha) ('2 of 3 classes dual' counted T alone before); T alone where every class kept Pegasos'."""
    from types import SimpleNamespace

    from pegasos.sklearn import _schedule_after_fit

    info = dict(iterations="600", finish_passes="4,9,2", train_examples="300")
    for kept, t in (("2 of 3 classes dual", 600 + 9 * 300), ("dual", 600 + 9 * 300), ("pegasos", 600)):
        assert _schedule_after_fit(SimpleNamespace(info=dict(info, finish_kept=kept))) == t
