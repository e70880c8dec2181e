"""The training core: TrainOptions (validation, derived values, the model header),
pegasos.fit (which trainer a run needs), the CLI's spellings, and the module layers.

Data are generated here (no shared files needed)."""

import ast
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos
from pegasos.errors import ExampleError, ParameterError, PegasosError
from pegasos.options import HEADER_FIELDS, TrainOptions

from conftest import ok, run_pegasos

ROOT = pathlib.Path(__file__).resolve().parent.parent


def make_data(m=300, n=20, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=0.3, random_state=rng, format="csr")
    W = rng.normal(size=(classes, n))
    scores = X @ W.T
    y = np.argmax(scores, axis=1).astype(np.float64) + 1.0 if classes > 2 else np.where(scores[:, 0] > 0, 1.0, -1.0)
    return X, y


def write_svm(path, X, y, qid=None):
    X = sp.csr_matrix(X)
    lines = []
    for i in range(X.shape[0]):
        row = X.getrow(i)
        feats = " ".join(f"{j + 1}:{v!r}" for j, v in zip(row.indices.tolist(), row.data.tolist()))
        q = f" qid:{int(qid[i])}" if qid is not None else ""
        lines.append(f"{y[i]:g}{q} {feats}")
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------ validation --

@pytest.mark.parametrize("settings, api_name, cli_name", [
    (dict(step_offset=-1.0), "step_offset=", "--t0"),
    (dict(lam=0.0), "lam=", "--lambda"),
    (dict(batch_size=0), "batch_size=", "-k/--batch-size"),
    (dict(average_from=1.5), "average_from=", "--average-from"),
    (dict(sampling="random"), "sampling=", "--sampling"),
    (dict(epochs=float("nan")), "epochs=", "--epochs"),
    (dict(seed=-3), "seed=", "--seed"),
    (dict(kernel="rbf", gamma=-1.0), "gamma=", "--gamma"),
    (dict(shuffle_buffer=0), "shuffle_buffer=", "--stream / --shuffle-buffer"),      # (the buffer --stream trains through)
])
def test_errors_name_the_option_as_spelled(settings, api_name, cli_name):
    with pytest.raises(ParameterError) as api:
        TrainOptions(**settings).validate()
    assert str(api.value).startswith(api_name.rstrip("=") + ":"), str(api.value)     # "lam: ...", not "lam=: ..."
    with pytest.raises(ParameterError) as cli:
        TrainOptions(spelling="cli", **settings).validate()
    assert str(cli.value).startswith(cli_name + ":"), str(cli.value)


@pytest.mark.parametrize("settings, fragment", [
    (dict(iterations=10, epochs=2.0), "not both"),
    (dict(average=True, average_from=0.5), "not both"),
    (dict(loss="rank", sampling="permutation"), "pairs i.i.d."),
    (dict(loss="eps-insensitive", class_weight={1.0: 2.0}), "apply to classification"),
    (dict(multiclass="crammer-singer", loss="log"), "own multiclass hinge"),
    (dict(cost=(0.0, 1.0, 1.0, 0.0)), "needs"),
    (dict(kernel="rbf", bias="feature"), "not supported"),
    (dict(gamma=0.5), "gamma= applies to kernel= poly, rbf or sigmoid"),
    (dict(kernel="rbf", budget=3, average=True), "budget cannot be combined"),
    (dict(shuffle_buffer=10, multiclass="ovr"), "use --cache FILE"),
])
def test_conflicting_settings(settings, fragment):
    with pytest.raises(ParameterError, match=fragment):
        TrainOptions(**settings).validate()


def test_cli_names_the_option(tmp_path):
    X, y = make_data()
    data = write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "--t0", "-1", data, tmp_path / "m")
    assert r.returncode == 2 and "--t0" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "m").exists()


# -------------------------------------------------------------- derived values --

