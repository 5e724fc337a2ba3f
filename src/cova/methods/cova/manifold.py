"""COVA-E2–E4 as estimators (COVA Sec. 3.1.4, 3.3, Table F.1): Z on the noncompact Stiefel manifold (or the
constrained sets of Appendix C) by Riemannian gradient descent or the t-SNE momentum scheme, on the rule-pair
objective :func:`cova.objectives.cova.cova_objective`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from ...affinity.graphs import laplacian_eigenvectors, locality_order, permute_graph
from ...constraints import NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE, POSITIVE_INT, SEED_OR_NONE, UNIT, StrOptions
from ...inputs import Inputs
from ...manifolds import (
    GeneralizedStiefel,
    Manifold,
    NoncompactStiefel,
    Stiefel,
    momentum_gradient_descent,
    noncompact_stiefel,
    riemannian_gradient_descent,
    tsne_learning_rate,
)
from ...objectives import AUTO_EXACT_MAX_SAMPLES, kl_entropy, resolve_repulsion_method
from ...objectives.cova import KL_METHODS, RULES, cova_objective
from ...permutations import unpermute_rows
from ..base import Embedder, InterpolatesNewPoints, embedding_prototypes, repulsion_fits
from .closed_form import CovaE1

log = logging.getLogger("cova")


# ============================================================================================================
# COVA-E2–E4: gradient descent on the noncompact Stiefel manifold (Sec. 3.1.4, Table F.1)
# ============================================================================================================

def prototype_radius(prototypes: np.ndarray) -> float:
    """RMS radius ρ of the centred prototypes, sqrt(mean_j ‖υ_j − ῡ‖²) (the scale convention of docs/papers.md, COVA
    "Prototypes"); 1.0 if all prototypes coincide."""
    P = np.asarray(prototypes, dtype=float)
    rho = float(np.sqrt(np.mean(np.sum((P - P.mean(axis=0)) ** 2, axis=1))))
    return rho if rho > 0 else 1.0



#: Optimisers of COVA-E2–E4 (``optimizer=``); ``"auto"`` resolves by sample count (:class:`_CovaManifold`).
OPTIMIZERS = ("auto", "armijo", "momentum")
#: Feasible sets of COVA-E2–E4 (``feasible_set=``; COVA Appendix C): M, M₁, M₂.
FEASIBLE_SETS = ("full_rank", "stiefel", "b_orthogonal")


def _armijo_on_constrained_sets(options: Mapping[str, Any], _: Mapping[str, Any]) -> tuple[str, str] | None:
    """The constrained feasible sets (Appendix C) run the Armijo optimiser only (``optimizer="auto"`` resolves to
    it there)."""
    if options["feasible_set"] == "full_rank" or options["optimizer"] != "momentum":
        return None
    return "optimizer", (f"feasible_set = {options['feasible_set']!r} runs the Armijo optimiser only; allowed: "
                         f"'armijo' or 'auto'")


class _CovaManifold(InterpolatesNewPoints, Embedder):
    """Shared base of COVA-E2–E4: Z ∈ R_*^{l×k} by Riemannian gradient descent (Table F.1).

    Parameters
    ----------
    alpha : weight α ∈ [0, 1] of the cohort rule in f = α O^(C) + (1−α) O^(L) (Eq. 13).
    init : starting point (Appendix F):
        ``"prototypes"`` (default): z_i = υ_{y_i} + N(0, (1e-3·ρ)²) noise, ρ the RMS radius of Υ (the noise lets
        coincident same-cohort points separate);
        ``"e1"``: the closed-form COVA-E1 solution at the same α (cheap and good; not in the paper);
        ``"laplacian"``: the k eigenvectors of 𝐋(W) with the smallest non-zero eigenvalues rescaled to RMS
        radius ρ;
        ``"random"``: N(0, ρ²/k) entries (RMS radius ≈ ρ).
        Every init is passed through the rank-checked retraction once, so it has full rank k.
    max_iter : N, maximum number of iterations (Table F.1; default 1000 [ours], the paper gives no value).
    gtol : stop when ‖grad‖_F ≤ gtol·‖grad_0‖_F.
    rank_check_every : N_c, the retraction's rank check runs every N_c iterations and at the last (Table F.1).
    kl_method : repulsion back end of O_KL^(L) (the Student-t normaliser ΣQ and Σ_j q_ij²(z_i − z_j), see
        :mod:`cova.objectives.local`): ``"auto"`` (default: ``"exact"`` up to 5,000 samples, above that ``"fft"``
        for k ≤ 2 and ``"bh"`` for k = 3), ``"exact"`` (blocked, O(l²) time, no l×l array), ``"fft"``
        (FFT-accelerated interpolation, openTSNE's FIt-SNE kernel, O(l), k ≤ 2) or ``"bh"`` (Barnes–Hut,
        θ = 0.5, O(l log l)). The approximations also give ΣQ, so the Armijo line search compares approximate
        values consistently; E2/E3 scores agree with the exact back end within 2 points
        (``tests/test_acceleration.py``). Unused by E4 (no O_KL^(L) term).
    optimizer : ``"armijo"`` (Table F.1: Armijo backtracking, ≈ 1.9 evaluations of f and its gradient per
        iteration, f non-increasing), ``"momentum"`` (t-SNE's scheme, one gradient evaluation per iteration:
        fixed learning rate, momentum 0.5 for the first ``min(250, max_iter // 4)`` iterations and 0.8 after,
        openTSNE's delta-bar-delta gains; :func:`cova.manifolds.momentum_gradient_descent`; f is computed only every 100
        iterations and at the end, and may rise between them; the rows are iterated in the locality order of W,
        :func:`cova.affinity.graphs.locality_order`, and the result returned in the input's order) or ``"auto"`` (default: ``"armijo"`` up to 5,000
        samples, so every result at the paper's sizes is unchanged, ``"momentum"`` above; E4, which has no
        O_KL^(L) term and is cheap, always resolves to ``"armijo"``).
    learning_rate : η of the momentum optimiser; ``"auto"`` (default) = l / 4, i.e. openTSNE's η = l for its
        gradient, which lacks the factor 4 of Eq. A.34. Ignored by Armijo.
    max_step_norm : the momentum optimiser clips every point's update to this length (default 5, openTSNE's
        ``max_step_norm``; ``None``: no clip). Hubs of the kNN graph (in-degree far above k, common in high
        dimensions) have attractive gradients tens of times the median, and at η = l/4 they overshoot and fly off:
        at 200,000 synthetic points, 11 of them reached radii 10–34 from a map of RMS radius 3.9 within 60
        iterations, and the FFT repulsion's grid, which spans the embedding's bounding box, grew with them
        (5× the time per iteration). Ignored by Armijo.
    feasible_set : where Z lives (COVA Appendix C, Fig. C.1): ``"full_rank"`` (default; M, the noncompact Stiefel
        manifold of Sec. 3.1.4), ``"stiefel"`` (M₁: ZᵀZ = I) or ``"b_orthogonal"`` (M₂: ZᵀBZ = I with B = 𝐃(W)
        for W scaled to unit sum, the normalisation O_KL^(L) uses; :class:`~cova.manifolds.GeneralizedStiefel`).
        The constrained sets run the Armijo optimiser (``optimizer="momentum"`` is refused) from the init mapped
        onto the set.
    random_state : seed of the init noise / random init / Lanczos start vector.
    verbose : log progress every 100 iterations at INFO (DEBUG otherwise) on the ``"cova"`` logger.

    Attributes
    ----------
    embedding_ : (l, k) Z. ``prototypes_`` : Υ (what S_c compares with). ``n_iter_`` : iterations run.
    ``objective_history_`` : f at the init and after every accepted step (non-increasing; Armijo), or at the init,
    every 100 iterations and the end (momentum). ``optimizer_`` : the resolved optimiser.
    ``objective_`` : final f. ``converged_`` : the gradient tolerance was reached. ``message_`` : stop reason.
    ``learning_rate_`` : the momentum optimiser's η (``"auto"`` resolved; ``None`` with Armijo).
    ``kl_method_`` : the repulsion back end ``kl_method`` stands for at this size (unused by E4). ``fit_X_`` : the
    fitted X, for ``transform`` (kNN interpolation of the fitted coordinates,
    :class:`~cova.methods.base.InterpolatesNewPoints`).
    """

    _rules: tuple[str, str] = ("dist", "dist")
    _parameter_constraints = {
        "alpha": UNIT,
        "init": [StrOptions({"prototypes", "e1", "laplacian", "random"})],
        "max_iter": NON_NEGATIVE_INT,
        "gtol": NON_NEGATIVE,
        "rank_check_every": POSITIVE_INT,
        "kl_method": [StrOptions(KL_METHODS)],
        "optimizer": [StrOptions(set(OPTIMIZERS))],
        "learning_rate": [StrOptions({"auto"}), *POSITIVE],
        "max_step_norm": [*POSITIVE, None],
        "feasible_set": [StrOptions(set(FEASIBLE_SETS))],
        "random_state": SEED_OR_NONE,
        "verbose": ["boolean"],
    }
    _option_rules = (repulsion_fits(frozenset(KL_METHODS), lambda _, context: context.get("prototype_dimension")),
                     _armijo_on_constrained_sets)

    required_inputs = ("W", "R", "prototypes", "labels")

    def __init__(self, alpha: float = 0.5, init: str = "prototypes", max_iter: int = 1000, gtol: float = 1e-6,
                 rank_check_every: int = 10, kl_method: str = "auto", optimizer: str = "auto",
                 learning_rate: float | str = "auto", max_step_norm: float | None = 5.0,
                 feasible_set: str = "full_rank", random_state: int | None = 0,
                 verbose: bool = False):
        self.alpha = alpha
        self.init = init
        self.max_iter = max_iter
        self.gtol = gtol
        self.rank_check_every = rank_check_every
        self.kl_method = kl_method
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.max_step_norm = max_step_norm
        self.feasible_set = feasible_set
        self.random_state = random_state
        self.verbose = verbose

    def _resolve_optimizer(self, l: int) -> str:
        """``self.optimizer`` at l samples: ``"auto"`` is ``"momentum"`` above 5,000 samples for E2/E3 on the
        full-rank set, ``"armijo"`` otherwise."""
        if self.optimizer != "auto":
            return self.optimizer
        if self.feasible_set != "full_rank":
            return "armijo"
        return "momentum" if l > AUTO_EXACT_MAX_SAMPLES and self._rules[1] == "kl" else "armijo"

    def _feasible_set(self, W: sp.spmatrix) -> Manifold:
        """The manifold of ``feasible_set`` (class docstring)."""
        if self.feasible_set == "stiefel":
            return Stiefel("polar")
        if self.feasible_set == "b_orthogonal":  # GeneralizedStiefel refuses a zero degree (an isolated sample)
            degrees = np.asarray(W.sum(axis=1)).ravel()
            return GeneralizedStiefel(degrees / degrees.sum())
        return NoncompactStiefel()

    def _initial_embedding(self, inputs: Inputs, k: int, rho: float) -> np.ndarray:
        rng = np.random.default_rng(self.random_state)
        l = inputs.W.shape[0]
        if self.init == "prototypes":
            Z = np.asarray(inputs.prototypes, float)[inputs.labels] + rng.normal(0.0, 1e-3 * rho, (l, k))
        elif self.init == "e1":
            Z = CovaE1(alpha=self.alpha).fit(inputs).embedding_
        elif self.init == "laplacian":
            V = laplacian_eigenvectors(inputs.W, k, self.random_state)
            Z = V * (rho / np.sqrt(np.mean(np.sum(V * V, axis=1))))
        else:  # "random"
            Z = rng.normal(0.0, rho / np.sqrt(k), (l, k))
        return noncompact_stiefel.retract(Z, np.zeros_like(Z), check_rank=True)

    def _fit(self, inputs: Inputs) -> "_CovaManifold":
        self._validate_params()
        W, R = inputs.W, np.asarray(inputs.R, dtype=float)
        prototypes = embedding_prototypes(inputs, type(self).__name__)
        k = prototypes.shape[1]
        rho = prototype_radius(prototypes)
        Z0 = self._initial_embedding(inputs, k, rho)
        cohort_rule, local_rule = self._rules
        alpha, kl_method = float(self.alpha), self.kl_method
        self.kl_method_ = resolve_repulsion_method(kl_method, Z0.shape[0], k)
        entropy = kl_entropy(W) if local_rule == "kl" and alpha != 1.0 else None  # once, not per evaluation

        optimizer = self._resolve_optimizer(Z0.shape[0])
        order = None
        if optimizer == "momentum":  # the large maps: iterate with the rows in the graph's locality order
            order = locality_order(W)
            W, R, Z0 = permute_graph(W, order), R[order], Z0[order]
        manifold = self._feasible_set(W)
        if self.feasible_set != "full_rank":
            Z0 = manifold.retract(Z0, np.zeros_like(Z0))

        def fun(Z: np.ndarray, need_value: bool = True) -> tuple[float, np.ndarray]:
            return cova_objective(Z, W, R, prototypes, alpha, cohort_rule, local_rule, kl_method, entropy,
                                  need_value=need_value)

        log.log(logging.INFO if self.verbose else logging.DEBUG, "%s: l = %d, alpha = %g, init = %s, optimizer = %s",
                type(self).__name__, Z0.shape[0], alpha, self.init, optimizer)
        common = {"manifold": manifold, "max_iter": self.max_iter, "gtol": self.gtol,
                  "rank_check_every": self.rank_check_every, "verbose": self.verbose, "log_every": 100}
        self.learning_rate_ = None
        if optimizer == "momentum":
            lr = tsne_learning_rate(Z0.shape[0], floor=0.0) if self.learning_rate == "auto" else float(self.learning_rate)
            self.learning_rate_ = lr
            res = momentum_gradient_descent(fun, Z0, learning_rate=lr, gains="offset",
                                            max_step_norm=self.max_step_norm,
                                            momentum_switch_iter=min(250, self.max_iter // 4), **common)
        else:
            res = riemannian_gradient_descent(fun, Z0, **common)
        self.optimizer_ = optimizer
        self.embedding_ = np.ascontiguousarray(res.x if order is None else unpermute_rows(res.x, order))
        self.prototypes_ = prototypes
        self.n_iter_ = res.n_iter
        self.objective_history_ = np.asarray(res.history)
        self.objective_ = res.fun
        self.converged_ = res.converged
        self.message_ = res.message
        self._keep_fitted_points(inputs)
        return self


class CovaE2(_CovaManifold):
    """COVA-E2: O_KL^(C) + O_KL^(L) (Sec. 3.3), Z on the noncompact Stiefel manifold. See :class:`_CovaManifold`."""

    _rules = RULES["e2"]


class CovaE3(_CovaManifold):
    """COVA-E3: O_dist^(C) + O_KL^(L) (Sec. 3.3), Z on the noncompact Stiefel manifold. See :class:`_CovaManifold`."""

    _rules = RULES["e3"]


class CovaE4(_CovaManifold):
    """COVA-E4: O_KL^(C) + O_dist^(L) (Sec. 3.3), Z on the noncompact Stiefel manifold. See :class:`_CovaManifold`."""

    _rules = RULES["e4"]
