"""Deep semi-supervised embedding (J. Weston, F. Ratle & R. Collobert, "Deep Learning via Semi-Supervised
Embedding", ICML 2008), a baseline of the COVA paper's existing-method figures (Figs. H.6, H.13, H.20).

Weston et al. train a multi-layer network f with an embedding loss on pairs of samples (their Sec. 2), the loss of
Hadsell, Chopra & LeCun's siamese networks (CVPR 2006):

    L(f_i, f_j, W_ij) = ||f_i - f_j||^2                     if W_ij = 1 (a similar pair: pulled together),
    L(f_i, f_j, W_ij) = max(0, m - ||f_i - f_j||)^2         if W_ij = 0 (a dissimilar pair: pushed to >= m),

with f_i = f(x_i) and margin m. Of their three ways to attach the loss to a deep network (Sec. 3: output layer,
internal layer, auxiliary layer) this is the output-layer one: f is the whole network and its output, in
R^n_components, is the embedding,

    f(x) = W_3^T relu(W_2^T relu(W_1^T s(x) + b_1) + b_2) + b_3        (d -> 256 -> 128 -> 2 by default),

s(x) = (x - mean) / std per feature, the mean and standard deviation taken over the rows ``fit`` sees (a feature
with std 0 is only centred). The pairs follow Weston et al.'s Algorithm 1 (EmbedNN: a step on a pair of neighbours,
W_ij = 1, then on a random pair, W_ij = 0) with the labels entering through W as well. Each epoch draws

* neighbour pairs, W_ij = 1: (i, j) for j among the ``n_neighbors`` nearest neighbours of i in X, every row, all
  n * k of them (test rows of a split contribute these: their features are known, their labels are not);
* same-class pairs, W_ij = 1: ``class_pairs`` random same-class partners of each labelled row;
* different-class pairs, W_ij = 0: ``class_pairs`` random other-class partners of each labelled row;
* random pairs, W_ij = 0: ``random_pairs`` random partners of each row; a drawn pair known to be similar (a row with
  itself, neighbours either way, two labelled rows of one class) is dropped.

[ours] Weston et al. add the embedding loss to a classifier's loss on the labelled rows; a 2-D display has no
classifier, so the labels enter only as W_ij of labelled pairs. Labels are read on the rows of ``inputs.labelled``
only (``semi_supervised``). The pairs of an epoch are shuffled and cut into mini-batches; the loss of a batch is the
mean of its pairs' L, minimised by Adam (Kingma & Ba 2015: beta_1 = 0.9, beta_2 = 0.999, eps = 1e-8). Weights are
He-normal, N(0, 2 / fan_in), biases 0. Time O(n_epochs * pairs * network); memory O(n * k + batch * width), never
an n x n array.

The network, its backward pass and Adam are written here in numpy rather than with a deep-learning framework: a
two-hidden-layer perceptron with a pair loss needs nothing more than a few matrix products, and PyTorch would add a
dependency of about 700 MB for this one baseline. The loss and its gradient are written for any float type and
checked against finite differences in float64; training runs in float32, which halved the time of an Adam step
(1,433 input features: 18 ms instead of 37 ms; 64 features: 6 ms instead of 10 ms; 512 rows, one thread), and the
trained weights are kept, and ``transform`` evaluates, in float64. One numpy Generator seeded by ``random_state``
draws the weights, the pairs and their order. OpenBLAS splits a matrix product differently with the number of
threads, which changes its rounding, and a few epochs of stochastic training amplify that to visibly different
embeddings; the matrix products therefore run on one BLAS thread, and a fit is bit-identical whatever the job's
thread count (for these small products one thread loses little: on our shared 2-core machine 2 threads were not faster).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ...affinity.knn import nearest_neighbors
from ...constraints import POSITIVE, POSITIVE_INT, SEED, integer
from ...errors import UserError
from ...inputs import Inputs
from ...progress import Progress
from ..base import Embedder, neighbours_below_samples, supervised_arrays

__all__ = ["Adam", "DeepEmbedding", "forward", "he_init", "pair_loss_and_grad"]


def he_init(sizes: list[int], rng: np.random.Generator) -> list[np.ndarray]:
    """The parameters [W_1, b_1, W_2, b_2, ...] of a perceptron with layer widths ``sizes`` (input first): W_t of
    shape (sizes[t-1], sizes[t]) drawn from N(0, 2 / fan_in) (He et al. 2015), b_t = 0."""
    params: list[np.ndarray] = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append(rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in))
        params.append(np.zeros(fan_out))
    return params


def forward(params: list[np.ndarray], X: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The network's output for the rows of X (ReLU after every layer but the last, which is linear) and the inputs
    of each layer (X, then the hidden activations), which the backward pass needs."""
    acts = [X]
    H = X
    n_layers = len(params) // 2
    for t in range(n_layers):
        A = H @ params[2 * t] + params[2 * t + 1]
        if t < n_layers - 1:
            H = np.maximum(A, 0.0)
            acts.append(H)
        else:
            H = A
    return H, acts


