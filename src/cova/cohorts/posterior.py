"""A class-posterior model and its learning metric (Venna et al., JMLR 11:451-490, 2010, Sec. 5, Eqs. 9-10; the
choices the paper leaves open are marked [ours] and described in :mod:`cova.methods.nerv.snerv`).

:class:`ClassPosterior` is the discriminative mixture of labelled Gaussians of Eq. 10, p(c|x) = Σ_k β_ck g_k(x) /
Σ_k g_k(x); :func:`learning_metric_distances` are the straight-line path integrals of its Fisher metric
(:func:`fisher_quadratic_form`). SNeRV embeds those distances, PE the posterior itself (the NeRV paper gives PE
"the same class-posterior estimate as SNeRV"), and the workflow fits one model per inputs block and stores it as
plain arrays (:func:`posterior_arrays`, :func:`posterior_from_arrays`, :func:`training_fingerprint`)."""

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

from ..affinity.distances import squared_distances
from ..constraints import POSITIVE, POSITIVE_INT, SEED_OR_NONE, StrOptions, integer
from ..errors import UserError
from ..progress import Progress

__all__ = ["ClassPosterior", "posterior_arrays", "posterior_from_arrays", "training_fingerprint",
           "fisher_quadratic_form", "learning_metric_distances"]

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
        (:func:`cova.affinity.distances.squared_distances`), the costly part of an evaluation at d ~ 1,000.

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
        with Progress(f"class posterior ({K} mixture components per class) conjugate gradient",
                      int(self.max_iter)) as progress:
            res = minimize(self.loss_and_grad, theta0, args=(X, Y, float(sigma), K, np.einsum("ij,ij->i", X, X)),
                           jac=True, method="CG", callback=progress.callback,
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
            raise UserError(f"X must be (n, d) and y (n,); got {X.shape} and {y.shape}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        C = len(self.classes_)
        if C < 2:
            raise UserError("ClassPosterior needs at least two classes")
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
            raise UserError(f"sigma must be positive; got {self.sigma!r}")
        self.cv_scores_: dict[tuple[int, float], float] = {}
        if len(Ks) * len(sigmas) > 1:
            folds = int(min(self.n_folds, np.bincount(codes).min()))
            if folds < 2:
                raise UserError("'auto' needs at least 2 samples per class for the CV folds")
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
        raise UserError(f"n_pieces must be a positive integer; got {n_pieces!r}")
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
