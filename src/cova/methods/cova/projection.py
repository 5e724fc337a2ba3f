"""COVA's projection models as estimators (COVA Sec. 3.2): P1–P4 (Z = FU, U on the Stiefel manifold, SGD batches;
Sec. 3.2.1, Appendix B, Table F.2) and eigen-COVA (k deflated eigenproblems; Sec. 3.2.2, Eqs. 20–25, Table F.3).
Both embed the relation features F of :class:`cova.cohorts.RelationFeatures` and map new samples by Z_new = F_new U.
The objectives are :mod:`cova.objectives.cova`'s, the eigen solver :mod:`cova.manifolds.eigen`'s."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ...cohorts.relation import RelationFeatures, resolve_n_prototypes
from ...constraints import (
    NON_NEGATIVE,
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    SEED_OR_NONE,
    UNIT,
    Interval,
    RealNotInt,
    StrOptions,
    integer,
)
from ...errors import UserError
from ...inputs import Inputs
from ...manifolds import Stiefel, batch_inputs, sgd_batches, stiefel
from ...manifolds.eigen import eigen_cova_solve
from ...objectives import project_gradient
from ...objectives.cova import (
    KL_METHODS,
    RULES,
    cova_objective,
    eigen_cova_blocks,
    eigen_cova_matrix,
    laplacian_gram,
    prototype_distance_weights,
)
from ..base import Embedder, embedding_prototypes, repulsion_fits

log = logging.getLogger("cova")


# ============================================================================================================
# COVA-P1–P4: Z = F U with U on the Stiefel manifold St(k̃, k) (Sec. 3.2.1, Appendix B, Table F.2)
# ============================================================================================================

def _check_X_new(model: Embedder, X: np.ndarray) -> np.ndarray:
    if not hasattr(model, "components_"):
        raise UserError(f"{type(model).__name__} is not fitted yet; call fit first")
    return np.asarray(X, dtype=np.float64)



#: k̃ of the relation features: a count (capped at l) or a fraction of l in (0, 1].
N_SAMPLE_PROTOTYPES = [integer(1, None), Interval(RealNotInt, 0.0, 1.0, closed="right")]


def _enough_sample_prototypes(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """The rule of ``n_sample_prototypes``: the k̃ relation features span the k-column projection U (Sec. 3.2.1), so
    k̃ ≥ k, the prototypes' dimension (context ``"prototype_dimension"``); k̃ as
    :func:`~cova.cohorts.relation.resolve_n_prototypes` gives it for the exact number of samples, else the int asked
    for (capped at l, so never more)."""
    k, n, value = context.get("prototype_dimension"), context.get("n_samples"), options.get("n_sample_prototypes")
    if k is None or value is None or isinstance(value, bool):
        return None
    if n is not None and n.exact:
        k_tilde, how = resolve_n_prototypes(value, n.value), f"{n.source}, so k̃ = {resolve_n_prototypes(value, n.value)}"
    elif isinstance(value, (int, np.integer)):
        k_tilde, how = int(value), f"k̃ = {int(value)}"
    else:
        return None
    if k_tilde >= k.value:
        return None
    return "n_sample_prototypes", f"{how}, and {k.source}: the projection needs k̃ ≥ k; allowed: k̃ of at least {k.value}"


class _CovaProjection(Embedder):
    """Shared base of COVA-P1–P4: Z = F U, UᵀU = I_k, by Stiefel gradient descent with SGD batches.

    F (l×k̃) holds Gaussian relation features to k̃ random sample prototypes (Sec. 3.2.1,
    :class:`cova.cohorts.RelationFeatures`); the U-gradient of f(FU) is Fᵀ·Grad_Z (Table A.2, with A.36, A.43 and
    A.44 corrected as in docs/papers.md); the step is U ← R_U(−γ P_U(Grad)) (Eq. 19) with the tangent projection
    of Eq. 16 and a QR (Eq. 17, sign-fixed) or polar (B.17, exponent −1/2) retraction, Armijo line search (App. F's
    "standard line search").

    SGD (Table F.2): ``cycles`` times, shuffle and split into batches of at most ``batch_size`` samples, run
    ``inner_iter`` Armijo steps on the batch objective (W_II, R_I renormalised to unit sum, F_I the batch rows),
    carry U on. With l ≤ batch_size this is full-batch gradient descent with ``inner_iter·cycles`` steps. The
    defaults inner_iter = 30, cycles = 10 give N·T = 300 steps; Table F.2 gives no N or T (docs/papers.md, COVA
    "Settings the paper leaves open").

    Parameters
    ----------
    alpha : weight α of the cohort rule (Eq. 13).
    n_sample_prototypes : k̃, an int (capped at l) or a fraction of l (Cora: 0.15).
    sigma : σ_F of the relation features; ``None`` = median of ‖x_i − q_j‖ (the paper gives no σ_F;
        docs/papers.md).
    init : ``"eigen"`` (the k eigenvectors of Fᵀ𝐋(W)F with the smallest eigenvalues, OLPP-style;
        default, **[ours]**: docs/papers.md) or ``"random"`` (Haar-random point of St(k̃, k)).
    retraction : ``"qr"`` or ``"polar"``.
    batch_size, inner_iter, cycles : l_batch, N and T of Table F.2.
    gtol : per-batch gradient tolerance relative to the batch's initial Riemannian gradient.
    kl_method : repulsion back end of O_KL^(L): ``"auto"`` (default; exact for batches of ≤ 5,000 samples),
        ``"exact"``, ``"fft"`` or ``"bh"``, as for :class:`_CovaManifold`.
    random_state : seed of the sample-prototype draw, the random init and the batch shuffles.
    verbose : log progress on the ``"cova"`` logger at INFO (DEBUG otherwise).

    Attributes
    ----------
    embedding_ : (l, k) Z = FU. ``prototypes_`` : Υ. ``components_`` : U (k̃, k).
    ``relation_features_`` : the fitted :class:`~cova.cohorts.RelationFeatures` (q_j, σ_F).
    ``n_iter_`` : total steps. ``objective_history_`` : f at U_0 and after every step for full-batch runs
    (non-increasing); ``None`` with SGD batches (batch objectives are not comparable, see ``batch_history_``).
    ``objective_`` : final f for full-batch runs, else ``None``.
    """

    _rules: tuple[str, str] = ("dist", "dist")
    _parameter_constraints = {
        "alpha": UNIT,
        "n_sample_prototypes": N_SAMPLE_PROTOTYPES,
        "sigma": [*POSITIVE, None],
        "init": [StrOptions({"eigen", "random"})],
        "retraction": [StrOptions({"qr", "polar"})],
        "batch_size": POSITIVE_INT,
        "inner_iter": NON_NEGATIVE_INT,
        "cycles": NON_NEGATIVE_INT,
        "gtol": NON_NEGATIVE,
        "kl_method": [StrOptions(KL_METHODS)],
        "random_state": SEED_OR_NONE,
        "verbose": ["boolean"],
    }
    _option_rules = (repulsion_fits(frozenset(KL_METHODS), lambda _, context: context.get("prototype_dimension")),
                     _enough_sample_prototypes)

    required_inputs = ("X", "W", "R", "prototypes")

    def __init__(self, alpha: float = 0.5, n_sample_prototypes: int | float = 500, sigma: float | None = None,
                 init: str = "eigen", retraction: str = "qr", batch_size: int = 1000, inner_iter: int = 30,
                 cycles: int = 10, gtol: float = 1e-6, kl_method: str = "auto", random_state: int | None = 0,
                 verbose: bool = False):
        self.alpha = alpha
        self.n_sample_prototypes = n_sample_prototypes
        self.sigma = sigma
        self.init = init
        self.retraction = retraction
        self.batch_size = batch_size
        self.inner_iter = inner_iter
        self.cycles = cycles
        self.gtol = gtol
        self.kl_method = kl_method
        self.random_state = random_state
        self.verbose = verbose

    def _initial_components(self, F: np.ndarray, W: sp.spmatrix, k: int) -> np.ndarray:
        if self.init == "eigen":
            A_L = laplacian_gram(F, W)
            _, U = scipy.linalg.eigh(A_L, subset_by_index=[0, k - 1])
            idx = np.argmax(np.abs(U), axis=0)
            return U * np.sign(U[idx, np.arange(k)])
        return stiefel.random_point(F.shape[1], k, self.random_state)

    def _fit(self, inputs: Inputs) -> "_CovaProjection":
        self._validate_params()
        W, R = inputs.W, np.asarray(inputs.R, dtype=float)
        prototypes = embedding_prototypes(inputs, type(self).__name__)
        k = prototypes.shape[1]
        rf = RelationFeatures(self.n_sample_prototypes, self.sigma, self.random_state)
        F = rf.fit_transform(inputs.X)  # k̃ ≥ k: _option_rules
        U0 = self._initial_components(F, W, k)
        l = F.shape[0]
        cohort_rule, local_rule = self._rules
        alpha, kl_method = float(self.alpha), self.kl_method

        def make_batch_problem(indices: np.ndarray):
            if indices.size == l:
                Wb, Rb, Fb = W, R, F
            else:
                Wb, Rb = batch_inputs(W, R, indices)
                Fb = F[indices]

            def fun(U: np.ndarray) -> tuple[float, np.ndarray]:
                value, grad_Z = cova_objective(Fb @ U, Wb, Rb, prototypes, alpha, cohort_rule, local_rule,
                                               kl_method)
                return value, project_gradient(Fb, grad_Z)
            return fun

        log.log(logging.INFO if self.verbose else logging.DEBUG, "%s: l = %d, k_tilde = %d, sigma_F = %.4g",
                type(self).__name__, l, F.shape[1], rf.sigma_)
        res = sgd_batches(make_batch_problem, U0, l, batch_size=self.batch_size, inner_iter=self.inner_iter,
                          cycles=self.cycles, random_state=self.random_state, manifold=Stiefel(self.retraction),
                          gtol=self.gtol, verbose=self.verbose, log_every=100)
        full_batch = l <= self.batch_size
        log.log(logging.INFO if self.verbose else logging.DEBUG, "%s: %d steps; %s", type(self).__name__,
                res.n_iter, res.message)
        self.components_ = res.x
        self.relation_features_ = rf
        self.embedding_ = np.ascontiguousarray(F @ res.x)
        self.prototypes_ = prototypes
        self.n_iter_ = res.n_iter
        self.objective_history_ = np.asarray(res.history) if full_batch else None
        self.batch_history_ = None if full_batch else np.asarray(res.history)
        self.objective_ = res.fun if full_batch else None
        self.message_ = res.message
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Out-of-sample embedding Z_new = F_new U with the fitted q_j and σ_F (Sec. 3.2, footnote 4)."""
        X = _check_X_new(self, X)
        return self.relation_features_.transform(X) @ self.components_


