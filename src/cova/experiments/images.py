"""Renderers of COVA's image-cohort experiments (Sec. 4.2, H.2: Figs. 3-8, H.5-H.10; issue #6).

The paper ran them on Places2 CNN features, which are not public. The configured runs use the user's Places2
features when supplied (dataset ``places2``) and otherwise a labelled stand-in (``fallback``), plus COIL-20 and an
MNIST subset; every output names the data it ran on (from the dataset files' metadata), so no stand-in result can
pass for a Places2 result.

- ``img_links`` (Fig. 3): κ-NN cohort graphs (κ = 2). Per dataset: the prototypes Υ against the "original" cohort
  graph (Eq. 6 similarity S_D = (YᵀWY) ⊘ (nnᵀ) of the inputs' W, neighbours = largest similarities), then each run's
  embedded cohort centres against Υ's graph (COVA models, which place cohorts at Υ) or against the original graph
  (methods without prototypes, e.g. t-SNE); TP links solid, FP dotted, FN dashed. The table gives every run's
  link accuracy against both graphs (the "X vs Y" accuracies of Fig. 3 = S_c^(r) with Y as the desired graph).
- ``img_sweep`` (Figs. 4-7, H.5, H.10): scores against ``x``, where ``x`` is a method grid parameter
  (``alpha``), ``n_cohorts`` (the inputs' class count), or a dotted path into the inputs block
  (``inputs.prototypes.random_fraction``, ``inputs.cohorts.labelled_per_class``, ``inputs.split.train_fraction``);
  ``x_default`` fills inputs blocks without the key (e.g. 0 random prototypes); a method parameter outside the grid
  is read from the run's fitted parameters. Lines are grouped by the registered method (so ``e1`` at α = 0.6 and a
  grid ``e1_alpha`` share one line); runs without any x (e.g. t-SNE in an α sweep) are drawn as horizontal
  dotted baselines. ``panels: method`` draws one panel per method with the scores as lines (Figs. 4, 6);
  ``panels: score`` one panel per score with the methods as lines (Figs. 5, 7). Scores may be any key of ``scores.json``, including ``*_test`` (held-out rows of a split)
  and ``s_c_r_gold`` / ``s_s_gold`` (Fig. 5's gold-standard comparisons).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..cohorts.proximity import cohort_proximity
from ..datasets.base import Dataset
from ..inputs import Inputs
from ..metrics.cohort import cohort_graph, link_comparison
from ..viz.links import cohort_centres, draw_links
from ..viz.scatter import SCORE_LABELS, plot_cohorts
from ..viz.tables import write_csv_atomic, write_html_atomic

__all__ = ["similarity_graph", "original_graph", "link_accuracy", "data_note", "img_links", "img_sweep"]

LABELS = {**SCORE_LABELS, "s_c_r_gold": "S_c^(r) vs gold", "s_s_gold": "S_s (true labels)",
          "s_c_r_orig": "S_c^(r) vs original", "s_c_r_orig_test": "S_c^(r) vs original (test)",
          **{f"{k}_test": f"{v} (test)" for k, v in SCORE_LABELS.items()}}


def similarity_graph(S: np.ndarray, kappa: int = 2) -> np.ndarray:
    """κ-NN graph of a cohort **similarity**: j is a neighbour of i iff s_ij is among the κ largest off-diagonal
    entries of row i (ties to the lower index); symmetric (A OR Aᵀ), zero diagonal (spec §5, S_c^(r))."""
    S = np.array(S, dtype=np.float64)
    c = S.shape[0]
    np.fill_diagonal(S, -np.inf)
    nbrs = np.argsort(-S, axis=1, kind="stable")[:, :kappa]
    A = np.zeros((c, c), dtype=bool)
    A[np.arange(c)[:, None], nbrs] = True
    np.fill_diagonal(A, False)
    return A | A.T


def original_graph(inputs: Inputs, kappa: int = 2) -> np.ndarray:
    """The Places2 "original" cohort graph: κ-NN graph of the Eq. 6 similarity of the inputs' W (training rows)."""
    fit = inputs.training()
    S, _ = cohort_proximity("graph", W=fit.W, labels=fit.labels, n_cohorts=inputs.n_cohorts)
    return similarity_graph(S, kappa)


def link_accuracy(reference: np.ndarray, shown: np.ndarray) -> float:
    """Fraction of the reference graph's links that the shown graph has (S_c^(r) of Eq. G.1)."""
    links = link_comparison(reference, shown)
    n = len(links["tp"]) + len(links["fn"])
    return len(links["tp"]) / n if n else float("nan")


