"""Baseline methods: exact SNE / t-SNE, the supervised distance transform, NSE / LE, MCML, LDMGI, MMA and
the scikit-learn / umap-learn wrappers."""

from __future__ import annotations

import numpy as np
import openTSNE
import pytest
import scipy.sparse as sp
from openTSNE.affinity import PrecomputedAffinities
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA as SkPCA
from sklearn.manifold import SpectralEmbedding

from cova.affinity import conditional_probabilities, gaussian_perplexity, supervised_shrink
from cova.affinity.dense import conditional_affinities
from cova.affinity.ldmgi import ldmgi_matrix, ldmgi_matrix_from_distances, local_matrices
from cova.inputs import Inputs
from cova.methods.baselines.ldmgi import LDMGI
from cova.methods.baselines.mcml import MCML, mcml_objective, target_distribution
from cova.methods.baselines.mma import MMA, mma_objective
from cova.methods.baselines.sklearn_baselines import LDA, LLE, NCA, UMAP, Isomap
from cova.methods.sne.nse import NSE, LaplacianEigenmaps
from cova.methods.sne.sne import (
    SNE,
    ExactTSNE,
    _init,
    sne_kl_and_gradient,
    tsne_kl_and_gradient,
)
from cova.methods.sne.supervised import (
    SupervisedNSE,
    SupervisedSNE,
    SupervisedTSNE,
    shrunk_neighbors,
    supervised_affinities,
    supervised_conditional_dense,
)
from cova.metrics import s_s


# ----------------------------------------------------------------------------------------------------------------
# fixtures and helpers
# ----------------------------------------------------------------------------------------------------------------
def make_inputs(X: np.ndarray, labels: np.ndarray, W: sp.csr_matrix | None = None) -> Inputs:
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels)
    l, c = X.shape[0], int(labels.max()) + 1
    if W is None:
        W = gaussian_perplexity(X, min(10.0, (l - 2) / 3))
    return Inputs(X=X, labels=labels, label_names=[str(j) for j in range(c)], W=W,
                  R=np.full((l, c), 1.0 / (l * c)), prototypes=np.zeros((c, 2)))


@pytest.fixture(scope="module")
def digits():
    """300 digits (30 per class), 64-d."""
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = np.concatenate([rng.choice(np.flatnonzero(y == c), 30, replace=False) for c in range(10)])
    return X[idx].astype(np.float64), y[idx]


@pytest.fixture(scope="module")
def small(digits):
    """120 digits of 4 classes: the determinism / shape / error fixture."""
    X, y = digits
    keep = np.flatnonzero(y < 4)
    return make_inputs(X[keep], y[keep])


