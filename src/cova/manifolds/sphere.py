"""Products of spheres: every row of x ∈ R^{l×k} lies on the sphere of radius r, {x : ‖x_i‖ = r for all i}.

The tangent space at x holds the u whose rows are orthogonal to the rows of x; the projection removes each row's
radial component, P_x(g)_i = g_i − (⟨g_i, x_i⟩ / ‖x_i‖²) x_i, and the retraction renormalises the rows,
R_x(u)_i = r (x_i + u_i) / ‖x_i + u_i‖ (Absil, Mahony & Sepulchre 2008, Example 4.1.1, row by row).
"""

from __future__ import annotations

import numpy as np

from .base import Manifold

__all__ = ["Sphere"]


class Sphere(Manifold):
    """Rows on the sphere of radius ``radius`` (default 1) centred at the origin."""

    def __init__(self, radius: float = 1.0):
        radius = float(radius)
        if not (np.isfinite(radius) and radius > 0):
            raise ValueError(f"radius must be a positive finite number, got {radius!r}")
        self.radius = radius

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        radial = np.einsum("ij,ij->i", g, x) / np.einsum("ij,ij->i", x, x)
        return g - radial[:, None] * x

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        y = np.asarray(x, dtype=float) + u
        norms = np.linalg.norm(y, axis=1)
        if np.any(norms == 0):
            raise ValueError("the retraction reached the origin in some row; take a smaller step")
        return y * (self.radius / norms)[:, None]

    def random_point(self, l: int, k: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """l rows drawn uniformly on the sphere (normalised standard Gaussian rows)."""
        y = np.random.default_rng(rng).standard_normal((int(l), int(k)))
        return y * (self.radius / np.linalg.norm(y, axis=1))[:, None]
