"""Local-rule objectives O^(L): preservation of the neighbour graph W (COVA Eqs. 1, 2).

Conventions: W is a scipy.sparse l×l matrix, **symmetric** (spec T10: the Laplacian gradients below are only
right for symmetric W; symmetrise ½(W + Wᵀ) and renormalise first), zero diagonal, unit sum.

O_KL^(L) splits into a sparse *attractive* part over nnz(W) (one pass of a compiled kernel, O(nnz(W)·k)) and a
dense *repulsive* part (the Student-t normaliser ΣQ and ``Σ_j q_ij²(z_i − z_j)``), which are exactly t-SNE's
normaliser and negative gradient (spec §9). The repulsive part is computed by a back end chosen with
``method`` (:data:`REPULSION_METHODS`):

- ``"exact"``: blocked, O(l²k) time, O(block·l) memory, no l×l array;
- ``"fft"``: FFT-accelerated polynomial interpolation (Linderman et al. 2019, FIt-SNE) through openTSNE's
  compiled ``_tsne.estimate_negative_gradient_fft_{1d,2d}``, O(l) per evaluation for k ≤ 2;
- ``"bh"``: Barnes–Hut (θ = 0.5 by default) through openTSNE's ``QuadTree`` and
  ``_tsne.estimate_negative_gradient_bh``, O(l log l), any small k (k ≤ 3 is sensible);
- ``"auto"`` (default): ``"exact"`` up to :data:`AUTO_EXACT_MAX_SAMPLES` samples (so every result at the
  paper's sizes is exact), then ``"fft"`` for k ≤ 2, ``"bh"`` for k = 3 and ``"exact"`` otherwise.

The approximations return ΣQ as well (openTSNE's ``sum_Q``), so the objective value — which the Armijo line search
compares — is approximated consistently with the gradient. Accuracy at the defaults (2,000 points, measured in
``tests/test_acceleration.py``): FFT ≤ 1e-3 relative error of the repulsive gradient on COVA-scale embeddings
(RMS radius ≈ 3), BH ≈ 1–2e-2.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from typing import Callable, Iterator

import numba
import numpy as np
import scipy.sparse as sp

#: Upper bound on the entries of one row block of the exact repulsion (rows · l): 2^21 float64 = 16 MB.
BLOCK_ENTRIES = 1 << 21
#: Largest l for which :func:`o_kl_l_conditional` may build its dense l×l matrices.
CONDITIONAL_MAX_SAMPLES = 5_000
#: ``method="auto"`` uses the exact repulsion up to this many samples and an approximation above.
AUTO_EXACT_MAX_SAMPLES = 5_000
#: Defaults of the FFT back end: 3 interpolation points per interval, at least 50 intervals per axis, intervals
#: at most 0.5 embedding units wide (openTSNE uses 1.0; 0.5 keeps the error ≤ 1e-2 on sparse layouts, and
#: COVA embeddings, at the prototypes' scale ρ ≈ 3, need only the 50 minimum intervals anyway).
FFT_DEFAULTS = {"n_interpolation_points": 3, "min_num_intervals": 50, "ints_in_interval": 0.5}
#: Default opening angle of the Barnes–Hut back end (spec §9: θ = 0.5).
BH_THETA = 0.5
#: Compiled kernels with less inner-loop work than this (edges or sample–prototype pairs) run on one thread: a
#: parallel region costs microseconds on an idle machine but about one scheduler time slice (~10 ms) when the
#: cores are oversubscribed, which made E4 at l = 1,000 ten times slower with 2 threads than with 1.
PARALLEL_MIN_WORK = 1 << 20


@contextlib.contextmanager
def kernel_threads(work: int) -> Iterator[None]:
    """Run the enclosed numba kernels single-threaded when ``work`` < :data:`PARALLEL_MIN_WORK`."""
    if work >= PARALLEL_MIN_WORK:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(old)


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


def _repulsion_fft(Z: np.ndarray, *, n_interpolation_points: int = FFT_DEFAULTS["n_interpolation_points"],
                   min_num_intervals: int = FFT_DEFAULTS["min_num_intervals"],
                   ints_in_interval: float = FFT_DEFAULTS["ints_in_interval"]) -> tuple[float, np.ndarray]:
    """``(ΣQ, Σ_j q_ij²(z_i − z_j))`` by FFT-accelerated interpolation (openTSNE's compiled FIt-SNE kernels).

    k ∈ {1, 2} only. openTSNE returns ``sum_Q`` (over i ≠ j) and writes the *normalised* negative gradient
    ``−Σ_j q_ij²(z_i − z_j) / ΣQ`` into its output array; we undo the normalisation. Cost O(l·p² + G log G) with
    G = (p · #intervals)^k grid points, #intervals = max(``min_num_intervals``, span / ``ints_in_interval``).
    Deterministic for a given Z (the grid depends on Z's bounding box only).
    """
    from openTSNE import _tsne

    l, k = Z.shape
    if k not in (1, 2):
        raise ValueError(f"the FFT repulsion supports k = 1 or 2 embedding dimensions, got k = {k} (use 'bh')")
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    neg = np.zeros_like(Z)
    params = {"n_interpolation_points": int(n_interpolation_points), "min_num_intervals": int(min_num_intervals),
              "ints_in_interval": float(ints_in_interval)}
    if k == 1:
        sum_q = _tsne.estimate_negative_gradient_fft_1d(Z.ravel(), neg.ravel(), **params, dof=1)
    else:
        sum_q = _tsne.estimate_negative_gradient_fft_2d(Z, neg, **params, dof=1)
    sum_q = float(sum_q)
    return sum_q, -sum_q * neg


def _repulsion_bh(Z: np.ndarray, *, theta: float = BH_THETA, n_jobs: int = 1) -> tuple[float, np.ndarray]:
    """``(ΣQ, Σ_j q_ij²(z_i − z_j))`` by Barnes–Hut (openTSNE's ``QuadTree`` + ``estimate_negative_gradient_bh``).

    ``theta``: opening angle (0 = exact, larger = faster and coarser). O(l log l) for small k; the space
    partitioning tree has 2^k children per node, so k > 3 is slow (openTSNE warns about it). Exactly coincident
    points are handled poorly by the tree (their mutual q = 1 is under-counted); the COVA inits add noise.
    """
    from openTSNE import _tsne
    from openTSNE.quad_tree import QuadTree

    if not theta >= 0:
        raise ValueError(f"theta must be >= 0, got {theta}")
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    neg = np.zeros_like(Z)
    sum_q = float(_tsne.estimate_negative_gradient_bh(QuadTree(Z), Z, neg, theta=float(theta), dof=1,
                                                      num_threads=int(n_jobs), pairwise_normalization=True))
    return sum_q, -sum_q * neg


#: Back ends for the repulsive part: ``name -> fn(Z, **options) -> (ΣQ, Σ_j q_ij²(z_i − z_j))``.
#: ``"auto"`` is resolved by :func:`resolve_repulsion_method` before a back end is looked up.
REPULSION_METHODS: dict[str, Callable[..., tuple[float, np.ndarray]]] = {
    "exact": _repulsion_exact, "fft": _repulsion_fft, "bh": _repulsion_bh}


def resolve_repulsion_method(method: str, l: int, k: int) -> str:
    """The back end ``method`` stands for at size l×k: itself, or for ``"auto"`` ``"exact"`` when
    l ≤ :data:`AUTO_EXACT_MAX_SAMPLES`, else ``"fft"`` (k ≤ 2), ``"bh"`` (k = 3) or ``"exact"`` (k > 3).
    Unknown names raise ValueError."""
    if method == "auto":
        if l <= AUTO_EXACT_MAX_SAMPLES:
            return "exact"
        return "fft" if k <= 2 else ("bh" if k == 3 else "exact")
    if method not in REPULSION_METHODS:
        raise ValueError(f"unknown O_KL^(L) method {method!r}; available: {['auto', *sorted(REPULSION_METHODS)]}")
    return method


def kl_repulsion(Z: np.ndarray, method: str = "auto", **options) -> tuple[float, np.ndarray]:
    """The repulsive quantities of O_KL^(L): ``ΣQ = Σ_{i≠j} q_ij`` and ``rep_i = Σ_j q_ij²(z_i − z_j)``.

    ``method`` selects a back end of :data:`REPULSION_METHODS` or ``"auto"`` (:func:`resolve_repulsion_method`);
    unknown names raise ValueError. ``options`` go to the back end; with ``"auto"`` those the chosen back end does
    not take (e.g. ``block_size`` when FFT is chosen) are dropped.
    """
    Z = np.asarray(Z, dtype=float)
    name = resolve_repulsion_method(method, Z.shape[0], Z.shape[1])
    backend = REPULSION_METHODS[name]
    if method == "auto" and options:
        accepted = inspect.signature(backend).parameters
        options = {key: value for key, value in options.items() if key in accepted}
    return backend(Z, **options)


@numba.njit(parallel=True, cache=True)
def _attraction_kernel(indptr, indices, w, Z, attr, row_cross, with_value):  # pragma: no cover - jit
    l, k = Z.shape
    for i in numba.prange(l):
        cross = 0.0
        for dim in range(k):
            attr[i, dim] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            d2 = 0.0
            for dim in range(k):
                diff = Z[i, dim] - Z[j, dim]
                d2 += diff * diff
            if with_value:
                cross += w[p] * math.log1p(d2)
            s = w[p] / (1.0 + d2)
            for dim in range(k):
                attr[i, dim] += s * (Z[i, dim] - Z[j, dim])
        row_cross[i] = cross


@numba.njit(parallel=True, cache=True)
def _attraction_kernel_2d(indptr, indices, w, Z, attr, row_cross, with_value):  # pragma: no cover - jit
    for i in numba.prange(Z.shape[0]):
        cross = 0.0
        a0 = 0.0
        a1 = 0.0
        zi0 = Z[i, 0]
        zi1 = Z[i, 1]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            d0 = zi0 - Z[j, 0]
            d1 = zi1 - Z[j, 1]
            d2 = d0 * d0 + d1 * d1
            if with_value:
                cross += w[p] * math.log1p(d2)
            s = w[p] / (1.0 + d2)
            a0 += s * d0
            a1 += s * d1
        attr[i, 0] = a0
        attr[i, 1] = a1
        row_cross[i] = cross


def kl_entropy(W: sp.spmatrix) -> float:
    """``Σ w ln w`` over the positive entries of W (0·ln 0 = 0): the Z-independent constant of O_KL^(L).
    Optimisers compute it once and pass it to :func:`o_kl_l` (``entropy=``) to save a logarithm per edge."""
    w = sp.csr_matrix(W).data
    w = w[w > 0]
    return float(np.sum(w * np.log(w)))


def _attraction(Z: np.ndarray, W: sp.spmatrix, with_value: bool = True) -> tuple[float, np.ndarray]:
    """Sparse part of O_KL^(L) over nnz(W): ``(Σ w ln(1 + d²), Σ_j w_ij q_ij (z_i − z_j))``.

    ``with_value=False`` skips the logarithms (one per edge) and returns NaN for the first entry.

    One pass of a compiled kernel over the CSR rows (threads over rows, a specialised loop for k = 2; each row's
    sums are written by one thread and added in a fixed order, so the result does not depend on the number of
    threads).
    """
    W = sp.csr_matrix(W)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    attr = np.empty_like(Z)
    row_cross = np.empty(Z.shape[0])
    kernel = _attraction_kernel_2d if Z.shape[1] == 2 else _attraction_kernel
    with kernel_threads(W.nnz):
        kernel(W.indptr, W.indices, np.asarray(W.data, dtype=np.float64), Z, attr, row_cross, bool(with_value))
    return (float(row_cross.sum()) if with_value else float("nan")), attr


def o_kl_l(Z: np.ndarray, W: sp.spmatrix, *, method: str = "auto", entropy: float | None = None,
           need_value: bool = True, **method_options) -> tuple[float, np.ndarray]:
    """O_KL^(L) of COVA Eq. 2 with the joint p_s = W, and its gradient (Table A.1, Eqs. A.18–A.34).

    ``q_ij = (1 + ‖z_i − z_j‖²)⁻¹`` (q_ii = 0) and ``O = Σ_{i≠j} w_ij ln(w_ij / (q_ij / Σ_{a≠b} q_ab))``, evaluated
    as ``Σ w ln w − Σ_{nnz} w ln q + (Σw)·ln ΣQ`` (constants included, 0·ln 0 = 0).

    Gradient ``4𝐋(G)Z`` with ``G = (W − (Σw)·Q/ΣQ) ∘ Q`` (Eq. A.34 with the sums of spec T8 and the factor of
    T9; Σw = 1 for the unit-sum W the pipeline passes), computed as
    ``4[𝐃(W∘Q) − W∘Q]Z − 4(Σw/ΣQ)[𝐃(Q∘Q) − Q∘Q]Z`` (spec §9): the attractive part is sparse over nnz(W),
    the repulsive part and ΣQ come from :func:`kl_repulsion` with ``method`` (``"exact"``: row blocks, O(l²)
    time, O(block·l) memory, no l×l array, ``block_size=`` may be passed through ``method_options``;
    ``"fft"`` / ``"bh"``: openTSNE's approximations, whose ΣQ also enters the value; ``"auto"``: exact up to
    :data:`AUTO_EXACT_MAX_SAMPLES` samples). ``entropy``: :func:`kl_entropy` of W if already known (it does
    not depend on Z). W must be symmetric (spec T10) with zero diagonal. ``need_value=False`` (the momentum
    optimiser between log points) skips the per-edge logarithms of the value and returns NaN as the value; the
    gradient is the same.
    """
    Z = np.asarray(Z, dtype=float)
    resolve_repulsion_method(method, Z.shape[0], Z.shape[1])  # unknown names fail before any work
    cross, attr = _attraction(Z, W, need_value)
    if not need_value:
        sum_q, rep = kl_repulsion(Z, method, **method_options)
        return float("nan"), 4.0 * (attr - (float(W.sum()) / sum_q) * rep)
    if entropy is None:
        entropy = kl_entropy(W)
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
