"""Cohort inputs: confidence matrix R (Eqs. 9-12), cohort proximity (Eqs. 4-6) and prototypes Υ (Sec. 3.1.1); the
class-posterior mixture of NeRV Eq. 10 and its learning metric (:mod:`.posterior`)."""

from .confidence import (
    CONFIDENCE_KINDS,
    CONFIDENCE_SOURCES,
    DENSITIES,
    confidence_matrix,
    graph_confidence,
    label_matrix,
    probability_confidence,
    rescale,
    similarity_to_centres,
)
from .prototypes import (
    PROTOTYPE_KINDS,
    classical_mds,
    cohort_means,
    laplacian_prototypes,
    loe_prototypes,
    make_prototypes,
    normalize_prototypes,
    ordinal_triples,
    ring_prototypes,
    similarity_to_distance,
    sne_prototypes,
    spe_prototypes,
    tsne_prototypes,
)
from .proximity import (
    MATRIX_KINDS,
    PROXIMITY_KINDS,
    centre_distances,
    centroid_cosine,
    check_given_matrix,
    citation_similarity,
    cluster_graph,
    cohort_proximity,
    gaussian_similarity,
    graph_similarity,
    pair_distances,
)

__all__ = [
    "CONFIDENCE_KINDS",
    "CONFIDENCE_SOURCES",
    "DENSITIES",
    "MATRIX_KINDS",
    "PROTOTYPE_KINDS",
    "PROXIMITY_KINDS",
    "centre_distances",
    "centroid_cosine",
    "check_given_matrix",
    "citation_similarity",
    "cluster_graph",
    "classical_mds",
    "cohort_means",
    "cohort_proximity",
    "confidence_matrix",
    "gaussian_similarity",
    "graph_confidence",
    "graph_similarity",
    "label_matrix",
    "laplacian_prototypes",
    "loe_prototypes",
    "ordinal_triples",
    "make_prototypes",
    "normalize_prototypes",
    "pair_distances",
    "probability_confidence",
    "rescale",
    "ring_prototypes",
    "spe_prototypes",
    "similarity_to_centres",
    "similarity_to_distance",
    "sne_prototypes",
    "tsne_prototypes",
]
#: Names of :mod:`.relation`, imported on first use: its transformer is a scikit-learn estimator, and every
#: score job imports this package (scikit-learn alone would add about a second to each job's start).
_RELATION = ("RelationFeatures", "compacted_features", "relation_features", "resolve_n_prototypes")
__all__ += list(_RELATION)


def __getattr__(name: str) -> object:
    if name in _RELATION:
        from . import relation

        return getattr(relation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
