"""Crowding-in-the-centre measures of a graph embedding.

The DOSNES paper (Lu, Yang & Corander, Sec. 2 and Sec. 6) says that t-SNE places the nodes of high degree in the
centre of the display and the others in the periphery, that a doubly stochastic input makes the embedding nearly
spherical (Sec. 4, Fig. 1), and that t-SNE "caused over 90 percent of songs crowded in the center" (Fig. 4). It
measures none of this; the three scores below are ours:

* :func:`radial_cv`: the coefficient of variation of the distances to the centroid (a ring or a sphere has 0, a
  uniform disc 1/√8 ≈ 0.354);
* :func:`centre_fraction`: the fraction of points within a quarter of the largest distance to the centroid;
* :func:`degree_radius_rho`: Spearman's ρ between the degrees and the distances to the centroid (plane), or the
  mean distance to the k nearest neighbours on the unit sphere (sphere). Crowding of the high-degree nodes gives
  a strongly negative ρ in both cases.
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from .display_neighbours import _k, display_points
from .neighborhood import _as_matrix, knn_indices

__all__ = ["radii", "radial_cv", "centre_fraction", "degree_radius_rho", "CENTRE_SHARE"]

#: The central disc (ball) of :func:`centre_fraction`: this share of the largest distance to the centroid.
CENTRE_SHARE = 0.25


def radii(Z: np.ndarray) -> np.ndarray:
    """‖z_i − z̄‖: the distance of every point to the centroid z̄ of the embedding."""
    Z = _as_matrix("Z", Z)
    return np.linalg.norm(Z - Z.mean(axis=0), axis=1)


def radial_cv(Z: np.ndarray) -> float:
    """std(r) / mean(r) of the distances r to the centroid (population std); NaN when every point is at the
    centroid. Invariant to translation, rotation and scale. On a DOSNES sphere it is close to 0 by construction
    (the projection of DOSNES Eqs. 7-8 gives equal norms about the origin; the centroid stays near it)."""
    r = radii(Z)
    m = r.mean()
    return float(r.std() / m) if m > 0 else float("nan")


def centre_fraction(Z: np.ndarray, share: float = CENTRE_SHARE) -> float:
    """The fraction of points whose distance to the centroid is less than ``share`` times the largest one:
    the share of the points in the central disc (ball) of the display. A uniform disc gives ``share²``, a
    uniform 3-D ball ``share³``, a ring or a sphere 0. NaN when every point is at the centroid."""
    if not 0 < share < 1:
        raise UserError(f"share must be in (0, 1); got {share}")
    r = radii(Z)
    top = r.max()
    return float(np.mean(r < share * top)) if top > 0 else float("nan")


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ (average ranks for ties); NaN when either side is constant."""
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    from scipy.stats import spearmanr  # here: scipy.stats costs every score job half a second to import

    return float(spearmanr(a, b).statistic)


def degree_radius_rho(Z: np.ndarray, degree: np.ndarray, geometry: str = "plane", k: int = 10) -> float:
    """Degree-crowding correlation: Spearman's ρ(degree_i, s_i).

    In a plane ``s_i = ‖z_i − z̄‖`` (:func:`radii`). On a sphere there is no centre, so ``s_i`` is the mean
    chordal distance from z_i to its k nearest neighbours on the unit sphere (:func:`display_points`; k capped at
    n − 1): crowded high-degree nodes have small s_i. NaN when the degrees or the s_i are all equal.
    """
    d = np.asarray(degree, dtype=np.float64).ravel()
    U = display_points(Z, geometry)
    if d.shape[0] != U.shape[0]:
        raise UserError(f"degree has {d.shape[0]} entries but the embedding has {U.shape[0]} rows")
    if geometry == "plane":
        s = radii(U)
    else:
        nb = knn_indices(U, _k(k, U.shape[0]))
        s = np.linalg.norm(U[nb] - U[:, None, :], axis=2).mean(axis=1)
    return _spearman(d, s)
