"""FGSM adversarial MNIST (featMAP Fig. 6): the MLP input gradient against finite differences, the FGSM step,
the attacked data set (accuracies, meta, determinism, round trip) and the parameter checks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.neural_network import MLPClassifier

from cova.datasets import Dataset, load, raw_source
from cova.datasets.adversarial import fgsm, mlp_input_gradient, train_classifier

MNIST = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mnist"
SMALL = {"epsilon": 0.3, "n_train": 1000, "hidden": [64], "seed": 0, "max_iter": 30}


def need_mnist() -> Path:
    for f in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        if not (MNIST / f).is_file():
            pytest.skip(f"raw file {MNIST / f} absent")
    return MNIST


@pytest.fixture(scope="module")
def adv():
    return load("mnist_fgsm", raw_dir=need_mnist(), **SMALL)


@pytest.fixture(scope="module")
def clean():
    return load("mnist", raw_dir=need_mnist())


def finite_difference_gradient(clf: MLPClassifier, X: np.ndarray, y: np.ndarray, cols: np.ndarray,
                               h: float = 1e-6) -> np.ndarray:
    """Central differences of -log p_y(x) computed by scikit-learn's own forward pass (predict_proba)."""
    cls = np.searchsorted(clf.classes_, y)
    rows = np.arange(len(y))
    out = np.empty((len(y), len(cols)))
    for k, j in enumerate(cols):
        up, down = X.copy(), X.copy()
        up[:, j] += h
        down[:, j] -= h
        out[:, k] = (-np.log(clf.predict_proba(up)[rows, cls]) + np.log(clf.predict_proba(down)[rows, cls])) / (2 * h)
    return out


# ------------------------------------------------------------------------------------------- input gradient
def test_input_gradient_matches_finite_differences_two_hidden_layers():
    rng = np.random.default_rng(1)
    X = rng.random((60, 12))
    y = (X[:, 0] + X[:, 1] > X[:, 2] + 0.5).astype(int) + (X[:, 3] > 0.7)  # three classes
    clf = train_classifier(X, y, hidden=(7, 5), seed=0, max_iter=300)
    assert len(clf.coefs_) == 3 and clf.out_activation_ == "softmax"
    X_eval = rng.random((8, 12))
    y_eval = rng.integers(0, 3, 8)
    grad = mlp_input_gradient(clf, X_eval, y_eval)
    fd = finite_difference_gradient(clf, X_eval, y_eval, np.arange(12))
    assert np.abs(grad).max() > 1e-3  # not a trivially zero gradient
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-8)
    wrong = mlp_input_gradient(clf, X_eval, (y_eval + 1) % 3)
    assert not np.allclose(wrong, grad, atol=1e-6)  # the gradient depends on the label


def test_input_gradient_on_mnist_classifier(adv, clean):
    heldout = np.array(adv.meta["heldout_indices"])
    train = np.setdiff1d(np.arange(clean.n_samples), heldout)
    clf = train_classifier(clean.X[train], clean.labels[train], hidden=SMALL["hidden"], seed=SMALL["seed"],
                           max_iter=SMALL["max_iter"])
    rows = heldout[:4]
    X, y = clean.X[rows], clean.labels[rows]
    cols = np.array([100, 210, 300, 378, 406, 490, 600, 700])
    grad = mlp_input_gradient(clf, X, y)
    assert grad.shape == (4, 784)
    np.testing.assert_allclose(grad[:, cols], finite_difference_gradient(clf, X, y, cols), rtol=1e-5, atol=1e-8)


def test_input_gradient_refuses_other_networks():
    rng = np.random.default_rng(0)
    X, y = rng.random((30, 4)), np.arange(30) % 2
    binary = train_classifier(X, y, hidden=(3,), seed=0, max_iter=20)  # two classes: logistic output
    with pytest.raises(ValueError, match="softmax"):
        mlp_input_gradient(binary, X, y)
    three = train_classifier(X, np.arange(30) % 3, hidden=(3,), seed=0, max_iter=20)
    with pytest.raises(ValueError, match="labels of the classifier"):
        mlp_input_gradient(three, X[:2], np.array([0, 7]))


