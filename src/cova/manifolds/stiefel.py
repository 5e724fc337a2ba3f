"""The Stiefel manifold St(k̃, k) = {U ∈ R^{k̃×k} : UᵀU = I_k} (COVA Sec. 3.2.1, Appendix B).

Embedded metric ⟨ξ, η⟩ = tr(ξᵀη); the Riemannian gradient is the tangent projection of the Euclidean gradient.
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from .base import Manifold


def sym(A: np.ndarray) -> np.ndarray:
    """½(A + Aᵀ)."""
    return 0.5 * (A + A.T)


def project_tangent(U: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """P_U(ξ) = (I_k̃ − UUᵀ)ξ + U skew(Uᵀξ) = ξ − U sym(Uᵀξ) (Eq. 16 = B.14; B.14's I_{k×k} is I_{k̃×k̃}).

    The result satisfies ``UᵀP + PᵀU = 0`` and P_U∘P_U = P_U. Cost O(k̃k²).
    """
    return xi - U @ sym(U.T @ xi)


def _qf(A: np.ndarray) -> np.ndarray:
    """Q factor of the thin QR of A with each column's sign chosen so that diag(R) > 0 (unique for full rank)."""
    Q, Rf = np.linalg.qr(A)
    signs = np.sign(np.diag(Rf))
    signs[signs == 0] = 1.0
    return Q * signs


def retract_qr(U: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """QR retraction qf(U + ξ) of Eq. 17, with the sign fix diag(R) > 0.

    numpy's Householder QR may return negative diagonals of R; without the fix R_U(0) ≠ U (e.g. for U = −U₀)
    and columns flip sign between iterations.
    """
    return _qf(np.asarray(U, dtype=float) + xi)


def retract_polar(U: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """Polar retraction (U + ξ)(I_k + ξᵀξ)^{−1/2} = A Bᵀ, where U + ξ = AΣBᵀ is the thin SVD.

    Eq. 18 prints the exponent +1/2; B.17 has the correct −1/2 (docs/algorithms.md). The closed form with ξᵀξ needs ξ
    tangent; A Bᵀ (the orthonormal polar factor) is used because it is orthonormal for any ξ.
    """
    A, _, Bt = np.linalg.svd(np.asarray(U, dtype=float) + xi, full_matrices=False)
    return A @ Bt


def random_point(k_tilde: int, k: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """A random point of St(k̃, k): the sign-fixed Q factor of a k̃×k standard Gaussian matrix (Haar distributed)."""
    if k > k_tilde:
        raise UserError(f"St(k_tilde, k) needs k <= k_tilde, got k = {k} > k_tilde = {k_tilde}")
    rng = np.random.default_rng(rng)
    return _qf(rng.standard_normal((k_tilde, k)))


class Stiefel(Manifold):
    """St(k̃, k) as a manifold object: :func:`project_tangent` and the ``"qr"`` (Eq. 17) or ``"polar"`` (B.17)
    retraction."""

    RETRACTIONS = ("qr", "polar")

    def __init__(self, retraction: str = "qr"):
        if retraction not in self.RETRACTIONS:
            raise UserError(f"retraction must be one of {list(self.RETRACTIONS)}, got {retraction!r}")
        self.retraction = retraction

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        return project_tangent(x, g)

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        return retract_qr(x, u) if self.retraction == "qr" else retract_polar(x, u)
