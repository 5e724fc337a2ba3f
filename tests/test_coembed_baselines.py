"""The co-embedding paper's baselines ACAS (Eqs. 8-12), CODE (Eq. 1) and MKPE, and the product manifold MKPE
runs on: gradients against finite differences, special cases, the grid search, fits on a relation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from cova.inputs import Inputs, Relation
from cova.manifolds import Euclidean, NoncompactStiefel, Product, Stiefel
from cova.manifolds.stiefel import project_tangent
from cova.methods.coembed.acas import (
    ACAS,
    _order_statistics,
    acas_embedding,
    acas_grid_search,
    acas_scales,
    acas_score,
    quantile_cuts,
    quantize,
)
from cova.methods.coembed.ca import correspondence_analysis
from cova.methods.coembed.code import CODE, code_embedding
from cova.methods.coembed.mkpe import MKPE, mkpe_embedding
from cova.objectives.code import CodeNLL, code_nll, code_parameter_sizes, code_probabilities, split_code_parameters
from cova.objectives.mkpe import mkpe_objective


def gaussian_relation(m: int = 14, n: int = 10, seed: int = 0) -> np.ndarray:
    """r_ij = exp(−d²_ij / mean d²) between random 2-D points (co-embedding paper Eq. 44)."""
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((m, 2)), rng.standard_normal((n, 2))
    D = ((X[:, None] - Y[None]) ** 2).sum(-1)
    return np.exp(-D / D.mean())


def count_relation(m: int = 14, n: int = 10, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = rng.poisson(1.0, (m, n)).astype(float)
    R[:, 0] += 1.0
    R[0] += 1.0
    return R


def relation_inputs(R: np.ndarray) -> Inputs:
    m, n = R.shape
    return Inputs(relation=Relation(sp.csr_matrix(R), [f"r{i}" for i in range(m)], [f"c{j}" for j in range(n)]))


def finite_difference(fun, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (fun(x + e) - fun(x - e)) / (2 * h)
    return g


# --------------------------------------------------------------------------------------------- product manifold

def product_point(rng: np.random.Generator) -> tuple[Product, np.ndarray]:
    M = Product([Stiefel("polar"), Stiefel("qr"), Euclidean()], [(6, 2), (5, 2), (1,)])
    A = np.linalg.qr(rng.standard_normal((6, 2)))[0]
    B = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    return M, M.join([A, B, np.array([0.3])])


def test_product_split_join_and_projection_are_blockwise():
    rng = np.random.default_rng(0)
    M, x = product_point(rng)
    A, B, c = M.split(x)
    assert A.shape == (6, 2) and B.shape == (5, 2) and c.shape == (1,) and M.size == 6 * 2 + 5 * 2 + 1
    np.testing.assert_array_equal(M.join(M.split(x)), x)
    g = rng.standard_normal(M.size)
    gA, gB, gc = M.split(g)
    pA, pB, pc = M.split(M.project(x, g))
    np.testing.assert_allclose(pA, project_tangent(A, gA), atol=1e-15)
    np.testing.assert_allclose(pB, project_tangent(B, gB), atol=1e-15)
    np.testing.assert_array_equal(pc, gc)
    np.testing.assert_allclose(M.project(x, M.project(x, g)), M.project(x, g), atol=1e-14)
    as_tuple = M.project((A, B, c), (gA, gB, gc))
    assert isinstance(as_tuple, tuple)
    np.testing.assert_allclose(M.join(as_tuple), M.project(x, g), atol=0)


def test_product_retraction_stays_on_every_factor():
    rng = np.random.default_rng(1)
    M, x = product_point(rng)
    np.testing.assert_allclose(M.retract(x, np.zeros_like(x)), x, atol=1e-12)
    u = M.project(x, rng.standard_normal(M.size))
    A, B, c = M.split(M.retract(x, u))
    np.testing.assert_allclose(A.T @ A, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(B.T @ B, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(c, M.split(x)[2] + M.split(u)[2], atol=0)
    assert not M.has_rank_check
    assert Product([NoncompactStiefel(), Euclidean()], [(4, 2), (3,)]).has_rank_check


def test_product_refuses_bad_shapes():
    with pytest.raises(ValueError, match="one shape per factor"):
        Product([Euclidean()], [(2,), (3,)])
    M = Product([Euclidean(), Euclidean()], [(2, 2), ()])
    assert M.size == 5
    with pytest.raises(ValueError, match="flat vector of 5"):
        M.split(np.zeros(4))


# ------------------------------------------------------------------------------------------------------- CODE

@pytest.mark.parametrize("model", ["conditional", "joint"])
def test_code_gradient_matches_finite_differences(model):
    rng = np.random.default_rng(2)
    R = count_relation(6, 5)
    P = R / R.sum()
    m, n, k = 6, 5, 3
    x = rng.uniform(-1, 1, sum(code_parameter_sizes(m, n, k, model)))
    f, g = code_nll(x, P, k, model)
    assert np.isfinite(f) and g.shape == x.shape
    fd = finite_difference(lambda y: code_nll(y, P, k, model)[0], x)
    np.testing.assert_allclose(g, fd, atol=1e-8, rtol=1e-6)
    if model == "joint":  # the a and b blocks are included
        assert x.size == m * k + n * k + m + n and np.abs(g[-(m + n):]).max() > 1e-3


@pytest.mark.parametrize("model", ["conditional", "joint"])
def test_code_objective_reuses_its_work_array_without_carrying_state(model):
    """One CodeNLL evaluated at several points (in any order) gives what a fresh evaluation gives at each."""
    rng = np.random.default_rng(7)
    P = count_relation(9, 7) / count_relation(9, 7).sum()
    fun = CodeNLL(P, 2, model)
    xs = [rng.uniform(-2, 2, sum(code_parameter_sizes(9, 7, 2, model))) for _ in range(3)]
    for x in xs + xs[::-1]:
        f, g = fun(x)
        f_ref, g_ref = code_nll(x, P, 2, model)
        assert f == f_ref
        np.testing.assert_array_equal(g, g_ref)
        assert not np.shares_memory(g, fun.work)


@pytest.mark.parametrize("model", ["conditional", "joint"])
def test_code_probabilities_normalise_and_give_the_likelihood(model):
    rng = np.random.default_rng(3)
    R = count_relation(7, 4, seed=1)
    P = R / R.sum()
    x = rng.uniform(-1, 1, sum(code_parameter_sizes(7, 4, 2, model)))
    phi, psi, a, b = split_code_parameters(x, 7, 4, 2, model)
    Q = code_probabilities(phi, psi, P, a, b, model)
    assert np.all(Q > 0)
    if model == "conditional":
        np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-14)
        py = P.sum(axis=0)
        d = ((phi[:, None] - psi[None]) ** 2).sum(-1)
        direct = py * np.exp(-d)
        np.testing.assert_allclose(Q, direct / direct.sum(axis=1, keepdims=True), atol=1e-14)
    else:
        assert Q.sum() == pytest.approx(1.0, abs=1e-14)
    assert code_nll(x, P, 2, model)[0] == pytest.approx(-(P * np.log(Q)).sum(), rel=1e-12)


def test_code_log_sum_exp_is_stable_for_far_apart_points():
    P = np.full((3, 2), 1 / 6)
    x = np.concatenate([np.array([[0.0], [40.0], [80.0]]).ravel(), np.array([0.0, 80.0])])
    f, g = code_nll(x, P, 1, "conditional")
    assert np.isfinite(f) and np.all(np.isfinite(g))


@pytest.mark.parametrize("model", ["conditional", "joint"])
def test_code_fit_raises_the_likelihood_and_keeps_the_best_restart(model):
    R = gaussian_relation(12, 9)
    out = code_embedding(R / R.sum(), 2, model, n_restarts=3, max_iter=200, random_state=4)
    assert np.all(out["logliks"] >= out["start_logliks"] + 1e-3)
    assert out["loglik"] == out["logliks"].max() and out["n_iter"] > 0
    x = np.concatenate([out["phi"].ravel(), out["psi"].ravel()]
                       + ([out["a"], out["b"]] if model == "joint" else []))
    assert -code_nll(x, R / R.sum(), 2, model)[0] == pytest.approx(out["loglik"], rel=1e-12)


def test_code_estimator_is_deterministic_and_sets_its_attributes():
    R = count_relation(10, 8, seed=2)
    fits = [CODE(n_components=2, n_restarts=2, max_iter=100, random_state=5).fit(relation_inputs(R))
            for _ in range(2)]
    est = fits[0]
    assert est.embedding_.shape == (10, 2) and est.column_embedding_.shape == (8, 2)
    assert est.row_bias_.shape == (10,) and est.column_bias_.shape == (8,) and est.restart_logliks_.shape == (2,)
    np.testing.assert_array_equal(est.embedding_, fits[1].embedding_)
    np.testing.assert_array_equal(est.column_embedding_, fits[1].column_embedding_)
    assert est.loglik_ == fits[1].loglik_ and est.loglik_ == est.restart_logliks_.max()
    other = CODE(n_components=2, n_restarts=2, max_iter=100, random_state=6).fit(relation_inputs(R))
    assert not np.array_equal(other.embedding_, est.embedding_)
    cond = CODE(model="conditional", n_restarts=1, max_iter=50).fit(relation_inputs(R))
    assert cond.row_bias_ is None and cond.column_bias_ is None


# ------------------------------------------------------------------------------------------------------- MKPE

def test_mkpe_gradient_matches_finite_differences():
    rng = np.random.default_rng(7)
    R = gaussian_relation(6, 5, seed=3)
    K = R / R.max()
    Ex, Ez, eta = rng.standard_normal((6, 3)), rng.standard_normal((5, 3)), 0.2
    f, (gx, gz, geta) = mkpe_objective(Ex, Ez, eta, K, lambda_c=1.7)
    x = np.concatenate([Ex.ravel(), Ez.ravel(), [eta]])

    def value(y: np.ndarray) -> float:
        return mkpe_objective(y[:18].reshape(6, 3), y[18:33].reshape(5, 3), y[33], K, lambda_c=1.7)[0]

    assert f == pytest.approx(value(x))
    fd = finite_difference(value, x)
    np.testing.assert_allclose(np.concatenate([gx.ravel(), gz.ravel(), [geta]]), fd, atol=1e-9, rtol=1e-6)
    assert abs(geta) > 1e-4


def test_mkpe_stays_on_the_stiefel_manifolds_and_decreases():
    R = gaussian_relation(15, 11, seed=4)
    Ex, Ez, sigma, history, n_iter = mkpe_embedding(R / R.max(), 3, max_iter=60, random_state=8)
    np.testing.assert_allclose(Ex.T @ Ex, np.eye(3), atol=1e-8)
    np.testing.assert_allclose(Ez.T @ Ez, np.eye(3), atol=1e-8)
    h = np.asarray(history)
    assert n_iter == 60 and h.size == 61 and np.all(np.diff(h) <= 0) and h[-1] < 0.5 * h[0]
    assert sigma > 0 and sigma != pytest.approx(math.sqrt(3))


def test_mkpe_estimator_is_deterministic_and_sets_its_attributes():
    R = count_relation(12, 9, seed=3)
    a, b = (MKPE(n_components=2, max_iter=30, random_state=9).fit(relation_inputs(R)) for _ in range(2))
    assert a.embedding_.shape == (12, 2) and a.column_embedding_.shape == (9, 2)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    np.testing.assert_array_equal(a.column_embedding_, b.column_embedding_)
    assert a.sigma_ == b.sigma_ and a.objective_ == a.objective_history_[-1] == b.objective_
    Ex, Ez, sigma, history, _ = mkpe_embedding(R / R.max(), 2, max_iter=30, random_state=9)
    np.testing.assert_array_equal(a.embedding_, Ex)
    assert a.objective_ == pytest.approx(mkpe_objective(Ex, Ez, math.log(sigma), R / R.max())[0], rel=1e-12)


# ------------------------------------------------------------------------------------------------------- ACAS

def test_acas_with_p1_half_one_is_correspondence_analysis():
    """(p = 1, α = ½, β = 1) gives CA's coordinates (Eqs. 6-7) exactly: factor 1, same sign convention."""
    R = count_relation(13, 9, seed=5)
    Zx, Zy, theta = acas_embedding(R, 3, p=1, alpha=0.5, beta=1.0)
    Cx, Cy, ctheta = correspondence_analysis(R, 3)
    np.testing.assert_allclose(Zx, Cx, atol=1e-12)
    np.testing.assert_allclose(Zy, Cy, atol=1e-12)
    np.testing.assert_allclose(theta, ctheta, atol=1e-12)


