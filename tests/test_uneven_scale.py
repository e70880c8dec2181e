"""Features of very different scales: the note (and the estimator's ConvergenceWarning) that
names the columns when the dual finish cannot certify the model.

One column 1000 times larger than the others dominates every ||x_i||^2, so neither Pegasos nor
the dual coordinate steps converge in reasonable time (tens of percent of certified gap after
the finish's whole bound of work); scaling that column gives a certified model at once.  The
run says which features they are and what to do, instead of only that the finish stopped
(svmguide1, unscaled, is the shared data set of this kind: see test_svmguide1_gets_the_note).
"""

import warnings

import numpy as np
import pytest

from pegasos import load_model
from pegasos.data import uneven_scale

from conftest import ok, run_pegasos


def generated(m=300, n=10, big=3, factor=1000.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((m, n)) * (rng.random((m, n)) < 0.5)
    w = rng.normal(size=n)
    z = X @ w + 0.3 * rng.normal(size=m)
    y = np.where(z > np.median(z), 1.0, -1.0)
    if big is not None:
        X[:, big] *= factor
    return X, y


def write(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write(f"{int(label):+d} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n")


def trained(tmp_path, name, X, y):
    """``pegasos train -l 1e-4`` on (X, y) written as NAME.svm: the finished run."""
    write(tmp_path / f"{name}.svm", X, y)
    r = run_pegasos("train", "-l", "1e-4", str(tmp_path / f"{name}.svm"), str(tmp_path / f"{name}.model"))
    ok(r)
    return r


def notes(r, start):
    return [line for line in r.stderr.splitlines() if line.startswith("pegasos: note: " + start)]


def assert_certified_quietly(r):
    assert "certified within" in r.stdout and "not certified" not in r.stdout and "note" not in r.stderr


def test_the_columns_of_most_different_scales_are_found():
    indices = np.array([0, 1, 2, 0, 2, 3], dtype=np.int32)
    data = np.array([0.5, -1.0, 0.25, 0.75, -400.0, 1.0])
    assert uneven_scale(indices, data, 5, 2) == (2, 400.0, 0, 0.75)
    assert uneven_scale(indices, data, 5, 2, ratio=1000.0) is None
    data[4] = -74.0
    assert uneven_scale(indices, data, 5, 2) is None                 # 74 / 0.75 < 100
    assert uneven_scale(indices[:1], data[:1], 5, 1) is None          # one column: nothing to compare
    assert uneven_scale(indices[:0], data[:0], 0, 0) is None


def test_rare_columns_do_not_count():
    """A column with a value in under 1% of the rows (a rare word of a text set) is left out."""
    rows = 1000
    indices = np.array([0] * rows + [1] * rows + [2] * 9, dtype=np.int32)
    data = np.concatenate([np.full(rows, 1.0), np.full(rows, 2.0), np.full(9, 1e-4)])
    assert uneven_scale(indices, data, 3, rows) is None
    data[-1] = 1e-4
    indices = np.concatenate([indices, [2]]).astype(np.int32)
    data = np.concatenate([data, [1e-4]])
    assert uneven_scale(indices, data, 3, rows) == (1, 2.0, 2, 1e-4)  # 10 rows of 1000: common


def test_train_names_the_feature_and_scaling_it_certifies(tmp_path):
    X, y = generated()
    r = trained(tmp_path, "uneven", X, y)
    assert "not certified within 0.2%" in r.stdout
    found = notes(r, "the features' scales differ")
    assert len(found) == 1 and "(feature 4 reaches |x| = " in found[0] and "scale each feature" in found[0]
    assert "--finish dual lets" not in r.stderr            # more passes would not help: not offered
    quiet = run_pegasos("train", "-q", "-l", "1e-4", str(tmp_path / "uneven.svm"), str(tmp_path / "m"))
    ok(quiet)                                              # -q (a cron job): no summary, but the notes
    assert quiet.stdout == "" and quiet.stderr == r.stderr
    X[:, 3] /= np.abs(X[:, 3]).max()
    assert_certified_quietly(trained(tmp_path, "scaled", X, y))


def test_the_estimator_warns_as_linear_svc_does():
    pytest.importorskip("sklearn")
    from sklearn.exceptions import ConvergenceWarning

    from pegasos.sklearn import PegasosClassifier

    X, y = generated()
    import scipy.sparse as sp

    with pytest.warns(ConvergenceWarning, match=r"certified relative gap: .*\(column 3 reaches \|x\| = .*MaxAbsScaler"):
        PegasosClassifier(alpha=1e-4).fit(sp.csr_matrix(X), y)
    X[:, 3] /= np.abs(X[:, 3]).max()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        PegasosClassifier(alpha=1e-4).fit(sp.csr_matrix(X), y)


def test_svmguide1_gets_the_note(tmp_path):
    """The LIBSVM guide's unscaled set: scales 0.75 to 581.  The dual needs about 850,000 passes to
    certify it (the default does, within its full bound of work); a thousand leave it far above tol, and
    the note names the columns."""
    from conftest import data_file

    path = data_file("svmguide1/svmguide1.txt")
    r = run_pegasos("train", "-l", "1e-4", "-T", "0", "--finish-passes", "1000", str(path), str(tmp_path / "m"))
    ok(r)
    assert "not certified within 0.2%" in r.stdout and "the 1000 dual passes asked for left" in r.stderr
    assert float(load_model(str(tmp_path / "m")).info["certified_gap"]) > 0.002
    assert "pegasos: note: the features' scales differ 772-fold (feature 2 reaches |x| = 581, feature 3 at most 0.752)" \
        in r.stderr


def large_features(m=400, n=30, seed=0):
    """Integer features 0..16 (as scikit-learn's digits), all of one scale: no column stands out."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 17, size=(m, n)).astype(np.float64)
    X[X < 6] = 0.0
    w = rng.normal(size=n)
    y = np.where((X - 8.0) @ w + 4.0 * rng.normal(size=m) > 0, 1.0, -1.0)
    return X, y


def test_features_that_are_all_large_get_their_own_note(tmp_path):
    """Columns of like scales raise no uneven-scale note; when all reach 16 the finish is slow at small
    lambda (the run stops above tol) and the note says the data are not scaled; divided by 16 the same
    lambda certifies, and nothing is said."""
    from pegasos.data import large_scale

    X, y = large_features()
    rows, cols = np.nonzero(X)
    assert uneven_scale(cols.astype(np.int32), X[rows, cols], X.shape[1], X.shape[0]) is None
    assert large_scale(cols.astype(np.int32), X[rows, cols], X.shape[1], X.shape[0]) == (0, 16.0)
    assert large_scale(cols.astype(np.int32), X[rows, cols] / 16, X.shape[1], X.shape[0]) is None
    r = trained(tmp_path, "large", X, y)
    assert "not certified within 0.2%" in r.stdout
    found = notes(r, "the features are not scaled")
    assert len(found) == 1 and "(feature 1 reaches |x| = 16;" in found[0] and "[-1, 1]" in found[0]
    assert "scales differ" not in r.stderr
    assert_certified_quietly(trained(tmp_path, "scaled", X / 16.0, y))


def test_the_estimator_says_the_features_are_not_scaled(monkeypatch):
    pytest.importorskip("sklearn")
    import scipy.sparse as sp
    from sklearn.exceptions import ConvergenceWarning

    from pegasos.sklearn import PegasosClassifier

    from pegasos import finish

    X, y = large_features()
    monkeypatch.setattr(finish, "FINISH_UPDATES", 1 << 20)     # passes too few to certify it
    with pytest.warns(ConvergenceWarning, match=r"not scaled \(column 0 reaches \|x\| = 16\).*MaxAbsScaler"):
        PegasosClassifier(alpha=1e-5).fit(sp.csr_matrix(X), y)
