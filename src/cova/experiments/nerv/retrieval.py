"""Renderer ``retrieval``: the NeRV paper's quality measures of every run (Venna et al. 2010, Sec. 5 and
Figs. 2-7, Table 2)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...constraints import POSITIVE_INT, declare, integer
from ...metrics import retrieval as ir
from ...viz.figures import save_figure
from ...viz.retrieval import retrieval_figure
from ...viz.tables import write_csv_atomic, write_html_atomic
from ..common import RunLoader, about

__all__ = ["retrieval"]


@declare({"k_max": [integer(2, None)], "pr_relevant": [*POSITIVE_INT, None], "pr_k_max": [*POSITIVE_INT, None],
          "joint": ["boolean"]})
def retrieval(spec: dict[str, Any], out: dict[str, str], *, k_max: int = 50, pr_relevant: int | None = None,
              pr_k_max: int | None = None, joint: bool = False) -> None:
    """Mean smoothed precision and recall (lower is better: KL-based errors), their rank-based versions,
    trustworthiness and continuity curves over k, mean precision/recall at 20 neighbours, and the 5-NN error of
    every run. With ``pr_relevant: r`` also the mean precision-recall curve for r relevant neighbours and
    k = 1..``pr_k_max`` (default 2r) retrieved ones (the paper's Fig. 2 uses r = 75), and its value at k = r
    (where precision equals recall) as ``precision_recall_at_r``. With ``joint: true`` also the smoothed precision
    and recall "in the t-NeRV sense" (the two terms of Eq. 8 on joint probabilities, Fig. 9E)."""
    r = int(pr_relevant) if pr_relevant else None
    text = about(spec)
    load = RunLoader()
    rows, curves, pr_curves = [], [], []
    for run in spec["runs"]:
        inp = load.run_inputs(run)
        Z = load.embedding(run).Z
        row = {"dataset": run["dataset"], "method_entry": run["entry"], "method": run["method"],
               **run.get("grid", {})}
        if np.all(np.isfinite(Z)):
            sp = ir.smoothed_precision_recall(inp.X, Z)
            rp = ir.rank_smoothed_precision_recall(inp.X, Z)
            precision_20, recall_20 = ir.mean_precision_recall(inp.X, Z)
            k = min(k_max, (inp.X.shape[0] - 1) // 2)
            t, c = ir.trustworthiness_curve(inp.X, Z, k), ir.continuity_curve(inp.X, Z, k)
            row.update(smoothed_precision_error=sp.precision, smoothed_recall_error=sp.recall,
                       rank_precision_error=rp.precision, rank_recall_error=rp.recall,
                       precision_20=precision_20, recall_20=recall_20,
                       knn5_error=ir.knn_error(Z, inp.labels, 5), trustworthiness_10=t[min(10, k) - 1],
                       continuity_10=c[min(10, k) - 1])
            curves.append((run, t, c))
            if joint:
                jp = ir.joint_smoothed_precision_recall(inp.X, Z)
                row.update(joint_smoothed_precision_error=jp.precision, joint_smoothed_recall_error=jp.recall)
            if r is not None:
                n = inp.X.shape[0]
                pr = ir.precision_recall_curve(inp.X, Z, n_relevant=min(r, n - 1),
                                               k_max=min(int(pr_k_max or 2 * r), n - 1))
                row["precision_recall_at_r"] = float(pr.precision[min(r, n - 1) - 1])
                pr_curves.append((run, pr))
        rows.append(row)
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out["csv"])
    write_html_atomic(table, out["html"], title=text.title,
                      note=text.caption + " Smoothed and rank-based measures are errors (lower is "
                      "better); precision/recall at 20 neighbours, T/C at k = 10 and the 5-NN error as defined by "
                      "Venna et al. (2010)." + (f" precision_recall_at_r: mean precision (= recall) with {r} relevant "
                                                f"and {r} retrieved neighbours." if r else "")
                      + (f" Deviations and findings: {text.notes}" if text.notes else ""))
    save_figure(retrieval_figure(table, curves, text.title, pr_curves, r), out["png"])
