"""The octree Barnes–Hut repulsion against the exact blocked sums (t-SNE's ΣQ and Σ_j q_ij²(z_i − z_j))."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from cova.objectives.kl import _repulsion_bh, _repulsion_exact
from cova.objectives.octree import repulsion_octree


def _sphere(n: int, radius: float, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return radius * X / np.linalg.norm(X, axis=1, keepdims=True)


def _blobs(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=10.0, size=(10, 3))
    return centres[rng.integers(0, 10, n)] + rng.normal(size=(n, 3))


def _errors(approx: tuple[float, np.ndarray], exact: tuple[float, np.ndarray]) -> tuple[float, float]:
    return (abs(approx[0] - exact[0]) / exact[0],
            float(np.linalg.norm(approx[1] - exact[1]) / np.linalg.norm(exact[1])))


@pytest.fixture(scope="module", params=["sphere", "blobs"])
def cloud(request) -> tuple[np.ndarray, tuple[float, np.ndarray]]:
    Z = _sphere(2000, 8.0) if request.param == "sphere" else _blobs(2000)
    return Z, _repulsion_exact(Z)


def test_theta_half_is_as_accurate_as_opentsne_bh(cloud):
    Z, exact = cloud
    err_q, err_rep = _errors(repulsion_octree(Z, theta=0.5), exact)
    ref_q, ref_rep = _errors(_repulsion_bh(Z, theta=0.5), exact)
    assert err_q < 1e-2 and err_rep < 3e-2
    assert err_rep <= ref_rep


def test_theta_zero_is_exact(cloud):
    Z, exact = cloud
    sum_q, rep = repulsion_octree(Z, theta=0.0)
    assert sum_q == pytest.approx(exact[0], rel=1e-12)
    np.testing.assert_allclose(rep, exact[1], rtol=1e-10, atol=1e-12 * np.abs(exact[1]).max())


@pytest.mark.parametrize("theta", [0.0, 0.5])
def test_coincident_points_count_q_one(theta):
    rng = np.random.default_rng(1)
    Z = np.vstack([np.repeat(rng.normal(size=(5, 3)) * 4.0, 40, axis=0), rng.normal(size=(100, 3)) * 4.0])
    exact = _repulsion_exact(Z)
    sum_q, rep = repulsion_octree(Z, theta=theta)
    assert np.isfinite(rep).all()
    err_q, err_rep = _errors((sum_q, rep), exact)
    assert err_q < (1e-12 if theta == 0 else 1e-2)
    assert err_rep < (1e-10 if theta == 0 else 3e-2)
    all_same = np.zeros((50, 3))
    sum_q, rep = repulsion_octree(all_same, theta=theta)
    assert sum_q == 50 * 49 and not rep.any()


def test_result_does_not_depend_on_the_thread_count():
    Z = _blobs(3000, seed=2)
    saved = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = repulsion_octree(Z)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = repulsion_octree(Z)
    finally:
        numba.set_num_threads(saved)
    assert one[0] == two[0]
    assert np.array_equal(one[1], two[1])


def test_small_and_invalid_inputs():
    assert repulsion_octree(np.zeros((1, 3)))[0] == 0.0
    Z = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    sum_q, rep = repulsion_octree(Z)
    assert sum_q == pytest.approx(1.0)
    np.testing.assert_allclose(rep, [[-0.25, 0, 0], [0.25, 0, 0]])
    with pytest.raises(ValueError, match="shape"):
        repulsion_octree(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="theta"):
        repulsion_octree(Z, theta=-1.0)
    with pytest.raises(ValueError, match="finite"):
        repulsion_octree(np.array([[0.0, 0, 0], [np.nan, 0, 0]]))
