"""Renderer ``cv_error``: NeRV's supervised comparison (Venna et al. 2010, Sec. 5.3): the k-fold 5-NN test error of
every method (Fig. 13) and the paired t-test of the best against the second-best method per data set (Table 3).

Each run is one method on one fold: its inputs block holds out fold ``split.fold`` of a seeded stratified
partition, the method embeds the training and test rows (the test rows' labels hidden from it, or mapped by its
``transform``), and the score step's ``heldout_knn_error`` classifies every test row by its 5 nearest training rows
in the display. The renderer gathers the folds of each (data set, method entry), reports their mean and standard
deviation (ddof = 1), ranks the entries by mean error and tests the best against the second with scipy's paired
t-test over the folds (two-sided, as the paper's p-values read).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import ttest_rel

from ...constraints import declare
from ...errors import UserError
from ...viz.figures import save_figure
from ...viz.names import entry_names
from ...viz.retrieval import cv_error_figure
from ...viz.tables import write_csv_atomic
from ..common import RunLoader, about, findings_note, run_scores
from ..page import write_page

__all__ = ["cv_error", "fold_table", "best_vs_second", "ALPHA"]

#: The level at which a best-vs-second difference counts as significant (the paper's Table 3 boldfaces its
#: "statistically significant winners" and prints no level; 5 %, the usual one).
ALPHA = 0.05


def fold_table(spec: dict[str, Any]) -> pd.DataFrame:
    """One row per run: data set, method entry, fold and its held-out 5-NN error (NaN for a degenerate run)."""
    load, rows = RunLoader(), []
    for run in spec["runs"]:
        split = load.run_inputs(run).spec.get("split") or {}  # the split the inputs step recorded (inputs.npz)
        if "fold" not in split:
            raise UserError(f"experiment {spec['name']}: inputs {run['inputs']!r} hold out no fold (cv_error needs "
                             f"inputs with split: {{n_folds, fold}})")
        scores = run_scores(run)
        rows.append({"dataset": run["dataset"], "inputs": run["inputs"], "method_entry": run["entry"],
                     "method": run["method"], "fold": int(split["fold"]), "n_folds": int(split["n_folds"]),
                     "error": float(scores.get("heldout_knn_error", np.nan))})
    table = pd.DataFrame(rows)
    dup = table.duplicated(["dataset", "method_entry", "fold"])
    if dup.any():
        first = table[dup].iloc[0]
        raise UserError(f"experiment {spec['name']}: fold {first.fold} of {first.method_entry} on {first.dataset} "
                         f"appears twice")
    return table


def best_vs_second(folds: pd.DataFrame) -> dict[str, Any]:
    """The entry with the lowest mean error, the second, and the two-sided paired t-test of their per-fold errors
    (folds both have; NaN p-value when the differences are all equal, e.g. identical errors)."""
    means = folds.groupby("method_entry", sort=False)["error"].mean().sort_values(kind="stable")
    means = means[np.isfinite(means)]
    if means.size < 2:
        return {"best": means.index[0] if means.size else None, "second": None, "p_value": np.nan}
    best, second = means.index[0], means.index[1]
    wide = folds.pivot(index="fold", columns="method_entry", values="error")[[best, second]].dropna()
    diff = wide[best] - wide[second]
    p = float(ttest_rel(wide[best], wide[second]).pvalue) if len(wide) > 1 and np.ptp(diff) > 0 else np.nan
    return {"best": best, "second": second, "p_value": p, "n_paired_folds": int(len(wide))}


@declare({})
def cv_error(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Mean ± standard deviation of the held-out 5-NN error per data set and method entry (Fig. 13) as a table and
    a grouped bar chart, with the best-vs-second paired t-test per data set (Table 3) in the table's ``versus`` and
    ``p_value`` columns (on the best entry's rows) and ``significant_winner`` (true on the best entry's rows where
    p < :data:`ALPHA`, the paper's boldfaced winners; false elsewhere). The CSV holds one row per fold (its
    ``inputs``, ``fold`` and ``error``) beside its entry's summary, so that paired claims over the folds read it;
    the page shows the summary."""
    folds = fold_table(spec)
    rows = []
    for dataset, g in folds.groupby("dataset", sort=False):
        test = best_vs_second(g)
        stats = g.groupby("method_entry", sort=False)["error"].agg(["mean", "std", "count"])
        ranks = stats["mean"].rank(method="min")
        for entry, s in stats.iterrows():
            rows.append({"dataset": dataset, "method_entry": entry,
                         "method": g.loc[g.method_entry == entry, "method"].iloc[0],
                         "mean_error": s["mean"], "std_error": s["std"], "folds": int(s["count"]),
                         "rank": ranks[entry],
                         "versus": test["second"] if entry == test["best"] else "",
                         "p_value": test["p_value"] if entry == test["best"] else np.nan,
                         "significant_winner": bool(entry == test["best"] and test["p_value"] < ALPHA)})
    table = pd.DataFrame(rows)
    tests = "; ".join(f"{d}: {r.method_entry} best, vs {r.versus} p = {r.p_value:.2g}"
                      for d, r in ((r.dataset, r) for r in table[table.versus != ""].itertuples()))
    note = findings_note(spec, f" Paired t-tests (best vs second): {tests}." if tests else "")
    per_fold = folds.drop(columns=["n_folds"]).merge(table.drop(columns=["method"]), on=["dataset", "method_entry"])
    write_csv_atomic(per_fold.sort_values(["dataset", "method_entry", "fold"], kind="stable"), out["csv"])
    text = about(spec)
    write_page(spec, out, [("", table)], title=text.title, note=note)

    save_figure(cv_error_figure(table, int(folds.fold.nunique()), int(folds.n_folds.max()), text.title,
                                entry_names(table.to_dict("records"))), out)
