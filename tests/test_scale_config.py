"""The scale configuration (config/scale.yaml) and its data set, cova.datasets.synthetic.cohort_manifold: a seeded
data set of known structure (cohorts on a curved manifold of known dimension) at any size."""

from __future__ import annotations

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
from sklearn.neighbors import NearestNeighbors

import requirements
from cova.config import ConfigError, Plan, read_config_file, resolve_config, validate_config
from cova.datasets import BUILTIN, GROUND_TRUTH_LOADERS, load
from cova.datasets.synthetic import COHORT_MANIFOLD_BLOCK, cohort_manifold, cohort_manifold_rows
from cova.viz.timings import read_benchmarks

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def test_cohort_manifold_is_seeded_and_shaped():
    a = cohort_manifold(3000, n_features=50, n_cohorts=7, seed=3)
    b = load("cohort_manifold", n_samples=3000, n_features=50, n_cohorts=7, seed=3)
    assert a.X.shape == (3000, 50) and a.X.dtype == np.float64 and a.ground_truth.shape == (3000, 2)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.labels, b.labels)
    assert np.array_equal(a.ground_truth, b.ground_truth)
    assert not np.array_equal(a.X, cohort_manifold(3000, n_features=50, n_cohorts=7, seed=4).X)
    assert a.label_names == [f"cohort {j}" for j in range(1, 8)] and set(a.labels) == set(range(7))
    assert "cohort_manifold" in BUILTIN and "cohort_manifold" in GROUND_TRUTH_LOADERS


def test_cohort_manifold_rows_do_not_depend_on_chunking():
    full = cohort_manifold(20_000, seed=1)
    cuts = [0, 1, 777, COHORT_MANIFOLD_BLOCK - 1, COHORT_MANIFOLD_BLOCK + 5, 2 * COHORT_MANIFOLD_BLOCK, 20_000]
    parts = [cohort_manifold_rows(lo, hi, seed=1) for lo, hi in zip(cuts, cuts[1:])]
    assert np.array_equal(np.concatenate([p[0] for p in parts]), full.X)
    assert np.array_equal(np.concatenate([p[1] for p in parts]), full.labels)
    assert np.array_equal(np.concatenate([p[2] for p in parts]), full.ground_truth)
    small = cohort_manifold(1000, seed=1)  # a scaled-down set is the prefix of the large one
    assert np.array_equal(small.X, full.X[:1000]) and np.array_equal(small.labels, full.labels[:1000])


def test_cohort_manifold_holds_its_stated_truth():
    n, noise = 20_000, 0.05
    ds = cohort_manifold(n, noise=noise, seed=2)
    meta = ds.meta
    shares, centres, radii = (np.array(meta[k]) for k in ("cohort_shares", "cohort_centres", "cohort_radii"))
    # cohort sizes: multinomial around the stated shares (5 binomial standard errors), 10x from largest to smallest
    counts = np.bincount(ds.labels, minlength=10)
    assert np.all(np.abs(counts - n * shares) < 5 * np.sqrt(n * shares * (1 - shares)))
    assert shares.max() / shares.min() == pytest.approx(meta["size_ratio"])
    # every latent point lies in its cohort's ball
    assert np.all(np.linalg.norm(ds.ground_truth - centres[ds.labels], axis=1) <= radii[ds.labels] + 1e-12)
    # the features are the stated map of the latent coordinates plus N(0, noise^2) on every feature
    m = ds.X.shape[1] - meta["n_noise_features"]
    clean = np.cos(ds.ground_truth @ np.array(meta["map_frequencies"]) + np.array(meta["map_phases"]))
    residual = ds.X - np.pad(clean, ((0, 0), (0, ds.X.shape[1] - m)))
    se = noise * np.sqrt(2.0 / n)  # standard error of a column's standard deviation
    assert np.all(np.abs(residual.std(axis=0) - noise) < 5 * se)
    assert np.all(np.abs(residual.mean(axis=0)) < 5 * noise / np.sqrt(n))


