"""Data whose largest feature index is far beyond the columns they use (hashed or sparse ids).

A 4-line file with index 10,000,000 took 11-16 s and 1.3 GB in `pegasos train` (every dense pass of
the calibration and of the lengthened run was over 10^7 weights).  The run now trains on the used
columns, renumbered, which is the same run: a weight whose feature no example has stays 0.  So do
multiclass runs (a 6-line 3-class file: 43-81 s and 2.4 GB before), the dual of the certified gap
(its dual side is 0 at the unused columns) and the dual finish of a given length.
"""

import math

import numpy as np
import scipy.sparse as sp

import pegasos
from pegasos.data import compact_columns

from conftest import ok, run_pegasos

HUGE = 10_000_000


def _pair(seed=0, m=60):
    """The same examples twice: on columns 0..5 and with column 5 moved to HUGE - 1."""
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(m, 6)) * (rng.random((m, 6)) < 0.5)
    y = np.where(dense @ rng.normal(size=6) > 0, 1.0, -1.0)
    small = sp.csr_matrix(dense)
    coo = small.tocoo()
    cols = np.where(coo.col == 5, HUGE - 1, coo.col)
    huge = sp.csr_matrix((coo.data, (coo.row, cols)), shape=(m, HUGE))
    return small, huge, y


def test_compact_columns_renumbers_in_order():
    indices = np.array([7, 2, 9000, 2, 7], dtype=np.int32)
    columns, compact = compact_columns(indices)
    assert columns.tolist() == [2, 7, 9000] and compact.tolist() == [1, 0, 2, 0, 1]
    assert np.array_equal(columns[compact], indices) and compact.dtype == np.int32


def test_a_run_on_huge_indices_is_the_run_on_the_used_columns():
    small, huge, y = _pair()
    for settings in ({}, {"finish": "none"}, {"bias": "feature"}, {"epochs": 3, "batch_size": 4},
                     {"loss": "log", "average": True}):
        a = pegasos.fit((small, y), **settings)
        b = pegasos.fit((huge, y), **settings)
        assert b.n_features == HUGE
        assert np.array_equal(b.w[:5], a.w[:5]) and b.w[HUGE - 1] == a.w[5] and b.bias == a.bias
        assert np.count_nonzero(b.w[5:HUGE - 1]) == 0
        assert {k: v for k, v in b.info.items() if k != "epochs_trained"} == \
            {k: v for k, v in a.info.items() if k != "epochs_trained"}
        state = b.solver_state
        if b.info.get("finish_kept") == "dual":         # the dual finish replaced the weights: no state
            assert state is None and a.solver_state is None
            continue
        assert state["n_features"] == HUGE and state["v"].shape[0] == state["dim"]
        assert state["v"][HUGE - 1] == a.solver_state["v"][5]


def test_regression_and_the_continued_state_on_huge_indices(tmp_path):
    small, huge, y = _pair(seed=3)
    target = small @ np.arange(1.0, 7.0)
    a = pegasos.fit((small, target), loss="eps-insensitive", epochs=2)
    b = pegasos.fit((huge, target), loss="eps-insensitive", epochs=2)
    assert np.array_equal(b.w[:5], a.w[:5]) and b.w[HUGE - 1] == a.w[5]
    # the expanded state continues the run exactly: 1 epoch then 3 more = 4 epochs (the suffix mean of
    # the last half starts after the first run's end, so it resumes exactly)
    four = pegasos.fit((huge, target), loss="eps-insensitive", epochs=4, resume_state=True)
    one = pegasos.fit((huge, target), loss="eps-insensitive", epochs=1, resume_state=True)
    path = tmp_path / "one.model"
    one.save(path)
    more = pegasos.fit((huge, target), init=str(path), epochs=3)
    assert np.array_equal(more.w, four.w) and more.bias == four.bias
    assert np.array_equal(pegasos.fit((huge, target), init=one, epochs=3).w, four.w)


def test_the_command_line_on_a_file_with_one_huge_index(tmp_path):
    data = tmp_path / "h.svm"
    data.write_text("1 1:1\n-1 2:1\n1 3:1\n-1 10000000:1\n")
    ok(run_pegasos("train", "-q", data, tmp_path / "h.model"))
    text = (tmp_path / "h.model").read_text()
    assert "n_features 10000000" in text and "\n10000000:-" in text


def _three_classes(seed=0, m=90):
    """A 3-class set twice, as :func:`_pair`: on columns 0..5 and with column 5 moved to HUGE - 1."""
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(m, 6)) * (rng.random((m, 6)) < 0.5)
    y = np.argmax(dense @ rng.normal(size=(6, 3)), axis=1).astype(np.float64) + 1.0
    small = sp.csr_matrix(dense)
    coo = small.tocoo()
    huge = sp.csr_matrix((coo.data, (coo.row, np.where(coo.col == 5, HUGE - 1, coo.col))), shape=(m, HUGE))
    return small, huge, y


