"""Ctrl-C (SIGINT), SIGTERM and SIGHUP during `pegasos train`: one line, the shell's exit status
(128 + signal number), and no model or temporary file left behind."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import pegasos_executable


def _write_data(path, m=20000, n=200, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in range(m):
            cols = np.sort(rng.choice(np.arange(1, n + 1), size=20, replace=False))
            label = (1 if i % 2 else -1) if classes == 2 else i % classes
            f.write(f"{label} " + " ".join(f"{c}:{v:.4f}" for c, v in zip(cols, rng.random(20))) + "\n")
    return path


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    folder = tmp_path_factory.mktemp("signals")
    return {"binary": _write_data(folder / "d.svm"), "ovr": _write_data(folder / "five.svm", classes=5)}


@pytest.mark.parametrize("sig, status, name", [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM"),
                                               (signal.SIGHUP, 129, "SIGHUP")])    # HUP left a cache's temp file
@pytest.mark.parametrize("kind, extra", [("binary", ()), ("binary", ("--cache", "d.cache")),
                                         ("ovr", ("--jobs", "2"))])
def test_signal_during_training(tmp_path, big, sig, status, name, kind, extra):
    """One-vs-rest trains its classes in worker threads: they stop at their next block too."""
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(big[kind], work / "d.svm")
    cmd = [pegasos_executable(), "train", "--verbose", "--progress-every", "0.05", "--epochs", "100000", *extra,
           "d.svm", "out.model"]
    proc = subprocess.Popen(cmd, cwd=work, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        line = proc.stderr.readline()
        while not line.startswith("training: "):         # the run has started its iterations
            assert line and time.monotonic() < deadline, "training did not start"
            line = proc.stderr.readline()
        proc.send_signal(sig)
        rest = proc.communicate(timeout=60)[1]          # bounded: a stuck process fails the test
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, rest
    assert "Traceback" not in rest
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert rest.splitlines()[-1] == f"pegasos: {word} ({name}); stopped, no output file was left half-written", rest
    left = sorted(os.listdir(work))
    assert left == sorted(["d.svm"] + (["d.cache"] if "--cache" in extra else [])), left
