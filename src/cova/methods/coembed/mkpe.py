"""MKPE (multiple kernel preserving embedding; Gönen, ECAI 2014), a baseline of the co-embedding paper (Sec. 4):
the row and column objects get embeddings E_x (m×k) and E_z (n×k) with orthonormal columns (E_xᵀE_x = E_zᵀE_z =
I_k) whose Gaussian kernel exp(−‖e_x,i − e_z,j‖²/σ²) fits the relation, rescaled to K_c = R / max R, in the mean
squared sense (:func:`cova.objectives.mkpe.mkpe_objective`); the width σ is learned in log space.

Only the relation between the groups is available in the co-embedding paper's experiments, so Gönen's
within-group kernel terms are left out (λ_x = λ_z = 0, λ_c = 1). The three blocks (two Stiefel manifolds and log σ)
are optimised together by Riemannian gradient descent with an Armijo line search on their product manifold; every
step starts from twice the last accepted step and halves it until the Armijo condition holds. The start is a
random point of each Stiefel manifold (the orthonormal polar factor of a Gaussian matrix, as Gönen's code) and
σ = √k. The polar retraction is used, as in Gönen's code.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...constraints import MAX_SAMPLES, NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE_INT, SEED
from ...errors import UserError
from ...inputs import Inputs
from ...manifolds import Euclidean, Product, Stiefel, riemannian_gradient_descent
from ...objectives.mkpe import mkpe_objective
from ..base import Embedder, components_fit_relation, relation_matrix, relation_size_guard

__all__ = ["MKPE", "mkpe_embedding"]


def _polar_factor(A: np.ndarray) -> np.ndarray:
    U, _, Vt = np.linalg.svd(A, full_matrices=False)
    return U @ Vt


def mkpe_embedding(K: np.ndarray, n_components: int = 2, max_iter: int = 100, tol: float = 0.0,
                   random_state: int = 0) -> tuple[np.ndarray, np.ndarray, float, list[float], int]:
    """Fit MKPE's cross-domain term to the dense target kernel ``K`` (m×n, entries in [0, 1]).

    Returns ``(E_x (m, k), E_z (n, k), σ, objective history, iterations)``. The start: E_x and E_z the polar
    factors of standard Gaussian m×k and n×k matrices drawn in that order from ``default_rng(random_state)``,
    σ = √k. ``tol``: stop when the Riemannian gradient norm falls to ``tol`` times its initial value.
    """
    K = np.asarray(K, dtype=np.float64)
    m, n = K.shape
    k = int(n_components)
    if k > min(m, n):
        raise UserError(f"n_components must be at most min(m, n) = {min(m, n)} (orthonormal columns), got {k}")
    rng = np.random.default_rng(random_state)
    Ex0 = _polar_factor(rng.standard_normal((m, k)))
    Ez0 = _polar_factor(rng.standard_normal((n, k)))
    manifold = Product([Stiefel("polar"), Stiefel("polar"), Euclidean()], [(m, k), (n, k), (1,)])
    x0 = manifold.join([Ex0, Ez0, np.array([0.5 * np.log(k)])])

    def fun_and_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        Ex, Ez, eta = manifold.split(x)
        f, (gx, gz, geta) = mkpe_objective(Ex, Ez, float(eta[0]), K)
        return f, manifold.join([gx, gz, np.array([geta])])

    result = riemannian_gradient_descent(fun_and_grad, x0, manifold=manifold, max_iter=int(max_iter), gtol=tol)
    Ex, Ez, eta = manifold.split(result.x)
    return Ex.copy(), Ez.copy(), float(np.exp(eta[0])), list(result.history), result.n_iter


class MKPE(Embedder):
    """MKPE of the run's relation (Gönen 2014, cross-domain term only; co-embedding paper Sec. 4).

    ``embedding_`` holds E_x (rows), ``column_embedding_`` E_z (columns, saved beside the embedding), ``sigma_``
    the learned kernel width, ``objective_`` the final mean squared kernel error, ``objective_history_`` its
    value at the start and after every step, ``n_iter_`` the number of steps.

    Parameters
    ----------
    n_components : k (2); at most min(m, n).
    max_iter : number of gradient steps (100, as Gönen's demonstration).
    tol : stop early when the Riemannian gradient norm falls to ``tol`` times its initial value (0: never, as
        Gönen's demonstration, whose threshold is −∞).
    max_samples : size guard on max(m, n) (5,000): every step evaluates dense m×n kernels.
    random_state : seed of the random Stiefel starts.
    """

    required_inputs = ("relation",)
    extra_outputs = ("column_embedding_",)

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "max_iter": NON_NEGATIVE_INT,
        "tol": NON_NEGATIVE,
        "max_samples": MAX_SAMPLES,
        "random_state": SEED,
    }

    _option_rules = (relation_size_guard("MKPE", "dense m×n kernels between the row and column objects"),
                     components_fit_relation("E_x (m × k) and E_z (n × k) have orthonormal columns"))

    def __init__(self, n_components: int = 2, max_iter: int = 100, tol: float = 0.0,
                 max_samples: int | None = 5000, random_state: int = 0):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.max_samples = max_samples
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "MKPE":
        self._validate_params()
        R = sp.csr_matrix(relation_matrix(inputs, "MKPE"), dtype=np.float64)
        # max(m, n) ≤ max_samples and k ≤ min(m, n): _option_rules
        top = R.max() if R.nnz else 0.0
        if not top > 0:
            raise UserError("MKPE needs a relation with at least one positive entry (K_c = R / max R)")
        K = R.toarray() / top
        Ex, Ez, sigma, history, n_iter = mkpe_embedding(K, self.n_components, self.max_iter, self.tol,
                                                        self.random_state)
        self.embedding_ = np.ascontiguousarray(Ex)
        self.column_embedding_ = np.ascontiguousarray(Ez)
        self.sigma_ = sigma
        self.objective_ = history[-1]
        self.objective_history_ = np.asarray(history)
        self.n_iter_ = n_iter
        return self