def test_plan_derives_T_averaging_offset_and_projection():
    plan = TrainOptions(epochs=2.5, batch_size=4, sampling="permutation", average_from=0.5,
                        step_offset=1e5, lam=1e-3).plan(101)
    assert plan.T == int(np.ceil(2.5 * np.ceil(101 / 4)))           # epochs * ceil(m/k)
    assert plan.avg_start == int(np.ceil(0.5 * plan.T))
    assert plan.t0 == 1e5
    assert not plan.projection
    assert TrainOptions(epochs=2.0, batch_size=4, sampling="uniform").plan(101).T == int(np.ceil(2.0 * 101 / 4))
    # the presets fill what is left unset
    auto, paper = TrainOptions(), TrainOptions(preset="paper")
    assert (auto.sampling, auto.average_from, auto.step_is_automatic, auto.length_is_automatic) == \
        ("permutation", 0.5, True, True)
    assert (paper.sampling, paper.average, paper.average_from, paper.step_offset) == ("uniform", False, None, 0.0)
    assert TrainOptions(loss="rank").sampling == "uniform"
    assert TrainOptions(average=False).average_from is None            # the last iterate, asked for
    assert TrainOptions(kernel="rbf", budget=10).average_from is None  # a budget cannot average
    assert TrainOptions(loss="squared-hinge").plan(10).projection    # forced (Sec. 5)
    assert TrainOptions(average=True, iterations=7).plan(10).avg_start == 1
    with pytest.raises(ParameterError, match="larger than the number of examples"):
        TrainOptions(batch_size=11).plan(10)
    with pytest.raises(ParameterError, match="weeks"):
        TrainOptions(iterations=2**64 + 100).validate()
    with pytest.raises(ParameterError, match="weeks"):
        TrainOptions(epochs=1e30).validate().plan(1000)


@pytest.mark.parametrize("settings", [
    dict(lam=1e-3, epochs=3, sampling="permutation", average_from=0.5, step_offset=2e4, seed=4),
    dict(lam=1e-2, iterations=500, batch_size=8, projection=True, average=True, bias="feature"),
    dict(lam=1e-3, epochs=2, loss="log", class_weight={1.0: 3.0}, bias="unregularized"),
    dict(lam=1e-3, epochs=2, loss="eps-insensitive", epsilon=0.25, sampling="sequential"),
])
def test_header_reads_back_into_the_same_options(settings):
    X, y = make_data()
    if settings.get("loss") == "eps-insensitive":
        y = np.asarray(X.sum(axis=1)).ravel()
    model = pegasos.fit((X, y), TrainOptions(**settings))
    back = TrainOptions.from_header(model.info | {"loss": model.loss, "bias_mode": model.bias_mode,
                                                  "epsilon": model.info.get("epsilon", "-")})
    plan = back.plan(X.shape[0])
    again = back.header(plan)
    for key, value in again.items():
        assert model.info[key] == value, key
    # retraining from the header's options gives the same weights (T is recorded exactly)
    model2 = pegasos.fit((X, y), back)
    np.testing.assert_array_equal(model.w, model2.w)


def test_header_table_fields_exist():
    names = {f for _, f, _ in HEADER_FIELDS}
    assert names <= set(TrainOptions.__dataclass_fields__)


# ------------------------------------------------------------------------ fit --

def test_fit_picks_the_trainer(tmp_path):
    X, y = make_data()
    binary = pegasos.fit((X, y), lam=1e-3, epochs=2, preset="paper")
    assert type(binary).__name__ == "LinearModel" and binary.task == "binary"
    same = pegasos.train(X, y, lam=1e-3, epochs=2)           # the keyword form keeps the paper's defaults
    np.testing.assert_array_equal(binary.w, same.w)
    auto = pegasos.fit((X, y), lam=1e-3, epochs=2)
    assert auto.info["step_offset_rule"] == "calibrated" and float(auto.info["step_offset"]) > 0
    assert auto.info["sampling"] == "permutation" and auto.info["average_from"] == "0.5"

    X3, y3 = make_data(classes=3)
    multi = pegasos.fit((X3, y3), lam=1e-3, epochs=2)
    assert type(multi).__name__ == "MulticlassModel" and multi.method == "ovr" and multi.n_classes == 3
    cs = pegasos.fit((X3, y3), lam=1e-3, epochs=2, multiclass="crammer-singer")
    assert cs.method == "crammer-singer"

    reg = pegasos.fit((X, np.asarray(X.sum(axis=1)).ravel()), loss="eps-insensitive", epochs=2)
    assert reg.task == "regression" and reg.labels is None

    kern = pegasos.fit((X, y), kernel="rbf", iterations=300)
    assert type(kern).__name__ == "KernelModel"

    data = write_svm(tmp_path / "d.svm", X, y)
    from_file = pegasos.fit(str(data), lam=1e-3, epochs=2, preset="paper")
    np.testing.assert_array_equal(from_file.w, binary.w)
    assert from_file.info["train_file"] == str(data) and from_file.info["index_base"] == "1"
    streamed = pegasos.fit(str(data), lam=1e-3, epochs=2, shuffle_buffer=10**6)
    assert streamed.info["sampling"] == "shuffle-buffer"


