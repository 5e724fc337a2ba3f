"""NeRV and t-NeRV (Venna, Peltonen, Nybo, Aidos, Kaski, JMLR 11:451-490, 2010; Secs. 3, 4.6).

* :class:`NeRV` minimises Eq. 4, ``lambda E_i[D(p_i, q_i)] + (1 - lambda) E_i[D(q_i, p_i)]``: a trade-off
  between mean smoothed recall (lambda = 1, SNE's cost) and mean smoothed precision (lambda = 0), with the
  conditional neighbourhoods of Eqs. 2-3 sharing one sigma_i per point;
* :class:`TNeRV` minimises Eq. 8, ``lambda D(p, q) + (1 - lambda) D(q, p)`` on the joint p of Eq. 6 and the
  Student-t q of Eq. 7 (lambda = 1 is t-SNE's cost).

Both are O(n^2) in time and memory (dense n x n matrices, as in the paper and dredviz); ``fit`` refuses
more than ``max_samples`` points (default 5,000) with a ValueError.

NeRV accepts ``metric="precomputed"``: **SNeRV** (Sec. 5) is NeRV on learning-metric distances
(:mod:`cova.methods.snerv`); **local MDS**, the authors' earlier baseline, is :mod:`cova.methods.lmds`.

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

import math
from typing import Any

import numba
import numpy as np
from scipy.optimize import minimize
from scipy.spatial.distance import pdist, squareform

from ...affinity.graphs import geodesic_distances
from ...affinity.perplexity import calibrate_precisions, log_conditional_probabilities
from ...constraints import MAX_SAMPLES, NON_NEGATIVE_INT, POSITIVE_INT, SEED_OR_NONE, UNIT, StrOptions, real
from ...objectives.kl import pair_sq_dist
from ..base import Embedder, check_size

__all__ = ["NeRV", "TNeRV", "nerv_cost_and_gradient", "tnerv_cost_and_gradient", "joint_log_probabilities",
           "DEFAULT_MAX_SAMPLES"]

#: Largest n a NeRV / t-NeRV fit accepts by default (dense n x n float64 matrices: ~200 MB each at 5,000).
DEFAULT_MAX_SAMPLES = 5000
#: scipy CG ``gtol`` (max-norm of the gradient of the summed cost) below which a phase stops early.
_GTOL = 1e-8

ANNEAL = ("paper", "dredviz", "none")


# --------------------------------------------------------------------------------------------------------
# costs and gradients
# --------------------------------------------------------------------------------------------------------

@numba.njit(cache=True, parallel=True)
def _nerv_kernel(Z: np.ndarray, P: np.ndarray, logP: np.ndarray, lam: float, beta: np.ndarray,
                 A: np.ndarray, rec: np.ndarray, kl: np.ndarray) -> None:  # pragma: no cover - jit
    """Row i (in parallel): log q_{j|i} by log-sum-exp (Eq. 2), the row's D(p_i, q_i) -> rec[i] and
    D(q_i, p_i) -> kl[i], and A[i, j] = beta_i S_ij (gradient of Eq. 4, see
    :func:`nerv_cost_and_gradient`); A[i, i] = 0."""
    n = Z.shape[0]
    for i in numba.prange(n):
        b = beta[i]
        amax = -np.inf
        for j in range(n):
            if j != i:
                a = -b * pair_sq_dist(Z, i, j)
                A[i, j] = a
                if a > amax:
                    amax = a
        total = 0.0
        for j in range(n):
            if j != i:
                total += math.exp(A[i, j] - amax)
        lse = amax + math.log(total)
        r = 0.0
        k = 0.0
        qrow = np.empty(n)
        for j in range(n):
            if j != i:
                lq = A[i, j] - lse
                L = lq - logP[i, j]
                q = math.exp(lq)
                qrow[j] = q
                r -= P[i, j] * L
                k += q * L
                A[i, j] = L  # keep L until KL_i is known
        rec[i] = r
        kl[i] = k
        for j in range(n):
            if j != i:
                q = qrow[j]
                A[i, j] = b * (lam * (P[i, j] - q) - (1.0 - lam) * q * (A[i, j] - k))
        A[i, i] = 0.0


@numba.njit(cache=True, parallel=True)
def _tnerv_pass1(Z: np.ndarray, W: np.ndarray, wsum: np.ndarray) -> None:  # pragma: no cover - jit
    """W[i, j] = (1 + ||y_i - y_j||^2)^-1 (0 on the diagonal), row sums in wsum."""
    n = Z.shape[0]
    for i in numba.prange(n):
        s = 0.0
        for j in range(n):
            w = 0.0 if j == i else 1.0 / (1.0 + pair_sq_dist(Z, i, j))
            W[i, j] = w
            s += w
        wsum[i] = s


@numba.njit(cache=True, parallel=True)
def _tnerv_pass2(W: np.ndarray, P: np.ndarray, logP: np.ndarray, log_sw: float, K: np.ndarray,
                 dqp: np.ndarray, dpq: np.ndarray) -> None:  # pragma: no cover - jit
    """K[i, j] = L_ij = log(q_ij / p_ij) (Eq. 7 in log space); row sums of q L and -p L."""
    n = W.shape[0]
    for i in numba.prange(n):
        a = 0.0
        c = 0.0
        for j in range(n):
            if j != i:
                lq = math.log(W[i, j]) - log_sw
                L = lq - logP[i, j]
                K[i, j] = L
                a += math.exp(lq) * L
                c -= P[i, j] * L
        K[i, i] = 0.0
        dqp[i] = a
        dpq[i] = c


@numba.njit(cache=True, parallel=True)
def _tnerv_pass3(W: np.ndarray, P: np.ndarray, sw: float, lam: float, Dqp: float,
                 K: np.ndarray) -> None:  # pragma: no cover - jit
    """K[i, j] = w_ij [lam (p_ij - q_ij) - (1 - lam) q_ij (L_ij - D(q, p))] (gradient of Eq. 8)."""
    n = W.shape[0]
    for i in numba.prange(n):
        for j in range(n):
            if j != i:
                q = W[i, j] / sw
                K[i, j] = W[i, j] * (lam * (P[i, j] - q) - (1.0 - lam) * q * (K[i, j] - Dqp))


def _prepare_log_p(P: np.ndarray, log_P: np.ndarray | None) -> np.ndarray:
    """log P with a zero diagonal; raises when P has zeros off the diagonal and no log_P is given."""
    if log_P is None:
        off = ~np.eye(P.shape[0], dtype=bool)
        if np.any(P[off] <= 0.0):
            raise ValueError("P has zero entries off the diagonal; log P would be -inf. Pass log_P computed in "
                             "log space (e.g. cova.metrics.retrieval.log_conditional_probabilities)")
        with np.errstate(divide="ignore"):
            L = np.log(P)
    else:
        L = np.array(log_P, dtype=np.float64)
        if L.shape != P.shape:
            raise ValueError(f"log_P has shape {L.shape} but P has {P.shape}")
    np.fill_diagonal(L, 0.0)
    if not np.all(np.isfinite(L)):
        raise ValueError("log_P must be finite off the diagonal")
    return L


def _check_cost_args(Z: np.ndarray, P: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray, float]:
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    P = np.array(P, dtype=np.float64)
    if Z.ndim != 2:
        raise ValueError(f"Z must be 2-D (n, d); got shape {Z.shape}")
    n = Z.shape[0]
    if P.shape != (n, n):
        raise ValueError(f"P must be ({n}, {n}); got {P.shape}")
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must lie in [0, 1]; got {lam}")
    np.fill_diagonal(P, 0.0)
    return Z, P, lam


def _nerv_cost_grad(Z: np.ndarray, P: np.ndarray, logP: np.ndarray, lam: float,
                    beta: np.ndarray) -> tuple[float, np.ndarray]:
    """Eq. 4 (sum form) and its gradient; P has a zero diagonal, logP a zero diagonal (finite elsewhere).

    Row sums are combined by numpy in a fixed order, so the result does not depend on the thread count."""
    n = Z.shape[0]
    A = np.empty((n, n))
    rec = np.empty(n)
    kl = np.empty(n)
    _nerv_kernel(Z, P, logP, float(lam), beta, A, rec, kl)
    cost = lam * float(rec.sum()) + (1.0 - lam) * float(kl.sum())
    A += A.T  # M = S / sigma_row^2 + its transpose
    grad = 2.0 * (A.sum(axis=1)[:, None] * Z - A @ Z)
    return cost, grad


def nerv_cost_and_gradient(Z: np.ndarray, P: np.ndarray, lam: float, beta: np.ndarray, *,
                           log_P: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """NeRV cost Eq. 4 in sum form and its gradient with respect to the display coordinates Z.

    ``E = lam sum_i D(p_i, q_i) + (1 - lam) sum_i D(q_i, p_i)`` with ``D(p_i, q_i) = sum_{j != i}
    p_{j|i} log(p_{j|i} / q_{j|i})`` (the paper prints p_ji, q_ji: a typo for p_{j|i}, q_{j|i}).
    q_{j|i} is Eq. 2 with precision ``beta_i = 1 / sigma_i^2`` (the paper's kernel
    exp(-d^2 / sigma^2), no factor 2). The paper's means E_i are this divided by n.

    Gradient (not printed in the paper; derived by us [ours] and checked by finite differences in the
    tests):
    ``dE/dy_l = 2 sum_k [S_lk beta_l + S_kl beta_k] (y_l - y_k)`` with ``S_ij = lam (p_{j|i} - q_{j|i})
    - (1 - lam) q_{j|i} (log(q_{j|i} / p_{j|i}) - D(q_i, p_i))``. For lam = 1 this is SNE's gradient.

    Parameters
    ----------
    Z : (n, d) display coordinates.
    P : (n, n) input conditionals p_{j|i} (rows sum to 1; the diagonal is ignored).
    lam : lambda in [0, 1].
    beta : (n,) precisions 1 / sigma_i^2 shared by P and Q.
    log_P : log p_{j|i} computed in log space (recommended: far entries of P underflow to 0, and the
        (1 - lam) q log(q / p) term needs a finite log p). Without it, log(P) is used and zeros raise.

    Returns ``(cost, gradient (n, d))``. Dense O(n^2) memory.
    """
    Z, P, lam = _check_cost_args(Z, P, lam)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    if beta.shape != (Z.shape[0],) or not np.all(beta > 0):
        raise ValueError(f"beta must be a positive ({Z.shape[0]},) array")
    return _nerv_cost_grad(Z, P, _prepare_log_p(P, log_P), lam, beta)


def _tnerv_cost_grad(Z: np.ndarray, P: np.ndarray, logP: np.ndarray, lam: float) -> tuple[float, np.ndarray]:
    """Eq. 8 and its gradient; P joint with a zero diagonal, logP with a zero diagonal."""
    n = Z.shape[0]
    W = np.empty((n, n))
    K = np.empty((n, n))
    r1 = np.empty(n)
    r2 = np.empty(n)
    _tnerv_pass1(Z, W, r1)
    sw = float(r1.sum())
    _tnerv_pass2(W, P, logP, math.log(sw), K, r1, r2)
    dqp = float(r1.sum())
    dpq = float(r2.sum())
    cost = lam * dpq + (1.0 - lam) * dqp
    _tnerv_pass3(W, P, sw, float(lam), dqp, K)
    grad = 4.0 * (K.sum(axis=1)[:, None] * Z - K @ Z)
    return cost, grad


def tnerv_cost_and_gradient(Z: np.ndarray, P: np.ndarray, lam: float, *,
                            log_P: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """t-NeRV cost Eq. 8, ``lam D(p, q) + (1 - lam) D(q, p)``, and its gradient.

    p_ij is the joint input distribution (Eq. 6; sums to 1 over i != j), q_ij the Student-t joint of Eq. 7.
    Gradient (not printed in the paper; derived by us [ours], checked by finite differences):
    ``dE/dy_i = 4 sum_j w_ij (y_i - y_j) [lam (p_ij - q_ij) - (1 - lam) q_ij
    (log(q_ij / p_ij) - D(q, p))]`` with ``w_ij = (1 + ||y_i - y_j||^2)^-1``. For lam = 1 this is t-SNE's
    cost and gradient. ``log_P`` as in :func:`nerv_cost_and_gradient`. Returns ``(cost, gradient)``.
    """
    Z, P, lam = _check_cost_args(Z, P, lam)
    return _tnerv_cost_grad(Z, P, _prepare_log_p(P, log_P), lam)


def joint_log_probabilities(log_conditional: np.ndarray) -> np.ndarray:
    """log p_ij of Eq. 6, ``log((p_{i|j} + p_{j|i}) / (2n))``, from the (n, n) log-conditionals (log-add-exp;
    never -inf off the diagonal). The diagonal is -inf."""
    lc = np.asarray(log_conditional, dtype=np.float64)
    n = lc.shape[0]
    lp = np.logaddexp(lc, lc.T) - math.log(2.0 * n)
    np.fill_diagonal(lp, -np.inf)
    return lp


# --------------------------------------------------------------------------------------------------------
# estimators
# --------------------------------------------------------------------------------------------------------

def _input_distances(X: np.ndarray, metric: str, n_neighbors: int | None = None) -> np.ndarray:
    if metric == "geodesic":  # CDA's (cova.methods.lmds.CDA): shortest paths over the k-NN graph
        return geodesic_distances(X, int(n_neighbors or 0))
    if metric == "euclidean":
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (samples x features); got shape {X.shape}")
        return squareform(pdist(X, "euclidean"))
    if metric == "precomputed":
        if X.ndim != 2 or X.shape[0] != X.shape[1]:
            raise ValueError(f"a precomputed distance matrix must be square; got shape {X.shape}")
        if np.any(X < 0) or not np.allclose(X, X.T) or np.any(np.diag(X) != 0):
            raise ValueError("a precomputed distance matrix must be symmetric, non-negative, zero on the diagonal")
        return np.array(X, dtype=np.float64)
    raise ValueError(f"metric must be 'euclidean' or 'precomputed'; got {metric!r}")


def mean_scaled_distances(inputs: Any, metric: str, validate: Any,
                          n_neighbors: int | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """(X, D / scale, scale) for NeRV, local MDS, CCA and CDA: X = ``inputs.X`` (or ``inputs``) as float64 with at
    least 4 rows, ``validate(n)`` called before anything O(n²) is allocated (the size guard), input distances
    (``euclidean``, ``precomputed``, or ``geodesic`` over the ``n_neighbors``-NN graph) divided by their mean over
    i != j (paper Sec. 3, dredviz)."""
    X = np.asarray(getattr(inputs, "X", inputs), dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 4:
        raise ValueError(f"need a 2-D input with at least 4 rows; got shape {X.shape}")
    n = X.shape[0]
    validate(n)
    if not np.all(np.isfinite(X)):
        raise ValueError("the input contains NaN or infinite values")
    D = _input_distances(X, metric, n_neighbors)
    scale = float(D[~np.eye(n, dtype=bool)].mean())
    if not scale > 0:
        raise ValueError("all input points coincide (mean distance 0)")
    D /= scale
    return X, D, scale


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

    # -- validation ------------------------------------------------------------------------------------
    def _validate(self, n: int) -> None:
        """The checks that depend on the number of points n (the parameters alone are checked by
        ``_validate_params``)."""
        check_size(n, self.max_samples, type(self).__name__)
        if not float(self.n_neighbors) < n - 1:
            raise ValueError(f"n_neighbors must lie in (1, n - 1) = (1, {n - 1}); got {self.n_neighbors}")

    # -- pieces ----------------------------------------------------------------------------------------
    def _initial(self, X: np.ndarray, scale: float, n: int) -> np.ndarray:
        d = int(self.n_components)
        init = self.init
        if isinstance(init, str):
            if init == "random":
                return np.random.default_rng(self.random_state).uniform(0.0, 1.0, size=(n, d))
            if init == "pca":
                if self.metric == "precomputed":
                    raise ValueError("init='pca' needs feature vectors; use 'random' or an array with a "
                                     "precomputed distance matrix")
                Xc = (X - X.mean(axis=0)) / scale
                _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
                Y = Xc @ Vt[:d].T
                if Y.shape[1] < d:
                    Y = np.hstack([Y, np.zeros((n, d - Y.shape[1]))])
                return np.ascontiguousarray(Y)
        Y = np.array(init, dtype=np.float64)
        if Y.shape != (n, d) or not np.all(np.isfinite(Y)):
            raise ValueError(f"an init array must be finite with shape ({n}, {d}); got {Y.shape}")
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

    def _phase(self, Y: np.ndarray, D2: np.ndarray, beta: np.ndarray, steps: int) -> tuple[np.ndarray, float]:
        P, lp = self._targets(D2, beta)
        n, d = Y.shape
        lam = float(self.lam)

        def fun(y: np.ndarray) -> tuple[float, np.ndarray]:
            self.n_evaluations_ += 1
            Z = y.reshape(n, d)
            if self._joint:
                c, g = _tnerv_cost_grad(Z, P, lp, lam)
            else:
                c, g = _nerv_cost_grad(Z, P, lp, lam, beta)
            return c, g.ravel()

        if steps == 0:
            return Y, fun(Y.ravel())[0]
        res = minimize(fun, Y.ravel(), jac=True, method="CG", options={"maxiter": steps, "gtol": _GTOL})
        return res.x.reshape(n, d), float(res.fun)

    # -- fit -------------------------------------------------------------------------------------------
    def fit(self, inputs: Any) -> "_NeRVBase":
        """Embed ``inputs.X`` (features, or a distance matrix when ``metric="precomputed"``); sets
        ``embedding_`` (n, n_components), ``sigma_`` (sigma_i^final in rescaled units), ``distance_scale_``
        (the mean input distance divided out), ``cost_`` (final cost, sum form) and ``n_evaluations_``."""
        self._validate_params()
        X, D, scale = mean_scaled_distances(inputs, self.metric, self._validate)
        n = X.shape[0]
        D2 = D * D
        beta_final = calibrate_precisions(D2, self.n_neighbors)
        Y = self._initial(X, scale, n)
        self.n_evaluations_ = 0
        for beta in self._schedule(D, beta_final):
            Y, _ = self._phase(Y, D2, beta, int(self.cg_steps))
        Y, cost = self._phase(Y, D2, beta_final, int(self.cg_steps_final))
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
    max_samples : size guard; more points raise ValueError (dense n x n work).
    random_state : seed of the random initialisation.

    The paper's "5 random restarts, keep the best by F" is left to the caller (vary ``random_state``).
    """

    _joint = False


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

    def __init__(self, n_components: int = 2, lam: float = 0.8, n_neighbors: float = 40, anneal_rounds: int = 10,
                 cg_steps: int = 2, cg_steps_final: int = 20, anneal: str = "paper", init: Any = "random",
                 metric: str = "euclidean", max_samples: int = DEFAULT_MAX_SAMPLES, random_state: int | None = 0):
        super().__init__(n_components=n_components, lam=lam, n_neighbors=n_neighbors, anneal_rounds=anneal_rounds,
                         cg_steps=cg_steps, cg_steps_final=cg_steps_final, anneal=anneal, init=init,
                         metric=metric, max_samples=max_samples, random_state=random_state)
