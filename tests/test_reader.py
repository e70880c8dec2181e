"""Tests of the SVMlight/LIBSVM reader: ``pegasos.io`` and ``pegasos._svmlight``.

What is covered, section by section:

1. Real data: every file in the shared data directory is read exactly as
   scikit-learn's ``load_svmlight_file`` reads it (indptr, indices, data and y
   bit for bit, after dropping sklearn's explicit zeros), with the m / n / nnz
   figures of the data README; plus ``zero_based=True`` on a9a.
2. The grammar: a table of hand-written inputs (bytes in, dense rows and labels
   out; one entry per rule of the format), and a table of malformed inputs
   (``DataError`` naming the file and ``line N`` and quoting the token).
3. The shared failure cases CASE-02..07, 11 and 12, at the reader level.
4. Property tests (hypothesis): random sparse matrices written in random styles
   (number formats, separators, CRLF, comments, qid, order of indices, final
   newline) parse back exactly; ``parse_float`` agrees with Python's ``float``.
5. Compressed files (.gz, .bz2, .xz, .lzma) and standard input (``-``).
6. ``iter_svmlight`` chunks against ``read_svmlight``; independence from the
   block size (down to 1 byte, including CASE-11's 300000-feature line).
7. The float32 option.

Every result is also checked for the CSR contract: indptr int64, indices int32
(strictly increasing within a row), data float64/float32 without zeros, labels
float64.
"""

import bz2
import contextlib
import gzip
import io
import lzma
import math
import signal
import struct
import subprocess
import sys
import types
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA_DIR, case_file, data_file
from pegasos._svmlight import parse_float
from pegasos.errors import DataError
from pegasos.io import BLOCK_SIZE, Chunk, iter_svmlight, load_svmlight, read_svmlight

SMALL_BLOCKS = [1, 7, 64]
HYPO = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ================================================================ helpers ==