def fd_gradient(f, Z: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    G = np.zeros_like(Z)
    for idx in np.ndindex(Z.shape):
        Zp, Zm = Z.copy(), Z.copy()
        Zp[idx] += eps
        Zm[idx] -= eps
        G[idx] = (f(Zp) - f(Zm)) / (2 * eps)
    return G


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def equal_up_to_sign(A: np.ndarray, B: np.ndarray, atol: float) -> bool:
    for j in range(A.shape[1]):
        s = 1.0 if np.dot(A[:, j], B[:, j]) >= 0 else -1.0
        if not np.allclose(A[:, j], s * B[:, j], atol=atol, rtol=0):
            return False
    return True


# ----------------------------------------------------------------------------------------------------------------
# exact SNE / t-SNE
# ----------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gradient_problem():
    rng = np.random.default_rng(1)
    l = 25
    X = rng.normal(size=(l, 4))
    Pc = conditional_affinities(X, perplexity=5.0)
    return Pc, (Pc + Pc.T) / (2 * l), rng.normal(size=(l, 2))


def test_sne_gradient_matches_finite_differences(gradient_problem):
    Pc, _, Z = gradient_problem
    C, G = sne_kl_and_gradient(Z, Pc)
    # independent dense reference of the cost: Σ_i KL(P_i ‖ Q_i), q_{j|i} ∝ exp(−‖z_i − z_j‖²)
    D = np.sum((Z[:, None] - Z[None]) ** 2, axis=-1)
    E = np.exp(-D)
    np.fill_diagonal(E, 0)
    Q = E / E.sum(axis=1, keepdims=True)
    mask = Pc > 0
    assert C == pytest.approx(np.sum(Pc[mask] * np.log(Pc[mask] / Q[mask])), rel=1e-12)
    fd = fd_gradient(lambda Y: sne_kl_and_gradient(Y, Pc)[0], Z)
    assert rel_err(G, fd) < 1e-5
    # and the gradient does not equal the one-sided (p_{j|i} − q_{j|i} only) formula
    M = Pc - Q
    one_sided = 2 * (M.sum(1)[:, None] * Z - M @ Z)
    assert rel_err(one_sided, fd) > 1e-2
    assert sne_kl_and_gradient(Z, sp.csr_matrix(Pc))[0] == C


def test_sne_gradient_is_the_same_in_row_blocks(gradient_problem, monkeypatch):
    """The rows go through the exponentials a block at a time; blocks of 2 rows (the last one shorter) give the
    same cost and gradient as one block of all."""
    import cova.objectives.kl as kl

    Pc, _, Z = gradient_problem
    whole = sne_kl_and_gradient(Z, Pc)
    monkeypatch.setattr(kl, "BLOCK_ENTRIES", 2 * len(Z))
    blocks = sne_kl_and_gradient(Z, Pc)
    assert blocks[0] == whole[0] and np.array_equal(blocks[1], whole[1])
    assert sne_kl_and_gradient(Z, Pc, with_cost=False)[1].tolist() == whole[1].tolist()


def test_tsne_gradient_matches_finite_differences(gradient_problem):
    _, P, Z = gradient_problem
    C, G = tsne_kl_and_gradient(Z, P)
    D = np.sum((Z[:, None] - Z[None]) ** 2, axis=-1)
    Qt = 1 / (1 + D)
    np.fill_diagonal(Qt, 0)
    Q = Qt / Qt.sum()
    mask = P > 0
    assert C == pytest.approx(np.sum(P[mask] * np.log(P[mask] / Q[mask])), rel=1e-12)
    fd = fd_gradient(lambda Y: tsne_kl_and_gradient(Y, P)[0], Z)
    assert rel_err(G, fd) < 1e-5


def test_conditional_affinities_calibrated(gradient_problem):
    Pc, _, _ = gradient_problem
    np.testing.assert_allclose(Pc.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(np.diag(Pc) == 0)
    H = -np.sum(np.where(Pc > 0, Pc * np.log(np.where(Pc > 0, Pc, 1)), 0), axis=1)
    np.testing.assert_allclose(H, np.log(5.0), atol=1e-5)


def test_exact_tsne_matches_opentsne_kl():
    """Same P, same start, the same schedule (exaggeration 12 for 250 iterations, then 500; openTSNE's rate 200
    on its 4×-smaller gradient = our 50): the exact KL of the final embeddings agree within 5 % (mean over three
    starts; single runs differ by a few % because the two optimisers settle in different local minima)."""
    rng = np.random.default_rng(0)
    l = 300
    y = np.arange(l) % 5
    X = rng.normal(size=(l, 10)) + 4.0 * rng.normal(size=(5, 10))[y]
    inputs = make_inputs(X, y)
    P = gaussian_perplexity(X, 30.0, method="exact")
    ours, theirs = [], []
    for seed in range(3):
        est = ExactTSNE(neighbors="knn", n_pca=None, max_iter=750, learning_rate=50.0, random_state=seed).fit(inputs)
        init = _init(l, 2, seed)
        ot = openTSNE.TSNE(n_iter=500, early_exaggeration_iter=250, early_exaggeration=12, learning_rate=200,
                           negative_gradient_method="bh", theta=0.2, random_state=0, n_jobs=1)
        # (openTSNE logs that our N(0, 1e-4 I) start is wider than its default; harmless)
        Z_ot = np.asarray(ot.fit(affinities=PrecomputedAffinities(P, normalize=False), initialization=init))
        kl = tsne_kl_and_gradient(est.embedding_, P)[0]
        assert kl == pytest.approx(est.kl_divergence_, rel=1e-10)
        ours.append(kl)
        theirs.append(tsne_kl_and_gradient(Z_ot, P)[0])
        assert s_s(est.embedding_, y) == 1.0
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.05 * np.mean(theirs), (ours, theirs)
    # a poorly optimised embedding would fail the comparison
    assert tsne_kl_and_gradient(_init(l, 2, 0), P)[0] > 1.5 * np.mean(theirs)


def test_sne_decreases_kl_and_separates(digits):
    X, y = digits
    inputs = make_inputs(X, y)
    est = SNE(random_state=0).fit(inputs)
    Pc = conditional_affinities(SkPCA(30, svd_solver="full").fit_transform(X), 30.0)
    assert est.kl_divergence_ == pytest.approx(sne_kl_and_gradient(est.embedding_, Pc)[0], rel=1e-8)
    assert est.kl_divergence_ < 0.6 * sne_kl_and_gradient(_init(len(y), 2, 0), Pc)[0]
    assert s_s(est.embedding_, y) > 0.75  # SNE crowds (Table 1: 41 % on Cora); digits are easy


def test_exact_methods_size_guard(small):
    for est in (SNE(max_samples=100), ExactTSNE(max_samples=100), SupervisedSNE(max_samples=100),
                MCML(max_samples=100)):
        with pytest.raises(ValueError, match="max_samples"):
            est.fit(small)


# ----------------------------------------------------------------------------------------------------------------
# supervised transform
# ----------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(9, 3))
    y = np.array([0, 0, 1, 1, 1, 2, 2, 0, 2])
    return X, y


def test_shrink_scales_same_class_squared_distances(tiny):
    X, y = tiny
    l = len(y)
    lam = 0.3
    D = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    ind, d2 = shrunk_neighbors(X, y, lam, l - 1)
    rows = np.repeat(np.arange(l)[:, None], l - 1, axis=1)
    expected = np.where(y[rows] == y[ind], lam * D[rows, ind], D[rows, ind])
    np.testing.assert_allclose(d2, expected, rtol=1e-13, atol=0)
    assert np.all(np.diff(d2, axis=1) >= 0)
    # dense conditional and sparse joint P, built from the shrunken matrix by hand
    Ds = np.where(y[:, None] == y[None, :], lam * D, D)
    off = ~np.eye(l, dtype=bool)
    Pc = np.zeros((l, l))
    Pc[off] = conditional_probabilities(Ds[off].reshape(l, l - 1), 3.0).ravel()
    np.testing.assert_allclose(supervised_conditional_dense(X, y, lam, 3.0), Pc, rtol=1e-9, atol=1e-15)
    P = supervised_affinities(X, y, lam, 3.0, n_neighbors=l - 1)
    np.testing.assert_allclose(P.toarray(), (Pc + Pc.T) / (2 * l), rtol=1e-9, atol=1e-15)
    assert P.sum() == pytest.approx(1.0, abs=1e-12) and (P != P.T).nnz == 0
    # shrinking pulls same-class affinity up
    same = y[:, None] == y[None, :]
    P1 = supervised_affinities(X, y, 1.0, 3.0, n_neighbors=l - 1).toarray()
    assert P.toarray()[same].sum() > P1[same].sum()


def test_lambda_one_is_unsupervised(digits):
    X, y = digits
    P = supervised_affinities(X, y, 1.0)
    ref = gaussian_perplexity(SkPCA(30, svd_solver="full").fit_transform(X), 30.0, method="exact")
    assert P.shape == ref.shape and (abs(P - ref) > 1e-15).nnz == 0
    np.testing.assert_allclose(P.toarray(), ref.toarray(), rtol=1e-12, atol=1e-18)
    # the shrunken candidate sets hold more same-class neighbours
    ind1, _ = shrunk_neighbors(X, y, 1.0, 90)
    ind2, _ = shrunk_neighbors(X, y, 0.1, 90)
    assert (y[ind2] == y[:, None]).mean() > (y[ind1] == y[:, None]).mean()
    # the p_shrink ablation is Eq. 3 on the unsupervised P
    Pp = supervised_affinities(X, y, 0.5, mode="p_shrink")
    np.testing.assert_allclose(Pp.toarray(), supervised_shrink(ref, y, 0.5).toarray(), rtol=1e-12, atol=1e-18)


def test_supervised_tsne_separation_grows_as_lambda_shrinks(digits):
    X, y = digits
    X = X + np.random.default_rng(0).normal(scale=5.0, size=X.shape)  # make the unsupervised problem hard
    inputs = make_inputs(X, y)
    scores = [s_s(SupervisedTSNE(lam=lam, max_iter=300, random_state=0).fit_transform(inputs), y)
              for lam in (1.0, 0.7, 0.1)]
    assert scores[0] < scores[1] < scores[2], scores
    assert scores[2] > 0.95


def test_supervised_bad_parameters(small):
    X, y = small.X, small.labels
    with pytest.raises(ValueError, match="lam"):
        supervised_affinities(X, y, 0.0)
    with pytest.raises(ValueError, match="mode"):
        supervised_affinities(X, y, 0.5, mode="shrink")
    with pytest.raises(ValueError, match="labels"):
        supervised_affinities(X, y[:-1], 0.5)
    with pytest.raises(ValueError, match="perplexity"):
        supervised_affinities(X, y, 0.5, perplexity=200.0)
    with pytest.raises(ValueError, match="lam"):
        SupervisedTSNE(lam=-1.0).fit(small)


# ----------------------------------------------------------------------------------------------------------------
# spectral methods
# ----------------------------------------------------------------------------------------------------------------
def test_nse_equals_sklearn_spectral_embedding(digits):
    X, y = digits
    inputs = make_inputs(X, y)
    est = NSE(random_state=0).fit(inputs)
    P = gaussian_perplexity(SkPCA(30, svd_solver="full").fit_transform(X), 30.0)
    assert (abs(est.affinity_matrix_ - P) > 0).nnz == 0
    ref = SpectralEmbedding(n_components=2, affinity="precomputed", random_state=0).fit_transform(P)
    scale = np.abs(ref).max()
    assert equal_up_to_sign(est.embedding_, ref, atol=1e-6 * scale)
    # the run's W, and LE on the same W, give the same embedding
    Zw = NSE(affinity="inputs").fit_transform(inputs)
    Zle = LaplacianEigenmaps(affinity="inputs").fit_transform(inputs)
    ref_w = SpectralEmbedding(n_components=2, affinity="precomputed", random_state=0).fit_transform(inputs.W)
    assert equal_up_to_sign(Zw, ref_w, atol=1e-6 * np.abs(ref_w).max())
    assert equal_up_to_sign(Zle, ref_w, atol=1e-6 * np.abs(ref_w).max())
    assert not equal_up_to_sign(est.embedding_, ref_w, atol=1e-3 * scale)


# ----------------------------------------------------------------------------------------------------------------
# MCML
# ----------------------------------------------------------------------------------------------------------------
def test_mcml_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4))
    X -= X.mean(0)
    y = rng.integers(0, 3, 30)
    P0 = target_distribution(y)
    B = rng.normal(size=(4, 4))
    A = 0.3 * B @ B.T
    f, G = mcml_objective(A, X, P0)
    assert np.allclose(G, G.T)
    for _ in range(3):  # directional derivatives along symmetric directions
        E = rng.normal(size=(4, 4))
        E = E + E.T
        eps = 1e-6
        fd = (mcml_objective(A + eps * E, X, P0)[0] - mcml_objective(A - eps * E, X, P0)[0]) / (2 * eps)
        assert fd == pytest.approx(np.sum(G * E), rel=1e-6)
    # f is the sum of KL divergences: direct evaluation
    D = np.einsum("ijk,kl,ijl->ij", X[:, None] - X[None], A, X[:, None] - X[None])
    E_ = np.exp(-D)
    np.fill_diagonal(E_, 0)
    PA = E_ / E_.sum(1, keepdims=True)
    m = P0 > 0
    assert f == pytest.approx(np.sum(P0[m] * np.log(P0[m] / PA[m])), rel=1e-10)


