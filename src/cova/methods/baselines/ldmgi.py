"""LDMGI embedding (Yang, Xu, Nie, Yan & Zhuang 2010, "Image clustering using local discriminant models and global
integration"), written by hand (one of COVA's existing methods: Figs. H.7, H.13, H.18 and the H.7 prototype generator).

For every sample i the clique N_i = {x_i and its k − 1 nearest neighbours} (Euclidean, self first) gives the
local data matrix X_i ∈ R^{d×k} (clique members as columns). With the centring matrix H_k = I_k − 11ᵀ/k, the
local discriminant model's Laplacian-like matrix is (LDMGI paper, Sec. 2.2)

    L_i = H_k (H_k X_iᵀ X_i H_k + λ I_k)⁻¹ H_k       (k×k; X_iᵀX_i is the clique's k×k Gram matrix),

and the global integration is L = Σ_i S_i L_i S_iᵀ, S_i ∈ {0,1}^{l×k} the clique's selection matrix (assembled as
a sparse l×l matrix with ≤ l·k² stored entries). Each L_i is symmetric PSD (H_k is PSD and the inverse is PD) and
annihilates 1_k (H_k 1 = 0), so L is symmetric PSD with L1 = 0. The clustering relaxation of LDMGI minimises
tr(YᵀLY) under YᵀY = I; the visualisation takes the eigenvectors of the 2 smallest **non-trivial** eigenvalues
(the constant eigenvector is dropped, as in Laplacian eigenmaps: the 3 smallest eigenvectors are computed, the
constant direction is projected out of their span and the rest is re-diagonalised, which also makes the result
well defined when the kNN cliques split the data into two components).

Eigen-solver: ``"dense"`` (``numpy.linalg.eigh``) for l ≤ 2,000 under ``"auto"``, else ARPACK
(``scipy.sparse.linalg.eigsh``) in shift-invert mode around σ = −10⁻³·mean(diag L) (L − σI is positive definite,
so the sparse LU is well posed, and the eigenvalues nearest σ are the smallest ones), with a start vector drawn
from ``random_state`` (deterministic). Each returned eigenvector's sign is fixed so that its largest-magnitude
entry is positive.

Defaults [ours; COVA gives none]: k = 10, λ = 1. λ acts on the scale of X (the Gram matrices), so it is comparable
across data sets only after a common scaling.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh

from ...affinity.knn import nearest_neighbors
from ...constraints import POSITIVE, POSITIVE_INT, SEED, StrOptions, integer
from ...inputs import Inputs
from ..base import Embedder

__all__ = ["LDMGI", "ldmgi_matrix", "local_matrices"]

# Work in blocks of cliques so that the (b, k, d) tensor stays ≈ 2**22 numbers.
_BLOCK_ELEMENTS: int = 1 << 22


def local_matrices(X: np.ndarray, cliques: np.ndarray, lam: float) -> np.ndarray:
    """L_i = H_k (H_k X_iᵀ X_i H_k + λI)⁻¹ H_k for every clique (rows of ``cliques``, (l, k) indices); returns
    (l, k, k). Computed in blocks; H_k X_iᵀX_i H_k is the Gram matrix of the clique's centred points."""
    X = np.asarray(X, dtype=np.float64)
    l, k = cliques.shape
    d = X.shape[1]
    H = np.eye(k) - 1.0 / k
    out = np.empty((l, k, k), dtype=np.float64)
    b = max(1, _BLOCK_ELEMENTS // (k * d))
    eye = lam * np.eye(k)
    for s in range(0, l, b):  # blocks of cliques
        e = min(s + b, l)
        Xi = X[cliques[s:e]]  # (b, k, d): clique members as rows, i.e. X_iᵀ
        Xi = Xi - Xi.mean(axis=1, keepdims=True)  # H_k X_iᵀ
        G = Xi @ Xi.transpose(0, 2, 1)  # H_k X_iᵀ X_i H_k
        G += eye
        inv = np.linalg.inv(G)
        Li = H @ inv @ H
        out[s:e] = 0.5 * (Li + Li.transpose(0, 2, 1))
    return out


def ldmgi_matrix(X: np.ndarray, n_neighbors: int = 10, lam: float = 1.0, *, random_state: int = 0) -> sp.csr_matrix:
    """The LDMGI matrix L = Σ_i S_i L_i S_iᵀ (sparse CSR, symmetric PSD, L1 = 0) with cliques of size
    k = ``n_neighbors`` (x_i and its k − 1 nearest neighbours, exact search) and regulariser λ = ``lam``."""
    X = np.asarray(X, dtype=np.float64)
    l = X.shape[0]
    k = int(n_neighbors)
    if k != n_neighbors or not 2 <= k <= l:
        raise ValueError(f"n_neighbors (clique size k) must be an integer in [2, l = {l}], got {n_neighbors!r}")
    lam = float(lam)
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"lam (λ) must be finite and > 0, got {lam}")
    ind, _ = nearest_neighbors(X, k - 1, method="exact", random_state=random_state)
    cliques = np.concatenate([np.arange(l)[:, None], ind], axis=1)
    Li = local_matrices(X, cliques, lam)
    rows = np.repeat(cliques, k, axis=1).ravel()  # (i, a, b) -> cliques[i, a]
    cols = np.tile(cliques, (1, k)).ravel()  # (i, a, b) -> cliques[i, b]
    L = sp.csr_matrix((Li.ravel(), (rows, cols)), shape=(l, l))  # duplicates are summed
    L = (0.5 * (L + L.T)).tocsr()
    L.sum_duplicates()
    L.sort_indices()
    return L


