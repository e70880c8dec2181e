"""Automatic choices for linear Pegasos: the step offset and the stopping point.

Two pure functions over :func:`pegasos.trainers.train`, for the options layer
to call when the user gives no step offset and no number of iterations:

* :func:`calibrate_step_offset` chooses t0 of the step
  eta_t = 1/(lambda (t + t0)) from the data, as Bottou's averaged SGD
  calibrates its first step eta0 = 1/(lambda t0): one pass of the real
  training (same loss, sampling and averaging) over a fixed random sample of
  the examples for eta0 values of a logarithmic grid, walked downhill
  (:func:`walk_to_minimum`) from a guess made from the sample's row norms,
  keeping the eta0 whose model has the lowest primal objective on that
  sample.
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

The model at every length is, bit for bit, that of one run of that length
from scratch, whose settings (iterations T, ``step_offset``, ``sampling``,
``average_from``, ``seed``) are all in the model file header, so the
returned model is reproduced by training with the header's settings; the automatic choices are also recorded in
``model.info`` (see :func:`train_until_converged`).
"""

import math
import numbers
from collections.abc import Callable

import numpy as np

from .defaults import AUTO_AVERAGE_FROM, DEFAULT_SAMPLE_SIZE, DEFAULT_SEED, DEFAULT_TOL  # noqa: F401 (autotune.DEFAULT_TOL)
from .errors import DivergenceError, ParameterError
from .data import compact_columns, take_rows
from .io import Chunk

# eta0 = 1/(lambda t0) candidates: 10^-4 .. 10 in steps of 10^(1/4)
DEFAULT_ETA0_GRID = tuple(float(10.0 ** (e / 4.0)) for e in range(-16, 5))
WALK_LOOKAHEAD = 2                  # grid points a walk looks at past its current one before it stops
DEFAULT_MAX_ITERATIONS = 1 << 25   # work cap of the lengthened run: E m <= 2^25 (about 3.4e7 rows) ...
DEFAULT_MIN_EPOCH_CAP = 16          # ... but at least 16 epochs
DEFAULT_MAX_EPOCHS = 1 << 14        # ... and at most 16384 (tiny data sets: their objective stays noisy)
SOFT_ITERATIONS = 1 << 24           # a length beyond this many iterations (summed over classes) ...
GOOD_ENOUGH = 0.01                  # ... is trained only while the last doubling improved by more than this
FIRST_RUN_ITERATIONS = 1 << 14      # the first run has E m >= 2^14 iterations (noise of tiny data sets)


