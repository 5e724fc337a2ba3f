"""The page of a study (:mod:`cova.config.studies`): every run's scores, one scatter per run and the figure of
every protocol the study ran, linked to the protocol's own page; and the same scores as CSV."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..io import write_text_atomic
from ..viz.tables import SCORES_NOTE, write_csv_atomic
from .common import records

#: The scores the study table shows (fractions in the CSV, percent on the page), when any run has them.
STUDY_SCORES = ("s_n", "s_c", "s_s", "trustworthiness", "continuity")


def _relative(target: str, page: str) -> str:
    return html.escape(Path(os.path.relpath(target, Path(page).parent)).as_posix(), quote=True)


def _cell(value: Any, percent: bool) -> str:
    if isinstance(value, (float, np.floating)):
        return "–" if np.isnan(value) else (f"{100 * value:.1f}" if percent else f"{value:g}")
    return html.escape(str(value))


def write_study_page(spec: dict[str, Any], out_html: str, out_csv: str) -> None:
    """Write study ``spec`` (:meth:`cova.config.Plan.study_spec`) as a standalone HTML page ``out_html`` and its
    scores table ``out_csv`` (one row per run: data set, method entry, method, grid values, status, scores).
    Every text from the config is escaped; images are linked by relative paths, so the page works where it lies."""
    table = records({"runs": spec["runs"]})
    shown = [s for s in STUDY_SCORES if s in table and table[s].notna().any()]
    grid = sorted({k for r in spec["runs"] for k in r["grid"]})
    columns = ["dataset", "method_entry", "method", *grid, "status", *shown]
    table = table[[c for c in columns if c in table]]
    write_csv_atomic(table, out_csv)
    name = html.escape(spec["name"])
    parts = [f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Study {name}</title><style>"
             "body{font-family:sans-serif;max-width:1200px;margin:auto} table{border-collapse:collapse}"
             "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}"
             "figure{display:inline-block;margin:6px;width:280px;vertical-align:top} figure img{width:100%}"
             ".protocol img{max-width:100%}</style></head><body>",
             f"<h1>Study {name}</h1>",
             f"<p>Data sets: {html.escape(', '.join(spec['datasets']))}. Protocols: "
             f"{html.escape(', '.join(e['protocol'] for e in spec['experiments']))}. "
             f"{len(spec['runs'])} runs. Table: <a href='{_relative(out_csv, out_html)}'>scores.csv</a>. Every run's "
             f"embedding, for your tools (AnnData, obsm[\"X_&lt;entry&gt;_&lt;inputs&gt;\"]): "
             + ", ".join(f"<a href='{_relative(f, out_html)}'>{html.escape(Path(f).name)}</a>"
                         for f in spec.get("exports", [])) + ".</p>",
             "<h2>Scores</h2>", f"<p>{html.escape(SCORES_NOTE)}</p>", "<table><tr>",
             "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns), "</tr>"]
    for _, row in table.iterrows():
        parts.append("<tr>" + "".join(f"<td>{_cell(row[c], c in shown)}</td>" for c in table.columns) + "</tr>")
    parts.append("</table><h2>Protocols</h2>")
    for e in spec["experiments"]:
        parts.append(f"<div class='protocol'><h3><a href='{_relative(e['html'], out_html)}'>"
                     f"{html.escape(e['protocol'])}</a>: {html.escape(e['title'])}</h3>"
                     f"<a href='{_relative(e['png'], out_html)}'><img src='{_relative(e['png'], out_html)}' "
                     f"alt='{html.escape(e['name'], quote=True)}'></a></div>")
    parts.append("<h2>One scatter per run</h2>")
    for run in spec["runs"]:
        caption = html.escape(f"{run['dataset']}: {run['entry']}")
        src = _relative(run["scatter"], out_html)
        parts.append(f"<figure><a href='{src}'><img src='{src}' alt='{caption}' loading='lazy'></a>"
                     f"<figcaption>{caption}</figcaption></figure>")
    parts.append("</body></html>\n")
    write_text_atomic(out_html, "".join(parts))
