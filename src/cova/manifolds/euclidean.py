"""Euclidean space R^{l×k}, optionally restricted to centred configurations (t-SNE's re-centring).

With ``centre=True`` the retraction subtracts the column means after the step, which is what the reference
t-SNE gradient descent (van der Maaten & Hinton 2008, Sec. 3.4) does after every update. The projection stays
the identity: the SNE/t-SNE gradients are translation invariant (their rows sum to zero up to rounding), so
projecting them would only change the last bits of every iterate.
"""

from __future__ import annotations

import numpy as np

from .base import Manifold

__all__ = ["Euclidean"]


class Euclidean(Manifold):
    """R^{l×k} with the identity projection and R_x(u) = x + u, re-centred when ``centre`` is True."""

    def __init__(self, centre: bool = False):
        self.centre = bool(centre)

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        return g

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        y = np.asarray(x, dtype=float) + u
        if self.centre:
            y -= y.mean(axis=0)
        return y
