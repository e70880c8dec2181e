"""Training on files larger than memory.

Two ways, both behind ``pegasos train --stream``:

* **Binary cache** (:func:`load_cached`, ``--cache FILE``).  The first run
  parses the text once, in bounded blocks, into a binary file holding the CSR
  arrays; training then memory-maps it.  Every sampling scheme of the
  in-memory trainer works unchanged (uniform draws, permutations, ranking
  pairs, one-vs-rest, kernels) and the model is bit-identical to in-memory
  training.  Later runs with the same source file reuse the cache without
  parsing.  Cost: disk space of 12 bytes per non-zero (8 with float32) plus
  16 per example (24 with qids), and about 1.7 times that while it is built;
  private memory O(m) (the ±1 labels, a permutation), not
  O(nnz): the mapped pages are the kernel's page cache, which it drops under
  memory pressure.  Use it for several epochs, for uniform sampling, and to
  train from standard input.

* **Shuffle buffer** (:func:`train_shuffled`, ``--shuffle-buffer N``).
  Repeated sequential passes over the text.  Rows are read into a buffer;
  whenever it holds N or more, all but N/2 of them, drawn at random, are
  visited in random order, and the N/2 others stay to mix with the next rows;
  at the end of a pass the rest is visited in random order.  Memory is
  bounded by N examples plus the rows of one block of text (4 MiB), whatever
  the size of the file, and no disk is used; each epoch parses the text
  again.  The order is only shuffled within a window of about N examples
  (and at least one block): a file sorted by label needs a buffer larger
  than its longest run of one label, or the cache.  Use it for one or a few
  epochs (``--eta0`` with suffix averaging reaches 1% of the optimum in one
  epoch) when disk space is short.  Binary classification and regression
  only, from a regular file (a pipe can be read only once).  The scan keeps
  a uniform sample of rows (:class:`Scan` ``sample``), on which
  :func:`pegasos.fit` calibrates the step offset of the "auto" preset.

Both take a first pass over the text (the cache's build, or a scan) that
finds m, the dimension and the labels before training starts.
"""

import json
import math
import numbers
import os
import shutil
import stat
import sys
import tempfile
import zlib
from dataclasses import dataclass, field

import numpy as np

from .defaults import DEFAULT_SAMPLE_SIZE, DEFAULT_SEED, DEFAULT_SHUFFLE_BUFFER
from .errors import DamagedCacheError, DataError, ExampleError, ParameterError
from .data import check_weight_memory, take_rows
from .io import BLOCK_SIZE, Chunk, LabelInfo, SVMLightData, iter_svmlight
from .model import remove_stale_temporaries

CACHE_MAGIC = b"pegasos-cache\n"
CACHE_VERSION = 3             # 2: a CRC-32 of each section; 3: and of the header (older caches are rebuilt)
_HEADER_BYTES = 1 << 16       # room for the JSON header (64 labels at most)
_ALIGN = 4096                 # sections start on page boundaries
_COPY_BYTES = 16 << 20


# ---------------------------------------------------------------- cache --

