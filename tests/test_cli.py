"""End-to-end tests of the ``pegasos`` command line.

Every test runs the installed console script in a subprocess (``run_pegasos``)
with its files in ``tmp_path``.  Expected values come from the shared cases'
documented numbers (/work/shared/cases/*.expected, README.md), from the data
README (shapes of a9a), or from an independent computation with numpy, scipy
and scikit-learn on the data and on the numbers read back from the model file
by the small parser below -- never from another run of pegasos.
"""

import bz2
import gzip
import json
import lzma
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics
from sklearn.datasets import load_svmlight_file

from conftest import case_file, data_file, error_line, ok, one_error, pegasos_executable, usage_error
# these tests pin the paper's settings for the options they leave out
from conftest import run_pegasos_paper as run_pegasos

# --------------------------------------------------------------------------- helpers

# the header of a version-1 model file, in the documented order (pegasos/model.py docstring)
HEADER_KEYS = (
    "kind", "loss", "lambda", "iterations", "batch_size", "sampling", "projection", "averaging",
    "average_from", "averaged_iterates", "bias_mode", "bias", "label_negative", "label_positive",
    "n_features", "index_base", "seed", "train_file", "train_examples",
)

A9A_M, A9A_N, A9A_NNZ = 32561, 123, 451592          # data README
A9AT_M, A9AT_N = 16281, 122


def snapshot(root):
    """Every file and directory under root (hidden ones too) with its bytes."""
    root = Path(root)
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else "<dir>")
            for p in sorted(root.rglob("*"))}


OUTCOME_KEYS = ("solver", "solver_reason", "stop")


def parse_model(path):
    """Independent strict reader of the documented model format.

    Returns (header dict, weights dict {file index: float}, list of lines)."""
    text = Path(path).read_text()
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    assert lines[0] == "pegasos_model 1", lines[0]
    header = {}
    i = 1
    while not lines[i].startswith("weights "):
        key, value = lines[i].split(" ", 1)
        header[key] = value
        i += 1
    # the documented keys in order, then how the run ended (pegasos.outcome: solver, why, stop, tol)
    assert tuple(header)[:len(HEADER_KEYS)] == HEADER_KEYS, list(header)
    assert tuple(header)[len(HEADER_KEYS):] in (OUTCOME_KEYS, OUTCOME_KEYS + ("tol",)), list(header)
    count = int(lines[i].split()[1])
    body = lines[i + 1:]
    assert len(body) == count + 1 and body[-1] == "end", body[-3:]
    weights = {}
    for ln in body[:-1]:
        idx, val = ln.split(":")
        weights[int(idx)] = float(val)
    assert list(weights) == sorted(weights)
    assert all(v != 0.0 for v in weights.values())
    return header, weights, lines


def parse_model_any(path):
    """(header dict, body lines) of any model file: header lines up to the
    first 'weights' or 'class' line."""
    lines = Path(path).read_text().splitlines()
    assert lines[0] == "pegasos_model 1"
    header = {}
    i = 1
    while not lines[i].startswith(("weights ", "class ")):
        key, value = lines[i].split(" ", 1)
        header[key] = value
        i += 1
    assert lines[-1] == "end"
    return header, lines[i:], lines


def model_vector(path, n=None):
    """(w as a dense float64 vector over zero-based columns, b, header)."""
    header, weights, _ = parse_model(path)
    base = int(header["index_base"])
    dim = int(header["n_features"]) if n is None else max(n, int(header["n_features"]))
    w = np.zeros(dim)
    for idx, val in weights.items():
        w[idx - base] = val
    return w, float(header["bias"]), header


def without(path, *keys):
    """Model file lines without the header lines of the given keys."""
    return [ln for ln in Path(path).read_text().splitlines() if ln.split(" ", 1)[0] not in keys]


def floats(text):
    return [float(v) for v in text.split()]


def load(path, n_features=None, zero_based=False):
    X, y = load_svmlight_file(str(path), n_features=n_features, zero_based=zero_based)
    return X.tocsr(), y


def independent_objective(X, y_pm, w, b, lam, bias_mode):
    f = X[:, : w.size] @ w + b if X.shape[1] >= w.size else X @ w[: X.shape[1]] + b
    hinge = np.maximum(0.0, 1.0 - y_pm * f).mean()
    sq = float(w @ w) + (b * b if bias_mode == "feature" else 0.0)
    return lam / 2 * sq + hinge, hinge, lam / 2 * sq


def write(path, content):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return path


# --------------------------------------------------------------------------- a9a fixtures

@pytest.fixture(scope="module")
def a9a():
    """Independently loaded a9a / a9a.t (scikit-learn), both with 123 columns."""
    X, y = load(data_file("a9a/a9a"), n_features=A9A_N)
    Xt, yt = load(data_file("a9a/a9a.t"), n_features=A9A_N)
    return {"X": X, "y": y, "Xt": Xt, "yt": yt}


@pytest.fixture(scope="module")
def a9a_model(tmp_path_factory):
    """The demo model: -l 1e-4 --epochs 100 --average-from 0.5."""
    d = tmp_path_factory.mktemp("a9a_model")
    model = d / "a9a.model"
    ok(run_pegasos("train", "-q", "-l", "1e-4", "--epochs", "100", "--average-from", "0.5",
                   data_file("a9a/a9a"), model, cwd=d))
    return model


# =========================================================================== 1. a9a end to end

SUMMARY = re.compile(
    r"^trained on (?P<data>.+): m=(?P<m>\d+) n=(?P<n>\d+) nnz=(?P<nnz>\d+) \| "
    r"solver (?P<solver>pegasos|dual) \((?P<why>[^|]+)\) \| "
    r"T=(?P<T>\d+) k=(?P<k>\d+) lambda=(?P<lam>\S+) \| "
    r"read (?P<tread>[\d.]+) s, train (?P<ttrain>[\d.]+) s \| "
    r"objective (?P<obj>\S+) \(hinge (?P<hinge>\S+), train error (?P<err>\S+)\) \| "
    r"model (?P<model>.+)$")


@pytest.mark.parametrize("opts, T, k, sampling", [
    # T = epochs*m/k (uniform), epochs*ceil(m/k) (permutation / sequential), or -T itself
    ((), 10 * A9A_M, 1, "uniform"),                                      # default: 10 epochs
    (("--epochs", "2"), 2 * A9A_M, 1, "uniform"),
    (("-T", "1000"), 1000, 1, "uniform"),
    (("--epochs", "2", "-k", "10"), math.ceil(2 * A9A_M / 10), 10, "uniform"),
    (("--epochs", "2", "-k", "10", "--sampling", "permutation"), 2 * math.ceil(A9A_M / 10), 10, "permutation"),
    (("--epochs", "1", "--sampling", "sequential", "--seed", "5"), A9A_M, 1, "sequential"),
])
def test_train_a9a_summary_and_model_file(tmp_path, a9a, opts, T, k, sampling):
    data = data_file("a9a/a9a")
    r = run_pegasos("train", "-l", "1e-4", *opts, data, cwd=tmp_path)
    out = ok(r)
    # the paper's step (t0 = 0) leaves some short runs above w = 0's objective of 1, which a note says
    s = SUMMARY.match(out.strip().splitlines()[0])
    worse = s is not None and float(s["obj"]) > 1
    # and a run given no length says it ran the default 10 epochs, which nothing checked
    stderr = r.stderr
    if not opts:
        note = [line for line in stderr.splitlines() if "no length was given" in line]
        assert len(note) == 1 and "it ran the default 10 epochs" in note[0], stderr
        stderr = "\n".join(line for line in stderr.splitlines() if line not in note)
    assert (stderr == "") != worse and (not worse or "above 1, that of w = 0" in stderr)
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    s = SUMMARY.match(lines[0])
    assert s, lines[0]
    assert (int(s["m"]), int(s["n"]), int(s["nnz"])) == (A9A_M, A9A_N, A9A_NNZ)
    assert (int(s["T"]), int(s["k"]), float(s["lam"])) == (T, k, 1e-4)
    assert float(s["tread"]) >= 0 and float(s["ttrain"]) >= 0
    assert s["data"] == str(data)
    # default MODEL: basename of DATA + .model, in the working directory
    assert s["model"] == "a9a.model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a9a.model"]
    model = tmp_path / "a9a.model"
    w, b, h = model_vector(model)
    assert h["kind"] == "linear" and h["loss"] == "hinge"
    assert float(h["lambda"]) == 1e-4
    assert int(h["iterations"]) == T and int(h["batch_size"]) == k and h["sampling"] == sampling
    assert h["seed"] == ("5" if "--seed" in opts else "1")
    assert h["n_features"] == "123" and h["index_base"] == "1"
    assert (h["label_negative"], h["label_positive"]) == ("-1", "+1")
    assert h["bias_mode"] == "none" and b == 0.0
    assert h["train_file"] == str(data) and h["train_examples"] == str(A9A_M)
    assert np.all(np.isfinite(w)) and np.any(w != 0)
    # the summary's objective, hinge loss and error agree with an independent computation
    obj, hinge, _ = independent_objective(a9a["X"], a9a["y"], w, b, 1e-4, "none")
    assert float(s["obj"]) == pytest.approx(obj, rel=1e-5)
    assert float(s["hinge"]) == pytest.approx(hinge, rel=1e-5)
    err = np.mean((a9a["X"] @ w > 0) != (a9a["y"] > 0))
    assert float(s["err"]) == pytest.approx(err, abs=6e-5)
    if not opts:   # default 10 epochs: a sane model (f* = 0.3518 for lambda 1e-4, data README)
        assert 0.3517 < obj < 0.45


