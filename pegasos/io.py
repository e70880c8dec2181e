"""Reading SVMlight / LIBSVM sparse text files.

Files may be plain, gzip, bzip2 or xz compressed, or ``-`` for standard input.
Compression is recognised by the first bytes of the data (gzip ``1f 8b``,
bzip2 ``BZh``, xz ``fd 37 7a 58 5a 00``), whatever the name, for files and
standard input alike; without one of these, the suffixes ``.gz``, ``.bz2``,
``.xz`` and ``.lzma`` (legacy LZMA, which has no such signature) still choose
the decompressor, so a damaged compressed file is reported as such.  Text is read in
blocks of bounded size (``BLOCK_SIZE`` bytes plus at most one line) and parsed
by the compiled :class:`pegasos._svmlight.Parser`; only CSR arrays are kept.

Two ways in:

* :func:`read_svmlight` / :func:`load_svmlight` load a whole file;
* :func:`iter_svmlight` yields it as CSR chunks, so that prediction and
  evaluation use memory that does not grow with the number of examples.
"""

from __future__ import annotations

import bz2
import io
import lzma
import os
import queue
import re
import sys
import threading
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import DataError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import TypeAlias

    from numpy.typing import ArrayLike, DTypeLike, NDArray
    from scipy.sparse import csr_matrix, sparray, spmatrix

    #: Examples (one per row, shape (m, d)) as the models and trainers take them: a scipy.sparse
    #: matrix or array, a dense array-like, a Chunk or an SVMLightData.
    Matrix: TypeAlias = "ArrayLike | spmatrix | sparray | Chunk | SVMLightData"

BLOCK_SIZE = 4 << 20          # bytes of text handed to the parser at a time
MAX_LINE_BYTES = 256 << 20    # longest line held while looking for its end (PEGASOS_MAX_LINE_BYTES)
POPULATE_AHEAD = 16 << 20     # bytes of each array faulted in ahead of the parse (read_svmlight's threads)
UTF8_BOM = b"\xef\xbb\xbf"      # skipped at the start of a file

# the compressed formats: their signature (first bytes of a stream; legacy LZMA has none) and decompressor
_FORMATS = {
    "gzip": (b"\x1f\x8b", lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)),
    "bzip2": (b"BZh", bz2.BZ2Decompressor),
    "xz": (b"\xfd7zXZ\x00", lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ)),
    "lzma": (None, lambda: lzma.LZMADecompressor(lzma.FORMAT_ALONE)),
}
_SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".lzma": "lzma"}
_MAGIC = tuple((magic, kind) for kind, (magic, _) in _FORMATS.items() if magic)
_MAGIC_LEN = max(len(m) for m, _ in _MAGIC)
_COMPRESSED_PIECE = 1 << 18   # bytes of compressed input handed to a decompressor at a time


def compression_by_name(path):
    """The compressed format a file name asks for by its suffix: ``"gzip"`` (.gz), ``"bzip2"`` (.bz2),
    ``"xz"`` (.xz), ``"lzma"`` (.lzma, legacy LZMA) or None (any other name, and ``-``)."""
    if path is None or path == "-":
        return None
    return _SUFFIXES.get(os.path.splitext(os.fspath(path))[1].lower())


def compress(data, kind):
    """``data`` (bytes) compressed as one stream of format ``kind`` (see :func:`compression_by_name`),
    at a fast level (gzip 1, bzip2 9, xz 0) and with no time stamp (gzip), so the same bytes give the
    same file.  Measured on a 107 MiB model (sector one-vs-rest): gzip 1 gives 35 MiB in 1.3 s (level 6:
    31 MiB, 5.5 s), bzip2 29 MiB in 13 s (level 1: 9 s), xz 0 30 MiB in 7.7 s (xz's own default, 6:
    23 MiB in 157 s)."""
    if kind == "gzip":
        import gzip

        return gzip.compress(data, compresslevel=1, mtime=0)
    if kind == "bzip2":
        return bz2.compress(data, 9)
    if kind in ("xz", "lzma"):
        return lzma.compress(data, format=lzma.FORMAT_XZ if kind == "xz" else lzma.FORMAT_ALONE, preset=0)
    raise ValueError(f"unknown compressed format {kind!r}")


class CompressedDataError(OSError):
    """Compressed input that is damaged, cut short, or followed by bytes that are no stream."""


