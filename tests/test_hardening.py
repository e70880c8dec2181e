"""Bad input at the Python API, in data files, caches and model files gives a
PegasosError (never a crash, a NaN objective or unbounded memory)."""

import json
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos
from pegasos.data import csr_arrays
from pegasos.errors import ExampleError, ParameterError


def _data(m=40, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(m, d, density=0.5, format="csr", random_state=seed)
    y = np.where(rng.random(m) > 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    return X, y


def _row_of(X, p):
    return int(np.searchsorted(X.indptr, p, side="right")) - 1


@pytest.fixture(scope="module")
def models():
    X, y = _data()
    X50 = sp.random(40, 50, density=0.3, format="csr", random_state=1)
    y3 = np.arange(40) % 3.0
    return {
        "linear": pegasos.train(X, y, epochs=1),
        "kernel": pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, epochs=1),
        "multiclass": pegasos.train_multiclass(X50, y3, epochs=1),
    }


def _negative_index(X, v=-1, p=5):
    Z = X.copy()
    Z.indices[p] = v
    return Z


def _decreasing_indptr(X):
    Z = X.copy()
    Z.indptr[5] = Z.indptr[7] + 1
    return Z


TRAINERS = {
    "linear": lambda X, y: pegasos.train(X, y, epochs=1),
    "kernel": lambda X, y: pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, epochs=1),
    "multiclass": lambda X, y: pegasos.train_multiclass(X, np.arange(X.shape[0]) % 3.0, epochs=1),
}


@pytest.mark.parametrize("trainer", TRAINERS)
@pytest.mark.parametrize("v", [-1, -7, -10 ** 6, 6, 2 ** 31 - 1])
def test_column_index_out_of_range_is_an_example_error(trainer, v):
    X, y = _data()
    with pytest.raises(ExampleError, match=f"column index {v} is") as e:
        TRAINERS[trainer](_negative_index(X, v), y)
    assert e.value.example == _row_of(X, 5)


@pytest.mark.parametrize("kind", ["linear", "kernel", "multiclass"])
def test_decision_function_checks_the_matrix(models, kind):
    X, _ = _data()
    model = models[kind]
    with pytest.raises(ExampleError, match="column index -1 is negative"):
        model.decision_function(_negative_index(X))
    with pytest.raises(ParameterError, match="decreasing row pointers"):
        model.decision_function(_decreasing_indptr(X))
    Z = X.copy()
    Z.data[3] = np.nan
    with pytest.raises(ExampleError, match="value nan is not finite"):
        model.decision_function(Z)
    with pytest.raises(ExampleError, match="not finite"):
        pegasos.objective(model, Z, np.arange(40) % 3.0 if kind == "multiclass" else _data()[1])


@pytest.mark.parametrize("trainer", TRAINERS)
def test_broken_row_pointers(trainer):
    X, y = _data()
    with pytest.raises(ParameterError, match="decreasing row pointers"):
        TRAINERS[trainer](_decreasing_indptr(X), y)
    Z = X.copy()
    Z.indptr[-1] += 5
    with pytest.raises(ParameterError, match=r"indptr\[-1\] = \d+ but"):
        TRAINERS[trainer](Z, y)
    Z = X.copy()
    Z.indptr[0] = 1
    with pytest.raises(ParameterError, match=r"indptr\[0\] = 1"):
        TRAINERS[trainer](Z, y)
    with pytest.raises(ParameterError, match="row pointers"):
        TRAINERS[trainer](_short_indptr(X), y)


def _short_indptr(X):
    Z = X.copy()
    Z.indptr = Z.indptr[:-3]
    return Z


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_values_refused(value):
    X, y = _data()
    Z = X.copy()
    Z.data[-1] = value
    with pytest.raises(ExampleError, match="not finite") as e:
        pegasos.train(Z, y, epochs=1)
    assert e.value.example == _row_of(X, X.nnz - 1)
    D = X.toarray()
    D[2, 3] = value
    with pytest.raises(ExampleError, match="column 3 is not finite") as e:
        pegasos.train(D, y, epochs=1)
    assert e.value.example == 2


def test_multiclass_n_features_below_the_data():
    X = sp.random(40, 50, density=0.3, format="csr", random_state=0)
    with pytest.raises(ParameterError, match="n_features = 3 is less than the 50 columns"):
        pegasos.train_multiclass(X, np.arange(40) % 3.0, n_features=3)


