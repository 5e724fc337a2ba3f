"""CODE, co-occurrence data embedding (Globerson, Chechik, Pereira & Tishby, JMLR 2007; co-embedding paper
Sec. 2.1, Eq. 1): the negative log-likelihood of the empirical joint P = R / ΣR under two models of the
row objects' embeddings φ (m×k) and the column objects' embeddings ψ (n×k), with d_ij = ‖φ_i − ψ_j‖².

* ``"conditional"`` (co-embedding paper Eq. 1): p̂(y_j|x_i) = p(y_j) e^{−d_ij} / h_i with h_i = Σ_j' p(y_j')
  e^{−d_ij'} and p(y) the column marginal of P; f = −Σ_ij P_ij log p̂(y_j|x_i).
* ``"joint"`` (free marginals): p̂(x_i, y_j) = e^{−d_ij + a_i + b_j} / Z with free a (m) and b (n);
  f = −Σ_ij P_ij log p̂(x_i, y_j).

Both are f = −Σ P∘L + Σ_i w_i log Σ_j e^{L_ij} (conditional: L_ij = log p(y_j) − d_ij, w_i = Σ_j P_ij) or
f = −Σ P∘L + (ΣP) log Σ_ij e^{L_ij} (joint: L_ij = a_i + b_j − d_ij). With Q the model probabilities (rows of
the conditional Q sum to 1, the joint Q sums to 1) and M = P − diag(w) Q, resp. M = P − (ΣP) Q,

    ∂f/∂L = −M,  ∂f/∂φ_i = 2 Σ_j M_ij (φ_i − ψ_j),  ∂f/∂ψ_j = −2 Σ_i M_ij (φ_i − ψ_j),
    ∂f/∂a_i = −Σ_j M_ij,  ∂f/∂b_j = −Σ_i M_ij.

Dense and vectorised: O(mnk) time; an evaluation works in place in one m×n array (:class:`CodeNLL`), and the
log-sum-exps subtract their maximum.
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError

__all__ = ["CODE_MODELS", "CodeNLL", "code_nll", "code_probabilities", "code_parameter_sizes", "split_code_parameters"]

#: The two CODE models.
CODE_MODELS: tuple[str, ...] = ("conditional", "joint")


def _check_model(model: str) -> None:
    if model not in CODE_MODELS:
        raise UserError(f"model must be one of {list(CODE_MODELS)}, got {model!r}")


def code_parameter_sizes(m: int, n: int, k: int, model: str) -> tuple[int, ...]:
    """Sizes of the blocks of the flat parameter vector: φ (m·k), ψ (n·k) and, for the joint model, a (m), b (n)."""
    _check_model(model)
    return (m * k, n * k) if model == "conditional" else (m * k, n * k, m, n)


def split_code_parameters(x: np.ndarray, m: int, n: int, k: int,
                          model: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(φ (m, k), ψ (n, k), a (m,) or None, b (n,) or None)`` from the flat vector (blocks in that order)."""
    sizes = code_parameter_sizes(m, n, k, model)
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (sum(sizes),):
        raise UserError(f"expected a flat vector of {sum(sizes)} CODE parameters, got shape {x.shape}")
    cuts = np.cumsum(sizes)[:-1]
    blocks = np.split(x, cuts)
    phi, psi = blocks[0].reshape(m, k), blocks[1].reshape(n, k)
    if model == "conditional":
        return phi, psi, None, None
    return phi, psi, blocks[2], blocks[3]


def _log_prior(P: np.ndarray) -> np.ndarray:
    """log p(y), the column marginal of P (−inf for an empty column)."""
    py = P.sum(axis=0)
    with np.errstate(divide="ignore"):
        return np.log(py / py.sum())


def _logits(phi: np.ndarray, psi: np.ndarray, log_py: np.ndarray | None, a: np.ndarray | None,
            b: np.ndarray | None, model: str, out: np.ndarray | None = None) -> np.ndarray:
    """L (m×n): log p(y_j) − d_ij (conditional) or a_i + b_j − d_ij (joint), written into ``out`` if given.

    d_ij = ‖φ_i‖² + ‖ψ_j‖² − 2φ_i·ψ_j: one BLAS product and two broadcast subtractions, in place."""
    L = np.matmul(2.0 * phi, psi.T, out=out)
    row = np.einsum("ij,ij->i", phi, phi)
    col = np.einsum("ij,ij->i", psi, psi)
    if model == "conditional":
        col -= log_py
    else:
        row -= a
        col -= b
    L -= row[:, None]
    L -= col[None, :]
    return L


