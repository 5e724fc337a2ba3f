"""The KL objectives of SNE, symmetric SNE and t-SNE (cova.objectives.kl): finite-difference gradients for
k = 1, 2, 3, agreement between the dense, small and sparse evaluations, and the k = 3 Barnes–Hut repulsion."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.objectives.kl import (joint_kl_small, kl_repulsion, sne_kl_and_gradient, tsne_kl_and_gradient,
                                tsne_kl_sparse)


def fd_gradient(f, Z, eps=1e-6):
    G = np.zeros_like(Z)
    for idx in np.ndindex(Z.shape):
        E = np.zeros_like(Z)
        E[idx] = eps
        G[idx] = (f(Z + E) - f(Z - E)) / (2 * eps)
    return G


def rel_err(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


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
