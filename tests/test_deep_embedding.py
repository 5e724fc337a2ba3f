"""Deep semi-supervised embedding (Weston, Ratle & Collobert 2008): the pair loss's gradient, Adam, the pairs drawn,
hidden test labels, ``transform``, class separation on the digits and determinism."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from threadpoolctl import threadpool_info, threadpool_limits

from cova.inputs import Inputs, stratified_fold
from cova.methods import METHODS, make_method
from cova.methods.baselines.deep_embedding import (
    Adam,
    DeepEmbedding,
    _PairSampler,
    forward,
    he_init,
    pair_loss_and_grad,
)
from cova.metrics.retrieval import heldout_knn_error

FAST = {"hidden_sizes": (32, 16), "n_epochs": 3, "class_pairs": 5, "random_pairs": 5}


def _blobs(c: int = 3, n: int = 25, d: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(c, d))
    return np.vstack([centres[j] + rng.normal(size=(n, d)) for j in range(c)]), np.repeat(np.arange(c), n)


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    X, y = load_digits(return_X_y=True)
    return X[:600], y[:600]


def test_registered():
    assert METHODS["deep_embedding"] is DeepEmbedding and DeepEmbedding.semi_supervised
    assert isinstance(make_method("deep_embedding", seed=4), DeepEmbedding)
    assert make_method("deep_embedding", seed=4).random_state == 4


def test_gradient_matches_central_differences():
    """Every weight and bias of a small float64 network, with similar pairs, dissimilar pairs inside the margin
    and dissimilar pairs beyond it (which contribute nothing), and a row used in several pairs."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(9, 5))
    params = he_init([5, 7, 6, 2], rng)
    a = np.array([0, 1, 2, 3, 4, 5, 6, 7, 0, 8])
    b = np.array([1, 2, 3, 4, 5, 6, 7, 8, 5, 0])
    similar = np.array([1, 0, 1, 0, 0, 1, 0, 0, 1, 0], dtype=bool)
    F = forward(params, X)[0]
    dist = np.linalg.norm(F[a] - F[b], axis=1)
    margin = float(np.median(dist[~similar]))
    assert np.any(dist[~similar] < margin) and np.any(dist[~similar] > margin)  # both sides of the hinge
    loss, grads = pair_loss_and_grad(params, X, a, b, similar, margin)
    expected = np.where(similar, dist ** 2, np.maximum(margin - dist, 0.0) ** 2).mean()
    assert loss == pytest.approx(expected, rel=1e-12)
    h = 1e-6
    for P, G in zip(params, grads):
        assert G.shape == P.shape
        num = np.zeros_like(P)
        for idx in np.ndindex(P.shape):
            old = P[idx]
            P[idx] = old + h
            up = pair_loss_and_grad(params, X, a, b, similar, margin)[0]
            P[idx] = old - h
            down = pair_loss_and_grad(params, X, a, b, similar, margin)[0]
            P[idx] = old
            num[idx] = (up - down) / (2 * h)
        np.testing.assert_allclose(G, num, rtol=1e-6, atol=1e-8)


def test_adam_steps_match_a_hand_computation():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    p0 = np.array([[0.5, -1.0], [2.0, 0.0]])
    g1 = np.array([[0.2, -3.0], [1e-3, 0.0]])
    g2 = np.array([[-0.1, 1.0], [2.0, 0.5]])
    params = [p0.copy()]
    opt = Adam(params, learning_rate=lr)
    opt.step([g1])
    # step 1: m_hat = g, v_hat = g^2, so the step is lr * g / (|g| + eps)
    p1 = p0 - lr * g1 / (np.abs(g1) + eps)
    np.testing.assert_allclose(params[0], p1, rtol=0, atol=1e-15)
    opt.step([g2])
    m = (1 - b1) * (b1 * g1 + g2)
    v = (1 - b2) * (b2 * g1 ** 2 + g2 ** 2)
    p2 = p1 - lr * (m / (1 - b1 ** 2)) / (np.sqrt(v / (1 - b2 ** 2)) + eps)
    np.testing.assert_allclose(params[0], p2, rtol=0, atol=1e-15)
    assert opt.t == 2


