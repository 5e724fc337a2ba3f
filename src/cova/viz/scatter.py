"""Cohort scatter plots: samples coloured by cohort, prototypes as large outlined markers; 3-D and spherical
embeddings from two viewpoints; the row and column objects of a relation embedding in one figure."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeVar

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba

from .figures import grid_columns, save_figure, wrap_rows

T = TypeVar("T")

SCORE_LABELS = {"s_n": "S_n", "s_s": "S_s", "s_c": "S_c", "s_c_aligned": "S_c aligned", "s_c_r": "S_c^(r)", "trustworthiness": "T",
                "continuity": "C"}


def cohort_colours(n_cohorts: int) -> np.ndarray:
    """One RGBA colour per cohort: tab10 / tab20 while they suffice, then evenly spaced hues."""
    if n_cohorts <= 10:
        cmap, values = plt.get_cmap("tab10"), np.arange(n_cohorts)
    elif n_cohorts <= 20:
        cmap, values = plt.get_cmap("tab20"), np.arange(n_cohorts)
    else:
        cmap, values = plt.get_cmap("hsv"), np.linspace(0, 1, n_cohorts, endpoint=False)
    return np.array([to_rgba(cmap(v)) for v in values])


def panel_grid(rows: Sequence[Sequence[T]], width: float, height: float,
               dpi: float = 100) -> tuple[plt.Figure, list[tuple[Axes, T]]]:
    """A figure with the panels of ``rows``, each ``width`` × ``height`` inches, and the list of (axes, item) pairs,
    row by row. A row longer than a page-width row wraps (:func:`cova.viz.figures.grid_columns`,
    :func:`cova.viz.figures.wrap_rows`); the unused axes are switched off."""
    n_cols = grid_columns([len(r) for r in rows], width, height)
    rows = wrap_rows(rows, n_cols)
    fig, axes = plt.subplots(len(rows), n_cols, figsize=(width * n_cols, height * len(rows)), dpi=dpi,
                             squeeze=False)
    cells = []
    for i, row in enumerate(rows):
        for j in range(n_cols):
            if j < len(row):
                cells.append((axes[i, j], row[j]))
            else:
                axes[i, j].axis("off")
    return fig, cells


def format_scores(scores: dict[str, float], keys: Sequence[str] = ("s_n", "s_s", "s_c", "s_c_r")) -> str:
    """``S_n 81.7  S_s 97.4 ...``: scores as percentages with one decimal (the papers' convention)."""
    return "  ".join(f"{SCORE_LABELS[k]} {100 * scores[k]:.1f}" for k in keys
                     if k in scores and np.isfinite(scores[k]))


#: A point is "far" when its distance from the points' median exceeds this many times the 99th percentile of
#: those distances: one such point (a held-out sample a linear map throws out) would shrink every other to a dot.
FAR_FACTOR = 5.0


def far_points(Z: np.ndarray, factor: float = FAR_FACTOR) -> np.ndarray:
    """Boolean mask of the points of ``Z`` (n, 2) far outside the bulk (:data:`FAR_FACTOR`)."""
    r = np.linalg.norm(Z - np.median(Z, axis=0), axis=1)
    scale = np.quantile(r, 0.99)
    return r > factor * scale if scale > 0 else np.zeros(len(Z), dtype=bool)


def _view_without_far_points(ax: Axes, Z: np.ndarray, far: np.ndarray, prototypes: np.ndarray | None) -> None:
    """Limit the view to the bulk (and the prototypes), draw the far points as open triangles on its border and
    say how many there are and how far out they lie."""
    kept = Z[~far] if prototypes is None or not len(prototypes) else np.vstack([Z[~far], prototypes[:, :2]])
    low, high = kept.min(axis=0), kept.max(axis=0)
    pad = 0.05 * np.maximum(high - low, 1e-12)
    low, high = low - pad, high + pad
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    ax.scatter(*np.clip(Z[far], low, high).T, s=30, marker="^", facecolors="none", edgecolors="black",
               linewidths=0.8, zorder=4, clip_on=False)
    reach = float(np.max(np.abs(Z[far] - 0.5 * (low + high)) / (0.5 * (high - low))))
    ax.text(0.01, 0.01, f"{int(far.sum())} point{'s' if far.sum() > 1 else ''} outside (up to {reach:.0f}× the "
            "half-width): △ on the border", transform=ax.transAxes, fontsize=6, va="bottom", ha="left")


def plot_cohorts(ax: Axes, Z: np.ndarray, labels: np.ndarray, n_cohorts: int,
                 prototypes: np.ndarray | None = None, point_size: float | None = None) -> None:
    """Draw the samples of ``Z`` coloured by cohort and, if given, the prototypes in the same colours. A few points
    far outside the rest (:func:`far_points`) are drawn on the view's border rather than setting its scale."""
    if not np.all(np.isfinite(Z)):
        draw_no_embedding(ax)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    colours = cohort_colours(n_cohorts)
    s = point_size if point_size is not None else _auto_point_size(len(Z))
    far = far_points(Z[:, :2]) if len(Z) >= 20 else np.zeros(len(Z), dtype=bool)
    ax.scatter(Z[~far, 0], Z[~far, 1], c=colours[labels[~far]], s=s, linewidths=0, rasterized=len(Z) > 5000)
    if prototypes is not None and len(prototypes):
        ax.scatter(prototypes[:, 0], prototypes[:, 1], c=colours[: len(prototypes)], s=140, marker="o",
                   edgecolors="black", linewidths=1.5, zorder=3)
    ax.set_xticks([])
    ax.set_yticks([])
    if far.any():
        _view_without_far_points(ax, Z[:, :2], far, prototypes)
    ax.set_aspect("equal", adjustable="datalim")


#: The two viewpoints (elevation, azimuth in degrees) of a 3-D embedding, facing opposite sides.
VIEWS_3D = ((20.0, -60.0), (20.0, 120.0))


def legend_handles(label_names: Sequence[str], marker: str = "o") -> list:
    colours = cohort_colours(len(label_names))
    return [plt.Line2D([], [], marker=marker, ls="", color=colours[j], label=n) for j, n in enumerate(label_names)]


def point_colours(labels: np.ndarray | None, n_points: int, n_cohorts: int, single: str) -> np.ndarray:
    """RGBA per point: by cohort when there are labels, else one colour."""
    if labels is None:
        return np.tile(to_rgba(single), (n_points, 1))
    return cohort_colours(n_cohorts)[labels]


def point_size(n: int) -> float:
    """Marker area for n points: large for a few dozen points, small for thousands."""
    return max(2.0, min(12.0, 6000.0 / max(n, 1)))


_auto_point_size = point_size  # for plot_cohorts, whose argument of that name shadows it


def draw_no_embedding(ax: Axes) -> None:
    """The note a degenerate run's panel shows instead of points (2-D or 3-D axes)."""
    write = ax.text2D if hasattr(ax, "text2D") else ax.text
    write(0.5, 0.5, "no embedding\n(degenerate: see the run's log)", ha="center", va="center", transform=ax.transAxes)


def draw_sphere(ax: Axes, radius: float, centre: np.ndarray | None = None) -> None:
    """A faint wireframe sphere (the surface a spherical embedding lies on) on a 3-D axes."""
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 25), np.linspace(0, np.pi, 13))
    c = np.zeros(3) if centre is None else centre
    ax.plot_wireframe(c[0] + radius * np.cos(u) * np.sin(v), c[1] + radius * np.sin(u) * np.sin(v),
                      c[2] + radius * np.cos(v), color="0.6", linewidth=0.3, alpha=0.35)