@pytest.mark.parametrize("fmt", ["csc", "coo"])
def test_other_sparse_formats_are_checked(fmt):
    X, y = _data()
    Z = X.asformat(fmt, copy=True)
    if fmt == "csc":
        Z.indices = Z.indices.copy()
        Z.indices[0] = -3
        match = "row index -3"
    else:
        Z.col = Z.col.copy()
        Z.col[0] = 9
        match = "column index 9 is outside the matrix's 6 columns"
    with pytest.raises(ParameterError, match=match):
        pegasos.train(Z, y, epochs=1)


@pytest.mark.parametrize("X, match", [
    (np.zeros((2, 2, 2)), "2-D matrix"),
    ([["a", "b"], ["c", "d"]], "not a numeric matrix"),
    (sp.csr_matrix(np.eye(2, dtype=np.complex128)), "complex128"),
    (np.eye(2, dtype=np.complex128), "complex"),
])
def test_not_a_matrix(X, match):
    with pytest.raises(ParameterError, match=match):
        pegasos.train(X, [1.0, -1.0], iterations=3)


def test_unsorted_and_repeated_columns_match_a_dense_product():
    rng = np.random.default_rng(3)
    m, d = 30, 8
    rows = np.repeat(np.arange(m), 5)
    cols = rng.integers(0, d, rows.size)                  # repeats within rows
    vals = rng.normal(size=rows.size)
    dense = np.zeros((m, d))
    np.add.at(dense, (rows, cols), vals)
    perm = rng.permutation(5)
    indptr = np.arange(0, rows.size + 1, 5)
    indices = cols.reshape(m, 5)[:, perm].ravel()      # unsorted within rows
    data = vals.reshape(m, 5)[:, perm].ravel()
    X = sp.csr_matrix((data, indices, indptr), shape=(m, d))
    X.has_sorted_indices = True                          # a wrong flag must not be believed
    p, i, v = csr_arrays(X)
    assert p.dtype == np.int64 and i.dtype == np.int32 and v.dtype == np.float64
    np.testing.assert_allclose(sp.csr_matrix((v, i, p), shape=(m, d)).toarray(), dense, rtol=0, atol=1e-12)
    for r in range(m):
        assert np.all(np.diff(i[p[r]:p[r + 1]]) > 0)
    w = rng.normal(size=d)
    model = pegasos.linear.LinearModel(w=w, bias=0.5, labels=None, lam=1.0, loss="eps-insensitive")
    np.testing.assert_allclose(model.decision_function(X), dense @ w + 0.5, rtol=1e-12, atol=1e-12)


def test_dtypes_converted_and_kept():
    X, _ = _data()
    for dt, want in ((np.int64, np.float64), (np.bool_, np.float64), (np.float32, np.float32),
                     (np.longdouble, np.float64)):
        p, i, v = csr_arrays(X.astype(dt))
        assert v.dtype == want and p.dtype == np.int64 and i.dtype == np.int32
    Z = X.copy()
    Z.indptr = Z.indptr.astype(np.uint64)
    Z.indices = Z.indices.astype(np.int64)
    p, i, v = csr_arrays(Z)
    np.testing.assert_array_equal(p, X.indptr)
    np.testing.assert_array_equal(i, X.indices)


def test_valid_csr_is_not_copied():
    X, _ = _data()
    X = X.astype(np.float64)
    X.indptr = X.indptr.astype(np.int64)
    p, i, v = csr_arrays(X)
    assert np.shares_memory(v, X.data) and np.shares_memory(p, X.indptr)


def test_reader_arrays_pass_the_checks_uncopied(tmp_path):
    f = tmp_path / "d.svm"
    f.write_text("+1 1:1 3:2\n-1 2:1\n")
    d = pegasos.read_svmlight(str(f))
    p, i, v = csr_arrays(d)
    assert p is d.chunk.indptr and i is d.chunk.indices and v is d.chunk.data
    d.chunk.indices[0] = -1                          # a Chunk edited in place is checked again
    with pytest.raises(ExampleError, match="column index -1"):
        csr_arrays(d.chunk)


# ---------------------------------------------------------------------------------------------------------------
# the reader: byte-order marks, CR-only line ends, control bytes, line length

from pegasos.errors import DataError, ModelFormatError  # noqa: E402
from pegasos.io import iter_svmlight, read_svmlight  # noqa: E402

