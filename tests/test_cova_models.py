"""COVA-E2–E4, P1–P4 and eigen-COVA (Secs. 3.1.4, 3.2), relation / compacted features (Sec. 3.2, footnote 5),
and the paper's targets on Compound and Sinusoid."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from cova.affinity.graphs import laplacian_eigenvectors
from cova.cohorts import RelationFeatures, compacted_features, relation_features, ring_prototypes
from cova.datasets import Dataset, load
from cova.inputs import Inputs, build_inputs
from cova.manifolds.eigen import eigen_cova_solve
from cova.methods import METHODS, CovaE1, CovaE2, CovaE3, CovaE4, CovaP1, CovaP2, CovaP3, CovaP4, EigenCova, make_method
from cova.methods.cova.manifold import _CovaManifold
from cova.metrics import s_c, s_c_r, s_n, s_s
from cova.objectives.cova import (
    cova_objective,
    e1_objective,
    eigen_cova_blocks,
    eigen_cova_matrix,
    eigen_cova_objective,
    prototype_distance_weights,
)

COMPOUND_TXT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "compound" / "Compound.txt"
SPEC = {"weights": {"kind": "euclidean_max", "n_neighbors": 50},
        "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
        "prototypes": {"kind": "ring", "rho": 3}}
ALPHA, ETA = 0.95, 0.8


@pytest.fixture(scope="module", autouse=True)
def _single_threaded_blas():
    """The matrices here are small (≤ 1000×500): multi-threaded BLAS only adds contention on a shared 2-core
    machine (P1 on Compound: 0.2 s single-threaded vs 1.3 s with 2 busy threads). Results are unaffected."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _compound_dataset() -> Dataset:
    assert COMPOUND_TXT.exists(), f"the project's offline datasets are expected beside the clone: {COMPOUND_TXT}"
    data = np.loadtxt(COMPOUND_TXT)
    values, labels = np.unique(data[:, 2], return_inverse=True)
    return Dataset(data[:, :2], labels, [f"cluster {int(v)}" for v in values])


@pytest.fixture(scope="module")
def compound() -> Inputs:
    return build_inputs(_compound_dataset(), SPEC)


@pytest.fixture(scope="module")
def sinusoid() -> Inputs:
    return build_inputs(load("sinusoid"), SPEC)


@pytest.fixture(scope="module")
def blobs() -> Inputs:
    """Four well-separated 2-D blobs of 30 points arranged like their ring prototypes, Eq. 12 confidences."""
    rng = np.random.default_rng(1)
    centres = 3.0 * ring_prototypes(4, 3.0)
    labels = np.repeat(np.arange(4), 30)
    X = centres[labels] + rng.normal(0.0, 0.5, (120, 2))
    spec = dict(SPEC, weights={"kind": "euclidean_max", "n_neighbors": 10})
    return build_inputs(Dataset(X, labels, list("abcd")), spec)


def _scores(inputs: Inputs, est) -> dict[str, float]:
    Z = est.embedding_
    return {"s_n": 100 * s_n(inputs.X, Z, inputs.labels), "s_c": 100 * s_c(Z, inputs.labels, est.prototypes_),
            "s_s": 100 * s_s(Z, inputs.labels), "s_c_r": 100 * s_c_r(Z, inputs.labels, inputs.prototypes)}


MODELS = {"e1": lambda: CovaE1(alpha=ALPHA), "e2": lambda: CovaE2(alpha=ALPHA), "e3": lambda: CovaE3(alpha=ALPHA),
          "e4": lambda: CovaE4(alpha=ALPHA), "p1": lambda: CovaP1(alpha=ALPHA), "p2": lambda: CovaP2(alpha=ALPHA),
          "p3": lambda: CovaP3(alpha=ALPHA), "p4": lambda: CovaP4(alpha=ALPHA),
          "eigen": lambda: EigenCova(alpha=ALPHA, eta=ETA)}


@pytest.fixture(scope="module")
def compound_fits(compound):
    """Every model fitted on Compound with the paper's defaults (α = 0.95, η = 0.8, ρ = 3): (estimator, scores)."""
    out = {}
    for name, make in MODELS.items():
        est = make().fit(compound)
        out[name] = (est, _scores(compound, est))
    return out


