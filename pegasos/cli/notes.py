"""The ``pegasos: note: ...`` lines on stderr: how a run ended, what may help, and the summaries'
certificate texts."""

import math
import os

import click



def note_outcome(outcome, result, d, options, quiet):
    """train's notes on how the run ended (:attr:`pegasos.outcome.Outcome.diagnostics`, the ones
    :func:`pegasos.fit` warns with).  A model the dual solver did not certify is said with -q too (a cron
    job's mail), with what may help: scaling the features, more passes."""
    from ..outcome import held_intercept

    uncertified_dual = outcome.certified_gap is not None and not outcome.certified
    for line in outcome.diagnostics:
        if uncertified_dual:
            finding = _scale_finding(d)
            more = "" if _uneven(finding) or "stream_reads" in result.info else more_passes(outcome)
            click.echo(f"pegasos: note: {line}{classes_not_finished(result)}{more}", err=True)
            _note_scale(d, finding)
        elif not quiet:
            click.echo(f"pegasos: note: {line}{gap_hint(result)}", err=True)
    held = held_intercept(result)
    if held is not None:                # (with -q too: the model predicts far from the targets)
        click.echo(f"pegasos: note: {held}", err=True)


def note_unused_qid(d, options):
    """A note on stderr, with the summary of a run that trained, when DATA holds qid: tokens and the loss is
    not rank: the run then silently trained one-vs-rest or binary classifiers on the relevance grades."""
    if options.loss == "rank":
        return
    qid = getattr(getattr(d, "chunk", None), "qid", None)
    found = getattr(d, "has_qid", False) or (qid is not None and bool((qid != -1).any()))
    if found:
        click.echo(f"pegasos: note: {d.path} holds qid: tokens, which only --loss rank uses (pairs within each "
                   "query); this run ignores them and learns its labels as classes or targets", err=True)


def more_passes(outcome):
    """How to give the dual solver more work, for a note: four times its passes, exactly."""
    if not outcome.passes:
        return ""
    after = "-T 0 " if outcome.iterations == 0 else ""          # else after the same Pegasos run
    return f"; {after}--finish-passes {4 * outcome.passes} runs four times its passes"


def gap_hint(model):
    """", pegasos objective --gap ..." where that can certify ``model`` (not for the log or eps-insensitive
    loss, nor an unregularized bias: the hint sent users to a "no certified gap")."""
    from ..certificate import check_gap_model
    from ..errors import PegasosError

    try:
        check_gap_model(model)
    except PegasosError:
        return ""
    return "; pegasos objective --gap DATA MODEL says how far from the optimum the model is"


def _scale_finding(d):
    """What the training data's column scales say (:func:`pegasos.data.scale_finding`), or None: asked
    after a finish that did not certify."""
    chunk = getattr(d, "chunk", None)
    if chunk is None:
        return None
    from ..data import scale_finding

    return scale_finding(chunk.indices, chunk.data, d.n_features, chunk.indptr.shape[0] - 1)


def _uneven(finding):
    """Whether the finding is of columns of very different scales (more passes do not help there)."""
    return finding is not None and finding[0] == "uneven"


def _note_scale(d, finding):
    """The note of that finding, the likely cause of the uncertified finish, and what to do about it:
    columns of very different scales, named; or features that are all large (scaled data lie in
    [-1, 1], where the dual passes converge much faster)."""
    if finding is None:
        return
    base = 0 if d.zero_based else 1
    kind, found = finding
    if kind == "uneven":
        large, s_large, small, s_small = found
        click.echo(f"pegasos: note: the features' scales differ {s_large / s_small:.3g}-fold (feature {large + base} "
                   f"reaches |x| = {s_large:.3g}, feature {small + base} at most {s_small:.3g}), likely what keeps "
                   "Pegasos and the dual finish from converging: scale each feature to [-1, 1] (divide it by its "
                   "largest |x|) and train again", err=True)
        return
    column, scale = found
    click.echo(f"pegasos: note: the features are not scaled (feature {column + base} reaches |x| = {scale:.3g}; "
               "scaled data lie in [-1, 1]), which slows the dual finish at this lambda: scale each feature to "
               "[-1, 1] (divide it by its largest |x|) and choose lambda for the scaled data", err=True)


