"""Exact (O(l²)) SNE and t-SNE, written by hand (spec §8).

* :class:`SNE` -- asymmetric stochastic neighbour embedding (Hinton & Roweis 2002), the "SNE" column of COVA
  Tables 1, 3 and 4. Not available in scikit-learn; openTSNE only approximates it with a large ``dof``.
* :class:`ExactTSNE` -- t-SNE (van der Maaten & Hinton 2008) with the exact gradient, used to cross-check openTSNE
  and for small problems.

Both minimise KL divergences with the gradient descent of van der Maaten's reference implementation (momentum
0.5 → 0.8, delta-bar-delta gains with floor 0.01, re-centring after every step) from a seeded random start
N(0, 10⁻⁴ I) (variance 10⁻⁴, i.e. standard deviation 10⁻², as in the 2008 paper and in
:func:`cova.cohorts.prototypes.tsne_prototypes`).

Every l×l quantity is dense, so both estimators refuse more than ``max_samples`` samples (default 5,000: ≈ 200 MB
per l×l float64 array, a few of which are alive at once). The per-iteration kernels are fused, serial numba loops
over rows (deterministic).

The public functions :func:`sne_kl_and_gradient` and :func:`tsne_kl_and_gradient` (also reachable as
``SNE.kl_and_gradient`` / ``ExactTSNE.kl_and_gradient``) return the objective and its exact gradient; the tests
check them against central finite differences.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.decomposition import PCA as _SkPCA

from ..affinity.perplexity import conditional_probabilities
from ..affinity.weights import gaussian_perplexity
from ..inputs import Inputs
from .base import Embedder, check_size

__all__ = [
    "SNE",
    "ExactTSNE",
    "sne_kl_and_gradient",
    "tsne_kl_and_gradient",
    "conditional_affinities",
    "dense_sq_distances",
    "pca_reduce",
]


# ----------------------------------------------------------------------------------------------------------------
# shared helpers
# ----------------------------------------------------------------------------------------------------------------
#: The pointer the exact SNE / t-SNE size guard gives (:func:`cova.methods.base.check_size`).
TSNE_ALTERNATIVE = ", use the Barnes–Hut/FFT t-SNE (method 'tsne')"


def pca_reduce(X: np.ndarray, n_pca: int | None) -> np.ndarray:
    """PCA of X to ``n_pca`` dimensions (exact SVD, deterministic), the first step of COVA footnote 1 / [20].

    Skipped (X returned as float64) when ``n_pca`` is None or d ≤ n_pca. ``n_pca`` is also capped at l.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
    if n_pca is None or X.shape[1] <= int(n_pca):
        return X
    n = int(n_pca)
    if n < 1:
        raise ValueError(f"n_pca must be a positive integer or None, got {n_pca!r}")
    n = min(n, X.shape[0])
    return np.ascontiguousarray(_SkPCA(n_components=n, svd_solver="full").fit_transform(X), dtype=np.float64)