def _pair_terms(Fa: np.ndarray, Fb: np.ndarray, similar: np.ndarray,
                margin: float) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's L(f_a, f_b, W_ab) (module docstring) and its gradient with respect to f_a (that for f_b is the
    negative). At ||f_a - f_b|| = 0 a dissimilar pair's gradient is taken as 0 (a subgradient)."""
    U = Fa - Fb
    sq = np.einsum("ij,ij->i", U, U)
    dist = np.sqrt(sq)
    short = np.maximum(margin - dist, 0.0)
    loss = np.where(similar, sq, short * short)
    with np.errstate(divide="ignore", invalid="ignore"):
        push = np.where(dist > 0.0, -2.0 * short / dist, 0.0)
    scale = np.where(similar, 2.0, push)
    return loss, scale[:, None] * U


def pair_loss_and_grad(params: list[np.ndarray], X: np.ndarray, a: np.ndarray, b: np.ndarray, similar: np.ndarray,
                       margin: float) -> tuple[float, list[np.ndarray]]:
    """The mean over the pairs (a[p], b[p]) of L(f(x_a), f(x_b), W_ab), W_ab = ``similar[p]`` (module docstring),
    and its gradient with respect to every parameter (same layout as ``params``). X holds the network's inputs
    (already standardised); rows may repeat."""
    P = a.shape[0]
    rows = np.concatenate([a, b])
    F, acts = forward(params, X[rows])
    loss, G = _pair_terms(F[:P], F[P:], similar, margin)
    G /= P
    delta = np.concatenate([G, -G])
    grads: list[np.ndarray] = [np.empty(0)] * len(params)
    for t in range(len(params) // 2 - 1, -1, -1):
        H = acts[t]
        grads[2 * t] = H.T @ delta
        grads[2 * t + 1] = delta.sum(axis=0)
        if t > 0:
            delta = (delta @ params[2 * t].T) * (H > 0.0)
    return float(loss.mean()), grads


class Adam:
    """Adam (Kingma & Ba 2015, Algorithm 1) on a list of arrays, updated in place by :meth:`step`:
    m <- b1 m + (1 - b1) g, v <- b2 v + (1 - b2) g^2, theta <- theta - lr m_hat / (sqrt(v_hat) + eps) with
    m_hat = m / (1 - b1^t) and v_hat = v / (1 - b2^t) at step t = 1, 2, ..."""

    def __init__(self, params: list[np.ndarray], learning_rate: float = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8):
        self.params = params
        self.learning_rate = float(learning_rate)
        self.beta1 = float(beta1)
        self.beta2 = float(beta2)
        self.eps = float(eps)
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray]) -> None:
        """One update of every parameter with its gradient ``grads[i]``."""
        self.t += 1
        c1 = 1.0 - self.beta1 ** self.t
        c2 = 1.0 - self.beta2 ** self.t
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * (g * g)
            p -= self.learning_rate * (m / c1) / (np.sqrt(v / c2) + self.eps)


def _others(n: np.ndarray, rng: np.random.Generator, own: np.ndarray) -> np.ndarray:
    """For each entry, a uniform draw from 0 .. n - 1 other than ``own`` (requires n >= 2)."""
    r = rng.integers(0, n - 1)
    return r + (r >= own)


