"""The co-embedding of a relation's row and column objects by Wu, Mu, Liatsis & Goulermas ("Computation of
heterogeneous object co-embeddings from relational measurements", Sec. 3): the reduced model of Eqs. 41-42 at
given (η1, η2, ξ, γ), or with the parameters chosen by minimising Γ (Eq. 43) over a grid (Sec. 3.4)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...constraints import POSITIVE_INT, SEED, Block, Declaration, ListOf, StrOptions, StrPattern, integer, real
from ...errors import UserError
from ...inputs import Inputs
from ...objectives.coembedding import (
    coembedding_svd,
    gamma_objective,
    grid_search,
    neighbourhood_size,
    reduced_model,
)
from ...threads import job_threads
from ..base import Embedder, relation_matrix

#: The grids of the search: ``"paper"`` covers the paper's ranges (81 SVDs × 169 rescalings), ``"ci"`` is small.
GRIDS: dict[str, dict[str, list[float]]] = {
    "paper": {"eta1": [0, 0.5, 1, 1.5, 2, 3, 5, 7.5, 10], "eta2": [0, 0.5, 1, 1.5, 2, 3, 5, 7.5, 10],
              "xi": [0.1] + [0.25 * i for i in range(1, 13)], "gamma": [0.25 * i for i in range(13)]},
    "ci": {"eta1": [0.5, 1, 2], "eta2": [0.5, 1, 2], "xi": [0.5, 1, 1.5, 2], "gamma": [0, 0.5, 1, 1.5]},
}
GRID_KEYS = ("eta1", "eta2", "xi", "gamma")
#: A grid given as a dict: a non-empty list of each parameter, each value in the parameter's own range (η in
#: [0, 10], ξ in (0, 3], γ in [0, 3], as :class:`CoEmbedding` declares them).
GRID_DECLARATION = Declaration({
    "eta1": [ListOf([real(0.0, 10.0)])], "eta2": [ListOf([real(0.0, 10.0)])],
    "xi": [ListOf([real(0.0, 3.0, closed="right")])], "gamma": [ListOf([real(0.0, 3.0)])]})
#: The string forms of k_r and k_c (:func:`cova.objectives.coembedding.neighbourhood_size` checks the bounds).
NEIGHBOURHOOD = StrPattern(r"\d+(\.\d+)?%|all|all-\d+", "a percentage such as '10%', 'all' or 'all-<k>'")


class CoEmbedding(Embedder):
    """The reduced co-embedding model of the run's relation (co-embedding paper Eqs. 41-42).

    Rows: Z_x^{(q)} = (λ_{q+1}/λ_2)^γ ψ_{q+1}/(ψ_{q+1}ᵀD_{r,y}ψ_{q+1})^{1/2} (Eq. 41), ψ the eigenvectors of
    T = D_{r,y}^{-1} R_y D_{c,x}^{-1} R_xᵀ with R_x = D_r^{η1−1}R, R_y = RD_c^{η2−1} (Eqs. 21-22, 32-36); columns:
    Z_y^{(q)} = ξ/λ_{q+1}^{1/2} D_{c,x}^{-1} R_xᵀ Z_x^{(q)} (Eq. 42). With ``search="grid"`` the four parameters
    minimise Γ (Eq. 43) over a grid instead of the paper's genetic algorithm (Sec. 3.4, Table 1).

    ``embedding_`` holds the row objects, ``column_embedding_`` the column objects; ``eta1_``, ``eta2_``, ``xi_``,
    ``gamma_`` the model used, ``objective_`` its Γ, ``eigenvalues_`` λ_2..λ_{k+1} of T, ``search_gamma_`` the
    (N, 5) table [η1, η2, ξ, γ, Γ] of every model evaluated (one row without a search), ``selected_model_`` the
    row [η1, η2, ξ, γ, Γ] of the model returned. The absolute scale of
    the coordinates is arbitrary: the weights d^{η−1} are divided by their maxima, so R → cR multiplies
    it by c^{-1/2} (by c^{-η2/2} with the paper's raw weights).

    Parameters
    ----------
    n_components : k, the dimension of the co-embedding (2).
    eta1, eta2 : exponents of the row and column sums in the cost (Eqs. 15-16), in [0, 10]; (1, 1) with γ = 0,
        ξ = 1 is the bipartite spectral embedding, with γ = ½ correspondence analysis up to a factor.
    xi : scale of the columns relative to the rows, in (0, 3].
    gamma : exponent of the per-axis factor (λ_{q+1}/λ_2)^γ, in [0, 3].
    search : ``"none"`` (use eta1, eta2, xi, gamma) or ``"grid"`` (minimise Γ over ``grid``).
    grid : ``"ci"`` (η ∈ {0.5, 1, 2}², ξ ∈ {0.5, 1, 1.5, 2}, γ ∈ {0, 0.5, 1, 1.5}), ``"paper"``
        (η ∈ {0, 0.5, 1, 1.5, 2, 3, 5, 7.5, 10}², ξ ∈ {0.1, 0.25, ..., 3}, γ ∈ {0, 0.25, ..., 3}) or a dict with
        the lists ``eta1``, ``eta2``, ``xi``, ``gamma``.
    k_r, k_c : neighbourhood sizes of Γ among the rows (of m) and the columns (of n): a positive int, ``"<p>%"``,
        ``"all"`` or ``"all-<k>"`` (5, 5); ``k_c="same"`` applies k_r's rule to the columns (the settings of
        Figs. 9-11 move both together).
    solver : ``"auto"`` (dense SVD while min(m, n) ≤ 500, else ``scipy.sparse.linalg.svds``), ``"dense"`` or
        ``"sparse"``.
    random_state : seed of the sparse solver's start vector.
    """

    required_inputs = ("relation",)
    extra_outputs = ("column_embedding_", "search_gamma_", "selected_model_")

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "eta1": [real(0.0, 10.0)],
        "eta2": [real(0.0, 10.0)],
        "xi": [real(0.0, 3.0, closed="right")],
        "gamma": [real(0.0, 3.0)],
        "search": [StrOptions({"none", "grid"})],
        "grid": [StrOptions(set(GRIDS)), Block(GRID_DECLARATION, "a mapping {eta1, eta2, xi, gamma} of non-empty "
                                                                "lists of values")],
        "k_r": [integer(1, None), NEIGHBOURHOOD],
        "k_c": [integer(1, None), NEIGHBOURHOOD, StrOptions({"same"})],
        "solver": [StrOptions({"auto", "dense", "sparse"})],
        "random_state": SEED,
    }

    def __init__(self, n_components: int = 2, eta1: float = 1.0, eta2: float = 1.0, xi: float = 1.0,
                 gamma: float = 0.0, search: str = "none", grid: str | dict[str, Any] = "ci", k_r: int | str = 5,
                 k_c: int | str = 5, solver: str = "auto", random_state: int = 0):
        self.n_components = n_components
        self.eta1 = eta1
        self.eta2 = eta2
        self.xi = xi
        self.gamma = gamma
        self.search = search
        self.grid = grid
        self.k_r = k_r
        self.k_c = k_c
        self.solver = solver
        self.random_state = random_state

    def _grid(self) -> dict[str, list[float]]:
        if isinstance(self.grid, str):
            return GRIDS[self.grid]
        return {key: list(self.grid[key]) for key in GRID_KEYS}  # keys and values checked by the declaration

    def _fit(self, inputs: Inputs) -> "CoEmbedding":
        self._validate_params()
        R = relation_matrix(inputs, "CoEmbedding")
        k_r, k_c = self.k_r, (self.k_r if self.k_c == "same" else self.k_c)
        for name, value, size in (("k_r", k_r, R.shape[0]), ("k_c", k_c, R.shape[1])):
            try:
                neighbourhood_size(value, size)
            except ValueError as error:
                raise UserError(f"{name}: {error}") from None
        dim = int(self.n_components)
        if self.search == "grid":
            grid = self._grid()
            result = grid_search(R, dim, grid["eta1"], grid["eta2"], grid["xi"], grid["gamma"], k_r=k_r,
                                 k_c=k_c, n_threads=job_threads(), solver=self.solver,
                                 random_state=self.random_state)
            eta1, eta2, xi, gamma = result.eta1, result.eta2, result.xi, result.gamma
            table = result.as_array()
        else:
            eta1, eta2, xi, gamma = (float(v) for v in (self.eta1, self.eta2, self.xi, self.gamma))
        svd = coembedding_svd(R, eta1, eta2, dim + 1, solver=self.solver, random_state=self.random_state)
        Zx, Zy, lambdas = reduced_model(svd, dim, xi, gamma)
        objective = gamma_objective(R, Zx, Zy, k_r, k_c)
        if self.search != "grid":
            table = np.array([[eta1, eta2, xi, gamma, objective]], dtype=np.float64)
        self.embedding_ = np.ascontiguousarray(Zx)
        self.column_embedding_ = np.ascontiguousarray(Zy)
        self.eta1_, self.eta2_, self.xi_, self.gamma_ = eta1, eta2, xi, gamma
        self.objective_ = int(objective)
        self.eigenvalues_ = lambdas
        self.search_gamma_ = table
        self.selected_model_ = np.array([eta1, eta2, xi, gamma, objective], dtype=np.float64)
        return self
