"""The help of train, cv and search: a screen of the options most runs need; --help-all every option,
in sections, with its whole text."""

import re

import click
import pytest

from pegasos import cli
from pegasos.cli import SHORT_HELP_OPTIONS

from conftest import ok, run_pegasos

COMMANDS = {"train": cli.train, "cv": cli.cv, "search": cli.search}
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
    for opt in ("-l", "-T", "--epochs", "--tol", "--loss", "--bias", "--multiclass", "-w", "-j", "--kernel",
                "--gamma", "-k", "--seed", "--jobs", "-q", "--report-gap", "--stream", "--init", "--json", "-v",
                "--help-all", "-h"):
        assert opt in listed, f"train --help does not list {opt}"
    assert "--finish" not in listed and "--trace" not in listed


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_all_lists_every_option_with_its_whole_text(command):
    out = help_of(command, "--help-all")
    flat = "".join(out.split())
    for p in options_of(command):
        for opt in p.opts + p.secondary_opts:
            assert spelled(opt, out), f"{command} --help-all does not list {opt}"
        if p.help:
            assert "".join(p.help.split()) in flat, f"{command} --help-all cuts the text of {p.opts[0]}"
    for heading in ("Solver", "Problem", "Kernels", "Data larger than memory", "Input and output"):
        assert f"\n{heading}" in out


def test_the_short_listing_cuts_a_long_text_at_its_first_clause():
    long = "Passes over the data instead of T: T = epochs*m/k [default: none where the finish (the solver); " + \
           "else until the objective settles, else 10]."
    assert cli._short_text("epochs", long) == "Passes over the data instead of T: T = epochs*m/k."
    assert cli._short_text("x", "Threads (any number; same model); one-vs-rest in parallel.") == \
        "Threads (any number; same model)."
    assert cli._short_text("x", "Kernel gamma > 0 [default: 1/n_features].") == \
        "Kernel gamma > 0 [default: 1/n_features]."
