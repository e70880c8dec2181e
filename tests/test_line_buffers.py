"""The reader's buffers of whole lines from a plain file (``readinto`` into one
reused buffer) hold exactly the text the block-by-block path gives: the same
bytes, cut only after a newline, a UTF-8 byte-order mark dropped at the start,
a final line without newline completed, lines longer than a block, the same
error for a line over the limit; and one buffer is reused for short lines."""

import io as pyio

import pytest

from pegasos import io
from pegasos.errors import DataError

CASES = {
    "plain": b"+1 1:1 3:2\n-1 2:0.5\n" * 50,
    "no final newline": b"1 1:1\n2 2:2\n3 3:3",
    "bom": io.UTF8_BOM + b"1 1:1\n-1 2:1\n",
    "bom only": io.UTF8_BOM,
    "long lines": b"1 " + b" ".join(b"%d:1" % j for j in range(1, 400)) + b"\n-1 5:1\n" * 3,
    "blank and comments": b"\n\n# c\n1 1:1 # x\n\n",
    "crlf": b"1 1:1\r\n-1 2:1\r\n",
    "empty": b"",
}


def old_path(data, block):
    """The block-by-block buffers (the path decompressed streams take)."""
    f = pyio.BytesIO(data)
    return [bytes(b) for b in io._cut_lines(iter(lambda: f.read(block), None), "x", None)]


def new_path(path, block):
    with open(path, "rb") as f:
        return [bytes(b) for b in io._whole_lines(f, str(path), block)]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 4096])
def test_same_text_as_the_block_path(tmp_path, name, block):
    path = tmp_path / "f.svm"
    path.write_bytes(CASES[name])
    got = new_path(path, block)
    assert all(b.endswith(b"\n") for b in got)
    assert b"".join(got) == b"".join(old_path(CASES[name], block))
    text = CASES[name][len(io.UTF8_BOM):] if CASES[name].startswith(io.UTF8_BOM) else CASES[name]
    assert b"".join(got) == (text + b"\n" if text and not text.endswith(b"\n") else text)


def test_byte_range_reads_its_bytes_only(tmp_path):
    data = CASES["plain"]
    path = tmp_path / "f.svm"
    path.write_bytes(data)
    start = data.index(b"\n", 100) + 1
    end = data.index(b"\n", 500) + 1
    stream = io._Range(str(path), start, end)
    try:
        got = b"".join(bytes(b) for b in io._whole_lines(stream, "x", 16))
    finally:
        stream.close()
    assert got == data[start:end]


@pytest.mark.parametrize("block", [4, 8])
def test_line_over_the_limit_is_the_same_error(tmp_path, monkeypatch, block):
    monkeypatch.setenv("PEGASOS_MAX_LINE_BYTES", "20")
    data = b"1 1:1\n" + b"1 2:1\r3:1 " + b"4:1 " * 10 + b"\n"
    path = tmp_path / "f.svm"
    path.write_bytes(data)
    with pytest.raises(DataError) as new:
        new_path(path, block)
    with pytest.raises(DataError) as old:
        old_path(data, block)
    assert str(new.value).replace(str(path), "x") == str(old.value)
    assert "starting at byte 6" in str(old.value) and "carriage returns" in str(old.value)


def test_one_buffer_is_reused(tmp_path):
    path = tmp_path / "f.svm"
    path.write_bytes(CASES["plain"] * 20)
    owners = set()
    with open(path, "rb") as f:
        for view in io._whole_lines(f, str(path), 64):
            owners.add(id(view.obj))
    assert len(owners) == 1
