"""Cohort link graphs drawn over an embedding (COVA Table 2, Figs. 3, 9, H.15): true-positive links solid,
false-positive dotted, false-negative dashed (the paper's convention)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from ..metrics.cohort import cohort_graph, link_comparison

LINK_STYLES = {"tp": ("-", "true positive"), "fp": (":", "false positive"), "fn": ("--", "false negative")}


def cohort_centres(Z: np.ndarray, labels: np.ndarray, n_cohorts: int) -> np.ndarray:
    """(c, k) mean of the embedded samples of each cohort (NaN rows for empty cohorts)."""
    sums = np.zeros((n_cohorts, Z.shape[1]))
    np.add.at(sums, labels, Z)
    counts = np.bincount(labels, minlength=n_cohorts).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


def draw_links(ax: Axes, centres: np.ndarray, reference: np.ndarray, kappa: int = 2,
               names: Sequence[str] | None = None, colour: str = "black") -> dict[str, list[tuple[int, int]]]:
    """Draw the κ-NN graph of the embedded ``centres`` against the boolean ``reference`` graph (e.g. the prototypes'
    :func:`~cova.metrics.cohort.cohort_graph`, or the cluster graph in the original space) and return the
    :func:`~cova.metrics.cohort.link_comparison` of the two."""
    links = link_comparison(reference, cohort_graph(centres, kappa))
    for kind, (style, label) in LINK_STYLES.items():
        for n, (i, j) in enumerate(links[kind]):
            ax.plot(centres[[i, j], 0], centres[[i, j], 1], linestyle=style, color=colour, linewidth=1.2,
                    label=label if n == 0 else None, zorder=3)
    ax.scatter(centres[:, 0], centres[:, 1], s=40, facecolors="white", edgecolors=colour, zorder=4)
    if names is not None:
        for (x, y), name in zip(centres, names):
            ax.annotate(name, (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points", zorder=5)
    return links
