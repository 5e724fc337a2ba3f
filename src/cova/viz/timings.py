"""Where the time of a whole reproduction goes: per rule and per experiment, from the jobs' benchmark files.

Every rule writes a Snakemake ``benchmark:`` file (``results/benchmarks/jobs/{rule}/...{wildcards}.tsv``, or
``{rule}.tsv`` for a rule without wildcards: wall seconds
``s``, ``cpu_time``, ``max_rss`` in MB). :func:`render_timings` turns them into

* a per-rule table: jobs, total / mean / largest wall seconds, CPU seconds, peak memory, share of the total;
* a per-experiment table: the jobs an experiment waits for (every run's fetch, dataset, inputs, embed and score job,
  and its own rendering job; a job shared by several experiments counts in each), their wall seconds, and the
  longest chain among them (what no number of cores can shorten);
* the :data:`SLOWEST_JOBS` slowest jobs one by one (wall and CPU seconds, peak memory);
* an estimate of the whole run's wall time on N cores: ``max(critical path, core-seconds / N)``, core-seconds being
  Σ max(wall × cores held, CPU) over the jobs: a job holds the cores of the threads its rule declares (at most N,
  as Snakemake scales them down), at least one. The CPU time alone would not do: under the job server a benchmark
  file records the CPU of the thin client, not of the job. Snakemake schedules greedily, so this is a lower bound
  that is close when jobs are many and short next to the total.

Jobs without a benchmark file (not run yet, or run before the file existed) are counted as missing, never guessed.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..io import write_text_atomic
from .figures import save_figure
from .tables import write_csv_atomic

__all__ = ["read_benchmarks", "rule_table", "experiment_table", "wall_time_estimate", "render_timings"]

#: Core counts the estimate is given for.
ESTIMATE_CORES: tuple[int, ...] = (2, 16)
#: Jobs listed one by one on the page (the slowest; a full reproduction has thousands).
SLOWEST_JOBS = 30


def _number(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return out


def read_benchmarks(jobs_dir: str | os.PathLike) -> pd.DataFrame:
    """One row per benchmark file under ``jobs_dir``: ``file`` (path as the plan names it), ``rule``, ``job``,
    ``wall_s``, ``cpu_s``, ``max_rss_mb``, ``core_s`` (max of wall and CPU). A file with several lines (Snakemake's
    ``repeat``) gives its mean."""
    root = Path(jobs_dir)
    rows = []
    for path in sorted(root.rglob("*.tsv")):
        rel = path.relative_to(root)
        try:
            table = pd.read_csv(path, sep="\t")
        except (pd.errors.EmptyDataError, pd.errors.ParserError):
            continue
        if table.empty or "s" not in table:
            continue
        wall = float(np.nanmean([_number(v) for v in table["s"]]))
        cpu = float(np.nanmean([_number(v) for v in table["cpu_time"]])) if "cpu_time" in table else float("nan")
        rss = float(np.nanmax([_number(v) for v in table["max_rss"]])) if "max_rss" in table else float("nan")
        rule = rel.parts[0] if len(rel.parts) > 1 else rel.stem  # {rule}/{wildcards}.tsv or {rule}.tsv
        rows.append({"file": f"{root.as_posix().rstrip('/')}/{rel.as_posix()}", "rule": rule,
                     "job": str(rel.with_suffix("")), "wall_s": wall, "cpu_s": cpu, "max_rss_mb": rss,
                     "core_s": max(wall, cpu) if math.isfinite(cpu) else wall})
    return pd.DataFrame(rows, columns=["file", "rule", "job", "wall_s", "cpu_s", "max_rss_mb", "core_s"])


def rule_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per rule: jobs, total / mean / largest wall seconds, CPU seconds, peak RSS, share of all wall seconds;
    largest total first."""
    if jobs.empty:
        return pd.DataFrame(columns=["rule", "jobs", "wall_s", "mean_s", "max_s", "cpu_s", "max_rss_mb", "share"])
    g = jobs.groupby("rule")
    out = pd.DataFrame({"jobs": g.size(), "wall_s": g["wall_s"].sum(), "mean_s": g["wall_s"].mean(),
                        "max_s": g["wall_s"].max(), "cpu_s": g["cpu_s"].sum(), "max_rss_mb": g["max_rss_mb"].max()})
    out["share"] = out["wall_s"] / out["wall_s"].sum()
    return out.sort_values("wall_s", ascending=False).reset_index()


def _chain_seconds(chain: list[str], wall: dict[str, float]) -> float:
    return float(sum(wall.get(f, 0.0) for f in chain))


def experiment_table(jobs: pd.DataFrame, plan: dict[str, Any]) -> pd.DataFrame:
    """Per experiment (``plan`` from :meth:`cova.config.Plan.timing_plan`): runs, jobs with a benchmark file, jobs
    missing one, Σ wall seconds of the distinct jobs it waits for (its own included) and its longest chain."""
    wall = dict(zip(jobs["file"], jobs["wall_s"]))
    rows = []
    for name, e in plan["experiments"].items():
        chains = [plan["runs"][i] for i in e["runs"]]
        files = {f for chain in chains for f in chain} | {e["own"]}
        rows.append({"experiment": name, "paper": e["paper"], "runs": len(chains),
                     "jobs": sum(f in wall for f in files), "missing": sum(f not in wall for f in files),
                     "wall_s": float(sum(wall.get(f, 0.0) for f in files)),
                     "critical_s": max((_chain_seconds(c, wall) for c in chains), default=0.0)
                     + wall.get(e["own"], 0.0)})
    columns = ["experiment", "paper", "runs", "jobs", "missing", "wall_s", "critical_s"]
    return pd.DataFrame(rows, columns=columns).sort_values("wall_s", ascending=False).reset_index(drop=True)


