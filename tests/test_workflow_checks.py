"""The workflow's checks that need no run of it: the DAG of config/ci.yaml, Snakemake's lint, a bad config key,
missing data (tests/test_workflow.py runs the workflow itself)."""

from __future__ import annotations

import os
import subprocess

import yaml

from cova.config import Plan, read_config_file
from snakemake_output import job_stats
from test_workflow import SNAKEMAKE, load_ci, make_workdir, snakemake


def test_dry_run_lists_the_dag(tmp_path):
    workdir = make_workdir(tmp_path)
    proc = snakemake(workdir, "-n", "--configfile", "config/ci.yaml")
    jobs = job_stats(proc.stdout + proc.stderr)
    plan = Plan(load_ci())
    n_runs = len(plan.runs())
    assert jobs["dataset"] == len(plan.config["datasets"])  # a dataset replaced by its fallback is not built
    assert jobs["experiment"] == len(plan.experiments)
    assert jobs["fetch"] == 4  # compound, cora, worldtrade and mnist (featMAP Fig. 6), the real data of the CI config
    assert jobs["embed"] == n_runs and jobs["score"] == n_runs and "scatter" not in jobs  # score draws it
    assert jobs["cova_fig1"] == 1 and jobs["scores_table"] == 1 and jobs["timings"] == 1
    assert jobs["paper_gaps"] == 1 and plan.reference_experiments()  # the CI config compares with the papers
    assert jobs["claims"] == 1 and jobs["scorecard"] == 1 and plan.claims()  # and checks their claims


def test_lint_reports_nothing(tmp_path):
    workdir = make_workdir(tmp_path)
    proc = subprocess.run([SNAKEMAKE, "--lint"], cwd=workdir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Lints for" not in proc.stdout + proc.stderr


def test_invalid_config_stops_with_a_named_key(tmp_path):
    workdir = make_workdir(tmp_path)
    config = load_ci(workdir)
    config["methods"]["tsne"]["method"] = "tsme"
    (workdir / "bad.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run([SNAKEMAKE, "-n", "--cores", "1", "--configfile", "bad.yaml"], cwd=workdir,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "methods.tsne.method" in out and "'tsne'" in out


def test_missing_data_names_dataset_and_what_was_tried(tmp_path):
    workdir = make_workdir(tmp_path)
    config = load_ci()
    config["data"] = {"mirrors": []}
    (workdir / "offline.yaml").write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k != "COVA_DATA_MIRROR"}
    env.update(http_proxy="", https_proxy="", HTTP_PROXY="", HTTPS_PROXY="")
    proc = subprocess.run([SNAKEMAKE, "data/processed/compound.npz", "--cores", "1", "--configfile", "offline.yaml"],
                          cwd=workdir, capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    log = (workdir / "results/logs/fetch/compound.log").read_text()
    assert "compound" in log and "Compound.txt" in log and "COVA_DATA_MIRROR" in log
    assert not (workdir / "data/raw/compound/Compound.txt").exists()


def test_the_reproduction_record_is_written_only_from_config_yaml(tmp_path):
    """`snakemake docs/reproduction.md` plans the record from the whole config.yaml (the scorecard of every claim and
    the runs behind it); a smaller configuration has no rule for it, so it cannot overwrite the paper-scale record."""
    workdir = make_workdir(tmp_path)
    jobs = job_stats(snakemake(workdir, "-n", "docs/reproduction.md").stdout)
    plan = Plan(read_config_file(workdir / "config.yaml"))
    assert jobs["reproduction_record"] == 1 and jobs["scorecard"] == 1
    assert jobs["experiment"] == len(plan.claim_tables()) > 50  # every experiment a claim reads
    proc = subprocess.run([SNAKEMAKE, "-n", "docs/reproduction.md", "--configfile", "config/ci.yaml"], cwd=workdir,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "No rule to produce docs/reproduction.md" in proc.stdout + proc.stderr
