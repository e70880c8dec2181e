"""Training on shard files: the local shard engine against the compiled loop run
on the concatenated data, Dask (threads and processes) against the local engine
bit for bit, the multinomial batch plan, model averaging, checkpoints and resume,
a worker killed mid-run, and the import hygiene of the optional dependency.

Tests that need Dask skip without it; the process-based ones are marked slow.
"""

import os
import re
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp
import click
from click.testing import CliRunner

import pegasos
from pegasos import TrainOptions
from pegasos.cli import main
from pegasos.engine_dask import (ClusterError, EngineSettings, Shard, ShardWorker, check_versions, expand_shards,
                                 fit_shards)
from pegasos.errors import DataError, ParameterError
from pegasos.examples import as_examples
from pegasos.io import read_svmlight
from pegasos.linear import fit_linear
from pegasos.sampling import ShardDraws


def _write(path, m, rng, d=40, regression=False, base=1):
    with open(path, "w") as f:
        for _ in range(m):
            cols = np.sort(rng.choice(d, 5, replace=False)) + base
            vals = rng.normal(size=5)
            score = vals[:3].sum() + 0.3 * rng.normal()
            y = f"{score:.6g}" if regression else ("1" if score > 0 else "-1")
            f.write(y + " " + " ".join(f"{c}:{v:.6g}" for c, v in zip(cols, vals)) + "\n")


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Three shards of 300, 170 and 45 examples (binary), and a regression pair."""
    root = tmp_path_factory.mktemp("shards")
    rng = np.random.default_rng(7)
    for name, m in (("a", 300), ("b", 170), ("c", 45)):
        (root / "bin").mkdir(exist_ok=True)
        _write(root / "bin" / f"{name}.svm", m, rng)
    (root / "reg").mkdir()
    for name, m in (("a", 200), ("b", 120)):
        _write(root / "reg" / f"{name}.svm", m, rng, regression=True)
    return root


def _concat(paths):
    parts = [read_svmlight(str(p)) for p in paths]
    nf = max(p.n_features for p in parts)
    X = sp.vstack([p.chunk.matrix(nf) for p in parts]).tocsr()
    return X, np.concatenate([p.y for p in parts]), [p.n_examples for p in parts]


def _plan_order(sizes, k, seed, T):
    """The global example order of the shard plan: per iteration, shard 0's rows, then shard 1's, ..."""
    draws, offsets, order = ShardDraws(sizes, k, seed), np.r_[0, np.cumsum(sizes)], []
    for t in range(1, T + 1):
        counts = draws.counts(t)
        for j in range(len(sizes)):
            order.append(draws.rows(t, j, counts[j]) + offsets[j])
    return np.concatenate(order)


OPTS = TrainOptions(lam=1e-2, iterations=150, batch_size=16, seed=3, average_from=0.5, step_offset=10.0)


# ------------------------------------------------------------ no Dask needed --

@pytest.mark.parametrize("changes", [{}, {"bias": "feature", "projection": True, "average_from": None},
                                     {"loss": "log", "class_weight": {1.0: 2.0}, "average": True, "average_from": None},
                                     {"loss": "eps-insensitive", "epsilon": 0.1, "bias": "unregularized"}])
def test_local_shards_are_the_compiled_loop_on_the_concatenation(shards, changes):
    """engine="local" on shards == fit_linear on the concatenated rows visiting the plan's order, bit for bit."""
    folder = shards / ("reg" if changes.get("loss") == "eps-insensitive" else "bin")
    opts = OPTS.replace(**changes)
    model = fit_shards(str(folder / "*.svm"), opts)
    X, y, sizes = _concat(sorted(folder.glob("*.svm")))
    order = _plan_order(sizes, 16, 3, 150)
    ref = fit_linear(as_examples((X, y)), opts.replace(sampling="uniform"), order=order)
    assert np.array_equal(model.w, ref.w) and model.bias == ref.bias
    assert model.info["engine"] == "local" and model.info["shards"] == str(len(sizes))
    assert model.info["train_examples"] == str(sum(sizes))


def test_batch_plan_is_multinomial_over_shards():
    sizes = [500, 300, 0, 200]
    draws = ShardDraws(sizes, 64, 5)
    counts = np.array([draws.counts(t) for t in range(1, 3001)])
    assert np.all(counts.sum(axis=1) == 64) and np.all(counts[:, 2] == 0)
    expected = 64 * np.array([0.5, 0.3, 0.2])
    got = counts[:, [0, 1, 3]].mean(axis=0)
    # the mean of 3000 multinomial counts: standard error sqrt(k p (1-p) / 3000) < 0.08
    assert np.all(np.abs(got - expected) < 0.4), got
    var = counts[:, 0].var()
    assert abs(var - 64 * 0.5 * 0.5) < 2.0, var          # Multinomial variance k p (1 - p) = 16
    rows = draws.rows(4, 1, 10000)
    assert rows.min() >= 0 and rows.max() < 300
    assert np.array_equal(rows, ShardDraws(sizes, 64, 5).rows(4, 1, 10000))     # keyed, not sequential
    assert not np.array_equal(rows, draws.rows(5, 1, 10000))


def test_shard_specs(shards, tmp_path):
    folder = shards / "bin"
    names = [s.path for s in expand_shards(str(folder / "*.svm"))]
    assert [os.path.basename(p) for p in names] == ["a.svm", "b.svm", "c.svm"] and all(map(os.path.isabs, names))
    assert [s.path for s in expand_shards(str(folder))] == names
    listing = folder / "list.txt"
    listing.write_text("# shards\nb.svm\n\na.svm\n")
    try:
        assert [os.path.basename(s.path) for s in expand_shards("@" + str(listing))] == ["b.svm", "a.svm"]
    finally:
        listing.unlink()
    with pytest.raises(ParameterError, match="no shard file matches"):
        expand_shards(str(tmp_path / "*.svm"))
    (tmp_path / "l.txt").write_text("missing.svm\n")
    with pytest.raises(ParameterError, match="not a file"):
        expand_shards("@" + str(tmp_path / "l.txt"))


