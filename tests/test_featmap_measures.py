"""featMAP Table 1 measures (cova.metrics.global_structure, cova.metrics.density, the k-NN accuracy series) against
scikit-learn, SciPy and brute-force loops, and their opt-in registration in the score step."""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.spatial.distance import cdist, pdist
from scipy.stats import spearmanr
from sklearn.manifold import trustworthiness
from sklearn.model_selection import LeaveOneOut, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

import cova.metrics.registry as registry
from cova.affinity.fuzzy import fuzzy_graph
from cova.config import ConfigError, Plan, load_schema, resolve_overlay, validate_config
from cova.embedding import Embedding
from cova.metrics.density import local_radii, radius_correlation
from cova.metrics.display_neighbours import knn_accuracy, knn_accuracy_series
from cova.metrics.global_structure import (
    MAX_PAIRWISE_POINTS,
    centroid_triplet_accuracy,
    condensed_distances,
    normalized_stress,
    pairwise_subsample,
    shepard_goodness,
    shepard_goodness_and_stress,
)
from cova.metrics.registry import FEATMAP_KEYS, FEATMAP_KNN_KS, ScoreData, evaluate, nan_scores
from cova.metrics.score import score_run

ROOT = Path(__file__).resolve().parents[1]


def _blobs(n: int = 120, d: int = 6, c: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X (n, d) in c overlapping classes and a noisy 2-D view Z of it."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % c
    X = rng.normal(size=(n, d)) + 1.5 * rng.normal(size=(c, d))[labels]
    Z = X[:, :2] + rng.normal(0, 0.7, (n, 2))
    return X, Z, labels


def _featmap(X, Z, labels=None) -> dict[str, float]:
    return evaluate(ScoreData(Z=Z, n_cohorts=0, X=X, labels=labels), measures=["featmap"])


# ------------------------------------------------------------------------------------------------------------
# trustworthiness / continuity at K = 7 and the subsample
# ------------------------------------------------------------------------------------------------------------

def test_trustworthiness_continuity_k7_equal_scikit_learn():
    X, Z, labels = _blobs()
    got = _featmap(X, Z, labels)
    assert got["trustworthiness_k7"] == pytest.approx(trustworthiness(X, Z, n_neighbors=7), abs=1e-12)
    assert got["continuity_k7"] == pytest.approx(trustworthiness(Z, X, n_neighbors=7), abs=1e-12)
    assert got["trustworthiness_k7"] != pytest.approx(got["continuity_k7"], abs=1e-3)


def test_subsample_is_fixed_sized_and_depends_on_m_and_seed_only():
    a, b = pairwise_subsample(70_000), pairwise_subsample(70_000)
    assert a.size == MAX_PAIRWISE_POINTS == 10_000
    np.testing.assert_array_equal(a, b)
    assert np.all(np.diff(a) > 0) and a[0] >= 0 and a[-1] < 70_000
    assert not np.array_equal(a, pairwise_subsample(70_000, seed=1))
    np.testing.assert_array_equal(pairwise_subsample(9_000), np.arange(9_000))
    with pytest.raises(ValueError, match="max_points"):
        pairwise_subsample(100, max_points=1)


def test_registered_pairwise_measures_use_the_subsample(monkeypatch):
    X, Z, labels = _blobs(n=150)
    small = functools.partial(pairwise_subsample, max_points=60)
    monkeypatch.setattr(registry, "pairwise_subsample", small)
    got = _featmap(X, Z, labels)
    rows = small(150)
    assert rows.size == 60
    assert got["trustworthiness_k7"] == pytest.approx(trustworthiness(X[rows], Z[rows], n_neighbors=7), abs=1e-12)
    rho, stress = shepard_goodness_and_stress(X[rows], Z[rows])
    assert (got["shepard_goodness"], got["normalized_stress"]) == (rho, stress)
    assert got["shepard_goodness"] != pytest.approx(shepard_goodness(X, Z), abs=1e-6)
    # the measures of all points are not subsampled
    assert got["centroid_triplet_accuracy"] == centroid_triplet_accuracy(X, Z, labels)


# ------------------------------------------------------------------------------------------------------------
# k-NN accuracy series
# ------------------------------------------------------------------------------------------------------------

def _pacmap_rule(Z: np.ndarray, labels: np.ndarray, k: int) -> float:
    """Leave-one-out vote of the k nearest other points (distance ties to the lower index), the vote decided as
    PaCMAP's knn_clf does: ``Counter(neighbour labels).most_common(1)``."""
    D = cdist(Z, Z, "sqeuclidean")
    hits = 0
    for i in range(len(Z)):
        order = [j for j in np.lexsort((np.arange(len(Z)), D[i])) if j != i][:k]
        hits += Counter(labels[order].tolist()).most_common(1)[0][0] == labels[i]
    return hits / len(Z)


def test_knn_series_equals_scikit_learn_leave_one_out_when_no_vote_can_tie():
    X, Z, _ = _blobs(n=90, c=2)
    labels = (X[:, 0] + 0.5 * X[:, 1] > np.median(X[:, 0] + 0.5 * X[:, 1])).astype(int)
    odd = [1, 3, 5, 15, 25]  # two classes and an odd k: a vote is never tied
    got = knn_accuracy_series(Z, labels, odd)
    assert list(got) == odd
    for k in odd:
        clf = KNeighborsClassifier(n_neighbors=k).fit(Z, labels)
        assert got[k] == pytest.approx(np.mean(clf.predict(None) == labels), abs=1e-15)  # self excluded
    loo = cross_val_score(KNeighborsClassifier(n_neighbors=5), Z, labels, cv=LeaveOneOut()).mean()
    assert got[5] == pytest.approx(loo, abs=1e-15)
    assert len(set(got.values())) > 1


def test_knn_series_follows_pacmaps_vote_with_tied_votes_and_distances():
    rng = np.random.default_rng(3)
    Z = rng.integers(0, 6, size=(80, 2)).astype(float)  # a coarse grid: many equal distances and tied votes
    labels = rng.integers(0, 4, size=80) * 10
    got = knn_accuracy_series(Z, labels, FEATMAP_KNN_KS)
    assert list(got) == list(FEATMAP_KNN_KS)
    smallest_label_rule = {}
    for k in FEATMAP_KNN_KS:
        assert got[k] == pytest.approx(_pacmap_rule(Z, labels, k), abs=1e-15)
        assert got[k] == pytest.approx(knn_accuracy(Z, labels, k), abs=1e-15)
        clf = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(Z, labels)
        smallest_label_rule[k] = np.mean(clf.predict(None) == labels)
    # the data do exercise the tie rule: scikit-learn's (smallest tied label) scores differently
    assert any(smallest_label_rule[k] != pytest.approx(got[k], abs=1e-12) for k in FEATMAP_KNN_KS)


def test_knn_series_rejects_bad_labels_and_caps_k():
    X, Z, labels = _blobs(n=20)
    with pytest.raises(ValueError, match="labels"):
        knn_accuracy_series(Z, labels[:-1], [1])
    with pytest.raises(ValueError, match="ks"):
        knn_accuracy_series(Z, labels, [])
    assert knn_accuracy_series(Z, labels, [30])[30] == pytest.approx(knn_accuracy(Z, labels, 19), abs=1e-15)


# ------------------------------------------------------------------------------------------------------------
# Shepard goodness and normalized stress
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("d", [5, 40])  # exact differences / BLAS expansion of the distances
def test_condensed_distances_equal_pdist(d):
    A = np.random.default_rng(d).normal(size=(75, d))
    np.testing.assert_allclose(condensed_distances(A), pdist(A), rtol=1e-10, atol=1e-12)


def test_shepard_goodness_equals_scipy_spearman():
    X, Z, _ = _blobs(n=100, d=40)
    assert shepard_goodness(X, Z) == pytest.approx(spearmanr(pdist(X), pdist(Z))[0], abs=1e-10)
    G = np.random.default_rng(1).integers(0, 4, size=(60, 3)).astype(float)  # many tied distances
    H = G[:, :2] + (G[:, 2:] > 1)
    expected = spearmanr(pdist(G), pdist(H))[0]
    assert shepard_goodness(G, H) == pytest.approx(expected, abs=1e-12)
    assert expected != pytest.approx(np.corrcoef(pdist(G), pdist(H))[0, 1], abs=1e-3)  # ranks, not values


def test_normalized_stress_equals_a_double_loop():
    X, Z, _ = _blobs(n=50)
    m = len(X)
    dx = [np.linalg.norm(X[i] - X[j]) for i in range(m) for j in range(i + 1, m)]
    dz = [np.linalg.norm(Z[i] - Z[j]) for i in range(m) for j in range(i + 1, m)]
    num = den = 0.0
    for a, b in zip(dx, dz):
        a = (a - min(dx)) / (max(dx) - min(dx))
        b = (b - min(dz)) / (max(dz) - min(dz))
        num += (a - b) ** 2
        den += a * a
    assert normalized_stress(X, Z) == pytest.approx(np.sqrt(num / den), rel=1e-12)
    assert normalized_stress(X, 7.0 * Z + 3.0) == pytest.approx(normalized_stress(X, Z), rel=1e-12)
    assert normalized_stress(Z, Z @ np.array([[0.0, 2.0], [-2.0, 0.0]])) == pytest.approx(0.0, abs=1e-7)


def test_distance_measures_refuse_mismatched_rows_and_flag_constant_distances():
    X, Z, _ = _blobs(n=30)
    with pytest.raises(ValueError, match="rows"):
        shepard_goodness(X, Z[:-1])
    rho, stress = shepard_goodness_and_stress(X[:5], np.zeros((5, 2)))
    assert np.isnan(rho) and np.isnan(stress)


# ------------------------------------------------------------------------------------------------------------
# centroid triplets
# ------------------------------------------------------------------------------------------------------------

def _centroid_triplets_brute(X, Z, labels) -> float:
    classes = np.unique(labels)
    cx = {c: X[labels == c].mean(axis=0) for c in classes}
    cz = {c: Z[labels == c].mean(axis=0) for c in classes}
    pairs = [(classes[r], classes[c]) for r in range(len(classes)) for c in range(r)]  # (1,0), (2,0), (2,1), ...
    agree = total = 0
    for (a, b), (p, q) in itertools.combinations(pairs, 2):
        dx1, dx2 = np.linalg.norm(cx[a] - cx[b]), np.linalg.norm(cx[p] - cx[q])
        dz1, dz2 = np.linalg.norm(cz[a] - cz[b]), np.linalg.norm(cz[p] - cz[q])
        agree += (dx1 > dx2 and dz1 > dz2) or (dx1 <= dx2 and dz1 <= dz2)
        total += 1
    return agree / total


def test_centroid_triplet_accuracy_equals_a_loop_over_pairs_of_centroid_pairs():
    X, Z, labels = _blobs(n=140, c=7)
    got = centroid_triplet_accuracy(X, Z, labels)
    assert got == pytest.approx(_centroid_triplets_brute(X, Z, labels), abs=1e-15)
    assert 0.0 < got < 1.0


def test_centroid_triplet_accuracy_with_tied_distances_and_label_order():
    # class centres on the corners of a unit square (tied distances in X), labels not in sorted order of centres
    corners = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [3, 3]], dtype=float)
    labels = np.repeat(np.array([40, 10, 30, 20, 0]), 4)
    X = corners[np.repeat(np.arange(5), 4)]
    Z = np.random.default_rng(2).normal(size=(20, 2))
    assert centroid_triplet_accuracy(X, Z, labels) == pytest.approx(_centroid_triplets_brute(X, Z, labels),
                                                                    abs=1e-15)
    assert centroid_triplet_accuracy(X, X, labels) == 1.0
    assert np.isnan(centroid_triplet_accuracy(X[:8], Z[:8], labels[:8]))  # two classes: nothing to compare


