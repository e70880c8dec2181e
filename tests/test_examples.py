"""The examples run: examples/retrain.sh (the cron job) and examples/Makefile (the lambda sweep),
on data from data_scripts/make_synthetic.py."""

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, pegasos_executable


def _synthetic(path, rows, seed=0):
    subprocess.run([sys.executable, str(ROOT / "data_scripts" / "make_synthetic.py"), "--rows", str(rows),
                    "--features", "100", "--nnz-per-row", "10", "--seed", str(seed), "--quiet", str(path)],
                   check=True)
    return path


def _split(source, parts, sizes):
    lines = source.read_text().splitlines(keepends=True)
    start = 0
    for path, size in zip(parts, sizes):
        path.write_text("".join(lines[start:start + size]))
        start += size


def _flip(source, target):
    out = []
    for line in source.read_text().splitlines(keepends=True):
        label, _, rest = line.partition(" ")
        out.append(("-1" if label == "+1" or label == "1" else "+1") + " " + rest)
    target.write_text("".join(out))


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_retrain_deploys_only_a_model_that_is_not_worse(tmp_path):
    whole = _synthetic(tmp_path / "whole.svm", 6000)
    day1, day2, holdout = tmp_path / "day1.svm", tmp_path / "day2.svm", tmp_path / "holdout.svm"
    _split(whole, [day1, day2, holdout], [200, 3000, 2000])     # day 2 has far more data: a better model
    _flip(day2, tmp_path / "broken.svm")
    env = dict(os.environ, PEGASOS=pegasos_executable(), PEGASOS_TRAIN_OPTIONS="-l 1e-3")
    script = str(ROOT / "examples" / "retrain.sh")
    deployed = tmp_path / "deployed.model"

    def run(today, options="-l 1e-3"):
        return subprocess.run(["sh", script, str(today), str(deployed), str(holdout)], capture_output=True,
                              text=True, env=dict(env, PEGASOS_TRAIN_OPTIONS=options), cwd=tmp_path, timeout=600)

    r = run(day1)                                    # nothing deployed yet: deploys
    assert r.returncode == 0, r.stderr
    assert deployed.exists() and "deployed" in r.stdout
    first = deployed.read_bytes()
    assert b"\ncertified_gap " in first                   # the defaults' model, certified (not --resume-state's)
    # labels flipped, and enough passes over them to undo day 1: worse, refused
    r = run(tmp_path / "broken.svm", "-l 1e-3 --epochs 20")
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "worse" in r.stderr and "guard failed: accuracy" in r.stderr
    assert deployed.read_bytes() == first
    r = run(day2)                                    # as good or better: replaces
    assert r.returncode == 0, r.stderr
    assert deployed.read_bytes() != first

    def iterations(text):          # (none written: the dual alone, T = 0)
        return int(next((line.split()[1] for line in text.splitlines() if line.startswith(b"iterations ")), 0))
    assert iterations(deployed.read_bytes()) > iterations(first)          # day 2 went on from day 1 (--init)
    assert sorted(p.name for p in tmp_path.iterdir() if ".new." in p.name) == []      # no temporary left
    assert subprocess.run(["sh", script], capture_output=True, env=env).returncode == 2
    # a multiclass model (which --init and --resume-state do not take) is retrained from scratch: the first
    # run of the script used to fail on it
    deployed = tmp_path / "classes.model"
    classes = tmp_path / "classes.svm"
    classes.write_text("".join(f"{1 + i % 3} {1 + i % 3}:1 4:{i % 5 / 5}\n" for i in range(90)))
    for _ in range(2):
        r = subprocess.run(["sh", script, str(classes), str(deployed)], capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=600)
        assert r.returncode == 0 and "deployed" in r.stdout, r.stderr
    assert b"\ntask multiclass\n" in deployed.read_bytes()


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_lambda_sweep_makefile(tmp_path):
    data = _synthetic(tmp_path / "train.svm", 1500)
    out = tmp_path / "sweep"
    r = subprocess.run(["make", "-s", "-f", str(ROOT / "examples" / "Makefile"), f"DATA={data}",
                        "LAMBDAS=1e-3 1e-2 1e-1", "FOLDS=3", f"OUT={out}", f"PEGASOS={pegasos_executable()}",
                        f"PYTHON={sys.executable}", "CV_OPTIONS=--epochs 3"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line[:1] in ("*", " ") and "±" in line]
    assert len(rows) == 3 and sum(line.startswith("*") for line in rows) == 1, r.stdout
    assert "3-fold cross-validation" in r.stdout and "accuracy" in r.stdout
    assert sorted(p.name for p in out.glob("cv-*.json")) == ["cv-1e-1.json", "cv-1e-2.json", "cv-1e-3.json"]
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "sweep.png").stat().st_size > 1000


def test_make_synthetic_refuses_negative_rows_and_keeps_every_value_stored(tmp_path):
    """--rows -5 wrote an empty file with status 0; normal values rounded to 0 decimals wrote explicit
    zeros ("31:0"), so rows had fewer than --nnz-per-row non-zeros."""
    script = str(ROOT / "data_scripts" / "make_synthetic.py")
    r = subprocess.run([sys.executable, script, "--rows", "-5", str(tmp_path / "x.svm")], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "--rows must be >= 0" in r.stderr
    out = tmp_path / "n.svm"
    subprocess.run([sys.executable, script, "--rows", "300", "--features", "50", "--nnz-per-row", "6",
                    "--values", "normal", "--decimals", "0", "--quiet", str(out)], check=True)
    for line in out.read_text().splitlines():
        pairs = line.split()[1:]
        assert len(pairs) == 6 and all(float(p.split(":")[1]) != 0 for p in pairs), line