def test_acas_with_p0_zero_one_is_lsi():
    R = count_relation(11, 8, seed=6)
    Zx, Zy, theta = acas_embedding(R, 3, p=0, alpha=0.0, beta=1.0)
    U, s, Vt = np.linalg.svd(R, full_matrices=False)
    signs = np.sign((Zx * (U[:, :3] * s[:3])).sum(axis=0))
    np.testing.assert_allclose(Zx, U[:, :3] * s[:3] * signs, atol=1e-12)
    np.testing.assert_allclose(Zy, Vt[:3].T * s[:3] * signs, atol=1e-12)
    np.testing.assert_allclose(theta, s[:3], atol=1e-12)


def test_acas_scales():
    R = count_relation(6, 4, seed=7)
    sx, sy = acas_scales(R, "inf")
    np.testing.assert_array_equal(sx, R.max(axis=1))
    np.testing.assert_array_equal(sy, R.max(axis=0))
    sx, sy = acas_scales(R, 2.0)
    np.testing.assert_allclose(sx, np.linalg.norm(R, axis=1), rtol=1e-14)
    np.testing.assert_allclose(sy, np.linalg.norm(R, axis=0), rtol=1e-14)
    np.testing.assert_array_equal(acas_scales(R, 0)[0], np.ones(6))