def test_fit_ranking_needs_qid_and_trains_with_it():
    X, y = make_data()
    qid = np.repeat(np.arange(30), 10)
    with pytest.raises(ParameterError, match="qid"):
        pegasos.fit((X, y), loss="rank", iterations=100)
    model = pegasos.fit((X, y, qid), loss="rank", iterations=100)
    assert model.task == "ranking"


def test_sample_weight_composes_with_class_weight():
    X, y = make_data()
    a = pegasos.fit((X, y, None, np.full(y.shape, 2.0)), lam=1e-3, epochs=2)
    b = pegasos.fit((X, y), lam=1e-3, epochs=2, class_weight={-1.0: 2.0, 1.0: 2.0})
    np.testing.assert_array_equal(a.w, b.w)
    with pytest.raises(ExampleError, match="sample weight"):
        pegasos.fit((X, y, None, np.r_[np.ones(len(y) - 1), np.nan]))


def test_labels_that_are_not_numbers_are_a_pegasos_error():
    X, y = make_data()
    text = np.where(y > 0, "spam", "ham")
    with pytest.raises(PegasosError, match="'ham' is not a number|'spam' is not a number"):
        pegasos.train(X, text)
    with pytest.raises(PegasosError, match="not a number"):
        pegasos.fit((X, list(text)))


def test_multiclass_n_features_below_the_columns_is_refused_not_a_crash():
    code = ("import numpy as np, scipy.sparse as sp, pegasos\n"
            "X = sp.random(60, 50, density=0.5, random_state=0, format='csr')\n"
            "y = np.arange(60) % 3\n"
            "try:\n    pegasos.train_multiclass(X, y, n_features=3, iterations=10)\n"
            "except pegasos.ParameterError as e:\n    print('refused:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "refused:" in r.stdout and "n_features = 3" in r.stdout


# ------------------------------------------------------------------ the CLI --

def test_model_dash_goes_to_stdout_and_the_summary_to_stderr(tmp_path):
    X, y = make_data()
    data = write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "-l", "1e-3", "--epochs", "2", data, "-", cwd=tmp_path)
    out = ok(r)
    assert out.startswith("pegasos_model 1\n") and out.endswith("end\n")
    assert "trained on" in r.stderr and "trained on" not in out
    assert not (tmp_path / "-").exists()
    ok(run_pegasos("train", "-q", "-l", "1e-3", "--epochs", "2", data, tmp_path / "file.model"))
    assert (tmp_path / "file.model").read_text() == out


def test_liblinear_class_weight_spelling(tmp_path):
    X, y = make_data()
    data = write_svm(tmp_path / "d.svm", X, y)
    ok(run_pegasos("train", "-q", "-w1", "5", "--epochs", "2", data, tmp_path / "a"))
    ok(run_pegasos("train", "-q", "-w", "1:5", "--epochs", "2", data, tmp_path / "b"))
    a = (tmp_path / "a").read_text()
    assert a == (tmp_path / "b").read_text() and "class_weights 1:5.0" in a


def test_help_all_reads_in_sections():
    out = ok(run_pegasos("train", "--help-all"))
    for heading in ("Solver", "Problem", "Kernels", "Data larger than memory", "Input and output"):
        assert heading in out


# ---------------------------------------------------------------- the layers --