from conftest import one_error, run_pegasos  # noqa: E402

BOM = b"\xef\xbb\xbf"


def _write(tmp_path, name, data):
    f = tmp_path / name
    f.write_bytes(data)
    return f


@pytest.mark.parametrize("threads", [1, 2])
def test_bom_at_the_start_of_a_data_file_is_skipped(tmp_path, threads):
    text = b"+1 1:2 3:1\n-1 2:1\n" * 50
    plain = read_svmlight(str(_write(tmp_path, "plain.svm", text)), threads=threads)
    bom = read_svmlight(str(_write(tmp_path, "bom.svm", BOM + text)), threads=threads)
    np.testing.assert_array_equal(bom.y, plain.y)
    assert (bom.X != plain.X).nnz == 0
    assert [lab.text for lab in bom.distinct_labels] == ["+1", "-1"]


def test_bom_split_across_reads(tmp_path):
    f = _write(tmp_path, "bom.svm", BOM + b"+1 1:2\n-1 2:1\n")
    chunks = list(iter_svmlight(str(f), block_size=1))
    assert sum(c.n_rows for c in chunks) == 2
    assert run_pegasos("train", "-q", "--epochs", "1", f, tmp_path / "m").returncode == 0


def test_bom_on_a_later_line_is_named(tmp_path):
    f = _write(tmp_path, "d.svm", b"+1 1:2\n" + BOM + b"-1 2:1\n")
    with pytest.raises(DataError, match=r"line 2: the line starts with a UTF-8 byte-order mark \(EF BB BF\)"):
        read_svmlight(str(f))


def test_cr_only_line_ends_are_named(tmp_path):
    f = _write(tmp_path, "mac.svm", b"+1 1:2\r-1 3:1\r+1 2:1\r")
    with pytest.raises(DataError, match=r"line 1: .*CR-only line ends \(classic Mac OS\)"):
        read_svmlight(str(f))
    one_error(run_pegasos("train", "-q", f, tmp_path / "m"), "CR-only line ends", "mac.svm")
    crlf = _write(tmp_path, "dos.svm", b"+1 1:2\r\n-1 3:1\r\n")
    assert read_svmlight(str(crlf)).n_examples == 2


@pytest.mark.parametrize("line, shown", [
    (b"+1\x02 3:1", r"label '+1\x02' is not a number"),
    (b"-1 3:1\x01", r"value in '3:1\x01' is not a number"),
    (b"-1 \x1b3:1", r"token '\x1b3:1' is not of the form index:value"),
    (b"-1 3:1 4:\x7f2", r"'4:\x7f2'"),
])
def test_control_bytes_are_shown_escaped(tmp_path, line, shown):
    f = _write(tmp_path, "d.svm", b"+1 1:2\n" + line + b"\n")
    with pytest.raises(DataError) as e:
        read_svmlight(str(f))
    assert shown in str(e.value) and "line 2" in str(e.value)
    msg = one_error(run_pegasos("train", "-q", f, tmp_path / "m"))
    assert shown in msg


def test_line_length_is_capped(tmp_path, monkeypatch):
    monkeypatch.setenv("PEGASOS_MAX_LINE_BYTES", "1000")
    f = _write(tmp_path, "z.svm", b"+1 1:1\n" + b"z" * 5000)
    with pytest.raises(DataError, match="the line starting at byte 7 is longer than 1000 bytes"):
        list(iter_svmlight(str(f), block_size=256))
    f = _write(tmp_path, "cr.svm", b"+1 1:1\r" * 500)
    with pytest.raises(DataError, match=r"longer than 1000 bytes; it holds carriage returns"):
        read_svmlight(str(f), block_size=256)
    ok_file = _write(tmp_path, "ok.svm", (b"+1 " + b" ".join(b"%d:1" % j for j in range(1, 150)) + b"\n") * 20)
    assert read_svmlight(str(ok_file), block_size=256).n_examples == 20     # 900-byte lines pass
    r = run_pegasos("train", "-q", ok_file, tmp_path / "m", env={"PEGASOS_MAX_LINE_BYTES": "nope"})
    one_error(r, "PEGASOS_MAX_LINE_BYTES must be a positive number")


# ---------------------------------------------------------------------------------------------------------------
# model files: bounded reading, BOM, non-finite header numbers

