"""Cohort-graph renderers: which cohorts sit next to which, in the original space and in an embedding.

- ``link_graphs`` (COVA Table 2, reusable for Fig. 9 / H.15): row 1 shows each run's embedding coloured by cohort;
  row 2 draws the κ-NN graph of the embedded cohort centres against a **reference** cohort graph, true-positive
  links solid, false-positive dotted, false-negative dashed (the paper's convention). The table counts the links
  (TP / FP / FN) per run. Experiment-block options:

  ```yaml
  renderer: link_graphs
  reference_graph: raw_centroid_cosine   # or prototypes, centroid_cosine (cova.metrics.cohort_graphs.REFERENCE_GRAPHS)
  kappa: 2                          # effective neighbours per cohort (both graphs)
  show_prototypes: false            # row 2: also draw the prototypes the run placed cohorts at (squares)
  cohort_names: auto                # auto | numbers | names (annotations in row 2)
  scores: [s_n, s_s, s_c_r]         # scores in the panel titles and the table
  ```

  With ``reference_graph: prototypes`` the link recall TP/(TP+FN) is S_c^(r) of Eq. G.1 (κ-NN graph of Υ vs the
  embedded centres).

- ``highlight_grid`` (COVA Table 1): the ``score_table`` of the runs (paper numbers in ``paper_*`` columns when
  ``reference`` names a key of :mod:`cova.experiments.reference`), drawn as a grid with one row per method and one
  column per run of that method; in every panel one cohort (``highlight``) and its ``highlight_neighbors`` nearest
  cohorts **in that embedding** (distance between embedded cohort centres) keep their colours, the others are grey.
  The table names those neighbours, the ones nearest in the original space (distance between cohort centres of the
  inputs' X, i.e. the space S_n is measured in) and how many of them agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import POSITIVE_INT, StrOptions, declare
from ...errors import UserError
from ...metrics.centres import cohort_centres
from ...metrics.cohort import cohort_graph, link_comparison
from ...metrics.cohort_graphs import LINK_KEYS, REFERENCE_GRAPHS, link_counts, nearest_cohorts
from ...metrics.cohort_graphs import reference_graph as cohort_graph_of
from ...viz.figures import save_figure
from ...viz.links import HighlightPanel, LinkPanel, highlight_grid_figure, link_graphs_figure
from ...viz.names import run_names
from ...viz.scatter import format_scores
from ...viz.tables import write_csv_atomic
from ..common import SCORES, RunLoader, about, findings_note, records, run_scores, with_reference
from ..page import write_page, write_tables

__all__ = ["REFERENCE_GRAPH", "COHORT_NAMES", "link_graphs", "highlight_grid"]

#: The constraint of ``reference_graph``: a reference cohort graph of :mod:`cova.metrics.cohort_graphs`.
REFERENCE_GRAPH = [StrOptions(set(REFERENCE_GRAPHS))]
#: The constraint of ``cohort_names``: how link panels annotate the cohorts (names when at most ten with ``auto``).
COHORT_NAMES = [StrOptions({"auto", "numbers", "names"})]


def _scores(run: dict[str, Any]) -> dict[str, Any]:
    s = run_scores(run)
    return {"status": s.get("status", "ok"), **{k: s.get(k, np.nan) for k in
                                               ("s_n", "s_s", "s_c", "s_c_r", "trustworthiness", "continuity")}}


@declare({"reference_graph": REFERENCE_GRAPH, "kappa": POSITIVE_INT, "scores": SCORES, "cohort_names": COHORT_NAMES,
          "show_prototypes": ["boolean"]})
def link_graphs(spec: dict[str, Any], out: dict[str, str], *, reference_graph: str = "raw_centroid_cosine",
                kappa: int = 2, scores: Sequence[str] = ("s_n", "s_s", "s_c_r"), cohort_names: str = "auto",
                show_prototypes: bool = False) -> None:
    """Embeddings (row 1) and their cohort link graphs against the reference graph (row 2); see the module
    docstring for the options."""
    kind = reference_graph
    shown_scores = list(scores)
    names_mode = cohort_names
    load = RunLoader()
    rows, panels = [], []
    for run, name in zip(spec["runs"], run_names(spec["runs"])):
        inp, raw, Z, placed = load(run)
        row = {"dataset": run["dataset"], "inputs": run["inputs"], "method_entry": run["entry"],
               "method": run["method"], **run.get("grid", {}), "reference": kind, "kappa": kappa,
               "n_cohorts": inp.n_cohorts}
        ref = cohort_graph_of(kind, inp, raw, kappa)
        if np.all(np.isfinite(Z)):
            centres = cohort_centres(Z, inp.labels, inp.n_cohorts)
            row.update(link_counts(link_comparison(ref, cohort_graph(centres, kappa))))
        else:
            row.update({k: np.nan for k in LINK_KEYS})
        recorded = _scores(run)
        row.update({k: recorded[k] for k in ["status", *shown_scores]})
        rows.append(row)
        use_names = names_mode == "names" or (names_mode == "auto" and inp.n_cohorts <= 10)
        panels.append(LinkPanel(Z, inp.labels, inp.n_cohorts, placed, ref,
                                inp.label_names if use_names else [str(k + 1) for k in range(inp.n_cohorts)],
                                f"{run['dataset']}: {name}\n{format_scores(row, tuple(shown_scores))}",
                                f"{kappa}-NN cohort graph vs {kind}\nTP {row['tp']}  FP {row['fp']}  "
                                f"FN {row['fn']}"))
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out["csv"])
    title = about(spec).title
    write_page(spec, out, [("", table)], title=title, note=findings_note(
        spec, f" Cohort graphs: {kappa} effective neighbours per cohort; reference '{kind}'. tp/fp/fn: links in both "
        "graphs / only in the embedding / only in the reference (cohorts numbered from 1); link_recall = "
        "tp/(tp+fn), link_precision = tp/(tp+fp). Scores in percent."))
    save_figure(link_graphs_figure(panels, kappa, title, show_prototypes), out)


@declare({"highlight": [str], "highlight_neighbors": POSITIVE_INT, "scores": SCORES})
def highlight_grid(spec: dict[str, Any], out: dict[str, str], *, highlight: str, highlight_neighbors: int = 3,
                   scores: Sequence[str] = ("s_s", "s_n")) -> None:
    """``score_table`` with a method × run grid and one cohort's nearest cohorts highlighted (module docstring).

    Options: ``highlight`` (a cohort name, required), ``highlight_neighbors``, ``scores``; ``reference`` (the
    common key of the paper's numbers) adds them."""
    scores = list(scores)
    table = with_reference(records(spec, scores), spec["reference"], scores)
    target_name = highlight
    k = highlight_neighbors
    load = RunLoader()
    panels, near_z, near_x, overlap = [], [], [], []
    for run in spec["runs"]:
        inp, _, Z, _ = load(run)
        if target_name not in inp.label_names:
            raise UserError(f"highlight: no cohort named {target_name!r}; cohorts are {inp.label_names}")
        t = inp.label_names.index(target_name)
        orig = nearest_cohorts(cohort_centres(inp.X, inp.labels, inp.n_cohorts), t, k)
        shown = (nearest_cohorts(cohort_centres(Z, inp.labels, inp.n_cohorts), t, k)
                 if np.all(np.isfinite(Z)) else [])
        near_x.append(", ".join(inp.label_names[i] for i in orig))
        near_z.append(", ".join(inp.label_names[i] for i in shown))
        overlap.append(len(set(orig) & set(shown)) if shown else np.nan)
        panels.append((run, inp, Z, t, shown))
    names = dict(zip((r["entry"] for r in spec["runs"]), run_names(spec["runs"])))
    table[f"nearest_{k}_in_embedding"] = near_z
    table[f"nearest_{k}_in_original"] = near_x
    table["n_agree"] = overlap
    write_tables({**spec, "caption": about(spec).caption + (
        f" Highlighted: '{target_name}' and its {k} nearest cohorts by distance between cohort centres, in each "
        "embedding (nearest_*_in_embedding, coloured in the figure) and in the original space the scores use "
        "(nearest_*_in_original); n_agree counts the cohorts in both.")}, table, out)

    grid = []
    for m in dict.fromkeys(r["method"] for r in spec["runs"]):
        row = []
        for run, inp, Z, t, shown in (p for p in panels if p[0]["method"] == m):
            rec = table[(table.dataset == run["dataset"]) & (table.method_entry == run["entry"])].iloc[0]
            row.append(HighlightPanel(Z, inp.labels, inp.label_names, t, shown,
                                      f"{names[run['entry']]}\n{format_scores(rec.to_dict(), tuple(scores))}"))
        grid.append(row)
    save_figure(highlight_grid_figure(grid, about(spec).title), out)
