"""t-SNE through openTSNE (Barnes-Hut / FFT), fed our own affinity matrix."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import openTSNE
from openTSNE.affinity import PerplexityBasedNN, PrecomputedAffinities
from sklearn.utils.validation import check_is_fitted, validate_data

from ...affinity.weights import gaussian_perplexity
from ...constraints import NON_NEGATIVE_INT, POSITIVE, SEED_OR_NONE, StrOptions, integer
from ...inputs import Inputs
from ...progress import Progress
from ..base import Embedder, perplexity_fits_samples

#: openTSNE's parameter name -> the estimator attribute passed as it (shared by :class:`TSNE` and
#: :class:`cova.methods.sne.supervised.SupervisedTSNE`). Our ``max_iter`` is openTSNE's ``n_iter``: the iterations
#: after the early-exaggeration phase.
OPENTSNE_PARAMS: dict[str, str] = {"n_iter": "max_iter", "early_exaggeration_iter": "early_exaggeration_iter",
                                   "learning_rate": "learning_rate", "dof": "dof",
                                   "negative_gradient_method": "negative_gradient_method",
                                   "random_state": "random_state", "n_jobs": "n_jobs"}

#: Constraints of the parameters passed on to openTSNE (:data:`OPENTSNE_PARAMS`) and of ``init``.
OPENTSNE_CONSTRAINTS: dict[str, list] = {
    "max_iter": NON_NEGATIVE_INT,
    "early_exaggeration_iter": NON_NEGATIVE_INT,
    "learning_rate": [StrOptions({"auto"}), *POSITIVE],
    "dof": POSITIVE,
    "negative_gradient_method": [StrOptions({"auto", "fft", "bh"})],
    "init": [StrOptions({"pca", "random"})],
    "random_state": SEED_OR_NONE,
    "n_jobs": [integer(1, None), integer(None, -1)],
}


def opentsne_fit(estimator: Embedder, P, init: np.ndarray) -> Embedder:
    """Run openTSNE on the given joint affinities ``P`` (sparse, renormalised to unit sum by openTSNE) from ``init``
    with the estimator's :data:`OPENTSNE_PARAMS`; set ``embedding_`` (float64, C-contiguous) and ``kl_divergence_``
    on the estimator and return it."""
    with Progress(f"{type(estimator).__name__} (openTSNE)") as progress:
        tsne = openTSNE.TSNE(**{name: getattr(estimator, attr) for name, attr in OPENTSNE_PARAMS.items()},
                             **progress.opentsne_callback())
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
    max_iter : iterations after the early-exaggeration phase (openTSNE's ``n_iter``; 500).
    early_exaggeration_iter, learning_rate, dof, negative_gradient_method : openTSNE's parameters.
    init : ``"pca"`` (openTSNE's scaled PCA of X) or ``"random"``.
    random_state : seed of the kNN search, the initialisation and openTSNE.
    n_jobs : threads for openTSNE's gradient (results do not depend on it).

    ``transform`` places new points by openTSNE's rule (``TSNEEmbedding.transform``, Poličar et al. 2024): each
    new point's affinities to the fitted points (perplexity 5 on its nearest fitted points, openTSNE's default),
    a start at the median of its 25 nearest fitted points, then 250 gradient steps with the fitted points fixed.
    It needs the fitted X (``fit_X_``), and ``transform`` of the training rows is near, not equal to,
    ``embedding_``: not scikit-learn-compatible for that reason (``check_transformer_general`` asks for equality).
    """

    _parameter_constraints = {
        "perplexity": POSITIVE,
        "affinity": [StrOptions({"perplexity", "inputs"})],
        **OPENTSNE_CONSTRAINTS,
    }

    _option_rules = (perplexity_fits_samples(affinity="perplexity"),)

    def requires(self) -> tuple[str, ...]:
        """W with ``affinity="inputs"``, else X; X always (the initialisation reads it)."""
        return self._affinity_requires("X")

    def __init__(self, perplexity: float = 30.0, affinity: str = "perplexity", max_iter: int = 500,
                 early_exaggeration_iter: int = 250, learning_rate: str | float = "auto", dof: float = 1.0,
                 negative_gradient_method: str = "auto", init: str = "pca", random_state: int = 0,
                 n_jobs: int = 1):
        self.perplexity = perplexity
        self.affinity = affinity
        self.max_iter = max_iter
        self.early_exaggeration_iter = early_exaggeration_iter
        self.learning_rate = learning_rate
        self.dof = dof
        self.negative_gradient_method = negative_gradient_method
        self.init = init
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fit(self, inputs: Inputs) -> "TSNE":
        self._validate_params()
        if self.affinity == "perplexity":
            P = gaussian_perplexity(inputs.X, self.perplexity, random_state=self.random_state)
        else:
            P = inputs.W
        if self.init == "pca":
            init = openTSNE.initialization.pca(inputs.X, random_state=self.random_state)
        else:
            init = openTSNE.initialization.random(inputs.X.shape[0], random_state=self.random_state)
        self.fit_X_ = np.asarray(inputs.X, dtype=np.float64)
        return opentsne_fit(self, P, init)

    def transform(self, X: Any) -> np.ndarray:
        """New points placed in the fitted embedding by openTSNE's ``transform`` (class docstring). openTSNE
        centres the reference embedding on its bounding box first; the result is shifted back to the coordinates
        of ``embedding_``."""
        check_is_fitted(self, "fit_X_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if X.shape[1] != self.fit_X_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features, but TSNE was fitted on {self.fit_X_.shape[1]}")
        affinities = PerplexityBasedNN(self.fit_X_, perplexity=self.perplexity, random_state=self.random_state,
                                       n_jobs=self.n_jobs)
        centre = (self.embedding_.max(axis=0) + self.embedding_.min(axis=0)) / 2
        opentsne_log = logging.getLogger("openTSNE.tsne")
        level = opentsne_log.level
        opentsne_log.setLevel(logging.ERROR)  # its warning about a start of large variance is for new fits only
        try:
            reference = openTSNE.TSNE(**{name: getattr(self, attr) for name, attr in OPENTSNE_PARAMS.items()}) \
                .prepare_initial(affinities=affinities, initialization=self.embedding_ - centre)
        finally:
            opentsne_log.setLevel(level)
        return np.ascontiguousarray(np.asarray(reference.transform(X)), dtype=np.float64) + centre
