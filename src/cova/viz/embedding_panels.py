"""Grids of embedding panels mixing 2-D maps, 3-D scatters and views of a sphere, with optional point names and
point sizes (DOSNES Figs. 1-4: t-SNE 2-D, t-SNE 3-D and the DOSNES sphere from two viewpoints)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from .figures import grid_columns, wrap_rows
from .scatter import draw_no_embedding, legend_handles, plot_layers_3d, point_colours, point_size


@dataclass(frozen=True)
class EmbeddingPanel:
    """One panel: the points ``Z`` (n × 2 or n × 3) coloured by ``labels`` (of ``n_cohorts``; ``None``: one
    colour). ``view`` (elevation, azimuth) draws a 3-D embedding from that viewpoint; ``sphere`` adds the faint
    sphere of the points' mean radius. ``sizes`` (n,) overrides the marker sizes, ``names`` (n,) writes a name next
    to every point."""

    Z: np.ndarray
    labels: np.ndarray | None
    n_cohorts: int
    title: str
    view: tuple[float, float] | None = None
    sphere: bool = False
    sizes: np.ndarray | None = None
    names: Sequence[str] | None = None


def degree_sizes(degree: np.ndarray, largest: float = 40.0, smallest: float = 3.0) -> np.ndarray:
    """Marker areas growing with the cube root of the degree (the DOSNES demo's ``(d / max d)^(1/3)``)."""
    d = np.asarray(degree, dtype=np.float64)
    top = d.max() if d.size and d.max() > 0 else 1.0
    return smallest + (largest - smallest) * np.cbrt(np.clip(d, 0.0, None) / top)


def _draw(fig: plt.Figure, index: int, n_rows: int, n_cols: int, p: EmbeddingPanel) -> plt.Axes:
    three_d = p.Z.shape[1] == 3
    ax = fig.add_subplot(n_rows, n_cols, index, projection="3d" if three_d else None)
    n = len(p.Z)
    colours = point_colours(p.labels, n, p.n_cohorts, "tab:blue")
    sizes = p.sizes if p.sizes is not None else np.full(n, point_size(n))
    if not np.all(np.isfinite(p.Z)):
        draw_no_embedding(ax)
    elif three_d:
        plot_layers_3d(ax, [(p.Z, colours, "o", sizes)], p.view or (20.0, -60.0), sphere=p.sphere)
        if p.names is not None:
            for (x, y, z), name in zip(p.Z, p.names):
                ax.text(x, y, z, f" {name}", fontsize=4.5, color="0.15")
    else:
        ax.scatter(p.Z[:, 0], p.Z[:, 1], c=colours, s=sizes, linewidths=0, rasterized=n > 5000)
        ax.set_aspect("equal", adjustable="datalim")
        if p.names is not None:
            for (x, y), name in zip(p.Z, p.names):
                ax.annotate(name, (x, y), xytext=(2, 2), textcoords="offset points", fontsize=4.5, color="0.15")
    if not three_d:
        ax.set_xticks([])
        ax.set_yticks([])
    ax.set_title(p.title, fontsize=7)
    return ax


def embedding_panels_figure(rows: Sequence[Sequence[EmbeddingPanel]], title: str,
                            label_names: Sequence[Sequence[str]] | None = None, size: float = 3.6,
                            dpi: float = 110) -> plt.Figure:
    """One row of panels per entry of ``rows``, wrapped to page width (:func:`cova.viz.figures.grid_columns`);
    ``label_names[i]`` (at most 20 names) gives row ``i`` a legend beside its last panel."""
    n_cols = grid_columns([len(r) for r in rows], size, size)
    wrapped = [wrap_rows([row], n_cols) for row in rows]
    n_rows = sum(len(w) for w in wrapped)
    fig = plt.figure(figsize=(size * n_cols + (1.6 if label_names else 0.0), size * n_rows), dpi=dpi)
    line = 0
    for i, pieces in enumerate(wrapped):
        last = None
        for piece in pieces:
            for j, p in enumerate(piece):
                last = _draw(fig, line * n_cols + j + 1, n_rows, n_cols, p)
            line += 1
        names = label_names[i] if label_names else []
        if last is not None and 0 < len(names) <= 20:
            last.legend(handles=legend_handles(names), loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=6,
                        frameon=False)
    fig.suptitle(title, fontsize=10)
    return fig
