"""Quality measures of Venna et al. (2010) against brute-force / dense references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from sklearn.manifold import trustworthiness as sk_trustworthiness
from sklearn.neighbors import KNeighborsClassifier

from cova.metrics.neighborhood import continuity, trustworthiness
from cova.metrics.retrieval import (
    continuity_curve,
    f_measure,
    joint_smoothed_precision_recall,
    knn_error,
    knn_misclassified,
    mean_precision_recall,
    precision_recall_curve,
    rank_f_measure,
    rank_smoothed_precision_recall,
    smoothed_precision_recall,
    trustworthiness_curve,
)

# ------------------------------------------------------------------------------------------------ references

def _sqd(A: np.ndarray) -> np.ndarray:
    return ((A[:, None, :] - A[None, :, :]) ** 2).sum(-1)


def _orders(A: np.ndarray) -> list[list[int]]:
    """For every i, the other points sorted by (squared distance, index)."""
    D = _sqd(A)
    n = len(A)
    return [sorted((j for j in range(n) if j != i), key=lambda j: (D[i, j], j)) for i in range(n)]


def _brute_trust(X: np.ndarray, Z: np.ndarray, k: int, rows=None) -> float:
    """Kaski et al. (2003) with the dredviz normaliser, written out over explicit rank lists."""
    n = len(X)
    ox, oz = _orders(X), _orders(Z)
    rows = range(n) if rows is None else rows
    m = len(rows)
    total = 0
    for i in rows:
        rank = {j: pos + 1 for pos, j in enumerate(ox[i])}
        in_x = set(ox[i][:k])
        total += sum(rank[j] - k for j in oz[i][:k] if j not in in_x)
    A = 2.0 / (m * k * (2 * n - 3 * k - 1)) if k < n / 2 else (
        2.0 / (m * (n - k) * (n - k - 1)) if k < n - 1 else 0.0)
    return 1.0 - A * total


def _beta_for(d2: np.ndarray, k: float) -> float:
    """Independent calibration: brentq on log beta for entropy log k of softmax(-beta d2)."""
    d2 = d2 - d2.min()

    def h(logb: float) -> float:
        a = -math.exp(logb) * d2
        a -= a.max()
        p = np.exp(a) / np.exp(a).sum()
        nz = p > 0
        return float(-(p[nz] * np.log(p[nz])).sum()) - math.log(k)

    return math.exp(brentq(h, -30, 30, xtol=1e-14))


def _kl_rows(lp: np.ndarray, lq: np.ndarray) -> float:
    return float((np.exp(lp) * (lp - lq)).sum())


def _lsm(a: np.ndarray) -> np.ndarray:
    return a - (a.max() + np.log(np.exp(a - a.max()).sum()))


# ------------------------------------------------------------------------------------------------ T and C

def test_curves_match_sklearn_and_cova_trustworthiness():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6))
    Z = X[:, :2] + 0.3 * rng.normal(size=(120, 2))
    K = 40
    T = trustworthiness_curve(X, Z, K)
    C = continuity_curve(X, Z, K)
    for k in range(1, K + 1):
        assert abs(T[k - 1] - sk_trustworthiness(X, Z, n_neighbors=k)) < 1e-10
        assert abs(C[k - 1] - sk_trustworthiness(Z, X, n_neighbors=k)) < 1e-10
        assert T[k - 1] == trustworthiness(X, Z, k)
        assert C[k - 1] == continuity(X, Z, k)
    assert np.all(trustworthiness_curve(X, X, 20) == 1.0)


def test_curves_match_brute_force_ranks_with_ties():
    rng = np.random.default_rng(1)
    n = 26
    X = rng.integers(0, 3, size=(n, 3)).astype(float)  # many exact distance ties
    Z = rng.integers(0, 4, size=(n, 2)).astype(float)
    T = trustworthiness_curve(X, Z, n - 1)
    C = continuity_curve(X, Z, n - 1)
    for k in range(1, n):  # includes k >= n/2 (dredviz normaliser) and k = n - 1
        assert abs(T[k - 1] - _brute_trust(X, Z, k)) < 1e-12
        assert abs(C[k - 1] - _brute_trust(Z, X, k)) < 1e-12


def test_curve_query_subsample():
    rng = np.random.default_rng(2)
    n, m = 50, 17
    X = rng.normal(size=(n, 4))
    Z = rng.normal(size=(n, 2))
    rows = np.sort(np.random.default_rng(7).choice(n, size=m, replace=False))
    T = trustworthiness_curve(X, Z, 10, max_samples=m, random_state=7)
    for k in (1, 5, 10):
        assert abs(T[k - 1] - _brute_trust(X, Z, k, rows=list(rows))) < 1e-12


# ------------------------------------------------------------------------------------------------ precision / recall

def test_precision_recall_matches_set_based_brute_force():
    rng = np.random.default_rng(3)
    n, r, K = 40, 6, 15
    X = rng.integers(0, 3, size=(n, 3)).astype(float)  # ties: lower index first
    Z = rng.normal(size=(n, 2))
    ox, oz = _orders(X), _orders(Z)
    c = precision_recall_curve(X, Z, n_relevant=r, k_max=K)
    for k in range(1, K + 1):
        tp = [len(set(ox[i][:r]) & set(oz[i][:k])) for i in range(n)]
        assert abs(c.precision[k - 1] - np.mean([t / k for t in tp])) < 1e-12
        assert abs(c.recall[k - 1] - np.mean([t / r for t in tp])) < 1e-12
    p, rc = mean_precision_recall(X, Z, n_relevant=r, n_retrieved=r)
    assert p == rc  # k = r
    p1, r1 = mean_precision_recall(Z, Z, n_relevant=10, n_retrieved=10)
    assert p1 == 1.0 and r1 == 1.0
    c1 = precision_recall_curve(Z, Z, n_relevant=10, k_max=20)
    assert np.all(c1.precision[:10] == 1.0) and np.all(c1.recall[9:] == 1.0)


# ------------------------------------------------------------------------------------------------ smoothed

def _dense_smoothed(X: np.ndarray, Z: np.ndarray, k: float, rows=None) -> tuple[float, float]:
    n = len(X)
    rows = np.arange(n) if rows is None else rows
    DX, DZ = np.sqrt(_sqd(X)), np.sqrt(_sqd(Z))
    sx = np.mean([DX[i, j] for i in rows for j in range(n) if j != i])
    sz = np.mean([DZ[i, j] for i in rows for j in range(n) if j != i])
    prec = rec = 0.0
    for i in rows:
        o = np.array([j for j in range(n) if j != i])
        dx2, dz2 = (DX[i, o] / sx) ** 2, (DZ[i, o] / sz) ** 2
        b = _beta_for(dx2, k)
        lp, lq = _lsm(-b * dx2), _lsm(-b * dz2)
        rec += _kl_rows(lp, lq)
        prec += _kl_rows(lq, lp)
    return prec / len(rows), rec / len(rows)


def test_smoothed_measures_match_dense_reference():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 5))
    Z = X[:, :2] + 0.5 * rng.normal(size=(60, 2))
    s = smoothed_precision_recall(X, Z, 8)
    p, r = _dense_smoothed(X, Z, 8)
    assert abs(s.precision - p) < 1e-7 * p and abs(s.recall - r) < 1e-7 * r
    s2 = smoothed_precision_recall(X, 7.0 * Z + 3.0, 8)  # invariant to the display's scale (mean-1 rule)
    assert abs(s2.precision - s.precision) < 1e-9 and abs(s2.recall - s.recall) < 1e-9
    assert max(smoothed_precision_recall(X, X, 8)) < 1e-12
    rows = np.sort(np.random.default_rng(3).choice(60, size=25, replace=False))
    s3 = smoothed_precision_recall(X, Z, 8, max_samples=25, random_state=3)
    p3, r3 = _dense_smoothed(X, Z, 8, rows)
    assert abs(s3.precision - p3) < 1e-7 * p3 and abs(s3.recall - r3) < 1e-7 * r3


def _dense_rank(X: np.ndarray, Z: np.ndarray, k: float, best: bool) -> tuple[float, float]:
    n = len(X)
    ox = _orders(X)
    DZ = _sqd(Z)
    Rx = np.zeros((n, n), int)
    Ry = np.zeros((n, n), int)
    for i in range(n):
        for pos, j in enumerate(ox[i]):
            Rx[i, j] = pos + 1
        oz = sorted((j for j in range(n) if j != i), key=lambda j: (DZ[i, j], Rx[i, j] if best else -Rx[i, j]))
        for pos, j in enumerate(oz):
            Ry[i, j] = pos + 1
    b = _beta_for(np.arange(1, n, dtype=float) ** 2, k)
    prec = rec = pmax = rmax = 0.0
    for i in range(n):
        o = [j for j in range(n) if j != i]
        lp = _lsm(-b * Rx[i, o].astype(float) ** 2)
        lq = _lsm(-b * Ry[i, o].astype(float) ** 2)
        lrev = _lsm(-b * (n - Rx[i, o]).astype(float) ** 2)
        rec += _kl_rows(lp, lq)
        prec += _kl_rows(lq, lp)
        rmax += _kl_rows(lp, lrev)
        pmax += _kl_rows(lrev, lp)
    return prec / pmax, rec / rmax


def test_rank_measures_match_dense_reference_with_ties():
    rng = np.random.default_rng(5)
    n = 45
    X = rng.normal(size=(n, 4))
    Z = rng.integers(0, 4, size=(n, 2)).astype(float)  # output ties: broken by input rank
    for ties, best in (("best", True), ("worst", False)):
        s = rank_smoothed_precision_recall(X, Z, 6, ties=ties)
        p, r = _dense_rank(X, Z, 6, best)
        assert abs(s.precision - p) < 1e-8 * p and abs(s.recall - r) < 1e-8 * r
    sb = rank_smoothed_precision_recall(X, Z, 6, ties="best")
    sw = rank_smoothed_precision_recall(X, Z, 6, ties="worst")
    sm = rank_smoothed_precision_recall(X, Z, 6, ties="mean")
    assert sb.recall < sw.recall and abs(sm.recall - 0.5 * (sb.recall + sw.recall)) < 1e-12
    assert max(rank_smoothed_precision_recall(X, X, 6)) < 1e-12
    assert rank_f_measure(X, X, 6) == pytest.approx(1.0)
    assert 0.0 < sm.precision < 1.0 and 0.0 < sm.recall < 1.0


def test_f_measure():
    assert f_measure(0.5, 0.5) == 0.5
    assert f_measure(1.0, 0.0) == 0.0 and f_measure(0.0, 0.0) == 0.0
    assert np.allclose(f_measure(np.array([0.2, 0.9]), np.array([0.8, 0.9])), [0.32, 0.9])


def test_joint_measure_is_eq8_terms():
    from cova.metrics.retrieval import calibrate_precisions, log_conditional_probabilities
    from cova.objectives.nerv import joint_log_probabilities, tnerv_cost_and_gradient

    rng = np.random.default_rng(6)
    X = rng.normal(size=(50, 4))
    Z = rng.normal(size=(50, 2))
    j = joint_smoothed_precision_recall(X, Z, 10)
    D2 = _sqd(X)
    D2 /= np.sqrt(D2)[~np.eye(50, dtype=bool)].mean() ** 2
    lp = joint_log_probabilities(log_conditional_probabilities(D2, calibrate_precisions(D2, 10)))
    P = np.exp(lp)
    assert abs(tnerv_cost_and_gradient(Z, P, 1.0, log_P=lp)[0] - j.recall) < 1e-10
    assert abs(tnerv_cost_and_gradient(Z, P, 0.0, log_P=lp)[0] - j.precision) < 1e-10


# ------------------------------------------------------------------------------------------------ kNN error

def _sk_loo_error(Z: np.ndarray, y: np.ndarray, k: int) -> float:
    n = len(y)
    wrong = sum(int(KNeighborsClassifier(n_neighbors=k).fit(np.delete(Z, i, 0), np.delete(y, i))
                    .predict(Z[i:i + 1])[0] != y[i]) for i in range(n))
    return wrong / n


def test_knn_error_matches_sklearn_leave_one_out():
    """No vote ties: 2 classes with 5 neighbours (odd vote), 3 classes with 1 neighbour."""
    rng = np.random.default_rng(7)
    n = 90
    y = rng.integers(0, 3, size=n)
    Z = rng.normal(size=(n, 2)) + 0.8 * y[:, None]
    y2 = (y > 0).astype(int)
    e2 = knn_error(Z, y2)
    assert e2 == _sk_loo_error(Z, y2, 5) and 0.0 < e2 < 0.5
    assert knn_error(Z, np.where(y2 == 1, "b", "a")) == e2
    assert knn_error(Z, y, n_neighbors=1) == _sk_loo_error(Z, y, 1)


def test_knn_misclassified_marks_the_points_sklearn_misclassifies():
    """Point by point against scikit-learn's leave-one-out 5-NN on two classes (an odd vote: no ties)."""
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, size=60)
    Z = rng.normal(size=(60, 2)) + 0.9 * y[:, None]
    wrong = knn_misclassified(Z, y)
    sk = np.array([KNeighborsClassifier(n_neighbors=5).fit(np.delete(Z, i, 0), np.delete(y, i))
                   .predict(Z[i:i + 1])[0] != y[i] for i in range(60)])
    assert wrong.dtype == bool and 0 < wrong.sum() < 30
    np.testing.assert_array_equal(wrong, sk)
    assert knn_error(Z, y) == wrong.mean()


def test_knn_error_vote_tie_goes_to_nearest_class():
    """k = 4 on a line. Worked by hand: points 0, 2, 4 have 2-2 votes between classes 1 and 2 whose nearest
    neighbour is of class 2, points 1, 3 lose 3-1, points 5, 6 are outvoted: every point is wrong. With
    sklearn's smallest-label rule points 0, 2, 4 would be right (4/7); ours does not depend on the label
    names (swapping labels 1 and 2 gives the same error)."""
    Z = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [50.0], [51.0]])
    y = np.array([1, 2, 1, 2, 1, 0, 0])
    assert knn_error(Z, y, n_neighbors=4) == 1.0
    assert knn_error(Z, np.array([2, 1, 2, 1, 2, 0, 0]), n_neighbors=4) == 1.0
