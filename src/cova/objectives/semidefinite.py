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

Colored maximum variance unfolding (MUHSIC, "maximum unfolding via the Hilbert-Schmidt independence criterion";
Song, Smola, Borgwardt & Gretton 2007, "Colored maximum variance unfolding", NIPS 20) replaces MVU's variance
tr(K) by the dependence tr(HKHL) between the embedding's Gram matrix K and a kernel L of side information, here the
class labels (H = I − 11ᵀ/n centres; MVU is the case L = I). We solve its fast form, whose parameters the NeRV paper
lists (Venna et al. 2010, Sec. 5.3: the regularisation ν, the number of neighbours and the number of graph-Laplacian
eigenvectors): the graph Laplacian factorisation of Weinberger, Sha, Zhu & Saul ("Graph Laplacian regularization for
large-scale semidefinite programming", NIPS 19, 2006), K = Q A Qᵀ with Q (n × m) the bottom non-constant
eigenvectors of the k-NN graph's Laplacian, A (m × m) ⪰ 0, and the neighbour distances as a quadratic penalty of
weight ν instead of equalities (Q A Qᵀ cannot meet them exactly):

    max_A  tr(H Q A Qᵀ H L) − ν Σ_(i,j)∈N (D_ij(Q A Qᵀ) − ‖x_i − x_j‖²)²   s.t.  A ⪰ 0.

Q ⟂ 1 makes K centred (Σ K = 0) without a constraint. The penalty is a sum over the E neighbour pairs of squares of
affine functions of A's m(m+1)/2 free entries; it is folded, exactly, into one square of m(m+1)/2 terms through a QR
factorisation of the E × m(m+1)/2 pair matrix, so the programme's size does not grow with n or E.

The programmes are stated in cvxpy and solved by SCS, a first-order conic solver: written by hand is only the
statement of each programme, which no library offers. SCS, unlike an interior-point solver, needs no strictly
feasible point, which the centring constraint Σ K = 0 rules out (1 is then in K's null space).
"""

from __future__ import annotations

import numpy as np

from ..progress import Progress

__all__ = ["gram_embedding", "spe_gram", "lmvu_gram", "muhsic_gram", "SDP_SOLVER_OPTIONS"]

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


def _solve(problem, what: str, eps: float, max_iters: int | None = None) -> None:
    import cvxpy as cp

    options = dict(SDP_SOLVER_OPTIONS) if max_iters is None else {**SDP_SOLVER_OPTIONS, "max_iters": int(max_iters)}
    with Progress(f"{what}: one SCS solve of the semidefinite programme"):  # SCS's own log is too verbose
        problem.solve(solver=cp.SCS, eps_abs=eps, eps_rel=eps, **options)
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


def muhsic_gram(Q: np.ndarray, edges: np.ndarray, sq_distances: np.ndarray, label_factor: np.ndarray | None = None,
                *, nu: float = 1.0, eps: float = 1e-6, max_iters: int | None = None) -> np.ndarray:
    """MUHSIC's m × m matrix A (module docstring), K = Q_c A Q_cᵀ with Q_c = HQ, for the (n, m) basis Q, the (E, 2)
    neighbour pairs and their squared input distances.

    The label kernel is given by a factor Φ, L = ΦΦᵀ (``label_factor``, (n, r)); ``None`` is L = I, which makes the
    dependence the variance tr(K) (Laplacian-regularised MVU). The dependence term is linear in A,
    tr(H Q A Qᵀ H L) = tr(A C) with C = (ΦᵀHQ)ᵀ(ΦᵀHQ). Each D_ij(K) = u_ijᵀ A u_ij with u_ij = q_i − q_j is linear in
    A's upper triangle a, D = M a, and ‖M a − d‖² = ‖R a − Q_Mᵀ d‖² + ‖d − Q_M Q_Mᵀ d‖² for the thin QR factorisation
    M = Q_M R; the constant is dropped. The programme is solved on squared distances divided by their mean (so ν
    weighs squared residuals in units of the mean squared neighbour distance, whatever the data's units) and A is
    returned in the data's units (times that mean). Raises ``RuntimeError`` when SCS does not solve it."""
    import cvxpy as cp

    Q = np.asarray(Q, dtype=np.float64)
    Q = Q - Q.mean(axis=0)
    n, m = Q.shape
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    d2, scale = _unit_mean(sq_distances)
    B = Q if label_factor is None else np.asarray(label_factor, dtype=np.float64).T @ Q
    C = B.T @ B
    A = cp.Variable((m, m), PSD=True)
    objective = cp.trace(C @ A)
    if e.shape[0]:
        iu, ju = np.triu_indices(m)
        U = Q[e[:, 0]] - Q[e[:, 1]]
        M = U[:, iu] * U[:, ju] * np.where(iu == ju, 1.0, 2.0)[None, :]  # D_e = Σ_{a≤b} M_e,ab A_ab
        QM, R = np.linalg.qr(M)
        # the upper triangle of A, column-major vec index b·m + a for entry (a, b), a ≤ b
        select = np.zeros((iu.size, m * m))
        select[np.arange(iu.size), ju * m + iu] = 1.0
        objective = objective - float(nu) * cp.sum_squares((R @ select) @ cp.vec(A, order="F") - QM.T @ d2)
    problem = cp.Problem(cp.Maximize(objective))
    _solve(problem, "MUHSIC", eps, max_iters)
    return scale * np.asarray(A.value, dtype=np.float64)
