"""Values the user writes are bounded: the kernel-row cache by the physical memory, Crammer-Singer costs by
MAX_COST (as class weights by MAX_WEIGHT), at training and at model load.

Before, `--cache-mb 1e12` was taken (a9a's rbf cache grew to 3.4 GB against 155 MB), and a cost_matrix
entry of 1e308 in a model file loaded, printed NumPy's overflow warning and `objective inf`, exit 0."""

import re

import pytest

import pegasos
import pegasos.kernel
from pegasos.defaults import MAX_COST, max_cache_mb
from pegasos.errors import ModelFormatError, ParameterError

from conftest import ok, one_error, run_pegasos

BINARY = "+1 1:1 2:0.5\n-1 2:1\n+1 1:0.7\n-1 2:0.8 3:0.1\n"
THREE = "1 1:1\n2 2:1\n3 3:1\n1 1:0.5\n2 2:0.5\n3 3:0.5\n"


def test_the_cache_bound_is_the_physical_memory():
    import os

    assert max_cache_mb() == pytest.approx(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20)


@pytest.mark.parametrize("epochs", [None, 2])          # the dual solver, kernel Pegasos
def test_a_cache_above_the_bound_is_refused(tmp_path, monkeypatch, epochs):
    f = tmp_path / "b.svm"
    f.write_text(BINARY)
    d = pegasos.read_svmlight(str(f))
    extra = {} if epochs is None else {"epochs": epochs}
    monkeypatch.setattr(pegasos.kernel, "max_cache_mb", lambda: 8.0)
    pegasos.fit(d, pegasos.TrainOptions(kernel="rbf", cache_mb=8.0, **extra))
    with pytest.raises(ParameterError, match=r"^cache_mb: a cache of 8\.5 MiB is more than the 8 MiB"):
        pegasos.fit(d, pegasos.TrainOptions(kernel="rbf", cache_mb=8.5, **extra))
    args = [] if epochs is None else ["--epochs", str(epochs)]
    one_error(run_pegasos("train", "-q", "--kernel", "rbf", "--cache-mb", "1e12", *args, f, tmp_path / "m"),
              "--cache-mb: a cache of 1e+12 MiB is more than the", "MiB of physical memory")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("bad", [MAX_COST * 10, 1e308, -1.0])
def test_costs_out_of_range_are_refused_at_training(tmp_path, bad):
    f = tmp_path / "c.svm"
    f.write_text(THREE)
    d = pegasos.read_svmlight(str(f))
    cost = [0, 1, 1, 1, 0, 1, 1, bad, 0]
    with pytest.raises(ParameterError, match=r"entry \(row 3, column 2\) = .* is not a number in \[0, 1e\+150\]"):
        pegasos.fit(d, pegasos.TrainOptions(multiclass="crammer-singer", cost=cost))
    (tmp_path / "cost.txt").write_text(f"0 1 1\n1 0 1\n1 {bad!r} 0\n")
    r = run_pegasos("train", "-q", "--multiclass", "crammer-singer", "--cost-matrix", tmp_path / "cost.txt", f,
                    tmp_path / "m")
    one_error(r, "cost.txt, line 3: cost")
    assert not (tmp_path / "m").exists()


def test_a_cost_at_the_bound_trains(tmp_path):
    f = tmp_path / "c.svm"
    f.write_text(THREE)
    (tmp_path / "cost.txt").write_text(f"0 1 1\n1 0 1\n1 {MAX_COST!r} 0\n")
    ok(run_pegasos("train", "-q", "--multiclass", "crammer-singer", "--cost-matrix", tmp_path / "cost.txt", f,
                   tmp_path / "m"))


@pytest.mark.parametrize("bad", ["1e308", "1.1e150", "1e151"])      # (negative and non-finite: the header's checks)
def test_costs_above_the_bound_are_refused_at_model_load(tmp_path, bad):
    f = tmp_path / "c.svm"
    f.write_text(THREE)
    (tmp_path / "cost.txt").write_text("0 1 1\n1 0 1\n1 2 0\n")
    ok(run_pegasos("train", "-q", "--multiclass", "crammer-singer", "--cost-matrix", tmp_path / "cost.txt", f,
                   tmp_path / "m"))
    lines = (tmp_path / "m").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("cost_matrix "))
    assert lines[at].endswith(",2.0,0.0")
    lines[at] = lines[at][:-len("2.0,0.0")] + f"{bad},0.0"
    (tmp_path / "m").write_text("\n".join(lines) + "\n")
    shown = re.escape(repr(float(bad)))
    with pytest.raises(ModelFormatError, match=rf"line {at + 1}: cost_matrix entry \(row 3, column 2\) = {shown} "):
        pegasos.load_model(str(tmp_path / "m"))
    for command in (["predict", f], ["objective", f], ["info"]):
        r = run_pegasos(*command, tmp_path / "m")
        one_error(r, f"line {at + 1}: cost_matrix")
