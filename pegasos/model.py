"""Plain-text model files (format version 1).

Layout: a header of ``key value`` lines, a ``weights N`` line, N lines
``index:value`` (non-zero weights only, increasing index, in the index base of
the training data), and a final ``end`` line::

    pegasos_model 1
    kind linear
    loss hinge
    lambda 0.0001
    ...
    bias 0.0
    label_negative -1
    label_positive +1
    n_features 123
    index_base 1
    weights 2
    3:0.25
    17:-1.5
    end

Floats are written with Python's ``repr`` (the shortest text that reads back
as the same double), so a model survives save/load bit for bit, and loading
then saving gives the same bytes.  Files are written to a temporary file in
the target directory and renamed into place, so a reader never sees half a
model; ``/dev/stdout`` and the like, FIFOs and devices are written directly
(see :func:`atomic_write`).  CRLF line ends and a missing final newline are
accepted.
"""

import errno
import math
import os
import re
import stat
import sys
import tempfile

import numpy as np

from .defaults import SAMPLINGS, SCHEDULES
from .errors import DataError, ModelFormatError, ParameterError, PegasosError
from .outcome import PEGASOS_KEYS, dual_only

MAGIC = "pegasos_model"
VERSION = 1

# header keys in the order they are written; the value "-" means "not applicable"
HEADER_KEYS = (
    "kind", "loss", "lambda", "iterations", "batch_size", "sampling", "projection", "averaging",
    "average_from", "averaged_iterates", "bias_mode", "bias", "label_negative", "label_positive",
    "n_features", "index_base", "seed", "train_file", "train_examples",
)
# written after those only when they apply (absent: binary task, no class weights)
OPTIONAL_KEYS: tuple[str, ...]    # extended below
OPTIONAL_KEYS = ("solver", "solver_reason", "stop", "tol", "task", "epsilon", "class_weights", "multiclass",
                 "classes", "class_labels", "cost_matrix",
                 "step_offset", "schedule", "eta", "shuffle_buffer", "step_offset_rule", "eta0", "epochs",
                 "epochs_trained", "stopping", "finish", "finish_passes", "finish_kept",
                 "certified_gap", "early_stop", "early_stop_metric", "best_iteration", "best_validation", "warm_start")
# training on shards (pegasos.engine_dask): the engine, the shard count, the rounds between model averages,
# the guarantee of averaging mode, how k was chosen when the user gave none
OPTIONAL_KEYS += ("engine", "shards", "sync_every", "guarantee", "batch_size_rule")
# a streamed run (pegasos.stream): its reads of the text and of the spill, the dual bound it proved
OPTIONAL_KEYS += ("stream_reads", "dual_bound")
TASKS = ("binary", "regression", "ranking", "multiclass")
LOSSES = {"binary": ("hinge", "log", "squared-hinge"), "regression": ("eps-insensitive",), "ranking": ("rank",),
          "multiclass": ("hinge", "log", "squared-hinge")}


def check_float(text, path, line, what):
    try:
        v = float(text)
    except ValueError:
        raise ModelFormatError(path, f"{what} {text!r} is not a number", line) from None
    if not math.isfinite(v):
        raise ModelFormatError(path, f"{what} {text!r} is not finite", line)
    return v


def model_text(model):
    """The model file contents of any model (its ``to_text()``) as a string."""
    if not hasattr(model, "to_text"):
        raise TypeError(f"model_text expects a pegasos model, not {type(model).__name__}")
    return model.to_text()


def linear_model_text(model):
    """The file contents of a linear model (binary, regression, ranking: ``w``; multiclass: ``W``)."""
    multi = hasattr(model, "W")
    base = int(model.info.get("index_base", "1"))
    header = dict(model.info)
    header.update({
        "kind": "linear",
        "loss": model.loss,
        "lambda": repr(float(model.lam)),
        "bias_mode": model.bias_mode,
        "bias": "-" if multi else repr(float(model.bias)),
        "label_negative": model.labels.negative_text if model.labels is not None else "-",
        "label_positive": model.labels.positive_text if model.labels is not None else "-",
        "n_features": str(model.n_features),
        "index_base": str(base),
    })
    if model.task != "binary":
        header["task"] = model.task
    if multi:
        header["multiclass"] = model.method
        header["classes"] = str(model.n_classes)
        header["class_labels"] = " ".join(model.class_texts)
        if model.cost is not None:
            header["cost_matrix"] = ";".join(",".join(repr(float(v)) for v in row)
                                             for row in np.asarray(model.cost).reshape(model.n_classes, -1))
    lines = [f"{MAGIC} {VERSION}"]
    for key in header_keys(header, HEADER_KEYS + OPTIONAL_KEYS):
        if key in HEADER_KEYS or key in header:
            value = str(header.get(key, "-")).replace("\n", " ").replace("\r", " ") or "-"
            lines.append(f"{key} {value}")
    if multi:
        W, biases = model.checked_weights()
        for c in range(model.n_classes):
            lines.append(f"class {model.class_texts[c]}")
            lines.append(f"bias {float(biases[c])!r}")
            lines.extend(weight_lines(W[c], base, biases[c]))
    else:
        lines.extend(weight_lines(model.checked_weights(), base, model.bias))
        if getattr(model, "save_state", False) and model.solver_state is not None and model.task != "ranking":
            lines.extend(resume_lines(model.solver_state))
    lines.append("end")
    return "\n".join(lines) + "\n"


def model_array(value, what, shape):
    """A model's array ``value`` as C-contiguous float64 of ``shape`` (a tuple; None in it: any length).
    A model's arrays are its caller's, who may have edited or replaced them since training; they are
    checked where a compiled loop or the file writer takes them.

    Raises
    ------
    ParameterError
        Not an array of numbers of that shape (naming the model's ``what``).
    """
    a = np.asarray(value)
    if (a.dtype.kind not in "fiu" or a.ndim != len(shape)
            or any(want is not None and want != got for want, got in zip(shape, a.shape))):
        need = " x ".join("any" if n is None else str(n) for n in shape)
        raise ParameterError(f"the model's {what} has shape {a.shape} and type {a.dtype}; it needs an array of "
                             f"numbers of shape ({need})")
    return np.ascontiguousarray(a, dtype=np.float64)