def _imports():
    """{module: {imported sibling modules}} and the underscore names imported across modules.  The command
    line's package pegasos/cli/ counts as modules "cli" (its __init__) and "cli.NAME"."""
    edges, underscore = {}, []
    files = [(f.stem, "") for f in sorted((ROOT / "pegasos").glob("*.py"))]
    files += [("cli" if f.stem == "__init__" else f"cli.{f.stem}", "cli/")
              for f in sorted((ROOT / "pegasos" / "cli").glob("*.py"))]
    for mod, package in files:
        path = ROOT / "pegasos" / package / (mod.split(".")[-1] + ".py" if mod != "cli" else "__init__.py")
        # a relative import names a module of the same package (level 1) or of pegasos (level 2 in cli/)
        prefix = {1: "cli." if package else "", 2: ""}
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level in prefix and (node.level == 1 or package):
                if node.module is None:          # from . import x: a module (compiled cores are private by design)
                    targets = [prefix[node.level] + a.name for a in node.names if not a.name.startswith("_")]
                else:
                    targets = [prefix[node.level] + node.module.split(".")[0]]
                    underscore += [(mod, node.module, a.name) for a in node.names if a.name.startswith("_")]
                edges.setdefault(mod, set()).update(t for t in targets if t != mod)
    return edges, underscore


def _cycles(edges):
    found = set()

    def visit(node, path):
        for nxt in edges.get(node, ()):
            if nxt in path:
                found.add(tuple(sorted(path[path.index(nxt):])))
            elif len(path) < 12:
                visit(nxt, path + [nxt])

    for start in edges:
        visit(start, [start])
    return found


def test_no_underscore_name_is_imported_across_modules():
    assert _imports()[1] == []


def test_no_import_cycle():
    edges, _ = _imports()
    assert _cycles(edges) == set()


def test_lower_layers_do_not_import_upper_ones():
    edges, _ = _imports()
    order = ["errors", "defaults", "solver", "outcome", "options", "labels", "io", "data", "model", "examples", "sampling", "linear",
             "multiclass", "kernel", "modelfile", "scoring", "stream", "trace", "trainers", "certificate", "finish", "autotune",
             "engine_dask", "api", "selection", "plot", "sklearn",
             # the command line, above everything else: shared pieces, then a module per command
             "cli.common", "cli.progress", "cli.options", "cli.notes", "cli.reading", "cli.summary", "cli.selection",
             "cli.train", "cli.shards", "cli.predict", "cli.evaluate", "cli.objective", "cli.plot", "cli.info", "cli", "cli.__main__"]
    rank = {m: i for i, m in enumerate(order)}
    for mod, targets in edges.items():
        assert mod in rank, f"{mod} is not placed in a layer"
        for t in targets:
            if t in rank:
                assert rank[t] < rank[mod], f"{mod} imports {t}"


def _header(path):
    """The model file's header lines as a dict (up to the weights)."""
    header = {}
    for line in pathlib.Path(path).read_text().splitlines()[1:]:
        key, _, value = line.partition(" ")
        if key == "weights":
            break
        header[key] = value
    return header


@pytest.mark.parametrize("solver", ["dual", "pegasos"])
def test_the_certificates_bound_the_true_excess(tmp_path, solver):
    """The two ways to a certificate, the dual solver's certified_gap in MODEL's header (-q: nothing
    printed) and pegasos objective --gap of any model (here a Pegasos run's), are true bounds: the model's
    excess over f* of an independent solver (LIBLINEAR's dual CD through scikit-learn), relative to its
    objective, is within each."""
    import json

    from sklearn.svm import LinearSVC

    from reference import objective as dense_objective

    X, y = make_data()
    lam = 1e-2
    data = write_svm(tmp_path / "d.svm", X, y)
    r = ok(run_pegasos("train", "-q", "--solver", solver, "-l", repr(lam), data, tmp_path / "m"))
    assert r == ""
    header = _header(tmp_path / "m")
    cert = json.loads(ok(run_pegasos("objective", "--gap", "--json", data, tmp_path / "m")))
    gaps = [cert["rel_gap"]] + ([float(header["certified_gap"])] if solver == "dual" else [])
    assert ("certified_gap" in header) == (solver == "dual")
    w = np.asarray(pegasos.load_model(str(tmp_path / "m")).w)
    svc = LinearSVC(loss="hinge", C=1.0 / (lam * X.shape[0]), dual=True, tol=1e-10, max_iter=200_000,
                    fit_intercept=False).fit(X, y)
    f_star = dense_objective(X.toarray(), y, lam, svc.coef_.ravel())
    primal = dense_objective(X.toarray(), y, lam, w)
    assert cert["primal"] == pytest.approx(primal, rel=1e-9) and cert["dual"] <= f_star + 1e-9
    assert primal >= f_star - 1e-9
    for gap in gaps:
        assert 0 <= gap < 0.05 and (primal - f_star) / primal <= gap + 1e-9