def test_mcml_finds_the_separating_axis():
    rng = np.random.default_rng(0)
    l = 160
    y = np.arange(l) % 2
    X = rng.normal(size=(l, 5))
    X[:, 2] += 3.0 * (2 * y - 1)  # classes differ along axis 2 only
    est = MCML(n_pca=None).fit(make_inputs(X, y))
    w, V = np.linalg.eigh(est.metric_)
    assert abs(V[2, -1]) > 0.95
    assert np.all(np.diff(est.objective_) <= 1e-12)
    assert np.all(w >= -1e-12)
    assert est.embedding_.shape == (l, 2) and s_s(est.embedding_, y) > 0.95


def test_hlle_is_scikit_learns_hessian_eigenmaps_and_refuses_too_few_neighbours():
    from sklearn.datasets import make_s_curve
    from sklearn.manifold import LocallyLinearEmbedding

    from cova.methods.baselines.sklearn_baselines import HLLE

    X, _ = make_s_curve(300, random_state=0)
    ours = HLLE(n_neighbors=12).fit_transform(make_inputs(X, np.zeros(300, dtype=int)))
    theirs = LocallyLinearEmbedding(n_neighbors=12, method="hessian", eigen_solver="dense").fit_transform(X)
    assert equal_up_to_sign(ours, theirs, atol=1e-8)
    assert "method" not in HLLE().get_params()
    with pytest.raises(ValueError, match="greater than"):
        HLLE(n_neighbors=5).fit(make_inputs(X, np.zeros(300, dtype=int)))


