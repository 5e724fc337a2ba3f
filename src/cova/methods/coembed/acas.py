"""ACAS, automatic co-embedding with adaptive shaping (Mu & Goulermas, TPAMI 2013), a baseline of the
co-embedding paper (Sec. 2.4, Eqs. 8-12).

The relation R (m×n, non-negative) is scaled to R̂ = S_x^{-1/2} R S_y^{-1/2} (Eq. 8), whose diagonal scalings
generalise the row and column sums by a model variable p (Eqs. 9-10):

    s_i = 1 (p = 0),   (Σ_j r_ij^p)^{1/p} (p > 0),   max_j r_ij (p = ∞),

and likewise s_j over the columns. With the thin SVD R̂ = U Θ Vᵀ the co-embedding is (Eqs. 11-12)

    Z_x = S_x^{-α} U_k Θ_k^β,   Z_y = S_y^{-α} V_k Θ_k^β.

For p = 1, S_x and S_y are the row and column sums, so R̂ is the doubly normalised relation of correspondence
analysis, whose first singular triple is trivial (θ_1 = 1, u_1 ∝ S_x^{1/2}1, v_1 ∝ S_y^{1/2}1: it places every
object at the same coordinate); it is dropped and triples 2..k+1 are used. For any other p the first triple
carries structure (for p = 0 it is the leading factor of R itself), and triples 1..k are used. Special cases:
(p = 1, α = ½, β = 1) is correspondence analysis (Eqs. 6-7, identical coordinates, up to each column's sign);
(p = 0, α = 0, β = 1) is latent semantic indexing, Z_x = U_k Θ_k, Z_y = V_k Θ_k of the SVD of R. The paper
writes α > 0, which would exclude the LSI case; α ≥ 0 is accepted.

Model choice (the quantised scoring function of Sec. 2.4): re-estimate the relation from the co-embedding as
R_z = max(D) − D, D the Euclidean distances between the rows of Z_x and of Z_y; quantise R and R_z separately into
``bins`` equal-frequency levels 1..bins (cut at their i/bins quantiles, i = 1..bins−1; a value on a cut goes to
the lower level); the score is the root mean square of the level differences, to be minimised. ``search="grid"``
scores p ∈ {∞, 0, 1, 2, 3} × α ∈ {0, 0.1, …, 5} × β ∈ {0, 0.2, …, 2} (one SVD per p) and keeps the first minimiser
in that order (p, then α, then β).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp

from ...affinity.distances import squared_distances
from ...constraints import MAX_SAMPLES, NON_NEGATIVE, POSITIVE_INT, SEED, StrOptions, integer, real
from ...errors import UserError
from ...inputs import Inputs
from ...objectives.coembedding import relation_margins, scaled_svd
from ..base import Embedder, components_fit_relation, relation_matrix, relation_size_guard

__all__ = ["ACAS", "GRID_P", "GRID_ALPHA", "GRID_BETA", "acas_scales", "acas_svd", "acas_coordinates",
           "acas_embedding", "quantile_cuts", "quantize", "acas_score", "acas_grid_search"]

#: The method named in error messages.
NAME = "ACAS"
#: The search grid of p (∞ first), α and β.
GRID_P: tuple[float, ...] = (math.inf, 0.0, 1.0, 2.0, 3.0)
GRID_ALPHA: np.ndarray = np.round(np.arange(51) * 0.1, 10)
GRID_BETA: np.ndarray = np.round(np.arange(11) * 0.2, 10)


def _as_p(p: Any) -> float:
    if isinstance(p, str):
        if p != "inf":
            raise UserError(f"p must be a float >= 0 or 'inf', got {p!r}")
        return math.inf
    p = float(p)
    if not (p >= 0):
        raise UserError(f"p must be a float >= 0 or 'inf', got {p!r}")
    return p


def _relation(R: Any) -> sp.csr_matrix:
    return relation_margins(R, NAME)[0]


def acas_scales(R: Any, p: float | str) -> tuple[np.ndarray, np.ndarray]:
    """The diagonals of S_x (m,) and S_y (n,) of Eqs. 9-10 for p ≥ 0 or p = ∞ (``math.inf`` or ``"inf"``)."""
    p = _as_p(p)
    R = _relation(R)
    m, n = R.shape
    if p == 0:
        return np.ones(m), np.ones(n)
    if math.isinf(p):
        return (np.asarray(R.max(axis=1).toarray(), dtype=np.float64).ravel(),
                np.asarray(R.max(axis=0).toarray(), dtype=np.float64).ravel())
    Rp = R.power(p)
    sx = np.asarray(Rp.sum(axis=1), dtype=np.float64).ravel() ** (1.0 / p)
    sy = np.asarray(Rp.sum(axis=0), dtype=np.float64).ravel() ** (1.0 / p)
    return sx, sy


def acas_svd(R: Any, p: float | str, n_components: int = 2, solver: str = "auto",
             random_state: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The k singular triples ACAS uses of R̂ = S_x^{-1/2} R S_y^{-1/2} (Eq. 8): triples 2..k+1 when p = 1
    (the first is trivial), 1..k otherwise. Returns ``(U_k (m, k), θ_k (k,), V_k (n, k), s_x (m,), s_y (n,))``.

    ``solver``: as in :func:`cova.objectives.coembedding.scaled_svd` (``"auto"``: dense while
    min(m, n) ≤ :data:`~cova.objectives.coembedding.DENSE_MAX`, else ``svds`` with a seeded start)."""
    p = _as_p(p)
    R = _relation(R)
    k = int(n_components)
    sx, sy = acas_scales(R, p)
    drop = 1 if p == 1 else 0
    U, s, V, _, _ = scaled_svd(R, 1.0 / np.sqrt(sx), 1.0 / np.sqrt(sy), k + drop, solver=solver,
                               random_state=random_state, name=NAME)
    return U[:, drop:], s[drop:], V[:, drop:], sx, sy