def test_pairs_follow_the_graph_and_the_visible_labels():
    X, y = _blobs(c=3, n=20)
    labelled = np.arange(60) % 4 != 0
    y_seen = np.where(labelled, y, -1)
    lab = np.flatnonzero(labelled)
    _, codes = np.unique(y[lab], return_inverse=True)
    from cova.affinity.knn import nearest_neighbors
    ind, _ = nearest_neighbors(X, 5)
    sampler = _PairSampler(ind, lab, codes, class_pairs=4, random_pairs=3)
    a, b, similar = sampler.draw(np.random.default_rng(0))
    assert np.all(a != b)
    neighbours = (ind[a] == b[:, None]).any(axis=1) | (ind[b] == a[:, None]).any(axis=1)
    both_labelled = labelled[a] & labelled[b]
    same = both_labelled & (y_seen[a] == y_seen[b])
    # every neighbour pair (i, j), j among the 5 nearest of i, test rows included, and 4 same-class partners per
    # labelled row: nothing else is pulled together
    near = similar & (ind[a] == b[:, None]).any(axis=1)
    assert set(zip(a[near], b[near])) == {(i, j) for i in range(60) for j in ind[i]}
    assert np.all(neighbours[similar] | same[similar])
    assert np.sum(similar) == 60 * 5 + 4 * lab.size
    # dissimilar pairs: 4 different-class partners per labelled row, then random pairs that are neither
    # neighbours nor a labelled same-class pair
    assert not np.any(neighbours[~similar] | same[~similar])
    cross = ~similar & both_labelled & (y_seen[a] != y_seen[b])
    assert np.sum(cross) >= 4 * lab.size
    assert np.sum(~similar) <= 4 * lab.size + 3 * 60


def test_hidden_test_labels_are_never_read_and_transform_matches():
    X, y = _blobs()
    train = stratified_fold(y, 4, 1, seed=0)
    inputs = Inputs(X=X, labels=y, labelled=train)
    scrambled = Inputs(X=X, labels=np.where(train, y, (y + 1) % 3), labelled=train)
    hidden = Inputs(X=X, labels=np.where(train, y, -1), labelled=train)
    est = DeepEmbedding(**FAST).fit(inputs)
    for other in (scrambled, hidden):
        np.testing.assert_array_equal(DeepEmbedding(**FAST).fit(other).embedding_, est.embedding_)
    # with the test labels visible the pairs (and so the embedding) differ: the mask is what hides them
    assert not np.array_equal(DeepEmbedding(**FAST).fit(Inputs(X=X, labels=y)).embedding_, est.embedding_)
    np.testing.assert_array_equal(est.transform(X), est.embedding_)
    assert est.embedding_.shape == (75, 2) and est.embedding_.dtype == np.float64
    assert est.loss_.shape == (3,) and est.n_iter_ > 0
    # other row counts take other BLAS kernels: equal up to rounding
    np.testing.assert_allclose(est.transform(X[10:20]), est.embedding_[10:20], rtol=1e-12, atol=1e-12)


def test_short_training_separates_the_digits(digits):
    """600 digits, a quarter held out with hidden labels: 5-NN error of the held-out rows in the display, after 10
    epochs of a small network, well below the untrained network's."""
    X, y = digits
    train = stratified_fold(y, 4, 0, seed=0)
    params = {"hidden_sizes": (64, 32), "n_epochs": 10, "class_pairs": 5, "random_pairs": 5}
    est = DeepEmbedding(**params).fit(Inputs(X=X, labels=y, labelled=train))
    untrained = forward(he_init([64, 64, 32, 2], np.random.default_rng(0)), (X - est.mean_) / est.scale_)[0]
    before = heldout_knn_error(untrained, y, train)
    after = heldout_knn_error(est.embedding_, y, train)
    assert before > 0.5 and after < 0.1, (before, after)  # 0.71 and 0.04 when written
    assert est.loss_[-1] < est.loss_[0]


