"""Spectral baselines: normalised spectral embedding (NSE) and Laplacian eigenmaps (LE), both through
:func:`cova.affinity.graphs.spectral_embedding` (scikit-learn's solvers).

* :class:`NSE` -- COVA Table 1 (footnote 1): "NSE employs P as its weight matrix from which the Laplacian is
  computed", P = the t-SNE joint P (PCA → 30 dimensions, perplexity 30). The embedding is
  ``sklearn.manifold.spectral_embedding(P, n_components=2, norm_laplacian=True, drop_first=True)`` (Ng, Jordan &
  Weiss 2002 without the row normalisation, which is a clustering step; our reading of the footnote).
* :class:`LaplacianEigenmaps` -- Belkin & Niyogi 2003 (LE, H.7 prototype generator and existing-method figures):
  the same spectral embedding of the run's W, or ``sklearn.manifold.SpectralEmbedding`` of a kNN graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.manifold import SpectralEmbedding

from ...affinity.dense import pca_reduce
from ...affinity.graphs import spectral_embedding
from ...affinity.weights import gaussian_perplexity
from ...constraints import POSITIVE, POSITIVE_INT, SEED, SEED_OR_NONE, StrOptions
from ...errors import UserError
from ...inputs import Inputs
from ..base import Embedder, neighbours_below_samples

__all__ = ["NSE", "LaplacianEigenmaps", "nse_embedding"]

#: Eigen-solvers of ``sklearn.manifold.spectral_embedding`` (``eigen_solver=``).
SPECTRAL_SOLVERS = ("arpack", "lobpcg", "amg")


def _check_solver(eigen_solver: str) -> None:
    if eigen_solver not in SPECTRAL_SOLVERS:
        raise UserError(f"eigen_solver must be one of {list(SPECTRAL_SOLVERS)}, got {eigen_solver!r}")


def nse_embedding(P: Any, n_components: int = 2, *, eigen_solver: str = "arpack", random_state: int = 0) -> np.ndarray:
    """Normalised spectral embedding of the affinity ``P`` (symmetric, non-negative, l×l, sparse or dense).

    :func:`cova.affinity.graphs.spectral_embedding`, i.e. ``sklearn.manifold.spectral_embedding(P,
    n_components=n_components, eigen_solver=eigen_solver, random_state=random_state, norm_laplacian=True,
    drop_first=True)``: the eigenvectors of the normalised
    Laplacian I − D^{-1/2} P D^{-1/2} with the smallest non-zero eigenvalues, rescaled by D^{-1/2} (the
    random-walk eigenvectors), the trivial one dropped. ``random_state`` seeds ARPACK's start vector, so the output
    is deterministic. A disconnected P triggers scikit-learn's warning and an ill-defined embedding.
    """
    _check_solver(eigen_solver)
    return spectral_embedding(P, n_components, solver=eigen_solver, random_state=random_state)


class NSE(Embedder):
    """Normalised spectral embedding of the t-SNE P (COVA Table 1, footnote 1).

    Parameters
    ----------
    affinity : ``"perplexity"`` (default): P = :func:`cova.affinity.gaussian_perplexity` of the PCA-reduced X
        (3·perplexity candidate neighbours, the same P our t-SNE uses); ``"inputs"``: the run's W.
    perplexity : 30. n_pca : 30 (PCA before the affinity; ``None`` or d ≤ 30 skips it).
    n_components : 2. eigen_solver : ``"arpack"`` (scikit-learn's default for this size), ``"lobpcg"`` or ``"amg"``.
    random_state : seed of the eigen-solver's start vector.
    """

    sklearn_compatible = True

    _parameter_constraints = {
        "affinity": [StrOptions({"perplexity", "inputs"})],
        "perplexity": POSITIVE,
        "n_pca": [*POSITIVE_INT, None],
        "n_components": POSITIVE_INT,
        "eigen_solver": [StrOptions(set(SPECTRAL_SOLVERS))],
        "random_state": SEED,
    }

    def requires(self) -> tuple[str, ...]:
        """W with ``affinity="inputs"``, else X."""
        return self._affinity_requires()

    def __init__(self, affinity: str = "perplexity", perplexity: float = 30.0, n_pca: int | None = 30,
                 n_components: int = 2, eigen_solver: str = "arpack", random_state: int = 0):
        self.affinity = affinity
        self.perplexity = perplexity
        self.n_pca = n_pca
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "NSE":
        self._validate_params()
        if self.affinity == "perplexity":
            P = gaussian_perplexity(pca_reduce(inputs.X, self.n_pca), self.perplexity,
                                    random_state=self.random_state)
        else:
            P = sp.csr_matrix(inputs.W)
        self.affinity_matrix_ = P
        self.embedding_ = nse_embedding(P, self.n_components, eigen_solver=self.eigen_solver,
                                        random_state=self.random_state)
        return self


class LaplacianEigenmaps(Embedder):
    """Laplacian eigenmaps (Belkin & Niyogi 2003).

    Parameters
    ----------
    affinity : ``"inputs"`` (default): :func:`cova.affinity.graphs.spectral_embedding` of the run's W (what
        ``SpectralEmbedding(affinity="precomputed")`` computes; COVA App. H.7);
        ``"knn"``: scikit-learn's symmetrised 0/1 kNN graph of X (``affinity="nearest_neighbors"``).
    n_neighbors : 10, used by ``"knn"`` only (our choice: the papers give no value).
    n_components : 2. eigen_solver : ``"arpack"``. random_state : seed of the eigen-solver's start vector.

    scikit-learn's SpectralEmbedding uses the normalised Laplacian and returns D^{-1/2}-rescaled eigenvectors,
    i.e. the same embedding as :class:`NSE` on the same graph.
    """

    _parameter_constraints = {
        "affinity": [StrOptions({"inputs", "knn"})],
        "n_neighbors": POSITIVE_INT,
        "n_components": POSITIVE_INT,
        "eigen_solver": [StrOptions(set(SPECTRAL_SOLVERS))],
        "random_state": SEED_OR_NONE,
    }

    _option_rules = (neighbours_below_samples(),)

    def requires(self) -> tuple[str, ...]:
        """W with ``affinity="inputs"``, else X."""
        return self._affinity_requires()

    def __init__(self, affinity: str = "inputs", n_neighbors: int = 10, n_components: int = 2,
                 eigen_solver: str = "arpack", random_state: int = 0):
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "LaplacianEigenmaps":
        self._validate_params()
        if self.affinity == "inputs":
            Z = spectral_embedding(sp.csr_matrix(inputs.W), self.n_components, solver=self.eigen_solver,
                                   random_state=self.random_state)
        else:
            k = int(self.n_neighbors)  # < l: _option_rules
            est = SpectralEmbedding(n_components=self.n_components, affinity="nearest_neighbors", n_neighbors=k,
                                    eigen_solver=self.eigen_solver, random_state=self.random_state, n_jobs=1)
            Z = est.fit_transform(np.asarray(inputs.X, dtype=np.float64))
        self.embedding_ = np.ascontiguousarray(Z, dtype=np.float64)
        return self