# ------------------------------------------------------------------------------------------------------------
# local-radius correlation
# ------------------------------------------------------------------------------------------------------------

def _radii_brute(A: np.ndarray, P: np.ndarray) -> np.ndarray:
    D2 = cdist(A, A, "sqeuclidean")
    return np.log(1e-8 + (P * D2).sum(axis=1) / P.sum(axis=1))


def test_radius_correlation_equals_a_dense_computation():
    rng = np.random.default_rng(5)
    scale = np.where(np.arange(200) < 100, 1.0, 4.0)[:, None]  # two densities
    X = rng.normal(size=(200, 8)) * scale + 10.0 * (np.arange(200) >= 100)[:, None]
    Z = X[:, :2] * np.sqrt(scale) + rng.normal(0, 0.3, (200, 2))
    Px = fuzzy_graph(X, 15, random_state=0).P.toarray()
    Pz = fuzzy_graph(Z, 15, random_state=0).P.toarray()
    r_o, r_e = _radii_brute(X, Px), _radii_brute(Z, Pz)
    np.testing.assert_allclose(local_radii(X, Px), r_o, rtol=1e-12, atol=1e-12)
    got = radius_correlation(X, Z)
    assert got == pytest.approx(np.corrcoef(r_o, r_e)[0, 1], abs=1e-12)
    assert got > 0.5
    flat = rng.normal(size=(200, 2))  # density unrelated to X's
    assert radius_correlation(X, flat) < got - 0.3