@dataclass
class Chunk:
    """Rows of an SVMlight file as CSR arrays.

    Attributes
    ----------
    labels : ndarray of shape (m,), float64
        Labels as written in the file (not yet mapped to -1/+1).
    indptr : ndarray of shape (m + 1,), int64
    indices : ndarray of shape (nnz,), int32
        Zero-based column of each stored value (sorted within a row).
    data : ndarray of shape (nnz,), float64 or float32
        Non-zero values (explicit zeros in the file are not stored).
    first_row : int
        Position of the chunk's first row in the file (0-based example count).
    qid : ndarray of shape (m,), int64, or None
        The ``qid:`` of each row (-1 when absent, -2 when not an integer
        below 10^18).
    """

    labels: NDArray[np.float64]
    indptr: NDArray[np.int64]
    indices: NDArray[np.int32]
    data: NDArray[np.floating]
    first_row: int = 0
    qid: NDArray[np.int64] | None = None

    @property
    def n_rows(self) -> int:
        return self.labels.shape[0]

    def matrix(self, n_features: int | None = None) -> csr_matrix:
        """The chunk as a ``scipy.sparse.csr_matrix`` (no copy of the arrays)."""
        from scipy.sparse import csr_matrix

        n = int(self.indices.max()) + 1 if self.indices.size else 0
        if n_features is not None:
            n = max(n, int(n_features))
        return csr_matrix((self.data, self.indices, self.indptr), shape=(self.n_rows, n), copy=False)


@dataclass
class LabelInfo:
    """A distinct label value with its first line and its spelling in the file."""

    value: float
    line: int
    text: str


@dataclass
class SVMLightData:
    """A whole SVMlight file in memory.

    Attributes
    ----------
    path : str
        The file name as given (``-`` for standard input).
    chunk : Chunk
        All rows.
    n_features : int
        1 + the largest zero-based column index in the file (explicit zeros
        count), or the requested ``n_features`` if that is larger.
    distinct_labels : list of LabelInfo
        Distinct labels in order of first appearance (at most 64 recorded).
    labels_overflow : bool
        More than 64 distinct labels were seen.
    n_lines : int
        Lines read, counting blank and comment lines.
    """

    path: str
    chunk: Chunk
    n_features: int
    distinct_labels: list[LabelInfo] = field(default_factory=list)
    labels_overflow: bool = False
    n_lines: int = 0
    zero_based: bool = False

    @property
    def X(self) -> csr_matrix:
        return self.chunk.matrix(self.n_features)

    @property
    def y(self) -> NDArray[np.float64]:
        return self.chunk.labels

    @property
    def n_examples(self) -> int:
        return self.chunk.n_rows

    @property
    def nnz(self) -> int:
        return int(self.chunk.indices.shape[0])


def open_binary(path, plain_start=None, what=None):
    """Open ``path`` for reading bytes, decompressing it if it is compressed;
    ``-`` is standard input.

    ``plain_start``: the first bytes of the plain format (a model file's
    ``pegasos_model``), for files whose plain form is known.  Then only the
    first bytes tell gzip, bzip2 and xz (a plain model named ``.gz`` is read
    as text), and ``.lzma``, which has no signature, is legacy LZMA unless
    the file starts (after a UTF-8 byte-order mark) as the plain form does.

    gzip, bzip2 and xz data are recognised by their first bytes (see the
    module docstring), so a compressed file needs no suffix and compressed
    data can be piped into standard input.  The returned reader's ``close``
    closes what this function opened, never standard input.

    ``what``: the kind of file for the messages (``"model"``: "no such model
    file", "cannot read model: ..."); None for a data file.

    Raises
    ------
    DataError
        If the file does not exist, is a directory, or cannot be read.
    """
    def problem(text):
        if what is None:
            return text
        return {"no such file": f"no such {what} file",
                "is a directory, not a data file": f"cannot read {what}: it is a directory"}.get(
                    text, f"cannot read {what}: {text}")

    try:
        if path == "-":
            base, owned = sys.stdin.buffer, ()
        else:
            if os.path.isdir(path):
                raise DataError(path, problem("is a directory, not a data file"))
            base = open(path, "rb")
            owned = (base,)
        try:
            start = base.tell() if path != "-" and base.seekable() else None
            head = base.read(_MAGIC_LEN)
            if start is not None:
                base.seek(start)                    # a regular file: read it again from the start
            elif path != "-" or head:
                base = _Stream(base, head, owned)   # a pipe: hand back the bytes peeked at
                owned = (base,)
        except BaseException:
            for f in owned:
                f.close()
            raise
    except FileNotFoundError:
        raise DataError(path, problem("no such file")) from None
    except PermissionError:
        raise DataError(path, problem("permission denied")) from None
    except OSError as e:
        raise DataError(path, problem(f"cannot open: {e.strerror or e}")) from None
    kind = next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)
    if kind is None:
        kind = compression_by_name(path)
        if kind is not None and plain_start is not None:
            text = head[len(UTF8_BOM):] if head.startswith(UTF8_BOM) else head
            if _FORMATS[kind][0] is not None or plain_start.startswith(text) or text.startswith(plain_start):
                kind = None
    if kind is None:
        return base
    return _Decompressed(base, kind, owned)


