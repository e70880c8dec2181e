"""Training on files larger than memory.

Two ways:

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

* **Streaming** (``--stream``; chosen by ``pegasos train`` itself for a plain
  file :func:`too_large_for_memory`).  The text is parsed once (:func:`scan`),
  and while it is parsed its rows are written to a :class:`Spill`, an unnamed
  temporary file of 12 bytes per stored value (8 with float32: the values in
  the `--dtype` read, int32 indices)
  and 12 per row; every later pass is one sequential read of the spill.
  Binary classification and regression only.

  - The hinge and squared hinge losses run the dual (:class:`BlockDual`,
    :func:`fit_block_dual`): coordinate ascent block by block, already during
    the text's pass; each pass over the spill trains on and certifies the
    model of the pass before, until its relative gap is within ``tol``.
  - Other losses and Pegasos settings run Pegasos through a **shuffle buffer**
    (:func:`fit_shuffled`, ``--shuffle-buffer N``): rows are read into a
    buffer; whenever it holds N or more, all but N/2 of them, drawn at random,
    are visited in random order, and the N/2 others stay to mix with the next
    rows; at the end of a pass the rest is visited in random order.  The order
    is only shuffled within a window of about N examples (and at least one
    block): a file sorted by label needs a buffer larger than its longest run
    of one label, or the cache.  The scan keeps a uniform sample of rows
    (:class:`Scan` ``sample``), on which :func:`pegasos.fit` calibrates the
    step offset of the "auto" preset.  After each run one more read of the
    spill computes the model's objective and, for the hinge and squared hinge
    losses, a dual point from its margins (:func:`final_pass`); the automatic
    length doubles the epochs from :data:`STREAM_EPOCHS` while that does not
    certify the model.

  Memory: the rows of two blocks of text (4 MiB each), alpha (8 bytes an
  example) or the buffer's N rows, and dense vectors of the features,
  whatever the size of the file.

The cache's build and the scan are the one pass over the text that finds m,
the dimension and the labels before training starts.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .defaults import DENSE_COLUMNS_FLOOR, DEFAULT_SAMPLE_SIZE, DEFAULT_SEED, DEFAULT_SHUFFLE_BUFFER, DUAL_WORK
from .errors import DamagedCacheError, DataError, ExampleError, ParameterError
from .data import check_weight_memory, expand_columns, take_rows
from .io import BLOCK_SIZE, Chunk, LabelInfo, SVMLightData, iter_svmlight
from .model import remove_stale_temporaries

if TYPE_CHECKING:
    from .linear import LinearModel
    from .options import TrainOptions

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
         seed=DEFAULT_SEED, spill=True, spill_dir=None, block_size=BLOCK_SIZE, learner=None):
    """One pass over a file that keeps no rows but a sample (and, with ``spill``, writes them to a
    :class:`Spill`): what training needs to start.

    Parameters
    ----------
    path : str
        A file (plain or compressed), or ``-`` for standard input: it is read once.
    spill : bool
        Write the rows to a :class:`Spill` in ``spill_dir`` (default: the temporary directory, TMPDIR),
        which :func:`fit_shuffled` reads for its epochs.
    block_size : int
        Bytes of text parsed at a time (the spill's blocks hold the rows of one).
    learner : BlockDual or None
        Trains on each block as it is parsed (:meth:`BlockDual.first_pass`), told the examples that the
        bytes read so far promise.

    Returns
    -------
    Scan
        An :class:`pegasos.io.SVMLightData` with an empty ``chunk``; ``n_features``, ``distinct_labels``,
        ``labels_overflow`` and ``n_lines`` as :func:`pegasos.io.read_svmlight`
        gives them.  Extra attributes: ``m`` (examples), ``nnz``,
        ``label_counts`` ({label value: count}, for at most 64 distinct
        values), ``eps_loss_sum`` (sum of max(0, |y| - epsilon), the
        eps-insensitive loss of w = 0, if ``epsilon`` is given), ``sample``:
        a :class:`pegasos.io.Chunk` of min(``sample_size``, m) rows drawn
        uniformly without replacement (each row's key a uniform draw of the
        generator seeded by ``seed``, the rows of the smallest keys kept, in
        file order), on which the step offset is calibrated
        (:func:`pegasos.autotune.calibrate_step_offset`), and ``spill``.

    Raises
    ------
    DataError
        Unreadable file or malformed line, or the spill cannot be written (a full disk).
    """
    summary, counts, eps_sum = {}, {}, 0.0
    kept = _Sample(int(sample_size), seed, dtype)
    used = UsedColumns()
    has_qid = False
    out = Spill(spill_dir, dtype) if spill else None
    size = _source_stamp(path)[0] if learner is not None and _source_stamp(path) is not None else None
    read = [0]

    def count(n):
        read[0] += n
        if progress is not None:
            progress(n)

    try:
        for chunk in iter_svmlight(path, zero_based=zero_based, dtype=dtype, progress=count, summary=summary,
                                   block_size=block_size):
            if learner is not None:
                rows = chunk.first_row + chunk.n_rows
                learner.first_pass(chunk, None if not size or not read[0] else max(rows, rows * size / read[0]))
            kept.offer(chunk)
            used.add(chunk)
            if out is not None:
                out.write(chunk)
            has_qid = has_qid or (chunk.qid is not None and bool((chunk.qid != -1).any()))
            if len(counts) <= 64:
                values, n = _counts(chunk.labels)
                for v, c in zip(values.tolist(), n.tolist()):
                    counts[v] = counts.get(v, 0) + c
            if epsilon is not None:
                eps_sum += float(np.maximum(0.0, np.abs(chunk.labels) - epsilon).sum())
    except BaseException:
        if out is not None:
            out.close()
        raise
    empty = Chunk(np.zeros(0), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=dtype))
    return Scan(path=str(path), chunk=empty, n_features=summary["n_features"],
                distinct_labels=summary["distinct_labels"], labels_overflow=summary["labels_overflow"],
                n_lines=summary["n_lines"], zero_based=bool(zero_based), m=summary["n_examples"],
                nnz_total=summary["nnz"], label_counts=counts, eps_loss_sum=eps_sum, sample=kept.chunk(),
                columns=used.columns(), largest_index_row=used.largest_row, has_qid=has_qid, spill=out,
                first_pass=learner)


#: Peak memory of reading a plain text file into memory and training on it, per byte of text (the 1M- and
#: 4M-row synthetic sets, benchmarks/RESULTS_out_of_core.md): above what the process can allocate,
#: ``pegasos train`` streams the file by itself (:func:`too_large_for_memory`).
IN_MEMORY_PER_TEXT_BYTE = 1.5


def too_large_for_memory(path: str) -> tuple[int, int] | None:
    """(bytes an in-memory run of ``path`` would need, bytes this process can allocate) when the first is
    more, else None.  Only plain regular files are judged (the need of a compressed file or a pipe is not
    known from its size); the allocatable bytes are :func:`pegasos.data.memory_limit`'s (MemAvailable,
    the cgroup's limit less its usage, RLIMIT_AS)."""
    from .data import memory_limit
    from .io import is_plain_text_file

    if path == "-" or _source_stamp(path) is None or not is_plain_text_file(path):
        return None
    need = IN_MEMORY_PER_TEXT_BYTE * os.path.getsize(path)
    limit = memory_limit()
    return (int(need), int(limit)) if limit is not None and need > limit else None




class Spill:
    """The rows of a first pass over a text file, written to an unnamed temporary file as they are
    parsed and read back in sequential blocks, one pass at a time (:meth:`chunks`).

    Layout, per block of the parser (native byte order): int64 rows r and values v; labels float64 (r);
    row lengths int32 (r); indices int32 (v); values in ``values``' type (v), the ``--dtype`` the data are
    read in.  That is 12 bytes a stored value (8 with float32) and 12 a row.  The file has no
    name (``tempfile.TemporaryFile`` in ``directory``, default TMPDIR), so nothing is left behind
    when the process ends, however it ends.

    Attributes
    ----------
    bytes : int
        Bytes written.
    reads : int
        Passes over the spill begun (:meth:`chunks` calls).

    Raises
    ------
    DataError
        The file cannot be created or written (a full disk: set TMPDIR to a disk with room).
    """

    def __init__(self, directory=None, values=np.float64):
        self.where = directory or tempfile.gettempdir()
        self.values = np.dtype(values)
        self.per_value = 4 + self.values.itemsize       # an int32 index and the value
        try:
            self.file = tempfile.TemporaryFile(dir=directory, prefix="pegasos-spill-")
        except OSError as e:
            raise DataError(self.where, f"cannot write the spill of --stream: {e.strerror or e}") from None
        self.bytes, self.reads = 0, 0

    def write(self, chunk):
        """Append the rows of a :class:`pegasos.io.Chunk`."""
        n, nnz = chunk.labels.shape[0], chunk.indices.shape[0]
        if not n:
            return
        parts = (np.array([n, nnz], dtype=np.int64), np.asarray(chunk.labels, dtype=np.float64),
                 np.diff(chunk.indptr).astype(np.int32), np.asarray(chunk.indices, dtype=np.int32),
                 np.asarray(chunk.data, dtype=self.values))
        try:
            for part in parts:
                self.file.write(memoryview(np.ascontiguousarray(part)))
        except OSError as e:
            raise DataError(self.where, f"cannot write the spill of --stream: {e.strerror or e} (it takes "
                                        f"{self.per_value} bytes a stored value: set TMPDIR to a disk with room)") from None
        self.bytes += 16 + 12 * n + self.per_value * nnz

    def chunks(self):
        """One sequential pass: the blocks written, in order, as :class:`pegasos.io.Chunk` (labels float64,
        indptr int64, indices int32, data of the spill's ``values`` type; ``first_row`` counted from 0)."""
        f = self.file
        f.flush()
        f.seek(0)
        self.reads += 1
        first = 0
        while True:
            head = f.read(16)
            if not head:
                return
            n, nnz = (int(v) for v in np.frombuffer(head, dtype=np.int64))
            raw = f.read(12 * n + self.per_value * nnz)
            if len(head) != 16 or len(raw) != 12 * n + self.per_value * nnz:
                raise DataError(self.where, "the spill of --stream was cut short while it was read")
            labels = np.frombuffer(raw, dtype=np.float64, count=n)
            lengths = np.frombuffer(raw, dtype=np.int32, count=n, offset=8 * n)
            indices = np.frombuffer(raw, dtype=np.int32, count=nnz, offset=12 * n)
            data = np.frombuffer(raw, dtype=self.values, count=nnz, offset=12 * n + 4 * nnz)
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lengths, out=indptr[1:])
            yield Chunk(labels, indptr, indices, data, first)
            first += n

    def close(self):
        self.file.close()


