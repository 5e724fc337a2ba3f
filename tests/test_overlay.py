"""A configuration overlay (config/ci.yaml) is config.yaml plus what it states: merge, removal, exclusion, pruning."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cova.config import ConfigError, Plan, resolve_overlay

ROOT = Path(__file__).resolve().parents[1]


def read(name: str) -> dict:
    return yaml.safe_load((ROOT / name).read_text())


@pytest.fixture()
def base_dir(tmp_path) -> Path:
    base = {"seed": 0,
            "datasets": {"a": {"loader": "sinusoid", "params": {"n_samples": 100, "noise": 0.1}},
                         "b": {"loader": "digits"}, "c": {"loader": "compound"},
                         "f": {"loader": "places2", "params": {"features": "missing.npz"}, "fallback": "b"}},
            "inputs": {"i": {"weights": {"kind": "euclidean_max", "n_neighbors": 50},
                             "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
                             "prototypes": {"kind": "means"}},
                       "unused": {"weights": {"kind": "euclidean_max"}, "confidence": {"kind": "eq12"},
                                  "prototypes": {"kind": "means"}}},
            "methods": {"e1": {"method": "cova_e1", "params": {"alpha": 0.5}},
                        "sweep": {"method": "cova_e1", "grid": {"alpha": [0.1, 0.5, 0.9]}},
                        "pca": {"method": "pca"}},
            "runs": [{"dataset": "a", "inputs": "i", "methods": ["e1", "pca"]}],
            "paper": {"experiments": {
                "x": {"paper": "cova", "renderer": "sweep", "x": "alpha", "title": "X",
                      "runs": [{"dataset": "c", "inputs": "i", "methods": ["sweep"]}]},
                "y": {"paper": "cova", "renderer": "score_table", "runs": [{"dataset": "f", "inputs": "i",
                                                                             "methods": ["pca"]}]}}}}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    return tmp_path


def test_mappings_merge_lists_and_scalars_replace_null_removes(base_dir):
    overlay = {"overlay": {"base": "base.yaml"},
               "datasets": {"a": {"params": {"n_samples": 30, "noise": None}}},
               "inputs": {"i": {"weights": {"n_neighbors": 10}, "prototypes": {"kind": "ring", "rho": 3}}},
               "methods": {"sweep": {"grid": {"alpha": [0.1]}}},
               "runs": [{"dataset": "a", "inputs": "i", "methods": ["e1"]}]}
    config = resolve_overlay(overlay, base_dir)
    assert "overlay" not in config
    assert config["datasets"]["a"] == {"loader": "sinusoid", "params": {"n_samples": 30}}
    assert config["inputs"]["i"]["weights"] == {"kind": "euclidean_max", "n_neighbors": 10}
    assert config["inputs"]["i"]["confidence"] == {"kind": "eq12", "source": "eq9", "lambda_p": 0.01}
    assert config["inputs"]["i"]["prototypes"] == {"kind": "ring", "rho": 3}
    assert config["methods"]["sweep"]["grid"] == {"alpha": [0.1]}
    assert config["runs"] == [{"dataset": "a", "inputs": "i", "methods": ["e1"]}]
    assert config["paper"]["experiments"]["x"]["title"] == "X"  # not restated: inherited
    assert set(config["datasets"]) == {"a", "b", "c", "f"}  # no prune: everything of the base stays


def test_a_config_without_overlay_is_returned_as_is():
    config = read("config.yaml")
    assert resolve_overlay(config) is config


def test_exclusion_and_prune(base_dir):
    overlay = {"overlay": {"base": "base.yaml", "prune": True, "exclude_experiments": {"x": "too slow for CI"}}}
    config = resolve_overlay(overlay, base_dir)
    assert list(config["paper"]["experiments"]) == ["y"]
    # a: runs; f: experiment y; b: f's fallback. c was only in the excluded experiment
    assert set(config["datasets"]) == {"a", "b", "f"}
    assert set(config["inputs"]) == {"i"} and set(config["methods"]) == {"e1", "pca"}
    plan = Plan(config)
    assert {d for d, _, _ in plan.runs()} == {"a", "b"}  # f is missing its file: its runs use b


@pytest.mark.parametrize("paper", [None, {"experiments": None}])
def test_paper_null_removes_the_experiments_and_prune_keeps_only_the_runs(base_dir, paper):
    """A user's overlay that names its own runs and drops the base's experiments (`paper: null`, or
    `paper: {experiments: null}`), also when it excludes one of them by name: only its runs remain."""
    overlay = {"overlay": {"base": "base.yaml", "prune": True, "exclude_experiments": {"x": "not mine"}},
               "paper": paper, "runs": [{"dataset": "a", "inputs": "i", "methods": ["e1"]}]}
    config = resolve_overlay(overlay, base_dir)
    assert not (config.get("paper") or {}).get("experiments")
    assert set(config["datasets"]) == {"a"} and set(config["methods"]) == {"e1"}
    assert Plan(config).runs() == [("a", "i", "e1")]


def test_an_overlay_may_build_on_an_overlay(base_dir):
    (base_dir / "small.yaml").write_text(yaml.safe_dump({"overlay": {"base": "base.yaml"},
                                                         "datasets": {"a": {"params": {"n_samples": 30}}}}))
    config = resolve_overlay({"overlay": {"base": "small.yaml"}, "methods": {"e1": {"params": {"alpha": 0.2}}}},
                             base_dir)
    assert config["datasets"]["a"]["params"] == {"n_samples": 30, "noise": 0.1}
    assert config["methods"]["e1"]["params"] == {"alpha": 0.2}


@pytest.mark.parametrize("overlay,expected", [
    ({"overlay": {"base": "nowhere.yaml"}}, ["overlay.base", "nowhere.yaml"]),
    ({"overlay": {"base": "base.yaml", "prnue": True}}, ["overlay", "prnue"]),
    ({"overlay": {"base": "base.yaml", "exclude_experiments": {"x": ""}}}, ["overlay.exclude_experiments.x"]),
    ({"overlay": {"base": "base.yaml", "exclude_experiments": {"z": "why"}}}, ["exclude_experiments.z", "'z'"]),
    ({"overlay": {"base": "base.yaml", "exclude_experiments": {"x": "why"}},
      "paper": {"experiments": {"x": {"runs": []}}}}, ["exclude_experiments.x", "paper.experiments.x"]),
    ({"overlay": {"base": "base.yaml"}, "methods": {"e1": {"grid": None}}}, ["methods.e1.grid", "null"]),
])
def test_a_malformed_overlay_names_the_key(base_dir, overlay, expected):
    with pytest.raises(ConfigError) as err:
        resolve_overlay(overlay, base_dir)
    for text in expected:
        assert text in str(err.value)


def test_every_experiment_of_config_yaml_has_a_ci_rerun_or_a_reason():
    """config/ci.yaml reruns each experiment of config.yaml on small data (its paper.experiments) or says why not
    (overlay.exclude_experiments); an experiment added to config.yaml needs one of the two."""
    ci, full = read("config/ci.yaml"), read("config.yaml")
    reruns = set(ci.get("paper", {}).get("experiments", {}))
    excluded = ci["overlay"].get("exclude_experiments", {})
    for name in full["paper"]["experiments"]:
        assert (name in reruns) != (name in excluded), (
            f"experiment {name!r} of config.yaml: add a small rerun under paper.experiments of config/ci.yaml "
            f"or exclude it with a reason under overlay.exclude_experiments")
        assert name in reruns or excluded[name].strip()
    assert reruns <= set(full["paper"]["experiments"]), "config/ci.yaml reruns an experiment config.yaml lacks"
    plan = Plan(ci)
    assert set(plan.experiments) == set(full["paper"]["experiments"]) - set(excluded)


def test_ci_experiments_run_only_on_ci_data():
    """Every CI experiment states its own runs: none inherits config.yaml's full-size runs."""
    ci, full = read("config/ci.yaml"), read("config.yaml")
    for name, e in ci["paper"]["experiments"].items():
        assert "runs" in e, f"paper.experiments.{name} of config/ci.yaml must list its (small) runs"
    assert set(Plan(ci).config["datasets"]) <= set(full["datasets"])


def test_inputs_resources_are_not_part_of_the_run():
    config = resolve_overlay(read("config/ci.yaml"), ROOT)
    before = Plan(config)
    config["inputs"]["graph_tsne"]["resources"] = {"threads": 2, "mem_mb": 1000}
    after = Plan(config)
    assert after.inputs_ids == before.inputs_ids
    inputs_id = after.inputs_ids["graph_tsne"]
    assert "resources" not in after.inputs_spec(inputs_id)
    assert after.inputs_resources(inputs_id) == {"threads": 2, "mem_mb": 1000}
    assert before.inputs_resources(inputs_id) == {}
