"""The dual finish: passes of dual coordinate ascent after a Pegasos run, until certified.

Averaged Pegasos reaches an error that decays like 1/(lambda T) (paper
Sec. 2): when lambda m is small (C = 1/(lambda m) >= 1, e.g. mushrooms,
reuters, heart_scale and dna at lambda = 1e-4) 1% of the optimum costs
hundreds to thousands of epochs.  The dual of the same problem
(:mod:`pegasos.certificate`) is solved at a linear rate by coordinate ascent
(Hsieh, Chang, Lin, Keerthi and Sundararajan, ICML 2008), each pass O(nnz)
like an epoch, and every dual point alpha gives a primal candidate
w(alpha) = sum_i alpha_i y_i x_i (in the scaling of the certificate, the
primal w itself) and a lower bound D(alpha) <= f*.  So when the doubling of
:func:`pegasos.autotune.train_until_converged` shows Pegasos in its slow
regime, the run is finished in the dual: passes from the model's margins
until the better of the two models is certified within ``tol`` of f*.

Measured at lambda = 1e-4 (passes from alpha = 0 to a primal within 1% of
f*): reuters 8, w8a 3, a9a 11, mushrooms 98, agaricus 102, heart_scale about
1000, against 64, 16, 2, 4096, 4096 and 16384 epochs of averaged Pegasos.

The finished model is reproduced from its header: the Pegasos run of its
``iterations``, then ``finish_passes`` passes (per class for one-vs-rest)
with the model's ``seed``, keeping w(alpha) when its primal objective is
lower than the Pegasos model's.
"""

import dataclasses
import math

import numpy as np

from .certificate import (ShrinkingPasses, crammer_singer_problem, dual_bound, dual_vector, model_weights,
                          problem_terms, scaled_start)
from .defaults import DUAL_WORK
from .errors import ParameterError
from .options import MAX_FINISH_PASSES

FINISH_UPDATES = DUAL_WORK      # a problem's passes end (at a check) after this much work (pegasos.defaults)
CHECK_EVERY = 1 << 16           # checks: after 1, 2, 4, ... passes (and between), at least every this many
MIN_STRIDE = 0.125              # a check between doublings comes at least this fraction of the passes after the last
CS_UPDATES = 1 << 34            # Crammer-Singer's passes end (at a check) after this much work: K (1 + nnz(x_i))
                                # per visit; sector (105 classes) at lambda = 1e-4 is certified within 0.2%
                                # after 25 passes, under 2^32 of it


def applicable(options, ex=None):
    """Why the dual finish cannot run for ``options`` (a phrase), or None when it can
    (:meth:`pegasos.options.TrainOptions.finish_unavailable`).  Class weights and example weights
    both scale their example's loss (and its dual box)."""
    return options.finish_unavailable()


