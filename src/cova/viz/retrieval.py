"""The NeRV paper's retrieval views of embeddings (Venna et al. 2010, Figs. 2-7): smoothed precision-recall
scatters, trustworthiness / continuity curves over k, and the six measure panels per data set; and its supervised
comparison (Fig. 13): the k-fold 5-NN test error of every method as grouped bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .scatter import panel_grid

__all__ = ["retrieval_figure", "measure_panels_figure", "cv_error_figure"]


def retrieval_figure(table: pd.DataFrame, curves: Sequence[tuple[dict[str, Any], np.ndarray, np.ndarray]],
                     title: str, pr_curves: Sequence[tuple[dict[str, Any], Any]] = (),
                     n_relevant: int | None = None, names: Mapping[str, str] | None = None) -> plt.Figure:
    """Per dataset of ``table`` (rows: ``dataset``, ``method_entry``, ``smoothed_recall_error``,
    ``smoothed_precision_error``): the smoothed precision-recall scatter and the trustworthiness and continuity
    curves ``curves`` = (run, T(k), C(k)) of its runs; with ``pr_curves`` = (run, precision-recall curve) a fourth
    panel of mean precision against mean recall for ``n_relevant`` relevant neighbours (NeRV Fig. 2). ``names``:
    method entry -> the name in labels and legends (the entry when absent). A data set's panels wrap to page
    width (:func:`cova.viz.scatter.panel_grid`)."""
    names = names or {}
    datasets = list(dict.fromkeys(table.dataset))
    kinds = ["scatter", "trustworthiness", "continuity", *(["pr"] if pr_curves else [])]
    fig, cells = panel_grid([[(d, k) for k in kinds] for d in datasets], 5.0, 4.2)
    for ax, (d, kind) in cells:
        if kind == "scatter":
            sub = table[table.dataset == d]
            ax.scatter(sub.smoothed_recall_error, sub.smoothed_precision_error)
            ax.margins(0.12)
            (x0, x1) = ax.get_xlim()
            for _, r in sub.iterrows():
                right = r.smoothed_recall_error > 0.5 * (x0 + x1)  # labels point inwards: none leaves the panel
                ax.annotate(names.get(r.method_entry, r.method_entry),
                            (r.smoothed_recall_error, r.smoothed_precision_error), xytext=(-3 if right else 3, 3),
                            textcoords="offset points", ha="right" if right else "left", fontsize=7)
            ax.set_xlabel("mean smoothed recall error")
            ax.set_ylabel("mean smoothed precision error")
            ax.set_title(f"{d}: smoothed precision-recall", fontsize=9)
        elif kind in ("trustworthiness", "continuity"):
            j = 0 if kind == "trustworthiness" else 1
            for run, t, c in curves:
                if run["dataset"] == d:
                    values = (t, c)[j]
                    ax.plot(np.arange(1, len(values) + 1), values, label=names.get(run["entry"], run["entry"]))
            ax.set_xlabel("k")
            ax.set_title(f"{d}: {kind}", fontsize=9)
            ax.legend(fontsize=7)
        else:
            for run, pr in pr_curves:
                if run["dataset"] == d:
                    ax.plot(pr.recall, pr.precision, label=names.get(run["entry"], run["entry"]))
            ax.set_xlabel("mean recall")
            ax.set_ylabel("mean precision")
            ax.set_title(f"{d}: precision-recall, {n_relevant} relevant, k = 1..{len(pr_curves[0][1].k)} retrieved",
                         fontsize=9)
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return fig


def _styles(groups: list[str]) -> dict[str, dict[str, Any]]:
    cmap = plt.get_cmap("tab20")
    markers = "osD^v<>pPX*hH"
    return {g: {"color": cmap(i % 20), "marker": markers[i % len(markers)]} for i, g in enumerate(groups)}


#: Column titles of :func:`measure_panels_figure`.
PANEL_TITLES = ["Fig. 4: mean smoothed P/R", "Fig. 5: mean P/R (20 relevant)", "Fig. 6: rank-based smoothed P/R",
                "Fig. 7: T/C (k = 20)", "trustworthiness T(k)", "continuity C(k)"]
#: (x column, y column, sign) of the scatter panels 0, 2 and 3 (panel 1 shows curves).
PANEL_PAIRS = [("smoothed_recall_error", "smoothed_precision_error", -1.0), None,
               ("rank_recall", "rank_precision", 1.0), ("continuity_20", "trustworthiness_20", 1.0)]
AXIS_LABELS = {"smoothed_recall_error": "−1 × mean smoothed recall (error)",
               "smoothed_precision_error": "−1 × mean smoothed precision (error)",
               "rank_recall": "1 − rank-based smoothed recall error",
               "rank_precision": "1 − rank-based smoothed precision error",
               "continuity_20": "continuity (k = 20)", "trustworthiness_20": "trustworthiness (k = 20)"}


def measure_panels_figure(table: pd.DataFrame, curves: dict[int, dict[str, Any]], names: dict[str, str],
                          curve_methods: Sequence[str], scale: int, title: str) -> plt.Figure:
    """One row of six panels per data set (NeRV paper Figs. 4-7 and the T(k), C(k) curves).

    ``table``: one row per run with ``dataset``, ``group`` (method entry), ``method``, ``selected``,
    ``n_samples``, the grid column ``lam`` where present and the measures of :data:`PANEL_PAIRS`; ``curves``:
    per table index the ``pr_curve`` (with ``precision``, ``recall``), ``t_curve`` and ``c_curve``; ``names``:
    legend name per group. Runs of ``curve_methods`` are drawn as λ-curves, every group's selected run as a large
    marker; ``scale`` marks k on the T(k), C(k) panels. Each data set's six panels take two rows of three (page
    width), the legend below them; the figure is laid out by matplotlib's constrained layout (save it without
    ``tight``)."""
    datasets = list(dict.fromkeys(table.dataset))
    groups = list(dict.fromkeys(table.group))
    style = _styles(groups)
    fig = plt.figure(figsize=(13.5, 7.4 * len(datasets) + 0.4 * -(-len(groups) // 4)), dpi=80, layout="constrained")
    grid = fig.subplots(2 * len(datasets), 3, squeeze=False)
    axes = np.array([grid[2 * r:2 * r + 2].ravel() for r in range(len(datasets))])
    for r, d in enumerate(datasets):
        sub = table[table.dataset == d]
        for c, pair in enumerate(PANEL_PAIRS):
            if pair is None:
                continue
            xk, yk, sign = pair
            ax = axes[r, c]
            for g, gg in sub.groupby("group", sort=False):
                gg = gg[gg[xk].notna()]
                if gg.empty:
                    continue
                st = style[g]
                if gg.method.iloc[0] in curve_methods and "lam" in gg and len(gg) > 1:
                    gg = gg.sort_values("lam")
                    ax.plot(sign * gg[xk], sign * gg[yk], "-", color=st["color"], lw=1.2, alpha=0.8)
                    ax.scatter(sign * gg[xk], sign * gg[yk], s=10, color=st["color"], marker=st["marker"])
                    for e in (gg.iloc[0], gg.iloc[-1]):
                        ax.annotate(f"λ = {e['lam']:g}", (sign * e[xk], sign * e[yk]), fontsize=6,
                                    color=st["color"])
                sel = gg[gg.selected]
                ax.scatter(sign * sel[xk], sign * sel[yk], s=40, color=st["color"], marker=st["marker"],
                           edgecolors="k", linewidths=0.5, zorder=3)
            ax.set_xlabel(AXIS_LABELS[xk], fontsize=8)
            ax.set_ylabel(AXIS_LABELS[yk], fontsize=8)
        selected = sub[sub.selected]
        for i, row in selected.iterrows():
            if i not in curves:
                continue
            st = style[row.group]
            cv = curves[i]
            axes[r, 1].plot(cv["pr_curve"].recall, cv["pr_curve"].precision, color=st["color"], lw=1)
            ks = np.arange(1, len(cv["t_curve"]) + 1)
            axes[r, 4].plot(ks, cv["t_curve"], color=st["color"], lw=1)
            axes[r, 5].plot(ks, cv["c_curve"], color=st["color"], lw=1)
        axes[r, 1].set_xlabel("mean recall", fontsize=8)
        axes[r, 1].set_ylabel("mean precision", fontsize=8)
        for c in (4, 5):
            axes[r, c].set_xlabel("k", fontsize=8)
            axes[r, c].axvline(scale, color="0.7", lw=0.6, ls=":")
        n = int(sub.n_samples.iloc[0])
        for c in range(6):
            axes[r, c].set_title(f"{d} (n = {n}): {PANEL_TITLES[c]}", fontsize=8)
            axes[r, c].tick_params(labelsize=7)
            axes[r, c].grid(alpha=0.3)
    handles = [plt.Line2D([], [], color=style[g]["color"], marker=style[g]["marker"], ls="-", label=names[g])
               for g in groups]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(groups), 4), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    return fig


def cv_error_figure(table: pd.DataFrame, n_folds_used: int, n_folds: int, title: str,
                    names: Mapping[str, str] | None = None) -> plt.Figure:
    """NeRV Fig. 13: per data set one bar per method entry, the mean held-out 5-NN error with its standard deviation
    as error bar (``table``: columns ``dataset``, ``method_entry``, ``mean_error``, ``std_error``, and ``versus`` /
    ``p_value`` on the best entry's row, whose paired t-test p-value is written under the data set); ``names``:
    method entry -> legend name (the entry when absent)."""
    names = names or {}
    datasets = list(dict.fromkeys(table.dataset))
    entries = list(dict.fromkeys(table.method_entry))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 + 0.45 * len(datasets) * len(entries)), 4.6), dpi=100)
    width = 0.8 / len(entries)
    for i, entry in enumerate(entries):
        t = table.set_index(["dataset", "method_entry"])
        mean = [t.loc[(d, entry), "mean_error"] if (d, entry) in t.index else np.nan for d in datasets]
        std = [t.loc[(d, entry), "std_error"] if (d, entry) in t.index else np.nan for d in datasets]
        ax.bar(np.arange(len(datasets)) + (i - (len(entries) - 1) / 2) * width, mean, width, yerr=std, capsize=2,
               color=f"C{i % 10}", label=names.get(entry, entry))
    for j, d in enumerate(datasets):
        best = table[(table.dataset == d) & (table.versus != "")]
        if len(best) and np.isfinite(best.p_value.iloc[0]):
            ax.annotate(f"best vs 2nd: p = {best.p_value.iloc[0]:.2g}", (j, 0), xytext=(0, -28),
                        textcoords="offset points", ha="center", fontsize=7)
    ax.set_xticks(np.arange(len(datasets)), datasets)
    ax.set_ylabel(f"5-NN test error, mean ± sd over {n_folds_used} of {n_folds} folds")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=min(4, len(entries)))
    ax.set_title(title, fontsize=9)
    return fig
