"""Automatic choices for linear Pegasos: the step offset and the stopping point.

Two pure functions over :func:`pegasos.trainers.train`, for the options layer
to call when the user gives no step offset and no number of iterations:

* :func:`calibrate_step_offset` chooses t0 of the step
  eta_t = 1/(lambda (t + t0)) from the data, as Bottou's averaged SGD
  calibrates its first step eta0 = 1/(lambda t0): one pass of the real
  training (same loss, sampling and averaging) over a fixed random sample of
  the examples for each eta0 of a logarithmic grid, keeping the eta0 whose
  model has the lowest primal objective on that sample.
* :func:`train_until_converged` lengthens one run to E0, 2 E0, 4 E0, ...
  epochs (:class:`pegasos.linear.LinearRun`: the iterations go on, the
  suffix average over the last half restarts) and stops when doubling the
  epochs improves the full training objective
  f(w) = lambda/2 ||w||^2 + (1/m) sum_i loss_i (paper Eq. (1)) by less than a
  relative tolerance.  With suffix averaging the error after E epochs decays
  about like 1/E (O(1/(lambda T)), paper Sec. 2), so f(E/2) - f(E) is about
  f(E) - f*, the quantity the tolerance is meant to bound.
* :func:`train_until_certified` lengthens it until the certified duality
  gap (:mod:`pegasos.certificate`) is below ``tol_gap``.

Where the dual finish applies (:mod:`pegasos.finish`) and the step is left
to it, the automatic length first runs the finish's passes from w = 0
(T = 0, no Pegasos iteration): when they certify the model within tol, it
is the model, and neither the calibration nor an epoch is run.  Measured
on the shared data at lambda = 1e-4 (2 cores, medians of 5): reuters 12 ms
against 41 ms for the calibration, 8 epochs and the finish from their
margins; a9a 32 against 43 ms, w8a 24 against 36, mushrooms 15 against 32,
sector's 105 classes 1.5 s against 2.4 s, and the 1M x 50k synthetic set
1.06 s against 2.09 s: the Pegasos epochs saved at most a few passes, at
the cost of more than those passes.  Where they do not certify within the
bound of work the doubling's first hand-over would have (unscaled
svmguide1; a nearly hard margin on small data), the doubling runs as
without them and keeps the lower objective of the two.

The model at every length is, bit for bit, that of one run of that length
from scratch, whose settings (iterations T, ``step_offset``, ``sampling``,
``average_from``, ``seed``) are all in the model file header, so the
returned model is reproduced by training with the header's settings; the automatic choices are also recorded in
``model.info`` (see :func:`train_until_converged`).
"""

import math
import numbers

import numpy as np

from .defaults import AUTO_AVERAGE_FROM, DEFAULT_SAMPLE_SIZE, DEFAULT_SEED, DEFAULT_TOL  # noqa: F401 (autotune.DEFAULT_TOL)
from .errors import ParameterError
from .data import compact_columns, take_rows
from .io import Chunk

# eta0 = 1/(lambda t0) candidates: 10^-4 .. 10 in steps of 10^(1/4)
DEFAULT_ETA0_GRID = tuple(float(10.0 ** (e / 4.0)) for e in range(-16, 5))
DEFAULT_MAX_ITERATIONS = 1 << 25   # work cap of the lengthened run: E m <= 2^25 (about 3.4e7 rows) ...
DEFAULT_MIN_EPOCH_CAP = 16          # ... but at least 16 epochs
DEFAULT_MAX_EPOCHS = 1 << 14        # ... and at most 16384 (tiny data sets: their objective stays noisy)
SOFT_ITERATIONS = 1 << 24           # a length beyond this many iterations (summed over classes) ...
GOOD_ENOUGH = 0.01                  # ... is trained only while the last doubling improved by more than this
FIRST_RUN_ITERATIONS = 1 << 14      # the first run has E m >= 2^14 iterations (noise of tiny data sets)
HANDOVER = 4.0                  # a doubling that improved the objective by more than HANDOVER tol hands the
                                # run over to the dual finish (the tolerance is >= 2 doublings away) ...
HANDOVER_EPOCHS = 64            # ... as does a length of this many epochs that did not converge
FROM_ZERO = "certified by the dual passes from w = 0"   # the stopping reason of a model no epoch was needed for
FROM_START = "certified by the dual passes from the starting weights"     # ... started at given weights


def _check_positive(name, value, integral=False):
    kinds = numbers.Integral if integral else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value) or value <= 0:
        raise ParameterError(f"{name} must be a positive {'integer' if integral else 'number'}, got {value!r}")


def _rows(X, idx):
    """The rows ``idx`` (sorted int64) of a CSR matrix or a :class:`pegasos.io.Chunk`.

    A Chunk's rows are gathered with NumPy into a new Chunk, so that the
    command line's automatic path never imports scipy (a tenth of a second of
    start-up)."""
    if not isinstance(X, Chunk):
        return X.tocsr()[idx]
    indptr, indices, data = take_rows(X.indptr, X.indices, X.data, idx)
    return Chunk(labels=X.labels[idx], indptr=indptr, indices=indices, data=data)


def _compact(X, n_features):
    """The sample X on the columns it uses, renumbered (:func:`pegasos.data.compact_columns`), and
    that count, when it is under half of ``n_features``: the runs and objectives on the sample are
    then O(used columns) instead of O(n_features) (hashed or sparse ids with a huge largest index).
    The weights of the unused columns stay 0 in every run, so the objectives are those of the
    full dimension."""
    indptr, indices = X.indptr, X.indices
    if n_features is None or indices.shape[0] >= n_features // 2:
        return X, n_features
    columns, compact = compact_columns(indices)
    if columns.shape[0] >= n_features // 2:
        return X, n_features
    used = max(int(columns.shape[0]), 1)
    if isinstance(X, Chunk):
        return Chunk(labels=X.labels, indptr=indptr, indices=compact, data=X.data), used
    return type(X)((X.data, compact, indptr), shape=(X.shape[0], used)), used


def _n_rows(X):
    return int(X.shape[0]) if hasattr(X, "shape") else int(X.indptr.shape[0] - 1)