def _exp_shifted(L: np.ndarray, model: str) -> tuple[np.ndarray | float, np.ndarray | float]:
    """Overwrite L with E = exp(L − top), top its row maxima (conditional) or its maximum (joint); returns
    ``(top, s)`` with s the row sums (m,) or the total of E, so that Q = E / s and log normaliser = top + log s."""
    if model == "conditional":
        top = L.max(axis=1)
        L -= top[:, None]
        np.exp(L, out=L)
        return top, L.sum(axis=1)
    top = float(L.max())
    L -= top
    np.exp(L, out=L)
    return top, float(L.sum())


def code_probabilities(phi: np.ndarray, psi: np.ndarray, P: np.ndarray, a: np.ndarray | None = None,
                       b: np.ndarray | None = None, model: str = "joint") -> np.ndarray:
    """The model's p̂(y_j|x_i) (conditional, rows sum to 1) or p̂(x_i, y_j) (joint, sums to 1), m×n.

    ``P`` (the empirical joint) is only read by the conditional model, for its prior p(y)."""
    _check_model(model)
    P = np.asarray(P, dtype=np.float64)
    log_py = _log_prior(P) if model == "conditional" else None
    Q = _logits(np.asarray(phi, float), np.asarray(psi, float), log_py, a, b, model)
    _, s = _exp_shifted(Q, model)
    Q /= s[:, None] if model == "conditional" else s
    return Q


class CodeNLL:
    """CODE's negative log-likelihood of a fixed empirical joint ``P`` as a callable x ↦ (f, ∇f) for an optimiser
    (:func:`code_nll` at every call). P's margins are computed once, and every evaluation works in one m×n array
    held here: it holds L, then exp(L − max), then M."""

    def __init__(self, P: np.ndarray, n_components: int, model: str = "joint"):
        _check_model(model)
        self.P = np.asarray(P, dtype=np.float64)
        self.k = int(n_components)
        self.model = model
        self.w = self.P.sum(axis=1)
        self.total = float(self.w.sum())
        self.log_py = None
        if model == "conditional":
            if np.any(self.P.sum(axis=0) <= 0):
                raise UserError("the conditional CODE model needs every column of P to have positive mass")
            self.log_py = _log_prior(self.P)
        self.work = np.empty_like(self.P)

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        P, k, model = self.P, self.k, self.model
        m, n = P.shape
        phi, psi, a, b = split_code_parameters(x, m, n, k, model)
        L = _logits(phi, psi, self.log_py, a, b, model, out=self.work)
        PL = float(np.einsum("ij,ij->", P, L))
        top, s = _exp_shifted(L, model)
        # L holds E = exp(L − top); make it M = P − diag(w) Q (conditional) or P − (ΣP) Q (joint), Q = E / s.
        if model == "conditional":
            f = -PL + float(self.w @ (top + np.log(s)))
            L *= (-self.w / s)[:, None]
        else:
            f = -PL + self.total * (top + float(np.log(s)))
            L *= -self.total / s
        L += P
        # M [ψ, 1] and Mᵀ [φ, 1]: the gradient's products and M's row and column sums in two BLAS calls.
        Mpsi = L @ np.hstack([psi, np.ones((n, 1))])
        Mphi = L.T @ np.hstack([phi, np.ones((m, 1))])
        rows, cols = Mpsi[:, k], Mphi[:, k]
        g_phi = 2.0 * (rows[:, None] * phi - Mpsi[:, :k])
        g_psi = 2.0 * (cols[:, None] * psi - Mphi[:, :k])
        parts = [g_phi.ravel(), g_psi.ravel()]
        if model == "joint":
            parts += [-rows, -cols]
        return f, np.concatenate(parts)


def code_nll(x: np.ndarray, P: np.ndarray, n_components: int, model: str = "joint") -> tuple[float, np.ndarray]:
    """CODE's negative log-likelihood f and its gradient (flat, same layout as ``x``) at the flat parameters
    ``x`` = [φ, ψ] (conditional) or [φ, ψ, a, b] (joint) (:func:`split_code_parameters`).

    ``P`` is the dense m×n empirical joint (non-negative; normally summing to 1). For the conditional model
    every column of P must have positive mass (its prior p(y) is the column marginal). An optimiser evaluating
    many x for one P should hold a :class:`CodeNLL`.
    """
    return CodeNLL(P, n_components, model)(x)
