"""Errors that used to come out without the file they are about.

1. A model header whose ``n_features`` cannot fit in memory is refused with
   one line naming the model file, the ``n_features`` line and the memory
   needed (linear, regression, one-vs-rest, Crammer-Singer), instead of
   "out of memory"; a kernel model, which keeps no dense weights, still loads.
   Kernel parameters beyond what the compiled code takes (a degree above
   2^31 - 1 in a header or on the command line, a huge budget or cache) give
   an error or mean "no limit", never a crash.
2. Errors the API raises about one example of the training data by position
   (no qid for the rank loss, ...) name DATA's file and line through the
   command line (``example N of standard input`` for ``-``), and errors about
   the examples as a whole (a class weight for a label not in the data, no
   ranking pair, a stray huge feature index) name the file.
"""

import bz2
import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import SharedData, ok, one_error, usage_error, pegasos_executable
# these tests pin the paper's settings for the options they leave out
from conftest import run_pegasos_paper as run_pegasos

HEART = SharedData("heart_scale/heart_scale")
DNA = SharedData("dna/dna.scale")
HUGE = "99999999999999"


def set_header(text, key, value):
    out, n = re.subn(rf"(?m)^{key} .*$", f"{key} {value}", text)
    assert n == 1
    return out


def header_line(text, key):
    return next(i + 1 for i, ln in enumerate(text.splitlines()) if ln.split(" ", 1)[0] == key)


# --------------------------------------------------------------------------- 1. model headers

