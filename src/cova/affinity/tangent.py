"""featMAP's local geometry: weighted local SVD, tangent frames and feature importance (featMAP Sec. 3.1–3.2).

* :func:`local_svd` -- the weighted local SVD of featMAP Eq. 2 at every point: singular values σ_il and the top
  right singular vectors v_il (the local tangent basis, "source features", Theorem 3.1).
* :func:`intrinsic_dimension` -- the local intrinsic dimension d_i (the paper's footnote 3, "number of singular
  values that account for most data variability", made concrete as a σ²-share threshold τ).
* :func:`align_signs` -- fixes the ±1 ambiguity of every v_il along a breadth-first tree of the kNN graph, so that
  frames of neighbouring points can be compared (Eqs. 4–6 presuppose comparable bases).
* :func:`smooth_frames` -- graph smoothing of the frames (Procrustes alignment, Eq. 4, then averaging over the
  neighbours); not in the paper, but in the authors' package, whose interpretation outputs use smoothed frames.
* :func:`principal_angle_cosine` -- the consistence degree between two frames, invariant to rotations inside the
  subspaces: max_O tr(V_i O V_jᵀ)/d = mean cosine of the principal angles (Eqs. 4 and 6 combined).
* :func:`feature_importance` -- Definition 3.1 / Eq. 3, ‖f^i_h‖ = (Σ_{l≤d} (v_il^{f_h})²)^{1/2}.
* :func:`feature_loadings` -- the loading arrows a_h = Σ_{l=1}^{2} v_il^{f_h} v^e_il of Fig. 1.
* :func:`reduce_features` -- optional uncentred truncated SVD of the features before all of this (the authors'
  preprocessing; the paper states none), with the components kept to map frames back to the features.

Frames are stored row-wise: ``frames[i, l]`` is v_{i,l+1} ∈ R^n, so ``frames[i]`` is V_iᵀ with orthonormal rows.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
import scipy.sparse as sp

from ..checks import check_matrix
from ..errors import UserError

__all__ = [
    "local_svd",
    "intrinsic_dimension",
    "align_signs",
    "smooth_frames",
    "SMOOTH_WEIGHTINGS",
    "principal_angle_cosine",
    "feature_importance",
    "feature_loadings",
    "reduce_features",
]

#: Neighbour weightings of :func:`smooth_frames`.
SMOOTH_WEIGHTINGS: tuple[str, ...] = ("uniform", "fuzzy")

#: Float64 entries of the largest temporary array of one block (≈ 32 MB); sets the default block sizes.
_BLOCK_ENTRIES: int = 1 << 22

#: Below this ratio σ_il/σ_i1 a frame row from the Gram route of :func:`local_svd` loses accuracy (its error, and
#: the loss of orthogonality between rows, grow like machine-ε·(σ_i1/σ_il)², ≈ 2·10⁻¹⁰ at the threshold); such points
#: are redone by a full SVD.
_GRAM_MIN_RATIO: float = 1e-3


# --------------------------------------------------------------------------------------------------------------------
# input checks


def _check_knn(knn_indices: np.ndarray, m: int) -> np.ndarray:
    knn = np.asarray(knn_indices)
    if knn.ndim != 2 or knn.shape[0] != m:
        raise UserError(f"knn_indices must have shape (m, k) with m = {m} rows, got shape {knn.shape}")
    if not np.issubdtype(knn.dtype, np.integer):
        raise UserError(f"knn_indices must have an integer dtype, got {knn.dtype}")
    if knn.shape[1] < 2:
        raise UserError(f"knn_indices must have k >= 2 columns (the point itself and a neighbour), got {knn.shape[1]}")
    if knn.min() < 0 or knn.max() >= m:
        raise UserError(f"knn_indices must hold indices in [0, {m}), got range [{knn.min()}, {knn.max()}]")
    knn = np.ascontiguousarray(knn, dtype=np.int64)
    if not np.array_equal(knn[:, 0], np.arange(m)):
        raise UserError("knn_indices[:, 0] must be each point's own index (umap-learn's convention, as returned by "
                         "cova.affinity.fuzzy.fuzzy_graph)")
    return knn


def _check_P(P: sp.spmatrix | np.ndarray, m: int) -> sp.csr_matrix:
    P = sp.csr_matrix(P, dtype=np.float64)
    if P.shape != (m, m):
        raise UserError(f"P must have shape ({m}, {m}), got {P.shape}")
    if P.nnz and (not np.all(np.isfinite(P.data)) or P.data.min() < 0.0):
        raise UserError("P must hold finite, non-negative weights")
    P.sum_duplicates()
    return P


def _check_frames(frames: np.ndarray, name: str = "frames") -> np.ndarray:
    F = np.asarray(frames, dtype=np.float64)
    if F.ndim != 3 or 0 in F.shape:
        raise UserError(f"{name} must be a non-empty (m, n_frames, n) array, got shape {F.shape}")
    if not np.all(np.isfinite(F)):
        raise UserError(f"{name} contains NaN or infinite values")
    return F


def _check_block(block_size: int | None, per_row: int) -> int:
    if block_size is None:
        return max(1, _BLOCK_ENTRIES // max(1, per_row))
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise UserError(f"block_size must be a positive integer or None, got {block_size!r}")
    return int(block_size)


def _flip_rows(F: np.ndarray) -> np.ndarray:
    """Sign convention for singular vectors: the entry of largest magnitude of every row is positive (the first one
    on ties). Makes the frames independent of the LAPACK build; :func:`align_signs` replaces it by a coherent choice."""
    idx = np.argmax(np.abs(F), axis=-1)
    s = np.sign(np.take_along_axis(F, idx[..., None], axis=-1))
    s[s == 0.0] = 1.0
    return F * s


def _neighbour_weights(P: sp.csr_matrix, knn: np.ndarray) -> np.ndarray:
    """P_{i, knn[i, j]} for j ≥ 1, as an (m, k − 1) array (0 where P stores no edge)."""
    m, k = knn.shape
    rows = np.repeat(np.arange(m, dtype=np.int64), k - 1)
    vals = np.asarray(P[rows, knn[:, 1:].reshape(-1)], dtype=np.float64).reshape(m, k - 1)
    return vals


# --------------------------------------------------------------------------------------------------------------------
# Eq. 2: weighted local SVD


def local_svd(
    X: np.ndarray,
    knn_indices: np.ndarray,
    P: sp.spmatrix,
    *,
    n_frames: int = 2,
    block_size: int | None = None,
    n_jobs: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted local SVD at every point (featMAP Eq. 2): X̂_i = W_i X_i = U_i Σ_i V_iᵀ.

    X_i has the rows x_{i_j} − x_i for the k − 1 neighbours j = ``knn_indices[i, 1:]`` (column 0 is the point
    itself), and W_i = diag(√w_ij) with **normalised** weights w_ij = P_ij / Σ_j P_ij. The paper writes
    W_i = diag(√P_ij); the authors' code normalises, and so do we: then σ_il² is exactly the P-weighted mean squared
    projection of the neighbour offsets onto v_il, a local variance in units of x² that does not depend on the total
    membership Σ_j P_ij of point i (which varies from point to point, so it would otherwise enter the radii log σ_il²
    of Eq. 13 as a per-point offset unrelated to the geometry). A point whose neighbours all have weight 0 gets
    σ_i = 0 (its frame is then the arbitrary basis the SVD of a zero matrix returns).

    Each frame row is signed so that its entry of largest magnitude is positive (deterministic across LAPACK
    builds); use :func:`align_signs` to make the signs coherent between neighbours.

    Complexity: O(m·(k−1)²·n) time. The points are processed in blocks of B (``block_size``, default ≈ 2²² /
    ((k−1)·n)); extra memory is O(B·(k−1)·n). When k − 1 < n the singular values come from LAPACK's batched
    singular-value-only routine, and the top ``n_frames`` right singular vectors from the (k−1)×(k−1) Gram matrix
    X̂_i X̂_iᵀ = U_i Σ_i² U_iᵀ as v_il = X̂_iᵀ u_il / σ_il, which is ≈ 20× faster than a full batched SVD at n = 784;
    the few points whose σ_{i,n_frames} / σ_i1 < 10⁻³ (where that route loses accuracy) are redone by a full SVD.

    Parameters
    ----------
    X : (m, n) data.
    knn_indices : (m, k) neighbour table, column 0 = the point itself (:class:`~cova.affinity.fuzzy.FuzzyGraph`).
    P : (m, m) sparse fuzzy graph (featMAP Eq. 1); only the entries P[i, knn_indices[i, 1:]] are read.
    n_frames : number of right singular vectors to return, 0 ≤ n_frames ≤ min(k − 1, n) (0: the singular values
        alone, e.g. to choose the number of frames before computing them; the frames are then (m, 0, n)).
    block_size : points per block (None: from the memory target above).
    n_jobs : threads working on separate blocks (LAPACK runs without the GIL); the result does not depend on it.

    Returns
    -------
    singular_values : (m, s) float64, s = min(k − 1, n), all singular values of X̂_i in descending order.
    frames : (m, n_frames, n) float64, rows v_i1, …, v_{i,n_frames} (orthonormal).
    """
    X = check_matrix(X, "X", contiguous=True)
    m, n = X.shape
    knn = _check_knn(knn_indices, m)
    k = knn.shape[1]
    s = min(k - 1, n)
    if isinstance(n_frames, bool) or not isinstance(n_frames, (int, np.integer)) or not 0 <= n_frames <= s:
        raise UserError(f"n_frames must be an integer in [0, min(k - 1, n)] = [0, {s}], got {n_frames!r}")
    L = int(n_frames)
    Pc = _check_P(P, m)
    B = _check_block(block_size, (k - 1) * n)

    w = _neighbour_weights(Pc, knn)
    wsum = w.sum(axis=1, keepdims=True)
    sqrt_w = np.sqrt(np.divide(w, wsum, out=np.zeros_like(w), where=wsum > 0.0))

    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise UserError(f"n_jobs must be a positive integer, got {n_jobs!r}")

    sv = np.empty((m, s), dtype=np.float64)
    frames = np.empty((m, L, n), dtype=np.float64)

    def block(start: int) -> None:
        stop = min(m, start + B)
        A = X[knn[start:stop, 1:]] - X[start:stop, None, :]
        A *= sqrt_w[start:stop, :, None]
        if k - 1 >= n and L > 0:
            _, S, Vh = np.linalg.svd(A, full_matrices=False)
            sv[start:stop] = S
            frames[start:stop] = Vh[:, :L]
            return
        S = np.linalg.svd(A, compute_uv=False)
        sv[start:stop] = S
        if L == 0:
            return
        _, U = np.linalg.eigh(A @ np.swapaxes(A, 1, 2))  # ascending eigenvalues
        U_top = U[:, :, ::-1][:, :, :L]  # (b, k−1, L)
        Vh = np.swapaxes(U_top, 1, 2) @ A  # rows σ_l v_lᵀ
        good = S[:, L - 1] > _GRAM_MIN_RATIO * S[:, 0]
        Vh[good] /= S[good, :L, None]
        if not np.all(good):
            _, _, Vh_bad = np.linalg.svd(A[~good], full_matrices=False)
            Vh[~good] = Vh_bad[:, :L]
        frames[start:stop] = Vh

    if int(n_jobs) == 1:
        for start in range(0, m, B):
            block(start)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=int(n_jobs)) as pool:
            list(pool.map(block, range(0, m, B)))
    return sv, _flip_rows(frames)


