"""NeRV paper Figs. 4-7 measure panels and the Table 2 analogue (Venna et al., JMLR 11:451-490, 2010, Sec. 4.3-4.4).

Renderer ``nerv_panels``: for every run of the experiment it shows the paper's goodness measures (Sec. 4.3.1; all
with input-neighbourhood scale 20), which the score step computes per run (metric group ``nerv``,
:func:`cova.metrics.retrieval.nerv_measures`; the renderer's declaration asks the plan for them):

* mean smoothed precision / recall errors E_i[D(q_i, p_i)], E_i[D(p_i, q_i)] (sigma_i from entropy log 20, the
  same sigma_i in the display, both distance sets rescaled to mean 1) - **Fig. 4** plots -1 x them;
* mean precision / mean recall curves, relevant = 20 nearest input neighbours, retrieved k = 1..100 - **Fig. 5**;
* mean rank-based smoothed precision / recall errors, normalised to [0, 1] - **Fig. 6** plots 1 - them;
* trustworthiness and continuity at k = 20 - **Fig. 7** (and the curves over k = 1..``k_max``);
* the leave-one-out 5-NN classification error in the display - **Table 2**;

With ``measure_space: ground_truth`` the input neighbourhoods come from the dataset's known latent coordinates
instead of X (NeRV Fig. 8: "taking the known pose and lighting information as the input data").

It then picks, per data set and per method entry with a ``grid``, the run with the largest rank-based F-measure
(Sec. 4.3.2: F = 2PR/(P+R) on rank-based goodness 1 - error): NeRV's lambda and the graph methods' k. Runs of
the ``nerv`` method are drawn as lambda-curves in the Fig. 4, 6 and 7 panels (as in the paper); every other
method entry as the single point of its F-best run. Figs. 5, the T(k)/C(k) curves and Table 2 show the F-best
run of every entry (NeRV at its F-chosen lambda, as in the paper's Fig. 5).

Outputs: PNG (one row of six panels per data set), CSV (every run, all measures, ``selected`` = the F-best run of
its entry, ``panel_run`` = the runs the paper's panels draw: every run of NeRV and local MDS, the paper's λ-curves,
and the F-selected run of every other entry, so that "NeRV's curve beats the other methods' points" reads each
method's best ``panel_run``), HTML (per data set the selected runs; the Table 2 analogue: 5-NN errors of the
selected runs, methods x data sets, beside the paper's printed Table 2, whose data sets differ; every run).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import StrOptions, declare, integer
from ...datasets import GROUND_TRUTH_LOADERS
from ...metrics import retrieval as ir
from ...metrics.retrieval import NERV_SCALE
from ...viz.figures import save_figure
from ...viz.names import method_name, run_name, run_names
from ...viz.retrieval import measure_panels_figure
from ...viz.tables import html_table, write_csv_atomic
from ..common import RunLoader, about, run_scores
from ..page import Section, write_page
from ..reference import REFERENCE

__all__ = ["RESTART_KEY", "nerv_panels", "keep_best_restart", "select_by_f", "label_of", "table2",
           "ground_truth_needs_a_loader"]

#: Methods drawn as lambda-curves in Figs. 4, 6, 7 (all their runs on one data set, sorted by ``lam``).
CURVE_METHODS = ("nerv",)
#: Methods the paper draws as lambda-curves in Figs. 4, 6-8 ("NeRV and local MDS (LMDS) form curves parameterized
#: by λ", Sec. 4.4); every other method is the point of its F-selected run there (Sec. 4.3.2).
PAPER_CURVE_METHODS = ("nerv", "lmds")

#: Our registry name -> the row name of the paper's Table 2 ("Eigenmap" is the Laplacian eigenmap).
PAPER_TABLE2_ROWS = {"laplacian_eigenmaps": "Eigenmap", "lle": "LLE", "isomap": "Isomap", "mds": "MDS",
                     "nerv": "NeRV", "lmds": "LocalMDS", "cca": "CCA", "cda": "CDA", "lmvu": "LMVU"}

MEASURES = ["smoothed_precision_error", "smoothed_recall_error", "rank_precision", "rank_recall", "rank_f",
            "precision_20", "recall_20", "pr_auc", "trustworthiness_20", "continuity_20", "knn5_error"]


#: The grid key of random restarts: a method entry with a grid over ``random_state`` keeps, per data set and other
#: grid values, the restart with the largest F ("5 random restarts, keep the best by F", NeRV Sec. 4.3.2).
RESTART_KEY = "random_state"


def keep_best_restart(table: pd.DataFrame) -> pd.Series:
    """Boolean mask: among runs of one data set and entry that differ only in :data:`RESTART_KEY`, the one with the
    largest ``rank_f`` (first on ties; the first run when none has measures); every run of a table without
    restarts."""
    if RESTART_KEY not in table:
        return pd.Series(True, index=table.index)
    keys = ["dataset", "group", *(c for c in _grid_keys(table) if c != RESTART_KEY)]
    kept = pd.Series(False, index=table.index)
    for _, g in table.groupby(keys, sort=False, dropna=False):
        f = g["rank_f"].astype(float)
        kept[f.idxmax() if f.notna().any() else g.index[0]] = True
    return kept


def select_by_f(table: pd.DataFrame) -> pd.Series:
    """Boolean mask: per (dataset, group), the run with the largest ``rank_f`` (first on ties; runs without
    measures never win; a group whose runs all lack measures selects none)."""
    selected = pd.Series(False, index=table.index)
    for _, g in table.groupby(["dataset", "group"], sort=False):
        f = g["rank_f"].astype(float)
        if f.notna().any():
            selected[f.idxmax()] = True
    return selected


def label_of(row: pd.Series | dict[str, Any], grid_keys: list[str]) -> str:
    """Display name of a table row: :func:`cova.viz.names.run_name` of its method and its values of ``grid_keys``
    (``NeRV λ = 0.3``; a missing or NaN value is left out)."""
    grid = {k: row[k] for k in grid_keys
            if k in row and row[k] is not None and not (isinstance(row[k], float) and np.isnan(row[k]))}
    return run_name({"method": row["method"], "grid": grid})


# --------------------------------------------------------------------------------------------------------
# the renderer
# --------------------------------------------------------------------------------------------------------

def _collect(spec: dict[str, Any], k_max: int) -> tuple[pd.DataFrame, dict[int, dict[str, Any]]]:
    """Every run's measures and curves, as its score step stored them (:func:`cova.metrics.retrieval.nerv_measures`,
    group ``nerv``; in the ground-truth space when the experiment asked for it): rank-based precision and recall as
    goodness (1 − error) with their F-measure, the T(k) / C(k) curves up to ``k_max``."""
    rows, curves = [], {}
    for i, run in enumerate(spec["runs"]):
        emb = RunLoader.embedding(run)
        Z, status, runtime = emb.Z, emb.status, emb.runtime_s
        grid = run.get("grid", {})
        row = {"dataset": run["dataset"], "group": run["group"], "method_entry": run["entry"],
               "method": run["method"], **grid, "status": status, "n_samples": int(Z.shape[0]),
               "runtime_s": runtime}
        if status == "ok" and Z.ndim == 2 and np.all(np.isfinite(Z)):
            scores = run_scores(run)
            n = Z.shape[0]
            scale = min(NERV_SCALE, (n - 1) // 2)
            kk = max(scale, min(int(k_max), (n - 1) // 2))
            rank_precision, rank_recall = 1.0 - scores["rank_precision_error"], 1.0 - scores["rank_recall_error"]
            row.update(smoothed_precision_error=scores["smoothed_precision_error"],
                       smoothed_recall_error=scores["smoothed_recall_error"], rank_precision=rank_precision,
                       rank_recall=rank_recall, rank_f=float(ir.f_measure(rank_precision, rank_recall)),
                       **{key: scores[key] for key in ("precision_20", "recall_20", "pr_auc", "trustworthiness_20",
                                                      "continuity_20", "knn5_error")})
            with np.load(run["per_point"]) as f:
                curves[i] = {"pr_curve": ir.PrecisionRecallCurve(f["pr_k"], f["pr_precision"], f["pr_recall"]),
                             "t_curve": f["t_curve"][:kk], "c_curve": f["c_curve"][:kk]}
        else:
            row.update({k: np.nan for k in MEASURES})
        rows.append(row)
    table = pd.DataFrame(rows)
    for k in MEASURES:
        if k not in table:
            table[k] = np.nan
    table["restart_kept"] = keep_best_restart(table)
    table["selected"] = select_by_f(table[table.restart_kept]).reindex(table.index, fill_value=False)
    table["panel_run"] = table.restart_kept & (table.selected | table.method.isin(PAPER_CURVE_METHODS))
    return table, curves


def _grid_keys(table: pd.DataFrame) -> list[str]:
    fixed = {"dataset", "group", "method_entry", "method", "status", "n_samples", "runtime_s", "selected",
             "panel_run", "restart_kept", *MEASURES}
    return [c for c in table.columns if c not in fixed]


def _draw(spec: dict[str, Any], table: pd.DataFrame, curves: dict[int, dict[str, Any]],
          out: Mapping[str, str]) -> None:
    groups = list(dict.fromkeys(table.group))
    firsts = [table[table.group == g].iloc[0] for g in groups]
    names = dict(zip(groups, run_names([{"method": r.method, "group": g} for g, r in zip(groups, firsts)])))
    fig = measure_panels_figure(table, curves, names, CURVE_METHODS, NERV_SCALE, about(spec).title +
                                "\n(best: top right; large markers = F-selected run of each entry; NeRV drawn as "
                                "a λ-curve)")
    save_figure(fig, out, tight=False)


def table2(table: pd.DataFrame, reference: str | None = "nerv_table2") -> pd.DataFrame:
    """The Table 2 analogue: 5-NN error of every entry's F-selected run, one row per entry (method), one column
    per data set; then the paper's printed columns (its data sets: Letter, Phoneme, Landsat, TIMIT; Faces for
    NeRV / t-NeRV) on the rows that have a counterpart (our ``lmds`` is the paper's "LocalMDS"), NaN elsewhere.
    Paper rows without a counterpart here (MVU) are appended with empty columns of ours."""
    sel = table[table.selected]
    datasets = list(dict.fromkeys(table.dataset))
    groups = list(dict.fromkeys(table.group))
    ref = REFERENCE[reference] if reference else {"rows": {}, "datasets": []}
    ref_sets = list(ref.get("datasets", []))
    rows = []
    seen_paper: set[str] = set()
    for g in groups:
        method = table[table.group == g].method.iloc[0]
        paper_row = PAPER_TABLE2_ROWS.get(method, method_name(method))
        row: dict[str, Any] = {"method": method_name(method), "entry": g, "paper_row": paper_row}
        for d in datasets:
            s = sel[(sel.group == g) & (sel.dataset == d)]
            row[d] = float(s.knn5_error.iloc[0]) if len(s) else np.nan
        for rd in ref_sets:
            row[f"paper: {rd}"] = ref["rows"].get((rd, method), {}).get("knn5_error", np.nan)
        if any((rd, method) in ref["rows"] for rd in ref_sets):
            seen_paper.add(method)
        rows.append(row)
    for (rd, method), _ in ref["rows"].items():
        if method in seen_paper or any(r["entry"] == f"paper:{method}" for r in rows):
            continue
        name = PAPER_TABLE2_ROWS.get(method, method_name(method))
        row = {"method": name, "entry": f"paper:{method}", "paper_row": name, **{d: np.nan for d in datasets}}
        for rd2 in ref_sets:
            row[f"paper: {rd2}"] = ref["rows"].get((rd2, method), {}).get("knn5_error", np.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def _write_html(spec: dict[str, Any], table: pd.DataFrame, t2: pd.DataFrame, out: dict[str, str], truth: bool
                ) -> None:
    text = about(spec)
    grid_keys = _grid_keys(table)
    shown = ["dataset", "label", "method_entry", *MEASURES, "runtime_s"]
    sel = table[table.selected].copy()
    sel["label"] = [label_of(r, grid_keys) for _, r in sel.iterrows()]
    everything = table.copy()
    everything["label"] = [label_of(r, grid_keys) for _, r in everything.iterrows()]
    sections: list[Section] = []
    if text.notes:
        sections.append(("Comparison with the paper", f"<p>{html.escape(text.notes)}</p>"))
    measures = (
        "<p>As in Venna et al. (2010), Sec. 4.3.1, with input-neighbourhood scale 20: mean smoothed "
        "precision and recall <b>errors</b> (KL costs, lower is better; Fig. 4 plots −1 × them; both distance sets "
        "rescaled to mean 1, σ<sub>i</sub> from entropy log 20, the same σ<sub>i</sub> in the display); rank-based "
        "smoothed precision and recall as <b>goodness</b> 1 − normalised error (Fig. 6) and their F-measure "
        "(Sec. 4.3.2, the parameter-selection criterion); mean precision = mean recall with 20 relevant and 20 "
        "retrieved neighbours, and the area under mean precision vs mean recall for 1..100 retrieved (Fig. 5); "
        "trustworthiness and continuity at k = 20 (Fig. 7); leave-one-out 5-NN classification error in the display "
        "(Table 2; labels: the data set's classes, for the synthetic sets bins of the intrinsic coordinates). For "
        "every method entry with a parameter grid (NeRV's λ, the graph methods' k) the run with the largest F is "
        "selected, as the paper does; only one random start per run (the paper keeps the best of 5).</p>")
    if truth:
        measures += ("<p><b>Input neighbourhoods from the ground truth:</b> every measure takes the data set's known "
                     "latent coordinates as the input space (Euclidean distances between them), not the features "
                     "the methods embedded, as NeRV's Fig. 8 does with SculptFaces' pose and lighting.</p>")
    sections.append(("Measures", measures))
    for d in dict.fromkeys(table.dataset):
        sections.append((f"{d}: F-selected run of every method entry", sel[sel.dataset == d][shown]))
    t2_note = ""
    if spec["reference"] in REFERENCE:
        t2_note = (f"<p>Columns <i>paper: …</i> are the numbers printed in "
                   f"{html.escape(REFERENCE[spec['reference']]['source'])}. The paper's data sets are not "
                   "available here, so no column of ours is the same data set as a paper column: compare the "
                   "ranking of methods, not the numbers.</p>")
    sections.append(("Table 2 analogue: 5-NN classification error of the 2-D displays (lower is better)",
                     t2_note + html_table(t2)))
    sections.append(("Every run", everything[[c for c in ["dataset", "label", "method_entry", "status", *MEASURES,
                                                         "runtime_s", "selected"] if c in everything]]))
    write_page(spec, out, sections)


def ground_truth_needs_a_loader(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """Rule of ``nerv_panels``: ``measure_space: ground_truth`` only on datasets whose loader records known latent
    coordinates (:data:`cova.datasets.GROUND_TRUTH_LOADERS`; the runs' loaders from ``context["runs"]``)."""
    if options.get("measure_space") != "ground_truth":
        return None
    for run in context.get("runs", ()):
        if run.get("loader") not in GROUND_TRUTH_LOADERS:
            return "measure_space", (f"dataset {run['dataset']!r} (loader {run.get('loader')!r}) has no "
                                     f"ground-truth coordinates; allowed loaders: {list(GROUND_TRUTH_LOADERS)}")
    return None


def _needs(options: Mapping[str, Any]) -> dict[str, Any]:
    """The runs' scores hold the NeRV measures in the experiment's input space (the score step's group ``nerv``)."""
    return {"measures": ["nerv"], "settings": {"nerv": {"k_max": options["k_max"],
                                                        "space": options["measure_space"]}}}


@declare({"k_max": [integer(2, None)], "measure_space": [StrOptions({"inputs", "ground_truth"})]},
         rules=[ground_truth_needs_a_loader], run_metrics=_needs)
def nerv_panels(spec: dict[str, Any], out: dict[str, str], *, k_max: int = 50, measure_space: str = "inputs"
                ) -> None:
    """Render experiment ``spec`` (see the module docstring) into ``out`` (keys png, csv, html): the T(k) / C(k)
    curves up to ``k_max``, input neighbourhoods from the inputs' X (``measure_space: inputs``) or from the
    datasets' known latent coordinates (``ground_truth``, NeRV Fig. 8)."""
    truth = measure_space == "ground_truth"
    table, curves = _collect(spec, k_max)
    reference = spec["reference"] if spec["reference"] in REFERENCE else None
    t2 = table2(table, reference)
    write_csv_atomic(table, out["csv"])
    shown = table[table.restart_kept]  # the restarts not kept stay in the CSV only
    _write_html(spec, shown, t2, out, truth)
    _draw(spec, shown, curves, out)
