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
