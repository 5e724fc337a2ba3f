"""Studies: a user's data through the papers' protocols from a few lines of config (cova.config.studies,
cova.experiments.protocols), data without labels, and README's "Adding a dataset" example run end to end."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import load_digits

from cova.config import ConfigError, Plan, expand_studies, validate_config
from cova.datasets import LOADERS
from cova.experiments.protocols import PROTOCOLS

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def write_h5ad(path: Path, X: np.ndarray, labels: list[str] | None) -> None:
    """A minimal AnnData file (the on-disk format anndata writes): X, obs with an optional ``cell_type``, var."""
    strings = h5py.string_dtype()

    def frame(group: h5py.Group, index: list[str], columns: dict[str, list[str]]) -> None:
        group.attrs.update({"encoding-type": "dataframe", "encoding-version": "0.2.0", "_index": "_index",
                            "column-order": np.array(list(columns), dtype=strings)})
        for name, values in {"_index": index, **columns}.items():
            d = group.create_dataset(name, data=np.array(values, dtype=strings))
            d.attrs.update({"encoding-type": "string-array", "encoding-version": "0.2.0"})

    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as f:
        f.attrs.update({"encoding-type": "anndata", "encoding-version": "0.1.0"})
        f.create_dataset("X", data=X).attrs.update({"encoding-type": "array", "encoding-version": "0.2.0"})
        frame(f.create_group("obs"), [f"cell{i}" for i in range(len(X))],
              {} if labels is None else {"cell_type": labels})
        frame(f.create_group("var"), [f"gene{j}" for j in range(X.shape[1])], {})


def digits(n: int = 300) -> tuple[np.ndarray, list[str]]:
    d = load_digits()
    return d.data[:n], [f"type{v}" for v in d.target[:n]]


def study_config(path: str, label: str | None, protocols: list | None = None) -> dict:
    params = {"path": path} if label is None else {"path": path, "label": label}
    study = {"datasets": ["cells"]} if protocols is None else {"datasets": ["cells"], "protocols": protocols}
    return {"seed": 0, "datasets": {"cells": {"loader": "generic", "params": params}}, "studies": {"cells": study}}


def test_a_study_runs_only_what_it_names(tmp_path):
    X, y = digits()
    write_h5ad(tmp_path / "cells.h5ad", X, y)
    config = study_config(str(tmp_path / "cells.h5ad"), "cell_type", ["compare", {"protocol": "alpha_sweep",
                                                                                    "alphas": [0.2, 0.8]}])
    validate_config(config)
    plan = Plan(config)
    assert plan.studies == ["cells"]
    assert plan.study_experiments("cells") == ["cells.compare", "cells.alpha_sweep"]
    assert {d for d, _, _ in plan.runs()} == {"cells"}
    entries = {e for _, _, e in plan.runs()}
    assert entries == {"cells.compare.cova_e1", "cells.compare.tsne", "cells.compare.umap", "cells.compare.pca",
                       "cells.alpha_sweep.cova_e1-alpha0.2", "cells.alpha_sweep.cova_e1-alpha0.8"}
    assert set(plan.config["inputs"]) == {"cells.points", "cells.cohorts"}  # shared by the two protocols
    targets = plan.all_targets()
    assert "results/studies/cells/index.html" in targets and "results/studies/cells/cells.compare.png" in targets
    assert not any(t.startswith("results/paper/") for t in targets)
    # expanding again changes nothing (the plan, the check and the Snakefile all expand)
    again, _ = expand_studies(plan.config)
    assert again["methods"] == plan.config["methods"] and again["paper"] == plan.config["paper"]


def test_unlabelled_data_run_the_label_free_methods_and_name_the_others(tmp_path):
    X, _ = digits()
    write_h5ad(tmp_path / "cells.h5ad", X, None)
    config = study_config(str(tmp_path / "cells.h5ad"), None)
    plan = Plan(config)
    assert {e for _, _, e in plan.runs()} == {"cells.compare.tsne", "cells.compare.umap", "cells.compare.pca"}
    assert any("cova_e1" in n and "no labels" in n and "datasets.cells.params.label" in n for n in plan.notices)
    with pytest.raises(ConfigError, match=r"config key studies\.cells\.protocols: protocol 'alpha_sweep' needs "
                                          r"cohort labels, but dataset 'cells' has none"):
        validate_config(study_config(str(tmp_path / "cells.h5ad"), None, ["compare", "alpha_sweep"]))
    # the same data named in an ordinary run with a method that arranges cohorts: refused, naming both
    config = {"seed": 0, "datasets": {"cells": {"loader": "generic", "params": {"path": str(tmp_path / "cells.h5ad")}}},
              "inputs": {"g": {"weights": {"kind": "gaussian_perplexity"}, "confidence": {"kind": "eq11"},
                               "prototypes": {"kind": "tsne", "proximity": "graph"}}, "x": {}},
              "methods": {"e1": {"method": "cova_e1"}, "pca": {"method": "pca"}},
              "runs": [{"dataset": "cells", "inputs": "x", "methods": ["pca"]},
                       {"dataset": "cells", "inputs": "g", "methods": ["e1"]}]}
    with pytest.raises(ConfigError, match=r"config key runs\[1\]: dataset 'cells' has 1 cohort \(a generic file read "
                                          r"without a label column.*inputs block 'g'.*method entry 'e1' \(cova_e1\).*"
                                          r"cohorts: \{kind: spectral"):
        validate_config(config)
    del config["runs"][1]
    validate_config(config)


def test_the_generic_loader_reads_data_without_labels(tmp_path):
    X, _ = digits(50)
    write_h5ad(tmp_path / "a.h5ad", X, None)
    pd.DataFrame(X[:, :5], columns=[f"f{j}" for j in range(5)]).to_csv(tmp_path / "a.csv", index=False)
    np.savez(tmp_path / "a.npz", X=X)
    for name in ("a.h5ad", "a.csv", "a.npz"):
        ds = LOADERS["generic"](path=tmp_path / name)
        assert ds.n_samples == 50 and ds.label_names == ["unlabelled"] and not ds.labels.any()
        assert ds.meta["unlabelled"] is True
    with pytest.raises(ValueError, match="label_names names the classes of a label column"):
        LOADERS["generic"](path=tmp_path / "a.npz", label_names=["a", "b"])


@pytest.mark.parametrize("protocols, key, message", [
    (["nope"], r"studies\.cells\.protocols\[0\]\.protocol", r"'nope' is not allowed; allowed values: \['alpha_sweep'"),
    ([{"protocol": "alpha_sweep", "alphas": [0.5]}], r"studies\.cells\.protocols\[0\]\.alphas", "list of at least 2"),
    ([{"protocol": "compare", "methods": ["tsne", "nope"]}], r"studies\.cells\.protocols\[0\]\.methods",
     r"\['tsne', 'nope'\] is not allowed; allowed: a list of registered method names"),
    (["compare", "compare"], r"studies\.cells\.protocols\[1\]", "named twice"),
])
def test_bad_study_options_name_the_key(tmp_path, protocols, key, message):
    X, y = digits(60)
    write_h5ad(tmp_path / "c.h5ad", X, y)
    with pytest.raises(ConfigError, match=rf"config key {key}.*{message}"):
        validate_config(study_config(str(tmp_path / "c.h5ad"), "cell_type", protocols))


def test_a_study_names_defined_datasets_and_never_overwrites_a_users_entry(tmp_path):
    X, y = digits(60)
    write_h5ad(tmp_path / "c.h5ad", X, y)
    config = study_config(str(tmp_path / "c.h5ad"), "cell_type")
    config["studies"]["cells"]["datasets"] = ["cels"]
    with pytest.raises(ConfigError, match=r"config key studies\.cells\.datasets\[0\]: 'cels' is not defined"):
        validate_config(config)
    config = study_config(str(tmp_path / "c.h5ad"), "cell_type")
    config.update(inputs={}, runs=[], methods={"cells.compare.tsne": {"method": "tsne", "params": {"perplexity": 5}}})
    with pytest.raises(ConfigError, match="generates methods entry 'cells.compare.tsne', which the config already"):
        validate_config(config)


def test_any_paper_experiment_is_a_protocol(tmp_path):
    X, y = digits(80)
    write_h5ad(tmp_path / "c.h5ad", X, y)
    config = study_config(str(tmp_path / "c.h5ad"), "cell_type", [{"protocol": "paper", "experiment": "table3"},
                                                                  {"protocol": "paper", "experiment": "featmap_table1"}])
    validate_config(config)
    plan = Plan(config)
    shipped = Plan(yaml.safe_load((ROOT / "config.yaml").read_text()))
    for name in ("table3", "featmap_table1"):
        ours = {(i, e) for _, i, e in plan.experiment_runs(f"cells.{name}")}
        assert ours == {(i, e) for _, i, e in shipped.experiment_runs(name)}  # the same runs, on our data
        e = plan.experiments[f"cells.{name}"]
        assert e["renderer"] == shipped.experiments[name]["renderer"] and "claims" not in e and "reference" not in e
    assert plan.experiment_outputs("cells.table3")["png"] == "results/studies/cells/cells.table3.png"
    assert "results/paper" not in " ".join(plan.all_targets())
    config["studies"]["cells"]["protocols"] = [{"protocol": "paper", "experiment": "dosnes_fig2_4"}]
    with pytest.raises(ConfigError, match=r"config key studies\.cells \(its cells\.dosnes_fig2_4 runs\): inputs block "
                                          r"'citation_raw' reads the dataset's graph"):
        validate_config(config)
    config["studies"]["cells"]["protocols"] = [{"protocol": "paper", "experiment": "nope"}]
    with pytest.raises(ConfigError, match=r"config key studies\.cells\.protocols\[0\]\.experiment: 'nope' is not an "
                                          r"experiment of config\.yaml; allowed: \["):
        validate_config(config)


def test_every_protocol_declares_its_options_and_expands():
    for name in PROTOCOLS:
        if name == "paper":  # its runs are the experiment's it reuses (test above)
            continue
        protocol = PROTOCOLS[name]()
        assert protocol.runs and protocol.experiment["renderer"]
        assert {b for b, _ in protocol.runs} == set(protocol.inputs)
        assert {m for _, ms in protocol.runs for m in ms} == set(protocol.methods)


def readme_study() -> tuple[str, str]:
    """The study config and the command of README's "Adding a dataset"."""
    text = (ROOT / "README.md").read_text()
    section = text.split("### Adding a dataset", 1)[1]
    config = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    command = re.search(r"```(?:sh|bash)\n(.*?)```", section, re.S).group(1).strip()
    return config, command


