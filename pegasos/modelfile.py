"""Reading model files of every kind (the inverse of each model's ``save``).

The file format and its low-level pieces (header keys, weight lines, atomic
writes, bounded reading) are in :mod:`pegasos.model`; each model class
writes its own text through it.  This module sits above the model classes:
it recognises the kind of a file and builds the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .defaults import MIN_LAMBDA, lambda_problem
from .errors import ModelFormatError
from .labels import BinaryLabels
from .linear import LinearModel
from .outcome import PEGASOS_KEYS
from .model import (HEADER_KEYS, LOSSES, MAGIC, OPTIONAL_KEYS, RESUME_BEGIN, TASKS, VERSION, check_float,
                    check_header_consistency, check_pegasos_keys, check_weights_fit, expect_end, header_float,
                    read_header, read_model_bytes, read_resume, read_weight_entries, read_weights)

if TYPE_CHECKING:
    import os
    from typing import TypeAlias

    from .kernel import KernelModel
    from .multiclass import MulticlassModel

    #: A trained model of any kind, as :func:`load_model` returns them.
    Model: TypeAlias = "LinearModel | MulticlassModel | KernelModel"


def load_model(path: str | os.PathLike[str], *, written_columns: bool = False) -> Model:
    """Read a model file written by :func:`save_model`.

    ``written_columns``: a linear model comes on the columns its file gives
    weights in, renumbered 0..u-1 in order (``model.columns``, int64 (u,):
    their indices in the file's numbering less its index base), so that no
    weight vector of n_features is allocated: what ``pegasos info`` reads
    (a model for describing, not for predicting: examples are numbered as
    the file is).

    A linear binary or regression model may carry the optional resume
    section after its weights (see :func:`pegasos.model.read_resume`); it is
    read into ``solver_state`` and written again by ``save``.

    Returns
    -------
    LinearModel, MulticlassModel or KernelModel
        As the file's ``kind`` and ``task`` say.

    Raises
    ------
    ModelFormatError
        Not a pegasos model, an unknown version, or a damaged/truncated file
        (the message names the file and line).
    """
    raw = read_model_bytes(path)
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
        from .kernel import parse_kernel_model      # imported for kernel models only

        return parse_kernel_model(path, lines)
    required = tuple(k for k in HEADER_KEYS if k not in PEGASOS_KEYS)
    header, i, _ = read_header(path, lines, required, OPTIONAL_KEYS + PEGASOS_KEYS, ("weights", "class"))
    check_pegasos_keys(path, header)
    task = header.get("task", "binary")
    if header["kind"] != "linear" or task not in TASKS or header["loss"] not in LOSSES[task]:
        blame = "kind" if header["kind"] != "linear" else ("task" if task not in TASKS else "loss")
        raise ModelFormatError(path, f"unsupported model kind {header['kind']}/{task}/{header['loss']}",
                               header.line(blame))
    n_features = header["n_features"]
    if not n_features.isdigit():
        raise ModelFormatError(path, f"bad n_features {n_features!r}", header.line("n_features"))
    n = int(n_features)
    classes = header.get("classes", "")
    if not written_columns:
        check_weights_fit(path, lines, n, int(classes) if task == "multiclass" and classes.isdigit() else 1)
    base = header["index_base"]
    if base not in ("0", "1"):
        raise ModelFormatError(path, f"index_base must be 0 or 1, not {base!r}", header.line("index_base"))
    base = int(base)
    lam = header_float(path, header, "lambda")
    if lambda_problem(lam) is not None:
        raise ModelFormatError(path, f"lambda must be positive (at least {MIN_LAMBDA:g}), not {header['lambda']}",
                               header.line("lambda"))
    if header["bias_mode"] not in ("none", "feature", "unregularized"):
        raise ModelFormatError(path, f"unknown bias_mode {header['bias_mode']!r}", header.line("bias_mode"))
    info = {k: header[k] for k in HEADER_KEYS + OPTIONAL_KEYS if k in header}
    if task == "multiclass":
        model, i = read_multiclass(path, lines, i, header, n, base, lam, info, written_columns)
        check_header_consistency(path, header, model.classes, model.n_classes)
    else:
        if written_columns:
            columns, w, i = read_weight_entries(path, lines, i, n, base)
        else:
            w, i = read_weights(path, lines, i, n, base)
        bias = header_float(path, header, "bias")
        labels = None
        if task == "binary":
            neg = header_float(path, header, "label_negative")
            pos = header_float(path, header, "label_positive")
            if neg >= pos:
                raise ModelFormatError(path, f"label_negative {header['label_negative']} must be smaller than "
                                             f"label_positive {header['label_positive']}",
                                       header.line("label_positive"))
            labels = BinaryLabels(neg, pos, header["label_negative"], header["label_positive"])
        epsilon = None
        if header["loss"] == "eps-insensitive":
            epsilon = header_float(path, header, "epsilon") if "epsilon" in header else 0.0
        model = LinearModel(w=w, bias=bias, labels=labels, lam=lam, bias_mode=header["bias_mode"], info=info,
                            loss=header["loss"], epsilon=epsilon)
        check_header_consistency(path, header, (neg, pos) if labels is not None else ())
        if written_columns:
            model.columns = columns
        if i < len(lines) and lines[i].strip() == RESUME_BEGIN and task in ("binary", "regression"):
            model.solver_state, i = read_resume(path, lines, i, n)
            model.save_state = True
    expect_end(path, lines, i)
    return model


def read_multiclass(path, lines, i, header, n, base, lam, info, written_columns=False):
    K_text = header.get("classes", "")
    if not K_text.isdigit() or int(K_text) < 2:
        raise ModelFormatError(path, f"bad number of classes {K_text!r}", header.line("classes"))
    K = int(K_text)
    texts = header.get("class_labels", "").split()
    if len(texts) != K:
        raise ModelFormatError(path, f"class_labels lists {len(texts)} labels for {K} classes",
                               header.line("class_labels"))
    classes = np.array([check_float(t, path, header.line("class_labels"), "class label") for t in texts])
    if np.any(np.diff(classes) <= 0):
        raise ModelFormatError(path, "class_labels must be increasing", header.line("class_labels"))
    method = header.get("multiclass", "")
    if method not in ("ovr", "crammer-singer"):
        raise ModelFormatError(path, f"unknown multiclass method {method!r}", header.line("multiclass"))
    cost = None
    if header.get("cost_matrix", "-") != "-":
        try:
            cost = np.array([[float(v) for v in row.split(",")] for row in header["cost_matrix"].split(";")])
        except ValueError:
            raise ModelFormatError(path, "cost_matrix is not a matrix of numbers", header.line("cost_matrix")) from None
        if cost.shape != (K, K):
            raise ModelFormatError(path, f"cost_matrix must be {K} x {K}", header.line("cost_matrix"))
        cost = cost.ravel()
        from .multiclass import cost_problem        # imported for multiclass models only

        problem = cost_problem(cost, K)
        if problem is not None:
            raise ModelFormatError(path, f"cost_matrix {problem}", header.line("cost_matrix"))
    biases = np.zeros(K)
    written = []
    for c in range(K):
        if i >= len(lines) or lines[i].strip() != f"class {texts[c]}":
            raise ModelFormatError(path, f"truncated or damaged model file: expected 'class {texts[c]}'", i + 1)
        key, _, value = lines[i + 1].strip().partition(" ") if i + 1 < len(lines) else ("", "", "")
        if key != "bias":
            raise ModelFormatError(path, "truncated or damaged model file: expected a 'bias' line", i + 2)
        biases[c] = check_float(value.strip(), path, i + 2, "bias")
        cols, values, i = read_weight_entries(path, lines, i + 2, n, base)
        written.append((cols, values))
    columns = None
    if written_columns:     # W on the columns written, renumbered
        columns = np.unique(np.concatenate([cols for cols, _ in written]))
        W = np.zeros((K, columns.shape[0]))
        for c, (cols, values) in enumerate(written):
            W[c, np.searchsorted(columns, cols)] = values
    else:
        W = np.zeros((K, n))
        for c, (cols, values) in enumerate(written):
            W[c, cols] = values                     # only the pages of the weights written
    from .multiclass import MulticlassModel         # imported for multiclass models only

    model = MulticlassModel(W=W, biases=biases, classes=classes, class_texts=texts, lam=lam, method=method,
                            loss=header["loss"], bias_mode=header["bias_mode"], info=info, cost=cost)
    if columns is not None:
        model.columns = columns
    return model, i
