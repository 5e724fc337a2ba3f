"""The score step: every available metric of one embedding, as the pipeline writes it to ``scores.json``.

With a train/test split (COVA Sec. 3.2, Figs. 7 and H.10) the main scores are those of the training rows and the
``*_test`` scores those of the held-out rows alone; the gold-standard scores (Fig. 5) use every row. A run whose
method found no embedding (status other than ``ok``) gets NaN for every score it would have had.

The graph measures (:mod:`.registry`) see the run's W and the input graph's degrees only on the rows W covers:
all rows, or the training rows of a split (they get no ``*_test`` scores). ``kl`` is read once from the
embedding's extra ``kl_divergence`` (a scalar; the last entry of a saved trace). The measures of relation runs
(mean rank, pooled 1-NN error) read the embedded column objects from the extra ``column_embedding``.

The opt-in metric groups (``measures``, e.g. ``["featmap"]`` for featMAP Table 1) are scored only when asked for:
without them a record has exactly the keys it had before the groups existed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np

from ..embedding import Embedding
from ..inputs import Inputs
from .cohort_graphs import original_graph
from .registry import ScoreData, check_groups, evaluate, nan_scores
from .subsample import EXACT_MAX_POINTS, N_QUERIES

__all__ = ["score_files", "score_run"]

log = logging.getLogger("cova")


def _rows(a: np.ndarray | None, rows: Any) -> np.ndarray | None:
    return None if a is None else a[rows]


def _final_kl(embedding: Embedding) -> float | None:
    saved = embedding.extras.get("kl_divergence")
    if saved is None or np.size(saved) == 0:
        return None
    return float(np.ravel(saved)[-1])


def _columns(embedding: Embedding, relation: Any) -> np.ndarray | None:
    """The embedded column objects of a relation run: the extra ``column_embedding``; for a run without an
    embedding, NaN of the relation's column count, so that its record holds NaN under the relation keys."""
    if relation is None:
        return None
    if not embedding.ok:
        return np.full((relation.shape[1], embedding.n_components), np.nan)
    return embedding.extras.get("column_embedding")


