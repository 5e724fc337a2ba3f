"""t-SNE through openTSNE (Barnes-Hut / FFT), fed our own affinity matrix."""

from __future__ import annotations

import numpy as np
import openTSNE
from openTSNE.affinity import PrecomputedAffinities

from ..affinity.weights import gaussian_perplexity
from ..inputs import Inputs
from .base import Embedder


#: The estimator attributes passed on to ``openTSNE.TSNE`` (shared by :class:`TSNE` and
#: :class:`cova.methods.supervised.SupervisedTSNE`).
OPENTSNE_PARAMS: tuple[str, ...] = ("n_iter", "early_exaggeration_iter", "learning_rate", "dof",
                                    "negative_gradient_method", "random_state", "n_jobs")


def opentsne_fit(estimator: Embedder, P, init: np.ndarray) -> Embedder:
    """Run openTSNE on the given joint affinities ``P`` (sparse, renormalised to unit sum by openTSNE) from ``init``
    with the estimator's :data:`OPENTSNE_PARAMS`; set ``embedding_`` (float64, C-contiguous) and ``kl_divergence_``
    on the estimator and return it."""
    tsne = openTSNE.TSNE(**{name: getattr(estimator, name) for name in OPENTSNE_PARAMS})
    embedding = tsne.fit(affinities=PrecomputedAffinities(P, normalize=True), initialization=init)
    estimator.embedding_ = np.ascontiguousarray(np.asarray(embedding), dtype=np.float64)
    estimator.kl_divergence_ = float(embedding.kl_divergence)
    return estimator


class TSNE(Embedder):
    """t-SNE (van der Maaten & Hinton 2008) run by openTSNE on a P we build.

    Parameters
    ----------
    perplexity : used when ``affinity="perplexity"``: P is our sparse perplexity-calibrated Gaussian kNN graph
        (``cova.affinity.gaussian_perplexity``, 3·perplexity neighbours), the same construction as W of the
        Places2 protocol.
    affinity : ``"perplexity"`` (build P from X) or ``"inputs"`` (use the run's W as P, so that t-SNE and COVA
        see the very same graph).
    n_iter, early_exaggeration_iter, learning_rate, dof, negative_gradient_method : openTSNE's parameters.
    initialization : ``"pca"`` (openTSNE's scaled PCA of X) or ``"random"``.
    random_state : seed of the kNN search, the initialisation and openTSNE.
    n_jobs : threads for openTSNE's gradient (results do not depend on it).
    """

    def __init__(self, perplexity: float = 30.0, affinity: str = "perplexity", n_iter: int = 500,
                 early_exaggeration_iter: int = 250, learning_rate: str | float = "auto", dof: float = 1.0,
                 negative_gradient_method: str = "auto", initialization: str = "pca", random_state: int = 0,
                 n_jobs: int = 1):
        self.perplexity = perplexity
        self.affinity = affinity
        self.n_iter = n_iter
        self.early_exaggeration_iter = early_exaggeration_iter
        self.learning_rate = learning_rate
        self.dof = dof
        self.negative_gradient_method = negative_gradient_method
        self.initialization = initialization
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, inputs: Inputs) -> "TSNE":
        if self.affinity == "perplexity":
            P = gaussian_perplexity(inputs.X, self.perplexity, random_state=self.random_state)
        elif self.affinity == "inputs":
            P = inputs.W
        else:
            raise ValueError(f"affinity must be one of ['inputs', 'perplexity'], got {self.affinity!r}")
        if self.initialization == "pca":
            init = openTSNE.initialization.pca(inputs.X, random_state=self.random_state)
        elif self.initialization == "random":
            init = openTSNE.initialization.random(inputs.X.shape[0], random_state=self.random_state)
        else:
            raise ValueError(f"initialization must be one of ['pca', 'random'], got {self.initialization!r}")
        return opentsne_fit(self, P, init)
