"""Information-retrieval quality measures of Venna et al. (2010), "Information retrieval perspective to
nonlinear dimensionality reduction for data visualization", JMLR 11:451-490 (NeRV).

Measures (paper Sec. 4.3.1):

* :func:`precision_recall_curve`, :func:`mean_precision_recall` - mean precision / mean recall of binary
  neighbourhoods (Sec. 2.1.2, below Eq. 1): r relevant input neighbours, k = 1..k_max retrieved display
  neighbours;
* :func:`smoothed_precision_recall` - mean smoothed precision E_i[D(q_i, p_i)] and mean smoothed recall
  E_i[D(p_i, q_i)] (Sec. 2.2.3) with p from Eq. 3 and q from Eq. 2;
* :func:`rank_smoothed_precision_recall` - the rank-based variants (Sec. 2.2.3, last paragraph), normalised
  by their upper bound (reversed ranks) to [0, 1];
* :func:`joint_smoothed_precision_recall` - D(q, p) and D(p, q) on the joint distributions of Eqs. 6-7,
  i.e. the two terms of the t-NeRV cost Eq. 8 ("in the t-NeRV sense", Fig. 9E);
* :func:`trustworthiness_curve`, :func:`continuity_curve` - Kaski et al. (2003) for k = 1..k_max;
* :func:`knn_error` - leave-one-out k-NN classification error in the display (k = 5, Sec. 4.3.1);
* :func:`f_measure`, :func:`rank_f_measure` - the parameter-selection criterion 2PR/(P+R) of Sec. 4.3.2 on
  rank-based *goodness* values (1 - normalised error; [ours]: the paper does not say which).

The paper cites trustworthiness / continuity and the rank-based normalisation without formulas; we take
them from the authors' toolbox dredviz 1.0.2 (``docs/papers.md``, NeRV, "Measures").

Conventions (paper Secs. 2.1-2.2; the authors' toolbox dredviz 1.0.2 where the paper is silent):

* Euclidean distances; squared distances come from :func:`cova.metrics.neighborhood.sqdist_block`
  (exact differences for <= 32 columns, BLAS expansion clipped at 0 above);
* every "nearest" / rank is a stable sort on (distance, index): ties go to the lower sample index, the
  query itself is never its own neighbour (a duplicate is an ordinary neighbour at distance 0);
* probabilities use the paper's kernel exp(-d^2 / sigma_i^2) (no factor 2; beta_i = 1 / sigma_i^2) and are
  computed in log space (log-sum-exp), so no log 0 ever occurs (dredviz instead floors the exponents);
* sigma_i: bisection on beta_i until the natural-log entropy of p_{.|i} equals log k within 1e-10 (dredviz
  uses a golden-section search in bits with tolerance 1e-2);
* input *and* output distances are rescaled to mean 1 before p and q are formed (dredviz ``klmeasure``;
  makes the smoothed measures invariant to the scale of the embedding; the paper does not state it);
* all measures are **means over query points**, as in the paper (dredviz prints sums).

Subsampling: the measures that need a full ranking or a full probability row per query (smoothed,
rank-based, trustworthiness / continuity) take ``max_samples``. With ``n <= max_samples`` (or ``None``)
they are exact. Otherwise ``max_samples`` **query points** are drawn without replacement with
``numpy.random.default_rng(random_state)``; every drawn query is still compared with *all* n points, so
the result is an unbiased estimate of the mean over queries (the mean distances used for the mean-1
rescaling are then estimated from the drawn queries' rows). Work is done in row blocks of at most
:data:`cova.metrics.neighborhood.BLOCK_ENTRIES` entries: memory O(block n), never n x n (except the
joint measure, whose normaliser couples all pairs; it subsamples points instead, see its docstring).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from ..affinity.perplexity import calibrate_precisions, log_conditional_probabilities
from ..errors import UserError
from .neighborhood import (
    _as_matrix,
    _Blocks,
    _knn_brute,
    _n_buckets,
    _same_rows,
    _target_ranks_kernel,
    knn_indices,
    sqdist_block,
    target_ranks,
)
from .subsample import pairwise_subsample

__all__ = [
    "NERV_SCALE",
    "NERV_K_MAX",
    "nerv_measures",
    "PrecisionRecallCurve",
    "SmoothedPrecisionRecall",
    "calibrate_precisions",
    "log_conditional_probabilities",
    "precision_recall_curve",
    "mean_precision_recall",
    "smoothed_precision_recall",
    "rank_smoothed_precision_recall",
    "joint_smoothed_precision_recall",
    "trustworthiness_curve",
    "continuity_curve",
    "knn_error",
    "heldout_knn_error",
    "knn_misclassified",
    "knn_vote",
    "f_measure",
    "rank_f_measure",
]

#: Default number of query points for the measures that need full rows (see the module docstring).
DEFAULT_MAX_SAMPLES = 5000


class PrecisionRecallCurve(NamedTuple):
    """Mean precision and mean recall for retrieved-set sizes ``k`` (arrays of equal length)."""

    k: np.ndarray
    precision: np.ndarray
    recall: np.ndarray


class SmoothedPrecisionRecall(NamedTuple):
    """A pair of smoothed retrieval *errors* (lower is better): ``precision`` = D(q, p), ``recall`` = D(p, q)."""

    precision: float
    recall: float


# --------------------------------------------------------------------------------------------------------
# input checks (the sigma_i calibration and log-probabilities of Eqs. 2-3 are in cova.affinity.perplexity)
# --------------------------------------------------------------------------------------------------------

def _check_int(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise UserError(f"{name} must be an integer; got {value!r}")
    v = int(value)
    if not lo <= v <= hi:
        raise UserError(f"{name} must be in [{lo}, {hi}]; got {v}")
    return v


def _check_pair(X: object, Z: object) -> tuple[np.ndarray, np.ndarray]:
    X = _as_matrix("X", X)
    Z = _as_matrix("Z", Z)
    _same_rows("X", X, "Z", Z)
    if X.shape[0] < 3:
        raise UserError(f"at least 3 samples are needed; got {X.shape[0]}")
    return X, Z


def _query_rows(n: int, max_samples: int | None, random_state: int | None) -> np.ndarray:
    """All rows, or ``max_samples`` rows drawn without replacement (sorted) when n exceeds it: the scores' query
    rows (:func:`~.subsample.pairwise_subsample`)."""
    if max_samples is None or n <= max_samples:
        return np.arange(n)
    return pairwise_subsample(n, _check_int("max_samples", max_samples, 2, n), random_state)


def _row_blocks(A: np.ndarray, rows: np.ndarray):
    """(row_indices, squared-distance block) pairs for ``rows`` of A against all of A."""
    for _, _, r, D in _Blocks(A, rows):
        yield r, D


def _mean_distance(A: np.ndarray, rows: np.ndarray) -> float:
    """Mean Euclidean distance from ``rows`` to all other points (the off-diagonal mean when rows = all)."""
    total = 0.0
    for r, D in _row_blocks(A, rows):
        D[np.arange(r.size), r] = 0.0  # the BLAS expansion (> 32 columns) may leave a rounding residue
        total += float(np.sqrt(D).sum())
    mean = total / (rows.size * (A.shape[0] - 1))
    if not mean > 0.0:
        raise UserError("all points coincide (mean pairwise distance 0); the mean-1 rescaling is undefined")
    return mean


# --------------------------------------------------------------------------------------------------------
# binary retrieval: mean precision and mean recall (Sec. 2.1.2)
# --------------------------------------------------------------------------------------------------------

def precision_recall_curve(X: np.ndarray, Z: np.ndarray, n_relevant: int = 20,
                           k_max: int = 100) -> PrecisionRecallCurve:
    """Mean precision and mean recall for retrieved sets of size k = 1..k_max (Sec. 2.1.2, Sec. 4.3.1).

    Relevant set P_i = the ``n_relevant`` (r) nearest neighbours of i in X; retrieved set Q_i = the k
    nearest neighbours of i in the display Z. With N_TP,i = |P_i cap Q_i| (Eq. 1's notation),
    ``precision(i) = N_TP,i / k`` and ``recall(i) = N_TP,i / r``; the curve holds their means over i. The
    paper uses r = 20, k = 1..100 (Fig. 5) and r = 75 for the sphere (Fig. 2). When k = r, precision
    equals recall. Neighbours by :func:`cova.metrics.neighborhood.knn_indices` (ties to the lower index;
    the paper's Sec. 2.1.3 mentions fixed-radius neighbourhoods, but Sec. 4.3.1 retrieves the k nearest,
    which is what is done here). Memory O(n (r + k_max)).
    """
    X, Z = _check_pair(X, Z)
    n = X.shape[0]
    r = _check_int("n_relevant", n_relevant, 1, n - 1)
    kmax = _check_int("k_max", k_max, 1, n - 1)
    rel = knn_indices(X, r)
    ret = knn_indices(Z, kmax)
    base = np.arange(n, dtype=np.int64)[:, None] * n
    hits = np.isin(ret + base, np.sort((rel + base).ravel()), assume_unique=True)
    tp = np.cumsum(hits, axis=1, dtype=np.int64).sum(axis=0).astype(np.float64)  # sum_i N_TP,i(k)
    ks = np.arange(1, kmax + 1)
    return PrecisionRecallCurve(k=ks, precision=tp / (n * ks.astype(np.float64)), recall=tp / (n * float(r)))


def mean_precision_recall(X: np.ndarray, Z: np.ndarray, n_relevant: int = 20,
                          n_retrieved: int = 20) -> tuple[float, float]:
    """(mean precision, mean recall) for r = ``n_relevant`` relevant and k = ``n_retrieved`` retrieved
    neighbours: one point of :func:`precision_recall_curve` (Sec. 2.1.2)."""
    c = precision_recall_curve(X, Z, n_relevant, n_retrieved)
    return float(c.precision[-1]), float(c.recall[-1])


# --------------------------------------------------------------------------------------------------------
# smoothed precision and recall (Sec. 2.2.3)
# --------------------------------------------------------------------------------------------------------

def smoothed_precision_recall(X: np.ndarray, Z: np.ndarray, n_neighbors: float = 20, *,
                              max_samples: int | None = DEFAULT_MAX_SAMPLES,
                              random_state: int | None = 0) -> SmoothedPrecisionRecall:
    """Mean smoothed precision E_i[D(q_i, p_i)] and mean smoothed recall E_i[D(p_i, q_i)] (Sec. 2.2.3).

    ``D(p_i, q_i) = sum_{j != i} p_{j|i} log(p_{j|i} / q_{j|i})`` with p from Eq. 3 on the input X and q
    from Eq. 2 on the display Z. Both distance sets are first rescaled to mean 1 (dredviz ``klmeasure``);
    sigma_i is calibrated on the input row to entropy log(``n_neighbors``) (20 in the paper) and the
    **same** sigma_i is used for q. Both values are *costs* (0 is perfect, no upper bound); the paper's
    Fig. 4 plots -1 x them. Exact over all queries when n <= ``max_samples``; otherwise a seeded query
    subsample (module docstring). Time O(m n d), memory O(block n).
    """
    X, Z = _check_pair(X, Z)
    n = X.shape[0]
    rows = _query_rows(n, max_samples, random_state)
    sx2 = _mean_distance(X, rows) ** 2
    sz2 = _mean_distance(Z, rows) ** 2
    bx = _Blocks(X, rows)
    bz = _Blocks(Z, rows)
    prec = rec = 0.0
    for (_, _, r, DX), (_, _, _, DZ) in zip(bx, bz):
        DX /= sx2
        DZ /= sz2
        beta = calibrate_precisions(DX, n_neighbors, r)
        lp = log_conditional_probabilities(DX, beta, r)
        lq = log_conditional_probabilities(DZ, beta, r)
        idx = np.arange(r.size)
        lp[idx, r] = 0.0  # self terms: p = q = 0 there; zero the logs so 0 * log never gives nan
        lq[idx, r] = 0.0
        p = np.exp(lp)
        q = np.exp(lq)
        p[idx, r] = 0.0
        q[idx, r] = 0.0
        diff = lp - lq
        rec += float(np.sum(p * diff))
        prec -= float(np.sum(q * diff))
    return SmoothedPrecisionRecall(precision=prec / rows.size, recall=rec / rows.size)


def _rank_rows(DX: np.ndarray, DZ: np.ndarray, r: np.ndarray, best: bool) -> tuple[np.ndarray, np.ndarray]:
    """Input ranks Rx (stable on (distance, index)) and output ranks Ry (output ties broken by the input
    rank, ascending = best case, descending = worst case; dredviz ``CompareIndicesUsingRankMatrix``) for a
    block of query rows; the query's own column gets rank 0."""
    b, n = DX.shape
    idx = np.arange(b)
    DX = DX.copy()
    DZ = DZ.copy()
    DX[idx, r] = np.inf
    DZ[idx, r] = np.inf
    order = np.argsort(DX, axis=1, kind="stable")
    Rx = np.empty((b, n), dtype=np.int64)
    np.put_along_axis(Rx, order, np.arange(1, n + 1, dtype=np.int64)[None, :], axis=1)
    Rx[idx, r] = 0
    key = Rx if best else -Rx
    order = np.lexsort((key, DZ), axis=-1)
    Ry = np.empty((b, n), dtype=np.int64)
    np.put_along_axis(Ry, order, np.arange(1, n + 1, dtype=np.int64)[None, :], axis=1)
    Ry[idx, r] = 0
    return Rx, Ry


def rank_smoothed_precision_recall(X: np.ndarray, Z: np.ndarray, n_neighbors: float = 20, *,
                                   ties: str = "mean", max_samples: int | None = DEFAULT_MAX_SAMPLES,
                                   random_state: int | None = 0) -> SmoothedPrecisionRecall:
    """Mean rank-based smoothed precision and recall *errors*, normalised to [0, 1] (Sec. 2.2.3, 4.3.1).

    Distances in Eqs. 2-3 are replaced by ranks (nearest = 1, ..., farthest = n - 1), so
    ``p_{j|i} = pi(R_x(i, j))`` and ``q_{j|i} = pi(R_y(i, j))`` with ``pi(r) ∝ exp(-beta r^2)``. Every row
    has the same rank multiset, so one global beta (entropy log ``n_neighbors``) serves all rows (dredviz
    ``klrank``; its rescaling of ranks to mean 1 does not change pi). Errors are divided by their upper
    bound, reached when the ranks are reversed (R_rev = n - R_x; dredviz):

    * precision error = mean_i D(q_i, p_i) / D(p_rev, p), recall error = mean_i D(p_i, q_i) / D(p, p_rev)
      (both bounds are the same number by the substitution r -> n - r).

    The paper's Fig. 6 plots 1 - error (goodness). Input ties: lower index first. Output ties are broken
    by the input rank, ``ties="best"`` (in the input order), ``"worst"`` (reversed) or ``"mean"`` (the
    average of the two; dredviz prints both). For continuous embeddings all three agree. Note the dredviz
    ``klrank`` header labels the two columns the wrong way round: its first two columns are D(p, q), the
    paper's recall.
    """
    if ties not in ("best", "worst", "mean"):
        raise UserError(f"ties must be 'best', 'worst' or 'mean'; got {ties!r}")
    X, Z = _check_pair(X, Z)
    n = X.shape[0]
    if not 1.0 < float(n_neighbors) < n - 1:
        raise UserError(f"n_neighbors must lie in (1, n - 1) = (1, {n - 1}); got {n_neighbors}")
    ranks = np.arange(1, n, dtype=np.float64)
    beta = float(calibrate_precisions((ranks ** 2)[None, :], n_neighbors, np.array([-1]))[0])
    logpi = np.concatenate(([0.0], -beta * ranks ** 2))
    logpi[1:] -= logsumexp(logpi[1:])
    pi = np.exp(logpi)
    pi[0] = 0.0  # rank 0 = the query itself
    sq = np.arange(n, dtype=np.float64) ** 2
    bound = float(np.sum(pi[1:] * beta * (sq[n - np.arange(1, n)] - sq[1:])))  # D(p, p_rev)
    rows = _query_rows(n, max_samples, random_state)
    cases = {"best": (True,), "worst": (False,), "mean": (True, False)}[ties]
    prec = rec = 0.0
    for (_, _, r, DX), (_, _, _, DZ) in zip(_Blocks(X, rows), _Blocks(Z, rows)):
        for best in cases:
            Rx, Ry = _rank_rows(DX, DZ, r, best)
            gap = beta * (sq[Ry] - sq[Rx])  # log pi(Rx) - log pi(Ry); 0 on the self column
            rec += float(np.sum(pi[Rx] * gap))
            prec -= float(np.sum(pi[Ry] * gap))
    denom = rows.size * bound * len(cases)
    return SmoothedPrecisionRecall(precision=prec / denom, recall=rec / denom)


def joint_smoothed_precision_recall(X: np.ndarray, Z: np.ndarray, n_neighbors: float = 40, *,
                                    rescale_output: bool = False,
                                    max_samples: int | None = DEFAULT_MAX_SAMPLES,
                                    random_state: int | None = 0) -> SmoothedPrecisionRecall:
    """Smoothed precision D(q, p) and recall D(p, q) "in the t-NeRV sense" (Sec. 4.6, Fig. 9E): the two
    terms of Eq. 8 on the joint p_ij of Eq. 6 (conditionals of Eq. 3, input distances rescaled to mean 1,
    entropy log ``n_neighbors``; 40 as t-NeRV) and the Student-t q_ij of Eq. 7.

    q_ij depends on the scale of Z; by default the raw display is used, so the values are exactly t-NeRV's
    two cost terms. ``rescale_output=True`` first rescales the display distances to mean 1 (the dredviz
    rule of the other smoothed measures; the paper does not say which was used). The joint normaliser
    couples all pairs, so this measure forms dense n x n arrays; when n > ``max_samples`` it is computed on
    a seeded random subset of ``max_samples`` **points** (a different data set, not an estimate of the
    full-data value).
    """
    X, Z = _check_pair(X, Z)
    n = X.shape[0]
    sub = _query_rows(n, max_samples, random_state)
    X = X[sub]
    Z = Z[sub]
    m = sub.size
    DX = sqdist_block(X, X)
    DZ = sqdist_block(Z, Z)
    DX /= _mean_distance(X, np.arange(m)) ** 2
    if rescale_output:
        DZ /= _mean_distance(Z, np.arange(m)) ** 2
    beta = calibrate_precisions(DX, n_neighbors)
    lc = log_conditional_probabilities(DX, beta)
    lp = np.logaddexp(lc, lc.T) - math.log(2.0 * m)
    lw = -np.log1p(DZ)
    np.fill_diagonal(lw, -np.inf)
    lq = lw - logsumexp(lw)
    np.fill_diagonal(lp, 0.0)
    np.fill_diagonal(lq, 0.0)
    p = np.exp(lp)
    q = np.exp(lq)
    np.fill_diagonal(p, 0.0)
    np.fill_diagonal(q, 0.0)
    diff = lp - lq
    return SmoothedPrecisionRecall(precision=float(-np.sum(q * diff)), recall=float(np.sum(p * diff)))


# --------------------------------------------------------------------------------------------------------
# trustworthiness and continuity curves (Kaski et al. 2003)
# --------------------------------------------------------------------------------------------------------

def _normaliser(k: int, n: int, m: int) -> float:
    """A(k) of Kaski et al. (2003) (as in dredviz) with the mean taken over m queries: 2/(m k (2n-3k-1)) for k < n/2 and
    dredviz's 2/(m (n-k)(n-k-1)) otherwise (the maximum penalty per query when k >= n/2)."""
    if k < n / 2:
        return 2.0 / (m * k * (2.0 * n - 3.0 * k - 1.0))
    return 2.0 / (m * (n - k) * (n - k - 1.0))


def trustworthiness_curve(X: np.ndarray, Z: np.ndarray, k_max: int = 100, *,
                          max_samples: int | None = DEFAULT_MAX_SAMPLES,
                          random_state: int | None = 0) -> np.ndarray:
    """Trustworthiness T(k) for k = 1..k_max (array index k - 1) (Kaski et al. 2003; paper Sec. 4.3.1).

    ``T(k) = 1 - A(k) sum_i sum_{j in U_k(i)} (r(i, j) - k)``: U_k(i) = display neighbours of i (among its
    k nearest in Z) that are not among its k nearest in X, r(i, j) = 1-based input rank. A(k) =
    2 / (n k (2n - 3k - 1)) for k < n/2; for k >= n/2 dredviz's 2 / (n (n - k)(n - k - 1)) (sklearn and
    :func:`cova.metrics.neighborhood.trustworthiness` raise there); T(n - 1) = 1.

    Neighbours and ranks come from :func:`cova.metrics.neighborhood.knn_indices` and ``target_ranks`` (ties
    to the lower index), so with n <= ``max_samples`` point k equals ``trustworthiness(X, Z, k)`` exactly
    (and :func:`sklearn.manifold.trustworthiness` when there are no ties). dredviz instead reports best- and
    worst-case tie breaking; they coincide without ties. With n > ``max_samples`` the sum runs over a seeded
    query subsample and n in the first factor of A(k) becomes the number of queries. Time O(m n k_max),
    memory O(block n + n k_max).
    """
    X, Z = _check_pair(X, Z)
    n = X.shape[0]
    K = _check_int("k_max", k_max, 1, n - 1)
    rows = _query_rows(n, max_samples, random_state)
    m = rows.size
    if m == n:
        nbrs = knn_indices(Z, K)
        ranks = target_ranks(X, nbrs)
    else:
        nbrs = _knn_brute(Z, K, rows=rows)
        ranks = np.empty(nbrs.shape, dtype=np.int64)
        for s, e, r, D in _Blocks(X, rows):
            ranks[s:e] = _target_ranks_kernel(D, r.astype(np.int64), nbrs[s:e], _n_buckets(n))
    out = np.empty(K, dtype=np.float64)
    for k in range(1, K + 1):
        if k == n - 1:
            out[k - 1] = 1.0
            continue
        t = float(np.sum(np.maximum(ranks[:, :k] - k, 0), dtype=np.float64))
        out[k - 1] = 1.0 - t * _normaliser(k, n, m)
    return out


def continuity_curve(X: np.ndarray, Z: np.ndarray, k_max: int = 100, *,
                     max_samples: int | None = DEFAULT_MAX_SAMPLES,
                     random_state: int | None = 0) -> np.ndarray:
    """Continuity C(k), k = 1..k_max: :func:`trustworthiness_curve` with the roles of X and Z swapped
    (V_k(i) = input neighbours missing from the display neighbourhood, penalised by their display rank)."""
    X, Z = _check_pair(X, Z)
    return trustworthiness_curve(Z, X, k_max, max_samples=max_samples, random_state=random_state)


# --------------------------------------------------------------------------------------------------------
# k-NN classification error (Sec. 4.3.1) and the F-measure (Sec. 4.3.2)
# --------------------------------------------------------------------------------------------------------

def knn_misclassified(Z: np.ndarray, labels: np.ndarray, n_neighbors: int = 5) -> np.ndarray:
    """Boolean (n,): whether each point's leave-one-out k-NN vote in the display differs from its label.

    Each point is classified by a majority vote of its ``n_neighbors`` nearest *other* points in Z
    (:func:`knn_indices`: ties in distance to the lower index; duplicates count as neighbours). Vote ties
    (not specified by the paper) go to the tied class that has the nearest neighbour (this
    rule is invariant to relabelling; sklearn's KNeighborsClassifier picks the smallest label instead, so
    the two agree whenever no vote is tied).
    """
    Z = _as_matrix("Z", Z)
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != Z.shape[0]:
        raise UserError(f"labels must be 1-D with {Z.shape[0]} entries; got shape {y.shape}")
    n = Z.shape[0]
    k = _check_int("n_neighbors", n_neighbors, 1, n - 1)
    _, codes = np.unique(y, return_inverse=True)
    codes = codes.astype(np.int64)
    return knn_vote(codes[knn_indices(Z, k)]) != codes


def knn_error(Z: np.ndarray, labels: np.ndarray, n_neighbors: int = 5) -> float:
    """Leave-one-out k-NN classification error rate in the display (Sec. 4.3.1, k = 5; Table 2): the fraction of
    points :func:`knn_misclassified`."""
    return float(np.mean(knn_misclassified(Z, labels, n_neighbors)))


def heldout_knn_error(Z: np.ndarray, labels: np.ndarray, train: np.ndarray, n_neighbors: int = 5) -> float:
    """k-NN classification error of the held-out rows (``~train``) in the display: each test row is classified by
    the majority vote of its ``n_neighbors`` nearest **training** rows in Z (NeRV Sec. 5.3: a 5-NN classifier run
    on the embedded data, trained on the training part). Vote ties as :func:`knn_vote`; ties in distance as
    scikit-learn's KD-tree orders them."""
    from sklearn.neighbors import KDTree

    Z = _as_matrix("Z", Z)
    y = np.asarray(labels)
    train = np.asarray(train, dtype=bool)
    if y.shape != (Z.shape[0],) or train.shape != (Z.shape[0],):
        raise UserError(f"labels and train must be 1-D with {Z.shape[0]} entries; got {y.shape} and {train.shape}")
    k = int(n_neighbors)
    if not 1 <= k <= int(train.sum()) or train.all():
        raise UserError(f"need at least {k} training rows and one test row; got {int(train.sum())} and "
                         f"{int((~train).sum())}")
    codes, y_codes = np.unique(y, return_inverse=True)
    nb = KDTree(Z[train]).query(Z[~train], k=k, return_distance=False)
    predicted = knn_vote(y_codes[train][nb])
    return float(np.mean(predicted != y_codes[~train]))


def knn_vote(neighbour_codes: np.ndarray) -> np.ndarray:
    """The class each row of ``neighbour_codes`` (n, k) votes for: the most frequent code among the k
    neighbours (integer class codes >= 0, nearest neighbour first); a tied vote goes to the tied class that has
    the nearest neighbour, i.e. the tied class met first along the row (the rule of :func:`knn_error`; also what
    ``collections.Counter(row).most_common(1)`` returns). Memory O(n * classes)."""
    nb = np.asarray(neighbour_codes, dtype=np.int64)
    n, k = nb.shape
    counts = np.zeros((n, int(nb.max()) + 1), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(n), k), nb.ravel()), 1)
    winner = counts == counts.max(axis=1, keepdims=True)
    first = np.argmax(winner[np.arange(n)[:, None], nb], axis=1)  # nearest neighbour of a winning class
    return nb[np.arange(n), first]


