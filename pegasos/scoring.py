"""Scoring a model on data: primal objective and classification metrics.

Files are streamed chunk by chunk (:func:`pegasos.io.iter_svmlight`), so the
memory used by :func:`objective_file` and by prediction does not grow with the
number of examples.  :func:`evaluate_file` keeps one float64 decision value
per example for the exact ROC AUC (pass ``auc=False`` to keep memory flat).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ExampleError, ParameterError
from .examples import check_query_ids, check_sample_weight
from .io import example_line, iter_svmlight
from .linear import example_losses, ovr_log_probabilities
from .options import parse_class_weights

if TYPE_CHECKING:
    import os
    from collections.abc import Callable

    from numpy.typing import ArrayLike, NDArray

    from .io import Matrix
    from .modelfile import Model


def class_weights(model):
    """The model's class weights as {label value: weight} (empty if none)."""
    text = getattr(model, "info", {}).get("class_weights", "-") if model is not None else "-"
    return {} if text in ("-", "") else parse_class_weights(text)


def _weights_of(weights, raw):
    w = np.ones(raw.shape[0])
    for label, weight in weights.items():
        w[raw == label] = weight
    return w


class _Totals:
    """Running sums over decision values f and labels y in {-1, +1}."""

    def __init__(self, keep_scores, model=None):
        self.m = 0
        self.hinge = 0.0
        self.loss = 0.0              # the loss the model was trained with, class-weighted
        self.loss_name = getattr(model, "loss", "hinge")
        self.epsilon = getattr(model, "epsilon", None)
        self.weights = class_weights(model)
        self.tp = self.fp = self.tn = self.fn = 0
        self.scores = _ClassScores() if keep_scores else None

    def add(self, f, y, raw=None, sample_weight=None):
        self.m += f.shape[0]
        hinge = np.maximum(0.0, 1.0 - y * f)
        self.hinge += float(hinge.sum())
        per = hinge if self.loss_name == "hinge" else example_losses(self.loss_name, f, y, self.epsilon)
        if self.weights and raw is not None:
            per = per * _weights_of(self.weights, raw)
        if sample_weight is not None:
            per = per * sample_weight
        self.loss += float(per.sum())
        pred = f > 0
        pos = y > 0
        self.tp += int(np.count_nonzero(pred & pos))
        self.fp += int(np.count_nonzero(pred & ~pos))
        self.fn += int(np.count_nonzero(~pred & pos))
        self.tn += int(np.count_nonzero(~pred & ~pos))
        if self.scores is not None:
            self.scores.add(f, pos)


class _ClassScores:
    """The decision values of the positive and of the negative examples, kept for the ROC AUC:
    8 bytes per example (float64), in chunks until :meth:`auc` joins each class's."""

    def __init__(self):
        self.pos, self.neg = [], []

    def add(self, f, positive):
        self.pos.append(np.ascontiguousarray(f[positive], dtype=np.float64))
        self.neg.append(np.ascontiguousarray(f[~positive], dtype=np.float64))

    def auc(self):
        """The ROC AUC of the values added (see :func:`roc_auc_of_classes`); the chunks are freed
        as they are joined, so the peak is one class's values more than what was kept."""
        return roc_auc_of_classes(_joined(self.pos), _joined(self.neg))


def _joined(chunks):
    """One array of ``chunks`` (a list of 1-D float64 arrays, emptied), each freed once copied."""
    out = np.empty(sum(c.shape[0] for c in chunks))
    at = 0
    chunks.reverse()
    while chunks:
        c = chunks.pop()
        out[at:at + c.shape[0]] = c
        at += c.shape[0]
    return out


AUC_BLOCK = 1 << 20     # positives counted against the sorted negatives at a time


