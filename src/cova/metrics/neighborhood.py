"""Neighbourhood primitives and the trustworthiness / continuity scores.

Everything here works in row blocks: a block of ``b`` query rows against all ``n`` reference rows, with
``b * n`` bounded (:data:`BLOCK_ENTRIES`), so memory is O(block * n) and never O(n^2).

Conventions shared by every metric of :mod:`cova.metrics` (COVA App. G leaves them open; ``docs/papers.md``):

* distances are Euclidean; neighbours are ranked by squared distance, which gives the same order;
* ties are broken by the lower sample index, i.e. the order is a stable sort on ``(distance, index)``;
* a sample is never its own neighbour (a duplicate of it is an ordinary neighbour at distance 0);
* low-dimensional kNN (at most :data:`KDTREE_MAX_DIM` columns) uses a KD-tree plus an exact tie repair;
* for data with at most :data:`EXACT_MAX_DIM` columns squared distances are computed exactly as
  ``sum_j (a_j - b_j)^2`` (so duplicated points are exact ties); above that they use the BLAS expansion
  ``|a|^2 + |b|^2 - 2 a.b`` (clipped at 0), whose rounding can split exact ties.

Speed: trustworthiness / continuity / brute kNN use one fused numba kernel (:func:`_rows_kernel`) that
builds one distance row per thread (from a BLAS Gram block of :data:`GEMM_BLOCK_ENTRIES` entries computed ahead
in helper threads, or by exact differences) and consumes it at once. Target ranks are integer counts in one pass over the row, never sorts: a monotone
histogram up to the farthest target plus exact comparisons in the targets' buckets (:func:`_rank_begin`); for
2-D points only the grid cells within the farthest target are visited (:func:`_ranks_grid_kernel`).
:func:`trustworthiness_continuity` builds each X row once for both scores. Same distances and tie rule as
above, so the same values as the plain counts.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from scipy.spatial import cKDTree
from threadpoolctl import threadpool_limits

from ..affinity.distances import SMALL_WORK, squared_distances
from ..errors import UserError

__all__ = ["trustworthiness", "continuity", "trustworthiness_continuity", "trustworthiness_continuity_per_row",
           "knn_indices", "target_ranks"]

#: Upper bound on the number of entries of one distance block (``rows * n``): 2^21 float64 = 16 MB.
BLOCK_ENTRIES = 1 << 21
#: Inputs with at most this many columns get exact (difference-based) squared distances.
EXACT_MAX_DIM = 32
#: Inputs with at most this many columns use a KD-tree for k-nearest-neighbour search.
KDTREE_MAX_DIM = 8


# --------------------------------------------------------------------------------------------------------
# validation helpers (shared with cohort.py)
# --------------------------------------------------------------------------------------------------------

def _as_matrix(name: str, A: object) -> np.ndarray:
    """``A`` as a finite 2-D float64 array, or a ValueError naming ``name``."""
    arr = np.asarray(A)
    if arr.ndim != 2:
        raise UserError(f"{name} must be a 2-D array (samples x features); got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise UserError(f"{name} must be non-empty; got shape {arr.shape}")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise UserError(f"{name} must be numeric; got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise UserError(f"{name} contains NaN or infinite values")
    return arr


def _same_rows(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    if a.shape[0] != b.shape[0]:
        raise UserError(
            f"{name_b} has {b.shape[0]} rows but {name_a} has {a.shape[0]}; both must describe the same samples"
        )


def _as_rows(rows: object, n: int) -> np.ndarray:
    """``rows`` as distinct int64 sample indices in [0, n), or a ValueError."""
    r = np.asarray(rows)
    if r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer):
        raise UserError(f"rows must be a non-empty 1-D array of sample indices; got shape {r.shape}, dtype {r.dtype}")
    r = r.astype(np.int64)
    if r.min() < 0 or r.max() >= n or np.unique(r).size != r.size:
        raise UserError(f"rows must be distinct sample indices in [0, {n})")
    return r


def _block_rows(n_cols: int) -> int:
    """Rows per block so that one ``rows x n_cols`` block has at most :data:`BLOCK_ENTRIES` entries."""
    return max(1, min(4096, BLOCK_ENTRIES // max(1, n_cols)))


# --------------------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------------------

def _sqdist_exact_py(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - jit
    """out[r, m] = sum_j (A[r, j] - B[m, j])^2, summed in the order j = 0, 1, ... (as sklearn's trees).
    Rows in parallel; every entry is computed by the same sequential sum, so the result is thread-independent."""
    b, d = A.shape
    n = B.shape[0]
    for r in numba.prange(b):
        for m in range(n):
            acc = 0.0
            for j in range(d):
                t = A[r, j] - B[m, j]
                acc += t * t
            out[r, m] = acc


# parallel and serial builds: on a shared, oversubscribed machine a parallel region costs about a time slice, so
# small blocks (< SMALL_WORK inner operations) run serially (same arithmetic, same result)
_sqdist_exact_par = numba.njit(cache=True, nogil=True, parallel=True)(_sqdist_exact_py)
_sqdist_exact_ser = numba.njit(cache=True, nogil=True)(_sqdist_exact_py)


def _sqdist_exact_kernel(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    (_sqdist_exact_par if out.size * A.shape[1] >= SMALL_WORK else _sqdist_exact_ser)(A, B, out)


@numba.njit(cache=True, nogil=True, inline="always")
def _insert_sorted(bd: np.ndarray, bi: np.ndarray, p: int, v: float, m: int) -> None:  # pragma: no cover - jit
    """Insert (v, m) into the sorted prefix bd[:p+1] from position p down; strict shifts keep equal values in
    arrival order."""
    while p > 0 and bd[p - 1] > v:
        bd[p] = bd[p - 1]
        bi[p] = bi[p - 1]
        p -= 1
    bd[p] = v
    bi[p] = m


#: Elements per chunk of the row scans: a vectorised count decides whether a chunk needs the scalar loop.
CHUNK = 16


@numba.njit(cache=True, nogil=True, inline="always")
def _knn_row(row, s, bd, bi, outr):  # pragma: no cover - jit
    """outr = the len(outr) smallest entries of ``row`` (column s skipped), in (value, column) order.

    Columns arrive in increasing order and the shifts are strict, so among equal values the earlier (lower)
    column stays first, and a later equal value never displaces a kept one."""
    k = outr.shape[0]
    n = row.shape[0]
    cnt = 0
    m = 0
    while cnt < k:
        if m != s:
            _insert_sorted(bd, bi, cnt, row[m], m)
            cnt += 1
        m += 1
    worst = bd[k - 1]
    while m < n:
        e = min(n, m + CHUNK)
        c = 0
        for mm in range(m, e):  # branch-free count, vectorised: most chunks hold no closer element
            c += row[mm] < worst
        if c > 0:
            for mm in range(m, e):
                v = row[mm]
                if v < worst and mm != s:
                    _insert_sorted(bd, bi, k - 1, v, mm)
                    worst = bd[k - 1]
        m = e
    for q in range(k):
        outr[q] = bi[q]


def _n_buckets(n: int) -> int:
    """Histogram buckets of :func:`_rank_begin` for rows of length ``n`` (about 16 elements per bucket)."""
    return int(min(4096, max(8, n // 16)))


@numba.njit(cache=True, nogil=True, inline="always")
def _rank_begin(tv, Tr, th, tt, tq, tb, ex, first, hist):  # pragma: no cover - jit
    """Start a one-pass rank count of the targets Tr (values tv) over a row; returns (inv, lim).

    Why a histogram: with k targets spread through the row (a poor embedding), counting
    #{m : row[m] < row[t]} target by target costs k passes over the row. Instead the targets are sorted
    by (value, column) into th / tt (tq: their positions in Tr); every element gets the bucket
    ``floor(min(value * B / vmax, B + 1))`` (vmax = the farthest target), a monotone map, so an element in
    a lower bucket than a target precedes it and one in a higher bucket follows it; only elements sharing a
    target's bucket are compared exactly (value, then column) (:func:`_rank_elements`).
    :func:`_rank_end` turns the counts into ranks. Counts are integers: the result equals the plain count,
    whatever B. Buffers: th/tt/tq/tb/ex of length k, first (B + 2, all -1 on entry; :func:`_rank_end`
    restores that) and hist (B + 2). Returns (B / vmax, B + 1)."""
    k = Tr.shape[0]
    nb = hist.shape[0] - 2
    for q in range(k):  # insertion sort of the targets on (value, column)
        t = Tr[q]
        v = tv[q]
        p = q
        while p > 0 and (th[p - 1] > v or (th[p - 1] == v and tt[p - 1] > t)):
            th[p] = th[p - 1]
            tt[p] = tt[p - 1]
            tq[p] = tq[p - 1]
            p -= 1
        th[p] = v
        tt[p] = t
        tq[p] = q
    vmax = th[k - 1]
    inv = nb / vmax if vmax > 0.0 else 0.0
    if not inv < np.inf:  # vmax subnormal: every element in bucket 0, compared exactly
        inv = 0.0
    for p in range(k):
        tb[p] = int(th[p] * inv)  # <= nb: th[p] <= vmax
        ex[p] = 0
    for p in range(k - 1, -1, -1):
        first[tb[p]] = p
    for b in range(nb + 2):
        hist[b] = 0
    return inv, nb + 1.0


@numba.njit(cache=True, nogil=True, inline="always")
def _rank_end(vs, s, outr, th, tt, tq, tb, ex, first, hist):  # pragma: no cover - jit
    """outr[q] = 1-based rank of target q: 1 + #elements in lower buckets + #exact precedents in its bucket,
    minus the row's own column s (value vs) if it was counted. Resets ``first``."""
    k = tb.shape[0]
    acc = 0
    b = 0
    for p in range(k):
        while b < tb[p]:
            acc += hist[b]
            b += 1
        c = acc + ex[p]
        if vs < th[p] or (vs == th[p] and s < tt[p]):
            c -= 1
        outr[tq[p]] = c + 1
    for p in range(k):
        first[tb[p]] = -1


@numba.njit(cache=True, nogil=True)
def _rank_elements(vals, cols, nv, inv, lim, th, tt, tb, ex, first, hist):  # pragma: no cover - jit
    """Count the elements (vals[i], column cols[i] or i when cols is empty), i < nv, into the buckets set
    up by :func:`_rank_begin`: branch-free bucket (elements beyond the farthest target go to the overflow
    bucket B + 1, never summed), exact (value, column) comparisons in the targets' buckets. Written as one
    loop: a helper call per element would cost reference counting per call."""
    k = tb.shape[0]
    ident = cols.shape[0] == 0
    for i in range(nv):
        v = vals[i]
        b = int(min(v * inv, lim))
        hist[b] += 1
        p = first[b]
        if p >= 0:
            m = i if ident else cols[i]
            while p < k and tb[p] == b:
                if v < th[p] or (v == th[p] and m < tt[p]):
                    ex[p] += 1
                p += 1


_NO_COLS = np.empty(0, dtype=np.int64)


@numba.njit(cache=True, nogil=True, inline="always")
def _rank_row(row, s, Tr, outr, tv, th, tt, tq, tb, ex, first, hist):  # pragma: no cover - jit
    """outr[q] = 1-based (value, column) rank of column Tr[q] in ``row``, column s excluded, in one pass
    (:func:`_rank_begin`, :func:`_rank_elements`, :func:`_rank_end`)."""
    for q in range(Tr.shape[0]):
        tv[q] = row[Tr[q]]
    inv, lim = _rank_begin(tv, Tr, th, tt, tq, tb, ex, first, hist)
    _rank_elements(row, _NO_COLS, row.shape[0], inv, lim, th, tt, tb, ex, first, hist)
    _rank_end(row[s], s, outr, th, tt, tq, tb, ex, first, hist)


@numba.njit(cache=True, nogil=True)
def _knn_block_kernel(D: np.ndarray, self_cols: np.ndarray, k: int) -> np.ndarray:  # pragma: no cover - jit
    """:func:`_knn_row` on every row of a distance block D (serial; used on small blocks by
    cova.metrics.retrieval); the large paths use :func:`_rows_kernel`."""
    b = D.shape[0]
    out = np.empty((b, k), dtype=np.int64)
    bd = np.empty(k, dtype=np.float64)
    bi = np.empty(k, dtype=np.int64)
    for r in range(b):
        _knn_row(D[r], self_cols[r], bd, bi, out[r])
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _rank_buffers(k, nb):  # pragma: no cover - jit
    """Per-thread buffers of :func:`_rank_row`: tv, th, tt, tq, tb, ex, first (all -1), hist."""
    return (np.empty(k, dtype=np.float64), np.empty(k, dtype=np.float64), np.empty(k, dtype=np.int64),
            np.empty(k, dtype=np.int64),
            np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64), np.full(nb + 2, -1, dtype=np.int32),
            np.empty(nb + 2, dtype=np.int32))


