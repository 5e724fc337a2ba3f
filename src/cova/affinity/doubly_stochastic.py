"""Doubly stochastic affinities (DOSNES, Lu, Yang & Corander, Sec. 3), sparse and in O(nnz) memory.

* :func:`sinkhorn_knopp`: the symmetric Sinkhorn–Knopp scaling P = D W D of a symmetric non-negative W with zero
  diagonal, so that every row and column of P sums to 1 (the constraint of DOSNES Sec. 3, reached by the
  alternating Eqs. 1–2 in the paper). We use the symmetric form of the iteration: with P = diag(x) W diag(x) the
  row sums are r = x ∘ (W x), and the damped update x ← x / √r (= √(x / (W x))) keeps P exactly symmetric at every
  step, where the alternating row/column steps of Eqs. 1–2 do not. A scaling exists only when W has *total
  support* (Sinkhorn & Knopp 1967; Csima & Datta 1972 for the symmetric case): every edge lies on a positive
  diagonal. A vertex without edges, or a star-shaped piece (a path of three vertices) rules it out.
* :func:`random_walk_normalize`: the paper's one-shot "fast normalization" (Eqs. 3–4) of a non-negative n × m
  matrix B: A = row-normalised B (Eq. 3), P_ij = Σ_k A_ik A_jk / Σ_v A_vk (Eq. 4), i.e. P = A diag(1/colsum A) Aᵀ,
  a two-step random walk row → column → row. P is symmetric and doubly stochastic *including its diagonal*.
* :func:`normalize_affinity`: the post-step of an inputs block (``normalize: {kind: ...}``): ``sum`` (W / Σ W,
  the s-SNE normalisation), ``doubly_stochastic`` or ``random_walk``; every result has zero diagonal and unit
  total sum, i.e. a doubly stochastic matrix divided by n, so the t-SNE objectives apply unchanged. Each kind is
  a declared function (its options in the form of :mod:`cova.constraints`) in the registry
  :data:`NORMALIZATIONS`, which both the configuration check and :func:`normalize_affinity` check a block
  against.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp

from cova.affinity.weights import symmetrize_normalize
from cova.constraints import POSITIVE, POSITIVE_INT, Kinds, StrOptions, check_options, declare, option_defaults
from cova.errors import UserError

__all__ = [
    "DENSE_LIMIT",
    "MAX_TWO_HOP_ENTRIES",
    "NORMALIZATIONS",
    "NORMALIZE_KINDS",
    "SINKHORN_OPTIONS",
    "SinkhornResult",
    "SinkhornWarning",
    "normalize_affinity",
    "random_walk_normalize",
    "sinkhorn_knopp",
]

#: The largest dense (numpy) input accepted; larger inputs must be sparse (a dense n × n float64 needs 8 n² bytes).
DENSE_LIMIT = 4096

#: The size guard of :func:`random_walk_normalize`: the most entries its two-hop product may hold. Above 2³¹ − 1
#: scipy's sparse product switches to 64-bit indices, and the product, its transpose and their sum need more than
#: 96 GiB (at least 16 bytes per entry each).
MAX_TWO_HOP_ENTRIES = 2**31 - 1

#: The options of :func:`sinkhorn_knopp`, which the ``doubly_stochastic`` normalisation and the rebalanced
#: ``random_walk`` one pass on.
SINKHORN_OPTIONS: dict[str, list[Any]] = {"tol": POSITIVE, "max_iter": POSITIVE_INT,
                                          "on_failure": [StrOptions({"raise", "warn"})]}


class SinkhornWarning(RuntimeWarning):
    """The Sinkhorn–Knopp scaling stopped at its iteration cap before reaching its tolerance."""


@dataclass(frozen=True)
class SinkhornResult:
    """The outcome of :func:`sinkhorn_knopp`.

    ``P`` the scaled matrix (CSR, symmetric, zero diagonal, row and column sums ≈ 1); ``scaling`` the vector x with
    P = diag(x) W diag(x); ``n_iter`` the number of updates made; ``max_error`` max_i |Σ_j P_ij − 1| of the returned
    P; ``converged`` whether ``max_error ≤ tol``.
    """

    P: sp.csr_matrix
    scaling: np.ndarray
    n_iter: int
    max_error: float
    converged: bool


def _as_sparse(M: Any, name: str) -> sp.csr_matrix:
    """A float64 CSR copy of ``M`` (dense inputs only up to :data:`DENSE_LIMIT` rows and columns), duplicates summed,
    explicit zeros removed; raises for negative or non-finite entries."""
    if not sp.issparse(M):
        M = np.asarray(M, dtype=np.float64)
        if M.ndim != 2:
            raise UserError(f"{name} must be a 2-D matrix, got shape {M.shape}")
        if max(M.shape) > DENSE_LIMIT:
            raise UserError(f"{name} is a dense {M.shape[0]}×{M.shape[1]} array; pass a scipy.sparse matrix above "
                             f"{DENSE_LIMIT} rows or columns")
    M = sp.csr_matrix(M, dtype=np.float64, copy=True)
    M.sum_duplicates()
    if M.nnz and (not np.all(np.isfinite(M.data)) or M.data.min() < 0):
        raise UserError(f"{name} must have finite, non-negative entries")
    M.eliminate_zeros()
    M.sort_indices()
    return M


def _symmetric_offdiagonal(W: Any) -> sp.csr_matrix:
    """W as CSR with its diagonal removed; raises unless W is square and symmetric (to 1e-12 relative to max |W|).
    The returned matrix is ½(W + Wᵀ), exactly symmetric (a bitwise no-op for an exactly symmetric W)."""
    W = _as_sparse(W, "W")
    if W.shape[0] != W.shape[1]:
        raise UserError(f"W must be square, got shape {W.shape}")
    W.setdiag(0.0)
    W.eliminate_zeros()
    scale = float(W.data.max()) if W.nnz else 0.0
    asym = abs(W - W.T)
    if asym.nnz and float(asym.max()) > 1e-12 * scale:
        raise UserError("W must be symmetric; symmetrise it first (e.g. ½(W + Wᵀ)) or use random_walk_normalize")
    W = ((W + W.T) * 0.5).tocsr()
    W.eliminate_zeros()
    W.sort_indices()
    return W


def _support_hint(W: sp.csr_matrix) -> str:
    """A witness of missing support, if a cheap one exists: a vertex with two or more neighbours of degree 1 (each
    of them can only be matched to it, so no permutation of positive entries exists)."""
    counts = np.diff(W.indptr)
    leaves = np.flatnonzero(counts == 1)
    if leaves.size < 2:
        return ""
    hubs = np.bincount(W.indices[W.indptr[leaves]], minlength=W.shape[0])
    bad = np.flatnonzero(hubs >= 2)
    if not bad.size:
        return ""
    return (f", e.g. {bad.size} vertices have two or more neighbours of degree 1 (vertex {bad[0]} has "
            f"{hubs[bad[0]]})")


@declare(SINKHORN_OPTIONS)
def sinkhorn_knopp(W: Any, *, tol: float = 1e-12, max_iter: int = 1000, on_failure: str = "raise") -> SinkhornResult:
    """Symmetric Sinkhorn–Knopp scaling of a symmetric non-negative W (DOSNES Sec. 3, the constraint of Eqs. 1–2).

    The diagonal of W is set to zero first (a self-affinity would absorb mass that t-SNE discards). Then
    x ← x / √(x ∘ (W x)) from x = 1 / √(mean row sum) until max_i |x_i (W x)_i − 1| ≤ ``tol`` or ``max_iter``
    updates were made. One sparse product W x per update: O(nnz) time and memory, never an n × n array.
    The returned P_ij = (x_i x_j) w_ij is exactly symmetric.

    A vertex without edges makes the scaling impossible and raises ``ValueError`` (keep the largest connected
    component); so does, with ``on_failure="raise"``, a vertex with two or more neighbours of degree 1 (both
    would have to be matched to it: W has no total support). Missing the tolerance after ``max_iter`` updates
    (typically a W without total support, whose scaling drifts towards zero or infinity) raises ``ValueError``
    with ``on_failure="raise"`` and warns with :class:`SinkhornWarning` with ``on_failure="warn"``; the result
    then reports ``converged=False``. The options are declared (:data:`SINKHORN_OPTIONS`) and checked at every
    call: ``tol`` > 0, ``max_iter`` ≥ 1, ``on_failure`` ``"raise"`` or ``"warn"``.
    """
    tol, max_iter = float(tol), int(max_iter)
    W = _symmetric_offdiagonal(W)
    n = W.shape[0]
    degree = np.asarray(W.sum(axis=1)).ravel()
    isolated = np.flatnonzero(degree <= 0)
    if isolated.size:
        raise UserError(f"W has {isolated.size} rows without any off-diagonal weight (e.g. row {isolated[0]}); "
                         "no doubly stochastic scaling exists: keep the largest connected component")
    hint = _support_hint(W)
    if hint and on_failure == "raise":
        raise UserError(f"W has no total support, so no doubly stochastic scaling exists{hint}: use the "
                         "random-walk normalisation")
    x = np.full(n, 1.0 / np.sqrt(degree.mean()))
    n_iter = 0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        r = x * (W @ x)
        err = float(np.max(np.abs(r - 1.0)))
        while not err <= tol and n_iter < max_iter and np.isfinite(err):
            x = x / np.sqrt(r)
            n_iter += 1
            r = x * (W @ x)
            err = float(np.max(np.abs(r - 1.0)))
    coo = W.tocoo()
    P = sp.csr_matrix(((x[coo.row] * x[coo.col]) * coo.data, (coo.row, coo.col)), shape=W.shape)
    P.sort_indices()
    converged = bool(err <= tol)
    if not converged:
        msg = (f"Sinkhorn-Knopp did not reach tol = {tol:g} in {n_iter} iterations (max row-sum error {err:.3g}); "
               f"W may lack total support (no doubly stochastic scaling exists){hint}: keep the largest connected "
               "component, use the random-walk normalisation, or raise max_iter")
        if on_failure == "raise":
            raise UserError(msg)
        warnings.warn(msg, SinkhornWarning, stacklevel=2)
    return SinkhornResult(P=P, scaling=x, n_iter=n_iter, max_error=err, converged=converged)


@numba.njit(cache=True)
def _two_hop_entries(indptr: np.ndarray, indices: np.ndarray, t_indptr: np.ndarray, t_indices: np.ndarray,
                     limit: int) -> tuple[int, int]:  # pragma: no cover - jit
    """The number of entries of B Bᵀ (B in CSR, its columns by ``t_indptr`` / ``t_indices``), counted row by row
    with one marker per row of Bᵀ, and the rows counted: the count stops after the first row at which it exceeds
    ``limit``. scipy counts the same before its sparse product but offers no public way to ask, or to stop early."""
    n = indptr.shape[0] - 1
    mark = np.full(n, -1, np.int64)
    total = 0
    for i in range(n):
        for a in range(indptr[i], indptr[i + 1]):
            k = indices[a]
            for b in range(t_indptr[k], t_indptr[k + 1]):
                j = t_indices[b]
                if mark[j] != i:
                    mark[j] = i
                    total += 1
        if total > limit:
            return total, i + 1
    return total, n


def random_walk_normalize(B: Any, max_entries: int = MAX_TWO_HOP_ENTRIES) -> sp.csr_matrix:
    """DOSNES Eqs. 3–4: P = A diag(1/colsum A) Aᵀ with A = B row-normalised (Eq. 3), for a non-negative n × m B.

    Every row of B needs a positive sum (raises otherwise); all-zero columns carry no walk and are skipped. P is
    n × n, symmetric (made exactly so by ½(P + Pᵀ)), with row and column sums 1 including its non-zero diagonal
    P_ii = Σ_k A_ik² / Σ_v A_vk; its sparsity is that of B Bᵀ (two hops), so it is denser than B.

    Size guard: B Bᵀ holds at least max_k c_k² and at most min(Σ_k c_k², n²) entries, c_k the non-zeros of column k
    of B (each column joins its c_k rows pairwise). B is refused, before the product is allocated, when the lower
    bound exceeds ``max_entries`` (:data:`MAX_TWO_HOP_ENTRIES`), or, when only the upper one does, as soon as the
    entries counted row by row (:func:`_two_hop_entries`, O(n) memory) pass it; the Sinkhorn–Knopp scaling
    (:func:`sinkhorn_knopp`) keeps B's own pattern instead.
    """
    B = _as_sparse(B, "B")
    counts = np.bincount(B.indices, minlength=B.shape[1]).astype(np.int64)
    widest = int(np.argmax(counts)) if counts.size else 0
    found = ""
    if counts.size and counts[widest] ** 2 > max_entries:
        found = f"at least {int(counts[widest]) ** 2:,} from column {widest} alone, which has {counts[widest]:,}"
    elif min(int(np.dot(counts, counts)), B.shape[0] ** 2) > max_entries:
        Bc = B.tocsc()  # the rows of each column, for the count only
        entries, rows_counted = _two_hop_entries(B.indptr, B.indices, Bc.indptr, Bc.indices, max_entries)
        if entries > max_entries:
            found = f"{entries:,} in its first {rows_counted:,} rows"
    if found:
        raise UserError(f"the random-walk normalisation (DOSNES Eq. 4) of this {B.shape[0]} × {B.shape[1]} matrix "
                        f"with {B.nnz:,} non-zeros has more than the {max_entries:,} two-hop entries allowed "
                        f"({found}; at least 16 bytes each); use normalize: {{kind: doubly_stochastic}}, which "
                        "keeps the matrix's own entries, or fewer neighbours")
    rows = np.asarray(B.sum(axis=1)).ravel()
    empty = np.flatnonzero(rows <= 0)
    if empty.size:
        raise UserError(f"B has {empty.size} all-zero rows (e.g. row {empty[0]}); the random-walk normalisation "
                         "(DOSNES Eq. 3) needs a positive sum in every row")
    A = sp.diags(1.0 / rows) @ B
    cols = np.asarray(A.sum(axis=0)).ravel()
    inv = np.zeros_like(cols)
    np.divide(1.0, cols, out=inv, where=cols > 0)
    C = (A @ sp.diags(np.sqrt(inv))).tocsr()
    P = (C @ C.T).tocsr()
    P = ((P + P.T) * 0.5).tocsr()
    P.eliminate_zeros()
    P.sort_indices()
    return P


@declare({})
def normalize_sum(W: Any) -> tuple[sp.csr_matrix, dict[str, Any]]:
    """``normalize: {kind: sum}``: :func:`cova.affinity.symmetrize_normalize` (W / Σ W, the s-SNE normalisation);
    no facts."""
    return symmetrize_normalize(W), {}


@declare(SINKHORN_OPTIONS)
def normalize_doubly_stochastic(W: Any, tol: float = 1e-12, max_iter: int = 1000, on_failure: str = "raise"
                                ) -> tuple[sp.csr_matrix, dict[str, Any]]:
    """``normalize: {kind: doubly_stochastic, tol, max_iter, on_failure}``: :func:`sinkhorn_knopp`, then divided
    by its total (by n); facts ``sinkhorn_iterations`` and ``sinkhorn_max_error``."""
    res = sinkhorn_knopp(W, tol=tol, max_iter=max_iter, on_failure=on_failure)
    return symmetrize_normalize(res.P), {"sinkhorn_iterations": res.n_iter, "sinkhorn_max_error": res.max_error}


def _sinkhorn_needs_rebalance(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """The Sinkhorn options of ``random_walk`` act only with ``rebalance: true``: one set to another value than
    its default without it is refused (the defaults filled in cannot be told from the same value given)."""
    if options["rebalance"]:
        return None
    defaults = option_defaults(sinkhorn_knopp)
    for name in SINKHORN_OPTIONS:
        if options[name] != defaults[name]:
            return name, "the Sinkhorn options of kind 'random_walk' apply only with rebalance: true"
    return None


@declare({"rebalance": ["boolean"], **SINKHORN_OPTIONS}, rules=[_sinkhorn_needs_rebalance])
def normalize_random_walk(W: Any, rebalance: bool = False, tol: float = 1e-12, max_iter: int = 1000,
                          on_failure: str = "raise") -> tuple[sp.csr_matrix, dict[str, Any]]:
    """``normalize: {kind: random_walk, rebalance, ...}``: :func:`random_walk_normalize` with B = W (its diagonal
    removed first), then the diagonal of the result is set to zero (fact ``random_walk_max_diagonal``: the
    largest diagonal entry removed, the mass the rows lose). With ``rebalance: true`` the zero-diagonal result is
    scaled back to doubly stochastic by :func:`sinkhorn_knopp` with ``tol``, ``max_iter``, ``on_failure`` (facts
    as ``doubly_stochastic``). Finally divided by its total."""
    P = random_walk_normalize(_symmetric_offdiagonal(W))
    facts: dict[str, Any] = {"random_walk_max_diagonal": float(P.diagonal().max())}
    P.setdiag(0.0)
    P.eliminate_zeros()
    if rebalance:
        res = sinkhorn_knopp(P, tol=tol, max_iter=max_iter, on_failure=on_failure)
        facts.update(sinkhorn_iterations=res.n_iter, sinkhorn_max_error=res.max_error)
        P = res.P
    return symmetrize_normalize(P), facts


#: The ``normalize`` kinds of an inputs block's ``weights`` or ``graph``: kind -> its declared function.
NORMALIZATIONS = Kinds("normalize kind", {"sum": normalize_sum, "doubly_stochastic": normalize_doubly_stochastic,
                                          "random_walk": normalize_random_walk})

#: The ``normalize.kind`` values of an inputs block.
NORMALIZE_KINDS: tuple[str, ...] = tuple(NORMALIZATIONS)


def normalize_affinity(W: Any, kind: str = "sum", **params: Any) -> tuple[sp.csr_matrix, dict[str, Any]]:
    """The ``normalize`` post-step of an inputs block: a CSR W with zero diagonal and unit total sum, and facts.

    The block ``{kind, **params}`` is checked against :data:`NORMALIZATIONS` (an unknown kind or option, a value
    its declaration refuses or a Sinkhorn option of ``random_walk`` without ``rebalance`` raise
    :class:`cova.constraints.OptionError` naming the key ``normalize.<option>``) and handed to the kind's
    function: :func:`normalize_sum`, :func:`normalize_doubly_stochastic` or :func:`normalize_random_walk`. Every
    result goes through :func:`cova.affinity.symmetrize_normalize` last (divided by its total: for a doubly
    stochastic P that is P / n), so it is symmetric with unit sum. The input is expected symmetric; its diagonal
    is ignored.
    """
    options = check_options(NORMALIZATIONS, {"kind": kind, **params}, "normalize")
    del options["kind"]
    return NORMALIZATIONS[kind](W, **options)