def _counts(values):
    """The distinct values of a float array, increasing, and how many times each occurs (by a sort:
    np.unique's hash was the larger part of a scan's time)."""
    ordered = np.sort(values)
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if ordered.size else \
        np.zeros(0, dtype=np.int64)
    return ordered[starts], np.diff(np.append(starts, ordered.shape[0]))


def _distinct(indices):
    """The distinct values of an int32 array of indices >= 0, increasing: by a count of each value when the
    largest is at most a few times the array's length (np.unique's hash took 60% of a scan), else sorted."""
    if not indices.size:
        return indices.astype(np.int32)
    top = int(indices.max())
    if top < max(4 * indices.shape[0], 1 << 16):
        return np.flatnonzero(np.bincount(indices, minlength=top + 1)).astype(np.int32)
    ordered = np.sort(indices)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


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
        distinct = _distinct(chunk.indices)
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
            self.merged = _distinct(np.concatenate([self.merged] + self.pending))
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
    #: the rows, written while the file was read (None: not kept)
    spill: Spill | None = None
    #: the dual state trained while the file was read, or None
    first_pass: BlockDual | None = None

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


def shuffled_rows(chunks, shuffle_buffer, k, rng):
    """One pass over a stream of chunks in shuffle-buffer order.

    The chunks' rows are taken into a buffer.  Once it holds at least
    N = ``shuffle_buffer`` rows, all of them but ``keep`` = N // 2, drawn at
    random, are visited in random order (rounded down to a whole number of
    batches of k); the kept ones stay and mix with the next rows.  At the end
    the rest is visited in random order.  Memory: at most N rows plus the rows
    of one chunk; the work per row does not depend on N.  With N larger than
    the stream, the pass is one uniformly random permutation
    (``rng.permutation(m)``).

    Parameters
    ----------
    chunks : iterable of :class:`pegasos.io.Chunk`
        One pass over the data (:meth:`Spill.chunks`, :func:`pegasos.io.iter_svmlight`).

    Yields
    ------
    (buffer, rows)
        A :class:`Chunk`-like buffer (labels, indptr, indices, data) and the
        int64 positions in it of the examples to visit next, in that order.
        Every example of the stream is visited exactly once.
    """
    keep = shuffle_buffer // 2
    buf, pending, waiting = None, [], 0
    for chunk in chunks:
        if buf is None:
            buf = _Buffer(chunk.data.dtype)
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
    if buf is None:
        return
    buf.add(pending)
    if buf.n_rows:
        yield buf, rng.permutation(buf.n_rows).astype(np.int64, copy=False)