def calibrate_step_offset(X, y, lam, *, loss="hinge", class_weight=None, seed=DEFAULT_SEED,
                          sample_size=DEFAULT_SAMPLE_SIZE, grid=DEFAULT_ETA0_GRID,
                          average_from=AUTO_AVERAGE_FROM, sampling="permutation", details=False,
                          **train_kwargs):
    """Choose the step offset t0 of eta_t = 1/(lambda (t + t0)) from the data.

    Method (Bottou's calibration of averaged SGD, applied to the Pegasos
    step of paper Fig. 1 with an offset): draw ``sample_size`` distinct
    examples with the generator seeded by ``seed``; for each eta0 in
    ``grid`` train one epoch on the sample with t0 = 1/(lambda eta0), the
    given loss, sampling and suffix averaging, and evaluate the primal
    objective lambda/2 ||w||^2 + mean loss on the sample (each loss
    weighted as in training: class weight times ``sample_weight``); keep the eta0_s
    with the lowest objective (the smaller on a tie) and return
    t0 = 1/(lambda eta0) with eta0 = eta0_s sqrt(s/m).  The factor carries
    the step from the s iterations of a sample pass to the m of an epoch:
    the best constant step of averaged SGD scales like 1/sqrt(T) (with
    these t0 the step is nearly constant over the first epochs).  Measured
    at lambda = 1e-4, seeds 1-3, the sample's best eta0_s against the best
    eta0 of one epoch on all the data: a9a 0.032-0.056 / 0.01, w8a
    0.56 / 0.18, ijcnn1 0.32-0.56 / 0.1, mushrooms 0.18 / 0.1, reuters
    1.8 / 0.56; the scaled eta0 is within about one grid step of the best
    (unscaled, a9a ended one epoch 3.0% above f* instead of 0.9%).

    Cost: len(grid) passes over the sample plus as many objective
    evaluations on it, i.e. about 2 len(grid) sample_size rows (42000 rows
    with the defaults), the runs' set-up done once for all
    (:class:`pegasos.linear.OffsetRuns`; times in docs/benchmarks.md); m
    enters only through the sample draw and the factor sqrt(s/m).

    Parameters
    ----------
    X : scipy.sparse matrix or :class:`pegasos.io.Chunk`, shape (m, n_features)
    y : array of shape (m,)
        Label values (two classes) or regression targets.
    lam : float > 0
        Regularisation parameter lambda.
    loss, class_weight, sampling, average_from, **train_kwargs :
        The settings of every calibration run, as :func:`pegasos.trainers.train`
        takes them: ``labels``, ``n_features``, ``sample_weight`` and
        :class:`pegasos.options.TrainOptions` fields (``iterations``,
        ``epochs``, ``step_offset``, ``order`` and ``progress`` are not
        accepted).
    seed : int >= 0
        Seeds the draw of the sample and each calibration run: the same seed
        gives the same t0.
    sample_size : int > 0
        Examples in the calibration sample (all m when m is smaller).
    grid : sequence of float > 0
        Candidate first steps eta0 (dimensionless multiples of the
        sub-gradient); t0 = 1/(lambda eta0) iterations.
    details : bool
        Also return the table of (eta0, sample objective).

    Returns
    -------
    float
        t0 >= 0 (in iterations).  With ``details``: (t0, eta0, [(eta0,
        objective), ...]).

    Raises
    ------
    ParameterError
        lambda, sample_size or a grid value not positive, an empty grid, a
        forbidden keyword, or any error of :func:`pegasos.trainers.train`.
    """
    from .data import finite_decisions
    from .examples import as_examples
    from .labels import BinaryLabels
    from .linear import OffsetRuns, decision_values
    from .options import TASK_OF_LOSS, TrainOptions
    from .scoring import objective_of_decisions

    _check_positive("lambda", lam)
    _check_positive("the calibration sample size", sample_size, integral=True)
    grid = [float(g) for g in grid]
    if not grid:
        raise ParameterError("the calibration grid of eta0 values is empty")
    for g in grid:
        _check_positive("every eta0 of the calibration grid", g)
    for key in ("iterations", "epochs", "step_offset", "order", "progress"):
        if key in train_kwargs:
            raise ParameterError(f"calibrate_step_offset chooses {key} itself; do not pass it")
    if loss == "rank":
        raise ParameterError("step calibration samples examples, which the rank loss (pairs) does not support")
    m = _n_rows(X)
    y = np.asarray(y, dtype=np.float64)
    labels = train_kwargs.pop("labels", None)
    if TASK_OF_LOSS.get(loss) == "binary" and labels is None:
        labels = BinaryLabels.from_values(y)    # the sample may miss a class
    n_features = train_kwargs.pop("n_features", None)
    if n_features is None and hasattr(X, "shape"):
        n_features = int(X.shape[1])
    rng = np.random.Generator(np.random.PCG64(seed))
    s = min(int(sample_size), m)
    idx = np.sort(rng.choice(m, size=s, replace=False)) if s < m else np.arange(m)
    Xs, ys = _rows(X, idx), y[idx]
    Xs, n_features = _compact(Xs, n_features)
    sample_weight = train_kwargs.pop("sample_weight", None)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)[idx]
    if train_kwargs.get("batch_size", 1) > s:
        train_kwargs["batch_size"] = s
    # one run of pegasos.trainers.train for each eta0, each evaluated with pegasos.scoring.objective, with what
    # does not change from run to run done once: the sample's arrays checked, the settings validated, the
    # targets, the order (pegasos.linear.OffsetRuns)
    ex = as_examples((Xs, ys, None, sample_weight), n_features)
    runs = OffsetRuns(ex, TrainOptions(preset="paper", lam=lam, epochs=1, sampling=sampling, average_from=average_from,
                                       seed=seed, loss=loss, class_weight=class_weight, **train_kwargs).validate(),
                      labels)
    table = []
    for eta0 in sorted(grid):
        try:
            model = runs.run(1.0 / (lam * eta0))
            f = finite_decisions(decision_values(ex.indptr, ex.indices, ex.data, model.w, model.bias), Xs)
            value = float(objective_of_decisions(model, f, ex.y, sample_weight=ex.sample_weight)["objective"])
        except ParameterError as exc:
            if "diverged" not in str(exc):
                raise
            value = math.inf
        table.append((eta0, value))
    best_eta0, best = min(table, key=lambda r: (r[1], r[0]))
    if not math.isfinite(best):
        raise ParameterError("every eta0 of the calibration grid diverged (check the scale of the data)")
    eta0 = best_eta0 * math.sqrt(s / m)
    t0 = 1.0 / (lam * eta0)
    return (t0, eta0, table) if details else t0


def default_epoch_cap(m, batch_size=1):
    """The default ``max_epochs`` of :func:`train_until_converged` for m examples.

    The largest power of two E with E ceil(m/k) <= 2^25 iterations, at least
    16 and at most 2^14 (heart_scale, m = 270, needed 2^14 for 0.08%): 1024
    epochs for a9a (m = 32561), 4096 for mushrooms (8124), 16 from m = 2.1
    million on.  The lengthened run trains E epochs in all (as many rows as
    the restarted schedule of half that cap did, 2E - 1 epochs).  The
    measured runs that need many epochs are the small, (nearly) separable
    data sets with a tiny f* (mushrooms and agaricus need 4096 for 1%,
    reuters 512), where an epoch is cheap; beyond 2^24 iterations the
    schedule also weighs the gain (:func:`double_until_converged`).
    """
    per_epoch = max(1, math.ceil(m / max(1, int(batch_size))))
    cap = DEFAULT_MIN_EPOCH_CAP
    while 2 * cap * per_epoch <= DEFAULT_MAX_ITERATIONS and 2 * cap <= DEFAULT_MAX_EPOCHS:
        cap *= 2
    return cap


