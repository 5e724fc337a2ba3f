"""Locally linear coordination (LLC; Y. W. Teh & S. Roweis, "Automatic Alignment of Local Representations",
Advances in Neural Information Processing Systems 15, 2003, pp. 865-872), a baseline of COVA's existing-method
figures.

LLC fits K local linear models of dimension d to X and then aligns their local coordinates into one global
coordinate system by an eigenproblem whose size is K(d + 1), not the number of samples N. The steps below are cited
by content, in the paper's notation (y_n, r_nk, z_nk, L_k, U, L), rather than by equation number.

**Step 1: the local models** (:func:`fit_mfa`). A mixture of factor analysers trained by EM (Ghahramani & Hinton
1996, "The EM algorithm for mixtures of factor analyzers", the local model the LLC paper uses):

    P(k) = π_k,   z ~ N(0, I_d),   x | k, z ~ N(μ_k + Λ_k z, Ψ),   Ψ diagonal and shared by the K analysers,

so x | k ~ N(μ_k, Λ_kΛ_kᵀ + Ψ). E-step: the responsibility r_nk = P(k | x_n) and the local coordinate, the
posterior mean z_nk = E[z | x_n, k] = M_k⁻¹ Λ_kᵀ Ψ⁻¹ (x_n − μ_k) with M_k = I + Λ_kᵀ Ψ⁻¹ Λ_k (posterior
covariance M_k⁻¹). Determinant and inverse of the D×D covariance go through M_k (matrix determinant lemma,
Woodbury), so a step costs O(N·D·K·d) time and O(N·K·d + D·K·d) memory beyond X. M-step (Ghahramani & Hinton's
updates with z̃ = [z; 1], Λ̃_k = [Λ_k, μ_k]): Λ̃_k = (Σ_n r_nk x_n E[z̃]ᵀ)(Σ_n r_nk E[z̃z̃ᵀ])⁻¹, Ψ = diag of the
expected residual second moment, π_k = Σ_n r_nk / N.

**Step 2: the alignment** (:func:`align`). Each analyser maps its local coordinates linearly into the output
space, and the global coordinate of x_n is the responsibility-weighted mixture

    y_n = Σ_k r_nk (L_k z_nk + l_k⁰) = Σ_k Σ_{i=0..d} r_nk z^i_nk l^i_k = Σ_j u_nj l_j     (z^0_nk = 1),

i.e. Y = U L with U the N × K(d+1) matrix of the u_nj = r_nk z^i_nk (j = (k, i)) and L the unknown stacked
[l_k⁰, L_k]. The cost is LLE's embedding cost with the reconstruction weights W of X (Roweis & Saul 2000; each row
sums to one, from the k nearest neighbours of x_n):

    Φ(Y) = Σ_n ‖y_n − Σ_m w_nm y_m‖² = tr(Yᵀ (I − W)ᵀ (I − W) Y) = tr(Lᵀ A L),   A = Uᵀ (I − W)ᵀ (I − W) U,

minimised subject to zero mean and unit covariance, (1/N) YᵀY = Lᵀ B L = I with B = UᵀU / N. The minimisers are
the generalised eigenvectors A v = λ B v of the smallest eigenvalues, and Φ equals the sum of those eigenvalues.
Because the rows of W and the responsibilities of each point sum to one, the constant y_n = 1 (every l_k⁰ = 1, the
rest 0) is an exact eigenvector with λ = 0; every other eigenvector is B-orthogonal to it, which is the zero-mean
constraint. It is discarded explicitly: the problem is solved on the B-orthogonal complement of the constant.

Numerics [ours]. B is factorised through a thin SVD of the column-normalised U: directions of U whose singular
value is below ``1e-10`` of the largest (analysers that own almost no point, whose columns r_nk z_nk vanish) are
dropped, so the eigenproblem is solved on an orthonormal basis of U's range; then Y = U L satisfies the
generalised eigen-equation and the constraints to rounding (``tests/test_llc.py``). The sign of each output axis
is fixed by :func:`cova.affinity.graphs.fix_signs`.

Choices the paper leaves open are listed in the :class:`LLC` docstring. Memory is O(N·k + N·K·d) besides a few
copies of X (the weights are a sparse kNN matrix, U is N × K(d+1)); nothing is N × N. The one larger transient is
the N × k × D array of neighbour differences inside :func:`cova.affinity.reconstruction.reconstruction_weights` (0.37 GB on
Cora's 2,708 × 1,433 words with k = 12).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.cluster import KMeans

from ...affinity.graphs import fix_signs
from ...affinity.knn import nearest_neighbors
from ...affinity.reconstruction import reconstruction_weights
from ...checks import check_matrix
from ...constraints import NON_NEGATIVE, POSITIVE, POSITIVE_INT, SEED, integer
from ...errors import UserError
from ...inputs import Inputs
from ...progress import Progress
from ..base import Embedder, fits_samples, neighbours_below_samples

log = logging.getLogger("cova")

__all__ = ["LLC", "MixtureOfFactorAnalysers", "fit_mfa", "mfa_posteriors", "coordination_matrix", "align"]

#: Floor of the noise variances Ψ, relative to the mean feature variance of X (a constant feature would otherwise
#: drive its Ψ to zero and the likelihood to infinity).
NOISE_FLOOR = 1e-6
#: Directions of the column-normalised U with singular values below this fraction of the largest are dropped.
RANK_RTOL = 1e-10
#: An analyser whose total responsibility Σ_n r_nk falls below this keeps its parameters in the M-step.
_DEAD = 1e-8


@dataclass
class MixtureOfFactorAnalysers:
    """A fitted mixture of factor analysers: weights π (K,), means μ (K, D), loadings Λ (K, D, d), the shared
    diagonal noise variances Ψ (D,), and the EM record (log-likelihood before every M-step and after the last,
    the number of M-steps, convergence)."""

    weights: np.ndarray
    means: np.ndarray
    loadings: np.ndarray
    noise: np.ndarray
    log_likelihoods: list[float] = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False


def _e_step(X: np.ndarray, weights: np.ndarray, means: np.ndarray, loadings: np.ndarray,
            noise: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Responsibilities r (N, K), posterior means z (N, K, d), posterior covariances M_k⁻¹ (K, d, d) and the
    per-sample log-likelihoods (N,). X is centred on Σ_k π_k μ_k first (the model is translation-equivariant; this
    keeps the expanded quadratic forms accurate)."""
    N, D = X.shape
    K, _, d = loadings.shape
    centre = weights @ means
    Xc = X - centre
    mu = means - centre
    psi_inv = 1.0 / noise
    PL = loadings * psi_inv[None, :, None]                                  # Ψ⁻¹Λ_k (K, D, d)
    M = np.eye(d)[None] + np.einsum("kDi,kDj->kij", loadings, PL)            # M_k = I + Λ_kᵀΨ⁻¹Λ_k
    M_inv = np.linalg.inv(M)
    logdet = np.sum(np.log(noise)) + np.linalg.slogdet(M)[1]                 # log det(Λ_kΛ_kᵀ + Ψ)
    b = (Xc @ PL.transpose(1, 0, 2).reshape(D, K * d)).reshape(N, K, d)
    b -= np.einsum("kD,kDi->ki", mu, PL)[None]                               # Λ_kᵀΨ⁻¹(x_n − μ_k)
    z = np.einsum("kij,nkj->nki", M_inv, b)
    quad = ((Xc * Xc) @ psi_inv)[:, None] - 2.0 * Xc @ (mu * psi_inv).T + np.sum(mu * mu * psi_inv, axis=1)[None]
    maha = quad - np.einsum("nki,nki->nk", b, z)                             # Woodbury: (x−μ)ᵀC_k⁻¹(x−μ)
    with np.errstate(divide="ignore"):
        log_pi = np.log(weights)
    logp = log_pi[None] - 0.5 * (D * np.log(2.0 * np.pi) + logdet[None] + maha)
    ll = logsumexp(logp, axis=1)
    r = np.exp(logp - ll[:, None])
    return r, z, M_inv, ll


