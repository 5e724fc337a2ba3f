"""Cohort graphs beyond S_c^(r)'s own (COVA Eq. G.1, Sec. 4.2-4.3, H.3): reference graphs in the original space,
link counts of an embedded graph against a reference, and the cohorts nearest to one cohort.

A cohort graph is a boolean symmetric (c, c) array with a zero diagonal; ``A_ij`` is set when j is among the κ
nearest (or most similar) cohorts of i, or i among those of j. Ties go to the lower index.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..affinity.graphs import knn_graph
from ..cohorts.proximity import cluster_graph, cohort_proximity
from ..errors import UserError
from ..inputs import Inputs
from .centres import cohort_centres
from .cohort import cohort_graph, link_comparison

__all__ = ["REFERENCE_GRAPHS", "original_graph", "reference_graph", "link_counts",
           "link_accuracy", "prototype_links", "nearest_cohorts", "recall_against"]

#: Reference cohort graphs: ``raw_centroid_cosine``: the κ most cosine-similar cohort centres in the dataset's raw
#: X (Cora's word space, COVA H.3; Table 2's "original space"); ``centroid_cosine``: the same in the inputs'
#: (transformed) X; ``prototypes``: the κ-NN graph of the prototypes Υ (Fig. 9; the graph S_c^(r) compares with);
#: ``original``: the κ-NN graph of the Eq. 6 cohort similarity of W (:func:`original_graph`, Fig. 3, H.7).
REFERENCE_GRAPHS: tuple[str, ...] = ("raw_centroid_cosine", "centroid_cosine", "prototypes", "original")

LINK_KEYS = ("tp", "fp", "fn", "n_reference_links", "n_shown_links", "link_recall", "link_precision")


def original_graph(inputs: Inputs, kappa: int = 2) -> np.ndarray:
    """The "original" cohort graph of COVA Sec. 4.2 (Fig. 3): κ-NN graph of the Eq. 6 similarity
    S_D = (YᵀWY) ⊘ (nnᵀ) of the inputs' W (training rows)."""
    fit = inputs.training()
    S, _ = cohort_proximity("graph", W=fit.W, labels=fit.labels, n_cohorts=inputs.n_cohorts)
    return knn_graph(S, kappa, kind="similarity")


def reference_graph(kind: str, inputs: Inputs, raw_X: np.ndarray | None, kappa: int = 2) -> np.ndarray:
    """The boolean (c, c) symmetric reference cohort graph of ``kind`` (see :data:`REFERENCE_GRAPHS`)."""
    c = inputs.n_cohorts
    if kind == "prototypes":
        return cohort_graph(inputs.prototypes, kappa)
    if kind == "raw_centroid_cosine":
        if raw_X is None:
            raise UserError("reference 'raw_centroid_cosine' needs the dataset's raw X")
        return cluster_graph(raw_X, inputs.labels, c, kappa) > 0
    if kind == "centroid_cosine":
        return cluster_graph(inputs.X, inputs.labels, c, kappa) > 0
    if kind == "original":
        return original_graph(inputs, kappa)
    raise UserError(f"reference must be one of {list(REFERENCE_GRAPHS)}, got {kind!r}")


def link_counts(links: dict[str, list[tuple[int, int]]]) -> dict[str, Any]:
    """TP / FP / FN counts of a :func:`~cova.metrics.cohort.link_comparison`, the reference and shown link totals,
    link recall TP/(TP+FN) and precision TP/(TP+FP) (NaN when undefined), and each link list as text (cohorts
    numbered from 1, ``"1-2 3-7"``)."""
    tp, fp, fn = (len(links[k]) for k in ("tp", "fp", "fn"))
    row: dict[str, Any] = {"tp": tp, "fp": fp, "fn": fn, "n_reference_links": tp + fn, "n_shown_links": tp + fp,
                           "link_recall": tp / (tp + fn) if tp + fn else np.nan,
                           "link_precision": tp / (tp + fp) if tp + fp else np.nan}
    for k in ("tp", "fp", "fn"):
        row[f"{k}_links"] = " ".join(f"{i + 1}-{j + 1}" for i, j in links[k])
    return row


def link_accuracy(reference: np.ndarray, shown: np.ndarray) -> float:
    """Fraction of the reference graph's links that the shown graph has (S_c^(r) of Eq. G.1; NaN without
    reference links)."""
    links = link_comparison(reference, shown)
    n = len(links["tp"]) + len(links["fn"])
    return len(links["tp"]) / n if n else float("nan")


def prototype_links(prototypes: np.ndarray, reference: np.ndarray, kappa: int = 2) -> dict[str, Any]:
    """:func:`link_counts` of the prototypes' own κ-NN graph against ``reference`` (e.g. how well t-SNE prototypes
    keep the cluster graph of the original space, COVA Fig. H.15(a))."""
    return link_counts(link_comparison(reference, cohort_graph(prototypes, kappa)))


def nearest_cohorts(points: np.ndarray, target: int, k: int) -> list[int]:
    """Indices of the ``k`` cohorts whose ``points`` (cohort centres, one row per cohort) are nearest to cohort
    ``target``'s by Euclidean distance, nearest first (ties to the lower index); NaN rows (empty cohorts) are
    skipped."""
    d = np.linalg.norm(points - points[target], axis=1)
    d[target] = np.inf
    d[~np.isfinite(d)] = np.inf
    order = np.argsort(d, kind="stable")
    return [int(i) for i in order[:k] if np.isfinite(d[i])]


def recall_against(reference: np.ndarray, Z: np.ndarray, labels: np.ndarray, n_cohorts: int,
                   kappa: int = 2) -> float:
    """S_c^(r) (COVA Eq. G.1) with a given desired graph: the fraction of ``reference``'s links that the κ-NN graph
    of the embedded cohort centres has, over the cohorts present in ``labels`` (0 without reference links)."""
    centres = cohort_centres(Z, labels, n_cohorts)
    ok = np.all(np.isfinite(centres), axis=1)
    shown = cohort_graph(centres[ok], kappa)
    ref = reference[np.ix_(ok, ok)]
    return float(np.sum(ref & shown) / max(1, np.sum(ref)))