def step_offset_for(ex, options, labels=None):
    """The calibrated t0 of a run of ``options`` on ``ex`` (:func:`calibrate_step_offset`).

    The one place where the calibration's settings are taken from the
    options: loss, lambda, seed, sampling, suffix averaging, batch size k
    (at most m), bias, projection, epsilon and class weights, with the
    examples' own weights (``ex.sample_weight``) and labels.

    Parameters
    ----------
    ex : pegasos.examples.Examples
        The training examples (two classes, or regression targets).
    options : pegasos.options.TrainOptions
        Validated; its step offset is ignored.
    labels : BinaryLabels, optional
        The label mapping of a binary task (default: from ``ex.y``).

    Returns
    -------
    float
        t0 > 0, in iterations.

    Raises
    ------
    ParameterError
        As :func:`calibrate_step_offset`.
    """
    settings = dict(n_features=ex.n_features, batch_size=min(int(options.batch_size), ex.m), bias=options.bias,
                    projection=options.projection, epsilon=options.epsilon, sample_weight=ex.sample_weight)
    if labels is not None:
        settings["labels"] = labels
    return calibrate_step_offset(ex.chunk, ex.y, options.lam, loss=options.loss, class_weight=options.class_weight,
                                 seed=options.seed, average_from=options.average_from, sampling=options.sampling,
                                 **settings)


def train_until_converged(ex, options, *, labels=None, progress=None, start=None, max_epochs=None,
                          finish_tol=None):
    """Train until doubling the number of epochs no longer pays: one run, lengthened.

    Where the dual finish applies (``finish`` not "none") and the step offset is left to the
    calibration, the finish's passes from w = 0 (from the margins of ``start`` when it is given: a
    lambda path's previous weights) run first, with the bound of work the first hand-over would
    have (:func:`first_handover`): when they certify the model within the finish's tolerance it is
    returned with E = 0, an empty history, ``iterations`` 0 and ``stopping`` ending in
    :data:`FROM_ZERO` (:data:`FROM_START`); otherwise the doubling below runs as it would without
    them (no hand-over) and their model is kept at the end where its objective is lower.

    The run (:class:`pegasos.linear.LinearRun`) is advanced to E = E0, 2 E0,
    4 E0, ... epochs, E0 the smallest power of two with E0 ceil(m/k) >= 2^14
    iterations (1 on data sets of 16384 examples or more; on tiny data the
    objective of a short run is too noisy to compare).  The model at each E
    is, bit for bit, the one a run of E epochs from scratch gives (the same
    seed, t0 and the mean of the iterates t >= ceil(average_from T)): the
    iterations go on and only the suffix average restarts, so reaching E
    costs E epochs, not the 2E - 1 of training each length from scratch.
    After each E the full training objective f(E) (paper Eq. (1), O(nnz),
    each example's loss weighted by its class weight times its own weight
    ``ex.sample_weight``, as in training and in the dual finish) is
    evaluated; the schedule stops at the first E >= 2 E0 with
    |f(E/2) - f(E)| <= tol f(E), or at the epoch cap.  A rise larger than
    that is noise (small data) and does not stop the schedule.  When an
    epoch has fewer than 2^14 iterations the test must hold for two
    doublings in a row (measured on heart_scale, m = 270: one test stopped
    at 1.6-2.2% above f*).  The model with the lower objective of the last
    two lengths is returned.  (An ``average_from`` below 1/2 averages iterates
    of a length before the previous one: then each length is trained from
    scratch.)  With suffix averaging the error after E epochs
    decays about like 1/E (O(1/(lambda T)), paper Sec. 2), so f(E/2) - f(E)
    is about f(E) - f*, the quantity the tolerance bounds.

    Parameters
    ----------
    ex : pegasos.examples.Examples
        Two classes, or regression targets.
    options : pegasos.options.TrainOptions
        Validated; ``tol``, the step offset (``step_offset`` or ``eta0``;
        calibrated with :func:`step_offset_for` when neither is set) and
        every other setting of the run; ``iterations`` and ``epochs`` are
        ignored.
    labels : BinaryLabels, optional
    progress : callable(int) or None
        As :func:`pegasos.linear.fit_linear`.
    start : (w, b) or None
        The first iterate (:func:`pegasos.linear.fit_linear`'s ``start``).
    max_epochs : int > 0 or None
        Largest E (None: :func:`default_epoch_cap`); the schedule is E0,
        2 E0, ... up to it, and a last length of exactly ``max_epochs`` if
        it is not a power of two.
    finish_tol : float or None
        The relative gap the dual finish certifies (default ``options.tol``).

    Returns
    -------
    (LinearModel, epochs, history)
        The model; its epochs E; history: a list of dicts {"epochs",
        "iterations", "objective"} for every length reached.  The model's
        ``info`` (besides the header of a run of E epochs: ``iterations``,
        ``step_offset``, ``sampling``, ``average_from``, ``seed``) holds
        ``epochs`` (E), ``step_offset_rule`` ("calibrated" or "given"),
        ``eta0`` (1/(lambda t0), when t0 > 0), ``stopping`` (tol, the
        epoch cap and why it stopped) and ``epochs_trained`` (the epochs the
        run went through: the last length reached).

    Raises
    ------
    ParameterError
        tol or max_epochs out of range, the rank loss, or any error of
        :func:`pegasos.linear.fit_linear`.
    """
    from .linear import LinearRun, fit_linear
    from .scoring import objective

    _check_positive("the stopping tolerance tol", options.tol)
    k = min(int(options.batch_size), max(1, ex.m))
    if max_epochs is None:
        max_epochs = default_epoch_cap(ex.m, k)
    _check_positive("the epoch cap max_epochs", max_epochs, integral=True)
    per_epoch = max(1, math.ceil(ex.m / k))
    finishing = finishing_for(options, ex)
    target = options.tol if finish_tol is None else finish_tol

    def finish(model, iterations):
        from .finish import budget, finish_binary

        done = finish_binary(model, ex, tol=target, **budget(options, iterations, ex))
        f_done = float(objective(done, ex.chunk, ex.y, sample_weight=ex.sample_weight)["objective"])
        return done, f_done, float(done.info["certified_gap"]) <= target

    tried = None
    if finishing and options.step_is_automatic:
        # the dual passes from w = 0 (or from ``start``: a lambda path's previous weights) first: where they
        # certify, no Pegasos epoch is needed
        from .finish import budget, finish_binary

        zero = fit_linear(ex, options.replace(iterations=0, epochs=None, finish="dual"), labels=labels, start=start)
        done = finish_binary(zero, ex, tol=target, **budget(options, first_handover(per_epoch, max_epochs), ex))
        if float(done.info["certified_gap"]) <= target:
            return _from_zero(done, options.tol, max_epochs, start is not None), 0, []
        tried = (done, float(objective(done, ex.chunk, ex.y, sample_weight=ex.sample_weight)["objective"]))
    if options.step_is_automatic:
        chosen = options.replace(step_offset=step_offset_for(ex, options, labels), eta0=None)
        rule = "calibrated"
    else:
        chosen = options
        rule = "given"
    F = chosen.plan(ex.m).average_from
    lengthened = not F or F >= 0.5       # else the average of 2T starts before T/2: each length from scratch
    run = LinearRun(ex, chosen, labels=labels, progress=progress, start=start) if lengthened else None

    def advance(E, next_E):
        T = chosen.replace(epochs=E, iterations=None).plan(ex.m).T
        if run is None:
            model = fit_linear(ex, chosen.replace(iterations=T, epochs=None), labels=labels, progress=progress,
                               start=start)
        else:
            next_T = None if next_E is None else chosen.replace(epochs=next_E, iterations=None).plan(ex.m).T
            model = run.advance(T, next_T)
        return model, float(objective(model, ex.chunk, ex.y, sample_weight=ex.sample_weight)["objective"])

    origin = "the starting weights" if start is not None else "w = 0"
    model, E, history, reason = double_until_converged(advance, per_epoch, options.tol, max_epochs,
                                                       handover=HANDOVER * options.tol if finishing else None,
                                                       finish=finish, tried=tried, tried_from=origin)
    model = _record(model, E, history, rule, options.lam, chosen.t0, options.tol, max_epochs, reason)
    if run is None:
        model.info["epochs_trained"] = str(sum(h["epochs"] for h in history))
    if E == 0:
        _kept_from_zero(model, origin)
    if _still_to_finish(model, reason, finishing, options):
        model = _finished_at_the_end(finish(model, int(model.info["iterations"]))[0])
    return model, E, history


