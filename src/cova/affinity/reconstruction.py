"""Locally linear reconstruction weights (LLE; Roweis & Saul 2000): the weights, summing to 1, that best rebuild a
point from its neighbours. LMVU's landmark reconstruction and MUHSIC's interpolation of new points
(:mod:`cova.methods.baselines.mvu`) and LLC's alignment (:mod:`cova.methods.baselines.llc`) use them."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["barycentre_weights", "reconstruction_weights"]


def barycentre_weights(X_query: np.ndarray, X_ref: np.ndarray, indices: np.ndarray, reg: float = 1e-3) -> np.ndarray:
    """LLE's reconstruction weights (Roweis & Saul 2000), dense (q, k): row i holds the weights, summing to 1, that
    best rebuild ``X_query[i]`` from the rows ``X_ref[indices[i]]``, with the local Gram matrix regularised by ``reg``
    times its trace (as scikit-learn's LLE does). Batched over the rows."""
    q, k = indices.shape
    Z = X_ref[indices] - X_query[:, None, :]
    G = np.einsum("lad,lbd->lab", Z, Z)
    tr = np.trace(G, axis1=1, axis2=2)
    G[:, np.arange(k), np.arange(k)] += (reg * np.where(tr > 0, tr, 1.0))[:, None]
    w = np.linalg.solve(G, np.ones((q, k, 1)))[:, :, 0]
    return w / w.sum(axis=1, keepdims=True)


def reconstruction_weights(X: np.ndarray, indices: np.ndarray, reg: float = 1e-3) -> sp.csr_matrix:
    """:func:`barycentre_weights` of every row of X from its neighbours ``indices[i]`` among X's rows; (l, l)
    sparse."""
    l, k = indices.shape
    w = barycentre_weights(X, X, indices, reg)
    return sp.csr_matrix((w.ravel(), indices.ravel(), np.arange(0, l * k + 1, k)), shape=(l, l))
