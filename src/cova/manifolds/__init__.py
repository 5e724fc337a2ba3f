"""Manifolds and optimisers for COVA's iterative models (Sec. 3.1.4, 3.2.1, Appendix B, Tables F.1–F.2).

- :mod:`.noncompact_stiefel`: R_*^{l×k} for E2–E4 (identity tangent projection, rank-repairing retraction);
- :mod:`.stiefel`: St(k̃, k) for P1–P4 (tangent projection, QR and polar retractions);
- :mod:`.optimize`: Riemannian gradient descent with Armijo line search, SGD batches, and the t-SNE-style
  momentum/gains scheme (one gradient per iteration).
"""

from . import noncompact_stiefel, stiefel
from .optimize import (OptimizeResult, batch_inputs, euclidean_projection, momentum_gradient_descent,
                       riemannian_gradient_descent, sgd_batches)

__all__ = ["noncompact_stiefel", "stiefel", "OptimizeResult", "riemannian_gradient_descent",
           "momentum_gradient_descent", "sgd_batches",
           "batch_inputs", "euclidean_projection"]
