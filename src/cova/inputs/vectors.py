"""Vector inputs blocks: W, R and the prototypes Υ built from X (COVA Sec. 3.1.1-3.1.3), or X and the labels only
(for methods that build their own graph from X, e.g. featMAP and its baselines)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..datasets.base import Dataset
from ..errors import UserError
from .steps import prototype_recipe, weights_graph
from .subsets import split_mask
from .types import Inputs, require_cohorts


def build_points_inputs(dataset: Dataset, spec: dict[str, Any], block: dict[str, Any], seed: int) -> Inputs:
    """A block without weights, confidence and prototypes: X (after ``features``) and the cohort labels, with the
    training rows of a ``split``."""
    from ..features import assign_cohorts, transform_features

    labels, names = assign_cohorts(dataset, block["cohorts"], seed=seed)
    train = split_mask(labels, block["split"], seed=seed) if block["split"] is not None else None
    X, facts = transform_features(dataset, block["features"], labels=labels, seed=seed, fit_rows=train)
    if block["subset"] is not None:
        facts = dict(facts, n_samples=int(labels.shape[0]), n_cohorts=len(names))
    if train is not None:
        facts = dict(facts, n_train=int(train.sum()), n_test=int((~train).sum()))
    return Inputs(X=X, labels=labels, label_names=names, spec=dict(spec, seed=seed, **facts), train=train)


def build_vector_inputs(dataset: Dataset, spec: dict[str, Any], block: dict[str, Any], seed: int) -> Inputs:
    """A vector block: W, R and Υ built from X as follows (``spec`` is the block as configured, recorded with the
    facts; ``block`` the same with its declared defaults filled in).

    ``prototypes.space`` is ``features`` (default: cohort proximity from the transformed X) or ``raw`` (from the
    dataset's X, e.g. Cora's cluster centres in word space, H.3).

    ``cohorts: {kind: predicted, labelled_per_class: n}`` (COVA Fig. 5): the features are computed first
    (they must not use labels, so ``compacted`` is refused), the unlabelled samples take the 1-NN label of the
    labelled ones in that space, R is built from these input labels, and the **input prototypes** from the
    labelled samples only (Eq. 6 on W restricted to them, their true labels); the **gold-standard prototypes**
    use every sample's true label on the full W.
    """
    from ..cohorts import confidence_matrix, make_prototypes
    from ..features import assign_cohorts, predict_cohorts, transform_features

    split = block["split"]
    predicted = block["cohorts"] is not None and block["cohorts"]["kind"] == "predicted"
    labelled = gold_labels = None
    if predicted:
        X, facts = transform_features(dataset, block["features"], labels=dataset.labels, seed=seed)
        gold_labels = dataset.labels
        labels, labelled = predict_cohorts(X, gold_labels, int(block["cohorts"]["labelled_per_class"]), seed=seed)
        names = list(dataset.label_names)
        facts = dict(facts, labelled=int(labelled.sum()),
                     predicted_accuracy=float(np.mean(labels[~labelled] == gold_labels[~labelled]))
                     if np.any(~labelled) else 1.0)
    else:
        labels, names = assign_cohorts(dataset, block["cohorts"], seed=seed)
    c = len(names)
    require_cohorts(c, "an inputs block with cohort confidences R and prototypes")
    counts = np.bincount(labels, minlength=c)
    if np.any(counts < 2):
        empty = [names[j] for j in np.flatnonzero(counts < 2)]
        raise UserError(f"cohorts {empty} have fewer than 2 samples; COVA's scores and Eq. 10 need at least 2")
    train = split_mask(labels, split, seed=seed) if split is not None else None
    if not predicted:
        X, facts = transform_features(dataset, block["features"], labels=labels, seed=seed, fit_rows=train)
    rows = np.arange(labels.shape[0]) if train is None else np.flatnonzero(train)
    Xt, yt = X[rows], labels[rows]
    W, degree, norm_facts = weights_graph(Xt, block["weights"], yt, seed)
    facts = dict(facts, **norm_facts)
    R = confidence_matrix(yt, X=Xt, W=W, n_cohorts=c, **block["confidence"])
    kind, space, common = prototype_recipe(block["prototypes"], c, seed)
    Xp = (dataset.X if space == "raw" else X)[rows]
    relations = dataset.relations if train is None or dataset.relations is None else \
        dataset.relations[rows][:, rows]
    if predicted:
        L = np.flatnonzero(labelled)
        prototypes = make_prototypes(kind, X=Xp[L], W=W[L][:, L], labels=gold_labels[L], relations=None, **common)
        gold = make_prototypes(kind, X=Xp, W=W, labels=gold_labels, relations=relations,
                               **{**common, "random_fraction": 0.0})
    else:
        prototypes = make_prototypes(kind, X=Xp, W=W, labels=yt, relations=relations, **common)
        gold = None
    if train is not None:
        facts = dict(facts, n_train=int(train.sum()), n_test=int((~train).sum()))
    if block["subset"] is not None:
        facts = dict(facts, n_samples=int(labels.shape[0]), n_cohorts=c)
    return Inputs(X=X, labels=labels, label_names=names, W=W, R=R,
                  prototypes=np.asarray(prototypes, dtype=np.float64), spec=dict(spec, seed=seed, **facts),
                  train=train, gold_labels=gold_labels,
                  gold_prototypes=None if gold is None else np.asarray(gold, dtype=np.float64), labelled=labelled,
                  degree=degree)
