"""Renderer ``coembed_timing`` (co-embedding paper Fig. 12): the time of every co-embedding method against the
data size m = n and the embedding dimension k.

The runs name the methods and their parameters (as the embed step saved them); the renderer fits each again on
seeded synthetic relations of the configured ``sizes`` (m = n) and ``dims`` (k) and records the wall-clock and
CPU time of ``fit`` with the job's threads. The relations follow the paper's Eq. 44: m row points and n column
points drawn from the same mixture of five Gaussian clusters in the plane, r_ij = exp(−‖x_i − y_j‖² / mean d²).
A method entry with a search (the proposed method's Γ grid, ACAS's grid) is timed as configured, so the table has
the proposed method with the search excluded (fixed parameters) and included when both entries are configured.
Each (method entry, size, k) is fitted up to ``repeats`` times (5), stopping once the fits of that setting have
taken ``budget_s`` seconds (2) in all, after one untimed warm-up fit at the smallest size (numba compilation and
imports are not the method's time); the table keeps the minimum and the number of timed fits. Fast methods are so
timed several times (robust to a busy machine), slow ones once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ...affinity.relation import gaussian_relation
from ...constraints import POSITIVE, POSITIVE_INT, SEED, Block, ListOf, declare, integer
from ...embedding import Embedding
from ...inputs import Inputs, Relation
from ...methods.registry import make_method
from ...threads import job_threads
from ...viz.figures import save_figure
from ...viz.names import entry_names
from ...viz.runtimes import coembedding_times_figure
from ...viz.tables import write_csv_atomic
from ..common import about, findings_note
from ..page import write_page

__all__ = ["synthetic_relation", "coembed_timing", "timing_findings", "Claim", "claim_options"]

log = logging.getLogger("cova")


def synthetic_relation(m: int, n: int, random_state: int = 0, n_clusters: int = 5) -> Inputs:
    """Inputs holding an m×n Eq. 44 relation between two samples of one Gaussian mixture in the plane."""
    rng = np.random.default_rng([int(random_state), m, n])
    centres = rng.uniform(-10, 10, size=(n_clusters, 2))
    rows_c, cols_c = rng.integers(n_clusters, size=m), rng.integers(n_clusters, size=n)
    Xr = centres[rows_c] + rng.normal(size=(m, 2))
    Xc = centres[cols_c] + rng.normal(size=(n, 2))
    names = [f"cluster {j}" for j in range(n_clusters)]
    rel = Relation(gaussian_relation(Xr, Xc)[0], [f"row {i}" for i in range(m)], [f"column {j}" for j in range(n)],
                   row_labels=rows_c, row_label_names=names, column_labels=cols_c, column_label_names=names)
    return Inputs(labels=rows_c, label_names=names, relation=rel)


def _fit_time(method: str, params: dict[str, Any], inputs: Inputs) -> tuple[float, float]:
    est = make_method(method, params)
    wall, cpu = time.perf_counter(), time.process_time()
    est.fit(inputs)
    return time.perf_counter() - wall, time.process_time() - cpu


def timing_findings(table: pd.DataFrame, proposed_entry: str | None, fast: list[str], slow: list[str],
                    limit_s: float = 1.0) -> str:
    """Computed statements: the proposed entry's time at the largest size and k, and whether every ``fast`` entry
    is faster than every ``slow`` entry at every (size, k)."""
    parts = []
    if proposed_entry and proposed_entry in set(table.method_entry):
        t = table[table.method_entry == proposed_entry]
        top = t[(t.m == t.m.max()) & (t.k == t.k.max())]
        if len(top):
            s = float(top.wall_s.iloc[0])
            parts.append(f"{proposed_entry} at m = n = {int(top.m.iloc[0])}, k = {int(top.k.iloc[0])}: {s:.3g} s "
                         f"({'within' if s <= limit_s else 'over'} {limit_s:g} s)")
    have = set(table.method_entry)
    fast, slow = [f for f in fast if f in have], [s for s in slow if s in have]
    if fast and slow:
        wide = table.pivot_table(index=["m", "k"], columns="method_entry", values="wall_s", aggfunc="min")
        ok = (wide[fast].max(axis=1) < wide[slow].min(axis=1))
        parts.append(f"{', '.join(fast)} faster than {', '.join(slow)} at {int(ok.sum())} of {len(ok)} (size, k) "
                     f"settings")
    return " Computed from this table: " + "; ".join(parts) + "." if parts else ""


class Claim(NamedTuple):
    """The method entries the paper's timing claim compares."""

    proposed: str | None
    fast: list[str]
    slow: list[str]


