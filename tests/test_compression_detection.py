"""Compressed data recognised by its first bytes, whatever its name.

gzip (1f 8b), bzip2 ("BZh") and xz (fd 37 7a 58 5a 00) data under a plain
name or on standard input are decompressed, and give bit for bit what the
suffixed file gives: the arrays of the reader (one thread or several), the
model and the predictions of the command line.  Such a file is not "plain
text" for the code that cuts a file into byte ranges, sizes buffers from its
length or shows a byte-count progress bar.
"""

import bz2
import gzip
import io
import lzma
import os
import subprocess
import sys
import threading
import time
import types

import numpy as np
import pytest

from conftest import SharedData, pegasos_executable, run_pegasos

HEART = SharedData("heart_scale/heart_scale")
A9A = SharedData("a9a/a9a")
PACKERS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


def ok(r):
    assert r.returncode == 0, f"exit {r.returncode}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    return r.stdout


def same_data(a, b):
    for name in ("labels", "indptr", "indices", "data", "qid"):
        x, y = getattr(a.chunk, name), getattr(b.chunk, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert (a.n_features, a.n_lines, a.labels_overflow) == (b.n_features, b.n_lines, b.labels_overflow)
    assert [(l.value, l.line, l.text) for l in a.distinct_labels] == [(l.value, l.line, l.text)
                                                                       for l in b.distinct_labels]


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """heart_scale compressed three ways, each under a suffixed and a plain name."""
    d = tmp_path_factory.mktemp("packed")
    raw = HEART.read_bytes()
    out = {}
    for ext, pack in PACKERS.items():
        blob = pack(raw)
        (d / f"heart.{ext}").write_bytes(blob)
        (d / f"heart_{ext}.svm").write_bytes(blob)
        out[ext] = (d / f"heart.{ext}", d / f"heart_{ext}.svm")
    return out


@pytest.mark.parametrize("ext", sorted(PACKERS))
@pytest.mark.parametrize("threads", [1, 2])
def test_reader_under_a_plain_name_equals_the_suffixed_file(packed, ext, threads):
    from pegasos.io import iter_svmlight, read_svmlight

    suffixed, plain_name = packed[ext]
    ref = read_svmlight(str(HEART))
    same_data(read_svmlight(str(suffixed), threads=threads), ref)
    same_data(read_svmlight(str(plain_name), threads=threads), ref)
    chunks = list(iter_svmlight(str(plain_name), block_size=1000))
    assert np.array_equal(np.concatenate([c.labels for c in chunks]), ref.y)


@pytest.mark.parametrize("ext", sorted(PACKERS))
def test_reader_from_fake_stdin(ext):
    from pegasos.io import read_svmlight

    raw = HEART.read_bytes()
    stdin = types.SimpleNamespace(buffer=io.BytesIO(PACKERS[ext](raw)))
    old, sys.stdin = sys.stdin, stdin
    try:
        d = read_svmlight("-", block_size=777)
    finally:
        sys.stdin = old
    assert not stdin.buffer.closed
    same_data(d, read_svmlight(str(HEART)))


@pytest.mark.parametrize("ext", sorted(PACKERS))
def test_command_line_model_and_predictions_are_identical(tmp_path, packed, ext):
    suffixed, plain_name = packed[ext]
    opts = ("-q", "--epochs", "3", "--seed", "4", "--sampling", "permutation")
    ok(run_pegasos("train", *opts, HEART, tmp_path / "ref.model"))
    ref = (tmp_path / "ref.model").read_text()
    for source in (suffixed, plain_name):
        ok(run_pegasos("train", *opts, source, tmp_path / "m.model"))
        assert (tmp_path / "m.model").read_text() == ref.replace(f"train_file {HEART}", f"train_file {source}")
    blob = suffixed.read_bytes()
    r = subprocess.run([pegasos_executable(), "train", *opts, "--cache", str(tmp_path / "c"), "-",
                        str(tmp_path / "s.model")], input=blob, capture_output=True, timeout=300)
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert (tmp_path / "s.model").read_text() == ref.replace(f"train_file {HEART}", "train_file -")
    preds = ok(run_pegasos("predict", HEART, tmp_path / "ref.model"))
    assert ok(run_pegasos("predict", plain_name, tmp_path / "ref.model")) == preds
    r = subprocess.run([pegasos_executable(), "predict", "-", str(tmp_path / "ref.model")], input=blob,
                       capture_output=True, timeout=300)
    assert r.returncode == 0 and r.stderr == b"" and r.stdout.decode() == preds
    for command in ("eval", "objective"):
        assert ok(run_pegasos(command, plain_name, tmp_path / "ref.model")) == \
            ok(run_pegasos(command, HEART, tmp_path / "ref.model"))


def test_a9a_gzip_through_a_pipe_into_the_cache(tmp_path):
    """The reported case: ``cat a9a.gz | pegasos train --cache c - m``."""
    gz = tmp_path / "a9a.gz"
    gz.write_bytes(gzip.compress(A9A.read_bytes(), compresslevel=1))
    ok(run_pegasos("train", "-q", "--epochs", "1", A9A, tmp_path / "ref.model"))
    with open(gz, "rb") as f:
        r = subprocess.run([pegasos_executable(), "train", "-q", "--epochs", "1", "--cache", str(tmp_path / "c"),
                            "-", str(tmp_path / "m.model")], stdin=f, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stderr == ""
    assert (tmp_path / "m.model").read_text() == \
        (tmp_path / "ref.model").read_text().replace(f"train_file {A9A}", "train_file -")


def test_magic_split_across_pipe_writes(tmp_path):
    """A writer that sends the first byte alone: the reader waits for the whole signature."""
    from pegasos.io import read_svmlight

    script = ("import sys\nfrom pegasos.io import read_svmlight\n"
              "d = read_svmlight('-')\nprint(d.n_examples, d.nnz, d.n_features)\n")
    blob = lzma.compress(HEART.read_bytes())
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=False)
    proc.stdin.write(blob[:1])
    proc.stdin.flush()
    time.sleep(0.3)
    proc.stdin.write(blob[1:])
    proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=120)
    ref = read_svmlight(str(HEART))
    assert proc.returncode == 0, err
    assert out.decode().split() == [str(ref.n_examples), str(ref.nnz), str(ref.n_features)]


