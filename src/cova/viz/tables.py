"""Score tables: machine-readable CSV (fractions) and readable, compact, sortable HTML tables (fractions as
percentages with one decimal, as the papers print them; integers as integers; a missing value as "–").

:func:`html_table` is the one HTML table writer of every page (the results table, the datasets table, the
experiment pages, the gap table): it drops the columns no row has a value in, moves the columns that are the same
on every row into a line above the table, and marks each number with its value so that a click on a header sorts
the rows (:data:`SORT_SCRIPT`, a few lines of inline script: the pages need no other file and work offline).
:func:`page` wraps sections into a standalone page.
"""

from __future__ import annotations

import html
import math
import os
import re
from collections.abc import Iterable, Sequence
from numbers import Integral, Real
from typing import Any

import pandas as pd

from ..errors import UserError
from ..io import write_text_atomic
from ..metrics.summary import SCORE_KEYS

__all__ = ["ID_COLUMNS", "SCORE_COLUMNS", "INTERNAL_COLUMNS", "PERCENT_STEMS", "MISSING", "SORT_SCRIPT", "STYLE",
           "is_percent", "format_value", "compact", "html_table", "page", "scores_table", "family_tables",
           "dataset_summary", "write_csv_atomic", "write_html_atomic", "write_scores_html", "SCORES_NOTE"]

ID_COLUMNS = ["dataset", "inputs", "method_entry", "method", "inputs_id", "params_id", "n_samples", "n_cohorts",
              "status"]
#: The score columns every results table has (NaN where a run lacks one): the keys of
#: :data:`cova.metrics.summary.TABLE_METRICS`.
SCORE_COLUMNS = list(SCORE_KEYS)
#: Columns that name files, not results: left out of the HTML tables (the CSV keeps them).
INTERNAL_COLUMNS = ("inputs_id", "params_id")
#: The measures that are fractions (the registered metric keys that start with one of these stems, e.g.
#: ``s_c_r_orig``, ``trustworthiness_k7``, ``knn_accuracy_std``): shown as percent with one decimal.
PERCENT_STEMS = ("s_n", "s_s", "s_c", "trustworthiness", "continuity", "knn_accuracy", "graph_precision",
                 "centre_fraction", "centroid_triplet_accuracy", "precision_20", "recall_20", "pr_auc",
                 "knn5_error", "heldout_knn_error", "pooled_1nn_error")
#: What a cell without a value shows.
MISSING = "–"
_PERCENT = re.compile(rf"^({'|'.join(map(re.escape, PERCENT_STEMS))})(_[a-z0-9_]+)?$")

STYLE = ("body{font-family:sans-serif;max-width:1400px;margin:0 auto;padding:0 12px}"
         "img.figure{max-width:100%;height:auto;display:block;margin:8px 0}"
         "div.wrap{overflow-x:auto;margin-bottom:1em} table{border-collapse:collapse}"
         "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
         "td.num{text-align:right;font-variant-numeric:tabular-nums} th{cursor:pointer;white-space:nowrap}"
         "th[data-dir=asc]::after{content:' \\25B2'} th[data-dir=desc]::after{content:' \\25BC'}"
         "p.runs{color:#333} p.flag{background:#fdf3d7;padding:4px 8px} p.same{color:#555;font-size:90%}"
         ".holds{background:#e3f4e1}.partly{background:#fdf3d7}.does-not-hold{background:#f9dddd}"
         ".not-testable-here{background:#eee}")

#: Sorting by a click on a header: numbers by the value in their ``data-v`` (missing values last), text by its
#: text; a second click reverses.
SORT_SCRIPT = """
document.querySelectorAll('table.sortable th').forEach(function (th) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0], i = th.cellIndex;
    var dir = th.dataset.dir === 'asc' ? -1 : 1;
    table.querySelectorAll('th').forEach(function (h) { delete h.dataset.dir; });
    th.dataset.dir = dir > 0 ? 'asc' : 'desc';
    var key = function (row) { var c = row.cells[i]; return c === undefined ? undefined : c.dataset.v; };
    Array.from(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b);
      if (x !== undefined && y !== undefined) { return dir * (parseFloat(x) - parseFloat(y)); }
      if (x !== undefined || y !== undefined) { return x === undefined ? 1 : -1; }
      return dir * a.cells[i].textContent.localeCompare(b.cells[i].textContent);
    }).forEach(function (row) { body.appendChild(row); });
  });
});
"""


def is_percent(column: str) -> bool:
    """Whether ``column`` holds a fraction shown as percent (:data:`PERCENT_STEMS`)."""
    return bool(_PERCENT.match(column))