def _source_stamp(path):
    """What identifies a regular file's content cheaply: [size, mtime, ctime (ns),
    inode]; None for standard input and other files that are not regular
    (pipes, devices), whose content cannot be identified."""
    if path == "-":
        return None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise DataError(path, "no such file") from None
    except OSError as e:
        raise DataError(path, f"cannot open: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        return None
    # ctime cannot be set back by a user (touch -r, cp -p, rsync -t set mtime only)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _check_regular(cache_path):
    """Raise DataError if ``cache_path`` exists and is neither a regular file nor a directory (a FIFO
    would block the open, a device cannot hold a cache); a directory is reported where it is opened."""
    try:
        mode = os.stat(cache_path).st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise DataError(cache_path, "is not a regular file (a FIFO or a device cannot hold a cache); choose "
                                    "another --cache name")


def read_cache_header(cache_path):
    """The JSON header of a cache file as a dict, or None if the file is not a cache.

    Raises
    ------
    DataError
        The file exists but cannot be read.
    """
    try:
        with open(cache_path, "rb") as f:
            return _header_of(f)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise DataError(cache_path, "is a directory, not a cache file") from None
    except OSError as e:
        raise DataError(cache_path, f"cannot read the cache: {e.strerror or e}") from None


def _header_of(f):
    """The header of the open cache file ``f`` (None: not a cache; {}: unreadable header, also for an
    empty file or one cut inside the first line, which holds nothing to lose)."""
    f.seek(0)
    head = f.read(_HEADER_BYTES)
    if len(head) < len(CACHE_MAGIC) and CACHE_MAGIC.startswith(head):
        return {}
    if not head.startswith(CACHE_MAGIC):
        return None
    try:
        header = json.loads(head[len(CACHE_MAGIC):].split(b"\0", 1)[0].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):     # RecursionError: deeply nested JSON
        return {}
    return header if isinstance(header, dict) else {}


def _header_crc(header):
    """CRC-32 of a header's fields but its own checksum, in a canonical JSON spelling."""
    fields = {key: value for key, value in header.items() if key != "header_crc32"}
    return zlib.crc32(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def _check_header(header):
    """Raise ValueError unless ``header`` is of this version and its fields are those it was built with."""
    if not header:
        raise ValueError("its header is not readable JSON (or the file is cut inside it)")
    version = header.get("version")
    if version != CACHE_VERSION:
        raise ValueError(f"cache version {version!r}, this pegasos reads version {CACHE_VERSION}")
    if header.get("header_crc32") != _header_crc(header):
        raise ValueError("its header changed since the cache was built: its checksum differs")


def _check_complete(header, size):
    """Raise ValueError unless a file of ``size`` bytes holds every section ``header`` lists."""
    end = max(int(off) + np.dtype(dt).itemsize * int(count) for off, dt, count in header["sections"].values())
    if size < end:
        raise ValueError(f"cut short: {size} bytes, its sections end at byte {end}")


def _cache_state(header, size, path, zero_based, dtype):
    """What to do with a cache of ``path`` whose header is ``header`` (file of ``size`` bytes):
    ``"current"`` (open it), ``"stale"`` (rebuild it: another source, other reading options, an older
    version, or standard input, whose content cannot be identified), ``"newer"`` (rebuild it, and say
    that a newer pegasos wrote it) or what is damaged in it (rebuild it and say so)."""
    stamp = _source_stamp(path)
    version = header.get("version") if header else None
    if isinstance(version, int) and not isinstance(version, bool) and version > CACHE_VERSION:
        return "newer"
    if stamp is None or (isinstance(version, int) and version != CACHE_VERSION):
        return "stale"
    try:
        _check_header(header)
        if not (header["source"] == os.path.abspath(path) and header["source_stamp"] == stamp
                and header["zero_based"] == bool(zero_based) and header["dtype"] == np.dtype(dtype).name):
            return "stale"
        if header["byte_order"] != sys.byteorder:
            return "stale"
        _check_complete(header, size)
        return "current"
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        return _what(e)


def _what(e):
    """What a check's exception says is wrong, in words (a missing key is named as a header field)."""
    if isinstance(e, KeyError):
        return f"its header has no field {e.args[0]!r}" if e.args else "its header lacks a field"
    return str(e) or type(e).__name__


def _damaged(cache_path, what):
    return DamagedCacheError(cache_path, what)


def open_cache(cache_path, header=None, f=None, check=True):
    """Memory-map a cache file as :class:`pegasos.io.SVMLightData` (no copy).

    The arrays are checked before use (O(nnz), in blocks): indptr starts at
    0, never decreases and ends at nnz; every index is in [0, n_features)
    and increases within its row; labels and values are finite; and each
    section's CRC-32 is the one its header recorded when the cache was built,
    so a value, label or index changed since is found, not trained on; the
    header carries a CRC-32 of its own fields too.  A damaged file is
    therefore an error, never a crash of the training loop or a silently
    different model.

    Parameters
    ----------
    cache_path : str
    header : dict, optional
        Its header, if already read from the open file ``f``.
    f : binary file object, optional
        The cache opened for reading; header and arrays are taken from this
        one descriptor, so a cache replaced meanwhile by another process is
        never mixed with the old one.
    check : bool
        Check the arrays (False only for a cache this process just built
        from the parser's output).

    Returns
    -------
    SVMLightData
        ``chunk`` holds read-only ``numpy.memmap`` arrays: labels float64 (m,),
        indptr int64 (m+1,), indices int32 (nnz,), data float64 or float32
        (nnz,), and qid int64 (m,) if the file had qids.

    Raises
    ------
    DataError
        Not a cache file, or unreadable.
    DamagedCacheError
        A damaged cache file, or one of another version (a subclass of DataError).
    """
    if f is None:
        try:
            with open(cache_path, "rb") as f:
                return open_cache(cache_path, None, f, check)
        except FileNotFoundError:
            raise DataError(cache_path, "no such file") from None
        except OSError as e:
            raise DataError(cache_path, f"cannot read the cache: {e.strerror or e}") from None
    header = _header_of(f) if header is None else header
    if header is None:
        raise DataError(cache_path, "is not a pegasos cache file")
    try:
        _check_header(header)
        if header.get("byte_order") != sys.byteorder:
            raise ValueError("written on a machine of another byte order")
        size = os.fstat(f.fileno()).st_size
        _check_complete(header, size)
        arrays = {}
        for name, (off, dt, count) in header["sections"].items():
            dt, off, count = np.dtype(dt), int(off), int(count)
            if off < 0 or count < 0 or off + dt.itemsize * count > size:
                raise ValueError(f"section {name} beyond the end of the file")
            arrays[name] = (np.memmap(f, dtype=dt, mode="r", offset=off, shape=(count,)) if count
                            else np.zeros(0, dtype=dt))
        labels = [LabelInfo(float(v), int(line), str(text)) for v, line, text in header["distinct_labels"]]
        m, n_features, path = int(header["n_examples"]), int(header["n_features"]), str(header["source"])
        chunk = Chunk(arrays["labels"], arrays["indptr"], arrays["indices"], arrays["data"], 0, arrays.get("qid"))
        if check:
            found = _check_arrays(chunk, m, n_features)
            _check_labels(chunk.labels, labels, bool(header["labels_overflow"]), int(header["n_lines"]))
            if "qid" in arrays:
                found["qid"] = _crc32(arrays["qid"])
            _check_sums(found, header.get("crc32"))      # last: the checks above say what is wrong
        return SVMLightData(path=header.get("source_arg", path), chunk=chunk, n_features=n_features,
                            distinct_labels=labels, labels_overflow=bool(header["labels_overflow"]),
                            n_lines=int(header["n_lines"]), zero_based=bool(header["zero_based"]))
    except (KeyError, TypeError, ValueError, OverflowError, OSError, AttributeError) as e:
        raise _damaged(cache_path, _what(e)) from None


def _check_arrays(chunk, m, n_features, block=1 << 22):
    """Raise ValueError unless the CSR arrays are consistent (see :func:`open_cache`); return the
    CRC-32 of each of the sections labels, indptr, indices and data, computed in the same pass."""
    indptr, indices, labels = chunk.indptr, chunk.indices, chunk.labels
    crc = dict.fromkeys(("labels", "indptr", "indices", "data"), 0)
    nnz = indices.shape[0]
    if labels.shape[0] != m or indptr.shape[0] != m + 1 or chunk.data.shape[0] != nnz:
        raise ValueError("section sizes")
    if chunk.qid is not None and chunk.qid.shape[0] != m:
        raise ValueError("section sizes")
    if indptr[0] != 0 or indptr[m] != nnz:
        raise ValueError("row offsets")
    if m == 0:
        crc["indptr"] = _crc32(indptr)
    for lo in range(0, m, block):
        part = np.asarray(indptr[lo:lo + block + 1])       # one offset more than the block: the last is the next's
        if np.any(part[1:] < part[:-1]):
            raise ValueError("row offsets")
        crc["indptr"] = _crc32(part if lo + block >= m else part[:-1], crc["indptr"])
        part = np.asarray(labels[lo:lo + block])
        if not np.all(np.isfinite(part)):
            raise ValueError("labels")
        crc["labels"] = _crc32(part, crc["labels"])
    # indices in range, and increasing inside each row (a decrease only where a row starts); values finite
    data = chunk.data
    for lo in range(0, nnz, block):
        values = np.asarray(data[lo:lo + block])
        if not np.isfinite(values).all():
            raise ValueError(f"stored value {lo + int(np.argmin(np.isfinite(values)))} is not finite")
        crc["data"] = _crc32(values, crc["data"])
        part = np.asarray(indices[lo:lo + block + 1])
        crc["indices"] = _crc32(part[:block], crc["indices"])
        if part.size and (part.min() < 0 or part.max() >= n_features):
            raise ValueError("feature indices")
        falls = np.flatnonzero(part[1:] <= part[:-1]) + lo + 1
        if falls.size:
            starts = np.searchsorted(indptr, falls, side="left")
            if np.any(np.asarray(indptr[np.minimum(starts, m)]) != falls):
                raise ValueError("feature indices not increasing within a row")
    return crc


def _crc32(array, crc=0, block=1 << 26):
    """CRC-32 (zlib's) of the bytes of a 1-d array, read in blocks of ``block`` bytes."""
    raw = np.asarray(array).view(np.uint8) if array.size else np.zeros(0, np.uint8)
    for lo in range(0, raw.shape[0], block):
        crc = zlib.crc32(raw[lo:lo + block], crc)
    return crc


def _check_sums(found, sums):
    """Raise ValueError unless every section's CRC-32 in ``found`` ({name: crc}, as read) is the one of
    ``sums`` (as built)."""
    if not isinstance(sums, dict) or set(sums) != set(found):
        raise ValueError("no checksum for each section")
    for name in found:
        if found[name] != sums[name]:
            raise ValueError(f"the {name} section changed since the cache was built: its checksum differs")


def _check_labels(values, distinct, overflow, n_lines, block=1 << 22):
    """Raise ValueError unless the header's distinct labels agree with their texts and
    lines and, when the header lists them all, every stored label is one of them (so that a
    damaged cache is named as such, not blamed on a line of the text file)."""
    for info in distinct:
        try:
            same = float(info.text) == info.value
        except ValueError:          # spellings Python does not read (hexadecimal floats): not compared
            same = True
        if not same or not 1 <= info.line <= max(n_lines, 1):
            raise ValueError(f"label {info.text!r} of line {info.line}")
    if overflow or not distinct:
        return
    known = np.array(sorted(info.value for info in distinct))
    for lo in range(0, values.shape[0], block):
        part = np.asarray(values[lo:lo + block])
        at = np.minimum(np.searchsorted(known, part), known.size - 1)
        bad = np.flatnonzero(known[at] != part)
        if bad.size:
            raise ValueError(f"stored label {float(part[bad[0]])!r} of example {lo + int(bad[0]) + 1} is not "
                             "one of the labels of its header")


def build_cache(path, cache_path, zero_based=False, dtype=np.float64, progress=None):
    """Parse an SVMlight file once into a binary cache file; return the header.

    The text is read in blocks of :data:`pegasos.io.BLOCK_SIZE` bytes, so the
    memory used does not depend on the size of the file.  The cache is written
    under a temporary name beside ``cache_path`` and renamed when complete.

    Layout: the line ``pegasos-cache``, a JSON header (source file, its size
    and modification time, the reading options, m, nnz, n_features, the
    distinct labels, and each section's byte offset, dtype and length), zero
    padding to 64 KiB, then the sections labels (float64), indptr (int64),
    indices (int32), data (float64 or float32) and, if any row has one, qid
    (int64), each starting on a 4 KiB boundary, in native byte order.

    Raises
    ------
    DataError
        Unreadable or malformed input (the message names file and line),
        ``cache_path`` exists and is not a cache file, or the cache cannot be
        written (e.g. the disk is full).
    """
    _check_regular(cache_path)
    if os.path.exists(cache_path) and read_cache_header(cache_path) is None:
        raise DataError(cache_path, "exists and is not a pegasos cache file; remove it or choose another "
                                    "--cache name")
    if os.path.isdir(cache_path):
        raise DataError(cache_path, "is a directory, not a cache file")
    dtype = np.dtype(dtype)
    directory = os.path.dirname(os.path.abspath(cache_path))
    stamp = _source_stamp(path)
    summary = {}
    remove_stale_temporaries(os.path.join(directory, os.path.basename(cache_path)))   # of killed builds
    try:
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(cache_path)}.{os.getpid()}.",
                                        suffix=".tmp")
    except OSError as e:
        raise DataError(cache_path, f"cannot write the cache: {e.strerror or e}") from None
    side = {}
    try:
        with os.fdopen(fd, "w+b") as out:
            out.truncate(_HEADER_BYTES)
            out.seek(_HEADER_BYTES)
            for name in ("data", "labels", "indptr", "qid"):
                side[name] = tempfile.TemporaryFile(dir=directory)
            first = np.zeros(1, dtype=np.int64)
            side["indptr"].write(first.tobytes())
            crc = dict.fromkeys(("indices", "data", "labels", "qid"), 0)
            crc["indptr"] = _crc32(first)
            nnz, has_qid = 0, False
            for chunk in iter_svmlight(path, zero_based=zero_based, dtype=dtype, progress=progress,
                                       summary=summary):
                offsets = chunk.indptr[1:] + nnz
                for name, target, array in (("indices", out, chunk.indices), ("data", side["data"], chunk.data),
                                            ("labels", side["labels"], chunk.labels),
                                            ("indptr", side["indptr"], offsets), ("qid", side["qid"], chunk.qid)):
                    target.write(memoryview(array))
                    crc[name] = _crc32(array, crc[name])
                has_qid = has_qid or bool((chunk.qid != -1).any())
                nnz += chunk.indices.shape[0]
            m = summary["n_examples"]
            sections = {"indices": (_HEADER_BYTES, "int32", nnz)}
            for name, dt, count in (("data", dtype.name, nnz), ("labels", "float64", m),
                                    ("indptr", "int64", m + 1), ("qid", "int64", m if has_qid else 0)):
                if name == "qid" and not has_qid:
                    continue
                offset = -(-out.tell() // _ALIGN) * _ALIGN
                out.seek(offset)
                src = side[name]
                src.seek(0)
                shutil.copyfileobj(src, out, _COPY_BYTES)
                sections[name] = (offset, dt, count)
            header = {
                "version": CACHE_VERSION, "source": os.path.abspath(path) if path != "-" else "-",
                "source_arg": str(path), "source_stamp": stamp,
                "zero_based": bool(zero_based), "dtype": dtype.name, "byte_order": sys.byteorder,
                "n_examples": m, "nnz": nnz, "n_features": summary["n_features"], "n_lines": summary["n_lines"],
                "labels_overflow": summary["labels_overflow"],
                "distinct_labels": [[repr(l.value), l.line, l.text] for l in summary["distinct_labels"]],
                "sections": sections, "crc32": {name: crc[name] for name in sections},
            }
            header["header_crc32"] = _header_crc(header)
            text = CACHE_MAGIC + json.dumps(header, indent=1).encode("utf-8") + b"\n"
            if len(text) >= _HEADER_BYTES:
                raise DataError(cache_path, "cache header too large")
            out.seek(0)
            out.write(text)
            out.flush()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_name, 0o666 & ~umask)        # as an ordinary new file, not mkstemp's 0600
        os.replace(tmp_name, cache_path)
    except OSError as e:
        _remove(tmp_name)
        raise DataError(cache_path, f"cannot write the cache: {e.strerror or e}") from None
    except BaseException:
        _remove(tmp_name)
        raise
    finally:
        for f in side.values():
            f.close()
    return header


