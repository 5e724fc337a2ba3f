"""The t-SNE schedule is declared once (cova.manifolds.schedule) and every estimator that runs it takes its
defaults, its constraints and its learning-rate rule from there; the Gram-expansion squared distances have one
implementation (cova.affinity.distances)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.sparse as sp

from cova.affinity.distances import dense_sq_distances, squared_distances
from cova.inputs import Inputs
from cova.manifolds import TSNE_SCHEDULE, tsne_learning_rate
from cova.methods import METHODS, make_method
from cova.methods.base import TSNE_SCHEDULE_CONSTRAINTS

SCHEDULE_METHODS = ("sne", "tsne_exact", "supervised_sne", "dosnes", "tsne_affinity")


@pytest.mark.parametrize("name", SCHEDULE_METHODS)
def test_schedule_estimators_share_constraints_and_defaults(name: str) -> None:
    cls = METHODS[name]
    for key, constraint in TSNE_SCHEDULE_CONSTRAINTS.items():
        assert cls._parameter_constraints[key] is constraint, key
    defaults = {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()}
    for key, value in vars(TSNE_SCHEDULE).items():
        assert defaults[key] == value, key


@pytest.mark.parametrize("name", ["dosnes", "tsne_affinity", "tsne_exact"])
def test_a_run_of_no_step_is_refused(name: str) -> None:
    W = sp.random(20, 20, density=0.3, random_state=0) + sp.identity(20)
    inputs = Inputs(W=(W + W.T).tocsr(), X=np.random.default_rng(0).normal(size=(20, 3)))
    with pytest.raises(ValueError, match="max_iter"):
        make_method(name, {"max_iter": 0}).fit(inputs)


def test_learning_rate_rule() -> None:
    assert tsne_learning_rate(1000) == 250.0 and tsne_learning_rate(100) == 50.0
    assert tsne_learning_rate(4800, 12.0) == 100.0  # scikit-learn's max(n / α / 4, 50)
    assert tsne_learning_rate(7, floor=0.0) == 1.75  # COVA-E2/E3: l / 4
    assert tsne_learning_rate(60, 12.0, floor=10.0, gradient_factor=1.0) == 10.0  # prototypes: max(c / 12, 10)
    assert tsne_learning_rate(240, 12.0, floor=10.0, gradient_factor=1.0) == 20.0
    for n in (1, 7, 999, 70_000):
        for alpha in (1.0, 4.0, 12.0, 3.7):
            assert tsne_learning_rate(n, alpha) == max(n / alpha / 4.0, 50.0)


def test_squared_distances_by_the_gram_expansion() -> None:
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(50, 40)), rng.normal(size=(30, 40))
    D = squared_distances(A, B)
    np.testing.assert_allclose(D, ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2), rtol=1e-12, atol=1e-12)
    big = rng.normal(size=(1200, 900))  # above the serial/parallel threshold of the one-pass kernel
    for P, Q in ((A, B), (big[:1100], big)):
        G = P @ Q.T
        G *= -2.0
        G += np.einsum("ij,ij->i", P, P)[:, None]
        G += np.einsum("ij,ij->i", Q, Q)[None, :]
        np.maximum(G, 0.0, out=G)
        assert np.array_equal(squared_distances(P, Q), G)  # the NumPy expression's operations, in its order
    X = np.vstack([A, A[:3]])
    S = dense_sq_distances(X)
    assert np.all(np.diag(S) == 0.0) and np.all(S >= 0.0)
    np.testing.assert_allclose(S, S.T, rtol=1e-12, atol=1e-12)
    assert np.max(S[np.arange(50, 53), np.arange(3)]) < 1e-12  # duplicated rows: zero up to the expansion's rounding
