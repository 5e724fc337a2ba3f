"""Score tables: machine-readable CSV (fractions) and a readable HTML table (percentages, one decimal)."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from ..io import write_text_atomic
from ..metrics.summary import SCORE_KEYS

ID_COLUMNS = ["dataset", "inputs", "method_entry", "method", "inputs_id", "params_id", "n_samples", "n_cohorts",
              "status"]
#: The score columns of the results table: the keys of :data:`cova.metrics.summary.TABLE_METRICS`.
SCORE_COLUMNS = list(SCORE_KEYS)


def scores_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per scored embedding, sorted by dataset, inputs and method entry (stable across runs). A score
    that applies to none of the runs (e.g. T/C without input vectors) is a column of NaN."""
    table = pd.DataFrame.from_records(records)
    missing = [c for c in ID_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"score records lack the fields {missing}")
    table = table.reindex(columns=list(table.columns) + [c for c in SCORE_COLUMNS if c not in table.columns])
    return table[ID_COLUMNS + SCORE_COLUMNS].sort_values(["dataset", "inputs", "method_entry"], kind="stable",
                                                         ignore_index=True)


DETAIL_KEYS = ("generator", "split", "subset", "note", "size", "partition", "stand_in", "n_constant_dropped")


def dataset_summary(name: str, loader: str, description: str, meta: dict[str, Any], n_samples: int,
                    n_features: int, n_cohorts: int) -> dict[str, Any]:
    """One row of the datasets table: what was loaded, and which subset or stand-in it is."""
    details = "; ".join(f"{k}: {meta[k]}" for k in DETAIL_KEYS if meta.get(k) not in (None, ""))
    return {"dataset": name, "loader": loader, "n_samples": n_samples, "n_features": n_features,
            "n_cohorts": n_cohorts, "source": meta.get("source", ""), "details": details,
            "description": description}


def write_csv_atomic(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """CSV with scores as fractions, six decimals, ``\\n`` line ends (byte-identical for identical results)."""
    write_text_atomic(path, table.to_csv(index=False, float_format="%.6f", lineterminator="\n", na_rep="nan"))


SCORES_NOTE = ("Scores in percent (S_c aligned: after a similarity Procrustes fit of the cohort centres to the "
               "prototypes; T/C: trustworthiness/continuity).")


def write_html_atomic(table: pd.DataFrame, path: str | os.PathLike, title: str = "Scores",
                      note: str = SCORES_NOTE) -> None:
    """A standalone HTML page with the table; score columns shown as percentages (one decimal)."""
    shown = table.copy()
    for c in SCORE_COLUMNS:
        if c in shown:
            shown[c] = (100 * shown[c]).map(lambda v: f"{v:.1f}")
    html = shown.to_html(index=False, border=0, classes="scores", escape=True)
    page = (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title><style>"
            "body{font-family:sans-serif} table.scores{border-collapse:collapse}"
            "table.scores td,table.scores th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}"
            f"</style></head><body><h1>{title}</h1><p>{note}</p>{html}</body></html>\n")
    write_text_atomic(path, page)
