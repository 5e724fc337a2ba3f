"""NeRV and t-NeRV (Venna, Peltonen, Nybo, Aidos, Kaski, JMLR 11:451-490, 2010; Secs. 3, 4.6).

* :class:`NeRV` minimises Eq. 4, ``lambda E_i[D(p_i, q_i)] + (1 - lambda) E_i[D(q_i, p_i)]``: a trade-off
  between mean smoothed recall (lambda = 1, SNE's cost) and mean smoothed precision (lambda = 0), with the
  conditional neighbourhoods of Eqs. 2-3 sharing one sigma_i per point;
* :class:`TNeRV` minimises Eq. 8, ``lambda D(p, q) + (1 - lambda) D(q, p)`` on the joint p of Eq. 6 and the
  Student-t q of Eq. 7 (lambda = 1 is t-SNE's cost).

Both are O(n^2) in time and memory (dense n x n matrices, as in the paper and dredviz); ``fit`` refuses
more than ``max_samples`` points (default 5,000) with a ValueError.

NeRV accepts ``metric="precomputed"``: **SNeRV** (Sec. 5) is NeRV on learning-metric distances
(:mod:`cova.methods.nerv.snerv`); **local MDS**, the authors' earlier baseline, is :mod:`cova.methods.nerv.lmds`.

Optimisation (paper Sec. 3, "optimization"; settings the paper leaves open follow the authors' toolbox
dredviz 1.0.2, see ``docs/papers.md``, NeRV):

1. input distances (Euclidean, or precomputed) are rescaled to mean 1 over the pairs i != j;
2. sigma_i^final is calibrated so that the entropy of p_{.|i} equals log k (k = ``n_neighbors``, 20 for NeRV,
   40 for t-NeRV), bisection to 1e-10 nats (:func:`cova.metrics.retrieval.calibrate_precisions`);
3. initialisation: uniform random in the unit square (the paper; ``init="random"``), or PCA of the rescaled
   data (dredviz >= 1.0; ``init="pca"``), or a given array;
4. ``anneal_rounds`` (10) rounds of ``cg_steps`` (2) conjugate-gradient steps; sigma_i is decreased after
   every round and P and Q are recomputed with the current sigma_i (``anneal="paper"``: linearly from half the
   diameter of the rescaled data to sigma_i^final, reached after the last round;
   ``anneal="dredviz"``: sigma_i^2(t) = max(2 r_t^2, (sigma_i^final)^2), r_t = (max D / 2)(1 - t / T);
   ``anneal="none"``: every round at sigma_i^final). "Half the diameter" is read in the paper's own kernel
   exp(-d^2 / sigma^2); dredviz's start is sqrt(2) larger;
5. ``cg_steps_final`` (20 in the paper, 40 in dredviz) CG steps at sigma_i^final.

Each CG "step" is one iteration of :func:`scipy.optimize.minimize` with ``method="CG"`` (Polak-Ribiere
with a Wolfe line search; dredviz uses PR+ with a golden-section search). The CG direction is restarted
at every round (the objective changes with sigma). Cost and gradient are the **sums** over i of Eq. 4 (no
1/n; dredviz's reported cost and gradient have inconsistent scales), computed in log space so that the
(1 - lambda) q log(q / p) term stays finite where p underflows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.optimize import minimize

from ...affinity.distances import mean_scaled_distances
from ...affinity.perplexity import calibrate_precisions, log_conditional_probabilities
from ...constraints import MAX_SAMPLES, NON_NEGATIVE_INT, POSITIVE_INT, SEED_OR_NONE, UNIT, StrOptions, real
from ...errors import UserError
from ...objectives.nerv import joint_log_probabilities, nerv_objective, tnerv_objective
from ...progress import Progress
from ..base import Embedder, fits_samples, size_guard

__all__ = ["NeRV", "TNeRV", "DEFAULT_MAX_SAMPLES"]

#: Largest n a NeRV / t-NeRV fit accepts by default (dense n x n float64 matrices: ~200 MB each at 5,000).
DEFAULT_MAX_SAMPLES = 5000
#: scipy CG ``gtol`` (max-norm of the gradient of the summed cost) below which a phase stops early.
_GTOL = 1e-8

ANNEAL = ("paper", "dredviz", "none")


def pca_needs_features(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """The rule of ``init``: ``"pca"`` projects feature vectors, which ``metric="precomputed"`` (X is a distance
    matrix) does not give."""
    if isinstance(options.get("init"), str) and options["init"] == "pca" and options.get("metric") == "precomputed":
        return "init", "init='pca' needs feature vectors, and metric='precomputed' gives a distance matrix; allowed: " \
                       "'random' or an array"
    return None


def _nerv_rules(name: str) -> tuple:
    """The size rules of NeRV and t-NeRV (``_option_rules``): the size guard of their dense n x n matrices and the
    effective number of neighbours k < n − 1 (the entropy log k of p_{.|i} over the n − 1 other points)."""
    return (size_guard(name), pca_needs_features,
            fits_samples("n_neighbors", lambda k, n: k < n - 1, lambda n: f"below n − 1 = {n - 1}",
                         f"{name}'s effective number of neighbours k (the entropy log k of each point's input "
                         f"neighbourhood over the n − 1 others) must be below n − 1"))




class _NeRVBase(Embedder):
    """Shared fit: input distances, sigma calibration, annealing rounds and final CG phase."""

    _joint = False
    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "lam": UNIT,
        "n_neighbors": [real(1.0, None, closed="neither")],
        "anneal_rounds": NON_NEGATIVE_INT,
        "cg_steps": NON_NEGATIVE_INT,
        "cg_steps_final": NON_NEGATIVE_INT,
        "anneal": [StrOptions(set(ANNEAL))],
        "init": [StrOptions({"random", "pca"}), "array-like"],
        "metric": [StrOptions({"euclidean", "precomputed"})],
        "max_samples": MAX_SAMPLES,
        "random_state": SEED_OR_NONE,
    }

    def __init__(self, n_components: int = 2, lam: float = 0.1, n_neighbors: float = 20, anneal_rounds: int = 10,
                 cg_steps: int = 2, cg_steps_final: int = 20, anneal: str = "paper", init: Any = "random",
                 metric: str = "euclidean", max_samples: int = DEFAULT_MAX_SAMPLES, random_state: int | None = 0):
        self.n_components = n_components
        self.lam = lam
        self.n_neighbors = n_neighbors
        self.anneal_rounds = anneal_rounds
        self.cg_steps = cg_steps
        self.cg_steps_final = cg_steps_final
        self.anneal = anneal
        self.init = init
        self.metric = metric
        self.max_samples = max_samples
        self.random_state = random_state

    # -- pieces ----------------------------------------------------------------------------------------
    def _initial(self, X: np.ndarray, scale: float, n: int) -> np.ndarray:
        d = int(self.n_components)
        init = self.init
        if isinstance(init, str):
            if init == "random":
                return np.random.default_rng(self.random_state).uniform(0.0, 1.0, size=(n, d))
            if init == "pca":  # with feature vectors: _option_rules
                Xc = (X - X.mean(axis=0)) / scale
                _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
                Y = Xc @ Vt[:d].T
                if Y.shape[1] < d:
                    Y = np.hstack([Y, np.zeros((n, d - Y.shape[1]))])
                return np.ascontiguousarray(Y)
        Y = np.array(init, dtype=np.float64)
        if Y.shape != (n, d) or not np.all(np.isfinite(Y)):
            raise UserError(f"an init array must be finite with shape ({n}, {d}); got {Y.shape}")
        return Y

    def _schedule(self, D: np.ndarray, beta_final: np.ndarray) -> list[np.ndarray]:
        """Precisions beta(t) = 1 / sigma_i(t)^2 for the annealing rounds t = 0..T-1."""
        T = int(self.anneal_rounds)
        sigma_f = 1.0 / np.sqrt(beta_final)
        r0 = float(D.max()) / 2.0  # half the diameter of the rescaled data
        out = []
        for t in range(T):
            if self.anneal == "paper":
                sigma = r0 + (t / T) * (sigma_f - r0)
                out.append(1.0 / sigma ** 2)
            elif self.anneal == "dredviz":
                rt = r0 * (1.0 - t / T)
                out.append(1.0 / np.maximum(2.0 * rt * rt, sigma_f ** 2))
            else:
                out.append(beta_final)
        return out

    def _targets(self, D2: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P, log P) with zero diagonals for precisions beta."""
        lp = log_conditional_probabilities(D2, beta)
        if self._joint:
            lp = joint_log_probabilities(lp)
        np.fill_diagonal(lp, 0.0)
        P = np.exp(lp)
        np.fill_diagonal(P, 0.0)
        return P, lp

    def _phase(self, Y: np.ndarray, D2: np.ndarray, beta: np.ndarray, steps: int,
               progress: Progress) -> tuple[np.ndarray, float]:
        P, lp = self._targets(D2, beta)
        n, d = Y.shape
        lam = float(self.lam)

        def fun(y: np.ndarray) -> tuple[float, np.ndarray]:
            self.n_evaluations_ += 1
            Z = y.reshape(n, d)
            if self._joint:
                c, g = tnerv_objective(Z, P, lp, lam)
            else:
                c, g = nerv_objective(Z, P, lp, lam, beta)
            return c, g.ravel()

        if steps == 0:
            return Y, fun(Y.ravel())[0]
        res = minimize(fun, Y.ravel(), jac=True, method="CG", options={"maxiter": steps, "gtol": _GTOL},
                       callback=progress.callback)
        return res.x.reshape(n, d), float(res.fun)

    # -- fit -------------------------------------------------------------------------------------------
    def _fit(self, inputs: Any) -> "_NeRVBase":
        """Embed ``inputs.X`` (features, or a distance matrix when ``metric="precomputed"``); sets
        ``embedding_`` (n, n_components), ``sigma_`` (sigma_i^final in rescaled units), ``distance_scale_``
        (the mean input distance divided out), ``cost_`` (final cost, sum form) and ``n_evaluations_``."""
        self._validate_params()
        X, D, scale = mean_scaled_distances(inputs, self.metric)
        n = X.shape[0]
        D2 = D * D
        beta_final = calibrate_precisions(D2, self.n_neighbors)
        Y = self._initial(X, scale, n)
        self.n_evaluations_ = 0
        schedule = self._schedule(D, beta_final)
        total = len(schedule) * int(self.cg_steps) + int(self.cg_steps_final)
        with Progress(f"{type(self).__name__} conjugate gradient", total) as progress:
            for beta in schedule:
                Y, _ = self._phase(Y, D2, beta, int(self.cg_steps), progress)
            Y, cost = self._phase(Y, D2, beta_final, int(self.cg_steps_final), progress)
        self.embedding_ = np.ascontiguousarray(Y)
        self.sigma_ = 1.0 / np.sqrt(beta_final)
        self.distance_scale_ = scale
        self.cost_ = cost
        return self


