"""DOSNES (Lu, Yang & Corander 2016) and t-SNE on a given affinity: the sphere objective's gradient, the projection
of Eqs. 7–8, the authors' schedule (against a direct transcription of their dense loop), the accelerated
repulsion against the exact one, and determinism."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.affinity.weights import symmetrize_normalize
from cova.inputs import Inputs
from cova.manifolds import CentredSphere, Sphere, momentum_gradient_descent
from cova.methods import make_method
from cova.objectives.kl import tsne_kl_sparse


def random_affinity(n: int, density: float = 0.3, seed: int = 0) -> sp.csr_matrix:
    """A random sparse symmetric nonnegative W with zero diagonal and no empty row."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(size=(n, n)) * (rng.uniform(size=(n, n)) < density)
    A += np.roll(np.eye(n), 1, axis=1)  # a ring keeps every row non-empty
    A = A + A.T
    np.fill_diagonal(A, 0.0)
    return sp.csr_matrix(A / A.sum())


def antipodal_sphere(n_pairs: int, radius: float, seed: int = 0) -> np.ndarray:
    """Points in antipodal pairs on a sphere in R³: exactly centred, exactly equal norms (a point of S, Eq. 6)."""
    y = np.random.default_rng(seed).standard_normal((n_pairs, 3))
    y *= radius / np.linalg.norm(y, axis=1)[:, None]
    return np.vstack([y, -y])


def reference_loop(P: np.ndarray, Y0: np.ndarray, n_iter: int, *, sphere: bool, exaggeration: float = 1.0,
                   exaggeration_iter: int = 0, eps: float = 500.0) -> np.ndarray:
    """Dense transcription of the authors' ``tsne_p_sphere.m`` (``sphere=True``) and of ``tsne_p.m`` (re-centring
    only): Q from all pairs, sign-based gains, momentum 0.5 → 0.8 after iteration 250."""
    P = P.copy()
    np.fill_diagonal(P, 0.0)
    P = 0.5 * (P + P.T)
    P = P / P.sum()
    Y = Y0.copy()
    inc = np.zeros_like(Y)
    gains = np.ones_like(Y)
    mom = 0.5
    for it in range(1, n_iter + 1):
        Pe = P * exaggeration if it <= exaggeration_iter else P
        d2 = np.sum((Y[:, None, :] - Y[None, :, :]) ** 2, axis=2)
        num = 1.0 / (1.0 + d2)
        np.fill_diagonal(num, 0.0)
        Q = num / num.sum()
        L = (Pe - Q) * num
        G = 4.0 * (np.diag(L.sum(axis=0)) - L) @ Y
        gains = np.where(np.sign(G) != np.sign(inc), gains + 0.2, gains * 0.8)
        gains = np.maximum(gains, 0.01)
        inc = mom * inc - eps * gains * G
        Y = Y + inc
        Y = Y - Y.mean(axis=0)
        if sphere:
            r = np.linalg.norm(Y, axis=1)
            Y = Y * (r.mean() / r)[:, None]
        if it == 250:
            mom = 0.8
    return Y


def exact_kl(P: sp.spmatrix, Y: np.ndarray) -> float:
    """KL(P ‖ Q) = Σ_{p>0} p ln(p/q) with dense Q (t-SNE's Student-t kernel)."""
    P = np.asarray(sp.csr_matrix(P).toarray())
    d2 = np.sum((Y[:, None, :] - Y[None, :, :]) ** 2, axis=2)
    num = 1.0 / (1.0 + d2)
    np.fill_diagonal(num, 0.0)
    Q = num / num.sum()
    m = P > 0
    return float(np.sum(P[m] * np.log(P[m] / Q[m])))


