"""Correspondence analysis (co-embedding paper Eqs. 5-7): trivial triple, transition formulas, χ² distances."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.inputs import Inputs, Relation
from cova.methods import make_method
from cova.methods.coembed.ca import CA, correspondence_analysis, normalized_svd


def random_relation(m: int = 25, n: int = 15, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = rng.random((m, n)) * (rng.random((m, n)) < 0.6)
    R[:, 0] += 0.05  # no empty row
    R[0] += 0.05     # no empty column
    return R


def test_trivial_triple():
    R = random_relation()
    U, s, V, dr, dc = normalized_svd(R, 4)
    N = R.sum()
    assert s[0] == pytest.approx(1.0, abs=1e-12) and np.all(s[1:] < 1.0)
    np.testing.assert_allclose(U[:, 0], np.sqrt(dr) / np.sqrt(N), atol=1e-12)
    np.testing.assert_allclose(V[:, 0], np.sqrt(dc) / np.sqrt(N), atol=1e-12)


@pytest.mark.parametrize("solver", ["dense", "sparse"])
def test_transition_formulas(solver):
    R = random_relation()
    Zx, Zy, theta = correspondence_analysis(sp.csr_matrix(R), 4, solver=solver)
    dr, dc = R.sum(axis=1), R.sum(axis=0)
    np.testing.assert_allclose(Zx * theta, (R @ Zy) / dr[:, None], atol=1e-10, rtol=0)
    np.testing.assert_allclose(Zy * theta, (R.T @ Zx) / dc[:, None], atol=1e-10, rtol=0)
    assert np.all(np.diff(theta) <= 0)


def test_dense_and_sparse_solvers_agree_with_fixed_signs():
    R = random_relation(40, 30, seed=3)
    dense = correspondence_analysis(R, 3, solver="dense")
    sparse = correspondence_analysis(R, 3, solver="sparse")
    for a, b in zip(dense, sparse):
        np.testing.assert_allclose(a, b, atol=1e-9)
    U = normalized_svd(R, 4)[0]
    assert np.all(U[np.argmax(np.abs(U), axis=0), np.arange(4)] > 0)


def test_row_distances_are_chi_square_distances():
    """Over all non-trivial components ‖z_i − z_k‖² = Σ_j (r_ij/r_i − r_kj/r_k)² / c_j (Eq. 5, with its square)."""
    R = random_relation(12, 8, seed=1)
    Zx, _, _ = correspondence_analysis(R, min(R.shape) - 1, solver="dense")
    profiles = R / R.sum(axis=1, keepdims=True)
    c = R.sum(axis=0)
    chi2 = (((profiles[:, None, :] - profiles[None, :, :]) ** 2) / c).sum(axis=2)
    embedded = ((Zx[:, None, :] - Zx[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(embedded, chi2, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1])
def test_empty_row_or_column_is_refused(axis):
    R = random_relation()
    if axis == 0:
        R[3] = 0.0
    else:
        R[:, 4] = 0.0
    with pytest.raises(ValueError, match=f"1 {'row' if axis == 0 else 'column'}s are empty"):
        correspondence_analysis(R, 2)


def test_too_many_components_and_negative_entries_are_refused():
    R = random_relation(6, 4)
    with pytest.raises(ValueError, match="at most"):
        correspondence_analysis(R, 4, solver="dense")
    with pytest.raises(ValueError, match="non-negative"):
        correspondence_analysis(-R, 2)


def test_ca_estimator_fits_the_relation_and_declares_the_columns():
    R = random_relation()
    rel = Relation(sp.csr_matrix(R), [f"r{i}" for i in range(25)], [f"c{j}" for j in range(15)])
    est = make_method("ca", {"n_components": 3})
    assert isinstance(est, CA) and est.requires() == ("relation",) and est.extra_outputs == ("column_embedding_",)
    Z = est.fit_transform(Inputs(relation=rel))
    Zx, Zy, theta = correspondence_analysis(R, 3)
    np.testing.assert_array_equal(Z, Zx)
    np.testing.assert_array_equal(est.column_embedding_, Zy)
    np.testing.assert_array_equal(est.singular_values_, theta)
