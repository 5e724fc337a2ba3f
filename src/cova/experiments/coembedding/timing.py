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
from typing import Any

import numpy as np
import pandas as pd

from ...affinity.relation import gaussian_relation
from ...embedding import Embedding
from ...inputs import Inputs, Relation
from ...methods.registry import make_method
from ...threads import job_threads
from ...viz.figures import save_figure
from ...viz.tables import write_csv_atomic, write_html_atomic
from ..common import findings_note

__all__ = ["synthetic_relation", "coembed_timing", "timing_findings"]

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


def coembed_timing(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Time every run's method (see the module docstring)."""
    import matplotlib.pyplot as plt

    sizes = [int(s) for s in spec.get("sizes", [250, 500, 1000, 2000])]
    dims = [int(k) for k in spec.get("dims", [2, 5, 10])]
    repeats, budget = int(spec.get("repeats", 5)), float(spec.get("budget_s", 2.0))
    entries = {}
    for run in spec["runs"]:
        if run["entry"] not in entries:
            emb = Embedding.load(run["embedding"])
            entries[run["entry"]] = (run["method"], {k: v for k, v in emb.params.items() if k != "n_components"})
    threads = job_threads()
    relations = {m: synthetic_relation(m, m, random_state=int(spec.get("random_state", 0))) for m in sizes}
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
    claim = spec.get("claim", {})
    note = findings_note(spec, timing_findings(table, claim.get("proposed"), list(claim.get("fast", [])),
                                               list(claim.get("slow", []))))
    write_html_atomic(table, out["html"], title=spec.get("title", spec["name"]), note=note)
    fig, axes = plt.subplots(1, len(dims), figsize=(4.6 * len(dims), 3.8), dpi=100, squeeze=False)
    for ax, k in zip(axes[0], dims):
        for i, (entry, g) in enumerate(table[table.k == k].groupby("method_entry", sort=False)):
            ax.plot(g.m, g.wall_s, marker="o", ms=3, color=f"C{i % 10}", label=entry)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [str(m) for m in sizes])
        ax.minorticks_off()
        ax.set_xlabel("m = n")
        ax.set_ylabel(f"wall-clock seconds ({threads} threads)")
        ax.set_title(f"k = {k}", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle(spec.get("title", spec["name"]), fontsize=10)
    save_figure(fig, out["png"])
