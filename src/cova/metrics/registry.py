"""The metric registry: every score the pipeline can write to ``scores.json``, what it needs and which keys it
writes.

A metric is a function of one :class:`ScoreData` (the arrays one score step has for a set of rows) returning a
dict of floats. It declares its ``needs`` (names of :class:`ScoreData` fields that must not be ``None``), its
output ``keys`` and its ``scope``: ``rows`` metrics are evaluated on the scored rows, and again on the held-out
rows of a train/test split (keys suffixed ``_test``); ``all`` metrics once on every row. :func:`evaluate` skips
the metrics whose needs are not available, so inputs without prototypes, W or gold labels simply get fewer keys.

Registered metrics (COVA App. G unless stated): ``s_n`` (Eq. G.2), ``s_s``, ``s_c`` (against the prototypes the
method placed cohorts at, else Υ), ``s_c_aligned`` (S_c after a similarity Procrustes fit of the cohort centres to
Υ), ``s_c_r`` (Eq. G.1), ``trustworthiness_continuity`` (Venna & Kaski; ``trustworthiness``, ``continuity``),
``s_c_r_orig`` (Eq. G.1 against the "original" cohort graph of Sec. 4.2, the κ-NN graph of the Eq. 6 similarity
of W), ``gold`` (Fig. 5: S_c^(r) against the gold-standard prototypes and S_s of the true labels) and, on a
train/test split, ``heldout_knn_error`` (NeRV Sec. 5.3: the test rows classified by their k = ``knn_k`` nearest
training rows in the display).

Scores at scale: above ``exact_max_points`` rows (default 20,000) the scores whose exact value costs O(n²) are the
means of their per-row terms over ``n_queries`` query rows (default 10,000; :func:`query_rows`, the same rows for
every method of a data set), each query's neighbours searched among all rows: ``s_n``, ``s_n_cohort_kbar``,
``trustworthiness``, ``continuity``, and ``s_s`` / ``s_s_gold`` of embeddings with more than 8 columns (brute-force
neighbours). Their records say so (``<key>_se``, ``<key>_ci95``, ``n_queries``; :func:`evaluate`). The other scores
stay exact at every size: S_s of 2-D and 3-D maps (KD-tree, O(n log n)), S_c and S_c aligned (each sample against
the c prototypes only, O(n c)), S_c^(r) and its variants (c cohort centres, O(n + c²)).

Measures of graph embeddings (ours; the DOSNES paper judges its figures by eye, :mod:`.crowding` and
:mod:`.display_neighbours`): ``radial_cv``, ``centre_fraction``, ``degree_radius_rho``, ``knn_accuracy`` (k =
``knn_k``), ``graph_precision`` (k = ``graph_k``) and ``kl`` (the final KL divergence the method saved as its extra
``kl_divergence``). All but ``kl`` need ``degree``, the input graph's degrees before normalisation, which only
graph inputs and normalised weights provide: they are computed for the runs of those inputs, and the records of
runs on plain vector inputs keep exactly their keys. ``degree_radius_rho``, ``knn_accuracy`` and
``graph_precision`` follow the run's ``geometry`` (on a sphere, chordal distances on the unit sphere).

Measures of relation runs (co-embedding paper Sec. 4.3, :mod:`.coembedding`), computed once per run when the method
embedded the column objects too (``columns``): ``mean_rank`` (keys ``mean_rank``, ``mean_rank_ties``; top 10
columns of R per row) and ``pooled_1nn_error`` (10-fold 1-NN error on the pooled rows and columns, which needs the
relation's column labels), and ``gamma_objective`` (Γ of Eq. 43 with k_r = k_c = 5: the mutual 5-NN row-column
pairs of R that the embedding loses, :func:`cova.objectives.coembedding.gamma_objective`, the objective the
proposed model's search minimises).

Opt-in groups: a metric registered with a ``group`` runs only when the score step is asked for that group
(``measures``; the configuration's ``metrics: {measures: [...]}``, for every run or for the runs of one ``runs``
item), so the records of the other runs keep exactly their keys. Group ``featmap`` holds the measures of featMAP
Table 1 and Sec. 4.2.3 (:data:`FEATMAP_KEYS`): ``trustworthiness_k7`` and ``continuity_k7`` (K = 7),
``shepard_goodness`` and ``normalized_stress`` (:mod:`.global_structure`), all four on the rows of
:func:`~.global_structure.pairwise_subsample` (every row up to 10,000 points); ``knn_accuracy_k1`` ...
``knn_accuracy_k30`` (PaCMAP's series, :func:`~.display_neighbours.knn_accuracy_series`),
``centroid_triplet_accuracy`` and ``radius_correlation`` (:mod:`.density`) on all rows. Distances in Z are
Euclidean whatever the run's geometry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np

from ..errors import UserError
from ..objectives.coembedding import gamma_objective
from .centres import procrustes_align
from .coembedding import mean_rank, mean_rank_ties, pooled_knn_error
from .cohort import s_c, s_c_r, s_n_readings, s_n_readings_per_row, s_s, s_s_per_row
from .cohort_graphs import recall_against
from .crowding import centre_fraction, degree_radius_rho, radial_cv
from .density import local_radius_pair, pearson
from .display_neighbours import graph_precision, knn_accuracy, knn_accuracy_series
from .global_structure import centroid_triplet_accuracy, pairwise_subsample, shepard_goodness_and_stress
from .neighborhood import KDTREE_MAX_DIM, trustworthiness_continuity, trustworthiness_continuity_per_row
from .retrieval import heldout_knn_error, nerv_measures
from .subsample import EXACT_MAX_POINTS, N_QUERIES, Estimate, estimate

__all__ = ["ScoreData", "SETTINGS", "Metric", "METRICS", "MEAN_RANK_TOP", "FEATMAP_K", "FEATMAP_KNN_KS",
           "FEATMAP_KEYS", "register", "groups", "check_groups", "query_rows", "evaluate", "nan_scores", "metric_keys"]

#: The number of most related columns per row in the mean rank (co-embedding paper Sec. 4.3: ten).
MEAN_RANK_TOP = 10
#: k_r = k_c of the registered Γ (co-embedding paper Sec. 3.4: five).
GAMMA_K = 5
#: K of featMAP Table 1's trustworthiness and continuity (Espadoto et al.'s setting; the paper gives none).
FEATMAP_K = 7
#: The k of featMAP Table 1's k-NN accuracy (PaCMAP's ``knn_eval_series``; the paper gives none).
FEATMAP_KNN_KS = (1, 3, 5, 10, 15, 20, 25, 30)


@dataclass(frozen=True)
class ScoreData:
    """What the metrics may use for one set of rows; ``None`` marks what the run does not have.

    ``prototypes`` are the run's Υ (the desired arrangement); ``placed_prototypes`` the points the method itself
    placed cohorts at (Υ for COVA E1-E4 and P1-P4, E for eigen-COVA); ``original_graph`` the boolean (c, c) κ-NN
    graph of the Eq. 6 cohort similarity of W; ``relation`` the inputs' :class:`~cova.inputs.Relation`;
    ``columns`` the embedded column objects of a relation run (the method's extra ``column_embedding``) and
    ``column_labels`` their classes (the relation's column labels); ``train`` the training rows of a split (scope
    ``all`` only); ``W`` the run's affinity graph and ``degree`` the degrees of the input graph before
    normalisation (both over the rows scored); ``kl`` the final KL divergence the method reported. The settings
    (:data:`SETTINGS`) are always present: ``geometry`` of the embedding (``"plane"`` or ``"sphere"``), κ, the
    k of the neighbourhood scores, and the size above which the O(n²) scores are estimated from ``n_queries`` query
    rows (``exact_max_points``; :func:`query_rows`).
    """

    Z: np.ndarray
    n_cohorts: int
    X: np.ndarray | None = None
    labels: np.ndarray | None = None
    prototypes: np.ndarray | None = None
    placed_prototypes: np.ndarray | None = None
    original_graph: np.ndarray | None = None
    relation: Any = None
    gold_labels: np.ndarray | None = None
    gold_prototypes: np.ndarray | None = None
    W: Any = None
    degree: np.ndarray | None = None
    kl: float | None = None
    columns: np.ndarray | None = None
    column_labels: np.ndarray | None = None
    train: np.ndarray | None = None
    nerv: Any = None
    ground_truth: np.ndarray | None = None
    n_neighbors: int = 12
    kappa: int = 2
    geometry: str = "plane"
    knn_k: int = 5
    graph_k: int = 10
    exact_max_points: int = EXACT_MAX_POINTS
    n_queries: int = N_QUERIES

    def available(self) -> set[str]:
        """Names of the data fields that are not ``None`` (the settings are not data)."""
        return {f.name for f in fields(self) if f.name not in SETTINGS and getattr(self, f.name) is not None}


#: The fields of :class:`ScoreData` that are settings, not data a metric may lack.
SETTINGS = frozenset({"n_cohorts", "n_neighbors", "kappa", "geometry", "knn_k", "graph_k", "exact_max_points",
                      "n_queries"})


@dataclass(frozen=True)
class Metric:
    """One registered metric (see the module docstring)."""

    name: str
    compute: Callable[[ScoreData], dict[str, float]]
    needs: frozenset[str]
    keys: tuple[str, ...]
    scope: Literal["rows", "all"] = "rows"
    group: str | None = None
    arrays: tuple[str, ...] = ()


METRICS: dict[str, Metric] = {}


def register(name: str, needs: Iterable[str], keys: Iterable[str], scope: Literal["rows", "all"] = "rows",
             group: str | None = None, arrays: Iterable[str] = (),
             ) -> Callable[[Callable[[ScoreData], dict[str, Any]]], Callable[[ScoreData], dict[str, Any]]]:
    """Decorator adding a metric to :data:`METRICS` under ``name``; with a ``group`` it is opt-in (evaluated only
    when that group is asked for). ``arrays`` names the per-point arrays it returns beside its scores ``keys``
    (e.g. every point's local radii): the score step saves them per run (``per_point.npz``) for the figures that
    draw them, so that no renderer computes a measure again."""
    def add(func: Callable[[ScoreData], dict[str, Any]]) -> Callable[[ScoreData], dict[str, Any]]:
        if name in METRICS:
            raise UserError(f"metric {name!r} is already registered")
        METRICS[name] = Metric(name, func, frozenset(needs), tuple(keys), scope, group, tuple(arrays))
        return func
    return add


def groups() -> list[str]:
    """The names of the opt-in metric groups, sorted."""
    return sorted({m.group for m in METRICS.values() if m.group is not None})


def check_groups(measures: Iterable[str] | None) -> tuple[str, ...]:
    """``measures`` as a tuple of known group names (no repeats, order kept); ValueError for an unknown one."""
    if measures is None:
        return ()
    if isinstance(measures, str):
        raise UserError(f"measures must be a list of group names, not a string; got {measures!r}")
    chosen = tuple(dict.fromkeys(measures))
    unknown = [g for g in chosen if g not in groups()]
    if unknown:
        raise UserError(f"measures: unknown metric group(s) {unknown}; allowed: {groups()}")
    return chosen


def query_rows(d: ScoreData) -> np.ndarray | None:
    """The query rows of the subsampled scores of ``d``: ``None`` (every row, the exact scores) up to
    ``d.exact_max_points`` rows (or when ``n_queries`` would take every row), else the ``d.n_queries`` rows of
    :func:`~.subsample.pairwise_subsample`, a function of the number of rows and the seed alone: the same rows for
    every method run on a data set."""
    n = d.Z.shape[0]
    rows = pairwise_subsample(n, max_points=d.n_queries, exact_max_points=d.exact_max_points)
    return None if rows.size == n else rows


def _exact_or_estimated(d: ScoreData, keys: tuple[str, ...], exact: Callable[[], tuple[float, ...]],
                        per_row: Callable[[np.ndarray], tuple[np.ndarray, ...]]) -> dict[str, float | Estimate]:
    """The scores ``keys``: ``exact()`` on every row, or above the threshold each estimated from its per-row values
    on the query rows (:func:`query_rows`, ``per_row(rows)``)."""
    rows = query_rows(d)
    if rows is None:
        return dict(zip(keys, exact()))
    return {key: estimate(values, d.Z.shape[0]) for key, values in zip(keys, per_row(rows))}


@register("s_n", needs=("X", "Z", "labels"), keys=("s_n", "s_n_cohort_kbar"))
def _s_n(d: ScoreData) -> dict[str, float | Estimate]:
    return _exact_or_estimated(d, ("s_n", "s_n_cohort_kbar"), lambda: s_n_readings(d.X, d.Z, d.labels),
                               lambda rows: s_n_readings_per_row(d.X, d.Z, d.labels, rows))


@register("s_s", needs=("Z", "labels"), keys=("s_s",))
def _s_s(d: ScoreData) -> dict[str, float | Estimate]:
    return {"s_s": _s_s_of(d, d.labels)}


def _s_s_of(d: ScoreData, labels: np.ndarray) -> float | Estimate:
    """S_s of ``d.Z`` under ``labels``: estimated from the query rows (:func:`query_rows`) only where the exact
    score costs O(n²), i.e. where the nearest neighbours of Z are found by brute force (more than
    :data:`~.neighborhood.KDTREE_MAX_DIM` columns); with the KD-tree (every 2-D or 3-D map) it costs O(n log n) and
    stays exact at every size."""
    rows = query_rows(d)
    if rows is None or d.Z.shape[1] <= KDTREE_MAX_DIM:
        return s_s(d.Z, labels)
    return estimate(s_s_per_row(d.Z, labels, rows), d.Z.shape[0])


@register("s_c", needs=("Z", "labels", "prototypes"), keys=("s_c",))
def _s_c(d: ScoreData) -> dict[str, float]:
    targets = d.prototypes if d.placed_prototypes is None else d.placed_prototypes
    return {"s_c": s_c(d.Z, d.labels, targets)}


@register("s_c_aligned", needs=("Z", "labels", "prototypes"), keys=("s_c_aligned",))
def _s_c_aligned(d: ScoreData) -> dict[str, float]:
    return {"s_c_aligned": s_c(procrustes_align(d.Z, d.labels, d.prototypes), d.labels, d.prototypes)}


@register("s_c_r", needs=("Z", "labels", "prototypes"), keys=("s_c_r",))
def _s_c_r(d: ScoreData) -> dict[str, float]:
    return {"s_c_r": s_c_r(d.Z, d.labels, d.prototypes, kappa=d.kappa)}


@register("trustworthiness_continuity", needs=("X", "Z"), keys=("trustworthiness", "continuity"))
def _trustworthiness_continuity(d: ScoreData) -> dict[str, float | Estimate]:
    return _exact_or_estimated(d, ("trustworthiness", "continuity"),
                               lambda: trustworthiness_continuity(d.X, d.Z, d.n_neighbors),
                               lambda rows: trustworthiness_continuity_per_row(d.X, d.Z, d.n_neighbors, rows))


@register("s_c_r_orig", needs=("Z", "labels", "original_graph"), keys=("s_c_r_orig",))
def _s_c_r_orig(d: ScoreData) -> dict[str, float]:
    return {"s_c_r_orig": recall_against(d.original_graph, d.Z, d.labels, d.n_cohorts, d.kappa)}


@register("gold", needs=("Z", "labels", "gold_labels", "gold_prototypes"), keys=("s_c_r_gold", "s_s_gold"),
          scope="all")
def _gold(d: ScoreData) -> dict[str, float | Estimate]:
    return {"s_c_r_gold": s_c_r(d.Z, d.labels, d.gold_prototypes, kappa=d.kappa),
            "s_s_gold": _s_s_of(d, d.gold_labels)}


@register("heldout_knn_error", needs=("Z", "labels", "train"), keys=("heldout_knn_error",), scope="all")
def _heldout_knn_error(d: ScoreData) -> dict[str, float]:
    return {"heldout_knn_error": heldout_knn_error(d.Z, d.labels, d.train, d.knn_k)}


@register("radial_cv", needs=("Z", "degree"), keys=("radial_cv",))
def _radial_cv(d: ScoreData) -> dict[str, float]:
    return {"radial_cv": radial_cv(d.Z)}


@register("centre_fraction", needs=("Z", "degree"), keys=("centre_fraction",))
def _centre_fraction(d: ScoreData) -> dict[str, float]:
    return {"centre_fraction": centre_fraction(d.Z)}


@register("degree_radius_rho", needs=("Z", "degree"), keys=("degree_radius_rho",))
def _degree_radius_rho(d: ScoreData) -> dict[str, float]:
    return {"degree_radius_rho": degree_radius_rho(d.Z, d.degree, d.geometry, d.graph_k)}


@register("knn_accuracy", needs=("Z", "labels", "degree"), keys=("knn_accuracy",))
def _knn_accuracy(d: ScoreData) -> dict[str, float]:
    return {"knn_accuracy": knn_accuracy(d.Z, d.labels, d.knn_k, d.geometry)}


@register("graph_precision", needs=("Z", "W", "degree"), keys=("graph_precision",))
def _graph_precision(d: ScoreData) -> dict[str, float]:
    return {"graph_precision": graph_precision(d.Z, d.W, d.graph_k, d.geometry)}


@register("kl", needs=("kl",), keys=("kl",), scope="all")
def _kl(d: ScoreData) -> dict[str, float]:
    return {"kl": float(d.kl)}


@register("mean_rank", needs=("Z", "relation", "columns"), keys=("mean_rank", "mean_rank_ties"), scope="all")
def _mean_rank(d: ScoreData) -> dict[str, float]:
    R = d.relation.matrix
    return {"mean_rank": mean_rank(R, d.Z, d.columns, top=MEAN_RANK_TOP),
            "mean_rank_ties": mean_rank_ties(R, d.Z, d.columns, top=MEAN_RANK_TOP)}


@register("pooled_1nn_error", needs=("Z", "columns", "labels", "column_labels"), keys=("pooled_1nn_error",),
          scope="all")
def _pooled_1nn_error(d: ScoreData) -> dict[str, float]:
    return {"pooled_1nn_error": pooled_knn_error(d.Z, d.columns, d.labels, d.column_labels, n_neighbors=1)}


@register("gamma_objective", needs=("Z", "relation", "columns"), keys=("gamma_objective",), scope="all")
def _gamma_objective(d: ScoreData) -> dict[str, float]:
    return {"gamma_objective": float(gamma_objective(d.relation.matrix, d.Z, d.columns, GAMMA_K, GAMMA_K))}


# --------------------------------------------------------------------------------------------------------
# opt-in group "featmap": featMAP Table 1 (Sec. 4.1) and the local-radius correlation (Sec. 4.2.3)
# --------------------------------------------------------------------------------------------------------

FEATMAP_KEYS = (("trustworthiness_k7", "continuity_k7", "shepard_goodness", "normalized_stress")
                + tuple(f"knn_accuracy_k{k}" for k in FEATMAP_KNN_KS)
                + ("centroid_triplet_accuracy", "radius_correlation"))


def _pairwise_rows(d: ScoreData) -> tuple[np.ndarray, np.ndarray]:
    rows = pairwise_subsample(d.Z.shape[0])
    return d.X[rows], d.Z[rows]


@register("featmap_trustworthiness_continuity", needs=("X", "Z"), keys=FEATMAP_KEYS[:2], group="featmap")
def _featmap_tc(d: ScoreData) -> dict[str, float]:
    t, c = trustworthiness_continuity(*_pairwise_rows(d), FEATMAP_K)
    return {"trustworthiness_k7": t, "continuity_k7": c}


@register("featmap_distances", needs=("X", "Z"), keys=FEATMAP_KEYS[2:4], group="featmap")
def _featmap_distances(d: ScoreData) -> dict[str, float]:
    rho, stress = shepard_goodness_and_stress(*_pairwise_rows(d))
    return {"shepard_goodness": rho, "normalized_stress": stress}


@register("featmap_knn_accuracy", needs=("Z", "labels"), keys=FEATMAP_KEYS[4:4 + len(FEATMAP_KNN_KS)],
          group="featmap")
def _featmap_knn(d: ScoreData) -> dict[str, float]:
    return {f"knn_accuracy_k{k}": v for k, v in knn_accuracy_series(d.Z, d.labels, FEATMAP_KNN_KS).items()}


@register("featmap_centroid_triplet", needs=("X", "Z", "labels"), keys=("centroid_triplet_accuracy",),
          group="featmap")
def _featmap_centroid_triplet(d: ScoreData) -> dict[str, float]:
    return {"centroid_triplet_accuracy": centroid_triplet_accuracy(d.X, d.Z, d.labels)}


@register("featmap_radius_correlation", needs=("X", "Z"), keys=("radius_correlation",), group="featmap",
          arrays=("radius_original", "radius_embedded"))
def _featmap_radius(d: ScoreData) -> dict[str, Any]:
    r_o, r_e = local_radius_pair(d.X, d.Z)
    return {"radius_correlation": pearson(r_o, r_e), "radius_original": r_o, "radius_embedded": r_e}


# --------------------------------------------------------------------------------------------------------
# opt-in group "nerv": the measures of NeRV Sec. 4.3.1 (Figs. 2-9, Table 2), with the curves per run
# --------------------------------------------------------------------------------------------------------

NERV_KEYS = ("smoothed_precision_error", "smoothed_recall_error", "rank_precision_error", "rank_recall_error",
             "precision_20", "recall_20", "pr_auc", "trustworthiness_20", "continuity_20", "knn5_error",
             "joint_smoothed_precision_error", "joint_smoothed_recall_error", "precision_recall_at_r")


@register("nerv", needs=("X", "Z", "labels", "nerv"), keys=NERV_KEYS, scope="all", group="nerv",
          arrays=("pr_k", "pr_precision", "pr_recall", "t_curve", "c_curve", "pr_r_k", "pr_r_precision",
                  "pr_r_recall"))
def _nerv(d: ScoreData) -> dict[str, Any]:
    """The NeRV measures (:func:`~.retrieval.nerv_measures`) with the run's settings (``k_max``, ``joint``,
    ``pr_relevant``, ``pr_k_max``), in X or, with ``space: ground_truth``, in the dataset's latent coordinates;
    the joint and precision-at-r keys only when the settings ask for them."""
    settings = dict(d.nerv)
    space = settings.pop("space", "inputs")
    X = d.X
    if space == "ground_truth":
        if d.ground_truth is None or d.ground_truth.shape[0] != d.Z.shape[0]:
            raise UserError("the NeRV measures in the ground-truth space need the dataset's latent coordinates, one "
                             "row per embedded sample")
        X = np.asarray(d.ground_truth, dtype=np.float64)
    scores, curves = nerv_measures(X, d.Z, d.labels, **settings)
    return {**scores, **curves}


def _chosen(data: ScoreData, names: Iterable[str] | None, scope: str | None,
            measures: Iterable[str] | None) -> list[Metric]:
    have = data.available()
    if names is None:
        opted = set(check_groups(measures))
        chosen = [m for m in METRICS.values() if m.group is None or m.group in opted]
    else:
        chosen = [METRICS[n] for n in names]
    return [m for m in chosen if m.needs <= have and (scope is None or m.scope == scope)]


def evaluate(data: ScoreData, names: Iterable[str] | None = None, scope: str | None = None,
             measures: Iterable[str] | None = None, arrays: dict[str, np.ndarray] | None = None) -> dict[str, float]:
    """The scores of the metrics ``names`` (default: every registered metric outside the opt-in groups, plus
    those of the groups ``measures``) of ``scope`` (default: any) whose needs ``data`` has, in registry order.
    The per-point arrays of those metrics go into ``arrays`` when given (and are dropped otherwise).

    A score a metric estimated from query rows (an :class:`~.subsample.Estimate`, above ``exact_max_points``
    rows) writes its estimate under its key and beside it ``<key>_se`` (standard error), ``<key>_ci95`` (half-width
    of the 95 % confidence interval) and ``n_queries`` (the query rows, the same for every subsampled score of the
    record): a score is subsampled exactly when its record has ``<key>_ci95``. Exact scores add no key."""
    out: dict[str, float] = {}
    for m in _chosen(data, names, scope, measures):
        values = m.compute(data)
        for k in m.keys:
            if k not in values:
                continue
            v = values[k]
            if isinstance(v, Estimate):  # a score estimated from query rows: its value and how sure it is
                out.update({k: v.value, f"{k}_se": v.se, f"{k}_ci95": v.ci95, "n_queries": v.n_queries})
            else:
                out[k] = v
        if arrays is not None:
            arrays.update({k: np.asarray(values[k]) for k in m.arrays if k in values})
    return out


def nan_scores(data: ScoreData, names: Iterable[str] | None = None, scope: str | None = None,
               measures: Iterable[str] | None = None) -> dict[str, float]:
    """NaN for every key :func:`evaluate` would write: the record of a run without an embedding."""
    return {k: float("nan") for m in _chosen(data, names, scope, measures) for k in m.keys}


def metric_keys(names: Iterable[str]) -> list[str]:
    """The output keys of the metrics ``names``, in order."""
    return [k for n in names for k in METRICS[n].keys]
