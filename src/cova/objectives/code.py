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

Dense and vectorised: O(mnk) time and a few m×n arrays per evaluation; the log-sum-exps subtract their maximum.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CODE_MODELS", "code_nll", "code_probabilities", "code_parameter_sizes", "split_code_parameters"]

#: The two CODE models.
CODE_MODELS: tuple[str, ...] = ("conditional", "joint")


def _check_model(model: str) -> None:
    if model not in CODE_MODELS:
        raise ValueError(f"model must be one of {list(CODE_MODELS)}, got {model!r}")


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
        raise ValueError(f"expected a flat vector of {sum(sizes)} CODE parameters, got shape {x.shape}")
    cuts = np.cumsum(sizes)[:-1]
    blocks = np.split(x, cuts)
    phi, psi = blocks[0].reshape(m, k), blocks[1].reshape(n, k)
    if model == "conditional":
        return phi, psi, None, None
    return phi, psi, blocks[2], blocks[3]


def _logits(phi: np.ndarray, psi: np.ndarray, P: np.ndarray, a: np.ndarray | None, b: np.ndarray | None,
            model: str) -> np.ndarray:
    """L (m×n): log p(y_j) − d_ij (conditional) or a_i + b_j − d_ij (joint)."""
    L = 2.0 * (phi @ psi.T)
    L -= (phi * phi).sum(axis=1)[:, None]
    L -= (psi * psi).sum(axis=1)[None, :]
    if model == "conditional":
        py = P.sum(axis=0)
        with np.errstate(divide="ignore"):
            L += np.log(py / py.sum())[None, :]
    else:
        L += a[:, None]
        L += b[None, :]
    return L


def _log_normaliser(L: np.ndarray, model: str) -> tuple[np.ndarray | float, np.ndarray]:
    """log h (m,) row-wise (conditional) or log Z (scalar, joint), and Q = exp(L − log normaliser)."""
    if model == "conditional":
        top = L.max(axis=1, keepdims=True)
        Q = np.exp(L - top)
        s = Q.sum(axis=1, keepdims=True)
        Q /= s
        return (top + np.log(s)).ravel(), Q
    top = float(L.max())
    Q = np.exp(L - top)
    s = float(Q.sum())
    Q /= s
    return top + np.log(s), Q


def code_probabilities(phi: np.ndarray, psi: np.ndarray, P: np.ndarray, a: np.ndarray | None = None,
                       b: np.ndarray | None = None, model: str = "joint") -> np.ndarray:
    """The model's p̂(y_j|x_i) (conditional, rows sum to 1) or p̂(x_i, y_j) (joint, sums to 1), m×n.

    ``P`` (the empirical joint) is only read by the conditional model, for its prior p(y)."""
    _check_model(model)
    P = np.asarray(P, dtype=np.float64)
    return _log_normaliser(_logits(np.asarray(phi, float), np.asarray(psi, float), P, a, b, model), model)[1]


def code_nll(x: np.ndarray, P: np.ndarray, n_components: int, model: str = "joint") -> tuple[float, np.ndarray]:
    """CODE's negative log-likelihood f and its gradient (flat, same layout as ``x``) at the flat parameters
    ``x`` = [φ, ψ] (conditional) or [φ, ψ, a, b] (joint) (:func:`split_code_parameters`).

    ``P`` is the dense m×n empirical joint (non-negative; normally summing to 1). For the conditional model
    every column of P must have positive mass (its prior p(y) is the column marginal).
    """
    _check_model(model)
    P = np.asarray(P, dtype=np.float64)
    m, n = P.shape
    k = int(n_components)
    phi, psi, a, b = split_code_parameters(x, m, n, k, model)
    if model == "conditional" and np.any(P.sum(axis=0) <= 0):
        raise ValueError("the conditional CODE model needs every column of P to have positive mass")
    L = _logits(phi, psi, P, a, b, model)
    log_norm, Q = _log_normaliser(L, model)
    if model == "conditional":
        w = P.sum(axis=1)
        f = -float(np.einsum("ij,ij->", P, L)) + float(w @ log_norm)
        M = P - w[:, None] * Q
    else:
        total = float(P.sum())
        f = -float(np.einsum("ij,ij->", P, L)) + total * float(log_norm)
        M = P - total * Q
    rows, cols = M.sum(axis=1), M.sum(axis=0)
    g_phi = 2.0 * (rows[:, None] * phi - M @ psi)
    g_psi = 2.0 * (cols[:, None] * psi - M.T @ phi)
    parts = [g_phi.ravel(), g_psi.ravel()]
    if model == "joint":
        parts += [-rows, -cols]
    return f, np.concatenate(parts)
