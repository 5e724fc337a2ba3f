"""featMAP's baselines (Yang et al. 2022, Sec. 4.1, Table 1) run by their own packages at the packages' defaults.

featMAP Table 1 compares featMAP with t-SNE, FIt-SNE, h-NNE, UMAP, TriMAP, PaCMAP, densMAP and spaceMAP and states
no setting for any of them, so each wrapper here passes the package's own defaults (the version pinned in
``pyproject.toml``) and only adds what the pipeline needs: the seed (``random_state``, from the configuration's
seed), one thread where threads could change the result, and a check of the parameters.

- ``tsne_sklearn``: t-SNE, scikit-learn's Barnes-Hut implementation (:class:`SklearnTSNE`);
- FIt-SNE is the ``tsne`` method (openTSNE) with ``negative_gradient_method: fft``; no wrapper here;
- ``densmap``: densMAP, umap-learn's ``UMAP(densmap=True)`` (:class:`DensMAP`, a :class:`~.sklearn_baselines.UMAPLayout` with three more
  parameters);
- ``trimap``: TriMAP, ``trimap`` 1.1.4 (:class:`TriMap`);
- ``pacmap``: PaCMAP, ``pacmap`` 0.9.1 (:class:`PaCMAP`);
- ``hnne``: h-NNE, ``hnne`` 2.0.1 (:class:`HNNE`).

UMAP and PCA (whose principal axes are the linear loadings featMAP's local loadings are compared with) are in
:mod:`cova.methods.baselines.sklearn_baselines`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numba
import numpy as np
from threadpoolctl import threadpool_limits

from ...constraints import NON_NEGATIVE, POSITIVE, POSITIVE_INT, SEED, StrOptions, integer, real
from ...inputs import Inputs
from ...objectives.threads import one_numba_thread
from ...progress import Progress
from ..base import Embedder, fits_samples, neighbours_below_samples
from .sklearn_baselines import UMAPLayout, _as_embedding

__all__ = ["SklearnTSNE", "DensMAP", "TriMap", "PaCMAP", "HNNE"]


class SklearnTSNE(Embedder):
    """t-SNE (van der Maaten & Hinton 2008), the "t-SNE" of featMAP Table 1, by scikit-learn's ``TSNE`` with the
    Barnes-Hut gradient.

    featMAP gives no setting; these are scikit-learn's defaults (scikit-learn 1.9): perplexity = 30,
    early_exaggeration = 12 (for the first 250 iterations), learning_rate = ``"auto"`` (max(l / early_exaggeration
    / 4, 50)), max_iter = 1000, init = ``"pca"``, angle = 0.5 (Barnes-Hut θ), n_components = 2 (Barnes-Hut
    allows at most 3). scikit-learn finds the min(l − 1, ⌊3·perplexity + 1⌋) nearest neighbours exactly and
    calibrates the Gaussian conditionals to the perplexity; perplexity must be below the number of samples l.

    n_jobs : threads of scikit-learn's neighbour search (1; the result does not depend on it). random_state : seed
    of the PCA initialisation and of the optimisation. The gradient runs on one OpenMP thread: scikit-learn sums
    the Barnes-Hut normalisation Σ q_ij over its OpenMP threads, in an order that changes from run to run, so
    several threads give a different embedding each time. On one thread the fit is deterministic.

    Attributes: embedding_, kl_divergence_ (the final KL divergence scikit-learn reports).
    """

    sklearn_compatible = True

    _parameter_constraints = {
        "n_components": [integer(1, 3)],
        "perplexity": POSITIVE,
        "early_exaggeration": [real(1.0, None)],
        "learning_rate": [StrOptions({"auto"}), *POSITIVE],
        "max_iter": [integer(250, None)],
        "init": [StrOptions({"pca", "random"})],
        "angle": [real(0.0, 1.0)],
        "n_jobs": POSITIVE_INT,
        "random_state": SEED,
    }

    _option_rules = (fits_samples("perplexity", lambda p, n: p < n, lambda n: f"below n = {n}", "scikit-learn's t-SNE needs perplexity < n"),)

    def __init__(self, n_components: int = 2, perplexity: float = 30.0, early_exaggeration: float = 12.0,
                 learning_rate: str | float = "auto", max_iter: int = 1000, init: str = "pca", angle: float = 0.5,
                 n_jobs: int = 1, random_state: int = 0):
        self.n_components = n_components
        self.perplexity = perplexity
        self.early_exaggeration = early_exaggeration
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.init = init
        self.angle = angle
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "SklearnTSNE":
        from sklearn.manifold import TSNE as _SkTSNE

        self._validate_params()
        X = np.asarray(inputs.X, dtype=np.float64)
        est = _SkTSNE(n_components=int(self.n_components), perplexity=float(self.perplexity),
                      early_exaggeration=float(self.early_exaggeration), learning_rate=self.learning_rate,
                      max_iter=int(self.max_iter), init=self.init, angle=float(self.angle), method="barnes_hut",
                      n_jobs=int(self.n_jobs), random_state=int(self.random_state), verbose=2)
        with threadpool_limits(limits=1, user_api="openmp"), Progress("t-SNE (scikit-learn)") as progress, \
                progress.library_output():
            self.embedding_ = _as_embedding(est.fit_transform(X))
        self.kl_divergence_ = float(est.kl_divergence_)
        return self


class DensMAP(UMAPLayout):
    """densMAP (Narayan, Berger & Cho 2021), the "densMAP" of featMAP Table 1: UMAP plus a term that keeps each
    point's local radius, by umap-learn's ``UMAP(densmap=True)``.

    The radius of point i is R_i = log(Σ_j P_ij ‖x_i − x_j‖² / Σ_j P_ij) on UMAP's graph P (and the same with the
    embedding); the layout loss gains −dens_lambda·corr(R^orig, R^emb) (Pearson correlation over the points), switched
    on for the last dens_frac of the epochs. featMAP replaces this isotropic radius by one per local principal
    direction.

    featMAP gives no setting; these are umap-learn's defaults (umap-learn 0.5): dens_lambda = 2.0, dens_frac = 0.3,
    dens_var_shift = 0.1 (added to the variance of the embedded radii in the correlation's denominator), and the UMAP part as in
    ``umap``: n_neighbors = 15, min_dist = 0.1, metric = ``"euclidean"``, init = ``"spectral"``, n_epochs = None
    (umap-learn's choice: 500 for l ≤ 10,000, else 200; densMAP runs the last dens_frac of them with the density
    term). Single-threaded and seeded as :class:`UMAP`, hence deterministic. No ``transform``: umap-learn does
    not place new points in a densMAP layout.
    """

    _parameter_constraints = {
        **UMAPLayout._parameter_constraints,
        "dens_lambda": NON_NEGATIVE,
        "dens_frac": [real(0.0, 1.0)],
        "dens_var_shift": NON_NEGATIVE,
    }

    def __init__(self, n_neighbors: int = 15, min_dist: float = 0.1, metric: str = "euclidean",
                 init: str = "spectral", n_components: int = 2, n_epochs: int | None = None,
                 dens_lambda: float = 2.0, dens_frac: float = 0.3, dens_var_shift: float = 0.1,
                 random_state: int = 0):
        super().__init__(n_neighbors=n_neighbors, min_dist=min_dist, metric=metric, init=init,
                         n_components=n_components, n_epochs=n_epochs, random_state=random_state)
        self.dens_lambda = dens_lambda
        self.dens_frac = dens_frac
        self.dens_var_shift = dens_var_shift

    def _umap_options(self) -> dict[str, Any]:
        return {"densmap": True, "dens_lambda": float(self.dens_lambda), "dens_frac": float(self.dens_frac),
                "dens_var_shift": float(self.dens_var_shift)}


# The two seeders below exist because numba's np.random keeps one generator per thread, seeded from OS entropy:
# np.random.seed in Python does not reach it, and a library's prange loops draw from the generator of whichever
# pool thread runs them. With numba's pool limited to one thread (see _seeded_numba), seeding the calling thread
# and the thread that runs a one-thread parallel region fixes every draw the library makes. (numba cannot cache a
# parallel function that asks for the thread count, hence no cache=True on the second.)
@numba.njit(cache=True)
def _seed_numba_thread(seed: int) -> None:  # pragma: no cover - compiled
    np.random.seed(seed)


@numba.njit(parallel=True)
def _seed_numba_pool(seed: int) -> None:  # pragma: no cover - compiled
    for _ in numba.prange(numba.get_num_threads()):
        np.random.seed(seed)


@contextmanager
def _seeded_numba(seed: int) -> Iterator[None]:
    """Run a library's numba code on one thread with numba's and numpy's global generators seeded by ``seed``;
    numpy's global state is restored afterwards."""
    state = np.random.get_state()
    with one_numba_thread():
        try:
            _seed_numba_thread(seed)
            _seed_numba_pool(seed)
            np.random.seed(seed)
            yield
        finally:
            np.random.set_state(state)


class TriMap(Embedder):
    """TriMAP (Amid & Warmuth 2019), the "TriMAP" of featMAP Table 1, by ``trimap.TRIMAP`` 1.1.4 (the last release
    without PyTorch).

    featMAP gives no setting; these are the package's defaults (trimap 1.1.4): n_inliers = 12 nearest-neighbour
    inliers and n_outliers = 4 outliers per inlier for the triplets of every point, n_random = 3 random triplets per
    point, distance = ``"euclidean"``, weight_temp = 0.5 (the tempered-log temperature of the triplet weights),
    lr = 0.1, n_iters = 400 (delta-bar-delta updates), apply_pca = True (data with more than 100 dimensions are
    centred and reduced to 100 by a truncated SVD, otherwise min-max scaled and centred), a PCA initialisation
    scaled by 0.01, and Annoy (20 trees) for the neighbours. n_inliers must be < l − 1.

    random_state : the package takes no seed; its triplet sampling draws from numba's per-thread generators and
    its PCA initialisation from numpy's global one. The fit therefore runs numba on one thread with both generators
    seeded by ``random_state`` (and numpy's global state restored afterwards), which makes it deterministic. Annoy
    builds its trees on every core of the machine, so a machine with another core count may find other
    (approximate) neighbours.
    """

    _parameter_constraints = {
        "n_components": [integer(2, None)],
        "n_inliers": POSITIVE_INT,
        "n_outliers": POSITIVE_INT,
        "n_random": [integer(0, None)],
        "distance": [StrOptions({"euclidean", "manhattan", "angular", "hamming"})],
        "weight_temp": [real(0.0, 1.0)],
        "lr": POSITIVE,
        "n_iters": POSITIVE_INT,
        "apply_pca": ["boolean"],
        "random_state": SEED,
    }

    _option_rules = (fits_samples("n_inliers", lambda k, n: k < n - 1, lambda n: f"below n − 1 = {n - 1}",
                                  "TriMap's triplets take each point's n_inliers nearest neighbours among the others"),)

    def __init__(self, n_components: int = 2, n_inliers: int = 12, n_outliers: int = 4, n_random: int = 3,
                 distance: str = "euclidean", weight_temp: float = 0.5, lr: float = 0.1, n_iters: int = 400,
                 apply_pca: bool = True, random_state: int = 0):
        self.n_components = n_components
        self.n_inliers = n_inliers
        self.n_outliers = n_outliers
        self.n_random = n_random
        self.distance = distance
        self.weight_temp = weight_temp
        self.lr = lr
        self.n_iters = n_iters
        self.apply_pca = apply_pca
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "TriMap":
        import trimap

        self._validate_params()
        X = np.array(inputs.X, dtype=np.float32)  # n_inliers < l − 1: _option_rules
        with _seeded_numba(int(self.random_state)), Progress("TriMap") as progress, progress.library_output():
            est = trimap.TRIMAP(n_dims=int(self.n_components), n_inliers=int(self.n_inliers),
                                n_outliers=int(self.n_outliers), n_random=int(self.n_random), distance=self.distance,
                                weight_temp=float(self.weight_temp), lr=float(self.lr), n_iters=int(self.n_iters),
                                apply_pca=bool(self.apply_pca), verbose=True)  # it prints its settings here
            Z = est.fit_transform(X)
        self.embedding_ = _as_embedding(Z)
        return self


class PaCMAP(Embedder):
    """PaCMAP (Wang, Huang, Rudin & Shaposhnik 2021), the "PaCMAP" of featMAP Table 1, by ``pacmap.PaCMAP`` 0.9.1.

    featMAP gives no setting; these are the package's defaults (pacmap 0.9.1): n_neighbors = 10 near pairs per
    point, MN_ratio = 0.5 (mid-near pairs per near pair), FP_ratio = 2.0 (further pairs per near pair),
    distance = ``"euclidean"``, lr = 1.0 (Adam), the three-phase weight schedule of 100, 100 and ``num_iters`` =
    250 iterations, apply_pca = True (more than 100 dimensions are reduced to 100 by a truncated SVD for the
    neighbour search), init = ``"pca"``, faiss (HNSW) for the neighbours. When l is too small for the pairs asked,
    the package lowers the three counts itself. n_neighbors must be < l.

    random_state : the package's seed: with it PaCMAP samples its pairs from per-point seeds, seeds its SVD and
    initialisation and runs faiss on one thread, which makes it deterministic (its numba loops draw no random
    numbers then). Its numba loops run on one thread.
    """

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "n_neighbors": POSITIVE_INT,
        "MN_ratio": NON_NEGATIVE,
        "FP_ratio": POSITIVE,
        "distance": [StrOptions({"euclidean", "manhattan", "angular", "hamming"})],
        "lr": POSITIVE,
        "num_iters": POSITIVE_INT,
        "apply_pca": ["boolean"],
        "init": [StrOptions({"pca", "random"})],
        "random_state": SEED,
    }

    _option_rules = (neighbours_below_samples(),)

    def __init__(self, n_components: int = 2, n_neighbors: int = 10, MN_ratio: float = 0.5, FP_ratio: float = 2.0,
                 distance: str = "euclidean", lr: float = 1.0, num_iters: int = 250, apply_pca: bool = True,
                 init: str = "pca", random_state: int = 0):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.MN_ratio = MN_ratio
        self.FP_ratio = FP_ratio
        self.distance = distance
        self.lr = lr
        self.num_iters = num_iters
        self.apply_pca = apply_pca
        self.init = init
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "PaCMAP":
        import logging

        import pacmap

        self._validate_params()
        X = np.array(inputs.X, dtype=np.float32)
        k = int(self.n_neighbors)  # < l: _option_rules
        logger = logging.getLogger(pacmap.pacmap.__name__)
        level = logger.level
        logger.setLevel(logging.ERROR)  # it warns on every seeded run that a random state is set
        try:
            with one_numba_thread(), Progress("PaCMAP") as progress, progress.library_output():
                est = pacmap.PaCMAP(n_components=int(self.n_components), n_neighbors=k,
                                    MN_ratio=float(self.MN_ratio), FP_ratio=float(self.FP_ratio),
                                    distance=self.distance, lr=float(self.lr),
                                    num_iters=(100, 100, int(self.num_iters)), apply_pca=bool(self.apply_pca),
                                    random_state=int(self.random_state), verbose=True)
                Z = est.fit_transform(X, init=self.init)
        finally:
            logger.setLevel(level)
        self.embedding_ = _as_embedding(Z)
        return self


