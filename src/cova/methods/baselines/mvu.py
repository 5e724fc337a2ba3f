"""Landmark maximum variance unfolding (LMVU; Weinberger, Packer & Saul 2005), an unsupervised baseline of NeRV
Table 2, and colored MVU (MUHSIC; Song, Smola, Borgwardt & Gretton 2007), a supervised baseline of NeRV Sec. 5.3
(Fig. 13, Table 3, Fig. 14; Venna et al. 2010).

LMVU solves a semidefinite programme over the landmarks' Gram matrix (:func:`cova.objectives.semidefinite.lmvu_gram`,
stated there with the papers' equations) and reads the display off the top eigenvectors of K = Q L Qᵀ. The
neighbour pairs are the symmetrised k-nearest-neighbour graph of X (an edge when either point is among the other's
k nearest), its pieces joined as Isomap joins them, their squared Euclidean distances the upper bounds. The
programme has m(m+1)/2 unknowns for m landmarks, whatever n is. Each point is reconstructed from the landmarks by
the linear map of Weinberger, Packer & Saul (2005, Sec. 3.1): with W the locally linear (LLE) reconstruction
weights of every point from its k neighbours and Φ = (I − W)ᵀ(I − W), the non-landmarks' coordinates minimise the
reconstruction error given the landmarks', Q_u = −Φ_uu⁻¹ Φ_ul, and Q_l = I. Exact MVU is not offered:
``docs/decisions.md`` ("MVU and LMVU") has the reason, ``docs/history.md`` the measurements.

MUHSIC maximises the dependence between the embedding and the class labels under a penalty on the neighbour
distances, over K = Q A Qᵀ with Q the bottom eigenvectors of the same joined k-NN graph's Laplacian
(:func:`cova.objectives.semidefinite.muhsic_gram`, stated there). It is fitted on the rows it is given (a split's
training rows); new points are placed as the NeRV paper says, by linear interpolation: the LLE reconstruction weights
of each new point from its k nearest training rows (:func:`cova.affinity.reconstruction.barycentre_weights`) applied to their coordinates.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ...affinity.graphs import fix_signs, joined_knn_graph, laplacian_eigenvectors
from ...affinity.knn import pair_sq_distances, query_neighbors
from ...affinity.reconstruction import barycentre_weights, reconstruction_weights
from ...constraints import POSITIVE, POSITIVE_INT, SEED
from ...errors import UserError
from ...inputs import Inputs
from ...objectives.semidefinite import gram_embedding, lmvu_gram, muhsic_gram
from ..base import Embedder, at_least_components, fits_samples, neighbours_below_samples, supervised_arrays

log = logging.getLogger("cova")

__all__ = ["LMVU", "MUHSIC", "neighbour_pairs", "landmark_reconstruction", "class_kernel_factor", "laplacian_basis",
           "interpolate"]


def neighbour_pairs(X: np.ndarray, n_neighbors: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The symmetrised k-NN graph of X in one piece (:func:`cova.affinity.graphs.joined_knn_graph`: pieces joined
    by their closest points, as Isomap joins them; on a graph in pieces the variance is unbounded): (E, 2) pairs
    i < j (sorted), their squared Euclidean distances, and the (l, k) neighbour indices."""
    G, idx = joined_knn_graph(X, n_neighbors)
    U = sp.triu(G + G.T, k=1).tocoo()
    order = np.lexsort((U.col, U.row))
    pairs = np.c_[U.row[order], U.col[order]].astype(np.int64)
    return pairs, pair_sq_distances(np.asarray(X, dtype=np.float64), pairs[:, 0], pairs[:, 1]), idx


def landmark_reconstruction(W: sp.spmatrix, landmarks: np.ndarray) -> np.ndarray:
    """LMVU's (l, m) reconstruction Q from the landmarks (module docstring): Q_l = I, Q_u = −Φ_uu⁻¹ Φ_ul with
    Φ = (I − W)ᵀ(I − W)."""
    l = W.shape[0]
    IW = sp.identity(l, format="csr") - sp.csr_matrix(W)
    Phi = (IW.T @ IW).tocsc()
    land = np.asarray(landmarks, dtype=np.int64)
    rest = np.setdiff1d(np.arange(l), land)
    Q = np.zeros((l, land.size))
    Q[land, np.arange(land.size)] = 1.0
    if rest.size:
        rhs = -Phi[rest][:, land].toarray()
        Q[rest] = spla.splu(Phi[rest][:, rest].tocsc()).solve(rhs)
    return Q


