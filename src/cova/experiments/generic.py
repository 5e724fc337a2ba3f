"""Renderers for any paper: score tables, scatter grids, sweeps and heat maps of scored runs.

- ``score_table``: scores of every run beside the paper's numbers (e.g. COVA Table H.2) and a scatter grid.
- ``scatter_grid``: one cohort scatter per run, datasets as rows (e.g. COVA Fig. 2 / H.4).
- ``sweep``: scores against one swept parameter (e.g. COVA Fig. H.3, the α sweep).
- ``heatmap``: one heat map per score over two swept parameters (e.g. COVA Fig. H.2, eigen-COVA α × η).
- ``fit_times``: every run's fit time against its number of samples (e.g. COVA Fig. H.11).

The tables of ``score_table`` and ``scatter_grid`` also hold measures of the drawn displays
(:func:`display_measures`): every run's cohort tightness and, with the ``misplaced`` boxes, their number.

Scores are fractions in the CSV; the paper's printed numbers, in percent, in ``paper_*`` columns where the
experiment names a ``reference``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..constraints import POSITIVE, POSITIVE_INT, SEED, Block, Rule, declare, real
from ..errors import UserError
from ..inputs import Inputs
from ..metrics.neighborhood import knn_indices
from ..metrics.retrieval import knn_misclassified
from ..viz.figures import save_figure
from ..viz.names import entry_names, run_names
from ..viz.panels import ScatterPanel, scatter_grid_figure, spread_points
from ..viz.runtimes import fit_times_figure
from ..viz.saliency import image_shape
from ..viz.scatter import format_scores
from ..viz.sweeps import heatmap_figure, sweep_figure
from ..viz.tables import write_csv_atomic
from .common import (
    DEFAULT_SCORES,
    SCORES,
    MappingOf,
    RunLoader,
    about,
    findings_note,
    records,
    with_reference,
)
from .page import write_page, write_tables

__all__ = ["score_table", "scatter_grid", "sweep", "heatmap", "fit_times", "time_order", "neighbour_groups",
           "cohort_tightness", "display_measures", "Neighbours", "Misplaced", "Thumbnails", "neighbour_options",
           "misplaced_options", "thumbnail_options", "examples_match_a_run"]


# ----------------------------------------------------------------------------------------------------------------
# The nested options of the scatter grids
# ----------------------------------------------------------------------------------------------------------------
class Neighbours(NamedTuple):
    """Seeded example points per cohort marked with their nearest neighbours in X (:func:`neighbour_groups`)."""

    per_cohort: int
    k: int
    random_state: int


@declare({"per_cohort": POSITIVE_INT, "k": POSITIVE_INT, "random_state": SEED})
def neighbour_options(*, per_cohort: int = 1, k: int = 4, random_state: int = 0) -> Neighbours:
    """The ``neighbours`` block of ``scatter_grid`` / ``score_table``: ``per_cohort`` seeded example points of every
    cohort (seed ``random_state``), each marked with its ``k`` nearest neighbours in X (COVA Fig. H.1)."""
    return Neighbours(per_cohort, k, random_state)


class Misplaced(NamedTuple):
    """Boxes around the points whose k-NN vote in the panel is another cohort."""

    k: int


@declare({"k": POSITIVE_INT})
def misplaced_options(*, k: int = 5) -> Misplaced:
    """The ``misplaced`` block of ``scatter_grid`` / ``score_table``: boxes around the points whose ``k``-NN vote in
    the panel is another cohort (COVA Fig. H.1)."""
    return Misplaced(k)


class Thumbnails(NamedTuple):
    """The images of points spread over each panel."""

    grid: int
    zoom: float


@declare({"grid": POSITIVE_INT, "zoom": POSITIVE})
def thumbnail_options(*, grid: int = 6, zoom: float = 0.5) -> Thumbnails:
    """The ``thumbnails`` block of ``scatter_grid`` / ``score_table``: the images of about ``grid`` × ``grid``
    points spread over each panel, drawn at their places at scale ``zoom`` (datasets whose X are images)."""
    return Thumbnails(grid, zoom)


#: The options of the cohort scatter grid ``score_table`` and ``scatter_grid`` draw (:func:`_scatter_grid`).
SCATTER_GRID_OPTIONS: dict[str, list[Any]] = {
    "n_cols": [*POSITIVE_INT, None],
    "original": ["boolean"],
    "show_prototypes": ["boolean"],
    "neighbours": [Block(neighbour_options, "a mapping {per_cohort, k, random_state}"), None],
    "misplaced": [Block(misplaced_options, "a mapping {k}"), None],
    "thumbnails": [Block(thumbnail_options, "a mapping {grid, zoom}"), None],
}


def _original_panel(inp: Inputs) -> ScatterPanel:
    """The inputs' X as the first panel of a row: as it is when 2-D, else its first two principal components."""
    X = np.asarray(inp.X, dtype=np.float64)
    if X.shape[1] == 2:
        return ScatterPanel(X, inp.labels, inp.n_cohorts, None, "original data")
    from sklearn.decomposition import PCA

    return ScatterPanel(PCA(n_components=2, svd_solver="full").fit_transform(X), inp.labels, inp.n_cohorts, None,
                        f"original data ({X.shape[1]}-d: first two principal components)")