def test_fifo_path_with_compressed_data(tmp_path):
    from pegasos.io import is_plain_text_file, read_svmlight

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not is_plain_text_file(str(fifo))          # and it did not block on the FIFO
    packed = bz2.compress(HEART.read_bytes())         # here: a skip inside the thread would hang
    writer = threading.Thread(target=lambda: fifo.write_bytes(packed))
    writer.start()
    d = read_svmlight(str(fifo), threads=2)
    writer.join(timeout=60)
    same_data(d, read_svmlight(str(HEART)))


def test_is_plain_text_file(tmp_path, packed):
    from pegasos.io import is_plain_text_file

    assert is_plain_text_file(str(HEART))
    for suffixed, plain_name in packed.values():
        assert not is_plain_text_file(str(suffixed)) and not is_plain_text_file(str(plain_name))
    text_gz = tmp_path / "text.gz"                    # a suffix still means compressed (an error if not)
    text_gz.write_text("1 1:1\n")
    assert not is_plain_text_file(str(text_gz))
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "short").write_bytes(b"\x1f")          # too short for a signature: text
    assert is_plain_text_file(str(tmp_path / "empty")) and is_plain_text_file(str(tmp_path / "short"))
    assert not is_plain_text_file("-")
    assert not is_plain_text_file(str(tmp_path))
    assert not is_plain_text_file(str(tmp_path / "missing"))


def test_progress_bar_has_no_byte_total_for_compressed_data(tmp_path, packed):
    from pegasos.cli.progress import Progress

    progress = Progress(quiet=False)
    progress.enabled = True
    for path, total in [(str(HEART), os.path.getsize(HEART))] + [(str(p), None) for pair in packed.values()
                                                                  for p in pair]:
        bar = progress.reading(path)
        try:
            assert bar.total == total, path
        finally:
            bar.close()


