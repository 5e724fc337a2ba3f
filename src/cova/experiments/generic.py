"""Renderers for any paper: score tables, scatter grids, sweeps and heat maps of scored runs.

- ``score_table``: scores of every run beside the paper's numbers (e.g. COVA Table H.2) and a scatter grid.
- ``scatter_grid``: one cohort scatter per run, datasets as rows (e.g. COVA Fig. 2 / H.4).
- ``sweep``: scores against one swept parameter (e.g. COVA Fig. H.3, the α sweep).
- ``heatmap``: one heat map per score over two swept parameters (e.g. COVA Fig. H.2, eigen-COVA α × η).

Scores are fractions in the CSV; the paper's printed numbers, in percent, in ``paper_*`` columns where the
experiment names a ``reference``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..viz.figures import save_figure
from ..viz.panels import ScatterPanel, scatter_grid_figure
from ..viz.scatter import format_scores
from ..viz.sweeps import heatmap_figure, sweep_figure
from .common import DEFAULT_SCORES, RunLoader, records, with_reference, write_tables

__all__ = ["score_table", "scatter_grid", "sweep", "heatmap"]


def _scatter_grid(spec: dict[str, Any], table: pd.DataFrame, path: str) -> None:
    load = RunLoader()
    rows = []
    for d in dict.fromkeys(r["dataset"] for r in spec["runs"]):
        row = []
        for run in (r for r in spec["runs"] if r["dataset"] == d):
            inp, emb = load.run_inputs(run), load.embedding(run)
            rec = table[(table.dataset == run["dataset"]) & (table.method_entry == run["entry"])].iloc[0]
            placed = emb.placed_or_none if spec.get("show_prototypes", True) else None
            row.append(ScatterPanel(emb.Z, inp.labels, inp.n_cohorts, placed,
                                    f"{run['dataset']}: {run['entry']}\n"
                                    f"{format_scores(rec.to_dict(), ('s_n', 's_c', 's_s'))}"))
        n_cols = int(spec.get("n_cols") or len(row))
        rows.extend(row[i:i + n_cols] for i in range(0, len(row), n_cols))
    save_figure(scatter_grid_figure(rows, spec.get("title", spec["name"])), path)


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


def heatmap(spec: dict[str, Any], out: dict[str, str]) -> None:
    """One heat map per score over the grid parameters ``x`` and ``y``."""
    x, y = spec["x"], spec["y"]
    scores = spec.get("scores") or DEFAULT_SCORES
    table = records(spec).sort_values([y, x], kind="stable", ignore_index=True)
    write_tables(spec, table, out)
    save_figure(heatmap_figure(table, x, y, scores, spec.get("title", spec["name"])), out["png"])
