"""COVA Fig. 1 analogue (Sec. 1): Sinusoid with cohort-mean prototypes; COVA-E1 (α = 0.1); t-SNE.

Panel (a) shows the data with the prototypes υ_j = μ_j, (b) COVA-E1, whose cohorts sit at their prototypes,
(c) t-SNE, whose cohort layout is arbitrary (and whose cohorts may split into fragments).
"""

from __future__ import annotations

import os

from ...embedding import Embedding
from ...inputs import Inputs
from ...io import read_scores
from ...viz.figures import save_figure
from ...viz.panels import ScatterPanel, scatter_grid_figure
from ...viz.scatter import format_scores

__all__ = ["render_fig1"]


def render_fig1(dataset: str | os.PathLike, inputs: str | os.PathLike, cova: str | os.PathLike,
                cova_scores: str | os.PathLike, tsne: str | os.PathLike, tsne_scores: str | os.PathLike,
                out: str | os.PathLike) -> None:
    """Render the three panels into ``out`` (PNG)."""
    inp = Inputs.load(dataset, inputs)
    c = inp.n_cohorts
    e1, tsne_run = Embedding.load(cova), Embedding.load(tsne)
    alpha = e1.params["alpha"]
    sc, st = read_scores(cova_scores), read_scores(tsne_scores)
    panels = [ScatterPanel(inp.X[:, :2], inp.labels, c, inp.prototypes, "(a) original data and prototypes"),
              ScatterPanel(e1.Z, inp.labels, c, inp.prototypes, f"(b) COVA-E1, α = {alpha:g}\n{format_scores(sc)}"),
              ScatterPanel(tsne_run.Z, inp.labels, c, None,
                           f"(c) t-SNE\n{format_scores(st, ('s_n', 's_s', 's_c_aligned', 's_c_r'))}")]
    fig = scatter_grid_figure([panels], "COVA Fig. 1 analogue: prototypes control where cohorts go; t-SNE places "
                              "them arbitrarily", width=5, height=4.8, point_size=None, dpi=110, panel_fontsize=10,
                              title_fontsize=11)
    save_figure(fig, out)
