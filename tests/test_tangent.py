"""featMAP's local geometry (featMAP Sec. 3.1, Eqs. 1–3): the fuzzy graph on our kNN search, the weighted local SVD,
intrinsic dimension, sign alignment, frame smoothing, feature importance and loading arrows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from cova.affinity.fuzzy import FuzzyGraph, fuzzy_graph
from cova.affinity.tangent import (
    align_signs,
    feature_importance,
    feature_loadings,
    intrinsic_dimension,
    local_svd,
    principal_angle_cosine,
    reduce_features,
    smooth_frames,
)


def _orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return Q


def _max_angle_deg(frames: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Largest principal angle (degrees) between each frame's row space and the row space of ``basis`` (…, 2, n)."""
    s = np.linalg.svd(frames @ np.swapaxes(basis, -1, -2), compute_uv=False)
    return np.degrees(np.arccos(np.clip(s.min(axis=-1), 0.0, 1.0)))


def _all_neighbours(m: int) -> tuple[np.ndarray, sp.csr_matrix]:
    """Every point's 'neighbour list' is all other points (self first), with uniform weights."""
    knn = np.empty((m, m), dtype=np.int64)
    for i in range(m):
        knn[i] = np.r_[i, np.delete(np.arange(m), i)]
    P = sp.csr_matrix(np.ones((m, m)) - np.eye(m))
    return knn, P


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    from sklearn.datasets import load_digits

    return load_digits().data.astype(np.float64)


# ---------------------------------------------------------------------------------------------------------- fuzzy graph


def test_fuzzy_graph_matches_umap_learn(digits):
    """P equals umap-learn's graph_ on the same neighbours; with its own exact search, on the edges both agree on."""
    import umap
    from sklearn.metrics import pairwise_distances
    from umap.utils import fast_knn_indices

    X = digits
    G = fuzzy_graph(X, 15, random_state=0)
    assert isinstance(G, FuzzyGraph) and G.n_neighbors == 15
    m = X.shape[0]
    P = G.P
    assert P.shape == (m, m) and P.dtype == np.float64
    assert abs(P - P.T).max() == 0.0
    assert P.diagonal().max() == 0.0
    assert np.array_equal(G.knn_indices[:, 0], np.arange(m)) and np.all(G.knn_dists[:, 0] == 0.0)
    assert np.all(np.diff(G.knn_dists, axis=1) >= 0.0)
    # Eq. 1: Σ_j P̃_{j|i} = log2 k on the directed memberships (umap-learn's binary-search tolerance)
    Pt = np.exp(-np.maximum(G.knn_dists[:, 1:] - G.rhos[:, None], 0.0) / G.sigmas[:, None])
    assert np.allclose(Pt.sum(axis=1), np.log2(15), rtol=1e-3)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # umap-learn prunes graph_ in place to P >= max(P)/n_epochs (n_epochs = 0: its default 500 for this size)
        ref = umap.UMAP(n_neighbors=15, random_state=0, n_epochs=0, init="random").fit(X).graph_.tocsr()
        same = umap.UMAP(n_neighbors=15, random_state=0, n_epochs=0, init="random", force_approximation_algorithm=True,
                         precomputed_knn=(G.knn_indices.copy(), G.knn_dists.copy())).fit(X).graph_.tocsr()
    threshold = P.max() / 500.0
    pruned = P.multiply(P >= threshold).tocsr()
    # same neighbours: identical up to float32 rounding
    assert abs(pruned - same).max() < 1e-6
    # umap-learn's own exact search (ties at the k-th distance may be resolved differently): compare the edges whose
    # two endpoints have the same neighbour sets in both
    knn_ref = fast_knn_indices(pairwise_distances(X), 15)
    agree = np.array([set(a) == set(b) for a, b in zip(knn_ref, G.knn_indices)])
    assert agree.mean() > 0.95
    diff = (pruned - ref).tocoo()
    on = agree[diff.row] & agree[diff.col]
    assert np.abs(diff.data[on]).max(initial=0.0) < 1e-6