def roc_auc_of_classes(pos, neg):
    """Area under the ROC curve of the scores ``pos`` of the positive examples and ``neg`` of the
    negative ones (1-D float64; both are sorted in place), ties counting one half; None without
    both classes.

    The Mann-Whitney count: each positive scores over the negatives below it and half over
    those equal to it, found by binary search in the sorted negatives, in blocks of AUC_BLOCK
    positives; the count is kept doubled in int64, exact up to about 4e9 examples."""
    if pos.shape[0] == 0 or neg.shape[0] == 0:
        return None
    pos.sort()
    neg.sort()
    twice = 0
    for at in range(0, pos.shape[0], AUC_BLOCK):
        block = pos[at:at + AUC_BLOCK]
        twice += int(np.searchsorted(neg, block, side="left").sum(dtype=np.int64))
        twice += int(np.searchsorted(neg, block, side="right").sum(dtype=np.int64))
    return twice / (2.0 * pos.shape[0] * neg.shape[0])


def _ratio(a, b):
    return a / b if b else None


def roc_auc(scores, positive):
    """Area under the ROC curve (ties count one half), or None without both classes
    (:func:`roc_auc_of_classes`; ``scores`` is left as it is).

    Parameters
    ----------
    scores : ndarray of shape (m,), float64
    positive : ndarray of shape (m,), bool
    """
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    return roc_auc_of_classes(scores[positive], scores[~positive])


def _metrics(totals, model):
    tp, fp, tn, fn, m = totals.tp, totals.fp, totals.tn, totals.fn, totals.m
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    # 2 TP / (2 TP + FP + FN), as for each class of a multiclass model: 0, not undefined, when no
    # example is predicted positive but some are (precision alone is undefined there)
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    auc = None
    if totals.scores is not None and m:
        auc = totals.scores.auc()
    return {
        "examples": m,
        "accuracy": _ratio(tp + tn, m),
        "correct": tp + tn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "roc_auc": auc,
        "hinge_loss": _ratio(totals.hinge, m),
        **({"log_loss": _ratio(totals.loss, m)} if totals.loss_name == "log" else {}),
        "confusion": {"tp": tp, "fp": fp, "tn": tn, "fn": fn},
        "positive_label": model.labels.positive_text,
        "negative_label": model.labels.negative_text,
    }


def _stream(model, path, progress, keep_scores, sample=None, seed=1):
    zero_based = model.info.get("index_base", "1") == "0"
    totals = _Totals(keep_scores, model)
    rng = None if sample is None else np.random.Generator(np.random.PCG64(seed))
    for chunk in iter_svmlight(path, zero_based=zero_based, progress=progress, labels=model.labels):
        y = model.labels.encode(chunk.labels)
        if rng is not None:
            keep = rng.random(chunk.n_rows) < sample
            X, y = chunk.matrix()[keep], y[keep]
            totals.add(model.decision_function(X), y, chunk.labels[keep])
            continue
        totals.add(model.decision_function(chunk), y, chunk.labels)
    return totals


def evaluate_file(model: Model, path: str | os.PathLike[str], auc: bool = True,
                  progress: Callable[[int], object] | None = None) -> dict[str, Any]:
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
    if getattr(model, "task", "binary") != "binary":
        return _in_file(path, lambda: _evaluate_other(model, _collect(model, path, progress)))
    return _metrics(_stream(model, path, progress, auc), model)


def evaluate(model: Model, X: Matrix, y: ArrayLike, qid: ArrayLike | None = None) -> dict[str, Any]:
    """In-memory version of :func:`evaluate_file`; ``X`` of shape (m, d), ``y``
    (m,) holds label values (``qid``, int64 (m,), the queries of a ranking
    model's examples).

    Raises
    ------
    ExampleError
        A label that is not one of the model's (a ParameterError).
    """
    f, y = _scored(model, X, y)
    if getattr(model, "task", "binary") != "binary":
        return _evaluate_other(model, [(f, y, qid)])
    totals = _Totals(True, model)
    totals.add(f, model.labels.encode(y), y)
    return _metrics(totals, model)


