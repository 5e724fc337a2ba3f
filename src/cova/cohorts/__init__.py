"""Cohort inputs: confidence matrix R (Eqs. 9-12), cohort proximity (Eqs. 4-6) and prototypes Υ (Sec. 3.1.1); the
class-posterior mixture of NeRV Eq. 10 and its learning metric (:mod:`.posterior`)."""

from __future__ import annotations

from ..lazy import LazyNames

#: Name -> the module of this package that defines it, imported on first use: the confidences and prototype
#: recipes declare their options (:mod:`cova.constraints`, which imports scikit-learn, as does the relation
#: features' transformer), and a score job, which needs only cohort proximities, should not pay for that import.
_HOMES: dict[str, str] = {
    "CONFIDENCE_KINDS": "confidence",
    "CONFIDENCE_SOURCES": "confidence",
    "DENSITIES": "confidence",
    "confidence_matrix": "confidence",
    "graph_confidence": "confidence",
    "label_matrix": "labels",
    "probability_confidence": "confidence",
    "rescale": "confidence",
    "similarity_to_centres": "confidence",
    "PROTOTYPE_KINDS": "prototypes",
    "classical_mds": "prototypes",
    "cohort_means": "prototypes",
    "laplacian_prototypes": "prototypes",
    "loe_prototypes": "prototypes",
    "make_prototypes": "prototypes",
    "normalize_prototypes": "prototypes",
    "ordinal_triples": "prototypes",
    "ring_prototypes": "prototypes",
    "similarity_to_distance": "prototypes",
    "sne_prototypes": "prototypes",
    "spe_prototypes": "prototypes",
    "tsne_prototypes": "prototypes",
    "MATRIX_KINDS": "proximity",
    "PROXIMITY_KINDS": "proximity",
    "centre_distances": "proximity",
    "centroid_cosine": "proximity",
    "check_given_matrix": "proximity",
    "citation_similarity": "proximity",
    "cluster_graph": "proximity",
    "cohort_proximity": "proximity",
    "gaussian_similarity": "proximity",
    "graph_similarity": "proximity",
    "pair_distances": "proximity",
    "RelationFeatures": "relation",
    "compacted_features": "relation",
    "relation_features": "relation",
    "resolve_n_prototypes": "relation",
}

__all__ = sorted(_HOMES)
__getattr__ = LazyNames(__name__, _HOMES).module_getattr