def _remove(name):
    try:
        os.unlink(name)
    except OSError:
        pass


def load_cached(path, cache_path, zero_based=False, dtype=np.float64, progress=None, on_damaged=None,
                on_newer=None):
    """Training data from ``cache_path``, built from ``path`` first if needed.

    A cache is reused when it was built from the same file (same absolute
    name, size, modification and change times, inode) with the same
    ``zero_based`` and ``dtype`` by this version; otherwise, and always for
    standard input (``-``), it is rebuilt.  A cache that fails the checks of
    :func:`open_cache` (cut short, a header or section changed on disk) is
    rebuilt from ``path`` too, and ``on_damaged`` is told what was wrong.

    Parameters
    ----------
    on_damaged : callable, optional
        Called with one string (what was damaged) before a damaged cache is
        rebuilt.
    on_newer : callable, optional
        Called with the cache's version (an int above :data:`CACHE_VERSION`)
        before a cache written by a newer pegasos is rebuilt in this version.
        Other older or stale caches are rebuilt without a call.

    Returns
    -------
    (SVMLightData, bool)
        The memory-mapped data (see :func:`open_cache`) and whether an
        existing cache was reused.

    Raises
    ------
    DataError
        As :func:`build_cache` and :func:`open_cache`.
    """
    _check_regular(cache_path)
    try:
        with open(cache_path, "rb") as f:
            header = _header_of(f)
            state = "stale" if header is None else _cache_state(header, os.fstat(f.fileno()).st_size, path,
                                                                zero_based, dtype)
            if state == "current":
                try:
                    return open_cache(cache_path, header, f), True
                except DamagedCacheError as e:
                    state = e.what
            if state == "newer":
                if on_newer is not None:
                    on_newer(header["version"])
            elif state != "stale" and on_damaged is not None:
                on_damaged(state)
    except (FileNotFoundError, IsADirectoryError):
        pass
    except OSError as e:
        raise DataError(cache_path, f"cannot read the cache: {e.strerror or e}") from None
    build_cache(path, cache_path, zero_based, dtype, progress)
    return open_cache(cache_path, check=False), False      # just written from the parser's arrays