#: The automatic length of a streamed run: one Pegasos epoch over the spill (averaged over its second
#: half), then a pass that certifies it (:func:`final_pass`); while the certified relative gap is above
#: the run's target, the epochs are doubled (each run goes on from the last, its average restarted at
#: the run's first iterate: the second half of the doubled length) up to STREAM_MAX_EPOCHS.  On large data
#: the first epoch is within the target: with the text's first pass, three sequential reads
#: (benchmarks/RESULTS_out_of_core.md).
STREAM_EPOCHS = 1
STREAM_MAX_EPOCHS = 16


def _stream_labels(d, options):
    """(BinaryLabels or None, {label value: class weight} or None, f(0)) of a scanned file for a streamed
    Pegasos run: the objective of w = 0 sets the projection's radius (Sec. 2)."""
    from .labels import BinaryLabels, sample_weights

    labels, weights = None, None
    if options.task == "binary":
        labels = BinaryLabels.from_data(d, allow_one_class=options.allow_one_class)
        values = np.array(sorted(d.label_counts), dtype=np.float64)
        per_value = sample_weights(values, options.class_weight)
        weights = dict(zip(values.tolist(), per_value.tolist() if per_value is not None else [1.0] * values.size))
        f0 = sum(weights[v] * c for v, c in d.label_counts.items()) / d.m
    else:
        f0 = d.eps_loss_sum / d.m
    if options.loss == "log":
        f0 *= math.log(2.0)
    return labels, weights, f0