def check_finish_passes(value, classes, name="finish_passes"):
    """``value`` (an int, or a tuple of ``classes`` ints for one-vs-rest) as a tuple of ints in
    [0, MAX_FINISH_PASSES]; ParameterError naming ``name`` otherwise."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    out = []
    for p in items:
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 0 <= p <= MAX_FINISH_PASSES:
            raise ParameterError(f"{name} must be whole numbers between 0 and {MAX_FINISH_PASSES}, got {value!r}")
        out.append(int(p))
    if len(out) == 1:
        out = out * classes
    if len(out) != classes:
        raise ParameterError(f"{name} has {len(out)} entries for {classes} problems (one per class, or one for all)")
    return tuple(out)


def _primal(indptr, indices, data, y_pm, c, v, lam, loss, bias_value, checked=False):
    """P(w) for w = v[:n_cols] and bias v[n_cols] (a regularised constant feature), compiled, without the
    GIL (float64 sums; their rounding is far below any gap reported); ``checked``: the column indices
    were already checked (by :class:`ShrinkingPasses`, on these arrays)."""
    from . import _dual

    return float(_dual.primal_value(indptr, indices, data, y_pm, c, v, bias_value, lam, loss == "squared-hinge",
                                    checked))


def _aim(before, after, tol):
    """The pass at which the gap reaches ``tol`` if it keeps the linear rate of the last two checks
    ``before`` and ``after`` ((passes, gap) pairs), at least MIN_STRIDE of the passes after the last
    check; None without a rate (no earlier check, no tol, or a gap that did not shrink)."""
    if before is None or tol is None or not 0 < tol < after[1] < before[1] or after[0] <= before[0]:
        return None
    per_pass = math.log(after[1] / before[1]) / (after[0] - before[0])
    ahead = math.ceil(math.log(tol / after[1]) / per_pass)
    return after[0] + max(ahead, math.ceil(MIN_STRIDE * after[0]), 1)


def finish_problem(indptr, indices, data, n_cols, y_pm, c, margins, primal, *, lam, loss, bias_value, seed,
                   tol=None, passes=None, row_norms=None, max_work=None, helper=False):
    """Dual coordinate ascent on one binary problem, from a model's margins.

    The passes are those of the duality gap, with shrinking
    (:class:`pegasos.certificate.ShrinkingPasses`); the rounds and their
    stopping rule are the finish's own.

    Parameters
    ----------
    indptr, indices, data : CSR arrays (int64, int32, float32/64) of the m examples
    n_cols : int
        Every column index is below it.
    y_pm, c, margins : float64 (m,)
        Labels in {-1, +1}, class weights c_i >= 0, the model's margins y_i f(x_i).
    primal : float
        The model's primal objective P (paper Eq. (1)).
    lam, loss, bias_value :
        lambda > 0; "hinge" or "squared-hinge"; 1.0 for a regularised
        constant feature, else 0.0.
    seed : int
        Seed of the coordinate orders.
    tol : float or None
        Stop after the first pass whose dual value D certifies P,
        (P - D) / P <= tol, or at the first check (after 1, 2, 4, 8, ...
        passes, at least every ``CHECK_EVERY`` passes, and where the rate
        of the gap so far says it is reached; none while a pass still
        raises D by more than tol P) where
        (min(P, P(w(alpha))) - D) / min(...) <= tol, D the best dual value
        seen; or once the passes have done
        ``max_work`` units of work (a visit of coordinate i costs
        1 + nnz(x_i); shrinking, Hsieh et al. Sec. 3.2, leaves coordinates
        stuck at a bound out of most passes).
    passes : int or None
        Run exactly this many passes instead (``tol`` is then ignored).
    row_norms : float64 (m,) or None
        ||x_i||^2, when the caller has them (one-vs-rest: once for all classes).
    max_work : int > 0
        The bound of the work with ``tol`` (None: ``FINISH_UPDATES``, 2^32).  No stall rule ends
        the passes sooner: a dual can be slow for hundreds of passes and then fast (200 separable
        rows at lambda = 1e-3 were 4.7 times above f* at 256 passes, and 8192 passes reach it).
    helper : bool
        The passes may use a second processor (:class:`pegasos.certificate.ShrinkingPasses`);
        no result depends on it.

    Returns
    -------
    dict
        ``w`` (float64 (n_cols + 1,), w(alpha) with the constant feature's
        weight last) and ``primal_dual`` its objective; ``dual`` the best
        lower bound on f*; ``passes`` run; ``certified`` whether ``tol`` was
        met.
    """
    max_work = FINISH_UPDATES if max_work is None else max_work
    upper, diag, qii = problem_terms(indptr, indices, data, n_cols, c, lam, loss, bias_value, row_norms)
    alpha, v = scaled_start(indptr, indices, data, n_cols, y_pm, margins, upper, diag, loss, bias_value)
    best_dual = dual_bound(lam, alpha, v, diag)
    bound = MAX_FINISH_PASSES if passes is None else int(passes)
    ascent = ShrinkingPasses(indptr, indices, data, y_pm, upper, diag, qii, bias_value, alpha, v, seed=seed,
                             helper=helper)
    # with tol, the passes stop as soon as their dual value certifies the Pegasos model (free: the passes
    # keep D(alpha)).  A check of w(alpha) costs an O(nnz) pass over the rows (sector: 3.2 ms against
    # 3.9 ms for a pass), so it is made at the doublings (1, 2, 4, ... passes),
    # and in between where the gap's rate so far says tol is reached (no sooner than MIN_STRIDE of the
    # passes after the last check); it is skipped while the last pass alone raised D by more than tol of
    # the best primal so far, since at a linear rate no faster than 1/2 a pass what remains, f* - D, is
    # at least that rise
    stop_at = primal * (1.0 - tol) / lam if tol is not None and primal > 0 else math.inf
    run, doubling, aim = 0, 1, None
    seen = None
    p_dual, checked = None, -1
    best = primal
    kept = (math.inf, None, 0)          # the checked w(alpha) of lowest objective: (P, w, passes)
    if passes is not None:
        run = ascent.run(bound)          # the iterates do not depend on how the passes are cut into calls
    while passes is None and run < bound and ascent.work < max_work:
        to = doubling if aim is None else min(aim, doubling)
        got = ascent.run(min(to, bound, run + CHECK_EVERY) - run, stop_at)
        if got == 0:
            break
        run += got
        if not math.isfinite(ascent.value):         # overflowed (see dual_bound): no later pass can mend it
            break
        if tol is not None and best > 0 and ascent.value < stop_at and lam * ascent.rise > tol * best:
            doubling, aim = (2 * run if run >= doubling else doubling), None
            continue
        p_dual, checked = _primal(indptr, indices, data, y_pm, c, v, lam, loss, bias_value, True), run
        if p_dual < kept[0]:
            kept = (p_dual, v.copy(), run)
        best = min(primal, p_dual)
        now = max(best_dual, lam * ascent.value)    # the loop's running D: to decide only
        gap = (best - now) / best if best > 0 else 0.0
        if tol is not None and gap <= tol:
            break
        aim = _aim(seen, (run, gap), tol)
        seen = (run, gap)
        if run < doubling and run < bound:
            continue
        doubling = 2 * run
    if checked != run:
        p_dual = _primal(indptr, indices, data, y_pm, c, v, lam, loss, bias_value, True)
    if run:
        exact = dual_vector(indptr, indices, data, n_cols, alpha * y_pm, bias_value)    # the bound: from alpha
        best_dual = max(best_dual, dual_bound(lam, alpha, exact, diag))
    if not math.isfinite(p_dual):
        p_dual = math.inf                            # w(alpha) overflowed: never kept
    best = min(primal, p_dual)
    certified = tol is not None and best > 0 and (best - best_dual) / best <= tol
    if not certified and passes is None and kept[0] < best:
        # uncertified at the bound: the primal of w(alpha) need not fall with the passes (features of very
        # different scales: 0.19 at 1000 passes, above 1 at 700,000, where w = 0 was kept), so the best
        # checked one is returned, with its passes (which retrain it: the iterates do not depend on how
        # the passes are cut) and the bound of them all
        p_dual, v, run = kept
        best = min(primal, p_dual)
    return {"w": v, "primal_dual": p_dual, "dual": best_dual, "passes": run, "certified": certified}


def _loss_weights(model, ex, raw):
    """c_i: the example's class weight times its own weight (``ex.sample_weight``), float64 (m,)."""
    from .scoring import class_weights

    c = np.ones(raw.shape[0])
    for label, weight in class_weights(model).items():
        c[raw == label] = weight
    if ex.sample_weight is not None:
        c = c * np.asarray(ex.sample_weight, dtype=np.float64)
    return c