def intrinsic_dimension(singular_values: np.ndarray, tau: float = 0.9) -> np.ndarray:
    """Local intrinsic dimension d_i: the smallest d with Σ_{l≤d} σ_il² ≥ τ Σ_l σ_il² (featMAP footnote 3).

    The paper only says "the number of singular values that account for most data variability"; τ = 0.9 is the
    authors' code value. d_i ≥ 1 always (a point with all σ_il = 0 gets 1). The comparison allows a relative
    rounding slack of 10⁻¹² so that a share that reaches τ exactly in exact arithmetic (ties such as σ = (1, 1, 1, 1)
    with τ = 0.5) counts as reached.

    Parameters
    ----------
    singular_values : (m, s) non-negative, each row in descending order (as from :func:`local_svd`).
    tau : share of Σσ², 0 < τ ≤ 1.

    Returns
    -------
    (m,) int64 in [1, s].
    """
    S = np.asarray(singular_values, dtype=np.float64)
    if S.ndim != 2 or 0 in S.shape:
        raise UserError(f"singular_values must be a non-empty (m, s) array, got shape {S.shape}")
    if not np.all(np.isfinite(S)) or S.min() < 0.0:
        raise UserError("singular_values must be finite and non-negative")
    t = float(tau)
    if not 0.0 < t <= 1.0:
        raise UserError(f"tau must be in (0, 1], got {tau!r}")
    cum = np.cumsum(S * S, axis=1)
    total = cum[:, -1:]
    reached = cum >= t * total * (1.0 - 1e-12)
    return (np.argmax(reached, axis=1) + 1).astype(np.int64)