def wall_time_estimate(jobs: pd.DataFrame, plan: dict[str, Any],
                       cores: tuple[int, ...] = ESTIMATE_CORES) -> dict[str, float]:
    """``core_s`` (Σ max(wall × threads, CPU) over the jobs, threads from ``plan["threads"]``, 1 for a job not in
    it), ``critical_s`` (the longest chain: a run's jobs plus the rendering of the slowest experiment that waits for
    it) and ``wall_{N}_cores_s`` = max(critical, core-seconds with the threads capped at N / N)."""
    wall = dict(zip(jobs["file"], jobs["wall_s"]))
    run_chain = [_chain_seconds(c, wall) for c in plan["runs"]]
    critical = max(run_chain, default=0.0)
    for e in plan["experiments"].values():
        longest = max((run_chain[i] for i in e["runs"]), default=0.0)
        critical = max(critical, longest + wall.get(e["own"], 0.0))
    threads = plan.get("threads", {})
    held = np.array([threads.get(f, 1) for f in jobs["file"]], dtype=np.float64)
    wall_s, cpu_s = jobs["wall_s"].to_numpy(dtype=np.float64), jobs["cpu_s"].to_numpy(dtype=np.float64)

    def core_seconds(n: float) -> float:
        return float(np.sum(np.fmax(wall_s * np.minimum(held, n), cpu_s)))

    core_s = core_seconds(np.inf)
    out = {"jobs": float(len(jobs)), "core_s": core_s, "critical_s": critical}
    for n in cores:
        out[f"wall_{n}_cores_s"] = max(critical, core_seconds(n) / n)
    return out


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _figure(rules: pd.DataFrame, experiments: pd.DataFrame, estimate: dict[str, float]) -> plt.Figure:
    top = experiments.head(25).iloc[::-1]
    height = max(3.0, 0.28 * (len(rules) + len(top)) + 1.5)
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, height),
                               gridspec_kw={"height_ratios": [max(1, len(rules)), max(1, len(top))]})
    r = rules.iloc[::-1]
    a.barh(r["rule"], r["wall_s"] / 60.0, color="#4c72b0")
    for y, (t, n) in enumerate(zip(r["wall_s"], r["jobs"])):
        a.text(t / 60.0, y, f"  {_hms(t)} ({n} jobs)", va="center", fontsize=8)
    a.set_xlabel("wall minutes, all jobs of the rule")
    a.set_title(f"{int(estimate['jobs'])} jobs, {estimate['core_s'] / 3600:.2f} core-hours; estimated wall time "
                + ", ".join(f"{_hms(estimate[f'wall_{n}_cores_s'])} on {n} cores" for n in ESTIMATE_CORES),
                fontsize=9)
    b.barh(top["experiment"], top["wall_s"] / 60.0, color="#dd8452", label="all jobs it waits for")
    b.barh(top["experiment"], top["critical_s"] / 60.0, color="#55a868", label="its longest chain")
    b.set_xlabel("wall minutes per experiment (shared jobs count in each)")
    b.legend(fontsize=8, loc="lower right")
    for ax in (a, b):
        ax.tick_params(axis="y", labelsize=8)
        ax.margins(x=0.25)
    return fig


def render_timings(jobs_dir: str | os.PathLike, plan_path: str | os.PathLike, outputs: dict[str, str]) -> None:
    """Write ``outputs['csv']`` (rows of kind ``rule``, ``experiment`` and ``estimate``), ``outputs['html']`` (the
    three tables) and ``outputs['png']`` (bars per rule and for the 25 slowest experiments)."""
    plan = json.loads(Path(plan_path).read_text())
    jobs = read_benchmarks(jobs_dir)
    rules = rule_table(jobs)
    experiments = experiment_table(jobs, plan)
    estimate = wall_time_estimate(jobs, plan)
    long = pd.concat([rules.rename(columns={"rule": "name"}).assign(kind="rule"),
                      experiments.rename(columns={"experiment": "name"}).assign(kind="experiment"),
                      pd.DataFrame([{"kind": "estimate", "name": k, "wall_s": v} for k, v in estimate.items()])],
                     ignore_index=True)
    write_csv_atomic(long[["kind", "name"] + [c for c in long.columns if c not in ("kind", "name")]],
                     outputs["csv"])
    est = pd.DataFrame([{"quantity": k, "seconds": round(v, 1), "h:m:s": _hms(v) if k != "jobs" else ""}
                        for k, v in estimate.items()])
    fmt = {"float_format": lambda v: f"{v:.1f}"}
    slowest = jobs.nlargest(SLOWEST_JOBS, "wall_s")[["job", "rule", "wall_s", "cpu_s", "max_rss_mb"]]
    page = ("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Time per rule and per experiment</title>"
            "<style>body{font-family:sans-serif} table{border-collapse:collapse}"
            "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}</style></head><body>"
            "<h1>Time per rule and per experiment</h1><p>From each job's benchmark file (wall and CPU seconds, peak "
            "memory). The estimate on N cores is max(longest chain, core-seconds / N), each job holding the cores of "
            "its declared threads, a lower bound for a greedy "
            "scheduler. Jobs without a benchmark file are listed as missing, not estimated.</p>"
            f"<h2>Whole run</h2>{est.to_html(index=False, border=0)}"
            f"<h2>Per rule</h2>{rules.to_html(index=False, border=0, **fmt)}"
            f"<h2>Per experiment</h2>{experiments.to_html(index=False, border=0, **fmt)}"
            f"<h2>Slowest jobs</h2>{slowest.to_html(index=False, border=0, **fmt)}</body></html>\n")
    write_text_atomic(outputs["html"], page)
    save_figure(_figure(rules, experiments, estimate), outputs["png"])
