"""Automatic step offset and stopping rule (pegasos.autotune).

The objective is recomputed here with NumPy, f(w) = lambda/2 ||w||^2 + mean
hinge (paper Eq. (1)), against the certified optima of the shared data README.
"""

import math

import numpy as np
import pytest

import pegasos
from pegasos import autotune
from pegasos.errors import ParameterError

from conftest import data_file

A9A_FSTAR = 0.3517618027       # lambda = 1e-4
W8A_FSTAR = 0.1443258917       # lambda = 1e-4
MUSHROOMS_FSTAR = 0.0007573911  # lambda = 1e-4


def numpy_objective(w, X, y, lam):
    y_pm = np.where(y == y.max(), 1.0, -1.0)
    margins = y_pm * (X @ w)
    return 0.5 * lam * float(w @ w) + float(np.maximum(0.0, 1.0 - margins).mean())


@pytest.fixture(scope="module")
def a9a():
    X, y = pegasos.load_svmlight(str(data_file("a9a/a9a")))
    return X.tocsr(), y


@pytest.fixture(scope="module")
def heart():
    X, y = pegasos.load_svmlight(str(data_file("heart_scale/heart_scale")))
    return X.tocsr(), y


def test_calibration_is_deterministic_for_a_seed(a9a):
    X, y = a9a
    first = autotune.calibrate_step_offset(X, y, 1e-4, seed=7, details=True)
    again = autotune.calibrate_step_offset(X, y, 1e-4, seed=7, details=True)
    assert first == again
    t0, eta0, table = first
    assert math.isfinite(t0) and t0 > 0
    assert t0 == pytest.approx(1.0 / (1e-4 * eta0), rel=1e-12)
    # the grid points visited, in increasing eta0, fewer than the whole grid
    visited = [e for e, _ in table]
    assert visited == sorted(visited) and set(visited) < set(autotune.DEFAULT_ETA0_GRID)
    # the sample's best eta0, carried from 1000 to m iterations
    best = min(table, key=lambda r: (r[1], r[0]))[0]
    assert eta0 == pytest.approx(best * math.sqrt(1000 / X.shape[0]), rel=1e-12)


def test_calibration_minimises_the_objective_when_the_sample_is_all_the_data(heart):
    """m = 270 < sample size: the sample is the data, so the chosen eta0 must be
    the grid value whose one-epoch model has the lowest objective, recomputed here."""
    X, y = heart
    lam, grid = 1e-3, (0.003, 0.03, 0.3, 3.0)
    t0, eta0, table = autotune.calibrate_step_offset(X, y, lam, grid=grid, seed=3, details=True)
    values = []
    for g in grid:
        model = pegasos.train(X, y, lam=lam, epochs=1, sampling="permutation", average_from=0.5,
                              step_offset=1.0 / (lam * g), seed=3)
        values.append(numpy_objective(model.w, X, y, lam))
    np.testing.assert_allclose([v for _, v in table], [values[grid.index(e)] for e, _ in table], rtol=1e-9)
    assert eta0 == grid[int(np.argmin(values))]
    assert t0 == pytest.approx(1.0 / (lam * eta0))


@pytest.mark.parametrize("settings", [
    dict(),
    dict(class_weight={1.0: 3.0}, batch_size=3),
    dict(sampling="uniform", average_from=0.25, bias="feature"),
    dict(loss="squared-hinge", projection=True, bias="unregularized"),
    dict(loss="log", sampling="shuffle-once"),
    dict(loss="eps-insensitive", epsilon=0.3, average_from=None),
])
def test_runs_of_several_step_offsets_are_those_of_fit_linear(heart, settings):
    """The calibration's runs (linear.OffsetRuns: the set-up shared by the step offsets) are bit for bit
    the runs of fit_linear with each step offset, and their objective from the decision values is
    scoring.objective's (with example weights too)."""
    from pegasos.examples import as_examples
    from pegasos.linear import OffsetRuns, decision_values, fit_linear
    from pegasos.options import TrainOptions
    from pegasos.scoring import objective, objective_of_decisions

    X, y = heart
    sw = np.random.default_rng(0).uniform(0.5, 2.0, size=X.shape[0])
    ex = as_examples((X, y, None, sw))
    options = TrainOptions(preset="paper", lam=1e-3, epochs=1, seed=5, **settings).validate()
    runs = OffsetRuns(ex, options)
    for t0 in (0.0, 10.0, 1e4):
        got = runs.run(t0)
        want = fit_linear(ex, options.replace(step_offset=t0))
        assert np.array_equal(got.w, want.w) and got.bias == want.bias and got.info == want.info
        f = decision_values(ex.indptr, ex.indices, ex.data, got.w, got.bias)
        assert objective_of_decisions(got, f, y, sample_weight=ex.sample_weight) == objective(want, X, y,
                                                                                               sample_weight=sw)