# -------------------------------------------------------- shuffle buffer --

def scan(path, zero_based=False, dtype=np.float64, epsilon=None, progress=None, sample_size=DEFAULT_SAMPLE_SIZE,
         seed=DEFAULT_SEED):
    """One pass over a file that keeps no rows but a sample: what training needs to start.

    Returns
    -------
    Scan
        An :class:`pegasos.io.SVMLightData` with an empty ``chunk``; ``n_features``, ``distinct_labels``,
        ``labels_overflow`` and ``n_lines`` as :func:`pegasos.io.read_svmlight`
        gives them.  Extra attributes: ``m`` (examples), ``nnz``,
        ``label_counts`` ({label value: count}, for at most 64 distinct
        values), ``eps_loss_sum`` (sum of max(0, |y| - epsilon), the
        eps-insensitive loss of w = 0, if ``epsilon`` is given) and ``sample``:
        a :class:`pegasos.io.Chunk` of min(``sample_size``, m) rows drawn
        uniformly without replacement (each row's key a uniform draw of the
        generator seeded by ``seed``, the rows of the smallest keys kept, in
        file order), on which the step offset is calibrated
        (:func:`pegasos.autotune.calibrate_step_offset`).

    Raises
    ------
    DataError
        Unreadable file or malformed line.
    """
    summary, counts, eps_sum = {}, {}, 0.0
    kept = _Sample(int(sample_size), seed, dtype)
    used = UsedColumns()
    has_qid = False
    for chunk in iter_svmlight(path, zero_based=zero_based, dtype=dtype, progress=progress, summary=summary):
        kept.offer(chunk)
        used.add(chunk)
        has_qid = has_qid or (chunk.qid is not None and bool((chunk.qid != -1).any()))
        if len(counts) <= 64:
            values, n = np.unique(chunk.labels, return_counts=True)
            for v, c in zip(values.tolist(), n.tolist()):
                counts[v] = counts.get(v, 0) + c
        if epsilon is not None:
            eps_sum += float(np.maximum(0.0, np.abs(chunk.labels) - epsilon).sum())
    empty = Chunk(np.zeros(0), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=dtype))
    return Scan(path=str(path), chunk=empty, n_features=summary["n_features"],
                distinct_labels=summary["distinct_labels"], labels_overflow=summary["labels_overflow"],
                n_lines=summary["n_lines"], zero_based=bool(zero_based), m=summary["n_examples"],
                nnz_total=summary["nnz"], label_counts=counts, eps_loss_sum=eps_sum, sample=kept.chunk(),
                columns=used.columns(), largest_index_row=used.largest_row, has_qid=has_qid)


