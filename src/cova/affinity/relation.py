"""Relations between two groups of objects, the input R of the co-embedding paper (Wu, Mu, Liatsis, Goulermas).

* :func:`gaussian_relation` -- Eq. 44 (Sec. 4.1): r_ij = exp(−‖x_i − y_j‖² / s) between two point sets, with s the
  mean of all m·n squared distances (the paper's choice) or another scale.
* :func:`hop_distances` / :func:`hop_distance_relation` -- Sec. 4.3 (link data): unweighted shortest-path (hop)
  distances D between the row and the column vertices of an undirected graph, and r_ij = exp(−D_ij / t) with t the
  mean of D (D is not squared).

Both relations are dense by nature (every entry is positive), so their size is bounded by
:data:`MAX_DENSE_ENTRIES`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..checks import check_matrix
from ..errors import UserError

__all__ = ["MAX_DENSE_ENTRIES", "WIDTHS", "gaussian_relation", "hop_distances", "hop_distance_relation",
           "symmetric_adjacency"]

#: Largest number of entries of a dense relation (or of its hop-distance work array) we build: 25 million
#: float64 values, 200 MB, e.g. 5,000 × 5,000.
MAX_DENSE_ENTRIES = 25_000_000
#: Named scales of :func:`gaussian_relation` (statistics of the squared distances).
WIDTHS = ("mean", "median", "max")


def _check_size(m: int, n: int, what: str) -> None:
    if m * n > MAX_DENSE_ENTRIES:
        raise UserError(f"{what} would be a dense {m}×{n} array ({m * n:,} entries); the limit is "
                         f"{MAX_DENSE_ENTRIES:,} entries (200 MB of float64). Use fewer row or column objects")


def gaussian_relation(Xr: Any, Xc: Any, width: str | float = "mean") -> tuple[np.ndarray, float]:
    """The Gaussian relation between the row points ``Xr`` (m, d) and the column points ``Xc`` (n, d).

    r_ij = exp(−‖x_i − y_j‖² / s) (co-embedding paper Eq. 44 with ``width="mean"``: s = Σ_ij ‖x_i − y_j‖² / (mn)).
    ``width`` is ``"mean"``, ``"median"`` or ``"max"`` (that statistic of the m·n squared distances) or a positive
    number used as s itself. Returns the dense (m, n) R and the scale s.
    """
    from scipy.spatial.distance import cdist

    Xr = check_matrix(Xr, "Xr")
    Xc = check_matrix(Xc, "Xc")
    if Xr.shape[1] != Xc.shape[1]:
        raise UserError(f"Xr and Xc must have the same number of columns, got {Xr.shape[1]} and {Xc.shape[1]}")
    _check_size(Xr.shape[0], Xc.shape[0], "the Gaussian relation")
    D2 = cdist(Xr, Xc, "sqeuclidean")
    if isinstance(width, str):
        if width not in WIDTHS:
            raise UserError(f"width must be one of {list(WIDTHS)} or a positive number, got {width!r}")
        scale = float({"mean": np.mean, "median": np.median, "max": np.max}[width](D2))
    elif isinstance(width, (int, float, np.number)) and not isinstance(width, bool) and np.isfinite(width) \
            and width > 0:
        scale = float(width)
    else:
        raise UserError(f"width must be one of {list(WIDTHS)} or a positive number, got {width!r}")
    if scale <= 0:
        raise UserError(f"width {width!r}: the squared distances give scale {scale}; all points coincide")
    return np.exp(-D2 / scale), scale


def symmetric_adjacency(A: Any) -> sp.csr_matrix:
    """The undirected simple graph of a square relation matrix: a_ij = 1 when A_ij or A_ji is non-zero, i ≠ j."""
    A = sp.csr_matrix(A)
    if A.shape[0] != A.shape[1]:
        raise UserError(f"the adjacency matrix must be square, got shape {A.shape}")
    S = ((abs(A) + abs(A).T) > 0).astype(np.float64).tocsr()
    S.setdiag(0.0)
    S.eliminate_zeros()
    return S


def hop_distances(A: Any, rows: Any, cols: Any) -> np.ndarray:
    """Unweighted shortest-path (hop) distances between the vertices ``rows`` and ``cols`` of the undirected graph
    of ``A`` (:func:`symmetric_adjacency`): a dense (len(rows), len(cols)) float64 array, ``inf`` between
    vertices of different components (breadth-first search, ``scipy.sparse.csgraph.shortest_path``)."""
    from scipy.sparse.csgraph import shortest_path

    S = symmetric_adjacency(A)
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    N = S.shape[0]
    for name, idx in (("rows", rows), ("cols", cols)):
        if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= N:
            raise UserError(f"{name} must be a non-empty list of vertex indices in 0..{N - 1}")
    _check_size(rows.size, N, "the hop-distance work array (row vertices × all vertices)")
    return shortest_path(S, method="D", unweighted=True, indices=rows)[:, cols]


def hop_distance_relation(A: Any, rows: Any, cols: Any) -> tuple[np.ndarray, np.ndarray, float]:
    """The link-data relation of the co-embedding paper (Sec. 4.3): D = hop distances between the row and the
    column vertices (:func:`hop_distances`), t = mean of D, R = exp(−D / t) (D not squared).

    Returns (R, D, t). Row and column vertices must lie in one connected component (a finite D); the paper keeps
    the largest connected component first.
    """
    D = hop_distances(A, rows, cols)
    if not np.all(np.isfinite(D)):
        bad = int((~np.isfinite(D)).any(axis=1).sum())
        raise UserError(f"{bad} row vertices cannot reach some column vertex: keep one connected component "
                         f"(the largest) before building the hop-distance relation")
    t = float(D.mean())
    if t <= 0:
        raise UserError("all hop distances are zero (the row and column vertices coincide)")
    return np.exp(-D / t), D, t