def data_note(spec: dict[str, Any]) -> str:
    """Which data every dataset of the experiment is (from the processed files' metadata), and any fallback."""
    parts = []
    for run in {r["dataset"]: r for r in spec["runs"]}.values():
        meta = Dataset.load(run["data"]).meta
        what = meta.get("description") or meta.get("source", "")
        if meta.get("stand_in"):
            what = f"SYNTHETIC STAND-IN, NOT Places2 ({what})"
        size = meta.get("n_samples")
        parts.append(f"{run['dataset']}: {what}" + (f", {size} samples" if size else ""))
    note = "Data - " + "; ".join(parts) + "."
    for name, fb in spec.get("fallbacks", {}).items():
        note += (f" The configured dataset {name!r} (user-supplied Places2 features) was not found, so these runs "
                 f"use {fb!r} instead.")
    return note


def _scores(run: dict[str, Any]) -> dict[str, Any]:
    return json.loads(Path(run["scores"]).read_text())


def _save(fig: plt.Figure, path: str) -> None:
    from ..io import atomic_path

    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def _write(spec: dict[str, Any], table: pd.DataFrame, out: dict[str, str], note: str) -> None:
    write_csv_atomic(table, out["csv"])
    text = " ".join(t for t in (spec.get("caption", ""), note, spec.get("notes", "")) if t)
    write_html_atomic(table, out["html"], title=spec.get("title", spec["name"]), note=text)


def img_links(spec: dict[str, Any], out: dict[str, str]) -> None:
    kappa = int(spec.get("kappa", 2))
    datasets = list(dict.fromkeys(r["dataset"] for r in spec["runs"]))
    n_cols = 1 + max(sum(r["dataset"] == d for r in spec["runs"]) for d in datasets)
    fig, axes = plt.subplots(len(datasets), n_cols, figsize=(3.4 * n_cols, 3.5 * len(datasets)), dpi=100,
                             squeeze=False)
    rows = []
    for i, d in enumerate(datasets):
        runs = [r for r in spec["runs"] if r["dataset"] == d]
        for ax in axes[i, len(runs) + 1:]:
            ax.axis("off")
        inp = Inputs.load(runs[0]["data"], runs[0]["inputs_file"])
        g_orig = original_graph(inp, kappa)
        g_proto = cohort_graph(inp.prototypes, kappa)
        names = [str(j + 1) for j in range(inp.n_cohorts)]
        acc = link_accuracy(g_orig, g_proto)
        rows.append({"dataset": d, "inputs": runs[0]["inputs"], "shown": "prototypes", "method": "",
                     "acc_vs_original": acc, "acc_vs_prototypes": 1.0})
        ax = axes[i, 0]
        draw_links(ax, inp.prototypes, g_orig, kappa, names)
        ax.set_title(f"{d}: prototypes vs original\n{100 * acc:.1f}% of the original links", fontsize=7)
        ax.legend(fontsize=5, loc="lower right")
        for j, run in enumerate(runs, start=1):
            if run["inputs"] != runs[0]["inputs"]:
                raise ValueError(f"img_links: runs of dataset {d} must share one inputs block")
            with np.load(run["embedding"], allow_pickle=False) as f:
                Z, placed = f["Z"], f["placed_prototypes"]
            ax = axes[i, j]
            if not np.all(np.isfinite(Z)):
                ax.set_title(f"{d}: {run['entry']}\n(no embedding)", fontsize=7)
                continue
            centres = cohort_centres(Z, inp.labels, inp.n_cohorts)
            g_shown = cohort_graph(centres, kappa)
            vs_orig, vs_proto = link_accuracy(g_orig, g_shown), link_accuracy(g_proto, g_shown)
            cova = placed.size > 0
            rows.append({"dataset": d, "inputs": run["inputs"], "shown": run["entry"], "method": run["method"],
                         "acc_vs_original": vs_orig, "acc_vs_prototypes": vs_proto,
                         **{k: _scores(run).get(k) for k in ("s_n", "s_s", "s_c_r")}})
            plot_cohorts(ax, Z, inp.labels, inp.n_cohorts, placed if cova else None, point_size=2)
            draw_links(ax, centres, g_proto if cova else g_orig, kappa)
            ref = "prototypes" if cova else "original"
            ax.set_title(f"{d}: {run['entry']} vs {ref}\n{100 * (vs_proto if cova else vs_orig):.1f}% of the "
                         f"{ref} links (vs {'original' if cova else 'prototypes'}: "
                         f"{100 * (vs_orig if cova else vs_proto):.1f}%)", fontsize=7)
    note = data_note(spec)
    fig.suptitle(spec.get("title", spec["name"]) + "\n" + note, fontsize=8, wrap=True)
    _save(fig, out["png"])
    _write(spec, pd.DataFrame(rows), out, note + f" κ = {kappa}; accuracies are fractions of the reference graph's "
           "links kept (TP / (TP + FN)); the 'original' graph is the κ-NN graph of the Eq. 6 cohort similarity.")


