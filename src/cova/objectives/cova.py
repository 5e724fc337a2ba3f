"""COVA's objectives (COVA Sec. 3.1–3.3, Appendix A, D): the closed-form system and objective of E1 (Eqs. 13–14 /
D.3), the rule-pair objective of E2–E4 and P1–P4 (Eq. 13, Table A.1) and the eigen-COVA Gram blocks, matrix
O_eig and objective (Eqs. 20–25, Eq. 25 corrected). The rules themselves are in :mod:`.cohort` and :mod:`.local`."""

from __future__ import annotations

import numpy as np
import scipy.linalg.blas
import scipy.sparse as sp

from ..errors import UserError
from .cohort import o_dist_c, o_kl_c
from .kl import REPULSION_METHODS
from .local import o_dist_l, o_kl_l

# ============================================================================================================
# COVA-E1 (Eq. 14 / D.3)
# ============================================================================================================

def e1_system(W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray, alpha: float,
              zeta: float = 0.0) -> tuple[sp.csc_matrix, np.ndarray]:
    """The sparse SPD system ``M Z = B`` of COVA-E1 (Eq. 14 / D.3, corrected: docs/papers.md).

    ``M = α𝐃(R) + (1−α)𝐋(W) + ζI`` and ``B = α R Υ``; the printed Eq. 14 omits the α on the right-hand side.
    ``nnz(M) = l + nnz(W)``: no dense l×l matrix.
    """
    M = sp.diags(e1_diagonal(W, R, alpha, zeta), format="csc") - (1.0 - alpha) * sp.csc_matrix(W)
    return M.tocsc(), alpha * (R @ prototypes)


def e1_diagonal(W: sp.spmatrix, R: np.ndarray, alpha: float, zeta: float = 0.0) -> np.ndarray:
    """The diagonal ``α rowsum(R) + (1−α) degree(W) + ζ`` of :func:`e1_system`'s M."""
    return alpha * R.sum(axis=1) + (1.0 - alpha) * np.asarray(W.sum(axis=1)).ravel() + zeta


def e1_objective(Z: np.ndarray, W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray,
                 alpha: float) -> tuple[float, np.ndarray]:
    """f(Z) = α O_dist^(C)(Z) + (1 − α) O_dist^(L)(Z) (Eq. 13 with the E1 pair of rules), value and gradient."""
    fc, gc = o_dist_c(Z, R, prototypes)
    fl, gl = o_dist_l(Z, W)
    return alpha * fc + (1.0 - alpha) * fl, alpha * gc + (1.0 - alpha) * gl


# ============================================================================================================
# COVA-E2–E4 and P1–P4: the rule pairs of Eq. 13 (Sec. 3.3)
# ============================================================================================================

#: The (O^(C), O^(L)) rule pair of every model (Sec. 3.3).
RULES: dict[str, tuple[str, str]] = {
    "e1": ("dist", "dist"), "e2": ("kl", "kl"), "e3": ("dist", "kl"), "e4": ("kl", "dist"),
    "p1": ("dist", "dist"), "p2": ("kl", "kl"), "p3": ("dist", "kl"), "p4": ("kl", "dist"),
}
#: Repulsion back ends of O_KL^(L) (``kl_method=``, :func:`cova.objectives.resolve_repulsion_method`).
KL_METHODS = {"auto", *REPULSION_METHODS}


def cova_objective(Z: np.ndarray, W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray, alpha: float,
                   cohort_rule: str, local_rule: str, kl_method: str = "auto",
                   kl_entropy: float | None = None, need_value: bool = True) -> tuple[float, np.ndarray]:
    """f(Z) = α O^(C)(Z) + (1 − α) O^(L)(Z) (Eq. 13) and its Euclidean gradient (Table A.1).

    ``cohort_rule`` ∈ {"dist" (Eq. 7), "kl" (Eq. 8 in the normalised A.8 form)}; ``local_rule`` ∈ {"dist" (Eq. 1),
    "kl" (Eq. 2, joint p_s = W, repulsion by ``kl_method``)}. A term whose weight is 0 is not evaluated.
    ``kl_entropy``: Σ w ln w of W when precomputed (:func:`cova.objectives.kl_entropy`; constant in Z).
    ``need_value=False``: the O_KL^(L) and O_KL^(C) values (logarithms per edge of W and per sample–prototype pair)
    are skipped and the returned value is NaN; the gradient is unchanged (used by the momentum optimiser between log points).
    """
    value, grad = 0.0, np.zeros_like(Z)
    if alpha != 0.0:
        if cohort_rule == "dist":
            fc, gc = o_dist_c(Z, R, prototypes)
        else:
            fc, gc = o_kl_c(Z, R, prototypes, need_value=need_value)
        value, grad = alpha * fc, alpha * gc
    if alpha != 1.0:
        if local_rule == "dist":
            fl, gl = o_dist_l(Z, W)
        else:
            fl, gl = o_kl_l(Z, W, method=kl_method, entropy=kl_entropy, need_value=need_value)
        value, grad = value + (1.0 - alpha) * fl, grad + (1.0 - alpha) * gl
    return float(value), grad



# ============================================================================================================
# eigen-COVA (Sec. 3.2.2, Eqs. 20–25, Table F.3; Eq. 25 corrected)
# ============================================================================================================