def f_measure(precision: float | np.ndarray, recall: float | np.ndarray) -> float | np.ndarray:
    """F = 2 P R / (P + R) (Sec. 4.3.2) on *goodness* values P, R in [0, 1]; 0 where P + R = 0."""
    P = np.asarray(precision, dtype=np.float64)
    R = np.asarray(recall, dtype=np.float64)
    s = P + R
    F = np.divide(2.0 * P * R, s, out=np.zeros(np.broadcast(P, R).shape), where=s > 0)
    return float(F) if F.ndim == 0 else F


def rank_f_measure(X: np.ndarray, Z: np.ndarray, n_neighbors: float = 20, *, ties: str = "mean",
                   max_samples: int | None = DEFAULT_MAX_SAMPLES, random_state: int | None = 0) -> float:
    """The parameter-selection criterion of Sec. 4.3.2: :func:`f_measure` of the mean rank-based smoothed
    precision and recall taken as goodness, P = 1 - precision error, R = 1 - recall error ([ours]:
    the paper does not say so, but F on errors would reward bad displays). Largest F wins."""
    e = rank_smoothed_precision_recall(X, Z, n_neighbors, ties=ties, max_samples=max_samples,
                                       random_state=random_state)
    return float(f_measure(1.0 - e.precision, 1.0 - e.recall))


