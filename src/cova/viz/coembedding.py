"""Co-embedding maps (co-embedding paper Figs. 2-5, 7, 9-10): the row objects and the column objects of a relation
in one panel, each axis min-max scaled to [0, 1] as the paper draws them; and curves of a measure against a swept
parameter with the spread over repeated runs (Figs. 5f, 6, 8, 11).

Row objects are drawn as open circles and column objects as plus signs (the paper's "o" and "+"), both coloured
by their class; a side without labels is drawn in grey. The scaling is one affine map per axis applied to both
sets together (what the paper does): the absolute scale of a co-embedding is arbitrary (the reduced model's
coordinates change by a global factor with the scale of R).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from .figures import grid_columns, wrap_rows
from .names import grid_symbol
from .scatter import cohort_colours, draw_no_embedding, panel_grid, robust_view

__all__ = ["CoembeddingPanel", "minmax_scale_pair", "draw_coembedding", "coembedding_grid_figure",
           "measure_curves_figure"]


@dataclass(frozen=True)
class CoembeddingPanel:
    """One panel: row objects ``rows`` (m, 2) and column objects ``columns`` (n, 2), their class indices (or
    ``None``) into ``n_classes`` colours, and the panel title."""

    rows: np.ndarray
    columns: np.ndarray
    row_labels: np.ndarray | None
    column_labels: np.ndarray | None
    n_classes: int
    title: str


def minmax_scale_pair(rows: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both point sets mapped by one affine map per axis so that their union spans [0, 1] on every axis (an axis
    of zero extent maps to 0.5)."""
    both = np.vstack([rows, columns])
    lo, span = both.min(axis=0), np.ptp(both, axis=0)
    safe = np.where(span > 0, span, 1.0)
    scale = lambda P: np.where(span > 0, (P - lo) / safe, 0.5)  # noqa: E731
    return scale(rows), scale(columns)


def _colours(labels: np.ndarray | None, n: int, n_classes: int) -> np.ndarray:
    if labels is None:
        return np.tile(np.array([0.35, 0.35, 0.35, 0.8]), (n, 1))
    return cohort_colours(max(n_classes, 1))[labels]


def draw_coembedding(ax: Axes, panel: CoembeddingPanel, point_size: float | None = None) -> None:
    """Draw one co-embedding panel (2-D; the first two coordinates of a higher-dimensional one)."""
    Zx, Zy = panel.rows[:, :2], panel.columns[:, :2]
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(panel.title, fontsize=7)
    if not (np.all(np.isfinite(Zx)) and np.all(np.isfinite(Zy))):
        draw_no_embedding(ax)
        return
    Zx, Zy = minmax_scale_pair(Zx, Zy)
    m, n = len(Zx), len(Zy)
    s = point_size if point_size is not None else max(3.0, min(18.0, 4000.0 / max(m + n, 1)))
    ax.scatter(Zy[:, 0], Zy[:, 1], c=_colours(panel.column_labels, n, panel.n_classes), s=1.6 * s, marker="+",
               linewidths=0.6, rasterized=n > 5000)
    ax.scatter(Zx[:, 0], Zx[:, 1], facecolors="none", edgecolors=_colours(panel.row_labels, m, panel.n_classes),
               s=s, marker="o", linewidths=0.5, rasterized=m > 5000)
    ax.set_xlim(-0.04, 1.04)
    ax.set_ylim(-0.04, 1.04)
    ax.set_aspect("equal", adjustable="box")
    robust_view(ax, np.vstack([Zx, Zy]))  # a few far objects (rare words) would squeeze the rest into a corner


def coembedding_grid_figure(rows: Sequence[Sequence[CoembeddingPanel | None]], title: str, width: float = 3.0,
                            height: float = 3.2, kinds: tuple[str, str] = ("rows", "columns")) -> plt.Figure:
    """A grid of co-embedding panels (``None`` leaves a cell empty), with a legend of the two kinds of object."""
    fig, cells = panel_grid(rows, width, height)
    for ax, panel in cells:
        if panel is None:
            ax.axis("off")
        else:
            draw_coembedding(ax, panel)
    width_chars = max(40, int(16 * width * max(len(r) for r in rows)))
    fig.suptitle(textwrap.fill(f"{title} ({kinds[0]}: o, {kinds[1]}: +)", width_chars), fontsize=10)
    return fig