def test_train_default_model_name_uses_basename_in_cwd(tmp_path):
    src = write(tmp_path / "sub" / "train.svm", case_file("CASE-09.train.svm").read_text())
    work = tmp_path / "work"
    work.mkdir()
    ok(run_pegasos("train", "-q", src, cwd=work))
    assert [p.name for p in work.iterdir()] == ["train.svm.model"]
    assert sorted(p.name for p in src.parent.iterdir()) == ["train.svm"]
    # relative DATA with a directory part: still the basename, in the cwd
    ok(run_pegasos("train", "-q", "sub/train.svm", cwd=tmp_path))
    assert (tmp_path / "train.svm.model").is_file()
    assert not (tmp_path / "sub" / "train.svm.model").exists()


def test_train_quiet_prints_nothing(tmp_path):
    r = run_pegasos("train", "-q", "--epochs", "1", data_file("a9a/a9a"), tmp_path / "m", cwd=tmp_path)
    assert ok(r) == "" and r.stderr == ""
    parse_model(tmp_path / "m")


def test_predict_a9a_decision_values_labels_and_output_file(tmp_path, a9a, a9a_model):
    test = data_file("a9a/a9a.t")
    out = ok(run_pegasos("predict", test, a9a_model, cwd=tmp_path))
    lines = out.splitlines()
    assert len(lines) == A9AT_M and out.endswith("\n")
    f = np.array([float(v) for v in lines])
    w, b, _ = model_vector(a9a_model)
    np.testing.assert_allclose(f, a9a["Xt"] @ w + b, rtol=1e-12, atol=1e-12)
    # OUTPUT file and '-' are the same bytes as stdout; nothing on stderr
    r = run_pegasos("predict", test, a9a_model, tmp_path / "pred.txt", cwd=tmp_path)
    assert ok(r) == "" and r.stderr == ""
    assert (tmp_path / "pred.txt").read_text() == out
    assert ok(run_pegasos("predict", test, a9a_model, "-", cwd=tmp_path)) == out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred.txt"]       # no temp file left
    # --labels: the training file's spellings, positive iff the decision value is > 0
    lab = ok(run_pegasos("predict", "--labels", test, a9a_model, cwd=tmp_path)).splitlines()
    assert len(lab) == A9AT_M
    assert set(lab) == {"+1", "-1"}
    assert lab == ["+1" if v > 0 else "-1" for v in f]
    ok(run_pegasos("predict", "--labels", test, a9a_model, tmp_path / "lab.txt", cwd=tmp_path))
    assert (tmp_path / "lab.txt").read_text().splitlines() == lab


def test_predict_labels_keep_original_spelling(tmp_path):
    """0/1 training labels come back as 0 and 1 (not -1/+1)."""
    data = case_file("CASE-05.zero_one.svm")                   # 1 0 1 0
    ok(run_pegasos("train", "-q", "-l", "0.5", "--epochs", "3", "--sampling", "sequential", data,
                   tmp_path / "m", cwd=tmp_path))
    h, _, _ = parse_model(tmp_path / "m")
    assert (h["label_negative"], h["label_positive"]) == ("0", "1")
    assert ok(run_pegasos("predict", "--labels", data, tmp_path / "m")).split() == ["1", "0", "1", "0"]


def parse_eval_text(text):
    pat = {
        "examples": r"^examples\s+(\d+)$",
        "accuracy": r"^accuracy\s+([\d.]+) \((\d+)/(\d+)\)$",
        "precision": r"^precision\s+([\d.]+)\s+\(positive label \+1\)$",
        "recall": r"^recall\s+([\d.]+)$",
        "f1": r"^F1\s+([\d.]+)$",
        "roc_auc": r"^ROC AUC\s+([\d.]+)$",
        "hinge_loss": r"^hinge loss\s+([\d.]+)$",
        "row_neg": r"^\s+true -1\s+(\d+)\s+(\d+)$",
        "row_pos": r"^\s+true \+1\s+(\d+)\s+(\d+)$",
        "counts": r"^TP=(\d+) FP=(\d+) TN=(\d+) FN=(\d+)$",
    }
    found = {}
    for key, rx in pat.items():
        m = re.search(rx, text, re.M)
        assert m, f"{key} missing in eval output:\n{text}"
        found[key] = m.groups()
    assert "confusion matrix" in text
    return found


