"""The product M_1 × … × M_c of manifolds, so that one solver runs on several blocks of variables at once (e.g.
two Stiefel factors and a free scalar).

As in pymanopt's ``Product``, the geometry acts factor by factor: the tangent projection and the retraction of a
product are those of each factor applied to its own block, and the metric is the sum of the factors' metrics (so
the Frobenius norm of the flat vector is the Riemannian norm the Armijo solver uses). A point is either one flat
vector (the blocks' entries one after the other in C order, what :mod:`.optimize` works on) or a tuple of blocks
of the given ``shapes``; ``project`` and ``retract`` return the same kind they are given.
"""

from __future__ import annotations

import math
from typing import Sequence, Union

import numpy as np

from ..errors import UserError
from .base import Manifold

__all__ = ["Product"]

Point = Union[np.ndarray, tuple[np.ndarray, ...]]


class Product(Manifold):
    """M_1 × … × M_c with block shapes ``shapes`` (one per manifold; ``()`` or ``(1,)`` for a scalar).

    ``has_rank_check`` is True when any factor has one; ``check_rank`` is passed on to those factors.
    """

    def __init__(self, manifolds: Sequence[Manifold], shapes: Sequence[Sequence[int]]):
        self.manifolds = tuple(manifolds)
        self.shapes = tuple(tuple(int(d) for d in s) for s in shapes)
        if not self.manifolds:
            raise UserError("a product manifold needs at least one factor")
        if len(self.manifolds) != len(self.shapes):
            raise UserError(f"a product manifold needs one shape per factor; got {len(self.manifolds)} manifolds "
                             f"and {len(self.shapes)} shapes")
        for m in self.manifolds:
            if not isinstance(m, Manifold):
                raise UserError(f"every factor must be a Manifold, got {type(m).__name__}")
        for s in self.shapes:
            if any(d < 0 for d in s):
                raise UserError(f"block shapes must have non-negative sizes, got {s}")
        sizes = [math.prod(s) for s in self.shapes]
        self.offsets = tuple(np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist())
        self.size = self.offsets[-1]
        self.has_rank_check = any(m.has_rank_check for m in self.manifolds)

    def split(self, x: Point) -> tuple[np.ndarray, ...]:
        """The blocks of a point or tangent vector, each with its shape (views of a flat vector)."""
        if isinstance(x, (tuple, list)):
            if len(x) != len(self.manifolds):
                raise UserError(f"expected {len(self.manifolds)} blocks, got {len(x)}")
            blocks = tuple(np.asarray(b, dtype=float) for b in x)
            for b, s in zip(blocks, self.shapes):
                if b.size != math.prod(s):
                    raise UserError(f"a block of shape {s} cannot hold {b.size} entries")
            return tuple(b.reshape(s) for b, s in zip(blocks, self.shapes))
        flat = np.asarray(x, dtype=float)
        if flat.ndim != 1 or flat.size != self.size:
            raise UserError(f"expected a flat vector of {self.size} entries, got shape {flat.shape}")
        return tuple(flat[a:b].reshape(s) for a, b, s in zip(self.offsets[:-1], self.offsets[1:], self.shapes))

    def join(self, blocks: Sequence[np.ndarray]) -> np.ndarray:
        """The flat vector of the blocks (C order, one after the other)."""
        parts = self.split(tuple(blocks))
        return np.concatenate([np.ravel(b) for b in parts]) if parts else np.zeros(0)

    def _like(self, x: Point, blocks: Sequence[np.ndarray]) -> Point:
        return tuple(blocks) if isinstance(x, (tuple, list)) else self.join(blocks)

    def project(self, x: Point, g: Point) -> Point:
        xs, gs = self.split(x), self.split(g)
        return self._like(x, [m.project(xi, gi) for m, xi, gi in zip(self.manifolds, xs, gs)])

    def retract(self, x: Point, u: Point, *, check_rank: bool = True) -> Point:
        xs, us = self.split(x), self.split(u)
        out = [np.reshape(m.retract(xi, ui, check_rank=check_rank), s)
               for m, xi, ui, s in zip(self.manifolds, xs, us, self.shapes)]
        return self._like(x, out)