def neighbour_groups(X: np.ndarray, labels: np.ndarray, per_cohort: int, k: int,
                     random_state: int) -> tuple[np.ndarray, ...]:
    """``per_cohort`` seeded example points of every cohort, each followed by its ``k`` nearest neighbours in
    ``X`` (Euclidean, ties to the lower index): the highlighted points of COVA H.1 ("a few random example
    points per cohort with their 4 nearest neighbours in the original space")."""
    rng = np.random.default_rng(int(random_state))
    examples = [i for j in np.unique(labels)
                for i in np.sort(rng.choice(np.flatnonzero(labels == j),
                                            size=min(per_cohort, int(np.sum(labels == j))), replace=False))]
    nn = knn_indices(np.asarray(X, dtype=np.float64), int(k))
    return tuple(np.r_[i, nn[i]] for i in examples)


def cohort_tightness(Z: np.ndarray, labels: np.ndarray) -> float:
    """How tight the cohorts of display ``Z`` are: the between-cohort share of its variance,
    1 − Σ_i ‖z_i − c_{y_i}‖² / Σ_i ‖z_i − z̄‖² (c_j the centre of cohort j, z̄ that of all points), in [0, 1]: 1 when
    every cohort is a single point, 0 when all cohorts share one centre. Invariant to the display's scale, rotation
    and translation, so displays of different models compare ("tighter sample distributions within each cohort",
    COVA H.1). NaN for a display with a non-finite point or no spread."""
    Z = np.asarray(Z, dtype=np.float64)
    if Z.size == 0 or not np.all(np.isfinite(Z)):
        return float("nan")
    _, codes = np.unique(np.asarray(labels), return_inverse=True)
    codes = codes.ravel()
    counts = np.bincount(codes)
    centres = np.stack([np.bincount(codes, weights=Z[:, d]) for d in range(Z.shape[1])], axis=1) / counts[:, None]
    total = float(np.sum((Z - Z.mean(axis=0)) ** 2))
    if total <= 0.0:
        return float("nan")
    return 1.0 - float(np.sum((Z - centres[codes]) ** 2)) / total


def display_measures(spec: dict[str, Any], load: RunLoader, misplaced_k: int | None = None) -> pd.DataFrame:
    """One row per run of ``spec`` (in its order): ``cohort_tightness`` (:func:`cohort_tightness` of the run's
    embedding and cohorts) and, with ``misplaced_k``, ``n_misplaced``: the number of points whose ``misplaced_k``-NN
    vote in the display is another cohort (the boxes of :func:`_scatter_grid`, COVA Fig. H.1's "misplaced boundary
    points"). NaN for a run without a finite embedding."""
    rows = []
    for run in spec["runs"]:
        inp, emb = load.run_inputs(run), load.embedding(run)
        finite = bool(emb.Z.size) and bool(np.all(np.isfinite(emb.Z)))
        row: dict[str, float] = {"cohort_tightness": cohort_tightness(emb.Z, inp.labels) if finite else np.nan}
        if misplaced_k is not None:
            row["n_misplaced"] = (float(np.sum(knn_misclassified(emb.Z[:, :2], inp.labels, misplaced_k)))
                                  if finite else np.nan)
        rows.append(row)
    return pd.DataFrame(rows, index=range(len(rows)))