def finish_binary(model, ex, *, tol=None, passes=None, seed=None, max_work=None, helper=False):
    """The better of ``model`` and the dual finish of its problem on ``ex`` (:func:`finish_problem`).

    Parameters
    ----------
    model : LinearModel
        A binary model with a loss and bias mode of :func:`applicable`.
    ex : pegasos.examples.Examples
        Its training examples.
    tol, passes, max_work, helper :
        As :func:`finish_problem`.
    seed : int or None
        Seed of the coordinate orders (default: the model's).

    Returns
    -------
    LinearModel
        A copy with ``info`` entries ``finish`` ("dual"), ``finish_passes``,
        ``finish_kept`` ("dual" when w(alpha) replaced the weights, else
        "pegasos") and ``certified_gap`` (the relative gap proven for the
        returned model); without a solver state when its weights changed.
    """
    raw = np.asarray(ex.y, dtype=np.float64)
    y_pm = model.labels.encode(raw)
    c = _loss_weights(model, ex, raw)
    bias_value = 1.0 if model.bias_mode == "feature" else 0.0
    if model.w.any() or (bias_value and model.bias):
        margins = y_pm * model.decision_function(ex.chunk)
    else:       # from w = 0: margins 0, losses 1, without two passes over the data (0.2 s on 5e7 values)
        margins = None
    return _finish_one(model, ex, y_pm, c, margins, bias_value, tol=tol, passes=passes, seed=seed,
                       max_work=max_work, helper=helper)