# The Sinusoid models (E2 takes ~15 s on 1,000 points with the exact O(l²) KL term). P2 and P3
# have no table-C target and cost another ~16 s, so they are left out of the test budget.
SINUSOID_MODELS = ("e1", "e2", "e3", "e4", "p1", "p4", "eigen")


@pytest.fixture(scope="module")
def sinusoid_fits(sinusoid):
    out = {}
    for name in SINUSOID_MODELS:
        est = MODELS[name]().fit(sinusoid)
        out[name] = (est, _scores(sinusoid, est))
    return out


# ------------------------------------------------------------------------------------------------------------
# relation features F (Sec. 3.2) and compacted features (footnote 5)
# ------------------------------------------------------------------------------------------------------------

def test_relation_features_formula_median_sigma_and_prototype_draw():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    F, q, sigma = relation_features(X, n_prototypes=50, random_state=3)
    D = cdist(X, X[q])
    assert F.shape == (300, 50) and q.shape == (50,)
    assert np.all(np.diff(q) > 0) and q.min() >= 0 and q.max() < 300
    assert sigma == pytest.approx(np.median(D), rel=1e-12)
    np.testing.assert_allclose(F, np.exp(-D ** 2 / (2 * sigma ** 2)), rtol=1e-12, atol=0)
    assert np.allclose(F[q, np.arange(50)], 1.0)  # uncentred: every sample prototype has r(q_j, q_j) = 1
    F2, q2, _ = relation_features(X, n_prototypes=50, random_state=3)
    assert np.array_equal(q, q2) and np.array_equal(F, F2)
    assert not np.array_equal(q, relation_features(X, n_prototypes=50, random_state=4)[1])
    # fraction of l (Cora: 15%), cap at l (Compound: 399 < 500), explicit sigma
    assert relation_features(X, n_prototypes=0.15)[0].shape == (300, 45)
    F_all, q_all, _ = relation_features(X, n_prototypes=500)
    assert np.array_equal(q_all, np.arange(300)) and F_all.shape == (300, 300)
    F_s, _, s = relation_features(X, n_prototypes=50, sigma=0.7, random_state=3)
    assert s == 0.7
    np.testing.assert_allclose(F_s, np.exp(-D ** 2 / (2 * 0.49)), rtol=1e-12)
    with pytest.raises(ValueError):
        relation_features(X, n_prototypes=1.5)


def test_relation_features_high_dimension_path_matches_cdist():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 40)) + 5.0
    F, q, sigma = relation_features(X, n_prototypes=30, random_state=0)
    D = cdist(X, X[q])
    assert sigma == pytest.approx(np.median(D), rel=1e-9)
    np.testing.assert_allclose(F, np.exp(-D ** 2 / (2 * sigma ** 2)), rtol=1e-9, atol=1e-14)


def test_relation_features_transformer_reuses_prototypes_and_sigma():
    rng = np.random.default_rng(2)
    X, X_new = rng.normal(size=(200, 2)), rng.normal(size=(17, 2)) * 3
    rf = RelationFeatures(n_prototypes=40, random_state=5)
    F = rf.fit_transform(X)
    assert np.array_equal(F, rf.transform(X))
    assert np.array_equal(F, relation_features(X, 40, random_state=5)[0])
    F_new = rf.transform(X_new)
    expected = np.exp(-cdist(X_new, X[rf.q_indices_]) ** 2 / (2 * rf.sigma_ ** 2))
    np.testing.assert_allclose(F_new, expected, rtol=1e-12)
    # σ_F is the training one, not the median of the new distances
    assert rf.sigma_ != pytest.approx(np.median(cdist(X_new, X[rf.q_indices_])))
    with pytest.raises(ValueError):
        RelationFeatures().transform(X)
    with pytest.raises(ValueError):
        rf.transform(rng.normal(size=(3, 5)))


