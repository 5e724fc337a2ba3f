"""Grids of cohort scatter panels, one per run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from .scatter import panel_grid, plot_cohorts


@dataclass(frozen=True)
class ScatterPanel:
    """One panel: embedding ``Z`` coloured by ``labels`` (of ``n_cohorts``), the placed prototypes (or
    ``None``) and the panel title."""

    Z: np.ndarray
    labels: np.ndarray
    n_cohorts: int
    placed: np.ndarray | None
    title: str


def scatter_grid_figure(rows: Sequence[Sequence[ScatterPanel]], title: str, width: float = 3.2,
                        height: float = 3.3, point_size: float | None = 3, dpi: float = 100,
                        panel_fontsize: float = 7, title_fontsize: float = 10) -> plt.Figure:
    """One row of cohort scatters per entry of ``rows`` (``point_size`` ``None``: sized by the number of
    points)."""
    fig, cells = panel_grid(rows, width, height, dpi)
    for ax, p in cells:
        plot_cohorts(ax, p.Z, p.labels, p.n_cohorts, p.placed, point_size=point_size)
        ax.set_title(p.title, fontsize=panel_fontsize)
    fig.suptitle(title, fontsize=title_fontsize)
    return fig
