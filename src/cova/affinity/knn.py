"""k-nearest-neighbour search, the only O(l log l)-ish step every local weight matrix W needs (COVA Sec. 3.1.1, App. C).

Two back ends, both libraries:

* ``"exact"`` -- :class:`sklearn.neighbors.NearestNeighbors` (kd-tree / ball tree for low d, brute force in chunks
  otherwise; sklearn's ``working_memory`` is capped at :data:`SKLEARN_WORKING_MEMORY_MB` so that the brute-force
  chunks stay O(chunk·l), never l×l).
* ``"pynndescent"`` -- :class:`pynndescent.NNDescent` with its default parameters (approximate; recall ≥ 0.99 in
  our tests at d = 5, 0.987 on 20,000 Gaussian points in d = 50 with k = 50). Its NN-descent step allocates a
  workspace of ≈ 12 B · 1.5·m² · 16384 (m = max_candidates = min(60, k + 1)): ≈ 0.8 GB at k = 50 and 1.1 GB at
  k = 90 with one thread, three times that with several -- constant in l, but large next to l×l for l ≈ 10⁴.
  Lowering m shrinks it but costs recall in high d (that d = 50 case drops to 0.903 at m = 20), so m is left at
  the default and ``"auto"`` prefers the exact kd-tree whenever d is small.

Whatever the back end, the returned distances are **recomputed in float64** from ``X`` for the returned pairs
(pynndescent returns float32 distances, and sklearn's brute force uses the ``‖a‖² + ‖b‖² − 2a·b`` expansion), with
one formula, :func:`pair_sq_distances`, so that every consumer (perplexity calibration, the max-subtracted
Euclidean S of App. H.1, the reference tests) sees bit-identical values for the same pair. Each row is then sorted by
(distance, index), which realises the convention "ties broken by lower index" *within* the returned list.

On the exact path the convention also decides *which* of several points tied at the k-th distance make the list:
scikit-learn is asked for one spare neighbour, and a row whose spare is as near as its k-th neighbour (up to the
rounding of the expansion) is redone against every point (:func:`_settle_ties`: a BLAS screen, then exact distances of
the few points that can tie). Without this the choice among tied
points was scikit-learn's, and it changes with the number of OpenMP threads (data with integer features, such as the
digits, have many ties). On the pynndescent path the back end decides.

Determinism: the exact path is deterministic and does not depend on the thread count. The pynndescent path is
deterministic for a fixed
``(random_state, n_jobs)`` pair -- checked across processes -- but different ``n_jobs`` give (equally accurate)
different graphs, because NN-descent's parallel work split depends on the thread count. ``n_jobs`` is therefore
part of the seed; it defaults to 1 and is never derived from the machine's core count.
"""

from __future__ import annotations

import numba
import numpy as np

from ..checks import check_matrix
from ..errors import UserError

__all__ = ["nearest_neighbors", "query_neighbors", "resolve_knn_method", "pair_sq_distances", "check_distance_scale",
           "METHODS", "METRICS"]

METHODS: tuple[str, ...] = ("auto", "exact", "pynndescent")
METRICS: tuple[str, ...] = ("euclidean", "cosine")

#: ``"auto"`` searches exactly while l²·d is at most this (≈ 70,000 samples in 65 dimensions, 20,000 in 800): below
#: it scikit-learn's blocked brute force (BLAS Gram blocks and a per-row heap, threads over query blocks) is faster
#: than NN-descent (2.4× at 70,000 × 50 on 2 threads, ``benchmarks/inputs.py``), exact, and thread-independent.
EXACT_MAX_WORK: float = 3.2e11

#: sklearn ``working_memory`` (MB) used while querying; bounds brute-force distance chunks.
SKLEARN_WORKING_MEMORY_MB: int = 128

def _check_X(X: np.ndarray) -> np.ndarray:
    X = check_matrix(X, "X", contiguous=True)
    check_distance_scale(X)
    return X


#: What to do with features whose squared distances leave float64's range.
RESCALE = ("rescale or standardise the features (e.g. subtract each column's mean and divide it by its standard "
           "deviation) in the data file, or choose features of a moderate scale")


