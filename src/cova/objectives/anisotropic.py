"""featMAP's anisotropic radius-correlation term (featMAP Sec. 3.3, Eqs. 13–17; Supp. Sec. 6.1, Eqs. 18–26).

Original radii. At point i the weighted local SVD (featMAP Eq. 2) gives singular values σ_i1 ≥ σ_i2 ≥ …; the
original radius along the l-th principal direction is R^o_il = σ_il² (featMAP footnote 4: the variance), and

    r^o_il = log(ε + R^o_il),   l = 1..d' (d' = 2),

centred per direction (Supp. Eq. 25) and here also scaled to unit variance (the Pearson correlation does not
change). Points whose l-th direction is flat (σ_il = 0, e.g. duplicates or fewer than l varying features) would
put r^o_il = log ε ≈ −18.4 far below every other value and dominate the correlation, so each direction is first
winsorised at the :data:`WINSOR_QUANTILE` and 1 − :data:`WINSOR_QUANTILE` quantiles of its non-flat values
(σ_il > :data:`FLAT_RELATIVE` · max σ): flat directions then sit at the low end of the others, however many there
are (featMAP does not say; our choice).

Embedded radii (Eq. 13). With the embedded frame V^e_i = [v^e_i1, v^e_i2] (unit 2-vectors), the edge vector
z_e = y_tail − y_head of every stored edge e of the pruned graph, φ_e = (1 + a‖z_e‖^{2b})^{-1} (Eq. 11) and
W_i = Σ_{e ∋ i} φ_e over the edges touching i,

    R^e_il = Σ_{e ∋ i} φ_e (z_e · v^e_il)² / W_i,      r^e_il = log(ε + R^e_il).

Both directions of a symmetric graph are stored, so every pair enters both endpoints' sums twice; the ratio is
the per-neighbour average of Eq. 13 either way (this is how densMAP and the featMAP authors accumulate it, and it
fixes the scale of the per-edge gradient below).

Correlation (Eqs. 15–16). Corr(r^o, r^e) = Σ_l Pearson(r^o_l, r^e_l); the loss is CE − λ·Corr (Eq. 17). For the
SGD the statistics of r^e are frozen at the start of each epoch (Supp. Sec. 6.1, last paragraph): per direction

    μ_l = mean_i r^e_il,  s_l = (Var_i r^e_il + var_shift)^{1/2},  c_l = Σ_i (r^e_il − μ_l) r̃^o_il / m,
    w_il = r̃^o_il − c_l (r^e_il − μ_l) / s_l²                               (Supp. Eqs. 23, 25)

(r̃^o the standardised original radii; var_shift keeps s_l away from 0 early on, as densMAP does). The frozen
objective whose gradient the SGD follows is the surrogate

    S(Y) = Σ_l (1/s_l) Σ_i [ r̃^o_il r^e_il(Y) − c_l (r^e_il(Y) − μ_l)² / (2 s_l²) ],

whose gradient at the freezing point is, for var_shift = 0, exactly m times that of Σ_l Pearson(r^o_l, r^e_l)
(Var and c_l are both population moments; densMAP and the featMAP authors divide c_l by m − 1 instead, an O(1/m)
difference). The factor m, like the 1/(m − 1) of Supp. Eq. 25, is absorbed into λ, as in densMAP.

Per-edge gradients (the paper's Eq. 26 is garbled; re-derived here). With s = ‖z‖², φ = 1/(1 + a s^b),
g = 2ab s^{b−1} z / (1 + a s^b) (so ∂φ/∂z = −φ g) and p = z·v^e_il,

    ∂r^e_il/∂z_e = (φ / W_i) · (2p v^e_il − p² g + R^e_il g) / (ε + R^e_il),

and the same with v^e_jl, W_j, R^e_j at the other endpoint j (the expression is odd in z, so the sign of z_e
does not matter). The per-edge correlation gradient is

    G_e = Σ_l [ w_il ∂r^e_il/∂z_e + w_jl ∂r^e_jl/∂z_e ] / s_l,

so that ∂S/∂y_tail = Σ G_e and ∂S/∂y_head = −Σ G_e over the edges. These are exact derivatives (ε included); the
tests compare them with central finite differences.

No library computes this term: umap-learn's optimiser has densMAP's isotropic radius only, and the featMAP
authors' package is a fork of umap-learn that is not a dependency of the pipeline.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, replace

import numba
import numpy as np

from ..errors import UserError

__all__ = ["EPSILON", "WINSOR_QUANTILE", "FLAT_RELATIVE", "AnisotropicTerm", "CorrelationStatistics", "original_radii",
           "embedded_radii", "correlation_statistics", "epoch_statistics", "check_edges", "vertex_records", "edge_radius_gradients",
           "edge_correlation_gradients", "correlation_gradient", "correlation_surrogate", "radius_correlation"]

#: ε inside the logarithms of the radii (featMAP's and densMAP's value).
EPSILON = 1e-8
#: Each direction's original log radii are clipped to their [q, 1 − q] quantiles before standardising ...
WINSOR_QUANTILE = 0.01
#: ... quantiles taken over the non-flat directions only: σ_il > this × the largest singular value of the data.
FLAT_RELATIVE = 1e-6


@dataclass(frozen=True)
class AnisotropicTerm:
    """What the SGD needs to add −λ·Corr(r^o, r^e) (featMAP Eq. 17) in its last ``frac`` of epochs.

    frames : (m, L, 2) float64 embedded frames, ``frames[i, l]`` = v^e_il (unit vectors), or a
        :class:`concurrent.futures.Future` of them (:meth:`resolved` waits for it).
    r_o : (m, L) standardised original log radii r̃^o (:func:`original_radii`).
    lam : λ ≥ 0 (0: the term is never switched on).
    frac : q ∈ [0, 1], the fraction of final epochs in which the term is on.
    var_shift : added to Var(r^e) in the Pearson denominator.
    """

    frames: np.ndarray | Future
    r_o: np.ndarray
    lam: float
    frac: float
    var_shift: float = 0.1

    def resolved(self, m: int, dim: int, order: np.ndarray | None = None) -> "AnisotropicTerm":
        """This term with its frames as a checked (m, L, dim) float64 array (a pending Future is waited for); with
        ``order``, its frames and radii taken in that vertex order (row i is vertex ``order[i]``)."""
        frames = self.frames.result() if isinstance(self.frames, Future) else self.frames
        frames = np.asarray(frames)
        if frames.ndim != 3 or frames.shape[0] != m or frames.shape[2] != dim:
            raise UserError(f"the anisotropic frames must be (m, L, dim) = ({m}, L, {dim}), got {frames.shape}")
        r_o = np.asarray(self.r_o)
        if order is not None:
            frames, r_o = frames[order], r_o[order]
        return replace(self, frames=np.ascontiguousarray(frames, dtype=np.float64), r_o=r_o)

    def active(self, epoch: int, n_epochs: int) -> bool:
        """Whether the term is on in 0-based ``epoch``: λ > 0 and (epoch + 1)/n_epochs > 1 − q (densMAP's rule)."""
        return self.lam > 0.0 and (epoch + 1) / float(n_epochs) > 1.0 - self.frac


@dataclass(frozen=True)
class CorrelationStatistics:
    """The per-epoch frozen statistics of Supp. Eqs. 23/25: ``mean`` μ_l, ``std`` s_l, ``cov`` c_l (each (L,)) and
    the per-point weights ``weight`` w_il (m, L)."""

    mean: np.ndarray
    std: np.ndarray
    cov: np.ndarray
    weight: np.ndarray


def check_edges(Y: np.ndarray, head: np.ndarray, tail: np.ndarray, frames: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(Y, head, tail, frames)`` as float64 / int64 contiguous arrays, checked against each other: shapes,
    endpoints in range, and both directions of every pair stored (every vertex heads as many edges as it ends)."""
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    head = np.ascontiguousarray(head, dtype=np.int64)
    tail = np.ascontiguousarray(tail, dtype=np.int64)
    frames = np.ascontiguousarray(frames, dtype=np.float64)
    if Y.ndim != 2:
        raise UserError(f"Y must be a 2-D (m, dim) array, got shape {Y.shape}")
    m, dim = Y.shape
    if head.shape != tail.shape or head.ndim != 1:
        raise UserError(f"head and tail must be 1-D arrays of equal length, got {head.shape} and {tail.shape}")
    if head.size and (min(head.min(), tail.min()) < 0 or max(head.max(), tail.max()) >= m):
        raise UserError(f"edge endpoints must lie in [0, {m}), got head/tail out of range")
    if frames.ndim != 3 or frames.shape[0] != m or frames.shape[2] != dim:
        raise UserError(f"frames must have shape (m, L, dim) = ({m}, L, {dim}), got {frames.shape}")
    if not np.array_equal(np.bincount(head, minlength=m), np.bincount(tail, minlength=m)):
        raise UserError("the edges must store both directions of every pair (a vertex heads a different number of "
                         "edges than it ends)")
    return Y, head, tail, frames


def original_radii(singular_values: np.ndarray, n_directions: int = 2,
                   winsor: float = WINSOR_QUANTILE) -> tuple[np.ndarray, np.ndarray]:
    """Original per-direction log radii r^o_il = log(ε + σ_il²), l = 1..``n_directions`` (featMAP Sec. 3.3,
    footnote 4; Supp. Eq. 25).

    Returns ``(r_o, r_o_std)``: both (m, L); ``r_o`` winsorised at the ``winsor`` quantiles of each direction,
    ``r_o_std`` the same standardised to mean 0 and variance 1 per direction (a constant direction gives zeros).
    """
    sv = np.asarray(singular_values, dtype=np.float64)
    if sv.ndim != 2:
        raise UserError(f"singular_values must be a 2-D (m, s) array, got shape {sv.shape}")
    if sv.shape[1] < n_directions:
        raise UserError(f"need at least n_directions = {n_directions} singular values per point, got {sv.shape[1]}")
    if not 0.0 <= winsor < 0.5:
        raise UserError(f"winsor must be in [0, 0.5), got {winsor}")
    if not np.all(np.isfinite(sv)) or np.any(sv < 0):
        raise UserError("singular_values must be finite and non-negative")
    top = sv[:, :n_directions]
    r = np.log(EPSILON + top**2)
    if winsor > 0.0:
        flat = top <= FLAT_RELATIVE * sv.max() if sv.size else np.zeros(top.shape, bool)
        for l in range(n_directions):
            ok = r[~flat[:, l], l]
            lo, hi = np.quantile(ok if ok.size else r[:, l], [winsor, 1.0 - winsor])
            r[:, l] = np.clip(r[:, l], lo, hi)
    std = r.std(axis=0)
    centred = r - r.mean(axis=0)
    r_std = np.divide(centred, std, out=np.zeros_like(centred), where=std > 0)
    return r, r_std


@numba.njit(cache=True, nogil=True, fastmath=True)  # the layout runs it each epoch beside other stages
def _radius_sums(Y, head, tail, frames, a, b, phi_sum, proj_sum):  # pragma: no cover - jit
    # Both directions of every pair are stored, so edge (i → j) adds twice its pair's share to i alone, and the
    # pair's other direction does the same for j: only the head is written and only its frames read (the head
    # runs in order; 5× faster than writing both endpoints at 200,000 points).
    dim = Y.shape[1]
    n_dir = frames.shape[1]
    for e in range(head.shape[0]):
        i = head[e]
        j = tail[e]
        s = 0.0
        for d in range(dim):
            diff = Y[j, d] - Y[i, d]
            s += diff * diff
        phi = 2.0 / (1.0 + a * s ** b)
        phi_sum[i] += phi
        for l in range(n_dir):
            p = 0.0
            for d in range(dim):
                p += (Y[j, d] - Y[i, d]) * frames[i, l, d]
            proj_sum[i, l] += phi * p * p


def embedded_radii(Y: np.ndarray, head: np.ndarray, tail: np.ndarray, frames: np.ndarray, a: float,
                   b: float, *, checked: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Embedded per-direction radii of featMAP Eq. 13 on the stored edges (``head[e]``, ``tail[e]``: both
    directions of every pair of a symmetric graph, as :func:`cova.objectives.umap_sgd.umap_edges` stores them).

    Returns ``(W, R, r)``: W_i = Σ_{e∋i} φ_e (m,), R^e (m, L) and r^e = log(ε + R^e) (m, L), float64. A vertex
    without edges gets W = 0, R = 0. O(E·L·dim) time. ``checked``: the caller has already checked these arrays
    (float64 Y and frames, int64 edges) and the edges' directions; a layout does so once, not every epoch.
    """
    if not checked:
        Y, head, tail, frames = check_edges(Y, head, tail, frames)
    m = Y.shape[0]
    phi_sum = np.zeros(m)
    proj_sum = np.zeros((m, frames.shape[1]))
    _radius_sums(Y, head, tail, frames, float(a), float(b), phi_sum, proj_sum)
    R = np.divide(proj_sum, phi_sum[:, None], out=np.zeros_like(proj_sum), where=phi_sum[:, None] > 0)
    return phi_sum, R, np.log(EPSILON + R)


def correlation_statistics(r_e: np.ndarray, r_o: np.ndarray, var_shift: float = 0.1) -> CorrelationStatistics:
    """The frozen statistics μ_l, s_l, c_l and weights w_il (Supp. Eqs. 23, 25; module docstring) of the embedded
    log radii ``r_e`` (m, L) against the standardised original ones ``r_o`` (m, L)."""
    r_e = np.asarray(r_e, dtype=np.float64)
    r_o = np.asarray(r_o, dtype=np.float64)
    if r_e.shape != r_o.shape or r_e.ndim != 2:
        raise UserError(f"r_e and r_o must both be (m, L), got {r_e.shape} and {r_o.shape}")
    m = r_e.shape[0]
    if m < 2:
        raise UserError(f"the correlation needs at least 2 points, got m = {m}")
    if not var_shift >= 0.0:
        raise UserError(f"var_shift must be >= 0, got {var_shift}")
    mean = r_e.mean(axis=0)
    centred = r_e - mean
    std = np.sqrt(r_e.var(axis=0) + var_shift)
    if np.any(std <= 0):
        raise UserError("the embedded radii are constant and var_shift = 0: the correlation is undefined")
    cov = (centred * r_o).sum(axis=0) / m
    weight = r_o - cov * centred / std**2
    return CorrelationStatistics(mean=mean, std=std, cov=cov, weight=np.ascontiguousarray(weight))


def epoch_statistics(Y: np.ndarray, head: np.ndarray, tail: np.ndarray, term: AnisotropicTerm, a: float,
                     b: float, *, checked: bool = False) -> tuple[np.ndarray, np.ndarray, CorrelationStatistics]:
    """Everything the per-edge gradient freezes at the start of an epoch: ``(W, R^e, statistics)``
    (``checked`` as in :func:`embedded_radii`)."""
    W, R, r = embedded_radii(Y, head, tail, term.frames, a, b, checked=checked)
    return W, R, correlation_statistics(r, term.r_o, term.var_shift)


def _cache_aligned(shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float64 array starting on a 64-byte boundary (numpy guarantees 16): a 64-byte record then
    fills one cache line, not two (at 200,000 points the anisotropic epoch's edge part took 15% longer unaligned)."""
    size = int(np.prod(shape))
    raw = np.empty(size + 8)
    start = (-raw.ctypes.data % 64) // 8
    return raw[start:start + size].reshape(shape)


def vertex_records(frames: np.ndarray, W: np.ndarray, R: np.ndarray, statistics: CorrelationStatistics
                   ) -> np.ndarray:
    """What the per-edge gradient reads of a vertex, in one record per vertex (m, L, dim + 2): per direction l the
    frame vector v^e_il, the coefficient w_il / (s_l W_i (ε + R^e_il)) (0 where W_i = 0) and R^e_il. One record is
    64 bytes for L = dim = 2, so an endpoint costs the SGD one cache line instead of one per array (the 64-byte
    alignment of the array keeps it so)."""
    frames = np.asarray(frames, dtype=np.float64)
    m, n_dir, dim = frames.shape
    record = _cache_aligned((m, n_dir, dim + 2))
    record[:, :, :dim] = frames
    record[:, :, dim] = 0.0
    denom = W[:, None] * (EPSILON + R) * statistics.std[None, :]
    np.divide(statistics.weight, denom, out=record[:, :, dim], where=W[:, None] > 0)
    record[:, :, dim + 1] = R
    return record


@numba.njit(cache=True, nogil=True)
def _radius_gradient(z, s, phi, gfac, frames, i, l, W, R, out):  # pragma: no cover - jit
    """out = ∂r^e_il/∂z for an edge at vertex i with edge vector z (‖z‖² = s), φ and g = gfac·z."""
    dim = z.shape[0]
    p = 0.0
    for d in range(dim):
        p += z[d] * frames[i, l, d]
    if W[i] > 0.0:
        coef = phi / W[i] / (EPSILON + R[i, l])
    else:
        coef = 0.0
    for d in range(dim):
        out[d] = coef * (2.0 * p * frames[i, l, d] + (R[i, l] - p * p) * gfac * z[d])


@numba.njit(cache=True, nogil=True)
def _kernel_terms(z, a, b):  # pragma: no cover - jit
    """(s, φ, gfac) of edge vector z: s = ‖z‖², φ = 1/(1 + a s^b), g = gfac·z = ∂(−log φ)/∂z (one power)."""
    s = 0.0
    for d in range(z.shape[0]):
        s += z[d] * z[d]
    sb = s ** b
    denom = 1.0 + a * sb
    phi = 1.0 / denom
    gfac = 2.0 * a * b * sb / (s * denom) if s > 0.0 else 0.0
    return s, phi, gfac


@numba.njit(cache=True, nogil=True)
def edge_gradient(z, i, j, a, b, records, out):  # pragma: no cover - jit
    """out = G_e, the correlation gradient of edge e = (i → j) with respect to z = y_j − y_i (frozen statistics in
    ``records``, :func:`vertex_records`): Σ_l Σ_{x ∈ {i, j}} w_xl/s_l · ∂r^e_xl/∂z (module docstring).

    Called by the SGD kernel for every sampled positive edge.
    """
    dim = z.shape[0]
    s, phi, gfac = _kernel_terms(z, a, b)
    for d in range(dim):
        out[d] = 0.0
    for x in (i, j):
        for l in range(records.shape[1]):
            p = 0.0
            for d in range(dim):
                p += z[d] * records[x, l, d]
            coef = phi * records[x, l, dim]
            rest = (records[x, l, dim + 1] - p * p) * gfac
            for d in range(dim):
                out[d] += coef * (2.0 * p * records[x, l, d] + rest * z[d])


@numba.njit(cache=True)
def _all_radius_gradients(Y, head, tail, frames, a, b, W, R, out_i, out_j):  # pragma: no cover - jit
    dim = Y.shape[1]
    z = np.empty(dim)
    for e in range(head.shape[0]):
        i = head[e]
        j = tail[e]
        for d in range(dim):
            z[d] = Y[j, d] - Y[i, d]
        s, phi, gfac = _kernel_terms(z, a, b)
        for l in range(frames.shape[1]):
            _radius_gradient(z, s, phi, gfac, frames, i, l, W, R, out_i[e, l])
            _radius_gradient(z, s, phi, gfac, frames, j, l, W, R, out_j[e, l])


@numba.njit(cache=True)
def _all_edge_gradients(Y, head, tail, a, b, records, out):  # pragma: no cover - jit
    dim = Y.shape[1]
    z = np.empty(dim)
    for e in range(head.shape[0]):
        i = head[e]
        j = tail[e]
        for d in range(dim):
            z[d] = Y[j, d] - Y[i, d]
        edge_gradient(z, i, j, a, b, records, out[e])


def edge_radius_gradients(Y: np.ndarray, head: np.ndarray, tail: np.ndarray, frames: np.ndarray, a: float,
                          b: float) -> tuple[np.ndarray, np.ndarray]:
    """∂r^e_il/∂z_e and ∂r^e_jl/∂z_e for every stored edge e = (i → j), each (E, L, dim), with every edge vector
    z_e = y_j − y_i treated as its own variable (module docstring)."""
    Y, head, tail, frames = check_edges(Y, head, tail, frames)
    W, R, _ = embedded_radii(Y, head, tail, frames, a, b, checked=True)
    shape = (head.size, frames.shape[1], Y.shape[1])
    out_i, out_j = np.zeros(shape), np.zeros(shape)
    _all_radius_gradients(Y, head, tail, frames, float(a), float(b), W, R, out_i, out_j)
    return out_i, out_j


def edge_correlation_gradients(Y: np.ndarray, head: np.ndarray, tail: np.ndarray, term: AnisotropicTerm,
                               a: float, b: float,
                               statistics: tuple[np.ndarray, np.ndarray, CorrelationStatistics] | None = None
                               ) -> np.ndarray:
    """G_e (E, dim) for every stored edge, with the statistics frozen at ``Y`` (or the given ``statistics``, as
    returned by :func:`epoch_statistics`)."""
    Y, head, tail, frames = check_edges(Y, head, tail, term.frames)
    W, R, st = statistics if statistics is not None else epoch_statistics(Y, head, tail, replace(term, frames=frames),
                                                                          a, b, checked=True)
    out = np.zeros((head.size, Y.shape[1]))
    _all_edge_gradients(Y, head, tail, float(a), float(b), vertex_records(frames, W, R, st), out)
    return out


def correlation_gradient(Y: np.ndarray, head: np.ndarray, tail: np.ndarray, term: AnisotropicTerm, a: float,
                         b: float, statistics: tuple[np.ndarray, np.ndarray, CorrelationStatistics] | None = None
                         ) -> np.ndarray:
    """∂S/∂Y (m, dim) of the frozen-statistics surrogate: Σ_e G_e added at the tail and subtracted at the head."""
    G = edge_correlation_gradients(Y, head, tail, term, a, b, statistics)
    Y = np.asarray(Y)
    grad = np.zeros((Y.shape[0], Y.shape[1]))
    np.add.at(grad, np.asarray(tail, dtype=np.int64), G)
    np.subtract.at(grad, np.asarray(head, dtype=np.int64), G)
    return grad


def correlation_surrogate(Y: np.ndarray, head: np.ndarray, tail: np.ndarray, term: AnisotropicTerm, a: float,
                          b: float, statistics: CorrelationStatistics) -> float:
    """S(Y) of the module docstring with the frozen ``statistics`` (μ_l, s_l, c_l from another configuration)."""
    _, _, r = embedded_radii(Y, head, tail, term.frames, a, b)
    st = statistics
    terms = term.r_o * r - st.cov * (r - st.mean) ** 2 / (2.0 * st.std**2)
    return float((terms.sum(axis=0) / st.std).sum())


def radius_correlation(r_o: np.ndarray, r_e: np.ndarray) -> np.ndarray:
    """Pearson correlation of each direction l between ``r_o[:, l]`` and ``r_e[:, l]`` (featMAP Eq. 15); their sum
    is Corr(r^o, r^e) of Eq. 16. NaN for a constant direction."""
    r_o = np.asarray(r_o, dtype=np.float64)
    r_e = np.asarray(r_e, dtype=np.float64)
    if r_o.shape != r_e.shape or r_o.ndim != 2:
        raise UserError(f"r_o and r_e must both be (m, L), got {r_o.shape} and {r_e.shape}")
    a = r_o - r_o.mean(axis=0)
    b = r_e - r_e.mean(axis=0)
    den = np.sqrt((a * a).sum(axis=0) * (b * b).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (a * b).sum(axis=0) / den, np.nan)