def score_run(inputs: Inputs, embedding: Embedding, n_neighbors: int = 12, kappa: int = 2, knn_k: int = 5,
              graph_k: int = 10, measures: Iterable[str] | None = None,
              per_point: dict[str, np.ndarray] | None = None, nerv: dict[str, Any] | None = None,
              ground_truth: np.ndarray | None = None, exact_max_points: int = EXACT_MAX_POINTS,
              n_queries: int = N_QUERIES) -> dict[str, Any]:
    """Scores of ``embedding`` (all rows of ``inputs``): κ = ``kappa`` for the cohort graphs, ``n_neighbors`` for
    trustworthiness and continuity, ``knn_k`` for the k-NN label accuracy and ``graph_k`` for the graph-neighbour
    precision and the sphere's degree-crowding correlation; ``measures`` names the opt-in metric groups to add
    (:func:`cova.metrics.registry.groups`).

    Metrics whose needs the inputs lack are skipped (:mod:`cova.metrics.registry`). Inputs with labels of a single
    cohort get no score that needs labels (each would be 1 whatever the embedding), and a warning. With a split
    the record also holds ``n_train`` and ``n_test``. The metrics' per-point arrays (e.g. featMAP's local radii)
    go into ``per_point`` when it is given, suffixed like the scores. ``nerv`` holds the settings of the NeRV
    measures (group ``nerv``: ``k_max``, ``joint``, ``pr_relevant``, ``pr_k_max``, ``space``) and
    ``ground_truth`` the dataset's latent coordinates for ``space: ground_truth``. Above ``exact_max_points``
    scored rows, S_n, trustworthiness, continuity (and S_s of maps with more than 8 columns) are estimated from
    ``n_queries`` query rows (:func:`cova.metrics.registry.query_rows`), with their standard error and 95 %
    confidence interval in the record (:func:`cova.metrics.registry.evaluate`); the held-out rows of a split are
    subsampled on their own count.
    """
    measures = check_groups(measures)
    Z, placed_prototypes, ok = embedding.Z, embedding.placed_or_none, embedding.ok
    train = inputs.train
    have = inputs.available()
    if "labels" in have and np.unique(inputs.labels).size < 2:
        log.warning("the inputs have a single cohort: the scores that need labels (cohort, neighbour and k-NN label "
                    "scores) are not computed, since each would be 1 whatever the embedding")
        inputs = replace(inputs, labels=None)
        have = inputs.available()
    # the original cohort graph is built only for an embedding that exists: records of degenerate runs hold the
    # table's scores, not S_c^(r) against the original graph
    graph = original_graph(inputs, kappa) if ok and {"W", "labels"} <= have else None
    X, labels, prototypes = inputs.X, inputs.labels, inputs.prototypes
    if prototypes is not None and prototypes.shape[1] != Z.shape[1]:
        prototypes = None  # built for another dimension (e.g. a 3-D map of 2-D prototypes): no prototype scores
    settings = dict(n_neighbors=n_neighbors, kappa=kappa, geometry=embedding.geometry, knn_k=knn_k, graph_k=graph_k,
                    exact_max_points=exact_max_points, n_queries=n_queries)
    parts = [("", slice(None) if train is None else train)]
    if train is not None:
        parts.append(("_test", ~train))
    scores: dict[str, Any] = {}
    for suffix, rows in parts:
        data = ScoreData(Z=Z[rows], n_cohorts=inputs.n_cohorts, X=_rows(X, rows), labels=_rows(labels, rows),
                         prototypes=prototypes, placed_prototypes=placed_prototypes, original_graph=graph,
                         relation=inputs.relation if train is None else None,  # it spans every sample
                         W=inputs.W if suffix == "" else None, degree=inputs.degree if suffix == "" else None,
                         **settings)
        arrays: dict[str, np.ndarray] = {}
        part = (evaluate(data, scope="rows", measures=measures, arrays=arrays) if ok
                else nan_scores(data, scope="rows", measures=measures))
        scores.update({f"{k}{suffix}": v for k, v in part.items()})
        if per_point is not None:
            per_point.update({f"{k}{suffix}": v for k, v in arrays.items()})
    relation = inputs.relation if train is None else None
    everything = ScoreData(Z=Z, n_cohorts=inputs.n_cohorts, X=X, labels=labels, gold_labels=inputs.gold_labels,
                           nerv=nerv if "nerv" in measures else None, ground_truth=ground_truth,
                           gold_prototypes=inputs.gold_prototypes, kl=_final_kl(embedding), relation=relation,
                           columns=_columns(embedding, relation),
                           column_labels=None if relation is None else relation.column_labels, train=train,
                           **settings)
    scores.update(evaluate(everything, scope="all", measures=measures, arrays=per_point) if ok
                  else nan_scores(everything, scope="all", measures=measures))
    if train is not None:
        scores.update(n_train=int(train.sum()), n_test=int((~train).sum()))
    return scores


def score_files(dataset: Any, inputs_file: Any, embedding: Embedding, metrics: dict[str, Any],
                per_point: dict[str, np.ndarray] | None = None) -> tuple[Inputs, dict[str, Any]]:
    """The score step on saved files: the inputs of ``dataset`` (a processed ``.npz``) and ``inputs_file``, and
    the dataset's latent coordinates when the NeRV measures' settings ask for ``space: ground_truth``; ``metrics``
    are the plan's settings of the run (:meth:`cova.config.Plan.run_metrics`). Returns the inputs and the scores."""
    inputs = Inputs.load(dataset, inputs_file)
    truth = None
    if (metrics.get("nerv") or {}).get("space") == "ground_truth":
        from ..datasets.base import Dataset

        truth = Dataset.load(dataset).ground_truth
    return inputs, score_run(inputs, embedding, **metrics, per_point=per_point, ground_truth=truth)