@pytest.mark.slow
def test_readme_study_runs_end_to_end(tmp_path):
    config, command = readme_study()
    assert len(config.strip().splitlines()) <= 8 and "overlay" not in config
    parsed = yaml.safe_load(config)
    path = Path(parsed["datasets"]["cells"]["params"]["path"])
    X, y = digits()
    write_h5ad(tmp_path / path, X, y)
    (tmp_path / "my_study.yaml").write_text(config)
    args = command.split()
    assert args[0] == "snakemake" and "--configfile" in args
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("Snakefile", "workflow", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    dry = subprocess.run([SNAKEMAKE, *args[1:], "-n"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", dry.stdout, re.M))
    assert int(jobs["embed"]) == 4 + 5 and int(jobs["study_experiment"]) == 2  # compare: 4 methods; alpha: 5 points
    assert "results/paper" not in dry.stdout
    run = subprocess.run([SNAKEMAKE, *args[1:]], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    page = (tmp_path / "results/studies/cells/index.html").read_text()
    for entry in ("cells.compare.tsne", "cells.compare.cova_e1", "cells.alpha_sweep.cova_e1-alpha0.9"):
        assert entry in page
    for img in re.findall(r"<img src='([^']+)'", page):
        assert (tmp_path / "results/studies/cells" / img).is_file(), img
    scores = pd.read_csv(tmp_path / "results/studies/cells/scores.csv")
    assert len(scores) == 9 and scores["s_n"].between(0, 1).all() and scores["status"].eq("ok").all()
    anndata = pytest.importorskip("anndata")
    adata = anndata.read_h5ad(tmp_path / "results/cells/export/cells.h5ad")
    assert list(adata.obs_names) == [f"cell{i}" for i in range(len(X))] and "cell_type" in adata.obs
    tsne = [k for k in adata.obsm if k.startswith("X_cells.compare.tsne")]
    assert len(tsne) == 1 and adata.obsm[tsne[0]].shape == (len(X), 2) and np.isfinite(adata.obsm[tsne[0]]).all()
    assert "cells.h5ad" in page


def test_an_experiment_is_a_protocol_over_the_datasets_it_lists(tmp_path):
    """Adding a data set to a paper experiment is one line of its ``datasets``; the check says what a listed data
    set lacks for the experiment's runs (labels, a graph) before any job, naming the experiment's key."""
    X, y = digits(80)
    write_h5ad(tmp_path / "c.h5ad", X, y)
    write_h5ad(tmp_path / "u.h5ad", X, None)
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    experiment = config["paper"]["experiments"]["table3"]
    assert "dataset" not in experiment["runs"][0] and len(experiment["datasets"]) == 3
    config["datasets"]["cells"] = {"loader": "generic", "params": {"path": str(tmp_path / "c.h5ad"),
                                                                   "label": "cell_type"}}
    experiment["datasets"].append("cells")
    validate_config(config)
    runs = Plan(config).experiment_runs("table3")
    assert {(d, e) for d, _, e in runs if d == "cells"} == {("cells", "sne"), ("cells", "tsne"), ("cells", "lle")}
    config["datasets"]["cells"]["params"] = {"path": str(tmp_path / "u.h5ad")}
    with pytest.raises(ConfigError, match=r"config key paper\.experiments\.table3\.runs\[3\] \(from paper\."
                                          r"experiments\.table3\.datasets\[3\]\): dataset 'cells' has 1 cohort"):
        validate_config(config)
    config["datasets"]["cells"]["params"]["label"] = "cell_type"
    config["paper"]["experiments"]["dosnes_fig2_4"]["runs"][0]["dataset"] = "cells"
    with pytest.raises(ConfigError, match=r"inputs block 'citation_raw' reads the dataset's graph \(graph: \{source: "
                                          r"relations\}\), but dataset 'cells' \(loader 'generic'\) has none"):
        validate_config(config)
    config["paper"]["experiments"]["dosnes_fig2_4"]["runs"][0]["dataset"] = "cora"
    validate_config(config)
    del experiment["datasets"]
    with pytest.raises(ConfigError, match=r"config key paper\.experiments\.table3\.runs\[0\]: names no dataset"):
        validate_config(config)
