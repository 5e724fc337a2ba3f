"""Baselines that scikit-learn (and umap-learn) implement: thin wrappers with the common ``fit(inputs)`` contract.

PCA, LLE, Isomap, metric MDS, LDA, NCA (scikit-learn) and UMAP (umap-learn, not in the papers). Each wrapper only
validates its parameters, fixes the seeds (from ``random_state``) and single-threads where threading could change
results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.decomposition import PCA as _SkPCA
from sklearn.utils.validation import check_is_fitted, validate_data

from ...constraints import MAX_SAMPLES, NON_NEGATIVE, POSITIVE_INT, SEED, SEED_OR_NONE, StrOptions, integer
from ...errors import UserError
from ...inputs import Inputs
from ...jit import cache_library_kernels
from ...progress import Progress
from ..base import Embedder, components_fit_cohorts, components_fit_features, neighbours_below_samples, size_guard


class PCA(Embedder):
    """Principal component analysis of X to ``n_components`` dimensions (exact SVD, deterministic).

    Attributes: embedding_, components_ (n_components, d): the unit principal axes (the feature loadings a biplot
    draws; featMAP's linear interpretability reference), saved as an extra output.
    """

    _parameter_constraints = {"n_components": POSITIVE_INT}
    extra_outputs = ("components_",)
    sklearn_compatible = True

    def __init__(self, n_components: int = 2):
        self.n_components = n_components

    def _fit(self, inputs: Inputs) -> "PCA":
        self._validate_params()
        est = _SkPCA(n_components=self.n_components, svd_solver="full")
        self.embedding_ = np.ascontiguousarray(est.fit_transform(inputs.X), dtype=np.float64)
        self.components_ = np.ascontiguousarray(est.components_, dtype=np.float64)
        self.pca_ = est
        return self

    def transform(self, X: Any) -> np.ndarray:
        """(X − mean) projected on the principal axes: the fitted map itself, so ``transform`` of the training rows
        is ``embedding_``."""
        check_is_fitted(self, "pca_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.ascontiguousarray(self.pca_.transform(X), dtype=np.float64)


# ----------------------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------------------
def _as_embedding(Z: object) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(Z), dtype=np.float64)


def _library_transform(method: Embedder, X: Any) -> np.ndarray:
    """``transform`` of a method that wraps a fitted scikit-learn estimator (``estimator_``): that library's own
    out-of-sample map of new points, on X with the fitted number of features."""
    check_is_fitted(method, "estimator_")
    X = validate_data(method, X, reset=False, dtype=np.float64)
    return _as_embedding(method.estimator_.transform(X))


# ----------------------------------------------------------------------------------------------------------------
# manifold learners (COVA Table 3, existing-method figures)
# ----------------------------------------------------------------------------------------------------------------
class LLE(Embedder):
    """Locally linear embedding (Roweis & Saul 2000; COVA Table 3, Figs. H.6/H.13/H.18) via
    ``sklearn.manifold.LocallyLinearEmbedding``.

    Parameters
    ----------
    n_neighbors : 30 (COVA Table 3: "effective neighbour number 30"). n_components : 2.
    reg : 1e-3, scikit-learn's regularisation of the local Gram matrices (needed when n_neighbors > d).
    method : ``"standard"`` (Roweis & Saul); scikit-learn's ``"modified"``, ``"hessian"``, ``"ltsa"`` also accepted.
    eigen_solver : ``"auto"`` (ARPACK above 200 samples, seeded by ``random_state``: deterministic).
    random_state : seed of ARPACK's start vector.
    """

    sklearn_compatible = True

    _parameter_constraints = {
        "n_neighbors": POSITIVE_INT,
        "n_components": POSITIVE_INT,
        "reg": NON_NEGATIVE,
        "method": [StrOptions({"standard", "modified", "hessian", "ltsa"})],
        "eigen_solver": [StrOptions({"auto", "arpack", "dense"})],
        "random_state": SEED_OR_NONE,
    }

    _option_rules = (neighbours_below_samples(),)

    def __init__(self, n_neighbors: int = 30, n_components: int = 2, reg: float = 1e-3, method: str = "standard",
                 eigen_solver: str = "auto", random_state: int = 0):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.reg = reg
        self.method = method
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "LLE":
        from sklearn.manifold import LocallyLinearEmbedding

        self._validate_params()
        k = int(self.n_neighbors)  # < l: _option_rules
        est = LocallyLinearEmbedding(n_neighbors=k, n_components=int(self.n_components),
                                     reg=self.reg, method=self.method, eigen_solver=self.eigen_solver,
                                     random_state=self.random_state, n_jobs=1)
        self.embedding_ = _as_embedding(est.fit_transform(np.asarray(inputs.X, dtype=np.float64)))
        self.reconstruction_error_ = float(est.reconstruction_error_)
        self.estimator_ = est
        return self

    def transform(self, X: Any) -> np.ndarray:
        """New points placed by scikit-learn's out-of-sample rule: each new point's barycentric reconstruction
        weights from its nearest fitted points, applied to their embedding."""
        return _library_transform(self, X)


def _hessian_neighbourhood(options: Mapping[str, Any], _: Mapping[str, Any]) -> tuple[str, str] | None:
    """Hessian eigenmaps estimate a d(d + 3)/2-dimensional local Hessian from each neighbourhood (scikit-learn's
    ``method="hessian"``): n_neighbors > n_components (n_components + 3) / 2."""
    d = int(options["n_components"])
    if int(options["n_neighbors"]) > d * (d + 3) // 2:
        return None
    return "n_neighbors", (f"Hessian eigenmaps need n_neighbors greater than n_components (n_components + 3) / 2 = "
                           f"{d * (d + 3) // 2} at n_components = {d}; allowed: at least {d * (d + 3) // 2 + 1}")


class HLLE(LLE):
    """Hessian eigenmaps ("Hessian-based LLE", Donoho & Grimes 2003; one of NeRV's comparison methods, Sec. 4.1 and
    Figs. 4-8) via ``sklearn.manifold.LocallyLinearEmbedding(method="hessian")``.

    Parameters
    ----------
    n_neighbors : 10 [ours: NeRV tunes k; its experiments pick k from a grid by the F-measure]; Hessian eigenmaps
        needs more than n_components·(n_components + 3)/2 neighbours. n_components : 2. reg : as LLE's.
    eigen_solver : ``"dense"`` (default): ARPACK often fails to separate Hessian eigenmaps' near-null space
        ("factor is exactly singular"); the dense solver is exact and deterministic (O(l³), seconds at l ≈ 3,000).
    random_state : seed of ARPACK's start vector, if ``eigen_solver`` is ARPACK.
    """

    sklearn_compatible = False  # refused by check_estimator (docs/decisions.md, "Python API on arrays")

    _parameter_constraints = {k: v for k, v in LLE._parameter_constraints.items() if k != "method"}

    _option_rules = (*LLE._option_rules, _hessian_neighbourhood)

    def __init__(self, n_neighbors: int = 10, n_components: int = 2, reg: float = 1e-3, eigen_solver: str = "dense",
                 random_state: int = 0):
        super().__init__(n_neighbors=n_neighbors, n_components=n_components, reg=reg, method="hessian",
                         eigen_solver=eigen_solver, random_state=random_state)


class Isomap(Embedder):
    """Isomap (Tenenbaum et al. 2000; existing-method figures) via ``sklearn.manifold.Isomap``.

    Parameters
    ----------
    n_neighbors : 30 [ours: the papers give no value; same as LLE]. n_components : 2.
    eigen_solver : ``"dense"`` (default). scikit-learn's Isomap does not pass a seed to its kernel PCA, so its
        ARPACK path starts from an unseeded random vector and is not bitwise reproducible; the dense solver is
        exact and deterministic (O(l³), a few seconds at l ≈ 3,000; the geodesic matrix is l×l anyway).
        ``"arpack"``/``"auto"`` are accepted for large l, at the cost of run-to-run differences at rounding level.
    """

    sklearn_compatible = True

    _parameter_constraints = {
        "n_neighbors": POSITIVE_INT,
        "n_components": POSITIVE_INT,
        "eigen_solver": [StrOptions({"dense", "arpack", "auto"})],
    }

    _option_rules = (neighbours_below_samples(),)

    def __init__(self, n_neighbors: int = 30, n_components: int = 2, eigen_solver: str = "dense"):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.eigen_solver = eigen_solver

    def _fit(self, inputs: Inputs) -> "Isomap":
        from sklearn.manifold import Isomap as _SkIsomap

        self._validate_params()
        k = int(self.n_neighbors)  # < l: _option_rules
        est = _SkIsomap(n_neighbors=k, n_components=int(self.n_components),
                        eigen_solver=self.eigen_solver, n_jobs=1)
        self.embedding_ = _as_embedding(est.fit_transform(np.asarray(inputs.X, dtype=np.float64)))
        self.estimator_ = est
        return self

    def transform(self, X: Any) -> np.ndarray:
        """New points placed by scikit-learn's out-of-sample rule: geodesic distances to the fitted points through
        the new point's nearest neighbours, projected by the fitted kernel PCA."""
        return _library_transform(self, X)


class MDS(Embedder):
    """Metric multidimensional scaling (NeRV paper's baseline, Venna et al. 2010 Sec. 4.1, Eq. 5: raw stress
    Σ_{i,j} (d(x_i, x_j) − d(y_i, y_j))² on Euclidean distances) via ``sklearn.manifold.MDS`` (SMACOF).

    Parameters
    ----------
    n_components : 2. max_iter : 300 SMACOF iterations (scikit-learn's default). eps : 1e-6 (scikit-learn's
        convergence tolerance on the normalised stress change).
    init : ``"classical_mds"`` (default: start from classical MDS, i.e. PCA of the Euclidean data, which makes the
        result deterministic) or ``"random"`` (seeded by ``random_state``; ``n_init`` starts, lowest stress kept).
    n_init : starts for ``init="random"`` (ignored by scikit-learn with ``"classical_mds"``).
    max_samples : 5,000; more samples raise ``ValueError`` (SMACOF is O(l²) in time and memory per iteration).
    random_state : seed of the random start(s).

    Attributes: embedding_, stress_ (scikit-learn's raw stress Σ_{i<j} (d_ij − δ_ij)² of the final configuration).
    """

    sklearn_compatible = True

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "max_iter": POSITIVE_INT,
        "eps": NON_NEGATIVE,
        "init": [StrOptions({"classical_mds", "random"})],
        "n_init": POSITIVE_INT,
        "max_samples": MAX_SAMPLES,
        "random_state": SEED,
    }

    _option_rules = (size_guard("MDS", "dense l×l distances"),)

    def __init__(self, n_components: int = 2, max_iter: int = 300, eps: float = 1e-6, init: str = "classical_mds",
                 n_init: int = 1, max_samples: int | None = 5000, random_state: int = 0):
        self.n_components = n_components
        self.max_iter = max_iter
        self.eps = eps
        self.init = init
        self.n_init = n_init
        self.max_samples = max_samples
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "MDS":
        from sklearn.manifold import MDS as _SkMDS

        self._validate_params()
        X = np.asarray(inputs.X, dtype=np.float64)
        est = _SkMDS(n_components=int(self.n_components), metric_mds=True, n_init=int(self.n_init), init=self.init,
                     max_iter=int(self.max_iter), eps=float(self.eps), n_jobs=1,
                     random_state=int(self.random_state), metric="euclidean", normalized_stress=False, verbose=2)
        with Progress("MDS (scikit-learn SMACOF)") as progress, progress.library_output():
            self.embedding_ = _as_embedding(est.fit_transform(X))
        self.stress_ = float(est.stress_)
        return self