# --------------------------------------------------------------------------------------------------------
# the measures of one display (Sec. 4.3.1), as the score step stores them per run
# --------------------------------------------------------------------------------------------------------

#: Input-neighbourhood scale of every measure (Sec. 4.3.1): effective k, relevant set size, T/C's k.
NERV_SCALE = 20
#: Largest retrieved-set size of the mean precision / recall curve (Fig. 5).
NERV_K_RETRIEVED = 100
#: k of the classification error (Table 2).
NERV_KNN = 5
#: Default largest k of the trustworthiness and continuity curves.
NERV_K_MAX = 50


def nerv_measures(X: np.ndarray, Z: np.ndarray, labels: np.ndarray, *, k_max: int = NERV_K_MAX, joint: bool = False,
                  pr_relevant: int | None = None, pr_k_max: int | None = None
                  ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Every measure of the paper's Sec. 4.3.1 for display ``Z`` of data ``X``: (scores, curves).

    Scores: ``smoothed_precision_error`` / ``smoothed_recall_error`` (costs, lower is better),
    ``rank_precision_error`` / ``rank_recall_error`` (normalised rank-based errors), ``precision_20`` /
    ``recall_20`` (mean precision and recall with 20 relevant and 20 retrieved neighbours, equal by definition),
    ``pr_auc`` (trapezoidal area under mean precision as a function of mean recall over k = 1..100 retrieved),
    ``trustworthiness_20``, ``continuity_20`` and ``knn5_error``; with ``joint`` the smoothed precision and recall
    "in the t-NeRV sense" (Eq. 8 on joint probabilities, Fig. 9E); with ``pr_relevant`` r the mean precision at
    k = r of the precision-recall curve for r relevant neighbours (``precision_recall_at_r``, Fig. 2).
    Curves: ``pr_k``, ``pr_precision``, ``pr_recall`` (r = 20, k = 1..100), ``t_curve``, ``c_curve`` (k = 1..
    ``k_max``) and, with ``pr_relevant``, ``pr_r_k``, ``pr_r_precision``, ``pr_r_recall`` (k = 1..``pr_k_max``,
    default 2r). Every curve's value at k does not depend on the curve's length, so one curve serves every figure
    that reads a prefix of it. Neighbourhood sizes shrink for tiny data sets (k < n / 2)."""
    n = X.shape[0]
    scale = min(NERV_SCALE, (n - 1) // 2)
    sp = smoothed_precision_recall(X, Z, scale)
    rp = rank_smoothed_precision_recall(X, Z, scale)
    curve = precision_recall_curve(X, Z, scale, min(NERV_K_RETRIEVED, n - 1))
    kk = max(scale, min(int(k_max), (n - 1) // 2))
    t = trustworthiness_curve(X, Z, kk)
    c = continuity_curve(X, Z, kk)
    scores = {
        "smoothed_precision_error": sp.precision, "smoothed_recall_error": sp.recall,
        "rank_precision_error": rp.precision, "rank_recall_error": rp.recall,
        "precision_20": float(curve.precision[scale - 1]), "recall_20": float(curve.recall[scale - 1]),
        "pr_auc": float(np.trapezoid(curve.precision, curve.recall)),
        "trustworthiness_20": float(t[scale - 1]), "continuity_20": float(c[scale - 1]),
        "knn5_error": knn_error(Z, labels, min(NERV_KNN, n - 1)),
    }
    curves = {"pr_k": curve.k, "pr_precision": curve.precision, "pr_recall": curve.recall, "t_curve": t,
              "c_curve": c}
    if joint:
        jp = joint_smoothed_precision_recall(X, Z)
        scores.update(joint_smoothed_precision_error=jp.precision, joint_smoothed_recall_error=jp.recall)
    if pr_relevant:
        r = min(int(pr_relevant), n - 1)
        pr = precision_recall_curve(X, Z, n_relevant=r, k_max=min(int(pr_k_max or 2 * int(pr_relevant)), n - 1))
        scores["precision_recall_at_r"] = float(pr.precision[r - 1])
        curves.update(pr_r_k=pr.k, pr_r_precision=pr.precision, pr_r_recall=pr.recall)
    return scores, curves