def laplacian_gram(F: np.ndarray, W: sp.spmatrix) -> np.ndarray:
    """A_L = Fᵀ𝐋(W)F = Fᵀ𝐃(W)F − (WF)ᵀF (k̃×k̃), by sparse products (O(nnz(W)k̃ + lk̃²), no l×l array).
    Symmetrised to remove round-off."""
    W = sp.csr_matrix(W)
    degree = np.asarray(W.sum(axis=1)).ravel()
    if (W != W.T).nnz == 0:
        # symmetric W: FᵀWF = X + Xᵀ with X = (W_h F)ᵀF, W_h = the strict upper triangle + half the diagonal;
        # half the sparse-dense product, which is memory bound (random rows of F)
        W_h = sp.triu(W, 1, format="csr")
        diag = W.diagonal()
        if np.any(diag != 0):
            W_h = (W_h + sp.diags(0.5 * diag)).tocsr()
        X = np.asarray(W_h @ F).T @ F
        return weighted_gram(F, degree) - (X + X.T)
    X = np.asarray(W @ F).T @ F
    return weighted_gram(F, degree) - 0.5 * (X + X.T)


def weighted_gram(F: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fᵀ𝐃(weights)F (k̃×k̃, exactly symmetric). Non-negative weights (the degrees of W and R): one BLAS ``syrk`` on
    √w·F (half the flops of a GEMM); otherwise a GEMM, symmetrised."""
    F = np.asarray(F, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if np.all(w >= 0):
        G = np.sqrt(w)[:, None] * F
        # (Gᵀ)(Gᵀ)ᵀ with Gᵀ Fortran-ordered: no copy of the l×k̃ array; the upper triangle is filled
        S = scipy.linalg.blas.dsyrk(1.0, G.T, trans=0, lower=0)
        return np.triu(S) + np.triu(S, 1).T
    A = F.T @ (w[:, None] * F)
    return 0.5 * (A + A.T)


def prototype_distance_weights(prototypes: np.ndarray, normalize: bool = True) -> np.ndarray:
    """W_v = [‖υ_i − υ_j‖₂] (c×c, Eq. 22), divided by its sum when ``normalize`` (unit-sum default, not in the
    paper: the raw W_v makes v dominate and Z collapse; docs/papers.md)."""
    P = np.asarray(prototypes, dtype=float)
    diff = P[:, None, :] - P[None, :, :]
    Wv = np.sqrt(np.sum(diff * diff, axis=2))
    if normalize:
        total = Wv.sum()
        if total <= 0:
            raise UserError("all prototypes coincide: W_v sums to 0 and cannot be normalised")
        Wv = Wv / total
    return Wv


def eigen_cova_blocks(F: np.ndarray, W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray,
                      W_v: np.ndarray) -> dict[str, np.ndarray]:
    """The Gram blocks of O_eig, computed once, so that deflation costs no pass over F:
    A_L = Fᵀ𝐋(W)F, A_R = Fᵀ𝐃(R)F, B₀ = FᵀRΥ, C_R = Υᵀ𝐃(Rᵀ)Υ, C_v = Υᵀ𝐋(W_v)Υ."""
    P = np.asarray(prototypes, dtype=float)
    A_R = weighted_gram(F, R.sum(axis=1))
    Lv = np.diag(W_v.sum(axis=1)) - W_v
    C_v = P.T @ Lv @ P
    C_R = P.T @ (R.sum(axis=0)[:, None] * P)
    return {"A_L": laplacian_gram(F, W), "A_R": A_R, "B0": F.T @ (R @ P),
            "C_R": 0.5 * (C_R + C_R.T), "C_v": 0.5 * (C_v + C_v.T)}


def eigen_cova_matrix(blocks: dict[str, np.ndarray], alpha: float, eta: float) -> np.ndarray:
    """O_eig of Eq. 24/25 **with the corrected B = [[0, R], [Rᵀ, 0]]** (docs/papers.md), (k̃+k)×(k̃+k), symmetric:

    ``[[Fᵀ((1−α)𝐋(W) + αη𝐃(R))F, −αη FᵀRΥ], [−αη ΥᵀRᵀF, Υᵀ(αη𝐃(Rᵀ) − α(1−η)𝐋(W_v))Υ]]``.
    """
    O11 = (1.0 - alpha) * blocks["A_L"] + alpha * eta * blocks["A_R"]
    O12 = -alpha * eta * blocks["B0"]
    O22 = alpha * eta * blocks["C_R"] - alpha * (1.0 - eta) * blocks["C_v"]
    return np.block([[O11, O12], [O12.T, O22]])


def eigen_cova_objective(F: np.ndarray, U: np.ndarray, V: np.ndarray, W: sp.spmatrix, R: np.ndarray,
                         prototypes: np.ndarray, W_v: np.ndarray, alpha: float, eta: float) -> float:
    """The eigen-COVA objective of Eq. 23, evaluated term by term (not through O_eig):
    ``αη Σ_ij r_ij ‖z_i − e_j‖² + (1−α) tr(Zᵀ𝐋(W)Z) − α(1−η) ½ Σ_ij w^(v)_ij ‖e_i − e_j‖²`` with Z = FU, E = ΥV."""
    Z = F @ U
    E = np.asarray(prototypes, dtype=float) @ V
    fc, _ = o_dist_c(Z, R, E)
    fl, _ = o_dist_l(Z, W)
    diff = E[:, None, :] - E[None, :, :]
    aux = 0.5 * float(np.sum(W_v * np.sum(diff * diff, axis=2)))
    return alpha * eta * fc + (1.0 - alpha) * fl - alpha * (1.0 - eta) * aux
