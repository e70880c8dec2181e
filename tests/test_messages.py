"""One-line messages for a damaged cache, a read-only file system, and the
command-line progress line when stderr is not a terminal."""

import errno
import json
import os
import struct

import numpy as np
import pytest

from conftest import ok, rebuilt_cache, run_pegasos
from pegasos import model as model_module
from pegasos.errors import PegasosError


def _write_data(path, m=400, n=30, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in range(m):
            cols = np.sort(rng.choice(np.arange(1, n + 1), size=5, replace=False))
            f.write(f"{1 if i % 2 else -1} " + " ".join(f"{c}:{rng.random():.3f}" for c in cols) + "\n")
    return path


def _cache_sections(cache):
    raw = cache.read_bytes()
    header = json.loads(raw[len(b"pegasos-cache\n"):].split(b"\0", 1)[0])
    return raw, header


@pytest.mark.parametrize("damage", ["label value", "label list", "label line"])
def test_damaged_cache_labels_name_the_cache_file(tmp_path, damage):
    data = _write_data(tmp_path / "d.svm")
    cache = tmp_path / "d.cache"
    ok(run_pegasos("train", "-q", "--cache", cache, data, tmp_path / "m"))
    raw, header = _cache_sections(cache)
    raw = bytearray(raw)
    if damage == "label value":
        off = header["sections"]["labels"][0] + 8 * 3
        raw[off:off + 8] = struct.pack("=d", 3.0)
    elif damage == "label list":
        raw = raw.replace(b'"-1.0",\n   1', b'"-5.0",\n   1')
    else:
        raw = raw.replace(b'"-1.0",\n   1', b'"-1.0",\n   0')
    cache.write_bytes(bytes(raw))
    os.utime(cache)
    r = run_pegasos("train", "-q", "--cache", cache, data, tmp_path / "m2")
    # a label section changed is found by its checksum, a header edited by the header's
    rebuilt_cache(r, cache, "label" if damage == "label value" else "its header changed")
    assert (tmp_path / "m2").read_bytes() == (tmp_path / "m").read_bytes()     # trained on the text's labels


def test_intact_cache_is_reused(tmp_path):
    data = _write_data(tmp_path / "d.svm")
    cache = tmp_path / "d.cache"
    ok(run_pegasos("train", "-q", "--cache", cache, data, tmp_path / "m"))
    stamp = cache.stat().st_mtime_ns
    ok(run_pegasos("train", "-q", "--cache", cache, data, tmp_path / "m2"))
    assert cache.stat().st_mtime_ns == stamp          # opened and checked, not rebuilt
    assert (tmp_path / "m").read_bytes() == (tmp_path / "m2").read_bytes()


def test_read_only_file_system_is_named(tmp_path, monkeypatch):
    target = tmp_path / "out.model"

    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(model_module.os, "access", lambda *a, **k: False)
    monkeypatch.setattr(model_module.os, "statvfs", lambda d: ReadOnly())
    with pytest.raises(PegasosError, match="is on a read-only file system"):
        model_module.check_writable(str(target))


def test_erofs_while_writing_is_named(tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(model_module.tempfile, "mkstemp", refuse)
    with pytest.raises(PegasosError) as e:
        model_module.atomic_write(str(tmp_path / "m"), lambda f: f.write("x"))
    assert str(e.value) == f"cannot write {tmp_path / 'm'}: it is on a read-only file system"
    assert os.listdir(tmp_path) == []


def test_verbose_progress_lines_when_stderr_is_not_a_terminal(tmp_path):
    import re

    data = _write_data(tmp_path / "d.svm", m=3000)
    common = ("--epochs", "200", "--seed", "3", data)
    ok(run_pegasos("train", "-q", *common, tmp_path / "quiet.model"))
    r = run_pegasos("train", "--verbose", "--progress-every", "0.01", *common, tmp_path / "verbose.model")
    ok(r)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("training: ")]
    assert len(lines) >= 2, r.stderr
    found = [re.fullmatch(r"training: (\d+)/(\d+) iterations \((\d+\.\d)%\), (\d+\.\d) s", ln) for ln in lines]
    assert all(found), lines
    done = [int(f.group(1)) for f in found]
    assert done == sorted(done) and done[-1] == int(found[-1].group(2)) == 200 * 3000
    assert found[-1].group(3) == "100.0"
    seconds = [float(f.group(4)) for f in found]
    assert seconds == sorted(seconds)
    assert (tmp_path / "quiet.model").read_bytes() == (tmp_path / "verbose.model").read_bytes()
    r = run_pegasos("train", "-q", *common, tmp_path / "m3")          # no -v: nothing on stderr
    assert r.stderr == ""


def test_verbose_with_the_stopping_rule_counts_all_runs(tmp_path):
    data = _write_data(tmp_path / "d.svm", m=2000)
    # --finish none: the Pegasos runs of the doubling (by default these data are certified by the dual
    # passes from w = 0, without any)
    r = run_pegasos("train", "--verbose", "--progress-every", "0.001", "--finish", "none", data, tmp_path / "m")
    ok(r)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("training: ")]
    assert lines and all(ln.endswith(" s") and "iterations" in ln for ln in lines), r.stderr