@pytest.fixture(scope="module")
def model_text(tmp_path_factory):
    d = tmp_path_factory.mktemp("m")
    X, y = _data()
    m = pegasos.train(X, y, epochs=1)
    m.save(d / "lin.model")
    mc = pegasos.train_multiclass(X, np.arange(40) % 3.0, method="crammer-singer", epochs=1,
                                  cost=np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float).ravel())
    mc.save(d / "cs.model")
    km = pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, epochs=1)
    km.save(d / "k.model")
    return {k: (d / f"{k}.model").read_bytes() for k in ("lin", "cs", "k")}


@pytest.mark.parametrize("kind", ["lin", "cs", "k"])
def test_model_with_bom_loads(tmp_path, model_text, kind):
    a = pegasos.load_model(str(_write(tmp_path, "a.model", model_text[kind])))
    b = pegasos.load_model(str(_write(tmp_path, "b.model", BOM + model_text[kind])))
    X, _ = _data()
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("kind, key, bad", [
    ("cs", "cost_matrix", "0.0,1.0,2.0;1.0,0.0,nan;2.0,1.0,0.0"),
    ("cs", "lambda", "inf"),
    ("lin", "bias", "nan"),
    ("lin", "lambda", "1e999"),
    ("lin", "step_offset", "-inf"),
    ("lin", "average_from", "NaN"),
    ("k", "gamma", "nan"),
    ("k", "coef0", "Infinity"),
])
def test_non_finite_header_numbers_refused(tmp_path, model_text, kind, key, bad):
    lines = model_text[kind].decode().split("\n")
    for i, ln in enumerate(lines):
        if ln.startswith(key + " "):
            lines[i] = f"{key} {bad}"
            break
    else:
        lines.insert(lines.index(next(ln for ln in lines if ln.startswith("train_examples"))) + 1, f"{key} {bad}")
    f = _write(tmp_path, "bad.model", "\n".join(lines).encode())
    with pytest.raises(ModelFormatError, match=f"header '{key}' holds .* not a finite number"):
        pegasos.load_model(str(f))


def _edited(model_bytes, key, value):
    """The model text with ``key``'s line set to ``value`` (inserted after train_examples when absent),
    and the 1-based line it is on."""
    lines = model_bytes.decode().split("\n")
    for i, ln in enumerate(lines):
        if ln.startswith(key + " "):
            lines[i] = f"{key} {value}"
            return "\n".join(lines).encode(), i + 1
    at = lines.index(next(ln for ln in lines if ln.startswith("train_examples"))) + 1
    lines.insert(at, f"{key} {value}")
    return "\n".join(lines).encode(), at + 1


# every header value a command reads back, edited by hand: refused at load with its line (a fresh user's trial
# found tracebacks from `objective --gap` on certified_gap and from `train --init` on projection, and silent
# acceptance of the rest)
BAD_HEADER_VALUES = [
    ("lin", "iterations", "banana"), ("lin", "iterations", "1.5"), ("lin", "seed", "banana"),
    ("lin", "train_examples", "many"), ("lin", "batch_size", "0"), ("lin", "batch_size", "two"),
    ("lin", "average_from", "7"), ("lin", "average_from", "banana"), ("lin", "sampling", "banana"),
    ("lin", "projection", "banana"), ("lin", "averaging", "most"), ("lin", "finish", "banana"),
    ("lin", "finish_passes", "banana"), ("lin", "finish_passes", "3,x"), ("lin", "certified_gap", "5"),
    ("lin", "certified_gap", "banana"), ("lin", "step_offset", "big"), ("lin", "schedule", "fast"),
    ("lin", "eta0", "0x10"), ("lin", "epochs_trained", "ten"), ("lin", "averaged_iterates", "1-2"),
    ("lin", "shuffle_buffer", "0"),
    ("k", "iterations", "banana"), ("k", "budget", "banana"), ("k", "support_vectors_removed", "x"),
    ("cs", "seed", "1e3"),
]


@pytest.mark.parametrize("kind, key, bad", BAD_HEADER_VALUES)
def test_bad_header_values_refused_at_load_with_their_line(tmp_path, model_text, kind, key, bad):
    text, line = _edited(model_text[kind], key, bad)
    f = _write(tmp_path, "bad.model", text)
    with pytest.raises(ModelFormatError, match=f"line {line}: header '{key}' holds '{re.escape(bad)}'; it must be"):
        pegasos.load_model(str(f))