class UsedColumns:
    """The distinct column indices of a stream of chunks, in memory O(distinct columns), not O(largest
    index): each chunk's distinct indices are kept and merged once they outnumber those merged so far
    (O(nnz log nnz) in all).  ``largest_row`` is the 0-based example holding the largest index (the
    first one that does), -1 before any."""

    def __init__(self):
        self.merged = np.zeros(0, dtype=np.int32)
        self.pending, self.n_pending = [], 0
        self.largest, self.largest_row = -1, -1

    def add(self, chunk):
        if not chunk.indices.size:
            return
        distinct = np.unique(chunk.indices)
        top = int(distinct[-1])
        if top > self.largest:
            p = int(np.argmax(chunk.indices == top))
            self.largest = top
            self.largest_row = chunk.first_row + int(np.searchsorted(chunk.indptr, p, side="right")) - 1
        self.pending.append(distinct)
        self.n_pending += distinct.shape[0]
        if self.n_pending > max(self.merged.shape[0], 1 << 16):
            self.columns()

    def columns(self):
        """The distinct columns seen, increasing (int32)."""
        if self.pending:
            self.merged = np.unique(np.concatenate([self.merged] + self.pending))
            self.pending, self.n_pending = [], 0
        return self.merged


class _Sample:
    """A uniform sample of at most ``size`` rows of a stream of chunks (priority sampling: each row gets a
    uniform key, the rows of the ``size`` smallest keys are kept), in the stream's order."""

    def __init__(self, size, seed, dtype):
        self.size = size
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.rows = _Buffer(dtype)
        self.keys = np.zeros(0)
        self.threshold = 1.0

    def offer(self, chunk):
        n = chunk.labels.shape[0]
        if not self.size or not n:
            return
        keys = self.rng.random(n)
        take = np.flatnonzero(keys < self.threshold)
        if not take.size:
            return
        indptr, indices, data = take_rows(chunk.indptr, chunk.indices, chunk.data, take)
        self.rows.add([Chunk(chunk.labels[take], indptr, indices, data)])
        self.keys = np.concatenate([self.keys, keys[take]])
        if self.keys.shape[0] > self.size:
            rows = np.sort(np.argpartition(self.keys, self.size - 1)[:self.size])
            self.rows.keep(rows)
            self.keys = self.keys[rows]
        if self.keys.shape[0] == self.size:
            self.threshold = float(self.keys.max())

    def chunk(self):
        b = self.rows
        return Chunk(b.labels, b.indptr, b.indices, b.data)


