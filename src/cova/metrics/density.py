"""Local density preservation: the local-radius correlation of featMAP Sec. 4.2.3 (Fig. 7, Supp. Fig. 9).

featMAP plots the local radius of every point in the embedding against its radius in the data and reports the
Pearson correlation, without a formula for the radius. We take densMAP's isotropic one (Narayan, Berger & Cho
2021), which applies to any embedding method: on UMAP's fuzzy graph P of the points (featMAP Eq. 1),

    r(i) = log( ε + Σ_j P_ij ‖a_i − a_j‖² / Σ_j P_ij ),      ε = 1e-8,

r_o from the graph of X and the distances in X, r_e from the embedding's own fuzzy graph (built the same way,
same k) and the distances in Z, and the measure is Pearson(r_o, r_e). ε keeps the logarithm finite for points
whose graph neighbours coincide with them (umap-learn puts it at the same place).

Everything is O(m k) memory: the graphs are sparse and the edge distances are summed row by row in a compiled
loop, never as an m × m matrix.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from ..affinity.fuzzy import fuzzy_graph
from ..errors import UserError
from .neighborhood import _as_matrix, _same_rows

__all__ = ["RADIUS_NEIGHBORS", "RADIUS_EPSILON", "local_radii", "local_radius_pair", "pearson", "radius_correlation"]

#: k of the fuzzy graphs (UMAP's and featMAP's default n_neighbors, the point itself included).
RADIUS_NEIGHBORS = 15
#: ε inside the logarithm of the local radius.
RADIUS_EPSILON = 1e-8


@numba.njit(cache=True)
def _weighted_sq_radius(A: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                        data: np.ndarray) -> np.ndarray:  # pragma: no cover - jit
    """Σ_j P_ij ‖a_i − a_j‖² / Σ_j P_ij for every row i of the CSR matrix (indptr, indices, data); NaN for a row
    without weight."""
    n, d = A.shape
    out = np.empty(n)
    for i in range(n):
        num = 0.0
        den = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            acc = 0.0
            for t in range(d):
                diff = A[i, t] - A[j, t]
                acc += diff * diff
            num += data[p] * acc
            den += data[p]
        out[i] = num / den if den > 0.0 else np.nan
    return out


def local_radii(A: np.ndarray, P: sp.spmatrix, epsilon: float = RADIUS_EPSILON) -> np.ndarray:
    """r(i) = log(ε + Σ_j P_ij ‖a_i − a_j‖² / Σ_j P_ij) for every row a_i of ``A`` (m, d), with the weights of
    row i of the (m, m) graph ``P`` (densMAP's local radius; see the module docstring). Raises if a point has no
    edge of positive weight."""
    A = _as_matrix("A", A)
    m = A.shape[0]
    P = sp.csr_matrix(P, dtype=np.float64)
    if P.shape != (m, m):
        raise UserError(f"P must be {m}×{m} like the rows of A; got {P.shape}")
    if P.nnz and P.data.min() < 0:
        raise UserError("P must have non-negative weights")
    P.sort_indices()
    ratio = _weighted_sq_radius(A, P.indptr.astype(np.int64), P.indices.astype(np.int64), P.data)
    if np.isnan(ratio).any():
        raise UserError(f"{int(np.isnan(ratio).sum())} points have no edge of positive weight in P: their local "
                         "radius is undefined")
    return np.log(float(epsilon) + ratio)


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson's r of two vectors; NaN when either is constant."""
    a = a - a.mean()
    b = b - b.mean()
    # numpy's pairwise sums, not BLAS dot products: the same value whatever the thread count
    den = np.sqrt(np.sum(a * a) * np.sum(b * b))
    return float(np.sum(a * b) / den) if den > 0 else float("nan")


def local_radius_pair(X: np.ndarray, Z: np.ndarray, n_neighbors: int = RADIUS_NEIGHBORS,
                      random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The local radii (r_o, r_e) of every point: r_o of the data X (m, n) on its fuzzy graph, r_e of the embedding
    Z (m, 2) on the embedding's own fuzzy graph (:func:`cova.affinity.fuzzy.fuzzy_graph` with ``n_neighbors`` and
    ``random_state``; :func:`local_radii`). featMAP Fig. 7 draws one against the other; the score step saves them
    per run (``per_point.npz``) beside :func:`radius_correlation`."""
    X = _as_matrix("X", X)
    Z = _as_matrix("Z", Z)
    _same_rows("X", X, "Z", Z)
    return (local_radii(X, fuzzy_graph(X, n_neighbors, random_state=random_state).P),
            local_radii(Z, fuzzy_graph(Z, n_neighbors, random_state=random_state).P))


def radius_correlation(X: np.ndarray, Z: np.ndarray, n_neighbors: int = RADIUS_NEIGHBORS,
                       random_state: int = 0) -> float:
    """Local-radius correlation (featMAP Sec. 4.2.3, Fig. 7): Pearson's r between the local radii r_o of the data
    X (m, n) on its fuzzy graph and r_e of the embedding Z (m, 2) on the embedding's own fuzzy graph
    (:func:`cova.affinity.fuzzy.fuzzy_graph` with ``n_neighbors`` and ``random_state``; :func:`local_radii`).
    All points are used. Higher is better: 1 when the embedding keeps every point's relative local spread.
    NaN when every radius of X or of Z is the same."""
    return pearson(*local_radius_pair(X, Z, n_neighbors, random_state))
