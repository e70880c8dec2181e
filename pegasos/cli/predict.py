"""``pegasos predict``: decision values, labels or probabilities of DATA, one line per example."""

import sys

import click

from .common import Command, UsageLine, errors_to_click, load_model_for
from .progress import Progress, bar_update, close_bar
from .notes import note_no_examples


@click.command(cls=Command)
@click.argument("data")
@click.argument("model")
@click.argument("output", required=False)
@click.option("--labels", "as_labels", is_flag=True,
              help="Write predicted labels (as spelled in the training data) instead of decision values.")
@click.option("--proba", is_flag=True, help="Write P(positive label), or the K class probabilities of a "
              "multiclass model (one-vs-rest, summing to 1) (models trained with --loss log).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@errors_to_click
def predict(data, model, output, as_labels, quiet, proba=False):
    """Write one decision value per example of DATA (to OUTPUT or stdout).

    Binary models: f(x) = <w,x> + b (kernel models: sum of c_i K(sv_i, x));
    f > 0 predicts the positive label.  Multiclass models: K values per line,
    one per class in increasing label order.  Regression and ranking: the
    prediction or the score.
    """
    import numpy as np

    from ..io import iter_svmlight
    from ..linear import logistic
    from ..model import atomic_write, check_distinct_files

    from ..errors import ParameterError

    if proba and as_labels:
        raise UsageLine("give either --proba or --labels, not both")
    check_distinct_files(output, "OUTPUT", (("DATA", data), ("MODEL", model)))
    mdl = load_model_for(model, data)
    zero_based = mdl.info.get("index_base", "1") == "0"
    progress = Progress(quiet)
    task = getattr(mdl, "task", "binary")
    if proba and getattr(mdl, "loss", "hinge") != "log":
        raise ParameterError(f"--proba needs a model trained with --loss log "
                             f"({model} uses {getattr(mdl, 'loss', 'hinge')})")
    if as_labels and task in ("regression", "ranking"):
        raise ParameterError(f"--labels applies to classification models, not to {task}")

    written = [0]

    def write(f):
        bar = progress.reading(data)
        try:
            for chunk in iter_svmlight(data, zero_based=zero_based, progress=bar_update(bar)):
                if chunk.n_rows == 0:
                    continue
                written[0] += chunk.n_rows
                values = mdl.decision_function(chunk)
                if task == "multiclass":
                    if as_labels:
                        lines = [mdl.class_texts[c] for c in np.argmax(values, axis=1).tolist()]
                    elif proba:
                        lines = [" ".join(map(repr, row)) for row in mdl.predict_proba(chunk).tolist()]
                    else:
                        lines = [" ".join(map(repr, row)) for row in values.tolist()]
                elif as_labels:
                    lines = mdl.labels.decode(values > 0).tolist()
                elif proba:
                    lines = [repr(v) for v in logistic(values).tolist()]
                else:
                    lines = [repr(v) for v in values.tolist()]
                f.write("\n".join(lines))
                f.write("\n")
        finally:
            close_bar(bar)

    if output is None or output == "-":
        write(sys.stdout)
        sys.stdout.flush()
    else:
        atomic_write(output, write)
    note_no_examples(written[0], data)
