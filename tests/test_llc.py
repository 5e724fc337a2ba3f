"""LLC, locally linear coordination (Teh & Roweis 2003): the mixture of factor analysers and the alignment.

The mixture is checked against closed forms and independent code: its log-likelihood and posterior means against
dense Gaussian formulas (scipy), EM's monotone log-likelihood, recovery of a mixture the data were drawn from, and a
single analyser against scikit-learn's maximum-likelihood factor analysis. The alignment is checked against
scipy's dense generalised eigensolver on the same A and B, and the constraints and cost it must satisfy. End to end:
one analyser gives PCA's plane up to an affine map, and on a rolled sheet LLC recovers the roll's angle where PCA
does not.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp
from scipy.stats import multivariate_normal, spearmanr
from sklearn.decomposition import PCA, FactorAnalysis

from cova.affinity.knn import nearest_neighbors
from cova.affinity.reconstruction import reconstruction_weights
from cova.inputs import Inputs
from cova.methods.baselines.llc import (
    LLC,
    MixtureOfFactorAnalysers,
    align,
    coordination_matrix,
    fit_mfa,
    mfa_posteriors,
)


def _known_mixture(n: int = 900, seed: int = 0) -> tuple[np.ndarray, MixtureOfFactorAnalysers]:
    """n samples of a mixture of three well separated 2-factor analysers in 6 dimensions, and the mixture."""
    rng = np.random.default_rng(seed)
    K, D, d = 3, 6, 2
    means = 12.0 * np.eye(K, D)
    loadings = 2.0 * rng.standard_normal((K, D, d))
    noise = 0.1 * rng.uniform(0.5, 1.5, D)
    weights = np.array([0.5, 0.3, 0.2])
    k = rng.choice(K, n, p=weights)
    z = rng.standard_normal((n, d))
    X = means[k] + np.einsum("nDi,ni->nD", loadings[k], z) + np.sqrt(noise) * rng.standard_normal((n, D))
    return X, MixtureOfFactorAnalysers(weights, means, loadings, noise)


def _roll(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A sheet rolled one full turn (angle t in [1.5π, 3.5π], height in [0, 10]), with the angle."""
    rng = np.random.default_rng(seed)
    t = 1.5 * np.pi + 2.0 * np.pi * rng.uniform(size=n)
    X = np.c_[t * np.cos(t), rng.uniform(0.0, 10.0, n), t * np.sin(t)] + 0.05 * rng.standard_normal((n, 3))
    return X, t


def _best_spearman(Y: np.ndarray, t: np.ndarray) -> float:
    return max(abs(spearmanr(Y[:, j], t)[0]) for j in range(Y.shape[1]))


# -- the mixture of factor analysers ------------------------------------------------------------------------------
def test_posteriors_equal_the_dense_gaussian_formulas():
    X, model = _known_mixture(200, seed=1)
    shift = np.array([3.0, -1.0, 0.5, 0.0, 2.0, 1.0])  # away from the origin
    model.means = model.means + shift
    Xs = X + shift
    r, z, ll = mfa_posteriors(Xs, model)
    covs = [L @ L.T + np.diag(model.noise) for L in model.loadings]
    logp = np.stack([np.log(w) + multivariate_normal(m, C).logpdf(Xs)
                     for w, m, C in zip(model.weights, model.means, covs)], axis=1)
    np.testing.assert_allclose(ll, logsumexp(logp, axis=1), rtol=1e-10)
    np.testing.assert_allclose(r, np.exp(logp - logsumexp(logp, axis=1, keepdims=True)), atol=1e-10)
    for k, (L, m, C) in enumerate(zip(model.loadings, model.means, covs)):
        # E[z | x, k] = Λ_kᵀ C_k⁻¹ (x − μ_k): the Gaussian conditional, without the Woodbury form
        np.testing.assert_allclose(z[:, k], (Xs - m) @ np.linalg.solve(C, L), rtol=1e-8, atol=1e-10)


