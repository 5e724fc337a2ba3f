"""Local weight matrices W (COVA Sec. 3.1, Eqs. 1–3, App. C): nearest neighbours, perplexity calibration, the W
variants, Eq. 3, 𝐋(W); the κ-NN cohort graph and the spectral embedding (:mod:`.graphs`); doubly stochastic
normalisations (DOSNES Sec. 3, :mod:`.doubly_stochastic`); squared and mean-scaled distances (:mod:`.distances`), the
dense affinities of the exact methods (:mod:`.dense`) and LLE reconstruction weights (:mod:`.reconstruction`)."""

from __future__ import annotations

from ..lazy import LazyNames

#: Name -> the module of this package that defines it, imported on first use: the weight graphs and the
#: normalisations declare their options (:mod:`cova.constraints`, which imports scikit-learn), and a score job,
#: which needs only the graphs and neighbours of :mod:`.graphs`, :mod:`.fuzzy` and :mod:`.knn`, should not pay for
#: that import.
_HOMES: dict[str, str] = {
    "NORMALIZE_KINDS": "doubly_stochastic",
    "SinkhornResult": "doubly_stochastic",
    "SinkhornWarning": "doubly_stochastic",
    "normalize_affinity": "doubly_stochastic",
    "random_walk_normalize": "doubly_stochastic",
    "sinkhorn_knopp": "doubly_stochastic",
    "FuzzyGraph": "fuzzy",
    "fuzzy_graph": "fuzzy",
    "knn_graph": "graphs",
    "spectral_embedding": "graphs",
    "METHODS": "knn",
    "METRICS": "knn",
    "nearest_neighbors": "knn",
    "pair_sq_distances": "knn",
    "calibrate_precisions": "perplexity",
    "conditional_probabilities": "perplexity",
    "dense_conditional_probabilities": "perplexity",
    "log_conditional_probabilities": "perplexity",
    "SMOOTH_WEIGHTINGS": "tangent",
    "align_signs": "tangent",
    "feature_importance": "tangent",
    "feature_loadings": "tangent",
    "intrinsic_dimension": "tangent",
    "local_svd": "tangent",
    "principal_angle_cosine": "tangent",
    "reduce_features": "tangent",
    "smooth_frames": "tangent",
    "KINDS": "weights",
    "build_weights": "weights",
    "cosine_knn": "weights",
    "cosine_knn_similarity": "weights",
    "euclidean_max": "weights",
    "gaussian_perplexity": "weights",
    "laplacian": "weights",
    "max_pairwise_distance": "weights",
    "supervised_shrink": "weights",
    "symmetrize_normalize": "weights",
}

__all__ = sorted(_HOMES)
__getattr__ = LazyNames(__name__, _HOMES).module_getattr