def test_split_ranges_read_the_whole_file(shards):
    path = shards / "bin" / "a.svm"
    ranges = expand_shards(str(path), split=4)
    assert len(ranges) == 4 and ranges[0].start == 0 and ranges[-1].end == os.path.getsize(path)
    assert all(a.end == b.start for a, b in zip(ranges, ranges[1:]))
    w = ShardWorker(ranges, list(range(4)))
    whole = read_svmlight(str(path), zero_based=True)
    assert np.array_equal(np.concatenate([p["y"] for p in w.parts]), whole.y)
    assert np.array_equal(np.concatenate([p["indices"] for p in w.parts]), whole.chunk.indices)
    model = fit_shards(str(path), OPTS, split=4)
    order = _plan_order([p["y"].shape[0] for p in w.parts], 16, 3, 150)
    ref = fit_linear(as_examples((whole.chunk.matrix(), whole.y)), OPTS.replace(sampling="uniform"), order=order)
    # zero-based reading of a one-based file has one more (empty) column 0: the model drops it
    assert np.array_equal(model.w, ref.w[1:])


def test_index_base_and_dimension_from_all_shards(tmp_path):
    rng = np.random.default_rng(1)
    _write(tmp_path / "a.svm", 50, rng, d=10, base=1)
    _write(tmp_path / "b.svm", 50, rng, d=30, base=1)
    m = fit_shards(str(tmp_path / "*.svm"), OPTS.replace(iterations=20))
    assert m.info["index_base"] == "1" and m.n_features == max(
        read_svmlight(str(tmp_path / f)).n_features for f in ("a.svm", "b.svm"))
    with open(tmp_path / "c.svm", "w") as f:
        f.write("1 0:1.5 3:2\n-1 1:1\n")
    m = fit_shards(str(tmp_path / "*.svm"), OPTS.replace(iterations=20))
    assert m.info["index_base"] == "0"             # index 0 in one shard: every shard is zero-based
    with pytest.raises(ParameterError, match="index 0"):
        fit_shards(str(tmp_path / "*.svm"), OPTS.replace(iterations=20), EngineSettings(zero_based=False))


def test_unsupported_runs_are_refused(shards, tmp_path):
    with pytest.raises(ParameterError, match="regression"):
        fit_shards(str(shards / "bin"), OPTS.replace(loss="rank", sampling="uniform"))
    with pytest.raises(ParameterError, match="i.i.d."):
        fit_shards(str(shards / "bin"), OPTS.replace(sampling="sequential"))
    with pytest.raises(ParameterError, match="--local-workers"):
        EngineSettings(engine="dask").validate()
    with pytest.raises(ParameterError, match="--sync-every"):
        EngineSettings(sync_every=0).validate()
    (tmp_path / "m.svm").write_text("1 1:1\n2 1:2\n3.5 2:1\n")
    with pytest.raises(ParameterError, match="3.5 is not an integer"):
        fit_shards(str(tmp_path / "m.svm"), OPTS.replace(batch_size=1, iterations=5))
    (tmp_path / "m.svm").write_text("1 1:1\n2 1:2\n3 2:1\n")
    with pytest.raises(ParameterError, match="without --checkpoint-every"):
        fit_shards(str(tmp_path / "m.svm"), OPTS.replace(batch_size=1, iterations=5), EngineSettings(sync_every=3))
    with pytest.raises(ParameterError, match="crammer-singer"):
        fit_shards(str(tmp_path / "m.svm"), OPTS.replace(multiclass="crammer-singer"))


def test_version_check():
    check_versions({"tcp://a:1": "0.1.0"}, "0.1.0")
    with pytest.raises(ClusterError, match="tcp://b:1 runs pegasos 0.0.9, the driver 0.1.0"):
        check_versions({"tcp://a:1": "0.1.0", "tcp://b:1": "0.0.9"}, "0.1.0")
    with pytest.raises(ClusterError, match="no workers"):
        check_versions({}, "0.1.0")


def test_averaging_mode(shards):
    folder = str(shards / "bin")
    X, y, _ = _concat(sorted((shards / "bin").glob("*.svm")))
    opts = TrainOptions(lam=1e-2, epochs=20, batch_size=8, seed=2, step_offset=10.0, projection=True,
                        average_from=0.5)
    exact = fit_shards(folder, opts)
    avg = fit_shards(folder, opts, EngineSettings(sync_every=10))
    epoch = fit_shards(folder, opts, EngineSettings(sync_every="epoch"))
    assert "not covered by the Pegasos bound" in avg.info["guarantee"] and avg.info["sync_every"] == "10"
    assert "guarantee" not in exact.info
    f_exact = pegasos.objective(exact, X, y)["objective"]
    for model in (avg, epoch):
        assert np.dot(model.w, model.w) <= 1.0 / opts.lam * (1 + 1e-12)      # the ball is convex
        assert pegasos.objective(model, X, y)["objective"] < 1.05 * f_exact
    assert f_exact < 0.6                                                     # f(0) = 1


def test_saved_model_loads_and_predicts(shards, tmp_path):
    model = fit_shards(str(shards / "bin"), OPTS)
    model.save(tmp_path / "m.model")
    back = pegasos.load_model(str(tmp_path / "m.model"))
    X, _, _ = _concat(sorted((shards / "bin").glob("*.svm")))
    assert np.array_equal(back.decision_function(X), model.decision_function(X))
    assert back.info["engine"] == "local" and back.info["sync_every"] == "1"