# ----------------------------------------------------------------------------------------------------------------
# LDMGI
# ----------------------------------------------------------------------------------------------------------------
def test_ldmgi_matrix_properties_and_local_form():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 7))
    k, lam = 6, 0.5
    L = ldmgi_matrix(X, k, lam).toarray()
    np.testing.assert_allclose(L, L.T, atol=1e-14)
    np.testing.assert_allclose(L @ np.ones(60), 0.0, atol=1e-12)
    assert np.linalg.eigvalsh(L).min() > -1e-10
    # one clique by the formula L_i = H (H X_iᵀ X_i H + λI)⁻¹ H, X_i = d×k with the clique as columns
    clique = np.array([0, 5, 9, 17, 33, 41])
    Xi = X[clique].T
    H = np.eye(k) - np.ones((k, k)) / k
    Li = H @ np.linalg.inv(H @ Xi.T @ Xi @ H + lam * np.eye(k)) @ H
    np.testing.assert_allclose(local_matrices(X, clique[None], lam)[0], Li, rtol=1e-10, atol=1e-14)


def test_ldmgi_matrix_from_distances_equals_the_matrix_of_the_points():
    """The distance form (cliques from D, Gram matrices by classical scaling) is the points' matrix: LDMGI's L_i
    depends on a clique only through its centred Gram matrix."""
    from scipy.spatial.distance import cdist

    X = np.random.default_rng(5).normal(size=(50, 4))
    np.testing.assert_allclose(ldmgi_matrix_from_distances(cdist(X, X), 5, 0.7).toarray(),
                               ldmgi_matrix(X, 5, 0.7).toarray(), atol=1e-10)
    with pytest.raises(ValueError, match="n_neighbors"):
        ldmgi_matrix_from_distances(cdist(X, X), 1)