def _thumbnails(load: RunLoader, run: dict[str, Any], Z: np.ndarray,
                grid: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The images of points spread over display ``Z`` (:func:`cova.viz.panels.spread_points` on a ``grid`` ×
    ``grid`` grid), from the run's dataset as loaded; ``None`` for a display with no finite points."""
    if not np.all(np.isfinite(Z)):
        return None
    data = load.dataset(run)
    X = data.X
    shape = image_shape(X.shape[1], data.meta)
    idx = spread_points(Z, grid)
    return idx, X[idx].reshape(len(idx), *shape)


def _scatter_grid(spec: dict[str, Any], table: pd.DataFrame, out: Mapping[str, str], n_cols: int | None, original: bool,
                  show_prototypes: bool, neighbours: Mapping[str, Any] | None, misplaced: Mapping[str, Any] | None,
                  thumbnails: Mapping[str, Any] | None, load: RunLoader | None = None) -> None:
    """The cohort scatters of ``spec``'s runs, a row per dataset (wrapped after ``n_cols`` panels; one row when
    ``None``). ``original``: a first panel with the inputs' X; ``neighbours`` (:func:`neighbour_options`,
    :func:`neighbour_groups`, marked in every panel); ``misplaced`` (:func:`misplaced_options`: boxes around the
    points whose k-NN vote in the panel is another cohort, :func:`cova.metrics.retrieval.knn_misclassified`);
    ``thumbnails`` (:func:`thumbnail_options`, :func:`_thumbnails`); ``show_prototypes``: the prototypes the runs
    placed cohorts at. ``load``: a loader that may already hold the runs' inputs."""
    load = load or RunLoader()
    hood = neighbour_options(**neighbours) if neighbours else None
    boxes = misplaced_options(**misplaced) if misplaced else None
    thumbs_of = thumbnail_options(**thumbnails) if thumbnails else None
    rows = []
    for d in dict.fromkeys(r["dataset"] for r in spec["runs"]):
        row = []
        runs = [r for r in spec["runs"] if r["dataset"] == d]
        first = load.run_inputs(runs[0])
        groups = () if hood is None else neighbour_groups(first.X, first.labels, hood.per_cohort, hood.k,
                                                          hood.random_state)
        names = tuple(first.label_names)
        if original:
            row.append(replace(_original_panel(first), groups=groups, label_names=names))
        for run, name in zip(runs, run_names(runs)):
            inp, emb = load.run_inputs(run), load.embedding(run)
            rec = table[(table.dataset == run["dataset"]) & (table.inputs == run["inputs"])
                        & (table.method_entry == run["entry"])].iloc[0]
            placed = emb.placed_or_none if show_prototypes else None
            title = f"{run['dataset']}: {name}\n{format_scores(rec.to_dict(), ('s_n', 's_c', 's_s'))}"
            boxed = None
            if boxes is not None and np.all(np.isfinite(emb.Z)):
                boxed = np.flatnonzero(knn_misclassified(emb.Z[:, :2], inp.labels, boxes.k))
                title += f"\n{len(boxed)} boxed: {boxes.k}-NN vote for another cohort"
            thumbs = _thumbnails(load, run, emb.Z, thumbs_of.grid) if thumbs_of is not None else None
            row.append(ScatterPanel(emb.Z, inp.labels, inp.n_cohorts, placed, title, groups=groups, boxed=boxed,
                                    thumbnails=thumbs,
                                    thumbnail_zoom=float(thumbs_of.zoom if thumbs_of is not None else 0.5),
                                    label_names=tuple(inp.label_names)))
        wrap = int(n_cols or len(row))
        rows.extend(row[i:i + wrap] for i in range(0, len(row), wrap))
    side = 5.0 if thumbs_of is not None else None  # room for the images
    save_figure(scatter_grid_figure(rows, about(spec).title, **({"width": side, "height": side} if side else {})),
                out)


def _with_display_measures(spec: dict[str, Any], table: pd.DataFrame, load: RunLoader,
                           misplaced: Mapping[str, Any] | None) -> pd.DataFrame:
    """``table`` (one row per run, in the runs' order) with the columns of :func:`display_measures` at its end."""
    k = misplaced_options(**misplaced).k if misplaced else None
    return pd.concat([table, display_measures(spec, load, k).set_axis(table.index)], axis=1)


@declare({"scores": SCORES, **SCATTER_GRID_OPTIONS})
def score_table(spec: dict[str, Any], out: dict[str, str], *, scores: Sequence[str] = tuple(DEFAULT_SCORES),
                n_cols: int | None = None, original: bool = False, show_prototypes: bool = True,
                neighbours: Mapping[str, Any] | None = None, misplaced: Mapping[str, Any] | None = None,
                thumbnails: Mapping[str, Any] | None = None) -> None:
    """Scores (``scores``) beside the paper's numbers (``reference``) and the display measures
    (:func:`display_measures`), and a scatter grid (the other options: :func:`_scatter_grid`)."""
    scores = list(scores)
    load = RunLoader()
    table = with_reference(records(spec, scores), spec["reference"], scores)
    table = _with_display_measures(spec, table, load, misplaced)
    write_tables(spec, table, out)
    _scatter_grid(spec, table, out, n_cols, original, show_prototypes, neighbours, misplaced, thumbnails,
                  load)


@declare(SCATTER_GRID_OPTIONS)
def scatter_grid(spec: dict[str, Any], out: dict[str, str], *, n_cols: int | None = None, original: bool = False,
                 show_prototypes: bool = True, neighbours: Mapping[str, Any] | None = None,
                 misplaced: Mapping[str, Any] | None = None, thumbnails: Mapping[str, Any] | None = None) -> None:
    """One cohort scatter per run, one row per dataset (wrapped after ``n_cols`` panels; ``show_prototypes: false``
    leaves out the prototypes the runs placed cohorts at; the other options: :func:`_scatter_grid`); the table holds
    every run's scores and display measures (:func:`display_measures`)."""
    load = RunLoader()
    table = _with_display_measures(spec, records(spec), load, misplaced)
    write_tables(spec, table, out)
    _scatter_grid(spec, table, out, n_cols, original, show_prototypes, neighbours, misplaced, thumbnails,
                  load)


@declare({"x": [str], "scores": SCORES})
def sweep(spec: dict[str, Any], out: dict[str, str], *, x: str, scores: Sequence[str] = tuple(DEFAULT_SCORES)
          ) -> None:
    """Scores (``scores``) against the swept grid parameter ``x``."""
    scores = list(scores)
    table = records(spec, scores).sort_values([c for c in ("dataset", "method", x)], kind="stable",
                                              ignore_index=True)
    write_tables(spec, table, out)
    save_figure(sweep_figure(table, x, scores, about(spec).title), out)


def _example_panels(spec: dict[str, Any], table: pd.DataFrame, where: Mapping[str, Any]) -> list[ScatterPanel]:
    """Scatter panels of the runs whose grid values equal every item of ``where``, in the table's order."""
    load, panels = RunLoader(), []
    chosen = [r for r in spec["runs"] if all(r.get("grid", {}).get(k) == v for k, v in where.items())]
    if not chosen:
        raise UserError(f"experiment {spec['name']!r}: no run has the grid values examples = {dict(where)}")
    for run in chosen:
        inp, emb = load.run_inputs(run), load.embedding(run)
        rec = table[table.method_entry == run["entry"]]
        for k, v in run["grid"].items():
            rec = rec[rec[k] == v]
        panels.append(ScatterPanel(emb.Z, inp.labels, inp.n_cohorts, emb.placed_or_none,
                                   f"{run_names([run])[0]}\n"
                                   f"{format_scores(rec.iloc[0].to_dict(), ('s_n', 's_c', 's_s'))}",
                                   label_names=tuple(inp.label_names)))
    return panels


def examples_match_a_run(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """Rule of ``heatmap``: ``examples`` must equal the grid values of at least one of the experiment's runs
    (``context["runs"]``; not checked without them)."""
    examples = options.get("examples")
    if not examples or "runs" not in context:
        return None
    if any(all(run.get("grid", {}).get(k) == v for k, v in examples.items()) for run in context["runs"]):
        return None
    return "examples", "it matches no run's grid values; allowed: the grid values of the experiment's method entries"


_EXAMPLES_RULES: list[Rule] = [examples_match_a_run]


@declare({"x": [str], "y": [str], "scores": SCORES,
          "examples": [MappingOf([real()], "a mapping of grid parameters to numbers (at least one)",
                                 min_items=1), None]},
         rules=_EXAMPLES_RULES)
def heatmap(spec: dict[str, Any], out: dict[str, str], *, x: str, y: str,
            scores: Sequence[str] = tuple(DEFAULT_SCORES), examples: Mapping[str, float] | None = None) -> None:
    """One heat map per score (``scores``) over the grid parameters ``x`` and ``y``; ``examples: {param: value,
    ...}`` adds the scatters of the runs with those grid values below (COVA Fig. H.2's outputs at α = 0.9)."""
    scores = list(scores)
    table = records(spec, scores).sort_values([y, x], kind="stable", ignore_index=True)
    write_tables(spec, table, out)
    panels = _example_panels(spec, table, examples) if examples else []
    save_figure(heatmap_figure(table, x, y, scores, about(spec).title, panels), out)


def time_order(table: pd.DataFrame) -> str:
    """Computed statement for :func:`fit_times`: per data set, the method entries from fastest to slowest at the
    largest number of samples that every entry ran at."""
    parts = []
    for dataset, g in table[table.status == "ok"].groupby("dataset", sort=False):
        common = set.intersection(*(set(h.n_samples) for _, h in g.groupby("method_entry")))
        if not common:
            continue
        at = g[g.n_samples == max(common)].sort_values("runtime_s", kind="stable")
        order = ", ".join(f"{e} {t:.3g} s" for e, t in zip(at.method_entry, at.runtime_s))
        parts.append(f"{dataset} at l = {max(common)}: {order}")
    return " Computed from this table: " + "; ".join(parts) + "." if parts else ""


@declare({})
def fit_times(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Every run's fit time against its number of samples l, one line per method entry on log-log axes (COVA Fig.
    H.11). The time is the embed job's own measurement (``Embedding.runtime_s``: the wall-clock seconds of ``fit``,
    plus ``transform`` of the held-out rows on a split) with the job's threads; l is the number of samples fitted
    (the training rows on a split). A degenerate run has no time point."""
    load, rows = RunLoader(), []
    for run in spec["runs"]:
        emb, inp = load.embedding(run), load.run_inputs(run)
        n_fit = int(inp.train.sum()) if inp.train is not None else inp.n_samples
        rows.append({"dataset": run["dataset"], "inputs": run["inputs"], "method_entry": run["group"],
                     "method": run["method"], "n_samples": n_fit, "status": emb.status,
                     "runtime_s": float(emb.runtime_s) if emb.status == "ok" else np.nan})
    table = pd.DataFrame(rows).sort_values(["dataset", "method_entry", "n_samples"], kind="stable",
                                           ignore_index=True)
    note = findings_note(spec, time_order(table))
    title = about(spec).title
    write_csv_atomic(table, out["csv"])
    write_page(spec, out, [("", table)], title=title, note=note)
    save_figure(fit_times_figure(table, title, entry_names(table.to_dict("records"))), out)
