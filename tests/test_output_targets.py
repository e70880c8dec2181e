"""Where models and predictions can be written, and what must never be overwritten.

1. Paths that name an open descriptor of the process (``/dev/stdout``,
   ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``, ``/proc/<pid>/fd/N``,
   a symlink to one of them) are written through the descriptor: pipes work,
   ``>>`` appends, a shell group keeps what came before and after.  Every
   writer is covered: linear, one-vs-rest, Crammer-Singer, regression,
   ranking and kernel models, and predict's output.
2. Other non-regular files (FIFO, ``/dev/null``) are written directly;
   regular files keep the temporary file + rename.
3. An output that is the same file as an input (MODEL = DATA, OUTPUT = DATA
   or MODEL, also through links or a redirected standard output) is refused
   before anything is written.

Expected outputs come from the same command writing to a regular file.
"""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SharedData, ok, one_error, pegasos_executable, run_pegasos

HEART = SharedData("heart_scale/heart_scale")
DNA = SharedData("dna/dna.scale")


def sh(script, cwd=None, model=""):
    """Run a bash script with $P = the pegasos command, $D = heart_scale and
    $M = ``model``; text output."""
    env = dict(os.environ, P=pegasos_executable(), D=str(HEART), M=str(model))
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def snapshot(root):
    root = Path(root)
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else "<dir>")
            for p in sorted(root.rglob("*"))}


# the writers: (name, train options, data); each model is also written to a regular file for reference
TRAINERS = [
    ("linear", ("--epochs", "2"), HEART),
    ("ovr", ("--epochs", "2"), DNA),
    ("crammer-singer", ("--epochs", "1", "--multiclass", "crammer-singer"), DNA),
    ("regression", ("--epochs", "2", "--loss", "eps-insensitive"), HEART),
    ("ranking", ("-T", "500", "--loss", "rank"), None),      # a qid file written by the test
    ("kernel", ("--epochs", "1", "--kernel", "rbf", "--gamma", "0.1"), HEART),
]
RANK_TEXT = "3 qid:1 1:3 2:0.5\n2 qid:1 1:2\n0 qid:1 1:0.5 2:1\n1 qid:2 1:1\n2 qid:2 1:-4 2:0.3\n0 qid:2 1:-6\n"


def _data(tmp_path, data):
    if data is None:
        data = tmp_path / "rank.svm"
        data.write_text(RANK_TEXT)
    return data


@pytest.fixture(scope="module")
def heart_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("heart")
    ok(run_pegasos("train", "-q", "--epochs", "2", HEART, d / "m.model"))
    return d / "m.model"


@pytest.fixture(scope="module")
def heart_predictions(heart_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("pred") / "p.txt"
    ok(run_pegasos("predict", HEART, heart_model, out))
    text = out.read_text()
    assert len(text.splitlines()) == 270
    return text


# --------------------------------------------------------------------------- 1. descriptors

@pytest.mark.parametrize("name,opts,data", TRAINERS, ids=[t[0] for t in TRAINERS])
def test_every_model_kind_can_be_written_to_dev_stdout(tmp_path, name, opts, data):
    data = _data(tmp_path, data)
    ok(run_pegasos("train", "-q", *opts, data, tmp_path / "ref.model"))
    ref = (tmp_path / "ref.model").read_text()
    r = run_pegasos("train", "-q", *opts, data, "/dev/stdout", cwd=tmp_path)     # stdout is a pipe
    assert ok(r) == ref
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ref.model"] + (["rank.svm"] if name == "ranking"
                                                                                  else []))


