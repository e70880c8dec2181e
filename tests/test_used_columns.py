"""Data whose largest feature index is far beyond the columns they use (hashed or sparse ids).

A 4-line file with index 10,000,000 took 11-16 s and 1.3 GB in `pegasos train` (every dense pass of
the calibration and of the lengthened run was over 10^7 weights).  The run now trains on the used
columns, renumbered, which is the same run: a weight whose feature no example has stays 0.
"""

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