@dataclass
class Scan(SVMLightData):
    """What :func:`scan` learns of a file, without its rows (``chunk`` is empty)."""

    m: int = 0
    nnz_total: int = 0
    label_counts: dict = field(default_factory=dict)
    eps_loss_sum: float = 0.0
    sample: object = None
    #: the distinct column indices of the file, increasing (int32), and the 0-based example holding the largest
    columns: np.ndarray | None = None
    largest_index_row: int = -1
    #: a line of the file has a qid: token
    has_qid: bool = False

    @property
    def n_examples(self):
        return self.m

    @property
    def nnz(self):
        return self.nnz_total


class _Buffer:
    """The shuffle buffer's rows (at most N plus one block's) as CSR arrays."""

    def __init__(self, dtype):
        self.labels = np.zeros(0)
        self.indptr = np.zeros(1, dtype=np.int64)
        self.indices = np.zeros(0, dtype=np.int32)
        self.data = np.zeros(0, dtype=dtype)

    @property
    def n_rows(self):
        return self.labels.shape[0]

    def add(self, chunks):
        """Append a list of chunks (one concatenation)."""
        if not chunks:
            return
        starts = np.cumsum([self.indices.shape[0]] + [c.indices.shape[0] for c in chunks])
        self.indptr = np.concatenate([self.indptr] + [c.indptr[1:] + s for c, s in zip(chunks, starts)])
        self.labels = np.concatenate([self.labels] + [c.labels for c in chunks])
        self.indices = np.concatenate([self.indices] + [c.indices for c in chunks])
        self.data = np.concatenate([self.data] + [c.data for c in chunks])

    def keep(self, rows):
        """Keep only ``rows`` (sorted int64 indices), in that order."""
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        lengths = ends - starts
        indptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        # position in the old arrays of every kept value
        take = np.arange(indptr[-1], dtype=np.int64) + np.repeat(starts - indptr[:-1], lengths)
        self.labels, self.indptr = self.labels[rows], indptr
        self.indices, self.data = self.indices[take], self.data[take]


