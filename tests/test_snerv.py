"""SNeRV (supervised NeRV, Venna et al. 2010 Sec. 5): class posterior, learning metric, estimator."""

from __future__ import annotations

import numpy as np
import pytest

from cova.cohorts.posterior import (
    ClassPosterior,
    fisher_quadratic_form,
    learning_metric_distances,
    posterior_arrays,
    posterior_from_arrays,
    training_fingerprint,
)
from cova.inputs import Inputs
from cova.methods import METHODS
from cova.methods.nerv.nerv import NeRV
from cova.methods.nerv.snerv import SNeRV
from cova.metrics.retrieval import knn_error


def _blobs(n_per: int = 20, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, d)) * 2.0
    X = np.vstack([c + rng.normal(size=(n_per, d)) for c in centres])
    return X, np.repeat(np.arange(3), n_per)


def _hand_posterior() -> ClassPosterior:
    """Two components at (-3, 0) and (3, 0), sigma 1, component k belongs (almost surely) to class k."""
    p = ClassPosterior(n_components=2, sigma=1.0)
    p.classes_ = np.array([0, 1])
    p._set(np.concatenate([np.array([[-3.0, 0.0], [3.0, 0.0]]).ravel(), np.array([[8.0, -8.0], [-8.0, 8.0]]).ravel()]),
           d=2, C=2, K=2, sigma=1.0)
    return p


def test_loss_gradient_matches_finite_differences():
    X, y = _blobs()
    K, C, d = 4, 3, X.shape[1]
    rng = np.random.default_rng(1)
    theta = np.concatenate([rng.normal(size=K * d) * 2.0, rng.normal(size=C * K)])
    Y = np.eye(C)[y]
    f, g = ClassPosterior.loss_and_grad(theta, X, Y, 1.3, K)
    h = 1e-6
    num = np.empty_like(theta)
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = h
        num[i] = (ClassPosterior.loss_and_grad(theta + e, X, Y, 1.3, K)[0]
                  - ClassPosterior.loss_and_grad(theta - e, X, Y, 1.3, K)[0]) / (2 * h)
    assert np.linalg.norm(num - g) / np.linalg.norm(num) < 1e-5


def test_grad_log_proba_and_fisher_form():
    X, y = _blobs()
    p = ClassPosterior(n_components=5, sigma=1.5, random_state=0, max_iter=50).fit(X, y)
    P = p.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    x = X[:6]
    g = p.grad_log_proba(x)
    assert g.shape == (6, 3, X.shape[1])
    h = 1e-6
    num = np.empty_like(g)
    for j in range(X.shape[1]):
        e = np.zeros(X.shape[1])
        e[j] = h
        num[:, :, j] = (p.predict_log_proba(x + e) - p.predict_log_proba(x - e)) / (2 * h)
    assert np.linalg.norm(num - g) / np.linalg.norm(num) < 1e-5
    # quadratic form = explicit Fisher matrix J = sum_c p_c g_c g_c^T
    V = np.random.default_rng(2).normal(size=x.shape)
    J = np.einsum("mc,mcd,mce->mde", p.predict_proba(x), g, g)
    np.testing.assert_allclose(fisher_quadratic_form(p, x, V), np.einsum("md,mde,me->m", V, J, V), rtol=1e-10)


def test_learning_metric_distances_properties():
    X, y = _blobs(n_per=8)
    p = ClassPosterior(n_components=4, sigma=1.5, random_state=0, max_iter=50).fit(X, y)
    D = learning_metric_distances(p, X, n_pieces=10)
    np.testing.assert_array_equal(D, D.T)
    np.testing.assert_array_equal(np.diag(D), 0.0)
    assert np.all(D >= 0)
    # matches the direct midpoint sum with the explicit quadratic form
    for i, j in [(0, 5), (3, 17), (10, 20)]:
        delta = (X[j] - X[i]) / 10
        mids = X[i] + (np.arange(10)[:, None] + 0.5) * delta
        direct = np.sqrt(fisher_quadratic_form(p, mids, np.tile(delta, (10, 1)))).sum()
        assert D[i, j] == pytest.approx(direct, rel=1e-8)
    # constant posterior -> ~0; across the class boundary -> large
    q = _hand_posterior()
    Z = np.array([[-7.0, -1.0], [-7.0, 1.0], [-1.0, 0.0], [1.0, 0.0]])
    Dq = learning_metric_distances(q, Z)
    assert Dq[0, 1] < 1e-4
    assert Dq[2, 3] > 1.0
    assert Dq[2, 3] > 1e4 * Dq[0, 1]


def test_auto_selection_uses_grids():
    X, y = _blobs(n_per=20)
    p = ClassPosterior(random_state=0, max_iter=30).fit(X, y)
    Ks = {k for k, _ in p.cv_scores_}
    assert Ks == {3, 6}  # {C, 2C, 4C} capped at n/10 = 6
    assert len(p.cv_scores_) == 6
    assert (p.n_components_, p.sigma_) == max(p.cv_scores_, key=p.cv_scores_.get)


def test_posterior_arrays_round_trip_every_fitted_attribute():
    X, y = _blobs(n_per=20)
    p = ClassPosterior(random_state=0, max_iter=30).fit(X, y)
    q = posterior_from_arrays(posterior_arrays(p, training_fingerprint(X, y)))
    assert q.get_params() == p.get_params() and q.cv_scores_ == p.cv_scores_
    assert (q.n_components_, q.sigma_, q.loss_) == (p.n_components_, p.sigma_, p.loss_)
    for name in ("means_", "logits_", "beta_", "classes_"):
        np.testing.assert_array_equal(getattr(q, name), getattr(p, name))
    np.testing.assert_array_equal(q.predict_proba(X), p.predict_proba(X))
    assert training_fingerprint(X, y) != training_fingerprint(X, y[::-1])


def _overlapping(seed: int = 0):
    """3 classes separated in 2 dims, hidden by 6 high-variance noise dims (overlap in raw space)."""
    rng = np.random.default_rng(seed)
    means = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6]])
    y = np.repeat(np.arange(3), 50)
    X = np.hstack([means[y] + rng.normal(size=(150, 2)) * 0.8, rng.normal(size=(150, 6)) * 2.5])
    return X, y


def test_snerv_beats_nerv_and_is_seeded():
    X, y = _overlapping()
    inp = Inputs(X=X, labels=y)
    s = SNeRV(lam=0.1, random_state=0).fit(inp)
    e = NeRV(lam=0.1, random_state=0).fit(Inputs(X=X))
    assert s.embedding_.shape == (150, 2)
    assert s.n_neighbors_ == round(0.5 * 150 / s.posterior_.n_components_)
    assert knn_error(s.embedding_, y) < knn_error(e.embedding_, y)
    fixed = dict(n_mixture=s.posterior_.n_components_, sigma_mixture=s.posterior_.sigma_, lam=0.1)
    a = SNeRV(random_state=3, **fixed).fit(inp).embedding_
    b = SNeRV(random_state=3, **fixed).fit(inp).embedding_
    np.testing.assert_array_equal(a, b)


def test_registry_and_size_guard():
    assert METHODS["snerv"] is SNeRV
    X, y = _blobs(n_per=20)
    with pytest.raises(ValueError, match="max_samples"):
        SNeRV(max_samples=50).fit(Inputs(X=X, labels=y))
