"""Scores at scale (cova.metrics.subsample, cova.metrics.registry.query_rows): above ``exact_max_points`` rows S_n,
S_s, trustworthiness and continuity are estimated from seeded query rows, with the confidence interval the record
states; below it they are the exact scores, unchanged."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from cova.embedding import Embedding
from cova.inputs import Inputs
from cova.io import dumps_json
from cova.metrics.cohort import s_n_readings, s_n_readings_per_row, s_s, s_s_per_row
from cova.metrics.neighborhood import trustworthiness_continuity, trustworthiness_continuity_per_row
from cova.metrics.registry import ScoreData, evaluate, query_rows
from cova.metrics.score import score_run
from cova.metrics.subsample import Z_95, estimate, pairwise_subsample

N, C, K = 3000, 5, 12
#: The lowered threshold and query count of these tests (the defaults are 20,000 and 10,000).
SMALL = {"exact_max_points": 1000, "n_queries": 1000}
SUBSAMPLED = ("s_n", "s_n_cohort_kbar", "trustworthiness", "continuity")


@pytest.fixture(scope="module")
def data():
    """X (3,000 × 20, five Gaussian cohorts), labels, prototypes and three embeddings of different dimension: a
    noisy 2-D projection, a 3-D and a 10-D one (whose neighbours come from brute force, not the KD-tree)."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(C), N // C)
    X = rng.normal(size=(C, 20))[y] * 1.5 + rng.normal(size=(N, 20))
    Z2 = X[:, :2] + 0.5 * rng.normal(size=(N, 2))
    Z3 = np.ascontiguousarray(X[:, 2:5])
    Z10 = np.ascontiguousarray(X[:, 5:15])
    P = rng.normal(size=(C, 2)) * 3
    return X, y, P, {"2-D": Z2, "3-D": Z3, "10-D": Z10}


@pytest.fixture(scope="module")
def exact(data):
    """The exact scores of each embedding, from the exact functions."""
    X, y, _, embeddings = data
    out = {}
    for name, Z in embeddings.items():
        t, c = trustworthiness_continuity(X, Z, K)
        common, own = s_n_readings(X, Z, y)
        out[name] = {"s_n": common, "s_n_cohort_kbar": own, "s_s": s_s(Z, y), "trustworthiness": t,
                     "continuity": c}
    return out


def test_query_rows_are_a_function_of_n_and_the_seed_only(data):
    X, y, _, embeddings = data
    rows = [query_rows(ScoreData(Z=Z, n_cohorts=C, X=X, labels=y, **SMALL)) for Z in embeddings.values()]
    np.testing.assert_array_equal(rows[0], rows[1])  # two embeddings of one data set: the same queries
    assert rows[0].size == SMALL["n_queries"] and np.all(np.diff(rows[0]) > 0)
    np.testing.assert_array_equal(rows[0], pairwise_subsample(N, SMALL["n_queries"], exact_max_points=1000))
    assert query_rows(ScoreData(Z=embeddings["2-D"], n_cohorts=C)) is None  # 3,000 <= the default 20,000
    assert query_rows(ScoreData(Z=embeddings["2-D"], n_cohorts=C, exact_max_points=1000, n_queries=N)) is None
    assert not np.array_equal(rows[0], pairwise_subsample(N, 1000, seed=1, exact_max_points=1000))


def test_per_row_terms_average_to_the_exact_scores(data, exact):
    """Over every row the per-row terms are the exact scores (the estimator's mean is the score, no bias)."""
    X, y, _, embeddings = data
    every = np.arange(N)
    for name, Z in embeddings.items():
        t_i, c_i = trustworthiness_continuity_per_row(X, Z, K, every)
        common, own = s_n_readings_per_row(X, Z, y, every)
        terms = {"s_n": common, "s_n_cohort_kbar": own, "s_s": s_s_per_row(Z, y, every), "trustworthiness": t_i,
                 "continuity": c_i}
        for key, v in terms.items():
            assert np.mean(v) == pytest.approx(exact[name][key], rel=1e-12, abs=1e-12), key
        full = estimate(t_i, N)
        assert full.se == 0.0 and full.n_queries == N  # every row: the estimate is the exact score