def bits(a):
    """Raw bytes of a float array, so that comparisons see -0.0 and every ulp."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32)


def fbits(x):
    return struct.pack("<d", x)


def check_csr(d, dtype=np.float64):
    """The CSR contract of an SVMLightData (or Chunk) result."""
    c = d.chunk if hasattr(d, "chunk") else d
    m = c.labels.shape[0]
    assert c.labels.dtype == np.float64
    assert c.indptr.dtype == np.int64 and c.indptr.shape == (m + 1,)
    assert c.indices.dtype == np.int32
    assert c.data.dtype == dtype and c.data.shape == c.indices.shape
    assert c.indptr[0] == 0 and c.indptr[-1] == c.indices.shape[0]
    assert np.all(np.diff(c.indptr) >= 0)
    assert np.all(c.data != 0), "explicit zeros must not be stored"
    assert np.all(np.isfinite(c.data))
    for i in range(m):
        row = c.indices[c.indptr[i]:c.indptr[i + 1]]
        assert np.all(np.diff(row) > 0), f"row {i}: indices not strictly increasing"
    if hasattr(d, "n_features") and c.indices.size:
        assert d.n_features >= int(c.indices.max()) + 1


def same_arrays(a, b):
    """Two results (SVMLightData or Chunk) hold identical arrays."""
    a = a.chunk if hasattr(a, "chunk") else a
    b = b.chunk if hasattr(b, "chunk") else b
    assert np.array_equal(bits(a.labels), bits(b.labels))
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)
    assert a.data.dtype == b.data.dtype
    assert np.array_equal(bits(a.data), bits(b.data))


@contextlib.contextmanager
def time_limit(seconds):
    """Fail (rather than hang) if the block takes longer than ``seconds``."""
    def alarm(signum, frame):
        raise TimeoutError(f"took longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def write(tmp_path, data, name="data.svm"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def rows_of(d):
    """Rows as lists of (zero-based column, value)."""
    c = d.chunk
    return [list(zip(c.indices[c.indptr[i]:c.indptr[i + 1]].tolist(),
                     c.data[c.indptr[i]:c.indptr[i + 1]].tolist()))
            for i in range(c.labels.shape[0])]


def one_based_rows(d):
    """Rows as dicts {one-based index: value}, the way the .expected files write them."""
    return [{j + 1: v for j, v in row} for row in rows_of(d)]


def expect_error(path, line, *fragments, **kw):
    """Reading ``path`` fails with a DataError naming the file, the line and each fragment."""
    with pytest.raises(DataError) as exc:
        read_svmlight(path, **kw)
    msg = str(exc.value)
    assert str(path) in msg
    assert exc.value.line == line, msg
    assert f"line {line}:" in msg
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    return msg


# ====================================================== 1. real datasets ==

# file -> (m, n, nnz including explicit zeros, explicit zeros), from the data README
DATA_FILES = {
    "a9a/a9a": (32561, 123, 451592, 0),
    "a9a/a9a.t": (16281, 122, 225731, 0),
    "a8a/a8a": (22696, 123, 314815, 0),
    "w8a/w8a": (49749, 300, 579586, 0),
    "ijcnn1/ijcnn1.trn.bz2": (49990, 22, 649870, 1),
    "ijcnn1/ijcnn1.tst.bz2": (91701, 22, 1192113, 12),
    "mushrooms/mushrooms.txt": (8124, 112, 170604, 0),
    "agaricus/agaricus.txt.train": (6513, 126, 143286, 0),
    "agaricus/agaricus.txt.test": (1611, 126, 35442, 0),
    "heart_scale/heart_scale": (270, 13, 3378, 0),
    "svmguide1/svmguide1.txt": (3089, 4, 12356, 37),
    "dna/dna.scale": (2000, 180, 91233, 0),
    "dna/dna.scale.t": (1186, 180, 53669, 0),
    "sector/sector.scale.bz2": (6412, 55197, 1045412, 0),
    "sector/sector.t.scale.bz2": (3207, 55197, 524492, 0),
    "reuters/reuters.trn.bz2": (7770, 8315, 339837, 0),
    "reuters/reuters.tst.bz2": (3299, 8315, 136821, 0),
}


def sklearn_load(path, zero_based=False):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(path), dtype=np.float64, zero_based=zero_based)
    X = X.tocsr()
    nnz_with_zeros = X.nnz
    X.eliminate_zeros()
    return X, y, nnz_with_zeros


def assert_equals_sklearn(d, X, y):
    check_csr(d)
    assert d.X.shape == X.shape
    assert np.array_equal(d.chunk.indptr, X.indptr)
    assert np.array_equal(d.chunk.indices, X.indices)
    assert np.array_equal(bits(d.chunk.data), bits(X.data.astype(np.float64)))
    assert np.array_equal(bits(d.y), bits(y.astype(np.float64)))


def test_data_directory_holds_exactly_the_listed_files():
    """So that 'every data file' below really means every one."""
    data_file("README.md")
    found = {str(p.relative_to(DATA_DIR)) for p in DATA_DIR.rglob("*")
             if p.is_file() and p.name != "README.md" and not p.name.endswith(".model")}
    assert found == set(DATA_FILES)


@pytest.mark.parametrize("rel", sorted(DATA_FILES))
def test_real_file_equals_sklearn(rel):
    path = data_file(rel)
    m, n, nnz_with_zeros, zeros = DATA_FILES[rel]
    X, y, sk_nnz = sklearn_load(path)
    d = read_svmlight(str(path))
    assert_equals_sklearn(d, X, y)
    assert (d.n_examples, d.n_features) == (m, n)
    assert sk_nnz == nnz_with_zeros
    assert d.nnz == nnz_with_zeros - zeros


def test_a9a_zero_based_equals_sklearn():
    path = data_file("a9a/a9a")
    X, y, _ = sklearn_load(path, zero_based=True)
    d = read_svmlight(str(path), zero_based=True)
    assert_equals_sklearn(d, X, y)
    assert d.n_features == 124 and d.zero_based
    one = read_svmlight(str(path))
    assert np.array_equal(d.chunk.indices, one.chunk.indices + 1)


def test_load_svmlight_returns_X_y():
    path = data_file("heart_scale/heart_scale")
    X, y = load_svmlight(str(path))
    d = read_svmlight(str(path))
    assert X.shape == (270, 13) and X.dtype == np.float64
    assert (X != d.X).nnz == 0 and np.array_equal(y, d.y)


# ============================================= 2. grammar: good inputs ==

@dataclass
class Good:
    """``text`` parses to ``labels`` and ``rows`` ({file index: value} per row)."""

    id: str
    text: bytes
    labels: list
    rows: list
    n_features: int = None        # default: 1 + the largest column in ``rows``
    kw: dict = field(default_factory=dict)


GOOD = [
    # --- the basic form
    Good("basic", b"+1 1:0.5 3:2\n-1 2:1\n", [1, -1], [{1: 0.5, 3: 2.0}, {2: 1.0}]),
    # --- qid (ignored, never a number that can overflow)
    Good("qid", b"1 qid:7 2:1\n", [1], [{2: 1.0}]),
    Good("qid-huge", b"1 qid:72048431380967004 2:1\n", [1], [{2: 1.0}]),
    # --- comments
    Good("comment-tail-space", b"1 1:1 # note 5:5\n", [1], [{1: 1.0}]),
    Good("comment-tail-nospace", b"1 1:1#note 5:5\n", [1], [{1: 1.0}]),
    Good("comment-after-label", b"1# only a label 5:5\n", [1], [{}], n_features=0),
    Good("comment-line", b"# header 9:9\n1 1:1\n", [1], [{1: 1.0}]),
    Good("comment-line-indented", b" \t # x 9:9\n1 1:1\n", [1], [{1: 1.0}]),
    Good("comment-line-last-no-newline", b"1 1:1\n# end", [1], [{1: 1.0}]),
    # --- blank lines
    Good("blank-lines", b"\n\n1 1:1\n\n\n-1 2:1\n\n", [1, -1], [{1: 1.0}, {2: 1.0}]),
    Good("whitespace-only-lines", b" \n\t\n \t \r\n\x0b\x0c\n1 1:1\n  \n", [1], [{1: 1.0}]),
    # --- CRLF, tabs, repeated / leading / trailing blanks
    Good("crlf", b"1 1:1\r\n-1 2:2\r\n", [1, -1], [{1: 1.0}, {2: 2.0}]),
    Good("crlf-trailing-space", b"1 1:1 \r\n-1 \r\n", [1, -1], [{1: 1.0}, {}]),
    Good("tabs", b"1\t1:1\t2:2\n", [1], [{1: 1.0, 2: 2.0}]),
    Good("repeated-spaces", b"1   1:1  \t  2:2\n", [1], [{1: 1.0, 2: 2.0}]),
    Good("leading-blanks", b"   \t1 1:1\n", [1], [{1: 1.0}]),
    Good("trailing-blanks", b"1 1:1   \t\n", [1], [{1: 1.0}]),
    # --- no final newline
    Good("no-final-newline", b"1 1:1\n-1 2:1", [1, -1], [{1: 1.0}, {2: 1.0}]),
    Good("no-final-newline-crlf", b"1 1:1\r\n-1 2:1", [1, -1], [{1: 1.0}, {2: 1.0}]),
    Good("no-final-newline-label-only", b"1 1:1\n-1", [1, -1], [{1: 1.0}, {}]),
    Good("one-line-no-newline", b"-1 3:0.5", [-1], [{3: 0.5}]),
    Good("empty-file", b"", [], [], n_features=0),
    Good("comments-only", b"# a\n\n  # b\n", [], [], n_features=0),
    # --- label spellings
    Good("label+1", b"+1 1:1\n", [1.0], [{1: 1.0}]),
    Good("label-1", b"-1 1:1\n", [-1.0], [{1: 1.0}]),
    Good("label1", b"1 1:1\n", [1.0], [{1: 1.0}]),
    Good("label0", b"0 1:1\n", [0.0], [{1: 1.0}]),
    Good("label2", b"2 1:1\n", [2.0], [{1: 1.0}]),
    Good("label1.0", b"1.0 1:1\n", [1.0], [{1: 1.0}]),
    Good("label-1.0", b"-1.0 1:1\n", [-1.0], [{1: 1.0}]),
    Good("label+1.0", b"+1.0 1:1\n", [1.0], [{1: 1.0}]),
    Good("label-real", b"0.25 1:1\n-3e2 1:1\n", [0.25, -300.0], [{1: 1.0}, {1: 1.0}]),
    # --- value syntax (C float literals)
    Good("value-1e-3", b"1 1:1e-3\n", [1], [{1: 0.001}]),
    Good("value-.5", b"1 1:.5\n", [1], [{1: 0.5}]),
    Good("value-7.", b"1 1:7.\n", [1], [{1: 7.0}]),
    Good("value-minus-0", b"1 1:-0 2:1\n", [1], [{2: 1.0}]),
    Good("value-+.5", b"1 1:+.5\n", [1], [{1: 0.5}]),
    Good("value-2.5E+2", b"1 1:2.5E+2\n", [1], [{1: 250.0}]),
    Good("value-negative", b"1 1:-2.5 2:-.125\n", [1], [{1: -2.5, 2: -0.125}]),
    Good("value-exponent-forms", b"1 1:1E3 2:1e+2 3:-1.5e-3 4:5e0\n", [1],
         [{1: 1000.0, 2: 100.0, 3: -0.0015, 4: 5.0}]),
    Good("value-extremes", b"1 1:1.7976931348623157e308 2:2.2250738585072014e-308 3:5e-324\n", [1],
         [{1: 1.7976931348623157e308, 2: 2.2250738585072014e-308, 3: 5e-324}]),
    Good("value-underflow-to-zero", b"1 1:1e-400 2:1\n", [1], [{2: 1.0}]),
    Good("value-many-digits", b"1 1:0.1000000000000000055511151231257827021181583404541015625\n",
         [1], [{1: 0.1}]),
    Good("value-hex", b"1 1:0x1p-2 2:-0X1.8P1\n", [1], [{1: 0.25, 2: -3.0}]),
    Good("value-leading-zeros", b"1 01:007.50\n", [1], [{1: 7.5}]),
    # --- index base
    Good("one-based", b"1 1:1 4:2\n", [1], [{1: 1.0, 4: 2.0}]),
    Good("zero-based", b"1 0:1 3:2\n", [1], [{0: 1.0, 3: 2.0}], kw={"zero_based": True}),
    # --- order of indices, explicit zeros, label-only lines
    Good("unsorted", b"1 3:3 1:1 2:2\n-1 9:1 4:4\n", [1, -1],
         [{1: 1.0, 2: 2.0, 3: 3.0}, {4: 4.0, 9: 1.0}]),
    Good("explicit-zeros", b"1 1:0 2:1 3:0.0 4:-0.0 5:0e5\n", [1], [{2: 1.0}], n_features=5),
    Good("all-zero-row", b"1 7:0\n-1 1:1\n", [1, -1], [{}, {1: 1.0}], n_features=7),
    Good("label-only", b"1\n-1 1:1\n+1 \n", [1, -1, 1], [{}, {1: 1.0}, {}]),
]


def dense_expected(case):
    base = 0 if case.kw.get("zero_based") else 1
    cols = [j - base for row in case.rows for j in row]
    n = case.n_features if case.n_features is not None else (max(cols) + 1 if cols else 0)
    X = np.zeros((len(case.rows), n))
    for i, row in enumerate(case.rows):
        for j, v in row.items():
            X[i, j - base] = v
    return X, n


@pytest.mark.parametrize("case", GOOD, ids=[c.id for c in GOOD])
def test_good_input(tmp_path, case):
    path = write(tmp_path, case.text)
    d = read_svmlight(str(path), **case.kw)
    check_csr(d)
    X, n = dense_expected(case)
    assert d.n_features == n
    assert d.n_examples == len(case.labels)
    assert np.array_equal(bits(d.y), bits(np.array(case.labels, dtype=np.float64)))
    assert d.X.shape == X.shape
    assert np.array_equal(d.X.toarray(), X)
    for bs in SMALL_BLOCKS:                         # a line may span many blocks
        same_arrays(read_svmlight(str(path), block_size=bs, **case.kw), d)


def test_unsorted_equals_sorted(tmp_path):
    a = read_svmlight(str(write(tmp_path, b"1 5:5 3:3 1:1 4:4 2:2\n-1 2:1 1:3\n", "a.svm")))
    b = read_svmlight(str(write(tmp_path, b"1 1:1 2:2 3:3 4:4 5:5\n-1 1:3 2:1\n", "b.svm")))
    same_arrays(a, b)


def test_largest_index_that_fits(tmp_path):
    """Columns must fit in int32 and n_features = 1 + column must too."""
    d = read_svmlight(str(write(tmp_path, b"1 2147483647:1.5\n")))
    assert d.chunk.indices.tolist() == [2147483646] and d.n_features == 2147483647
    d = read_svmlight(str(write(tmp_path, b"1 2147483646:1.5\n")), zero_based=True)
    assert d.chunk.indices.tolist() == [2147483646] and d.n_features == 2147483647


def test_n_features_argument(tmp_path):
    path = str(write(tmp_path, b"1 1:1 3:1\n"))
    assert read_svmlight(path, n_features=10).X.shape == (1, 10)
    assert read_svmlight(path, n_features=2).X.shape == (1, 3)      # never narrower than the data


def test_distinct_labels_and_line_count(tmp_path):
    path = write(tmp_path, b"# c\n+1 1:1\n\n1.0 2:1\n-1 1:1\n+1\n")
    d = read_svmlight(str(path))
    assert [(x.value, x.line, x.text) for x in d.distinct_labels] == [(1.0, 2, "+1"), (-1.0, 5, "-1")]
    assert not d.labels_overflow and d.n_lines == 6


# ============================================== 2. grammar: bad inputs ==

BAD = [
    # (id, text, line, fragments of the message, keyword arguments)
    ("token-without-colon", b"1 1:1\n-1 abc\n", 2, ["'abc'", "index:value"], {}),
    ("bare-number-token", b"1 5\n", 1, ["'5'", "index:value"], {}),
    ("index-not-a-number", b"1 a:1\n", 1, ["'a:1'"], {}),
    ("index-not-integer", b"1 1.5:1\n", 1, ["'1.5:1'"], {}),
    ("index-with-plus", b"1 +3:1\n", 1, ["'+3:1'"], {}),
    ("index-empty", b"1 :1\n", 1, ["':1'"], {}),
    ("value-not-a-number", b"1 1:abc\n", 1, ["'1:abc'", "not a number"], {}),
    ("value-missing-eol", b"1 1:1 2:\n", 1, ["'2:'", "no value"], {}),
    ("value-missing-comment", b"1 2:#x\n", 1, ["'2:#x'", "no value"], {}),
    ("value-extra-colon", b"1 1:2:3\n", 1, ["'1:2:3'"], {}),
    ("index-zero-one-based", b"1 1:1\n-1 0:1\n", 2, ["index 0", "'0:1'", "--zero-based, or zero_based=True in Python"], {}),
    ("index-negative", b"1 -1:1\n", 1, ["negative", "'-1:1'"], {}),
    ("index-negative-zero-based", b"1 -3:1\n", 1, ["negative", "'-3:1'"], {"zero_based": True}),
    ("duplicate-adjacent", b"1 1:1\n-1 2:1 2:3\n", 2, ["index 2", "more than once"], {}),
    ("duplicate-apart", b"1 3:1 1:1 3:2\n", 1, ["index 3", "more than once"], {}),
    ("duplicate-with-zero", b"1 2:0 2:1\n", 1, ["index 2", "more than once"], {}),
    ("duplicate-zero-based", b"1 0:1 0:2\n", 1, ["index 0", "more than once"], {"zero_based": True}),
    ("qid-twice", b"1 qid:1 1:1\n0 qid:1 qid:2 1:2\n", 2, ["second qid:", "qid:2"], {}),
    ("qid-twice-bad", b"0 qid:x qid:3 1:2\n", 1, ["second qid:", "qid:3"], {}),
    # SVMlight's and scikit-learn's loaders refuse it too; read as before it put the row in a query silently
    ("qid-after-features", b"1 qid:1 1:1\n1 2:1 qid:3 4:1\n", 2, ["qid:3", "after a feature"], {}),
    ("qid-after-zero-feature", b"1 2:0 qid:3\n", 1, ["qid:3", "after a feature"], {}),
    ("qid-after-feature-twice", b"1 2:1 qid:3 qid:4\n", 1, ["qid:3", "after a feature"], {}),
    ("value-nan", b"1 1:1\n-1 1:nan\n", 2, ["'1:nan'", "not finite"], {}),
    ("value-NaN", b"1 1:NaN\n", 1, ["'1:NaN'", "not finite"], {}),
    ("value-inf", b"1 1:inf\n", 1, ["'1:inf'", "not finite"], {}),
    ("value-minus-inf", b"1 1:-inf\n", 1, ["'1:-inf'", "not finite"], {}),
    ("value-infinity", b"1 1:Infinity\n", 1, ["'1:Infinity'", "not finite"], {}),
    ("value-overflow", b"1 1:1e400\n", 1, ["'1:1e400'", "not finite"], {}),
    ("label-nan", b"nan 1:1\n", 1, ["'nan'"], {}),
    ("label-inf", b"-inf 1:1\n", 1, ["'-inf'"], {}),
    ("label-not-a-number", b"1 1:1\nabc 1:1\n", 2, ["'abc'", "not a number"], {}),
    ("label-trailing-junk", b"1x 1:1\n", 1, ["'1x'"], {}),
    ("label-missing", b"1:1 2:1\n", 1, ["'1:1'", "label is missing"], {}),
    ("multi-label", b"+1 1:1\n1,3 2:1\n", 2, ["'1,3'", "multi-label"], {}),
    ("multi-label-spaces", b"+1 1:1\n-1 3:1\n1, 3 2:1\n", 3, ["multi-label"], {}),
    ("space-after-colon", b"+1 1:1\n+1 2:0.5\n-1 21:1.00   42:1.00   63: .50\n", 3,
     ["'63:'", "no value"], {}),
    ("decimal-comma", b"1 1:0,5\n", 1, ["'1:0,5'"], {}),
    ("trailing-junk", b"1 1:0.5x\n", 1, ["'1:0.5x'"], {}),
    ("trailing-junk-exponent", b"1 1:1e5x\n", 1, ["'1:1e5x'"], {}),
    ("incomplete-exponent", b"1 1:1e\n", 1, ["'1:1e'"], {}),
    ("incomplete-exponent-sign", b"1 1:1e+\n", 1, ["'1:1e+'"], {}),
    ("lone-dot", b"1 1:.\n", 1, ["'1:.'"], {}),
    ("double-sign", b"1 1:+-1\n", 1, ["'1:+-1'"], {}),
    ("underscore", b"1 1:1_000\n", 1, ["'1:1_000'"], {}),
    ("bad-token-crlf", b"1 1:1\r\n-1 2:x\r\n", 2, ["'2:x'"], {}),
    ("bad-last-line-no-newline", b"1 1:1\n-1 2:x", 2, ["'2:x'"], {}),
    ("line-counts-blank-and-comments", b"# c\n\n1 1:1\n  \n# d\n-1 bad\n", 6, ["'bad'"], {}),
    ("index-too-large", b"1 2147483648:1\n", 1, ["'2147483648:1'", "too large"], {}),
    ("index-too-large-zero-based", b"1 2147483647:1\n", 1, ["too large"], {"zero_based": True}),
    ("index-huge", b"1 99999999999999999999999:1\n", 1, ["too large"], {}),
    ("index-wraps-uint32", b"1 4294967297:1\n", 1, ["too large"], {}),
]


@pytest.mark.parametrize("text,line,fragments,kw", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(tmp_path, text, line, fragments, kw):
    path = write(tmp_path, text)
    expect_error(str(path), line, *fragments, **kw)
    for bs in SMALL_BLOCKS:
        expect_error(str(path), line, *fragments, block_size=bs, **kw)


@pytest.mark.parametrize("block_size", SMALL_BLOCKS + [4096, BLOCK_SIZE])
def test_error_line_number_far_into_the_file(tmp_path, block_size):
    good = b"".join(b"%d 1:%d 3:0.5\r\n" % (1 if i % 2 else -1, i + 1) for i in range(1500))
    path = write(tmp_path, good + b"\n# comment\n+1 2:1 3:0.5x 4:1\n-1 1:1\n")
    expect_error(str(path), 1503, "'3:0.5x'", block_size=block_size)


def test_error_while_iterating(tmp_path):
    path = write(tmp_path, b"1 1:1\n" * 100 + b"1 1:nan\n")
    with pytest.raises(DataError, match=r"line 101: .*'1:nan'"):
        for _ in iter_svmlight(str(path), block_size=64):
            pass


def test_missing_file(tmp_path):
    for name in ("missing.svm", "missing.svm.gz", "missing.bz2", "missing.xz"):
        path = str(tmp_path / name)
        with pytest.raises(DataError, match="no such file") as exc:
            read_svmlight(path)
        assert path in str(exc.value) and exc.value.line is None
        with pytest.raises(DataError, match="no such file"):
            list(iter_svmlight(path))


def test_directory_is_not_a_data_file(tmp_path):
    with pytest.raises(DataError, match="directory"):
        read_svmlight(str(tmp_path))


@pytest.mark.parametrize("suffix,payload", [
    (".gz", b"this is not gzip\n"),
    (".gz", gzip.compress(b"".join(b"%d 1:%d\n" % (i % 2, i * 7919 % 1000) for i in range(2000)))[:-30]),
    (".bz2", b"this is not bzip2\n"),
    (".xz", b"this is not xz\n"),
], ids=["gz-garbage", "gz-truncated", "bz2-garbage", "xz-garbage"])
def test_corrupt_compressed_file(tmp_path, suffix, payload):
    path = str(write(tmp_path, payload, "bad" + suffix))
    with pytest.raises(DataError) as exc:
        read_svmlight(path)
    assert path in str(exc.value)


def test_bad_dtype(tmp_path):
    with pytest.raises(ValueError):
        read_svmlight(str(write(tmp_path, b"1 1:1\n")), dtype=np.int32)


# ===================================================== 3. shared cases ==

def read_case(name, **kw):
    return read_svmlight(str(case_file(name)), **kw)


def test_case02_comments_qid():
    d = read_case("CASE-02.svm")
    check_csr(d)
    assert d.y.tolist() == [1, -1, 1] and d.n_features == 4
    assert one_based_rows(d) == [{1: 0.5, 4: 1.0}, {2: 1.5}, {3: 2.0}]
    assert np.array_equal(d.X.toarray(), [[0.5, 0, 0, 1], [0, 1.5, 0, 0], [0, 0, 2, 0]])
    same_arrays(d, read_case("CASE-02.clean.svm"))


def test_case03_crlf_tabs_blanks():
    d = read_case("CASE-03.svm")
    check_csr(d)
    assert d.y.tolist() == [1, -1, 1]
    assert one_based_rows(d) == [{1: 0.5, 3: 1.25}, {2: 2.0, 4: -1.0}, {1: 1.0}]
    same_arrays(d, read_case("CASE-03.clean.svm"))


def test_case04_blank_lines_no_final_newline():
    d = read_case("CASE-04.svm")
    check_csr(d)
    assert d.y.tolist() == [1, -1, 1] and d.n_lines == 8
    assert one_based_rows(d) == [{1: 1.0}, {2: 1.0}, {1: 1.0, 2: 1.0}]
    same_arrays(d, read_case("CASE-04.clean.svm"))
    one = read_case("CASE-04.oneline.svm")
    assert one.y.tolist() == [-1] and one_based_rows(one) == [{3: 0.5}]


def test_case05_label_spellings():
    d = read_case("CASE-05.svm")
    assert d.y.tolist() == [1, 1, 1, -1, -1, 1]
    assert [(x.value, x.line) for x in d.distinct_labels] == [(1.0, 1), (-1.0, 4)]


def test_case05_zero_one_labels_keep_every_row():
    zo, pm = read_case("CASE-05.zero_one.svm"), read_case("CASE-05.zero_one.as_pm.svm")
    assert zo.y.tolist() == [1, 0, 1, 0]              # labels as written; mapping is the CLI's job
    assert pm.y.tolist() == [1, -1, 1, -1]
    assert np.array_equal(zo.X.toarray(), pm.X.toarray())


def test_case05_other_label_sets_are_read_as_written():
    """Whether 0 with ±1, or three classes, may be trained on is decided above the reader."""
    assert read_case("CASE-05.transductive.svm").y.tolist() == [1, -1, 0]
    assert read_case("CASE-05.multiclass.svm").y.tolist() == [1, 2, 3]


@pytest.mark.parametrize("name,line", [("CASE-05.multilabel.svm", 2), ("CASE-05.multilabel_spaces.svm", 3)])
def test_case05_multilabel(name, line):
    msg = expect_error(str(case_file(name)), line, "multi-label")
    assert "' 3'" not in msg


def test_case06_number_syntax():
    d = read_case("CASE-06.svm")
    check_csr(d)
    assert d.y.tolist() == [1, -1]
    assert one_based_rows(d) == [{1: 0.001, 2: -250.0, 3: 0.5, 4: 0.25, 5: 7.0, 6: 0.000123, 8: 100.0},
                                 {1: 1.0}]


@pytest.mark.parametrize("name,line,token", [
    ("CASE-06.nan.svm", 2, "nan"),
    ("CASE-06.inf.svm", 3, "-inf"),
    ("CASE-06.space_after_colon.svm", 3, "63:"),
    ("CASE-06.garbage.svm", 2, "0,5"),
    ("CASE-06.trailing_junk.svm", 1, "0.5x"),
])
def test_case06_bad_numbers(name, line, token):
    msg = expect_error(str(case_file(name)), line)
    quoted = msg.split("'")[1::2]                    # the quoted tokens of the message
    assert any(q.endswith(token) for q in quoted), msg


def test_case07_unsorted_and_explicit_zeros():
    d = read_case("CASE-07.svm")
    check_csr(d)
    assert d.y.tolist() == [1, -1, 1]
    assert one_based_rows(d) == [{1: 2.0, 3: 1.0}, {5: 1.0}, {}]
    assert d.n_features in (5, 7)
    same_arrays(d, read_case("CASE-07.sorted.svm"))


def test_case07_duplicate_index():
    expect_error(str(case_file("CASE-07.dup.svm")), 2, "index 2", "more than once")


@pytest.fixture(scope="module")
def case11(tmp_path_factory):
    out = tmp_path_factory.mktemp("case11")
    subprocess.run(["sh", str(case_file("CASE-11.sh")), str(out)], check=True, timeout=120)
    return out


def test_case11_long_line(case11):
    d = read_svmlight(str(case11 / "CASE-11.svm"))
    check_csr(d)
    assert d.y.tolist() == [1, -1] and d.n_features == 300000
    assert d.chunk.indptr.tolist() == [0, 300000, 300001]
    assert np.array_equal(d.chunk.indices[:300000], np.arange(300000))
    assert np.all(d.chunk.data == 1.0) and d.chunk.indices[300000] == 0


def test_case11_long_comment(case11):
    d = read_svmlight(str(case11 / "CASE-11.longcomment.svm"))
    assert d.y.tolist() == [1, -1]
    assert one_based_rows(d) == [{1: 1.0, 2: 1.0}, {1: 1.0}]


@pytest.mark.parametrize("name", ["CASE-11.svm", "CASE-11.longcomment.svm"])
@pytest.mark.parametrize("block_size", SMALL_BLOCKS + [4096, 65536, 1 << 20])
def test_case11_any_block_size(case11, name, block_size):
    """Also: time linear in the line length (a line that spans many blocks is
    not re-copied for every block)."""
    path = str(case11 / name)
    with time_limit(20):
        small = read_svmlight(path, block_size=block_size)
    same_arrays(small, read_svmlight(path))


def test_case12_label_only_lines():
    d = read_case("CASE-12.svm")
    check_csr(d)
    assert d.y.tolist() == [1, -1, 1, -1]
    assert one_based_rows(d) == [{}, {1: 1.0}, {}, {2: 0.5}]
    assert d.chunk.indptr.tolist() == [0, 0, 1, 1, 2]


# =================================================== 4. property tests ==

def py_value(text):
    """The value a C float literal denotes, computed by Python."""
    return float.fromhex(text) if "x" in text.lower() else float(text)


FORMATS = [repr, "%.17g".__mod__, "%e".__mod__, "%.17e".__mod__, "%.3g".__mod__, "%+.10g".__mod__,
           "%.6f".__mod__, float.hex]

finite = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
    st.integers(-1000, 1000).map(float),
    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
                     1.7976931348623157e308, -1.7976931348623157e308, 0.1, 1 / 3, 2.0 ** 53 + 2,
                     1e22, 1e23, 3.4028234663852886e38, 3.4028235677973366e38, 1e-45, 1e-46]),
)


@st.composite
def literal(draw, values=finite):
    """A float written in a random C-literal style, with the value it denotes."""
    v = draw(values)
    text = draw(st.sampled_from(FORMATS))(v)
    if not math.isfinite(py_value(text)):          # e.g. '%.3g' of 1.7976931348623157e308
        text = repr(v)
    value = py_value(text)
    if "x" not in text:
        if draw(st.booleans()):
            text = text.upper()
        if text.startswith(("0.", "-0.", "+0.")) and draw(st.booleans()):
            text = text.replace("0.", ".", 1)
    if not text.startswith(("-", "+")) and draw(st.integers(0, 4)) == 0:
        text = "+" + text
    return text, value


LABEL_SPELLINGS = {"+1": 1.0, "-1": -1.0, "1": 1.0, "0": 0.0, "2": 2.0, "1.0": 1.0, "-1.0": -1.0}
SEPARATORS = [" ", " ", " ", "  ", "\t", " \t ", "\t\t"]
NOISE_LINES = ["", " ", "\t", "# comment 1:2", "  # indented", "#", " \t "]
# (no NUL byte: no text file holds one, and the readers stop at it as at binary data)
comment_text = st.text(st.characters(codec="utf-8", exclude_characters="\n\0"), max_size=8)


@st.composite
def svm_file(draw):
    """Random SVMlight text with the labels, rows and n_features it must parse to."""
    zero_based = draw(st.booleans())
    m = draw(st.integers(0, 8))
    n = draw(st.integers(1, 40))
    lines, labels, rows, max_col = [], [], [], -1
    for _ in range(m):
        for _ in range(draw(st.integers(0, 2))):
            lines.append(draw(st.sampled_from(NOISE_LINES)))
        if draw(st.booleans()):
            ltext = draw(st.sampled_from(sorted(LABEL_SPELLINGS)))
            lval = LABEL_SPELLINGS[ltext]
        else:
            ltext, lval = draw(literal())
        cols = draw(st.lists(st.integers(0, n - 1), max_size=min(n, 12), unique=True))
        if draw(st.booleans()):
            cols.sort()
        entries = [(c, *draw(literal())) for c in cols]
        tokens = [ltext]
        if draw(st.integers(0, 4)) == 0:
            tokens.append("qid:%d" % draw(st.integers(0, 2 ** 64)))
        tokens += ["%d:%s" % (c + (0 if zero_based else 1), t) for c, t, _ in entries]
        line = draw(st.sampled_from(["", "", " ", "\t "]))
        line += "".join(t + draw(st.sampled_from(SEPARATORS)) for t in tokens[:-1]) + tokens[-1]
        line += draw(st.sampled_from(["", "", " ", "\t", "  "]))
        if draw(st.integers(0, 3)) == 0:
            line += draw(st.sampled_from(["#", " #", "\t# ", " # "])) + draw(comment_text)
        lines.append(line)
        labels.append(lval)
        rows.append(sorted((c, v) for c, _, v in entries))
        max_col = max([max_col] + cols)
    for _ in range(draw(st.integers(0, 2))):
        lines.append(draw(st.sampled_from(NOISE_LINES)))
    text = "".join(line + draw(st.sampled_from(["\n", "\r\n"])) for line in lines)
    if lines and not draw(st.booleans()):
        text = text[: -2 if text.endswith("\r\n") else -1]      # no final newline
    return text.encode("utf-8"), zero_based, labels, rows, max_col + 1


def expected_csr(labels, rows, dtype=np.float64):
    values = [np.array([v for _, v in r], dtype=np.float64) for r in rows]
    with np.errstate(over="ignore"):
        values = [v.astype(dtype) for v in values]
    keep = [[(c, x) for (c, _), x in zip(r, v) if x != 0] for r, v in zip(rows, values)]
    indptr = np.cumsum([0] + [len(r) for r in keep]).astype(np.int64)
    indices = np.array([c for r in keep for c, _ in r], dtype=np.int32)
    data = np.array([x for r in keep for _, x in r], dtype=dtype)
    return Chunk(np.array(labels, dtype=np.float64), indptr, indices, data)


@pytest.fixture(scope="module")
def hypo_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("hypothesis")


@HYPO
@given(sample=svm_file(), block_size=st.sampled_from([1, 5, 64, BLOCK_SIZE]))
def test_random_files_round_trip(hypo_dir, sample, block_size):
    text, zero_based, labels, rows, n = sample
    path = write(hypo_dir, text, "random.svm")
    d = read_svmlight(str(path), zero_based=zero_based, block_size=block_size)
    check_csr(d)
    same_arrays(d, expected_csr(labels, rows))
    assert d.n_features == n
    # float32: the float64 values rounded, zeros (after rounding) not stored,
    # and a finite value that overflows float32 is an error
    all_values = np.array([v for r in rows for _, v in r], dtype=np.float64)
    with np.errstate(over="ignore"):
        overflow = not np.all(np.isfinite(all_values.astype(np.float32)))
    if overflow:
        with pytest.raises(DataError, match="float32"):
            read_svmlight(str(path), zero_based=zero_based, dtype=np.float32, block_size=block_size)
    else:
        d32 = read_svmlight(str(path), zero_based=zero_based, dtype=np.float32, block_size=block_size)
        check_csr(d32, np.float32)
        same_arrays(d32, expected_csr(labels, rows, np.float32))
        assert d32.n_features == n


# --- parse_float

def assert_parses_like_python(text):
    expected = py_value(text)
    got = parse_float(text.encode())
    assert fbits(got) == fbits(expected), (text, got, expected)


@HYPO
@given(literal())
def test_parse_float_formatted_floats(lit):
    text, value = lit
    assert fbits(parse_float(text.encode())) == fbits(value)


@st.composite
def decimal_string(draw):
    sign = draw(st.sampled_from(["", "+", "-"]))
    if draw(st.booleans()):
        digits = str(draw(st.integers(0, 2 ** 64)))
        cut = draw(st.integers(0, len(digits)))
        body = digits[:cut] + ("." + digits[cut:] if cut < len(digits) else "")
    else:
        whole = draw(st.text("0123456789", max_size=25))
        frac = draw(st.text("0123456789", max_size=25))
        point = draw(st.booleans()) or not whole
        body = (whole + "." + frac) if point else whole
        if not (whole + frac if point else whole):
            body = "0" + body
    exponent = ""
    if draw(st.booleans()):
        exponent = (draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"]))
                    + str(draw(st.one_of(st.integers(0, 30), st.integers(0, 400)))))
    return sign + body + exponent


@HYPO
@given(decimal_string())
def test_parse_float_decimal_strings(text):
    expected = float(text)
    if math.isfinite(expected):
        assert fbits(parse_float(text.encode())) == fbits(expected), text
    else:
        with pytest.raises(ValueError):
            parse_float(text.encode())


@HYPO
@given(st.text("0123456789+-.eE_ \tnaifINAFty,:#", max_size=12))
def test_parse_float_random_text_like_python(text):
    """Accepted exactly when Python accepts and the result is finite (and the
    text is a single token: no blanks, no digit-group underscores)."""
    try:
        expected = float(text)
    except ValueError:
        expected = None
    if expected is None or not math.isfinite(expected) or "_" in text or text != text.strip():
        with pytest.raises(ValueError):
            parse_float(text.encode())
    else:
        assert fbits(parse_float(text.encode())) == fbits(expected), text


HARD_LITERALS = [
    "0", "-0", "+0", "0.0", "-0.0", "00", "1", "+1", "-1", ".5", "-.5", "+.5", "7.", "1.e5",
    "1e-3", "2.5E+2", "1E5", "0.000123", "0.1", "0.30000000000000004", "0.3333333333333333",
    "1e22", "1e23", "1e-22", "1.5e-22", "4.35679845e-23", "89255e-22", "123456789e-30",
    "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995",
    "18014398509481982", "9999999999999999999", "99999999999999999999", "12345678901234567890123",
    "123456789012345678901234567890e-10", "0." + "0" * 30 + "1", "000000000000000000000001.5",
    "1." + "0" * 30, "7.2057594037927933e16", "8.98846567431158e307", "1e308",
    "1.7976931348623157e308", "1.7976931348623158e308", "2.2250738585072011e-308",
    "2.2250738585072012e-308", "2.2250738585072014e-308", "4.9406564584124654e-324", "5e-324",
    "2.4703282292062328e-324", "2.4703282292062327e-324", "1e-400", "0e999999", "-0e-999999",
    "1e0000000000000000000000000001", "0x1p-2", "-0X1.8P+1", "0x1.fffffffffffffp1023",
    "0x0.0000000000001p-1022", "0x1p-1074",
]


@pytest.mark.parametrize("text", HARD_LITERALS)
def test_parse_float_hard_literals(text):
    assert_parses_like_python(text)


@pytest.mark.parametrize("text", [
    "", " ", "1 ", " 1", "\t1", "1\r", ".", "+", "-", "e5", "1e", "1e+", "1e-", "1.5x", "0.5x",
    "1,5", "0,5", "1_000", "--1", "+-1", "1..2", "1.2.3", "nan", "NaN", "-nan", "nan(1)", "inf",
    "-inf", "+inf", "Infinity", "infinity", "1e400", "-1e400", "1.7976931348623159e308", "0x",
    "0x1p99999", "1:2", "1#", "1e5.5", "0b101", "1f", "1d",
])
def test_parse_float_rejects(text):
    with pytest.raises(ValueError):
        parse_float(text.encode())


# ============================================ 5. compression and stdin ==

def sample_text():
    """A few hundred lines mixing the real heart_scale data with every extra."""
    base = data_file("heart_scale/heart_scale").read_bytes()
    extra = (b"# header comment\n\n+1 qid:4 3:1e-3 1:.5 2:7. # tail\r\n-1\t5:-2.5E+2\t\n"
             b"   # indented\n0 9:0 4:1\n-1 2:1")
    return base + extra


WRITERS = {
    "data.svm": lambda b: b,
    "data.svm.gz": gzip.compress,
    "data.GZ": gzip.compress,
    "data.svm.bz2": bz2.compress,
    "data.svm.xz": lzma.compress,
    "data.svm.lzma": lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE),
}


@pytest.fixture(scope="module")
def plain_result():
    return read_svmlight_bytes(sample_text())


def read_svmlight_bytes(data, **kw):
    """Parse bytes through a fake standard input (an object with ``.buffer``)."""
    stdin = types.SimpleNamespace(buffer=io.BytesIO(data))
    old, sys.stdin = sys.stdin, stdin
    try:
        d = read_svmlight("-", **kw)
    finally:
        sys.stdin = old
    assert not stdin.buffer.closed            # standard input is never closed
    return d


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize("block_size", [7, BLOCK_SIZE])
def test_compressed_files(tmp_path, plain_result, name, block_size):
    path = write(tmp_path, WRITERS[name](sample_text()), name)
    d = read_svmlight(str(path), block_size=block_size)
    check_csr(d)
    same_arrays(d, plain_result)
    assert d.n_features == plain_result.n_features and d.n_examples == 274
    chunks = list(iter_svmlight(str(path), block_size=block_size))
    assert sum(c.n_rows for c in chunks) == 274


def test_pathlib_path_and_uppercase_suffix(tmp_path, plain_result):
    path = write(tmp_path, bz2.compress(sample_text()), "data.BZ2")
    same_arrays(read_svmlight(path), plain_result)


def test_stdin_fake(plain_result):
    d = read_svmlight_bytes(sample_text(), block_size=7)
    assert d.path == "-"
    same_arrays(d, plain_result)


def test_stdin_error_names_dash_and_line():
    with pytest.raises(DataError, match=r"^-, line 2: .*'1:x'"):
        read_svmlight_bytes(b"1 1:1\n-1 1:x\n")


STDIN_SCRIPT = """
import sys
import numpy as np
from pegasos.io import read_svmlight
d = read_svmlight('-', block_size=int(sys.argv[2]))
c = d.chunk
np.savez(sys.argv[1], labels=c.labels, indptr=c.indptr, indices=c.indices, data=c.data,
         n=d.n_features)
