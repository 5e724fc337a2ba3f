"""MNIST adversarial examples made by the fast gradient sign method (FGSM), for featMAP's Fig. 6 and Supp. Fig. 8.

featMAP (Yang et al. 2022, Sec. 4.2.2) embeds MNIST images attacked by FGSM (Goodfellow, Shlens & Szegedy 2015)
with ε = 0.3 against a LeNet, and reports an accuracy of 0.08 after the attack with 43 % of the images
predicted as 8. Only the 10,000 MNIST **test** images are available offline, so :func:`mnist_fgsm` splits them:
a seeded, class-stratified part trains a small classifier (scikit-learn's ``MLPClassifier`` with ReLU units, in
place of the paper's LeNet), and the held-out images it classifies correctly are attacked,

    x' = clip(x + ε · sign(∇_x CE(f(x), y)), 0, 1)            (FGSM, Goodfellow et al. 2015, Sec. 4)

with ``y`` the true label and ``CE`` the cross-entropy of the classifier's softmax output, so that
‖x' − x‖_∞ ≤ ε (featMAP Sec. 4.2.2: ‖x' − x‖ ≤ ε). The paper does not say which images were attacked; here, as in the
usual FGSM evaluation, only those the classifier gets right are (an image already misclassified needs no attack),
and every attacked image is kept, whether the attack fooled the classifier or not (``meta`` tells which).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import threadpool_limits

from ..constraints import SEED, ListOf, declare, integer, real
from ..errors import UserError
from .base import Dataset
from .mnist import mnist

if TYPE_CHECKING:
    from sklearn.neural_network import MLPClassifier

N_CLASSES = 10


def train_classifier(X: np.ndarray, y: np.ndarray, hidden: Sequence[int] = (128,), seed: int = 0,
                     max_iter: int = 200) -> MLPClassifier:
    """A ReLU ``MLPClassifier`` (Adam, scikit-learn's defaults otherwise) fitted on pixels ``X`` in [0, 1].

    Trained single-threaded (BLAS limited to one thread) so that the weights, and everything attacked with
    them, are the same for a fixed ``seed`` on any machine load. Training stops after ``max_iter`` epochs or
    earlier by scikit-learn's own tolerance rule; the convergence warning of a run stopped by ``max_iter`` is
    silenced because the epoch budget is a fixed setting, and the loader records ``n_iter`` instead.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    clf = MLPClassifier(hidden_layer_sizes=tuple(hidden), activation="relu", random_state=seed, max_iter=max_iter)
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    return clf


def mlp_input_gradient(clf: MLPClassifier, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """∇_x CE(f(x), y) for every row ``x`` of ``X``: the gradient of ``-log p_y(x)`` with respect to the pixels.

    The network is x → a_1 = relu(x W_1 + b_1) → … → z_L = a_{L-1} W_L + b_L → p = softmax(z_L), with
    ``W_l = clf.coefs_[l-1]`` and ``b_l = clf.intercepts_[l-1]``. Back-propagation from ∂CE/∂z_L = p − e_y
    through δ_{l-1} = (δ_l W_lᵀ) ⊙ [z_{l-1} > 0] ends in ∇_x = δ_1 W_1ᵀ. Written here by hand because
    scikit-learn exposes only the gradient with respect to the weights (inside ``fit``), never the one with
    respect to the input. The gradient is per sample (not divided by the number of rows), and the L2 penalty of
    the weights does not depend on x. At a ReLU kink (z = 0) the derivative 0 is taken, as scikit-learn does.

    ``y`` holds class labels (values of ``clf.classes_``). Returns a float64 array of the shape of ``X``.
    """
    if clf.activation != "relu" or clf.out_activation_ != "softmax":
        raise UserError(f"mlp_input_gradient needs a ReLU MLP with a softmax output, got activation "
                         f"{clf.activation!r} and output {clf.out_activation_!r}")
    X = np.asarray(X, dtype=np.float64)
    cls = np.searchsorted(clf.classes_, y)
    if np.any(cls >= len(clf.classes_)) or np.any(clf.classes_[np.minimum(cls, len(clf.classes_) - 1)] != y):
        raise UserError(f"y must hold labels of the classifier, one of {clf.classes_.tolist()}")
    pre = []  # pre-activations z_1 .. z_L
    a = X
    for W, b in zip(clf.coefs_, clf.intercepts_):
        z = a @ W + b
        pre.append(z)
        a = np.maximum(z, 0.0)
    z = pre[-1]
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    delta = p
    delta[np.arange(len(cls)), cls] -= 1.0
    for layer in range(len(clf.coefs_) - 1, 0, -1):
        delta = (delta @ clf.coefs_[layer].T) * (pre[layer - 1] > 0)
    return delta @ clf.coefs_[0].T


def fgsm(X: np.ndarray, gradient: np.ndarray, epsilon: float) -> np.ndarray:
    """FGSM (Goodfellow et al. 2015, Sec. 4): ``clip(X + epsilon · sign(gradient), 0, 1)``.

    A pixel whose gradient is exactly 0 is left unchanged (sign 0).
    """
    X = np.asarray(X, dtype=np.float64)
    gradient = np.asarray(gradient, dtype=np.float64)
    if gradient.shape != X.shape:
        raise UserError(f"gradient must have the shape of X {X.shape}, got {gradient.shape}")
    return np.clip(X + epsilon * np.sign(gradient), 0.0, 1.0)


@declare({"epsilon": [real(0.0, 1.0)], "n_train": [integer(N_CLASSES, None)],
          "hidden": [ListOf([integer(1, None)], description="a non-empty list of ints >= 1 (hidden layer widths)")],
          "seed": SEED, "max_iter": [integer(1, None)], "n_attack": [integer(1, None), None]})
def mnist_fgsm(raw_dir: str | os.PathLike, epsilon: float = 0.3, n_train: int = 5000,
               hidden: Sequence[int] = (128,), seed: int = 0, max_iter: int = 200,
               n_attack: int | None = None) -> Dataset:
    """FGSM adversarial examples of the MNIST test images (featMAP Fig. 6, Supp. Fig. 8) from the IDX files in
    ``raw_dir`` (the files of the ``mnist`` loader, ``split="test"``).

    1. ``n_train`` of the 10,000 test images, drawn with ``seed`` and stratified by class, train
       :func:`train_classifier` (hidden widths ``hidden``, ``random_state=seed``, at most ``max_iter`` epochs).
    2. The other images are the held-out set; the ones the classifier gets right are attacked by :func:`fgsm`
       with step ``epsilon``, using the true label's cross-entropy gradient (:func:`mlp_input_gradient`);
       ``n_attack`` (default: all) keeps a seeded random subset of that many of them (small test runs).

    ``X``: the adversarial images (784 pixels, row-major 28×28, in [0, 1] like ``mnist``), in MNIST test order.
    ``labels``: the TRUE digits, named ``"0".."9"``. ``meta`` (JSON; arrays as lists, in the row order of X):

    - ``adversarial_labels``: the classifier's prediction on each adversarial image;
    - ``adversarial_label_counts``: how many adversarial images are predicted as each digit 0..9;
    - ``source_indices``: each row's index in the MNIST test set (``mnist(split="test")`` row);
    - ``heldout_indices``: the indices of every held-out image (attacked or not), so clean images of any digit
      can be taken from the ``mnist`` loader;
    - ``clean_accuracy``: the classifier's accuracy on the held-out clean images;
    - ``adversarial_accuracy``: the fraction of attacked images still classified correctly;
    - ``heldout_adversarial_accuracy``: still-correct attacked images / held-out images (the images first
      misclassified count as wrong): the definition of an attack's accuracy over a whole test set;
    - ``epsilon``, ``n_train``, ``hidden``, ``seed``, ``max_iter``, ``n_iter`` (epochs run), ``image_shape``.

    The declared options are checked at every call, before any file is read: ``epsilon`` a real number in
    [0, 1] (the pixels lie in [0, 1]; 0 leaves the images clean), ``n_train`` an int >= 10 (one image per class
    at least), ``hidden`` a non-empty list of ints >= 1, ``seed`` an int >= 0, ``max_iter`` an int >= 1,
    ``n_attack`` an int >= 1 or ``None``. ``n_train`` must also leave at least 10 held-out images (checked on the
    file).
    """
    epsilon, n_train, seed, max_iter = float(epsilon), int(n_train), int(seed), int(max_iter)
    widths = tuple(int(h) for h in hidden)
    n_attack = None if n_attack is None else int(n_attack)
    clean = mnist(raw_dir, split="test")
    X, y = clean.X, clean.labels
    n = len(y)
    if n_train > n - N_CLASSES:
        raise UserError(f"n_train must be at most {n - N_CLASSES} (the MNIST test set has {n} images and at least "
                         f"{N_CLASSES} must be held out to attack), got {n_train}")
    from sklearn.model_selection import train_test_split

    train, heldout = train_test_split(np.arange(n), train_size=n_train, stratify=y, random_state=seed)
    train, heldout = np.sort(train), np.sort(heldout)
    clf = train_classifier(X[train], y[train], widths, seed, max_iter)
    with threadpool_limits(limits=1):
        correct = clf.predict(X[heldout]) == y[heldout]
        attacked = heldout[correct]
        if n_attack is not None and n_attack < len(attacked):
            attacked = np.sort(np.random.default_rng([seed, 0xA77AC]).choice(attacked, n_attack, replace=False))
        if len(attacked) == 0:
            raise UserError(f"the classifier (hidden={list(widths)}, max_iter={max_iter}, n_train={n_train}) "
                             "classifies no held-out image correctly: nothing to attack")
        X_adv = fgsm(X[attacked], mlp_input_gradient(clf, X[attacked], y[attacked]), epsilon)
        adv_pred = clf.predict(X_adv).astype(np.int64)
    still = adv_pred == y[attacked]
    return Dataset(X_adv, y[attacked], [str(j) for j in range(N_CLASSES)], meta={
        "source": "MNIST test split, FGSM adversarial examples", "files": clean.meta["files"],
        "classifier": f"sklearn MLPClassifier(hidden_layer_sizes={list(widths)}, activation='relu', solver='adam')",
        "epsilon": epsilon, "n_train": n_train, "hidden": list(widths), "seed": seed, "max_iter": max_iter,
        "n_iter": int(clf.n_iter_), "n_heldout": int(len(heldout)), "n_samples": int(len(attacked)),
        "n_attack": n_attack,
        "clean_accuracy": float(correct.mean()), "adversarial_accuracy": float(still.mean()),
        "heldout_adversarial_accuracy": float(still.sum() / len(heldout)) if n_attack is None else None,
        "adversarial_labels": adv_pred.tolist(),
        "adversarial_label_counts": np.bincount(adv_pred, minlength=N_CLASSES).tolist(),
        "source_indices": attacked.tolist(), "heldout_indices": heldout.tolist(),
        "image_shape": clean.meta["image_shape"], "pixel_scale": "x/255, attacked images clipped to [0, 1]"})
