"""Config mistakes fail before any job runs, with a message naming the file and line, the key, or the run.

Covers: YAML syntax errors (config.yaml, an overlay's base, ``python -m cova check-config``), dataset names that
are path components, ``--config`` without ``--configfile``, loader parameters (types and ranges), method
parameters, and one-cohort data for cohort methods and cohort scores.
"""

from __future__ import annotations

import copy
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import yaml

from cova.config import ConfigError, known_cohort_count, load_schema, read_config_file, resolve_overlay, validate_config
from cova.datasets import load
from cova.datasets.base import Dataset
from cova.embedding import Embedding
from cova.inputs import build_inputs
from cova.metrics.score import score_run

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


#: one small run: a configuration of its own, independent of the shipped ones
SMALL_CONFIG = {"seed": 0, "datasets": {"sinusoid": {"loader": "sinusoid", "params": {"n_samples": 60}}},
                "inputs": {"means": {"weights": {"kind": "euclidean_max"}, "confidence": {"kind": "eq12"},
                                     "prototypes": {"kind": "means"}}},
                "methods": {"pca": {"method": "pca"}},
                "runs": [{"dataset": "sinusoid", "inputs": "means", "methods": ["pca"]}]}


def small(**datasets: dict) -> dict:
    """A copy of :data:`SMALL_CONFIG` with more datasets."""
    config = copy.deepcopy(SMALL_CONFIG)
    config["datasets"].update(datasets)
    return config


def refused(config: dict) -> str:
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    return str(err.value)


# ---------------------------------------------------------------------------------------------------------------
# YAML syntax errors name the file, line and column


@pytest.mark.parametrize("text,line", [("seed: 1\ndatasets: {a: [\n", 3), ("seed: 1\ndatasets:\n  a: 1\n b: 2\n", 4),
                                       ("\tseed: 1\n", 1)])
def test_yaml_syntax_error_names_file_and_line(tmp_path, text, line):
    path = tmp_path / "my.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"config file {re.escape(str(path))}, line {line}, column \d+: not valid"):
        read_config_file(path)


def test_a_key_given_twice_is_refused(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("seed: 1\nmethods:\n  tsne: {method: tsne}\n  pca: {method: pca}\n  tsne: {method: tsne_exact}\n")
    with pytest.raises(ConfigError, match=r"dup.yaml, line 5, column 3: .*duplicate key 'tsne' \(first given on "
                                          r"line 3\)"):
        read_config_file(path)


def test_shipped_configs_read_as_plain_yaml_does():
    for name in ["config.yaml", "config/ci.yaml", "config/demo.yaml"]:
        assert read_config_file(ROOT / name) == yaml.safe_load((ROOT / name).read_text())


def test_config_file_must_be_a_mapping_and_exist(tmp_path):
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="list.yaml: expected a mapping of config keys"):
        read_config_file(tmp_path / "list.yaml")
    with pytest.raises(ConfigError, match="missing.yaml: cannot be read"):
        read_config_file(tmp_path / "missing.yaml")


def test_overlay_base_with_syntax_error_names_the_base(tmp_path):
    (tmp_path / "base.yaml").write_text("seed: 0\nruns: [\n")
    with pytest.raises(ConfigError, match=r"base.yaml, line 3"):
        resolve_overlay({"overlay": {"base": "base.yaml"}, "seed": 1}, tmp_path)


def test_check_config_command(tmp_path, caplog):
    from cova.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("overlay: {base: config.yaml}\nseed: [1\n")
    with caplog.at_level(logging.ERROR, logger="cova"), pytest.raises(SystemExit) as stop:
        main(["check-config", "--configfile", str(bad), "--workdir", str(ROOT)])
    assert stop.value.code == 1
    assert f"config file {bad}, line 3" in caplog.text
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(SMALL_CONFIG))
    good = tmp_path / "good.yaml"
    good.write_text("overlay: {base: base.yaml}\nseed: 3\n")
    assert main(["check-config", "--configfile", str(good), "--workdir", str(tmp_path)]) == 0


# ---------------------------------------------------------------------------------------------------------------
# names are path components: never '.', '..' or an option


