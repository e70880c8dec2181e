"""`pegasos info`: the header, non-zero weights, ||w||, bias and the top weights in the file's
index base; per class for multiclass; support vectors for kernels.  Also `train --json`."""

import json

import numpy as np
import scipy.sparse as sp

import pegasos

import small_data
from conftest import error_line, ok, run_pegasos


def _one_feature_data(m=300, n=12, feature=6, seed=0):
    """Labels decided by column ``feature`` (0-based) alone; the other columns are noise."""
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=0.5, random_state=rng, format="lil")
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    X[:, feature] = sp.lil_matrix(y.reshape(-1, 1) * (1.0 + rng.random((m, 1))))
    return sp.csr_matrix(X), y


def test_top_weight_is_the_deciding_feature_in_the_files_index_base(tmp_path):
    X, y = _one_feature_data()
    for zero_based, expected in ((False, 7), (True, 6)):
        path = small_data.write_svm(tmp_path / f"d{zero_based}.svm", X, y, zero_based=zero_based)
        model = tmp_path / f"m{zero_based}"
        ok(run_pegasos("train", "-q", "-l", "1e-2", "--epochs", "5", *(["--zero-based"] if zero_based else []),
                       path, model))
        r = json.loads(ok(run_pegasos("info", model, "--json", "--top", "3")))
        w = pegasos.load_model(str(model)).w
        assert r["top_weights"][0]["feature"] == expected
        assert [t["weight"] for t in r["top_weights"]] == sorted(w[w != 0], key=abs, reverse=True)[:3]
        assert r["nonzero_weights"] == int(np.count_nonzero(w)) and r["features"] == w.shape[0]
        assert abs(r["norm_w"] - float(np.linalg.norm(w))) < 1e-12
        assert r["header"]["lambda"] == "0.01" and r["header"]["index_base"] == ("0" if zero_based else "1")
        text = ok(run_pegasos("info", model, "--top", "2"))
        assert "lambda" in text and f"non-zero weights {np.count_nonzero(w)} of {w.shape[0]}" in text
        assert f"top 2 by |weight|: {expected}:" in text


def test_multiclass_and_kernel_models(tmp_path):
    X, y = small_data.multiclass(m=300)
    path = small_data.write_svm(tmp_path / "mc.svm", X, y)
    ok(run_pegasos("train", "-q", "-l", "1e-2", "--epochs", "3", path, tmp_path / "mc.model"))
    r = json.loads(ok(run_pegasos("info", tmp_path / "mc.model", "--json", "--top", "2")))
    W = pegasos.load_model(str(tmp_path / "mc.model")).W
    assert [c["label"] for c in r["classes"]] == ["1", "2", "3"]
    for c, row in zip(r["classes"], W):
        assert c["nonzero_weights"] == int(np.count_nonzero(row)) and len(c["top_weights"]) == 2
        assert c["top_weights"][0]["feature"] == int(np.argmax(np.abs(row))) + 1
    assert "class 2: non-zero weights" in ok(run_pegasos("info", tmp_path / "mc.model"))
    Xb, yb = small_data.binary(m=100, n=8)
    path = small_data.write_svm(tmp_path / "b.svm", Xb, yb)
    ok(run_pegasos("train", "-q", "--kernel", "rbf", "--epochs", "2", path, tmp_path / "k.model"))
    r = json.loads(ok(run_pegasos("info", tmp_path / "k.model", "--json")))
    assert r["support_vectors"] == pegasos.load_model(str(tmp_path / "k.model")).n_support > 0
    assert "support vectors" in ok(run_pegasos("info", tmp_path / "k.model"))
    error_line(run_pegasos("info", path), status=1)          # a data file is not a model


def test_train_json_holds_the_summary_and_the_options(tmp_path):
    X, y = small_data.binary(m=200)
    path = small_data.write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "--json", "-l", "0.01", "--epochs", "3", path, tmp_path / "m")
    record = json.loads(ok(r))
    model = pegasos.load_model(str(tmp_path / "m"))
    assert record["examples"] == 200 and record["iterations"] == 600 and record["lambda"] == 0.01
    assert record["objective"]["objective"] == pegasos.objective(model, X, y)["objective"]
    assert record["options"]["epochs"] == 3 and all(model.info[k] == v for k, v in record["header"].items())
    assert record["model"] == str(tmp_path / "m") and record["train_seconds"] >= 0
    error_line(run_pegasos("train", "--json", path, "-"), "--json", "MODEL", status=2)
