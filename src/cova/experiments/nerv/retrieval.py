"""Renderer ``retrieval``: the NeRV paper's quality measures of every run (Venna et al. 2010, Sec. 5 and
Figs. 2-7, Table 2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import POSITIVE_INT, declare, integer
from ...metrics import retrieval as ir
from ...viz.figures import save_figure
from ...viz.names import run_names
from ...viz.retrieval import retrieval_figure
from ...viz.tables import write_csv_atomic
from ..common import RunLoader, about, run_scores
from ..page import write_page

__all__ = ["retrieval"]


def _needs(options: Mapping[str, Any]) -> dict[str, Any]:
    """The runs' scores hold the NeRV measures with these settings (the score step's group ``nerv``)."""
    return {"measures": ["nerv"], "settings": {"nerv": {
        "k_max": options["k_max"], "joint": options["joint"], "pr_relevant": options["pr_relevant"],
        "pr_k_max": (options["pr_k_max"] or 2 * options["pr_relevant"]) if options["pr_relevant"] else None}}}


@declare({"k_max": [integer(2, None)], "pr_relevant": [*POSITIVE_INT, None], "pr_k_max": [*POSITIVE_INT, None],
          "joint": ["boolean"]}, run_metrics=_needs)
def retrieval(spec: dict[str, Any], out: dict[str, str], *, k_max: int = 50, pr_relevant: int | None = None,
              pr_k_max: int | None = None, joint: bool = False) -> None:
    """Mean smoothed precision and recall (lower is better: KL-based errors), their rank-based versions,
    trustworthiness and continuity curves over k, mean precision/recall at 20 neighbours, and the 5-NN error of
    every run, and the two ends of the mean precision-recall curve with 20 relevant neighbours (Sec. 4.3.1,
    Fig. 9B): the mean precision with 1 retrieved neighbour (``pr_precision_left``) and with 100
    (``pr_precision_right``; at one k, mean recall is mean precision × k / r, so both order the displays alike).
    With ``pr_relevant: r`` also the mean precision-recall curve for r relevant neighbours and k = 1..``pr_k_max``
    (default 2r) retrieved ones (the paper's Fig. 2 uses r = 75), its value at k = r (where precision equals
    recall) as ``precision_recall_at_r`` and its ends, k = 1 and k = ``pr_k_max``, as ``pr_r_precision_left`` and
    ``pr_r_precision_right``. With ``joint: true`` also the smoothed precision and recall "in the t-NeRV sense"
    (the two terms of Eq. 8 on joint probabilities, Fig. 9E). Every measure is the run's own, computed by the score
    step (:func:`cova.metrics.retrieval.nerv_measures`, group ``nerv``)."""
    r = int(pr_relevant) if pr_relevant else None
    text = about(spec)
    load = RunLoader()
    rows, curves, pr_curves = [], [], []
    for run in spec["runs"]:
        Z = load.embedding(run).Z
        row = {"dataset": run["dataset"], "method_entry": run["entry"], "method": run["method"],
               **run.get("grid", {})}
        if np.all(np.isfinite(Z)):
            scores = run_scores(run)
            n = Z.shape[0]
            k = min(k_max, (n - 1) // 2)
            with np.load(run["per_point"]) as f:
                t, c = f["t_curve"][:k], f["c_curve"][:k]
                ends = (float(f["pr_precision"][0]), float(f["pr_precision"][-1]))  # k = 1 and 100 (n - 1 if fewer)
                own = min(int(pr_k_max or 2 * r), n - 1) if r is not None else 0  # another figure's may be longer
                pr = (ir.PrecisionRecallCurve(f["pr_r_k"][:own], f["pr_r_precision"][:own], f["pr_r_recall"][:own])
                      if r is not None else None)
            row.update({key: scores[key] for key in ("smoothed_precision_error", "smoothed_recall_error",
                                                    "rank_precision_error", "rank_recall_error", "precision_20",
                                                    "recall_20", "knn5_error")},
                       trustworthiness_10=t[min(10, k) - 1], continuity_10=c[min(10, k) - 1])
            curves.append((run, t, c))
            if joint:
                row.update(joint_smoothed_precision_error=scores["joint_smoothed_precision_error"],
                           joint_smoothed_recall_error=scores["joint_smoothed_recall_error"])
            if pr is not None:
                row["precision_recall_at_r"] = scores["precision_recall_at_r"]
                pr_curves.append((run, pr))
            row.update(pr_precision_left=ends[0], pr_precision_right=ends[1])  # the curves' ends, after the rest
            if pr is not None:
                row.update(pr_r_precision_left=float(pr.precision[0]), pr_r_precision_right=float(pr.precision[-1]))
        rows.append(row)
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out["csv"])
    write_page(spec, out, [("", table)], title=text.title,
                      note=text.caption + " Smoothed and rank-based measures are errors (lower is "
                      "better); precision/recall at 20 neighbours, T/C at k = 10 and the 5-NN error as defined by "
                      "Venna et al. (2010); pr_precision_left and pr_precision_right: mean precision with 20 relevant "
                      "and 1 or 100 retrieved neighbours, the ends of the precision-recall curve."
                      + (f" precision_recall_at_r: mean precision (= recall) with {r} relevant and {r} retrieved "
                         f"neighbours; pr_r_precision_left and pr_r_precision_right: mean precision with {r} relevant "
                         f"and 1 or {pr_k_max or 2 * r} retrieved." if r else "")
                      + (f" Deviations and findings: {text.notes}" if text.notes else ""))
    names = dict(zip((run["entry"] for run in spec["runs"]), run_names(spec["runs"])))
    save_figure(retrieval_figure(table, curves, text.title, pr_curves, r, names), out)