class CovaP1(_CovaProjection):
    """COVA-P1: O_dist^(C) + O_dist^(L) on Z = FU. No closed form (D.5–D.7: an orthogonality-constrained Sylvester
    equation), optimised iteratively. See :class:`_CovaProjection`."""

    _rules = RULES["p1"]


class CovaP2(_CovaProjection):
    """COVA-P2: O_KL^(C) + O_KL^(L) on Z = FU. See :class:`_CovaProjection`."""

    _rules = RULES["p2"]


class CovaP3(_CovaProjection):
    """COVA-P3: O_dist^(C) + O_KL^(L) on Z = FU. See :class:`_CovaProjection`."""

    _rules = RULES["p3"]


class CovaP4(_CovaProjection):
    """COVA-P4: O_KL^(C) + O_dist^(L) on Z = FU. See :class:`_CovaProjection`."""

    _rules = RULES["p4"]

# ============================================================================================================
# eigen-COVA (Sec. 3.2.2, Eqs. 20–25, Table F.3; Eq. 25 corrected)
# ============================================================================================================

class EigenCova(Embedder):
    """eigen-COVA (Sec. 3.2.2, Eqs. 20–25, Table F.3; Eq. 25 corrected).

    Minimises ``αη O_dist^(C)(FU; E) + (1−α) O_dist^(L)(FU) − α(1−η) O_aux(E)`` (Eq. 23) over P = [U; V] with
    PᵀP = I, E = ΥV the auxiliary projected prototypes and O_aux(E) = tr(Eᵀ𝐋(W_v)E), W_v = [‖υ_i − υ_j‖] (Eq. 22).
    Solved as k sequential smallest-eigenvector problems of the (k̃+k)-square O_eig (Eq. 25 with B corrected) with
    deflation restricted to the orthogonal complement (:func:`eigen_cova_solve`). The Gram blocks are computed
    once (:func:`eigen_cova_blocks`). U and V are **not** rescaled (‖p_t‖ = 1 fixes the common scale of Z and E);
    S_c for eigen-COVA uses E (Appendix G), so ``prototypes_`` = E.

    Parameters
    ----------
    alpha : cohort weight α. eta : η ∈ [0, 1], cohort proximity vs prototype spread.
    n_sample_prototypes, sigma : relation features F (Sec. 3.2.1), as for P1–P4.
    wv_normalize : divide W_v by its sum (default, not in the paper); False = the literal Eq. 22. W_v is always
        computed from the original Υ, not the deflated Υ^t (both choices: docs/papers.md).
    random_state : seed of the sample-prototype draw.

    Attributes
    ----------
    embedding_ : Z = FU (l, k). ``prototypes_`` : E = ΥV (c, k). ``components_`` : U (k̃, k).
    ``prototype_components_`` : V (k, k). ``eigenvectors_`` : P = [U; V]. ``eigenvalues_`` : the k eigenvalues.
    ``relation_features_`` : the fitted :class:`~cova.cohorts.RelationFeatures`. ``W_v_`` : the W_v used.
    ``objective_`` : Eq. 23 at the solution (= the sum of the eigenvalues).
    """

    _parameter_constraints = {
        "alpha": UNIT,
        "eta": UNIT,
        "n_sample_prototypes": N_SAMPLE_PROTOTYPES,
        "sigma": [*POSITIVE, None],
        "wv_normalize": ["boolean"],
        "random_state": SEED_OR_NONE,
    }

    required_inputs = ("X", "W", "R", "prototypes")

    def __init__(self, alpha: float = 0.5, eta: float = 0.8, n_sample_prototypes: int | float = 500,
                 sigma: float | None = None, wv_normalize: bool = True, random_state: int | None = 0):
        self.alpha = alpha
        self.eta = eta
        self.n_sample_prototypes = n_sample_prototypes
        self.sigma = sigma
        self.wv_normalize = wv_normalize
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "EigenCova":
        self._validate_params()
        W, R = inputs.W, np.asarray(inputs.R, dtype=float)
        prototypes = embedding_prototypes(inputs, type(self).__name__)
        k = prototypes.shape[1]
        rf = RelationFeatures(self.n_sample_prototypes, self.sigma, self.random_state)
        F = rf.fit_transform(inputs.X)
        W_v = prototype_distance_weights(prototypes, self.wv_normalize)
        blocks = eigen_cova_blocks(F, W, R, prototypes, W_v)
        O_eig = eigen_cova_matrix(blocks, float(self.alpha), float(self.eta))
        P, eigenvalues = eigen_cova_solve(O_eig, F.shape[1], k)
        U, V = P[:F.shape[1]], P[F.shape[1]:]
        self.eigenvectors_ = P
        self.eigenvalues_ = eigenvalues
        self.components_ = U
        self.prototype_components_ = V
        self.relation_features_ = rf
        self.W_v_ = W_v
        self.embedding_ = np.ascontiguousarray(F @ U)
        self.prototypes_ = prototypes @ V
        self.objective_ = float(eigenvalues.sum())
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Out-of-sample embedding Z_new = F_new U (Sec. 3.2, footnote 4)."""
        X = _check_X_new(self, X)
        return self.relation_features_.transform(X) @ self.components_
