"""Generic renderers of paper figures and tables from scored runs.

Each renderer receives an experiment spec (built by ``cova.config.Plan.experiment_spec``): the runs it shows,
each with its dataset, inputs, embedding and scores files, and writes three outputs: a PNG figure, a CSV of
the scores (fractions; the paper's printed numbers, in percent, in ``paper_*`` columns where a reference is
given) and an HTML table (percentages).

- ``score_table``: scores of every run beside the paper's numbers (e.g. COVA Table H.2) and a scatter grid.
- ``scatter_grid``: one cohort scatter per run, datasets as rows (e.g. COVA Fig. 2 / H.4).
- ``sweep``: scores against one swept parameter (e.g. COVA Fig. H.3, the α sweep).
- ``heatmap``: one heat map per score over two swept parameters (e.g. COVA Fig. H.2, eigen-COVA α × η).

Paper-specific renderers live in their own modules and are registered in :data:`RENDERERS`: ``retrieval`` (here)
and ``nerv_panels`` (NeRV), ``highlight_grid`` / ``link_graphs`` (:mod:`.links`, COVA Tables 1-2),
``link_panels`` / ``reference_sweep`` (:mod:`.cora`), ``img_links`` / ``img_sweep`` (:mod:`.images`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..inputs import Inputs
from ..io import atomic_path
from ..viz.scatter import SCORE_LABELS, format_scores, panel_grid, plot_cohorts
from ..viz.tables import write_csv_atomic, write_html_atomic
from . import cora, images
from .links import highlight_grid, link_graphs
from .nerv_panels import nerv_panels
from .reference import REFERENCE

DEFAULT_SCORES = ["s_n", "s_c", "s_s", "s_c_r"]


def _records(spec: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for run in spec["runs"]:
        scores = json.loads(Path(run["scores"]).read_text())
        rows.append({"dataset": run["dataset"], "inputs": run["inputs"], "method_entry": run["entry"],
                     "method": run["method"], **run.get("grid", {}), "status": scores.get("status", "ok"),
                     **{k: scores[k] for k in ("s_n", "s_s", "s_c", "s_c_aligned", "s_c_r", "trustworthiness",
                                               "continuity")}})
    return pd.DataFrame(rows)


DEVIATION_POINTS = 10.0


def _with_reference(table: pd.DataFrame, key: str | None, scores: list[str]) -> pd.DataFrame:
    """Add the paper's printed numbers (``paper_*``, percent) and a column naming every score that is more than
    10 percentage points away from the paper's."""
    if not key:
        return table
    rows = REFERENCE[key]["rows"]
    lam = table["lam"] if "lam" in table else pd.Series([None] * len(table))
    for s in scores:
        table[f"paper_{s}"] = [rows.get((d, m, lv), rows.get((d, m), {})).get(s, np.nan)
                               for d, m, lv in zip(table.dataset, table.method, lam)]
    far = [[f"{s} {100 * r[s]:.1f} vs {r[f'paper_{s}']:.1f}" for s in scores
            if abs(100 * r[s] - r[f"paper_{s}"]) > DEVIATION_POINTS] for _, r in table.iterrows()]
    table[f"off_by_more_than_{DEVIATION_POINTS:g}_points"] = ["; ".join(f) for f in far]
    return table


def _save(fig: plt.Figure, path: str) -> None:
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def _scatter_grid(spec: dict[str, Any], table: pd.DataFrame, path: str) -> None:
    datasets = list(dict.fromkeys(r["dataset"] for r in spec["runs"]))
    fig, cells = panel_grid([[r for r in spec["runs"] if r["dataset"] == d] for d in datasets], 3.2, 3.3)
    cache: dict[tuple[str, str], Inputs] = {}
    for ax, run in cells:
        key = (run["data"], run["inputs_file"])
        if key not in cache:
            cache[key] = Inputs.load(*key)
        inp = cache[key]
        with np.load(run["embedding"], allow_pickle=False) as f:
            Z, placed = f["Z"], f["placed_prototypes"]
        plot_cohorts(ax, Z, inp.labels, inp.n_cohorts, placed if placed.size else None, point_size=3)
        row = table[(table.dataset == run["dataset"]) & (table.method_entry == run["entry"])].iloc[0]
        ax.set_title(f"{run['dataset']}: {run['entry']}\n{format_scores(row.to_dict(), ('s_n', 's_c', 's_s'))}",
                     fontsize=7)
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    _save(fig, path)