def test_quantize_gives_every_entry_an_equal_frequency_level():
    rng = np.random.default_rng(10)
    A = rng.random((20, 30))
    Q = quantize(A, 10)
    assert Q.min() == 1 and Q.max() == 10
    np.testing.assert_array_equal(np.bincount(Q.ravel())[1:], np.full(10, 60))  # no top band left empty
    np.testing.assert_allclose(quantile_cuts(A, 10), np.quantile(A, np.arange(1, 10) / 10, method="hazen"))
    np.testing.assert_array_equal(quantize(np.array([1.0, 2.0, 3.0]), 2), [1, 1, 2])  # 2.0 is the cut: lower level
    ties = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 2.0, 3.0, 0.0]])
    assert set(quantize(ties, 4).ravel().tolist()) <= {1, 2, 3, 4}


@pytest.mark.parametrize("kind", ["spread", "ties", "crowded", "underflow", "constant", "tiny"])
def test_order_statistics_equal_a_full_sort(kind):
    rng = np.random.default_rng(11)
    n = 50_000  # more than one narrowing pass sorts at once
    v = {"spread": rng.standard_normal(n),
         "ties": np.round(rng.random(n) * 4),                                   # five values, each many times
         "crowded": np.r_[rng.random(n - 10) * 1e-9, rng.random(10) * 1e6],     # nearly all in the lowest bin
         "underflow": np.r_[np.full(n - 10, 5e-324), np.zeros(10)],              # a range too narrow for bins
         "constant": np.full(300, 2.5),
         "tiny": np.array([3.0, -1.0])}[kind]
    ranks = np.unique(np.r_[0, v.size - 1, rng.integers(0, v.size, 20)])
    np.testing.assert_array_equal(_order_statistics(v, ranks), np.sort(v)[ranks])
    for bins in (2, 10):
        np.testing.assert_allclose(quantile_cuts(v, bins), np.quantile(v, np.arange(1, bins) / bins, method="hazen"),
                                   rtol=1e-15, atol=0)