def brute_argmin(values):
    """The first index of the smallest value (an independent reference for walk_to_minimum)."""
    a = np.asarray(values, dtype=np.float64)
    return int(np.flatnonzero(a == a.min())[0])


def walk(values, start, lookahead=autotune.WALK_LOOKAHEAD):
    calls = []

    def score(i):
        calls.append(i)
        return values[i]

    best, visited = autotune.walk_to_minimum(score, len(values), start, lookahead)
    assert sorted(calls) == sorted(set(calls)) == sorted(visited)       # each point scored once
    assert all(visited[i] == values[i] for i in visited)
    return best, visited


INF = math.inf


@pytest.mark.parametrize("values", [
    [3.0, 2.0, 1.0, 2.0, 3.0],
    [1.0, 2.0, 3.0, 4.0],                           # minimum at the first point
    [4.0, 3.0, 2.0, 1.0],                           # at the last
    [5.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 7.0],       # a run of ties on the way down, longer than the lookahead
    [5.0, 1.0, 1.0, 1.0, 1.0, 3.0],                 # tied minima: the first
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],            # all tied
    [0.9, 0.5, 0.3, INF, INF, INF, INF, INF],       # diverged runs above
    [INF, INF, INF, INF, INF, 0.4, 0.6],            # and below
    [INF, 0.7, 0.2, 0.2, INF, INF],
    [INF, INF, INF],                                # every run diverged: the first point
    [0.5],
])
def test_walk_finds_the_first_minimum_of_a_unimodal_sequence_from_every_start(values):
    for start in range(len(values)):
        assert walk(values, start)[0] == brute_argmin(values), start
        assert walk(values, start, lookahead=1)[0] == brute_argmin(values), start


def unimodal():
    """Sequences that do not increase, then do not decrease: few distinct values (ties) and inf."""
    from hypothesis import strategies as st

    value = st.sampled_from([0.0, 0.25, 1.0, 1.5, 2.0, INF])
    return st.tuples(st.lists(value, max_size=12), st.lists(value, max_size=12)).filter(
        lambda p: p[0] or p[1]).map(lambda p: sorted(p[0], reverse=True) + sorted(p[1]))


def test_walk_equals_the_exhaustive_argmin_on_unimodal_sequences():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=500, deadline=None)
    @given(unimodal(), st.data(), st.integers(1, 3))
    def check(values, data, lookahead):
        start = data.draw(st.integers(0, len(values) - 1))
        best, visited = walk(values, start, lookahead)
        assert best == brute_argmin(values)
        assert visited[best] == min(values)

    check()


def test_walk_visits_the_path_and_the_lookahead_only():
    """A strictly unimodal sequence of 21: from the minimum, the lookahead on both sides (5 points); from
    6 points below it, the path and the lookahead past it (9 points); a rise of one point is walked over."""
    values = [abs(i - 12) + 0.5 for i in range(21)]
    assert walk(values, 12) == (12, {i: values[i] for i in range(10, 15)})
    assert walk(values, 6) == (12, {i: values[i] for i in range(6, 15)})
    bump = [5.0, 4.0, 4.5, 3.0, 6.0, 7.0, 8.0]
    assert walk(bump, 0)[0] == 3 and walk(bump, 0, lookahead=1)[0] == 1


