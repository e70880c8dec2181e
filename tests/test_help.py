"""The help of train, cv and search (a screen of the options most runs need; --help-all every option,
in sections, with its whole text), -c C (LIBLINEAR's C), and the one-line answers to LIBLINEAR's,
SVMlight's and scikit-learn's spellings of options pegasos spells otherwise (one spelling per feature)."""

import json
import re

import click
import pytest

from pegasos import cli
from pegasos.cli import SHORT_HELP_OPTIONS
from pegasos.cli.options import short_text

from conftest import error_line, ok, one_error, run_pegasos

COMMANDS = {"train": cli.train, "cv": cli.cv, "search": cli.search, "train-shards": cli.train_shards}
SCREEN = {"COLUMNS": "80"}


def help_of(command, flag="--help"):
    return ok(run_pegasos(command, flag, env=SCREEN))


def options_of(command):
    """The click options of ``command`` that a help lists, with every spelling of each."""
    cmd = COMMANDS[command]
    ctx = click.Context(cmd, info_name=command, help_option_names=["-h", "--help"])  # as main sets them
    return [p for p in cmd.get_params(ctx) if isinstance(p, click.Option) and not p.hidden]


def spelled(opt, text):
    return re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text) is not None


def entries(out):
    """{first spelling: number of help lines} of the options listed in the Options section of ``out``."""
    body = out.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    found, name = {}, None
    for line in body:
        if re.match(r"  -", line):
            name = line.split()[0].rstrip(",")
            found[name] = 1 if re.match(r"  \S.*?\S {2,}\S", line) else 0
        else:
            found[name] += 1
    return found


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_fits_a_screen_and_names_help_all(command):
    out = help_of(command)
    lines = out.rstrip("\n").splitlines()
    assert len(lines) <= 60, f"{command} --help has {len(lines)} lines"
    assert "--help-all" in lines[-1]
    listed = entries(out)
    hidden = len(options_of(command)) - len(listed)
    assert hidden > 0 and f"({hidden} more)" in lines[-1]
    for name, n in listed.items():
        assert 1 <= n <= 2, f"{command} --help: {name} takes {n} lines"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_lists_only_the_chosen_options(command):
    listed = set(entries(help_of(command)))
    for p in options_of(command):
        shown = p.opts[0] in listed
        chosen = (p.name in SHORT_HELP_OPTIONS or f"{command}:{p.name}" in SHORT_HELP_OPTIONS
                  or "--help" in p.opts)
        assert shown == chosen, f"{command} --help: {p.opts[0]} shown {shown}, chosen {chosen}"


def test_train_help_shows_the_everyday_options():
    listed = set(entries(help_of("train")))
    for opt in ("-l", "-c", "-T", "--epochs", "--tol", "--loss", "--bias", "--multiclass", "-w", "--kernel",
                "--gamma", "-k", "--seed", "--jobs", "-q", "--stream", "--init", "--json", "--help-all", "-h"):
        assert opt in listed, f"train --help does not list {opt}"
    assert "--finish" not in listed and "--trace" not in listed


@pytest.mark.parametrize("command", ["train", "cv", "search", "train-shards"])
def test_help_states_the_bias_of_each_task(command):
    """--bias's default depends on the loss (pegasos.options.DEFAULT_BIAS); the short listing says so."""
    from pegasos.options import DEFAULT_BIAS

    out = " ".join(help_of(command).split())
    assert (f"--bias [none|feature|unregularized] The intercept b [default: {DEFAULT_BIAS['binary']}; "
            f"{DEFAULT_BIAS['regression']} for --loss eps-insensitive]") in out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_all_lists_every_option_with_its_whole_text(command):
    out = help_of(command, "--help-all")
    flat = "".join(out.split())
    for p in options_of(command):
        for opt in p.opts + p.secondary_opts:
            assert spelled(opt, out), f"{command} --help-all does not list {opt}"
        if p.help:
            assert "".join(p.help.split()) in flat, f"{command} --help-all cuts the text of {p.opts[0]}"
    in_memory = ("Kernels", "Data larger than memory") if command != "train-shards" else ("Shards and clusters",)
    for heading in ("Solver", "Problem", "Input and output") + in_memory:
        assert f"\n{heading}" in out


def test_the_short_listing_cuts_a_long_text_at_its_first_clause():
    long = "Passes over the data instead of T: T = epochs*m/k [default: none where the finish (the solver); " + \
           "else until the objective settles, else 10]."
    assert short_text("epochs", long) == "Passes over the data instead of T: T = epochs*m/k."
    assert short_text("x", "Threads (any number; same model); one-vs-rest in parallel.") == \
        "Threads (any number; same model)."
    assert short_text("x", "Kernel gamma > 0 [default: 1/n_features].") == \
        "Kernel gamma > 0 [default: 1/n_features]."


# ---------------------------------------------------------------- -c C --

