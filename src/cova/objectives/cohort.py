"""Cohort-rule objectives O^(C): how far each sample sits from the prototypes (COVA Eqs. 7, 8)."""

from __future__ import annotations

import numpy as np


def o_dist_c(Z: np.ndarray, R: np.ndarray, prototypes: np.ndarray) -> tuple[float, np.ndarray]:
    """O_dist^(C) of COVA Eq. 7 and its gradient (Table A.1).

    ``O = Σ_ij r_ij ‖z_i − υ_j‖² = tr(Zᵀ𝐃(R)Z) − 2 tr(ZᵀRΥ) + tr(Υᵀ𝐃(Rᵀ)Υ)``, gradient ``2𝐃(R)Z − 2RΥ``.
    The full value (constant included) is returned so that line searches compare true values.
    Cost O(l·c·k); no l×l array.
    """
    row = R.sum(axis=1)
    RU = R @ prototypes
    value = float(np.sum(row * np.einsum("ik,ik->i", Z, Z)) - 2.0 * np.sum(Z * RU)
                  + np.sum(R.sum(axis=0) * np.einsum("jk,jk->j", prototypes, prototypes)))
    grad = 2.0 * (row[:, None] * Z - RU)
    return value, grad


def o_kl_c(Z: np.ndarray, R: np.ndarray, prototypes: np.ndarray) -> tuple[float, np.ndarray]:
    """O_KL^(C) of COVA Eq. 8 **in the normalised form of Eq. A.8** (spec T11) and its gradient (Table A.1).

    ``t_ij = (1 + ‖z_i − υ_j‖²)⁻¹`` and ``O = Σ_ij r_ij ln(r_ij / (t_ij / Σ_ab t_ab))`` with ``0·ln 0 = 0``; the
    normaliser runs over all l·c pairs. Eq. 8 as printed leaves t unnormalised inside the log, which makes the
    gradient pure attraction (every sample collapses onto its prototypes); A.8 and the derivation A.9–A.17 use the
    normalised version implemented here.

    The value is ``Σ r ln r + Σ r ln(1 + d²) + (Σ r)·ln Σ t`` (constants included, for line searches). The
    gradient is ``2𝐃(H)Z − 2HΥ`` with ``H = (R − (Σr)·T/ΣT) ∘ T``; for the unit-sum R the pipeline passes,
    ``Σr = 1`` and this is the spec's ``H = (R − T/ΣT) ∘ T``. Keeping ``Σr`` makes value and gradient agree
    for any R ≥ 0. Squared distances are computed as ``Σ_k (z_ik − υ_jk)²`` (exact, non-negative).
    Cost O(l·c·k) time and memory; no l×l array.
    """
    Z = np.asarray(Z, dtype=float)
    R = np.asarray(R, dtype=float)
    P = np.asarray(prototypes, dtype=float)
    d2 = np.zeros((Z.shape[0], P.shape[0]))
    for dim in range(Z.shape[1]):
        diff = Z[:, dim, None] - P[None, :, dim]
        d2 += diff * diff
    T = 1.0 / (1.0 + d2)
    sum_t = float(T.sum())
    mass = float(R.sum())
    positive = R > 0
    value = (float(np.sum(R[positive] * np.log(R[positive]))) + float(np.sum(R * np.log1p(d2)))
             + mass * np.log(sum_t))
    H = (R - (mass / sum_t) * T) * T
    grad = 2.0 * (H.sum(axis=1)[:, None] * Z - H @ P)
    return float(value), grad
