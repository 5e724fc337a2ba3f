"""featMAP (Yang, Sun, Gong & Yu, "Interpretable dimensionality reduction by feature preserving manifold
approximation and projection", arXiv 2211.09321): UMAP's graph and layout, local tangent spaces by weighted local
SVD, their 2-D embedding, and an anisotropic radius-correlation term in the layout loss.

Pipeline (featMAP Secs. 3.1–3.3):

1. optional truncated SVD of X to ``reduce_dim`` components when n > ``reduce_dim`` (the authors' preprocessing;
   the paper states none). Everything below runs in that reduced space R^p; ``components_`` (p, n) maps back;
2. UMAP's fuzzy kNN graph P (Eq. 1; :func:`cova.affinity.fuzzy.fuzzy_graph`);
3. weighted local SVD at every point (Eq. 2, weights P_ij normalised per point): singular values σ_il and the
   tangent frames v_il (:func:`cova.affinity.tangent.local_svd`), sign-aligned along the kNN graph;
   ``intrinsic_dim_`` = the number of singular values holding 90% of Σσ² (footnote 3);
4. the tangent-space embedding (Sec. 3.2): a 2×2 frame V^e_i = [v^e_i1, v^e_i2] per point (``tangent_embed``);
5. the layout: UMAP's cross-entropy (Eq. 12) by UMAP's edge-sampled SGD, with −λ·Corr(r^o, r^e) (Eqs. 13–17)
   added in the last ``feat_frac`` of the epochs (:mod:`cova.objectives.umap_sgd`,
   :mod:`cova.objectives.anisotropic`); λ = 0 is UMAP;
6. interpretation outputs: feature importance (Def. 3.1, Eq. 3) and per-feature loading arrows in the embedded
   frames, the per-direction radii and their correlation, and the authors' "variation embedding".

Why featMAP's layout is not taken from a library: umap-learn's optimiser has densMAP's isotropic radius term only,
and the per-direction radii need the embedded frames V^e_i inside its edge loop. The authors' package (featuremap,
a fork of umap-learn's optimiser) is not a pipeline dependency, replaces the paper's tangent embedding by its own,
and pads data sets under 1,000 points with synthetic Gaussian rows. The layout kernel therefore restates
umap-learn's epoch (bit for bit at λ = 0) and adds the term.

Tangent embedding modes (``tangent_embed``):

- ``"tsne_flat"`` (default; featMAP Supp. Sec. 6.2): the flattened, sign-aligned top-2 frames [v_i1; v_i2] ∈ R^{2p}
  are embedded by the project's t-SNE (:class:`cova.methods.sne.tsne.TSNE`, perplexity 30, PCA initialisation) with
  the cosine distance, the output is centred and normalised to u_i, and V^e_i = [u_i, R_90 u_i]. Our t-SNE builds
  its affinities from Euclidean distances, so the rows are normalised to unit length first: then
  ‖a − b‖² = 2(1 − cos(a, b)), the same neighbours as the cosine distance and a Gaussian kernel on it (a
  cosine-metric t-SNE such as openTSNE's would square the cosine distance in the kernel; the neighbour sets are
  the same). Above 50 dimensions the normalised rows are reduced to their first 50 principal components before the
  t-SNE (:data:`TSNE_PCA`), as t-SNE inputs usually are and as the authors reduce the frames before their own
  tangent embedding; the paper gives no t-SNE settings. The 90° completion of the single t-SNE direction into an
  orthonormal frame is our assumption (the paper's Eq. 8 needs a d'×d' frame);
- ``"umap_per_direction"`` (the authors' package featuremap 0.0.5): for l = 1, 2, PCA (≤ 50 components) of the
  smoothed v_il over all points, then UMAP (our layout code at λ = 0, umap-learn's algorithm) to 2-D with the
  estimator's n_neighbors / min_dist / n_epochs, rows normalised (not centred, as the package does); the two
  directions are not orthogonalised;
- ``"identity"``: V^e_i = I₂ (an ablation; the authors' current optimiser uses it).

Memory at m = 70,000, n = 784 (Fashion-MNIST), p = 100, k = 15: X itself 0.44 GB (float64) and its reduction
56 MB; P and the kNN table O(m·k) ≈ 25 MB; the local SVD computes the singular values, then only the top
max(2, median intrinsic dimension) frames in float64 (≈ 56 MB per frame), which the smoothing uses as one of its two
work stacks (the top two are copied apart first); ``tangent_frames_`` and ``smoothed_frames_`` (m, 2, p) float32 ≈ 56 MB
each; ``singular_values_`` (m, 14) ≈ 8 MB; ``feature_importance_`` (m, n) float32 ≈ 0.22 GB;
``feature_loadings_`` (m, n, 2) float32 ≈ 0.44 GB (both filled in blocks of :data:`OUTPUT_BLOCK` points, so the
float64 temporaries stay ≈ 0.1 GB); ``components_`` (p, n) ≈ 0.6 MB; the t-SNE of the flattened frames
(m, 2p) ≈ 0.11 GB plus openTSNE's O(m·90) affinities; the SGD's edge arrays O(m·k) ≈ 0.1 GB. No m×m array is
ever formed. Measured on 10,000 MNIST test images: ≈ 1.0 GB peak resident memory, 81 s on one core.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..affinity.fuzzy import fuzzy_graph
from ..affinity.graphs import locality_order
from ..affinity.tangent import (
    align_signs,
    feature_importance,
    feature_loadings,
    intrinsic_dimension,
    local_svd,
    reduce_features,
    smooth_frames,
)
from ..checks import check_matrix
from ..constraints import NON_NEGATIVE, POSITIVE, POSITIVE_INT, SEED, UNIT, Options, StrOptions, integer
from ..errors import UserError
from ..inputs import Inputs
from ..objectives.anisotropic import AnisotropicTerm, embedded_radii, original_radii, radius_correlation
from ..objectives.umap_sgd import initial_layout, optimize_layout, rng_state_from, umap_edges
from .base import Embedder, neighbours_below_samples
from .sne.tsne import TSNE

__all__ = ["FeatMAP", "frames_from_directions", "SMOOTH_TOL", "SMOOTH_PATIENCE", "SMOOTH_MAX_ITER",
           "INTRINSIC_TAU"]

log = logging.getLogger("cova")

#: Fraction of Σσ² the intrinsic dimension must hold (featMAP footnote 3; the authors' threshold).
INTRINSIC_TAU = 0.9
#: Automatic smoothing stops once the per-feature local norms change by at most this (relative Frobenius norm) ...
SMOOTH_TOL = 0.01
#: ... in this many consecutive iterations (the authors' package's "auto_delta_patience" rule) ...
SMOOTH_PATIENCE = 2
#: ... or after this many iterations (a safety bound the package does not have).
SMOOTH_MAX_ITER = 100
#: Points per block when the feature importance and loadings are mapped back to the n features.
OUTPUT_BLOCK = 4096
#: Perplexity of the t-SNE of the flattened frames (tangent_embed="tsne_flat"); lowered for tiny data.
TSNE_PERPLEXITY = 30.0
#: ... whose input, the unit-normalised flattened frames, is first reduced to this many principal components (the
#: usual t-SNE preprocessing, and the authors' own before their tangent embedding).
TSNE_PCA = 50
#: Epochs of the variation embedding: umap-learn's defaults (up to 10,000 points, and above), as the authors ran it.
VARIATION_EPOCHS_SMALL = 500
VARIATION_EPOCHS_LARGE = 200
#: Above this many points a layout (featMAP's and its variation embedding's) takes the path that scales: its spectral
#: start solves the eigenproblem by LOBPCG warmed by a truncated SVD, per connected component
#: (``umap_sgd.tsw_spectral_layout``), not by umap-learn's ARPACK (√m Lanczos vectors: m^1.5 memory; it took 382 s
#: on the largest component of the variation graph at 10⁶, LOBPCG 13.8 s), and its epochs visit the vertices in the
#: graph's locality order (``locality_order``), so an edge's endpoints and records are mostly in cache.
LARGE_POINTS = 100_000


def spectral_start(m: int) -> str:
    """The spectral start of a layout of ``m`` points: ``"spectral"`` (umap-learn's) up to :data:`LARGE_POINTS`,
    ``"tswspectral"`` above."""
    return "spectral" if m <= LARGE_POINTS else "tswspectral"


def visit_order(P: sp.spmatrix) -> np.ndarray | None:
    """The vertex order of a layout's epochs on the graph ``P``: its locality order above :data:`LARGE_POINTS`
    vertices, else ``None`` (the input's order, as umap-learn visits them)."""
    return locality_order(P) if P.shape[0] > LARGE_POINTS else None


def frames_from_directions(u: np.ndarray) -> np.ndarray:
    """Orthonormal 2×2 frames [u_i, R_90 u_i] (m, 2, 2) from 2-D directions ``u`` (m, 2), normalised first; a zero
    row becomes the identity frame."""
    u = np.asarray(u, dtype=np.float64)
    norm = np.linalg.norm(u, axis=1, keepdims=True)
    unit = np.divide(u, norm, out=np.tile([1.0, 0.0], (u.shape[0], 1)), where=norm > 0)
    frames = np.empty((u.shape[0], 2, 2))
    frames[:, 0] = unit
    frames[:, 1, 0] = -unit[:, 1]
    frames[:, 1, 1] = unit[:, 0]
    return frames


def _variation_norms(frames: np.ndarray, d: int) -> np.ndarray:
    """Per-feature norms over the top ``d`` frames: sqrt(Σ_{l<d} v_il²) (m, p)."""
    top = frames[:, :d, :]
    return np.sqrt(np.einsum("ilh,ilh->ih", top, top))


def _fulfil(future: Future, work: Callable[[], Any]) -> None:
    """Run ``work`` and put its result (or its exception) into ``future``."""
    try:
        future.set_result(work())
    except BaseException as err:  # handed to whoever waits for the result
        future.set_exception(err)


def min_dist_within_spread(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """The rule of ``min_dist``: UMAP's curve (1 + a d^{2b})^{-1} is fitted to be flat up to min_dist within a
    spread of ``spread``, so min_dist ≤ spread."""
    if options["min_dist"] > options["spread"]:
        return "min_dist", f"UMAP's curve needs min_dist ≤ spread; allowed: at most spread = {options['spread']!r}"
    return None


class FeatMAP(Embedder):
    """featMAP (arXiv 2211.09321): UMAP with an anisotropic local-radius correlation term and local tangent-space
    interpretation outputs. See the module docstring for the pipeline, the tangent-embedding modes and memory.

    Parameters (the paper's values as defaults)
    ----------
    n_neighbors : k of the fuzzy graph, the local SVD and the radii (the point itself included; 15).
    n_components : 2 (the only embedding dimension featMAP's 2×2 frames support).
    min_dist, spread : UMAP's; a, b of Q = (1 + a d^{2b})^{-1} from ``umap.umap_.find_ab_params(spread, min_dist)``.
    n_epochs : SGD epochs (500); edges with P < max P / n_epochs are pruned, as in UMAP.
    learning_rate : α_0 of UMAP's linearly decaying learning rate (1.0).
    negative_sample_rate : UMAP's negative samples per positive sample (5).
    feat_lambda : λ ≥ 0 of Eq. 17 (0.5); 0 gives UMAP exactly.
    feat_frac : q, the fraction of final epochs with the correlation term on (0.3).
    var_shift : added to Var(r^e) in the Pearson denominator (0.1, as densMAP).
    tangent_embed : ``"tsne_flat"``, ``"umap_per_direction"`` or ``"identity"`` (module docstring).
    reduce_dim : truncated SVD to this many components when the data has more features (100, the authors'
        preprocessing); ``None`` keeps the features.
    smooth_iter : graph-smoothing iterations of the frames for ``smoothed_frames_`` and the variation embedding;
        ``None`` (default) stops as the authors' package does: when the per-feature local norms change by at most
        1% (relative Frobenius norm) in 2 consecutive iterations (at most 100 iterations); 0 = no smoothing.
    init : ``"spectral"`` (umap-learn's spectral layout, scaled to max|·| = 10 plus N(0, 10⁻⁴) noise; above
        :data:`LARGE_POINTS` points its eigenvectors come from LOBPCG warmed by a truncated SVD) or
        ``"random"``; either is rescaled to [0, 10] per coordinate.
    random_state : seed of the SVD, the kNN search, the t-SNE / UMAP runs, the initial layout and the SGD.
    n_jobs : threads of the kNN search and the local SVD, and of the five stages after it (tangent embedding, frame
        smoothing, layout, variation embedding, feature importance and loadings), which run side by side on that
        many threads; each stage is single-threaded but the t-SNE of the frames, which also takes the layout's
        thread while the layout waits for it (openTSNE's result does not depend on its threads), so only the kNN
        search's result can depend on n_jobs (when it uses NN-descent).

    Fitted attributes
    -----------------
    embedding_ (m, 2); singular_values_ (m, s) σ_il descending (s = min(k − 1, p)); intrinsic_dim_ (m,);
    tangent_frames_ (m, 2, p) float32 sign-aligned v_i1, v_i2 in the reduced space; smoothed_frames_ (m, 2, p)
    float32; components_ (p, n) (empty (0, n) when not reduced); frame_embedding_ (m, 2, 2) V^e_i, row l = v^e_il;
    feature_importance_ (m, n) float32, Eq. 3 with d = 2 (for another d recompute the frames with
    ``cova.affinity.tangent.local_svd(..., n_frames=d)`` on the reduced data and pass them with ``components_`` to
    ``cova.affinity.tangent.feature_importance``); feature_loadings_ (m, n, 2) float32, the loading arrow
    a_h = Σ_l v_il^{f_h} v^e_il of every feature in embedding coordinates; variation_embedding_ (m, 2), the
    authors' "variation embedding": UMAP (same n_neighbors, min_dist, spread, seed; umap-learn's default epoch
    count; our layout code at λ = 0, which is umap-learn's algorithm) on the per-coordinate
    norms sqrt(Σ_{l≤d} v_il²) of the smoothed frames in the working space (the reduced one when ``reduce_dim``
    applies, as in the authors' package), d = the median intrinsic dimension (the package's own count is one
    less, an off-by-one not copied);
    radius_original_ (m, 2) r^o (winsorised log σ²), radius_embedded_ (m, 2) r^e of the final layout,
    radius_correlation_ (2,) their Pearson correlation per direction; smooth_iter_ (the iterations run).
    """

    _parameter_constraints = {
        "n_neighbors": [integer(3, None)],
        "n_components": [Options(Integral, {2})],
        "min_dist": NON_NEGATIVE,
        "spread": POSITIVE,
        "n_epochs": POSITIVE_INT,
        "learning_rate": POSITIVE,
        "negative_sample_rate": POSITIVE_INT,
        "feat_lambda": NON_NEGATIVE,
        "feat_frac": UNIT,
        "var_shift": NON_NEGATIVE,
        "tangent_embed": [StrOptions({"tsne_flat", "umap_per_direction", "identity"})],
        "reduce_dim": [integer(2, None), None],
        "smooth_iter": [integer(0, None), None],
        "init": [StrOptions({"spectral", "random"})],
        "random_state": SEED,
        "n_jobs": [integer(1, None)],
    }
    _option_rules = (min_dist_within_spread,
                     neighbours_below_samples("FeatMAP's neighbour search needs more samples than n_neighbors"))
    required_inputs = ("X",)
    extra_outputs = ("singular_values_", "intrinsic_dim_", "tangent_frames_", "smoothed_frames_", "components_",
                     "frame_embedding_", "feature_importance_", "feature_loadings_", "variation_embedding_",
                     "radius_original_", "radius_embedded_", "radius_correlation_")

    def __init__(self, n_neighbors: int = 15, n_components: int = 2, min_dist: float = 0.1, spread: float = 1.0,
                 n_epochs: int = 500, learning_rate: float = 1.0, negative_sample_rate: int = 5,
                 feat_lambda: float = 0.5, feat_frac: float = 0.3, var_shift: float = 0.1,
                 tangent_embed: str = "tsne_flat", reduce_dim: int | None = 100, smooth_iter: int | None = None,
                 init: str = "spectral", random_state: int = 0, n_jobs: int = 1):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.min_dist = min_dist
        self.spread = spread
        self.n_epochs = n_epochs
        self.learning_rate = learning_rate
        self.negative_sample_rate = negative_sample_rate
        self.feat_lambda = feat_lambda
        self.feat_frac = feat_frac
        self.var_shift = var_shift
        self.tangent_embed = tangent_embed
        self.reduce_dim = reduce_dim
        self.smooth_iter = smooth_iter
        self.init = init
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------------------------------------------------
    def _check_data(self, X: Any) -> np.ndarray:
        X = check_matrix(X, "X", contiguous=True)
        if X.shape[1] < 2:  # n_neighbors ≥ 3 (two directions from k − 1 neighbours) and < m: the declaration
            raise UserError(f"FeatMAP needs at least 2 features (two local principal directions), got {X.shape[1]}")
        return X

    def _smooth(self, frames: np.ndarray, knn: np.ndarray, P: Any, d_var: int) -> tuple[np.ndarray, int]:
        """Graph-smoothed frames and the number of iterations run (``smooth_iter`` or the package's stop rule);
        ``frames`` is used as a work stack (overwritten)."""
        n_aligned = min(2, frames.shape[1])
        if self.smooth_iter is not None:
            n_iter = int(self.smooth_iter)
            if n_iter == 0:
                return frames, 0
            return smooth_frames(frames, knn, P, n_iter, n_aligned=n_aligned, overwrite=True), n_iter
        state = {"previous": _variation_norms(frames, d_var), "calm": 0, "iterations": 0}

        def settled(current: np.ndarray) -> bool:
            norms = _variation_norms(current, d_var)
            change = np.linalg.norm(norms - state["previous"]) / max(np.linalg.norm(state["previous"]), 1e-12)
            state["previous"] = norms
            state["calm"] = state["calm"] + 1 if change <= SMOOTH_TOL else 0
            state["iterations"] += 1
            return state["calm"] >= SMOOTH_PATIENCE

        out = smooth_frames(frames, knn, P, SMOOTH_MAX_ITER, n_aligned=n_aligned, stop=settled, overwrite=True)
        return out, state["iterations"]

    def _tangent_embedding(self, aligned: np.ndarray, smoothed: Future | None,
                           threads: Callable[[], int]) -> np.ndarray:
        """The embedded frames V^e (m, 2, 2) of ``tangent_embed``; ``smoothed`` (a Future of the smoothed frames)
        is waited for by ``"umap_per_direction"`` only; ``threads()``: the threads the t-SNE may use now."""
        from sklearn.decomposition import PCA

        m = aligned.shape[0]
        if self.tangent_embed == "identity":
            return np.tile(np.eye(2), (m, 1, 1))
        if self.tangent_embed == "tsne_flat":
            flat = aligned[:, :2, :].reshape(m, -1).astype(np.float64)
            norm = np.linalg.norm(flat, axis=1, keepdims=True)
            flat = np.divide(flat, norm, out=np.zeros_like(flat), where=norm > 0)
            if flat.shape[1] > TSNE_PCA:
                flat = PCA(n_components=min(TSNE_PCA, m), random_state=int(self.random_state)).fit_transform(flat)
            perplexity = min(TSNE_PERPLEXITY, (m - 1) / 3.0)
            tsne = TSNE(perplexity=perplexity, init="pca", random_state=int(self.random_state),
                        n_jobs=int(self.n_jobs))
            out = tsne.fit_sharing(flat, threads).embedding_
            return frames_from_directions(out - out.mean(axis=0))
        frames = np.empty((m, 2, 2))
        for l in range(2):
            V = smoothed.result()[:, l, :].astype(np.float64)
            V = PCA(n_components=min(V.shape[1], 50, m), random_state=int(self.random_state)).fit_transform(V)
            u = self._umap(V, int(self.n_epochs), f"tangent embedding (direction {l + 1})")
            norm = np.linalg.norm(u, axis=1, keepdims=True)
            frames[:, l] = np.divide(u, norm, out=np.zeros_like(u, dtype=np.float64), where=norm > 0)
        return frames

    def _umap(self, Z: np.ndarray, n_epochs: int, name: str) -> np.ndarray:
        """UMAP of ``Z`` (the estimator's n_neighbors, min_dist, spread, seed; spectral start; no correlation term)
        by the same graph and layout code as featMAP's own layout: with λ = 0 that code is umap-learn's algorithm
        (its epoch bit for bit), and its kernel releases the GIL, so it can run beside the main layout."""
        from umap.umap_ import find_ab_params

        a, b = find_ab_params(float(self.spread), float(self.min_dist))
        graph = fuzzy_graph(np.ascontiguousarray(Z, dtype=np.float64), int(self.n_neighbors),
                            random_state=int(self.random_state), n_jobs=1)
        edges = umap_edges(graph.P, n_epochs)
        rs = np.random.RandomState(int(self.random_state))
        Y0 = initial_layout(Z, edges, spectral_start(Z.shape[0]), rs)
        Y = optimize_layout(Y0, edges, n_epochs, a, b, rng_state_from(rs), name=name, order=visit_order(graph.P))
        return np.ascontiguousarray(Y, dtype=np.float64)

    def _variation_embedding(self, smoothed: Future, d_var: int) -> np.ndarray:
        """The authors' variation embedding: UMAP (umap-learn's default epochs: 500 up to 10,000 points, else 200)
        of the per-feature local norms of the smoothed frames."""
        norms = _variation_norms(smoothed.result(), d_var)
        return self._umap(norms, VARIATION_EPOCHS_SMALL if norms.shape[0] <= 10_000 else VARIATION_EPOCHS_LARGE,
                          "variation embedding")

    # ------------------------------------------------------------------------------------------------------------
    def _fit(self, inputs: Inputs) -> "FeatMAP":
        from umap.umap_ import find_ab_params

        self._validate_params()
        X = self._check_data(inputs.X)
        m, n = X.shape
        k = int(self.n_neighbors)
        seed = int(self.random_state)
        a, b = find_ab_params(float(self.spread), float(self.min_dist))
        started = time.perf_counter()

        def phase(msg: str, *args: Any) -> None:
            log.info("featmap [%.1f s]: " + msg, time.perf_counter() - started, *args)

        Vt = None
        if self.reduce_dim is not None and n > int(self.reduce_dim):
            Xp, Vt = reduce_features(X, n_components=int(self.reduce_dim), random_state=seed)
            Xp = np.ascontiguousarray(Xp, dtype=np.float64)
        else:
            Xp = X
        p = Xp.shape[1]
        phase("data %d × %d, working space p = %d", m, n, p)

        graph = fuzzy_graph(Xp, k, random_state=seed, n_jobs=int(self.n_jobs))
        P, knn = graph.P, graph.knn_indices
        phase("fuzzy graph (k = %d, %d edges)", k, P.nnz)

        # the singular values first, then only the frames used (max(2, d_var) of them): at 10^6 points all
        # min(k − 1, p) = 14 frames of 64 features would take 7.2 GB where these take 4.1 GB
        sv, _ = local_svd(Xp, knn, P, n_frames=0, n_jobs=int(self.n_jobs))
        sv = np.asarray(sv, dtype=np.float64)
        self.singular_values_ = sv
        self.intrinsic_dim_ = np.asarray(intrinsic_dimension(sv, tau=INTRINSIC_TAU))
        d_var = int(max(1, min(np.median(self.intrinsic_dim_), sv.shape[1])))
        _, frames = local_svd(Xp, knn, P, n_frames=min(max(2, d_var), sv.shape[1]), n_jobs=int(self.n_jobs))
        frames = align_signs(frames, knn, root=0)
        # the top two aligned frames apart: the smoothing then works in `frames` itself (one stack of
        # max(2, d_var) frames less: 4.1 GB at 10^6 points and 64 features, d_var = 8)
        top = np.ascontiguousarray(frames[:, :2])
        handed = [frames]  # the smoothing takes the only reference, so the stack it does not return is freed
        del frames
        phase("local SVD: median intrinsic dimension %d", int(np.median(self.intrinsic_dim_)))

        # Five stages, run on n_jobs threads (the tasks are independent but for the waits noted; every stage is
        # seeded, and single-threaded or, for the t-SNE, free of any dependence on its threads, so their results
        # depend neither on n_jobs nor on timing): the tangent embedding,
        # the frame smoothing, the layout (which waits for the tangent embedding only when the correlation term
        # switches on, after its first (1 − q)·n_epochs epochs), the variation embedding (after the smoothing) and the
        # feature importance and loadings (after the tangent embedding).
        # On one thread they are submitted in an order in which every task's inputs come from tasks submitted before
        # it or are not waited for, so that thread runs them one after the other without deadlock; on more, the
        # layout goes first (below).
        r_o, r_o_std = original_radii(sv, 2)
        edges = umap_edges(P, int(self.n_epochs))
        rs = np.random.RandomState(seed)
        start = spectral_start(Xp.shape[0]) if self.init == "spectral" else self.init
        Y0 = initial_layout(Xp, edges, start, rs)
        rng_state = rng_state_from(rs)
        phase("initial layout (%s), %d scheduled edges; %d thread(s) for the stages", start, edges.n_edges,
              int(self.n_jobs))

        def smooth() -> np.ndarray:
            out, self.smooth_iter_ = self._smooth(handed.pop(), knn, P, d_var)
            phase("frames smoothed (%d iterations)", self.smooth_iter_)
            return out

        # the layout's core, while the layout waits for the embedded frames or once it is done, goes to the
        # t-SNE of the frames (its own thread and that one: at 10^6 points its 750 iterations outlast the layout)
        layout_idle = threading.Event()

        def tangent() -> np.ndarray:
            out = self._tangent_embedding(top, smoothing if self.tangent_embed == "umap_per_direction" else None,
                                          lambda: 2 if layout_idle.is_set() else 1)
            phase("tangent embedding (%s)", self.tangent_embed)
            return out

        def layout() -> np.ndarray:
            term = None
            if self.feat_lambda > 0 and self.feat_frac > 0:
                term = AnisotropicTerm(frames=embedded, r_o=r_o_std, lam=float(self.feat_lambda),
                                       frac=float(self.feat_frac), var_shift=float(self.var_shift))
            out = optimize_layout(Y0, edges, int(self.n_epochs), a, b, rng_state,
                                  learning_rate=float(self.learning_rate),
                                  negative_sample_rate=int(self.negative_sample_rate), anisotropic=term,
                                  name="featmap", idle=layout_idle, order=visit_order(P))
            layout_idle.set()
            phase("layout done (%d epochs)", self.n_epochs)
            return out

        def variation() -> np.ndarray:
            out = self._variation_embedding(smoothing, d_var)
            phase("variation embedding")
            return out


        def explain() -> tuple[np.ndarray, np.ndarray]:
            importance = np.empty((m, n), dtype=np.float32)
            loadings = np.empty((m, n, 2), dtype=np.float32)
            frame_embedding = embedded.result()
            for start in range(0, m, OUTPUT_BLOCK):  # blocks keep the float64 temporaries at O(block·n)
                rows = slice(start, min(m, start + OUTPUT_BLOCK))
                importance[rows] = feature_importance(top[rows], components=Vt, d=2)
                loadings[rows] = feature_loadings(top[rows], frame_embedding[rows], components=Vt)
            phase("feature importance and loadings (%d features)", n)
            return importance, loadings

        with ThreadPoolExecutor(max_workers=int(self.n_jobs), thread_name_prefix="featmap") as pool:
            laid_out = None
            if self.tangent_embed == "umap_per_direction":  # it reads the smoothed frames
                smoothing = pool.submit(smooth)
                embedded = pool.submit(tangent)
            elif int(self.n_jobs) >= 2:
                # the layout from the start on one thread; the smoothing, then the tangent embedding on another, so
                # that the smoothing's two frame stacks and the t-SNE's affinities are not held at once (≈ 4 GB
                # less at 10^6 points); the layout waits for the embedded frames only after (1 − q)·n_epochs epochs
                embedded = Future()
                smoothing = pool.submit(smooth)
                laid_out = pool.submit(layout)
                pool.submit(_fulfil, embedded, tangent)
            else:  # one thread: every task after the ones it waits for
                embedded = pool.submit(tangent)
                smoothing = pool.submit(smooth)
            if laid_out is None:
                laid_out = pool.submit(layout)
            varied = pool.submit(variation)
            explained = pool.submit(explain)
            self.frame_embedding_ = embedded.result()
            smoothed = smoothing.result()
            self.embedding_ = np.ascontiguousarray(laid_out.result(), dtype=np.float64)
            self.variation_embedding_ = varied.result()
            self.feature_importance_, self.feature_loadings_ = explained.result()

        _, _, r_e = embedded_radii(self.embedding_, edges.head, edges.tail, self.frame_embedding_, a, b)
        self.radius_original_ = r_o
        self.radius_embedded_ = r_e
        self.radius_correlation_ = radius_correlation(r_o, r_e)
        self.tangent_frames_ = top.astype(np.float32)
        self.smoothed_frames_ = np.ascontiguousarray(smoothed[:, :2], dtype=np.float32)
        self.components_ = (np.zeros((0, n)) if Vt is None else np.asarray(Vt, dtype=np.float64))
        phase("radius correlation per direction %s", np.array2string(self.radius_correlation_, precision=3))
        return self