def _compacted_reference(S: np.ndarray, y: np.ndarray, h: int, c: int) -> np.ndarray:
    """Brute force S̃YM⁻¹: keep (i, j) iff j is among the h largest of row i or i among the h largest of column j."""
    l, r = S.shape
    N = np.zeros_like(S, dtype=bool)
    for i in range(l):
        order = sorted(range(r), key=lambda j: (-S[i, j], j))[:h]
        N[i, order] = True
    for j in range(r):
        order = sorted(range(l), key=lambda i: (-S[i, j], i))[:h]
        N[order, j] = True
    Y = np.zeros((r, c))
    Y[np.arange(r), y] = 1
    return (S * N) @ Y / Y.sum(axis=0)


def test_compacted_features_general_form():
    rng = np.random.default_rng(3)
    l, r, c, h = 25, 12, 3, 2
    S = np.round(rng.uniform(size=(l, r)), 1)  # rounding creates ties (broken by the lower index)
    y = np.arange(r) % c
    expected = _compacted_reference(S, y, h, c)
    got = compacted_features(S, y, n_neighbors=h)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    np.testing.assert_allclose(compacted_features(sp.csr_matrix(S), y, n_neighbors=h), expected, rtol=1e-14)
    # S used as given (already sparsified, e.g. W copied into S̃): S Y M⁻¹ exactly
    counts = np.bincount(y)
    np.testing.assert_allclose(compacted_features(S, y), np.stack([S[:, y == j].sum(1) / counts[j]
                                                                   for j in range(c)], axis=1), rtol=1e-14)
    # representatives = samples: the self-similarities (here the largest entries) are dropped before the selection
    Ssq = rng.uniform(size=(l, l))
    Ssq = Ssq + Ssq.T
    np.fill_diagonal(Ssq, 10.0)
    yl = np.arange(l) % c
    S0 = Ssq.copy()
    np.fill_diagonal(S0, 0.0)
    ref = _compacted_reference(S0, yl, h, c)
    got = compacted_features(Ssq, yl, n_neighbors=h, self_indices=np.arange(l))
    np.testing.assert_allclose(got, ref, rtol=1e-14)
    assert not np.allclose(compacted_features(Ssq, yl, n_neighbors=h), ref)
    with pytest.raises(ValueError, match="no representative"):
        compacted_features(S, np.zeros(r, dtype=int), n_cohorts=2)


# ------------------------------------------------------------------------------------------------------------
# eigen-COVA (Sec. 3.2.2)
# ------------------------------------------------------------------------------------------------------------

def _eq25_dense(F: np.ndarray, W: sp.spmatrix, R: np.ndarray, U_: np.ndarray, W_v: np.ndarray,
                alpha: float, eta: float) -> np.ndarray:
    """O_eig by the corrected Eq. 25 with dense l×l blocks: O_1 + αη Tblkᵀ𝐋(B)Tblk, B = [[0, R], [Rᵀ, 0]]."""
    l, c = R.shape
    Wd = W.toarray()
    L = np.diag(Wd.sum(1)) - Wd
    Lv = np.diag(W_v.sum(1)) - W_v
    O1 = np.zeros((F.shape[1] + U_.shape[1],) * 2)
    kt = F.shape[1]
    O1[:kt, :kt] = (1 - alpha) * F.T @ L @ F
    O1[kt:, kt:] = -alpha * (1 - eta) * U_.T @ Lv @ U_
    B = np.block([[np.zeros((l, l)), R], [R.T, np.zeros((c, c))]])
    LB = np.diag(B.sum(1)) - B
    T = np.block([[F, np.zeros((l, U_.shape[1]))], [np.zeros((c, kt)), U_]])
    return O1 + alpha * eta * T.T @ LB @ T


