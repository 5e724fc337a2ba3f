"""Multimodal manifold analysis (MMA; Eynard, Kovnatsky, Bronstein, Glashoff & Bronstein 2015) as a supervised
embedding mixing neighbourhood and class proximities, one of COVA's existing methods (App. H). COVA names it
only; the form below is ours (``docs/papers.md``, "Existing methods").

Two "modalities" on the same samples:

* L₁ = 𝐋(W), the Laplacian of the run's kNN weight graph W (``affinity="inputs"``, unit sum) or of
  :func:`cova.affinity.gaussian_perplexity` of X (``affinity="perplexity"``);
* L₂ = 𝐋(YYᵀ/s), the Laplacian of the class co-membership graph (w_ij = 1 for same-class i ≠ j), divided by its
  total s = Σ_c n_c(n_c − 1) so that, like W, it has unit sum [ours: with the unnormalised 𝐋(YYᵀ), μ would
  have to absorb a factor ≈ l²/c]. 𝐋(YYᵀ)Φ = 𝐃Φ − Y(YᵀΦ) is applied in O(lK),
  never as an l×l matrix.

Approximate joint diagonalisation (Eynard et al. 2015, Sec. 4, the "JAD" problem restricted to the first K
eigenvectors of L₁): Φ̂ = Φ₁A with Φ₁ the K eigenvectors of L₁ with the smallest eigenvalues and A ∈ O(K)
minimising

    f(A) = off(AᵀΛ₁A) + μ·off(AᵀB₂A),   B₂ = Φ₁ᵀL₂Φ₁,  Λ₁ = Φ₁ᵀL₁Φ₁,  off(C) = Σ_{i≠j} C_ij²,

by Riemannian gradient descent on St(K, K) = O(K) (COVA Eqs. 16-17: tangent projection, sign-fixed QR retraction,
Armijo line search; :func:`cova.manifolds.optimize.riemannian_gradient_descent`) from A = I. The Euclidean gradient
is ∇f = 4Λ₁A·off(AᵀΛ₁A) + 4μB₂A·off(AᵀB₂A) (off(C) = C with its diagonal zeroed; B symmetric).

Embedding: the columns of Φ̂ are ordered by their joint Rayleigh quotients φ̂ᵀ(L₁ + μL₂)φ̂ (ascending); the column
closest to the constant vector (the trivial joint eigenvector, in the null space of both Laplacians) is dropped and
the next ``n_components`` columns are the embedding, each scaled to unit norm by construction and sign-fixed so
that its largest-magnitude entry is positive. Defaults [ours]: K = 20, μ = 1.

Φ₁ comes from ``numpy.linalg.eigh`` (l ≤ 2,000 under ``"auto"``) or ARPACK shift-invert around
σ = −10⁻³·mean(diag L₁) with a start vector seeded by ``random_state``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh

from ...affinity.weights import gaussian_perplexity, laplacian
from ...constraints import NON_NEGATIVE, POSITIVE, POSITIVE_INT, SEED, StrOptions
from ...errors import UserError
from ...inputs import Inputs
from ...manifolds.optimize import riemannian_gradient_descent
from ...manifolds.stiefel import project_tangent, retract_qr
from ..base import Embedder, at_least_components, fits_samples

__all__ = ["MMA", "mma_objective", "smallest_eigenvectors"]


def smallest_eigenvectors(L: sp.spmatrix, k: int, *, eigen_solver: str = "auto",
                          random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest eigenpairs of a symmetric PSD sparse matrix, ascending (see the module docstring)."""
    l = L.shape[0]
    if eigen_solver == "auto":
        eigen_solver = "dense" if l <= 2000 else "arpack"
    if eigen_solver == "dense" or k >= l - 1:
        w, V = np.linalg.eigh(L.toarray())
        return w[:k], V[:, :k]
    if eigen_solver != "arpack":
        raise UserError(f"eigen_solver must be one of ['arpack', 'auto', 'dense'], got {eigen_solver!r}")
    diag = float(L.diagonal().mean())
    sigma = -1e-3 * (diag if diag > 0 else 1.0)
    v0 = np.random.default_rng(int(random_state)).uniform(-1.0, 1.0, l)
    w, V = eigsh(sp.csc_matrix(L), k=k, sigma=sigma, which="LM", v0=v0)
    order = np.argsort(w)
    return w[order], V[:, order]


def _off(C: np.ndarray) -> np.ndarray:
    O = C.copy()
    np.fill_diagonal(O, 0.0)
    return O


def mma_objective(A: np.ndarray, B1: np.ndarray, B2: np.ndarray, mu: float) -> tuple[float, np.ndarray]:
    """f(A) = off(AᵀB₁A) + μ·off(AᵀB₂A) and its Euclidean gradient 4B₁A·off(AᵀB₁A) + 4μB₂A·off(AᵀB₂A)
    (B₁, B₂ symmetric K×K)."""
    O1 = _off(A.T @ B1 @ A)
    O2 = _off(A.T @ B2 @ A)
    f = float(np.sum(O1 * O1) + mu * np.sum(O2 * O2))
    g = 4.0 * (B1 @ A @ O1) + 4.0 * mu * (B2 @ A @ O2)
    return f, g


