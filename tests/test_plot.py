"""pegasos plot / pegasos.plot.plot_traces: the paper's Fig. 4 layout from trace files."""

import builtins
import json
import math

import numpy as np
import pytest

from pegasos.errors import ParameterError, PegasosError
from pegasos.trace import write_trace

from conftest import ok, one_error, usage_error, run_pegasos

pytest.importorskip("matplotlib")


def fake_rows(scale, validation=True):
    rows = []
    for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        row = {"t": t, "epoch": t / 100, "seconds": t * 1e-4, "objective": 0.35 + scale / t, "loss": 0.3,
               "norm_w": 1.0, "train_error": 0.2 + 0.1 / t}
        if validation:
            row.update(validation_accuracy=0.8 - 0.1 / t, validation_error=0.2 + 0.1 / t)
        rows.append(row)
    return rows


@pytest.fixture
def traces(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.jsonl"
    write_trace(a, {"lambda": "0.0001", "batch_size": "1", "averaging": "last", "seed": "1"}, fake_rows(1.0))
    write_trace(b, {"lambda": "0.0001", "batch_size": "64", "averaging": "suffix", "seed": "1"}, fake_rows(3.0))
    return a, b


def test_plot_traces_draws_fig4_axes_and_legend(traces):
    from pegasos.plot import plot_traces

    fig = plot_traces(list(traces), x="iterations", optimum=0.35, title="a9a")
    left, right = fig.axes[:2]
    assert left.get_ylabel() == "(f - f*) / f*" and left.get_yscale() == "log"
    assert left.get_xlabel() == "iterations t" and right.get_ylabel() == "validation error"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["k=1, avg=last", "k=64, avg=suffix"]
    # the plotted suboptimality is (f - f*)/f*
    xs, ys = left.get_lines()[0].get_data()
    assert list(xs) == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    assert np.allclose(ys, (1.0 / np.array(xs)) / 0.35)
    assert fig._suptitle.get_text() == "a9a"


def test_without_an_optimum_the_best_point_stays_plottable_and_without_validation_train_error(tmp_path):
    from pegasos.plot import plot_traces

    path = tmp_path / "t.csv"
    write_trace(path, {"lambda": "0.0001"}, fake_rows(1.0, validation=False))
    fig = plot_traces([path], x="epochs")
    left, right = fig.axes[:2]
    ys = left.get_lines()[0].get_ydata()
    assert len(ys) == 10 and np.all(ys > 0) and math.isfinite(ys.min())
    assert right.get_ylabel() == "training error" and left.get_xlabel() == "epochs"


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_plot_command_writes_the_requested_format(tmp_path, traces, suffix):
    out = tmp_path / f"fig.{suffix}"
    ok(run_pegasos("plot", *traces, "-o", out, "--optimum", "0.35", "--x", "seconds", "--title", "test"))
    data = out.read_bytes()
    assert len(data) > 1000
    magic = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}[suffix]
    assert data.startswith(magic)
    if suffix == "png":
        import matplotlib.image

        img = matplotlib.image.imread(str(out))
        assert img.shape[:2] == (400, 1000)                 # 10 x 4 inches at 100 dpi
        assert img[..., :3].std() > 0.01                    # not blank


def test_plot_errors_are_one_line(tmp_path, traces):
    usage_error(run_pegasos("plot", traces[0], "-o", tmp_path / "f.gif"), ".png, .svg or .pdf")   # a bad -o: exit 2
    bad = tmp_path / "bad.csv"
    bad.write_text("1 1:0.5\n")
    one_error(run_pegasos("plot", bad, "-o", tmp_path / "f.png"), f"{bad}, line 1", "not a pegasos trace")
    usage_error(run_pegasos("plot", traces[0], "-o", tmp_path / "f.png", "--optimum", "-1"), "--optimum")
    assert not (tmp_path / "f.png").exists()


def test_without_matplotlib_a_one_line_hint(monkeypatch, traces):
    import sys

    from pegasos import plot

    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    for mod in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(PegasosError, match=r"pip install 'pegasos\[plot\]'"):
        plot.plot_traces(list(traces))
    with pytest.raises(ParameterError, match="--x"):
        plot.plot_traces(list(traces), x="hours")


