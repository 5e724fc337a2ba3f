"""UMAP's edge-sampled SGD layout (McInnes et al. 2018), with featMAP's anisotropic correlation term (featMAP
Sec. 3.3, Eq. 17; Supp. Sec. 6.1, Eq. 29) switched on in the last q·n_epochs epochs.

The loss is UMAP's cross-entropy (featMAP Eq. 12) between the fuzzy graph P and Q_ij = (1 + a‖y_i − y_j‖^{2b})^{-1}
(Eq. 11), optimised exactly as umap-learn 0.5 does (``umap.layouts.optimize_layout_euclidean``):

* the graph is pruned (edges with P_e < max P / n_epochs removed) and both directions of every pair are stored;
  edge e is processed every ``epochs_per_sample_e = max P / P_e`` epochs (umap-learn's ``make_epochs_per_sample``);
* a processed edge (i → j) moves y_i by α·clip(−2ab s^{b−1}/(1 + a s^b)·(y_i − y_j)) and y_j by the opposite
  (s = ‖y_i − y_j‖², clip to [−4, 4] per coordinate);
* then ⌊(n − next_neg_e)/(epochs_per_sample_e/negative_sample_rate)⌋ negative samples k (umap-learn's
  Tausworthe generator, one state per vertex) push y_i by α·clip(2γb/((0.001 + s)(1 + a s^b))·(y_i − y_k)); a
  negative sample on top of y_i (s = 0) does not move it, as in umap-learn 0.5.12;
* α_n = α_0 (1 − n/n_epochs) after epoch n.

With the anisotropic term (:class:`cova.objectives.anisotropic.AnisotropicTerm`) active in epoch n — λ > 0 and
(n + 1)/n_epochs > 1 − q — the frozen statistics are recomputed at the start of the epoch and each processed edge
adds, per coordinate and clipped on its own, α·clip(−λ Z/(m P_e)·G_e) to y_i and the opposite to y_j (G_e from
:func:`cova.objectives.anisotropic.edge_gradient`; Z = Σ_e P_e over the stored edges, m the number of vertices: the
densMAP scaling that undoes the edge sampling ∝ P_e). With λ = 0 (or q = 0) the kernel never enters that branch
and the layout is UMAP's.

Why not umap-learn's optimiser: its only extra term is densMAP's isotropic radius; featMAP's per-direction
radii need the frames V^e_i inside the edge loop. The kernel below restates umap-learn's epoch (same arithmetic
in float32 positions, same random stream) so that the λ = 0 path stays UMAP; the tests compare the two.

Single-threaded numba (``cache=True``, no ``parallel``): deterministic for a fixed seed. The epoch kernel releases
the GIL, so a caller may run other work (featMAP's tangent embedding) in another thread meanwhile. The UMAP part is compiled
with ``fastmath`` as umap-learn compiles it; with the same graph, initial layout and random state the λ = 0 layout
is bit for bit umap-learn's (tested). Memory O(E) for the edge
arrays and O(m·L) for the frozen statistics; time O(n_epochs · E · (1 + negative_sample_rate)).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future

import numba
import numpy as np
import scipy.sparse as sp

from ..errors import UserError
from ..jit import cache_library_kernels
from ..permutations import inverse_permutation, unpermute_rows
from ..progress import Progress
from .anisotropic import AnisotropicTerm, check_edges, edge_gradient, epoch_statistics, vertex_records

__all__ = ["EdgeList", "umap_edges", "tsw_spectral_layout", "initial_layout", "rng_state_from", "optimize_layout"]

log = logging.getLogger("cova")

#: umap-learn's bounds of the seed drawn for its random stream.
_INT32_MIN = np.iinfo(np.int32).min + 1
_INT32_MAX = np.iinfo(np.int32).max - 1


class EdgeList:
    """The pruned graph as umap-learn's optimiser sees it: ``head``, ``tail`` (int32), ``weight`` P_e (float64) and
    ``epochs_per_sample`` (float64), both directions of every pair, in COO order of the symmetric graph."""

    def __init__(self, head: np.ndarray, tail: np.ndarray, weight: np.ndarray, epochs_per_sample: np.ndarray,
                 n_vertices: int):
        self.head = head
        self.tail = tail
        self.weight = weight
        self.epochs_per_sample = epochs_per_sample
        self.n_vertices = int(n_vertices)

    @property
    def n_edges(self) -> int:
        return int(self.head.size)

    def permuted(self, order: np.ndarray) -> "EdgeList":
        """These edges with vertex ``order[i]`` renamed i, in head-then-tail order: the edges
        :func:`umap_edges` gives for the permuted graph P[order][:, order]."""
        order = np.asarray(order, dtype=np.int64)
        if order.shape != (self.n_vertices,) or not np.array_equal(np.sort(order), np.arange(self.n_vertices)):
            raise UserError(f"order must be a permutation of the {self.n_vertices} vertices")
        rank = inverse_permutation(order)
        head, tail = rank[self.head], rank[self.tail]
        by = np.lexsort((tail, head))
        return EdgeList(head=head[by].astype(np.int32), tail=tail[by].astype(np.int32), weight=self.weight[by],
                        epochs_per_sample=self.epochs_per_sample[by], n_vertices=self.n_vertices)

    def graph(self) -> sp.coo_matrix:
        """The pruned graph as a COO matrix (what the spectral initialisation reads)."""
        return sp.coo_matrix((self.weight, (self.head, self.tail)), shape=(self.n_vertices, self.n_vertices))


def umap_edges(P: sp.spmatrix, n_epochs: int) -> EdgeList:
    """Prune ``P`` and schedule its edges as umap-learn's ``simplicial_set_embedding`` does: edges with
    P_e < max P / n_epochs are dropped (for n_epochs ≤ 10 the threshold uses umap-learn's default epoch count:
    500 for m ≤ 10,000, else 200), and ``epochs_per_sample`` comes from ``umap.umap_.make_epochs_per_sample``."""
    from umap.umap_ import make_epochs_per_sample

    cache_library_kernels("umap")

    if not sp.issparse(P) or P.shape[0] != P.shape[1]:
        raise UserError(f"P must be a square sparse matrix, got {type(P).__name__} of shape {np.shape(P)}")
    n_epochs = int(n_epochs)
    if n_epochs < 1:
        raise UserError(f"n_epochs must be >= 1, got {n_epochs}")
    graph = sp.coo_matrix(P, dtype=np.float32, copy=True)
    graph.sum_duplicates()
    if graph.nnz == 0:
        raise UserError("P has no edges: the layout needs a connected neighbour graph")
    m = graph.shape[0]
    threshold_epochs = n_epochs if n_epochs > 10 else (500 if m <= 10_000 else 200)
    graph.data[graph.data < graph.data.max() / float(threshold_epochs)] = 0.0
    graph.eliminate_zeros()
    eps = make_epochs_per_sample(graph.data, n_epochs)
    return EdgeList(head=graph.row.astype(np.int32), tail=graph.col.astype(np.int32),
                    weight=graph.data.astype(np.float64), epochs_per_sample=np.asarray(eps, dtype=np.float64),
                    n_vertices=m)


def tsw_spectral_layout(X: np.ndarray, graph: sp.spmatrix, n_components: int,
                        random_state: np.random.RandomState) -> np.ndarray:
    """umap-learn's truncated-SVD-warmed LOBPCG start (``umap.spectral.tswspectral_layout``) on every connected
    component of ``graph``, the components placed as umap-learn places them (``multi_component_layout``).

    Written out because umap-learn's own multi-component path passes neither the solver nor the warm start on: a
    disconnected graph always gets ARPACK (``eigsh``) per component, whatever ``tswspectral`` asks for. ARPACK keeps
    √m Lanczos vectors (m^1.5 memory: 8 GB at 10⁶ vertices) and can stall on a small eigengap (umap-learn issue
    #76; its remedy, PR #924, is this warm-started LOBPCG), while LOBPCG holds a block of n_components + 1 vectors.
    """
    from scipy.sparse.csgraph import connected_components
    from sklearn.metrics import pairwise_distances
    from umap.spectral import component_layout, tswspectral_layout

    graph = sp.csr_matrix(graph)
    n_parts, labels = connected_components(graph)
    if n_parts == 1:
        return np.asarray(tswspectral_layout(X, graph, n_components, random_state, method="lobpcg"))
    if n_parts > 2 * n_components:
        meta = component_layout(X, n_parts, labels, n_components, random_state, metric="euclidean")
    else:
        k = int(np.ceil(n_parts / 2.0))
        base = np.hstack([np.eye(k), np.zeros((k, n_components - k))])
        meta = np.vstack([base, -base])[:n_parts]
    result = np.empty((graph.shape[0], n_components), dtype=np.float32)
    for label in range(n_parts):
        rows = np.flatnonzero(labels == label)
        distances = pairwise_distances([meta[label]], meta)
        half_gap = distances[distances > 0.0].min() / 2.0
        if rows.size < 2 * n_components or rows.size <= n_components + 1:
            part = random_state.uniform(low=-half_gap, high=half_gap, size=(rows.size, n_components))
        else:
            part = np.asarray(tswspectral_layout(None, graph[rows][:, rows], n_components, random_state,
                                                 method="lobpcg"))
            part = part * (half_gap / np.max(np.abs(part)))
        result[rows] = part + meta[label]
    return result


def initial_layout(X: np.ndarray, edges: EdgeList, init: str, random_state: np.random.RandomState,
                   n_components: int = 2) -> np.ndarray:
    """The starting layout (float32, (m, n_components), each coordinate in [0, 10]) as umap-learn builds it.

    ``"spectral"``: ``umap.spectral.spectral_layout`` of the pruned graph (the data ``X`` is read only to place
    disconnected components); ``"tswspectral"``: :func:`tsw_spectral_layout` of it; either scaled so that
    max|·| = 10 with N(0, 10⁻⁴) noise (``umap.umap_.noisy_scale_coords``); ``"random"``: uniform in [−10, 10].
    Each is then rescaled to [0, 10] per coordinate. ``random_state`` is advanced exactly as umap-learn advances
    its own.
    """
    if init in ("spectral", "tswspectral"):
        from umap.spectral import spectral_layout
        from umap.umap_ import noisy_scale_coords

        cache_library_kernels("umap")

        layout = spectral_layout if init == "spectral" else tsw_spectral_layout
        Y = layout(X, edges.graph(), n_components, random_state)
        Y = noisy_scale_coords(Y, random_state, max_coord=10, noise=0.0001)
    elif init == "random":
        Y = random_state.uniform(low=-10.0, high=10.0, size=(edges.n_vertices, n_components)).astype(np.float32)
    else:
        raise UserError(f"init must be 'spectral', 'tswspectral' or 'random', got {init!r}")
    span = np.max(Y, 0) - np.min(Y, 0)
    if np.any(span <= 0) or not np.all(np.isfinite(Y)):
        raise UserError("the initial layout is degenerate (a constant or non-finite coordinate)")
    return (10.0 * (Y - np.min(Y, 0)) / span).astype(np.float32, order="C")


def rng_state_from(random_state: np.random.RandomState) -> np.ndarray:
    """The 3-word Tausworthe state umap-learn draws after the initialisation."""
    return random_state.randint(_INT32_MIN, _INT32_MAX, 3).astype(np.int64)


@numba.njit(cache=True)
def _tau_rand_int(state):  # pragma: no cover - jit
    # umap-learn's generator (umap.utils.tau_rand_int), restated so that this module's kernels can be cached:
    # the same stream keeps the λ = 0 layout identical to umap-learn's.
    state[0] = (((state[0] & 4294967294) << 12) & 0xFFFFFFFF) ^ ((((state[0] << 13) & 0xFFFFFFFF) ^ state[0]) >> 19)
    state[1] = (((state[1] & 4294967288) << 4) & 0xFFFFFFFF) ^ ((((state[1] << 2) & 0xFFFFFFFF) ^ state[1]) >> 25)
    state[2] = (((state[2] & 4294967280) << 17) & 0xFFFFFFFF) ^ ((((state[2] << 3) & 0xFFFFFFFF) ^ state[2]) >> 11)
    return np.int32(state[0] ^ state[1] ^ state[2])


@numba.njit(cache=True, fastmath=True)
def _clip(val):  # pragma: no cover - jit
    if val > 4.0:
        return 4.0
    if val < -4.0:
        return -4.0
    return val


@numba.njit(cache=True, fastmath=True, locals={"result": numba.float32, "diff": numba.float32})
def _rdist(x, y):  # pragma: no cover - jit
    result = 0.0
    for d in range(x.shape[0]):
        diff = x[d] - y[d]
        result += diff * diff
    return result


@numba.njit(cache=True, fastmath=True, nogil=True)
def _epoch(Y, head, tail, n_vertices, epochs_per_sample, a, b, rng_state_per_sample, gamma, alpha,
           epochs_per_negative_sample, epoch_of_next_negative_sample, epoch_of_next_sample, n,
           corr_on, corr_scale, weight, records):  # pragma: no cover - jit
    dim = Y.shape[1]
    z = np.empty(dim)
    G = np.zeros(dim)
    for e in range(epochs_per_sample.shape[0]):
        if epoch_of_next_sample[e] <= n:
            j = head[e]
            k = tail[e]
            current = Y[j]
            other = Y[k]
            dist_squared = _rdist(current, other)

            scale = 0.0
            if corr_on:
                for d in range(dim):
                    z[d] = np.float64(other[d]) - np.float64(current[d])
                edge_gradient(z, j, k, a, b, records, G)
                scale = corr_scale / weight[e]

            if dist_squared > 0.0:
                grad_coeff = -2.0 * a * b * pow(dist_squared, b - 1.0)
                grad_coeff /= a * pow(dist_squared, b) + 1.0
            else:
                grad_coeff = 0.0

            for d in range(dim):
                grad_d = _clip(grad_coeff * (current[d] - other[d]))
                if corr_on:
                    grad_d += _clip(-scale * G[d])
                current[d] += grad_d * alpha
                other[d] += -grad_d * alpha

            epoch_of_next_sample[e] += epochs_per_sample[e]

            n_neg_samples = int((n - epoch_of_next_negative_sample[e]) / epochs_per_negative_sample[e])

            for p in range(n_neg_samples):
                k = _tau_rand_int(rng_state_per_sample[j]) % n_vertices
                other = Y[k]
                dist_squared = _rdist(current, other)
                if dist_squared > 0.0:
                    grad_coeff = 2.0 * gamma * b
                    grad_coeff /= (0.001 + dist_squared) * (a * pow(dist_squared, b) + 1)
                elif j == k:
                    continue
                else:
                    grad_coeff = 0.0
                for d in range(dim):
                    if grad_coeff > 0.0:
                        grad_d = _clip(grad_coeff * (current[d] - other[d]))
                    else:
                        grad_d = 0.0
                    current[d] += grad_d * alpha

            epoch_of_next_negative_sample[e] += n_neg_samples * epochs_per_negative_sample[e]


def optimize_layout(Y: np.ndarray, edges: EdgeList, n_epochs: int, a: float, b: float, rng_state: np.ndarray, *,
                    learning_rate: float = 1.0, negative_sample_rate: int = 5, gamma: float = 1.0,
                    anisotropic: AnisotropicTerm | None = None, name: str = "layout",
                    idle: threading.Event | None = None, order: np.ndarray | None = None) -> np.ndarray:
    """Run ``n_epochs`` epochs of UMAP's SGD (featMAP's with ``anisotropic``) from ``Y`` and return the layout
    (float32, (m, dim); ``Y`` is copied, not modified).

    ``anisotropic.frames`` may be a :class:`concurrent.futures.Future`: it is waited for only when the term switches
    on, so the embedded frames can be computed while the first epochs run; ``idle``, if given, is set while this
    thread waits for them (the stage computing them may then use this thread's core). ``order``: a permutation of
    the vertices (e.g. a locality order of the graph) in which the epochs visit them: the edges, ``Y`` and the
    anisotropic term are permuted for the epochs and the layout comes back in the input's order. The visit order
    changes which vertices the negative samples draw, so it gives another layout of the same objective.
    ``rng_state``: the 3 int64 words of the negative-sampling stream (:func:`rng_state_from`). Each vertex gets its
    own stream seeded from it and the bits of its first initial coordinate (umap-learn's rule). The epochs report to
    a :class:`~cova.progress.Progress` named ``name`` (and a line says when the anisotropic term switches on).
    """
    Y = np.array(Y, dtype=np.float32, order="C", copy=True)
    if Y.ndim != 2 or Y.shape[0] != edges.n_vertices:
        raise UserError(f"Y must be (m, dim) with m = {edges.n_vertices}, got {Y.shape}")
    n_epochs = int(n_epochs)
    if n_epochs < 1:
        raise UserError(f"n_epochs must be >= 1, got {n_epochs}")
    m = edges.n_vertices
    if order is not None:
        edges = edges.permuted(order)
        Y = Y[order]
    a = float(a)
    b = float(b)
    epochs_per_sample = edges.epochs_per_sample
    epochs_per_negative_sample = epochs_per_sample / float(negative_sample_rate)
    epoch_of_next_negative_sample = epochs_per_negative_sample.copy()
    epoch_of_next_sample = epochs_per_sample.copy()
    rng_state = np.asarray(rng_state, dtype=np.int64)
    rng_state_per_sample = (np.full((m, rng_state.size), rng_state, dtype=np.int64)
                            + Y[:, 0].astype(np.float64).view(np.int64).reshape(-1, 1))
    corr_scale = 0.0
    records = np.zeros((1, 1, Y.shape[1] + 2))
    if anisotropic is not None:
        corr_scale = float(anisotropic.lam) * float(edges.weight.sum()) / m
        if not isinstance(anisotropic.frames, Future):  # frames at hand are checked before any epoch runs
            anisotropic = anisotropic.resolved(m, Y.shape[1], order)
    head = edges.head.astype(np.int64)
    tail = edges.tail.astype(np.int64)
    alpha = float(learning_rate)
    was_on = False
    progress = Progress(f"{name}: UMAP epochs", n_epochs).start()
    for n in range(n_epochs):
        corr_on = anisotropic is not None and anisotropic.active(n, n_epochs)
        if corr_on:
            if not was_on:
                if isinstance(anisotropic.frames, Future):  # computed elsewhere: wait for them only now
                    waits = idle is not None and not anisotropic.frames.done()
                    if waits:
                        idle.set()
                    try:
                        anisotropic = anisotropic.resolved(m, Y.shape[1], order)
                    finally:
                        if waits:
                            idle.clear()
                check_edges(Y, head, tail, anisotropic.frames)  # once: the epochs below skip the checks
                log.info("%s: anisotropic term on from epoch %d of %d (λ = %g)", name, n, n_epochs,
                         anisotropic.lam)
                was_on = True
            W, R, stats = epoch_statistics(Y.astype(np.float64), head, tail, anisotropic, a, b, checked=True)
            records = vertex_records(anisotropic.frames, W, R, stats)
        _epoch(Y, edges.head, edges.tail, m, epochs_per_sample, a, b, rng_state_per_sample, float(gamma), alpha,
               epochs_per_negative_sample, epoch_of_next_negative_sample, epoch_of_next_sample, n,
               corr_on, corr_scale, edges.weight, records)
        alpha = float(learning_rate) * (1.0 - float(n) / float(n_epochs))
        progress.tick()
    progress.done()
    if not np.all(np.isfinite(Y)):
        raise FloatingPointError(f"{name}: the layout diverged (non-finite coordinates)")
    return Y if order is None else unpermute_rows(Y, order)

