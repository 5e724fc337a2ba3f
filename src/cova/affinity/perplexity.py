"""Perplexity calibration of the Gaussian conditional probabilities P_{j|i} (spec §2.1(a), the [20]/t-SNE recipe).

Written by hand (numba) rather than taken from a library: the calibration needs a per-row entropy bisection on a
*sparse candidate set* (the 3·perplexity nearest neighbours) that returns P itself. sklearn's
``sklearn.manifold._utils._binary_search_perplexity`` is private, and openTSNE's equivalent is an internal Cython
routine behind :class:`openTSNE.affinity.PerplexityBasedNN` (which also always symmetrises and renormalises);
neither is a public function returning the conditional P. openTSNE is used in the tests as a cross-check.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

__all__ = ["conditional_probabilities"]


@njit(cache=True)
def _row_probabilities(
    d: np.ndarray, target: float, tol: float, max_iter: int, p: np.ndarray
) -> float:
    """Calibrate one row in place: ``d`` holds d²_ij − min_j d²_ij (≥ 0), ``p`` receives P_{j|i}.

    Bisection on β (start 1; double while too flat / halve while too peaked until bracketed, then bisect), stopping
    when |H − ln(perplexity)| < tol or after ``max_iter`` evaluations. Returns the final entropy (nats).
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
    return H


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
    the entropy H_i = −Σ_j P_{j|i} ln P_{j|i} equals ln(perplexity) (spec §2.1(a); paper footnote 1 / [20]).

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
        raise ValueError(f"distances_sq must be a 2-D (l, k) array with k ≥ 1, got shape {d2.shape}")
    if not np.all(np.isfinite(d2)) or np.any(d2 < 0):
        raise ValueError("distances_sq must be finite and non-negative")
    k = d2.shape[1]
    perplexity = float(perplexity)
    if not (perplexity > 0.0) or not np.isfinite(perplexity):
        raise ValueError(f"perplexity must be > 0, got {perplexity}")
    if perplexity >= k:
        raise ValueError(
            f"perplexity ({perplexity}) must be < the number of candidate neighbours k = {k}; "
            "use more neighbours (typically 3·perplexity) or a smaller perplexity"
        )
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be ≥ 1, got {max_iter}")
    return _calibrate(d2, math.log(perplexity), float(tol), int(max_iter))
