"""Convergence traces, validation and early stopping (pegasos.trace, fit(trace=, validation=), train --trace)."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos
from pegasos.errors import DataError, ParameterError
from pegasos.trace import Trace, check_points, read_trace, write_trace

from conftest import data_file, ok, one_error, usage_error, run_pegasos


def make_data(m=300, n=20, density=0.3, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=density, random_state=rng, format="csr")
    w = rng.normal(size=n)
    y = np.where(X @ w + noise * rng.normal(size=m) > 0, 1.0, -1.0)
    return X, y


def write_svm(path, X, y):
    X = sp.csr_matrix(X)
    lines = []
    for i in range(X.shape[0]):
        row = X.getrow(i)
        feats = " ".join(f"{j + 1}:{v!r}" for j, v in zip(row.indices.tolist(), row.data.tolist()))
        lines.append(f"{y[i]:g} {feats}")
    path.write_text("\n".join(lines) + "\n")
    return path


def dense_objective(w, b, X, y, lam, bias_feature=False):
    """Eq. (1) with the hinge loss, in dense NumPy."""
    f = X.toarray() @ w + b
    reg = 0.5 * lam * (w @ w + (b * b if bias_feature else 0.0))
    return reg + np.maximum(0.0, 1.0 - y * f).mean(), np.mean((f > 0) != (y > 0))


# ------------------------------------------------------------- check points --

def test_check_points_are_log_spaced_plus_every_epoch_end_and_T():
    pts = check_points(1000, 300, 1, "permutation", 10)
    assert pts[:10] == [1, 2, 3, 4, 5, 6, 8, 10, 13, 16]
    assert {100, 126, 300, 600, 900, 1000} <= set(pts)
    assert pts == sorted(set(pts)) and pts[-1] == 1000
    # uniform sampling: epoch e ends at ceil(e m / k); per epoch ceil(m/k) otherwise
    assert {43, 86, 129} <= set(check_points(130, 300, 7, "uniform", 0))
    assert check_points(130, 300, 7, "permutation", 0) == [43, 86, 129, 130]
    assert check_points(5, 300, 1, "sequential", 0) == [5]
    # many epochs: at most MAX_EPOCH_POINTS epoch ends, evenly spread
    assert len(check_points(10**7, 10, 1, "permutation", 0)) <= 1001


# ------------------------------------------------- the trace leaves the model --

CASES = [
    dict(batch_size=1, sampling="uniform", average=False),
    dict(batch_size=1, sampling="permutation", average=True),
    dict(batch_size=1, sampling="sequential", average_from=0.5),
    dict(batch_size=8, sampling="uniform", average_from=0.5),
    dict(batch_size=8, sampling="permutation", average=False, bias="feature"),
    dict(batch_size=8, sampling="sequential", average=True, bias="unregularized"),
    dict(batch_size=64, sampling="permutation", average_from=0.5, n_threads=2, wide=True),
    dict(batch_size=64, sampling="uniform", average=False, n_threads=2, wide=True, projection=True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_trace_and_validation_do_not_change_the_model(case):
    case = dict(case)
    wide = case.pop("wide", False)
    X, y = make_data(m=400, n=200 if wide else 20, seed=1)
    Xv, yv = make_data(m=100, n=200 if wide else 20, seed=2)
    opts = pegasos.TrainOptions(lam=1e-3, epochs=3, step_offset=1e4, **case)
    plain = pegasos.fit((X, y), opts)
    tr = Trace(budget=0)
    traced = pegasos.fit((X, y), opts, trace=tr, validation=(Xv, yv))
    assert traced.to_text() == plain.to_text()
    assert len(tr.rows) > 10 and tr.rows[-1]["t"] == int(plain.info["iterations"])
    sampled = pegasos.fit((X, y), opts, trace=Trace(sample=50, budget=0))
    assert sampled.to_text() == plain.to_text()


def test_trace_leaves_the_automatic_defaults_and_keeps_the_returned_run():
    X, y = make_data(m=500, seed=3)
    plain = pegasos.fit((X, y), lam=1e-3, finish="none")
    tr = Trace(budget=0)
    traced = pegasos.fit((X, y), lam=1e-3, trace=tr, finish="none")
    assert traced.to_text() == plain.to_text()
    assert len(tr.runs) == 1          # the chosen length, run once more under the checks (the lengths before are not)
    assert tr.rows[-1]["t"] == int(plain.info["iterations"]) > 0
    assert tr.header["iterations"] == plain.info["iterations"]
    # the default: the dual passes from w = 0 certify the model, no Pegasos iteration to trace
    plain = pegasos.fit((X, y), lam=1e-3)
    tr = Trace(budget=0)
    assert pegasos.fit((X, y), lam=1e-3, trace=tr).to_text() == plain.to_text()
    assert "iterations" not in plain.info and tr.runs == [] and tr.rows == []


# --------------------------------------------------------- what is recorded --

@pytest.mark.parametrize("settings", [dict(average=False), dict(average=True), dict(average=False, bias="feature")])
def test_each_point_is_the_model_a_run_of_t_iterations_outputs(settings):
    """A run of exactly t iterations outputs the model the trace evaluated at t
    (last iterate, or the mean of all iterates); its objective is recomputed densely."""
    X, y = make_data(m=200, seed=4)
    Xv, yv = make_data(m=80, seed=5)
    opts = pegasos.TrainOptions(lam=1e-2, iterations=700, sampling="uniform", step_offset=0.0, **settings)
    tr = Trace(budget=0)
    pegasos.fit((X, y), opts, trace=tr, validation=(Xv, yv))
    by_t = {r["t"]: r for r in tr.rows}
    for t in (1, 5, 13, 200, 400, 631, 700):
        r = by_t[t]
        model = pegasos.fit((X, y), opts, iterations=t)
        f, err = dense_objective(model.w, model.bias, X, y, 1e-2, settings.get("bias") == "feature")
        assert r["objective"] == pytest.approx(f, rel=1e-12, abs=1e-15)
        assert r["train_error"] == pytest.approx(err)
        assert r["norm_w"] == pytest.approx(np.linalg.norm(model.w), rel=1e-12)
        assert r["epoch"] == pytest.approx(t / 200)
        fv, errv = dense_objective(model.w, model.bias, Xv, yv, 1e-2, settings.get("bias") == "feature")
        assert r["validation_objective"] == pytest.approx(fv, rel=1e-12)
        assert r["validation_error"] == pytest.approx(errv)
        assert r["validation_accuracy"] == pytest.approx(1 - errv)
        assert r["loss"] == pytest.approx(f - 0.5 * 1e-2 * (model.w @ model.w + (
            model.bias ** 2 if settings.get("bias") == "feature" else 0.0)), rel=1e-9, abs=1e-15)
    seconds = [r["seconds"] for r in tr.rows]
    assert all(b >= a for a, b in zip(seconds, seconds[1:])) and seconds[0] >= 0


def test_regression_trace_records_mean_squared_errors():
    rng = np.random.default_rng(6)
    X = sp.random(300, 10, density=0.5, random_state=rng, format="csr")
    y = X @ rng.normal(size=10) + 3.0
    Xv = sp.random(50, 12, density=0.5, random_state=rng, format="csr")     # extra columns: ignored
    yv = Xv[:, :10] @ rng.normal(size=10) + 3.0
    tr = Trace(budget=0)
    model = pegasos.fit((X, y), loss="eps-insensitive", lam=1e-3, epochs=5, trace=tr, validation=(Xv, yv))
    assert model.bias_mode == "feature" and model.bias != 0.0      # regression's default intercept
    last = tr.rows[-1]
    f = X @ model.w + model.bias
    assert last["train_error"] == pytest.approx(np.mean((f - y) ** 2))
    fv = Xv[:, :10] @ model.w + model.bias
    assert last["validation_mse"] == pytest.approx(np.mean((fv - yv) ** 2))
    assert last["validation_loss"] == pytest.approx(np.maximum(0, np.abs(fv - yv) - 0.1).mean())
    assert "validation_accuracy" not in last


def test_trace_sample_is_a_fixed_seeded_subset():
    X, y = make_data(m=2000, seed=7)
    opts = pegasos.TrainOptions(lam=1e-3, epochs=2, step_offset=1e4)
    full, a, b = Trace(budget=0), Trace(sample=300, budget=0), Trace(sample=300, budget=0)
    pegasos.fit((X, y), opts, trace=full)
    pegasos.fit((X, y), opts, trace=a)
    pegasos.fit((X, y), opts, trace=b)
    assert [r["objective"] for r in a.rows] == [r["objective"] for r in b.rows]
    assert [r["norm_w"] for r in a.rows] == [r["norm_w"] for r in full.rows]
    assert [r["objective"] for r in a.rows] != [r["objective"] for r in full.rows]
    # the sample's objective estimates the full one
    assert a.rows[-1]["objective"] == pytest.approx(full.rows[-1]["objective"], rel=0.15)


# ---------------------------------------------------------- early stopping --

@pytest.mark.parametrize("settings", [dict(average=False, sampling="uniform"),
                                      dict(average=True, sampling="permutation"),
                                      dict(average=False, sampling="permutation", batch_size=4)])
def test_early_stopping_returns_the_best_model_seen(settings):
    X, y = make_data(m=300, seed=8, noise=1.0)
    Xv, yv = make_data(m=300, seed=9, noise=1.0)
    opts = pegasos.TrainOptions(lam=1e-3, epochs=50, step_offset=2e3, early_stop=3, **settings)
    tr = Trace(budget=0)
    model = pegasos.fit((X, y), opts, trace=tr, validation=(Xv, yv))
    info = model.info
    assert info["stopping"] == "early-stop" and info["early_stop_metric"] == "accuracy"
    best = int(info["best_iteration"])
    first_epoch = math.ceil(300 / opts.batch_size)
    counted = [r for r in tr.rows if r["t"] >= first_epoch]
    top = max(r["validation_accuracy"] for r in counted)
    assert best == next(r["t"] for r in counted if r["validation_accuracy"] == top)
    assert float(info["best_validation"]) == top
    assert tr.rows[-1]["t"] < int(info["iterations"])               # it did stop
    after = [r for r in counted if r["t"] > best]
    assert len(after) == 3 and all(r["validation_accuracy"] <= top for r in after)
    # the same weights as a run of exactly best_iteration iterations
    exact = pegasos.fit((X, y), opts.replace(early_stop=None, epochs=None, iterations=best))
    assert np.array_equal(model.w, exact.w) and model.bias == exact.bias
    # the header reads back
    again = pegasos.load_model(_saved(model))
    assert again.info["best_iteration"] == str(best)


def test_patience_counts_from_the_start_of_the_suffix_average():
    """With the default output (the mean of the last half), checks before the average starts see the
    noisy last iterate: they may become the best model but do not use up the patience, so the run
    goes on into the average (on a9a, patience 5 stopped in the second epoch at 0.8485 test accuracy
    against 0.8501 for the whole run; counted from the average's start: 0.8504)."""
    X, y = make_data(m=300, seed=8, noise=1.0)
    Xv, yv = make_data(m=300, seed=9, noise=1.0)
    opts = pegasos.TrainOptions(lam=1e-3, epochs=50, step_offset=2e3, early_stop=3)      # average_from 0.5
    tr = Trace(budget=0)
    model = pegasos.fit((X, y), opts, trace=tr, validation=(Xv, yv))
    info = model.info
    T = int(info["iterations"])
    avg_start = math.ceil(0.5 * T)
    assert info["averaged_iterates"] == f"{avg_start}..{T}"
    assert tr.rows[-1]["t"] >= avg_start                 # not stopped before the average starts
    best = int(info["best_iteration"])
    counted = [r for r in tr.rows if r["t"] >= 300]
    top = max(r["validation_accuracy"] for r in counted)
    assert best == next(r["t"] for r in counted if r["validation_accuracy"] == top)
    used = [r for r in counted if r["t"] > best and r["t"] >= avg_start]
    if info["stopping"] == "early-stop":
        assert len(used) == 3 and tr.rows[-1]["t"] < T
    else:
        assert len(used) < 3 and tr.rows[-1]["t"] == T
    assert all(r["validation_accuracy"] <= top for r in used)


def _saved(model, _n=[0]):
    import tempfile, os

    _n[0] += 1
    path = os.path.join(tempfile.mkdtemp(), f"m{_n[0]}.model")
    model.save(path)
    return path


def test_early_stopping_by_a_lower_is_better_metric_and_without_stopping():
    X, y = make_data(m=300, seed=10)
    Xv, yv = make_data(m=100, seed=11)
    tr = Trace(budget=0)
    model = pegasos.fit((X, y), lam=1e-2, epochs=3, step_offset=1e3, early_stop=1000, early_stop_metric="objective",
                        trace=tr, validation=(Xv, yv))
    assert model.info["stopping"] == "iterations"          # patience never ran out
    counted = [r for r in tr.rows if r["t"] >= 300]
    best = min(counted, key=lambda r: r["validation_objective"])
    assert model.info["best_iteration"] == str(best["t"])


# ------------------------------------------------------------------ errors --

def test_checks_are_refused_where_they_do_not_apply(tmp_path):
    X, y = make_data()
    y3 = np.where(X[:, 0].toarray().ravel() > 0.5, 3.0, y)
    with pytest.raises(ParameterError, match="not for multiclass"):
        pegasos.fit((X, y3), trace=Trace(), epochs=1)
    with pytest.raises(ParameterError, match="not for kernels"):
        pegasos.fit((X, y), kernel="rbf", epochs=1, trace=Trace())
    with pytest.raises(ParameterError, match="not for ranking"):
        pegasos.fit((X, y, np.zeros(300, dtype=np.int64)), loss="rank", epochs=1, trace=Trace())
    with pytest.raises(ParameterError, match="early_stop= needs validation"):
        pegasos.fit((X, y), epochs=1, early_stop=3)
    with pytest.raises(ParameterError, match="give iterations= or epochs="):
        pegasos.fit((X, y), early_stop=3, validation=(X, y))
    with pytest.raises(ParameterError, match="mse is not a metric of classification"):
        pegasos.fit((X, y), epochs=1, early_stop=3, early_stop_metric="mse", validation=(X, y))
    with pytest.raises(ParameterError, match="validation example 1: label 7"):
        pegasos.fit((X, y), epochs=1, validation=(X[:3], np.array([7.0, 1.0, -1.0])))
    with pytest.raises(ParameterError, match="trace_points: "):
        pegasos.fit((X, y), epochs=1, trace_points=-1)
    with pytest.raises(ParameterError, match="sample"):
        Trace(sample=0)


# ------------------------------------------------------------------- files --

ROWS = [{"t": 1, "epoch": 0.01, "seconds": 0.0, "objective": 1.0, "loss": 1.0, "norm_w": 0.0, "train_error": 0.5,
         "validation_accuracy": None},
        {"t": 10, "epoch": 0.1, "seconds": 1e-3, "objective": 0.5, "loss": 0.25, "norm_w": 2.5, "train_error": 0.125,
         "validation_accuracy": 0.75}]


@pytest.mark.parametrize("name", ["t.csv", "t.jsonl", "t.json"])
def test_trace_files_round_trip(tmp_path, name):
    path = tmp_path / name
    write_trace(path, {"lambda": "0.0001", "batch_size": "1"}, ROWS)
    first = path.read_text().splitlines()[0]
    if name.endswith(".csv"):
        assert first.startswith("# pegasos-trace 1 {")
        assert path.read_text().splitlines()[1] == ",".join(ROWS[0])
    else:
        assert json.loads(first) == {"pegasos_trace": 1, "options": {"lambda": "0.0001", "batch_size": "1"}}
    options, rows = read_trace(path)
    assert options == {"lambda": "0.0001", "batch_size": "1"}
    assert rows == ROWS


@pytest.mark.parametrize("text, line", [
    ("hello\n", 1),
    ("# pegasos-trace 2 {}\nt\n", 1),
    ("# pegasos-trace 1 {bad\nt\n", 1),
    ("# pegasos-trace 1 {}\nx,y\n", 2),
    ("# pegasos-trace 1 {}\nt,objective\n1,0.5\n2\n", 4),
    ("# pegasos-trace 1 {}\nt,objective\n1,0.5\n2,abc\n", 4),
    ('{"pegasos_trace": 1, "options": {}}\n{"t": 1}\n{"t": "x"}\n', 3),
    ('{"pegasos_trace": 1, "options": {}}\n{"t": 1, "objective": "a"}\n', 2),
    ('{"pegasos_trace": 1}\n[1,\n', 2),
    ('{"other": 1}\n', 1),
])
def test_a_bad_trace_file_is_one_error_naming_file_and_line(tmp_path, text, line):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(DataError) as e:
        read_trace(path)
    assert str(e.value).startswith(f"{path}, line {line}: ")
    assert "\n" not in str(e.value)


def test_a_trace_file_suffix_must_be_known(tmp_path):
    with pytest.raises(ParameterError, match=r"\.csv, \.jsonl or \.json"):
        write_trace(tmp_path / "t.txt", {}, ROWS)


# -------------------------------------------------------------- command line --

def test_train_trace_validation_and_early_stop_from_the_command_line(tmp_path):
    X, y = make_data(m=300, seed=12, noise=1.0)
    Xv, yv = make_data(m=200, n=25, seed=13, noise=1.0)          # 25 columns: the extra 5 are ignored
    data = write_svm(tmp_path / "d.svm", X, y)
    val = write_svm(tmp_path / "v.svm", Xv, yv)
    args = ("-q", "-l", "1e-3", "--epochs", "20", "--t0", "2000")
    ok(run_pegasos("train", *args, data, tmp_path / "plain.model"))
    ok(run_pegasos("train", *args, "--trace", tmp_path / "t.csv", "--validation", val, data, tmp_path / "t.model"))
    assert (tmp_path / "t.model").read_bytes() == (tmp_path / "plain.model").read_bytes()
    options, rows = read_trace(tmp_path / "t.csv")
    assert options["iterations"] == "6000" and options["lambda"] == "0.001"
    assert rows[-1]["t"] == 6000 and "validation_accuracy" in rows[-1]
    r = run_pegasos("train", *args[1:], "--trace", tmp_path / "e.jsonl", "--validation", val, "--early-stop",
                    data, tmp_path / "e.model")
    out = ok(r)
    header = (tmp_path / "e.model").read_text()
    assert "early_stop 5\n" in header and "best_iteration " in header
    if "stopping early-stop" in header:
        assert "stopped early: best validation accuracy" in out
    _, rows = read_trace(tmp_path / "e.jsonl")
    assert rows
    r = run_pegasos("train", *args, "--early-stop", "2", "--early-stop-metric", "loss", "--validation", val, data,
                    tmp_path / "e2.model")
    ok(r)
    assert "early_stop 2\n" in (tmp_path / "e2.model").read_text()


def test_command_line_errors_are_one_line(tmp_path):
    X, y = make_data(m=50, seed=14)
    data = write_svm(tmp_path / "d.svm", X, y)
    bad = tmp_path / "v.svm"
    bad.write_text("1 1:0.5\n# comment\n3 2:0.25\n")
    one_error(run_pegasos("train", "--epochs", "1", "--validation", bad, data, tmp_path / "m"),
              f"{bad}, line 3", "label 3 is not one of the model's labels")
    usage_error(run_pegasos("train", "--trace", tmp_path / "t.txt", data, tmp_path / "m"), ".csv, .jsonl or .json")
    usage_error(run_pegasos("train", "--early-stop", "3", "--validation", data, data, tmp_path / "m"),
              "--early-stop", "-T/--iterations or --epochs")
    usage_error(run_pegasos("train", "--epochs", "1", "--early-stop", "3", data, tmp_path / "m"),
                "--early-stop needs validation examples (--validation)")
    usage_error(run_pegasos("train", "--stream", "--trace", tmp_path / "t.csv", data, tmp_path / "m"),
                "--trace, --validation and --early-stop are for linear binary classification and regression trained in memory")
    usage_error(run_pegasos("train", "--trace-sample", "5", data, tmp_path / "m"), "--trace-sample needs --trace")
    assert not (tmp_path / "m").exists() and not (tmp_path / "t.csv").exists()



@pytest.mark.parametrize("args", [["-T", "5", "--early-stop", "3"], ["--stream", "--trace", "t.csv"],
                                  ["--init", "absent.model", "--trace", "t.csv"],
                                  ["--kernel", "rbf", "--trace", "t.csv"], ["--loss", "rank", "--trace", "t.csv"],
                                  ["--multiclass", "ovr", "--validation", "absent.svm"]])
def test_checks_the_settings_refuse_are_refused_before_data_is_read(tmp_path, args):
    """Checks with a trainer the settings choose, and early stopping without --validation, are a wrong
    command line: exit 2 before DATA (absent here) is read, as the other settings refused (they were exit 1
    once DATA was read, pegasos.api.check_checks, now called by train before reading)."""
    r = run_pegasos("train", *args, "absent.svm", "m", cwd=tmp_path)
    usage_error(r, "needs validation examples" if "--early-stop" in args else "trained in memory")
    assert sorted(p.name for p in tmp_path.iterdir()) == []

def test_trace_on_a9a_leaves_the_default_model(tmp_path):
    a9a, test = data_file("a9a/a9a"), data_file("a9a/a9a.t")
    ok(run_pegasos("train", "-q", "-T", "100000", a9a, tmp_path / "plain"))
    ok(run_pegasos("train", "-q", "-T", "100000", "--trace", tmp_path / "t.csv", "--validation", test, a9a,
                   tmp_path / "traced"))
    assert (tmp_path / "traced").read_bytes() == (tmp_path / "plain").read_bytes()
    _, rows = read_trace(tmp_path / "t.csv")
    last = rows[-1]
    assert last["t"] == 100000 and last["validation_accuracy"] > 0.84
    # 0.4% above f* = 0.3517618027 (README), evaluated on all of a9a
    assert 0.35176 < last["objective"] < 0.3517618027 * 1.01


def test_trace_budget_thins_the_points_and_never_changes_the_model(monkeypatch):
    """budget: a tiny one keeps only the first and the last point (the checks are over it at once, with
    no floor), a huge one keeps every point; the model is the same; early stopping checks every point
    whatever the budget (its result must not depend on timing); with the floor, a short run's trace at
    the default budget has every point."""
    from pegasos import trace
    from pegasos.trace import check_points

    X, y = make_data(m=400, seed=5)
    opts = pegasos.TrainOptions(lam=1e-3, epochs=4, step_offset=1e4)
    points = check_points(int(pegasos.fit((X, y), opts).info["iterations"]), 400, 1, "permutation",
                          opts.trace_points)
    floored = Trace()
    pegasos.fit((X, y), opts, trace=floored)
    assert [r["t"] for r in floored.rows] == points and floored.skipped == 0
    monkeypatch.setattr(trace, "BUDGET_FLOOR_SECONDS", 0.0)
    Xv, yv = make_data(m=100, seed=6)
    opts = pegasos.TrainOptions(lam=1e-3, epochs=4, step_offset=1e4)
    plain = pegasos.fit((X, y), opts)
    points = check_points(int(plain.info["iterations"]), 400, 1, "permutation", opts.trace_points)
    tiny, huge = Trace(budget=1e-12), Trace(budget=1e12)
    assert pegasos.fit((X, y), opts, trace=tiny).to_text() == plain.to_text()
    assert pegasos.fit((X, y), opts, trace=huge).to_text() == plain.to_text()
    assert [r["t"] for r in huge.rows] == points and huge.skipped == 0
    assert [r["t"] for r in tiny.rows] == [points[0], points[-1]] and tiny.skipped == len(points) - 2
    stop = Trace(budget=1e-12)
    pegasos.fit((X, y), opts, trace=stop, validation=(Xv, yv), early_stop=1000)
    assert [r["t"] for r in stop.rows] == points and stop.skipped == 0
    with pytest.raises(ParameterError, match="budget"):
        Trace(budget=-1)


def test_empty_validation_and_early_stop_with_resume_state_are_errors(tmp_path):
    """Reported: an empty validation file gave 'best validation accuracy nan' with exit 0,
    and --resume-state with --early-stop wrote a resume section that could not be resumed."""
    data = tmp_path / "d.svm"
    X, y = make_data(m=200, seed=7)
    data.write_text("".join(("+1" if v > 0 else "-1") + "".join(f" {j + 1}:{X[i, j]:.6g}" for j in X[i].indices)
                            + "\n" for i, v in enumerate(y)))
    empty = tmp_path / "empty.svm"
    empty.write_text("# nothing\n")
    one_error(run_pegasos("train", "--epochs", "2", "--early-stop", "--validation", empty, data, tmp_path / "m"),
              "no validation examples")
    usage_error(run_pegasos("train", "--epochs", "2", "--early-stop", "--validation", data, "--resume-state", data,
                          tmp_path / "m"), "--resume-state", "cannot be resumed")
    assert not (tmp_path / "m").exists()
    model = pegasos.fit((X, y), epochs=3, step_offset=1e5, early_stop=2, validation=(X, y))
    assert model.solver_state is None
