"""The interface every manifold offers the optimisers of :mod:`cova.manifolds.optimize`.

The split follows pymanopt: a *manifold* knows its geometry (tangent projection of a Euclidean gradient, a
retraction), a *problem* is a function ``x -> (f(x), Euclidean gradient)``, and a *solver* (the Armijo or the
momentum loop) combines the two. A retraction may carry an expensive safeguard (the rank repair of the
noncompact Stiefel manifold); the solvers then ask for it only every few iterations through ``check_rank``.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..errors import UserError

__all__ = ["Manifold", "FunctionManifold", "DegenerateSolution", "accepts_keyword"]


class DegenerateSolution(UserError):
    """The method's problem has no meaningful solution for these inputs and parameters (e.g. eigen-COVA with
    no negative eigenvalue, COVA Sec. 3.2.2, raised by its solver :func:`cova.manifolds.eigen.eigen_cova_solve`).
    The pipeline records such a run as degenerate (NaN scores) instead of failing the whole workflow."""


def accepts_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` can be called with the keyword argument ``name``."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class Manifold:
    """Base class: ``project(x, g)`` maps a Euclidean gradient to the Riemannian gradient at x (for the embedded
    metric, the tangent projection), ``retract(x, u)`` moves from x along the tangent vector u back onto the
    manifold, ``norm(x, u)`` is the metric's norm of a tangent vector.

    ``has_rank_check`` is True when ``retract`` takes a ``check_rank`` keyword whose check the solvers should
    schedule (every N_c iterations and at the last, COVA Table F.1); other manifolds ignore the keyword.
    """

    has_rank_check: bool = False

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Tangent projection P_x(g)."""
        raise NotImplementedError

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        """Retraction R_x(u)."""
        raise NotImplementedError

    def norm(self, x: np.ndarray, u: np.ndarray) -> float:
        """The Riemannian norm of the tangent vector u at x (the Frobenius norm for the embedded metric)."""
        return float(np.linalg.norm(u))


class FunctionManifold(Manifold):
    """A manifold given by two functions: ``retract(x, u[, check_rank=...])`` and ``project(x, g)``.

    ``has_rank_check`` is True when ``retract`` accepts a ``check_rank`` keyword.
    """

    def __init__(self, retract: Callable[..., np.ndarray],
                 project: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None):
        self._retract = retract
        self._project = project
        self.has_rank_check = accepts_keyword(retract, "check_rank")

    def project(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        return g if self._project is None else self._project(x, g)

    def retract(self, x: np.ndarray, u: np.ndarray, *, check_rank: bool = True) -> np.ndarray:
        if self.has_rank_check:
            return self._retract(x, u, check_rank=check_rank)
        return self._retract(x, u)