"""


def test_stdin_subprocess(tmp_path, plain_result):
    out = tmp_path / "out.npz"
    subprocess.run([sys.executable, "-c", STDIN_SCRIPT, str(out), "64"], input=sample_text(),
                   check=True, timeout=120)
    z = np.load(out)
    same_arrays(Chunk(z["labels"], z["indptr"], z["indices"], z["data"]), plain_result)
    assert int(z["n"]) == plain_result.n_features


# ================================================ 6. chunks, block size ==

@pytest.mark.parametrize("source", ["heart_scale/heart_scale", "mushrooms/mushrooms.txt", "w8a/w8a"])
@pytest.mark.parametrize("block_size", [1, 7, 64, 1000, 65536, BLOCK_SIZE])
def test_iter_equals_read(tmp_path, source, block_size):
    path = data_file(source)
    if block_size < 64 and path.stat().st_size > 100_000:
        # tiny blocks on a smaller piece of the file (time), cut after a token in
        # the middle of a line, so without a final newline
        text = path.read_bytes()
        path = write(tmp_path, text[:text.rfind(b" ", 0, 30011)])
    whole = read_svmlight(str(path))
    chunks = list(iter_svmlight(str(path), block_size=block_size))
    assert chunks and all(c.n_rows > 0 for c in chunks)
    first = 0
    for c in chunks:
        check_csr(c)
        assert c.first_row == first
        first += c.n_rows
    assert first == whole.n_examples
    labels = np.concatenate([c.labels for c in chunks])
    indices = np.concatenate([c.indices for c in chunks])
    data = np.concatenate([c.data for c in chunks])
    indptr = np.concatenate([[0]] + [c.indptr[1:] + off for c, off in
                                     zip(chunks, np.cumsum([0] + [c.indptr[-1] for c in chunks]))])
    same_arrays(Chunk(labels, indptr.astype(np.int64), indices, data), whole)
    same_arrays(read_svmlight(str(path), block_size=block_size), whole)


def test_iter_first_rows_skip_blank_and_comment_lines(tmp_path):
    text = b"# c\n1 1:1\n\n-1 2:1\n# d\n1\n1 3:1\n\n\n-1 1:2\n"
    chunks = list(iter_svmlight(str(write(tmp_path, text)), block_size=1))
    assert [c.first_row for c in chunks] == [0, 1, 2, 3, 4]
    assert [c.labels.tolist() for c in chunks] == [[1], [-1], [1], [1], [-1]]
    assert chunks[2].indices.size == 0 and chunks[2].indptr.tolist() == [0, 0]


def test_iter_empty_and_comment_only_files(tmp_path):
    assert list(iter_svmlight(str(write(tmp_path, b"", "e.svm")))) == []
    assert list(iter_svmlight(str(write(tmp_path, b"# x\n\n  \n", "c.svm")), block_size=2)) == []
    d = read_svmlight(str(tmp_path / "e.svm"))
    assert d.n_examples == 0 and d.n_features == 0 and d.X.shape == (0, 0)
    check_csr(d)


def test_iter_float32_and_zero_based(tmp_path):
    path = str(write(tmp_path, b"1 0:0.1 2:3\n-1 1:1e-50 5:2\n"))
    chunks = list(iter_svmlight(path, zero_based=True, dtype=np.float32, block_size=4))
    whole = read_svmlight(path, zero_based=True, dtype=np.float32)
    assert [c.first_row for c in chunks] == [0, 1]
    for c in chunks:
        check_csr(c, np.float32)
    assert np.concatenate([c.indices for c in chunks]).tolist() == whole.chunk.indices.tolist() == [0, 2, 5]
    assert chunks[1].matrix(10).shape == (1, 10) and chunks[1].matrix().shape == (1, 6)


def test_progress_callback_counts_bytes(tmp_path):
    text = b"1 1:1\n" * 50
    seen = []
    read_svmlight(str(write(tmp_path, text)), block_size=64, progress=seen.append)
    assert sum(seen) == len(text) and max(seen) <= 64


# ====================================================== 7. float32 ==

@pytest.mark.parametrize("rel", ["heart_scale/heart_scale", "svmguide1/svmguide1.txt",
                                 "ijcnn1/ijcnn1.trn.bz2"])
def test_float32_real_data(rel):
    path = str(data_file(rel))
    d64 = read_svmlight(path)
    d32 = read_svmlight(path, dtype=np.float32)
    check_csr(d32, np.float32)
    assert d32.X.dtype == np.float32 and d32.n_features == d64.n_features
    expected = d64.chunk.data.astype(np.float32)
    assert np.all(expected != 0)                      # so the structure is the same
    assert np.array_equal(d32.chunk.indptr, d64.chunk.indptr)
    assert np.array_equal(d32.chunk.indices, d64.chunk.indices)
    assert np.array_equal(bits(d32.chunk.data), bits(expected))
    assert np.array_equal(bits(d32.y), bits(d64.y))


def test_float32_rounding_and_labels_stay_float64(tmp_path):
    path = str(write(tmp_path, b"0.1 1:0.1 2:16777217 3:1e-40 4:3.4028235e38 5:-3.4028235677973362e38\n"))
    d = read_svmlight(path, dtype=np.float32)
    check_csr(d, np.float32)
    assert d.y[0] == 0.1                                  # the label is not rounded
    assert np.array_equal(bits(d.chunk.data), bits(np.array(
        [0.1, 16777217.0, 1e-40, 3.4028235e38, -3.4028235677973362e38]).astype(np.float32)))
    assert d.chunk.data[1] == 16777216.0                  # float32 rounding (ties to even)


def test_float32_values_that_round_to_zero_are_not_stored(tmp_path):
    """Whether or not another explicit zero is on the same line."""
    path = str(write(tmp_path, b"1 1:1e-50 2:1\n-1 1:1e-50 2:0 3:1\n1 1:-1e-46\n"))
    d = read_svmlight(path, dtype=np.float32)
    check_csr(d, np.float32)
    assert d.chunk.indptr.tolist() == [0, 1, 2, 2]
    assert d.chunk.indices.tolist() == [1, 2] and d.n_features == 3


@pytest.mark.parametrize("token", [b"1e39", b"-3.5e38", b"1e300", b"3.4028235677973366e38"])
def test_float32_overflow_is_an_error(tmp_path, token):
    path = str(write(tmp_path, b"1 1:1\n-1 2:" + token + b"\n"))
    expect_error(path, 2, "'2:" + token.decode() + "'", "float32", dtype=np.float32)
    assert read_svmlight(path).chunk.data[1] == float(token)      # fine as float64


# ------------------------------------------------------------------ two threads: the buffers faulted in beside the parse

@pytest.mark.parametrize("rel", ["a9a/a9a", "w8a/w8a", "mushrooms/mushrooms.txt", "heart_scale/heart_scale"])
@pytest.mark.parametrize("threads", [2, 3, 7])
def test_two_thread_read_equals_one_thread(rel, threads):
    """A read with its buffers faulted in by a second thread gives the same arrays, labels (with their
    first lines), n_features and line count."""
    path = data_file(rel)
    a = read_svmlight(path, threads=1)
    b = read_svmlight(path, threads=threads, block_size=1 << 16)
    for name in ("labels", "indptr", "indices", "data", "qid"):
        assert np.array_equal(getattr(a.chunk, name), getattr(b.chunk, name)), name
    assert (a.n_features, a.n_lines) == (b.n_features, b.n_lines)
    assert [(l.value, l.line, l.text) for l in a.distinct_labels] == \
           [(l.value, l.line, l.text) for l in b.distinct_labels]


@pytest.mark.parametrize("bad_line", [1, 9000, 32561])
def test_two_thread_read_reports_the_file_line(tmp_path, bad_line):
    lines = data_file("a9a/a9a").read_bytes().split(b"\n")
    lines[bad_line - 1] += b" 200:nan"
    path = tmp_path / "bad.svm"
    path.write_bytes(b"\n".join(lines))
    for threads in (1, 2, 5):
        with pytest.raises(DataError, match=rf"bad.svm, line {bad_line}: value in '200:nan' is not finite"):
            read_svmlight(path, threads=threads)


def test_an_interrupted_read_leaves_no_populating_thread(tmp_path):
    """Ctrl-C in the parse (here raised from the progress callback) stops the thread that faults in the
    buffers beside it before the read returns: none is left running, and a read after it is whole."""
    import threading

    path = tmp_path / "d.svm"
    path.write_text("".join(f"{1 if i % 2 else -1} {i % 50 + 1}:{i % 7} {i % 50 + 60}:0.5\n" for i in range(300000)))
    calls = []

    def progress(n):
        calls.append(n)
        if len(calls) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        read_svmlight(str(path), threads=2, block_size=4096, progress=progress)
    assert len(calls) == 5
    assert not [t for t in threading.enumerate() if t.name == "pegasos-populate"]
    assert read_svmlight(str(path), threads=2).n_examples == 300000


@pytest.mark.parametrize("dense_first", [True, False])
def test_reserved_buffers_do_not_change_the_result(tmp_path, dense_first):
    """A plain file's buffers are reserved from the density of its first MiB; a
    first MiB much denser or much sparser than the rest must not matter."""
    import gzip

    dense = "".join(f"+1 " + " ".join(f"{j}:{(i * j) % 97 / 7}" for j in range(1, 60)) + "\n" for i in range(4000))
    sparse = "".join(f"-1 {i % 50 + 1}:1\n" for i in range(400000))
    text = dense + sparse if dense_first else sparse + dense
    plain, packed = tmp_path / "d.svm", tmp_path / "d.svm.gz"
    plain.write_text(text)
    with gzip.open(packed, "wt") as f:
        f.write(text)
    for threads in (1, 2):
        a, b = read_svmlight(str(plain), threads=threads), read_svmlight(str(packed))
        for name in ("labels", "indptr", "indices", "data"):
            assert np.array_equal(getattr(a.chunk, name), getattr(b.chunk, name)), name
        assert a.n_examples == 404000


def test_read_ahead_thread_ends_with_the_reader(tmp_path):
    """Compressed input is decompressed a block ahead in a thread; stopping early,
    finishing, or failing on a damaged stream must leave no thread behind."""
    import gzip
    import threading

    from pegasos.io import iter_svmlight

    path = tmp_path / "d.svm.gz"
    with gzip.open(path, "wt") as f:
        f.write("".join(f"{1 if i % 2 else -1} {i % 9 + 1}:{i}\n" for i in range(20000)))

    def readers():
        return [t for t in threading.enumerate() if t.name == "pegasos-read-ahead"]

    chunks = iter_svmlight(str(path), block_size=4096)
    next(chunks)
    assert len(readers()) == 1
    chunks.close()
    assert readers() == []
    assert sum(c.n_rows for c in iter_svmlight(str(path), block_size=4096)) == 20000
    assert readers() == []
    raw = path.read_bytes()
    cut = tmp_path / "cut.svm.gz"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DataError, match="cannot read or decompress"):
        read_svmlight(str(cut), block_size=4096)
    assert readers() == []


def test_train_reads_large_plain_files_with_two_threads_and_the_same_model(tmp_path, monkeypatch):
    """pegasos train reads plain files of PARALLEL_READ_BYTES and more with threads=2; the model
    is the same bytes as with one (the threshold lowered so that a small file crosses it)."""
    from click.testing import CliRunner

    import pegasos.cli as cli
    import pegasos.cli.reading as reading
    import pegasos.io as io

    rng = np.random.default_rng(5)
    lines = [("+1" if rng.random() < 0.5 else "-1") + "".join(
        f" {j}:{rng.random():.4f}" for j in np.sort(rng.choice(np.arange(1, 300), 8, replace=False)))
        for _ in range(3000)]
    data = tmp_path / "d.svm"
    data.write_text("\n".join(lines) + "\n")
    used = []
    real = io.read_svmlight

    def spy(*args, **kwargs):
        used.append(kwargs.get("threads", 1))
        return real(*args, **kwargs)

    monkeypatch.setattr(io, "read_svmlight", spy)
    models = []
    for limit in (1 << 62, 0):
        monkeypatch.setattr(reading, "PARALLEL_READ_BYTES", limit)
        out = tmp_path / f"m{limit}.model"
        r = CliRunner().invoke(cli.main, ["train", "-q", "--epochs", "2", str(data), str(out)])
        assert r.exit_code == 0, r.output
        models.append(out.read_bytes())
    from pegasos.linear import available_cpus

    expected = [1, 2] if available_cpus() >= 2 else [1, 1]
    assert used == expected and models[0] == models[1]
    # --jobs 1 keeps the whole run to one thread, reading included
    out = tmp_path / "one.model"
    r = CliRunner().invoke(cli.main, ["train", "-q", "--jobs", "1", "--epochs", "2", str(data), str(out)])
    assert r.exit_code == 0, r.output
    assert used[-1] == 1 and out.read_bytes() == models[0]
