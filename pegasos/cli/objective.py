"""``pegasos objective``: the primal objective of a model on DATA, and with --gap its certified gap."""

import click

from ..defaults import MAX_GAP_PASSES
from .common import Command, Finite, echo_json, errors_to_click, load_model_for, fmt, usage_errors
from .progress import Progress, bar_update, close_bar
from .notes import note_no_examples, not_below_zero, still_shrinking


@click.command(cls=Command)
@click.argument("data")
@click.argument("model")
@click.option("-l", "--lambda", "lam", type=float, help="lambda to evaluate with (default: the model's).")
@click.option("--sample", type=Finite(0, 1, min_open=True), metavar="P",
              help="Estimate the hinge loss on a random fraction P of DATA (for big files and kernel models).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the --sample draw.")
@click.option("--gap", is_flag=True,
              help="Also prove how far MODEL is from the optimum: a dual lower bound on f* and the duality gap "
                   "(hinge, squared hinge and rank-loss models; kernel models of a positive semi-definite kernel "
                   "trained on DATA; DATA is loaded into memory).")
@click.option("--gap-passes", type=click.IntRange(0, MAX_GAP_PASSES), metavar="N", default=None,
              help="Passes of dual coordinate ascent for --gap, each at most one pass over DATA [default: "
                   "doubled until the gap stops shrinking].")
@click.option("--json", "as_json", is_flag=True, help="Print the values as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@errors_to_click
def objective(data, model, lam, as_json, quiet, sample=None, seed=1, gap=False, gap_passes=None):
    """Primal objective lambda/2 ||w||^2 + mean loss of MODEL on DATA (the loss it was trained with).

    With --gap, also a certified lower bound on the optimum f* (weak duality),
    so that objective - f* <= gap.
    """
    from ..defaults import lambda_problem
    from ..errors import ParameterError
    from ..scoring import objective_file

    with usage_errors():
        if lam is not None and (problem := lambda_problem(lam)) is not None:
            raise ParameterError(f"-l/--lambda: {problem}")
        if gap_passes is not None and not gap:
            raise ParameterError("--gap-passes applies only with --gap")
        if gap and sample is not None:
            raise ParameterError("--gap needs the whole of DATA: it cannot be combined with --sample")
    if gap:
        return _objective_gap(data, model, lam, as_json, quiet, gap_passes)
    mdl = load_model_for(model, data)
    if sample is not None and getattr(mdl, "task", "binary") != "binary":
        raise ParameterError(f"--sample applies to binary models, not to {mdl.task} ones")
    progress = Progress(quiet)
    bar = progress.reading(data)
    try:
        r = objective_file(mdl, data, lam=lam, progress=bar_update(bar), sample=sample, seed=seed)
    finally:
        close_bar(bar)
    note_no_examples(r.get("examples"), data, sample)
    if as_json:
        echo_json(r)
        return
    if r.get("task") in ("multiclass", "regression", "ranking"):
        rows = [f"examples     {r['examples']}", f"task         {r['task']} (loss {r['loss']})",
                f"lambda       {r['lambda']!r}", f"objective    {fmt(r['objective'], 8)}"]
        if r.get("mean_loss") is not None:
            rows.append(f"mean loss    {fmt(r['mean_loss'], 8)}")
        rows.append(f"regularizer  {r['regularizer']:.8f}")
        if r.get("error_rate") is not None:
            rows.append(f"error rate   {fmt(r['error_rate'])}")
        click.echo("\n".join(rows))
        return
    bias = "" if r["bias_mode"] == "none" else f"bias         {r['bias']!r} ({r['bias_mode']})\n"
    click.echo(
        f"examples     {r['examples']}{'' if sample is None else f' (random fraction {sample!r} of the file)'}\n"
        f"lambda       {r['lambda']!r}\n"
        f"objective    {fmt(r['objective'], 8)}\n"
        f"{(r.get('loss') or 'hinge') + ' loss':<12} {fmt(r.get('mean_loss', r['hinge_loss']), 8)}\n"
        f"regularizer  {r['regularizer']:.8f}\n"
        f"norm of w    {r['norm_w']:.6f}\n"
        f"{bias}"
        f"error rate   {fmt(r['error_rate'])}"
    )


def _objective_gap(data, model, lam, as_json, quiet, passes):
    """``objective --gap``: the primal, the dual bound and the gap, as text or JSON."""
    from ..certificate import check_gap_model, duality_gap
    from ..io import read_svmlight

    mdl = load_model_for(model, data)
    check_gap_model(mdl)           # before reading DATA
    progress = Progress(quiet)
    bar = progress.reading(data)
    try:
        d = read_svmlight(data, zero_based=mdl.info.get("index_base", "1") == "0", progress=bar_update(bar))
    finally:
        close_bar(bar)
    from ..linear import second_processor

    # passes None: until the gap stops shrinking; on two processors (the command's 2 threads), the
    # helper thread of the passes
    r = duality_gap(mdl, d.X, d.y, passes=passes, lam=lam, helper=second_processor(2), qid=d.chunk.qid)
    if as_json:
        echo_json(r)
        return
    click.echo(
        f"examples     {r['examples']}\n"
        f"lambda       {r['lambda']!r}\n"
        f"loss         {r['loss']} (bias {r['bias_mode']})\n"
        f"objective    {r['primal']:.10g}   (primal, the model's)\n" +
        f"dual bound   {r['dual']:.10g}   (f* >= this, "
        + (f"from the model's coefficients scaled by {r['scale']:.6g})\n" if "scale" in r
           else f"after {r['passes']} pass{'' if r['passes'] == 1 else 'es'}{still_shrinking(r)})\n") +
        f"gap          {not_below_zero(r['gap']):.4g}   (objective - f* <= gap)\n"
        f"relative gap {not_below_zero(r['rel_gap']):.4g}\n"
        f"seconds      {r['seconds']:.3f}" + _header_gap_line(mdl, r, lam)
    )


def _header_gap_line(model, r, lam):
    """A line for a header's ``certified_gap`` tighter than the gap just found (the training run's
    dual point, after more passes than these, may be far tighter); it is a proof on the training data
    at the model's lambda only, so it is shown, not used."""
    recorded = model.info.get("certified_gap")
    if recorded is None or (lam is not None and lam != float(model.lam)):
        return ""
    recorded = float(recorded)
    if not recorded < r["rel_gap"]:
        return ""
    passes = model.info.get("finish_passes")
    return (f"\nheader gap   {recorded:.4g}   (certified_gap: the training run's proof on its training data"
            + (f", after {passes} finishing passes" if passes else "")
            + ("" if getattr(model, "kind", "linear") == "kernel" else "; --gap-passes N to prove it here") + ")")
