"""Grids of cohort scatter panels, one per run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from .scatter import legend_handles, panel_grid, plot_cohorts

#: Markers of the neighbour groups (an example point and its nearest neighbours), one per group in turn.
GROUP_MARKERS = ("*", "P", "X", "D", "^", "v", "p", "h")
#: A grid names its cohorts in a legend when there are at most this many (more colours cannot be told apart).
MAX_LEGEND = 20


@dataclass(frozen=True)
class ScatterPanel:
    """One panel: embedding ``Z`` coloured by ``labels`` (of ``n_cohorts``), the placed prototypes (or
    ``None``) and the panel title. ``groups``: index arrays, each an example point followed by its neighbours,
    drawn with one black-edged marker per group (the example larger, lines to its neighbours); ``boxed``: indices
    drawn inside open red squares; ``thumbnails``: (indices, images (m, h, w)) drawn at those points, scaled by
    ``thumbnail_zoom``; ``label_names``: the cohorts' names, for the legend of the grid (:func:`scatter_grid_figure`)."""

    Z: np.ndarray
    labels: np.ndarray
    n_cohorts: int
    placed: np.ndarray | None
    title: str
    groups: tuple[np.ndarray, ...] = ()
    boxed: np.ndarray | None = None
    thumbnails: tuple[np.ndarray, np.ndarray] | None = None
    thumbnail_zoom: float = 0.5
    label_names: tuple[str, ...] = ()


def spread_points(Z: np.ndarray, grid: int) -> np.ndarray:
    """Indices of points spread over the 2-D display ``Z``: for each cell of a ``grid`` × ``grid`` partition of
    its bounding box that holds points, the point nearest the cell's centre (ties to the lower index), in order
    of first appearance."""
    Z = np.asarray(Z, dtype=np.float64)[:, :2]
    lo, hi = Z.min(axis=0), Z.max(axis=0)
    width = np.where(hi > lo, (hi - lo) / grid, 1.0)
    cell = np.minimum(((Z - lo) / width).astype(np.int64), grid - 1)
    flat = cell[:, 0] * grid + cell[:, 1]
    centre = lo + (cell + 0.5) * width
    distance = np.sum((Z - centre) ** 2, axis=1)
    order = np.lexsort((np.arange(len(Z)), distance, flat))
    first = np.r_[True, flat[order][1:] != flat[order][:-1]]
    return np.sort(order[first])


def draw_panel(ax: Axes, p: ScatterPanel, point_size: float | None = 3, fontsize: float = 7) -> None:
    """One :class:`ScatterPanel` on ``ax``: the cohorts, prototypes, neighbour groups and boxes."""
    plot_cohorts(ax, p.Z, p.labels, p.n_cohorts, p.placed, point_size=point_size)
    ax.set_title(p.title, fontsize=fontsize)
    if not np.all(np.isfinite(p.Z)):
        return
    for g, idx in enumerate(p.groups):
        marker, head = GROUP_MARKERS[g % len(GROUP_MARKERS)], p.Z[idx[0]]
        for j in idx[1:]:
            ax.plot([head[0], p.Z[j, 0]], [head[1], p.Z[j, 1]], color="black", linewidth=0.5, zorder=4)
        ax.scatter(p.Z[idx[1:], 0], p.Z[idx[1:], 1], marker=marker, s=28, c="white", edgecolors="black",
                   linewidths=0.8, zorder=5)
        ax.scatter([head[0]], [head[1]], marker=marker, s=90, c="gold", edgecolors="black", linewidths=0.9,
                   zorder=6)
    if p.thumbnails is not None:
        from matplotlib.offsetbox import AnnotationBbox, OffsetImage

        for i, image in zip(*p.thumbnails):
            box = OffsetImage(image, cmap="gray", zoom=p.thumbnail_zoom, interpolation="nearest")
            ax.add_artist(AnnotationBbox(box, p.Z[i, :2], frameon=True, pad=0.05, zorder=7,
                                         bboxprops={"linewidth": 0.4, "edgecolor": "0.4"}))
    if p.boxed is not None and len(p.boxed):
        ax.scatter(p.Z[p.boxed, 0], p.Z[p.boxed, 1], marker="s", s=45, facecolors="none", edgecolors="red",
                   linewidths=0.9, zorder=4)


def scatter_grid_figure(rows: Sequence[Sequence[ScatterPanel]], title: str, width: float = 3.2,
                        height: float = 3.3, point_size: float | None = 3, dpi: float = 100,
                        panel_fontsize: float = 7, title_fontsize: float = 10) -> plt.Figure:
    """One row of cohort scatters per entry of ``rows`` (wrapped to page width: :func:`panel_grid`;
    ``point_size`` ``None``: sized by the number of points). The panels that name their cohorts (``label_names``,
    at most :data:`MAX_LEGEND` of them) get a legend of the cohorts' colours beside the last panel of each run of
    panels with the same names."""
    fig, cells = panel_grid(rows, width, height, dpi)
    for k, (ax, p) in enumerate(cells):
        draw_panel(ax, p, point_size, panel_fontsize)
        last = k + 1 == len(cells) or cells[k + 1][1].label_names != p.label_names
        if last and 0 < len(p.label_names) <= MAX_LEGEND:
            ax.legend(handles=legend_handles(p.label_names), loc="center left", bbox_to_anchor=(1.02, 0.5),
                      fontsize=panel_fontsize, frameon=False, title="cohorts", title_fontsize=panel_fontsize)
    fig.suptitle(title, fontsize=title_fontsize)
    return fig
