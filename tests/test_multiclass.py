"""Multiclass (one-vs-rest, Crammer-Singer with costs) and the CLI of the new problems.

1. Crammer-Singer is checked against a dense NumPy reference of the step of
   paper Eq. (20) (tests/multiclass_reference.py) fed the very same batches.
2. One-vs-rest equals K independent binary runs with the per-class seeds.
3. Objectives are compared with LIBLINEAR -s 3 and -s 4 at C = 1/(lambda m).
4. The installed command end to end on dna and sector, plus ranking, log loss
   and regression on small hand-written files.
"""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import metrics

import pegasos
from pegasos.options import iterations_for
from pegasos.sampling import Orders
from pegasos.trainers import train_multiclass

import multiclass_reference as ref
from conftest import data_file, run_pegasos

DNA = "dna/dna.scale"
DNA_T = "dna/dna.scale.t"
SECTOR = "sector/sector.scale.bz2"
SECTOR_T = "sector/sector.t.scale.bz2"


def ok(r):
    assert r.returncode == 0, f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    return r


def one_line_error(r, *fragments, status=1):
    assert r.returncode == status, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert "Traceback" not in r.stderr
    for frag in fragments:
        assert frag in lines[0], (frag, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def dna():
    X, y = pegasos.load_svmlight(str(data_file(DNA)))
    return X.tocsr(), y


@pytest.fixture(scope="module")
def dna_sub(dna):
    """300 rows of dna with their values (all 1) jittered into [0.75, 1.25]: with
    0/1 values, different classes' scores tie exactly in exact arithmetic and the
    solver's rounding (W = a V) then decides the argmax, not its tie rule."""
    X, y = dna
    rng = np.random.default_rng(0)
    rows = np.sort(rng.choice(X.shape[0], 300, replace=False))
    X = X[rows].copy()
    X.data = X.data * rng.uniform(0.75, 1.25, size=X.data.size)
    return X, y[rows]


def random_problem(m=60, n=15, K=5, seed=3, zero_row=True):
    """Sparse X (with an all-zero row) and negative values; labels 10, 20, ..., 10K."""
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.4)
    if zero_row:
        dense[5] = 0.0
    y = 10.0 * (rng.integers(0, K, size=m) + 1)
    y[:K] = 10.0 * (np.arange(K) + 1)          # every class present
    return sp.csr_matrix(dense), y


# ------------------------------------------------------------------ 1. Crammer-Singer exactness

COSTS = {
    # dna (K = 3): ties at W = 0 between equal costs of the same row (row 3: 1, 1) and a zero cost
    3: np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 0.5], [1.0, 1.0, 0.0]]),
    # random (K = 5): costs in {0, 1, 2}: many exact ties and zero costs
    5: np.array([[0, 1, 1, 2, 0], [2, 0, 1, 1, 1], [1, 1, 0, 0, 2], [0, 2, 2, 0, 1], [1, 1, 1, 1, 0]], float),
}


def _batches(m, k, sampling, seed, T):
    return ref.batches_from_blocks(Orders(m, k, sampling, seed, None).blocks(T), k)


def _check_cs(X, y, *, lam, k, projection, output, bias, variant, epochs, seed=7):
    classes = np.unique(y)
    K = classes.size
    yc = np.searchsorted(classes, y)
    m = X.shape[0]
    sampling = "uniform" if k == 1 else "permutation"      # k = 7: short last batch every epoch
    T = iterations_for(m, k, epochs, sampling)
    avg = {"last": dict(), "average": dict(average=True), "suffix": dict(average_from=0.6)}[output]
    avg_start = {"last": 0, "average": 1, "suffix": math.ceil(0.6 * T)}[output]
    cost = COSTS[K] if "cost" in variant else None
    class_weight = {float(classes[0]): 2.5, float(classes[-1]): 0.4} if "weights" in variant else None
    weights = None if class_weight is None else np.array([class_weight.get(float(v), 1.0) for v in y])

    model = train_multiclass(X, y, method="crammer-singer", lam=lam, iterations=T, batch_size=k, sampling=sampling,
                             projection=projection, bias=bias, seed=seed, class_weight=class_weight,
                             cost=None if cost is None else cost.ravel(), **avg)
    W_ref, b_ref, stats = ref.crammer_singer(X, yc, K, lam, _batches(m, k, sampling, seed, T), cost=cost,
                                              weights=weights, projection=projection, avg_start=avg_start,
                                              bias=bias)
    if projection:
        assert stats["projections"] > 0, "the projection never acted: the case tests nothing"
    # a tie up to rounding would be decided by rounding, not by the rule: the data must not have one
    assert stats["near_ties"] == 0
    if cost is None:
        assert stats["exact_ties"] > 0   # W_1 = 0: all K - 1 >= 2 other classes tie at delta = 1
    scale = max(1.0, float(np.abs(W_ref).max()), float(np.abs(b_ref).max()))
    assert np.abs(model.W - W_ref).max() <= 1e-9 * scale
    assert np.abs(model.biases - b_ref).max() <= 1e-9 * scale
    assert np.abs(W_ref).max() > 0
    if bias == "none":
        assert np.all(model.biases == 0)
    # the multiclass objective of the API equals the reference formula
    obj = pegasos.objective(model, X, y)
    expect = ref.cs_objective(X, yc, model.W, model.biases, lam, cost, weights, bias == "feature")
    assert obj["objective"] == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("variant", ["plain", "cost", "weights", "cost+weights"])
@pytest.mark.parametrize("bias", ["none", "feature"])
@pytest.mark.parametrize("output", ["last", "average", "suffix"])
@pytest.mark.parametrize("projection", [False, True])
@pytest.mark.parametrize("k", [1, 7])
def test_crammer_singer_matches_reference_dna(dna_sub, k, projection, output, bias, variant):
    X, y = dna_sub
    _check_cs(X, y, lam=1e-2, k=k, projection=projection, output=output, bias=bias, variant=variant,
              epochs=2 if k == 1 else 6)


@pytest.mark.parametrize("variant", ["plain", "cost", "weights", "cost+weights"])
@pytest.mark.parametrize("bias", ["none", "feature"])
@pytest.mark.parametrize("output", ["last", "average", "suffix"])
@pytest.mark.parametrize("projection", [False, True])
@pytest.mark.parametrize("k", [1, 7])
def test_crammer_singer_matches_reference_random(k, projection, output, bias, variant):
    # with the constant feature the all-zero row scores only the biases, which are
    # (1/(lam T)) times integer counts of updates and tie in exact arithmetic
    X, y = random_problem(zero_row=bias == "none")
    _check_cs(X, y, lam=0.05, k=k, projection=projection, output=output, bias=bias, variant=variant,
              epochs=10 if k == 1 else 30)


