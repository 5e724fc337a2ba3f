"""End-to-end: the Snakemake workflow on config/ci.yaml in temporary directories.

Checks that every output exists, that a second independent run of every method and inputs construction gives
bit-identical embeddings and the same scores, that changing one method parameter re-runs only what depends on it,
and that the HTML report holds every figure and table (tests/test_workflow_checks.py: what needs no run).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from cova.config import Plan, resolve_overlay
from cova.embedding import Embedding
from cova.experiments.claims import VERDICTS
from cova.experiments.gaps import reading_experiments
from cova.experiments.report_text import PAPER_NAMES
from cova.io import read_scores
from cova.metrics.score import score_files
from snakemake_output import job_stats
from test_figures_layout import check_ci_figures
from test_report_browser import check_report, embedded, report_data

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
MIRROR = ROOT.parent / "shared" / "datasets"
# The workflow runs in temporary copies, where the config's relative mirror path does not resolve: point
# COVA_DATA_MIRROR at the project's offline copies (CI has them beside the clone).
ENV = {**os.environ, "COVA_DATA_MIRROR": str(MIRROR)}

pytestmark = pytest.mark.slow


def make_workdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "Snakefile", path / "Snakefile")
    shutil.copy(ROOT / "config.yaml", path / "config.yaml")
    shutil.copy(ROOT / "environment.yml", path / "environment.yml")
    shutil.copytree(ROOT / "workflow", path / "workflow")
    shutil.copytree(ROOT / "config", path / "config")
    shutil.copytree(ROOT / "benchmarks", path / "benchmarks")
    return path


def load_ci(workdir: Path = ROOT) -> dict:
    """The full configuration config/ci.yaml stands for (an overlay of config.yaml), to change and write back."""
    return resolve_overlay(yaml.safe_load((workdir / "config/ci.yaml").read_text()), workdir)


def snakemake(workdir: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    assert MIRROR.is_dir(), f"the project's offline datasets are expected at {MIRROR}"
    proc = subprocess.run([SNAKEMAKE, "--cores", "2", *args], cwd=workdir, capture_output=True, text=True,
                          env=env or ENV)
    if proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    workdir = make_workdir(tmp_path_factory.mktemp("run1"))
    snakemake(workdir, "--printshellcmds", "--configfile", "config/ci.yaml")  # as the project's profile does
    return workdir


def test_outputs_exist(first_run):
    assert (first_run / "results/paper/cova/fig1.png").stat().st_size > 10_000
    table = (first_run / "results/tables/scores.csv").read_text().splitlines()
    plan = Plan(load_ci())
    assert len(table) - 1 == len(plan.runs())
    for name in plan.experiments:
        out = plan.experiment_outputs(name)
        assert (first_run / out["png"]).stat().st_size > 5_000
        assert (first_run / out["html"]).read_text().count("<tr") >= 2
        assert len((first_run / out["csv"]).read_text().splitlines()) >= 2
    # eigen-COVA at η = 0.9 has no negative eigenvalue: recorded as degenerate, not a failed workflow
    degenerate = [line for line in table if ",degenerate" in line]
    assert degenerate and all(",nan," in line or line.endswith(",nan") for line in degenerate)
    assert len(list(first_run.glob("results/*/*/*/*/scatter.png"))) == len(table) - 1
    assert list(first_run.glob("results/**/.*.npz")) == []  # no temporary file left behind
    # every claim of the config (the excluded experiments' too) has a verdict, every "not testable" its reason
    card = pd.read_csv(first_run / "results/paper/scorecard.csv", keep_default_na=False)
    assert list(card["claim_id"]) == [c["id"] for c in plan.claims()] and len(card) >= 200
    assert set(card["verdict"]) <= set(VERDICTS) and "holds" in set(card["verdict"])
    assert (card.loc[card["verdict"] == "not testable here", "detail"] != "").all()
    counts = card["paper"].value_counts()
    assert (counts["cova"] >= 90 and counts["nerv"] >= 40 and counts["dosnes"] >= 12
            and counts["coembedding"] >= 25 and counts["featmap"] >= 20), counts
    # every number flagged in an experiment's table is in the gap table, with a cause or "unexplained"
    gaps = pd.read_csv(first_run / "results/tables/paper_gaps.csv")
    flagged = 0
    for name in set(plan.reference_experiments()) - reading_experiments():
        column = pd.read_csv(first_run / plan.experiment_outputs(name)["csv"]).get("off_by_more_than_10_points")
        flagged += sum(len(v.split("; ")) for v in column.dropna()) if column is not None else 0
    assert len(gaps) == flagged and gaps["cause"].notna().all()


def test_figures_of_the_ci_run(first_run):
    """Every experiment's figure: an SVG beside the PNG, a page-width aspect ratio, nothing clipped
    (tests/test_figures_layout.py)."""
    failures = check_ci_figures(first_run, Plan(load_ci()))
    assert not failures, "\n".join(failures)


def test_shell_command_lines_are_short(first_run):
    """The console of the CI run shows no shell command line longer than 500 characters: the rules pass their JSON
    parameters and file lists as argument files (results/params, read by the steps as @FILE)."""
    console = sorted((first_run / ".snakemake/log").glob("*.snakemake.log"))[0].read_text()
    commands = [line.removeprefix("Shell command: ") for line in console.splitlines()
                if line.startswith("Shell command: python")]
    assert len(commands) >= 2 * len(Plan(load_ci()).runs())  # every embed and score job at least
    too_long = [c[:200] for c in commands if len(c) > 500]
    assert not too_long, f"{len(too_long)} shell command lines over 500 characters, e.g. {too_long[:3]}"
    assert sum("@results/params/" in c for c in commands) >= len(commands) // 2


def test_every_job_leaves_a_benchmark_file_and_the_time_table_counts_them(first_run):
    """Each job of the run wrote its benchmark file; the time table sums them per rule (the per-rule job counts are
    those of the DAG), per experiment, and estimates the whole run's wall time."""
    plan = Plan(load_ci())
    jobs_dir = first_run / "results/benchmarks/jobs"
    n_runs = len(plan.runs())
    assert len(list((jobs_dir / "embed").rglob("*.tsv"))) == n_runs
    assert len(list((jobs_dir / "score").rglob("*.tsv"))) == n_runs
    assert len(list((jobs_dir / "experiment").rglob("*.tsv"))) == len(plan.experiments)
    posteriors = {(d, i, plan.posterior_id(plan.method_jobs[e].method, plan.method_jobs[e].params_id))
                  for d, i, e in plan.runs()}
    posteriors = {p for p in posteriors if p[2] is not None}
    assert posteriors and len(list((jobs_dir / "posterior").rglob("*.tsv"))) == len(posteriors)
    with open(first_run / "results/tables/timings.csv") as f:
        rows = list(csv.DictReader(f))
    rules = {r["name"]: r for r in rows if r["kind"] == "rule"}
    assert int(float(rules["embed"]["jobs"])) == n_runs and int(float(rules["score"]["jobs"])) == n_runs
    assert int(float(rules["dataset"]["jobs"])) == len(plan.config["datasets"])
    total = sum(float(r["wall_s"]) for r in rules.values())
    experiments = {r["name"]: r for r in rows if r["kind"] == "experiment"}
    assert set(experiments) == set(plan.experiments)
    assert all(int(float(r["missing"])) == 0 for r in experiments.values())
    estimate = {r["name"]: float(r["wall_s"]) for r in rows if r["kind"] == "estimate"}
    assert 0 < estimate["critical_s"] <= total and estimate["wall_16_cores_s"] <= estimate["wall_2_cores_s"]
    assert estimate["wall_2_cores_s"] >= estimate["core_s"] / 2


