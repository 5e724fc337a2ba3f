"""Measures of a co-embedding (Wu, Mu, Liatsis, Goulermas: rows Z_x (m, k) and columns Z_y (n, k) of a relation R).

* :func:`mean_rank` -- Sec. 4.3, after Lin et al. (AAAI 2015): for every row object, the ranks (by embedded
  distance among all columns) of its ``top`` = 10 most related columns in R, averaged over them and then over the
  rows. Lower is better; the minimum is (top + 1)/2 = 5.5.
* :func:`mean_rank_ties` -- the same over every column whose r_ij reaches the row's ``top``-th largest value
  (integer counts and hop distances tie heavily, so the top-10 set of :func:`mean_rank` depends on tie-breaking).
* :func:`pooled_knn_error` -- Sec. 4.3: cross-validated 1-NN classification error of the embedded row and column
  objects pooled together with their class labels.
* :func:`text_classification_error` -- Sec. 4.2: the words nearest to each document-class centre, and the
  cross-validated error of a one-vs-all linear SVM on the documents' counts of those words alone.

Ranks use squared Euclidean distances (same order as distances), 1-based with ties sharing the smallest rank:
rank(j) = 1 + #{j′ : d_ij′ < d_ij}. Distances are computed in row blocks, never all m × n at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import UserError
from .neighborhood import _block_rows, sqdist_block

__all__ = ["mean_rank", "mean_rank_ties", "pooled_knn_error", "text_classification_error"]


def _check_coembedding(R: Any, Zx: Any, Zy: Any, top: int) -> tuple[Any, np.ndarray, np.ndarray]:
    Zx = np.ascontiguousarray(Zx, dtype=np.float64)
    Zy = np.ascontiguousarray(Zy, dtype=np.float64)
    if Zx.ndim != 2 or Zy.ndim != 2 or Zx.shape[1] != Zy.shape[1]:
        raise UserError(f"Zx and Zy must be 2-D with the same number of columns, got {Zx.shape} and {Zy.shape}")
    R = sp.csr_matrix(R, dtype=np.float64) if sp.issparse(R) else np.asarray(R, dtype=np.float64)
    if R.shape != (Zx.shape[0], Zy.shape[0]):
        raise UserError(f"R must be (rows of Zx) × (rows of Zy) = {(Zx.shape[0], Zy.shape[0])}, got {R.shape}")
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 1 <= top <= Zy.shape[0]:
        raise UserError(f"top must be an integer in 1..{Zy.shape[0]} (the number of columns), got {top!r}")
    if not (np.all(np.isfinite(Zx)) and np.all(np.isfinite(Zy))):
        raise UserError("Zx and Zy must be finite")
    return R, Zx, Zy


def _distance_ranks(D: np.ndarray) -> np.ndarray:
    """rank[i, j] = 1 + #{j′ : D[i, j′] < D[i, j]} for every entry of a (b, n) block (ties share the rank)."""
    order = np.argsort(D, axis=1, kind="stable")
    s = np.take_along_axis(D, order, axis=1)
    pos = np.broadcast_to(np.arange(D.shape[1]), D.shape)
    new = np.ones(D.shape, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
    ranks = np.empty(D.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, first + 1.0, axis=1)
    return ranks


def _rank_blocks(R: Any, Zx: np.ndarray, Zy: np.ndarray, top: int, ties: bool) -> float:
    m, n = R.shape
    total = 0.0
    step = max(1, _block_rows(n) // 4)
    for s in range(0, m, step):
        rows = slice(s, min(m, s + step))
        Rb = R[rows].toarray() if sp.issparse(R) else R[rows]
        ranks = _distance_ranks(sqdist_block(Zx[rows], Zy))
        order = np.argsort(-Rb, axis=1, kind="stable")  # largest r first, ties by column index
        if ties:
            kth = np.take_along_axis(Rb, order[:, top - 1:top], axis=1)
            chosen = Rb >= kth
            total += float(np.sum(np.sum(ranks * chosen, axis=1) / chosen.sum(axis=1)))
        else:
            total += float(np.sum(np.take_along_axis(ranks, order[:, :top], axis=1).mean(axis=1)))
    return total / m


def mean_rank(R: Any, Zx: Any, Zy: Any, top: int = 10) -> float:
    """Mean rank (co-embedding paper Sec. 4.3, after Lin et al., AAAI 2015).

    For row i, the ``top`` columns with the largest r_ij (ties broken by the lower column index) are ranked among
    all n columns by their distance to z^x_i (rank = 1 + #{j′ : ‖z^x_i − z^y_j′‖ < ‖z^x_i − z^y_j‖}); their ranks
    are averaged, and the row means are averaged over the m rows. ``R`` (m, n) dense or sparse, ``Zx`` (m, k),
    ``Zy`` (n, k). The minimum, reached when the ``top`` columns are the nearest ones, is (top + 1)/2.
    """
    R, Zx, Zy = _check_coembedding(R, Zx, Zy, top)
    return _rank_blocks(R, Zx, Zy, int(top), ties=False)


def mean_rank_ties(R: Any, Zx: Any, Zy: Any, top: int = 10) -> float:
    """Tie-robust mean rank: as :func:`mean_rank`, but for row i the ranks of **all** columns with
    r_ij ≥ the row's ``top``-th largest value are averaged (a set of at least ``top`` columns that does not depend
    on the order of tied entries)."""
    R, Zx, Zy = _check_coembedding(R, Zx, Zy, top)
    return _rank_blocks(R, Zx, Zy, int(top), ties=True)


def pooled_knn_error(Zx: Any, Zy: Any, row_labels: Any, column_labels: Any, n_neighbors: int = 1,
                     n_folds: int = 10, random_state: int = 0) -> float:
    """Classification error of the co-embedding (co-embedding paper Sec. 4.3): a ``n_neighbors``-NN classifier
    (sklearn ``KNeighborsClassifier``) cross-validated with ``StratifiedKFold(n_folds, shuffle=True,
    random_state)`` on the pooled points [Z_x; Z_y] with labels [row_labels; column_labels]; the error is the
    fraction of wrong out-of-fold predictions."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.neighbors import KNeighborsClassifier

    Zx = np.asarray(Zx, dtype=np.float64)
    Zy = np.asarray(Zy, dtype=np.float64)
    if Zx.ndim != 2 or Zy.ndim != 2 or Zx.shape[1] != Zy.shape[1]:
        raise UserError(f"Zx and Zy must be 2-D with the same number of columns, got {Zx.shape} and {Zy.shape}")
    yx, yy = np.asarray(row_labels), np.asarray(column_labels)
    if yx.shape != (Zx.shape[0],) or yy.shape != (Zy.shape[0],):
        raise UserError(f"row_labels and column_labels must have {Zx.shape[0]} and {Zy.shape[0]} entries, got "
                         f"{yx.shape} and {yy.shape}")
    Z, y = np.vstack([Zx, Zy]), np.concatenate([yx, yy])
    if not np.all(np.isfinite(Z)):
        raise UserError("Zx and Zy must be finite")
    folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    pred = cross_val_predict(KNeighborsClassifier(n_neighbors=n_neighbors), Z, y, cv=folds)
    return float(np.mean(pred != y))


def text_classification_error(R_counts: Any, Zx: Any, Zy: Any, row_labels: Any, n_words: int, n_folds: int = 10,
                              C: float = 1.0, random_state: int = 0, n_jobs: int = 1) -> tuple[float, int]:
    """Document classification error on the words a co-embedding places near each class (co-embedding paper
    Sec. 4.2, Figs. 5f and 6).

    μ_c = mean of Z_x over the documents of class c; for each class the ``n_words`` columns of Z_y nearest to μ_c
    (Euclidean; ties to the lower index); the union of these words (a word chosen by several classes counts
    once) keeps those columns of the original document × word counts ``R_counts``; a one-vs-rest linear SVM
    (``SVC(kernel="linear", C)``, no scaling) is cross-validated with ``StratifiedKFold(n_folds, shuffle=True,
    random_state)``, its folds fitted by ``n_jobs`` processes (the result does not depend on it). Returns (the
    fraction of wrong out-of-fold predictions, the number of distinct words kept).
    """
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import SVC

    Zx = np.asarray(Zx, dtype=np.float64)
    Zy = np.asarray(Zy, dtype=np.float64)
    R = sp.csr_matrix(R_counts, dtype=np.float64)
    y = np.asarray(row_labels)
    if R.shape != (Zx.shape[0], Zy.shape[0]) or Zx.shape[1] != Zy.shape[1]:
        raise UserError(f"R_counts must be (rows of Zx) × (rows of Zy) = {(Zx.shape[0], Zy.shape[0])} and Zx, Zy "
                         f"must have equal widths; got R {R.shape}, Zx {Zx.shape}, Zy {Zy.shape}")
    if y.shape != (Zx.shape[0],):
        raise UserError(f"row_labels must have {Zx.shape[0]} entries, got shape {y.shape}")
    if isinstance(n_words, bool) or not isinstance(n_words, (int, np.integer)) or not 1 <= n_words <= Zy.shape[0]:
        raise UserError(f"n_words must be an integer in 1..{Zy.shape[0]} (the number of words), got {n_words!r}")
    classes = np.unique(y)
    centres = np.vstack([Zx[y == c].mean(axis=0) for c in classes])
    D = sqdist_block(centres, Zy)
    nearest = np.argsort(D, axis=1, kind="stable")[:, :n_words]
    words = np.unique(nearest)
    folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    model = OneVsRestClassifier(SVC(kernel="linear", C=C))
    pred = cross_val_predict(model, R[:, words], y, cv=folds, n_jobs=n_jobs)
    return float(np.mean(pred != y)), int(words.size)
