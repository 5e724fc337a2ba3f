"""COVA-E1 as an estimator (COVA Sec. 3.3, Eq. 14 / D.3): the distance cohort rule and the distance local rule,
solved in closed form. The system and objective are :mod:`cova.objectives.cova`'s, the CG solver
:mod:`cova.manifolds.cg`'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse.linalg as spla

from ...constraints import NON_NEGATIVE, POSITIVE, UNIT, StrOptions
from ...inputs import Inputs
from ...manifolds.cg import jacobi_cg
from ...objectives.cova import e1_diagonal, e1_system
from ..base import Embedder, InterpolatesNewPoints, embedding_prototypes

#: ``CovaE1(solver="auto")`` factorises M (SuperLU) up to this many samples and uses Jacobi-CG above.
E1_DIRECT_MAX_SAMPLES = 5_000
#: ``solver="dense"`` (an l×l matrix) is refused above this many samples.
E1_DENSE_MAX_SAMPLES = 5_000


def _dense_fits(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """The rule of ``solver="dense"``: the exact number of samples (context ``"n_samples"``) at most
    :data:`E1_DENSE_MAX_SAMPLES`."""
    n = context.get("n_samples")
    if options.get("solver") != "dense" or n is None or not n.exact or n.value <= E1_DENSE_MAX_SAMPLES:
        return None
    return "solver", (f"{n.source}, and solver='dense' builds an l×l matrix ({8 * n.value**2 / 2**20:.0f} MB), "
                      f"refused above l = {E1_DENSE_MAX_SAMPLES:,}; allowed: 'auto', 'direct' or 'cg'")


class CovaE1(InterpolatesNewPoints, Embedder):
    """COVA-E1: distance cohort rule + distance local rule, solved in closed form.

    ``Z* = α [α𝐃(R) + (1−α)𝐋(W) + ζI]⁻¹ R Υ`` (Eq. 14 / D.3 with the factor α of the right-hand side restored:
    the gradient of Eq. 13 with the E1 rules is zero there).

    Parameters
    ----------
    alpha : weight of the cohort rule, in [0, 1].
    zeta : ridge ζ; ``None`` means 0 when M is already SPD (every sample has a positive confidence row sum,
        which guarantees it; Appendix D sets ζ = 0 when the matrix is invertible) and ``1e-10·trace(M)/l``
        otherwise (the paper asks only 0 < ζ ≪ 1).
    solver : ``"direct"`` (sparse LU of the SPD matrix, scipy's SuperLU), ``"cg"`` (conjugate gradients with a
        Jacobi preconditioner, relative residual ``tol``), ``"dense"`` (``numpy.linalg.solve``, only for
        l ≤ 5,000, for tests) or ``"auto"`` (direct up to :data:`E1_DIRECT_MAX_SAMPLES` = 5,000 samples, CG
        above). kNN graphs of high-dimensional data are expander-like, so the LU fill-in explodes: on
        Fashion-MNIST (perplexity-30 W) SuperLU took 584 s at l = 20,000 where Jacobi-CG took 2 s (≈ 45
        iterations per column, O(nnz(W)) memory) and agrees with the dense solve to ≈ 1e-10 relative.
        CG starts from the α → 1 limit RΥ/rowsum(R) (warm start: 26 instead of 28
        iterations on 70,000 Fashion-MNIST points) and solves all columns together (:func:`cova.manifolds.cg.jacobi_cg`).
    tol : CG relative residual.

    Attributes: ``embedding_`` Z, ``prototypes_`` Υ, ``zeta_`` (the ridge used), ``solver_`` (the solver used,
    ``"auto"`` resolved), ``fit_X_`` (the fitted X, for ``transform``: kNN interpolation of the fitted coordinates,
    :class:`~cova.methods.base.InterpolatesNewPoints`).
    """

    _parameter_constraints = {
        "alpha": UNIT,
        "zeta": [*NON_NEGATIVE, None],
        "solver": [StrOptions({"auto", "direct", "cg", "dense"})],
        "tol": POSITIVE,
    }
    _option_rules = (_dense_fits,)

    required_inputs = ("W", "R", "prototypes")

    def __init__(self, alpha: float = 0.5, zeta: float | None = None, solver: str = "auto", tol: float = 1e-10):
        self.alpha = alpha
        self.zeta = zeta
        self.solver = solver
        self.tol = tol

    def _fit(self, inputs: Inputs) -> "CovaE1":
        self._validate_params()
        W, R = inputs.W, inputs.R
        P = embedding_prototypes(inputs, type(self).__name__)
        l = W.shape[0]
        zeta = self.zeta
        if zeta is None:
            zeta = 0.0
            if self.alpha == 0.0 or np.any(R.sum(axis=1) <= 0.0):
                trace = e1_diagonal(W, R, self.alpha).sum() - (1.0 - self.alpha) * W.diagonal().sum()
                zeta = 1e-10 * trace / l
        solver = self.solver
        if solver == "auto":
            solver = "direct" if l <= E1_DIRECT_MAX_SAMPLES else "cg"
        if solver == "cg":
            # M = 𝐃(diag) − (1−α)W is never assembled: the CG applies W and the diagonal directly
            # warm start: the α → 1 limit RΥ / rowsum(R) (each sample at its confidence-weighted prototype mean)
            RP = R @ P
            rowsum = R.sum(axis=1)[:, None]
            X0 = np.divide(RP, rowsum, out=np.zeros_like(RP), where=rowsum > 0)
            Z = jacobi_cg(W, e1_diagonal(W, R, self.alpha, zeta), 1.0 - self.alpha, self.alpha * RP, self.tol, X0)
        else:
            M, B = e1_system(W, R, P, self.alpha, zeta)
            if solver == "dense":  # l <= E1_DENSE_MAX_SAMPLES: _option_rules
                Z = np.linalg.solve(M.toarray(), B)
            else:
                Z = spla.splu(M, permc_spec="MMD_AT_PLUS_A").solve(B)
        self.embedding_ = np.ascontiguousarray(Z)
        self.prototypes_ = np.asarray(P, dtype=np.float64)
        self.zeta_ = zeta
        self.solver_ = solver
        self._keep_fitted_points(inputs)
        return self