def _shuffled_model(w, b, columns, n_features, run, plan, labels):
    """The LinearModel of a streamed Pegasos run of ``run``'s settings: ``w`` (on the used ``columns``,
    or None) in all ``n_features``, and the header of the run."""
    from .linear import LinearModel

    if columns is not None:
        w = expand_columns(w, columns, n_features)
    info = run.header(plan, sampling="shuffle-buffer")
    if run.task != "binary":
        info["task"] = run.task
    return LinearModel(w=w, bias=b, labels=labels, lam=float(run.lam), bias_mode=run.bias, info=info,
                       loss=run.loss, epsilon=float(run.epsilon) if run.loss == "eps-insensitive" else None)


def fit_shuffled(d, options, *, progress=None, on_plan=None):
    """Train a linear model in sequential passes over a file's spill, through a shuffle buffer.

    The Pegasos step (Fig. 1 for k = 1, Fig. 2 with Eq. (8) for k > 1, the
    same compiled loop as in-memory training) is applied to the examples in
    the order described in this module's docstring.  Each epoch is a pass
    over the spill that :func:`scan` wrote, so T = epochs * ceil(m / k) as
    with permutation sampling; with the automatic length, the epochs are
    :data:`STREAM_EPOCHS`, doubled while not certified within ``tol`` (for a loss with no certificate
    here, while a doubling gains more than ``tol`` of the objective) up to :data:`STREAM_MAX_EPOCHS`.  One more pass after each run (:func:`final_pass`) gives
    the model's objective (``model.train_objective``) and, for the hinge and
    squared hinge losses with no bias or a feature bias, the certified
    relative gap of a dual point from its margins (header ``certified_gap``,
    ``dual_bound``).

    Parameters
    ----------
    d : Scan
        The file's first pass (:func:`scan`, with its spill; with ``epsilon``
        for the eps-insensitive loss).
    options : pegasos.options.TrainOptions
        Validated settings with ``shuffle_buffer`` N, the examples held in
        memory; loss hinge, log, squared-hinge or eps-insensitive.
    progress : callable(int) or None
        Called with the number of iterations done after each block.
    on_plan : callable(int) or None
        Called once with T before training.

    Returns
    -------
    pegasos.linear.LinearModel
        Its header records ``sampling shuffle-buffer``, the buffer size and
        the ``stream_reads`` (passes over the text and the spill).

    Raises
    ------
    ParameterError
        A Scan without its spill.
    DataError
        Labels unfit for the task, or the spill cannot be read.
    """
    from .linear import projection_radius2, restart_average, solve

    path = d.path
    spill = d.spill
    if spill is None:
        raise ParameterError("the shuffle buffer trains on the spill of a scan: give scan(path) with spill=True")
    m = d.m
    if m == 0:
        raise DataError(path, "no training examples found (the file is empty or holds only comments and "
                              "blank lines)")
    automatic = options.length_is_automatic
    epochs = STREAM_EPOCHS if automatic else options.epochs
    run = options.replace(epochs=epochs) if automatic else options
    plan = run.plan(m, sampling="permutation")
    if on_plan is not None:
        on_plan(plan.T)
    k = plan.k
    class_weight = options.class_weight
    labels, weights, f0 = _stream_labels(d, options)
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

    def blocks(T):
        done = 0
        while done < T:                       # one pass over the spill per epoch
            for buf, rows in shuffled_rows(spill.chunks(), shuffle_buffer, k, rng):
                n = min(T - done, -(-rows.shape[0] // k))
                y = labels.encode(buf.labels) if labels is not None else buf.labels
                sw = None
                if class_weight:
                    sw = np.where(y > 0, weights.get(labels.positive, 1.0), weights.get(labels.negative, 1.0))
                indices = buf.indices
                if columns is not None:
                    indices = np.searchsorted(columns, buf.indices).astype(np.int32, copy=False)
                yield buf.indptr, indices, buf.data, y, sw, rows, n
                done += n
                if done >= T:
                    return

    if columns is not None:
        check_weight_memory(n_features)               # the model's weights in all n_features
    state, T_done, before = None, 0, None
    while True:
        try:
            w, b, state = solve(blocks(plan.T - T_done), dim, run, plan, radius2, progress=progress, state=state,
                                return_state=True)
        except ExampleError as error:
            if not getattr(error, "memory_bound", False) or d.largest_index_row < 0:
                raise
            row = d.largest_index_row                 # the line of the largest index is named
            raise ExampleError(f"example {row + 1}: {error.detail}", row, error.detail) from None
        T_done = plan.T
        model = _shuffled_model(w, b, columns, n_features, run, plan, labels)
        info = model.info
        final = final_pass(model, spill.chunks(), weights, m)
        # done: certified within tol; or, for a loss with no certificate here (log, eps-insensitive), the
        # doubling's test of the in-memory automatic length (it gained less than tol of the objective)
        f = float(final.objective["objective"])
        settled = (final.gap <= options.tol if final.gap is not None
                   else before is not None and abs(before - f) <= options.tol * abs(f))
        if not automatic or settled or 2 * epochs > STREAM_MAX_EPOCHS:
            break
        before = f
        epochs *= 2                                   # go on to the doubled length, its average restarted
        run = options.replace(epochs=epochs)
        plan = run.plan(m, sampling="permutation")
        if plan.avg_start:                            # the average of the iterates after the last run's
            state = restart_average(state, max(plan.avg_start, int(state["t"]) + 1))
        if on_plan is not None:
            on_plan(plan.T)
    model.train_objective = final.objective
    if final.gap is not None:
        info["certified_gap"] = repr(final.gap)
        info["dual_bound"] = repr(final.dual)
    if automatic:
        info["stop"] = ("stream passes" if not settled else "certified" if final.gap is not None else "converged")
        info["epochs"] = f"{epochs:g}"
    info["stream_reads"] = f"text 1, spill {spill.reads}"
    return model


#: passes over the spill in a streamed dual run (each certifies the model of the pass before): at least
#: this many, and more while their work stays within pegasos.defaults.DUAL_WORK, the in-memory dual's bound
#: (about 20 passes on 4M rows of 50 values; a 10,000-row set stopped at 20 passes with a certified gap of 12%)
STREAM_MAX_PASSES = 20


class BlockDual:
    """Dual coordinate ascent on a stream of blocks (block minimization: Yu, Hsieh, Chang and Lin, KDD
    2010; within a block one pass of Hsieh et al. 2008, Algorithm 1, over its rows in random order, the
    compiled ``pegasos._dual.coordinate_ascent``).

    The dual of paper Eq. (1) in LIBLINEAR's scaling: 0 <= alpha_i <= C_i = c_i / (lambda m) for the
    hinge (alpha_i >= 0, D_ii = 1 / (2 C_i) for the squared hinge), v = sum_i alpha_i y_i x_i (the bias
    a constant feature 1 in the last slot), the model w = v.  alpha is kept per block (8 bytes an
    example), v densely (8 bytes a feature).

    During the first pass over the text (:meth:`first_pass`) m is not known yet: each block is trained
    with C_i from the examples the bytes read so far promise, m' >= the rows read.  Afterwards
    (:meth:`settle`) alpha and v are scaled by min(1, min m' / m) for the hinge, which makes the point
    feasible for the true m (the squared hinge needs no scaling); the point stays a valid start, however
    wrong m' was.  Training in the first pass is skipped where it cannot be done: no size (standard input),
    fewer than two labels seen yet, a feature index at or beyond ``DENSE_COLUMNS_FLOOR``.
    """

    def __init__(self, lam, loss, bias_value, class_weight, seed):
        self.lam, self.loss, self.bias_value = float(lam), loss, float(bias_value)
        self.class_weight = {float(k): float(v) for k, v in (class_weight or {}).items()}
        self.alphas = []
        self.v = np.zeros(1)
        self.state = np.array([seed], dtype=np.uint64)
        self.smallest_m = math.inf          # the smallest m' a first-pass block was trained with
        self.pair = None
        self.first_pass_on = True

    def _terms(self, chunk, y, m):
        from . import _dual

        c = np.ones(y.shape[0])
        for value, weight in self.class_weight.items():
            c[chunk.labels == float(value)] = weight
        C = c / (self.lam * m)
        norms = np.empty(y.shape[0])
        _dual.row_norms(chunk.indptr, chunk.data, norms)
        if self.loss == "hinge":
            upper, diag = C, np.zeros(y.shape[0])
        else:
            upper = np.where(C > 0, np.inf, 0.0)
            diag = np.zeros(y.shape[0])
            np.divide(0.5, C, out=diag, where=C > 0)
        return upper, diag, norms + self.bias_value ** 2 + diag

    def step(self, chunk, indices, y, m, alpha):
        """One pass over the rows of ``chunk`` (columns ``indices``, labels ``y`` in {-1, +1}) as m
        examples' block, alpha (float64, its rows) and v updated in place."""
        from . import _dual

        upper, diag, qii = self._terms(chunk, y, m)
        order = np.arange(y.shape[0], dtype=np.int64)
        _dual.coordinate_ascent(chunk.indptr, indices, chunk.data, y, upper, diag, qii, self.bias_value,
                                alpha, self.v, order, self.state, 1, math.inf, np.empty(1))

    def first_pass(self, chunk, m_promised):
        """Train on a block of the text's first pass (see the class docstring); its alpha kept."""
        alpha = np.zeros(chunk.n_rows)
        self.alphas.append(alpha)
        if not self.first_pass_on or m_promised is None:
            return
        top = int(chunk.indices.max()) + 1 if chunk.indices.size else 0
        if top >= DENSE_COLUMNS_FLOOR:
            self.first_pass_on = False
            return
        values, _ = _counts(chunk.labels)
        seen = sorted(set(values.tolist()) | set(self.pair or ()))
        if len(seen) > 2:
            self.first_pass_on = False              # (the scan refuses it, or it is not binary)
            return
        self.pair = tuple(seen)
        if len(seen) < 2:
            return
        if top + 1 > self.v.shape[0]:
            grown = np.zeros(max(top + 1, 2 * self.v.shape[0] - 1))
            grown[:self.v.shape[0] - 1] = self.v[:-1]
            grown[-1] = self.v[-1]
            self.v = grown
        y = np.where(chunk.labels == seen[1], 1.0, -1.0)
        self.smallest_m = min(self.smallest_m, m_promised)
        self.step(chunk, chunk.indices, y, m_promised, alpha)

    def settle(self, m, n_cols, columns, labels, trained=True):
        """After the first pass: v in the ``n_cols`` training columns (``columns``: the used ones,
        renumbered; None: all), alpha and v scaled into the box of the true ``m``.  A first pass whose
        label pair is not ``labels``', or one of other settings (``trained`` False), is dropped."""
        trained = trained and self.first_pass_on and self.pair is not None and len(self.pair) == 2 \
            and self.pair == (labels.negative, labels.positive) and math.isfinite(self.smallest_m)
        self.first_pass_on = trained
        v = np.zeros(n_cols + 1)
        if trained:
            old = self.v[:-1]
            if columns is None:
                v[:min(n_cols, old.shape[0])] = old[:n_cols]
            else:
                inside = columns[columns < old.shape[0]]
                v[:inside.shape[0]] = old[inside]
            v[-1] = self.v[-1]
            scale = min(1.0, self.smallest_m / m) if self.loss == "hinge" else 1.0
            v *= scale
            for alpha in self.alphas:
                alpha *= scale
        else:
            for alpha in self.alphas:
                alpha[:] = 0.0
        self.v = v

    def value(self, m, c):
        """D(alpha) in the primal scaling (<= f*), from the kept alpha and v (compensated sums); ``c``
        the class weight of each example (float64 (m,), for the squared hinge's D_ii; None: all 1)."""
        from . import _dual

        alpha = np.concatenate(self.alphas) if self.alphas else np.zeros(0)
        diag = np.zeros(alpha.shape[0])
        if self.loss == "squared-hinge":
            c = np.ones(alpha.shape[0]) if c is None else c
            np.divide(0.5 * self.lam * m, c, out=diag, where=c > 0)
        total, square, curvature = _dual.dual_sums(alpha, self.v, diag)
        value = self.lam * (total - 0.5 * square - 0.5 * curvature)
        return value if math.isfinite(value) and value > 0.0 else 0.0


def first_pass_learner(options: TrainOptions) -> BlockDual | None:
    """The :class:`BlockDual` that trains during the text's first pass of a streamed run of ``options``
    (validated, with ``shuffle_buffer``), or None where the run is not the dual's
    (:func:`pegasos.solver.plan` of streamed data)."""
    from .solver import Problem, Solver, plan

    if plan(Problem(m=0, in_memory=False, streamed=True), options).solver is not Solver.DUAL:
        return None
    return BlockDual(options.lam, options.loss, 1.0 if options.bias == "feature" else 0.0, options.class_weight,
                     options.seed)


def fit_block_dual(d: Scan, options: TrainOptions, learner: BlockDual | None = None, *,
                   progress: Callable[[int], object] | None = None) -> LinearModel:
    """Train a linear binary SVM by dual coordinate ascent over the spill's blocks, certified as it goes.

    The first pass over the text (:func:`scan` with ``learner``) already trained on each block.  Every
    pass over the spill then runs one pass of ``learner`` over each block and, with the model w of the
    pass before frozen, sums its objective P(w); at the end of the pass D(alpha) <= f*, so
    (P(w) - D) / P is that model's certified relative gap.  The passes stop when it is within
    ``options.tol`` (that model is returned), or after :data:`STREAM_MAX_PASSES` or more, as many as
    :data:`pegasos.defaults.DUAL_WORK` allows.  With a first pass
    that trained, a run certified at once reads the text once and the spill twice.

    Parameters
    ----------
    d : Scan
        The first pass, with its spill.
    options : pegasos.options.TrainOptions
        Validated; loss hinge or squared-hinge, bias none or feature.
    learner : BlockDual or None
        The one the scan trained (its alpha per block, v); None: ``d.first_pass``, or a new one.
    progress : callable(int) or None
        Called with the examples of each block trained on.

    Returns
    -------
    pegasos.linear.LinearModel
        Its header: ``finish dual``, ``finish_passes`` (passes over the spill), ``certified_gap``,
        ``dual_bound`` and ``stream_reads``; ``train_objective`` the objective of its last pass.

    Raises
    ------
    DataError
        Labels unfit for binary training, or the spill cannot be read.
    """
    from .labels import BinaryLabels
    from .linear import LinearModel
    from .scoring import RunningObjective

    spill, m = d.spill, d.m
    if spill is None:
        raise ParameterError("the streamed dual trains on the spill of a scan: give scan(path) with spill=True")
    dual_state: BlockDual = learner or d.first_pass or BlockDual(
        options.lam, options.loss, 1.0 if options.bias == "feature" else 0.0, options.class_weight, options.seed)
    if m == 0:
        raise DataError(d.path, "no training examples found (the file is empty or holds only comments and "
                                "blank lines)")
    labels = BinaryLabels.from_data(d, allow_one_class=options.allow_one_class)
    weights = {float(k): float(v) for k, v in (options.class_weight or {}).items()}
    n_features = d.n_features
    columns = d.columns if d.columns is not None and d.columns.shape[0] < n_features // 2 else None
    dim = n_features if columns is None else max(int(columns.shape[0]), 1)
    if columns is not None:
        try:
            check_weight_memory(n_features)           # the model's weights in all n_features
        except ExampleError as error:
            if not getattr(error, "memory_bound", False) or d.largest_index_row < 0:
                raise
            row = d.largest_index_row                 # the line of the largest index is named
            raise ExampleError(f"example {row + 1}: {error.detail}", row, error.detail) from None
    same = (dual_state.lam, dual_state.loss, dual_state.bias_value, dual_state.class_weight) == \
        (float(options.lam), options.loss, 1.0 if options.bias == "feature" else 0.0, weights)
    dual_state.settle(m, dim, columns, labels, trained=same)
    feature = options.bias == "feature"

    def model_of(v, info):
        w = v[:dim].copy() if columns is None else expand_columns(v, columns, n_features)
        return LinearModel(w=w, bias=float(v[dim]) if feature else 0.0, labels=labels, lam=float(options.lam),
                           bias_mode=options.bias, info=info, loss=options.loss)

    plan = options.replace(iterations=0, epochs=None).plan(m, sampling="permutation")
    info = options.replace(iterations=0, epochs=None).header(plan, sampling="shuffle-buffer")
    info.pop("shuffle_buffer", None)
    previous: np.ndarray | None = None
    final: tuple | None = None
    passes = 0
    block_c: list[np.ndarray] = []
    max_passes = max(STREAM_MAX_PASSES, DUAL_WORK // max(1, m + d.nnz))
    while passes < max_passes:
        frozen: LinearModel | None = None if previous is None else model_of(previous, dict(info))
        scored = None if frozen is None else RunningObjective(frozen)
        collect = not block_c
        for i, chunk in enumerate(spill.chunks()):
            if i == len(dual_state.alphas):
                dual_state.alphas.append(np.zeros(chunk.n_rows))
            y = labels.encode(chunk.labels)
            indices = chunk.indices if columns is None else \
                np.searchsorted(columns, chunk.indices).astype(np.int32, copy=False)
            if frozen is not None and scored is not None:
                scored.add(frozen.decision_function(chunk), chunk.labels)
            if collect and weights and options.loss == "squared-hinge":
                c = np.ones(y.shape[0])
                for value, weight in weights.items():
                    c[chunk.labels == value] = weight
                block_c.append(c)
            dual_state.step(Chunk(chunk.labels, chunk.indptr, indices, chunk.data), indices, y, m, dual_state.alphas[i])
            if progress is not None:
                progress(chunk.n_rows)
        passes += 1
        dual = dual_state.value(m, np.concatenate(block_c) if block_c else None)
        if scored is not None:
            objective = scored.result()             # pegasos.scoring's numbers, as eval and objective give
            primal = float(objective["objective"])
            gap = min(1.0, max(0.0, (primal - dual) / primal)) if primal > 0 else 0.0
            final = (frozen, primal, dual, gap, objective)
            if gap <= options.tol:
                break
        previous = dual_state.v.copy()
    if final is None:                                 # (STREAM_MAX_PASSES >= 2: never)
        raise ParameterError("no certified pass")
    model, primal, dual, gap, objective = final
    model.info["finish"] = "dual"
    model.info["finish_passes"] = str(passes - 1 + dual_state.first_pass_on)
    model.info["certified_gap"] = repr(gap)
    model.info["dual_bound"] = repr(dual)
    model.info["stream_reads"] = f"text 1, spill {spill.reads}"
    model.train_objective = objective
    return model


@dataclass
class FinalPass:
    """What one pass over the data with a trained model gives (:func:`final_pass`).

    Attributes
    ----------
    objective : dict
        As :func:`pegasos.scoring.objective` returns it (``objective``, ``regularizer``, ``mean_loss``,
        ``hinge_loss``, ``norm_w``, ``error_rate``, ...), the class weights in the loss.
    dual : float or None
        D(alpha) <= f*, the dual value of the point from the margins (None: no dual for the loss).
    gap : float or None
        The relative gap (P - D) / P, which bounds (P - f*) / P from above.
    """

    objective: dict
    dual: float | None = None
    gap: float | None = None


def final_pass(model: LinearModel, chunks: Iterable[Chunk], weights: dict | None, m: int) -> FinalPass:
    """The objective P(w) of a binary or regression ``model`` and a dual bound D <= f*, in one pass.

    The dual point is the start of :mod:`pegasos.certificate` from the margins z_i = y_i f(x_i):
    alpha_i = C_i where z_i < 1, else 0 (hinge), alpha_i = 2 C_i max(0, 1 - z_i) (squared hinge),
    with C_i = c_i / (lambda m); its v = sum_i alpha_i y_i x_i (the bias a constant feature 1 under
    ``bias_mode == "feature"``) is summed over the pass, and the point is then scaled by the factor
    s = A / B that maximises D(s alpha) = lambda (s A - s^2 B / 2), capped at 1 for the hinge's box
    (A = sum alpha, B = ||v||^2 + sum alpha_i^2 / (2 C_i) for the squared hinge).  By weak duality
    D <= f* whatever alpha (Hsieh et al. 2008, Sec. 2; the dual of paper Eq. (1)).

    Parameters
    ----------
    model : pegasos.linear.LinearModel
        Weights w float64 (n,), in the features of the chunks.
    chunks : iterable of :class:`pegasos.io.Chunk`
        The m examples, raw labels.
    weights : dict or None
        Class weight c of each label value (binary); None for regression.
    m : int
        The examples in ``chunks``.

    Returns
    -------
    FinalPass
    """
    from .linear import example_losses
    from .scoring import RunningObjective

    labels = model.labels
    binary = labels is not None
    lam, loss = float(model.lam), model.loss
    dual = binary and loss in ("hinge", "squared-hinge") and model.bias_mode in ("none", "feature")
    feature_bias = model.bias_mode == "feature"
    n = model.w.shape[0]
    v = np.zeros(n + 1 if dual else 0)
    total_loss = alpha_sum = curvature = 0.0
    seen = 0
    scored = RunningObjective(model) if binary else None      # pegasos.scoring's numbers, as eval gives them
    scale = 1.0 / (lam * m)
    for chunk in chunks:
        f = model.decision_function(chunk)
        y = labels.encode(chunk.labels) if labels is not None else np.asarray(chunk.labels, dtype=np.float64)
        c = np.ones(f.shape[0])
        if binary and weights:
            for value, weight in weights.items():
                c[chunk.labels == value] = weight
        seen += f.shape[0]
        if scored is not None:
            scored.add(f, chunk.labels)
        else:
            total_loss += float(example_losses(loss, f, y, model.epsilon).sum())
        if dual:
            z = y * f
            upper = c * scale
            if loss == "hinge":
                alpha = np.where(z < 1.0, upper, 0.0)
            else:
                alpha = 2.0 * upper * np.maximum(0.0, 1.0 - z)
                positive = upper > 0
                curvature += float((alpha[positive] ** 2 / (2.0 * upper[positive])).sum())
            alpha_sum += float(alpha.sum())
            coef = np.repeat(alpha * y, np.diff(chunk.indptr))
            v[:n] += np.bincount(chunk.indices, weights=coef * chunk.data, minlength=n)[:n]
            if feature_bias:
                v[n] += float((alpha * y).sum())
    if scored is not None:
        objective: dict[str, Any] = scored.result()
    else:                                       # regression: the eps-insensitive loss, no class weights
        sqw = float(np.dot(model.w, model.w))
        reg = 0.5 * lam * (sqw + (model.bias ** 2 if feature_bias else 0.0))
        objective = {"examples": seen, "lambda": lam, "objective": reg + total_loss / max(seen, 1),
                     "regularizer": reg, "loss": loss, "mean_loss": total_loss / max(seen, 1),
                     "norm_w": math.sqrt(sqw), "bias": float(model.bias), "bias_mode": model.bias_mode}
    if not dual:
        return FinalPass(objective)
    b = float(np.dot(v, v)) + curvature
    s = alpha_sum / b if b > 0 else 1.0
    if loss == "hinge":
        s = min(s, 1.0)
    value = lam * (s * alpha_sum - 0.5 * s * s * b)
    value = value if math.isfinite(value) and value > 0.0 else 0.0
    primal = float(objective["objective"])
    gap = min(1.0, max(0.0, (primal - value) / primal)) if primal > 0 else 0.0
    return FinalPass(objective, value, gap)


def train_shuffled(path, *, shuffle_buffer=DEFAULT_SHUFFLE_BUFFER, zero_based=False, dtype=np.float64,
                   progress=None, scanned=None, block_size=BLOCK_SIZE, **settings):
    """Train a linear model in passes over a file through a shuffle buffer (keyword form of :func:`fit_shuffled`).

    Parameters
    ----------
    path : str
        A file (plain or compressed), or ``-`` for standard input: the text is read once.
    shuffle_buffer : int >= 1
        N, the number of examples held in memory (see the module docstring).
    zero_based, dtype :
        As :func:`pegasos.io.read_svmlight`.
    scanned : Scan, optional
        The first pass, if already made (with its spill).
    block_size : int
        Bytes of text parsed at a time: the blocks of the spill (the buffer also holds one block's rows).
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

    options = TrainOptions(**{"preset": "paper", "shuffle_buffer": shuffle_buffer, **settings})
    if options.loss in ("rank",):
        raise ParameterError(f"the shuffle buffer trains binary classifiers and regression, not the {options.loss} "
                             "loss; use --cache FILE")
    options.validate()
    from .outcome import record_outcome
    from .solver import Problem, plan

    d = scanned if scanned is not None else scan(path, zero_based, dtype,
                                                 options.epsilon if options.task == "regression" else None,
                                                 block_size=block_size)
    chosen = plan(Problem(m=d.m, in_memory=False), options)      # Pegasos through the shuffle buffer
    try:
        return record_outcome(fit_shuffled(d, options, progress=progress), chosen, options)
    finally:
        if scanned is None:
            d.spill.close()
