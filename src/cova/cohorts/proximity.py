"""Cohort proximity (c x c), the input to prototype generation: paper Eqs. 5-6 (spec section 2.3).

Every function returns a dense c x c float64 array (c is small). Graph-based proximities use only sparse products
YᵀWY with the sparse l x c indicator Y, so no l x l dense array is allocated.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.spatial.distance import cdist

from .confidence import _check_labels, _check_W, _check_X, _cohort_means, _cohort_sizes, label_matrix

__all__ = [
    "centre_distances",
    "gaussian_similarity",
    "graph_similarity",
    "cohort_proximity",
    "PROXIMITY_KINDS",
]

PROXIMITY_KINDS: tuple[str, ...] = ("centres", "centres_gaussian", "graph")


def _check_square(M: ArrayLike, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square (c, c) matrix, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return M


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


def gaussian_similarity(D: ArrayLike, sigma: float | None = None) -> np.ndarray:
    """Gaussian similarity S = exp(-D² / (2 sigma²)) of a distance matrix, with zero diagonal.

    ``sigma`` defaults to the median of the off-diagonal entries of D (spec section 2.4 [assumption]). Used for the
    Cylinder2 prototypes ("Gaussian similarity matrix computed between the cohort centers") and to turn a distance
    into a t-SNE affinity. A 1 x 1 input returns [[0.]].
    """
    D = _check_square(D, "D")
    c = D.shape[0]
    if D.min() < 0:
        raise ValueError("D must be a non-negative distance matrix")
    if c == 1:
        return np.zeros((1, 1))
    if sigma is None:
        off = D[~np.eye(c, dtype=bool)]
        sig = float(np.median(off))
        if not sig > 0:
            raise ValueError("sigma=None uses the median off-diagonal distance, which is 0 here; pass sigma > 0")
    else:
        sig = float(sigma)
        if not (np.isfinite(sig) and sig > 0):
            raise ValueError(f"sigma must be a positive finite number or None, got {sigma!r}")
    S = np.exp(-(D * D) / (2.0 * sig * sig))
    np.fill_diagonal(S, 0.0)
    return S


def graph_similarity(W: ArrayLike | sp.spmatrix, labels: ArrayLike, n_cohorts: int | None = None) -> np.ndarray:
    """Eq. 6: S_D = (YᵀWY) ⊘ (n nᵀ), i.e. s_ij = (1/(n_i n_j)) sum_{y_s = i, y_t = j} w_st.

    Although Eq. 6 writes "d_ij <-", this is an average *weight*, i.e. a similarity (spec T35). The diagonal (average
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


def cohort_proximity(
    kind: Literal["centres", "centres_gaussian", "graph"],
    *,
    X: ArrayLike | None = None,
    W: ArrayLike | sp.spmatrix | None = None,
    labels: ArrayLike,
    n_cohorts: int | None = None,
) -> tuple[np.ndarray, str]:
    """Dispatcher returning ``(matrix, "distance" | "similarity")``.

    kind
        ``"centres"``: Eq. 5 centre distances (a distance; needs X);
        ``"centres_gaussian"``: Eq. 5 followed by :func:`gaussian_similarity` with the median sigma (a similarity;
        needs X; used for the Cylinder2 prototypes);
        ``"graph"``: Eq. 6 graph similarity (a similarity; needs W).
    """
    if kind not in PROXIMITY_KINDS:
        raise ValueError(f"proximity kind must be one of {list(PROXIMITY_KINDS)}, got {kind!r}")
    if kind in ("centres", "centres_gaussian"):
        if X is None:
            raise ValueError(f"X is required for proximity kind={kind!r} (got None)")
        D = centre_distances(X, labels, n_cohorts)
        if kind == "centres":
            return D, "distance"
        return gaussian_similarity(D), "similarity"
    if W is None:
        raise ValueError("W is required for proximity kind='graph' (got None)")
    return graph_similarity(W, labels, n_cohorts), "similarity"
