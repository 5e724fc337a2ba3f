"""Cohort-graph renderers: which cohorts sit next to which, in the original space and in an embedding.

- ``link_graphs`` (COVA Table 2, reusable for Fig. 9 / H.15): row 1 shows each run's embedding coloured by cohort;
  row 2 draws the κ-NN graph of the embedded cohort centres against a **reference** cohort graph, true-positive
  links solid, false-positive dotted, false-negative dashed (the paper's convention). The table counts the links
  (TP / FP / FN) per run. Experiment-block options:

  ```yaml
  renderer: link_graphs
  reference: raw_centroid_cosine   # or prototypes, centroid_cosine (see REFERENCE_GRAPHS)
  kappa: 2                          # effective neighbours per cohort (both graphs)
  show_prototypes: false            # row 2: also draw the prototypes the run placed cohorts at (squares)
  cohort_names: auto                # auto | numbers | names (annotations in row 2)
  scores: [s_n, s_s, s_c_r]         # scores in the panel titles and the table
  ```

  With ``reference: prototypes`` the link recall TP/(TP+FN) is S_c^(r) of Eq. G.1 (κ-NN graph of Υ vs the
  embedded centres).

- ``highlight_grid`` (COVA Table 1): the ``score_table`` of the runs (paper numbers in ``paper_*`` columns when
  ``reference`` names a key of :mod:`cova.experiments.reference`), drawn as a grid with one row per method and one
  column per run of that method; in every panel one cohort (``highlight``) and its ``highlight_neighbors`` nearest
  cohorts **in that embedding** (distance between embedded cohort centres) keep their colours, the others are grey.
  The table names those neighbours, the ones nearest in the original space (distance between cohort centres of the
  inputs' X, i.e. the space S_n is measured in) and how many of them agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..cohorts.proximity import cluster_graph
from ..datasets.base import Dataset
from ..inputs import Inputs
from ..metrics.cohort import cohort_graph, link_comparison
from ..viz.links import cohort_centres, draw_links
from ..viz.scatter import cohort_colours, format_scores, panel_grid, plot_cohorts
from ..viz.tables import write_csv_atomic, write_html_atomic

__all__ = ["REFERENCE_GRAPHS", "reference_graph", "link_counts", "link_graphs", "nearest_cohorts",
           "highlight_grid"]

#: Reference cohort graphs of ``link_graphs``:
#: ``raw_centroid_cosine``: κ most cosine-similar cohort centres in the dataset's raw X (Cora's word space, H.3;
#: Table 2's "original space"); ``centroid_cosine``: the same in the inputs' (transformed) X; ``prototypes``: the
#: κ-NN graph of the prototypes Υ (Fig. 9; the graph S_c^(r) compares with).
REFERENCE_GRAPHS: tuple[str, ...] = ("raw_centroid_cosine", "centroid_cosine", "prototypes")


def reference_graph(kind: str, inputs: Inputs, raw_X: np.ndarray | None, kappa: int = 2) -> np.ndarray:
    """The boolean (c, c) symmetric reference cohort graph of ``kind`` (see :data:`REFERENCE_GRAPHS`)."""
    c = inputs.n_cohorts
    if kind == "prototypes":
        return cohort_graph(inputs.prototypes, kappa)
    if kind == "raw_centroid_cosine":
        if raw_X is None:
            raise ValueError("reference 'raw_centroid_cosine' needs the dataset's raw X")
        return cluster_graph(raw_X, inputs.labels, c, kappa) > 0
    if kind == "centroid_cosine":
        return cluster_graph(inputs.X, inputs.labels, c, kappa) > 0
    raise ValueError(f"reference must be one of {list(REFERENCE_GRAPHS)}, got {kind!r}")


def link_counts(links: dict[str, list[tuple[int, int]]]) -> dict[str, Any]:
    """TP / FP / FN counts of a :func:`~cova.metrics.cohort.link_comparison`, the reference and shown link totals,
    link recall TP/(TP+FN) and precision TP/(TP+FP) (NaN when undefined), and each link list as text (cohorts
    numbered from 1, ``"1-2 3-7"``)."""
    tp, fp, fn = (len(links[k]) for k in ("tp", "fp", "fn"))
    row: dict[str, Any] = {"tp": tp, "fp": fp, "fn": fn, "n_reference_links": tp + fn, "n_shown_links": tp + fp,
                           "link_recall": tp / (tp + fn) if tp + fn else np.nan,
                           "link_precision": tp / (tp + fp) if tp + fp else np.nan}
    for k in ("tp", "fp", "fn"):
        row[f"{k}_links"] = " ".join(f"{i + 1}-{j + 1}" for i, j in links[k])
    return row


class _Loader:
    """Inputs and raw datasets of the runs, each loaded once."""

    def __init__(self) -> None:
        self.inputs: dict[tuple[str, str], Inputs] = {}
        self.raw: dict[str, np.ndarray] = {}

    def __call__(self, run: dict[str, Any]) -> tuple[Inputs, np.ndarray, np.ndarray, np.ndarray]:
        """(inputs, raw X, Z, placed prototypes) of one run."""
        key = (run["data"], run["inputs_file"])
        if key not in self.inputs:
            self.inputs[key] = Inputs.load(*key)
        if run["data"] not in self.raw:
            self.raw[run["data"]] = Dataset.load(run["data"]).X
        with np.load(run["embedding"], allow_pickle=False) as f:
            Z, placed = f["Z"], f["placed_prototypes"]
        return self.inputs[key], self.raw[run["data"]], Z, placed


def _scores(run: dict[str, Any]) -> dict[str, Any]:
    s = json.loads(Path(run["scores"]).read_text())
    return {"status": s.get("status", "ok"), **{k: s.get(k, np.nan) for k in
                                               ("s_n", "s_s", "s_c", "s_c_r", "trustworthiness", "continuity")}}


def _save(fig: plt.Figure, path: str) -> None:
    from .renderers import _save as save

    save(fig, path)


def _note(spec: dict[str, Any], extra: str = "") -> str:
    note = spec.get("caption", "") + extra
    if spec.get("notes"):
        note += f" Deviations and findings: {spec['notes']}"
    return note


def link_graphs(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Embeddings (row 1) and their cohort link graphs against the reference graph (row 2); see the module
    docstring for the options."""
    kind = spec.get("reference", "raw_centroid_cosine")
    if kind not in REFERENCE_GRAPHS:
        raise ValueError(f"link_graphs: reference must be one of {list(REFERENCE_GRAPHS)}, got {kind!r}")
    kappa = int(spec.get("kappa", 2))
    shown_scores = list(spec.get("scores") or ["s_n", "s_s", "s_c_r"])
    load = _Loader()
    rows, panels = [], []
    for run in spec["runs"]:
        inp, raw, Z, placed = load(run)
        row = {"dataset": run["dataset"], "inputs": run["inputs"], "method_entry": run["entry"],
               "method": run["method"], **run.get("grid", {}), "reference": kind, "kappa": kappa,
               "n_cohorts": inp.n_cohorts}
        ref = reference_graph(kind, inp, raw, kappa)
        links = None
        if np.all(np.isfinite(Z)):
            centres = cohort_centres(Z, inp.labels, inp.n_cohorts)
            links = link_comparison(ref, cohort_graph(centres, kappa))
            row.update(link_counts(links))
        else:
            row.update({k: np.nan for k in ("tp", "fp", "fn", "n_reference_links", "n_shown_links", "link_recall",
                                            "link_precision")})
        scores = _scores(run)
        row.update({k: scores[k] for k in ["status", *shown_scores]})
        rows.append(row)
        panels.append((run, inp, Z, placed, ref, row))
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out["csv"])
    write_html_atomic(table, out["html"], title=spec.get("title", spec["name"]), note=_note(
        spec, f" Cohort graphs: {kappa} effective neighbours per cohort; reference '{kind}'. tp/fp/fn: links in both "
        "graphs / only in the embedding / only in the reference (cohorts numbered from 1); link_recall = "
        "tp/(tp+fn), link_precision = tp/(tp+fp). Scores in percent."))

    names_mode = spec.get("cohort_names", "auto")
    n = len(panels)
    fig, axes = plt.subplots(2, n, figsize=(3.6 * n, 7.4), dpi=100, squeeze=False)
    for j, (run, inp, Z, placed, ref, row) in enumerate(panels):
        top, bottom = axes[0, j], axes[1, j]
        plot_cohorts(top, Z, inp.labels, inp.n_cohorts, point_size=3)
        top.set_title(f"{run['dataset']}: {run['entry']}\n{format_scores(row, tuple(shown_scores))}", fontsize=7)
        if not np.all(np.isfinite(Z)):
            bottom.axis("off")
            continue
        colours = cohort_colours(inp.n_cohorts)
        bottom.scatter(Z[:, 0], Z[:, 1], c=colours[inp.labels], s=2, alpha=0.12, linewidths=0,
                       rasterized=len(Z) > 5000)
        use_names = names_mode == "names" or (names_mode == "auto" and inp.n_cohorts <= 10)
        names = inp.label_names if use_names else [str(k + 1) for k in range(inp.n_cohorts)]
        centres = cohort_centres(Z, inp.labels, inp.n_cohorts)
        draw_links(bottom, centres, ref, kappa, names)
        if spec.get("show_prototypes") and placed.size:
            bottom.scatter(placed[:, 0], placed[:, 1], marker="s", s=40, facecolors="none", edgecolors="grey",
                           zorder=4, label="prototype")
        bottom.set_xticks([])
        bottom.set_yticks([])
        bottom.set_aspect("equal", adjustable="datalim")
        bottom.set_title(f"{kappa}-NN cohort graph vs {kind}\nTP {row['tp']}  FP {row['fp']}  FN {row['fn']}",
                         fontsize=7)
        if j == 0:
            bottom.legend(fontsize=6, loc="lower left")
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    _save(fig, out["png"])