def train_ranking(ex, options, *, progress=None):
    """The automatic length of the rank loss: the dual passes on the pairs from w = 0, kept where they
    certify; else the default Pegasos run of pairs, finished in the dual.

    The rank objective is the binary hinge objective of the pair differences x_a - x_b
    (:func:`pegasos.examples.pair_differences`), so :func:`pegasos.finish.finish_ranking` certifies it
    as the binary finish does.  The passes from w = 0 get the full bound of work of an asked-for finish
    (:func:`pegasos.finish.budget` with ``finish="dual"``: 2^32 units, no stall rule); where
    they certify within ``options.tol`` the model is theirs (``iterations`` 0, ``finish_passes`` N,
    ``stopping`` ending in :data:`FROM_ZERO`; ``-T 0 --finish-passes N`` retrains it bit for bit).
    Otherwise the default Pegasos run (:meth:`pegasos.options.TrainOptions.plan`: 10 epochs of pairs,
    i.i.d.) runs and is finished from its margins with the bound of a finish after it, and the model of the lower
    objective is written.  Before, that Pegasos run alone was the default: on tests/data/ranking.svm (20
    queries, 671 pairs) at lambda = 1e-4 it ended 52% above f*, where the passes certify 0.07% (512
    passes, 0.03 s); on 500 queries of 40 examples (280,000 pairs of 40 values) 2.5% above f* in 1.4 s,
    where the passes certify 0.17% in 0.8 s.

    With ``tol_gap`` the certificate is asked for: the same, with ``finish="dual"`` and ``tol_gap`` as
    the tolerance, and ``stopping`` "tol_gap=EPS certified (...)" or "tol_gap=EPS finish stalled (...)".

    Where the pairs would not fit in memory (:func:`pegasos.examples.pair_differences`), the default
    Pegasos run alone, its ``stopping`` saying why (with ``finish="dual"`` or ``tol_gap``: ParameterError).

    Parameters
    ----------
    ex : pegasos.examples.Examples
        With ``qid`` and relevance labels.
    options : pegasos.options.TrainOptions
        Validated; the rank loss, the automatic length and step.
    progress : callable(int) or None
        As :func:`pegasos.linear.fit_linear` (the Pegasos run only).

    Returns
    -------
    LinearModel
        Task "ranking", with ``epochs``, ``stopping``, and the ``finish`` entries of the finish kept.

    Raises
    ------
    ParameterError, ExampleError
        As :func:`pegasos.linear.fit_linear` and :func:`pegasos.finish.finish_ranking`.
    """
    asked = options.tol_gap is not None
    if asked:
        options = options.replace(tol_gap=None, tol=float(options.tol_gap), finish="dual")
    model, how = _train_ranking(ex, options, progress, asked)
    tol = options.tol
    if asked:
        reason = "certified" if float(model.info["certified_gap"]) <= tol else "finish stalled"
        model.info["stopping"] = f"tol_gap={tol!r} {reason} ({how})"
    else:
        model.info["stopping"] = f"tol={tol!r} {how}"
    return model


def _train_ranking(ex, options, progress, asked_gap):
    """:func:`train_ranking` at ``options.tol`` (``asked_gap``: the tolerance is the user's tol_gap): the
    model and how it was made, for its ``stopping``."""
    from .examples import pair_differences
    from .finish import budget, finish_ranking
    from .linear import fit_linear
    from .scoring import objective

    tol = options.tol
    try:
        pairs = pair_differences(ex)
    except ParameterError as e:
        if options.finish == "dual":
            raise ParameterError(f"{options.name('tol_gap') if asked_gap else options._finish_dual()}: {e}") from None
        return fit_linear(ex, options, progress=progress), f"the default run of pairs, not finished ({e})"
    T = options.plan(pairs[0].m).T              # the default run of pairs the passes stand in for
    # the full bound of the asked-for finish (2^32 units, no stall): the Pegasos run of pairs that would
    # follow has no calibrated step and gains little (251,890 pairs at lambda = 1e-6: the passes stopped at
    # 2^28 with a gap of 18%, Pegasos and its finish ended 62% above f*, where 2^32 certify 0.18% in 11 s)
    spend = budget(options.replace(finish="dual"), T, pairs[0])
    zero = fit_linear(ex, options.replace(iterations=0, epochs=None, finish="dual"))
    done = finish_ranking(zero, ex, pairs=pairs, tol=tol, **spend)
    done.info["epochs"] = "0"
    gap = float(done.info["certified_gap"])
    if gap <= tol:
        return done, FROM_ZERO
    run = finish_ranking(fit_linear(ex, options, progress=progress), ex, pairs=pairs, tol=tol,
                         **budget(options, T, pairs[0]))       # the usual bound: the full one was spent
    f_zero, f_run = (float(objective(model, ex.chunk, ex.y, qid=ex.qid)["objective"]) for model in (done, run))
    if f_zero < f_run:
        return done, "the uncertified dual passes from w = 0 kept (the default run of pairs, finished, had a higher " \
                     "objective)"
    return run, ("the default run of pairs, finished (the dual passes from w = 0 stopped at a certified gap of "
                 f"{gap:.3g})")


def _finished_at_the_end(model):
    """``model`` finished after the doubling: its ``stopping`` says so when an earlier finish was not kept
    (``finish_discarded_gap``, which the finish's copy of the header keeps)."""
    if "finish_discarded_gap" in model.info:
        model.info["stopping"] = model.info["stopping"][:-1] + "; the model at the cap was finished)"
    return model