def test_local_radii_reject_a_point_without_edges():
    A = np.random.default_rng(0).normal(size=(4, 2))
    P = np.zeros((4, 4))
    P[0, 1] = P[1, 0] = P[2, 3] = 1.0
    with pytest.raises(ValueError, match="1 points have no edge"):
        local_radii(A, P)
    with pytest.raises(ValueError, match="P must be"):
        local_radii(A, P[:3, :3])


# ------------------------------------------------------------------------------------------------------------
# opt-in registration
# ------------------------------------------------------------------------------------------------------------

def test_featmap_group_is_opt_in(toy_inputs):
    inp = toy_inputs
    Z = inp.prototypes[inp.labels] + np.random.default_rng(1).normal(0, 0.8, (inp.labels.size, 2))
    plain = score_run(inp, Embedding(Z=Z), n_neighbors=5, kappa=1)
    assert set(plain).isdisjoint(FEATMAP_KEYS)
    assert set(score_run(inp, Embedding(Z=Z), n_neighbors=5, kappa=1, measures=[])) == set(plain)
    opted = score_run(inp, Embedding(Z=Z), n_neighbors=5, kappa=1, measures=["featmap"])
    assert set(opted) == set(plain) | set(FEATMAP_KEYS)
    assert {k: opted[k] for k in plain} == plain
    assert opted["centroid_triplet_accuracy"] == centroid_triplet_accuracy(inp.X, Z, inp.labels)
    assert [opted[f"knn_accuracy_k{k}"] for k in FEATMAP_KNN_KS] == list(
        knn_accuracy_series(Z, inp.labels, FEATMAP_KNN_KS).values())
    degenerate = score_run(inp, Embedding(Z=np.full_like(Z, np.nan), status="degenerate"), measures=["featmap"])
    assert set(FEATMAP_KEYS) <= set(degenerate) and all(np.isnan(degenerate[k]) for k in FEATMAP_KEYS)
    with pytest.raises(ValueError, match="featmap"):
        score_run(inp, Embedding(Z=Z), measures=["featmapp"])


