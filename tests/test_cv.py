"""Cross-validation: the folds (stratified, whole queries, reproducible), every fold's metrics
against training and evaluating that fold by hand, processes, and `pegasos cv` / `train -v`."""

import json

import numpy as np
import pytest

import pegasos
from pegasos.errors import ParameterError
from pegasos.options import TrainOptions
from pegasos.selection import cross_validate, fold_assignment

import small_data
from conftest import error_line, ok, run_pegasos

OPTS = TrainOptions(lam=1e-2, epochs=5)


def test_folds_are_stratified_balanced_and_reproducible():
    y = np.r_[np.ones(103), -np.ones(47), 2 * np.ones(11)]
    a = fold_assignment(y, 5, seed=3, task="multiclass")
    assert np.array_equal(a, fold_assignment(y, 5, seed=3, task="multiclass"))
    assert not np.array_equal(a, fold_assignment(y, 5, seed=4, task="multiclass"))
    sizes = np.bincount(a, minlength=5)
    assert sizes.max() - sizes.min() <= 1
    for c in np.unique(y):
        counts = np.bincount(a[y == c], minlength=5)
        assert counts.max() - counts.min() <= 1, (c, counts)
    # the order inside a class is random: not the first examples in fold 0
    assert len(set(a[:5].tolist())) > 1


def test_regression_folds_are_a_shuffled_partition():
    y = np.linspace(0, 1, 53)
    a = fold_assignment(y, 4, seed=1, task="regression")
    assert sorted(np.bincount(a).tolist()) == [13, 13, 13, 14]
    assert not np.array_equal(a, np.arange(53) % 4)


def test_ranking_folds_never_split_a_query():
    _, y, qid = small_data.ranking(queries=23, per_query=5)
    qid = qid.copy()
    qid[:7] = 100                       # one larger query
    a = fold_assignment(y, 5, seed=2, task="ranking", qid=qid)
    for q in np.unique(qid):
        assert np.unique(a[qid == q]).size == 1
    assert set(a.tolist()) == set(range(5))


@pytest.mark.parametrize("y, task, fragment", [
    (np.r_[np.ones(10), -1.0], "binary", "class -1 has a single example"),
    (np.ones(3), "regression", "5 folds need at least 5 examples"),
])
def test_bad_folds_are_named(y, task, fragment):
    with pytest.raises(ParameterError, match=fragment):
        fold_assignment(y, 5, seed=1, task=task)
    with pytest.raises(ParameterError, match="folds must be an integer >= 2"):
        fold_assignment(np.r_[np.ones(10), -np.ones(10)], 1)


def _by_hand(X, y, options, folds, seed, task, qid=None):
    """Each fold trained with pegasos.fit on the other folds' rows and evaluated on its own."""
    a = fold_assignment(y, folds, seed, task, qid)
    out = []
    for i in range(folds):
        tr, te = np.flatnonzero(a != i), np.flatnonzero(a == i)
        data = (X[tr], y[tr]) if qid is None else (X[tr], y[tr], qid[tr])
        model = pegasos.fit(data, options)
        out.append(pegasos.evaluate(model, X[te], y[te], **({} if qid is None else {"qid": qid[te]})))
    return out