# --------------------------------------------------------------------------------------------------------------
# the sphere objective and the projection
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("radius", [0.5, 3.0])
def test_sphere_gradient_finite_differences(radius: float) -> None:
    """On S the Riemannian gradient is the tangent projection of the Euclidean one: along tangent directions u,
    d/dt f(R_Y(t·u)) at t = 0 equals ⟨P_Y(∇f), u⟩, with R the projection of Eqs. 7–8 (central differences)."""
    n_pairs = 20
    Y = antipodal_sphere(n_pairs, radius)
    P = symmetrize_normalize(random_affinity(2 * n_pairs))
    _, g = tsne_kl_sparse(Y, P, method="exact")
    manifold = CentredSphere()
    rng = np.random.default_rng(1)
    half = Sphere(radius).project(Y[:n_pairs], rng.standard_normal((n_pairs, 3)))
    directions = {
        "angular": np.vstack([half, -half]),  # tangent to every sphere, antipodal, hence centred
        "radial": Y / radius,  # the common radius grows
    }
    for name, u in directions.items():
        for gradient in CentredSphere.GRADIENTS:
            rg = CentredSphere(gradient).project(Y, g)
            t = 1e-5
            f_plus = tsne_kl_sparse(manifold.retract(Y, t * u), P, method="exact")[0]
            f_minus = tsne_kl_sparse(manifold.retract(Y, -t * u), P, method="exact")[0]
            fd = (f_plus - f_minus) / (2 * t)
            assert fd == pytest.approx(float(np.sum(rg * u)), rel=1e-5, abs=1e-10), (name, gradient)
    # the fixed-radius sphere's tangent projection gives the same directional derivative along angular moves
    assert np.sum(Sphere(radius).project(Y, g) * directions["angular"]) == pytest.approx(
        np.sum(g * directions["angular"]), rel=1e-12)


def test_tangent_projection_keeps_common_radial_rate() -> None:
    """``gradient="tangent"``: ⟨P(g)_i, y_i⟩ is the same for every row (the mean of ⟨g_i, y_i⟩), and P∘P = P."""
    Y = antipodal_sphere(15, 2.0)
    g = np.random.default_rng(3).standard_normal(Y.shape)
    m = CentredSphere("tangent")
    rg = m.project(Y, g)
    radial = np.einsum("ij,ij->i", rg, Y)
    np.testing.assert_allclose(radial, np.einsum("ij,ij->i", g, Y).mean(), rtol=1e-12)
    np.testing.assert_allclose(m.project(Y, rg), rg, rtol=1e-12, atol=1e-14)


def test_equal_norms_after_every_step() -> None:
    """After every step of the loop all points have the same norm (Eq. 8) and the centroid stays small (Eq. 7
    centres before Eq. 8 rescales)."""
    W = random_affinity(60)
    P = symmetrize_normalize(W)
    rng = np.random.default_rng(0)
    spreads: list[float] = []
    centroids: list[float] = []

    def check(i: int, Y: np.ndarray, f: float, gn: float) -> bool:
        r = np.linalg.norm(Y, axis=1)
        spreads.append(float(np.ptp(r) / r.mean()))
        centroids.append(float(np.linalg.norm(Y.mean(axis=0)) / r.mean()))
        return False

    momentum_gradient_descent(lambda Z: tsne_kl_sparse(Z, P, method="exact"), rng.normal(0, 1e-4, (60, 3)),
                              manifold=CentredSphere(), max_iter=300, gtol=None, learning_rate=500.0,
                              gains="sign", callback=check, log_every=0)
    assert len(spreads) == 300
    assert max(spreads) < 1e-12
    assert max(centroids) < 0.2


# --------------------------------------------------------------------------------------------------------------
# the estimators
# --------------------------------------------------------------------------------------------------------------
def test_dosnes_follows_the_authors_loop() -> None:
    """:class:`DOSNES` with its defaults reproduces a dense transcription of ``tsne_p_sphere.m`` from the same
    start (300 iterations, across the momentum switch)."""
    n = 40
    W = random_affinity(n)
    est = make_method("dosnes", {"max_iter": 300, "kl_method": "exact", "random_state": 5}).fit(Inputs(W=W))
    Y0 = np.random.default_rng(5).normal(0.0, 1e-4, (n, 3))
    Y = reference_loop(W.toarray(), Y0, 300, sphere=True)
    R = np.linalg.norm(Y, axis=1).mean()
    np.testing.assert_allclose(float(est.radius_), R, rtol=1e-6)
    np.testing.assert_allclose(est.embedding_, Y / R, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(est.embedding_, axis=1), 1.0, rtol=1e-12)
    assert float(est.kl_divergence_) == pytest.approx(exact_kl(symmetrize_normalize(W), est.embedding_ * R), rel=1e-9)
    assert est.kl_history_[-1] == pytest.approx(float(est.kl_divergence_))


