"""Doubly stochastic affinities (DOSNES Sec. 3): the symmetric Sinkhorn-Knopp scaling, the random-walk normalisation
(Eqs. 3-4), the ``normalize`` post-step of inputs blocks, the largest component and the degrees; plus the paper's
Props. 4.1 and 4.2 (appendix Props. 8.1-8.3) as property checks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.affinity import (
    SinkhornWarning,
    build_weights,
    normalize_affinity,
    random_walk_normalize,
    sinkhorn_knopp,
    symmetrize_normalize,
)
from cova.affinity import doubly_stochastic as ds_module
from cova.datasets import Dataset
from cova.errors import UserError
from cova.inputs import Inputs, build_inputs, largest_component, provided_inputs


def random_symmetric(n: int, density: float, seed: int, heavy: bool = False) -> sp.csr_matrix:
    """A random sparse symmetric non-negative matrix with zero diagonal and no empty row (a ring keeps it
    connected and non-bipartite for odd n); ``heavy`` multiplies by a Pareto outer product (skewed degrees)."""
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    ring = sp.csr_matrix((np.full(n, 0.5), (np.arange(n), (np.arange(n) + 1) % n)), shape=(n, n))
    A = A + ring
    if heavy:
        d = rng.pareto(1.5, n) + 1.0
        A = sp.diags(d) @ A @ sp.diags(d)
    A = (A + A.T).tocsr()
    A.setdiag(0.0)
    A.eliminate_zeros()
    return A


def dense_sinkhorn(W: np.ndarray, sweeps: int = 20000) -> np.ndarray:
    """Brute force: the alternating row (Eq. 1) and column (Eq. 2) steps on a dense copy, symmetrised at the end."""
    P = np.array(W, dtype=np.float64)
    np.fill_diagonal(P, 0.0)
    for _ in range(sweeps):
        P /= P.sum(axis=1, keepdims=True)
        P /= P.sum(axis=0, keepdims=True)
        if np.abs(P.sum(axis=1) - 1).max() < 1e-14:
            break
    return (P + P.T) / 2


# ---------------------------------------------------------------------------------------------------------------
# Sinkhorn-Knopp


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("heavy", [False, True])
def test_sinkhorn_output_is_symmetric_doubly_stochastic(seed, heavy):
    W = random_symmetric(151, 0.05, seed, heavy=heavy)
    res = sinkhorn_knopp(W, tol=1e-12)
    P = res.P
    assert res.converged and res.max_error <= 1e-12 and res.n_iter > 0
    assert sp.issparse(P) and (P != P.T).nnz == 0  # exactly symmetric
    assert P.diagonal().max() == 0.0 and P.data.min() > 0
    np.testing.assert_allclose(np.asarray(P.sum(axis=1)).ravel(), 1.0, atol=1e-12, rtol=0)
    np.testing.assert_allclose(np.asarray(P.sum(axis=0)).ravel(), 1.0, atol=1e-12, rtol=0)
    assert P.nnz == W.nnz  # the scaling keeps the sparsity pattern
    x = res.scaling
    np.testing.assert_allclose(P.toarray(), x[:, None] * W.toarray() * x[None, :], rtol=1e-14, atol=0)


@pytest.mark.parametrize("seed", range(3))
def test_sinkhorn_matches_dense_alternating_iteration(seed):
    """The doubly stochastic scaling of a matrix with total support is unique, so the symmetric iteration and the
    paper's alternating Eqs. 1-2 (brute force, dense) reach the same P."""
    W = random_symmetric(30, 0.2, seed, heavy=True)
    P = sinkhorn_knopp(W).P.toarray()
    np.testing.assert_allclose(P, dense_sinkhorn(W.toarray()), rtol=1e-9, atol=1e-13)


