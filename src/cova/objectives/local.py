"""Local-rule objectives O^(L): preservation of the neighbour graph W (COVA Eqs. 1, 2).

Conventions: W is a scipy.sparse l×l matrix, **symmetric** (spec T10: the Laplacian gradients below are only
right for symmetric W; symmetrise ½(W + Wᵀ) and renormalise first), zero diagonal, unit sum.

O_KL^(L) splits into a sparse *attractive* part over nnz(W) and a dense *repulsive* part (the Student-t
normaliser ΣQ and ``Σ_j q_ij²(z_i − z_j)``), which are exactly t-SNE's normaliser and negative gradient
(spec §9). The repulsive part is computed by a back end chosen with ``method``; ``"exact"`` is the only one
implemented (blocked, O(l²) time, O(block·l) memory). Approximate back ends (Barnes–Hut, FFT interpolation)
plug in by adding a function to :data:`REPULSION_METHODS`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp

#: Upper bound on the entries of one row block of the exact repulsion (rows · l): 2^21 float64 = 16 MB.
BLOCK_ENTRIES = 1 << 21
#: Largest l for which :func:`o_kl_l_conditional` may build its dense l×l matrices.
CONDITIONAL_MAX_SAMPLES = 5_000


def o_dist_l(Z: np.ndarray, W: sp.spmatrix) -> tuple[float, np.ndarray]:
    """O_dist^(L) of COVA Eq. 1 and its gradient (Table A.1).

    ``O = ½ Σ_ij w_ij ‖z_i − z_j‖² = tr(Zᵀ𝐋(W)Z)``, gradient ``2𝐋(W)Z``. Valid for symmetric W only
    (spec T10): W must be symmetrised before it gets here. Cost O(nnz(W)·k).
    """
    degree = np.asarray(W.sum(axis=1)).ravel()
    LZ = degree[:, None] * Z - W @ Z
    return float(np.sum(Z * LZ)), 2.0 * LZ


# --------------------------------------------------------------------------------------------------------
# repulsive part of O_KL^(L): back ends
# --------------------------------------------------------------------------------------------------------

def _repulsion_exact(Z: np.ndarray, *, block_size: int | None = None) -> tuple[float, np.ndarray]:
    """Exact ``(ΣQ, Σ_j q_ij²(z_i − z_j))`` over i ≠ j, in row blocks (O(l²k) time, O(block·l) memory).

    ``block_size`` rows per block; default ``max(1, BLOCK_ENTRIES // l)``. Squared distances are
    ``Σ_k (z_ik − z_jk)²`` (exact; the diagonal is set to q_ii = 0 explicitly). The Python loop runs over
    blocks and the k coordinates only.
    """
    l, k = Z.shape
    if block_size is None:
        block_size = max(1, BLOCK_ENTRIES // max(l, 1))
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    rep = np.empty_like(Z)
    sum_q = 0.0
    for start in range(0, l, block_size):
        stop = min(start + block_size, l)
        Zb = Z[start:stop]
        q = np.zeros((stop - start, l))
        diff = np.empty_like(q)
        for dim in range(k):
            np.subtract(Zb[:, dim, None], Z[None, :, dim], out=diff)
            np.multiply(diff, diff, out=diff)
            q += diff
        q += 1.0
        np.reciprocal(q, out=q)
        rows = np.arange(stop - start)
        q[rows, rows + start] = 0.0
        sum_q += float(q.sum())
        np.multiply(q, q, out=q)
        rep[start:stop] = q.sum(axis=1)[:, None] * Zb - q @ Z
    return sum_q, rep


#: Back ends for the repulsive part: ``name -> fn(Z, **options) -> (ΣQ, Σ_j q_ij²(z_i − z_j))``.
#: Extension point for Barnes–Hut / FFT approximations (spec §9), e.g. ``"bh"`` or ``"fft"``.
REPULSION_METHODS: dict[str, Callable[..., tuple[float, np.ndarray]]] = {"exact": _repulsion_exact}


def kl_repulsion(Z: np.ndarray, method: str = "exact", **options) -> tuple[float, np.ndarray]:
    """The repulsive quantities of O_KL^(L): ``ΣQ = Σ_{i≠j} q_ij`` and ``rep_i = Σ_j q_ij²(z_i − z_j)``.

    ``method`` selects a back end of :data:`REPULSION_METHODS`; unknown names raise ValueError.
    """
    try:
        backend = REPULSION_METHODS[method]
    except KeyError:
        raise ValueError(f"unknown O_KL^(L) method {method!r}; available: {sorted(REPULSION_METHODS)}") from None
    return backend(np.asarray(Z, dtype=float), **options)


def _attraction(Z: np.ndarray, W: sp.spmatrix) -> tuple[float, float, np.ndarray]:
    """Sparse part of O_KL^(L) over nnz(W): ``(Σ w ln w, Σ w ln(1 + d²), Σ_j w_ij q_ij (z_i − z_j))``."""
    W = sp.csr_matrix(W)
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    cols = W.indices
    w = W.data
    d2 = np.zeros(w.shape[0])
    for dim in range(Z.shape[1]):
        diff = Z[rows, dim] - Z[cols, dim]
        d2 += diff * diff
    positive = w > 0
    entropy = float(np.sum(w[positive] * np.log(w[positive])))
    cross = float(np.sum(w * np.log1p(d2)))
    WQ = sp.csr_matrix((w / (1.0 + d2), cols, W.indptr), shape=W.shape)
    attr = np.asarray(WQ.sum(axis=1)).ravel()[:, None] * Z - WQ @ Z
    return entropy, cross, attr


def o_kl_l(Z: np.ndarray, W: sp.spmatrix, *, method: str = "exact",
           **method_options) -> tuple[float, np.ndarray]:
    """O_KL^(L) of COVA Eq. 2 with the joint p_s = W, and its gradient (Table A.1, Eqs. A.18–A.34).

    ``q_ij = (1 + ‖z_i − z_j‖²)⁻¹`` (q_ii = 0) and ``O = Σ_{i≠j} w_ij ln(w_ij / (q_ij / Σ_{a≠b} q_ab))``, evaluated
    as ``Σ w ln w − Σ_{nnz} w ln q + (Σw)·ln ΣQ`` (constants included, 0·ln 0 = 0).

    Gradient ``4𝐋(G)Z`` with ``G = (W − (Σw)·Q/ΣQ) ∘ Q`` (Eq. A.34 with the sums of spec T8 and the factor of
    T9; Σw = 1 for the unit-sum W the pipeline passes), computed as
    ``4[𝐃(W∘Q) − W∘Q]Z − 4(Σw/ΣQ)[𝐃(Q∘Q) − Q∘Q]Z`` (spec §9): the attractive part is sparse over nnz(W),
    the repulsive part and ΣQ come from :func:`kl_repulsion` with ``method`` (``"exact"``: row blocks, O(l²)
    time, O(block·l) memory, no l×l array; ``block_size=`` may be passed through ``method_options``).
    W must be symmetric (spec T10) with zero diagonal.
    """
    Z = np.asarray(Z, dtype=float)
    if method not in REPULSION_METHODS:
        raise ValueError(f"unknown O_KL^(L) method {method!r}; available: {sorted(REPULSION_METHODS)}")
    entropy, cross, attr = _attraction(Z, W)
    sum_q, rep = kl_repulsion(Z, method, **method_options)
    mass = float(W.sum())
    value = entropy + cross + mass * np.log(sum_q)
    grad = 4.0 * (attr - (mass / sum_q) * rep)
    return float(value), grad


def o_kl_l_conditional(Z: np.ndarray, W: sp.spmatrix) -> tuple[float, np.ndarray]:
    """O_KL^(L) with the *conditional* p_s of Eq. 2 (p(i|j) = w_ij / Σ_s w_sj): value and gradient (spec §3.1).

    ``P^c`` is W column-normalised and ``Q^c`` is Q column-normalised (q_ii = 0);
    ``O = Σ_j Σ_{i≠j} P^c_ij ln(P^c_ij / Q^c_ij)`` and the gradient is ``2𝐋(G_c + G_cᵀ)Z`` with
    ``G_c = (P^c − Q^c) ∘ Q`` (not in the paper; derived in the spec). A column of W that sums to zero (an isolated
    sample) carries no distribution: it contributes nothing to the value, and its Q^c column is dropped from G_c
    so the gradient stays consistent.

    Dense O(l²) memory: refused (ValueError) for l > :data:`CONDITIONAL_MAX_SAMPLES`.
    """
    Z = np.asarray(Z, dtype=float)
    l = Z.shape[0]
    if l > CONDITIONAL_MAX_SAMPLES:
        raise ValueError(f"o_kl_l_conditional builds dense l×l matrices; refused for l = {l} > "
                         f"{CONDITIONAL_MAX_SAMPLES:,} (use the joint o_kl_l, which is blocked)")
    d2 = np.zeros((l, l))
    for dim in range(Z.shape[1]):
        diff = Z[:, dim, None] - Z[None, :, dim]
        d2 += diff * diff
    Q = 1.0 / (1.0 + d2)
    np.fill_diagonal(Q, 0.0)
    Wd = sp.csr_matrix(W).toarray()
    np.fill_diagonal(Wd, 0.0)
    col_w = Wd.sum(axis=0)
    has_mass = col_w > 0
    Pc = np.divide(Wd, col_w, out=np.zeros_like(Wd), where=has_mass[None, :])
    col_q = Q.sum(axis=0)
    Qc = (Q / col_q) * has_mass[None, :]
    positive = Pc > 0
    value = (float(np.sum(Pc[positive] * np.log(Pc[positive]))) + float(np.sum(Pc * np.log1p(d2)))
             + float(np.sum(has_mass * np.log(col_q))))
    G = (Pc - Qc) * Q
    S = G + G.T
    grad = 2.0 * (S.sum(axis=1)[:, None] * Z - S @ Z)
    return value, grad
