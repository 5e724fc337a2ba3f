"""The score step: every available metric of one embedding, as the pipeline writes it to ``scores.json``.

With a train/test split (COVA Sec. 3.2, Figs. 7 and H.10) the main scores are those of the training rows and the
``*_test`` scores those of the held-out rows alone; the gold-standard scores (Fig. 5) use every row. A run whose
method found no embedding (status other than ``ok``) gets NaN for every score it would have had.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..embedding import Embedding
from ..inputs import Inputs
from .cohort_graphs import original_graph
from .registry import ScoreData, evaluate, nan_scores

__all__ = ["score_run"]


def _rows(a: np.ndarray | None, rows: Any) -> np.ndarray | None:
    return None if a is None else a[rows]


def score_run(inputs: Inputs, embedding: Embedding, n_neighbors: int = 12, kappa: int = 2) -> dict[str, Any]:
    """Scores of ``embedding`` (all rows of ``inputs``): κ = ``kappa`` for the cohort graphs, ``n_neighbors`` for
    trustworthiness and continuity.

    Metrics whose needs the inputs lack are skipped (:mod:`cova.metrics.registry`). With a split the record also
    holds ``n_train`` and ``n_test``.
    """
    Z, placed_prototypes, ok = embedding.Z, embedding.placed_or_none, embedding.ok
    train = inputs.train
    have = inputs.available()
    # the original cohort graph is built only for an embedding that exists: records of degenerate runs hold the
    # table's scores, not S_c^(r) against the original graph
    graph = original_graph(inputs, kappa) if ok and {"W", "labels"} <= have else None
    X, labels, prototypes = inputs.X, inputs.labels, inputs.prototypes
    parts = [("", slice(None) if train is None else train)]
    if train is not None:
        parts.append(("_test", ~train))
    scores: dict[str, Any] = {}
    for suffix, rows in parts:
        data = ScoreData(Z=Z[rows], n_cohorts=inputs.n_cohorts, X=_rows(X, rows), labels=_rows(labels, rows),
                         prototypes=prototypes, placed_prototypes=placed_prototypes, original_graph=graph,
                         relation=inputs.relation if train is None else None,  # it spans every sample
                         n_neighbors=n_neighbors, kappa=kappa)
        part = evaluate(data, scope="rows") if ok else nan_scores(data, scope="rows")
        scores.update({f"{k}{suffix}": v for k, v in part.items()})
    everything = ScoreData(Z=Z, n_cohorts=inputs.n_cohorts, labels=labels, gold_labels=inputs.gold_labels,
                           gold_prototypes=inputs.gold_prototypes, n_neighbors=n_neighbors, kappa=kappa)
    scores.update(evaluate(everything, scope="all") if ok else nan_scores(everything, scope="all"))
    if train is not None:
        scores.update(n_train=int(train.sum()), n_test=int((~train).sum()))
    return scores
