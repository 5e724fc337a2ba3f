"""Accelerated O_KL^(L) repulsion (FFT interpolation, Barnes–Hut) against the exact back end (issue #8, spec §10.E).

The approximations come from openTSNE's compiled kernels (``cova.objectives.local``); these tests pin their
accuracy at the defaults on 2,000 points and check that E2/E3 embeddings made with them score like the exact ones.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cova.objectives import AUTO_EXACT_MAX_SAMPLES, REPULSION_METHODS, kl_repulsion, o_kl_l, resolve_repulsion_method
from cova.objectives import local as local_mod

ROOT = Path(__file__).resolve().parents[1]


def rel_err(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def ring(c=10, rho=3.0):
    angles = 2 * np.pi * np.arange(c) / c
    return rho * np.column_stack([np.cos(angles), np.sin(angles)])


@pytest.fixture(scope="module")
def layouts():
    """Three 2,000-point layouts at COVA's scale: the E2/E3 start (cohorts on ring prototypes plus 1e-3·ρ noise),
    cohorts spread around the prototypes, and an isotropic Gaussian cloud."""
    from conftest import random_graph

    rng = np.random.default_rng(0)
    l = 2000
    labels = rng.integers(0, 10, l)
    P = ring()
    W = random_graph(l, 15, rng)
    return W, {
        "init": P[labels] + rng.normal(0.0, 3e-3, (l, 2)),
        "cohorts": P[labels] + rng.normal(0.0, 0.7, (l, 2)),
        "cloud": rng.normal(0.0, 3.0, (l, 2)),
    }


@pytest.mark.parametrize("name", ["init", "cohorts", "cloud"])
def test_fft_matches_exact_at_default_accuracy(layouts, name):
    W, Zs = layouts
    Z = Zs[name]
    s0, r0 = kl_repulsion(Z, "exact")
    s1, r1 = kl_repulsion(Z, "fft")
    assert abs(s1 - s0) / s0 < 1e-4
    assert rel_err(r1, r0) < 1e-2
    v0, g0 = o_kl_l(Z, W, method="exact")
    v1, g1 = o_kl_l(Z, W, method="fft")
    assert abs(v1 - v0) / abs(v0) < 1e-4
    assert rel_err(g1, g0) < 1e-2


@pytest.mark.parametrize("name", ["init", "cohorts", "cloud"])
def test_barnes_hut_matches_exact(layouts, name):
    """θ = 0.5 (spec §9's setting) is within a few percent; θ = 0.25 within 1e-2."""
    W, Zs = layouts
    Z = Zs[name]
    v0, g0 = o_kl_l(Z, W, method="exact")
    v5, g5 = o_kl_l(Z, W, method="bh")
    v25, g25 = o_kl_l(Z, W, method="bh", theta=0.25)
    assert abs(v5 - v0) / abs(v0) < 1e-2
    assert rel_err(g5, g0) < 5e-2
    assert rel_err(g25, g0) < 1e-2
    assert rel_err(g25, g0) <= rel_err(g5, g0) + 1e-12


def test_fft_one_dimensional_matches_exact():
    Z = np.random.default_rng(3).normal(0.0, 3.0, (1500, 1))
    s0, r0 = kl_repulsion(Z, "exact")
    s1, r1 = kl_repulsion(Z, "fft")
    assert abs(s1 - s0) / s0 < 1e-4
    assert rel_err(r1, r0) < 1e-2


def test_fft_refuses_three_dimensions():
    with pytest.raises(ValueError, match="k = 3"):
        kl_repulsion(np.zeros((10, 3)), "fft")


def test_auto_resolution():
    n = AUTO_EXACT_MAX_SAMPLES
    assert resolve_repulsion_method("auto", n, 2) == "exact"
    assert resolve_repulsion_method("auto", n + 1, 2) == "fft"
    assert resolve_repulsion_method("auto", n + 1, 1) == "fft"
    assert resolve_repulsion_method("auto", n + 1, 3) == "bh"
    assert resolve_repulsion_method("auto", n + 1, 4) == "exact"
    assert resolve_repulsion_method("bh", 10, 2) == "bh"
    with pytest.raises(ValueError, match="available"):
        resolve_repulsion_method("fast", 10, 2)
    assert set(REPULSION_METHODS) == {"exact", "fft", "bh"}


def test_auto_uses_fft_above_threshold_and_drops_foreign_options(monkeypatch):
    calls = []
    fft = REPULSION_METHODS["fft"]

    def spy(Z, **options):
        calls.append(options)
        return fft(Z, **options)

    monkeypatch.setitem(local_mod.REPULSION_METHODS, "fft", spy)
    Z = np.random.default_rng(1).normal(size=(AUTO_EXACT_MAX_SAMPLES + 1, 2))
    kl_repulsion(Z, "auto", block_size=100)  # an exact-only option: dropped when FFT is chosen
    assert calls == [{}]
    with pytest.raises(TypeError):
        kl_repulsion(Z, "fft", block_size=100)  # but not silently ignored when asked for explicitly


def test_models_default_to_auto_and_reject_unknown_backends(toy_inputs):
    from cova.methods import CovaE2, CovaE3, CovaP3

    for cls in (CovaE2, CovaE3, CovaP3):
        assert cls().kl_method == "auto"
    with pytest.raises(ValueError, match="available"):
        CovaE3(max_iter=2, kl_method="fast").fit(toy_inputs)


@pytest.fixture(scope="module")
def digit_inputs():
    from cova.datasets import load
    from cova.inputs import build_inputs

    ds = load("digits", n_per_class=100)
    return build_inputs(ds, {"weights": {"kind": "gaussian_perplexity", "perplexity": 30},
                             "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
                             "prototypes": {"kind": "ring", "rho": 3}})


@pytest.mark.parametrize("model", ["e2", "e3"])
def test_accelerated_embeddings_score_like_exact(digit_inputs, model):
    """Spec §10.E.2 analogue on 1,000 digits: every score within 2 points of the exact run (same seed and init)."""
    from cova.methods import CovaE2, CovaE3
    from cova.metrics.summary import compute_scores

    cls = {"e2": CovaE2, "e3": CovaE3}[model]
    inp = digit_inputs
    scores = {}
    for method in ("exact", "fft"):
        est = cls(alpha=0.5, max_iter=40, kl_method=method, random_state=0).fit(inp)
        assert est.n_iter_ >= 20
        scores[method] = compute_scores(inp.X, est.embedding_, inp.labels, inp.prototypes, est.prototypes_)
    for key in scores["exact"]:
        assert abs(scores["fft"][key] - scores["exact"][key]) < 0.02, (key, scores)


def test_benchmark_script_quick_run(tmp_path):
    """The scaling benchmark runs end to end on a tiny synthetic problem and writes its CSV and plot."""
    out = tmp_path / "bench.csv"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scaling.py"), "--dataset", "synthetic",
                           "--sizes", "300", "--methods", "e1", "--iters", "5", "--no-warmup",
                           "--out", str(out), "--cache", str(tmp_path / "cache")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    assert text.startswith("step,n,status,seconds")
    rows = [line.split(",") for line in text.strip().splitlines()[1:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("inputs", "300", "ok"), ("e1", "300", "ok")]
    assert all(float(r[3]) > 0 for r in rows)
    assert out.with_suffix(".png").stat().st_size > 1000
    assert "| e1 | 300 | ok |" in proc.stdout
