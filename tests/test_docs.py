"""``python -m pegasos`` is the command line; the package ships its PEP 561 marker."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_python_dash_m_pegasos():
    r = subprocess.run([sys.executable, "-m", "pegasos", "--help"], capture_output=True, text=True, timeout=120,
                       cwd=ROOT / "tests")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: pegasos "), r.stdout[:200]
    for command in ("train", "predict", "eval", "objective"):
        assert re.search(rf"^\s+{command}\s", r.stdout, re.M), (command, r.stdout)


def test_python_dash_m_pegasos_runs_a_command():
    model = ROOT / "tests" / "golden" / "average_all.model"
    r = subprocess.run([sys.executable, "-m", "pegasos", "info", str(model)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^\s+kind\s+linear$", r.stdout, re.M), r.stdout
    # a usage error names the command as typed at a shell, not __main__.py
    r = subprocess.run([sys.executable, "-m", "pegasos", "info", "--no-such-option", str(model)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Usage: pegasos info" in r.stderr, r.stderr


def test_py_typed_is_package_data():
    assert (ROOT / "pegasos" / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = pyproject.split("[tool.setuptools.package-data]", 1)
    assert len(section) == 2 and "py.typed" in section[1].split("\n[", 1)[0], \
        "pyproject.toml's [tool.setuptools.package-data] must list py.typed"
