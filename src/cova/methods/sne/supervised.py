"""Supervised SNE / t-SNE / NSE by the "linearly supervised distance transformation" of Kim et al. 2015 [23]
(COVA footnote 1, Table 1, Table 4, Fig. 5).

The transform (our reading of [23], checked against COVA Table 1): reduce X by PCA to ``n_pca = 30`` dimensions (skipped if
d ≤ 30), then **multiply the squared distance of every same-class pair by λ** (i.e. shrink distances by √λ)
*before* the perplexity calibration, and build the t-SNE joint P from the shrunken distances:

    d'²_ij = λ·‖x_i − x_j‖²  if y_i = y_j,   ‖x_i − x_j‖²  otherwise;
    p_{j|i} ∝ exp(−β_i d'²_ij) with β_i calibrated to the perplexity;   P = (P_cond + P_condᵀ)/(2l).

λ = 1 is the unsupervised P; 0 < λ < 1 is the paper's range. The ablation ``mode="p_shrink"`` instead applies
COVA Eq. 3 to the unsupervised P (every inter-class p_ij multiplied by λ, then renormalised to unit sum); it
turned out too weak to reproduce Table 1.

Candidate set. The sparse P keeps, for every i, its ``n_neighbors`` (default ⌊3·perplexity⌋) nearest neighbours
**under the shrunken metric d'** -- found by an exact blocked search over the PCA space (rows in blocks of
``block_rows``; each block's b×l squared distances come from one BLAS product, are multiplied by λ on
same-class entries, and the n_neighbors smallest are selected; memory O(b·l), never l×l). This is the same
truncation the unsupervised t-SNE applies to the unshrunken metric, so it contains exactly the pairs that carry
the largest p_{j|i} of the dense supervised P; as λ → 0 it fills up with same-class neighbours automatically.
The selected pairs' squared distances are then recomputed by direct differences
(:func:`cova.affinity.pair_sq_distances`), so for λ = 1 the result is :func:`cova.affinity.gaussian_perplexity`
of the PCA-reduced data (same candidates, same distances, same calibration).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import openTSNE
import scipy.sparse as sp

from ...affinity.dense import conditional_affinities, pca_reduce
from ...affinity.distances import dense_sq_distances
from ...affinity.knn import _check_X, pair_sq_distances
from ...affinity.perplexity import conditional_probabilities, dense_conditional_probabilities
from ...affinity.weights import gaussian_perplexity, supervised_shrink
from ...checks import check_label_vector
from ...constraints import NON_NEGATIVE, POSITIVE, POSITIVE_INT, SEED, StrOptions
from ...errors import UserError
from ...inputs import Inputs
from ...manifolds import TSNE_SCHEDULE
from ..base import Embedder, perplexity_fits_samples
from .nse import SPECTRAL_SOLVERS, nse_embedding
from .sne import EXACT_SNE_CONSTRAINTS, SNE
from .tsne import OPENTSNE_CONSTRAINTS, opentsne_fit

__all__ = [
    "MODES",
    "shrunk_neighbors",
    "supervised_affinities",
    "supervised_conditional_dense",
    "SupervisedSNE",
    "SupervisedTSNE",
    "SupervisedNSE",
]

MODES: tuple[str, ...] = ("distance", "p_shrink")

#: Constraints of the supervision parameters: λ ≥ 0 (> 0 with ``mode="distance"``, checked with the data) and the
#: mode.
SUPERVISION_CONSTRAINTS: dict[str, list] = {"lam": NON_NEGATIVE, "mode": [StrOptions(set(MODES))]}

# Block of the exact search: b rows × l columns of float64 ≈ 2**22 numbers (32 MB).
_BLOCK_ELEMENTS: int = 1 << 22


_check_labels = check_label_vector


def _check_lam(lam: Any, mode: str) -> float:
    if mode not in MODES:
        raise UserError(f"mode must be one of {list(MODES)}, got {mode!r}")
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0 or (mode == "distance" and lam == 0):
        raise UserError(f"lam (λ) must be finite and > 0 (≥ 0 for mode='p_shrink'); the paper uses 0 < λ < 1, "
                         f"λ = 1 is unsupervised; got {lam}")
    return lam


def shrunk_neighbors(X: np.ndarray, labels: np.ndarray, lam: float, n_neighbors: int, *,
                     block_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``n_neighbors`` nearest neighbours of every sample (self excluded) under the shrunken squared distance
    d'²_ij = λ^[y_i = y_j]·‖x_i − x_j‖² (Kim et al. 2015), by a blocked brute-force scan.

    Returns (indices (l, k) int64, d'² (l, k) float64), each row sorted by (d'², index); d'² is recomputed by direct
    differences for the selected pairs. O(l²d) time, O(block_rows·l) memory.
    """
    X = _check_X(X)
    l = X.shape[0]
    y = _check_labels(labels, l)
    k = int(n_neighbors)
    if k != n_neighbors or not 1 <= k < l:
        raise UserError(f"n_neighbors must be an integer in [1, l − 1 = {l - 1}], got {n_neighbors!r}")
    lam = float(lam)
    Xc = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    b = int(block_rows) if block_rows is not None else max(1, _BLOCK_ELEMENTS // l)
    if b < 1:
        raise UserError(f"block_rows must be ≥ 1, got {block_rows!r}")
    ind = np.empty((l, k), dtype=np.int64)
    for r0 in range(0, l, b):  # loop over row blocks, not samples
        r1 = min(r0 + b, l)
        G = Xc[r0:r1] @ Xc.T
        G *= -2.0
        G += sq[r0:r1, None]
        G += sq[None, :]
        np.maximum(G, 0.0, out=G)
        if lam != 1.0:
            G[y[r0:r1, None] == y[None, :]] *= lam
        G[np.arange(r1 - r0), np.arange(r0, r1)] = np.inf  # exclude self
        if k < l - 1:
            part = np.argpartition(G, k - 1, axis=1)[:, :k]
        else:
            part = np.argsort(G, axis=1, kind="stable")[:, :k]
        ind[r0:r1] = part
    rows = np.broadcast_to(np.arange(l, dtype=np.int64)[:, None], ind.shape)
    d2 = pair_sq_distances(X, rows, ind)
    if lam != 1.0:
        d2 = np.where(y[rows] == y[ind], lam * d2, d2)
    order = np.argsort(ind, axis=1, kind="stable")  # sort rows by (d'², index)
    ind = np.take_along_axis(ind, order, axis=1)
    d2 = np.take_along_axis(d2, order, axis=1)
    order = np.argsort(d2, axis=1, kind="stable")
    return np.ascontiguousarray(np.take_along_axis(ind, order, axis=1)), \
        np.ascontiguousarray(np.take_along_axis(d2, order, axis=1))


def supervised_affinities(X: np.ndarray, labels: np.ndarray, lam: float, perplexity: float = 30.0,
                          mode: str = "distance", *, n_pca: int | None = 30, n_neighbors: int | None = None,
                          random_state: int = 0) -> sp.csr_matrix:
    """Supervised t-SNE joint P (sparse CSR, symmetric, zero diagonal, unit sum; COVA footnote 1).

    Parameters
    ----------
    X : (l, d) data; reduced by PCA to ``n_pca`` (30) dimensions first unless d ≤ n_pca or n_pca is None.
    labels : (l,) class labels.
    lam : λ. ``mode="distance"``: same-class squared distances × λ before calibration (λ > 0). ``"p_shrink"``:
        COVA Eq. 3 on the unsupervised P (inter-class p_ij × λ, renormalised; λ ≥ 0).
    perplexity : 30.
    n_neighbors : candidate-set size, default min(l − 1, ⌊3·perplexity⌋) (see the module docstring).
    random_state : seed of the unsupervised kNN search of ``"p_shrink"`` (exact search: unused in practice).
    """
    lam = _check_lam(lam, mode)
    X = _check_X(X)
    l = X.shape[0]
    y = _check_labels(labels, l)
    Xr = pca_reduce(X, n_pca)
    perplexity = float(perplexity)
    k = min(l - 1, int(3 * perplexity)) if n_neighbors is None else int(n_neighbors)
    if not 0 < perplexity < k:
        raise UserError(f"need 0 < perplexity < n_neighbors; got perplexity = {perplexity}, n_neighbors = {k}")
    if mode == "p_shrink":
        P = gaussian_perplexity(Xr, perplexity, n_neighbors=k, method="exact", random_state=random_state)
        return supervised_shrink(P, y, lam)
    ind, d2 = shrunk_neighbors(Xr, y, lam, k)
    Pc = conditional_probabilities(d2, perplexity)
    A = sp.csr_matrix((Pc.ravel(), ind.ravel(), np.arange(0, l * k + 1, k)), shape=(l, l))
    W = ((A + A.T) / (2.0 * l)).tocsr()
    W.sum_duplicates()
    W.eliminate_zeros()
    W.sort_indices()
    return W


def supervised_conditional_dense(X: np.ndarray, labels: np.ndarray, lam: float, perplexity: float = 30.0,
                                 mode: str = "distance", *, neighbors: str = "all") -> np.ndarray:
    """Dense conditional P (row i = p_{·|i}) of supervised SNE on already-reduced data X (O(l²) memory).

    ``neighbors="all"``: calibrate on all other samples (the shrunken full distance matrix); ``"knn"``: on the
    ⌊3·perplexity⌋ nearest under the shrunken metric (:func:`shrunk_neighbors`). ``mode="p_shrink"``: the
    unsupervised conditional P with inter-class p_{j|i} × λ, rows renormalised to 1 (Eq. 3 for conditionals).
    """
    lam = _check_lam(lam, mode)
    X = _check_X(X)
    l = X.shape[0]
    y = _check_labels(labels, l)
    if mode == "p_shrink":
        P = conditional_affinities(X, perplexity, neighbors)
        P[y[:, None] != y[None, :]] *= lam
        s = P.sum(axis=1, keepdims=True)
        if np.any(s <= 0):
            raise UserError("p_shrink with this λ leaves a sample with no affinity (all its neighbours are in "
                             "other classes); use λ > 0")
        return P / s
    if neighbors == "all":
        D = dense_sq_distances(X)
        D[y[:, None] == y[None, :]] *= lam
        return dense_conditional_probabilities(D, perplexity)
    if neighbors == "knn":
        k = min(l - 1, int(3 * perplexity))
        if not 0 < perplexity < k:
            raise UserError(f"need 0 < perplexity < n_neighbors = {k}, got {perplexity}")
        ind, d2 = shrunk_neighbors(X, y, lam, k)
        P = np.zeros((l, l), dtype=np.float64)
        np.put_along_axis(P, ind, conditional_probabilities(d2, perplexity), axis=1)
        return P
    raise UserError(f"neighbors must be one of ['all', 'knn'], got {neighbors!r}")


class SupervisedSNE(SNE):
    """Supervised SNE (COVA Table 1, Table 4): :class:`~cova.methods.sne.SNE` on the conditional P of the shrunken
    distances (module docstring). ``lam`` = λ (default 0.5; λ = 1 is plain SNE), ``mode`` = ``"distance"``
    (default) or ``"p_shrink"`` (ablation); all other parameters and defaults are those of
    :class:`~cova.methods.sne.SNE` (perplexity 30, PCA-30, 1000 iterations, exact O(l²), ``max_samples`` 5,000).
    """

    sklearn_compatible = False  # refused by check_estimator (docs/decisions.md, "Python API on arrays")

    required_inputs = ("X", "labels")
    _parameter_constraints = {**EXACT_SNE_CONSTRAINTS, **SUPERVISION_CONSTRAINTS}

    def __init__(self, lam: float = 0.5, mode: str = "distance", perplexity: float = 30.0, n_pca: int | None = 30,
                 neighbors: str = "all", n_components: int = 2, max_iter: int = TSNE_SCHEDULE.max_iter,
                 learning_rate: str | float = 0.1, momentum: float = TSNE_SCHEDULE.momentum, final_momentum: float = TSNE_SCHEDULE.final_momentum,
                 momentum_switch_iter: int = TSNE_SCHEDULE.momentum_switch_iter, early_exaggeration: float = 1.0,
                 early_exaggeration_iter: int = 100, min_gain: float = TSNE_SCHEDULE.min_gain, max_samples: int | None = 5000,
                 random_state: int = 0):
        super().__init__(perplexity=perplexity, n_pca=n_pca, neighbors=neighbors, n_components=n_components,
                         max_iter=max_iter, learning_rate=learning_rate, momentum=momentum,
                         final_momentum=final_momentum, momentum_switch_iter=momentum_switch_iter,
                         early_exaggeration=early_exaggeration, early_exaggeration_iter=early_exaggeration_iter,
                         min_gain=min_gain, max_samples=max_samples, random_state=random_state)
        self.lam = lam
        self.mode = mode

    def _affinities(self, inputs: Inputs, Xr: np.ndarray) -> np.ndarray:
        return supervised_conditional_dense(Xr, inputs.labels, self.lam, self.perplexity, self.mode,
                                            neighbors=self.neighbors)


class SupervisedTSNE(Embedder):
    """Supervised t-SNE / S-t-SNE (Kim et al. 2015; COVA Table 1, Table 4, Fig. 5, H.5), run by openTSNE on the
    supervised joint P of :func:`supervised_affinities` (like :class:`cova.methods.sne.tsne.TSNE` with a given P).

    Parameters
    ----------
    lam : λ, default 0.5 (λ = 1: unsupervised t-SNE with the footnote-1 setting). mode : ``"distance"`` | ``"p_shrink"``.
    perplexity : 30. n_pca : 30 (``None`` skips the PCA).
    max_iter, early_exaggeration_iter, learning_rate, dof, negative_gradient_method : openTSNE's (500, 250, "auto",
        1, "auto"), as in :class:`cova.methods.sne.tsne.TSNE` (``max_iter`` is openTSNE's ``n_iter``).
    init : ``"random"`` (default; the 2008-style random start of van der Maaten & Hinton, openTSNE's N(0, 10⁻⁸ I)) or
        ``"pca"`` (openTSNE's scaled PCA of the reduced X).
    random_state : seed of the initialisation and of openTSNE. n_jobs : openTSNE threads (results do not depend
        on it).
    """

    required_inputs = ("X", "labels")
    _parameter_constraints = {**SUPERVISION_CONSTRAINTS, "perplexity": POSITIVE, "n_pca": [*POSITIVE_INT, None],
                              **OPENTSNE_CONSTRAINTS}

    _option_rules = (perplexity_fits_samples(),)

    def __init__(self, lam: float = 0.5, mode: str = "distance", perplexity: float = 30.0, n_pca: int | None = 30,
                 max_iter: int = 500, early_exaggeration_iter: int = 250, learning_rate: str | float = "auto",
                 dof: float = 1.0, negative_gradient_method: str = "auto", init: str = "random",
                 random_state: int = 0, n_jobs: int = 1):
        self.lam = lam
        self.mode = mode
        self.perplexity = perplexity
        self.n_pca = n_pca
        self.max_iter = max_iter
        self.early_exaggeration_iter = early_exaggeration_iter
        self.learning_rate = learning_rate
        self.dof = dof
        self.negative_gradient_method = negative_gradient_method
        self.init = init
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fit(self, inputs: Inputs) -> "SupervisedTSNE":
        self._validate_params()
        P = supervised_affinities(inputs.X, inputs.labels, self.lam, self.perplexity, self.mode, n_pca=self.n_pca,
                                  random_state=self.random_state)
        l = inputs.X.shape[0]
        if self.init == "pca":
            init = openTSNE.initialization.pca(pca_reduce(inputs.X, self.n_pca), random_state=self.random_state)
        else:
            init = openTSNE.initialization.random(l, random_state=self.random_state)
        return opentsne_fit(self, P, init)


class SupervisedNSE(Embedder):
    """Supervised NSE (COVA Table 1): the normalised spectral embedding (:func:`cova.methods.sne.nse.nse_embedding`)
    of the supervised joint P of :func:`supervised_affinities`.

    Parameters: lam (0.5), mode (``"distance"``), perplexity (30), n_pca (30), n_components (2),
    eigen_solver (``"arpack"``), random_state (0, seeds ARPACK's start vector).
    """

    required_inputs = ("X", "labels")
    _parameter_constraints = {**SUPERVISION_CONSTRAINTS, "perplexity": POSITIVE, "n_pca": [*POSITIVE_INT, None],
                              "n_components": POSITIVE_INT, "eigen_solver": [StrOptions(set(SPECTRAL_SOLVERS))],
                              "random_state": SEED}

    _option_rules = (perplexity_fits_samples(),)

    def __init__(self, lam: float = 0.5, mode: str = "distance", perplexity: float = 30.0, n_pca: int | None = 30,
                 n_components: int = 2, eigen_solver: str = "arpack", random_state: int = 0):
        self.lam = lam
        self.mode = mode
        self.perplexity = perplexity
        self.n_pca = n_pca
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "SupervisedNSE":
        self._validate_params()
        P = supervised_affinities(inputs.X, inputs.labels, self.lam, self.perplexity, self.mode, n_pca=self.n_pca,
                                  random_state=self.random_state)
        self.affinity_matrix_ = P
        self.embedding_ = nse_embedding(P, self.n_components, eigen_solver=self.eigen_solver,
                                        random_state=self.random_state)
        return self
