"""``pegasos plot``: Fig. 4 of the paper from trace files."""

import click

from .common import Command, Finite, errors_to_click, usage_errors


@click.command(cls=Command)
@click.argument("traces", nargs=-1, required=True, metavar="TRACE...")
@click.option("-o", "--output", required=True, metavar="FIG",
              help="Figure file: .png, .svg or .pdf.")
@click.option("--x", "x_axis", type=click.Choice(["seconds", "iterations", "epochs"]), default="seconds",
              show_default=True, help="Horizontal axis: training time (without the checks), iterations t, epochs.")
@click.option("--optimum", type=Finite(min=0, min_open=True), metavar="F",
              help="f*, the optimal primal objective [default: the largest dual bound the traces' headers "
                   "hold (a certified f* or less); without one, the best objective of the traces, not certified].")
@click.option("--title", help="Title of the figure.")
@errors_to_click
def plot(traces, output, x_axis, optimum, title):
    """Plot TRACE files of `pegasos train --trace` as the paper's Fig. 4: primal suboptimality
    (f - f*)/f* on a log axis (left) and the validation error, or the training error without
    validation (right); one curve per trace, labelled by the settings that differ.  The figure
    says which f* it measures against.

    Needs matplotlib (pip install 'pegasos[plot]').
    """
    from ..model import check_writable
    from ..plot import figure_format, plot_traces, save_figure

    with usage_errors():
        figure_format(output)
    check_writable(output)
    fig = plot_traces(list(traces), x=x_axis, optimum=optimum, title=title)
    save_figure(fig, output)
    for why in getattr(fig, "skipped", ()):
        click.echo(f"pegasos: note: left out {why}", err=True)
