"""Graph inputs blocks: the dataset's relation matrix is the affinity W itself (e.g. DOSNES's trade network); and
the ``normalize`` post-step of a W, shared with the vector blocks. The ``graph`` sub-block declares its options
here, beside the builder that reads them."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..affinity.doubly_stochastic import NORMALIZATIONS
from ..constraints import Block, Declaration, StrOptions
from ..datasets.base import Dataset
from ..errors import UserError
from .steps import graph_degree, normalized, prototype_recipe
from .subsets import largest_component
from .types import Inputs, require_cohorts

#: The ``graph`` sub-block of an inputs block.
GRAPH = Declaration({"source": [StrOptions({"relations"})],
                     "normalize": [Block(NORMALIZATIONS, "a normalize block {kind: ...}"), None],
                     "largest_component": ["boolean"]},
                    defaults={"normalize": None, "largest_component": False})


def build_graph_inputs(dataset: Dataset, spec: dict[str, Any], block: dict[str, Any], seed: int) -> Inputs:
    """``graph: {source: relations}``: the dataset's relation matrix A is the affinity itself,
    W = (A + Aᵀ)/2 with zero diagonal and unit sum (:func:`cova.affinity.symmetrize_normalize`), or its doubly
    stochastic form divided by l with ``normalize`` (:func:`cova.affinity.normalize_affinity`). With
    ``largest_component: true`` only the largest connected component of A is kept (DOSNES Sec. 6 does this for
    the NIPS graph). ``degree`` holds the weighted degrees of (A + Aᵀ)/2 before normalisation. X is provided
    only with a ``features`` block, R and Υ only with ``confidence`` / ``prototypes`` blocks (built on this W and
    on the features, the dataset's X by default). ``spec`` is the block as configured (recorded with the facts),
    ``block`` the same with its declared defaults filled in."""
    from ..affinity import symmetrize_normalize
    from ..cohorts import confidence_matrix, make_prototypes
    from ..features import assign_cohorts, transform_features

    graph = block["graph"]
    A = dataset.relations
    if A is None:
        raise UserError("inputs graph: {source: relations} needs a dataset with a relation matrix "
                         f"({dataset.meta.get('name', 'this dataset')} has none)")
    if A.shape != (dataset.n_samples,) * 2:
        raise UserError(f"inputs graph: the relation matrix must be l×l (l = {dataset.n_samples}), got {A.shape}")
    component: dict[str, Any] = {}
    if graph["largest_component"]:
        dataset, component = largest_component(dataset)
        A = dataset.relations
    W, norm_facts = normalized(symmetrize_normalize(A), graph["normalize"])
    degree_before = graph_degree(A)
    labels, names = assign_cohorts(dataset, block["cohorts"], seed=seed)
    Xf, facts = transform_features(dataset, block["features"], labels=labels, seed=seed)
    degree = np.asarray(W.sum(axis=1)).ravel()
    facts = dict(facts, n_edges=int(sp.triu(W, k=1).nnz), n_isolated=int(np.sum(degree == 0)), **component,
                 **norm_facts)
    R = prototypes = None
    c = len(names)
    if block["confidence"] is not None or block["prototypes"] is not None:
        require_cohorts(np.unique(labels).size, "an inputs block with cohort confidences R or prototypes")
    if block["confidence"] is not None:
        R = confidence_matrix(labels, X=Xf, W=W, n_cohorts=c, **block["confidence"])
    if block["prototypes"] is not None:
        kind, space, common = prototype_recipe(block["prototypes"], c, seed)
        prototypes = np.asarray(make_prototypes(kind, X=dataset.X if space == "raw" else Xf, W=W, labels=labels,
                                                relations=dataset.relations, **common), dtype=np.float64)
    if block["subset"] is not None:
        facts = dict(facts, n_samples=int(labels.shape[0]), n_cohorts=c)
    return Inputs(X=Xf if block["features"] is not None else None, labels=labels, label_names=names, W=W, R=R,
                  prototypes=prototypes, spec=dict(spec, seed=seed, **facts), degree=degree_before)