def finish_ranking(model, ex, *, pairs=None, tol=None, passes=None, seed=None, max_work=None,
                   helper=False):
    """:func:`finish_binary` of a ranking model: the rank loss's objective is the binary hinge objective
    of the pair differences x_a - x_b, labelled +1, with no bias (:func:`pegasos.examples.pair_differences`),
    so the dual passes, w(alpha) and the certificate are those of that binary problem.

    Parameters
    ----------
    model : LinearModel
        Task "ranking" (loss "rank", bias "none").
    ex : pegasos.examples.Examples
        Its training examples, with ``qid``.
    pairs : (Examples, a, b) or None
        :func:`pegasos.examples.pair_differences` of ``ex`` when the caller has it.
    tol, passes, seed, max_work, helper :
        As :func:`finish_binary` (the units of work are those of the pair problem).

    Returns
    -------
    LinearModel
        As :func:`finish_binary`.

    Raises
    ------
    ParameterError
        The pairs do not fit in memory (:func:`pegasos.examples.pair_differences`).
    ExampleError
        An example without a qid, or no pair.
    """
    from .examples import pair_differences

    diff, a, b = pair_differences(ex) if pairs is None else pairs
    ones = np.ones(diff.m)
    margins = None
    if model.w.any():
        f = model.decision_function(ex.chunk)
        margins = f[a] - f[b]
    return _finish_one(model, diff, ones, ones, margins, 0.0, tol=tol, passes=passes, seed=seed,
                       max_work=max_work, helper=helper)


def _finish_one(model, ex, y_pm, c, margins, bias_value, *, tol, passes, seed, max_work, helper):
    """The finish of one binary problem on the rows of ``ex`` (labels ``y_pm``, weights ``c``, the model's
    margins, or None for w = 0): :func:`finish_problem`, and the better model with its header entries."""
    indptr, indices, data, n_cols = ex.indptr, ex.indices, ex.data, int(ex.n_features)
    m = indptr.shape[0] - 1
    seed = int(model.info.get("seed", 1)) if seed is None else int(seed)
    loss = "hinge" if model.loss == "rank" else model.loss      # the rank loss: the hinge of pair differences
    v = np.zeros(n_cols + 1)
    v[:min(n_cols, model.w.shape[0])] = model.w[:n_cols]
    v[n_cols] = model.bias if bias_value else 0.0
    if margins is not None:
        primal = _primal(indptr, indices, data, y_pm, c, v, float(model.lam), loss, bias_value)
    else:       # from w = 0: margins 0, losses 1
        primal, margins = float(np.sum(c)) / m, np.zeros(m)
    out = finish_problem(indptr, indices, data, n_cols, y_pm, c, margins, primal, lam=float(model.lam),
                         loss=loss, bias_value=bias_value, seed=seed, tol=tol, passes=passes,
                         max_work=max_work, helper=helper)
    info = dict(model.info, finish="dual", finish_passes=str(out["passes"]))
    if out["primal_dual"] < primal:
        weights = np.zeros(model.w.shape[0])
        weights[:n_cols] = out["w"][:min(n_cols, weights.shape[0])]
        model = dataclasses.replace(model, w=weights, bias=float(out["w"][n_cols]) if bias_value else model.bias,
                                    info=info, solver_state=None, save_state=False)
        model.info["finish_kept"] = "dual"
        best = out["primal_dual"]
    else:
        model = dataclasses.replace(model, info=info)
        model.info["finish_kept"] = "pegasos"
        best = primal
    model.info["certified_gap"] = repr(max(0.0, float((best - out["dual"]) / best)) if best > 0 else 0.0)
    return model