def check_distance_scale(X: np.ndarray, name: str = "X") -> None:
    """Refuse features whose squared distances leave float64's range, where they arise: every W, kernel bandwidth
    and perplexity calibration is computed from ``‖x_i − x_j‖²`` (or from ``‖x_i‖²``, the Gram expansion and the
    cosine's row norms), so an overflow there turns W into inf or NaN, and an underflow makes distinct points
    coincide. One pass over X: with m_t = max_i |x_it| and s_t the range of column t, ``Σ_t (2·m_t)²`` bounds
    every squared distance and squared norm from above (it must be finite), ``Σ_t s_t²`` is the largest squared
    distance up to a factor d (it must not underflow to below the smallest normal float when some column varies).
    Raises ``ValueError`` naming the largest value (or range), its column and what to do."""
    top = np.max(np.abs(X), axis=0)
    with np.errstate(over="ignore", under="ignore"):
        bound = float(np.sum(np.square(2.0 * top)))
        span = np.max(X, axis=0) - np.min(X, axis=0)
        spread = float(np.sum(np.square(span)))
    d = X.shape[1]
    if not np.isfinite(bound):
        limit = float(np.sqrt(np.finfo(np.float64).max / (4.0 * d)))
        j = int(np.argmax(top))
        raise UserError(f"{name} has values too large for its squared distances in float64: |x| up to "
                         f"{top[j]:.3g} in column {j} ({int(np.sum(top > limit))} of {d} columns above {limit:.3g}), "
                         f"so ‖x_i − x_j‖² overflows to inf and the weights W built from it would be NaN; {RESCALE}")
    if spread < np.finfo(np.float64).tiny and span.max() > 0:
        j = int(np.argmax(span))
        raise UserError(f"{name} has differences too small for its squared distances in float64: the largest "
                         f"column range is {span[j]:.3g} (column {j}), so every ‖x_i − x_j‖² underflows to (nearly) "
                         f"0 and the weights W built from it would be undefined; {RESCALE}")


