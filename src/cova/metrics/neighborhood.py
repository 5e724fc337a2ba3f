"""Neighbourhood primitives and the trustworthiness / continuity scores.

Everything here works in row blocks: a block of ``b`` query rows against all ``n`` reference rows, with
``b * n`` bounded (:data:`BLOCK_ENTRIES`), so memory is O(block * n) and never O(n^2).

Conventions shared by every metric of :mod:`cova.metrics` (spec section 5):

* distances are Euclidean; neighbours are ranked by squared distance, which gives the same order;
* ties are broken by the lower sample index, i.e. the order is a stable sort on ``(distance, index)``;
* a sample is never its own neighbour (a duplicate of it is an ordinary neighbour at distance 0);
* low-dimensional kNN (at most :data:`KDTREE_MAX_DIM` columns) uses a KD-tree plus an exact tie repair;
* for data with at most :data:`EXACT_MAX_DIM` columns squared distances are computed exactly as
  ``sum_j (a_j - b_j)^2`` (so duplicated points are exact ties); above that they use the BLAS expansion
  ``|a|^2 + |b|^2 - 2 a.b`` (clipped at 0), whose rounding can split exact ties.
"""

from __future__ import annotations

import numba
import numpy as np
from sklearn.neighbors import KDTree

__all__ = ["trustworthiness", "continuity", "knn_indices", "target_ranks"]

#: Upper bound on the number of entries of one distance block (``rows * n``): 2^21 float64 = 16 MB.
BLOCK_ENTRIES = 1 << 21
#: Inputs with at most this many columns get exact (difference-based) squared distances.
EXACT_MAX_DIM = 32
#: Inputs with at most this many columns use a KD-tree for k-nearest-neighbour search.
KDTREE_MAX_DIM = 8


# --------------------------------------------------------------------------------------------------------
# validation helpers (shared with cohort.py)
# --------------------------------------------------------------------------------------------------------

def _as_matrix(name: str, A: object) -> np.ndarray:
    """``A`` as a finite 2-D float64 array, or a ValueError naming ``name``."""
    arr = np.asarray(A)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (samples x features); got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty; got shape {arr.shape}")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _same_rows(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{name_b} has {b.shape[0]} rows but {name_a} has {a.shape[0]}; both must describe the same samples"
        )