def acas_coordinates(U: np.ndarray, theta: np.ndarray, V: np.ndarray, sx: np.ndarray, sy: np.ndarray,
                     alpha: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Z_x = S_x^{-α} U_k Θ_k^β and Z_y = S_y^{-α} V_k Θ_k^β (Eqs. 11-12)."""
    tb = np.power(theta, beta)
    return (U * np.power(sx, -alpha)[:, None]) * tb, (V * np.power(sy, -alpha)[:, None]) * tb


def acas_embedding(R: Any, n_components: int = 2, p: float | str = 1.0, alpha: float = 0.5, beta: float = 1.0,
                   solver: str = "auto", random_state: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ACAS at fixed (p, α, β): ``(Z_x (m, k), Z_y (n, k), θ_k)`` (Eqs. 8-12)."""
    U, theta, V, sx, sy = acas_svd(R, p, n_components, solver, random_state)
    Zx, Zy = acas_coordinates(U, theta, V, sx, sy, alpha, beta)
    return Zx, Zy, theta


def quantile_cuts(values: np.ndarray, bins: int) -> np.ndarray:
    """The i/bins quantiles (i = 1..bins−1) of ``values`` by numpy's ``"hazen"`` definition (the piecewise-linear
    one MATLAB's ``quantile`` uses): 0-based position N·q − ½ of the sorted values, clipped to [0, N − 1] and
    interpolated linearly. Equal to ``np.quantile(values, q, method="hazen")``; the 2(bins − 1) order statistics
    needed come from :func:`_order_statistics`, not a full sort."""
    v = np.asarray(values, dtype=np.float64).ravel()
    q = np.arange(1, int(bins)) / int(bins)
    pos = np.clip(v.size * q - 0.5, 0.0, v.size - 1.0)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, v.size - 1)
    ranks = np.unique(np.concatenate([lo, hi]))
    stats = _order_statistics(v, ranks)
    vlo, vhi = stats[np.searchsorted(ranks, lo)], stats[np.searchsorted(ranks, hi)]
    return vlo + (pos - lo) * (vhi - vlo)


#: Histogram bins of one narrowing pass of :func:`_order_statistics`, and the size below which it sorts.
_SELECT_BINS = 4096
_SELECT_SORT_MAX = 1 << 15


