"""SNeRV: supervised NeRV (Venna et al., JMLR 11:451-490, 2010, Sec. 5, Eqs. 9-10).

The paper leaves the mixture's parameterisation, the K and sigma grids and the path-integral rule open; our
choices are marked [ours] below (``docs/papers.md``, NeRV, "SNeRV").

NeRV, unchanged, run on a distance matrix computed with the **learning metric** of a class-posterior model:

1. :class:`cova.cohorts.posterior.ClassPosterior` - the discriminative mixture of labelled Gaussians of Eq. (10),
   ``p(c|x) = sum_k beta_ck g_k(x) / sum_k g_k(x)``, ``g_k = exp(-||x - m_k||^2 / 2 sigma^2)``.
   The paper does not give the beta parameterisation: [ours] ``beta_ck = softmax_c(a_ck)`` (free logits a, one
   softmax over the classes per component). Means ``m_k`` start at seeded k-means centres, the logits at
   ``log`` of the Laplace-smoothed class frequencies of each k-means cell, ``(count_ck + 1) / (n_k + C)``.
   Fitted by :func:`scipy.optimize.minimize` (``method="CG"``) on the mean negative conditional
   log-likelihood with its analytic gradient. K and sigma: ``"auto"`` picks them by the held-out conditional
   log-likelihood of **3-fold** stratified CV (the paper: 10-fold; 3 to keep it cheap) over the grids
   ``K in {C, 2C, 4C}`` (capped at ``n / 10``, at least 1) and ``sigma in median pairwise distance x
   {0.25, 0.5, 1}`` (the paper gives no grid).
2. :func:`cova.cohorts.posterior.learning_metric_distances` - straight-line path integrals of the local metric
   ``d_L^2 = dx^T J(x) dx`` with the Fisher matrix ``J(x) = sum_c p(c|x) grad log p(c|x) grad log p(c|x)^T``:
   ``d(x1, x2) = sum_{t=0}^{T-1} sqrt(Delta^T J(x1 + (t + 1/2) Delta) Delta)``, ``Delta = (x2 - x1) / T``,
   T = 10 pieces, J at the **piece midpoints** [ours] (the paper defers the rule to Peltonen et al. 2004;
   evaluating J at the piece starts would not be symmetric; the midpoint rule is symmetric by construction:
   swapping x1 and x2 maps the midpoints onto themselves and flips the sign of Delta, and the form is even in
   Delta). ``Delta^T J Delta = sum_c p(c|x)
   (grad log p(c|x) . Delta)^2`` (no d x d matrix) and, with ``grad log p(c|x) = (1/sigma^2)(sum_k pi_{k|c}
   m_k - sum_k pi_k m_k)``, every quantity on the segment follows from the exact squared distances
   ``||x1 - m_k||^2``, ``||x2 - m_k||^2`` and ``||x2 - x1||^2`` (polarisation identity), so a pair costs
   O(T C K) after an O(n K d + n^2 d) precomputation.
3. :class:`SNeRV` - NeRV (``metric="precomputed"``) on these distances with ``lam`` (0.1 default; the paper
   uses 0.1 and 0.3) and ``k = round(0.5 n / K)`` effective neighbours (n = all points passed to ``fit``,
   clipped into NeRV's admissible (1, n - 1)). O(n^2) time and memory like NeRV; the size guard
   ``max_samples`` defaults to 2,000 (the distance computation costs O(n^2 T C K)).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import pdist, squareform

from ...cohorts.posterior import learning_metric_distances
from ...constraints import (
    MAX_SAMPLES,
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    SEED_OR_NONE,
    UNIT,
    StrOptions,
)
from ...errors import UserError
from ..base import Embedder, UsesClassPosterior, size_guard, supervised_arrays
from .nerv import ANNEAL, NeRV

__all__ = ["SNeRV", "SNERV_MAX_SAMPLES"]

#: Default size guard of SNeRV (dense n x n distances, O(n^2 T C K) learning-metric work).
SNERV_MAX_SAMPLES = 2000


class SNeRV(UsesClassPosterior, Embedder):
    """Supervised NeRV (Sec. 5): NeRV on learning-metric distances of a class-posterior mixture.

    Parameters
    ----------
    n_components : display dimension.
    lam : NeRV's lambda (0.1 default; the paper runs 0.1 and 0.3).
    n_mixture, sigma_mixture : K and sigma of :class:`cova.cohorts.posterior.ClassPosterior` (``"auto"``: 3-fold CV).
    n_pieces : T, pieces of the straight-line path integral (10).
    anneal_rounds, cg_steps, cg_steps_final, anneal : NeRV's optimisation (:class:`cova.methods.nerv.NeRV`).
    init : ``"random"``, ``"pca"`` (PCA of the Euclidean data scaled to mean distance 1) or an array.
    max_samples : size guard (2,000).
    random_state : seed of the mixture (k-means, CV folds) and of NeRV's initialisation.
    posterior_max_iter : CG iterations of the mixture fit.

    ``fit(inputs)`` uses ``inputs.X`` and ``inputs.labels`` (only the rows of ``inputs.labelled`` when given), and
    ``inputs.class_posterior`` instead of fitting the mixture when present (:class:`UsesClassPosterior`).
    Sets ``embedding_``, ``posterior_``, ``n_neighbors_`` (k = round(0.5 n / K)), ``sigma_``, ``cost_``,
    ``distance_scale_`` and ``n_evaluations_`` (NeRV's).
    """

    required_inputs = ("X", "labels")
    semi_supervised = True

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "lam": UNIT,
        "n_mixture": [StrOptions({"auto"}), *POSITIVE_INT],
        "sigma_mixture": [StrOptions({"auto"}), *POSITIVE],
        "n_pieces": POSITIVE_INT,
        "anneal_rounds": NON_NEGATIVE_INT,
        "cg_steps": NON_NEGATIVE_INT,
        "cg_steps_final": NON_NEGATIVE_INT,
        "anneal": [StrOptions(set(ANNEAL))],
        "init": [StrOptions({"random", "pca"}), "array-like"],
        "max_samples": MAX_SAMPLES,
        "random_state": SEED_OR_NONE,
        "posterior_max_iter": POSITIVE_INT,
    }

    _option_rules = (size_guard("SNeRV", "dense n x n learning-metric distances"),)

    def __init__(self, n_components: int = 2, lam: float = 0.1, n_mixture: Any = "auto",
                 sigma_mixture: Any = "auto", n_pieces: int = 10, anneal_rounds: int = 10, cg_steps: int = 2,
                 cg_steps_final: int = 20, anneal: str = "paper", init: Any = "random",
                 max_samples: int = SNERV_MAX_SAMPLES, random_state: int | None = 0, posterior_max_iter: int = 200):
        self.n_components = n_components
        self.lam = lam
        self.n_mixture = n_mixture
        self.sigma_mixture = sigma_mixture
        self.n_pieces = n_pieces
        self.anneal_rounds = anneal_rounds
        self.cg_steps = cg_steps
        self.cg_steps_final = cg_steps_final
        self.anneal = anneal
        self.init = init
        self.max_samples = max_samples
        self.random_state = random_state
        self.posterior_max_iter = posterior_max_iter

    def _fit(self, inputs: Any) -> "SNeRV":
        self._validate_params()
        X, labels, rows = supervised_arrays(inputs)
        if X.shape[0] < 4:
            raise UserError(f"need a 2-D input with at least 4 rows; got shape {X.shape}")
        n = X.shape[0]  # the size guard: _option_rules
        post = self._class_posterior(inputs, X, labels, rows)
        D = learning_metric_distances(post, X, self.n_pieces)
        k = int(round(0.5 * n / post.n_components_))
        k = min(max(k, 2), n - 2)
        init = self.init
        if isinstance(init, str) and init == "pca":
            off = ~np.eye(n, dtype=bool)
            scale = float(squareform(pdist(X))[off].mean())
            Xc = (X - X.mean(axis=0)) / scale
            _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
            d = int(self.n_components)
            init = Xc @ Vt[:d].T
            if init.shape[1] < d:
                init = np.hstack([init, np.zeros((n, d - init.shape[1]))])
        nerv = NeRV(n_components=self.n_components, lam=self.lam, n_neighbors=k, anneal_rounds=self.anneal_rounds,
                    cg_steps=self.cg_steps, cg_steps_final=self.cg_steps_final, anneal=self.anneal, init=init,
                    metric="precomputed", max_samples=self.max_samples, random_state=self.random_state).fit(D)
        self.posterior_ = post
        self.n_neighbors_ = k
        self.embedding_ = nerv.embedding_
        self.sigma_ = nerv.sigma_
        self.cost_ = nerv.cost_
        self.distance_scale_ = nerv.distance_scale_
        self.n_evaluations_ = nerv.n_evaluations_
        return self