# --------------------------------------------------------------------------------------------------------------------
# sign alignment and smoothing of the frames


@numba.njit(cache=True)
def _bfs_forest(indptr: np.ndarray, indices: np.ndarray, root: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - jit
    """Breadth-first forest: from ``root``, then from the lowest-index unvisited vertex of every other component.
    Returns the visit order and each vertex's parent (−1 for the roots)."""
    m = indptr.shape[0] - 1
    parent = np.full(m, -1, dtype=np.int64)
    order = np.empty(m, dtype=np.int64)
    seen = np.zeros(m, dtype=np.bool_)
    pos = 0
    for t in range(m + 1):
        r = root if t == 0 else t - 1
        if seen[r]:
            continue
        seen[r] = True
        order[pos] = r
        head = pos
        pos += 1
        while head < pos:
            u = order[head]
            head += 1
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if not seen[v]:
                    seen[v] = True
                    parent[v] = u
                    order[pos] = v
                    pos += 1
    return order, parent


@numba.njit(cache=True)
def _propagate_signs(order: np.ndarray, parent: np.ndarray, edge_sign: np.ndarray,
                     root_sign: np.ndarray) -> np.ndarray:  # pragma: no cover - jit
    """sign_j = sign_parent(j) · edge_sign_j along the visit order; roots take ``root_sign``."""
    sign = np.empty_like(edge_sign)
    for t in range(order.shape[0]):
        j = order[t]
        p = parent[j]
        for l in range(edge_sign.shape[1]):
            sign[j, l] = root_sign[j, l] if p < 0 else sign[p, l] * edge_sign[j, l]
    return sign


def _knn_adjacency(knn: np.ndarray) -> sp.csr_matrix:
    """Undirected kNN graph (self excluded) as a CSR pattern with sorted indices."""
    m, k = knn.shape
    rows = np.repeat(np.arange(m, dtype=np.int64), k)
    cols = knn.reshape(-1)
    keep = rows != cols
    A = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(m, m))
    A = (A + A.T).tocsr()
    A.sort_indices()
    return A


