"""Scores against swept parameters: curves over one parameter, heat maps over two."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .names import grid_symbol, method_name
from .panels import ScatterPanel, draw_panel
from .scatter import SCORE_LABELS, panel_grid

#: Axis and legend names of every score key a sweep may show, including the held-out rows' (``*_test``) and the
#: comparisons with the original cohort graph and the gold standard (COVA Sec. 4.2, Fig. 5).
SWEEP_LABELS = {**SCORE_LABELS, "s_c_r_gold": "S_c^(r) vs gold", "s_s_gold": "S_s (true labels)",
                "s_c_r_orig": "S_c^(r) vs original", "s_c_r_orig_test": "S_c^(r) vs original (test)",
                **{f"{k}_test": f"{v} (test)" for k, v in SCORE_LABELS.items()}}


def sweep_figure(table: pd.DataFrame, x: str, scores: list[str], title: str) -> plt.Figure:
    """One panel per (dataset, method) of ``table``: each score (percent) against column ``x``; where
    ``paper_{score}`` columns exist, the paper's printed values as open squares on dashed lines in the same
    colour."""
    groups = list(table.groupby(["dataset", "method"], sort=False))
    fig, cells = panel_grid([groups], 5.5, 4.2)
    for ax, ((dataset, method), g) in cells:
        for n, s in enumerate(scores):
            colour = f"C{n}"
            ax.plot(g[x], 100 * g[s], marker="o", color=colour, label=f"{SCORE_LABELS.get(s, s)} (ours)")
            paper = g[f"paper_{s}"] if f"paper_{s}" in g else pd.Series(dtype=float)
            if paper.notna().any():
                ax.plot(g[x][paper.notna()], paper[paper.notna()], marker="s", markerfacecolor="none",
                        linestyle="--", color=colour, label=f"{SCORE_LABELS.get(s, s)} (paper)")
        ax.set_xlabel(grid_symbol(x))
        ax.set_ylabel("score (%)")
        ax.set_title(f"{dataset}: {method_name(method)}", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    return fig


def heatmap_figure(table: pd.DataFrame, x: str, y: str, scores: list[str], title: str,
                   examples: Sequence[ScatterPanel] = (), examples_per_row: int = 5) -> plt.Figure:
    """One heat map per score (percent, the value printed in each cell) over columns ``x`` and ``y``; below them,
    rows of ``examples_per_row`` example outputs (e.g. COVA Fig. H.2's runs at α = 0.9) when ``examples`` are
    given."""
    n_ex_rows = -(-len(examples) // examples_per_row) if examples else 0
    width = max(4.2 * len(scores), 3.0 * examples_per_row if examples else 0)
    fig = plt.figure(figsize=(width, 4.2 + 3.2 * n_ex_rows), dpi=100)
    top, bottom = fig.subfigures(2, 1, height_ratios=[4.2, 3.2 * n_ex_rows]) if examples else (fig, None)
    axes = top.subplots(1, len(scores), squeeze=False)
    top.subplots_adjust(top=0.84, bottom=0.14, wspace=0.45)
    for ax, s in zip(axes[0], scores):
        grid = table.pivot_table(index=y, columns=x, values=s, aggfunc="first")
        values = 100 * grid.to_numpy()
        im = ax.imshow(values, origin="lower", cmap="viridis", aspect="auto")
        for (r, c), v in np.ndenumerate(values):
            ax.text(c, r, f"{v:.0f}", ha="center", va="center", fontsize=6, color="white")
        ax.set_xticks(range(grid.shape[1]), [f"{v:g}" for v in grid.columns], fontsize=7)
        ax.set_yticks(range(grid.shape[0]), [f"{v:g}" for v in grid.index], fontsize=7)
        ax.set_xlabel(grid_symbol(x))
        ax.set_ylabel(grid_symbol(y))
        ax.set_title(SCORE_LABELS.get(s, s) + " (%)", fontsize=9)
        top.colorbar(im, ax=ax, fraction=0.046)
    if bottom is not None:
        cells = bottom.subplots(n_ex_rows, examples_per_row, squeeze=False).ravel()
        bottom.subplots_adjust(top=0.86, bottom=0.04, hspace=0.35)
        for ax in cells[len(examples):]:
            ax.axis("off")
        for ax, panel in zip(cells, examples):
            draw_panel(ax, panel)
    fig.suptitle(title, fontsize=10)
    return fig


def score_lines_figure(table: pd.DataFrame, baselines: pd.DataFrame, x: str, scores: list[str], by_method: bool,
                       title: str, xscale: str = "linear", names: Mapping[str, str] | None = None) -> plt.Figure:
    """Scores (percent) against column ``x`` of ``table`` (columns ``dataset``, ``method``, ``run``, the scores).

    ``by_method``: one panel per (dataset, method), the scores as lines; otherwise one panel per (dataset, score),
    the methods as lines. Rows of ``baselines`` (runs without an x value) are drawn as horizontal dotted lines in
    every panel of their dataset. Methods are named as the papers do (:func:`cova.viz.names.method_name`), the
    baselines by ``names`` (``run`` -> name; the run's id when absent)."""
    names = names or {}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if by_method:
        keys = list(dict.fromkeys(zip(table.dataset, table.method)))
    else:
        keys = [(d, s) for d in dict.fromkeys(table.dataset) for s in scores]
    fig, cells = panel_grid([keys], 4.3, 3.4)
    for ax, (d, k) in cells:
        b = baselines[baselines.dataset == d]
        if by_method:
            g = table[(table.dataset == d) & (table.method == k)]
            for n, s in enumerate(scores):
                colour = colours[n % len(colours)]
                ax.plot(g[x], 100 * g[s].astype(float), marker="o", color=colour, label=SWEEP_LABELS.get(s, s))
                for _, r in b.iterrows():
                    ax.axhline(100 * float(r[s]), color=colour, linestyle=":", linewidth=1,
                               label=f"{names.get(r['run'], r['run'])} {SWEEP_LABELS.get(s, s)}")
            ax.set_title(f"{d}: {method_name(k)}", fontsize=8)
        else:
            sub = table[table.dataset == d]
            for m, g in sub.groupby("method", sort=False):
                ax.plot(g[x], 100 * g[k].astype(float), marker="o", label=method_name(m))
            for _, r in b.iterrows():
                ax.axhline(100 * float(r[k]), color="grey", linestyle=":", linewidth=1, label=names.get(r["run"], r["run"]))
            ax.set_title(f"{d}: {SWEEP_LABELS.get(k, k)}", fontsize=8)
        ax.set_xscale(xscale)
        ax.set_xlabel(grid_symbol(x.split(".")[-1]))
        ax.set_ylabel("score (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=8)
    return fig