@numba.njit(cache=True, nogil=True)
def _target_ranks_kernel(D: np.ndarray, self_cols: np.ndarray, T: np.ndarray,
                         nb: int) -> np.ndarray:  # pragma: no cover - jit
    """1-based rank of column T[r, q] in row r of D under the (value, column) order, column self_cols[r]
    excluded: 1 + #{m != self : D[r, m] < D[r, t] or (D[r, m] == D[r, t] and m < t)} (:func:`_rank_row`).
    Serial; the large paths use :func:`_rows_kernel`."""
    b = D.shape[0]
    k = T.shape[1]
    out = np.empty((b, k), dtype=np.int64)
    tv, th, tt, tq, tb, ex, first, hist = _rank_buffers(k, nb)
    for r in range(b):
        _rank_row(D[r], self_cols[r], T[r], out[r], tv, th, tt, tq, tb, ex, first, hist)
    return out


# fused kernels: each thread builds one squared-distance row at a time in a private buffer (from a BLAS
# Gram block, or by exact differences) and consumes it at once, so no (b, n) distance block is materialised
# and the exact path needs no block at all. Row values are bit-identical to :func:`sqdist_block`'s.

@numba.njit(cache=True, nogil=True, inline="always")
def _fill_row(buf, rr, G, a_sq, b_sq, A, B, blas):  # pragma: no cover - jit
    """buf[m] = squared distance between row rr of the block and row m of B: from the Gram block
    (``max(0, (-2 G + |a|^2) + |b|^2)``, same operations as sqdist_block) when ``blas``, else exact."""
    n = buf.shape[0]
    if blas:
        ar = a_sq[rr]
        for m in range(n):
            v = G[rr, m] * -2.0
            v = v + ar
            v = v + b_sq[m]
            buf[m] = v if v > 0.0 else 0.0
    else:
        # B is passed transposed (d, n) on this path, so the loop over m is contiguous and vectorises;
        # buf[m] accumulates over j = 0, 1, ... from 0.0 exactly as _sqdist_exact_kernel's acc does
        d = A.shape[1]
        for m in range(n):
            buf[m] = 0.0
        for j in range(d):
            a = A[rr, j]
            for m in range(n):
                t = a - B[j, m]
                buf[m] += t * t


