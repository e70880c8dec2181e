"""Kernel Pegasos (Fig. 3): exactness against the linear trainer and a dense
reference, cache and thread independence, budget, model files, command line."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos
from pegasos.errors import ParameterError
from pegasos.trainers import train_kernel
from pegasos.kernel import KernelModel
from pegasos.model import model_text
from pegasos.modelfile import load_model

from conftest import data_file
# these tests pin the paper's settings for the options they leave out
from conftest import run_pegasos_paper as run_pegasos
from kernel_reference import gram, kernel_pegasos
from reference import cut_batches, labels_pm, to_dense

LINEAR_VIA_FIG3 = dict(kernel="poly", degree=1, gamma=1.0, coef0=0.0)


@pytest.fixture(scope="module")
def heart():
    X, y = pegasos.load_svmlight(str(data_file("heart_scale/heart_scale")))
    return X, y


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def sampler_order(m, k, sampling, seed, T):
    """The visiting order the trainers draw (the linear trainer's Orders)."""
    from pegasos.sampling import Orders

    parts = [block[:n * k] if sampling == "uniform" else block for block, n in Orders(m, k, sampling, seed, None).blocks(T)]
    return np.concatenate(parts)


# --------------------------------------------- linear kernel == linear trainer --

@pytest.mark.parametrize("k,sampling", [(1, "uniform"), (1, "permutation"), (5, "uniform"),
                                        (7, "permutation"), (16, "sequential")])
@pytest.mark.parametrize("variant", [{}, {"projection": True}, {"average_from": 0.5},
                                     {"average": True, "projection": True}])
def test_linear_kernel_equals_linear_trainer(heart, k, sampling, variant):
    X, y = heart
    kw = dict(lam=0.01, epochs=8, batch_size=k, sampling=sampling, seed=4, **variant)
    lin = pegasos.train(X, y, **kw)
    ker = train_kernel(X, y, **LINEAR_VIA_FIG3, **kw)
    assert rel(ker.decision_function(X), lin.decision_function(X)) < 1e-9
    # the same w, through the kernel form of ||w||^2
    assert ker.squared_norm() == pytest.approx(lin.squared_norm(), rel=1e-9)


def test_linear_kernel_equals_linear_trainer_a9a_sample():
    X, y = pegasos.load_svmlight(str(data_file("a9a/a9a")))
    X, y = X[:3000], y[:3000]
    for k in (1, 8):
        kw = dict(lam=1e-4, epochs=2, batch_size=k, sampling="uniform", seed=1)
        lin = pegasos.train(X, y, **kw)
        ker = train_kernel(X, y, **LINEAR_VIA_FIG3, **kw)
        assert rel(ker.decision_function(X), lin.decision_function(X)) < 1e-9


# ------------------------------------------------------ dense reference --

CASES = [
    ("rbf", dict(gamma=0.2), 1, "uniform", {}),
    ("rbf", dict(gamma=0.5), 4, "uniform", {}),
    ("rbf", dict(gamma=0.2), 7, "permutation", {}),
    ("poly", dict(gamma=0.3, coef0=1.0, degree=3), 1, "uniform", {}),
    ("poly", dict(gamma=0.1, coef0=0.5, degree=2), 6, "permutation", {}),
    ("sigmoid", dict(gamma=0.05, coef0=-0.5), 1, "uniform", {}),
    ("rbf", dict(gamma=0.2), 3, "uniform", {"projection": True}),
    ("poly", dict(gamma=0.3, coef0=1.0, degree=2), 1, "permutation", {"projection": True}),
    ("rbf", dict(gamma=0.2), 1, "uniform", {"average_from": 0.5}),
    ("rbf", dict(gamma=0.2), 5, "permutation", {"average": True, "projection": True}),
]


@pytest.mark.parametrize("kernel,params,k,sampling,variant", CASES)
def test_matches_dense_reference(heart, kernel, params, k, sampling, variant):
    X, y = heart
    m, lam, T = X.shape[0], 0.01, 1500
    order = sampler_order(m, k, sampling, 11, T)
    model = train_kernel(X, y, kernel=kernel, lam=lam, iterations=T, batch_size=k, sampling=sampling,
                         order=order, **params, **variant)
    Xd, ypm = to_dense(X), labels_pm(y)
    K = gram(Xd, Xd, kernel, **params)
    avg = None
    if variant.get("average"):
        avg = 1
    elif "average_from" in variant:
        avg = int(np.ceil(variant["average_from"] * T))
    ref = kernel_pegasos(K, ypm, lam, cut_batches(order, k, m, sampling, T),
                         projection=variant.get("projection", False), average_start=avg)
    c_ref = ref["average"] if avg else ref["last"]
    c = np.zeros(m)
    # coefficients in example order: recover the example of each support vector
    ex, _ = _support_examples(model, Xd)
    assert len(set(ex.tolist())) == model.n_support
    c[ex] = model.coef
    assert set(ex) == set(np.flatnonzero(c_ref))
    assert rel(c, c_ref) < 1e-9


def _support_examples(model, Xd):
    """Example index of each support vector (first matching row of X)."""
    S = to_dense(model.support_matrix())
    lookup = {}
    for i, row in enumerate(Xd):
        lookup.setdefault(row.tobytes(), i)
    ex = np.array([lookup[row.tobytes()] for row in S])
    return ex, S


def test_alpha_counts_are_integers_and_match_reference(heart):
    """Without projection alpha_j counts violations: integers, and c = y alpha/(lambda T k)."""
    X, y = heart
    m, lam, T, k = X.shape[0], 0.01, 2000, 3
    order = sampler_order(m, k, "uniform", 2, T)
    model, state = train_kernel(X, y, kernel="rbf", gamma=0.3, lam=lam, iterations=T, batch_size=k,
                                order=order, return_state=True)
    ex, alpha = state.alphas()
    assert np.all(alpha == np.round(alpha)) and alpha.min() >= 1
    ref = kernel_pegasos(gram(to_dense(X), to_dense(X), "rbf", gamma=0.3), labels_pm(y), lam,
                         cut_batches(order, k, m, "uniform", T), record_support=True)
    assert rel(ref["last"][ex] * labels_pm(y)[ex] * lam * T * k, alpha) < 1e-9
    # without a cache: one kernel evaluation per (batch example, support vector), O(|S| nnz), never O(m)
    sizes = ref["support_sizes"]
    model0, state0 = train_kernel(X, y, kernel="rbf", gamma=0.3, lam=lam, iterations=T, batch_size=k,
                                  order=order, cache_mb=0, return_state=True)
    assert state0.stats()["kernel_evaluations"] == k * sum(sizes[1:])


def test_budget_matches_reference_and_caps_support(heart):
    X, y = heart
    m, lam, T, B = X.shape[0], 0.01, 3000, 40
    order = sampler_order(m, 1, "uniform", 5, T)
    model, state = train_kernel(X, y, kernel="rbf", gamma=0.2, lam=lam, iterations=T, budget=B, order=order,
                                return_state=True)
    assert model.n_support == B and state.stats()["removed"] > 0
    ref = kernel_pegasos(gram(to_dense(X), to_dense(X), "rbf", gamma=0.2), labels_pm(y), lam,
                         cut_batches(order, 1, m, "uniform", T), budget=B)["last"]
    c = np.zeros(m)
    ex, _ = _support_examples(model, to_dense(X))
    c[ex] = model.coef
    assert rel(c, ref) < 1e-9
    assert int(model.info["support_vectors_removed"]) == state.stats()["removed"]


# ------------------------------------------------ cache, threads, kernels --

def test_cache_size_never_changes_the_result(heart):
    X, y = heart
    kw = dict(kernel="rbf", gamma=0.2, lam=0.001, epochs=10, batch_size=2, sampling="permutation", seed=3)
    runs = [train_kernel(X, y, cache_mb=mb, return_state=True, **kw) for mb in (0, 0.02, 100)]
    coefs = [r[0].coef for r in runs]
    assert all(np.array_equal(coefs[0], c) for c in coefs[1:])
    stats = [r[1].stats() for r in runs]
    assert stats[0]["cached_values_used"] == 0
    assert 0 < stats[1]["cached_values_used"] < stats[2]["cached_values_used"]
    assert stats[1]["cache_bytes"] <= 0.02 * (1 << 20)
    # the full cache computes each (example, support vector) kernel value once
    assert stats[2]["kernel_evaluations"] < stats[0]["kernel_evaluations"] / 3


def test_budget_with_tiny_cache_is_the_same(heart):
    X, y = heart
    kw = dict(kernel="rbf", gamma=0.2, lam=0.001, epochs=6, sampling="permutation", seed=1, budget=25)
    a = train_kernel(X, y, cache_mb=0, **kw)
    b = train_kernel(X, y, cache_mb=1, **kw)
    assert np.array_equal(a.coef, b.coef) and a.n_support == 25


def test_predict_threads_bit_identical(heart):
    X, y = heart
    model = train_kernel(X, y, kernel="rbf", gamma=0.1, lam=0.001, epochs=5, seed=2)
    Xbig = sp.vstack([X] * 20).tocsr()
    model.threads = 1
    one = model.decision_function(Xbig)
    model.threads = 2
    two = model.decision_function(Xbig)
    model.threads = 7
    seven = model.decision_function(Xbig)
    assert np.array_equal(one, two) and np.array_equal(one, seven)
    # float32 data are scored as their float64 values
    X32 = Xbig.astype(np.float32)
    assert np.array_equal(model.decision_function(X32), model.decision_function(X32.astype(np.float64)))


@pytest.mark.parametrize("kernel,params", [("rbf", dict(gamma=0.3)), ("poly", dict(gamma=0.2, coef0=1.0, degree=3)),
                                           ("sigmoid", dict(gamma=0.1, coef0=0.2)), ("linear", {})])
def test_decision_values_match_dense_formula(heart, kernel, params):
    """Including test columns the model never saw (they count in ||x||^2 for RBF)."""
    X, y = heart
    model = train_kernel(X, y, kernel=kernel, lam=0.01, epochs=2, seed=1, **params)
    Xt = sp.random(30, X.shape[1] + 3, density=0.5, random_state=1, format="csr")
    S = np.hstack([to_dense(model.support_matrix()), np.zeros((model.n_support, 3))])
    want = gram(Xt.toarray(), S, kernel, **params) @ model.coef
    assert rel(model.decision_function(Xt), want) < 1e-9


def test_squared_norm_and_objective(heart):
    X, y = heart
    model = train_kernel(X, y, kernel="rbf", gamma=0.2, lam=0.01, epochs=5, seed=1)
    S = to_dense(model.support_matrix())
    sq = float(model.coef @ gram(S, S, "rbf", gamma=0.2) @ model.coef)
    assert model.squared_norm() == pytest.approx(sq, rel=1e-10)
    obj = pegasos.objective(model, X, y)
    f = gram(to_dense(X), S, "rbf", gamma=0.2) @ model.coef
    hinge = np.maximum(0, 1 - labels_pm(y) * f).mean()
    assert obj["objective"] == pytest.approx(0.005 * sq + hinge, rel=1e-10)


def test_rbf_reaches_good_objective(heart):
    """Averaged iterates approach the optimum: the objective falls with more epochs."""
    X, y = heart
    objs = [pegasos.objective(train_kernel(X, y, kernel="rbf", gamma=0.1, lam=0.01, epochs=e, seed=1,
                                           average_from=0.5), X, y)["objective"] for e in (2, 50)]
    assert objs[1] < objs[0]


@pytest.mark.parametrize("kw,msg", [
    (dict(gamma=0.0), "gamma must be a positive number"),
    (dict(gamma=-1.0), "gamma must be a positive number"),
    (dict(kernel="poly", degree=0), "degree must be an integer >= 1"),
    (dict(kernel="poly", degree=1.5), "degree must be an integer >= 1"),
    (dict(kernel="tanh"), "kernel must be one of"),
    (dict(budget=0), "budget must be a positive integer"),
    (dict(budget=5, projection=True), "budget cannot be combined with projection or averaging"),
    (dict(budget=5, average_from=0.5), "budget cannot be combined with projection or averaging"),
    (dict(cache_mb=-1), "cache size"),
])
def test_bad_parameters(heart, kw, msg):
    X, y = heart
    kw = {"kernel": "rbf", **kw}
    with pytest.raises(ParameterError, match=msg):
        train_kernel(X, y, iterations=10, **kw)


# ------------------------------------------------------------ model files --

@pytest.mark.parametrize("kernel,params,extra", [
    ("rbf", dict(gamma=0.07), {}),
    ("poly", dict(gamma=0.3, coef0=1.25, degree=4), {"budget": 30}),
    ("sigmoid", dict(gamma=0.01, coef0=-0.3), {"average_from": 0.25}),
])
def test_model_round_trip_bit_exact(heart, tmp_path, kernel, params, extra):
    X, y = heart
    model = train_kernel(X, y, kernel=kernel, lam=0.003, epochs=3, seed=9, **params, **extra)
    model.info["train_file"] = "heart_scale"
    path = tmp_path / "m.model"
    model.save(path)
    text = path.read_text()
    assert text.startswith("pegasos_model 1\nkind kernel\nloss hinge\n")
    assert f"kernel {kernel}\n" in text and f"support_vectors {model.n_support}\n" in text
    loaded = load_model(path)
    assert isinstance(loaded, KernelModel)
    assert np.array_equal(loaded.coef, model.coef)
    assert np.array_equal(loaded.sv_data, model.sv_data)
    assert np.array_equal(loaded.sv_indices, model.sv_indices)
    assert (loaded.gamma, loaded.degree, loaded.coef0) == (model.gamma, model.degree, model.coef0)
    assert np.array_equal(loaded.decision_function(X), model.decision_function(X))
    assert model_text(loaded) == text
    # one support vector per line: coefficient index:value ...
    first = text.split("\nsupport_vectors ")[1].splitlines()[1].split()
    assert float(first[0]) == model.coef[0] and ":" in first[1]


def test_damaged_kernel_model_is_refused(heart, tmp_path):
    X, y = heart
    model = train_kernel(X, y, kernel="rbf", lam=0.01, epochs=1)
    text = model_text(model)
    bad = tmp_path / "bad.model"
    for broken, msg in [(text.replace("gamma ", "gamma -"), "line 5: header .gamma. holds .*negative"),
                        (re.sub(r"\ngamma \S+", "\ngamma 0", text), "line 5: bad kernel parameters"),
                        (text.rsplit("\n", 3)[0] + "\n", "truncated"),
                        (text.replace("kernel rbf", "kernel laplace"), "unknown kernel"),
                        (text.replace("support_vectors_removed 0\n", ""), "header lacks")]:
        bad.write_text(broken)
        with pytest.raises(pegasos.ModelFormatError, match=msg):
            load_model(bad)


# ----------------------------------------------------------- command line --

def test_cli_kernel_end_to_end(tmp_path):
    data = data_file("heart_scale/heart_scale")
    model = tmp_path / "h.model"
    r = run_pegasos("train", "--kernel", "rbf", "--gamma", "0.1", "-l", "0.01", "--epochs", "5",
                    "--sampling", "permutation", data, model)
    assert r.returncode == 0, r.stderr
    assert "support vectors" in r.stdout
    loaded = load_model(model)
    assert loaded.kernel == "rbf" and loaded.gamma == 0.1
    X, y = pegasos.load_svmlight(str(data))
    again = train_kernel(X, y, kernel="rbf", gamma=0.1, lam=0.01, epochs=5, sampling="permutation")
    assert np.array_equal(loaded.coef, again.coef)
    p = run_pegasos("predict", data, model)
    assert p.returncode == 0
    values = np.array([float(v) for v in p.stdout.split()])
    assert np.array_equal(values, loaded.decision_function(X))
    e = run_pegasos("eval", "--json", data, model)
    assert e.returncode == 0 and '"accuracy"' in e.stdout
    o = run_pegasos("objective", "--sample", "0.5", "--json", data, model)
    assert o.returncode == 0 and '"sample": 0.5' in o.stdout
    # default gamma is 1/n_features
    r = run_pegasos("train", "--kernel", "rbf", "-T", "50", "-q", data, model)
    assert r.returncode == 0 and load_model(model).gamma == 1 / 13


@pytest.mark.parametrize("args,msg", [
    (["--kernel", "rbf", "--gamma", "0"], "gamma must be a positive number, got 0.0"),
    (["--kernel", "rbf", "--gamma", "-2"], "gamma must be a positive number"),
    (["--kernel", "poly", "--degree", "0"], "'--degree': 0 is not in the range 1<=x<="),
    (["--gamma", "1"], "applies to --kernel poly, rbf or sigmoid, not linear"),
    (["--kernel", "rbf", "--bias", "feature"], "not supported with --kernel rbf"),
    (["--kernel", "rbf", "--budget", "0"], "'--budget': 0 is not in the range x>=1"),
])
def test_cli_bad_kernel_parameters_one_line(tmp_path, args, msg):
    r = run_pegasos("train", *args, data_file("heart_scale/heart_scale"), tmp_path / "x.model")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and msg in r.stderr and r.stderr.startswith("Error: ")
    assert not (tmp_path / "x.model").exists()


def test_exported_from_the_package():
    assert pegasos.train_kernel is train_kernel and pegasos.KernelModel is KernelModel


def test_zero_based_model_file(heart, tmp_path):
    X, y = heart
    model = train_kernel(X, y, kernel="rbf", gamma=0.2, lam=0.01, epochs=1, seed=1)
    model.info["index_base"] = "0"
    path = tmp_path / "z.model"
    model.save(path)
    first = path.read_text().split("\nsupport_vectors ")[1].splitlines()[1].split()
    assert int(first[1].split(":")[0]) == model.sv_indices[0]
    loaded = load_model(path)
    assert np.array_equal(loaded.sv_indices, model.sv_indices)
    assert np.array_equal(loaded.decision_function(X), model.decision_function(X))


# ------------------------------------------------------------------ memory --

def test_kernel_memory_bound_counts_each_part():
    from pegasos.kernel import SV_SLOT_BYTES, kernel_memory
    from pegasos.options import TrainOptions

    o = TrainOptions(kernel="rbf", cache_mb=1.0).validate()
    need = kernel_memory(o, m=1000, n_features=10, T=500, k=1)
    assert need["cache"] == 1 << 20                               # the bound given
    assert need["support"] == 2 * SV_SLOT_BYTES * 500             # at most T k slots, twice while growing
    assert need["total"] == need["fixed"] + need["support"] + need["cache"]
    big = kernel_memory(o.replace(cache_mb=1e9), m=1000, n_features=10, T=500, k=1)
    assert big["cache"] == 8.0 * 1000 * 500                       # what m rows of 500 values can hold
    budget = kernel_memory(o.replace(budget=20), m=1000, n_features=10, T=500, k=1)
    assert budget["support"] == 2 * SV_SLOT_BYTES * 64            # the first allocation is 64 slots


@pytest.mark.parametrize("settings, m, n, T, k, match", [
    (dict(cache_mb=1e7), 10**6, 10, 10**6, 1, "cache_mb: a kernel-row cache"),
    (dict(projection=True), 10, 10, 10, 200_000, "batch_size: with projection"),
    (dict(), 10, 10**10, 10, 1, "n_features = 10000000000"),
    (dict(), 10**8, 10, 10**8, 1, "budget: the support set of up to 100000000 vectors"),
    (dict(budget=100), 10**8, 10, 10**8, 1, "state for 100000000 examples"),
])
def test_kernel_runs_beyond_memory_are_refused_before_allocating(monkeypatch, settings, m, n, T, k, match):
    import pegasos.data
    from pegasos.kernel import check_kernel_memory
    from pegasos.options import TrainOptions

    monkeypatch.setattr(pegasos.data, "memory_limit", lambda: float(1 << 30))
    o = TrainOptions(kernel="rbf", **settings).validate()
    with pytest.raises(ParameterError, match=match):
        check_kernel_memory(o, m, n, T, k)
    check_kernel_memory(o.replace(cache_mb=1.0, projection=False, budget=None), 1000, 10, 1000, 1)   # a small run fits


def test_cli_names_cache_mb_under_a_memory_limit(tmp_path):
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    data = tmp_path / "d.svm"
    with open(data, "w") as f:
        for i in range(20000):
            f.write(f"{1 if i % 2 else -1} 1:{rng.random():.3f} 2:{rng.random():.3f}\n")
    code = ("import resource, sys\n"
            "from pegasos.data import memory_limit\n"
            "vm = int([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmSize')][0]) * 1024\n"
            "resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))\n"
            "from pegasos.cli import main\n"
            "sys.argv = ['pegasos'] + sys.argv[1:]\n"
            "main()\n")
    base = [sys.executable, "-c", code, "train", "-q", "--kernel", "rbf", "--epochs", "1"]
    r = subprocess.run(base + ["--cache-mb", "1e6", str(data), str(tmp_path / "m")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1 and r.stderr.startswith("Error: --cache-mb: a kernel-row cache of"), r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "m").exists()


def test_kernel_model_support_vector_count_beyond_memory_names_its_line(heart, tmp_path, monkeypatch):
    import pegasos.data

    X, y = heart
    text = model_text(train_kernel(X, y, kernel="rbf", lam=0.01, epochs=1))
    (tmp_path / "m").write_text(text)
    monkeypatch.setattr(pegasos.data, "memory_limit", lambda: 1000.0)
    line = text.splitlines().index(next(ln for ln in text.splitlines() if ln.startswith("support_vectors "))) + 1
    with pytest.raises(pegasos.ModelFormatError, match=f"line {line}: support_vectors"):
        load_model(tmp_path / "m")


def test_kernel_model_with_a_far_feature_index_scores_on_its_used_columns(heart, tmp_path, monkeypatch):
    """Scoring scatters each example into a row as wide as the support vectors' columns it uses, not
    as wide as their largest index: a support vector with index 2000000000 scores (in a process that
    can allocate 1 GiB) as the same model with that feature at index 14; an index beyond int32 is
    refused at its line."""
    import pegasos.data

    X, y = heart
    text = model_text(train_kernel(X, y, kernel="rbf", lam=0.01, epochs=1))
    lines = text.splitlines()
    sv = next(i for i, ln in enumerate(lines) if ln.startswith("support_vectors ")) + 1

    def variant(index, n):
        edited = [ln.replace("n_features 13", f"n_features {n}") for ln in lines]
        edited[sv] += f" {index}:1.0"
        (tmp_path / "m").write_text("\n".join(edited) + "\n")
        return load_model(tmp_path / "m")

    near = variant(14, 14)
    monkeypatch.setattr(pegasos.data, "memory_limit", lambda: float(1 << 30))
    far = variant(2000000000, 2000000000)
    np.testing.assert_array_equal(far.decision_function(X), near.decision_function(X))
    with pytest.raises(pegasos.ModelFormatError, match=f"line {sv + 1}: feature index 2999999999 is beyond"):
        variant(2999999999, 3000000000)
