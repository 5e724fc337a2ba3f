"""SNeRV: supervised NeRV (Venna et al., JMLR 11:451-490, 2010, Sec. 5, Eqs. 9-10).

The paper leaves the mixture's parameterisation, the K and sigma grids and the path-integral rule open; our
choices are marked [ours] below (``docs/papers.md``, NeRV, "SNeRV").

NeRV, unchanged, run on a distance matrix computed with the **learning metric** of a class-posterior model:

1. :class:`ClassPosterior` - the discriminative mixture of labelled Gaussians of Eq. (10),
   ``p(c|x) = sum_k beta_ck g_k(x) / sum_k g_k(x)``, ``g_k = exp(-||x - m_k||^2 / 2 sigma^2)``.
   The paper does not give the beta parameterisation: [ours] ``beta_ck = softmax_c(a_ck)`` (free logits a, one
   softmax over the classes per component). Means ``m_k`` start at seeded k-means centres, the logits at
   ``log`` of the Laplace-smoothed class frequencies of each k-means cell, ``(count_ck + 1) / (n_k + C)``.
   Fitted by :func:`scipy.optimize.minimize` (``method="CG"``) on the mean negative conditional
   log-likelihood with its analytic gradient. K and sigma: ``"auto"`` picks them by the held-out conditional
   log-likelihood of **3-fold** stratified CV (the paper: 10-fold; 3 to keep it cheap) over the grids
   ``K in {C, 2C, 4C}`` (capped at ``n / 10``, at least 1) and ``sigma in median pairwise distance x
   {0.25, 0.5, 1}`` (the paper gives no grid).
2. :func:`learning_metric_distances` - straight-line path integrals of the local metric
   ``d_L^2 = dx^T J(x) dx`` with the Fisher matrix ``J(x) = sum_c p(c|x) grad log p(c|x) grad log p(c|x)^T``:
   ``d(x1, x2) = sum_{t=0}^{T-1} sqrt(Delta^T J(x1 + (t + 1/2) Delta) Delta)``, ``Delta = (x2 - x1) / T``,
   T = 10 pieces, J at the **piece midpoints** [ours] (the paper defers the rule to Peltonen et al. 2004;
   evaluating J at the piece starts would not be symmetric; the midpoint rule is symmetric by construction:
   swapping x1 and x2 maps the midpoints onto themselves and flips the sign of Delta, and the form is even in
   Delta). ``Delta^T J Delta = sum_c p(c|x)
   (grad log p(c|x) . Delta)^2`` (no d x d matrix) and, with ``grad log p(c|x) = (1/sigma^2)(sum_k pi_{k|c}
   m_k - sum_k pi_k m_k)``, every quantity on the segment follows from the exact squared distances
   ``||x1 - m_k||^2``, ``||x2 - m_k||^2`` and ``||x2 - x1||^2`` (polarisation identity), so a pair costs
   O(T C K) after an O(n K d + n^2 d) precomputation.
3. :class:`SNeRV` - NeRV (``metric="precomputed"``) on these distances with ``lam`` (0.1 default; the paper
   uses 0.1 and 0.3) and ``k = round(0.5 n / K)`` effective neighbours (n = all points passed to ``fit``,
   clipped into NeRV's admissible (1, n - 1)). O(n^2) time and memory like NeRV; the size guard
   ``max_samples`` defaults to 2,000 (the distance computation costs O(n^2 T C K)).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.spatial.distance import cdist, pdist, squareform
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans
from sklearn.model_selection import StratifiedKFold

from ...constraints import (
    MAX_SAMPLES,
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    SEED_OR_NONE,
    UNIT,
    StrOptions,
    integer,
)
from ...objectives.mkpe import squared_distances
from ..base import Embedder, check_size, supervised_arrays
from .nerv import ANNEAL, NeRV

__all__ = ["ClassPosterior", "UsesClassPosterior", "fit_class_posterior", "posterior_arrays", "posterior_from_arrays",
           "training_fingerprint",
           "learning_metric_distances", "SNeRV", "SNERV_MAX_SAMPLES"]

#: Default size guard of SNeRV (dense n x n distances, O(n^2 T C K) learning-metric work).
SNERV_MAX_SAMPLES = 2000
#: Grid factors: K in {C, 2C, 4C}, sigma in median distance x {0.25, 0.5, 1}.
K_FACTORS = (1, 2, 4)
SIGMA_FACTORS = (0.25, 0.5, 1.0)
#: Largest number of float64 entries of one (pairs, T, C, K) block in :func:`learning_metric_distances`.
_BLOCK_ENTRIES = 2_000_000


def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    """``log sum exp`` along ``axis`` (kept as a length-1 axis) of a finite array, shifted by the maximum.

    Written here rather than calling :func:`scipy.special.logsumexp`: its array-API dispatch cost more than half
    of a mixture fit's time at d = 64 (the arrays are small and the calls many)."""
    m = a.max(axis=axis, keepdims=True)
    out = np.exp(a - m).sum(axis=axis, keepdims=True)
    np.log(out, out=out)
    out += m
    return out


