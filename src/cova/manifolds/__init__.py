"""Manifolds and the optimisers that run on them (COVA Sec. 3.1.4, 3.2.1, Appendix B, Tables F.1–F.2).

Manifold objects (:class:`~.base.Manifold`: ``project(x, g)``, ``retract(x, u)``):

- :class:`~.euclidean.Euclidean`: R^{l×k}, optionally re-centred after every step (SNE, t-SNE, prototypes);
- :class:`~.noncompact_stiefel.NoncompactStiefel`: R_*^{l×k} for E2–E4 (rank-repairing retraction);
- :class:`~.stiefel.Stiefel`: St(k̃, k) for P1–P4 (tangent projection, QR and polar retractions), and the
  feasible set M₁ of E2–E4 (Appendix C);
- :class:`~.generalized_stiefel.GeneralizedStiefel`: {ZᵀBZ = I} for a diagonal B, the feasible set M₂ (App. C);
- :class:`~.sphere.Sphere`: every row on a sphere of a given radius;
- :class:`~.sphere.CentredSphere`: rows centred on a common sphere of free radius (DOSNES Eqs. 6–8).

Solvers (:mod:`.optimize`), each taking the manifold as a parameter: Riemannian gradient descent with Armijo line
search, its SGD-batch variant, and the t-SNE momentum/gains scheme, whose schedule and ``"auto"`` learning rate are
declared in :mod:`.schedule`. Linear-algebra solvers: block Jacobi-CG (:mod:`.cg`, COVA-E1) and the deflated
eigen-solver of eigen-COVA (:mod:`.eigen`).
"""

from . import noncompact_stiefel, stiefel
from .base import DegenerateSolution, FunctionManifold, Manifold
from .euclidean import Euclidean
from .generalized_stiefel import GeneralizedStiefel
from .noncompact_stiefel import NoncompactStiefel
from .optimize import (
                       GAINS_RULES,
                       OptimizeResult,
                       batch_inputs,
                       euclidean_projection,
                       momentum_gradient_descent,
                       riemannian_gradient_descent,
                       sgd_batches,
                       update_gains,
)
from .product import Product
from .schedule import TSNE_SCHEDULE, tsne_learning_rate
from .sphere import CentredSphere, Sphere
from .stiefel import Stiefel

__all__ = ["noncompact_stiefel", "stiefel", "DegenerateSolution", "Manifold", "FunctionManifold", "Euclidean", "NoncompactStiefel",
           "Stiefel", "GeneralizedStiefel", "Product", "Sphere", "CentredSphere", "OptimizeResult", "GAINS_RULES", "riemannian_gradient_descent",
           "momentum_gradient_descent", "update_gains", "sgd_batches", "batch_inputs", "euclidean_projection",
           "TSNE_SCHEDULE", "tsne_learning_rate"]