def test_sinkhorn_invariances():
    W = random_symmetric(80, 0.1, 7)
    P = sinkhorn_knopp(W).P.toarray()
    # scale invariance: cW has the same doubly stochastic form
    np.testing.assert_allclose(sinkhorn_knopp(W * 123.4).P.toarray(), P, rtol=1e-10, atol=1e-15)
    # permutation equivariance
    perm = np.random.default_rng(0).permutation(80)
    Pp = sinkhorn_knopp(W[perm][:, perm]).P.toarray()
    np.testing.assert_allclose(Pp, P[np.ix_(perm, perm)], rtol=1e-10, atol=1e-15)
    # a diagonal is ignored (zeroed before the scaling)
    np.testing.assert_allclose(sinkhorn_knopp(W + sp.eye(80) * 5).P.toarray(), P, rtol=1e-10, atol=1e-15)
    # a doubly stochastic input is a fixed point, and a dense input gives the same result
    again = sinkhorn_knopp(sp.csr_matrix(P))
    assert again.n_iter <= 1
    np.testing.assert_allclose(again.P.toarray(), P, rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(sinkhorn_knopp(W.toarray()).P.toarray(), P, rtol=1e-14, atol=0)


def test_sinkhorn_handles_bipartite_graphs():
    """An even cycle is bipartite: the undamped update x <- 1/(W x) would oscillate, the damped one converges."""
    n = 10
    i = np.arange(n)
    C = sp.csr_matrix((np.r_[np.full(n, 1.0), np.full(n, 3.0)],
                       (np.r_[i, i], np.r_[(i + 1) % n, (i - 1) % n])), shape=(n, n))
    C = (C + C.T).tocsr()
    res = sinkhorn_knopp(C)
    assert res.converged
    np.testing.assert_allclose(np.asarray(res.P.sum(axis=1)).ravel(), 1.0, atol=1e-12)


def test_sinkhorn_reports_missing_support():
    path = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float)  # no positive diagonal: no scaling exists
    with pytest.raises(ValueError, match="vertex 1 has 2"):  # both ends can only be matched to the middle
        sinkhorn_knopp(path, max_iter=200)
    square_with_tail = np.zeros((5, 5))  # a 4-cycle 0-1-2-3 plus vertex 4 hanging off 0: no leaf pair, no support
    for i, j in ((0, 1), (1, 2), (2, 3), (3, 0), (0, 4)):
        square_with_tail[i, j] = square_with_tail[j, i] = 1.0
    with pytest.raises(ValueError, match="did not reach tol"):
        sinkhorn_knopp(square_with_tail, max_iter=300)
    with pytest.warns(SinkhornWarning, match="total support"):
        res = sinkhorn_knopp(path, max_iter=200, on_failure="warn")
    assert not res.converged and res.n_iter == 200 and res.max_error > 0.1
    with pytest.raises(ValueError, match="largest connected component"):
        sinkhorn_knopp(sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float)))


def test_sinkhorn_refuses_bad_input(monkeypatch):
    with pytest.raises(ValueError, match="symmetric"):
        sinkhorn_knopp(np.array([[0, 1.0], [2.0, 0]]))
    with pytest.raises(ValueError, match="non-negative"):
        sinkhorn_knopp(np.array([[0, -1.0], [-1.0, 0]]))
    with pytest.raises(ValueError, match="square"):
        sinkhorn_knopp(np.ones((2, 3)))
    with pytest.raises(ValueError, match="tol"):
        sinkhorn_knopp(np.ones((2, 2)), tol=0)
    monkeypatch.setattr(ds_module, "DENSE_LIMIT", 5)
    with pytest.raises(ValueError, match="scipy.sparse"):
        sinkhorn_knopp(np.ones((6, 6)))
    assert sinkhorn_knopp(sp.csr_matrix(np.ones((6, 6)))).converged  # sparse input has no size guard


# ---------------------------------------------------------------------------------------------------------------
# the random-walk normalisation, Eqs. 3-4


def dense_random_walk(B: np.ndarray) -> np.ndarray:
    """Eqs. 3-4 written out: A_ik = B_ik / Σ_u B_iu; P_ij = Σ_k A_ik A_jk / Σ_v A_vk (empty columns skipped)."""
    A = B / B.sum(axis=1, keepdims=True)
    c = A.sum(axis=0)
    P = np.zeros((B.shape[0],) * 2)
    for k in np.flatnonzero(c > 0):
        P += np.outer(A[:, k], A[:, k]) / c[k]
    return P


