"""Shared fixtures: where the shared datasets and failure cases live, and how
to run the installed ``pegasos`` command."""

import os
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


@pytest.fixture
def pegasos_run():
    return run_pegasos