def test_em_never_decreases_the_log_likelihood():
    from sklearn.datasets import load_digits

    X = load_digits().data[:400]  # integer pixels, some constant: the floor on Ψ is active
    model = fit_mfa(X, 5, 2, max_iter=25, tol=0.0, random_state=0)
    lls = np.asarray(model.log_likelihoods)
    assert model.n_iter == 25 and lls.size == 26
    assert np.all(np.diff(lls) >= -1e-9 * np.abs(lls[1:])), np.diff(lls).min()
    assert lls[-1] > lls[0]
    X, _ = _roll(300)
    lls = np.asarray(fit_mfa(X, 10, 2, max_iter=40, tol=0.0, random_state=3).log_likelihoods)
    assert np.all(np.diff(lls) >= -1e-9 * np.abs(lls[1:]))


def test_em_recovers_a_known_mixture():
    X, true = _known_mixture()
    fit = fit_mfa(X, 3, 2, max_iter=300, tol=1e-8, random_state=0)
    dist = np.linalg.norm(true.means[:, None] - fit.means[None], axis=2)
    rows, cols = linear_sum_assignment(dist)
    assert dist[rows, cols].max() < 0.5  # means 12 apart
    np.testing.assert_allclose(fit.weights[cols], true.weights, atol=0.04)
    for k, j in zip(rows, cols):
        assert np.max(sla.subspace_angles(true.loadings[k], fit.loadings[j])) < np.deg2rad(5.0)
        np.testing.assert_allclose(fit.loadings[j] @ fit.loadings[j].T, true.loadings[k] @ true.loadings[k].T,
                                   atol=0.25 * np.abs(true.loadings[k]).max() ** 2)
    np.testing.assert_allclose(fit.noise, true.noise, rtol=0.3)
    _, _, ll = mfa_posteriors(X, fit)
    _, _, ll_true = mfa_posteriors(X, true)
    assert ll.sum() >= ll_true.sum()  # the maximum likelihood fit beats the generating parameters on its sample


def test_one_analyser_is_maximum_likelihood_factor_analysis():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((500, 2)) @ rng.standard_normal((2, 6)) + rng.uniform(0.2, 1.0, 6) * \
        rng.standard_normal((500, 6)) + 5.0
    fit = fit_mfa(X, 1, 2, max_iter=3000, tol=1e-12, random_state=0)
    fa = FactorAnalysis(n_components=2, tol=1e-10, max_iter=5000).fit(X)
    assert fit.log_likelihoods[-1] / 500 == pytest.approx(fa.score(X), abs=1e-5)
    C = fit.loadings[0] @ fit.loadings[0].T + np.diag(fit.noise)
    np.testing.assert_allclose(C, fa.get_covariance(), atol=2e-3 * np.abs(C).max())
    np.testing.assert_allclose(fit.means[0], X.mean(axis=0), atol=1e-8)


# -- the alignment ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def roll_fit() -> tuple[np.ndarray, np.ndarray, LLC]:
    X, t = _roll()
    return X, t, LLC(n_mixtures=10, max_iter=60, random_state=0).fit(Inputs(X=X))


def test_alignment_solves_the_generalised_eigenproblem(roll_fit):
    X, _, est = roll_fit
    N = X.shape[0]
    U = coordination_matrix(est.responsibilities_, est.local_coordinates_)
    idx, _ = nearest_neighbors(X, 12)
    IW = np.eye(N) - reconstruction_weights(X, idx, 1e-3).toarray()
    A = U.T @ IW.T @ IW @ U
    B = U.T @ U / N
    L, lam, Y = est.alignment_, est.eigenvalues_, est.embedding_
    np.testing.assert_allclose(U @ L, Y, atol=1e-8 * np.abs(Y).max())
    np.testing.assert_allclose(A @ L, B @ L * lam[None, :], atol=1e-7 * np.abs(A @ L).max())
    np.testing.assert_allclose(L.T @ B @ L, np.eye(2), atol=1e-8)               # unit covariance
    np.testing.assert_allclose(Y.mean(axis=0), 0.0, atol=1e-10)                  # zero mean
    np.testing.assert_allclose(Y.T @ Y / N, np.eye(2), atol=1e-10)
    np.testing.assert_allclose(np.trace(Y.T @ IW.T @ IW @ Y), lam.sum(), rtol=1e-8)  # the cost is Σλ
    # scipy's dense solver on the same pencil: λ = 0 (the constant), then ours
    ref = sla.eigh(A, B, eigvals_only=True)
    assert abs(ref[0]) < 1e-8 * ref[-1]
    np.testing.assert_allclose(lam, ref[1:3], rtol=1e-6, atol=1e-9 * ref[-1])


