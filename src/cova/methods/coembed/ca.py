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

from ...constraints import POSITIVE_INT, SEED, StrOptions
from ...inputs import Inputs
from ...objectives.coembedding import TRIVIAL_TOL, relation_margins, scaled_svd
from ..base import Embedder, relation_matrix

#: The method named in error messages.
NAME = "correspondence analysis"


def normalized_svd(R: Any, n_triples: int, solver: str = "auto",
                   random_state: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ``n_triples`` leading singular triples of B = D_r^{-1/2} R D_c^{-1/2} (trivial one first), in
    descending order, each sign fixed so that the entry of largest magnitude of u is positive.

    Returns ``(U (m, t), s (t,), V (n, t), d_r (m,), d_c (n,))``; ``solver`` and the errors as in
    :func:`cova.objectives.coembedding.scaled_svd` (dense SVD while min(m, n) ≤ 500, else ``svds``).
    """
    R, dr, dc = relation_margins(R, NAME)
    return scaled_svd(R, 1.0 / np.sqrt(dr), 1.0 / np.sqrt(dc), n_triples, solver=solver,
                      random_state=random_state, name=NAME)


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

    def _fit(self, inputs: Inputs) -> "CA":
        self._validate_params()
        Zx, Zy, theta = correspondence_analysis(relation_matrix(inputs, "CA"), self.n_components, self.solver,
                                                self.random_state)
        self.embedding_ = np.ascontiguousarray(Zx)
        self.column_embedding_ = np.ascontiguousarray(Zy)
        self.singular_values_ = theta
        return self