def test_crammer_singer_sequential_and_float32(dna_sub):
    """Sequential sampling (file order) with k = 4 and float32 values: same iterates."""
    X, y = dna_sub
    yc = np.searchsorted(np.unique(y), y)
    T = iterations_for(X.shape[0], 4, 3, "sequential")
    for Xv in (X, X.astype(np.float32)):
        X = Xv.astype(np.float64)          # the values the solver sees (float32-rounded in the 2nd run)
        model = train_multiclass(Xv, y, method="crammer-singer", lam=3e-3, iterations=T, batch_size=4,
                                 sampling="sequential", average_from=0.5)
        W_ref, _, stats = ref.crammer_singer(X, yc, 3, 3e-3, _batches(X.shape[0], 4, "sequential", 1, T),
                                         avg_start=math.ceil(0.5 * T))
        assert stats["near_ties"] == 0
        assert np.abs(model.W - W_ref).max() <= 1e-9 * max(1.0, np.abs(W_ref).max())


def _one_step(X, y, cost=None):
    """W after the single iteration t = 1 on example 0 (W_1 = 0, so every score is exactly 0)."""
    return train_multiclass(X, y, method="crammer-singer", lam=0.5, iterations=1, sampling="sequential",
                            cost=None if cost is None else np.asarray(cost, float).ravel()).W