@pytest.mark.parametrize("kind, options, names", [
    ("binary", OPTS, ("accuracy", "f1", "roc_auc")),
    ("binary", TrainOptions(lam=1e-2), ("accuracy", "f1", "roc_auc")),         # calibrated t0, doubling rule
    ("multiclass", OPTS, ("accuracy", "macro_f1")),
    ("regression", OPTS.replace(loss="eps-insensitive", epsilon=0.01), ("mse", "r2")),
    ("ranking", TrainOptions(lam=1e-2, epochs=5, loss="rank"), ("ndcg_at_10",)),
])
def test_each_fold_equals_training_that_fold_by_hand(kind, options, names):
    qid = None
    if kind == "ranking":
        X, y, qid = small_data.ranking()
        data = (X, y, qid)
    else:
        X, y = getattr(small_data, kind)()
        data = (X, y)
    r = cross_validate(data, options, folds=4, seed=7)
    assert r["task"] == kind and r["metrics"] == list(names) and r["folds"] == 4 and r["examples"] == X.shape[0]
    hand = _by_hand(X, y, options, 4, 7, kind, qid)
    for fold, expected in zip(r["per_fold"], hand):
        for name in names:
            assert fold[name] == expected[name], (name, fold[name], expected[name])
        assert fold["test_examples"] == expected["examples"]
    for name in names:
        values = [f[name] for f in r["per_fold"]]
        assert r["mean"][name] == pytest.approx(np.mean(values), rel=1e-12)
        assert r["sd"][name] == pytest.approx(np.std(values, ddof=1), rel=1e-12, abs=1e-15)
    if kind == "binary":
        assert 0.6 < r["mean"]["accuracy"] <= 1.0


def test_processes_give_the_same_numbers():
    X, y = small_data.binary(m=300)
    one = cross_validate((X, y), OPTS, folds=3, seed=1, jobs=1)
    two = cross_validate((X, y), OPTS, folds=3, seed=1, jobs=2)
    strip = lambda r: [{k: v for k, v in f.items() if k != "seconds"} for f in r["per_fold"]]  # noqa: E731
    assert strip(one) == strip(two) and one["mean"] == two["mean"]


def test_a_shuffle_buffer_is_refused():
    X, y = small_data.binary(m=100)
    with pytest.raises(ParameterError, match="shuffle_buffer"):
        cross_validate((X, y), OPTS.replace(shuffle_buffer=10))


def test_cli_cv_json_matches_the_python_api(tmp_path):
    X, y = small_data.binary(m=300)
    path = small_data.write_svm(tmp_path / "d.svm", X, y)
    r = json.loads(ok(run_pegasos("cv", path, "-v", "3", "-l", "0.01", "--epochs", "5", "--seed", "4", "--json")))
    expected = cross_validate(pegasos.read_svmlight(str(path)), OPTS.replace(seed=4), folds=3)
    assert [f["accuracy"] for f in r["per_fold"]] == [f["accuracy"] for f in expected["per_fold"]]
    assert r["mean"] == expected["mean"] and r["options"]["lam"] == 0.01
    two = json.loads(ok(run_pegasos("cv", path, "-v", "3", "-l", "0.01", "--epochs", "5", "--seed", "4", "--json",
                                    "--jobs", "2")))
    assert two["mean"] == r["mean"]


def test_cli_cv_text(tmp_path):
    X, y = small_data.binary(m=300)
    path = small_data.write_svm(tmp_path / "d.svm", X, y)
    out = ok(run_pegasos("cv", path, "-v", "3", "-l", "0.01", "--epochs", "5"))
    assert "3-fold cross-validation" in out and "stratified by class" in out and "mean ± sd: accuracy" in out
    # cross-validation is pegasos cv only: train -v K names it (tests/test_help.py has the other spellings)
    error_line(run_pegasos("train", "-v", "3", path, tmp_path / "m"), "pegasos cv -v 3 DATA", status=2)
    assert not (tmp_path / "m").exists()
    r = run_pegasos("cv", path, "-v", "1")
    assert r.returncode == 2
    error_line(run_pegasos("cv", path, "--stream"), "--stream", status=2)