def test_o_eig_is_symmetric_and_equals_eq23(toy_inputs):
    inp = toy_inputs
    F, _, _ = relation_features(inp.X, n_prototypes=12, random_state=0)
    W_v = prototype_distance_weights(inp.prototypes)
    O = eigen_cova_matrix(eigen_cova_blocks(F, inp.W, inp.R, inp.prototypes, W_v), ALPHA, ETA)
    assert O.shape == (14, 14)
    assert np.array_equal(O, O.T)
    np.testing.assert_allclose(O, _eq25_dense(F, inp.W, inp.R, inp.prototypes, W_v, ALPHA, ETA),
                               rtol=1e-10, atol=1e-13 * np.abs(O).max())
    rng = np.random.default_rng(0)
    for _ in range(5):
        P, _ = np.linalg.qr(rng.normal(size=(14, 2)))
        assert np.allclose(P.T @ P, np.eye(2))
        value = np.trace(P.T @ O @ P)
        ref = eigen_cova_objective(F, P[:12], P[12:], inp.W, inp.R, inp.prototypes, W_v, ALPHA, ETA)
        assert abs(value - ref) <= 1e-10 * abs(ref)
    # regression guard for Eq. 25: the printed lower-left block W_v Rᵀ of B breaks symmetry
    l, c = inp.R.shape
    B_printed = np.block([[np.zeros((l, l)), inp.R], [W_v @ inp.R.T, np.zeros((c, c))]])
    T = np.block([[F, np.zeros((l, 2))], [np.zeros((c, 12)), inp.prototypes]])
    LBp = np.diag(B_printed.sum(1)) - B_printed
    printed = T.T @ LBp @ T
    assert np.abs(printed - printed.T).max() > 1e-3 * np.abs(printed).max()


def _table_f3_reference(F, W, R, U_, W_v, alpha, eta, k):
    """Table F.3 literally: rebuild O_eig from the deflated F^t and Υ^t (W_v from the original Υ), full dense
    eigh, take the eigenvector of the smallest eigenvalue."""
    kt = F.shape[1]
    Ft, Ut = F.copy(), U_.copy()
    P, lams = [], []
    for _ in range(k):
        O = _eq25_dense(Ft, W, R, Ut, W_v, alpha, eta)
        w, V = np.linalg.eigh(0.5 * (O + O.T))
        p = V[:, 0]
        u, v = p[:kt], p[kt:]
        P.append(p)
        lams.append(w[0])
        Ft = Ft @ (np.eye(kt) - np.outer(u, u) / (u @ u))
        Ut = Ut @ (np.eye(U_.shape[1]) - np.outer(v, v) / (v @ v))
    return np.column_stack(P), np.array(lams)


def test_eigen_cova_deflation_matches_dense_table_f3(compound):
    inp = compound
    est = EigenCova(alpha=ALPHA, eta=ETA).fit(inp)
    P, lam = est.eigenvectors_, est.eigenvalues_
    U, V = est.components_, est.prototype_components_
    F = est.relation_features_.transform(inp.X)
    kt = F.shape[1]
    assert np.all(lam < 0)
    np.testing.assert_allclose(np.linalg.norm(P, axis=0), 1.0, rtol=0, atol=1e-12)
    u1, u2, v1, v2 = U[:, 0], U[:, 1], V[:, 0], V[:, 1]
    assert abs(u1 @ u2) <= 1e-10 * np.linalg.norm(u1) * np.linalg.norm(u2)
    assert abs(v1 @ v2) <= 1e-10 * np.linalg.norm(v1) * np.linalg.norm(v2)
    F2 = F @ (np.eye(kt) - np.outer(u1, u1) / (u1 @ u1))
    np.testing.assert_allclose(est.embedding_, np.column_stack([F @ u1, F2 @ u2]), rtol=0,
                               atol=1e-10 * np.abs(est.embedding_).max())
    np.testing.assert_allclose(est.prototypes_, inp.prototypes @ V, rtol=1e-14)
    W_v = prototype_distance_weights(inp.prototypes)
    ref_obj = eigen_cova_objective(F, U, V, inp.W, inp.R, inp.prototypes, W_v, ALPHA, ETA)
    assert est.objective_ == pytest.approx(ref_obj, rel=1e-9)
    P_ref, lam_ref = _table_f3_reference(F, inp.W, inp.R, inp.prototypes, W_v, ALPHA, ETA, 2)
    np.testing.assert_allclose(lam, lam_ref, rtol=1e-8)
    for t in range(2):
        sign = np.sign(P[:, t] @ P_ref[:, t])
        np.testing.assert_allclose(P[:, t], sign * P_ref[:, t], rtol=0, atol=1e-7)