def shuffled_rows(path, shuffle_buffer, k, rng, zero_based=False, dtype=np.float64, labels=None,
                  n_features=None, block_size=BLOCK_SIZE):
    """One pass over ``path`` in shuffle-buffer order.

    Rows are read in blocks of ``block_size`` bytes of text into a buffer.
    Once it holds at least N = ``shuffle_buffer`` rows, all of them but
    ``keep`` = N // 2, drawn at random, are visited in random order (rounded
    down to a whole number of batches of k); the kept ones stay and mix with
    the next rows read.  At the end of the file the rest is visited in random
    order.  Memory: at most N rows plus the rows of one block; the work per
    row does not depend on N.  With N larger than the file, the pass is one
    uniformly random permutation (``rng.permutation(m)``).

    Yields
    ------
    (buffer, rows)
        A :class:`Chunk`-like buffer (labels, indptr, indices, data) and the
        int64 positions in it of the examples to visit next, in that order.
        Every example of the file is visited exactly once per pass.

    Raises
    ------
    DataError
        Malformed line, a label outside ``labels``, or an index at or beyond
        ``n_features`` (the file changed since its first pass).
    """
    keep = shuffle_buffer // 2
    buf, pending, waiting = _Buffer(np.dtype(dtype)), [], 0
    for chunk in iter_svmlight(path, zero_based=zero_based, dtype=dtype, labels=labels, block_size=block_size):
        if n_features is not None and chunk.indices.size and int(chunk.indices.max()) >= n_features:
            raise DataError(path, "changed while training: a feature index is larger than in the first pass")
        pending.append(chunk)
        waiting += chunk.n_rows
        visit = (buf.n_rows + waiting - keep) // k * k
        if buf.n_rows + waiting < shuffle_buffer or visit <= 0:
            continue
        buf.add(pending)
        pending, waiting = [], 0
        order = rng.permutation(buf.n_rows).astype(np.int64, copy=False)
        yield buf, order[:visit]
        buf.keep(np.sort(order[visit:]))
    buf.add(pending)
    if buf.n_rows:
        yield buf, rng.permutation(buf.n_rows).astype(np.int64, copy=False)


def check_rereadable(path):
    """Refuse input that cannot be read twice (the shuffle buffer reads it once per epoch).

    Raises
    ------
    ParameterError
        ``path`` is standard input, a pipe, a FIFO or a device.
    DataError
        ``path`` does not exist or cannot be examined.
    """
    if path == "-":
        raise ParameterError("standard input can be read only once: use --cache FILE to train from it")
    if _source_stamp(path) is None:
        raise ParameterError(f"{path} is not a regular file (a pipe or a device can be read only once): "
                             "use --cache FILE to train from it")


