"""The co-embedding paper's reduced model (Eqs. 41-42), its objective Γ (Eq. 43) and the grid search: the SVD route
against the eigenproblem of T, the scale constraints, the BGP and CA special cases, scale invariance, stationarity,
and Γ against a brute-force count."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist

from cova.inputs import Inputs, Relation
from cova.methods.coembed.ca import correspondence_analysis
from cova.methods.coembed.coembed import GRIDS, CoEmbedding
from cova.objectives.coembedding import (
    KDTREE_MAX_K,
    _kth_distance,
    coembedding_svd,
    gamma_objective,
    grid_search,
    mutual_knn_pairs,
    neighbourhood_size,
    reduced_model,
    relation_weights,
    scaled_svd,
)
from cova.threads import job_threads


def random_relation(m: int = 30, n: int = 20, seed: int = 0, density: float = 0.7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = rng.random((m, n)) * (rng.random((m, n)) < density)
    R[:, 0] += 0.05
    R[0] += 0.05
    return R


def eq44_relation(m: int = 40, n: int = 50, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r_ij = exp(−d²_ij / mean d²) of random 2-D points (co-embedding paper Eq. 44)."""
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(m, 2)), rng.normal(size=(n, 2))
    D = cdist(X, Y, "sqeuclidean")
    return np.exp(-D / D.mean()), X, Y


