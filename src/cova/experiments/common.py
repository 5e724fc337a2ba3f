"""What every renderer shares: the runs' files loaded once, their score records, the paper's printed numbers beside
ours, and the CSV / HTML tables.

A renderer receives an experiment spec (built by :meth:`cova.config.Plan.experiment_spec`): the experiment block
of the configuration plus ``runs``, one dict per run with ``dataset``, ``inputs`` (the inputs block's name),
``entry`` (the run's method entry, grid values included), ``group`` (the configured method entry it was expanded
from), ``method`` (the registered method), ``grid`` (its grid values) and the files ``data``, ``inputs_file``,
``embedding`` and ``scores``. It writes ``out["png"]``, ``out["csv"]`` (scores as fractions) and ``out["html"]``
(the page, :mod:`.page`).

The keys every experiment may set (:data:`cova.experiments.registry.COMMON_KEYS`: ``title``, ``caption``,
``notes``, ``reference``, ...) stay in the spec (:func:`about` reads the texts); a renderer's own options are its
declared keyword arguments (:func:`cova.constraints.declare`), with the constraints below for what several
renderers share (:data:`SCORES`, :class:`MappingOf`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..constraints import ListOf, Options, StrOptions, make_constraint
from ..datasets.base import Dataset
from ..embedding import Embedding
from ..inputs import Inputs
from ..io import read_scores
from ..metrics.summary import SCORE_KEYS
from .reference import REFERENCE

__all__ = ["DEFAULT_SCORES", "DEVIATION_COLUMN", "DEVIATION_POINTS", "RECORD_SCORES", "SCORE_NAMES", "SCORES",
           "MappingOf", "About", "about", "RunLoader", "run_scores", "records", "is_deviation", "flag_deviations",
           "with_reference", "findings_note"]

#: Scores shown when an experiment does not list its own.
DEFAULT_SCORES = ["s_n", "s_c", "s_s", "s_c_r"]
#: A score more than this many percentage points from the paper's printed value is named in the tables.
DEVIATION_POINTS = 10.0
#: The column of :func:`flag_deviations`.
DEVIATION_COLUMN = f"off_by_more_than_{DEVIATION_POINTS:g}_points"
#: The scores every record of :func:`records` carries (the results table's; NaN where a run lacks one).
RECORD_SCORES = tuple(SCORE_KEYS)
#: Every score key an experiment may list in ``scores`` (keys of a run's ``scores.json``).
SCORE_NAMES = ("s_n", "s_s", "s_c", "s_c_aligned", "s_c_r", "trustworthiness", "continuity", "s_n_test", "s_s_test",
               "s_c_test", "s_c_aligned_test", "s_c_r_test", "trustworthiness_test", "continuity_test",
               "s_c_r_gold", "s_s_gold", "s_c_r_orig", "s_c_r_orig_test", "trustworthiness_k7", "continuity_k7",
               "knn_accuracy_k1", "knn_accuracy_k3", "knn_accuracy_k5", "knn_accuracy_k10", "knn_accuracy_k15",
               "knn_accuracy_k20", "knn_accuracy_k25", "knn_accuracy_k30", "shepard_goodness", "normalized_stress",
               "centroid_triplet_accuracy", "radius_correlation")
#: The constraint of a renderer's ``scores`` option: a list of :data:`SCORE_NAMES`.
SCORES = [ListOf([StrOptions(set(SCORE_NAMES))], description="a list of score keys (e.g. ['s_n', 's_c_r'])")]


class MappingOf(Options):
    """A mapping of names (str) to values each satisfying one of ``constraints``, with at least ``min_items``
    entries (e.g. ``inputs_labels``: inputs block -> label; ``examples``: grid parameter -> number)."""

    def __init__(self, constraints: Sequence[Any], description: str, min_items: int = 0):
        super().__init__(Mapping, set())
        self.values = [make_constraint(c) for c in constraints]
        self.description = description
        self.min_items = min_items

    def is_satisfied_by(self, val: Any) -> bool:
        return (isinstance(val, Mapping) and len(val) >= self.min_items
                and all(isinstance(k, str) and any(c.is_satisfied_by(v) for c in self.values)
                        for k, v in val.items()))

    def __str__(self) -> str:
        return self.description


class About(NamedTuple):
    """The texts every experiment may set: its ``title`` (default: its name), ``caption`` and ``notes``."""

    title: str
    caption: str
    notes: str


def about(spec: Mapping[str, Any]) -> About:
    """The experiment's title (its name when it sets none), caption and notes (empty when unset)."""
    return About(spec["title"] or spec["name"], spec["caption"], spec["notes"])