def plot_layers_3d(ax: Axes, layers: Sequence[tuple[np.ndarray, np.ndarray, str, float]], view: tuple[float, float],
                   sphere: bool = False) -> None:
    """Draw point layers ``(points (n, 3), colours (n, 4), marker, size)`` on a 3-D axes from ``view``; with
    ``sphere`` a faint sphere of the points' mean radius around the origin."""
    if sphere:
        radius = float(np.mean([np.linalg.norm(P, axis=1).mean() for P, *_ in layers]))
        draw_sphere(ax, radius)
    for P, colours, marker, size in layers:
        ax.scatter(P[:, 0], P[:, 1], P[:, 2], c=colours, s=size, marker=marker, linewidths=0, depthshade=True)
    ax.view_init(elev=view[0], azim=view[1])
    ax.set_box_aspect((1, 1, 1))
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_zticks([])
    ax.set_title(f"view: elevation {view[0]:g}°, azimuth {view[1]:g}°", fontsize=8)


def robust_view(ax: Axes, points: np.ndarray, quantile: float = 0.5, margin: float = 0.1) -> None:
    """Limit a 2-D view to the central part of ``points`` (the ``quantile``-th to the (100 − ``quantile``)-th
    percentile of each axis, widened by ``margin``) when a few far points would otherwise squeeze the rest into a
    corner (correspondence-analysis maps have such tails), and say how many points lie outside."""
    lo, hi = np.percentile(points, [quantile, 100.0 - quantile], axis=0)
    span = np.maximum(hi - lo, 1e-12)
    lo, hi = lo - margin * span, hi + margin * span
    outside = int(np.sum(np.any((points < lo) | (points > hi), axis=1)))
    full = np.ptp(points, axis=0)
    if outside == 0 or np.all(full <= 2.0 * (hi - lo)):
        return
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.text(0.99, 0.01, f"{outside} of {len(points)} points outside this view", transform=ax.transAxes,
            ha="right", va="bottom", fontsize=7, color="0.3")


