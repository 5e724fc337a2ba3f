"""Renderers of COVA's Cora experiments (Sec. 4.3, H.3): cohort link panels and an α sweep beside the paper's
printed endpoints.

- ``link_panels`` (Figs. 9, H.12, H.13, H.15, H.16): a compact grid of embeddings. Every panel shows the samples
  coloured by cohort, the embedded cohort centres (○) linked by their κ-NN graph compared with a **reference**
  cohort graph (true-positive links solid, false-positive dotted, false-negative dashed: the paper's "mismatches"),
  and the prototypes the run placed cohorts at (□, ``show_prototypes``). Options:

  ```yaml
  renderer: link_panels
  reference_graph: prototypes  # or raw_centroid_cosine / centroid_cosine (cova.metrics.cohort_graphs)
  kappa: 2                     # effective neighbours per cohort in both graphs (the paper: 2)
  prototype_panel: true        # first panel: the prototypes Υ and their κ-NN graph vs the reference (Fig. 9(a))
  show_prototypes: true        # □ at the prototypes each run placed cohorts at (default false)
  highlight: Genetic_Algorithms  # optional: this cohort's nearest cohorts in each embedding drawn in red
  highlight_neighbors: 3
  n_cols: 4
  scores: [s_n, s_c, s_s, s_c_r]
  ```

  The table lists the scores, the link counts (TP / FP / FN, the link lists, recall = S_c^(r) when the reference
  graph is ``prototypes``) and, with ``highlight``, the highlighted cohort's nearest cohorts in each embedding and among the
  prototypes.
- ``reference_sweep`` (Fig. H.14): the ``sweep`` renderer's table and curves, plus the paper's printed numbers at
  the swept values it reports (``reference`` = a key of :mod:`cova.experiments.reference` whose rows are keyed
  (dataset, method, x value)) as hollow markers and ``paper_*`` columns, and a column naming every score more than
  10 points from the paper's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import POSITIVE_INT, declare
from ...metrics.centres import cohort_centres
from ...metrics.cohort import cohort_graph, link_comparison
from ...metrics.cohort_graphs import (
    LINK_KEYS,
    link_counts,
    nearest_cohorts,
    prototype_links,
)
from ...metrics.cohort_graphs import (
    reference_graph as cohort_graph_of,
)
from ...viz.figures import save_figure
from ...viz.links import LinkPanel, PrototypeLinkPanel, link_panels_figure
from ...viz.scatter import format_scores
from ...viz.sweeps import sweep_figure
from ...viz.tables import write_csv_atomic, write_html_atomic
from ..common import DEFAULT_SCORES, SCORES, RunLoader, about, flag_deviations, records, write_tables
from ..reference import REFERENCE
from .links import COHORT_NAMES, REFERENCE_GRAPH

__all__ = ["link_panels", "reference_sweep"]


def _names(inp: Any, mode: str) -> list[str]:
    if mode == "names" or (mode == "auto" and inp.n_cohorts <= 10):
        return [n.replace("_", " ") for n in inp.label_names]
    return [str(k + 1) for k in range(inp.n_cohorts)]


@declare({"reference_graph": REFERENCE_GRAPH, "kappa": POSITIVE_INT, "scores": SCORES, "highlight": [str, None],
          "highlight_neighbors": POSITIVE_INT, "cohort_names": COHORT_NAMES, "prototype_panel": ["boolean"],
          "show_prototypes": ["boolean"], "n_cols": POSITIVE_INT})
def link_panels(spec: dict[str, Any], out: dict[str, str], *, reference_graph: str = "prototypes", kappa: int = 2,
                scores: Sequence[str] = tuple(DEFAULT_SCORES), highlight: str | None = None,
                highlight_neighbors: int = 3, cohort_names: str = "auto", prototype_panel: bool = False,
                show_prototypes: bool = False, n_cols: int = 4) -> None:
    """Embeddings with their cohort link graphs against a reference graph (module docstring)."""
    kind = reference_graph
    shown = list(scores)
    target_name = highlight
    n_high = highlight_neighbors
    names_mode = cohort_names
    table = records(spec, shown)
    load = RunLoader()
    panels, extra = [], []
    for run in spec["runs"]:
        inp, raw, Z, placed = load(run)
        ref = cohort_graph_of(kind, inp, raw, kappa)
        row: dict[str, Any] = {"reference": kind, "kappa": kappa}
        ok = bool(np.all(np.isfinite(Z)))
        centres = cohort_centres(Z, inp.labels, inp.n_cohorts) if ok else None
        row.update(link_counts(link_comparison(ref, cohort_graph(centres, kappa))) if ok
                   else {k: np.nan for k in LINK_KEYS})
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
    if prototype_panel:
        seen: set[str] = set()
        for run, inp, raw, *_ in panels:
            if run["inputs_file"] in seen:
                continue
            seen.add(run["inputs_file"])
            ref = cohort_graph_of(kind, inp, raw, kappa)
            proto_rows.append({"dataset": run["dataset"], "inputs": run["inputs"], "method_entry": "prototypes",
                               "method": "prototypes", "status": "ok", "reference": kind, "kappa": kappa,
                               **prototype_links(inp.prototypes, ref, kappa)})
        table = pd.concat([pd.DataFrame(proto_rows), table], ignore_index=True)
    for k in ("tp", "fp", "fn", "n_reference_links", "n_shown_links"):
        table[k] = table[k].astype("Int64")  # counts stay integers beside the NaN of degenerate runs
    write_csv_atomic(table, out["csv"])
    text = about(spec)
    note = text.caption + (
        f" Cohort graphs: {kappa} effective neighbours per cohort (distances between cohort centres), compared with "
        f"the reference '{kind}'; tp/fp/fn = links in both / only in the embedding / only in the reference (cohorts "
        "numbered from 1); link_recall = tp/(tp+fn) (= S_c^(r) for reference 'prototypes'). Scores in percent.")
    if text.notes:
        note += f" Deviations and findings: {text.notes}"
    write_html_atomic(table, out["html"], title=text.title, note=note)

    proto_panel = None
    if prototype_panel:
        run, inp, raw, *_ = panels[0]
        counts = proto_rows[0]
        what = "their own graph" if kind == "prototypes" else f"'{kind}'"
        proto_panel = PrototypeLinkPanel(inp.prototypes, cohort_graph_of(kind, inp, raw, kappa),
                                         _names(inp, names_mode),
                                         f"prototypes Υ ({run['inputs']})\n{kappa}-NN graph vs {what}: TP "
                                         f"{counts['tp']}  FP {counts['fp']}  FN {counts['fn']}")
    shown_panels = []
    for run, inp, raw, Z, placed, ref, centres, near in panels:
        rec = table[(table.inputs == run["inputs"]) & (table.method_entry == run["entry"])].iloc[0].to_dict()
        title = f"{run['entry']} ({run['method']})\n{format_scores(rec, tuple(shown))}"
        title += (f"\n{rec['status']}" if centres is None else
                  f"\nlinks vs {kind}: TP {rec['tp']:.0f}  FP {rec['fp']:.0f}  FN {rec['fn']:.0f}")
        target = inp.label_names.index(target_name) if near else None
        shown_panels.append(LinkPanel(Z, inp.labels, inp.n_cohorts, placed, ref, _names(inp, names_mode), title,
                                      target=target, near=near))
    save_figure(link_panels_figure(shown_panels, kappa, text.title, n_cols, show_prototypes, proto_panel), out["png"])


@declare({"x": [str], "scores": SCORES})
def reference_sweep(spec: dict[str, Any], out: dict[str, str], *, x: str,
                    scores: Sequence[str] = tuple(DEFAULT_SCORES)) -> None:
    """Scores (``scores``) against the swept grid parameter ``x`` with the paper's printed values (module
    docstring)."""
    scores = list(scores)
    table = records(spec, scores).sort_values(["dataset", "method", x], kind="stable", ignore_index=True)
    ref_rows = REFERENCE[spec["reference"]]["rows"] if spec["reference"] else {}
    for s in scores:
        table[f"paper_{s}"] = [ref_rows.get((d, m, float(v)), {}).get(s, np.nan)
                               for d, m, v in zip(table.dataset, table.method, table[x])]
    flag_deviations(table, scores)
    write_tables(spec, table, out)
    save_figure(sweep_figure(table, x, scores, about(spec).title), out["png"])