class HNNE(Embedder):
    """h-NNE (Sarfraz, Koulakis, Seibold & Stiefelhagen, CVPR 2022), the "h-NNE" of featMAP Table 1, by
    ``hnne.HNNE`` 2.0.1.

    featMAP gives no setting; these are the package's defaults (hnne 2.0.1, ``HNNE(n_components=2)``):
    metric = ``"cosine"`` (of the FINCH 1-nearest-neighbour hierarchy), radius = 0.4 (points placed around their
    anchors at 0.4 of the distance between neighbouring anchors), ann_threshold = 20,000 (exact neighbours below,
    pynndescent above), preliminary_embedding = ``"pca"``, the package's version-2 pipeline (packing of the coarse
    levels) with its automatic start level.

    random_state : seed of the PCA and of pynndescent (above ann_threshold samples). pynndescent runs on one numba
    thread, so that its approximate neighbours do not depend on the thread count; the fit is deterministic.
    """

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "metric": [StrOptions({"cosine", "euclidean", "cityblock", "l1", "l2", "manhattan"})],
        "radius": POSITIVE,
        "ann_threshold": POSITIVE_INT,
        "preliminary_embedding": [StrOptions({"pca", "pca_centroids", "random_linear"})],
        "random_state": SEED,
    }

    def __init__(self, n_components: int = 2, metric: str = "cosine", radius: float = 0.4,
                 ann_threshold: int = 20_000, preliminary_embedding: str = "pca", random_state: int = 0):
        self.n_components = n_components
        self.metric = metric
        self.radius = radius
        self.ann_threshold = ann_threshold
        self.preliminary_embedding = preliminary_embedding
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "HNNE":
        import hnne

        self._validate_params()
        X = np.asarray(inputs.X, dtype=np.float64)
        est = hnne.HNNE(n_components=int(self.n_components), metric=self.metric, radius=float(self.radius),
                        ann_threshold=int(self.ann_threshold), preliminary_embedding=self.preliminary_embedding,
                        random_state=int(self.random_state))
        with one_numba_thread(), Progress("h-NNE (hnne; its hierarchy is built in one call)"):
            Z = est.fit_transform(X)
        self.embedding_ = _as_embedding(Z)
        return self