def _scored(model, X, y):
    """(decision values of X, y as float64), one label per row of X.

    Raises
    ------
    ParameterError
        ``y`` is not one number per row of X (or X is not a matrix of numbers: see the model's
        ``decision_function``).
    """
    f = model.decision_function(X)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != f.shape[0]:
        raise ParameterError(f"y has shape {y.shape} for the {f.shape[0]} rows of X: it needs one label per row")
    return f, y


def _objective(totals, model, lam):
    lam = model.lam if lam is None else float(lam)
    sqw = model.squared_norm()
    sq = sqw + (model.bias ** 2 if model.bias_mode == "feature" else 0.0)
    hinge = _ratio(totals.hinge, totals.m)
    mean_loss = _ratio(totals.loss, totals.m)
    reg = 0.5 * lam * sq
    return {
        "examples": totals.m,
        "lambda": lam,
        "objective": None if mean_loss is None else reg + mean_loss,
        "regularizer": reg,
        "loss": totals.loss_name,
        "mean_loss": mean_loss,
        "hinge_loss": hinge,
        "norm_w": math.sqrt(sqw),
        "bias": model.bias,
        "bias_mode": model.bias_mode,
        "error_rate": _ratio(totals.fp + totals.fn, totals.m),
    }


class RunningObjective:
    """The objective (paper Eq. (1)) and error rate of a binary ``model``, summed block by block over
    data seen once (a streamed pass): the numbers :func:`objective` gives on all the blocks at once.

    :meth:`add` takes a block's decision values f (float64 (r,)) and labels (the label values, float64
    (r,)); :meth:`result` returns :func:`objective`'s dict at ``lam`` (default the model's).
    """

    def __init__(self, model: Model):
        self.model = model
        self.totals = _Totals(False, model)

    def add(self, f: NDArray[np.float64], labels: NDArray[np.float64]) -> None:
        raw = np.asarray(labels, dtype=np.float64)
        self.totals.add(f, self.model.labels.encode(raw), raw)

    def result(self, lam: float | None = None) -> dict[str, Any]:
        return _objective(self.totals, self.model, lam)


def objective_file(model: Model, path: str | os.PathLike[str], lam: float | None = None,
                   progress: Callable[[int], object] | None = None, sample: float | None = None,
                   seed: int = 1) -> dict[str, Any]:
    """Primal objective of ``model`` on an SVMlight file, streamed.

    f(w) = lambda/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i (<w, x_i> + b))
    (paper Eq. (1); with ``bias_mode == "feature"`` the regulariser also
    holds b^2, the problem that bias mode solves).

    Parameters
    ----------
    lam : float, optional
        lambda to evaluate with; default the model's.
    sample : float in (0, 1], optional
        Estimate the hinge loss (and error rate) on a random subset: each
        example is kept with this probability (``seed`` seeds the draw).
        For kernel models the hinge part costs |S| kernel evaluations per
        example and ||w||^2 costs |S|^2; only the first is reduced.

    Returns
    -------
    dict
        ``objective``, ``lambda``, ``regularizer``, ``hinge_loss`` (mean),
        ``norm_w`` (||w||, bias excluded), ``error_rate``, ``examples``.

    Raises
    ------
    DataError
        Malformed file, or a label that is not one of the model's.
    """
    if getattr(model, "task", "binary") != "binary":
        return _in_file(path, lambda: _objective_other(model, _collect(model, path, progress), lam))
    r = _objective(_stream(model, path, progress, False, sample, seed), model, lam)
    if sample is not None:
        r["sample"] = float(sample)
    return r


