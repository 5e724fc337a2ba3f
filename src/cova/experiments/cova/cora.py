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
  compare_with: [citation]     # optional: further reference graphs, one link_recall_<graph> column each
  agreement: false             # optional: link_agreement, how far the runs' cohort graphs agree with each other
  ```

  The table lists the scores, the link counts (TP / FP / FN, the link lists, recall = S_c^(r) when the reference
  graph is ``prototypes``) and, with ``highlight``, the highlighted cohort's nearest cohorts in each embedding and among the
  prototypes. ``compare_with`` adds, for every row (the prototypes' row too), the link recall and precision of the
  row's κ-NN cohort graph against each further graph (``link_recall_<graph>``, ``link_precision_<graph>``): one of
  the ``reference_graph`` kinds or ``citation``, the κ-NN graph of the citation density between cohorts
  (:func:`cova.cohorts.proximity.citation_similarity` of the dataset's relations, the proximity COVA's Fig. 9
  prototypes are generated from, Sec. 3.1.1). ``agreement`` adds ``link_agreement``: the mean, over the other runs
  on the same inputs, of the Jaccard index of the two runs' cohort-centre link sets (shared links over links in
  either; 1 when every run draws the same graph), e.g. how far the existing methods' class layouts differ
  (COVA Fig. H.13).
- ``reference_sweep`` (Fig. H.14): the ``sweep`` renderer's table and curves, plus the paper's printed numbers at
  the swept values it reports (``reference`` = a key of :mod:`cova.experiments.reference` whose rows are keyed
  (dataset, method, x value)) as hollow markers and ``paper_*`` columns, and a column naming every score more than
  10 points from the paper's. With ``spread: true`` the table also has ``cohort_spread``, how spread out the
  cohorts are in each embedding relative to the whole map: sqrt(within-cohort scatter / total scatter) =
  sqrt(Σ_i ‖z_i − m_{y_i}‖² / Σ_i ‖z_i − m‖²), with m_j the cohort centres and m the map's centre (0: every cohort
  a point, 1: no cohort structure); it falls as cohorts get denser ("denser and more tightly controlled cohorts",
  Fig. H.14).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...affinity.graphs import knn_graph
from ...cohorts.proximity import citation_similarity
from ...constraints import POSITIVE_INT, ListOf, StrOptions, declare
from ...errors import UserError
from ...metrics.centres import cohort_centres
from ...metrics.cohort import cohort_graph, link_comparison
from ...metrics.cohort_graphs import (
    LINK_KEYS,
    REFERENCE_GRAPHS,
    link_counts,
    nearest_cohorts,
    prototype_links,
)
from ...metrics.cohort_graphs import (
    reference_graph as cohort_graph_of,
)
from ...viz.figures import save_figure
from ...viz.links import LinkPanel, PrototypeLinkPanel, link_panels_figure
from ...viz.names import run_names
from ...viz.scatter import format_scores
from ...viz.sweeps import sweep_figure
from ...viz.tables import write_csv_atomic
from ..common import DEFAULT_SCORES, SCORES, RunLoader, about, flag_deviations, records
from ..page import write_page, write_tables
from ..reference import REFERENCE
from .links import COHORT_NAMES, REFERENCE_GRAPH

__all__ = ["FURTHER_GRAPHS", "link_panels", "reference_sweep", "citation_graph", "link_agreement", "cohort_spread"]

#: The graphs ``compare_with`` accepts: the reference graphs of :mod:`cova.metrics.cohort_graphs` and ``citation``.
FURTHER_GRAPHS = (*REFERENCE_GRAPHS, "citation")


def citation_graph(relations: Any, labels: np.ndarray, n_cohorts: int, kappa: int = 2) -> np.ndarray:
    """The κ-NN cohort graph of the citation density between cohorts (COVA Sec. 3.1.1: s_ij = 0.5/(n_i + n_j) ·
    Σ_{y_p=i} Σ_{y_q=j} (θ_pq + θ_qp), the within-cohort density ignored): the cohort graph the citation prototypes
    of Fig. 9 are meant to approximate."""
    if relations is None:
        raise UserError("compare_with 'citation' needs a dataset with a relation matrix (e.g. Cora's citations)")
    if relations.shape != (len(labels), len(labels)):
        raise UserError(f"compare_with 'citation': the relation matrix is {relations.shape}, the inputs have "
                         f"{len(labels)} samples")
    return knn_graph(citation_similarity(relations, labels, n_cohorts), kappa, kind="similarity")


def _further_graph(kind: str, inp: Any, dataset: Any, kappa: int) -> np.ndarray:
    if kind == "citation":
        return citation_graph(dataset.relations, inp.labels, inp.n_cohorts, kappa)
    return cohort_graph_of(kind, inp, dataset.X, kappa)


def _against(graph: np.ndarray | None, further: dict[str, np.ndarray]) -> dict[str, float]:
    out: dict[str, float] = {}
    for kind, ref in further.items():
        counts = link_counts(link_comparison(ref, graph)) if graph is not None else {}
        out[f"link_recall_{kind}"] = counts.get("link_recall", np.nan)
        out[f"link_precision_{kind}"] = counts.get("link_precision", np.nan)
    return out


def link_agreement(graphs: Sequence[np.ndarray | None]) -> list[float]:
    """For each cohort graph, the mean Jaccard index (shared links / links in either) of its links with each other
    graph's; ``None`` graphs (degenerate runs) neither get nor give a value (NaN; NaN too without another graph)."""
    iu = None
    sets = []
    for g in graphs:
        if g is None:
            sets.append(None)
            continue
        iu = np.triu_indices(g.shape[0], k=1) if iu is None else iu
        sets.append(np.asarray(g, dtype=bool)[iu])
    out = []
    for i, a in enumerate(sets):
        if a is None:
            out.append(np.nan)
            continue
        values = [float(np.sum(a & b) / np.sum(a | b)) if np.any(a | b) else 1.0
                  for j, b in enumerate(sets) if j != i and b is not None]
        out.append(float(np.mean(values)) if values else np.nan)
    return out


def cohort_spread(Z: np.ndarray, labels: np.ndarray, n_cohorts: int) -> float:
    """sqrt(within-cohort scatter / total scatter) of an embedding (reference_sweep's ``spread``; NaN for a
    degenerate Z or a map with no extent)."""
    if not np.all(np.isfinite(Z)):
        return float("nan")
    centres = cohort_centres(Z, labels, n_cohorts)
    within = float(np.sum((Z - centres[labels]) ** 2))
    total = float(np.sum((Z - Z.mean(axis=0)) ** 2))
    return float(np.sqrt(within / total)) if total > 0 else float("nan")


def _names(inp: Any, mode: str) -> list[str]:
    if mode == "names" or (mode == "auto" and inp.n_cohorts <= 10):
        return [n.replace("_", " ") for n in inp.label_names]
    return [str(k + 1) for k in range(inp.n_cohorts)]


@declare({"reference_graph": REFERENCE_GRAPH, "kappa": POSITIVE_INT, "scores": SCORES, "highlight": [str, None],
          "highlight_neighbors": POSITIVE_INT, "cohort_names": COHORT_NAMES, "prototype_panel": ["boolean"],
          "show_prototypes": ["boolean"], "n_cols": POSITIVE_INT,
          "compare_with": [ListOf([StrOptions(set(FURTHER_GRAPHS))], min_items=0)], "agreement": ["boolean"]})
def link_panels(spec: dict[str, Any], out: dict[str, str], *, reference_graph: str = "prototypes", kappa: int = 2,
                scores: Sequence[str] = tuple(DEFAULT_SCORES), highlight: str | None = None,
                highlight_neighbors: int = 3, cohort_names: str = "auto", prototype_panel: bool = False,
                show_prototypes: bool = False, n_cols: int = 4, compare_with: Sequence[str] = (),
                agreement: bool = False) -> None:
    """Embeddings with their cohort link graphs against a reference graph (module docstring)."""
    kind = reference_graph
    shown = list(scores)
    target_name = highlight
    n_high = highlight_neighbors
    names_mode = cohort_names
    table = records(spec, shown)
    load = RunLoader()
    panels, extra, graphs, further_of = [], [], [], {}
    for run in spec["runs"]:
        inp, raw, Z, placed = load(run)
        ref = cohort_graph_of(kind, inp, raw, kappa)
        if run["inputs_file"] not in further_of:
            further_of[run["inputs_file"]] = {g: _further_graph(g, inp, load.dataset(run), kappa)
                                              for g in compare_with}
        row: dict[str, Any] = {"reference": kind, "kappa": kappa}
        ok = bool(np.all(np.isfinite(Z)))
        centres = cohort_centres(Z, inp.labels, inp.n_cohorts) if ok else None
        shown_graph = cohort_graph(centres, kappa) if ok else None
        graphs.append(shown_graph)
        row.update(link_counts(link_comparison(ref, shown_graph)) if ok
                   else {k: np.nan for k in LINK_KEYS})
        row.update(_against(shown_graph, further_of[run["inputs_file"]]))
        near: list[int] = []
        if target_name is not None:
            if target_name not in inp.label_names:
                raise UserError(f"highlight: no cohort named {target_name!r}; cohorts are {inp.label_names}")
            t = inp.label_names.index(target_name)
            near = nearest_cohorts(centres, t, n_high) if ok else []
            proto_near = nearest_cohorts(inp.prototypes, t, n_high)
            row[f"nearest_{n_high}_in_embedding"] = ", ".join(inp.label_names[i] for i in near)
            row[f"nearest_{n_high}_prototypes"] = ", ".join(inp.label_names[i] for i in proto_near)
            row["n_agree"] = len(set(near) & set(proto_near)) if ok else np.nan
        extra.append(row)
        panels.append((run, inp, raw, Z, placed, ref, centres, near))
    if agreement:
        by_inputs: dict[str, list[int]] = {}
        for i, run in enumerate(spec["runs"]):
            by_inputs.setdefault(run["inputs_file"], []).append(i)
        for members in by_inputs.values():
            for i, value in zip(members, link_agreement([graphs[i] for i in members])):
                extra[i]["link_agreement"] = value
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
                               **prototype_links(inp.prototypes, ref, kappa),
                               **_against(cohort_graph(inp.prototypes, kappa), further_of[run["inputs_file"]])})
        table = pd.concat([pd.DataFrame(proto_rows), table], ignore_index=True)
    for k in ("tp", "fp", "fn", "n_reference_links", "n_shown_links"):
        table[k] = table[k].astype("Int64")  # counts stay integers beside the NaN of degenerate runs
    write_csv_atomic(table, out["csv"])
    text = about(spec)
    note = text.caption + (
        f" Cohort graphs: {kappa} effective neighbours per cohort (distances between cohort centres), compared with "
        f"the reference '{kind}'; tp/fp/fn = links in both / only in the embedding / only in the reference (cohorts "
        "numbered from 1); link_recall = tp/(tp+fn) (= S_c^(r) for reference 'prototypes'). Scores in percent.")
    if compare_with:
        note += (" link_recall_<graph> / link_precision_<graph>: the same for each row's graph (the prototypes' for "
                 f"the prototypes row) against the further graph{'s' if len(compare_with) > 1 else ''} "
                 f"{', '.join(repr(g) for g in compare_with)}"
                 + (" (citation: the κ-NN graph of the citation density between cohorts)"
                    if "citation" in compare_with else "") + ".")
    if agreement:
        note += (" link_agreement: the mean Jaccard index of a run's cohort-centre links with each other run's on "
                 "the same inputs (1: the same graph).")
    if text.notes:
        note += f" Deviations and findings: {text.notes}"
    write_page(spec, out, [("", table)], title=text.title, note=note)

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
    names = run_names([p[0] for p in panels])
    for (run, inp, raw, Z, placed, ref, centres, near), name in zip(panels, names):
        rec = table[(table.inputs == run["inputs"]) & (table.method_entry == run["entry"])].iloc[0].to_dict()
        title = f"{name}\n{format_scores(rec, tuple(shown))}"
        title += (f"\n{rec['status']}" if centres is None else
                  f"\nlinks vs {kind}: TP {rec['tp']:.0f}  FP {rec['fp']:.0f}  FN {rec['fn']:.0f}")
        target = inp.label_names.index(target_name) if near else None
        shown_panels.append(LinkPanel(Z, inp.labels, inp.n_cohorts, placed, ref, _names(inp, names_mode), title,
                                      target=target, near=near))
    save_figure(link_panels_figure(shown_panels, kappa, text.title, n_cols, show_prototypes, proto_panel), out)


@declare({"x": [str], "scores": SCORES, "spread": ["boolean"]})
def reference_sweep(spec: dict[str, Any], out: dict[str, str], *, x: str,
                    scores: Sequence[str] = tuple(DEFAULT_SCORES), spread: bool = False) -> None:
    """Scores (``scores``) against the swept grid parameter ``x`` with the paper's printed values, and with
    ``spread`` each embedding's ``cohort_spread`` (module docstring)."""
    scores = list(scores)
    table = records(spec, scores)
    if spread:
        load = RunLoader()
        table["cohort_spread"] = [cohort_spread(load.embedding(run).Z, load.run_inputs(run).labels,
                                                load.run_inputs(run).n_cohorts) for run in spec["runs"]]
    table = table.sort_values(["dataset", "method", x], kind="stable", ignore_index=True)
    ref_rows = REFERENCE[spec["reference"]]["rows"] if spec["reference"] else {}
    for s in scores:
        table[f"paper_{s}"] = [ref_rows.get((d, m, float(v)), {}).get(s, np.nan)
                               for d, m, v in zip(table.dataset, table.method, table[x])]
    flag_deviations(table, scores)
    write_tables(spec, table, out)
    save_figure(sweep_figure(table, x, scores, about(spec).title), out)