MODELS = {
    "linear": (HEART, ("--epochs", "1")),
    "regression": (HEART, ("--epochs", "1", "--loss", "eps-insensitive")),
    "ovr": (DNA, ("--epochs", "1")),
    "crammer-singer": (DNA, ("--epochs", "1", "--multiclass", "crammer-singer")),
    "kernel": (HEART, ("--epochs", "1", "--kernel", "rbf", "--gamma", "0.1")),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    out = {}
    for name, (data, opts) in MODELS.items():
        ok(run_pegasos("train", "-q", *opts, data, d / f"{name}.model"))
        out[name] = d / f"{name}.model"
    return out


@pytest.mark.parametrize("kind", ["linear", "regression", "ovr", "crammer-singer"])
@pytest.mark.parametrize("command", ["predict", "eval", "objective"])
def test_huge_n_features_in_a_header_is_a_one_line_error(tmp_path, models, kind, command):
    text = set_header(models[kind].read_text(), "n_features", HUGE)
    bad = tmp_path / "big.model"
    bad.write_text(text)
    data = HEART if kind in ("linear", "regression") else DNA
    r = run_pegasos(command, data, bad, cwd=tmp_path)
    msg = one_error(r, str(bad), f"line {header_line(text, 'n_features')}", f"n_features {HUGE}", "GiB",
                    "this process can allocate")
    assert "out of memory" not in msg
    assert r.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == ["big.model"]


def test_huge_n_features_api_error(tmp_path, models):
    from pegasos import load_model
    from pegasos.errors import ModelFormatError

    bad = tmp_path / "big.model"
    bad.write_text(set_header(models["ovr"].read_text(), "n_features", HUGE))
    with pytest.raises(ModelFormatError, match=rf"big.model, line \d+: n_features {HUGE}( times classes \d+)? in the header needs "
                                               r"[\d.]+ GiB"):
        load_model(bad)


def test_header_memory_bound_follows_the_machine(tmp_path, models):
    """Just below and above the memory the process can allocate (the training bound):
    loading holds the weights plus one vector."""
    from pegasos.errors import ModelFormatError
    from pegasos.model import check_weights_fit

    from pegasos.data import memory_limit

    lines = ["pegasos_model 1", "n_features 5"]
    for rows in (1, 3):
        fits = int(0.98 * memory_limit() / 8 / (rows + 1)) - 16     # the limit moves with other processes
        check_weights_fit("m", lines, fits, rows)
        with pytest.raises(ModelFormatError, match=r"^m, line 2: n_features"):
            check_weights_fit("m", lines, int(1.02 * memory_limit() / 8 / (rows + 1)), rows)


def test_kernel_model_with_huge_n_features_still_predicts(tmp_path, models):
    """A kernel model keeps only its sparse support vectors: n_features costs nothing."""
    good = ok(run_pegasos("predict", HEART, models["kernel"]))
    big = tmp_path / "big.model"
    big.write_text(set_header(models["kernel"].read_text(), "n_features", HUGE))
    assert ok(run_pegasos("predict", HEART, big)) == good


def test_kernel_degree_beyond_a_c_int(tmp_path, models):
    poly = tmp_path / "poly.model"
    ok(run_pegasos("train", "-q", "--epochs", "1", "--kernel", "poly", HEART, poly))
    bad = tmp_path / "bad.model"
    bad.write_text(set_header(poly.read_text(), "degree", "99999999999"))
    one_error(run_pegasos("predict", HEART, bad), str(bad), "degree 99999999999")
    for degree in ("2147483648", "99999999999"):
        usage_error(run_pegasos("train", "-q", "--kernel", "poly", "--degree", degree, HEART, tmp_path / "m"),
                  "degree", degree)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.model", "poly.model"]


def test_a_huge_budget_means_no_limit_and_a_cache_beyond_memory_is_refused(tmp_path):
    opts = ("-q", "--epochs", "1", "--kernel", "rbf", "--gamma", "0.1")
    ok(run_pegasos("train", *opts, HEART, tmp_path / "plain.model"))
    ok(run_pegasos("train", *opts, "--budget", "99999999999999999999", HEART, tmp_path / "budget.model"))
    one_error(run_pegasos("train", *opts, "--cache-mb", "1e300", HEART, tmp_path / "cache.model"),
              "--cache-mb: a cache of 1e+300 MiB is more than the")
    ok(run_pegasos("train", *opts, "--cache-mb", "1000", HEART, tmp_path / "cache.model"))
    plain = (tmp_path / "plain.model").read_text()
    assert (tmp_path / "cache.model").read_text() == plain
    # the budget is recorded as given; the support vectors are the same
    budget = (tmp_path / "budget.model").read_text()
    assert set_header(budget, "budget", "-") == plain


def test_failed_kernel_state_construction_does_not_crash():
    code = ("import numpy as np\nfrom pegasos import _kernel\n"
            "for kw in ({'degree': 2**40}, {'budget': 2**70}, {'cache_bytes': 2**70}):\n"
            "    args = dict(degree=3, budget=0, cache_bytes=0); args.update(kw)\n"
            "    try:\n"
            "        _kernel.KernelState(np.zeros(2, np.int64), np.zeros(0, np.int32), np.zeros(0), np.ones(1), 1, 1,"
            " 1.0, 0.0, args['degree'], 1.0, 1, False, 0, args['budget'], args['cache_bytes'])\n"
            "    except OverflowError:\n"
            "        print('refused')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["refused"] * 3


# --------------------------------------------------------------------------- 2. example N -> file, line N

RANK = ("# queries\n"
        "\n"
        "3 qid:1 1:3 2:0.5\n"
        "  \t\n"
        "2 qid:1 1:2   # a comment\n"
        "   # indented comment\n"
        "0 qid:1 1:0.5 2:1\n"
        "1 1:1\n"                       # line 8, example 4: no qid
        "2 qid:2 1:-4 2:0.3\n")


def test_rank_loss_without_qid_names_file_and_line(tmp_path):
    msg = one_error(run_pegasos("train", "--loss", "rank", HEART, "m", cwd=tmp_path), f"{HEART}, line 1:", "qid")
    assert "example" not in msg
    data = tmp_path / "r.svm"
    data.write_text(RANK)
    one_error(run_pegasos("train", "--loss", "rank", data, "m", cwd=tmp_path), f"{data}, line 8:", "no qid:")
    crlf = tmp_path / "crlf.svm"
    crlf.write_bytes(RANK.replace("\n", "\r\n").encode())
    one_error(run_pegasos("train", "--loss", "rank", crlf, "m", cwd=tmp_path), f"{crlf}, line 8:")
    for name, pack in (("r.svm.gz", gzip.compress), ("r.svm.bz2", bz2.compress)):
        packed = tmp_path / name
        packed.write_bytes(pack(RANK.encode()))
        one_error(run_pegasos("train", "--loss", "rank", packed, "m", cwd=tmp_path), f"{packed}, line 8:")
    cache = tmp_path / "r.cache"
    one_error(run_pegasos("train", "--loss", "rank", "--cache", cache, data, "m", cwd=tmp_path), f"{data}, line 8:")
    assert not (tmp_path / "m").exists()


def test_rank_loss_from_standard_input_names_the_example(tmp_path):
    r = run_pegasos("train", "--loss", "rank", "--cache", tmp_path / "c", "-", tmp_path / "m", input=RANK)
    one_error(r, "example 4 of standard input:", "no qid:")


def test_rank_loss_qid_too_large_and_no_pairs(tmp_path):
    data = tmp_path / "big.svm"
    data.write_text("1 qid:1 1:1\n\n2 qid:99999999999999999999 1:2\n")
    one_error(run_pegasos("train", "--loss", "rank", data, "m", cwd=tmp_path), f"{data}, line 3:", "qid")
    same = tmp_path / "same.svm"
    same.write_text("1 qid:1 1:1\n1 qid:1 1:2\n2 qid:2 1:3\n")
    one_error(run_pegasos("train", "--loss", "rank", same, "m", cwd=tmp_path), f"{same}: no pair")


def test_ranking_metrics_without_qid_name_file_and_line(tmp_path):
    # eval and objective of a ranking model need queries as training does: a file without qid:
    # (or with one line lacking it) gave "queries 0, pairwise accuracy n/a" and exit 0
    train = tmp_path / "train.svm"
    train.write_text(RANK.replace("1 1:1\n", "1 qid:2 1:1\n"))
    model = tmp_path / "rank.model"
    ok(run_pegasos("train", "-q", "--loss", "rank", "-l", "0.1", train, model))
    assert "pairwise accuracy" in ok(run_pegasos("eval", train, model))
    data = tmp_path / "r.svm"
    data.write_text(RANK)
    plain = tmp_path / "plain.svm"
    plain.write_text("3 1:1\n1 1:0.5 2:1\n")
    for command in ("eval", "objective"):
        one_error(run_pegasos(command, data, model), f"{data}, line 8:", "no qid:")
        one_error(run_pegasos(command, plain, model), f"{plain}, line 1:", "no qid:")
        one_error(run_pegasos(command, "-", model, input=RANK), "example 4 of standard input:", "no qid:")
    big = tmp_path / "big.svm"
    big.write_text("1 qid:1 1:1\n\n2 qid:99999999999999999999 1:2\n")
    one_error(run_pegasos("eval", big, model), f"{big}, line 3:", "qid")
    assert ok(run_pegasos("predict", plain, model)).count("\n") == 2     # scores need no queries
    empty = tmp_path / "empty.svm"
    empty.write_text("# nothing\n")
    assert "n/a" in ok(run_pegasos("eval", empty, model))


def test_ranking_metrics_without_qid_in_python():
    import pegasos
    from pegasos.errors import ExampleError
    from pegasos.scoring import evaluate, objective

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.0]])
    y = np.array([2.0, 1.0, 0.0, 1.0])
    model = pegasos.train(X, y, loss="rank", qid=np.array([1, 1, 2, 2]), epochs=2)
    for score in (evaluate, objective):
        with pytest.raises(ExampleError, match="example 1: no qid"):
            score(model, X, y)
        with pytest.raises(ExampleError, match="example 3: no qid"):
            score(model, X, y, qid=np.array([1, 1, -1, 2]))
        assert score(model, X, y, qid=np.array([1, 1, 2, 2]))["examples"] == 4


