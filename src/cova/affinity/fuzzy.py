"""UMAP's fuzzy simplicial set on the package's own nearest-neighbour search (featMAP Sec. 3.1, Eq. 1).

featMAP's edge weights are UMAP's: for j among the k nearest neighbours of i,

    P̃_{j|i} = exp(−(‖x_i − x_j‖ − dist_i) / γ_i),      P_ij = P̃_{j|i} + P̃_{i|j} − P̃_{j|i} P̃_{i|j}     (Eq. 1)

with dist_i the distance to the nearest neighbour (UMAP's ρ_i) and γ_i (UMAP's σ_i) found by a binary search so
that Σ_j P̃_{j|i} = log2 k. The neighbours come from :func:`cova.affinity.knn.nearest_neighbors` (exact, or
pynndescent above its size thresholds), so that featMAP, the metrics and every other method see one and the same
kNN graph; the weights themselves are computed by umap-learn's ``fuzzy_simplicial_set`` (its ``smooth_knn_dist``
and ``compute_membership_strengths``), not re-implemented. On the same neighbours the result equals umap-learn's
``UMAP(...).graph_`` to float32 precision.

k counts the point itself, as umap-learn does (``n_neighbors=15`` means self plus 14 neighbours): the search asks
for k − 1 neighbours and self is put in column 0 with distance 0. Memory O(m·k).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..checks import check_matrix
from ..errors import UserError
from ..jit import cache_library_kernels
from .knn import METHODS, METRICS, RESCALE, nearest_neighbors

__all__ = ["FuzzyGraph", "fuzzy_graph"]


@dataclass(frozen=True)
class FuzzyGraph:
    """The fuzzy union graph of featMAP Eq. 1 and the neighbour table it was built from.

    Attributes
    ----------
    P : (m, m) symmetric float64 CSR matrix P_ij (the fuzzy union), zero diagonal, sorted indices.
    knn_indices : (m, k) int64; column 0 is the point itself, columns 1.. its k − 1 neighbours by distance.
    knn_dists : (m, k) float64 distances matching ``knn_indices`` (column 0 is 0).
    sigmas : (m,) γ_i of Eq. 1 (umap-learn's σ_i).
    rhos : (m,) dist_i of Eq. 1 (umap-learn's ρ_i).
    """

    P: sp.csr_matrix
    knn_indices: np.ndarray
    knn_dists: np.ndarray
    sigmas: np.ndarray
    rhos: np.ndarray

    @property
    def n_neighbors(self) -> int:
        """k, the point itself included."""
        return int(self.knn_indices.shape[1])


def _check_k(n_neighbors: object, m: int) -> int:
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)):
        raise UserError(f"n_neighbors must be an integer (the point itself included), got {n_neighbors!r}")
    k = int(n_neighbors)
    if k < 2:
        raise UserError(f"n_neighbors must be >= 2 (it counts the point itself), got {k}")
    if k >= m:
        raise UserError(f"n_neighbors must be < the number of samples m = {m}, got {k}")
    return k


def _check_float32_distances(dist: np.ndarray) -> None:
    """umap-learn calibrates the fuzzy set in float32: neighbour distances beyond its range would become inf (and P
    NaN) or 0 there. Raises ``ValueError`` naming the distance and what to do."""
    top, tiny = float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny)
    largest = float(dist.max()) if dist.size else 0.0
    if largest > top or 0.0 < largest < tiny:
        bound, what = (top, "above") if largest > top else (tiny, "below")
        raise UserError(f"X's neighbour distances reach {largest:.3g}, {what} the float32 range ({bound:.3g}) that "
                         f"umap-learn computes the fuzzy simplicial set in, so its weights P would be "
                         f"{'NaN' if what == 'above' else 'undefined'}; {RESCALE}")


def fuzzy_graph(
    X: np.ndarray,
    n_neighbors: int = 15,
    *,
    metric: str = "euclidean",
    random_state: int = 0,
    n_jobs: int = 1,
    set_op_mix_ratio: float = 1.0,
    local_connectivity: float = 1.0,
    knn_method: str = "auto",
) -> FuzzyGraph:
    """UMAP's fuzzy simplicial set P of ``X`` (featMAP Eq. 1) on the package's kNN search.

    Parameters
    ----------
    X : (m, n) finite data.
    n_neighbors : k, the point itself included (umap-learn's convention), 2 ≤ k < m.
    metric : ``"euclidean"`` (featMAP's) or ``"cosine"`` (1 − cos, umap-learn's definition too).
    random_state : seed of the approximate neighbour search (ignored by the exact one).
    n_jobs : threads of the neighbour search (part of the seed for pynndescent).
    set_op_mix_ratio : 1 = fuzzy union (Eq. 1), 0 = fuzzy intersection, in between a mix (umap-learn's parameter).
    local_connectivity : number of neighbours assumed fully connected (umap-learn's parameter, ≥ 0; 1 in Eq. 1).
    knn_method : ``method`` of :func:`cova.affinity.knn.nearest_neighbors` (``"auto"``, ``"exact"``,
        ``"pynndescent"``).

    Returns
    -------
    :class:`FuzzyGraph`.
    """
    X = check_matrix(X, "X", contiguous=True)
    m = X.shape[0]
    k = _check_k(n_neighbors, m)
    if metric not in METRICS:
        raise UserError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if knn_method not in METHODS:
        raise UserError(f"knn_method must be one of {', '.join(METHODS)}, got {knn_method!r}")
    mix = float(set_op_mix_ratio)
    if not 0.0 <= mix <= 1.0:
        raise UserError(f"set_op_mix_ratio must be in [0, 1], got {set_op_mix_ratio!r}")
    conn = float(local_connectivity)
    if not (np.isfinite(conn) and conn >= 0.0):
        raise UserError(f"local_connectivity must be a finite number >= 0, got {local_connectivity!r}")

    ind, dist = nearest_neighbors(X, k - 1, metric=metric, method=knn_method, random_state=int(random_state),
                                  n_jobs=int(n_jobs))
    _check_float32_distances(dist)
    knn_indices = np.empty((m, k), dtype=np.int64)
    knn_indices[:, 0] = np.arange(m)
    knn_indices[:, 1:] = ind
    knn_dists = np.zeros((m, k), dtype=np.float64)
    knn_dists[:, 1:] = dist

    from umap.umap_ import fuzzy_simplicial_set

    cache_library_kernels("umap")

    result, sigmas, rhos, _ = fuzzy_simplicial_set(
        X, k, int(random_state), metric, knn_indices=knn_indices, knn_dists=knn_dists,
        set_op_mix_ratio=mix, local_connectivity=conn, return_dists=False,
    )
    coo = sp.coo_matrix(result)
    off = coo.row != coo.col  # umap-learn gives self-loops weight 0; keep the zero diagonal explicit
    P = sp.csr_matrix((coo.data[off].astype(np.float64), (coo.row[off], coo.col[off])), shape=(m, m))
    P.eliminate_zeros()
    P.sort_indices()
    return FuzzyGraph(
        P=P,
        knn_indices=knn_indices,
        knn_dists=knn_dists,
        sigmas=np.asarray(sigmas, dtype=np.float64),
        rhos=np.asarray(rhos, dtype=np.float64),
    )
