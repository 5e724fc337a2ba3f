"""Renderers of COVA's Cora experiments (Sec. 4.3, H.3): cohort link panels and an α sweep beside the paper's
printed endpoints.

- ``link_panels`` (Figs. 9, H.12, H.13, H.15, H.16): a compact grid of embeddings. Every panel shows the samples
  coloured by cohort, the embedded cohort centres (○) linked by their κ-NN graph compared with a **reference**
  cohort graph (true-positive links solid, false-positive dotted, false-negative dashed: the paper's "mismatches"),
  and the prototypes the run placed cohorts at (□, ``show_prototypes``). Options:

  ```yaml
  renderer: link_panels
  reference: prototypes        # or raw_centroid_cosine / centroid_cosine (cova.experiments.links.REFERENCE_GRAPHS)
  kappa: 2                     # effective neighbours per cohort in both graphs (the paper: 2)
  prototype_panel: true        # first panel: the prototypes Υ and their κ-NN graph vs the reference (Fig. 9(a))
  show_prototypes: true        # □ at the prototypes each run placed cohorts at
  highlight: Genetic_Algorithms  # optional: this cohort's nearest cohorts in each embedding drawn in red
  highlight_neighbors: 3
  n_cols: 4
  scores: [s_n, s_c, s_s, s_c_r]
  ```

  The table lists the scores, the link counts (TP / FP / FN, the link lists, recall = S_c^(r) when the reference is
  ``prototypes``) and, with ``highlight``, the highlighted cohort's nearest cohorts in each embedding and among the
  prototypes.
- ``reference_sweep`` (Fig. H.14): the ``sweep`` renderer's table and curves, plus the paper's printed numbers at
  the swept values it reports (``reference`` = a key of :mod:`cova.experiments.reference` whose rows are keyed
  (dataset, method, x value)) as hollow markers and ``paper_*`` columns, and a column naming every score more than
  10 points from the paper's.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..metrics.cohort import cohort_graph, link_comparison
from ..viz.links import cohort_centres, draw_links
from ..viz.scatter import cohort_colours, format_scores, plot_cohorts
from ..viz.tables import write_csv_atomic, write_html_atomic
from .links import REFERENCE_GRAPHS, _Loader, link_counts, nearest_cohorts, reference_graph
from .reference import REFERENCE

__all__ = ["link_panels", "reference_sweep", "prototype_links"]

_LINK_KEYS = ("tp", "fp", "fn", "n_reference_links", "n_shown_links", "link_recall", "link_precision")


def prototype_links(prototypes: np.ndarray, reference: np.ndarray, kappa: int = 2) -> dict[str, Any]:
    """Link counts (:func:`~cova.experiments.links.link_counts`) of the prototypes' own κ-NN graph against
    ``reference`` (e.g. how well t-SNE prototypes keep the cluster graph of the original space, Fig. H.15(a))."""
    return link_counts(link_comparison(reference, cohort_graph(prototypes, kappa)))


def _names(inp, mode: str) -> list[str]:
    if mode == "names" or (mode == "auto" and inp.n_cohorts <= 10):
        return [n.replace("_", " ") for n in inp.label_names]
    return [str(k + 1) for k in range(inp.n_cohorts)]


def _finish(ax, title: str) -> None:
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title, fontsize=7)


def link_panels(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Embeddings with their cohort link graphs against a reference graph (module docstring)."""
    from .renderers import _records, _save

    kind = spec.get("reference", "prototypes")
    if kind not in REFERENCE_GRAPHS:
        raise ValueError(f"link_panels: reference must be one of {list(REFERENCE_GRAPHS)}, got {kind!r}")
    kappa = int(spec.get("kappa", 2))
    shown = list(spec.get("scores") or ["s_n", "s_c", "s_s", "s_c_r"])
    target_name = spec.get("highlight")
    n_high = int(spec.get("highlight_neighbors", 3))
    names_mode = spec.get("cohort_names", "auto")
    table = _records(spec)
    load = _Loader()
    panels, extra = [], []
    for run in spec["runs"]:
        inp, raw, Z, placed = load(run)
        ref = reference_graph(kind, inp, raw, kappa)
        row: dict[str, Any] = {"reference": kind, "kappa": kappa}
        ok = bool(np.all(np.isfinite(Z)))
        centres = cohort_centres(Z, inp.labels, inp.n_cohorts) if ok else None
        row.update(link_counts(link_comparison(ref, cohort_graph(centres, kappa))) if ok
                   else {k: np.nan for k in _LINK_KEYS})
        near: list[int] = []
        if target_name is not None:
            if target_name not in inp.label_names:
                raise ValueError(f"highlight: no cohort named {target_name!r}; cohorts are {inp.label_names}")
            t = inp.label_names.index(target_name)
            near = nearest_cohorts(centres, t, n_high) if ok else []
            proto_near = nearest_cohorts(inp.prototypes, t, n_high)
            row[f"nearest_{n_high}_in_embedding"] = ", ".join(inp.label_names[i] for i in near)
            row[f"nearest_{n_high}_prototypes"] = ", ".join(inp.label_names[i] for i in proto_near)
            row["n_agree"] = len(set(near) & set(proto_near)) if ok else np.nan
        extra.append(row)
        panels.append((run, inp, raw, Z, placed, ref, centres, near))
    table = pd.concat([table, pd.DataFrame(extra)], axis=1)
    proto_rows = []
    if spec.get("prototype_panel"):
        seen: set[str] = set()
        for run, inp, raw, *_ in panels:
            if run["inputs_file"] in seen:
                continue
            seen.add(run["inputs_file"])
            ref = reference_graph(kind, inp, raw, kappa)
            proto_rows.append({"dataset": run["dataset"], "inputs": run["inputs"], "method_entry": "prototypes",
                               "method": "prototypes", "status": "ok", "reference": kind, "kappa": kappa,
                               **prototype_links(inp.prototypes, ref, kappa)})
        table = pd.concat([pd.DataFrame(proto_rows), table], ignore_index=True)
    for k in ("tp", "fp", "fn", "n_reference_links", "n_shown_links"):
        table[k] = table[k].astype("Int64")  # counts stay integers beside the NaN of degenerate runs
    write_csv_atomic(table, out["csv"])
    note = spec.get("caption", "") + (
        f" Cohort graphs: {kappa} effective neighbours per cohort (distances between cohort centres), compared with "
        f"the reference '{kind}'; tp/fp/fn = links in both / only in the embedding / only in the reference (cohorts "
        "numbered from 1); link_recall = tp/(tp+fn) (= S_c^(r) for reference 'prototypes'). Scores in percent.")
    if spec.get("notes"):
        note += f" Deviations and findings: {spec['notes']}"
    write_html_atomic(table, out["html"], title=spec.get("title", spec["name"]), note=note)

    n_panels = len(panels) + (1 if spec.get("prototype_panel") else 0)
    n_cols = min(int(spec.get("n_cols", 4)), n_panels)
    n_rows = -(-n_panels // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.9 * n_cols, 4.1 * n_rows), dpi=100, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n_panels:]:
        ax.axis("off")
    if spec.get("prototype_panel"):
        ax = flat.pop(0)
        run, inp, raw, *_ = panels[0]
        ref = reference_graph(kind, inp, raw, kappa)
        colours = cohort_colours(inp.n_cohorts)
        draw_links(ax, inp.prototypes, ref, kappa, _names(inp, names_mode))
        ax.scatter(inp.prototypes[:, 0], inp.prototypes[:, 1], marker="s", s=70, c=colours, edgecolors="black",
                   zorder=5)
        counts = proto_rows[0]
        what = "their own graph" if kind == "prototypes" else f"'{kind}'"
        _finish(ax, f"prototypes Υ ({run['inputs']})\n{kappa}-NN graph vs {what}: TP {counts['tp']}  "
                    f"FP {counts['fp']}  FN {counts['fn']}")
        ax.legend(fontsize=6, loc="lower left")
    for ax, (run, inp, raw, Z, placed, ref, centres, near) in zip(flat, panels):
        rec = table[(table.inputs == run["inputs"]) & (table.method_entry == run["entry"])].iloc[0].to_dict()
        title = f"{run['entry']} ({run['method']})\n{format_scores(rec, tuple(shown))}"
        if centres is None:
            plot_cohorts(ax, Z, inp.labels, inp.n_cohorts)
            ax.set_title(title + f"\n{rec['status']}", fontsize=7)
            continue
        plot_cohorts(ax, Z, inp.labels, inp.n_cohorts, point_size=4)
        for coll in ax.collections:
            coll.set_alpha(0.6)
        draw_links(ax, centres, ref, kappa, _names(inp, names_mode))
        if spec.get("show_prototypes") and placed.size:
            ax.scatter(placed[:, 0], placed[:, 1], marker="s", s=45, facecolors="none", edgecolors="dimgrey",
                       linewidths=1.2, zorder=4, label="prototype")
        if near:
            t = inp.label_names.index(target_name)
            for i in near:
                ax.plot(centres[[t, i], 0], centres[[t, i], 1], color="red", linewidth=2.4, alpha=0.7, zorder=2)
            ax.scatter(*centres[t], s=120, marker="*", color="red", zorder=6)
        _finish(ax, title + f"\nlinks vs {kind}: TP {rec['tp']:.0f}  FP {rec['fp']:.0f}  FN {rec['fn']:.0f}")
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    _save(fig, out["png"])


def reference_sweep(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Scores against one swept parameter with the paper's printed values (module docstring)."""
    from .renderers import DEVIATION_POINTS, _records, _write_tables, sweep_figure

    x = spec["x"]
    scores = spec.get("scores") or ["s_n", "s_c", "s_s", "s_c_r"]
    table = _records(spec).sort_values(["dataset", "method", x], kind="stable", ignore_index=True)
    ref_rows = REFERENCE[spec["reference"]]["rows"] if spec.get("reference") else {}
    for s in scores:
        table[f"paper_{s}"] = [ref_rows.get((d, m, float(v)), {}).get(s, np.nan)
                               for d, m, v in zip(table.dataset, table.method, table[x])]
    table[f"off_by_more_than_{DEVIATION_POINTS:g}_points"] = [
        "; ".join(f"{s} {100 * r[s]:.1f} vs {r[f'paper_{s}']:.1f}" for s in scores
                  if np.isfinite(r[f"paper_{s}"]) and abs(100 * r[s] - r[f"paper_{s}"]) > DEVIATION_POINTS)
        for _, r in table.iterrows()]
    _write_tables(spec, table, out)
    sweep_figure(spec, table, x, scores, out["png"])
