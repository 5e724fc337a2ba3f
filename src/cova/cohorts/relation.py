"""Relation features F for the projection models and compacted features S̃Y_pM⁻¹ (COVA Sec. 3.2, footnote 5).

- :func:`relation_features` / :class:`RelationFeatures`: ``F_ij = exp(−‖x_i − q_j‖² / (2σ_F²))`` to k̃ sample
  prototypes q_j drawn uniformly without replacement from the training set (COVA Sec. 3.2, H.1; F = [φ_r(x_1) ..
  φ_r(x_l)]ᵀ, l×k̃). σ_F is not given in the paper: the default is the median of all ‖x_i − q_j‖ (our choice,
  docs/papers.md). F is **not** centred (centring lost the offset direction and cut P1's S_c on Compound from 78% to
  32%). New samples are mapped with the same q_j and σ_F (out-of-sample, footnote 4).
- :func:`compacted_features`: the general ``X_c = S̃ Y_p M⁻¹`` of footnote 5 / H.3 / H.4 / H.6 (docs/algorithms.md).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, TransformerMixin

from ..affinity.distances import squared_distances
from ..checks import check_matrix
from ..errors import UserError
from .labels import _check_labels

__all__ = ["relation_features", "RelationFeatures", "compacted_features", "resolve_n_prototypes"]

#: Squared distances are computed coordinate by coordinate (exact) up to this dimension, by the BLAS expansion
#: ``‖a‖² + ‖b‖² − 2a·b`` (clipped at 0, on data centred at the prototypes' mean) above it.
EXACT_MAX_DIM = 16
#: Rows per block when computing F (bounds the temporary memory to about BLOCK_ENTRIES float64 per block).
BLOCK_ENTRIES = 1 << 22


def _check_matrix(X: ArrayLike, name: str = "X") -> np.ndarray:
    return check_matrix(X, name)


def resolve_n_prototypes(n_prototypes: int | float, n_samples: int) -> int:
    """The number k̃ of sample prototypes: an int is capped at l (all samples when l ≤ k̃, as for Compound's 399 <
    500); a float in (0, 1] is a fraction of l, ``max(1, round(fraction·l))`` (Cora: 15% → 406)."""
    if isinstance(n_prototypes, bool):
        raise UserError(f"n_prototypes must be a positive int or a fraction in (0, 1], got {n_prototypes!r}")
    if isinstance(n_prototypes, (int, np.integer)):
        if n_prototypes < 1:
            raise UserError(f"n_prototypes must be >= 1, got {n_prototypes}")
        return int(min(int(n_prototypes), n_samples))
    frac = float(n_prototypes)
    if not (0.0 < frac <= 1.0):
        raise UserError(f"a fractional n_prototypes must lie in (0, 1], got {n_prototypes!r}")
    return int(min(n_samples, max(1, round(frac * n_samples))))


def _sq_distances(A: np.ndarray, B: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances (rows of A) × (rows of B): exact differences for d ≤ EXACT_MAX_DIM, else the
    Gram expansion (:func:`cova.affinity.distances.squared_distances`) about ``centre``."""
    if A.shape[1] <= EXACT_MAX_DIM:
        d2 = np.zeros((A.shape[0], B.shape[0]))
        for dim in range(A.shape[1]):
            diff = A[:, dim, None] - B[None, :, dim]
            d2 += diff * diff
        return d2
    return squared_distances(A - centre, B - centre)


