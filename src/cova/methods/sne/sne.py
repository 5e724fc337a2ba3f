"""Exact (O(l²)) SNE and t-SNE (Hinton & Roweis 2002; van der Maaten & Hinton 2008).

* :class:`SNE` -- asymmetric stochastic neighbour embedding (Hinton & Roweis 2002), the "SNE" column of COVA
  Tables 1, 3 and 4. Not available in scikit-learn; openTSNE only approximates it with a large ``dof``.
* :class:`ExactTSNE` -- t-SNE (van der Maaten & Hinton 2008) with the exact gradient, used to cross-check openTSNE
  and for small problems.

Both minimise KL divergences with the gradient descent of van der Maaten's reference implementation (momentum
0.5 → 0.8, delta-bar-delta gains with floor 0.01, re-centring after every step) from a seeded random start
N(0, 10⁻⁴ I) (variance 10⁻⁴, i.e. standard deviation 10⁻², as in the 2008 paper and in
:func:`cova.cohorts.prototypes.tsne_prototypes`).

Every l×l quantity is dense, so both estimators refuse more than ``max_samples`` samples (default 5,000: ≈ 200 MB
per l×l float64 array, a few of which are alive at once). The per-iteration kernels are fused, serial numba loops
over rows (deterministic) in :mod:`cova.objectives.kl`; the loop is
:func:`cova.manifolds.momentum_gradient_descent` on the re-centred Euclidean space.

:func:`sne_kl_and_gradient` and :func:`tsne_kl_and_gradient` (re-exported from :mod:`cova.objectives.kl`, also
reachable as ``SNE.kl_and_gradient`` / ``ExactTSNE.kl_and_gradient``) return the objective and its exact
gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...affinity.dense import conditional_affinities, pca_reduce
from ...affinity.weights import gaussian_perplexity
from ...constraints import MAX_SAMPLES, POSITIVE, POSITIVE_INT, SEED, StrOptions
from ...inputs import Inputs
from ...manifolds import (
    TSNE_SCHEDULE,
    Euclidean,
    momentum_gradient_descent,
    tsne_learning_rate,
)
from ...objectives.kl import sne_kl_and_gradient, tsne_kl_and_gradient
from ..base import TSNE_SCHEDULE_CONSTRAINTS, Embedder, size_guard

__all__ = [
    "SNE",
    "ExactTSNE",
    "sne_kl_and_gradient",
    "tsne_kl_and_gradient",
]


# ----------------------------------------------------------------------------------------------------------------
# shared helpers
# ----------------------------------------------------------------------------------------------------------------
#: The pointer the exact SNE / t-SNE size guard gives (:func:`cova.methods.base.check_size`).
TSNE_ALTERNATIVE = ", use the Barnes–Hut/FFT t-SNE (method 'tsne')"


# ----------------------------------------------------------------------------------------------------------------
# the optimiser (van der Maaten's tsne.m / the 2008 paper)
# ----------------------------------------------------------------------------------------------------------------
def _gradient_descent(objective: Any, P: np.ndarray, Z0: np.ndarray, *, n_iter: int, learning_rate: float,
                      early_exaggeration: float, early_exaggeration_iter: int, momentum: float,
                      final_momentum: float, momentum_switch_iter: int, min_gain: float) -> tuple[np.ndarray, float]:
    """t-SNE's reference gradient descent (van der Maaten & Hinton 2008, Sec. 3.4) on ``objective(Z, P)``.

    :func:`cova.manifolds.momentum_gradient_descent` on the re-centred Euclidean space with the reference gains
    rule: μ = ``momentum`` before iteration ``momentum_switch_iter``, ``final_momentum`` after; P is multiplied by
    ``early_exaggeration`` for the first ``early_exaggeration_iter`` iterations. Returns (Z, final cost on P).
    """
    P_ex = P * early_exaggeration if early_exaggeration != 1.0 and early_exaggeration_iter > 0 else P

    def fun(Z: np.ndarray, need_value: bool = True) -> tuple[float, np.ndarray]:
        return objective(Z, P, with_cost=need_value)

    res = momentum_gradient_descent(
        fun, Z0, manifold=Euclidean(centre=True), max_iter=int(n_iter), gtol=None, learning_rate=learning_rate,
        momentum=(momentum, final_momentum), momentum_switch_iter=momentum_switch_iter, min_gain=min_gain,
        gains="reference", exaggerated_grad=lambda Z: objective(Z, P_ex, with_cost=False)[1],
        exaggeration_iter=early_exaggeration_iter, log_every=0)
    return res.x, res.fun


#: The parameters :class:`SNE` and :class:`ExactTSNE` share, with their constraints.
EXACT_SNE_CONSTRAINTS: dict[str, list] = {
    "perplexity": POSITIVE,
    "n_pca": [*POSITIVE_INT, None],
    "neighbors": [StrOptions({"all", "knn"})],
    "n_components": POSITIVE_INT,
    **TSNE_SCHEDULE_CONSTRAINTS,
    "max_samples": MAX_SAMPLES,
    "random_state": SEED,
}


def _descend(est: Any, inputs: Inputs, Xr: np.ndarray | None) -> Any:
    """The common tail of :meth:`SNE.fit` and :meth:`ExactTSNE.fit`: P from ``est._affinities``, the reference
    gradient descent on ``est.kl_and_gradient`` from the seeded start; sets ``learning_rate_``, ``embedding_`` and
    ``kl_divergence_``."""
    l = inputs.n_samples
    P = est._affinities(inputs, Xr)
    est.learning_rate_ = est._learning_rate(l)
    Z, cost = _gradient_descent(
        est.kl_and_gradient, P, _init(l, est.n_components, est.random_state), n_iter=est.max_iter,
        learning_rate=est.learning_rate_, early_exaggeration=float(est.early_exaggeration),
        early_exaggeration_iter=int(est.early_exaggeration_iter), momentum=est.momentum,
        final_momentum=est.final_momentum, momentum_switch_iter=int(est.momentum_switch_iter),
        min_gain=est.min_gain)
    est.embedding_ = np.ascontiguousarray(Z)
    est.kl_divergence_ = cost
    return est


def _init(l: int, n_components: int, random_state: int) -> np.ndarray:
    """Seeded random start N(0, 10⁻⁴ I) (standard deviation 10⁻², van der Maaten & Hinton 2008, Sec. 3.4)."""
    return np.random.default_rng(int(random_state)).normal(0.0, 1e-2, size=(l, int(n_components)))


# ----------------------------------------------------------------------------------------------------------------
# estimators
# ----------------------------------------------------------------------------------------------------------------
class SNE(Embedder):
    """Asymmetric SNE (Hinton & Roweis 2002), exact O(l²) (COVA Tables 1, 3, 4).

    Input: p_{j|i} perplexity-calibrated Gaussian conditionals of the PCA-reduced data (COVA footnote 1: PCA to 30
    dimensions, perplexity 30). Output kernel: q_{j|i} ∝ exp(−‖z_i − z_j‖²). Cost Σ_i KL(P_i‖Q_i), gradient
    2Σ_j(p_{j|i} − q_{j|i} + p_{i|j} − q_{i|j})(z_i − z_j) (:func:`sne_kl_and_gradient`).

    Parameters
    ----------
    perplexity : 30 (footnote 1; Table 3's "effective neighbour number 30").
    n_pca : PCA dimension applied first (30, footnote 1); ``None`` or d ≤ n_pca skips it.
    neighbors : ``"all"`` (default; calibrate on the full distance matrix, as the reference code) or ``"knn"``
        (on the ⌊3·perplexity⌋ nearest neighbours).
    n_components : 2.
    max_iter : 1000 iterations of gradient descent (as drtoolbox's ``sne.m``).
    learning_rate : η = 0.1 (our choice; ``"auto"`` is accepted and means 0.1). The SNE gradient of one point is O(1)
        (rows of P sum to 1), unlike t-SNE's O(1/l), so t-SNE's rates (≈ l/48) do not transfer. On 1,000 digits
        (PCA-30, perplexity 30), η = 0.05, 0.1 and 0.2 reached the same final cost; η = 1 diverged at l = 1,797
        (the attraction of "hub" points grows with their column sum Σ_j p_{i|j}). drtoolbox's ``sne.m`` uses
        η = 0.05 without gains.
    momentum, final_momentum, momentum_switch_iter : 0.5 → 0.8 at iteration 250 (van der Maaten & Hinton 2008, Sec. 3.4).
    early_exaggeration, early_exaggeration_iter : P is multiplied by 1.0 (i.e. none, as drtoolbox's ``sne.m``)
        for the first 100 iterations; set e.g. 4.0 to lie about P as t-SNE does.
    min_gain : 0.01, floor of the delta-bar-delta gains.
    max_samples : 5,000; more samples raise ``ValueError`` (dense l×l arrays).
    random_state : seed of the N(0, 10⁻⁴ I) start (and of the exact kNN, which does not use it).

    Attributes
    ----------
    embedding_ : (l, n_components). kl_divergence_ : final Σ_i KL(P_i‖Q_i). P_ : not stored (memory).
    """

    sklearn_compatible = True

    kl_and_gradient = staticmethod(sne_kl_and_gradient)
    _parameter_constraints = EXACT_SNE_CONSTRAINTS

    _option_rules = (size_guard("SNE", alternative=TSNE_ALTERNATIVE),)

    def __init__(self, perplexity: float = 30.0, n_pca: int | None = 30, neighbors: str = "all",
                 n_components: int = 2, max_iter: int = TSNE_SCHEDULE.max_iter, learning_rate: str | float = 0.1,
                 momentum: float = TSNE_SCHEDULE.momentum, final_momentum: float = TSNE_SCHEDULE.final_momentum, momentum_switch_iter: int = TSNE_SCHEDULE.momentum_switch_iter,
                 early_exaggeration: float = 1.0, early_exaggeration_iter: int = 100, min_gain: float = TSNE_SCHEDULE.min_gain,
                 max_samples: int | None = 5000, random_state: int = 0):
        self.perplexity = perplexity
        self.n_pca = n_pca
        self.neighbors = neighbors
        self.n_components = n_components
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.final_momentum = final_momentum
        self.momentum_switch_iter = momentum_switch_iter
        self.early_exaggeration = early_exaggeration
        self.early_exaggeration_iter = early_exaggeration_iter
        self.min_gain = min_gain
        self.max_samples = max_samples
        self.random_state = random_state

    def _affinities(self, inputs: Inputs, Xr: np.ndarray) -> np.ndarray:
        """The dense conditional P (overridden by the supervised variant)."""
        return conditional_affinities(Xr, self.perplexity, self.neighbors, random_state=self.random_state)

    def _learning_rate(self, l: int) -> float:
        return 0.1 if self.learning_rate == "auto" else float(self.learning_rate)

    def _fit(self, inputs: Inputs) -> "SNE":
        self._validate_params()
        Xr = pca_reduce(inputs.X, self.n_pca)
        return _descend(self, inputs, Xr)


class ExactTSNE(Embedder):
    """t-SNE (van der Maaten & Hinton 2008) with the exact O(l²) gradient (Eq. 5).

    Joint P = (P_cond + P_condᵀ)/(2l) from perplexity-calibrated conditionals of the PCA-reduced data (footnote 1);
    Student-t output kernel; gradient 4Σ_j(p_ij − q_ij)q̃_ij(z_i − z_j) (:func:`tsne_kl_and_gradient`).

    Parameters
    ----------
    perplexity : 30. n_pca : 30 (``None`` skips). neighbors : ``"all"`` (full distance matrix) or ``"knn"``
        (⌊3·perplexity⌋ neighbours, i.e. :func:`cova.affinity.gaussian_perplexity`).
    n_components : 2. max_iter : 1000 (total, including the exaggeration phase).
    learning_rate : ``"auto"`` = max(l / early_exaggeration / 4, 50), scikit-learn's rule for this gradient
        (which includes the factor 4); openTSNE's rate for its 4×-smaller gradient is 4× this.
    early_exaggeration, early_exaggeration_iter : 12 for the first 250 iterations (scikit-learn / openTSNE).
    momentum, final_momentum, momentum_switch_iter : 0.5 → 0.8 at iteration 250.
    min_gain : 0.01. max_samples : 5,000 (``ValueError`` above). random_state : seed of the N(0, 10⁻⁴ I) start.
    affinity : ``"perplexity"`` (default: P from X as above) or ``"inputs"``: the run's W is the joint P (a given
        symmetric unit-sum graph, e.g. DOSNES's WorldTrade network; X is not read).
    """

    sklearn_compatible = True

    kl_and_gradient = staticmethod(tsne_kl_and_gradient)
    _parameter_constraints = {**EXACT_SNE_CONSTRAINTS, "affinity": [StrOptions({"perplexity", "inputs"})]}

    _option_rules = (size_guard("Exact t-SNE", alternative=TSNE_ALTERNATIVE),)

    def __init__(self, perplexity: float = 30.0, n_pca: int | None = 30, neighbors: str = "all",
                 n_components: int = 2, max_iter: int = TSNE_SCHEDULE.max_iter, learning_rate: str | float = "auto",
                 momentum: float = TSNE_SCHEDULE.momentum, final_momentum: float = TSNE_SCHEDULE.final_momentum, momentum_switch_iter: int = TSNE_SCHEDULE.momentum_switch_iter,
                 early_exaggeration: float = 12.0, early_exaggeration_iter: int = 250, min_gain: float = TSNE_SCHEDULE.min_gain,
                 max_samples: int | None = 5000, random_state: int = 0, affinity: str = "perplexity"):
        self.affinity = affinity
        self.perplexity = perplexity
        self.n_pca = n_pca
        self.neighbors = neighbors
        self.n_components = n_components
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.final_momentum = final_momentum
        self.momentum_switch_iter = momentum_switch_iter
        self.early_exaggeration = early_exaggeration
        self.early_exaggeration_iter = early_exaggeration_iter
        self.min_gain = min_gain
        self.max_samples = max_samples
        self.random_state = random_state

    def requires(self) -> tuple[str, ...]:
        """W with ``affinity="inputs"``, else X."""
        return self._affinity_requires()

    def _affinities(self, inputs: Inputs, Xr: np.ndarray | None) -> np.ndarray:
        """Dense joint P, symmetric, unit sum: from X (``affinity="perplexity"``) or the run's W
        (``affinity="inputs"``, e.g. a given graph; ``Xr`` is then unused)."""
        if self.affinity == "inputs":
            return np.asarray(inputs.W.toarray(), dtype=np.float64)
        l = Xr.shape[0]
        if self.neighbors == "knn":
            return gaussian_perplexity(Xr, self.perplexity, method="exact", random_state=self.random_state).toarray()
        Pc = conditional_affinities(Xr, self.perplexity, "all")
        return (Pc + Pc.T) / (2.0 * l)

    def _learning_rate(self, l: int) -> float:
        if self.learning_rate == "auto":
            return tsne_learning_rate(l, float(self.early_exaggeration))
        return float(self.learning_rate)

    def _fit(self, inputs: Inputs) -> "ExactTSNE":
        self._validate_params()
        Xr = None if self.affinity == "inputs" else pca_reduce(inputs.X, self.n_pca)
        return _descend(self, inputs, Xr)