def _drop_constant(L: sp.spmatrix, V: np.ndarray, n: int) -> np.ndarray:
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


class LDMGI(Embedder):
    """LDMGI embedding (module docstring).

    Parameters
    ----------
    n_neighbors : clique size k = 10 (x_i plus its 9 nearest neighbours) [assumption].
    lam : λ = 1.0 [assumption]. n_components : 2.
    eigen_solver : ``"auto"`` (dense for l ≤ 2,000, else ARPACK shift-invert), ``"dense"`` or ``"arpack"``.
    random_state : seed of ARPACK's start vector (and of nothing else).

    Attributes: embedding_ (l, n_components), eigenvalues_ (the n_components + 1 smallest, the first ≈ 0),
    laplacian_ (L).
    """

    _parameter_constraints = {
        "n_neighbors": [integer(2, None)],
        "lam": POSITIVE,
        "n_components": POSITIVE_INT,
        "eigen_solver": [StrOptions({"auto", "dense", "arpack"})],
        "random_state": SEED,
    }

    def __init__(self, n_neighbors: int = 10, lam: float = 1.0, n_components: int = 2, eigen_solver: str = "auto",
                 random_state: int = 0):
        self.n_neighbors = n_neighbors
        self.lam = lam
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def fit(self, inputs: Inputs) -> "LDMGI":
        self._validate_params()
        n = self.n_components
        X = np.asarray(inputs.X, dtype=np.float64)
        l = X.shape[0]
        if n + 1 >= l:
            raise ValueError(f"n_components + 1 must be < l = {l}")
        L = ldmgi_matrix(X, self.n_neighbors, self.lam, random_state=self.random_state)
        solver = self.eigen_solver
        if solver == "auto":
            solver = "dense" if l <= 2000 else "arpack"
        if solver == "dense":
            w, V = np.linalg.eigh(L.toarray())
            w, V = w[: n + 1], V[:, : n + 1]
        else:
            sigma = -1e-3 * float(L.diagonal().mean())
            v0 = np.random.default_rng(int(self.random_state)).uniform(-1.0, 1.0, l)
            w, V = eigsh(L.tocsc(), k=n + 1, sigma=sigma, which="LM", v0=v0)
            order = np.argsort(w)
            w, V = w[order], V[:, order]
        Z = _drop_constant(L, V, n)
        signs = np.sign(Z[np.argmax(np.abs(Z), axis=0), np.arange(n)])
        signs[signs == 0] = 1.0
        self.laplacian_ = L
        self.eigenvalues_ = w
        self.embedding_ = np.ascontiguousarray(Z * signs)
        return self