def finish_ovr(model, ex, *, tol=None, passes=None, n_threads=1, seed=None, max_work=None):
    """:func:`finish_binary` for each class of a one-vs-rest ``model`` (its class against the rest).

    Parameters
    ----------
    model : MulticlassModel
        Method "ovr", a loss and bias mode of :func:`applicable`.
    ex : pegasos.examples.Examples
    tol : float or None
        Per class, as :func:`finish_problem` (each class's relative gap;
        so is their sum's).
    passes : tuple of K ints or None
        Exactly these passes per class instead.
    max_work : int > 0
        Per class, as :func:`finish_problem`.
    n_threads : int >= 1
        Classes finished in parallel (the compiled passes release the GIL);
        the model is the same for any number.
    seed : int or None

    Returns
    -------
    MulticlassModel
        A copy whose class c has the better of its weights and w(alpha_c);
        ``info`` gains ``finish``, ``finish_passes`` (K numbers),
        ``finish_kept`` ("dual" when every class took w(alpha), "pegasos" when none did, else "k of
        K classes dual") and
        ``certified_gap`` of the sum of the K objectives.
    """
    from concurrent.futures import ThreadPoolExecutor

    indptr, indices, data, n_cols = ex.indptr, ex.indices, ex.data, int(ex.n_features)
    raw = np.asarray(ex.y, dtype=np.float64)
    targets = model.class_index(raw)
    c = _loss_weights(model, ex, raw)
    seed = int(model.info.get("seed", 1)) if seed is None else int(seed)
    bias_value = 1.0 if model.bias_mode == "feature" else 0.0
    K = model.n_classes
    lam = float(model.lam)
    # from W = 0 (the dual solver's start) every margin is 0 and every loss 1: P = sum(c) / m,
    # without the K + 1 passes over the data of the margins and the primals
    zero = not model.W.any() and not (bias_value and model.biases.any())
    f = np.zeros((raw.shape[0], K)) if zero else model.decision_function(ex.chunk)

    def primal_of(k):
        v = np.zeros(n_cols + 1)
        v[:min(n_cols, model.W.shape[1])] = model.W[k, :n_cols]
        v[n_cols] = model.biases[k] if bias_value else 0.0
        return _primal(indptr, indices, data, np.where(targets == k, 1.0, -1.0), c, v, lam, model.loss, bias_value)

    primals = [float(np.sum(c)) / raw.shape[0]] * K if zero else [primal_of(k) for k in range(K)]
    from . import _dual

    row_norms = np.empty(raw.shape[0])
    _dual.row_norms(indptr, data, row_norms)

    def one(k, given=None):
        y_k = np.where(targets == k, 1.0, -1.0)
        return finish_problem(indptr, indices, data, n_cols, y_k, c, y_k * f[:, k], primals[k], lam=lam,
                              loss=model.loss, bias_value=bias_value, seed=seed, tol=tol,
                              passes=given if passes is None else passes[k], row_norms=row_norms,
                              max_work=max_work)

    with ThreadPoolExecutor(max_workers=max(1, min(int(n_threads), K))) as pool:
        parts = list(pool.map(one, range(K)))
    W, biases = np.zeros(model.W.shape), model.biases.copy()     # row by row: no copy of W to overwrite
    kept, best = 0, []
    for k, out in enumerate(parts):
        if out["primal_dual"] >= primals[k]:
            W[k] = model.W[k]
        if out["primal_dual"] < primals[k]:
            W[k, :n_cols] = out["w"][:min(n_cols, W.shape[1])]
            if bias_value:
                biases[k] = float(out["w"][n_cols])
            kept += 1
            best.append(out["primal_dual"])
        else:
            best.append(primals[k])
    info = dict(model.info, finish="dual", finish_passes=",".join(str(p["passes"]) for p in parts),
                finish_kept="dual" if kept == K else "pegasos" if kept == 0 else f"{kept} of {K} classes dual")
    total, lower = math.fsum(best), math.fsum(p["dual"] for p in parts)
    info["certified_gap"] = repr(max(0.0, float((total - lower) / total)) if total > 0 else 0.0)
    done = dataclasses.replace(model, W=W, biases=biases, info=info)
    return done