def _block_rows(X: np.ndarray, Q: np.ndarray) -> int:
    return max(1, BLOCK_ENTRIES // max(Q.shape[0] * max(1, min(X.shape[1], EXACT_MAX_DIM)), 1))


def _all_sq_distances(X: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """All squared distances (l×k̃) in row blocks of :func:`_block_rows` rows (the same blocks for training and new
    data, so the features of a training X and of ``transform(X)`` agree bit for bit)."""
    centre = Q.mean(axis=0)
    d2 = np.empty((X.shape[0], Q.shape[0]))
    step = _block_rows(X, Q)
    for s in range(0, X.shape[0], step):
        d2[s:s + step] = _sq_distances(X[s:s + step], Q, centre)
    return d2


def _kernel_from_sq(d2: np.ndarray, sigma: float) -> np.ndarray:
    """``exp(−d2 / (2σ²))`` in place (d2 is overwritten and returned)."""
    d2 *= -0.5 / (sigma * sigma)
    return np.exp(d2, out=d2)


def _kernel(X: np.ndarray, Q: np.ndarray, sigma: float) -> np.ndarray:
    """``exp(−‖x_i − q_j‖² / (2σ²))`` (l×k̃ output, no l×l array)."""
    return _kernel_from_sq(_all_sq_distances(X, Q), sigma)


def _median_distance(X: np.ndarray, Q: np.ndarray, d2: np.ndarray | None = None) -> float:
    """Median of all ‖x_i − q_j‖ (i over the rows of X, j over the rows of Q), pairs with i = q_j included.
    ``d2``: the precomputed squared distances (:func:`_all_sq_distances`), left unchanged."""
    if d2 is None:
        d2 = _all_sq_distances(X, Q)
    return float(np.median(np.sqrt(d2), overwrite_input=True))


def relation_features(X: ArrayLike, n_prototypes: int | float = 500, sigma: float | None = None,
                      random_state: int | np.random.Generator | None = 0
                      ) -> tuple[np.ndarray, np.ndarray, float]:
    """Relation features F (l×k̃) of COVA Sec. 3.2 with Gaussian r.

    Parameters
    ----------
    X : (l, d) training data.
    n_prototypes : k̃; an int (capped at l) or a fraction of l in (0, 1] (see :func:`resolve_n_prototypes`).
    sigma : kernel width σ_F; ``None`` = the median of all ‖x_i − q_j‖ [our choice; the paper gives none].
    random_state : seed of the draw of the sample prototypes (uniform, without replacement).

    Returns
    -------
    F : (l, k̃) with ``F_ij = exp(−‖x_i − q_j‖²/(2σ_F²))``, uncentred.
    q_indices : (k̃,) sorted row indices of X used as sample prototypes q_j (all of ``arange(l)`` when k̃ = l).
    sigma : the σ_F used.
    """
    X = _check_matrix(X)
    l = X.shape[0]
    k_tilde = resolve_n_prototypes(n_prototypes, l)
    if k_tilde == l:
        q = np.arange(l)
    else:
        q = np.sort(np.random.default_rng(random_state).choice(l, size=k_tilde, replace=False))
    Q = X[q]
    # the distances are computed once: for the median σ_F, then turned into F in place
    d2 = _all_sq_distances(X, Q)
    if sigma is None:
        sigma = _median_distance(X, Q, d2)
    sigma = float(sigma)
    if not (np.isfinite(sigma) and sigma > 0):
        raise UserError(f"sigma must be a positive finite number, got {sigma!r} (all points coincide?)")
    return _kernel_from_sq(d2, sigma), q, sigma


class RelationFeatures(TransformerMixin, BaseEstimator):
    """Relation-feature transformer φ_r (COVA Sec. 3.2): ``fit`` draws the q_j and σ_F on training data,
    ``transform`` maps any X to ``[r(x, q_1) .. r(x, q_k̃)]`` with the *same* q_j and σ_F (footnote 4).

    Attributes after ``fit``: ``q_indices_`` (rows of the training X), ``sample_prototypes_`` (k̃, d),
    ``sigma_``, ``n_prototypes_`` (k̃).
    """

    def __init__(self, n_prototypes: int | float = 500, sigma: float | None = None,
                 random_state: int | None = 0):
        self.n_prototypes = n_prototypes
        self.sigma = sigma
        self.random_state = random_state

    def _fit(self, X: np.ndarray) -> np.ndarray:
        F, q, sigma = relation_features(X, self.n_prototypes, self.sigma, self.random_state)
        self.q_indices_ = q
        self.sample_prototypes_ = X[q].copy()
        self.sigma_ = sigma
        self.n_prototypes_ = int(q.size)
        self.n_features_in_ = X.shape[1]
        return F

    def fit(self, X: ArrayLike, y: object = None) -> "RelationFeatures":
        self._fit(_check_matrix(X))
        return self

    def fit_transform(self, X: ArrayLike, y: object = None, **fit_params: object) -> np.ndarray:
        return self._fit(_check_matrix(X))

    def transform(self, X: ArrayLike) -> np.ndarray:
        """F_new = [φ_r(x)]ᵀ (n, k̃) for new samples, with the fitted q_j and σ_F (uncentred)."""
        if not hasattr(self, "sigma_"):
            raise UserError("RelationFeatures is not fitted yet; call fit first")
        X = _check_matrix(X)
        if X.shape[1] != self.n_features_in_:
            raise UserError(f"X has {X.shape[1]} features, the fitted transformer expects {self.n_features_in_}")
        return _kernel(X, self.sample_prototypes_, self.sigma_)


def _top_h_mask(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, h: int) -> np.ndarray:
    """For entries grouped by ``rows``: True for the h largest ``values`` of each group, ties to the lower col."""
    order = np.lexsort((cols, -values, rows))
    sorted_rows = rows[order]
    starts = np.searchsorted(sorted_rows, sorted_rows, side="left")
    rank = np.arange(order.size) - starts
    keep = np.zeros(order.size, dtype=bool)
    keep[order] = rank < h
    return keep


def compacted_features(S: ArrayLike | sp.spmatrix, labels_rep: ArrayLike, n_neighbors: int | None = None, *,
                       n_cohorts: int | None = None, self_indices: ArrayLike | None = None) -> np.ndarray:
    """Compacted features ``X_c = S̃ Y_p M⁻¹`` (l×c), the general form of footnote 5.

    Parameters
    ----------
    S : (l, r) similarity between the l samples and r representative samples, dense or scipy.sparse. For a sparse
        S only the stored entries are candidates (an absent entry is a similarity of 0 that is never selected).
    labels_rep : (r,) cohort index of each representative (Y_p is their r×c indicator).
    n_neighbors : h. ``S̃ = S ∘ N(S, h)`` where N keeps (i, j) iff representative j is among the h most similar
        representatives of sample i **or** sample i is among the h most similar samples of representative j
        (ties to the lower index). ``None``: S is already the sparsified S̃ and is used as given (Places2 Fig. 8:
        "copying the corresponding elements from W").
    n_cohorts : c; default ``labels_rep.max() + 1``.
    self_indices : optional (r,) sample index of each representative when the representatives are samples
        themselves; the self-similarities S[self_indices[j], j] are set to 0 first (the zero diagonal of H.3).

    Returns
    -------
    (l, c) dense array: entry (i, j) = the similarity mass from x_i to its neighbouring representatives of cohort
    j divided by the number of cohort-j representatives M_jj (the formula, not the footnote's "average over the
    neighbours"; docs/algorithms.md). Every cohort must have at least one representative (M invertible). Apply
    :func:`relation_features` to the result for F = φ_r(X_c) (footnote 5).
    """
    y, c = _check_labels(labels_rep, n_cohorts)
    Ss = sp.coo_matrix(S, dtype=np.float64) if sp.issparse(S) else None
    if Ss is None:
        Sd = np.asarray(S, dtype=np.float64)
        if Sd.ndim != 2:
            raise UserError(f"S must be a 2-D (l, r) matrix, got shape {Sd.shape}")
        rows, cols = np.indices(Sd.shape).reshape(2, -1)
        Ss = sp.coo_matrix((Sd.ravel(), (rows, cols)), shape=Sd.shape)
    l, r = Ss.shape
    if y.shape[0] != r:
        raise UserError(f"labels_rep has {y.shape[0]} entries but S has {r} columns (representatives)")
    if not np.all(np.isfinite(Ss.data)):
        raise UserError("S contains NaN or infinite values")
    rows, cols, vals = Ss.row.astype(np.int64), Ss.col.astype(np.int64), Ss.data.copy()
    if self_indices is not None:
        si = np.asarray(self_indices, dtype=np.int64)
        if si.shape != (r,) or si.min(initial=0) < 0 or si.max(initial=0) >= l:
            raise UserError(f"self_indices must be ({r},) sample indices in 0..{l - 1}")
        vals[si[cols] == rows] = 0.0
    if n_neighbors is not None:
        h = int(n_neighbors)
        if h < 1:
            raise UserError(f"n_neighbors must be >= 1, got {n_neighbors}")
        candidate = np.ones(vals.size, dtype=bool)
        if self_indices is not None:
            candidate = si[cols] != rows
        rc, cc, vc = rows[candidate], cols[candidate], vals[candidate]
        keep_c = _top_h_mask(rc, cc, vc, h) | _top_h_mask(cc, rc, vc, h)
        keep = np.zeros(vals.size, dtype=bool)
        keep[np.flatnonzero(candidate)[keep_c]] = True
        vals = np.where(keep, vals, 0.0)
    S_tilde = sp.csr_matrix((vals, (rows, cols)), shape=(l, r))
    counts = np.bincount(y, minlength=c).astype(np.float64)
    if np.any(counts == 0):
        raise UserError(f"cohorts {np.flatnonzero(counts == 0).tolist()} have no representative: M is singular")
    Yp = sp.csr_matrix((np.ones(r), (np.arange(r), y)), shape=(r, c))
    return np.asarray((S_tilde @ Yp).todense()) / counts[None, :]