@pytest.mark.parametrize("shape", [(40, 40), (30, 55), (60, 12)])
def test_random_walk_is_symmetric_doubly_stochastic(shape):
    """DOSNES Sec. 3 (Eqs. 3-4): symmetric and doubly stochastic, including the diagonal, for any n × m B."""
    n, m = shape
    rng = np.random.default_rng(n + m)
    B = sp.random(n, m, density=0.15, random_state=n, format="csr") + \
        sp.csr_matrix((rng.random(n) + 0.1, (np.arange(n), rng.integers(0, m - 1, n))), shape=(n, m))
    B = B.tolil()
    B[:, m - 1] = 0.0  # an empty column is skipped
    B = B.tocsr()
    P = random_walk_normalize(B)
    assert P.shape == (n, n) and (P != P.T).nnz == 0
    np.testing.assert_allclose(np.asarray(P.sum(axis=1)).ravel(), 1.0, atol=1e-12, rtol=0)
    np.testing.assert_allclose(np.asarray(P.sum(axis=0)).ravel(), 1.0, atol=1e-12, rtol=0)
    np.testing.assert_allclose(P.toarray(), dense_random_walk(B.toarray()), rtol=1e-12, atol=1e-15)
    assert P.diagonal().min() > 0  # P_ii = Σ_k A_ik² / c_k


def test_random_walk_needs_positive_rows():
    with pytest.raises(ValueError, match="all-zero rows"):
        random_walk_normalize(np.array([[1.0, 0.0], [0.0, 0.0]]))