def _block_rows(n_cols: int) -> int:
    """Rows per block so that one ``rows x n_cols`` block has at most :data:`BLOCK_ENTRIES` entries."""
    return max(1, min(4096, BLOCK_ENTRIES // max(1, n_cols)))


# --------------------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _sqdist_exact_kernel(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - jit
    """out[r, m] = sum_j (A[r, j] - B[m, j])^2, summed in the order j = 0, 1, ... (as sklearn's trees)."""
    b, d = A.shape
    n = B.shape[0]
    for r in range(b):
        for m in range(n):
            acc = 0.0
            for j in range(d):
                t = A[r, j] - B[m, j]
                acc += t * t
            out[r, m] = acc


@numba.njit(cache=True, nogil=True, inline="always")
def _insert_sorted(bd: np.ndarray, bi: np.ndarray, p: int, v: float, m: int) -> None:  # pragma: no cover - jit
    """Insert (v, m) into the sorted prefix bd[:p+1] from position p down; strict shifts keep equal values in
    arrival order."""
    while p > 0 and bd[p - 1] > v:
        bd[p] = bd[p - 1]
        bi[p] = bi[p - 1]
        p -= 1
    bd[p] = v
    bi[p] = m


@numba.njit(cache=True, nogil=True)
def _knn_block_kernel(D: np.ndarray, self_cols: np.ndarray, k: int) -> np.ndarray:  # pragma: no cover - jit
    """The k smallest entries of each row of D (skipping column self_cols[r]), in (value, column) order."""
    b, n = D.shape
    out = np.empty((b, k), dtype=np.int64)
    bd = np.empty(k, dtype=np.float64)
    bi = np.empty(k, dtype=np.int64)
    for r in range(b):
        s = self_cols[r]
        # columns arrive in increasing order and the shifts are strict, so among equal values the earlier
        # (lower) column stays first, and a later equal value never displaces a kept one
        cnt = 0
        m = 0
        while cnt < k:
            if m != s:
                _insert_sorted(bd, bi, cnt, D[r, m], m)
                cnt += 1
            m += 1
        for mm in range(m, n):
            if D[r, mm] < bd[k - 1] and mm != s:
                _insert_sorted(bd, bi, k - 1, D[r, mm], mm)
        for q in range(k):
            out[r, q] = bi[q]
    return out


@numba.njit(cache=True, nogil=True)
def _target_ranks_kernel(D: np.ndarray, self_cols: np.ndarray, T: np.ndarray) -> np.ndarray:  # pragma: no cover
    """1-based rank of column T[r, q] in row r of D under the (value, column) order, column self_cols[r]
    excluded: 1 + #{m != self : D[r, m] < D[r, t] or (D[r, m] == D[r, t] and m < t)}.

    One branch-free pass over the row per target (vectorises well; k passes beat one branchy pass)."""
    b, n = D.shape
    k = T.shape[1]
    out = np.empty((b, k), dtype=np.int64)
    for r in range(b):
        s = self_cols[r]
        for q in range(k):
            t = T[r, q]
            thr = D[r, t]
            c = 0
            for m in range(n):
                v = D[r, m]
                if v < thr or (v == thr and m < t):
                    c += 1
            v = D[r, s]  # the row's own column was counted above iff it precedes t; remove it
            if v < thr or (v == thr and s < t):
                c -= 1
            out[r, q] = c + 1
    return out


# --------------------------------------------------------------------------------------------------------
# distance blocks, kNN and ranks
# --------------------------------------------------------------------------------------------------------

def sqdist_block(A: np.ndarray, B: np.ndarray, B_sqnorm: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``A`` (b, d) and ``B`` (n, d) as a (b, n) array.

    Exact differences for ``d <= EXACT_MAX_DIM``; BLAS expansion ``|a|^2 + |b|^2 - 2 a.b`` clipped at 0
    otherwise (``B_sqnorm``, the squared row norms of ``B``, may be passed to avoid recomputing them).
    """
    d = A.shape[1]
    if d <= EXACT_MAX_DIM:
        out = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
        _sqdist_exact_kernel(np.ascontiguousarray(A), np.ascontiguousarray(B), out)
        return out
    if B_sqnorm is None:
        B_sqnorm = np.einsum("ij,ij->i", B, B)
    out = A @ B.T
    out *= -2.0
    out += np.einsum("ij,ij->i", A, A)[:, None]
    out += B_sqnorm[None, :]
    np.maximum(out, 0.0, out=out)
    return out


class _Blocks:
    """Row blocks of ``A`` (all rows, or ``rows``) against all of ``A``.

    Yields ``(start, stop, row_indices, squared_distance_block)`` with start/stop positions in ``rows``."""

    def __init__(self, A: np.ndarray, rows: np.ndarray | None = None):
        self.A = A
        self.rows = np.arange(A.shape[0]) if rows is None else rows
        d = A.shape[1]
        self.sq = None if d <= EXACT_MAX_DIM else np.einsum("ij,ij->i", A, A)

    def __iter__(self):
        step = _block_rows(self.A.shape[0])
        for s in range(0, self.rows.size, step):
            r = self.rows[s:s + step]
            yield s, s + r.size, r, sqdist_block(self.A[r], self.A, B_sqnorm=self.sq)


def _knn_brute(A: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    blocks = _Blocks(A, rows)
    out = np.empty((blocks.rows.size, k), dtype=np.int64)
    for s, e, r, D in blocks:
        out[s:e] = _knn_block_kernel(D, r.astype(np.int64), k)
    return out


def knn_indices(A: np.ndarray, k: int) -> np.ndarray:
    """Indices (n, k) of the ``k`` nearest other rows of ``A`` for every row, nearest first.

    Order is a stable sort on (squared Euclidean distance, index): ties go to the lower index; a row is
    never its own neighbour (a duplicate of it is an ordinary neighbour at distance 0). For
    ``A.shape[1] <= KDTREE_MAX_DIM`` a KD-tree proposes ``k + 2`` candidates per row, their distances are
    recomputed exactly and sorted on (distance, index); rows whose k-th distance ties the farthest
    candidate (so a tied point may be missing) are redone by brute force in row blocks. Otherwise brute
    force in row blocks. Memory O(n k + block).
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    n, d = A.shape
    if not 1 <= k <= n - 1:
        raise ValueError(f"k must be in [1, n - 1] = [1, {n - 1}]; got {k}")
    if d > KDTREE_MAX_DIM:
        return _knn_brute(A, k)
    kq = min(n, k + 2)  # self (usually) + k + 1 others: the last one tells whether the k-th is sure
    cand = KDTree(A).query(A, k=kq, return_distance=False)
    rd = np.zeros(cand.shape)
    for j in range(d):  # same summation order as sklearn's tree and as _sqdist_exact_kernel
        t = A[cand, j] - A[:, j, None]
        rd += t * t
    is_self = cand == np.arange(n)[:, None]
    rd_other = np.where(is_self, np.inf, rd)
    order = np.lexsort((cand, rd_other), axis=-1)
    cand = np.take_along_axis(cand, order, axis=1)[:, :k]
    kth = np.take_along_axis(rd_other, order[:, k - 1:k], axis=1)[:, 0]
    # every point outside the candidate list is at least as far as the farthest candidate
    unsure = np.flatnonzero(kth >= rd.max(axis=1)) if kq < n else np.empty(0, dtype=np.int64)
    if unsure.size:
        cand[unsure] = _knn_brute(A, k, rows=unsure)
    return cand


def target_ranks(A: np.ndarray, T: np.ndarray) -> np.ndarray:
    """1-based rank of sample ``T[i, q]`` among the other samples ordered by distance to sample ``i`` in
    ``A``-space (stable on (distance, index); the sample itself excluded). Row blocks, memory O(block n)."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    T = np.ascontiguousarray(T, dtype=np.int64)
    out = np.empty(T.shape, dtype=np.int64)
    for s, e, r, D in _Blocks(A):
        out[s:e] = _target_ranks_kernel(D, r.astype(np.int64), T[s:e])
    return out


# --------------------------------------------------------------------------------------------------------
# trustworthiness and continuity
# --------------------------------------------------------------------------------------------------------

def _check_n_neighbors(n_neighbors: int, n: int) -> int:
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)):
        raise ValueError(f"n_neighbors must be an integer; got {n_neighbors!r}")
    k = int(n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1; got {k}")
    if k >= n / 2:
        raise ValueError(f"n_neighbors ({k}) should be less than n_samples / 2 ({n / 2})")
    return k


def trustworthiness(X: np.ndarray, Z: np.ndarray, n_neighbors: int = 12) -> float:
    """Trustworthiness of embedding ``Z`` (l, k) of ``X`` (l, d) (Venna & Kaski 2001), Euclidean.

    ``T(k) = 1 - 2 / (n k (2n - 3k - 1)) * sum_i sum_{j in N_k^Z(i)} max(0, r_X(i, j) - k)``, where
    ``N_k^Z(i)`` are the k nearest neighbours of i in Z and ``r_X(i, j)`` is the 1-based rank of j among
    the neighbours of i in X. Same definition and validity range (``n_neighbors < n / 2``) as
    :func:`sklearn.manifold.trustworthiness`; identical to it whenever there are no distance ties (sklearn
    breaks ties by an unstable argsort, we by the lower index). Not part of the paper's Appendix G; a
    standard companion score. Row-blocked: memory O(block n), never n x n.
    """
    X = _as_matrix("X", X)
    Z = _as_matrix("Z", Z)
    _same_rows("X", X, "Z", Z)
    n = X.shape[0]
    k = _check_n_neighbors(n_neighbors, n)
    nbrs = knn_indices(Z, k)
    ranks = target_ranks(X, nbrs)
    t = float(np.sum(np.maximum(ranks - k, 0), dtype=np.float64))
    return float(1.0 - t * (2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))))


def continuity(X: np.ndarray, Z: np.ndarray, n_neighbors: int = 12) -> float:
    """Continuity of embedding ``Z`` of ``X``: trustworthiness with the roles swapped,
    ``trustworthiness(Z, X, n_neighbors)`` (penalises true X-neighbours that are far in Z)."""
    X = _as_matrix("X", X)
    Z = _as_matrix("Z", Z)
    _same_rows("X", X, "Z", Z)
    return trustworthiness(Z, X, n_neighbors)
