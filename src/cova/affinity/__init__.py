"""Local weight matrices W (spec §2.1): nearest neighbours, perplexity calibration, the W variants, Eq. 3, 𝐋(W)."""

from cova.affinity.knn import METHODS, METRICS, nearest_neighbors, pair_sq_distances
from cova.affinity.perplexity import calibrate_precisions, conditional_probabilities, log_conditional_probabilities
from cova.affinity.weights import (
    KINDS,
    build_weights,
    cosine_knn,
    euclidean_max,
    gaussian_perplexity,
    laplacian,
    max_pairwise_distance,
    supervised_shrink,
    symmetrize_normalize,
)

__all__ = [
    "KINDS",
    "METHODS",
    "METRICS",
    "build_weights",
    "conditional_probabilities",
    "calibrate_precisions",
    "log_conditional_probabilities",
    "cosine_knn",
    "euclidean_max",
    "gaussian_perplexity",
    "laplacian",
    "max_pairwise_distance",
    "nearest_neighbors",
    "pair_sq_distances",
    "supervised_shrink",
    "symmetrize_normalize",
]
