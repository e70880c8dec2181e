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


def data_file(relative):
    """Path of a file under the shared data directory; fails (never skips) if absent."""
    path = DATA_DIR / relative
    if not path.exists():
        pytest.fail(f"shared dataset {path} is missing (set PEGASOS_DATA)")
    return path


def case_file(name):
    """Path of a file under the shared cases directory; fails if absent."""
    path = CASES_DIR / name
    if not path.exists():
        pytest.fail(f"shared case {path} is missing (set PEGASOS_CASES)")
    return path


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


def one_error(r, *fragments):
    """A failed run (exit 1) with exactly one 'Error: ...' line holding every fragment."""
    return error_line(r, *fragments, status=1)


@pytest.fixture
def pegasos_run():
    return run_pegasos