def fit_shuffled(d, options, *, progress=None, on_plan=None, block_size=BLOCK_SIZE):
    """Train a linear model in sequential passes over a file, through a shuffle buffer.

    The Pegasos step (Fig. 1 for k = 1, Fig. 2 with Eq. (8) for k > 1, the
    same compiled loop as in-memory training) is applied to the examples in
    the order described in this module's docstring.  Each epoch is a new
    pass over the file, so T = epochs * ceil(m / k) as with permutation
    sampling.

    Parameters
    ----------
    d : Scan
        The file's first pass (:func:`scan`; with ``epsilon`` for the
        eps-insensitive loss); its ``path`` is read again for every epoch.
    options : pegasos.options.TrainOptions
        Validated settings with ``shuffle_buffer`` N, the examples held in
        memory; loss hinge, log, squared-hinge or eps-insensitive.
    progress : callable(int) or None
        Called with the number of iterations done after each block.
    on_plan : callable(int) or None
        Called once with T before training.
    block_size : int
        Bytes of text read at a time (the buffer also holds one block's rows).

    Returns
    -------
    pegasos.linear.LinearModel
        Its header records ``sampling shuffle-buffer`` and the buffer size.

    Raises
    ------
    ParameterError
        Standard input or a device (it cannot be read twice).
    DataError
        Unreadable file, malformed line, labels unfit for the task, or a
        file that changed between passes.
    """
    from .labels import BinaryLabels, sample_weights
    from .linear import LinearModel, projection_radius2, solve

    path, zero_based, dtype = d.path, d.zero_based, d.chunk.data.dtype
    check_rereadable(path)
    task = options.task
    m = d.m
    if m == 0:
        raise DataError(path, "no training examples found (the file is empty or holds only comments and "
                              "blank lines)")
    plan = options.plan(m, sampling="permutation")
    if on_plan is not None:
        on_plan(plan.T)
    T, k = plan.T, plan.k
    labels, weights = None, None
    class_weight = options.class_weight
    if task == "binary":
        labels = BinaryLabels.from_data(d, allow_one_class=options.allow_one_class)
        values = np.array(sorted(d.label_counts), dtype=np.float64)
        per_value = sample_weights(values, class_weight)
        weights = dict(zip(values.tolist(), per_value.tolist() if per_value is not None else [1.0] * values.size))
        f0 = sum(weights[v] * c for v, c in d.label_counts.items()) / m
    else:
        f0 = d.eps_loss_sum / m
    if options.loss == "log":
        f0 *= math.log(2.0)
    radius2 = projection_radius2(options.loss, options.lam, f0, np.ones(1) if class_weight else None)
    n_features = d.n_features
    rng = np.random.Generator(np.random.PCG64(options.seed))
    shuffle_buffer = int(options.shuffle_buffer)
    # A file whose largest index is far beyond the columns it uses (a stray huge index, hashed ids) trains
    # on those columns renumbered, as in memory: the solver's dense vectors and passes are then O(used
    # columns), not O(n_features) (index 5e8 on two lines took 7.9 GB and 32 s); a weight whose feature
    # no example has stays 0, so the model is the same.  Only its weights in all n_features are dense.
    columns = d.columns if d.columns is not None and d.columns.shape[0] < n_features // 2 else None
    dim = n_features if columns is None else max(int(columns.shape[0]), 1)

    def blocks():
        done = 0
        while done < T:                       # one pass over the file per epoch
            seen = 0
            for buf, rows in shuffled_rows(path, shuffle_buffer, k, rng, zero_based, dtype, labels, n_features,
                                           block_size):
                seen += rows.shape[0]
                if seen > m:
                    raise DataError(path, f"changed while training: more than the {m} examples of its first pass")
                n = min(T - done, -(-rows.shape[0] // k))
                y = labels.encode(buf.labels) if labels is not None else buf.labels
                sw = None
                if class_weight:
                    sw = np.where(y > 0, weights.get(labels.positive, 1.0), weights.get(labels.negative, 1.0))
                indices = buf.indices
                if columns is not None:
                    indices = np.searchsorted(columns, buf.indices)
                    # a column the first pass did not see would be renumbered past the solver's vectors
                    if indices.size and (int(indices.max()) >= columns.shape[0]
                                         or not np.array_equal(columns[indices], buf.indices)):
                        raise DataError(path, "changed while training: a feature index that its first pass did "
                                              "not have")
                    indices = indices.astype(np.int32, copy=False)
                yield buf.indptr, indices, buf.data, y, sw, rows, n
                done += n
                if done >= T:
                    return
            if seen != m:
                raise DataError(path, f"changed while training: {seen} examples in this pass, {m} in the first")

    try:
        if columns is not None:
            check_weight_memory(n_features)           # the model's weights in all n_features
        w, b = solve(blocks(), dim, options, plan, radius2, progress=progress)
    except ExampleError as error:
        if not getattr(error, "memory_bound", False) or d.largest_index_row < 0:
            raise
        row = d.largest_index_row                     # the line of the largest index is named
        raise ExampleError(f"example {row + 1}: {error.detail}", row, error.detail) from None
    if columns is not None:
        full = np.zeros(n_features, dtype=np.float64)
        full[columns] = w[:columns.shape[0]]
        w = full
    info = options.header(plan, sampling="shuffle-buffer")
    if task != "binary":
        info["task"] = task
    return LinearModel(w=w, bias=b, labels=labels, lam=float(options.lam), bias_mode=options.bias, info=info,
                       loss=options.loss, epsilon=float(options.epsilon) if options.loss == "eps-insensitive"
                       else None)


def train_shuffled(path, *, shuffle_buffer=DEFAULT_SHUFFLE_BUFFER, zero_based=False, dtype=np.float64,
                   progress=None, scanned=None, block_size=BLOCK_SIZE, **settings):
    """Train a linear model in passes over a file through a shuffle buffer (keyword form of :func:`fit_shuffled`).

    Parameters
    ----------
    path : str
        A file (plain or compressed); standard input cannot be read twice,
        use :func:`load_cached` for it.
    shuffle_buffer : int >= 1
        N, the number of examples held in memory (see the module docstring).
    zero_based, dtype :
        As :func:`pegasos.io.read_svmlight`.
    scanned : Scan, optional
        The first pass, if already made.
    **settings
        Fields of :class:`pegasos.options.TrainOptions` (loss hinge, log,
        squared-hinge or eps-insensitive); as the other keyword trainers,
        the paper's defaults (``preset="paper"``) unless set.

    Returns
    -------
    pegasos.linear.LinearModel

    Raises
    ------
    ParameterError, DataError
        As :func:`fit_shuffled`, and settings out of range.
    """
    from .options import TrainOptions

    check_rereadable(path)
    options = TrainOptions(**{"preset": "paper", "shuffle_buffer": shuffle_buffer, **settings})
    if options.loss in ("rank",):
        raise ParameterError(f"the shuffle buffer trains binary classifiers and regression, not the {options.loss} "
                             "loss; use --cache FILE")
    options.validate()
    d = scanned if scanned is not None else scan(path, zero_based, dtype,
                                                 options.epsilon if options.task == "regression" else None)
    from .outcome import record_outcome
    from .solver import Problem, plan

    chosen = plan(Problem(m=d.m, in_memory=False), options)      # Pegasos: the data are not in memory
    return record_outcome(fit_shuffled(d, options, progress=progress, block_size=block_size), chosen, options)
