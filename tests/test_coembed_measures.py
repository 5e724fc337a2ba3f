"""Measures of a co-embedding (co-embedding paper Secs. 4.2-4.3): mean rank and its tie-robust variant against a
brute-force double loop, the pooled 1-NN error, the text classification error, and the score step on a saved
relation run."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold

from cova.datasets import Dataset
from cova.embedding import Embedding
from cova.inputs import build_inputs
from cova.methods import make_method
from cova.metrics.coembedding import mean_rank, mean_rank_ties, pooled_knn_error, text_classification_error
from cova.metrics.registry import METRICS
from cova.metrics.score import score_run


def _brute_mean_rank(R, Zx, Zy, top, ties):
    m, n = R.shape
    out = []
    for i in range(m):
        d = [float(np.sum((Zx[i] - Zy[j]) ** 2)) for j in range(n)]
        order = sorted(range(n), key=lambda j: (-R[i, j], j))
        if ties:
            kth = R[i, order[top - 1]]
            chosen = [j for j in range(n) if R[i, j] >= kth]
        else:
            chosen = order[:top]
        ranks = [1 + sum(1 for jj in range(n) if d[jj] < d[j]) for j in chosen]
        out.append(np.mean(ranks))
    return float(np.mean(out))


@pytest.mark.parametrize("seed", [0, 1])
def test_mean_ranks_equal_a_double_loop_with_ties(seed):
    rng = np.random.default_rng(seed)
    m, n = 23, 31
    R = rng.integers(0, 4, size=(m, n)).astype(float)   # many tied relations
    Zx = rng.integers(-3, 4, size=(m, 2)).astype(float)  # many tied distances
    Zy = rng.integers(-3, 4, size=(n, 2)).astype(float)
    for top in (1, 5, 10):
        assert mean_rank(R, Zx, Zy, top) == pytest.approx(_brute_mean_rank(R, Zx, Zy, top, False), abs=1e-12)
        assert mean_rank_ties(R, Zx, Zy, top) == pytest.approx(_brute_mean_rank(R, Zx, Zy, top, True), abs=1e-12)
    assert mean_rank(sp.csr_matrix(R), Zx, Zy) == mean_rank(R, Zx, Zy)
    assert mean_rank_ties(R, Zx, Zy) >= 5.5 and mean_rank(R, Zx, Zy) >= 5.5


def test_mean_rank_minimum_is_reached_by_a_perfect_embedding():
    rng = np.random.default_rng(2)
    Zx, Zy = rng.normal(size=(40, 3)), rng.normal(size=(60, 3))
    R = np.exp(-((Zx[:, None] - Zy[None]) ** 2).sum(-1))   # relation decreasing in the embedded distance
    assert mean_rank(R, Zx, Zy) == 5.5 and mean_rank_ties(R, Zx, Zy) == 5.5
    assert mean_rank(R, Zx, Zy, top=1) == 1.0
    shuffled = Zy[rng.permutation(60)]
    assert mean_rank(R, Zx, shuffled) > 15
    with pytest.raises(ValueError, match="top must be an integer in 1..60"):
        mean_rank(R, Zx, Zy, top=61)
    with pytest.raises(ValueError, match="R must be"):
        mean_rank(R.T, Zx, Zy)


def _brute_pooled_error(Z, y, n_folds, seed):
    wrong = 0
    for train, test in StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(Z, y):
        for i in test:
            d = ((Z[train] - Z[i]) ** 2).sum(axis=1)
            wrong += int(y[train][np.argmin(d)] != y[i])
    return wrong / len(y)


def test_pooled_knn_error():
    rng = np.random.default_rng(3)
    yx, yy = rng.integers(0, 3, 50), rng.integers(0, 3, 70)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    Zx, Zy = centres[yx] + rng.normal(0, 0.5, (50, 2)), centres[yy] + rng.normal(0, 0.5, (70, 2))
    assert pooled_knn_error(Zx, Zy, yx, yy) == 0.0
    Nx, Ny = rng.normal(size=(50, 2)), rng.normal(size=(70, 2))
    err = pooled_knn_error(Nx, Ny, yx, yy, random_state=4)
    assert err == pytest.approx(_brute_pooled_error(np.vstack([Nx, Ny]), np.concatenate([yx, yy]), 10, 4))
    assert err > 0.3
    with pytest.raises(ValueError, match="row_labels and column_labels"):
        pooled_knn_error(Zx, Zy, yx[:-1], yy)


def _corpus(rng):
    """3 classes × 20 documents over 30 words: words 10c..10c+9 occur (Poisson 2) only in class c's documents."""
    y = np.repeat(np.arange(3), 20)
    word_class = np.repeat(np.arange(3), 10)
    counts = rng.poisson(2.0, size=(60, 30)) * (y[:, None] == word_class[None])
    return sp.csr_matrix(counts.astype(float)), y, word_class


