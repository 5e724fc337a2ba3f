"""COVA models as estimators (COVA Sec. 3.3). This module holds COVA-E1; E2-E4, P1-P4 and eigen-COVA follow."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..inputs import Inputs
from ..objectives import o_dist_c, o_dist_l
from .base import Embedder


def e1_system(W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray, alpha: float,
              zeta: float = 0.0) -> tuple[sp.csc_matrix, np.ndarray]:
    """The sparse SPD system ``M Z = B`` of COVA-E1 (Eq. 14 / D.3, corrected by spec T1).

    ``M = α𝐃(R) + (1−α)𝐋(W) + ζI`` and ``B = α R Υ``; the printed Eq. 14 omits the α on the right-hand side.
    ``nnz(M) = l + nnz(W)``: no dense l×l matrix.
    """
    degree = np.asarray(W.sum(axis=1)).ravel()
    diag = alpha * R.sum(axis=1) + (1.0 - alpha) * degree + zeta
    M = sp.diags(diag, format="csc") - (1.0 - alpha) * sp.csc_matrix(W)
    return M.tocsc(), alpha * (R @ prototypes)


def e1_objective(Z: np.ndarray, W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray,
                 alpha: float) -> tuple[float, np.ndarray]:
    """f(Z) = α O_dist^(C)(Z) + (1 − α) O_dist^(L)(Z) (Eq. 13 with the E1 pair of rules), value and gradient."""
    fc, gc = o_dist_c(Z, R, prototypes)
    fl, gl = o_dist_l(Z, W)
    return alpha * fc + (1.0 - alpha) * fl, alpha * gc + (1.0 - alpha) * gl


class CovaE1(Embedder):
    """COVA-E1: distance cohort rule + distance local rule, solved in closed form.

    ``Z* = α [α𝐃(R) + (1−α)𝐋(W) + ζI]⁻¹ R Υ`` (Eq. 14 with the factor α restored, spec §3.2).

    Parameters
    ----------
    alpha : weight of the cohort rule, in [0, 1].
    zeta : ridge ζ; ``None`` means 0 when M is already SPD (every sample has a positive confidence row sum,
        which guarantees it) and ``1e-10·trace(M)/l`` otherwise (spec §3.2).
    solver : ``"direct"`` (sparse LU of the SPD matrix, scipy's SuperLU), ``"cg"`` (conjugate gradients with a
        Jacobi preconditioner, relative residual ``tol``), ``"dense"`` (``numpy.linalg.solve``, only for
        l ≤ 5,000, for tests) or ``"auto"`` (direct up to 50,000 samples, CG above: LU fill-in grows
        with l while CG stays O(nnz) memory).
    tol : CG relative residual.
    """

    def __init__(self, alpha: float = 0.5, zeta: float | None = None, solver: str = "auto", tol: float = 1e-10):
        self.alpha = alpha
        self.zeta = zeta
        self.solver = solver
        self.tol = tol

    def fit(self, inputs: Inputs) -> "CovaE1":
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {self.alpha}")
        if self.solver not in ("auto", "direct", "cg", "dense"):
            raise ValueError(f"solver must be one of ['auto', 'cg', 'dense', 'direct'], got {self.solver!r}")
        W, R, P = inputs.W, inputs.R, inputs.prototypes
        l = W.shape[0]
        zeta = self.zeta
        if zeta is None:
            zeta = 0.0
            if self.alpha == 0.0 or np.any(R.sum(axis=1) <= 0.0):
                M0, _ = e1_system(W, R, P, self.alpha)
                zeta = 1e-10 * M0.diagonal().sum() / l
        M, B = e1_system(W, R, P, self.alpha, zeta)
        solver = self.solver
        if solver == "auto":
            solver = "direct" if l <= 50_000 else "cg"
        if solver == "dense":
            if l > 5_000:
                raise ValueError(f"solver='dense' builds an l×l matrix; refused for l = {l} > 5,000")
            Z = np.linalg.solve(M.toarray(), B)
        elif solver == "direct":
            Z = spla.splu(M, permc_spec="MMD_AT_PLUS_A").solve(B)
        else:
            Z = _jacobi_cg(M, B, self.tol)
        self.embedding_ = np.ascontiguousarray(Z)
        self.prototypes_ = np.asarray(P, dtype=np.float64)
        self.zeta_ = zeta
        return self


def _jacobi_cg(M: sp.csc_matrix, B: np.ndarray, tol: float) -> np.ndarray:
    """Solve ``M Z = B`` column by column with Jacobi-preconditioned conjugate gradients."""
    inv_diag = 1.0 / M.diagonal()
    precond = spla.LinearOperator(M.shape, matvec=lambda v: inv_diag * v, dtype=np.float64)
    Z = np.empty_like(B)
    for j in range(B.shape[1]):
        x, info = spla.cg(M, B[:, j], rtol=tol, atol=0.0, M=precond, maxiter=20 * M.shape[0])
        if info != 0:
            raise RuntimeError(f"COVA-E1: conjugate gradients did not converge for column {j} (info={info})")
        Z[:, j] = x
    return Z
