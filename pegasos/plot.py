"""Plots of convergence traces in the layout of the paper's Fig. 4.

:func:`plot_traces` draws, for one or more traces of :mod:`pegasos.trace`,
the primal suboptimality (f - f*)/f* on a log axis (left) and the
validation error, or the training error without validation (right), against
seconds, iterations or epochs.  matplotlib is imported only here, inside the
functions, with the Agg backend (no display needed): ``pip install
'pegasos[plot]'``.
"""

import math
import os

from .errors import ParameterError, PegasosError
from .outcome import dual_only
from .trace import read_trace

X_AXES = {"seconds": ("seconds", "training time (s)"), "iterations": ("t", "iterations t"),
          "epochs": ("epoch", "epochs")}
#: model-header keys shown in legends, with their short names
LEGEND_KEYS = (("lambda", "lambda"), ("batch_size", "k"), ("averaging", "avg"), ("sampling", "sampling"),
               ("step_offset", "t0"), ("loss", "loss"), ("bias_mode", "bias"),
               ("projection", "projection"), ("seed", "seed"), ("train_file", "data"))
SUBOPTIMALITY_MARGIN = 1e-6     # f* from the traces: their best objective, minus this fraction of it


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PegasosError("plotting needs matplotlib: pip install 'pegasos[plot]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _short(value):
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{x:.3g}"


def legend_labels(headers, names):
    """One legend label per trace: the header settings that differ between
    the traces (e.g. ``lambda=1e-4, k=1, avg=last``); the file names when
    none differs.  ``headers``: list of dicts; ``names``: fallback labels."""
    if len(headers) < 2:
        return list(names)
    shown = []
    for key, short in LEGEND_KEYS:
        values = [str(h.get(key, "-")) for h in headers]
        if len(set(values)) > 1:
            shown.append((key, short))
    if not shown:
        return list(names)
    labels = []
    for h in headers:
        parts = []
        for key, short in shown:
            value = h.get(key, "0" if key == "step_offset" else "-")
            parts.append(f"{short}={os.path.basename(str(value)) if key == 'train_file' else _short(value)}")
        labels.append(", ".join(parts))
    if len(set(labels)) < len(labels):           # settings alike in what is shown: add the file names
        labels = [f"{lab} ({n})" for lab, n in zip(labels, names)]
    return labels


def _lambda_of(header):
    """A trace header's lambda as a float, or None (absent or not a number)."""
    try:
        return float((header or {})["lambda"])
    except (KeyError, TypeError, ValueError):
        return None


def plot_traces(traces, *, x="seconds", optimum=None, title=None, labels=None, figsize=(10.0, 4.0), dpi=100):
    """Draw traces as the paper's Fig. 4: suboptimality (left) and error (right).

    Parameters
    ----------
    traces : list of (dict, list of dict) or of str
        ``(options, rows)`` pairs as :func:`pegasos.trace.read_trace` returns
        them, or trace file names.
    x : {"seconds", "iterations", "epochs"}
        The horizontal axis: training time without the checks (s), t, or t k / m.
    optimum : float > 0 or None
        f*, the optimal primal objective; default: the lowest objective of all
        traces minus ``SUBOPTIMALITY_MARGIN`` of it (so that the best point
        stays on the log axis).
    title : str or None
    labels : list of str or None
        Legend labels (default :func:`legend_labels`).
    figsize : (float, float)
        Inches; with ``dpi`` the image is figsize * dpi pixels.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: ``axes[0]`` y = "(f - f*) / f*" (log; its title says how
        many points lie at or below f* and are not drawn), ``axes[1]`` y =
        "validation error" (or "training error"); the legend below them
        (``fig.legends[0]``).

    A trace with no objective (a model of the dual passes from w = 0 has
    no rows) is left out where others have some; ``fig.skipped`` lists
    why, one line each.

    Raises
    ------
    ParameterError
        An unknown x, no trace, no trace with objectives, traces of
        different lambdas without an optimum (their optima differ), an
        optimum that is not a positive number, or one that no objective of a
        trace is above.
    PegasosError
        matplotlib is not installed.
    """
    if x not in X_AXES:
        raise ParameterError(f"--x must be one of {', '.join(X_AXES)}, got {x!r}")
    if not traces:
        raise ParameterError("give at least one trace")
    loaded, names = [], []
    for item in traces:
        if isinstance(item, (str, os.PathLike)):
            names.append(os.path.basename(os.fspath(item)))
            item = read_trace(item)
        else:
            names.append(f"trace {len(names) + 1}")
        loaded.append(item)
    column, xlabel = X_AXES[x]
    objectives, empty, keep = [], [], []
    for i, ((header, rows), name) in enumerate(zip(loaded, names)):
        values = [r.get("objective") for r in rows if r.get("objective") is not None]
        if values:
            keep.append(i)
        elif not rows and (dual_only(header or {}) or str((header or {}).get("iterations")) == "0"):
            empty.append(f"{name}: the trace has no rows: its model ran no Pegasos iteration (the dual "
                         "solver made it); train with --solver pegasos, or -T N, to trace a Pegasos run")
        else:
            empty.append(f"{name}: the trace has no objective values")
        objectives += values
    if not keep:
        raise ParameterError(empty[0])
    if empty:           # drawn without the traces that have nothing to draw, which the figure names
        loaded, names = [loaded[i] for i in keep], [names[i] for i in keep]
        labels = [labels[i] for i in keep] if labels else labels
    lams = sorted({_lambda_of(h) for h, _ in loaded} - {None})
    if optimum is None and len(lams) > 1:
        raise ParameterError(f"the traces are of different lambdas ({', '.join(f'{v:g}' for v in lams)}), whose "
                             "optima differ: "
                             "(f - f*)/f* needs one f*; plot each lambda on its own (--optimum F draws them all "
                             "against F, right for one of them at most)")
    if optimum is None:
        best = min(objectives)
        optimum = best - SUBOPTIMALITY_MARGIN * abs(best) if best else -1e-12
    elif not (isinstance(optimum, (int, float)) and math.isfinite(optimum) and optimum > 0):
        raise ParameterError(f"--optimum must be a positive number, got {optimum!r}")
    with_validation = any("validation_error" in r or "validation_mse" in r for _, rows in loaded for r in rows)
    regression = any("validation_mse" in r for _, rows in loaded for r in rows) or any(
        h.get("task") == "regression" for h, _ in loaded)
    if with_validation:
        err_key = "validation_mse" if regression else "validation_error"
        err_label = "validation mse" if regression else "validation error"
    else:
        err_key, err_label = "train_error", "training mse" if regression else "training error"
    labels = labels or legend_labels([h for h, _ in loaded], names)

    curves, below = [], 0
    for (header, rows), label in zip(loaded, labels):
        pts = [(r[column], (r["objective"] - optimum) / abs(optimum)) for r in rows
               if r.get(column) is not None and r.get("objective") is not None]
        below += sum(1 for a, b in pts if a > 0 and b <= 0)
        pts = [(a, b) for a, b in pts if a > 0 and b > 0]        # log axes
        if not pts:
            lowest = min(r["objective"] for r in rows if r.get("objective") is not None)
            raise ParameterError(f"{label}: no objective of the trace is above --optimum {optimum:.10g} (the "
                                 f"lowest is {lowest:.10g}), so there is no suboptimality to draw: f* must be "
                                 "below the objectives")
        err = [(r[column], r[err_key]) for r in rows if r.get(column) is not None and r.get(err_key) is not None
               and r[column] > 0]
        curves.append((label, pts, err))

    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=figsize, dpi=dpi)
    for label, pts, err in curves:
        line, = left.plot([a for a, _ in pts], [b for _, b in pts], label=label, linewidth=1.4, marker=".",
                          markersize=4)
        right.plot([a for a, _ in err], [b for _, b in err], label=label, linewidth=1.4, color=line.get_color(),
                   marker=".", markersize=4)
    left.set_yscale("log")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(True, which="major", alpha=0.3)
    left.set_ylabel("(f - f*) / f*")
    right.set_ylabel(err_label)
    note = f"; {below} point{'s' if below > 1 else ''} at or below f* not drawn" if below else ""
    left.set_title(f"primal suboptimality (f* = {optimum:.6g}{note})", fontsize=10)
    right.set_title(err_label, fontsize=10)
    handles, texts = left.get_legend_handles_labels()
    rows = math.ceil(len(texts) / 2)
    fig.legend(handles, texts, loc="lower center", ncol=min(2, len(texts)), fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, min(0.4, 0.045 * rows + 0.02), 1, 1))
    fig.skipped = empty         # why each trace left out was (a line for a note)
    return fig


def save_figure(fig, path):
    """Write ``fig`` to ``path``; the format from its suffix (.png, .svg or .pdf).

    Raises
    ------
    ParameterError
        Another suffix.
    PegasosError
        The file cannot be written (nothing is left behind).
    """
    from .model import atomic_write

    shown = os.fspath(path)
    fmt = os.path.splitext(shown)[1].lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise ParameterError(f"-o: the figure file {shown!r} must end in .png, .svg or .pdf")
    atomic_write(shown, lambda f: fig.savefig(f, format=fmt), binary=True)