def test_acas_score_counts_like_the_quantised_arrays():
    rng = np.random.default_rng(12)
    R = np.round(rng.random((40, 50)) * 5)
    Zx, Zy = rng.standard_normal((40, 3)), rng.standard_normal((50, 3))
    Rq = quantize(R, 10)
    D = np.sqrt(((Zx[:, None, :] - Zy[None, :, :]) ** 2).sum(axis=2))
    diff = Rq.astype(float) - quantize(D.max() - D, 10)
    assert acas_score(Rq, Zx, Zy, 10) == pytest.approx(np.sqrt(np.mean(diff * diff)), rel=1e-12)


def test_acas_score_is_zero_when_the_embedding_reproduces_the_ranking():
    rng = np.random.default_rng(11)
    Zx, Zy = rng.standard_normal((9, 2)), rng.standard_normal((7, 2))
    D = np.sqrt(((Zx[:, None] - Zy[None]) ** 2).sum(-1))
    R = np.exp(-D)  # a decreasing function of the embedded distance
    assert acas_score(quantize(R, 10), Zx, Zy, 10) == pytest.approx(0.0, abs=1e-12)
    assert acas_score(quantize(R, 10), Zx, -Zy, 10) > 0.5


def test_grid_search_returns_the_minimiser_of_the_score():
    R = gaussian_relation(12, 10, seed=8)
    est = ACAS(search="grid").fit(relation_inputs(R))
    scores = est.grid_scores_
    assert scores.shape == (5, 51, 11)
    assert est.score_ == scores.min()
    first = np.unravel_index(np.argmin(scores), scores.shape)
    assert (est.p_, est.alpha_, est.beta_) == ((math.inf, 0.0, 1.0, 2.0, 3.0)[first[0]], round(0.1 * first[1], 10),
                                               round(0.2 * first[2], 10))
    Zx, Zy, _ = acas_embedding(R, 2, est.p_, est.alpha_, est.beta_)
    np.testing.assert_allclose(est.embedding_, Zx, atol=0)
    assert acas_score(quantize(R, 10), Zx, Zy, 10) == est.score_
    rng = np.random.default_rng(12)  # spot-check grid entries against a direct evaluation
    for a, b, c in zip(rng.integers(0, 5, 6), rng.integers(0, 51, 6), rng.integers(0, 11, 6)):
        p = (math.inf, 0.0, 1.0, 2.0, 3.0)[a]
        Zx, Zy, _ = acas_embedding(R, 2, p, 0.1 * b, 0.2 * c)
        assert scores[a, b, c] == pytest.approx(acas_score(quantize(R, 10), Zx, Zy, 10), abs=1e-12)