# ----------------------------------------------------------------------------------------------------------------
# supervised linear projections (COVA projection comparisons, Fig. 7, H.11, Table H.3)
# ----------------------------------------------------------------------------------------------------------------
class LDA(Embedder):
    """Linear discriminant analysis (Fisher) via ``sklearn.discriminant_analysis.LinearDiscriminantAnalysis``.

    Parameters: n_components = 2, solver = ``"svd"`` (scikit-learn's default; no covariance matrix is formed).
    LDA yields at most min(c − 1, d) directions, so n_components = 2 needs c ≥ 3 classes (``_option_rules``).
    Deterministic.
    """

    required_inputs = ("X", "labels")

    _parameter_constraints = {"n_components": POSITIVE_INT, "solver": [StrOptions({"svd", "eigen"})]}
    _option_rules = (components_fit_cohorts("LDA finds at most c − 1 directions between c classes"),
                     components_fit_features("LDA's directions lie in the data space"))

    def __init__(self, n_components: int = 2, solver: str = "svd"):
        self.n_components = n_components
        self.solver = solver

    def _fit(self, inputs: Inputs) -> "LDA":
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

        self._validate_params()
        n = int(self.n_components)  # <= min(c - 1, d): _option_rules
        y = np.asarray(inputs.labels).ravel()
        est = LinearDiscriminantAnalysis(n_components=n, solver=self.solver)
        self.embedding_ = _as_embedding(est.fit(np.asarray(inputs.X, dtype=np.float64), y).transform(inputs.X))
        self.projection_ = _as_embedding(est.scalings_[:, :n])
        self.estimator_ = est
        return self

    def transform(self, X: Any) -> np.ndarray:
        """New points projected onto the fitted discriminant directions (scikit-learn's ``transform``)."""
        return _library_transform(self, X)


