"""The scorecard: every claim of the papers (:mod:`.claims`) with its verdict on this run's experiment tables.

:func:`scorecard` evaluates the claims the plan collected (:meth:`cova.config.Plan.claims`): each on the table of
its experiment, or ``not testable here`` with the reason when the configuration does not run that experiment
(an overlay's ``exclude_experiments``). A verdict other than ``holds`` carries its cause: the claim's own
``cause`` (a measured one, with its ``evidence``), for printed numbers the gap table's cause of the same cells
(:data:`.gaps.CAUSES`), or "unexplained". :func:`write_scorecard` writes the table as CSV and as an HTML page
with the counts per paper first; :func:`reproduction_record` turns a scorecard into the Markdown record
``docs/reproduction.md``.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import write_text_atomic
from ..viz.tables import write_csv_atomic
from .claims import FAILS, PARTLY, UNTESTABLE, VERDICTS, evaluate, select, verdict
from .gaps import CAUSES, UNEXPLAINED
from .report_text import PAPER_NAMES, data_origin
from .run_history import COMPUTING_PATHS, Stretch, head, run_history

__all__ = ["COLUMNS", "PAPER_NAMES", "scorecard", "summary", "write_scorecard", "reproduction_record", "write_record"]

#: The scorecard's columns.
COLUMNS = ["paper", "claim_id", "figure", "claim", "test", "verdict", "detail", "data", "ours", "paper_value",
           "cause", "evidence", "experiment"]


def _data(claim: Mapping[str, Any], rows: pd.DataFrame) -> str:
    """Which data the verdict ran on: the datasets of the rows it used, the paper's own (the experiment's
    ``paper_data``) or substitutes (a fallback the plan put in place is named as such)."""
    used = set(map(str, rows["dataset"])) if "dataset" in rows else set()
    if not used:
        return ""
    origin, names = data_origin(used, claim.get("paper_data"), claim.get("fallbacks"))
    return f"{origin}: " + ", ".join(names)


def _gap_cause(claim: Mapping[str, Any], rows: pd.DataFrame) -> tuple[str, str] | None:
    """For a printed-number claim, the gap table's cause of its cells (the first that matches), if any."""
    reference = claim.get("reference")
    if claim["test"] != "value" or not reference:
        return None
    for _, row in rows.iterrows():
        for score in claim["scores"]:
            cause = next((c for c in CAUSES if c.matches(reference, score, row)), None)
            if cause is not None:
                text = (cause.cause if cause.explains is True else
                        f"{UNEXPLAINED} in part ({cause.cause})" if cause.explains == "partly" else
                        f"{UNEXPLAINED} ({cause.cause})")
                return text, cause.evidence
    return None


