"""Golden model files: ``pegasos train`` must keep writing the same bytes.

Each row of ``CASES`` is a training command on the small files of tests/data/
(made by tests/data/make_golden_data.py) and tests/golden/NAME.model is the
model that command wrote when the table was made.  A change of the training
code that is meant to leave every model unchanged (a refactoring) must pass
this file as it is.

Every training option that applies is spelled out in each command, never left
to its default, so that a change of a default does not change what a row
means.  (The last iterate, ``averaging last``, has no flag of its own: it is
what a command without ``--average``/``--average-from`` outputs.  ``--t0 0``
is the paper's step eta_t = 1/(lambda t) and writes the same model as no
offset.)  The commands run with tests/data as working directory and a
relative DATA name, since the model's ``train_file`` line holds DATA as given.

Only a deliberate change of the model format or of the trained models may
regenerate the files::

    .venv/bin/python tests/test_golden.py --regenerate [NAME ...]

and the commit doing so says why the models changed.

The decision values that ``pegasos predict`` writes for a golden model of a
linear kind are also checked against a dense NumPy evaluation of the weights
read from the model file (<w, x> + b, paper Eq. 1 notation).
"""

import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
GOLDEN = HERE / "golden"

if __name__ != "__main__":
    from conftest import ok, run_pegasos

# Shared spelling of the options that are the same in most rows.  {tmp} is the
# test's temporary directory (for --cache files).
LINEAR = "--kernel linear --dtype float64 --jobs 1"