def cheapest_runs(plan: Plan, workdir: Path) -> list[tuple[str, str, str]]:
    """A cheap set of runs that uses every registered method and every inputs block of the plan at least once:
    greedy weighted set cover, each step taking the run with the most not yet covered (method, inputs block) per
    second its embed and score jobs took in ``workdir`` (their benchmark files)."""
    def seconds(run: tuple[str, str, str]) -> float:
        rel = plan.run_dir(*run).removeprefix("results/")
        return sum(float(next(csv.DictReader((workdir / f"results/benchmarks/jobs/{rule}/{rel}.tsv").open(),
                                             delimiter="\t"))["s"]) for rule in ("embed", "score"))

    def keys(run: tuple[str, str, str]) -> set[tuple[str, str]]:
        return {("method", plan.method_jobs[run[2]].method), ("inputs", plan.inputs_ids[run[1]])}

    cost = {run: max(seconds(run), 1e-3) for run in plan.runs()}
    uncovered = set().union(*(keys(run) for run in cost))
    chosen = []
    while uncovered:
        run = max(sorted(cost), key=lambda r: len(keys(r) & uncovered) / cost[r])
        chosen.append(run)
        uncovered -= keys(run)
    return sorted(chosen)


def same(a: object, b: object) -> bool:
    """Equal values or arrays, with NaN equal to NaN (a degenerate run's embedding and scores are NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    if np.issubdtype(a.dtype, np.number) and np.issubdtype(b.dtype, np.number):
        return np.array_equal(a, b, equal_nan=True)
    return a.shape == b.shape and bool(np.all(a == b))


def test_two_runs_give_identical_scores(first_run, tmp_path):
    """The same config gives the same numbers in a fresh directory: each method and each inputs construction is
    rerun once (on its cheapest run of the first run) from the raw data on. Its embedding is bit-identical to the
    first run's, and its scores, computed here from the second run's files, equal those the first run's score job
    wrote (the score step's own start-up is the first run's business; here it would only cost time). The first run
    ran its jobs in the job server (the default), the second each in a fresh interpreter (``job_server=False``), so
    this also checks that the server changes no number."""
    plan = Plan(load_ci())
    runs = cheapest_runs(plan, first_run)
    assert {plan.method_jobs[e].method for _, _, e in runs} == {plan.method_jobs[e].method for _, _, e in plan.runs()}
    second = make_workdir(tmp_path / "run2")
    targets = [plan.run_file(*run, "embedding.npz") for run in runs]
    snakemake(second, *targets, "--configfile", "config/ci.yaml", "--config", "job_server=False")
    for (dataset, inputs, entry), target in zip(runs, targets):
        one, two = Embedding.load(first_run / target), Embedding.load(second / target)
        assert one.status == two.status and same(one.Z, two.Z), target
        assert same(one.placed_prototypes, two.placed_prototypes), target
        assert one.extras.keys() == two.extras.keys(), target
        assert all(same(one.extras[k], two.extras[k]) for k in one.extras), target
        job = plan.method_jobs[entry]
        _, scores = score_files(second / f"data/processed/{dataset}.npz", second / plan.inputs_file(dataset, inputs),
                                two, plan.run_metrics(dataset, plan.inputs_ids[inputs], job.method, job.params_id))
        recorded = read_scores(first_run / plan.run_file(dataset, inputs, entry, "scores.json"))
        assert all(same(v, recorded[k]) for k, v in scores.items()), (target, scores, recorded)


def test_changing_a_parameter_reruns_only_its_dependents(first_run):
    assert job_stats(snakemake(first_run, "-n", "--configfile", "config/ci.yaml").stdout) == {}
    config = load_ci(first_run)
    config["methods"]["e1_a0.1"]["params"]["alpha"] = 0.2
    (first_run / "changed.yaml").write_text(yaml.safe_dump(config))
    jobs = job_stats(snakemake(first_run, "-n", "--configfile", "changed.yaml").stdout)
    plan = Plan(config)
    runs_with_e1 = sum(entry == "e1_a0.1" for _, _, entry in plan.runs())
    rerun = [n for n in plan.experiments if any(e == "e1_a0.1" for _, _, e in plan.experiment_runs(n))]
    gaps = {"paper_gaps": 1} if set(rerun) & set(plan.reference_experiments()) else {}
    tables = {plan.experiment_outputs(n)["csv"] for n in rerun}
    card = {"scorecard": 1} if tables & set(plan.claim_tables()) else {}
    assert jobs == {"embed": runs_with_e1, "score": runs_with_e1, "scores_table": 1, "cova_fig1": 1,
                    "experiment": len(rerun), "timings": 1, "timing_plan": 1, "all": 1, **gaps, **card}


@pytest.fixture(scope="module")
def report(first_run):
    """The HTML report of the CI run, built once, and what building it printed."""
    proc = snakemake(first_run, "--configfile", "config/ci.yaml", "--report", "results/report.html")
    return first_run / "results/report.html", proc.stdout + proc.stderr


def test_report_holds_every_figure_and_table(report):
    """Every figure and table under one category per paper (as the paper names itself), docutils silent."""
    path, printed = report
    html = path.read_text(errors="replace")
    assert "fig1.png" in html
    assert "scores.csv" in html and "scores.html" in html
    assert "timings.png" in html and "timings.html" in html
    assert "paper_gaps.html" in html
    assert "scorecard.html" in html
    warnings = [line for line in printed.splitlines() if re.search(r"\((INFO|WARNING|ERROR|SEVERE)/\d\)", line)]
    assert not warnings, f"{len(warnings)} docutils messages while building the report, e.g. {warnings[:3]}"
    categories = report_data(path, "categories")
    papers = {e["paper"] for e in load_ci()["paper"]["experiments"].values()}
    assert sorted(categories) == sorted({PAPER_NAMES[p] for p in papers} | {"Performance", "Scorecard", "Tables"})
    results = report_data(path, "results")
    assert not [p for p in results if p.endswith("scatter.png")], "per-run scatter plots are kept out of the report"
    caption = results["results/paper/cova/fig1.png"]["caption"]
    assert "sinusoid" in caption and "e1_a0.1" in caption


def test_report_reads_clean_in_a_browser(report, first_run):
    """tests/test_report_browser.py: the front page and one experiment page per paper in headless Chromium."""
    papers = sorted({e["paper"] for e in load_ci()["paper"]["experiments"].values()})
    check_report(report[0], first_run, papers)


def test_benchmark_target_times_the_steps_and_plots_into_the_report(first_run):
    """`snakemake benchmarks` on the small sizes of config/ci.yaml: every configured step timed at
    every size with its ratio to openTSNE, the trustworthiness benchmark equal to scikit-learn, and the
    log-log plot in the HTML report of `all benchmarks`."""
    snakemake(first_run, "benchmarks", "--configfile", "config/ci.yaml")
    with open(first_run / "results/benchmarks/scaling.csv") as f:
        rows = {(r["step"], int(r["n"])): r for r in csv.DictReader(f)}
    for step in ("inputs", "e1", "e2", "tsne", "tc"):
        for n in (500, 1000):
            assert rows[(step, n)]["status"] == "ok" and float(rows[(step, n)]["seconds"]) > 0
    assert float(rows[("e2", 1000)]["ratio_tsne"]) > 0
    with open(first_run / "results/benchmarks/trustworthiness.csv") as f:
        tw = {r["implementation"]: r for r in csv.DictReader(f)}
    for impl in ("neighborhood", "one_pass"):
        assert abs(float(tw[impl]["trustworthiness"]) - float(tw["sklearn"]["trustworthiness"])) < 1e-10
        assert abs(float(tw[impl]["continuity"]) - float(tw["sklearn"]["continuity"])) < 1e-10
    snakemake(first_run, "all", "benchmarks", "--configfile", "config/ci.yaml", "--report", "results/report_bench.html")
    html = (first_run / "results/report_bench.html").read_text(errors="replace")
    assert "scaling.png" in html and "time against n" in html and "fig1.png" in html


def test_dataset_added_by_config_alone(first_run):
    """A CSV file and a config block, no code: embeddings with their scatter plots, and the scores in the report."""
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(3, 4))
    rows = [",".join([f"{v:.6f}" for v in centres[j] + rng.normal(size=4)] + [name])
            for j, name in enumerate(["setosa", "versicolor", "virginica"]) for _ in range(40)]
    (first_run / "my_data").mkdir(exist_ok=True)
    (first_run / "my_data/flowers.csv").write_text("a,b,c,d,species\n" + "\n".join(rows) + "\n")
    config = load_ci(first_run)
    config["datasets"]["flowers"] = {"loader": "generic", "params": {"path": "my_data/flowers.csv",
                                                                     "label": "species"}}
    config["runs"].append({"dataset": "flowers", "inputs": "graph_tsne", "methods": ["e1_a0.1", "tsne"]})
    (first_run / "with_csv.yaml").write_text(yaml.safe_dump(config))
    snakemake(first_run, "--configfile", "with_csv.yaml")
    snakemake(first_run, "--configfile", "with_csv.yaml", "--report", "results/report_csv.html")
    table = (first_run / "results/tables/scores.csv").read_text()
    assert table.count("flowers,") == 2
    assert len(list(first_run.glob("results/flowers/*/*/*/scatter.png"))) == 2
    scores = embedded(report_data(first_run / "results/report_csv.html", "results")["results/tables/scores.html"])
    assert b"flowers" in scores