@numba.njit(cache=True, nogil=True, parallel=True)
def _rows_kernel(G, a_sq, b_sq, A, B, self_cols, k, T, nb):  # pragma: no cover - jit
    """Per row of a block, from one distance row (:func:`_fill_row`), built once: its ``k`` nearest
    (:func:`_knn_row`; skipped when k = 0) and the ranks of the targets T (:func:`_rank_row`; skipped when T
    has no columns). Rows in parallel, integer results, so thread-count independent. Returns (knn (b, k),
    ranks (b, T.shape[1])). :func:`trustworthiness_continuity` asks for both from the X rows: the X
    neighbours (for continuity) and the X ranks of the Z neighbours (trustworthiness), so each X row is built
    once instead of once per score."""
    b = self_cols.shape[0]
    kt = T.shape[1]
    blas = A.shape[0] == 0
    n = B.shape[0] if blas else B.shape[1]
    knn = np.empty((b, k), dtype=np.int64)
    ranks = np.empty((b, kt), dtype=np.int64)
    for r in numba.prange(b):
        row = np.empty(n, dtype=np.float64)
        _fill_row(row, r, G, a_sq, b_sq, A, B, blas)
        if k > 0:
            _knn_row(row, self_cols[r], np.empty(k, dtype=np.float64), np.empty(k, dtype=np.int64), knn[r])
        if kt > 0:
            tv, th, tt, tq, tb, ex, first, hist = _rank_buffers(kt, nb)
            _rank_row(row, self_cols[r], T[r], ranks[r], tv, th, tt, tq, tb, ex, first, hist)
    return knn, ranks


