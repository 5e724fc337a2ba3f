"""Cohort-rule objectives O^(C): how far each sample sits from the prototypes (COVA Eqs. 7, 8)."""

from __future__ import annotations

import math

import numba
import numpy as np

from .threads import kernel_threads


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


def o_kl_c(Z: np.ndarray, R: np.ndarray, prototypes: np.ndarray, *,
           need_value: bool = True) -> tuple[float, np.ndarray]:
    """O_KL^(C) of COVA Eq. 8 **in the normalised form of Eq. A.8** and its gradient (Table A.1).

    ``t_ij = (1 + ‖z_i − υ_j‖²)⁻¹`` and ``O = Σ_ij r_ij ln(r_ij / (t_ij / Σ_ab t_ab))`` with ``0·ln 0 = 0``; the
    normaliser runs over all l·c pairs. Eq. 8 as printed leaves t unnormalised inside the log, which makes the
    gradient pure attraction (every sample collapses onto its prototypes); A.8 and the derivation A.9–A.17 use the
    normalised version implemented here.

    The value is ``Σ r ln r + Σ r ln(1 + d²) + (Σ r)·ln Σ t`` (constants included, for line searches). The
    gradient is ``2𝐃(H)Z − 2HΥ`` with ``H = (R − (Σr)·T/ΣT) ∘ T``; for the unit-sum R the pipeline passes,
    ``Σr = 1`` and H reduces to ``(R − T/ΣT) ∘ T``. Keeping ``Σr`` makes value and gradient agree
    for any R ≥ 0. Squared distances are computed as ``Σ_k (z_ik − υ_jk)²`` (exact, non-negative).
    Cost O(l·c·k) time, O(l·k) extra memory (two passes of compiled kernels, threads over samples; per-sample
    partial sums are added in a fixed order, so results do not depend on the number of threads).
    ``need_value=False`` (the momentum optimiser between log points) skips the two logarithms per pair and returns
    NaN as the value; the gradient is the same.
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    R = np.ascontiguousarray(R, dtype=np.float64)
    P = np.ascontiguousarray(prototypes, dtype=np.float64)
    l = Z.shape[0]
    row_t, row_cross, row_ent = np.empty(l), np.empty(l), np.empty(l)
    grad = np.empty_like(Z)
    mass = float(R.sum())
    with kernel_threads(R.size):
        _kl_c_sums(Z, R, P, row_t, row_cross, row_ent, bool(need_value))
        sum_t = float(row_t.sum())
        _kl_c_grad(Z, R, P, mass / sum_t, grad)
    if not need_value:
        return float("nan"), grad
    value = float(row_ent.sum()) + float(row_cross.sum()) + mass * math.log(sum_t)
    return float(value), grad


@numba.njit(parallel=True, cache=True)
def _kl_c_sums(Z, R, P, row_t, row_cross, row_ent, with_value):  # pragma: no cover - jit
    """Per sample i: Σ_j t_ij and, ``with_value``, Σ_j r_ij ln(1 + d²_ij), Σ_j r_ij ln r_ij (r > 0)."""
    l, k = Z.shape
    c = P.shape[0]
    for i in numba.prange(l):
        st = 0.0
        cross = 0.0
        ent = 0.0
        for j in range(c):
            d2 = 0.0
            for dim in range(k):
                diff = Z[i, dim] - P[j, dim]
                d2 += diff * diff
            st += 1.0 / (1.0 + d2)
            if with_value:
                r = R[i, j]
                cross += r * math.log1p(d2)
                if r > 0.0:
                    ent += r * math.log(r)
        row_t[i] = st
        row_cross[i] = cross
        row_ent[i] = ent


@numba.njit(parallel=True, cache=True)
def _kl_c_grad(Z, R, P, scale, grad):  # pragma: no cover - jit
    """grad_i = 2 Σ_j h_ij (z_i − υ_j) with h_ij = (r_ij − scale·t_ij) t_ij, scale = Σr / ΣT."""
    l, k = Z.shape
    c = P.shape[0]
    for i in numba.prange(l):
        for dim in range(k):
            grad[i, dim] = 0.0
        for j in range(c):
            d2 = 0.0
            for dim in range(k):
                diff = Z[i, dim] - P[j, dim]
                d2 += diff * diff
            t = 1.0 / (1.0 + d2)
            h = (R[i, j] - scale * t) * t
            for dim in range(k):
                grad[i, dim] += 2.0 * h * (Z[i, dim] - P[j, dim])
