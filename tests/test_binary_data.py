"""Binary data given as a data or model file: every reader stops at the first NUL byte with one printable
line naming the byte, after a bounded read, and no message prints raw bytes.

Before, 300 MB of NUL bytes was held as one unfinished line (1.08 GB peak) and reported as a line
longer than 256 MiB, and random bytes were echoed to the terminal."""

import gzip
import random
import tracemalloc

import pytest

import pegasos
from pegasos.errors import DataError, ModelFormatError
from pegasos.io import iter_svmlight, line_ranges, read_svmlight, read_svmlight_range
from pegasos.stream import load_cached, scan

from conftest import one_error, run_pegasos

GOOD = b"+1 1:1 3:0.5\n-1 2:1\n"

CASES = {                                   # bytes, offset of the first NUL
    "at_start": (b"\0" + GOOD, 0),
    "in_a_label": (b"+1 1:1\n-\0 2:1\n", 8),
    "in_a_value": (b"+1 1:1\n-1 2:1\0\0 3:1\n", 13),
    "after_a_valid_line": (GOOD + b"\0" * 100, len(GOOD)),
    "after_the_last_newline_only": (GOOD + b"\0", len(GOOD)),
    "after_a_byte_order_mark": (b"\xef\xbb\xbf+1 1:1\n\0", 10),
    "random_bytes": None,
}


def _case(name):
    if name == "random_bytes":
        rng = random.Random(7)
        data = bytes(rng.randrange(1, 256) for _ in range(500)) + b"\0" + bytes(rng.randrange(256) for _ in range(500))
        return data, 500
    return CASES[name]


READERS = {
    "read_svmlight": lambda p: read_svmlight(p),
    "read_svmlight_threads": lambda p: read_svmlight(p, threads=2),
    "iter_svmlight": lambda p: list(iter_svmlight(p)),
    "stream_scan": lambda p: scan(p),
    "cache": lambda p: load_cached(p, p + ".cache"),
    "range": lambda p: [read_svmlight_range(p, a, b) for a, b in line_ranges(p, 1)],
    "gzip": None,
}


def _check_message(text, offset):
    assert f"binary data at byte {offset} " in text, text
    assert "\n" not in text and text.isprintable(), repr(text)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", CASES)
def test_every_reader_stops_at_the_first_nul(tmp_path, reader, case):
    data, offset = _case(case)
    f = tmp_path / "d.svm"
    if reader == "gzip":
        f = tmp_path / "d.svm.gz"
        f.write_bytes(gzip.compress(data))
        call = READERS["read_svmlight"]
    else:
        f.write_bytes(data)
        call = READERS[reader]
    with pytest.raises(DataError) as e:
        call(str(f))
    _check_message(str(e.value), offset)
    assert e.value.line is None


@pytest.mark.parametrize("threads", [1, 2])
def test_a_file_of_nul_bytes_is_not_read_whole(tmp_path, threads):
    f = tmp_path / "zeros.svm"
    f.write_bytes(b"+1 1:1\n" + b"\0" * (48 << 20))
    seen = []
    tracemalloc.start()
    try:
        with pytest.raises(DataError, match="binary data at byte 7 "):
            read_svmlight(str(f), threads=threads, block_size=1 << 16, progress=seen.append)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak / 2**20:.1f} MiB allocated at the peak"
    if threads == 1:
        assert sum(seen) <= 2 << 16


def _model(tmp_path):
    f = tmp_path / "d.svm"
    f.write_bytes(GOOD)
    model = pegasos.train(*pegasos.load_svmlight(str(f)), epochs=1)
    model.save(str(tmp_path / "m.model"))
    return (tmp_path / "m.model").read_bytes()


@pytest.mark.parametrize("where", ["first_byte", "first_line", "second_line", "after_the_head"])
def test_the_model_loader_stops_at_the_first_nul(tmp_path, where):
    text = _model(tmp_path)
    at = {"first_byte": 0, "first_line": 5, "second_line": text.index(b"\n") + 3,
          "after_the_head": len(text) - 2}[where]
    if where == "after_the_head":
        text = text + b"#" * (1 << 17)
        at = len(text) - 5
    f = tmp_path / "z.model"
    f.write_bytes(text[:at] + b"\0" + text[at:])
    with pytest.raises(ModelFormatError) as e:
        pegasos.load_model(str(f))
    _check_message(str(e.value), at)


@pytest.mark.parametrize("token", [b"\xff\xfe\x1b[31mred", b"\xe2\x80\xae1", b"a\x85b", b"x'\\y", b"\x7f\x08"])
def test_tokens_in_messages_are_escaped(tmp_path, token):
    f = tmp_path / "d.svm"
    f.write_bytes(b"+1 1:1\n" + token + b" 2:1\n")
    with pytest.raises(DataError) as e:
        read_svmlight(str(f))
    text = str(e.value)
    assert "line 2" in text and text.isprintable() and "\x1b" not in text, repr(text)
    assert "\ufffd" not in text, repr(text)              # bytes that are not UTF-8 are shown, not replaced
    if token.startswith(b"\xff"):
        assert "'\\xff\\xfe\\x1b[31mred'" in text, text


def test_random_bytes_without_nul_give_a_short_printable_message(tmp_path):
    rng = random.Random(3)
    f = tmp_path / "r.svm"
    f.write_bytes(bytes(rng.randrange(1, 256) for _ in range(5000)))
    r = run_pegasos("train", "-q", f, tmp_path / "m")
    msg = one_error(r, str(f))
    assert msg.isprintable() and len(msg) < 400 and "\ufffd" not in msg, repr(msg)


@pytest.mark.parametrize("options", [[], ["--stream"], ["--stream", "--cache", "{tmp}/c"], ["--split", "2"]])
def test_the_command_line_on_binary_data(tmp_path, options):
    f = tmp_path / "b.svm"
    f.write_bytes(GOOD + b"\0\x1b[2J" + bytes(range(256)))
    args = [a.format(tmp=tmp_path) for a in options]
    command = "train-shards" if "--split" in args else "train"
    msg = one_error(run_pegasos(command, "-q", *args, f, tmp_path / "m"), "binary data at byte 20 ")
    assert msg.isprintable()
    assert not (tmp_path / "m").exists()


def test_the_command_line_on_a_binary_model_and_test_file(tmp_path):
    text = _model(tmp_path)
    (tmp_path / "z.model").write_bytes(text[:30] + b"\0\x1b[2J" + text[30:])
    d = tmp_path / "d.svm"
    one_error(run_pegasos("predict", d, tmp_path / "z.model"), "binary data at byte 30 ")
    (tmp_path / "t.svm").write_bytes(b"+1 1:1\n\0")
    for command in ("predict", "eval"):
        one_error(run_pegasos(command, tmp_path / "t.svm", tmp_path / "m.model"), "binary data at byte 7 ")


@pytest.mark.parametrize("seed", range(4))
def test_random_bytes_with_carriage_returns_are_not_called_cr_only_text(tmp_path, seed):
    rng = random.Random(seed)
    f = tmp_path / "r.svm"
    f.write_bytes(bytes(rng.choice([b for b in range(1, 256) if b != 10]) for _ in range(2000)) + b"\r\n")
    with pytest.raises(DataError) as e:
        read_svmlight(str(f))
    text = str(e.value)
    assert "CR-only" not in text and "binary data" in text and text.isprintable(), text
    mac = tmp_path / "mac.svm"
    mac.write_bytes(b"+1 1:1\r-1 2:1\r")
    with pytest.raises(DataError, match="CR-only line ends"):
        read_svmlight(str(mac))
