"""Neighbourhoods as a display shows them, in a plane or on a sphere: k-NN label accuracy and graph-neighbour
precision@k of an embedding.

The DOSNES paper (Lu, Yang & Corander, Secs. 4-6) places points on a centred sphere of any radius and judges
its figures by eye; these two scores are ours. Conventions:

* ``geometry="plane"``: Euclidean distances between the rows of Z;
* ``geometry="sphere"``: every row is first normalised to unit length (the unit sphere the paper's figures show),
  then Euclidean distances are taken. These are chordal distances ``2 sin(θ/2)`` of the angle θ between two
  points, an increasing function of the geodesic distance θ, so they rank neighbours exactly as geodesic
  distances do;
* neighbours come from :func:`cova.metrics.neighborhood.knn_indices`: a point is never its own neighbour and
  ties in distance go to the lower index (a stable sort on (distance, index));
* ``k`` is capped at ``n - 1``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

from ..errors import UserError
from .neighborhood import _as_matrix, knn_indices
from .retrieval import knn_error, knn_vote

__all__ = ["display_points", "knn_accuracy", "knn_accuracy_series", "graph_precision"]


def display_points(Z: np.ndarray, geometry: str = "plane") -> np.ndarray:
    """The points whose Euclidean distances the neighbourhood scores use: Z itself in a plane, the rows of Z
    scaled to unit length on a sphere (the radius of a DOSNES sphere is free, DOSNES Eqs. 5-8)."""
    Z = _as_matrix("Z", Z)
    if geometry == "plane":
        return Z
    if geometry != "sphere":
        raise UserError(f"geometry must be 'plane' or 'sphere'; got {geometry!r}")
    norms = np.linalg.norm(Z, axis=1)
    if np.any(norms == 0):
        raise UserError("a point of a sphere embedding is at the origin: it has no direction")
    return Z / norms[:, None]


def _k(k: int, n: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise UserError(f"k must be an integer >= 1; got {k!r}")
    if n < 2:
        raise UserError("neighbourhood scores need at least 2 points")
    return int(min(k, n - 1))


def knn_accuracy(Z: np.ndarray, labels: np.ndarray, k: int = 5, geometry: str = "plane") -> float:
    """Leave-one-out k-NN label accuracy in the display: ``1 - knn_error`` of
    :func:`cova.metrics.retrieval.knn_error` (majority vote of the k nearest other points; a tied vote goes to
    the tied class with the nearest neighbour) on :func:`display_points`."""
    U = display_points(Z, geometry)
    return 1.0 - knn_error(U, labels, _k(k, U.shape[0]))


def knn_accuracy_series(Z: np.ndarray, labels: np.ndarray, ks: Iterable[int],
                        geometry: str = "plane") -> dict[int, float]:
    """:func:`knn_accuracy` for every k of ``ks`` (each capped at n - 1) from one neighbour query of the
    largest k: the k nearest of a point are the first k of its largest-k list, so every entry equals
    ``knn_accuracy(Z, labels, k, geometry)``.

    This is also PaCMAP's ``knn_eval`` series (Wang et al. 2021; featMAP Table 1, M_k: k = 1, 3, 5, 10, 15,
    20, 25, 30): the majority vote of the k nearest other points, a tied vote going to the tied class met first
    in nearest-first order. Returns {k: accuracy} in the order of ``ks``.
    """
    U = display_points(Z, geometry)
    n = U.shape[0]
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != n:
        raise UserError(f"labels must be 1-D with {n} entries; got shape {y.shape}")
    ks = list(ks)
    if not ks:
        raise UserError("ks must name at least one k; got an empty list")
    capped = {k: _k(k, n) for k in ks}
    _, codes = np.unique(y, return_inverse=True)
    codes = codes.astype(np.int64)
    nb = codes[knn_indices(U, max(capped.values()))]
    return {k: float(np.mean(knn_vote(nb[:, :kk]) == codes)) for k, kk in capped.items()}


def graph_precision(Z: np.ndarray, W: sp.spmatrix, k: int = 10, geometry: str = "plane") -> float:
    """Graph-neighbour precision@k: the mean over points of the fraction of a point's k nearest displayed
    neighbours that are its neighbours in the graph W (``W_ij > 0``, j ≠ i).

    Points without any graph neighbour are left out of the mean (their precision is 0 whatever the embedding);
    NaN when no point has one.
    """
    U = display_points(Z, geometry)
    n = U.shape[0]
    W = sp.csr_matrix(W)
    if W.shape != (n, n):
        raise UserError(f"W must be {n}×{n} like the embedding; got {W.shape}")
    has = np.asarray((W > 0).sum(axis=1)).ravel() - (W.diagonal() > 0) > 0
    if not has.any():
        return float("nan")
    kk = _k(k, n)
    nb = knn_indices(U, kk)
    hits = np.asarray(W[np.repeat(np.arange(n), kk), nb.ravel()]).reshape(n, kk) > 0
    return float(hits.sum(axis=1)[has].mean() / kk)
