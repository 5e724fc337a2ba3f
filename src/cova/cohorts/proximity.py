"""Cohort proximity (c x c), the input to prototype generation: COVA Eqs. 4–6 (Sec. 3.1.2).

Every function returns a dense c x c float64 array (c is small). Graph-based proximities use only sparse products
YᵀWY with the sparse l x c indicator Y, and the sample-pair distances of Eq. 4 are accumulated over row blocks
(O(block_size * l) memory), so no l x l dense array is allocated.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.spatial.distance import cdist

from ..affinity.graphs import knn_graph
from ..checks import check_square
from ..errors import UserError
from .labels import _check_labels, _check_W, _check_X, _cohort_means, _cohort_sizes, label_matrix

__all__ = [
    "centre_distances",
    "pair_distances",
    "centroid_cosine",
    "check_given_matrix",
    "gaussian_similarity",
    "graph_similarity",
    "citation_similarity",
    "cluster_graph",
    "cohort_proximity",
    "PROXIMITY_KINDS",
]

PROXIMITY_KINDS: tuple[str, ...] = ("centres", "centres_gaussian", "graph", "pairs", "centroid_cosine", "given",
                                    "citation", "cluster_graph")
MATRIX_KINDS: tuple[str, ...] = ("distance", "similarity")

# default budget for the blocked Eq. 4 computation: block_size * l <= this many float64 entries (32 MiB)
_PAIR_BLOCK_ENTRIES = 1 << 22


_check_square = check_square


def centre_distances(X: ArrayLike, labels: ArrayLike, n_cohorts: int | None = None) -> np.ndarray:
    """Eq. 5: d_ij = ||mu_i - mu_j||_2, the Euclidean distance between cohort means (c x c, zero diagonal).

    Every cohort must be non-empty (an empty cohort has no centre).
    """
    y, c = _check_labels(labels, n_cohorts)
    X = _check_X(X, y.shape[0])
    mu = _cohort_means(X, y, c)
    D = cdist(mu, mu)
    np.fill_diagonal(D, 0.0)
    return D


def pair_distances(
    X: ArrayLike, labels: ArrayLike, n_cohorts: int | None = None, *, block_size: int | None = None
) -> np.ndarray:
    """Eq. 4: d_ij = (1/(n_i n_j)) sum_{y_s = i, y_t = j} ||x_s - x_t||_2, the mean sample-pair distance (c x c).

    For i = j the mean is over the n_i (n_i - 1) ordered pairs of *distinct* samples (0 for a singleton cohort), so
    the zero self-distances do not pull the diagonal down. Every cohort must be non-empty.

    Computed over blocks of ``block_size`` rows: each block's (block_size, l) distance matrix is summed per cohort
    with the sparse indicator, so memory is O(block_size * l + c²) (never l x l). ``block_size=None`` picks
    max(1, 2**22 // l) rows (a 32 MiB block). The result is symmetrised (it is symmetric up to round-off).
    """
    y, c = _check_labels(labels, n_cohorts)
    X = _check_X(X, y.shape[0])
    l = y.shape[0]
    n = _cohort_sizes(y, c)
    if np.any(n == 0):
        empty = np.flatnonzero(n == 0).tolist()
        raise UserError(f"Eq. 4 pair distances are undefined for empty cohorts {empty} (check labels / n_cohorts)")
    if block_size is None:
        b = max(1, _PAIR_BLOCK_ENTRIES // l)
    else:
        if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
            raise UserError(f"block_size must be a positive int or None, got {block_size!r}")
        b = int(block_size)
    Y = label_matrix(y, c)  # (l, c) sparse
    T = np.zeros((c, c), dtype=np.float64)
    for start in range(0, l, b):
        stop = min(start + b, l)
        B = cdist(X[start:stop], X)  # (b, l)
        per_cohort = np.asarray(Y.T @ B.T).T  # (b, c): row sums of B over each cohort's columns
        T += np.asarray(Y[start:stop].T @ per_cohort)  # (c, c)
    T = 0.5 * (T + T.T)
    nn = np.outer(n, n).astype(np.float64)
    np.fill_diagonal(nn, n * (n - 1.0))
    D = np.zeros((c, c), dtype=np.float64)
    np.divide(T, nn, out=D, where=nn > 0)
    return D


def centroid_cosine(X: ArrayLike, labels: ArrayLike, n_cohorts: int | None = None) -> np.ndarray:
    """Cosine similarity between cohort means, s_ij = max(0, mu_i·mu_j / (||mu_i|| ||mu_j||)) (COVA H.4).

    A similarity. Negative cosines (possible for centred or signed features; not for the raw non-negative word
    counts of H.4) are clipped to 0 so the result is a valid non-negative affinity for t-SNE / SNE / Laplacian
    eigenmaps (our clipping; the paper does not say). The diagonal is 1 (consumers zero it). Every cohort must be
    non-empty and no cohort mean may be the zero vector (its cosine is undefined).
    """
    y, c = _check_labels(labels, n_cohorts)
    X = _check_X(X, y.shape[0])
    mu = _cohort_means(X, y, c)
    norms = np.linalg.norm(mu, axis=1)
    if np.any(norms == 0):
        zero = np.flatnonzero(norms == 0).tolist()
        raise UserError(f"cosine similarity is undefined for cohorts {zero} whose mean is the zero vector")
    U = mu / norms[:, None]
    S = np.clip(U @ U.T, 0.0, 1.0)
    S = 0.5 * (S + S.T)
    np.fill_diagonal(S, 1.0)
    return S


def check_given_matrix(matrix: ArrayLike | None, c: int, matrix_kind: str = "distance") -> np.ndarray:
    """Validate an external c x c cohort proximity (proximity kind ``"given"``) and return it as float64.

    Checks: ``matrix_kind`` in {"distance", "similarity"}; shape (c, c); all finite; symmetric within
    1e-12 * max(1, max|M|); non-negative. Returns the exactly symmetrised matrix 0.5 (M + Mᵀ).
    """
    if matrix_kind not in MATRIX_KINDS:
        raise UserError(f"matrix_kind must be one of {list(MATRIX_KINDS)}, got {matrix_kind!r}")
    if matrix is None:
        raise UserError("matrix is required for proximity kind='given' (got None)")
    try:
        M = np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise UserError(f"matrix must be a numeric (c, c) array: {exc}") from exc
    if M.shape != (c, c):
        raise UserError(f"matrix must have shape ({c}, {c}), one row and column per cohort, got {M.shape}")
    if not np.all(np.isfinite(M)):
        raise UserError("matrix contains NaN or infinite values")
    tol = 1e-12 * max(1.0, float(np.abs(M).max()))
    asym = float(np.abs(M - M.T).max())
    if asym > tol:
        raise UserError(f"matrix must be symmetric (max |M - Mᵀ| = {asym:.3g} > {tol:.3g})")
    if M.min() < 0:
        raise UserError(f"matrix must be non-negative (minimum entry {float(M.min()):.3g})")
    return 0.5 * (M + M.T)


def gaussian_similarity(D: ArrayLike, sigma: float | None = None) -> np.ndarray:
    """Gaussian similarity S = exp(-D² / (2 sigma²)) of a distance matrix, with zero diagonal.

    ``sigma`` defaults to the median of the off-diagonal entries of D (our choice; the paper gives no σ). Used for the
    Cylinder2 prototypes ("Gaussian similarity matrix computed between the cohort centers") and to turn a distance
    into a t-SNE affinity. A 1 x 1 input returns [[0.]].
    """
    D = _check_square(D, "D")
    c = D.shape[0]
    if D.min() < 0:
        raise UserError("D must be a non-negative distance matrix")
    if c == 1:
        return np.zeros((1, 1))
    if sigma is None:
        off = D[~np.eye(c, dtype=bool)]
        sig = float(np.median(off))
        if not sig > 0:
            raise UserError("sigma=None uses the median off-diagonal distance, which is 0 here; pass sigma > 0")
    else:
        sig = float(sigma)
        if not (np.isfinite(sig) and sig > 0):
            raise UserError(f"sigma must be a positive finite number or None, got {sigma!r}")
    S = np.exp(-(D * D) / (2.0 * sig * sig))
    np.fill_diagonal(S, 0.0)
    return S


def graph_similarity(W: ArrayLike | sp.spmatrix, labels: ArrayLike, n_cohorts: int | None = None) -> np.ndarray:
    """Eq. 6: S_D = (YᵀWY) ⊘ (n nᵀ), i.e. s_ij = (1/(n_i n_j)) sum_{y_s = i, y_t = j} w_st.

    Although Eq. 6 writes "d_ij <-", this is an average *weight*, i.e. a similarity (docs/algorithms.md). The diagonal (average
    within-cohort weight) is kept as Eq. 6 defines it; consumers such as t-SNE zero it. Entries involving an empty
    cohort (only with an explicit ``n_cohorts``) are 0. Computed with sparse products only: O(nnz(W)) time, O(l + c²)
    extra memory.
    """
    y, c = _check_labels(labels, n_cohorts)
    Ws = _check_W(W, y.shape[0])
    Y = label_matrix(y, c)
    YWY = np.asarray((Y.T @ (Ws @ Y)).todense(), dtype=np.float64)  # (c, c)
    n = _cohort_sizes(y, c)
    nn = np.outer(n, n)
    S = np.zeros((c, c), dtype=np.float64)
    np.divide(YWY, nn, out=S, where=nn > 0)
    return S


def citation_similarity(theta: ArrayLike | sp.spmatrix, labels: ArrayLike, n_cohorts: int | None = None) -> np.ndarray:
    """Citation similarity of Cora's Fig. 9: s_ij = 0.5/(n_i + n_j) · Σ_{y_p=i} Σ_{y_q=j} (θ_pq + θ_qp).

    ``theta`` is the (l, l) directed citation matrix (θ[citing, cited] = 1). The normaliser is **n_i + n_j**, as
    printed (not n_i n_j); we follow it exactly. The result is symmetric and non-negative; its diagonal (the
    within-cohort citation density) is kept, consumers zero it.
    """
    y, c = _check_labels(labels, n_cohorts)
    T = sp.csr_matrix(theta, dtype=np.float64)
    if T.shape != (y.shape[0], y.shape[0]):
        raise UserError(f"the citation matrix must be ({y.shape[0]}, {y.shape[0]}), got {T.shape}")
    Y = label_matrix(y, c)
    C = np.asarray((Y.T @ (T + T.T) @ Y).todense(), dtype=np.float64)
    n = _cohort_sizes(y, c).astype(np.float64)
    return 0.5 * C / (n[:, None] + n[None, :])


def cluster_graph(X: ArrayLike, labels: ArrayLike, n_cohorts: int | None = None, n_neighbors: int = 2) -> np.ndarray:
    """Binary cohort graph of Cora's 20 clusters (H.3): A_ij = 1 iff j is among the ``n_neighbors`` most
    cosine-similar cohort centres of i, or i among those of j. A similarity with zero diagonal (ties: lower index)."""
    S = centroid_cosine(X, labels, n_cohorts)
    c = S.shape[0]
    if not 1 <= n_neighbors < c:
        raise UserError(f"cluster_graph needs 1 <= n_neighbors < c = {c}, got {n_neighbors}")
    return knn_graph(S, n_neighbors, kind="similarity").astype(np.float64)


def cohort_proximity(
    kind: Literal["centres", "centres_gaussian", "graph", "pairs", "centroid_cosine", "given"],
    *,
    X: ArrayLike | None = None,
    W: ArrayLike | sp.spmatrix | None = None,
    labels: ArrayLike,
    n_cohorts: int | None = None,
    matrix: ArrayLike | None = None,
    matrix_kind: Literal["distance", "similarity"] = "distance",
    relations: ArrayLike | sp.spmatrix | None = None,
    graph_neighbors: int = 2,
) -> tuple[np.ndarray, str]:
    """Dispatcher returning ``(matrix, "distance" | "similarity")``.

    kind
        ``"centres"``: Eq. 5 centre distances (a distance; needs X);
        ``"centres_gaussian"``: Eq. 5 followed by :func:`gaussian_similarity` with the median sigma (a similarity;
        needs X; used for the Cylinder2 prototypes);
        ``"graph"``: Eq. 6 graph similarity (a similarity; needs W);
        ``"pairs"``: Eq. 4 mean sample-pair distances, :func:`pair_distances` (a distance; needs X);
        ``"centroid_cosine"``: :func:`centroid_cosine`, cosine between cohort means clipped at 0 (a similarity;
        needs X);
        ``"given"``: the external c x c ``matrix`` validated by :func:`check_given_matrix`, of type
        ``matrix_kind`` ("distance" or "similarity");
        ``"citation"``: :func:`citation_similarity` of the dataset's ``relations`` (a similarity);
        ``"cluster_graph"``: :func:`cluster_graph` with ``graph_neighbors`` (a binary similarity; needs X).

    ``matrix`` is only accepted with ``kind="given"``.
    """
    if kind not in PROXIMITY_KINDS:
        raise UserError(f"proximity kind must be one of {list(PROXIMITY_KINDS)}, got {kind!r}")
    if kind == "given":
        _, c = _check_labels(labels, n_cohorts)
        return check_given_matrix(matrix, c, matrix_kind), str(matrix_kind)
    if matrix is not None:
        raise UserError(f"matrix is only used with proximity kind='given', got kind={kind!r}")
    if kind == "citation":
        if relations is None:
            raise UserError("proximity kind='citation' needs a dataset with a relation matrix (e.g. Cora's citations)")
        return citation_similarity(relations, labels, n_cohorts), "similarity"
    if kind == "cluster_graph":
        if X is None:
            raise UserError("X is required for proximity kind='cluster_graph' (got None)")
        return cluster_graph(X, labels, n_cohorts, graph_neighbors), "similarity"
    if kind in ("centres", "centres_gaussian", "pairs", "centroid_cosine"):
        if X is None:
            raise UserError(f"X is required for proximity kind={kind!r} (got None)")
        if kind == "pairs":
            return pair_distances(X, labels, n_cohorts), "distance"
        if kind == "centroid_cosine":
            return centroid_cosine(X, labels, n_cohorts), "similarity"
        D = centre_distances(X, labels, n_cohorts)
        if kind == "centres":
            return D, "distance"
        return gaussian_similarity(D), "similarity"
    if W is None:
        raise UserError("W is required for proximity kind='graph' (got None)")
    return graph_similarity(W, labels, n_cohorts), "similarity"