@pytest.mark.parametrize("edits, message", [
    ({"finish_passes": "3,4"}, "'finish_passes' has 2 entries for 1 problem "),
    ({"class_weights": "5.0:2.0"}, "'class_weights' names label 5.0, which the model does not have"),
    ({"averaging": "suffix", "average_from": "-"}, "'averaging suffix' needs a number in 'average_from'"),
])
def test_header_values_that_contradict_the_model_refused(tmp_path, model_text, edits, message):
    text = model_text["lin"]
    for key, value in edits.items():
        text = _edited(text, key, value)[0]
    f = _write(tmp_path, "bad.model", text)
    with pytest.raises(ModelFormatError, match=re.escape(message)):
        pegasos.load_model(str(f))


@pytest.mark.parametrize("command", ["objective --gap", "train --init", "eval", "predict", "info"])
@pytest.mark.parametrize("key, bad", [("certified_gap", "banana"), ("projection", "banana"), ("seed", "x")])
def test_commands_refuse_a_bad_header_value_in_one_line(tmp_path, model_text, command, key, bad):
    X, y = _data()
    data = tmp_path / "d.svm"
    X = X.tocsr()
    data.write_text("".join(f"{int(y[i]):+d} " + " ".join(f"{j + 1}:{v!r}" for j, v in
                                                         zip(X[i].indices, X[i].data.tolist())) + "\n" for i in range(X.shape[0])))
    text, line = _edited(model_text["lin"], key, bad)
    model = _write(tmp_path, "bad.model", text)
    out = tmp_path / "out"
    args = {"objective --gap": ("objective", "--gap", data, model), "train --init": ("train", "-q", "--init", model,
            "--epochs", "1", data, out), "eval": ("eval", data, model), "predict": ("predict", data, model, out),
            "info": ("info", model)}[command]
    one_error(run_pegasos(*args), f"bad.model, line {line}: header '{key}' holds '{bad}'")
    assert not out.exists()


def test_estimator_load_of_a_bad_header_is_a_model_format_error(tmp_path, model_text):
    pytest.importorskip("sklearn")
    from pegasos.sklearn import PegasosClassifier

    for key in ("iterations", "seed", "batch_size", "train_examples", "finish_passes", "step_offset", "average_from"):
        text, line = _edited(model_text["lin"], key, "banana")
        with pytest.raises(ModelFormatError, match=f"line {line}: header '{key}'"):
            PegasosClassifier.load(str(_write(tmp_path, f"{key}.model", text)))


def test_train_file_named_inf_is_fine(tmp_path, model_text):
    text = model_text["lin"].replace(b"\ntrain_file ", b"\ntrain_file inf #")
    assert pegasos.load_model(str(_write(tmp_path, "a.model", text))).n_features == 6


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_model_loader_refuses_endless_devices(device):
    with pytest.raises(ModelFormatError, match="binary data at byte [0-9]+ .a NUL byte; not a pegasos model file"):
        pegasos.load_model(device)


def test_model_loader_stops_at_binary_data(tmp_path, model_text):
    f = _write(tmp_path, "z.model", model_text["lin"].split(b"\n")[0] + b"\n" + b"\0" * (3 << 20))
    with pytest.raises(ModelFormatError, match="binary data at byte"):
        pegasos.load_model(str(f))
    with pytest.raises(ModelFormatError, match="directory"):
        pegasos.load_model(str(tmp_path))


def test_cli_predict_with_device_as_model(tmp_path):
    d = _write(tmp_path, "d.svm", b"+1 1:1\n-1 2:1\n")
    one_error(run_pegasos("predict", d, "/dev/zero"), "/dev/zero", "not a pegasos model file")


# ---------------------------------------------------------------------------------------------------------------
# damaged caches: the value section is checked when an existing cache is opened

from pegasos import stream  # noqa: E402

from conftest import data_file, rebuilt_cache  # noqa: E402


def _poke_value(cache, position, value, dtype):
    offset, _, count = stream.read_cache_header(cache)["sections"]["data"]
    with open(cache, "r+b") as f:
        f.seek(offset + (position % count) * np.dtype(dtype).itemsize)
        f.write(np.array([value], dtype=dtype).tobytes())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("position, value", [(0, np.nan), (7, np.inf), (-1, -np.inf)])