class DeepEmbedding(Embedder):
    """Deep semi-supervised embedding (Weston, Ratle & Collobert 2008; see the module docstring): a perceptron
    trained with Hadsell et al.'s margin loss on neighbour, class and random pairs.

    Parameters
    ----------
    n_components : display dimension (2).
    hidden_sizes : widths of the hidden ReLU layers ((256, 128)); a single int for one layer.
    n_neighbors : k of the neighbour pairs (10), the k nearest neighbours in X of every row.
    margin : m of the dissimilar pairs' loss (1.0).
    class_pairs : same-class and different-class partners drawn per labelled row and epoch (10 of each).
    random_pairs : random partners drawn per row and epoch (10).
    n_epochs : passes over the neighbour pairs (50). batch_size : pairs per Adam step (256).
    learning_rate : Adam's step size (1e-3).
    random_state : seed of the weights, the pairs and their order.

    ``fit(inputs)`` reads ``inputs.X`` and ``inputs.labels``, the labels only on the rows of ``inputs.labelled``
    when given (the method takes unlabelled samples). ``transform(X)`` applies the trained network to new rows.
    Attributes: ``embedding_``, ``params_`` (the network's [W_1, b_1, ...]), ``mean_``, ``scale_`` (the
    standardisation), ``loss_`` (the mean pair loss of each epoch), ``n_iter_`` (Adam steps).
    """

    required_inputs = ("X", "labels")
    semi_supervised = True

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "hidden_sizes": ["array-like", *POSITIVE_INT],
        "n_neighbors": POSITIVE_INT,
        "margin": POSITIVE,
        "class_pairs": [integer(0, None)],
        "random_pairs": [integer(0, None)],
        "n_epochs": POSITIVE_INT,
        "batch_size": POSITIVE_INT,
        "learning_rate": POSITIVE,
        "random_state": SEED,
    }

    _option_rules = (neighbours_below_samples(),)

    def __init__(self, n_components: int = 2, hidden_sizes: Any = (256, 128), n_neighbors: int = 10,
                 margin: float = 1.0, class_pairs: int = 10, random_pairs: int = 10, n_epochs: int = 50,
                 batch_size: int = 256, learning_rate: float = 1e-3, random_state: int = 0):
        self.n_components = n_components
        self.hidden_sizes = hidden_sizes
        self.n_neighbors = n_neighbors
        self.margin = margin
        self.class_pairs = class_pairs
        self.random_pairs = random_pairs
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.random_state = random_state

    def _hidden(self) -> list[int]:
        raw = self.hidden_sizes
        values = [raw] if np.ndim(raw) == 0 else list(np.asarray(raw, dtype=object).ravel())
        if not values or any(isinstance(h, (bool, np.bool_)) or not isinstance(h, (int, np.integer)) or h < 1
                             for h in values):
            raise UserError(f"hidden_sizes must be one positive int or a non-empty list of them; got {raw!r}")
        return [int(h) for h in values]

    def _fit(self, inputs: Inputs) -> "DeepEmbedding":
        self._validate_params()
        hidden = self._hidden()
        X_in = np.asarray(inputs.X, dtype=np.float64)
        if X_in.ndim == 2 and not np.all(np.isfinite(X_in)):
            bad = np.argwhere(~np.isfinite(X_in))
            raise UserError(f"X has {bad.shape[0]} NaN or infinite entries (the first at row {bad[0, 0]}, column "
                             f"{bad[0, 1]}); deep_embedding needs finite features")
        X, y, labelled = supervised_arrays(inputs)
        k = int(self.n_neighbors)  # < n: _option_rules
        lab = np.flatnonzero(labelled)
        if lab.size == 0:
            raise UserError("labelled: no row is labelled; deep_embedding needs labelled rows of at least two "
                             "classes")
        classes, codes = np.unique(y[lab], return_inverse=True)
        if classes.size < 2:
            raise UserError(f"labels: the {lab.size} labelled rows all have the label {classes[0].item()!r}; "
                             "deep_embedding needs labelled rows of at least two classes")

        rng = np.random.default_rng(int(self.random_state))
        self.mean_ = X.mean(axis=0)
        std = X.std(axis=0)
        self.scale_ = np.where(std > 0.0, std, 1.0)
        Xs = ((X - self.mean_) / self.scale_).astype(np.float32)
        ind, _ = nearest_neighbors(X, k)
        params = [p.astype(np.float32) for p in he_init([X.shape[1], *hidden, int(self.n_components)], rng)]
        opt = Adam(params, self.learning_rate)
        sampler = _PairSampler(ind, lab, codes, int(self.class_pairs), int(self.random_pairs))
        B = int(self.batch_size)
        margin = float(self.margin)
        losses = np.empty(int(self.n_epochs))
        with threadpool_limits(limits=1, user_api="blas"), \
                Progress("deep embedding Adam epochs", int(self.n_epochs)) as progress:  # thread-independent rounding
            for epoch in range(int(self.n_epochs)):
                a, b, similar = sampler.draw(rng)
                total = 0.0
                for s in range(0, a.size, B):
                    loss, grads = pair_loss_and_grad(params, Xs, a[s:s + B], b[s:s + B], similar[s:s + B], margin)
                    opt.step(grads)
                    total += loss * min(B, a.size - s)
                losses[epoch] = total / a.size
                progress.tick(loss=float(losses[epoch]))
        self.params_ = [p.astype(np.float64) for p in params]
        self.loss_ = losses
        self.n_iter_ = opt.t
        self.embedding_ = self.transform(X)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """The trained network applied to the rows of X (standardised as the training rows were)."""
        if not hasattr(self, "params_"):
            raise UserError("deep_embedding is not fitted yet; call fit first")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.mean_.shape[0]:
            raise UserError(f"X must have {self.mean_.shape[0]} columns, got shape {X.shape}")
        with threadpool_limits(limits=1, user_api="blas"):
            return np.ascontiguousarray(forward(self.params_, (X - self.mean_) / self.scale_)[0])


