"""featMAP's baselines run by their own packages (cova.methods.baselines.library_baselines), PCA's loadings, and FIt-SNE as
the ``tsne`` method with FFT gradients.

Quality is checked on scikit-learn's digits (trustworthiness, k = 7), densMAP's density term on a mixture of two
Gaussians of different spread (the local-radius correlation, computed here from umap-learn's graph and direct
distances), determinism by refitting in the same process (where an unseeded numba or numpy generator would have
moved on), and FIt-SNE against openTSNE's own defaults.
"""

from __future__ import annotations

import warnings
from typing import Any

import numba
import numpy as np
import openTSNE
import pytest
from sklearn.datasets import load_digits
from sklearn.manifold import trustworthiness
from sklearn.neighbors import NearestNeighbors

from cova.affinity.weights import gaussian_perplexity
from cova.constraints import InvalidParameterError
from cova.inputs import Inputs
from cova.methods import METHODS, make_method
from cova.methods.baselines.library_baselines import HNNE, DensMAP, PaCMAP, SklearnTSNE, TriMap
from cova.methods.baselines.sklearn_baselines import PCA
from cova.methods.sne.tsne import TSNE

NEW = {"tsne_sklearn": SklearnTSNE, "densmap": DensMAP, "trimap": TriMap, "pacmap": PaCMAP, "hnne": HNNE}


def _fit(name: str, X: np.ndarray, seed: int = 0, **params: Any) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_method(name, params, seed=seed).fit(Inputs(X=X)).embedding_


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    """The first 600 of scikit-learn's 1,797 digits (all ten classes; 64 pixel features)."""
    return load_digits().data[:600].astype(np.float64)


@pytest.fixture(scope="module")
def digit_embeddings(digits: np.ndarray) -> dict[str, np.ndarray]:
    """Each new method at its package defaults on the digits, seed 0."""
    return {name: _fit(name, digits) for name in NEW}


def test_registered_under_their_names() -> None:
    for name, cls in NEW.items():
        assert METHODS[name] is cls
        assert make_method(name, seed=7).random_state == 7
    assert "fitsne" not in METHODS  # FIt-SNE is the tsne method with FFT gradients


@pytest.mark.parametrize("name", sorted(NEW))
def test_trustworthiness_on_digits(name: str, digits: np.ndarray, digit_embeddings: dict[str, np.ndarray]) -> None:
    Z = digit_embeddings[name]
    assert Z.shape == (digits.shape[0], 2) and Z.dtype == np.float64 and np.all(np.isfinite(Z))
    assert trustworthiness(digits, Z, n_neighbors=7) >= 0.9


@pytest.mark.parametrize("name", sorted(NEW))
def test_same_seed_same_embedding(name: str, digits: np.ndarray, digit_embeddings: dict[str, np.ndarray]) -> None:
    """A second fit in the same process repeats the first bit for bit; for the methods whose seed drives a random
    step, another seed gives another embedding (so the seed is really passed on)."""
    np.testing.assert_array_equal(_fit(name, digits), digit_embeddings[name])
    if name != "hnne":  # h-NNE's only random step below ann_threshold is a randomized PCA
        assert not np.allclose(_fit(name, digits, seed=1), digit_embeddings[name])


def test_trimap_restores_numba_threads_and_numpy_state(digits: np.ndarray) -> None:
    threads = numba.get_num_threads()
    np.random.seed(123)
    expected = np.random.random_sample(3)
    np.random.seed(123)
    _fit("trimap", digits[:200], n_iters=20)
    assert numba.get_num_threads() == threads
    np.testing.assert_array_equal(np.random.random_sample(3), expected)


def _local_radius(P: Any, Y: np.ndarray) -> np.ndarray:
    """densMAP's isotropic local radius r_i = log(Σ_j P_ij ‖y_i − y_j‖² / Σ_j P_ij) over the stored entries of P."""
    P = P.tocoo()
    d2 = ((Y[P.row] - Y[P.col]) ** 2).sum(axis=1)
    l = Y.shape[0]
    return np.log(np.bincount(P.row, P.data * d2, minlength=l) / np.bincount(P.row, P.data, minlength=l))


def test_densmap_keeps_local_radii_that_umap_loses() -> None:
    """Two Gaussian clusters in R^10 with standard deviations 1 and 5: densMAP's embedded radii follow the original
    ones (Pearson correlation ≈ 0.95), UMAP's do not (≈ 0.05)."""
    from umap.umap_ import fuzzy_simplicial_set

    rng = np.random.default_rng(0)
    n, d = 200, 10
    X = np.vstack([rng.normal(0.0, 1.0, (n, d)), rng.normal(0.0, 5.0, (n, d)) + np.r_[30.0, np.zeros(d - 1)]])
    dist, ind = NearestNeighbors(n_neighbors=15).fit(X).kneighbors(X)  # exact, self first (as umap-learn's)
    P, _, _ = fuzzy_simplicial_set(X, 15, 0, "euclidean", knn_indices=ind, knn_dists=dist)
    r_orig = _local_radius(P, X)
    corr = {name: np.corrcoef(r_orig, _local_radius(P, _fit(name, X)))[0, 1] for name in ("umap", "densmap")}
    assert corr["densmap"] > 0.8
    assert corr["densmap"] > corr["umap"] + 0.5


