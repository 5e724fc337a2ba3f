"""S-Isomap: supervised Isomap (Geng, Zhan & Zhou, IEEE Trans. SMC-B 35(6):1098-1107, 2005), a baseline of NeRV
Sec. 5.3 (Fig. 13, Table 3, Fig. 14).

The NeRV paper names the method and its two tuned parameters (alpha and the number of neighbours) but not its
formula; Geng et al. define the dissimilarity of two training points at Euclidean distance d as

    D = sqrt(1 - exp(-d^2 / beta))            same class,
    D = sqrt(exp(d^2 / beta)) - alpha         different classes,

with beta the mean Euclidean distance over all pairs and alpha in [0, 1]. Same-class dissimilarities stay below 1
and grow slowly; different-class ones start at 1 - alpha and grow fast, so the k-nearest-neighbour graph links
mostly points of one class. Isomap (scikit-learn's, on the precomputed D; pieces of the graph joined as it joins
them) then embeds the training rows. New points are mapped as Geng et al. map them, by a generalised regression
(RBF) network: the Gaussian-kernel weighted mean of the training embedding, y(x) = sum_i w_i y_i / sum_i w_i,
w_i = exp(-||x - x_i||^2 / (2 s^2)). The spread s is not given by either paper: [ours] ``spread`` (0.1) times the
median over the training rows of the Euclidean distance to their nearest other training row. As s -> 0 the
network maps a new point onto its nearest training point. A wider kernel averages over several classes and pulls
new points between the class clusters: on the first 600 digits with a 4-fold split, factors 0.1, 0.3 and 1 gave a
held-out 5-NN error of 0.007, 0.02 and 0.68 (``docs/decisions.md``, "NeRV's supervised protocol").
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.sparse import SparseEfficiencyWarning
from scipy.spatial.distance import cdist, pdist, squareform
from scipy.special import logsumexp

from ...constraints import MAX_SAMPLES, POSITIVE, POSITIVE_INT, UNIT
from ...errors import UserError
from ...inputs import Inputs
from ..base import Embedder, neighbours_below_samples, size_guard, supervised_arrays

__all__ = ["SupervisedIsomap", "supervised_dissimilarity"]

#: Default size guard: dense l x l dissimilarities and Isomap's dense geodesics.
S_ISOMAP_MAX_SAMPLES = 5000
#: Rows of test points per block of the regression network (a block holds block x l distances).
_BLOCK = 512


def supervised_dissimilarity(X: np.ndarray, labels: np.ndarray, alpha: float = 0.5) -> np.ndarray:
    """Dense (l, l) S-Isomap dissimilarities of Geng et al. (2005) with beta = the mean pairwise Euclidean distance.

    exp(d^2 / beta) is evaluated as exp(min(d^2 / beta, 700)): a larger argument would overflow, and every such pair
    is already far beyond any same-class pair (whose D is below 1)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(labels)
    d = pdist(X)
    beta = float(d.mean()) if d.size else 1.0
    if beta <= 0:
        raise UserError("all samples coincide; S-Isomap's beta (the mean pairwise distance) would be 0")
    q = squareform(d) ** 2 / beta
    same = y[:, None] == y[None, :]
    D = np.where(same, np.sqrt(-np.expm1(-q)), np.exp(0.5 * np.minimum(q, 700.0)) - alpha)
    np.fill_diagonal(D, 0.0)
    return D


class SupervisedIsomap(Embedder):
    """S-Isomap (Geng et al. 2005; NeRV Sec. 5.3): Isomap on supervised dissimilarities, new points by a
    generalised regression network (see the module docstring).

    Parameters
    ----------
    n_components : display dimension (2).
    n_neighbors : k of the neighbourhood graph (NeRV tunes it; default 10).
    alpha : alpha in [0, 1] of the different-class dissimilarity (NeRV tunes it; default 0.5).
    spread : the regression network's kernel width in units of the median nearest-neighbour distance (0.1).
    max_samples : size guard on the training rows (5,000: dense l x l dissimilarities and geodesics).

    ``fit(inputs)`` reads ``inputs.X`` and ``inputs.labels``; ``transform(X)`` maps new samples. Attributes:
    ``embedding_``, ``kernel_width_`` (s).
    """

    required_inputs = ("X", "labels")

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "n_neighbors": POSITIVE_INT,
        "alpha": UNIT,
        "spread": POSITIVE,
        "max_samples": MAX_SAMPLES,
    }

    _option_rules = (neighbours_below_samples(),
                     size_guard("S-Isomap", "dense l×l supervised dissimilarities and geodesics"))

    def __init__(self, n_components: int = 2, n_neighbors: int = 10, alpha: float = 0.5, spread: float = 0.1,
                 max_samples: int | None = S_ISOMAP_MAX_SAMPLES):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.alpha = alpha
        self.spread = spread
        self.max_samples = max_samples

    def _fit(self, inputs: Inputs) -> "SupervisedIsomap":
        from sklearn.manifold import Isomap

        self._validate_params()
        X, y, _ = supervised_arrays(inputs)  # fitted on training rows only: every label is read
        k = int(self.n_neighbors)  # < l and the size guard: _option_rules
        D = supervised_dissimilarity(X, y, self.alpha)
        iso = Isomap(n_neighbors=k, n_components=int(self.n_components), metric="precomputed",
                     eigen_solver="dense")
        with warnings.catch_warnings():  # scikit-learn joins a graph in pieces through a CSR matrix, and says so
            warnings.simplefilter("ignore", SparseEfficiencyWarning)
            self.embedding_ = np.ascontiguousarray(iso.fit_transform(D))
        E = squareform(pdist(X))
        np.fill_diagonal(E, np.inf)
        self.kernel_width_ = float(self.spread) * float(np.median(E.min(axis=1)))
        self._X = X
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """The regression network's map of new samples: the Gaussian-kernel weighted mean of the training
        embedding (computed with log-sum-exp, so a point far from every training row still gets the mean of its
        nearest ones)."""
        if not hasattr(self, "_X"):
            raise UserError("S-Isomap is not fitted yet; call fit first")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self._X.shape[1]:
            raise UserError(f"X must have {self._X.shape[1]} columns, got shape {X.shape}")
        out = np.empty((X.shape[0], self.embedding_.shape[1]))
        s2 = 2.0 * self.kernel_width_ ** 2 if self.kernel_width_ > 0 else 1.0
        for start in range(0, X.shape[0], _BLOCK):
            logw = -cdist(X[start:start + _BLOCK], self._X, "sqeuclidean") / s2
            w = np.exp(logw - logsumexp(logw, axis=1, keepdims=True))
            out[start:start + _BLOCK] = w @ self.embedding_
        return out
