"""The one κ-NN graph and the one spectral embedding (cova.affinity.graphs), and the shared input checks
(cova.checks)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.affinity.graphs import knn_graph, locality_order, permute_graph, spectral_embedding
from cova.checks import check_graph, check_label_vector, check_labels, check_matrix, check_square
from cova.permutations import unpermute_rows


def test_knn_graph_from_distances_and_similarities():
    x = np.array([0.0, 1.0, 3.0, 6.0, 10.0])
    D = np.abs(x[:, None] - x[None, :])
    A = knn_graph(D, 1)
    expected = np.zeros((5, 5), dtype=bool)
    for i, j in [(0, 1), (1, 2), (2, 1), (3, 2), (4, 3)]:
        expected[i, j] = expected[j, i] = True
    np.testing.assert_array_equal(A, expected)
    np.testing.assert_array_equal(knn_graph(-D, 1, kind="similarity"), expected)
    assert not A.diagonal().any() and (A == A.T).all()


@pytest.mark.parametrize("directed", [False, True])
def test_locality_order_brings_neighbours_together(directed: bool) -> None:
    """A ring of 500 nodes with shuffled labels (bandwidth ≈ n), undirected or with one direction only: in the
    locality order its neighbours lie within 2 rows of each other, the permuted graph is A[order][:, order] (the
    directed one stays directed), and :func:`unpermute_rows` inverts the order."""
    n = 500
    ring = np.roll(np.eye(n), 1, axis=1) + (0 if directed else np.roll(np.eye(n), -1, axis=1))
    shuffle = np.random.default_rng(0).permutation(n)
    A = sp.csr_matrix(ring[shuffle][:, shuffle] * np.random.default_rng(2).uniform(0.5, 1.0, (n, n)))
    before = A.tocoo()
    assert np.abs(before.row - before.col).max() > n // 2
    order = locality_order(A)
    assert sorted(order) == list(range(n))
    Ap = permute_graph(A, order)
    after = Ap.tocoo()
    assert np.abs(after.row - after.col).max() <= 2
    assert Ap.has_sorted_indices
    np.testing.assert_array_equal(Ap.toarray(), A.toarray()[order][:, order])
    Y = np.random.default_rng(1).standard_normal((n, 3))
    np.testing.assert_array_equal(unpermute_rows(Y[order], order), Y)


def test_knn_graph_ties_go_to_the_lower_index_and_large_kappa_is_complete():
    D = np.ones((4, 4))
    A = knn_graph(D, 1)
    assert A[0, 1] and A[1, 0] and A[2, 0] and A[3, 0] and not A[2, 3]
    full = knn_graph(D, 10)
    np.testing.assert_array_equal(full, ~np.eye(4, dtype=bool))
    with pytest.raises(ValueError, match="kind"):
        knn_graph(D, 1, kind="rank")
    with pytest.raises(ValueError, match="square"):
        knn_graph(np.ones((2, 3)), 1)


def test_spectral_embedding_dense_matches_scikit_learn():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    S = np.exp(-np.sum((X[:, None] - X[None]) ** 2, axis=-1))
    np.fill_diagonal(S, 0.0)
    dense = spectral_embedding(S, 2, solver="dense")
    arpack = spectral_embedding(sp.csr_matrix(S), 2, solver="arpack", random_state=0)
    deg = S.sum(axis=1)
    np.testing.assert_allclose(dense.T @ (deg[:, None] * dense), np.eye(2), atol=1e-10)  # D-orthonormal
    for j in range(2):  # same eigenvectors up to sign
        s = np.sign(dense[:, j] @ arpack[:, j])
        np.testing.assert_allclose(dense[:, j], s * arpack[:, j], atol=1e-6)


def test_spectral_embedding_dense_skips_every_component_and_pads():
    S = np.zeros((4, 4))
    S[0, 1] = S[1, 0] = 1.0
    S[2, 3] = S[3, 2] = 1.0
    Z = spectral_embedding(S, 3, solver="dense")
    assert Z.shape == (4, 3)
    assert np.abs(Z[:, 0]).max() > 0 and np.all(Z[:, 2] == 0)  # 2 zero eigenvalues skipped, 2 non-zero exist
    S[0, 1] = S[1, 0] = 0.0
    with pytest.raises(ValueError, match="zero affinity"):
        spectral_embedding(S, 1, solver="dense")
    with pytest.raises(ValueError, match="eigen_solver"):
        spectral_embedding(S, 1, solver="qr")


def test_checks():
    with pytest.raises(ValueError, match="X is required"):
        check_matrix(None)
    with pytest.raises(ValueError, match="2-D"):
        check_matrix(np.ones(3))
    with pytest.raises(ValueError, match="non-empty"):
        check_matrix(np.ones((0, 2)))
    with pytest.raises(ValueError, match="to match labels"):
        check_matrix(np.ones((3, 2)), n_rows=4)
    with pytest.raises(ValueError, match="NaN"):
        check_matrix(np.array([[np.nan]]))
    assert check_matrix(np.ones((3, 2), dtype=int), contiguous=True).flags.c_contiguous
    y, c = check_labels(np.array([0, 2, 1]))
    assert c == 3 and y.dtype == np.int64
    assert check_labels([0, 1], n_cohorts=5)[1] == 5
    for bad in (np.array([0.5]), np.array([-1]), np.zeros((2, 2), int), np.array([], int)):
        with pytest.raises(ValueError, match="labels"):
            check_labels(bad)
    with pytest.raises(ValueError, match="too small"):
        check_labels([0, 3], n_cohorts=2)
    assert check_label_vector([["a"], ["b"]], 2).shape == (2,)
    with pytest.raises(ValueError, match="labels has 1 entries"):
        check_label_vector(["a"], 2)
    with pytest.raises(ValueError, match="square"):
        check_square(np.ones((2, 3)))
    W = check_graph(np.eye(3)[::-1], 3)
    assert sp.issparse(W) and W.dtype == np.float64
    with pytest.raises(ValueError, match="non-negative"):
        check_graph(-np.eye(3), 3)
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        check_graph(np.eye(3), 2)
    with pytest.raises(ValueError, match="W is required"):
        check_graph(None, 3)