def write_data(path, m=60):
    rows = []
    for i in range(m):
        y = 1 if i % 3 else -1
        rows.append(f"{y} 1:{(i % 7) / 7 * y:.3f} 2:{(i % 5) / 5:.3f} 3:{((i * 13) % 11) / 11 - 0.5 * y:.3f}")
    path.write_text("\n".join(rows) + "\n")
    return path


def header(path, key):
    for line in path.read_text().splitlines():
        if line.startswith(key + " "):
            return line.split(" ", 1)[1]
    raise AssertionError(f"no {key} in {path}")


def test_c_is_lambda_one_over_c_m(tmp_path):
    data = write_data(tmp_path / "d.svm", m=60)
    ok(run_pegasos("train", "-q", "-c", "2", "--epochs", "2", data, tmp_path / "c.model"))
    ok(run_pegasos("train", "-q", "-l", repr(1 / (2 * 60)), "--epochs", "2", data, tmp_path / "l.model"))
    assert float(header(tmp_path / "c.model", "lambda")) == 1 / (2 * 60)
    assert (tmp_path / "c.model").read_text() == (tmp_path / "l.model").read_text()


@pytest.mark.parametrize("how", [("--stream", "--epochs", "1"), ("--cache", "CACHE", "--epochs", "1"),
                                 ("--kernel", "rbf", "-T", "50")])
def test_c_counts_the_examples_however_data_is_read(tmp_path, how):
    data = write_data(tmp_path / "d.svm", m=60)
    how = [str(tmp_path / "d.cache") if a == "CACHE" else a for a in how]
    ok(run_pegasos("train", "-q", "-c", "4", *how, data, tmp_path / "m"))
    assert float(header(tmp_path / "m", "lambda")) == 1 / (4 * 60)


def test_c_in_cross_validation_uses_the_examples_of_data(tmp_path):
    data = write_data(tmp_path / "d.svm", m=60)
    r = json.loads(ok(run_pegasos("cv", "--json", "-q", "-v", "3", "-c", "0.5", "--epochs", "1", data)))
    assert r["options"]["lam"] == 1 / (0.5 * 60)


@pytest.mark.parametrize("args, fragments, status", [
    (("-c", "1", "-l", "0.01"), ("give either -c or -l/--lambda",), 2),
    (("-c", "1", "--loss", "rank"), ("--loss rank", "pairs"), 2),
    (("-c", "0"), ("positive number",), 2),
])
def test_c_refused_where_it_has_no_m(tmp_path, args, fragments, status):
    data = write_data(tmp_path / "d.svm")
    error_line(run_pegasos("train", *args, data, tmp_path / "m"), *fragments, status=status)
    assert not (tmp_path / "m").exists()


def test_search_answers_c_with_its_grid(tmp_path):
    data = write_data(tmp_path / "d.svm")
    error_line(run_pegasos("search", "-c", "1", data), "-l LO:HI", status=2)


# ------------------------------------------------------- other tools' spellings --

@pytest.mark.parametrize("args, fragments", [
    (("-B", "1"), ("LIBLINEAR's -B 1", "--bias feature")),
    (("-B1",), ("LIBLINEAR's -B 1", "--bias feature")),
    (("-B", "-1"), ("--bias none",)),
    (("-e", "0.1"), ("LIBLINEAR's -e 0.1", "--tol")),
    (("-s", "2"), ("LIBLINEAR's -s 2", "--loss squared-hinge")),
    (("-s", "4"), ("--multiclass crammer-singer",)),
    (("-s", "0"), ("--loss log",)),
    (("-s", "6"), ("no model", "L1-regularised")),
    (("-t", "2"), ("SVMlight's -t 2", "--kernel rbf")),
    (("-g", "0.5"), ("LIBSVM's -g 0.5", "--gamma 0.5")),
    (("-d3",), ("-d 3", "--degree 3")),
    (("-r", "1"), ("-r 1", "--coef0 1")),
    (("-z", "p"), ("SVMlight's -z p", "--loss rank")),
    (("-z", "r"), ("--loss eps-insensitive",)),
    (("-b", "1"), ("-b 1 (probability estimates)", "--loss log", "predict --proba")),
    # LIBSVM's shrinking switch, which -h (help) would have answered with exit 0 and no model
    (("-h", "0"), ("LIBSVM -h 0", "-h alone")),
    (("-h1",), ("LIBSVM -h 1",)),
])
@pytest.mark.parametrize("command", ["train", "cv"])
def test_other_tools_spellings_get_ours_in_one_line(tmp_path, command, args, fragments):
    data = write_data(tmp_path / "d.svm")
    r = run_pegasos(command, *args, data)
    error_line(r, *fragments, status=2)
    assert "Usage:" not in r.stderr


