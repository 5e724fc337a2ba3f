"""The package's κ-nearest-neighbour graph between a few points and its spectral (Laplacian eigenmap) embedding.

* :func:`knn_graph`: Δ(·, κ) of COVA Eq. G.1 — A_ij = 1 iff j is among the κ nearest (smallest distance, or
  largest similarity) other rows of row i; returned as the symmetric boolean A OR Aᵀ with a zero diagonal. Ties
  go to the lower index (stable sort). Dense: meant for cohort-sized inputs (c up to a few thousand).
* :func:`spectral_embedding`: the eigenvectors of the normalised Laplacian of a non-negative symmetric affinity S
  with the smallest non-zero eigenvalues, rescaled by D^{-1/2} (Belkin & Niyogi 2003; Ng, Jordan & Weiss 2002
  without their row normalisation), i.e. the solutions of (D − S) f = λ D f with fᵀDf = 1.
* :func:`laplacian_eigenvectors`: the eigenvectors of the unnormalised Laplacian D − W with the smallest non-zero
  eigenvalues (sparse shift-invert Lanczos), the initialisation of COVA-E2–E4.
* :func:`locality_order`: a reverse Cuthill–McKee order of a sparse graph's nodes, in which a node's neighbours
  are close to it (the row order of the gradient descents on kNN graphs), with :func:`permute_graph` and
  :func:`cova.permutations.unpermute_rows` to move in and out of it.
* :func:`geodesic_distances`: shortest-path lengths over the undirected k-NN graph with Euclidean edge lengths
  (Isomap's geodesic distances; the input distances of CDA, NeRV Sec. 4.1).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components, reverse_cuthill_mckee, shortest_path

from ..errors import UserError
from ..permutations import inverse_permutation

__all__ = ["knn_graph", "spectral_embedding", "laplacian_eigenvectors", "fix_signs", "geodesic_distances",
           "locality_order", "permute_graph", "SPECTRAL_SOLVERS"]

#: Solvers of :func:`spectral_embedding`: dense LAPACK, or scikit-learn's sparse eigensolvers.
SPECTRAL_SOLVERS: tuple[str, ...] = ("dense", "arpack", "lobpcg", "amg")


def knn_graph(M: np.ndarray, kappa: int, *, kind: Literal["distance", "similarity"] = "distance") -> np.ndarray:
    """Symmetric κ-NN graph (boolean (c, c), zero diagonal) of a square distance or similarity matrix ``M``.

    Row i's neighbours are the κ other rows with the smallest ``M[i, j]`` (``kind="distance"``) or the largest
    (``kind="similarity"``); the diagonal of M is ignored. Ties go to the lower index. With κ ≥ c − 1 the graph is
    complete.
    """
    M = np.array(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise UserError(f"M must be a square matrix, got shape {M.shape}")
    if kind == "distance":
        np.fill_diagonal(M, np.inf)
    elif kind == "similarity":
        M = -M
        np.fill_diagonal(M, np.inf)
    else:
        raise UserError(f"kind must be one of ['distance', 'similarity'], got {kind!r}")
    c = M.shape[0]
    nbrs = np.argsort(M, axis=1, kind="stable")[:, :kappa]
    A = np.zeros((c, c), dtype=bool)
    A[np.arange(c)[:, None], nbrs] = True
    np.fill_diagonal(A, False)
    return A | A.T


def fix_signs(Z: np.ndarray) -> None:
    """In place: flip each column so that its entry of largest |value| is positive (first such entry on ties)."""
    idx = np.argmax(np.abs(Z), axis=0)
    s = np.sign(Z[idx, np.arange(Z.shape[1])])
    s[s == 0] = 1.0
    Z *= s[None, :]


def spectral_embedding(S: Any, n_components: int = 2, *, solver: str = "arpack",
                       random_state: int | None = 0) -> np.ndarray:
    """Laplacian eigenmap of the affinity ``S`` (l×l, symmetric, non-negative, dense or sparse): (l, n_components).

    solver
        ``"dense"``: generalised symmetric eigenproblem (D − S) f = λ D f by LAPACK (``scipy.linalg.eigh``); every
        eigenvalue ≤ 1e-9 counts as zero (one per connected component) and is skipped; fewer than
        ``n_components`` non-zero eigenvalues leave zero columns. Every row needs a positive degree. Sign
        convention of :func:`fix_signs`. For small l (cohort prototypes).
        ``"arpack"``, ``"lobpcg"``, ``"amg"``: ``sklearn.manifold.spectral_embedding(S, norm_laplacian=True,
        drop_first=True)`` with that eigen-solver, seeded by ``random_state`` (deterministic); only the first
        (trivial) eigenvector is dropped, so a disconnected S gives scikit-learn's warning and an ill-defined
        embedding.
    Columns are D-orthonormal, not centred.
    """
    n = int(n_components)
    if n != n_components or n < 1:
        raise UserError(f"n_components must be a positive integer, got {n_components!r}")
    if solver not in SPECTRAL_SOLVERS:
        raise UserError(f"eigen_solver must be one of {list(SPECTRAL_SOLVERS)}, got {solver!r}")
    if solver == "dense":
        S = np.asarray(S.toarray() if hasattr(S, "toarray") else S, dtype=np.float64)
        deg = S.sum(axis=1)
        if np.any(deg <= 0):
            iso = np.flatnonzero(deg <= 0).tolist()
            raise UserError(f"rows {iso} have zero affinity to every other row; the Laplacian eigenmap is undefined")
        evals, evecs = scipy.linalg.eigh(np.diag(deg) - S, np.diag(deg))
        keep = np.flatnonzero(evals > 1e-9)[:n]
        Z = np.zeros((S.shape[0], n))
        Z[:, : keep.size] = evecs[:, keep]
        fix_signs(Z)
        return Z
    from sklearn.manifold import spectral_embedding as _sk_spectral_embedding

    l = S.shape[0]
    if n + 1 >= l:
        raise UserError(f"n_components + 1 must be < l = {l}, got n_components = {n}")
    Z = _sk_spectral_embedding(S, n_components=n, eigen_solver=solver,
                               random_state=None if random_state is None else int(random_state),
                               norm_laplacian=True, drop_first=True)
    return np.ascontiguousarray(Z, dtype=np.float64)


def laplacian_eigenvectors(W: sp.spmatrix, k: int, random_state: int | None = 0) -> np.ndarray:
    """The k eigenvectors of the unnormalised Laplacian 𝐋(W) = 𝐃(W) − W with the smallest *non-zero* eigenvalues,
    as (l, k) (COVA App. F, initialisation (ii) of E2–E4).

    One zero eigenvalue per connected component of W is skipped. Sparse shift-invert Lanczos (``eigsh``,
    σ slightly below 0, where 𝐋(W) − σI is SPD) with a seeded start vector; dense ``eigh`` for l ≤ 200.
    Sign convention of :func:`fix_signs`.
    """
    from .weights import laplacian  # the weight graphs declare their options: imported where a Laplacian is needed

    L = laplacian(W).astype(np.float64)
    l = L.shape[0]
    n_comp = int(connected_components(W, directed=False)[0])
    m = k + n_comp
    if m > l:
        raise UserError(f"init='laplacian' needs k + #components ≤ l, got {k} + {n_comp} > {l}")
    if l <= 200 or m >= l - 1:
        _, vecs = np.linalg.eigh(L.toarray())
    else:
        scale = float(np.abs(L.diagonal()).max()) or 1.0
        v0 = np.random.default_rng(random_state).uniform(0.5, 1.5, l)
        vals, vecs = spla.eigsh(L.tocsc(), k=m, sigma=-1e-6 * scale, which="LM", v0=v0)
        vecs = vecs[:, np.argsort(vals)]
    V = np.array(vecs[:, n_comp:m])
    fix_signs(V)
    return V


def joined_knn_graph(X: np.ndarray, n_neighbors: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """The k-nearest-neighbour graph of X's rows with Euclidean edge lengths, in one piece, and the (n, k) neighbour
    indices (:func:`cova.affinity.knn.nearest_neighbors`, exact).

    Row i holds its ``n_neighbors`` nearest others. A graph in several pieces (COIL-20's objects are separate
    manifolds) is joined as scikit-learn's ``Isomap`` joins it: every pair of pieces gets one edge, both ways,
    between its two closest points (scikit-learn does this in a private helper, hence our own loop). Used by the
    methods that need a connected graph: Isomap's geodesics (:func:`geodesic_distances`) and landmark MVU, whose
    variance is unbounded on a graph in pieces.
    """
    from scipy.spatial.distance import cdist

    from .knn import nearest_neighbors

    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    k = int(n_neighbors)
    if not 1 <= k < n:
        raise UserError(f"n_neighbors must be in [1, n - 1] = [1, {n - 1}]; got {n_neighbors}")
    idx, dist = nearest_neighbors(X, k, method="exact")
    G = sp.lil_matrix(sp.csr_matrix((dist.ravel(), (np.repeat(np.arange(n), k), idx.ravel())), shape=(n, n)))
    n_comp, comp = connected_components(G.tocsr(), directed=False)
    members = [np.flatnonzero(comp == c) for c in range(n_comp)]
    for a in range(n_comp):
        for b in range(a):
            D = cdist(X[members[a]], X[members[b]])
            i, j = np.unravel_index(int(np.argmin(D)), D.shape)
            G[members[a][i], members[b][j]] = G[members[b][j], members[a][i]] = D[i, j]
    return G.tocsr(), idx


def locality_order(A: Any) -> np.ndarray:
    """A reverse Cuthill–McKee order (scipy) of the nodes of the sparse graph A (n × n; the pattern of A + Aᵀ when A
    is not symmetric).

    A gradient over a kNN graph gathers the coordinates of every row's neighbours; in the input's order (rows of a
    data set are often shuffled) they are scattered over all of the embedding and, once it outgrows the cache,
    nearly every gather is a cache miss. In this order a row's neighbours lie close to it (on cohort_manifold at
    200,000 points the median |i − j| over the non-zeros of W falls from 58,554 to 650)."""
    A = sp.csr_matrix(A)
    pattern = A if (A != A.T).nnz == 0 else (A + A.T).tocsr()
    return reverse_cuthill_mckee(pattern, symmetric_mode=True).astype(np.int64)


def permute_graph(A: Any, order: np.ndarray) -> sp.csr_matrix:
    """A[order][:, order] as a CSR matrix with sorted indices (row i of the result is row ``order[i]`` of A)."""
    A = sp.csr_matrix(A)
    permuted = sp.csr_matrix((A.data, inverse_permutation(order)[A.indices], A.indptr), shape=A.shape)[order]
    permuted.sort_indices()
    return permuted


def geodesic_distances(X: np.ndarray, n_neighbors: int) -> np.ndarray:
    """Dense (n, n) shortest-path lengths over the undirected graph of :func:`joined_knn_graph`: the geodesic
    distances of Isomap (Tenenbaum et al. 2000), by Dijkstra's algorithm; equal to
    ``Isomap(n_neighbors).fit(X).dist_matrix_``. Inherently O(n²) in memory: the caller guards n.
    """
    G, _ = joined_knn_graph(X, n_neighbors)
    return shortest_path(G, method="D", directed=False)
