"""Renderers for any paper: score tables, scatter grids, sweeps and heat maps of scored runs.

- ``score_table``: scores of every run beside the paper's numbers (e.g. COVA Table H.2) and a scatter grid.
- ``scatter_grid``: one cohort scatter per run, datasets as rows (e.g. COVA Fig. 2 / H.4).
- ``sweep``: scores against one swept parameter (e.g. COVA Fig. H.3, the α sweep).
- ``heatmap``: one heat map per score over two swept parameters (e.g. COVA Fig. H.2, eigen-COVA α × η).
- ``fit_times``: every run's fit time against its number of samples (e.g. COVA Fig. H.11).

Scores are fractions in the CSV; the paper's printed numbers, in percent, in ``paper_*`` columns where the
experiment names a ``reference``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..inputs import Inputs
from ..metrics.neighborhood import knn_indices
from ..metrics.retrieval import knn_misclassified
from ..viz.figures import save_figure
from ..viz.panels import ScatterPanel, scatter_grid_figure, spread_points
from ..viz.saliency import image_shape
from ..viz.scatter import format_scores
from ..viz.sweeps import heatmap_figure, sweep_figure
from ..viz.tables import write_csv_atomic, write_html_atomic
from .common import DEFAULT_SCORES, RunLoader, findings_note, records, with_reference, write_tables

__all__ = ["score_table", "scatter_grid", "sweep", "heatmap", "fit_times", "time_order", "neighbour_groups"]


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


def _thumbnails(load: RunLoader, run: dict[str, Any], Z: np.ndarray,
                options: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """The images of points spread over display ``Z`` (:func:`cova.viz.panels.spread_points` on a
    ``options["grid"]`` grid, default 6), from the run's dataset as loaded; ``None`` for a display with no finite
    points."""
    if not np.all(np.isfinite(Z)):
        return None
    data = load.dataset(run)
    X = data.X
    shape = image_shape(X.shape[1], data.meta)
    idx = spread_points(Z, int(options.get("grid", 6)))
    return idx, X[idx].reshape(len(idx), *shape)


def _scatter_grid(spec: dict[str, Any], table: pd.DataFrame, path: str) -> None:
    """The cohort scatters of ``spec``'s runs, a row per dataset. Options: ``original: true`` (a first panel with
    the inputs' X), ``neighbours: {per_cohort, k, random_state}`` (:func:`neighbour_groups`, marked in every
    panel), ``misplaced: {k}`` (boxes around the points whose k-NN vote in the panel is another cohort,
    :func:`cova.metrics.retrieval.knn_misclassified`), ``thumbnails: {grid, zoom}`` (:func:`_thumbnails`)."""
    load = RunLoader()
    hood, misplaced = spec.get("neighbours"), spec.get("misplaced")
    rows = []
    for d in dict.fromkeys(r["dataset"] for r in spec["runs"]):
        row = []
        runs = [r for r in spec["runs"] if r["dataset"] == d]
        first = load.run_inputs(runs[0])
        groups = () if not hood else neighbour_groups(first.X, first.labels, int(hood.get("per_cohort", 1)),
                                                      int(hood.get("k", 4)), int(hood.get("random_state", 0)))
        if spec.get("original"):
            row.append(replace(_original_panel(first), groups=groups))
        for run in runs:
            inp, emb = load.run_inputs(run), load.embedding(run)
            rec = table[(table.dataset == run["dataset"]) & (table.inputs == run["inputs"])
                        & (table.method_entry == run["entry"])].iloc[0]
            placed = emb.placed_or_none if spec.get("show_prototypes", True) else None
            name = run["entry"] if len({r["inputs"] for r in runs}) == 1 else f"{run['inputs']}: {run['entry']}"
            title = f"{run['dataset']}: {name}\n{format_scores(rec.to_dict(), ('s_n', 's_c', 's_s'))}"
            boxed = None
            if misplaced and np.all(np.isfinite(emb.Z)):
                k = int(misplaced.get("k", 5))
                boxed = np.flatnonzero(knn_misclassified(emb.Z[:, :2], inp.labels, k))
                title += f"\n{len(boxed)} boxed: {k}-NN vote for another cohort"
            thumbs = _thumbnails(load, run, emb.Z, spec["thumbnails"]) if spec.get("thumbnails") else None
            row.append(ScatterPanel(emb.Z, inp.labels, inp.n_cohorts, placed, title, groups=groups, boxed=boxed,
                                    thumbnails=thumbs,
                                    thumbnail_zoom=float((spec.get("thumbnails") or {}).get("zoom", 0.5))))
        n_cols = int(spec.get("n_cols") or len(row))
        rows.extend(row[i:i + n_cols] for i in range(0, len(row), n_cols))
    side = 5.0 if spec.get("thumbnails") else None  # room for the images
    save_figure(scatter_grid_figure(rows, spec.get("title", spec["name"]), **({"width": side, "height": side}
                                                                               if side else {})), path)


def score_table(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Scores beside the paper's numbers, and a scatter grid."""
    scores = spec.get("scores") or DEFAULT_SCORES
    table = with_reference(records(spec), spec.get("reference"), scores)
    write_tables(spec, table, out)
    _scatter_grid(spec, table, out["png"])