#: Mean points per cell of the grid behind the 2-D ranks (:func:`_ranks_grid_kernel`).
GRID_PER_CELL = 8


def _grid_2d(A: np.ndarray):
    """A uniform grid over the 2-D points A for :func:`_ranks_grid_kernel`: (lo, w, cells per axis, start,
    points sorted by cell, their indices, per-cell bounding boxes). An axis whose extent is negligible
    next to its coordinates (< 1e-9 relative) gets one cell, so cell edges are never below rounding."""
    n = A.shape[0]
    g = max(1, int(np.sqrt(n / GRID_PER_CELL)))
    lo, hi = A.min(axis=0), A.max(axis=0)
    ext = hi - lo
    gs = np.where(ext > 1e-9 * np.maximum(np.abs(lo), np.abs(hi)), g, 1).astype(np.int64)
    w = np.where(gs > 1, ext / gs, 1.0)
    cxy = np.minimum(gs - 1, ((A - lo) / w).astype(np.int64))
    cell = cxy[:, 0] * gs[1] + cxy[:, 1]
    order = np.argsort(cell, kind="stable")
    start = np.searchsorted(cell[order], np.arange(gs[0] * gs[1] + 1))
    As = np.ascontiguousarray(A[order])
    bmin = np.full((gs[0] * gs[1], 2), np.inf)
    bmax = np.full((gs[0] * gs[1], 2), -np.inf)
    full = np.flatnonzero(start[:-1] < start[1:])
    bmin[full] = np.minimum.reduceat(As, start[full], axis=0)
    bmax[full] = np.maximum.reduceat(As, start[full], axis=0)
    return lo, w, gs, start, As, order, bmin, bmax


