"""The estimator contract shared by every method (scikit-learn style)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..inputs import Inputs


class DegenerateSolution(ValueError):
    """The method's problem has no meaningful solution for these inputs and parameters (e.g. eigen-COVA with
    no negative eigenvalue, spec §3.5). The pipeline records such a run as degenerate (NaN scores) instead of
    failing the whole workflow."""


class Embedder(BaseEstimator):
    """Base class: parameters in ``__init__``, ``fit(inputs)`` sets ``embedding_`` (l, k).

    ``prototypes_`` is set by methods that place cohorts at given positions (the points S_c compares with,
    COVA Appendix G); methods that do not (t-SNE, PCA, ...) leave it ``None``.
    """

    prototypes_: np.ndarray | None = None

    def fit(self, inputs: Inputs) -> "Embedder":  # pragma: no cover - interface
        raise NotImplementedError

    def fit_transform(self, inputs: Inputs) -> np.ndarray:
        """Fit to ``inputs`` and return the embedding ``embedding_``."""
        return self.fit(inputs).embedding_
