"""The generalised Stiefel manifold {Z ∈ R^{l×k} : ZᵀBZ = I_k} for a diagonal B ≻ 0 (COVA Appendix C, the feasible
set M₂ with B = 𝐃(W)).

Geometry (Absil, Mahony & Sepulchre 2008, Sec. 3.6.1 and 4.1.1; the same as Manopt's ``stiefelgeneralizedfactory``,
which the paper used):

- metric ⟨ξ, η⟩_B = tr(ξᵀBη);
- tangent space {ξ : ZᵀBξ + ξᵀBZ = 0};
- Riemannian gradient of f with Euclidean gradient G: B⁻¹G − Z sym(ZᵀG);
- retraction R_Z(ξ) = Y (YᵀBY)^{−1/2} with Y = Z + ξ (the B-orthonormal polar factor).

B is diagonal here (a degree matrix), stored as its diagonal, so every operation is O(lk + k³).
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from .base import Manifold
from .stiefel import sym

__all__ = ["GeneralizedStiefel"]


class GeneralizedStiefel(Manifold):
    """{Z : ZᵀBZ = I_k} with B = diag(``b``), b > 0; see the module docstring. ``norm`` is the B-norm, which the
    solvers use for the gradient norm and the Armijo decrease (⟨G, grad f⟩ = ‖grad f‖²_B)."""

    def __init__(self, b: np.ndarray):
        b = np.asarray(b, dtype=np.float64).ravel()
        if b.size == 0 or not np.all(np.isfinite(b)) or np.any(b <= 0):
            raise UserError("the generalised Stiefel manifold needs a diagonal B with finite positive entries "
                             f"(got min {b.min() if b.size else 'none'}); a zero degree means an isolated sample")
        self.b = b

    def _check(self, x: np.ndarray) -> None:
        if x.shape[0] != self.b.size:
            raise UserError(f"points must have {self.b.size} rows (the size of B), got shape {x.shape}")

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """The Riemannian gradient B⁻¹g − x sym(xᵀg) of a Euclidean gradient g (a tangent vector at x)."""
        self._check(x)
        return g / self.b[:, None] - x @ sym(x.T @ g)

    def norm(self, x: np.ndarray, u: np.ndarray) -> float:
        """‖u‖_B = √tr(uᵀBu)."""
        return float(np.sqrt(np.sum(self.b[:, None] * u * u)))

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        """Y (YᵀBY)^{−1/2} with Y = x + u (``check_rank`` is accepted for the solvers' interface; unused)."""
        self._check(x)
        return self.point(np.asarray(x, dtype=float) + u)

    def point(self, y: np.ndarray) -> np.ndarray:
        """The point y (yᵀBy)^{−1/2} of the manifold (y of full column rank), e.g. for a starting point."""
        gram = y.T @ (self.b[:, None] * y)
        w, V = np.linalg.eigh(sym(gram))
        if w[0] <= 1e-12 * max(w[-1], 1e-300):
            raise UserError("cannot map a rank-deficient matrix onto the generalised Stiefel manifold")
        return y @ (V / np.sqrt(w)) @ V.T
