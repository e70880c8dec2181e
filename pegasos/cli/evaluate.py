"""``pegasos eval``: metrics of a model on DATA, guards on them (exit 3) and a comparison with another
model."""

import math

import click

from .common import Command, UsageLine, echo_json, errors_to_click, load_model_for, fmt
from .progress import Progress, bar_update, close_bar
from .notes import note_no_examples


@click.command(name="eval", cls=Command)
@click.argument("data")
@click.argument("model")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@click.option("--no-auc", is_flag=True, help="Skip ROC AUC (keeps memory flat for huge files).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.option("--fail-under", multiple=True, metavar="METRIC=VALUE",
              help="Exit with status 3 when METRIC (a key of --json, e.g. accuracy=0.84) is below VALUE or "
                   "undefined; repeatable.")
@click.option("--fail-over", multiple=True, metavar="METRIC=VALUE",
              help="Exit with status 3 when METRIC (a loss or error, e.g. hinge_loss=0.4) is above VALUE or "
                   "undefined; repeatable.")
@click.option("--compare", "old_model", metavar="OLD_MODEL",
              help="Also evaluate OLD_MODEL on DATA and show both side by side.")
@click.option("--fail-if-worse", multiple=True, metavar="METRIC",
              help="With --compare: exit with status 3 when MODEL is worse than OLD_MODEL on METRIC (lower, or "
                   "higher for losses); repeatable.")
@errors_to_click
def eval_(data, model, as_json, no_auc, quiet, fail_under=(), fail_over=(), old_model=None, fail_if_worse=()):
    """Evaluate MODEL on DATA.

    Binary: accuracy, precision, recall, F1, ROC AUC, hinge (and log) loss,
    confusion matrix.  Multiclass: accuracy, per-class precision/recall/F1,
    macro-F1, confusion matrix.  Regression: MSE, MAE, R^2.  Ranking:
    pairwise accuracy and NDCG@10 (gain 2^label - 1) averaged over queries.

    Guards for scripts: --fail-under, --fail-over and --fail-if-worse make
    the command exit with status 3 (after printing the metrics) and name the
    metric, its value and the threshold on stderr when they are missed.
    """
    from ..errors import ParameterError
    from ..scoring import evaluate_file
    from ..selection import eval_metric_names

    mdl = load_model_for(model, data)
    known = eval_metric_names(mdl)
    guards = [(">=", n, v, "--fail-under") for n, v in _parse_guards(fail_under, "--fail-under", known)]
    guards += [("<=", n, v, "--fail-over") for n, v in _parse_guards(fail_over, "--fail-over", known)]
    if no_auc and "roc_auc" in [n for _, n, _, _ in guards] + list(fail_if_worse):
        raise UsageLine("a guard on roc_auc needs the AUC, which --no-auc leaves out: drop one of them")
    if fail_if_worse and old_model is None:
        raise UsageLine("--fail-if-worse needs --compare OLD_MODEL")
    for name in fail_if_worse:
        if name not in known:
            raise UsageLine(f"--fail-if-worse: unknown metric {name!r}; the metrics of this model: "
                            f"{', '.join(known)}")
    old = None
    if old_model is not None:
        if data == "-":
            raise UsageLine("--compare reads DATA twice: give DATA as a file, not standard input")
        old = load_model_for(old_model, data)
        if getattr(old, "task", "binary") != getattr(mdl, "task", "binary"):
            raise ParameterError(f"--compare: {old_model} is a {getattr(old, 'task', 'binary')} model, {model} a "
                                 f"{getattr(mdl, 'task', 'binary')} one")
    progress = Progress(quiet)
    results = []
    for m in (mdl, old) if old is not None else (mdl,):
        bar = progress.reading(data)
        try:
            results.append(evaluate_file(m, data, auc=not no_auc, progress=bar_update(bar)))
        finally:
            close_bar(bar)
    r = results[0]
    note_no_examples(r.get("examples"), data)
    if old is not None:
        _compare_output(results[0], results[1], model, old_model, as_json, known)
    elif as_json:
        echo_json(r)
    elif r.get("task") in ("multiclass", "regression", "ranking"):
        click.echo(_other_eval_text(r))
    else:
        _binary_eval_text(r)
    _check_guards(r, guards, [] if old is None else [(n, results[1].get(n)) for n in fail_if_worse], model,
                  old_model)


def _compare_output(new, old, model, old_model, as_json, metric_names):
    """eval --compare: the metrics of both models, as JSON or a table with their difference."""
    from ..selection import LOWER_IS_BETTER

    if as_json:
        echo_json({"model": model, "old_model": old_model, "new": new, "old": old})
        return
    names = [k for k in metric_names if k in new or k in old]
    width = max(len(n) for n in names + ["examples"])
    lines = [f"{'':<{width}} {'MODEL':>12} {'OLD_MODEL':>12} {'difference':>12}",
             f"{'examples':<{width}} {new['examples']:>12} {old['examples']:>12}"]
    for n in names:
        a, b = new.get(n), old.get(n)
        diff = "" if a is None or b is None else f"{a - b:+.4f}"
        if diff in ("+0.0000", "-0.0000") and a != b:
            diff = f"{a - b:+.2g}"        # a difference below the table's 4 decimals, not a zero one
        better = "" if not diff or a == b else (" (better)" if (a < b) == (n in LOWER_IS_BETTER) else " (worse)")
        lines.append(f"{n:<{width}} {fmt(a):>12} {fmt(b):>12} {diff:>12}{better}")
    lines.append(f"MODEL {model}, OLD_MODEL {old_model}")
    click.echo("\n".join(lines))


