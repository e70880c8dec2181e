"""Scoring a model on data: primal objective and classification metrics.

Files are streamed chunk by chunk (:func:`pegasos.io.iter_svmlight`), so the
memory used by :func:`objective_file` and by prediction does not grow with the
number of examples.  :func:`evaluate_file` keeps one float64 decision value
per example for the exact ROC AUC (pass ``auc=False`` to keep memory flat).
"""

import math

import numpy as np

from .io import iter_svmlight


class _Totals:
    """Running sums over decision values f and labels y in {-1, +1}."""

    def __init__(self, keep_scores):
        self.m = 0
        self.hinge = 0.0
        self.tp = self.fp = self.tn = self.fn = 0
        self.scores = [] if keep_scores else None
        self.truth = [] if keep_scores else None

    def add(self, f, y):
        self.m += f.shape[0]
        self.hinge += float(np.maximum(0.0, 1.0 - y * f).sum())
        pred = f > 0
        pos = y > 0
        self.tp += int(np.count_nonzero(pred & pos))
        self.fp += int(np.count_nonzero(pred & ~pos))
        self.fn += int(np.count_nonzero(~pred & pos))
        self.tn += int(np.count_nonzero(~pred & ~pos))
        if self.scores is not None:
            self.scores.append(f)
            self.truth.append(pos)


def _ratio(a, b):
    return a / b if b else None


def roc_auc(scores, positive):
    """Area under the ROC curve (ties count one half), or None without both classes.

    Parameters
    ----------
    scores : ndarray of shape (m,), float64
    positive : ndarray of shape (m,), bool
    """
    from scipy.stats import rankdata

    n_pos = int(np.count_nonzero(positive))
    n_neg = positive.shape[0] - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _metrics(totals, model):
    tp, fp, tn, fn, m = totals.tp, totals.fp, totals.tn, totals.fn, totals.m
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    auc = None
    if totals.scores is not None and m:
        auc = roc_auc(np.concatenate(totals.scores), np.concatenate(totals.truth))
    return {
        "examples": m,
        "accuracy": _ratio(tp + tn, m),
        "correct": tp + tn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "roc_auc": auc,
        "hinge_loss": _ratio(totals.hinge, m),
        "confusion": {"tp": tp, "fp": fp, "tn": tn, "fn": fn},
        "positive_label": model.labels.positive_text,
        "negative_label": model.labels.negative_text,
    }


def _stream(model, path, progress, keep_scores):
    zero_based = model.info.get("index_base", "1") == "0"
    totals = _Totals(keep_scores)
    for chunk in iter_svmlight(path, zero_based=zero_based, progress=progress, labels=model.labels):
        y = model.labels.encode(chunk.labels)
        totals.add(model.decision_function(chunk), y)
    return totals


def evaluate_file(model, path, auc=True, progress=None):
    """Classification metrics of ``model`` on an SVMlight file.

    Returns
    -------
    dict
        ``examples``, ``accuracy``, ``precision``, ``recall``, ``f1`` (of the
        positive class), ``roc_auc``, ``hinge_loss`` (mean), ``confusion``
        (``tp``, ``fp``, ``tn``, ``fn``).  A metric that is undefined (no
        examples, no predicted or actual positives, one class for AUC) is None.

    Raises
    ------
    DataError
        Malformed file, or a label that is not one of the model's two labels.
    """
    return _metrics(_stream(model, path, progress, auc), model)


def evaluate(model, X, y):
    """In-memory version of :func:`evaluate_file`; ``y`` holds label values."""
    totals = _Totals(True)
    totals.add(model.decision_function(X), model.labels.encode(y))
    return _metrics(totals, model)


def _objective(totals, model, lam):
    lam = model.lam if lam is None else float(lam)
    sq = float(np.dot(model.w, model.w)) + (model.bias ** 2 if model.bias_mode == "feature" else 0.0)
    hinge = _ratio(totals.hinge, totals.m)
    reg = 0.5 * lam * sq
    return {
        "examples": totals.m,
        "lambda": lam,
        "objective": None if hinge is None else reg + hinge,
        "regularizer": reg,
        "hinge_loss": hinge,
        "norm_w": math.sqrt(float(np.dot(model.w, model.w))),
        "bias": model.bias,
        "bias_mode": model.bias_mode,
        "error_rate": _ratio(totals.fp + totals.fn, totals.m),
    }


def objective_file(model, path, lam=None, progress=None):
    """Primal objective of ``model`` on an SVMlight file, streamed.

    f(w) = lambda/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i (<w, x_i> + b))
    (paper Eq. (1); with ``bias_mode == "feature"`` the regulariser also
    holds b^2, the problem that bias mode solves).

    Parameters
    ----------
    lam : float, optional
        lambda to evaluate with; default the model's.

    Returns
    -------
    dict
        ``objective``, ``lambda``, ``regularizer``, ``hinge_loss`` (mean),
        ``norm_w`` (||w||, bias excluded), ``error_rate``, ``examples``.
    """
    return _objective(_stream(model, path, progress, False), model, lam)


def objective(model, X, y, lam=None):
    """In-memory version of :func:`objective_file`; ``y`` holds label values."""
    totals = _Totals(False)
    totals.add(model.decision_function(X), model.labels.encode(y))
    return _objective(totals, model, lam)
