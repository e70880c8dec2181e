"""The kernel dual solver (the default of ``--kernel`` without T or epochs): its optimum against an
independent dense solution of the same dual, its certificate, determinism and the command line."""

from pathlib import Path

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

import pegasos
from pegasos.errors import ParameterError
from pegasos.modelfile import load_model
from pegasos.options import TrainOptions

from conftest import data_file, ok, run_pegasos
from kernel_reference import gram

HERE = Path(__file__).parent
BINARY = HERE / "data" / "binary.svm"


def dense_reference(X, y, lam, kernel, gamma, coef0=0.0, degree=3):
    """min_w lambda/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i f(x_i)) through its dual, solved densely by
    L-BFGS-B with bounds: (f*, alpha), f* the primal value of w(alpha) (Eq. (1), no bias)."""
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    m = Xd.shape[0]
    K = gram(Xd, Xd, kernel, gamma=gamma, coef0=coef0, degree=degree)
    Q = (y[:, None] * y[None, :]) * K
    C = 1.0 / (lam * m)

    def neg_dual(a):
        qa = Q @ a
        return 0.5 * a @ qa - a.sum(), qa - 1.0

    res = scipy.optimize.minimize(neg_dual, np.zeros(m), jac=True, method="L-BFGS-B", bounds=[(0.0, C)] * m,
                                  options={"maxiter": 100000, "maxfun": 200000, "ftol": 1e-15, "gtol": 1e-12})
    a = res.x
    f = K @ (a * y)
    primal = 0.5 * lam * (a * y) @ f + np.mean(np.maximum(0.0, 1.0 - y * f))
    dual = lam * (a.sum() - 0.5 * a @ (Q @ a))
    return primal, dual, a


def model_primal(model, X, y):
    """Eq. (1) of a kernel model, from its support vectors and coefficients, densely."""
    Xd = X.toarray()
    S = model.support_matrix().toarray()
    K = gram(S, Xd, model.kernel, gamma=model.gamma, coef0=model.coef0, degree=model.degree)
    f = model.coef @ K
    KS = gram(S, S, model.kernel, gamma=model.gamma, coef0=model.coef0, degree=model.degree)
    return 0.5 * model.lam * model.coef @ KS @ model.coef + np.mean(np.maximum(0.0, 1.0 - y * f))


@pytest.fixture(scope="module")
def small():
    X, y = pegasos.load_svmlight(str(BINARY))
    idx = np.arange(0, X.shape[0], 3)[:120]           # 120 rows of both classes
    return X[idx], np.where(y[idx] > 0, 1.0, -1.0)


@pytest.mark.parametrize("lam,kernel,kw", [(1e-2, "rbf", dict(gamma=0.5)), (1e-4, "rbf", dict(gamma=2.0)),
                                           (1e-3, "poly", dict(gamma=0.5, degree=2, coef0=1.0)),
                                           (1e-2, "poly", dict(gamma=1.0, degree=1, coef0=0.0))])
def test_optimum_against_dense_reference(small, lam, kernel, kw):
    X, y = small
    f_ref, d_ref, _ = dense_reference(X, y, lam, kernel, kw.get("gamma", 1.0), kw.get("coef0", 0.0),
                                      kw.get("degree", 3))
    assert (f_ref - d_ref) / f_ref < 1e-6              # the reference is at the optimum
    model, state = pegasos.train_kernel(X, y, kernel=kernel, lam=lam, preset="auto", return_state=True, **kw)
    assert "iterations" not in model.info and model.info["finish"] == "dual"
    gap = float(model.info["certified_gap"])
    assert gap <= 0.002
    p_scaled, d_scaled = state.values()
    P, D = lam * p_scaled, lam * d_scaled
    # the primal and dual values of the solver are the model's, computed independently
    assert model_primal(model, X, y) == pytest.approx(P, rel=1e-9)
    assert pegasos.objective(model, X, y)["objective"] == pytest.approx(P, rel=1e-9)
    # weak duality around the reference optimum, and the certificate holds
    assert D <= f_ref * (1 + 1e-9)
    assert f_ref <= P * (1 + 1e-9)
    assert (P - f_ref) / P <= gap * (1 + 1e-9) + 1e-12
    assert (P - D) / P == pytest.approx(gap, rel=1e-9)


def test_tight_tolerance_reaches_the_reference(small):
    X, y = small
    f_ref, _, a_ref = dense_reference(X, y, 1e-3, "rbf", 0.5)
    model, state = pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, lam=1e-3, preset="auto", tol=1e-9,
                                        return_state=True)
    assert float(model.info["certified_gap"]) <= 1e-9
    assert pegasos.objective(model, X, y)["objective"] == pytest.approx(f_ref, rel=1e-6)   # the reference gap
    C = 1.0 / (1e-3 * X.shape[0])
    assert np.max(np.abs(state.alphas() - a_ref)) < 1e-3 * C
    assert np.all((state.alphas() >= 0) & (state.alphas() <= C))


