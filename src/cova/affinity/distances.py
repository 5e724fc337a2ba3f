"""Distance matrices: squared Euclidean distances by the Gram expansion (the one implementation every layer uses)
and the mean-scaled input distances of NeRV and the local MDS family.

Exact difference-based kernels (for duplicated points to be exact ties at few dimensions) are a different
algorithm and live where they are used: the blocked kernels of :mod:`cova.metrics.neighborhood`, the pair kernel
:func:`cova.affinity.knn.pair_sq_distances`, the small exact loop of :mod:`cova.cohorts.relation`."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from scipy.spatial.distance import pdist, squareform

from ..errors import UserError
from .graphs import geodesic_distances
from .knn import check_distance_scale

__all__ = ["squared_distances", "finish_gram", "dense_sq_distances", "mean_scaled_distances", "SMALL_WORK"]


def _finish_gram_py(G: np.ndarray, a_sq: np.ndarray, b_sq: np.ndarray) -> None:  # pragma: no cover - jit
    """In place: G[r, m] <- max(0, (-2 G[r, m] + a_sq[r]) + b_sq[m]), the same operations in the same order as
    the NumPy expression ``G *= -2; G += a_sq[:, None]; G += b_sq[None, :]; np.maximum(G, 0, out=G)`` (no
    fast-math, so bit-identical), one parallel pass instead of four."""
    b, n = G.shape
    for r in numba.prange(b):
        ar = a_sq[r]
        for m in range(n):
            v = G[r, m] * -2.0
            v = v + ar
            v = v + b_sq[m]
            G[r, m] = v if v > 0.0 else 0.0


#: Parallel and serial builds: on a shared, oversubscribed machine a parallel region costs about a time slice, so
#: small blocks (fewer inner operations than this) run serially (same arithmetic, same result).
SMALL_WORK = 1 << 20
_finish_gram_par = numba.njit(cache=True, nogil=True, parallel=True)(_finish_gram_py)
_finish_gram_ser = numba.njit(cache=True, nogil=True)(_finish_gram_py)


def finish_gram(G: np.ndarray, a_sq: np.ndarray, b_sq: np.ndarray) -> None:
    """Turn the Gram block ``G = A Bᵀ`` into squared distances in place: ``max(0, ‖a‖² + ‖b‖² − 2a·b)`` with the
    squared row norms ``a_sq`` of A and ``b_sq`` of B."""
    (_finish_gram_par if G.size >= SMALL_WORK else _finish_gram_ser)(G, a_sq, b_sq)


def squared_distances(A: np.ndarray, B: np.ndarray, A_sqnorm: np.ndarray | None = None,
                      B_sqnorm: np.ndarray | None = None) -> np.ndarray:
    """‖a_i − b_j‖² (m×n) by the Gram expansion ‖a‖² + ‖b‖² − 2a·b (one BLAS product), clipped at 0.

    The squared row norms ``A_sqnorm`` of ``A`` and ``B_sqnorm`` of ``B`` may be passed when a matrix is fixed
    across many calls. The expansion's rounding error (≈ d·ε·max‖x‖²) can split exact ties and leaves a tiny
    positive value for a pair of equal rows; centre the data first to keep it small."""
    if A_sqnorm is None:
        A_sqnorm = np.einsum("ij,ij->i", A, A)
    if B_sqnorm is None:
        B_sqnorm = np.einsum("ij,ij->i", B, B)
    D = A @ B.T
    finish_gram(D, np.ascontiguousarray(A_sqnorm, dtype=D.dtype), np.ascontiguousarray(B_sqnorm, dtype=D.dtype))
    return D


def dense_sq_distances(X: np.ndarray) -> np.ndarray:
    """All squared Euclidean distances (l×l, zero diagonal) of the rows of X by :func:`squared_distances` on the
    centred data.

    The expansion's rounding error (≈ d·ε·max‖x_i − x̄‖²) is irrelevant to perplexity calibration; the kNN path of
    :func:`cova.affinity.gaussian_perplexity` uses direct differences instead.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    check_distance_scale(X)
    Xc = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    D = squared_distances(Xc, Xc, sq, sq)
    np.fill_diagonal(D, 0.0)
    return D


def _input_distances(X: np.ndarray, metric: str, n_neighbors: int | None = None) -> np.ndarray:
    if metric == "geodesic":  # CDA's (cova.methods.nerv.lmds.CDA): shortest paths over the k-NN graph
        return geodesic_distances(X, int(n_neighbors or 0))
    if metric == "euclidean":
        if X.ndim != 2:
            raise UserError(f"X must be 2-D (samples x features); got shape {X.shape}")
        return squareform(pdist(X, "euclidean"))
    if metric == "precomputed":
        if X.ndim != 2 or X.shape[0] != X.shape[1]:
            raise UserError(f"a precomputed distance matrix must be square; got shape {X.shape}")
        if np.any(X < 0) or not np.allclose(X, X.T) or np.any(np.diag(X) != 0):
            raise UserError("a precomputed distance matrix must be symmetric, non-negative, zero on the diagonal")
        return np.array(X, dtype=np.float64)
    raise UserError(f"metric must be 'euclidean' or 'precomputed'; got {metric!r}")


def mean_scaled_distances(inputs: Any, metric: str,
                          n_neighbors: int | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """(X, D / scale, scale) for NeRV, local MDS, CCA and CDA: X = ``inputs.X`` (or ``inputs``) as float64 with at
    least 4 rows (the methods' size guards are their declared rules, checked before the fit), input distances
    (``euclidean``, ``precomputed``, or ``geodesic`` over the ``n_neighbors``-NN graph) divided by their mean over
    i != j (paper Sec. 3, dredviz)."""
    X = np.asarray(getattr(inputs, "X", inputs), dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 4:
        raise UserError(f"need a 2-D input with at least 4 rows; got shape {X.shape}")
    n = X.shape[0]
    if not np.all(np.isfinite(X)):
        raise UserError("the input contains NaN or infinite values")
    if metric != "precomputed":
        check_distance_scale(X)
    D = _input_distances(X, metric, n_neighbors)
    scale = float(D[~np.eye(n, dtype=bool)].mean())
    if not scale > 0:
        raise UserError("all input points coincide (mean distance 0)")
    D /= scale
    return X, D, scale
