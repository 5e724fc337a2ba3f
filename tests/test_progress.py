"""Progress lines (cova.progress): every iterative method reports through the one helper, with the elapsed time,
at least every INTERVAL seconds or iterations. Each method runs on tiny data with a few iterations and the interval
set to every iteration, so that its lines must appear."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest
import scipy.sparse as sp

from cova.datasets import Dataset
from cova.inputs import Inputs, build_inputs
from cova.inputs.relation import Relation
from cova.methods import make_method
from cova.progress import INTERVAL, Progress, progress_interval

SPEC = {"weights": {"kind": "euclidean_max", "n_neighbors": 8}, "prototypes": {"kind": "means"},
        "confidence": {"kind": "eq12", "lambda_p": 0.01, "source": "eq9"}}

#: method: (parameters with few iterations, the name its progress lines carry)
ITERATIVE = {
    "cova_e2": ({"max_iter": 5, "optimizer": "armijo"}, "Riemannian gradient descent"),
    "cova_e3": ({"max_iter": 5, "optimizer": "momentum", "init": "random"}, "momentum gradient descent"),
    "cova_e4": ({"max_iter": 5, "optimizer": "armijo"}, "Riemannian gradient descent"),
    "cova_p1": ({"inner_iter": 3, "cycles": 2, "batch_size": 20, "n_sample_prototypes": 200}, "SGD, 2 cycles"),
    "nerv": ({"anneal_rounds": 2, "cg_steps": 2, "cg_steps_final": 3}, "NeRV conjugate gradient"),
    "tnerv": ({"anneal_rounds": 2, "cg_steps": 2, "cg_steps_final": 3}, "TNeRV conjugate gradient"),
    "snerv": ({"anneal_rounds": 2, "cg_steps": 2, "cg_steps_final": 3}, "NeRV conjugate gradient"),
    "dosnes": ({"max_iter": 5, "early_exaggeration_iter": 2}, "momentum gradient descent"),
    "tsne_exact": ({"max_iter": 5, "early_exaggeration_iter": 2, "perplexity": 5}, "momentum gradient descent"),
    "sne": ({"max_iter": 5, "early_exaggeration_iter": 2, "perplexity": 5}, "momentum gradient descent"),
    "tsne": ({"max_iter": 4, "early_exaggeration_iter": 2, "perplexity": 5}, "TSNE (openTSNE)"),
    "umap": ({"n_epochs": 5, "n_neighbors": 5}, "UMAP (umap-learn)"),
    "featmap": ({"n_epochs": 5, "n_neighbors": 5}, "featmap: UMAP epochs"),
    "lmvu": ({"n_landmarks": 8, "n_neighbors": 5}, "LMVU: one SCS solve"),
    "llc": ({"max_iter": 3, "n_mixtures": 2, "n_neighbors": 5}, "LLC: EM"),
    "mcml": ({"max_iter": 3}, "MCML projected gradient"),
    "pe": ({"max_iter": 3}, "PE L-BFGS"),
    "mre": ({"max_iter": 3, "perplexity": 5}, "MRE L-BFGS"),
    "lmds": ({"n_iter_per_point": 3, "n_neighbors": 5}, "LMDS stochastic pair updates"),
    "deep_embedding": ({"n_epochs": 3, "n_neighbors": 5}, "deep embedding Adam epochs"),
    "mma": ({"max_iter": 3}, "Riemannian gradient descent"),
}
RELATION_METHODS = {
    "mkpe": ({"max_iter": 3}, "Riemannian gradient descent"),
    "code": ({"max_iter": 3, "n_restarts": 2}, "CODE conjugate gradient"),
    "coembed": ({"search": "grid", "grid": {"eta1": [1.0, 2.0], "eta2": [1.0], "xi": [1.0], "gamma": [0.0]}},
                "co-embedding grid search"),
}
LINE = re.compile(r"iteration (\d+)(/\d+)?, (\d+\.\d) s|epoch \d+/\d+, \d+\.\d s")


@pytest.fixture(scope="module")
def blobs() -> Inputs:
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 15)
    X = 4.0 * np.eye(3)[labels] + rng.normal(0.0, 0.5, (45, 3))  # means prototypes: k = 3 columns
    return build_inputs(Dataset(X, labels, list("abc")), SPEC)


@pytest.fixture(scope="module")
def relation() -> Inputs:
    rng = np.random.default_rng(0)
    R = rng.uniform(0.0, 1.0, (12, 9)) * (rng.uniform(size=(12, 9)) < 0.6) + np.eye(12, 9)
    return Inputs(relation=Relation(sp.csr_matrix(R), [f"r{i}" for i in range(12)], [f"c{j}" for j in range(9)]))


def _progress_lines(caplog: pytest.LogCaptureFixture, method: str, params: dict, inputs: Inputs) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="cova"), progress_interval(0.0, 1):
        make_method(method, params, seed=0).fit_transform(inputs)
    return [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("method", sorted(ITERATIVE))
def test_iterative_method_logs_progress(method, blobs, caplog):
    params, name = ITERATIVE[method]
    lines = [m for m in _progress_lines(caplog, method, params, blobs) if m.startswith(name)]
    assert any("started" in m for m in lines) or any(LINE.search(m) for m in lines), lines
    assert any(re.search(r"done (after \d+ iterations )?in \d+\.\d s", m) for m in lines), lines
    if not name.endswith("solve"):  # a single solver call has a start and an end line only
        assert sum(bool(LINE.search(m)) for m in lines) >= 2, lines


@pytest.mark.parametrize("method", sorted(RELATION_METHODS))
def test_co_embedding_method_logs_progress(method, relation, caplog):
    params, name = RELATION_METHODS[method]
    lines = [m for m in _progress_lines(caplog, method, params, relation) if m.startswith(name)]
    assert sum(bool(LINE.search(m)) for m in lines) >= 2 and any("done" in m for m in lines), lines


def test_interval_by_iterations_and_seconds(caplog, monkeypatch):
    """Lines come every INTERVAL.iterations ticks, or sooner when INTERVAL.seconds have passed; start and end
    lines always."""
    clock = iter(np.arange(0.0, 1000.0, 1.0))  # one second per reading of the clock
    monkeypatch.setattr("cova.progress.time.perf_counter", lambda: float(next(clock)))
    with caplog.at_level(logging.INFO, logger="cova"):
        with progress_interval(1000.0, 3), Progress("by count", 7) as p:
            for _ in range(7):
                p.tick(f=1.5)
        with progress_interval(2.5, 1000), Progress("by time") as p:
            for _ in range(6):
                p.tick()
    messages = [r.getMessage() for r in caplog.records]
    by_count = [m for m in messages if m.startswith("by count: iteration")]
    assert [int(m.split()[3].split("/")[0]) for m in by_count] == [3, 6] and "f = 1.5" in by_count[0]
    by_time = [m for m in messages if m.startswith("by time: iteration")]
    assert len(by_time) == 2  # the clock advances 1 s per tick: a line at the 3rd and the 6th tick
    assert messages[0] == "by count: started (7 iterations at most)" and messages[-1].startswith("by time: done")
    assert (INTERVAL.seconds, INTERVAL.iterations) == (10.0, 50)  # the block restored the defaults
    with pytest.raises(ValueError, match="iterations >= 1"):
        with progress_interval(1.0, 0):
            pass


#: methods run by a library that prints its own progress (verbose): parameters with few iterations, line prefix
LIBRARY_PRINTS = {
    "tsne_sklearn": ({"max_iter": 260, "perplexity": 5}, "t-SNE (scikit-learn)"),
    "mds": ({"max_iter": 5}, "MDS (scikit-learn SMACOF)"),
    "nca": ({"max_iter": 5}, "NCA (scikit-learn)"),
    "trimap": ({"n_iters": 10, "n_inliers": 5}, "TriMap"),
    "pacmap": ({"num_iters": 10, "n_neighbors": 5}, "PaCMAP"),
}


@pytest.mark.parametrize("method", sorted(LIBRARY_PRINTS))
def test_a_librarys_own_progress_output_reaches_the_log(method, blobs, caplog, capsys):
    """What the library prints on stdout becomes the method's progress lines (with the elapsed time), not console
    output."""
    params, name = LIBRARY_PRINTS[method]
    lines = [m for m in _progress_lines(caplog, method, params, blobs) if m.startswith(name)]
    shown = [m for m in lines if re.search(r"\(\d+\.\d s\)$", m)]
    assert len(shown) >= 2 and any("done" in m for m in lines), lines
    assert capsys.readouterr().out == ""