def _still_to_finish(model, reason, finishing, options):
    """Whether the model the doubling returned is finished now: it was not finished, and the finish
    applies (``finishing``, or ``finish="dual"``).

    So an unconverged run (epoch or work cap) is finished: a finish that did not certify at the
    hand-over is tried again there, its bound of work (:func:`pegasos.finish.work_bound`) weighed
    against the whole Pegasos run now, which went on for nothing (a 3-class set with class weights
    ended 1.9% above f* at its cap of 16384 epochs, after a finish bounded at its 64th).  And so is a
    "converged" one: the doubling's test (a doubling of the epochs that gained less than tol) is a
    guess, which a step that has not decayed can fool (t0 = 4.5e6 against 128,000 iterations: 2000
    rows at lambda = 1e-6 "converged" 2.7% above f*); the finish certifies the model, or says by how
    much it could not; unless a finish was tried during the doubling already and not kept (then
    Pegasos converged past it: 300 rows with a nearly hard margin, lambda = 1e-7, spent 0.3 s on a
    second finish that did not certify either, against 0.02 s for the whole Pegasos run)."""
    if "finish" in model.info:
        return False
    if options.finish == "dual":
        return True
    ended = reason.split(" (", 1)[0]
    return finishing and (ended in ("epoch cap", "work cap")
                          or (ended == "converged" and "finish_discarded_gap" not in model.info))


def finishing_for(options, ex):
    """Whether the automatic length of ``options`` on ``ex`` hands a slow run over to the dual finish
    (:mod:`pegasos.finish`): ``options.finish`` None where it applies (not with ``resume_state``),
    "dual" always (ParameterError where it does not apply), "none" never."""
    from .finish import applicable

    if options.finish == "none":
        return False
    why = applicable(options, ex)
    if why is not None and options.finish == "dual":
        raise ParameterError(f"{options.name('finish')} dual: the dual finish does not apply here: {why}")
    return why is None


def ovr_step_offset(ex, options):
    """The calibrated t0 of a one-vs-rest run: :func:`step_offset_for` on the largest class
    against the rest (each example's weight its class weight times its sample weight)."""
    return step_offset_for(_largest_class_problem(ex, options), options.replace(class_weight=None, multiclass=None))


def _largest_class_problem(ex, options):
    """The binary examples of the largest class (+1; :func:`pegasos.multiclass.largest_class`) against
    the rest (-1), each weighted by its class weight times its own weight."""
    import dataclasses

    from .multiclass import largest_class

    largest = largest_class(ex.y)
    weights = None if options.class_weight is None and ex.sample_weight is None else _ovr_weights(ex, options)
    return dataclasses.replace(ex, y=np.where(ex.y == largest, 1.0, -1.0), sample_weight=weights, source=None)


def train_until_certified(ex, options, *, labels=None, progress=None, class_texts=None, max_epochs=None):
    """Lengthen the run until its model's certified relative duality gap is at most ``options.tol_gap``.

    The run (:class:`pegasos.linear.LinearRun`, or :class:`pegasos.multiclass.OvrRun`
    for more than two classes) goes on to E = E0, 2 E0, 4 E0, ... epochs (as
    :func:`train_until_converged`); after each length the gap of
    :func:`pegasos.certificate.duality_gap` is computed from the model's
    margins with at most E passes of dual coordinate ascent, each O(nnz) as
    an epoch (so the checks cost at most what the training did; they stop at
    the first pass that certifies; 20 passes left heart_scale at lambda =
    1e-4 uncertified at 67% after 16384 epochs), and the run stops at the
    first length whose relative gap (P - D)/P is <= ``tol_gap``: the model is
    then proven within that fraction of the optimum.  At the epoch cap
    (:func:`default_epoch_cap`) it stops uncertified.

    Parameters
    ----------
    ex : pegasos.examples.Examples
    options : pegasos.options.TrainOptions
        Validated, with ``tol_gap`` set (hinge or squared hinge, bias
        "none" or "feature", binary or one-vs-rest); the step offset is
        calibrated (:func:`step_offset_for`) when not given.
    labels, progress :
        As :func:`train_until_converged`; ``class_texts`` as
        :func:`pegasos.multiclass.fit_multiclass`.
    max_epochs : int > 0 or None

    Returns
    -------
    LinearModel or MulticlassModel
        Its ``info`` holds ``epochs``, ``epochs_trained``,
        ``step_offset_rule``, ``eta0``, ``stopping`` ("tol_gap=EPS
        max_epochs=N certified" or "... epoch cap") and ``certified_gap``
        (the relative gap proven for it).

    Raises
    ------
    ParameterError
        As :func:`train_until_converged` and :func:`pegasos.certificate.duality_gap`.
    """
    from .certificate import MAX_GAP_PASSES, duality_gap
    from .linear import LinearRun
    from .multiclass import OvrRun

    eps = float(options.tol_gap)
    K = int(np.unique(ex.y).size)
    multiclass = K > 2 or options.multiclass is not None
    k = min(int(options.batch_size), max(1, ex.m))
    if finishing_for(options.replace(multiclass="ovr") if multiclass else options, ex):
        return _certified_by_the_finish(ex, options, labels, progress, class_texts, max_epochs, multiclass)
    if multiclass:
        chosen, rule = options.replace(multiclass="ovr"), "given"
        if options.step_is_automatic:
            chosen, rule = chosen.replace(step_offset=ovr_step_offset(ex, options), eta0=None), "calibrated"
        run = OvrRun(ex, chosen, class_texts=class_texts, progress=progress)
    else:
        K = 1
        chosen, rule = options, "given"
        if options.step_is_automatic:
            chosen = options.replace(step_offset=step_offset_for(ex, options, labels), eta0=None)
            rule = "calibrated"
        run = LinearRun(ex, chosen, labels=labels, progress=progress)
    if max_epochs is None:
        max_epochs = default_epoch_cap(ex.m * K, k)
    _check_positive("the epoch cap max_epochs", max_epochs, integral=True)
    schedule = epoch_schedule(max(1, math.ceil(ex.m / k)), max_epochs)
    history = []
    reason = "epoch cap"
    for i, E in enumerate(schedule):
        T = chosen.replace(epochs=E).plan(ex.m).T
        nxt = chosen.replace(epochs=schedule[i + 1]).plan(ex.m).T if i + 1 < len(schedule) else None
        model = run.advance(T, nxt)
        gap = duality_gap(model, ex.chunk, ex.y, passes=int(min(E, MAX_GAP_PASSES)), tol=eps, seed=int(options.seed),
                          sample_weight=ex.sample_weight)
        history.append({"epochs": E, "iterations": T, "objective": float(gap["primal"]),
                        "rel_gap": float(gap["rel_gap"])})
        if gap["rel_gap"] <= eps:
            reason = "certified"
            break
    model = _record(model, E, history, rule, options.lam, chosen.t0, options.tol, max_epochs, reason)
    model.info["stopping"] = f"tol_gap={eps!r} max_epochs={int(max_epochs)} {reason}"
    model.info["certified_gap"] = repr(float(history[-1]["rel_gap"]))
    return model