def note_no_examples(count, data, sample=None):
    """A note on stderr (with -q too) when DATA gave no example to score: every metric is then n/a and the
    exit status 0 (shared case CASE-20: predict writes no line, eval reports 0 examples), which a script
    without a guard (--fail-under) would take for a result."""
    if count == 0:
        what = "the random sample of DATA holds" if sample is not None else f"{data} holds"
        click.echo(f"pegasos: note: {what} no examples (an empty file, or only comments and blank lines): there is "
                   "nothing to score", err=True)


def apart(a, b, digits=4):
    """``a`` and ``b`` (floats, a != b) written with ``digits`` significant digits, or as many more as
    tell them apart ("0.1011 is above 0.1011" said nothing)."""
    while digits < 17 and f"{a:.{digits}g}" == f"{b:.{digits}g}":
        digits += 1
    return f"{a:.{digits}g}", f"{b:.{digits}g}"


def note_worse_than_start(result, options):
    """A note (with -q too) when a resumed run that was not finished in the dual ended above its starting
    model's objective on DATA (``resume_objectives``, from :func:`pegasos.fit`): the early steps of a new
    Pegasos run can undo a near-optimal model."""
    pair = getattr(result, "resume_objectives", None)
    if pair is None or not pair[1] > pair[0]:
        return
    how = "--finish dual finishes it in the dual from the lower of the two"
    above, below = apart(pair[1], pair[0])
    click.echo(f"pegasos: note: the resumed model's objective {above} on DATA is above {below}, that of "
               f"the model it started from: its Pegasos steps were too large for how near that one was; {how}",
               err=True)


def note_worse_than_zero(result, d, options, value=None):
    """A note (with -q too) when a linear binary classifier's objective is above that of w = 0, the run's
    start: its steps were too large for these features (unscaled columns at a small lambda with
    --finish none, or a large --t0).  w = 0's objective is at most
    the largest class weight (the hinge losses 1; log loss: times ln 2), so the note is never wrong;
    the objective is the summary's, or one pass over the data with -q, for a model without a
    certificate only (a certified one is within its gap of the optimum, below w = 0's)."""
    if getattr(result, "task", None) != "binary" or getattr(result, "kind", "linear") != "linear" \
            or getattr(result, "w", None) is None:
        return
    if value is None:
        if "certified_gap" in result.info or options.shuffle_buffer is not None:
            return
        from ..scoring import objective

        value = float(objective(result, d.chunk, d.y)["objective"])
    zero = _zero_objective(options)
    if not value > zero:
        return
    resumed = "warm_start" in result.info or getattr(result, "resume_objectives", None) is not None
    started = "" if resumed else " where the run started"
    above, below = apart(value, zero)
    click.echo(f"pegasos: note: the model's objective {above} is above {below}, that of w = 0{started}: its "
               "steps were too large for these features", err=True)
    if options.shuffle_buffer is None:              # (the rows of a stream are not in memory to look at)
        _note_scale(d, _scale_finding(d))


def _zero_objective(options):
    """An upper bound on the objective of w = 0 for a binary classifier trained with ``options``: its hinge
    losses are 1 (log loss: ln 2), times the largest class weight."""
    weights = options.class_weight if isinstance(options.class_weight, dict) and options.class_weight else {}
    return max([1.0] + [float(v) for v in weights.values()]) * (math.log(2.0) if options.loss == "log" else 1.0)


def note_worse_than_zero_runs(entries, key, task, options, what, shown):
    """cv's and search's note (with -q too) naming the folds or grid points of a binary classifier whose
    training objective (``objective`` of each entry) is above that of w = 0 (:func:`_zero_objective`),
    as train's note says it of one model: steps too large for these features, where `pegasos train`
    says more."""
    if task != "binary" or options.loss not in ("hinge", "log", "squared-hinge"):
        return
    zero = _zero_objective(options)
    above = [e for e in entries if e.get("objective") is not None and e["objective"] > zero]
    if not above:
        return
    which = ", ".join(f"{shown.format(e[key])} ({e['objective']:.4g})" for e in above)
    click.echo(f"pegasos: note: the training objective of {len(above)} of {len(entries)} {what} is above "
               f"{zero:.4g}, that of w = 0 ({which}): the steps were too large for these features; `pegasos "
               "train` on the data says more", err=True)


