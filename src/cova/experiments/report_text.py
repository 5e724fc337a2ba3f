"""The words the Snakemake report uses: the papers' names, the report's categories, and what an experiment's
caption states about what ran.

The rules read the categories from here (one per paper, named as the paper names itself; one per study) and hand
each experiment job :func:`experiment_facts` as a parameter, which its caption template
(``workflow/report/experiment.rst``) renders. Everything the caption says about data and methods therefore comes
from the plan of the run, not from text written for one configuration.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import UserError

__all__ = ["PAPER_NAMES", "data_origin", "experiment_facts", "paper_category", "rst_text", "study_category"]

#: How the papers name themselves (the report's categories, the scorecard's headings).
PAPER_NAMES = {"cova": "COVA", "nerv": "NeRV", "dosnes": "DOSNES", "coembedding": "Co-embeddings",
               "featmap": "featMAP"}

#: Characters reStructuredText reads as markup inside a paragraph (emphasis, literals, references, substitutions).
_RST_MARKUP = re.compile(r"([\\*`_|])")


def paper_category(paper: str) -> str:
    """The report category of paper ``paper`` (a key of :data:`PAPER_NAMES`): the paper's own name. No category
    name holds a colon: Snakemake writes each as a reStructuredText link target, where a colon ends the name."""
    if paper not in PAPER_NAMES:
        raise UserError(f"paper {paper!r} has no report category; papers: {sorted(PAPER_NAMES)}")
    return PAPER_NAMES[paper]


def study_category(study: str) -> str:
    """The report category of study ``study``: ``Study <name>`` (study names never hold a colon: the schema's
    ``$defs/name``)."""
    if ":" in study:
        raise UserError(f"study {study!r}: a report category cannot hold ':'")
    return f"Study {study}"


def rst_text(text: str) -> str:
    """``text`` as literal reStructuredText: its markup characters escaped, its whitespace (folded YAML)
    collapsed into single spaces."""
    return _RST_MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def data_origin(used: Iterable[str], paper_data: Iterable[str] | None,
                fallbacks: Mapping[str, str] | None) -> tuple[str, list[str]]:
    """Whether data sets ``used`` are the paper's own or substitutes, and their names.

    ``paper_data``: the experiment's data sets that are the paper's own (config ``paper_data``); every other one is
    a substitute. ``fallbacks``: original -> fallback for data sets the plan replaced because their local file is
    missing (``cova.config.plan.resolve_fallbacks``); a fallback is named as such and is never the paper's.
    Returns ``("paper's", names)`` when all are the paper's own, else ``("substitute", names)``."""
    own = set(paper_data or [])
    fallbacks = dict(fallbacks or {})
    used = sorted(set(map(str, used)))
    names = [f"{fallbacks[d]} (fallback for {d})" if d in fallbacks else d for d in used]
    if used and all(d in own and d not in fallbacks for d in used):
        return "paper's", names
    return "substitute", names


def experiment_facts(spec: Mapping[str, Any], datasets: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What the report caption of an experiment states, derived from its plan (``Plan.experiment_spec``).

    ``datasets``: the configuration's ``datasets`` block (for each data set's description). Returns, as
    reStructuredText-safe text: ``paper`` (the paper's name), ``title``, ``data`` (one line per data set that ran: name, description, and whether it is the paper's own or a
    substitute when the experiment says which are the paper's), ``methods`` (the registered methods that ran, in
    run order), ``n_runs`` and ``compares`` (True when the table has the paper's printed numbers beside ours)."""
    runs = spec["runs"]
    fallbacks = spec.get("fallbacks") or {}
    fallback_of = {fb: original for original, fb in fallbacks.items()}
    used = list(dict.fromkeys(run["dataset"] for run in runs))
    data = []
    for name in used:
        described = datasets.get(name, {}).get("description")
        line = f"``{name}``" + (f": {rst_text(described)}" if described else "")
        if name in fallback_of:
            line += f" (fallback for ``{fallback_of[name]}``, whose file was not supplied)"
        elif spec.get("paper_data") is not None:
            origin, _ = data_origin([name], spec["paper_data"], None)
            line += " (the paper's data)" if origin == "paper's" else " (substitute)"
        data.append(line)
    return {
        "paper": paper_category(spec["paper"]),
        "title": rst_text(spec.get("title") or spec["name"]),
        "data": data,
        "methods": ", ".join(f"``{m}``" for m in dict.fromkeys(run["method"] for run in runs)),
        "n_runs": len(runs),
        "compares": bool(spec.get("reference")),
    }
