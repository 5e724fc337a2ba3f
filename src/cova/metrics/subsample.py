"""The seeded row subsample of the scores at scale, and the estimate of a score from its per-row values.

Two users, one subsample (:func:`pairwise_subsample`, a function of the number of rows m, the subsample size and the
seed alone, so every embedding of one data set is scored on the same rows):

* the O(m²) global measures of featMAP Table 1 (:mod:`.global_structure`) are evaluated on the subsample *alone*
  (above :data:`MAX_PAIRWISE_POINTS` rows);
* the O(m²) neighbourhood and cohort scores (S_n, trustworthiness, continuity, S_s of maps of more than 8 columns;
  :mod:`.registry`) above :data:`EXACT_MAX_POINTS` rows use the subsample as their *query* rows, while each query's
  neighbours are still searched among all m rows (docs/decisions.md, "Scores at scale"). Each of these scores is
  the mean over all rows of a per-row quantity v_i, so the mean over the queries estimates it, with the standard
  error of :func:`estimate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import UserError

__all__ = ["MAX_PAIRWISE_POINTS", "SUBSAMPLE_SEED", "EXACT_MAX_POINTS", "N_QUERIES", "Z_95", "pairwise_subsample",
           "Estimate", "estimate"]

#: Above this many points the O(m²) measures use a random subsample of this size (featMAP Table 1 protocol).
MAX_PAIRWISE_POINTS = 10_000
#: Seed of :func:`pairwise_subsample`.
SUBSAMPLE_SEED = 0
#: The neighbourhood and cohort scores are exact up to this many rows (the default of the configuration's
#: ``metrics.exact_max_points``, :func:`cova.metrics.score.score_run`).
EXACT_MAX_POINTS = 20_000
#: Above :data:`EXACT_MAX_POINTS` rows they are the mean over this many query rows (``metrics.n_queries``).
N_QUERIES = 10_000
#: The two-sided 95 % quantile of the standard normal distribution.
Z_95 = 1.959963984540054


def pairwise_subsample(m: int, max_points: int = MAX_PAIRWISE_POINTS, seed: int = SUBSAMPLE_SEED,
                       exact_max_points: int | None = None) -> np.ndarray:
    """Rows (sorted indices into ``range(m)``) on which a subsampled measure is evaluated: all of them when ``m <=
    max(max_points, exact_max_points)`` (``exact_max_points`` defaults to ``max_points``), else ``max_points`` rows
    drawn without replacement by ``numpy.random.default_rng(seed)``.

    It depends on ``m``, ``max_points`` and ``seed`` only (``exact_max_points`` decides only whether to draw), so
    every embedding of one dataset is scored on the same rows, and the featMAP measures' rows above 20,000 points
    are the score queries' rows at the defaults."""
    for name, value, lo in (("m", m, 1), ("max_points", max_points, 2), ("exact_max_points", exact_max_points, 1)):
        if value is None and name == "exact_max_points":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
            raise UserError(f"{name} must be an integer >= {lo}; got {value!r}")
    if m <= max(max_points, max_points if exact_max_points is None else exact_max_points):
        return np.arange(m, dtype=np.int64)
    rows = np.random.default_rng(seed).choice(m, size=int(max_points), replace=False)
    return np.sort(rows).astype(np.int64)


@dataclass(frozen=True)
class Estimate:
    """A score estimated from ``n_queries`` query rows of ``n`` (:func:`estimate`): ``value`` ± ``ci95``.

    :func:`cova.metrics.registry.evaluate` writes it to the record as the score's key (``value``), ``<key>_se``,
    ``<key>_ci95`` and ``n_queries``."""

    value: float
    se: float
    n_queries: int
    n: int

    @property
    def ci95(self) -> float:
        """Half-width of the 95 % confidence interval, ``Z_95 * se``."""
        return Z_95 * self.se


def estimate(per_row: np.ndarray, n: int) -> Estimate:
    """The mean of a score's per-row values ``per_row`` (v_i at the q query rows, drawn uniformly without
    replacement from the n rows) as an estimate of the mean over all n rows, with its standard error

    ``se = sqrt((1 - q / n) s² / q)``, ``s² = Σ_i (v_i - v̄)² / (q - 1)`` (the sample variance over the queries),

    the finite-population correction ``1 - q / n`` accounting for sampling without replacement (``se = 0`` when
    q = n: the estimate is then the exact score). The 95 % confidence interval is ``v̄ ± 1.96 se`` (normal
    approximation of the mean of q ≥ a few hundred bounded values). NaN values (a score undefined for the data)
    give NaN."""
    v = np.asarray(per_row, dtype=np.float64)
    q = v.size
    if q < 2 or not 2 <= q <= n:
        raise UserError(f"an estimate needs 2 <= queries <= n rows; got {q} queries of {n} rows")
    mean = float(np.mean(v))
    se = math.sqrt(max(0.0, 1.0 - q / n) * float(np.var(v, ddof=1)) / q)
    return Estimate(mean, se, q, n)