def _x_value(spec: dict[str, Any], run: dict[str, Any], cache: dict[str, dict[str, Any]]) -> Any:
    x = spec["x"]
    if x in run.get("grid", {}):
        return run["grid"][x]
    if not x.startswith("inputs.") and x != "n_cohorts":
        with np.load(run["embedding"], allow_pickle=False) as f:
            params = json.loads(str(f["params"])) if "params" in f else {}
        return params.get(x)   # None: a baseline without this parameter
    if run["inputs_file"] not in cache:
        with np.load(run["inputs_file"], allow_pickle=False) as f:
            info = json.loads(str(f["spec"]))
            n = len(f["label_names"]) if "label_names" in f else Dataset.load(run["data"]).n_cohorts
        cache[run["inputs_file"]] = {"spec": info, "n_cohorts": n}
    if x == "n_cohorts":
        return cache[run["inputs_file"]]["n_cohorts"]
    if x.startswith("inputs."):
        value: Any = cache[run["inputs_file"]]["spec"]
        for key in x.split(".")[1:]:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            return value
        if "x_default" in spec:
            return spec["x_default"]
    raise ValueError(f"img_sweep: run {run['dataset']}/{run['inputs']}/{run['entry']} has no value of x = {x!r} "
                     f"(a method grid parameter, n_cohorts or inputs.<path>; x_default fills missing inputs keys)")


def img_sweep(spec: dict[str, Any], out: dict[str, str]) -> None:
    if "x" not in spec:
        raise ValueError(f"experiment {spec['name']}: renderer img_sweep needs x (the swept parameter)")
    x = spec["x"]
    scores = spec.get("scores") or ["s_n", "s_c_r", "s_s"]
    cache: dict[str, dict[str, Any]] = {}
    rows = []
    for run in spec["runs"]:
        rec = _scores(run)
        rows.append({"dataset": run["dataset"], "inputs": run["inputs"], "method": run["method"],
                     "run": run["entry"], x: _x_value(spec, run, cache),
                     "status": rec.get("status", "ok"), **{s: rec.get(s, np.nan) for s in scores},
                     **{k: rec[k] for k in ("n_train", "n_test") if k in rec}})
    table = pd.DataFrame(rows).sort_values(["dataset", "method", x], kind="stable", ignore_index=True)
    note = data_note(spec)
    _write(spec, table, out, note)
    base = table[table[x].isna()]
    table = table[table[x].notna()]
    by_method = spec.get("panels", "method") == "method"
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if by_method:
        keys = list(dict.fromkeys(zip(table.dataset, table.method)))
    else:
        keys = [(d, s) for d in dict.fromkeys(table.dataset) for s in scores]
    n_cols = min(4, len(keys))
    n_rows = -(-len(keys) // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.3 * n_cols, 3.4 * n_rows + 0.6), dpi=100, squeeze=False)
    for ax in axes.ravel()[len(keys):]:
        ax.axis("off")
    for ax, (d, k) in zip(axes.ravel(), keys):
        b = base[base.dataset == d]
        if by_method:
            g = table[(table.dataset == d) & (table.method == k)]
            for n, s in enumerate(scores):
                colour = colours[n % len(colours)]
                ax.plot(g[x], 100 * g[s].astype(float), marker="o", color=colour, label=LABELS.get(s, s))
                for _, r in b.iterrows():
                    ax.axhline(100 * float(r[s]), color=colour, linestyle=":", linewidth=1,
                               label=f"{r['run']} {LABELS.get(s, s)}")
            ax.set_title(f"{d}: {k}", fontsize=8)
        else:
            sub = table[table.dataset == d]
            for m, g in sub.groupby("method", sort=False):
                ax.plot(g[x], 100 * g[k].astype(float), marker="o", label=m)
            for _, r in b.iterrows():
                ax.axhline(100 * float(r[k]), color="grey", linestyle=":", linewidth=1, label=r["run"])
            ax.set_title(f"{d}: {LABELS.get(k, k)}", fontsize=8)
        ax.set_xscale(spec.get("xscale", "linear"))
        ax.set_xlabel(x.split(".")[-1])
        ax.set_ylabel("score (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(spec.get("title", spec["name"]) + "\n" + note, fontsize=8, wrap=True)
    _save(fig, out["png"])