class NeRV(_NeRVBase):
    """Neighbor Retrieval Visualizer (Sec. 3, Eq. 4): minimises ``lam E_i[D(p_i, q_i)] + (1 - lam)
    E_i[D(q_i, p_i)]`` (smoothed recall vs smoothed precision; lam = 1 is SNE, lam = 0 pure precision).

    Parameters
    ----------
    n_components : display dimension (2 in the paper).
    lam : lambda in [0, 1]; default 0.1 (dredviz's default; the paper picks lambda per data set by the
        rank-based F-measure, :func:`cova.metrics.retrieval.rank_f_measure`, over a grid 0..1).
    n_neighbors : effective number of neighbours k: entropy of p_{.|i} = log k (20 in the paper).
    anneal_rounds, cg_steps : the sigma-annealing warm-up, 10 rounds x 2 CG steps (paper Sec. 3).
    cg_steps_final : CG steps at the final sigma (20 in the paper; dredviz 40).
    anneal : ``"paper"`` (linear from half the diameter to sigma_i^final), ``"dredviz"`` or ``"none"``
        (module docstring).
    init : ``"random"`` (uniform in the unit square, the paper), ``"pca"`` (dredviz) or an (n, d) array.
    metric : ``"euclidean"`` on ``inputs.X`` or ``"precomputed"`` (``inputs.X`` is a distance matrix).
    max_samples : size guard; more points are refused (dense n x n work; ``_option_rules``).
    random_state : seed of the random initialisation.

    The paper's "5 random restarts, keep the best by F" is left to the caller (vary ``random_state``).
    """

    _joint = False
    _option_rules = _nerv_rules("NeRV")


