"""featMAP's interpretation drawings: per-point feature-importance (saliency) maps beside the images (featMAP Figs.
1, 4-6, Supp. Fig. 8), the local frame with the features' loading arrows (Fig. 1, top right) and the local-radius
scatter with its regression line (Fig. 7, Supp. Fig. 9); and the whole figures built from them: the frame of one
point (:func:`frame_figure`, Fig. 1), the adversarial examples (:func:`adversarial_figure`, Fig. 6, Supp. Fig. 8)
and the density study (:func:`density_figure`, Fig. 7, Supp. Figs. 9-10).

"Darker red = larger feature importance" (the paper's captions): maps are drawn with the ``Reds`` colour map, each
scaled to its own maximum, the images in grey.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from .scatter import cohort_colours, plot_cohorts

__all__ = ["image_shape", "draw_image", "draw_saliency", "image_pairs_figure", "draw_loading_arrows",
           "draw_radius_scatter", "top_features", "frame_figure", "adversarial_figure", "density_figure"]


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
        raise ValueError(f"cannot draw {n_features} features as an image of shape {shape}: give the dataset an "
                         f"'image_shape' in its meta")
    return shape


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
    it (featMAP Figs. 4-5); pairs of one figure may come from data sets of different image sizes. Unused cells are
    switched off."""
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


def top_features(lengths: np.ndarray, n: int = 10) -> np.ndarray:
    """Indices of the ``n`` longest loading arrows, longest first (ties by feature index)."""
    lengths = np.asarray(lengths, dtype=np.float64)
    order = np.lexsort((np.arange(lengths.size), -lengths))
    return order[:n]


def draw_loading_arrows(ax: Axes, loadings: np.ndarray, frame: np.ndarray, names: Sequence[str] | None = None,
                        n_top: int = 10) -> np.ndarray:
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
                 x: np.ndarray, importance: np.ndarray, shape: tuple[int, int], title: str
                 ) -> tuple[plt.Figure, np.ndarray]:
    """featMAP Fig. 1: the embedding ``Z`` (``what`` names it) with ``point`` in red, that point's embedded frame
    and feature loading arrows (:func:`draw_loading_arrows`, the top ten named by ``names``), its image ``x`` and
    its feature-importance map with the top ten features circled. Returns the figure and the top features."""
    fig, ax = plt.subplots(2, 2, figsize=(8, 8))
    ax[0, 0].scatter(Z[:, 0], Z[:, 1], s=2, c="0.6", linewidths=0)
    ax[0, 0].scatter(Z[point, 0], Z[point, 1], s=40, c="tab:red", edgecolors="k")
    ax[0, 0].set_title(f"{what}; point {point} in red", fontsize=8)
    ax[0, 0].set_aspect("equal", "datalim")
    top = draw_loading_arrows(ax[0, 1], loadings, frame, names)
    ax[0, 1].set_title("embedded frame (dashed) and pixel loadings; top 10 in red", fontsize=8)
    draw_image(ax[1, 0], x, shape, f"image {point}")
    draw_saliency(ax[1, 1], importance, shape, "feature importance (top 10 pixels circled)")
    ax[1, 1].scatter(top % shape[1], top // shape[1], s=60, facecolors="none", edgecolors="tab:blue")
    fig.suptitle(title, fontsize=10)
    return fig, top


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