def test_fuzzy_graph_validation():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="n_neighbors must be >= 2"):
        fuzzy_graph(X, 1)
    with pytest.raises(ValueError, match="n_neighbors must be < the number of samples m = 20"):
        fuzzy_graph(X, 20)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fuzzy_graph(bad, 5)
    with pytest.raises(ValueError, match="set_op_mix_ratio"):
        fuzzy_graph(X, 5, set_op_mix_ratio=1.5)
    with pytest.raises(ValueError, match="metric"):
        fuzzy_graph(X, 5, metric="manhattan")
    with pytest.raises(ValueError, match="n_neighbors must be an integer"):
        fuzzy_graph(X, 5.0)


# ------------------------------------------------------------------------------------------------------------ local SVD


def test_local_svd_gaussian_plane():
    """2-D Gaussian (std 5 and 1) in R^20: the top-2 frames span the plane; σ1/σ2 ≈ 5 when the neighbourhood is the
    whole sample (a kNN disc of a 2-D density is locally isotropic, so the ratio needs the global neighbourhood)."""
    rng = np.random.default_rng(1)
    Q = _orthogonal(20, rng)
    plane = Q[:, :2].T  # (2, 20)

    # kNN neighbourhoods, slight off-plane noise: frames within 5° of the plane everywhere
    Z = rng.normal(size=(1000, 2)) * [5.0, 1.0]
    X = Z @ plane + 0.001 * rng.normal(size=(1000, 20))
    G = fuzzy_graph(X, 15)
    S, F = local_svd(X, G.knn_indices, G.P)
    assert S.shape == (1000, 14) and F.shape == (1000, 2, 20)
    assert np.allclose(np.einsum("mln,mjn->mlj", F, F), np.eye(2), atol=1e-10)
    assert _max_angle_deg(F, plane[None]).max() < 5.0

    # whole-sample neighbourhood of a point at the centre, uniform weights: σ_l² = mean squared projection
    m = 300
    Z = rng.normal(size=(m, 2)) * [5.0, 1.0]
    Z[0] = 0.0
    X = Z @ plane
    knn, P = _all_neighbours(m)
    S, F = local_svd(X, knn, P)
    ratio = S[0, 0] / S[0, 1]
    assert 4.0 < ratio < 6.0
    assert _max_angle_deg(F[:1], plane[None])[0] < 1e-6
    # brute force: σ_l² are the eigenvalues of Σ_j w_j d_j d_jᵀ with w_j = 1/(m − 1)
    D = X[1:] - X[0]
    ev = np.sort(np.linalg.eigvalsh(D.T @ D / (m - 1)))[::-1]
    assert np.allclose(S[0, :2] ** 2, ev[:2], rtol=1e-10)
    assert np.all(S[0, 2:] < 1e-10 * S[0, 0])


