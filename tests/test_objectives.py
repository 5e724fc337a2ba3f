"""Finite-difference checks of the objectives and the COVA-E1 closed form (spec §10.A.1-2, §10.E.1)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.methods import CovaE1
from cova.methods.cova import e1_objective, e1_system
from cova.objectives import o_dist_c, o_dist_l


def fd_gradient(f, Z, eps=1e-6):
    G = np.zeros_like(Z)
    for idx in np.ndindex(Z.shape):
        E = np.zeros_like(Z)
        E[idx] = eps
        G[idx] = (f(Z + E) - f(Z - E)) / (2 * eps)
    return G


def rel_err(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def test_o_dist_c_value_and_gradient(toy_inputs):
    inp = toy_inputs
    Z = np.random.default_rng(1).normal(size=(40, 2))
    value, grad = o_dist_c(Z, inp.R, inp.prototypes)
    brute = sum(inp.R[i, j] * np.sum((Z[i] - inp.prototypes[j]) ** 2) for i in range(40) for j in range(4))
    assert value == pytest.approx(brute, rel=1e-12)
    fd = fd_gradient(lambda z: o_dist_c(z, inp.R, inp.prototypes)[0], Z)
    assert rel_err(grad, fd) < 1e-6


def test_o_dist_l_value_and_gradient(toy_inputs):
    inp = toy_inputs
    Z = np.random.default_rng(2).normal(size=(40, 2))
    value, grad = o_dist_l(Z, inp.W)
    Wd = inp.W.toarray()
    brute = 0.5 * sum(Wd[i, j] * np.sum((Z[i] - Z[j]) ** 2) for i in range(40) for j in range(40))
    assert value == pytest.approx(brute, rel=1e-12)
    fd = fd_gradient(lambda z: o_dist_l(z, inp.W)[0], Z)
    assert rel_err(grad, fd) < 1e-6


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.95])
def test_e1_is_a_stationary_point(toy_inputs, alpha):
    inp = toy_inputs
    Z = CovaE1(alpha=alpha).fit_transform(inp)
    _, g = e1_objective(Z, inp.W, inp.R, inp.prototypes, alpha)
    _, g0 = e1_objective(np.zeros_like(Z), inp.W, inp.R, inp.prototypes, alpha)
    assert np.linalg.norm(g) <= 1e-8 * np.linalg.norm(g0)
    # f is convex: random perturbations can only increase it
    f_star = e1_objective(Z, inp.W, inp.R, inp.prototypes, alpha)[0]
    rng = np.random.default_rng(3)
    for _ in range(5):
        assert e1_objective(Z + 1e-3 * rng.normal(size=Z.shape), inp.W, inp.R, inp.prototypes, alpha)[0] > f_star


@pytest.mark.parametrize("alpha", [0.1, 0.5])
def test_printed_eq14_without_alpha_is_not_stationary(toy_inputs, alpha):
    """Regression guard for spec T1: the printed Eq. 14 lacks the factor α and is not a stationary point."""
    inp = toy_inputs
    M, B = e1_system(inp.W, inp.R, inp.prototypes, alpha)
    Z_printed = np.linalg.solve(M.toarray(), B / alpha)
    _, g = e1_objective(Z_printed, inp.W, inp.R, inp.prototypes, alpha)
    _, g0 = e1_objective(np.zeros_like(Z_printed), inp.W, inp.R, inp.prototypes, alpha)
    assert np.linalg.norm(g) > 1e-2 * np.linalg.norm(g0)


def test_e1_equivariant_to_similarity_transforms_of_prototypes(toy_inputs):
    inp = toy_inputs
    Z = CovaE1(alpha=0.5).fit_transform(inp)
    A = np.array([[0.0, -2.0], [2.0, 0.0]]) @ np.array([[1.0, 0.3], [0.0, 1.0]])
    t = np.array([5.0, -1.0])
    moved = type(inp)(**{**inp.__dict__, "prototypes": inp.prototypes @ A + t})
    Z2 = CovaE1(alpha=0.5).fit_transform(moved)
    np.testing.assert_allclose(Z2, Z @ A + t, atol=1e-10 * np.abs(Z2).max())


@pytest.mark.parametrize("solver", ["direct", "cg"])
def test_sparse_solvers_equal_dense(toy_inputs, solver):
    inp = toy_inputs
    dense = CovaE1(alpha=0.3, solver="dense").fit_transform(inp)
    sparse = CovaE1(alpha=0.3, solver=solver).fit_transform(inp)
    assert np.abs(sparse - dense).max() <= 1e-8 * np.abs(dense).max()


def test_e1_ridge_when_some_samples_have_no_confidence(toy_inputs):
    """A connected component without confidence makes M singular; the automatic ridge ζ keeps it solvable."""
    inp = toy_inputs
    R = inp.R.copy()
    R[:5] = 0.0
    W = inp.W.tolil()
    W[:5, :] = 0
    W[:, :5] = 0
    isolated = type(inp)(**{**inp.__dict__, "R": R / R.sum(), "W": sp.csr_matrix(W)})
    est = CovaE1(alpha=0.5).fit(isolated)
    assert est.zeta_ > 0
    assert np.all(np.isfinite(est.embedding_))


def test_e1_rejects_bad_parameters(toy_inputs):
    with pytest.raises(ValueError, match="alpha"):
        CovaE1(alpha=1.5).fit(toy_inputs)
    with pytest.raises(ValueError, match="solver"):
        CovaE1(solver="magic").fit(toy_inputs)
