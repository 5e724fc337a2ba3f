"""The local MDS cost and its CCA-style stochastic updates (Venna & Kaski 2006; the NeRV paper's "LocalMDS"
baseline, Venna et al. 2010 Sec. 4.1; formulas from the authors' toolbox dredviz 1.0.2, ``lmdscostfunction.cc``
and ``ccaoptimization.cc``)::

    E = 1/2 sum_i sum_{j != i} (d_x(i,j) - d_y(i,j))^2 w_ij,
    w_ij = (1 - lam) 1{d_y(i,j) < max(r, rho_i)} + lam 1{d_x(i,j) < max(r, rho_i)},

and the update of every other point j at a drawn point i (minus the gradient of the i-th term with respect to
y_j, y_i held fixed)::

    y_j <- y_j + alpha w_ij (d_x(i,j) - d_y(i,j)) / d_y(i,j) (y_j - y_i).

:func:`lmds_updates` runs a sequence of such updates with alpha and r annealed linearly to 0; it is compiled
together with the per-pair terms of the cost, so it lives beside them. The estimators (and the schedule) are
:mod:`cova.methods.nerv.lmds`."""

from __future__ import annotations

import math

import numba
import numpy as np

from ..errors import UserError

__all__ = ["lmds_cost", "lmds_point_cost", "lmds_step", "lmds_updates", "neighbourhood_radii"]


@numba.njit(cache=True, nogil=True, inline="always")
def _display_distance(Y: np.ndarray, i: int, j: int) -> float:  # pragma: no cover - jit
    dy2 = 0.0
    for m in range(Y.shape[1]):
        diff = Y[j, m] - Y[i, m]
        dy2 += diff * diff
    return math.sqrt(dy2)


@numba.njit(cache=True, nogil=True, inline="always")
def _pair_weight(dx: float, dy: float, R: float, lam: float) -> float:  # pragma: no cover - jit
    """The cost's bracket (1−λ)·1{d_y < R} + λ·1{d_x < R}, R = max(r, ρ_i)."""
    w = 0.0
    if dy < R:
        w += 1.0 - lam
    if dx < R:
        w += lam
    return w


@numba.njit(cache=True, nogil=True)
def _row_cost(Y: np.ndarray, D: np.ndarray, rho: np.ndarray, i: int, r: float,
              lam: float) -> float:  # pragma: no cover - jit
    n = Y.shape[0]
    R = max(r, rho[i])
    s = 0.0
    for j in range(n):
        if j == i:
            continue
        dy = _display_distance(Y, i, j)
        e = D[i, j] - dy
        s += _pair_weight(D[i, j], dy, R, lam) * e * e
    return 0.5 * s


@numba.njit(cache=True, nogil=True)
def _cost_kernel(Y: np.ndarray, D: np.ndarray, rho: np.ndarray, r: float, lam: float) -> float:  # pragma: no cover
    s = 0.0
    for i in range(Y.shape[0]):
        s += _row_cost(Y, D, rho, i, r, lam)
    return s


@numba.njit(cache=True, nogil=True)
def _step(Y: np.ndarray, D: np.ndarray, rho: np.ndarray, i: int, alpha: float, r: float,
          lam: float) -> None:  # pragma: no cover - jit
    n, d = Y.shape
    R = max(r, rho[i])
    for j in range(n):
        if j == i:
            continue
        dy = _display_distance(Y, i, j)
        if dy == 0.0:
            continue
        dx = D[i, j]
        w = _pair_weight(dx, dy, R, lam)
        if w == 0.0:
            continue
        c = alpha * w * (dx - dy) / dy
        for m in range(d):
            Y[j, m] += c * (Y[j, m] - Y[i, m])


@numba.njit(cache=True, nogil=True)
def lmds_updates(Y: np.ndarray, D: np.ndarray, rho: np.ndarray, order: np.ndarray, t0: int, T: int, alpha0: float,
         r0: float, lam: float) -> None:  # pragma: no cover - jit
    """Updates at the points ``order`` (steps t0, t0 + 1, ... of T), in place on Y: alpha0 (1 - t/T) and
    r0 (1 - t/T) at step t."""
    for s in range(order.shape[0]):
        frac = 1.0 - (t0 + s) / T
        _step(Y, D, rho, order[s], alpha0 * frac, r0 * frac, lam)


def _check(Y: np.ndarray, D: np.ndarray, rho: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    D = np.ascontiguousarray(D, dtype=np.float64)
    rho = np.ascontiguousarray(rho, dtype=np.float64)
    n = Y.shape[0]
    if Y.ndim != 2 or D.shape != (n, n) or rho.shape != (n,):
        raise UserError(f"need Y (n, d), D (n, n), rho (n,); got {Y.shape}, {D.shape}, {rho.shape}")
    if not 0.0 <= float(lam) <= 1.0:
        raise UserError(f"lam must lie in [0, 1]; got {lam}")
    return Y, D, rho


def neighbourhood_radii(D: np.ndarray, k: int) -> np.ndarray:
    """rho_i: distance from i to its k-th nearest neighbour (itself excluded) in the distance matrix D."""
    D = np.asarray(D, dtype=np.float64)
    n = D.shape[0]
    if not 1 <= k <= n - 1:
        raise UserError(f"n_neighbors must lie in [1, n - 1] = [1, {n - 1}]; got {k}")
    rho = np.empty(n)
    for a in range(0, n, 1024):  # row blocks: O(block n) extra memory
        B = D[a:a + 1024].copy()
        B[np.arange(B.shape[0]), np.arange(a, a + B.shape[0])] = np.inf
        rho[a:a + B.shape[0]] = np.partition(B, k - 1, axis=1)[:, k - 1]
    return rho


def lmds_cost(Y: np.ndarray, D: np.ndarray, rho: np.ndarray, r: float, lam: float = 0.0) -> float:
    """Exact LMDS cost E (module docstring) of display ``Y`` (n, d) for input distances ``D`` (n, n), radii
    ``rho`` (n,), radius ``r`` (``np.inf`` allowed) and trade-off ``lam``. O(n^2) time, O(1) extra memory
    (row by row, output distances never stored)."""
    Y, D, rho = _check(Y, D, rho, lam)
    return float(_cost_kernel(Y, D, rho, float(r), float(lam)))


def lmds_point_cost(Y: np.ndarray, D: np.ndarray, rho: np.ndarray, i: int, r: float, lam: float = 0.0) -> float:
    """The i-th term ``1/2 sum_{j != i} (d_x - d_y)^2 w_ij`` of :func:`lmds_cost`."""
    Y, D, rho = _check(Y, D, rho, lam)
    return float(_row_cost(Y, D, rho, int(i), float(r), float(lam)))


def lmds_step(Y: np.ndarray, D: np.ndarray, rho: np.ndarray, i: int, alpha: float, r: float,
              lam: float = 0.0) -> np.ndarray:
    """One stochastic update at point ``i`` (module docstring); returns the updated copy of ``Y``."""
    Y, D, rho = _check(Y, D, rho, lam)
    Y = Y.copy()
    _step(Y, D, rho, int(i), float(alpha), float(r), float(lam))
    return Y
