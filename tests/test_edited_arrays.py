"""Arrays the API hands out (the reader's d.X / d.chunk, iter_svmlight's chunks, a cache's arrays, a
kernel model's support vectors) may be edited in place or replaced by the caller; the compiled loops
index with them without bounds checks, so they are checked where they enter: an edit that breaks
them is a PegasosError, never a crash (glibc abort, segfault) or a run on a broken row pointer.

Each edit runs in its own process, so that a crash is seen as the process's exit status."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pegasos

SETUP = """
import numpy as np, pegasos
from pegasos.errors import PegasosError
from pegasos.stream import load_cached

PATH, CACHE = {path!r}, {cache!r}

def fresh():
    return pegasos.read_svmlight(PATH)

def report(name, call):
    try:
        value = call()
    except PegasosError as e:
        print(name, "refused", type(e).__name__, str(e).replace("\\n", " "))
    else:
        print(name, "ran", np.asarray(getattr(value, "w", value)).ravel()[:3].tolist())

binary = pegasos.train(fresh().X, fresh().y, epochs=2)
kernel = pegasos.train_kernel(fresh().X, fresh().y, kernel="rbf", gamma=0.5, epochs=2)
multi = pegasos.train_multiclass(fresh().X, np.arange(40) % 3.0, epochs=2)
USES = {{
    "fit": lambda d: pegasos.fit(d),
    "train": lambda d: pegasos.train(d.chunk, d.y, epochs=2),
    "train_kernel": lambda d: pegasos.train_kernel(d.chunk, d.y, kernel="rbf", gamma=0.5, epochs=2),
    "train_multiclass": lambda d: pegasos.train_multiclass(d.chunk, np.arange(40) % 3.0, epochs=2),
    "linear_decision": lambda d: binary.decision_function(d),
    "kernel_decision": lambda d: kernel.decision_function(d),
    "multiclass_decision": lambda d: multi.decision_function(d.chunk),
    "objective": lambda d: pegasos.objective(binary, d.chunk, d.y)["objective"],
    "duality_gap": lambda d: pegasos.duality_gap(binary, d.chunk, d.y)["gap"],
}}
"""

EDITS = {
    "negative_index": "d.X.indices -= 1",
    "index_beyond_int32": "d.chunk.indices = d.chunk.indices.astype(np.int64); d.chunk.indices[3] = 2**40",
    "indptr_far_beyond_nnz": "d.chunk.indptr[5] = 10**9",
    "indptr_decreasing": "d.chunk.indptr[5] = d.chunk.indptr[7] + 1",
    # a fall to int64's extremes, whose difference from the pointer before wraps round to a rise
    "indptr_falls_to_int64_min": "d.chunk.indptr[-1] = np.iinfo(np.int64).min",
    "indptr_falls_from_int64_max": "d.chunk.indptr[5] = np.iinfo(np.int64).max",
    "indptr_not_from_0": "d.chunk.indptr[0] = 2",
    "indptr_end_beyond_nnz": "d.chunk.indptr[-1] += 5",
    "indices_replaced_shorter": "d.chunk.indices = d.chunk.indices[:3].copy()",
    "data_replaced_shorter": "d.chunk.data = d.chunk.data[:3].copy()",
    "indptr_replaced_2d": "d.chunk.indptr = d.chunk.indptr.reshape(1, -1)",
    "nan_value": "d.X.data[2] = np.nan",
}


def _run(tmp_path, body):
    path = tmp_path / "d.svm"
    path.write_text("".join(f"{'+1' if i % 2 else '-1'} {1 + i % 5}:1 {6 + i % 3}:0.5 9:{i / 10}\n"
                            for i in range(40)))
    code = SETUP.format(path=str(path), cache=str(tmp_path / "d.cache")) + textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"exit {r.returncode} (a crash when negative or 134)\n{r.stdout}\n{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    return dict(line.split(" ", 1) for line in r.stdout.splitlines())


@pytest.mark.parametrize("edit", EDITS)
def test_an_edit_that_breaks_the_reader_arrays_is_refused_by_every_entry(tmp_path, edit):
    out = _run(tmp_path, f"""
        for name, use in USES.items():
            d = fresh()
            {EDITS[edit]}
            report(name, lambda: use(d))
        """)
    assert len(out) == 9, out
    for name, result in out.items():
        assert result.startswith("refused"), (name, result)


@pytest.mark.parametrize("edit", ["negative_index", "indptr_decreasing", "indptr_far_beyond_nnz"])
def test_edited_chunks_of_iter_svmlight_and_of_a_cache_are_refused(tmp_path, edit):
    statement = EDITS[edit].replace("d.X.", "d.chunk.")
    out = _run(tmp_path, f"""
        from pegasos.io import iter_svmlight
        for name, use in USES.items():
            if name == "fit":
                continue
            c = next(iter_svmlight(PATH))
            d = pegasos.io.SVMLightData(PATH, c, 9)
            {statement}
            report("chunk_" + name, lambda: use(d))
            d = load_cached(PATH, CACHE)[0]
            d.chunk.indptr, d.chunk.indices = d.chunk.indptr.copy(), d.chunk.indices.copy()
            {statement}
            report("cache_" + name, lambda: use(d))
        """)
    assert len(out) == 16, out
    for name, result in out.items():
        assert result.startswith("refused"), (name, result)


def test_arrays_of_a_cache_cannot_be_edited_in_place(tmp_path):
    out = _run(tmp_path, """
        d = load_cached(PATH, CACHE)[0]
        for name in ("indptr", "indices", "data", "labels"):
            try:
                getattr(d.chunk, name)[1] = -1
                print(name, "written")
            except ValueError:
                print(name, "read-only")
        """)
    assert set(out.values()) == {"read-only"}, out


def test_values_edited_in_place_train_like_the_same_arrays_given_as_a_matrix(tmp_path):
    out = _run(tmp_path, """
        d = fresh()
        d.X.data *= 3.0
        a = pegasos.fit(d, pegasos.TrainOptions(epochs=3, finish="none"))
        b = pegasos.fit((d.X.copy(), d.y.copy()), pegasos.TrainOptions(epochs=3, finish="none"))
        print("same", bool(np.array_equal(a.w, b.w)))
        print("decision", bool(np.array_equal(a.decision_function(d), b.decision_function(d.X.copy()))))
        """)
    assert out == {"same": "True", "decision": "True"}


KERNEL_EDITS = {
    "sv_negative_index": "kernel.sv_indices -= 1",
    "sv_indptr_beyond": "kernel.sv_indptr[1] = 10**9",
    "sv_indptr_decreasing": "kernel.sv_indptr[1] = kernel.sv_indptr[3] + 1",
    "sv_indptr_falls_to_int64_min": "kernel.sv_indptr[-1] = np.iinfo(np.int64).min",
    "sv_rows_fewer_than_coef": "kernel.sv_indptr = kernel.sv_indptr[:2].copy()",
    "coef_shorter": "kernel.coef = kernel.coef[:1].copy()",
}


@pytest.mark.parametrize("edit", KERNEL_EDITS)
def test_edited_support_vectors_are_refused(tmp_path, edit):
    out = _run(tmp_path, f"""
        kernel.sv_sqnorms                       # the cached norms exist before the edit
        {KERNEL_EDITS[edit]}
        report("decision", lambda: kernel.decision_function(fresh()))
        report("norms", lambda: kernel.sv_sqnorms)
        d = fresh()
        report("duality_gap", lambda: pegasos.duality_gap(kernel, d.chunk, d.y)["gap"])
        """)
    assert out["decision"].startswith("refused ParameterError the model's"), out
    assert out["norms"].startswith("refused ParameterError the model's"), out
    assert out["duality_gap"].startswith("refused ParameterError the model's"), out


def test_valid_reader_arrays_are_not_copied(tmp_path):
    """(csr_arrays of the reader's data: tests/test_hardening.py::test_reader_arrays_pass_the_checks_uncopied)"""
    from pegasos.examples import as_examples

    f = tmp_path / "d.svm"
    f.write_text("+1 1:1 3:2\n-1 2:1\n")
    d = pegasos.read_svmlight(str(f))
    ex = as_examples(d)
    assert ex.indptr is d.chunk.indptr and ex.indices is d.chunk.indices and ex.y is d.chunk.labels


def test_unsorted_rows_of_an_edited_chunk_are_sorted_as_for_a_matrix(tmp_path):
    from pegasos.data import csr_arrays

    f = tmp_path / "d.svm"
    f.write_text("+1 1:1 3:2 5:4\n-1 2:1\n")
    d = pegasos.read_svmlight(str(f))
    d.chunk.indices[:3] = d.chunk.indices[:3][::-1].copy()
    d.chunk.data[:3] = d.chunk.data[:3][::-1].copy()
    p, i, v = csr_arrays(d)
    np.testing.assert_array_equal(i, [0, 2, 4, 1])
    np.testing.assert_array_equal(v, [1, 2, 4, 1])


@pytest.mark.parametrize("edit", ["w_nan", "w_inf", "bias_nan", "W_inf", "biases_nan"])
def test_a_model_edited_to_a_non_finite_weight_is_not_written(tmp_path, edit):
    import scipy.sparse as sp

    from pegasos.errors import ParameterError

    X = sp.random(30, 5, density=0.6, format="csr", random_state=1)
    y = np.where(np.arange(30) % 2, 1.0, -1.0)
    if edit in ("W_inf", "biases_nan"):
        model = pegasos.train_multiclass(X, np.arange(30) % 3.0, epochs=1)
        if edit == "W_inf":
            model.W[2, 3] = np.inf
        else:
            model.biases[1] = np.nan
    else:
        model = pegasos.train(X, y, epochs=1)
        if edit == "bias_nan":
            model.bias = float("nan")
        else:
            model.w[2] = np.nan if edit == "w_nan" else -np.inf
    target = tmp_path / "m.model"
    with pytest.raises(ParameterError, match="not a finite number is not written"):
        model.save(str(target))
    assert not target.exists() and not list(tmp_path.iterdir())


MODEL_EDITS = {
    "w_reshaped": ("binary", "model.w = model.w.reshape(1, -1)"),
    "w_reversed_view": ("binary", "model.w = model.w[::-1]"),
    "w_of_text": ("binary", "model.w = np.array(['a', 'b'])"),
    "W_one_row_more": ("multi", "model.W = np.vstack([model.W, model.W[:1]])"),
    "biases_reshaped": ("multi", "model.biases = model.biases.reshape(1, -1)"),
    "coef_reshaped": ("kernel", "model.coef = model.coef.reshape(1, -1)"),
    "coef_longer": ("kernel", "model.coef = np.concatenate([model.coef, model.coef[:2]])"),
    "sv_indices_shorter": ("kernel", "model.sv_indices = model.sv_indices[:-2].copy()"),
}


@pytest.mark.parametrize("edit", MODEL_EDITS)
def test_a_model_array_edited_to_another_shape_is_refused_where_it_is_used(tmp_path, edit):
    """Found by the fuzz target of the API's arrays (tests/test_fuzz.py): a model's arrays reshaped,
    lengthened or reversed reached numpy and Cython as IndexError, ValueError or TypeError.  A reversed
    view is still a weight vector: it is used (copied contiguous)."""
    kind, statement = MODEL_EDITS[edit]
    out = _run(tmp_path, f"""
        model = {kind}
        {statement}
        report("decision", lambda: model.decision_function(fresh().chunk))
        report("save", lambda: model.save(PATH + ".model"))
        """)
    assert len(out) == 2
    for name, result in out.items():
        expected = "ran" if edit == "w_reversed_view" else "refused ParameterError the model's"
        assert result.startswith(expected), (name, result)


def test_labels_of_another_length_than_the_rows_are_refused_by_the_scores():
    import scipy.sparse as sp

    from pegasos.errors import ParameterError

    X = sp.random(30, 5, density=0.6, format="csr", random_state=1)
    y = np.where(np.arange(30) % 2, 1.0, -1.0)
    model = pegasos.train(X, y, epochs=1)
    for score in (pegasos.objective, pegasos.evaluate):
        with pytest.raises(ParameterError, match=r"y has shape \(33,\) for the 30 rows of X"):
            score(model, X, np.concatenate([y, y[:3]]))
