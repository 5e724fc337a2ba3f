"""The measures of graph embeddings (cova.metrics.crowding, cova.metrics.display_neighbours) and their place in the
score step: radial CV on rings, discs and balls; Spearman's ρ against scipy; k-NN accuracy against scikit-learn's
leave-one-out classifier; graph precision@k and the sphere's crowding radius against brute force; chordal
distances against 2 sin(θ/2); records of vector runs unchanged."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import spearmanr
from sklearn.neighbors import KNeighborsClassifier

from cova.embedding import Embedding
from cova.metrics.crowding import centre_fraction, degree_radius_rho, radial_cv, radii
from cova.metrics.display_neighbours import display_points, graph_precision, knn_accuracy
from cova.metrics.registry import METRICS, ScoreData, evaluate
from cova.metrics.score import score_run
from cova.metrics.summary import SCORE_KEYS

GRAPH_KEYS = {"radial_cv", "centre_fraction", "degree_radius_rho", "knn_accuracy", "graph_precision"}


def _sphere(n: int, rng: np.random.Generator, radius: float = 1.0) -> np.ndarray:
    U = rng.normal(size=(n, 3))
    return radius * U / np.linalg.norm(U, axis=1, keepdims=True)


def _ref_knn(A: np.ndarray, k: int) -> np.ndarray:
    """k nearest other rows, sorted by (distance, index): a plain stable argsort of full distance rows."""
    D = np.sqrt(((A[:, None, :] - A[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    return np.argsort(D, axis=1, kind="stable")[:, :k]


# --------------------------------------------------------------------------------------------------------
# radial CV and the centre fraction
# --------------------------------------------------------------------------------------------------------

def test_radial_cv_of_a_ring_a_sphere_a_disc_and_a_ball():
    rng = np.random.default_rng(0)
    t = np.linspace(0, 2 * np.pi, 500, endpoint=False)
    assert radial_cv(3.0 * np.c_[np.cos(t), np.sin(t)] + 7.0) < 1e-12
    n = 400_000
    r, t = np.sqrt(rng.uniform(size=n)), rng.uniform(0, 2 * np.pi, n)
    disc = np.c_[r * np.cos(t), r * np.sin(t)]
    ball = _sphere(n, rng) * np.cbrt(rng.uniform(size=n))[:, None]
    # uniform disc: r has density 2r, CV = sqrt(1/2 - 4/9) / (2/3) = 1/sqrt(8); ball: density 3r², CV = 1/sqrt(15)
    assert radial_cv(disc) == pytest.approx(1 / np.sqrt(8), abs=3e-3)
    assert radial_cv(ball) == pytest.approx(1 / np.sqrt(15), abs=3e-3)
    assert centre_fraction(disc) == pytest.approx(0.25 ** 2, abs=3e-3)
    assert centre_fraction(ball) == pytest.approx(0.25 ** 3, abs=2e-3)
    assert centre_fraction(_sphere(300, rng, 5.0)) == 0.0


def test_radial_cv_is_the_plain_formula_and_invariant_to_similarity_transforms():
    rng = np.random.default_rng(1)
    Z = rng.standard_t(2, size=(200, 3))
    d = np.sqrt(((Z - Z.mean(0)) ** 2).sum(1))
    assert radial_cv(Z) == pytest.approx(np.std(d) / np.mean(d), rel=1e-12)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    moved = 4.2 * Z @ Q + rng.normal(size=3)
    assert radial_cv(moved) == pytest.approx(radial_cv(Z), rel=1e-10)
    assert centre_fraction(moved) == centre_fraction(Z)
    core = np.r_[rng.normal(0, 0.01, (95, 2)), 10 * np.eye(2)[rng.integers(0, 2, 5)]]  # 95% in a tight core
    assert centre_fraction(core) >= 0.9
    assert np.isnan(radial_cv(np.ones((5, 2)))) and np.isnan(centre_fraction(np.ones((5, 2))))


def test_a_dosnes_sphere_has_radial_cv_near_zero():
    U = _sphere(150, np.random.default_rng(2), radius=365.0)
    assert radial_cv(np.r_[U, -U]) < 1e-12  # antipodal pairs: the centroid is the sphere's centre
    Z = U - U.mean(axis=0)  # DOSNES Eq. 7 centres, Eq. 8 restores equal norms: the centroid moves off 0 again
    Z *= (np.linalg.norm(Z, axis=1).mean() / np.linalg.norm(Z, axis=1))[:, None]
    assert radial_cv(Z) < 0.05


# --------------------------------------------------------------------------------------------------------
# degree-crowding correlation
# --------------------------------------------------------------------------------------------------------

def test_degree_radius_rho_in_a_plane_is_scipys_spearman_of_the_radii():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(150, 2))
    degree = rng.integers(1, 20, 150).astype(float)  # many ties: average ranks
    expected = spearmanr(degree, np.linalg.norm(Z - Z.mean(0), axis=1)).statistic
    assert degree_radius_rho(Z, degree) == pytest.approx(expected, abs=1e-12)
    crowded = Z / np.linalg.norm(Z, axis=1, keepdims=True) / (1.0 + degree[:, None])  # high degree -> centre
    assert degree_radius_rho(crowded, degree) < -0.95


def test_degree_radius_rho_on_a_sphere_uses_the_mean_knn_distance_on_the_unit_sphere():
    rng = np.random.default_rng(4)
    Z = _sphere(120, rng, radius=50.0) * rng.uniform(0.9, 1.1, (120, 1))  # not exactly one radius
    degree = rng.pareto(1.5, 120)
    k = 7
    U = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    nb = _ref_knn(U, k)
    s = np.array([np.mean([np.linalg.norm(U[i] - U[j]) for j in nb[i]]) for i in range(120)])
    assert degree_radius_rho(Z, degree, "sphere", k) == pytest.approx(spearmanr(degree, s).statistic, abs=1e-12)
    assert np.isnan(degree_radius_rho(Z, np.ones(120), "sphere", k))


# --------------------------------------------------------------------------------------------------------
# chordal distances, k-NN accuracy, graph precision
# --------------------------------------------------------------------------------------------------------

def test_display_points_on_a_sphere_give_chordal_distances_2_sin_half_angle():
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(60, 3)) * rng.uniform(0.1, 30, (60, 1))
    U = display_points(Z, "sphere")
    assert np.allclose(np.linalg.norm(U, axis=1), 1.0, atol=1e-15)
    angle = np.arccos(np.clip(U @ U.T, -1, 1))
    chord = np.linalg.norm(U[:, None] - U[None], axis=2)
    assert np.allclose(chord, 2 * np.sin(angle / 2), atol=1e-7)
    # same neighbour order as the geodesic (angular) distance
    np.fill_diagonal(angle, np.inf)
    assert np.array_equal(_ref_knn(U, 5), np.argsort(angle, axis=1, kind="stable")[:, :5])
    assert np.array_equal(display_points(Z, "plane"), Z)
    with pytest.raises(ValueError, match="origin"):
        display_points(np.zeros((2, 3)), "sphere")
    with pytest.raises(ValueError, match="geometry"):
        display_points(Z, "torus")


@pytest.mark.parametrize("geometry", ["plane", "sphere"])
def test_knn_accuracy_equals_scikit_learns_leave_one_out_classifier(geometry):
    rng = np.random.default_rng(6)
    n = 90
    labels = rng.integers(0, 2, n)  # two classes and odd k: no tied votes, where the tie rules differ
    Z = rng.normal(size=(n, 3)) + labels[:, None] * 0.8
    U = Z / np.linalg.norm(Z, axis=1, keepdims=True) if geometry == "sphere" else Z
    hits = []
    for i in range(n):
        rest = np.arange(n) != i
        clf = KNeighborsClassifier(n_neighbors=5).fit(U[rest], labels[rest])
        hits.append(clf.predict(U[i:i + 1])[0] == labels[i])
    assert knn_accuracy(Z, labels, 5, geometry) == pytest.approx(np.mean(hits), abs=1e-15)


def test_knn_accuracy_caps_k_at_n_minus_one():
    Z = np.arange(8.0)[:, None] * np.ones((1, 2))
    labels = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    assert knn_accuracy(Z, labels, 50) == knn_accuracy(Z, labels, 7)


def _ref_graph_precision(U: np.ndarray, W: np.ndarray, k: int) -> float:
    nb = _ref_knn(U, k)
    edge = (W > 0) & ~np.eye(len(W), dtype=bool)
    per = [np.mean(edge[i, nb[i]]) for i in range(len(W)) if edge[i].any()]
    return float(np.mean(per))


@pytest.mark.parametrize("geometry", ["plane", "sphere"])
def test_graph_precision_against_brute_force_with_ties(geometry):
    rng = np.random.default_rng(7)
    n = 70
    Z = rng.integers(-2, 3, (n, 3)).astype(float)  # lattice points: many equal distances and duplicates
    Z[np.all(Z == 0, axis=1)] = 1.0
    A = rng.uniform(size=(n, n)) < 0.1
    A = np.triu(A, 1)
    A = (A | A.T).astype(float)
    A[:3] = A[:, :3] = 0.0  # three isolated points: left out of the mean
    U = Z / np.linalg.norm(Z, axis=1, keepdims=True) if geometry == "sphere" else Z
    for k in (1, 4, 10):
        got = graph_precision(Z, sp.csr_matrix(A), k, geometry)
        assert got == pytest.approx(_ref_graph_precision(U, A, k), abs=1e-15)
    assert np.isnan(graph_precision(Z, sp.csr_matrix((n, n)), 5, geometry))


def test_graph_precision_is_one_for_a_layout_that_is_the_graph():
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    Z = np.c_[np.cos(t), np.sin(t)]
    ring = sp.diags([1.0, 1.0, 1.0, 1.0], [1, -1, 39, -39], shape=(40, 40))  # each point's two ring neighbours
    assert graph_precision(Z, ring, 2) == 1.0
    assert graph_precision(Z, ring, 4) == 0.5


# --------------------------------------------------------------------------------------------------------
# registry and score step
# --------------------------------------------------------------------------------------------------------

def _graph_inputs(toy_inputs, seed: int = 0):
    rng = np.random.default_rng(seed)
    degree = np.asarray(toy_inputs.W.sum(axis=1)).ravel() * rng.uniform(1, 100)
    return dataclasses.replace(toy_inputs, X=None, R=None, prototypes=None, degree=degree)


def test_vector_runs_keep_exactly_their_keys(toy_inputs):
    Z = np.random.default_rng(8).normal(size=(toy_inputs.labels.size, 2))
    scores = score_run(toy_inputs, Embedding(Z=Z), n_neighbors=5, kappa=1)
    assert set(scores) == set(SCORE_KEYS) | {"s_c_r_orig"}


def test_graph_runs_get_the_graph_measures_with_their_settings(toy_inputs):
    inp = _graph_inputs(toy_inputs)
    rng = np.random.default_rng(9)
    Z = _sphere(inp.labels.size, rng, 20.0)
    emb = Embedding(Z=Z, geometry="sphere", extras={"kl_divergence": np.array(0.6354)})
    scores = score_run(inp, emb, kappa=1, knn_k=3, graph_k=4)
    assert GRAPH_KEYS | {"kl", "s_s", "s_c_r_orig"} == set(scores)
    assert scores["kl"] == 0.6354
    assert scores["knn_accuracy"] == knn_accuracy(Z, inp.labels, 3, "sphere")
    assert scores["graph_precision"] == graph_precision(Z, inp.W, 4, "sphere")
    assert scores["degree_radius_rho"] == degree_radius_rho(Z, inp.degree, "sphere", 4)
    assert scores["radial_cv"] == radial_cv(Z)
    plane = score_run(inp, Embedding(Z=Z[:, :2]), kappa=1)
    assert plane["degree_radius_rho"] == spearmanr(inp.degree, radii(Z[:, :2])).statistic
    assert plane["knn_accuracy"] == knn_accuracy(Z[:, :2], inp.labels, 5)
    assert "kl" not in plane


def test_degenerate_graph_runs_get_nan_and_splits_score_the_graph_on_training_rows(toy_inputs):
    inp = _graph_inputs(toy_inputs)
    Z = np.full((inp.labels.size, 3), np.nan)
    scores = score_run(inp, Embedding(Z=Z, geometry="sphere", status="degenerate"))
    assert GRAPH_KEYS <= set(scores) and all(np.isnan(scores[k]) for k in GRAPH_KEYS)
    train = np.arange(toy_inputs.labels.size) % 2 == 0
    split = dataclasses.replace(toy_inputs, train=train, W=toy_inputs.W[train][:, train],
                                degree=np.asarray(toy_inputs.W[train][:, train].sum(axis=1)).ravel())
    Z = np.random.default_rng(10).normal(size=(train.size, 2))
    scores = score_run(split, Embedding(Z=Z), n_neighbors=3, kappa=1)
    assert GRAPH_KEYS <= set(scores) and not {f"{k}_test" for k in GRAPH_KEYS} & set(scores)
    assert scores["graph_precision"] == graph_precision(Z[train], split.W, 10)


def test_the_graph_measures_need_degrees_and_kl_needs_the_saved_value():
    for name in ("radial_cv", "centre_fraction", "degree_radius_rho", "knn_accuracy", "graph_precision"):
        assert "degree" in METRICS[name].needs
    assert METRICS["kl"].needs == {"kl"} and METRICS["kl"].scope == "all"
    Z = np.random.default_rng(11).normal(size=(20, 2))
    assert set(evaluate(ScoreData(Z=Z, n_cohorts=0, degree=np.arange(20.0)))) == {
        "radial_cv", "centre_fraction", "degree_radius_rho"}
    assert evaluate(ScoreData(Z=Z, n_cohorts=0, kl=1.5)) == {"kl": 1.5}