def _certified_by_the_finish(ex, options, labels, progress, class_texts, max_epochs, multiclass):
    """:func:`train_until_certified` with the dual finish: the automatic length (stopping on ``tol``
    or handing over), then dual passes until the gap is at most ``tol_gap`` (or stalls)."""
    eps = float(options.tol_gap)
    plain = options.replace(tol_gap=None, finish="dual")
    if multiclass:
        model = fit_multiclass_auto(ex, plain.replace(multiclass=options.multiclass or "ovr"), class_texts=class_texts,
                                    progress=progress, finish_tol=eps)
    else:
        model = train_until_converged(ex, plain, labels=labels, progress=progress, max_epochs=max_epochs,
                                      finish_tol=eps)[0]
    reason = "certified" if float(model.info["certified_gap"]) <= eps else "finish stalled"
    stopping = model.info["stopping"]
    cap = stopping.split("max_epochs=")[1].split()[0]
    # a finish tried during the doubling and not kept stays said, as finish_discarded_gap records it
    said = stopping[stopping.index(" ("):] if "finish_discarded_gap" in model.info and " (" in stopping else ""
    model.info["stopping"] = f"tol_gap={eps!r} max_epochs={cap} {reason}{said}"
    return model


def epoch_schedule(per_epoch, max_epochs):
    """The lengths E of :func:`double_until_converged`: E0, 2 E0, 4 E0, ... and ``max_epochs``.

    E0 is the smallest power of two with E0 ``per_epoch`` >= 2^14 (below
    ``max_epochs``)."""
    schedule = []
    e = 1
    while e * per_epoch < FIRST_RUN_ITERATIONS and 2 * e < max_epochs:
        e *= 2
    while e < max_epochs:
        schedule.append(e)
        e *= 2
    schedule.append(int(max_epochs))
    return schedule


def _from_zero(model, tol, max_epochs, started=False):
    """``model``, certified by the dual passes from w = 0 (or, ``started``, from the weights a lambda path
    started the run at: :data:`FROM_START`), with the entries of an automatic length: 0 epochs."""
    model.info["epochs"] = model.info["epochs_trained"] = "0"
    model.info["stopping"] = f"tol={tol!r} max_epochs={int(max_epochs)} {FROM_START if started else FROM_ZERO}"
    return model


def _kept_from_zero(model, origin="w = 0"):
    """The header of the uncertified dual passes from ``origin`` kept over the doubling's Pegasos model (of
    higher objective): no Pegasos iteration made it, so no step offset describes it (``eta0`` and
    ``step_offset_rule`` were the discarded run's); ``epochs_trained`` still counts the epochs that run
    spent, and ``stopping`` says which model was kept."""
    for key in ("eta0", "step_offset_rule"):
        model.info.pop(key, None)
    stopping = model.info["stopping"]
    model.info["stopping"] = stopping.replace(" (after an uncertified dual finish)",
                                              f" (the uncertified dual passes from {origin} kept: Pegasos' model had "
                                              "a higher objective)")


def first_handover(per_epoch, max_epochs):
    """The iterations (per problem) of Pegasos before the doubling's first hand-over to the dual finish
    could come: its second length, 2 E0 epochs (:func:`epoch_schedule`).  The dual passes from w = 0,
    which stand in for that run, get the bound of work (:func:`pegasos.finish.work_bound`) a finish
    would get there."""
    schedule = epoch_schedule(per_epoch, max_epochs)
    return int(schedule[min(1, len(schedule) - 1)]) * int(per_epoch)


def double_until_converged(run, per_epoch, tol, max_epochs, work_per_epoch=None, handover=None, finish=None,
                           tried=None, tried_from="w = 0"):
    """The doubling schedule of :func:`train_until_converged`, for any trainer.

    Parameters
    ----------
    run : callable(E, next_E) -> (model, objective)
        The model of E epochs (from scratch, or a run lengthened to E) with
        its full training objective (float); ``next_E`` is the length that
        may be asked next (None after the last), for a lengthened run to
        keep the average it will need.
    per_epoch : int > 0
        Iterations of one epoch (per problem): sets the first E (E0 per_epoch
        >= 2^14) and how many passing tests in a row stop the schedule.
    tol : float > 0
    max_epochs : int > 0
    work_per_epoch : int > 0 or None
        Iterations of one epoch summed over the problems (K per_epoch for
        one-vs-rest; default per_epoch).
    handover : float > 0 or None
        Stop ("handed over", for the dual finish) after the first doubling
        that improved the objective by more than this fraction (at a decay
        like 1/E the tolerance is then at least two more doublings, four
        times the work done so far, away), or that did not converge at
        ``HANDOVER_EPOCHS`` (64) epochs or more (tiny data, whose objective
        is too noisy for the first test: heart_scale took 16384 epochs to
        converge, where 1000 dual passes cost 0.04 s).  Needs ``finish``.
    finish : callable(model, iterations) -> (model, objective, certified) or None
        The dual finish of the better of the last two models, after
        Pegasos trained ``iterations`` (per problem) so far.  When it
        certifies, the schedule ends there; when it does not (the dual
        passes stalled, or reached their bound of work), the doubling goes
        on without handing over again and the finished model is returned
        only if its objective is the lower one at the end ("... (after an
        uncertified dual finish)"; otherwise "... (an uncertified dual finish
        was not kept: certified gap G after N passes)", the model's
        ``info["finish_discarded_gap"]`` is G, repr of a float, and its
        ``certified_gap`` the one the finish's dual bound proves for it,
        (f - D) / f): never worse than plain Pegasos.
    tried : (model, objective) or None
        A dual finish from w = 0 (or from the run's starting weights:
        ``tried_from`` names the start in the stopping text) tried before any
        epoch that did not certify: the doubling goes on without handing
        over, and that model is kept at the end as a finish during the
        doubling would be (its E is 0).

    Time against gain, without a clock (the model depends on the seed
    only): the error of the averaged model decays about like 1/E, so the
    last doubling's relative improvement r = |f(E/2) - f(E)| / f(E)
    estimates the suboptimality of f(E) and the next doubling halves it at
    the cost of all the work done so far.  A length of more than
    ``SOFT_ITERATIONS`` (2^24) iterations is trained only while r exceeds
    ``GOOD_ENOUGH`` (1%); below 2^24 the tolerance alone decides.  Measured
    at lambda = 1e-4 (seed 1): mushrooms r = 1.28% at 2048 epochs (2^24
    iterations), then 0.66% at 4096 (f 0.66% above f*), where an 8192nd
    epoch would cost 4096 more for 0.33%.

    Returns
    -------
    (model, E, history, reason)
        The model of lower objective of the last two lengths, its epochs,
        every length's {"epochs", "iterations", "objective"}, and
        "converged", "epoch cap", "work cap" (the next length would pass
        2^24 iterations for less than 1%) or "handed over" (the model
        returned is then the finished one).
    """
    schedule = epoch_schedule(per_epoch, max_epochs)
    history, runs = [], []
    reason = "epoch cap"
    needed = 2 if per_epoch < FIRST_RUN_ITERATIONS else 1
    passed = 0
    work = per_epoch if work_per_epoch is None else work_per_epoch
    finished = None
    if tried is not None:
        finished, handover = (tried[0], 0, tried[1]), None
    for i, E in enumerate(schedule):
        if len(runs) == 2 and E * work > SOFT_ITERATIONS and \
                abs(runs[0][2] - runs[1][2]) <= GOOD_ENOUGH * abs(runs[1][2]):
            reason = "work cap"
            break
        model, f = run(E, schedule[i + 1] if i + 1 < len(schedule) else None)
        history.append({"epochs": E, "iterations": int(model.info["iterations"]), "objective": f})
        runs.append((model, E, f))
        runs = runs[-2:]
        if len(runs) == 2:
            passed = passed + 1 if abs(runs[0][2] - f) <= tol * abs(f) else 0
            if passed >= needed:
                reason = "converged"
                break
            if handover is not None and (abs(runs[0][2] - f) > handover * abs(f) or E >= HANDOVER_EPOCHS):
                best = min(runs, key=lambda r: r[2])
                done, f_done, certified = finish(best[0], history[-1]["iterations"])
                finished = (done, best[1], f_done)
                if certified:
                    reason = "handed over"
                    break
                handover = None     # the dual did not certify: Pegasos goes on, and the better model is kept
    model, E, f = min(runs, key=lambda r: r[2])
    if finished is not None and (reason == "handed over" or finished[2] < f):
        model, E = finished[0], finished[1]
        if reason != "handed over":
            reason += " (after an uncertified dual finish)"
    elif finished is not None:
        info = finished[0].info
        passes = max(int(p) for p in info["finish_passes"].split(","))
        model.info["finish_discarded_gap"] = info["certified_gap"]
        # the discarded finish's dual value D <= f* bounds the kept model too, at no cost:
        # (f - D) / f with D = f_done (1 - G), f_done the finished model's objective
        dual = finished[2] * (1.0 - float(info["certified_gap"]))
        model.info["certified_gap"] = repr(max(0.0, (f - dual) / f) if f > 0 else 0.0)
        reason += (f" (an uncertified dual finish{' from ' + tried_from if finished[1] == 0 else ''} was not kept: "
                   f"certified gap {float(info['certified_gap']):.3g} after {passes} passes)")
    return model, E, history, reason