def test_eval_a9a_agrees_with_sklearn_on_predict_output(tmp_path, a9a, a9a_model):
    test = data_file("a9a/a9a.t")
    r = json.loads(ok(run_pegasos("eval", "--json", test, a9a_model, cwd=tmp_path)))
    assert r["accuracy"] >= 0.84                      # -l 1e-4 --epochs 100 --average-from 0.5
    f = np.array(floats(ok(run_pegasos("predict", test, a9a_model, cwd=tmp_path))))
    y = a9a["yt"]
    pred = np.where(f > 0, 1.0, -1.0)
    tn, fp, fn, tp = metrics.confusion_matrix(y, pred, labels=[-1, 1]).ravel()
    assert r["examples"] == A9AT_M == len(f)
    assert r["confusion"] == {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
    assert r["correct"] == tp + tn
    assert r["accuracy"] == pytest.approx(metrics.accuracy_score(y, pred), rel=1e-12)
    assert r["precision"] == pytest.approx(metrics.precision_score(y, pred), rel=1e-12)
    assert r["recall"] == pytest.approx(metrics.recall_score(y, pred), rel=1e-12)
    assert r["f1"] == pytest.approx(metrics.f1_score(y, pred), rel=1e-12)
    assert r["roc_auc"] == pytest.approx(metrics.roc_auc_score(y, f), rel=1e-12)
    assert r["hinge_loss"] == pytest.approx(np.maximum(0, 1 - y * f).mean(), rel=1e-12)
    assert (r["positive_label"], r["negative_label"]) == ("+1", "-1")

    text = ok(run_pegasos("eval", test, a9a_model, cwd=tmp_path))
    t = parse_eval_text(text)
    assert int(t["examples"][0]) == A9AT_M
    assert (int(t["accuracy"][1]), int(t["accuracy"][2])) == (tp + tn, A9AT_M)
    for key in ("accuracy", "precision", "recall", "f1", "roc_auc"):
        assert float(t[key][0]) == pytest.approx(r[key], abs=5.1e-5), key
    assert float(t["hinge_loss"][0]) == pytest.approx(r["hinge_loss"], abs=5.1e-7)
    assert tuple(map(int, t["row_neg"])) == (tn, fp)
    assert tuple(map(int, t["row_pos"])) == (fn, tp)
    assert tuple(map(int, t["counts"])) == (tp, fp, tn, fn)

    r2 = json.loads(ok(run_pegasos("eval", "--json", "--no-auc", test, a9a_model, cwd=tmp_path)))
    assert r2["roc_auc"] is None and r2["accuracy"] == r["accuracy"]


@pytest.mark.parametrize("bias", ["none", "feature", "unregularized"])
@pytest.mark.parametrize("lam_override", [None, "0.5"])
def test_objective_a9a_matches_independent_computation(tmp_path, a9a, bias, lam_override):
    data = data_file("a9a/a9a")
    model = tmp_path / "m"
    ok(run_pegasos("train", "-q", "-l", "1e-4", "--epochs", "3", "--bias", bias, data, model))
    w, b, h = model_vector(model)
    assert h["bias_mode"] == bias
    if bias != "none":
        assert b != 0.0
    lam = 1e-4 if lam_override is None else float(lam_override)
    obj, hinge, reg = independent_objective(a9a["X"], a9a["y"], w, b, lam, bias)
    extra = () if lam_override is None else ("-l", lam_override)
    r = json.loads(ok(run_pegasos("objective", "--json", *extra, data, model)))
    assert r["examples"] == A9A_M
    assert r["lambda"] == lam
    assert r["objective"] == pytest.approx(obj, rel=1e-12)
    assert r["hinge_loss"] == pytest.approx(hinge, rel=1e-12)
    assert r["regularizer"] == pytest.approx(reg, rel=1e-12)
    assert r["norm_w"] == pytest.approx(np.linalg.norm(w), rel=1e-12)
    assert r["error_rate"] == pytest.approx(np.mean((a9a["X"] @ w + b > 0) != (a9a["y"] > 0)), abs=1e-12)
    text = ok(run_pegasos("objective", *extra, data, model))
    vals = dict(re.findall(r"^(objective|hinge loss|regularizer|lambda|examples)\s+(\S+)", text, re.M))
    assert float(vals["objective"]) == pytest.approx(obj, abs=5.1e-9)
    assert float(vals["hinge loss"]) == pytest.approx(hinge, abs=5.1e-9)
    assert float(vals["regularizer"]) == pytest.approx(reg, abs=5.1e-9)
    assert float(vals["lambda"]) == lam and int(vals["examples"]) == A9A_M
    if bias != "none":
        assert re.search(rf"^bias\s+{re.escape(repr(b))} \({bias}\)$", text, re.M), text


@pytest.mark.parametrize("lam", ["0", "-1", "nan"])
def test_objective_rejects_bad_lambda(tmp_path, a9a_model, lam):
    r = run_pegasos("objective", "-l", lam, case_file("CASE-09.test.svm"), a9a_model, cwd=tmp_path)
    error_line(r, "lambda")
    assert r.stdout == ""


# ----------------------------------------------------------------- compressed input and stdin

@pytest.fixture(scope="module")
def compressed_a9a(tmp_path_factory):
    d = tmp_path_factory.mktemp("compressed")
    out = {}
    for name in ("a9a", "a9a.t"):
        raw = data_file(f"a9a/{name}").read_bytes()
        for ext, mod in (("gz", gzip), ("bz2", bz2), ("xz", lzma)):
            p = d / f"{name}.{ext}"
            p.write_bytes(mod.compress(raw))
            out[(name, ext)] = p
    return out


@pytest.mark.parametrize("ext", ["gz", "bz2", "xz"])
def test_train_and_predict_compressed(tmp_path, compressed_a9a, ext):
    opts = ("-q", "-l", "1e-4", "--epochs", "2", "--sampling", "permutation", "--seed", "3")
    ok(run_pegasos("train", *opts, data_file("a9a/a9a"), tmp_path / "plain.model"))
    r = run_pegasos("train", "-l", "1e-4", "--epochs", "2", "--sampling", "permutation", "--seed", "3",
                    compressed_a9a[("a9a", ext)], cwd=tmp_path)
    s = SUMMARY.match(ok(r).strip())
    assert s and (int(s["m"]), int(s["n"]), int(s["nnz"])) == (A9A_M, A9A_N, A9A_NNZ)
    default = tmp_path / f"a9a.{ext}.model"            # basename of DATA + .model
    assert default.is_file()
    assert without(default, "train_file") == without(tmp_path / "plain.model", "train_file")
    plain = ok(run_pegasos("predict", data_file("a9a/a9a.t"), default))
    assert len(plain.splitlines()) == A9AT_M
    assert ok(run_pegasos("predict", compressed_a9a[("a9a.t", ext)], default)) == plain


def test_train_and_predict_from_stdin(tmp_path):
    opts = ("-q", "-l", "1e-4", "--epochs", "2", "--sampling", "permutation")
    text = data_file("a9a/a9a").read_text()
    ok(run_pegasos("train", *opts, data_file("a9a/a9a"), tmp_path / "file.model"))
    ok(run_pegasos("train", *opts, "-", tmp_path / "stdin.model", input=text, cwd=tmp_path))
    assert parse_model(tmp_path / "stdin.model")[0]["train_file"] == "-"
    assert without(tmp_path / "stdin.model", "train_file") == without(tmp_path / "file.model", "train_file")
    test_text = data_file("a9a/a9a.t").read_text()
    from_file = ok(run_pegasos("predict", data_file("a9a/a9a.t"), tmp_path / "file.model"))
    assert ok(run_pegasos("predict", "-", tmp_path / "file.model", input=test_text)) == from_file
    ok(run_pegasos("predict", "-", tmp_path / "file.model", tmp_path / "p.txt", input=test_text))
    assert (tmp_path / "p.txt").read_text() == from_file
    ev = json.loads(ok(run_pegasos("eval", "--json", "-", tmp_path / "file.model", input=test_text)))
    assert ev["examples"] == A9AT_M


def test_train_from_stdin_needs_a_model_name(tmp_path):
    before = snapshot(tmp_path)
    r = run_pegasos("train", "-", input="+1 1:1\n-1 2:1\n", cwd=tmp_path)
    error_line(r, "MODEL")
    assert snapshot(tmp_path) == before


# =========================================================================== 2. bad input

# (name, file content or case file, extra options, line, fragments)
BAD_TRAIN = [
    ("empty", "CASE-20.empty.svm", (), None, ("no training examples",)),
    ("comments_only", "CASE-20.comments_only.svm", (), None, ("no training examples",)),
    ("no_colon", "+1 1:1\n-1 2\n", (), 2, ("'2'", "index:value")),
    ("index_not_numeric", "+1 1:1\n-1 a:1\n", (), 2, ("a:1",)),
    ("value_not_numeric", "+1 1:1\n-1 2:abc\n", (), 2, ("2:abc", "not a number")),
    ("index_zero", "+1 1:1\n-1 0:1\n", (), 2, ("0:1", "--zero-based")),
    ("index_negative", "+1 1:1\n-1 -3:1\n", (), 2, ("-3:1",)),
    ("index_negative_zero_based", "+1 1:1\n-1 -3:1\n", ("--zero-based",), 2, ("-3:1",)),
    ("duplicate", "CASE-07.dup.svm", (), 2, ("index 2",)),
    ("nan", "CASE-06.nan.svm", (), 2, ("nan",)),
    ("inf", "CASE-06.inf.svm", (), 3, ("-inf",)),
    ("space_after_colon", "CASE-06.space_after_colon.svm", (), 3, ("'63:'",)),
    ("decimal_comma", "CASE-06.garbage.svm", (), 2, ("0,5",)),
    ("trailing_junk", "CASE-06.trailing_junk.svm", (), 1, ("0.5x",)),
    ("label_not_number", "+1 1:1\n# c\nfoo 2:1\n", (), 3, ("'foo'", "label")),
    ("multilabel", "CASE-05.multilabel.svm", (), 2, ("multi-label", "1,3")),
    ("multilabel_spaces", "CASE-05.multilabel_spaces.svm", (), 3, ("multi-label",)),
    ("one_class", "CASE-20.one_class.svm", (), None, ("only one class (+1)",)),
    ("one_line", "CASE-04.oneline.svm", (), None, ("only one class (-1)",)),
    # -1/0/+1 is SVMlight's transduction, not three classes (labels 1/2/3 train one-vs-rest)
    ("transductive", "CASE-05.transductive.svm", (), 3, ("'0'",)),
    ("transductive_later", "+1 1:1\n-1 2:1\n\n# c\n+1 3:1\n0 1:1\n", (), 6, ("'0'",)),
    # the hint too when 0 comes before the third label (it depended on the order of the lines)
    ("transductive_zero_first", "1 1:1\n0 1:-1\n-1 1:-2\n", (), 3, ("'-1'", "SVMlight's label 0", "--multiclass ovr")),
]


@pytest.mark.parametrize("name, source, opts, line, fragments", BAD_TRAIN, ids=[b[0] for b in BAD_TRAIN])
def test_train_bad_data_one_line_error_and_nothing_written(tmp_path, name, source, opts, line, fragments):
    if source.startswith("CASE-"):
        data = tmp_path / "in" / source
        write(data, case_file(source).read_bytes())
    else:
        data = write(tmp_path / "in" / f"{name}.svm", source)
    work = tmp_path / "work"
    work.mkdir()
    old = write(work / "keep.model", "old contents\n")
    before = snapshot(tmp_path)
    # default model path, and an explicit path to an existing model (which must survive)
    for model in (None, "keep.model"):
        args = ("train", *opts, data) + ((model,) if model else ())
        r = run_pegasos(*args, cwd=work)
        error_line(r, *fragments, file=data, line=line)
        assert r.stdout == ""
        assert snapshot(tmp_path) == before, f"files changed after failed train ({model})"
    assert old.read_text() == "old contents\n"


def test_train_missing_file(tmp_path):
    r = run_pegasos("train", tmp_path / "nope.svm", cwd=tmp_path)
    error_line(r, "no such file", file=tmp_path / "nope.svm")
    assert list(tmp_path.iterdir()) == []


def test_index_zero_accepted_with_zero_based(tmp_path):
    data = write(tmp_path / "z.svm", "+1 0:1 2:0.5\n-1 1:1\n")
    ok(run_pegasos("train", "-q", "--zero-based", "-l", "1", "--epochs", "1", "--sampling", "sequential",
                   data, tmp_path / "z.model"))
    h, weights, lines = parse_model(tmp_path / "z.model")
    assert h["index_base"] == "0" and h["n_features"] == "3"
    # lambda=1, file order: w1 = x1 = {0:1, 2:0.5}; t=2: w = w/2 - x2/2 -> {0:0.5, 1:-0.5, 2:0.25}
    assert weights == {0: 0.5, 1: -0.5, 2: 0.25}
    # predict reads DATA with the model's index base
    assert floats(ok(run_pegasos("predict", data, tmp_path / "z.model"))) == [0.5 + 0.125, -0.5]


@pytest.mark.parametrize("opts, fragments", [
    (("-l", "0"), ("lambda",)),
    (("-l", "-1"), ("lambda",)),
    (("-l", "nan"), ("lambda",)),
    (("-T", "0"), ("iterations",)),
    (("-T", "-5"), ("iterations",)),
    (("-k", "0"), ("--batch-size", "x>=1")),
    (("-k", "3"), ("batch size", "k = 3", "m = 2")),             # k larger than m
    (("--epochs", "0"), ("epochs",)),
    (("--epochs", "inf"), ("epochs",)),
    (("-T", "5", "--epochs", "2"), ("not both",)),
    (("--average", "--average-from", "0.5"), ("not both",)),
    (("--average-from", "1"), ("average-from",)),
])
def test_train_bad_parameters(tmp_path, opts, fragments):
    data = write(tmp_path / "d.svm", case_file("CASE-09.train.svm").read_text())
    before = snapshot(tmp_path)
    r = run_pegasos("train", *opts, data, cwd=tmp_path)          # default model name d.svm.model
    error_line(r, *fragments)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("where", ["under_regular_file", "missing_dir", "is_directory"])
def test_train_unwritable_model_path(tmp_path, where):
    data = write(tmp_path / "d.svm", case_file("CASE-09.train.svm").read_text())
    write(tmp_path / "file.txt", "a regular file\n")
    (tmp_path / "adir").mkdir()
    target = {"under_regular_file": tmp_path / "file.txt" / "model",
              "missing_dir": tmp_path / "nodir" / "model",
              "is_directory": tmp_path / "adir"}[where]
    before = snapshot(tmp_path)
    r = run_pegasos("train", data, target, cwd=tmp_path)
    error_line(r, "cannot write", file=target)
    assert r.stdout == ""
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("where", ["under_regular_file", "missing_dir", "is_directory"])
def test_predict_unwritable_output(tmp_path, a9a_model, where):
    write(tmp_path / "file.txt", "a regular file\n")
    (tmp_path / "adir").mkdir()
    target = {"under_regular_file": tmp_path / "file.txt" / "out",
              "missing_dir": tmp_path / "nodir" / "out",
              "is_directory": tmp_path / "adir"}[where]
    before = snapshot(tmp_path)
    r = run_pegasos("predict", case_file("CASE-09.test.svm"), a9a_model, target, cwd=tmp_path)
    error_line(r, "cannot write", file=target)
    assert snapshot(tmp_path) == before


BAD_TEST = {
    "bad_value": ("+1 1:1\n\n-1 2:abc\n", 3, ("2:abc",)),
    "nan": ("+1 1:1\n-1 1:nan\n", 2, ("nan",)),
    "no_colon": ("# c\n+1 5\n", 2, ("'5'",)),
    "index_zero": ("+1 0:1\n", 1, ("0:1",)),
    "duplicate": ("+1 1:1 1:2\n", 1, ("index 1",)),
    "multilabel": ("1,3 1:1\n", 1, ("multi-label",)),
    "missing": (None, None, ("no such file",)),
}


@pytest.mark.parametrize("command, name", [("predict", n) for n in BAD_TEST]
                         + [(c, n) for c in ("eval", "objective") for n in ("bad_value", "nan", "missing")])
def test_bad_test_data_gives_one_line_error(tmp_path, a9a_model, command, name):
    content, line, fragments = BAD_TEST[name]
    data = tmp_path / f"{name}.svm"
    if content is not None:
        write(data, content)
    old = write(tmp_path / "old_out.txt", "previous predictions\n")
    before = snapshot(tmp_path)
    outputs = [("out.txt",), ("old_out.txt",)] if command == "predict" else [()]
    for out in outputs:
        r = run_pegasos(command, data, a9a_model, *out, cwd=tmp_path)
        error_line(r, *fragments, file=data, line=line)
        assert snapshot(tmp_path) == before           # no output file, no temp file, old one untouched
    assert old.read_text() == "previous predictions\n"


def test_predict_bad_data_late_in_big_file_leaves_no_output(tmp_path, a9a_model):
    """The error comes after several MB of good lines: the OUTPUT must not appear."""
    good = data_file("a9a/a9a").read_text()
    data = write(tmp_path / "big.svm", good + good + "+1 1:1 2:oops\n")
    before = snapshot(tmp_path)
    r = run_pegasos("predict", data, a9a_model, tmp_path / "out.txt", cwd=tmp_path)
    error_line(r, "2:oops", file=data, line=2 * A9A_M + 1)
    assert snapshot(tmp_path) == before


def test_eval_label_not_in_model_is_an_error(tmp_path, a9a_model):
    """A label that is neither of the model's: error at the file's line (not the example count)."""
    data = write(tmp_path / "t.svm", "# c\n+1 1:1\n\n3 2:1\n")
    for cmd in ("eval", "objective"):
        r = run_pegasos(cmd, data, a9a_model, cwd=tmp_path)
        error_line(r, "'3'", file=data, line=4)
        assert r.stdout == ""


def _corrupt_gzip(tmp_path):
    raw = data_file("a9a/a9a").read_bytes()[:200000]
    b = bytearray(gzip.compress(raw))
    b[10] ^= 0xFF                                   # first byte of the deflate stream
    return write(tmp_path / "bad.svm.gz", bytes(b))


def test_truncated_compressed_input(tmp_path):
    raw = gzip.compress(data_file("a9a/a9a").read_bytes()[:200000])
    data = write(tmp_path / "cut.svm.gz", raw[: len(raw) // 2])
    before = snapshot(tmp_path)
    error_line(run_pegasos("train", data, "m", cwd=tmp_path), "decompress", file=data)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ["train", "predict"])
def test_corrupt_gzip_input_is_a_one_line_error(tmp_path, a9a_model, command):
    data = _corrupt_gzip(tmp_path)
    before = snapshot(tmp_path)
    args = ("train", data, "m") if command == "train" else ("predict", data, a9a_model, "out")
    error_line(run_pegasos(*args, cwd=tmp_path), file=data)
    assert snapshot(tmp_path) == before


# ----------------------------------------------------------------------------- bad model files

@pytest.fixture(scope="module")
def good_model_text(a9a_model):
    return a9a_model.read_text()


def _weight_line_no(text, k):
    """1-based line number of the k-th weight line."""
    lines = text.split("\n")
    return next(i for i, ln in enumerate(lines) if ln.startswith("weights ")) + 1 + k


def _damage(kind, text):
    """(model bytes, expected line or None, fragments)."""
    lines = text.split("\n")
    if kind == "cut_in_weights":
        no = _weight_line_no(text, 5)
        pos = sum(len(ln) + 1 for ln in lines[: no - 1]) + 5       # in the middle of the 5th weight
        return text[:pos].encode(), None, ("truncated",)
    if kind == "cut_at_end_line":
        return text[: text.rindex("end")].encode(), None, ("truncated",)
    if kind == "cut_in_header_key":
        pos = text.index("\naveraging ") + 5                       # '...\naver'
        return text[:pos].encode(), None, ()
    if kind == "cut_in_header_value":
        pos = text.index("\nlambda ") + len("\nlambda 0.0")
        return text[:pos].encode(), None, ("truncated",)
    if kind == "cut_after_header_line":
        pos = text.index("\nsampling ") + 1
        return text[:pos].encode(), None, ("truncated",)
    if kind == "garbage_weight":
        no = _weight_line_no(text, 3)
        lines[no - 1] = "3:garbage"
        return "\n".join(lines).encode(), no, ("garbage",)
    if kind == "nan_weight":
        no = _weight_line_no(text, 4)
        lines[no - 1] = lines[no - 1].split(":")[0] + ":nan"
        return "\n".join(lines).encode(), no, ("nan",)
    if kind == "weight_without_colon":
        no = _weight_line_no(text, 2)
        lines[no - 1] = "17 0.5"
        return "\n".join(lines).encode(), no, ("17 0.5",)
    if kind == "weight_count_too_large":
        return re.sub(r"\nweights (\d+)\n", lambda m: f"\nweights {int(m[1]) + 3}\n", text).encode(), \
            None, ("truncated",)
    if kind == "text_after_end":
        return (text + "junk\n").encode(), len(lines), ("after",)
    if kind == "liblinear":
        return (b"solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 123\nbias -1\nw\n"
                + b"0.1\n" * 123), 1, ("not a pegasos model",)
    if kind == "data_file":                          # arguments swapped by mistake
        return data_file("a9a/a9a.t").read_bytes()[:5000], 1, ("not a pegasos model",)
    if kind == "version_2":
        return text.replace("pegasos_model 1\n", "pegasos_model 2\n", 1).encode(), 1, ("version 2",)
    if kind == "empty":
        return b"", None, ("empty",)
    if kind == "binary":
        return bytes(range(256)) * 8, None, ("not",)
    raise AssertionError(kind)


MODEL_DAMAGE = ["cut_in_weights", "cut_at_end_line", "cut_in_header_key", "cut_in_header_value",
                "cut_after_header_line", "garbage_weight", "nan_weight", "weight_without_colon",
                "weight_count_too_large", "text_after_end", "liblinear", "data_file", "version_2",
                "empty", "binary", "missing"]


@pytest.mark.parametrize("command, kind", [("predict", k) for k in MODEL_DAMAGE]
                         + [(c, k) for c in ("eval", "objective")
                            for k in ("cut_in_weights", "garbage_weight", "liblinear", "version_2", "missing")])
def test_bad_model_file(tmp_path, good_model_text, command, kind):
    model = tmp_path / "bad.model"
    if kind == "missing":
        line, fragments = None, ("no such model file",)
    else:
        content, line, fragments = _damage(kind, good_model_text)
        model.write_bytes(content)
    before = snapshot(tmp_path)
    out = ("out.txt",) if command == "predict" else ()
    r = run_pegasos(command, case_file("CASE-09.test.svm"), model, *out, cwd=tmp_path)
    error_line(r, *fragments, file=model, line=line)
    assert r.stdout == ""
    assert snapshot(tmp_path) == before


def test_hand_written_model_loads(tmp_path, good_model_text):
    """Control for the damage tests: the undamaged text and a hand-made model load fine."""
    model = write(tmp_path / "m", good_model_text)
    ok(run_pegasos("predict", case_file("CASE-09.test.svm"), model))
    header = good_model_text.split("\nweights ")[0]
    write(tmp_path / "h", header + "\nweights 2\n1:2.5\n3:-1\nend\n")
    assert floats(ok(run_pegasos("predict", case_file("CASE-09.test.svm"), tmp_path / "h"))) \
        == [5.0, -1.0, 2.5]


# =========================================================================== 3. shared cases

def _train(tmp_path, data, name, *opts):
    model = tmp_path / name
    ok(run_pegasos("train", "-q", *opts, data, model, cwd=tmp_path))
    return model


@pytest.mark.parametrize("case", ["CASE-02", "CASE-03", "CASE-04"])
@pytest.mark.parametrize("opts", [(), ("-l", "0.01", "-k", "2", "--sampling", "permutation", "--seed", "9")])
def test_messy_file_gives_same_model_as_clean(tmp_path, case, opts):
    messy = _train(tmp_path, case_file(f"{case}.svm"), "messy", *opts)
    clean = _train(tmp_path, case_file(f"{case}.clean.svm"), "clean", *opts)
    a, b = messy.read_bytes().split(b"\n"), clean.read_bytes().split(b"\n")
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert len(a) == len(b)
    assert diff == [(f"train_file {case_file(case + '.svm')}".encode(),
                     f"train_file {case_file(case + '.clean.svm')}".encode())]
    assert parse_model(messy)[0]["train_examples"] == "3"


def test_case02_qid_and_comments_parse(tmp_path):
    """CASE-02: 3 examples, n=4; predict with a hand-made model w=(1,10,100,1000) shows the rows."""
    model = tmp_path / "m"
    _train(tmp_path, case_file("CASE-02.clean.svm"), "base")
    text = (tmp_path / "base").read_text().split("\nweights ")[0]
    write(model, text + "\nweights 4\n1:1.0\n2:10.0\n3:100.0\n4:1000.0\nend\n")
    # rows {1:0.5, 4:1}, {2:1.5}, {3:2}
    assert floats(ok(run_pegasos("predict", case_file("CASE-02.svm"), model))) == [1000.5, 15.0, 200.0]
    ev = json.loads(ok(run_pegasos("eval", "--json", case_file("CASE-02.svm"), model)))
    assert ev["examples"] == 3


@pytest.mark.parametrize("case", ["CASE-03", "CASE-04"])
def test_crlf_blank_lines_predict_rows(tmp_path, case):
    rows = {"CASE-03": [0.5 + 1.25 * 100, 2 * 10 - 1000, 1.0],
            "CASE-04": [1.0, 10.0, 11.0]}[case]
    _train(tmp_path, case_file(f"{case}.clean.svm"), "base")
    text = (tmp_path / "base").read_text().split("\nweights ")[0].replace("n_features 2", "n_features 4")
    model = write(tmp_path / "m", text + "\nweights 4\n1:1.0\n2:10.0\n3:100.0\n4:1000.0\nend\n")
    assert floats(ok(run_pegasos("predict", case_file(f"{case}.svm"), model))) == rows


def test_case05_all_label_spellings_accepted(tmp_path):
    model = _train(tmp_path, case_file("CASE-05.svm"), "m")
    assert parse_model(model)[0]["train_examples"] == "6"
    ev = json.loads(ok(run_pegasos("eval", "--json", case_file("CASE-05.svm"), model)))
    c = ev["confusion"]
    assert ev["examples"] == 6 and c["tp"] + c["fn"] == 4 and c["tn"] + c["fp"] == 2   # y: + + + - - +


def test_case05_zero_one_equals_plus_minus_one(tmp_path):
    opts = ("-l", "0.5", "--epochs", "3", "--sampling", "sequential")
    zo = _train(tmp_path, case_file("CASE-05.zero_one.svm"), "zo", *opts)
    pm = _train(tmp_path, case_file("CASE-05.zero_one.as_pm.svm"), "pm", *opts)
    skip = ("train_file", "label_negative", "label_positive")
    assert without(zo, *skip) == without(pm, *skip)
    h, w, _ = parse_model(zo)
    assert h["train_examples"] == "4"                          # no 0 row dropped
    assert (h["label_negative"], h["label_positive"]) == ("0", "1")
    assert set(w) == {1, 2, 3}
    np.testing.assert_allclose([w[1], w[2], w[3]],
                               [0.8333333333333331, -0.9999999999999999, -0.16666666666666669], rtol=1e-12)
    ev = json.loads(ok(run_pegasos("eval", "--json", case_file("CASE-05.zero_one.svm"), zo)))
    assert ev["examples"] == 4 and ev["positive_label"] == "1"


def test_case05_multiclass_trains_one_vs_rest(tmp_path):
    """Labels 1,2,3: CASE-05 predates multiclass support and asked for an error at
    line 2; a file with more than two labels now trains one-vs-rest by default
    (SVMlight's -1/0/+1 stays an error, see the transductive case)."""
    data = case_file("CASE-05.multiclass.svm")
    out = ok(run_pegasos("train", "-l", "0.01", "--epochs", "50", data, "m", cwd=tmp_path))
    assert "ovr, 3 classes" in out
    header, _, _ = parse_model_any(tmp_path / "m")
    assert header["task"] == "multiclass" and header["multiclass"] == "ovr"
    assert header["classes"] == "3" and header["class_labels"] == "1 2 3"
    assert ok(run_pegasos("predict", "--labels", data, tmp_path / "m")).split() == ["1", "2", "3"]
    values = ok(run_pegasos("predict", data, tmp_path / "m")).splitlines()
    assert [len(v.split()) for v in values] == [3, 3, 3]


def test_case07_unsorted_equals_sorted(tmp_path):
    opts = ("-l", "1", "--epochs", "2", "--sampling", "sequential")
    a = _train(tmp_path, case_file("CASE-07.svm"), "a", *opts)
    b = _train(tmp_path, case_file("CASE-07.sorted.svm"), "b", *opts)
    assert without(a, "train_file") == without(b, "train_file")
    h, w, _ = parse_model(a)
    assert h["train_examples"] == "3"
    assert set(w) == {1, 3, 5}
    np.testing.assert_allclose([w[1], w[3], w[5]], [1 / 3, 1 / 6, -1 / 3], rtol=1e-12)


def test_case09_test_features_differ_from_training(tmp_path):
    model = _train(tmp_path, case_file("CASE-09.train.svm"), "m", "-l", "1", "--epochs", "1",
                   "--sampling", "sequential")
    h, w, _ = parse_model(model)
    assert h["n_features"] == "3"
    assert w.get(1) == pytest.approx(0.5, rel=1e-12) and w.get(2, 0.0) == pytest.approx(0.0, abs=1e-12)
    assert w.get(3) == pytest.approx(-0.5, rel=1e-12)
    r = run_pegasos("predict", case_file("CASE-09.test.svm"), model)
    assert floats(ok(r)) == [1.0, -0.5, 0.5]
    assert len(r.stderr.splitlines()) <= 1                    # at most one summary warning
    assert ok(run_pegasos("predict", "--labels", case_file("CASE-09.test.svm"), model)).split() == ["+1", "-1", "+1"]
    assert floats(ok(run_pegasos("predict", case_file("CASE-09.test_small.svm"), model))) == [0.5]
    ev = json.loads(ok(run_pegasos("eval", "--json", case_file("CASE-09.test.svm"), model)))
    assert (ev["examples"], ev["correct"], ev["accuracy"]) == (3, 3, 1.0)
    text = ok(run_pegasos("eval", case_file("CASE-09.test.svm"), model))
    assert re.search(r"^accuracy\s+1\.0000 \(3/3\)$", text, re.M), text


def test_case12_label_only_lines(tmp_path):
    model = _train(tmp_path, case_file("CASE-12.svm"), "m", "-l", "1", "--epochs", "1", "--sampling", "sequential")
    h, w, _ = parse_model(model)
    assert h["iterations"] == "4" and h["train_examples"] == "4"
    np.testing.assert_allclose([w[1], w[2]], [-0.25, -0.125], rtol=1e-12)
    f = floats(ok(run_pegasos("predict", case_file("CASE-12.svm"), model)))
    np.testing.assert_allclose(f, [0.0, -0.25, 0.0, -0.0625], rtol=1e-12, atol=0)
    # a decision value of exactly 0 is not > 0: the negative label (documented in predict --help)
    assert ok(run_pegasos("predict", "--labels", case_file("CASE-12.svm"), model)).split() == ["-1"] * 4
    assert "> 0 predicts the positive label" in " ".join(ok(run_pegasos("predict", "--help")).split())
    r = json.loads(ok(run_pegasos("objective", "--json", case_file("CASE-12.svm"), model)))
    assert r["examples"] == 4
    assert r["objective"] == pytest.approx(0.9609375, rel=1e-12)
    text = ok(run_pegasos("objective", case_file("CASE-12.svm"), model))
    assert re.search(r"^objective\s+0\.96093750$", text, re.M), text


@pytest.mark.parametrize("k, epochs, w1, w2, steps", [
    (1, 1, -10 / 3, 10 / 3, 3), (1, 3, -10 / 9, 10 / 9, 9), (2, 1, -5 / 2, 5 / 2, 2),
    (2, 3, -5 / 6, 5 / 6, 6), (3, 1, 0.0, 40 / 3, 1), (3, 3, -20 / 9, 10 / 3, 3),
])
def test_case13_first_step(tmp_path, k, epochs, w1, w2, steps):
    model = _train(tmp_path, case_file("CASE-13.svm"), "m", "-l", "0.1", "-k", str(k), "--epochs", str(epochs),
                   "--sampling", "sequential")
    h, w, _ = parse_model(model)
    assert h["iterations"] == str(steps)
    assert all(math.isfinite(v) for v in w.values())
    np.testing.assert_allclose([w.get(1, 0.0), w.get(2, 0.0)], [w1, w2], rtol=1e-12, atol=1e-300)
    if (k, epochs) == (1, 1):
        r = json.loads(ok(run_pegasos("objective", "--json", case_file("CASE-13.svm"), model)))
        assert r["objective"] == pytest.approx(1.1111111111111112, rel=1e-12)


@pytest.mark.parametrize("bias", ["feature", "unregularized"])
def test_case16_bias_on(tmp_path, bias):
    data = case_file("CASE-16.svm")
    model = _train(tmp_path, data, "m", "-l", "0.01", "--epochs", "200", "--sampling", "sequential",
                   "--bias", bias)
    h, w, lines = parse_model(model)
    assert h["bias_mode"] == bias
    b = float(h["bias"])
    assert b != 0.0 and set(w) == {1}
    ev = json.loads(ok(run_pegasos("eval", "--json", data, model)))
    assert (ev["correct"], ev["examples"], ev["accuracy"]) == (4, 4, 1.0)
    # predict computes w1*3 + b from the numbers in the file
    f = floats(ok(run_pegasos("predict", case_file("CASE-16.test.svm"), model)))
    assert f[0] == pytest.approx(w[1] * 3 + b, abs=1e-12)
    # editing b in the file changes the prediction accordingly
    new_b = b + 2.5
    edited = write(tmp_path / "edited", "\n".join(f"bias {new_b!r}" if ln.startswith("bias ") else ln
                                                   for ln in lines) + "\n")
    f2 = floats(ok(run_pegasos("predict", case_file("CASE-16.test.svm"), edited)))
    assert f2[0] == pytest.approx(w[1] * 3 + new_b, abs=1e-12)
    # objective uses the same bias convention
    X = np.array([[1.0], [2.0], [4.0], [5.0]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    obj, _, _ = independent_objective(X, y, np.array([w[1]]), b, 0.01, bias)
    r = json.loads(ok(run_pegasos("objective", "--json", data, model)))
    assert r["objective"] == pytest.approx(obj, rel=1e-12)


@pytest.mark.parametrize("opts", [("-l", "0.01", "--epochs", "200", "--sampling", "sequential"),
                                  ("--epochs", "50", "--sampling", "permutation")])
def test_case16_bias_off_is_exactly_half(tmp_path, opts):
    data = case_file("CASE-16.svm")
    model = _train(tmp_path, data, "m", *opts)
    ev = json.loads(ok(run_pegasos("eval", "--json", data, model)))
    assert (ev["correct"], ev["accuracy"]) == (2, 0.5)
    f = floats(ok(run_pegasos("predict", data, model)))
    assert all(v > 0 for v in f) or all(v <= 0 for v in f)
    h, w, _ = parse_model(model)
    assert float(h["bias"]) == 0.0
    assert floats(ok(run_pegasos("predict", case_file("CASE-16.test.svm"), model)))[0] == \
        pytest.approx(w.get(1, 0.0) * 3, abs=1e-12)


def test_case17_imbalanced_file_order(tmp_path):
    data = case_file("CASE-17.svm")
    model = _train(tmp_path, data, "m", "-l", "0.01", "--epochs", "100", "--sampling", "sequential")
    _, w, _ = parse_model(model)
    np.testing.assert_allclose([w[1], w[2]], [-1.47, 0.875], rtol=1e-9)
    f = floats(ok(run_pegasos("predict", data, model)))
    X, y = load(data)
    assert np.array_equal(np.where(np.array(f) > 0, 1.0, -1.0), y)       # all 20 right
    assert f[-1] == pytest.approx(1.0185, rel=1e-9)
    text = ok(run_pegasos("eval", data, model))
    assert re.search(r"^TP=1 FP=0 TN=19 FN=0$", text, re.M), text
    assert re.search(r"^recall\s+1\.0000$", text, re.M)
    assert re.search(r"^accuracy\s+1\.0000 \(20/20\)$", text, re.M)


@pytest.mark.parametrize("seed, sampling", [(1, "permutation"), (2, "permutation"), (3, "uniform")])
def test_case17_seeded_shuffling_all_correct(tmp_path, seed, sampling):
    data = case_file("CASE-17.svm")
    model = _train(tmp_path, data, "m", "-l", "0.01", "--epochs", "100", "--sampling", sampling, "--seed", str(seed))
    ev = json.loads(ok(run_pegasos("eval", "--json", data, model)))
    assert ev["correct"] == 20


def test_case17_majority_only_model_shows_fn(tmp_path):
    """A model that never predicts +1 (w = 0): eval must show FN=1 and recall 0."""
    data = case_file("CASE-17.svm")
    base = _train(tmp_path, data, "m", "-l", "0.01", "--epochs", "1", "--sampling", "sequential")
    header = base.read_text().split("\nweights ")[0]
    zero = write(tmp_path / "zero", header + "\nweights 0\nend\n")
    text = ok(run_pegasos("eval", data, zero))
    assert re.search(r"^TP=0 FP=0 TN=19 FN=1$", text, re.M), text
    assert re.search(r"^recall\s+0\.0000$", text, re.M)
    assert re.search(r"^accuracy\s+0\.9500 \(19/20\)$", text, re.M)
    assert re.search(r"^precision\s+n/a", text, re.M)
    ev = json.loads(ok(run_pegasos("eval", "--json", data, zero)))
    assert ev["recall"] == 0.0 and ev["precision"] is None and ev["roc_auc"] == 0.5


@pytest.mark.parametrize("k", [1, 4])
def test_case18_same_seed_same_bytes(tmp_path, k):
    args = ("train", "-q", "-l", "0.01", "--epochs", "3", "-k", str(k), "--sampling", "permutation",
            "--seed", "7", case_file("CASE-18.svm"))
    ok(run_pegasos(*args, tmp_path / "a", env={"OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}))
    ok(run_pegasos(*args, tmp_path / "b", env={"OMP_NUM_THREADS": "8", "PYTHONHASHSEED": "1"}))
    ok(run_pegasos(*args, tmp_path / "c"))
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes() == (tmp_path / "c").read_bytes()
    h, _, _ = parse_model(tmp_path / "a")
    assert h["seed"] == "7" and h["sampling"] == "permutation" and h["batch_size"] == str(k)


def test_case18_seeds_matter_with_shuffling_and_not_in_file_order(tmp_path):
    data = case_file("CASE-18.svm")
    shuffled, ordered = [], []
    for s in (1, 2, 3, 4, 5):
        a = _train(tmp_path, data, f"p{s}", "-l", "0.01", "--epochs", "1", "--sampling", "permutation",
                   "--seed", str(s))
        q = _train(tmp_path, data, f"s{s}", "-l", "0.01", "--epochs", "1", "--sampling", "sequential",
                   "--seed", str(s))
        assert parse_model(a)[0]["seed"] == str(s) and parse_model(q)[0]["seed"] == str(s)
        shuffled.append(tuple(without(a, "seed")))
        ordered.append(tuple(without(q, "seed")))
    assert len(set(shuffled)) > 1, "five seeds gave identical models: the seed is ignored"
    assert len(set(ordered)) == 1, "file-order training depends on the seed"
    # the seed actually used is recorded also when none is given
    d = _train(tmp_path, data, "default", "--sampling", "permutation")
    assert re.fullmatch(r"-?\d+", parse_model(d)[0]["seed"])


C19_VALUES = [1.0, 0.4333333333343333, 0.30000000000000004, 18014398509481982.0]


@pytest.fixture
def case19_model(tmp_path):
    """CASE-19 asks for w equal to its only row (lambda=1, first step).  A one-row file is
    a single class (CASE-20 rule), so a label-only -1 row (a zero vector, so n stays 5) is
    appended and training stops after that first step (-T 1, file order)."""
    data = write(tmp_path / "c19.svm", case_file("CASE-19.svm").read_text() + "-1\n")
    model = _train(tmp_path, data, "c19.model", "-l", "1", "-T", "1", "--sampling", "sequential")
    _, w, _ = parse_model(model)
    assert w == {1: 0.1, 2: 1e-12, 3: 0.3333333333333333, 4: 0.30000000000000004, 5: 18014398509481982.0}
    return model


def test_case19_bit_exact_predictions(tmp_path, case19_model):
    pred = ok(run_pegasos("predict", case_file("CASE-19.test.svm"), case19_model))
    assert floats(pred) == C19_VALUES                    # == on doubles: bit for bit
    text = case19_model.read_bytes()
    crlf = write(tmp_path / "crlf.model", text.replace(b"\n", b"\r\n"))
    nonl = write(tmp_path / "nonl.model", text[:-1])
    crlf_nonl = write(tmp_path / "crlf_nonl.model", text.replace(b"\n", b"\r\n")[:-2])
    for m in (crlf, nonl, crlf_nonl):
        assert ok(run_pegasos("predict", case_file("CASE-19.test.svm"), m)) == pred


def _resave(src, dst):
    r = subprocess.run([sys.executable, "-c", "import sys, pegasos; pegasos.load_model(sys.argv[1]).save(sys.argv[2])",
                        str(src), str(dst)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_case19_load_save_round_trip(tmp_path, case19_model, a9a_model):
    models = [case19_model, a9a_model,
              _train(tmp_path, case_file("CASE-16.svm"), "bias.model", "--bias", "feature", "-l", "0.01"),
              _train(tmp_path, write(tmp_path / "z.svm", "+1 0:1e-300 3:2\n-1 1:0.1\n"), "zero.model",
                     "--zero-based", "--average", "--projection")]
    for i, m in enumerate(models):
        _resave(m, tmp_path / f"resaved{i}")
        assert (tmp_path / f"resaved{i}").read_bytes() == m.read_bytes(), m
        _resave(write(tmp_path / f"crlf{i}", m.read_bytes().replace(b"\n", b"\r\n")), tmp_path / f"from_crlf{i}")
        assert (tmp_path / f"from_crlf{i}").read_bytes() == m.read_bytes()


@pytest.mark.parametrize("name", ["CASE-20.empty.svm", "CASE-20.comments_only.svm"])
def test_case20_no_training_examples(tmp_path, name):
    data = case_file(name)
    msg = error_line(run_pegasos("train", data, cwd=tmp_path), "no training examples", file=data)
    assert "ZeroDivision" not in msg
    assert list(tmp_path.iterdir()) == []


def test_case20_one_class(tmp_path):
    data = case_file("CASE-20.one_class.svm")
    error_line(run_pegasos("train", data, "m", cwd=tmp_path), "only one class (+1)", file=data)
    assert list(tmp_path.iterdir()) == []


def test_case20_one_class_opt_in(tmp_path):
    """CASE-20 allows an explicit opt-in; the model is then finite and predicts +1 on its rows."""
    data = case_file("CASE-20.one_class.svm")
    ok(run_pegasos("train", "--allow-one-class", "-l", "0.1", "--epochs", "5", data, "m", cwd=tmp_path))
    w, b, header = model_vector(tmp_path / "m")
    assert np.all(np.isfinite(w)) and header["label_positive"] == "+1" and header["label_negative"] == "-1"
    values = [float(v) for v in ok(run_pegasos("predict", data, tmp_path / "m")).split()]
    assert len(values) == 3 and all(v > 0 for v in values)
    assert ok(run_pegasos("predict", "--labels", data, tmp_path / "m")).split() == ["+1"] * 3


def test_one_class_opt_in_from_arrays_as_from_a_file(tmp_path):
    """pegasos.fit(allow_one_class=True) refused arrays of one class that the same rows read from a file
    trained on; now both give the same model (the missing class the usual other member: -1/+1, 0/1)."""
    import pegasos
    import scipy.sparse as sp
    from pegasos.errors import ParameterError

    X = sp.csr_matrix(np.array([[1.0, 2.0], [0.5, 0.0], [0.0, 3.0]]))
    for value, text in ((1.0, "+1"), (-1.0, "-1"), (0.0, "0")):
        path = tmp_path / f"one{text}.svm"
        path.write_text("".join(f"{text} 1:{float(r[0])!r} 2:{float(r[1])!r}\n" for r in X.toarray()))
        kw = dict(lam=0.1, epochs=5, allow_one_class=True)
        from_file = pegasos.fit(pegasos.read_svmlight(str(path)), **kw)
        from_arrays = pegasos.fit((X, np.full(3, value)), **kw)
        assert np.array_equal(from_file.w, from_arrays.w)
        assert (from_file.labels.negative, from_file.labels.positive) == \
            (from_arrays.labels.negative, from_arrays.labels.positive)
    with pytest.raises(ParameterError, match="two label values.*allow_one_class accepts a single label of -1, 0 or"):
        pegasos.fit((X, np.full(3, 2.0)), lam=0.1, epochs=5, allow_one_class=True)
    with pytest.raises(ParameterError, match="exactly two label values, got 1: \\[1.0\\]$"):
        pegasos.fit((X, np.full(3, 1.0)), lam=0.1, epochs=5)


def test_case19_one_row_with_opt_in(tmp_path):
    """CASE-19 as the case states it: the one-row file, lambda=1, one epoch: w equals the row exactly."""
    ok(run_pegasos("train", "--allow-one-class", "-l", "1", "--epochs", "1", "--sampling", "sequential",
                   case_file("CASE-19.svm"), "m", cwd=tmp_path))
    _, weights, _ = parse_model(tmp_path / "m")
    assert weights == {1: 0.1, 2: 1e-12, 3: 0.3333333333333333, 4: 0.30000000000000004, 5: 18014398509481982.0}
    values = [float(v) for v in ok(run_pegasos("predict", case_file("CASE-19.test.svm"), tmp_path / "m")).split()]
    assert values == [1.0, 0.4333333333343333, 0.30000000000000004, 18014398509481982.0]


def test_case20_empty_test_file(tmp_path, a9a_model):
    empty = case_file("CASE-20.test_empty.svm")
    r = run_pegasos("predict", empty, a9a_model, cwd=tmp_path)
    # exit 0 and no lines, with one note on stderr (a script without a guard would take it for a result)
    assert ok(r) == "" and r.stderr.startswith("pegasos: note: ") and "holds no examples" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    ok(run_pegasos("predict", empty, a9a_model, tmp_path / "out.txt"))
    assert (tmp_path / "out.txt").read_bytes() == b""
    comments = write(tmp_path / "c.svm", "# only a comment\n\n")
    assert ok(run_pegasos("predict", comments, a9a_model)) == ""
    text = ok(run_pegasos("eval", empty, a9a_model))
    assert re.search(r"^examples\s+0$", text, re.M) and re.search(r"^accuracy\s+n/a$", text, re.M), text
    assert "nan" not in text.lower().replace("n/a", "")
    ev = json.loads(ok(run_pegasos("eval", "--json", empty, a9a_model)))
    assert ev["examples"] == 0 and ev["accuracy"] is None
    ob = json.loads(ok(run_pegasos("objective", "--json", empty, a9a_model)))
    assert ob["examples"] == 0 and ob["objective"] is None


# =========================================================================== 4. dimension mismatch

def test_test_file_narrower_and_wider_than_model(tmp_path, a9a, a9a_model):
    """a9a.t has n=122 against the model's 123 (and the other way round): no error."""
    test = data_file("a9a/a9a.t")
    for cmd in (("eval", "--json"), ("objective", "--json"), ("predict",)):
        r = run_pegasos(*cmd, test, a9a_model)
        ok(r)
        assert r.stderr == ""
    narrow = _train(tmp_path, test, "t.model", "-l", "1e-4", "--epochs", "2")
    h, _, _ = parse_model(narrow)
    assert h["n_features"] == str(A9AT_N)
    w, b, _ = model_vector(narrow)
    f = np.array(floats(ok(run_pegasos("predict", data_file("a9a/a9a"), narrow))))
    assert f.size == A9A_M
    np.testing.assert_allclose(f, a9a["X"][:, :A9AT_N] @ w + b, rtol=1e-12, atol=1e-12)
    ev = json.loads(ok(run_pegasos("eval", "--json", data_file("a9a/a9a"), narrow)))
    assert ev["examples"] == A9A_M
    assert ev["accuracy"] == pytest.approx(np.mean((f > 0) == (a9a["y"] > 0)), rel=1e-12)


# =========================================================================== 5. output targets, signals, odd values

def test_stdout_on_a_full_disk_is_a_one_line_error(a9a_model):
    test = data_file("a9a/a9a.t")
    for args in (("predict", test, a9a_model), ("eval", test, a9a_model), ("objective", test, a9a_model)):
        with open("/dev/full", "w") as full:
            r = subprocess.run([pegasos_executable(), *map(str, args)], stdout=full, stderr=subprocess.PIPE,
                               text=True, timeout=300)
        error_line(r, "No space left on device")


def test_output_through_symlink_keeps_link_and_mode(tmp_path, a9a_model):
    real = write(tmp_path / "real.txt", "old\n")
    os.chmod(real, 0o600)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    ok(run_pegasos("predict", case_file("CASE-09.test.svm"), a9a_model, link))
    assert link.is_symlink() and len(real.read_text().split()) == 3
    assert (real.stat().st_mode & 0o777) == 0o600


def test_output_to_a_fifo_is_written_through(tmp_path, a9a_model):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    ok(run_pegasos("predict", case_file("CASE-09.test.svm"), a9a_model, fifo))
    assert len(reader.communicate(timeout=60)[0].split()) == 3
    assert fifo.is_fifo()


def _open_files(pid):
    """The paths process ``pid`` has open (Linux /proc)."""
    out = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                out.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                pass
    except OSError:
        pass
    return out


def test_sigterm_leaves_no_partial_output(tmp_path, a9a_model):
    big = tmp_path / "big.svm"
    text = data_file("a9a/a9a").read_bytes()
    with open(big, "wb") as f:
        for _ in range(100):
            f.write(text)
    proc = subprocess.Popen([pegasos_executable(), "predict", str(big), str(a9a_model), str(tmp_path / "p.txt")],
                            stderr=subprocess.PIPE)
    import time
    deadline = time.monotonic() + 120
    while str(big) not in _open_files(proc.pid):     # the run reads DATA: its handlers are in place (a fixed
        assert proc.poll() is None and time.monotonic() < deadline, "predict did not start reading"
        time.sleep(0.01)                              # sleep was too short for a start-up on a loaded machine)
    proc.terminate()
    assert proc.wait(timeout=60) == 143, "the run ended before SIGTERM arrived"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.svm"]


def test_negative_seed_is_a_one_line_error(tmp_path):
    error_line(run_pegasos("train", "--seed", "-1", data_file("heart_scale/heart_scale"), "m", cwd=tmp_path),
               "seed")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("edit, fragment", [
    (lambda t: re.sub(r"(?m)^lambda .*$", "lambda -1", t), "lambda must be positive"),
    (lambda t: re.sub(r"(?m)^label_positive .*$", "label_positive -1", t), "must be smaller"),
    (lambda t: t.replace("seed 1\n", "seed 1\nseed 2\n"), "appears twice"),
])
def test_model_with_impossible_values_is_refused(tmp_path, a9a_model, edit, fragment):
    bad = write(tmp_path / "bad.model", edit(Path(a9a_model).read_text()))
    error_line(run_pegasos("objective", data_file("a9a/a9a.t"), bad), fragment, file=bad)


def test_api_names_stay_functions():
    """pegasos.evaluate / pegasos.objective are functions, before and after the submodule is imported."""
    code = ("import pegasos, numpy as np\n"
            "X, y = pegasos.load_svmlight(%r)\n"
            "m = pegasos.train(X, y, lam=0.01)\n"
            "a = pegasos.objective(m, X, y)['objective']; b = pegasos.evaluate(m, X, y)['accuracy']\n"
            "c = pegasos.evaluate(m, X, y)['accuracy']\n"
            "assert callable(pegasos.evaluate) and b == c and 'train' in dir(pegasos)\n" % str(
                data_file("heart_scale/heart_scale")))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


# =========================================================================== 6. option combinations that are refused

@pytest.mark.parametrize("args, fragment", [
    (("--kernel", "rbf", "--loss", "log"), "hinge loss only"),
    (("--kernel", "rbf", "--loss", "squared-hinge"), "hinge loss only"),
    (("--kernel", "rbf", "-w", "1:5"), "class weights"),
    (("--loss", "rank", "--multiclass", "ovr"), "--multiclass needs a classification loss"),
])
def test_contradictory_train_options_are_refused(tmp_path, args, fragment):
    error_line(run_pegasos("train", *args, data_file("heart_scale/heart_scale"), "m", cwd=tmp_path), fragment)
    assert list(tmp_path.iterdir()) == []


def test_refusals_of_predict_and_objective(tmp_path):
    hs = data_file("heart_scale/heart_scale")
    ok(run_pegasos("train", "-q", "--kernel", "rbf", "--epochs", "1", hs, tmp_path / "k"))
    error_line(run_pegasos("predict", "--proba", hs, tmp_path / "k"), "--loss log")
    ok(run_pegasos("train", "-q", "--epochs", "1", data_file("dna/dna.scale"), tmp_path / "mc"))
    error_line(run_pegasos("objective", "--sample", "0.5", data_file("dna/dna.scale"), tmp_path / "mc"),
               "--sample applies to binary models")
    unknown = write(tmp_path / "u.svm", "# c\n\n1 1:0.5\n4 2:1\n")
    error_line(run_pegasos("eval", unknown, tmp_path / "mc"), "label '4'", file=unknown, line=4)


def test_f1_is_zero_not_undefined_when_nothing_is_predicted_positive(tmp_path):
    """TP = FP = 0 with FN > 0: F1 = 2 TP / (2 TP + FP + FN) = 0 (scikit-learn's f1_score, and each class of
    a multiclass eval); it was reported undefined, so cv dropped such folds from its mean F1."""
    data = tmp_path / "ident.svm"
    data.write_text("+1 1:1 2:1\n-1 1:1 2:1\n+1 1:1 2:1\n-1 1:1 2:1\n")
    model = tmp_path / "m.model"
    ok(run_pegasos("train", "-q", data, model))
    r = json.loads(ok(run_pegasos("eval", "--json", data, model)))
    f = np.array(floats(ok(run_pegasos("predict", data, model))))
    y = np.array([1, -1, 1, -1])
    pred = np.where(f > 0, 1, -1)
    assert r["f1"] == metrics.f1_score(y, pred, zero_division=0.0)
    assert (r["confusion"]["tp"] + r["confusion"]["fp"] == 0) == (r["f1"] == 0.0 and r["precision"] is None)
    if r["confusion"]["tp"] + r["confusion"]["fp"] == 0:
        cv = json.loads(ok(run_pegasos("cv", "-v", "2", "--json", data)))
        assert [fold["f1"] for fold in cv["per_fold"]] == [0.0, 0.0] and cv["mean"]["f1"] == 0.0


def test_messages_that_said_the_wrong_thing(tmp_path):
    """From a fresh-user trial: -v dropped without a word beside --validation; an empty validation file
    'undefined at every grid point'; a roc_auc guard with --no-auc 'undefined on DATA'; numbers of a
    note or a comparison rounded until they looked equal."""
    from pegasos.cli.notes import apart

    data = tmp_path / "d.svm"
    data.write_text("".join(f"{'+1' if i % 3 else '-1'} 1:{i % 7 / 7} 2:{(i * 3) % 5 / 5}\n" for i in range(60)))
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    usage_error(run_pegasos("search", data, "--validation", data, "-v", "3", "-l", "1e-3,1e-2"),
              "-v/--folds cross-validates and --validation scores on FILE: give one of them")
    ok(run_pegasos("search", data, "--validation", data, "-l", "1e-3,1e-2"))
    one_error(run_pegasos("search", data, "--validation", empty, "-l", "1e-3"), "the validation data hold no examples")
    model = tmp_path / "m.model"
    ok(run_pegasos("train", "-q", data, model))
    r = run_pegasos("eval", "--no-auc", "--fail-under", "roc_auc=0.5", data, model)
    usage_error(r, "a guard on roc_auc needs the AUC, which --no-auc leaves out")
    ok(run_pegasos("eval", "--no-auc", "--fail-under", "accuracy=0.1", data, model))
    assert apart(0.10114, 0.10112) == ("0.10114", "0.10112") and apart(4.39, 1.0) == ("4.39", "1")
    assert apart(1.0 + 1e-9, 1.0) == ("1.000000001", "1")
    usage_error(run_pegasos("search", "--kernel", "rbf", "-l", "1e-2", "--gamma", "0.1:1", "--points", "2", data),
              "those of --gamma LO:HI are --gamma-points")


def test_the_epoch_cap_note_offers_the_certificate_only_where_it_certifies():
    """The note of a capped run sent eps-insensitive and log-loss users to a certificate (then --report-gap),
    which then said 'no certified gap'."""
    import pegasos
    from pegasos.cli.notes import gap_hint

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.5]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    for loss, offered in (("hinge", True), ("squared-hinge", True), ("log", False)):
        model = pegasos.train(X, y, loss=loss, lam=1e-2, epochs=1)
        assert ("pegasos objective --gap DATA MODEL" in gap_hint(model)) is offered
    regression = pegasos.train(X, y, loss="eps-insensitive", lam=1e-2, epochs=1)
    assert gap_hint(regression) == ""


@pytest.mark.parametrize("weight", ["1e300", "inf", "nan", "0"])
def test_a_class_weight_that_overflows_is_one_line_error(weight, tmp_path):
    """-w 1:1e300 printed numpy's overflow RuntimeWarning, then blamed the data's scale."""
    r = run_pegasos("train", "-q", "-w", f"1:{weight}", "tests/data/binary.svm", tmp_path / "m")
    assert r.returncode == 2 and "Warning" not in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "-w" in r.stderr and "weight of class 1" in r.stderr
    assert not (tmp_path / "m").exists()
