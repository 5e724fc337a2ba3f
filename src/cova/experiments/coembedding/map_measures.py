"""Readings of a co-embedding map that the paper makes by eye (Figs. 3-5, 7, 9), as numbers for the tables.

Every measure reads the map as the paper draws it: the row and the column objects together scaled to [0, 1] on each
axis (:func:`cova.viz.coembedding.minmax_scale_pair`), and is ``nan`` where it does not apply (no labels, no cluster
shared by both groups, a failed run).

- ``map_spread``: the mean distance of all objects to their common centroid ("more spread out", Fig. 7).
- ``min_class_spread``: the smallest class's spread (the mean distance of its labelled row and column objects to
  their centroid) as a fraction of ``map_spread`` ("some classes almost shrink to single points", Fig. 9(m)).
- ``cocluster_mixing``: over the objects of the clusters shared by both groups (a label present among the rows and
  among the columns), the share of the other group among each object's ``n_neighbors`` nearest objects of its own
  cluster, divided by the other group's share among all of them (the value a uniform mix has on average), averaged
  over those objects: about 1 for a uniform mix of both groups, 0 for a co-cluster split into its two groups
  (Figs. 3-4's co-clusters).
- ``column_class_distance``: the mean distance of the column objects to the nearest class centre of the row
  objects (words far from the classes of documents, Fig. 5).
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import NearestNeighbors

from ...viz.coembedding import minmax_scale_pair

__all__ = ["MAP_MEASURES", "map_measures"]

#: The columns :func:`map_measures` fills, in table order.
MAP_MEASURES = ("map_spread", "min_class_spread", "cocluster_mixing", "column_class_distance")


def _labels(labels: np.ndarray | None, n: int) -> np.ndarray | None:
    if labels is None:
        return None
    labels = np.asarray(labels, dtype=np.int64)
    return labels if labels.shape == (n,) else None


def _mean_distance_to_centroid(P: np.ndarray) -> float:
    return float(np.linalg.norm(P - P.mean(axis=0), axis=1).mean())


def _cocluster_mixing(P: np.ndarray, group: np.ndarray, n_neighbors: int) -> np.ndarray:
    """Each object's share of the other group among its nearest objects of ``P`` (one cluster), over the share a
    uniform mix gives it; empty when the cluster has fewer than two objects."""
    n = len(P)
    k = min(n_neighbors, n - 1)
    if k < 1:
        return np.empty(0)
    _, idx = NearestNeighbors(n_neighbors=k).fit(P).kneighbors()  # the query object itself excluded
    observed = (group[idx] != group[:, None]).mean(axis=1)
    n_other = np.where(group == 0, np.sum(group == 1), np.sum(group == 0))
    expected = n_other / (n - 1)
    return observed / expected


def map_measures(Zx: np.ndarray | None, Zy: np.ndarray | None, row_labels: np.ndarray | None = None,
                 column_labels: np.ndarray | None = None, n_neighbors: int = 10) -> dict[str, float]:
    """The measures of :data:`MAP_MEASURES` (see the module docstring) of one co-embedding: row objects ``Zx``
    (m, k), column objects ``Zy`` (n, k) and their labels (``None``: unlabelled)."""
    out = dict.fromkeys(MAP_MEASURES, np.nan)
    if Zx is None or Zy is None:
        return out
    Zx, Zy = np.asarray(Zx, dtype=float), np.asarray(Zy, dtype=float)
    if Zx.ndim != 2 or Zy.ndim != 2 or not (len(Zx) and len(Zy)) or Zx.shape[1] != Zy.shape[1] or not (
            np.all(np.isfinite(Zx)) and np.all(np.isfinite(Zy))):
        return out
    sx, sy = minmax_scale_pair(Zx, Zy)
    both = np.vstack([sx, sy])
    spread = _mean_distance_to_centroid(both)
    out["map_spread"] = spread
    rl, cl = _labels(row_labels, len(sx)), _labels(column_labels, len(sy))
    # the classes of the labelled objects, rows and columns pooled
    points = [p for p, lab in ((sx, rl), (sy, cl)) if lab is not None]
    if points and spread > 0:
        labels = np.concatenate([lab for lab in (rl, cl) if lab is not None])
        P = np.vstack(points)
        spreads = [_mean_distance_to_centroid(P[labels == c]) for c in np.unique(labels) if np.sum(labels == c) >= 2]
        if spreads:
            out["min_class_spread"] = min(spreads) / spread
    if rl is not None and cl is not None:
        ratios = [_cocluster_mixing(np.vstack([sx[rl == c], sy[cl == c]]),
                                    np.repeat([0, 1], [np.sum(rl == c), np.sum(cl == c)]), n_neighbors)
                  for c in np.intersect1d(rl, cl)]
        ratios = [r for r in ratios if r.size]
        if ratios:
            out["cocluster_mixing"] = float(np.concatenate(ratios).mean())
    if rl is not None:
        centres = np.vstack([sx[rl == c].mean(axis=0) for c in np.unique(rl)])
        dist = np.linalg.norm(sy[:, None, :] - centres[None, :, :], axis=2)
        out["column_class_distance"] = float(dist.min(axis=1).mean())
    return out
