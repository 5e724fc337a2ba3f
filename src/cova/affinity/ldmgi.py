"""The LDMGI matrix (Yang, Xu, Nie, Yan & Zhuang 2010, "Image clustering using local discriminant models and global
integration", Sec. 2.2), from points or from a distance matrix; the embedding method is
:class:`cova.methods.baselines.LDMGI`, the cohort prototype generator of COVA App. H.7 is ``make_prototypes(kind=
"ldmgi")``.

For every sample i the clique N_i = {x_i and its k − 1 nearest neighbours} (self first) gives the local data matrix
X_i ∈ R^{d×k}. With the centring matrix H_k = I_k − 11ᵀ/k the local discriminant model's matrix is

    L_i = H_k (H_k X_iᵀ X_i H_k + λ I_k)⁻¹ H_k,

and the global integration is L = Σ_i S_i L_i S_iᵀ (S_i the clique's selection matrix), symmetric PSD with L1 = 0.
L_i depends on the clique only through its centred Gram matrix H_k X_iᵀ X_i H_k, which a Euclidean distance matrix
gives without coordinates (classical scaling: −½ H_k D_i^(2) H_k, D_i^(2) the squared distances within the
clique): :func:`ldmgi_matrix_from_distances` is the same matrix for data given only by distances, e.g. the
cohort proximities of COVA App. H.7. Written by hand: no maintained library implements LDMGI.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh

from ..errors import UserError
from .knn import nearest_neighbors

__all__ = ["local_matrices", "ldmgi_matrix", "ldmgi_matrix_from_distances", "ldmgi_embedding", "drop_constant"]

# Work in blocks of cliques so that the (b, k, d) tensor stays ≈ 2**22 numbers.
_BLOCK_ELEMENTS: int = 1 << 22


def local_matrices(X: np.ndarray, cliques: np.ndarray, lam: float) -> np.ndarray:
    """L_i = H_k (H_k X_iᵀ X_i H_k + λI)⁻¹ H_k for every clique (rows of ``cliques``, (l, k) indices); returns
    (l, k, k). Computed in blocks; H_k X_iᵀX_i H_k is the Gram matrix of the clique's centred points."""
    X = np.asarray(X, dtype=np.float64)
    l, k = cliques.shape
    d = X.shape[1]
    b = max(1, _BLOCK_ELEMENTS // (k * d))
    out = np.empty((l, k, k), dtype=np.float64)
    for s in range(0, l, b):  # blocks of cliques
        Xi = X[cliques[s:s + b]]  # (b, k, d): clique members as rows, i.e. X_iᵀ
        Xi = Xi - Xi.mean(axis=1, keepdims=True)  # H_k X_iᵀ
        out[s:s + b] = _from_gram(Xi @ Xi.transpose(0, 2, 1), lam)
    return out


def _from_gram(G: np.ndarray, lam: float) -> np.ndarray:
    """L_i = H (G_i + λI)⁻¹ H for a stack (b, k, k) of centred clique Gram matrices G_i."""
    k = G.shape[-1]
    H = np.eye(k) - 1.0 / k
    Li = H @ np.linalg.inv(G + lam * np.eye(k)) @ H
    return 0.5 * (Li + Li.transpose(0, 2, 1))


def _check_clique(n_neighbors: int, lam: float, l: int) -> tuple[int, float]:
    """The clique size k (an integer in [2, l]) and λ (finite, > 0), or a ValueError naming the parameter."""
    k = int(n_neighbors)
    if k != n_neighbors or not 2 <= k <= l:
        raise UserError(f"n_neighbors (clique size k) must be an integer in [2, l = {l}], got {n_neighbors!r}")
    lam = float(lam)
    if not (np.isfinite(lam) and lam > 0):
        raise UserError(f"lam (λ) must be finite and > 0, got {lam}")
    return k, lam


def ldmgi_matrix(X: np.ndarray, n_neighbors: int = 10, lam: float = 1.0, *, random_state: int = 0) -> sp.csr_matrix:
    """The LDMGI matrix L = Σ_i S_i L_i S_iᵀ (sparse CSR, symmetric PSD, L1 = 0) with cliques of size
    k = ``n_neighbors`` (x_i and its k − 1 nearest neighbours, exact search) and regulariser λ = ``lam``."""
    X = np.asarray(X, dtype=np.float64)
    l = X.shape[0]
    k, lam = _check_clique(n_neighbors, lam, l)
    ind, _ = nearest_neighbors(X, k - 1, method="exact", random_state=random_state)
    cliques = np.concatenate([np.arange(l)[:, None], ind], axis=1)
    return _integrate(local_matrices(X, cliques, lam), cliques, l)


def ldmgi_matrix_from_distances(D: np.ndarray, n_neighbors: int = 10, lam: float = 1.0) -> sp.csr_matrix:
    """The LDMGI matrix of points given by their distance matrix ``D`` (l × l, symmetric, zero diagonal): cliques
    are each row's k − 1 smallest off-diagonal distances (ties broken by index), and each clique's centred Gram
    matrix is −½ H_k D_i^(2) H_k with any negative eigenvalue set to 0 (the Gram matrix of the clique's classical
    scaling; a non-Euclidean D, e.g. a graph distance, has some). For a Euclidean D this equals
    :func:`ldmgi_matrix` of any points with these distances."""
    D = np.asarray(D, dtype=np.float64)
    l = D.shape[0]
    if D.ndim != 2 or D.shape != (l, l) or not np.all(np.isfinite(D)):
        raise UserError(f"D must be a finite square distance matrix, got shape {D.shape}")
    k, lam = _check_clique(n_neighbors, lam, l)
    others = D + np.diag(np.full(l, np.inf))
    ind = np.argsort(others, axis=1, kind="stable")[:, : k - 1]
    cliques = np.concatenate([np.arange(l)[:, None], ind], axis=1)
    D2 = D[cliques[:, :, None], cliques[:, None, :]] ** 2  # (l, k, k) squared distances within each clique
    H = np.eye(k) - 1.0 / k
    w, V = np.linalg.eigh(-0.5 * H @ D2 @ H)
    G = (V * np.maximum(w, 0.0)[:, None, :]) @ V.transpose(0, 2, 1)
    return _integrate(_from_gram(G, lam), cliques, l)


def _integrate(Li: np.ndarray, cliques: np.ndarray, l: int) -> sp.csr_matrix:
    """L = Σ_i S_i L_i S_iᵀ as a sparse symmetric matrix."""
    k = cliques.shape[1]
    rows = np.repeat(cliques, k, axis=1).ravel()  # (i, a, b) -> cliques[i, a]
    cols = np.tile(cliques, (1, k)).ravel()  # (i, a, b) -> cliques[i, b]
    L = sp.csr_matrix((Li.ravel(), (rows, cols)), shape=(l, l))  # duplicates are summed
    L = (0.5 * (L + L.T)).tocsr()
    L.sum_duplicates()
    L.sort_indices()
    return L


def drop_constant(L: sp.spmatrix, V: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` non-trivial directions of span(V), V the n + 1 smallest eigenvectors of L (L1 = 0, so the constant
    vector lies in that span): project out 1/√l, keep the n leading left singular vectors of the remainder, and
    rotate them to the eigenvectors of the projected L (Rayleigh–Ritz), ascending. For a connected graph this is
    exactly eigenvectors 2..n+1; for a disconnected one (several zero eigenvalues) it picks, among the null-space
    directions, the one orthogonal to 1 -- unique up to sign for two components -- instead of whatever basis the
    eigen-solver returned."""
    l = V.shape[0]
    c = np.full(l, 1.0 / np.sqrt(l))
    Vp = V - np.outer(c, c @ V)
    U = np.linalg.svd(Vp, full_matrices=False)[0][:, :n]
    T = U.T @ (L @ U)
    _, R = np.linalg.eigh(0.5 * (T + T.T))
    return U @ R


def ldmgi_embedding(L: sp.spmatrix, n_components: int = 2, eigen_solver: str = "auto",
                    random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The LDMGI embedding of ``L``: the eigenvectors of its ``n_components`` smallest non-trivial eigenvalues
    (:func:`drop_constant`), each with its largest-magnitude entry positive, and the ``n_components`` + 1 smallest
    eigenvalues. ``eigen_solver``: ``"dense"`` (``numpy.linalg.eigh``), ``"arpack"`` (shift-invert around
    σ = −10⁻³·mean(diag L), start vector from ``random_state``) or ``"auto"`` (dense up to 2,000 rows)."""
    n = int(n_components)
    l = L.shape[0]
    solver = ("dense" if l <= 2000 else "arpack") if eigen_solver == "auto" else eigen_solver
    if solver == "dense":
        w, V = np.linalg.eigh(L.toarray())
        w, V = w[: n + 1], V[:, : n + 1]
    else:
        sigma = -1e-3 * float(L.diagonal().mean())
        v0 = np.random.default_rng(int(random_state)).uniform(-1.0, 1.0, l)
        w, V = eigsh(L.tocsc(), k=n + 1, sigma=sigma, which="LM", v0=v0)
        order = np.argsort(w)
        w, V = w[order], V[:, order]
    Z = drop_constant(L, V, n)
    signs = np.sign(Z[np.argmax(np.abs(Z), axis=0), np.arange(n)])
    signs[signs == 0] = 1.0
    return np.ascontiguousarray(Z * signs), w