@pytest.mark.parametrize("rel, f_star, extra", [
    ("a9a/a9a", 0.3517618027, ()),                    # pegasos train -l 1e-4 DATA
    ("w8a/w8a", 0.1443258917, ()),
    ("a9a/a9a", 0.3517618027, ("-T", "100000")),      # the design card's command
])
def test_what_users_type_lands_within_one_percent(tmp_path, rel, f_star, extra):
    from conftest import data_file

    data = data_file(rel)
    ok(run_pegasos("train", "-q", "-l", "1e-4", *extra, data, tmp_path / "m"))
    import json

    r = json.loads(ok(run_pegasos("objective", "--json", data, tmp_path / "m")))
    assert r["objective"] <= 1.01 * f_star, (r["objective"], f_star)
    header = (tmp_path / "m").read_text()
    if extra:                          # -T: that Pegasos run, with the calibrated t0, and nothing after it
        assert "sampling permutation" in header and "step_offset_rule calibrated" in header
        assert "\nsolver pegasos\n" in header and "\nstop length\n" in header and "finish" not in header
        assert "\niterations 100000\n" in header
    else:                              # the dual from w = 0, certified: no Pegasos iteration
        assert "\nsolver dual\n" in header and "\nstop certified\n" in header
        assert "\niterations " not in header and "\nsampling " not in header and "\naveraging " not in header


def test_index_zero_hint_fits_the_command(tmp_path):
    X, y = make_data()
    data = write_svm(tmp_path / "d.svm", X, y)
    ok(run_pegasos("train", "-q", "--epochs", "1", data, tmp_path / "m"))
    r = run_pegasos("predict", "-", tmp_path / "m", input="+1 0:1\n")
    assert r.returncode == 1 and "follow the model's index base" in r.stderr and "Traceback" not in r.stderr


def test_write_protected_model_is_refused_and_stale_temporaries_removed(tmp_path):
    import os

    X, y = make_data()
    data = write_svm(tmp_path / "d.svm", X, y)
    model = tmp_path / "m"
    model.write_text("keep\n")
    model.chmod(0o444)
    r = run_pegasos("train", "-q", "--epochs", "1", data, model)
    assert r.returncode == 1 and "write-protected" in r.stderr and "Traceback" not in r.stderr
    assert model.read_text() == "keep\n"
    model.chmod(0o644)
    dead = 2**22 + 12345                    # above the usual pid_max: no such process
    with pytest.raises(ProcessLookupError):
        os.kill(dead, 0)
    stale = tmp_path / f".m.{dead}.abc.tmp"
    live = tmp_path / f".m.{os.getpid()}.def.tmp"
    other = tmp_path / f".other.{dead}.x.tmp"
    for f in (stale, live, other):
        f.write_text("half a model")
    ok(run_pegasos("train", "-q", "--epochs", "1", data, model))
    assert not stale.exists() and live.exists() and other.exists()
    assert model.read_text().startswith("pegasos_model 1")


def test_real_valued_labels_and_too_many_classes_point_to_regression(tmp_path):
    X, _ = make_data(m=60)
    y = np.linspace(0.5, 3.0, 60)                       # real-valued targets, as a regression file has
    data = write_svm(tmp_path / "r.svm", X, y)
    r = run_pegasos("train", "-q", data, tmp_path / "m")
    assert r.returncode == 1 and "line 1: label 0.5 is not an integer" in r.stderr and "--loss eps-insensitive" in r.stderr
    for command in ("cv", "search"):                    # they named "example 1", without the file
        r = run_pegasos(command, "-v", "2", data)
        assert r.returncode == 1 and f"Error: {data}, line 1: label 0.5 is not an integer" in r.stderr, r.stderr
    y_int = np.arange(60) % 30 + 1.0                    # 30 integer classes
    data = write_svm(tmp_path / "c.svm", X, y_int)
    r = run_pegasos("train", "-q", "--max-classes", "20", "--epochs", "1", data, tmp_path / "m")
    assert r.returncode == 1 and "30 classes" in r.stderr and "--max-classes" in r.stderr
    ok(run_pegasos("train", "-q", "--max-classes", "30", "--epochs", "1", data, tmp_path / "m"))
    with pytest.raises(ParameterError, match="max_classes="):
        pegasos.fit((X, y_int), max_classes=10, epochs=1)


