"""LMVU (a NeRV Table 2 baseline), MUHSIC (colored MVU, a NeRV Sec. 5.3 baseline) and their semidefinite programmes
(cova.objectives.semidefinite).

The LMVU programme is checked against a closed form: a chain of points with fixed gaps has its maximum variance on
the straight line (by the triangle inequality every pairwise distance is at most the sum of the gaps between, with
equality only on a line), so LMVU with every point a landmark (MVU with the gaps as upper bounds, which the optimum
makes tight) must straighten an arc. The landmark reconstruction is checked as the stationary point of its quadratic, the
reconstruction weights against scikit-learn's LLE weights.

MUHSIC's programme is checked against an independent statement of it (dense n × n centring and label kernel, one
residual per neighbour pair, no QR folding) solved by another solver (Clarabel, an interior-point method); without
labels (L = I) it must unfold an arc like MVU, and with them separate classes that the input's dominant direction
mixes.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.datasets import make_swiss_roll

from cova.affinity.reconstruction import reconstruction_weights
from cova.inputs import Inputs
from cova.methods.baselines.mvu import (
    LMVU,
    MUHSIC,
    class_kernel_factor,
    interpolate,
    landmark_reconstruction,
    laplacian_basis,
    neighbour_pairs,
)
from cova.objectives.semidefinite import gram_embedding, lmvu_gram, muhsic_gram


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


# ---- MUHSIC (colored MVU) ------------------------------------------------------------------------------------------


def _three_digits(n_per_class: int = 30) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    rows = np.concatenate([np.flatnonzero(y == c)[:n_per_class] for c in (3, 5, 8)])
    return X[rows].astype(np.float64), y[rows]


def test_class_kernel_is_the_projection_onto_the_labelled_class_indicators():
    y = np.array([0, 0, 1, 1, 1, 2])
    labelled = np.array([True, True, True, True, False, True])
    Phi = class_kernel_factor(y, labelled)
    L = Phi @ Phi.T
    expected = np.zeros((6, 6))
    expected[np.ix_([0, 1], [0, 1])] = 1 / 2
    expected[np.ix_([2, 3], [2, 3])] = 1 / 2
    expected[5, 5] = 1.0
    np.testing.assert_allclose(L, expected, atol=1e-15)
    np.testing.assert_allclose(L @ L, L, atol=1e-15)


def test_muhsic_solution_is_feasible():
    """A ⪰ 0 within SCS's tolerance, and K = Q A Qᵀ centred (Q ⟂ 1), so that the display is centred too."""
    X, y = _three_digits()
    est = MUHSIC(n_eigenvectors=8).fit(Inputs(X=X, labels=y))
    A, Q = est.gram_factor_, est.basis_
    evals = np.linalg.eigvalsh(0.5 * (A + A.T))
    assert evals.min() >= -1e-5 * evals.max()
    np.testing.assert_allclose(Q.T @ Q, np.eye(8), atol=1e-10)
    np.testing.assert_allclose(Q.sum(axis=0), 0.0, atol=1e-10)
    K = Q @ A @ Q.T
    assert abs(K.sum()) <= 1e-8 * np.abs(K).sum()
    np.testing.assert_allclose(est.embedding_.mean(axis=0), 0.0, atol=1e-8 * np.abs(est.embedding_).max())
    # the display is K's best rank-2 approximation
    Z = est.embedding_
    top = np.sort(np.linalg.eigvalsh(K))[::-1][:2]
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(Z.T @ Z))[::-1], top, rtol=1e-8)


def test_muhsic_optimum_matches_an_independent_statement_solved_by_clarabel():
    import cvxpy as cp

    X, y = _three_digits(20)
    pairs, d2, Q = laplacian_basis(X, 5, 6)
    nu = 0.5
    A = muhsic_gram(Q, pairs, d2, class_kernel_factor(y), nu=nu)
    # the programme as printed, on squared distances scaled to mean 1: dense H and L, a residual per pair
    n = X.shape[0]
    H = np.eye(n) - 1.0 / n
    L = (y[:, None] == y[None, :]) / np.bincount(y)[y][None, :]
    d2u = d2 / d2.mean()
    U = Q[pairs[:, 0]] - Q[pairs[:, 1]]
    C = Q.T @ H @ L @ H @ Q

    def value(Y):  # tr(H K H L) − ν Σ (D_ij(K) − d_ij²)² with K = Q Y Qᵀ
        return np.trace(C @ Y) - nu * np.sum((np.einsum("ea,ab,eb->e", U, Y, U) - d2u) ** 2)

    Y = cp.Variable(A.shape, PSD=True)
    D = cp.sum(cp.multiply(U @ Y, U), axis=1)
    problem = cp.Problem(cp.Maximize(cp.trace(C @ Y) - nu * cp.sum_squares(D - d2u)))
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == "optimal"
    assert value(A / d2.mean()) == pytest.approx(problem.value, rel=1e-5)
    np.testing.assert_allclose(A / d2.mean(), Y.value, atol=1e-3 * np.abs(Y.value).max())


