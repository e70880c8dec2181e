"""The exit status of a wrong command line: every bad option value of every command (of click's types and
ranges, or checked by pegasos itself) is one line ``Error: ...`` naming the option, exit status 2, as
docs/commands.md says; a run that failed on its files or data is exit status 1.

Before, ``train -c 0`` exited 2 and ``train -l 0`` 1, and click's own range errors (``--jobs 0``) printed
three lines of usage text."""

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pegasos.cli import main

from conftest import error_line, run_pegasos

ROOT = Path(__file__).resolve().parent.parent
USAGE_ERROR = 2         # docs/commands.md's "Exit status and signals"

BINARY = "+1 1:1 2:0.5\n-1 2:1\n+1 1:0.7\n-1 2:0.8 3:0.1\n+1 1:0.9\n-1 2:0.7\n"

#: each command's arguments on the files of the ``files`` fixture
ARGUMENTS = {"train": ["b.svm", "out.model"], "train-shards": ["b.svm", "out.model"], "cv": ["b.svm"],
             "search": ["b.svm"], "objective": ["b.svm", "b.model"], "eval": ["b.svm", "b.model"],
             "predict": ["b.svm", "b.model", "p.txt"], "plot": ["t.csv", "-o", "x.png"], "info": ["b.model"]}


def numeric_options():
    """(command, option) for every option of every command that takes a number."""
    out = []
    for name, command in sorted(main.commands.items()):
        for p in command.params:
            if isinstance(p, click.Option) and not p.is_flag and isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType)):
                out.append((name, p))
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("exit")
    (d / "b.svm").write_text(BINARY)
    for args in (["train", "-q", "b.svm", "b.model"], ["train", "-q", "--epochs", "2", "--trace", "t.csv", "b.svm", "m2"]):
        r = run_pegasos(*args, cwd=d)
        assert r.returncode == 0, r.stderr
    return d


def test_every_command_is_walked():
    assert set(main.commands) == set(ARGUMENTS)          # (eval and predict have no numeric option)
    assert {name for name, _ in numeric_options()} >= {"train", "train-shards", "cv", "search", "objective",
                                                       "plot", "info"}


@pytest.mark.parametrize("command,option", numeric_options(), ids=lambda v: v if isinstance(v, str) else v.opts[0])
def test_a_bad_option_value_is_one_line_and_exit_status_2(files, monkeypatch, command, option):
    monkeypatch.chdir(files)
    runner = CliRunner()
    for value in ("0", "-1", "nan", "inf"):
        r = runner.invoke(main, [command, option.opts[0], value, *ARGUMENTS[command]])
        assert not (r.exception is not None and not isinstance(r.exception, SystemExit)), \
            (command, option.opts, value, r.exception)
        if r.exit_code == 0:          # a value the option takes (--t0 0, --top 0, --seed 0)
            for written in ("out.model", "p.txt"):
                (files / written).unlink(missing_ok=True)
            continue
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        shown = f"{command} {option.opts[0]} {value}: exit {r.exit_code}\n{r.stderr}"
        assert r.exit_code == USAGE_ERROR, shown
        assert len(lines) == 1 and lines[0].startswith("Error: "), shown
        assert "Traceback" not in r.output
        assert any(re.search(rf"(^|[^-\w]){re.escape(o)}\b", lines[0]) for o in option.opts), shown
        assert not (files / "out.model").exists() and not (files / "p.txt").exists()


def test_zero_and_negative_counts_are_refused(files, monkeypatch):
    """The walk above accepts an exit 0; these values are refused, so that it cannot pass on a command that
    takes every value."""
    monkeypatch.chdir(files)
    runner = CliRunner()
    for args in (["train", "-l", "0"], ["train", "-c", "0"], ["train", "-k", "0"], ["train", "--jobs", "0"],
                 ["train", "--tol", "nan"], ["cv", "-v", "1"], ["train-shards", "--split", "0"],
                 ["objective", "--sample", "0"], ["plot", "--optimum", "-1"], ["info", "--top", "-1"]):
        r = runner.invoke(main, [*args, *ARGUMENTS[args[0]]])
        assert r.exit_code == USAGE_ERROR, (args, r.exit_code, r.stderr)