def _number(value: Any) -> float | None:
    """``value`` as a float when it is a number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    return float(value)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT


def format_value(column: str, value: Any) -> str:
    """The text of one cell: a fraction of a percent column (:func:`is_percent`) times 100 with one decimal,
    a ``paper_*`` column (the papers' printed numbers, already percent) with one decimal, an integer as an
    integer, another number with three significant digits, a missing value as :data:`MISSING`."""
    if _missing(value):
        return MISSING
    number = _number(value)
    if number is None:
        return str(value)
    if math.isinf(number):
        return "∞" if number > 0 else "−∞"
    if is_percent(column):
        return f"{100 * number:.1f}"
    if column.startswith("paper_"):
        return f"{number:.1f}"
    if isinstance(value, Integral) or number.is_integer():
        return f"{int(number):,}"
    return f"{number:.3g}" if abs(number) < 1000 else f"{number:,.0f}"


def compact(table: pd.DataFrame, keep: Iterable[str] = ()) -> tuple[pd.DataFrame, list[str]]:
    """The columns worth a column: without :data:`INTERNAL_COLUMNS`, the columns no row has a value in and, when
    there are several rows, the columns that are the same on every row (except score columns, percent or
    ``paper_*``, and ``keep``). Returns the table and the notes saying what was moved out."""
    keep = set(keep)
    notes: list[str] = []
    shown = table.drop(columns=[c for c in INTERNAL_COLUMNS if c in table.columns and c not in keep])
    empty = [c for c in shown.columns
             if c not in keep and all(_missing(v) or v == "" for v in shown[c])]
    if empty:
        notes.append("Not computed for any row: " + ", ".join(map(str, empty)) + ".")
        shown = shown.drop(columns=empty)
    if len(shown) > 1:
        same = [c for c in shown.columns if c not in keep and not is_percent(str(c))
                and not str(c).startswith("paper_") and shown[c].astype(str).nunique(dropna=False) == 1]
        if same and len(same) < len(shown.columns):
            notes.append("Every row: " + "; ".join(f"{c} = {format_value(str(c), shown[c].iloc[0])}"
                                                   for c in same) + ".")
            shown = shown.drop(columns=same)
    if any(_missing(v) for c in shown.columns for v in shown[c]):
        notes.append(f"{MISSING}: the measure does not apply to that row's run or was not computed.")
    return shown, notes


def html_table(table: pd.DataFrame, row_classes: Sequence[str] | None = None, html_columns: Iterable[str] = (),
               keep: Iterable[str] = (), compact_columns: bool = True) -> str:
    """``table`` as a sortable HTML table (:func:`format_value` per cell, every text escaped except the cells of
    ``html_columns``, which hold markup the caller built), after :func:`compact` when ``compact_columns``, with
    its notes below it; ``row_classes`` gives each row a CSS class (e.g. the scorecard's verdicts)."""
    keep = set(keep) | set(html_columns)
    shown, notes = compact(table, keep) if compact_columns else (table, [])
    markup = set(html_columns)
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
    rows = []
    for i, record in enumerate(shown.itertuples(index=False, name=None)):
        cells = []
        for c, v in zip(shown.columns, record):
            if c in markup:
                cells.append(f"<td>{v}</td>")
                continue
            number = _number(v)
            if number is not None and not math.isnan(number):
                cells.append(f"<td class='num' data-v='{number!r}'>{html.escape(format_value(str(c), v))}</td>")
            else:
                cells.append(f"<td>{html.escape(format_value(str(c), v))}</td>")
        cls = f" class='{html.escape(row_classes[i])}'" if row_classes is not None else ""
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    below = "".join(f"<p class='same'>{html.escape(n)}</p>" for n in notes)
    return (f"<div class='wrap'><table class='sortable'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>{below}")


def page(title: str, body: str, style: str = "") -> str:
    """A standalone HTML page: ``title`` (escaped) as its title and heading, ``body`` (markup) and the sorting
    script of :func:`html_table`."""
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}{style}</style></head><body><h1>{html.escape(title)}</h1>{body}"
            f"<script>{SORT_SCRIPT}</script></body></html>\n")


def scores_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per scored embedding, sorted by dataset, inputs and method entry (stable across runs): the
    :data:`ID_COLUMNS`, the :data:`SCORE_COLUMNS` (NaN where a run lacks one, e.g. T/C without input vectors), then
    every other measure any record holds (featMAP's, DOSNES's, the co-embedding and NeRV measures), in name
    order, NaN for the runs without it."""
    table = pd.DataFrame.from_records(records)
    missing = [c for c in ID_COLUMNS if c not in table.columns]
    if missing:
        raise UserError(f"score records lack the fields {missing}")
    others = sorted(c for c in table.columns if c not in ID_COLUMNS and c not in SCORE_COLUMNS)
    table = table.reindex(columns=ID_COLUMNS + SCORE_COLUMNS + others)
    return table.sort_values(["dataset", "inputs", "method_entry"], kind="stable", ignore_index=True)


def family_tables(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The results table split by the measures its runs have (the runs of one kind of input and score group share
    them): per family a heading naming its methods and the rows with only the columns any of them has."""
    measures = [c for c in table.columns if c not in ID_COLUMNS]
    # the measures of a method on an inputs block are those any of its runs there has, so that a degenerate run
    # (NaN everywhere) stays with the others of its kind
    kind = ["method", "inputs"]
    of_kind = {k: tuple(c for c in measures if part[c].notna().any()) for k, part in table.groupby(kind)}
    families: dict[tuple[str, ...], list[int]] = {}
    for i, k in enumerate(table[kind].itertuples(index=False, name=None)):
        families.setdefault(of_kind[k], []).append(i)
    out = []
    for key, rows in families.items():
        part = table.iloc[rows]
        methods = ", ".join(dict.fromkeys(map(str, part["method"])))
        heading = f"{methods} ({len(rows)} runs)" if key else f"{methods}: runs without scores ({len(rows)} runs)"
        out.append((heading, part[ID_COLUMNS + [m for m in measures if m in key]]))
    return out


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
    """A standalone page with ``note`` (text, escaped) and the table (:func:`html_table`)."""
    write_text_atomic(path, page(title, f"<p>{html.escape(note)}</p>{html_table(table)}"))


def write_scores_html(table: pd.DataFrame, path: str | os.PathLike, title: str = "Scores",
                      note: str = SCORES_NOTE) -> None:
    """The results page: one compact table per family of runs (:func:`family_tables`)."""
    parts = [f"<p>{html.escape(note)} {len(table)} runs; the CSV holds every measure of every run.</p>"]
    for heading, part in family_tables(table):
        parts.append(f"<h2>{html.escape(heading)}</h2>{html_table(part)}")
    write_text_atomic(path, page(title, "".join(parts)))