def _record(model, E, history, rule, lam, step_offset, tol, max_epochs, reason):
    """The automatic choices in the model header (see :func:`train_until_converged`)."""
    model.info["epochs"] = str(E)
    model.info["epochs_trained"] = str(max(h["epochs"] for h in history))
    model.info["step_offset_rule"] = rule
    if step_offset:
        model.info["eta0"] = repr(1.0 / (lam * step_offset))
    model.info["stopping"] = f"tol={tol!r} max_epochs={int(max_epochs)} {reason}"
    if reason in ("converged", "epoch cap", "work cap", "certified"):     # pegasos.outcome.Stop
        model.info["stop"] = reason
    return model


def fit_multiclass_auto(ex, options, *, class_texts=None, progress=None, finish_tol=None):
    """Multiclass training (one-vs-rest or Crammer-Singer) with the automatic
    choices of the "auto" preset.

    The step offset (when ``options`` gives none) is calibrated once, with
    :func:`calibrate_step_offset`, on the binary problem of the largest class
    against the rest, and serves every class of one-vs-rest (a calibration
    per class would cost K of them; on dna and sector most classes chose the
    same grid point) and the Crammer-Singer run (whose loss, Eq. (20), is the
    binary hinge for two classes; dna at 10 epochs: objective 0.041 against
    1.24 with t0 = 0).  When neither T nor epochs is given, the epochs double
    (:func:`double_until_converged`; one-vs-rest: the K runs lengthened
    together, :class:`pegasos.multiclass.OvrRun`, each length the runs of
    that length from scratch; Crammer-Singer: each length from scratch)
    until the objective (one-vs-rest: the sum
    over classes of the binary primal objectives, Eq. (1); Crammer-Singer:
    lambda/2 ||W||^2 plus the mean multiclass hinge; each example's loss
    weighted by its class weight times ``ex.sample_weight``) improves by less than
    ``options.tol``; the epoch cap is :func:`default_epoch_cap` of K m
    iterations per epoch, as each costs K decision values (sector: 32
    epochs, dna: 4096).  With ``options.tol_gap``: :func:`train_until_certified`.

    One-vs-rest with the dual finish (:mod:`pegasos.finish`), the length and
    the step left to it: the K problems' passes from W = 0 run first (as in
    :func:`train_until_converged`; sector at lambda = 1e-4: 1.5 s against
    2.4 s with the probe below and one epoch first); when they do not
    certify, the doubling of the largest class against the rest is run, as a probe (1/K of
    the work); when it hands over, the K problems are finished in the dual
    from one epoch of Pegasos (sector at lambda = 1e-4: 11 s instead of
    22 s with the K runs lengthened to 8 epochs first, the same accuracy);
    when it converges, or the finish does not certify, the K runs are
    lengthened together as above.

    Parameters
    ----------
    ex : pegasos.examples.Examples
    options : pegasos.options.TrainOptions
        Validated, with ``multiclass`` "ovr" or "crammer-singer".
    class_texts, progress :
        As :func:`pegasos.multiclass.fit_multiclass`.

    Returns
    -------
    MulticlassModel
        Its ``info`` records the t0 used and, for an automatic length, the
        same entries as :func:`train_until_converged` (``epochs``,
        ``epochs_trained``, ``step_offset_rule``, ``eta0``, ``stopping``).

    Raises
    ------
    ParameterError
        As :func:`pegasos.multiclass.fit_multiclass` and
        :func:`calibrate_step_offset`.
    """
    from .multiclass import OvrRun, fit_multiclass
    from .scoring import objective

    if options.tol_gap is not None:
        return train_until_certified(ex, options, class_texts=class_texts, progress=progress)
    K = int(np.unique(ex.y).size)
    k = min(int(options.batch_size), ex.m)
    per_epoch = max(1, math.ceil(ex.m / k))
    max_epochs = default_epoch_cap(ex.m * K, k)
    # (Crammer-Singer's Pegasos run has no finish: its passes start from W = 0, run below before it)
    finishing = finishing_for(options.replace(multiclass=options.multiclass or "ovr"), ex) \
        and (options.multiclass or "ovr") == "ovr"
    target = options.tol if finish_tol is None else finish_tol
    if finishing and options.length_is_automatic and options.step_is_automatic \
            and (options.multiclass or "ovr") == "ovr":
        # the dual passes of the K problems from W = 0 first: where they certify, no Pegasos epoch is needed
        from .finish import budget, finish_ovr

        zero = fit_multiclass(ex, options.replace(iterations=0, epochs=None, finish="dual"),
                              class_texts=class_texts)
        done = finish_ovr(zero, ex, tol=target, n_threads=options.n_threads, give_up=True,
                          **budget(options, first_handover(per_epoch, max_epochs), ex, zero.n_classes))
        if float(done.info["certified_gap"]) <= target:
            return _from_zero(done, options.tol, max_epochs)
    dual_cs = None
    if options.multiclass == "crammer-singer" and options.length_is_automatic and options.step_is_automatic \
            and options.finish != "none":
        # the dual passes from W = 0 (pegasos.finish.finish_crammer_singer): dna at lambda = 1e-4, 10 doublings
        # of Pegasos ended 11% above f*, sector 8.6% above in 23 s; the passes certify 0.2% (sector: 4.6 s)
        from .finish import finish_crammer_singer

        zero = fit_multiclass(ex, options.replace(iterations=0, epochs=None, finish="dual"),
                              class_texts=class_texts)
        dual_cs = finish_crammer_singer(zero, ex, tol=target)
        if float(dual_cs.info["certified_gap"]) <= target:
            return _from_zero(dual_cs, options.tol, max_epochs)
    rule = "given"
    chosen = options
    if options.step_is_automatic and options.iterations != 0:     # (T = 0: no step is taken, none to calibrate)
        chosen = options.replace(step_offset=ovr_step_offset(ex, options), eta0=None)
        rule = "calibrated"
    if not options.length_is_automatic:
        model = fit_multiclass(ex, chosen, class_texts=class_texts, progress=progress)
        if rule == "calibrated":
            model.info["step_offset_rule"] = rule
        return model

    def score(model):
        return float(objective(model, ex.chunk, ex.y, sample_weight=ex.sample_weight)["objective"])

    def finish(model, iterations, give_up=True):
        from .finish import budget, finish_ovr

        # during the doubling (and from the probe) Pegasos goes on when the finish does not certify
        done, f_done = finish_ovr(model, ex, tol=target, n_threads=options.n_threads, give_up=give_up,
                                  with_objective=True, **budget(options, iterations, ex, model.n_classes))
        return done, f_done, float(done.info["certified_gap"]) <= target

    if finishing and (chosen.multiclass or "ovr") == "ovr":
        probe = _largest_class_hands_over(ex, chosen, max_epochs)
        if probe is not None:
            # the K problems go to the dual from one epoch of Pegasos: their doubling would hand over too
            start = fit_multiclass(ex, chosen.replace(epochs=1), class_texts=class_texts, progress=progress)
            # the finish's work is weighed against the probe's Pegasos run and this epoch
            done, f_done, certified = finish(start, (probe + 1) * per_epoch)
            if certified:
                history = [{"epochs": 1, "iterations": int(start.info["iterations"]), "objective": f_done}]
                return _record(done, 1, history, rule, options.lam, chosen.t0, options.tol, max_epochs,
                               f"handed over (the largest class against the rest at {probe} epochs)")
    if (chosen.multiclass or "ovr") == "ovr":
        ovr = OvrRun(ex, chosen, class_texts=class_texts, progress=progress)

        def run(E, next_E):
            T = chosen.replace(epochs=E).plan(ex.m).T
            next_T = None if next_E is None else chosen.replace(epochs=next_E).plan(ex.m).T
            model = ovr.advance(T, next_T)
            return model, score(model)
    else:
        def run(E, next_E):
            model = fit_multiclass(ex, chosen.replace(epochs=E), class_texts=class_texts, progress=progress)
            return model, score(model)

    model, E, history, reason = double_until_converged(run, per_epoch, options.tol, max_epochs, K * per_epoch,
                                                       handover=HANDOVER * options.tol if finishing else None,
                                                       finish=finish)
    model = _record(model, E, history, rule, options.lam, chosen.t0, options.tol, max_epochs, reason)
    if chosen.multiclass == "crammer-singer":
        model.info["epochs_trained"] = str(sum(h["epochs"] for h in history))     # each length from scratch
        if dual_cs is not None:
            model = _lower_cs(model, dual_cs, ex, options.tol, max_epochs)
    if _still_to_finish(model, reason, finishing, options):
        model = _finished_at_the_end(finish(model, int(model.info["iterations"]), give_up=False)[0])
    return model