def test_densmap_passes_its_density_parameters() -> None:
    est = DensMAP(dens_lambda=1.5, dens_frac=0.2, dens_var_shift=0.3)
    assert est._umap_options() == {"densmap": True, "dens_lambda": 1.5, "dens_frac": 0.2, "dens_var_shift": 0.3}
    assert set(est.get_params()) == set(METHODS["umap"]().get_params()) | {"dens_lambda", "dens_frac",
                                                                         "dens_var_shift"}


@pytest.mark.parametrize("cls, param, value", [
    (SklearnTSNE, "n_components", 4), (SklearnTSNE, "max_iter", 100), (SklearnTSNE, "angle", 1.5),
    (DensMAP, "dens_frac", 1.5), (DensMAP, "dens_lambda", -1.0),
    (TriMap, "n_components", 1), (TriMap, "distance", "cosine"), (TriMap, "apply_pca", "yes"),
    (PaCMAP, "FP_ratio", 0.0), (PaCMAP, "init", "spectral"),
    (HNNE, "preliminary_embedding", "tsne"), (HNNE, "radius", 0),
])
def test_parameter_errors_name_the_key(cls: type, param: str, value: Any) -> None:
    X = np.random.default_rng(0).normal(size=(40, 5))
    with pytest.raises(InvalidParameterError, match=rf"^The '{param}' parameter of {cls.__name__} must be"):
        cls(**{param: value}).fit(Inputs(X=X))


@pytest.mark.parametrize("cls, params, message", [
    (SklearnTSNE, {"perplexity": 40.0}, r"perplexity \(a method entry's params.perplexity\): 40.0 is not allowed: "
                                        r"the inputs' X has 40 rows, and .* needs perplexity < n; allowed: below n = 40"),
    (TriMap, {"n_inliers": 39}, r"n_inliers .*: 39 is not allowed: the inputs' X has 40 rows, .*below n − 1 = 39"),
    (PaCMAP, {"n_neighbors": 40}, r"n_neighbors .*: 40 is not allowed: the inputs' X has 40 rows, .*at most 39"),
    (DensMAP, {"n_neighbors": 45}, r"n_neighbors .*: 45 is not allowed: the inputs' X has 40 rows, .*at most 39"),
])
def test_size_errors_name_the_key(cls: type, params: dict[str, Any], message: str) -> None:
    X = np.random.default_rng(0).normal(size=(40, 5))
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(Inputs(X=X))


def test_pca_saves_its_loadings() -> None:
    """components_ are the right singular vectors of the centred data (numpy's SVD, up to sign) and Z is the
    centred data projected on them; the embed step saves them (extra_outputs)."""
    X = np.random.default_rng(1).normal(size=(80, 6)) * np.arange(1, 7)
    est = PCA(n_components=3).fit(Inputs(X=X))
    assert "components_" in PCA.extra_outputs and est.components_.shape == (3, 6)
    Xc = X - X.mean(axis=0)
    Vt = np.linalg.svd(Xc, full_matrices=False)[2][:3]
    np.testing.assert_allclose(np.abs(np.sum(est.components_ * Vt, axis=1)), 1.0, atol=1e-10)
    np.testing.assert_allclose(est.embedding_, Xc @ est.components_.T, atol=1e-10)


def test_fitsne_is_tsne_with_fft_at_opentsne_defaults(digits: np.ndarray) -> None:
    """FIt-SNE needs no wrapper of its own: the tsne method's schedule is openTSNE's default one, its perplexity
    graph equals openTSNE's (exact neighbours, up to the perplexity search's tolerance), and on openTSNE's graph
    the tsne method with FFT gradients reproduces openTSNE's TSNE(negative_gradient_method="fft") to
    rounding."""
    ours, theirs = TSNE(), openTSNE.TSNE()
    for name in ("perplexity", "learning_rate", "early_exaggeration_iter", "dof"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.max_iter == theirs.n_iter and ours.init == theirs.initialization
    # the digits' integer pixels tie at the k-th distance, where each library keeps its own choice among the tied
    # points (ours: the lower index); a jitter far below the pixel step leaves one choice
    X = digits[:300] + np.random.default_rng(0).uniform(-1e-6, 1e-6, (300, digits.shape[1]))
    affinity = openTSNE.affinity.PerplexityBasedNN(X, perplexity=30, method="exact", random_state=0)
    P = gaussian_perplexity(X, 30.0, random_state=0)
    assert ((P != 0) != (affinity.P != 0)).nnz == 0 and abs(P - affinity.P).max() < 1e-5 * affinity.P.max()
    schedule = {"max_iter": 40, "early_exaggeration_iter": 20}
    Z = make_method("tsne", {"affinity": "inputs", "negative_gradient_method": "fft", **schedule}, seed=0).fit(
        Inputs(X=X, W=affinity.P)).embedding_
    reference = openTSNE.TSNE(negative_gradient_method="fft", n_iter=40, early_exaggeration_iter=20,
                              random_state=0).fit(X, affinities=affinity)
    # openTSNE renormalises a precomputed graph to unit sum, which moves the result at rounding level only
    np.testing.assert_allclose(Z, np.asarray(reference), rtol=1e-9, atol=1e-9)