def test_eigen_cova_degenerate_case_raises(compound):
    inp = compound
    F0, _, _ = relation_features(inp.X, n_prototypes=30, random_state=0)
    F = np.hstack([F0, F0[:, :5]])  # rank-deficient F: [u; 0] with Fu = 0 is an exact null vector of O_eig
    assert np.linalg.matrix_rank(F) < F.shape[1]
    W_v = prototype_distance_weights(inp.prototypes)
    blocks = eigen_cova_blocks(F, inp.W, inp.R, inp.prototypes, W_v)
    O = eigen_cova_matrix(blocks, ALPHA, 1.0)
    assert np.linalg.eigvalsh(O[F.shape[1]:, F.shape[1]:]).min() > 0  # positive-definite V-block
    with pytest.raises(ValueError, match="degenerate"):
        eigen_cova_solve(O, F.shape[1], 2)
    # the same F with a negative V-block is well defined
    P, lam = eigen_cova_solve(eigen_cova_matrix(blocks, ALPHA, ETA), F.shape[1], 2)
    assert np.all(lam < 0) and np.allclose(np.linalg.norm(P, axis=0), 1.0)
    with pytest.raises(ValueError, match="degenerate"):
        EigenCova(alpha=ALPHA, eta=1.0).fit(inp)
    # one negative eigenvalue only: step 1 is well defined, step 2 would return a null vector
    with pytest.raises(ValueError, match="degenerate: no negative eigenvalue at step 2"):
        EigenCova(alpha=ALPHA, eta=0.88).fit(inp)


def test_eigen_cova_raw_w_v_contracts_z(compound):
    """The literal (raw) W_v makes the V-block very negative, so ‖u‖ → 0 and Z collapses relative to E."""
    unit = EigenCova(alpha=ALPHA, eta=ETA).fit(compound)
    raw = EigenCova(alpha=ALPHA, eta=ETA, wv_normalize=False).fit(compound)
    assert np.linalg.norm(raw.components_) < 0.2 * np.linalg.norm(unit.components_)
    np.testing.assert_allclose(raw.W_v_ / raw.W_v_.sum(), unit.W_v_, rtol=1e-12)


# ------------------------------------------------------------------------------------------------------------
# E2–E4 and P1–P4: optimisation behaviour (and the E1 checks)
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["e2", "e3", "e4", "p1", "p2", "p3", "p4"])
def test_objective_history_is_non_increasing(compound_fits, name):
    est, _ = compound_fits[name]
    h = est.objective_history_
    assert h is not None and h.size == est.n_iter_ + 1 and est.n_iter_ > 10
    assert np.all(np.diff(h) <= 0)
    assert h[-1] < h[0]
    assert est.objective_ == h[-1]


@pytest.mark.parametrize("name", ["e2", "e3", "e4", "p1", "p2", "p3", "p4"])
def test_final_objective_matches_rules(compound, compound_fits, name):
    """The reported objective is Eq. 13 with the model's pair of rules, evaluated at the returned embedding."""
    est, _ = compound_fits[name]
    rules = {"e2": ("kl", "kl"), "e3": ("dist", "kl"), "e4": ("kl", "dist"), "p1": ("dist", "dist"),
             "p2": ("kl", "kl"), "p3": ("dist", "kl"), "p4": ("kl", "dist")}[name]
    f, _ = cova_objective(est.embedding_, compound.W, compound.R, compound.prototypes, ALPHA, *rules)
    assert f == pytest.approx(est.objective_, rel=1e-10)


class _IterativeE1(_CovaManifold):
    _rules = ("dist", "dist")


def test_manifold_descent_with_e1_rules_reaches_the_closed_form(toy_inputs):
    """E1 iterative check: the E2–E4 machinery with the (dist, dist) pair converges to the corrected Eq. 14."""
    Z1 = CovaE1(alpha=0.5).fit(toy_inputs).embedding_
    f1, _ = e1_objective(Z1, toy_inputs.W, toy_inputs.R, toy_inputs.prototypes, 0.5)
    it = _IterativeE1(alpha=0.5, max_iter=20000, gtol=1e-9).fit(toy_inputs)
    assert it.objective_ >= f1 - 1e-12 * abs(f1)
    assert it.objective_ == pytest.approx(f1, rel=1e-8)
    np.testing.assert_allclose(it.embedding_, Z1, rtol=0, atol=1e-4 * np.abs(Z1).max())


