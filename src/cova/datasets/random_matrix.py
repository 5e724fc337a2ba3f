"""The random uniform similarity matrix of DOSNES Fig. 1 (Lu, Yang & Corander 2016, Sec. 4).

DOSNES Fig. 1 embeds "a random uniformly distributed matrix" with t-SNE, once as it is and once made doubly
stochastic, to show that the doubly stochastic input lands on a ring (2-D) or a sphere (3-D) and the raw one fills
a disk (a ball). The paper gives no seed and does not say whether the matrix is symmetric; ours is.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..constraints import SEED, declare, integer
from .base import Dataset


@declare({"n_samples": [integer(3, None)], "random_state": SEED})
def random_matrix(n_samples: int = 2000, random_state: int = 0) -> Dataset:
    """A seeded symmetric matrix with entries ``U(0, 1)`` off the diagonal and a zero diagonal, as a graph dataset.

    - ``relations``: the ``n_samples × n_samples`` matrix (stored sparse, every off-diagonal entry present);
      the upper triangle is drawn i.i.d. from ``U(0, 1)`` and mirrored.
    - ``X``: no features (``n_samples × 0``): the methods embed the matrix.
    - ``labels``: one cohort ("all"): the matrix has no structure to colour.
    """
    rng = np.random.default_rng(random_state)
    upper = np.triu(rng.uniform(0.0, 1.0, (n_samples, n_samples)), k=1)
    S = upper + upper.T
    return Dataset(np.empty((n_samples, 0)), np.zeros(n_samples, dtype=np.int64), ["all"],
                   relations=sp.csr_matrix(S),
                   meta={"source": "synthetic", "generator": "random_matrix", "n_samples": n_samples,
                         "random_state": random_state,
                         "note": "symmetric U(0, 1) matrix with zero diagonal (DOSNES Fig. 1); no features"})
