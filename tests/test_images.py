"""Image-cohort protocols of COVA Sec. 4.2: random prototypes (Fig. 4), predicted cohorts (Fig. 5),
train/test splits with out-of-sample transform (Fig. 7, H.10), and the Places2 fallback."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cova.cli import main
from cova.cohorts.prototypes import make_prototypes, randomize_prototypes
from cova.config import resolve_fallbacks
from cova.datasets.base import Dataset
from cova.features import predict_cohorts
from cova.inputs import Inputs, build_inputs
from cova.methods import make_method
from cova.metrics import s_n, s_s

PROTOCOL = {"weights": {"kind": "gaussian_perplexity", "perplexity": 8},
            "confidence": {"kind": "eq11", "lambda_p": 0.01},
            "prototypes": {"kind": "tsne", "proximity": "graph", "rho": 3}}


def blobs(c: int = 4, n: int = 30, d: int = 6, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 4, (c, d))
    X = np.vstack([centres[j] + rng.normal(0, 1, (n, d)) for j in range(c)])
    return Dataset(X, np.repeat(np.arange(c), n), [f"class {j}" for j in range(c)], meta={"source": "test blobs"})


# ---------------------------------------------------------------------------------------------- random prototypes

@pytest.mark.parametrize("fraction", [0.0, 0.1, 1 / 3, 0.5, 0.95, 1.0])
def test_random_fraction_replaces_exactly_round_fc_rows_inside_the_box(fraction):
    rng = np.random.default_rng(1)
    P = rng.normal(size=(12, 2))
    out = randomize_prototypes(P, fraction, random_state=3)
    changed = np.flatnonzero(np.any(out != P, axis=1))
    assert changed.size == int(np.floor(fraction * 12 + 0.5))
    lo, hi = P.min(axis=0), P.max(axis=0)
    assert np.all(out[changed] >= lo) and np.all(out[changed] <= hi)
    assert np.array_equal(np.delete(out, changed, axis=0), np.delete(P, changed, axis=0))
    assert np.array_equal(out, randomize_prototypes(P, fraction, random_state=3))  # seeded
    if changed.size:
        assert not np.array_equal(out, randomize_prototypes(P, fraction, random_state=4))


def test_random_fraction_through_make_prototypes_and_validation():
    y = np.repeat(np.arange(6), 3)
    ring = make_prototypes("ring", labels=y, rho=3.0)
    rand = make_prototypes("ring", labels=y, rho=3.0, random_fraction=0.5, random_state=0)
    assert np.sum(np.any(rand != ring, axis=1)) == 3
    with pytest.raises(ValueError, match="random_fraction"):
        randomize_prototypes(ring, 1.5)


# ---------------------------------------------------------------------------------------------- predicted cohorts

def test_predicted_labels_equal_brute_force_1nn():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(90, 5))
    y = rng.permutation(np.repeat(np.arange(3), 30))
    pred, labelled = predict_cohorts(X, y, 4, seed=7)
    assert np.array_equal(np.bincount(y[labelled], minlength=3), [4, 4, 4])
    assert np.array_equal(pred[labelled], y[labelled])
    L = np.flatnonzero(labelled)
    for i in np.flatnonzero(~labelled):
        d = np.linalg.norm(X[L] - X[i], axis=1)
        assert pred[i] == y[L[np.argmin(d)]]
    assert np.mean(pred != y) > 0  # random labels: 1-NN must make mistakes (the test can fail)
    again, lab2 = predict_cohorts(X, y, 4, seed=7)
    assert np.array_equal(again, pred) and np.array_equal(lab2, labelled)


def test_predicted_inputs_carry_gold_labels_and_prototypes():
    ds = blobs(c=5, n=24)
    spec = dict(PROTOCOL, cohorts={"kind": "predicted", "labelled_per_class": 6})
    inp = build_inputs(ds, spec, seed=0)
    assert np.array_equal(inp.gold_labels, ds.labels)
    assert inp.labelled.sum() == 30
    assert inp.gold_prototypes.shape == inp.prototypes.shape == (5, 2)
    assert not np.allclose(inp.gold_prototypes, inp.prototypes)  # input Υ use the labelled samples only
    assert inp.R.shape == (ds.n_samples, 5)


# ---------------------------------------------------------------------------------------------- train/test split

@pytest.fixture(scope="module")
def split_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("split")
    ds = blobs(c=4, n=30, d=6)
    ds.save(tmp / "data.npz")
    spec = dict(PROTOCOL, features={"kind": "pca", "n_components": 4}, split={"train_fraction": 0.4})
    inp = build_inputs(ds, spec, seed=0)
    inp.save(tmp / "inputs.npz", with_X=True)
    params = {"alpha": 0.9, "n_sample_prototypes": 1000, "inner_iter": 5, "cycles": 2}
    assert main(["embed", "--dataset", str(tmp / "data.npz"), "--inputs", str(tmp / "inputs.npz"), "--method",
                 "cova_p1", "--params", json.dumps(params), "--out", str(tmp / "emb.npz")]) == 0
    assert main(["score", "--dataset", str(tmp / "data.npz"), "--inputs", str(tmp / "inputs.npz"), "--embedding",
                 str(tmp / "emb.npz"), "--out", str(tmp / "scores.json")]) == 0
    with np.load(tmp / "emb.npz") as f:
        Z = f["Z"]
    return ds, Inputs.load(tmp / "data.npz", tmp / "inputs.npz"), params, Z, \
        json.loads((tmp / "scores.json").read_text()), tmp


def test_split_is_stratified_and_builds_inputs_from_training_rows(split_run):
    from sklearn.decomposition import PCA

    ds, inp, _, _, _, _ = split_run
    train = inp.train
    assert np.array_equal(np.bincount(ds.labels[train]), [12, 12, 12, 12])
    assert inp.W.shape == (48, 48) and inp.R.shape == (48, 4)
    expected = PCA(n_components=4, svd_solver="full").fit(ds.X[train]).transform(ds.X)
    assert np.allclose(inp.X, expected)  # PCA fitted on the training rows only
    fit = inp.training()
    assert fit.X.shape == (48, 4) and np.array_equal(fit.labels, ds.labels[train])


def test_split_fits_on_train_and_maps_test_rows_by_transform(split_run):
    _, inp, params, Z, _, _ = split_run
    est = make_method("cova_p1", params, seed=0).fit(inp.training())
    assert np.allclose(Z[inp.train], est.embedding_)
    assert np.allclose(Z[~inp.train], est.transform(inp.X[~inp.train]))
    assert np.allclose(est.transform(inp.X[inp.train]), est.embedding_)  # out-of-sample map = fitted map


def test_split_scores_train_and_test_rows_separately(split_run):
    _, inp, _, Z, scores, _ = split_run
    te, tr = ~inp.train, inp.train
    assert scores["n_train"] == 48 and scores["n_test"] == 72
    assert scores["s_s_test"] == pytest.approx(s_s(Z[te], inp.labels[te]))
    assert scores["s_s"] == pytest.approx(s_s(Z[tr], inp.labels[tr]))
    assert scores["s_n_test"] == pytest.approx(s_n(inp.X[te], Z[te], inp.labels[te]))
    assert 0.0 <= scores["s_c_r_orig"] <= 1.0 and 0.0 <= scores["s_c_r_orig_test"] <= 1.0
    # not the score of all rows together (the κ̄ of S_n depends on the evaluated set)
    assert scores["s_n_test"] != pytest.approx(s_n(inp.X, Z, inp.labels), abs=1e-12)


def test_split_rejects_methods_without_transform(split_run, caplog):
    _, _, _, _, _, tmp = split_run
    assert main(["embed", "--dataset", str(tmp / "data.npz"), "--inputs", str(tmp / "inputs.npz"), "--method",
                 "mds", "--params", "{}", "--out", str(tmp / "mds.npz")]) == 1
    assert "has no transform for out-of-sample samples" in caplog.text and "Traceback" not in caplog.text


# ---------------------------------------------------------------------------------------------- Places2 fallback

def test_missing_places2_features_fall_back_to_the_stand_in(tmp_path):
    config = {"seed": 0, "datasets": {
        "places2": {"loader": "places2", "params": {"features": str(tmp_path / "features.npz")},
                    "fallback": "stand"},
        "stand": {"loader": "places_shaped", "description": "stand-in"}},
        "inputs": {}, "methods": {},
        "runs": [{"dataset": "places2", "inputs": "i", "methods": ["m"]}],
        "paper": {"experiments": {"e": {"paper": "cova", "renderer": "img_sweep",
                                        "runs": [{"dataset": "places2", "inputs": "i", "methods": ["m"]}]}}}}
    resolved, notices = resolve_fallbacks(config)
    assert "places2" not in resolved["datasets"] and resolved["runs"][0]["dataset"] == "stand"
    assert resolved["paper"]["experiments"]["e"]["runs"][0]["dataset"] == "stand"
    assert len(notices) == 1 and "not found" in notices[0]
    assert config["runs"][0]["dataset"] == "places2"  # the input config is not modified
    (tmp_path / "features.npz").write_bytes(b"")
    assert resolve_fallbacks(config) == (config, [])


def test_pca_on_a_tiny_training_split_is_capped_at_its_rows():
    ds = blobs(c=4, n=30, d=40)
    spec = dict(PROTOCOL, features={"kind": "pca", "n_components": 30}, split={"train_fraction": 0.1})
    inp = build_inputs(ds, spec, seed=0)
    assert inp.train.sum() == 12 and inp.X.shape == (120, 12)
    assert "capped" in inp.spec["features_used"]