def objective(model: Model, X: Matrix, y: ArrayLike, lam: float | None = None, qid: ArrayLike | None = None,
              sample_weight: ArrayLike | None = None) -> dict[str, Any]:
    """In-memory version of :func:`objective_file`, optionally with example weights.

    Parameters
    ----------
    model : a trained model (any task)
    X : scipy.sparse matrix, :class:`pegasos.io.Chunk` or dense array, shape (m, d)
    y : array (m,)
        Label values (targets for regression).
    lam : float or None
        lambda to evaluate with; default the model's.
    qid : int64 (m,) or None
        The queries of a ranking model's examples.
    sample_weight : array (m,) of finite numbers >= 0, or None
        Example weights s_i: the loss part becomes 1/m sum_i c_i s_i loss_i
        (c_i the model's class weight), the objective that training with
        these weights minimises (paper Eq. (1) with weighted losses; the
        mean is still over m, not over the sum of the weights).  None: s_i
        = 1, the objective of :func:`objective_file`.  A binary model's
        ``hinge_loss`` stays the plain mean hinge loss.

    Returns
    -------
    dict
        As :func:`objective_file`.

    Raises
    ------
    ParameterError
        ``sample_weight`` of the wrong length, or not finite and >= 0, or
        given for a ranking model (the rank loss takes no example weights).
    """
    f, y = _scored(model, X, y)
    sw = None if sample_weight is None else check_sample_weight(sample_weight, int(y.shape[0]))
    return objective_of_decisions(model, f, y, lam, qid, sw)


def objective_of_decisions(model: Model, f: NDArray[np.float64], y: ArrayLike, lam: float | None = None,
                           qid: ArrayLike | None = None,
                           sample_weight: NDArray[np.float64] | None = None) -> dict[str, Any]:
    """:func:`objective` from the decision values ``f`` of the examples (``model.decision_function``'s:
    float64 (m,), or (m, K) for a multiclass model), for a caller that has them already.

    ``y``, ``lam`` and ``qid`` are :func:`objective`'s; ``sample_weight`` is float64 (m,) as
    :func:`pegasos.examples.check_sample_weight` returns it, or None.  Returns and raises as
    :func:`objective`."""
    if getattr(model, "task", "binary") != "binary":
        return _objective_other(model, [(f, np.asarray(y, dtype=np.float64), qid)], lam, sample_weight=sample_weight)
    totals = _Totals(False, model)
    totals.add(f, model.labels.encode(y), np.asarray(y, dtype=np.float64), sample_weight)
    return _objective(totals, model, lam)


# ------------------------------------------------------------------------------------------------------
# multiclass, regression and ranking: these keep one score row per example (O(m) memory)

def _collect(model, path, progress):
    """[(decision values, label values, qids)] for each chunk of the file."""
    zero_based = model.info.get("index_base", "1") == "0"
    known = model if model.task == "multiclass" else None      # unknown classes: error naming the line
    return [(model.decision_function(c), c.labels, c.qid)
            for c in iter_svmlight(path, zero_based=zero_based, progress=progress, labels=known)]


def _concat(parts):
    if not parts:
        return np.zeros(0), np.zeros(0), None
    f = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    q = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
    return f, y, q


def _query_groups(q):
    """Index arrays of the examples of each query (qid >= 0), in qid order."""
    if q is None or q.size == 0:
        return []
    order = np.argsort(q, kind="stable")
    qs = q[order]
    cuts = np.flatnonzero(qs[1:] != qs[:-1]) + 1
    return [g for g in np.split(order, cuts) if q[g[0]] >= 0]


