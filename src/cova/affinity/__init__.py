"""Local weight matrices W (COVA Sec. 3.1, Eqs. 1–3, App. C): nearest neighbours, perplexity calibration, the W
variants, Eq. 3, 𝐋(W); the κ-NN cohort graph and the spectral embedding (:mod:`.graphs`); doubly stochastic
normalisations (DOSNES Sec. 3, :mod:`.doubly_stochastic`); squared and mean-scaled distances (:mod:`.distances`), the
dense affinities of the exact methods (:mod:`.dense`) and LLE reconstruction weights (:mod:`.reconstruction`)."""

from cova.affinity.doubly_stochastic import (
    NORMALIZE_KINDS,
    SinkhornResult,
    SinkhornWarning,
    normalize_affinity,
    random_walk_normalize,
    sinkhorn_knopp,
)
from cova.affinity.fuzzy import FuzzyGraph, fuzzy_graph
from cova.affinity.graphs import knn_graph, spectral_embedding
from cova.affinity.knn import METHODS, METRICS, nearest_neighbors, pair_sq_distances
from cova.affinity.perplexity import (
    calibrate_precisions,
    conditional_probabilities,
    dense_conditional_probabilities,
    log_conditional_probabilities,
)
from cova.affinity.tangent import (
    SMOOTH_WEIGHTINGS,
    align_signs,
    feature_importance,
    feature_loadings,
    intrinsic_dimension,
    local_svd,
    principal_angle_cosine,
    reduce_features,
    smooth_frames,
)
from cova.affinity.weights import (
    KINDS,
    build_weights,
    cosine_knn,
    cosine_knn_similarity,
    euclidean_max,
    gaussian_perplexity,
    laplacian,
    max_pairwise_distance,
    supervised_shrink,
    symmetrize_normalize,
)

__all__ = [
    "FuzzyGraph",
    "KINDS",
    "METHODS",
    "METRICS",
    "NORMALIZE_KINDS",
    "SinkhornResult",
    "SinkhornWarning",
    "SMOOTH_WEIGHTINGS",
    "build_weights",
    "align_signs",
    "calibrate_precisions",
    "conditional_probabilities",
    "cosine_knn",
    "cosine_knn_similarity",
    "dense_conditional_probabilities",
    "euclidean_max",
    "feature_importance",
    "feature_loadings",
    "fuzzy_graph",
    "gaussian_perplexity",
    "intrinsic_dimension",
    "knn_graph",
    "laplacian",
    "local_svd",
    "log_conditional_probabilities",
    "max_pairwise_distance",
    "nearest_neighbors",
    "normalize_affinity",
    "pair_sq_distances",
    "principal_angle_cosine",
    "random_walk_normalize",
    "reduce_features",
    "sinkhorn_knopp",
    "smooth_frames",
    "spectral_embedding",
    "supervised_shrink",
    "symmetrize_normalize",
]