class _Stream(io.RawIOBase):
    """A byte reader returning ``head`` and then what ``source`` reads; closing
    it closes the files in ``owned`` (in order), never anything else."""

    decompressing = False       # True when reads run a decompressor (worth reading ahead)

    def __init__(self, source, head=b"", owned=()):
        super().__init__()
        self._source, self._head, self._owned = source, bytes(head), tuple(owned)

    def readable(self):
        return True

    def read(self, size=-1):
        if self._head:
            if size is None or size < 0:
                data, self._head = self._head + self._source.read(), b""
                return data
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._source.read(-1 if size is None else size)

    def readinto(self, buffer):
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def close(self):
        if self.closed:
            return
        try:
            for f in self._owned:
                f.close()
        finally:
            super().close()


class _Decompressed(_Stream):
    """The decompressed bytes of ``source``, data in the compressed format ``kind``
    (a key of ``_FORMATS``); closing it closes the files in ``owned``.

    A file may hold several streams one after the other (``cat a.gz b.gz``), as
    each format allows, and NUL bytes after or between them (padding); anything
    else after a stream, a stream cut short, and damaged data (a checksum that
    differs) raise :class:`CompressedDataError` naming the byte offset or the
    problem, for the three formats alike.  ``read(n)`` returns n bytes but at
    the end.
    """

    decompressing = True        # reads run a decompressor (worth reading ahead)

    def __init__(self, source, kind, owned=()):
        super().__init__(source, b"", owned)
        self._kind = kind
        self._magic, self._factory = _FORMATS[kind]
        self._decompressor = self._factory()
        self._zlib = kind == "gzip"     # zlib keeps no input: what it did not take is its unconsumed_tail
        self._input = b""           # compressed bytes read and not yet given to the decompressor
        self._offset = 0            # compressed bytes read from source so far
        self._ended = False

    def read(self, size=-1):
        if size is None or size < 0:
            size = 1 << 62
        parts, got = [], 0
        while got < size and not self._ended:
            part = self._some(min(size - got, 1 << 24))
            parts.append(part)
            got += len(part)
        return b"".join(parts)

    def _take(self):
        piece = self._source.read(_COMPRESSED_PIECE)
        self._offset += len(piece)
        return piece

    def _some(self, size):
        """Up to ``size`` decompressed bytes (none only when the last stream has ended)."""
        d = self._decompressor
        while True:
            if d.eof:
                self._next_stream(d.unused_data + self._input)
                if self._ended:
                    return b""
                d = self._decompressor
            if not self._input and (self._zlib or d.needs_input):
                self._input = self._take()
                if not self._input and self._offset == 0:      # an empty file (named .gz): no data at all
                    self._ended = True
                    return b""
                if not self._input:
                    raise CompressedDataError(f"the {self._kind} data end before their stream does (the file is "
                                              "cut short)")
            data, self._input = self._input, b""
            try:
                out = d.decompress(data, size)
            except (OSError, EOFError, lzma.LZMAError, zlib.error) as e:
                raise CompressedDataError(f"damaged {self._kind} data ({e})") from None
            if self._zlib:
                self._input = d.unconsumed_tail
            if out:
                return out

    def _next_stream(self, rest):
        """After a stream's end: start the next one in ``rest`` (+ what follows it), skip NUL padding,
        or end; anything else is an error naming its byte offset in the compressed file."""
        while True:
            stripped = rest.lstrip(b"\0")
            if stripped:
                break
            rest = self._take()
            if not rest:
                self._ended = True
                return
        rest = stripped
        while self._magic and len(rest) < len(self._magic):
            more = self._take()
            if not more:
                break
            rest += more
        if self._magic is None or not rest.startswith(self._magic):
            at = self._offset - len(rest)
            raise CompressedDataError(f"bytes after the end of the {self._kind} data, at byte {at}, are not "
                                      f"{self._kind} data (the file is damaged or has something appended)")
        self._decompressor, self._input = self._factory(), rest


