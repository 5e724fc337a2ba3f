"""Cohort labels: the indicator matrix Y (COVA Sec. 3.1), cohort sizes and means, and the input checks the cohort
modules share (kept apart from the declared recipes, so that reading cohorts costs no scikit-learn import)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..checks import check_graph, check_labels, check_matrix
from ..errors import UserError

__all__ = ["label_matrix"]

_check_labels = check_labels
_check_W = check_graph


def _check_X(X: ArrayLike | None, n_samples: int, name: str = "X") -> np.ndarray:
    return check_matrix(X, name, n_rows=n_samples)


def _cohort_sizes(y: np.ndarray, c: int) -> np.ndarray:
    return np.bincount(y, minlength=c).astype(np.float64)


def _cohort_means(X: np.ndarray, y: np.ndarray, c: int) -> np.ndarray:
    """(c, d) matrix of cohort means mu_j = (1/n_j) sum_{y_s = j} x_s; every cohort must be non-empty."""
    n = _cohort_sizes(y, c)
    if np.any(n == 0):
        empty = np.flatnonzero(n == 0).tolist()
        raise UserError(f"cohort centres are undefined for empty cohorts {empty} (check labels / n_cohorts)")
    Y = label_matrix(y, c)
    return np.asarray(Y.T @ X) / n[:, None]



def label_matrix(labels: ArrayLike, n_cohorts: int | None = None) -> sp.csr_matrix:
    """Sparse l x c cohort indicator Y with y_ij = 1 iff sample i is in cohort j (COVA Sec. 3.1, "Y").

    Parameters
    ----------
    labels : (l,) integer array with values in ``0..c-1``.
    n_cohorts : number of cohorts c; default ``labels.max() + 1``. Pass it when a cohort may be empty.
    """
    y, c = _check_labels(labels, n_cohorts)
    l = y.shape[0]
    return sp.csr_matrix((np.ones(l, dtype=np.float64), (np.arange(l), y)), shape=(l, c))
