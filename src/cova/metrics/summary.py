"""The scores of the results table (S_n, S_s, S_c raw and aligned, S_c^(r), trustworthiness, continuity) of one
embedding, from the arrays alone."""

from __future__ import annotations

import numpy as np

from .centres import cohort_centres, procrustes_align
from .registry import ScoreData, evaluate, metric_keys

__all__ = ["TABLE_METRICS", "SCORE_KEYS", "compute_scores", "cohort_centres", "procrustes_align"]

#: The registry metrics of the results table, and their keys (``scores.csv`` columns).
TABLE_METRICS = ("s_n", "s_s", "s_c", "s_c_aligned", "s_c_r", "trustworthiness_continuity")
SCORE_KEYS = metric_keys(TABLE_METRICS)


def compute_scores(X: np.ndarray, Z: np.ndarray, labels: np.ndarray, prototypes: np.ndarray,
                   placed_prototypes: np.ndarray | None = None, n_neighbors: int = 12,
                   kappa: int = 2) -> dict[str, float]:
    """S_n, S_s, S_c (raw and aligned), S_c^(r), trustworthiness and continuity of embedding ``Z``.

    ``prototypes`` are the run's Υ (the desired arrangement for S_c^(r) and for the aligned S_c);
    ``placed_prototypes`` are the points the method itself placed cohorts at (Υ for E1-E4 and P1-P4, E for
    eigen-COVA); for methods without them the raw S_c compares Z with Υ in Z's arbitrary coordinates.
    """
    data = ScoreData(Z=Z, n_cohorts=prototypes.shape[0], X=X, labels=labels, prototypes=prototypes,
                     placed_prototypes=placed_prototypes, n_neighbors=n_neighbors, kappa=kappa)
    return evaluate(data, TABLE_METRICS)
