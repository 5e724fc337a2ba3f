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


@pytest.mark.parametrize("mutate,expected", [
    (lambda c: c["methods"]["e1_a0.1"].__setitem__("method", "cova_e9"), ["methods.e1_a0.1.method", "cova_e1"]),
    (lambda c: c["inputs"]["means"]["weights"].__setitem__("kind", "gauss"), ["inputs.means.weights.kind",
                                                                                "gaussian_perplexity"]),
    (lambda c: c["methods"]["e1_a0.1"]["params"].__setitem__("alfa", 0.2), ["methods.e1_a0.1.params", "alpha"]),
    (lambda c: c["runs"][0].__setitem__("dataset", "mnist"), ["runs[0].dataset", "sinusoid"]),
    (lambda c: c.__setitem__("sed", 1), ["sed"]),
    (lambda c: c["datasets"]["sinusoid"]["params"].__setitem__("n_sample", 5), ["datasets.sinusoid.params",
                                                                                  "n_samples"]),
    (lambda c: c["inputs"]["means"]["confidence"].__setitem__("lambda_p", 2), ["inputs.means.confidence.lambda_p"]),
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


def test_plan_targets_cover_runs_tables_and_fig1():
    plan = Plan(load())
    targets = plan.all_targets()
    assert "results/tables/scores.csv" in targets
    assert "results/paper/cova/fig1.png" in targets
    n_runs = len(plan.runs())
    assert n_runs >= sum(len(r["methods"]) for r in load()["runs"])
    assert sum(t.endswith("scatter.png") for t in targets) == n_runs
    config = copy.deepcopy(load())
    del config["paper"]
    assert "results/paper/cova/fig1.png" not in Plan(config).all_targets()