def test_the_convention_is_the_documented_one(files):
    doc = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| {USAGE_ERROR} \| (.*)\|$", doc, re.M)
    assert row and "outside its range" in row.group(1), row
    # the same through the installed command: one line, exit 2; a data error stays exit 1
    error_line(run_pegasos("train", "-l", "0", files / "b.svm", files / "out.model"), "--lambda",
               status=USAGE_ERROR)
    error_line(run_pegasos("train", "--jobs", "0", files / "b.svm", files / "out.model"), "--jobs",
               status=USAGE_ERROR)
    (files / "bad.svm").write_text("+1 1:x\n")
    error_line(run_pegasos("train", files / "bad.svm", files / "out.model"), "line 1", status=1)
    assert not (files / "out.model").exists()


#: (command, option, the least value it takes): counts and bounds declared as click ranges, which --help
#: shows; 0 is a value of its own for the three of bound 0 (no cache, the epoch ends only, no budget)
RANGES = [("train", "-k", 1), ("train", "--max-classes", 2), ("train", "--degree", 1), ("train", "--budget", 1),
          ("train", "--shuffle-buffer", 1), ("train", "--trace-sample", 1), ("train", "--early-stop", 1),
          ("train", "--jobs", 1), ("train", "--cache-mb", 0), ("train", "--trace-points", 0),
          ("train", "--trace-budget", 0), ("train-shards", "--split", 1), ("train-shards", "--checkpoint-every", 1),
          ("train-shards", "--local-workers", 1), ("cv", "--local-workers", 1), ("cv", "-v", 2),
          ("search", "--points", 2), ("search", "--gamma-points", 2), ("objective", "--gap-passes", 0),
          ("info", "--top", 0)]


@pytest.mark.parametrize("command,spelling,least", RANGES)
def test_counts_and_budgets_are_ranges_the_help_shows(files, monkeypatch, command, spelling, least):
    """--cache-mb 0, --trace-points 0 and --trace-budget 2 were taken and are: each has a meaning the help
    now says (0: no row cache; 0: checks at the epoch ends only; F times the training time, 0 no bound).
    The counts below their least value are refused by their range, exit 2, and every range is in --help-all."""
    monkeypatch.chdir(files)
    param = next(p for p in main.commands[command].params if spelling in p.opts)
    assert isinstance(param.type, (click.IntRange, click.FloatRange)) and param.type.min == least
    assert not param.type.min_open
    shown = param.get_help_record(click.Context(main.commands[command]))[1]        # as --help-all lists it
    assert re.search(rf"\[(default: [^;\]]+; )?({least}<=x|x>={least})", shown), shown
    r = CliRunner().invoke(main, [command, spelling, str(least - 1), *ARGUMENTS[command]])
    assert r.exit_code == USAGE_ERROR and "is not in the range" in r.stderr, (r.exit_code, r.stderr)


def test_the_values_of_their_own_are_taken_and_said(files):
    """--cache-mb 0 (no cache: the same model), --trace-points 0 and --trace-budget 2 run."""
    kernel = ["train", "-q", "--kernel", "rbf", "--epochs", "2", "b.svm"]
    assert run_pegasos(*kernel, "a.model", cwd=files).returncode == 0
    assert run_pegasos(*kernel, "--cache-mb", "0", "b.model0", cwd=files).returncode == 0
    assert (files / "a.model").read_text() == (files / "b.model0").read_text()
    r = run_pegasos("train", "-q", "--epochs", "3", "--trace", "p.csv", "--trace-points", "0", "--trace-budget", "2",
                    "b.svm", "c.model", cwd=files)
    assert r.returncode == 0, r.stderr
    rows = [row for row in (files / "p.csv").read_text().splitlines() if not row.startswith("#")]
    assert rows[0].startswith("t,epoch,")
    epochs = [float(row.split(",")[1]) for row in rows[1:]]
    assert epochs == [1.0, 2.0, 3.0], rows        # the epoch ends only (T is the last)
