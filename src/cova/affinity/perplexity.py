"""Perplexity calibration of the Gaussian conditional probabilities P_{j|i} (van der Maaten & Hinton 2008, Eq. 1 and
Sec. 2; COVA footnote 1), the one entropy bisection of the package.

Written by hand (numba) rather than taken from a library: the calibration needs a per-row entropy bisection on a
*sparse candidate set* (the 3·perplexity nearest neighbours) that returns P itself. sklearn's
``sklearn.manifold._utils._binary_search_perplexity`` is private, and openTSNE's equivalent is an internal Cython
routine behind :class:`openTSNE.affinity.PerplexityBasedNN` (which also always symmetrises and renormalises);
neither is a public function returning the conditional P. openTSNE is used in the tests as a cross-check.

:func:`conditional_probabilities` calibrates over a sparse candidate set and returns P;
:func:`calibrate_precisions` calibrates full distance rows (the query itself excluded) and returns the precisions β_i, which is what the
smoothed retrieval measures of NeRV (Venna et al. 2010, Eq. 3) need. Both run the same bisection.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange
from scipy.special import logsumexp

from ..errors import UserError
from .knn import RESCALE

__all__ = ["conditional_probabilities", "dense_conditional_probabilities", "calibrate_precisions",
           "log_conditional_probabilities"]


@njit(cache=True)
def _row_probabilities(
    d: np.ndarray, target: float, tol: float, max_iter: int, p: np.ndarray
) -> float:
    """Calibrate one row in place: ``d`` holds d²_ij − min_j d²_ij (≥ 0), ``p`` receives P_{j|i}.

    Bisection on β (start 1; double while too flat / halve while too peaked until bracketed, then bisect), stopping
    when |H − ln(perplexity)| < tol or after ``max_iter`` evaluations. Returns the final β.
    H = ln Σ_j e^{−β d_j} + β Σ_j d_j p_j, which equals −Σ_j p_j ln p_j and never takes ln 0.
    """
    k = d.shape[0]
    beta = 1.0
    beta_lo = -np.inf
    beta_hi = np.inf
    H = 0.0
    for _ in range(max_iter):
        total = 0.0
        for j in range(k):
            e = math.exp(-beta * d[j])
            p[j] = e
            total += e  # ≥ 1: the nearest candidate has d = 0
        dp = 0.0
        for j in range(k):
            p[j] /= total
            dp += d[j] * p[j]
        H = math.log(total) + beta * dp
        diff = H - target
        if abs(diff) < tol:
            break
        if diff > 0.0:  # too flat: increase β
            beta_lo = beta
            if beta_hi == np.inf:
                beta *= 2.0
            else:
                beta = 0.5 * (beta + beta_hi)
        else:  # too peaked: decrease β
            beta_hi = beta
            if beta_lo == -np.inf:
                beta *= 0.5
            else:
                beta = 0.5 * (beta + beta_lo)
    return beta


@njit(cache=True, parallel=True)
def _calibrate(d2: np.ndarray, target: float, tol: float, max_iter: int) -> np.ndarray:
    l, k = d2.shape
    P = np.empty((l, k), dtype=np.float64)
    for i in prange(l):  # rows are independent: the result does not depend on the thread count
        row_min = d2[i, 0]
        for j in range(1, k):
            if d2[i, j] < row_min:
                row_min = d2[i, j]
        d = np.empty(k, dtype=np.float64)
        for j in range(k):
            d[j] = d2[i, j] - row_min
        _row_probabilities(d, target, tol, max_iter, P[i])
    return P


def conditional_probabilities(
    distances_sq: np.ndarray,
    perplexity: float,
    *,
    tol: float = 1e-5,
    max_iter: int = 100,
) -> np.ndarray:
    """P_{j|i} = exp(−β_i d²_ij) / Σ_m exp(−β_i d²_im) over each row's candidate set, with β_i calibrated so that
    the entropy H_i = −Σ_j P_{j|i} ln P_{j|i} equals ln(perplexity) (van der Maaten & Hinton 2008, Sec. 2; COVA
    footnote 1).

    Parameters
    ----------
    distances_sq : (l, k) squared distances from sample i to its k candidate neighbours (self excluded).
    perplexity : target perplexity, 0 < perplexity < k (entropy is measured in nats).
    tol : stop when |H_i − ln(perplexity)| < tol.
    max_iter : at most this many β evaluations per row. Rows whose target is unreachable (e.g. more than
        ``perplexity`` candidates tied at the minimum distance, or all candidates equidistant) keep the last
        iterate; no warning is raised.

    Returns
    -------
    (l, k) float64, row-stochastic. The row minimum of d² is subtracted before exponentiating (does not change P,
    avoids underflow of every term); entries may underflow to exactly 0 for far candidates.
    """
    d2 = np.ascontiguousarray(distances_sq, dtype=np.float64)
    if d2.ndim != 2 or d2.shape[1] == 0:
        raise UserError(f"distances_sq must be a 2-D (l, k) array with k ≥ 1, got shape {d2.shape}")
    if not np.all(np.isfinite(d2)) or np.any(d2 < 0):
        raise UserError("distances_sq must be finite and non-negative")
    k = d2.shape[1]
    perplexity = float(perplexity)
    if not (perplexity > 0.0) or not np.isfinite(perplexity):
        raise UserError(f"perplexity must be > 0, got {perplexity}")
    if perplexity >= k:
        raise UserError(
            f"perplexity ({perplexity}) must be < the number of candidate neighbours k = {k}; "
            "use more neighbours (typically 3·perplexity) or a smaller perplexity"
        )
    if not tol > 0:
        raise UserError(f"tol must be > 0, got {tol}")
    if int(max_iter) < 1:
        raise UserError(f"max_iter must be ≥ 1, got {max_iter}")
    P = _calibrate(d2, math.log(perplexity), float(tol), int(max_iter))
    _check_reached(d2, P, perplexity, tol, int(max_iter))
    return P


def _check_reached(d2: np.ndarray, P: np.ndarray, perplexity: float, tol: float, max_iter: int) -> None:
    """Refuse a calibration whose bandwidth search ran out of range: the bisection starts at β = 1 and doubles or
    halves it, so it reaches β from 2^−max_iter to 2^max_iter only; rows whose squared distances lie far outside
    the reciprocal range (features of a scale near 10^±15 and beyond) end with a P of the wrong perplexity, which
    would silently give a wrong W. A row whose target is unreachable because more than ``perplexity`` candidates
    tie at its minimum distance is the documented exception and is kept. Converged rows are within ``tol`` of the
    target; a miss by more than 100·``tol`` is a search that never bracketed it."""
    target = math.log(perplexity)
    with np.errstate(divide="ignore", invalid="ignore"):
        H = -np.sum(np.where(P > 0, P * np.log(P), 0.0), axis=1)
    ties = np.sum(d2 == d2.min(axis=1, keepdims=True), axis=1)
    missed = (np.abs(H - target) > 100 * tol) & (np.log(ties) < target)
    if not missed.any():
        return
    rows = np.flatnonzero(missed)
    spread = np.array([np.median(np.abs(d2[i] - d2[i].min())) for i in rows])
    raise UserError(f"the Gaussian bandwidth of {rows.size} of {d2.shape[0]} rows (rows {rows[:5].tolist()}"
                     f"{' ...' if rows.size > 5 else ''}) cannot be calibrated to perplexity {perplexity:g}: their "
                     f"squared neighbour distances (row medians above the row minimum from {np.min(spread):.3g} to "
                     f"{np.max(spread):.3g}) lie outside what its bandwidth search reaches (precision β from "
                     f"2^-{max_iter} to 2^{max_iter}: squared distances of about {2.0 ** -max_iter:.0e} to "
                     f"{2.0 ** max_iter:.0e}), so its affinities would be silently wrong; {RESCALE}")



def dense_conditional_probabilities(distances_sq: np.ndarray, perplexity: float) -> np.ndarray:
    """Dense (l, l) P_{j|i} whose candidate set is every other sample: :func:`conditional_probabilities` on the
    off-diagonal entries of the (l, l) squared-distance matrix, zero diagonal (as in the reference SNE/t-SNE
    code). Needs 0 < perplexity < l − 1."""
    D2 = np.asarray(distances_sq, dtype=np.float64)
    l = D2.shape[0]
    if D2.ndim != 2 or D2.shape[1] != l:
        raise UserError(f"distances_sq must be a square (l, l) matrix, got shape {D2.shape}")
    if not 0 < perplexity < l - 1:
        raise UserError(f"need 0 < perplexity < l − 1 = {l - 1}, got {perplexity}")
    off = ~np.eye(l, dtype=bool)
    P = np.zeros((l, l), dtype=np.float64)
    P[off] = conditional_probabilities(D2[off].reshape(l, l - 1), perplexity).ravel()
    return P

@njit(cache=True, parallel=True)
def _calibrate_rows(D2: np.ndarray, self_cols: np.ndarray, target: float, tol: float,
                    max_iter: int) -> np.ndarray:  # pragma: no cover - jit
    b, n = D2.shape
    out = np.empty(b, dtype=np.float64)
    for r in prange(b):  # rows are independent: the result does not depend on the thread count
        s = self_cols[r]
        m = n - 1 if s >= 0 else n
        d = np.empty(m, dtype=np.float64)
        row_min = np.inf
        t = 0
        for j in range(n):
            if j != s:
                d[t] = D2[r, j]
                if d[t] < row_min:
                    row_min = d[t]
                t += 1
        for j in range(m):
            d[j] -= row_min
        p = np.empty(m, dtype=np.float64)
        out[r] = _row_probabilities(d, target, tol, max_iter, p)
    return out


#: Entropy tolerance (nats) of :func:`calibrate_precisions`.
ENTROPY_TOL = 1e-10
#: Maximum number of bisection steps per row of :func:`calibrate_precisions`.
ENTROPY_MAX_ITER = 200


def calibrate_precisions(distances_sq: np.ndarray, n_neighbors: float, self_cols: np.ndarray | None = None, *,
                         tol: float = ENTROPY_TOL, max_iter: int = ENTROPY_MAX_ITER) -> np.ndarray:
    """β_i = 1/σ_i² such that p_{j|i} ∝ exp(−β_i d²_ij) over the row's other points has entropy ln(n_neighbors)
    (NeRV, Venna et al. 2010, Eq. 3 and Sec. 2.2; the same bisection as :func:`conditional_probabilities`).

    Parameters
    ----------
    distances_sq : (b, n) squared distances from query row r to all n points.
    n_neighbors : the "effective number of neighbours" k (perplexity); natural-log entropy target ln k.
    self_cols : (b,) column of the query itself in each row (excluded; −1 = none), or ``None`` when ``b == n``
        and row r is point r (``self_cols = arange(n)``).
    tol, max_iter : stop when |H − ln k| < ``tol`` or after ``max_iter`` steps. Rows whose target is unreachable
        (more than k points tied at the minimum distance) end with a huge but finite β.

    Returns (b,) float64. Raises ValueError when k is not in (1, number of other points).
    """
    D2 = np.ascontiguousarray(distances_sq, dtype=np.float64)
    if D2.ndim != 2:
        raise UserError(f"distances_sq must be 2-D; got shape {D2.shape}")
    b, n = D2.shape
    if self_cols is None:
        if b != n:
            raise UserError("self_cols is required when distances_sq is not square")
        self_cols = np.arange(n)
    cols = np.ascontiguousarray(self_cols, dtype=np.int64)
    if cols.shape != (b,):
        raise UserError(f"self_cols must have shape ({b},), got {cols.shape}")
    n_other = n - 1 if np.any(cols >= 0) else n
    k = float(n_neighbors)
    if not (1.0 < k < n_other):
        raise UserError(f"the effective number of neighbours must lie in (1, {n_other}); got {k}")
    return _calibrate_rows(D2, cols, math.log(k), float(tol), int(max_iter))


def log_conditional_probabilities(distances_sq: np.ndarray, beta: np.ndarray,
                                  self_cols: np.ndarray | None = None) -> np.ndarray:
    """log p_{j|i} = −β_i d²_ij − log Σ_{m≠i} exp(−β_i d²_im) by log-sum-exp (NeRV Eqs. 2–3).

    The query's own column is ``-inf`` (p_{i|i} = 0); every other entry is finite. ``self_cols`` as in
    :func:`calibrate_precisions`."""
    D2 = np.asarray(distances_sq, dtype=np.float64)
    b = D2.shape[0]
    if self_cols is None:
        self_cols = np.arange(b)
    A = -np.asarray(beta, dtype=np.float64)[:, None] * D2
    A[np.arange(b), self_cols] = -np.inf
    A -= logsumexp(A, axis=1)[:, None]
    return A
