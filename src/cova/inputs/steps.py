"""Steps shared by the inputs builders, with the declarations of the sub-blocks they read: the ``weights`` graph
(a weight kind of :data:`cova.affinity.weights.KINDS` plus its ``normalize`` post-step), the ``confidence`` block
(:func:`cova.cohorts.confidence_matrix` declares it) and the ``prototypes`` recipe
(:func:`cova.cohorts.make_prototypes` declares it, plus the feature ``space`` it is built in)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..affinity.doubly_stochastic import NORMALIZATIONS, normalize_affinity
from ..affinity.weights import KINDS as WEIGHT_KINDS
from ..cohorts import make_prototypes
from ..constraints import Block, Declaration, Kinds, StrOptions, option_defaults, parameter_constraints

#: The ``weights`` sub-block: a weight kind and the options every kind takes (``shrink``, and ``normalize``, the
#: post-step :func:`normalized`).
WEIGHTS = Kinds("weights kind", WEIGHT_KINDS, common=Declaration(
    {**parameter_constraints(WEIGHT_KINDS.common),
     "normalize": [Block(NORMALIZATIONS, "a normalize block {kind: ...}"), None]},
    defaults={**option_defaults(WEIGHT_KINDS.common), "normalize": None}))
#: The ``prototypes`` sub-block: :func:`cova.cohorts.make_prototypes`'s options, and ``space``: cohort proximity
#: from the transformed features (default) or from the dataset's raw X (e.g. Cora's centres in word space, H.3).
PROTOTYPES = Declaration({**parameter_constraints(make_prototypes), "space": [StrOptions({"features", "raw"})]},
                         defaults={**option_defaults(make_prototypes), "space": "features"})


def prototype_recipe(block: dict[str, Any], n_cohorts: int, seed: int) -> tuple[str, str, dict[str, Any]]:
    """The generator kind, the feature space (``features`` or ``raw``) and the keyword arguments of
    :func:`cova.cohorts.make_prototypes` for one checked ``prototypes`` sub-block."""
    options = {k: v for k, v in block.items() if k not in ("kind", "space")}
    return block["kind"], block["space"], dict(n_cohorts=n_cohorts, random_state=seed, **options)


def normalized(W: sp.csr_matrix, normalize: dict[str, Any] | None) -> tuple[sp.csr_matrix, dict[str, Any]]:
    """The ``normalize`` post-step of a unit-sum W (:func:`cova.affinity.normalize_affinity`) and its facts; none,
    or kind ``sum``, returns W itself, so inputs without ``normalize`` are unchanged."""
    if normalize is None or normalize["kind"] == "sum":
        return W, {}
    return normalize_affinity(W, **normalize)


def weights_graph(X: np.ndarray, weights: dict[str, Any], labels: np.ndarray | None,
                  seed: int) -> tuple[sp.csr_matrix, np.ndarray | None, dict[str, Any]]:
    """W of one checked ``weights`` sub-block built from X (:func:`cova.affinity.build_weights`), its ``normalize``
    post-step (:func:`normalized`), every row's degree before that normalisation (``None`` without it) and the
    normalisation's facts. ``labels`` are read only by a supervised weight (``shrink``)."""
    from ..affinity import build_weights

    w = dict(weights)
    normalize = w.pop("normalize")
    W = build_weights(X, w.pop("kind"), labels=labels, random_state=seed, **w)
    if normalize is None:
        return W, None, {}
    degree = W.shape[0] * np.asarray(W.sum(axis=1)).ravel()
    W, facts = normalized(W, normalize)
    return W, degree, facts


def graph_degree(A: sp.spmatrix) -> np.ndarray:
    """Σ_{j≠i} (a_ij + a_ji)/2: the row sums of the symmetrised relation matrix with zero diagonal, before any
    normalisation (the weighted degree of every vertex)."""
    A = sp.csr_matrix(A, dtype=np.float64)
    diag = A.diagonal()
    return 0.5 * (np.asarray(A.sum(axis=1)).ravel() + np.asarray(A.sum(axis=0)).ravel()) - diag
