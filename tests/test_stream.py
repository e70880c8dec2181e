"""Training from files larger than memory: the binary cache and the shuffle buffer.

The cache must give exactly what reading the text gives (so models are
bit-identical to in-memory training); the shuffle buffer must visit every
example once per pass, equal permutation sampling when it holds the whole
file, and reach the in-memory objective (within 1%) with a small buffer.
"""

import gzip
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import data_file, ok
# these tests pin the paper's settings for the options they leave out
from conftest import run_pegasos_paper as run_pegasos
from pegasos import linear, stream, trainers as api
from pegasos.errors import DataError, ParameterError
from pegasos.io import iter_svmlight, read_svmlight
from pegasos.modelfile import load_model
from pegasos.scoring import objective

A9A = "a9a/a9a"
SOURCES = ["a9a/a9a", "w8a/w8a", "dna/dna.scale", "ijcnn1/ijcnn1.tst.bz2", "heart_scale/heart_scale",
           "agaricus/agaricus.txt.train"]


def _same_data(a, b):
    assert a.n_features == b.n_features and a.n_lines == b.n_lines
    assert a.distinct_labels == b.distinct_labels and a.labels_overflow == b.labels_overflow
    for name in ("labels", "indptr", "indices", "data"):
        x, y = getattr(a.chunk, name), getattr(b.chunk, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


# ------------------------------------------------------------------ cache --

@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cache_holds_exactly_what_the_reader_gives(tmp_path, source, dtype):
    path = str(data_file(source))
    cached, reused = stream.load_cached(path, str(tmp_path / "c.cache"), dtype=dtype)
    assert not reused
    _same_data(cached, read_svmlight(path, dtype=dtype))
    assert isinstance(cached.chunk.data, np.memmap) and not cached.chunk.data.flags.writeable


def test_cache_keeps_qids_and_zero_based_indices(tmp_path):
    src = tmp_path / "rank.svm"
    src.write_text("2 qid:1 0:1 3:2\n1 qid:1 1:1\n# comment\n\n0 qid:7 2:0.5\n3 qid:7 0:1e-3 2:4\n")
    cached, _ = stream.load_cached(str(src), str(tmp_path / "r.cache"), zero_based=True)
    direct = read_svmlight(str(src), zero_based=True)
    _same_data(cached, direct)
    assert np.array_equal(cached.chunk.qid, direct.chunk.qid) and cached.chunk.qid.tolist() == [1, 1, 7, 7]
    assert read_svmlight(str(src), zero_based=True).chunk.qid is not None
    # without qids no section is stored and none is returned
    plain, _ = stream.load_cached(str(data_file(A9A)), str(tmp_path / "p.cache"))
    assert plain.chunk.qid is None


@pytest.mark.parametrize("kw", [dict(sampling="uniform", epochs=2), dict(sampling="permutation", epochs=2),
                                dict(sampling="permutation", batch_size=16, average_from=0.5, epochs=3),
                                dict(sampling="uniform", loss="log", bias="feature", iterations=20000)])
def test_training_on_the_cache_equals_training_in_memory(tmp_path, kw):
    path = str(data_file(A9A))
    cached, _ = stream.load_cached(path, str(tmp_path / "a.cache"))
    d = read_svmlight(path)
    a = api.train(cached.chunk, cached.y, lam=1e-4, seed=5, n_features=cached.n_features, **kw)
    b = api.train(d.chunk, d.y, lam=1e-4, seed=5, n_features=d.n_features, **kw)
    assert np.array_equal(a.w, b.w) and a.bias == b.bias


def test_cache_is_reused_only_while_source_and_options_match(tmp_path):
    src = tmp_path / "d.svm"
    src.write_bytes(data_file("heart_scale/heart_scale").read_bytes())
    cache = str(tmp_path / "d.cache")
    assert stream.load_cached(str(src), cache)[1] is False
    assert stream.load_cached(str(src), cache)[1] is True
    assert stream.load_cached(str(src), cache, dtype=np.float32)[1] is False      # dtype changed
    assert stream.load_cached(str(src), cache, dtype=np.float32)[1] is True
    assert stream.load_cached(str(src), cache, zero_based=True, dtype=np.float32)[1] is False
    # the source changes (new content, new mtime): rebuilt, and the new rows are seen
    with open(src, "a") as f:
        f.write("+1 1:0.5\n")
    st = os.stat(src)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    d, reused = stream.load_cached(str(src), cache)
    assert not reused and d.n_examples == 271
    # a damaged cache (cut short) is rebuilt, not read past its end, and the caller is told
    size = os.path.getsize(cache)
    with open(cache, "r+b") as f:
        f.truncate(size - 100)
    told = []
    d, reused = stream.load_cached(str(src), cache, on_damaged=told.append)
    assert not reused and d.n_examples == 271
    assert told == [f"cut short: {size - 100} bytes, its sections end at byte {size}"]


def test_cache_refuses_to_overwrite_a_file_that_is_not_a_cache(tmp_path):
    src = str(data_file("heart_scale/heart_scale"))
    precious = tmp_path / "notes.txt"
    precious.write_text("not a cache\n")
    with pytest.raises(DataError, match="is not a pegasos cache file"):
        stream.load_cached(src, str(precious))
    assert precious.read_text() == "not a cache\n"


def test_bad_input_leaves_no_cache_and_no_temporary_file(tmp_path):
    src = tmp_path / "bad.svm.gz"
    with gzip.open(src, "wt") as f:
        f.write("+1 1:1\n" * 5000 + "-1 2:x\n")
    with pytest.raises(DataError, match=r"bad\.svm\.gz.*line 5001"):
        stream.load_cached(str(src), str(tmp_path / "bad.cache"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.svm.gz"]


def test_open_cache_rejects_files_that_are_not_caches(tmp_path):
    other = tmp_path / "x"
    other.write_text("+1 1:1\n")
    with pytest.raises(DataError, match="is not a pegasos cache file"):
        stream.open_cache(str(other))


# --------------------------------------------------------- shuffle buffer --

def _indexed_file(tmp_path, m, name="ids.svm"):
    """A regression file whose target is the row number (so visits can be traced)."""
    path = tmp_path / name
    with open(path, "w") as f:
        for i in range(m):
            f.write(f"{i} {i % 7 + 1}:1 9:{i}\n")
    return str(path)


@pytest.mark.parametrize("m,N,k", [(1000, 100, 1), (1000, 64, 5), (1000, 3, 1), (1000, 10, 32), (999, 2000, 4),
                                   (50000, 1000, 1)])
def test_each_pass_visits_every_example_once_in_shuffled_order(tmp_path, m, N, k):
    path = _indexed_file(tmp_path, m)
    rng = np.random.Generator(np.random.PCG64(0))
    spill = stream.scan(path).spill
    for _ in range(2):
        seen, sizes = [], []
        for buf, rows in stream.shuffled_rows(spill.chunks(), N, k, rng):
            seen.append(buf.labels[rows].astype(np.int64))
            sizes.append(rows.shape[0])
        order = np.concatenate(seen)
        assert np.array_equal(np.sort(order), np.arange(m))
        assert not np.array_equal(order, np.arange(m))
        # every visit but the last (the end of the file) is a whole number of batches
        assert all(s % k == 0 for s in sizes[:-1])


def test_small_buffer_shuffles_locally_only(tmp_path):
    """An example cannot be visited before the buffer has read it: the window is about N."""
    m, N, block = 20000, 500, 4096
    path = _indexed_file(tmp_path, m)
    rng = np.random.Generator(np.random.PCG64(1))
    order = np.concatenate([buf.labels[rows] for buf, rows in
                            stream.shuffled_rows(iter_svmlight(path, block_size=block), N, 1, rng)]).astype(np.int64)
    position = np.arange(m)
    rows_per_block = block // 10 + 1           # lines are at least 10 bytes long
    # example i is read before it is visited: it cannot come earlier than N + one block allows
    ahead = order - position
    assert ahead.max() <= N + rows_per_block
    assert ahead.max() > N // 2                # and the order is shuffled at that scale
    assert np.array_equal(np.sort(order), position)


@pytest.mark.parametrize("kw", [dict(epochs=3), dict(iterations=50000, batch_size=7, average_from=0.3, bias="feature"),
                                dict(epochs=2, loss="log", class_weight={1.0: 3.0}, projection=True),
                                dict(epochs=1.5, loss="squared-hinge", average=True, step_offset=100.0),
                                dict(epochs=2, batch_size=64, bias="unregularized")])
def test_buffer_holding_the_whole_file_equals_permutation_sampling(kw):
    path = str(data_file(A9A))
    d = read_svmlight(path)
    a = api.train(d.chunk, d.y, lam=1e-4, sampling="permutation", seed=3, **kw)
    b = stream.train_shuffled(path, shuffle_buffer=d.n_examples + 1, lam=1e-4, seed=3, **kw)
    assert np.array_equal(a.w, b.w) and a.bias == b.bias
    streamed = ("sampling", "shuffle_buffer", "stream_reads", "certified_gap", "dual_bound")
    assert {k: v for k, v in a.info.items() if k != "sampling"} == \
        {k: v for k, v in b.info.items() if k not in streamed}
    assert b.info["sampling"] == "shuffle-buffer" and b.info["shuffle_buffer"] == str(d.n_examples + 1)


def test_regression_through_the_buffer_equals_permutation_sampling(tmp_path):
    path = _indexed_file(tmp_path, 3000)
    d = read_svmlight(path)
    y = d.y / 3000.0
    scaled = tmp_path / "scaled.svm"
    with open(path) as src, open(scaled, "w") as out:
        for line, target in zip(src, y):
            out.write(f"{float(target)!r} {line.split(' ', 1)[1]}")
    d = read_svmlight(str(scaled))
    for kw in (dict(epochs=2, epsilon=0.01), dict(epochs=2, epsilon=0.0, projection=True, average_from=0.5)):
        a = api.train(d.chunk, d.y, lam=1e-3, sampling="permutation", seed=2, loss="eps-insensitive", **kw)
        b = stream.train_shuffled(str(scaled), shuffle_buffer=5000, lam=1e-3, seed=2, loss="eps-insensitive", **kw)
        assert np.array_equal(a.w, b.w) and a.bias == b.bias


@pytest.mark.parametrize("source,lam", [(A9A, 1e-4), ("w8a/w8a", 1e-4)])
def test_small_buffer_reaches_the_in_memory_objective(tmp_path, source, lam):
    """Same number of updates, suffix averaging: objectives within 1% of each other.
    The files are put in random order first: w8a as distributed has its 1479 positive
    examples in one run near its start, which a 2000-example window cannot mix (the
    warning about sorted files in docs/large-data.md; see the test below)."""
    lines = data_file(source).read_text().splitlines(keepends=True)
    shuffled = tmp_path / "shuffled.svm"
    shuffled.write_text("".join(lines[i] for i in np.random.default_rng(7).permutation(len(lines))))
    path = str(shuffled)
    d = read_svmlight(path)
    for seed in (1, 2):
        kw = dict(lam=lam, epochs=5, average_from=0.5, seed=seed)
        mem = api.train(d.chunk, d.y, sampling="permutation", **kw)
        # blocks of 64 KiB of text (~700 rows), so that the buffer really is a window of the file
        buf = stream.train_shuffled(path, shuffle_buffer=2000, block_size=1 << 16, **kw)
        assert buf.info["iterations"] == mem.info["iterations"]
        f_mem = objective(mem, d.chunk, d.y)["objective"]
        f_buf = objective(buf, d.chunk, d.y)["objective"]
        assert abs(f_buf - f_mem) <= 0.01 * f_mem, (seed, f_mem, f_buf)


def test_shuffle_buffer_refusals(tmp_path):
    path = str(data_file(A9A))
    with pytest.raises(ParameterError, match="not the rank loss"):
        stream.train_shuffled(path, loss="rank")
    with pytest.raises(ParameterError, match="at least 1 example"):
        stream.train_shuffled(path, shuffle_buffer=0)
    with pytest.raises(DataError, match="third class"):
        stream.train_shuffled(str(data_file("dna/dna.scale")))
    empty = tmp_path / "empty.svm"
    empty.write_text("# nothing\n\n")
    with pytest.raises(DataError, match="no training examples"):
        stream.train_shuffled(str(empty))


# -------------------------------------------------------------------- CLI --

def test_cli_stream_and_cache_end_to_end(tmp_path):
    a9a = data_file(A9A)
    args = ["--epochs", "2", "--average-from", "0.5", "--t0", "1000000"]
    r = run_pegasos("train", "--stream", "--shuffle-buffer", "5000", a9a, tmp_path / "s.model", *args)
    assert r.returncode == 0, r.stderr
    assert "shuffle buffer 5000" in r.stdout
    model = load_model(str(tmp_path / "s.model"))
    assert model.info["sampling"] == "shuffle-buffer" and model.info["shuffle_buffer"] == "5000"
    cache = tmp_path / "a9a.cache"
    for expect in ("built", "reused"):
        r = run_pegasos("train", "--cache", cache, "--sampling", "permutation", a9a, tmp_path / "c.model", *args)
        assert r.returncode == 0, r.stderr
        assert f"cache {cache} ({expect})" in r.stdout
    r = run_pegasos("train", "--sampling", "permutation", a9a, tmp_path / "m.model", *args)
    assert (tmp_path / "m.model").read_text() == (tmp_path / "c.model").read_text()
    # from standard input through a cache, one-vs-rest on three classes
    dna = data_file("dna/dna.scale")
    r = run_pegasos("train", "--cache", tmp_path / "dna.cache", "-", tmp_path / "d.model", "--epochs", "2",
                    input=dna.read_text())
    assert r.returncode == 0, r.stderr
    r2 = run_pegasos("train", dna, tmp_path / "d2.model", "--epochs", "2")
    strip = lambda text: [l for l in text.splitlines() if not l.startswith("train_file")]
    assert strip((tmp_path / "d.model").read_text()) == strip((tmp_path / "d2.model").read_text())


@pytest.mark.parametrize("args,message,status", [
    (["--stream", "-"], "-: no training examples found", 1),
    (["--stream", "--sampling", "uniform", "A9A"], "drop --sampling", 2),
    (["--shuffle-buffer", "10", "--cache", "X", "A9A"], "either --shuffle-buffer or --cache", 2),
    (["--shuffle-buffer", "0", "A9A"], "'--shuffle-buffer': 0 is not in the range x>=1", 2),
    (["--stream", "--kernel", "rbf", "A9A"], "use --cache FILE for kernels", 2),
    (["--stream", "--loss", "rank", "A9A"], "use --cache FILE for kernels, multiclass and ranking", 2),
    (["--stream", "DNA"], "has 3 labels: --stream / --shuffle-buffer trains binary classifiers and regression; "
                          "add --cache FILE for a multiclass model", 1),
    (["--cache", "A9A", "A9A"], "is the same file as DATA", 1),
    (["--cache", "OTHER", "A9A"], "exists and is not a pegasos cache file", 1),
    (["--cache", "200", "--kernel", "rbf", "A9A"], "--cache takes a file name", 2),
    (["--stream", "/dev/stdin"], "/dev/stdin: no training examples found", 1),
    (["--stream", "--loss", "eps-insensitive", "-p", "nan", "A9A"], "epsilon must be >= 0", 2),
    (["--stream", "--loss", "eps-insensitive", "-p", "-1", "A9A"], "epsilon must be >= 0", 2),
])
def test_cli_stream_errors_are_one_line(tmp_path, args, message, status):
    """Each a one-line error, nothing written: exit status 2 for a wrong command line, 1 for DATA."""
    other = tmp_path / "other.txt"
    other.write_text("not a cache\n")
    names = {"A9A": str(data_file(A9A)), "DNA": str(data_file("dna/dna.scale")), "X": str(tmp_path / "x.cache"),
             "OTHER": str(other)}
    r = run_pegasos("train", *[names.get(a, a) for a in args], tmp_path / "out.model", input="", cwd=tmp_path)
    assert r.returncode == status
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert not (tmp_path / "out.model").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt"]
    assert other.read_text() == "not a cache\n"



def test_a_streamed_run_refused_names_stream_and_what_does_run(tmp_path):
    """train --stream on multiclass data named --shuffle-buffer, an option the user had not given and whose
    any size is refused the same: the refusals of a streamed run name --stream, and the run they offer,
    --stream --cache FILE, trains the same model as the file in memory."""
    dna = str(data_file("dna/dna.scale"))
    for extra in ([], ["--kernel", "rbf"], ["--trace", str(tmp_path / "t.csv")]):
        r = run_pegasos("train", "--stream", "--epochs", "1", *extra, dna, tmp_path / "m")
        lines = r.stderr.strip().splitlines()
        assert r.returncode in (1, 2) and len(lines) == 1 and "--stream / --shuffle-buffer" in lines[0], r.stderr
        assert "--cache FILE" in lines[0] or "in memory" in lines[0], lines[0]
        assert not (tmp_path / "m").exists()
    r = run_pegasos("train", "-q", "--stream", "--cache", tmp_path / "dna.cache", "--epochs", "1", dna, tmp_path / "m")
    assert r.returncode == 0, r.stderr
    ok = run_pegasos("train", "-q", "--epochs", "1", dna, tmp_path / "memory")
    assert ok.returncode == 0, ok.stderr
    strip = lambda text: [l for l in text.splitlines() if not l.startswith("train_file")]
    assert strip((tmp_path / "m").read_text()) == strip((tmp_path / "memory").read_text())

def test_cli_refuses_the_model_file_as_cache(tmp_path):
    model = tmp_path / "m.model"
    r = run_pegasos("train", "--cache", model, data_file("heart_scale/heart_scale"), model)
    assert r.returncode == 1 and f"--cache {model} is the same file as MODEL {model}" in r.stderr
    assert not model.exists()
    # also when MODEL is left to its default name (DATA's name + .model)
    data = tmp_path / "h.svm"
    data.write_bytes(data_file("heart_scale/heart_scale").read_bytes())
    r = run_pegasos("train", "--cache", "h.svm.model", "h.svm", cwd=tmp_path)
    assert r.returncode == 1 and "is the same file as MODEL h.svm.model" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.svm"]


def test_api_parameters_are_checked_like_train():
    path = str(data_file("heart_scale/heart_scale"))
    a = stream.train_shuffled(path, shuffle_buffer=np.int64(50), epochs=1)
    assert a.info["shuffle_buffer"] == "50"
    with pytest.raises(ParameterError, match="batch size k must be an integer"):
        stream.train_shuffled(path, batch_size=2.5)
    for eps in (-1.0, float("nan")):
        with pytest.raises(ParameterError, match="epsilon must be >= 0"):
            stream.train_shuffled(path, loss="eps-insensitive", epsilon=eps)


def _cache_of_heart(tmp_path):
    cache = str(tmp_path / "h.cache")
    stream.load_cached(str(data_file("heart_scale/heart_scale")), cache)
    return cache, stream.read_cache_header(cache)


def _poke(cache, offset, raw):
    with open(cache, "r+b") as f:
        f.seek(offset)
        f.write(raw)


@pytest.mark.parametrize("section,position,value,dtype", [
    ("indices", 3, -5, np.int32), ("indices", 0, 10**6, np.int32), ("indices", 1, 0, np.int32),
    ("indptr", 5, 10**9, np.int64), ("indptr", -1, 7, np.int64), ("indptr", 0, 3, np.int64),
    ("indptr", 7, 0, np.int64), ("labels", 4, float("inf"), np.float64), ("labels", 0, float("nan"), np.float64),
])
def test_damaged_cache_arrays_are_an_error_not_a_crash(tmp_path, section, position, value, dtype):
    """A flipped byte in a cache section used to crash the loop (segfault)."""
    cache, header = _cache_of_heart(tmp_path)
    offset, _, count = header["sections"][section]
    position %= count
    _poke(cache, offset + position * np.dtype(dtype).itemsize, np.array([value], dtype=dtype).tobytes())
    with pytest.raises(DataError, match=r"h\.cache: damaged cache file .*delete it to rebuild"):
        stream.open_cache(cache)


@pytest.mark.parametrize("section,position,value,dtype", [
    ("data", 11, 0.123456, np.float64), ("data", -1, -7.5, np.float64), ("labels", 2, -1.0, np.float64),
    ("labels", 3, 1.0, np.float64), ("indices", 2, 9, np.int32),
])
def test_changed_cache_values_are_found_by_the_checksum(tmp_path, section, position, value, dtype):
    """A changed value, a label swapped for the other one, an index moved within its row: each passes
    the structural checks and trained on silently before the sections had checksums."""
    cache, header = _cache_of_heart(tmp_path)
    offset, _, count = header["sections"][section]
    position %= count
    at = offset + position * np.dtype(dtype).itemsize
    with open(cache, "rb") as f:
        f.seek(at)
        old = np.frombuffer(f.read(np.dtype(dtype).itemsize), dtype=dtype)[0]
    if section == "labels":
        value = -old                                    # heart_scale's labels are -1 and +1
    if section == "indices":                          # the first index with room to move within its row
        chunk = stream.open_cache(cache).chunk
        indptr, indices = np.asarray(chunk.indptr), np.asarray(chunk.indices)
        for position in range(position, count):
            row = np.searchsorted(indptr, position, side="right") - 1
            lo = indices[position - 1] if position > indptr[row] else -1
            hi = indices[position + 1] if position + 1 < indptr[row + 1] else header["n_features"]
            free = [v for v in range(lo + 1, hi) if v != indices[position]]
            if free:
                break
        at, old, value = offset + position * 4, indices[position], free[0]
    assert value != old
    _poke(cache, at, np.array([value], dtype=dtype).tobytes())
    with pytest.raises(DataError, match=rf"h\.cache: damaged cache file \(the {section} section changed since the "
                                        r"cache was built: its checksum differs\); delete it to rebuild"):
        stream.open_cache(cache)
    _poke(cache, at, np.array([old], dtype=dtype).tobytes())
    assert stream.open_cache(cache).chunk.n_rows == header["n_examples"]          # put back: whole again


def test_changed_qid_and_older_caches(tmp_path):
    import json

    src = tmp_path / "r.svm"
    src.write_text("2 qid:1 1:1\n1 qid:1 2:1\n2 qid:2 1:0.5\n0 qid:2 2:2\n")
    cache = str(tmp_path / "r.cache")
    stream.load_cached(str(src), cache)
    header = stream.read_cache_header(cache)
    offset = header["sections"]["qid"][0]
    _poke(cache, offset, np.array([2], dtype=np.int64).tobytes())
    with pytest.raises(DataError, match="the qid section changed"):
        stream.open_cache(cache)
    # caches of the versions before the checksums (1) and before the header's (2) are rebuilt when their
    # source is read, quietly (an upgrade is no damage), and refused when opened alone
    for version, drop in ((1, ("crc32", "header_crc32")), (2, ("header_crc32",))):
        old = {k: v for k, v in header.items() if k not in drop}
        old["version"] = version
        text = stream.CACHE_MAGIC + json.dumps(old).encode() + b"\n"
        _poke(cache, 0, text + b"\0" * (stream._HEADER_BYTES - len(text)))
        with pytest.raises(DataError, match=rf"cache version {version}, this pegasos reads version 3"):
            stream.open_cache(cache)
        told = []
        d, reused = stream.load_cached(str(src), cache, on_damaged=told.append)
        assert not reused and not told and list(np.asarray(d.chunk.qid)) == [1, 1, 2, 2]
        assert stream.read_cache_header(cache)["version"] == stream.CACHE_VERSION
        assert stream.load_cached(str(src), cache)[1]
        header = stream.read_cache_header(cache)


def test_deeply_nested_cache_header_is_no_traceback(tmp_path):
    cache, _ = _cache_of_heart(tmp_path)
    text = stream.CACHE_MAGIC + b"[" * 20000 + b"]" * 20000 + b"\n"
    _poke(cache, 0, text + b"\0" * (stream._HEADER_BYTES - len(text)))
    assert stream.read_cache_header(cache) == {}
    with pytest.raises(DataError, match="damaged cache file"):
        stream.open_cache(cache)


def test_damaged_cache_through_the_cli_names_the_cache(tmp_path):
    src = tmp_path / "h.svm"
    src.write_bytes(data_file("heart_scale/heart_scale").read_bytes())
    cache = str(tmp_path / "h.cache")
    stream.load_cached(str(src), cache)
    header = stream.read_cache_header(cache)
    offset = header["sections"]["indices"][0]
    _poke(cache, offset + 3 * 4, np.array([-1], dtype=np.int32).tobytes())
    r = run_pegasos("train", "--cache", cache, src, tmp_path / "m.model")
    ok(r)
    assert f"pegasos: note: {cache}: damaged cache file (feature indices); rebuilding it from {src}" in r.stderr
    assert f"cache {cache} (rebuilt, it was damaged)" in r.stderr + r.stdout
    # the model is the one of the text, and the rebuilt cache is whole: reused quietly
    ok(run_pegasos("train", "-q", src, tmp_path / "text.model"))
    assert (tmp_path / "m.model").read_bytes() == (tmp_path / "text.model").read_bytes()
    r = run_pegasos("train", "-q", "--cache", cache, src, tmp_path / "again.model")
    assert ok(r) == "" and "damaged" not in r.stderr
    assert stream.load_cached(str(src), cache)[1] is True


def test_cache_header_lies_are_errors(tmp_path):
    import json

    cache, header = _cache_of_heart(tmp_path)
    for key, value in (("n_features", 3), ("n_examples", 5), ("byte_order", "other")):
        bad = dict(header, **{key: value})
        text = stream.CACHE_MAGIC + json.dumps(bad).encode() + b"\n"
        _poke(cache, 0, text + b"\0" * (stream._HEADER_BYTES - len(text)))
        with pytest.raises(DataError, match="damaged cache file"):
            stream.open_cache(cache)


def test_cache_is_rebuilt_after_a_same_size_edit_that_keeps_the_mtime(tmp_path):
    """touch -r, cp -p and rsync -t restore the mtime; the ctime still changes."""
    src = tmp_path / "d.svm"
    src.write_text("+1 1:1\n-1 2:1\n" * 20)
    cache = str(tmp_path / "d.cache")
    stream.load_cached(str(src), cache)
    st = os.stat(src)
    src.write_text("-1 1:1\n-1 2:1\n" + "+1 1:1\n-1 2:1\n" * 19)      # same size, one label flipped
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    d, reused = stream.load_cached(str(src), cache)
    assert not reused and d.y[0] == -1


def test_cache_file_gets_the_mode_of_a_new_file(tmp_path):
    cache, _ = _cache_of_heart(tmp_path)
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(cache).st_mode & 0o777 == 0o666 & ~umask


def test_small_buffers_cost_no_more_per_example_than_large_ones(tmp_path):
    """The buffer is emptied down to N/2 once per block of text, not once per N/2
    rows: a tiny N must not mean one round (and one copy of the buffer) per row."""
    path = _indexed_file(tmp_path, 60000)
    block = 1 << 16
    n_blocks = os.path.getsize(path) // block + 1
    copied = {}
    original = stream._Buffer.keep

    def counting_keep(self, rows):
        copied[N] = copied.get(N, 0) + rows.shape[0]
        return original(self, rows)

    stream._Buffer.keep = counting_keep
    try:
        for N in (1, 2, 10, 1000):
            rng = np.random.Generator(np.random.PCG64(0))
            rounds = sum(1 for _ in stream.shuffled_rows(iter_svmlight(path, block_size=block), N, 1, rng))
            assert rounds <= n_blocks + 1, (N, rounds)
            assert copied.get(N, 0) <= (N // 2) * rounds, (N, copied)
    finally:
        stream._Buffer.keep = original


def test_sorted_file_with_a_small_buffer_is_the_documented_failure(tmp_path):
    """The warning of docs/large-data.md holds: sorted by label, a window much shorter than a run is
    far from the optimum; a buffer holding the file is not."""
    d = read_svmlight(str(data_file(A9A)))
    order = np.argsort(d.y, kind="stable")
    src = tmp_path / "sorted.svm"
    with open(data_file(A9A)) as f:
        lines = f.readlines()
    src.write_text("".join(lines[i] for i in order))
    kw = dict(lam=1e-4, epochs=1, average_from=0.5, step_offset=1 / (1e-4 * 0.01), seed=1, block_size=1 << 16)
    mem = api.train(d.chunk, d.y, sampling="permutation", **{k: v for k, v in kw.items() if k != "block_size"})
    f_mem = objective(mem, d.chunk, d.y)["objective"]
    small = stream.train_shuffled(str(src), shuffle_buffer=1000, **kw)
    whole = stream.train_shuffled(str(src), shuffle_buffer=d.n_examples + 1, **kw)
    assert objective(small, d.chunk, d.y)["objective"] > 1.05 * f_mem
    assert abs(objective(whole, d.chunk, d.y)["objective"] - f_mem) < 0.01 * f_mem


@pytest.mark.parametrize("args", [["--kernel", "rbf", "--epochs", "2"], ["--multiclass", "crammer-singer"],
                                  ["--loss", "rank", "--epochs", "3"],
                                  ["--loss", "eps-insensitive", "--sampling", "permutation", "-p", "0.2"]])
def test_every_trainer_gives_the_in_memory_model_through_the_cache(tmp_path, args):
    if "rank" in args:
        src = tmp_path / "r.svm"
        src.write_text("".join(f"{(i * 7) % 4} qid:{i // 10} {i % 5 + 1}:{(i % 3) + 0.5} 9:{i % 2}\n"
                               for i in range(200)))
    elif "crammer-singer" in args:
        src = data_file("dna/dna.scale")
    else:
        src = data_file("heart_scale/heart_scale")
    a, b = tmp_path / "a.model", tmp_path / "b.model"
    r1 = run_pegasos("train", "-q", "--cache", tmp_path / "c.cache", *args, src, a)
    r2 = run_pegasos("train", "-q", *args, src, b)
    assert r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
    assert a.read_text() == b.read_text()


# ------------------------------------------------------- the stream's step --

def _separable(tmp_path, m=2000, n=30, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    y = np.where(X @ rng.normal(size=n) > 0, 1, -1)
    path = tmp_path / "sep.svm"
    with open(path, "w") as f:
        for xi, yi in zip(X, y):
            f.write(f"{yi:+d} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(xi)) + "\n")
    return path


@pytest.mark.parametrize("size", [1, 50, 299, 300, 1000])
def test_the_scan_keeps_a_uniform_sample_of_the_files_rows(tmp_path, size):
    """The first pass keeps min(size, m) distinct rows, in file order, each one the reader's row, drawn by
    the seed alone (the same seed the same rows, another seed others); over many seeds every row is
    about as likely (priority sampling: the rows of the smallest uniform keys)."""
    path = _separable(tmp_path, m=300, n=5)
    full = read_svmlight(str(path))
    rows = {}
    for i in range(300):
        a, b = full.chunk.indptr[i], full.chunk.indptr[i + 1]
        rows.setdefault((float(full.chunk.labels[i]), tuple(full.chunk.indices[a:b]), tuple(full.chunk.data[a:b])),
                        []).append(i)
    counts = np.zeros(300)
    for seed in range(40):
        sample = stream.scan(str(path), sample_size=size, seed=seed).sample
        assert sample.labels.shape[0] == min(size, 300)
        found = []
        for i in range(sample.labels.shape[0]):
            a, b = sample.indptr[i], sample.indptr[i + 1]
            key = (float(sample.labels[i]), tuple(sample.indices[a:b]), tuple(sample.data[a:b]))
            found.append(rows[key][0])
        assert found == sorted(set(found))                   # distinct rows, in the file's order
        counts[found] += 1
        again = stream.scan(str(path), sample_size=size, seed=seed).sample
        assert np.array_equal(again.indptr, sample.indptr) and np.array_equal(again.data, sample.data)
    if size >= 300:
        assert np.all(counts == 40)


def test_every_row_is_as_likely_in_the_scans_sample(tmp_path):
    """200 samples of 10 of 60 rows: each row is kept 33.3 times on average (sd 5.3, binomial); all within
    four sd, and the first and last thirds of the file alike (a sample biased to early rows fails this)."""
    path = _separable(tmp_path, m=60, n=3)
    counts = np.zeros(60)
    full = read_svmlight(str(path))
    index = {tuple(full.chunk.data[full.chunk.indptr[i]:full.chunk.indptr[i + 1]]): i for i in range(60)}
    for seed in range(200):
        sample = stream.scan(str(path), sample_size=10, seed=seed).sample
        for i in range(10):
            counts[index[tuple(sample.data[sample.indptr[i]:sample.indptr[i + 1]])]] += 1
    assert counts.sum() == 2000 and 12 <= counts.min() and counts.max() <= 55
    assert abs(counts[:20].sum() - counts[40:].sum()) < 4 * np.sqrt(2 * 20 * 33.3)


def test_the_default_stream_calibrates_its_step_on_the_sample(tmp_path):
    """The shuffle buffer took the paper's t0 = 0 by default (first steps of 1/lambda): 10 epochs of 2000
    separable rows ended at 0.291 against an optimum of 0.0305.  It now calibrates t0 on the first pass's
    sample as in memory, carried to the m rows (t0_s sqrt(m / s)), and records the rule; the paper's
    preset and a given t0 stay as they were.  (The default stream runs the dual: Pegasos by its epochs.)"""
    import math

    import pegasos
    from pegasos import autotune
    from pegasos.examples import Examples
    from pegasos.labels import BinaryLabels
    from pegasos.options import TrainOptions

    path = _separable(tmp_path)
    model = pegasos.fit(str(path), lam=1e-4, shuffle_buffer=500, epochs=10)      # (Pegasos: epochs given)
    assert model.info["solver"] == "pegasos" and model.info["step_offset_rule"] == "calibrated"
    scanned = stream.scan(str(path))
    s = scanned.sample
    ex = Examples(indptr=s.indptr, indices=s.indices, data=s.data, y=s.labels, n_features=scanned.n_features)
    options = TrainOptions(lam=1e-4).validate()
    t0 = autotune.step_offset_for(ex, options, BinaryLabels.from_data(scanned)) * math.sqrt(2000 / 1000)
    assert float(model.info["step_offset"]) == pytest.approx(t0, rel=1e-12)
    d = read_svmlight(str(path))
    f = objective(model, d.chunk, d.y)["objective"]
    paper = pegasos.fit(str(path), lam=1e-4, shuffle_buffer=500, preset="paper", epochs=10)
    assert "step_offset_rule" not in paper.info
    assert f < 0.25 * objective(paper, d.chunk, d.y)["objective"]
    in_memory = pegasos.fit(d, lam=1e-4)
    assert f <= 1.3 * objective(in_memory, d.chunk, d.y)["objective"]
    given = pegasos.fit(str(path), lam=1e-4, shuffle_buffer=500, step_offset=100.0)
    assert given.info["step_offset"] == "100.0" and given.info.get("step_offset_rule") != "calibrated"


def test_stream_on_a_file_that_fits_in_memory_says_what_the_default_does_there(tmp_path):
    path = _separable(tmp_path, m=300, n=5)
    from conftest import run_pegasos as run_auto

    r = run_auto("train", "--stream", "-l", "0.1", path, tmp_path / "m")
    assert r.returncode == 0 and "fits in memory, where training reads it once" in r.stderr
    assert "drop --stream" in r.stderr
    r = run_auto("train", "-q", "--stream", "-l", "0.1", path, tmp_path / "m")
    assert r.returncode == 0 and r.stderr == ""
    r = run_auto("train", "--stream", "--epochs", "3", path, tmp_path / "m")
    assert r.returncode == 0 and "note" not in r.stderr


def test_the_stream_notes_say_only_what_holds(tmp_path):
    """A second trial: --stream with --t0 1000 wrote a model worse than w = 0 with no note (in memory one is
    given), and the note on a file that fits in memory promised a certified default for regression, which
    has no dual finish."""
    from conftest import run_pegasos as run_auto

    rng = np.random.default_rng(4)
    path = tmp_path / "noisy.svm"
    with open(path, "w") as out:
        for _ in range(300):
            x = rng.normal(size=5)
            label = 1 if x.sum() + 2 * rng.normal() > 0 else -1
            out.write(f"{label:+d} " + " ".join(f"{j + 1}:{v:.5g}" for j, v in enumerate(x)) + "\n")
    r = run_auto("train", "--stream", "--t0", "1", "-l", "1e-4", path, tmp_path / "m")
    import pegasos

    d = read_svmlight(str(path))
    f = objective(pegasos.load_model(str(tmp_path / "m")), d.chunk, d.y)["objective"]
    assert r.returncode == 0 and (f > 1) == ("that of w = 0" in r.stderr) and f > 1
    rng = np.random.default_rng(3)
    reg = tmp_path / "reg.svm"
    with open(reg, "w") as out:
        for _ in range(200):
            x = rng.normal(size=3)
            out.write(f"{x.sum():.5g} " + " ".join(f"{j + 1}:{v:.5g}" for j, v in enumerate(x)) + "\n")
    r = run_auto("train", "--stream", "--loss", "eps-insensitive", reg, tmp_path / "r")
    assert r.returncode == 0 and "certifies" not in r.stderr


def _edited_header(header, key):
    """``header`` with one field changed as a hand edit or a flipped bit would change it."""
    edited = json.loads(json.dumps(header))
    if key == "n_features":
        edited[key] *= 100
    elif key == "label text":
        edited["distinct_labels"][0][2] = "+7"
    elif key == "distinct_labels":
        edited[key].append(["3.0", 1, "3"])
    elif key == "labels_overflow":
        edited[key] = True
    elif key == "sections":
        edited[key]["data"][0] += 1 << 40
    elif key == "version":
        edited[key] = "3"
    return edited


@pytest.mark.parametrize("key", ["n_features", "label text", "distinct_labels", "labels_overflow", "sections",
                                 "version", "not json", "truncated"])
def test_cache_header_damage_is_found_and_rebuilt(tmp_path, key):
    """Header fields were covered by no checksum: an edited n_features, label text or added label
    was trained on silently (the last two gave a model of 0 iterations), and a header that was not
    JSON, a huge offset or a cut file were rebuilt without a word while other damage was an error."""
    src = tmp_path / "h.svm"
    src.write_bytes(data_file("heart_scale/heart_scale").read_bytes())
    cache = str(tmp_path / "h.cache")
    stream.load_cached(str(src), cache)
    header = stream.read_cache_header(cache)
    if key == "truncated":
        with open(cache, "r+b") as f:
            f.truncate(header["sections"]["labels"][0] + 8)
        expect = "cut short"
    else:
        text = (b"{not json" if key == "not json" else
                json.dumps(_edited_header(header, key), indent=1).encode())
        text = stream.CACHE_MAGIC + text + b"\n"
        _poke(cache, 0, text + b"\0" * (stream._HEADER_BYTES - len(text)))
        expect = {"not json": "its header is not readable JSON",
                  "version": "cache version '3', this pegasos reads version 3"}.get(
            key, "its header changed since the cache was built: its checksum differs")
    with pytest.raises(DataError, match=r"h\.cache: damaged cache file \(" + re.escape(expect)):
        stream.open_cache(cache)
    told = []
    d, reused = stream.load_cached(str(src), cache, on_damaged=told.append)
    assert not reused and len(told) == 1 and told[0].startswith(expect)
    assert d.n_features == header["n_features"] and d.distinct_labels == stream.open_cache(cache).distinct_labels
    assert [lab.text for lab in d.distinct_labels] == [lab[2] for lab in header["distinct_labels"]]
    assert stream.load_cached(str(src), cache, on_damaged=told.append)[1] is True and len(told) == 1


@pytest.mark.parametrize("block", [1, 7, 269, 270, 271, 1 << 22])
def test_checksums_found_in_the_check_pass_are_those_of_the_whole_sections(tmp_path, block):
    """The checksums are computed in the blocks of the structural checks (one read of each section);
    at every block size, straddling the row offsets' one-element overlap, they are the whole arrays'."""
    cache, header = _cache_of_heart(tmp_path)
    d = stream.open_cache(cache)
    found = stream._check_arrays(d.chunk, header["n_examples"], header["n_features"], block=block)
    whole = {name: stream._crc32(getattr(d.chunk, name)) for name in ("labels", "indptr", "indices", "data")}
    assert found == whole == {name: header["crc32"][name] for name in whole}


@pytest.mark.parametrize("size", [0, 1, 5, len(stream.CACHE_MAGIC) - 1])
def test_empty_or_cut_cache_is_rebuilt_not_refused(tmp_path, size):
    """A cache emptied or cut inside its first line (a crash, a full disk) was 'not a pegasos cache
    file' and needed a manual rm; it holds nothing to lose, so it is a damaged cache, rebuilt."""
    src = str(data_file("heart_scale/heart_scale"))
    cache = tmp_path / "h.cache"
    cache.write_bytes(stream.CACHE_MAGIC[:size])
    told = []
    d, reused = stream.load_cached(src, str(cache), on_damaged=told.append)
    assert not reused and d.n_examples == 270 and len(told) == 1 and "not readable" in told[0]
    # a file that is not a cache from its first byte on is still never overwritten
    cache.write_bytes(b"p" + b"x" * 100)
    with pytest.raises(DataError, match="exists and is not a pegasos cache file"):
        stream.load_cached(src, str(cache))
    assert cache.read_bytes() == b"p" + b"x" * 100


def test_fifo_as_the_cache_is_an_error_not_a_hang(tmp_path):
    fifo = tmp_path / "c.fifo"
    os.mkfifo(fifo)
    r = run_pegasos("train", "-q", "--cache", fifo, data_file("heart_scale/heart_scale"), tmp_path / "m")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (f"Error: {fifo}: is not a regular file (a FIFO or a device cannot hold a cache); "
                                "choose another --cache name")
    assert not (tmp_path / "m").exists()


def test_temporary_files_of_killed_cache_builds_are_removed(tmp_path):
    src = str(data_file("heart_scale/heart_scale"))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()                                                  # a pid that is no longer running
    stale = tmp_path / f".h.cache.{dead.pid}.k2j4x8.tmp"
    live = tmp_path / f".h.cache.{os.getppid()}.a1b2c3.tmp"        # a running process's build: kept
    other = tmp_path / f".other.cache.{dead.pid}.k2j4x8.tmp"      # another cache's: not ours to judge
    for f in (stale, live, other):
        f.write_bytes(b"partial")
    stream.load_cached(src, str(tmp_path / "h.cache"))
    assert not stale.exists() and live.exists() and other.exists()
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, other.name, "h.cache"])


@pytest.mark.parametrize("key", ["n_features", "n_examples"])
def test_forged_header_with_an_infinite_count_is_no_traceback(tmp_path, key):
    """1e400 in the JSON is float infinity; with the header's checksum recomputed it reached int()."""
    cache, header = _cache_of_heart(tmp_path)
    forged = dict(header, **{key: float("inf")})
    forged["header_crc32"] = stream._header_crc(forged)
    text = stream.CACHE_MAGIC + json.dumps(forged).encode() + b"\n"
    _poke(cache, 0, text + b"\0" * (stream._HEADER_BYTES - len(text)))
    with pytest.raises(DataError, match="damaged cache file"):
        stream.open_cache(cache)
    r = run_pegasos("train", "-q", "--cache", cache, data_file("heart_scale/heart_scale"), tmp_path / "m")
    assert r.returncode == 0 and "Traceback" not in r.stderr and "damaged cache file" in r.stderr


def test_cache_of_a_newer_version_is_rebuilt_with_a_note(tmp_path):
    """A cache written by a newer pegasos (a higher version, whatever else its header holds) used to be
    overwritten without a word, so two versions sharing one cache rebuilt it in turn unseen."""
    src = tmp_path / "h.svm"
    src.write_bytes(data_file("heart_scale/heart_scale").read_bytes())
    cache = str(tmp_path / "h.cache")
    stream.load_cached(str(src), cache)
    header = stream.read_cache_header(cache)

    def make_newer(**more):
        newer = dict(header, version=stream.CACHE_VERSION + 1, **more)
        newer["header_crc32"] = stream._header_crc(newer)
        text = stream.CACHE_MAGIC + json.dumps(newer, indent=1).encode() + b"\n"
        _poke(cache, 0, text + b"\0" * (stream._HEADER_BYTES - len(text)))

    make_newer(new_field=[1, 2])
    told, damaged = [], []
    d, reused = stream.load_cached(str(src), cache, on_damaged=damaged.append, on_newer=told.append)
    assert not reused and told == [stream.CACHE_VERSION + 1] and damaged == [] and d.n_examples == 270
    assert stream.read_cache_header(cache)["version"] == stream.CACHE_VERSION
    # an older version is still rebuilt quietly, and a version that is not a number is damage
    for version, calls in ((stream.CACHE_VERSION - 1, ([], [])), ("9", ([], ["x"]))):
        newer = dict(header, version=version)
        newer["header_crc32"] = stream._header_crc(newer)
        text = stream.CACHE_MAGIC + json.dumps(newer, indent=1).encode() + b"\n"
        _poke(cache, 0, text + b"\0" * (stream._HEADER_BYTES - len(text)))
        told, damaged = [], []
        stream.load_cached(str(src), cache, on_damaged=lambda what: damaged.append("x"), on_newer=told.append)
        assert (told, damaged) == calls, version

    make_newer()
    r = run_pegasos("train", "-q", "--cache", cache, src, tmp_path / "m.model")
    ok(r)
    v = stream.CACHE_VERSION
    assert (f"pegasos: note: {cache}: cache version {v + 1} was written by a newer pegasos; "
            f"this one reads version {v} and rebuilds it from {src}") in r.stderr.splitlines(), r.stderr
    r = run_pegasos("train", "--cache", cache, src, tmp_path / "m2.model")
    ok(r)
    assert f"cache {cache} (reused)" in r.stderr + r.stdout
    make_newer()
    r = run_pegasos("train", "--cache", cache, src, tmp_path / "m3.model")
    assert f"cache {cache} (rebuilt, it was of version {v + 1})" in r.stderr + r.stdout
    assert (tmp_path / "m.model").read_bytes() == (tmp_path / "m3.model").read_bytes()


# ------------------------------------------------------- out of core: reads, certificate --

def _shuffled_copy(tmp_path, source, seed=7):
    lines = data_file(source).read_text().splitlines(keepends=True)
    path = tmp_path / "shuffled.svm"
    path.write_text("".join(lines[i] for i in np.random.default_rng(seed).permutation(len(lines))))
    return str(path)


def _dual_optimum(path, **settings):
    """f* of the in-memory problem, bracketed by the dual solver: (lower bound, upper bound P(w))."""
    import pegasos

    d = read_svmlight(path)        # float64, as the spill keeps them by default
    model = pegasos.fit(d, pegasos.TrainOptions(solver="dual", tol=1e-6, **settings))
    upper = objective(model, d.chunk, d.y)["objective"]
    return upper * (1.0 - float(model.info["certified_gap"])), upper


def _counting_reads(monkeypatch):
    """Lists that the reads of the text (iter_svmlight calls) and of the spill (Spill.chunks calls) of
    pegasos.stream are appended to, where they happen."""
    texts, spills = [], []
    original, chunks = stream.iter_svmlight, stream.Spill.chunks

    def counting(*args, **kw):
        texts.append(args[0])
        return original(*args, **kw)

    def counting_chunks(self):
        spills.append(self)
        return chunks(self)

    monkeypatch.setattr(stream, "iter_svmlight", counting)
    monkeypatch.setattr(stream.Spill, "chunks", counting_chunks)
    return texts, spills


def test_a_streamed_run_certified_at_once_reads_the_text_once_and_the_spill_twice(tmp_path, monkeypatch):
    """The text's pass trains (and spills), the spill's first pass trains on, its second certifies that
    model: three sequential reads in all, counted where they happen."""
    import pegasos

    path = _shuffled_copy(tmp_path, A9A)
    texts, spills = _counting_reads(monkeypatch)
    model = pegasos.fit(path, pegasos.TrainOptions(shuffle_buffer=5000, lam=1e-2, tol=0.01))
    assert texts == [path] and len(spills) == 2
    assert model.info["stream_reads"] == "text 1, spill 2" and model.info["finish_passes"] == "2"
    assert model.info["solver"] == "dual" and model.info["stop"] == "certified"
    assert float(model.info["certified_gap"]) <= 0.01
    # each further pass certifies the model of the pass before, until tol
    texts.clear()
    spills.clear()
    tight = pegasos.fit(path, pegasos.TrainOptions(shuffle_buffer=5000, lam=1e-2, tol=0.001))
    n = len(spills)
    assert texts == [path] and n > 2 and tight.info["stream_reads"] == f"text 1, spill {n}"
    assert float(tight.info["certified_gap"]) <= 0.001


def test_standard_input_streams_without_training_in_its_first_pass(tmp_path, monkeypatch):
    """A pipe promises no number of examples: its first pass only spills; the model is the one of the
    dual from alpha = 0 over the spill's passes, which reading the file gives when it trains no first
    pass either (a first pass whose settings differ is dropped)."""
    import pegasos

    path = _shuffled_copy(tmp_path, "heart_scale/heart_scale")
    options = pegasos.TrainOptions(shuffle_buffer=5000, lam=1e-2)
    plain = pegasos.fit(stream.scan(path, learner=None), options)
    assert plain.info["finish_passes"] == str(int(plain.info["stream_reads"].split()[-1]) - 1)
    first = stream.first_pass_learner(options)
    trained = pegasos.fit(stream.scan(path, learner=first), options)
    assert trained.info["finish_passes"] == trained.info["stream_reads"].split()[-1]


@pytest.mark.parametrize("settings", [dict(), dict(loss="squared-hinge"), dict(bias="feature"),
                                      dict(class_weight={1.0: 3.0}, lam=1e-3)])
def test_the_streamed_certificate_holds_against_the_in_memory_optimum(tmp_path, settings):
    """D <= f* and P(w) (1 - gap) <= f*, with f* bracketed by the in-memory dual solver; P recomputed
    densely from the model's margins on the values the spill holds (float64, the default --dtype)."""
    import pegasos

    settings = {"lam": 1e-4, "tol": 0.01, **settings}
    path = _shuffled_copy(tmp_path, A9A)
    low, high = _dual_optimum(path, **{k: v for k, v in settings.items() if k != "tol"})
    model = pegasos.fit(path, pegasos.TrainOptions(shuffle_buffer=5000, **settings))
    dual, gap = float(model.info["dual_bound"]), float(model.info["certified_gap"])
    primal = model.train_objective["objective"]
    assert model.info["solver"] == "dual"
    assert 0.0 < dual <= low <= high <= primal, (dual, low, high, primal)
    assert primal * (1.0 - gap) <= high * (1 + 1e-12)
    assert gap == pytest.approx((primal - dual) / primal, rel=1e-9)
    d = read_svmlight(path)
    X = d.chunk.matrix(model.w.shape[0]).toarray().astype(np.float64)
    y = model.labels.encode(d.y)
    c = np.array([settings.get("class_weight", {}).get(v, 1.0) for v in d.y])
    feature = settings.get("bias") == "feature"
    z = y * (X @ model.w + model.bias)
    losses = np.maximum(0.0, 1.0 - z) ** (2 if settings.get("loss") == "squared-hinge" else 1)
    p = 0.5 * settings["lam"] * (model.w @ model.w + (model.bias ** 2 if feature else 0.0)) + np.mean(c * losses)
    assert primal == pytest.approx(p, rel=1e-9)
    scored = objective(model, d.chunk, d.y)             # the numbers eval and objective give
    assert primal == pytest.approx(scored["objective"], rel=1e-9)
    assert model.train_objective["error_rate"] == scored["error_rate"]
    assert model.train_objective["hinge_loss"] == pytest.approx(scored["hinge_loss"], rel=1e-9)


@pytest.mark.parametrize("settings", [dict(loss="log"), dict(solver="pegasos")])
def test_a_streamed_pegasos_run_certifies_what_it_can(tmp_path, settings):
    """Pegasos over the spill: its epochs doubled from one while the certificate of its last pass is
    above tol (the log loss, which has no dual here: while a doubling gains more than tol of the
    objective), the objective from that pass."""
    import pegasos

    path = _shuffled_copy(tmp_path, A9A)
    model = pegasos.fit(path, pegasos.TrainOptions(shuffle_buffer=5000, lam=1e-3, tol=0.05, **settings))
    d = read_svmlight(path, dtype=np.float32)
    assert model.info["solver"] == "pegasos" and float(model.info["epochs"]) in (1, 2, 4, 8, 16)
    assert model.train_objective["objective"] == pytest.approx(objective(model, d.chunk, d.y)["objective"],
                                                               rel=1e-9)
    if settings.get("loss") == "log":       # no certificate: the in-memory doubling's test, from two lengths
        assert float(model.info["epochs"]) >= 2 and model.info["stop"] in ("converged", "stream passes")
    else:
        low, _ = _dual_optimum(path, lam=1e-3)
        assert 0.0 < float(model.info["dual_bound"]) <= low
        gap = float(model.info["certified_gap"])
        assert model.info["stop"] == ("certified" if gap <= 0.05 else "stream passes")


def test_a_streamed_pegasos_run_doubles_its_epochs_while_not_certified(tmp_path, monkeypatch):
    """1, 2, 4, 8, 16 epochs (runs of 1, 1, 2, 4, 8 epochs), each certified by one more pass: 16 + 5 reads
    of the spill."""
    import pegasos

    path = _shuffled_copy(tmp_path, A9A)
    texts, spills = _counting_reads(monkeypatch)
    model = pegasos.fit(path, pegasos.TrainOptions(shuffle_buffer=5000, lam=1e-3, solver="pegasos", tol=1e-9))
    assert model.info["epochs"] == "16" and model.info["stop"] == "stream passes"
    assert texts == [path] and len(spills) == 16 + 5 and model.info["stream_reads"] == "text 1, spill 21"
    assert model.info["iterations"] == str(16 * 32561)


def test_streamed_summary_and_standard_input(tmp_path):
    """The summary says the reads; standard input streams (it is read once)."""
    from conftest import run_pegasos as run_default

    src = _shuffled_copy(tmp_path, "heart_scale/heart_scale")
    out = ok(run_default("train", "--stream", "-l", "1e-2", src, tmp_path / "a.model"))
    assert re.search(r"read text 1, spill \d+ \| dual solver: \d+ passes, (not )?certified", out), out
    assert "shuffle buffer" not in out                # (the dual holds none)
    out = ok(run_default("train", "--stream", "-l", "1e-2", "-", tmp_path / "b.model", input=open(src).read()))
    assert re.search(r"read text 1, spill \d+ \| dual solver", out), out


def test_a_file_too_large_for_memory_streams_by_itself(tmp_path, monkeypatch):
    """Judged from the plain file's size against what the process can allocate; said in a note."""
    from click.testing import CliRunner

    import pegasos.cli as cli
    import pegasos.data

    path = _shuffled_copy(tmp_path, "heart_scale/heart_scale")
    size = os.path.getsize(path)
    monkeypatch.setattr(pegasos.data, "memory_limit", lambda: size)
    assert stream.too_large_for_memory(path) == (int(stream.IN_MEMORY_PER_TEXT_BYTE * size), size)
    r = CliRunner().invoke(cli.main, ["train", "-l", "1e-2", path, str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert "would need about" in r.output and "streaming it (--stream)" in r.output
    assert "read text 1, spill" in r.output and "fits in memory" not in r.output
    r = CliRunner().invoke(cli.main, ["train", "--stream", "-l", "1e-2", path, str(tmp_path / "m")])
    assert r.exit_code == 0 and "fits in memory" not in r.output and "would need" not in r.output
    monkeypatch.setattr(pegasos.data, "memory_limit", lambda: 2 * size)
    assert stream.too_large_for_memory(path) is None
    r = CliRunner().invoke(cli.main, ["train", "-l", "1e-2", path, str(tmp_path / "m")])
    assert r.exit_code == 0 and "streaming" not in r.output and "read text 1" not in r.output


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("source", ["a9a/a9a", "dna/dna.scale"])
def test_the_spill_gives_back_the_rows_as_the_reader_reads_them(tmp_path, source, dtype):
    """Every block, in order: labels, row offsets, indices and values exact, in the --dtype read."""
    path = str(data_file(source))
    d = stream.scan(path, dtype=dtype, block_size=1 << 16)
    whole = read_svmlight(path, dtype=dtype)
    blocks = list(d.spill.chunks())
    assert len(blocks) > 1 and [b.first_row for b in blocks] == list(np.cumsum([0] + [b.n_rows for b in blocks])[:-1])
    for name in ("labels", "indices", "data"):
        joined = np.concatenate([getattr(b, name) for b in blocks])
        assert joined.dtype == getattr(whole.chunk, name).dtype and np.array_equal(joined, getattr(whole.chunk, name))
    lengths = np.concatenate([np.diff(b.indptr) for b in blocks])
    assert np.array_equal(lengths, np.diff(whole.chunk.indptr))
    per_value = 4 + np.dtype(dtype).itemsize
    assert d.spill.reads == 1 and d.spill.bytes == sum(16 + 12 * b.n_rows + per_value * b.indices.shape[0]
                                                       for b in blocks)
    d.spill.close()


@pytest.mark.parametrize("values", [[5, 1, 5, 0, 70000, 2], [3] * 10, list(range(1 << 17, 0, -7)) + [1 << 30]])
def test_distinct_columns_and_label_counts_equal_numpys(values):
    a = np.array(values, dtype=np.int32)
    assert np.array_equal(stream._distinct(a), np.unique(a))
    f = a.astype(np.float64) - 1.5
    found, counts = stream._counts(f)
    expected, n = np.unique(f, return_counts=True)
    assert np.array_equal(found, expected) and np.array_equal(counts, n)


def test_explain_says_what_a_streamed_run_runs(tmp_path):
    from conftest import run_pegasos as run_default

    a9a = data_file(A9A)
    assert ok(run_default("train", "--stream", "--explain", a9a)).startswith("solver dual (auto: the dual can run)")
    out = ok(run_default("train", "--stream", "--explain", "--loss", "log", a9a))
    assert out.startswith("solver pegasos (auto: the log loss has no dual solver here)")


def test_the_streamed_dual_runs_until_certified_on_data_that_need_many_passes(tmp_path):
    """A trial's report: 10,000 noisy rows stopped at 20 passes over the spill, 12% above their
    optimum, where the dual in memory certifies within tol.  The passes now go on within the in-memory
    dual's bound of work (pegasos.defaults.DUAL_WORK): certified within the default tol, and D <= f*."""
    import pegasos

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 60)) * (rng.random((3000, 60)) < 0.3)
    y = np.where(X @ rng.normal(size=60) + 2 * rng.normal(size=3000) > 0, 1.0, -1.0)
    path = tmp_path / "noisy.svm"
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write(f"{label:g} " + " ".join(f"{j + 1}:{row[j]:.4f}" for j in np.flatnonzero(row)) + "\n")
    model = pegasos.fit(str(path), pegasos.TrainOptions(shuffle_buffer=1000, lam=1e-4))
    passes = int(model.info["stream_reads"].split()[-1])
    assert model.info["stop"] == "certified" and passes > stream.STREAM_MAX_PASSES
    low, _ = _dual_optimum(str(path), lam=1e-4)
    assert float(model.info["dual_bound"]) <= low
    assert float(model.info["certified_gap"]) <= pegasos.TrainOptions().tol