@numba.njit(cache=True, parallel=True)
def _pair_sq_kernel(X: np.ndarray, r: np.ndarray, c: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - jit
    d = X.shape[1]
    for t in numba.prange(r.shape[0]):  # pairs are independent: the result does not depend on the thread count
        a = r[t]
        b = c[t]
        acc = 0.0
        for j in range(d):
            diff = X[a, j] - X[b, j]
            acc += diff * diff
        out[t] = acc


@numba.njit(cache=True, parallel=True)
def _pair_dot_kernel(X: np.ndarray, r: np.ndarray, c: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - jit
    d = X.shape[1]
    for t in numba.prange(r.shape[0]):
        a = r[t]
        b = c[t]
        acc = 0.0
        for j in range(d):
            acc += X[a, j] * X[b, j]
        out[t] = acc


def _pairs(rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    rows = np.asarray(rows)
    cols = np.asarray(cols)
    r = np.ascontiguousarray(rows.reshape(-1), dtype=np.int64)
    c = np.ascontiguousarray(cols.reshape(-1), dtype=np.int64)
    return r, c, rows.shape


def pair_sq_distances(X: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances ``Σ_t (x_rows[t] − x_cols[t])²`` in float64 by direct differences.

    ``rows`` and ``cols`` are integer arrays of one common shape; the result has that shape. One compiled pass over
    the pairs (threads over pairs, memory O(pairs)), summing over the columns in order. This is the single definition
    of a pairwise distance used throughout :mod:`cova.affinity`; it is symmetric bit for bit (``(a−b)² == (b−a)²``
    in floating point) and does not depend on the thread count.
    """
    r, c, shape = _pairs(rows, cols)
    out = np.empty(r.shape[0], dtype=np.float64)
    _pair_sq_kernel(np.ascontiguousarray(X, dtype=np.float64), r, c, out)
    return out.reshape(shape)


def _pair_cosine_distances(Xn: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``1 − x̂_i·x̂_j`` for unit-norm rows ``Xn`` (one compiled pass like :func:`pair_sq_distances`)."""
    r, c, shape = _pairs(rows, cols)
    out = np.empty(r.shape[0], dtype=np.float64)
    _pair_dot_kernel(np.ascontiguousarray(Xn, dtype=np.float64), r, c, out)
    return (1.0 - out).reshape(shape)


def _drop_self(indices: np.ndarray, k: int) -> np.ndarray:
    """Remove each row's own index from a (l, k+1) neighbour table; rows without it lose their last column."""
    l = indices.shape[0]
    is_self = indices == np.arange(l)[:, None]
    no_self = ~is_self.any(axis=1)
    is_self[no_self, -1] = True  # e.g. exact duplicates can push the point itself out of its own list
    return indices[~is_self].reshape(l, k)


def _exact_neighbors(Xs: np.ndarray, k: int, n_jobs: int) -> np.ndarray:
    """The k nearest other rows of ``Xs`` and one spare (k + 1 columns unless k = l − 1), in scikit-learn's order."""
    import sklearn
    from sklearn.neighbors import NearestNeighbors

    with sklearn.config_context(working_memory=SKLEARN_WORKING_MEMORY_MB):
        nn = NearestNeighbors(n_neighbors=min(k + 1, Xs.shape[0] - 1), metric="euclidean", n_jobs=n_jobs).fit(Xs)
        # X=None: each training point is queried and itself excluded (sklearn removes the point's own index).
        return nn.kneighbors(return_distance=False)


def _pynndescent_neighbors(Xs: np.ndarray, k: int, random_state: int, n_jobs: int) -> np.ndarray:
    from pynndescent import NNDescent

    # NNDescent calls numba.set_num_threads(n_jobs) (a process-wide side effect on our numba kernels too); it resets
    # it on success, we also do so if it raises.
    threads = numba.get_num_threads()
    try:
        index = NNDescent(
            Xs,
            metric="euclidean",
            n_neighbors=k + 1,  # the graph contains each point itself
            random_state=int(random_state),
            n_jobs=int(n_jobs),
            low_memory=True,
            verbose=False,
        )
        ind, _ = index.neighbor_graph
    finally:
        numba.set_num_threads(threads)
    ind = np.asarray(ind, dtype=np.int64)
    if np.any(ind < 0):
        raise RuntimeError(
            "pynndescent returned an incomplete neighbour graph (index −1); use method='exact' for this data"
        )
    return _drop_self(ind, k)


def _distances(X: np.ndarray, Xs: np.ndarray, metric: str, ind: np.ndarray,
               rows: np.ndarray | None = None) -> np.ndarray:
    """Distances from rows ``rows`` (default: all) to their neighbours ``ind`` (one row of ``ind`` per row):
    squared Euclidean (sorted as squares, finer than after the square root) or cosine."""
    if rows is None:
        rows = np.arange(ind.shape[0], dtype=np.int64)
    rows = np.broadcast_to(rows[:, None], ind.shape)
    return _pair_cosine_distances(Xs, rows, ind) if metric == "cosine" else pair_sq_distances(X, rows, ind)


def _sorted(ind: np.ndarray, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row sorted by (distance, index): a stable sort by index, then a stable sort by distance."""
    order = np.argsort(ind, axis=1, kind="stable")
    ind = np.take_along_axis(ind, order, axis=1)
    dist = np.take_along_axis(dist, order, axis=1)
    order = np.argsort(dist, axis=1, kind="stable")
    return (np.ascontiguousarray(np.take_along_axis(ind, order, axis=1)),
            np.ascontiguousarray(np.take_along_axis(dist, order, axis=1)))


#: rows screened together by :func:`_settle_ties` hold at most this many distances (32 MB)
SETTLE_BLOCK_ENTRIES: int = 4_000_000


def _settle_ties(X: np.ndarray, Xs: np.ndarray, metric: str, ind: np.ndarray, dist: np.ndarray,
                 k: int, n_ref: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The first k of the sorted candidate rows ``ind`` / ``dist`` (k + 1 columns, from an exact search), with the
    k-th place settled by the rule "ties to the lower index" among *all* reference points.

    Self-search (``n_ref`` None): row i of ``ind`` belongs to row i of X and the reference points are all other
    rows. Query search: the first ``n_ref`` rows of X are the reference points and row i of ``ind`` belongs to the
    query row ``n_ref + i``.

    A point left out by the search is no nearer than the spare candidate (column k), up to the rounding of
    scikit-learn's ``‖a‖² + ‖b‖² − 2a·b`` expansion, bounded here by tol = 8·d·ε·(‖a‖² + max‖b‖²). Only rows whose
    k-th and spare distances are closer than that may miss a tied point of lower index. For those rows every
    distance is screened with the same BLAS expansion (blocks of at most :data:`SETTLE_BLOCK_ENTRIES`), and only the
    points whose screened distance is within 2·tol of the row's k-th distance (a superset of the points at most as
    far as the k-th, so never fewer than k) get their distance recomputed by :func:`pair_sq_distances` (or the
    cosine formula); of these the k nearest by (distance, index) are kept."""
    self_search = n_ref is None
    n_ref = Xs.shape[0] if self_search else int(n_ref)
    offset = 0 if self_search else n_ref
    d = Xs.shape[1]
    sq_norms = np.einsum("ij,ij->i", Xs, Xs)
    queries = offset + np.arange(ind.shape[0])
    tol = 8.0 * d * np.finfo(np.float64).eps * (sq_norms[queries] + sq_norms[:n_ref].max())
    search = 2.0 if metric == "cosine" else 1.0  # ‖x̂_i − x̂_j‖² = 2(1 − cos): the search's units
    gap = search * (dist[:, k] - dist[:, k - 1])
    ind, dist = ind[:, :k].copy(), dist[:, :k].copy()
    unsure = np.flatnonzero(gap <= tol)
    block = max(1, SETTLE_BLOCK_ENTRIES // n_ref)
    for s in range(0, unsure.size, block):
        rows = unsure[s:s + block]
        own = queries[rows]
        screen = sq_norms[own, None] + sq_norms[None, :n_ref] - 2.0 * (Xs[own] @ Xs[:n_ref].T)
        if self_search:
            screen[np.arange(rows.size), rows] = np.inf  # a point is not its own neighbour (a duplicate of it is)
        r, c = np.nonzero(screen <= (search * dist[rows, k - 1] + 2.0 * tol[rows])[:, None])
        exact = _distances(X, Xs, metric, c[:, None], own[r])[:, 0]
        order = np.lexsort((c, exact, r))  # by row, then (distance, index)
        r, c, exact = r[order], c[order], exact[order]
        rank = np.arange(r.size) - np.searchsorted(r, r)
        keep = rank < k
        ind[rows] = c[keep].reshape(rows.size, k)
        dist[rows] = exact[keep].reshape(rows.size, k)
    return ind, dist


def _search_space(X: np.ndarray, metric: str) -> np.ndarray:
    """The rows the search runs on: X itself (Euclidean) or its unit-normalised rows (cosine)."""
    if metric != "cosine":
        return X
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    if np.any(norms == 0.0):
        raise UserError("cosine metric: X has all-zero rows, whose cosine similarity is undefined")
    return X / norms[:, None]


def query_neighbors(X_ref: np.ndarray, X_new: np.ndarray, n_neighbors: int, *, metric: str = "euclidean",
                    n_jobs: int = 1, squared: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` nearest rows of ``X_ref`` to every row of ``X_new`` (out-of-sample points, e.g. the test
    rows that a method places by interpolation), with the conventions of :func:`nearest_neighbors`' exact path:
    scikit-learn's exact search with one spare, distances recomputed in float64 by the same formulas, rows sorted by
    (distance, index) and the k-th place settled by the lower index (:func:`_settle_ties`), whatever the threads. A
    new row equal to a reference row has it as a neighbour at distance 0.

    Returns (indices into ``X_ref``, distances), each (len(X_new), k)."""
    import sklearn
    from sklearn.neighbors import NearestNeighbors

    if metric not in METRICS:
        raise UserError(f"unknown metric {metric!r}; allowed: {', '.join(METRICS)}")
    X_ref, X_new = _check_X(X_ref), _check_X(X_new)
    n_ref, k = X_ref.shape[0], int(n_neighbors)
    if k != n_neighbors or not 1 <= k <= n_ref:
        raise UserError(f"n_neighbors must be an integer in 1..{n_ref} (the reference rows), got {n_neighbors!r}")
    if X_new.shape[1] != X_ref.shape[1]:
        raise UserError(f"X_new has {X_new.shape[1]} columns, X_ref {X_ref.shape[1]}")
    X = np.vstack([X_ref, X_new])
    Xs = _search_space(X, metric)
    with sklearn.config_context(working_memory=SKLEARN_WORKING_MEMORY_MB):
        nn = NearestNeighbors(n_neighbors=min(k + 1, n_ref), metric="euclidean", n_jobs=int(n_jobs)).fit(Xs[:n_ref])
        ind = np.ascontiguousarray(nn.kneighbors(Xs[n_ref:], return_distance=False), dtype=np.int64)
    ind, dist = _sorted(ind, _distances(X, Xs, metric, ind, n_ref + np.arange(ind.shape[0])))
    if ind.shape[1] > k:
        ind, dist = _settle_ties(X, Xs, metric, ind, dist, k, n_ref=n_ref)
    if metric == "euclidean" and not squared:
        np.sqrt(dist, out=dist)
    return ind, dist


def resolve_knn_method(method: str, l: int, d: int, exact_max_samples: int = 5000, exact_max_dim: int = 15,
                       exact_max_work: float = EXACT_MAX_WORK) -> str:
    """The back end (``"exact"`` or ``"pynndescent"``) that ``method`` stands for on l samples in d dimensions: the
    rule of :func:`nearest_neighbors`' ``"auto"`` (its parameters)."""
    if method != "auto":
        return method
    exact = l <= exact_max_samples or d <= exact_max_dim or float(l) * l * d <= exact_max_work
    return "exact" if exact else "pynndescent"


def nearest_neighbors(
    X: np.ndarray,
    n_neighbors: int,
    *,
    metric: str = "euclidean",
    method: str = "auto",
    exact_max_samples: int = 5000,
    random_state: int = 0,
    n_jobs: int = 1,
    exact_max_dim: int = 15,
    exact_max_work: float = EXACT_MAX_WORK,
    squared: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` nearest neighbours of every sample, the sample itself excluded.

    Used to build N(S, h) and the sparse candidate sets of every W (COVA Sec. 3.1.1, App. C) in O(l·k) memory.

    Parameters
    ----------
    X : (l, d) array.
    n_neighbors : k, with 1 ≤ k < l.
    metric : ``"euclidean"`` (‖x_i − x_j‖) or ``"cosine"`` (1 − cos(x_i, x_j); rows must be non-zero). Cosine
        neighbours are searched as Euclidean neighbours of the unit-normalised rows (same order, since
        ‖x̂_i − x̂_j‖² = 2(1 − cos)), which lets both back ends use their fastest Euclidean code.
    method : ``"auto"``, ``"exact"`` or ``"pynndescent"``. ``"auto"`` is exact if l ≤ ``exact_max_samples``, *or*
        d ≤ ``exact_max_dim`` (kd-tree territory: there the exact search is as fast as NN-descent and
        avoids pynndescent's fixed ≈ 0.8–1.1 GB NN-descent workspace, ×3 with n_jobs > 1), *or* l²·d ≤
        ``exact_max_work`` (scikit-learn's blocked brute force beats NN-descent there, and a fresh process does
        not pay pynndescent's ≈ 40 s of numba compilation); else pynndescent.
    exact_max_samples : sample-count threshold for ``"auto"``.
    exact_max_dim : dimension threshold for ``"auto"`` (15 = where sklearn itself stops using trees).
        Set it to 0 to make ``"auto"`` depend on l only.
    random_state : seed of pynndescent (ignored by the exact path).
    exact_max_work : l²·d threshold for ``"auto"`` (:data:`EXACT_MAX_WORK`).
    n_jobs : threads for pynndescent, for which it is part of the seed (see module docstring). The exact path runs
        on the job's thread pools (scikit-learn's OpenMP; the result does not depend on them, ties included).
    squared : return squared Euclidean distances (ignored for cosine).

    Returns
    -------
    indices : (l, k) int64, the neighbours of each row, sorted by (distance, index).
    distances : (l, k) float64, recomputed exactly from X in float64 (Euclidean: :func:`pair_sq_distances`, its
        ``sqrt`` unless ``squared``; cosine: ``1 − x̂_i·x̂_j``).
    """
    if metric not in METRICS:
        raise UserError(f"unknown metric {metric!r}; allowed: {', '.join(METRICS)}")
    if method not in METHODS:
        raise UserError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")
    X = _check_X(X)
    l = X.shape[0]
    k = int(n_neighbors)
    if k != n_neighbors or k < 1:
        raise UserError(f"n_neighbors must be a positive integer, got {n_neighbors!r}")
    if k >= l:
        raise UserError(f"n_neighbors must be < the number of samples l = {l} (self is excluded), got {k}")
    if int(n_jobs) < 1:
        raise UserError(f"n_jobs must be a positive integer, got {n_jobs!r}")

    Xs = _search_space(X, metric)

    if resolve_knn_method(method, l, X.shape[1], exact_max_samples, exact_max_dim, exact_max_work) == "exact":
        ind = _exact_neighbors(Xs, k, int(n_jobs))
    else:
        ind = _pynndescent_neighbors(Xs, k, random_state, int(n_jobs))
    ind = np.ascontiguousarray(ind, dtype=np.int64)
    ind, dist = _sorted(ind, _distances(X, Xs, metric, ind))
    if ind.shape[1] > k:
        ind, dist = _settle_ties(X, Xs, metric, ind, dist, k)
    if metric == "euclidean" and not squared:
        np.sqrt(dist, out=dist)
    return ind, dist