def test_muhsic_without_labels_unfolds_an_arc():
    """With L = I the dependence is the variance: Laplacian-regularised MVU straightens a half circle into a line
    (rank one) about as long as the arc (the soft distance penalty lets it stretch a little)."""
    n = 40
    t = np.pi * np.arange(n) / (n - 1)
    X = np.c_[np.cos(t), np.sin(t), np.zeros(n)]
    pairs, d2, Q = laplacian_basis(X, 2, 10)
    A = muhsic_gram(Q, pairs, d2, None, nu=100.0)
    evals = np.sort(np.linalg.eigvalsh(A))[::-1]
    assert evals[1] < 1e-4 * evals[0]
    z = (Q @ gram_embedding(A, 1))[:, 0]
    assert abs(spearmanr(z, t)[0]) > 0.999
    arc = np.pi
    assert 1.0 < np.ptp(z) / arc < 1.35  # the chord, 2, is 0.64 of the arc


def test_muhsic_labels_separate_classes_that_the_geometry_mixes():
    """A 2 × 1 strip labelled by its short coordinate: the 1-D display of the unsupervised programme (L = I) follows
    the long side and mixes the classes; MUHSIC's follows the labels. Held-out points by interpolation."""
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(0)
    X = np.c_[rng.uniform(0.0, 2.0, 200), rng.uniform(0.0, 1.0, 200), np.zeros(200)]
    y = (X[:, 1] > 0.5).astype(int)
    tr, te = np.arange(150), np.arange(150, 200)

    def error(Z_train, Z_test):
        return 1.0 - KNeighborsClassifier(5).fit(Z_train, y[tr]).score(Z_test, y[te])

    est = MUHSIC(n_components=1, n_neighbors=6, n_eigenvectors=10).fit(Inputs(X=X[tr], labels=y[tr]))
    supervised = error(est.embedding_, est.transform(X[te]))
    pairs, d2, Q = laplacian_basis(X[tr], 6, 10)
    Z = Q @ gram_embedding(muhsic_gram(Q, pairs, d2, None, nu=1.0), 1)
    unsupervised = error(Z, interpolate(X[tr], Z, X[te], 6))
    assert supervised <= 0.1 and unsupervised >= 0.3


def test_muhsic_transform_places_training_rows_on_their_embedding_and_is_deterministic():
    X, y = _three_digits()
    est = MUHSIC(n_eigenvectors=8).fit(Inputs(X=X, labels=y))
    np.testing.assert_allclose(est.transform(X[:7].copy()), est.embedding_[:7], rtol=0, atol=1e-12)
    # a point near a training row lands near it (LLE weights of its 5 nearest training rows)
    near = est.transform(X[:1] + 1e-3)
    assert np.linalg.norm(near - est.embedding_[:1]) < 0.05 * np.ptp(est.embedding_, axis=0).max()
    twin = MUHSIC(n_eigenvectors=8).fit(Inputs(X=X, labels=y))
    np.testing.assert_array_equal(twin.embedding_, est.embedding_)
    new = X[::3] + 0.5
    np.testing.assert_array_equal(twin.transform(new), est.transform(new))


def test_muhsic_refuses_bad_sizes():
    X, y = _three_digits(5)
    with pytest.raises(ValueError, match="n_eigenvectors"):
        MUHSIC(n_eigenvectors=15).fit(Inputs(X=X, labels=y))
    with pytest.raises(ValueError, match="n_eigenvectors"):
        MUHSIC(n_components=3, n_eigenvectors=2).fit(Inputs(X=X, labels=y))
    with pytest.raises(ValueError, match="not fitted"):
        MUHSIC().transform(X)
