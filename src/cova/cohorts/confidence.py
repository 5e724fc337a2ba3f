"""Sample-to-cohort confidence matrix R (l x c), COVA Eqs. 9–12 (Sec. 3.1.3).

Conventions
-----------
- ``labels`` is an (l,) integer array with values in ``0..c-1``; ``c = n_cohorts`` (default ``labels.max() + 1``).
- ``W`` is an (l, l) scipy.sparse matrix (symmetric, zero diagonal, unit sum; built in :mod:`cova.affinity`).
  It is only ever multiplied by the sparse l x c indicator ``Y``; no l x l dense array is allocated.
- R is a dense (l, c) float64 array. The building blocks (:func:`graph_confidence`, :func:`rescale`,
  :func:`probability_confidence`) return *unnormalised* matrices so that their defining equations can be checked
  entry by entry; the dispatcher :func:`confidence_matrix` returns R normalised to unit total sum.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.spatial.distance import cdist
from scipy.special import ndtr

from ..constraints import UNIT, StrOptions, declare
from ..errors import UserError
from .labels import _check_labels, _check_W, _check_X, _cohort_means, _cohort_sizes, label_matrix

__all__ = [
    "similarity_to_centres",
    "graph_confidence",
    "rescale",
    "probability_confidence",
    "confidence_matrix",
    "CONFIDENCE_KINDS",
    "CONFIDENCE_SOURCES",
    "DENSITIES",
]

CONFIDENCE_KINDS: tuple[str, ...] = ("eq10", "eq11", "eq12")
CONFIDENCE_SOURCES: tuple[str, ...] = ("eq9", "eq10")
DENSITIES: tuple[str, ...] = ("normal", "student_t", "raw", "cdf")


def _check_lambda_p(lambda_p: float) -> float:
    lam = float(lambda_p)
    if not (0.0 <= lam < 1.0):
        raise UserError(f"lambda_p must satisfy 0 <= lambda_p < 1 (typically << 1), got {lambda_p!r}")
    return lam


def _check_R(R: ArrayLike, y: np.ndarray, name: str = "R") -> np.ndarray:
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] != y.shape[0]:
        raise UserError(f"{name} must have shape ({y.shape[0]}, c) to match labels, got {R.shape}")
    if y.max() >= R.shape[1]:
        raise UserError(f"labels contain cohort index {int(y.max())} but {name} has only {R.shape[1]} columns")
    if not np.all(np.isfinite(R)):
        raise UserError(f"{name} contains NaN or infinite values")
    return R


# --------------------------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------------------------


def similarity_to_centres(X: ArrayLike, labels: ArrayLike, n_cohorts: int | None = None) -> np.ndarray:
    """Eq. 9 with the max-subtracted Euclidean similarity.

    r_ij = r(x_i, mu_j) with mu_j the mean of cohort j and
    s_ij = max_{i', j'} ||x_{i'} - mu_{j'}|| - ||x_i - mu_j|| (COVA Sec. 3.1.3; our reading for "Euclidean" setups).

    Returns the dense (l, c) similarity matrix (not normalised; its minimum entry is 0). Every cohort must be
    non-empty because its centre is otherwise undefined.
    """
    y, c = _check_labels(labels, n_cohorts)
    X = _check_X(X, y.shape[0])
    mu = _cohort_means(X, y, c)
    dist = cdist(X, mu)  # (l, c): exact Euclidean distances, no l x l object
    return dist.max() - dist


def graph_confidence(W: ArrayLike | sp.spmatrix, labels: ArrayLike, n_cohorts: int | None = None) -> np.ndarray:
    """Eq. 10: W-based confidence, computed as R = (W Y) ⊘ (1 nᵀ − Y) with sparse W and sparse Y.

    r_ij = (1/(n_j - 1)) sum_{s != i, y_s = j} w_is   if y_i = j,
    r_ij = (1/n_j)       sum_{y_s = j} w_is            otherwise.

    The ``s != i`` exclusion is applied explicitly (the diagonal w_ii is subtracted from the own-cohort sum), so the
    result is exact even if W carries a diagonal. Conventions for degenerate cohorts: a cohort of size 1 has an empty
    own-cohort sum, so its member's own entry is 0 (no division by n_j - 1 = 0); an empty cohort (possible only with
    an explicit ``n_cohorts``) gets an all-zero column. The result is returned unnormalised.
    """
    y, c = _check_labels(labels, n_cohorts)
    l = y.shape[0]
    Ws = _check_W(W, l)
    Y = label_matrix(y, c)
    WY = np.asarray((Ws @ Y).todense(), dtype=np.float64)  # (l, c), O(nnz(W))
    rows = np.arange(l)
    WY[rows, y] -= Ws.diagonal()  # exclude s = i from the own-cohort sum
    n = _cohort_sizes(y, c)
    denom = np.broadcast_to(n, (l, c)).copy()
    denom[rows, y] -= 1.0
    R = np.zeros((l, c), dtype=np.float64)
    np.divide(WY, denom, out=R, where=denom > 0)
    return R


def _linear_map(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """𝓛(v, [lo, hi]): map v linearly from [min v, max v] onto [lo, hi]; a constant v maps to ``hi``."""
    if v.size == 0:
        return v
    vmin, vmax = float(v.min()), float(v.max())
    if vmax > vmin:
        out = lo + (v - vmin) * ((hi - lo) / (vmax - vmin))
        return np.clip(out, lo, hi)  # guard against one-ulp overshoot
    return np.full_like(v, hi)


def rescale(R: ArrayLike, labels: ArrayLike, lambda_p: float) -> np.ndarray:
    """Eq. 11 with 𝓛 applied to the masked entries only (docs/algorithms.md).

    - lambda_p = 0:  R <- R ∘ Y.
    - lambda_p > 0:  own-cohort entries {r_ij : y_i = j} are mapped linearly from their global [min, max] onto
      [1 - lambda_p, 1]; off-cohort entries {r_ij : y_i != j} from their global [min, max] onto [0, lambda_p].
      A set whose max equals its min is mapped to the upper end of its interval (1, resp. lambda_p).

    Rescaling the unmasked zeros too (the literal Eq. 11) would send every off-cohort entry to 1 - lambda_p; that is
    *not* done here. The number of cohorts is ``R.shape[1]``. Returns an unnormalised (l, c) array.
    """
    lam = _check_lambda_p(lambda_p)
    y, _ = _check_labels(labels)
    R = _check_R(R, y)
    own = np.zeros(R.shape, dtype=bool)
    own[np.arange(y.shape[0]), y] = True
    out = np.zeros_like(R)
    if lam == 0.0:
        out[own] = R[own]
        return out
    out[own] = _linear_map(R[own], 1.0 - lam, 1.0)
    off = ~own
    out[off] = _linear_map(R[off], 0.0, lam)
    return out


def probability_confidence(
    S: ArrayLike,
    labels: ArrayLike,
    lambda_p: float = 0.01,
    density: Literal["normal", "student_t", "raw", "cdf"] = "normal",
) -> np.ndarray:
    """Eq. 12: r_ij = p_j(s_ij) if y_i = j, and lambda_p otherwise.

    p_j is a density fitted per cohort j to its own-cohort similarities {s_tj : y_t = j}, with mean mu_j and standard
    deviation sigma_j (ddof = 1). With z = (s - mu_j) / sigma_j:

    - ``"normal"`` (default, our choice): peak-normalised normal pdf, p = exp(-z²/2) ∈ (0, 1];
    - ``"student_t"``: peak-normalised Student-t pdf with nu = n_j - 1, p = (1 + z²/nu)^(-(nu+1)/2);
    - ``"raw"`` (ablation): the raw normal pdf, exp(-z²/2) / (sigma_j sqrt(2 pi)) (unit-dependent);
    - ``"cdf"`` (ablation): the normal CDF Φ(z) (larger similarity -> larger confidence).

    If sigma_j = 0 or n_j < 2 the fit is degenerate and p = 1 for that cohort's members. The number of cohorts is
    ``S.shape[1]``; only the own-cohort entries of S are read. Returns an unnormalised (l, c) array.
    """
    lam = _check_lambda_p(lambda_p)
    if density not in DENSITIES:
        raise UserError(f"density must be one of {list(DENSITIES)}, got {density!r}")
    y, _ = _check_labels(labels)
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != y.shape[0]:
        raise UserError(f"S must have shape ({y.shape[0]}, c) to match labels, got {S.shape}")
    c = S.shape[1]
    if y.max() >= c:
        raise UserError(f"labels contain cohort index {int(y.max())} but S has only {c} columns")
    rows = np.arange(y.shape[0])
    s_own = S[rows, y]
    if not np.all(np.isfinite(s_own)):
        raise UserError("S has NaN or infinite own-cohort entries")
    p = np.ones_like(s_own)
    for j in range(c):
        idx = np.flatnonzero(y == j)
        n_j = idx.size
        if n_j < 2:
            continue
        v = s_own[idx]
        mu = v.mean()
        sd = v.std(ddof=1)
        if not sd > 0.0:
            continue
        z = (v - mu) / sd
        if density == "normal":
            p[idx] = np.exp(-0.5 * z * z)
        elif density == "student_t":
            nu = n_j - 1.0
            p[idx] = np.power(1.0 + z * z / nu, -0.5 * (nu + 1.0))
        elif density == "raw":
            p[idx] = np.exp(-0.5 * z * z) / (sd * math.sqrt(2.0 * math.pi))
        else:  # "cdf"
            p[idx] = ndtr(z)
    R = np.full(S.shape, lam, dtype=np.float64)
    R[rows, y] = p
    return R


@declare({"kind": [StrOptions(set(CONFIDENCE_KINDS))], "source": [StrOptions(set(CONFIDENCE_SOURCES))],
          "lambda_p": UNIT, "density": [StrOptions(set(DENSITIES))]})
def confidence_matrix(
    labels: ArrayLike,
    *,
    kind: Literal["eq10", "eq11", "eq12"] = "eq12",
    X: ArrayLike | None = None,
    W: ArrayLike | sp.spmatrix | None = None,
    source: Literal["eq9", "eq10"] = "eq9",
    lambda_p: float = 0.01,
    density: Literal["normal", "student_t", "raw", "cdf"] = "normal",
    n_cohorts: int | None = None,
) -> np.ndarray:
    """Build the confidence matrix R (l x c), normalised to unit total sum (COVA Sec. 3.1.3).

    kind
        ``"eq10"``: :func:`graph_confidence` of W (no masking, no rescaling);
        ``"eq11"``: :func:`rescale` of Eq. 10 with ``lambda_p``;
        ``"eq12"``: :func:`probability_confidence` on s from ``source`` (``"eq9"``: :func:`similarity_to_centres` of
        X; ``"eq10"``: :func:`graph_confidence` of W), with ``density`` and ``lambda_p``.

    ``source`` and ``density`` are only used by ``kind="eq12"`` (but are always validated). For kinds eq11/eq12 every
    sample must end with a positive own-cohort entry (otherwise a ValueError explains why, e.g. Eq. 11 with
    lambda_p = 0 and a sample without within-cohort neighbours in W).
    """
    y, c = _check_labels(labels, n_cohorts)

    if kind == "eq10":
        if W is None:
            raise UserError("W is required for kind='eq10' (got None)")
        R = graph_confidence(W, y, c)
    elif kind == "eq11":
        if W is None:
            raise UserError("W is required for kind='eq11' (got None)")
        R = rescale(graph_confidence(W, y, c), y, lambda_p)
    else:
        if source == "eq9":
            if X is None:
                raise UserError("X is required for kind='eq12' with source='eq9' (got None)")
            S = similarity_to_centres(X, y, c)
        else:
            if W is None:
                raise UserError("W is required for kind='eq12' with source='eq10' (got None)")
            S = graph_confidence(W, y, c)
        R = probability_confidence(S, y, lambda_p=lambda_p, density=density)

    if not np.all(np.isfinite(R)) or R.min() < 0:
        raise UserError(f"confidence matrix ({kind}) has negative or non-finite entries")
    if kind in ("eq11", "eq12"):
        own = R[np.arange(y.shape[0]), y]
        bad = np.flatnonzero(~(own > 0))
        if bad.size:
            raise UserError(
                f"confidence matrix ({kind}): {bad.size} samples have a zero own-cohort confidence "
                f"(first: sample {int(bad[0])}, cohort {int(y[bad[0]])}); "
                "with eq11 use lambda_p > 0 or check that every sample has within-cohort neighbours in W"
            )
    total = R.sum()
    if not total > 0:
        raise UserError(f"confidence matrix ({kind}) is identically zero; check W and labels")
    return R / total