class NCA(Embedder):
    """Neighbourhood components analysis (Goldberger et al. 2005) via
    ``sklearn.neighbors.NeighborhoodComponentsAnalysis`` (COVA Sec. 4.2.2, Fig. 7, H.11, Table H.3).

    NCA costs O(l²·d) per iteration, so [ours] at most ``max_samples`` = 3,000 samples are used to *learn* the
    projection: when l > max_samples a subset of that size is drawn without replacement by
    ``np.random.default_rng(random_state)`` (uniformly, not stratified), the projection is fitted on it, and then
    **all** l samples are transformed. ``max_samples=None`` trains on everything.

    Parameters
    ----------
    n_components : 2. init : ``"auto"`` (scikit-learn: LDA if n_components ≤ min(d, c − 1), else PCA).
    max_iter : 50 (scikit-learn's default). tol : 1e-5. max_samples : 3,000. random_state : seed of the subsample
    and of scikit-learn's (random-init only) start.

    Attributes: embedding_, components_ (n_components, d), train_indices_ (sorted indices used for training).
    ``transform(X)`` maps new samples with the learnt projection.
    """

    required_inputs = ("X", "labels")

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "init": [StrOptions({"auto", "pca", "lda", "identity", "random"})],
        "max_iter": POSITIVE_INT,
        "tol": NON_NEGATIVE,
        "max_samples": MAX_SAMPLES,
        "random_state": SEED,
    }

    _option_rules = (components_fit_features("NCA's directions lie in the data space"),)

    def __init__(self, n_components: int = 2, init: str = "auto", max_iter: int = 50, tol: float = 1e-5,
                 max_samples: int | None = 3000, random_state: int = 0):
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.max_samples = max_samples
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "NCA":
        from sklearn.neighbors import NeighborhoodComponentsAnalysis

        self._validate_params()
        X = np.asarray(inputs.X, dtype=np.float64)
        y = np.asarray(inputs.labels).ravel()
        l = X.shape[0]
        n = int(self.n_components)
        if self.max_samples is not None and l > self.max_samples:
            idx = np.sort(np.random.default_rng(int(self.random_state)).choice(l, int(self.max_samples),
                                                                                 replace=False))
        else:
            idx = np.arange(l)
        est = NeighborhoodComponentsAnalysis(n_components=n, init=self.init,
                                             max_iter=int(self.max_iter), tol=self.tol,
                                             random_state=self.random_state, verbose=1)
        with Progress("NCA (scikit-learn)") as progress, progress.library_output():
            est.fit(X[idx], y[idx])
        self.train_indices_ = idx
        self.components_ = _as_embedding(est.components_)
        self.embedding_ = _as_embedding(est.transform(X))
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Out-of-sample embedding X Lᵀ with the learnt linear map L (``components_``; scikit-learn's
        ``transform``), so NCA runs on inputs with a train/test split (COVA Fig. 7's baseline)."""
        if not hasattr(self, "components_"):
            raise UserError("NCA is not fitted yet; call fit first")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.components_.shape[1]:
            raise UserError(f"X must have {self.components_.shape[1]} columns, got shape {X.shape}")
        return _as_embedding(X @ self.components_.T)


# ----------------------------------------------------------------------------------------------------------------
# UMAP (not in the papers)
# ----------------------------------------------------------------------------------------------------------------
class UMAPLayout(Embedder):
    """What UMAP and densMAP share: umap-learn's ``UMAP`` with these parameters and a subclass's further options
    (:meth:`_umap_options`), fitted seeded and single-threaded; ``umap_`` keeps the fitted umap-learn object. See
    :class:`UMAP`."""

    _parameter_constraints = {
        "n_neighbors": [integer(2, None)],
        "min_dist": NON_NEGATIVE,
        "metric": [str],
        "init": [StrOptions({"spectral", "random", "pca", "tswspectral"})],
        "n_components": POSITIVE_INT,
        "n_epochs": [*POSITIVE_INT, None],
        "random_state": SEED,
    }

    _option_rules = (neighbours_below_samples(),)

    def __init__(self, n_neighbors: int = 15, min_dist: float = 0.1, metric: str = "euclidean",
                 init: str = "spectral", n_components: int = 2, n_epochs: int | None = None, random_state: int = 0):
        self.n_neighbors = n_neighbors
        self.min_dist = min_dist
        self.metric = metric
        self.init = init
        self.n_components = n_components
        self.n_epochs = n_epochs
        self.random_state = random_state

    def _umap_options(self) -> dict[str, Any]:
        """Further ``umap.UMAP`` arguments of a subclass (densMAP's); none for UMAP itself."""
        return {}

    def _fit(self, inputs: Inputs) -> "UMAP":
        import warnings

        import umap

        cache_library_kernels("umap")
        self._validate_params()
        k = int(self.n_neighbors)  # < l: _option_rules
        with Progress(f"{type(self).__name__} (umap-learn)") as progress:
            est = umap.UMAP(n_neighbors=k, min_dist=self.min_dist, metric=self.metric, init=self.init,
                            n_components=int(self.n_components), n_epochs=self.n_epochs,
                            random_state=int(self.random_state), n_jobs=1, transform_seed=int(self.random_state),
                            tqdm_kwds=progress.tqdm_kwds(), **self._umap_options())
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*n_jobs.*overridden.*")
                Z = est.fit_transform(np.asarray(inputs.X, dtype=np.float64))
        self.embedding_ = _as_embedding(Z)
        self.umap_ = est
        return self


class UMAP(UMAPLayout):
    """UMAP (McInnes et al. 2018) via ``umap-learn``. **Not in the COVA papers**: an extra modern reference point.

    Parameters: n_neighbors = 15, min_dist = 0.1, metric = ``"euclidean"``, init = ``"spectral"`` (umap-learn's
    defaults), n_components = 2, n_epochs = None (umap-learn's choice: 500 for l ≤ 10,000, else 200),
    random_state = 0. umap-learn is run single-threaded (n_jobs = 1), which together with the seed makes it
    deterministic (umap-learn itself disables parallelism when a seed is given).

    ``transform`` places new points by umap-learn's own rule (``umap.UMAP.transform``: each new point starts at the
    weighted mean of its fitted neighbours and is optimised against the fixed fitted layout, seeded with
    ``random_state``), so ``transform`` of the training rows is near, not equal to, ``embedding_``: not
    scikit-learn-compatible for that reason (its ``check_transformer_general`` asks for equality).
    """

    def transform(self, X: Any) -> np.ndarray:
        """New points of the input space placed in the fitted layout by umap-learn (class docstring)."""
        check_is_fitted(self, "umap_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return _as_embedding(self.umap_.transform(X))
