"""NeRV / t-NeRV (Venna et al. 2010, Sec. 3 and 4.6; docs/papers.md "NeRV"): gradients, the lambda = 1 limits,
calibration, the sphere trade-off of Fig. 2, determinism and the size guard."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from cova.inputs import Inputs
from cova.methods.nerv.nerv import NeRV, TNeRV
from cova.metrics.retrieval import (
    calibrate_precisions,
    joint_smoothed_precision_recall,
    log_conditional_probabilities,
    smoothed_precision_recall,
)
from cova.objectives.nerv import joint_log_probabilities, nerv_cost_and_gradient, tnerv_cost_and_gradient


def _problem(n: int = 14, k: float = 4.0, seed: int = 0):
    """Random input, calibrated conditionals (P, log P, beta) and a random display Z."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    D2 /= np.sqrt(D2)[~np.eye(n, dtype=bool)].mean() ** 2
    beta = calibrate_precisions(D2, k)
    lp = log_conditional_probabilities(D2, beta)
    P = np.exp(lp)
    Z = rng.normal(size=(n, 2))
    return X, P, lp, beta, Z


def _fd_gradient(f, Z: np.ndarray, h: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(Z)
    for idx in np.ndindex(*Z.shape):
        Zp = Z.copy()
        Zm = Z.copy()
        Zp[idx] += h
        Zm[idx] -= h
        g[idx] = (f(Zp) - f(Zm)) / (2 * h)
    return g


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


# ------------------------------------------------------------------------------------------------ gradients

@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_nerv_gradient_matches_finite_differences(lam):
    _, P, lp, beta, Z = _problem()
    _, g = nerv_cost_and_gradient(Z, P, lam, beta, log_P=lp)
    fd = _fd_gradient(lambda Y: nerv_cost_and_gradient(Y, P, lam, beta, log_P=lp)[0], Z)
    assert _rel(g, fd) < 1e-5


@pytest.mark.parametrize("lam", [0.0, 0.4, 1.0])
def test_tnerv_gradient_matches_finite_differences(lam):
    _, _, lp, _, Z = _problem(seed=1)
    ljoint = joint_log_probabilities(lp)
    Pj = np.exp(ljoint)
    assert abs(Pj.sum() - 1.0) < 1e-12
    _, g = tnerv_cost_and_gradient(Z, Pj, lam, log_P=ljoint)
    fd = _fd_gradient(lambda Y: tnerv_cost_and_gradient(Y, Pj, lam, log_P=ljoint)[0], Z)
    assert _rel(g, fd) < 1e-5


def test_nerv_cost_equals_plain_eq4():
    """Eq. 4 in sum form, written with loops: lam sum p log(p/q) + (1 - lam) sum q log(q/p)."""
    _, P, lp, beta, Z = _problem(n=9)
    n = Z.shape[0]
    lam = 0.37
    cost, _ = nerv_cost_and_gradient(Z, P, lam, beta, log_P=lp)
    ref = 0.0
    for i in range(n):
        w = np.array([math.exp(-beta[i] * np.sum((Z[i] - Z[j]) ** 2)) if j != i else 0.0 for j in range(n)])
        q = w / w.sum()
        for j in range(n):
            if j != i:
                ref += lam * P[i, j] * math.log(P[i, j] / q[j]) + (1 - lam) * q[j] * math.log(q[j] / P[i, j])
    assert abs(cost - ref) < 1e-10 * abs(ref)


# ------------------------------------------------------------------------------------------------ lambda = 1

def _sne(Z: np.ndarray, P: np.ndarray, beta: np.ndarray) -> tuple[float, np.ndarray]:
    """SNE (Hinton & Roweis 2002) with the paper's kernel q_{j|i} ∝ exp(-beta_i ||y_i - y_j||^2):
    C = sum_i sum_j p_{j|i} log(p_{j|i} / q_{j|i}),
    dC/dy_i = 2 sum_j (beta_i (p_{j|i} - q_{j|i}) + beta_j (p_{i|j} - q_{i|j})) (y_i - y_j)."""
    n = Z.shape[0]
    Q = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if j != i:
                Q[i, j] = math.exp(-beta[i] * np.sum((Z[i] - Z[j]) ** 2))
        Q[i] /= Q[i].sum()
    C = sum(P[i, j] * math.log(P[i, j] / Q[i, j]) for i in range(n) for j in range(n) if i != j)
    G = np.zeros_like(Z)
    for i in range(n):
        for j in range(n):
            if j != i:
                G[i] += 2 * (beta[i] * (P[i, j] - Q[i, j]) + beta[j] * (P[j, i] - Q[j, i])) * (Z[i] - Z[j])
    return C, G


def test_nerv_lambda_one_is_sne():
    _, P, lp, beta, Z = _problem(n=10, seed=3)
    c, g = nerv_cost_and_gradient(Z, P, 1.0, beta, log_P=lp)
    c_ref, g_ref = _sne(Z, P, beta)
    assert abs(c - c_ref) < 1e-10 * abs(c_ref)
    assert _rel(g, g_ref) < 1e-10
    # classic SNE (unit widths): gradient 2 sum_j (p_{j|i} - q_{j|i} + p_{i|j} - q_{i|j})(y_i - y_j)
    ones = np.ones(Z.shape[0])
    c1, g1 = nerv_cost_and_gradient(Z, P, 1.0, ones)
    c1_ref, g1_ref = _sne(Z, P, ones)
    assert abs(c1 - c1_ref) < 1e-10 * abs(c1_ref) and _rel(g1, g1_ref) < 1e-10


def test_tnerv_lambda_one_is_tsne():
    """t-SNE (van der Maaten & Hinton 2008): C = KL(P || Q), dC/dy_i = 4 sum_j (p_ij - q_ij)(y_i - y_j) /
    (1 + ||y_i - y_j||^2)."""
    _, _, lp, _, Z = _problem(n=10, seed=4)
    Pj = np.exp(joint_log_probabilities(lp))
    n = Z.shape[0]
    W = np.array([[1.0 / (1.0 + np.sum((Z[i] - Z[j]) ** 2)) if i != j else 0.0 for j in range(n)]
                  for i in range(n)])
    Q = W / W.sum()
    C = sum(Pj[i, j] * math.log(Pj[i, j] / Q[i, j]) for i in range(n) for j in range(n) if i != j)
    G = np.array([sum(4 * (Pj[i, j] - Q[i, j]) * W[i, j] * (Z[i] - Z[j]) for j in range(n) if j != i)
                  for i in range(n)])
    c, g = tnerv_cost_and_gradient(Z, Pj, 1.0)  # log_P from P itself (all entries > 0)
    assert abs(c - C) < 1e-10 * abs(C)
    assert _rel(g, G) < 1e-10


def test_cost_rejects_zero_p_without_log_p():
    _, P, _, beta, Z = _problem(n=8)
    P = P.copy()
    P[0, 1] = 0.0
    with pytest.raises(ValueError, match="log_P"):
        nerv_cost_and_gradient(Z, P, 0.5, beta)
    with pytest.raises(ValueError, match="lam"):
        nerv_cost_and_gradient(Z, np.exp(_problem(n=8)[2]), 1.5, beta)


# ------------------------------------------------------------------------------------------------ calibration

def test_calibration_hits_entropy_log_k():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 5))
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    for k in (5, 20, 40):
        beta = calibrate_precisions(D2, k)
        lp = log_conditional_probabilities(D2, beta)
        np.fill_diagonal(lp, 0.0)
        p = np.exp(lp)
        np.fill_diagonal(p, 0.0)
        H = -(p * lp).sum(axis=1)
        assert np.max(np.abs(H - math.log(k))) < 1e-8
    with pytest.raises(ValueError):
        calibrate_precisions(D2, 199)