def _order_statistics(v: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The values of rank ``ranks`` (0-based, ascending, distinct) among the entries of ``v``: ``np.sort(v)[ranks]``
    without sorting all of ``v``.

    Written by hand because ``np.partition`` at the 18 ranks of ten quantiles costs 2.5 times one partition and
    0.4 times a full sort, and the grid search takes ten quantiles of thousands of arrays of millions of entries.
    Each pass (:func:`_narrow`) keeps only the values of the histogram bins that hold a wanted rank, until few
    enough are left to sort."""
    buf, rk = v, np.asarray(ranks, dtype=np.int64)
    while buf.size > _SELECT_SORT_MAX:
        kept, kept_ranks = _narrow(buf, rk)
        if kept.size == buf.size:  # the wanted bins hold every value (few distinct values): sort them all
            break
        buf, rk = kept, kept_ranks
    return np.sort(buf)[rk]


@numba.njit(cache=True)
def _narrow(v: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - jit
    """One pass of :func:`_order_statistics`: count the values in equal-width bins between min and max, and return
    the values of the bins that hold a wanted rank (bin after bin) with the wanted ranks among them. The bin index
    is a non-decreasing function of the value, so the kept bins, laid end to end, are in the order of the whole
    and a rank keeps its value; values crowded into few bins only take more passes. All values equal: one value,
    every rank 0. A range too narrow to divide into bins (its width underflows) keeps every value."""
    lo = v[0]
    hi = v[0]
    for x in v:
        if x < lo:
            lo = x
        if x > hi:
            hi = x
    if not hi > lo:
        return v[:1].copy(), np.zeros(ranks.size, dtype=np.int64)
    nb = _SELECT_BINS
    scale = nb / (hi - lo)
    if not np.isfinite(scale):
        return v.copy(), ranks.copy()
    counts = np.zeros(nb + 1, dtype=np.int64)
    for x in v:
        counts[min(int((x - lo) * scale), nb - 1) + 1] += 1
    start = np.cumsum(counts)                     # start[b]: values in the bins before b
    keep = np.zeros(nb, dtype=np.bool_)           # the bins that hold a wanted rank
    bins = np.empty(ranks.size, dtype=np.int64)
    for r in range(ranks.size):
        bins[r] = np.searchsorted(start, ranks[r], side="right") - 1
        keep[bins[r]] = True
    offset = np.zeros(nb, dtype=np.int64)         # kept values before each kept bin
    n_kept = 0
    for b in range(nb):
        if keep[b]:
            offset[b] = n_kept
            n_kept += start[b + 1] - start[b]
    kept = np.empty(n_kept)
    fill = offset.copy()
    for x in v:
        b = min(int((x - lo) * scale), nb - 1)
        if keep[b]:
            kept[fill[b]] = x
            fill[b] += 1
    kept_ranks = np.empty(ranks.size, dtype=np.int64)
    for r in range(ranks.size):
        kept_ranks[r] = offset[bins[r]] + ranks[r] - start[bins[r]]
    return kept, kept_ranks


def quantize(A: np.ndarray, bins: int = 10) -> np.ndarray:
    """Equal-frequency levels 1..``bins`` of the entries of A (same shape, int16).

    The cuts are the i/bins quantiles of all entries (i = 1..bins−1, :func:`quantile_cuts`); an entry gets 1 +
    the number of cuts strictly below it, so the bands are (c_{i−1}, c_i] and every entry has a level."""
    bins = int(bins)
    if bins < 2:
        raise UserError(f"bins must be an int >= 2, got {bins}")
    A = np.asarray(A, dtype=np.float64)
    return (np.searchsorted(quantile_cuts(A, bins), A, side="left") + 1).astype(np.int16)


@numba.njit(cache=True, parallel=True)
def _level_sq_diff_sum(Rq: np.ndarray, values: np.ndarray, cuts: np.ndarray) -> int:  # pragma: no cover - jit
    """Σ (Rq − level(values))², level = 1 + the number of cuts strictly below the value (as :func:`quantize`).
    Integers throughout, so the sum does not depend on the order the threads add it in."""
    total = 0
    for e in numba.prange(values.size):
        x = values[e]
        level = 1
        for c in cuts:
            if c < x:
                level += 1
        d = np.int64(Rq[e]) - level
        total += d * d
    return total


def acas_score(Rq: np.ndarray, Zx: np.ndarray, Zy: np.ndarray, bins: int = 10) -> float:
    """RMS(R_q − R_qz): ``Rq`` = :func:`quantize` (R, bins), R_qz the quantised R_z = max(D) − D of the
    co-embedding's row-column Euclidean distances D.

    The levels of R_z and their squared differences from ``Rq`` are counted in one compiled pass (integers, so
    the result equals the mean over the quantised arrays exactly); the grid search scores thousands of models."""
    D = np.sqrt(squared_distances(Zx, Zy))
    Rz = D.max() - D
    Rq = np.asarray(Rq)
    if Rq.shape != Rz.shape:
        raise UserError(f"Rq has shape {Rq.shape} but the co-embedding's distances have {Rz.shape}")
    cuts = quantile_cuts(Rz, bins)
    total = _level_sq_diff_sum(np.ascontiguousarray(Rq, dtype=np.int16).ravel(), Rz.ravel(), cuts)
    return float(np.sqrt(total / Rz.size))


def acas_grid_search(R: Any, n_components: int = 2, bins: int = 10, ps: Any = GRID_P, alphas: Any = GRID_ALPHA,
                     betas: Any = GRID_BETA, solver: str = "auto", random_state: int = 0) -> dict:
    """Score every (p, α, β) of the grid (one SVD per p). Returns a dict with ``scores`` (len ps × len alphas
    × len betas), the first minimiser in the order p, α, β (``p``, ``alpha``, ``beta``, ``score``) and its
    ``Zx``, ``Zy``, ``theta``."""
    R = _relation(R)
    ps = [_as_p(p) for p in ps]
    alphas, betas = np.asarray(alphas, dtype=float), np.asarray(betas, dtype=float)
    Rq = quantize(R.toarray(), bins)
    scores = np.empty((len(ps), alphas.size, betas.size))
    best: tuple | None = None
    for a, p in enumerate(ps):
        U, theta, V, sx, sy = acas_svd(R, p, n_components, solver, random_state)
        for b, alpha in enumerate(alphas):
            for c, beta in enumerate(betas):
                Zx, Zy = acas_coordinates(U, theta, V, sx, sy, alpha, beta)
                scores[a, b, c] = score = acas_score(Rq, Zx, Zy, bins)
                if best is None or score < best[0]:
                    best = (score, p, float(alpha), float(beta), Zx, Zy, theta)
    assert best is not None
    score, p, alpha, beta, Zx, Zy, theta = best
    return {"scores": scores, "score": score, "p": p, "alpha": alpha, "beta": beta, "Zx": Zx, "Zy": Zy,
            "theta": theta}


class ACAS(Embedder):
    """ACAS of the run's relation (Mu & Goulermas 2013; co-embedding paper Eqs. 8-12).

    ``embedding_`` holds Z_x (rows), ``column_embedding_`` Z_y (columns, saved beside the embedding); ``p_``,
    ``alpha_``, ``beta_`` the model used (the grid minimiser with ``search="grid"``), ``score_`` its quantised
    score, ``singular_values_`` θ_k, ``grid_scores_`` the score of every grid model (``search="grid"`` only).

    Parameters
    ----------
    n_components : k (2).
    p : scaling exponent of Eqs. 9-10, a float ≥ 0 or ``"inf"`` (1).
    alpha, beta : exponents of Eqs. 11-12, ≥ 0 (½ and 1: with p = 1 this is correspondence analysis).
    search : ``"none"`` (use p, α, β) or ``"grid"`` (minimise the score over p ∈ {∞, 0, 1, 2, 3}, α ∈ {0, 0.1,
        …, 5}, β ∈ {0, 0.2, …, 2}; p, α, β are then ignored).
    bins : quantisation levels of the score (10).
    solver : ``"auto"`` (dense SVD while min(m, n) ≤ 500, else ``scipy.sparse.linalg.svds``), ``"dense"`` or
        ``"sparse"``.
    max_samples : size guard on max(m, n) (5,000): the score compares dense m×n matrices.
    random_state : seed of the sparse solver's start vector.
    """

    required_inputs = ("relation",)
    extra_outputs = ("column_embedding_",)

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "p": [real(0.0, None, closed="left"), StrOptions({"inf"})],
        "alpha": NON_NEGATIVE,
        "beta": NON_NEGATIVE,
        "search": [StrOptions({"none", "grid"})],
        "bins": [integer(2, None)],
        "solver": [StrOptions({"auto", "dense", "sparse"})],
        "max_samples": MAX_SAMPLES,
        "random_state": SEED,
    }

    _option_rules = (relation_size_guard("ACAS", "the score compares dense m×n matrices"),
                     components_fit_relation("Z_x and Z_y take k singular vectors of the scaled m×n relation"))

    def __init__(self, n_components: int = 2, p: float | str = 1.0, alpha: float = 0.5, beta: float = 1.0,
                 search: str = "none", bins: int = 10, solver: str = "auto", max_samples: int | None = 5000,
                 random_state: int = 0):
        self.n_components = n_components
        self.p = p
        self.alpha = alpha
        self.beta = beta
        self.search = search
        self.bins = bins
        self.solver = solver
        self.max_samples = max_samples
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "ACAS":
        self._validate_params()
        R = _relation(relation_matrix(inputs, "ACAS"))  # max(m, n) ≤ max_samples: _option_rules
        if self.search == "grid":
            out = acas_grid_search(R, self.n_components, self.bins, solver=self.solver,
                                   random_state=self.random_state)
            Zx, Zy, theta = out["Zx"], out["Zy"], out["theta"]
            self.p_, self.alpha_, self.beta_, self.score_ = out["p"], out["alpha"], out["beta"], out["score"]
            self.grid_scores_ = out["scores"]
        else:
            Zx, Zy, theta = acas_embedding(R, self.n_components, self.p, self.alpha, self.beta, self.solver,
                                           self.random_state)
            self.p_, self.alpha_, self.beta_ = _as_p(self.p), float(self.alpha), float(self.beta)
            self.score_ = acas_score(quantize(R.toarray(), self.bins), Zx, Zy, self.bins)
        self.embedding_ = np.ascontiguousarray(Zx)
        self.column_embedding_ = np.ascontiguousarray(Zy)
        self.singular_values_ = theta
        return self