@numba.njit(cache=True, nogil=True, inline="always")
def _sq2(e0: float, e1: float) -> float:  # pragma: no cover - jit
    """(0 + e0^2) + e1^2: the operations of :func:`_fill_row`'s exact path for two coordinates (scalars only,
    so a call costs nothing)."""
    v = 0.0
    v += e0 * e0
    v += e1 * e1
    return v


@numba.njit(cache=True, nogil=True, parallel=True)
def _ranks_grid_kernel(A, Q, T, nb, lo, w, gs, start, As, order, bmin, bmax):  # pragma: no cover - jit
    """:func:`target_ranks` for 2-D points (continuity of 2-D embeddings), query rows Q: only points within the
    farthest target can precede a target, so each row visits the grid cells (:func:`_grid_2d`) within that
    radius (plus one cell) whose bounding box is not farther (a lower bound computed with the same
    operations as the distances, so it never exceeds a member's distance), and counts their points with
    :func:`_rank_elements`. Distances are the exact ``(0 + d0^2) + d1^2`` of :func:`_fill_row`, so the
    ranks equal the full-row ones; a row costs O(points within the farthest target), not O(n)."""
    n = A.shape[0]
    k = T.shape[1]
    out = np.empty((Q.shape[0], k), dtype=np.int64)
    for ii in numba.prange(Q.shape[0]):
        i = Q[ii]
        a0 = A[i, 0]
        a1 = A[i, 1]
        tv, th, tt, tq, tb, ex, first, hist = _rank_buffers(k, nb)
        vals = np.empty(n, dtype=np.float64)
        cols = np.empty(n, dtype=np.int64)
        for q in range(k):
            tv[q] = _sq2(a0 - A[T[ii, q], 0], a1 - A[T[ii, q], 1])
        inv, lim = _rank_begin(tv, T[ii], th, tt, tq, tb, ex, first, hist)
        vmax = th[k - 1]
        rad = np.sqrt(vmax) * (1.0 + 1e-6)
        lo0 = max(-1.0, min(float(gs[0]), (a0 - rad - lo[0]) / w[0]))
        hi0 = max(-1.0, min(float(gs[0]), (a0 + rad - lo[0]) / w[0]))
        lo1 = max(-1.0, min(float(gs[1]), (a1 - rad - lo[1]) / w[1]))
        hi1 = max(-1.0, min(float(gs[1]), (a1 + rad - lo[1]) / w[1]))
        nv = 0
        for c0 in range(max(0, int(lo0) - 1), min(gs[0] - 1, int(hi0) + 1) + 1):
            for c1 in range(max(0, int(lo1) - 1), min(gs[1] - 1, int(hi1) + 1) + 1):
                c = c0 * gs[1] + c1
                if start[c] == start[c + 1]:
                    continue
                d0 = a0 - bmax[c, 0] if a0 > bmax[c, 0] else (a0 - bmin[c, 0] if a0 < bmin[c, 0] else 0.0)
                d1 = a1 - bmax[c, 1] if a1 > bmax[c, 1] else (a1 - bmin[c, 1] if a1 < bmin[c, 1] else 0.0)
                if _sq2(d0, d1) > vmax:
                    continue
                for idx in range(start[c], start[c + 1]):
                    vals[nv] = _sq2(a0 - As[idx, 0], a1 - As[idx, 1])
                    cols[nv] = order[idx]
                    nv += 1
        _rank_elements(vals, cols, nv, inv, lim, th, tt, tb, ex, first, hist)
        _rank_end(0.0, i, out[ii], th, tt, tq, tb, ex, first, hist)
    return out


#: Overlap the GEMM of the next block with the kernel on the current one (see :func:`_fused_blocks`).
PIPELINE_GEMM = True
#: Entries of one BLAS Gram block in the fused paths (64 MB): taller blocks keep the GEMM compute-bound.
GEMM_BLOCK_ENTRIES = 1 << 23