# ------------------------------------------------------------------------------------------------ estimators

def _sphere(n: int, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_sphere_tradeoff_fig2():
    """Fig. 2: small lambda (precision) unfolds the sphere, lambda = 1 (recall) squashes it: smoothed
    precision is better for lambda = 0, smoothed recall for lambda = 1."""
    X = _sphere(200)
    kw = dict(anneal_rounds=5, cg_steps=2, cg_steps_final=15, random_state=0)
    Z0 = NeRV(lam=0.0, **kw).fit(X).embedding_
    Z1 = NeRV(lam=1.0, **kw).fit(X).embedding_
    s0 = smoothed_precision_recall(X, Z0)
    s1 = smoothed_precision_recall(X, Z1)
    assert s0.precision < 0.5 * s1.precision
    assert s1.recall < 0.5 * s0.recall


def test_tnerv_tradeoff_on_joint_measures():
    X = _sphere(150, seed=1)
    kw = dict(n_neighbors=30, anneal_rounds=3, cg_steps=2, cg_steps_final=15, random_state=0)
    Z0 = TNeRV(lam=0.0, **kw).fit(X).embedding_
    m1 = TNeRV(lam=1.0, **kw).fit(X)
    j0 = joint_smoothed_precision_recall(X, Z0, 30)
    j1 = joint_smoothed_precision_recall(X, m1.embedding_, 30)
    assert j0.precision < j1.precision and j1.recall < j0.recall
    assert abs(m1.cost_ - j1.recall) < 1e-9 * j1.recall  # lam = 1: the fitted cost is D(p, q) of Eq. 8


def test_fit_is_deterministic_and_accepts_inputs_and_distances():
    X = _sphere(60, seed=2)
    kw = dict(n_neighbors=10, anneal_rounds=2, cg_steps=2, cg_steps_final=5)
    inputs = Inputs(X=X, labels=np.zeros(60, dtype=int), label_names=["a"], W=sp.csr_matrix((60, 60)),
                    R=np.ones((60, 1)) / 60, prototypes=np.zeros((1, 2)))
    a = NeRV(**kw).fit(inputs).embedding_
    b = clone(NeRV(**kw)).fit_transform(X)
    assert np.array_equal(a, b)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    c = NeRV(metric="precomputed", **kw).fit(D).embedding_
    assert np.allclose(a, c, atol=1e-6)
    d = NeRV(random_state=1, **kw).fit(X).embedding_
    assert not np.allclose(a, d)
    m = NeRV(init="pca", anneal="dredviz", **kw).fit(X)
    assert m.embedding_.shape == (60, 2) and np.all(np.isfinite(m.embedding_)) and m.sigma_.shape == (60,)


def test_size_guard_and_parameter_errors():
    X = _sphere(30)
    for cls in (NeRV, TNeRV):
        with pytest.raises(ValueError, match="max_samples"):
            cls(max_samples=29, n_neighbors=5).fit(X)
    with pytest.raises(ValueError, match="lam"):
        NeRV(lam=-0.1, n_neighbors=5).fit(X)
    with pytest.raises(ValueError, match="n_neighbors"):
        NeRV(n_neighbors=29).fit(X)
    with pytest.raises(ValueError, match="anneal"):
        NeRV(anneal="fast", n_neighbors=5).fit(X)
    with pytest.raises(ValueError, match="init"):
        NeRV(init="spectral", n_neighbors=5).fit(X)


def test_annealing_schedules():
    """paper: sigma_i(t) = s0 + (t/T)(sigma_i^final - s0), s0 = half the diameter; dredviz: sigma_i^2(t) =
    max(2 r_t^2, sigma_final^2), r_t = s0 (1 - t/T); both end at sigma_i^final in the final phase."""
    rng = np.random.default_rng(8)
    D = np.abs(rng.normal(size=(6, 6)))
    D = D + D.T
    np.fill_diagonal(D, 0.0)
    s0 = D.max() / 2
    beta_f = np.array([4.0, 9.0, 16.0, 25.0, 1.0, 100.0])
    sf = 1 / np.sqrt(beta_f)
    paper = NeRV(anneal_rounds=4)._schedule(D, beta_f)
    assert len(paper) == 4
    for t, b in enumerate(paper):
        assert np.allclose(1 / np.sqrt(b), s0 + t / 4 * (sf - s0))
    dred = NeRV(anneal_rounds=4, anneal="dredviz")._schedule(D, beta_f)
    for t, b in enumerate(dred):
        assert np.allclose(1 / b, np.maximum(2 * (s0 * (1 - t / 4)) ** 2, sf ** 2))
    assert all(np.array_equal(b, beta_f) for b in NeRV(anneal_rounds=3, anneal="none")._schedule(D, beta_f))