def test_p1_optimum_is_below_its_init(compound_fits, compound):
    est, _ = compound_fits["p1"]
    h = est.objective_history_
    assert h[-1] < 0.5 * h[0]
    # the init value is f at the eigenvector init U_0 of Fᵀ𝐋(W)F
    F = est.relation_features_.transform(compound.X)
    U0 = CovaP1(alpha=ALPHA, cycles=0).fit(compound).components_
    f0, _ = cova_objective(F @ U0, compound.W, compound.R, compound.prototypes, ALPHA, "dist", "dist")
    assert f0 == pytest.approx(h[0], rel=1e-12)
    assert np.allclose(est.components_.T @ est.components_, np.eye(2), atol=1e-12)


@pytest.mark.parametrize("model", [CovaE2, CovaE3, CovaE4])
def test_alpha_one_puts_samples_at_their_prototypes(model):
    """α = 1 keeps only the cohort rule. With λ_p = 0 (R = own-cohort confidences only) every sample must end in
    its own prototype's cell; the distance rule (E3) puts it on the prototype itself. (With λ_p > 0 an outlier whose
    own-cohort density is below λ_p is legitimately pulled to the weighted prototype mean, as in E1.)"""
    rng = np.random.default_rng(1)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
    labels = np.repeat(np.arange(4), 30)
    X = centres[labels] + rng.normal(0.0, 0.5, (120, 2))
    spec = dict(SPEC, weights={"kind": "euclidean_max", "n_neighbors": 10},
                confidence={"kind": "eq12", "source": "eq9", "lambda_p": 0.0})
    inp = build_inputs(Dataset(X, labels, list("abcd")), spec)
    est = model(alpha=1.0).fit(inp)
    assert s_c(est.embedding_, labels, inp.prototypes) == 1.0
    dist = np.linalg.norm(est.embedding_ - inp.prototypes[labels], axis=1)
    assert np.median(dist) < 0.1 * 3.0
    if model is CovaE3:
        assert dist.max() < 1e-3 * 3.0


@pytest.mark.parametrize("init", ["e1", "laplacian", "random"])
def test_e_model_inits(blobs, init):
    est = CovaE4(alpha=0.9, init=init).fit(blobs)
    assert np.all(np.isfinite(est.embedding_)) and np.all(np.diff(est.objective_history_) <= 0)
    assert s_c(est.embedding_, blobs.labels, blobs.prototypes) >= 0.95
    with pytest.raises(ValueError, match="init"):
        CovaE4(init="pca").fit(blobs)


def test_laplacian_init_sparse_path_matches_dense(compound):
    V = laplacian_eigenvectors(compound.W, 2)  # l = 399 > 200: shift-invert Lanczos
    L = (sp.diags(np.asarray(compound.W.sum(1)).ravel()) - compound.W).toarray()
    w, E = np.linalg.eigh(L)
    # same 2-D subspace as the dense eigenvectors 2 and 3 (the graph is connected: one zero eigenvalue)
    assert w[1] > 1e-10
    np.testing.assert_allclose(np.abs(E[:, 1:3].T @ V), np.eye(2), atol=1e-6)


@pytest.mark.parametrize("kwargs", [{"init": "random"}, {"retraction": "polar"}])
def test_p_model_options(blobs, kwargs):
    est = CovaP1(alpha=0.9, n_sample_prototypes=40, **kwargs).fit(blobs)
    U = est.components_
    assert U.shape == (40, 2) and np.allclose(U.T @ U, np.eye(2), atol=1e-12)
    assert np.all(np.diff(est.objective_history_) <= 0)
    assert s_c(est.embedding_, blobs.labels, blobs.prototypes) >= 0.9