class LMVU(Embedder):
    """Landmark MVU (Weinberger, Packer & Saul 2005): MVU with K = Q L Qᵀ, Q the reconstruction of every point from
    m seeded random landmarks (:func:`landmark_reconstruction`), the k-NN distances as upper bounds
    (:func:`cova.objectives.semidefinite.lmvu_gram`), displayed by K's top eigenvectors.

    Parameters
    ----------
    n_components : display dimension (2).
    n_neighbors : k of the neighbour graph and of the reconstruction weights (NeRV tunes it in 3..9; default 5).
    n_landmarks : m (20; the programme's size grows like m², SCS's time faster: docs/history.md).
    reg : regulariser of the reconstruction weights (1e-3 times the local Gram matrix's trace).
    random_state : seed of the landmark draw.

    ``fit(inputs)`` reads ``inputs.X``. Attributes: ``embedding_``, ``landmarks_``.
    """

    _parameter_constraints = {"n_components": POSITIVE_INT, "n_neighbors": POSITIVE_INT, "n_landmarks": POSITIVE_INT,
                              "reg": POSITIVE, "random_state": SEED}

    _option_rules = (neighbours_below_samples(),
                     at_least_components("n_landmarks", "the display is taken from the landmarks' Gram matrix L "
                                                        "(n_landmarks × n_landmarks)"),
                     fits_samples("n_landmarks", lambda m, n: m <= n, lambda n: f"at most n = {n}",
                                  "the landmarks are drawn from the samples without replacement"))

    def __init__(self, n_components: int = 2, n_neighbors: int = 5, n_landmarks: int = 20, reg: float = 1e-3,
                 random_state: int = 0):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.n_landmarks = n_landmarks
        self.reg = reg
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "LMVU":
        self._validate_params()
        X = np.asarray(inputs.X, dtype=np.float64)  # finite: inputs are checked when they are built
        l, m, k = X.shape[0], int(self.n_landmarks), int(self.n_neighbors)  # n_components ≤ m ≤ l: _option_rules
        pairs, d2, idx = neighbour_pairs(X, k)
        self.landmarks_ = np.sort(np.random.default_rng(int(self.random_state)).choice(l, m, replace=False))
        Q = landmark_reconstruction(reconstruction_weights(X, idx, float(self.reg)), self.landmarks_)
        started = time.perf_counter()
        log.info("lmvu: semidefinite programme over %d landmarks, %d neighbour bounds (SCS)", m, len(pairs))
        L = lmvu_gram(Q, pairs, d2)
        log.info("lmvu: solved in %.1f s", time.perf_counter() - started)
        evals, evecs = np.linalg.eigh(0.5 * (L + L.T))
        B = Q @ (evecs * np.sqrt(np.clip(evals, 0.0, None))[None, :])  # K = B Bᵀ
        B -= B.mean(axis=0)
        _, _, Vt = np.linalg.svd(B, full_matrices=False)
        self.embedding_ = B @ Vt[: int(self.n_components)].T  # K's top eigenvectors times √eigenvalues
        fix_signs(self.embedding_)
        return self


def class_kernel_factor(labels: np.ndarray, labelled: np.ndarray | None = None) -> np.ndarray:
    """Φ (l, c) with ΦΦᵀ = L, the class kernel of MUHSIC: L_ij = 1/n_c when labelled rows i and j are both of class c
    (n_c labelled rows), else 0: the orthogonal projection onto the class indicators, so that tr(HKHL) is the
    between-class part of the variance tr(HKH), at most it. Unlabelled rows have zero rows."""
    y = np.asarray(labels).ravel()
    rows = np.ones(y.size, dtype=bool) if labelled is None else np.asarray(labelled, dtype=bool)
    classes, code = np.unique(y[rows], return_inverse=True)
    Phi = np.zeros((y.size, classes.size))
    Phi[np.flatnonzero(rows), code] = 1.0
    return Phi / np.sqrt(np.maximum(Phi.sum(axis=0), 1.0))[None, :]