def finish_crammer_singer(model, ex, *, tol=None, passes=None, seed=None, max_work=None):
    """The Crammer-Singer model of the dual passes from W = 0 (Keerthi et al., KDD 2008; LIBLINEAR -s 4),
    certified within ``tol``, or the given ``model`` where its objective is lower.

    Solves paper Eq. (20) with the model's lambda, costs, class weights, example weights and bias
    ("feature": a constant feature 1, regularised; or "none") through its dual, one example's K
    variables at a time, with shrinking (:class:`pegasos.certificate.CrammerSingerPasses`); every dual
    point alpha gives W(alpha) and a lower bound lambda D(alpha) <= f*.  The passes stop at the first
    check (after 1, 2, 4, ... passes, where the gap's rate so far reaches ``tol``, or as soon as a pass's
    D certifies the last primal checked) where (P - lambda D) / P <= ``tol`` for P the lower of the two
    models' objectives, or once they have done ``max_work`` units of work (K (1 + nnz(x_i)) per visit of
    example i).  The final D is computed exactly from alpha.

    Parameters
    ----------
    model : MulticlassModel
        Method "crammer-singer" (for the default run: its W = 0 model of no iteration).
    ex : pegasos.examples.Examples
        The examples it was trained on.
    tol : float in (0, 1) or None
    passes : int or None
        Run exactly this many passes instead (what the header's ``finish_passes`` records).
    seed : int or None
        The seed of the orders (default: the model's ``seed``).
    max_work : int > 0 or None
        None: :data:`CS_UPDATES`.

    Returns
    -------
    MulticlassModel
        W(alpha) where its objective is lower than ``model``'s (``finish_kept`` "dual"), else
        ``model`` (``finish_kept`` "pegasos"); the header gains ``finish`` "dual", ``finish_passes``
        and ``certified_gap`` ((P - lambda D) / P of the model returned).

    Raises
    ------
    ParameterError
        Non-finite values (the data's scale).
    """
    max_work = CS_UPDATES if max_work is None else max_work
    lam = float(model.lam)
    n_cols = int(ex.n_features)
    raw = np.asarray(ex.y, dtype=np.float64)
    cs = crammer_singer_problem(model, (ex.indptr, ex.indices, ex.data, n_cols), raw, _loss_weights(model, ex, raw),
                                seed=seed)
    given = model_weights(model, n_cols)
    p_given = cs.primal(given) if given.any() else cs.primal_at_zero()      # (the default's W = 0: no pass)
    bound = MAX_FINISH_PASSES if passes is None else int(passes)
    run, doubling, best, aim, seen = 0, 1, p_given, None, None
    while run < bound:
        to = doubling if aim is None else min(aim, doubling)
        want = bound - run if passes is not None else min(to - run, bound - run)
        stop_at = best * (1.0 - tol) / lam if tol is not None and passes is None and best > 0 else math.inf
        run += cs.run(want, stop_at)
        if passes is not None or not math.isfinite(cs.value):
            break
        best = min(p_given, cs.primal(cs.W))
        gap = (best - lam * cs.value) / best if best > 0 else 0.0
        if tol is not None and gap <= tol:
            break
        if cs.work >= max_work:
            break
        # the next check: at the next doubling, or sooner where the gap's rate so far reaches tol
        aim = _aim(seen, (run, gap), tol)
        seen = (run, gap)
        if run >= doubling:
            doubling *= 2
    # the certificate from alpha itself: W(alpha) and D(alpha) computed afresh
    exact, p_alpha, dual = cs.exact()
    if not (math.isfinite(p_alpha) and math.isfinite(dual)):
        raise ParameterError("the Crammer-Singer passes overflowed to non-finite values (check the scale of the "
                             "data and lambda)")
    dual = max(0.0, dual) if run else 0.0
    K = model.n_classes
    bias_value = 1.0 if model.bias_mode == "feature" else 0.0
    info = dict(model.info, finish="dual", finish_passes=str(run))
    if p_alpha < p_given:
        out = dataclasses.replace(model, W=np.ascontiguousarray(exact[:n_cols].T),
                                  biases=exact[n_cols].copy() if bias_value else np.zeros(K), info=info)
        out.info["finish_kept"] = "dual"
        best = p_alpha
    else:
        out = dataclasses.replace(model, info=info)
        out.info["finish_kept"] = "pegasos"
        best = p_given
    out.info["certified_gap"] = repr(max(0.0, (best - dual) / best) if best > 0 else 0.0)
    return out