_NAMES = ListOf([str], min_items=0, description="a list of method entry names")


@declare({"proposed": [str, None], "fast": [_NAMES], "slow": [_NAMES]})
def claim_options(*, proposed: str | None = None, fast: Sequence[str] = (), slow: Sequence[str] = ()) -> Claim:
    """The ``claim`` block of ``coembed_timing``: the ``proposed`` entry (its time at the largest setting is
    stated) and whether every ``fast`` entry is faster than every ``slow`` one (:func:`timing_findings`)."""
    return Claim(proposed, list(fast), list(slow))


@declare({"sizes": [ListOf([integer(10, None)], description="a list of ints ≥ 10")],
          "dims": [ListOf(POSITIVE_INT, description="a list of ints ≥ 1")], "repeats": POSITIVE_INT,
          "budget_s": POSITIVE, "random_state": SEED,
          "claim": [Block(claim_options, "a mapping {proposed, fast, slow}"), None]})
def coembed_timing(spec: dict[str, Any], out: dict[str, str], *, sizes: Sequence[int] = (250, 500, 1000, 2000),
                   dims: Sequence[int] = (2, 5, 10), repeats: int = 5, budget_s: float = 2.0, random_state: int = 0,
                   claim: Mapping[str, Any] | None = None) -> None:
    """Time every run's method (see the module docstring): on relations of m = n = ``sizes``, at the embedding
    dimensions ``dims``, up to ``repeats`` fits per setting within ``budget_s`` seconds (relations seeded by
    ``random_state``); ``claim`` names the entries the paper's claim compares (:func:`claim_options`)."""
    sizes = [int(m) for m in sizes]
    dims = [int(k) for k in dims]
    budget = float(budget_s)
    entries = {}
    for run in spec["runs"]:
        if run["entry"] not in entries:
            emb = Embedding.load(run["embedding"])
            entries[run["entry"]] = (run["method"], {k: v for k, v in emb.params.items() if k != "n_components"})
    threads = job_threads()
    relations = {m: synthetic_relation(m, m, random_state=random_state) for m in sizes}
    rows = []
    for entry, (method, params) in entries.items():
        _fit_time(method, {**params, "n_components": min(dims)}, relations[min(sizes)])  # warm-up
        for m in sizes:
            for k in dims:
                times = [_fit_time(method, {**params, "n_components": k}, relations[m])]
                while len(times) < repeats and sum(t[0] for t in times) < budget:
                    times.append(_fit_time(method, {**params, "n_components": k}, relations[m]))
                wall, cpu = min(t[0] for t in times), min(t[1] for t in times)
                log.info("%s at m = n = %d, k = %d: %.3f s wall, %.3f s CPU", entry, m, k, wall, cpu)
                rows.append({"method_entry": entry, "method": method, "search": params.get("search", "none"),
                             "m": m, "n": m, "k": k, "wall_s": wall, "cpu_s": cpu, "threads": threads,
                             "timed_fits": len(times)})
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out["csv"])
    stated = claim_options(**(claim or {}))
    note = findings_note(spec, timing_findings(table, stated.proposed, stated.fast, stated.slow))
    title = about(spec).title
    write_page(spec, out, [("", table)], title=title, note=note)
    save_figure(coembedding_times_figure(table, sizes, dims, threads, title, entry_names(rows)), out)