def weight_lines(w, base, bias=0.0):
    """The ``weights N`` line and the ``index:value`` lines of the non-zero weights ``w`` (float (n,)).

    Raises
    ------
    ParameterError
        A weight or the ``bias`` is nan or infinite (set in Python: no training ends there); the file would
        not load, so nothing is written.
    """
    nz = np.flatnonzero(w)
    values = np.asarray(w)[nz]
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        j = int(nz[bad[0]])
        raise ParameterError(f"the model's weight of feature {j + base} is {float(w[j])!r}: a model with a weight "
                             "that is not a finite number is not written (it could not be loaded)")
    if not math.isfinite(float(bias)):
        raise ParameterError(f"the model's bias is {float(bias)!r}: a model with a bias that is not a finite "
                             "number is not written (it could not be loaded)")
    return [f"weights {nz.size}"] + [f"{j + base}:{float(w[j])!r}" for j in nz.tolist()]


def read_weights(path, lines, i, n, base):
    """Parse ``weights N`` at lines[i] and its N lines ``index:value``.

    The N lines are parsed in compiled code (:func:`pegasos._svmlight.parse_weight_block`:
    strtod, bit-identical to ``float`` of the text), which checks every line: an index in
    ``base..n-1+base`` and above the previous one, a finite decimal value.

    Returns
    -------
    (w, next i)
        ``w`` float64 of shape (n,), zero where no line names the column.

    Raises
    ------
    ModelFormatError
        A bad ``weights`` line or count, too few lines, or the first bad weight line,
        naming the file and line.
    """
    cols, values, after = read_weight_entries(path, lines, i, n, base)
    w = np.zeros(n, dtype=np.float64)
    w[cols] = values
    return w, after


def read_weight_entries(path, lines, i, n, base):
    """:func:`read_weights`'s lines as (columns int64, values float64, next i): the weights written, without
    the dense vector, so that a multiclass model puts each class's into its row of W (a copy of a dense row
    per class wrote every page of W: 6.9 GB to load 105 classes of n_features 8e6 whose file is 68 MB)."""
    key, _, count_text = lines[i].strip().partition(" ") if i < len(lines) else ("", "", "")
    if key != "weights":
        raise ModelFormatError(path, "truncated or damaged model file: expected a 'weights' line", i + 1)
    if not count_text.strip().isdigit():
        raise ModelFormatError(path, f"bad weight count {count_text!r}", i + 1)
    count = int(count_text)
    if i + 1 + count > len(lines):
        raise ModelFormatError(path, f"truncated or damaged model file: expected {count} weight lines "
                                     "and a final 'end' line")
    cols, values = parse_weight_block(path, lines[i + 1:i + 1 + count], n, base, i + 2)
    with np.errstate(over="ignore"):
        squared = float(np.dot(values, values)) if values.size else 0.0
    if not math.isfinite(squared):     # no training ends there (||w|| <= 1/sqrt(lambda) at the optimum)
        j = int(np.argmax(np.abs(values)))
        raise ModelFormatError(path, f"weight {float(values[j])!r} is too large: the squared norm of the weights "
                                     "overflows float64", i + 2 + j)
    return cols, values, i + 1 + count


def parse_weight_block(path, block, n, base, first_line):
    """(columns int64, values float64), both of shape (len(block),), of the weight lines
    ``block`` (``first_line`` is the file line of block[0], for messages).

    Raises
    ------
    ModelFormatError
        At the first bad line: not ``index:value``, an index outside the features or not
        increasing, a value that is not a decimal number or not finite (nan, inf, beyond
        the double range); an ``end`` line in the block (a truncated file).
    """
    from . import _svmlight

    if not block:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    try:
        text = ("\n".join(block) + "\n").encode("utf-8")
    except UnicodeEncodeError:          # a lone surrogate cannot come from decoded UTF-8
        text = b""
    cols, values, code, j = _svmlight.parse_weight_block(text, len(block), n, base)
    if code == _svmlight.WEIGHT_OK:
        return cols, values
    if code in (_svmlight.WEIGHT_END, _svmlight.WEIGHT_SHORT):
        raise ModelFormatError(path, f"truncated or damaged model file: expected {len(block)} weight lines "
                                     "and a final 'end' line")
    line, lineno = block[j], first_line + j
    idx_text, _, val_text = line.strip().partition(":")
    if code == _svmlight.WEIGHT_NOT_INDEX_VALUE:
        raise ModelFormatError(path, f"weight line {line[:60]!r} is not index:value", lineno)
    if code == _svmlight.WEIGHT_OUTSIDE:
        raise ModelFormatError(path, f"weight index {idx_text} is outside {base}..{n - 1 + base}", lineno)
    if code == _svmlight.WEIGHT_NOT_INCREASING:
        raise ModelFormatError(path, f"weight index {idx_text} is not increasing", lineno)
    if code == _svmlight.WEIGHT_NOT_FINITE:
        raise ModelFormatError(path, f"weight {val_text!r} is not finite", lineno)
    raise ModelFormatError(path, f"weight {val_text!r} is not a number", lineno)


def read_index_value(text, path, lineno, base, n, last, noun, span, value_noun, shown=None, width=40, prefix=""):
    """Parse one ``index:value`` token of a model file (weights, support vectors).

    Parameters
    ----------
    text : str
        The token, without surrounding whitespace.
    base : int
        Index base of the file (0 or 1); ``n`` the number of features.
    last : int
        Column of the previous token of the same run (-1 for none): indices
        must increase.
    noun, span, value_noun : str
        Words of the messages: "{noun} index I is outside {span}", "{noun}
        index I is not increasing", and what the value is called.
    shown, width, prefix : str, int, str
        When the token is not ``index:value``, the message quotes the first
        ``width`` characters of ``shown`` (default ``text``) after ``prefix``.

    Returns
    -------
    (int, float)
        Zero-based column and value.

    Raises
    ------
    ModelFormatError
        Naming the file and line.
    """
    idx_text, sep, val_text = text.partition(":")
    if not sep or not idx_text.isdigit():
        quoted = (text if shown is None else shown)[:width]
        raise ModelFormatError(path, f"{prefix}{quoted!r} is not index:value", lineno)
    col = int(idx_text) - base
    if col < 0 or col >= n:
        raise ModelFormatError(path, f"{noun} index {idx_text} is outside {span}", lineno)
    if col <= last:
        raise ModelFormatError(path, f"{noun} index {idx_text} is not increasing", lineno)
    return col, check_float(val_text, path, lineno, value_noun)


