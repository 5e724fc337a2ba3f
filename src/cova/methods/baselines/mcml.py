"""Maximally collapsing metric learning (MCML; Globerson & Roweis 2005), one of COVA's existing methods, written
by hand: it is absent from scikit-learn and from metric-learn 0.7.0.

Model (Globerson & Roweis 2005, Sec. 2). For a PSD matrix A, d^A_ij = (x_i − x_j)ᵀA(x_i − x_j) and

    p^A(j|i) = exp(−d^A_ij) / Σ_{k≠i} exp(−d^A_ik)  (j ≠ i),     p₀(j|i) ∝ [y_j = y_i]  (uniform over the class, j ≠ i).

MCML minimises f(A) = Σ_i KL[p₀(·|i) ‖ p^A(·|i)] subject to A ⪰ 0. Up to a constant,
f(A) = Σ_ij p₀(j|i) d^A_ij + Σ_i ln Σ_{k≠i} exp(−d^A_ik), which is convex in A (a linear term plus log-sum-exps of
linear functions), with gradient (their Eq. 6)

    ∇f(A) = Σ_ij (p₀(j|i) − p^A(j|i)) (x_i − x_j)(x_i − x_j)ᵀ = Xᵀ 𝐋(M + Mᵀ) X,   M = P₀ − P^A.

Solver: projected gradient descent on the PSD cone (the projection clips negative eigenvalues to 0) with a
backtracking (Armijo-type) step for projected gradients: the step t is accepted when
f(A⁺) ≤ f(A) + ⟨∇f, A⁺ − A⟩ + ‖A⁺ − A‖²_F / (2t), otherwise halved; after an accepted step it is doubled. Stop
when the relative decrease of f over one step falls below ``tol`` or after ``max_iter`` steps.

Output [ours: Globerson & Roweis give no 2-D projection rule]: A = VΛVᵀ; the 2-D projection is
Z = X V₂ Λ₂^{1/2} with the two leading eigenpairs (so that ‖z_i − z_j‖² approximates d^A_ij). The data are
first reduced by PCA to at most ``n_pca`` = 50 dimensions and centred [ours]. Samples whose class has no other
member have no target distribution and contribute no KL term (they still appear as neighbours of the others).
Every iteration is O(l²·d): ``max_samples`` = 3,000.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral
from typing import Any

import numpy as np

from ...affinity.dense import pca_reduce
from ...constraints import MAX_SAMPLES, NON_NEGATIVE, POSITIVE, POSITIVE_INT, SEED_OR_NONE
from ...errors import UserError
from ...inputs import Inputs
from ...progress import Progress
from ..base import Embedder, size_guard

__all__ = ["MCML", "mcml_objective", "target_distribution", "project_psd"]


def target_distribution(labels: np.ndarray) -> np.ndarray:
    """P₀ (l×l): p₀(j|i) = 1/(n_{y_i} − 1) for same-class j ≠ i, else 0. Rows of singleton classes are all zero."""
    y = np.asarray(labels).ravel()
    same = y[:, None] == y[None, :]
    np.fill_diagonal(same, False)
    counts = same.sum(axis=1)
    P0 = same.astype(np.float64)
    nz = counts > 0
    P0[nz] /= counts[nz, None]
    return P0


def project_psd(A: np.ndarray) -> np.ndarray:
    """Euclidean projection of a symmetric matrix onto the PSD cone: clip negative eigenvalues to 0."""
    S = 0.5 * (A + A.T)
    w, V = np.linalg.eigh(S)
    return (V * np.maximum(w, 0.0)) @ V.T


def mcml_objective(A: np.ndarray, X: np.ndarray, P0: np.ndarray) -> tuple[float, np.ndarray]:
    """f(A) = Σ_i KL[p₀(·|i) ‖ p^A(·|i)] (rows with p₀ defined) and ∇f(A) (d×d, symmetric).

    A must be symmetric (PSD is not required for the formulas). d^A_ij = g_i + g_j − 2x_iᵀAx_j with g_i = x_iᵀAx_i
    (BLAS; X should be centred to limit cancellation); the row minimum is subtracted before exponentiating.
    """
    X = np.asarray(X, dtype=np.float64)
    XA = X @ A
    g = np.einsum("ij,ij->i", XA, X)  # x_iᵀ A x_i
    D = g[:, None] + g[None, :] - 2.0 * (XA @ X.T)  # d^A_ij (symmetric A)
    np.fill_diagonal(D, np.inf)
    dmin = D.min(axis=1, keepdims=True)
    E = np.exp(-(D - dmin))
    s = E.sum(axis=1, keepdims=True)
    PA = E / s
    active = P0.sum(axis=1) > 0
    logZ = (np.log(s) - dmin).ravel()  # ln Σ_k exp(−d_ik)
    np.fill_diagonal(D, 0.0)
    # KL_i = Σ_j p0 ln p0 + Σ_j p0 d_ij + ln Σ_k exp(−d_ik)
    with np.errstate(divide="ignore", invalid="ignore"):
        p0logp0 = np.where(P0 > 0, P0 * np.log(np.where(P0 > 0, P0, 1.0)), 0.0)
    f = float(np.sum(p0logp0[active]) + np.sum((P0 * D)[active]) + np.sum(logZ[active]))
    M = P0 - PA
    M[~active] = 0.0
    deg = M.sum(axis=1) + M.sum(axis=0)
    grad = (X * deg[:, None]).T @ X - X.T @ (M @ X) - X.T @ (M.T @ X)
    return f, 0.5 * (grad + grad.T)



def _components_fit_reduced(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    """The rule of ``n_components``: at most the dimension of the data MCML works in, d (context ``"n_features"``)
    when d ≤ ``n_pca``, else min(``n_pca``, n) (:func:`cova.affinity.dense.pca_reduce`); ``n_pca`` alone bounds it
    when d is not known."""
    k, n_pca = options.get("n_components"), options.get("n_pca")
    d, n = context.get("n_features"), context.get("n_samples")
    if not isinstance(k, Integral):
        return None
    if d is not None and (n_pca is None or d.value <= n_pca):
        bound, source = d.value, d.source
    elif n_pca is not None and n is not None and n.value < n_pca:
        bound, source = n.value, f"{n.source}, fewer than n_pca = {n_pca} (the PCA keeps at most n directions)"
    elif n_pca is not None:
        bound, source = n_pca, f"n_pca = {n_pca} (the PCA before the metric)"
    else:
        return None
    if k <= bound:
        return None
    return "n_components", f"{source}, and MCML projects the data it works in; allowed: at most {bound}"

class MCML(Embedder):
    """MCML (Globerson & Roweis 2005) as a 2-D linear projection (module docstring).

    Parameters
    ----------
    n_components : 2. n_pca : 50 (PCA to at most 50 dimensions first; ``None`` skips it).
    max_iter : 300 projected-gradient steps. tol : 1e-7 relative decrease of f. step0 : 1.0, initial step,
        relative to ‖A₀‖_F/‖∇f(A₀)‖_F.
    max_samples : 3,000 (``ValueError`` above: dense l×l matrices every iteration).
    random_state : unused (the solver is deterministic; kept for the common interface).

    A₀ = I / mean_i‖x_i − x̄‖² (so that d^A of a typical pair is O(1)). Attributes: embedding_ (l, n_components),
    metric_ (A, d×d in the PCA space), projection_ (d×n_components, V₂Λ₂^{1/2}), objective_ (history of f),
    n_iter_.
    """

    required_inputs = ("X", "labels")

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "n_pca": [*POSITIVE_INT, None],
        "max_iter": POSITIVE_INT,
        "tol": NON_NEGATIVE,
        "step0": POSITIVE,
        "max_samples": MAX_SAMPLES,
        "random_state": SEED_OR_NONE,
    }

    _option_rules = (size_guard("MCML"), _components_fit_reduced)

    def __init__(self, n_components: int = 2, n_pca: int | None = 50, max_iter: int = 300, tol: float = 1e-7,
                 step0: float = 1.0, max_samples: int | None = 3000, random_state: int = 0):
        self.n_components = n_components
        self.n_pca = n_pca
        self.max_iter = max_iter
        self.tol = tol
        self.step0 = step0
        self.max_samples = max_samples
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "MCML":
        self._validate_params()
        X = np.asarray(inputs.X, dtype=np.float64)
        l = X.shape[0]
        y = np.asarray(inputs.labels).ravel()
        if y.shape[0] != l:
            raise UserError(f"labels has {y.shape[0]} entries but X has {l} samples")
        Xr = pca_reduce(X, self.n_pca)
        Xr = Xr - Xr.mean(axis=0)
        d = Xr.shape[1]  # ≥ n_components: _option_rules
        P0 = target_distribution(y)
        if not np.any(P0.sum(axis=1) > 0):
            raise UserError("MCML needs at least one class with two or more samples")
        scale = float(np.mean(np.einsum("ij,ij->i", Xr, Xr)))
        A = np.eye(d) / (scale if scale > 0 else 1.0)
        f, G = mcml_objective(A, Xr, P0)
        t = self.step0 * np.linalg.norm(A) / max(np.linalg.norm(G), 1e-300)
        history = [f]
        it = 0
        progress = Progress("MCML projected gradient", int(self.max_iter)).start()
        for it in range(1, int(self.max_iter) + 1):
            while True:
                A_new = project_psd(A - t * G)
                delta = A_new - A
                f_new, G_new = mcml_objective(A_new, Xr, P0)
                if f_new <= f + np.sum(G * delta) + np.sum(delta * delta) / (2.0 * t) or t < 1e-300:
                    break
                t *= 0.5
            decrease = f - f_new
            A, f, G = A_new, f_new, G_new
            history.append(f)
            t *= 2.0
            progress.tick(f=f)
            if decrease <= self.tol * max(abs(f), 1.0):
                break
        progress.done(f=f)
        w, V = np.linalg.eigh(0.5 * (A + A.T))
        order = np.argsort(w)[::-1][: self.n_components]
        proj = V[:, order] * np.sqrt(np.maximum(w[order], 0.0))
        # sign convention: the largest-magnitude coefficient of each direction is positive
        signs = np.sign(proj[np.argmax(np.abs(proj), axis=0), np.arange(proj.shape[1])])
        signs[signs == 0] = 1.0
        proj = proj * signs
        self.metric_ = A
        self.projection_ = proj
        self.objective_ = np.asarray(history)
        self.n_iter_ = it
        self.embedding_ = np.ascontiguousarray(Xr @ proj)
        return self
