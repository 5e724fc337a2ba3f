"""Compound (Zahn 1971), from the Joensuu clustering benchmark: 399 2-D points in 6 clusters.

Source: http://cs.joensuu.fi/sipu/datasets/Compound.txt, whitespace-separated columns ``x y label`` with
labels 1..6 (cluster sizes 50, 92, 38, 45, 158, 16). Used by COVA Table H.1/H.2.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..constraints import declare
from ..errors import UserError
from .base import Dataset


@declare({})
def compound(raw_dir: str | os.PathLike) -> Dataset:
    """Load ``raw_dir/Compound.txt``: ``X`` = the (x, y) columns as given, rows in file order.

    Cohorts are the file's label values in ascending order (1..6 → 0..5), named ``"cluster 1".."cluster 6"``;
    the sizes are then (50, 92, 38, 45, 158, 16).
    """
    path = Path(raw_dir) / "Compound.txt"
    data = np.loadtxt(path, dtype=np.float64, ndmin=2)
    if data.shape[1] != 3:
        raise UserError(f"{path}: expected 3 columns (x, y, label), got {data.shape[1]}")
    values, labels = np.unique(data[:, 2], return_inverse=True)
    if not np.allclose(values, np.round(values)):
        raise UserError(f"{path}: labels must be integers, got {values}")
    names = [f"cluster {int(v)}" for v in values]
    return Dataset(data[:, :2], labels, names, meta={
        "source": "Compound (Zahn 1971), Joensuu Compound.txt", "n_samples": int(len(data)),
        "cluster_sizes": np.bincount(labels).tolist(), "file_label_values": [int(v) for v in values]})