def walk_to_minimum(score: Callable[[int], float], n: int, start: int,
                    lookahead: int = WALK_LOOKAHEAD) -> tuple[int, dict[int, float]]:
    """The first index of the smallest ``score(i)``, i in 0..n-1, found by walking downhill from ``start``.

    The walk goes up (i + 1, i + 2, ...) to the first of the next ``lookahead`` points whose value is
    at most the current one, as long as there is one; then, unless it found a value below
    ``score(start)``, it walks down from ``start`` the same way.  The result is the smallest index
    among the points visited that have the smallest value visited (ties: the smaller index).  Each
    ``score(i)`` is computed at most once.

    When the sequence is unimodal (non-increasing, then non-decreasing; ties and ``inf`` allowed)
    this is its first minimum, the exhaustive argmin: the walks pass through every run of equal
    values.  Other sequences may give a local minimum; a rise of fewer than ``lookahead`` points is
    walked over.  Cost: the points between ``start`` and the minimum, the run of minimal values, and
    about ``lookahead`` points past each end of the walk (5 visits when the minimum is at ``start``
    of a strictly unimodal sequence, 2 ``lookahead`` + 1).

    Parameters
    ----------
    score : callable(int) -> float
        The value at an index (``inf`` allowed, e.g. a diverged run); not NaN.
    n : int >= 1
        Number of points.
    start : int, 0 <= start < n
    lookahead : int >= 1

    Returns
    -------
    (int, dict)
        The index found and the values visited, {index: value}.

    Raises
    ------
    ValueError
        ``n``, ``start`` or ``lookahead`` out of range; any error of ``score``.
    """
    if n < 1 or not 0 <= start < n or lookahead < 1:
        raise ValueError(f"walk_to_minimum: n = {n}, start = {start}, lookahead = {lookahead} out of range")
    values: dict[int, float] = {}

    def at(i: int) -> float:
        if i not in values:
            values[i] = float(score(i))
        return values[i]

    at(start)
    for step in (1, -1):
        i = start
        while True:
            ahead = (i + step * k for k in range(1, lookahead + 1))
            i_next = next((j for j in ahead if 0 <= j < n and at(j) <= values[i]), None)
            if i_next is None:
                break
            i = i_next
        if min(values.values()) < values[start]:     # unimodal: the minimum lies on this side only
            break
    return min(values, key=lambda i: (values[i], i)), values


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
    examples with the generator seeded by ``seed``; the score of an eta0 of
    ``grid`` is the primal objective lambda/2 ||w||^2 + mean loss on the
    sample (each loss weighted as in training: class weight times
    ``sample_weight``; ``inf`` when the run diverges) of one epoch on the
    sample with t0 = 1/(lambda eta0), the given loss, sampling and suffix
    averaging.  The eta0_s of lowest score (the smaller on a tie) is
    searched by :func:`walk_to_minimum` from the grid point nearest (in
    log) to 1/r2, r2 the sample's mean squared row norm: the step that
    takes a typical example's margin from 0 to 1 in one hinge step.  Where
    the scores over the sorted grid are unimodal this is the grid's argmin
    (on the shared data sets the best lay a few grid points from the start
    and the walk returned the whole grid's argmin in nearly every case:
    benchmarks/RESULTS_calibration.md).  Return t0 = 1/(lambda eta0) with
    eta0 = eta0_s sqrt(s/m).  The factor carries the step from the s
    iterations of a sample pass to the m of an epoch:
    the best constant step of averaged SGD scales like 1/sqrt(T) (with
    these t0 the step is nearly constant over the first epochs).  Measured
    at lambda = 1e-4, seeds 1-3, the sample's best eta0_s against the best
    eta0 of one epoch on all the data: a9a 0.032-0.056 / 0.01, w8a
    0.56 / 0.18, ijcnn1 0.32-0.56 / 0.1, mushrooms 0.18 / 0.1, reuters
    1.8 / 0.56; the scaled eta0 is within about one grid step of the best
    (unscaled, a9a ended one epoch 3.0% above f* instead of 0.9%).

    Cost: for each grid point the walk visits, a pass over the sample and
    an objective evaluation on it, i.e. 2 sample_size rows; it visits the
    grid points between the start and the minimum plus at most
    2 ``WALK_LOOKAHEAD`` + 1 (5 visits, 10000 rows with the defaults, when
    the start is the minimum; every point, 2 len(grid) sample_size rows,
    at worst: a run of ties); the runs' set-up done once for all
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
        Also return the table of (eta0, sample objective) of the grid
        points visited, in increasing eta0.

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
    grid = sorted(grid)

    def score(i):
        try:
            model = runs.run(1.0 / (lam * grid[i]))
            f = finite_decisions(decision_values(ex.indptr, ex.indices, ex.data, model.w, model.bias), Xs)
            return float(objective_of_decisions(model, f, ex.y, sample_weight=ex.sample_weight)["objective"])
        except DivergenceError:
            return math.inf

    r2 = float(np.square(Xs.data, dtype=np.float64).sum()) / s
    start = min(range(len(grid)), key=lambda i: abs(math.log(grid[i] * r2))) if r2 > 0 else len(grid) - 1
    best, values = walk_to_minimum(score, len(grid), start)
    if not math.isfinite(values[best]):     # (the walk passes every inf: it visited the whole grid)
        raise ParameterError("every eta0 of the calibration grid diverged (check the scale of the data)")
    table = [(grid[i], values[i]) for i in sorted(values)]
    eta0 = grid[best] * math.sqrt(s / m)
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