def test_alignment_is_the_minimum_over_feasible_coordinations(roll_fit):
    """Any other zero-mean, unit-covariance Y = U L costs at least Σλ (random feasible L's)."""
    X, _, est = roll_fit
    N = X.shape[0]
    U = coordination_matrix(est.responsibilities_, est.local_coordinates_)
    idx, _ = nearest_neighbors(X, 12)
    W = reconstruction_weights(X, idx, 1e-3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        Y = U @ rng.standard_normal((U.shape[1], 2))
        Y -= Y.mean(axis=0)
        Y = Y @ np.linalg.inv(np.linalg.cholesky(Y.T @ Y / N)).T                  # whiten: (1/N)YᵀY = I
        E = Y - W @ Y
        assert np.sum(E * E) >= est.cost_


def test_alignment_refuses_a_range_without_enough_directions():
    U = np.ones((30, 1))
    W = reconstruction_weights(np.arange(30.0)[:, None], nearest_neighbors(np.arange(30.0)[:, None], 2)[0])
    with pytest.raises(ValueError, match="span only 0 non-constant directions, fewer than n_components = 2"):
        align(U, W, 2)


# -- end to end -------------------------------------------------------------------------------------------------------
def test_one_analyser_gives_pcas_plane_up_to_an_affine_map():
    rng = np.random.default_rng(2)
    S = rng.standard_normal((300, 2)) * [3.0, 1.0]
    X = S @ np.linalg.qr(rng.standard_normal((5, 2)))[0].T + 0.05 * rng.standard_normal((300, 5)) + 2.0
    Y = LLC(n_mixtures=1, random_state=0).fit(Inputs(X=X)).embedding_
    P = PCA(2).fit_transform(X)
    for a, b in ((Y, P), (P, Y)):
        A1 = np.c_[a, np.ones(len(a))]
        resid = b - A1 @ np.linalg.lstsq(A1, b, rcond=None)[0]
        assert np.sum(resid ** 2) < 1e-3 * np.sum((b - b.mean(axis=0)) ** 2)  # FA: PCA up to the noise


def test_llc_unrolls_a_rolled_sheet_where_pca_does_not(roll_fit):
    X, t, est = roll_fit
    assert _best_spearman(est.embedding_, t) > 0.99
    assert _best_spearman(PCA(2).fit_transform(X), t) < 0.7


def test_fit_is_deterministic_for_a_seed(roll_fit):
    X, _, est = roll_fit
    again = LLC(n_mixtures=10, max_iter=60, random_state=0).fit(Inputs(X=X))
    np.testing.assert_array_equal(again.embedding_, est.embedding_)


@pytest.mark.parametrize("params, X, message", [
    ({"n_mixtures": 50}, np.random.default_rng(0).normal(size=(30, 3)),
     r"^LLC parameter n_mixtures .*: 50 is not allowed: the inputs' X has 30 rows, .*; allowed: at most n = 30$"),
    ({"n_neighbors": 30, "n_mixtures": 2}, np.random.default_rng(0).normal(size=(30, 3)),
     r"^LLC parameter n_neighbors .*: 30 is not allowed: the inputs' X has 30 rows, .*; allowed: at most 29$"),
    ({"n_factors": 4, "n_mixtures": 2}, np.random.default_rng(0).normal(size=(30, 3)),
     r"^LLC parameter n_factors .*: 4 is not allowed: the inputs' X has 3 columns, .*; allowed: at most 3$"),
    ({"n_factors": 1, "n_mixtures": 1}, np.random.default_rng(0).normal(size=(30, 3)),
     r"^LLC parameter n_components .*: 2 is not allowed: n_mixtures = 1 analysers of d = 1 factors give "
     r"K\(d \+ 1\) − 1 = 1 non-constant directions"),
    ({"n_mixtures": 2}, np.where(np.eye(30, 3) > 0, np.nan, 1.0), r"^X contains NaN or infinite values$"),
    ({"n_mixtures": 2}, np.ones((30, 3)), r"^X has no variance"),
])
def test_degenerate_inputs_are_refused_by_name(params, X, message):
    with pytest.raises(ValueError, match=message):
        LLC(**params).fit(Inputs(X=X))