def test_walk_rejects_an_empty_range_or_a_start_outside_it():
    for n, start, lookahead in ((0, 0, 2), (3, 3, 2), (3, -1, 2), (3, 0, 0)):
        with pytest.raises(ValueError):
            autotune.walk_to_minimum(lambda i: 0.0, n, start, lookahead)


def test_calibration_chooses_the_argmin_of_the_whole_grid(heart):
    """On heart_scale (the sample is all 270 examples) the walk returns the eta0 of lowest objective
    over the whole default grid, each grid point scored alone, and visits fewer points; its table holds
    the scores of the points it visited."""
    X, y = heart
    for lam, seed in ((1e-3, 1), (1e-5, 2)):
        every = {g: autotune.calibrate_step_offset(X, y, lam, seed=seed, grid=(g,), details=True)[2][0][1]
                 for g in autotune.DEFAULT_ETA0_GRID}
        t0, eta0, table = autotune.calibrate_step_offset(X, y, lam, seed=seed, details=True)
        assert eta0 == min(every, key=lambda g: (every[g], g))
        assert len(table) < len(every) and all(every[g] == v for g, v in table)


def test_calibration_accepts_a_sample_with_one_class():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.normal(size=(400, 5)))
    y = np.where(np.arange(400) < 2, 1.0, -1.0)       # 2 positives: a sample of 10 may have none
    t0 = autotune.calibrate_step_offset(X, y, 1e-2, sample_size=10, seed=1)
    assert math.isfinite(t0) and t0 > 0


@pytest.mark.parametrize("kwargs, word", [
    (dict(sample_size=0), "sample size"),
    (dict(sample_size=2.5), "sample size"),
    (dict(grid=()), "grid"),
    (dict(grid=(0.1, -1.0)), "eta0"),
    (dict(epochs=3), "epochs"),
    (dict(step_offset=5.0), "step_offset"),
    (dict(loss="rank"), "rank"),
])
def test_calibration_errors_name_the_option(heart, kwargs, word):
    X, y = heart
    with pytest.raises(ParameterError, match=word):
        autotune.calibrate_step_offset(X, y, 1e-3, **kwargs)


def until(X, y, lam, max_epochs=None, **settings):
    """train_until_converged on (X, y) with the options of pegasos.fit plus ``settings`` (the schedule of
    plain Pegasos: no dual finish unless asked for)."""
    from pegasos.examples import as_examples
    from pegasos.options import TrainOptions

    settings.setdefault("finish", "none")
    options = TrainOptions(lam=lam, **settings).validate()
    return autotune.train_until_converged(as_examples((X, y)), options, max_epochs=max_epochs)


@pytest.mark.parametrize("kwargs, word", [
    (dict(tol=0.0), "tol"),
    (dict(tol=float("nan")), "tol"),
    (dict(max_epochs=0), "max_epochs"),
    (dict(max_epochs=True), "max_epochs"),
    (dict(step_offset=-1.0), "t0"),
    (dict(loss="rank", sampling="uniform"), "rank"),
])
def test_train_until_converged_errors_name_the_option(heart, kwargs, word):
    X, y = heart
    with pytest.raises(ParameterError, match=word):
        until(X, y, 1e-3, **kwargs)


def test_default_epoch_cap():
    assert autotune.default_epoch_cap(32561) == 1024
    assert autotune.default_epoch_cap(8124) == 4096
    assert autotune.default_epoch_cap(10_000_000) == 16
    for m in (1, 270, 49749, 2_000_000):
        cap = autotune.default_epoch_cap(m)
        assert cap >= 16 and cap & (cap - 1) == 0
        assert cap == 16 or cap * m <= autotune.DEFAULT_MAX_ITERATIONS