def dense_sq_distances(X: np.ndarray) -> np.ndarray:
    """All squared Euclidean distances (l×l, zero diagonal) via ‖a‖² + ‖b‖² − 2a·b on centred data, clipped at 0.

    The expansion's rounding error (≈ d·ε·max‖x_i − x̄‖²) is irrelevant to perplexity calibration; the kNN path of
    :func:`cova.affinity.gaussian_perplexity` uses direct differences instead.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    Xc = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    D = Xc @ Xc.T
    D *= -2.0
    D += sq[:, None]
    D += sq[None, :]
    np.maximum(D, 0.0, out=D)
    np.fill_diagonal(D, 0.0)
    return D


def _offdiag(D: np.ndarray) -> np.ndarray:
    """(l, l) → (l, l−1): drop the diagonal of every row."""
    l = D.shape[0]
    return D[~np.eye(l, dtype=bool)].reshape(l, l - 1)


def _fill_offdiag(V: np.ndarray) -> np.ndarray:
    """(l, l−1) → (l, l) with zero diagonal: the inverse of :func:`_offdiag`."""
    l = V.shape[0]
    out = np.zeros((l, l), dtype=np.float64)
    out[~np.eye(l, dtype=bool)] = V.ravel()
    return out


def conditional_affinities(X: np.ndarray, perplexity: float = 30.0, neighbors: str = "all", *,
                           random_state: int = 0) -> np.ndarray:
    """Dense conditional P (row i = p_{·|i}, zero diagonal, rows sum to 1) of SNE (Hinton & Roweis 2002, Eq. 1).

    p_{j|i} = exp(−β_i‖x_i − x_j‖²) / Σ_{m≠i} exp(−β_i‖x_i − x_m‖²), β_i calibrated so that the row entropy is
    ln(perplexity) (:func:`cova.affinity.conditional_probabilities`).

    neighbors : ``"all"`` -- the candidate set is every other sample (the full distance matrix, as in the
        reference implementations of SNE/t-SNE); ``"knn"`` -- the ⌊3·perplexity⌋ nearest neighbours (exact
        search), the BH-SNE/openTSNE convention, zero elsewhere.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    l = X.shape[0]
    if neighbors == "all":
        if not 0 < perplexity < l - 1:
            raise ValueError(f"need 0 < perplexity < l − 1 = {l - 1}, got {perplexity}")
        return _fill_offdiag(conditional_probabilities(_offdiag(dense_sq_distances(X)), perplexity))
    if neighbors == "knn":
        from ..affinity.knn import nearest_neighbors, pair_sq_distances

        k = min(l - 1, int(3 * perplexity))
        if not 0 < perplexity < k:
            raise ValueError(f"need 0 < perplexity < n_neighbors = {k}, got {perplexity}")
        ind, _ = nearest_neighbors(X, k, method="exact", random_state=random_state)
        d2 = pair_sq_distances(X, np.broadcast_to(np.arange(l)[:, None], ind.shape), ind)
        Pc = conditional_probabilities(d2, perplexity)
        P = np.zeros((l, l), dtype=np.float64)
        np.put_along_axis(P, ind, Pc, axis=1)
        return P
    raise ValueError(f"neighbors must be one of ['all', 'knn'], got {neighbors!r}")


def _dense(P: Any, l: int, name: str) -> np.ndarray:
    P = P.toarray() if sp.issparse(P) else np.asarray(P)
    P = np.ascontiguousarray(P, dtype=np.float64)
    if P.shape != (l, l):
        raise ValueError(f"{name} must be {l}×{l} to match Z, got shape {P.shape}")
    return P


# ----------------------------------------------------------------------------------------------------------------
# numba kernels (compiled below): one pass over each row computes the output similarities, the KL term and P − Q
# ----------------------------------------------------------------------------------------------------------------
def _sne_rows(Z: np.ndarray, P: np.ndarray, M: np.ndarray, with_cost: bool) -> np.ndarray:  # pragma: no cover
    """For every row i: M[i] = P[i] − Q[i] with q_{j|i} = softmax_j(−‖z_i − z_j‖²) (j ≠ i); returns the per-row
    KL terms Σ_j p_{j|i} ln(p_{j|i}/q_{j|i}) (0·ln 0 = 0), computed with log-sum-exp (no underflow of ln q), or
    zeros when ``with_cost`` is False (the optimiser needs only the gradient; the logarithms cost half the time)."""
    l, k = Z.shape
    kl = np.zeros(l)
    d = np.empty(l)  # row buffers, reused
    e = np.empty(l)
    for i in range(l):
        dmin = np.inf
        for j in range(l):
            s = 0.0
            for t in range(k):
                diff = Z[i, t] - Z[j, t]
                s += diff * diff
            d[j] = s
            if j != i and s < dmin:
                dmin = s
        total = 0.0
        for j in range(l):
            if j != i:
                e[j] = math.exp(-(d[j] - dmin))
                total += e[j]
        log_total = math.log(total)  # total ≥ 1: the nearest j contributes exp(0)
        acc = 0.0
        for j in range(l):
            if j == i:
                M[i, j] = 0.0
                continue
            p = P[i, j]
            M[i, j] = p - e[j] / total
            if with_cost and p > 0.0:
                acc += p * (math.log(p) + (d[j] - dmin) + log_total)  # ln q_{j|i} = −(d − dmin) − ln total
        kl[i] = acc
    return kl


def _tsne_row_sums(Z: np.ndarray) -> np.ndarray:  # pragma: no cover - jit
    """Row sums Σ_{j≠i} q̃_ij of q̃_ij = 1/(1 + ‖z_i − z_j‖²) (nothing l×l is stored)."""
    l, k = Z.shape
    rows = np.zeros(l)
    for i in range(l):
        acc = 0.0
        for j in range(l):
            if j != i:
                s = 0.0
                for t in range(k):
                    diff = Z[i, t] - Z[j, t]
                    s += diff * diff
                acc += 1.0 / (1.0 + s)
        rows[i] = acc
    return rows


