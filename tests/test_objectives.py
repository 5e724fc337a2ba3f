"""Finite-difference checks of the objectives and the COVA-E1 closed form (COVA App. A, Eq. 14)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.methods import CovaE1
from cova.objectives import (
    kl_repulsion,
    o_dist_c,
    o_dist_l,
    o_kl_c,
    o_kl_l,
    o_kl_l_conditional,
    objective_on_projection,
    project_gradient,
)
from cova.objectives.cova import e1_objective, e1_system
from cova.objectives.kl import joint_kl_small, sne_kl_and_gradient, tsne_kl_and_gradient, tsne_kl_sparse
from cova.objectives.local import CONDITIONAL_MAX_SAMPLES


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
    """Regression guard: the printed Eq. 14 lacks the factor α and is not a stationary point."""
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


def test_block_cg_equals_dense_with_a_ridge_and_columns_of_different_scales(toy_inputs):
    """The CG solves all columns together (one W product per iteration) and freezes converged ones: a third
    prototype coordinate 1e4 times larger and an automatic ridge must not change the answer."""
    inp = toy_inputs
    R = inp.R.copy()
    R[:5] = 0.0
    P = np.column_stack([inp.prototypes, 1e4 * inp.prototypes[:, 0] + 3.0])
    moved = type(inp)(**{**inp.__dict__, "R": R / R.sum(), "prototypes": P})
    dense = CovaE1(alpha=0.4, solver="dense").fit(moved)
    cg = CovaE1(alpha=0.4, solver="cg").fit(moved)
    assert cg.zeta_ == dense.zeta_ > 0
    for j in range(3):
        assert np.abs(cg.embedding_[:, j] - dense.embedding_[:, j]).max() <= 1e-8 * np.abs(dense.embedding_[:, j]).max()


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


# --------------------------------------------------------------------------------------------------------
# KL objectives and projection forms (COVA Table A.1, A.2; the corrected A.8 and A.44, docs/algorithms.md)
# --------------------------------------------------------------------------------------------------------

def dense_q(Z):
    D2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    Q = 1.0 / (1.0 + D2)
    np.fill_diagonal(Q, 0.0)
    return Q


def relation_features(X, k_tilde=12, seed=4):
    """Gaussian relation features F (l×k̃) to k̃ random sample prototypes, σ = median distance."""
    rng = np.random.default_rng(seed)
    Qp = X[rng.choice(len(X), k_tilde, replace=False)]
    D2 = ((X[:, None, :] - Qp[None, :, :]) ** 2).sum(-1)
    return np.exp(-D2 / (2 * np.median(D2)))


@pytest.fixture
def Z40():
    return np.random.default_rng(5).normal(size=(40, 2))


def test_o_kl_c_value_and_gradient(toy_inputs, Z40):
    inp = toy_inputs
    value, grad = o_kl_c(Z40, inp.R, inp.prototypes)
    T = np.array([[1.0 / (1.0 + np.sum((Z40[i] - inp.prototypes[j]) ** 2)) for j in range(4)] for i in range(40)])
    brute = sum(inp.R[i, j] * np.log(inp.R[i, j] / (T[i, j] / T.sum())) for i in range(40) for j in range(4))
    assert value == pytest.approx(brute, rel=1e-12)
    fd = fd_gradient(lambda z: o_kl_c(z, inp.R, inp.prototypes)[0], Z40)
    assert rel_err(grad, fd) < 1e-6


def test_o_kl_c_zero_confidences(toy_inputs, Z40):
    """0·ln 0 = 0: zero entries of R leave value and gradient finite and consistent."""
    R = toy_inputs.R.copy()
    R[::3, 1:] = 0.0
    R /= R.sum()
    value, grad = o_kl_c(Z40, R, toy_inputs.prototypes)
    assert np.isfinite(value)
    fd = fd_gradient(lambda z: o_kl_c(z, R, toy_inputs.prototypes)[0], Z40)
    assert rel_err(grad, fd) < 1e-6


def test_o_kl_c_uses_normalised_t_of_a8(toy_inputs, Z40):
    """Eq. 8 as printed (t unnormalised inside the log) has a different, purely attractive gradient;
    o_kl_c implements the normalised A.8 form."""
    inp = toy_inputs
    P = inp.prototypes

    def unnormalised(z):
        D2 = ((z[:, None, :] - P[None, :, :]) ** 2).sum(-1)
        T = 1.0 / (1.0 + D2)
        H = inp.R * T
        return float(np.sum(inp.R * np.log(inp.R / T))), 2 * (H.sum(1)[:, None] * z - H @ P)

    _, g_unnorm = unnormalised(Z40)
    assert rel_err(g_unnorm, fd_gradient(lambda z: unnormalised(z)[0], Z40)) < 1e-6  # a valid gradient ...
    _, g = o_kl_c(Z40, inp.R, P)
    assert rel_err(g_unnorm, g) > 0.1  # ... of a different objective


def dense_kl_l(Z, W):
    Wd = W.toarray()
    Q = dense_q(Z)
    return sum(Wd[i, j] * np.log(Wd[i, j] / (Q[i, j] / Q.sum()))
               for i in range(len(Z)) for j in range(len(Z)) if Wd[i, j] > 0)


def test_o_kl_l_value_and_gradient(toy_inputs, Z40):
    W = toy_inputs.W
    value, grad = o_kl_l(Z40, W)
    assert value == pytest.approx(dense_kl_l(Z40, W), rel=1e-12)
    Q = dense_q(Z40)
    G = (W.toarray() - Q / Q.sum()) * Q
    assert np.allclose(grad, 4 * (np.diag(G.sum(1)) - G) @ Z40, rtol=0, atol=1e-13 * np.abs(grad).max())
    fd = fd_gradient(lambda z: o_kl_l(z, W)[0], Z40)
    assert rel_err(grad, fd) < 1e-6


@pytest.mark.parametrize("block_size", [1, 7, 13])
def test_o_kl_l_blocked_equals_single_block(toy_inputs, Z40, block_size):
    v1, g1 = o_kl_l(Z40, toy_inputs.W, block_size=40)
    vb, gb = o_kl_l(Z40, toy_inputs.W, block_size=block_size)
    assert abs(vb - v1) <= 1e-12 * abs(v1)
    assert np.abs(gb - g1).max() <= 1e-12 * np.abs(g1).max()


def test_o_kl_l_never_builds_an_l_by_l_array():
    import tracemalloc

    from conftest import random_graph
    l = 3000
    rng = np.random.default_rng(6)
    W = random_graph(l, 5, rng)
    Z = rng.normal(size=(l, 2))
    tracemalloc.start()
    try:
        o_kl_l(Z, W, block_size=100)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < l * l * 8 / 8  # an l×l float64 array alone is 72 MB; the blocks are 2.4 MB


def test_kl_repulsion_matches_dense(Z40):
    sum_q, rep = kl_repulsion(Z40)
    Q = dense_q(Z40)
    Q2 = Q * Q
    assert sum_q == pytest.approx(Q.sum(), rel=1e-13)
    np.testing.assert_allclose(rep, Q2.sum(1)[:, None] * Z40 - Q2 @ Z40, rtol=1e-12, atol=1e-15)


def test_o_kl_l_rejects_unknown_method(toy_inputs, Z40):
    with pytest.raises(ValueError, match="method"):
        o_kl_l(Z40, toy_inputs.W, method="barnes-hut-someday")


@pytest.mark.parametrize("isolate", [False, True])
def test_o_kl_l_conditional_value_and_gradient(toy_inputs, Z40, isolate):
    W = toy_inputs.W.tolil()
    if isolate:  # an isolated sample: its column carries no distribution
        W[0, :] = 0
        W[:, 0] = 0
    W = sp.csr_matrix(W)
    W = W / W.sum()
    value, grad = o_kl_l_conditional(Z40, W)
    Wd = W.toarray()
    Q = dense_q(Z40)
    brute = 0.0
    for j in range(40):
        if Wd[:, j].sum() == 0:
            continue
        for i in range(40):
            p = Wd[i, j] / Wd[:, j].sum()
            if p > 0:
                brute += p * np.log(p / (Q[i, j] / Q[:, j].sum()))
    assert value == pytest.approx(brute, rel=1e-12)
    fd = fd_gradient(lambda z: o_kl_l_conditional(z, W)[0], Z40)
    assert rel_err(grad, fd) < 1e-6


def test_o_kl_l_conditional_size_guard():
    l = CONDITIONAL_MAX_SAMPLES + 1
    with pytest.raises(ValueError, match="5,000"):
        o_kl_l_conditional(np.zeros((l, 2)), sp.csr_matrix((l, l)))


def _objectives(inp):
    return {
        "dist_c": (o_dist_c, (inp.R, inp.prototypes)),
        "dist_l": (o_dist_l, (inp.W,)),
        "kl_c": (o_kl_c, (inp.R, inp.prototypes)),
        "kl_l": (o_kl_l, (inp.W,)),
    }


@pytest.mark.parametrize("name", ["dist_c", "dist_l", "kl_c", "kl_l"])
def test_projection_gradients(toy_inputs, name):
    """Grad_U = Fᵀ·Grad_Z(FU) against central differences in U (l = 40, c = 4, k = 2, k̃ = 12)."""
    inp = toy_inputs
    obj, args = _objectives(inp)[name]
    F = relation_features(inp.X)
    U = np.linalg.qr(np.random.default_rng(7).normal(size=(12, 2)))[0]
    value, grad_U = objective_on_projection(obj, F, U, *args)
    assert value == obj(F @ U, *args)[0]
    np.testing.assert_array_equal(grad_U, project_gradient(F, obj(F @ U, *args)[1]))
    fd = fd_gradient(lambda u: obj(F @ u, *args)[0], U)
    assert rel_err(grad_U, fd) < 1e-6


def test_table_a2_kl_l_corrected_form_and_literal_a44_fails(toy_inputs):
    """The corrected Table A.2 row 4Fᵀ𝐋(G)FU passes; the literal A.44
    4(Fᵀ𝐃(G)F − 4 Σ_i Σ_{j≠i} g_ij φ_iφ_iᵀ)U fails the finite-difference check."""
    inp = toy_inputs
    F = relation_features(inp.X)
    U = np.linalg.qr(np.random.default_rng(7).normal(size=(12, 2)))[0]
    Z = F @ U
    Q = dense_q(Z)
    G = (inp.W.toarray() - Q / Q.sum()) * Q
    DG = np.diag(G.sum(1))
    fd = fd_gradient(lambda u: o_kl_l(F @ u, inp.W)[0], U)
    corrected = 4 * (F.T @ DG @ F - F.T @ G @ F) @ U
    assert rel_err(corrected, fd) < 1e-6
    literal_a44 = 4 * (F.T @ DG @ F - 4 * sum(G[i, j] * np.outer(F[i], F[i])
                                               for i in range(40) for j in range(40) if j != i)) @ U
    assert rel_err(literal_a44, fd) > 0.5


# --------------------------------------------------------------------------------------------------------
# KL objectives of SNE, symmetric SNE and t-SNE (cova.objectives.kl): gradients for k = 1, 2, 3, agreement of
# the dense, small and sparse evaluations, Barnes–Hut in three dimensions
# --------------------------------------------------------------------------------------------------------

def joint_p(l, seed, density=1.0):
    rng = np.random.default_rng(seed)
    A = rng.random((l, l)) * (rng.random((l, l)) < density)
    P = A + A.T
    np.fill_diagonal(P, 0.0)
    return P / P.sum()


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("kernel", ["student", "gaussian"])
def test_joint_kl_small_gradient(k, kernel):
    P = joint_p(9, k)
    Y = np.random.default_rng(10 + k).normal(size=(9, k))
    value, grad = joint_kl_small(Y, P, kernel)
    assert value > 0
    assert rel_err(grad, fd_gradient(lambda y: joint_kl_small(y, P, kernel)[0], Y)) < 1e-6


def test_joint_kl_small_rejects_unknown_kernels():
    with pytest.raises(ValueError, match="kernel"):
        joint_kl_small(np.zeros((3, 2)), joint_p(3, 0), "cauchy")


@pytest.mark.parametrize("k", [1, 3])
def test_dense_kernels_gradients_in_other_dimensions(k):
    l = 25
    P = joint_p(l, 4)
    Z = np.random.default_rng(5).normal(size=(l, k))
    _, g = tsne_kl_and_gradient(Z, P)
    assert rel_err(g, fd_gradient(lambda z: tsne_kl_and_gradient(z, P)[0], Z)) < 1e-6
    Pc = P / P.sum(axis=1, keepdims=True)
    _, g = sne_kl_and_gradient(Z, Pc)
    assert rel_err(g, fd_gradient(lambda z: sne_kl_and_gradient(z, Pc)[0], Z)) < 1e-6


@pytest.mark.parametrize("k", [1, 2, 3])
def test_small_dense_and_sparse_t_sne_agree(k):
    l = 30
    P = joint_p(l, 6, density=0.3)
    Z = np.random.default_rng(7).normal(size=(l, k))
    v_small, g_small = joint_kl_small(Z, P, "student")
    v_dense, g_dense = tsne_kl_and_gradient(Z, P)
    v_sparse, g_sparse = tsne_kl_sparse(Z, sp.csr_matrix(P), method="exact")
    assert v_dense == pytest.approx(v_small, rel=1e-10) and v_sparse == pytest.approx(v_small, rel=1e-10)
    np.testing.assert_allclose(g_dense, g_small, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g_sparse, g_small, rtol=1e-9, atol=1e-12)
    nan_value, g = tsne_kl_sparse(Z, sp.csr_matrix(P), method="exact", need_value=False)
    assert np.isnan(nan_value)
    np.testing.assert_array_equal(g, g_sparse)


def test_sparse_t_sne_gradient_k3():
    l = 40
    P = sp.csr_matrix(joint_p(l, 8, density=0.2))
    Z = np.random.default_rng(9).normal(size=(l, 3))
    _, g = tsne_kl_sparse(Z, P, method="exact")
    assert rel_err(g, fd_gradient(lambda z: tsne_kl_sparse(z, P, method="exact")[0], Z)) < 1e-6


def test_barnes_hut_repulsion_in_three_dimensions():
    Z = np.random.default_rng(11).normal(scale=3.0, size=(600, 3))
    sq_exact, rep_exact = kl_repulsion(Z, "exact")
    sq_bh, rep_bh = kl_repulsion(Z, "bh")
    assert sq_bh == pytest.approx(sq_exact, rel=2e-2)
    assert rel_err(rep_bh, rep_exact) < 5e-2
    sq0, rep0 = kl_repulsion(Z, "bh", theta=0.0)
    assert sq0 == pytest.approx(sq_exact, rel=1e-9)
    np.testing.assert_allclose(rep0, rep_exact, rtol=1e-7, atol=1e-12)
    with pytest.raises(ValueError, match="k = 3"):
        kl_repulsion(Z, "fft")
