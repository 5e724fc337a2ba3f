"""Local weight matrices W (COVA Sec. 3.1.1, Eqs. 1–3, App. C) as sparse CSR matrices.

Every W returned here is a :class:`scipy.sparse.csr_matrix` of float64 with

* zero diagonal, exactly symmetric (w_ij and w_ji are the same float), non-negative entries,
* unit total sum Σ_ij w_ij = 1 (the paper's normaliser Σ_{s=1}^l Σ_{t=1}^c w_st in Sec. 3.1.3 is read as the typo
  for Σ_{s,t=1}^l; docs/algorithms.md),
* sorted column indices, no duplicates and no explicitly stored zeros.

Memory is O(l·k) throughout: neighbours come from :func:`cova.affinity.knn.nearest_neighbors`, and the
one global quantity, the maximum pairwise distance of App. H.1's W, is found by a tiled scan whose memory does not grow
with l. No l×l dense array is ever formed, and there is no Python loop over samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from cova.affinity.knn import METHODS, _check_X, nearest_neighbors, pair_sq_distances
from cova.affinity.perplexity import conditional_probabilities
from cova.constraints import POSITIVE, POSITIVE_INT, Declaration, Kinds, StrOptions, declare, real
from cova.errors import UserError

__all__ = [
    "KINDS",
    "build_weights",
    "cosine_knn",
    "cosine_knn_similarity",
    "euclidean_max",
    "gaussian_perplexity",
    "laplacian",
    "max_pairwise_distance",
    "supervised_shrink",
    "symmetrize_normalize",
]


# ----------------------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------------------
def _as_csr(W: Any) -> sp.csr_matrix:
    """A float64 CSR copy of a sparse or dense square matrix."""
    W = sp.csr_matrix(W, dtype=np.float64, copy=True)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise UserError(f"W must be a square matrix, got shape {W.shape}")
    W.sum_duplicates()
    return W


def _finalize(W: sp.csr_matrix) -> sp.csr_matrix:
    """Canonical CSR: duplicates summed, indices sorted, explicit zeros removed."""
    W = sp.csr_matrix(W, dtype=np.float64)
    W.sum_duplicates()
    W.eliminate_zeros()
    W.sort_indices()
    return W


def _knn_matrix(indices: np.ndarray, values: np.ndarray, l: int) -> sp.csr_matrix:
    """Directed kNN matrix A with A[i, indices[i, t]] = values[i, t] (no duplicate columns per row)."""
    k = indices.shape[1]
    A = sp.csr_matrix(
        (np.ascontiguousarray(values, dtype=np.float64).ravel(), indices.ravel(), np.arange(0, l * k + 1, k)),
        shape=(l, l),
    )
    A.sort_indices()
    return A


def _or_mask(A: sp.csr_matrix) -> sp.csr_matrix:
    """S ∘ N(S, h) from the directed kNN matrix A (A_ij = S_ij ≥ 0 for j in the h-NN list of i, else 0).

    N(S, h) is the OR of the h-NN lists with their transpose (COVA App. C), and S is symmetric, so the entry (i, j)
    equals S_ij whenever either list contains the pair: elementwise max(A, Aᵀ) (valid because S ≥ 0).
    """
    return A.maximum(A.T).tocsr()


# ----------------------------------------------------------------------------------------------------------------
# generic operations
# ----------------------------------------------------------------------------------------------------------------
def symmetrize_normalize(W: Any) -> sp.csr_matrix:
    """The common last step of every W (COVA Sec. 3.1.1): zero the diagonal, W ← ½(W + Wᵀ), divide by Σ_ij w_ij.

    Accepts any sparse matrix or a dense array (converted to CSR). Raises ``ValueError`` for negative or non-finite
    weights, or when the off-diagonal total weight is 0 (e.g. all points identical under
    :func:`euclidean_max`).
    For an exactly symmetric input the symmetrisation is a bitwise no-op ((a + a)/2 = a in floating point).
    """
    W = _as_csr(W)
    if W.nnz and (not np.all(np.isfinite(W.data)) or np.any(W.data < 0)):
        raise UserError("W must have finite, non-negative entries")
    coo = W.tocoo()
    off = coo.row != coo.col
    W = sp.csr_matrix((coo.data[off], (coo.row[off], coo.col[off])), shape=W.shape)
    W = ((W + W.T) * 0.5).tocsr()
    W = _finalize(W)
    total = W.data.sum()
    if not total > 0:
        raise UserError("W has zero total off-diagonal weight; cannot normalise to unit sum")
    W.data /= total
    return W


def supervised_shrink(W: Any, labels: np.ndarray, lam: float) -> sp.csr_matrix:
    """COVA Eq. 3: W ← W∘(YYᵀ) + λ·W∘(1 − YYᵀ), then renormalise to unit sum.

    I.e. every inter-cohort weight (labels[i] ≠ labels[j]) is multiplied by λ, intra-cohort weights are kept, and
    the result goes through :func:`symmetrize_normalize`. ``lam`` must be finite and ≥ 0 (the paper intends
    0 < λ < 1; λ = 0 removes all inter-cohort edges, λ = 1 leaves W unchanged up to renormalisation).
    """
    W = _as_csr(W)
    labels = np.asarray(labels).ravel()
    if labels.shape[0] != W.shape[0]:
        raise UserError(f"labels has {labels.shape[0]} entries but W is {W.shape[0]}×{W.shape[1]}")
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise UserError(f"shrink factor lam must be finite and ≥ 0, got {lam}")
    coo = W.tocoo()
    data = np.where(labels[coo.row] != labels[coo.col], lam * coo.data, coo.data)
    return symmetrize_normalize(sp.csr_matrix((data, (coo.row, coo.col)), shape=W.shape))


def laplacian(W: Any) -> sp.csr_matrix:
    """Graph Laplacian 𝐋(W) = 𝐃(W) − W with 𝐃(W) = diag(row sums of W) (paper Sec. 3.1, Eq. 1: O_dist^(L) =
    tr(Zᵀ 𝐋(W) Z) for symmetric W). Sparse CSR with sorted indices; zeros from cancellation are removed."""
    W = _as_csr(W)
    deg = np.asarray(W.sum(axis=1)).ravel()
    L = (sp.diags(deg, format="csr") - W).tocsr()
    return _finalize(L)


# ----------------------------------------------------------------------------------------------------------------
# the exact global maximum pairwise distance (App. H.1's S), by a tiled scan
# ----------------------------------------------------------------------------------------------------------------
def max_pairwise_distance(X: np.ndarray, block_size: int = 2048) -> float:
    """Exact max_{i,j} ‖x_i − x_j‖, by a tiled O(l²d) scan in O(block_size²) memory (independent of l).

    Each (block_size × block_size) upper-triangular tile of squared distances is computed with BLAS through
    ‖a‖² + ‖b‖² − 2a·b on centred data. That expansion has a rounding error of at most
    τ = 16·(d + 5)·ε·max_i‖x_i − x̄‖² (a generous form of the standard γ_d bounds for the norms, the dot product,
    the centring and the direct formula). Every pair whose tile value lies within 2τ of the tile maximum, and
    within τ of the best exact value so far, is then recomputed by direct differences
    (:func:`cova.affinity.knn.pair_sq_distances`, the same formula the kNN distances use). The returned value is
    therefore *exactly* the largest directly-computed distance, bit-identical to the distance of that pair as
    returned by :func:`~cova.affinity.knn.nearest_neighbors`, so ``max − distance ≥ 0`` holds without rounding.
    An upper bound such as 2·max_i‖x_i − x̄‖ would not do: the global max shifts every weight of :func:`euclidean_max`.
    """
    X = _check_X(X)
    l, d = X.shape
    if l < 2:
        return 0.0
    B = int(block_size)
    if B < 1:
        raise UserError(f"block_size must be a positive integer, got {block_size!r}")
    Xc = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    tau = 16.0 * (d + 5) * np.finfo(np.float64).eps * float(sq.max())
    best = -np.inf
    tile = np.empty((min(B, l), min(B, l)), dtype=np.float64)
    for i0 in range(0, l, B):  # loops over tiles, not samples
        i1 = min(i0 + B, l)
        for j0 in range(i0, l, B):
            j1 = min(j0 + B, l)
            G = tile[: i1 - i0, : j1 - j0]
            np.matmul(Xc[i0:i1], Xc[j0:j1].T, out=G)
            G *= -2.0
            G += sq[i0:i1, None]
            G += sq[None, j0:j1]
            m = float(G.max())
            if m + tau < best:
                continue
            ci, cj = np.nonzero(G >= max(m - 2.0 * tau, best - tau))
            exact = pair_sq_distances(X, ci + i0, cj + j0)
            best = max(best, float(exact.max()))
    return float(np.sqrt(best))


# ----------------------------------------------------------------------------------------------------------------
# the three W variants
# ----------------------------------------------------------------------------------------------------------------
#: The kNN search of every weight graph (:func:`cova.affinity.knn.nearest_neighbors`): its back end and the threads
#: of pynndescent (``n_jobs``, default 1; part of pynndescent's seed, so a config that sets it gets the same W on
#: every machine; the exact search ignores it). At 10⁵–10⁶ samples the search is most of the inputs' time, so a job
#: with two cores can give it both (``config/scale.yaml``; openTSNE's affinity searches on its ``n_jobs``).
_SEARCH = {"method": [StrOptions(set(METHODS))], "n_jobs": POSITIVE_INT}


def _perplexity_below_neighbours(options: Any, context: Any) -> tuple[str, str] | None:
    k = options["n_neighbors"]
    if k is not None and not options["perplexity"] < k:
        return "perplexity", f"the perplexity must be below n_neighbors = {k} (the calibration's candidate set)"
    return None


@declare({"perplexity": POSITIVE, "n_neighbors": [*POSITIVE_INT, None], **_SEARCH},
         rules=[_perplexity_below_neighbours])
def gaussian_perplexity(
    X: np.ndarray,
    perplexity: float = 30.0,
    *,
    n_neighbors: int | None = None,
    method: str = "auto",
    random_state: int = 0,
    n_jobs: int = 1,
) -> sp.csr_matrix:
    """Perplexity-calibrated Gaussian affinities, t-SNE style ([20]; paper footnote 1, Sec. 4.3).

    P_{j|i} is calibrated over the candidate set of the ``n_neighbors`` nearest neighbours (default
    min(l − 1, ⌊3·perplexity⌋), the openTSNE/BH-SNE convention; the paper does not say) by
    :func:`cova.affinity.perplexity.conditional_probabilities`, then W = (P + Pᵀ)/(2l), whose total is 1.
    With ``n_neighbors = l − 1`` this is the dense t-SNE P exactly. The perplexity must be < n_neighbors (we raise
    rather than silently lowering it as openTSNE does).
    """
    X = _check_X(X)
    l = X.shape[0]
    perplexity = float(perplexity)
    k = min(l - 1, int(3 * perplexity)) if n_neighbors is None else int(n_neighbors)
    if not (0 < perplexity < k):
        raise UserError(
            f"need 0 < perplexity < n_neighbors; got perplexity = {perplexity}, n_neighbors = {k} (l = {l})"
        )
    ind, d2 = nearest_neighbors(X, k, metric="euclidean", method=method, random_state=random_state, n_jobs=n_jobs,
                                squared=True)
    P = conditional_probabilities(d2, perplexity)
    del d2
    A = _knn_matrix(ind, P, l)
    del ind, P
    W = (A + A.T).tocsr()  # divided in place: one O(l·k) copy fewer at the peak (≈ 2 GB at 10^6 points, k = 90)
    del A
    W.data /= 2.0 * l
    return _finalize(W)


@declare({"n_neighbors": POSITIVE_INT, **_SEARCH})
def euclidean_max(
    X: np.ndarray,
    n_neighbors: int = 50,
    *,
    method: str = "auto",
    random_state: int = 0,
    block_size: int = 2048,
    n_jobs: int = 1,
) -> sp.csr_matrix:
    """COVA App. H.1: W = S ∘ N(S, h), S = max_ij ‖x_i − x_j‖ − ‖x_i − x_j‖, then symmetrise/normalise.

    The h largest S of a row are its h nearest neighbours, so N(S, h) is the OR of the h-NN lists (diagonal 0).
    The global maximum is exact (:func:`max_pairwise_distance`). Pairs whose S is exactly 0 (the farthest pair, if
    it is inside the mask) carry no weight and are not stored.
    """
    X = _check_X(X)
    l = X.shape[0]
    ind, dist = nearest_neighbors(
        X, n_neighbors, metric="euclidean", method=method, random_state=random_state, n_jobs=n_jobs
    )
    dmax = max_pairwise_distance(X, block_size=block_size)
    S = np.maximum(dmax - dist, 0.0)
    return symmetrize_normalize(_or_mask(_knn_matrix(ind, S, l)))


@declare({"n_neighbors": POSITIVE_INT, **_SEARCH})
def cosine_knn(
    X: np.ndarray,
    n_neighbors: int = 10,
    *,
    method: str = "auto",
    random_state: int = 0,
    n_jobs: int = 1,
) -> sp.csr_matrix:
    """COVA App. C (Fig. C.1): W = S ∘ N(S, h) with S_ij = cos(x_i, x_j) (:func:`cosine_knn_similarity`), then
    symmetrised and normalised to unit sum (:func:`symmetrize_normalize`)."""
    return symmetrize_normalize(cosine_knn_similarity(X, n_neighbors, method=method, random_state=random_state,
                                                      n_jobs=n_jobs))


def cosine_knn_similarity(X: np.ndarray, n_neighbors: int = 10, *, method: str = "auto", random_state: int = 0,
                          n_jobs: int = 1) -> sp.csr_matrix:
    """S̃ = S ∘ N(S, h), S_ij = cos(x_i, x_j) (COVA App. C and H.3), unnormalised: sparse CSR, symmetric, zero
    diagonal, explicit zeros removed, O(l·h) memory.

    N(S, h) is the OR of the h-nearest lists in cosine distance (= the h largest cosines). Negative cosine
    similarities inside the mask are clipped to 0 (the paper does not say; a weight matrix must be non-negative,
    otherwise 𝐋(W) is indefinite and O_dist^(L) is no distance penalty). Rows of X must be non-zero.
    """
    X = _check_X(X)
    l = X.shape[0]
    ind, dist = nearest_neighbors(
        X, n_neighbors, metric="cosine", method=method, random_state=random_state, n_jobs=n_jobs
    )
    S = _or_mask(_knn_matrix(ind, np.maximum(1.0 - dist, 0.0), l))
    S.eliminate_zeros()
    return S


#: The weight graphs W by kind (each function declares its options) and the option every kind takes in
#: :func:`build_weights`: ``shrink`` (Eq. 3, :func:`supervised_shrink`).
KINDS = Kinds("weights kind", {
    "gaussian_perplexity": gaussian_perplexity,
    "euclidean_max": euclidean_max,
    "cosine_knn": cosine_knn,
}, common=Declaration({"shrink": [real(0.0, 1.0, closed="right"), None]}, defaults={"shrink": None}))


def build_weights(X: np.ndarray, kind: str, *, labels: np.ndarray | None = None, shrink: float | None = None,
                  **params: Any) -> sp.csr_matrix:
    """Build W of the given ``kind`` (one of :data:`KINDS`) with its keyword ``params``.

    ``shrink=λ`` (not ``None``) then applies Eq. 3 via :func:`supervised_shrink`, which needs ``labels``. Unknown
    kinds raise ``ValueError``; a kind's function checks its own parameters.
    """
    if kind not in KINDS:
        raise UserError(f"unknown W kind {kind!r}; allowed: {', '.join(KINDS)}")
    if shrink is not None and labels is None:
        raise UserError("shrink (Eq. 3) needs the cohort labels: pass labels=...")
    W = KINDS[kind](X, **params)
    if shrink is not None:
        W = supervised_shrink(W, labels, shrink)
    return W