def align_signs(frames: np.ndarray, knn_indices: np.ndarray, root: int = 0) -> np.ndarray:
    """Make the signs of the frame rows coherent over the kNN graph (the ±1 ambiguity behind featMAP Eqs. 4–6).

    A breadth-first forest of the undirected kNN graph is grown from ``root``, then from the lowest-index unvisited
    point of every further component (each component has its own root). Each root's rows are signed so that their
    entry of largest magnitude is positive; then, along the tree, every v_jl is flipped when v_jl · v_il < 0 for its
    parent i (each row l independently). The result therefore depends only on the subspace directions, not on the
    signs the input had (barring exact zeros of v_jl · v_il). Rotations inside a subspace (near-equal σ_l) are not
    resolved; :func:`smooth_frames` aligns by Procrustes for that. O(m·k + m·n_frames·n) time, O(m·k) extra memory.

    Parameters
    ----------
    frames : (m, n_frames, n), e.g. from :func:`local_svd`.
    knn_indices : (m, k), column 0 = the point itself.
    root : index of the first root.

    Returns
    -------
    (m, n_frames, n) float64, ``frames`` with some rows negated.
    """
    F = _check_frames(frames)
    m = F.shape[0]
    knn = _check_knn(knn_indices, m)
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < m:
        raise UserError(f"root must be an integer index in [0, {m}), got {root!r}")
    A = _knn_adjacency(knn)
    order, parent = _bfs_forest(A.indptr.astype(np.int64), A.indices.astype(np.int64), int(root))
    edge_sign = np.ones(F.shape[:2], dtype=np.float64)
    B = _check_block(None, F.shape[1] * F.shape[2])
    for start in range(0, m, B):
        stop = min(m, start + B)
        p = parent[start:stop]
        has = p >= 0
        dots = np.einsum("bln,bln->bl", F[start:stop][has], F[p[has]])
        edge_sign[start:stop][has] = np.where(dots < 0.0, -1.0, 1.0)
    top = np.take_along_axis(F, np.argmax(np.abs(F), axis=-1)[..., None], axis=-1)[..., 0]
    root_sign = np.where(top < 0.0, -1.0, 1.0)  # the convention of _flip_rows, used at the roots only
    sign = _propagate_signs(order, parent, edge_sign, root_sign)
    return F * sign[:, :, None]


