"""Local MDS (a baseline of the NeRV paper, Sec. 4.1; docs/papers.md "LocalMDS"): the cost against brute force
and raw stress, the update direction, recovery of an isometric plane, determinism and the size guard."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

from cova.inputs import Inputs  # noqa: F401  (Embedder contract: fit accepts objects with .X)
from cova.methods.nerv.lmds import LMDS
from cova.methods.registry import METHODS, make_method
from cova.metrics import trustworthiness
from cova.objectives.lmds import lmds_cost, lmds_point_cost, lmds_step, neighbourhood_radii


def _problem(n: int = 30, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    D = squareform(pdist(X))
    D /= D[~np.eye(n, dtype=bool)].mean()
    Y = rng.normal(size=(n, 2))
    return X, D, Y


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("r", [0.0, 0.8, np.inf])
def test_cost_matches_brute_force(lam, r):
    _, D, Y = _problem()
    n = D.shape[0]
    rho = neighbourhood_radii(D, 5)
    # rho_i by a direct sort
    for i in range(n):
        assert rho[i] == np.sort(np.delete(D[i], i))[4]
    E = 0.0
    for i in range(n):
        R = max(r, rho[i])
        for j in range(n):
            if j == i:
                continue
            dy = math.dist(Y[i], Y[j])
            w = (1 - lam) * (dy < R) + lam * (D[i, j] < R)
            E += 0.5 * (D[i, j] - dy) ** 2 * w
    assert lmds_cost(Y, D, rho, r, lam) == pytest.approx(E, rel=1e-12)
    assert sum(lmds_point_cost(Y, D, rho, i, r, lam) for i in range(n)) == pytest.approx(E, rel=1e-12)


def test_cost_is_raw_stress_without_locality():
    # 3 points: input distances (scaled) 1, 1, 2 on a line; display an equilateral triangle of side 1
    D = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    Y = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3) / 2]])
    rho = np.zeros(3)
    # raw stress sum_{i<j} (d_x - d_y)^2 = 0 + 0 + (2 - 1)^2 = 1
    assert lmds_cost(Y, D, rho, np.inf, 0.0) == pytest.approx(1.0)
    _, D, Y = _problem()
    stress = float(np.sum((pdist(Y) - squareform(D, checks=False)) ** 2))
    assert lmds_cost(Y, D, np.zeros(len(D)), np.inf, 0.0) == pytest.approx(stress, rel=1e-12)


@pytest.mark.parametrize("r", [0.5, np.inf])
def test_step_decreases_ith_term(r):
    _, D, Y = _problem()
    Y = 0.4 * Y  # display distances comparable to the mean-1 input ones, so pairs fall inside the radius
    rho = neighbourhood_radii(D, 5)
    for i in (0, 7, 29):
        before = lmds_point_cost(Y, D, rho, i, r, 0.0)
        assert before > 0
        for alpha in (1e-3, 0.05, 0.25):
            after = lmds_point_cost(lmds_step(Y, D, rho, i, alpha, r, 0.0), D, rho, i, r, 0.0)
            assert after < before
        # exact: each weighted pair's |d_x - d_y| shrinks by the factor (1 - alpha)
        Y2 = lmds_step(Y, D, rho, i, 0.1, r, 0.0)
        assert np.array_equal(Y2[i], Y[i])
        dy, dy2 = np.linalg.norm(Y - Y[i], axis=1), np.linalg.norm(Y2 - Y[i], axis=1)
        moved = (np.arange(len(D)) != i) & (dy < max(r, rho[i]))
        np.testing.assert_allclose(np.abs(D[i] - dy2)[moved], 0.9 * np.abs(D[i] - dy)[moved], rtol=1e-9,
                                   atol=1e-12)
        np.testing.assert_array_equal(Y2[~moved], Y[~moved])


def _plane(n: int = 200, seed: int = 1):
    rng = np.random.default_rng(seed)
    P = rng.uniform(0, 1, size=(n, 2)) * [2.0, 1.0]
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return np.c_[P, np.zeros(n)] @ Q.T + rng.normal(size=3)


@pytest.mark.parametrize("init", ["pca", "random"])
def test_recovers_isometric_plane(init):
    X = _plane()
    m = LMDS(init=init, n_iter_per_point=100 if init == "pca" else 400, random_state=0)
    Z = m.fit_transform(X)
    assert Z.shape == (200, 2) and np.all(np.isfinite(Z))
    assert trustworthiness(X, Z, n_neighbors=10) > 0.95
    if init == "pca":  # the PCA start is already exact; LMDS must keep distances (mean-1 units)
        Dx = pdist(X) / m.distance_scale_
        assert np.abs(pdist(Z) - Dx).max() < 0.05


def test_deterministic_and_registered():
    X = _plane(60, seed=3)
    a = LMDS(n_iter_per_point=50, random_state=4).fit_transform(X)
    b = LMDS(n_iter_per_point=50, random_state=4).fit_transform(X)
    c = LMDS(n_iter_per_point=50, random_state=5, init="random").fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert METHODS["lmds"] is LMDS
    m = make_method("lmds", {"lam": 0.3, "n_iter_per_point": 10}, seed=2)
    assert m.random_state == 2 and m.lam == 0.3
    assert m.fit(X).embedding_.shape == (60, 2)


def test_size_guard_and_validation():
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(ValueError, match="max_samples"):
        LMDS(max_samples=40).fit(X)
    with pytest.raises(ValueError, match="lam"):
        LMDS(lam=1.5).fit(X)
    with pytest.raises(ValueError, match="n_neighbors"):
        LMDS(n_neighbors=50).fit(X)
    with pytest.raises(ValueError, match="init"):
        LMDS(init="pca", metric="precomputed").fit(squareform(pdist(X)))


def test_cca_is_the_local_mds_optimiser_without_radii():
    """CCA runs the same annealed pair updates with λ = 0 and ρ_i = 0: replayed step by step with lmds_step."""
    from cova.methods.nerv.lmds import CCA

    X, D, _ = _problem(20, seed=4)
    Y0 = np.random.default_rng(9).normal(size=(20, 2))
    m = CCA(n_iter_per_point=5, init=Y0, random_state=3).fit(X)
    rng = np.random.default_rng(3)
    T = 5 * 20
    order = rng.integers(0, 20, size=T)
    Y, r0 = Y0.copy(), 1.5 * D.max()
    for t, i in enumerate(order):
        Y = lmds_step(Y, D, np.zeros(20), int(i), 0.25 * (1 - t / T), r0 * (1 - t / T), 0.0)
    np.testing.assert_allclose(m.embedding_, Y, rtol=1e-10, atol=1e-12)
    assert not np.allclose(m.embedding_, LMDS(lam=0.0, n_neighbors=5, n_iter_per_point=5, init=Y0,
                                              random_state=3).fit(X).embedding_)  # ρ_i > 0 changes the updates
    assert "lam" not in m.get_params() and "n_neighbors" not in m.get_params()


def test_geodesic_distances_match_isomap_also_on_a_split_graph():
    """scikit-learn's Isomap geodesics, including its joining of a k-NN graph in pieces (three far blobs)."""
    import warnings

    from sklearn.datasets import make_s_curve
    from sklearn.manifold import Isomap

    from cova.affinity.graphs import geodesic_distances

    X, _ = make_s_curve(200, random_state=0)
    np.testing.assert_allclose(geodesic_distances(X, 8), Isomap(n_neighbors=8).fit(X).dist_matrix_, rtol=1e-10)
    rng = np.random.default_rng(0)
    three = np.r_[rng.normal(size=(20, 3)), 50 + rng.normal(size=(15, 3)), [0, 90, 0] + rng.normal(size=(25, 3))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns that it joins the pieces
        ref = Isomap(n_neighbors=3).fit(three).dist_matrix_
    G = geodesic_distances(three, 3)
    assert np.all(np.isfinite(G)) and G[0, 30] > 40
    np.testing.assert_allclose(G, ref, rtol=1e-10)


def test_cda_unrolls_a_swiss_roll_that_cca_folds():
    """CDA's geodesic input distances follow the roll: its display distances rank like the unrolled (arc length,
    height) coordinates, CCA's Euclidean ones do not."""
    from scipy.stats import spearmanr
    from sklearn.datasets import make_swiss_roll

    from cova.methods.nerv.lmds import CCA, CDA

    X, t = make_swiss_roll(400, random_state=0)
    latent = np.c_[0.5 * (t * np.sqrt(1 + t ** 2) + np.arcsinh(t)), X[:, 1]]
    rho = {type(m).__name__: spearmanr(pdist(m.fit_transform(X)), pdist(latent))[0]
           for m in (CCA(random_state=0), CDA(n_neighbors=10, random_state=0))}
    assert rho["CDA"] > 0.8 and rho["CDA"] > rho["CCA"] + 0.3
    assert METHODS["cca"] is CCA and METHODS["cda"] is CDA
    with pytest.raises(ValueError, match="max_samples"):
        CDA(max_samples=300).fit(X)
