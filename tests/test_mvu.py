"""LMVU (a NeRV Table 2 baseline) and its semidefinite programme (cova.objectives.semidefinite).

The programme is checked against a closed form: a chain of points with fixed gaps has its maximum variance on the
straight line (by the triangle inequality every pairwise distance is at most the sum of the gaps between, with
equality only on a line), so LMVU with every point a landmark (MVU with the gaps as upper bounds, which the optimum
makes tight) must straighten an arc. The landmark reconstruction is checked as the stationary point of its quadratic, the
reconstruction weights against scikit-learn's LLE weights.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.datasets import make_swiss_roll

from cova.inputs import Inputs
from cova.methods.mvu import LMVU, landmark_reconstruction, neighbour_pairs, reconstruction_weights
from cova.objectives.semidefinite import gram_embedding, lmvu_gram


def _arc_chain(n: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n points evenly on a half circle, the chain of consecutive pairs, and the line that unfolds it (centred)."""
    t = np.pi * np.arange(n) / (n - 1)
    X = np.c_[np.cos(t), np.sin(t), np.zeros(n)]
    pairs = np.c_[np.arange(n - 1), np.arange(1, n)]
    d2 = np.sum((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2, axis=1)
    y = np.r_[0.0, np.cumsum(np.sqrt(d2))]
    return pairs, d2, y - y.mean()


def test_lmvu_with_every_point_a_landmark_straightens_a_chain():
    pairs, d2, y = _arc_chain()
    L = lmvu_gram(np.eye(len(y)), pairs, d2)
    np.testing.assert_allclose(L, np.outer(y, y), atol=2e-3 * np.abs(y).max() ** 2)
    Z = gram_embedding(L, 1)[:, 0]
    np.testing.assert_allclose(np.abs(np.diff(Z)), np.sqrt(d2), rtol=2e-3)


def test_landmark_reconstruction_is_the_stationary_point_of_the_reconstruction_error():
    X = make_swiss_roll(120, random_state=1)[0]
    _, _, idx = neighbour_pairs(X, 6)
    W = reconstruction_weights(X, idx)
    land = np.arange(0, 120, 10)
    Q = landmark_reconstruction(W, land)
    np.testing.assert_array_equal(Q[land], np.eye(land.size))
    IW = np.eye(120) - W.toarray()
    Phi = IW.T @ IW
    rest = np.setdiff1d(np.arange(120), land)
    # d/dQ_u tr(Qᵀ Φ Q) = 2 (Φ_uu Q_u + Φ_ul) = 0
    np.testing.assert_allclose(Phi[np.ix_(rest, rest)] @ Q[rest] + Phi[np.ix_(rest, land)], 0.0, atol=1e-9)


def test_reconstruction_weights_equal_scikit_learns():
    from sklearn.manifold._locally_linear import barycenter_weights

    X = make_swiss_roll(80, random_state=2)[0]
    _, _, idx = neighbour_pairs(X, 5)
    W = reconstruction_weights(X, idx, reg=1e-3).toarray()
    ref = barycenter_weights(X, X, idx, reg=1e-3)
    np.testing.assert_allclose(W[np.arange(80)[:, None], idx], ref, rtol=1e-8, atol=1e-10)


def test_neighbour_pairs_are_the_symmetrised_knn_graph_in_one_piece():
    X = make_swiss_roll(50, random_state=3)[0]
    pairs, d2, idx = neighbour_pairs(X, 6)
    expected = {(min(i, int(j)), max(i, int(j))) for i in range(50) for j in idx[i]}
    assert {tuple(p) for p in pairs.tolist()} == expected and len(pairs) == len(expected)
    np.testing.assert_allclose(d2, np.sum((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2, axis=1), rtol=1e-12)
    # two far-apart blobs: their graphs are joined by one edge between their closest points, as Isomap joins them
    rng = np.random.default_rng(4)
    Y = np.r_[rng.normal(size=(15, 2)), rng.normal(size=(15, 2)) + 50.0]
    pairs, _, idx = neighbour_pairs(Y, 3)
    across = [tuple(p) for p in pairs.tolist() if (p[0] < 15) != (p[1] < 15)]
    D = np.linalg.norm(Y[:15, None] - Y[None, 15:], axis=2)
    i, j = np.unravel_index(np.argmin(D), D.shape)
    assert across == [(int(i), int(j) + 15)]


def test_unfolds_a_swiss_roll():
    """A thin roll (height 2, so that 5 neighbours stay on one layer at 150 points): its angle, which no linear
    projection recovers, is the display's first axis (seeding is checked in tests/test_contract.py)."""
    rng = np.random.default_rng(0)
    t = rng.uniform(1.5 * np.pi, 4.5 * np.pi, 150)
    X = np.c_[t * np.cos(t), rng.uniform(0.0, 2.0, 150), t * np.sin(t)]
    Y = LMVU(n_neighbors=5).fit_transform(Inputs(X=X))
    assert Y.shape == (150, 2) and np.all(np.isfinite(Y))
    assert abs(spearmanr(Y[:, 0], t)[0]) > 0.99


def test_refuses_more_landmarks_than_samples():
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="n_landmarks"):
        LMVU(n_landmarks=40).fit(Inputs(X=X))