@numba.njit(cache=True)
def _procrustes(M: np.ndarray, R: np.ndarray) -> None:  # pragma: no cover - jit
    """R = U Vᵀ for M = U Σ Vᵀ (the orthogonal matrix maximising tr(Rᵀ M)). Closed forms for 1×1 and 2×2 (the
    usual frame sizes; a LAPACK call per neighbour pair would dominate the run time): for 2×2 the best rotation
    scores √((a+d)² + (c−b)²), the best reflection √((a−d)² + (b+c)²), and the larger wins (their squares differ by
    4 det M)."""
    La = M.shape[0]
    if La == 1:
        R[0, 0] = -1.0 if M[0, 0] < 0.0 else 1.0
    elif La == 2:
        a, b, c, d = M[0, 0], M[0, 1], M[1, 0], M[1, 1]
        p, q = a + d, c - b
        u, v = a - d, b + c
        r1 = np.sqrt(p * p + q * q)
        r2 = np.sqrt(u * u + v * v)
        if r1 == 0.0 and r2 == 0.0:
            R[0, 0], R[0, 1], R[1, 0], R[1, 1] = 1.0, 0.0, 0.0, 1.0
        elif r1 >= r2:
            R[0, 0], R[0, 1], R[1, 0], R[1, 1] = p / r1, -q / r1, q / r1, p / r1
        else:
            R[0, 0], R[0, 1], R[1, 0], R[1, 1] = u / r2, v / r2, v / r2, -u / r2
    else:
        U, _, Vh = np.linalg.svd(M)
        R[:, :] = U @ Vh


@numba.njit(cache=True, nogil=True)
def _aligned_sums(F: np.ndarray, knn: np.ndarray, w: np.ndarray, La: int, out: np.ndarray) -> None:  # pragma: no cover - jit
    """out[i, :La] = Σ_j w_ij O_ij F_j[:La] (O_ij: Procrustes rotation of F_j[:La] onto F_i[:La], featMAP Eq. 4) and
    out[i, La:] = Σ_j w_ij F_j[La:], over the kNN list j = knn[i, :] of every point. Sequential: deterministic."""
    m, L, n = F.shape
    k = knn.shape[1]
    M = np.empty((La, La))
    R = np.empty((La, La))
    for i in range(m):
        out[i, :, :] = 0.0
        for jj in range(k):
            j = knn[i, jj]
            wij = w[i, jj]
            for a in range(La):
                for b in range(La):
                    acc = 0.0
                    for c in range(n):
                        acc += F[i, a, c] * F[j, b, c]
                    M[a, b] = acc
            _procrustes(M, R)
            for a in range(La):
                for b in range(La):
                    r = wij * R[a, b]
                    if r != 0.0:
                        for c in range(n):
                            out[i, a, c] += r * F[j, b, c]
            for t in range(La, L):
                for c in range(n):
                    out[i, t, c] += wij * F[j, t, c]


@numba.njit(cache=True, nogil=True)
def _finish_frames(new: np.ndarray, F: np.ndarray, La: int, eps: float) -> None:  # pragma: no cover - jit
    """In place, per point i: the first ``La`` rows of new[i] become the nearest row-orthonormal frame, the polar
    factor (H Hᵀ)^{-1/2} H = U Vᵀ of H = new[i, :La] (closed form for La ≤ 2, the usual case: for the 2×2 Gram
    matrix G, G^{-1/2} = adj(G + √det G · I) / (√det G · √(tr G + 2√det G)); LAPACK otherwise and whenever H is
    nearly rank-deficient); the later rows are scaled to unit length. A (numerically) zero block keeps F[i]'s."""
    m, L, n = new.shape
    for i in range(m):
        sq = 0.0
        for a in range(La):
            for c in range(n):
                sq += new[i, a, c] * new[i, a, c]
        if np.sqrt(sq) <= eps:
            new[i, :La, :] = F[i, :La, :]
        elif La == 1:
            new[i, 0, :] /= np.sqrt(sq)
        else:
            done = False
            if La == 2:
                g00 = 0.0
                g01 = 0.0
                g11 = 0.0
                for c in range(n):
                    g00 += new[i, 0, c] * new[i, 0, c]
                    g01 += new[i, 0, c] * new[i, 1, c]
                    g11 += new[i, 1, c] * new[i, 1, c]
                det = g00 * g11 - g01 * g01
                if det > 1e-12 * (g00 + g11) * (g00 + g11):
                    r = np.sqrt(det)
                    scale = 1.0 / (r * np.sqrt(g00 + g11 + 2.0 * r))
                    s00, s01, s11 = (g11 + r) * scale, -g01 * scale, (g00 + r) * scale
                    for c in range(n):
                        h0, h1 = new[i, 0, c], new[i, 1, c]
                        new[i, 0, c] = s00 * h0 + s01 * h1
                        new[i, 1, c] = s01 * h0 + s11 * h1
                    done = True
            if not done:
                U, _, Vh = np.linalg.svd(np.ascontiguousarray(new[i, :La, :]), full_matrices=False)
                new[i, :La, :] = U @ Vh
        for t in range(La, L):
            sq = 0.0
            for c in range(n):
                sq += new[i, t, c] * new[i, t, c]
            if np.sqrt(sq) > eps:
                new[i, t, :] /= np.sqrt(sq)
            else:
                new[i, t, :] = F[i, t, :]


