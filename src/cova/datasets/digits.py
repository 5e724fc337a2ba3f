"""scikit-learn's bundled handwritten digits (1,797 images of 8×8 pixels, 10 classes): offline, no download."""

from __future__ import annotations

import numpy as np

from ..constraints import SEED, declare, integer
from .base import Dataset


@declare({"n_per_class": [integer(1, None), None], "random_state": SEED})
def digits(n_per_class: int | None = None, random_state: int = 0) -> Dataset:
    """Load ``sklearn.datasets.load_digits``; optionally a seeded subset of ``n_per_class`` images per class.

    Pixel values (0..16) are used as they are; the subset keeps the original order of the rows it keeps.
    """
    from sklearn.datasets import load_digits  # here, not at the top: every job imports the loaders' package

    bunch = load_digits()
    X, y = bunch.data.astype(np.float64), bunch.target.astype(np.int64)
    if n_per_class is not None:
        rng = np.random.default_rng(random_state)
        keep = np.concatenate([np.sort(rng.permutation(np.flatnonzero(y == j))[:n_per_class]) for j in range(10)])
        keep.sort()
        X, y = X[keep], y[keep]
    return Dataset(X, y, [str(j) for j in range(10)],
                   meta={"source": "sklearn.datasets.load_digits", "n_per_class": n_per_class,
                         "random_state": random_state, "n_samples": int(len(y))})
