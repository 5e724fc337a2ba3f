"""Config validation names the key and the allowed values; the Plan gives stable, parameter-hashed paths."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from cova.config import ConfigError, Plan, resolve_overlay, validate_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ["config.yaml", "config/demo.yaml", "config/ci.yaml"]


def load(name="config/ci.yaml"):
    """The full configuration ``name`` stands for (config/ci.yaml is an overlay of config.yaml)."""
    return resolve_overlay(yaml.safe_load((ROOT / name).read_text()), ROOT)


@pytest.mark.parametrize("name", CONFIGS)
def test_shipped_configs_are_valid(name):
    validate_config(load(name))


def test_every_paper_experiment_says_how_it_compares_with_the_paper():
    """A reader of config.yaml (and of each experiment's page) finds, for every figure and table, a caption of what
    it shows and notes on how it compares with the paper (or why it cannot)."""
    experiments = load("config.yaml")["paper"]["experiments"]
    assert not [n for n, e in experiments.items() if not str(e.get("notes") or "").strip()]
    assert not [n for n, e in experiments.items() if not str(e.get("caption") or "").strip()]


@pytest.mark.parametrize("mutate,expected", [
    (lambda c: c["methods"]["e1_a0.1"].__setitem__("method", "cova_e9"), ["methods.e1_a0.1.method", "cova_e1"]),
    (lambda c: c["inputs"]["means"]["weights"].__setitem__("kind", "gauss"), ["inputs.means.weights.kind",
                                                                                "gaussian_perplexity"]),
    (lambda c: c["methods"]["e1_a0.1"]["params"].__setitem__("alfa", 0.2), ["methods.e1_a0.1.params", "alpha"]),
    (lambda c: c["runs"][0].__setitem__("dataset", "no_such_dataset"), ["runs[0].dataset", "sinusoid"]),
    (lambda c: c.__setitem__("sed", 1), ["sed"]),
    (lambda c: c["datasets"]["sinusoid"]["params"].__setitem__("n_sample", 5), ["datasets.sinusoid.params",
                                                                                  "n_samples"]),
    (lambda c: c["inputs"]["means"]["confidence"].__setitem__("lambda_p", 2), ["inputs.means.confidence.lambda_p"]),
    (lambda c: c["paper"]["experiments"]["fig_h2"].__setitem__("examples", {"alpha": 0.7}),
     ["paper.experiments.fig_h2.examples", "0.7", "grid values"]),
    (lambda c: c["paper"]["experiments"]["table_h2"].__setitem__("misplaced", {"k": 0}),
     ["paper.experiments.table_h2.misplaced.k"]),
])
def test_invalid_config_names_key_and_allowed_values(mutate, expected):
    config = load()
    mutate(config)
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    for text in expected:
        assert text in str(err.value)


def test_ids_change_only_with_their_parameters():
    a = Plan(load())
    config = load()
    config["methods"]["e1_a0.1"]["params"]["alpha"] = 0.2
    b = Plan(config)
    assert a.method_jobs["e1_a0.1"].params_id != b.method_jobs["e1_a0.1"].params_id
    assert a.method_jobs["tsne"].params_id == b.method_jobs["tsne"].params_id
    assert a.inputs_ids == b.inputs_ids
    assert Plan(load()).all_targets() == a.all_targets()


@pytest.mark.parametrize("name", CONFIGS)
def test_every_path_component_matches_the_workflow_wildcards(name):
    """Dataset names, inputs ids and params ids of every shipped config match the wildcard constraints of
    workflow/rules/common.smk (a params id with a '%' from a grid value once left config.yaml's DAG unbuildable)."""
    import re

    text = (ROOT / "workflow/rules/common.smk").read_text()
    pattern = {k: re.compile(v) for k, v in re.findall(r'^\s+(\w+)="([^"]+)",$', text, flags=re.M)}
    plan = Plan(load(name))
    for dataset, inputs, entry in plan.runs():
        job = plan.method_jobs[entry]
        assert pattern["dataset"].fullmatch(dataset), dataset
        assert pattern["inputs_id"].fullmatch(plan.inputs_ids[inputs]), plan.inputs_ids[inputs]
        assert pattern["method"].fullmatch(job.method), job.method
        assert pattern["params_id"].fullmatch(job.params_id), job.params_id
        posterior_id = plan.posterior_id(job.method, job.params_id)
        assert posterior_id is None or pattern["posterior_id"].fullmatch(posterior_id), posterior_id


def test_snerv_and_pe_of_a_fold_share_one_class_posterior_job():
    """config.yaml's supervised protocol: SNeRV (λ = 0.1 and 0.3) and PE of one fold wait for the same posterior
    job, whose benchmark file is in each of their chains; a method entry with other mixture settings gets its own,
    and methods without a class posterior none."""
    config = load("config.yaml")
    plan = Plan(config)
    by_block: dict[tuple[str, str], set[str]] = {}
    for dataset, inputs, entry in plan.runs():
        job = plan.method_jobs[entry]
        posterior_id = plan.posterior_id(job.method, job.params_id)
        assert (posterior_id is not None) == (job.method in {"snerv", "pe"}), entry
        if posterior_id is not None:
            by_block.setdefault((dataset, inputs), set()).add(posterior_id)
            chain = plan.run_chain(dataset, inputs, entry)
            assert chain[-3] == f"results/benchmarks/jobs/posterior/{dataset}/{plan.inputs_ids[inputs]}/{posterior_id}.tsv"
    folds = {key: ids for key, ids in by_block.items() if key[1].startswith("cv10_")}
    assert len(folds) == 30 and all(len(ids) == 1 for ids in folds.values())
    assert len(set().union(*folds.values())) == 1
    config["methods"]["snerv_03"]["params"]["posterior_max_iter"] = 100
    plan = Plan(config)
    job = plan.method_jobs["snerv_03"]
    assert plan.posterior_id("snerv", job.params_id) != plan.posterior_id("pe", plan.method_jobs["pe"].params_id)


def test_timing_plan_names_the_jobs_that_hold_more_than_one_core():
    """The whole-run estimate counts a job's declared threads: the timing plan lists the embed and score jobs of
    config.yaml's two-thread co-embedding entries with 2, and no single-thread job."""
    plan = Plan(load("config.yaml"))
    timing = plan.timing_plan()
    threads = timing["threads"]
    chained = {f for chain in timing["runs"] for f in chain} | {e["own"] for e in timing["experiments"].values()}
    assert threads and set(threads) <= chained and min(threads.values()) >= 2
    for dataset, inputs, entry in plan.runs():
        job = plan.method_jobs[entry]
        embed, score = plan.run_chain(dataset, inputs, entry)[-2:]
        declared = int(job.resources.get("threads", 1))
        assert threads.get(embed, 1) == declared and threads.get(score, 1) == declared, entry
    assert any(plan.method_jobs[e].method == "coembed" and threads[plan.run_chain(d, i, e)[-2]] == 2
               for d, i, e in plan.runs())


def test_grid_values_become_clean_path_components():
    from cova.config import expand_grid

    names = [n for n, _, _ in expand_grid("nbr", {"method": "coembed", "grid": {"k_r": ["10%", 5, "a b"]}})]
    assert names == ["nbr-k_r10pct", "nbr-k_r5", "nbr-k_ra_b"]


def test_plan_targets_cover_runs_tables_and_fig1():
    plan = Plan(load())
    targets = plan.all_targets()
    assert "results/tables/scores.csv" in targets
    assert "results/paper/cova/fig1.png" in targets
    assert "results/tables/timings.png" in targets and "results/tables/timings.png" not in plan.all_targets(False)
    n_runs = len(plan.runs())
    assert n_runs >= sum(len(r["methods"]) for r in load()["runs"])
    assert sum(t.endswith("scatter.png") for t in targets) == n_runs
    config = copy.deepcopy(load())
    del config["paper"]
    assert "results/paper/cova/fig1.png" not in Plan(config).all_targets()
