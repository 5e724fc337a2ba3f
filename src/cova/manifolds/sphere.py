"""Products of spheres: every row of x ∈ R^{l×k} lies on the sphere of radius r, {x : ‖x_i‖ = r for all i}.

The tangent space at x holds the u whose rows are orthogonal to the rows of x; the projection removes each row's
radial component, P_x(g)_i = g_i − (⟨g_i, x_i⟩ / ‖x_i‖²) x_i, and the retraction renormalises the rows,
R_x(u)_i = r (x_i + u_i) / ‖x_i + u_i‖ (Absil, Mahony & Sepulchre 2008, Example 4.1.1, row by row).

:class:`CentredSphere` is DOSNES's constraint set (Lu, Yang & Corander 2016, Eq. 6): all rows of equal norm, the
rows centred, the common radius free; its retraction is the projection of DOSNES Eqs. 7–8.
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from .base import Manifold

__all__ = ["Sphere", "CentredSphere"]


class Sphere(Manifold):
    """Rows on the sphere of radius ``radius`` (default 1) centred at the origin."""

    def __init__(self, radius: float = 1.0):
        radius = float(radius)
        if not (np.isfinite(radius) and radius > 0):
            raise UserError(f"radius must be a positive finite number, got {radius!r}")
        self.radius = radius

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        radial = np.einsum("ij,ij->i", g, x) / np.einsum("ij,ij->i", x, x)
        return g - radial[:, None] * x

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        y = np.asarray(x, dtype=float) + u
        norms = np.linalg.norm(y, axis=1)
        if np.any(norms == 0):
            raise UserError("the retraction reached the origin in some row; take a smaller step")
        return y * (self.radius / norms)[:, None]

    def random_point(self, l: int, k: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """l rows drawn uniformly on the sphere (normalised standard Gaussian rows)."""
        y = np.random.default_rng(rng).standard_normal((int(l), int(k)))
        return y * (self.radius / np.linalg.norm(y, axis=1))[:, None]


class CentredSphere(Manifold):
    """S = {Y : ‖y_1‖ = … = ‖y_n‖, Σ_i y_i = 0}, centred spheres of any radius (DOSNES, Lu, Yang & Corander 2016,
    Eq. 6).

    The retraction is DOSNES's projection after every step: centre (Eq. 7), ỹ_i ← ỹ_i − (1/n) Σ_j ỹ_j, then move
    every row radially onto the sphere of the mean norm (Eq. 8), y_i ← (ỹ_i / ‖ỹ_i‖)·(1/n) Σ_j ‖ỹ_j‖. The radius is
    thereby adapted by the steps themselves; Eq. 8 leaves the norms exactly equal but moves the centroid slightly.

    ``gradient`` picks what the optimiser steps along:

    - ``"euclidean"`` (default, DOSNES Sec. 4): the identity, i.e. the plain Euclidean gradient and an
      unprojected momentum buffer, followed by Eqs. 7–8 (a projected-gradient method);
    - ``"tangent"``: the orthogonal projection onto the tangent space of the equal-norm constraint at x,
      P_x(g)_i = g_i − (a_i − ā) x_i with a_i = ⟨g_i, x_i⟩ / ‖x_i‖² and ā their mean: each row keeps the common
      radial rate ā and loses its own deviation from it (the rows of x have equal norms).
    """

    GRADIENTS = ("euclidean", "tangent")

    def __init__(self, gradient: str = "euclidean"):
        if gradient not in self.GRADIENTS:
            raise UserError(f"gradient must be one of {list(self.GRADIENTS)}, got {gradient!r}")
        self.gradient = gradient

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        if self.gradient == "euclidean":
            return g
        x = np.asarray(x, dtype=float)
        radial = np.einsum("ij,ij->i", g, x) / np.einsum("ij,ij->i", x, x)
        return g - (radial - radial.mean())[:, None] * x

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        y = np.asarray(x, dtype=float) + u
        y -= y.mean(axis=0)
        norms = np.linalg.norm(y, axis=1)
        if np.any(norms == 0):
            raise UserError("a row reached the centre of the sphere; take a smaller step")
        return y * (norms.mean() / norms)[:, None]
