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
model.  CRLF line ends and a missing final newline are accepted.
"""

import math
import os
import tempfile

import numpy as np

from .errors import ModelFormatError, PegasosError

MAGIC = "pegasos_model"
VERSION = 1

# header keys in the order they are written; the value "-" means "not applicable"
HEADER_KEYS = (
    "kind", "loss", "lambda", "iterations", "batch_size", "sampling", "projection", "averaging",
    "average_from", "averaged_iterates", "bias_mode", "bias", "label_negative", "label_positive",
    "n_features", "index_base", "seed", "train_file", "train_examples",
)
# written after those only when they apply (absent: binary task, no class weights)
OPTIONAL_KEYS = ("task", "epsilon", "class_weights", "multiclass", "classes", "class_labels", "cost_matrix",
                 "step_offset", "shuffle_buffer")
TASKS = ("binary", "regression", "ranking", "multiclass")
LOSSES = {"binary": ("hinge", "log", "squared-hinge"), "regression": ("eps-insensitive",), "ranking": ("rank",),
          "multiclass": ("hinge", "log", "squared-hinge")}


def _check_float(text, path, line, what):
    try:
        v = float(text)
    except ValueError:
        raise ModelFormatError(path, f"{what} {text!r} is not a number", line) from None
    if not math.isfinite(v):
        raise ModelFormatError(path, f"{what} {text!r} is not finite", line)
    return v


def model_text(model):
    """The model file contents as a string (see the module docstring)."""
    from .linear import LinearModel

    if getattr(model, "kind", "linear") == "kernel":
        from .kernel import kernel_model_text
        return kernel_model_text(model)
    from .multiclass import MulticlassModel

    if not isinstance(model, (LinearModel, MulticlassModel)):
        raise TypeError("model_text expects a LinearModel or a MulticlassModel")
    multi = isinstance(model, MulticlassModel)
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
    for key in HEADER_KEYS + OPTIONAL_KEYS:
        if key in HEADER_KEYS or key in header:
            value = str(header.get(key, "-")).replace("\n", " ").replace("\r", " ") or "-"
            lines.append(f"{key} {value}")
    if multi:
        for c in range(model.n_classes):
            lines.append(f"class {model.class_texts[c]}")
            lines.append(f"bias {float(model.biases[c])!r}")
            lines.extend(_weight_lines(model.W[c], base))
    else:
        lines.extend(_weight_lines(model.w, base))
    lines.append("end")
    return "\n".join(lines) + "\n"


def _weight_lines(w, base):
    nz = np.flatnonzero(w)
    return [f"weights {nz.size}"] + [f"{j + base}:{float(w[j])!r}" for j in nz.tolist()]


def _read_weights(path, lines, i, n, base):
    """Parse ``weights N`` at lines[i] and its N lines; returns (w, next i)."""
    key, _, count_text = lines[i].strip().partition(" ") if i < len(lines) else ("", "", "")
    if key != "weights":
        raise ModelFormatError(path, "truncated or damaged model file: expected a 'weights' line", i + 1)
    if not count_text.strip().isdigit():
        raise ModelFormatError(path, f"bad weight count {count_text!r}", i + 1)
    count = int(count_text)
    if i + 1 + count > len(lines):
        raise ModelFormatError(path, f"truncated or damaged model file: expected {count} weight lines "
                                     "and a final 'end' line")
    w = np.zeros(n, dtype=np.float64)
    last = -1
    for j, ln in enumerate(lines[i + 1:i + 1 + count]):
        lineno = i + 2 + j
        idx_text, sep, val_text = ln.strip().partition(":")
        if not sep or not idx_text.isdigit():
            if ln.strip() == "end":
                raise ModelFormatError(path, f"truncated or damaged model file: expected {count} weight lines "
                                             "and a final 'end' line")
            raise ModelFormatError(path, f"weight line {ln[:60]!r} is not index:value", lineno)
        col = int(idx_text) - base
        if col < 0 or col >= n:
            raise ModelFormatError(path, f"weight index {idx_text} is outside {base}..{n - 1 + base}", lineno)
        if col <= last:
            raise ModelFormatError(path, f"weight index {idx_text} is not increasing", lineno)
        last = col
        w[col] = _check_float(val_text, path, lineno, "weight")
    return w, i + 1 + count


def atomic_write(path, write):
    """Create ``path`` atomically: ``write(fileobj)`` fills a temporary file
    in the same directory, which is then renamed over ``path`` (keeping the
    mode of a file it replaces; a symlink is followed).  A path that exists
    and is not a regular file (a device, a FIFO) is written directly.

    Raises
    ------
    PegasosError
        The directory is missing or not writable (nothing is left behind).
    """
    path = os.path.realpath(os.fspath(path))      # write through a symlink, not over it
    if os.path.exists(path) and not os.path.isfile(path):
        # a device, FIFO or terminal cannot be replaced by a rename: write to it directly
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                write(f)
        except OSError as e:
            raise PegasosError(f"cannot write {path}: {e.strerror or e}") from None
        return
    mode = (os.stat(path).st_mode & 0o7777) if os.path.exists(path) else (0o666 & ~_umask())
    directory = os.path.dirname(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    except OSError as e:
        raise PegasosError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise PegasosError(f"cannot write {path}: {e.strerror or e}") from None
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_writable(path):
    """Fail early (before a long training run) if ``path`` cannot be created."""
    path = os.path.realpath(os.fspath(path))
    atomic_probe = os.path.dirname(path)
    if os.path.isdir(path):
        raise PegasosError(f"cannot write {path}: it is a directory")
    if os.path.exists(atomic_probe) and not os.path.isdir(atomic_probe):
        raise PegasosError(f"cannot write {path}: {atomic_probe} is not a directory")
    if not os.path.isdir(atomic_probe):
        raise PegasosError(f"cannot write {path}: directory {atomic_probe} does not exist")
    if not os.access(atomic_probe, os.W_OK | os.X_OK):
        raise PegasosError(f"cannot write {path}: permission denied")


def save_model(model, path):
    """Write ``model`` to ``path`` atomically (temporary file + rename).

    Raises
    ------
    PegasosError
        The file cannot be written; no partial file is left.
    """
    text = model_text(model)
    atomic_write(path, lambda f: f.write(text))


def load_model(path):
    """Read a model file written by :func:`save_model`.

    Returns
    -------
    pegasos.linear.LinearModel

    Raises
    ------
    ModelFormatError
        Not a pegasos model, an unknown version, or a damaged/truncated file
        (the message names the file and line).
    """
    from .linear import BinaryLabels, LinearModel

    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise ModelFormatError(path, "no such model file") from None
    except OSError as e:
        raise ModelFormatError(path, f"cannot read model: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFormatError(path, "not a pegasos model file (not text)") from None
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise ModelFormatError(path, "the model file is empty")
    first = lines[0].split()
    if len(first) != 2 or first[0] != MAGIC:
        raise ModelFormatError(path, f"not a pegasos model file (first line is {lines[0][:60]!r})", 1)
    if not first[1].isdigit():
        raise ModelFormatError(path, f"bad format version {first[1]!r}", 1)
    if int(first[1]) != VERSION:
        raise ModelFormatError(path, f"model format version {first[1]} is not supported "
                                     f"(this pegasos reads version {VERSION})", 1)
    if len(lines) > 1 and lines[1].strip() == "kind kernel":
        from .kernel import parse_kernel_model
        return parse_kernel_model(path, lines)
    header, i, _ = read_header(path, lines, HEADER_KEYS, OPTIONAL_KEYS, ("weights", "class"))
    task = header.get("task", "binary")
    if header["kind"] != "linear" or task not in TASKS or header["loss"] not in LOSSES[task]:
        raise ModelFormatError(path, f"unsupported model kind {header['kind']}/{task}/{header['loss']}")
    n_features = header["n_features"]
    if not n_features.isdigit():
        raise ModelFormatError(path, f"bad n_features {n_features!r}")
    n = int(n_features)
    base = header["index_base"]
    if base not in ("0", "1"):
        raise ModelFormatError(path, f"index_base must be 0 or 1, not {base!r}")
    base = int(base)
    lam = _check_float(header["lambda"], path, None, "lambda")
    if lam <= 0:
        raise ModelFormatError(path, f"lambda must be positive, not {header['lambda']}")
    if header["bias_mode"] not in ("none", "feature", "unregularized"):
        raise ModelFormatError(path, f"unknown bias_mode {header['bias_mode']!r}")
    info = {k: header[k] for k in HEADER_KEYS + OPTIONAL_KEYS if k in header}
    if task == "multiclass":
        model, i = _read_multiclass(path, lines, i, header, n, base, lam, info)
    else:
        w, i = _read_weights(path, lines, i, n, base)
        bias = _check_float(header["bias"], path, None, "bias")
        labels = None
        if task == "binary":
            neg = _check_float(header["label_negative"], path, None, "label_negative")
            pos = _check_float(header["label_positive"], path, None, "label_positive")
            if neg >= pos:
                raise ModelFormatError(path, f"label_negative {header['label_negative']} must be smaller than "
                                             f"label_positive {header['label_positive']}")
            labels = BinaryLabels(neg, pos, header["label_negative"], header["label_positive"])
        epsilon = None
        if header["loss"] == "eps-insensitive":
            epsilon = _check_float(header.get("epsilon", "0"), path, None, "epsilon")
        model = LinearModel(w=w, bias=bias, labels=labels, lam=lam, bias_mode=header["bias_mode"], info=info,
                            loss=header["loss"], epsilon=epsilon)
    _expect_end(path, lines, i)
    return model


def read_header(path, lines, required, optional, stops):
    """Parse the ``key value`` lines after the first line, up to a line whose
    key is in ``stops``.

    Returns
    -------
    (header dict, index of the stop line, the stop line's value)

    Raises
    ------
    ModelFormatError
        An unknown or repeated key, a key without value, no stop line, or a
        missing required key.
    """
    header = {}
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
        header[key] = value
        i += 1
    if i == len(lines):
        raise ModelFormatError(path, f"truncated model file: no '{stops[0]}' line")
    missing = [k for k in required if k not in header]
    if missing:
        raise ModelFormatError(path, f"damaged model file: header lacks {', '.join(missing)}")
    return header, i, value


def _expect_end(path, lines, i):
    if i >= len(lines) or lines[i].strip() != "end":
        raise ModelFormatError(path, "truncated or damaged model file: expected the weight lines "
                                     "and a final 'end' line")
    if len(lines) > i + 1:
        raise ModelFormatError(path, "unexpected text after the 'end' line", i + 2)


def _read_multiclass(path, lines, i, header, n, base, lam, info):
    from .multiclass import MulticlassModel

    K_text = header.get("classes", "")
    if not K_text.isdigit() or int(K_text) < 2:
        raise ModelFormatError(path, f"bad number of classes {K_text!r}")
    K = int(K_text)
    texts = header.get("class_labels", "").split()
    if len(texts) != K:
        raise ModelFormatError(path, f"class_labels lists {len(texts)} labels for {K} classes")
    classes = np.array([_check_float(t, path, None, "class label") for t in texts])
    if np.any(np.diff(classes) <= 0):
        raise ModelFormatError(path, "class_labels must be increasing")
    method = header.get("multiclass", "")
    if method not in ("ovr", "crammer-singer"):
        raise ModelFormatError(path, f"unknown multiclass method {method!r}")
    cost = None
    if header.get("cost_matrix", "-") != "-":
        try:
            cost = np.array([[float(v) for v in row.split(",")] for row in header["cost_matrix"].split(";")])
        except ValueError:
            raise ModelFormatError(path, "cost_matrix is not a matrix of numbers") from None
        if cost.shape != (K, K):
            raise ModelFormatError(path, f"cost_matrix must be {K} x {K}")
        cost = cost.ravel()
    W = np.zeros((K, n))
    biases = np.zeros(K)
    for c in range(K):
        if i >= len(lines) or lines[i].strip() != f"class {texts[c]}":
            raise ModelFormatError(path, f"truncated or damaged model file: expected 'class {texts[c]}'", i + 1)
        key, _, value = lines[i + 1].strip().partition(" ") if i + 1 < len(lines) else ("", "", "")
        if key != "bias":
            raise ModelFormatError(path, "truncated or damaged model file: expected a 'bias' line", i + 2)
        biases[c] = _check_float(value.strip(), path, i + 2, "bias")
        W[c], i = _read_weights(path, lines, i + 2, n, base)
    return MulticlassModel(W=W, biases=biases, classes=classes, class_texts=texts, lam=lam, method=method,
                           loss=header["loss"], bias_mode=header["bias_mode"], info=info, cost=cost), i