@pytest.mark.parametrize("name", ["..", ".", "...", ".hidden", "-x", "a/b"])
def test_dataset_names_that_are_paths_are_refused(name):
    config = small()
    config["datasets"][name] = config["datasets"]["sinusoid"]
    message = refused(config)
    assert message.startswith(f"config key datasets: {name!r} is not allowed") and "never '.', '..'" in message
    config = small()
    config["runs"][0]["dataset"] = name
    assert refused(config).startswith(f"config key runs[0].dataset: {name!r} is not allowed")


def test_wildcard_constraints_match_the_schema_names():
    pattern = load_schema()["$defs"]["name"]["pattern"]
    text = (ROOT / "workflow/rules/common.smk").read_text()
    for wildcard in ("dataset", "raw", "inputs_id", "params_id"):
        constraint = re.search(rf'^\s+{wildcard}="([^"]+)",$', text, re.M).group(1)
        assert f"^{constraint}$" == pattern
        for bad in ("..", ".", ".x", "-x"):
            assert not re.fullmatch(constraint, bad)
        for good in ("sinusoid", "e1_a0.1-3f2a9c1d", "_x", "9"):
            assert re.fullmatch(constraint, good)


# ---------------------------------------------------------------------------------------------------------------
# loader parameters: one schema per loader, types and ranges


@pytest.mark.parametrize("dataset,param,value,expected", [
    ("sinusoid", "n_samples", "300", "'300' is not allowed; allowed: an int in the range [2, inf)"),
    ("sinusoid", "n_samples", True, "True is not allowed; allowed: an int in the range [2, inf)"),
    ("sinusoid", "n_samples", 1, "1 is not allowed; allowed: an int in the range [2, inf)"),
    ("sinusoid", "noise", -0.1, "-0.1 is not allowed; allowed: a float in the range [0.0, inf)"),
    ("cylinder2", "n_bands", 0, "0 is not allowed; allowed: an int in the range [1, inf)"),
    ("digits", "random_state", -1, "-1 is not allowed; allowed: an int in the range [0, inf)"),
    ("digits", "n_per_class", 2.5, "2.5 is not allowed; allowed: an int in the range [1, inf) or None"),
    ("sphere", "n_lat_bins", 1.0, "1.0 is not allowed; allowed: an int in the range [1, inf)"),
])
def test_loader_params_are_checked(dataset, param, value, expected):
    config = small(**{dataset: {"loader": dataset}})
    config["datasets"][dataset].setdefault("params", {})[param] = value
    assert refused(config) == f"config key datasets.{dataset}.params.{param}: {expected}"


@pytest.mark.parametrize("loader,params,key,expected", [
    ("mnist", {"split": "val"}, "split", "'val' is not allowed; allowed: a str among {'all', 'test', 'train'}"),
    ("coil20", {"size": 100}, "size", "100 is not allowed"),
    ("places_shaped", {"density": 0}, "density", "0 is not allowed; allowed: a float in the range (0.0, 1.0]"),
    ("random_matrix", {"n_samples": 2}, "n_samples", "2 is not allowed; allowed: an int in the range [3, inf)"),
    ("generic", {"path": "x.csv", "label": "y", "sep": "pipe"}, "sep", "'pipe' is not allowed"),
    ("generic", {"path": "x.csv", "header": "yes"}, "header", "'yes' is not allowed"),
])
def test_loader_params_of_other_loaders(loader, params, key, expected):
    config = small(extra={"loader": loader, "params": params})
    message = refused(config)
    assert message.startswith(f"config key datasets.extra.params.{key}: ") and expected in message, message


def test_integers_are_ints_everywhere():
    config = small()
    config["metrics"] = {"n_neighbors": 12.0}
    assert refused(config) == "config key metrics.n_neighbors: 12.0 is not of type 'integer'"
    config = small()
    config["inputs"]["means"]["weights"]["n_neighbors"] = 30.0
    assert refused(config) == ("config key inputs.means.weights.n_neighbors: 30.0 is not allowed; allowed: an int in the "
                               "range [1, inf)")