def train_until_converged(ex, options, *, labels=None, progress=None, start=None, max_epochs=None):
    """Train until doubling the number of epochs no longer pays: one run, lengthened.

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
    ``ex.sample_weight``) is evaluated; the schedule stops at the first
    E >= 2 E0 with |f(E/2) - f(E)| <= tol f(E), or at the epoch cap.  A rise
    larger than that is noise (small data) and does not stop the schedule.
    When an epoch has fewer than 2^14 iterations the test must hold for two
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
        Validated; ``tol``, the step offset (``step_offset``;
        calibrated with :func:`step_offset_for` when not set) and
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
    if options.step_is_automatic:
        chosen = options.replace(step_offset=step_offset_for(ex, options, labels))
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

    model, E, history, reason = double_until_converged(advance, per_epoch, options.tol, max_epochs)
    model = _record(model, E, history, rule, options.lam, chosen.t0, options.tol, max_epochs, reason)
    if run is None:
        model.info["epochs_trained"] = str(sum(h["epochs"] for h in history))
    return model, E, history


def ovr_step_offset(ex, options):
    """The calibrated t0 of a one-vs-rest run: :func:`step_offset_for` on the largest class
    against the rest (each example's weight its class weight times its sample weight)."""
    from .labels import BinaryLabels

    # labels -1/+1 given: a batch of partial_fit may hold the largest class alone (or none of it)
    return step_offset_for(_largest_class_problem(ex, options), options.replace(class_weight=None, multiclass=None),
                           BinaryLabels(-1.0, 1.0))


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
    from .certificate import duality_gap
    from .defaults import MAX_GAP_PASSES
    from .linear import LinearRun
    from .multiclass import OvrRun

    eps = float(options.tol_gap)
    K = int(np.unique(ex.y).size)
    multiclass = K > 2 or options.multiclass is not None
    k = min(int(options.batch_size), max(1, ex.m))
    if multiclass:
        chosen, rule = options.replace(multiclass="ovr"), "given"
        if options.step_is_automatic:
            chosen, rule = chosen.replace(step_offset=ovr_step_offset(ex, options)), "calibrated"
        run = OvrRun(ex, chosen, class_texts=class_texts, progress=progress)
    else:
        K = 1
        chosen, rule = options, "given"
        if options.step_is_automatic:
            chosen = options.replace(step_offset=step_offset_for(ex, options, labels))
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


def double_until_converged(run, per_epoch, tol, max_epochs, work_per_epoch=None):
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
        "converged", "epoch cap" or "work cap" (the next length would pass
        2^24 iterations for less than 1%).
    """
    schedule = epoch_schedule(per_epoch, max_epochs)
    history, runs = [], []
    reason = "epoch cap"
    needed = 2 if per_epoch < FIRST_RUN_ITERATIONS else 1
    passed = 0
    work = per_epoch if work_per_epoch is None else work_per_epoch
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
    model, E, f = min(runs, key=lambda r: r[2])
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


def fit_multiclass_auto(ex, options, *, class_texts=None, progress=None):
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
    rule = "given"
    chosen = options
    if options.step_is_automatic and options.iterations != 0:     # (T = 0: no step is taken, none to calibrate)
        chosen = options.replace(step_offset=ovr_step_offset(ex, options))
        rule = "calibrated"
    if not options.length_is_automatic:
        model = fit_multiclass(ex, chosen, class_texts=class_texts, progress=progress)
        if rule == "calibrated":
            model.info["step_offset_rule"] = rule
        return model

    def score(model):
        return float(objective(model, ex.chunk, ex.y, sample_weight=ex.sample_weight)["objective"])

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

    model, E, history, reason = double_until_converged(run, per_epoch, options.tol, max_epochs, K * per_epoch)
    model = _record(model, E, history, rule, options.lam, chosen.t0, options.tol, max_epochs, reason)
    if chosen.multiclass == "crammer-singer":
        model.info["epochs_trained"] = str(sum(h["epochs"] for h in history))     # each length from scratch
    return model


def _ovr_weights(ex, options):
    """Per-example weights of the calibration problem: class weights times example weights."""
    from .labels import sample_weights

    w = sample_weights(ex.y, options.class_weight)
    if ex.sample_weight is not None:
        w = ex.sample_weight if w is None else w * ex.sample_weight
    return w
