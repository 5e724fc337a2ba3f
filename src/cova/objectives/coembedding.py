"""The co-embedding of a relation's row and column objects (Wu, Mu, Liatsis & Goulermas, "Computation of
heterogeneous object co-embeddings from relational measurements", Sec. 3) and its model-selection objective Γ.

For a non-negative m×n relation R with row sums d_r and column sums d_c, the weighted relations are
R_x = D_r^{η1−1} R and R_y = R D_c^{η2−1} (co-embedding paper Eqs. 21-22), with the column sums D_{c,x} of R_x and
the row sums D_{r,y} of R_y. The row coordinates are eigenvectors ψ of the row-stochastic
T = D_{r,y}^{-1} R_y D_{c,x}^{-1} R_xᵀ (Eqs. 32-36), skipping the trivial ψ_1 = 1. T = P^{-1} B Bᵀ P with the
diagonal P = (D_{r,y} D_r^{η1−1})^{1/2} and the m×n matrix

    B = (w_r / d_{r,y})^{1/2} R (w_c / d_{c,x})^{1/2},     w_r = d_r^{η1−1},  w_c = d_c^{η2−1},

so ψ_q = P^{-1} u_q and λ_q = θ_q² come from the thin SVD B = U Θ Vᵀ (no non-symmetric eigenproblem). The
reduced model used in all the paper's experiments (Sec. 3.3.1) places, for q = 1..k,

    Z_x^{(q)} = (λ_{q+1}/λ_2)^γ ψ_{q+1} / (ψ_{q+1}ᵀ D_{r,y} ψ_{q+1})^{1/2}      (Eq. 41)
    Z_y^{(q)} = ξ / λ_{q+1}^{1/2} · D_{c,x}^{-1} R_xᵀ Z_x^{(q)}                  (Eq. 42)

and the four parameters (η1, η2, ξ, γ) are chosen by minimising Γ (Eq. 43), the number of mutual k-nearest
row–column pairs of R that are not mutual nearest pairs in the co-embedding (Sec. 3.4). T, hence the SVD, depends
on (η1, η2) only; ξ and γ are rescalings of its result, which :func:`grid_search` exploits.
"""

from __future__ import annotations

import logging
import re
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral
from typing import Any, Sequence

import numba
import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from scipy.spatial import cKDTree
from threadpoolctl import threadpool_limits

from ..errors import UserError
from ..progress import Progress

__all__ = ["DENSE_MAX", "TRIVIAL_TOL", "TIE_RTOL", "relation_margins", "scaled_svd", "relation_weights",
           "CoembeddingSVD", "coembedding_svd", "reduced_model", "neighbourhood_size", "mutual_knn_pairs",
           "gamma_objective", "GridSearchResult", "grid_search"]

log = logging.getLogger("cova")

#: Below this many rows or columns ``solver="auto"`` takes the dense SVD, above it the sparse ``svds``.
DENSE_MAX = 500
#: Singular values of the normalised relation this close to 1 beyond the first are further trivial ones.
TRIVIAL_TOL = 1e-10
#: A relation at least this dense (and not larger than :data:`DENSE_CELLS`) is handled as a dense array: ``svds``
#: and the top-k selections run several times faster on it than on its sparse form.
DENSE_FRACTION = 0.25
#: The largest m·n handled as a dense array (256 MB of float64).
DENSE_CELLS = 1 << 25
#: Distance ties in Γ: a point whose distance is within this relative tolerance of the k-th smallest distance
#: counts as one of the k nearest (all ties at the k-th distance are neighbours).
TIE_RTOL = 1e-9
#: Above this k the k-th neighbour distance is found by a (chunked) dense selection instead of a KD-tree query.
KDTREE_MAX_K = 64


def _as_csr(R: Any, name: str) -> sp.csr_matrix:
    R = sp.csr_matrix(R, dtype=np.float64)
    if R.nnz and (not np.all(np.isfinite(R.data)) or R.data.min() < 0):
        raise UserError(f"{name} needs a relation with finite, non-negative entries")
    return R