def test_deterministic_and_thread_independent():
    X, y = _blobs(n=30)
    inputs = Inputs(X=X, labels=y)
    a = DeepEmbedding(**FAST, random_state=5).fit(inputs).embedding_
    np.testing.assert_array_equal(DeepEmbedding(**FAST, random_state=5).fit(inputs).embedding_, a)
    assert not np.array_equal(DeepEmbedding(**FAST, random_state=6).fit(inputs).embedding_, a)
    # the default widths, where OpenBLAS would split the products across threads (and round differently)
    wide = {**FAST, "hidden_sizes": (256, 128), "n_epochs": 2}
    with threadpool_limits(limits=1):
        one = DeepEmbedding(**wide).fit(inputs).embedding_
    with threadpool_limits(limits=2):
        two = DeepEmbedding(**wide).fit(inputs).embedding_
    np.testing.assert_array_equal(one, two)


def test_training_runs_on_one_blas_thread(monkeypatch):
    """OpenBLAS rounds a product differently with 1 and 2 threads (digits, default network: parameters differing by
    1e-9 after 2 epochs, embeddings by 0.1 after 3), so the training steps must see a single BLAS thread."""
    import cova.methods.baselines.deep_embedding as module

    seen: set[int] = set()
    original = module.pair_loss_and_grad

    def spy(*args, **kwargs):
        seen.update(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return original(*args, **kwargs)

    monkeypatch.setattr(module, "pair_loss_and_grad", spy)
    X, y = _blobs()
    with threadpool_limits(limits=2):
        DeepEmbedding(**FAST).fit(Inputs(X=X, labels=y))
    assert seen == {1}


def test_one_hidden_layer_and_list_sizes():
    X, y = _blobs()
    inputs = Inputs(X=X, labels=y)
    est = DeepEmbedding(**{**FAST, "hidden_sizes": 8}).fit(inputs)
    assert [p.shape for p in est.params_] == [(6, 8), (8,), (8, 2), (2,)]
    as_list = DeepEmbedding(**{**FAST, "hidden_sizes": [32, 16]}).fit(inputs).embedding_
    np.testing.assert_array_equal(as_list, DeepEmbedding(**FAST).fit(inputs).embedding_)


@pytest.mark.parametrize("case, message", [
    ("nan", r"X has 1 NaN or infinite entries \(the first at row 3, column 2\)"),
    ("unlabelled", r"labelled: no row is labelled"),
    ("one_class", r"labels: the 25 labelled rows all have the label 0"),
    ("neighbors", r"n_neighbors .*: 75 is not allowed: the inputs' X has 75 rows, .*allowed: at most 74"),
    ("hidden", r"hidden_sizes must be one positive int or a non-empty list of them; got \[16, 0\]"),
    ("unfitted", r"not fitted yet"),
])
def test_clear_errors(case, message):
    X, y = _blobs()
    params: dict = dict(FAST)
    inputs = Inputs(X=X, labels=y)
    if case == "nan":
        X = X.copy()
        X[3, 2] = np.nan
        inputs = Inputs(X=X, labels=y)
    elif case == "unlabelled":
        inputs = Inputs(X=X, labels=y, labelled=np.zeros(75, dtype=bool))
    elif case == "one_class":
        inputs = Inputs(X=X, labels=y, labelled=y == 0)
    elif case == "neighbors":
        params["n_neighbors"] = 75
    elif case == "hidden":
        params["hidden_sizes"] = [16, 0]
    with pytest.raises(ValueError, match=message):
        if case == "unfitted":
            DeepEmbedding().transform(X)
        else:
            DeepEmbedding(**params).fit(inputs)