def _fused_step(n: int, d: int) -> int:
    """Rows per block of :func:`_fused_blocks` for ``n`` reference rows of dimension ``d``."""
    return 2048 if d <= EXACT_MAX_DIM else max(1, min(4096, GEMM_BLOCK_ENTRIES // max(1, n)))


def _fused_blocks(A: np.ndarray, rows: np.ndarray | None = None, step: int | None = None):
    """Row blocks for the fused kernels: yields ``(start, stop, rows, args)`` with ``args`` the leading
    ``(G, a_sq, b_sq, A_rows, B)`` arguments: an empty ``A_rows`` selects the BLAS path (``B`` = A, n x d),
    otherwise the exact path (``B`` = A transposed, d x n)."""
    n, d = A.shape
    step = _fused_step(n, d) if step is None else step
    rows = np.arange(n, dtype=np.int64) if rows is None else rows.astype(np.int64)
    empty2, empty1 = np.empty((0, 0)), np.empty(0)
    if d <= EXACT_MAX_DIM:
        AT = np.ascontiguousarray(A.T)  # (d, n): _fill_row's exact path reads B transposed
        for s in range(0, rows.size, step):
            r = rows[s:s + step]
            yield s, s + r.size, r, (empty2, empty1, empty1, np.ascontiguousarray(A[r]), AT)
        return
    sq = np.einsum("ij,ij->i", A, A)
    empty_a = np.empty((0, d))

    def gram(s: int):
        Ar = A[rows[s:s + step]]
        return Ar @ A.T, np.einsum("ij,ij->i", Ar, Ar)

    if not PIPELINE_GEMM:
        for s in range(0, rows.size, step):
            G, a_sq = gram(s)
            yield s, min(rows.size, s + step), rows[s:s + step], (G, a_sq, sq, empty_a, A)
        return
    # the next blocks' GEMMs run (single-threaded BLAS, one block per helper thread, as many helpers as numba
    # threads) while the numba kernel consumes the current one: no idle or spinning BLAS threads competing with
    # numba's (BLAS may round a dot product differently with another thread split, as sqdist_block always could;
    # the benchmark and test values were unchanged)
    workers = max(1, numba.get_num_threads())
    starts = list(range(0, rows.size, step))
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max_workers=workers) as ex:
        futs = [ex.submit(gram, s) for s in starts[:workers]]
        for i, s in enumerate(starts):
            G, a_sq = futs[i].result()
            futs[i] = None  # drop the reference: at most workers + 1 blocks alive
            if i + workers < len(starts):
                futs.append(ex.submit(gram, starts[i + workers]))
            yield s, min(rows.size, s + step), rows[s:s + step], (G, a_sq, sq, empty_a, A)


# --------------------------------------------------------------------------------------------------------
# distance blocks, kNN and ranks
# --------------------------------------------------------------------------------------------------------

def sqdist_block(A: np.ndarray, B: np.ndarray, B_sqnorm: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``A`` (b, d) and ``B`` (n, d) as a (b, n) array.

    Exact differences for ``d <= EXACT_MAX_DIM``; BLAS expansion ``|a|^2 + |b|^2 - 2 a.b`` clipped at 0
    otherwise (:func:`cova.affinity.distances.squared_distances`; ``B_sqnorm``, the squared row norms of ``B``,
    may be passed to avoid recomputing them).
    """
    d = A.shape[1]
    if d <= EXACT_MAX_DIM:
        out = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
        _sqdist_exact_kernel(np.ascontiguousarray(A), np.ascontiguousarray(B), out)
        return out
    return squared_distances(A, B, B_sqnorm=B_sqnorm)


class _Blocks:
    """Row blocks of ``A`` (all rows, or ``rows``) against all of ``A``.

    Yields ``(start, stop, row_indices, squared_distance_block)`` with start/stop positions in ``rows``."""

    def __init__(self, A: np.ndarray, rows: np.ndarray | None = None):
        self.A = A
        self.rows = np.arange(A.shape[0]) if rows is None else rows
        d = A.shape[1]
        self.sq = None if d <= EXACT_MAX_DIM else np.einsum("ij,ij->i", A, A)

    def __iter__(self):
        step = _block_rows(self.A.shape[0])
        for s in range(0, self.rows.size, step):
            r = self.rows[s:s + step]
            yield s, s + r.size, r, sqdist_block(self.A[r], self.A, B_sqnorm=self.sq)


def _knn_brute(A: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    out = np.empty((A.shape[0] if rows is None else rows.size, k), dtype=np.int64)
    for s, e, r, args in _fused_blocks(A, rows):
        G, a_sq, b_sq, Ar, B = args
        out[s:e] = _rows_kernel(G, a_sq, b_sq, Ar, B, r, k, np.empty((r.size, 0), dtype=np.int64), 8)[0]
    return out


def knn_indices(A: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Indices (n, k) of the ``k`` nearest other rows of ``A`` for every row, nearest first; with ``rows`` (sorted
    or not, no repeats) only for those query rows, (len(rows), k), their neighbours still searched among all n.

    Order is a stable sort on (squared Euclidean distance, index): ties go to the lower index; a row is
    never its own neighbour (a duplicate of it is an ordinary neighbour at distance 0). For
    ``A.shape[1] <= KDTREE_MAX_DIM`` a KD-tree proposes ``k + 2`` candidates per row, their distances are
    recomputed exactly and sorted on (distance, index); rows whose k-th distance ties the farthest
    candidate (so a tied point may be missing) are redone by brute force in row blocks. Otherwise brute
    force in row blocks. Memory O(n k + block).
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    n, d = A.shape
    if not 1 <= k <= n - 1:
        raise UserError(f"k must be in [1, n - 1] = [1, {n - 1}]; got {k}")
    if rows is not None:
        rows = np.asarray(rows, dtype=np.int64)
    if d > KDTREE_MAX_DIM:
        return _knn_brute(A, k, rows)
    Q = A if rows is None else A[rows]
    self_rows = np.arange(n) if rows is None else rows
    kq = min(n, k + 2)  # self (usually) + k + 1 others: the last one tells whether the k-th is sure
    cand = cKDTree(A).query(Q, k=kq, workers=1)[1]  # any exact search: the order is repaired below
    rd = np.zeros(cand.shape)
    for j in range(d):  # same summation order as _sqdist_exact_kernel
        t = A[cand, j] - Q[:, j, None]
        rd += t * t
    is_self = cand == self_rows[:, None]
    rd_other = np.where(is_self, np.inf, rd)
    order = np.lexsort((cand, rd_other), axis=-1)
    cand = np.take_along_axis(cand, order, axis=1)[:, :k]
    kth = np.take_along_axis(rd_other, order[:, k - 1:k], axis=1)[:, 0]
    # every point outside the candidate list is at least as far as the farthest candidate
    unsure = np.flatnonzero(kth >= rd.max(axis=1)) if kq < n else np.empty(0, dtype=np.int64)
    if unsure.size:
        cand[unsure] = _knn_brute(A, k, rows=self_rows[unsure])
    return cand


def target_ranks(A: np.ndarray, T: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """1-based rank of sample ``T[i, q]`` among the other samples ordered by distance to sample ``i`` in
    ``A``-space (stable on (distance, index); the sample itself excluded); with ``rows``, row i of T holds the
    targets of sample ``rows[i]`` (ranked among all n samples). Row blocks, memory O(block n); 2-D ``A``
    (embeddings) through a grid that visits only the points within each row's farthest target."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    T = np.ascontiguousarray(T, dtype=np.int64)
    Q = np.arange(A.shape[0], dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    if A.shape[1] == 2:
        return _ranks_grid_kernel(A, Q, T, _n_buckets(A.shape[0]), *_grid_2d(A))
    out = np.empty(T.shape, dtype=np.int64)
    for s, e, r, args in _fused_blocks(A, None if rows is None else Q):
        out[s:e] = _rows_kernel(*args, r, 0, T[s:e], _n_buckets(A.shape[0]))[1]
    return out


# --------------------------------------------------------------------------------------------------------
# trustworthiness and continuity
# --------------------------------------------------------------------------------------------------------

def _check_n_neighbors(n_neighbors: int, n: int) -> int:
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)):
        raise UserError(f"n_neighbors must be an integer; got {n_neighbors!r}")
    k = int(n_neighbors)
    if k < 1:
        raise UserError(f"n_neighbors must be >= 1; got {k}")
    if k >= n / 2:
        raise UserError(f"n_neighbors ({k}) should be less than n_samples / 2 ({n / 2})")
    return k


def _check_pair(X: object, Z: object, n_neighbors: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(X, Z, k) validated: finite 2-D arrays with the same rows, 1 <= k < n / 2."""
    X = _as_matrix("X", X)
    Z = _as_matrix("Z", Z)
    _same_rows("X", X, "Z", Z)
    return X, Z, _check_n_neighbors(n_neighbors, X.shape[0])


def _from_penalty(penalty: int, n: int, k: int) -> float:
    """``1 - 2 / (n k (2n - 3k - 1)) * penalty``, penalty = sum of max(0, rank - k) (an exact integer)."""
    return float(1.0 - float(int(penalty)) * (2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))))


def trustworthiness(X: np.ndarray, Z: np.ndarray, n_neighbors: int = 12) -> float:
    """Trustworthiness of embedding ``Z`` (l, k) of ``X`` (l, d) (Venna & Kaski 2001), Euclidean.

    ``T(k) = 1 - 2 / (n k (2n - 3k - 1)) * sum_i sum_{j in N_k^Z(i)} max(0, r_X(i, j) - k)``, where
    ``N_k^Z(i)`` are the k nearest neighbours of i in Z and ``r_X(i, j)`` is the 1-based rank of j among
    the neighbours of i in X. Same definition and validity range (``n_neighbors < n / 2``) as
    :func:`sklearn.manifold.trustworthiness`; identical to it whenever there are no distance ties (sklearn
    breaks ties by an unstable argsort, we by the lower index). Not part of the paper's Appendix G; a
    standard companion score. Row-blocked: memory O(block n), never n x n.
    """
    X, Z, k = _check_pair(X, Z, n_neighbors)
    return _from_penalty(np.maximum(target_ranks(X, knn_indices(Z, k)) - k, 0).sum(), X.shape[0], k)


def continuity(X: np.ndarray, Z: np.ndarray, n_neighbors: int = 12) -> float:
    """Continuity of embedding ``Z`` of ``X``: trustworthiness with the roles swapped,
    ``trustworthiness(Z, X, n_neighbors)`` (penalises true X-neighbours that are far in Z)."""
    X, Z, _ = _check_pair(X, Z, n_neighbors)  # errors name the arguments as the caller passed them
    return trustworthiness(Z, X, n_neighbors)


def trustworthiness_continuity(X: np.ndarray, Z: np.ndarray, n_neighbors: int = 12) -> tuple[float, float]:
    """``(trustworthiness(X, Z, k), continuity(X, Z, k))`` in one pass over the samples.

    Same definitions, tie rule and values as the two functions. Each X distance row is built once and gives
    both the X neighbours and the X ranks of the Z neighbours (:func:`_rows_kernel`), where the
    two functions build it once each: this halves the O(n^2 d) part when X is high-dimensional. Row-blocked:
    memory O(block n + n k), never n x n.
    """
    X, Z, k = _check_pair(X, Z, n_neighbors)
    n = X.shape[0]
    penalty_t, penalty_c = _penalties(X, Z, k, None)
    return _from_penalty(penalty_t.sum(), n, k), _from_penalty(penalty_c.sum(), n, k)


def trustworthiness_continuity_per_row(X: np.ndarray, Z: np.ndarray, n_neighbors: int,
                                       rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The per-row terms ``(t_i, c_i)`` of trustworthiness and continuity for the query samples ``rows``.

    Both scores are means over the samples: ``T(k) = (1/n) sum_i t_i`` with ``t_i = 1 - 2 / (k (2n - 3k - 1))
    sum_{j in N_k^Z(i)} max(0, r_X(i, j) - k)`` (:func:`trustworthiness`), and c_i the same with X and Z swapped. A
    query's neighbours N_k^Z(i) and N_k^X(i) and its ranks r_X(i, .), r_Z(i, .) are those among *all* n samples
    (the definition's), only the outer mean is restricted to the queries; :func:`cova.metrics.subsample.estimate`
    turns the terms into the estimated score and its confidence interval. Same kernels, distances and tie rule
    as :func:`trustworthiness_continuity` (whose value equals the mean of the terms over all rows, up to rounding).
    Cost O(q n d) for q queries instead of O(n² d)."""
    X, Z, k = _check_pair(X, Z, n_neighbors)
    n = X.shape[0]
    rows = _as_rows(rows, n)
    penalty_t, penalty_c = _penalties(X, Z, k, rows)
    scale = 2.0 / (k * (2.0 * n - 3.0 * k - 1.0))
    return 1.0 - penalty_t * scale, 1.0 - penalty_c * scale


def _penalties(X: np.ndarray, Z: np.ndarray, k: int, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per query row (all rows when ``rows`` is None) the integer penalties ``sum_j max(0, rank - k)`` of
    trustworthiness (Z neighbours ranked in X) and of continuity (X neighbours ranked in Z), neighbours and ranks
    among all n samples. Integers, so the exact scores (their sums) do not depend on the summation order."""
    nz = knn_indices(Z, k, rows)
    nx = np.empty_like(nz)
    penalty_t = np.empty(nz.shape[0], dtype=np.int64)
    for s, e, r, args in _fused_blocks(X, rows):
        nx[s:e], ranks = _rows_kernel(*args, r, k, nz[s:e], _n_buckets(X.shape[0]))
        penalty_t[s:e] = np.maximum(ranks - k, 0).sum(axis=1)
    penalty_c = np.maximum(target_ranks(Z, nx, rows) - k, 0).sum(axis=1)
    return penalty_t, penalty_c
