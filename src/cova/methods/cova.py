"""COVA models as estimators (COVA Sec. 3.3): E1 (closed form), E2–E4 (noncompact Stiefel gradient descent),
P1–P4 (Stiefel gradient descent with SGD batches on Z = FU) and eigen-COVA (k deflated eigenproblems)."""

from __future__ import annotations

import logging

import numpy as np
import scipy.linalg
import scipy.linalg.blas
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from threadpoolctl import threadpool_limits

from ..affinity.graphs import laplacian_eigenvectors
from ..cohorts.relation import RelationFeatures
from ..constraints import (
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
from ..inputs import Inputs
from ..manifolds import (
    GeneralizedStiefel,
    Manifold,
    NoncompactStiefel,
    Stiefel,
    batch_inputs,
    momentum_gradient_descent,
    noncompact_stiefel,
    riemannian_gradient_descent,
    sgd_batches,
    stiefel,
)
from ..objectives import (
    AUTO_EXACT_MAX_SAMPLES,
    REPULSION_METHODS,
    kl_entropy,
    o_dist_c,
    o_dist_l,
    o_kl_c,
    o_kl_l,
    project_gradient,
    resolve_repulsion_method,
)
from .base import DegenerateSolution, Embedder

log = logging.getLogger("cova")


def e1_system(W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray, alpha: float,
              zeta: float = 0.0) -> tuple[sp.csc_matrix, np.ndarray]:
    """The sparse SPD system ``M Z = B`` of COVA-E1 (Eq. 14 / D.3, corrected: docs/papers.md).

    ``M = α𝐃(R) + (1−α)𝐋(W) + ζI`` and ``B = α R Υ``; the printed Eq. 14 omits the α on the right-hand side.
    ``nnz(M) = l + nnz(W)``: no dense l×l matrix.
    """
    M = sp.diags(e1_diagonal(W, R, alpha, zeta), format="csc") - (1.0 - alpha) * sp.csc_matrix(W)
    return M.tocsc(), alpha * (R @ prototypes)


def e1_diagonal(W: sp.spmatrix, R: np.ndarray, alpha: float, zeta: float = 0.0) -> np.ndarray:
    """The diagonal ``α rowsum(R) + (1−α) degree(W) + ζ`` of :func:`e1_system`'s M."""
    return alpha * R.sum(axis=1) + (1.0 - alpha) * np.asarray(W.sum(axis=1)).ravel() + zeta


def e1_objective(Z: np.ndarray, W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray,
                 alpha: float) -> tuple[float, np.ndarray]:
    """f(Z) = α O_dist^(C)(Z) + (1 − α) O_dist^(L)(Z) (Eq. 13 with the E1 pair of rules), value and gradient."""
    fc, gc = o_dist_c(Z, R, prototypes)
    fl, gl = o_dist_l(Z, W)
    return alpha * fc + (1.0 - alpha) * fl, alpha * gc + (1.0 - alpha) * gl


#: ``CovaE1(solver="auto")`` factorises M (SuperLU) up to this many samples and uses Jacobi-CG above.
E1_DIRECT_MAX_SAMPLES = 5_000


class CovaE1(Embedder):
    """COVA-E1: distance cohort rule + distance local rule, solved in closed form.

    ``Z* = α [α𝐃(R) + (1−α)𝐋(W) + ζI]⁻¹ R Υ`` (Eq. 14 / D.3 with the factor α of the right-hand side restored:
    the gradient of Eq. 13 with the E1 rules is zero there).

    Parameters
    ----------
    alpha : weight of the cohort rule, in [0, 1].
    zeta : ridge ζ; ``None`` means 0 when M is already SPD (every sample has a positive confidence row sum,
        which guarantees it; Appendix D sets ζ = 0 when the matrix is invertible) and ``1e-10·trace(M)/l``
        otherwise (the paper asks only 0 < ζ ≪ 1).
    solver : ``"direct"`` (sparse LU of the SPD matrix, scipy's SuperLU), ``"cg"`` (conjugate gradients with a
        Jacobi preconditioner, relative residual ``tol``), ``"dense"`` (``numpy.linalg.solve``, only for
        l ≤ 5,000, for tests) or ``"auto"`` (direct up to :data:`E1_DIRECT_MAX_SAMPLES` = 5,000 samples, CG
        above). kNN graphs of high-dimensional data are expander-like, so the LU fill-in explodes: on
        Fashion-MNIST (perplexity-30 W) SuperLU took 584 s at l = 20,000 where Jacobi-CG took 2 s (≈ 45
        iterations per column, O(nnz(W)) memory) and agrees with the dense solve to ≈ 1e-10 relative.
        CG starts from the α → 1 limit RΥ/rowsum(R) (warm start: 26 instead of 28
        iterations on 70,000 Fashion-MNIST points) and solves all columns together (:func:`_jacobi_cg`).
    tol : CG relative residual.

    Attributes: ``embedding_`` Z, ``prototypes_`` Υ, ``zeta_`` (the ridge used), ``solver_`` (the solver used,
    ``"auto"`` resolved).
    """

    _parameter_constraints = {
        "alpha": UNIT,
        "zeta": [*NON_NEGATIVE, None],
        "solver": [StrOptions({"auto", "direct", "cg", "dense"})],
        "tol": POSITIVE,
    }

    required_inputs = ("W", "R", "prototypes")

    def __init__(self, alpha: float = 0.5, zeta: float | None = None, solver: str = "auto", tol: float = 1e-10):
        self.alpha = alpha
        self.zeta = zeta
        self.solver = solver
        self.tol = tol

    def fit(self, inputs: Inputs) -> "CovaE1":
        self._validate_params()
        W, R, P = inputs.W, inputs.R, inputs.prototypes
        l = W.shape[0]
        zeta = self.zeta
        if zeta is None:
            zeta = 0.0
            if self.alpha == 0.0 or np.any(R.sum(axis=1) <= 0.0):
                trace = e1_diagonal(W, R, self.alpha).sum() - (1.0 - self.alpha) * W.diagonal().sum()
                zeta = 1e-10 * trace / l
        solver = self.solver
        if solver == "auto":
            solver = "direct" if l <= E1_DIRECT_MAX_SAMPLES else "cg"
        if solver == "cg":
            # M = 𝐃(diag) − (1−α)W is never assembled: the CG applies W and the diagonal directly
            # warm start: the α → 1 limit RΥ / rowsum(R) (each sample at its confidence-weighted prototype mean)
            RP = R @ P
            rowsum = R.sum(axis=1)[:, None]
            X0 = np.divide(RP, rowsum, out=np.zeros_like(RP), where=rowsum > 0)
            Z = _jacobi_cg(W, e1_diagonal(W, R, self.alpha, zeta), 1.0 - self.alpha, self.alpha * RP, self.tol, X0)
        else:
            M, B = e1_system(W, R, P, self.alpha, zeta)
            if solver == "dense":
                if l > 5_000:
                    raise ValueError(f"solver='dense' builds an l×l matrix; refused for l = {l} > 5,000")
                Z = np.linalg.solve(M.toarray(), B)
            else:
                Z = spla.splu(M, permc_spec="MMD_AT_PLUS_A").solve(B)
        self.embedding_ = np.ascontiguousarray(Z)
        self.prototypes_ = np.asarray(P, dtype=np.float64)
        self.zeta_ = zeta
        self.solver_ = solver
        return self


def _jacobi_cg(W: sp.spmatrix, diag: np.ndarray, c: float, B: np.ndarray, tol: float,
               X0: np.ndarray | None = None) -> np.ndarray:
    """Solve ``(𝐃(diag) − c W) Z = B`` for every column of B with Jacobi-preconditioned conjugate gradients.

    Written here rather than calling ``scipy.sparse.linalg.cg`` (one right-hand side per call): the columns
    are iterated together, so each iteration reads W once for all of them (one sparse × (l, k) product
    instead of k sparse × vector products; W is the memory-bound part at 70,000 samples) and M is never
    assembled. Each column is plain PCG (Saad, Alg. 9.1) from ``X0`` (zeros by default), stopped at
    ‖r‖ ≤ tol·‖b‖ as scipy's ``rtol``; a converged column is frozen while the others go on. Raises after 20·l
    iterations."""
    W = sp.csr_matrix(W)
    d = diag[:, None]
    inv = 1.0 / d

    def apply_m(V: np.ndarray) -> np.ndarray:
        return d * V - c * (W @ V)

    X = np.zeros_like(B, dtype=np.float64) if X0 is None else np.array(X0, dtype=np.float64)
    Rr = B - apply_m(X)
    Zr = inv * Rr
    P = Zr.copy()
    rz = np.einsum("ij,ij->j", Rr, Zr)
    stop = tol * np.linalg.norm(B, axis=0)
    for _ in range(20 * W.shape[0]):
        live = np.linalg.norm(Rr, axis=0) > stop
        if not live.any():
            return X
        MP = apply_m(P)
        a = np.divide(rz, np.einsum("ij,ij->j", P, MP), out=np.zeros_like(rz), where=live)
        X += a * P
        Rr -= a * MP
        Zr = inv * Rr
        rz_new = np.einsum("ij,ij->j", Rr, Zr)
        P = Zr + np.divide(rz_new, rz, out=np.zeros_like(rz), where=live) * P
        rz = rz_new
    raise RuntimeError(f"COVA-E1: conjugate gradients did not converge in {20 * W.shape[0]} iterations")


# ============================================================================================================
# COVA-E2–E4: gradient descent on the noncompact Stiefel manifold (Sec. 3.1.4, Table F.1)
# ============================================================================================================

#: The (O^(C), O^(L)) rule pair of every model (Sec. 3.3).
RULES: dict[str, tuple[str, str]] = {
    "e1": ("dist", "dist"), "e2": ("kl", "kl"), "e3": ("dist", "kl"), "e4": ("kl", "dist"),
    "p1": ("dist", "dist"), "p2": ("kl", "kl"), "p3": ("dist", "kl"), "p4": ("kl", "dist"),
}


def prototype_radius(prototypes: np.ndarray) -> float:
    """RMS radius ρ of the centred prototypes, sqrt(mean_j ‖υ_j − ῡ‖²) (the scale convention of docs/papers.md, COVA
    "Prototypes"); 1.0 if all prototypes coincide."""
    P = np.asarray(prototypes, dtype=float)
    rho = float(np.sqrt(np.mean(np.sum((P - P.mean(axis=0)) ** 2, axis=1))))
    return rho if rho > 0 else 1.0


def cova_objective(Z: np.ndarray, W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray, alpha: float,
                   cohort_rule: str, local_rule: str, kl_method: str = "auto",
                   kl_entropy: float | None = None, need_value: bool = True) -> tuple[float, np.ndarray]:
    """f(Z) = α O^(C)(Z) + (1 − α) O^(L)(Z) (Eq. 13) and its Euclidean gradient (Table A.1).

    ``cohort_rule`` ∈ {"dist" (Eq. 7), "kl" (Eq. 8 in the normalised A.8 form)}; ``local_rule`` ∈ {"dist" (Eq. 1),
    "kl" (Eq. 2, joint p_s = W, repulsion by ``kl_method``)}. A term whose weight is 0 is not evaluated.
    ``kl_entropy``: Σ w ln w of W when precomputed (:func:`cova.objectives.kl_entropy`; constant in Z).
    ``need_value=False``: the O_KL^(L) and O_KL^(C) values (logarithms per edge of W and per sample–prototype pair)
    are skipped and the returned value is NaN; the gradient is unchanged (used by the momentum optimiser between log points).
    """
    value, grad = 0.0, np.zeros_like(Z)
    if alpha != 0.0:
        if cohort_rule == "dist":
            fc, gc = o_dist_c(Z, R, prototypes)
        else:
            fc, gc = o_kl_c(Z, R, prototypes, need_value=need_value)
        value, grad = alpha * fc, alpha * gc
    if alpha != 1.0:
        if local_rule == "dist":
            fl, gl = o_dist_l(Z, W)
        else:
            fl, gl = o_kl_l(Z, W, method=kl_method, entropy=kl_entropy, need_value=need_value)
        value, grad = value + (1.0 - alpha) * fl, grad + (1.0 - alpha) * gl
    return float(value), grad


#: Optimisers of COVA-E2–E4 (``optimizer=``); ``"auto"`` resolves by sample count (:class:`_CovaManifold`).
OPTIMIZERS = ("auto", "armijo", "momentum")
#: Feasible sets of COVA-E2–E4 (``feasible_set=``; COVA Appendix C): M, M₁, M₂.
FEASIBLE_SETS = ("full_rank", "stiefel", "b_orthogonal")
#: Repulsion back ends of O_KL^(L) (``kl_method=``, :func:`cova.objectives.resolve_repulsion_method`).
KL_METHODS = {"auto", *REPULSION_METHODS}
#: k̃ of the relation features: a count (capped at l) or a fraction of l in (0, 1].
N_SAMPLE_PROTOTYPES = [integer(1, None), Interval(RealNotInt, 0.0, 1.0, closed="right")]


class _CovaManifold(Embedder):
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
        iterations and at the end, and may rise between them) or ``"auto"`` (default: ``"armijo"`` up to 5,000
        samples, so every result at the paper's sizes is unchanged, ``"momentum"`` above; E4, which has no
        O_KL^(L) term and is cheap, always resolves to ``"armijo"``).
    learning_rate : η of the momentum optimiser; ``"auto"`` (default) = l / 4, i.e. openTSNE's η = l for its
        gradient, which lacks the factor 4 of Eq. A.34. Ignored by Armijo.
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
    ``kl_method_`` : the repulsion back end ``kl_method`` stands for at this size (unused by E4).
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
        "feasible_set": [StrOptions(set(FEASIBLE_SETS))],
        "random_state": SEED_OR_NONE,
        "verbose": ["boolean"],
    }

    required_inputs = ("W", "R", "prototypes", "labels")

    def __init__(self, alpha: float = 0.5, init: str = "prototypes", max_iter: int = 1000, gtol: float = 1e-6,
                 rank_check_every: int = 10, kl_method: str = "auto", optimizer: str = "auto",
                 learning_rate: float | str = "auto", feasible_set: str = "full_rank", random_state: int | None = 0,
                 verbose: bool = False):
        self.alpha = alpha
        self.init = init
        self.max_iter = max_iter
        self.gtol = gtol
        self.rank_check_every = rank_check_every
        self.kl_method = kl_method
        self.optimizer = optimizer
        self.learning_rate = learning_rate
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

    def fit(self, inputs: Inputs) -> "_CovaManifold":
        self._validate_params()
        W, R = inputs.W, np.asarray(inputs.R, dtype=float)
        prototypes = np.asarray(inputs.prototypes, dtype=np.float64)
        k = prototypes.shape[1]
        rho = prototype_radius(prototypes)
        Z0 = self._initial_embedding(inputs, k, rho)
        cohort_rule, local_rule = self._rules
        alpha, kl_method = float(self.alpha), self.kl_method
        self.kl_method_ = resolve_repulsion_method(kl_method, Z0.shape[0], k)
        entropy = kl_entropy(W) if local_rule == "kl" and alpha != 1.0 else None  # once, not per evaluation

        optimizer = self._resolve_optimizer(Z0.shape[0])
        if self.feasible_set != "full_rank" and optimizer != "armijo":
            raise ValueError(f"feasible_set={self.feasible_set!r} runs the Armijo optimiser only; got optimizer = "
                             f"{self.optimizer!r} (use 'armijo' or 'auto')")
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
            lr = Z0.shape[0] / 4.0 if self.learning_rate == "auto" else float(self.learning_rate)
            self.learning_rate_ = lr
            res = momentum_gradient_descent(fun, Z0, learning_rate=lr, gains="offset",
                                            momentum_switch_iter=min(250, self.max_iter // 4), **common)
        else:
            res = riemannian_gradient_descent(fun, Z0, **common)
        self.optimizer_ = optimizer
        self.embedding_ = np.ascontiguousarray(res.x)
        self.prototypes_ = prototypes
        self.n_iter_ = res.n_iter
        self.objective_history_ = np.asarray(res.history)
        self.objective_ = res.fun
        self.converged_ = res.converged
        self.message_ = res.message
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


# ============================================================================================================
# COVA-P1–P4: Z = F U with U on the Stiefel manifold St(k̃, k) (Sec. 3.2.1, Appendix B, Table F.2)
# ============================================================================================================

def _check_X_new(model: Embedder, X: np.ndarray) -> np.ndarray:
    if not hasattr(model, "components_"):
        raise ValueError(f"{type(model).__name__} is not fitted yet; call fit first")
    return np.asarray(X, dtype=np.float64)


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

    def fit(self, inputs: Inputs) -> "_CovaProjection":
        self._validate_params()
        W, R = inputs.W, np.asarray(inputs.R, dtype=float)
        prototypes = np.asarray(inputs.prototypes, dtype=np.float64)
        k = prototypes.shape[1]
        rf = RelationFeatures(self.n_sample_prototypes, self.sigma, self.random_state)
        F = rf.fit_transform(inputs.X)
        if F.shape[1] < k:
            raise ValueError(f"need at least k = {k} sample prototypes, got {F.shape[1]}")
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

def laplacian_gram(F: np.ndarray, W: sp.spmatrix) -> np.ndarray:
    """A_L = Fᵀ𝐋(W)F = Fᵀ𝐃(W)F − (WF)ᵀF (k̃×k̃), by sparse products (O(nnz(W)k̃ + lk̃²), no l×l array).
    Symmetrised to remove round-off."""
    W = sp.csr_matrix(W)
    degree = np.asarray(W.sum(axis=1)).ravel()
    if (W != W.T).nnz == 0:
        # symmetric W: FᵀWF = X + Xᵀ with X = (W_h F)ᵀF, W_h = the strict upper triangle + half the diagonal;
        # half the sparse-dense product, which is memory bound (random rows of F)
        W_h = sp.triu(W, 1, format="csr")
        diag = W.diagonal()
        if np.any(diag != 0):
            W_h = (W_h + sp.diags(0.5 * diag)).tocsr()
        X = np.asarray(W_h @ F).T @ F
        return weighted_gram(F, degree) - (X + X.T)
    X = np.asarray(W @ F).T @ F
    return weighted_gram(F, degree) - 0.5 * (X + X.T)


def weighted_gram(F: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fᵀ𝐃(weights)F (k̃×k̃, exactly symmetric). Non-negative weights (the degrees of W and R): one BLAS ``syrk`` on
    √w·F (half the flops of a GEMM); otherwise a GEMM, symmetrised."""
    F = np.asarray(F, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if np.all(w >= 0):
        G = np.sqrt(w)[:, None] * F
        # (Gᵀ)(Gᵀ)ᵀ with Gᵀ Fortran-ordered: no copy of the l×k̃ array; the upper triangle is filled
        S = scipy.linalg.blas.dsyrk(1.0, G.T, trans=0, lower=0)
        return np.triu(S) + np.triu(S, 1).T
    A = F.T @ (w[:, None] * F)
    return 0.5 * (A + A.T)


def prototype_distance_weights(prototypes: np.ndarray, normalize: bool = True) -> np.ndarray:
    """W_v = [‖υ_i − υ_j‖₂] (c×c, Eq. 22), divided by its sum when ``normalize`` (unit-sum default, not in the
    paper: the raw W_v makes v dominate and Z collapse; docs/papers.md)."""
    P = np.asarray(prototypes, dtype=float)
    diff = P[:, None, :] - P[None, :, :]
    Wv = np.sqrt(np.sum(diff * diff, axis=2))
    if normalize:
        total = Wv.sum()
        if total <= 0:
            raise ValueError("all prototypes coincide: W_v sums to 0 and cannot be normalised")
        Wv = Wv / total
    return Wv


def eigen_cova_blocks(F: np.ndarray, W: sp.spmatrix, R: np.ndarray, prototypes: np.ndarray,
                      W_v: np.ndarray) -> dict[str, np.ndarray]:
    """The Gram blocks of O_eig, computed once, so that deflation costs no pass over F:
    A_L = Fᵀ𝐋(W)F, A_R = Fᵀ𝐃(R)F, B₀ = FᵀRΥ, C_R = Υᵀ𝐃(Rᵀ)Υ, C_v = Υᵀ𝐋(W_v)Υ."""
    P = np.asarray(prototypes, dtype=float)
    A_R = weighted_gram(F, R.sum(axis=1))
    Lv = np.diag(W_v.sum(axis=1)) - W_v
    C_v = P.T @ Lv @ P
    C_R = P.T @ (R.sum(axis=0)[:, None] * P)
    return {"A_L": laplacian_gram(F, W), "A_R": A_R, "B0": F.T @ (R @ P),
            "C_R": 0.5 * (C_R + C_R.T), "C_v": 0.5 * (C_v + C_v.T)}


def eigen_cova_matrix(blocks: dict[str, np.ndarray], alpha: float, eta: float) -> np.ndarray:
    """O_eig of Eq. 24/25 **with the corrected B = [[0, R], [Rᵀ, 0]]** (docs/papers.md), (k̃+k)×(k̃+k), symmetric:

    ``[[Fᵀ((1−α)𝐋(W) + αη𝐃(R))F, −αη FᵀRΥ], [−αη ΥᵀRᵀF, Υᵀ(αη𝐃(Rᵀ) − α(1−η)𝐋(W_v))Υ]]``.
    """
    O11 = (1.0 - alpha) * blocks["A_L"] + alpha * eta * blocks["A_R"]
    O12 = -alpha * eta * blocks["B0"]
    O22 = alpha * eta * blocks["C_R"] - alpha * (1.0 - eta) * blocks["C_v"]
    return np.block([[O11, O12], [O12.T, O22]])


def eigen_cova_objective(F: np.ndarray, U: np.ndarray, V: np.ndarray, W: sp.spmatrix, R: np.ndarray,
                         prototypes: np.ndarray, W_v: np.ndarray, alpha: float, eta: float) -> float:
    """The eigen-COVA objective of Eq. 23, evaluated term by term (not through O_eig):
    ``αη Σ_ij r_ij ‖z_i − e_j‖² + (1−α) tr(Zᵀ𝐋(W)Z) − α(1−η) ½ Σ_ij w^(v)_ij ‖e_i − e_j‖²`` with Z = FU, E = ΥV."""
    Z = F @ U
    E = np.asarray(prototypes, dtype=float) @ V
    fc, _ = o_dist_c(Z, R, E)
    fl, _ = o_dist_l(Z, W)
    diff = E[:, None, :] - E[None, :, :]
    aux = 0.5 * float(np.sum(W_v * np.sum(diff * diff, axis=2)))
    return alpha * eta * fc + (1.0 - alpha) * fl - alpha * (1.0 - eta) * aux


def _excluded_basis(us: list[np.ndarray], vs: list[np.ndarray], k_tilde: int, k: int) -> np.ndarray:
    """Orthonormal basis D (k̃+k, m) of span{[u^(s); 0], [0; v^(s)]} (zero vectors ignored; thin QR)."""
    cols = []
    for vec, top in [(u, True) for u in us] + [(v, False) for v in vs]:
        norm = np.linalg.norm(vec)
        if norm > 0:
            col = np.zeros(k_tilde + k)
            if top:
                col[:k_tilde] = vec / norm
            else:
                col[k_tilde:] = vec / norm
            cols.append(col)
    if not cols:
        return np.zeros((k_tilde + k, 0))
    D, _ = np.linalg.qr(np.column_stack(cols))
    return D


#: eigen_cova_solve runs BLAS/LAPACK on one thread up to this size of O_eig (k̃ + k).
SINGLE_THREAD_SOLVE_MAX = 2048


def eigen_cova_solve(O_eig: np.ndarray, k_tilde: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sequential deflation of Table F.3, restricted to the orthogonal complement
    (docs/papers.md, COVA "eigen-COVA").

    Step t solves the smallest eigenpair of O_eig on the complement of span{[u^(s); 0], [0; v^(s)] : s < t}.
    F^t = FΠ_u and Υ^t = ΥΠ_v (Π the orthogonal projectors onto the complements of the earlier u's and v's, which
    are mutually orthogonal), so O_eig^(t) = Π O_eig Π with Π = blockdiag(Π_u, Π_v) = I − DDᵀ (the "deflation by
    projection" of the efficient form; O(n²m) per step from the Gram matrix, n = k̃+k, m = 2(t−1)). The directions
    in D are exact null vectors of Π O_eig Π (the null-space trap: with no other negative eigenvalue Table F.3 would
    return one of them), so they are shifted out of the way: the solved matrix is Π O_eig Π + ‖O_eig‖₂·DDᵀ, whose
    eigenpairs on the complement are those of the restricted problem. One dense ``eigh`` with
    ``subset_by_index=[0, 0]`` (LAPACK ``syevx``: bisection + inverse iteration, the paper's suggested inverse
    iteration for a single eigenvector) per step; the eigenvector is then projected onto the complement exactly.

    Returns ``P`` ((k̃+k)×k, columns p_t with ‖p_t‖ = 1, sign: largest-magnitude entry positive) and the k
    eigenvalues. Raises ``DegenerateSolution("degenerate: ...")`` (a ValueError) when a restricted smallest eigenvalue is
    ≥ −1e-12·‖O_eig‖₂ (no negative eigenvalue: lower η).
    """
    n = k_tilde + k
    if O_eig.shape != (n, n):
        raise ValueError(f"O_eig must be ({n}, {n}), got {O_eig.shape}")
    if n <= SINGLE_THREAD_SOLVE_MAX:
        # small dense problems: multithreaded BLAS-2 in the tridiagonal reduction costs a thread synchronisation per
        # column, 4-40x slower than one thread on busy cores; the thread count changes only round-off
        with threadpool_limits(1):
            return _eigen_cova_solve(O_eig, k_tilde, k)
    return _eigen_cova_solve(O_eig, k_tilde, k)


def _eigen_cova_solve(O_eig: np.ndarray, k_tilde: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = k_tilde + k
    O_eig = 0.5 * (O_eig + O_eig.T)
    ext = scipy.linalg.eigh(O_eig, eigvals_only=True, subset_by_index=[n - 1, n - 1], driver="evx")[0]
    low = scipy.linalg.eigh(O_eig, eigvals_only=True, subset_by_index=[0, 0], driver="evx")[0]
    norm = max(abs(ext), abs(low))
    shift = norm if norm > 0 else 1.0
    us: list[np.ndarray] = []
    vs: list[np.ndarray] = []
    P = np.zeros((n, k))
    eigenvalues = np.zeros(k)
    for t in range(k):
        D = _excluded_basis(us, vs, k_tilde, k)
        if D.shape[1]:
            OD = O_eig @ D
            M = O_eig - D @ OD.T - OD @ D.T + D @ (D.T @ OD + shift * np.eye(D.shape[1])) @ D.T
            M = 0.5 * (M + M.T)
        else:
            M = O_eig
        lam, y = scipy.linalg.eigh(M, subset_by_index=[0, 0], driver="evx")
        lam = float(lam[0])
        if lam >= -1e-12 * norm:
            raise DegenerateSolution(f"degenerate: no negative eigenvalue at step {t + 1} (smallest restricted eigenvalue "
                             f"{lam:.3g}, ‖O_eig‖₂ = {norm:.3g}); lower eta (the cohort-proximity weight η) or "
                             f"strengthen the prototype-spread term")
        p = y[:, 0]
        if D.shape[1]:
            p = p - D @ (D.T @ p)
        p /= np.linalg.norm(p)
        p *= np.sign(p[np.argmax(np.abs(p))])
        P[:, t] = p
        eigenvalues[t] = lam
        us.append(p[:k_tilde])
        vs.append(p[k_tilde:])
    return P, eigenvalues


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

    def fit(self, inputs: Inputs) -> "EigenCova":
        self._validate_params()
        W, R = inputs.W, np.asarray(inputs.R, dtype=float)
        prototypes = np.asarray(inputs.prototypes, dtype=np.float64)
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
