"""COVA Fig. 1 analogue (Sec. 1, spec §6.2): Sinusoid with cohort-mean prototypes; COVA-E1 (α = 0.1); t-SNE.

Panel (a) shows the data with the prototypes υ_j = μ_j, (b) COVA-E1, whose cohorts sit at their prototypes,
(c) t-SNE, whose cohort layout is arbitrary (and whose cohorts may split into fragments).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from ..inputs import Inputs
from ..io import atomic_path
from ..viz.scatter import format_scores, plot_cohorts


def render_fig1(dataset: str | os.PathLike, inputs: str | os.PathLike, cova: str | os.PathLike,
                cova_scores: str | os.PathLike, tsne: str | os.PathLike, tsne_scores: str | os.PathLike,
                out: str | os.PathLike) -> None:
    """Render the three panels into ``out`` (PNG)."""
    inp = Inputs.load(dataset, inputs)
    c = inp.n_cohorts
    with np.load(cova, allow_pickle=False) as f:
        Zc, alpha = f["Z"], json.loads(str(f["params"]))["alpha"]
    with np.load(tsne, allow_pickle=False) as f:
        Zt = f["Z"]
    sc = json.loads(Path(cova_scores).read_text())
    st = json.loads(Path(tsne_scores).read_text())
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), dpi=110)
    plot_cohorts(axes[0], inp.X[:, :2], inp.labels, c, inp.prototypes)
    axes[0].set_title("(a) original data and prototypes", fontsize=10)
    plot_cohorts(axes[1], Zc, inp.labels, c, inp.prototypes)
    axes[1].set_title(f"(b) COVA-E1, α = {alpha:g}\n{format_scores(sc)}", fontsize=10)
    plot_cohorts(axes[2], Zt, inp.labels, c)
    axes[2].set_title(f"(c) t-SNE\n{format_scores(st, ('s_n', 's_s', 's_c_aligned', 's_c_r'))}", fontsize=10)
    fig.suptitle("COVA Fig. 1 analogue: prototypes control where cohorts go; t-SNE places them arbitrarily",
                 fontsize=11)
    fig.tight_layout()
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