def test_ldmgi_separates_blobs_and_solvers_agree():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 60)
    X = rng.normal(size=(120, 3)) + 10.0 * y[:, None]
    inputs = make_inputs(X, y)
    Zd = LDMGI(eigen_solver="dense").fit_transform(inputs)
    Za = LDMGI(eigen_solver="arpack").fit_transform(inputs)
    assert s_s(Zd, y) == 1.0
    assert equal_up_to_sign(Zd, Za, atol=1e-6)


# ----------------------------------------------------------------------------------------------------------------
# MMA
# ----------------------------------------------------------------------------------------------------------------
def test_mma_gradient_and_rotation(small):
    rng = np.random.default_rng(6)
    K = 6
    B1 = np.diag(np.sort(rng.uniform(0, 1, K)))
    C = rng.normal(size=(K, K))
    B2 = C @ C.T
    A = np.linalg.qr(rng.normal(size=(K, K)))[0]
    f, G = mma_objective(A, B1, B2, 0.7)
    fd = fd_gradient(lambda M: mma_objective(M, B1, B2, 0.7)[0], A)
    assert rel_err(G, fd) < 1e-6
    est = MMA(n_eigenvectors=8).fit(small)
    np.testing.assert_allclose(est.rotation_.T @ est.rotation_, np.eye(8), atol=1e-10)
    assert est.objective_[-1] < est.objective_[0]
    assert np.all(np.diff(est.objective_) <= 0)