@pytest.mark.parametrize("target", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/proc/thread-self/fd/1"])
def test_predict_to_descriptor_paths_through_a_pipe(tmp_path, heart_model, heart_predictions, target):
    r = run_pegasos("predict", HEART, heart_model, target, cwd=tmp_path)
    assert ok(r) == heart_predictions
    assert list(tmp_path.iterdir()) == []


def test_own_pid_fd_path(tmp_path, heart_model, heart_predictions):
    # after exec, bash's $$ is the pid of pegasos itself
    assert ok(sh('exec "$P" predict "$D" "$M" /proc/$$/fd/1', tmp_path, heart_model)) == heart_predictions


def test_other_process_fd_path_is_opened_directly(tmp_path, heart_model, heart_predictions):
    # /proc/<the shell's pid>/fd/1 is the shell's stdout pipe, not a descriptor of pegasos
    r = sh('"$P" predict "$D" "$M" /proc/$$/fd/1; echo "rc=$?"', tmp_path, heart_model)
    assert ok(r) == heart_predictions + "rc=0\n"


def test_stderr_and_a_symlink_to_stdout(tmp_path, heart_model, heart_predictions):
    r = run_pegasos("predict", HEART, heart_model, "/dev/stderr")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == heart_predictions
    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    assert ok(run_pegasos("predict", HEART, heart_model, link)) == heart_predictions
    assert link.is_symlink() and os.readlink(link) == "/dev/stdout"
    # a directory symlink to /dev/fd
    (tmp_path / "fds").symlink_to("/dev/fd")
    assert ok(run_pegasos("predict", HEART, heart_model, tmp_path / "fds" / "1")) == heart_predictions


def test_pipe_closed_early_stops_quietly(tmp_path, heart_model, heart_predictions):
    r = sh('"$P" predict "$D" "$M" /dev/stdout | head -1; "$P" train -q "$D" /dev/stdout | head -3',
           tmp_path, heart_model)
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines == [heart_predictions.splitlines()[0], "pegasos_model 1", "kind linear", "loss hinge"]
    # far more than a pipe buffer: predict is still writing when head exits
    (tmp_path / "big.svm").write_text(Path(HEART).read_text() * 300)
    status = sh('"$P" predict big.svm "$M" | head -1 > /dev/null; echo "${PIPESTATUS[0]}"', tmp_path, heart_model)
    assert status.stdout.split()[-1] == "141", status         # SIGPIPE's status (128 + 13), not an error's 1
    assert "Error" not in status.stderr and "Traceback" not in status.stderr


def test_append_redirection_keeps_the_file(tmp_path, heart_model, heart_predictions):
    r = sh('echo HEADER > out; "$P" predict "$D" "$M" /dev/stdout >> out; '
           '"$P" train -q --epochs 2 "$D" /dev/stdout >> out', tmp_path, heart_model)
    ok(r)
    model = (tmp_path / "m2.model")
    ok(run_pegasos("train", "-q", "--epochs", "2", HEART, model))
    assert (tmp_path / "out").read_text() == "HEADER\n" + heart_predictions + model.read_text()


def test_shell_group_keeps_what_comes_before_and_after(tmp_path, heart_model, heart_predictions):
    for target in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        ok(sh(f'(echo HEADER; "$P" predict "$D" "$M" {target}; echo FOOTER) > out', tmp_path, heart_model))
        assert (tmp_path / "out").read_text() == "HEADER\n" + heart_predictions + "FOOTER\n", target


def test_extra_descriptor_opened_by_the_shell(tmp_path, heart_model, heart_predictions):
    ok(sh('echo HEADER > out; "$P" predict "$D" "$M" /dev/fd/3 3>>out', tmp_path, heart_model))
    assert (tmp_path / "out").read_text() == "HEADER\n" + heart_predictions


def test_closed_or_read_only_descriptor_is_a_one_line_error(tmp_path, heart_model):
    before = snapshot(tmp_path)
    one_error(sh('"$P" predict "$D" "$M" /dev/fd/7 7>&-', tmp_path, heart_model), "/dev/fd/7", "not open")
    one_error(sh('"$P" train -q "$D" /dev/fd/9 9>&-', tmp_path), "/dev/fd/9", "not open")
    one_error(sh('"$P" predict "$D" "$M" /dev/stdin < /dev/null', tmp_path, heart_model), "/dev/stdin",
              "reading only")
    assert snapshot(tmp_path) == before


def test_dev_null_and_fifo_are_written_directly(tmp_path, heart_model, heart_predictions):
    assert ok(run_pegasos("predict", HEART, heart_model, "/dev/null")) == ""
    ok(run_pegasos("train", "-q", HEART, "/dev/null"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    ok(run_pegasos("predict", HEART, heart_model, fifo))
    assert reader.communicate(timeout=60)[0] == heart_predictions
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_stdout_redirected_to_a_regular_file_is_written_in_place(tmp_path, heart_model, heart_predictions):
    out = tmp_path / "out"
    with open(out, "w") as f:
        f.write("HEADER\n")
        f.flush()
        r = subprocess.run([pegasos_executable(), "predict", str(HEART), str(heart_model), "/dev/stdout"],
                           stdout=f, stderr=subprocess.PIPE, text=True, timeout=300)
        assert r.returncode == 0 and r.stderr == ""
        f.write("FOOTER\n")
    assert out.read_text() == "HEADER\n" + heart_predictions + "FOOTER\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_open_descriptor_recognises_the_descriptor_paths(tmp_path):
    from pegasos.model import open_descriptor

    pid = os.getpid()
    assert open_descriptor("/dev/stdout") == 1
    assert open_descriptor("/dev/stderr") == 2
    assert open_descriptor("/dev/stdin") == 0
    assert open_descriptor("/dev/fd/5") == 5
    assert open_descriptor("/proc/self/fd/12") == 12
    assert open_descriptor(f"/proc/{pid}/fd/3") == 3
    assert open_descriptor(f"/proc/{pid}/task/{pid}/fd/4") == 4
    if pid != 1:
        assert open_descriptor("/proc/1/fd/3") is None                      # another process's descriptor
    assert open_descriptor(tmp_path / "model") is None
    assert open_descriptor("relative/name") is None
    (tmp_path / "l1").symlink_to("/dev/stdout")
    (tmp_path / "l2").symlink_to("l1")
    assert open_descriptor(tmp_path / "l2") == 1
    (tmp_path / "loop").symlink_to("loop")
    assert open_descriptor(tmp_path / "loop") is None


def test_atomic_write_through_a_pipe_descriptor_leaves_it_open():
    from pegasos.model import atomic_write

    r, w = os.pipe()
    try:
        atomic_write(f"/dev/fd/{w}", lambda f: f.write("first\n"))
        atomic_write(f"/proc/self/fd/{w}", lambda f: f.write("second\n"))
        os.write(w, b"third\n")                # the original descriptor is still open
        os.close(w)
        with os.fdopen(r, "rb") as f:
            assert f.read() == b"first\nsecond\nthird\n"
    finally:
        for fd in (r, w):
            try:
                os.close(fd)
            except OSError:
                pass


def test_regular_files_are_still_replaced_atomically(tmp_path):
    from pegasos.model import atomic_write
    from pegasos.errors import PegasosError

    target = tmp_path / "out.txt"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    with pytest.raises(RuntimeError):
        atomic_write(target, lambda f: (f.write("half"), (_ for _ in ()).throw(RuntimeError("boom"))))
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    atomic_write(target, lambda f: f.write("new\n"))
    assert target.read_text() == "new\n" and (target.stat().st_mode & 0o777) == 0o640
    (tmp_path / "adir").mkdir()
    with pytest.raises(PegasosError, match="cannot write .*adir: it is a directory"):
        atomic_write(tmp_path / "adir", lambda f: f.write("x"))


# --------------------------------------------------------------------------- 2. output = input

def test_train_refuses_to_overwrite_its_data(tmp_path):
    data = tmp_path / "d"
    data.write_bytes(HEART.read_bytes())
    os.link(data, tmp_path / "hard")
    (tmp_path / "soft").symlink_to("d")
    (tmp_path / "sub").mkdir()
    before = snapshot(tmp_path)
    for model in ("d", "./d", str(data), "hard", "soft", "sub/../d"):
        one_error(run_pegasos("train", "-q", "d", model, cwd=tmp_path), f"MODEL {model}", "same file as DATA d")
        one_error(run_pegasos("train", "-q", "--stream", "d", model, cwd=tmp_path), "same file as DATA d")
    one_error(run_pegasos("train", "-q", "soft", "hard", cwd=tmp_path), "MODEL hard", "DATA soft")
    assert snapshot(tmp_path) == before


def test_train_refuses_to_overwrite_its_cost_matrix(tmp_path):
    (tmp_path / "cost").write_text("0 1 1\n1 0 1\n1 1 0\n")
    before = snapshot(tmp_path)
    one_error(run_pegasos("train", "-q", "--multiclass", "crammer-singer", "--cost-matrix", "cost", DNA, "cost",
                          cwd=tmp_path), "MODEL cost", "--cost-matrix cost")
    assert snapshot(tmp_path) == before


def test_train_refuses_a_model_on_redirected_data(tmp_path):
    data = tmp_path / "d"
    data.write_bytes(HEART.read_bytes())
    before = snapshot(tmp_path)
    one_error(sh('"$P" train -q d /dev/stdout >> d', tmp_path), "MODEL /dev/stdout", "DATA d")
    assert snapshot(tmp_path) == before


def test_predict_refuses_to_overwrite_data_or_model(tmp_path, heart_model):
    data = tmp_path / "d"
    data.write_bytes(HEART.read_bytes())
    model = tmp_path / "m.model"
    model.write_bytes(heart_model.read_bytes())
    before = snapshot(tmp_path)
    one_error(run_pegasos("predict", "d", "m.model", "d", cwd=tmp_path), "OUTPUT d", "DATA d")
    one_error(run_pegasos("predict", "d", "m.model", "./m.model", cwd=tmp_path), "OUTPUT ./m.model",
              "MODEL m.model")
    one_error(sh('"$P" predict d m.model >> d', tmp_path), "standard output", "DATA d")
    one_error(sh('"$P" predict d m.model /dev/stdout >> m.model', tmp_path), "OUTPUT /dev/stdout", "MODEL m.model")
    one_error(sh('"$P" predict - m.model < d >> d', tmp_path), "standard output", "standard input")
    one_error(sh('"$P" predict /dev/stdin m.model /dev/stdout < d >> d', tmp_path), "DATA /dev/stdin")
    assert snapshot(tmp_path) == before


def test_distinct_files_and_terminals_are_not_refused(tmp_path, heart_model, heart_predictions):
    data = tmp_path / "d"
    data.write_bytes(HEART.read_bytes())
    copy = tmp_path / "copy"
    copy.write_bytes(HEART.read_bytes())
    ok(run_pegasos("predict", data, heart_model, copy))          # a different file with equal bytes
    assert copy.read_text() == heart_predictions
    # pipes on both sides are not "the same file"
    assert ok(sh('cat d | "$P" predict /dev/stdin "$M" /dev/stdout | cat', tmp_path, heart_model)) == heart_predictions
    assert ok(sh('"$P" predict - "$M" < d', tmp_path, heart_model)) == heart_predictions


def test_check_distinct_files_api(tmp_path):
    from pegasos.errors import PegasosError
    from pegasos.model import check_distinct_files

    a = tmp_path / "a"
    a.write_text("x")
    check_distinct_files(str(tmp_path / "b"), "OUTPUT", [("DATA", str(a)), ("MODEL", None)])
    check_distinct_files("/dev/null", "OUTPUT", [("DATA", "/dev/null")])      # not a regular file
    with pytest.raises(PegasosError, match=r"^OUTPUT .*a is the same file as DATA .*a;"):
        check_distinct_files(str(tmp_path / "." / "a"), "OUTPUT", [("DATA", str(a))])
    with pytest.raises(PegasosError, match="same file"):                     # neither exists yet
        check_distinct_files(str(tmp_path / "new"), "MODEL", [("DATA", str(tmp_path / "x" / ".." / "new"))])
