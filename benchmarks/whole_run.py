"""Time of whole reproductions from one run's per-job benchmark files, for one or more configurations.

    python benchmarks/whole_run.py                                  # config.yaml, the jobs of results/
    python benchmarks/whole_run.py --config config.yaml --config old.yaml --jobs /path/to/results/benchmarks/jobs

Every rule writes a Snakemake ``benchmark:`` file per job (``results/benchmarks/jobs/{rule}/...tsv``). For each
``--config`` the script takes the jobs that configuration's Plan asks for (every run's fetch, dataset, inputs,
embed and score job, every experiment's rendering job, and the rules without wildcards such as the tables),
counts how many of them have a benchmark file, and gives their core-seconds, the longest chain of jobs and the
estimated wall time on 2 and 16 cores (``cova.viz.timings.wall_time_estimate``: max(longest chain, core-seconds /
cores), a job holding the cores of the threads its rule declares; a lower bound for Snakemake's greedy scheduler
that is close when the jobs are many and short).

A configuration whose run ids all appear in the measured run (for example an older ``config.yaml`` whose runs
kept their parameters) is so timed without a run of its own, on the same machine and in the same run as the
current one. The table is printed and written as CSV (``--out``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from cova.config import BENCHMARK_DIR, Plan, read_config_file, resolve_overlay  # noqa: E402
from cova.viz.timings import ESTIMATE_CORES, read_benchmarks, wall_time_estimate  # noqa: E402

#: Rules that have one job per run or per experiment; every other rule's jobs belong to every configuration.
PER_RUN_RULES = ("fetch", "dataset", "inputs", "embed", "score", "experiment")


def plan_files(plan: Plan) -> set[str]:
    """The benchmark files of the jobs behind ``plan``'s runs and experiments."""
    timing = plan.timing_plan()
    files = {f for chain in timing["runs"] for f in chain}
    return files | {e["own"] for e in timing["experiments"].values()}


def estimate(config_path: str, jobs_dir: str) -> dict[str, object]:
    """One row of the table for the configuration at ``config_path``."""
    plan = Plan(resolve_overlay(read_config_file(config_path), ROOT))
    wanted = plan_files(plan)
    jobs = read_benchmarks(jobs_dir)
    jobs["file"] = [f"{BENCHMARK_DIR}/{job}.tsv" for job in jobs["job"]]  # as the Plan names them
    mine = jobs[jobs["file"].isin(wanted) | ~jobs["rule"].isin(PER_RUN_RULES)]
    est = wall_time_estimate(mine, plan.timing_plan())
    return {"config": config_path, "runs": len(plan.runs()), "jobs_planned": len(wanted),
            "jobs_measured": int(mine["file"].isin(wanted).sum()),
            "jobs_missing": len(wanted - set(mine["file"])), "core_s": round(est["core_s"], 1),
            "critical_s": round(est["critical_s"], 1),
            **{f"wall_{n}_cores_min": round(est[f"wall_{n}_cores_s"] / 60.0, 1) for n in ESTIMATE_CORES}}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", action="append", help="a configuration file (repeatable; default config.yaml)")
    p.add_argument("--jobs", default=str(ROOT / BENCHMARK_DIR), help="the run's benchmark directory")
    p.add_argument("--out", default=str(ROOT / "results" / "benchmarks" / "whole_run.csv"))
    a = p.parse_args(argv)
    rows = [estimate(c, a.jobs) for c in (a.config or ["config.yaml"])]
    keys = list(rows[0])
    widths = [max(len(k), *(len(str(r[k])) for r in rows)) for k in keys]
    print("  ".join(k.ljust(w) for k, w in zip(keys, widths)))
    for r in rows:
        print("  ".join(str(r[k]).ljust(w) for k, w in zip(keys, widths)))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(a.out).with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    tmp.replace(a.out)


if __name__ == "__main__":
    main()
