"""``pegasos info``: what a model file holds."""

import click

from .common import Command, echo_json, errors_to_click


@click.command(cls=Command)
@click.argument("model")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="Show the N weights of largest |value| (per class for multiclass models).")
@click.option("--json", "as_json", is_flag=True, help="Print everything as one JSON object.")
@errors_to_click
def info(model, top, as_json):
    """Describe MODEL: its header, the non-zero weights, ||w||, the bias and the top weights
    (feature indices in the index base of its training file); kernel models: the support vectors."""
    from ..modelfile import load_model
    from ..selection import describe_model

    r = describe_model(load_model(model, written_columns=True), top)
    if as_json:
        echo_json(r)
        return
    width = max(len(k) for k in r["header"]) if r["header"] else 0
    lines = [f"model {model}", "header:"] + [f"  {k:<{width}}  {v}" for k, v in r["header"].items()]
    parts = r["classes"] if "classes" in r else [r]
    for part in parts:
        prefix = f"class {part['label']}: " if "label" in part else ""
        if "support_vectors" in part:
            lines.append(f"{prefix}support vectors {part['support_vectors']} (kernel {part['kernel']})")
            continue
        lines.append(f"{prefix}non-zero weights {part['nonzero_weights']} of {part['features']}, "
                     f"||w|| {part['norm_w']:.6g}, bias {part['bias']!r}")
        if part["top_weights"]:
            lines.append(f"  top {len(part['top_weights'])} by |weight|: "
                         + ", ".join(f"{t['feature']}:{t['weight']:.6g}" for t in part["top_weights"]))
    click.echo("\n".join(lines))
