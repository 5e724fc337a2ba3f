"""Objectives, each returning (value, Euclidean gradient): the KL divergences of SNE, symmetric SNE and t-SNE
(:mod:`.kl`), COVA's rules (COVA Sec. 3.1, Appendix A: :mod:`.cohort`, :mod:`.local`, :mod:`.projection`) and
models (:mod:`.cova`: E1's system, the rule pairs of Eq. 13, eigen-COVA), NeRV's and t-NeRV's costs (:mod:`.nerv`),
local MDS (:mod:`.lmds`), the co-embeddings (:mod:`.coembedding`, :mod:`.code`, :mod:`.mkpe`), the semidefinite
programmes (:mod:`.semidefinite`) and featMAP's layout terms (:mod:`.umap_sgd`, :mod:`.anisotropic`)."""

from .cohort import o_dist_c, o_kl_c
from .kl import joint_kl_small, sne_kl_and_gradient, tsne_kl_and_gradient, tsne_kl_sparse
from .local import (
    AUTO_EXACT_MAX_SAMPLES,
    REPULSION_METHODS,
    kl_entropy,
    kl_repulsion,
    o_dist_l,
    o_kl_l,
    o_kl_l_conditional,
    resolve_repulsion_method,
)
from .projection import objective_on_projection, project_gradient

__all__ = ["o_dist_c", "o_kl_c", "o_dist_l", "o_kl_l", "o_kl_l_conditional", "kl_repulsion", "kl_entropy",
           "REPULSION_METHODS", "AUTO_EXACT_MAX_SAMPLES", "resolve_repulsion_method", "project_gradient",
           "objective_on_projection", "sne_kl_and_gradient", "tsne_kl_and_gradient", "joint_kl_small",
           "tsne_kl_sparse"]