def scatter_grid(spec: dict[str, Any], out: dict[str, str]) -> None:
    """One cohort scatter per run, one row per dataset (wrapped after ``n_cols`` panels if the experiment sets it;
    ``show_prototypes: false`` leaves out the prototypes the runs placed cohorts at)."""
    table = records(spec)
    write_tables(spec, table, out)
    _scatter_grid(spec, table, out["png"])


def sweep(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Scores against the swept grid parameter ``x``."""
    x = spec["x"]
    scores = spec.get("scores") or DEFAULT_SCORES
    table = records(spec).sort_values([c for c in ("dataset", "method", x)], kind="stable", ignore_index=True)
    write_tables(spec, table, out)
    save_figure(sweep_figure(table, x, scores, spec.get("title", spec["name"])), out["png"])


def _example_panels(spec: dict[str, Any], table: pd.DataFrame, where: dict[str, Any]) -> list[ScatterPanel]:
    """Scatter panels of the runs whose grid values equal every item of ``where``, in the table's order."""
    load, panels = RunLoader(), []
    chosen = [r for r in spec["runs"] if all(r.get("grid", {}).get(k) == v for k, v in where.items())]
    if not chosen:
        raise ValueError(f"experiment {spec['name']!r}: no run has the grid values examples = {where}")
    for run in chosen:
        inp, emb = load.run_inputs(run), load.embedding(run)
        rec = table[table.method_entry == run["entry"]]
        for k, v in run["grid"].items():
            rec = rec[rec[k] == v]
        values = ", ".join(f"{k} = {v:g}" for k, v in run["grid"].items())
        panels.append(ScatterPanel(emb.Z, inp.labels, inp.n_cohorts, emb.placed_or_none,
                                   f"{run['entry']}: {values}\n"
                                   f"{format_scores(rec.iloc[0].to_dict(), ('s_n', 's_c', 's_s'))}"))
    return panels


def heatmap(spec: dict[str, Any], out: dict[str, str]) -> None:
    """One heat map per score over the grid parameters ``x`` and ``y``; ``examples: {param: value, ...}`` adds
    the scatters of the runs with those grid values below (COVA Fig. H.2's outputs at α = 0.9)."""
    x, y = spec["x"], spec["y"]
    scores = spec.get("scores") or DEFAULT_SCORES
    table = records(spec).sort_values([y, x], kind="stable", ignore_index=True)
    write_tables(spec, table, out)
    examples = _example_panels(spec, table, spec["examples"]) if spec.get("examples") else []
    save_figure(heatmap_figure(table, x, y, scores, spec.get("title", spec["name"]), examples), out["png"])


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


def fit_times(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Every run's fit time against its number of samples l, one line per method entry on log-log axes (COVA Fig.
    H.11). The time is the embed job's own measurement (``Embedding.runtime_s``: the wall-clock seconds of ``fit``,
    plus ``transform`` of the held-out rows on a split) with the job's threads; l is the number of samples fitted
    (the training rows on a split). A degenerate run has no time point."""
    import matplotlib.pyplot as plt

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
    write_csv_atomic(table, out["csv"])
    write_html_atomic(table, out["html"], title=spec.get("title", spec["name"]), note=note)
    datasets = list(dict.fromkeys(table.dataset))
    fig, axes = plt.subplots(1, len(datasets), figsize=(max(8.5, 6.4 * len(datasets)), 5.2), dpi=100, squeeze=False)
    markers = "osD^vP*Xph<>"
    for ax, d in zip(axes[0], datasets):
        g = table[(table.dataset == d) & (table.status == "ok")]
        for i, (entry, h) in enumerate(g.groupby("method_entry", sort=False)):
            ax.plot(h.n_samples, h.runtime_s, marker=markers[i % len(markers)], ms=4, color=f"C{i % 10}",
                    linestyle="-" if i < 10 else "--", label=entry)
        ax.set_xscale("log")
        ax.set_yscale("log")
        sizes = sorted(set(g.n_samples))
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_xlabel("samples fitted, l")
        ax.set_ylabel("fit wall-clock seconds (the embed job's threads)")
        ax.set_title(d, fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    save_figure(fig, out["png"])
