"""Landmark maximum variance unfolding (LMVU; Weinberger, Packer & Saul 2005), an unsupervised baseline of NeRV
Table 2.

It solves a semidefinite programme over the landmarks' Gram matrix (:func:`cova.objectives.semidefinite.lmvu_gram`,
stated there with the papers' equations) and reads the display off the top eigenvectors of K = Q L Qᵀ. The
neighbour pairs are the symmetrised k-nearest-neighbour graph of X (an edge when either point is among the other's
k nearest), its pieces joined as Isomap joins them, their squared Euclidean distances the upper bounds. The
programme has m(m+1)/2 unknowns for m landmarks, whatever n is. Each point is reconstructed from the landmarks by
the linear map of Weinberger, Packer & Saul (2005, Sec. 3.1): with W the locally linear (LLE) reconstruction
weights of every point from its k neighbours and Φ = (I − W)ᵀ(I − W), the non-landmarks' coordinates minimise the
reconstruction error given the landmarks', Q_u = −Φ_uu⁻¹ Φ_ul, and Q_l = I. Exact MVU is not offered:
``docs/decisions.md`` ("MVU and LMVU") has the measured reason.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..affinity.graphs import fix_signs, joined_knn_graph
from ..affinity.knn import pair_sq_distances
from ..inputs import Inputs
from ..objectives.semidefinite import lmvu_gram
from .base import Embedder
from .constraints import POSITIVE, POSITIVE_INT, SEED

log = logging.getLogger("cova")

__all__ = ["LMVU", "neighbour_pairs", "reconstruction_weights", "landmark_reconstruction"]

def neighbour_pairs(X: np.ndarray, n_neighbors: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The symmetrised k-NN graph of X in one piece (:func:`cova.affinity.graphs.joined_knn_graph`: pieces joined
    by their closest points, as Isomap joins them; on a graph in pieces the variance is unbounded): (E, 2) pairs
    i < j (sorted), their squared Euclidean distances, and the (l, k) neighbour indices."""
    G, idx = joined_knn_graph(X, n_neighbors)
    U = sp.triu(G + G.T, k=1).tocoo()
    order = np.lexsort((U.col, U.row))
    pairs = np.c_[U.row[order], U.col[order]].astype(np.int64)
    return pairs, pair_sq_distances(np.asarray(X, dtype=np.float64), pairs[:, 0], pairs[:, 1]), idx


def reconstruction_weights(X: np.ndarray, indices: np.ndarray, reg: float = 1e-3) -> sp.csr_matrix:
    """LLE's reconstruction weights (Roweis & Saul 2000): row i holds the weights, summing to 1, that best rebuild
    x_i from its neighbours ``indices[i]``, with the local Gram matrix regularised by ``reg`` times its trace (as
    scikit-learn's LLE does). Batched over the rows; (l, l) sparse."""
    l, k = indices.shape
    Z = X[indices] - X[:, None, :]
    G = np.einsum("lad,lbd->lab", Z, Z)
    tr = np.trace(G, axis1=1, axis2=2)
    G[:, np.arange(k), np.arange(k)] += (reg * np.where(tr > 0, tr, 1.0))[:, None]
    w = np.linalg.solve(G, np.ones((l, k, 1)))[:, :, 0]
    w /= w.sum(axis=1, keepdims=True)
    return sp.csr_matrix((w.ravel(), indices.ravel(), np.arange(0, l * k + 1, k)), shape=(l, l))


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
    n_landmarks : m (20; the programme's size grows like m², SCS's time faster: docs/decisions.md).
    reg : regulariser of the reconstruction weights (1e-3 times the local Gram matrix's trace).
    random_state : seed of the landmark draw.

    ``fit(inputs)`` reads ``inputs.X``. Attributes: ``embedding_``, ``landmarks_``.
    """

    _parameter_constraints = {"n_components": POSITIVE_INT, "n_neighbors": POSITIVE_INT, "n_landmarks": POSITIVE_INT,
                              "reg": POSITIVE, "random_state": SEED}

    def __init__(self, n_components: int = 2, n_neighbors: int = 5, n_landmarks: int = 20, reg: float = 1e-3,
                 random_state: int = 0):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.n_landmarks = n_landmarks
        self.reg = reg
        self.random_state = random_state

    def fit(self, inputs: Inputs) -> "LMVU":
        self._validate_params()
        X = np.asarray(inputs.X, dtype=np.float64)  # finite: inputs are checked when they are built
        l, m, k = X.shape[0], int(self.n_landmarks), int(self.n_neighbors)
        if not k < l:
            raise ValueError(f"n_neighbors = {k} must be below the number of samples l = {l}")
        if not int(self.n_components) <= m <= l:
            raise ValueError(f"n_landmarks = {m} must lie between n_components = {self.n_components} and the number "
                             f"of samples l = {l}")
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