def test_defaults_reach_one_percent_on_a9a_and_the_model_is_reproducible(a9a, tmp_path):
    X, y = a9a
    lam = 1e-4
    model, epochs, history = until(X, y, lam, seed=1)
    f = numpy_objective(model.w, X, y, lam)
    assert (f - A9A_FSTAR) / A9A_FSTAR <= 0.01
    # the schedule doubles and its objectives are the runs' real objectives
    assert [h["epochs"] for h in history] == [2 ** i for i in range(len(history))]
    assert epochs in [h["epochs"] for h in history]
    mine = [h for h in history if h["epochs"] == epochs][0]
    assert mine["objective"] == pytest.approx(f, rel=1e-9)
    assert min(h["objective"] for h in history[-2:]) == pytest.approx(f, rel=1e-9)
    # every automatic choice is recorded
    info = model.info
    t0 = autotune.calibrate_step_offset(X, y, lam, seed=1)
    assert float(info["step_offset"]) == t0
    assert info["step_offset_rule"] == "calibrated"
    assert float(info["eta0"]) == pytest.approx(1.0 / (lam * t0))
    assert info["sampling"] == "permutation" and float(info["average_from"]) == 0.5
    assert int(info["epochs"]) == epochs
    assert int(info["iterations"]) == epochs * X.shape[0]
    assert int(info["epochs_trained"]) == history[-1]["epochs"]      # one run, lengthened
    assert "tol=0.002" in info["stopping"]
    # the header's settings reproduce the model exactly, after a save and load too
    path = tmp_path / "a9a.model"
    model.save(path)
    header = pegasos.load_model(path).info
    again = pegasos.train(X, y, lam=float(header["lambda"]), iterations=int(header["iterations"]),
                          sampling=header["sampling"], average_from=float(header["average_from"]),
                          step_offset=float(header["step_offset"]), seed=int(header["seed"]))
    np.testing.assert_array_equal(again.w, model.w)


def test_defaults_reach_one_percent_on_w8a():
    X, y = pegasos.load_svmlight(str(data_file("w8a/w8a")))
    lam = 1e-4
    model, epochs, history = until(X.tocsr(), y, lam, seed=2)
    f = numpy_objective(model.w, X.tocsr(), y, lam)
    assert (f - W8A_FSTAR) / W8A_FSTAR <= 0.01
    assert history[-1]["epochs"] <= autotune.default_epoch_cap(X.shape[0])


def test_defaults_reach_one_percent_on_mushrooms():
    """mushrooms at lambda = 1e-4 (f* = 7.6e-4, nearly separable): the error halves with each
    doubling, 1.3% at 2048 epochs, so the default needs its 4096 (one lengthened run)."""
    from pegasos.io import read_svmlight

    d = read_svmlight(data_file("mushrooms/mushrooms.txt"))
    model = pegasos.fit(d, lam=1e-4, seed=1, solver="pegasos")
    f = numpy_objective(model.w, d.X.tocsr(), d.y, 1e-4)
    assert (f - MUSHROOMS_FSTAR) / MUSHROOMS_FSTAR <= 0.01
    assert int(model.info["epochs_trained"]) <= autotune.default_epoch_cap(d.X.shape[0])


def test_given_step_offset_is_used_and_recorded(heart):
    X, y = heart
    model, epochs, history = until(X, y, 1e-2, step_offset=1234.0, max_epochs=256)
    assert float(model.info["step_offset"]) == 1234.0
    assert model.info["step_offset_rule"] == "given"
    # heart_scale has 270 examples: the first run has at least 2^14 iterations
    assert history[0]["epochs"] * X.shape[0] >= autotune.FIRST_RUN_ITERATIONS
    assert history[-1]["epochs"] <= 256


def test_epoch_cap_stops_the_schedule(heart):
    X, y = heart
    model, epochs, history = until(X, y, 1e-4, tol=1e-12, max_epochs=100)
    assert history[-1]["epochs"] == 100
    assert "epoch cap" in model.info["stopping"]