def test_local_svd_weights_and_routes():
    """Normalised √P weights (brute-force SVD of W_i X_i), the same result from the Gram and the direct routes, and
    from any block size."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 30))
    G = fuzzy_graph(X, 10)
    S, F = local_svd(X, G.knn_indices, G.P, n_frames=3, block_size=7)
    for i in (0, 57, 119):
        nb = G.knn_indices[i, 1:]
        w = np.asarray(G.P[i, nb].todense()).ravel()
        A = np.sqrt(w / w.sum())[:, None] * (X[nb] - X[i])
        _, s, vh = np.linalg.svd(A, full_matrices=False)
        assert np.allclose(S[i], s, rtol=1e-10)
        assert np.allclose(np.abs(np.sum(F[i] * vh[:3], axis=1)), 1.0, atol=1e-8)
    assert np.allclose(np.einsum("mln,mjn->mlj", F, F), np.eye(3), atol=1e-10)
    # nearly 1-D neighbourhoods (σ2/σ1 ≈ 1e-6) take the full-SVD fallback of the Gram route
    t = rng.uniform(0, 10, 120)
    Xl = np.outer(t, rng.normal(size=30)) + 1e-6 * rng.normal(size=(120, 30))
    Gl = fuzzy_graph(Xl, 10)
    Sl, Fl = local_svd(Xl, Gl.knn_indices, Gl.P, n_frames=2)
    assert np.all(Sl[:, 1] < 1e-3 * Sl[:, 0])
    for i in (3, 90):
        nb = Gl.knn_indices[i, 1:]
        w = np.asarray(Gl.P[i, nb].todense()).ravel()
        _, s, vh = np.linalg.svd(np.sqrt(w / w.sum())[:, None] * (Xl[nb] - Xl[i]), full_matrices=False)
        assert np.allclose(Sl[i], s, rtol=1e-8)
        assert np.allclose(np.abs(np.sum(Fl[i] * vh[:2], axis=1)), 1.0, atol=1e-8)
    S2, F2 = local_svd(X, G.knn_indices, G.P * 7.0, n_frames=3)  # weights are normalised: P's scale drops out
    assert np.allclose(S2, S, rtol=1e-12) and np.allclose(F2, F, atol=1e-10)
    # k − 1 ≥ n takes the direct SVD route
    Xs = X[:, :5]
    Gs = fuzzy_graph(Xs, 10)
    Ss, Fs = local_svd(Xs, Gs.knn_indices, Gs.P, n_frames=5)
    assert Ss.shape == (120, 5)
    assert np.allclose(np.einsum("mln,mjn->mlj", Fs, Fs), np.eye(5), atol=1e-10)


@pytest.mark.parametrize("n_features", [4, 8])  # k − 1 = 5 ≥ n (full SVD) and < n (singular values + Gram)
def test_local_svd_singular_values_alone_are_those_of_the_frames(n_features):
    """``n_frames=0`` returns the same singular values as a call with frames, and no frames, on both routes."""
    X = np.random.default_rng(4).normal(size=(40, n_features))
    G = fuzzy_graph(X, 6)
    S, F = local_svd(X, G.knn_indices, G.P, n_frames=2, block_size=7)
    S0, F0 = local_svd(X, G.knn_indices, G.P, n_frames=0, block_size=7)
    np.testing.assert_allclose(S0, S, rtol=1e-12, atol=1e-14)
    assert F0.shape == (40, 0, n_features) and F.shape == (40, 2, n_features)


def test_local_svd_degenerate_and_validation():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 8))
    X[5] = X[4]
    G = fuzzy_graph(X, 6)
    S, F = local_svd(X, G.knn_indices, G.P)
    assert np.all(np.isfinite(S)) and np.all(np.isfinite(F))
    P0 = G.P.tolil()
    P0[0, :] = 0.0  # a point without weights: σ = 0
    S0, F0 = local_svd(X, G.knn_indices, P0.tocsr())
    assert np.all(S0[0] == 0.0) and np.allclose(np.linalg.norm(F0[0], axis=1), 1.0)
    with pytest.raises(ValueError, match="n_frames"):
        local_svd(X, G.knn_indices, G.P, n_frames=6)
    with pytest.raises(ValueError, match="n_frames"):
        local_svd(X, G.knn_indices, G.P, n_frames=-1)
    bad = G.knn_indices.copy()
    bad[:, 0] = bad[:, 1]
    with pytest.raises(ValueError, match=r"knn_indices\[:, 0\]"):
        local_svd(X, bad, G.P)
    with pytest.raises(ValueError, match="shape"):
        local_svd(X, G.knn_indices, G.P[:10, :10])
    with pytest.raises(ValueError, match="k >= 2"):
        local_svd(X, G.knn_indices[:, :1], G.P)


def test_local_svd_swiss_roll_tangent_planes():
    from sklearn.datasets import make_swiss_roll

    X, t = make_swiss_roll(1500, noise=0.0, random_state=0)
    G = fuzzy_graph(X, 15)
    _, F = local_svd(X, G.knn_indices, G.P)
    d_t = np.stack([np.cos(t) - t * np.sin(t), np.zeros_like(t), np.sin(t) + t * np.cos(t)], axis=1)
    d_t /= np.linalg.norm(d_t, axis=1, keepdims=True)
    d_h = np.broadcast_to([0.0, 1.0, 0.0], d_t.shape)
    tangent = np.stack([d_t, d_h], axis=1)  # orthonormal (t and height directions are orthogonal)
    angles = _max_angle_deg(F, tangent)
    assert np.mean(angles < 10.0) >= 0.9
    # a wrong reference must fail: the plane spanned by the normal and the height direction
    normal = np.cross(d_t, d_h)
    assert np.mean(_max_angle_deg(F, np.stack([normal, d_h], axis=1)) < 10.0) < 0.1


# ---------------------------------------------------------------------------------------------- intrinsic dimension


def test_intrinsic_dimension():
    S = np.array([
        [3.0, 1.0, 0.5, 0.1],    # σ² = 9, 1, .25, .01: 9/10.26 = .877 < .9, 10/10.26 = .975 → 2
        [1.0, 1.0, 1.0, 1.0],    # ties: 1/4, 2/4, 3/4, 4/4 → .9 reached at 4
        [1.0, 0.0, 0.0, 0.0],    # → 1
        [0.0, 0.0, 0.0, 0.0],    # zero row → 1
        [np.sqrt(9.0), 1.0, 0.0, 0.0],  # 9/10 = .9 exactly → 1 (≥, no off-by-one)
    ])
    assert intrinsic_dimension(S, 0.9).tolist() == [2, 4, 1, 1, 1]
    assert intrinsic_dimension(S[1:2], 0.5).tolist() == [2]  # 2/4 = .5 exactly
    assert intrinsic_dimension(S[1:2], 1.0).tolist() == [4]
    with pytest.raises(ValueError, match="tau"):
        intrinsic_dimension(S, 0.0)
    with pytest.raises(ValueError, match="non-negative"):
        intrinsic_dimension(-S, 0.9)


# ------------------------------------------------------------------------------------------------ signs and smoothing


def _helices(rng: np.random.Generator) -> np.ndarray:
    """Two separate noisy helices in R^3 (two kNN components, a well-defined top direction everywhere)."""
    s = np.sort(rng.uniform(0, 4 * np.pi, 300))
    h = np.stack([np.cos(s), np.sin(s), 0.3 * s], axis=1)
    X = np.vstack([h, h + [30.0, 0.0, 0.0]])
    return X + 0.005 * rng.normal(size=X.shape)


def test_align_signs():
    rng = np.random.default_rng(4)
    X = _helices(rng)
    G = fuzzy_graph(X, 10)
    from scipy.sparse.csgraph import connected_components

    assert connected_components(G.P, directed=False)[0] == 2
    _, F = local_svd(X, G.knn_indices, G.P, n_frames=1)
    A = align_signs(F, G.knn_indices)
    flips = rng.choice([-1.0, 1.0], size=F.shape[:2])
    A2 = align_signs(F * flips[:, :, None], G.knn_indices)
    assert np.array_equal(A, A2)  # independent of the input signs
    assert np.allclose(np.abs(A), np.abs(F))
    i = np.repeat(np.arange(X.shape[0]), 9)
    j = G.knn_indices[:, 1:].ravel()
    dots = np.einsum("en,en->e", A[i, 0], A[j, 0])
    assert dots.min() >= 0.0
    assert np.einsum("en,en->e", F[i, 0], F[j, 0]).min() < 0.0  # the input was not aligned already
    # two frame rows, random data: still independent of the flips; a different root only flips whole components
    Xr = rng.normal(size=(200, 6))
    Gr = fuzzy_graph(Xr, 8)
    _, Fr = local_svd(Xr, Gr.knn_indices, Gr.P)
    Ar = align_signs(Fr, Gr.knn_indices, root=17)
    assert np.array_equal(Ar, align_signs(-Fr, Gr.knn_indices, root=17))
    with pytest.raises(ValueError, match="root"):
        align_signs(Fr, Gr.knn_indices, root=200)


def _procrustes_smooth_reference(F, knn, w, n_iter, n_aligned):
    """Point-by-point loop of one smoothing definition (independent of the batched code)."""
    F = F.copy()
    for _ in range(n_iter):
        new = np.empty_like(F)
        for i in range(F.shape[0]):
            head = np.zeros_like(F[i, :n_aligned])
            tail = np.zeros_like(F[i, n_aligned:])
            for jj, j in enumerate(knn[i]):
                u, _, vh = np.linalg.svd(F[i, :n_aligned] @ F[j, :n_aligned].T)
                head += w[i, jj] * (u @ vh) @ F[j, :n_aligned]
                tail += w[i, jj] * F[j, n_aligned:]
            u, _, vh = np.linalg.svd(head, full_matrices=False)
            new[i, :n_aligned] = u @ vh
            new[i, n_aligned:] = tail / np.linalg.norm(tail, axis=1, keepdims=True)
        F = new
    return F


def test_smooth_frames():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 5)) @ rng.normal(size=(5, 12))
    G = fuzzy_graph(X, 8)
    _, F = local_svd(X, G.knn_indices, G.P, n_frames=4)
    k = 8
    uni = np.full((60, k), 1.0 / k)
    for n_aligned in (1, 2, 3):  # 1 and 2: closed forms; 3: LAPACK
        got = smooth_frames(F, G.knn_indices, G.P, 3, n_aligned=n_aligned)
        assert np.allclose(got, _procrustes_smooth_reference(F, G.knn_indices, uni, 3, n_aligned), atol=1e-10)
    w = np.ones((60, k))
    w[:, 1:] = np.asarray(G.P[np.repeat(np.arange(60), k - 1), G.knn_indices[:, 1:].ravel()]).reshape(60, k - 1)
    w /= w.sum(axis=1, keepdims=True)
    got_f = smooth_frames(F, G.knn_indices, G.P, 2, weighting="fuzzy")
    assert np.allclose(got_f, _procrustes_smooth_reference(F, G.knn_indices, w, 2, 4), atol=1e-10)
    assert not np.allclose(got_f, smooth_frames(F, G.knn_indices, None, 2))
    # sign-invariant: flipped input rows give the same smoothed subspaces
    flips = rng.choice([-1.0, 1.0], size=F.shape[:2])
    alt = smooth_frames(F * flips[:, :, None], G.knn_indices, None, 3)
    base = smooth_frames(F, G.knn_indices, None, 3)
    assert np.allclose(principal_angle_cosine(alt, base), 1.0, atol=1e-10)
    assert np.array_equal(smooth_frames(F, G.knn_indices, None, 0), F)
    for n_iter in (2, 3):  # ``overwrite``: the same result, computed in the input's memory (which it destroys)
        work = F.copy()
        got = smooth_frames(work, G.knn_indices, None, n_iter, overwrite=True)
        np.testing.assert_array_equal(got, smooth_frames(F, G.knn_indices, None, n_iter))
        assert not np.array_equal(work, F)  # used as a work stack (after an even count it holds the result)
        assert np.shares_memory(got, work) == (n_iter % 2 == 0)
    with pytest.raises(ValueError, match="weighting"):
        smooth_frames(F, G.knn_indices, G.P, 1, weighting="P")
    with pytest.raises(ValueError, match="P is required"):
        smooth_frames(F, G.knn_indices, None, 1, weighting="fuzzy")
    with pytest.raises(ValueError, match="n_aligned"):
        smooth_frames(F, G.knn_indices, None, 1, n_aligned=5)


def test_principal_angle_cosine():
    rng = np.random.default_rng(6)
    Q = _orthogonal(6, rng)
    A = Q[:2]
    rot = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    assert principal_angle_cosine(A, -(rot @ A)) == pytest.approx(1.0)
    assert principal_angle_cosine(A, Q[2:4]) == pytest.approx(0.0, abs=1e-12)
    B = np.stack([Q[0], np.cos(0.5) * Q[1] + np.sin(0.5) * Q[2]])
    assert principal_angle_cosine(A, B) == pytest.approx((1.0 + np.cos(0.5)) / 2.0)
    batch = principal_angle_cosine(np.stack([A, A]), np.stack([B, Q[2:4]]))
    assert batch.shape == (2,) and batch[1] == pytest.approx(0.0, abs=1e-12)


# ------------------------------------------------------------------------------------------ feature importance (Eq. 3)


def test_feature_importance_only_varying_features():
    rng = np.random.default_rng(7)
    X = np.zeros((300, 10))
    X[:, :2] = rng.normal(size=(300, 2)) * [3.0, 1.0]
    X[:, 2:] = 4.0  # constant features
    G = fuzzy_graph(X, 12)
    S, F = local_svd(X, G.knn_indices, G.P)
    FI = feature_importance(F)
    assert FI.shape == (300, 10)
    assert FI[:, 2:].max() < 1e-6
    assert np.allclose(FI[:, :2], 1.0, atol=1e-8)  # the two frames span exactly features 0 and 1
    FI1 = feature_importance(F, d=1)
    assert np.allclose(np.sum(FI1 ** 2, axis=1), 1.0)
    d = intrinsic_dimension(S)
    FId = feature_importance(F, d=np.minimum(d, 2))
    assert np.allclose(FId[d == 1], FI1[d == 1]) and np.allclose(FId[d >= 2], FI[d >= 2])
    with pytest.raises(ValueError, match="d must be"):
        feature_importance(F, d=3)


def test_feature_loadings_norm_equals_fi():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(80, 9))
    G = fuzzy_graph(X, 10)
    _, F = local_svd(X, G.knn_indices, G.P, n_frames=4)
    theta = rng.uniform(0, 2 * np.pi, 80)
    c, s = np.cos(theta), np.sin(theta)
    Ve = np.stack([np.stack([c, s], 1), np.stack([-s, c], 1)], axis=1)  # orthonormal rows
    Ve[::2, 1] *= -1.0  # reflections too
    a = feature_loadings(F, Ve)
    assert a.shape == (80, 9, 2)
    assert np.allclose(np.linalg.norm(a, axis=2), feature_importance(F, d=2), atol=1e-6)
    # direction: a_h = v_i1^{f_h} v^e_i1 + v_i2^{f_h} v^e_i2
    i, h = 3, 5
    assert np.allclose(a[i, h], F[i, 0, h] * Ve[i, 0] + F[i, 1, h] * Ve[i, 1])
    with pytest.raises(ValueError, match="frame_embedding"):
        feature_loadings(F, Ve[:, :1])


def test_reduce_features_round_trip():
    """Frames computed after a lossless truncated SVD, mapped back through the components, give the same FI and
    loadings as frames computed on the full features."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(150, 8)) @ rng.normal(size=(8, 40)) + 2.0  # rank ≤ 9 (with the offset), n = 40
    Xr, Vt = reduce_features(X, n_components=12, random_state=0)
    assert Xr.shape == (150, 12) and Vt.shape == (12, 40)
    assert np.allclose(Vt @ Vt.T, np.eye(12), atol=1e-10)
    assert np.allclose(Xr @ Vt, X, atol=1e-8)  # all the variance kept
    G = fuzzy_graph(X, 10)
    S_full, F_full = local_svd(X, G.knn_indices, G.P, n_frames=3)
    S_red, F_red = local_svd(Xr, G.knn_indices, G.P, n_frames=3)
    assert np.allclose(S_red[:, :3], S_full[:, :3], rtol=1e-8)
    assert np.allclose(feature_importance(F_red, Vt), feature_importance(F_full), atol=1e-6)
    assert np.allclose(feature_importance(F_red, Vt, d=2), feature_importance(F_full, d=2), atol=1e-6)
    # a lossy reduction does not reproduce it
    Xl, Vl = reduce_features(X, n_components=4, random_state=0)
    _, F_l = local_svd(Xl, G.knn_indices, G.P, n_frames=3)
    assert not np.allclose(feature_importance(F_l, Vl), feature_importance(F_full), atol=1e-3)
    # deterministic, and a no-op when n ≤ n_components
    assert np.array_equal(reduce_features(X, 12, random_state=0)[1], Vt)
    same, none = reduce_features(X, n_components=40)
    assert none is None and np.array_equal(same, X)
    # the dense fallback (n_components ≥ min(m, n) − 1)
    Xd, Vd = reduce_features(X[:20], n_components=19)
    assert Vd.shape == (19, 40) and np.allclose(Xd @ Vd, X[:20], atol=1e-8)
    with pytest.raises(ValueError, match="components"):
        feature_importance(F_red, Vt[:5])


def test_local_svd_threads_and_smoothing_stop_rule():
    """Blocks of the local SVD on two threads give the same arrays as one thread; a stopping rule ends the smoothing
    after the iteration where it first returns True, with the frames of that many plain iterations."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(90, 6)) @ rng.normal(size=(6, 20))
    G = fuzzy_graph(X, 8)
    one = local_svd(X, G.knn_indices, G.P, n_frames=3, block_size=7)
    two = local_svd(X, G.knn_indices, G.P, n_frames=3, block_size=7, n_jobs=2)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
    with pytest.raises(ValueError, match="n_jobs"):
        local_svd(X, G.knn_indices, G.P, n_jobs=0)
    calls = []
    got = smooth_frames(one[1], G.knn_indices, None, 10, n_aligned=2, stop=lambda F: len(calls.append(F) or calls) == 3)
    assert len(calls) == 3
    assert np.array_equal(got, smooth_frames(one[1], G.knn_indices, None, 3, n_aligned=2))
