"""Projection forms of the objectives (COVA Sec. 3.2, Table A.2 corrected): Z = F U.

By the chain rule ``Grad_U O(FU) = Fᵀ·Grad_Z O(Z)|_{Z=FU}``. This reproduces every corrected row of Table A.2:
``2Fᵀ𝐃(R)FU − 2FᵀRΥ``, ``2Fᵀ𝐋(W)FU``, ``2Fᵀ𝐃(H)FU − 2FᵀHΥ`` and ``4Fᵀ𝐋(G)FU`` (the printed A.44 is wrong,
see docs/algorithms.md), so the projection gradients are never coded separately.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

Objective = Callable[..., tuple[float, np.ndarray]]


def project_gradient(F: np.ndarray, grad_Z: np.ndarray) -> np.ndarray:
    """``Fᵀ·Grad_Z``: the Euclidean gradient with respect to U of an objective evaluated at Z = FU (l×k̃ F)."""
    return np.asarray(F).T @ grad_Z


def objective_on_projection(obj: Objective, F: np.ndarray, U: np.ndarray, *args: Any,
                            **kwargs: Any) -> tuple[float, np.ndarray]:
    """Evaluate ``obj(FU, *args, **kwargs)`` and return ``(value, Fᵀ·Grad_Z)``, the U-gradient (Table A.2)."""
    value, grad_Z = obj(np.asarray(F) @ U, *args, **kwargs)
    return value, project_gradient(F, grad_Z)
