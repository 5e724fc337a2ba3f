"""End-to-end acceptance of the data model: the Snakemake workflow on tests/configs/core.yaml.

(a) exact t-SNE in 3-D on WorldTrade's trade network given as the affinity (no vectors, no cohort inputs);
(b) correspondence analysis of Cora's documents × words, rows and columns in one scatter figure.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cova.config import Plan
from cova.embedding import Embedding
from cova.io import read_scores

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
MIRROR = ROOT.parent / "shared" / "datasets"
CONFIG = ROOT / "tests" / "configs" / "core.yaml"
# the workflow runs in a temporary copy where the config's relative mirror path does not resolve
ENV = {**os.environ, "COVA_DATA_MIRROR": str(MIRROR)}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    assert MIRROR.is_dir(), f"the project's offline datasets are expected at {MIRROR}"
    workdir = tmp_path_factory.mktemp("core")
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(ROOT / name, workdir / name)
    shutil.copytree(ROOT / "workflow", workdir / "workflow")
    shutil.copy(CONFIG, workdir / "core.yaml")
    proc = subprocess.run([SNAKEMAKE, "--cores", "2", "--configfile", "core.yaml"], cwd=workdir,
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, f"snakemake failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return workdir, Plan(yaml.safe_load(CONFIG.read_text()))


def test_graph_run_embeds_in_3d_without_vectors(run):
    workdir, plan = run
    emb = Embedding.load(workdir / plan.run_file("worldtrade", "trade", "tsne_3d", "embedding.npz"))
    assert emb.ok and emb.Z.shape == (80, 3) and emb.n_components == 3 and emb.geometry == "plane"
    scores = read_scores(workdir / plan.run_file("worldtrade", "trade", "tsne_3d", "scores.json"))
    assert scores["status"] == "ok" and scores["n_samples"] == 80
    assert 0.0 <= scores["s_s"] <= 1.0  # needs labels and Z only
    for needs_x in ("s_n", "trustworthiness", "continuity"):  # no X: absent or NaN
        assert needs_x not in scores or math.isnan(scores[needs_x])
    assert (workdir / plan.run_file("worldtrade", "trade", "tsne_3d", "scatter.png")).stat().st_size > 10_000


def test_relation_run_holds_rows_and_columns(run):
    workdir, plan = run
    emb = Embedding.load(workdir / plan.run_file("cora", "words", "ca", "embedding.npz"))
    assert emb.ok and emb.Z.shape == (2708, 2)
    assert emb.extras["column_embedding"].shape == (1432, 2)  # word 444 occurs in no document: dropped
    scores = read_scores(workdir / plan.run_file("cora", "words", "ca", "scores.json"))
    assert scores["status"] == "ok" and 0.0 <= scores["s_s"] <= 1.0
    assert (workdir / plan.run_file("cora", "words", "ca", "scatter.png")).stat().st_size > 10_000
    assert (workdir / "results/tables/scores.csv").read_text().count("\n") == 3
