"""Input checks shared by every layer: data matrices, cohort labels, square matrices and weight graphs.

Bottom layer: imports numpy and scipy only. Each check returns the validated array in the dtype the algorithms
use and raises ValueError with a message naming the argument.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .errors import UserError

__all__ = ["check_matrix", "check_labels", "check_label_vector", "check_square", "check_graph"]


def check_matrix(X: Any, name: str = "X", *, n_rows: int | None = None, contiguous: bool = False) -> np.ndarray:
    """``X`` as a finite, non-empty 2-D float64 array (C-contiguous if ``contiguous``).

    ``n_rows``: the number of rows X must have (one per labelled sample). ``None`` input raises "X is required".
    """
    if X is None:
        raise UserError(f"{name} is required for this computation (got None)")
    X = np.ascontiguousarray(X, dtype=np.float64) if contiguous else np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise UserError(f"{name} must be a 2-D array (samples × features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise UserError(f"{name} must be non-empty, got shape {X.shape}")
    if n_rows is not None and X.shape[0] != n_rows:
        raise UserError(f"{name} must have shape ({n_rows}, d) to match labels, got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise UserError(f"{name} contains NaN or infinite values")
    return X


def check_labels(labels: Any, n_cohorts: int | None = None) -> tuple[np.ndarray, int]:
    """Cohort labels as int64 indices 0..c−1 together with the number of cohorts c (``n_cohorts``, or
    max(labels) + 1 when None)."""
    y = np.asarray(labels)
    if y.ndim != 1:
        raise UserError(f"labels must be a 1-D array, got shape {y.shape}")
    if y.size == 0:
        raise UserError("labels must contain at least one sample")
    if not (np.issubdtype(y.dtype, np.integer) and y.dtype != np.bool_):
        raise UserError(f"labels must have an integer dtype (cohort indices 0..c-1), got {y.dtype}")
    y = y.astype(np.int64, copy=False)
    if y.min() < 0:
        raise UserError(f"labels must be non-negative cohort indices 0..c-1, got minimum {int(y.min())}")
    c_min = int(y.max()) + 1
    if n_cohorts is None:
        return y, c_min
    if isinstance(n_cohorts, bool) or not isinstance(n_cohorts, (int, np.integer)):
        raise UserError(f"n_cohorts must be a positive int or None, got {n_cohorts!r}")
    c = int(n_cohorts)
    if c < c_min:
        raise UserError(f"n_cohorts={c} is too small: labels contain cohort index {c_min - 1}")
    return y, c


def check_label_vector(labels: Any, n_samples: int) -> np.ndarray:
    """Class labels of any dtype, flattened, one per sample (for methods that only compare labels)."""
    y = np.asarray(labels).ravel()
    if y.shape[0] != n_samples:
        raise UserError(f"labels has {y.shape[0]} entries but X has {n_samples} samples")
    return y


def check_square(M: Any, name: str = "M") -> np.ndarray:
    """``M`` as a finite square float64 array."""
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise UserError(f"{name} must be a square (c, c) matrix, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise UserError(f"{name} contains NaN or infinite values")
    return M


def check_graph(W: Any, n_samples: int, name: str = "W") -> sp.csr_matrix:
    """A weight graph as a finite, non-negative float64 CSR matrix of shape (l, l); dense input is converted."""
    if W is None:
        raise UserError(f"{name} is required for this computation (got None)")
    if sp.issparse(W):
        Ws = sp.csr_matrix(W, dtype=np.float64)
    else:
        Wd = np.asarray(W, dtype=np.float64)
        if Wd.ndim != 2:
            raise UserError(f"{name} must be a 2-D (l, l) matrix, got shape {Wd.shape}")
        Ws = sp.csr_matrix(Wd)
    if Ws.shape != (n_samples, n_samples):
        raise UserError(f"{name} must have shape ({n_samples}, {n_samples}) to match labels, got {Ws.shape}")
    if Ws.nnz and not np.all(np.isfinite(Ws.data)):
        raise UserError(f"{name} contains NaN or infinite values")
    if Ws.nnz and Ws.data.min() < 0:
        raise UserError(f"{name} must have non-negative weights, got minimum {Ws.data.min():.3g}")
    return Ws