def first_line_shown(first):
    """How an error shows the first line (bytes) of a file that is not a model: the line quoted when it
    is text, else that it is binary (its bytes, escaped, would fill the terminal with noise)."""
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        return f"its first line is binary data, not text: {first[:16]!r}..."
    return f"first line is {text[:60]!r}"


def atomic_write(path, write, binary=False):
    """Write ``path`` with ``write(fileobj)`` (a text file, UTF-8, ``\\n`` line ends;
    with ``binary`` a binary file: figures, checkpoints).

    * A path that names a file descriptor this process already has open
      (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``,
      ``/proc/<own pid>/fd/N``, or a symlink to one of them) is written
      through a duplicate of that descriptor, which is then closed: the
      original stays open and is neither truncated nor moved, so shell
      redirections such as ``>> file`` and ``(...) > file`` keep the rest.
    * Any other existing path that is not a regular file (a FIFO, a device
      such as ``/dev/null``) is opened and written directly.
    * Otherwise the text goes to a temporary file in the target directory,
      which is then renamed over ``path`` (keeping the mode of a file it
      replaces; a symlink is followed, not replaced), so a reader never sees
      half a file and an interrupted run leaves nothing behind.

    Raises
    ------
    PegasosError
        The path cannot be written (the message names it as given); nothing
        is left behind for a regular file.
    BrokenPipeError
        The reader of a pipe went away (the command line stops quietly).
    """
    shown = os.fspath(path)
    how = ("wb", {}) if binary else ("w", {"encoding": "utf-8", "newline": "\n"})
    fd = open_descriptor(shown)
    if fd is not None:
        _write_descriptor(shown, fd, write, how)
        return
    try:
        st = os.stat(shown)
    except OSError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise PegasosError(f"cannot write {shown}: it is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        # a device or FIFO cannot be replaced by a rename: write to it directly
        try:
            with open(shown, how[0], **how[1]) as f:
                write(f)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _cannot_write(shown, e) from None
        return
    if st is not None and not st.st_mode & 0o222:
        raise PegasosError(f"cannot write {shown}: it is write-protected (mode {st.st_mode & 0o7777:04o}); "
                           "make it writable (chmod u+w) or remove it to replace it")
    real = os.path.realpath(shown)      # write through a symlink, not over it
    mode = (st.st_mode & 0o7777) if st is not None else (0o666 & ~_umask())
    remove_stale_temporaries(real)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(real)}.{os.getpid()}.", suffix=".tmp",
                                   dir=os.path.dirname(real))
    except OSError as e:
        raise _cannot_write(shown, e) from None
    try:
        with os.fdopen(fd, how[0], **how[1]) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise _cannot_write(shown, e) from None
        raise


def remove_stale_temporaries(real):
    """Remove the temporary files ``.NAME.PID.*.tmp`` that writers of ``real`` killed before
    their rename left behind (their process PID is gone); those of live writers stay."""
    directory, name = os.path.split(real)
    pattern = re.compile(r"\." + re.escape(name) + r"\.(\d+)\.[^/]*\.tmp\Z")
    try:
        entries = os.listdir(directory or ".")
    except OSError:
        return
    for entry in entries:
        found = pattern.match(entry)
        if not found or int(found.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(found.group(1)), 0)
            continue                    # its writer is still running
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, ValueError):
            continue
        try:
            os.unlink(os.path.join(directory, entry))
        except OSError:
            pass


# /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N, /proc/PID/task/TID/fd/N
_FD_PATH = re.compile(r"/(?:dev/fd|proc/(?:self|thread-self|(\d+)(?:/task/\d+)?)/fd)/(\d+)")
_STD_PATHS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def open_descriptor(path):
    """The descriptor of this process that ``path`` names, or None.

    ``/dev/stdin``, ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``,
    ``/proc/self/fd/N``, ``/proc/thread-self/fd/N`` and ``/proc/<pid>/fd/N``
    with this process's pid name descriptor 0, 1, 2 or N, also when reached
    through symlinks (of the path or of its directories).  Resolving such a
    path with ``os.path.realpath`` gives nonsense (``pipe:[123]``) or the
    file behind the descriptor, which is why it is recognised first.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    int or None
        The descriptor number (whether it is open is not checked).
    """
    p = os.path.abspath(os.fspath(path))
    for _ in range(40):                       # the kernel's limit on symlinks in a path
        head, tail = os.path.split(p)
        if not tail:
            return None
        p = os.path.join(os.path.realpath(head), tail)
        if p in _STD_PATHS:
            return _STD_PATHS[p]
        m = _FD_PATH.fullmatch(p)
        if m is not None and (m.group(1) is None or int(m.group(1)) == os.getpid()):
            return int(m.group(2))
        try:
            target = os.readlink(p)
        except OSError:                       # not a symlink (or missing): an ordinary path
            return None
        p = os.path.join(os.path.dirname(p), target)     # an absolute target replaces the directory
    return None


def _check_descriptor(shown, fd):
    """Raise PegasosError unless descriptor ``fd`` (named ``shown``) is open for writing."""
    import fcntl

    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        raise PegasosError(f"cannot write {shown}: file descriptor {fd} is not open") from None
    if flags & os.O_ACCMODE == os.O_RDONLY:
        raise PegasosError(f"cannot write {shown}: file descriptor {fd} is open for reading only")