@pytest.mark.parametrize("k", [2, 3])
def test_tsne_affinity_follows_tsne_p(k: int) -> None:
    """:class:`TSNEAffinity` reproduces ``tsne_p.m`` (exaggeration 4 for 100 iterations, re-centring). η = 10:
    with η ≥ 50 the exaggerated phase on 40 random-graph points is chaotic (rounding differences of 1e-13 grow to O(1) within
    60 iterations), so no two implementations could agree."""
    n = 40
    W = random_affinity(n, seed=2)
    est = make_method("tsne_affinity", {"n_components": k, "max_iter": 300, "kl_method": "exact",
                                        "learning_rate": 10.0, "random_state": 1}).fit(Inputs(W=W))
    Y0 = np.random.default_rng(1).normal(0.0, 1e-4, (n, k))
    Y = reference_loop(W.toarray(), Y0, 300, sphere=False, exaggeration=4.0, exaggeration_iter=100, eps=10.0)
    np.testing.assert_allclose(est.embedding_, Y, rtol=1e-6, atol=1e-6 * np.abs(Y).max())
    assert float(est.kl_divergence_) == pytest.approx(exact_kl(symmetrize_normalize(W), est.embedding_), rel=1e-9)


@pytest.mark.parametrize("name,params", [("dosnes", {}), ("dosnes", {"init": "spectral", "gradient": "tangent"}),
                                         ("tsne_affinity", {"n_components": 3})])
def test_determinism(name: str, params: dict) -> None:
    """Same seed, same embedding; another seed, another embedding."""
    W = random_affinity(50)
    fits = [make_method(name, {**params, "max_iter": 60, "random_state": s}).fit(Inputs(W=W)).embedding_
            for s in (0, 0, 1)]
    np.testing.assert_array_equal(fits[0], fits[1])
    assert not np.allclose(fits[0], fits[2])


def test_auto_learning_rate_and_methods() -> None:
    W = random_affinity(80)
    est = make_method("dosnes", {"max_iter": 2, "learning_rate": "auto"}).fit(Inputs(W=W))
    assert est.learning_rate_ == 50.0 and est.kl_method_ == "exact"
    est = make_method("tsne_affinity", {"max_iter": 2, "learning_rate": "auto"}).fit(Inputs(W=W))
    assert est.learning_rate_ == 50.0
    with pytest.raises(ValueError, match="works in 1 or 2 dimension"):
        make_method("tsne_affinity", {"n_components": 3, "kl_method": "fft"}).fit(Inputs(W=W))


@pytest.mark.parametrize("name", ["dosnes", "tsne_affinity"])
def test_graph_methods_refuse_empty_graphs(name: str) -> None:
    with pytest.raises(ValueError, match="zero total off-diagonal weight"):
        make_method(name, {"max_iter": 2}).fit(Inputs(W=sp.identity(5, format="csr")))


# --------------------------------------------------------------------------------------------------------------
# accelerated against exact
# --------------------------------------------------------------------------------------------------------------
def test_accelerated_gradients_match_exact() -> None:
    """2,000 points: Barnes–Hut (θ = 0.5) on a sphere in R³ and FFT interpolation in the plane, against the exact
    gradient on a random graph (where attraction and repulsion nearly cancel, so the relative error of the total
    gradient is large). Measured ‖g_approx − g‖ / ‖g‖: BH 2.8e-2 on a sphere of radius 8, FFT 2.5e-3 on a
    Gaussian cloud of scale 5; bounded here at 6e-2 and 1e-2. Objective values: 1e-3 and 1e-5 relative."""
    n = 2000
    rng = np.random.default_rng(0)
    W = symmetrize_normalize(random_affinity(n, density=0.005))
    Y3 = rng.standard_normal((n, 3))
    Y3 *= 8.0 / np.linalg.norm(Y3, axis=1)[:, None]
    Y2 = rng.standard_normal((n, 2)) * 5.0
    for Y, method, bound in ((Y3, "bh", 6e-2), (Y2, "fft", 1e-2)):
        f, g = tsne_kl_sparse(Y, W, method="exact")
        fa, ga = tsne_kl_sparse(Y, W, method=method)
        assert np.linalg.norm(ga - g) / np.linalg.norm(g) < bound, method
        assert fa == pytest.approx(f, rel=3e-3)