def align(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """b with each column's sign flipped to match a."""
    return b * np.where(np.sum(a * b, axis=0) < 0, -1.0, 1.0)


def eig_route(R: np.ndarray, eta1: float, eta2: float, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eq. 41 at γ = 0 from the eigenvectors of T = D_ry^-1 R_y D_cx^-1 R_xᵀ built densely with raw weights."""
    dr, dc = R.sum(1), R.sum(0)
    Rx, Ry = dr[:, None] ** (eta1 - 1) * R, R * dc[None, :] ** (eta2 - 1)
    dcx, dry = Rx.sum(0), Ry.sum(1)
    T = (Ry / dry[:, None]) @ (Rx / dcx[None, :]).T
    w, Psi = np.linalg.eig(T)
    order = np.argsort(-w.real)
    w, Psi = w.real[order], Psi.real[:, order]
    Zx = Psi[:, 1:dim + 1] / np.sqrt(np.einsum("iq,i,iq->q", Psi[:, 1:dim + 1], dry, Psi[:, 1:dim + 1]))
    return Zx, w, T


@pytest.mark.parametrize("eta1,eta2", [(1.0, 1.0), (2.3, 0.7), (0.0, 4.0)])
def test_svd_route_equals_eig_route(eta1, eta2):
    R = random_relation()
    Zx_eig, w, T = eig_route(R, eta1, eta2, 3)
    np.testing.assert_allclose(T @ np.ones(R.shape[0]), 1.0, atol=1e-12)
    svd = coembedding_svd(R, eta1, eta2, 4)
    assert svd.s[0] == pytest.approx(1.0, abs=1e-12)
    Zx, Zy, lambdas = reduced_model(svd, 3, 1.0, 0.0)
    np.testing.assert_allclose(lambdas, w[1:4], atol=1e-10)
    Zx_eig = align(Zx, Zx_eig)
    c = np.sum(Zx * Zx_eig) / np.sum(Zx * Zx)  # one global factor: the weights are max-normalised
    assert c > 0
    np.testing.assert_allclose(Zx_eig, c * Zx, atol=1e-8 * np.abs(Zx_eig).max())
    np.testing.assert_allclose(T @ Zx, Zx * lambdas, atol=1e-10 * np.abs(Zx).max())


@pytest.mark.parametrize("eta1,eta2,gamma", [(1.0, 1.0, 0.0), (2.3, 0.7, 0.8), (0.5, 3.0, 2.0)])
def test_row_scale_constraint(eta1, eta2, gamma):
    R = random_relation(seed=1)
    svd = coembedding_svd(R, eta1, eta2, 5)
    Zx, Zy, lambdas = reduced_model(svd, 4, 1.3, gamma)
    np.testing.assert_allclose(np.einsum("iq,i,iq->q", Zx, svd.dry, Zx), (lambdas / lambdas[0]) ** (2 * gamma),
                               rtol=1e-10)
    np.testing.assert_allclose(Zy, 1.3 / np.sqrt(lambdas) * (R.T @ (svd.wr[:, None] * Zx)) / svd.dcx[:, None],
                               rtol=1e-10)


@pytest.mark.parametrize("xi", [0.3, 1.0, 2.5])
def test_column_scale_is_xi_squared_in_the_symmetric_case(xi):
    R = random_relation(seed=2)
    svd = coembedding_svd(R, 1.0, 1.0, 4)
    _, Zy, _ = reduced_model(svd, 3, xi, 0.0)
    np.testing.assert_allclose(np.einsum("jq,j,jq->q", Zy, svd.dcx, Zy), xi**2, rtol=1e-10)


def test_bgp_oracle_and_spectral_coclustering():
    """η = (1, 1), γ = 0, ξ = 1 is Dhillon's bipartite embedding D_r^-1/2 U, D_c^-1/2 V (scikit-learn's z)."""
    from sklearn.cluster._bicluster import _scale_normalize

    R = random_relation(seed=3)
    Zx, Zy, _ = reduced_model(coembedding_svd(R, 1.0, 1.0, 4), 3, 1.0, 0.0)
    B = R / np.sqrt(R.sum(1))[:, None] / np.sqrt(R.sum(0))[None, :]
    U, s, Vt = np.linalg.svd(B)
    np.testing.assert_allclose(np.abs(Zx), np.abs(U[:, 1:4] / np.sqrt(R.sum(1))[:, None]), atol=1e-10)
    normalized, row_diag, col_diag = _scale_normalize(R)
    u, _, vt = np.linalg.svd(normalized)  # SpectralCoclustering._fit with 8 clusters: 1 + ceil(log2 8) = 4 vectors
    z = np.vstack((row_diag[:, None] * u[:, 1:4], col_diag[:, None] * vt[1:4].T))
    ours = np.vstack((Zx, Zy))
    np.testing.assert_allclose(ours, align(ours, z), atol=1e-9)


def test_ca_oracle():
    """η = (1, 1), γ = ½, ξ = 1 is correspondence analysis (Eqs. 6-7) divided by θ_2."""
    R = random_relation(seed=4)
    Zx, Zy, _ = reduced_model(coembedding_svd(R, 1.0, 1.0, 4), 3, 1.0, 0.5)
    Cx, Cy, theta = correspondence_analysis(R, 3)
    ours = np.vstack((Zx, Zy))
    ca = np.vstack((Cx, Cy)) / theta[0]
    np.testing.assert_allclose(ours, align(ours, ca), atol=1e-10)


@pytest.mark.parametrize("eta1,eta2", [(1.0, 1.0), (3.0, 0.5), (10.0, 10.0)])
def test_scale_invariance(eta1, eta2):
    """R → cR multiplies the paper's co-embedding (raw weights d^{η−1}) by c^{-η2/2}; with max-normalised weights
    the factor is c^{-1/2}; either way Γ and the eigenvalues are unchanged."""
    R = random_relation(seed=5)
    c = 7.5
    Zx, Zy, lam = reduced_model(coembedding_svd(R, eta1, eta2, 3), 2, 1.2, 0.6)
    Zx2, Zy2, lam2 = reduced_model(coembedding_svd(c * R, eta1, eta2, 3), 2, 1.2, 0.6)
    np.testing.assert_allclose(lam2, lam, rtol=1e-10)
    np.testing.assert_allclose(Zx2, Zx * c**-0.5, rtol=1e-8, atol=1e-12 * np.abs(Zx).max())
    np.testing.assert_allclose(Zy2, Zy * c**-0.5, rtol=1e-8, atol=1e-12 * np.abs(Zy).max())
    assert gamma_objective(R, Zx, Zy) == gamma_objective(c * R, Zx2, Zy2)
    if eta1 < 10:  # the dense eigenproblem of T with raw weights is too ill-conditioned at η = 10
        raw, _, _ = eig_route(R, eta1, eta2, 2)
        raw2, _, _ = eig_route(c * R, eta1, eta2, 2)
        np.testing.assert_allclose(align(raw, raw2), raw * c ** (-eta2 / 2), rtol=1e-7)


def test_weights_do_not_overflow_at_large_eta():
    R = random_relation(seed=6) * 1e6
    wr, wc = relation_weights(R, 10.0, 0.0)
    assert np.all(np.isfinite(wr)) and wr.max() == 1.0 and np.all(wr > 0)
    assert np.all(np.isfinite(wc)) and wc.max() == 1.0
    Zx, Zy, _ = reduced_model(coembedding_svd(R, 10.0, 10.0, 3), 2, 3.0, 3.0)
    assert np.all(np.isfinite(Zx)) and np.all(np.isfinite(Zy))


@pytest.mark.parametrize("eta1,eta2", [(1.0, 1.0), (2.3, 0.7)])
def test_closed_forms_are_stationary_points(eta1, eta2):
    """Eq. 31 (z_x = β D_ry^-1 R_y z_y) holds at γ = 0, and z_y of Eq. 42 is a stationary point of
    F(z_y) = z_yᵀ D_cx z_y − 2 z_xᵀ R_x z_y on its scale constraint (Eqs. 19, 24): the finite-difference gradient
    of F is parallel to the constraint's gradient 2 D_cx z_y."""
    R = random_relation(seed=7)
    svd = coembedding_svd(R, eta1, eta2, 4)
    Zx, Zy, _ = reduced_model(svd, 3, 0.8, 0.0)
    Rx, Ry = svd.wr[:, None] * R, R * svd.wc[None, :]
    for q in range(3):
        zx, zy = Zx[:, q], Zy[:, q]
        v = (Ry @ zy) / svd.dry
        beta = 1.0 / np.sqrt(zy @ Ry.T @ (v))
        np.testing.assert_allclose(zx, beta * v, atol=1e-10 * np.abs(zx).max())

        def F(y, zx=zx):
            return y @ (svd.dcx * y) - 2 * zx @ Rx @ y

        h = 1e-6 * np.abs(zy).max()
        grad = np.array([(F(zy + h * e) - F(zy - h * e)) / (2 * h) for e in np.eye(zy.size)])
        normal = 2 * svd.dcx * zy
        mu = grad @ normal / (normal @ normal)
        np.testing.assert_allclose(grad, mu * normal, atol=1e-6 * np.abs(grad).max())


def brute_pairs(R: np.ndarray, kr: int, kc: int) -> np.ndarray:
    rows = np.zeros(R.shape, dtype=bool)
    np.put_along_axis(rows, np.argsort(-R, axis=1, kind="stable")[:, :kc], True, axis=1)
    cols = np.zeros(R.shape, dtype=bool)
    np.put_along_axis(cols, np.argsort(-R, axis=0, kind="stable")[:kr], True, axis=0)
    return rows & cols


def brute_gamma(R: np.ndarray, Zx: np.ndarray, Zy: np.ndarray, kr: int, kc: int) -> int:
    K = brute_pairs(R, kr, kc)
    Q = cdist(Zx, Zy)
    near_rows = Q <= np.sort(Q, axis=1)[:, kc - 1:kc]
    near_cols = Q <= np.sort(Q, axis=0)[kr - 1:kr]
    return int(np.sum(K & ~(near_rows & near_cols)))


@pytest.mark.parametrize("kr,kc", [(1, 1), (5, 5), (3, 12), (70, 80), (89, 119)])
def test_gamma_equals_brute_force(kr, kc):
    rng = np.random.default_rng(kr * 100 + kc)
    R = rng.random((90, 120))
    Zx, Zy = rng.normal(size=(90, 3)), rng.normal(size=(120, 3))
    expected = brute_gamma(R, Zx, Zy, kr, kc)
    assert gamma_objective(R, Zx, Zy, kr, kc) == expected
    assert gamma_objective(sp.csr_matrix(R), Zx, Zy, kr, kc) == expected
    assert gamma_objective(mutual_knn_pairs(R, kr, kc), Zx, Zy, kr, kc) == expected
    if max(kr, kc) > KDTREE_MAX_K:
        assert expected > 0  # the dense k-th distance path is exercised on a non-trivial count


@pytest.mark.parametrize("dim", [2, 7])
def test_dense_kth_distance_is_the_partition_of_cdist_from_any_start(dim):
    """Above the KD-tree's k the k-th distance comes from a search bounded by ``near``: whatever k points it starts
    from, the value is the k-th of scipy's distances to the bit, ties included, and ``near`` ends as k distinct
    points no farther than it."""
    rng = np.random.default_rng(dim)
    data = np.round(rng.normal(size=(300, dim)), 1)  # coarse values: many equal distances
    k = KDTREE_MAX_K + 11
    tree = cKDTree(data)
    near = np.tile(np.arange(k, dtype=np.int64), (80, 1))
    for scale in (0.1, 0.5, 1.0, 3.0, 0.2):
        points = scale * np.round(rng.normal(size=(80, dim)), 1)
        D = cdist(points, data)
        expected = np.partition(D, k - 1, axis=1)[:, k - 1]
        got = _kth_distance(tree, points, k, near)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(_kth_distance(tree, points, k), expected)
        assert all(np.unique(row).size == k for row in near)
        assert np.all(np.take_along_axis(D, near, axis=1) <= expected[:, None])


@pytest.mark.parametrize("density", [1.0, 0.3, 0.05])
@pytest.mark.parametrize("kr,kc", [(1, 1), (5, 5), (4, 9)])
def test_mutual_knn_pairs_with_ties_and_zeros(density, kr, kc):
    """Integer counts with many ties and sparse rows with fewer than k entries: stable index order."""
    rng = np.random.default_rng(11)
    R = rng.integers(1, 4, size=(40, 30)) * (rng.random((40, 30)) < density)
    R = R.astype(float)
    expected = np.argwhere(brute_pairs(R, kr, kc))
    for given in (R, sp.csr_matrix(R)):
        rows, cols = mutual_knn_pairs(given, kr, kc)
        np.testing.assert_array_equal(np.column_stack([rows, cols]), expected)


def test_gamma_is_zero_for_eq44_data_with_the_original_points():
    R, X, Y = eq44_relation()
    for kr, kc in [(5, 5), (10, 3), ("10%", "50%")]:
        assert mutual_knn_pairs(R, kr, kc)[0].size > 0
        assert gamma_objective(R, X, Y, kr, kc) == 0
    rng = np.random.default_rng(99)
    assert gamma_objective(R, rng.normal(size=X.shape), rng.normal(size=Y.shape)) > 0


def test_gamma_vanishes_with_whole_neighbourhoods():
    R = random_relation(seed=8)
    rng = np.random.default_rng(1)
    Zx, Zy = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    assert mutual_knn_pairs(R, "all", "all")[0].size == R.size
    assert gamma_objective(R, Zx, Zy, "all", "all") == 0
    assert gamma_objective(R, Zx, Zy, 30, 20) == 0 == brute_gamma(R, Zx, Zy, 30, 20)
    assert gamma_objective(R, Zx, Zy, 30, 19) == brute_gamma(R, Zx, Zy, 30, 19) > 0  # one side whole: counted
    assert gamma_objective(R, Zx, Zy, "all-10", "all-10") == brute_gamma(R, Zx, Zy, 20, 10)


def test_neighbourhood_sizes():
    assert [neighbourhood_size(s, 994) for s in (10, "10%", "50%", "all-10", "all")] == [10, 99, 497, 984, 994]
    assert neighbourhood_size("50%", 1491) == 745
    assert neighbourhood_size("0.1%", 50) == 1
    assert neighbourhood_size(np.int64(3), 5) == 3
    for bad, match in [("ten", "'ten'"), ("all-50", "leaves 0"), ("150%", r"\(0, 100\]"), ("0%", r"\(0, 100\]"),
                       (0, "between 1 and 50"), (51, "between 1 and 50"), (True, "positive integer"),
                       (2.5, "positive integer")]:
        with pytest.raises(ValueError, match=match):
            neighbourhood_size(bad, 50)


def test_grid_search_is_independent_of_threads():
    R, _, _ = eq44_relation(35, 45, seed=2)
    args = (R, 2, [0.5, 1.0, 3.0], [1.0, 2.0], [0.5, 1.0, 2.0], [0.0, 1.0])
    one = grid_search(*args, n_threads=1)
    two = grid_search(*args, n_threads=2)
    np.testing.assert_array_equal(one.table, two.table)
    assert (one.eta1, one.eta2, one.xi, one.gamma, one.objective) == (two.eta1, two.eta2, two.xi, two.gamma,
                                                                     two.objective)
    table = one.table
    assert table.size == 3 * 2 * 3 * 2
    assert list(table[:4][["eta1", "eta2", "xi", "gamma"]].tolist()) == [(0.5, 1.0, 0.5, 0.0), (0.5, 1.0, 0.5, 1.0),
                                                                         (0.5, 1.0, 1.0, 0.0), (0.5, 1.0, 1.0, 1.0)]
    best = int(np.argmin(table["Gamma"]))
    assert one.objective == table["Gamma"].min() and one.eta1 == table["eta1"][best]
    row = table[7]
    Zx, Zy, _ = reduced_model(coembedding_svd(R, row["eta1"], row["eta2"], 3), 2, row["xi"], row["gamma"])
    assert gamma_objective(R, Zx, Zy) == row["Gamma"]
    assert one.as_array().shape == (36, 5)


def make_inputs(R: np.ndarray) -> Inputs:
    m, n = R.shape
    return Inputs(relation=Relation(sp.csr_matrix(R), [f"r{i}" for i in range(m)], [f"c{j}" for j in range(n)]))


def test_estimator_grid_search_on_a_tiny_relation():
    R, _, _ = eq44_relation(30, 25, seed=3)
    est = CoEmbedding(n_components=2, search="grid", grid="ci")
    assert est.requires() == ("relation",) and est.extra_outputs == ("column_embedding_", "search_gamma_",
                                                                       "selected_model_")
    Z = est.fit_transform(make_inputs(R))
    table = est.search_gamma_
    ci = GRIDS["ci"]
    assert table.shape == (len(ci["eta1"]) * len(ci["eta2"]) * len(ci["xi"]) * len(ci["gamma"]), 5)
    assert est.objective_ == table[:, 4].min()
    first = table[np.argmin(table[:, 4])]
    assert (est.eta1_, est.eta2_, est.xi_, est.gamma_) == tuple(first[:4])
    Zx, Zy, lam = reduced_model(coembedding_svd(R, est.eta1_, est.eta2_, 3), 2, est.xi_, est.gamma_)
    np.testing.assert_allclose(Z, Zx, rtol=1e-12)
    np.testing.assert_allclose(est.column_embedding_, Zy, rtol=1e-12)
    np.testing.assert_allclose(est.eigenvalues_, lam)
    np.testing.assert_array_equal(est.selected_model_, [*first[:4], est.objective_])


def test_k_c_same_applies_the_row_rule_to_the_columns():
    R, _, _ = eq44_relation(30, 20, seed=4)
    same = CoEmbedding(search="grid", grid="ci", k_r="10%", k_c="same").fit(make_inputs(R))
    explicit = CoEmbedding(search="grid", grid="ci", k_r="10%", k_c="10%").fit(make_inputs(R))
    fixed = CoEmbedding(search="grid", grid="ci", k_r="10%", k_c=5).fit(make_inputs(R))
    np.testing.assert_array_equal(same.search_gamma_, explicit.search_gamma_)
    assert not np.array_equal(same.search_gamma_[:, 4], fixed.search_gamma_[:, 4])


def test_estimator_without_search_and_with_an_explicit_grid():
    R = random_relation(seed=9)
    est = CoEmbedding(n_components=3, eta1=2.0, eta2=0.5, xi=1.5, gamma=1.0).fit(make_inputs(R))
    Zx, Zy, _ = reduced_model(coembedding_svd(R, 2.0, 0.5, 4), 3, 1.5, 1.0)
    np.testing.assert_allclose(est.embedding_, Zx, rtol=1e-12)
    assert est.search_gamma_.shape == (1, 5) and est.search_gamma_[0, 4] == est.objective_
    grid = {"eta1": [1.0], "eta2": [1.0, 2.0], "xi": [1.0], "gamma": [0.0]}
    est = CoEmbedding(search="grid", grid=grid, k_r="10%", k_c=3).fit(make_inputs(R))
    assert est.search_gamma_.shape == (2, 5)


@pytest.mark.parametrize("params,match", [
    ({"eta1": 10.5}, "eta1"), ({"eta2": -1.0}, "eta2"), ({"xi": 0.0}, "xi"), ({"xi": 3.5}, "xi"),
    ({"gamma": 4.0}, "gamma"), ({"search": "ga"}, "search"), ({"grid": "huge"}, "grid"),
    ({"k_r": "five"}, "'k_r' parameter .* percentage such as"), ({"k_c": "all-100"}, "k_c: .*leaves"),
    ({"k_r": 31}, "k_r: .* 1 and 30"), ({"k_r": 0}, "k_r"),
    ({"search": "grid", "grid": {"eta1": [1.0]}}, r"grid.eta2 .*: required"),
    ({"search": "grid", "grid": {"eta1": [11.0], "eta2": [1.0], "xi": [1.0], "gamma": [0.0]}}, r"grid.eta1 .*\[0.0, 10.0\]"),
    ({"search": "grid", "grid": {"eta1": [1.0], "eta2": [1.0], "xi": [0.0], "gamma": [0.0]}}, r"grid.xi .*\(0.0, 3.0\]"),
])
def test_bad_parameters_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        CoEmbedding(**params).fit(make_inputs(random_relation()))


def test_disconnected_relation_warns_and_empty_rows_are_refused():
    R = random_relation(10, 8, seed=10, density=1.0)
    block = sp.block_diag([R, R]).toarray()
    with pytest.warns(UserWarning, match="disconnected"):
        reduced_model(coembedding_svd(block, 1.0, 1.0, 3), 2, 1.0, 0.0)
    R[2] = 0.0
    with pytest.raises(ValueError, match="1 rows are empty"):
        coembedding_svd(R, 1.0, 1.0, 3)
    with pytest.raises(ValueError, match="dim=3 needs 4"):
        reduced_model(coembedding_svd(random_relation(), 1.0, 1.0, 3), 3, 1.0, 0.0)


def test_scaled_svd_dense_and_sparse_routes_agree():
    """Dense LAPACK, the Gram-matrix route (dense-enough relations) and ``svds`` (sparse ones) agree."""
    rs, cs = np.linspace(0.5, 2, 60), np.linspace(1, 3, 45)
    for density in (0.7, 0.1):
        R = random_relation(60, 45, seed=12, density=density)
        dense = scaled_svd(R, rs, cs, 5, solver="dense")
        sparse = scaled_svd(sp.csr_matrix(R), rs, cs, 5, solver="sparse")
        for a, b in zip(dense[:3], sparse[:3]):
            np.testing.assert_allclose(a, b, atol=1e-9)
    with pytest.raises(ValueError, match="row scale"):
        scaled_svd(R, -rs, cs, 3)


def test_job_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert job_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert job_threads() >= 1
