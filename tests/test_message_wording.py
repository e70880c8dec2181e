"""Messages that pointed the wrong way: a nan called an overflow, NumPy reprs, "1 features", a search's
lambda printed two ways, --early-stop -1 taken for an option, a qid: file trained silently as classes."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos
from pegasos.errors import ExampleError, ParameterError
from pegasos.selection import parse_grid

from conftest import ok, one_error, usage_error, run_pegasos


def _data(m=30, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(m, 5, density=0.6, format="csr", random_state=seed)
    y = np.where(rng.random(m) > 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    return X, y


@pytest.mark.parametrize("kind", ["linear", "multiclass"])
def test_a_nan_decision_value_is_called_not_a_number(kind):
    X, y = _data()
    if kind == "linear":
        model = pegasos.train(X, y, epochs=1)
        model.w[X.indices[0]] = np.nan
    else:
        model = pegasos.train_multiclass(X, np.arange(30) % 3.0, epochs=1)
        model.W[1, X.indices[0]] = np.nan
    with pytest.raises(ExampleError, match=r"not a number \(nan\)") as e:
        model.decision_function(X)
    assert "overflow float64)" not in str(e.value)


def test_an_infinite_decision_value_is_called_an_overflow():
    X, y = _data()
    model = pegasos.train(X, y, epochs=1)
    model.w[:] = 1e308
    with pytest.raises(ExampleError, match=r"not a finite number \(its values times the model's weights overflow") as e:
        model.decision_function(X * 10.0)
    assert "nan" not in str(e.value)


@pytest.mark.parametrize("bad", [np.nan, -1.0, np.inf, 1e300])
def test_sample_weight_errors_show_plain_numbers(bad):
    X, y = _data()
    sw = np.ones(30)
    sw[4] = bad
    with pytest.raises(ExampleError, match=rf"example 5: sample weight {re.escape(repr(float(bad)))} is not") as e:
        pegasos.fit((X, y, None, sw))
    assert "np." not in str(e.value)


def test_counts_take_the_noun_in_their_number():
    from pegasos.errors import counted

    assert [counted(n, "feature") for n in (0, 1, 2)] == ["0 features", "1 feature", "2 features"]
    assert counted(1, "support vector") == "1 support vector" and counted(3, "query", "queries") == "3 queries"
    X, y = _data()
    with pytest.raises(ParameterError, match="sample_weight has 1 weight for 30 examples"):
        pegasos.fit((X, y, None, np.ones(1)))
    from pegasos.data import check_n_features

    with pytest.raises(ParameterError, match="n_features = 0 is less than the 1 column the data use"):
        check_n_features(np.zeros(3, dtype=np.int32), 0)


def test_the_shard_and_kernel_summaries_count_in_the_singular(tmp_path):
    f = tmp_path / "one.svm"
    f.write_text("+1 1:1\n-1 1:-1\n")
    out = ok(run_pegasos("train-shards", "--split", "1", f, tmp_path / "m"))
    assert "2 examples in 1 shard, 1 feature |" in out, out
    out = ok(run_pegasos("train", "--kernel", "rbf", "-T", "1", f, tmp_path / "k"))
    assert ": 1 support vector |" in out, out


def test_a_log_grid_holds_the_values_a_user_writes():
    grid = parse_grid("1e-7:1e-1", 13)
    assert grid[::2] == [1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]
    assert all(len(repr(v)) <= len("0.0003162") for v in grid), grid
    narrow = parse_grid("1e-4:1.0001e-4", 5)                     # more digits only where they are needed
    assert len(set(narrow)) == 5 and narrow == sorted(narrow)


def test_search_prints_the_best_lambda_as_its_table_row(tmp_path):
    X, y = _data(m=40)
    f = tmp_path / "d.svm"
    f.write_text("".join(f"{y[i]:+g} " + " ".join(f"{c + 1}:{float(v)!r}" for c, v in
                                                  zip(X[i].indices, X[i].data)) + "\n" for i in range(40)))
    out = ok(run_pegasos("search", "-l", "1e-7:1e-1", "--points", "13", "--folds", "2", f))
    best = re.search(r"^best: lambda=(\S+)", out, re.M).group(1)
    rows = [ln.split()[1] for ln in out.splitlines() if ln.startswith("* ")]
    assert rows == [best], out
    table = [ln[2:12].strip() for ln in out.splitlines()[2:-1]]
    assert "1e-05" in table and "9.999999999999999e-06" not in out, out


@pytest.mark.parametrize("value", ["-1", "0", "-7"])
def test_a_patience_below_1_is_a_range_error(tmp_path, value):
    f = tmp_path / "d.svm"
    f.write_text("+1 1:1\n-1 2:1\n")
    r = run_pegasos("train", "-q", "--validation", f, "-T", "10", "--early-stop", value, f, tmp_path / "m")
    usage_error(r, f"'--early-stop': {value} is not in the range x>=1")
    assert "No such option" not in r.stderr


QID = "2 qid:1 1:1\n1 qid:1 2:1\n0 qid:2 3:1\n2 qid:2 1:0.5\n1 qid:2 2:0.5\n"


@pytest.mark.parametrize("options", [[], ["--stream", "--cache", "{tmp}/c"]])
def test_a_qid_file_trained_without_the_rank_loss_gets_a_note(tmp_path, options):
    f = tmp_path / "q.svm"
    f.write_text(QID)
    args = [a.format(tmp=tmp_path) for a in options]
    r = run_pegasos("train", *args, f, tmp_path / "m")
    ok(r)
    notes = [ln for ln in r.stderr.splitlines() if "qid: tokens" in ln]
    assert len(notes) == 1 and notes[0].startswith("pegasos: note: ") and "--loss rank" in notes[0], r.stderr
    for quiet_or_rank in (["-q"], ["--loss", "rank"]):
        r = run_pegasos("train", *quiet_or_rank, *args, f, tmp_path / "m")
        ok(r)
        assert "qid: tokens" not in r.stderr, r.stderr


def test_a_binary_qid_file_streamed_gets_the_note(tmp_path):
    f = tmp_path / "q.svm"
    f.write_text("+1 qid:1 1:1\n-1 qid:1 2:1\n+1 qid:2 1:0.5\n")
    r = run_pegasos("train", "--stream", f, tmp_path / "m")
    ok(r)
    assert sum("qid: tokens" in ln for ln in r.stderr.splitlines()) == 1, r.stderr
    plain = tmp_path / "p.svm"
    plain.write_text("+1 1:1\n-1 2:1\n")
    assert "qid: tokens" not in run_pegasos("train", "--stream", plain, tmp_path / "m").stderr
