"""The co-embedding paper's maps and curves (Wu, Mu, Liatsis & Goulermas): the paper prints no numbers, so every
table holds our measures and the HTML page states, computed from them, whether the paper's claim shows.

- ``coembed_maps`` (Figs. 2-4, 7, 9, 10): one panel per run, the input data sets (with their inputs block) as
  columns and the method entries (or the grid values of one entry, e.g. the k_r/k_c settings of Figs. 9-10) as
  rows; with ``original: true`` a first row shows the input points where the relation was built from points
  (Eq. 44). Table: Γ (Eq. 43, k_r = k_c = 5), mean rank, its tie-robust variant and the pooled 1-NN error of
  every run, and the readings of its map (:mod:`.map_measures`: spread, smallest class spread, co-cluster
  mixing, distance of the column objects to the row classes).
- ``coembed_sweep`` (Figs. 5f, 6, 8, 11): measures against ``x`` (``n_components``, the embedding dimension, or
  ``n_words``, the words selected per class), one line per configured method entry (or per value of the grid
  parameter named by ``line``, e.g. ``k_r`` for Fig. 11), mean and standard deviation over the inputs blocks of a
  data set (the seeded splits of the link data). ``text_error`` is the text
  classification protocol of Sec. 4.2 (:func:`cova.metrics.coembedding.text_classification_error`); the other
  measures are the run's scores. With ``maps: true`` the 2-D runs of the first inputs block are drawn above. The
  table holds the readings of every run's map too (:mod:`.map_measures`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import POSITIVE_INT, ListOf, StrOptions, declare, integer
from ...embedding import Embedding
from ...errors import UserError
from ...inputs import Inputs
from ...metrics.coembedding import text_classification_error
from ...threads import job_threads
from ...viz.coembedding import CoembeddingPanel, coembedding_grid_figure, measure_curves_figure
from ...viz.figures import save_figure
from ...viz.names import grid_text, run_names
from ...viz.tables import write_csv_atomic
from ..common import MappingOf, RunLoader, about, findings_note, run_scores
from ..page import write_page
from .map_measures import MAP_MEASURES, map_measures

__all__ = ["MEASURE_LABELS", "RUN_MEASURES", "SWEEP_MEASURES", "coembed_maps", "coembed_sweep", "claim_findings",
           "one_n_words_per_dimension_sweep"]

#: The measures of a run's ``scores.json`` these renderers show (lower is better for every one).
RUN_MEASURES = ("gamma_objective", "mean_rank", "mean_rank_ties", "pooled_1nn_error")
MEASURE_LABELS = {"gamma_objective": "Γ (lost mutual 5-NN pairs)", "mean_rank": "mean rank (top 10)",
                  "mean_rank_ties": "mean rank (tie-robust)", "pooled_1nn_error": "1-NN error (pooled)",
                  "text_error": "text classification error"}
#: What ``coembed_sweep`` may draw against x: the run measures and the text classification error.
SWEEP_MEASURES = ("text_error", "mean_rank", "mean_rank_ties", "pooled_1nn_error", "gamma_objective")
#: The constraint of ``inputs_labels``: inputs block -> how the panels and tables name its input.
INPUTS_LABELS = [MappingOf([str], "a mapping of inputs blocks to labels (str)"), None]


def _panel(run: dict[str, Any], inputs: Inputs, emb: Embedding, title: str) -> CoembeddingPanel:
    rel = inputs.relation
    columns = emb.extras.get("column_embedding")
    if columns is None:
        raise UserError(f"run {run['entry']} on {run['dataset']}/{run['inputs']}: method {run['method']} saved no "
                         f"column embedding; coembed renderers need a co-embedding method (extra column_embedding)")
    n_classes = max(len(rel.row_label_names), len(rel.column_label_names))
    return CoembeddingPanel(emb.Z, columns, rel.row_labels, rel.column_labels, n_classes, title)


#: The proposed model's chosen parameters, in the order of its extra ``selected_model``.
SELECTED = ("eta1", "eta2", "xi", "gamma")


def _record(run: dict[str, Any], emb: Embedding, scores: dict[str, Any], label: str,
            inputs: Inputs | None = None) -> dict[str, Any]:
    """One table row: the run's names, its measures, the readings of its map (:mod:`.map_measures`, with the
    relation's labels in ``inputs``) and, for the proposed model, the parameters its search chose."""
    selected = emb.extras.get("selected_model")
    chosen = {f"chosen_{k}": float(v) for k, v in zip(SELECTED, selected)} if selected is not None else {}
    rel = inputs.relation if inputs is not None else None
    readings = dict.fromkeys(MAP_MEASURES, np.nan)
    if rel is not None and emb.ok:
        readings = map_measures(emb.Z, emb.extras.get("column_embedding"), rel.row_labels, rel.column_labels)
    return {"dataset": run["dataset"], "inputs": run["inputs"], "input": label, "method_entry": run["entry"],
            "group": run["group"], "method": run["method"], **run.get("grid", {}),
            "n_components": emb.n_components, "status": scores.get("status", "ok"), "runtime_s": emb.runtime_s,
            **{k: scores.get(k, np.nan) for k in RUN_MEASURES}, **readings, **chosen}


