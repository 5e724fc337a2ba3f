"""Cohort scatter plots: samples coloured by cohort, prototypes as large outlined markers."""

from __future__ import annotations

import os
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba

from ..io import atomic_path

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


def panel_grid(rows: Sequence[Sequence[object]], width: float, height: float) -> tuple[plt.Figure, list]:
    """A figure with one row of panels per entry of ``rows`` (as many columns as the longest row; the unused
    axes switched off) and the list of (axes, item) pairs, row by row."""
    n_cols = max(len(r) for r in rows)
    fig, axes = plt.subplots(len(rows), n_cols, figsize=(width * n_cols, height * len(rows)), dpi=100,
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
    return "  ".join(f"{SCORE_LABELS[k]} {100 * scores[k]:.1f}" for k in keys if k in scores)


def plot_cohorts(ax: Axes, Z: np.ndarray, labels: np.ndarray, n_cohorts: int,
                 prototypes: np.ndarray | None = None, point_size: float | None = None) -> None:
    """Draw the samples of ``Z`` coloured by cohort and, if given, the prototypes in the same colours."""
    colours = cohort_colours(n_cohorts)
    if not np.all(np.isfinite(Z)):
        ax.text(0.5, 0.5, "no embedding\n(degenerate: see the run's log)", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    s = point_size if point_size is not None else max(2.0, min(12.0, 6000.0 / max(len(Z), 1)))
    ax.scatter(Z[:, 0], Z[:, 1], c=colours[labels], s=s, linewidths=0, rasterized=len(Z) > 5000)
    if prototypes is not None and len(prototypes):
        ax.scatter(prototypes[:, 0], prototypes[:, 1], c=colours[: len(prototypes)], s=140, marker="o",
                   edgecolors="black", linewidths=1.5, zorder=3)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal", adjustable="datalim")


def save_scatter_figure(path: str | os.PathLike, Z: np.ndarray, labels: np.ndarray, label_names: Sequence[str],
                        prototypes: np.ndarray | None = None, scores: dict[str, float] | None = None,
                        title: str = "") -> None:
    """One embedding as a PNG, with a legend when there are at most 20 cohorts and the scores in the title."""
    fig, ax = plt.subplots(figsize=(6.5, 5.5), dpi=110)
    plot_cohorts(ax, Z, labels, len(label_names), prototypes)
    if len(label_names) <= 20:
        colours = cohort_colours(len(label_names))
        handles = [plt.Line2D([], [], marker="o", ls="", color=colours[j], label=n) for j, n in enumerate(label_names)]
        ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
    text = title + ("\n" + format_scores(scores) if scores else "")
    ax.set_title(text, fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