def smooth_frames(
    frames: np.ndarray,
    knn_indices: np.ndarray,
    P: sp.spmatrix | None,
    n_iter: int,
    *,
    weighting: str = "uniform",
    n_aligned: int | None = None,
    stop: Callable[[np.ndarray], bool] | None = None,
    overwrite: bool = False,
) -> np.ndarray:
    """Graph smoothing of the local frames (not in the paper; the authors' package, its ``vh_smoothed``).

    One iteration (all points at once, from the previous iteration's frames F): for every point i and every entry j
    of its kNN list **including i itself** (column 0), the first ``n_aligned`` rows of F_j are rotated onto F_i by
    the orthogonal Procrustes solution of featMAP Eq. 4, O_ij = U Vᵀ with F_i F_jᵀ = U Σ Vᵀ; the rotated frames
    are averaged with weights w_ij, and the average is projected back to the nearest row-orthonormal frame (U Vᵀ of
    its thin SVD). Rows beyond ``n_aligned`` are averaged without rotation and rescaled to unit length, as in the
    authors' code. With the defaults (``weighting="uniform"``: w_ij = 1/k over the k list entries; ``n_aligned`` =
    2 on a frame stack whose later rows are the remaining singular vectors) this is featuremap 0.0.5's
    ``graph_convolution`` with ``align_top_k = 2`` for a fixed number of iterations.

    Differences from the authors' code, and why:

    * the number of iterations is given (the authors stop when the feature importance changes by less than 1 % in
      two consecutive iterations, or run up to ~2·log2 m): a fixed count keeps the result a plain function of the
      inputs; the caller can pass any stopping rule as ``stop``;
    * ``weighting="fuzzy"`` (ours) weights neighbour j by P_ij and the point itself by 1, its membership in its
      own local fuzzy set (UMAP stores it as 0 only to keep self-loops out of the layout), so that weak edges count
      less; the authors average uniformly over the kNN list and do not use P;
    * ``n_aligned=None`` aligns all rows jointly (a Procrustes rotation of the whole stack);
    * a point whose averaged frame is (numerically) zero keeps its previous frame (the authors leave a zero frame);
    * float64 throughout (the authors store float32).

    Complexity per iteration: O(m·k·(L_a²·n + L_a³) + m·k·L·n) time with L = n_frames, L_a = n_aligned (two
    sequential compiled passes: the rotated sums over the kNN lists, then the per-point projections); memory
    O(m·L·n), one more frame stack.

    Parameters
    ----------
    frames : (m, L, n) row-orthonormal frames (signs need not be aligned: the rotation absorbs them).
    knn_indices : (m, k), column 0 = the point itself.
    P : (m, m) fuzzy graph; read only for ``weighting="fuzzy"`` (may be None otherwise).
    n_iter : number of iterations, ≥ 0 (0 returns a copy, or ``frames`` itself with ``overwrite``).
    weighting : ``"uniform"`` or ``"fuzzy"`` (:data:`SMOOTH_WEIGHTINGS`).
    n_aligned : number of leading rows aligned by rotation, 1 ≤ n_aligned ≤ L; None = L.
    stop : called with the frames after every iteration; smoothing ends early when it returns True (a stopping rule
        such as the authors'; ``n_iter`` is then an upper bound).
    overwrite : use ``frames`` (a C-contiguous float64 array) as the first of the two work stacks instead of a copy
        (scipy's ``overwrite_a``): its content is destroyed, and one (m, L, n) stack less is held.

    Returns
    -------
    (m, L, n) float64 smoothed frames; the first ``n_aligned`` rows of each are orthonormal, the rest unit length.
    """
    F = _check_frames(frames)
    if not (overwrite and F is frames and F.flags.c_contiguous and F.flags.writeable):
        F = F.copy()
    m, L, n = F.shape
    knn = _check_knn(knn_indices, m)
    k = knn.shape[1]
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
        raise UserError(f"n_iter must be a non-negative integer, got {n_iter!r}")
    if weighting not in SMOOTH_WEIGHTINGS:
        raise UserError(f"weighting must be one of {', '.join(SMOOTH_WEIGHTINGS)}, got {weighting!r}")
    La = L if n_aligned is None else n_aligned
    if isinstance(La, bool) or not isinstance(La, (int, np.integer)) or not 1 <= La <= L:
        raise UserError(f"n_aligned must be None or an integer in [1, {L}], got {n_aligned!r}")
    La = int(La)
    if weighting == "fuzzy":
        if P is None:
            raise UserError("P is required for weighting='fuzzy'")
        w = np.ones((m, k), dtype=np.float64)
        w[:, 1:] = _neighbour_weights(_check_P(P, m), knn)
    else:
        w = np.ones((m, k), dtype=np.float64)
    w /= w.sum(axis=1, keepdims=True)
    new = np.empty_like(F)
    for _ in range(int(n_iter)):
        _aligned_sums(F, knn, w, La, new)
        _finish_frames(new, F, La, 1e-12)
        F, new = new, F
        if stop is not None and stop(F):
            break
    return F


