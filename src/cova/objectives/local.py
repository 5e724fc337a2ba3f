"""Local-rule objectives O^(L): preservation of the neighbour graph W (COVA Eqs. 1, 2).

Conventions: W is a scipy.sparse l×l matrix, **symmetric** (the Laplacian gradients below hold for symmetric W
only; symmetrise ½(W + Wᵀ) and renormalise first), zero diagonal, unit sum.

O_KL^(L) with the joint p_s = W is t-SNE's KL divergence with P = W; :func:`o_kl_l` evaluates it with
:func:`cova.objectives.kl.tsne_kl_sparse` (sparse attraction over nnz(W), exact / FFT / Barnes–Hut repulsion).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import UserError
from .kl import (
    AUTO_EXACT_MAX_SAMPLES,
    BH_THETA,
    BLOCK_ENTRIES,
    FFT_DEFAULTS,
    REPULSION_METHODS,
    kl_entropy,
    kl_repulsion,
    resolve_repulsion_method,
    tsne_kl_sparse,
)
from .threads import PARALLEL_MIN_WORK, kernel_threads

__all__ = ["o_dist_l", "o_kl_l", "o_kl_l_conditional", "CONDITIONAL_MAX_SAMPLES", "AUTO_EXACT_MAX_SAMPLES",
           "BH_THETA", "BLOCK_ENTRIES", "FFT_DEFAULTS", "REPULSION_METHODS", "PARALLEL_MIN_WORK", "kernel_threads",
           "kl_entropy", "kl_repulsion", "resolve_repulsion_method"]

#: Largest l for which :func:`o_kl_l_conditional` may build its dense l×l matrices.
CONDITIONAL_MAX_SAMPLES = 5_000


def o_dist_l(Z: np.ndarray, W: sp.spmatrix) -> tuple[float, np.ndarray]:
    """O_dist^(L) of COVA Eq. 1 and its gradient (Table A.1).

    ``O = ½ Σ_ij w_ij ‖z_i − z_j‖² = tr(Zᵀ𝐋(W)Z)``, gradient ``2𝐋(W)Z``. Valid for symmetric W only:
    W must be symmetrised before it gets here. Cost O(nnz(W)·k).
    """
    degree = np.asarray(W.sum(axis=1)).ravel()
    LZ = degree[:, None] * Z - W @ Z
    return float(np.sum(Z * LZ)), 2.0 * LZ


def o_kl_l(Z: np.ndarray, W: sp.spmatrix, *, method: str = "auto", entropy: float | None = None,
           need_value: bool = True, **method_options) -> tuple[float, np.ndarray]:
    """O_KL^(L) of COVA Eq. 2 with the joint p_s = W, and its gradient (Table A.1, Eqs. A.18–A.34).

    ``q_ij = (1 + ‖z_i − z_j‖²)⁻¹`` (q_ii = 0) and ``O = Σ_{i≠j} w_ij ln(w_ij / (q_ij / Σ_{a≠b} q_ab))``: t-SNE's
    KL with P = W, computed by :func:`cova.objectives.kl.tsne_kl_sparse` (same parameters). The gradient is
    ``4𝐋(G)Z`` with ``G = (W − (Σw)·Q/ΣQ) ∘ Q``: Eq. A.34 with the normaliser's sums over all pairs and the
    factor 4 (docs/algorithms.md); Σw = 1 for the unit-sum W the pipeline passes.
    """
    return tsne_kl_sparse(Z, W, method=method, entropy=entropy, need_value=need_value, **method_options)


def o_kl_l_conditional(Z: np.ndarray, W: sp.spmatrix) -> tuple[float, np.ndarray]:
    """O_KL^(L) with the *conditional* p_s of Eq. 2 (p(i|j) = w_ij / Σ_s w_sj): value and gradient.

    ``P^c`` is W column-normalised and ``Q^c`` is Q column-normalised (q_ii = 0);
    ``O = Σ_j Σ_{i≠j} P^c_ij ln(P^c_ij / Q^c_ij)`` and the gradient is ``2𝐋(G_c + G_cᵀ)Z`` with
    ``G_c = (P^c − Q^c) ∘ Q`` (not in the paper; derived in docs/algorithms.md). A column of W that sums to zero (an isolated
    sample) carries no distribution: it contributes nothing to the value, and its Q^c column is dropped from G_c
    so the gradient stays consistent.

    Dense O(l²) memory: refused (ValueError) for l > :data:`CONDITIONAL_MAX_SAMPLES`.
    """
    Z = np.asarray(Z, dtype=float)
    l = Z.shape[0]
    if l > CONDITIONAL_MAX_SAMPLES:
        raise UserError(f"o_kl_l_conditional builds dense l×l matrices; refused for l = {l} > "
                         f"{CONDITIONAL_MAX_SAMPLES:,} (use the joint o_kl_l, which is blocked)")
    d2 = np.zeros((l, l))
    for dim in range(Z.shape[1]):
        diff = Z[:, dim, None] - Z[None, :, dim]
        d2 += diff * diff
    Q = 1.0 / (1.0 + d2)
    np.fill_diagonal(Q, 0.0)
    Wd = sp.csr_matrix(W).toarray()
    np.fill_diagonal(Wd, 0.0)
    col_w = Wd.sum(axis=0)
    has_mass = col_w > 0
    Pc = np.divide(Wd, col_w, out=np.zeros_like(Wd), where=has_mass[None, :])
    col_q = Q.sum(axis=0)
    Qc = (Q / col_q) * has_mass[None, :]
    positive = Pc > 0
    value = (float(np.sum(Pc[positive] * np.log(Pc[positive]))) + float(np.sum(Pc * np.log1p(d2)))
             + float(np.sum(has_mass * np.log(col_q))))
    G = (Pc - Qc) * Q
    S = G + G.T
    grad = 2.0 * (S.sum(axis=1)[:, None] * Z - S @ Z)
    return value, grad
