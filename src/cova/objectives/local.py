"""Local-rule objectives O^(L): preservation of the neighbour graph W (COVA Eqs. 1, 2)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def o_dist_l(Z: np.ndarray, W: sp.spmatrix) -> tuple[float, np.ndarray]:
    """O_dist^(L) of COVA Eq. 1 and its gradient (Table A.1).

    ``O = ½ Σ_ij w_ij ‖z_i − z_j‖² = tr(Zᵀ𝐋(W)Z)``, gradient ``2𝐋(W)Z``. Valid for symmetric W only
    (spec T10): W must be symmetrised before it gets here. Cost O(nnz(W)·k).
    """
    degree = np.asarray(W.sum(axis=1)).ravel()
    LZ = degree[:, None] * Z - W @ Z
    return float(np.sum(Z * LZ)), 2.0 * LZ