def test_an_optimum_above_every_objective_is_refused_not_drawn_empty(tmp_path, traces):
    """With --optimum above all objectives of a trace the left panel had no point and the command exited 0."""
    from pegasos.plot import plot_traces

    with pytest.raises(ParameterError, match="no objective of the trace is above --optimum 5 "):
        plot_traces(list(traces), optimum=5.0)
    out = tmp_path / "f.png"
    one_error(run_pegasos("plot", traces[0], "-o", out, "--optimum", "5"), "--optimum 5 ", "lowest is 0.351")
    assert not out.exists()
    plot_traces(list(traces), optimum=0.3505)         # below the lowest objective: drawn


def test_points_at_or_below_the_optimum_are_counted_in_the_title_and_one_point_shows(traces):
    """Points under --optimum were dropped silently, and a trace left with one point drew no line."""
    from pegasos.plot import plot_traces

    fig = plot_traces([traces[0]], optimum=0.36)        # objectives 0.35 + 1/t: t >= 100 lie below
    left = fig.axes[0]
    assert "4 points at or below f* not drawn" in left.get_title()
    assert list(left.get_lines()[0].get_xdata()) == [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3]
    assert left.get_lines()[0].get_marker() == "."
    fig = plot_traces([traces[0]], optimum=1.0)          # only t = 1 (1.35) is above
    assert len(fig.axes[0].get_lines()[0].get_xdata()) == 1 and "9 points" in fig.axes[0].get_title()
    assert "not drawn" not in plot_traces([traces[0]], optimum=0.35).axes[0].get_title()


def test_traces_with_nothing_to_draw_are_left_out_and_lambdas_must_agree(tmp_path):
    """A fresh user's report: plotting a default run's trace (no rows: the dual passes from w = 0) beside a
    Pegasos one failed outright, and traces of different lambdas were drawn against one f*.  The empty
    trace is now left out with a note; different lambdas need --optimum (each has its own f*)."""
    pytest.importorskip("matplotlib")
    from conftest import ok, one_error, run_pegasos
    from small_data import binary, write_svm

    X, y = binary(m=300, n=8, seed=1, noise=0.2)
    data = write_svm(tmp_path / "d.svm", X, y)
    for name, args in (("zero", ()), ("peg", ("--finish", "none")), ("other", ("--finish", "none", "-l", "1e-2"))):
        ok(run_pegasos("train", "-q", "-l", "1e-3", *args, "--trace", tmp_path / f"{name}.csv", data,
                       tmp_path / f"{name}.model"))
    r = run_pegasos("plot", tmp_path / "zero.csv", tmp_path / "peg.csv", "-o", tmp_path / "a.png")
    assert r.returncode == 0 and (tmp_path / "a.png").exists()
    assert "pegasos: note: left out zero.csv: the trace has no rows" in r.stderr
    one_error(run_pegasos("plot", tmp_path / "zero.csv", "-o", tmp_path / "b.png"), "zero.csv", "no rows")
    one_error(run_pegasos("plot", tmp_path / "peg.csv", tmp_path / "other.csv", "-o", tmp_path / "c.png"),
              "different lambdas (0.001, 0.01)", "--optimum")
    assert not (tmp_path / "b.png").exists() and not (tmp_path / "c.png").exists()
    r = run_pegasos("plot", tmp_path / "peg.csv", tmp_path / "other.csv", "--optimum", "0.01", "-o", tmp_path / "c.png")
    assert r.returncode == 0


