"""An experiment's page, which stands alone: its title, a line generated from the runs (the datasets with their
sizes and the methods actually run, and a flag when the configured title names a dataset none of the runs uses),
the figure, the caption and notes, the tables (:func:`cova.viz.tables.html_table`: compact, sortable, percent with
one decimal), the claims the experiment tests with their verdicts on its own table, and links to every run's
scatter plot and scores.

The verdicts are the scorecard's (:func:`cova.experiments.scorecard.scorecard` on the experiment's CSV, which the
renderer writes before the page), so a page and the scorecard never disagree. Every text that comes from the
configuration (title, caption, notes, claims) is escaped.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..datasets import LOADERS
from ..embedding import GEOMETRIES
from ..io import write_text_atomic
from ..viz.tables import html_table, page, write_csv_atomic
from .claims import check_claims
from .common import about, run_scores
from .reference import REFERENCE
from .scorecard import scorecard

__all__ = ["Section", "CLAIM_COLUMNS", "run_sizes", "runs_line", "unrun_datasets", "claim_card", "page_parts",
           "write_page", "write_tables"]

#: A part of a page below the caption: a heading ("" for none) and a table or markup the code built (never text
#: from the configuration, which is escaped where it is read).
Section = tuple[str, "pd.DataFrame | str"]
#: The scorecard columns a page shows for each claim.
CLAIM_COLUMNS = ["claim_id", "figure", "claim", "verdict", "detail", "data", "ours", "paper_value", "cause"]


def _key(name: str) -> str:
    """A name as compared with a title: lower case, letters and digits only (``COIL-20`` = ``coil20``)."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def run_sizes(spec: Mapping[str, Any]) -> dict[str, int | None]:
    """Dataset -> the points its runs scored (the largest ``n_samples`` of its runs' scores; None when no run of
    it has a scores file yet), in the order of the runs."""
    sizes: dict[str, int | None] = {}
    for run in spec["runs"]:
        n = None
        if run.get("scores") and Path(run["scores"]).is_file():
            n = run_scores(run).get("n_samples")
        known = sizes.get(run["dataset"])
        sizes[run["dataset"]] = n if known is None else max(known, n or 0)
    return sizes


def runs_line(spec: Mapping[str, Any]) -> str:
    """What was run, generated from the spec: ``"Runs: digits (1,797 points), coil20 (1,440 points); methods:
    cova_e1, tsne, pca."`` (the datasets of the runs, the configured method entries they were expanded from)."""
    if not spec["runs"]:
        return "Runs: none."
    data = ", ".join(d if n is None else f"{d} ({n:,} points)" for d, n in run_sizes(spec).items())
    methods = ", ".join(dict.fromkeys(str(r.get("group", r["entry"])) for r in spec["runs"]))
    return f"Runs: {data}; methods: {methods}."


#: The dataset names a title may name: the built-in loaders', except the geometries (a DOSNES title's "sphere"
#: names the display, not the data set).
_NAMED = {_key(n): n for n in LOADERS if n not in GEOMETRIES}