#: name -> arguments of `pegasos train` (DATA last; the model path is appended).
CASES = {
    # Binary hinge, the paper's algorithm (Fig. 1): uniform sampling, last iterate.
    "hinge_uniform": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge {LINEAR} binary.svm",
    "hinge_seed7": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 7 --bias none --t0 0 --loss hinge {LINEAR} binary.svm",
    "hinge_projection": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --projection {LINEAR} binary.svm",
    # Losses (paper section 5).
    "log": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss log {LINEAR} binary.svm",
    "squared_hinge": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss squared-hinge {LINEAR} binary.svm",
    "eps_insensitive": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss eps-insensitive -p 0.2 {LINEAR} regression.svm",
    "rank": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss rank {LINEAR} ranking.svm",
    # Averaging (Theorem 1; suffix averaging).
    "average_all": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --average {LINEAR} binary.svm",
    "average_from_half": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --average-from 0.5 {LINEAR} binary.svm",
    # Bias modes.
    "bias_feature": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias feature --t0 0 --loss hinge {LINEAR} binary.svm",
    "bias_unregularized": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias unregularized --t0 0 --loss hinge {LINEAR} binary.svm",
    # Sampling; --epochs (T = E m / k); mini-batches (Fig. 2).
    "sampling_permutation": f"-l 0.01 --epochs 5 -k 1 --sampling permutation --seed 1 --bias none --t0 0 --loss hinge {LINEAR} binary.svm",
    "sampling_sequential": f"-l 0.01 --epochs 5 -k 1 --sampling sequential --seed 1 --bias none --t0 0 --loss hinge {LINEAR} binary.svm",
    "minibatch_k8": f"-l 0.01 --epochs 10 -k 8 --sampling permutation --seed 1 --bias none --t0 0 --loss hinge {LINEAR} binary.svm",
    "minibatch_k8_uniform": f"-l 0.01 -T 300 -k 8 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --average-from 0.5 {LINEAR} binary.svm",
    # Step offsets.
    # (the first step eta0 = 0.1: T0 = 1/(lambda eta0) = 1000)
    "eta0": f"-l 0.01 --epochs 3 -k 1 --sampling permutation --seed 1 --bias none --t0 1000 --loss hinge --average-from 0.5 {LINEAR} binary.svm",
    "t0": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 500 --loss hinge {LINEAR} binary.svm",
    # Class weights, 0/1 labels, 0-based indices, float32 values.
    "class_weights": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge -w 0:2 -w 1:0.5 {LINEAR} binary01.svm",
    # (SVMlight's -j 3: the positive class's weight)
    "cost_factor_j": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge -w 1:3 {LINEAR} binary.svm",
    "labels01": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge {LINEAR} binary01.svm",
    "zero_based": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --zero-based {LINEAR} binary01_zero.svm",
    "float32": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --kernel linear --dtype float32 --jobs 1 binary.svm",
    # Multiclass: one-vs-rest, Crammer-Singer (Eq. 20) with and without costs.
    "ovr": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --multiclass ovr {LINEAR} multiclass.svm",
    "ovr_log_jobs2": "-l 0.01 --epochs 3 -k 1 --sampling permutation --seed 1 --bias feature --t0 0 --loss log --multiclass ovr --kernel linear --dtype float64 --jobs 2 multiclass.svm",
    "crammer_singer": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --multiclass crammer-singer {LINEAR} multiclass.svm",
    "crammer_singer_cost": f"-l 0.01 -T 2000 -k 1 --sampling uniform --seed 1 --bias none --t0 0 --loss hinge --multiclass crammer-singer --cost-matrix cost3.txt {LINEAR} multiclass.svm",
    # Kernel Pegasos (Fig. 3).
    "kernel_rbf": "-l 0.01 -T 300 -k 1 --sampling uniform --seed 1 --bias none --loss hinge --kernel rbf --gamma 0.5 --cache-mb 10 --dtype float64 --jobs 1 binary.svm",
    "kernel_poly": "-l 0.01 -T 300 -k 1 --sampling uniform --seed 1 --bias none --loss hinge --kernel poly --gamma 0.5 --degree 2 --coef0 1 --cache-mb 10 --dtype float64 --jobs 1 binary.svm",
    "kernel_rbf_k4_average": "-l 0.01 --epochs 1 -k 4 --sampling permutation --seed 1 --bias none --loss hinge --kernel rbf --gamma 0.5 --average-from 0.5 --cache-mb 10 --dtype float64 --jobs 1 binary.svm",
    "kernel_rbf_budget": "-l 0.01 -T 300 -k 1 --sampling uniform --seed 1 --bias none --loss hinge --kernel rbf --gamma 0.5 --budget 40 --cache-mb 10 --dtype float64 --jobs 1 binary.svm",
    # Files larger than memory: shuffle buffer, binary cache.
    "stream_shuffle": f"-l 0.01 --epochs 2 -k 1 --seed 1 --bias none --t0 0 --loss hinge --stream --shuffle-buffer 64 {LINEAR} binary.svm",
    "stream_shuffle_average": f"-l 0.01 --epochs 1 -k 1 --seed 1 --bias none --t0 1000 --loss hinge --average-from 0.5 --stream --shuffle-buffer 100 {LINEAR} binary.svm",
    "cache_permutation": f"-l 0.01 --epochs 5 -k 1 --sampling permutation --seed 1 --bias none --t0 0 --loss hinge --stream --cache {{tmp}}/binary.cache {LINEAR} binary.svm",
}


def train_argv(name, tmp, model):
    """The full `pegasos train` argument list of case ``name`` writing ``model``."""
    # --paper: the settings a case leaves out (averaging) are the paper's, as when the files were written
    return ["train", "-q", "--paper", *shlex.split(CASES[name].format(tmp=tmp)), str(model)]


def read_svm(path, zero_based=False):
    """Dense (m, n) float64 matrix and labels of a small tests/data file (own parser)."""
    rows, labels, n = [], [], 0
    base = 0 if zero_based else 1
    for line in Path(path).read_text().splitlines():
        tokens = line.split()
        labels.append(float(tokens[0]))
        pairs = [t.split(":") for t in tokens[1:] if not t.startswith("qid:")]
        row = {int(i) - base: float(v) for i, v in pairs}
        n = max([n, *(j + 1 for j in row)])
        rows.append(row)
    X = np.zeros((len(rows), n))
    for i, row in enumerate(rows):
        for j, v in row.items():
            X[i, j] = v
    return X, np.array(labels)


