"""t-SNE through openTSNE (Barnes-Hut / FFT), fed our own affinity matrix."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import openTSNE
from openTSNE.affinity import PerplexityBasedNN, PrecomputedAffinities
from openTSNE.tsne import OptimizationInterrupt
from sklearn.utils.validation import check_is_fitted, validate_data

from ...affinity.weights import gaussian_perplexity
from ...constraints import NON_NEGATIVE_INT, POSITIVE, SEED_OR_NONE, StrOptions, integer
from ...errors import UserError
from ...inputs import Inputs
from ...progress import Progress
from ..base import Embedder, inputs_sizes, perplexity_fits_samples

log = logging.getLogger("cova")

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


def opentsne_fit(estimator: Embedder, P, init: np.ndarray, threads: Callable[[], int] | None = None) -> Embedder:
    """Run openTSNE on the given joint affinities ``P`` (sparse, renormalised to unit sum by openTSNE) from ``init``
    with the estimator's :data:`OPENTSNE_PARAMS`; set ``embedding_`` (float64, C-contiguous) and ``kl_divergence_``
    on the estimator and return it.

    ``threads``, for a caller that runs other work beside this run, says how many threads the run may use now (at
    most the estimator's ``n_jobs``): it starts on that many and moves to more as soon as ``threads()`` grows
    (checked at every progress tick, in both phases). The embedding is the one a fixed thread count gives:
    openTSNE's gradient does not depend on its threads, and the run is interrupted after a gradient is computed and
    before it is applied, then resumed from that state (the gradient computed again)."""
    with Progress(f"{type(estimator).__name__} (openTSNE)") as progress:
        tsne = openTSNE.TSNE(**{name: getattr(estimator, attr) for name, attr in OPENTSNE_PARAMS.items()},
                             **progress.opentsne_callback())
        affinities = PrecomputedAffinities(P, normalize=True)
        if threads is None:
            embedding = tsne.fit(affinities=affinities, initialization=init)
        else:
            embedding = _fit_growing(tsne, affinities, init, threads)
            # a resumed call counts its callbacks from 0 again: the progress count is the iterations run
            progress.iteration = int(tsne.early_exaggeration_iter) + int(tsne.n_iter)
    estimator.embedding_ = np.ascontiguousarray(np.asarray(embedding), dtype=np.float64)
    estimator.kl_divergence_ = float(embedding.kl_divergence)
    return estimator


def _fit_growing(tsne: openTSNE.TSNE, affinities: PrecomputedAffinities, init: np.ndarray,
                 threads: Callable[[], int]) -> openTSNE.TSNEEmbedding:
    """openTSNE's ``TSNE.fit`` (its two phases, as it runs them) with the thread count of :func:`opentsne_fit`'s
    ``threads``, checked at every progress tick of either phase.

    openTSNE scales P by the exaggeration at the start of each ``optimize`` call and back at its end, so an
    interrupted exaggerated phase would round P differently at every interruption. The early exaggeration is
    therefore run with P scaled once here, each call told exaggeration 1 and openTSNE's own learning rate for the
    exaggerated phase (``auto``: N / exaggeration), and P scaled back once after it: the same P, rate and steps
    as one uninterrupted call."""
    most = max(1, int(tsne.n_jobs))

    def available() -> int:
        return max(1, min(most, int(threads())))

    current = available()
    embedding = tsne.prepare_initial(affinities=affinities, initialization=init)
    applied = [0]

    def grow(iteration: int, error: float, _embedding: Any) -> bool:
        applied[0] = iteration - 1  # called after the gradient of update `iteration` and before applying it
        return available() > current

    def run(n_iter: int, momentum: float, callbacks: list[Callable[..., Any]], **params: Any) -> None:
        nonlocal current
        remaining = int(n_iter)
        while remaining > 0:
            try:
                embedding.optimize(n_iter=remaining, momentum=momentum, inplace=True, propagate_exception=True,
                                   n_jobs=current, callbacks=[*callbacks, grow], **params)
                remaining = 0
            except OptimizationInterrupt:
                remaining -= applied[0]
                current = available()
                log.info("t-SNE: %d iterations left, now on %d threads", remaining, current)

    factor = 1 if tsne.early_exaggeration is None else tsne.early_exaggeration
    rate = embedding.gradient_descent_params.get("learning_rate", "auto")
    if rate == "auto":  # openTSNE's rule for the exaggerated phase (tsne._handle_nice_params)
        rate = embedding.shape[0] / factor

    def plain_kl(callback: Callable[..., Any]) -> Callable[..., Any]:
        # the KL of the exaggerated P turned into that of P, as openTSNE reports it in an exaggerated call
        return lambda iteration, error, emb: callback(iteration, error / factor - np.log(factor), emb)

    callbacks = list(tsne.callbacks or [])
    P = embedding.affinities.P
    if factor != 1:
        P *= factor
    try:
        run(tsne.early_exaggeration_iter, tsne.initial_momentum, [plain_kl(c) for c in callbacks], exaggeration=1,
            learning_rate=rate)
    finally:
        if factor != 1:
            P /= factor
    run(tsne.n_iter, tsne.final_momentum, callbacks, exaggeration=tsne.exaggeration)
    return embedding


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

    def fit_sharing(self, X: np.ndarray, threads: Callable[[], int]) -> "TSNE":
        """:meth:`fit` on the rows of ``X`` (an (l, d) float array) for a caller that runs other work beside it:
        ``threads()`` says how many of the ``n_jobs`` threads the run may use now, and the run takes more as they
        come free (:func:`opentsne_fit`). The embedding is the one :meth:`fit` gives."""
        self._validate_params()
        inputs = Inputs(X=np.asarray(X, dtype=np.float64))
        self._check_declaration(inputs_sizes(inputs))
        return self._fit(inputs, threads)._check_columns()

    def _fit(self, inputs: Inputs, threads: Callable[[], int] | None = None) -> "TSNE":
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
        return opentsne_fit(self, P, init, threads)

    def transform(self, X: Any) -> np.ndarray:
        """New points placed in the fitted embedding by openTSNE's ``transform`` (class docstring). openTSNE
        centres the reference embedding on its bounding box first; the result is shifted back to the coordinates
        of ``embedding_``."""
        check_is_fitted(self, "fit_X_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if X.shape[1] != self.fit_X_.shape[1]:
            raise UserError(f"X has {X.shape[1]} features, but TSNE was fitted on {self.fit_X_.shape[1]}")
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