def test_subsampled_scores_are_within_the_stated_ci_of_the_exact_ones(data, exact):
    X, y, _, embeddings = data
    for name, Z in embeddings.items():
        got = evaluate(ScoreData(Z=Z, n_cohorts=C, X=X, labels=y, n_neighbors=K, **SMALL),
                       names=["s_n", "s_s", "trustworthiness_continuity"])
        # S_s is subsampled only where its exact search is brute force (> 8 columns); else it stays exact
        keys = SUBSAMPLED + ("s_s",) if Z.shape[1] > 8 else SUBSAMPLED
        for key in keys:
            assert got[f"{key}_ci95"] > 0
            assert abs(got[key] - exact[name][key]) <= got[f"{key}_ci95"], (name, key, got[key], exact[name][key])
        if Z.shape[1] <= 8:
            assert got["s_s"] == exact[name]["s_s"] and "s_s_ci95" not in got


def test_the_confidence_interval_covers_the_mean_95_percent_of_the_time(data):
    """The CI formula (finite-population correction included) on the trustworthiness terms of all 3,000 rows:
    over 400 seeded draws of 1,000 queries the interval holds the exact mean in 95 % of them, within 3.3 binomial
    standard deviations (±3.6 points)."""
    X, y, _, embeddings = data
    t_i, _ = trustworthiness_continuity_per_row(X, embeddings["2-D"], K, np.arange(N))
    truth = float(np.mean(t_i))
    rng = np.random.default_rng(0)
    draws = 400
    hits = 0
    for _ in range(draws):
        e = estimate(t_i[rng.choice(N, size=1000, replace=False)], N)
        hits += abs(e.value - truth) <= e.ci95
    assert abs(hits / draws - 0.95) <= 3.3 * math.sqrt(0.95 * 0.05 / draws)


def test_estimate_formula():
    v = np.array([0.0, 1.0, 1.0, 0.5])
    e = estimate(v, 10)
    assert e.value == 0.625
    assert e.se == pytest.approx(math.sqrt((1 - 4 / 10) * np.var(v, ddof=1) / 4))
    assert e.ci95 == pytest.approx(Z_95 * e.se) and e.n_queries == 4 and e.n == 10
    with pytest.raises(ValueError, match="2 <= queries <= n"):
        estimate(v, 3)


def test_exact_path_below_the_threshold_is_unchanged(data, exact):
    """At most exact_max_points rows: the values of the exact functions, bit for bit, and no extra key."""
    X, y, _, embeddings = data
    for name, Z in embeddings.items():
        got = evaluate(ScoreData(Z=Z, n_cohorts=C, X=X, labels=y, n_neighbors=K, exact_max_points=N, n_queries=10),
                       names=["s_n", "s_s", "trustworthiness_continuity"])
        assert got == exact[name]


def test_the_record_states_what_is_subsampled(data):
    X, y, P, embeddings = data
    inputs = Inputs(X=X, labels=y, label_names=[str(j) for j in range(C)], prototypes=P)
    scores = score_run(inputs, Embedding(Z=embeddings["2-D"]), n_neighbors=K, **SMALL)
    for key in SUBSAMPLED:
        assert scores[f"{key}_se"] > 0 and scores[f"{key}_ci95"] == pytest.approx(Z_95 * scores[f"{key}_se"])
    assert scores["n_queries"] == SMALL["n_queries"]
    for key in ("s_s", "s_c", "s_c_aligned", "s_c_r"):  # O(n log n), O(n c), O(n + c²): exact, no CI
        assert key in scores and f"{key}_ci95" not in scores
    assert json.loads(dumps_json(scores)) == pytest.approx(scores)  # strict JSON, numbers only
    exact = score_run(inputs, Embedding(Z=embeddings["2-D"]), n_neighbors=K)  # 3,000 rows: exact by default
    assert "n_queries" not in exact and not any(k.endswith(("_se", "_ci95")) for k in exact)


def test_bad_query_rows_are_refused(data):
    X, y, _, embeddings = data
    with pytest.raises(ValueError, match="distinct sample indices"):
        trustworthiness_continuity_per_row(X, embeddings["2-D"], K, np.array([0, 0, 1]))
    with pytest.raises(ValueError, match="distinct sample indices"):
        s_s_per_row(embeddings["2-D"], y, np.array([N]))
    with pytest.raises(ValueError, match="exact_max_points must be an integer >= 1"):
        pairwise_subsample(N, 100, exact_max_points=0)