def run_scores(run: dict[str, Any]) -> dict[str, Any]:
    """The run's ``scores.json`` (``null`` scores as NaN)."""
    return read_scores(run["scores"])


class RunLoader:
    """Inputs, raw datasets and embeddings of the runs; inputs and raw data loaded once each."""

    def __init__(self) -> None:
        self.inputs: dict[tuple[str, str], Inputs] = {}
        self.datasets: dict[str, Dataset] = {}

    def run_inputs(self, run: dict[str, Any]) -> Inputs:
        """The run's inputs."""
        key = (run["data"], run["inputs_file"])
        if key not in self.inputs:
            self.inputs[key] = Inputs.load(*key)
        return self.inputs[key]

    def dataset(self, run: dict[str, Any]) -> Dataset:
        """The run's dataset as loaded (before the inputs block's features)."""
        if run["data"] not in self.datasets:
            self.datasets[run["data"]] = Dataset.load(run["data"])
        return self.datasets[run["data"]]

    def raw_X(self, run: dict[str, Any]) -> np.ndarray:
        """X of the run's dataset as loaded (before the inputs block's features)."""
        return self.dataset(run).X

    @staticmethod
    def embedding(run: dict[str, Any]) -> Embedding:
        """The run's embedding."""
        return Embedding.load(run["embedding"])

    def __call__(self, run: dict[str, Any]) -> tuple[Inputs, np.ndarray, np.ndarray, np.ndarray]:
        """(inputs, raw X, Z, placed prototypes) of one run."""
        emb = self.embedding(run)
        return self.run_inputs(run), self.raw_X(run), emb.Z, emb.placed_prototypes


def records(spec: dict[str, Any], scores: Sequence[str] = ()) -> pd.DataFrame:
    """One row per run: its names, grid values, status, :data:`RECORD_SCORES` and any other key of ``scores``
    (the experiment's ``scores`` option, e.g. featMAP's opt-in measures)."""
    keys = [*RECORD_SCORES, *(k for k in scores if k not in RECORD_SCORES)]
    rows = []
    for run in spec["runs"]:
        scores = run_scores(run)
        rows.append({"dataset": run["dataset"], "inputs": run["inputs"], "method_entry": run["entry"],
                     "method": run["method"], **run.get("grid", {}), "status": scores.get("status", "ok"),
                     **{k: scores.get(k, np.nan) for k in keys}})
    return pd.DataFrame(rows)


def with_reference(table: pd.DataFrame, key: str | None, scores: list[str]) -> pd.DataFrame:
    """Add the paper's printed numbers (``paper_*``, percent) and a column naming every score that is more than
    :data:`DEVIATION_POINTS` percentage points away from the paper's. Rows of :data:`REFERENCE` are keyed
    (dataset, method, λ) or (dataset, method)."""
    if not key:
        return table
    rows = REFERENCE[key]["rows"]
    lam = table["lam"] if "lam" in table else pd.Series([None] * len(table))
    for s in scores:
        table[f"paper_{s}"] = [rows.get((d, m, lv), rows.get((d, m), {})).get(s, np.nan)
                               for d, m, lv in zip(table.dataset, table.method, lam)]
    return flag_deviations(table, scores)


def is_deviation(ours: float, paper: float) -> bool:
    """Whether our score (a fraction) is more than :data:`DEVIATION_POINTS` points from the paper's (percent)."""
    return bool(np.isfinite(ours) and np.isfinite(paper) and abs(100 * ours - paper) > DEVIATION_POINTS)


def flag_deviations(table: pd.DataFrame, scores: list[str]) -> pd.DataFrame:
    """Add the column naming, per row, every score in ``scores`` that :func:`is_deviation` from its ``paper_*``
    column (:func:`cova.experiments.gaps.paper_gaps` collects them, with their causes, for the rule
    ``paper_gaps``)."""
    table[DEVIATION_COLUMN] = ["; ".join(f"{s} {100 * r[s]:.1f} vs {r[f'paper_{s}']:.1f}" for s in scores
                                         if is_deviation(r[s], r[f"paper_{s}"])) for _, r in table.iterrows()]
    return table


def findings_note(spec: dict[str, Any], extra: str = "") -> str:
    """The experiment's caption, ``extra`` and its notes (as "Deviations and findings")."""
    text = about(spec)
    note = text.caption + extra
    if text.notes:
        note += f" Deviations and findings: {text.notes}"
    return note