def test_cache_size_does_not_change_the_model(small):
    X, y = small
    texts = {pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, lam=1e-4, preset="auto", cache_mb=mb).to_text()
             for mb in (0, 0.01, 100)}
    assert len(texts) == 1


def test_heart_scale_certified_and_below_ten_epochs():
    X, y = pegasos.load_svmlight(str(data_file("heart_scale/heart_scale")))
    model = pegasos.fit((X, y), kernel="rbf")
    assert float(model.info["certified_gap"]) <= 0.002
    pegasos_model = pegasos.fit((X, y), kernel="rbf", epochs=10)
    assert pegasos.objective(model, X, y)["objective"] < pegasos.objective(pegasos_model, X, y)["objective"]


# ------------------------------------------------------------------ command line --

def header(path):
    out = {}
    for line in Path(path).read_text().splitlines()[1:]:
        key, _, value = line.partition(" ")
        if key == "support_vectors":
            break
        out[key] = value
    return out


def test_cli_default_is_certified_and_deterministic(tmp_path):
    a, b = tmp_path / "a.model", tmp_path / "b.model"
    for path in (a, b):
        r = run_pegasos("train", "--kernel", "rbf", "--gamma", "0.5", "-q", str(BINARY), str(path))
        ok(r)
    assert a.read_bytes() == b.read_bytes()
    h = header(a)
    assert "iterations" not in h and h["finish"] == "dual" and int(h["dual_updates"]) > 0
    assert float(h["certified_gap"]) <= 0.002
    assert h["stopping"].startswith("tol=0.002 ") and " certified" in h["stopping"]
    # the header's settings retrain it: explicitly, and through TrainOptions.from_header
    c = tmp_path / "c.model"
    ok(run_pegasos("train", "--kernel", "rbf", "--gamma", "0.5", "-T", "0", "--finish", "dual", "-q", str(BINARY),
                   str(c)))
    assert c.read_bytes() == a.read_bytes()
    model = load_model(str(a))
    options = TrainOptions.from_header(model.info).replace(kernel=model.kernel, gamma=model.gamma)
    again = pegasos.fit(str(BINARY), options)
    again.info["train_file"] = model.info["train_file"]
    assert again.to_text() == a.read_text()
    # the objective the file gives is the certified one
    r = run_pegasos("objective", "--json", str(BINARY), str(a))
    ok(r)


def test_cli_summary_names_the_solver(tmp_path):
    r = run_pegasos("train", "--kernel", "rbf", str(BINARY), str(tmp_path / "m"))
    ok(r)
    assert "dual solver:" in r.stderr + r.stdout and "certified within" in r.stderr + r.stdout


@pytest.mark.parametrize("args", [["-T", "100"], ["--epochs", "2"], ["--paper"], ["--budget", "30"],
                                  ["-k", "4"], ["--projection"], ["--finish", "none"]])
def test_pegasos_settings_keep_fig3(tmp_path, args):
    path = tmp_path / "m"
    ok(run_pegasos("train", "--kernel", "rbf", "-q", *args, str(BINARY), str(path)))
    h = header(path)
    assert "dual_updates" not in h and h["iterations"] != "0"


def test_sigmoid_keeps_fig3(tmp_path):
    path = tmp_path / "m"
    ok(run_pegasos("train", "--kernel", "sigmoid", "-q", str(BINARY), str(path)))
    assert "dual_updates" not in header(path)


@pytest.mark.parametrize("args,fragment", [
    (["--kernel", "sigmoid", "-T", "0", "--finish", "dual"], "positive semi-definite"),
    (["--kernel", "poly", "--coef0", "-1", "-T", "0", "--finish", "dual"], "positive semi-definite"),
    (["--kernel", "rbf", "-T", "10", "--finish", "dual"], "dual solver alone"),
    (["--kernel", "rbf", "-T", "0", "--finish-passes", "3"], "dual solver alone"),
    (["--kernel", "rbf", "--budget", "5", "--finish", "dual"], "dual solver alone"),
])
def test_refused_one_line(tmp_path, args, fragment):
    r = run_pegasos("train", *args, str(BINARY), str(tmp_path / "m"))
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert fragment in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_api_refuses_a_sigmoid_dual():
    X, y = pegasos.load_svmlight(str(BINARY))
    with pytest.raises(ParameterError, match="positive semi-definite"):
        pegasos.train_kernel(X, y, kernel="sigmoid", iterations=0, finish="dual")