class _PairSampler:
    """Draws one epoch of pairs (module docstring): every neighbour pair, ``class_pairs`` same- and
    different-class partners per labelled row, ``random_pairs`` random partners per row, shuffled."""

    def __init__(self, ind: np.ndarray, lab: np.ndarray, codes: np.ndarray, class_pairs: int, random_pairs: int):
        n, k = ind.shape
        self.ind = ind
        self.near_a = np.repeat(np.arange(n), k)
        self.near_b = ind.ravel()
        order = np.argsort(codes, kind="stable")
        self.members = lab[order]                        # labelled rows grouped by class
        counts = np.bincount(codes)
        self.start = np.concatenate([[0], np.cumsum(counts)[:-1]])[codes[order]]
        self.count = counts[codes[order]]
        self.position = np.arange(lab.size) - self.start  # of each member within its class block
        self.code_of = np.full(n, -1)
        self.code_of[lab] = codes
        self.class_pairs = class_pairs
        self.random_pairs = random_pairs

    def draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.ind.shape[0]
        m = self.members.size
        c = self.class_pairs
        parts_a, parts_b, parts_w = [self.near_a], [self.near_b], [np.ones(self.near_a.size, dtype=bool)]
        if c > 0:
            own = np.repeat(np.arange(m), c)
            start, count = self.start[own], self.count[own]
            keep = count > 1                                  # a class of one has no same-class partner
            same = start[keep] + _others(count[keep], rng, self.position[own][keep])
            r = rng.integers(0, m - count)                    # a position outside the own class block
            other = r + np.where(r >= start, count, 0)
            parts_a += [self.members[own][keep], self.members[own]]
            parts_b += [self.members[same], self.members[other]]
            parts_w += [np.ones(same.size, dtype=bool), np.zeros(own.size, dtype=bool)]
        if self.random_pairs > 0:
            a = np.repeat(np.arange(n), self.random_pairs)
            b = _others(np.full(a.size, n), rng, a)
            near = (self.ind[a] == b[:, None]).any(axis=1) | (self.ind[b] == a[:, None]).any(axis=1)
            same_class = (self.code_of[a] >= 0) & (self.code_of[a] == self.code_of[b])
            keep = ~(near | same_class)
            parts_a.append(a[keep])
            parts_b.append(b[keep])
            parts_w.append(np.zeros(int(keep.sum()), dtype=bool))
        a, b, w = np.concatenate(parts_a), np.concatenate(parts_b), np.concatenate(parts_w)
        perm = rng.permutation(a.size)
        return a[perm], b[perm], w[perm]