def _tied_dcg(scores, gains, disc):
    """DCG over the first len(disc) positions of the order of decreasing ``scores``, where examples of
    equal score share their positions: each gets the mean gain of its tie group (as scikit-learn's
    ndcg_score), so the value does not depend on the order of the file (it did: 0.7974 against 0.8443
    for the same lines reversed, every score 0)."""
    order = np.argsort(-scores, kind="stable")
    s, gs = scores[order], gains[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    mean_gain = np.add.reduceat(gs, starts) / np.diff(np.r_[starts, s.size])
    k = disc.shape[0]
    position_disc = np.zeros(s.size)
    position_disc[:k] = disc
    return float(mean_gain @ np.add.reduceat(position_disc, starts))


def _ranking_pairs(f, y, q):
    """(pairs, violated pairs, hinge sum, per-query NDCG@10) over ordered pairs
    with the same qid and y_a > y_b."""
    n_pairs = correct = 0
    hinge = 0.0
    ndcg = []
    for g in _query_groups(q):
        fy, yy = f[g], y[g]
        diff_y = yy[:, None] - yy[None, :]
        diff_f = fy[:, None] - fy[None, :]
        mask = diff_y > 0
        n_pairs += int(mask.sum())
        correct += int((diff_f[mask] > 0).sum())
        hinge += float(np.maximum(0.0, 1.0 - diff_f[mask]).sum())
        gains = 2.0 ** yy - 1.0
        disc = 1.0 / np.log2(np.arange(2, min(10, g.size) + 2))
        ideal = np.sort(gains)[::-1][:10] @ disc[: min(10, g.size)]
        got = _tied_dcg(fy, gains, disc)
        if ideal > 0:
            ndcg.append(got / ideal)
    return n_pairs, correct, hinge, ndcg


def _check_queries(q, m):
    """Refuse ranking metrics on examples without queries: every one of the ``m``
    examples needs a ``qid`` >= 0 (-1: none, -2: not an integer below 10^18),
    as training with the rank loss does; zero examples give n/a as before.

    Raises
    ------
    ExampleError
        Naming the first example without a usable qid (the file's line once
        :func:`_in_file` has told it of the file).
    """
    if not m:
        return
    check_query_ids(q, "a ranking model's pairs and queries need")


def _in_file(path, compute):
    """``compute()``, with an :class:`ExampleError` told of the file ``path`` and its line."""
    try:
        return compute()
    except ExampleError as e:
        raise e.in_file(path, example_line(path, e.example)) from None


def _evaluate_other(model, parts):
    f, y, q = _concat(parts)
    m = int(y.shape[0])
    task = model.task
    if task == "ranking":
        _check_queries(q, m)
    if task == "regression":
        err = f - y
        var = float(np.var(y)) if m else 0.0
        return {"examples": m, "task": task,
                "mse": float(np.mean(err ** 2)) if m else None,
                "mae": float(np.mean(np.abs(err))) if m else None,
                "r2": (1.0 - float(np.mean(err ** 2)) / var) if m and var > 0 else None,
                "eps_insensitive_loss": float(np.mean(example_losses(model.loss, f, y, model.epsilon)))
                if m else None}
    if task == "ranking":
        n_pairs, correct, _, ndcg = _ranking_pairs(f, y, q)
        # NDCG@10 is the mean over the queries with a relevant example (gain 2^y - 1 > 0): one without has no
        # ideal ordering to divide by; ndcg_queries says how many were averaged
        return {"examples": m, "task": task, "queries": len(_query_groups(q)), "pairs": n_pairs,
                "pairwise_accuracy": _ratio(correct, n_pairs),
                "ndcg_at_10": float(np.mean(ndcg)) if ndcg else None, "ndcg_queries": len(ndcg)}
    # multiclass
    K = model.n_classes
    idx = model.class_index(y) if m else np.zeros(0, dtype=np.int32)
    pred = np.argmax(f, axis=1) if m else np.zeros(0, dtype=np.int64)
    conf = np.zeros((K, K), dtype=np.int64)
    np.add.at(conf, (idx, pred), 1)
    per_class = []
    for c in range(K):
        tp = int(conf[c, c])
        precision = _ratio(tp, int(conf[:, c].sum()))
        recall = _ratio(tp, int(conf[c, :].sum()))
        # 2TP / (2TP + FP + FN): defined (0) for a class with support that is never predicted,
        # whose precision is undefined; None only for a class absent from the truth and the predictions
        f1 = _ratio(2 * tp, 2 * tp + int(conf[:, c].sum()) - tp + int(conf[c, :].sum()) - tp)
        per_class.append({"label": model.class_texts[c], "support": int(conf[c, :].sum()),
                          "precision": precision, "recall": recall, "f1": f1})
    f1s = [p["f1"] for p in per_class if p["f1"] is not None]
    out = {"examples": m, "task": task, "classes": K,
           "accuracy": _ratio(int(np.trace(conf)), m), "correct": int(np.trace(conf)),
           "macro_f1": float(np.mean(f1s)) if f1s else None,
           "per_class": per_class, "confusion": conf.tolist(),
           "labels": list(model.class_texts)}
    if model.method == "ovr" and model.loss == "log":
        # -mean log p(true class), p the probabilities predict --proba writes
        out["log_loss"] = float(-np.mean(ovr_log_probabilities(f)[np.arange(m), idx])) if m else None
    return out


def _objective_other(model, parts, lam=None, sample_weight=None):
    """The regularised objective of the loss the model was trained with (example weights
    ``sample_weight``, float64 (m,) or None, times the class weights)."""
    f, y, q = _concat(parts)
    m = int(y.shape[0])
    lam = model.lam if lam is None else float(lam)
    task = model.task
    out = {"examples": m, "lambda": lam, "task": task, "loss": model.loss}
    if task == "ranking":
        _check_queries(q, m)
    weights = class_weights(model)
    if task == "ranking" and sample_weight is not None:
        raise ParameterError("sample weights do not apply to the rank loss (it samples pairs)")
    if task == "multiclass":
        idx = model.class_index(y) if m else np.zeros(0, dtype=np.int32)
        sw = _weights_of(weights, y) if weights else np.ones(m)
        if sample_weight is not None:
            sw = sw * sample_weight
        # row by row without BLAS: a threaded ddot per class took 8 ms on a busy 2-core machine (sector's
        # 105 classes: 0.86 s), and W ** 2 a temporary as large as W
        sq_rows = np.einsum("ij,ij->i", model.W, model.W)
        if model.bias_mode == "feature":
            sq_rows = sq_rows + model.biases ** 2
        sq = float(np.sum(sq_rows))
        if model.method == "crammer-singer":
            K = model.n_classes
            cost = (1.0 - np.eye(K)) if model.cost is None else np.asarray(model.cost).reshape(K, K)
            zy = f[np.arange(m), idx] if m else np.zeros(0)
            viol = np.max(cost[idx] + f - zy[:, None], axis=1) if m else np.zeros(0)
            mean_loss = float(np.mean(sw * viol)) if m else None
            out.update(objective=None if mean_loss is None else 0.5 * lam * sq + mean_loss, mean_loss=mean_loss,
                       regularizer=0.5 * lam * sq)
        else:
            per_class = []
            for c in range(model.n_classes):
                y_pm = np.where(idx == c, 1.0, -1.0)
                loss_c = float(np.mean(sw * example_losses(model.loss, f[:, c], y_pm))) if m else None
                sq_c = float(sq_rows[c])
                per_class.append(None if loss_c is None else 0.5 * lam * sq_c + loss_c)
            out.update(objective=None if not m else float(np.sum(per_class)), per_class_objective=per_class,
                       regularizer=0.5 * lam * sq)
        out["error_rate"] = float(np.mean(np.argmax(f, axis=1) != idx)) if m else None
        return out
    w_sq = float(np.einsum("i,i->", model.w, model.w))      # no BLAS thread hand-off for one dot product
    sq = w_sq + (model.bias ** 2 if model.bias_mode == "feature" else 0.0)
    if task == "regression":
        losses = example_losses(model.loss, f, y, model.epsilon)
        if sample_weight is not None:
            losses = losses * sample_weight
        mean_loss = float(np.mean(losses)) if m else None
    else:
        n_pairs, _, hinge, _ = _ranking_pairs(f, y, q)
        mean_loss = _ratio(hinge, n_pairs)
        out["pairs"] = n_pairs
    out.update(objective=None if mean_loss is None else 0.5 * lam * sq + mean_loss, mean_loss=mean_loss,
               regularizer=0.5 * lam * sq, norm_w=math.sqrt(w_sq))
    return out
