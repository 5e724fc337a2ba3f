"""Cohort link graphs drawn over an embedding (COVA Tables 1-2, Figs. 3, 9, H.12-H.16): true-positive links solid,
false-positive dotted, false-negative dashed (the paper's convention), and embeddings with a few cohorts
highlighted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ..metrics.centres import cohort_centres
from ..metrics.cohort import cohort_graph, link_comparison
from .figures import grid_columns, wrap_rows
from .scatter import cohort_colours, panel_grid, plot_cohorts

LINK_STYLES = {"tp": ("-", "true positive"), "fp": (":", "false positive"), "fn": ("--", "false negative")}


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


def finish_panel(ax: Axes, title: str) -> None:
    """No ticks, equal aspect, a small title."""
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title, fontsize=7)


@dataclass(frozen=True)
class LinkPanel:
    """One run of :func:`link_graphs_figure` or :func:`link_panels_figure`: its embedding, cohorts, placed
    prototypes (0 rows when none), the reference cohort graph, the cohort names to annotate and the title; the
    title of its link panel (:func:`link_graphs_figure`), and optionally a ``target`` cohort whose links to the
    cohorts ``near`` are drawn in red (:func:`link_panels_figure`)."""

    Z: np.ndarray
    labels: np.ndarray
    n_cohorts: int
    placed: np.ndarray
    reference: np.ndarray
    names: Sequence[str]
    title: str
    link_title: str = ""
    target: int | None = None
    near: Sequence[int] = ()


def link_graphs_figure(panels: Sequence[LinkPanel], kappa: int, title: str,
                       show_prototypes: bool = False) -> plt.Figure:
    """Row 1: each embedding coloured by cohort; row 2: its κ-NN cohort graph against the reference over faint
    samples (and the placed prototypes as squares with ``show_prototypes``); runs without an embedding leave row 2
    empty. A single run's two panels sit side by side; many runs wrap to page width (:func:`grid_columns`)."""
    n = len(panels)
    if n == 1:
        fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.9), dpi=100, squeeze=False)
        pairs = [(axes[0, 0], axes[0, 1])]
    else:
        n_cols = grid_columns([n], 3.6, 7.4)
        n_rows = len(wrap_rows([list(panels)], n_cols))
        fig, axes = plt.subplots(2 * n_rows, n_cols, figsize=(3.6 * n_cols, 7.4 * n_rows), dpi=100, squeeze=False)
        pairs = [(axes[2 * (j // n_cols), j % n_cols], axes[2 * (j // n_cols) + 1, j % n_cols]) for j in range(n)]
        for j in range(n, n_rows * n_cols):
            axes[2 * (j // n_cols), j % n_cols].axis("off")
            axes[2 * (j // n_cols) + 1, j % n_cols].axis("off")
    for j, (p, (top, bottom)) in enumerate(zip(panels, pairs)):
        plot_cohorts(top, p.Z, p.labels, p.n_cohorts, point_size=3)
        top.set_title(p.title, fontsize=7)
        if not np.all(np.isfinite(p.Z)):
            bottom.axis("off")
            continue
        colours = cohort_colours(p.n_cohorts)
        bottom.scatter(p.Z[:, 0], p.Z[:, 1], c=colours[p.labels], s=2, alpha=0.12, linewidths=0,
                       rasterized=len(p.Z) > 5000)
        centres = cohort_centres(p.Z, p.labels, p.n_cohorts)
        draw_links(bottom, centres, p.reference, kappa, p.names)
        if show_prototypes and p.placed.size:
            bottom.scatter(p.placed[:, 0], p.placed[:, 1], marker="s", s=40, facecolors="none", edgecolors="grey",
                           zorder=4, label="prototype")
        finish_panel(bottom, p.link_title)
        if j == 0:
            bottom.legend(fontsize=6, loc="lower left")
    fig.suptitle(title, fontsize=10)
    return fig


@dataclass(frozen=True)
class HighlightPanel:
    """One run of :func:`highlight_grid_figure`: its embedding, cohorts and their names, the highlighted cohort
    ``target``, the cohorts ``shown`` beside it, and the panel title."""

    Z: np.ndarray
    labels: np.ndarray
    label_names: Sequence[str]
    target: int
    shown: Sequence[int]
    title: str


def highlight_grid_figure(rows: Sequence[Sequence[HighlightPanel]], title: str) -> plt.Figure:
    """One row of panels per entry of ``rows``; in each, cohort ``target`` and the cohorts ``shown`` keep their
    colours and names, every other sample is grey."""
    fig, cells = panel_grid(rows, 3.3, 3.5)
    grey = np.array([0.82, 0.82, 0.82, 1.0])
    for ax, p in cells:
        n_cohorts = len(p.label_names)
        if not np.all(np.isfinite(p.Z)):
            plot_cohorts(ax, p.Z, p.labels, n_cohorts)
            ax.set_title(p.title, fontsize=7)
            continue
        colours = cohort_colours(n_cohorts)
        keep = np.zeros(n_cohorts, dtype=bool)
        keep[[p.target, *p.shown]] = True
        point_colours = np.where(keep[p.labels][:, None], colours[p.labels], grey)
        order = np.argsort(keep[p.labels], kind="stable")  # highlighted points drawn last
        ax.scatter(p.Z[order, 0], p.Z[order, 1], c=point_colours[order], s=3, linewidths=0,
                   rasterized=len(p.Z) > 5000)
        centres = cohort_centres(p.Z, p.labels, n_cohorts)
        for c in [p.target, *p.shown]:
            ax.annotate(p.label_names[c], centres[c], fontsize=6, ha="center", fontweight=(
                "bold" if c == p.target else "normal"), bbox={"boxstyle": "round,pad=0.15", "fc": "white",
                                                              "alpha": 0.7, "lw": 0})
        finish_panel(ax, p.title)
    fig.suptitle(title, fontsize=10)
    return fig


@dataclass(frozen=True)
class PrototypeLinkPanel:
    """The prototypes Υ (c, 2) with the reference graph, cohort names and a title."""

    prototypes: np.ndarray
    reference: np.ndarray
    names: Sequence[str]
    title: str


def link_panels_figure(panels: Sequence[LinkPanel], kappa: int, title: str, n_cols: int = 4,
                       show_prototypes: bool = False, prototypes: PrototypeLinkPanel | None = None) -> plt.Figure:
    """A compact grid: optionally the prototypes' own κ-NN graph first, then every embedding (faint samples) with
    its embedded cohort centres linked by their κ-NN graph against the reference, the placed prototypes as
    squares (``show_prototypes``) and the highlighted cohort's links in red."""
    n_panels = len(panels) + (1 if prototypes is not None else 0)
    n_cols = grid_columns([n_panels], 3.9, 4.1, max_cols=n_cols)
    n_rows = -(-n_panels // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.9 * n_cols, 4.1 * n_rows), dpi=100, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n_panels:]:
        ax.axis("off")
    if prototypes is not None:
        ax = flat.pop(0)
        P = prototypes.prototypes
        draw_links(ax, P, prototypes.reference, kappa, prototypes.names)
        ax.scatter(P[:, 0], P[:, 1], marker="s", s=70, c=cohort_colours(len(P)), edgecolors="black", zorder=5)
        finish_panel(ax, prototypes.title)
        ax.legend(fontsize=6, loc="lower left")
    for ax, p in zip(flat, panels):
        if not np.all(np.isfinite(p.Z)):
            plot_cohorts(ax, p.Z, p.labels, p.n_cohorts)
            ax.set_title(p.title, fontsize=7)
            continue
        plot_cohorts(ax, p.Z, p.labels, p.n_cohorts, point_size=4)
        for coll in ax.collections:
            coll.set_alpha(0.6)
        centres = cohort_centres(p.Z, p.labels, p.n_cohorts)
        draw_links(ax, centres, p.reference, kappa, p.names)
        if show_prototypes and p.placed.size:
            ax.scatter(p.placed[:, 0], p.placed[:, 1], marker="s", s=45, facecolors="none", edgecolors="dimgrey",
                       linewidths=1.2, zorder=4, label="prototype")
        if p.near:
            for i in p.near:
                ax.plot(centres[[p.target, i], 0], centres[[p.target, i], 1], color="red", linewidth=2.4, alpha=0.7,
                        zorder=2)
            ax.scatter(*centres[p.target], s=120, marker="*", color="red", zorder=6)
        finish_panel(ax, p.title)
    fig.suptitle(title, fontsize=10)
    return fig


@dataclass(frozen=True)
class ImageLinkPanel:
    """One run of :func:`image_links_figure`: its embedding (``None``: the run found none, only the title is
    shown), cohorts, the prototypes it placed (or ``None``), the graph its cohort centres are compared with, and the
    title."""

    Z: np.ndarray | None
    labels: np.ndarray
    n_cohorts: int
    placed: np.ndarray | None
    reference: np.ndarray
    title: str


def image_links_figure(rows: Sequence[tuple[PrototypeLinkPanel, Sequence[ImageLinkPanel]]], kappa: int,
                       title: str) -> plt.Figure:
    """COVA Fig. 3: per dataset, the prototypes' κ-NN graph against the original cohort graph, then each run's
    embedding with its cohort centres' κ-NN graph against the panel's reference."""
    n_cols = 1 + max(len(panels) for _, panels in rows)  # the prototypes' panel and the runs', one row per dataset
    fig, axes = plt.subplots(len(rows), n_cols, figsize=(3.4 * n_cols, 3.5 * len(rows)), dpi=100, squeeze=False)
    for i, (proto, panels) in enumerate(rows):
        for ax in axes[i, len(panels) + 1:]:
            ax.axis("off")
        ax = axes[i, 0]
        draw_links(ax, proto.prototypes, proto.reference, kappa, proto.names)
        ax.set_title(proto.title, fontsize=7)
        ax.legend(fontsize=5, loc="lower right")
        for j, p in enumerate(panels, start=1):
            ax = axes[i, j]
            if p.Z is None:
                ax.set_title(p.title, fontsize=7)
                continue
            plot_cohorts(ax, p.Z, p.labels, p.n_cohorts, p.placed, point_size=2)
            draw_links(ax, cohort_centres(p.Z, p.labels, p.n_cohorts), p.reference, kappa)
            ax.set_title(p.title, fontsize=7)
    fig.suptitle(title, fontsize=8)
    return fig