def score_table(spec: dict[str, Any], out: dict[str, str]) -> None:
    scores = spec.get("scores") or DEFAULT_SCORES
    table = _with_reference(_records(spec), spec.get("reference"), scores)
    _write_tables(spec, table, out)
    _scatter_grid(spec, table, out["png"])


def scatter_grid(spec: dict[str, Any], out: dict[str, str]) -> None:
    table = _records(spec)
    _write_tables(spec, table, out)
    _scatter_grid(spec, table, out["png"])


def sweep(spec: dict[str, Any], out: dict[str, str]) -> None:
    x = spec["x"]
    scores = spec.get("scores") or DEFAULT_SCORES
    table = _records(spec).sort_values([c for c in ("dataset", "method", x)], kind="stable", ignore_index=True)
    _write_tables(spec, table, out)
    sweep_figure(spec, table, x, scores, out["png"])


def sweep_figure(spec: dict[str, Any], table: pd.DataFrame, x: str, scores: list[str], path: str) -> None:
    """One panel per (dataset, method): each score against ``x``; where ``paper_{score}`` columns exist, the
    paper's printed values as open squares on dashed lines in the same colour."""
    groups = list(table.groupby(["dataset", "method"], sort=False))
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 4.2), dpi=100, squeeze=False)
    for ax, ((dataset, method), g) in zip(axes[0], groups):
        for n, s in enumerate(scores):
            colour = f"C{n}"
            ax.plot(g[x], 100 * g[s], marker="o", color=colour, label=f"{SCORE_LABELS.get(s, s)} (ours)")
            paper = g[f"paper_{s}"] if f"paper_{s}" in g else pd.Series(dtype=float)
            if paper.notna().any():
                ax.plot(g[x][paper.notna()], paper[paper.notna()], marker="s", markerfacecolor="none",
                        linestyle="--", color=colour, label=f"{SCORE_LABELS.get(s, s)} (paper)")
        ax.set_xlabel(x)
        ax.set_ylabel("score (%)")
        ax.set_title(f"{dataset}: {method}", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    _save(fig, path)


def heatmap(spec: dict[str, Any], out: dict[str, str]) -> None:
    x, y = spec["x"], spec["y"]
    scores = spec.get("scores") or DEFAULT_SCORES
    table = _records(spec).sort_values([y, x], kind="stable", ignore_index=True)
    _write_tables(spec, table, out)
    fig, axes = plt.subplots(1, len(scores), figsize=(4.2 * len(scores), 3.8), dpi=100, squeeze=False)
    for ax, s in zip(axes[0], scores):
        grid = table.pivot_table(index=y, columns=x, values=s, aggfunc="first")
        values = 100 * grid.to_numpy()
        im = ax.imshow(values, origin="lower", cmap="viridis", aspect="auto")
        for (r, c), v in np.ndenumerate(values):
            ax.text(c, r, f"{v:.0f}", ha="center", va="center", fontsize=6, color="white")
        ax.set_xticks(range(grid.shape[1]), [f"{v:g}" for v in grid.columns], fontsize=7)
        ax.set_yticks(range(grid.shape[0]), [f"{v:g}" for v in grid.index], fontsize=7)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(SCORE_LABELS.get(s, s) + " (%)", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    _save(fig, out["png"])


def _write_tables(spec: dict[str, Any], table: pd.DataFrame, out: dict[str, str]) -> None:
    write_csv_atomic(table, out["csv"])
    note = spec.get("caption", "")
    if spec.get("reference"):
        note += f" Columns paper_* are the numbers printed in {REFERENCE[spec['reference']]['source']}."
    if spec.get("notes"):
        note += f" Deviations: {spec['notes']}"
    write_html_atomic(table, out["html"], title=spec.get("title", spec["name"]), note=note)


def retrieval(spec: dict[str, Any], out: dict[str, str]) -> None:
    """The NeRV paper's quality measures of every run (Venna et al. 2010, Sec. 5 and Figs. 2-7, Table 2):
    mean smoothed precision and recall (lower is better: KL-based errors), their rank-based versions,
    trustworthiness and continuity curves over k, mean precision/recall at 20 neighbours, and the 5-NN error."""
    from ..metrics import retrieval as ir

    k_max = int(spec.get("k_max", 50))
    rows, curves = [], []
    for run in spec["runs"]:
        inp = Inputs.load(run["data"], run["inputs_file"])
        with np.load(run["embedding"], allow_pickle=False) as f:
            Z = f["Z"]
        row = {"dataset": run["dataset"], "method_entry": run["entry"], "method": run["method"],
               **run.get("grid", {})}
        if np.all(np.isfinite(Z)):
            sp = ir.smoothed_precision_recall(inp.X, Z)
            rp = ir.rank_smoothed_precision_recall(inp.X, Z)
            precision_20, recall_20 = ir.mean_precision_recall(inp.X, Z)
            k = min(k_max, (inp.X.shape[0] - 1) // 2)
            t, c = ir.trustworthiness_curve(inp.X, Z, k), ir.continuity_curve(inp.X, Z, k)
            row.update(smoothed_precision_error=sp.precision, smoothed_recall_error=sp.recall,
                       rank_precision_error=rp.precision, rank_recall_error=rp.recall,
                       precision_20=precision_20, recall_20=recall_20,
                       knn5_error=ir.knn_error(Z, inp.labels, 5), trustworthiness_10=t[min(10, k) - 1],
                       continuity_10=c[min(10, k) - 1])
            curves.append((run, t, c))
        rows.append(row)
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out["csv"])
    write_html_atomic(table, out["html"], title=spec.get("title", spec["name"]),
                      note=spec.get("caption", "") + " Smoothed and rank-based measures are errors (lower is "
                      "better); precision/recall at 20 neighbours, T/C at k = 10 and the 5-NN error as defined by "
                      "Venna et al. (2010).")
    datasets = list(dict.fromkeys(r["dataset"] for r in spec["runs"]))
    fig, axes = plt.subplots(len(datasets), 3, figsize=(15, 4.2 * len(datasets)), dpi=100, squeeze=False)
    for i, d in enumerate(datasets):
        sub = table[table.dataset == d]
        ax = axes[i, 0]
        ax.scatter(sub.smoothed_recall_error, sub.smoothed_precision_error)
        for _, r in sub.iterrows():
            ax.annotate(r.method_entry, (r.smoothed_recall_error, r.smoothed_precision_error), fontsize=6)
        ax.set_xlabel("mean smoothed recall error")
        ax.set_ylabel("mean smoothed precision error")
        ax.set_title(f"{d}: smoothed precision-recall", fontsize=9)
        for j, name in enumerate(("trustworthiness", "continuity")):
            ax = axes[i, 1 + j]
            for run, t, c in curves:
                if run["dataset"] == d:
                    values = (t, c)[j]
                    ax.plot(np.arange(1, len(values) + 1), values, label=run["entry"])
            ax.set_xlabel("k")
            ax.set_title(f"{d}: {name}", fontsize=9)
            ax.legend(fontsize=6)
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    _save(fig, out["png"])


RENDERERS = {
    "score_table": score_table, "scatter_grid": scatter_grid, "sweep": sweep, "heatmap": heatmap,
    "retrieval": retrieval, "nerv_panels": nerv_panels,                         # NeRV paper (#7)
    "highlight_grid": highlight_grid, "link_graphs": link_graphs,               # COVA Tables 1-2 (#5)
    "link_panels": cora.link_panels, "reference_sweep": cora.reference_sweep,   # Cora figures (#6)
    "img_links": images.img_links, "img_sweep": images.img_sweep,               # image cohorts (#6)
}


def render(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Render experiment ``spec`` into ``out`` (keys png, csv, html)."""
    RENDERERS[spec["renderer"]](spec, out)