def _lower_cs(model, dual_cs, ex, tol, max_epochs):
    """The Crammer-Singer model of the doubling, or the uncertified dual passes from W = 0 where their
    objective is lower; either way the passes' dual bound certifies it (``certified_gap``)."""
    from .scoring import objective

    f_model = float(objective(model, ex.chunk, ex.y, sample_weight=ex.sample_weight)["objective"])
    f_dual = float(objective(dual_cs, ex.chunk, ex.y, sample_weight=ex.sample_weight)["objective"])
    gap = float(dual_cs.info["certified_gap"])
    lower = f_dual * (1.0 - gap)                   # the passes' dual bound on f*
    if f_dual < f_model:
        kept = _from_zero(dual_cs, tol, max_epochs)
        kept.info["epochs_trained"] = model.info["epochs_trained"]
        kept.info["stopping"] = (model.info["stopping"] + " (the uncertified dual passes from w = 0 kept: Pegasos' "
                                 "model had a higher objective)")
        return kept
    model.info["finish_discarded_gap"] = dual_cs.info["certified_gap"]      # (the notes of a discarded finish)
    model.info["certified_gap"] = repr(max(0.0, (f_model - lower) / f_model) if f_model > 0 else 0.0)
    return model


def _largest_class_hands_over(ex, options, max_epochs):
    """The epochs at which the doubling of the largest class against the rest (the problem the step
    offset is calibrated on) hands over to the dual finish, or None when it converges first (or its
    average starts before the last half, so that it cannot be lengthened): a probe that costs 1/K of
    the one-vs-rest run it stands for (sector: 8 epochs of one binary problem instead of 105)."""
    from .linear import LinearRun
    from .scoring import objective

    plan = options.plan(ex.m)
    if plan.average_from and plan.average_from < 0.5:
        return None
    binary = _largest_class_problem(ex, options)
    settings = options.replace(class_weight=None, multiclass=None)
    run = LinearRun(binary, settings)

    def advance(E, next_E):
        T = settings.replace(epochs=E, iterations=None).plan(binary.m).T
        next_T = None if next_E is None else settings.replace(epochs=next_E, iterations=None).plan(binary.m).T
        model = run.advance(T, next_T)
        return model, float(objective(model, binary.chunk, binary.y, sample_weight=binary.sample_weight)["objective"])

    k = min(int(options.batch_size), max(1, ex.m))
    _, E, _, reason = double_until_converged(advance, max(1, math.ceil(ex.m / k)), options.tol, max_epochs,
                                             handover=HANDOVER * options.tol, finish=lambda model, iterations: (model, 0.0, True))
    return E if reason == "handed over" else None


def _ovr_weights(ex, options):
    """Per-example weights of the calibration problem: class weights times example weights."""
    from .labels import sample_weights

    w = sample_weights(ex.y, options.class_weight)
    if ex.sample_weight is not None:
        w = ex.sample_weight if w is None else w * ex.sample_weight
    return w