@pytest.mark.parametrize("model", [CovaP1, CovaP4])
def test_p_model_sgd_batches(blobs, model):
    """SGD batches (Table F.2, l > batch_size) reach most of the full-batch decrease of the full objective."""
    kw = dict(alpha=0.9, n_sample_prototypes=40)
    sgd = model(batch_size=50, inner_iter=10, cycles=3, **kw).fit(blobs)
    assert sgd.objective_history_ is None and sgd.objective_ is None
    assert sgd.batch_history_.size > 0 and sgd.n_iter_ > 0
    assert np.allclose(sgd.components_.T @ sgd.components_, np.eye(2), atol=1e-12)
    full = model(**kw).fit(blobs)
    U0 = model(cycles=0, **kw).fit(blobs).components_
    F = full.relation_features_.transform(blobs.X)

    def f(U):
        return cova_objective(F @ U, blobs.W, blobs.R, blobs.prototypes, 0.9, *model._rules)[0]

    f0, f_full, f_sgd = f(U0), f(full.components_), f(sgd.components_)
    assert f_full == pytest.approx(full.objective_, rel=1e-12)
    assert f0 - f_sgd >= 0.8 * (f0 - f_full) > 0
    assert s_c(sgd.embedding_, blobs.labels, blobs.prototypes) >= 0.9


@pytest.mark.parametrize("feasible_set", ["stiefel", "b_orthogonal"])
def test_embedding_models_on_the_constrained_feasible_sets_of_appendix_c(blobs, feasible_set):
    """E2 with α = 0 (O_KL^(L) alone, COVA Fig. C.1) on M₁ (ZᵀZ = I) and M₂ (ZᵀBZ = I, B = 𝐃(W/ΣW)): the result
    lies on the set, f never rises, and it is lower than at the start."""
    est = CovaE2(alpha=0.0, feasible_set=feasible_set, max_iter=200).fit(blobs)
    Z = est.embedding_
    b = np.ones(len(Z)) if feasible_set == "stiefel" else np.asarray(blobs.W.sum(axis=1)).ravel() / blobs.W.sum()
    np.testing.assert_allclose(Z.T @ (b[:, None] * Z), np.eye(2), atol=1e-10)
    assert est.optimizer_ == "armijo" and np.all(np.diff(est.objective_history_) <= 0)
    assert est.objective_history_[-1] < est.objective_history_[0]
    with pytest.raises(ValueError, match="Armijo"):
        CovaE2(alpha=0.0, feasible_set=feasible_set, optimizer="momentum").fit(blobs)


def test_full_rank_is_the_default_feasible_set(blobs):
    default = CovaE2(alpha=0.5, max_iter=50).fit(blobs).embedding_
    explicit = CovaE2(alpha=0.5, max_iter=50, feasible_set="full_rank").fit(blobs).embedding_
    np.testing.assert_array_equal(default, explicit)
    with pytest.raises(ValueError, match="feasible_set"):
        CovaE2(feasible_set="sphere").fit(blobs)


def test_verbose_logs_progress(blobs, caplog):
    with caplog.at_level(logging.INFO, logger="cova"):
        CovaE2(alpha=0.5, max_iter=120, gtol=0.0, verbose=True).fit(blobs)
    assert any("iteration 100" in r.getMessage() for r in caplog.records)


def test_registry_and_parameters():
    for name, cls in [("cova_e2", CovaE2), ("cova_e3", CovaE3), ("cova_e4", CovaE4), ("cova_p1", CovaP1),
                      ("cova_p2", CovaP2), ("cova_p3", CovaP3), ("cova_p4", CovaP4), ("eigen_cova", EigenCova)]:
        assert METHODS[name] is cls
        est = make_method(name, {"alpha": 0.3}, seed=7)
        assert isinstance(est, cls) and est.alpha == 0.3 and est.random_state == 7
        assert clone(est).get_params() == est.get_params()
    with pytest.raises(ValueError):
        make_method("cova_p1", {"eta": 0.5})
    with pytest.raises(ValueError, match="alpha"):
        CovaE2(alpha=1.5).fit(None)
    with pytest.raises(ValueError, match="retraction"):
        CovaP1(retraction="cayley").fit(_tiny_inputs())
    with pytest.raises(ValueError, match="eta"):
        EigenCova(eta=-0.1).fit(_tiny_inputs())


def _tiny_inputs() -> Inputs:
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 10)
    X = rng.normal(size=(30, 2)) + 5 * labels[:, None]
    return build_inputs(Dataset(X, labels, list("abc")), dict(SPEC, weights={"kind": "euclidean_max",
                                                                              "n_neighbors": 5}))