#: Short names of the measures in panel titles.
SHORT = {"gamma_objective": "Γ", "mean_rank": "rank", "mean_rank_ties": "rank≥", "pooled_1nn_error": "1-NN err"}


def _format(row: dict[str, Any], measures: tuple[str, ...]) -> str:
    parts = []
    for k in measures:
        v = row.get(k, np.nan)
        if isinstance(v, (int, float)) and np.isfinite(v):
            parts.append(f"{SHORT[k]} {100 * v:.1f}%" if k == "pooled_1nn_error" else f"{SHORT[k]} {v:.3g}")
    return "  ".join(parts)


@declare({"original": ["boolean"], "inputs_labels": INPUTS_LABELS})
def coembed_maps(spec: dict[str, Any], out: dict[str, str], *, original: bool = False,
                 inputs_labels: Mapping[str, str] | None = None) -> None:
    """Maps of every run (see the module docstring) and their measures; ``original``: a first row with the input
    points; ``inputs_labels``: inputs block -> how the panels and the table name its input."""
    load = RunLoader()
    labels = dict(inputs_labels or {})
    columns = list(dict.fromkeys((r["dataset"], r["inputs"]) for r in spec["runs"]))
    records, cells = [], {}
    for run, name in zip(spec["runs"], run_names(spec["runs"])):
        emb, scores = load.embedding(run), run_scores(run)
        label = labels.get(run["inputs"], run["inputs"])
        rec = _record(run, emb, scores, label, load.run_inputs(run))
        records.append(rec)
        measures = _format(rec, ("gamma_objective", "mean_rank", "pooled_1nn_error"))
        title = f"{run['dataset']} ({label}): {name}\n{measures}"
        cells.setdefault((run["dataset"], run["inputs"]), []).append(_panel(run, load.run_inputs(run), emb, title))
    grid: list[list[CoembeddingPanel | None]] = []
    for dataset, inputs in columns:
        row: list[CoembeddingPanel | None] = []
        if original:
            run = next(r for r in spec["runs"] if (r["dataset"], r["inputs"]) == (dataset, inputs))
            rel = load.run_inputs(run).relation
            if rel.row_points is None or rel.column_points is None:
                row.append(None)
            else:
                n_classes = max(len(rel.row_label_names), len(rel.column_label_names))
                row.append(CoembeddingPanel(rel.row_points, rel.column_points, rel.row_labels, rel.column_labels,
                                            n_classes, f"{dataset}: input points (m = {rel.shape[0]}, "
                                                       f"n = {rel.shape[1]})"))
        grid.append(row + cells[(dataset, inputs)])
    table = pd.DataFrame(records)
    write_csv_atomic(table, out["csv"])
    title = about(spec).title
    write_page(spec, out, [("", table)], title=title, note=findings_note(spec))
    save_figure(coembedding_grid_figure(grid, title), out)


def _text_errors(run: dict[str, Any], inputs: Inputs, emb: Embedding, n_words: list[int],
                 n_folds: int) -> list[tuple[int, float, int]]:
    rel = inputs.relation
    # a class cannot take more words than there are: those settings are left out for this relation
    n_words = [w for w in n_words if w <= rel.shape[1]]
    columns = emb.extras.get("column_embedding")
    if not emb.ok or columns is None:
        return [(w, np.nan, 0) for w in n_words]
    seed = int(inputs.spec.get("seed", 0))  # the seed the inputs step recorded (inputs.npz), not an option
    return [(w, *text_classification_error(rel.matrix, emb.Z, columns, rel.row_labels, w,
                                           n_folds=n_folds, random_state=seed,
                                           n_jobs=job_threads()))
            for w in n_words]