def _write_descriptor(shown, fd, write, how=("w", {"encoding": "utf-8", "newline": "\n"})):
    """``write`` through a duplicate of descriptor ``fd``, at its current offset
    (``how``: the mode and keywords of ``os.fdopen``)."""
    _check_descriptor(shown, fd)
    for stream in (sys.stdout, sys.stderr):     # what Python buffered for fd goes first
        try:
            if stream is not None and stream.fileno() == fd:
                stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    try:
        dup = os.dup(fd)
    except OSError as e:
        raise PegasosError(f"cannot write {shown}: {e.strerror or e}") from None
    try:
        f = os.fdopen(dup, how[0], **how[1])
    except BaseException:
        os.close(dup)
        raise
    try:
        with f:                                 # closes the duplicate only
            write(f)
    except BrokenPipeError:
        raise
    except OSError as e:
        raise PegasosError(f"cannot write {shown}: {e.strerror or e}") from None


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_writable(path):
    """Fail early (before a long training run) if ``path`` cannot be written.

    Raises
    ------
    PegasosError
        A directory, a missing or unwritable directory, or a descriptor path
        (``/dev/stdout``, ...) whose descriptor is closed or read-only.
    """
    shown = os.fspath(path)
    if not shown:
        raise PegasosError("cannot write '': the output file name is empty")
    fd = open_descriptor(shown)
    if fd is not None:
        _check_descriptor(shown, fd)
        return
    path = os.path.realpath(shown)
    if os.path.isdir(path):
        raise PegasosError(f"cannot write {shown}: it is a directory")
    if os.path.exists(path) and not os.path.isfile(path):
        if not os.access(path, os.W_OK):
            raise PegasosError(f"cannot write {shown}: permission denied")
        return                                  # a device or FIFO, written directly
    if os.path.isfile(path) and not os.stat(path).st_mode & 0o222:
        raise PegasosError(f"cannot write {shown}: it is write-protected (mode {os.stat(path).st_mode & 0o7777:04o}); "
                           "make it writable (chmod u+w) or remove it to replace it")
    directory = os.path.dirname(path)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise PegasosError(f"cannot write {shown}: {directory} is not a directory")
    if not os.path.isdir(directory):
        raise PegasosError(f"cannot write {shown}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        if _read_only_file_system(directory):
            raise PegasosError(f"cannot write {shown}: {directory} is on a read-only file system")
        raise PegasosError(f"cannot write {shown}: permission denied")


def _read_only_file_system(directory):
    """True if ``directory`` is on a file system mounted read-only."""
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _cannot_write(shown, e):
    """The PegasosError for an OSError ``e`` met while writing ``shown``."""
    if getattr(e, "errno", None) == errno.EROFS:
        return PegasosError(f"cannot write {shown}: it is on a read-only file system")
    return PegasosError(f"cannot write {shown}: {e.strerror or e}")


def check_distinct_files(output, output_role, inputs):
    """Refuse to write ``output`` when it is the same file as one of ``inputs``.

    Two paths are the same file when both exist as regular files and
    ``os.path.samefile`` says so (hard links, symlinks, ``/dev/stdout``
    redirected to the file), or, when one does not exist yet, when their
    resolved paths are equal.  Devices, pipes and terminals are never "the
    same file" (reading a terminal and writing it is fine).

    Parameters
    ----------
    output : str or None
        The output path; None or ``-`` is standard output.
    output_role : str
        How to call it in the message (``MODEL``, ``OUTPUT``).
    inputs : iterable of (role, path)
        The input files; a None path is skipped, ``-`` is standard input.

    Raises
    ------
    PegasosError
        One line naming both files.
    """
    out_st = _regular_stat(output, 1)
    for role, path in inputs:
        if path is None:
            continue
        in_st = _regular_stat(path, 0)
        if out_st and in_st:
            same = (out_st.st_dev, out_st.st_ino) == (in_st.st_dev, in_st.st_ino)
        elif out_st is False or in_st is False or output in (None, "-") or path == "-":
            same = False                        # an existing non-regular file or a standard stream
        else:
            same = os.path.realpath(output) == os.path.realpath(path)
        if same:
            what = "standard output" if output in (None, "-") else f"{output_role} {output}"
            source = "standard input" if path == "-" else f"{role} {path}"
            raise PegasosError(f"{what} is the same file as {source}; writing it would destroy the input "
                               f"(choose another {output_role} file)")


def _regular_stat(path, std_fd):
    """os.stat of ``path`` (``std_fd``'s for None or ``-``) if it is a regular
    file; False if it exists and is something else; None if it does not exist."""
    try:
        st = os.fstat(std_fd) if path in (None, "-") else os.stat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) else False


def save_model(model: object, path: str | os.PathLike[str]) -> None:
    """Write ``model`` to ``path`` atomically (temporary file + rename).

    A name ending in ``.gz``, ``.bz2``, ``.xz`` or ``.lzma`` is written
    compressed in that format (as ``numpy.savetxt`` does for ``.gz``); every
    reader of a model knows gzip, bzip2 and xz by their first bytes, and
    legacy LZMA, which has none, by the name ``.lzma``.

    ``model`` is a LinearModel, MulticlassModel or KernelModel (what has a
    ``to_text()``); ``path`` a file name or path-like.

    Raises
    ------
    PegasosError
        The file cannot be written; no partial file is left.
    TypeError
        ``model`` is not a pegasos model.
    """
    from .io import compress, compression_by_name

    text = model_text(model)
    kind = compression_by_name(path)
    if kind is None:
        atomic_write(path, lambda f: f.write(text))
        return
    packed = compress(text.encode("utf-8"), kind)
    atomic_write(path, lambda f: f.write(packed), binary=True)


READ_PIECE = 1 << 20        # bytes read at a time from a model file
FIRST_LINE_BYTES = 4096     # where the first line ("pegasos_model 1") must end
COMPRESSED_MODEL_SHARE = 1 / 32  # of memory_limit(): the most a compressed model may decompress to