# ----------------------------------------------------------------------------------------------------------------
# every wrapper: determinism, shape, errors
# ----------------------------------------------------------------------------------------------------------------
FAST = {
    "SNE": lambda s: SNE(max_iter=50, random_state=s),
    "ExactTSNE": lambda s: ExactTSNE(max_iter=50, random_state=s),
    "SupervisedSNE": lambda s: SupervisedSNE(lam=0.5, max_iter=50, neighbors="knn", random_state=s),
    "SupervisedTSNE": lambda s: SupervisedTSNE(lam=0.5, max_iter=50, early_exaggeration_iter=50, random_state=s),
    "SupervisedNSE": lambda s: SupervisedNSE(lam=0.5, random_state=s),
    "NSE": lambda s: NSE(random_state=s),
    "LaplacianEigenmaps": lambda s: LaplacianEigenmaps(affinity="knn", random_state=s),
    "LLE": lambda s: LLE(n_neighbors=20, random_state=s),
    "Isomap": lambda s: Isomap(n_neighbors=20),
    "LDA": lambda s: LDA(),
    "NCA": lambda s: NCA(max_samples=80, max_iter=20, random_state=s),
    "MCML": lambda s: MCML(max_iter=20, random_state=s),
    "LDMGI": lambda s: LDMGI(random_state=s),
    "MMA": lambda s: MMA(n_eigenvectors=8, max_iter=50, random_state=s),
}


@pytest.mark.parametrize("name", sorted(FAST))
def test_wrapper_deterministic_and_shaped(small, name):
    a = FAST[name](3).fit_transform(small)
    b = FAST[name](3).fit_transform(small)
    assert a.shape == (small.X.shape[0], 2) and a.dtype == np.float64 and np.all(np.isfinite(a))
    np.testing.assert_array_equal(a, b)
    params = FAST[name](3).get_params()  # sklearn contract: every __init__ argument is a readable parameter
    assert isinstance(params, dict)


def test_umap_deterministic(small):
    a = UMAP(n_neighbors=10, n_epochs=50, random_state=1).fit_transform(small)
    b = UMAP(n_neighbors=10, n_epochs=50, random_state=1).fit_transform(small)
    assert a.shape == (small.X.shape[0], 2)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="n_neighbors"):
        UMAP(n_neighbors=1000).fit(small)


def test_nca_subsamples_training_set(small):
    est = NCA(max_samples=50, max_iter=10, random_state=0).fit(small)
    assert est.train_indices_.shape == (50,) and np.all(np.diff(est.train_indices_) > 0)
    assert est.embedding_.shape == (small.X.shape[0], 2)
    np.testing.assert_allclose(est.embedding_, small.X @ est.components_.T, atol=1e-9)
    other = NCA(max_samples=50, max_iter=10, random_state=1).fit(small)
    assert not np.array_equal(est.train_indices_, other.train_indices_)


def test_nca_transform_maps_new_samples_as_scikit_learn_does(small):
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    est = NCA(max_iter=10, random_state=0).fit(small)
    np.testing.assert_array_equal(est.transform(small.X), est.embedding_)
    ref = NeighborhoodComponentsAnalysis(n_components=2, max_iter=10, random_state=0).fit(small.X, small.labels)
    new = small.X[:5] + 0.5
    np.testing.assert_allclose(est.transform(new), ref.transform(new), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="columns"):
        est.transform(small.X[:, :2])
    with pytest.raises(ValueError, match="not fitted"):
        NCA().transform(small.X)


@pytest.mark.parametrize("est, match", [
    (SNE(neighbors="some"), "neighbors"),
    (SNE(learning_rate=-1.0), "learning_rate"),
    (ExactTSNE(max_iter=0), "max_iter"),
    (ExactTSNE(perplexity=200.0), "perplexity"),
    (SupervisedSNE(mode="x"), "mode"),
    (SupervisedNSE(lam=0.0), "lam"),
    (NSE(affinity="x"), "affinity"),
    (NSE(eigen_solver="x"), "eigen_solver"),
    (LaplacianEigenmaps(affinity="x"), "affinity"),
    (LLE(n_neighbors=500), "n_neighbors"),
    (Isomap(eigen_solver="x"), "eigen_solver"),
    (NCA(n_components=100), "n_components"),
    (MCML(n_components=0), "n_components"),
    (LDMGI(n_neighbors=1), "n_neighbors"),
    (LDMGI(lam=0.0), "lam"),
    (MMA(n_eigenvectors=2), "n_eigenvectors"),
])
def test_bad_parameters_raise(small, est, match):
    with pytest.raises(ValueError, match=match):
        est.fit(small)


def test_lda_needs_three_classes(small):
    keep = small.labels < 2
    two = make_inputs(small.X[keep], small.labels[keep])
    with pytest.raises(ValueError, match="classes"):
        LDA().fit(two)
    assert LDA().fit_transform(small).shape == (small.X.shape[0], 2)
