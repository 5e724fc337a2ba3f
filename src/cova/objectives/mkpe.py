"""Multiple kernel preserving embedding (MKPE; Gönen, ECAI 2014), the cross-domain term that remains when only
the relation R between the two groups is known (co-embedding paper Sec. 4, the MKPE baseline).

With E_x (m×k) and E_z (n×k) the embeddings of the row and column objects, σ the kernel width of the embedding
space and K_c the m×n target kernel between the groups, MKPE minimises

    f(E_x, E_z, η) = λ_c · (1/mn) Σ_ij (k_ij − K_c,ij)²,   k_ij = exp(−d_ij / σ²),   d_ij = ‖e_x,i − e_z,j‖²,

with σ = e^η learned in log space (Gönen's within-group terms λ_x, λ_z are absent here, see the method). With
G = −(2λ_c / (mnσ²)) (k − K_c) ∘ k, the Euclidean gradient is

    ∂f/∂E_x = 2 (diag(G1) E_x − G E_z),   ∂f/∂E_z = 2 (diag(Gᵀ1) E_z − Gᵀ E_x),
    ∂f/∂η   = (4λ_c / (mnσ²)) Σ_ij (k_ij − K_c,ij) k_ij d_ij,

which is Gönen's update direction with the opposite sign. Dense: O(mnk) time, a few m×n arrays.
"""

from __future__ import annotations

import numpy as np

from ..affinity.distances import squared_distances
from ..errors import UserError

__all__ = ["mkpe_objective"]


def mkpe_objective(Ex: np.ndarray, Ez: np.ndarray, log_sigma: float, K: np.ndarray,
                   lambda_c: float = 1.0) -> tuple[float, tuple[np.ndarray, np.ndarray, float]]:
    """f and its Euclidean gradient ``(∂f/∂E_x (m, k), ∂f/∂E_z (n, k), ∂f/∂η)`` at σ = exp(``log_sigma``).

    ``K`` is the dense m×n target kernel K_c (the mean runs over all its m·n entries).
    """
    Ex = np.asarray(Ex, dtype=np.float64)
    Ez = np.asarray(Ez, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    m, n = K.shape
    if Ex.shape[0] != m or Ez.shape[0] != n or Ex.shape[1] != Ez.shape[1]:
        raise UserError(f"E_x {Ex.shape} and E_z {Ez.shape} do not match the {m}×{n} kernel")
    inv_s2 = float(np.exp(-2.0 * float(log_sigma)))
    D = squared_distances(Ex, Ez)
    Ke = np.exp(-D * inv_s2)
    res = Ke - K
    scale = lambda_c / (m * n)
    f = scale * float(np.einsum("ij,ij->", res, res))
    H = res * Ke  # (k − K) ∘ k
    G = (-2.0 * scale * inv_s2) * H
    gx = 2.0 * (G.sum(axis=1)[:, None] * Ex - G @ Ez)
    gz = 2.0 * (G.sum(axis=0)[:, None] * Ez - G.T @ Ex)
    geta = 4.0 * scale * inv_s2 * float(np.einsum("ij,ij->", H, D))
    return f, (gx, gz, geta)