def test_short_or_damaged_data_without_suffix(tmp_path):
    from pegasos.errors import DataError
    from pegasos.io import read_svmlight

    one = tmp_path / "one"
    one.write_bytes(b"\x1f")
    with pytest.raises(DataError, match=r"one, line 1: label"):
        read_svmlight(str(one))
    cut = tmp_path / "cut"
    cut.write_bytes(gzip.compress(HEART.read_bytes())[:500])
    with pytest.raises(DataError, match=r"cut: cannot read or decompress"):
        read_svmlight(str(cut), threads=2)
    r = run_pegasos("train", cut, "m", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.startswith(f"Error: {cut}: cannot read or decompress")
    assert "\\x1f" not in r.stderr and not (tmp_path / "m").exists()


def test_legacy_lzma_suffix_still_works(tmp_path):
    from pegasos.io import read_svmlight

    path = tmp_path / "d.lzma"
    path.write_bytes(lzma.compress(HEART.read_bytes(), format=lzma.FORMAT_ALONE))
    same_data(read_svmlight(str(path)), read_svmlight(str(HEART)))


def test_open_binary_closes_what_it_opened(tmp_path, packed):
    from pegasos.io import open_binary

    suffixed, plain_name = packed["gz"]
    before = set(os.listdir("/proc/self/fd"))
    for _ in range(5):
        f = open_binary(str(plain_name))
        assert f.read(4) == HEART.read_bytes()[:4]
        f.close()
        f = open_binary(str(HEART))
        f.close()
    assert set(os.listdir("/proc/self/fd")) == before


# model files: a model kept compressed (``gzip model``) is read as the plain one, on a file or
# on standard input; damaged or endlessly expanding compressed data is one error, not a traceback
# or a full memory

def _small_models(tmp_path):
    """A binary, a multiclass and a kernel model trained on small data written here."""
    rng = np.random.default_rng(3)
    lines = []
    for i in range(60):
        label = i % 3
        lines.append(f"{label} 1:{rng.normal() + label:.4f} 2:{rng.normal() - label:.4f} 3:{rng.normal():.4f}")
    multi = tmp_path / "multi.svm"
    multi.write_text("\n".join(lines) + "\n")
    binary = tmp_path / "binary.svm"
    binary.write_text("\n".join(("+1" if ln[0] == "2" else "-1") + ln[1:] for ln in lines) + "\n")
    ok(run_pegasos("train", "-q", "-l", "0.1", binary, tmp_path / "binary.model"))
    ok(run_pegasos("train", "-q", "-l", "0.1", multi, tmp_path / "multi.model"))
    ok(run_pegasos("train", "-q", "-l", "0.1", "--kernel", "rbf", "--epochs", "2", binary,
                   tmp_path / "kernel.model"))
    return {"binary": binary, "multi": multi, "kernel": binary}


@pytest.mark.parametrize("ext", sorted(PACKERS))
def test_compressed_model_files_predict_as_the_plain_ones(tmp_path, ext):
    for kind, data in _small_models(tmp_path).items():
        plain = tmp_path / f"{kind}.model"
        want = ok(run_pegasos("predict", data, plain))
        packed_model = plain.read_bytes()
        suffixed = tmp_path / f"{kind}.model.{ext}"
        suffixed.write_bytes(PACKERS[ext](packed_model))
        unnamed = tmp_path / f"{kind}.model.bin"
        unnamed.write_bytes(PACKERS[ext](packed_model))
        for model in (suffixed, unnamed):
            assert ok(run_pegasos("predict", data, model)) == want, (kind, model)
        # standard input: the compressed bytes and the plain ones
        for stdin in (suffixed, plain):
            r = subprocess.run([pegasos_executable(), "predict", str(data), "-"],
                               stdin=open(stdin, "rb"), capture_output=True, timeout=300)
            assert r.returncode == 0 and r.stdout.decode() == want, (kind, stdin, r.stderr[-500:])


def test_plain_model_under_a_compression_suffix_is_read_as_text(tmp_path):
    # a plain model under a .gz name (written by an earlier version, or copied): reading chose gzip by
    # the suffix and failed
    data = _small_models(tmp_path)["binary"]
    want = ok(run_pegasos("predict", data, tmp_path / "binary.model"))
    for ext in sorted(PACKERS) + ["lzma"]:
        named = tmp_path / f"copied.model.{ext}"
        named.write_bytes((tmp_path / "binary.model").read_bytes())
        assert ok(run_pegasos("predict", data, named)) == want, ext


def test_train_writes_a_model_compressed_as_its_name_says(tmp_path):
    """``pegasos train d m.model.gz`` wrote plain text under the .gz name (numpy.savetxt, pandas and
    joblib compress by the suffix); now gzip, bzip2 and xz by .gz, .bz2, .xz, the same bytes from
    the same run (no time stamp), read back by every command; legacy .lzma, which has no signature,
    by its name."""
    from pegasos.modelfile import load_model

    data = _small_models(tmp_path)["binary"]
    plain = (tmp_path / "binary.model").read_bytes()
    want = ok(run_pegasos("predict", data, tmp_path / "binary.model"))
    unpack = {"gz": gzip.decompress, "bz2": bz2.decompress, "xz": lzma.decompress}
    for ext in sorted(PACKERS):
        named = tmp_path / f"written.model.{ext}"
        ok(run_pegasos("train", "-q", "-l", "0.1", data, named))
        first = named.read_bytes()
        assert not first.startswith(b"pegasos_model") and unpack[ext](first) == plain, ext
        ok(run_pegasos("train", "-q", "-l", "0.1", data, named))
        assert named.read_bytes() == first, ext                  # reproducible bytes
        assert ok(run_pegasos("predict", data, named)) == want, ext
        assert "objective" in ok(run_pegasos("objective", data, named))
        np.testing.assert_array_equal(load_model(str(named)).w, load_model(str(tmp_path / "binary.model")).w)
        resumed = tmp_path / f"resumed.model.{ext}"          # --init reads it, and writes compressed too
        ok(run_pegasos("train", "-q", "--init", named, data, resumed))
        assert unpack[ext](resumed.read_bytes()).startswith(b"pegasos_model")
    # legacy LZMA (no signature) is known by the name: written so, and read back (a plain model and one
    # of xz --format=lzma under that name too)
    legacy = tmp_path / "written.model.lzma"
    ok(run_pegasos("train", "-q", "-l", "0.1", data, legacy))
    assert lzma.decompress(legacy.read_bytes(), format=lzma.FORMAT_ALONE) == plain
    assert ok(run_pegasos("predict", data, legacy)) == want
    other = tmp_path / "other.model.lzma"
    other.write_bytes(lzma.compress(plain, format=lzma.FORMAT_ALONE, preset=9))
    assert ok(run_pegasos("predict", data, other)) == want


def test_compressed_model_loads_in_python(tmp_path):
    from pegasos.modelfile import load_model

    _small_models(tmp_path)
    plain = tmp_path / "binary.model"
    packed_model = tmp_path / "binary.model.gz"
    packed_model.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = load_model(str(plain)), load_model(str(packed_model))
    np.testing.assert_array_equal(a.w, b.w)
    assert a.bias == b.bias


def test_damaged_compressed_model_is_one_error(tmp_path):
    from conftest import error_line

    _small_models(tmp_path)
    data = tmp_path / "binary.svm"
    text = (tmp_path / "binary.model").read_bytes()
    for name, raw in (("cut.gz", gzip.compress(text)[:60]), ("cut.xz", lzma.compress(text)[:80]),
                      ("cut.bz2", bz2.compress(text)[:70]), ("junk.gz", b"\x1f\x8b" + b"junk" * 40),
                      ("junk.bz2", b"BZh9" + b"junk" * 40)):
        path = tmp_path / name
        path.write_bytes(raw)
        error_line(run_pegasos("predict", data, path, tmp_path / "out"), file=path, status=1)
        assert not (tmp_path / "out").exists()


def test_model_that_decompresses_without_end_is_refused(tmp_path):
    from pegasos.errors import ModelFormatError
    from pegasos.model import read_model_bytes

    path = tmp_path / "bomb.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(b"pegasos_model 1\n")
        block = b"1 0\n" * (1 << 18)
        for _ in range(64):                 # 64 MiB of weight lines from well under 1 MiB of file
            f.write(block)
    assert path.stat().st_size < 1 << 20
    import pegasos.model as model

    saved = model.COMPRESSED_MODEL_SHARE
    try:
        from pegasos.data import memory_limit

        model.COMPRESSED_MODEL_SHARE = (16 << 20) / memory_limit()     # allow 16 MiB here
        with pytest.raises(ModelFormatError, match=r"bomb\.gz: decompresses to more than 16 MiB"):
            read_model_bytes(str(path))
    finally:
        model.COMPRESSED_MODEL_SHARE = saved
    assert len(read_model_bytes(str(path))) == 16 + 64 * (1 << 20)    # the real share holds it


# what may follow a compressed stream: another stream of the same format (cat a.gz b.gz) and NUL
# padding, for all three formats; anything else is an error naming its byte offset.  bzip2 and xz
# data followed by text were read as if whole, while gzip refused it; xz's NUL stream padding was
# refused as "ended before the end-of-stream marker"

@pytest.mark.parametrize("ext", sorted(PACKERS))
def test_concatenated_streams_and_nul_padding_are_read(tmp_path, ext):
    from pegasos.io import read_svmlight

    raw = HEART.read_bytes()
    half = raw.index(b"\n", len(raw) // 2) + 1
    pack = PACKERS[ext]
    for name, blob in (("two", pack(raw[:half]) + pack(raw[half:])),
                       ("padded", pack(raw) + b"\0" * 8),
                       ("between", pack(raw[:half]) + b"\0" * 4 + pack(raw[half:]) + b"\0" * 12),
                       ("odd", pack(raw) + b"\0" * 3)):
        path = tmp_path / f"{name}.{ext}"
        path.write_bytes(blob)
        same_data(read_svmlight(str(path)), read_svmlight(str(HEART)))
        unnamed = tmp_path / f"{name}_{ext}.svm"
        unnamed.write_bytes(blob)
        same_data(read_svmlight(str(unnamed), threads=2), read_svmlight(str(HEART)))


@pytest.mark.parametrize("ext", sorted(PACKERS))
@pytest.mark.parametrize("tail", [b"garbage", b"\n", b"\0\0\0\x01", PACKERS["gz"](b"+1 1:1\n")])
def test_bytes_after_a_stream_are_an_error(tmp_path, ext, tail):
    from pegasos.errors import DataError
    from pegasos.io import read_svmlight

    if ext == "gz" and tail[:2] == b"\x1f\x8b":
        tail = PACKERS["bz2"](b"+1 1:1\n")            # another format's stream: not more gzip data
    blob = PACKERS[ext](HEART.read_bytes())
    at = len(blob) + len(tail) - len(tail.lstrip(b"\0"))
    path = tmp_path / f"d.{ext}"
    path.write_bytes(blob + tail)
    kind = {"gz": "gzip", "bz2": "bzip2", "xz": "xz"}[ext]
    with pytest.raises(DataError, match=rf"d\.{ext}: cannot read or decompress: bytes after the end of the "
                                        rf"{kind} data, at byte {at}, are not {kind} data"):
        read_svmlight(str(path))
    r = run_pegasos("train", "-q", path, tmp_path / "m")
    assert r.returncode == 1 and "Traceback" not in r.stderr and f"at byte {at}" in r.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("ext", sorted(PACKERS))
def test_model_with_bytes_after_its_stream_and_padding(tmp_path, ext):
    from conftest import error_line

    data = _small_models(tmp_path)["binary"]
    text = (tmp_path / "binary.model").read_bytes()
    want = ok(run_pegasos("predict", data, tmp_path / "binary.model"))
    padded = tmp_path / f"padded.{ext}"
    padded.write_bytes(PACKERS[ext](text) + b"\0" * 8)
    assert ok(run_pegasos("predict", data, padded)) == want
    junk = tmp_path / f"junk.{ext}"
    junk.write_bytes(PACKERS[ext](text) + b"appended text\n")
    msg = error_line(run_pegasos("predict", data, junk, tmp_path / "out"), file=junk, status=1)
    assert "cannot decompress the model: bytes after the end of the" in msg
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("ext", sorted(PACKERS))
def test_damaged_compressed_model_is_named_so_not_foreign(tmp_path, ext):
    """A changed byte of bzip2 data decodes to garbage before the block's checksum is reached: the
    first-line check said 'not a pegasos model file (first line is ...)'."""
    from conftest import error_line

    rng = np.random.default_rng(5)          # a model of 3000 weights: its first line is read before the end
    data = tmp_path / "wide.svm"            # of the first compressed block, where bzip2 checks it
    data.write_text("".join(f"{1 if i % 2 else -1} " + " ".join(f"{j}:{rng.random():.3f}" for j in
                                                               sorted(rng.choice(3000, 40, replace=False) + 1))
                            + "\n" for i in range(200)))
    ok(run_pegasos("train", "-q", "-l", "0.1", data, tmp_path / "wide.model"))
    blob = bytearray(PACKERS[ext]((tmp_path / "wide.model").read_bytes()))
    header = {"gz": 10, "bz2": 10, "xz": 24}[ext]
    for at in range(header, len(blob) - 12, max(1, (len(blob) - header) // 6)):
        damaged = bytearray(blob)
        damaged[at] ^= 0x24
        path = tmp_path / f"damaged.{ext}"
        path.write_bytes(bytes(damaged))
        r = run_pegasos("predict", data, path, tmp_path / "out")
        if r.returncode == 0:                  # a change the format cannot see (none of these three)
            raise AssertionError(f"byte {at} changed and the model was read")
        msg = error_line(r, file=path, status=1)
        assert "cannot decompress the model" in msg, (at, msg)
        assert not (tmp_path / "out").exists()


def test_empty_file_named_gz_is_empty_data(tmp_path):
    from pegasos.io import read_svmlight

    path = tmp_path / "empty.gz"
    path.write_bytes(b"")
    assert read_svmlight(str(path)).n_examples == 0


@pytest.mark.parametrize("outer", sorted(PACKERS))
@pytest.mark.parametrize("inner", sorted(PACKERS))
def test_data_compressed_twice_are_named_so(tmp_path, outer, inner):
    from pegasos.errors import DataError
    from pegasos.io import read_svmlight

    kind = {"gz": "gzip", "bz2": "bzip2", "xz": "xz"}[inner]
    path = tmp_path / f"twice.{outer}"
    path.write_bytes(PACKERS[outer](PACKERS[inner](b"+1 1:0.5\n-1 2:1\n")))
    # (which error the inner bytes make depends on them: gzip's carry a time stamp; most hold a NUL byte)
    with pytest.raises(DataError, match=rf"twice\.{outer}(, line 1)?: .* \(the data start as {kind} "
                                        r"data do: were they compressed twice\?\)"):
        read_svmlight(str(path))
    r = subprocess.run([pegasos_executable(), "train", "-l", "1e-4", "-", "m"], input=path.read_bytes(),
                       capture_output=True, cwd=tmp_path, timeout=600)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 1 and "were they compressed twice?" in err and "Traceback" not in err, err
    assert not (tmp_path / "m").exists()


def test_the_start_of_a_signature_alone_is_named_so(tmp_path):
    from pegasos.errors import DataError
    from pegasos.io import read_svmlight

    cases = [(b"\x1f", "gzip")] + [(b"\xfd7zXZ\x00"[:n], "xz") for n in range(1, 6)]
    for head, kind in cases:
        for tail in (b"", b"\n", b" 1:1\n"):
            path = tmp_path / "short"
            path.write_bytes(head + tail)
            with pytest.raises(DataError, match=rf"line 1: .*\(the data hold only the start of {kind}'s "
                                                r"signature: a compressed file cut short\?\)"):
                read_svmlight(str(path))


def test_text_that_only_looks_like_a_signature_gets_no_compression_hint(tmp_path):
    from pegasos.errors import DataError
    from pegasos.io import read_svmlight

    # "B" and "BZ" begin bzip2's signature but are text; a signature after line 1 is not the data's start
    for text in (b"B 1:1\n", b"BZ 1:1\n", b"bad 1:1\n", b"+1 1:1\n" + gzip.compress(b"+1 1:1\n")):
        path = tmp_path / "d"
        path.write_bytes(text)
        with pytest.raises(DataError) as e:
            read_svmlight(str(path))
        assert "compressed" not in str(e.value) and "signature" not in str(e.value), (text, str(e.value))