def note_stream_fits(d, options):
    """--stream on a plain file that training in memory would hold (:func:`pegasos.stream.too_large_for_memory`
    says it is not too large): a note that in memory the file is read once and the dual solver shrinks its
    problem, where each pass of the stream reads the spill again."""
    from ..io import is_plain_text_file
    from ..stream import too_large_for_memory

    if d.path == "-" or not is_plain_text_file(d.path):
        return          # (the memory a compressed file or a pipe needs is not known from a size)
    size = os.path.getsize(d.path)
    if too_large_for_memory(d.path) is not None or options.replace(shuffle_buffer=None).finish_unavailable() is not None:
        return          # (no dual finish in memory either: regression, say)
    click.echo(f"pegasos: note: {d.path} ({size / 2 ** 20:.3g} MiB) fits in memory, where training reads it once "
               "and the dual solver shrinks its problem: drop --stream (or give --cache FILE)", err=True)


def classes_not_finished(result):
    """For a note on a one-vs-rest finish above --tol: the classes it did not finish (0 passes: once the
    largest class's passes neither certify nor beat its Pegasos model, the others are not tried), whose
    part of the gap is the one of their Pegasos weights' scaled dual start, far looser than the model
    (``pegasos objective --gap`` proves a smaller one)."""
    passes = [int(p) for p in str(result.info.get("finish_passes", "")).split(",") if p.strip().isdigit()]
    idle = sum(1 for p in passes if p == 0)
    if len(passes) < 2 or not idle:
        return ""
    return (f" ({idle} of {len(passes)} classes were not finished, after the largest class's passes neither "
            "certified nor beat its Pegasos model: the gap of their Pegasos weights counts from the dual "
            "passes' start and says little about the model)")


def not_below_zero(gap):
    """A gap for the text: a negative one (rounding: the dual a few ulps above the primal) is 0."""
    return 0.0 if gap < 0 else gap


def still_shrinking(r, command="--gap-passes"):
    """A hint when the passes run until the gap stops shrinking ended at their bound."""
    if r.get("stalled", True):
        return ""
    return f"; the gap was still shrinking: more passes with {command} N"


def _above_tol(entries, key, tol, shown):
    """The entries (dicts with ``certified_gap``) whose gap is above ``tol``, and their list for a note:
    ``shown`` (a format) of each one's ``key``, with its gap in %."""
    above = [(e[key], e["certified_gap"]) for e in entries
             if e.get("certified_gap") is not None and e["certified_gap"] > tol]
    return above, ", ".join(f"{shown.format(name)} ({100 * gap:.3g}%)" for name, gap in above)


def note_uncertified_folds(per_fold, tol):
    """A note naming the folds whose models their runs did not certify within ``tol`` (their header's
    certified_gap): their metrics are those of models that may be far from the optimum."""
    above, which = _above_tol(per_fold, "fold", tol, "{}")
    if not above:
        return
    click.echo(f"pegasos: note: the models of {len(above)} of {len(per_fold)} folds were not certified within "
               f"--tol {100 * tol:.3g}% of their optimum (certified gap of fold {which}): their metrics may be "
               "those of models far from it; `pegasos train` on the data says why and what helps", err=True)


def note_best_on_an_edge(best, grids):
    """search's note when the best point lies at an end of a grid of several values (``grids``: {"lam":
    lambdas, "gamma": gammas or None}): the best may lie beyond it."""
    for key, option in (("lam", "-l/--lambda"), ("gamma", "--gamma")):
        values = grids.get(key)
        if values is None or len(set(values)) < 2 or key not in best:
            continue
        end = "smallest" if best[key] == min(values) else "largest" if best[key] == max(values) else None
        if end is not None:
            name = "lambda" if key == "lam" else key
            click.echo(f"pegasos: note: the best {name}, {best[key]!r}, is the grid's {end}: a better one may lie "
                       f"beyond it; extend the grid ({option} LO:HI)", err=True)


def note_uncertified_points(rows, tol):
    """search's note naming the grid points whose models (the worst fold's) were not certified within
    ``tol``, as cv's names its folds: their metrics may be those of models far from the optimum."""
    above, which = _above_tol(rows, "lam", tol, "{!r}")
    if not above:
        return
    click.echo(f"pegasos: note: at {len(above)} of {len(rows)} points the models were not certified within --tol "
               f"{100 * tol:.3g}% of their optimum (the worst fold's certified gap at lambda {which}): their "
               "metrics may be those of models far from it; `pegasos train -l LAMBDA` on the data says why and "
               "what helps", err=True)