#: The size (inches) of one panel of curves in :func:`measure_curves_figure`.
CURVE_PANEL = (4.6, 3.6)


def _curve_rows(table: pd.DataFrame, measures: Sequence[str], panel: str) -> list[list[tuple[Any, str]]]:
    """The (panel value, measure) pairs of :func:`measure_curves_figure`, one row per panel value, wrapped to page
    width."""
    rows = [[(p, m) for m in measures] for p in dict.fromkeys(table[panel])]
    return wrap_rows(rows, grid_columns([len(r) for r in rows], *CURVE_PANEL))


def _draw_curves(fig: Any, table: pd.DataFrame, x: str, measures: Sequence[str], labels: dict[str, str],
                 line: str, panel: str, names: Mapping[Any, str]) -> None:
    rows = _curve_rows(table, measures, panel)
    n_cols = max(len(r) for r in rows)
    axes = fig.subplots(len(rows), n_cols, squeeze=False)
    for r, row in enumerate(rows):
        for ax in axes[r, len(row):]:
            ax.axis("off")
        for c, (p, measure) in enumerate(row):
            sub = table[table[panel] == p]
            ax = axes[r, c]
            for i, (name, g) in enumerate(sub.groupby(line, sort=False)):
                stats = g.groupby(x)[measure].agg(["mean", "std", "count"]).sort_index()
                ax.plot(stats.index, stats["mean"], marker="o", ms=3, color=f"C{i % 10}",
                        label=names.get(name, str(name)))
                if (stats["count"] > 1).any():
                    sd = stats["std"].fillna(0.0)
                    ax.fill_between(stats.index, stats["mean"] - sd, stats["mean"] + sd, color=f"C{i % 10}",
                                    alpha=0.15, linewidth=0)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel(grid_symbol(x))
            ax.set_ylabel(labels.get(measure, measure))
            ax.set_title(f"{p}: {labels.get(measure, measure)}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)


def measure_curves_figure(table: pd.DataFrame, x: str, measures: Sequence[str], title: str,
                          labels: dict[str, str] | None = None, line: str = "method_entry",
                          panel: str = "dataset", maps: Sequence[CoembeddingPanel] = (),
                          names: Mapping[Any, str] | None = None) -> plt.Figure:
    """One panel per (``panel`` value, measure): the mean of the measure over repeated rows (e.g. seeded splits)
    against ``x``, one line per ``line`` value, with a band of ± one standard deviation where there are
    repeats. ``maps``, if given, are drawn as a row of co-embedding panels above the curves (the figure is then
    laid out by matplotlib's constrained layout: save it without ``tight``). ``names``: ``line`` value -> legend
    name (the value when absent). The panels wrap to page width, as do the maps (:func:`panel_grid`'s columns)."""
    labels = labels or {}
    rows = _curve_rows(table, measures, panel)
    curves_h = CURVE_PANEL[1] * len(rows)
    map_cols = grid_columns([len(maps)], 3.0, 3.2) if maps else 1
    map_rows = wrap_rows([list(maps)], map_cols) if maps else []
    maps_h = 3.2 * len(map_rows)
    width = max(CURVE_PANEL[0] * max(len(r) for r in rows), 3.0 * map_cols)
    fig = plt.figure(figsize=(width, curves_h + maps_h), dpi=100, layout="constrained" if maps else None)
    if maps:
        top, bottom = fig.subfigures(2, 1, height_ratios=[maps_h, curves_h])
        map_axes = top.subplots(len(map_rows), map_cols, squeeze=False)
        for r, row in enumerate(map_rows):
            for ax in map_axes[r, len(row):]:
                ax.axis("off")
            for ax, p in zip(map_axes[r], row):
                draw_coembedding(ax, p)
    else:
        bottom = fig
    _draw_curves(bottom, table, x, measures, labels, line, panel, names or {})
    fig.suptitle(textwrap.fill(title, max(40, int(16 * width))), fontsize=10)
    return fig
