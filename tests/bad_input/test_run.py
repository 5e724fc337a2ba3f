"""Bad input, class "files and outputs" on a real run: a tiny Snakemake workflow (one generated dataset, one
inputs block, two fast methods, their scores and one experiment page) run end to end under ``umask 022``, with
HOME, the cache folders and TMPDIR pointed at fresh folders. Every output is readable by group and others, and
nothing is written outside results/, data/ and Snakemake's own .snakemake/: no stray file in the working folder,
nothing left in TMPDIR, and outside the run folder only the libraries' caches in the user's cache folders."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cova.config import Plan

from .written import assert_nothing_outside, snapshot

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

pytestmark = pytest.mark.slow

#: the smallest config that still runs every kind of job: dataset, inputs, embed, score, experiment page, tables
CONFIG = {"seed": 0,
          "datasets": {"sinusoid": {"loader": "sinusoid", "params": {"n_samples": 60, "n_cohorts": 3}}},
          "inputs": {"means": {"weights": {"kind": "euclidean_max", "n_neighbors": 10},
                               "confidence": {"kind": "eq12"}, "prototypes": {"kind": "means"}}},
          "methods": {"pca": {"method": "pca"}, "e1": {"method": "cova_e1"}},
          "metrics": {"n_neighbors": 5},
          "runs": [],
          "paper": {"experiments": {"tiny": {
              "paper": "cova", "renderer": "scatter_grid", "title": "A tiny run", "caption": "Two methods, 60 samples.",
              "runs": [{"dataset": "sinusoid", "inputs": "means", "methods": ["pca", "e1"]}]}}}}

#: where a run may write in its working folder: its outputs and Snakemake's own state and logs
RUN_FOLDERS = ("results", "data", ".snakemake")

#: the user-wide places the run is pointed at (fresh folders): variable -> folder name
USER_FOLDERS = {"HOME": "home", "XDG_CACHE_HOME": "cache", "MPLCONFIGDIR": "matplotlib", "TMPDIR": "tmp"}

#: libraries whose caches may appear in XDG_CACHE_HOME: Snakemake's source cache; numba's when the package's
#: own folder is read-only (else numba caches beside the package, or under NUMBA_CACHE_DIR if set)
CACHE_WRITERS = {"snakemake", "numba", "matplotlib"}


def umask_022() -> None:
    os.umask(0o022)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The run folder (a copy of the workflow and the config), its snapshot before the run, and the fresh user
    folders of :data:`USER_FOLDERS`."""
    workdir = tmp_path_factory.mktemp("run")
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(ROOT / name, workdir / name)
    shutil.copytree(ROOT / "workflow", workdir / "workflow")
    (workdir / "tiny.yaml").write_text(yaml.safe_dump(CONFIG))
    user = tmp_path_factory.mktemp("user")
    folders = {var: user / name for var, name in USER_FOLDERS.items()}
    for folder in folders.values():
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")}
    env.update({var: str(folder) for var, folder in folders.items()},
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    before = snapshot(workdir)
    proc = subprocess.run([SNAKEMAKE, "--cores", "2", "--configfile", "tiny.yaml"], cwd=workdir, env=env,
                          capture_output=True, text=True, preexec_fn=umask_022)
    assert proc.returncode == 0, f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return workdir, before, folders


def test_the_run_made_every_kind_of_output(run):
    workdir, _, _ = run
    plan = Plan(CONFIG)
    for entry in ("pca", "e1"):
        for name in ("embedding.npz", "scores.json", "scatter.png"):
            assert (workdir / plan.run_file("sinusoid", "means", entry, name)).is_file()
    for path in [plan.dataset_path("sinusoid"), *plan.experiment_outputs("tiny").values()]:
        assert (workdir / path).is_file(), path


def test_a_run_with_umask_022_leaves_every_output_readable_by_group_and_others(run):
    workdir, _, _ = run
    files, closed = 0, []
    for top in ("results", "data"):
        for folder, dirs, names in os.walk(workdir / top):
            for d in dirs:
                if stat.S_IMODE(os.stat(os.path.join(folder, d)).st_mode) & 0o055 != 0o055:
                    closed.append(os.path.join(folder, d))
            for name in names:
                files += 1
                if stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) & 0o044 != 0o044:
                    closed.append(os.path.join(folder, name))
    assert files > 20
    assert closed == []


def test_a_run_writes_nothing_outside_results_and_data(run):
    workdir, before, folders = run
    written = assert_nothing_outside(workdir, before, inside=RUN_FOLDERS)
    assert any(p.startswith("results/") for p in written) and any(p.startswith("data/") for p in written)
    # the job server's socket and every step's temporary files are gone
    assert sorted(os.listdir(folders["TMPDIR"])) == []
    # each library's cache goes to the folder it is pointed at, nothing to HOME itself
    assert sorted(os.listdir(folders["HOME"])) == []
    assert set(os.listdir(folders["XDG_CACHE_HOME"])) <= CACHE_WRITERS