def read_model_bytes(path):
    """The bytes of a model file, read in pieces of ``READ_PIECE`` bytes.

    The first line is checked before anything else is read, so a device or
    a foreign file (``/dev/zero``, ``/dev/urandom``, a data file) is refused
    after at most ``FIRST_LINE_BYTES``; a UTF-8 byte-order mark at the start
    is dropped.  Later pieces must be text: a NUL byte or a line longer than
    :func:`pegasos.io.max_line_bytes` stops the read.

    A model compressed with gzip, bzip2 or xz (``gzip model``, on a file or
    on standard input) is read through :func:`pegasos.io.open_binary`, which
    knows it by its first bytes.  What it decompresses to may not exceed
    ``COMPRESSED_MODEL_SHARE`` of :func:`pegasos.data.memory_limit`, so a
    small file that expands without end is refused instead of filling the
    memory.

    Parameters
    ----------
    path : str
        The model file; ``-`` reads standard input.

    Returns
    -------
    bytes
        The file without its byte-order mark.

    Raises
    ------
    ModelFormatError
        The file is missing or unreadable, or one of the above (naming the file).
    """
    import lzma
    import zlib

    from .data import memory_limit
    from .io import UTF8_BOM, CompressedDataError, max_line_bytes, open_binary

    pieces = []
    try:
        # "-": the model on standard input (read once, like any other stream)
        try:
            f = open_binary(path, plain_start=MAGIC.encode(), what="model")   # a plain model named .gz stays readable
        except DataError as e:
            raise ModelFormatError(path, e.message) from None
        compressed = getattr(f, "decompressing", False)
        budget = (memory_limit() or float(1 << 34)) * COMPRESSED_MODEL_SHARE if compressed else math.inf
        def refuse(message, line=None):
            if compressed:      # damaged data decode to garbage before their checksum is reached: say so
                _drain(f)
            raise ModelFormatError(path, message, line)

        with f:
            head = _read_full(f, FIRST_LINE_BYTES)
            bom = head.startswith(UTF8_BOM)
            if bom:
                head = head[len(UTF8_BOM):] + _read_full(f, len(UTF8_BOM))
            nul = head.find(b"\0")
            if nul >= 0:
                refuse(binary_model(nul + (len(UTF8_BOM) if bom else 0)), None)
            if not head.strip() and len(head) < FIRST_LINE_BYTES:
                return head                  # an empty file: load_model says so
            end = head.find(b"\n")
            first = head if end < 0 else head[:end]
            if first.split()[:1] != [MAGIC.encode()] or (end < 0 and len(head) == FIRST_LINE_BYTES):
                refuse(f"not a pegasos model file ({first_line_shown(first)})", 1)
            pieces.append(head)
            limit = max_line_bytes()
            line_length = len(head) - head.rfind(b"\n") - 1
            offset = len(head)
            while True:
                piece = f.read(READ_PIECE)
                if not piece:
                    break
                nul = piece.find(b"\0")
                if nul >= 0:
                    refuse(binary_model(offset + nul + (len(UTF8_BOM) if bom else 0)))
                cut = piece.rfind(b"\n")
                line_length = line_length + len(piece) if cut < 0 else len(piece) - cut - 1
                if line_length > limit or (cut >= 0 and len(piece) > limit):
                    refuse(f"a line longer than {limit} bytes (not a pegasos model file; PEGASOS_MAX_LINE_BYTES "
                           "sets the limit)")
                offset += len(piece)
                if offset > budget:
                    raise ModelFormatError(path, f"decompresses to more than {budget / 2**20:.0f} MiB, more than "
                                                 "a model this process can hold (not a pegasos model file)")
                pieces.append(piece)
    except FileNotFoundError:
        raise ModelFormatError(path, "no such model file") from None
    except IsADirectoryError:
        raise ModelFormatError(path, "cannot read model: it is a directory") from None
    except (EOFError, zlib.error, lzma.LZMAError, CompressedDataError) as e:
        raise ModelFormatError(path, f"cannot decompress the model: {e}") from None
    except OSError as e:
        # gzip.BadGzipFile and bz2's "Invalid data stream" are OSErrors without an errno
        raise ModelFormatError(path, f"cannot read model: {e.strerror or e}") from None
    return b"".join(pieces)


def binary_model(offset):
    """The message for a NUL byte at ``offset`` of a model file (no model holds one: the loader stops there)."""
    return f"binary data at byte {offset} (a NUL byte; not a pegasos model file)"


def _drain(f, limit=4 << 20):
    """Read ``f`` (a decompressing reader) on, to its end or ``limit`` bytes, so that damage shows as its error:
    bzip2 checks each block of at most 900 kB, so 4 MiB finds damage in the block read (a foreign compressed
    file given as a model costs at most that, 0.4 s of bzip2)."""
    seen = 0
    while seen <= limit:
        piece = f.read(READ_PIECE)
        if not piece:
            return
        seen += len(piece)