class _Stop(Exception):
    pass


@pytest.mark.parametrize("sync", [1, 7])
def test_resume_gives_the_uninterrupted_model(shards, tmp_path, sync):
    folder = str(shards / "bin")
    ck = str(tmp_path / "run.ckpt")
    opts = OPTS.replace(iterations=140)
    settings = EngineSettings(sync_every=sync, checkpoint_every=3, checkpoint=ck)
    whole = fit_shards(folder, opts, EngineSettings(sync_every=sync))
    seen = [0]

    def interrupt(n):
        seen[0] += n
        if seen[0] >= 100:
            raise _Stop()

    with pytest.raises(_Stop):
        fit_shards(folder, opts, settings, progress=interrupt)
    assert os.path.exists(ck) and pegasos.load_model(ck + ".model").n_features == whole.n_features
    resumed = fit_shards(folder, opts, EngineSettings(sync_every=sync, resume=ck))
    assert np.array_equal(resumed.w, whole.w) and resumed.bias == whole.bias
    with pytest.raises(ParameterError, match="another run.*lambda"):
        fit_shards(folder, opts.replace(lam=0.5), EngineSettings(sync_every=sync, resume=ck))
    with pytest.raises(ParameterError, match="not a pegasos checkpoint"):
        fit_shards(folder, opts, EngineSettings(sync_every=sync, resume=str(shards / "bin" / "a.svm")))
    # damaged checkpoints: truncated, one byte changed, empty, missing
    good = open(ck, "rb").read()
    bad = str(tmp_path / "bad.ckpt")
    flipped = bytearray(good)
    flipped[len(good) // 3] ^= 0xFF
    for content, words in ((good[:300], "damaged"), (bytes(flipped), "damaged"), (b"", "damaged")):
        with open(bad, "wb") as f:
            f.write(content)
        with pytest.raises(ParameterError, match=words):
            fit_shards(folder, opts, EngineSettings(sync_every=sync, resume=bad))
    with pytest.raises(ParameterError, match="no such file"):
        fit_shards(folder, opts, EngineSettings(sync_every=sync, resume=str(tmp_path / "missing.ckpt")))


def test_shards_explain_and_record_what_runs(shards, tmp_path):
    """A user's trial: train-shards --explain promised the doubling of epochs, and the header gave
    "a setting of Pegasos is given" (the engine's own uniform sampling) for a run given no setting.  The
    plan says the default epochs the run trains and why Pegasos runs, and the summary says the solver."""
    data = str(shards / "bin" / "*.svm")
    r = CliRunner().invoke(main, ["train-shards", "--explain", data])
    assert r.exit_code == 0 and "on shards" in r.output and "10 epochs" in r.output and "doubled" not in r.output
    out = tmp_path / "m.model"
    r = CliRunner().invoke(main, ["train-shards", data, str(out)])
    assert r.exit_code == 0, r.output
    info = pegasos.load_model(str(out)).info
    assert info["solver"] == "pegasos" and info["solver_reason"] == "auto: the data are not in memory (on shards)"
    assert f"solver pegasos ({info['solver_reason']})" in r.output
    assert int(info["iterations"]) == 10 * -(-int(info["train_examples"]) // int(info["batch_size"]))


def test_cli_local_shards(shards, tmp_path):
    out = tmp_path / "m.model"
    r = CliRunner().invoke(main, ["train-shards", "-T", "150", "-k", "16", "--seed", "3", "--t0", "10", "-l", "1e-2",
                                  "--average-from", "0.5", str(shards / "bin" / "*.svm"), str(out)])
    assert r.exit_code == 0, r.output
    assert "515 examples in 3 shards" in r.output
    assert np.array_equal(pegasos.load_model(str(out)).w, fit_shards(str(shards / "bin" / "*.svm"), OPTS).w)
    r = CliRunner().invoke(main, ["train-shards", "--sampling", "sequential", str(shards / "bin"), str(out)])
    assert r.exit_code == 2 and "Error: --sampling sequential" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["train-shards", "--sync-every", "x", str(shards / "bin"), str(out)])
    assert r.exit_code == 2 and "Error: --sync-every" in r.output



def test_train_shards_help_says_the_batch_size_a_run_takes(shards, tmp_path):
    """train-shards --help said -k [default: 1], the default of train, while a run on shards without -k
    takes ceil(m/128) (1 with --paper); the help says the run's default and the summary shows it."""
    from pegasos.defaults import ROUNDS_PER_EPOCH

    command = main.commands["train-shards"]
    param = next(p for p in command.params if p.name == "batch_size")
    shown = param.get_help_record(click.Context(command))[1]
    assert f"[default: ceil(m/{ROUNDS_PER_EPOCH})" in shown and "1 with --paper" in shown and "default: 1;" not in shown
    assert "default: 1;" in next(p for p in main.commands["train"].params if p.name == "batch_size") \
        .get_help_record(click.Context(main.commands["train"]))[1]          # train's own k is 1
    out = tmp_path / "m.model"
    for extra, k in (([], -(-515 // ROUNDS_PER_EPOCH)), (["--paper"], 1)):
        r = CliRunner().invoke(main, ["train-shards", "-l", "1e-2", "--epochs", "1", *extra, str(shards / "bin"),
                                      str(out)])
        assert r.exit_code == 0, r.output
        assert "515 examples in 3 shards" in r.output and f", k = {k}," in r.output, r.output
        assert pegasos.load_model(str(out)).info["batch_size"] == str(k)

def test_a_finish_asked_for_on_shards_is_refused(shards, tmp_path):
    """The dual finish needs the data in memory: train on shards with --finish dual trained plain
    Pegasos without a word; it is now the one error of the options' rule (TrainOptions.check_finish)."""
    why = "the dual finish does not apply here: it needs the data in memory (on shards"
    for changes, given in (({"finish": "dual"}, "finish='dual'"), ({"finish_passes": 3}, "finish_passes=")):
        with pytest.raises(ParameterError, match=re.escape(f"{given}: {why}")):
            fit_shards(str(shards / "bin"), OPTS.replace(**changes))
    r = CliRunner().invoke(main, ["train-shards", "--finish", "dual", str(shards / "bin"), str(tmp_path / "m")])
    assert r.exit_code == 1 and f"Error: --finish dual: {why}" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "m").exists()


def test_no_dask_import_without_the_engine(shards, tmp_path):
    code = ("import sys; from pegasos.cli import main\n"
            "try:\n"
            f"    main(['train-shards', '-q', '-T', '20', {str(shards / 'bin')!r}, {str(tmp_path / 'm.model')!r}])\n"
            "except SystemExit as e:\n"
            "    assert not e.code, e.code\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]\n"
            "assert not bad, bad\n"
            "import pegasos.engine_dask\n"
            "assert 'distributed' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_missing_dask_is_a_one_line_error(shards, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)           # import distributed -> ImportError
    r = CliRunner().invoke(main, ["train-shards", "--engine", "dask", "--local-workers", "2", str(shards / "bin"),
                                  str(tmp_path / "m.model")])
    assert r.exit_code == 1 and not (tmp_path / "m.model").exists()
    assert r.output.strip().splitlines() == ["Error: --engine dask needs Dask: pip install 'pegasos[dask]' "
                                             "(dask[distributed] >= 2024.1)"]


def _reference_optimum(X, y_pm, lam):
    """f* of lambda/2 ||w||^2 + mean hinge (no bias) from LIBLINEAR's dual CD through scikit-learn."""
    from sklearn.svm import LinearSVC

    from reference import objective

    svc = LinearSVC(loss="hinge", C=1.0 / (lam * X.shape[0]), dual=True, tol=1e-10, max_iter=1_000_000,
                    fit_intercept=False).fit(X, y_pm)
    return objective(X, y_pm, lam, svc.coef_.ravel())


def test_automatic_batch_size_bounds_the_rounds_and_is_recorded(shards):
    """auto_batch: k = ceil(n/128), t0 calibrated, 10 epochs; the header records every choice and retrains
    the model bit for bit; the model is near the optimum of an independent solver, and no farther from it
    than k = 1's with ten times the rounds."""
    from pegasos.engine_dask import ROUNDS_PER_EPOCH, automatic_batch_size

    from reference import objective

    assert [automatic_batch_size(n) for n in (1, 127, 128, 129, 515, 10**6)] == [1, 1, 1, 2, 5, 7813]
    folder = str(shards / "bin")
    lam = 1e-2
    model = fit_shards(folder, TrainOptions(lam=lam, seed=3), auto_batch=True)
    info = model.info
    n = 515
    k = -(-n // ROUNDS_PER_EPOCH)
    assert info["batch_size"] == str(k) and info["iterations"] == str(-(-10 * n // k))      # 10 epochs
    assert info["batch_size_rule"].startswith(f"automatic: ceil(m / {ROUNDS_PER_EPOCH})")
    t0 = float(info["step_offset"])
    assert info["step_offset_rule"] == "calibrated" and float(info["eta0"]) == pytest.approx(1 / (lam * t0))
    again = fit_shards(folder, TrainOptions(lam=lam, seed=3, batch_size=k, step_offset=t0))
    assert np.array_equal(again.w, model.w) and "batch_size_rule" not in again.info
    X, y, _ = _concat(sorted((shards / "bin").glob("*.svm")))
    f_star = _reference_optimum(X, y, lam)
    f = objective(X, y, lam, model.w)
    f_one = objective(X, y, lam, fit_shards(folder, TrainOptions(lam=lam, seed=3)).w)     # k = 1, T = 10 n
    assert f_star - 1e-9 <= f <= 1.025 * f_star, (f, f_star)
    assert f - f_star <= 1.5 * (f_one - f_star), (f, f_one, f_star)       # 10x fewer rounds, no worse
    # a given k is kept
    assert fit_shards(folder, TrainOptions(lam=lam, seed=3, batch_size=2)).info["batch_size"] == "2"


def test_train_on_shards_without_k_chooses_it(shards, tmp_path):
    folder = str(shards / "bin")
    runner = CliRunner()
    for extra, k, rule in (([], "5", True), (["-k", "1"], "1", False), (["--paper"], "1", False)):
        out = tmp_path / f"m{len(extra)}{k}.model"
        r = runner.invoke(main, ["train-shards", "-q", "-l", "1e-2", *extra, folder, str(out)])
        assert r.exit_code == 0, r.output
        header = dict(line.split(" ", 1) for line in out.read_text().splitlines()[1:30] if " " in line)
        assert header["batch_size"] == k and ("batch_size_rule" in header) == rule, (extra, header)
    loaded = pegasos.load_model(str(tmp_path / "m05.model"))
    assert loaded.info["batch_size_rule"].startswith("automatic")


# ------------------------------------------------------------------ Dask --

@pytest.fixture(scope="module")
def threads_cluster():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    yield cluster
    cluster.close()


def test_dask_threads_bit_identical_to_local(shards, threads_cluster):
    folder = str(shards / "bin")
    settings = EngineSettings(engine="dask", scheduler=threads_cluster.scheduler_address)
    for opts in (OPTS, OPTS.replace(bias="feature", batch_size=1, projection=True)):
        local = fit_shards(folder, opts)
        dask = fit_shards(folder, opts, settings)
        assert np.array_equal(dask.w, local.w) and dask.bias == local.bias
        assert dask.info["engine"] == "dask"
    avg = EngineSettings(engine="dask", scheduler=threads_cluster.scheduler_address, sync_every=5)
    assert np.array_equal(fit_shards(folder, OPTS, avg).w, fit_shards(folder, OPTS, EngineSettings(sync_every=5)).w)


def test_replicas_follow_the_driver(shards):
    """Two in-process workers that receive the updates (as actors do) hold w_T after T rounds."""
    from pegasos.engine_dask import _LocalGroup, _train

    folder = shards / "bin"
    specs = expand_shards(str(folder))
    workers = [ShardWorker([specs[0], specs[2]], [0, 2]), ShardWorker([specs[1]], [1])]
    opts = OPTS.replace(average_from=None)
    model = _train([_LocalGroup(w) for w in workers], specs, str(folder), opts, EngineSettings(), None, None)
    assert np.array_equal(model.w, fit_shards(str(folder), opts).w)
    before = fit_shards(str(folder), opts.replace(iterations=149))     # replicas lack only the last update
    for w in workers:
        assert w.state.t == 149 and np.array_equal(w.state.weights()[0], before.w)


def test_cli_dask_scheduler(shards, tmp_path, threads_cluster):
    a, b = tmp_path / "local.model", tmp_path / "dask.model"
    args = ["train-shards", "-q", "-T", "100", "-k", "32", "--t0", "5", str(shards / "reg" / "*.svm")]
    for extra, out in (([], a), (["--engine", "dask", "--scheduler", threads_cluster.scheduler_address], b)):
        r = CliRunner().invoke(main, args[:-1] + ["--loss", "eps-insensitive"] + extra + [args[-1], str(out)])
        assert r.exit_code == 0, r.output
    ta = a.read_text().replace("engine local", "engine dask")
    assert ta == b.read_text()


@pytest.mark.slow
def test_dask_processes_identical_and_a_killed_worker(shards, tmp_path):
    """2 worker processes: the model of --engine local bit for bit; then a worker killed mid-run ends the
    run with one ClusterError naming the checkpoint, and resuming from it gives the uninterrupted model."""
    distributed = pytest.importorskip("distributed")
    folder = str(shards / "bin")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    try:
        settings = EngineSettings(engine="dask", scheduler=cluster.scheduler_address)
        assert np.array_equal(fit_shards(folder, OPTS, settings).w, fit_shards(folder, OPTS).w)
        (tmp_path / "bad.svm").write_text("1 1:1\n-1 2:x\n")         # a worker's DataError crosses back whole
        with pytest.raises(DataError, match=r"bad.svm, line 2: "):
            fit_shards(str(tmp_path / "bad.svm"), OPTS.replace(batch_size=1), settings)
        with distributed.Client(cluster) as client:
            pids = sorted(client.run(os.getpid).values())
        opts = OPTS.replace(iterations=2000)
        ck = str(tmp_path / "k.ckpt")
        seen = [0]

        def kill_at_60(n):
            seen[0] += n
            if seen[0] == 60:
                os.kill(pids[-1], signal.SIGKILL)

        timer = threading.Timer(50, lambda: os.kill(pids[0], signal.SIGKILL))     # bound: never hang
        timer.start()
        try:
            with pytest.raises(ClusterError, match=rf"round 61 on the workers failed .*{ck} holds round 50: "
                                                   rf"rerun with --resume {ck}"):
                fit_shards(folder, opts, EngineSettings(engine="dask", scheduler=cluster.scheduler_address,
                                                        checkpoint_every=25, checkpoint=ck), progress=kill_at_60)
        finally:
            timer.cancel()
    finally:
        cluster.close()
    resumed = fit_shards(folder, opts, EngineSettings(resume=ck))         # the same run, continued locally
    assert np.array_equal(resumed.w, fit_shards(folder, opts).w)


def test_cli_checkpoint_and_resume(shards, tmp_path):
    out, again = tmp_path / "m.model", tmp_path / "again.model"
    args = ["-T", "150", "-k", "16", "--seed", "3", "--t0", "10", "-l", "1e-2", "--checkpoint-every", "40",
            str(shards / "bin")]
    r = CliRunner().invoke(main, ["train-shards", "-q"] + args + [str(out)])
    assert r.exit_code == 0, r.output
    ck = str(out) + ".ckpt"
    assert os.path.exists(ck) and pegasos.load_model(ck + ".model").info["iterations"] == "120"
    r = CliRunner().invoke(main, ["train-shards", "-q", "--resume", ck] + args[:-3] + [str(shards / "bin"), str(again)])
    assert r.exit_code == 0, r.output
    assert np.array_equal(pegasos.load_model(str(again)).w, pegasos.load_model(str(out)).w)
    r = CliRunner().invoke(main, ["train-shards", "-q", "--resume", ck, "-T", "150", "-k", "16", "--seed", "3", "--t0", "10",
                                  "-l", "0.5", str(shards / "bin"), str(again)])
    assert r.exit_code == 1 and "Error: --resume" in r.output and "lambda" in r.output


@pytest.mark.slow
def test_cli_local_workers(shards, tmp_path):
    pytest.importorskip("distributed")
    a, b = tmp_path / "local.model", tmp_path / "dask.model"
    base = ["train-shards", "-q", "-T", "60", "-k", "64", "--t0", "10", "--split", "3", str(shards / "bin" / "a.svm")]
    assert CliRunner().invoke(main, base + [str(a)]).exit_code == 0
    r = CliRunner().invoke(main, base[:-1] + ["--engine", "dask", "--local-workers", "2", base[-1], str(b)])
    assert r.exit_code == 0, r.output
    assert a.read_text().replace("engine local", "engine dask") == b.read_text()


@pytest.mark.parametrize("args, fragments", [
    (("--engine", "dask", "DATA"), ("--engine is an option of pegasos train-shards",)),
    (("--split", "2", "DATA"), ("--split is an option of pegasos train-shards",)),
    (("--resume", "m.ckpt", "DATA"), ("--resume is an option of pegasos train-shards", "--init")),
    (("SHARDS",), ("pegasos train-shards",)),
])
def test_train_points_to_train_shards(shards, tmp_path, args, fragments):
    """Training on shards is its own command: train answers its options and a DATA of shards (a directory,
    a glob) with it, in one line."""
    args = [str(shards / "bin" / "a.svm") if a == "DATA" else str(shards / "bin") if a == "SHARDS" else a
            for a in args]
    r = CliRunner().invoke(main, ["train", *args, str(tmp_path / "m")])
    assert r.exit_code in (1, 2) and "Traceback" not in r.output and not (tmp_path / "m").exists()
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and all(f in lines[0] for f in fragments), r.output


def test_a_file_named_like_a_glob_is_that_file(shards, tmp_path):
    odd = tmp_path / "d[1]*.svm"
    odd.write_bytes((shards / "bin" / "a.svm").read_bytes())
    assert [s.path for s in expand_shards(str(odd))] == [str(odd)]
    out = tmp_path / "m.model"
    r = CliRunner().invoke(main, ["train", "-q", "-T", "20", str(odd), str(out)])
    assert r.exit_code == 0, r.output
    assert "engine" not in out.read_text()          # the ordinary in-memory training


# ------------------------------------------------- cv, search and estimators on Dask --

@pytest.fixture(scope="module")
def engine(threads_cluster):
    distributed = pytest.importorskip("distributed")
    from pegasos.engine_dask import DaskEngine

    with distributed.Client(threads_cluster) as client:
        yield DaskEngine(client)


def _without_seconds(result):
    """A cv or search result with the training times (which differ between runs) removed."""
    if isinstance(result, dict):
        return {k: _without_seconds(v) for k, v in result.items() if k != "seconds"}
    if isinstance(result, list):
        return [_without_seconds(v) for v in result]
    return result


def test_cross_validate_on_dask_is_the_local_one(shards, engine):
    from pegasos.selection import DataFile

    path = str(shards / "bin" / "a.svm")
    opts = TrainOptions(lam=1e-3, epochs=3, batch_size=4, seed=5)
    local = pegasos.cross_validate(path, opts, folds=4)
    remote = pegasos.cross_validate(path, opts, folds=4, engine=engine)
    assert _without_seconds(remote) == _without_seconds(local)
    assert len(remote["per_fold"]) == 4 and remote["examples"] == 300
    reg = str(shards / "reg" / "a.svm")
    ropts = opts.replace(loss="eps-insensitive", epsilon=0.1)
    assert _without_seconds(pegasos.cross_validate(DataFile(reg), ropts, folds=3, engine=engine)) == \
        _without_seconds(pegasos.cross_validate(reg, ropts, folds=3))
    with pytest.raises(ParameterError, match="a file the workers read"):
        pegasos.cross_validate(read_svmlight(path), opts, engine=engine)
    with pytest.raises(ParameterError, match="jobs"):
        pegasos.cross_validate(path, opts, jobs=2, engine=engine)
    with pytest.raises(ParameterError, match="the data have 300"):          # a worker's error, as raised
        pegasos.cross_validate(path, opts, folds=301, engine=engine)


def test_search_on_dask_is_the_local_one(shards, engine):
    path = str(shards / "bin" / "a.svm")
    opts = TrainOptions(epochs=2, batch_size=8, seed=2)
    lams = [1e-3, 1e-2, 1e-1]
    for warm in (True, False):
        local = pegasos.search(path, opts, lams, folds=3, warm_start=warm)
        remote = pegasos.search(path, opts, lams, folds=3, warm_start=warm, engine=engine)
        assert _without_seconds(remote) == _without_seconds(local) and remote["warm_start"] == warm
    val = str(shards / "bin" / "b.svm")
    assert _without_seconds(pegasos.search(path, opts, lams, validation=val, engine=engine)) == \
        _without_seconds(pegasos.search(path, opts, lams, validation=read_svmlight(val)))


def test_cli_cv_and_search_on_dask(shards, tmp_path, threads_cluster):
    import json

    path = str(shards / "bin" / "a.svm")
    dask = ["--engine", "dask", "--scheduler", threads_cluster.scheduler_address]
    runs = {}
    for name, extra in (("local", []), ("dask", dask)):
        r = CliRunner().invoke(main, ["cv", "--json", "-v", "3", "--epochs", "2"] + extra + [path])
        assert r.exit_code == 0, r.output
        runs["cv", name] = _without_seconds(json.loads(r.output))
        out = tmp_path / f"{name}.model"
        r = CliRunner().invoke(main, ["search", "--json", "-l", "1e-3:1e-1", "--points", "3", "-v", "3"] + extra
                               + [path, str(out)])
        assert r.exit_code == 0, r.output
        runs["search", name] = {k: v for k, v in _without_seconds(json.loads(r.output)).items() if k != "model"}
    assert runs["cv", "local"] == runs["cv", "dask"] and runs["search", "local"] == runs["search", "dask"]
    assert (tmp_path / "local.model").read_bytes() == (tmp_path / "dask.model").read_bytes()
    for extra, words in ((["--jobs", "2"], "--jobs"), (["--cache", str(tmp_path / "c")], "--cache")):
        r = CliRunner().invoke(main, ["cv"] + dask + extra + [path])
        assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output, r.output
    r = CliRunner().invoke(main, ["cv", "--local-workers", "2", path])
    assert r.exit_code == 2 and "need --engine dask" in r.output


def test_fit_and_estimators_with_an_engine(shards, engine):
    from sklearn.base import clone

    from pegasos.engine_dask import array_shards
    from pegasos.sklearn import PegasosClassifier, PegasosRegressor

    folder = str(shards / "bin")
    assert np.array_equal(pegasos.fit(folder, OPTS, engine=engine).w, fit_shards(folder, OPTS).w)
    # k = 1 not given as a keyword is the automatic k of pegasos train on shards without -k
    plain = OPTS.replace(batch_size=1)
    auto = pegasos.fit(folder, plain, engine=engine)
    assert "batch_size_rule" in auto.info and int(auto.info["batch_size"]) > 1
    assert np.array_equal(auto.w, fit_shards(folder, plain, auto_batch=True).w)
    one = pegasos.fit(folder, plain, engine=engine, batch_size=1)
    assert "batch_size_rule" not in one.info and int(one.info["batch_size"]) == 1
    with pytest.raises(ParameterError, match="not arrays"):
        pegasos.fit((np.eye(3), np.array([1.0, -1.0, 1.0])), OPTS, engine=engine)
    X, y, _ = _concat(sorted((shards / "bin").glob("*.svm")))
    labels = np.where(y > 0, "spam", "ham")
    est = PegasosClassifier(engine=engine, batch_size=8, epochs=4, random_state=3).fit(X, labels)
    assert list(est.classes_) == ["ham", "spam"] and clone(est).engine is engine
    # the same run in this process: two row blocks (two workers), class "ham" -> 0, "spam" -> 1
    common = {k: v for k, v in est._common().items() if k not in ("sampling", "step_offset")}   # t0: calibrated
    ref = fit_shards(array_shards(X, (y > 0).astype(np.float64), 2), TrainOptions(**common),
                     EngineSettings(zero_based=True, n_features=X.shape[1]))
    assert np.array_equal(est.coef_.ravel(), ref.w) and est.intercept_[0] == ref.bias
    assert est.score(X, labels) > 0.8
    with pytest.raises(ParameterError, match="sample_weight"):
        est.fit(X, labels, sample_weight=np.ones(X.shape[0]))
    Xr, yr, _ = _concat(sorted((shards / "reg").glob("*.svm")))
    reg = PegasosRegressor(engine=engine, batch_size=4, epochs=5).fit(Xr, yr)
    assert reg.score(Xr, yr) > 0.5


def test_estimator_with_an_engine_trains_one_vs_rest(classes3, engine):
    from pegasos.engine_dask import array_shards
    from pegasos.sklearn import PegasosClassifier

    X, y, _ = _concat(sorted(classes3.glob("*.svm")))
    est = PegasosClassifier(engine=engine, batch_size=8, iterations=60).fit(X, y)
    common = {k: v for k, v in est._common().items() if k not in ("sampling", "step_offset")}   # t0: calibrated
    ref = fit_shards(array_shards(X, y, 2), TrainOptions(**common),
                     EngineSettings(zero_based=True, n_features=X.shape[1]))
    assert list(est.classes_) == [2.0, 5.0, 9.0] and np.array_equal(est.coef_, ref.W)
    assert np.array_equal(est.predict(X), ref.predict(X))
    with pytest.raises(ParameterError, match="crammer-singer"):
        PegasosClassifier(engine=engine, multiclass="crammer-singer").fit(X, y)


def test_estimator_defaults_on_an_engine_choose_k_and_calibrate_t0(shards, engine):
    """With engine and no batch_size: k = ceil(m/128) (a bounded number of rounds an epoch), t0
    calibrated as on shards, 10 epochs, each choice in the header; the same as fit_shards(auto_batch)."""
    from pegasos.engine_dask import array_shards
    from pegasos.sklearn import PegasosClassifier

    X, y, _ = _concat(sorted((shards / "bin").glob("*.svm")))
    est = PegasosClassifier(engine=engine, alpha=1e-2, random_state=3).fit(X, y)
    info = est.model_.info
    assert info["batch_size"] == "5" and info["iterations"] == "1030" and "batch_size_rule" in info
    assert info["step_offset_rule"] == "calibrated" and "eta0" in info
    ref = fit_shards(array_shards(X, y, 2), TrainOptions(lam=1e-2, seed=3, epochs=10),
                     EngineSettings(zero_based=True, n_features=X.shape[1]), auto_batch=True)
    assert np.array_equal(est.coef_.ravel(), ref.w) and est.intercept_[0] == ref.bias
    assert est.n_iter_ == 10


# ------------------------------------------------------------ one-vs-rest on shards --

@pytest.fixture(scope="module")
def classes3(tmp_path_factory):
    """Two shards (130 and 70 examples) of a 3-class problem with labels 2, 5, 9."""
    root = tmp_path_factory.mktemp("ovr")
    rng = np.random.default_rng(11)
    centres = rng.normal(size=(3, 12)) * 2
    for name, m in (("a", 130), ("b", 70)):
        with open(root / f"{name}.svm", "w") as f:
            for _ in range(m):
                c = int(rng.integers(3))
                x = centres[c] + rng.normal(size=12)
                f.write(f"{(2, 5, 9)[c]} " + " ".join(f"{j + 1}:{v:.5g}" for j, v in enumerate(x)) + "\n")
    return root


def test_ovr_on_shards_is_one_binary_shard_run_per_class(classes3, tmp_path):
    """Class c's weights are those of the binary shard run of c against the rest (labels rewritten), bit for bit."""
    opts = OPTS.replace(iterations=120)
    model = fit_shards(str(classes3 / "*.svm"), opts)
    assert model.task == "multiclass" and model.class_texts == ["2", "5", "9"] and model.W.shape[0] == 3
    for c, label in enumerate(("2", "5", "9")):
        folder = tmp_path / label
        folder.mkdir()
        for name in ("a.svm", "b.svm"):
            lines = (classes3 / name).read_text().splitlines()
            (folder / name).write_text("".join(("1" if ln.split()[0] == label else "-1") + ln[ln.index(" "):] + "\n"
                                               for ln in lines))
        ref = fit_shards(str(folder / "*.svm"), opts)
        assert np.array_equal(model.W[c], ref.w) and model.biases[c] == ref.bias
    # class weights follow the original label: class 5's weight is the positives' weight of "5 against the rest"
    weighted = fit_shards(str(classes3 / "*.svm"), opts.replace(class_weight={5.0: 2.0}))
    ref = fit_shards(str(tmp_path / "5" / "*.svm"), opts.replace(class_weight={1.0: 2.0}))
    assert np.array_equal(weighted.W[1], ref.w) and not np.array_equal(weighted.W[1], model.W[1])
    X, y, _ = _concat(sorted(classes3.glob("*.svm")))
    assert np.mean(model.predict(X) == y) > 0.9


def test_ovr_on_dask_is_the_local_shard_run(classes3, threads_cluster, tmp_path):
    opts = OPTS.replace(iterations=80, bias="feature", batch_size=8)
    local = fit_shards(str(classes3 / "*.svm"), opts)
    dask = fit_shards(str(classes3 / "*.svm"), opts, EngineSettings(engine="dask",
                                                                     scheduler=threads_cluster.scheduler_address))
    assert np.array_equal(dask.W, local.W) and np.array_equal(dask.biases, local.biases)
    a, b = tmp_path / "local.model", tmp_path / "dask.model"
    for extra, out in (([], a), (["--engine", "dask", "--scheduler", threads_cluster.scheduler_address], b)):
        r = CliRunner().invoke(main, ["train-shards", "-q", "-T", "40", "-k", "8", "--t0", "10"] + extra
                               + [str(classes3 / "*.svm"), str(out)])
        assert r.exit_code == 0, r.output
    assert a.read_text().replace("engine local", "engine dask") == b.read_text()
    assert pegasos.load_model(str(b)).task == "multiclass"


def test_unset_t0_is_calibrated_on_a_sample_of_the_shards(shards, monkeypatch):
    """The t0 of a run without one: calibrate_step_offset on s examples drawn from the union of the shards
    (distinct, uniform, keyed by the seed; s = 1000, here 200), carried to n by sqrt(s / n)."""
    from pegasos import autotune
    from pegasos.autotune import calibrate_step_offset

    monkeypatch.setattr(autotune, "DEFAULT_SAMPLE_SIZE", 200)
    folder = shards / "bin"
    opts = TrainOptions(lam=1e-3, iterations=50, batch_size=4, seed=6, projection=True)
    model = fit_shards(str(folder), opts)
    X, y, sizes = _concat(sorted(folder.glob("*.svm")))
    n = X.shape[0]
    s = 200
    picked = np.sort(np.random.Generator(np.random.PCG64([6, 3])).choice(n, size=s, replace=False))
    _, eta0_s, _ = calibrate_step_offset(X[picked], y[picked], 1e-3, seed=6, average_from=opts.average_from,
                                         sampling="uniform", details=True, batch_size=4, projection=True,
                                         bias="none", n_features=X.shape[1], sample_weight=None,
                                         labels=pegasos.BinaryLabels(-1.0, 1.0))
    assert float(model.info["step_offset"]) == 1.0 / (1e-3 * eta0_s * np.sqrt(s / n))
    assert model.info["step_offset_rule"] == "calibrated"
    again = fit_shards(str(folder), opts.replace(step_offset=float(model.info["step_offset"])))
    assert np.array_equal(again.w, model.w)


def test_ovr_calibrates_on_the_largest_class_of_the_sample(classes3):
    """One t0 for every class: the one the binary shard run of the sample's largest class against the rest gets."""
    opts = OPTS.replace(iterations=30, step_offset=None)
    model = fit_shards(str(classes3 / "*.svm"), opts)
    X, y, _ = _concat(sorted(classes3.glob("*.svm")))
    picked = np.random.Generator(np.random.PCG64([3, 3])).choice(200, size=200, replace=False)
    largest = max((2.0, 5.0, 9.0), key=lambda c: (np.sum(y[picked] == c), -c))
    assert model.info["step_offset_rule"] == "calibrated"
    from pegasos.autotune import calibrate_step_offset

    _, eta0, _ = calibrate_step_offset(X[np.sort(picked)], np.where(y[np.sort(picked)] == largest, 1.0, -1.0), opts.lam,
                                       seed=3, average_from=opts.average_from, sampling="uniform", details=True,
                                       batch_size=16, projection=False, bias="none", n_features=X.shape[1],
                                       sample_weight=None, labels=pegasos.BinaryLabels(-1.0, 1.0))
    assert float(model.info["step_offset"]) == 1.0 / (opts.lam * eta0)


def test_a_pickled_engine_connects_again(engine, threads_cluster):
    import pickle

    from pegasos.engine_dask import DaskEngine

    again = pickle.loads(pickle.dumps(engine))
    assert again.settings.scheduler == threads_cluster.scheduler_address and again._client is None
    assert pickle.loads(pickle.dumps(DaskEngine(local_workers=3))).settings.local_workers == 3
    with pytest.raises(ParameterError, match="one of"):
        DaskEngine()


def test_tol_gap_is_refused_on_shards(shards, tmp_path):
    """tol_gap needs the certificate's passes over the data in memory: on shards it is refused in one
    line (it was ignored: the model had no certified gap and ended 3.3% above f*)."""
    with pytest.raises(ParameterError, match="tol_gap: the certified gap needs the data in memory"):
        fit_shards(str(shards / "bin"), OPTS.replace(tol_gap=0.01, iterations=None, step_offset=None))