def test_crammer_singer_tie_rule():
    """At W = 0 every value is delta(r, y): ties are decided by the solver's rule,
    which the reference reproduces (multiclass_reference.most_violating)."""
    x = sp.csr_matrix(np.array([[1.0, 2.0], [0.5, 0.0], [0.0, 1.0]]))
    eta_x = np.array([1.0, 2.0]) / 0.5
    # default costs, true class 2 (label 3): classes 0 and 1 tie at delta = 1, the lower (0) wins
    W = _one_step(x, np.array([3.0, 1.0, 2.0]))
    np.testing.assert_array_equal(W, np.vstack([-eta_x, 0 * eta_x, eta_x]))
    # true class 0: lowest other class is 1
    W = _one_step(x, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(W, np.vstack([eta_x, -eta_x, 0 * eta_x]))
    # equal positive costs of classes 1 and 2 for true class 0: class 1 (lower) wins
    W = _one_step(x, np.array([1.0, 2.0, 3.0]), [[0, 2, 2], [1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(W, np.vstack([eta_x, -eta_x, 0 * eta_x]))
    # a larger cost beats a lower index
    W = _one_step(x, np.array([1.0, 2.0, 3.0]), [[0, 1, 3], [1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(W, np.vstack([eta_x, 0 * eta_x, -eta_x]))
    # all costs of the true class's row 0: the true class wins the tie at 0, no update
    W = _one_step(x, np.array([1.0, 2.0, 3.0]), [[0, 0, 0], [1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(W, np.zeros((3, 2)))
    # ... also against lower indices: true class 2 with costs 0 everywhere ("lowest r" would pick 0)
    W = _one_step(x, np.array([3.0, 1.0, 2.0]), [[0, 1, 1], [1, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(W, np.zeros((3, 2)))
    # the reference's rule agrees on each case
    assert ref.most_violating(np.zeros(3), 2, np.array([1.0, 1.0, 0.0])) == 0
    assert ref.most_violating(np.zeros(3), 0, np.array([0.0, 2.0, 2.0])) == 1
    assert ref.most_violating(np.zeros(3), 0, np.array([0.0, 0.0, 0.0])) == 0


# ------------------------------------------------------------------ 2. one-vs-rest = K binary runs

@pytest.mark.parametrize("k,sampling,bias,loss", [
    (1, "uniform", "none", "hinge"),
    (1, "permutation", "feature", "hinge"),
    (5, "permutation", "unregularized", "hinge"),
    (3, "uniform", "none", "log"),
    (1, "sequential", "none", "squared-hinge"),
])
def test_ovr_equals_independent_binary_runs(dna, k, sampling, bias, loss):
    X, y = dna
    classes = np.unique(y)
    m, seed, lam = X.shape[0], 11, 1e-3
    T = iterations_for(m, k, 2, sampling)
    model = train_multiclass(X, y, method="ovr", loss=loss, lam=lam, iterations=T, batch_size=k,
                             sampling=sampling, bias=bias, seed=seed, average_from=0.5, n_jobs=2)
    seeds = np.random.SeedSequence(seed).spawn(classes.size)
    for c, value in enumerate(classes):
        order = np.concatenate([o for o, _ in Orders(m, k, sampling, seeds[c], None).blocks(T)])
        y_bin = np.where(y == value, 1.0, -1.0)
        binary = pegasos.train(X, y_bin, lam=lam, iterations=T, batch_size=k, sampling=sampling, bias=bias,
                               average_from=0.5, order=order, loss=loss)
        np.testing.assert_array_equal(model.W[c], binary.w)
        assert model.biases[c] == binary.bias
    assert np.abs(model.W).max() > 0


def test_ovr_thread_count_does_not_change_the_model(dna):
    X, y = dna
    kw = dict(method="ovr", lam=1e-3, epochs=3, sampling="permutation", average_from=0.5, seed=5,
              class_weight={2.0: 1.5})
    models = [train_multiclass(X, y, n_jobs=j, **kw) for j in (1, 2, 3)]
    for other in models[1:]:
        np.testing.assert_array_equal(models[0].W, other.W)
        np.testing.assert_array_equal(models[0].biases, other.biases)
    assert not np.array_equal(models[0].W, train_multiclass(X, y, n_jobs=2, **dict(kw, seed=6)).W)


# ------------------------------------------------------------------ 3. LIBLINEAR objectives

def _liblinear_weights(X, y, s, C):
    from liblinear.liblinearutil import parameter, problem, train

    classes = np.unique(y)
    model = train(problem(y, X), parameter(f"-s {s} -c {C!r} -B -1 -e 1e-6 -q"))
    W = np.zeros((classes.size, X.shape[1]))
    for li, label in enumerate(model.get_labels()):
        w, b = model.get_decfun(li)
        assert b == 0
        W[int(np.searchsorted(classes, label))] = w
    return W


def test_ovr_per_class_objective_matches_liblinear_s3(dna):
    X, y = dna
    lam, m = 1e-3, X.shape[0]
    yc = np.searchsorted(np.unique(y), y)
    W = _liblinear_weights(X, y, 3, 1.0 / (lam * m))
    liblinear = [ref.binary_objective(X, np.where(yc == c, 1.0, -1.0), W[c], lam) for c in range(3)]
    model = train_multiclass(X, y, method="ovr", lam=lam, epochs=1000, sampling="permutation", average_from=0.5)
    ours = pegasos.objective(model, X, y)["per_class_objective"]
    # the API's per-class objective is the binary objective of each row
    for c in range(3):
        assert ours[c] == pytest.approx(ref.binary_objective(X, np.where(yc == c, 1.0, -1.0), model.W[c], lam),
                                        rel=1e-12)
    np.testing.assert_allclose(ours, liblinear, rtol=0.01)


def test_crammer_singer_objective_matches_liblinear_s4(dna):
    X, y = dna
    lam, m = 1e-3, X.shape[0]
    C = 1.0 / (lam * m)
    yc = np.searchsorted(np.unique(y), y)
    W = _liblinear_weights(X, y, 4, C)
    # LIBLINEAR minimises 1/2 ||W||^2 + C sum_i xi_i; times lambda that is ours (C = 1/(lambda m))
    Z = np.asarray(X @ W.T)
    xi = np.max((1 - np.eye(3))[yc] + Z - Z[np.arange(m), yc][:, None], axis=1)
    liblinear_scaled = lam * (0.5 * np.sum(W ** 2) + C * xi.sum())
    liblinear = ref.cs_objective(X, yc, W, np.zeros(3), lam)
    assert liblinear_scaled == pytest.approx(liblinear, rel=1e-12)
    model = train_multiclass(X, y, method="crammer-singer", lam=lam, epochs=4000, sampling="permutation",
                             average_from=0.5)
    ours = pegasos.objective(model, X, y)["objective"]
    assert ours == pytest.approx(liblinear, rel=0.01)
    assert ours >= liblinear * (1 - 1e-6)      # LIBLINEAR -s 4 is converged here: nothing beats it


# ------------------------------------------------------------------ 4. the command end to end

DNA_OPTS = ["-l", "1e-3", "--epochs", "50", "--average-from", "0.5", "--sampling", "permutation", "-q"]


@pytest.fixture(scope="module")
def dna_models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dna")
    out = {}
    for name, extra in (("ovr", []), ("cs", ["--multiclass", "crammer-singer"])):
        path = tmp / f"{name}.model"
        ok(run_pegasos("train", *DNA_OPTS, *extra, data_file(DNA), path))
        out[name] = path
    cost = tmp / "cost.txt"
    cost.write_text("# rows: true class 1, 2, 3\n0 1 2\n\n1 0 1.5   # class 2\n2 1 0\n")
    path = tmp / "cs_cost.model"
    ok(run_pegasos("train", *DNA_OPTS, "--multiclass", "crammer-singer", "--cost-matrix", cost,
                   data_file(DNA), path))
    out["cs_cost"] = path
    return out


@pytest.mark.parametrize("name,target", [("ovr", 0.94), ("cs", 0.92), ("cs_cost", 0.92)])
def test_cli_dna_eval_matches_sklearn(dna_models, tmp_path, name, target):
    model = dna_models[name]
    r = json.loads(ok(run_pegasos("eval", data_file(DNA_T), model, "--json")).stdout)
    pred_file = tmp_path / "pred.txt"
    ok(run_pegasos("predict", "--labels", data_file(DNA_T), model, pred_file))
    pred = np.array([float(v) for v in pred_file.read_text().split()])
    _, y_true = pegasos.load_svmlight(str(data_file(DNA_T)))
    labels = [1.0, 2.0, 3.0]
    assert r["task"] == "multiclass" and r["classes"] == 3 and r["examples"] == y_true.size == pred.size
    assert r["accuracy"] == pytest.approx(metrics.accuracy_score(y_true, pred), abs=1e-15)
    assert r["accuracy"] >= target
    p, rc, f1, support = metrics.precision_recall_fscore_support(y_true, pred, labels=labels, zero_division=0)
    for c, entry in enumerate(r["per_class"]):
        assert entry["label"] == str(c + 1)
        assert entry["precision"] == pytest.approx(p[c], abs=1e-15)
        assert entry["recall"] == pytest.approx(rc[c], abs=1e-15)
        assert entry["f1"] == pytest.approx(f1[c], abs=1e-15)
        assert entry["support"] == support[c]
    assert r["macro_f1"] == pytest.approx(metrics.f1_score(y_true, pred, average="macro"), abs=1e-15)
    assert r["confusion"] == metrics.confusion_matrix(y_true, pred, labels=labels).tolist()
    # predicted labels are the argmax of predict's decision values (K columns)
    values = np.loadtxt(ok(run_pegasos("predict", data_file(DNA_T), model)).stdout.splitlines())
    assert values.shape == (y_true.size, 3)
    np.testing.assert_array_equal(np.array(labels)[np.argmax(values, axis=1)], pred)
    # eval text shows the same accuracy
    text = ok(run_pegasos("eval", data_file(DNA_T), model)).stdout
    assert f"accuracy     {r['accuracy']:.4f} ({r['correct']}/{r['examples']})" in text
    assert "macro F1" in text and "confusion matrix" in text


@pytest.mark.parametrize("name", ["ovr", "cs", "cs_cost"])
def test_cli_objective_matches_numpy(dna, dna_models, name):
    X, y = dna
    model = pegasos.load_model(dna_models[name])
    yc = np.searchsorted(np.unique(y), y)
    r = json.loads(ok(run_pegasos("objective", data_file(DNA), dna_models[name], "--json")).stdout)
    assert r["task"] == "multiclass" and r["lambda"] == 1e-3 and r["examples"] == 2000
    if name == "ovr":
        expect = [ref.binary_objective(X, np.where(yc == c, 1.0, -1.0), model.W[c], 1e-3) for c in range(3)]
        np.testing.assert_allclose(r["per_class_objective"], expect, rtol=1e-12)
        assert r["objective"] == pytest.approx(sum(expect), rel=1e-12)
    else:
        cost = None if name == "cs" else np.array([[0, 1, 2], [1, 0, 1.5], [2, 1, 0]], float)
        if cost is not None:
            np.testing.assert_array_equal(model.cost, cost.ravel())
        assert r["objective"] == pytest.approx(ref.cs_objective(X, yc, model.W, model.biases, 1e-3, cost),
                                               rel=1e-12)
    assert r["error_rate"] == pytest.approx(np.mean(np.argmax(np.asarray(X @ model.W.T), axis=1) != yc))
    lam2 = json.loads(ok(run_pegasos("objective", data_file(DNA), dna_models[name], "-l", "0.01",
                                     "--json")).stdout)
    assert lam2["regularizer"] == pytest.approx(10 * r["regularizer"], rel=1e-12)
    text = ok(run_pegasos("objective", data_file(DNA), dna_models[name])).stdout
    assert f"objective    {r['objective']:.8f}" in text


@pytest.mark.parametrize("name", ["ovr", "cs", "cs_cost"])
def test_model_round_trip_is_byte_identical(dna_models, tmp_path, name):
    src = dna_models[name]
    text = src.read_text()
    assert f"multiclass {'ovr' if name == 'ovr' else 'crammer-singer'}\n" in text
    assert ("cost_matrix " in text) == (name == "cs_cost")
    model = pegasos.load_model(src)
    model.save(tmp_path / "again.model")
    assert (tmp_path / "again.model").read_bytes() == src.read_bytes()
    again = pegasos.load_model(tmp_path / "again.model")
    np.testing.assert_array_equal(again.W, model.W)


def test_cli_sector_ovr_end_to_end(tmp_path):
    model = tmp_path / "sector.model"
    opts = ["-l", "1e-4", "--epochs", "5", "--average-from", "0.5", "--sampling", "permutation", "-q"]
    ok(run_pegasos("train", *opts, "--jobs", "2", data_file(SECTOR), model))
    r = json.loads(ok(run_pegasos("eval", data_file(SECTOR_T), model, "--json")).stdout)
    assert r["classes"] == 105 and r["examples"] == 3207
    assert r["accuracy"] >= 0.90
    pred = tmp_path / "pred.txt"
    ok(run_pegasos("predict", "--labels", data_file(SECTOR_T), model, pred))
    _, y_true = pegasos.load_svmlight(str(data_file(SECTOR_T)))
    predicted = np.array([float(v) for v in pred.read_text().split()])
    assert r["accuracy"] == pytest.approx(metrics.accuracy_score(y_true, predicted), abs=1e-15)
    assert r["macro_f1"] == pytest.approx(metrics.f1_score(y_true, predicted, average="macro",
                                                           labels=np.unique(y_true)), abs=1e-12)
    text = ok(run_pegasos("eval", data_file(SECTOR_T), model)).stdout
    assert "(confusion matrix: use --json)" in text
    obj = json.loads(ok(run_pegasos("objective", data_file(SECTOR), model, "--json")).stdout)
    X, y = pegasos.load_svmlight(str(data_file(SECTOR)))
    api = pegasos.objective(pegasos.load_model(model), X, y)
    assert len(obj["per_class_objective"]) == 105
    np.testing.assert_allclose(obj["per_class_objective"], api["per_class_objective"], rtol=1e-12)
    assert obj["objective"] == pytest.approx(sum(obj["per_class_objective"]), rel=1e-12)
    assert obj["error_rate"] < 0.05
    # one thread gives the same bytes
    model1 = tmp_path / "sector1.model"
    ok(run_pegasos("train", *opts, "--jobs", "1", data_file(SECTOR), model1))
    assert model1.read_bytes().replace(b"train_file", b"x") == model.read_bytes().replace(b"train_file", b"x")


COST_ERRORS = [
    ("0 1 1\n1 0\n1 1 0\n", ["line 2", "2 costs on the line, expected 3"]),
    ("# header\n0 1 1\n1 0 1\n1 -1 0\n", ["line 4", "'-1'", ">= 0"]),
    ("0 1 1\n1 2 1\n1 1 0\n", ["line 2", "cost of the true class must be 0"]),
    ("0 1 1\n1 0 1\n\n1 x 0\n", ["line 4", "'x' is not a number"]),
    ("0 1 1\n1 0 nan\n1 1 0\n", ["line 2", "finite"]),
]


@pytest.mark.parametrize("content,fragments", COST_ERRORS)
def test_cost_matrix_errors_name_the_line(tmp_path, content, fragments):
    cost = tmp_path / "cost.txt"
    cost.write_text(content)
    r = run_pegasos("train", "-q", "--multiclass", "crammer-singer", "--cost-matrix", cost, data_file(DNA),
                    tmp_path / "m.model")
    one_line_error(r, str(cost), *fragments)
    assert not (tmp_path / "m.model").exists()


def test_cost_matrix_row_count_and_method_errors(tmp_path):
    cost = tmp_path / "cost.txt"
    cost.write_text("0 1 1\n1 0 1\n")
    r = run_pegasos("train", "-q", "--multiclass", "crammer-singer", "--cost-matrix", cost, data_file(DNA),
                    tmp_path / "m.model")
    one_line_error(r, "2 rows", "3 classes")
    cost.write_text("0 1 1\n1 0 1\n1 1 0\n")
    one_line_error(run_pegasos("train", "-q", "--cost-matrix", cost, data_file(DNA), tmp_path / "m.model"),
                   "crammer-singer", status=2)


def _header(path):
    out = {}
    for line in path.read_text().splitlines():
        if line.startswith("class ") or line.startswith("weights "):
            break
        key, _, value = line.partition(" ")
        out[key] = value
    return out


def test_class_weights_go_into_header_and_change_model(tmp_path):
    plain, weighted = tmp_path / "plain.model", tmp_path / "w.model"
    opts = ["-l", "1e-3", "--epochs", "5", "-q", data_file(DNA)]
    ok(run_pegasos("train", *opts, plain))
    ok(run_pegasos("train", "-w", "1:3", "-w", "3:0.5", *opts, weighted))
    assert "class_weights" not in _header(plain)
    assert _header(weighted)["class_weights"] == "1:3.0,3:0.5"
    a, b = pegasos.load_model(plain), pegasos.load_model(weighted)
    assert not np.array_equal(a.W, b.W)
    b.save(tmp_path / "again.model")
    assert (tmp_path / "again.model").read_bytes() == weighted.read_bytes()
    # the weighted objective uses the weights
    X, y = pegasos.load_svmlight(str(data_file(DNA)))
    yc = np.searchsorted(np.unique(y), y)
    sw = np.where(y == 1, 3.0, np.where(y == 3, 0.5, 1.0))
    r = json.loads(ok(run_pegasos("objective", data_file(DNA), weighted, "--json")).stdout)
    f = np.asarray(X @ b.W.T)
    expect = [0.5 * 1e-3 * b.W[c] @ b.W[c] + np.mean(sw * np.maximum(0, 1 - np.where(yc == c, 1, -1) * f[:, c]))
              for c in range(3)]
    np.testing.assert_allclose(r["per_class_objective"], expect, rtol=1e-12)
    one_line_error(run_pegasos("train", "-w", "7:2", *opts, tmp_path / "x.model"), "label 7", "not in the data")


def test_positive_class_weight_binary(tmp_path):
    """-w 1:2 (SVMlight's -j 2) on heart_scale's -1/+1 labels."""
    plain, weighted = tmp_path / "plain.model", tmp_path / "j.model"
    opts = ["-l", "1e-2", "--epochs", "20", "-q", data_file("heart_scale/heart_scale")]
    ok(run_pegasos("train", *opts, plain))
    ok(run_pegasos("train", "-w", "1:2", *opts, weighted))
    assert "class_weights" not in _header(plain)
    assert _header(weighted)["class_weights"] == "1:2.0"
    assert not np.array_equal(pegasos.load_model(plain).w, pegasos.load_model(weighted).w)
    # up-weighting the positive class predicts it at least as often
    X, _ = pegasos.load_svmlight(str(data_file("heart_scale/heart_scale")))
    assert (np.sum(pegasos.load_model(weighted).decision_function(X) > 0)
            >= np.sum(pegasos.load_model(plain).decision_function(X) > 0))


RANKING = """\
# three queries, graded relevance 0..2; feature 1 decides the grade, feature 2 is noise
2 qid:1 1:3.0 2:0.5
1 qid:1 1:2.0 2:-0.3
0 qid:1 1:1.0 2:0.9
0 qid:1 1:0.5 2:-0.2
2 qid:2 1:2.5 2:-0.8
0 qid:2 1:0.2 2:0.7
1 qid:2 1:1.4 2:0.1
1 qid:3 1:4.0 2:1.0
0 qid:3 1:3.0 2:-1.0
2 qid:3 1:5.0 2:0.0
"""


def test_rank_loss_ranks_hand_written_queries(tmp_path):
    data = tmp_path / "rank.svm"
    data.write_text(RANKING)
    model = tmp_path / "rank.model"
    ok(run_pegasos("train", "--loss", "rank", "-l", "0.01", "-T", "2000", "-q", data, model))
    assert _header(model)["task"] == "ranking"
    r = json.loads(ok(run_pegasos("eval", data, model, "--json")).stdout)
    assert r["task"] == "ranking" and r["queries"] == 3
    assert r["pairs"] == 5 + 3 + 3                  # ordered pairs y_a > y_b within each query
    assert r["pairwise_accuracy"] == 1.0
    assert r["ndcg_at_10"] == pytest.approx(1.0, abs=1e-15)
    text = ok(run_pegasos("eval", data, model)).stdout
    assert "pairwise accuracy 1.0000" in text and "NDCG@10      1.0000" in text
    assert r["ndcg_queries"] == 3 and "(over the" not in text
    # a query without a relevant example (all 0) has no ideal DCG: left out of the mean, and said so
    data.write_text(RANKING + "0 qid:7 1:1 2:1\n0 qid:7 1:2 2:0\n")
    r = json.loads(ok(run_pegasos("eval", data, model, "--json")).stdout)
    assert (r["queries"], r["ndcg_queries"]) == (4, 3) and r["ndcg_at_10"] == pytest.approx(1.0, abs=1e-15)
    assert "NDCG@10      1.0000   (over the 3 of 4 queries with a relevant example)" in \
        ok(run_pegasos("eval", data, model)).stdout
    one_line_error(run_pegasos("predict", "--labels", data, model), "ranking")


def test_log_loss_predict_proba(tmp_path):
    data = data_file("heart_scale/heart_scale")
    model = tmp_path / "log.model"
    ok(run_pegasos("train", "--loss", "log", "-l", "1e-2", "--epochs", "30", "-q", data, model))
    f = np.loadtxt(ok(run_pegasos("predict", data, model)).stdout.splitlines())
    p = np.loadtxt(ok(run_pegasos("predict", "--proba", data, model)).stdout.splitlines())
    assert np.all((p > 0) & (p < 1))
    np.testing.assert_allclose(p, 1.0 / (1.0 + np.exp(-f)), rtol=1e-12)
    X, y = pegasos.load_svmlight(str(data))
    np.testing.assert_allclose(pegasos.load_model(model).predict_proba(X), p, rtol=1e-12)
    r = json.loads(ok(run_pegasos("eval", data, model, "--json")).stdout)
    y_pm = np.where(y > 0, 1.0, -1.0)
    assert r["log_loss"] == pytest.approx(np.mean(np.logaddexp(0, -y_pm * f)), rel=1e-12)
    assert r["accuracy"] > 0.8
    # multiclass one-vs-rest with the log loss: one probability per class
    mc = tmp_path / "mc.model"
    ok(run_pegasos("train", "--loss", "log", "-l", "1e-3", "--epochs", "5", "-q", data_file(DNA), mc))
    fm = np.loadtxt(ok(run_pegasos("predict", data_file(DNA_T), mc)).stdout.splitlines())
    pm = np.loadtxt(ok(run_pegasos("predict", "--proba", data_file(DNA_T), mc)).stdout.splitlines())
    # each class's logistic probability over their sum (LIBLINEAR's -b 1, scikit-learn's predict_proba)
    logistic = 1.0 / (1.0 + np.exp(-fm))
    np.testing.assert_allclose(pm, logistic / logistic.sum(axis=1, keepdims=True), rtol=1e-12)   # small ones too
    np.testing.assert_allclose(pm.sum(axis=1), 1.0, rtol=1e-12)
    assert pm.min() < 1e-6
    Xt, yt = pegasos.load_svmlight(str(data_file(DNA_T)))
    np.testing.assert_allclose(pegasos.load_model(mc).predict_proba(Xt), pm, rtol=1e-12)
    # eval's multiclass log loss is the cross-entropy of those probabilities (it printed none)
    classes = np.unique(yt)
    expected = -np.mean(np.log(pm[np.arange(yt.shape[0]), np.searchsorted(classes, yt)]))
    r = json.loads(ok(run_pegasos("eval", data_file(DNA_T), mc, "--json")).stdout)
    assert r["log_loss"] == pytest.approx(expected, rel=1e-9)
    assert f"log loss     {r['log_loss']:.6g}"[:18] in ok(run_pegasos("eval", data_file(DNA_T), mc)).stdout
    hinge = tmp_path / "hinge.model"
    ok(run_pegasos("train", "-l", "1e-2", "--epochs", "2", "-q", data, hinge))
    one_line_error(run_pegasos("predict", "--proba", data, hinge), "--loss log")


def test_eps_insensitive_regression_eval_matches_numpy(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 6)) * (rng.random((300, 6)) < 0.7)
    y = X @ np.array([1.5, -2.0, 0.0, 0.7, 3.0, -0.4]) + 0.05 * rng.normal(size=300)
    data = tmp_path / "reg.svm"
    data.write_text("".join(f"{float(t)!r} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0) + "\n"
                            for t, row in zip(y, X)))
    model = tmp_path / "reg.model"
    ok(run_pegasos("train", "--loss", "eps-insensitive", "-p", "0.1", "-l", "1e-4", "--epochs", "50",
                   "--sampling", "permutation", "--average-from", "0.5", "-q", data, model))
    assert _header(model)["epsilon"] == "0.1"
    f = np.loadtxt(ok(run_pegasos("predict", data, model)).stdout.splitlines())
    r = json.loads(ok(run_pegasos("eval", data, model, "--json")).stdout)
    assert r["task"] == "regression" and r["examples"] == 300
    assert r["mse"] == pytest.approx(np.mean((f - y) ** 2), rel=1e-12)
    assert r["mae"] == pytest.approx(np.mean(np.abs(f - y)), rel=1e-12)
    assert r["r2"] == pytest.approx(metrics.r2_score(y, f), rel=1e-12)
    assert r["eps_insensitive_loss"] == pytest.approx(np.mean(np.maximum(0, np.abs(f - y) - 0.1)), rel=1e-12)
    assert r["r2"] > 0.99
    obj = json.loads(ok(run_pegasos("objective", data, model, "--json")).stdout)
    w = pegasos.load_model(model).w
    assert obj["objective"] == pytest.approx(0.5e-4 * w @ w + r["eps_insensitive_loss"], rel=1e-12)


def test_eval_f1_of_a_class_never_predicted_matches_sklearn(dna, tmp_path):
    """A class with support that the model never predicts has F1 = 2TP/(2TP+FP+FN) = 0
    (precision is undefined, F1 is not) and counts in the macro F1, as in sklearn."""
    X, y = dna
    model = train_multiclass(X, y, method="ovr", lam=1e-3, epochs=5)
    model.biases[1] = -1e6                     # class 2 never wins
    pred = model.predict(X)
    assert not np.any(pred == 2.0) and np.any(y == 2.0)
    r = pegasos.evaluate(model, X, y)
    _, _, f1, _ = metrics.precision_recall_fscore_support(y, pred, labels=[1.0, 2.0, 3.0], zero_division=0)
    assert [c["f1"] for c in r["per_class"]] == pytest.approx(list(f1), abs=1e-15)
    assert r["per_class"][1]["precision"] is None and r["per_class"][1]["recall"] == 0.0
    assert r["macro_f1"] == pytest.approx(metrics.f1_score(y, pred, average="macro", zero_division=0), abs=1e-15)
    # the same through the command
    model.save(tmp_path / "m.model")
    out = json.loads(ok(run_pegasos("eval", data_file(DNA), tmp_path / "m.model", "--json")).stdout)
    assert out["macro_f1"] == pytest.approx(r["macro_f1"], abs=1e-15)


@pytest.mark.parametrize("loss", ["eps-insensitive", "rank"])
def test_multiclass_with_a_non_classification_loss_is_refused(tmp_path, loss):
    data = tmp_path / "rank.svm"
    data.write_text(RANKING)
    r = run_pegasos("train", "-q", "--loss", loss, "--multiclass", "ovr", data, tmp_path / "m.model")
    one_line_error(r, "--multiclass", loss, status=2)
    assert not (tmp_path / "m.model").exists()


# ------------------------------------------------------------------ 5. Crammer-Singer's dual passes (the default)

def _cs_reference(X, yc, K, lam, cost=None, weights=None, bias=False):
    """f* of Crammer-Singer (paper Eq. (20)) by SciPy's SLSQP on the primal QP, independent of pegasos:
    min 1/2 ||W||^2 + sum_i C_i xi_i s.t. xi_i >= delta(y_i, r) + <w_r - w_{y_i}, x_i> for every r, C_i =
    weight_i / (lambda m); returned in Eq. (20)'s scaling (times lambda).  Small problems only."""
    from scipy.optimize import LinearConstraint, minimize

    X = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
    if bias:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    m, n = X.shape
    cost = (1.0 - np.eye(K)) if cost is None else np.asarray(cost, dtype=np.float64).reshape(K, K)
    C = (np.ones(m) if weights is None else np.asarray(weights, dtype=np.float64)) / (lam * m)
    rows, rhs = [], []
    for i in range(m):
        for r in range(K):
            a = np.zeros(K * n + m)          # a . z >= b:  xi_i + <w_{y_i} - w_r, x_i> >= delta
            a[K * n + i] = 1.0
            if r != yc[i]:
                a[yc[i] * n:(yc[i] + 1) * n] += X[i]
                a[r * n:(r + 1) * n] -= X[i]
            rows.append(a)
            rhs.append(cost[yc[i], r])
    A, b = np.array(rows), np.array(rhs)
    fun = lambda z: 0.5 * z[:K * n] @ z[:K * n] + C @ z[K * n:]                    # noqa: E731
    jac = lambda z: np.concatenate([z[:K * n], C])                               # noqa: E731
    hess = np.diag(np.concatenate([np.ones(K * n), np.zeros(m)]))
    res = minimize(fun, np.concatenate([np.zeros(K * n), cost.max(axis=1)[yc]]), jac=jac, hess=lambda z: hess,
                   method="trust-constr", constraints=[LinearConstraint(A, b, np.inf)],
                   options={"maxiter": 20000, "gtol": 1e-11, "xtol": 1e-13})
    assert res.status in (1, 2), res.message
    return lam * res.fun


def _small_multiclass(seed, m=30, n=3, K=3, empty_rows=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K, n)) * 1.5
    yc = rng.integers(0, K, size=m)
    X = centers[yc] + rng.normal(size=(m, n))
    X[:empty_rows] = 0.0
    return sp.csr_matrix(X), (yc + 1).astype(np.float64), yc


def _liblinear_cs(X, y, lam, bias, class_weight):
    """f* of Crammer-Singer from LIBLINEAR -s 4 -e 1e-8 (-B 1: its constant feature, regularised, is ours
    "feature"; -wi: class weights), in Eq. (20)'s scaling."""
    from liblinear.liblinearutil import parameter, problem, train

    classes = np.unique(y)
    m = X.shape[0]
    weights = "".join(f" -w{int(c)} {w!r}" for c, w in (class_weight or {}).items())
    model = train(problem(y, X), parameter(f"-s 4 -c {1.0 / (lam * m)!r} -B {1 if bias else -1} -e 1e-8 -q"
                                           + weights))
    W, b = np.zeros((classes.size, X.shape[1])), np.zeros(classes.size)
    for li, label in enumerate(model.get_labels()):
        w, bias_weight = model.get_decfun(li)
        c = int(np.searchsorted(classes, label))
        W[c], b[c] = w, bias_weight
    yc = np.searchsorted(classes, y)
    c_i = np.ones(m) if not class_weight else np.array([class_weight.get(v, 1.0) for v in y])
    return ref.cs_objective(X, yc, W, b, lam, weights=c_i, bias_regularized=bias)


@pytest.mark.parametrize("seed, lam, bias, costs, weighted, empty", [
    (1, 1e-2, "none", False, False, 0),
    (2, 1e-3, "feature", False, False, 0),
    (4, 1e-2, "feature", False, True, 0),
    (6, 1e-4, "none", False, False, 2),        # rows of zeros: their loss is 1 whatever W is
    (3, 1e-2, "none", True, False, 0),          # costs: the QP of SciPy
    (5, 1e-3, "none", True, True, 3),
])
def test_crammer_singer_default_is_certified_against_an_independent_optimum(seed, lam, bias, costs, weighted,
                                                                             empty):
    X, y, yc = _small_multiclass(seed, empty_rows=empty)
    m, K = X.shape[0], 3
    cost = np.array([[0, 1, 2], [1, 0, 1], [3, 1, 0]], dtype=np.float64) if costs else None
    class_weight = {1.0: 2.0, 3.0: 0.5} if weighted else None
    weights = None if not weighted else np.where(yc == 0, 2.0, np.where(yc == 2, 0.5, 1.0))
    if costs:       # LIBLINEAR has no costs; the QP solver is good to about 1e-6 of f*
        f_star, slack = _cs_reference(X, yc, K, lam, cost, weights, bias == "feature"), 2e-6
    else:
        f_star, slack = _liblinear_cs(X, y, lam, bias == "feature", class_weight), 1e-7
    kw = dict(lam=lam, multiclass="crammer-singer", bias=bias, class_weight=class_weight,
              cost=None if cost is None else tuple(cost.ravel()))
    model = pegasos.fit((X, y), **kw)
    info = model.info
    assert "iterations" not in info and info["finish"] == "dual" and info["solver"] == "dual"
    assert info["stop"] == "certified"
    f = ref.cs_objective(X, yc, model.W, model.biases, lam, cost, weights, bias_regularized=bias == "feature")
    assert f == pytest.approx(pegasos.objective(model, X, y)["objective"], rel=1e-12)
    gap = float(info["certified_gap"])
    assert gap <= 0.002
    assert f >= f_star * (1 - slack)                         # nothing beats the optimum
    assert (f - f_star) / f <= gap + slack                   # the certificate holds
    # the header retrains it: T = 0 and finish_passes, W to the bit
    again = pegasos.fit((X, y), pegasos.TrainOptions.from_header(info), multiclass="crammer-singer", bias=bias,
                        class_weight=class_weight, cost=kw["cost"])
    np.testing.assert_array_equal(again.W, model.W)
    np.testing.assert_array_equal(again.biases, model.biases)


def test_crammer_singer_default_on_dna_matches_liblinear_s4(dna):
    X, y = dna
    m = X.shape[0]
    yc = np.searchsorted(np.unique(y), y)
    for lam in (1e-3, 1e-4):
        W = _liblinear_weights(X, y, 4, 1.0 / (lam * m))
        f_star = ref.cs_objective(X, yc, W, np.zeros(3), lam)       # LIBLINEAR converged at -e 1e-6
        model = pegasos.fit((X, y), lam=lam, multiclass="crammer-singer", bias="none")
        f = pegasos.objective(model, X, y)["objective"]
        gap = float(model.info["certified_gap"])
        assert gap <= 0.002 and f >= f_star * (1 - 1e-6)
        assert (f - f_star) / f <= gap + 1e-6
    # the Pegasos run alone (finish none, as before): 10 doublings left lambda = 1e-4 about 11% above
    plain = pegasos.fit((X, y), lam=1e-4, multiclass="crammer-singer", bias="none", finish="none")
    assert "finish" not in plain.info and pegasos.objective(plain, X, y)["objective"] > f


def test_crammer_singer_passes_start_from_zero_only():
    X, y, _ = _small_multiclass(7)
    with pytest.raises(pegasos.ParameterError, match="start from W = 0"):
        pegasos.fit((X, y), lam=1e-2, multiclass="crammer-singer", epochs=2, finish="dual")
    with pytest.raises(pegasos.ParameterError, match="start from W = 0"):
        pegasos.fit((X, y), lam=1e-2, multiclass="crammer-singer", epochs=2, finish_passes=3)
    # a given length with the defaults: Pegasos alone, as before (the passes cannot start from its W)
    model = pegasos.fit((X, y), lam=1e-2, multiclass="crammer-singer", epochs=2)
    assert "finish" not in model.info and int(model.info["iterations"]) > 0


def test_cs_passes_keep_the_constraints_and_w_of_alpha():
    """Each example's K variables sum to 0 and stay in their box, and the maintained W is sum alpha x."""
    from pegasos import _dual

    X, y, yc = _small_multiclass(8, m=60, n=5, K=4)
    m, n, K = X.shape[0], X.shape[1], 4
    yc = yc.astype(np.int32) % K
    C = np.full(m, 0.7)
    qii = np.asarray(X.multiply(X).sum(axis=1)).ravel() + 1.0
    alpha, W = np.zeros((m, K)), np.zeros((n + 1, K))
    values = np.empty(50)
    got = _dual.cs_passes(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, yc, (1 - np.eye(K)).ravel(),
                          C, qii, 1.0, alpha, W, np.arange(m, dtype=np.int64), np.array([m, 0]), np.array([np.inf, 0.1]),
                          np.tile(np.arange(K, dtype=np.int32), (m, 1)), np.full(m, K, dtype=np.int32),
                          np.array([3], dtype=np.uint64), 50, values)
    assert got == 50 and np.all(np.diff(values) >= -1e-12)        # each block step raises D
    np.testing.assert_allclose(alpha.sum(axis=1), 0.0, atol=1e-12)
    own = alpha[np.arange(m), yc]
    assert np.all(own >= -1e-15) and np.all(own <= 0.7 + 1e-15)
    others = alpha.copy()
    others[np.arange(m), yc] = 0.0
    assert np.all(others <= 1e-15)
    np.testing.assert_allclose(W[:n], X.T @ alpha, atol=1e-10)
    np.testing.assert_allclose(W[n], alpha.sum(axis=0), atol=1e-10)
    with pytest.raises(ValueError, match="class index"):
        _dual.cs_passes(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, yc + 1,
                        (1 - np.eye(K)).ravel(), C, qii, 1.0, alpha, W, np.arange(m, dtype=np.int64),
                        np.array([m, 0]), np.array([np.inf, 0.1]), np.tile(np.arange(K, dtype=np.int32), (m, 1)),
                        np.full(m, K, dtype=np.int32), np.array([3], dtype=np.uint64), 1, values)


def test_crammer_singer_passes_that_do_not_certify_say_so(dna, monkeypatch):
    """At their bound of work, uncertified, the passes' model is written with the certificate their dual
    bound proves for it, its stop "bound" and a ConvergenceWarning."""
    from pegasos import finish

    X, y = dna
    yc = np.searchsorted(np.unique(y), y)
    lam = 1e-4
    W = _liblinear_weights(X, y, 4, 1.0 / (lam * X.shape[0]))
    f_star = ref.cs_objective(X, yc, W, np.zeros(3), lam)
    monkeypatch.setattr(finish, "CS_UPDATES", 1)          # one pass, then the check: far from certified
    with pytest.warns(pegasos.ConvergenceWarning, match="not certified"):
        model = pegasos.fit((X, y), lam=lam, multiclass="crammer-singer", bias="none")
    f = pegasos.objective(model, X, y)["objective"]
    gap = float(model.info["certified_gap"])
    assert model.info["stop"] == "bound" and model.info["solver"] == "dual"
    assert gap > 0.002 and (f - f_star) / f <= gap + 1e-7


def test_cs_passes_shrink_and_resume_exactly(dna):
    """Examples at alpha_i = 0 with the margin well met leave the passes (dna at lambda = 1e-4: 2000
    examples, about 300 active after 1000 passes, and the work of 600 passes 0.46 of theirs without), and two calls of p passes give one call of 2p, bit for
    bit (the state in active, counts and bounds)."""
    from pegasos import _dual

    X, y = dna
    m, n = X.shape
    yc = np.searchsorted(np.unique(y), y).astype(np.int32)
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, yc, (1 - np.eye(3)).ravel(),
            np.full(m, 1.0 / (1e-4 * m)), np.asarray(X.multiply(X).sum(axis=1)).ravel(), 0.0)

    def fresh():
        return [np.zeros((m, 3)), np.zeros((n + 1, 3)), np.arange(m, dtype=np.int64), np.array([m, 0]),
                np.array([np.inf, 0.1]), np.tile(np.arange(3, dtype=np.int32), (m, 1)), np.full(m, 3, dtype=np.int32),
                np.array([9], dtype=np.uint64)]

    one, two = fresh(), fresh()
    values = np.empty(600)
    assert _dual.cs_passes(*args, *one, 600, values) == 600
    for _ in range(2):
        assert _dual.cs_passes(*args, *two, 300, values) == 300
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    assert one[3][1] < 0.6 * 600 * 3 * (m + X.nnz)   # shrunk examples cost nothing (0.46 measured)
    np.testing.assert_allclose(one[1][:n], X.T @ one[0], atol=1e-9)


@pytest.mark.parametrize("seed, bias, costs, weighted", [(11, "none", False, False), (12, "feature", True, True)])
def test_crammer_singer_duality_gap_bounds_the_optimum(seed, bias, costs, weighted, tmp_path):
    """objective --gap of a Crammer-Singer model: the passes' dual bound is below f* (the independent
    optimum), the gap holds for the model, and a loose model's gap is larger than a certified one's."""
    X, y, yc = _small_multiclass(seed)
    lam, K = 1e-2, 3
    cost = np.array([[0, 2, 1], [1, 0, 1], [1, 3, 0]], dtype=np.float64) if costs else None
    class_weight = {2.0: 3.0} if weighted else None
    weights = None if not weighted else np.where(yc == 1, 3.0, 1.0)
    f_star = (_cs_reference(X, yc, K, lam, cost, weights, bias == "feature") if costs
              else _liblinear_cs(X, y, lam, bias == "feature", class_weight))
    kw = dict(lam=lam, multiclass="crammer-singer", bias=bias, class_weight=class_weight,
              cost=None if cost is None else tuple(cost.ravel()))
    loose = pegasos.fit((X, y), epochs=1, **kw)
    tight = pegasos.fit((X, y), **kw)
    for model in (loose, tight):
        g = pegasos.duality_gap(model, X, y)
        assert g["primal"] == pytest.approx(pegasos.objective(model, X, y)["objective"], rel=1e-12)
        assert g["dual"] <= f_star * (1 + 2e-6) and g["primal"] >= f_star * (1 - 2e-6)
        assert g["rel_gap"] >= (g["primal"] - f_star) / g["primal"] - 2e-6
    assert pegasos.duality_gap(tight, X, y)["rel_gap"] <= 0.002 < pegasos.duality_gap(loose, X, y)["rel_gap"]
    # the command prints it for a model file
    data, path = tmp_path / "d.svm", tmp_path / "m.model"
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, y, str(data), zero_based=False)
    pegasos.save_model(tight, path)
    out = ok(run_pegasos("objective", "--gap", data, path)).stdout
    assert "dual bound" in out and "relative gap" in out


def test_cs_passes_shrink_classes_within_an_example():
    """A class at alpha_i^r = 0 whose gradient is below every class inside its bound leaves example i's
    subproblem (LIBLINEAR -s 4's shrinking): with 8 well-separated classes most examples keep 2-3 of them,
    the work counts only those, and the model is the certified one all the same."""
    from pegasos.certificate import CrammerSingerPasses

    X, y, yc = _small_multiclass(21, m=400, n=6, K=8)
    m, K = X.shape[0], 8
    cs = CrammerSingerPasses(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, X.shape[1], yc,
                             (1 - np.eye(K)).ravel(), np.ones(m), 1e-2, 0.0, seed=1)
    cs.run(3)
    kept = cs._state[4]
    assert kept.mean() < K / 2 and np.all(kept >= 1)
    assert cs.work < 3 * K * (m + X.nnz)
    model = pegasos.fit((X, y), lam=1e-2, multiclass="crammer-singer", bias="none")
    f_star = _liblinear_cs(X, y, 1e-2, False, None)
    f = pegasos.objective(model, X, y)["objective"]
    assert (f - f_star) / f <= float(model.info["certified_gap"]) + 1e-7 <= 0.002 + 1e-7


def test_crammer_singer_tol_gap_certifies_to_it():
    """tol_gap with Crammer-Singer: its dual passes from W = 0 until certified within it (it was refused)."""
    X, y, yc = _small_multiclass(31)
    f_star = _liblinear_cs(X, y, 1e-2, False, None)
    for eps in (1e-2, 1e-5):
        model = pegasos.fit((X, y), lam=1e-2, multiclass="crammer-singer", bias="none", tol_gap=eps)
        gap = float(model.info["certified_gap"])
        f = pegasos.objective(model, X, y)["objective"]
        assert model.info["tol"] == repr(eps) and model.info["stop"] == "certified"
        assert gap <= eps and (f - f_star) / f <= gap + 1e-7


def _right_edges(line):
    """Where each space-separated cell of ``line`` ends."""
    import re

    return [m.end() for m in re.finditer(r"\S+", line)]


def test_eval_tables_are_right_aligned_for_labels_and_counts_of_any_width(tmp_path):
    """Labels 1, 10 and 200 and counts 5 to 123456: every column of the per-class table and of the confusion
    matrix ends at one place (before, the matrix's columns were as wide as the widest label + 1, so a
    count of 6 digits ran into the column before it, and the per-class rows ended left of their header)."""
    counts = {1: 123456, 10: 5, 200: 7}
    lines = [f"{label} {j}:1" for j, (label, n) in enumerate(counts.items(), start=1) for _ in range(n)]
    data = tmp_path / "mc.svm"
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "mc.model"
    assert run_pegasos("train", "-q", data, model).returncode == 0
    r = json.loads(run_pegasos("eval", "--json", data, model).stdout)
    text = run_pegasos("eval", data, model).stdout.splitlines()
    at = text.index("per class:")
    table = text[at + 1:at + 2 + len(counts)]
    assert table[0].split() == ["label", "support", "precision", "recall", "F1"]
    assert [row.split()[:2] for row in table[1:]] == [[p["label"], str(p["support"])] for p in r["per_class"]]
    assert len({tuple(_right_edges(row)) for row in table}) == 1, "\n".join(table)
    at = text.index("confusion matrix (rows: true label, columns: predicted label)")
    matrix = text[at + 1:at + 2 + len(counts)]
    assert matrix[0].split() == r["labels"] == ["1", "10", "200"]
    assert [[int(v) for v in row.split()[1:]] for row in matrix[1:]] == r["confusion"]
    assert r["confusion"][0][0] == 123456 and max(map(max, r["confusion"][1:])) in (5, 7)
    edges = [_right_edges(row) for row in matrix]
    assert all(e[-3:] == edges[0] for e in edges[1:]) and len({tuple(e) for e in edges[1:]}) == 1, \
        "\n".join(matrix)