def _tsne_grad_rows(Z: np.ndarray, P: np.ndarray, total: float, with_cost: bool,
                    grad: np.ndarray) -> np.ndarray:  # pragma: no cover - jit
    """grad[i] = 4 Σ_j (p_ij − q̃_ij/total) q̃_ij (z_i − z_j); returns the per-row KL terms Σ_j p_ij ln(p_ij/q_ij)
    (zeros if not ``with_cost``). q̃ is recomputed rather than stored, so memory is O(l·k) besides P."""
    l, k = Z.shape
    kl = np.zeros(l)
    log_total = math.log(total)
    g = np.empty(k)
    for i in range(l):
        acc = 0.0
        g[:] = 0.0
        for j in range(l):
            if j == i:
                continue
            s = 0.0
            for t in range(k):
                diff = Z[i, t] - Z[j, t]
                s += diff * diff
            qt = 1.0 / (1.0 + s)
            p = P[i, j]
            m = (p - qt / total) * qt
            for t in range(k):
                g[t] += m * (Z[i, t] - Z[j, t])
            if with_cost and p > 0.0:
                acc += p * (math.log(p) + math.log1p(s) + log_total)  # −ln q_ij = ln(1 + d²) + ln total
        for t in range(k):
            grad[i, t] = 4.0 * g[t]
        kl[i] = acc
    return kl


# The kernels are compiled serial. Rows are independent and a prange version would give the same numbers, but on
# this project's small shared machines numba's parallel kernels were measured 2–7× *slower* than serial ones
# whenever the cores were oversubscribed (and a serial and a parallel compilation of one function cannot share
# numba's on-disk cache). Serial cost: ≈ 10–30 ns per pair and iteration.
_sne_rows_jit = njit(cache=True)(_sne_rows)
_tsne_row_sums_jit = njit(cache=True)(_tsne_row_sums)
_tsne_grad_rows_jit = njit(cache=True)(_tsne_grad_rows)


