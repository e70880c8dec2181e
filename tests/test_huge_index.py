"""A stray huge feature index in every training mode: memory follows the data, not the number.

`printf '+1 1:1 500000000:1\\n-1 2:1\\n' > f.svm; pegasos train --stream f.svm` took 7.9 GB and 32 s
(index 1e8: 1.6 GB; shards the same; --loss rank 4.6 GB at 1e8, and the kernel trainers a dense row
of 4 GB of address space), where training in memory took 45 MB.  Each mode now trains on the used
columns renumbered (the same run: a weight or kernel value never involves an unused column) or, for
shards, refuses with one line naming the file and the line of the index.
"""

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos

from conftest import ok, pegasos_executable, run_pegasos

MODES = {
    "memory": [],
    "stream": ["--stream"],
    "cache": ["--stream", "--cache", "{tmp}/c.cache"],
    "shards": ["--split", "2"],
    "kernel_dual": ["--kernel", "rbf"],
    "kernel_pegasos": ["--kernel", "rbf", "-T", "50"],
    "multiclass": ["@3"],
    "multiclass_cache": ["@3", "--stream", "--cache", "{tmp}/c3.cache"],
    "crammer_singer": ["@3", "--multiclass", "crammer-singer"],
    "rank": ["@q", "--loss", "rank"],
    "rank_cache": ["@q", "--loss", "rank", "--stream", "--cache", "{tmp}/cq.cache"],
}

