"""Shared fixtures: small random COVA inputs built without the affinity/cohort modules."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp


def random_graph(l: int, k: int, rng: np.random.Generator) -> sp.csr_matrix:
    """A random symmetric sparse W with zero diagonal and unit sum (each row gets ~k neighbours)."""
    rows = np.repeat(np.arange(l), k)
    cols = rng.integers(0, l, l * k)
    keep = rows != cols
    W = sp.csr_matrix((rng.uniform(0.1, 1.0, keep.sum()), (rows[keep], cols[keep])), shape=(l, l))
    W = W + W.T
    W.setdiag(0)
    W.eliminate_zeros()
    return (W / W.sum()).tocsr()


@pytest.fixture
def toy_inputs():
    """(X, labels, W, R, prototypes) with l = 40, c = 4, k = 2: the sizes of the finite-difference gradient checks."""
    from cova.inputs import Inputs

    rng = np.random.default_rng(0)
    l, c = 40, 4
    labels = np.arange(l) % c
    X = rng.normal(size=(l, 3)) + labels[:, None]
    W = random_graph(l, 5, rng)
    R = rng.uniform(0.01, 1.0, (l, c))
    R[np.arange(l), labels] += 2.0
    R /= R.sum()
    P = rng.normal(size=(c, 2)) * 3
    return Inputs(X=X, labels=labels, label_names=[str(j) for j in range(c)], W=W, R=R, prototypes=P)


#: Test files that run the whole workflow (minutes each): collected first, so that under `make test` (two
#: pytest-xdist processes, one file at a time each) they start at once and the other files fill the second
#: process beside them, instead of the longest file starting last.
LONG_FILES = ("test_workflow.py", "test_slurm.py", "test_core_workflow.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))