def is_plain_text_file(path):
    """True if ``path`` is a regular file that is read as it is: not standard
    input, no compression suffix and no compression signature in its first
    bytes.  Only such a file can be cut into byte ranges (shards),
    sized for its buffers from its length, or given a byte-count progress bar.

    Parameters
    ----------
    path : str

    Returns
    -------
    bool
    """
    if compression_by_name(path) is not None or path == "-":
        return False
    try:
        if not os.path.isfile(path):            # a FIFO or device must not be read here
            return False
        with open(path, "rb") as f:
            head = f.read(_MAGIC_LEN)
    except OSError:
        return False
    return not any(head.startswith(magic) for magic, _ in _MAGIC)


def _read_ahead(stream, block_size, depth=2):
    """Yield ``stream.read(block_size)`` results (the last one empty), read by a
    background thread up to ``depth`` blocks ahead.

    The decompressors (zlib, bz2, lzma) and the parser both release the GIL,
    so decompressing the next block overlaps parsing this one instead of
    following it.  An exception raised by ``read`` is raised here, in order.
    Closing the generator stops the thread before it returns, so the caller
    may then close ``stream``.
    """
    blocks = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def work():
        while not stop.is_set():
            try:
                block = stream.read(block_size)
            except BaseException as e:          # handed to the reader, in order
                block = e
            while not stop.is_set():
                try:
                    blocks.put(block, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if not isinstance(block, (bytes, bytearray)) or not block:
                return

    worker = threading.Thread(target=work, name="pegasos-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            block = blocks.get()
            if isinstance(block, BaseException):
                raise block
            yield block
            if not block:
                return
    finally:
        stop.set()
        worker.join()


def _whole_lines(stream, path, block_size, on_bytes=None):
    """Yield buffers of whole lines (each ending in b'\\n') read from ``stream``
    (read ahead in a thread when it decompresses); a UTF-8 byte-order mark at
    the start of the file is skipped."""
    if isinstance(stream, (io.BufferedReader, _Range)):
        yield from _lines_into(stream, path, block_size, on_bytes, getattr(stream, "range_start", 0) == 0)
        return
    ahead = _read_ahead(stream, block_size) if getattr(stream, "decompressing", False) else None
    try:
        yield from _cut_lines(ahead if ahead is not None else iter(lambda: stream.read(block_size), None),
                              path, on_bytes, at_start=getattr(stream, "range_start", 0) == 0)
    finally:
        if ahead is not None:
            ahead.close()


def max_line_bytes():
    """The longest line (bytes) the reader holds while looking for its end:
    ``PEGASOS_MAX_LINE_BYTES`` if set (a positive integer), else 256 MiB.

    Raises
    ------
    ParameterError
        The variable is set to something else.
    """
    value = os.environ.get("PEGASOS_MAX_LINE_BYTES")
    if value is None:
        return MAX_LINE_BYTES
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n <= 0:
        from .errors import ParameterError
        raise ParameterError(f"PEGASOS_MAX_LINE_BYTES must be a positive number of bytes, got {value!r}")
    return n


def _next_block(blocks, path):
    try:
        return next(blocks)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as e:
        raise DataError(path, f"cannot read or decompress: {e}") from None


def _cut_lines(blocks, path, on_bytes, at_start=True):
    """Whole-line buffers from an iterator of blocks (the last one empty).

    A line longer than :func:`max_line_bytes` is a DataError (so that a file
    without newlines is not held whole); ``at_start``: the blocks start at the
    beginning of the file, where a UTF-8 byte-order mark is dropped.
    """
    limit = max_line_bytes()
    tail = bytearray()      # the unfinished line, grown in place until its end arrives
    line_start = 0          # byte offset of the unfinished line in the text
    offset = 0              # bytes of text before ``block``
    at_first = at_start     # the file's first block of text is next
    while True:
        block = _next_block(blocks, path)
        if at_start and block:
            while len(block) < len(UTF8_BOM) and UTF8_BOM.startswith(block):
                more = _next_block(blocks, path)
                if not more:
                    break
                block += more
            at_start = False
            if block.startswith(UTF8_BOM):
                if on_bytes is not None:
                    on_bytes(len(UTF8_BOM))
                block = block[len(UTF8_BOM):]
                offset = line_start = len(UTF8_BOM)
                if not block:
                    continue
        if not block:
            if tail:
                tail += b"\n"
                yield memoryview(tail)
            return
        if on_bytes is not None:
            on_bytes(len(block))
        nul = block.find(b"\0")
        if nul >= 0:
            raise DataError(path, binary_data(offset + nul, block if at_first else b""))
        cut = block.rfind(b"\n")
        first_end = cut if cut < 0 else block.find(b"\n")
        if len(tail) + (len(block) if cut < 0 else first_end) > limit:
            _too_long(path, limit, line_start, tail, block)
        offset += len(block)
        at_first = False
        if cut < 0:
            tail += block
            continue
        if tail:
            tail += block
            buf = tail
            cut += len(buf) - len(block)
        else:
            buf = block
        yield memoryview(buf)[: cut + 1]
        tail = bytearray(memoryview(buf)[cut + 1:])
        line_start = offset - len(tail)


def _lines_into(stream, path, block_size, on_bytes, at_start):
    """:func:`_cut_lines` for a file read with ``readinto``: the same buffers of
    whole lines, read into one reused buffer (the unfinished line moved to its
    front), so that reading a file faults in the pages of one block instead
    of those of every block and of a copy of each.  Each buffer yielded is
    valid until the next one is asked for."""
    limit = max_line_bytes()
    buf = bytearray(max(2 * block_size, 2 * len(UTF8_BOM)))
    keep = 0                # bytes of the unfinished line at the front of buf
    base = getattr(stream, "range_start", 0)        # byte offset in the file of buf[0]
    at_first = at_start                             # buf holds the file's first block of text
    while True:
        if len(buf) - keep < block_size:
            grown = bytearray(max(2 * len(buf), keep + block_size))   # a long line: a bigger buffer
            grown[:keep] = memoryview(buf)[:keep]
            buf = grown
        try:
            n = stream.readinto(memoryview(buf)[keep:keep + block_size])
        except (OSError, EOFError) as e:
            raise DataError(path, f"cannot read or decompress: {e}") from None
        n = n or 0
        if at_start and n:
            while n < len(UTF8_BOM) and UTF8_BOM.startswith(bytes(buf[:n])):     # keep is 0 here
                more = stream.readinto(memoryview(buf)[n:len(UTF8_BOM)]) or 0
                if not more:
                    break
                n += more
            at_start = False
            if n >= len(UTF8_BOM) and bytes(buf[:len(UTF8_BOM)]) == UTF8_BOM:
                if on_bytes is not None:
                    on_bytes(len(UTF8_BOM))
                n -= len(UTF8_BOM)
                buf[:n] = bytes(buf[len(UTF8_BOM):len(UTF8_BOM) + n])
                base = len(UTF8_BOM)
                if not n:
                    continue
        if not n:
            if keep:
                if keep == len(buf):
                    buf = buf[:keep] + b"\n"         # a new buffer: the last one may still be viewed
                else:
                    buf[keep] = 10
                yield memoryview(buf)[:keep + 1]
            return
        if on_bytes is not None:
            on_bytes(n)
        end = keep + n
        nul = buf.find(b"\0", keep, end)
        if nul >= 0:
            raise DataError(path, binary_data(base + nul, bytes(buf[:min(end, 64)]) if at_first else b""))
        cut = buf.rfind(b"\n", keep, end)
        line_end = end if cut < 0 else buf.find(b"\n", keep, end)
        if line_end > limit:
            _too_long(path, limit, base, bytes(buf[:keep]), bytes(buf[keep:end]))
        if cut < 0:
            keep = end
            continue
        at_first = False
        yield memoryview(buf)[:cut + 1]
        keep = end - cut - 1
        buf[:keep] = bytes(buf[cut + 1:end])       # the unfinished line (a copy: the ranges may overlap)
        base += cut + 1


def binary_data(offset, start=b""):
    """The message for a NUL byte at ``offset`` of a data file: no SVMlight/LIBSVM text holds one, so the
    readers stop there (a file of NULs without a newline was otherwise held up to the line limit, 256 MiB,
    and then reported as a long line).  ``start``: the first bytes of the text when the NUL is in the
    first block read, whose compression signature, if any, is named."""
    token = bytes(start[:64]).split(None, 1)[0][:47] if bytes(start[:64]).strip() else b""
    return f"binary data at byte {offset} (a NUL byte; not an SVMlight/LIBSVM text file){_compressed_hint(token)}"


def _too_long(path, limit, line_start, tail, block):
    hint = ""
    if b"\r" in tail or b"\r" in block:
        hint = ("; it holds carriage returns (\\r): CR-only line ends (classic Mac OS) are not supported, "
                "convert them to LF or CRLF")
    raise DataError(path, f"the line starting at byte {line_start} is longer than {limit} bytes{hint} "
                    "(set PEGASOS_MAX_LINE_BYTES to allow longer lines)")


def _parser(zero_based, dtype, labels=None):
    from . import _svmlight

    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, not {dtype}")
    if labels is None:
        return _svmlight.Parser(zero_based=bool(zero_based), float32=dtype == np.float32)
    if hasattr(labels, "classes"):                       # a multiclass model
        values, texts = labels.classes, labels.class_texts
    else:
        values, texts = (labels.negative, labels.positive), (labels.negative_text, labels.positive_text)
    parser = _svmlight.Parser(zero_based=bool(zero_based), float32=dtype == np.float32, allowed_labels=values)
    shown = ", ".join(texts[:10]) + (", ..." if len(texts) > 10 else "")
    parser.allowed_text = f" ({shown})"
    return parser


def _feed(parser, buf, path):
    if parser.feed(buf) < 0:
        line, message = parser.error
        hint = _compressed_hint(parser.error_token) if line == 1 else ""
        raise DataError(path, message + hint, line)


def _compressed_hint(token):
    """What the first token of a data stream that did not parse says when it is compressed data: ""
    or a clause for the message.  A whole signature there means the text was decompressed and is
    compressed again (or was never decompressed); a file holding only the first bytes of a signature
    (gzip's and xz's, which no text begins with) is a compressed file cut short."""
    for magic, kind in _MAGIC:
        if token.startswith(magic):
            return f" (the data start as {kind} data do: were they compressed twice?)"
        if token and not 32 <= token[0] < 128 and magic.startswith(token):
            return f" (the data hold only the start of {kind}'s signature: a compressed file cut short?)"
    return ""


def _file_size(path):
    try:
        return os.path.getsize(path) if path != "-" else None
    except OSError:
        return None


def iter_svmlight(path: str | os.PathLike[str], zero_based: bool = False, dtype: DTypeLike = np.float64,
                  block_size: int = BLOCK_SIZE, progress: Callable[[int], object] | None = None,
                  labels: Any = None, summary: dict | None = None) -> Iterator[Chunk]:
    """Yield the rows of an SVMlight file as :class:`Chunk` objects.

    Each chunk holds the rows of about ``block_size`` bytes of text, so the
    memory used does not depend on the length of the file.

    Parameters
    ----------
    path : str
        File name, or ``-`` for standard input.
    zero_based : bool
        Indices in the file start at 0 (default: 1, as in SVMlight/LIBSVM).
    dtype : float64 or float32
        Type of the stored values.
    progress : callable(int) or None
        Called with the number of (compressed) bytes read after each block.
    labels : BinaryLabels, MulticlassModel or None
        If given, a label that is not one of its values is an error.
    summary : dict or None
        If given, filled once the whole file has been read with what
        :class:`SVMLightData` records besides the rows: ``n_examples``,
        ``nnz``, ``n_features``, ``distinct_labels``, ``labels_overflow``,
        ``n_lines``.

    Raises
    ------
    DataError
        Unreadable file, or a malformed line (the message names file and line).
    """
    parser = _parser(zero_based, dtype, labels)
    nnz = 0
    first = 0
    stream = open_binary(path)
    try:
        for buf in _whole_lines(stream, path, block_size, progress):
            _feed(parser, buf, path)
            labels, indptr, indices, data, qids = parser.take()
            if labels.shape[0]:
                yield Chunk(labels, indptr, indices, data, first, qids)
                first += labels.shape[0]
                nnz += indices.shape[0]
        if summary is not None:
            summary.update(
                n_examples=first, nnz=nnz, n_features=int(parser.n_features),
                distinct_labels=[LabelInfo(v, line, text) for v, line, text in parser.distinct_labels],
                labels_overflow=bool(parser.labels_overflow), n_lines=int(parser.line_no))
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def read_svmlight(path: str | os.PathLike[str], zero_based: bool = False, dtype: DTypeLike = np.float64,
                  n_features: int | None = None, block_size: int = BLOCK_SIZE,
                  progress: Callable[[int], object] | None = None, threads: int = 1) -> SVMLightData:
    """Load a whole SVMlight/LIBSVM file.

    Parameters
    ----------
    path : str
        File name (plain, .gz, .bz2, .xz) or ``-`` for standard input.
    zero_based : bool
        Indices start at 0 instead of 1.
    dtype : float64 or float32
        Type of the stored values (float32 halves the memory of the values).
    n_features : int or None
        Minimum number of columns of the result (e.g. the training dimension
        when loading a test file).
    threads : int
        2 or more: while one thread parses a plain (uncompressed) file, a second faults in the pages of
        the result's buffers (reserved for the whole file from the density of its first MiB) a little
        ahead of the parse (:meth:`pegasos._svmlight.Parser.populate`), so that the kernel's work of a
        first write to fresh memory, most of a large read's system time, runs beside the parse instead
        of stalling it.  The arrays are the same, bit for bit, and the memory used is the result's plus
        at most ``POPULATE_AHEAD`` bytes an array.  Default 1.  ``pegasos train`` uses 2 for plain files
        of 64 MiB and more.

    Returns
    -------
    SVMLightData
        CSR arrays (``indptr`` int64 of shape (m+1,), ``indices`` int32 and
        ``data`` of shape (nnz,)), labels float64 of shape (m,), and the
        distinct labels with the line where each first appears.

    Raises
    ------
    DataError
        Unreadable file or malformed line; the message names file and line.
    """
    plain = is_plain_text_file(path)
    parser = _parser(zero_based, dtype)
    if plain:
        _reserve(parser, path, _file_size(path) or 0)
    stream = open_binary(path)
    helper = None
    try:
        if threads > 1 and plain:
            helper = threading.Thread(target=parser.populate, args=(POPULATE_AHEAD,), name="pegasos-populate",
                                      daemon=True)
            helper.start()
        for buf in _whole_lines(stream, path, block_size, progress):
            _feed(parser, buf, path)
    finally:
        if helper is not None:
            parser.stop_populating()
            helper.join()
        if stream is not sys.stdin.buffer:
            stream.close()
    labels, indptr, indices, data, qids = parser.take()
    n = int(parser.n_features)
    if n_features is not None:
        n = max(n, int(n_features))
    return SVMLightData(
        path=str(path),
        chunk=Chunk(labels, indptr, indices, data, 0, qids),
        n_features=n,
        distinct_labels=[LabelInfo(v, line, text) for v, line, text in parser.distinct_labels],
        labels_overflow=bool(parser.labels_overflow),
        n_lines=int(parser.line_no),
        zero_based=bool(zero_based),
    )


class _Range:
    """A file object reading only the bytes [start, end) of a file."""

    def __init__(self, path, start, end):
        self.f = open(path, "rb")
        self.f.seek(start)
        self.left = end - start
        self.range_start = start

    def read(self, n):
        data = self.f.read(min(n, self.left)) if self.left > 0 else b""
        self.left -= len(data)
        return data

    def readinto(self, buffer):
        if self.left <= 0:
            return 0
        view = memoryview(buffer)
        n = self.f.readinto(view[:min(len(view), self.left)]) or 0
        self.left -= n
        return n

    def close(self):
        self.f.close()


def _line_ranges(path, size, parts):
    """Cut [0, size) into at most ``parts`` ranges, each starting at a line start."""
    cuts = [0]
    with open(path, "rb") as f:
        for j in range(1, parts):
            pos = _after_newline(f, max(size * j // parts - 1, cuts[-1]), size)
            if pos > cuts[-1]:
                cuts.append(pos)
    if cuts[-1] < size:
        cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:]))


def _after_newline(f, start, size, piece=1 << 20):
    """The offset just after the first newline at or after ``start`` in the open file ``f`` (``size`` when there
    is none), read in pieces of ``piece`` bytes (``readline`` held a whole line: 150 MB of a 300 MB file of NUL
    bytes); past :func:`max_line_bytes` without one, ``size`` (the range's parse refuses that line anyway)."""
    f.seek(start)
    scanned, limit = 0, max_line_bytes()
    while scanned <= limit:
        block = f.read(piece)
        if not block:
            return size
        i = block.find(b"\n")
        if i >= 0:
            return min(start + scanned + i + 1, size)
        scanned += len(block)
    return size


def line_ranges(path, parts):
    """Cut a plain file into at most ``parts`` byte ranges [start, end) that
    each begin at the start of a line (a range may hold no line when a line
    is longer than size/parts); list of (start, end) int pairs covering the file.

    Raises
    ------
    DataError
        The file cannot be read.
    """
    size = _file_size(path)
    if size is None:
        raise DataError(path, "cannot be read (not a regular file)")
    try:
        return _line_ranges(path, size, max(1, int(parts)))
    except OSError as e:
        raise DataError(path, f"cannot be read ({e.strerror or e})") from None


def read_svmlight_range(path, start, end, zero_based=False, dtype=np.float64, block_size=BLOCK_SIZE):
    """Read the lines of bytes [start, end) of a plain SVMlight file (``start``
    at a line start, as :func:`line_ranges` cuts them) into an
    :class:`SVMLightData` of those rows (``n_lines`` counts its own lines).

    Raises
    ------
    DataError
        Unreadable file or malformed line; the message names the file and
        the line within the range.
    """
    parser = _parser(zero_based, dtype)
    try:
        stream = _Range(path, int(start), int(end))
    except OSError as e:
        raise DataError(path, f"cannot be read ({e.strerror or e})") from None
    try:
        for buf in _whole_lines(stream, f"{path} (bytes {start}-{end})", block_size):
            _feed(parser, buf, f"{path} (bytes {start}-{end})")
    finally:
        stream.close()
    labels, indptr, indices, data, qids = parser.take()
    return SVMLightData(
        path=str(path), chunk=Chunk(labels, indptr, indices, data, 0, qids), n_features=int(parser.n_features),
        distinct_labels=[LabelInfo(v, line, text) for v, line, text in parser.distinct_labels],
        labels_overflow=bool(parser.labels_overflow), n_lines=int(parser.line_no), zero_based=bool(zero_based))


def _density(path, sample=1 << 20):
    """(lines, ':' tokens) per byte in the first MiB of a plain file: the
    estimate behind the buffers reserved for the whole file."""
    with open(path, "rb") as f:
        head = f.read(sample)
    if not head:
        return 0.0, 0.0
    return head.count(b"\n") / len(head), head.count(b":") / len(head)


def _reserve(parser, path, span):
    """Reserve the parser's buffers for ``span`` bytes of ``path`` at the
    density of its first MiB (plus 5%), which saves the reallocations of
    growing them.  (They are not advised huge pages: on the 1M x 50k set the
    advice cost 0.9 s of kernel time with the file's page cache cold and
    0.3 s warm, benchmarks/bench_cold_cache.py.)  Capped by what ``span``
    bytes can hold ("1\n" rows, "1:1 " values)."""
    rows_per_byte, values_per_byte = _density(path)
    parser.reserve(min(int(span * rows_per_byte * 1.05), span // 2) + 16,
                   min(int(span * values_per_byte * 1.05), span // 4) + 16)


# the start of an example line: optional blanks (as the parser counts them), then
# anything but the end of the line or a comment
_EXAMPLE_LINE = re.compile(rb"^[ \t\r\v\f]*[^ \t\r\v\f\n#]", re.M)


def example_line(path, example, block_size=BLOCK_SIZE):
    """The line of a file on which its ``example``-th example (0-based) stands.

    The readers keep no line numbers per example; this re-reads the file
    (decompressing as :func:`open_binary` does) and counts the lines that
    hold an example, i.e. those that are neither blank nor comment-only,
    for error messages about one example of the training data.

    Parameters
    ----------
    path : str
        The data file; ``-`` (standard input, which cannot be read again)
        gives None.
    example : int
        0-based position of the example among the file's examples.

    Returns
    -------
    int or None
        The 1-based line, or None if the file cannot be read again or has
        fewer examples (it changed).
    """
    if path == "-" or example is None or example < 0:
        return None
    seen = 0
    lines_before = 0
    try:
        stream = open_binary(path)
    except DataError:
        return None
    try:
        for buf in _whole_lines(stream, path, block_size):
            buf = bytes(buf)
            count = len(_EXAMPLE_LINE.findall(buf))
            if seen + count > example:
                for j, match in enumerate(_EXAMPLE_LINE.finditer(buf)):
                    if seen + j == example:
                        return lines_before + buf.count(b"\n", 0, match.start()) + 1
            seen += count
            lines_before += buf.count(b"\n")
    except DataError:
        return None
    finally:
        stream.close()
    return None


def load_svmlight(path: str | os.PathLike[str], zero_based: bool = False, dtype: DTypeLike = np.float64,
                  n_features: int | None = None) -> tuple[csr_matrix, NDArray[np.float64]]:
    """Load an SVMlight/LIBSVM file as ``(X, y)``, like scikit-learn's
    ``load_svmlight_file``.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (m, n_features), float64 or float32
    y : ndarray of shape (m,), float64, the labels as written

    Raises
    ------
    DataError
        Unreadable file or malformed line (file and line are named).
    """
    d = read_svmlight(path, zero_based=zero_based, dtype=dtype, n_features=n_features)
    return d.X, d.y