def test_memory_bound_follows_rlimit_as():
    code = ("import resource, pegasos.data as d\n"
            "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))\n"
            "d.check_weight_memory(10_000_000, 1)\n"
            "try:\n    d.check_weight_memory(200_000_000, 1)\n"
            "except pegasos.errors.ParameterError as e:\n    print('refused', e)\n")
    r = subprocess.run([sys.executable, "-c", "import pegasos.errors\n" + code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("refused") and "RLIMIT_AS" in r.stdout


def test_stray_index_in_a_multiclass_file_names_its_line_before_allocating(tmp_path):
    X, y = make_data(m=200, classes=3)
    data = write_svm(tmp_path / "mc.svm", X, y)
    with open(data, "a") as f:
        f.write("1 2000000000:1\n")                   # one stray index: 3 x 2e9 weights
    r = run_pegasos("train", "-q", data, tmp_path / "m")
    assert r.returncode == 1 and "line 201" in r.stderr and "stray huge index" in r.stderr
    assert "n_features = 2000000000 " in r.stderr


def test_model_on_stdin_empty_model_name_and_huge_classes(tmp_path):
    X, y = make_data()
    data = write_svm(tmp_path / "d.svm", X, y)
    model = tmp_path / "m"
    ok(run_pegasos("train", "-q", "--epochs", "1", data, model))
    direct = ok(run_pegasos("predict", data, model))
    assert ok(run_pegasos("predict", data, "-", input=model.read_text())) == direct
    r = run_pegasos("predict", "-", "-", input=model.read_text())
    assert r.returncode == 1 and "both be standard input" in r.stderr
    r = run_pegasos("train", "-q", data, "")
    assert r.returncode == 1 and "file name is empty" in r.stderr
    X3, y3 = make_data(classes=3)
    data3 = write_svm(tmp_path / "d3.svm", X3, y3)
    ok(run_pegasos("train", "-q", "--epochs", "1", data3, tmp_path / "mc"))
    text = (tmp_path / "mc").read_text().replace("\nclasses 3\n", "\nclasses 999999999999\n")
    (tmp_path / "mc2").write_text(text)
    r = run_pegasos("predict", data3, tmp_path / "mc2")
    assert r.returncode == 1 and "times classes 999999999999" in r.stderr
    line = text.splitlines().index("classes 999999999999") + 1
    assert f"line {line}:" in r.stderr


def test_batch_larger_than_the_data_names_the_cli_option(tmp_path):
    X, y = make_data(m=50)
    data = write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "-k", "1000", data, tmp_path / "m")
    assert r.returncode == 1 and "-k/--batch-size: the batch size k = 1000" in r.stderr
    r = run_pegasos("objective", "-l", "0", data, tmp_path / "m")
    assert r.returncode == 2 and "-l/--lambda" in r.stderr


@pytest.mark.parametrize("keyword, words", [
    ("C", "lambda = 1/(C m): give lam"),
    ("alpha", "the estimators' alpha is lam here"),
    ("lamda", "did you mean lam?"),
    ("no_such_setting", "fields of pegasos.TrainOptions"),
])
def test_fit_names_a_keyword_that_is_no_setting(keyword, words):
    """fit(..., C=1) reached TrainOptions' constructor as a raw TypeError; it is a ParameterError naming
    the keyword and what pegasos calls the setting."""
    X, y = np.eye(4), np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ParameterError, match=re.escape(words)) as info:
        pegasos.fit((X, y), **{keyword: 1.0})
    assert repr(keyword) in str(info.value)