def claim_findings(table: pd.DataFrame, x: str, measures: list[str], proposed: str = "coembed",
                   reference: str = "ca", line: str = "group") -> str:
    """A computed sentence per measure: how often each line (method entry, or value of ``line``) has the lowest
    mean (over repeats) at a value of ``x``, and, between method entries, the mean and largest difference between
    the entries of methods ``proposed`` and ``reference``."""
    parts = []
    for measure in measures:
        if measure not in table or not table[measure].notna().any():
            continue
        means = table.groupby(["dataset", x, line], sort=False)[measure].mean().unstack(line)
        wins = means.idxmin(axis=1).value_counts()
        part = f"{MEASURE_LABELS.get(measure, measure)}: lowest at " + ", ".join(
            f"{g} {n}/{len(means)}" for g, n in wins.items())
        methods = table.drop_duplicates(line).set_index(line)["method"] if line == "group" else pd.Series()
        prop = [g for g in means.columns if methods.get(g) == proposed]
        ref = [g for g in means.columns if methods.get(g) == reference]
        if prop and ref:
            diff = (means[prop[0]] - means[ref[0]]).dropna()
            if len(diff):
                part += (f"; {prop[0]} − {ref[0]}: mean {diff.mean():+.3g}, largest |·| {diff.abs().max():.3g} "
                         f"(over {len(diff)} settings)")
        parts.append(part)
    return " Computed from this table: " + " | ".join(parts) + "." if parts else ""


def one_n_words_per_dimension_sweep(options: Mapping[str, Any], context: Mapping[str, Any]
                                    ) -> tuple[str, str] | None:
    """Rule of ``coembed_sweep``: against ``x: n_components`` the text error takes one ``n_words``."""
    words = options.get("n_words")
    if options.get("x") == "n_components" and isinstance(words, (list, tuple)) and len(words) != 1:
        return "n_words", "with x = n_components give one n_words (words per class)"
    return None


@declare({"x": [StrOptions({"n_components", "n_words"})],
          "measures": [ListOf([StrOptions(set(SWEEP_MEASURES))])],
          "n_words": [*POSITIVE_INT, ListOf(POSITIVE_INT)], "line": [str], "n_folds": [integer(2, None)],
          "maps": ["boolean"], "inputs_labels": INPUTS_LABELS},
         rules=[one_n_words_per_dimension_sweep])
def coembed_sweep(spec: dict[str, Any], out: dict[str, str], *, x: str = "n_components",
                  measures: Sequence[str] = ("mean_rank", "pooled_1nn_error"), n_words: int | Sequence[int] = 20,
                  line: str = "group", n_folds: int = 10, maps: bool = False,
                  inputs_labels: Mapping[str, str] | None = None) -> None:
    """Measures (``measures``) against ``x`` (see the module docstring): ``n_words`` words per class for the text
    error (a list when x is n_words), ``n_folds`` folds of it, one line per value of ``line`` (``group``: per
    method entry), the 2-D maps of the first inputs block above with ``maps``."""
    measures = list(measures)
    per_class = [int(w) for w in (n_words if isinstance(n_words, (list, tuple)) else [n_words])]
    if x == "n_components" and len(per_class) != 1:
        raise UserError("coembed_sweep: with x = n_components give one n_words (words per class)")
    load = RunLoader()
    labels = dict(inputs_labels or {})
    rows = []
    words_of: dict[str, int] = {}
    for run in spec["runs"]:
        emb, scores, inputs = load.embedding(run), run_scores(run), load.run_inputs(run)
        rec = _record(run, emb, scores, labels.get(run["inputs"], run["inputs"]), inputs)
        if "text_error" in measures:
            words_of[run["dataset"]] = inputs.relation.shape[1]
            for w, err, selected in _text_errors(run, inputs, emb, per_class, n_folds):
                rows.append({**rec, "n_words": w, "n_selected_words": selected, "text_error": err})
        else:
            rows.append(rec)
    table = pd.DataFrame(rows)
    order = [c for c in ("dataset", "group", x, "inputs") if c in table]
    table = table.sort_values(order, kind="stable", ignore_index=True)
    write_csv_atomic(table, out["csv"])
    if line not in table:
        raise UserError(f"coembed_sweep: line {line!r} is neither 'group' nor a grid parameter of the runs")
    left_out = "".join(f" {d} has {n} words: its settings above {n} words per class are left out."
                       for d, n in sorted(words_of.items())
                       if set(per_class) - set(table.loc[table["dataset"] == d, "n_words"]))
    note = findings_note(spec, claim_findings(table, x, measures, line=line) + left_out)
    title = about(spec).title
    write_page(spec, out, [("", table)], title=title, note=note)
    drawn = []
    if maps:
        first = spec["runs"][0]["inputs"]
        shown = [r for r in spec["runs"] if r["inputs"] == first]
        drawn = [_panel(r, load.run_inputs(r), emb, f"{r['dataset']}: {name}")
                 for r, name in zip(shown, run_names(shown)) for emb in [load.embedding(r)] if emb.n_components == 2]
    firsts = list({r["group"]: r for r in spec["runs"]}.values())
    names = (dict(zip((r["group"] for r in firsts), run_names(firsts, grid=False))) if line == "group" else
             {v: grid_text({line: v}) for v in table[line].unique()})
    fig = measure_curves_figure(table, x, measures, title, labels=MEASURE_LABELS, line=line, maps=drawn,
                                names=names)
    save_figure(fig, out, tight=not drawn)
