"""Restricting a dataset before anything is built: a seeded class subset (``subset``), the largest connected
component of its relation graph (``graph.largest_component``, hop-distance relations), and the training rows of a
stratified split or fold (``split``)."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..constraints import Declaration, ListOf, check_options, declare, integer, real
from ..datasets.base import SAMPLE_NAME_KEYS, Dataset
from ..errors import UserError


def _one_subset(options: Any, context: Any) -> tuple[str, str] | None:
    if options["classes"] is not None and options["n_classes"] is not None:
        return "classes", "subset takes either 'classes' or 'n_classes', not both"
    return None


def _one_split(options: Any, context: Any) -> tuple[str, str] | None:
    folds = options["n_folds"] is not None or options["fold"] is not None
    if (options["train_fraction"] is None) == (not folds):
        return "train_fraction", "a split takes either train_fraction, or n_folds and fold"
    if folds and (options["n_folds"] is None or options["fold"] is None):
        missing = "n_folds" if options["n_folds"] is None else "fold"
        return missing, "a k-fold split takes both n_folds and fold"
    if folds and not options["fold"] < options["n_folds"]:
        return "fold", f"must be in 0 … n_folds − 1 = 0 … {options['n_folds'] - 1}"
    return None


#: The ``split`` sub-block of an inputs block (:func:`split_mask`): ``{train_fraction}`` or ``{n_folds, fold}``.
SPLIT = Declaration({"train_fraction": [real(0.0, 1.0, closed="neither"), None],
                     "n_folds": [integer(2, None), None], "fold": [integer(0, None), None]},
                    defaults={"train_fraction": None, "n_folds": None, "fold": None}, rules=[_one_split])


@declare({"n_classes": [integer(2, None), None],
          "classes": [ListOf([Integral, str], description="a list of class names or indices"), None],
          "n_per_class": [integer(2, None), None]}, rules=[_one_subset])
def subset_classes(dataset: Dataset, n_classes: int | None = None, n_per_class: int | None = None,
                   seed: int = 0, classes: list[int | str] | None = None) -> Dataset:
    """A seeded class subset (``inputs.subset``): the given ``classes`` (names or indices, e.g. MNIST's digit-1
    group of featMAP Figs. 1 and 7), or the first ``n_classes`` classes of one random permutation of the classes (so
    5 ⊂ 10 ⊂ 20 for the same seed), kept in ascending class order and renumbered 0..k−1, then at most
    ``n_per_class`` rows of each (:func:`cova.datasets.mnist.per_class_subset`). Rows keep their order and their
    names."""
    from ..datasets.mnist import per_class_subset

    c = dataset.n_cohorts
    keep = np.arange(dataset.n_samples)
    if classes is not None:
        names = [str(n) for n in dataset.label_names]
        chosen = []
        for k in classes:
            if isinstance(k, str) and k in names:
                chosen.append(names.index(k))
            elif isinstance(k, int) and not isinstance(k, bool) and 0 <= k < c:
                chosen.append(k)
            else:
                raise UserError(f"subset.classes: {k!r} is neither a class name of the dataset {names[:20]} nor a "
                                 f"class index in 0..{c - 1}")
        keep = np.flatnonzero(np.isin(dataset.labels, chosen))
    if n_classes is not None:
        if not 2 <= int(n_classes) <= c:
            raise UserError(f"subset.n_classes must be in 2..{c} (the dataset's classes), got {n_classes}")
        chosen = np.sort(np.random.default_rng([int(seed), 0x535542]).permutation(c)[:int(n_classes)])
        keep = np.flatnonzero(np.isin(dataset.labels, chosen))
    if n_per_class is not None:
        keep = keep[per_class_subset(dataset.labels[keep], int(n_per_class), seed)]
    present, y = np.unique(dataset.labels[keep], return_inverse=True)
    relations = None if dataset.relations is None else dataset.relations[keep][:, keep]
    return Dataset(dataset.X[keep], y, [dataset.label_names[k] for k in present], relations=relations,
                   meta={**sliced_meta(dataset, keep), "subset_rows": int(keep.size)})


def sliced_meta(dataset: Dataset, keep: np.ndarray) -> dict[str, Any]:
    """``dataset.meta`` for the rows ``keep``: the per-sample name lists (:data:`SAMPLE_NAME_KEYS`) sliced alike,
    and ``sample_names`` the kept rows' names (also when the dataset names its rows ``"sample i"``, so that a
    kept row keeps its name); every other fact as it is."""
    meta = {key: ([value[i] for i in keep] if key in SAMPLE_NAME_KEYS and isinstance(value, list)
                  and len(value) == dataset.n_samples else value) for key, value in dataset.meta.items()}
    names = dataset.sample_names
    return {**meta, "sample_names": [names[i] for i in keep]}


def stratified_split(labels: np.ndarray, train_fraction: float, seed: int = 0) -> np.ndarray:
    """Boolean training mask of a stratified, seeded split: in every class round(f·n_j) samples (at least 2, and
    leaving at least 2 for the test set) are drawn uniformly without replacement."""
    f = float(train_fraction)
    if not 0.0 < f < 1.0:
        raise UserError(f"split.train_fraction must be in (0, 1), got {f}")
    rng = np.random.default_rng([int(seed), 0x53504C])
    train = np.zeros(labels.shape[0], dtype=bool)
    for j in np.unique(labels):
        members = np.flatnonzero(labels == j)
        if members.size < 4:
            raise UserError(f"cohort {j} has {members.size} samples; a train/test split needs at least 4 per cohort")
        n = int(np.clip(np.floor(f * members.size + 0.5), 2, members.size - 2))
        train[rng.choice(members, n, replace=False)] = True
    return train


def stratified_fold(labels: np.ndarray, n_folds: int, fold: int, seed: int = 0) -> np.ndarray:
    """Boolean training mask holding out fold ``fold`` of a seeded stratified ``n_folds``-fold partition
    (scikit-learn's ``StratifiedKFold`` with shuffling): for one seed the test rows of folds 0 … n_folds − 1
    partition the rows."""
    from sklearn.model_selection import StratifiedKFold

    k, f = int(n_folds), int(fold)
    if k < 2:
        raise UserError(f"split.n_folds must be at least 2, got {k}")
    if not 0 <= f < k:
        raise UserError(f"split.fold must be in 0 … n_folds − 1 = 0 … {k - 1}, got {f}")
    counts = np.bincount(np.unique(labels, return_inverse=True)[1])
    if counts.min() < k:
        raise UserError(f"a stratified {k}-fold split needs at least {k} samples in every cohort; the smallest "
                         f"has {int(counts.min())}")
    folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=int(seed)).split(np.zeros(labels.shape[0]), labels)
    test = next(t for i, (_, t) in enumerate(folds) if i == f)
    train = np.ones(labels.shape[0], dtype=bool)
    train[test] = False
    return train


def split_mask(labels: np.ndarray, split: dict[str, Any], seed: int = 0) -> np.ndarray:
    """The training mask of an inputs block's ``split``: ``{train_fraction}`` (:func:`stratified_split`) or
    ``{n_folds, fold}`` (:func:`stratified_fold`)."""
    split = check_options(SPLIT, split, "split")
    if split["train_fraction"] is not None:
        return stratified_split(labels, split["train_fraction"], seed=seed)
    return stratified_fold(labels, split["n_folds"], split["fold"], seed=seed)


def largest_component(dataset: Dataset) -> tuple[Dataset, dict[str, Any]]:
    """The dataset restricted to the largest connected component of its relation graph (A or Aᵀ non-zero off
    the diagonal; the first such component on ties): rows of X, labels (renumbered over the cohorts present),
    relations and the per-sample names of ``meta`` are sliced alike. Facts: the counts kept and dropped, and
    ``kept_rows`` when rows were dropped."""
    from scipy.sparse.csgraph import connected_components

    A = sp.csr_matrix(dataset.relations, copy=True)
    A.setdiag(0.0)
    A.eliminate_zeros()
    _, comp = connected_components(A, directed=True, connection="weak")
    sizes = np.bincount(comp)
    keep = np.flatnonzero(comp == int(np.argmax(sizes)))
    facts: dict[str, Any] = {"n_components": int(sizes.size), "largest_component_kept": int(keep.size),
                             "largest_component_dropped": int(dataset.n_samples - keep.size)}
    if keep.size == dataset.n_samples:
        return dataset, facts
    present, y = np.unique(dataset.labels[keep], return_inverse=True)
    kept = Dataset(dataset.X[keep], y, [dataset.label_names[k] for k in present],
                   relations=dataset.relations[keep][:, keep], meta=sliced_meta(dataset, keep))
    return kept, dict(facts, kept_rows=keep.tolist())