def test_class_weight_for_a_missing_label_names_the_file(tmp_path):
    one_error(run_pegasos("train", "-w", "3:2", HEART, "m", cwd=tmp_path), f"{HEART}:", "label 3")
    one_error(run_pegasos("train", "-w", "7:2", DNA, "m", cwd=tmp_path), f"{DNA}:", "label 7")


def test_stray_huge_index_names_the_file(tmp_path):
    data = tmp_path / "huge.svm"
    data.write_text("1 2000000000:1\n-1 1:1\n")
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if 8 * 2e9 * 3 < 0.9 * total:
        pytest.skip("this machine has enough memory for 2e9 weights")
    one_error(run_pegasos("train", data, "m", cwd=tmp_path), f"{data}, line 1:", "n_features = 2000000000")


def test_example_error_api():
    import pegasos
    from pegasos.errors import ExampleError, ParameterError

    with pytest.raises(ExampleError) as info:
        pegasos.train(np.eye(3), np.array([1.0, 2.0, 3.0]), loss="rank", qid=np.array([1, -1, 1]), epochs=1)
    e = info.value
    assert isinstance(e, ParameterError) and e.example == 1 and str(e).startswith("example 2: no qid:")
    assert str(e.in_file("d.svm", 7)) == f"d.svm, line 7: {e.detail}"
    assert str(e.in_file("d.svm")) == f"d.svm, example 2: {e.detail}"
    assert str(e.in_file("-")) == f"example 2 of standard input: {e.detail}"
    with pytest.raises(ExampleError, match=r"^example 3: label 5 is not one of the model's labels"):
        pegasos.linear.BinaryLabels(1.0, 2.0).encode([1.0, 2.0, 5.0])


@pytest.mark.parametrize("block_size", [1, 5, 64, 1 << 22])
def test_example_line_counts_only_example_lines(tmp_path, block_size):
    from pegasos.io import example_line

    text = (b"# c\n\n \t\v\f\r\n1 1:1\n   # x\n2\n\r\n  3 2:1 # y\n#\n4 1:2")      # last line without newline
    path = tmp_path / "d.svm"
    path.write_bytes(text)
    assert [example_line(str(path), i, block_size=block_size) for i in range(5)] == [4, 6, 8, 10, None]
    gz = tmp_path / "d.gz"
    gz.write_bytes(gzip.compress(text))
    assert [example_line(str(gz), i, block_size=block_size) for i in range(4)] == [4, 6, 8, 10]
    assert example_line("-", 0) is None and example_line(str(tmp_path / "missing"), 0) is None


def test_example_line_agrees_with_the_reader(tmp_path):
    """The reader's first line of each label is the line example_line gives its first example."""
    from pegasos.io import example_line, read_svmlight

    text = "# head\n\n+1 1:1\n  # c\n-1 2:1\n\n\n2 3:1\n   \n3 1:1 # t\n"
    path = tmp_path / "d.svm"
    path.write_text(text)
    d = read_svmlight(str(path))
    for label in d.distinct_labels:
        first = int(np.flatnonzero(d.y == label.value)[0])
        assert example_line(str(path), first) == label.line