def test_update_bound_is_said_not_certified(tmp_path):
    """x with both labels at a tiny lambda: alpha creeps up to C = 1/(lambda m) by 1 an update, so the
    bound of updates ends the run; the header and a note say the model is not certified."""
    data = tmp_path / "d.svm"
    data.write_text("+1 1:1\n-1 1:1\n+1\n-1\n")
    path = tmp_path / "m"
    r = run_pegasos("train", "--kernel", "rbf", "-l", "1e-9", str(data), str(path))
    ok(r)
    h = header(path)
    from pegasos.kernel import dual_max_updates

    assert int(h["dual_updates"]) == dual_max_updates(4)
    assert "not certified" in h["stopping"] and float(h["certified_gap"]) > 0.002
    assert "not certified" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------- the kernel gap --

def test_kernel_gap_from_the_coefficients(small):
    from pegasos.certificate import duality_gap

    X, y = small
    f_ref, _, _ = dense_reference(X, y, 1e-3, "rbf", 0.5)
    model = pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, lam=1e-3, preset="auto")
    g = duality_gap(model, X, y)
    assert g["passes"] == 0 and g["dual"] <= f_ref * (1 + 1e-9) <= g["primal"] * (1 + 2e-9)
    assert g["rel_gap"] <= float(model.info["certified_gap"]) + 1e-9
    # a Fig. 3 model (support vectors are training examples too): a valid, looser bound
    fig3 = pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, lam=1e-3, epochs=3, sampling="permutation")
    g3 = duality_gap(fig3, X, y)
    assert g3["dual"] <= f_ref * (1 + 1e-9) and g3["primal"] >= f_ref * (1 - 1e-9)
    # the support vectors must be examples of the data, with their labels
    with pytest.raises(ParameterError, match="support vectors among DATA's examples"):
        duality_gap(model, X, -y)


def test_kernel_gap_command(tmp_path):
    path = tmp_path / "m"
    ok(run_pegasos("train", "--kernel", "rbf", "-q", str(BINARY), str(path)))
    r = run_pegasos("objective", "--gap", "-q", str(BINARY), str(path))
    ok(r)
    assert "from the model's coefficients" in r.stdout
    rel = float(r.stdout.split("relative gap")[1].split()[0])
    assert rel <= float(header(path)["certified_gap"]) + 1e-9
    sig = tmp_path / "s"
    ok(run_pegasos("train", "--kernel", "sigmoid", "-q", "-T", "50", str(BINARY), str(sig)))
    r = run_pegasos("objective", "--gap", str(BINARY), str(sig))
    assert r.returncode != 0 and "Traceback" not in r.stderr and "positive semi-definite" in r.stderr


def test_estimator_warns_when_the_kernel_dual_is_not_certified():
    from sklearn.exceptions import ConvergenceWarning

    from pegasos.sklearn import PegasosClassifier

    X = sp.csr_matrix(np.array([[1.0], [1.0], [0.0], [0.0]]))
    y = np.array([1, -1, 1, -1])
    with pytest.warns(ConvergenceWarning, match="by the kernel dual solver"):
        clf = PegasosClassifier(kernel="rbf", alpha=1e-9).fit(X, y)
    assert "not certified" in clf.model_.info["stopping"]


def test_never_worse_than_alpha_zero_on_unscaled_features(monkeypatch, tmp_path):
    """A fresh user's report: poly on features x300 left an uncertified alpha of objective 20, where w = 0 has
    1; alpha = 0 is now kept there, its header and note say so, and D still bounds the optimum."""
    from pegasos import kernel

    monkeypatch.setattr(kernel, "DUAL_MAX_WORK", 1 << 22)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 3)) * 300
    y = np.where(np.sin(X[:, 0] / 100) + X[:, 1] / 300 > 0, 1.0, -1.0)
    model = pegasos.fit((sp.csr_matrix(X), y), kernel="poly", coef0=1.0, lam=1e-2)
    f = pegasos.objective(model, sp.csr_matrix(X), y)["objective"]
    assert f <= 1.0
    assert model.n_support == 0 and "alpha = 0 kept" in model.info["stopping"]
    gap = float(model.info["certified_gap"])
    assert 0.0 <= gap <= 1.0


def test_a_solver_that_cannot_move_says_so_without_claiming_a_certificate(tmp_path):
    """Poly values overflow to inf: no update raises the dual; the header said 'certified' beside a gap of 1."""
    data = tmp_path / "inf.svm"
    data.write_text("+1 1:1e200\n-1 1:-1e200\n+1 1:2e200\n-1 1:-3e200\n")
    r = run_pegasos("train", "--kernel", "poly", "--coef0", "1", data, tmp_path / "m")
    assert r.returncode == 0, r.stderr
    h = header(tmp_path / "m")
    assert "not certified" in h["stopping"] and float(h["certified_gap"]) > 0.002
    assert "no update raised the dual" in r.stderr and "bound of updates" not in r.stderr