# ---------------------------------------------------------------------------------------------------- FGSM
def test_fgsm_step_is_plus_minus_epsilon_and_clipped():
    rng = np.random.default_rng(3)
    X = rng.random((50, 40))
    X[:, :5], X[:, 5:10] = 0.0, 1.0
    g = rng.normal(size=X.shape)
    g[:, 10:13] = 0.0
    eps = 0.3
    Xa = fgsm(X, g, eps)
    assert Xa.min() >= 0.0 and Xa.max() <= 1.0
    step = eps * np.sign(g)
    free = (g != 0) & (X + step > 0) & (X + step < 1)
    assert free.mean() > 0.3
    np.testing.assert_allclose((Xa - X)[free], step[free], rtol=0, atol=1e-12)
    clipped = (g != 0) & ~free
    assert clipped.any()
    np.testing.assert_array_equal(Xa[clipped], np.where(g[clipped] > 0, 1.0, 0.0))
    np.testing.assert_array_equal(Xa[g == 0], X[g == 0])
    with pytest.raises(ValueError, match="gradient must have the shape"):
        fgsm(X, g[:, :3], eps)


# ----------------------------------------------------------------------------------------------- data set
def test_attack_lowers_accuracy_and_meta_is_consistent(adv, clean):
    m = adv.meta
    src, heldout = np.array(m["source_indices"]), np.array(m["heldout_indices"])
    adv_labels = np.array(m["adversarial_labels"])
    assert adv.X.shape == (len(src), 784) and adv.label_names == [str(j) for j in range(10)]
    assert m["n_heldout"] == len(heldout) == clean.n_samples - SMALL["n_train"]
    assert np.all(np.isin(src, heldout)) and np.all(np.diff(src) > 0)
    np.testing.assert_array_equal(adv.labels, clean.labels[src])  # the TRUE labels
    # stratified training part: every digit's share of the training images within one image of its share overall
    train = np.setdiff1d(np.arange(clean.n_samples), heldout)
    share = np.bincount(clean.labels, minlength=10) * SMALL["n_train"] / clean.n_samples
    assert np.all(np.abs(np.bincount(clean.labels[train], minlength=10) - share) <= 1)
    # the classifier the loader used, rebuilt: it gets every attacked image right before the attack, and its
    # predictions after the attack are the recorded adversarial labels
    clf = train_classifier(clean.X[train], clean.labels[train], hidden=SMALL["hidden"], seed=SMALL["seed"],
                           max_iter=SMALL["max_iter"])
    correct = clf.predict(clean.X[heldout]) == clean.labels[heldout]
    np.testing.assert_array_equal(heldout[correct], src)
    np.testing.assert_array_equal(clf.predict(adv.X), adv_labels)
    assert m["clean_accuracy"] == pytest.approx(correct.mean())
    assert m["adversarial_accuracy"] == pytest.approx(np.mean(adv_labels == adv.labels))
    assert m["heldout_adversarial_accuracy"] == pytest.approx(np.sum(adv_labels == adv.labels) / len(heldout))
    assert m["adversarial_label_counts"] == np.bincount(adv_labels, minlength=10).tolist()
    assert m["clean_accuracy"] > 0.8
    assert m["adversarial_accuracy"] < 0.5 * m["clean_accuracy"]
    assert m["image_shape"] == [28, 28] and m["epsilon"] == 0.3


def test_adversarial_images_stay_in_the_epsilon_ball(adv, clean):
    X0 = clean.X[np.array(adv.meta["source_indices"])]
    d = adv.X - X0
    assert adv.X.min() >= 0.0 and adv.X.max() <= 1.0
    assert np.abs(d).max() <= 0.3 + 1e-12
    at_bound = (adv.X == 0.0) | (adv.X == 1.0)
    full_step = np.isclose(np.abs(d), 0.3, rtol=0, atol=1e-12)
    assert np.all(full_step | at_bound | (d == 0))
    assert full_step.mean() > 0.2  # most pixels moved: not a no-op attack