def read_linear_blocks(path):
    """Header dict and a list of (bias, {index: weight}) blocks of a linear model file."""
    header, blocks = {}, []
    lines = Path(path).read_text().splitlines()
    i = 0
    while not lines[i].startswith(("weights ", "class ")):
        key, _, value = lines[i].partition(" ")
        header[key] = value
        i += 1
    bias = None if header["bias"] == "-" else float(header["bias"])
    while lines[i] != "end":
        if lines[i].startswith("class "):
            i += 1
        if lines[i].startswith("bias "):
            bias = float(lines[i].split()[1])
            i += 1
        count = int(lines[i].split()[1])
        weights = {}
        for token in lines[i + 1:i + 1 + count]:
            index, value = token.split(":")
            weights[int(index)] = float(value)
        blocks.append((bias, weights))
        i += 1 + count
    return header, blocks


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_bytes_unchanged(name, tmp_path):
    golden = GOLDEN / f"{name}.model"
    model = tmp_path / f"{name}.model"
    ok(run_pegasos(*train_argv(name, tmp_path, model), cwd=DATA))
    assert golden.exists(), f"{golden} is missing (regenerate: python tests/test_golden.py --regenerate {name})"
    expected, got = golden.read_bytes(), model.read_bytes()
    if got != expected:
        want, have = expected.decode().splitlines(), got.decode().splitlines()
        first = next((i for i, (a, b) in enumerate(zip(want, have)) if a != b), min(len(want), len(have)))
        pytest.fail(f"{name}: model differs from {golden.name} from line {first + 1}: "
                    f"golden {want[first:first + 1]}, now {have[first:first + 1]} "
                    f"({len(want)} vs {len(have)} lines)")


def test_cache_golden_equals_in_memory_golden():
    """docs/large-data.md: training from --cache gives the byte-identical model of in-memory training."""
    assert (GOLDEN / "cache_permutation.model").read_bytes() == \
        (GOLDEN / "sampling_permutation.model").read_bytes()


LINEAR_CASES = sorted(n for n in CASES if "--kernel linear" in CASES[n])


@pytest.mark.parametrize("name", LINEAR_CASES)
def test_predict_matches_numpy_on_golden_model(name, tmp_path):
    """`pegasos predict` of a golden linear model = <w, x> + b computed densely here."""
    golden = GOLDEN / f"{name}.model"
    header, blocks = read_linear_blocks(golden)
    data = shlex.split(CASES[name])[-1]
    zero_based = header["index_base"] == "0"
    X, _ = read_svm(DATA / data, zero_based=zero_based)
    base = 0 if zero_based else 1
    n = int(header["n_features"])
    columns = []
    for bias, weights in blocks:
        w = np.zeros(max(n, X.shape[1]))
        for index, value in weights.items():
            w[index - base] = value
        columns.append(X @ w[:X.shape[1]] + (bias or 0.0))
    expected = np.column_stack(columns)
    out = tmp_path / "pred.txt"
    ok(run_pegasos("predict", "-q", data, str(golden), str(out), cwd=DATA))
    got = np.loadtxt(out, ndmin=2)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def regenerate(names):
    """Rewrite tests/golden/NAME.model for ``names`` (all cases when empty)."""
    import tempfile

    exe = Path(sys.executable).parent / "pegasos"
    GOLDEN.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or sorted(CASES):
            model = GOLDEN / f"{name}.model"
            subprocess.run([str(exe), *train_argv(name, tmp, model)], cwd=DATA, check=True)
            print(f"wrote {model.relative_to(HERE.parent)}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "--regenerate":
        sys.exit("usage: python tests/test_golden.py --regenerate [NAME ...]")
    unknown = [n for n in sys.argv[2:] if n not in CASES]
    if unknown:
        sys.exit(f"unknown case(s): {', '.join(unknown)}")
    regenerate(sys.argv[2:])