# runs the command in a child with an address-space limit (0: none); prints its exit status and peak RSS
RUNNER = """
import resource, subprocess, sys
limit = int(sys.argv[1])
def cap():
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
r = subprocess.run(sys.argv[2:], preexec_fn=cap, capture_output=True, text=True)
sys.stderr.write(r.stderr)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""


def _files(tmp_path, index):
    files = {
        "": "+1 1:1 {i}:1\n-1 2:1\n+1 3:0.5\n-1 2:0.5 4:1\n",
        "3": "1 1:1 {i}:1\n2 2:1\n3 3:1\n1 1:0.5\n2 2:0.5\n3 3:0.5\n",
        "q": "2 qid:1 1:1 {i}:1\n1 qid:1 2:1\n0 qid:1 3:1\n2 qid:2 1:0.5\n0 qid:2 2:0.5\n",
    }
    out = {}
    for key, text in files.items():
        path = tmp_path / f"h{key}.svm"
        path.write_text(text.format(i=index))
        out[key] = path
    return out


def _run(tmp_path, mode, index, limit):
    files = _files(tmp_path, index)
    args = [a.format(tmp=tmp_path) for a in MODES[mode]]
    key = ""
    if args and args[0].startswith("@"):
        key = args.pop(0)[1:]
    data = files[key]
    command = [pegasos_executable(), "train-shards" if mode == "shards" else "train", "-q", *args, str(data),
               str(tmp_path / "h.model")]
    r = subprocess.run([sys.executable, "-c", RUNNER, str(limit), *command], capture_output=True, text=True,
                       timeout=600)
    status, peak = (int(v) for v in r.stdout.split())
    return status, peak, r.stderr, data


def _trained_or_refused_at_the_line(status, stderr, data, tmp_path):
    assert status >= 0 and status != 134, stderr
    assert "Traceback" not in stderr, stderr
    if status == 0:
        assert (tmp_path / "h.model").exists()
        return "trained"
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    assert f"{data}, line 1:" in lines[0], lines[0]
    return "refused"


@pytest.mark.parametrize("mode", MODES)
def test_index_5e8_under_an_address_space_limit_of_1_5_gib(tmp_path, mode):
    status, _, stderr, data = _run(tmp_path, mode, 500_000_000, 3 << 29)
    outcome = _trained_or_refused_at_the_line(status, stderr, data, tmp_path)
    if mode in ("kernel_dual", "kernel_pegasos"):
        assert outcome == "trained"              # a kernel model holds no dense weights


@pytest.mark.parametrize("mode", MODES)
def test_index_1e8_takes_memory_of_the_data_not_of_the_index(tmp_path, mode):
    status, peak, stderr, data = _run(tmp_path, mode, 100_000_000, 0)
    _trained_or_refused_at_the_line(status, stderr, data, tmp_path)
    assert peak < 400 << 20, f"peak RSS {peak / 2**20:.0f} MiB"
    if mode == "shards":                         # they keep dense weights in every column: refused
        assert status == 1 and "training on shards keeps dense weights" in stderr


from test_used_columns import HUGE, _pair  # noqa: E402 (the same examples on few and on huge columns)


def _write(path, X, y):
    rows = []
    for i in range(X.shape[0]):
        a, b = X.indptr[i], X.indptr[i + 1]
        rows.append(" ".join([f"{y[i]:g}"] + [f"{c + 1}:{float(v)!r}" for c, v in zip(X.indices[a:b], X.data[a:b])]))
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_the_shuffle_buffer_run_on_a_huge_index_is_the_run_on_the_used_columns(tmp_path):
    from pegasos.stream import train_shuffled

    small, huge, y = _pair()
    for settings in ({}, {"bias": "feature", "epochs": 3}, {"loss": "log", "shuffle_buffer": 16}):
        a = train_shuffled(_write(tmp_path / "small.svm", small, y), **settings)
        b = train_shuffled(_write(tmp_path / "huge.svm", huge, y), **settings)
        assert b.n_features == HUGE
        assert np.array_equal(b.w[:5], a.w[:5]) and b.w[HUGE - 1] == a.w[5] and b.bias == a.bias
        assert np.count_nonzero(b.w[5:HUGE - 1]) == 0


def test_a_ranking_run_on_a_huge_index_is_the_run_on_the_used_columns():
    small, huge, _ = _pair(seed=2)
    rel = np.arange(small.shape[0]) % 3.0
    qid = np.arange(small.shape[0]) // 10
    for settings in ({}, {"finish": "none", "epochs": 2}):
        a = pegasos.fit((small, rel, qid), loss="rank", **settings)
        b = pegasos.fit((huge, rel, qid), loss="rank", **settings)
        assert b.n_features == HUGE
        assert np.array_equal(b.w[:5], a.w[:5]) and b.w[HUGE - 1] == a.w[5]


@pytest.mark.parametrize("settings", [{}, {"epochs": 2}])
def test_a_kernel_run_on_a_huge_index_is_the_run_on_the_used_columns(settings):
    small, huge, y = _pair(seed=4)
    a = pegasos.fit((small, y), kernel="rbf", gamma=0.3, **settings)
    b = pegasos.fit((huge, y), kernel="rbf", gamma=0.3, **settings)
    assert np.array_equal(b.coef, a.coef)
    assert int(b.sv_indices.max()) == HUGE - 1
    np.testing.assert_array_equal(b.decision_function(huge), a.decision_function(small))


def test_a_multiclass_model_with_a_huge_dimension_loads_only_its_weights(tmp_path):
    """20 classes and index 8e6: W is 1.3 GB of address space, of which only the pages of the weights
    written are touched (each class's weights went through a dense row copied into W: 1.3 GB resident
    for `predict`, `eval` and `info` of a 1.5 MB model file)."""
    rows = [f"{i % 20 + 1} " + " ".join(f"{j}:{(i * j % 7 + 1) / 8}" for j in range(1 + i % 50, 3000, 97))
            for i in range(400)]
    data = tmp_path / "mc.svm"
    data.write_text("\n".join(rows + ["1 8000000:1"]) + "\n")
    model = tmp_path / "mc.model"
    for command in (["train", "-q", "-T", "200", str(data), str(model)], ["predict", str(data), str(model)],
                    ["eval", str(data), str(model)], ["info", str(model)]):
        r = subprocess.run([sys.executable, "-c", RUNNER, "0", pegasos_executable(), *command],
                           capture_output=True, text=True, timeout=600)
        status, peak = (int(v) for v in r.stdout.split()[-2:])
        assert status == 0 and "Traceback" not in r.stderr, r.stderr
        assert peak < 400 << 20, f"{command[0]}: peak RSS {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("task", ["multiclass", "binary"])
def test_info_reads_a_model_on_its_written_columns(tmp_path, task):
    """`info` describes a model without a weight vector of n_features: the same description as of the
    model loaded whole, of the features in the file's numbering."""
    from pegasos.selection import describe_model

    X = sp.random(60, 40, density=0.2, format="csr", random_state=3)
    y = np.arange(60) % 3.0 if task == "multiclass" else np.where(np.arange(60) % 2, 1.0, -1.0)
    model = pegasos.fit((X, y), epochs=2)
    weights = model.W if task == "multiclass" else model.w[None, :]
    weights[:, 7] = 0.0                                     # a column no class has a weight in
    model.save(str(tmp_path / "m"))
    whole = pegasos.load_model(str(tmp_path / "m"))
    narrow = pegasos.load_model(str(tmp_path / "m"), written_columns=True)
    assert 7 not in narrow.columns.tolist() and narrow.columns.shape[0] < 40
    assert describe_model(narrow, top=5) == describe_model(whole, top=5)