def test_small_grid_and_fixed_model():
    R = count_relation(10, 7, seed=9)
    out = acas_grid_search(R, 2, bins=5, ps=["inf", 1.0], alphas=[0.0, 0.5], betas=[1.0])
    assert out["scores"].shape == (2, 2, 1) and out["score"] == out["scores"].min()
    est = ACAS(n_components=2, p="inf", alpha=0.3, beta=0.5, bins=5).fit(relation_inputs(R))
    Zx, Zy, theta = acas_embedding(R, 2, "inf", 0.3, 0.5)
    np.testing.assert_array_equal(est.embedding_, Zx)
    np.testing.assert_array_equal(est.column_embedding_, Zy)
    assert est.p_ == math.inf and est.alpha_ == 0.3 and est.beta_ == 0.5
    assert est.score_ == acas_score(quantize(R, 5), Zx, Zy, 5)


# ------------------------------------------------------------------------------------------------------ errors

@pytest.mark.parametrize("est, match", [
    (ACAS(p="two"), "'p' parameter"),
    (ACAS(p=-1.0), "'p' parameter"),
    (ACAS(bins=1), "'bins' parameter"),
    (ACAS(alpha=-0.1), "'alpha' parameter"),
    (ACAS(search="ga"), "'search' parameter"),
    (CODE(model="marginal"), "'model' parameter"),
    (CODE(n_restarts=0), "'n_restarts' parameter"),
    (MKPE(max_iter=-1), "'max_iter' parameter"),
])
def test_bad_parameters_are_refused(est, match):
    with pytest.raises(ValueError, match=match):
        est.fit(relation_inputs(count_relation()))


def test_bad_relations_are_refused():
    R = count_relation(8, 6)
    R[2] = 0.0
    for est in (ACAS(), CODE(n_restarts=1)):
        with pytest.raises(ValueError, match="1 rows are empty"):
            est.fit(relation_inputs(R))
    with pytest.raises(ValueError, match="MKPE parameter n_components .*: 7 is not allowed: the inputs' relation has "
                                         "n = 6 columns"):
        MKPE(n_components=7).fit(relation_inputs(count_relation(8, 6)))
    with pytest.raises(ValueError, match="exceeds max_samples = 5"):
        CODE(max_samples=5).fit(relation_inputs(count_relation(8, 6)))
    with pytest.raises(ValueError, match="needs a relation"):
        ACAS().fit(Inputs(X=np.zeros((3, 2))))
    with pytest.raises(ValueError, match="model must be one of"):
        code_nll(np.zeros(4), np.ones((1, 1)), 1, "other")