def test_deterministic_and_round_trip(adv, tmp_path):
    again = load("mnist_fgsm", raw_dir=need_mnist(), **SMALL)
    np.testing.assert_array_equal(again.X, adv.X)
    assert again.meta == adv.meta
    other = load("mnist_fgsm", raw_dir=need_mnist(), **{**SMALL, "seed": 1})
    assert other.meta["heldout_indices"] != adv.meta["heldout_indices"]
    adv.save(tmp_path / "mnist_fgsm.npz")
    back = Dataset.load(tmp_path / "mnist_fgsm.npz")
    np.testing.assert_array_equal(back.X, adv.X)
    np.testing.assert_array_equal(back.labels, adv.labels)
    assert back.meta == adv.meta and back.meta["source_indices"] == adv.meta["source_indices"]


def test_registered_on_the_mnist_files():
    assert raw_source("mnist_fgsm", {"epsilon": 0.3}) == "mnist"


# --------------------------------------------------------------------------------------------- parameters
EPSILON = r"a float in the range \[0.0, 1.0\]"
HIDDEN = "a non-empty list of ints >= 1"


@pytest.mark.parametrize("key,value,allowed", [
    ("epsilon", -0.1, EPSILON),
    ("epsilon", 1.5, EPSILON),
    ("epsilon", math.nan, EPSILON),
    ("epsilon", "0.3", EPSILON),
    ("epsilon", True, EPSILON),
    ("n_train", 5, r"an int in the range \[10, inf\)"),
    ("n_train", 2.5, r"an int in the range \[10, inf\)"),
    ("n_train", True, r"an int in the range \[10, inf\)"),
    ("hidden", [], HIDDEN),
    ("hidden", 128, HIDDEN),
    ("hidden", "128", HIDDEN),
    ("hidden", [64, 0], HIDDEN),
    ("hidden", [True], HIDDEN),
    ("seed", -1, r"an int in the range \[0, inf\)"),
    ("seed", 1.5, r"an int in the range \[0, inf\)"),
    ("max_iter", 0, r"an int in the range \[1, inf\)"),
    ("n_attack", 0, r"an int in the range \[1, inf\) or None"),
])
def test_bad_parameters_name_the_key(tmp_path, key, value, allowed):
    # the declaration is checked at the call, before any file is read: tmp_path holds no MNIST file
    with pytest.raises(ValueError, match=f"The '{key}' parameter of mnist_fgsm must be {allowed}"):
        load("mnist_fgsm", raw_dir=tmp_path, **{**SMALL, key: value})


def test_parameters_needing_the_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="t10k"):
        load("mnist_fgsm", raw_dir=tmp_path, **SMALL)
    with pytest.raises(ValueError, match="unknown parameters"):
        load("mnist_fgsm", raw_dir=tmp_path, eps=0.3)
    with pytest.raises(ValueError, match="n_train must be at most 9990"):
        load("mnist_fgsm", raw_dir=need_mnist(), **{**SMALL, "n_train": 9995})


def test_n_attack_keeps_a_seeded_subset_of_the_attacked_images(adv):
    small = load("mnist_fgsm", raw_dir=need_mnist(), **{**SMALL, "n_attack": 50})
    full = set(adv.meta["source_indices"])
    rows = small.meta["source_indices"]
    assert len(rows) == 50 == small.n_samples and rows == sorted(rows) and set(rows) <= full
    pos = {s: i for i, s in enumerate(adv.meta["source_indices"])}
    np.testing.assert_array_equal(small.X, adv.X[[pos[s] for s in rows]])
    again = load("mnist_fgsm", raw_dir=need_mnist(), **{**SMALL, "n_attack": 50})
    assert again.meta["source_indices"] == rows