class TNeRV(_NeRVBase):
    """t-NeRV (Sec. 4.6, Eq. 8): ``lam D(p, q) + (1 - lam) D(q, p)`` on the joint input probabilities of Eq. 6
    and the Student-t joint display probabilities of Eq. 7 (lam = 1 is t-SNE's cost).

    Parameters as :class:`NeRV`, with ``n_neighbors=40`` (the paper's t-NeRV setting, t-SNE's perplexity)
    and ``lam=0.8`` (the value used for the Faces data, Sec. 4.6.4). The paper optimises t-NeRV "by
    conjugate gradient as in NeRV" without saying whether sigma is annealed; here the same schedule is
    applied to the sigma_i of the input conditionals (q has no sigma), P being recomputed each round;
    ``anneal="none"`` disables it. No early exaggeration (none is mentioned).
    """

    _joint = True
    _option_rules = _nerv_rules("TNeRV")

    def __init__(self, n_components: int = 2, lam: float = 0.8, n_neighbors: float = 40, anneal_rounds: int = 10,
                 cg_steps: int = 2, cg_steps_final: int = 20, anneal: str = "paper", init: Any = "random",
                 metric: str = "euclidean", max_samples: int = DEFAULT_MAX_SAMPLES, random_state: int | None = 0):
        super().__init__(n_components=n_components, lam=lam, n_neighbors=n_neighbors, anneal_rounds=anneal_rounds,
                         cg_steps=cg_steps, cg_steps_final=cg_steps_final, anneal=anneal, init=init,
                         metric=metric, max_samples=max_samples, random_state=random_state)

