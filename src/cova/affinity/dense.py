"""Dense affinities of the exact (O(l²)) methods: the PCA reduction applied before them (COVA footnote 1) and the
dense conditional P of SNE (Hinton & Roweis 2002, Eq. 1) over every other sample or the exact kNN."""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA as _SkPCA

from ..errors import UserError
from .distances import dense_sq_distances
from .knn import nearest_neighbors
from .perplexity import conditional_probabilities, dense_conditional_probabilities

__all__ = ["pca_reduce", "conditional_affinities"]


def pca_reduce(X: np.ndarray, n_pca: int | None) -> np.ndarray:
    """PCA of X to ``n_pca`` dimensions (exact SVD, deterministic), the first step of COVA footnote 1 / [20].

    Skipped (X returned as float64) when ``n_pca`` is None or d ≤ n_pca. ``n_pca`` is also capped at l.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise UserError(f"X must be a 2-D array, got shape {X.shape}")
    if n_pca is None or X.shape[1] <= int(n_pca):
        return X
    n = int(n_pca)
    if n < 1:
        raise UserError(f"n_pca must be a positive integer or None, got {n_pca!r}")
    n = min(n, X.shape[0])
    return np.ascontiguousarray(_SkPCA(n_components=n, svd_solver="full").fit_transform(X), dtype=np.float64)


def conditional_affinities(X: np.ndarray, perplexity: float = 30.0, neighbors: str = "all", *,
                           random_state: int = 0) -> np.ndarray:
    """Dense conditional P (row i = p_{·|i}, zero diagonal, rows sum to 1) of SNE (Hinton & Roweis 2002, Eq. 1).

    p_{j|i} = exp(−β_i‖x_i − x_j‖²) / Σ_{m≠i} exp(−β_i‖x_i − x_m‖²), β_i calibrated so that the row entropy is
    ln(perplexity) (:func:`cova.affinity.conditional_probabilities`).

    neighbors : ``"all"`` -- the candidate set is every other sample (the full distance matrix, as in the
        reference implementations of SNE/t-SNE); ``"knn"`` -- the ⌊3·perplexity⌋ nearest neighbours (exact
        search), the BH-SNE/openTSNE convention, zero elsewhere.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    l = X.shape[0]
    if neighbors == "all":
        return dense_conditional_probabilities(dense_sq_distances(X), perplexity)
    if neighbors == "knn":
        k = min(l - 1, int(3 * perplexity))
        if not 0 < perplexity < k:
            raise UserError(f"need 0 < perplexity < n_neighbors = {k}, got {perplexity}")
        ind, d2 = nearest_neighbors(X, k, method="exact", random_state=random_state, squared=True)
        Pc = conditional_probabilities(d2, perplexity)
        P = np.zeros((l, l), dtype=np.float64)
        np.put_along_axis(P, ind, Pc, axis=1)
        return P
    raise UserError(f"neighbors must be one of ['all', 'knn'], got {neighbors!r}")
