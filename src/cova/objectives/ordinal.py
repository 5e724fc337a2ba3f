"""Local ordinal embedding's soft objective (Terada & von Luxburg 2014, "Local ordinal embedding", ICML, Eq. 3):
for every ordinal constraint "j is nearer to i than l" (a triple (i, j, l): j among i's k nearest, l not),

    E(Y) = sum_(i, j, l) max(0, d_ij(Y) + delta - d_il(Y))^2,    d = Euclidean distance in the display,

a squared hinge with margin delta that fixes the scale of Y. COVA App. H.7 uses LOE as a prototype generator
(:func:`cova.cohorts.prototypes.loe_prototypes`). The value and its Euclidean gradient are computed over the
triples in O(#triples · k_out); no library offers LOE in Python (the authors' code is the R package ``loe``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["loe_cost_and_grad"]

#: Added to squared distances before the square root, so coinciding points have a finite gradient.
_EPS2 = 1e-24


def loe_cost_and_grad(Y: np.ndarray, triples: np.ndarray, delta: float = 1.0) -> tuple[float, np.ndarray]:
    """E(Y) of the module docstring and dE/dY for the (T, 3) int array of triples (i, j, l)."""
    Y = np.asarray(Y, dtype=np.float64)
    t = np.asarray(triples, dtype=np.int64)
    i, j, l = t[:, 0], t[:, 1], t[:, 2]
    vij, vil = Y[i] - Y[j], Y[i] - Y[l]
    dij = np.sqrt(np.sum(vij * vij, axis=1) + _EPS2)
    dil = np.sqrt(np.sum(vil * vil, axis=1) + _EPS2)
    h = np.maximum(0.0, dij + float(delta) - dil)
    cost = float(np.sum(h * h))
    a = (2.0 * h / dij)[:, None] * vij  # d/dy_i of h^2 through d_ij (and minus that for y_j)
    b = (2.0 * h / dil)[:, None] * vil  # d/dy_i of d_il's term, entering with a minus sign
    G = np.zeros_like(Y)
    np.add.at(G, i, a - b)
    np.add.at(G, j, -a)
    np.add.at(G, l, b)
    return cost, G