def scorecard(claims: list[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per claim (``claims``: the checked claims, each with its ``experiment``, ``paper``, ``csv`` (the
    experiment's table, ``None`` when not run), ``excluded`` (why not) and ``paper_data``)."""
    tables: dict[str, pd.DataFrame] = {}
    rows = []
    for claim in claims:
        base = {"paper": claim["paper"], "claim_id": claim["id"], "figure": claim["figure"], "claim": claim["claim"],
                "test": claim["test"], "experiment": claim["experiment"], "data": "", "ours": "", "paper_value": "",
                "cause": "", "evidence": ""}
        if claim["test"] == "not_testable":
            rows.append({**base, "verdict": UNTESTABLE, "detail": claim["reason"]})
            continue
        if claim.get("csv") is None:
            rows.append({**base, "verdict": UNTESTABLE,
                         "detail": f"this configuration does not run experiment {claim['experiment']}: "
                                   f"{claim.get('excluded') or 'not configured'}"})
            continue
        table = tables.get(claim["csv"])
        if table is None:
            table = tables[claim["csv"]] = pd.read_csv(claim["csv"])
        try:
            parts = evaluate(claim, table)
        except (TypeError, ValueError) as err:  # e.g. a score column of text: the claim does not fit this table
            rows.append({**base, "verdict": UNTESTABLE,
                         "detail": f"the table of {claim['experiment']} does not fit the claim: {err}"})
            continue
        v = verdict(claim, parts)
        selected = select(table, claim.get("where"))
        row = {**base, "verdict": v.verdict, "detail": v.detail, "ours": v.ours, "paper_value": v.paper_value,
               "data": _data(claim, selected)}
        if v.verdict in (PARTLY, FAILS):
            if claim.get("cause"):
                row["cause"], row["evidence"] = claim["cause"], claim.get("evidence") or ""
            else:
                found = _gap_cause(claim, selected)
                row["cause"], row["evidence"] = found if found else (UNEXPLAINED, "")
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(card: pd.DataFrame) -> pd.DataFrame:
    """Per paper: claims in total and per verdict."""
    counts = pd.crosstab(card["paper"], card["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    counts.insert(0, "claims", counts.sum(axis=1))
    counts.index = [PAPER_NAMES.get(p, p) for p in counts.index]
    counts.loc["all"] = counts.sum()
    return counts.rename_axis("paper").reset_index()


_STYLE = ("body{font-family:sans-serif;max-width:1400px} table{border-collapse:collapse;margin-bottom:1.5em}"
          "td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
          ".holds{background:#e3f4e1}.partly{background:#fdf3d7}.does-not-hold{background:#f9dddd}"
          ".not-testable-here{background:#eee}")


def _html_table(table: pd.DataFrame, paper: str | None = None) -> str:
    """``table`` as HTML, rows coloured by verdict; with ``paper``, experiment names link to their pages."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = []
    for _, r in table.iterrows():
        cls = html.escape(str(r.get("verdict", "")).replace(" ", "-"))
        cells = []
        for c in table.columns:
            text = html.escape("" if pd.isna(r[c]) else str(r[c]))
            if paper and c == "experiment" and text:
                text = f"<a href='{html.escape(paper)}/{text}.html'>{text}</a>"
            cells.append(f"<td>{text}</td>")
        body.append(f"<tr class='{cls}'>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def write_scorecard(claims: list[Mapping[str, Any]], csv: str | Path, page: str | Path, about: str = "") -> pd.DataFrame:
    """:func:`scorecard` as CSV and as an HTML page: the counts per paper, then every claim (experiment names link
    to the experiment pages beside it)."""
    card = scorecard(claims)
    write_csv_atomic(card, csv)
    parts = [f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Scorecard</title><style>{_STYLE}</style>"
             "</head><body><h1>Did the papers reproduce?</h1>",
             f"<p>{html.escape(about)}</p>" if about else "",
             "<p>Each claim a paper makes about its results is a predicate over the table of the experiment that "
             "tests it; its verdict is computed from this run's tables. 'partly' names the parts that do not hold; "
             "a verdict other than 'holds' carries its measured cause or 'unexplained'.</p>",
             _html_table(summary(card))]
    for paper, group in card.groupby("paper", sort=False):
        parts.append(f"<h2>{html.escape(PAPER_NAMES.get(paper, paper))}</h2>")
        parts.append(_html_table(group.drop(columns=["paper"]), paper=str(paper)))
    parts.append("</body></html>\n")
    write_text_atomic(page, "".join(parts))
    return card


def _md(text: Any) -> str:
    return str("" if pd.isna(text) else text).replace("|", "\\|").replace("\n", " ")


def reproduction_record(card: pd.DataFrame, history: list[Stretch], generated_at: str, date: str, config: str,
                        previous: pd.DataFrame | None = None) -> str:
    """The Markdown record of a scorecard: where it was generated from (``generated_at``: the commit checked out
    then), the counts per paper, the commits the run was made from (``history``), the verdicts that changed since
    ``previous`` (the last record's claims), and every claim's verdict."""
    commits = ", ".join(f"`{s.commit}`" for s in history)
    lines = ["# Did the papers reproduce?", "",
             f"Generated by `snakemake docs/reproduction.md` on {date}, at commit `{generated_at}`, from the "
             f"scorecard of a run of `{config}` whose jobs ran at commit{'s' if len(history) > 1 else ''} {commits} "
             "(see [The run](#the-run)). Do not edit: rerun the rule. Each claim is declared beside its experiment in "
             "`config.yaml` (`claims:`); docs/claims.md says how a claim is tested.", "",
             "| paper | claims | " + " | ".join(VERDICTS) + " |", "|---|---|" + "---|" * len(VERDICTS)]
    for _, r in summary(card).iterrows():
        lines.append(f"| {r['paper']} | {r['claims']} | " + " | ".join(str(r[v]) for v in VERDICTS) + " |")
    lines.append("")
    lines += _run_section(history)
    if previous is None:
        lines += ["## Changed since the previous record", "", "This is the first record: there is no previous one to "
                  "compare with.", ""]
    else:
        before = dict(zip(previous["claim_id"], previous["verdict"]))
        changed = [(i, before[i], v) for i, v in zip(card["claim_id"], card["verdict"]) if i in before
                   and before[i] != v]
        new = [i for i in card["claim_id"] if i not in before]
        gone = [i for i in before if i not in set(card["claim_id"])]
        lines += ["## Changed since the previous record", ""]
        if not (changed or new or gone):
            lines.append("No verdict changed.")
        lines += [f"- `{i}`: {a} → {b}" for i, a, b in changed]
        lines += [f"- `{i}`: new claim" for i in new] + [f"- `{i}`: claim removed" for i in gone]
        lines.append("")
    for paper, group in card.groupby("paper", sort=False):
        lines += [f"## {PAPER_NAMES.get(paper, paper)}", "",
                  "| claim | figure | claim | verdict | data | ours | paper | detail, cause |",
                  "|---|---|---|---|---|---|---|---|"]
        for _, r in group.iterrows():
            why = "; ".join(_md(x) for x in (r["detail"], r["cause"]) if _md(x))
            lines.append(f"| `{r['claim_id']}` | {_md(r['figure'])} | {_md(r['claim'])} | **{r['verdict']}** | "
                         f"{_md(r['data'])} | {_md(r['ours'])} | {_md(r['paper_value'])} | {why} |")
        lines.append("")
    return "\n".join(lines)


def _run_section(history: list[Stretch]) -> list[str]:
    """The record's account of the commits the run's jobs finished under."""
    lines = ["## The run", "",
             "A paper-scale run takes hours and is resumed; when its checkout moved forward between two resumes, the "
             "run went on at the new commit. Snakemake reruns a job only when its inputs change, so the jobs that "
             "had finished keep the outputs of the commit they ran at. Each row is a commit the checkout was at, "
             "the number of jobs that finished there, and the commits since the row above that touch "
             f"{', '.join(f'`{p}`' for p in COMPUTING_PATHS)} (listed below the table).", "",
             "| commit | checked out (UTC) | jobs finished | changes since the row above |", "|---|---|---|---|"]
    for s in history:
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(s.since))
        lines.append(f"| `{s.commit}` | {when} | {s.jobs:,} | {len(s.changes)} |")
    lines.append("")
    for before, s in zip(history, history[1:]):
        if s.changes:
            lines += [f"<details><summary>{len(s.changes)} commits from <code>{before.commit}</code> to "
                      f"<code>{s.commit}</code></summary>", ""]
            lines += [f"- `{c.split(' ', 1)[0]}` {_md(c.split(' ', 1)[1] if ' ' in c else '')}" for c in s.changes]
            lines += ["", "</details>", ""]
    return lines


def write_record(card_csv: str | Path, out: str | Path, repo: str | Path, jobs_dir: str | Path, date: str,
                 config: str) -> str:
    """:func:`reproduction_record` of the scorecard ``card_csv`` and the run history of the checkout ``repo``
    (its jobs' benchmark files under ``jobs_dir``), compared with the record ``out`` holds now."""
    card = pd.read_csv(card_csv, keep_default_na=False)
    previous = _record_verdicts(Path(out)) if Path(out).is_file() else None
    text = reproduction_record(card, run_history(repo, jobs_dir), head(repo), date, config, previous)
    write_text_atomic(out, text)
    return text


def _record_verdicts(path: Path) -> pd.DataFrame:
    """The (claim id, verdict) pairs of a record written by :func:`reproduction_record`."""
    ids, verdicts = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split(" | ")]
        if line.startswith("| `") and len(cells) >= 4:
            ids.append(cells[0].lstrip("| `").rstrip("`"))
            verdicts.append(cells[3].strip("*"))
    return pd.DataFrame({"claim_id": ids, "verdict": verdicts})