def _check_guards(r, guards, worse, model, old_model):
    """Exit with GUARD_FAILED (3) after naming every guard missed on stderr."""
    from ..selection import LOWER_IS_BETTER

    failed = []
    for op, name, threshold, option in guards:
        value = r.get(name)
        if value is None:
            failed.append(f"{name} is undefined on DATA ({option} {name}={threshold!r})")
        elif (value < threshold) if op == ">=" else (value > threshold):
            failed.append(f"{name} {value:.6g} is {'below' if op == '>=' else 'above'} {threshold!r} "
                          f"({option} {name}={threshold!r})")
    for name, old_value in worse:
        value = r.get(name)
        if value is None or old_value is None:
            failed.append(f"{name} is undefined for {model if value is None else old_model} (--fail-if-worse)")
        elif (value > old_value) if name in LOWER_IS_BETTER else (value < old_value):
            failed.append(f"{name} {value:.6g} of {model} is worse than {old_value:.6g} of {old_model} "
                          f"(--fail-if-worse {name})")
    if failed:
        for line in failed:
            click.echo(f"guard failed: {line}", err=True)
        click.get_current_context().exit(GUARD_FAILED)


def _binary_eval_text(r):
    c = r["confusion"]
    pos, neg = r["positive_label"], r["negative_label"]
    acc = fmt(r["accuracy"])
    if r["examples"]:
        acc += f" ({r['correct']}/{r['examples']})"
    rows = [
        f"examples     {r['examples']}",
        f"accuracy     {acc}",
        f"precision    {fmt(r['precision'])}   (positive label {pos})",
        f"recall       {fmt(r['recall'])}",
        f"F1           {fmt(r['f1'])}",
        f"ROC AUC      {fmt(r['roc_auc'])}",
        f"hinge loss   {fmt(r['hinge_loss'], 6)}",
        "confusion matrix (rows: true label, columns: predicted label)",
        *right_aligned([["", "pred " + neg, "pred " + pos], ["true " + neg, c["tn"], c["fp"]],
                        ["true " + pos, c["fn"], c["tp"]]]),
        f"TP={c['tp']} FP={c['fp']} TN={c['tn']} FN={c['fn']}",
    ]
    if "log_loss" in r:
        rows.insert(7, f"log loss     {fmt(r['log_loss'], 6)}")
    click.echo("\n".join(rows))


def right_aligned(table, indent=2, gap=2):
    """The lines of ``table`` (rows of cells: text or numbers), every column right-aligned to its widest
    cell, ``gap`` spaces between columns, ``indent`` before each line."""
    cells = [[str(v) for v in row] for row in table]
    widths = [max(len(row[j]) for row in cells) for j in range(len(cells[0]))]
    return [" " * indent + (" " * gap).join(f"{v:>{w}}" for v, w in zip(row, widths)) for row in cells]


def _other_eval_text(r):
    """eval's text for multiclass, regression and ranking models."""
    if r["task"] == "regression":
        return (f"examples     {r['examples']}\nMSE          {fmt(r['mse'], 6)}\nMAE          {fmt(r['mae'], 6)}\n"
                f"R^2          {fmt(r['r2'], 6)}\neps-insensitive loss {fmt(r['eps_insensitive_loss'], 6)}")
    if r["task"] == "ranking":
        over = "" if r["ndcg_queries"] == r["queries"] else \
            f"   (over the {r['ndcg_queries']} of {r['queries']} queries with a relevant example)"
        return (f"examples     {r['examples']}\nqueries      {r['queries']}\npairs        {r['pairs']}\n"
                f"pairwise accuracy {fmt(r['pairwise_accuracy'])}\nNDCG@10      {fmt(r['ndcg_at_10'])}{over}")
    acc = fmt(r["accuracy"]) + (f" ({r['correct']}/{r['examples']})" if r["examples"] else "")
    rows = [f"examples     {r['examples']}", f"classes      {r['classes']}", f"accuracy     {acc}",
            f"macro F1     {fmt(r['macro_f1'])}",
            *([f"log loss     {fmt(r['log_loss'], 6)}"] if "log_loss" in r else []), "per class:"]
    rows += right_aligned([["label", "support", "precision", "recall", "F1"]]
                          + [[p["label"], p["support"], fmt(p["precision"]), fmt(p["recall"]), fmt(p["f1"])]
                             for p in r["per_class"]])
    if r["classes"] <= 20:
        rows.append("confusion matrix (rows: true label, columns: predicted label)")
        rows += right_aligned([["", *r["labels"]]] + [[t, *row] for t, row in zip(r["labels"], r["confusion"])])
    else:
        rows.append("(confusion matrix: use --json)")
    return "\n".join(rows)


# ------------------------------------------------------------------ summaries, selection, guards --

#: exit status of a guard (eval --fail-under / --fail-over / --fail-if-worse) that failed
GUARD_FAILED = 3


def _parse_guards(items, option, known):
    """[(metric, threshold)] from METRIC=VALUE items; an unknown metric or a bad value is a usage error."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:                     # (a bare number, say: the metric left out)
            raise UsageLine(f"{option} expects METRIC=NUMBER, got {item!r}; the metrics of this model: "
                            f"{', '.join(known)}")
        if name not in known:
            raise UsageLine(f"{option}: unknown metric {name!r}; the metrics of this model: "
                            f"{', '.join(known)}")
        try:
            threshold = float(value)
        except ValueError:
            threshold = None
        if not sep or threshold is None or not math.isfinite(threshold):
            raise UsageLine(f"{option} expects METRIC=NUMBER, got {item!r}")
        out.append((name, threshold))
    return out