def test_cache_with_non_finite_values_is_damaged(tmp_path, dtype, position, value):
    src = tmp_path / "h.svm"
    src.write_bytes(data_file("heart_scale/heart_scale").read_bytes())
    cache = str(tmp_path / "h.cache")
    stream.load_cached(str(src), cache, dtype=dtype)
    _poke_value(cache, position, value, dtype)
    with pytest.raises(DataError, match=r"h\.cache: damaged cache file \(stored value \d+ is not finite\)"):
        stream.open_cache(cache)
    args = ["train", "-q", "--cache", cache] + (["--dtype", "float32"] if dtype == np.float32 else [])
    r = run_pegasos(*args, src, tmp_path / "m.model")
    rebuilt_cache(r, cache, "is not finite", str(src))
    assert stream.open_cache(cache).chunk.n_rows == 270          # rebuilt whole


def _first_problems(indptr, indices, data, n_minor):
    """NumPy reference of the compiled scan: first bad index, first non-finite value, any unsorted row."""
    idx = indices.astype(np.int64)
    bad = np.flatnonzero((idx < 0) | (idx >= n_minor))
    nonfinite = np.flatnonzero(~np.isfinite(data))
    starts = np.zeros(idx.shape[0], dtype=bool)
    starts[indptr[:-1][indptr[:-1] < idx.shape[0]]] = True
    unsorted = bool(np.any((idx[1:] <= idx[:-1]) & ~starts[1:]))
    return (int(bad[0]) if bad.size else -1, int(nonfinite[0]) if nonfinite.size else -1, unsorted)


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("value_type", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(6))
def test_compiled_scan_of_csr_arrays_matches_numpy(index_type, value_type, seed):
    # the checks of a user's matrix run in one compiled pass; each damage is found at the same position
    from pegasos import _svmlight

    rng = np.random.default_rng(seed)
    m, d = 60, 40
    X = sp.random(m, d, density=0.2, format="csr", random_state=seed)
    X.sort_indices()
    indptr = X.indptr.astype(np.int64)
    for damage in ("none", "negative", "wide", "nan", "inf", "repeat", "both"):
        indices, data = X.indices.astype(index_type), X.data.astype(value_type)
        p, q = sorted(rng.choice(indices.shape[0], 2, replace=False))
        if damage in ("negative", "both"):
            indices[q] = -1 - rng.integers(5)
        if damage == "wide":
            indices[p] = d + rng.integers(3)
        if damage in ("nan", "both"):
            data[p] = np.nan
        if damage == "inf":
            data[q] = -np.inf
        if damage == "repeat":
            row = int(np.searchsorted(indptr, q, side="right")) - 1
            if q > indptr[row]:
                indices[q] = indices[q - 1]
        got = _svmlight.scan_compressed(indptr, indices, data, d, True)
        assert got == _first_problems(indptr, indices, data, d), damage
        assert _svmlight.scan_compressed(indptr, indices, data, d, False)[1] == -1


def test_compiled_scan_of_int32_indices_against_a_width_beyond_int32():
    # negative int32 indices wrap to 2^31 and above when compared unsigned: still outside any width
    from pegasos import _svmlight

    indptr = np.array([0, 3], dtype=np.int64)
    indices = np.array([0, 5, -2], dtype=np.int32)
    assert _svmlight.scan_compressed(indptr, indices, np.ones(3), 2 ** 33, True)[0] == 2
    assert _svmlight.scan_compressed(indptr[:2] - [0, 1], indices[:2], np.ones(2), 2 ** 33, True) == (-1, -1, False)


@pytest.mark.parametrize("index_type", [np.int32, np.int64, np.uint32, np.int16])
def test_user_matrix_errors_name_the_example_for_each_index_type(index_type):
    X = sp.csr_matrix(np.eye(4))
    data = X.data.copy()
    data[2] = np.nan
    Y = sp.csr_matrix((data, X.indices.astype(index_type), X.indptr), shape=(4, 4))
    with pytest.raises(ExampleError, match="example 3: value nan is not finite"):
        csr_arrays(Y)


# ---------------------------------------------------------------------------------------------------------------
# numbers that overflow float64: decision values of huge feature values, weights of a model edited by hand

def _small_model(tmp_path):
    X, y = _data()
    model = pegasos.train(X, y, epochs=1)
    path = tmp_path / "m.model"
    model.save(path)
    return model, path