@pytest.mark.parametrize("command", ["cv", "search"])
def test_explain_is_trains_and_cv_and_search_say_so(tmp_path, command):
    """cv and search train many models: --explain (one run's plan) is train's; they answer in one line and
    train nothing, where they once ignored it and ran every fold (search wrote its model)."""
    data = write_data(tmp_path / "d.svm")
    r = run_pegasos(command, "--explain", data, str(tmp_path / "out.model"))
    error_line(r, "pegasos train --explain DATA", status=2)
    assert not (tmp_path / "out.model").exists()


# ------------------------------------------------------- one spelling per feature --

@pytest.mark.parametrize("command, args, fragments", [
    ("train", ("-v", "3"), ("LIBLINEAR's train -v 3", "pegasos cv -v 3 DATA")),
    ("train", ("-v3",), ("pegasos cv -v 3 DATA",)),
    ("train", ("-j", "2"), ("SVMlight's -j 2", "-w 1:2")),
    ("cv", ("-j", "2"), ("-w 1:2",)),
    ("search", ("-j2",), ("-w 1:2",)),
    ("train", ("-l", "0.01", "--eta0", "0.1"), ("--eta0 0.1", "--t0 1000 ")),
    ("train", ("--eta0", "0.5"), ("--t0 20000 ",)),                       # the default lambda, 1e-4
    ("train", ("-c", "1", "--eta0", "0.5"), ("--t0 1/(lambda ETA0)",)),    # lambda = 1/(C m): m not known yet
    ("cv", ("--eta0=0.1", "--lambda", "0.01"), ("--t0 1000 ",)),
    ("train", ("--tol-gap", "0.001"), ("--tol 0.001", "--solver dual", "pegasos objective --gap")),
    ("train", ("--tol-gap=0.001",), ("--tol 0.001",)),
    ("train", ("--report-gap",), ("pegasos objective --gap DATA MODEL",)),
])
def test_a_feature_spelled_twice_answers_with_its_one_spelling(tmp_path, command, args, fragments):
    """train -v K is pegasos cv, SVMlight's -j FACTOR is -w 1:FACTOR, scikit-learn's --eta0 is --t0, and a
    certificate is asked for with --tol (the dual solver) or pegasos objective --gap (any model): the other
    spellings answer with that one, in one line, exit status 2, and nothing written."""
    data = write_data(tmp_path / "d.svm")
    r = run_pegasos(command, *args, data, cwd=tmp_path)
    error_line(r, *fragments, status=2)
    assert "Usage:" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.svm"]


def test_the_one_spellings_give_the_models_of_the_others(tmp_path):
    """The answers' spellings are exact: --t0 1000 is --eta0 0.1 at lambda 0.01 (the golden eta0.model, written
    by --eta0, is checked in test_golden with --t0 1000; the t0 here is the float 1/(0.01 * 0.1)), and -w 1:3
    weights the positive class of a -1/+1 file as -j 3 did (golden cost_factor_j.model)."""
    assert 1.0 / (0.01 * 0.1) == 1000.0
    data = write_data(tmp_path / "d.svm")
    ok(run_pegasos("train", "-q", "-w", "1:3", "--epochs", "1", data, tmp_path / "w"))
    assert header(tmp_path / "w", "class_weights") == "1:3.0"
    assert header(tmp_path / "w", "label_positive") == "1"


def test_an_option_no_tool_has_is_still_clicks_error(tmp_path):
    r = run_pegasos("train", "-X", "1", write_data(tmp_path / "d.svm"))
    assert r.returncode == 2 and "No such option '-X'" in r.stderr and "pegasos spells" not in r.stderr


def test_liblinear_weights_still_read(tmp_path):
    data = write_data(tmp_path / "d.svm")
    ok(run_pegasos("train", "-q", "-w1", "3", "--epochs", "1", data, tmp_path / "m"))
    assert "class_weights 1:3.0" in (tmp_path / "m").read_text()


@pytest.mark.parametrize("args, fragments", [
    (("--checkpoint-every", "100"), ("--checkpoint-every is an option of pegasos train-shards",)),
    (("--sync-every", "5"), ("--sync-every is an option of pegasos train-shards",)),
    (("--scheduler", "tcp://h:8786"), ("--scheduler is an option of pegasos train-shards",)),
])
def test_the_options_of_shards_are_train_shards(tmp_path, args, fragments):
    """Training on shards is its own command: train answers its options with it, in one line (they were
    accepted on one plain file and switched it silently to the shard trainer)."""
    error_line(run_pegasos("train", *args, write_data(tmp_path / "d.svm"), tmp_path / "m"), *fragments, status=2)
    assert not (tmp_path / "m").exists()


def test_train_shards_refuses_c_in_one_line(tmp_path):
    """-c C is lambda = 1/(C m), and a run on shards starts before the examples are counted."""
    r = run_pegasos("train-shards", "-c", "1", "--split", "2", write_data(tmp_path / "d.svm"), tmp_path / "m")
    error_line(r, "shards", "-l/--lambda", status=2)
    assert not (tmp_path / "m").exists()
