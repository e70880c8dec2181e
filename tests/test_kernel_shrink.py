"""Shrinking in the kernel dual solver (:class:`pegasos._kernel.KernelDual`): coordinates stuck at a bound leave
the active set, the gradient out of it is rebuilt before any certificate, and the certificate stays exact and
below independent optima; the iterates depend neither on the cache nor on how the updates are cut into calls."""

import numpy as np
import pytest

import pegasos
from pegasos import _kernel
from pegasos.kernel import dual_max_updates

from conftest import data_file
from kernel_reference import gram
from test_kernel_dual import dense_reference, model_primal


def load(name, rows=None):
    X, y = pegasos.load_svmlight(str(data_file(name)))
    if rows is not None:
        X, y = X[:rows], y[:rows]
    return X.tocsr(), np.where(y > 0, 1.0, -1.0)


def solver(X, y, lam, cache_bytes=100 << 20, shrinking=True):
    m, n = X.shape
    return _kernel.KernelDual(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64),
                              y, n, _kernel.KERNEL_CODES["rbf"], 1.0 / n, 0.0, 3, 1.0 / (lam * m),
                              int(cache_bytes), shrinking)


def finish(state, m, chunk, tol=0.002, between=None):
    bound = dual_max_updates(m)
    why = "updates"
    while state.updates < bound:
        done, why = state.run(min(chunk, bound - state.updates), tol)
        if between is not None:
            between(state)
        if why != "updates":
            break
    return why


def dense_values(X, y, alpha, lam):
    """(P, D, margins) of alpha in Eq. (1)'s scaling, densely and independently of the solver."""
    Xd = X.toarray()
    K = gram(Xd, Xd, "rbf", gamma=1.0 / X.shape[1])
    f = K @ (alpha * y)
    aqa = (alpha * y) @ f
    lam_ = lam
    P = 0.5 * lam_ * aqa + np.mean(np.maximum(0.0, 1.0 - y * f))
    D = lam_ * (alpha.sum() - 0.5 * aqa)
    return P, D, y * f


CASES = [("heart_scale/heart_scale", None, 1e-4), ("heart_scale/heart_scale", None, 1e-6),
         ("heart_scale/heart_scale", None, 1e-7), ("a9a/a9a", 500, 1e-5), ("a9a/a9a", 300, 1e-7)]


@pytest.mark.parametrize("name,rows,lam", CASES)
def test_certificate_with_shrinking_against_an_independent_optimum(name, rows, lam):
    X, y = load(name, rows)
    model, state = pegasos.train_kernel(X, y, kernel="rbf", lam=lam, preset="auto", return_state=True)
    # shrinking took place, and the gradient was rebuilt over all m before the certificate
    assert state.shrink_events > 0 and state.shrunk > 0 and state.unshrinks >= 1
    assert state.n_active == X.shape[0]
    gap = float(model.info["certified_gap"])
    assert gap <= 0.002 and " certified" in model.info["stopping"]
    p_scaled, d_scaled = state.values()
    P, D = lam * p_scaled, lam * d_scaled
    # P and D are those of the returned alpha, recomputed densely
    P_dense, D_dense, _ = dense_values(X, y, state.alphas(), lam)
    assert P == pytest.approx(P_dense, rel=1e-9) and D == pytest.approx(D_dense, rel=1e-9)
    assert model_primal(model, X, y) == pytest.approx(P, rel=1e-9)
    assert (P - D) / P == pytest.approx(gap, rel=1e-9)
    # weak duality against an independent solution of the same dual (L-BFGS-B, dense): its primal bounds f*
    # from above and its dual from below, whatever its accuracy
    P_ref, D_ref, _ = dense_reference(X, y, lam, "rbf", 1.0 / X.shape[1])
    assert D <= P_ref * (1 + 1e-9)
    assert D_ref <= P * (1 + 1e-9)
    assert (P - P_ref) / P <= gap * (1 + 1e-9) + 1e-12


def test_rows_cover_the_active_set_only():
    """Without a cache every update computes a row: with shrinking the rows are over |A| < m values, so the
    kernel values of the rows are well below rows x m; without shrinking they are exactly rows x m."""
    X, y = load("heart_scale/heart_scale")
    m = X.shape[0]
    on, off = solver(X, y, 1e-6, cache_bytes=0), solver(X, y, 1e-6, cache_bytes=0, shrinking=False)
    assert finish(on, m, 100000) == "gap" and finish(off, m, 100000) == "gap"
    assert off.kernel_values == off.rows_computed * m and off.shrink_events == 0 and off.unshrinks == 0
    row_values = on.kernel_values - on.rebuild_values
    assert on.rows_computed == on.updates
    assert row_values < 0.5 * on.rows_computed * m
    assert on.kernel_values < 0.5 * off.kernel_values
    # both are certified: the same problem, to the same tolerance
    assert on.gap <= 0.002 and off.gap <= 0.002


@pytest.mark.parametrize("name,rows,lam", [("heart_scale/heart_scale", None, 1e-6), ("a9a/a9a", 500, 1e-5)])
def test_iterates_do_not_depend_on_the_cache_or_the_calls(name, rows, lam):
    X, y = load(name, rows)
    m = X.shape[0]
    runs = []
    for cache_bytes, chunk in [(100 << 20, 10 ** 9), (0, 10 ** 9), (8 * m * 3 + 100, 997), (100 << 20, 7)]:
        st = solver(X, y, lam, cache_bytes=cache_bytes)
        # asking for the values while coordinates are out of the active set must not change the iterates
        why = finish(st, m, chunk, between=lambda s: (s.values(), s.margins(), s.gap))
        runs.append((why, st.updates, st.shrink_events, st.shrunk, st.unshrinks, st.alphas().tobytes(),
                     st.margins().tobytes(), st.values()))
    assert runs[0][2] > 0 and runs[0][4] >= 1           # shrinking is active in this case
    assert all(r == runs[0] for r in runs[1:])


def test_values_while_shrunk_are_exact():
    """Stopped by the update count with coordinates out of the active set: values(), gap and margins() are
    those of the current alpha over all m (a rebuilt copy), and asking leaves the iterates as they were."""
    X, y = load("heart_scale/heart_scale")
    m, lam = X.shape[0], 1e-7
    st, twin = solver(X, y, lam), solver(X, y, lam)
    while st.n_active == m:
        assert st.run(500, 0.002)[1] == "updates"
    assert st.n_active < m
    p, d = st.values()
    P, D, margins = dense_values(X, y, st.alphas(), lam)
    assert lam * p == pytest.approx(P, rel=1e-9) and lam * d == pytest.approx(D, rel=1e-9)
    assert np.allclose(st.margins(), margins, rtol=1e-9, atol=1e-9)
    assert st.gap == pytest.approx((P - D) / P, rel=1e-9)
    twin.run(st.updates, 0.002)
    for s in (st, twin):
        s.run(5000, 0.002)
    assert st.alphas().tobytes() == twin.alphas().tobytes() and st.updates == twin.updates