def _spy(monkeypatch, module, name, seen):
    """Record the n_cols / n_features each call of ``module.name`` is given."""
    real = getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(args[3] if name == "binary_dual" else args[0].n_features)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)


def test_the_gap_on_huge_indices_is_the_gap_on_the_used_columns(monkeypatch):
    from pegasos import certificate

    seen = []
    _spy(monkeypatch, certificate, "binary_dual", seen)
    for seed, settings, gap in ((0, {}, {}), (1, {"bias": "feature"}, {"tol": 0.01}),
                                (2, {"loss": "squared-hinge"}, {"until_stalled": True, "passes": 200}),
                                (3, {"loss": "squared-hinge", "bias": "feature", "class_weight": {1.0: 2.0}}, {})):
        small, huge, y = _pair(seed)
        a = pegasos.fit((small, y), **settings)
        b = pegasos.fit((huge, y), **settings)
        assert np.array_equal(b.w[:5], a.w[:5]) and b.w[HUGE - 1] == a.w[5] and b.bias == a.bias
        seen.clear()
        ga = pegasos.duality_gap(a, small, y, return_alpha=True, **gap)
        gb = pegasos.duality_gap(b, huge, y, return_alpha=True, **gap)
        assert seen == [6, 6]                # the dual of the huge data ran on its 6 used columns
        # the primal is objective()'s, whose sum of w^2 over 10^7 or 6 entries may round apart
        assert gb["primal"] == pegasos.objective(b, huge, y)["objective"]
        for key in ("primal", "gap", "rel_gap"):
            assert math.isclose(gb[key], ga[key], rel_tol=1e-12), (settings, key)
        for key in ga:
            if key not in ("seconds", "alpha", "w_dual", "primal", "gap", "rel_gap"):
                assert gb[key] == ga[key], (settings, key)
        assert gb["gap"] > 0 and np.array_equal(gb["alpha"], ga["alpha"])
        v, u = gb["w_dual"], ga["w_dual"]      # put back: (HUGE + 1,), the constant feature's weight last
        assert v.shape == (HUGE + 1,) and u.shape == (7,)
        assert np.array_equal(v[:5], u[:5]) and v[HUGE - 1] == u[5] and v[HUGE] == u[6]
        assert np.count_nonzero(v[5:HUGE - 1]) == 0
        assert (u[6] != 0) == (settings.get("bias") == "feature")


def test_the_gap_of_a_one_vs_rest_model_on_huge_indices():
    small, huge, y = _three_classes()
    a = pegasos.fit((small, y), epochs=4)
    b = pegasos.fit((huge, y), epochs=4)
    ga = pegasos.duality_gap(a, small, y, return_alpha=True)
    gb = pegasos.duality_gap(b, huge, y, return_alpha=True)
    for key in ("dual", "dual_start", "passes", "per_class_dual"):
        assert gb[key] == ga[key], key
    assert gb["primal"] == pegasos.objective(b, huge, y)["objective"]
    assert np.allclose(gb["per_class_primal"] + [gb["gap"]], ga["per_class_primal"] + [ga["gap"]], rtol=1e-12, atol=0)
    for v, u, alpha_b, alpha_a in zip(gb["w_dual"], ga["w_dual"], gb["alpha"], ga["alpha"]):
        assert v.shape == (HUGE + 1,) and np.array_equal(v[:5], u[:5]) and v[HUGE - 1] == u[5]
        assert np.count_nonzero(v[5:HUGE - 1]) == 0 and np.array_equal(alpha_b, alpha_a)


def test_a_multiclass_run_on_huge_indices_is_the_run_on_the_used_columns(monkeypatch):
    from pegasos import autotune

    seen = []
    _spy(monkeypatch, autotune, "fit_multiclass_auto", seen)
    for settings in ({}, {"bias": "feature", "class_weight": {2.0: 3.0}}, {"epochs": 3, "batch_size": 4},
                     {"step_offset": 10.0, "epochs": 2}, {"tol_gap": 0.05},
                     {"multiclass": "crammer-singer", "epochs": 2}, {"preset": "paper", "iterations": 500}):
        small, huge, y = _three_classes(seed=len(settings))
        seen.clear()
        a = pegasos.fit((small, y), **settings)
        b = pegasos.fit((huge, y), **settings)
        fixed = settings.get("preset") == "paper" or {"step_offset", "epochs"} <= set(settings)
        assert set(seen) == (set() if fixed else {6})       # the automatic runs on the huge data had 6 columns
        assert a.n_features == 6 and b.n_features == HUGE and b.W.shape == (3, HUGE)
        assert np.array_equal(b.W[:, :5], a.W[:, :5]) and np.array_equal(b.W[:, HUGE - 1], a.W[:, 5])
        assert np.count_nonzero(b.W[:, 5:HUGE - 1]) == 0 and np.count_nonzero(a.W[:, 5]) == 3
        assert np.array_equal(b.biases, a.biases) and b.info == a.info and b.method == a.method
        assert np.array_equal(b.predict(huge), a.predict(small))


