"""Input feature transforms, cohort assignments and the citation / cluster-graph proximities (cova.features)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from cova.cohorts import citation_similarity, cluster_graph, cohort_proximity
from cova.datasets import Dataset, load
from cova.features import assign_cohorts, cosine_knn_similarity, transform_features
from cova.inputs import Inputs, build_inputs

CORA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "cora"  # the project's mirror beside the clone


def test_citation_similarity_matches_the_double_sum():
    rng = np.random.default_rng(0)
    l, c = 30, 4
    labels = rng.integers(0, c, l)
    labels[:c] = np.arange(c)
    theta = sp.random(l, l, density=0.1, random_state=1, data_rvs=lambda k: np.ones(k)).tocsr()
    T = theta.toarray()
    n = np.bincount(labels, minlength=c)
    ref = np.zeros((c, c))
    for i in range(c):
        for j in range(c):
            total = sum(T[p, q] + T[q, p] for p in np.flatnonzero(labels == i) for q in np.flatnonzero(labels == j))
            ref[i, j] = 0.5 * total / (n[i] + n[j])
    np.testing.assert_allclose(citation_similarity(theta, labels, c), ref, rtol=1e-12)
    M, kind = cohort_proximity("citation", labels=labels, n_cohorts=c, relations=theta)
    assert kind == "similarity" and np.allclose(M, ref)
    with pytest.raises(ValueError, match="relation matrix"):
        cohort_proximity("citation", labels=labels, n_cohorts=c)


def test_cluster_graph_links_each_cohort_to_its_two_most_similar_centres():
    # centres on a circle in the positive quadrant: cosine order = angular order
    angles = np.linspace(0.05, 1.5, 6)
    centres = np.c_[np.cos(angles), np.sin(angles)]
    labels = np.repeat(np.arange(6), 3)
    X = centres[labels] * (1 + 0.01 * np.arange(18))[:, None]  # scaling a row leaves its direction unchanged
    A = cluster_graph(X, labels, 6, n_neighbors=2)
    assert np.array_equal(A, A.T) and np.all(np.diag(A) == 0) and set(np.unique(A)) <= {0.0, 1.0}
    assert A[0, 1] == A[0, 2] == 1 and A[0, 3] == 0  # the ends of the arc link to their two neighbours
    assert np.all(A.sum(axis=1) >= 2)


def test_cosine_knn_similarity_is_sparse_symmetric_without_diagonal():
    rng = np.random.default_rng(2)
    X = rng.uniform(0.1, 1.0, (200, 8))
    S = cosine_knn_similarity(X, 5)
    assert (S != S.T).nnz == 0 and S.diagonal().max() == 0
    assert S.nnz <= 2 * 5 * 200 and np.all((S.getnnz(axis=1)) >= 5)
    with pytest.raises(ValueError, match="all-zero"):
        cosine_knn_similarity(np.vstack([X, np.zeros(8)]), 5)


def test_pca_features_feed_weights_scores_and_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(3), 40)
    ds = Dataset(rng.normal(size=(120, 12)) + labels[:, None], labels, ["a", "b", "c"])
    spec = {"features": {"kind": "pca", "n_components": 4}, "weights": {"kind": "gaussian_perplexity",
            "perplexity": 10}, "confidence": {"kind": "eq12"}, "prototypes": {"kind": "mds", "proximity": "centres"}}
    inp = build_inputs(ds, spec, seed=0)
    assert inp.X.shape == (120, 4) and inp.spec["features_used"] == "PCA to 4 dimensions"
    Xc = ds.X - ds.X.mean(axis=0)
    top = np.linalg.svd(Xc, full_matrices=False)[2][:4]
    np.testing.assert_allclose(np.abs(inp.X), np.abs(Xc @ top.T), atol=1e-10)  # the top-4 principal scores
    ds.save(tmp_path / "d.npz")
    inp.save(tmp_path / "i.npz", with_X=True)
    back = Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz")
    assert np.array_equal(back.X, inp.X) and np.array_equal(back.labels, labels)
    inp.save(tmp_path / "raw.npz")
    assert Inputs.load(tmp_path / "d.npz", tmp_path / "raw.npz").X.shape == (120, 12)
    with pytest.raises(ValueError, match="n_components"):
        transform_features(ds, {"kind": "pca", "n_components": 13}, labels=labels)


def test_compacted_features_from_w_use_training_columns_and_no_test_label():
    """COVA Fig. 8: X = S~ Y M^-1 with S~ = l x W (perplexity graph of the PCA features) restricted to the
    training columns; entry (i, j) is l x the W mass from i to training samples of cohort j over their number."""
    from cova.affinity import build_weights
    from cova.inputs import stratified_split

    rng = np.random.default_rng(5)
    labels = np.repeat(np.arange(3), 30)
    ds = Dataset(rng.normal(size=(90, 8)) + 1.5 * labels[:, None], labels, ["a", "b", "c"])
    train = stratified_split(labels, 0.4, seed=0)
    spec = {"kind": "compacted", "similarity": "weights", "base": {"kind": "pca", "n_components": 5},
            "weights": {"kind": "gaussian_perplexity", "perplexity": 8}, "relations": False}
    X, facts = transform_features(ds, dict(spec), labels=labels, seed=0, fit_rows=train)
    Xb, _ = transform_features(ds, {"kind": "pca", "n_components": 5}, labels=labels, fit_rows=train)
    W = build_weights(Xb, "gaussian_perplexity", perplexity=8, random_state=0).toarray() * 90
    reps = np.flatnonzero(train)
    expect = np.stack([W[:, reps[labels[reps] == j]].sum(axis=1) / np.sum(labels[reps] == j) for j in range(3)], 1)
    np.testing.assert_allclose(X, expect, rtol=1e-12)
    assert X.shape == (90, 3) and "36 training rows" in facts["features_used"]
    assert np.mean(np.argmax(X, axis=1) == labels) > 0.9  # separated classes: most mass to the own cohort
    relabelled = labels.copy()
    relabelled[~train] = (labels[~train] + 1) % 3  # the test rows' labels are never read
    np.testing.assert_array_equal(transform_features(ds, dict(spec), labels=relabelled, seed=0, fit_rows=train)[0], X)
    with pytest.raises(ValueError, match="relations: false"):
        transform_features(ds, {**spec, "relations": True}, labels=labels)
    with pytest.raises(ValueError, match="n_neighbors"):
        transform_features(ds, {**spec, "n_neighbors": 5}, labels=labels)


def test_spectral_cohorts_find_separated_groups_deterministically(tmp_path):
    rng = np.random.default_rng(4)
    truth = np.repeat(np.arange(3), [50, 40, 30])
    X = np.abs(rng.normal(scale=0.05, size=(120, 6)))
    X[np.arange(120), truth * 2] += 1.0  # each group lives on its own coordinates: cosine-separated
    ds = Dataset(X, np.zeros(120, dtype=int), ["all"])
    labels, names = assign_cohorts(ds, {"kind": "spectral", "n_clusters": 3, "n_neighbors": 10}, seed=0)
    assert names == ["cluster 1", "cluster 2", "cluster 3"]
    assert np.array_equal(labels, truth)  # clusters renumbered by decreasing size
    again, _ = assign_cohorts(ds, {"kind": "spectral", "n_clusters": 3, "n_neighbors": 10}, seed=0)
    assert np.array_equal(labels, again)
    spec = {"cohorts": {"kind": "spectral", "n_clusters": 3, "n_neighbors": 10}, "weights": {"kind": "euclidean_max",
            "n_neighbors": 10}, "confidence": {"kind": "eq12"},
            "prototypes": {"kind": "tsne", "proximity": "cluster_graph", "graph_neighbors": 1, "space": "raw"}}
    inp = build_inputs(ds, spec, seed=0)
    ds.save(tmp_path / "d.npz")
    inp.save(tmp_path / "i.npz", with_labels=True)
    back = Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz")
    assert back.label_names == names and np.array_equal(back.labels, truth) and back.R.shape == (120, 3)


@pytest.fixture(scope="module")
def cora():
    assert (CORA / "cora.content").is_file(), f"the project's mirror {CORA} is missing"
    return load("cora", raw_dir=CORA)


def test_cora_compacted_features_are_the_two_label_averaged_blocks(cora):
    X, facts = transform_features(cora, {"kind": "compacted", "n_neighbors": 30}, labels=cora.labels)
    assert X.shape == (2708, 14) and "14 dims" in facts["features_used"]
    theta = ((cora.relations + cora.relations.T) > 0).astype(float)
    n = np.bincount(cora.labels)
    Y = np.eye(7)[cora.labels]
    np.testing.assert_allclose(X[:, 7:], (theta @ Y) / n, rtol=1e-12)
    assert np.all(X >= 0) and np.all(X[:, :7].sum(axis=1) > 0)


def test_cora_e1_alpha_sweep_follows_fig_h14(cora):
    """COVA App. H.3, Fig. H.14: with compacted features and citation prototypes, raising α raises S_s and S_c and
    lowers S_n; E1 at α = 0.9 reproduces the prototypes' 2-nearest-class links (Fig. 9, S_c^(r) = 100 %)."""
    from cova.methods import make_method
    from cova.metrics.summary import compute_scores

    spec = {"features": {"kind": "compacted", "n_neighbors": 30},
            "weights": {"kind": "euclidean_max", "n_neighbors": 50}, "confidence": {"kind": "eq12"},
            "prototypes": {"kind": "tsne", "proximity": "citation"}}
    inp = build_inputs(cora, spec, seed=0)
    s = {a: compute_scores(inp.X, make_method("cova_e1", {"alpha": a}, seed=0).fit_transform(inp), inp.labels,
                           inp.prototypes, None) for a in (0.1, 0.9)}
    assert 0.75 <= s[0.1]["s_s"] <= 0.90 and 0.65 <= s[0.1]["s_c"] <= 0.88
    assert s[0.9]["s_s"] > s[0.1]["s_s"] and s[0.9]["s_c"] > s[0.1]["s_c"] + 0.1
    assert s[0.1]["s_n"] - s[0.9]["s_n"] >= 0.05
    assert s[0.9]["s_c_r"] == 1.0


def test_link_comparison_counts_tp_fp_fn():
    from cova.metrics import cohort_graph, link_comparison

    line = np.c_[np.arange(5.0), np.zeros(5)]            # 1-NN graph of points on a line: a path 0-1-2-3-4
    ref = cohort_graph(line, kappa=1)
    shown = cohort_graph(line[[0, 2, 1, 3, 4]], kappa=1)  # cohorts 1 and 2 swapped
    links = link_comparison(ref, shown)
    assert links["tp"] == [(1, 2), (3, 4)]  # ties go to the lower index: 1 -> 2 (both at distance 1)
    assert set(links["fp"]) == {(0, 2), (1, 3)} and set(links["fn"]) == {(0, 1), (2, 3)}
    assert len(links["tp"]) + len(links["fn"]) == ref[np.triu_indices(5, 1)].sum()