def _median_distance(X: np.ndarray, rng: np.random.Generator, max_points: int = 1000) -> float:
    idx = rng.choice(X.shape[0], size=min(max_points, X.shape[0]), replace=False)
    d = pdist(X[np.sort(idx)])
    d = d[d > 0]
    return float(np.median(d)) if d.size else 1.0


class ClassPosterior(BaseEstimator):
    """Discriminative mixture of labelled Gaussians (Eq. 10) with a shared isotropic width.

    Parameters
    ----------
    n_components : K, the number of mixture components, or ``"auto"`` (3-fold CV over {C, 2C, 4C}, capped
        at n / 10).
    sigma : the shared width, or ``"auto"`` (3-fold CV over median pairwise distance x {0.25, 0.5, 1}).
    random_state : seed of k-means (initialisation) and of the CV folds.
    max_iter : CG iterations of the likelihood maximisation.
    n_folds : folds of the ``"auto"`` selection (3).

    Attributes after ``fit``: ``means_`` (K, d), ``logits_`` (C, K) (``beta = softmax over axis 0``),
    ``beta_`` (C, K), ``classes_``, ``n_components_``, ``sigma_``, ``cv_scores_`` (dict (K, sigma) -> mean
    held-out log-likelihood per sample, empty without "auto"), ``loss_`` (final mean negative log-likelihood).
    """

    _parameter_constraints = {
        "n_components": [StrOptions({"auto"}), *POSITIVE_INT],
        "sigma": [StrOptions({"auto"}), *POSITIVE],
        "random_state": SEED_OR_NONE,
        "max_iter": POSITIVE_INT,
        "n_folds": [integer(2, None)],
    }

    def __init__(self, n_components: Any = "auto", sigma: Any = "auto", random_state: int | None = 0,
                 max_iter: int = 200, n_folds: int = 3):
        self.n_components = n_components
        self.sigma = sigma
        self.random_state = random_state
        self.max_iter = max_iter
        self.n_folds = n_folds

    # -- model -----------------------------------------------------------------------------------------
    @staticmethod
    def _unpack(theta: np.ndarray, K: int, d: int, C: int) -> tuple[np.ndarray, np.ndarray]:
        return theta[:K * d].reshape(K, d), theta[K * d:].reshape(C, K)

    @staticmethod
    def loss_and_grad(theta: np.ndarray, X: np.ndarray, Y: np.ndarray, sigma: float,
                      K: int, X_sqnorm: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """Mean negative conditional log-likelihood ``-(1/n) sum_n log p(c_n|x_n)`` and its gradient with respect
        to ``theta = [means.ravel(), logits.ravel()]``; ``Y`` is the (n, C) one-hot label matrix, ``X_sqnorm``
        the squared row norms of X (computed when not given; a fit passes them once for all its evaluations).
        The squared distances ``||x_n - m_k||^2`` come from one BLAS product
        (:func:`cova.objectives.mkpe.squared_distances`), the costly part of an evaluation at d ~ 1,000.

        With ``r_nk = beta_{c_n k} g_nk / sum_l beta_{c_n l} g_nl`` and ``pi_nk = g_nk / sum_l g_nl``:
        ``d log p(c_n|x_n) / d m_k = (r_nk - pi_nk)(x_n - m_k) / sigma^2`` and
        ``d log p(c_n|x_n) / d a_ck = r_nk ([c = c_n] - beta_ck)``."""
        n, d = X.shape
        C = Y.shape[1]
        M, A = ClassPosterior._unpack(theta, K, d, C)
        s2 = sigma * sigma
        G = squared_distances(X, M, X_sqnorm)
        G *= -1.0 / (2.0 * s2)                                        # (n, K)
        logbeta = A - _logsumexp(A, axis=0)                           # (C, K)
        lse_g = _logsumexp(G, axis=1)                                 # (n, 1)
        Ln = G + Y @ logbeta                                          # log beta_{c_n k} + G_nk
        lse_c = _logsumexp(Ln, axis=1)
        loss = -float(np.sum(lse_c - lse_g)) / n
        r = np.exp(Ln - lse_c)
        pi = np.exp(G - lse_g)
        W = r - pi
        gM = (W.T @ X - W.sum(axis=0)[:, None] * M) / s2
        gA = Y.T @ r - np.exp(logbeta) * r.sum(axis=0)[None, :]
        return loss, -np.concatenate([gM.ravel(), gA.ravel()]) / n

    def _log_terms(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """G (n, K), log pi (n, K), L = G + log beta (n, C, K)."""
        G = squared_distances(X, self.means_)
        G *= -1.0 / (2.0 * self.sigma_ ** 2)
        logpi = G - _logsumexp(G, axis=1)
        L = logpi[:, None, :] + self._logbeta[None, :, :]
        return G, logpi, L

    def predict_log_proba(self, X: np.ndarray) -> np.ndarray:
        """log p(c|x), (n, C), columns in ``classes_`` order."""
        _, _, L = self._log_terms(np.asarray(X, dtype=np.float64))
        return _logsumexp(L, axis=2)[..., 0]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """p(c|x), (n, C)."""
        return np.exp(self.predict_log_proba(X))

    def grad_log_proba(self, X: np.ndarray) -> np.ndarray:
        """grad_x log p(c|x) = (1/sigma^2)(sum_k pi_{k|c} m_k - sum_k pi_k m_k), shape (n, C, d)."""
        _, logpi, L = self._log_terms(np.asarray(X, dtype=np.float64))
        pic = np.exp(L - _logsumexp(L, axis=2))                       # pi_{k|c} (n, C, K)
        diff = pic - np.exp(logpi)[:, None, :]
        return (diff @ self.means_) / self.sigma_ ** 2

    # -- fitting ---------------------------------------------------------------------------------------
    def _fit_one(self, X: np.ndarray, codes: np.ndarray, C: int, K: int, sigma: float) -> tuple[np.ndarray, float]:
        n, d = X.shape
        K = int(max(1, min(K, n)))
        km = KMeans(n_clusters=K, n_init=3, random_state=self.random_state).fit(X)
        counts = np.zeros((C, K))
        np.add.at(counts, (codes, km.labels_), 1.0)
        A0 = np.log((counts + 1.0) / (counts.sum(axis=0, keepdims=True) + C))
        theta0 = np.concatenate([km.cluster_centers_.ravel(), A0.ravel()])
        Y = np.eye(C)[codes]
        res = minimize(self.loss_and_grad, theta0, args=(X, Y, float(sigma), K, np.einsum("ij,ij->i", X, X)),
                       jac=True, method="CG",
                       options={"maxiter": int(self.max_iter), "gtol": 1e-6})
        return res.x, float(res.fun)

    def _set(self, theta: np.ndarray, d: int, C: int, K: int, sigma: float) -> None:
        self.means_, self.logits_ = self._unpack(theta, K, d, C)
        self._logbeta = self.logits_ - _logsumexp(self.logits_, axis=0)
        self.beta_ = np.exp(self._logbeta)
        self.n_components_ = K
        self.sigma_ = float(sigma)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "ClassPosterior":
        self._validate_params()
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y).ravel()
        if X.ndim != 2 or y.shape[0] != X.shape[0]:
            raise ValueError(f"X must be (n, d) and y (n,); got {X.shape} and {y.shape}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        C = len(self.classes_)
        if C < 2:
            raise ValueError("ClassPosterior needs at least two classes")
        n, d = X.shape
        rng = np.random.default_rng(self.random_state)
        if self.n_components == "auto":
            cap = max(1, n // 10)
            Ks = sorted({max(1, min(f * C, cap)) for f in K_FACTORS})
        else:
            Ks = [int(self.n_components)]
        if self.sigma == "auto":
            med = _median_distance(X, rng)
            sigmas = [f * med for f in SIGMA_FACTORS]
        else:
            sigmas = [float(self.sigma)]
        if not all(s > 0 for s in sigmas):
            raise ValueError(f"sigma must be positive; got {self.sigma!r}")
        self.cv_scores_: dict[tuple[int, float], float] = {}
        if len(Ks) * len(sigmas) > 1:
            folds = int(min(self.n_folds, np.bincount(codes).min()))
            if folds < 2:
                raise ValueError("'auto' needs at least 2 samples per class for the CV folds")
            skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=self.random_state)
            splits = list(skf.split(X, codes))
            for K in Ks:
                for s in sigmas:
                    ll = 0.0
                    for tr, te in splits:
                        Ktr = max(1, min(K, tr.size))
                        theta, _ = self._fit_one(X[tr], codes[tr], C, Ktr, s)
                        Yte = np.eye(C)[codes[te]]
                        ll -= self.loss_and_grad(theta, X[te], Yte, s, Ktr)[0] * te.size
                    self.cv_scores_[(K, s)] = ll / n
            K, s = max(self.cv_scores_, key=self.cv_scores_.get)
        else:
            K, s = Ks[0], sigmas[0]
        K = int(max(1, min(K, n)))
        theta, self.loss_ = self._fit_one(X, codes, C, K, s)
        self._set(theta, d, C, K, s)
        return self


def training_fingerprint(X: np.ndarray, y: np.ndarray) -> str:
    """SHA-256 of training rows and their labels: ties a saved :class:`ClassPosterior` to the data it was fitted
    on."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(np.asarray(y).ravel())
    h = hashlib.sha256()
    for part in (str(X.shape), X.tobytes(), str(y.dtype), y.tobytes()):
        h.update(part if isinstance(part, bytes) else part.encode())
    return h.hexdigest()


def posterior_arrays(post: ClassPosterior, fingerprint: str) -> dict[str, np.ndarray]:
    """A fitted :class:`ClassPosterior` as plain arrays (an ``.npz`` without pickles): its settings, the
    fingerprint of its training data, the fitted parameters and the CV scores."""
    keys = sorted(post.cv_scores_)
    return {"settings": np.array(json.dumps(post.get_params(), sort_keys=True)), "fingerprint": np.array(fingerprint),
            "means": post.means_, "logits": post.logits_, "classes": post.classes_, "sigma": np.array(post.sigma_),
            "loss": np.array(post.loss_), "cv_K": np.array([K for K, _ in keys], dtype=np.int64),
            "cv_sigma": np.array([sig for _, sig in keys], dtype=np.float64),
            "cv_score": np.array([post.cv_scores_[key] for key in keys], dtype=np.float64)}


def posterior_from_arrays(arrays: Any) -> ClassPosterior:
    """The :class:`ClassPosterior` saved by :func:`posterior_arrays` (every fitted attribute restored)."""
    post = ClassPosterior(**json.loads(str(arrays["settings"])))
    means = np.asarray(arrays["means"], dtype=np.float64)
    logits = np.asarray(arrays["logits"], dtype=np.float64)
    (K, d), C = means.shape, logits.shape[0]
    post.classes_ = np.asarray(arrays["classes"])
    post.loss_ = float(arrays["loss"])
    post.cv_scores_ = {(int(K_), float(s)): float(v)
                       for K_, s, v in zip(arrays["cv_K"], arrays["cv_sigma"], arrays["cv_score"])}
    post._set(np.concatenate([means.ravel(), logits.ravel()]), d, C, K, float(arrays["sigma"]))
    return post


def fit_class_posterior(inputs: Any, settings: dict[str, Any]) -> dict[str, np.ndarray]:
    """Fit ``ClassPosterior(**settings)`` on the rows of ``inputs`` whose labels may be read (those of
    ``inputs.labelled`` when given, as SNeRV and PE select them) and return it as :func:`posterior_arrays`: the
    model the workflow fits once per inputs block and passes to every run that uses the same settings."""
    X, y, rows = supervised_arrays(inputs)
    post = ClassPosterior(**settings).fit(X[rows], y[rows])
    return posterior_arrays(post, training_fingerprint(X[rows], y[rows]))


class UsesClassPosterior:
    """What SNeRV and PE share: a :class:`ClassPosterior` with their ``n_mixture``, ``sigma_mixture``,
    ``posterior_max_iter`` and ``random_state``, fitted on the labelled rows, or taken from
    ``inputs.class_posterior`` when the workflow has fitted it once for all the runs of an inputs block that ask for
    the same model (the same settings give the same fit, so the embedding is the same either way)."""

    n_mixture: Any
    sigma_mixture: Any
    posterior_max_iter: int
    random_state: int | None

    def _posterior_model(self) -> ClassPosterior:
        """The unfitted :class:`ClassPosterior` this method's parameters describe."""
        seed = None if self.random_state is None else int(self.random_state)
        return ClassPosterior(n_components=self.n_mixture, sigma=self.sigma_mixture, random_state=seed,
                              max_iter=int(self.posterior_max_iter))

    def class_posterior_settings(self) -> dict[str, Any] | None:
        """The :class:`ClassPosterior` parameters this method fits with; ``None`` without a seed (an unseeded fit
        cannot be shared)."""
        if self.random_state is None:
            return None
        return self._posterior_model().get_params()

    def _class_posterior(self, inputs: Any, X: np.ndarray, y: np.ndarray, rows: np.ndarray) -> ClassPosterior:
        shared = getattr(inputs, "class_posterior", None)
        if shared is None:
            return self._posterior_model().fit(X[rows], y[rows])
        settings = self.class_posterior_settings()
        name = type(self).__name__
        post = posterior_from_arrays(shared)
        if settings is None or post.get_params() != settings:
            raise ValueError(f"{name}: the class posterior passed with the inputs was fitted with {post.get_params()}, "
                             f"but this {name} asks for {settings}")
        if str(shared["fingerprint"]) != training_fingerprint(X[rows], y[rows]):
            raise ValueError(f"{name}: the class posterior passed with the inputs was fitted on other training rows "
                             f"than the {int(np.sum(rows))} labelled rows of these inputs")
        return post


def fisher_quadratic_form(posterior: ClassPosterior, X: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``v^T J(x) v = sum_c p(c|x) (grad log p(c|x) . v)^2`` row by row for points X (m, d), vectors V (m, d)."""
    g = posterior.grad_log_proba(X)                                   # (m, C, d)
    p = posterior.predict_proba(X)
    s = np.einsum("mcd,md->mc", g, np.asarray(V, dtype=np.float64))
    return np.sum(p * s * s, axis=1)


def learning_metric_distances(posterior: ClassPosterior, X: np.ndarray, n_pieces: int = 10) -> np.ndarray:
    """(n, n) straight-line learning-metric distances, T = ``n_pieces`` pieces, J at the piece midpoints.

    For a pair (x1, x2) and ``u_t = (t + 1/2) / T``: ``||x1 + u (x2 - x1) - m_k||^2 = (1 - u) e1_k + u e2_k -
    u (1 - u) D12`` and ``(m_k - x1) . (x2 - x1) = (e1_k + D12 - e2_k) / 2`` with ``e_k = ||x - m_k||^2``,
    ``D12 = ||x2 - x1||^2``; since ``sum_k (pi_{k|c} - pi_k) = 0``, ``grad log p(c|x) . Delta = (1 / (T sigma^2))
    sum_k (pi_{k|c} - pi_k) (m_k - x1) . (x2 - x1)``. With ``pi_{k|c} = pi_k beta_ck / p(c|x)`` each piece
    needs K exponentials and two (K, C) products, not C K exponentials. Pairs i < j are computed in blocks and
    mirrored, so the result is exactly symmetric with a zero diagonal."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    T = int(n_pieces)
    if T < 1:
        raise ValueError(f"n_pieces must be a positive integer; got {n_pieces!r}")
    M = posterior.means_
    logbeta = posterior._logbeta                                       # (C, K)
    C, K = logbeta.shape
    s2 = posterior.sigma_ ** 2
    E = cdist(X, M, "sqeuclidean")                                     # (n, K)
    D2 = squareform(pdist(X, "sqeuclidean"))
    u = (np.arange(T) + 0.5) / T                                       # (T,)
    iu, ju = np.triu_indices(n, k=1)
    out = np.zeros(iu.size)
    block = max(1, _BLOCK_ENTRIES // (T * C * K))
    beta = np.exp(logbeta)                                             # (C, K)
    for start in range(0, iu.size, block):
        i = iu[start:start + block]
        j = ju[start:start + block]
        e1, e2, d12 = E[i], E[j], D2[i, j][:, None]
        sq = ((1 - u)[None, :, None] * e1[:, None, :] + u[None, :, None] * e2[:, None, :]
              - (u * (1 - u))[None, :, None] * d12[:, :, None])           # (b, T, K)
        G = -sq / (2.0 * s2)
        pi = np.exp(G - _logsumexp(G, axis=2))                        # pi_k (b, T, K)
        v = 0.5 * (e1 + d12 - e2) / (T * s2)                              # (b, K)
        piv = pi * v[:, None, :]
        p = pi @ beta.T                                                   # p(c|x) = sum_k pi_k beta_ck (b, T, C)
        a = piv @ beta.T                                                  # sum_k pi_k beta_ck v_k
        w = piv.sum(axis=2, keepdims=True)                                # sum_k pi_k v_k
        # s_c = sum_k (pi_{k|c} - pi_k) v_k with pi_{k|c} = pi_k beta_ck / p_c; a class with p_c = 0 adds nothing
        s = np.divide(a, p, out=np.zeros_like(a), where=p > 0) - w
        quad = np.sum(p * s * s, axis=2)                                  # (b, T)
        out[start:start + block] = np.sqrt(np.maximum(quad, 0.0)).sum(axis=1)
    D = np.zeros((n, n))
    D[iu, ju] = out
    D[ju, iu] = out
    return D


class SNeRV(UsesClassPosterior, Embedder):
    """Supervised NeRV (Sec. 5): NeRV on learning-metric distances of a class-posterior mixture.

    Parameters
    ----------
    n_components : display dimension.
    lam : NeRV's lambda (0.1 default; the paper runs 0.1 and 0.3).
    n_mixture, sigma_mixture : K and sigma of :class:`ClassPosterior` (``"auto"``: 3-fold CV).
    n_pieces : T, pieces of the straight-line path integral (10).
    anneal_rounds, cg_steps, cg_steps_final, anneal : NeRV's optimisation (:class:`cova.methods.nerv.NeRV`).
    init : ``"random"``, ``"pca"`` (PCA of the Euclidean data scaled to mean distance 1) or an array.
    max_samples : size guard (2,000).
    random_state : seed of the mixture (k-means, CV folds) and of NeRV's initialisation.
    posterior_max_iter : CG iterations of the mixture fit.

    ``fit(inputs)`` uses ``inputs.X`` and ``inputs.labels`` (only the rows of ``inputs.labelled`` when given), and
    ``inputs.class_posterior`` instead of fitting the mixture when present (:class:`UsesClassPosterior`).
    Sets ``embedding_``, ``posterior_``, ``n_neighbors_`` (k = round(0.5 n / K)), ``sigma_``, ``cost_``,
    ``distance_scale_`` and ``n_evaluations_`` (NeRV's).
    """

    required_inputs = ("X", "labels")
    semi_supervised = True

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "lam": UNIT,
        "n_mixture": [StrOptions({"auto"}), *POSITIVE_INT],
        "sigma_mixture": [StrOptions({"auto"}), *POSITIVE],
        "n_pieces": POSITIVE_INT,
        "anneal_rounds": NON_NEGATIVE_INT,
        "cg_steps": NON_NEGATIVE_INT,
        "cg_steps_final": NON_NEGATIVE_INT,
        "anneal": [StrOptions(set(ANNEAL))],
        "init": [StrOptions({"random", "pca"}), "array-like"],
        "max_samples": MAX_SAMPLES,
        "random_state": SEED_OR_NONE,
        "posterior_max_iter": POSITIVE_INT,
    }

    def __init__(self, n_components: int = 2, lam: float = 0.1, n_mixture: Any = "auto",
                 sigma_mixture: Any = "auto", n_pieces: int = 10, anneal_rounds: int = 10, cg_steps: int = 2,
                 cg_steps_final: int = 20, anneal: str = "paper", init: Any = "random",
                 max_samples: int = SNERV_MAX_SAMPLES, random_state: int | None = 0, posterior_max_iter: int = 200):
        self.n_components = n_components
        self.lam = lam
        self.n_mixture = n_mixture
        self.sigma_mixture = sigma_mixture
        self.n_pieces = n_pieces
        self.anneal_rounds = anneal_rounds
        self.cg_steps = cg_steps
        self.cg_steps_final = cg_steps_final
        self.anneal = anneal
        self.init = init
        self.max_samples = max_samples
        self.random_state = random_state
        self.posterior_max_iter = posterior_max_iter

    def fit(self, inputs: Any) -> "SNeRV":
        self._validate_params()
        X, labels, rows = supervised_arrays(inputs)
        if X.shape[0] < 4:
            raise ValueError(f"need a 2-D input with at least 4 rows; got shape {X.shape}")
        n = X.shape[0]
        check_size(n, self.max_samples, "SNeRV", "dense n x n learning-metric distances")
        post = self._class_posterior(inputs, X, labels, rows)
        D = learning_metric_distances(post, X, self.n_pieces)
        k = int(round(0.5 * n / post.n_components_))
        k = min(max(k, 2), n - 2)
        init = self.init
        if isinstance(init, str) and init == "pca":
            off = ~np.eye(n, dtype=bool)
            scale = float(squareform(pdist(X))[off].mean())
            Xc = (X - X.mean(axis=0)) / scale
            _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
            d = int(self.n_components)
            init = Xc @ Vt[:d].T
            if init.shape[1] < d:
                init = np.hstack([init, np.zeros((n, d - init.shape[1]))])
        nerv = NeRV(n_components=self.n_components, lam=self.lam, n_neighbors=k, anneal_rounds=self.anneal_rounds,
                    cg_steps=self.cg_steps, cg_steps_final=self.cg_steps_final, anneal=self.anneal, init=init,
                    metric="precomputed", max_samples=self.max_samples, random_state=self.random_state).fit(D)
        self.posterior_ = post
        self.n_neighbors_ = k
        self.embedding_ = nerv.embedding_
        self.sigma_ = nerv.sigma_
        self.cost_ = nerv.cost_
        self.distance_scale_ = nerv.distance_scale_
        self.n_evaluations_ = nerv.n_evaluations_
        return self
