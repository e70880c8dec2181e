"""Random SVMlight text read by pegasos and by scikit-learn's ``load_svmlight_file``:
the same CSR arrays and labels, or an error on both sides; and scikit-learn's own
parser test files (shipped in its package) read as scikit-learn reads them.

tests/test_reader.py compares the real data sets with scikit-learn and random text
with its own expected arrays; this file adds the independent parser on random text,
on malformed text, and on scikit-learn's test files.
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegasos.errors import DataError
from pegasos.io import read_svmlight

sklearn_datasets = pytest.importorskip("sklearn.datasets")

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SK_DATA = os.path.join(os.path.dirname(sklearn_datasets.__file__), "tests", "data")

values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-10 ** 6, 10 ** 6).map(float),
    st.sampled_from([0.0, -0.0, 5e-324, 1e-300, 1.7976931348623157e308, 0.1, 1e22]),
)
# number spellings both parsers take (scikit-learn reads with C strtod-like float
# parsing but no hexadecimal floats)
spell = st.sampled_from([repr, "%.17g".__mod__, "%e".__mod__, "%.3g".__mod__, "%+.10g".__mod__, "%.6f".__mod__])


def _literal(draw):
    v = draw(values)
    text = draw(spell)(v)
    return text if np.isfinite(float(text)) else repr(v)


@st.composite
def svm_text(draw):
    """(bytes, zero_based) of valid SVMlight text: at least one example line."""
    zero_based = draw(st.booleans())
    n = draw(st.integers(1, 30))
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.integers(0, 4)) == 0:
            lines.append(draw(st.sampled_from(["", "# c", "  ", "\t# x 1:2"])))
        # increasing indices: scikit-learn refuses others (see test_sklearn_invalid_order_file)
        cols = sorted(draw(st.lists(st.integers(0, n - 1), max_size=10, unique=True)))
        tokens = [_literal(draw)]
        if draw(st.integers(0, 4)) == 0:
            tokens.append("qid:%d" % draw(st.integers(0, 10 ** 6)))
        tokens += ["%d:%s" % (c + (0 if zero_based else 1), _literal(draw)) for c in cols]
        line = draw(st.sampled_from([" ", "\t", "  "])).join(tokens)
        if draw(st.integers(0, 3)) == 0:
            line += draw(st.sampled_from([" # tail", "\t#", " #1:2 x"]))
        lines.append(line)
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return end.join(lines).encode() + (end.encode() if draw(st.booleans()) else b""), zero_based


def _sklearn(path, zero_based, n_features=None):
    X, y = sklearn_datasets.load_svmlight_file(str(path), zero_based=zero_based, n_features=n_features,
                                               dtype=np.float64)
    X = X.tocsr()
    X.eliminate_zeros()
    X.sort_indices()
    return X, y


def _assert_same(d, X, y):
    assert d.chunk.indptr.tolist() == X.indptr.tolist()
    assert d.chunk.indices.tolist() == X.indices.tolist()
    np.testing.assert_array_equal(d.chunk.data.view(np.uint64), X.data.astype(np.float64).view(np.uint64))
    np.testing.assert_array_equal(d.y, y)


def _write(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("sk") / "d.svm"
    path.write_bytes(data)
    return path


@SETTINGS
@given(sample=svm_text())
def test_random_text_equals_sklearn(tmp_path_factory, sample):
    text, zero_based = sample
    path = _write(tmp_path_factory, text)
    d = read_svmlight(str(path), zero_based=zero_based)
    X, y = _sklearn(path, zero_based, n_features=max(d.n_features, 1))
    _assert_same(d, X, y)


# malformed labels and feature tokens that both parsers refuse
BAD_LABELS = ["abc", "x:1", "1:2", "--1", "1e", "0x", "1.0.0"]
BAD_FEATURES = ["abc", "1:abc", "x:1", "5", "1:2:3", ":3", "1:0x", "3:1e", "2:--1", "1.5:2"]


@SETTINGS
@given(sample=svm_text(), bad=st.sampled_from([(t, True) for t in BAD_LABELS] + [(t, False) for t in BAD_FEATURES]),
       where=st.integers(0, 50))
def test_malformed_text_is_an_error_on_both_sides(tmp_path_factory, sample, bad, where):
    text, zero_based = sample
    lines = text.split(b"\n")
    i = where % len(lines)
    token, as_label = bad
    lines[i] = token.encode() + b" 1:1" if as_label else b"1 " + token.encode()
    path = _write(tmp_path_factory, b"\n".join(lines))
    with pytest.raises(DataError, match=f"line {i + 1}: "):
        read_svmlight(str(path), zero_based=zero_based)
    with pytest.raises(ValueError):
        _sklearn(path, zero_based)


def _sk_file(name):
    path = os.path.join(SK_DATA, name)
    if not os.path.exists(path):
        pytest.skip(f"scikit-learn ships no {name}")
    return path


def test_sklearn_classification_file():
    path = _sk_file("svmlight_classification.txt")
    for zero_based in (False, True):
        d = read_svmlight(path, zero_based=zero_based)
        X, y = _sklearn(path, zero_based, n_features=d.n_features)
        _assert_same(d, X, y)
        assert d.X.shape == X.shape


def test_sklearn_invalid_file():
    path = _sk_file("svmlight_invalid.txt")
    with pytest.raises(ValueError):
        _sklearn(path, False)
    with pytest.raises(DataError, match=r"line 1: label 'python' is not a number"):
        read_svmlight(path)


def test_sklearn_invalid_order_file(tmp_path):
    """scikit-learn refuses decreasing indices; pegasos sorts them (documented): the
    result is scikit-learn's reading of the sorted line."""
    path = _sk_file("svmlight_invalid_order.txt")
    with pytest.raises(ValueError):
        _sklearn(path, False)
    d = read_svmlight(path)
    fixed = tmp_path / "sorted.svm"
    fixed.write_text("-1 2:-5.2 5:2.5 15:1.5\n")
    _assert_same(d, *_sklearn(fixed, False))


def test_sklearn_multilabel_file():
    """Multi-label lists are refused (one label per line), on the first such line."""
    path = _sk_file("svmlight_multilabel.txt")
    with pytest.raises(DataError, match=r"line 2: label '1,0' is a multi-label list"):
        read_svmlight(path)