def test_method_params_name_path_value_and_allowed():
    config = small()
    config["methods"]["e1_h2"] = read_config_file(ROOT / "config.yaml")["methods"]["e1_h2"]
    config["runs"][0]["methods"].append("e1_h2")
    config["methods"]["e1_h2"]["params"]["alpha"] = 1.5
    assert refused(config) == ("config key methods.e1_h2.params.alpha: 1.5 is not allowed; allowed: a float in the "
                               "range [0.0, 1.0]")


# ---------------------------------------------------------------------------------------------------------------
# one cohort: refused for cohort methods and inputs blocks; no cohort scores


def one_cohort_config(inputs: dict, methods: dict) -> dict:
    return {"seed": 0, "datasets": {"rm": {"loader": "random_matrix", "params": {"n_samples": 40}},
                                    "one": {"loader": "sinusoid", "params": {"n_samples": 60, "n_cohorts": 1}}},
            "inputs": inputs, "methods": methods,
            "runs": [{"dataset": d, "inputs": i, "methods": [m]} for d in ("rm", "one") for i in inputs for m in methods
                     if (d == "rm") == ("graph" in inputs[i])]}


def test_known_cohort_counts():
    assert known_cohort_count({"loader": "cylinder2"}) == (12, "loader 'cylinder2': n_sectors=4, n_bands=3")
    assert known_cohort_count({"loader": "sinusoid", "params": {"n_cohorts": 1}})[0] == 1
    assert known_cohort_count({"loader": "random_matrix"}) == (1, "loader 'random_matrix': one cohort by design")
    assert known_cohort_count({"loader": "digits"}) is None
    assert known_cohort_count({"loader": "places2", "params": {"features": "f.npz"}}) is None
    assert known_cohort_count({"loader": "places2", "params": {"features": "f.npz", "n_classes": 1}})[0] == 1


def test_one_cohort_is_refused_for_cohort_methods_at_config_time():
    vector = {"weights": {"kind": "euclidean_max"}, "confidence": {"kind": "eq12"}, "prototypes": {"kind": "means"}}
    message = refused(one_cohort_config({"vec": vector}, {"e1": {"method": "cova_e1"}}))
    assert message.startswith("config key runs[0]: dataset 'one' has 1 cohort (loader 'sinusoid': n_cohorts=1)")
    assert "inputs block 'vec'" in message and "method entry 'e1' (cova_e1)" in message
    assert "every cohort score would be 1" in message
    graph = {"graph": {"source": "relations"}, "features": {"kind": "raw"}}
    message = refused(one_cohort_config({"g": graph}, {"lda": {"method": "lda", "params": {"n_components": 1}}}))
    assert "dataset 'rm' has 1 cohort" in message and "method entry 'lda' (lda)" in message
    message = refused(one_cohort_config({"g": dict(graph, prototypes={"kind": "means"})},
                                        {"t": {"method": "tsne_exact", "params": {"affinity": "inputs"}}}))
    assert "inputs block 'g'" in message and "method entry" not in message
    spectral = dict(vector, cohorts={"kind": "spectral", "n_clusters": 3})
    validate_config(one_cohort_config({"vec": spectral}, {"e1": {"method": "cova_e1"}}))


def test_subset_of_more_classes_than_the_dataset_has():
    config = small()
    config["inputs"]["means"]["subset"] = {"n_classes": 7}
    assert refused(config) == ("config key runs[0]: inputs block 'means' keeps subset.n_classes=7 classes, but "
                               "dataset 'sinusoid' has 6 (loader 'sinusoid': n_cohorts=6)")
    config["inputs"]["means"]["subset"] = {"n_classes": 6}
    validate_config(config)


def test_one_cohort_graph_run_without_cohort_methods_is_valid():
    validate_config(one_cohort_config({"g": {"graph": {"source": "relations"}}},
                                      {"t": {"method": "tsne_exact", "params": {"affinity": "inputs"}}}))


def test_inputs_step_refuses_one_cohort_for_r_and_prototypes():
    ds = load("sinusoid", n_samples=60, n_cohorts=1)
    with pytest.raises(ValueError, match="cohort confidences R and prototypes: at least 2 cohorts are needed, but "
                                         "the data has 1"):
        build_inputs(ds, {"weights": {"kind": "euclidean_max"}, "confidence": {"kind": "eq12"},
                          "prototypes": {"kind": "means"}})