def test_cli_cv_text_states_the_lambda_it_ran(tmp_path):
    """cv -c C trains every fold at lambda = 1/(C m), m the examples of DATA: the text says that lambda and
    the C it came from (before, neither), as --json's options do; without -c the lambda given or the
    default."""
    X, y = small_data.binary(m=300)
    path = small_data.write_svm(tmp_path / "d.svm", X, y)
    out = ok(run_pegasos("cv", path, "-v", "3", "-c", "2", "--epochs", "2"))
    assert out.splitlines()[0].endswith(f" | lambda={1 / (2 * 300)!r} (-c 2: 1/(C m))"), out
    r = json.loads(ok(run_pegasos("cv", path, "-v", "3", "-c", "2", "--epochs", "2", "--json")))
    assert r["options"]["lam"] == 1 / (2 * 300)
    out = ok(run_pegasos("cv", path, "-v", "3", "--epochs", "2"))
    assert out.splitlines()[0].endswith(f" | lambda={pegasos.TrainOptions().lam!r}"), out


def test_the_mean_line_says_how_many_folds_a_metric_is_defined_on(tmp_path):
    """F1 and AUC are undefined on a fold without positives; the mean silently used the other folds."""
    data = tmp_path / "tiny.svm"
    data.write_text("1 1:1\n-1 1:-1\n1 1:0.8\n-1 1:-0.7\n1 1:0.9\n-1 1:-0.9\n1 1:0.5\n-1 2:1\n")
    out = ok(run_pegasos("cv", "-v", "5", "--epochs", "5", data))
    mean = out.strip().splitlines()[-1]
    folds = [line.split() for line in out.strip().splitlines()[2:-1]]
    n_f1 = sum(1 for f in folds if f[4] != "n/a")
    n_auc = sum(1 for f in folds if f[5] != "n/a")
    assert n_f1 < 5 and n_auc < 5
    assert "f1 " in mean and f"({n_f1} of 5 folds)" in mean and f"({n_auc} of 5 folds)" in mean
    assert "accuracy 1.0000 ± 0.0000 |" in mean            # defined on every fold: no count


def _uneven(path, m=200, seed=0):
    """Two informative columns, one of them 1000 times larger than the rest: the dual finish stalls."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 4))
    X[:, 0] *= 1000.0
    y = np.where(X[:, 1] + 0.3 * rng.normal(size=m) > 0, 1, -1)
    path.write_text("".join(f"{y[i]} " + " ".join(f"{j + 1}:{X[i, j]:.6g}" for j in range(4)) + "\n"
                            for i in range(m)))
    return path


def test_cv_names_the_folds_whose_models_were_not_certified(tmp_path):
    """cv said nothing when the folds' models stopped far from their optimum; it now names them, with the
    gap each run proved (the per-fold certified_gap, also in --json), and says nothing when all are certified."""
    data = _uneven(tmp_path / "uneven.svm")
    r = run_pegasos("cv", "-v", "2", "-l", "1e-5", data)
    out = ok(r)
    assert "mean ± sd" in out
    notes = [line for line in r.stderr.splitlines() if line.startswith("pegasos: note:")]
    assert len(notes) == 1, r.stderr
    as_json = run_pegasos("cv", "-v", "2", "-l", "1e-5", "--json", data)
    folds = json.loads(ok(as_json))["per_fold"]
    assert as_json.stderr.strip() == notes[0]                      # the note on stderr with --json too
    gaps = [f["certified_gap"] for f in folds]
    assert all(g > 0.002 for g in gaps)
    assert "not certified within --tol 0.2%" in notes[0] and "2 of 2 folds" in notes[0]
    assert f"fold 1 ({100 * gaps[0]:.3g}%), 2 ({100 * gaps[1]:.3g}%)" in notes[0]

    X, y = small_data.binary(m=300)
    path = small_data.write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("cv", path, "-v", "3", "-l", "0.01")
    ok(r)
    assert "note" not in r.stderr
    folds = cross_validate(pegasos.read_svmlight(str(path)), TrainOptions(lam=0.01), folds=3)["per_fold"]
    assert all(0 <= f["certified_gap"] <= 0.002 for f in folds)
    # a run that makes no certificate has none
    plain = cross_validate(pegasos.read_svmlight(str(path)), TrainOptions(lam=0.01, finish="none", epochs=2), folds=3)
    assert all(f["certified_gap"] is None for f in plain["per_fold"])
