"""Baselines that scikit-learn implements: thin wrappers with the common ``fit(inputs)`` contract."""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA as _SkPCA

from ..inputs import Inputs
from .base import Embedder


class PCA(Embedder):
    """Principal component analysis of X to ``n_components`` dimensions (exact SVD, deterministic)."""

    def __init__(self, n_components: int = 2):
        self.n_components = n_components

    def fit(self, inputs: Inputs) -> "PCA":
        self.embedding_ = _SkPCA(n_components=self.n_components, svd_solver="full").fit_transform(inputs.X)
        self.embedding_ = np.ascontiguousarray(self.embedding_, dtype=np.float64)
        return self
