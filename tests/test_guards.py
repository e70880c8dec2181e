"""Guards for scripts: `eval --fail-under/--fail-over` (exit 3, naming metric, value and threshold),
unknown metric names (usage error, exit 2, listing the names), `--compare` and `--fail-if-worse`."""

import json

import pytest

import pegasos

import small_data
from conftest import ok, one_error, usage_error, run_pegasos


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("guards")
    X, y = small_data.binary(m=400)
    data = small_data.write_svm(tmp / "d.svm", X, y)
    ok(run_pegasos("train", "-q", "-l", "1e-2", "--epochs", "5", data, tmp / "good.model"))
    ok(run_pegasos("train", "-q", "--paper", "-l", "10", "-T", "3", data, tmp / "bad.model"))
    good = pegasos.evaluate_file(pegasos.load_model(str(tmp / "good.model")), str(data))
    bad = pegasos.evaluate_file(pegasos.load_model(str(tmp / "bad.model")), str(data))
    assert good["accuracy"] > bad["accuracy"]
    return data, tmp / "good.model", tmp / "bad.model", good, bad


def test_fail_under_and_over(files):
    data, good, _, r, _ = files
    acc = r["accuracy"]
    ok(run_pegasos("eval", data, good, "--fail-under", f"accuracy={acc - 0.01}"))
    ok(run_pegasos("eval", data, good, "--fail-under", f"accuracy={acc!r}"))          # equal passes
    out = run_pegasos("eval", data, good, "--fail-under", f"accuracy={acc + 0.01}", "--fail-under", "f1=0")
    assert out.returncode == 3 and "accuracy" in out.stdout             # the metrics are still printed
    assert out.stderr.strip() == (f"guard failed: accuracy {acc:.6g} is below {acc + 0.01!r} "
                                  f"(--fail-under accuracy={acc + 0.01!r})")
    out = run_pegasos("eval", "--json", data, good, "--fail-over", f"hinge_loss={r['hinge_loss'] / 2}")
    assert out.returncode == 3 and "hinge_loss" in out.stderr and "above" in out.stderr
    assert json.loads(out.stdout)["accuracy"] == acc


@pytest.mark.parametrize("args", [("--fail-under", "acc=0.8"), ("--fail-over", "mse=1"),
                                  ("--fail-if-worse", "accuracy")])
def test_usage_errors(files, args):
    data, good, _, _, _ = files
    out = run_pegasos("eval", data, good, *args)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    if args[0] != "--fail-if-worse":
        assert "accuracy, precision, recall, f1, roc_auc, hinge_loss" in out.stderr
    else:
        assert "needs --compare" in out.stderr
    out = run_pegasos("eval", data, good, "--fail-under", "accuracy=high")
    assert out.returncode == 2 and "METRIC=NUMBER" in out.stderr
    out = run_pegasos("eval", data, good, "--fail-under", "0.95")       # the metric left out: not "unknown metric"
    assert out.returncode == 2 and "expects METRIC=NUMBER, got '0.95'" in out.stderr and "unknown" not in out.stderr


def test_compare_and_fail_if_worse(files):
    data, good, bad, r_good, r_bad = files
    text = ok(run_pegasos("eval", data, good, "--compare", bad, "--fail-if-worse", "accuracy"))
    line = next(l for l in text.splitlines() if l.startswith("accuracy"))
    assert f"{r_good['accuracy']:.4f}" in line and f"{r_bad['accuracy']:.4f}" in line and "(better)" in line
    both = json.loads(ok(run_pegasos("eval", "--json", data, good, "--compare", bad)))
    assert both["new"] == r_good and both["old"] == r_bad
    out = run_pegasos("eval", data, bad, "--compare", good, "--fail-if-worse", "accuracy",
                      "--fail-if-worse", "hinge_loss")
    assert out.returncode == 3
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and "accuracy" in lines[0] and "worse than" in lines[0] and "hinge_loss" in lines[1]
    ok(run_pegasos("eval", data, good, "--compare", good, "--fail-if-worse", "accuracy"))   # equal: not worse


@pytest.mark.parametrize("opts, fragment", [
    (["-p", "0.5"], "-p/--epsilon is the width of the eps-insensitive loss"),
    (["--cache-mb", "10"], "--cache-mb sizes the cache of kernel rows"),
    (["--trace-points", "5"], "--trace-points sets the checks of --trace FILE or --validation FILE"),
    (["--trace-budget", "0.2"], "--trace-budget bounds the checks of --trace FILE"),
    (["--early-stop-metric", "objective"], "--early-stop-metric chooses what --early-stop watches"),
])
def test_options_the_run_would_ignore_are_refused(tmp_path, opts, fragment):
    """These were accepted and ignored (or, for --checkpoint-every/--sync-every on one plain file, switched
    silently to the shard trainer with the paper's settings), while their siblings (--gamma, --budget) were
    refused."""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{i % 7 / 7:.3f} 2:{i % 5 / 5:.2f}\n" for i in range(40)))
    usage_error(run_pegasos("train", *opts, data, tmp_path / "m.model"), fragment)
    assert not (tmp_path / "m.model").exists()


def test_the_options_are_taken_where_they_apply(tmp_path):
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{i % 3 - 1 + 0.5} 1:{i % 7 / 7:.3f} 2:{i % 5 / 5:.2f}\n" for i in range(40)))
    ok(run_pegasos("train", "-q", "--loss", "eps-insensitive", "-p", "0.2", data, tmp_path / "r.model"))
    ok(run_pegasos("train", "-q", "--loss", "eps-insensitive", "--epochs", "2", "--trace", tmp_path / "t.csv",
                   "--trace-points", "3", "--trace-budget", "0", data, tmp_path / "t.model"))


@pytest.mark.parametrize("solver", ["auto", "pegasos"])
def test_regression_targets_whose_sum_overflows_are_named_in_one_line(tmp_path, solver):
    """Targets like 1e308 make the loss at w = 0 (a mean over the examples) infinite: every solver's error
    named the scale vaguely after a numpy RuntimeWarning; the target and its line are named, nothing else."""
    data = tmp_path / "r.svm"
    data.write_text("5 1:0.5\n1e308 1:1\n-1e308 2:1\n")
    r = run_pegasos("train", "--loss", "eps-insensitive", "--solver", solver, str(data), str(tmp_path / "r.model"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "r.svm, line 2: target 1e+308" in r.stderr and "rescale" in r.stderr
    assert not (tmp_path / "r.model").exists()
    from pegasos.errors import ExampleError

    with pytest.raises(ExampleError, match="example 2"):
        pegasos.fit(str(data), loss="eps-insensitive")


@pytest.mark.parametrize("command", ["cv", "search"])
@pytest.mark.parametrize("opts, fragment", [
    (["-p", "0.5"], "-p/--epsilon is the width of the eps-insensitive loss"),
    (["--cache-mb", "10"], "--cache-mb sizes the cache of kernel rows"),
])
def test_cv_and_search_refuse_the_model_options_train_refuses(tmp_path, command, opts, fragment):
    """cv and search train train's model: what train refuses as unused by it, they refuse too (they took
    -p with the hinge loss and --cache-mb with a linear model and ignored them)."""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{i % 7 / 7:.3f} 2:{i % 5 / 5:.2f}\n" for i in range(40)))
    usage_error(run_pegasos(command, *opts, data), fragment)
