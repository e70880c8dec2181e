"""Joining the pieces of a file parsed by several threads (``Parser.absorb``):
the rows of the pieces, appended in place to the first parser's buffers, are
the arrays one parser gives for the whole text; and ``read_svmlight`` with two
threads (which joins that way) returns the one-thread arrays."""

import numpy as np
import pytest

from pegasos import _svmlight
from pegasos.io import read_svmlight


def text(m, seed=0, qid=False):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(m):
        r = int(rng.integers(0, 8))
        cols = np.sort(rng.choice(60, size=r, replace=False)) + 1
        q = f" qid:{i // 10}" if qid else ""
        lines.append(f"{rng.choice([-1, 1])}{q}" + "".join(f" {c}:{rng.normal():.4g}" for c in cols))
    return ("\n".join(lines) + "\n").encode()


def parsed(*pieces, float32=False):
    parsers = []
    for piece in pieces:
        p = _svmlight.Parser(False, float32)
        assert p.feed(piece) >= 0
        parsers.append(p)
    first = parsers[0]
    for p in parsers[1:]:
        first.absorb(p)
        assert p.take()[0].shape[0] == 0              # the absorbed parser holds no rows any more
    return first.take(), int(first.n_features)


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and np.array_equal(x, y)


@pytest.mark.parametrize("float32", [False, True])
@pytest.mark.parametrize("cuts", [(0.5,), (0.1, 0.7), (0.0,), (1.0,), (0.3, 0.3, 0.9)])
def test_pieces_joined_are_the_whole(float32, cuts):
    data = text(300, qid=True)
    lines = data.splitlines(keepends=True)
    bounds = [0] + [int(c * len(lines)) for c in cuts] + [len(lines)]
    pieces = [b"".join(lines[a:b]) for a, b in zip(bounds, bounds[1:])]
    whole, n_whole = parsed(data, float32=float32)
    joined, n_joined = parsed(*[p for p in pieces if p] or [b""], float32=float32)
    same(joined, whole)
    assert n_joined == n_whole


def test_value_types_must_agree():
    a, b = _svmlight.Parser(False, False), _svmlight.Parser(False, True)
    with pytest.raises(ValueError, match="float32"):
        a.absorb(b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_two_threads_read_the_one_thread_arrays(tmp_path, dtype):
    path = tmp_path / "d.svm"
    path.write_bytes(text(5000, seed=1))
    one = read_svmlight(str(path), dtype=dtype, threads=1)
    two = read_svmlight(str(path), dtype=dtype, threads=2)
    c1, c2 = one.chunk, two.chunk
    same((c1.labels, c1.indptr, c1.indices, c1.data, c1.qid), (c2.labels, c2.indptr, c2.indices, c2.data, c2.qid))
    assert one.n_features == two.n_features and one.n_lines == two.n_lines
    assert [(l.value, l.line) for l in one.distinct_labels] == [(l.value, l.line) for l in two.distinct_labels]