def test_cohort_manifold_close_pairs_are_closest():
    ds = cohort_manifold(6000, noise=0.0, seed=0)
    pairs = {tuple(p) for p in ds.meta["close_pairs"]}
    assert pairs == {(0, 1), (2, 3)}

    def gap(a: int, b: int) -> float:
        nn = NearestNeighbors(n_neighbors=1).fit(ds.X[ds.labels == b])
        return float(nn.kneighbors(ds.X[ds.labels == a])[0].min())

    for a, b in pairs:
        others = [gap(a, j) for j in range(10) if j not in (a, b)]
        assert gap(a, b) < min(others), (a, b)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_cohort_manifold_has_its_intrinsic_dimension(d):
    """Local PCA (Fukunaga & Olsen): in most 20-point neighbourhoods the first d principal components, and no
    fewer, hold 90% of the variance."""
    ds = cohort_manifold(5000, intrinsic_dim=d, noise=0.0, seed=1)
    queries = np.random.default_rng(0).choice(len(ds.X), 100, replace=False)
    _, neighbours = NearestNeighbors(n_neighbors=20).fit(ds.X).kneighbors(ds.X[queries])
    dims = []
    for nb in neighbours:
        ev = np.linalg.svd(ds.X[nb] - ds.X[nb].mean(axis=0), compute_uv=False) ** 2
        dims.append(int(np.searchsorted(np.cumsum(ev) / ev.sum(), 0.9)) + 1)
    assert np.median(dims) == d


def test_cohort_manifold_refuses_bad_options():
    with pytest.raises(ValueError, match="option n_noise_features: n_features - n_noise_features = 4 signal features are too few"):
        cohort_manifold(100, n_features=12, n_noise_features=8)
    with pytest.raises(ValueError, match="option close_pairs: 2 pairs need 2·close_pairs ≤ n_cohorts = 3"):
        cohort_manifold(100, n_cohorts=3, close_pairs=2)
    config = {"seed": 0, "datasets": {"cm": {"loader": "cohort_manifold",
                                             "params": {"n_features": 10, "intrinsic_dim": 3}}},
              "inputs": {"x": {}}, "methods": {"pca": {"method": "pca"}},
              "runs": [{"dataset": "cm", "inputs": "x", "methods": ["pca"]}]}
    with pytest.raises(ConfigError, match=r"datasets\.cm\.params.*n_noise_features.*at least 2·intrinsic_dim \+ 1 = 7"):
        validate_config(config)


SCALE = ROOT / "config" / "scale.yaml"
#: What config/scale.yaml runs (issue 42): these methods on both data sets.
SCALE_METHODS = {"cova_e1", "cova_e2", "cova_e3", "tsne", "umap", "dosnes", "featmap"}


def scale_small(tmp_path: Path, n_samples: int, n_per_class: int) -> Path:
    """An overlay of config/scale.yaml with its data sets scaled down: ``n_samples`` cohort_manifold points and
    ``n_per_class`` Fashion-MNIST images of each of its 10 classes."""
    path = tmp_path / "scale-small.yaml"
    path.write_text(yaml.safe_dump({"overlay": {"base": str(SCALE)},
                                    "datasets": {"manifold_1m": {"params": {"n_samples": n_samples}},
                                                 "fashion_mnist_70k": {"params": {"n_per_class": n_per_class}}}}))
    return path