@pytest.mark.parametrize("shape", [(80, 30), (60, 200)])
def test_two_hop_count_is_the_products_entries(shape):
    """The guard's count is nnz(B Bᵀ), and stops after the first row at which it passes the limit."""
    B = sp.random(*shape, density=0.05, random_state=shape[1], format="csr")
    Bc = B.tocsc()
    exact = (B @ B.T).nnz
    assert ds_module._two_hop_entries(B.indptr, B.indices, Bc.indptr, Bc.indices, exact) == (exact, shape[0])
    first = np.cumsum(np.diff((B @ B.T).tocsr().indptr))
    count, rows = ds_module._two_hop_entries(B.indptr, B.indices, Bc.indptr, Bc.indices, exact // 2)
    assert rows == np.searchsorted(first, exact // 2, side="right") + 1 and count == first[rows - 1] > exact // 2


def test_random_walk_size_guard_refuses_only_above_the_limit():
    """Below the limit by the cheap bound min(Σ_k c_k², n²), or by the count, B passes; above, it is refused."""
    B = sp.random(80, 30, density=0.1, random_state=7, format="csr") + \
        sp.csr_matrix((np.ones(80), (np.arange(80), np.arange(80) % 30)), shape=(80, 30))
    counts = np.diff(B.tocsc().indptr).astype(np.int64)
    bound = int((counts**2).sum())
    exact = (B @ B.T).nnz
    assert exact < bound < 80**2
    for limit in (bound, exact):  # no count needed, then counted
        assert random_walk_normalize(B, max_entries=limit).nnz == exact
    with pytest.raises(UserError, match=rf"more than the {exact - 1:,} two-hop entries allowed \({exact:,} in its "
                                        r"first 80 rows.*kind: doubly_stochastic"):
        random_walk_normalize(B, max_entries=exact - 1)


def test_random_walk_refuses_a_product_too_large_before_allocating_it():
    """One column shared by 10⁵ rows joins every pair: 10¹⁰ entries, refused by the default guard from the column's
    own count."""
    n = 100_000
    B = sp.csr_matrix((np.ones(n), (np.arange(n), np.zeros(n, dtype=int))), shape=(n, 1))
    with pytest.raises(UserError, match=r"more than the 2,147,483,647 two-hop entries allowed \(at least "
                                        r"10,000,000,000 from column 0 alone, which has 100,000"):
        random_walk_normalize(B)


# ---------------------------------------------------------------------------------------------------------------
# the normalize post-step


@pytest.mark.parametrize("normalize", [{"kind": "doubly_stochastic", "tol": 1e-12},
                                       {"kind": "random_walk", "rebalance": True}])
def test_normalize_gives_a_doubly_stochastic_matrix_over_n(normalize):
    W = symmetrize_normalize(random_symmetric(101, 0.08, 3, heavy=True))
    P, facts = normalize_affinity(W, **normalize)
    n = W.shape[0]
    assert (P != P.T).nnz == 0 and P.diagonal().max() == 0.0
    assert abs(P.sum() - 1.0) < 1e-14
    np.testing.assert_allclose(n * np.asarray(P.sum(axis=1)).ravel(), 1.0, atol=1e-11, rtol=0)
    assert facts["sinkhorn_max_error"] <= 1e-12 and facts["sinkhorn_iterations"] > 0


def test_normalize_random_walk_without_rebalance_zeroes_the_diagonal():
    W = symmetrize_normalize(random_symmetric(50, 0.1, 4))
    P, facts = normalize_affinity(W, kind="random_walk")
    full = random_walk_normalize(W)
    off = full.toarray()
    np.fill_diagonal(off, 0.0)
    np.testing.assert_allclose(P.toarray(), off / off.sum(), rtol=1e-13, atol=1e-17)
    assert facts["random_walk_max_diagonal"] == pytest.approx(full.diagonal().max())


def test_normalize_sum_and_bad_parameters():
    W = symmetrize_normalize(random_symmetric(20, 0.2, 5))
    P, facts = normalize_affinity(W, kind="sum")
    assert facts == {} and abs(P - W).max() < 1e-17
    with pytest.raises(ValueError, match=r"config key normalize.kind: 'ds' is not allowed; allowed values: "
                                         r"\['doubly_stochastic', 'random_walk', 'sum'\]"):
        normalize_affinity(W, kind="ds")
    with pytest.raises(ValueError, match=r"unknown parameters \['rebalance'\]; allowed for normalize kind "
                                         r"'doubly_stochastic': \['max_iter', 'on_failure', 'tol'\]"):
        normalize_affinity(W, kind="doubly_stochastic", rebalance=True)
    with pytest.raises(ValueError, match=r"unknown parameters \['tol'\]; allowed for normalize kind 'sum': \[\]"):
        normalize_affinity(W, kind="sum", tol=1e-3)
    with pytest.raises(ValueError, match="config key normalize.tol: 0.001 is not allowed: the Sinkhorn options of "
                                         "kind 'random_walk' apply only with rebalance: true"):
        normalize_affinity(W, kind="random_walk", tol=1e-3)
    with pytest.raises(ValueError, match=r"config key normalize.max_iter: 0 is not allowed; allowed: an int in the "
                                         r"range \[1, inf\)"):
        normalize_affinity(W, kind="doubly_stochastic", max_iter=0)


# ---------------------------------------------------------------------------------------------------------------
# inputs blocks: graph with normalize / largest component, vectors with normalize, degrees


def two_component_dataset() -> Dataset:
    """A directed weighted relation over 12 vertices: a component of 7 (0-6), one of 4 (7-10), and vertex 11
    with only a self-loop; cohort 'c' lives only outside the largest component."""
    edges = [(0, 1, 2.0), (1, 2, 1.0), (2, 0, 3.0), (2, 3, 1.0), (3, 4, 5.0), (4, 5, 1.0), (5, 6, 2.0), (6, 4, 1.0),
             (7, 8, 1.0), (8, 9, 1.0), (9, 10, 1.0), (10, 7, 1.0), (11, 11, 4.0), (1, 0, 1.0)]
    r, c, v = zip(*edges)
    A = sp.csr_matrix((v, (r, c)), shape=(12, 12))
    labels = np.array([0, 1, 0, 1, 0, 1, 0, 2, 2, 2, 2, 2])
    X = np.arange(24, dtype=float).reshape(12, 2)
    return Dataset(X, labels, ["a", "b", "c"], relations=A,
                   meta={"vertex_names": [f"v{i}" for i in range(12)], "source": "test"})


def test_graph_block_largest_component_and_doubly_stochastic(tmp_path):
    ds = two_component_dataset()
    spec = {"graph": {"source": "relations", "largest_component": True,
                      "normalize": {"kind": "doubly_stochastic", "tol": 1e-12, "max_iter": 1000}}}
    inputs = build_inputs(ds, spec, seed=2)
    assert inputs.available() == provided_inputs(spec) == {"W", "labels", "degree"}
    assert inputs.spec["largest_component_kept"] == 7 and inputs.spec["largest_component_dropped"] == 5
    assert inputs.spec["n_components"] == 3 and inputs.spec["kept_rows"] == list(range(7))
    assert inputs.spec["sinkhorn_max_error"] <= 1e-12
    np.testing.assert_array_equal(inputs.labels, [0, 1, 0, 1, 0, 1, 0])
    assert inputs.label_names == ["a", "b"]
    W = inputs.W
    assert W.shape == (7, 7) and (W != W.T).nnz == 0 and abs(W.sum() - 1) < 1e-14
    np.testing.assert_allclose(7 * np.asarray(W.sum(axis=1)).ravel(), 1.0, atol=1e-11)
    A = ds.relations.toarray()[:7, :7]
    np.testing.assert_allclose(inputs.degree, ((A + A.T) / 2).sum(axis=1), rtol=1e-15)
    ds.save(tmp_path / "d.npz")
    inputs.save(tmp_path / "i.npz", with_X=inputs.X is not ds.X, with_labels=inputs.labels is not ds.labels)
    back = Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz")
    assert back.available() == {"W", "labels", "degree"}
    np.testing.assert_array_equal(back.degree, inputs.degree)
    np.testing.assert_array_equal(back.labels, inputs.labels)


def test_graph_block_largest_component_slices_names_and_features():
    ds = two_component_dataset()
    spec = {"graph": {"source": "relations", "largest_component": True}, "features": {"kind": "raw"}}
    inputs = build_inputs(ds, spec)
    np.testing.assert_array_equal(inputs.X, ds.X[:7])
    before = ds.relations.copy()
    kept, facts = largest_component(ds)
    assert (ds.relations != before).nnz == 0  # the dataset is not modified
    assert kept.sample_names == [f"v{i}" for i in range(7)] and kept.meta["source"] == "test"
    assert kept.relations.shape == (7, 7) and facts["kept_rows"] == list(range(7))


def test_graph_block_without_normalize_is_unchanged():
    ds = two_component_dataset()
    inputs = build_inputs(ds, {"graph": {"source": "relations", "normalize": {"kind": "sum"}}})
    W0 = symmetrize_normalize(ds.relations)
    assert (inputs.W != W0).nnz == 0 and inputs.W.shape == (12, 12)
    A = ds.relations.toarray()
    np.fill_diagonal(A, 0.0)
    np.testing.assert_allclose(inputs.degree, ((A + A.T) / 2).sum(axis=1), rtol=1e-15)
    assert inputs.degree[11] == 0.0
    with pytest.raises(ValueError, match="largest connected component"):
        build_inputs(ds, {"graph": {"source": "relations", "normalize": {"kind": "doubly_stochastic"}}})


def vector_dataset() -> Dataset:
    rng = np.random.default_rng(0)
    labels = np.arange(60) % 3
    return Dataset(rng.normal(size=(60, 5)) + labels[:, None], labels, ["a", "b", "c"])


VECTOR_BLOCK = {"weights": {"kind": "gaussian_perplexity", "perplexity": 10},
                "confidence": {"kind": "eq12"}, "prototypes": {"kind": "means"}}


@pytest.mark.parametrize("kind", ["doubly_stochastic", "random_walk"])
def test_vector_block_with_normalize(kind):
    ds = vector_dataset()
    spec = dict(VECTOR_BLOCK, weights=dict(VECTOR_BLOCK["weights"], normalize={"kind": kind, "rebalance": True}
                                           if kind == "random_walk" else {"kind": kind}))
    inputs = build_inputs(ds, spec)
    assert inputs.available() == provided_inputs(spec) == {"X", "labels", "W", "R", "prototypes", "degree"}
    W0 = build_weights(ds.X, "gaussian_perplexity", perplexity=10, random_state=0)
    np.testing.assert_allclose(inputs.degree, 60 * np.asarray(W0.sum(axis=1)).ravel(), rtol=1e-15)
    np.testing.assert_allclose(60 * np.asarray(inputs.W.sum(axis=1)).ravel(), 1.0, atol=1e-11)


def test_vector_block_without_normalize_is_unchanged():
    ds = vector_dataset()
    inputs = build_inputs(ds, VECTOR_BLOCK)
    W0 = build_weights(ds.X, "gaussian_perplexity", perplexity=10, random_state=0)
    assert (inputs.W != W0).nnz == 0 and inputs.degree is None
    assert "degree" not in inputs.available() and "degree" not in provided_inputs(VECTOR_BLOCK)
    spec = dict(VECTOR_BLOCK, weights=dict(VECTOR_BLOCK["weights"], normalize={"kind": "sum"}))
    assert (build_inputs(ds, spec).W != W0).nnz == 0


# ---------------------------------------------------------------------------------------------------------------
# DOSNES Props. 4.1 and 4.2 (appendix Props. 8.1-8.3): the row sums c_i = Σ_j q_ij (j = i included, q_ii = 1)
# bound Σ_j ‖y_i − y_j‖², and equal such sums on centred points force equal norms.


def random_points(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(5, 200)), int(rng.choice([1, 2, 3]))
    return rng.normal(size=(n, d)) * 10 ** rng.uniform(-1.5, 0.5)


def sq_dists(Y: np.ndarray) -> np.ndarray:
    return ((Y[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1)


@pytest.mark.parametrize("seed", range(25))
def test_prop_4_1_cauchy_bounds(seed):
    """Cauchy kernel: n²/c − n ≤ Σ_j d_ij² ≤ n²/c − n + n(√b − 1)², b = 1 + max_j d_ij² (App. Prop. 8.2)."""
    D = sq_dists(random_points(seed))
    n = D.shape[0]
    c = (1.0 / (1.0 + D)).sum(axis=1)
    s = D.sum(axis=1)
    b = 1.0 + D.max(axis=1)
    lower = n * n / c - n
    upper = lower + n * (np.sqrt(b) - 1.0) ** 2
    assert np.all(lower <= s * (1 + 1e-9) + 1e-12) and np.all(s <= upper * (1 + 1e-9) + 1e-12)


@pytest.mark.parametrize("seed", range(25))
def test_prop_4_1_gaussian_bounds_with_the_appendix_b(seed):
    """Gaussian kernel: n ln(n/c) ≤ Σ_j d_ij² ≤ n ln(n/(c − n b)) where c > n b, with the appendix's
    b = a m + (1 − a) − m^a, m = min_j exp(−d_ij²), a = ln[ln(1/m)/(1 − m)] / ln(1/m) (App. Eqs. 22-24)."""
    D = sq_dists(random_points(seed))
    n = D.shape[0]
    q = np.exp(-D)
    c, s = q.sum(axis=1), D.sum(axis=1)
    assert np.all(n * np.log(n / c) <= s * (1 + 1e-9) + 1e-12)
    m = q.min(axis=1)
    ok = (m > 0) & (m < 1)
    lm = np.log(1.0 / m[ok])
    a = np.log(lm / (1.0 - m[ok])) / lm
    b = a * m[ok] + (1.0 - a) - m[ok] ** a
    defined = c[ok] > n * b
    upper = n * np.log(n / (c[ok][defined] - n * b[defined]))
    assert np.all(s[ok][defined] <= upper * (1 + 1e-9) + 1e-12)


def test_prop_4_2_equal_distance_sums_on_centred_points_give_equal_norms():
    """Σ_j ‖y_i − y_j‖² = n‖y_i‖² + Σ_j ‖y_j‖² − 2 y_iᵀ Σ_j y_j (App. Prop. 8.3): on centred points equal sums
    mean equal norms, and a centred sphere of radius R has Σ_j d_ij² = 2nR² for every i."""
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(50, 3))
    Y -= Y.mean(axis=0)
    n = Y.shape[0]
    identity = n * (Y ** 2).sum(1) + (Y ** 2).sum() - 2 * Y @ Y.sum(0)
    np.testing.assert_allclose(sq_dists(Y).sum(1), identity, rtol=1e-12)
    U = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float) * 2.5
    np.testing.assert_allclose(sq_dists(U).sum(1), 2 * 6 * 2.5 ** 2, rtol=1e-14)