@pytest.mark.parametrize("args, message", [
    (("--verbose", "-q"), "give either -q/--quiet or --verbose"),
    (("--verbose", "--progress-every", "0"), "'--progress-every': 0.0 is not in the range x>0"),
    (("--verbose", "--progress-every", "nan"), "--progress-every"),
])
def test_verbose_options_are_checked(tmp_path, args, message):
    data = _write_data(tmp_path / "d.svm", m=50)
    r = run_pegasos("train", *args, data, tmp_path / "m")
    assert r.returncode == 2 and r.stderr.startswith("Error: ") and message in r.stderr, r.stderr
    assert not (tmp_path / "m").exists()


def test_a_one_vs_rest_note_says_which_classes_the_finish_did_not_run():
    """A fresh user's report: 20 classes whose largest class's passes stalled had 19 classes at 0 passes and
    a header gap of 0.946 that the note gave as the model's; the note now says those classes were not
    finished.  Binary models and finishes that ran every class add nothing."""
    from types import SimpleNamespace

    from pegasos.cli.notes import classes_not_finished

    def said(passes):
        return classes_not_finished(SimpleNamespace(info={"finish_passes": passes}))

    assert said("0,0,2048,0") == (" (3 of 4 classes were not finished, after the largest class's passes neither "
                                  "certified nor beat its Pegasos model: the gap of their Pegasos weights counts "
                                  "from the dual passes' start and says little about the model)")
    assert said("12,40,2048,7") == "" and said("2048") == "" and said("0") == ""
    assert classes_not_finished(SimpleNamespace(info={})) == ""


def test_a_model_worse_than_its_start_is_said_with_q_too(tmp_path):
    """A fresh user's report: unscaled columns with --finish none gave an objective of 4.39, and --t0 100 one
    of 32.4, above w = 0's 1, with only a note on the epoch cap (or none with -q).  The note now says the
    model is worse than where the run started (and names the uneven scales); a good model gets no note."""
    from small_data import write_svm

    rng = np.random.default_rng(2)
    X = rng.normal(size=(1000, 10))
    y = np.where(X @ rng.normal(size=10) + rng.normal(size=1000) > 0, 1.0, -1.0)
    data = write_svm(tmp_path / "d.svm", X, y)
    r = run_pegasos("train", "-q", "-T", "1000", "--t0", "100", data, tmp_path / "m")
    assert r.returncode == 0
    import pegasos

    f = pegasos.objective(pegasos.load_model(str(tmp_path / "m")), X, y)["objective"]
    assert f > 1 and f"the model's objective {f:.4g} is above 1, that of w = 0 where the run started" in r.stderr
    r = run_pegasos("train", "-q", data, tmp_path / "m")
    assert r.returncode == 0 and r.stderr == ""
    r = run_pegasos("train", "-q", "-T", "1000", data, tmp_path / "m")
    assert r.returncode == 0 and "w = 0" not in r.stderr


def test_cv_and_search_name_the_runs_worse_than_w0(tmp_path):
    """train says so of a model above w = 0's objective; cv and search said nothing of such folds and
    points.  The fold's and the point's objectives in the note are those of the --json record."""
    from small_data import write_svm

    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 10))
    y = np.where(X @ rng.normal(size=10) + rng.normal(size=600) > 0, 1.0, -1.0)
    data = write_svm(tmp_path / "d.svm", X, y)
    bad = ("-T", "1000", "--t0", "100")
    for command, key, shown in (("cv", "per_fold", "fold {}"), ("search", "rows", "lambda {:.4g}")):
        grid = ("-l", "1e-4,1e-2") if command == "search" else ()
        r = run_pegasos(command, "--json", *bad, *grid, data)
        assert r.returncode == 0, r.stderr
        record = json.loads(r.stdout)
        above = [e for e in record[key] if e["objective"] > 1]
        assert above, record[key]
        assert f"the training objective of {len(above)} of {len(record[key])}" in r.stderr
        for e in above:
            value = e["fold"] if command == "cv" else e["lam"]
            assert f"{shown.format(value)} ({e['objective']:.4g})" in r.stderr
        r = run_pegasos(command, "-q", *grid, data)        # the defaults: no such note
        assert r.returncode == 0 and "that of w = 0" not in r.stderr


def test_the_epoch_cap_note_does_not_give_the_kept_length_as_the_cap():
    """The note said "cap of 8192 epochs" where the header had max_epochs=16384 (the kept model, the lower
    objective of the last two lengths, was of 8192): it now says the cap was reached and the model's own
    length apart."""
    from pegasos.outcome import Outcome, Stop
    from pegasos.solver import Solver

    outcome = Outcome.from_header({"solver": "pegasos", "solver_reason": "asked for", "stop": "epoch cap",
                                   "tol": "0.002", "iterations": "819200", "epochs": "8192"})
    assert outcome.stop is Stop.EPOCH_CAP and outcome.solver is Solver.PEGASOS
    note, = outcome.diagnostics
    assert "reached its cap of epochs" in note and "(the model: 8192 epochs)" in note and "cap of 8192" not in note