def test_the_scale_config_runs_every_method_at_its_defaults_on_both_data_sets():
    config = resolve_config(read_config_file(SCALE), ROOT)
    validate_config(config)
    plan = Plan(config)
    datasets = config["datasets"]
    assert datasets["manifold_1m"] == {**datasets["manifold_1m"], "loader": "cohort_manifold",
                                       "params": {"n_samples": 1_000_000}}
    assert datasets["fashion_mnist_70k"]["loader"] == "fashion_mnist"
    assert datasets["fashion_mnist_70k"]["params"] == {"split": "all"}  # all 70,000 images
    runs = plan.runs()
    assert {d for d, _, _ in runs} == set(datasets) and not config["runs"]  # only the experiment's runs
    for dataset in datasets:
        assert {plan.method_jobs[e].method for d, _, e in runs if d == dataset} == SCALE_METHODS
    for entry in config["methods"].values():  # defaults: nothing but the threads of the libraries that take them
        assert set(entry.get("params", {})) <= {"n_jobs"}
        assert entry.get("params", {}).get("n_jobs", 2) == entry["resources"]["threads"] == 2
    # Sinkhorn-Knopp keeps the k-NN graph's O(n·k) entries; the random walk's two hops do not fit at 10⁶ points
    dosnes_inputs = {i for _, i, e in runs if plan.method_jobs[e].method == "dosnes"}
    assert [config["inputs"][i]["weights"]["normalize"]["kind"] for i in dosnes_inputs] == ["doubly_stochastic"]
    assert config["job_server"] is False  # each benchmark file then measures its own job
    scores = set(config["paper"]["experiments"]["scale"]["scores"])
    assert {"s_n", "s_c", "s_s", "trustworthiness", "continuity"} <= scores
    targets = plan.all_targets()
    assert "results/paper/cova/scale.html" in targets and "results/tables/timings.html" in targets
    timing = plan.timing_plan()  # every run's jobs (dataset, inputs, embed, score) have their benchmark files
    assert len(timing["runs"]) == len(runs) == 2 * len(SCALE_METHODS)
    assert {Path(f).parts[3] for chain in timing["runs"] for f in chain} >= {"dataset", "inputs", "embed", "score"}


def _snakemake(tmp_path: Path, configfile: Path, *extra: str) -> subprocess.CompletedProcess:
    for name in ("Snakefile", "workflow", "profiles", "environment.yml"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, tmp_path / name, dirs_exist_ok=True)
        else:
            shutil.copy(src, tmp_path / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "COVA_DATA_MIRROR": "/usr/share/datasets"}
    return subprocess.run([SNAKEMAKE, "--cores", "2", "--configfile", str(configfile), *extra], cwd=tmp_path,
                          capture_output=True, text=True, env=env)


def test_the_scale_config_lists_its_jobs(tmp_path):
    dry = _snakemake(tmp_path, SCALE, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", dry.stdout, re.M))
    n_runs = 2 * len(SCALE_METHODS)
    assert {k: int(v) for k, v in jobs.items() if k in ("dataset", "inputs", "embed", "score", "experiment",
                                                         "timings")} == \
        {"dataset": 2, "inputs": 6, "embed": n_runs, "score": n_runs, "experiment": 1, "timings": 1}
    assert "results/paper/cova/scale.html" in dry.stdout
    assert len(re.findall(r"python -m cova --threads 2 embed --dataset", dry.stdout)) == n_runs  # both cores


@pytest.mark.slow
def test_the_scale_config_runs_end_to_end_scaled_down(tmp_path):
    if not (Path("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz").is_file()):
        requirements.unavailable("the scaled-down scale run", "Fashion-MNIST is not in /usr/share/datasets (Debian "
                                 "package dataset-fashion-mnist; .ci/run installs it)")
    run = _snakemake(tmp_path, scale_small(tmp_path, 300, 15))  # the same DAG on 300 points and 150 images
    assert run.returncode == 0, run.stderr[-3000:]
    table = pd.read_csv(tmp_path / "results/paper/cova/scale.csv")
    assert len(table) == 2 * len(SCALE_METHODS)
    assert table[["s_n", "trustworthiness", "continuity"]].apply(lambda c: c.between(0, 1)).all().all()
    jobs = read_benchmarks(tmp_path / "results/benchmarks/jobs")
    for rule in ("dataset", "inputs", "embed", "score"):
        assert (jobs["rule"] == rule).any() and jobs.loc[jobs["rule"] == rule, "max_rss_mb"].gt(0).all()
    page = (tmp_path / "results/tables/timings.html").read_text()
    assert "Slowest jobs" in page and "manifold_1m" in page
