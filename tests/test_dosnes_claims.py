"""The DOSNES paper's informal claims about doubly stochastic inputs, as property tests on unstructured matrices.

- Sec. 4 / Fig. 1: t-SNE of a doubly stochastic P gives a map near a circle (2-D) or sphere (3-D), while the raw
  matrix gives a disc or ball. Measured by the radial coefficient of variation std(‖y_i − ȳ‖)/mean(‖y_i − ȳ‖); the
  assertion CV(doubly stochastic) < 0.6·CV(raw), averaged over three seeds, is ours (docs/dosnes.md). The claim
  is about unstructured matrices: clustered data does not become spherical (docs/papers.md, DOSNES).
- Sec. 4: "if P is doubly stochastic then Q is approximately doubly stochastic because P ≈ Q": after the fit, the
  row sums of the unnormalised Student-t q_ij vary less with a doubly stochastic P than with the raw one.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.affinity import symmetrize_normalize
from cova.affinity.doubly_stochastic import sinkhorn_knopp
from cova.datasets.random_matrix import random_matrix
from cova.inputs import Inputs
from cova.methods import make_method
from cova.metrics.crowding import radial_cv

SEEDS = (0, 1, 2)
N = 300


@pytest.fixture(scope="module")
def affinities() -> dict[str, sp.csr_matrix]:
    S = random_matrix(N, random_state=7).relations
    ds = sinkhorn_knopp(S).P
    return {"raw": symmetrize_normalize(S), "ds": symmetrize_normalize(ds)}


@pytest.fixture(scope="module")
def embeddings(affinities) -> dict[tuple[str, int, int], np.ndarray]:
    out = {}
    for kind, W in affinities.items():
        for k in (2, 3):
            for seed in SEEDS:
                est = make_method("tsne_affinity", {"n_components": k, "max_iter": 300, "kl_method": "exact",
                                                    "random_state": seed})
                out[(kind, k, seed)] = est.fit(Inputs(W=W)).embedding_
    return out


@pytest.mark.parametrize("k", [2, 3])
def test_doubly_stochastic_input_gives_a_sphere_raw_gives_a_ball(embeddings, k):
    cv = {kind: np.mean([radial_cv(embeddings[(kind, k, s)]) for s in SEEDS]) for kind in ("raw", "ds")}
    assert cv["ds"] < 0.6 * cv["raw"], cv


def _q_row_sum_cv(Z: np.ndarray) -> float:
    d2 = np.sum((Z[:, None, :] - Z[None, :, :]) ** 2, axis=2)
    q = 1.0 / (1.0 + d2)
    np.fill_diagonal(q, 0.0)
    rows = q.sum(axis=1)
    return float(rows.std() / rows.mean())


@pytest.mark.parametrize("k", [2, 3])
def test_q_is_closer_to_doubly_stochastic_with_a_doubly_stochastic_p(embeddings, k):
    cv = {kind: np.mean([_q_row_sum_cv(embeddings[(kind, k, s)]) for s in SEEDS]) for kind in ("raw", "ds")}
    assert cv["ds"] < cv["raw"], cv
