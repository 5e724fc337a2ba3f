"""Cohort scores of the COVA paper, Appendix G: S_s, S_c, S_c^(r) (Eq. G.1) and S_n (Eq. G.2).

All scores are fractions in [0, 1] (the paper prints percentages). Conventions (ours where App. G is
silent; ``docs/papers.md``, COVA, "Scores"):

* distances are Euclidean; every "nearest" is a stable sort on (distance, index), so ties go to the lower
  index (of the sample, the prototype or the cohort);
* labels are integers ``0 .. c-1``; ``c`` is the number of prototypes where prototypes are given, else
  ``labels.max() + 1``; cohorts without samples are ignored (dropped from both graphs of S_c^(r), left
  out of the minimum cohort size of S_n);
* no n x n array is ever formed: S_s uses a kNN search, S_c blocks of samples x prototypes, S_n row blocks
  of one cohort at a time.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from threadpoolctl import threadpool_limits

from ..affinity.graphs import knn_graph
from ..errors import UserError
from .neighborhood import (
    EXACT_MAX_DIM,
    _as_matrix,
    _as_rows,
    _block_rows,
    _same_rows,
    knn_indices,
    sqdist_block,
)

__all__ = ["s_s", "s_s_per_row", "s_c", "s_c_r", "s_n", "s_n_readings", "s_n_readings_per_row", "cohort_graph",
           "link_comparison"]


# --------------------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------------------

def _as_labels(labels: object, n: int, n_cohorts: int | None = None) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1:
        raise UserError(f"labels must be a 1-D array; got shape {y.shape}")
    if y.shape[0] != n:
        raise UserError(f"labels has {y.shape[0]} entries but the data have {n} rows")
    if y.dtype == bool or not np.issubdtype(y.dtype, np.number):
        raise UserError(f"labels must be integers; got dtype {y.dtype}")
    if not np.issubdtype(y.dtype, np.integer):
        if not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
            raise UserError("labels must be integer-valued")
    y = y.astype(np.int64)
    if y.size and y.min() < 0:
        raise UserError(f"labels must be >= 0; got {y.min()}")
    if n_cohorts is not None and y.size and y.max() >= n_cohorts:
        raise UserError(
            f"labels must be < the number of prototypes ({n_cohorts}); got label {y.max()}"
        )
    return y


def _as_prototypes(prototypes: object, Z: np.ndarray) -> np.ndarray:
    P = _as_matrix("prototypes", prototypes)
    if P.shape[1] != Z.shape[1]:
        raise UserError(
            f"prototypes has {P.shape[1]} columns but Z has {Z.shape[1]}; prototypes must live in the "
            "embedding space (c x k)"
        )
    return P


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise UserError(f"{name} must be an integer; got {value!r}")
    if int(value) < minimum:
        raise UserError(f"{name} must be >= {minimum}; got {value}")
    return int(value)


# --------------------------------------------------------------------------------------------------------
# S_s and S_c
# --------------------------------------------------------------------------------------------------------

def s_s(Z: np.ndarray, labels: np.ndarray) -> float:
    """Cohort separation S_s (Appendix G): leave-one-out 1-NN accuracy of the embedding.

    ``S_s = mean_i [y_{nn(i)} = y_i]`` with ``nn(i)`` the nearest *other* sample to ``z_i`` (ties to the lower
    index; a duplicate of ``z_i`` counts as its nearest neighbour). KD-tree / row-blocked kNN, no n x n array.
    Needs at least 2 samples.
    """
    return float(np.mean(_s_s_hits(Z, labels, None)))


def s_s_per_row(Z: np.ndarray, labels: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The per-row terms ``[y_{nn(i)} = y_i]`` (0.0 or 1.0) of S_s (:func:`s_s`, their mean over all samples) for the
    query samples ``rows``. A query is a sample whose nearest other sample is searched among *all* n samples, as
    the definition asks; only the outer mean is restricted to the queries (:func:`cova.metrics.subsample.estimate`).
    Cost O(q log n) (KD-tree) or O(q n) (brute force) for q queries."""
    return _s_s_hits(Z, labels, _as_rows(rows, np.shape(Z)[0])).astype(np.float64)


