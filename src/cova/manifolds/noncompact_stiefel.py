"""The noncompact Stiefel manifold R_*^{l×k} = {Z ∈ R^{l×k} : rank Z = k} (COVA Sec. 3.1.4, Table F.1).

It is an open subset of R^{l×k}: the tangent space is all of R^{l×k} and the Riemannian gradient (Euclidean
metric) is the Euclidean gradient. The retraction is ``Z + ξ``, repaired by an SVD when the sum loses rank.
"""

from __future__ import annotations

import numpy as np

from .base import Manifold

#: Lifted singular values are set to this multiple of max(σ_max, 1) (our choice; the paper does not repair rank).
LIFT = 1e-8


def project_tangent(Z: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """Tangent projection: the identity (the manifold is open in R^{l×k})."""
    return xi


def rank_threshold(sigma_max: float, shape: tuple[int, int]) -> float:
    """τ = max(l, k)·ε_mach·max(σ_max, 1): singular values at or below τ count as zero (numerical rank)."""
    return max(shape) * np.finfo(float).eps * max(float(sigma_max), 1.0)


def retract(Z: np.ndarray, xi: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
    """Retraction R_Z(ξ) (Table F.1 step 4, whose printed update lacks the Z_i term; docs/algorithms.md).

    Returns ``Z + ξ``. With ``check_rank`` the singular values σ of ``Z + ξ`` are computed; every σ ≤ τ
    (:func:`rank_threshold`) is lifted to ``1e-8·max(σ_max, 1)`` and the matrix rebuilt from its thin SVD, so the
    result has full column rank k and differs from ``Z + ξ`` by at most ``√k·1e-8·max(σ_max, 1)`` in Frobenius norm.
    The optimiser calls it with ``check_rank=False`` except every N_c iterations and at the last (Table F.1).
    Cost O(lk²).
    """
    Y = np.asarray(Z, dtype=float) + xi
    if not check_rank:
        return Y
    sigma = np.linalg.svd(Y, compute_uv=False)
    if sigma.size == 0:
        return Y
    tau = rank_threshold(sigma[0], Y.shape)
    if sigma.size == min(Y.shape) and sigma[-1] > tau:
        return Y
    A, sigma, Bt = np.linalg.svd(Y, full_matrices=False)
    floor = LIFT * max(float(sigma[0]), 1.0)
    sigma = np.where(sigma <= tau, floor, sigma)
    return (A * sigma) @ Bt


class NoncompactStiefel(Manifold):
    """R_*^{l×k} as a manifold object: identity projection, :func:`retract` with its scheduled rank check."""

    has_rank_check = True

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        return g

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        return retract(x, u, check_rank=check_rank)