def save_scatter_figure(path: str | os.PathLike, Z: np.ndarray, labels: np.ndarray | None,
                        label_names: Sequence[str], prototypes: np.ndarray | None = None,
                        scores: dict[str, float] | None = None, title: str = "", *, geometry: str = "plane",
                        columns: np.ndarray | None = None, kinds: tuple[str, str] = ("rows", "columns")) -> None:
    """One embedding as a PNG, with a legend when there are at most 20 cohorts and the scores in the title.

    Two-dimensional embeddings are one panel. Three-dimensional ones (and ``geometry="sphere"``, drawn with a
    faint sphere) are drawn from the two opposite viewpoints :data:`VIEWS_3D` side by side. ``columns`` are the
    column objects of a relation embedding (``Z`` then holds the row objects): both sets share the figure, rows
    as dots coloured by cohort, columns as grey triangles, and the legend says which ``kinds`` are which.
    Without ``labels`` every row point has one colour."""
    if Z.shape[1] == 2 and columns is None and labels is not None and geometry == "plane":
        _save_plane(path, Z, labels, label_names, prototypes, scores, title)
        return
    names = list(label_names) if labels is not None else []
    finite = bool(np.all(np.isfinite(Z))) and (columns is None or bool(np.all(np.isfinite(columns))))
    layers = [(Z, point_colours(labels, len(Z), len(names), "tab:blue"), "o", point_size(len(Z)))]
    handles = legend_handles(names) if 0 < len(names) <= 20 else []
    if columns is not None:
        layers.insert(0, (columns, np.tile(to_rgba("0.25", 0.6), (len(columns), 1)), "^",
                          max(10.0, 2.0 * point_size(len(columns)))))  # under the row objects
        handles = handles + [plt.Line2D([], [], marker="o", ls="", color="0.2", label=f"{kinds[0]} (dots)"),
                             plt.Line2D([], [], marker="^", ls="", color="0.35", label=f"{kinds[1]} (triangles)")]
    if prototypes is not None and len(prototypes):
        layers.append((prototypes, cohort_colours(len(names))[: len(prototypes)] if names else
                       np.tile(to_rgba("black"), (len(prototypes), 1)), "s", 90.0))
    three_d = Z.shape[1] == 3
    if three_d:
        fig = plt.figure(figsize=(11.0, 5.5), dpi=110)
        axes = [fig.add_subplot(1, 2, i + 1, projection="3d") for i in range(2)]
        for ax, view in zip(axes, VIEWS_3D):
            if finite:
                plot_layers_3d(ax, layers, view, sphere=geometry == "sphere")
            else:
                draw_no_embedding(ax)
        legend_ax = axes[-1]
    else:
        fig, legend_ax = plt.subplots(figsize=(7.4 if handles else 6.0, 5.5), dpi=110)
        if finite:
            for P, colours, marker, size in layers:
                legend_ax.scatter(P[:, 0], P[:, 1], c=colours, s=size, marker=marker, linewidths=0,
                                  rasterized=len(P) > 5000)
            legend_ax.set_aspect("equal", adjustable="datalim")
            robust_view(legend_ax, np.vstack([P for P, *_ in layers]))
        else:
            draw_no_embedding(legend_ax)
        legend_ax.set_xticks([])
        legend_ax.set_yticks([])
    if handles:
        legend_ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8, frameon=False)
    text = title + ("\n" + format_scores(scores) if scores else "")
    if three_d:
        fig.suptitle(text, fontsize=9)
    else:
        legend_ax.set_title(text, fontsize=9)
    save_figure(fig, path)


def _save_plane(path: str | os.PathLike, Z: np.ndarray, labels: np.ndarray, label_names: Sequence[str],
                prototypes: np.ndarray | None, scores: dict[str, float] | None, title: str) -> None:
    """The 2-D cohort scatter: one panel, samples coloured by cohort, prototypes outlined."""
    fig, ax = plt.subplots(figsize=(6.5, 5.5), dpi=110)
    plot_cohorts(ax, Z, labels, len(label_names), prototypes)
    if len(label_names) <= 20:
        ax.legend(handles=legend_handles(label_names), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
                  frameon=False)
    text = title + ("\n" + format_scores(scores) if scores else "")
    ax.set_title(text, fontsize=9)
    save_figure(fig, path)
