"""The time table of a run: benchmark files summed per rule and per experiment, and the wall-time estimate."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cova.viz.timings import experiment_table, read_benchmarks, render_timings, rule_table, wall_time_estimate

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path, wall, cpu, rss=100.0):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")


@pytest.fixture()
def run(tmp_path):
    jobs = tmp_path / "jobs"
    _bench(jobs / "dataset/d.tsv", 2.0, 1.5)
    _bench(jobs / "inputs/d/i.tsv", 10.0, 19.0, rss=800.0)  # two threads: CPU above wall
    _bench(jobs / "embed/d/i/m/a.tsv", 30.0, 29.0)
    _bench(jobs / "embed/d/i/m/b.tsv", 5.0, 4.0)
    _bench(jobs / "score/d/i/m/a.tsv", 3.0, 2.0)
    _bench(jobs / "score/d/i/m/b.tsv", 3.0, 2.0)
    _bench(jobs / "experiment/p/fig.tsv", 4.0, 3.0)
    _bench(jobs / "scores_table.tsv", 1.0, 1.0)  # a rule without wildcards
    (jobs / "score/d/i/m/empty.tsv").write_text("")  # a job killed before writing: ignored
    root = jobs.as_posix()
    chain = lambda r: [f"{root}/dataset/d.tsv", f"{root}/inputs/d/i.tsv", f"{root}/embed/d/i/m/{r}.tsv",  # noqa: E731
                       f"{root}/score/d/i/m/{r}.tsv"]
    plan = {"runs": [chain("a"), chain("b"), chain("c")],
            "experiments": {"fig": {"paper": "p", "own": f"{root}/experiment/p/fig.tsv", "runs": [0, 1]},
                            "other": {"paper": "p", "own": f"{root}/experiment/p/other.tsv", "runs": [2]}}}
    return jobs, plan


def test_rules_sum_their_jobs(run):
    jobs, _ = run
    table = read_benchmarks(jobs)
    assert len(table) == 8
    rules = rule_table(table).set_index("rule")
    assert rules.loc["scores_table", "jobs"] == 1
    assert rules.loc["embed", "jobs"] == 2 and rules.loc["embed", "wall_s"] == pytest.approx(35.0)
    assert rules.loc["embed", "max_s"] == pytest.approx(30.0) and rules.loc["inputs", "max_rss_mb"] == 800.0
    assert rules["share"].sum() == pytest.approx(1.0)
    assert list(rules.index)[0] == "embed"  # largest first


def test_experiments_count_shared_jobs_once_and_their_longest_chain(run):
    jobs, plan = run
    table = experiment_table(read_benchmarks(jobs), plan).set_index("experiment")
    # fig: dataset 2 + inputs 10 (shared by both runs, once) + embeds 35 + scores 6 + own 4
    assert table.loc["fig", "wall_s"] == pytest.approx(57.0)
    assert table.loc["fig", "critical_s"] == pytest.approx(2 + 10 + 30 + 3 + 4)
    assert table.loc["fig", "missing"] == 0 and table.loc["fig", "jobs"] == 7
    # other: its run's embed and score and its own job have no file yet
    assert table.loc["other", "missing"] == 3 and table.loc["other", "wall_s"] == pytest.approx(12.0)


def test_estimate_is_the_larger_of_chain_and_core_seconds_per_core(run):
    jobs, plan = run
    table = read_benchmarks(jobs)
    est = wall_time_estimate(table, plan, cores=(1, 2, 16))
    core_s = 2 + 19 + 30 + 5 + 3 + 3 + 4 + 1  # max(wall, CPU) per job
    assert est["core_s"] == pytest.approx(core_s)
    assert est["critical_s"] == pytest.approx(49.0)
    assert est["wall_1_cores_s"] == pytest.approx(core_s)
    assert est["wall_2_cores_s"] == pytest.approx(max(49.0, core_s / 2))
    assert est["wall_16_cores_s"] == pytest.approx(49.0)


def test_estimate_holds_the_declared_threads_of_a_job_whose_cpu_time_was_not_recorded(run):
    """Under the job server a benchmark file records the client's CPU time, not the job's: a job declaring 4
    threads holds 4 cores (2 on a 2-core machine, as Snakemake scales it down) for its wall time."""
    jobs, plan = run
    table = read_benchmarks(jobs)
    embed_a = next(f for f in table["file"] if f.endswith("embed/d/i/m/a.tsv"))
    base = wall_time_estimate(table, plan, cores=(1, 2, 16))
    plan["threads"] = {embed_a: 4}
    est = wall_time_estimate(table, plan, cores=(1, 2, 16))
    assert est["core_s"] == pytest.approx(base["core_s"] - 30 + 4 * 30)
    assert est["wall_1_cores_s"] == pytest.approx(base["core_s"])  # capped at the 1 core there is
    assert est["wall_2_cores_s"] == pytest.approx(max(49.0, (base["core_s"] + 30) / 2))
    assert est["wall_16_cores_s"] == pytest.approx(max(49.0, est["core_s"] / 16))


def test_render_writes_table_page_and_figure(run, tmp_path):
    jobs, plan = run
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    out = {k: str(tmp_path / f"timings.{k}") for k in ("csv", "html", "png")}
    render_timings(jobs, tmp_path / "plan.json", out)
    csv = pd.read_csv(out["csv"])
    assert set(csv["kind"]) == {"rule", "experiment", "estimate"}
    assert "Per experiment" in open(out["html"]).read()
    assert (tmp_path / "timings.png").stat().st_size > 10_000


def test_whole_run_script_times_each_configuration_from_its_own_jobs(tmp_path):
    """benchmarks/whole_run.py: a configuration is timed from the benchmark files of the jobs its Plan asks for
    (plus the rules without wildcards); a job of another configuration does not count, a missing one is
    reported."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("whole_run", root / "benchmarks" / "whole_run.py")
    whole_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(whole_run)
    from cova.config import BENCHMARK_DIR, Plan, read_config_file, resolve_overlay

    plan = Plan(resolve_overlay(read_config_file(root / "config/ci.yaml"), root))
    chain = plan.timing_plan()["runs"][0]
    jobs = tmp_path / "jobs"

    def write(rel: str, wall: float, cpu: float) -> None:
        path = jobs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{wall}\t0:00:01\t10\t{cpu}\n")

    for f in chain:
        write(f.split(f"{BENCHMARK_DIR}/", 1)[1], 2.0, 1.0)
    write("embed/other/x-1/pca/pca-2.tsv", 100.0, 100.0)  # a job no run of this config has
    write("scores_table.tsv", 3.0, 4.0)  # a rule without wildcards: part of every configuration
    row = whole_run.estimate(str(root / "config/ci.yaml"), str(jobs))
    assert row["jobs_measured"] == len(chain) and row["jobs_missing"] == row["jobs_planned"] - len(chain)
    assert row["core_s"] == pytest.approx(2.0 * len(chain) + 4.0)
    assert row["critical_s"] >= 2.0 * len(chain)
