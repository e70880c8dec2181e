"""Shared fixtures: where the shared datasets and failure cases live, and how
to run the installed ``pegasos`` command."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("PEGASOS_DATA", ROOT.parent / "shared" / "data")).resolve()
CASES_DIR = Path(os.environ.get("PEGASOS_CASES", ROOT.parent / "shared" / "cases")).resolve()


#: With PEGASOS_REQUIRE_SHARED=1 (set by .ci/run) a missing shared file fails the test;
#: otherwise the tests that need an absent shared folder are skipped and the rest run.
REQUIRE_SHARED = os.environ.get("PEGASOS_REQUIRE_SHARED", "") not in ("", "0")


def shared_path(folder, relative, variable):
    """Path of ``folder/relative``; skips the calling test when ``folder`` is absent
    (fails instead with PEGASOS_REQUIRE_SHARED=1), fails when only the file is missing."""
    path = folder / relative
    if path.exists():
        return path
    if folder.is_dir() or REQUIRE_SHARED:
        pytest.fail(f"shared file {path} is missing (set {variable})")
    pytest.skip(f"needs the shared folder {folder}, which is absent (set {variable})")


def data_file(relative):
    """Path of a file under the shared data directory (see :func:`shared_path`)."""
    return shared_path(DATA_DIR, relative, "PEGASOS_DATA")


def case_file(name):
    """Path of a file under the shared cases directory (see :func:`shared_path`)."""
    return shared_path(CASES_DIR, name, "PEGASOS_CASES")


class SharedData(os.PathLike):
    """A shared data file named at import time and looked up when a test uses it.

    Module-level constants hold one of these instead of calling :func:`data_file`
    during collection, so that without the shared folder only the tests that read
    the file are skipped.  ``str()``, ``os.fspath()`` and f-strings give the path;
    attributes (``read_bytes``, ``name``, ...) are those of the :class:`Path`.
    """

    def __init__(self, relative):
        self.relative = relative

    @property
    def path(self):
        return data_file(self.relative)

    def __fspath__(self):
        return str(self.path)

    def __str__(self):
        return str(self.path)

    def __format__(self, spec):
        return format(str(self.path), spec)

    def __repr__(self):
        return f"SharedData({self.relative!r})"

    def __getattr__(self, name):
        if name.startswith("__"):  # probes such as __name__ must not look the file up
            raise AttributeError(name)
        return getattr(self.path, name)


def pegasos_executable():
    """The ``pegasos`` console script installed next to this Python."""
    exe = Path(sys.executable).parent / "pegasos"
    if exe.exists():
        return str(exe)
    found = shutil.which("pegasos")
    if not found:
        pytest.fail("the pegasos command is not installed (run `make install`)")
    return found


def run_pegasos(*args, input=None, cwd=None, env=None):
    """Run the installed command; returns CompletedProcess with text stdout/stderr."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run([pegasos_executable(), *map(str, args)], input=input, capture_output=True,
                          text=True, cwd=cwd, env=full_env, timeout=600)


def run_pegasos_paper(*args, **kwargs):
    """run_pegasos, with ``train --paper``: for tests written against the paper's Fig. 1 settings
    (i.i.d. sampling, last iterate, t0 = 0, 10 epochs) for whatever options they leave out."""
    if args and args[0] == "train" and "--paper" not in args:
        args = ("train", "--paper", *args[1:])
    return run_pegasos(*args, **kwargs)


def ok(r):
    """Assert a successful run without a traceback; return stdout."""
    assert r.returncode == 0, f"exit {r.returncode}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    return r.stdout


def error_line(r, *fragments, file=None, line=None, status=None):
    """Assert a failed run (exit ``status`` if given) with exactly one ``Error: ...``
    line on stderr naming ``file`` and ``line N``, containing every fragment;
    return that line."""
    assert r.returncode != 0, f"expected failure, got exit 0\nstdout: {r.stdout[-2000:]}"
    if status is not None:
        assert r.returncode == status, f"exit {r.returncode}\nstdout: {r.stdout[-500:]}\nstderr: {r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"want one error line, got:\n{r.stderr}"
    msg = lines[0]
    assert msg.startswith("Error: "), msg
    if file is not None:
        assert str(file) in msg, f"{file} not named in {msg!r}"
    if line is not None:
        assert re.search(rf"\bline {line}\b", msg), f"'line {line}' not in {msg!r}"
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    return msg


def rebuilt_cache(r, cache, *fragments):
    """Assert a successful run (-q) whose stderr is one note that the damaged cache ``cache`` was
    rebuilt, holding every fragment; return the note."""
    ok(r)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"want one note, got:\n{r.stderr}"
    note = lines[0]
    assert note.startswith(f"pegasos: note: {cache}: damaged cache file ("), note
    assert "rebuilding it from " in note, note
    for frag in fragments:
        assert frag in note, f"{frag!r} not in {note!r}"
    return note


def one_error(r, *fragments):
    """A failed run (exit 1) with exactly one 'Error: ...' line holding every fragment."""
    return error_line(r, *fragments, status=1)


def usage_error(r, *fragments):
    """A wrong command line (exit 2: a bad option value, options that do not go together) with exactly one
    'Error: ...' line holding every fragment."""
    return error_line(r, *fragments, status=2)


@pytest.fixture
def pegasos_run():
    return run_pegasos