def principal_angle_cosine(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Mean cosine of the principal angles between the row spaces of A and B, batched over leading axes.

    For row-orthonormal A (…, d, n) and B (…, d', n), the cosines are the singular values of A Bᵀ, so the result is
    (Σ_l σ_l(A Bᵀ)) / min(d, d') = max over orthogonal O of tr(A O Bᵀ)/d for d = d': the Procrustes-aligned form
    of the consistence degree cos Θ_ij of featMAP Eq. 6 (Eq. 4's rotation O_ij applied first), which is invariant
    to sign flips and rotations inside either subspace. Values in [0, 1]; 1 iff the subspaces coincide (d = d').
    The leading axes broadcast.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-1]:
        raise UserError(f"A and B must be (..., d, n) frames with the same n, got shapes {A.shape} and {B.shape}")
    s = np.linalg.svd(A @ np.swapaxes(B, -1, -2), compute_uv=False)
    return np.clip(s, 0.0, 1.0).mean(axis=-1)


# --------------------------------------------------------------------------------------------------------------------
# interpretation outputs (Definition 3.1, Fig. 1)


def _check_components(components: np.ndarray | None, p: int) -> np.ndarray | None:
    if components is None:
        return None
    C = check_matrix(components, "components")
    if C.shape[0] != p:
        raise UserError(f"components must have shape ({p}, n) to match frames of dimension {p}, got {C.shape}")
    return C


def feature_importance(
    frames: np.ndarray,
    components: np.ndarray | None = None,
    d: int | np.ndarray | None = None,
    *,
    block_size: int | None = None,
) -> np.ndarray:
    """Feature importance of featMAP Definition 3.1 / Eq. 3: ‖f^i_h‖ = (Σ_{l≤d} (v_il^{f_h})²)^{1/2}.

    The ℓ2 norm of column h of the top-d rows of V_iᵀ: the leverage of feature h in the local tangent space. Frames
    computed in a reduced space (p dimensions, :func:`reduce_features`) are first mapped back to the n source
    features through ``components`` (p × n, V_i^{orig} = V_i · components); the norms in the reduced space would
    not be feature importances.

    Parameters
    ----------
    frames : (m, L, p) row-orthonormal frames.
    components : (p, n) or None (frames already in feature space).
    d : number of leading rows: None (all L), an int in [1, L], or an (m,) integer array (per point, e.g. from
        :func:`intrinsic_dimension`, clipped to L).
    block_size : points per block; extra memory O(block·L·n).

    Returns
    -------
    (m, n) float64, non-negative.
    """
    F = _check_frames(frames)
    m, L, p = F.shape
    C = _check_components(components, p)
    n = p if C is None else C.shape[1]
    if d is None:
        dd = np.full(m, L, dtype=np.int64)
    elif np.ndim(d) == 0:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= L:
            raise UserError(f"d must be an integer in [1, {L}], an (m,) integer array or None, got {d!r}")
        dd = np.full(m, int(d), dtype=np.int64)
    else:
        dd = np.asarray(d)
        if dd.shape != (m,) or not np.issubdtype(dd.dtype, np.integer) or dd.min() < 1:
            raise UserError(f"d as an array must be ({m},) integers >= 1, got shape {dd.shape}, dtype {dd.dtype}")
        dd = np.minimum(dd.astype(np.int64), L)
    B = _check_block(block_size, L * n)
    out = np.empty((m, n), dtype=np.float64)
    rows = np.arange(L)
    for start in range(0, m, B):
        stop = min(m, start + B)
        V = F[start:stop]
        if C is not None:
            V = V @ C
        keep = (rows[None, :] < dd[start:stop, None]).astype(np.float64)  # (b, L)
        out[start:stop] = np.sqrt(np.einsum("bl,bln->bn", keep, V * V))
    return out


def feature_loadings(
    frames: np.ndarray,
    frame_embedding: np.ndarray,
    components: np.ndarray | None = None,
) -> np.ndarray:
    """Loading arrows of featMAP Fig. 1: a_h = Σ_{l=1}^{2} v_il^{f_h} v^e_il, drawn at y_i.

    ℓ_h = (v_i1^{f_h}, v_i2^{f_h}) are the loadings of feature h on the top-2 local directions (mapped back through
    ``components`` first when the frames live in a reduced space), and V^e_i (rows v^e_i1, v^e_i2) is the embedded
    2×2 frame; a_h = V^eᵀ_i ℓ_h. For an orthonormal V^e_i, ‖a_h‖ = ‖ℓ_h‖ = the feature importance with d = 2.
    (The authors' package multiplies V^e_i ℓ_h instead, the same arrows mirrored when V^e_i is not symmetric.)

    Parameters
    ----------
    frames : (m, L ≥ 2, p); the first two rows are used.
    frame_embedding : (m, 2, 2), rows v^e_i1, v^e_i2.
    components : (p, n) or None.

    Returns
    -------
    (m, n, 2) float64.
    """
    F = _check_frames(frames)
    m, L, p = F.shape
    if L < 2:
        raise UserError(f"frames must have at least 2 rows per point for the loading arrows, got {L}")
    E = np.asarray(frame_embedding, dtype=np.float64)
    if E.shape != (m, 2, 2) or not np.all(np.isfinite(E)):
        raise UserError(f"frame_embedding must be a finite ({m}, 2, 2) array, got shape {E.shape}")
    C = _check_components(components, p)
    V = F[:, :2]
    if C is not None:
        V = V @ C
    return np.einsum("ilh,ile->ihe", V, E)


#: :func:`reduce_features` uses the Gram matrix (at most this many rows and columns, 128 MiB) below this size.
GRAM_MAX = 4096


def reduce_features(
    X: np.ndarray, n_components: int = 100, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray | None]:
    """Optional preprocessing: uncentred truncated SVD X ≈ U S Vt to ``n_components`` when n > n_components.

    The paper states no preprocessing; the authors' code reduces to 100 components this way before the graph and the
    local SVD. Local offsets x_j − x_i are unchanged by centring, so the uncentred SVD is fine, and frames computed
    in the reduced space map back to the features through ``Vt`` (:func:`feature_importance`). Computed from the
    eigenvectors of the smaller Gram matrix (XᵀX or XXᵀ) when min(m, n) ≤ :data:`GRAM_MAX`, else by ARPACK
    (:func:`scipy.sparse.linalg.svds`, start vector from ``random_state``); when n_components ≥ min(m, n) − 1,
    where ARPACK cannot be used, by a full LAPACK SVD keeping min(n_components, m, n) components. Components are
    sorted by decreasing singular value and each row of Vt is signed so its entry of largest magnitude is positive.

    Returns
    -------
    (X Vtᵀ, Vt) with Vt of shape (p, n) and orthonormal rows, or (X, None) when n ≤ n_components.
    """
    X = check_matrix(X, "X", contiguous=True)
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
        raise UserError(f"n_components must be a positive integer, got {n_components!r}")
    m, n = X.shape
    p = int(n_components)
    if n <= p:
        return X, None
    if p < min(m, n) - 1 and min(m, n) <= GRAM_MAX:
        # the smaller Gram matrix and its eigenvectors: at 70,000 × 784 ≈ 1 s against ARPACK's 14 s; squaring the
        # singular values costs precision only far below the kept components' scale
        if n <= m:
            w, V = np.linalg.eigh(X.T @ X)
            Vt = V[:, ::-1][:, :p].T
        else:
            w, U = np.linalg.eigh(X @ X.T)
            top = U[:, ::-1][:, :p]
            Vt = (top.T @ X) / np.sqrt(np.maximum(w[::-1][:p], np.finfo(float).tiny))[:, None]
            Vt /= np.linalg.norm(Vt, axis=1, keepdims=True)
    elif p < min(m, n) - 1:
        from scipy.sparse.linalg import svds

        v0 = np.random.default_rng(int(random_state)).uniform(-1.0, 1.0, size=min(m, n))
        _, S, Vt = svds(X, k=p, v0=v0, solver="arpack")
        Vt = Vt[np.argsort(-S, kind="stable")]
    else:
        _, _, Vt = np.linalg.svd(X, full_matrices=False)
        Vt = Vt[: min(p, Vt.shape[0])]
    Vt = np.ascontiguousarray(_flip_rows(Vt))
    return X @ Vt.T, Vt
