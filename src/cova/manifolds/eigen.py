"""The sequential smallest-eigenvector solver of eigen-COVA (COVA Table F.3, with deflation restricted to the
orthogonal complement; docs/papers.md, COVA "eigen-COVA")."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

from ..errors import UserError
from .base import DegenerateSolution


def _excluded_basis(us: list[np.ndarray], vs: list[np.ndarray], k_tilde: int, k: int) -> np.ndarray:
    """Orthonormal basis D (k̃+k, m) of span{[u^(s); 0], [0; v^(s)]} (zero vectors ignored; thin QR)."""
    cols = []
    for vec, top in [(u, True) for u in us] + [(v, False) for v in vs]:
        norm = np.linalg.norm(vec)
        if norm > 0:
            col = np.zeros(k_tilde + k)
            if top:
                col[:k_tilde] = vec / norm
            else:
                col[k_tilde:] = vec / norm
            cols.append(col)
    if not cols:
        return np.zeros((k_tilde + k, 0))
    D, _ = np.linalg.qr(np.column_stack(cols))
    return D


#: eigen_cova_solve runs BLAS/LAPACK on one thread up to this size of O_eig (k̃ + k).
SINGLE_THREAD_SOLVE_MAX = 2048


def eigen_cova_solve(O_eig: np.ndarray, k_tilde: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sequential deflation of Table F.3, restricted to the orthogonal complement
    (docs/papers.md, COVA "eigen-COVA").

    Step t solves the smallest eigenpair of O_eig on the complement of span{[u^(s); 0], [0; v^(s)] : s < t}.
    F^t = FΠ_u and Υ^t = ΥΠ_v (Π the orthogonal projectors onto the complements of the earlier u's and v's, which
    are mutually orthogonal), so O_eig^(t) = Π O_eig Π with Π = blockdiag(Π_u, Π_v) = I − DDᵀ (the "deflation by
    projection" of the efficient form; O(n²m) per step from the Gram matrix, n = k̃+k, m = 2(t−1)). The directions
    in D are exact null vectors of Π O_eig Π (the null-space trap: with no other negative eigenvalue Table F.3 would
    return one of them), so they are shifted out of the way: the solved matrix is Π O_eig Π + ‖O_eig‖₂·DDᵀ, whose
    eigenpairs on the complement are those of the restricted problem. One dense ``eigh`` with
    ``subset_by_index=[0, 0]`` (LAPACK ``syevx``: bisection + inverse iteration, the paper's suggested inverse
    iteration for a single eigenvector) per step; the eigenvector is then projected onto the complement exactly.

    Returns ``P`` ((k̃+k)×k, columns p_t with ‖p_t‖ = 1, sign: largest-magnitude entry positive) and the k
    eigenvalues. Raises ``DegenerateSolution("degenerate: ...")`` (a ValueError) when a restricted smallest eigenvalue is
    ≥ −1e-12·‖O_eig‖₂ (no negative eigenvalue: lower η).
    """
    n = k_tilde + k
    if O_eig.shape != (n, n):
        raise UserError(f"O_eig must be ({n}, {n}), got {O_eig.shape}")
    if n <= SINGLE_THREAD_SOLVE_MAX:
        # small dense problems: multithreaded BLAS-2 in the tridiagonal reduction costs a thread synchronisation per
        # column, 4-40x slower than one thread on busy cores; the thread count changes only round-off
        with threadpool_limits(1):
            return _eigen_cova_solve(O_eig, k_tilde, k)
    return _eigen_cova_solve(O_eig, k_tilde, k)


def _eigen_cova_solve(O_eig: np.ndarray, k_tilde: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = k_tilde + k
    O_eig = 0.5 * (O_eig + O_eig.T)
    ext = scipy.linalg.eigh(O_eig, eigvals_only=True, subset_by_index=[n - 1, n - 1], driver="evx")[0]
    low = scipy.linalg.eigh(O_eig, eigvals_only=True, subset_by_index=[0, 0], driver="evx")[0]
    norm = max(abs(ext), abs(low))
    shift = norm if norm > 0 else 1.0
    us: list[np.ndarray] = []
    vs: list[np.ndarray] = []
    P = np.zeros((n, k))
    eigenvalues = np.zeros(k)
    for t in range(k):
        D = _excluded_basis(us, vs, k_tilde, k)
        if D.shape[1]:
            OD = O_eig @ D
            M = O_eig - D @ OD.T - OD @ D.T + D @ (D.T @ OD + shift * np.eye(D.shape[1])) @ D.T
            M = 0.5 * (M + M.T)
        else:
            M = O_eig
        lam, y = scipy.linalg.eigh(M, subset_by_index=[0, 0], driver="evx")
        lam = float(lam[0])
        if lam >= -1e-12 * norm:
            raise DegenerateSolution(f"degenerate: no negative eigenvalue at step {t + 1} (smallest restricted eigenvalue "
                             f"{lam:.3g}, ‖O_eig‖₂ = {norm:.3g}); lower eta (the cohort-proximity weight η) or "
                             f"strengthen the prototype-spread term")
        p = y[:, 0]
        if D.shape[1]:
            p = p - D @ (D.T @ p)
        p /= np.linalg.norm(p)
        p *= np.sign(p[np.argmax(np.abs(p))])
        P[:, t] = p
        eigenvalues[t] = lam
        us.append(p[:k_tilde])
        vs.append(p[k_tilde:])
    return P, eigenvalues
