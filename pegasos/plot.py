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
from .trace import TRACE_BOUND_KEY, read_trace

X_AXES = {"seconds": ("seconds", "training time (s)"), "iterations": ("t", "iterations t"),
          "epochs": ("epoch", "epochs")}
#: model-header keys shown in legends, with their short names
LEGEND_KEYS = (("lambda", "lambda"), ("iterations", "T"), ("batch_size", "k"), ("averaging", "avg"), ("sampling", "sampling"),
               ("step_offset", "t0"), ("loss", "loss"), ("bias_mode", "bias"),
               ("projection", "projection"), ("seed", "seed"), ("train_file", "data"))
SUBOPTIMALITY_MARGIN = 1e-6     # f* estimated from the traces: their best objective, minus this fraction of it
#: header keys of the problem whose objective a trace records: a dual bound of one trace bounds f* of the
#: others only where they all agree on these
PROBLEM_KEYS = ("lambda", "train_file", "train_examples", "loss", "bias_mode", "epsilon", "task")


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PegasosError("plotting needs matplotlib: pip install 'pegasos[plot]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _short(value):
    if isinstance(value, str) and value.isdigit():
        return value
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
    calibrated = all(h.get("step_offset_rule") == "calibrated" for h in headers)
    for key, short in LEGEND_KEYS:
        if key == "step_offset" and calibrated:
            continue            # derived from the other settings, which show the difference
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
        f*, the optimal primal objective; default: the largest dual bound
        (a certified lower bound of f*) in the headers of traces of the same
        problem, which ``pegasos train --trace`` writes, so that each curve
        is an upper bound of the suboptimality; without one, an estimate:
        the lowest objective of all traces minus ``SUBOPTIMALITY_MARGIN`` of
        it (every curve's best point then lies at that fraction).
    title : str or None
    labels : list of str or None
        Legend labels (default :func:`legend_labels`).
    figsize : (float, float)
        Inches; with ``dpi`` the image is figsize * dpi pixels.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: ``axes[0]`` y = "(f - f*) / f*" (log; its title says which
        f* and how many points lie at or below f* and are not drawn; the
        figure's ``f_star`` is (f*, "given", "dual bound" or "estimate")), ``axes[1]`` y =
        "validation error" (or "training error"); the legend below them
        (``fig.legends[0]``).

    A trace with no objective (a model of the dual passes from w = 0 has
    no rows) is left out where others have some (it gives f* its dual bound
    where it has one); ``fig.skipped`` lists why the others are, one line each.

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
            empty.append((name, "the trace has no rows: its model ran no Pegasos iteration (the dual solver made "
                                "it); train with --solver pegasos, or -T N, to trace a Pegasos run"))
        else:
            empty.append((name, "the trace has no objective values"))
        objectives += values
    if not keep:
        raise ParameterError(": ".join(empty[0]))
    everything = list(zip(loaded, names))
    loaded, names = [loaded[i] for i in keep], [names[i] for i in keep]
    labels = [labels[i] for i in keep] if labels else labels
    lams = sorted({_lambda_of(h) for h, _ in loaded} - {None})
    if optimum is None and len(lams) > 1:
        raise ParameterError(f"the traces are of different lambdas ({', '.join(f'{v:g}' for v in lams)}), whose "
                             "optima differ: "
                             "(f - f*)/f* needs one f*; plot each lambda on its own (--optimum F draws them all "
                             "against F, right for one of them at most)")
    if optimum is not None and not (isinstance(optimum, (int, float)) and math.isfinite(optimum) and optimum > 0):
        raise ParameterError(f"--optimum must be a positive number, got {optimum!r}")
    optimum, f_star_kind, f_star_words, source = _f_star(optimum, everything, [h for h, _ in loaded], objectives)
    empty = [f"{name}: {why}" + ("; the suboptimality is measured against its dual bound" if name == source else "")
             for name, why in empty]
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
            given = "--optimum" if f_star_kind == "given" else f"f*'s {f_star_kind}"
            raise ParameterError(f"{label}: no objective of the trace is above {given} {optimum:.10g} (the "
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
        _readable_log_ticks(ax.xaxis, ax.get_xlim())
    _readable_log_ticks(left.yaxis, left.get_ylim())
    left.set_ylabel("(f - f*) / f*")
    right.set_ylabel(err_label)
    note = f"; {below} point{'s' if below > 1 else ''} at or below f* not drawn" if below else ""
    left.set_title(f"primal suboptimality{note}\n{f_star_words}", fontsize=9)
    right.set_title(err_label, fontsize=10)
    handles, texts = left.get_legend_handles_labels()
    rows = math.ceil(len(texts) / 2)
    fig.legend(handles, texts, loc="lower center", ncol=min(2, len(texts)), fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, min(0.4, 0.045 * rows + 0.02), 1, 1))
    fig.skipped = empty         # why each trace left out was (a line for a note)
    fig.f_star = (optimum, f_star_kind)
    return fig


def _f_star(optimum, traces, drawn, objectives):
    """(f*, its kind, the words saying so, the name of the trace whose bound it is or None) for the
    traces ``drawn`` (headers): the ``optimum`` given
    ("given"); else the largest dual bound (:data:`pegasos.trace.TRACE_BOUND_KEY`) of any of
    ``traces`` ((header, rows), name) of the same problem (:data:`PROBLEM_KEYS`) as every one drawn
    ("dual bound": a certified f* or less, so each curve is at least the true suboptimality);
    else the best of the ``objectives`` less ``SUBOPTIMALITY_MARGIN`` of it ("estimate": the curves
    reach 1e-6 at their best point whether or not it is near the optimum)."""
    if optimum is not None:
        return float(optimum), "given", f"f* = {optimum:.6g} (--optimum)", None
    problem = {tuple(str(h.get(k, "-")) for k in PROBLEM_KEYS) for h in drawn}
    bounds = []
    for (header, _), name in traces:
        try:
            bound = float((header or {})[TRACE_BOUND_KEY])
        except (KeyError, TypeError, ValueError):
            continue
        if (math.isfinite(bound) and bound > 0 and len(problem) == 1
                and tuple(str(header.get(k, "-")) for k in PROBLEM_KEYS) in problem):
            bounds.append((bound, name))
    if bounds:
        bound, name = max(bounds)
        return bound, "dual bound", f"f* >= {bound:.6g}: the dual bound of {name}'s model (certified)", name
    best = min(objectives)
    estimate = best - SUBOPTIMALITY_MARGIN * abs(best) if best else -1e-12
    return estimate, "estimate", f"f* ~ {estimate:.6g}: the best objective traced (not certified)", None


def _readable_log_ticks(axis, limits):
    """Labels of a log axis that do not overlap: never the minor ticks' (matplotlib labels them on
    spans of about a decade, 2x10^2 3x10^2 ... into each other); on less than two decades, ticks at 1,
    2 and 5 times the powers of ten within ``limits`` (at 1, 2, 3 and 5, else 1 to 9 times them where
    that gives fewer than two; on a narrower span, two inside it in the digits that tell them apart),
    labelled as plain numbers."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    low, high = sorted(limits)
    axis.set_minor_formatter(NullFormatter())
    if not (low > 0 and high / low < 100):
        return
    powers = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    digits = 3
    for steps in ((1, 2, 5), (1, 2, 3, 5), range(1, 10)):
        ticks = [k * 10.0 ** e for e in powers for k in steps if low <= k * 10.0 ** e <= high]
        if len(ticks) >= 2:
            break
    else:       # a narrower span: two ticks inside it, in as many digits as tell them apart
        ticks = [low * (high / low) ** q for q in (0.2, 0.8)]
        digits = max(3, 2 + math.ceil(-math.log10((ticks[1] - ticks[0]) / ticks[1])))
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.{digits}g}"))


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

    fmt = figure_format(path)
    atomic_write(os.fspath(path), lambda f: fig.savefig(f, format=fmt), binary=True)


def figure_format(path: str | os.PathLike[str]) -> str:
    """The format of a figure file by its suffix: "png", "svg" or "pdf".

    Raises
    ------
    ParameterError
        Another suffix (named with -o, the command line's option).
    """
    shown = os.fspath(path)
    fmt = os.path.splitext(shown)[1].lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise ParameterError(f"-o: the figure file {shown!r} must end in .png, .svg or .pdf")
    return fmt