def laplacian_basis(X: np.ndarray, n_neighbors: int, n_eigenvectors: int,
                    random_state: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The neighbour pairs of :func:`neighbour_pairs` (pairs, squared distances) and Q (l, m): the m eigenvectors
    with the smallest non-zero eigenvalues of the Laplacian D − W of their 0/1 adjacency W
    (:func:`cova.affinity.graphs.laplacian_eigenvectors`), orthonormal and orthogonal to 1 (the graph is in one
    piece)."""
    pairs, d2, _ = neighbour_pairs(X, n_neighbors)
    l = X.shape[0]
    W = sp.coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(l, l)).tocsr()
    Q = laplacian_eigenvectors(W + W.T, int(n_eigenvectors), random_state=random_state)
    return pairs, d2, Q


def interpolate(X_ref: np.ndarray, Z_ref: np.ndarray, X_new: np.ndarray, n_neighbors: int,
                reg: float = 1e-3) -> np.ndarray:
    """Linear interpolation of new points into an embedding: each row of ``X_new`` gets Σ_j w_j z_j over its
    ``n_neighbors`` nearest rows of ``X_ref`` (:func:`cova.affinity.knn.query_neighbors`), w its LLE reconstruction
    weights from them (:func:`cova.affinity.reconstruction.barycentre_weights`). A new point equal to reference rows is rebuilt exactly by them (equal weights on
    the rows at distance 0), which is the unregularised optimum the regulariser would otherwise blur."""
    X_ref = np.asarray(X_ref, dtype=np.float64)
    X_new = np.asarray(X_new, dtype=np.float64)
    k = min(int(n_neighbors), X_ref.shape[0])
    if X_new.shape[0] == 0:
        return np.zeros((0, Z_ref.shape[1]))
    idx, dist = query_neighbors(X_ref, X_new, k)
    w = barycentre_weights(X_new, X_ref, idx, float(reg))
    same = dist == 0.0
    exact = same.any(axis=1)
    w[exact] = same[exact] / same[exact].sum(axis=1, keepdims=True)
    return np.einsum("qk,qkc->qc", w, np.asarray(Z_ref, dtype=np.float64)[idx])


class MUHSIC(Embedder):
    """Colored maximum variance unfolding (MUHSIC; Song, Smola, Borgwardt & Gretton 2007), the NeRV paper's
    supervised baseline (Venna et al. 2010, Sec. 5.3): the Gram matrix K = Q A Qᵀ over the bottom eigenvectors Q of
    the k-NN graph's Laplacian that maximises tr(HKHL) − ν Σ_(i,j) (D_ij(K) − ‖x_i − x_j‖²)² with L the class
    kernel (:func:`class_kernel_factor`; :func:`cova.objectives.semidefinite.muhsic_gram`), displayed by K's top
    eigenvectors. New points by linear interpolation (:func:`interpolate`).

    Parameters
    ----------
    n_components : display dimension (2).
    n_neighbors : k of the neighbour graph (its Laplacian and distance penalties) and of the interpolation (5).
    n_eigenvectors : m, the Laplacian eigenvectors spanning K (10; A has m(m+1)/2 unknowns).
    nu : ν, the weight of the squared distance residuals, in units of the mean squared neighbour distance (1).
    eps : SCS's absolute and relative tolerance (1e-6).
    max_iters : SCS's iteration limit (100,000).
    reg : regulariser of the interpolation's reconstruction weights (1e-3 times the local Gram matrix's trace).
    random_state : seed of the Lanczos start vector of the Laplacian's eigenvectors.

    ``fit(inputs)`` reads ``inputs.X`` and ``inputs.labels`` (of the rows of ``inputs.labelled`` when given);
    ``transform(X)`` places new samples. Attributes: ``embedding_``, ``gram_factor_`` (A), ``basis_`` (Q).
    """

    required_inputs = ("X", "labels")

    _parameter_constraints = {"n_components": POSITIVE_INT, "n_neighbors": POSITIVE_INT,
                              "n_eigenvectors": POSITIVE_INT, "nu": POSITIVE, "eps": POSITIVE,
                              "max_iters": POSITIVE_INT, "reg": POSITIVE, "random_state": SEED}

    _option_rules = (neighbours_below_samples(),
                     at_least_components("n_eigenvectors", "the display is taken from the Gram matrix over the "
                                                           "n_eigenvectors Laplacian eigenvectors"),
                     fits_samples("n_eigenvectors", lambda m, n: m < n, lambda n: f"at most n − 1 = {n - 1}",
                                  "the Laplacian of the n-node neighbour graph has n − 1 eigenvectors orthogonal to "
                                  "the constant"))

    def __init__(self, n_components: int = 2, n_neighbors: int = 5, n_eigenvectors: int = 10, nu: float = 1.0,
                 eps: float = 1e-6, max_iters: int = 100_000, reg: float = 1e-3, random_state: int = 0):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.n_eigenvectors = n_eigenvectors
        self.nu = nu
        self.eps = eps
        self.max_iters = max_iters
        self.reg = reg
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "MUHSIC":
        self._validate_params()
        X, y, labelled = supervised_arrays(inputs)
        m, k = int(self.n_eigenvectors), int(self.n_neighbors)  # n_components ≤ m < l: _option_rules
        pairs, d2, Q = laplacian_basis(X, k, m, int(self.random_state))
        started = time.perf_counter()
        log.info("muhsic: semidefinite programme over %d Laplacian eigenvectors (%d unknowns), %d neighbour "
                 "penalties (SCS)", m, m * (m + 1) // 2, len(pairs))
        A = muhsic_gram(Q, pairs, d2, class_kernel_factor(y, labelled), nu=float(self.nu), eps=float(self.eps),
                        max_iters=int(self.max_iters))
        log.info("muhsic: solved in %.1f s", time.perf_counter() - started)
        self.basis_, self.gram_factor_ = Q, A
        # Q has orthonormal columns, so K = Q A Qᵀ's top eigenvectors are Q times A's
        self.embedding_ = Q @ gram_embedding(A, int(self.n_components))
        fix_signs(self.embedding_)
        self._X = X
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """New samples' coordinates by linear interpolation from their k nearest training rows (:func:`interpolate`)."""
        if not hasattr(self, "_X"):
            raise UserError("MUHSIC is not fitted yet; call fit first")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self._X.shape[1]:
            raise UserError(f"X must have {self._X.shape[1]} columns, got shape {X.shape}")
        return interpolate(self._X, self.embedding_, X, int(self.n_neighbors), float(self.reg))
