"""The README stays a one-page introduction whose commands exist; the manual's
navigation names its pages; ``python -m pegasos`` is the command line.

The manual itself is built (and its links and docstrings checked) by
``make docs``, which runs ``mkdocs build --strict`` in CI (.ci/run).
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def readme_section(title_word):
    """The lines of the README section whose '## ' heading contains title_word."""
    lines = README.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    for a, b in zip(starts, starts[1:] + [len(lines)]):
        if title_word in lines[a]:
            return lines[a + 1:b]
    raise AssertionError(f"README.md has no '## ' section whose heading contains {title_word!r}")


def test_readme_fits_on_a_page():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= 250, f"README.md has {n} lines; keep it to 250 and move details into docs/"


def test_readme_gives_the_test_command():
    # .ci/run and CI read the test command from the README
    assert "make test" in README.read_text(encoding="utf-8")


def test_readme_default_solver_section_is_short():
    body = [line for line in readme_section("--solver") if line.strip()]
    assert body, "the --solver section is empty"
    assert len(body) <= 10, f"the README's --solver section has {len(body)} lines of text; keep it to 10"


def test_quick_start_commands_exist():
    from pegasos.cli import main

    text = "\n".join(readme_section("Quick start"))
    named = {m.group(1) for m in re.finditer(r"^\s*pegasos\s+([a-z][a-z-]*)", text, re.M)}
    assert {"train", "predict", "eval", "objective"} <= named, named
    missing = sorted(named - set(main.commands))
    assert not missing, f"the README's quick start names commands the CLI does not have: {missing}"


def test_readme_command_table_matches_cli():
    from pegasos.cli import main

    rows = re.findall(r"^\| `pegasos ([a-z-]+)", "\n".join(readme_section("Commands")), re.M)
    assert sorted(rows) == sorted(main.commands), (rows, sorted(main.commands))


def test_manual_navigation_names_every_page():
    yml = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    in_nav = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", yml, re.M))
    on_disk = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert in_nav, "mkdocs.yml has no nav entries"
    assert in_nav == on_disk, (sorted(in_nav - on_disk), sorted(on_disk - in_nav))


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