class MMA(Embedder):
    """MMA embedding (module docstring).

    Parameters
    ----------
    affinity : ``"inputs"`` (the run's W, default) or ``"perplexity"`` (t-SNE P of X, ``perplexity`` 30).
    n_eigenvectors : K = 20. mu : μ = 1.0. n_components : 2.
    max_iter : 500 Riemannian gradient steps (Armijo), gtol 1e-8 relative.
    eigen_solver : ``"auto"`` | ``"dense"`` | ``"arpack"``. random_state : seed of ARPACK's start vector.

    Attributes: embedding_, rotation_ (A), objective_ (history of f), eigenvalues_ (Λ₁ diagonal).
    """

    _parameter_constraints = {
        "affinity": [StrOptions({"inputs", "perplexity"})],
        "perplexity": POSITIVE,
        "n_eigenvectors": POSITIVE_INT,
        "mu": NON_NEGATIVE,
        "n_components": POSITIVE_INT,
        "max_iter": POSITIVE_INT,
        "gtol": NON_NEGATIVE,
        "eigen_solver": [StrOptions({"auto", "dense", "arpack"})],
        "random_state": SEED,
    }

    _option_rules = (at_least_components("n_eigenvectors", "the display rotates the n_eigenvectors smallest "
                                                          "eigenvectors of the Laplacian, the first of them "
                                                          "constant", extra=1),
                     fits_samples("n_eigenvectors", lambda K, n: K < n, lambda n: f"at most n − 1 = {n - 1}",
                                  "MMA takes the n_eigenvectors smallest eigenvectors of the n × n graph Laplacian, "
                                  "fewer than all n"))

    def requires(self) -> tuple[str, ...]:
        """W with ``affinity="inputs"``, else X; X and the labels always."""
        return self._affinity_requires("X", "labels")

    def __init__(self, affinity: str = "inputs", perplexity: float = 30.0, n_eigenvectors: int = 20,
                 mu: float = 1.0, n_components: int = 2, max_iter: int = 500, gtol: float = 1e-8,
                 eigen_solver: str = "auto", random_state: int = 0):
        self.affinity = affinity
        self.perplexity = perplexity
        self.n_eigenvectors = n_eigenvectors
        self.mu = mu
        self.n_components = n_components
        self.max_iter = max_iter
        self.gtol = gtol
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "MMA":
        self._validate_params()
        X = np.asarray(inputs.X, dtype=np.float64)
        l = X.shape[0]
        K, n = self.n_eigenvectors, self.n_components  # n + 1 ≤ K < l: _option_rules
        if self.affinity == "inputs":
            W = sp.csr_matrix(inputs.W)
        else:
            W = gaussian_perplexity(X, self.perplexity, random_state=self.random_state)
        y = np.asarray(inputs.labels).ravel()
        if y.shape[0] != l:
            raise UserError(f"labels has {y.shape[0]} entries but X has {l} samples")
        L1 = laplacian(W)
        lam1, Phi = smallest_eigenvectors(L1, K, eigen_solver=self.eigen_solver, random_state=self.random_state)
        # L₂Φ for L₂ = 𝐋(YYᵀ)/s without forming YYᵀ: (YYᵀ − I)Φ has row i = Σ_{j≠i, y_j = y_i} φ_j.
        _, inv, counts = np.unique(y, return_inverse=True, return_counts=True)
        s = float(np.sum(counts * (counts - 1)))
        if s <= 0:
            raise UserError("MMA needs at least one class with two or more samples")
        class_sums = np.zeros((counts.size, K))
        np.add.at(class_sums, inv, Phi)
        L2Phi = ((counts[inv] - 1.0)[:, None] * Phi - (class_sums[inv] - Phi)) / s
        B1 = Phi.T @ (L1 @ Phi)
        B1 = 0.5 * (B1 + B1.T)
        B2 = Phi.T @ L2Phi
        B2 = 0.5 * (B2 + B2.T)
        mu = float(self.mu)
        res = riemannian_gradient_descent(lambda A: mma_objective(A, B1, B2, mu), np.eye(K), retract=retract_qr,
                                          project=project_tangent, max_iter=int(self.max_iter), gtol=self.gtol)
        A = res.x
        Phi_hat = Phi @ A
        quotient = np.diag(A.T @ (B1 + mu * B2) @ A)
        order = np.argsort(quotient, kind="stable")
        const = np.abs(Phi_hat.sum(axis=0)) / np.sqrt(l)  # |cos| with the constant vector (unit columns)
        trivial = int(np.argmax(const))
        keep = [j for j in order if j != trivial][:n]
        Z = Phi_hat[:, keep]
        signs = np.sign(Z[np.argmax(np.abs(Z), axis=0), np.arange(n)])
        signs[signs == 0] = 1.0
        self.rotation_ = A
        self.objective_ = np.asarray(res.history)
        self.eigenvalues_ = lam1
        self.embedding_ = np.ascontiguousarray(Z * signs)
        return self