def test_the_dual_finish_of_a_given_length_on_huge_indices_is_the_finish_on_the_used_columns(monkeypatch):
    from pegasos import certificate, finish

    seen = []
    real = certificate.dual_vector

    def spy(indptr, indices, data, n_cols, *args):
        seen.append(n_cols)
        return real(indptr, indices, data, n_cols, *args)

    monkeypatch.setattr(finish, "dual_vector", spy)
    monkeypatch.setattr(certificate, "dual_vector", spy)       # the scaled start's
    kept = set()
    for make, settings in ((_pair, {"epochs": 2, "finish_passes": 40}),
                           (_pair, {"epochs": 64, "finish_passes": 0, "bias": "feature"}),
                           (_three_classes, {"epochs": 2, "finish_passes": (30, 0, 5)}),
                           (_three_classes, {"epochs": 3, "finish_passes": 20, "bias": "feature"}),
                           (_pair, {"epochs": 2, "finish": "dual"}), (_three_classes, {"epochs": 2, "finish": "dual"})):
        small, huge, y = make(seed=3)
        seen.clear()
        a = pegasos.fit((small, y), **settings)
        assert seen and set(seen) == {6}
        seen.clear()
        b = pegasos.fit((huge, y), **settings)
        assert seen and set(seen) == {6}            # the finish's dual side had the 6 used columns
        assert b.info == a.info and b.info["finish"] == "dual" and b.n_features == HUGE
        kept.add(a.info["finish_kept"])
        if a.task == "multiclass":
            assert np.array_equal(b.W[:, :5], a.W[:, :5]) and np.array_equal(b.W[:, HUGE - 1], a.W[:, 5])
            assert np.count_nonzero(b.W[:, 5:HUGE - 1]) == 0 and np.array_equal(b.biases, a.biases)
            continue
        assert np.array_equal(b.w[:5], a.w[:5]) and b.w[HUGE - 1] == a.w[5] and b.bias == a.bias
        assert np.count_nonzero(b.w[5:HUGE - 1]) == 0
        if a.info["finish_kept"] == "pegasos":         # the run's own weights and state, in all columns
            assert b.solver_state["n_features"] == HUGE and b.solver_state["v"][HUGE - 1] == a.solver_state["v"][5]
        else:
            assert a.solver_state is None and b.solver_state is None
    assert {"dual", "pegasos"} <= kept           # both outcomes of the binary finish were met


def test_the_memory_check_counts_the_classes_at_the_full_dimension(monkeypatch):
    import pytest

    from pegasos import data
    from pegasos.errors import ExampleError

    small, huge, y = _three_classes()
    # 8 (n + 2) (vectors + 2) bytes: one weight vector in HUGE dimensions fits, three do not
    monkeypatch.setattr(data, "memory_limit", lambda: 8.0 * (HUGE + 2) * 4)
    binary = np.where(y == 1.0, 1.0, -1.0)
    assert pegasos.fit((huge, binary), epochs=1).n_features == HUGE
    row = int(huge.tocoo().row[huge.tocoo().col == HUGE - 1].min())      # the first that holds it
    for settings in ({}, {"multiclass": "crammer-singer", "epochs": 1}, {"preset": "paper", "iterations": 10}):
        with pytest.raises(ExampleError, match=f"^example {row + 1}: n_features = {HUGE} .* more than"):
            pegasos.fit((huge, y), **settings)
    assert pegasos.fit((small, y), epochs=1).n_features == 6


def test_the_command_line_on_multiclass_and_the_gap_with_one_huge_index(tmp_path):
    lines = ["1 1:1", "2 2:1", "3 3:1", "1 1:0.5 4:1", "2 2:0.7", "3 {}:1"]
    huge, small = tmp_path / "h.svm", tmp_path / "s.svm"
    huge.write_text("\n".join(lines).format(HUGE) + "\n")
    small.write_text("\n".join(lines).format(5) + "\n")
    ok(run_pegasos("train", "-q", huge, tmp_path / "h.model"))
    ok(run_pegasos("train", "-q", small, tmp_path / "s.model"))
    h, s = ((tmp_path / f"{n}.model").read_text() for n in "hs")
    assert f"n_features {HUGE}" in h and "n_features 5" in s
    assert h.replace(f"n_features {HUGE}", "n_features 5").replace("h.svm", "s.svm").replace(f"{HUGE}:", "5:") == s
    outs = [ok(run_pegasos("objective", "--gap", tmp_path / f"{n}.svm", tmp_path / f"{n}.model"))
            for n in "hs"]
    assert [ln for ln in outs[0].splitlines() if not ln.startswith("seconds")] == \
        [ln for ln in outs[1].splitlines() if not ln.startswith("seconds")]
    assert "relative gap" in outs[0]