def unrun_datasets(title: str, datasets: Sequence[str]) -> list[str]:
    """The built-in datasets ``title`` names (a word or two adjacent words, compared by :func:`_key`, e.g.
    ``COIL-20``, ``random matrix``) that none of ``datasets`` is (a dataset counts when its name starts with the
    named one: ``mnist1500`` is MNIST)."""
    words = [_key(w) for w in re.findall(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*", title)]
    candidates = dict.fromkeys(words + [a + b for a, b in zip(words, words[1:])])
    ran = [_key(d) for d in datasets]
    return [_NAMED[c] for c in candidates if c in _NAMED and not any(r.startswith(c) for r in ran)]


def claim_card(spec: Mapping[str, Any], csv: str | os.PathLike) -> pd.DataFrame:
    """The scorecard rows of the experiment's own claims (``spec["claims"]``, the configuration's), evaluated on
    its table ``csv``; empty when it declares none."""
    claims = check_claims({spec["name"]: spec})
    if not claims:
        return pd.DataFrame(columns=CLAIM_COLUMNS)
    return scorecard([{**c, "csv": str(csv), "reference": spec.get("reference"),
                       "fallbacks": spec.get("fallbacks") or {}} for c in claims])


def _relative(path: str | os.PathLike, page_path: str | os.PathLike) -> str:
    return Path(os.path.relpath(path, Path(page_path).parent)).as_posix()


def _runs_table(spec: Mapping[str, Any], page_path: str) -> pd.DataFrame:
    rows = []
    for run in spec["runs"]:
        links = ""
        if run.get("scores"):
            scatter = Path(run["scores"]).with_name("scatter.png")
            links = (f"<a href='{html.escape(_relative(scatter, page_path))}'>scatter.png</a> "
                     f"<a href='{html.escape(_relative(run['scores'], page_path))}'>scores.json</a>")
        rows.append({"dataset": run["dataset"], "inputs": run.get("inputs", ""), "method_entry": run["entry"],
                     "method": run.get("method", ""), "files": links})
    return pd.DataFrame(rows)


def _section(heading: str, content: pd.DataFrame | str) -> str:
    head = f"<h2>{html.escape(heading)}</h2>" if heading else ""
    return head + (html_table(content) if isinstance(content, pd.DataFrame) else content)


def page_parts(spec: Mapping[str, Any], out: Mapping[str, str], sections: Sequence[Section],
               note: str | None = None, title: str | None = None) -> tuple[str, str]:
    """The markup of an experiment page below its heading, in two parts (a renderer with its own page, DOSNES's
    interactive one, puts its views between them): the generated runs line, the title flag, the figure
    (``out["png"]``, relative to the page) and ``note`` (text; default the caption); then ``sections``, the claims
    with their verdicts (on ``out["csv"]``, which must be written) and the runs with their files."""
    text = about(spec)
    title = title or text.title
    intro = [f"<p class='runs'>{html.escape(runs_line(spec))}</p>"]
    datasets = list(dict.fromkeys(r["dataset"] for r in spec["runs"]))
    unrun = unrun_datasets(title, datasets) if datasets else []
    if unrun:
        intro.append(f"<p class='flag'>The title is the configuration's: it names {html.escape(', '.join(unrun))}, "
                     f"which none of these runs uses (their data: {html.escape(', '.join(datasets))}).</p>")
    if out.get("png"):
        intro.append(f"<img class='figure' src='{html.escape(_relative(out['png'], out['html']))}' "
                     f"alt='{html.escape(title)}'>")
    note = text.caption if note is None else note
    if note:
        intro.append(f"<p>{html.escape(note)}</p>")
    rest = [_section(h, c) for h, c in sections]
    card = claim_card(spec, out["csv"])
    if len(card):
        rest.append("<h2>Claims of the paper and their verdicts here</h2><p>Each claim is tested on this "
                    "experiment's table, as the scorecard tests it.</p>")
        shown = card[[c for c in CLAIM_COLUMNS if card[c].fillna("").astype(str).ne("").any()]]
        rest.append(html_table(shown, row_classes=[v.replace(" ", "-") for v in card["verdict"]],
                               compact_columns=False))
    if spec["runs"]:
        rest.append(f"<details><summary>The {len(spec['runs'])} runs: scatter plot and scores of each</summary>"
                    f"{html_table(_runs_table(spec, out['html']), html_columns=['files'], compact_columns=False)}</details>")
    return "".join(intro), "".join(rest)


def write_page(spec: Mapping[str, Any], out: Mapping[str, str], sections: Sequence[Section],
               note: str | None = None, title: str | None = None) -> None:
    """Write the experiment page ``out["html"]`` (:func:`page_parts`; ``title`` default the experiment's)."""
    intro, rest = page_parts(spec, out, sections, note, title)
    write_text_atomic(out["html"], page(title or about(spec).title, intro + rest))


def write_tables(spec: Mapping[str, Any], table: pd.DataFrame, out: Mapping[str, str]) -> None:
    """``table`` as CSV and the experiment page with it, the caption, the source of its ``paper_*`` columns and
    the notes."""
    write_csv_atomic(table, out["csv"])
    text = about(spec)
    note = text.caption
    if spec["reference"]:
        note += f" Columns paper_* are the numbers printed in {REFERENCE[spec['reference']]['source']}."
    if text.notes:
        note += f" Deviations: {text.notes}"
    write_page(spec, out, [("", table)], note=note)