def test_text_classification_error_on_a_tiny_corpus():
    rng = np.random.default_rng(5)
    R, y, word_class = _corpus(rng)
    centres = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    Zx = centres[y] + rng.normal(0, 0.3, (60, 2))
    Zy = centres[word_class] + rng.normal(0, 0.3, (30, 2))
    err, n_sel = text_classification_error(R, Zx, Zy, y, n_words=3, n_folds=5)
    assert err == 0.0 and n_sel == 9
    # every class centre's nearest words are those of class 0 only: class 0 against the rest is all that is left
    Zy_bad = np.where(word_class[:, None] == 0, np.array([[2.0, 2.0]]), np.array([[50.0, 50.0]]))
    Zy_bad = Zy_bad + rng.normal(0, 0.01, Zy_bad.shape)
    err_bad, n_bad = text_classification_error(R, Zx, Zy_bad, y, n_words=3, n_folds=5)
    assert n_bad <= 9 and set(range(10)) >= set(np.argsort(((Zy_bad - [2.0, 2.0]) ** 2).sum(1))[:n_bad])
    assert err_bad >= 0.3  # classes 1 and 2 share the all-zero profile
    err_all, n_all = text_classification_error(R, Zx, Zy, y, n_words=30, n_folds=5)
    assert n_all == 30 and err_all == 0.0
    with pytest.raises(ValueError, match="n_words must be an integer in 1..30"):
        text_classification_error(R, Zx, Zy, y, n_words=0)


# ---------------------------------------------------------------------------------------------------------------
# registry and score step


def test_relation_measures_are_registered_once_per_run():
    assert METRICS["mean_rank"].keys == ("mean_rank", "mean_rank_ties") and METRICS["mean_rank"].scope == "all"
    assert METRICS["pooled_1nn_error"].needs == {"Z", "columns", "labels", "column_labels"}


def _point_run(tmp_path, ok=True):
    rng = np.random.default_rng(6)
    labels = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 2)) + 6.0 * np.eye(3)[labels][:, :2]
    ds = Dataset(X, labels, ["a", "b", "c"])
    ds.save(tmp_path / "d.npz")
    inputs = build_inputs(ds, {"relation": {"source": "points", "groups": {"shared": [0, 1, 2]}}}, seed=0)
    inputs.save(tmp_path / "i.npz", with_labels=True)
    ca = make_method("ca", {"n_components": 2}, seed=0).fit(inputs)
    emb = Embedding(Z=ca.embedding_, extras={"column_embedding": ca.column_embedding_}, method="ca")
    if not ok:
        emb = Embedding(Z=np.full((30, 2), np.nan), status="degenerate", method="ca")
    emb.save(tmp_path / "e.npz")
    return inputs, ca


def test_score_step_writes_the_relation_keys(tmp_path):
    from cova.cli import main

    inputs, ca = _point_run(tmp_path)
    assert main(["score", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz"),
                 "--embedding", str(tmp_path / "e.npz"), "--out", str(tmp_path / "s.json")]) == 0
    record = json.loads((tmp_path / "s.json").read_text())
    rel = inputs.relation
    assert record["mean_rank"] == pytest.approx(mean_rank(rel.matrix, ca.embedding_, ca.column_embedding_))
    assert record["mean_rank_ties"] >= 5.5
    assert record["pooled_1nn_error"] == pytest.approx(
        pooled_knn_error(ca.embedding_, ca.column_embedding_, rel.row_labels, rel.column_labels))
    assert record["pooled_1nn_error"] < 0.1  # three well separated co-clusters


def test_score_step_of_a_degenerate_relation_run_writes_nan(tmp_path):
    from cova.embedding import Embedding as E
    from cova.inputs import Inputs

    _point_run(tmp_path, ok=False)
    scores = score_run(Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz"), E.load(tmp_path / "e.npz"))
    assert {"mean_rank", "mean_rank_ties", "pooled_1nn_error"} <= set(scores)
    assert np.isnan(scores["mean_rank"]) and np.isnan(scores["pooled_1nn_error"])
