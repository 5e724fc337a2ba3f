"""PE, parametric embedding (Iwata, Saito, Ueda, Stromsten, Griffiths & Tenenbaum, Neural Computation
19(9):2536-2556, 2007), a baseline of NeRV Sec. 5.3 (Fig. 13, Table 3, Fig. 14).

PE embeds class posteriors, not the data: given p(c | x_n) for every sample it places the samples y_n and one
point phi_c per class so that the display's posterior of a unit-variance Gaussian mixture,

    p(c | y_n) = p(c) exp(-||y_n - phi_c||^2 / 2) / sum_l p(l) exp(-||y_n - phi_l||^2 / 2),

matches the given one in Kullback-Leibler divergence,

    E = sum_n sum_c p(c | x_n) log(p(c | x_n) / p(c | y_n)),

    dE/dy_n   = sum_c (p(c | x_n) - p(c | y_n)) (y_n - phi_c),
    dE/dphi_c = sum_n (p(c | x_n) - p(c | y_n)) (phi_c - y_n).

NeRV gives PE "the same class-posterior estimate as SNeRV": :class:`cova.cohorts.posterior.ClassPosterior` fitted on
the labelled rows, evaluated on every row (test rows included; their labels are never read). The class prior p(c)
is the mean posterior over the rows [ours: the papers leave it open]. PE has no closed form: E is minimised jointly
over Y and Phi by scipy's L-BFGS, started from seeded N(0, 1) class points and y_n = sum_c p(c | x_n) phi_c.
O(n C d) per evaluation; memory O(n C).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from ...constraints import MAX_SAMPLES, POSITIVE_INT, SEED, StrOptions
from ...constraints import POSITIVE as POSITIVE_REAL
from ...errors import UserError
from ...inputs import Inputs
from ...progress import Progress
from ..base import Embedder, UsesClassPosterior, size_guard, supervised_arrays

__all__ = ["ParametricEmbedding", "pe_cost_and_grad"]


def pe_cost_and_grad(Y: np.ndarray, Phi: np.ndarray, P: np.ndarray, log_prior: np.ndarray,
                     ) -> tuple[float, np.ndarray, np.ndarray]:
    """E and its gradients with respect to Y (n, d) and Phi (C, d) for given posteriors P (n, C) and log class
    priors (C,) (module docstring). Rows of P sum to 1; zero entries contribute nothing to E."""
    sq = (np.sum(Y * Y, axis=1)[:, None] + np.sum(Phi * Phi, axis=1)[None, :] - 2.0 * Y @ Phi.T)
    logits = log_prior[None, :] - 0.5 * sq
    logQ = logits - logsumexp(logits, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy_part = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
    cost = float(np.sum(entropy_part) - np.sum(P * logQ))
    G = P - np.exp(logQ)  # (n, C)
    gY = G.sum(axis=1)[:, None] * Y - G @ Phi
    gPhi = G.sum(axis=0)[:, None] * Phi - G.T @ Y
    return cost, gY, gPhi


class ParametricEmbedding(UsesClassPosterior, Embedder):
    """Parametric embedding of class posteriors (Iwata et al. 2007; see the module docstring).

    Parameters
    ----------
    n_components : display dimension (2).
    n_mixture, sigma_mixture, posterior_max_iter : the class-posterior model's K, sigma and CG iterations
        (:class:`cova.cohorts.posterior.ClassPosterior`; ``"auto"``: 3-fold CV as in SNeRV).
    max_iter : L-BFGS iterations (1,000). tol : L-BFGS's ``gtol`` (1e-6).
    random_state : seed of the posterior model and of the start.
    max_samples : size guard (the posterior model's CV is the costly part; 20,000).

    ``fit(inputs)`` reads ``inputs.X`` and ``inputs.labels`` (only the rows of ``inputs.labelled`` when given:
    PE takes unlabelled samples), and ``inputs.class_posterior`` instead of fitting the posterior model when present
    (:class:`cova.methods.base.UsesClassPosterior`). Attributes: ``embedding_``, ``class_points_`` (C, d; phi, the classes'
    places, saved with the run), ``posterior_``, ``cost_``, ``n_iter_``.
    """

    required_inputs = ("X", "labels")
    semi_supervised = True
    extra_outputs = ("class_points_",)

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "n_mixture": [StrOptions({"auto"}), *POSITIVE_INT],
        "sigma_mixture": [StrOptions({"auto"}), *POSITIVE_REAL],
        "posterior_max_iter": POSITIVE_INT,
        "max_iter": POSITIVE_INT,
        "tol": POSITIVE_REAL,
        "random_state": SEED,
        "max_samples": MAX_SAMPLES,
    }

    _option_rules = (size_guard("PE", "the class-posterior model's cross-validation"),)

    def __init__(self, n_components: int = 2, n_mixture: Any = "auto", sigma_mixture: Any = "auto",
                 posterior_max_iter: int = 200, max_iter: int = 1000, tol: float = 1e-6, random_state: int = 0,
                 max_samples: int | None = 20000):
        self.n_components = n_components
        self.n_mixture = n_mixture
        self.sigma_mixture = sigma_mixture
        self.posterior_max_iter = posterior_max_iter
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.max_samples = max_samples

    def _fit(self, inputs: Inputs) -> "ParametricEmbedding":
        self._validate_params()
        X, y, rows = supervised_arrays(inputs)
        post = self._class_posterior(inputs, X, y, rows)
        P = post.predict_proba(X)
        self.fit_posteriors(P)
        self.posterior_ = post
        return self

    def fit_posteriors(self, P: np.ndarray) -> "ParametricEmbedding":
        """Embed given class posteriors P (n, C), rows summing to 1 (the step after the posterior model; also
        the whole method for a user who has posteriors)."""
        P = np.asarray(P, dtype=np.float64)
        if P.ndim != 2 or P.shape[1] < 2 or np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0, atol=1e-8):
            raise UserError("P must be an (n, C) array of class posteriors, C >= 2, rows summing to 1")
        n, C = P.shape
        d = int(self.n_components)
        log_prior = np.log(np.maximum(P.mean(axis=0), np.finfo(float).tiny))
        rng = np.random.default_rng(int(self.random_state))
        Phi0 = rng.standard_normal((C, d))
        theta0 = np.concatenate([(P @ Phi0).ravel(), Phi0.ravel()])

        def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
            Y, Phi = theta[:n * d].reshape(n, d), theta[n * d:].reshape(C, d)
            cost, gY, gPhi = pe_cost_and_grad(Y, Phi, P, log_prior)
            return cost, np.concatenate([gY.ravel(), gPhi.ravel()])

        with Progress("PE L-BFGS", int(self.max_iter)) as progress:
            res = minimize(fun, theta0, jac=True, method="L-BFGS-B",
                           options={"maxiter": int(self.max_iter), "gtol": float(self.tol)}, callback=progress.callback)
        self.embedding_ = res.x[:n * d].reshape(n, d).copy()
        self.class_points_ = res.x[n * d:].reshape(C, d).copy()
        self.cost_ = float(res.fun)
        self.n_iter_ = int(res.nit)
        return self