def one_cohort_graph_dataset(n: int = 30) -> Dataset:
    rng = np.random.default_rng(0)
    A = sp.random(n, n, density=0.3, random_state=1, format="csr")
    return Dataset(rng.normal(size=(n, 3)), np.zeros(n, dtype=np.int64), ["all"], relations=A + A.T)


def test_embed_step_refuses_one_cohort_for_label_methods(tmp_path, caplog):
    from cova.cli import main

    ds = one_cohort_graph_dataset()
    ds.save(tmp_path / "d.npz")
    build_inputs(ds, {"graph": {"source": "relations"}, "features": {"kind": "raw"}}).save(tmp_path / "i.npz",
                                                                                           with_X=True)
    assert main(["embed", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz"),
                 "--method", "lda", "--params", '{"n_components": 1}', "--out", str(tmp_path / "e.npz")]) == 1
    assert re.search("method 'lda' .*: at least 2 cohorts are needed, but the data has 1", caplog.text)
    assert "Traceback" not in caplog.text


def test_score_step_gives_no_cohort_scores_for_one_cohort(caplog):
    ds = one_cohort_graph_dataset()
    inputs = build_inputs(ds, {"graph": {"source": "relations"}, "features": {"kind": "raw"}})
    Z = np.random.default_rng(1).normal(size=(ds.X.shape[0], 2))
    with caplog.at_level(logging.WARNING, logger="cova"):
        scores = score_run(inputs, Embedding(Z))
    assert "a single cohort" in caplog.text
    assert {"s_n", "s_s", "knn_accuracy", "s_c_r_orig"}.isdisjoint(scores)
    assert "trustworthiness" in scores


# ---------------------------------------------------------------------------------------------------------------
# Snakemake: config.yaml with --config on top; a YAML error in config.yaml names file and line


def small_workdir(path: Path) -> Path:
    """A copy of the workflow whose config.yaml is one small run (the dry runs stay fast)."""
    path.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "Snakefile", path / "Snakefile")
    shutil.copy(ROOT / "environment.yml", path / "environment.yml")
    shutil.copytree(ROOT / "workflow", path / "workflow")
    (path / "config.yaml").write_text(yaml.safe_dump(SMALL_CONFIG))
    return path


def dry_run(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SNAKEMAKE, "-n", "-p", "--cores", "1", *args], cwd=workdir, capture_output=True,
                          text=True)


@pytest.mark.slow
def test_config_on_the_command_line_changes_config_yaml(tmp_path):
    workdir = small_workdir(tmp_path)
    proc = dry_run(workdir, "--config", "seed=5")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    assert "--seed 5" in out and "--seed 0" not in out and "results/sinusoid/means-" in out


@pytest.mark.slow
def test_snakemake_names_the_line_of_a_yaml_error_in_config_yaml(tmp_path):
    workdir = small_workdir(tmp_path)
    with open(workdir / "config.yaml", "a") as f:
        f.write("metrics: {kappa: [\n")
    proc = dry_run(workdir)
    assert proc.returncode != 0
    assert re.search(r"config file config.yaml, line \d+, column \d+: not valid YAML", proc.stdout + proc.stderr)


def test_coembedding_neighbourhood_sizes_are_checked_before_any_job():
    config = small(dots={"loader": "coembed_points", "params": {"kind": "dots"}})
    config["inputs"]["rel"] = {"relation": {"source": "points",
                                            "groups": {"rows": [0, 1], "columns": [2, 3], "shared": [4, 5]}}}
    config["methods"]["co"] = {"method": "coembed", "params": {"search": "grid", "k_r": "10pct"}}
    config["runs"].append({"dataset": "dots", "inputs": "rel", "methods": ["co"]})
    assert refused(config) == ("config key methods.co.params.k_r: '10pct' is not allowed; allowed: an int in the "
                               "range [1, inf) or a percentage such as '10%', 'all' or 'all-<k>'")
    config["methods"]["co"]["params"]["k_r"] = "10%"
    config["methods"]["co"]["grid"] = {"k_c": ["same", "all-10", 5]}
    validate_config(config)
