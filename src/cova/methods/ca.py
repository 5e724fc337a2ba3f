"""Correspondence analysis (CA): the co-embedding of a relation's row and column objects (co-embedding paper,
Wu, Mu, Liatsis & Goulermas, Sec. 2.3, Eqs. 5-7; Greenacre 1984).

For a non-negative m×n relation R with row sums D_r = diag(R1) and column sums D_c = diag(Rᵀ1), the thin SVD
D_r^{-1/2} R D_c^{-1/2} = U Θ Vᵀ has a trivial first triple (θ_1 = 1, u_1 = D_r^{1/2}1/√N, v_1 = D_c^{1/2}1/√N
with N = 1ᵀR1); CA places

    rows    Z_x = D_r^{-1/2} U_k Θ_k     (Eq. 6)
    columns Z_y = D_c^{-1/2} V_k Θ_k     (Eq. 7)

with the triples 2..k+1. Over all non-trivial triples the Euclidean distances between rows of Z_x are the χ²
distances between row profiles, d²_ik = Σ_j (r_ij/r_i − r_kj/r_k)² / c_j (Eq. 5 with the square the printed
equation lacks), and the two sets satisfy the transition (barycentric) formulas Z_x Θ_k = D_r^{-1} R Z_y and
Z_y Θ_k = D_c^{-1} Rᵀ Z_x.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg

from ..inputs import Inputs
from .base import Embedder
from .constraints import POSITIVE_INT, SEED, StrOptions

#: Below this many rows or columns ``solver="auto"`` takes the dense SVD, above it the sparse ``svds``.
DENSE_MAX = 500
#: Singular values of the normalised relation this close to 1 beyond the first are further trivial ones.
TRIVIAL_TOL = 1e-10


def _margins(R: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    dr = np.asarray(R.sum(axis=1), dtype=np.float64).ravel()
    dc = np.asarray(R.sum(axis=0), dtype=np.float64).ravel()
    for side, d in (("row", dr), ("column", dc)):
        empty = np.flatnonzero(d <= 0)
        if empty.size:
            raise ValueError(f"correspondence analysis needs a relation without all-zero rows and columns; "
                             f"{empty.size} {side}s are empty (first: {empty[:5].tolist()}); drop them first")
    return dr, dc


def normalized_svd(R: Any, n_triples: int, solver: str = "auto",
                   random_state: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ``n_triples`` leading singular triples of B = D_r^{-1/2} R D_c^{-1/2} (trivial one first), in
    descending order, each sign fixed so that the entry of largest magnitude of u is positive.

    Returns ``(U (m, t), s (t,), V (n, t), d_r (m,), d_c (n,))``. ``solver``: ``"dense"``
    (``scipy.linalg.svd(full_matrices=False)``), ``"sparse"`` (``scipy.sparse.linalg.svds`` with a seeded start,
    for large sparse R) or ``"auto"`` (dense while min(m, n) ≤ :data:`DENSE_MAX`). Raises ``ValueError`` for
    negative entries, all-zero rows or columns, or more triples than min(m, n) (``svds``: min(m, n) − 1).
    """
    R = sp.csr_matrix(R, dtype=np.float64)
    if R.nnz and (not np.all(np.isfinite(R.data)) or R.data.min() < 0):
        raise ValueError("correspondence analysis needs a relation with finite, non-negative entries")
    dr, dc = _margins(R)
    m, n = R.shape
    if solver not in ("auto", "dense", "sparse"):
        raise ValueError(f"solver must be one of ['auto', 'dense', 'sparse'], got {solver!r}")
    if solver == "auto":
        solver = "dense" if min(m, n) <= DENSE_MAX else "sparse"
    limit = min(m, n) - (1 if solver == "sparse" else 0)
    if not 1 <= n_triples <= limit:
        raise ValueError(f"a {m}×{n} relation has at most {limit} singular triples with the {solver} solver; "
                         f"asked for {n_triples}")
    B = sp.diags(1.0 / np.sqrt(dr)) @ R @ sp.diags(1.0 / np.sqrt(dc))
    if solver == "dense":
        U, s, Vt = scipy.linalg.svd(B.toarray(), full_matrices=False)
        U, s, V = U[:, :n_triples], s[:n_triples], Vt[:n_triples].T
    else:
        U, s, Vt = scipy.sparse.linalg.svds(B.tocsr(), k=n_triples, random_state=random_state)
        order = np.argsort(-s)
        U, s, V = U[:, order], s[order], Vt[order].T
    big = np.argmax(np.abs(U), axis=0)
    signs = np.where(U[big, np.arange(U.shape[1])] < 0, -1.0, 1.0)
    return U * signs, s, V * signs, dr, dc


def correspondence_analysis(R: Any, n_components: int = 2, solver: str = "auto",
                            random_state: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CA row and column coordinates (Eqs. 6-7): ``(Z_x (m, k), Z_y (n, k), θ_2..θ_{k+1})``.

    Warns when a singular value beyond the first is 1 (to :data:`TRIVIAL_TOL`): the relation's bipartite graph
    is disconnected and those components only separate its blocks (embed each block separately instead)."""
    k = int(n_components)
    U, s, V, dr, dc = normalized_svd(R, k + 1, solver=solver, random_state=random_state)
    if np.any(s[1:] >= 1.0 - TRIVIAL_TOL):
        warnings.warn(f"{int(np.sum(s >= 1.0 - TRIVIAL_TOL))} singular values equal 1: the relation is "
                      f"disconnected and its leading components separate the blocks", stacklevel=2)
    theta = s[1:]
    Zx = (U[:, 1:] / np.sqrt(dr)[:, None]) * theta
    Zy = (V[:, 1:] / np.sqrt(dc)[:, None]) * theta
    return Zx, Zy, theta


class CA(Embedder):
    """Correspondence analysis of the run's relation (co-embedding paper Eqs. 5-7; no model parameters).

    ``embedding_`` holds the row objects (Eq. 6), ``column_embedding_`` the column objects (Eq. 7, saved beside the
    embedding), ``singular_values_`` θ_2..θ_{k+1}.

    Parameters
    ----------
    n_components : k, the dimension of the co-embedding (2).
    solver : ``"auto"`` (dense SVD while min(m, n) ≤ 500, else ``scipy.sparse.linalg.svds``), ``"dense"`` or
        ``"sparse"``.
    random_state : seed of the sparse solver's start vector.
    """

    required_inputs = ("relation",)
    extra_outputs = ("column_embedding_",)

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "solver": [StrOptions({"auto", "dense", "sparse"})],
        "random_state": SEED,
    }

    def __init__(self, n_components: int = 2, solver: str = "auto", random_state: int = 0):
        self.n_components = n_components
        self.solver = solver
        self.random_state = random_state

    def fit(self, inputs: Inputs) -> "CA":
        self._validate_params()
        if inputs.relation is None:
            raise ValueError("CA needs a relation (an inputs block with 'relation')")
        Zx, Zy, theta = correspondence_analysis(inputs.relation.matrix, self.n_components, self.solver,
                                                self.random_state)
        self.embedding_ = np.ascontiguousarray(Zx)
        self.column_embedding_ = np.ascontiguousarray(Zy)
        self.singular_values_ = theta
        return self
