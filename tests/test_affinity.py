"""Tests of cova.affinity: kNN, perplexity calibration, the W variants of COVA Sec. 3.1.1 / App. C, Eq. 3, 𝐋(W), O(l·k) memory."""

from __future__ import annotations

import math
import tracemalloc

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist, pdist

from cova.affinity import (
    KINDS,
    build_weights,
    conditional_probabilities,
    cosine_knn,
    euclidean_max,
    gaussian_perplexity,
    laplacian,
    max_pairwise_distance,
    nearest_neighbors,
    pair_sq_distances,
    supervised_shrink,
    symmetrize_normalize,
)
from cova.affinity.knn import query_neighbors


def _data(l: int, d: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(l, d)) * scale


def _entropy(P: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(P > 0, P * np.log(P), 0.0).sum(axis=1)


def _assert_w_invariants(W: sp.csr_matrix) -> None:
    assert isinstance(W, sp.csr_matrix)
    assert W.dtype == np.float64
    assert W.shape[0] == W.shape[1]
    assert W.has_sorted_indices
    assert W.has_canonical_format
    assert (W != W.T).nnz == 0  # exactly symmetric
    assert np.all(W.diagonal() == 0)
    assert np.all(W.data > 0)  # non-negative and no explicit zeros
    assert abs(W.sum() - 1.0) < 1e-12


# ---------------------------------------------------------------------------------------------------------------
# dense references (brute force, written independently of the package code)
# ---------------------------------------------------------------------------------------------------------------
def _dense_perplexity_P(X: np.ndarray, perplexity: float, tol: float = 1e-5, max_iter: int = 100) -> np.ndarray:
    """Full t-SNE conditional P over all points, the t-SNE bisection vectorised over rows (numpy, dense)."""
    l = X.shape[0]
    D2 = cdist(X, X, "sqeuclidean")
    np.fill_diagonal(D2, np.inf)
    D2 = D2 - D2.min(axis=1, keepdims=True)
    target = math.log(perplexity)
    beta = np.ones(l)
    lo = np.full(l, -np.inf)
    hi = np.full(l, np.inf)
    done = np.zeros(l, bool)
    P = np.zeros_like(D2)
    for _ in range(max_iter):
        E = np.exp(-beta[:, None] * D2)
        Pn = E / E.sum(axis=1, keepdims=True)
        P[~done] = Pn[~done]
        H = _entropy(Pn)
        diff = H - target
        done |= np.abs(diff) < tol
        up = (diff > 0) & ~done
        down = (diff <= 0) & ~done
        lo = np.where(up, beta, lo)
        hi = np.where(down, beta, hi)
        beta = np.where(up, np.where(np.isinf(hi), beta * 2, (beta + hi) / 2), beta)
        beta = np.where(down, np.where(np.isinf(lo), beta / 2, (beta + lo) / 2), beta)
        if done.all():
            break
    return P


def _dense_masked_similarity_W(S: np.ndarray, h: int) -> np.ndarray:
    """S ∘ N(S, h) (h largest off-diagonal entries per row, stable order; OR with transpose), symmetrised, unit sum."""
    l = S.shape[0]
    Soff = S.copy()
    np.fill_diagonal(Soff, -np.inf)
    top = np.argsort(-Soff, axis=1, kind="stable")[:, :h]
    N = np.zeros((l, l), bool)
    N[np.repeat(np.arange(l), h), top.ravel()] = True
    N |= N.T
    np.fill_diagonal(N, False)
    W = np.where(N, S, 0.0)
    W = 0.5 * (W + W.T)
    return W / W.sum()


# ---------------------------------------------------------------------------------------------------------------
# perplexity calibration
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("perplexity,scale", [(30.0, 1.0), (5.0, 1e3), (12.5, 1e-3)])
def test_conditional_probabilities_entropy_matches_log_perplexity(perplexity: float, scale: float) -> None:
    """Every row's entropy within 1e-5 of ln(perplexity); P is a Gaussian in d² per row.

    Row 0 is a far outlier: without subtracting the row minimum of d², every exp(−β d²) of its row underflows.
    """
    X = _data(600, 5, seed=1, scale=scale)
    X[0] += 1e4 * scale
    k = min(599, int(3 * perplexity))
    ind, dist = nearest_neighbors(X, k, method="exact")
    d2 = dist**2
    P = conditional_probabilities(d2, perplexity)
    assert P.shape == (600, k) and P.dtype == np.float64
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.max(np.abs(_entropy(P) - math.log(perplexity))) < 1e-5
    # Gaussian form: ln P_ij = c_i − β_i d²_ij with β_i > 0 (checked on the nearest and farthest candidates).
    beta = (np.log(P[:, 0]) - np.log(P[:, -1])) / (d2[:, -1] - d2[:, 0])
    assert np.all(beta > 0)
    mid = k // 2
    pred = np.log(P[:, 0]) - beta * (d2[:, mid] - d2[:, 0])
    np.testing.assert_allclose(np.log(P[:, mid]), pred, rtol=1e-8, atol=1e-8)


def test_conditional_probabilities_independent_of_thread_count() -> None:
    d2 = _data(400, 40, seed=2) ** 2
    saved = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        P1 = conditional_probabilities(d2, 10.0)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        P2 = conditional_probabilities(d2, 10.0)
    finally:
        numba.set_num_threads(saved)
    assert np.array_equal(P1, P2)


def test_conditional_probabilities_bad_arguments() -> None:
    d2 = np.abs(_data(10, 6))
    with pytest.raises(ValueError, match="perplexity"):
        conditional_probabilities(d2, 6.0)  # perplexity must be < k = 6
    with pytest.raises(ValueError, match="perplexity"):
        conditional_probabilities(d2, 0.0)
    with pytest.raises(ValueError, match="perplexity"):
        conditional_probabilities(d2, -1.0)
    with pytest.raises(ValueError, match="non-negative"):
        conditional_probabilities(-d2, 2.0)


# ---------------------------------------------------------------------------------------------------------------
# gaussian_perplexity
# ---------------------------------------------------------------------------------------------------------------
def test_gaussian_perplexity_equals_dense_reference() -> None:
    X = _data(150, 3, seed=3)
    l = X.shape[0]
    W = gaussian_perplexity(X, 10.0, n_neighbors=l - 1)
    P = _dense_perplexity_P(X, 10.0)
    Wref = (P + P.T) / (2 * l)
    _assert_w_invariants(W)
    assert np.max(np.abs(W.toarray() - Wref)) < 1e-8


def test_gaussian_perplexity_matches_opentsne() -> None:
    """Cross-check against openTSNE's PerplexityBasedNN P (same conventions: squared Euclidean distances, natural-log
    entropy, k = min(l − 1, 3·perplexity) candidates, (P + Pᵀ)/2 then unit sum, which equals our /(2l)).

    The only difference is the bisection tolerance (openTSNE 1e-8 on the entropy, ours 1e-5), which
    moves entries by ~5e-6 relative; with tol 1e-10 on our side the difference drops to openTSNE's own ~5e-9.
    """
    from openTSNE.affinity import PerplexityBasedNN

    X = _data(300, 4, seed=4)
    W = gaussian_perplexity(X, 10.0, method="exact")
    P = sp.csr_matrix(PerplexityBasedNN(X, perplexity=10, method="exact", random_state=0, verbose=False).P)
    assert (P != P.T).nnz == 0 and abs(P.sum() - 1) < 1e-12
    assert ((P != 0) != (W != 0)).nnz == 0  # same support: the same 30-NN lists, OR-ed
    assert abs(P - W).max() / W.max() < 2e-5


def test_gaussian_perplexity_sparse_support_and_default_k() -> None:
    X = _data(200, 3, seed=5)
    W = gaussian_perplexity(X, 5.0)  # k = 15
    ind, _ = nearest_neighbors(X, 15)
    N = sp.csr_matrix((np.ones(ind.size), ind.ravel(), np.arange(0, ind.size + 1, 15)), shape=(200, 200))
    N = N.maximum(N.T)
    assert ((W != 0) != (N != 0)).nnz == 0


def test_gaussian_perplexity_bad_arguments() -> None:
    X = _data(20, 2)
    with pytest.raises(ValueError, match="perplexity"):
        gaussian_perplexity(X, 30.0)  # l − 1 = 19 candidates ≤ perplexity
    with pytest.raises(ValueError, match="perplexity"):
        gaussian_perplexity(X, 5.0, n_neighbors=5)


# ---------------------------------------------------------------------------------------------------------------
# euclidean_max and the exact global max
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("h", [1, 7, 59])
def test_euclidean_max_equals_dense_reference(h: int) -> None:
    X = _data(60, 3, seed=6)
    W = euclidean_max(X, h, block_size=16)
    D = cdist(X, X)
    Wref = _dense_masked_similarity_W(D.max() - D, h)
    _assert_w_invariants(W)
    assert np.max(np.abs(W.toarray() - Wref)) < 1e-12
    # the mask is the OR of the h-NN lists
    ind, _ = nearest_neighbors(X, h)
    N = np.zeros((60, 60), bool)
    N[np.repeat(np.arange(60), h), ind.ravel()] = True
    N |= N.T
    farthest = D == D.max()  # S = 0 there: in the mask but carries no weight
    assert np.array_equal(W.toarray() != 0, N & ~farthest)


def _antipodes(n: int, d: int, seed: int) -> np.ndarray:
    """±y for unit vectors y: n pairs at distance 2 up to rounding, so the BLAS expansion mis-ranks the near-tied
    maxima by tens of ulps (d = 300) -- a scan without the error-bound refinement fails here."""
    Y = _data(n, d, seed=seed)
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    return np.vstack([Y, -Y]) + 3.0


@pytest.mark.parametrize(
    "X",
    [
        _data(1000, 3, seed=7),
        _data(777, 40, seed=8) + 1e6,  # large offset: the ‖a‖² + ‖b‖² − 2a·b expansion alone would be inexact
        (np.random.default_rng(9).random((500, 30)) < 0.3).astype(float),  # binary: many tied maxima
        np.zeros((5, 2)),
        _antipodes(200, 300, seed=2),
    ],
    ids=["gauss", "offset", "binary", "zeros", "antipodes"],
)
def test_max_pairwise_distance_is_exact(X: np.ndarray) -> None:
    """Bit-identical to the brute-force max of the package's own pair formula (the one kNN distances use), and
    equal to scipy's pdist up to summation order (a few ulps)."""
    i, j = np.triu_indices(X.shape[0], 1)
    brute = float(np.sqrt(pair_sq_distances(X, i, j).max()))
    for block in (7, 64, 100000):
        dmax = max_pairwise_distance(X, block_size=block)
        assert dmax == brute
        assert abs(dmax - pdist(X).max()) <= 4 * np.finfo(float).eps * max(dmax, 1.0)


def test_euclidean_max_not_an_upper_bound() -> None:
    """The global max must be the true max: an upper bound such as 2·max‖x − x̄‖ would change W."""
    X = _data(80, 2, seed=10)
    W = euclidean_max(X, 5)
    ind, dist = nearest_neighbors(X, 5)
    bound = 2 * np.sqrt(((X - X.mean(0)) ** 2).sum(1)).max()
    A = sp.csr_matrix(((bound - dist).ravel(), ind.ravel(), np.arange(0, ind.size + 1, 5)), shape=(80, 80))
    Wb = symmetrize_normalize(A.maximum(A.T))
    assert abs(W - Wb).max() > 1e-6


def test_euclidean_max_identical_points_raise() -> None:
    with pytest.raises(ValueError, match="zero total"):
        euclidean_max(np.ones((10, 3)), 3)


# ---------------------------------------------------------------------------------------------------------------
# cosine_knn
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("h", [3, 49])
def test_cosine_knn_equals_dense_reference(h: int) -> None:
    X = _data(50, 4, seed=11)  # centred data: many negative cosines, clipped to 0 when h = l − 1
    W = cosine_knn(X, h)
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = Xn @ Xn.T
    # masking the clipped S selects the same weights as masking S and clipping (entries that differ are 0 either way)
    Wref = _dense_masked_similarity_W(np.maximum(S, 0.0), h)
    _assert_w_invariants(W)
    assert np.max(np.abs(W.toarray() - Wref)) < 1e-12
    if h == 49:
        assert np.array_equal(W.toarray() != 0, (S > 0) & ~np.eye(50, dtype=bool))


def test_cosine_knn_zero_row_raises() -> None:
    X = _data(10, 3)
    X[4] = 0
    with pytest.raises(ValueError, match="zero"):
        cosine_knn(X, 3)


# ---------------------------------------------------------------------------------------------------------------
# invariants, Eq. 3, dispatcher, Laplacian
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("shrink", [None, 0.25])
def test_build_weights_invariants(kind: str, shrink: float | None) -> None:
    X = _data(120, 5, seed=12) + 0.5
    labels = np.arange(120) % 3
    params = {"gaussian_perplexity": {"perplexity": 8.0}, "euclidean_max": {"n_neighbors": 6},
              "cosine_knn": {"n_neighbors": 6}}[kind]
    W = build_weights(X, kind, labels=labels, shrink=shrink, **params)
    _assert_w_invariants(W)
    direct = KINDS[kind](X, **params)
    if shrink is None:
        assert (W != direct).nnz == 0
    else:
        assert abs(W - supervised_shrink(direct, labels, shrink)).max() == 0


def test_supervised_shrink_scales_exactly_the_inter_cohort_entries() -> None:
    X = _data(90, 3, seed=13)
    labels = np.random.default_rng(13).integers(0, 4, 90)
    W = euclidean_max(X, 8)
    lam = 0.3
    Wd = W.toarray()
    inter = labels[:, None] != labels[None, :]
    expected = np.where(inter, lam * Wd, Wd)
    expected /= expected.sum()
    Ws = supervised_shrink(W, labels, lam)
    _assert_w_invariants(Ws)
    assert np.max(np.abs(Ws.toarray() - expected)) < 1e-15
    assert abs(supervised_shrink(W, labels, 1.0) - W).max() < 1e-15
    W0 = supervised_shrink(W, labels, 0.0)
    assert np.all(~inter[W0.nonzero()])  # λ = 0 removes every inter-cohort edge and stores no zeros
    _assert_w_invariants(W0)


def test_weights_bad_arguments() -> None:
    X = _data(30, 2)
    with pytest.raises(ValueError, match="gaussian_perplexity.*euclidean_max.*cosine_knn"):
        build_weights(X, "gaussian")
    with pytest.raises(ValueError, match="labels"):
        build_weights(X, "euclidean_max", n_neighbors=3, shrink=0.5)
    W = euclidean_max(X, 3)
    with pytest.raises(ValueError, match="lam"):
        supervised_shrink(W, np.zeros(30), -0.1)
    with pytest.raises(ValueError, match="labels"):
        supervised_shrink(W, np.zeros(29), 0.5)
    with pytest.raises(ValueError, match="non-negative"):
        symmetrize_normalize(-W)
    with pytest.raises(ValueError, match="zero total"):
        symmetrize_normalize(sp.eye(5, format="csr"))  # only a diagonal


def test_symmetrize_normalize_of_asymmetric_input() -> None:
    A = np.array([[5.0, 1.0, 0.0], [3.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    W = symmetrize_normalize(sp.csr_matrix(A))
    B = 0.5 * (A + A.T)
    np.fill_diagonal(B, 0)
    np.testing.assert_allclose(W.toarray(), B / B.sum(), rtol=0, atol=1e-16)
    _assert_w_invariants(W)
    _assert_w_invariants(symmetrize_normalize(A))  # dense input accepted


def test_laplacian() -> None:
    W = gaussian_perplexity(_data(100, 3, seed=14), 5.0)
    L = laplacian(W)
    assert isinstance(L, sp.csr_matrix) and L.has_sorted_indices
    Wd = W.toarray()
    np.testing.assert_allclose(L.toarray(), np.diag(Wd.sum(1)) - Wd, rtol=1e-14, atol=0)
    assert np.max(np.abs(L @ np.ones(100))) < 1e-15
    Z = _data(100, 2, seed=15)  # Eq. 1: ½ Σ w_ij ‖z_i − z_j‖² = tr(Zᵀ 𝐋 Z)
    lhs = 0.5 * np.sum(Wd * cdist(Z, Z, "sqeuclidean"))
    assert abs(lhs - np.trace(Z.T @ (L @ Z))) < 1e-12


# ---------------------------------------------------------------------------------------------------------------
# nearest neighbours
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_exact_knn_equals_brute_force(metric: str) -> None:
    X = _data(200, 6, seed=16)
    k = 9
    ind, dist = nearest_neighbors(X, k, metric=metric, method="exact")
    assert ind.dtype == np.int64 and dist.dtype == np.float64 and ind.shape == dist.shape == (200, k)
    D = cdist(X, X, metric)
    np.fill_diagonal(D, np.inf)
    ref = np.argsort(D, axis=1, kind="stable")[:, :k]
    assert np.array_equal(ind, ref)
    np.testing.assert_allclose(dist, np.take_along_axis(D, ref, 1), rtol=0, atol=1e-12)


def _tied_data(metric: str, d: int) -> np.ndarray:
    """600 rows full of exact ties at the k-th distance: small integers (as the digits) for Euclidean, 30
    directions each scaled by 1, 2 or 4 (bit-identical unit rows) for cosine."""
    rng = np.random.default_rng(30)
    if metric == "euclidean":
        return rng.integers(1, 4, size=(600, d)).astype(np.float64)
    return rng.standard_normal((30, d))[rng.integers(0, 30, 600)] * 2.0 ** rng.integers(0, 3, (600, 1))


@pytest.mark.parametrize(("metric", "d"), [("euclidean", 4), ("euclidean", 40), ("cosine", 40)])
def test_exact_knn_breaks_ties_by_index_whatever_the_threads(metric: str, d: int) -> None:
    """Which of the points tied at the k-th distance make the list is the lower index's, with 1 or 4 OpenMP
    threads alike (scikit-learn's kd-tree and brute force choose differently with different thread counts)."""
    from threadpoolctl import threadpool_limits

    X = _tied_data(metric, d)
    k = 12
    D = np.round(cdist(X, X, "sqeuclidean" if metric == "euclidean" else "cosine"), 9)  # the ties exact
    np.fill_diagonal(D, np.inf)
    ref = np.lexsort((np.broadcast_to(np.arange(600), D.shape), D), axis=1)[:, :k]
    for threads in (1, 4):
        with threadpool_limits(limits=threads):
            ind, _ = nearest_neighbors(X, k, metric=metric, method="exact")
        assert np.array_equal(ind, ref), threads


@pytest.mark.parametrize(("metric", "d"), [("euclidean", 4), ("cosine", 40)])
def test_query_neighbors_break_ties_by_index_whatever_the_threads(metric: str, d: int) -> None:
    """Out-of-sample queries follow the same conventions: against a brute-force reference of the exact distances,
    the k nearest reference rows by (distance, lower index), with 1 or 4 threads; a query equal to a reference row
    has it at distance 0."""
    from threadpoolctl import threadpool_limits

    X = _tied_data(metric, d)
    ref, new = X[:450], X[450:]
    k = 9
    D = np.round(cdist(new, ref, "sqeuclidean" if metric == "euclidean" else "cosine"), 9)
    expected = np.lexsort((np.broadcast_to(np.arange(450), D.shape), D), axis=1)[:, :k]
    for threads in (1, 4):
        with threadpool_limits(limits=threads):
            ind, dist = query_neighbors(ref, new, k, metric=metric)
        assert np.array_equal(ind, expected), threads
    assert np.allclose(dist, np.sqrt(np.take_along_axis(D, expected, axis=1)) if metric == "euclidean"
                       else np.take_along_axis(D, expected, axis=1), atol=1e-6)
    ind, dist = query_neighbors(ref, ref[[7, 3]], 1)
    assert ind[:, 0].tolist() == [7, 3] and np.all(dist == 0.0)


def test_knn_rows_sorted_and_self_excluded_with_duplicates() -> None:
    X = np.repeat(_data(50, 2, seed=17), 3, axis=0)  # every point three times
    for method in ("exact", "pynndescent"):
        ind, dist = nearest_neighbors(X, 4, method=method)
        assert not np.any(ind == np.arange(150)[:, None])
        assert np.all(dist[:, :2] == 0)  # the two copies come first
        key_ok = (np.diff(dist, axis=1) > 0) | ((np.diff(dist, axis=1) == 0) & (np.diff(ind, axis=1) > 0))
        assert key_ok.all()  # sorted by (distance, index)


def test_pynndescent_recall_and_determinism() -> None:
    X = _data(3000, 5, seed=18)
    k = 15
    threads = numba.get_num_threads()
    ind_e, dist_e = nearest_neighbors(X, k, method="exact")
    ind_a, dist_a = nearest_neighbors(X, k, method="pynndescent", random_state=3)
    hits = (ind_e[:, :, None] == ind_a[:, None, :]).any(axis=2).sum()
    assert hits / ind_e.size >= 0.99
    # distances are recomputed in float64 by the same formula on both paths
    same = ind_e == ind_a
    assert np.array_equal(dist_e[same], dist_a[same])
    ind_b, dist_b = nearest_neighbors(X, k, method="pynndescent", random_state=3)
    assert np.array_equal(ind_a, ind_b) and np.array_equal(dist_a, dist_b)
    assert numba.get_num_threads() == threads  # NNDescent's numba.set_num_threads(n_jobs) does not leak
    # "auto": exact if l ≤ exact_max_samples or d ≤ exact_max_dim or l²·d ≤ exact_max_work, else pynndescent
    ind_auto, _ = nearest_neighbors(X, k, exact_max_samples=1000, exact_max_dim=0, exact_max_work=0,
                                    random_state=3)
    assert np.array_equal(ind_auto, ind_a)
    assert np.array_equal(nearest_neighbors(X, k)[0], ind_e)
    assert np.array_equal(nearest_neighbors(X, k, exact_max_samples=1000)[0], ind_e)  # d = 5 ≤ 15
    # l²·d = 4.5e7 within the default work bound: exact even with the other two thresholds off
    assert np.array_equal(nearest_neighbors(X, k, exact_max_samples=1000, exact_max_dim=0)[0], ind_e)
    # squared distances: the same order, the squares of the distances
    ind_s, d2 = nearest_neighbors(X, k, squared=True)
    assert np.array_equal(ind_s, ind_e) and np.allclose(np.sqrt(d2), dist_e, rtol=1e-15, atol=0)


def test_weights_deterministic_including_pynndescent_path() -> None:
    X = _data(1500, 4, seed=19)
    for f in (gaussian_perplexity, euclidean_max, cosine_knn):
        W1 = f(X, method="pynndescent", random_state=5)
        W2 = f(X, method="pynndescent", random_state=5)
        assert np.array_equal(W1.indptr, W2.indptr) and np.array_equal(W1.indices, W2.indices)
        assert np.array_equal(W1.data, W2.data)


def test_knn_bad_arguments() -> None:
    X = _data(10, 2)
    with pytest.raises(ValueError, match="n_neighbors"):
        nearest_neighbors(X, 10)
    with pytest.raises(ValueError, match="n_neighbors"):
        nearest_neighbors(X, 0)
    with pytest.raises(ValueError, match="auto, exact, pynndescent"):
        nearest_neighbors(X, 3, method="annoy")
    with pytest.raises(ValueError, match="euclidean, cosine"):
        nearest_neighbors(X, 3, metric="manhattan")
    with pytest.raises(ValueError, match="2-D"):
        nearest_neighbors(X[:, 0], 3)
    with pytest.raises(ValueError, match="NaN"):
        nearest_neighbors(np.full((5, 2), np.nan), 2)


# ---------------------------------------------------------------------------------------------------------------
# memory: O(l·k), never an l×l matrix
# ---------------------------------------------------------------------------------------------------------------
def test_memory_is_linear_in_l() -> None:
    """l = 20,000: building W must peak below 20 % of one dense l×l float64 matrix (3.2 GB).

    method="auto" resolves to the exact kd-tree here (d = 5 ≤ exact_max_dim), which is also the fastest. (pynndescent
    itself allocates a fixed ≈ 0.8-1.1 GB NN-descent workspace -- O(16384·max_candidates²), independent of l -- so at
    this small l it alone would take 25-35 % of the l×l size; see the knn module docstring.)
    """
    l = 20_000
    X = _data(l, 5, seed=20)
    gaussian_perplexity(X[:200], 5.0)  # compile / load numba outside the measurement
    budget = 0.2 * 8 * l * l
    for build in (
        lambda: gaussian_perplexity(X, 30.0),
        lambda: euclidean_max(X, 50),
    ):
        tracemalloc.start()
        try:
            W = build()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < budget, f"peak {peak / 1e6:.0f} MB ≥ budget {budget / 1e6:.0f} MB"
        assert W.shape == (l, l) and W.nnz <= 2 * l * 90
        _assert_w_invariants(W)


def test_dense_conditional_probabilities_calibrates_over_every_other_sample():
    from cova.affinity import conditional_probabilities, dense_conditional_probabilities

    X = np.random.default_rng(5).normal(size=(30, 4))
    D2 = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    P = dense_conditional_probabilities(D2, 7.0)
    assert np.all(np.diag(P) == 0) and np.allclose(P.sum(axis=1), 1.0)
    off = ~np.eye(30, dtype=bool)
    np.testing.assert_array_equal(P[off].reshape(30, 29), conditional_probabilities(D2[off].reshape(30, 29), 7.0))
    with pytest.raises(ValueError, match="perplexity"):
        dense_conditional_probabilities(D2, 29.0)
    with pytest.raises(ValueError, match="square"):
        dense_conditional_probabilities(D2[:5], 2.0)