# ------------------------------------------------------------------------------------------------------------
# out-of-sample projections (Sec. 3.2, footnote 4)
# ------------------------------------------------------------------------------------------------------------

def test_transform_of_training_data_is_the_embedding(compound_fits, compound):
    for name in ("p1", "p2", "p3", "p4", "eigen"):
        est, _ = compound_fits[name]
        assert np.array_equal(est.transform(compound.X), est.embedding_)


@pytest.mark.parametrize("dataset,min_sc", [("compound", 0.65), ("sinusoid", 0.80)])
def test_held_out_points_land_in_their_prototype_cell(dataset, min_sc):
    ds = _compound_dataset() if dataset == "compound" else load("sinusoid")
    perm = np.random.default_rng(0).permutation(ds.n_samples)
    n_train = int(0.7 * ds.n_samples)
    train, test = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    inp = build_inputs(Dataset(ds.X[train], ds.labels[train], ds.label_names), SPEC)
    for est in (CovaP1(alpha=ALPHA), CovaP4(alpha=ALPHA), EigenCova(alpha=ALPHA, eta=ETA)):
        est.fit(inp)
        Z_test = est.transform(ds.X[test])
        assert Z_test.shape == (test.size, 2) and np.all(np.isfinite(Z_test))
        sc_test = s_c(Z_test, ds.labels[test], est.prototypes_)
        sc_train = s_c(est.embedding_, inp.labels, est.prototypes_)
        assert sc_test >= min_sc, (type(est).__name__, sc_test)
        assert sc_test >= sc_train - 0.1


# ------------------------------------------------------------------------------------------------------------
# paper targets on Compound and Sinusoid; ring prototypes ρ = 3, α = 0.95, η = 0.8
# ------------------------------------------------------------------------------------------------------------

# (S_n ≥, S_c ≥, S_s ≥) in percent; None = no target.
COMPOUND_TARGETS = {"e1": (None, 97, 97), "e2": (None, 70, 75), "e3": (None, 97, 97), "e4": (None, 65, 80),
                    "p1": (50, 70, 75), "p2": (50, 70, 75), "p3": (50, 70, 75), "p4": (50, 60, 75),
                    "eigen": (None, 60, 75)}
SINUSOID_TARGETS = {"e1": (None, 97, 97), "e2": (None, 97, 97), "e3": (None, 97, 97), "e4": (None, 95, 95),
                    "p1": (82, 88, 90), "p4": (82, 88, 90), "eigen": (78, 78, 90)}


def _check_targets(scores: dict[str, float], targets: tuple) -> None:
    for key, bound in zip(("s_n", "s_c", "s_s"), targets):
        if bound is not None:
            assert scores[key] >= bound, (key, scores)


@pytest.mark.parametrize("name", list(COMPOUND_TARGETS))
def test_compound_targets(compound_fits, name):
    _check_targets(compound_fits[name][1], COMPOUND_TARGETS[name])


def test_compound_ranking_and_relative_positioning(compound_fits):
    e_max = max(compound_fits[m][1]["s_n"] for m in ("e1", "e2", "e3", "e4"))
    p_min = min(compound_fits[m][1]["s_n"] for m in ("p1", "p2", "p3", "p4"))
    assert p_min > e_max
    for m in ("e1", "e2", "e3", "e4"):  # S_c^(r) (κ = 2) = 100 for E1–E4 [ours]
        assert compound_fits[m][1]["s_c_r"] == 100.0


@pytest.mark.parametrize("name", SINUSOID_MODELS)
def test_sinusoid_targets(sinusoid_fits, name):
    _check_targets(sinusoid_fits[name][1], SINUSOID_TARGETS[name])


def test_sinusoid_ranking(sinusoid_fits):
    e_max = max(sinusoid_fits[m][1]["s_n"] for m in ("e1", "e2", "e3", "e4"))
    for m in ("p1", "p4", "eigen"):
        assert sinusoid_fits[m][1]["s_n"] > e_max


def test_ring_prototypes_are_the_inputs(compound):
    np.testing.assert_allclose(compound.prototypes, ring_prototypes(6, 3.0), atol=1e-12)
