"""Jacobi-preconditioned conjugate gradients for a diagonal-minus-sparse SPD system with several right-hand sides
(the solver of COVA-E1's Eq. 14 / D.3 above a few thousand samples)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..progress import Progress


def jacobi_cg(W: sp.spmatrix, diag: np.ndarray, c: float, B: np.ndarray, tol: float,
               X0: np.ndarray | None = None) -> np.ndarray:
    """Solve ``(𝐃(diag) − c W) Z = B`` for every column of B with Jacobi-preconditioned conjugate gradients.

    Written here rather than calling ``scipy.sparse.linalg.cg`` (one right-hand side per call): the columns
    are iterated together, so each iteration reads W once for all of them (one sparse × (l, k) product
    instead of k sparse × vector products; W is the memory-bound part at 70,000 samples) and M is never
    assembled. Each column is plain PCG (Saad, Alg. 9.1) from ``X0`` (zeros by default), stopped at
    ‖r‖ ≤ tol·‖b‖ as scipy's ``rtol``; a converged column is frozen while the others go on. Raises after 20·l
    iterations."""
    W = sp.csr_matrix(W)
    d = diag[:, None]
    inv = 1.0 / d

    def apply_m(V: np.ndarray) -> np.ndarray:
        return d * V - c * (W @ V)

    X = np.zeros_like(B, dtype=np.float64) if X0 is None else np.array(X0, dtype=np.float64)
    Rr = B - apply_m(X)
    Zr = inv * Rr
    P = Zr.copy()
    rz = np.einsum("ij,ij->j", Rr, Zr)
    stop = tol * np.linalg.norm(B, axis=0)
    progress = Progress(f"block Jacobi-CG, {B.shape[1]} columns", 20 * W.shape[0]).start()
    for _ in range(20 * W.shape[0]):
        live = np.linalg.norm(Rr, axis=0) > stop
        if not live.any():
            progress.done()
            return X
        progress.tick(unconverged_columns=int(live.sum()))
        MP = apply_m(P)
        a = np.divide(rz, np.einsum("ij,ij->j", P, MP), out=np.zeros_like(rz), where=live)
        X += a * P
        Rr -= a * MP
        Zr = inv * Rr
        rz_new = np.einsum("ij,ij->j", Rr, Zr)
        P = Zr + np.divide(rz_new, rz, out=np.zeros_like(rz), where=live) * P
        rz = rz_new
    raise RuntimeError(f"COVA-E1: conjugate gradients did not converge in {20 * W.shape[0]} iterations")
