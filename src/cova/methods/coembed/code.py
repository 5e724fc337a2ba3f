"""CODE, co-occurrence data embedding (Globerson, Chechik, Pereira & Tishby, JMLR 2007), a baseline of the
co-embedding paper (Sec. 2.1, Eq. 1): maximum-likelihood embeddings φ of the row objects and ψ of the column
objects of the empirical joint P = R / ΣR, under the conditional model of Eq. 1 or the joint model with free
marginals (:mod:`cova.objectives.code`).

Each restart draws every parameter (φ, ψ and, for the joint model, a and b) uniformly from (−1, 1) and runs
Polak-Ribière conjugate gradients (``scipy.optimize.minimize(method="CG")``) on the negative log-likelihood; the
restart with the highest likelihood is kept.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
import scipy.sparse as sp

from ...constraints import MAX_SAMPLES, NON_NEGATIVE, POSITIVE_INT, SEED, StrOptions
from ...errors import UserError
from ...inputs import Inputs
from ...objectives.code import CodeNLL, code_parameter_sizes, split_code_parameters
from ...progress import Progress
from ..base import Embedder, relation_matrix, relation_size_guard

__all__ = ["CODE", "code_embedding"]


def code_embedding(P: np.ndarray, n_components: int = 2, model: str = "joint", n_restarts: int = 10,
                   max_iter: int = 500, tol: float = 1e-4, random_state: int = 0) -> dict:
    """Fit CODE to the dense empirical joint ``P`` (m×n, summing to 1).

    Restart r draws its start x0 ~ U(−1, 1) from one ``default_rng(random_state)`` (restarts in order) and runs
    CG for at most ``max_iter`` iterations, stopping when ‖∇f‖_∞ ≤ ``tol``·‖∇f(x0)‖_∞. Returns a dict with
    ``phi``, ``psi``, ``a``, ``b`` (None for the conditional model), ``loglik`` (Σ P log p̂ of the best restart),
    ``n_iter`` (its CG iterations), ``logliks`` and ``start_logliks`` (every restart's final and initial
    log-likelihood) and ``messages`` (scipy's stopping reasons).
    """
    P = np.asarray(P, dtype=np.float64)
    m, n = P.shape
    k = int(n_components)
    size = sum(code_parameter_sizes(m, n, k, model))
    rng = np.random.default_rng(random_state)

    fun = CodeNLL(P, k, model)
    best = None
    logliks, starts, messages = [], [], []
    progress = Progress(f"CODE conjugate gradient, {int(n_restarts)} restarts", int(n_restarts) * int(max_iter))
    progress.start()
    for _ in range(int(n_restarts)):
        x0 = rng.uniform(-1.0, 1.0, size)
        f0, g0 = fun(x0)
        gtol = float(tol) * float(np.max(np.abs(g0)))
        res = scipy.optimize.minimize(fun, x0, jac=True, method="CG", callback=progress.callback,
                                      options={"maxiter": int(max_iter), "gtol": gtol, "norm": np.inf})
        x, f = (res.x, float(res.fun)) if res.fun <= f0 else (x0, f0)
        logliks.append(-f)
        starts.append(-f0)
        messages.append(str(res.message))
        if best is None or -f > best[0]:
            best = (-f, x, int(res.nit))
    assert best is not None
    progress.done(loglik=best[0])
    phi, psi, a, b = split_code_parameters(best[1], m, n, k, model)
    return {"phi": phi.copy(), "psi": psi.copy(), "a": None if a is None else a.copy(),
            "b": None if b is None else b.copy(), "loglik": best[0], "n_iter": best[2],
            "logliks": np.asarray(logliks), "start_logliks": np.asarray(starts), "messages": messages}


class CODE(Embedder):
    """CODE of the run's relation (Globerson et al. 2007; co-embedding paper Eq. 1).

    ``embedding_`` holds φ (rows), ``column_embedding_`` ψ (columns, saved beside the embedding), ``loglik_``
    the log-likelihood Σ P log p̂ of the kept restart, ``n_iter_`` its CG iterations, ``restart_logliks_`` every
    restart's log-likelihood, ``row_bias_`` / ``column_bias_`` a and b (joint model; None otherwise).

    Parameters
    ----------
    n_components : k (2).
    model : ``"joint"`` (p̂(x, y) ∝ exp(−‖φ_x − ψ_y‖² + a_x + b_y) with free a, b; default) or ``"conditional"``
        (p̂(y|x) ∝ p(y) exp(−‖φ_x − ψ_y‖²), Eq. 1).
    n_restarts : random starts (10); the highest likelihood is kept.
    max_iter : CG iterations per restart (500).
    tol : relative gradient tolerance: a restart stops when ‖∇f‖_∞ ≤ tol·‖∇f(x0)‖_∞ (1e-4).
    max_samples : size guard on max(m, n) (5,000): every evaluation builds dense m×n arrays.
    random_state : seed of the starts.
    """

    required_inputs = ("relation",)
    extra_outputs = ("column_embedding_",)

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "model": [StrOptions({"conditional", "joint"})],
        "n_restarts": POSITIVE_INT,
        "max_iter": POSITIVE_INT,
        "tol": NON_NEGATIVE,
        "max_samples": MAX_SAMPLES,
        "random_state": SEED,
    }

    _option_rules = (relation_size_guard("CODE", "dense m×n arrays between the row and column objects"),)

    def __init__(self, n_components: int = 2, model: str = "joint", n_restarts: int = 10, max_iter: int = 500,
                 tol: float = 1e-4, max_samples: int | None = 5000, random_state: int = 0):
        self.n_components = n_components
        self.model = model
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.max_samples = max_samples
        self.random_state = random_state

    def _fit(self, inputs: Inputs) -> "CODE":
        self._validate_params()
        R = sp.csr_matrix(relation_matrix(inputs, "CODE"), dtype=np.float64)
        # max(m, n) ≤ max_samples: _option_rules
        total = float(R.sum())
        if not total > 0:
            raise UserError("CODE needs a relation with positive total mass (P = R / ΣR)")
        for side, sums in (("row", np.asarray(R.sum(axis=1)).ravel()), ("column", np.asarray(R.sum(axis=0)).ravel())):
            empty = np.flatnonzero(sums <= 0)
            if empty.size:
                raise UserError(f"CODE needs a relation without all-zero rows and columns; {empty.size} {side}s "
                                 f"are empty (first: {empty[:5].tolist()}); drop them first")
        out = code_embedding(R.toarray() / total, self.n_components, self.model, self.n_restarts, self.max_iter,
                             self.tol, self.random_state)
        self.embedding_ = np.ascontiguousarray(out["phi"])
        self.column_embedding_ = np.ascontiguousarray(out["psi"])
        self.row_bias_ = out["a"]
        self.column_bias_ = out["b"]
        self.loglik_ = float(out["loglik"])
        self.n_iter_ = int(out["n_iter"])
        self.restart_logliks_ = out["logliks"]
        return self