def _initialise(X: np.ndarray, K: int, d: int, floor: float,
                random_state: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """[ours] k-means (scikit-learn, 3 seeded starts) for the means and weights; each cluster's top-d principal
    axes scaled by their standard deviations for the loadings, plus a small seeded random part so that no loading
    starts at zero (a fixed point of the EM updates); Ψ the pooled within-cluster variance."""
    N, D = X.shape
    km = KMeans(n_clusters=K, n_init=3, random_state=random_state).fit(X)
    labels = km.labels_
    means = np.asarray(km.cluster_centers_, dtype=np.float64).copy()
    counts = np.bincount(labels, minlength=K).astype(np.float64)
    rng = np.random.default_rng(random_state)
    scale = np.sqrt(np.mean(np.var(X, axis=0)))
    loadings = 1e-3 * scale * rng.standard_normal((K, D, d))
    resid = np.zeros(D)
    for k in range(K):
        Xk = X[labels == k] - means[k]
        if Xk.shape[0] > 1:
            _, s, Vt = np.linalg.svd(Xk, full_matrices=False)
            q = min(d, Vt.shape[0])
            loadings[k, :, :q] += Vt[:q].T * (s[:q] / np.sqrt(Xk.shape[0]))
        resid += np.sum(Xk * Xk, axis=0)
    noise = np.maximum(resid / N, floor)
    return counts / N, means, loadings, noise  # scikit-learn's k-means leaves no cluster empty


def fit_mfa(X: np.ndarray, n_mixtures: int, n_factors: int, *, max_iter: int = 200, tol: float = 1e-4,
            random_state: int = 0) -> MixtureOfFactorAnalysers:
    """EM for a mixture of ``n_mixtures`` factor analysers with ``n_factors`` factors each and a shared diagonal
    noise Ψ (Ghahramani & Hinton 1996; module docstring). Stops after ``max_iter`` M-steps or when the mean
    log-likelihood per sample rises by less than ``tol``. The log-likelihood never decreases: each M-step is exact,
    and the floor on Ψ (``NOISE_FLOOR`` times the mean feature variance) maximises each Ψ_i's unimodal expected
    complete-data log-likelihood over the allowed range."""
    X = check_matrix(X, "X")
    N, D = X.shape
    K, d = int(n_mixtures), int(n_factors)
    var = float(np.mean(np.var(X, axis=0)))
    if not var > 0.0:
        raise UserError(f"X has no variance (all {N} samples are equal): no local model can be fitted")
    floor = NOISE_FLOOR * var
    offset = X.mean(axis=0)
    X = X - offset  # fitted centred (the M-step's second moments Σ_n r_nk x_n² lose no digits to the mean)
    weights, means, loadings, noise = _initialise(X, K, d, floor, int(random_state))
    x2 = np.sum(X * X, axis=0)
    lls: list[float] = []
    converged = False
    n_iter = 0
    progress = Progress(f"LLC: EM for a mixture of {K} factor analysers", int(max_iter)).start()
    for it in range(int(max_iter) + 1):
        r, z, M_inv, ll = _e_step(X, weights, means, loadings, noise)
        lls.append(float(ll.sum()))
        if it > 0:
            progress.tick(log_likelihood=lls[-1])
        if it > 0 and (lls[-1] - lls[-2]) < tol * N:
            converged = True
            break
        if it == int(max_iter):
            break
        # M-step with z̃ = [z; 1]: S1_k = Σ_n r_nk x_n E[z̃]ᵀ, S2_k = Σ_n r_nk E[z̃z̃ᵀ]
        Nk = r.sum(axis=0)
        zt = np.concatenate([z, np.ones((N, K, 1))], axis=2)                # (N, K, d+1)
        rzt = r[:, :, None] * zt
        S1 = (X.T @ rzt.reshape(N, K * (d + 1))).reshape(D, K, d + 1).transpose(1, 0, 2)
        S2 = np.einsum("nki,nkj->kij", rzt, zt)
        S2[:, :d, :d] += Nk[:, None, None] * M_inv
        live = Nk >= _DEAD
        Lt = np.concatenate([loadings, means[:, :, None]], axis=2)          # Λ̃_k (K, D, d+1)
        Lt[live] = np.linalg.solve(S2[live], S1[live].transpose(0, 2, 1)).transpose(0, 2, 1)
        # Ψ_i = (1/N) Σ_k [Σ_n r_nk x_ni² − 2 (Λ̃_k S1_kᵀ)_ii + (Λ̃_k S2_k Λ̃_kᵀ)_ii]: exact for any Λ̃
        second = x2 - 2.0 * np.einsum("kDi,kDi->D", Lt, S1) + np.einsum("kDi,kij,kDj->D", Lt, S2, Lt)
        noise = np.maximum(second / N, floor)
        loadings, means = Lt[:, :, :d].copy(), Lt[:, :, d].copy()
        weights = Nk / N
        n_iter += 1
    progress.done("converged" if converged else "", log_likelihood=lls[-1])
    return MixtureOfFactorAnalysers(weights, means + offset, loadings, noise, lls, n_iter, converged)


def mfa_posteriors(X: np.ndarray, model: MixtureOfFactorAnalysers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Responsibilities r (N, K), local coordinates z (N, K, d) (posterior means) and per-sample log-likelihoods
    (N,) of X under ``model``."""
    r, z, _, ll = _e_step(check_matrix(X, "X"), model.weights, model.means, model.loadings, model.noise)
    return r, z, ll


def coordination_matrix(r: np.ndarray, z: np.ndarray) -> np.ndarray:
    """U (N, K(d+1)) of y_n = Σ_j u_nj l_j: column k(d+1) + i holds r_nk z^i_nk, with z^0_nk = 1 (the offset
    l_k⁰ first, then the d columns of L_k)."""
    N, K, d = z.shape
    return (r[:, :, None] * np.concatenate([np.ones((N, K, 1)), z], axis=2)).reshape(N, K * (d + 1))


def align(U: np.ndarray, W: sp.spmatrix, n_components: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The LLC alignment (module docstring): Y = U L minimising tr(Yᵀ(I − W)ᵀ(I − W)Y) subject to zero mean and
    (1/N) YᵀY = I. Returns Y (N, n_components), L (K(d+1), n_components) with U L = Y, and the eigenvalues λ of
    A v = λ B v (ascending; the constant solution's λ = 0 excluded), whose sum is the cost of Y.

    Raises ``ValueError`` when U's range has fewer than ``n_components`` non-constant directions, or does not
    contain the constant (the responsibilities of a point must sum to one)."""
    U = np.asarray(U, dtype=np.float64)
    N, m = U.shape
    norms = np.linalg.norm(U, axis=0)
    keep = norms > RANK_RTOL * norms.max()
    P, S, Qt = np.linalg.svd(U[:, keep] / norms[keep], full_matrices=False)
    rank = int(np.sum(S > RANK_RTOL * S[0]))
    P, S, Qt = P[:, :rank], S[:rank], Qt[:rank]
    g = P.sum(axis=0) / np.sqrt(N)                                          # the constant, whitened
    if abs(np.linalg.norm(g) - 1.0) > 1e-6:
        raise UserError("the constant is not in the range of U: every point's responsibilities must sum to one")
    if rank - 1 < int(n_components):
        raise UserError(f"the local models span only {rank - 1} non-constant directions, fewer than "
                         f"n_components = {n_components}; use more mixtures or more factors")
    H = sla.null_space(g[None, :])                                          # B-orthogonal complement of 1
    F = np.sqrt(N) * (P @ H)                                                # zero mean, (1/N) FᵀF = I
    E = F - sp.csr_matrix(W) @ F                                            # (I − W) F
    lam, h = np.linalg.eigh(E.T @ E)
    lam, h = lam[: int(n_components)], h[:, : int(n_components)]
    Y = F @ h
    L = np.zeros((m, int(n_components)))
    L[keep] = np.sqrt(N) * ((Qt.T / S[None, :]) @ (H @ h)) / norms[keep, None]   # U = P S Qᵀ diag(norms)
    return Y, L, np.clip(lam, 0.0, None)


def _local_dimension(options: Mapping[str, Any]) -> tuple[str, int] | None:
    """(the option that sets it, d): the factors per analyser, ``n_factors`` or, when ``None``, ``n_components``."""
    key = "n_components" if options.get("n_factors") is None else "n_factors"
    value = options.get(key)
    return (key, int(value)) if isinstance(value, Integral) and not isinstance(value, bool) else None


def _factors_fit_features(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """The rule of ``n_factors``: an analyser's d factors lie in the data space, d ≤ D (context ``"n_features"``)."""
    local, D = _local_dimension(options), context.get("n_features")
    if local is None or D is None or local[1] <= D.value:
        return None
    unset = " (n_factors unset: as many as n_components)" if local[0] == "n_components" else ""
    return local[0], (f"{D.source}, and each factor analyser has d = {local[1]} factors{unset} in the data space; "
                      f"allowed: at most {D.value}")


def _components_fit_analysers(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """The rule of ``n_components``: at most the K(d + 1) − 1 non-constant directions of K analysers of d factors
    (the alignment's eigenvectors, Teh & Roweis Sec. 3)."""
    local, K, q = _local_dimension(options), options.get("n_mixtures"), options.get("n_components")
    if local is None or not isinstance(K, Integral) or not isinstance(q, Integral):
        return None
    top = int(K) * (local[1] + 1) - 1
    if q <= top:
        return None
    return "n_components", (f"n_mixtures = {K} analysers of d = {local[1]} factors give K(d + 1) − 1 = {top} "
                            f"non-constant directions; allowed: at most {top}")


class LLC(Embedder):
    """Locally linear coordination (Teh & Roweis 2003): a mixture of factor analysers aligned by LLE's cost
    (module docstring).

    Parameters
    ----------
    n_components : output dimension (2).
    n_mixtures : K, the number of factor analysers (20 [ours]: the default of the LLC of van der Maaten's Matlab
        Toolbox for Dimensionality Reduction, the most widely used implementation; the paper gives no general rule).
    n_factors : d, the factors (local dimension) per analyser; ``None`` (default) = n_components, as the toolbox
        does (local and global dimension equal).
    n_neighbors : k of the LLE reconstruction weights (12 [ours]: the toolbox's default).
    max_iter : most EM M-steps (200 [ours]: the toolbox's).
    tol : EM stops when the mean log-likelihood per sample rises by less than this (1e-4).
    reg : regulariser of the reconstruction weights: ``reg`` times the local Gram matrix's trace is added to its
        diagonal (1e-3, scikit-learn's LLE default; the toolbox's LLC uses 1e-5).
    random_state : seed of the k-means initialisation and of the loadings' random start.

    ``fit(inputs)`` reads ``inputs.X``. Attributes: ``embedding_`` (N, n_components; zero mean, unit covariance),
    ``mixture_`` (:class:`MixtureOfFactorAnalysers`), ``responsibilities_`` (N, K), ``local_coordinates_``
    (N, K, d), ``alignment_`` (K(d+1), n_components; U L = embedding_), ``eigenvalues_`` (n_components,),
    ``cost_`` (the LLE cost of the embedding, = Σ eigenvalues_), ``log_likelihoods_`` (EM's record),
    ``n_iter_``, ``converged_``.

    Choices [ours] the paper leaves open: the EM initialisation (k-means plus local PCA, :func:`_initialise`);
    the shared diagonal Ψ (Ghahramani & Hinton's model; it also keeps an analyser that owns few points from
    collapsing, which per-analyser noise would allow); the floor on Ψ; the stopping rule; the rank tolerance of
    the alignment. X is used as given (no PCA first): the paper aligns models fitted to the data themselves.
    """

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "n_mixtures": POSITIVE_INT,
        "n_factors": [integer(1, None), None],
        "n_neighbors": POSITIVE_INT,
        "max_iter": POSITIVE_INT,
        "tol": NON_NEGATIVE,
        "reg": POSITIVE,
        "random_state": SEED,
    }

    _option_rules = (fits_samples("n_mixtures", lambda K, n: K <= n, lambda n: f"at most n = {n}",
                                  "each of the n_mixtures factor analysers starts from a k-means cluster of samples"),
                     neighbours_below_samples("LLE's reconstruction weights need n_neighbors < n (a sample is not "
                                              "its own neighbour)"),
                     _factors_fit_features, _components_fit_analysers)

    def __init__(self, n_components: int = 2, n_mixtures: int = 20, n_factors: int | None = None,
                 n_neighbors: int = 12, max_iter: int = 200, tol: float = 1e-4, reg: float = 1e-3,
                 random_state: int = 0):
        self.n_components = n_components
        self.n_mixtures = n_mixtures
        self.n_factors = n_factors
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.tol = tol
        self.reg = reg
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "LLC":
        self._validate_params()
        X = check_matrix(inputs.X, "X", contiguous=True)
        K, k, q = int(self.n_mixtures), int(self.n_neighbors), int(self.n_components)
        d = q if self.n_factors is None else int(self.n_factors)
        # K ≤ N, k < N, d ≤ D and q ≤ K(d + 1) − 1: _option_rules
        self.mixture_ = fit_mfa(X, K, d, max_iter=int(self.max_iter), tol=float(self.tol),
                                random_state=int(self.random_state))
        log.info("llc: %d factor analysers, EM %d iterations (converged: %s)", K, self.mixture_.n_iter,
                 self.mixture_.converged)
        r, z, _ = mfa_posteriors(X, self.mixture_)
        idx, _ = nearest_neighbors(X, k, random_state=int(self.random_state))
        W = reconstruction_weights(X, idx, float(self.reg))
        Y, L, lam = align(coordination_matrix(r, z), W, q)
        signs = np.sign(Y[np.argmax(np.abs(Y), axis=0), np.arange(q)])
        fix_signs(Y)
        L *= np.where(signs == 0, 1.0, signs)[None, :]
        self.embedding_ = np.ascontiguousarray(Y)
        self.responsibilities_, self.local_coordinates_ = r, z
        self.alignment_, self.eigenvalues_ = L, lam
        self.cost_ = float(lam.sum())
        self.log_likelihoods_ = list(self.mixture_.log_likelihoods)
        self.n_iter_, self.converged_ = self.mixture_.n_iter, self.mixture_.converged
        return self
