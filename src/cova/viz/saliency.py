"""featMAP's interpretation drawings: per-point feature-importance (saliency) maps beside the images (featMAP Figs.
1, 4-6, Supp. Fig. 8), the local frame with the features' loading arrows (Fig. 1, top right) and the local-radius
scatter with its regression line (Fig. 7, Supp. Fig. 9); and the whole figures built from them: the frame of one
point (:func:`frame_figure`, Fig. 1), the adversarial examples (:func:`adversarial_figure`, Fig. 6, Supp. Fig. 8)
and the density study (:func:`density_figure`, Fig. 7, Supp. Figs. 9-10).

"Darker red = larger feature importance" (the paper's captions): maps are drawn with the ``Reds`` colour map, each
scaled to its own maximum, the images in grey.

Features that are not pixels (a table's named columns, :func:`feature_layout` says which) are drawn by name
instead: per cohort its top features by mean importance as bars, and the loading arrows of the top features at a
sample of points on the embedding (:func:`named_features_figure`); the frame of one point keeps its arrows and
shows its importance as bars (:func:`frame_figure` without an image shape).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ..errors import UserError
from .figures import grid_columns, wrap_rows
from .scatter import cohort_colours, plot_cohorts

__all__ = ["image_shape", "feature_layout", "draw_image", "draw_saliency", "image_pairs_figure",
           "draw_loading_arrows", "draw_radius_scatter", "top_features", "frame_figure", "adversarial_figure",
           "density_figure", "draw_importance_bars", "draw_arrows_on_embedding", "NamedFeatureMap",
           "named_features_figure"]

#: Features drawn per bar chart and per point (:func:`named_features_figure`, :func:`frame_figure`).
N_TOP = 10
#: Arrows per sampled point on the embedding (:func:`draw_arrows_on_embedding`).
N_ARROWS = 3


def image_shape(n_features: int, meta: dict[str, Any] | None = None) -> tuple[int, int]:
    """The (height, width) of one image: ``meta["image_shape"]`` or ``meta["size"]`` (COIL-20) when the loader
    recorded it, else the square side of ``n_features``; ``ValueError`` when neither fits."""
    meta = meta or {}
    if "image_shape" in meta:
        shape = tuple(int(v) for v in meta["image_shape"])[:2]
    elif "size" in meta:
        shape = (int(meta["size"]), int(meta["size"]))
    else:
        side = int(round(np.sqrt(n_features)))
        shape = (side, side)
    if shape[0] * shape[1] != n_features:
        raise UserError(f"cannot draw {n_features} features as an image of shape {shape}: give the dataset an "
                         f"'image_shape' in its meta")
    return shape


def feature_layout(n_features: int, meta: dict[str, Any] | None = None) -> tuple[int, int] | None:
    """How to draw ``n_features`` features: as an image of the returned (height, width), or by name (``None``).
    An image when the loader recorded a shape (``image_shape``, ``size``; :func:`image_shape`), by name when it
    recorded one name per feature (``feature_names``, or the ``features`` columns of a table), else an image when
    ``n_features`` is a square (e.g. scikit-learn's 8×8 digits) and by name otherwise."""
    meta = meta or {}
    if "image_shape" in meta or "size" in meta:
        return image_shape(n_features, meta)
    if any(isinstance(meta.get(key), list) and len(meta[key]) == n_features for key in ("feature_names", "features")):
        return None
    side = int(round(np.sqrt(n_features)))
    return (side, side) if side * side == n_features else None


def draw_image(ax: Axes, x: np.ndarray, shape: tuple[int, int], title: str = "") -> None:
    """One image in grey (its own min-max range)."""
    ax.imshow(np.asarray(x, dtype=np.float64).reshape(shape), cmap="gray_r" if shape[0] <= 28 else "gray",
              interpolation="nearest")
    ax.set_title(title, fontsize=7)
    ax.set_xticks([])
    ax.set_yticks([])


def draw_saliency(ax: Axes, importance: np.ndarray, shape: tuple[int, int], title: str = "",
                  vmax: float | None = None) -> None:
    """One feature-importance map (featMAP Eq. 3, Definition 3.1) in ``Reds`` from 0 to ``vmax`` (default its
    maximum)."""
    m = np.asarray(importance, dtype=np.float64).reshape(shape)
    top = float(np.nanmax(m)) if vmax is None else float(vmax)
    ax.imshow(m, cmap="Reds", vmin=0.0, vmax=top if top > 0 else 1.0, interpolation="nearest")
    ax.set_title(title, fontsize=7)
    ax.set_xticks([])
    ax.set_yticks([])


def image_pairs_figure(rows: Sequence[Sequence[tuple[np.ndarray, np.ndarray, str, tuple[int, int]]]], title: str,
                       cell: float = 1.25) -> plt.Figure:
    """Rows of (image, saliency map, label, image shape) pairs: each pair is drawn as the image with its map beside
    it (featMAP Figs. 4-5); pairs of one figure may come from data sets of different image sizes. Rows wrap to page
    width (:func:`cova.viz.figures.grid_columns`); unused cells are switched off."""
    rows = wrap_rows(rows, grid_columns([len(r) for r in rows], 2 * cell, 1.15 * cell))
    n_pairs = max(len(r) for r in rows)
    fig, axes = plt.subplots(len(rows), 2 * n_pairs, figsize=(cell * 2 * n_pairs, cell * 1.15 * len(rows) + 0.4),
                             squeeze=False)
    for i, row in enumerate(rows):
        for j in range(n_pairs):
            a, b = axes[i, 2 * j], axes[i, 2 * j + 1]
            if j >= len(row):
                a.axis("off")
                b.axis("off")
                continue
            x, fi, label, shape = row[j]
            draw_image(a, x, shape, label)
            draw_saliency(b, fi, shape, "importance")
    fig.suptitle(title, fontsize=10)
    return fig


def top_features(lengths: np.ndarray, n: int = N_TOP) -> np.ndarray:
    """Indices of the ``n`` longest loading arrows, longest first (ties by feature index)."""
    lengths = np.asarray(lengths, dtype=np.float64)
    order = np.lexsort((np.arange(lengths.size), -lengths))
    return order[:n]


def draw_loading_arrows(ax: Axes, loadings: np.ndarray, frame: np.ndarray, names: Sequence[str] | None = None,
                        n_top: int = N_TOP) -> np.ndarray:
    """featMAP Fig. 1 (top right): the embedded frame axes v^e_1, v^e_2 at the origin (dashed) and every feature's
    loading arrow a_h (``loadings`` (n, 2)), the ``n_top`` longest in red and annotated with their names. Returns
    the indices of the annotated features."""
    L = np.asarray(loadings, dtype=np.float64)
    lengths = np.linalg.norm(L, axis=1)
    top = top_features(lengths, n_top)
    scale = float(lengths.max()) if lengths.size and lengths.max() > 0 else 1.0
    for k, v in enumerate(np.asarray(frame, dtype=np.float64)):
        ax.annotate("", xy=v * scale * 1.1, xytext=(0, 0),
                    arrowprops=dict(arrowstyle="->", ls="--", color="0.3", lw=1.0))
        ax.text(*(v * scale * 1.18), f"$v^e_{k + 1}$", fontsize=8, ha="center", va="center")
    rest = np.setdiff1d(np.arange(L.shape[0]), top)
    ax.quiver(np.zeros(rest.size), np.zeros(rest.size), L[rest, 0], L[rest, 1], angles="xy", scale_units="xy",
              scale=1, color="0.75", width=0.003)
    ax.quiver(np.zeros(top.size), np.zeros(top.size), L[top, 0], L[top, 1], angles="xy", scale_units="xy",
              scale=1, color="tab:red", width=0.006)
    for h in top:
        label = names[h] if names is not None else str(h)
        ax.text(L[h, 0] * 1.08, L[h, 1] * 1.08, label, fontsize=6, color="tab:red")
    lim = scale * 1.3
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    return top


def draw_radius_scatter(ax: Axes, r_original: np.ndarray, r_embedded: np.ndarray, title: str,
                        colours: np.ndarray | None = None) -> float:
    """featMAP Fig. 7 / Supp. Fig. 9 (middle): embedded against original local radius (logs), the least-squares
    line and Pearson's r in the title; returns r."""
    x, y = np.asarray(r_original, dtype=np.float64), np.asarray(r_embedded, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    ax.scatter(x, y, s=3, c="tab:blue" if colours is None else np.asarray(colours)[ok], alpha=0.6, linewidths=0)
    r = float(np.corrcoef(x, y)[0, 1]) if x.size > 2 and x.std() > 0 and y.std() > 0 else float("nan")
    if np.isfinite(r):
        slope, intercept = np.polyfit(x, y, 1)
        xs = np.linspace(x.min(), x.max(), 2)
        ax.plot(xs, slope * xs + intercept, color="k", lw=1)
    ax.set_xlabel("log original local radius", fontsize=7)
    ax.set_ylabel("log embedded local radius", fontsize=7)
    ax.set_title(f"{title}\nPearson r = {r:.3f}", fontsize=8)
    ax.tick_params(labelsize=6)
    return r


def frame_figure(Z: np.ndarray, point: int, what: str, loadings: np.ndarray, frame: np.ndarray, names: Sequence[str],
                 x: np.ndarray, importance: np.ndarray, shape: tuple[int, int] | None, title: str
                 ) -> tuple[plt.Figure, np.ndarray]:
    """featMAP Fig. 1: the embedding ``Z`` (``what`` names it) with ``point`` in red, that point's embedded frame
    and feature loading arrows (:func:`draw_loading_arrows`, the top ten named by ``names``), and below, for an
    image (``shape``) its image ``x`` and its feature-importance map with the top ten features circled, for named
    features (``shape`` ``None``) its top ten features by importance as bars. Returns the figure and the top
    features (by arrow length)."""
    fig, ax = plt.subplots(2, 2, figsize=(8, 8))
    ax[0, 0].scatter(Z[:, 0], Z[:, 1], s=2, c="0.6", linewidths=0)
    ax[0, 0].scatter(Z[point, 0], Z[point, 1], s=40, c="tab:red", edgecolors="k")
    ax[0, 0].set_title(f"{what}; point {point} in red", fontsize=8)
    ax[0, 0].set_aspect("equal", "datalim")
    top = draw_loading_arrows(ax[0, 1], loadings, frame, names, N_TOP)
    kind = "pixel" if shape is not None else "feature"
    ax[0, 1].set_title(f"embedded frame (dashed) and {kind} loadings; top {N_TOP} in red", fontsize=8)
    if shape is None:
        grid = ax[1, 0].get_gridspec()
        ax[1, 0].remove()
        ax[1, 1].remove()
        draw_importance_bars(fig.add_subplot(grid[1, :]), importance, names,
                             f"feature importance of point {point}: top {min(N_TOP, len(names))}")
    else:
        draw_image(ax[1, 0], x, shape, f"image {point}")
        draw_saliency(ax[1, 1], importance, shape, f"feature importance (top {N_TOP} pixels circled)")
        ax[1, 1].scatter(top % shape[1], top // shape[1], s=60, facecolors="none", edgecolors="tab:blue")
    fig.suptitle(title, fontsize=10)
    return fig, top


def draw_importance_bars(ax: Axes, importance: np.ndarray, names: Sequence[str], title: str,
                         n_top: int = N_TOP) -> np.ndarray:
    """The ``n_top`` largest values of ``importance`` (one per feature) as horizontal bars labelled with the
    features' ``names``, largest on top; returns their indices."""
    values = np.nan_to_num(np.asarray(importance, dtype=np.float64), nan=0.0)
    top = top_features(values, n_top)
    rows = np.arange(top.size)[::-1]
    ax.barh(rows, values[top], color="tab:red")
    ax.set_yticks(rows)
    ax.set_yticklabels([str(names[h]) for h in top], fontsize=7)
    ax.set_title(title, fontsize=8)
    ax.tick_params(axis="x", labelsize=6)
    return top


def draw_arrows_on_embedding(ax: Axes, Z: np.ndarray, labels: np.ndarray, n_cohorts: int, points: Sequence[int],
                             loadings: np.ndarray, names: Sequence[str], n_arrows: int = N_ARROWS) -> None:
    """The embedding coloured by cohort and, at each of ``points`` (circled), the loading arrows a_h of its
    ``n_arrows`` longest features (``loadings`` (m, n, 2), featMAP's feature_loadings_) labelled with their names;
    one scale for every arrow (the longest drawn is 12% of the embedding's extent)."""
    plot_cohorts(ax, Z, labels, n_cohorts)
    if not len(points) or not np.all(np.isfinite(Z)):
        return
    idx = np.asarray(points, dtype=np.int64)
    L = np.asarray(loadings, dtype=np.float64)[idx]
    lengths = np.linalg.norm(L, axis=2)
    drawn = [top_features(row, n_arrows) for row in lengths]
    longest = max(float(row[top].max()) for row, top in zip(lengths, drawn))
    scale = 0.12 * float(np.ptp(Z[:, :2], axis=0).max() or 1.0) / (longest if longest > 0 else 1.0)
    for i, arrows, top in zip(idx, L, drawn):
        start = Z[i, :2]
        ax.scatter(*start, s=30, facecolors="none", edgecolors="k", zorder=3)
        for h in top:
            tip = start + scale * arrows[h]
            ax.annotate("", xy=tip, xytext=start, arrowprops=dict(arrowstyle="->", color="k", lw=0.8), zorder=4)
            ax.text(*tip, str(names[h]), fontsize=6, zorder=5)


@dataclass
class NamedFeatureMap:
    """One featMAP run drawn by feature name: embedding ``Z`` (m, 2), cohort ``labels`` and ``label_names``, the
    mean feature importance of every cohort ``cohort_importance`` (c, n), the loading arrows ``loadings``
    (m, n, 2), the feature ``names``, the ``points`` that get arrows, and ``what`` the run is (panel title)."""

    Z: np.ndarray
    labels: np.ndarray
    label_names: Sequence[str]
    cohort_importance: np.ndarray
    loadings: np.ndarray
    names: Sequence[str]
    points: Sequence[int]
    what: str


def named_features_figure(maps: Sequence[NamedFeatureMap], title: str, per_row: int = 5) -> plt.Figure:
    """featMAP's interpretation (Figs. 1, 4-5) for named features: per run a row with the embedding and the loading
    arrows of the top features at its sampled points (:func:`draw_arrows_on_embedding`), then per cohort its top
    features by mean importance (Eq. 3) as bars (:func:`draw_importance_bars`), ``per_row`` cohorts a row."""
    bar_height = max(1.6, 0.2 * N_TOP)
    heights: list[float] = []
    for m in maps:
        heights += [4.0] + [bar_height] * int(np.ceil(len(m.label_names) / per_row))
    fig = plt.figure(figsize=(3.0 * per_row, sum(heights) + 0.6))
    grid = fig.add_gridspec(len(heights), per_row, height_ratios=heights)
    r = 0
    for m in maps:
        ax = fig.add_subplot(grid[r, :])
        draw_arrows_on_embedding(ax, m.Z, m.labels, len(m.label_names), m.points, m.loadings, m.names)
        ax.set_title(f"{m.what}: loading arrows of the {N_ARROWS} longest features at {len(m.points)} points",
                     fontsize=8)
        for c, name in enumerate(m.label_names):
            draw_importance_bars(fig.add_subplot(grid[r + 1 + c // per_row, c % per_row]), m.cohort_importance[c],
                                 m.names, f"{name}: mean feature importance")
        r += 1 + int(np.ceil(len(m.label_names) / per_row))
    fig.suptitle(title, fontsize=10)
    return fig


def adversarial_figure(Z: np.ndarray, labels: np.ndarray, adversarial_labels: np.ndarray, predicted: np.ndarray,
                       accuracy: float, examples: Sequence[tuple[np.ndarray, int]], first_map: np.ndarray | None,
                       shape: tuple[int, int], source: int,
                       triples: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]], title: str) -> plt.Figure:
    """featMAP Fig. 6 / Supp. Fig. 8. Row 1: the featMAP embedding ``Z`` of the adversarial set coloured by the true
    ``labels`` and by the ``adversarial_labels``, and the fractions ``predicted`` as each digit (after the attack,
    ``accuracy``). Row 2: adversarial ``examples`` of digit ``source`` (image, adversarial label) and the
    importance map of the first (``first_map``). Then per adversarial label t of ``triples`` (t, clean source map,
    adversarial source -> t map, clean t map): the three average importance maps on one colour scale."""
    n_rows = 2 + max(len(triples), 1)
    fig = plt.figure(figsize=(12, 3.0 * n_rows))
    grid = fig.add_gridspec(n_rows, 6)
    for k, (shown, name) in enumerate(((labels, "true label"), (adversarial_labels, "adversarial label"))):
        ax = fig.add_subplot(grid[0, 3 * k:3 * k + 2])
        plot_cohorts(ax, Z, shown, 10, point_size=2)
        ax.set_title(f"featMAP of the adversarial set, coloured by {name}", fontsize=8)
        handles = [plt.Line2D([], [], marker="o", ls="", color=cohort_colours(10)[d], label=str(d))
                   for d in range(10)]
        ax.legend(handles=handles, fontsize=5, loc="upper right", ncol=2)
    ax = fig.add_subplot(grid[0, 2])
    ax.bar(np.arange(10), predicted, color=cohort_colours(10))
    ax.set_xticks(range(10))
    ax.set_title(f"predicted labels (accuracy {accuracy:.3f})", fontsize=8)
    for k, (image, label) in enumerate(examples):
        draw_image(fig.add_subplot(grid[1, k]), image, shape, f"{source} -> {label}")
    if examples and first_map is not None:
        draw_saliency(fig.add_subplot(grid[1, 5]), first_map, shape, f"map of the first ({source} -> "
                                                                       f"{examples[0][1]})")
    for r, (t, m_s, m_a, m_t) in enumerate(triples):
        vmax = max(m_s.max(), m_a.max(), m_t.max())
        for k, (m, name) in enumerate(((m_s, f"clean {source}"), (m_a, f"adversarial {source} -> {t}"),
                                       (m_t, f"clean {t}"))):
            draw_saliency(fig.add_subplot(grid[2 + r, k]), m, shape, f"{name}: average importance", vmax=vmax)
    fig.suptitle(title, fontsize=10)
    return fig


def density_figure(maps: Sequence[tuple[np.ndarray, str, str, tuple[np.ndarray, np.ndarray]]], groups: np.ndarray,
                   sparse: int, colours: np.ndarray, images: Sequence[tuple[int, np.ndarray]],
                   shape: tuple[int, int], title: str) -> plt.Figure:
    """featMAP Fig. 7 / Supp. Figs. 9-10. Per map of ``maps`` (embedding, panel title, method name, (original,
    embedded) local radii) a column: the embedding coloured by subgroup (``groups``, ``colours``) with subgroup
    ``sparse`` in brown, and below it its local-radius scatter (:func:`draw_radius_scatter`); along the bottom the
    ``images`` (index, image) of that subgroup."""
    n = len(maps)
    fig = plt.figure(figsize=(5.5 * n, 12))
    grid = fig.add_gridspec(3, 10 * n, height_ratios=[4, 4, 1.4])
    for c, (Z, panel_title, name, radii) in enumerate(maps):
        ax = fig.add_subplot(grid[0, 10 * c:10 * (c + 1)])
        ax.scatter(Z[:, 0], Z[:, 1], s=3, c=colours, linewidths=0)
        ax.scatter(Z[groups == sparse, 0], Z[groups == sparse, 1], s=6, c="saddlebrown", linewidths=0,
                   label=f"subgroup {sparse}")
        ax.legend(fontsize=7)
        ax.set_title(panel_title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        draw_radius_scatter(fig.add_subplot(grid[1, 10 * c:10 * (c + 1)]), *radii, name, colours)
    for j, (i, image) in enumerate(images):
        draw_image(fig.add_subplot(grid[2, j * n:(j + 1) * n]), image, shape, f"subgroup {sparse}: #{i}")
    fig.suptitle(title, fontsize=10)
    return fig