def _s_s_hits(Z: np.ndarray, labels: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    Z = _as_matrix("Z", Z)
    y = _as_labels(labels, Z.shape[0])
    if Z.shape[0] < 2:
        raise UserError("S_s needs at least 2 samples in Z")
    nn = knn_indices(Z, 1, rows)[:, 0]
    return y[nn] == (y if rows is None else y[rows])


def _nearest_rows(Z: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Index of the nearest row of P for every row of Z (ties to the lower index), in row blocks."""
    out = np.empty(Z.shape[0], dtype=np.int64)
    step = _block_rows(P.shape[0])
    for s in range(0, Z.shape[0], step):
        out[s:s + step] = np.argmin(sqdist_block(Z[s:s + step], P), axis=1)  # argmin: first minimum
    return out


def s_c(Z: np.ndarray, labels: np.ndarray, prototypes: np.ndarray) -> float:
    """Prototype positioning S_c (Appendix G): nearest-prototype accuracy.

    A 1-NN classifier whose training set is the ``c`` prototypes (row ``j`` of ``prototypes`` (c, k) has
    label ``j``) classifies every embedded sample: ``S_c = mean_i [argmin_j |z_i - p_j| = y_i]``, ties to the
    lower prototype index. Not invariant to a global scale or shift of Z against the prototypes. Exact at every
    size: a query (a sample) is compared with the c prototypes only, never with other samples, so S_c costs O(n c)
    and a subsample of queries would add sampling error and save nothing (docs/decisions.md, "Scores at scale").
    """
    Z = _as_matrix("Z", Z)
    P = _as_prototypes(prototypes, Z)
    y = _as_labels(labels, Z.shape[0], P.shape[0])
    return float(np.mean(_nearest_rows(Z, P) == y))


# --------------------------------------------------------------------------------------------------------
# S_c^(r), Eq. G.1
# --------------------------------------------------------------------------------------------------------

def _knn_graph(points: np.ndarray, kappa: int) -> np.ndarray:
    """Delta(points, kappa) of Eq. G.1: A_ij = 1 iff j is among the kappa nearest other rows of row i
    (stable on (distance, index)); returns the boolean A OR A^T (symmetric, zero diagonal). Small c only."""
    return knn_graph(sqdist_block(points, points), kappa)


def cohort_graph(points: np.ndarray, kappa: int = 2) -> np.ndarray:
    """The κ-nearest-neighbour graph Δ(points, κ) of Eq. G.1 between c points (cohort centres or prototypes):
    boolean (c, c), symmetric (A OR Aᵀ), zero diagonal, ties to the lower index."""
    points = _as_matrix("points", points)
    return _knn_graph(points, _check_int("kappa", kappa, 1))


def link_comparison(reference: np.ndarray, shown: np.ndarray) -> dict[str, list[tuple[int, int]]]:
    """Compare two symmetric boolean cohort graphs link by link (Table 2, Figs. 3, 9 of COVA): ``tp`` links in
    both, ``fp`` links only in ``shown`` (the visualisation), ``fn`` links only in ``reference``; each a sorted
    list of pairs (i, j) with i < j."""
    reference, shown = np.asarray(reference, dtype=bool), np.asarray(shown, dtype=bool)
    if reference.shape != shown.shape or reference.ndim != 2 or reference.shape[0] != reference.shape[1]:
        raise UserError(f"both graphs must be the same square shape, got {reference.shape} and {shown.shape}")
    iu = np.triu_indices(reference.shape[0], k=1)

    def pairs(mask: np.ndarray) -> list[tuple[int, int]]:
        return [(int(i), int(j)) for i, j, m in zip(*iu, mask[iu]) if m]

    return {"tp": pairs(reference & shown), "fp": pairs(shown & ~reference), "fn": pairs(reference & ~shown)}


def s_c_r(Z: np.ndarray, labels: np.ndarray, prototypes: np.ndarray, kappa: int = 2) -> float:
    """Relative cohort positioning S_c^(r), Eq. G.1.

    ``S_c^(r) = sum_ij (Delta_v o Delta_d)_ij / sum_ij (Delta_d)_ij`` where ``Delta_v`` is the kappa-NN graph
    (``A_ij = 1`` iff j is among the kappa nearest of i, ``Delta = A OR A^T``, zero diagonal) of the
    visualised cohort centres (mean of ``z_i`` over each cohort) and ``Delta_d`` the same graph of the
    prototypes (c, k). Ties to the lower cohort index. Cohorts with no samples are dropped from both graphs;
    if at most ``kappa + 1`` cohorts remain both graphs are complete and the score is 1.0. kappa = 2 in the
    paper ("two effective neighbours").
    """
    Z = _as_matrix("Z", Z)
    P = _as_prototypes(prototypes, Z)
    c = P.shape[0]
    y = _as_labels(labels, Z.shape[0], c)
    kappa = _check_int("kappa", kappa, 1)
    counts = np.bincount(y, minlength=c)
    present = np.flatnonzero(counts > 0)
    if present.size <= kappa + 1:
        return 1.0
    sums = np.zeros((c, Z.shape[1]))
    np.add.at(sums, y, Z)
    centres = sums[present] / counts[present, None]
    delta_v = _knn_graph(centres, kappa)
    delta_d = _knn_graph(P[present], kappa)
    return float(np.sum(delta_v & delta_d) / np.sum(delta_d))


# --------------------------------------------------------------------------------------------------------
# S_n, Eq. G.2
# --------------------------------------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _stable_ranks_row(d: np.ndarray, order: np.ndarray, ranks: np.ndarray) -> None:  # pragma: no cover - jit
    """ranks[m] = 0-based position of column m in the stable (value, column) order of row ``d``, given any
    ``order`` that sorts ``d`` by value: runs of equal values are re-ordered by column."""
    n = d.shape[0]
    p = 0
    while p < n:
        q = p + 1
        v = d[order[p]]
        while q < n and d[order[q]] == v:
            q += 1
        if q - p > 1:  # a tie: insertion-sort the run's columns (runs are short in practice)
            for a in range(p + 1, q):
                c = order[a]
                b = a
                while b > p and order[b - 1] > c:
                    order[b] = order[b - 1]
                    b -= 1
                order[b] = c
        for a in range(p, q):
            ranks[order[a]] = a
        p = q


@numba.njit(cache=True, nogil=True)
def _overlap_hist_kernel(DX: np.ndarray, oX: np.ndarray, DZ: np.ndarray, oZ: np.ndarray,
                         kbar: int, hist: np.ndarray) -> None:  # pragma: no cover - jit
    """hist[t] += #{(r, m) : max(rank_X(m), rank_Z(m)) == t} for t < kbar (Eq. G.2 rank trick)."""
    b, n = DX.shape
    rX = np.empty(n, dtype=np.int64)
    rZ = np.empty(n, dtype=np.int64)
    for r in range(b):
        _stable_ranks_row(DX[r], oX[r], rX)
        _stable_ranks_row(DZ[r], oZ[r], rZ)
        for m in range(n):
            t = max(rX[m], rZ[m])
            if t < kbar:
                hist[t] += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def _overlap_hist_par(DX: np.ndarray, oX: np.ndarray, DZ: np.ndarray, oZ: np.ndarray,
                      kbar: int, hist: np.ndarray) -> None:  # pragma: no cover - jit
    """:func:`_overlap_hist_kernel` with rows in parallel: hist[c, t] for the rows c, c + C, c + 2C, ... (C =
    hist.shape[0]); integer counts summed later, so the result does not depend on the thread count."""
    b, n = DX.shape
    n_chunks = hist.shape[0]
    for c in numba.prange(n_chunks):
        rX = np.empty(n, dtype=np.int64)
        rZ = np.empty(n, dtype=np.int64)
        for r in range(c, b, n_chunks):
            _stable_ranks_row(DX[r], oX[r], rX)
            _stable_ranks_row(DZ[r], oZ[r], rZ)
            for m in range(n):
                t = max(rX[m], rZ[m])
                if t < kbar:
                    hist[c, t] += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def _overlap_rows_par(DX: np.ndarray, oX: np.ndarray, DZ: np.ndarray, oZ: np.ndarray, w: np.ndarray,
                      out: np.ndarray) -> None:  # pragma: no cover - jit
    """out[r, a] = sum_m w[a, max(rank_X(m), rank_Z(m))] over the members m whose maximum rank is < w.shape[1]:
    one per-row value per weight table a (rows in parallel, each summed sequentially over m, so the result does
    not depend on the thread count). With w[a, t] = (H(kbar) - H(t)) / kbar this is Eq. G.2's per-sample term
    (:func:`s_n_readings_per_row`)."""
    b, n = DX.shape
    n_w, kmax = w.shape
    for r in numba.prange(b):
        rX = np.empty(n, dtype=np.int64)
        rZ = np.empty(n, dtype=np.int64)
        _stable_ranks_row(DX[r], oX[r], rX)
        _stable_ranks_row(DZ[r], oZ[r], rZ)
        for a in range(n_w):
            out[r, a] = 0.0
        for m in range(n):
            t = max(rX[m], rZ[m])
            if t < kmax:
                for a in range(n_w):
                    out[r, a] += w[a, t]


def _argsort_rows(D: np.ndarray, pool: ThreadPoolExecutor, n_parts: int) -> np.ndarray:
    """np.argsort(D, axis=1) (NumPy's SIMD sort; any order of equal values is fine, the kernel restores the
    stable one), split in ``n_parts`` row ranges run on ``pool`` (NumPy releases the GIL while sorting)."""
    out = np.empty(D.shape, dtype=np.int64)
    parts = np.array_split(np.arange(D.shape[0]), max(1, n_parts))

    def work(idx):
        if idx.size:
            out[idx[0]:idx[-1] + 1] = np.argsort(D[idx[0]:idx[-1] + 1], axis=1)

    list(pool.map(work, parts))
    return out


def s_n(X: np.ndarray, Z: np.ndarray, labels: np.ndarray, kappa_max: int | None = None,
        per_cohort: bool = False) -> float:
    """Intra-cohort neighbour preservation S_n, Eq. G.2.

    For every sample i of cohort j, let NX_i (NZ_i) be the other members of cohort j sorted by distance to
    x_i in the original space X (to z_i in the embedding Z), stable on (distance, index). Then

    ``S_n = (1 / kbar) sum_{kappa=1..kbar} (1 / (l kappa)) sum_i |NX_i[:kappa] & NZ_i[:kappa]|``

    with ``l`` the number of samples and ``kbar = floor(0.9 min_j n_j)`` (integer arithmetic, ``9 n // 10``;
    ``n_j`` over the non-empty cohorts) unless ``kappa_max`` is given (1 <= kappa_max <= min_j n_j - 1).
    ``per_cohort=True`` reads κ̄ per cohort instead, ``kbar_j = floor(0.9 n_j)`` for the members of cohort j
    (``S_n = (1/l) sum_i (1/kbar_j) sum_kappa overlap_i(kappa) / kappa``); the two readings agree when the cohorts
    have equal sizes (docs/decisions.md, "S_n on unequal cohorts").
    Returns NaN when kbar = 0 (a cohort with a single sample). Computed with the rank trick: with 0-based
    ranks r_X(m), r_Z(m) of member m, ``overlap_i(kappa) = #{m : max(r_X(m), r_Z(m)) < kappa}``; a histogram
    of the maxima plus a cumulative sum gives every kappa. One cohort at a time in row blocks (memory
    O(block n_j)). Inter-cohort neighbours are ignored by design.
    """
    X, Z, y, counts, present = _s_n_data(X, Z, labels)
    min_n = int(counts[present].min())
    if kappa_max is not None and per_cohort:
        raise UserError("kappa_max and per_cohort=True are two readings of kbar: give one")
    if kappa_max is None:
        kbar = (9 * min_n) // 10
    else:
        kbar = _check_int("kappa_max", kappa_max, 1)
        if kbar > min_n - 1:
            raise UserError(
                f"kappa_max ({kbar}) must be <= the smallest cohort size minus one ({min_n - 1})"
            )
    if kbar == 0:
        return float("nan")
    kbars = {int(j): (9 * int(counts[j])) // 10 if per_cohort else kbar for j in present}
    return _mean_overlap(_cohort_overlaps(X, Z, y, counts, kbars), X.shape[0])


def s_n_readings(X: np.ndarray, Z: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """``(s_n(X, Z, labels), s_n(X, Z, labels, per_cohort=True))`` from one pass over the cohorts: the per-cohort
    κ̄_j are never below the global κ̄, so the counts up to κ̄_j hold those up to κ̄."""
    X, Z, y, counts, present = _s_n_data(X, Z, labels)
    kbar = (9 * int(counts[present].min())) // 10
    if kbar == 0:
        return float("nan"), float("nan")
    overlaps = _cohort_overlaps(X, Z, y, counts, {int(j): (9 * int(counts[j])) // 10 for j in present})
    l = X.shape[0]
    return _mean_overlap({j: o[:kbar] for j, o in overlaps.items()}, l), _mean_overlap(overlaps, l)


def s_n_readings_per_row(X: np.ndarray, Z: np.ndarray, labels: np.ndarray,
                         rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The per-sample terms of the two readings of S_n (:func:`s_n_readings`) for the query samples ``rows``.

    Eq. G.2 is a mean over the samples, ``S_n = (1/l) sum_i q_i`` with ``q_i = (1/kbar) sum_{kappa=1..kbar}
    |NX_i[:kappa] & NZ_i[:kappa]| / kappa``. With 0-based ranks t_m = max(r_X(m), r_Z(m)) of the other members m of
    i's cohort, ``overlap_i(kappa) = #{m : t_m < kappa}``, so ``q_i = (1/kbar) sum_{m : t_m < kbar} (H(kbar) -
    H(t_m))`` (H the harmonic numbers): returned for kbar = floor(0.9 min_j n_j) and for i's own kbar_j =
    floor(0.9 n_j). A query is a sample; its neighbour lists NX_i, NZ_i run over *all* members of its cohort (and
    kbar over the full cohort sizes), as the definition asks: only the outer mean is restricted to the queries
    (:func:`cova.metrics.subsample.estimate`). The mean of the terms over all samples equals :func:`s_n_readings`
    up to rounding. NaN terms when kbar = 0. Cost O(q n_j (d + log n_j)) for q queries instead of O(sum_j n_j² ...).
    """
    X, Z, y, counts, present = _s_n_data(X, Z, labels)
    rows = _as_rows(rows, X.shape[0])
    kbar = (9 * int(counts[present].min())) // 10
    out = np.full((rows.size, 2), np.nan)
    if kbar == 0:
        return out[:, 0], out[:, 1]
    threads = numba.get_num_threads()
    order = np.argsort(y, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(counts)))
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        for j in present:
            at = np.flatnonzero(y[rows] == j)  # positions in ``rows`` of the queries of cohort j
            if at.size == 0:
                continue
            members = order[bounds[j]:bounds[j + 1]]  # ascending sample index, so local ties = global ties
            local = np.searchsorted(members, rows[at])
            own = (9 * int(counts[j])) // 10
            w = np.zeros((2, own))
            for a, kb in enumerate((kbar, own)):  # w[a, t] = (H(kb) - H(t)) / kb, t < kb
                w[a, :kb] = np.cumsum(1.0 / np.arange(kb, 0, -1, dtype=np.float64))[::-1] / kb
            Xj, Zj = X[members], Z[members]
            Xsq = np.einsum("ij,ij->i", Xj, Xj) if Xj.shape[1] > EXACT_MAX_DIM else None
            Zsq = np.einsum("ij,ij->i", Zj, Zj) if Zj.shape[1] > EXACT_MAX_DIM else None
            step = _block_rows(members.size)
            for s in range(0, local.size, step):
                loc = local[s:s + step]
                DX = sqdist_block(Xj[loc], Xj, B_sqnorm=Xsq)
                DZ = sqdist_block(Zj[loc], Zj, B_sqnorm=Zsq)
                DX[np.arange(loc.size), loc] = np.inf  # self sorts last: rank n_j - 1 >= kbar_j, never counted
                DZ[np.arange(loc.size), loc] = np.inf
                oX, oZ = _argsort_rows(DX, pool, threads), _argsort_rows(DZ, pool, threads)
                part = np.empty((loc.size, 2))
                _overlap_rows_par(DX, oX, DZ, oZ, w, part)
                out[at[s:s + step]] = part
    return out[:, 0], out[:, 1]


def _s_n_data(X: np.ndarray, Z: np.ndarray, labels: np.ndarray):
    """Checked X, Z, labels y, cohort sizes and the non-empty cohorts (S_n's common inputs)."""
    X = _as_matrix("X", X)
    Z = _as_matrix("Z", Z)
    _same_rows("X", X, "Z", Z)
    y = _as_labels(labels, X.shape[0])
    counts = np.bincount(y)
    return X, Z, y, counts, np.flatnonzero(counts > 0)


def _mean_overlap(overlaps: dict[int, np.ndarray], l: int) -> float:
    """``(1/l) Σ_j (1/κ̄_j) Σ_κ o_j[κ − 1] / κ`` with κ̄_j = len(o_j): Eq. G.2's average over κ and samples."""
    return sum(float(np.sum(o / np.arange(1, o.size + 1, dtype=np.float64))) / o.size
               for o in overlaps.values()) / l


def _cohort_overlaps(X: np.ndarray, Z: np.ndarray, y: np.ndarray, counts: np.ndarray,
                     kbars: dict[int, int]) -> dict[int, np.ndarray]:
    """Per cohort j of ``kbars``: ``o[kappa - 1] = sum_{i in j} overlap_i(kappa)`` for kappa = 1..kbars[j]."""
    threads = numba.get_num_threads()
    order = np.argsort(y, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(counts)))
    out: dict[int, np.ndarray] = {}
    # single-threaded BLAS: the per-block GEMMs are small next to the sorts, and idle OpenBLAS threads spinning
    # after each call slowed the sorting and numba threads down (20k: 2.0 s -> 1.45 s)
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        for j, kbar in kbars.items():
            # hist[c, t] = #(i, m) pairs with max(r_X, r_Z) == t, one row per chunk of rows of the parallel kernel
            hist = np.zeros((max(1, 4 * threads), kbar), dtype=np.int64)
            members = order[bounds[j]:bounds[j + 1]]  # ascending sample index, so local ties = global ties
            Xj, Zj = X[members], Z[members]
            nj = members.size
            Xsq = np.einsum("ij,ij->i", Xj, Xj) if Xj.shape[1] > EXACT_MAX_DIM else None
            Zsq = np.einsum("ij,ij->i", Zj, Zj) if Zj.shape[1] > EXACT_MAX_DIM else None
            step = _block_rows(nj)
            for s in range(0, nj, step):
                rows = np.arange(s, min(nj, s + step))
                DX = sqdist_block(Xj[rows], Xj, B_sqnorm=Xsq)
                DZ = sqdist_block(Zj[rows], Zj, B_sqnorm=Zsq)
                DX[np.arange(rows.size), rows] = np.inf  # self sorts last: rank nj - 1 >= kbar, never counted
                DZ[np.arange(rows.size), rows] = np.inf
                oX, oZ = _argsort_rows(DX, pool, threads), _argsort_rows(DZ, pool, threads)
                _overlap_hist_par(DX, oX, DZ, oZ, kbar, hist)
            out[j] = np.cumsum(hist.sum(axis=0))
    return out