def test_featmap_measures_do_not_depend_on_the_thread_count():
    """A score job runs on its rule's threads, an in-process rescoring on the machine's: integer features (the
    digits') tie at the k-th distance of the fuzzy graphs, and the scores must still be the same bit for bit."""
    import numba
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(31)
    X = rng.integers(0, 4, size=(400, 20)).astype(np.float64)
    labels = np.arange(400) % 5
    Z = X @ rng.standard_normal((20, 2))
    before = numba.get_num_threads()
    runs = []
    try:
        for threads in (1, 4):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            with threadpool_limits(limits=threads):
                runs.append(_featmap(X, Z, labels))
    finally:
        numba.set_num_threads(before)
    assert runs[0].keys() == runs[1].keys()
    assert all(runs[0][k] == runs[1][k] or (np.isnan(runs[0][k]) and np.isnan(runs[1][k])) for k in runs[0])


def test_featmap_measures_without_labels_skip_the_label_measures():
    X, Z, _ = _blobs(n=60)
    data = ScoreData(Z=Z, n_cohorts=0, X=X)
    got = evaluate(data, measures=["featmap"])
    assert set(evaluate(data)) == {"trustworthiness", "continuity"}
    assert set(got) == {"trustworthiness", "continuity", "trustworthiness_k7", "continuity_k7", "shepard_goodness",
                        "normalized_stress", "radius_correlation"}
    assert set(nan_scores(data, measures=["featmap"])) == set(got)