def _laplacian_times(M: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Σ_j (M_ij + M_ji)(z_i − z_j) for every i, i.e. 𝐋(M + Mᵀ) Z, without forming M + Mᵀ.

    Two BLAS passes over M: M·[Z 1] gives MZ and the row sums, [Z 1]ᵀ·M gives (MᵀZ)ᵀ and the column sums."""
    l, k = Z.shape
    Z1 = np.empty((l, k + 1), dtype=np.float64)
    Z1[:, :k] = Z
    Z1[:, k] = 1.0
    right = M @ Z1  # (l, k+1): [MZ, M1]
    left = np.ascontiguousarray(Z1.T) @ M  # (k+1, l): [(MᵀZ)ᵀ; 1ᵀM]
    deg = right[:, k] + left[k]
    return deg[:, None] * Z - right[:, :k] - left[:k].T


def sne_kl_and_gradient(Z: np.ndarray, P: Any, *, with_cost: bool = True) -> tuple[float, np.ndarray]:
    """SNE cost C = Σ_i KL(P_i ‖ Q_i) = Σ_i Σ_j p_{j|i} ln(p_{j|i}/q_{j|i}) and its gradient (Hinton & Roweis 2002).

    q_{j|i} = exp(−‖z_i − z_j‖²) / Σ_{m≠i} exp(−‖z_i − z_m‖²) (Gaussian output kernel of fixed width, Eq. 2);
    ∂C/∂z_i = 2 Σ_j (p_{j|i} − q_{j|i} + p_{i|j} − q_{i|j})(z_i − z_j) (Eq. 5; spec §8).

    Parameters
    ----------
    Z : (l, k) embedding.
    P : (l, l) conditional input probabilities (dense or sparse), row i = p_{·|i}, zero diagonal. Rows should sum
        to 1 for C to be a sum of KL divergences; the formula is used as is otherwise (e.g. exaggerated P).

    with_cost : if False, C is returned as 0.0 (skips l² logarithms; used inside the optimiser).

    Returns
    -------
    (C, gradient (l, k)).
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    l = Z.shape[0]
    P = _dense(P, l, "P")
    M = np.empty((l, l), dtype=np.float64)
    kl = _sne_rows_jit(Z, P, M, bool(with_cost))
    return float(kl.sum()), 2.0 * _laplacian_times(M, Z)


def tsne_kl_and_gradient(Z: np.ndarray, P: Any, *, with_cost: bool = True) -> tuple[float, np.ndarray]:
    """t-SNE cost C = KL(P ‖ Q) = Σ_{i≠j} p_ij ln(p_ij/q_ij) and its exact gradient (van der Maaten & Hinton 2008).

    q_ij = q̃_ij / Σ_{m≠n} q̃_mn with q̃_ij = (1 + ‖z_i − z_j‖²)⁻¹ (Eq. 4); ∂C/∂z_i = 4 Σ_j (p_ij − q_ij) q̃_ij (z_i − z_j)
    (Eq. 5). ``P`` is the joint (l, l) matrix (dense or sparse, symmetric, zero diagonal, unit sum); with an
    exaggerated P the same formulas are applied (only the gradient is then meaningful).
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    l = Z.shape[0]
    P = _dense(P, l, "P")
    total = float(_tsne_row_sums_jit(Z).sum())
    grad = np.empty_like(Z)
    kl = _tsne_grad_rows_jit(Z, P, total, bool(with_cost), grad)
    return float(kl.sum()), grad


# ----------------------------------------------------------------------------------------------------------------
# the optimiser (van der Maaten's tsne.m / the 2008 paper)
# ----------------------------------------------------------------------------------------------------------------
def _gradient_descent(objective: Any, P: np.ndarray, Z0: np.ndarray, *, n_iter: int, learning_rate: float,
                      early_exaggeration: float, early_exaggeration_iter: int, momentum: float,
                      final_momentum: float, momentum_switch_iter: int, min_gain: float) -> tuple[np.ndarray, float]:
    """Gradient descent with momentum and delta-bar-delta gains (Jacobs 1988), as in t-SNE's reference code:

    gains ← gains + 0.2 where sign(grad) ≠ sign(update), × 0.8 elsewhere, floored at ``min_gain``;
    update ← μ·update − η·gains∘grad; Z ← Z + update; Z ← Z − mean(Z).
    μ = ``momentum`` before iteration ``momentum_switch_iter``, ``final_momentum`` after; P is multiplied by
    ``early_exaggeration`` for the first ``early_exaggeration_iter`` iterations. Returns (Z, final cost on P).
    """
    Z = np.array(Z0, dtype=np.float64, copy=True)
    update = np.zeros_like(Z)
    gains = np.ones_like(Z)
    P_ex = P * early_exaggeration if early_exaggeration != 1.0 and early_exaggeration_iter > 0 else P
    for it in range(int(n_iter)):
        _, grad = objective(Z, P_ex if it < early_exaggeration_iter else P, with_cost=False)
        mu = momentum if it < momentum_switch_iter else final_momentum
        same = (grad > 0) == (update > 0)
        gains = np.where(same, gains * 0.8, gains + 0.2)
        np.maximum(gains, min_gain, out=gains)
        update = mu * update - learning_rate * gains * grad
        Z += update
        Z -= Z.mean(axis=0)
    cost, _ = objective(Z, P)
    return Z, cost


def _check_common(est: Any) -> None:
    for name in ("n_iter", "n_components"):
        v = getattr(est, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    for name in ("early_exaggeration_iter", "momentum_switch_iter"):
        v = getattr(est, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    if not (np.isfinite(est.perplexity) and est.perplexity > 0):
        raise ValueError(f"perplexity must be > 0, got {est.perplexity!r}")
    if not (np.isfinite(est.early_exaggeration) and est.early_exaggeration > 0):
        raise ValueError(f"early_exaggeration must be > 0, got {est.early_exaggeration!r}")
    if not (0 <= est.momentum < 1 and 0 <= est.final_momentum < 1):
        raise ValueError("momentum and final_momentum must be in [0, 1)")
    if not (est.min_gain > 0):
        raise ValueError(f"min_gain must be > 0, got {est.min_gain!r}")
    if est.neighbors not in ("all", "knn"):
        raise ValueError(f"neighbors must be one of ['all', 'knn'], got {est.neighbors!r}")
    lr = est.learning_rate
    if isinstance(lr, str):
        if lr != "auto":
            raise ValueError(f"learning_rate must be 'auto' or a positive float, got {lr!r}")
    elif not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"learning_rate must be 'auto' or a positive float, got {lr!r}")


def _init(l: int, n_components: int, random_state: int) -> np.ndarray:
    """Seeded random start N(0, 10⁻⁴ I) (standard deviation 10⁻², van der Maaten & Hinton 2008, Sec. 3.4)."""
    return np.random.default_rng(int(random_state)).normal(0.0, 1e-2, size=(l, int(n_components)))


# ----------------------------------------------------------------------------------------------------------------
# estimators
# ----------------------------------------------------------------------------------------------------------------
class SNE(Embedder):
    """Asymmetric SNE (Hinton & Roweis 2002), exact O(l²) (COVA Tables 1, 3, 4; spec §8).

    Input: p_{j|i} perplexity-calibrated Gaussian conditionals of the PCA-reduced data (COVA footnote 1: PCA to 30
    dimensions, perplexity 30). Output kernel: q_{j|i} ∝ exp(−‖z_i − z_j‖²). Cost Σ_i KL(P_i‖Q_i), gradient
    2Σ_j(p_{j|i} − q_{j|i} + p_{i|j} − q_{i|j})(z_i − z_j) (:func:`sne_kl_and_gradient`).

    Parameters
    ----------
    perplexity : 30 (footnote 1; Table 3's "effective neighbour number 30").
    n_pca : PCA dimension applied first (30, footnote 1); ``None`` or d ≤ n_pca skips it.
    neighbors : ``"all"`` (default; calibrate on the full distance matrix, as the reference code) or ``"knn"``
        (on the ⌊3·perplexity⌋ nearest neighbours).
    n_components : 2.
    n_iter : 1000 iterations of gradient descent (spec §8, drtoolbox-style).
    learning_rate : η = 0.1 [ours] (``"auto"`` is accepted and means 0.1). The SNE gradient of one point is O(1)
        (rows of P sum to 1), unlike t-SNE's O(1/l), so t-SNE's rates (≈ l/48) do not transfer. On 1,000 digits
        (PCA-30, perplexity 30), η = 0.05, 0.1 and 0.2 reached the same final cost; η = 1 diverged at l = 1,797
        (the attraction of "hub" points grows with their column sum Σ_j p_{i|j}). drtoolbox's ``sne.m`` uses
        η = 0.05 without gains.
    momentum, final_momentum, momentum_switch_iter : 0.5 → 0.8 at iteration 250 (spec §8).
    early_exaggeration, early_exaggeration_iter : P is multiplied by 1.0 (i.e. none, as drtoolbox's ``sne.m``)
        for the first 100 iterations; set e.g. 4.0 to lie about P as t-SNE does.
    min_gain : 0.01, floor of the delta-bar-delta gains.
    max_samples : 5,000; more samples raise ``ValueError`` (dense l×l arrays).
    random_state : seed of the N(0, 10⁻⁴ I) start (and of the exact kNN, which does not use it).

    Attributes
    ----------
    embedding_ : (l, n_components). kl_divergence_ : final Σ_i KL(P_i‖Q_i). P_ : not stored (memory).
    """

    kl_and_gradient = staticmethod(sne_kl_and_gradient)

    def __init__(self, perplexity: float = 30.0, n_pca: int | None = 30, neighbors: str = "all",
                 n_components: int = 2, n_iter: int = 1000, learning_rate: str | float = 0.1,
                 momentum: float = 0.5, final_momentum: float = 0.8, momentum_switch_iter: int = 250,
                 early_exaggeration: float = 1.0, early_exaggeration_iter: int = 100, min_gain: float = 0.01,
                 max_samples: int | None = 5000, random_state: int = 0):
        self.perplexity = perplexity
        self.n_pca = n_pca
        self.neighbors = neighbors
        self.n_components = n_components
        self.n_iter = n_iter
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.final_momentum = final_momentum
        self.momentum_switch_iter = momentum_switch_iter
        self.early_exaggeration = early_exaggeration
        self.early_exaggeration_iter = early_exaggeration_iter
        self.min_gain = min_gain
        self.max_samples = max_samples
        self.random_state = random_state

    def _affinities(self, inputs: Inputs, Xr: np.ndarray) -> np.ndarray:
        """The dense conditional P (overridden by the supervised variant)."""
        return conditional_affinities(Xr, self.perplexity, self.neighbors, random_state=self.random_state)

    def _learning_rate(self, l: int) -> float:
        return 0.1 if self.learning_rate == "auto" else float(self.learning_rate)

    def fit(self, inputs: Inputs) -> "SNE":
        _check_common(self)
        l = inputs.X.shape[0]
        check_size(l, self.max_samples, type(self).__name__, alternative=TSNE_ALTERNATIVE)
        Xr = pca_reduce(inputs.X, self.n_pca)
        P = self._affinities(inputs, Xr)
        Z, cost = _gradient_descent(
            sne_kl_and_gradient, P, _init(l, self.n_components, self.random_state), n_iter=self.n_iter,
            learning_rate=self._learning_rate(l), early_exaggeration=float(self.early_exaggeration),
            early_exaggeration_iter=int(self.early_exaggeration_iter), momentum=self.momentum,
            final_momentum=self.final_momentum, momentum_switch_iter=int(self.momentum_switch_iter),
            min_gain=self.min_gain)
        self.embedding_ = np.ascontiguousarray(Z)
        self.kl_divergence_ = cost
        return self


class ExactTSNE(Embedder):
    """t-SNE (van der Maaten & Hinton 2008) with the exact O(l²) gradient (spec §8).

    Joint P = (P_cond + P_condᵀ)/(2l) from perplexity-calibrated conditionals of the PCA-reduced data (footnote 1);
    Student-t output kernel; gradient 4Σ_j(p_ij − q_ij)q̃_ij(z_i − z_j) (:func:`tsne_kl_and_gradient`).

    Parameters
    ----------
    perplexity : 30. n_pca : 30 (``None`` skips). neighbors : ``"all"`` (full distance matrix) or ``"knn"``
        (⌊3·perplexity⌋ neighbours, i.e. :func:`cova.affinity.gaussian_perplexity`).
    n_components : 2. n_iter : 1000 (total, including the exaggeration phase).
    learning_rate : ``"auto"`` = max(l / early_exaggeration / 4, 50), scikit-learn's rule for this gradient
        (which includes the factor 4); openTSNE's rate for its 4×-smaller gradient is 4× this.
    early_exaggeration, early_exaggeration_iter : 12 for the first 250 iterations (scikit-learn / openTSNE).
    momentum, final_momentum, momentum_switch_iter : 0.5 → 0.8 at iteration 250.
    min_gain : 0.01. max_samples : 5,000 (``ValueError`` above). random_state : seed of the N(0, 10⁻⁴ I) start.
    """

    kl_and_gradient = staticmethod(tsne_kl_and_gradient)

    def __init__(self, perplexity: float = 30.0, n_pca: int | None = 30, neighbors: str = "all",
                 n_components: int = 2, n_iter: int = 1000, learning_rate: str | float = "auto",
                 momentum: float = 0.5, final_momentum: float = 0.8, momentum_switch_iter: int = 250,
                 early_exaggeration: float = 12.0, early_exaggeration_iter: int = 250, min_gain: float = 0.01,
                 max_samples: int | None = 5000, random_state: int = 0):
        self.perplexity = perplexity
        self.n_pca = n_pca
        self.neighbors = neighbors
        self.n_components = n_components
        self.n_iter = n_iter
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.final_momentum = final_momentum
        self.momentum_switch_iter = momentum_switch_iter
        self.early_exaggeration = early_exaggeration
        self.early_exaggeration_iter = early_exaggeration_iter
        self.min_gain = min_gain
        self.max_samples = max_samples
        self.random_state = random_state

    def _affinities(self, inputs: Inputs, Xr: np.ndarray) -> np.ndarray:
        """Dense joint P, symmetric, unit sum."""
        l = Xr.shape[0]
        if self.neighbors == "knn":
            return gaussian_perplexity(Xr, self.perplexity, method="exact", random_state=self.random_state).toarray()
        Pc = conditional_affinities(Xr, self.perplexity, "all")
        return (Pc + Pc.T) / (2.0 * l)

    def _learning_rate(self, l: int) -> float:
        if self.learning_rate == "auto":
            return max(l / float(self.early_exaggeration) / 4.0, 50.0)
        return float(self.learning_rate)

    def fit(self, inputs: Inputs) -> "ExactTSNE":
        _check_common(self)
        l = inputs.X.shape[0]
        check_size(l, self.max_samples, type(self).__name__, alternative=TSNE_ALTERNATIVE)
        Xr = pca_reduce(inputs.X, self.n_pca)
        P = self._affinities(inputs, Xr)
        Z, cost = _gradient_descent(
            tsne_kl_and_gradient, P, _init(l, self.n_components, self.random_state), n_iter=self.n_iter,
            learning_rate=self._learning_rate(l), early_exaggeration=float(self.early_exaggeration),
            early_exaggeration_iter=int(self.early_exaggeration_iter), momentum=self.momentum,
            final_momentum=self.final_momentum, momentum_switch_iter=int(self.momentum_switch_iter),
            min_gain=self.min_gain)
        self.embedding_ = np.ascontiguousarray(Z)
        self.kl_divergence_ = cost
        return self