def test_command_line_training_does_not_import_scipy(tmp_path):
    """Start-up: `pegasos train` with the automatic defaults, `predict` and `eval` never import scipy
    (a tenth of a second of a short job)."""
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    lines = []
    for i in range(300):
        cols = np.sort(rng.choice(40, size=5, replace=False)) + 1
        lines.append(("+1" if i % 2 else "-1") + "".join(f" {c}:{rng.normal():.3f}" for c in cols))
    data = tmp_path / "d.svm"
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "d.model"
    code = ("import sys\nfrom pegasos.cli import main\n"
            "for argv in (['train', '-q', '-l', '1e-2', D, M], ['predict', '-q', D, M, O], ['eval', D, M]):\n"
            "    try:\n        main(argv)\n    except SystemExit as e:\n        assert not e.code, e.code\n"
            "bad = sorted(k for k in sys.modules if k.split('.')[0] == 'scipy')\n"
            "assert not bad, bad[:5]\n")
    r = subprocess.run([sys.executable, "-c", f"D, M, O = {str(data)!r}, {str(model)!r}, {str(tmp_path / 'o')!r}\n"
                        + code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert model.stat().st_size > 0


@pytest.mark.parametrize("seed", range(5))
def test_roc_auc_with_ties_equals_scikit_learn(seed):
    """scoring.roc_auc counts with NumPy (ties count one half): equal to the mean ranks of scipy's
    rankdata and to scikit-learn's roc_auc_score on scores with many ties."""
    from scipy.stats import rankdata
    from sklearn.metrics import roc_auc_score

    from pegasos.scoring import roc_auc

    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(size=500), 1)              # about 60 distinct values: many ties
    positive = rng.random(500) < 0.3
    assert roc_auc(scores, positive) == pytest.approx(roc_auc_score(positive, scores), rel=1e-12)
    ranks = rankdata(scores)
    expected = (ranks[positive].sum() - positive.sum() * (positive.sum() + 1) / 2) / (positive.sum() * (~positive).sum())
    assert roc_auc(scores, positive) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_streamed_roc_auc_equals_scikit_learn_over_chunks(seed):
    """eval keeps each class's decision values in chunks and counts over the sorted negatives: the
    same AUC as roc_auc_score over the whole, with ties, infinite values, chunks holding one class
    or none, and every block size of the count."""
    from sklearn.metrics import roc_auc_score

    from pegasos import scoring

    rng = np.random.default_rng(seed)
    m = 3000
    scores = np.round(rng.normal(size=m), 1)
    scores[rng.random(m) < 0.01] = np.inf
    scores[rng.random(m) < 0.01] = -np.inf
    positive = rng.random(m) < 0.4
    positive[:200] = True                           # a first chunk of positives only
    expected = roc_auc_score(positive, np.clip(scores, -1e300, 1e300))
    for block in (1, 7, 1 << 20):
        kept = scoring._ClassScores()
        cuts = np.sort(rng.choice(np.arange(1, m), 30, replace=False))
        for part, pos in zip(np.split(scores, cuts), np.split(positive, cuts)):
            kept.add(part, pos)
        kept.add(scores[:0], positive[:0])
        old, scoring.AUC_BLOCK = scoring.AUC_BLOCK, block
        try:
            assert kept.auc() == pytest.approx(expected, rel=1e-14, abs=0), block
        finally:
            scoring.AUC_BLOCK = old
        assert kept.pos == [] and kept.neg == []    # the chunks were freed as they were joined
    one = scoring._ClassScores()
    one.add(scores, np.ones(m, dtype=bool))
    assert one.auc() is None


def test_streamed_roc_auc_holds_about_one_float_per_example():
    """The AUC of eval used about 19 bytes per example (the chunks, their concatenation, np.unique's
    sorted copy, inverse and ranks); now the chunks and one class's joined copy, about 8 to 16."""
    import tracemalloc

    from pegasos import scoring

    rng = np.random.default_rng(0)
    m, chunk = 2_000_000, 100_000
    kept = scoring._ClassScores()
    tracemalloc.start()
    try:
        for _ in range(m // chunk):
            f = rng.normal(size=chunk)
            kept.add(f, f + rng.normal(size=chunk) > 0)
            del f
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        auc = kept.auc()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0.8 < auc < 0.87
    assert held < 8.5 * m and peak < 14 * m, (held / m, peak / m)


def test_one_vs_rest_defaults_on_dna_come_near_the_certified_bound():
    """One-vs-rest under the defaults: the dual passes per class from W = 0.  dna at lambda = 1e-4: within
    1% of the certified lower bound on f* (the fixed 10 epochs with t0 = 0 that one-vs-rest had before
    were 16 times f*; plain Pegasos within 3%), and the header's settings retrain the same model."""
    from pegasos.certificate import duality_gap
    from pegasos.io import read_svmlight

    d = read_svmlight(data_file("dna/dna.scale"))
    model = pegasos.fit(d, lam=1e-4)
    assert model.method == "ovr" and model.info["finish"] == "dual" and len(model.info["finish_passes"].split(",")) == 3
    # the K problems' dual passes from W = 0 certify the model: no Pegasos epoch, no calibration
    assert model.info["solver"] == "dual" and model.info["stop"] == "certified"
    assert "iterations" not in model.info and "step_offset_rule" not in model.info
    # the passes of the finish's longest class (8192; the gap's passes shrink as the finish's do, so
    # 5000 of them, which sufficed as plain passes, end 0.2% above the header's gap)
    gap = duality_gap(model, d.X, d.y, passes=max(int(p) for p in model.info["finish_passes"].split(",")))
    assert gap["primal"] <= 1.01 * gap["dual"], gap
    assert float(model.info["certified_gap"]) >= gap["rel_gap"] - 1e-12      # the header's claim is proven
    plain = pegasos.fit(d, lam=1e-4, finish="none")
    assert "finish" not in plain.info
    assert pegasos.objective(plain, d.X, d.y)["objective"] <= 1.03 * gap["dual"]
    old = pegasos.fit(d, lam=1e-4, epochs=10, step_offset=0.0)
    assert pegasos.objective(old, d.X, d.y)["objective"] > 10 * gap["primal"]
    again = pegasos.fit(d, pegasos.TrainOptions.from_header(model.info))
    assert np.array_equal(again.W, model.W)

    # Crammer-Singer: its dual passes from W = 0 (pegasos.finish.finish_crammer_singer), no calibration;
    # with finish none, the calibrated Pegasos run of before
    cs = pegasos.fit(d, lam=1e-4, multiclass="crammer-singer")
    assert cs.info["stop"] == "certified" and "step_offset_rule" not in cs.info
    assert float(cs.info["certified_gap"]) <= autotune.DEFAULT_TOL
    cs_plain = pegasos.fit(d, lam=1e-4, multiclass="crammer-singer", finish="none")
    assert cs_plain.info["step_offset_rule"] == "calibrated" and "stopping" in cs_plain.info
    cs_old = pegasos.fit(d, lam=1e-4, multiclass="crammer-singer", epochs=10, step_offset=0.0)
    assert pegasos.objective(cs, d.X, d.y)["objective"] < 0.1 * pegasos.objective(cs_old, d.X, d.y)["objective"]


def test_one_vs_rest_automatic_choices_on_small_data():
    """A given T or epochs keeps the calibrated t0 and no stopping rule; a given t0 is kept; the result
    does not depend on the number of threads."""
    import scipy.sparse as sp

    rng = np.random.default_rng(4)
    X = sp.random(400, 30, density=0.3, format="csr", random_state=4)
    y = np.argmax(X @ rng.normal(size=(30, 3)), axis=1).astype(np.float64)
    fixed = pegasos.fit((X, y), lam=1e-3, epochs=3)
    assert fixed.info["step_offset_rule"] == "calibrated" and "stopping" not in fixed.info
    assert float(fixed.info["step_offset"]) > 0
    given = pegasos.fit((X, y), lam=1e-3, epochs=3, step_offset=50.0)
    assert float(given.info["step_offset"]) == 50.0 and "step_offset_rule" not in given.info
    auto1 = pegasos.fit((X, y), lam=1e-3, n_threads=1)
    auto2 = pegasos.fit((X, y), lam=1e-3, n_threads=2)
    assert auto1.info["stop"] == "certified" and np.array_equal(auto1.W, auto2.W)
    paper = pegasos.fit((X, y), lam=1e-3, preset="paper")
    assert "step_offset_rule" not in paper.info and float(paper.info.get("step_offset", 0)) == 0.0


def weighted_objective(X, y_pm, w, b, lam, c, bias_mode):
    """lambda/2 (||w||^2 [+ b^2 for bias "feature"]) + 1/m sum_i c_i max(0, 1 - y_i (<w, x_i> + b)),
    X dense (m, d), y in {-1, +1}, c_i = class weight times example weight."""
    margins = y_pm * (X @ w + b)
    reg = w @ w + (b * b if bias_mode == "feature" else 0.0)
    return 0.5 * lam * float(reg) + float(np.mean(c * np.maximum(0.0, 1.0 - margins)))


@pytest.mark.parametrize("classes", [2, 3])
def test_the_doubling_compares_the_objective_with_the_example_weights(monkeypatch, classes):
    """The objective of every length the doubling compares (binary: pegasos.autotune.train_until_converged,
    one-vs-rest: fit_multiclass_auto) is the one training minimises: each example's hinge loss weighted
    by its class weight times its own weight.  Recomputed here with NumPy from each length's model; the
    unweighted objective differs from it by far more than the tolerance."""
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    m, d, lam = 300, 8, 1e-2
    X = rng.normal(size=(m, d)) * (rng.random((m, d)) < 0.7)
    y = (np.argmax(X @ rng.normal(size=(d, classes)) + rng.normal(scale=0.5, size=(m, classes)), axis=1)
         + 1).astype(np.float64)
    sw = rng.uniform(0.1, 5.0, size=m)
    class_weight = {1.0: 2.5}
    c = np.where(y == 1.0, 2.5, 1.0) * sw

    seen = []
    original = autotune.double_until_converged

    def spy(run, *args, **kwargs):
        def recorded(E, next_E):
            model, f = run(E, next_E)
            seen.append((model, f))
            return model, f
        return original(recorded, *args, **kwargs)

    monkeypatch.setattr(autotune, "double_until_converged", spy)
    model = pegasos.fit((sp.csr_matrix(X), y, None, sw), lam=lam, class_weight=class_weight, finish="none",
                        bias="feature")
    assert "stopping" in model.info and len(seen) >= 2
    for mdl, f in seen:
        if classes == 2:
            y_pm = np.where(y == 2.0, 1.0, -1.0)
            parts = [(y_pm, np.asarray(mdl.w, dtype=np.float64)[:d], float(mdl.bias))]
        else:
            parts = [(np.where(y == k + 1.0, 1.0, -1.0), np.asarray(mdl.W[k], dtype=np.float64)[:d],
                      float(mdl.biases[k])) for k in range(classes)]
        expected = sum(weighted_objective(X, y_k, w_k, b_k, lam, c, "feature") for y_k, w_k, b_k in parts)
        plain = sum(weighted_objective(X, y_k, w_k, b_k, lam, np.ones(m), "feature") for y_k, w_k, b_k in parts)
        assert f == pytest.approx(expected, rel=1e-12)
        assert abs(plain - expected) > 0.1 * expected


def test_a_diverged_calibration_run_is_a_typed_error_scored_inf(monkeypatch):
    """The calibration scores a run that diverged as inf by its type (DivergenceError), not by the words of
    its message; any other ParameterError of a run propagates."""
    import math

    from pegasos import linear
    from pegasos.errors import DivergenceError

    X, y = pegasos.load_svmlight(str(data_file("heart_scale/heart_scale")))
    real = linear.OffsetRuns.run

    def run(self, t0):
        if 1.0 / (self.options.lam * t0) > 1.01e-2:              # every eta0 above 1e-2 "diverges"
            raise DivergenceError("weights went to inf")          # (the words say nothing of divergence)
        return real(self, t0)

    monkeypatch.setattr(linear.OffsetRuns, "run", run)
    t0, eta0, table = autotune.calibrate_step_offset(X, y, 1e-4, details=True)
    assert any(math.isinf(v) for _, v in table) and any(math.isfinite(v) for _, v in table)
    best = min(table, key=lambda r: (r[1], r[0]))
    assert math.isfinite(best[1]) and best[0] <= 1.01e-2

    def other(self, t0):
        raise ParameterError("other")

    monkeypatch.setattr(linear.OffsetRuns, "run", other)
    with pytest.raises(ParameterError, match="other"):
        autotune.calibrate_step_offset(X, y, 1e-4)
