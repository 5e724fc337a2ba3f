"""Fit times against the data size: every run's measured fit time (COVA Fig. H.11) and the co-embedding methods
timed on synthetic relations of growing size (co-embedding paper Fig. 12), both on log-log axes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import pandas as pd

__all__ = ["fit_times_figure", "coembedding_times_figure"]

#: Markers of the lines of one panel, in order.
MARKERS = "osD^vP*Xph<>"


def fit_times_figure(table: pd.DataFrame, title: str, names: Mapping[str, str] | None = None) -> plt.Figure:
    """One panel per data set of ``table`` (columns ``dataset``, ``method_entry``, ``n_samples``, ``status``,
    ``runtime_s``): the fit time of every method entry's ``ok`` runs against the samples fitted, one line per entry
    (dashed after the tenth), named by ``names`` (method entry -> legend name; the entry when absent)."""
    names = names or {}
    datasets = list(dict.fromkeys(table.dataset))
    fig, axes = plt.subplots(1, len(datasets), figsize=(max(8.5, 6.4 * len(datasets)), 5.2), dpi=100, squeeze=False)
    for ax, d in zip(axes[0], datasets):
        g = table[(table.dataset == d) & (table.status == "ok")]
        for i, (entry, h) in enumerate(g.groupby("method_entry", sort=False)):
            ax.plot(h.n_samples, h.runtime_s, marker=MARKERS[i % len(MARKERS)], ms=4, color=f"C{i % 10}",
                    linestyle="-" if i < 10 else "--", label=names.get(entry, entry))
        ax.set_xscale("log")
        ax.set_yscale("log")
        sizes = sorted(set(g.n_samples))
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_xlabel("samples fitted, l")
        ax.set_ylabel("fit wall-clock seconds (the embed job's threads)")
        ax.set_title(d, fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(title, fontsize=10)
    return fig


def coembedding_times_figure(table: pd.DataFrame, sizes: Sequence[int], dims: Sequence[int], threads: int,
                             title: str, names: Mapping[str, str] | None = None) -> plt.Figure:
    """One panel per embedding dimension k of ``dims``: the wall-clock time of every method entry of ``table``
    (columns ``method_entry``, ``m``, ``k``, ``wall_s``) against m = n, with ``sizes`` as ticks and the timing
    job's ``threads`` named on the axis; ``names``: method entry -> legend name (the entry when absent)."""
    names = names or {}
    fig, axes = plt.subplots(1, len(dims), figsize=(4.6 * len(dims), 3.8), dpi=100, squeeze=False)
    for ax, k in zip(axes[0], dims):
        for i, (entry, g) in enumerate(table[table.k == k].groupby("method_entry", sort=False)):
            ax.plot(g.m, g.wall_s, marker="o", ms=3, color=f"C{i % 10}", label=names.get(entry, entry))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [str(m) for m in sizes])
        ax.minorticks_off()
        ax.set_xlabel("m = n")
        ax.set_ylabel(f"wall-clock seconds ({threads} threads)")
        ax.set_title(f"k = {k}", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return fig