@pytest.mark.parametrize("command", ["predict", "eval", "objective", "objective --json"])
def test_decision_values_that_overflow_are_an_error_at_the_example_line(tmp_path, command):
    # predict printed nan, eval reported accuracy 1.0 with ROC AUC 0, --json printed NaN
    model, path = _small_model(tmp_path)
    big = " ".join(f"{j}:{1e308 * (1 if model.w[j - 1] >= 0 else -1)!r}" for j in range(1, 7))
    data = _write(tmp_path, "d.svm", f"+1 1:0.5\n# a comment\n-1 {big}\n+1 2:0.25\n".encode())
    out = tmp_path / "out.txt"
    args = {"predict": ("predict", data, path, out), "eval": ("eval", data, path),
            "objective": ("objective", data, path), "objective --json": ("objective", "--json", data, path)}[command]
    one_error(run_pegasos(*args), "d.svm, line 3: its decision value is not a finite number")
    assert not out.exists()


def test_decision_values_that_overflow_in_python_name_the_example():
    X, y = _data()
    model = pegasos.train(X, y, epochs=1)
    rows = sp.csr_matrix(np.vstack([np.full(6, 0.1), np.sign(model.w + 1e-300) * 1e308]))
    with pytest.raises(ExampleError, match="example 2: its decision value is not a finite number") as e:
        model.decision_function(rows)
    assert e.value.example == 1


def test_weights_whose_squared_norm_overflows_refused_at_their_line(tmp_path):
    _, path = _small_model(tmp_path)
    lines = path.read_text().split("\n")
    at = lines.index(next(ln for ln in lines if ln.startswith("weights "))) + 1
    index = lines[at].split(":")[0]
    lines[at] = f"{index}:1e200"
    bad = _write(tmp_path, "bad.model", "\n".join(lines).encode())
    with pytest.raises(ModelFormatError, match=f"line {at + 1}: weight 1e\\+200 is too large"):
        pegasos.load_model(str(bad))
    one_error(run_pegasos("info", bad), f"line {at + 1}: weight 1e+200 is too large")


def test_json_records_hold_no_nan_or_infinity():
    from pegasos.cli.common import strict_json

    record = {"a": math.inf, "b": [1.0, math.nan, {"c": -math.inf}], "d": np.float64("nan"), "e": 2.5, "f": "x"}
    assert strict_json(record) == {"a": None, "b": [1.0, None, {"c": None}], "d": None, "e": 2.5, "f": "x"}
    json.dumps(strict_json(record), allow_nan=False)


@pytest.mark.parametrize("command", ["predict", "eval", "eval -q", "eval --json", "objective", "objective --json"])
def test_scoring_an_empty_file_says_so_on_stderr(tmp_path, command):
    """Exit 0 with every metric n/a and predict's OUTPUT empty (shared case CASE-20), and one note, the
    notes' "pegasos: note: " line (it was "note: " alone): a cron job without a guard would not notice.
    train refuses the same file (nothing to fit), a guard fails on the undefined metric (exit 3)."""
    _, path = _small_model(tmp_path)
    data = _write(tmp_path, "empty.svm", b"# no examples here\n\n")
    out = tmp_path / "out.txt"
    words = command.split()
    args = (words[0], *words[1:], data, path) + ((out,) if words[0] == "predict" else ())
    r = run_pegasos(*args)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"pegasos: note: {data} holds no examples (an empty file, or only comments "
                                     "and blank lines): there is nothing to score"], r.stderr
    if words[0] == "eval" and "--json" not in words:
        assert re.search(r"^accuracy +n/a$", r.stdout, re.M), r.stdout
    if words[0] == "predict":
        assert out.read_bytes() == b""
    if "--json" in words:
        assert json.loads(r.stdout)["examples"] == 0


def test_an_empty_file_is_refused_by_train_and_fails_a_guard(tmp_path):
    _, path = _small_model(tmp_path)
    data = _write(tmp_path, "empty.svm", b"# no examples here\n\n")
    one_error(run_pegasos("train", data, tmp_path / "m"), "no training examples found")
    r = run_pegasos("eval", "--fail-under", "accuracy=0.5", data, path)
    assert r.returncode == 3 and r.stderr.splitlines()[1:] == [
        "guard failed: accuracy is undefined on DATA (--fail-under accuracy=0.5)"], r.stderr