def nearest_cohorts(points: np.ndarray, target: int, k: int) -> list[int]:
    """Indices of the ``k`` cohorts whose ``points`` (cohort centres, one row per cohort) are nearest to cohort
    ``target``'s by Euclidean distance, nearest first (ties to the lower index); NaN rows (empty cohorts) are
    skipped."""
    d = np.linalg.norm(points - points[target], axis=1)
    d[target] = np.inf
    d[~np.isfinite(d)] = np.inf
    order = np.argsort(d, kind="stable")
    return [int(i) for i in order[:k] if np.isfinite(d[i])]


def highlight_grid(spec: dict[str, Any], out: dict[str, str]) -> None:
    """``score_table`` with a method × run grid and one cohort's nearest cohorts highlighted (module docstring).

    Options: ``highlight`` (a cohort name, required), ``highlight_neighbors`` (3), ``scores`` ([s_s, s_n]),
    ``reference`` (key of the paper's numbers), ``notes``."""
    from .renderers import _records, _with_reference, _write_tables

    scores = list(spec.get("scores") or ["s_s", "s_n"])
    table = _with_reference(_records(spec), spec.get("reference"), scores)
    target_name = spec["highlight"]
    k = int(spec.get("highlight_neighbors", 3))
    load = _Loader()
    panels, near_z, near_x, overlap = [], [], [], []
    for run in spec["runs"]:
        inp, _, Z, _ = load(run)
        if target_name not in inp.label_names:
            raise ValueError(f"highlight: no cohort named {target_name!r}; cohorts are {inp.label_names}")
        t = inp.label_names.index(target_name)
        orig = nearest_cohorts(cohort_centres(inp.X, inp.labels, inp.n_cohorts), t, k)
        shown = (nearest_cohorts(cohort_centres(Z, inp.labels, inp.n_cohorts), t, k)
                 if np.all(np.isfinite(Z)) else [])
        near_x.append(", ".join(inp.label_names[i] for i in orig))
        near_z.append(", ".join(inp.label_names[i] for i in shown))
        overlap.append(len(set(orig) & set(shown)) if shown else np.nan)
        panels.append((run, inp, Z, t, shown))
    table[f"nearest_{k}_in_embedding"] = near_z
    table[f"nearest_{k}_in_original"] = near_x
    table["n_agree"] = overlap
    _write_tables({**spec, "caption": spec.get("caption", "") + (
        f" Highlighted: '{target_name}' and its {k} nearest cohorts by distance between cohort centres, in each "
        "embedding (nearest_*_in_embedding, coloured in the figure) and in the original space the scores use "
        "(nearest_*_in_original); n_agree counts the cohorts in both.")}, table, out)

    methods = list(dict.fromkeys(r["method"] for r in spec["runs"]))
    fig, cells = panel_grid([[p for p in panels if p[0]["method"] == m] for m in methods], 3.3, 3.5)
    grey = np.array([0.82, 0.82, 0.82, 1.0])
    for ax, (run, inp, Z, t, shown) in cells:
        rec = table[(table.dataset == run["dataset"]) & (table.method_entry == run["entry"])].iloc[0]
        title = f"{run['entry']}\n{format_scores(rec.to_dict(), tuple(scores))}"
        if not np.all(np.isfinite(Z)):
            plot_cohorts(ax, Z, inp.labels, inp.n_cohorts)
            ax.set_title(title, fontsize=7)
            continue
        colours = cohort_colours(inp.n_cohorts)
        keep = np.zeros(inp.n_cohorts, dtype=bool)
        keep[[t, *shown]] = True
        point_colours = np.where(keep[inp.labels][:, None], colours[inp.labels], grey)
        order = np.argsort(keep[inp.labels], kind="stable")  # highlighted points drawn last
        ax.scatter(Z[order, 0], Z[order, 1], c=point_colours[order], s=3, linewidths=0,
                   rasterized=len(Z) > 5000)
        centres = cohort_centres(Z, inp.labels, inp.n_cohorts)
        for c in [t, *shown]:
            ax.annotate(inp.label_names[c], centres[c], fontsize=6, ha="center", fontweight=(
                "bold" if c == t else "normal"), bbox={"boxstyle": "round,pad=0.15", "fc": "white", "alpha": 0.7,
                                                       "lw": 0})
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_title(title, fontsize=7)
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    _save(fig, out["png"])
