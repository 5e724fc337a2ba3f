"""Moving rows in and out of a permuted order: the gradient descents that visit the points in a locality order
(:func:`cova.affinity.graphs.locality_order`), the octree's Morton order, relabelled clusters."""

from __future__ import annotations

import numpy as np

__all__ = ["inverse_permutation", "unpermute_rows"]


def inverse_permutation(order: np.ndarray) -> np.ndarray:
    """The rank of each item in ``order``: ``inverse[order[i]] = i`` (int64), so ``inverse[j]`` is where item j
    went."""
    order = np.asarray(order)
    inverse = np.empty(order.shape[0], dtype=np.int64)
    inverse[order] = np.arange(order.shape[0])
    return inverse


def unpermute_rows(Y: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rows of Y in ``order`` (row i is the input's row ``order[i]``) back in the input's order."""
    out = np.empty_like(Y)
    out[order] = Y
    return out
