"""DOSNES (Lu, Yang & Corander 2016) and its baseline, t-SNE on a given affinity graph, in 2-D or 3-D.

Both minimise t-SNE's KL(P ‖ Q) (van der Maaten & Hinton 2008, Eqs. 4–5; DOSNES Eq. 5) on the run's W, taken as
the joint P after zeroing its diagonal, symmetrising and normalising to unit sum; neither reads X.

* :class:`DOSNES` (``dosnes``) constrains the points to a centred sphere of free radius (DOSNES Eq. 6) and
  follows the schedule of the authors' released code: start N(0, 10⁻⁸ I), learning rate 500, momentum 0.5 then
  0.8 after 250 iterations, sign-based delta-bar-delta gains, no early exaggeration, 1000 iterations, and after
  every step the projection of Eqs. 7–8 (:class:`cova.manifolds.CentredSphere`).
* :class:`TSNEAffinity` (``tsne_affinity``) is the unconstrained t-SNE the paper compares with (its Figs. 2–4,
  "t-SNE 2D/3D"), with the schedule of van der Maaten's ``tsne_p.m``, which the DOSNES code was derived from:
  the same settings plus P multiplied by 4 for the first 100 iterations and re-centring after every step.

The objective is :func:`cova.objectives.kl.tsne_kl_sparse` (sparse P, repulsion by ``kl_method``: exact up to
5,000 samples with ``"auto"``, then FFT interpolation in 2-D or Barnes–Hut in 3-D), the loop
:func:`cova.manifolds.momentum_gradient_descent`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..affinity.graphs import locality_order, permute_graph
from ..affinity.weights import symmetrize_normalize
from ..constraints import POSITIVE_INT, SEED, Known, StrOptions, integer, real
from ..errors import UserError
from ..inputs import Inputs
from ..manifolds import (
    TSNE_SCHEDULE,
    CentredSphere,
    Euclidean,
    Manifold,
    OptimizeResult,
    momentum_gradient_descent,
    tsne_learning_rate,
)
from ..objectives.kl import kl_entropy, resolve_repulsion_method, tsne_kl_sparse
from ..permutations import unpermute_rows
from .base import TSNE_SCHEDULE_CONSTRAINTS, Embedder, repulsion_fits

__all__ = ["DOSNES", "TSNEAffinity"]

#: Standard deviation of the random start of the authors' code (``.0001 * randn``).
INIT_SCALE = 1e-4
#: How often (iterations) the KL is evaluated for ``kl_history_``.
LOG_EVERY = 50


def _initial_embedding(est: Any, P: sp.csr_matrix, k: int) -> np.ndarray:
    """The seeded start, of standard deviation :data:`INIT_SCALE` per coordinate: ``"random"`` i.i.d. Gaussian
    (the authors' code) or ``"spectral"`` (openTSNE's spectral embedding of P, rescaled)."""
    n = P.shape[0]
    if est.init == "spectral":
        from openTSNE.initialization import spectral

        Y = np.asarray(spectral(P, n_components=k, random_state=est.random_state, verbose=False), dtype=float)
        Y -= Y.mean(axis=0)
        return Y * (INIT_SCALE / max(float(Y.std()), np.finfo(float).tiny))
    return np.random.default_rng(est.random_state).normal(0.0, INIT_SCALE, size=(n, k))


def fit_tsne_on_graph(est: Any, W: Any, k: int, manifold: Manifold, exaggeration: float,
                      exaggeration_iter: int) -> tuple[np.ndarray, OptimizeResult]:
    """Minimise t-SNE's KL on the joint P of W in R^k on ``manifold`` with the estimator's schedule.

    Sets ``learning_rate_``, ``kl_method_``, ``kl_history_`` (KL at the start, every :data:`LOG_EVERY` iterations
    after the exaggeration phase and at the end) and ``kl_divergence_`` (the final KL) on ``est``; returns the
    final iterate and the optimiser's result (its ``x`` in the input's order). The start is drawn in the input's
    order; the iterations run with the rows in :func:`cova.affinity.graphs.locality_order` (the same iterates up to the order of
    floating-point sums)."""
    P = symmetrize_normalize(W)
    n = P.shape[0]
    if n < 3:
        raise UserError(f"t-SNE needs at least 3 samples, got {n}")
    method = resolve_repulsion_method(est.kl_method, n, k)
    est.kl_method_ = method
    options = ({"theta": float(est.theta), "n_jobs": int(est.n_jobs)} if method == "bh" else
               {"theta": float(est.theta)} if method == "octree" else {})
    entropy = kl_entropy(P)
    alpha = float(exaggeration) if exaggeration_iter > 0 else 1.0
    lr = est.learning_rate
    est.learning_rate_ = tsne_learning_rate(n, alpha) if lr == "auto" else float(lr)

    def fun(Z: np.ndarray, need_value: bool = True) -> tuple[float, np.ndarray]:
        return tsne_kl_sparse(Z, P, method=method, entropy=entropy, need_value=need_value, **options)

    def exaggerated(Z: np.ndarray) -> np.ndarray:
        return tsne_kl_sparse(Z, P, method=method, need_value=False, exaggeration=alpha, **options)[1]

    Y0 = _initial_embedding(est, P, k)  # projected only after the first step, as in the authors' code
    order = locality_order(P)
    P, Y0 = permute_graph(P, order), Y0[order]
    res = momentum_gradient_descent(
        fun, Y0, manifold=manifold, max_iter=int(est.max_iter), gtol=None, learning_rate=est.learning_rate_,
        momentum=(float(est.momentum), float(est.final_momentum)),
        momentum_switch_iter=int(est.momentum_switch_iter), min_gain=float(est.min_gain), gains="sign",
        exaggerated_grad=exaggerated if alpha != 1.0 else None, exaggeration_iter=int(exaggeration_iter),
        log_every=LOG_EVERY)
    est.kl_history_ = np.asarray(res.history, dtype=float)
    est.kl_divergence_ = np.asarray(res.fun, dtype=float)
    est.n_iter_ = res.n_iter
    res.x = unpermute_rows(res.x, order)
    return res.x, res


#: Parameters shared by :class:`DOSNES` and :class:`TSNEAffinity`, with their constraints.
SCHEDULE_CONSTRAINTS: dict[str, list] = {
    **TSNE_SCHEDULE_CONSTRAINTS,
    "init": [StrOptions({"random", "spectral"})],
    "theta": [real(0.0, None, closed="left")],
    "n_jobs": POSITIVE_INT,
    "random_state": SEED,
}


class DOSNES(Embedder):
    """Doubly stochastic neighbour embedding on spheres (Lu, Yang & Corander 2016, Sec. 4).

    min_{Y ∈ S} KL(P ‖ Q) (Eq. 5) with q_ij ∝ (1 + ‖y_i − y_j‖²)⁻¹ on chordal distances in R³ and S the centred
    spheres of any radius (Eq. 6): after every momentum step of the Euclidean t-SNE gradient the points are
    centred (Eq. 7) and moved radially onto the sphere of their mean norm (Eq. 8). P is the run's W (doubly
    stochastic when the inputs normalise it so, Sec. 3), diagonal zeroed, symmetrised and scaled to unit sum.

    Parameters
    ----------
    max_iter : 1000 iterations (fixed; the authors' code has no tolerance).
    learning_rate : η = 500 (the authors' code); ``"auto"`` = max(n / 4, 50) (:func:`cova.manifolds.schedule.tsne_learning_rate`).
    momentum, final_momentum, momentum_switch_iter : 0.5, then 0.8 after 250 iterations.
    early_exaggeration, early_exaggeration_iter : none by default (4 and 100 reproduce the authors' first
        version of the code).
    min_gain : 0.01, the floor of the sign-based delta-bar-delta gains.
    gradient : ``"euclidean"`` (the paper's projected gradient) or ``"tangent"`` (the Riemannian gradient of the
        equal-norm constraint; an ablation).
    kl_method : repulsion back end: ``"auto"`` (exact up to 5,000 samples, our Barnes–Hut octree above),
        ``"exact"``, ``"octree"`` or ``"bh"`` (openTSNE's tree). theta : Barnes–Hut opening angle (0.5).
    init : ``"random"`` (N(0, 10⁻⁸ I), the authors' code) or ``"spectral"`` (spectral embedding of P at the same
        scale). random_state : seed of the start. n_jobs : threads of openTSNE's tree (``"bh"``; the octree uses
        the job's threads); the result does not depend on it.

    Attributes
    ----------
    embedding_ : (n, 3) on the unit sphere (Y / R). radius_ : the radius R the optimisation reached (free, so
    never compare radii across runs). kl_divergence_ : KL(P ‖ Q) at the fitted Y (radius R). kl_history_ : KL
    every 50 iterations. learning_rate_, kl_method_ : the resolved ``"auto"`` values. n_iter_.
    """

    required_inputs = ("W",)
    geometry = "sphere"
    extra_outputs = ("kl_divergence_", "kl_history_", "radius_")
    _parameter_constraints = {
        **SCHEDULE_CONSTRAINTS,
        "gradient": [StrOptions(set(CentredSphere.GRADIENTS))],
        "kl_method": [StrOptions({"auto", "exact", "bh", "octree"})],
    }

    def __init__(self, max_iter: int = TSNE_SCHEDULE.max_iter, learning_rate: str | float = 500.0, momentum: float = TSNE_SCHEDULE.momentum,
                 final_momentum: float = TSNE_SCHEDULE.final_momentum, momentum_switch_iter: int = TSNE_SCHEDULE.momentum_switch_iter, early_exaggeration: float = 1.0,
                 early_exaggeration_iter: int = 0, min_gain: float = TSNE_SCHEDULE.min_gain, gradient: str = "euclidean",
                 kl_method: str = "auto", theta: float = 0.5, init: str = "random", random_state: int = 0,
                 n_jobs: int = 1):
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.final_momentum = final_momentum
        self.momentum_switch_iter = momentum_switch_iter
        self.early_exaggeration = early_exaggeration
        self.early_exaggeration_iter = early_exaggeration_iter
        self.min_gain = min_gain
        self.gradient = gradient
        self.kl_method = kl_method
        self.theta = theta
        self.init = init
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fit(self, inputs: Inputs) -> "DOSNES":
        self._validate_params()
        Y, _ = fit_tsne_on_graph(self, inputs.W, 3, CentredSphere(self.gradient), self.early_exaggeration,
                                 self.early_exaggeration_iter)
        norms = np.linalg.norm(Y, axis=1)
        self.radius_ = np.asarray(norms.mean())
        self.embedding_ = np.ascontiguousarray(Y / norms[:, None])
        return self


class TSNEAffinity(Embedder):
    """t-SNE (van der Maaten & Hinton 2008) on the run's W in 2-D or 3-D: the baseline of DOSNES's Figs. 2–4.

    Same objective and loop as :class:`DOSNES`, unconstrained (re-centred after every step), with the schedule of
    ``tsne_p.m``. Sparse P; the repulsion is exact up to 5,000 samples and FFT-accelerated (2-D) or Barnes–Hut
    (3-D) above (``kl_method="auto"``).

    Parameters
    ----------
    n_components : 2 or 3.
    max_iter, learning_rate, momentum, final_momentum, momentum_switch_iter, min_gain, init, theta,
        random_state, n_jobs : as :class:`DOSNES` (η = 500; ``"auto"`` = max(n / (4α), 50)).
    early_exaggeration, early_exaggeration_iter : P multiplied by 4 for the first 100 iterations (``tsne_p.m``).
    kl_method : ``"auto"``, ``"exact"``, ``"fft"`` (2-D only), ``"octree"`` (3-D only) or ``"bh"``.

    Attributes
    ----------
    embedding_ : (n, n_components). kl_divergence_, kl_history_, learning_rate_, kl_method_, n_iter_ : as
    :class:`DOSNES`.
    """

    required_inputs = ("W",)
    extra_outputs = ("kl_divergence_", "kl_history_")
    _parameter_constraints = {
        **SCHEDULE_CONSTRAINTS,
        "n_components": [integer(2, 3)],
        "kl_method": [StrOptions({"auto", "exact", "fft", "bh", "octree"})],
    }
    _option_rules = (repulsion_fits(frozenset({"auto", "exact", "fft", "bh", "octree"}),
                                    lambda options, _: Known(options["n_components"],
                                                             f"n_components = {options['n_components']}")),)

    def __init__(self, n_components: int = 2, max_iter: int = TSNE_SCHEDULE.max_iter, learning_rate: str | float = 500.0,
                 momentum: float = TSNE_SCHEDULE.momentum, final_momentum: float = TSNE_SCHEDULE.final_momentum, momentum_switch_iter: int = TSNE_SCHEDULE.momentum_switch_iter,
                 early_exaggeration: float = 4.0, early_exaggeration_iter: int = 100, min_gain: float = TSNE_SCHEDULE.min_gain,
                 kl_method: str = "auto", theta: float = 0.5, init: str = "random", random_state: int = 0,
                 n_jobs: int = 1):
        self.n_components = n_components
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.final_momentum = final_momentum
        self.momentum_switch_iter = momentum_switch_iter
        self.early_exaggeration = early_exaggeration
        self.early_exaggeration_iter = early_exaggeration_iter
        self.min_gain = min_gain
        self.kl_method = kl_method
        self.theta = theta
        self.init = init
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fit(self, inputs: Inputs) -> "TSNEAffinity":
        self._validate_params()
        k = int(self.n_components)
        Y, _ = fit_tsne_on_graph(self, inputs.W, k, Euclidean(centre=True), self.early_exaggeration,
                                 self.early_exaggeration_iter)
        self.embedding_ = np.ascontiguousarray(Y)
        return self