def relation_margins(R: Any, name: str = "the co-embedding") -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """``(R as float CSR, row sums d_r, column sums d_c)``; ``ValueError`` (naming ``name``) for negative or
    non-finite entries and for all-zero rows or columns (co-embedding paper Sec. 2: they would divide by zero)."""
    R = _as_csr(R, name)
    dr = np.asarray(R.sum(axis=1), dtype=np.float64).ravel()
    dc = np.asarray(R.sum(axis=0), dtype=np.float64).ravel()
    for side, d in (("row", dr), ("column", dc)):
        empty = np.flatnonzero(d <= 0)
        if empty.size:
            raise UserError(f"{name} needs a relation without all-zero rows and columns; "
                             f"{empty.size} {side}s are empty (first: {empty[:5].tolist()}); drop them first")
    return R, dr, dc


def _is_dense_enough(R: sp.spmatrix) -> bool:
    m, n = R.shape
    return m * n <= DENSE_CELLS and R.nnz >= DENSE_FRACTION * m * n


def scaled_svd(R: Any, row_scale: np.ndarray, col_scale: np.ndarray, n_triples: int, solver: str = "auto",
               random_state: int = 0, name: str = "the scaled SVD"
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ``n_triples`` leading singular triples of B = diag(row_scale) R diag(col_scale), in descending order,
    each sign fixed so that the entry of largest magnitude of u is positive.

    Returns ``(U (m, t), s (t,), V (n, t), d_r (m,), d_c (n,))`` with the row and column sums of R. ``solver``:
    ``"dense"`` (``scipy.linalg.svd(full_matrices=False)``), ``"sparse"`` (``scipy.sparse.linalg.svds`` with a
    start vector seeded by ``random_state``; a relation at least 25 % dense is multiplied as a dense array) or
    ``"auto"`` (dense while min(m, n) ≤ :data:`DENSE_MAX`). Raises ``ValueError`` (naming ``name``) for negative
    entries, all-zero rows or columns, scales that are not positive and finite, or more triples than min(m, n)
    (``svds``: min(m, n) − 1).
    """
    R, dr, dc = relation_margins(R, name)
    m, n = R.shape
    if solver not in ("auto", "dense", "sparse"):
        raise UserError(f"solver must be one of ['auto', 'dense', 'sparse'], got {solver!r}")
    if solver == "auto":
        solver = "dense" if min(m, n) <= DENSE_MAX else "sparse"
    limit = min(m, n) - (1 if solver == "sparse" else 0)
    if not 1 <= n_triples <= limit:
        raise UserError(f"a {m}×{n} relation has at most {limit} singular triples with the {solver} solver; "
                         f"asked for {n_triples}")
    row_scale = np.asarray(row_scale, dtype=np.float64)
    col_scale = np.asarray(col_scale, dtype=np.float64)
    for side, scale, size in (("row", row_scale, m), ("column", col_scale, n)):
        if scale.shape != (size,) or not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            raise UserError(f"{name}: the {side} scale must hold {size} positive finite numbers")
    if solver == "dense" or _is_dense_enough(R):
        B = R.toarray()
        B *= row_scale[:, None]
        B *= col_scale[None, :]
    else:
        B = (sp.diags(row_scale) @ R @ sp.diags(col_scale)).tocsr()
    if solver == "dense":
        U, s, Vt = scipy.linalg.svd(B, full_matrices=False)
        U, s, V = U[:, :n_triples], s[:n_triples], Vt[:n_triples].T
    elif isinstance(B, np.ndarray):
        U, s, V = _gram_svd(B, n_triples, random_state)
    else:
        U, s, Vt = scipy.sparse.linalg.svds(B, k=n_triples, random_state=random_state)
        order = np.argsort(-s)
        U, s, V = U[:, order], s[order], Vt[order].T
    big = np.argmax(np.abs(U), axis=0)
    signs = np.where(U[big, np.arange(U.shape[1])] < 0, -1.0, 1.0)
    return U * signs, s, V * signs, dr, dc


def _gram_svd(B: np.ndarray, k: int, random_state: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Leading k singular triples of a dense B from ``eigsh`` of its smaller Gram matrix (seeded start vector).

    A normalised relation often has a tightly clustered spectrum below its trivial value 1 (a random dense
    relation: θ_2..θ_12 within 3 %), where ARPACK needs hundreds of iterations; one product B Bᵀ makes each of
    them a cheap symmetric product, several times faster than ``svds`` on B. The singular vectors of the other
    side are Bᵀu/θ (resp. Bv/θ)."""
    m, n = B.shape
    wide = m <= n
    G = B @ B.T if wide else B.T @ B
    v0 = np.random.default_rng(random_state).uniform(-1.0, 1.0, G.shape[0])
    w, X = scipy.sparse.linalg.eigsh(G, k=k, v0=v0)
    order = np.argsort(-w)
    w, X = w[order], X[:, order]
    s = np.sqrt(np.clip(w, 0.0, None))
    inv = np.divide(1.0, s, out=np.zeros_like(s), where=s > 0)
    if wide:
        return X, s, (B.T @ X) * inv
    return (B @ X) * inv, s, X


def relation_weights(R: Any, eta1: float, eta2: float) -> tuple[np.ndarray, np.ndarray]:
    """Row and column weights w_r = d_r^{η1−1}, w_c = d_c^{η2−1} of the weighted relations R_x = D_r^{η1−1} R and
    R_y = R D_c^{η2−1} (co-embedding paper Eqs. 15-16, 21-22), each divided by its maximum.

    Computed as exp((η−1) log d − max) so that η up to 10 neither overflows nor underflows for any realistic
    spread of the sums. A positive factor on w_r or w_c changes the co-embedding only by a global factor."""
    _, dr, dc = relation_margins(R)
    return _weights(dr, eta1), _weights(dc, eta2)


def _weights(d: np.ndarray, eta: float) -> np.ndarray:
    e = (float(eta) - 1.0) * np.log(d)
    return np.exp(e - e.max())


@dataclass(frozen=True)
class CoembeddingSVD:
    """The leading singular triples of B (see the module docstring) with everything Eqs. 41-42 need: ``U`` (m, t),
    ``s`` (t,), ``V`` (n, t), the sums ``dr``, ``dc`` of R, the weights ``wr``, ``wc`` and the sums ``dry`` (rows of
    R_y) and ``dcx`` (columns of R_x), and R itself (CSR)."""

    U: np.ndarray
    s: np.ndarray
    V: np.ndarray
    dr: np.ndarray
    dc: np.ndarray
    wr: np.ndarray
    wc: np.ndarray
    dry: np.ndarray
    dcx: np.ndarray
    R: sp.csr_matrix
    eta1: float
    eta2: float


def coembedding_svd(R: Any, eta1: float, eta2: float, n_triples: int, solver: str = "auto",
                    random_state: int = 0) -> CoembeddingSVD:
    """The ``n_triples`` leading singular triples of B = (w_r/d_{r,y})^{1/2} R (w_c/d_{c,x})^{1/2}, whose squared
    singular values are the eigenvalues λ of T (co-embedding paper Eqs. 32-36; θ_1 = 1 is the trivial pair
    T1 = 1), with the vectors of Eqs. 21-22. ``solver`` and ``random_state`` as in :func:`scaled_svd`."""
    for label, eta in (("eta1", eta1), ("eta2", eta2)):
        if isinstance(eta, (bool, np.bool_)) or not np.isfinite(eta) or eta < 0:
            raise UserError(f"{label} must be a finite number ≥ 0, got {eta!r}")
    R, dr, dc = relation_margins(R)
    wr, wc = _weights(dr, eta1), _weights(dc, eta2)
    dry = R @ wc
    dcx = R.T @ wr
    if np.any(dry <= 0) or np.any(dcx <= 0):
        raise UserError(f"the weights of eta1={eta1}, eta2={eta2} underflow: the row or column sums of the "
                         f"relation spread too widely for these exponents")
    U, s, V, _, _ = scaled_svd(R, np.sqrt(wr / dry), np.sqrt(wc / dcx), n_triples, solver=solver,
                               random_state=random_state, name="the co-embedding")
    return CoembeddingSVD(U, s, V, dr, dc, wr, wc, dry, dcx, R, float(eta1), float(eta2))


def _base_model(svd: CoembeddingSVD, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Eqs. 41-42 at γ = 0, ξ = 1, each column's sign fixed (largest-magnitude entry of Z_x positive), λ_2..λ_{k+1}
    and the number of further unit singular values."""
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, Integral) or dim < 1:
        raise UserError(f"dim must be a positive integer, got {dim!r}")
    if dim + 1 > svd.s.size:
        raise UserError(f"dim={dim} needs {dim + 1} singular triples, the decomposition has {svd.s.size}")
    s = svd.s[1:dim + 1]
    if np.any(s <= 1e-12 * svd.s[0]):
        raise UserError(f"dim={dim} exceeds the rank of the normalised relation (singular values "
                         f"{s.tolist()}): lower dim")
    psi = svd.U[:, 1:dim + 1] / np.sqrt(svd.wr * svd.dry)[:, None]
    Zx = psi / np.sqrt(np.einsum("iq,i,iq->q", psi, svd.dry, psi))
    big = np.argmax(np.abs(Zx), axis=0)
    Zx *= np.where(Zx[big, np.arange(dim)] < 0, -1.0, 1.0)
    Zy = (svd.R.T @ (svd.wr[:, None] * Zx)) / svd.dcx[:, None] / s
    n_unit = int(np.sum(svd.s[1:] >= 1.0 - TRIVIAL_TOL))
    return Zx, Zy, s**2, n_unit


def _axis_factors(lambdas: np.ndarray, gamma: float) -> np.ndarray:
    return (lambdas / lambdas[0]) ** float(gamma)


def reduced_model(svd_result: CoembeddingSVD, dim: int, xi: float,
                  gamma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reduced co-embedding model (co-embedding paper Eqs. 41-42): ``(Z_x (m, dim), Z_y (n, dim),
    λ_2..λ_{dim+1})``.

    Z_y is computed from the already γ-scaled Z_x, so γ rescales the axes of both groups together and ξ sets the
    scale of the columns relative to the rows. The sign of each axis is fixed (largest-magnitude entry of the Z_x
    column positive). Warns when a singular value beyond the first is 1 (to :data:`TRIVIAL_TOL`): the relation's
    bipartite graph is disconnected and those axes only separate its blocks (embed each block separately)."""
    if not np.isfinite(xi) or xi <= 0:
        raise UserError(f"xi must be a finite number > 0, got {xi!r}")
    if not np.isfinite(gamma) or gamma < 0:
        raise UserError(f"gamma must be a finite number ≥ 0, got {gamma!r}")
    Zx, Zy, lambdas, n_unit = _base_model(svd_result, dim)
    if n_unit:
        warnings.warn(f"{n_unit + 1} singular values equal 1: the relation is disconnected and its leading "
                      f"components separate the blocks", stacklevel=2)
    f = _axis_factors(lambdas, gamma)
    return Zx * f, Zy * (float(xi) * f), lambdas


_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")
_ALL_MINUS = re.compile(r"^all-(\d+)$")


def neighbourhood_size(spec: int | str, size: int) -> int:
    """The neighbourhood size k_r (``size`` = m) or k_c (``size`` = n) of Γ from ``spec``: a positive int ≤ size,
    ``"<p>%"`` (⌊p % of size⌋, at least 1; 0 < p ≤ 100), ``"all"`` (size) or ``"all-<k>"`` (size − k ≥ 1). The
    settings of the paper's Figs. 9-10 are ``10``, ``"10%"``, ``"50%"``, ``"all-10"`` and ``"all"``."""
    allowed = "a positive integer, '<p>%' with 0 < p ≤ 100, 'all' or 'all-<k>'"
    if isinstance(spec, (bool, np.bool_)):
        raise UserError(f"a neighbourhood size must be {allowed}, got {spec!r}")
    if isinstance(spec, Integral):
        k = int(spec)
        if not 1 <= k <= size:
            raise UserError(f"a neighbourhood size must be between 1 and {size} here, got {k}")
        return k
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text == "all":
            return int(size)
        match = _ALL_MINUS.match(text)
        if match:
            k = size - int(match.group(1))
            if k < 1:
                raise UserError(f"neighbourhood size {spec!r} leaves {k} of {size} neighbours; need at least 1")
            return k
        match = _PERCENT.match(text)
        if match:
            p = Fraction(match.group(1))
            if not 0 < p <= 100:
                raise UserError(f"neighbourhood size {spec!r}: the percentage must be in (0, 100]")
            return max(1, int(p * size // 100))
    raise UserError(f"a neighbourhood size must be {allowed}, got {spec!r}")


def _top_k_dense(A: np.ndarray, k: int, axis: int) -> np.ndarray:
    """Mask of the k largest entries along ``axis``, ties at the k-th value broken by the lower index (the order
    of ``np.argsort(-A, axis, kind="stable")``)."""
    if axis == 0:
        return _top_k_dense(A.T, k, 1).T
    if k >= A.shape[1]:
        return np.ones(A.shape, dtype=bool)
    kth = -np.partition(-A, k - 1, axis=1)[:, k - 1:k]
    greater = A > kth
    tied = A == kth
    mask = greater | tied
    need = k - greater.sum(axis=1)
    over = np.flatnonzero(tied.sum(axis=1) > need)
    if over.size:
        sub = tied[over]
        mask[over] = greater[over] | (sub & (np.cumsum(sub, axis=1) <= need[over, None]))
    return mask


def _top_k_sparse(R: sp.csr_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of the k largest entries of every row of a CSR matrix with positive stored entries, zeros
    included, ties broken by the lower column index."""
    m, n = R.shape
    counts = np.diff(R.indptr)
    row_of = np.repeat(np.arange(m), counts)
    order = np.lexsort((R.indices, -R.data, row_of))
    rank = np.arange(R.nnz) - R.indptr[row_of[order]]
    keep = order[rank < k]
    rows, cols = [row_of[keep]], [R.indices[keep]]
    for i in np.flatnonzero(counts < min(k, n)):
        present = R.indices[R.indptr[i]:R.indptr[i + 1]]
        fill = np.setdiff1d(np.arange(k), present)[:k - counts[i]]
        rows.append(np.full(fill.size, i))
        cols.append(fill)
    return np.concatenate(rows), np.concatenate(cols)


def mutual_knn_pairs(R: Any, k_r: int | str = 5, k_c: int | str = 5) -> tuple[np.ndarray, np.ndarray]:
    """K(R) of the co-embedding paper's Eq. 43 as index arrays ``(rows, cols)`` (sorted by row, then column): the
    pairs (i, j) with j among the k_c largest entries of row i AND i among the k_r largest entries of column j.

    Ties are broken by the lower index (the order of ``np.argsort(-R, kind="stable")``, like MATLAB's stable
    ``sort``); zero entries count as values. ``k_r``/``k_c`` as in :func:`neighbourhood_size` (``k_r`` of m,
    ``k_c`` of n). At most m·k_c pairs; R stays sparse unless it is dense already (or at least 25 % dense)."""
    dense_input = isinstance(R, np.ndarray)
    if dense_input:
        A = np.asarray(R, dtype=np.float64)
        if A.ndim != 2 or not np.all(np.isfinite(A)) or (A.size and A.min() < 0):
            raise UserError("K(R) needs a 2-D relation with finite, non-negative entries")
    else:
        Rs = _as_csr(R, "K(R)")
        if _is_dense_enough(Rs):
            A, dense_input = Rs.toarray(), True
    if dense_input:
        m, n = A.shape
        kr, kc = neighbourhood_size(k_r, m), neighbourhood_size(k_c, n)
        return np.nonzero(_top_k_dense(A, kc, axis=1) & _top_k_dense(A, kr, axis=0))
    m, n = Rs.shape
    kr, kc = neighbourhood_size(k_r, m), neighbourhood_size(k_c, n)
    Rs = Rs.copy()
    Rs.eliminate_zeros()
    Rs.sort_indices()
    ri, rj = _top_k_sparse(Rs, kc)
    cj, ci = _top_k_sparse(Rs.T.tocsr(), kr)
    keys = np.intersect1d(ri.astype(np.int64) * n + rj, ci.astype(np.int64) * n + cj)
    return keys // n, keys % n


@dataclass(frozen=True)
class _Pairs:
    rows: np.ndarray
    cols: np.ndarray
    urows: np.ndarray
    rinv: np.ndarray
    ucols: np.ndarray
    cinv: np.ndarray

    @classmethod
    def of(cls, rows: np.ndarray, cols: np.ndarray) -> "_Pairs":
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        urows, rinv = np.unique(rows, return_inverse=True)
        ucols, cinv = np.unique(cols, return_inverse=True)
        return cls(rows, cols, urows, rinv, ucols, cinv)


def _kth_distance(tree: cKDTree, points: np.ndarray, k: int, near: np.ndarray | None = None) -> np.ndarray:
    """Distance from each point to its k-th nearest point of ``tree``.

    Above :data:`KDTREE_MAX_K` the distances are computed in full (:func:`_kth_distance_dense`); ``near``, when
    given, is an (m, k) index array of k distinct points per query point that bounds the search and is replaced by
    the k nearest found (the result does not depend on it)."""
    if k <= KDTREE_MAX_K:
        return tree.query(points, k=[k])[0][:, 0]
    if near is None:
        near = np.tile(np.arange(k, dtype=np.int64), (points.shape[0], 1))
    return _kth_distance_dense(np.ascontiguousarray(points, dtype=np.float64), np.ascontiguousarray(tree.data.T), k,
                               near)


@numba.njit(cache=True, nogil=True)
def _kth_distance_dense(points: np.ndarray, data_t: np.ndarray, k: int,
                        near: np.ndarray) -> np.ndarray:  # pragma: no cover - jit
    """For each point, the k-th smallest Euclidean distance to the columns of ``data_t`` (d × n): the squared
    distances to all of them (summed over the coordinates in order, as scipy's ``cdist``, so the value is the same
    to the bit), then a selection among those no farther than the farthest of the k points in ``near[i]``, which
    are at least k and so hold the k-th. ``near[i]`` is then set to k points at distance ≤ the k-th.

    Written by hand because the grid search asks for this at 13 nearby scalings ξ of the same points, and the
    previous scaling's k nearest bound the next one's search to a few times k candidates: a dense ``cdist`` and
    ``np.partition`` of every m×n distance cost more than twice as much. ``nogil`` so the (η1, η2) points of the
    search run in parallel."""
    m, d = points.shape
    n = data_t.shape[1]
    out = np.empty(m)
    dist = np.empty(n)
    cand = np.empty(n)
    cidx = np.empty(n, dtype=np.int64)
    for i in range(m):
        dist[:] = 0.0
        for q in range(d):
            p = points[i, q]
            for j in range(n):
                t = p - data_t[q, j]
                dist[j] += t * t
        bound = dist[near[i, 0]]
        for r in range(1, k):
            if dist[near[i, r]] > bound:
                bound = dist[near[i, r]]
        c = 0
        for j in range(n):  # without a branch: write every value, advance past the kept ones
            cand[c] = dist[j]
            cidx[c] = j
            c += dist[j] <= bound
        kth = np.partition(cand[:c], k - 1)[k - 1]
        out[i] = np.sqrt(kth)
        r = 0
        for e in range(c):
            if cand[e] < kth:
                near[i, r] = cidx[e]
                r += 1
        for e in range(c):
            if r == k:
                break
            if cand[e] == kth:
                near[i, r] = cidx[e]
                r += 1
    return out


class _PairTest:
    """Γ of the embeddings (Z_x, ξ·Z_y) of one Z_x, Z_y for any ξ: the KD-trees on Z_x and Z_y and the rows of the
    pairs of K(R) are gathered once."""

    def __init__(self, pairs: _Pairs, Zx: np.ndarray, Zy: np.ndarray, k_r: int, k_c: int,
                 near: tuple[np.ndarray | None, np.ndarray | None] | None = None):
        self.pairs, self.k_r, self.k_c = pairs, k_r, k_c
        self.check_rows = k_c < Zy.shape[0]
        self.check_cols = k_r < Zx.shape[0]
        if self.check_rows or self.check_cols:
            self.A, self.B = Zx[pairs.rows], Zy[pairs.cols]
        else:  # whole neighbourhoods (k_r = m, k_c = n) keep every pair: Γ ≡ 0 and no pair distance is needed
            self.A = self.B = np.empty((0, Zx.shape[1]))
        self.row_points, self.col_points = Zx[pairs.urows], Zy[pairs.ucols]
        self.tree_x = cKDTree(Zx) if self.check_cols else None
        self.tree_y = cKDTree(Zy) if self.check_rows else None
        self.near_y, self.near_x = near if near is not None else self.search_bounds(pairs, k_r, k_c, Zx.shape[0],
                                                                                   Zy.shape[0])

    @staticmethod
    def search_bounds(pairs: _Pairs, k_r: int, k_c: int, m: int,
                      n: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The ``near`` arrays of :func:`_kth_distance` for the rows' and the columns' k-th distances, where it
        takes them: one per test, or one shared by the tests of nearby embeddings so each starts from the last."""
        near_y = np.tile(np.arange(k_c, dtype=np.int64), (pairs.urows.size, 1)) \
            if KDTREE_MAX_K < k_c < n else None
        near_x = np.tile(np.arange(k_r, dtype=np.int64), (pairs.ucols.size, 1)) \
            if KDTREE_MAX_K < k_r < m else None
        return near_y, near_x

    def lost(self, xi: float = 1.0) -> int:
        if self.A.shape[0] == 0:
            return 0
        diff = self.A - xi * self.B
        d = np.sqrt(np.einsum("pq,pq->p", diff, diff))
        ok = np.ones(d.size, dtype=bool)
        if self.check_rows:
            thr = xi * _kth_distance(self.tree_y, self.row_points / xi, self.k_c, self.near_y)
            ok &= d <= thr[self.pairs.rinv] * (1.0 + TIE_RTOL)
        if self.check_cols:
            thr = _kth_distance(self.tree_x, xi * self.col_points, self.k_r, self.near_x)
            ok &= d <= thr[self.pairs.cinv] * (1.0 + TIE_RTOL)
        return int(d.size - np.count_nonzero(ok))


def gamma_objective(R_or_pairs: Any, Zx: np.ndarray, Zy: np.ndarray, k_r: int | str = 5,
                    k_c: int | str = 5) -> int:
    """Γ(R, Q) = 1ᵀ(K(R) − K(Q) ⊙ K(R))1 (co-embedding paper Eq. 43): the number of mutual k-nearest row–column
    pairs of the relation that are not mutual nearest pairs in the co-embedding (Z_x, Z_y), Q being the Euclidean
    row–column distances.

    ``R_or_pairs`` is the relation or its K(R) as ``(rows, cols)`` from :func:`mutual_knn_pairs`. A pair (i, j)
    is kept when j is among the k_c columns nearest to row i AND i among the k_r rows nearest to column j. Equal
    distances: every point whose distance is within a relative :data:`TIE_RTOL` of the k-th smallest distance
    counts as a neighbour. Computed with KD-tree queries for the k-th neighbour distances of the rows and columns
    in K(R) only, never the m×n distances. Γ is invariant to a global scale, rotation or translation of both sets,
    and Γ ≡ 0 at k_r = m, k_c = n."""
    Zx = np.asarray(Zx, dtype=np.float64)
    Zy = np.asarray(Zy, dtype=np.float64)
    if Zx.ndim != 2 or Zy.ndim != 2 or Zx.shape[1] != Zy.shape[1]:
        raise UserError(f"Zx and Zy must be 2-D with the same number of columns, got {Zx.shape} and {Zy.shape}")
    m, n = Zx.shape[0], Zy.shape[0]
    if isinstance(R_or_pairs, tuple) and len(R_or_pairs) == 2:
        rows, cols = R_or_pairs
    else:
        if tuple(R_or_pairs.shape) != (m, n):
            raise UserError(f"a {R_or_pairs.shape[0]}×{R_or_pairs.shape[1]} relation does not match embeddings of "
                             f"{m} rows and {n} columns")
        rows, cols = mutual_knn_pairs(R_or_pairs, k_r, k_c)
    kr, kc = neighbourhood_size(k_r, m), neighbourhood_size(k_c, n)
    return _PairTest(_Pairs.of(rows, cols), Zx, Zy, kr, kc).lost()


@dataclass(frozen=True)
class GridSearchResult:
    """The best model of :func:`grid_search` (the first in grid order among equal Γ), its Γ, and the whole
    ``table`` (structured array with fields eta1, eta2, xi, gamma, Gamma, in grid order)."""

    eta1: float
    eta2: float
    xi: float
    gamma: float
    objective: int
    table: np.ndarray

    def as_array(self) -> np.ndarray:
        """The table as an (N, 5) float array with columns eta1, eta2, xi, gamma, Gamma."""
        return np.column_stack([self.table[f].astype(np.float64) for f in ("eta1", "eta2", "xi", "gamma", "Gamma")])


def _eta_point(R: sp.csr_matrix, eta1: float, eta2: float, dim: int, xis: np.ndarray, gammas: np.ndarray,
               pairs: _Pairs, k_r: int, k_c: int, solver: str, random_state: int) -> tuple[np.ndarray, int]:
    svd = coembedding_svd(R, eta1, eta2, dim + 1, solver=solver, random_state=random_state)
    Zx0, Zy0, lambdas, n_unit = _base_model(svd, dim)
    out = np.empty((xis.size, gammas.size), dtype=np.int64)
    near = _PairTest.search_bounds(pairs, k_r, k_c, Zx0.shape[0], Zy0.shape[0])
    for b, gamma in enumerate(gammas):
        f = _axis_factors(lambdas, gamma)
        test = _PairTest(pairs, Zx0 * f, Zy0 * f, k_r, k_c, near)
        # ξ up for one γ and down for the next: each test starts its k-th distance searches from the last ones
        for a in range(xis.size) if b % 2 == 0 else range(xis.size - 1, -1, -1):
            out[a, b] = test.lost(float(xis[a]))
    return out, n_unit


def _grid_values(values: Sequence[float], name: str, low: float, high: float, low_open: bool) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64).ravel()
    bad = ~np.isfinite(arr) | (arr > high) | ((arr <= low) if low_open else (arr < low))
    if arr.size == 0 or np.any(bad):
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise UserError(f"the grid of {name} must be a non-empty list of numbers in {interval}, got {arr.tolist()}")
    return arr


def grid_search(R: Any, dim: int, etas1: Sequence[float], etas2: Sequence[float], xis: Sequence[float],
                gammas: Sequence[float], k_r: int | str = 5, k_c: int | str = 5, n_threads: int = 1,
                solver: str = "auto", random_state: int = 0) -> GridSearchResult:
    """Minimise Γ (co-embedding paper Eq. 43) over the grid etas1 × etas2 × xis × gammas of the reduced model
    (Eqs. 41-42), a deterministic stand-in for the paper's genetic search over η1, η2 ∈ [0, 10], ξ ∈ (0, 3],
    γ ∈ [0, 3] (Sec. 3.4, Table 1).

    One SVD per (η1, η2); every (γ, ξ) is a rescaling of it (Z_x depends on γ only, Z_y = ξ·Z_y(γ, ξ=1)), so the
    two KD-trees are built once per γ and the queries are rescaled by ξ. The (η1, η2) points run on ``n_threads``
    threads, with the BLAS libraries held to one thread meanwhile (no oversubscription, and the same round-off for
    every ``n_threads``): the result does not depend on it. Grid order is lexicographic in (η1, η2, ξ, γ); among equal Γ the
    first model in that order wins."""
    if isinstance(n_threads, (bool, np.bool_)) or not isinstance(n_threads, Integral) or n_threads < 1:
        raise UserError(f"n_threads must be a positive integer, got {n_threads!r}")
    e1 = _grid_values(etas1, "eta1", 0.0, 10.0, False)
    e2 = _grid_values(etas2, "eta2", 0.0, 10.0, False)
    xs = _grid_values(xis, "xi", 0.0, 3.0, True)
    gs = _grid_values(gammas, "gamma", 0.0, 3.0, False)
    R, _, _ = relation_margins(R)
    m, n = R.shape
    kr, kc = neighbourhood_size(k_r, m), neighbourhood_size(k_c, n)
    pairs = _Pairs.of(*mutual_knn_pairs(R, kr, kc))
    etas = [(a, b) for a in e1 for b in e2]
    results: list[Any] = [None] * len(etas)
    with threadpool_limits(limits=1), ThreadPoolExecutor(max_workers=int(n_threads)) as pool, \
            Progress("co-embedding grid search over (eta1, eta2)", len(etas)) as progress:
        futures = {pool.submit(_eta_point, R, a, b, dim, xs, gs, pairs, kr, kc, solver, random_state): i
                   for i, (a, b) in enumerate(etas)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            progress.tick()
    if any(n_unit for _, n_unit in results):
        warnings.warn("singular values beyond the first equal 1: the relation is disconnected and the leading "
                      "components separate its blocks", stacklevel=2)
    scores = np.stack([r for r, _ in results])  # (n_eta, n_xi, n_gamma)
    n_eta = len(etas)
    table = np.zeros(n_eta * xs.size * gs.size, dtype=[("eta1", "f8"), ("eta2", "f8"), ("xi", "f8"),
                                                        ("gamma", "f8"), ("Gamma", "i8")])
    table["eta1"] = np.repeat([a for a, _ in etas], xs.size * gs.size)
    table["eta2"] = np.repeat([b for _, b in etas], xs.size * gs.size)
    table["xi"] = np.tile(np.repeat(xs, gs.size), n_eta)
    table["gamma"] = np.tile(gs, n_eta * xs.size)
    table["Gamma"] = scores.ravel()
    best = int(np.argmin(table["Gamma"]))
    row = table[best]
    return GridSearchResult(float(row["eta1"]), float(row["eta2"]), float(row["xi"]), float(row["gamma"]),
                            int(row["Gamma"]), table)
