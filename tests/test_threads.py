"""A workflow step uses the threads its rule reserved: numba and every BLAS/OpenMP pool it loaded.

The steps run for real in subprocesses (``python -m cova --threads N ...``); ``$COVA_THREADS_REPORT`` makes the step
write numba's thread count and ``threadpoolctl.threadpool_info()`` after it ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cova.threads import ENV_VARS, REPORT_ENV, limit_threads

SPEC = {"weights": {"kind": "gaussian_perplexity", "perplexity": 10},
        "confidence": {"kind": "eq11", "lambda_p": 0.01},
        "prototypes": {"kind": "tsne", "proximity": "graph", "rho": 3}}


def cova(*args: str, report: Path | None = None, inherited: int | None = None) -> subprocess.CompletedProcess:
    """Run a step; ``inherited``: thread variables the calling shell has set (otherwise none)."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS and k != "NUMBA_NUM_THREADS"}
    if inherited is not None:
        env.update({var: str(inherited) for var in (*ENV_VARS, "NUMBA_NUM_THREADS")})
    if report is not None:
        env[REPORT_ENV] = str(report)
    proc = subprocess.run([sys.executable, "-m", "cova", *args], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("threads") / "sinusoid.npz"
    cova("dataset", "--name", "sinusoid", "--loader", "sinusoid", "--params", '{"n_samples": 200}',
         "--out", str(out))
    return out


def run_inputs_step(dataset: Path, tmp_path: Path, *threads: str, inherited: int | None = None) -> dict:
    report = tmp_path / "threads.json"
    cova(*threads, "inputs", "--dataset", str(dataset), "--spec", json.dumps(SPEC), "--out",
         str(tmp_path / "inputs.npz"), report=report, inherited=inherited)
    assert (tmp_path / "inputs.npz").is_file()
    return json.loads(report.read_text())


def test_step_runs_on_one_thread_by_default(dataset, tmp_path):
    report = run_inputs_step(dataset, tmp_path)
    assert report["numba"] == 1
    assert {p["user_api"] for p in report["pools"]} >= {"blas"}  # numpy's and scipy's OpenBLAS at least
    assert [p["num_threads"] for p in report["pools"]] == [1] * len(report["pools"]), report["pools"]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="BLAS caps its pool at the number of cores")
def test_step_runs_on_the_threads_it_is_given(dataset, tmp_path):
    # the shell's one-thread settings (and this machine's default of all cores) must not decide: --threads does
    report = run_inputs_step(dataset, tmp_path, "--threads", "2", inherited=1)
    assert report["numba"] == 2
    assert report["pools"] and all(p["num_threads"] == 2 for p in report["pools"]), report["pools"]


def test_score_step_obeys_threads(dataset, tmp_path):
    """The score step (numba kernels and BLAS in the neighbourhood and cohort metrics) on one thread."""
    run_inputs_step(dataset, tmp_path)
    emb = tmp_path / "embedding.npz"
    cova("embed", "--dataset", str(dataset), "--inputs", str(tmp_path / "inputs.npz"), "--method", "pca",
         "--out", str(emb))
    report = tmp_path / "score_threads.json"
    cova("--threads", "1", "score", "--dataset", str(dataset), "--inputs", str(tmp_path / "inputs.npz"),
         "--embedding", str(emb), "--out", str(tmp_path / "scores.json"), report=report)
    pools = json.loads(report.read_text())
    assert pools["numba"] == 1 and all(p["num_threads"] == 1 for p in pools["pools"]), pools
    assert json.loads((tmp_path / "scores.json").read_text())["status"] == "ok"


def test_threads_must_be_positive(dataset, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "cova", "--threads", "0", "table", "--csv", "a", "--html", "b",
                           "--scores", "c"], capture_output=True, text=True)
    assert proc.returncode != 0 and "--threads" in proc.stderr
    with pytest.raises(ValueError, match="positive integer"):
        limit_threads(0)
