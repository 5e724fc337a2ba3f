"""KL objectives of stochastic neighbour embedding: values and gradients of SNE, symmetric SNE and t-SNE.

One home for every KL divergence between input probabilities P and output probabilities Q of an embedding Z
(l×k, any k), with three evaluation strategies:

* **exact dense, compiled** (O(l²k) time, O(l·k) extra memory besides P): :func:`sne_kl_and_gradient`
  (asymmetric SNE, conditional P; Hinton & Roweis 2002, Eqs. 1–5) and :func:`tsne_kl_and_gradient` (t-SNE, joint
  P; van der Maaten & Hinton 2008, Eqs. 4–5). Fused serial numba loops over rows (deterministic).
* **exact dense, small** (numpy, c ≤ a few hundred): :func:`joint_kl_small` for a joint P with a Student-t
  (t-SNE) or Gaussian (symmetric SNE; van der Maaten & Hinton 2008, Sec. 3.1) output kernel; used by the cohort
  prototype generators.
* **sparse P with accelerated repulsion**: :func:`tsne_kl_sparse` splits the t-SNE objective into an attractive
  part over nnz(P) (one pass of a compiled kernel, O(nnz·k)) and the repulsive part (the Student-t normaliser
  ΣQ and ``Σ_j q_ij²(z_i − z_j)``), computed by a back end chosen with ``method`` (:data:`REPULSION_METHODS`):

  - ``"exact"``: blocked, O(l²k) time, O(block·l) memory, no l×l array, any k;
  - ``"fft"``: FFT-accelerated polynomial interpolation (Linderman et al. 2019, FIt-SNE) through openTSNE's
    compiled ``_tsne.estimate_negative_gradient_fft_{1d,2d}``, O(l) per evaluation, k ≤ 2;
  - ``"bh"``: Barnes–Hut (θ = 0.5 by default; van der Maaten 2014) through openTSNE's ``QuadTree`` and
    ``_tsne.estimate_negative_gradient_bh``, O(l log l), k = 2 or 3 (the tree has 2^k children per node);
  - ``"octree"``: our Barnes–Hut octree for k = 3 (:mod:`.octree`: node-diameter opening rule, exact leaves,
    threads over leaves), 4–7× faster than openTSNE's 3-D tree and more accurate at the same θ;
  - ``"auto"`` (default): ``"exact"`` up to :data:`AUTO_EXACT_MAX_SAMPLES` samples, then ``"fft"`` for k ≤ 2,
    ``"octree"`` for k = 3 and ``"exact"`` otherwise.

  The approximations return ΣQ as well (openTSNE's ``sum_Q``), so the objective value is approximated
  consistently with the gradient (what a line search compares). Accuracy at the defaults (2,000 points):
  FFT ≤ 1e-3 relative error of the repulsive gradient on embeddings of RMS radius ≈ 3 and 2–3e-2 on maps spread
  over ≈ 170 units (openTSNE's own grid), BH ≈ 1–2e-2.

Every function returns ``(value, gradient)``; the tests compare each gradient with central finite differences.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Literal

import numba
import numpy as np
import scipy.sparse as sp
from numba import njit

from ..errors import UserError
from .octree import repulsion_octree
from .threads import kernel_threads

__all__ = [
    "sne_kl_and_gradient",
    "tsne_kl_and_gradient",
    "joint_kl_small",
    "tsne_kl_sparse",
    "kl_entropy",
    "kl_repulsion",
    "resolve_repulsion_method",
    "REPULSION_METHODS",
    "REPULSION_DIMENSIONS",
    "AUTO_EXACT_MAX_SAMPLES",
    "BLOCK_ENTRIES",
    "FFT_DEFAULTS",
    "BH_THETA",
]

#: Upper bound on the entries of one row block of the exact repulsion (rows · l): 2^21 float64 = 16 MB.
BLOCK_ENTRIES = 1 << 21
#: ``method="auto"`` uses the exact repulsion up to this many samples and an approximation above.
AUTO_EXACT_MAX_SAMPLES = 5_000
#: Defaults of the FFT back end, openTSNE's (FIt-SNE's): 3 interpolation points per interval, at least 50 intervals
#: per axis, intervals at most 1 embedding unit wide. Maps at the prototypes' scale (span < 50) get the 50 minimum
#: intervals (repulsion within 1e-3 of the exact one); on a map that has spread out (span ≈ 170) the repulsion is
#: 2–3 % off, and on Fashion-MNIST 70k E2's final map scores as with a grid twice as fine (0.3 % off) at a third of
#: the cost per iteration (docs/decisions.md, "Repulsion back ends"; benchmarks/fft_grid.py).
FFT_DEFAULTS = {"n_interpolation_points": 3, "min_num_intervals": 50, "ints_in_interval": 1.0}
#: Default opening angle of the Barnes–Hut back end (θ = 0.5, the value of van der Maaten 2014).
BH_THETA = 0.5


# ----------------------------------------------------------------------------------------------------------------
# exact dense, compiled: one pass over each row computes the output similarities, the KL term and P − Q
# ----------------------------------------------------------------------------------------------------------------
def _dense(P: Any, l: int, name: str) -> np.ndarray:
    P = P.toarray() if sp.issparse(P) else np.asarray(P)
    P = np.ascontiguousarray(P, dtype=np.float64)
    if P.shape != (l, l):
        raise UserError(f"{name} must be {l}×{l} to match Z, got shape {P.shape}")
    return P


@njit(cache=True, nogil=True, inline="always")
def pair_sq_dist(Z: np.ndarray, i: int, j: int) -> float:  # pragma: no cover - jit
    """‖z_i − z_j‖², summed over the coordinates in order: the one squared distance of the compiled dense kernels
    (these below, NeRV's), inlined where they call it."""
    s = 0.0
    for t in range(Z.shape[1]):
        diff = Z[i, t] - Z[j, t]
        s += diff * diff
    return s


def _sne_shifted(Z: np.ndarray, start: int, E: np.ndarray) -> None:  # pragma: no cover - jit
    """For the rows i = start, start + 1, ... of the block ``E``: E[r, j] = −(‖z_i − z_j‖² − min_{m≠i} ‖z_i − z_m‖²)
    (≤ 0, 0 at the nearest j: the log-sum-exp shift, so that no ln q underflows) and −∞ at j = i."""
    l = Z.shape[0]
    for r in range(E.shape[0]):
        i = start + r
        dmin = np.inf
        for j in range(l):
            s = pair_sq_dist(Z, i, j)
            E[r, j] = s
            if j != i and s < dmin:
                dmin = s
        for j in range(l):
            E[r, j] = dmin - E[r, j]
        E[r, i] = -np.inf


def _sne_finish(Z: np.ndarray, P: np.ndarray, start: int, E: np.ndarray, with_cost: bool,
                kl: np.ndarray) -> None:  # pragma: no cover - jit
    """The block's rows, E[r, j] = exp(shifted) from :func:`_sne_shifted`, become M[i] = P[i] − Q[i] in place with
    q_{j|i} = E[r, j] / Σ_j E[r, j]; kl[i] = Σ_j p_{j|i} ln(p_{j|i}/q_{j|i}) (0·ln 0 = 0) when ``with_cost``."""
    l = Z.shape[0]
    for r in range(E.shape[0]):
        i = start + r
        total = 0.0
        for j in range(l):
            total += E[r, j]
        log_total = math.log(total)  # total ≥ 1: the nearest j contributes exp(0)
        acc = 0.0
        dmin = 0.0
        if with_cost:  # the shift, from the nearest j (its E is exactly 1)
            dmin = np.inf
            for j in range(l):
                if j != i:
                    dmin = min(dmin, pair_sq_dist(Z, i, j))
        for j in range(l):
            p = P[i, j]
            if with_cost and p > 0.0 and j != i:
                s = pair_sq_dist(Z, i, j)
                acc += p * (math.log(p) + (s - dmin) + log_total)  # ln q_{j|i} = −(d − dmin) − ln total
            E[r, j] = p - E[r, j] / total
        E[r, i] = 0.0
        kl[i] = acc


def _tsne_row_sums(Z: np.ndarray) -> np.ndarray:  # pragma: no cover - jit
    """Row sums Σ_{j≠i} q̃_ij of q̃_ij = 1/(1 + ‖z_i − z_j‖²) (nothing l×l is stored)."""
    l = Z.shape[0]
    rows = np.zeros(l)
    for i in range(l):
        acc = 0.0
        for j in range(l):
            if j != i:
                acc += 1.0 / (1.0 + pair_sq_dist(Z, i, j))
        rows[i] = acc
    return rows


def _tsne_grad_rows(Z: np.ndarray, P: np.ndarray, total: float, with_cost: bool,
                    grad: np.ndarray) -> np.ndarray:  # pragma: no cover - jit
    """grad[i] = 4 Σ_j (p_ij − q̃_ij/total) q̃_ij (z_i − z_j); returns the per-row KL terms Σ_j p_ij ln(p_ij/q_ij)
    (zeros if not ``with_cost``). q̃ is recomputed rather than stored, so memory is O(l·k) besides P."""
    l, k = Z.shape
    kl = np.zeros(l)
    log_total = math.log(total)
    g = np.empty(k)
    for i in range(l):
        acc = 0.0
        g[:] = 0.0
        for j in range(l):
            if j == i:
                continue
            s = pair_sq_dist(Z, i, j)
            qt = 1.0 / (1.0 + s)
            p = P[i, j]
            m = (p - qt / total) * qt
            for t in range(k):
                g[t] += m * (Z[i, t] - Z[j, t])
            if with_cost and p > 0.0:
                acc += p * (math.log(p) + math.log1p(s) + log_total)  # −ln q_ij = ln(1 + d²) + ln total
        for t in range(k):
            grad[i, t] = 4.0 * g[t]
        kl[i] = acc
    return kl


# The kernels are compiled serial. Rows are independent and a prange version would give the same numbers, but on
# this project's small shared machines numba's parallel kernels were measured 2–7× *slower* than serial ones
# whenever the cores were oversubscribed (and a serial and a parallel compilation of one function cannot share
# numba's on-disk cache). Serial cost: ≈ 10–30 ns per pair and iteration.
_sne_shifted_jit = njit(cache=True)(_sne_shifted)
_sne_finish_jit = njit(cache=True)(_sne_finish)
_tsne_row_sums_jit = njit(cache=True)(_tsne_row_sums)
_tsne_grad_rows_jit = njit(cache=True)(_tsne_grad_rows)


def _laplacian_times(M: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Σ_j (M_ij + M_ji)(z_i − z_j) for every i, i.e. 𝐋(M + Mᵀ) Z, without forming M + Mᵀ.

    Two BLAS passes over M: M·[Z 1] gives MZ and the row sums, [Z 1]ᵀ·M gives (MᵀZ)ᵀ and the column sums."""
    l, k = Z.shape
    Z1 = np.empty((l, k + 1), dtype=np.float64)
    Z1[:, :k] = Z
    Z1[:, k] = 1.0
    right = M @ Z1  # (l, k+1): [MZ, M1]
    left = np.ascontiguousarray(Z1.T) @ M  # (k+1, l): [(MᵀZ)ᵀ; 1ᵀM]
    deg = right[:, k] + left[k]
    return deg[:, None] * Z - right[:, :k] - left[:k].T


def sne_kl_and_gradient(Z: np.ndarray, P: Any, *, with_cost: bool = True) -> tuple[float, np.ndarray]:
    """SNE cost C = Σ_i KL(P_i ‖ Q_i) = Σ_i Σ_j p_{j|i} ln(p_{j|i}/q_{j|i}) and its gradient (Hinton & Roweis 2002).

    q_{j|i} = exp(−‖z_i − z_j‖²) / Σ_{m≠i} exp(−‖z_i − z_m‖²) (Gaussian output kernel of fixed width, Eq. 2);
    ∂C/∂z_i = 2 Σ_j (p_{j|i} − q_{j|i} + p_{i|j} − q_{i|j})(z_i − z_j) (Hinton & Roweis 2002, Eq. 5).

    Parameters
    ----------
    Z : (l, k) embedding.
    P : (l, l) conditional input probabilities (dense or sparse), row i = p_{·|i}, zero diagonal. Rows should sum
        to 1 for C to be a sum of KL divergences; the formula is used as is otherwise (e.g. exaggerated P).

    with_cost : if False, C is returned as 0.0 (skips l² logarithms; used inside the optimiser).

    Returns
    -------
    (C, gradient (l, k)).
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    l = Z.shape[0]
    P = _dense(P, l, "P")
    M = np.empty((l, l), dtype=np.float64)
    kl = np.zeros(l)
    rows = max(1, BLOCK_ENTRIES // l)
    for start in range(0, l, rows):  # a block at a time, so that the exponentials run on data still in cache
        E = M[start:start + rows]
        _sne_shifted_jit(Z, start, E)
        # numpy's exp is vectorised (SIMD), about 4× numba's scalar calls to libm's exp, which were most of the time
        np.exp(E, out=E)
        _sne_finish_jit(Z, P, start, E, bool(with_cost), kl)
    return float(kl.sum()), 2.0 * _laplacian_times(M, Z)


def tsne_kl_and_gradient(Z: np.ndarray, P: Any, *, with_cost: bool = True) -> tuple[float, np.ndarray]:
    """t-SNE cost C = KL(P ‖ Q) = Σ_{i≠j} p_ij ln(p_ij/q_ij) and its exact gradient (van der Maaten & Hinton 2008).

    q_ij = q̃_ij / Σ_{m≠n} q̃_mn with q̃_ij = (1 + ‖z_i − z_j‖²)⁻¹ (Eq. 4); ∂C/∂z_i = 4 Σ_j (p_ij − q_ij) q̃_ij (z_i − z_j)
    (Eq. 5). ``P`` is the joint (l, l) matrix (dense or sparse, symmetric, zero diagonal, unit sum); with an
    exaggerated P the same formulas are applied (only the gradient is then meaningful).
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    l = Z.shape[0]
    P = _dense(P, l, "P")
    total = float(_tsne_row_sums_jit(Z).sum())
    grad = np.empty_like(Z)
    kl = _tsne_grad_rows_jit(Z, P, total, bool(with_cost), grad)
    return float(kl.sum()), grad

# ----------------------------------------------------------------------------------------------------------------
# exact dense, small (numpy): joint P, Student-t or Gaussian output kernel
# ----------------------------------------------------------------------------------------------------------------
def joint_kl_small(Y: np.ndarray, P: np.ndarray, kernel: Literal["student", "gaussian"] = "student"
                   ) -> tuple[float, np.ndarray]:
    """KL(P ‖ Q) and its gradient for a small dense joint P (c×c, symmetric, zero diagonal), numpy only.

    q_ij = q̃_ij / Σ_{m≠n} q̃_mn with q̃_ij = (1 + ‖y_i − y_j‖²)⁻¹ (``"student"``, t-SNE; van der Maaten & Hinton
    2008, Eq. 4) or q̃_ij = exp(−‖y_i − y_j‖²) (``"gaussian"``, symmetric SNE, ibid. Sec. 3.1);
    KL(P ‖ Q) = Σ_{p_ij > 0} p_ij ln(p_ij / q_ij) and

        t-SNE:          ∂KL/∂y_i = 4 Σ_j (p_ij − q_ij) q̃_ij (y_i − y_j)   (ibid. Eq. 5),
        symmetric SNE:  ∂KL/∂y_i = 4 Σ_j (p_ij − q_ij) (y_i − y_j)        (ibid. Sec. 3.1).

    Value and gradient agree when P sums to 1; with an exaggerated P (sum > 1) only the gradient is meaningful,
    as in t-SNE. Squared distances come from the Gram expansion ‖a‖² + ‖b‖² − 2a·b (clipped at 0); the Gaussian
    kernel is evaluated as exp(−(d² − min_offdiag d²)), which leaves Q unchanged but cannot underflow to an
    all-zero sum. For large l use :func:`tsne_kl_and_gradient` (direct differences, no l×l array besides P).
    """
    sq = np.sum(Y * Y, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (Y @ Y.T), 0.0)
    if kernel == "student":
        num = 1.0 / (1.0 + d2)
        np.fill_diagonal(num, 0.0)
        Q = num / num.sum()
        PQ = (P - Q) * num
    elif kernel == "gaussian":
        off = ~np.eye(Y.shape[0], dtype=bool)
        shift = d2[off].min()
        np.fill_diagonal(d2, np.inf)  # exp(-inf) = 0: zero diagonal without overflow
        num = np.exp(-(d2 - shift))
        Q = num / num.sum()
        PQ = P - Q
    else:
        raise UserError(f"kernel must be one of ['gaussian', 'student'], got {kernel!r}")
    grad = 4.0 * (PQ.sum(axis=1)[:, None] * Y - PQ @ Y)
    mask = P > 0
    kl = float(np.sum(P[mask] * (np.log(P[mask]) - np.log(np.maximum(Q[mask], np.finfo(np.float64).tiny)))))
    return kl, grad


# --------------------------------------------------------------------------------------------------------
# sparse P, accelerated repulsion: back ends of the repulsive part
# --------------------------------------------------------------------------------------------------------

def _repulsion_exact(Z: np.ndarray, *, block_size: int | None = None,
                     rows: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Exact ``(ΣQ, Σ_j q_ij²(z_i − z_j))`` over i ≠ j, in row blocks (O(l²k) time, O(block·l) memory).

    ``block_size`` rows per block; default ``max(1, BLOCK_ENTRIES // l)``. Squared distances are
    ``Σ_k (z_ik − z_jk)²`` (exact; the diagonal is set to q_ii = 0 explicitly). The Python loop runs over
    blocks and the k coordinates only. ``rows``: only these rows i (the sum runs over their q_ij and the
    repulsion has one row per entry), the reference of an approximation at sizes where all l² pairs are too many.
    """
    l, k = Z.shape
    if block_size is None:
        block_size = max(1, BLOCK_ENTRIES // max(l, 1))
    if block_size < 1:
        raise UserError(f"block_size must be >= 1, got {block_size}")
    index = np.arange(l) if rows is None else np.asarray(rows, dtype=np.int64)
    rep = np.empty((len(index), k))
    sum_q = 0.0
    for start in range(0, len(index), block_size):
        stop = min(start + block_size, len(index))
        Zb = Z[index[start:stop]]
        q = np.zeros((stop - start, l))
        diff = np.empty_like(q)
        for dim in range(k):
            np.subtract(Zb[:, dim, None], Z[None, :, dim], out=diff)
            np.multiply(diff, diff, out=diff)
            q += diff
        q += 1.0
        np.reciprocal(q, out=q)
        q[np.arange(stop - start), index[start:stop]] = 0.0
        sum_q += float(q.sum())
        np.multiply(q, q, out=q)
        rep[start:stop] = q.sum(axis=1)[:, None] * Zb - q @ Z
    return sum_q, rep


def _repulsion_fft(Z: np.ndarray, *, n_interpolation_points: int | None = None, min_num_intervals: int | None = None,
                   ints_in_interval: float | None = None) -> tuple[float, np.ndarray]:
    """``(ΣQ, Σ_j q_ij²(z_i − z_j))`` by FFT-accelerated interpolation (openTSNE's compiled FIt-SNE kernels).

    k ∈ {1, 2} only. openTSNE returns ``sum_Q`` (over i ≠ j) and writes the *normalised* negative gradient
    ``−Σ_j q_ij²(z_i − z_j) / ΣQ`` into its output array; we undo the normalisation. Cost O(l·p² + G log G) with
    G = (p · #intervals)^k grid points, #intervals = max(``min_num_intervals``, span / ``ints_in_interval``).
    Deterministic for a given Z (the grid depends on Z's bounding box only). An option left at None takes its
    value from :data:`FFT_DEFAULTS` at call time.
    """
    from openTSNE import _tsne

    l, k = Z.shape
    if k not in REPULSION_DIMENSIONS["fft"]:
        raise UserError(f"the FFT repulsion supports k = 1 or 2 embedding dimensions, got k = {k} (use 'bh')")
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    neg = np.zeros_like(Z)
    given = {"n_interpolation_points": n_interpolation_points, "min_num_intervals": min_num_intervals,
             "ints_in_interval": ints_in_interval}
    params = {key: type(FFT_DEFAULTS[key])(FFT_DEFAULTS[key] if value is None else value)
              for key, value in given.items()}
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
        raise UserError(f"theta must be >= 0, got {theta}")
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    neg = np.zeros_like(Z)
    sum_q = float(_tsne.estimate_negative_gradient_bh(QuadTree(Z), Z, neg, theta=float(theta), dof=1,
                                                      num_threads=int(n_jobs), pairwise_normalization=True))
    return sum_q, -sum_q * neg


#: The embedding dimensions k of the back ends that do not take every k: openTSNE's FFT kernels are 1-D and 2-D,
#: our octree is 3-D. A method's ``kl_method`` rule (:func:`cova.methods.base.repulsion_fits`) checks it before any
#: job runs.
REPULSION_DIMENSIONS: dict[str, tuple[int, ...]] = {"fft": (1, 2), "octree": (3,)}

#: Back ends for the repulsive part: ``name -> fn(Z, **options) -> (ΣQ, Σ_j q_ij²(z_i − z_j))``.
#: ``"auto"`` is resolved by :func:`resolve_repulsion_method` before a back end is looked up.
REPULSION_METHODS: dict[str, Callable[..., tuple[float, np.ndarray]]] = {
    "exact": _repulsion_exact, "fft": _repulsion_fft, "bh": _repulsion_bh, "octree": repulsion_octree}


def resolve_repulsion_method(method: str, l: int, k: int) -> str:
    """The back end ``method`` stands for at size l×k: itself, or for ``"auto"`` ``"exact"`` when
    l ≤ :data:`AUTO_EXACT_MAX_SAMPLES`, else ``"fft"`` (k ≤ 2), ``"octree"`` (k = 3) or ``"exact"`` (k > 3).
    Unknown names raise UserError."""
    if method == "auto":
        if l <= AUTO_EXACT_MAX_SAMPLES:
            return "exact"
        return "fft" if k <= 2 else ("octree" if k == 3 else "exact")
    if method not in REPULSION_METHODS:
        raise UserError(f"unknown KL repulsion method {method!r}; available: {['auto', *sorted(REPULSION_METHODS)]}")
    return method


def kl_repulsion(Z: np.ndarray, method: str = "auto", **options) -> tuple[float, np.ndarray]:
    """The repulsive quantities of t-SNE's KL: ``ΣQ = Σ_{i≠j} q_ij`` and ``rep_i = Σ_j q_ij²(z_i − z_j)``.

    ``method`` selects a back end of :data:`REPULSION_METHODS` or ``"auto"`` (:func:`resolve_repulsion_method`);
    unknown names raise UserError. ``options`` go to the back end; with ``"auto"`` those the chosen back end does
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
def _attraction_kernel(indptr, indices, w, Z, attr, row_cross, row_mass, with_value):  # pragma: no cover - jit
    l, k = Z.shape
    for i in numba.prange(l):
        cross = 0.0
        mass = 0.0
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
            mass += w[p]
            s = w[p] / (1.0 + d2)
            for dim in range(k):
                attr[i, dim] += s * (Z[i, dim] - Z[j, dim])
        row_cross[i] = cross
        row_mass[i] = mass


@numba.njit(parallel=True, cache=True)
def _attraction_kernel_2d(indptr, indices, w, Z, attr, row_cross, row_mass, with_value):  # pragma: no cover - jit
    for i in numba.prange(Z.shape[0]):
        cross = 0.0
        mass = 0.0
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
            mass += w[p]
            s = w[p] / (1.0 + d2)
            a0 += s * d0
            a1 += s * d1
        attr[i, 0] = a0
        attr[i, 1] = a1
        row_cross[i] = cross
        row_mass[i] = mass


@numba.njit(parallel=True, cache=True)
def _row_entropy_kernel(indptr, w, out):  # pragma: no cover - jit
    for i in numba.prange(indptr.shape[0] - 1):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            if w[p] > 0.0:
                acc += w[p] * math.log(w[p])
        out[i] = acc


def kl_entropy(W: sp.spmatrix) -> float:
    """``Σ w ln w`` over the positive entries of W (0·ln 0 = 0): the Z-independent constant of the KL.
    Optimisers compute it once and pass it to :func:`tsne_kl_sparse` (``entropy=``) to save a logarithm per edge.
    One compiled pass over the rows (row sums added in a fixed order: independent of the thread count)."""
    W = sp.csr_matrix(W)
    out = np.empty(W.shape[0])
    with kernel_threads(W.nnz):
        _row_entropy_kernel(W.indptr, np.asarray(W.data, dtype=np.float64), out)
    return float(out.sum())


def _attraction(Z: np.ndarray, W: sp.spmatrix, with_value: bool = True) -> tuple[float, np.ndarray, float]:
    """Attractive part of the sparse t-SNE KL over nnz(W): ``(Σ w ln(1 + d²), Σ_j w_ij q_ij (z_i − z_j), Σ w)``.

    ``with_value=False`` skips the logarithms (one per edge) and returns NaN for the first entry. The mass Σ w comes
    from the same pass (the weights are read anyway), so callers need no separate sum over W.

    One pass of a compiled kernel over the CSR rows (threads over rows, a specialised loop for k = 2; each row's
    sums are written by one thread and added in a fixed order, so the result does not depend on the number of
    threads).
    """
    W = sp.csr_matrix(W)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    attr = np.empty_like(Z)
    row_cross = np.empty(Z.shape[0])
    row_mass = np.empty(Z.shape[0])
    kernel = _attraction_kernel_2d if Z.shape[1] == 2 else _attraction_kernel
    with kernel_threads(W.nnz):
        kernel(W.indptr, W.indices, np.asarray(W.data, dtype=np.float64), Z, attr, row_cross, row_mass,
               bool(with_value))
    return (float(row_cross.sum()) if with_value else float("nan")), attr, float(row_mass.sum())


def tsne_kl_sparse(Z: np.ndarray, P: sp.spmatrix, *, method: str = "auto", entropy: float | None = None,
                   need_value: bool = True, exaggeration: float = 1.0,
                   **method_options: Any) -> tuple[float, np.ndarray]:
    """t-SNE's KL(P ‖ Q) for a sparse joint P, and its gradient, with the repulsion by ``method``.

    ``q_ij = q̃_ij / Σ_{a≠b} q̃_ab``, q̃_ij = (1 + ‖z_i − z_j‖²)⁻¹ (q̃_ii = 0) (van der Maaten & Hinton 2008, Eq. 4), and
    ``KL = Σ_{i≠j} p_ij ln(p_ij / q_ij)``, evaluated as ``Σ p ln p − Σ_{nnz} p ln q̃ + (Σp)·ln ΣQ`` (constants
    included, 0·ln 0 = 0). Gradient (ibid. Eq. 5, written for a P of any total mass Σp):

        ∂KL/∂z_i = 4 Σ_j (p_ij − (Σp)·q_ij) q̃_ij (z_i − z_j)
                 = 4 [Σ_j p_ij q̃_ij (z_i − z_j)] − 4 (Σp/ΣQ) [Σ_j q̃_ij² (z_i − z_j)],

    an attractive part over nnz(P) and the repulsive quantities of :func:`kl_repulsion` (``"exact"``: row
    blocks, ``block_size=`` may be passed through ``method_options``; ``"fft"`` / ``"bh"``: openTSNE's
    approximations, whose ΣQ also enters the value; ``"auto"``: exact up to :data:`AUTO_EXACT_MAX_SAMPLES`
    samples). P must be symmetric with zero diagonal (the attractive sum runs over the rows of P). ``entropy``:
    :func:`kl_entropy` of P if already known (it does not depend on Z). ``need_value=False`` (the momentum
    optimiser between log points) skips the per-edge logarithms and returns NaN as the value; the gradient is the
    same. With an exaggerated P only the gradient is meaningful.

    ``exaggeration`` α ≠ 1 gives t-SNE's early-exaggeration gradient ("lying about P", ibid. Sec. 3.4):
    4 Σ_j (α p_ij − (Σp)·q_ij) q̃_ij (z_i − z_j), i.e. only the attractive part is multiplied by α (passing α·P
    instead would scale the repulsion too, since ΣP enters it); the value stays the KL of the given P.
    """
    Z = np.asarray(Z, dtype=float)
    resolve_repulsion_method(method, Z.shape[0], Z.shape[1])  # unknown names fail before any work
    cross, attr, mass = _attraction(Z, P, need_value)
    if exaggeration != 1.0:
        attr_grad = float(exaggeration) * attr
    else:
        attr_grad = attr
    if not need_value:
        sum_q, rep = kl_repulsion(Z, method, **method_options)
        return float("nan"), 4.0 * (attr_grad - (mass / sum_q) * rep)
    if entropy is None:
        entropy = kl_entropy(P)
    sum_q, rep = kl_repulsion(Z, method, **method_options)
    value = entropy + cross + mass * np.log(sum_q)
    grad = 4.0 * (attr_grad - (mass / sum_q) * rep)
    return float(value), grad
