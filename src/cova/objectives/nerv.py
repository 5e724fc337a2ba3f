"""NeRV's and t-NeRV's costs and gradients (Venna, Peltonen, Nybo, Aidos, Kaski, JMLR 11:451-490, 2010): Eq. 4
(sum form, conditional neighbourhoods of Eqs. 2-3) and Eq. 8 (joint p of Eq. 6, Student-t q of Eq. 7), computed
in log space so that the (1 - lambda) q log(q / p) term stays finite where p underflows. The estimators are
:mod:`cova.methods.nerv`."""

from __future__ import annotations

import math

import numba
import numpy as np

from ..errors import UserError
from .kl import pair_sq_dist

__all__ = ["nerv_cost_and_gradient", "tnerv_cost_and_gradient", "nerv_objective", "tnerv_objective",
           "joint_log_probabilities"]


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
            raise UserError("P has zero entries off the diagonal; log P would be -inf. Pass log_P computed in "
                             "log space (e.g. cova.metrics.retrieval.log_conditional_probabilities)")
        with np.errstate(divide="ignore"):
            L = np.log(P)
    else:
        L = np.array(log_P, dtype=np.float64)
        if L.shape != P.shape:
            raise UserError(f"log_P has shape {L.shape} but P has {P.shape}")
    np.fill_diagonal(L, 0.0)
    if not np.all(np.isfinite(L)):
        raise UserError("log_P must be finite off the diagonal")
    return L


def _check_cost_args(Z: np.ndarray, P: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray, float]:
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    P = np.array(P, dtype=np.float64)
    if Z.ndim != 2:
        raise UserError(f"Z must be 2-D (n, d); got shape {Z.shape}")
    n = Z.shape[0]
    if P.shape != (n, n):
        raise UserError(f"P must be ({n}, {n}); got {P.shape}")
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise UserError(f"lam must lie in [0, 1]; got {lam}")
    np.fill_diagonal(P, 0.0)
    return Z, P, lam


def nerv_objective(Z: np.ndarray, P: np.ndarray, logP: np.ndarray, lam: float,
                    beta: np.ndarray) -> tuple[float, np.ndarray]:
    """Eq. 4 (sum form) and its gradient; P has a zero diagonal, logP a zero diagonal (finite elsewhere). The
    estimator's inner loop: the arguments are not checked (:func:`nerv_cost_and_gradient` checks them).

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
        raise UserError(f"beta must be a positive ({Z.shape[0]},) array")
    return nerv_objective(Z, P, _prepare_log_p(P, log_P), lam, beta)


def tnerv_objective(Z: np.ndarray, P: np.ndarray, logP: np.ndarray, lam: float) -> tuple[float, np.ndarray]:
    """Eq. 8 and its gradient; P joint with a zero diagonal, logP with a zero diagonal. The estimator's inner loop:
    the arguments are not checked (:func:`tnerv_cost_and_gradient` checks them)."""
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
    return tnerv_objective(Z, P, _prepare_log_p(P, log_P), lam)


def joint_log_probabilities(log_conditional: np.ndarray) -> np.ndarray:
    """log p_ij of Eq. 6, ``log((p_{i|j} + p_{j|i}) / (2n))``, from the (n, n) log-conditionals (log-add-exp;
    never -inf off the diagonal). The diagonal is -inf."""
    lc = np.asarray(log_conditional, dtype=np.float64)
    n = lc.shape[0]
    lp = np.logaddexp(lc, lc.T) - math.log(2.0 * n)
    np.fill_diagonal(lp, -np.inf)
    return lp
