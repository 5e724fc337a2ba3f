"""LDMGI embedding (Yang, Xu, Nie, Yan & Zhuang 2010, "Image clustering using local discriminant models and global
integration"), written by hand (one of COVA's existing methods: Figs. H.7, H.13, H.18 and the H.7 prototype generator).

For every sample i the clique N_i = {x_i and its k − 1 nearest neighbours} (Euclidean, self first) gives the
local data matrix X_i ∈ R^{d×k} (clique members as columns). With the centring matrix H_k = I_k − 11ᵀ/k, the
local discriminant model's Laplacian-like matrix is (LDMGI paper, Sec. 2.2)

    L_i = H_k (H_k X_iᵀ X_i H_k + λ I_k)⁻¹ H_k       (k×k; X_iᵀX_i is the clique's k×k Gram matrix),

and the global integration is L = Σ_i S_i L_i S_iᵀ, S_i ∈ {0,1}^{l×k} the clique's selection matrix (assembled as
a sparse l×l matrix with ≤ l·k² stored entries). Each L_i is symmetric PSD (H_k is PSD and the inverse is PD) and
annihilates 1_k (H_k 1 = 0), so L is symmetric PSD with L1 = 0. The clustering relaxation of LDMGI minimises
tr(YᵀLY) under YᵀY = I; the visualisation takes the eigenvectors of the 2 smallest **non-trivial** eigenvalues
(the constant eigenvector is dropped, as in Laplacian eigenmaps: the 3 smallest eigenvectors are computed, the
constant direction is projected out of their span and the rest is re-diagonalised, which also makes the result
well defined when the kNN cliques split the data into two components).

Eigen-solver: ``"dense"`` (``numpy.linalg.eigh``) for l ≤ 2,000 under ``"auto"``, else ARPACK
(``scipy.sparse.linalg.eigsh``) in shift-invert mode around σ = −10⁻³·mean(diag L) (L − σI is positive definite,
so the sparse LU is well posed, and the eigenvalues nearest σ are the smallest ones), with a start vector drawn
from ``random_state`` (deterministic). Each returned eigenvector's sign is fixed so that its largest-magnitude
entry is positive.

Defaults [ours; COVA gives none]: k = 10, λ = 1. λ acts on the scale of X (the Gram matrices), so it is comparable
across data sets only after a common scaling.
"""

from __future__ import annotations

import numpy as np

from ...affinity.ldmgi import ldmgi_embedding, ldmgi_matrix
from ...constraints import POSITIVE, POSITIVE_INT, SEED, StrOptions, integer
from ...inputs import Inputs
from ..base import Embedder, fits_samples

__all__ = ["LDMGI"]

class LDMGI(Embedder):
    """LDMGI embedding (module docstring).

    Parameters
    ----------
    n_neighbors : clique size k = 10 (x_i plus its 9 nearest neighbours) [assumption].
    lam : λ = 1.0 [assumption]. n_components : 2.
    eigen_solver : ``"auto"`` (dense for l ≤ 2,000, else ARPACK shift-invert), ``"dense"`` or ``"arpack"``.
    random_state : seed of ARPACK's start vector (and of nothing else).

    Attributes: embedding_ (l, n_components), eigenvalues_ (the n_components + 1 smallest, the first ≈ 0),
    laplacian_ (L).
    """

    sklearn_compatible = True

    _parameter_constraints = {
        "n_neighbors": [integer(2, None)],
        "lam": POSITIVE,
        "n_components": POSITIVE_INT,
        "eigen_solver": [StrOptions({"auto", "dense", "arpack"})],
        "random_state": SEED,
    }

    _option_rules = (fits_samples("n_components", lambda k, n: k + 1 < n, lambda n: f"at most n − 2 = {n - 2}",
                                  "LDMGI takes the n_components + 1 smallest eigenvectors of the n × n Laplacian "
                                  "(the first constant) and needs n_components + 1 < n"),
                     fits_samples("n_neighbors", lambda k, n: k <= n, lambda n: f"at most n = {n}",
                                  "each clique is a point and its n_neighbors − 1 nearest neighbours"))

    def __init__(self, n_neighbors: int = 10, lam: float = 1.0, n_components: int = 2, eigen_solver: str = "auto",
                 random_state: int = 0):
        self.n_neighbors = n_neighbors
        self.lam = lam
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "LDMGI":
        self._validate_params()
        n = self.n_components
        X = np.asarray(inputs.X, dtype=np.float64)  # n_components + 1 < l: _option_rules
        L = ldmgi_matrix(X, self.n_neighbors, self.lam, random_state=self.random_state)
        Z, w = ldmgi_embedding(L, n, self.eigen_solver, self.random_state)
        self.laplacian_ = L
        self.eigenvalues_ = w
        self.embedding_ = Z
        return self
