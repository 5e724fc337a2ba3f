"""Semidefinite programmes over a Gram matrix K, and the coordinates a Gram matrix gives.

Structure preserving embedding (SPE; Shaw & Jebara 2009, "Structure preserving embedding", ICML, Sec. 3, the
k-nearest-neighbour form of its SDP):

    max_K  tr(K A) − C ξ
    s.t.   D_il(K) ≥ D_ij(K) − ξ   for every triple (i, j, l): j a neighbour of i, l not,
           K ⪰ 0,  tr(K) ≤ 1,  Σ_ij K_ij = 0,  ξ ≥ 0,

with D_ij(K) = K_ii + K_jj − 2 K_ij the squared distance K implies and A the neighbour graph. COVA App. H.7 uses
it as a prototype generator (:func:`cova.cohorts.prototypes.spe_prototypes`).

Landmark maximum variance unfolding (LMVU; Weinberger, Packer & Saul 2005, "Nonlinear dimensionality reduction by
semidefinite programming and kernel matrix factorization", AISTATS, Sec. 3) is maximum variance unfolding (MVU;
Weinberger & Saul 2006, IJCV 70(1), Eqs. 5-8: max tr(K) s.t. D_ij(K) = ‖x_i − x_j‖² for neighbour pairs, K ⪰ 0,
Σ K = 0) with K = Q L Qᵀ: Q (n × m) is the linear reconstruction of every point
from m landmarks and L (m × m) the landmarks' Gram matrix. The neighbour distances become upper bounds,
D_ij(Q L Qᵀ) ≤ ‖x_i − x_j‖², since the reconstruction cannot meet them exactly, and tr(Q L Qᵀ) is maximised over
L ⪰ 0 with Σ_ij (Q L Qᵀ)_ij = 0.

The programmes are stated in cvxpy and solved by SCS, a first-order conic solver: written by hand is only the
statement of each programme, which no library offers. SCS, unlike an interior-point solver, needs no strictly
feasible point, which the centring constraint Σ K = 0 rules out (1 is then in K's null space).
"""

from __future__ import annotations

import numpy as np

__all__ = ["gram_embedding", "spe_gram", "lmvu_gram", "SDP_SOLVER_OPTIONS"]

#: SCS's settings for every programme here (SCS is deterministic for fixed data); ``eps`` is the tolerance of each
#: call, tight enough that the embedding's coordinates settle to well below the display's resolution.
SDP_SOLVER_OPTIONS: dict[str, float | int] = {"max_iters": 100_000}


def gram_embedding(K: np.ndarray, n_components: int = 2) -> np.ndarray:
    """Coordinates of a centred Gram matrix: the top ``n_components`` eigenvectors of K times the square roots of
    their eigenvalues (negative ones, from rounding or a non-Euclidean K, clipped to 0), so that ZZᵀ is K's best
    rank-``n_components`` approximation. Deterministic signs: in every column the entry of largest absolute value
    is positive (first such entry on ties)."""
    from ..affinity.graphs import fix_signs

    K = np.asarray(K, dtype=np.float64)
    K = 0.5 * (K + K.T)
    evals, evecs = np.linalg.eigh(K)
    order = np.argsort(evals)[::-1][:n_components]
    Z = evecs[:, order] * np.sqrt(np.clip(evals[order], 0.0, None))[None, :]
    fix_signs(Z)
    return Z


def _pair_distance(K, i: np.ndarray, j: np.ndarray):
    """The cvxpy expression D_ij(K) = K_ii + K_jj − 2 K_ij for index arrays i, j (K's vec is column-major)."""
    import cvxpy as cp

    n = K.shape[0]
    v = cp.vec(K, order="F")
    return v[i * (n + 1)] + v[j * (n + 1)] - 2.0 * v[j * n + i]


def spe_gram(triples: np.ndarray, n: int, *, C: float = 1e3) -> tuple[np.ndarray, float]:
    """SPE's Gram matrix (module docstring) for ``n`` points and the (T, 3) int triples (i, j, l), "j is a
    neighbour of i and l is not" (:func:`cova.cohorts.prototypes.ordinal_triples` gives them); A is the 0/1 graph
    of the (i, j) pairs. Returns (K, ξ): ξ > 0 means no K keeps every neighbour nearer than every non-neighbour
    within the trace bound at this C. With no triples the programme has no structure to keep and K = 0."""
    import cvxpy as cp

    t = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    if t.shape[0] == 0 or n < 2:
        return np.zeros((n, n)), 0.0
    A = np.zeros((n, n))
    A[t[:, 0], t[:, 1]] = 1.0
    A = 0.5 * (A + A.T)
    K = cp.Variable((n, n), PSD=True)
    xi = cp.Variable(nonneg=True)
    constraints = [
        cp.trace(K) <= 1.0,
        cp.sum(K) == 0.0,
        _pair_distance(K, t[:, 0], t[:, 2]) >= _pair_distance(K, t[:, 0], t[:, 1]) - xi,
    ]
    problem = cp.Problem(cp.Maximize(cp.trace(K @ A) - float(C) * xi), constraints)
    _solve(problem, "SPE", 1e-7)
    return np.asarray(K.value, dtype=np.float64), float(xi.value)


def _solve(problem, what: str, eps: float) -> None:
    import cvxpy as cp

    problem.solve(solver=cp.SCS, eps_abs=eps, eps_rel=eps, **SDP_SOLVER_OPTIONS)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"{what}'s semidefinite programme was not solved (SCS status {problem.status!r})")


def _unit_mean(sq_distances: np.ndarray) -> tuple[np.ndarray, float]:
    """The squared distances divided by their mean, and that mean: the programme is solved on unit-mean data (SCS's
    tolerances are absolute and relative to the data's scale; unscaled, it needed minutes instead of a second on 200
    points) and its Gram matrix scaled back, which is exact, since the programme is homogeneous in it."""
    d2 = np.asarray(sq_distances, dtype=np.float64)
    scale = float(d2.mean()) if d2.size and d2.mean() > 0 else 1.0
    return d2 / scale, scale


def lmvu_gram(Q: np.ndarray, edges: np.ndarray, sq_distances: np.ndarray, *, eps: float = 1e-5) -> np.ndarray:
    """LMVU's landmark Gram matrix L (module docstring) for the (n, m) reconstruction Q, the (E, 2) neighbour pairs
    and their squared input distances. Each D_ij(Q L Qᵀ) = u_ijᵀ L u_ij with u_ij = q_i − q_j, so the programme has
    m(m+1)/2 unknowns and E linear constraints whatever n is."""
    import cvxpy as cp

    Q = np.asarray(Q, dtype=np.float64)
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    d2, scale = _unit_mean(sq_distances)
    m = Q.shape[1]
    L = cp.Variable((m, m), PSD=True)
    s = Q.sum(axis=0)
    constraints = [s @ L @ s == 0.0]
    if e.shape[0]:
        U = Q[e[:, 0]] - Q[e[:, 1]]
        M = np.einsum("ea,eb->eab", U, U).reshape(len(e), m * m)
        constraints.append(M @ cp.vec(L, order="F") <= d2)
    problem = cp.Problem(cp.Maximize(cp.trace(Q.T @ Q @ L)), constraints)
    _solve(problem, "LMVU", eps)
    return scale * np.asarray(L.value, dtype=np.float64)
