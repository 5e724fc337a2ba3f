"""Directional targets of the COVA paper on real data that need no long optimisation (Table H.2, Fig. 1).

The data come from the project's offline mirror (CI has it beside the clone).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cova.datasets import load
from cova.inputs import build_inputs
from cova.methods import CovaE1
from cova.metrics.summary import compute_scores

MIRROR = Path(__file__).resolve().parents[2] / "shared" / "datasets"
RING = {"weights": {"kind": "euclidean_max", "n_neighbors": 50},
        "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
        "prototypes": {"kind": "ring", "rho": 3}}
ALPHAS = [0.1, 0.3, 0.5, 0.7, 0.9, 0.95]


@pytest.fixture(scope="module")
def compound_inputs():
    assert MIRROR.is_dir(), f"the project's offline datasets are expected at {MIRROR}"
    return build_inputs(load("compound", raw_dir=MIRROR / "compound"), RING)


def sweep(inputs):
    scores = [compute_scores(inputs.X, CovaE1(alpha=a).fit_transform(inputs), inputs.labels, inputs.prototypes,
                             inputs.prototypes) for a in ALPHAS]
    return {k: np.array([100 * s[k] for s in scores]) for k in ("s_n", "s_c", "s_s", "s_c_r")}


def test_e1_alpha_sweep_on_compound_shows_the_trade_off(compound_inputs):
    """The α trade-off of Sec. 3.1.3 on Compound (ring prototypes): as α grows, S_n strictly decreases and S_c
    and S_s do not decrease by more than 0.5 points."""
    s = sweep(compound_inputs)
    assert np.all(np.diff(s["s_n"]) < 0), s["s_n"]
    assert np.all(np.diff(s["s_c"]) > -0.5), s["s_c"]
    assert np.all(np.diff(s["s_s"]) > -0.5), s["s_s"]
    assert s["s_c"][-1] >= 97 and s["s_s"][-1] >= 97  # Table H.2: E1 places Compound's cohorts (99.4 / 99.6)


def test_e1_on_sinusoid_fig1_setting():
    """COVA Fig. 1 (Sec. 4.1): E1, α = 0.1, prototypes = cohort means: S_c ≥ 90 and S_c^(r) = 100."""
    ds = load("sinusoid")
    inputs = build_inputs(ds, {**RING, "prototypes": {"kind": "means"}})
    s = compute_scores(inputs.X, CovaE1(alpha=0.1).fit_transform(inputs), inputs.labels, inputs.prototypes,
                       inputs.prototypes)
    assert s["s_c"] >= 0.90 and s["s_c_r"] == 1.0