def test_schema_names_every_registered_group():
    schema = load_schema()
    assert schema["$defs"]["measures"]["items"]["enum"] == registry.groups() == ["featmap", "nerv"]


def _ci_config():
    return resolve_overlay(yaml.safe_load((ROOT / "config/ci.yaml").read_text()), ROOT)


def test_per_run_measures_reach_only_the_runs_that_ask():
    config = _ci_config()
    item = copy.deepcopy(config["runs"][0])
    plain = Plan(config)
    config["runs"][0]["metrics"] = {"measures": ["featmap"]}
    validate_config(config)
    plan = Plan(config)
    entry = plan.entry_groups[item["methods"][0]][0]
    job = plan.method_jobs[entry]
    asked = plan.run_metrics(item["dataset"], plan.inputs_ids[item["inputs"]], job.method, job.params_id)
    assert asked == {**plain.metrics, "measures": ["featmap"]}
    others = [r for r in plan.runs() if (r[0], r[1]) != (item["dataset"], item["inputs"])]
    assert others
    untouched = 0
    for dataset, inputs, name in others:
        j = plan.method_jobs[name]
        before = plain.run_metrics(dataset, plain.inputs_ids[inputs], j.method, j.params_id)
        assert plan.run_metrics(dataset, plan.inputs_ids[inputs], j.method, j.params_id) == before
        if before == plain.metrics:  # runs the shipped config does not opt in (featMAP's own runs do)
            untouched += 1
            assert "measures" not in plan.run_metrics(dataset, plan.inputs_ids[inputs], j.method, j.params_id)
    assert untouched
    assert plan.all_targets() == plain.all_targets()  # no path changes


def test_config_rejects_an_unknown_group():
    config = _ci_config()
    config["runs"][0]["metrics"] = {"measures": ["table1"]}
    with pytest.raises(ConfigError, match="featmap"):
        validate_config(config)
    config = _ci_config()
    config["metrics"] = {**config.get("metrics", {}), "measures": ["featmap"]}
    validate_config(config)
    plan = Plan(config)
    assert plan.metrics["measures"] == ["featmap"]


def test_score_data_fields_cover_the_group_needs():
    fields = {f.name for f in dataclasses.fields(ScoreData)}
    group = [m for m in registry.METRICS.values() if m.group == "featmap"]
    assert [k for m in group for k in m.keys] == list(FEATMAP_KEYS)
    assert all(m.needs <= fields for m in group)