def test_f_star_is_a_certified_dual_bound_where_a_trace_holds_one(tmp_path):
    """Without --optimum f* was the traces' own best objective less a millionth, so every curve plunged to
    1e-6 at its end (a9a: 3e-3 against the certified f*).  train --trace writes the model's dual bound into
    the trace's header; plot measures against the largest of them and says so; a trace of another problem
    (another lambda's bound) is not used."""
    from small_data import binary, write_svm

    from pegasos.plot import plot_traces
    from pegasos.trace import TRACE_BOUND_KEY, read_trace

    X, y = binary(m=300, n=8, seed=1, noise=0.2)
    data = write_svm(tmp_path / "d.svm", X, y)
    for name, args in (("dual", ()), ("peg", ("--solver", "pegasos", "--epochs", "2"))):
        ok(run_pegasos("train", "-q", "-l", "1e-3", *args, "--trace", tmp_path / f"{name}.csv", data,
                       tmp_path / f"{name}.model"))
    bounds = {n: float(read_trace(tmp_path / f"{n}.csv")[0][TRACE_BOUND_KEY]) for n in ("dual", "peg")}
    gap = json.loads(ok(run_pegasos("objective", "--gap", "--json", data, tmp_path / "dual.model")))
    assert bounds["dual"] == pytest.approx(gap["dual"], rel=1e-6) and bounds["dual"] <= gap["primal"]

    fig = plot_traces([tmp_path / "peg.csv", tmp_path / "dual.csv"])
    assert fig.f_star == (max(bounds.values()), "dual bound")
    assert "dual bound" in fig.axes[0].get_title() and "certified" in fig.axes[0].get_title()
    ys = fig.axes[0].get_lines()[0].get_ydata()
    rows = read_trace(tmp_path / "peg.csv")[1]
    assert ys[-1] == pytest.approx((rows[-1]["objective"] - fig.f_star[0]) / fig.f_star[0])
    assert ys.min() > 10 * 1e-6             # two epochs: nowhere near the optimum's millionth

    fig = plot_traces([tmp_path / "peg.csv"], optimum=0.2)
    assert fig.f_star == (0.2, "given") and "--optimum" in fig.axes[0].get_title()
    header, rows = read_trace(tmp_path / "peg.csv")
    write_trace(tmp_path / "bare.csv", {k: v for k, v in header.items() if k != TRACE_BOUND_KEY}, rows)
    fig = plot_traces([tmp_path / "bare.csv"])
    assert fig.f_star[1] == "estimate" and "not certified" in fig.axes[0].get_title()
    write_trace(tmp_path / "other.csv", dict(header, **{"lambda": "0.01", TRACE_BOUND_KEY: "0.001"}), [])
    assert plot_traces([tmp_path / "bare.csv", tmp_path / "other.csv"], optimum=None).f_star[1] == "estimate"


def test_legends_name_the_settings_that_differ_and_not_derived_ones(tmp_path):
    """Runs of different lengths were labelled by their file names (T was not among the settings shown),
    and a calibrated t0, derived from k, was shown as if set."""
    from pegasos.plot import legend_labels

    base = {"lambda": "0.0001", "batch_size": "1", "step_offset_rule": "calibrated"}
    headers = [dict(base, iterations="810", step_offset="1000.5"), dict(base, iterations="1080", step_offset="12.5")]
    assert legend_labels(headers, ["a", "b"]) == ["T=810", "T=1080"]
    headers[1]["batch_size"] = "10"
    assert legend_labels(headers, ["a", "b"]) == ["T=810, k=1", "T=1080, k=10"]


@pytest.mark.parametrize("seconds", [(300.0, 600.0, 1200.0, 2400.0), (0.003, 0.005, 0.009), (0.21, 0.3, 0.6, 0.9),
                                     (0.11, 0.4, 1.5, 8.0), (1e-4, 1e-2, 1.0, 100.0), (2.001, 2.002, 2.003)])
def test_tick_labels_do_not_overlap(tmp_path, seconds):
    """On about a decade matplotlib labelled the minor ticks of a log axis (2x10^2, 3x10^2, ...), whose
    labels ran into each other; every axis keeps at least two labels."""
    from pegasos.plot import plot_traces

    rows = [{"t": i + 1, "epoch": float(i + 1), "seconds": s, "objective": 0.4 - 0.001 * i, "train_error": 0.1}
            for i, s in enumerate(seconds)]
    write_trace(tmp_path / "t.csv", {"lambda": "0.0001"}, rows)
    fig = plot_traces([tmp_path / "t.csv"], optimum=0.3)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes[:2]:
        for axis in (ax.xaxis, ax.yaxis):
            boxes = sorted((t.get_window_extent(renderer) for t in axis.get_ticklabels(which="both")
                            if t.get_visible() and t.get_text()), key=lambda b: (b.x0, b.y0))
            assert len(boxes) >= 2
            for a, b in zip(boxes, boxes[1:]):
                assert not a.overlaps(b), [t.get_text() for t in axis.get_ticklabels(which="both")]