def test_info_of_a_multiclass_model_of_a_huge_dimension_under_an_address_space_limit(tmp_path):
    """104 classes and index 8e6 (sector's first rows and `1 8000000:1`): W is 6.3 GiB of address space.
    Under a 1.5 GiB limit training refuses, naming the line of the index; `info` of a model trained
    without the limit reads only the weights written; `predict` refuses cleanly, naming n_features."""
    rows = [f"{i % 104 + 1} " + " ".join(f"{j}:{(i * j % 7 + 1) / 8}" for j in range(1 + i % 50, 3000, 97))
            for i in range(400)]
    data = tmp_path / "mc.svm"
    data.write_text("\n".join(rows + ["1 8000000:1"]) + "\n")
    model = tmp_path / "mc.model"
    limit = 1536 << 20

    def capped(*command):
        r = subprocess.run([sys.executable, "-c", RUNNER, str(limit), pegasos_executable(), *map(str, command)],
                           capture_output=True, text=True, timeout=600)
        status, peak = (int(v) for v in r.stdout.split()[-2:])
        assert "Traceback" not in r.stderr and peak < 400 << 20, (command, r.stderr, peak)
        return status, r.stderr

    status, err = capped("train", "-q", data, model)
    assert status != 0 and "line 401" in err and "n_features = 8000000" in err and not model.exists()
    ok(run_pegasos("train", "-q", "-T", "200", data, model))
    status, _ = capped("info", model)
    assert status == 0
    info = json.loads(ok(run_pegasos("info", "--json", "--top", "100000", model)))
    assert len(info["classes"]) == 104 and {c["features"] for c in info["classes"]} == {8000000}
    assert 8000000 in {t["feature"] for t in info["classes"][0]["top_weights"]}
    status, err = capped("predict", data, model)
    assert status != 0 and "n_features 8000000" in err and len(err.strip().splitlines()) == 1


def test_the_shuffle_buffer_trains_on_its_first_pass_not_on_a_file_changed_since(tmp_path):
    """The renumbering comes from the first pass, and so do the rows: its spill, not the text read again,
    so a file changed since (a column it has no place for) changes nothing."""
    from pegasos.stream import fit_shuffled, scan
    from pegasos.options import TrainOptions

    small, huge, y = _pair()
    path = _write(tmp_path / "huge.svm", huge, y)
    first = scan(path)
    assert first.columns.shape[0] == 6 and first.n_features == HUGE
    options = TrainOptions(preset="paper", shuffle_buffer=16, epochs=2)
    options.validate()
    before = fit_shuffled(scan(path), options)
    text = (tmp_path / "huge.svm").read_text().replace(f" {HUGE}:", f" {HUGE - 7}:")
    (tmp_path / "huge.svm").write_text(text)
    after = fit_shuffled(first, options)
    assert np.array_equal(before.w, after.w) and before.w[HUGE - 1] != 0