def _read_full(f, size):
    """Up to ``size`` bytes of ``f``, fewer only at its end (a pipe or a
    decompressor may return less than asked for in one read)."""
    parts, got = [], 0
    while got < size:
        part = f.read(size - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def check_weights_fit(path, lines, n_features, rows=1):
    """Refuse a model whose header asks for more weight memory than the machine has.

    Loading holds ``rows`` dense float64 vectors of ``n_features`` (one for
    a binary, regression or ranking model, one per class for a multiclass
    one) plus one vector being read; a damaged or foreign header with a huge
    ``n_features`` would otherwise end in a bare out-of-memory error.  The
    test is :func:`pegasos.data.check_weight_memory`'s (against
    :func:`pegasos.data.memory_limit`), so a model that trained here loads here.

    Parameters
    ----------
    path : str
        The model file, for the message.
    lines : list of str
        Its lines, to name the ``n_features`` line.
    n_features : int
    rows : int >= 1

    Raises
    ------
    ModelFormatError
        Naming the file, the ``n_features`` line, the memory needed and the
        machine's.
    """
    from .data import check_weight_memory, memory_limit

    try:
        # rows + 1 vectors: check_weight_memory counts its argument + 2
        check_weight_memory(n_features, max(int(rows), 1) - 1)
    except ParameterError:
        need = 8.0 * (int(n_features) + 2) * (max(int(rows), 1) + 1)
        limit = memory_limit() or 0.0
        key = "classes" if int(rows) > max(1, int(n_features)) else "n_features"     # the value to blame
        line = next((i + 1 for i, ln in enumerate(lines) if ln.strip().split(" ", 1)[0] == key), None)
        what = f"n_features {n_features}" + (f" times classes {rows}" if int(rows) > 1 else "")
        raise ModelFormatError(path, f"{what} in the header needs {need / 2**30:.1f} GiB for "
                                     f"the weights, more than the {limit / 2**30:.1f} GiB this process can "
                                     "allocate (a damaged model file, or one made for a much larger machine)",
                               line) from None


# header keys whose value is free text (a file name), not checked for numbers
TEXT_KEYS = ("train_file",)
# header keys whose numbers may be negative; every other number must be >= 0 (``class_weights``:
# its labels may be negative, its weights not)
SIGNED_KEYS = ("bias", "label_negative", "label_positive", "class_labels", "coef0", "class_weights")
_NUMBER_SEPARATORS = re.compile(r"[\s,;:]+")


_COUNT = re.compile(r"[0-9]+\Z")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def _count(low=0):
    def check(text):
        return _COUNT.match(text) is not None and int(text) >= low
    return check


def _number(low=-math.inf, high=math.inf):
    def check(text):
        return _NUMBER.match(text) is not None and low <= float(text) <= high
    return check


def _or_dash(check):
    return lambda text: text == "-" or check(text)


def _one_of(*words):
    return lambda text: text in words


def _counts(text):
    return all(_COUNT.match(p) is not None for p in text.split(","))


def _iterate_range(text):
    first, sep, last = text.partition("..")
    return sep == ".." and _COUNT.match(first) is not None and _COUNT.match(last) is not None


def _label_weights(text):
    items = [item.partition(":") for item in text.split(",")]
    return all(sep and _NUMBER.match(label) and _NUMBER.match(weight) for label, sep, weight in items)


#: what each header key may hold, where something reads it back (a key absent here is free text or checked
#: by its loader: kind, loss, lambda, labels, bias, n_features, index_base, kernel parameters, classes ...).
#: A model edited by hand is refused at load with the key's line, not when a command reaches the value.
HEADER_SYNTAX = {
    "iterations": (_count(), "a whole number >= 0"),
    "batch_size": (_count(1), "a whole number >= 1"),
    "seed": (_count(), "a whole number >= 0"),
    "train_examples": (_count(), "a whole number >= 0"),
    "averaged_iterates": (_or_dash(_iterate_range), "FIRST..LAST (whole numbers) or -"),
    "average_from": (_or_dash(_number(0.0, 1.0)), "a number in [0, 1] or -"),
    "sampling": (_one_of(*SAMPLINGS, "shuffle-buffer"), ", ".join(SAMPLINGS) + " or shuffle-buffer"),
    "projection": (_one_of("on", "off"), "on or off"),
    "averaging": (_one_of("last", "all", "suffix"), "last, all or suffix"),
    "schedule": (_one_of(*SCHEDULES), ", ".join(SCHEDULES[:-1]) + " or " + SCHEDULES[-1]),
    "step_offset": (_number(0.0), "a number >= 0"),
    "eta0": (_number(0.0), "a number >= 0"),
    "eta": (_number(0.0), "a number >= 0"),
    "epsilon": (_number(0.0), "a number >= 0"),
    "shuffle_buffer": (_count(1), "a whole number >= 1"),
    "epochs": (_number(0.0), "a number >= 0"),
    "epochs_trained": (_number(0.0), "a number >= 0"),
    "finish": (_one_of("dual"), "dual"),
    "dual_updates": (_count(), "a whole number >= 0"),
    "finish_passes": (_counts, "whole numbers >= 0, one per class, separated by commas"),
    "certified_gap": (_number(0.0, 1.0), "a relative gap in [0, 1]"),
    "class_weights": (_label_weights, "LABEL:WEIGHT items separated by commas"),
    "early_stop": (_count(1), "a whole number >= 1"),
    "best_iteration": (_count(), "a whole number >= 0"),
    "best_validation": (_number(), "a number"),
    "shards": (_count(1), "a whole number >= 1"),
    "sync_every": (_count(1), "a whole number >= 1"),
    "budget": (_or_dash(_count(1)), "a whole number >= 1 or -"),
    "support_vectors_removed": (_count(), "a whole number >= 0"),
}


def _check_header_syntax(path, key, value, lineno):
    """Refuse a value of ``key`` that is not of the kind :data:`HEADER_SYNTAX` gives for it."""
    rule = HEADER_SYNTAX.get(key)
    if rule is not None and not rule[0](value):
        raise ModelFormatError(path, f"header {key!r} holds {value[:40]!r}; it must be {rule[1]}", lineno)


def check_header_consistency(path, header, labels=None, problems=1):
    """The cross-key checks of a header, once the model's labels and its number of binary problems are
    known: ``averaging`` other than "last" needs a number in ``average_from``, ``finish_passes`` has one
    entry or one per problem, and ``class_weights`` names only the model's labels (float values)."""
    if header.get("averaging", "last") != "last" and header.get("average_from", "-") == "-":
        raise ModelFormatError(path, f"header 'averaging {header['averaging']}' needs a number in 'average_from'",
                               header.line("average_from") or header.line("averaging"))
    if "finish_passes" in header:
        count = len(header["finish_passes"].split(","))
        if count not in (1, problems):
            raise ModelFormatError(path, f"header 'finish_passes' has {count} entries for {problems} problem"
                                         f"{'s' if problems != 1 else ''} (one, or one per class)",
                                   header.line("finish_passes"))
    if "class_weights" in header and labels is not None:
        known = {float(v) for v in labels}
        for item in header["class_weights"].split(","):
            label = item.partition(":")[0]
            if float(label) not in known:
                raise ModelFormatError(path, f"header 'class_weights' names label {label}, which the model does "
                                             "not have", header.line("class_weights"))


class Header(dict):
    """The ``key value`` lines of a model header (str -> str), with ``lines``: key -> its
    1-based line in the file, so that a message about a value names its line."""

    def __init__(self):
        super().__init__()
        self.lines = {}

    def line(self, key):
        """The line of ``key`` (None if absent)."""
        return self.lines.get(key)


def header_float(path, header, key, what=None):
    """``header[key]`` as a finite float, or ModelFormatError naming the file and the key's line."""
    return check_float(header[key], path, header.line(key) if isinstance(header, Header) else None, what or key)


def _check_header_numbers(path, key, value, lineno):
    """Refuse a header value holding a NaN or infinite number (``nan``, ``inf``,
    ``1e999``, also inside lists such as ``cost_matrix``), or a negative one where
    only non-negative numbers make sense (all keys but :data:`SIGNED_KEYS`)."""
    for token in _NUMBER_SEPARATORS.split(value):
        try:
            v = float(token)
        except ValueError:
            continue
        if not math.isfinite(v):
            raise ModelFormatError(path, f"header {key!r} holds {token!r}, which is not a finite number", lineno)
        if v < 0 and key not in SIGNED_KEYS and key != "lambda":    # lambda: "must be positive", by the loaders
            raise ModelFormatError(path, f"header {key!r} holds {token!r}, which is negative", lineno)
    if key == "class_weights":
        for item in value.split(","):
            label, _, weight = item.partition(":")
            try:
                w = float(weight)
            except ValueError:
                raise ModelFormatError(path, f"header 'class_weights' item {item!r} is not LABEL:WEIGHT",
                                       lineno) from None
            if w < 0:
                raise ModelFormatError(path, f"header 'class_weights' gives label {label} the weight {weight}, "
                                             "which is negative", lineno)


def header_keys(info, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The header ``keys`` a model with header ``info`` writes: without the settings of Pegasos
    (:data:`pegasos.outcome.PEGASOS_KEYS`) where no Pegasos iteration ran (:func:`pegasos.outcome.dual_only`)."""
    return tuple(k for k in keys if k not in PEGASOS_KEYS) if dual_only(info) else keys


def check_pegasos_keys(path, header):
    """After :func:`read_header` with :data:`pegasos.outcome.PEGASOS_KEYS` optional: require those of
    :data:`HEADER_KEYS` unless no Pegasos iteration ran (:func:`pegasos.outcome.dual_only`).

    Raises
    ------
    ModelFormatError
        A Pegasos model whose header lacks some of them.
    """
    if dual_only(header):
        return
    missing = [k for k in PEGASOS_KEYS if k in HEADER_KEYS and k not in header]
    if missing:
        raise ModelFormatError(path, f"damaged model file: header lacks {', '.join(missing)}")


def read_header(path, lines, required, optional, stops):
    """Parse the ``key value`` lines after the first line, up to a line whose
    key is in ``stops``.

    Returns
    -------
    (Header, index of the stop line, the stop line's value)
        The header maps keys to their text and remembers each key's line.

    Raises
    ------
    ModelFormatError
        An unknown or repeated key, a key without value, a number that is not
        finite or (outside :data:`SIGNED_KEYS`) negative, no stop line, or a
        missing required key; naming the file and line.
    """
    header = Header()
    i = 1
    while i < len(lines):
        key, _, value = lines[i].strip().partition(" ")
        value = value.strip()
        if key in stops:
            break
        if key not in required and key not in optional:
            raise ModelFormatError(path, f"unknown header line {lines[i][:60]!r}", i + 1)
        if not value:
            raise ModelFormatError(path, f"header line {key!r} has no value", i + 1)
        if key in header:
            raise ModelFormatError(path, f"header key {key!r} appears twice", i + 1)
        if key not in TEXT_KEYS:
            _check_header_numbers(path, key, value, i + 1)
            _check_header_syntax(path, key, value, i + 1)
        header[key] = value
        header.lines[key] = i + 1
        i += 1
    if i == len(lines):
        raise ModelFormatError(path, f"truncated model file: no '{stops[0]}' line")
    missing = [k for k in required if k not in header]
    if missing:
        raise ModelFormatError(path, f"damaged model file: header lacks {', '.join(missing)}")
    return header, i, value


def expect_end(path, lines, i):
    if i >= len(lines) or lines[i].strip() != "end":
        raise ModelFormatError(path, "truncated or damaged model file: expected the weight lines "
                                     "and a final 'end' line")
    if len(lines) > i + 1:
        raise ModelFormatError(path, "unexpected text after the 'end' line", i + 2)


# ------------------------------------------------------------ resume state --
# The optional section between a linear model's weights and its ``end`` line:
# what continuing the run needs (the solver's loop variables and vectors, and
# the example order's generator), see README "Model file".
RESUME_BEGIN = "resume_state 1"
RESUME_END = "end_resume_state"
_RESUME_INTS = ("t", "n_avg", "avg_start", "n_refold", "n_features", "dim", "n_classes", "bias_mode", "loss")
_RESUME_FLOATS = ("a", "sqnorm", "b", "A", "b_sum", "lam", "t0", "epsilon", "radius2")
_RESUME_FLAGS = ("pairs", "projection")
_SAMPLINGS = ("uniform", "permutation", "shuffle-once", "sequential")
_FIXED_ORDERS = ("sequential", "shuffle-once")    # one order for every epoch: no generator state per unit
MAX_COUNTER = 2**63 - 1


def _rng_text(state):
    if state is None:
        return "-"
    if state.get("bit_generator") != "PCG64":
        raise ParameterError(f"cannot save a {state.get('bit_generator')!r} generator state (PCG64 only)")
    inner = state["state"]
    return f"PCG64 {int(inner['state'])} {int(inner['inc'])} {int(state['has_uint32'])} {int(state['uinteger'])}"


def resume_lines(state):
    """The resume section of a model file (list of str) for a solver state.

    Parameters
    ----------
    state : dict
        ``LinearModel.solver_state``: ``_core.LinearState.get_state()`` with
        ``"orders"`` (:meth:`pegasos.sampling.Orders.get_state`) added.

    Floats are written with ``repr`` (bit-exact), the vectors v and u of
    w = a v and of the average's running sums as ``position:value`` lines of
    their non-zero entries (0-based positions in v, whose last entry is the
    constant feature's weight with ``bias_mode`` 1).
    """
    lines = [RESUME_BEGIN]
    lines += [f"{key} {int(state[key])}" for key in _RESUME_INTS]
    lines += [f"{key} {float(state[key])!r}" for key in _RESUME_FLOATS]
    lines += [f"{key} {int(bool(state[key]))}" for key in _RESUME_FLAGS]
    if int(state.get("schedule", 0)):          # written for Norma and the constant step only
        lines += [f"schedule {int(state['schedule'])}", f"eta {float(state['eta'])!r}"]
    orders = state.get("orders")
    if orders is None:
        lines += ["order -", "rng -", "unit_rng -"]
    else:
        lines.append(f"order {orders['sampling']} {int(orders['m'])} {int(orders['k'])} {int(orders['unit_done'])}")
        lines.append(f"rng {_rng_text(orders['rng'])}")
        lines.append(f"unit_rng {_rng_text(orders.get('unit_rng'))}")
    for key in ("v", "u"):
        vec = state.get(key)
        if vec is None:
            lines.append(f"{key} -")
            continue
        nz = np.flatnonzero(vec)
        lines.append(f"{key} {nz.size}")
        lines += [f"{j}:{float(vec[j])!r}" for j in nz.tolist()]
    lines.append(RESUME_END)
    return lines


def _bounded_int(text, path, lineno, what, lo=0, hi=MAX_COUNTER):
    if not text.isdigit() or len(text) > 40 or not lo <= int(text) <= hi:
        raise ModelFormatError(path, f"resume state: {what} {text[:40]!r} is not an integer in {lo}..{hi}", lineno)
    return int(text)


def _read_rng(text, path, lineno, what):
    if text == "-":
        return None
    parts = text.split()
    if len(parts) != 5 or parts[0] != "PCG64":
        raise ModelFormatError(path, f"resume state: {what} must be 'PCG64 STATE INC HAS_UINT32 UINTEGER' or -",
                               lineno)
    state, inc = (_bounded_int(p, path, lineno, what, 0, 2**128 - 1) for p in parts[1:3])
    has = _bounded_int(parts[3], path, lineno, what, 0, 1)
    uint = _bounded_int(parts[4], path, lineno, what, 0, 2**32 - 1)
    return {"bit_generator": "PCG64", "state": {"state": state, "inc": inc}, "has_uint32": has, "uinteger": uint}


def read_resume(path, lines, i, n_features):
    """Parse the resume section at lines[i] (its first line ``resume_state 1``).

    Parameters
    ----------
    path : str
        The model file, for messages.
    lines : list of str
    i : int
        Index of the section's first line.
    n_features : int
        The header's n_features: the state must be of that dimension.

    Returns
    -------
    (dict, int)
        The solver state (as :func:`resume_lines` took it) and the index of
        the line after the section.

    Raises
    ------
    ModelFormatError
        A missing or unknown line, a number that is not finite or out of its
        range, vectors longer than the state's dimension, counters that do
        not fit together (n_avg > t, avg_start > t + 1), naming the file and
        the line.
    """
    i += 1
    state = {}

    def field(key):
        nonlocal i
        if i >= len(lines):
            raise ModelFormatError(path, f"truncated resume state: expected '{key} ...' and '{RESUME_END}'")
        name, _, value = lines[i].strip().partition(" ")
        if name != key or not value.strip():
            raise ModelFormatError(path, f"damaged resume state: expected '{key} VALUE', got {lines[i][:60]!r}", i + 1)
        i += 1
        return value.strip(), i

    for key in _RESUME_INTS:
        text, line = field(key)
        state[key] = _bounded_int(text, path, line, key)
    for key in _RESUME_FLOATS:
        text, line = field(key)
        state[key] = check_float(text, path, line, f"resume state: {key}")
    for key in _RESUME_FLAGS:
        text, line = field(key)
        state[key] = bool(_bounded_int(text, path, line, key, 0, 1))
    state["schedule"], state["eta"] = 0, 0.0          # sections without these lines: the Pegasos step
    if i < len(lines) and lines[i].startswith("schedule "):
        text, line = field("schedule")
        state["schedule"] = _bounded_int(text, path, line, "schedule", 1, 2)
        text, line = field("eta")
        state["eta"] = check_float(text, path, line, "resume state: eta")
        if not state["eta"] > 0:
            raise ModelFormatError(path, f"resume state: eta {text!r} is not positive", line)
    extra = 1 if state["bias_mode"] == 1 else 0
    if state["n_features"] != n_features or state["dim"] != n_features + extra or state["n_classes"] != 1:
        raise ModelFormatError(path, f"resume state: n_features {state['n_features']}, dim {state['dim']}, n_classes "
                                     f"{state['n_classes']} do not fit the header's n_features {n_features}", i)
    if state["n_avg"] > state["t"] or state["avg_start"] > state["t"] + 1 or not state["a"] > 0:
        raise ModelFormatError(path, "resume state: the counters do not fit together (n_avg <= t, "
                                     "avg_start <= t + 1, a > 0)", i)
    text, line = field("order")
    parts = text.split()
    if parts == ["-"]:
        orders = None
    elif len(parts) == 4 and parts[0] in _SAMPLINGS:
        orders = {"sampling": parts[0], "m": _bounded_int(parts[1], path, line, "order m"),
                  "k": _bounded_int(parts[2], path, line, "order k", 1),
                  "unit_done": _bounded_int(parts[3], path, line, "order unit_done")}
    else:
        raise ModelFormatError(path, "resume state: order must be 'SAMPLING M K UNIT_DONE' or -", line)
    text, line = field("rng")
    rng = _read_rng(text, path, line, "rng")
    text, line = field("unit_rng")
    unit_rng = _read_rng(text, path, line, "unit_rng")
    if orders is not None:
        if rng is None:
            raise ModelFormatError(path, "resume state: an order needs its rng", line - 1)
        orders.update(rng=rng, unit_rng=unit_rng)
        if orders["unit_done"] and orders["sampling"] not in _FIXED_ORDERS and unit_rng is None:
            raise ModelFormatError(path, "resume state: a cut unit of the order needs its unit_rng", line)
        if orders["sampling"] == "shuffle-once" and unit_rng is None:
            raise ModelFormatError(path, "resume state: a shuffle-once order needs the unit_rng it was drawn "
                                         "from", line)
    state["orders"] = orders
    dim = state["dim"]
    for key in ("v", "u"):
        text, line = field(key)
        if text == "-":
            state[key] = None
            continue
        count = _bounded_int(text, path, line, f"{key} count", 0, dim)
        if i + count > len(lines):
            raise ModelFormatError(path, f"truncated resume state: expected {count} lines of {key}")
        vec = np.zeros(dim, dtype=np.float64)
        try:
            cols, values = parse_weight_block(path, lines[i:i + count], dim, 0, i + 1)
        except ModelFormatError as e:
            where = f"{path}, line {e.line}: " if e.line is not None else f"{path}: "
            raise ModelFormatError(path, f"resume {key}: " + str(e)[len(where):].replace("weight ", "value ", 1),
                                   e.line) from None
        vec[cols] = values
        i += count
        state[key] = vec
    if (state["u"] is None) != (state["avg_start"] == 0):
        raise ModelFormatError(path, "resume state: u is given exactly when avg_start > 0", i)
    if i >= len(lines) or lines[i].strip() != RESUME_END:
        raise ModelFormatError(path, f"damaged resume state: expected '{RESUME_END}'", i + 1)
    return state, i + 1
