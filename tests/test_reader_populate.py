"""Faulting in the reader's buffers beside the parse (``Parser.populate``): the rows parsed do not
depend on it, it faults in the reserved buffers and no more than ``ahead`` bytes past the rows fed,
it stops when asked or when the buffers grow; and ``read_svmlight`` with two threads (which runs it)
returns the one-thread arrays."""

import inspect
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from pegasos import _svmlight
from pegasos.io import read_svmlight

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MADV_POPULATE_WRITE is Linux's")


def text(m, seed=0, qid=False):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(m):
        r = int(rng.integers(0, 8))
        cols = np.sort(rng.choice(60, size=r, replace=False)) + 1
        q = f" qid:{i // 10}" if qid else ""
        lines.append(f"{rng.choice([-1, 1])}{q}" + "".join(f" {c}:{rng.normal():.4g}" for c in cols))
    return ("\n".join(lines) + "\n").encode()


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and np.array_equal(x, y)


def rss_anon():
    """The process's private resident memory in bytes (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) << 10
    pytest.skip("no RssAnon in /proc/self/status")


def fed_in_blocks(parser, data, block=997):
    """Feed ``data`` in buffers of whole lines of about ``block`` bytes."""
    lines, buf = data.splitlines(keepends=True), []
    for line in lines:
        buf.append(line)
        if sum(map(len, buf)) >= block:
            assert parser.feed(b"".join(buf)) >= 0
            buf = []
    assert parser.feed(b"".join(buf)) >= 0


@pytest.mark.parametrize("float32", [False, True])
@pytest.mark.parametrize("reserve", [(10**5, 10**6), (50, 200)])     # ample; short (the buffers grow)
def test_populated_while_fed_gives_the_same_arrays(float32, reserve):
    data = text(3000, seed=2, qid=True)
    plain = _svmlight.Parser(False, float32)
    assert plain.feed(data) >= 0
    parser = _svmlight.Parser(False, float32)
    parser.reserve(*reserve)
    helper = threading.Thread(target=parser.populate, args=(4096,))
    helper.start()
    try:
        fed_in_blocks(parser, data)
    finally:
        parser.stop_populating()
        helper.join()
    same(parser.take(), plain.take())
    assert parser.n_features == plain.n_features


@linux
def test_populate_faults_in_the_reserved_buffers():
    parser = _svmlight.Parser(False, False)
    parser.reserve(1000, 10000)
    faulted = parser.populate(1 << 40)
    if faulted == 0:
        pytest.skip("the kernel has no MADV_POPULATE_WRITE")
    # three row arrays of 8 bytes (cap_rows + 1 entries), indices of 4 and values of 8 bytes
    assert faulted == 3 * 8 * 1001 + 12 * 10000
    # in a fresh process: in this one the allocator may hand back pages earlier tests left resident
    script = ("import sys; sys.path[:0] = " + repr(sys.path) + "\n"
              "import pytest\nfrom pegasos import _svmlight\n" + inspect.getsource(rss_anon) +
              "big = _svmlight.Parser(False, False)\nbig.reserve(16, 4 << 20)\nbefore = rss_anon()\n"
              "faulted = big.populate(1 << 40)\nprint(faulted, rss_anon() - before)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    faulted, grown = (int(v) for v in out.stdout.split())
    assert faulted == 3 * 8 * 17 + 12 * (4 << 20) and grown >= 40 << 20, (faulted, grown)


@linux
def test_populate_stays_within_ahead_of_the_rows_fed():
    parser = _svmlight.Parser(False, False)
    parser.reserve(1 << 20, 8 << 20)          # 120 MiB of buffers, nothing fed
    ahead = 256 << 10
    before = rss_anon()
    helper = threading.Thread(target=lambda: done.append(parser.populate(ahead)))
    done = []
    helper.start()
    time.sleep(0.3)
    parser.stop_populating()
    helper.join()
    assert done[0] <= 5 * ahead
    assert rss_anon() - before < 16 << 20


def test_populate_returns_when_stopped_before_or_when_the_buffers_grow():
    parser = _svmlight.Parser(False, False)
    parser.reserve(100, 1000)
    parser.stop_populating()
    assert parser.populate(1 << 40) == 0      # after a stop it returns at once, nothing faulted
    parser = _svmlight.Parser(False, False)
    parser.reserve(100, 1000)
    helper = threading.Thread(target=parser.populate, args=(0,))   # nothing fed, nothing to do: it waits
    helper.start()
    time.sleep(0.05)
    parser.reserve(10**5, 10**6)              # the buffers grow (and may move): it must let them be
    helper.join(timeout=30)
    assert not helper.is_alive()
    assert parser.feed(text(100)) == 100


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
    assert not [t for t in threading.enumerate() if t.name == "pegasos-populate"]
