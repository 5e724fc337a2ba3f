"""MRE, multiple relational embedding (Memisevic & Hinton, NIPS 17, 2005), a supervised baseline of NeRV Sec. 5.3
(Fig. 13, Table 3, Fig. 14).

MRE is SNE with several input relations sharing one display: relation r has its own conditional input
probabilities P^r and sees the display through its own linear map, q^r_{j|i} proportional to
exp(-||R_r (y_i - y_j)||^2), and the cost is the sum of the relations' SNE costs,

    C(Y, R) = sum_r sum_i KL(P^r_i || Q^r_i).

In the supervised use of NeRV Sec. 5.3 there are two relations: the data's neighbourhoods (Gaussian conditional
probabilities of the Euclidean input distances) and the class relation, p^lab_{j|i} uniform over the other
labelled samples of i's class; for unlabelled samples the label terms are dropped (the class relation lives on
the labelled rows only, its Q normalised over them). [ours] The display map of the data relation is the identity
(so that Y's scale is fixed) and the class relation's map is diagonal and learnt, R_2 = diag(r); the input widths
are calibrated to a perplexity (``perplexity``, 30) instead of one tuned sigma_MRE, since our runs tune nothing
(``docs/decisions.md``, "NeRV's supervised protocol").

Each relation's cost and display gradient is :func:`cova.objectives.kl.sne_kl_and_gradient` on Z_r = Y R_r; by the
chain rule dC/dY = sum_r (dC/dZ_r) R_r and dC/dr = sum_i (dC/dz_2i) * y_i. Minimised jointly over Y and r by
scipy's L-BFGS from the seeded SNE start (N(0, 1e-4 I), r = 1). O(l^2) time and memory, like SNE.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ...affinity.dense import conditional_affinities, pca_reduce
from ...constraints import MAX_SAMPLES, POSITIVE, POSITIVE_INT, SEED
from ...errors import UserError
from ...inputs import Inputs
from ...objectives.kl import sne_kl_and_gradient
from ...progress import Progress
from ..base import Embedder, fits_samples, size_guard, supervised_arrays
from .sne import TSNE_ALTERNATIVE, _init

__all__ = ["MRE", "class_relation", "mre_cost_and_grad"]


def class_relation(labels: np.ndarray) -> np.ndarray:
    """Dense conditional class relation (l, l): p_{j|i} = 1 / (n_{c_i} - 1) for the other members j of i's class,
    0 elsewhere; a row of a class with one member is all zero."""
    y = np.asarray(labels)
    same = (y[:, None] == y[None, :]).astype(np.float64)
    np.fill_diagonal(same, 0.0)
    count = same.sum(axis=1, keepdims=True)
    return np.divide(same, count, out=np.zeros_like(same), where=count > 0)


def mre_cost_and_grad(Y: np.ndarray, r: np.ndarray, P_data: np.ndarray, P_class: np.ndarray,
                      labelled: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """C(Y, r) of the module docstring with R_1 = I, R_2 = diag(r), and its gradients with respect to Y (l, k) and
    r (k,). ``P_class`` is the class relation of the ``labelled`` rows only (m, m), m = labelled.sum()."""
    c1, g1 = sne_kl_and_gradient(Y, P_data)
    Yl = Y[labelled]
    c2, g2 = sne_kl_and_gradient(Yl * r[None, :], P_class)
    gY = g1
    gY[labelled] += g2 * r[None, :]
    gr = np.sum(g2 * Yl, axis=0)
    return c1 + c2, gY, gr


class MRE(Embedder):
    """Multiple relational embedding with a data relation and a class relation (see the module docstring).

    Parameters
    ----------
    n_components : display dimension (2).
    perplexity : of the data relation's input probabilities (30).
    n_pca : PCA dimension before the data relation (30, as SNE; ``None`` skips).
    max_iter : L-BFGS iterations (500). random_state : seed of the start.
    max_samples : size guard (5,000; dense l x l relations).

    ``fit(inputs)`` reads ``inputs.X`` and ``inputs.labels``, only the rows of ``inputs.labelled`` for the class
    relation when given (MRE takes unlabelled samples). Attributes: ``embedding_``, ``class_scales_`` (r),
    ``cost_``, ``n_iter_``.
    """

    required_inputs = ("X", "labels")
    semi_supervised = True

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "perplexity": POSITIVE,
        "n_pca": [None, *POSITIVE_INT],
        "max_iter": POSITIVE_INT,
        "random_state": SEED,
        "max_samples": MAX_SAMPLES,
    }

    _option_rules = (size_guard("MRE", "dense l×l relations", alternative=TSNE_ALTERNATIVE),
                     fits_samples("perplexity", lambda p, n: p < n - 1, lambda n: f"below n − 1 = {n - 1}",
                                  "MRE's perplexity needs fewer effective neighbours than the other samples"))

    def __init__(self, n_components: int = 2, perplexity: float = 30.0, n_pca: int | None = 30, max_iter: int = 500,
                 random_state: int = 0, max_samples: int | None = 5000):
        self.n_components = n_components
        self.perplexity = perplexity
        self.n_pca = n_pca
        self.max_iter = max_iter
        self.random_state = random_state
        self.max_samples = max_samples

    def _fit(self, inputs: Inputs) -> "MRE":
        self._validate_params()
        X, y, labelled = supervised_arrays(inputs)
        l = X.shape[0]  # the size guard and perplexity < l − 1: _option_rules
        if labelled.sum() < 2:
            raise UserError("MRE needs at least two labelled samples for its class relation")
        P_data = conditional_affinities(pca_reduce(X, self.n_pca), self.perplexity)
        P_class = class_relation(y[labelled])
        k = int(self.n_components)
        theta0 = np.concatenate([_init(l, k, self.random_state).ravel(), np.ones(k)])

        def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
            cost, gY, gr = mre_cost_and_grad(theta[:l * k].reshape(l, k), theta[l * k:], P_data, P_class, labelled)
            return cost, np.concatenate([gY.ravel(), gr])

        with Progress("MRE L-BFGS", int(self.max_iter)) as progress:
            res = minimize(fun, theta0, jac=True, method="L-BFGS-B", options={"maxiter": int(self.max_iter)},
                           callback=progress.callback)
        self.embedding_ = res.x[:l * k].reshape(l, k).copy()
        self.class_scales_ = res.x[l * k:].copy()
        self.cost_ = float(res.fun)
        self.n_iter_ = int(res.nit)
        return self
