"""The inputs every method receives: data X, cohort labels, local weights W, confidences R, prototypes Υ.

``build_inputs`` turns one ``inputs`` block of the config into these arrays (COVA Sec. 3.1.1-3.1.3):

```yaml
weights:    {kind: euclidean_max, n_neighbors: 50}          # W, spec §2.1 (sparse kNN graph)
confidence: {kind: eq12, source: eq9, lambda_p: 0.01}        # R, Eqs. 9-12
prototypes: {kind: tsne, proximity: centres_gaussian, rho: 3} # Υ from D (Eqs. 4-6)
features:   {kind: pca, n_components: 30}                    # optional, cova.features (default raw)
cohorts:    {kind: spectral, n_clusters: 20}                 # optional, cova.features (default: dataset labels)
subset:     {n_classes: 10, n_per_class: 100}                # optional: nested seeded class subset (Fig. 7)
split:      {train_fraction: 0.3}                            # optional: stratified train/test split (Fig. 7, H.10)
```

With ``split``, W, R, Υ (and a PCA) are built from the training rows only; ``Inputs.train`` marks them, ``W`` and
``R`` cover the training rows in their original order, and the embed step fits on :meth:`Inputs.training` and maps
the test rows with the method's ``transform`` (out-of-sample, Sec. 3.2). With ``cohorts: {kind: predicted}`` the
inputs also carry the true labels and the gold-standard prototypes built from them (Fig. 5).

When ``features`` or ``cohorts`` change X or the labels, the changed arrays are stored in ``inputs.npz`` and
:meth:`Inputs.load` returns them, so every method and score downstream sees the same X and cohorts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .datasets.base import Dataset
from .io import save_npz_atomic


@dataclass
class Inputs:
    """Everything a method may use. ``W`` is a sparse, symmetric, unit-sum kNN graph; ``R`` is dense (l, c)."""

    X: np.ndarray
    labels: np.ndarray
    label_names: list[str]
    W: sp.csr_matrix
    R: np.ndarray
    prototypes: np.ndarray
    spec: dict[str, Any] = field(default_factory=dict)
    train: np.ndarray | None = None            # (l,) bool: training rows of a split (W, R cover these only)
    gold_labels: np.ndarray | None = None      # true labels when the cohorts are predicted (Fig. 5)
    gold_prototypes: np.ndarray | None = None  # prototypes from all true labels (Fig. 5 "gold standard")
    labelled: np.ndarray | None = None         # (l,) bool: the samples whose labels were given (Fig. 5)

    @property
    def n_cohorts(self) -> int:
        return len(self.label_names)

    def training(self) -> "Inputs":
        """The inputs restricted to the training rows (what a method is fitted on); ``self`` without a split."""
        if self.train is None:
            return self
        return Inputs(X=self.X[self.train], labels=self.labels[self.train], label_names=self.label_names, W=self.W,
                      R=self.R, prototypes=self.prototypes, spec=self.spec)

    def save(self, path: str | os.PathLike, *, with_X: bool = False, with_labels: bool = False) -> None:
        """Write W, R, Υ and the spec atomically; X and the labels only when the inputs block changed them
        (otherwise they stay in the dataset file)."""
        W = self.W.tocsr()
        extra: dict[str, np.ndarray] = {}
        if with_X:
            extra["X"] = self.X
        if with_labels:
            extra.update(labels=self.labels, label_names=np.array(self.label_names, dtype=str))
        for key in ("train", "gold_labels", "gold_prototypes", "labelled"):
            if getattr(self, key) is not None:
                extra[key] = getattr(self, key)
        save_npz_atomic(path, W_data=W.data, W_indices=W.indices, W_indptr=W.indptr, W_shape=np.array(W.shape),
                        R=self.R, prototypes=self.prototypes, spec=np.array(json.dumps(self.spec, sort_keys=True)),
                        **extra)

    @classmethod
    def load(cls, dataset_path: str | os.PathLike, inputs_path: str | os.PathLike) -> "Inputs":
        ds = Dataset.load(dataset_path)
        with np.load(inputs_path, allow_pickle=False) as f:
            W = sp.csr_matrix((f["W_data"], f["W_indices"], f["W_indptr"]), shape=tuple(f["W_shape"]))
            X = f["X"] if "X" in f else ds.X
            labels, names = ((f["labels"], [str(n) for n in f["label_names"]]) if "labels" in f
                             else (ds.labels, ds.label_names))
            optional = {key: f[key] for key in ("train", "gold_labels", "gold_prototypes", "labelled") if key in f}
            return cls(X=X, labels=labels, label_names=names, W=W, R=f["R"], prototypes=f["prototypes"],
                       spec=json.loads(str(f["spec"])), **optional)


def subset_classes(dataset: Dataset, n_classes: int | None = None, n_per_class: int | None = None,
                   seed: int = 0) -> Dataset:
    """A seeded class subset (``inputs.subset``): the first ``n_classes`` classes of one random permutation of the
    classes (so 5 ⊂ 10 ⊂ 20 for the same seed), kept in ascending class order and renumbered 0..k−1, then at most
    ``n_per_class`` rows of each (:func:`cova.datasets.mnist.per_class_subset`). Rows keep their order."""
    from .datasets.mnist import per_class_subset

    c = dataset.n_cohorts
    keep = np.arange(dataset.n_samples)
    if n_classes is not None:
        if not 2 <= int(n_classes) <= c:
            raise ValueError(f"subset.n_classes must be in 2..{c} (the dataset's classes), got {n_classes}")
        chosen = np.sort(np.random.default_rng([int(seed), 0x535542]).permutation(c)[:int(n_classes)])
        keep = np.flatnonzero(np.isin(dataset.labels, chosen))
    if n_per_class is not None:
        keep = keep[per_class_subset(dataset.labels[keep], int(n_per_class), seed)]
    present, y = np.unique(dataset.labels[keep], return_inverse=True)
    relations = None if dataset.relations is None else dataset.relations[keep][:, keep]
    return Dataset(dataset.X[keep], y, [dataset.label_names[k] for k in present], relations=relations,
                   meta={**dataset.meta, "subset_rows": int(keep.size)})


def stratified_split(labels: np.ndarray, train_fraction: float, seed: int = 0) -> np.ndarray:
    """Boolean training mask of a stratified, seeded split: in every class round(f·n_j) samples (at least 2, and
    leaving at least 2 for the test set) are drawn uniformly without replacement."""
    f = float(train_fraction)
    if not 0.0 < f < 1.0:
        raise ValueError(f"split.train_fraction must be in (0, 1), got {f}")
    rng = np.random.default_rng([int(seed), 0x53504C])
    train = np.zeros(labels.shape[0], dtype=bool)
    for j in np.unique(labels):
        members = np.flatnonzero(labels == j)
        if members.size < 4:
            raise ValueError(f"cohort {j} has {members.size} samples; a train/test split needs at least 4 per cohort")
        n = int(np.clip(np.floor(f * members.size + 0.5), 2, members.size - 2))
        train[rng.choice(members, n, replace=False)] = True
    return train


def build_inputs(dataset: Dataset, spec: dict[str, Any], seed: int = 0) -> Inputs:
    """Build W, R and Υ for ``dataset`` from one config ``inputs`` block (see the module docstring).

    Each sub-block is ``{kind: ..., **parameters}``; ``seed`` seeds every random step (kNN descent, t-SNE
    prototypes, spectral clustering, subsets, splits, labelled samples, random prototypes). ``prototypes.space``
    is ``features`` (default: cohort proximity from the transformed X) or ``raw`` (from the dataset's X, e.g.
    Cora's cluster centres in word space, H.3).

    ``cohorts: {kind: predicted, labelled_per_class: n}`` (Fig. 5, spec §2.7): the features are computed first
    (they must not use labels, so ``compacted`` is refused), the unlabelled samples take the 1-NN label of the
    labelled ones in that space, R is built from these input labels, and the **input prototypes** from the
    labelled samples only (Eq. 6 on W restricted to them, their true labels); the **gold-standard prototypes**
    use every sample's true label on the full W.
    """
    from .affinity import build_weights
    from .cohorts import confidence_matrix, make_prototypes
    from .features import assign_cohorts, predict_cohorts, transform_features

    sub = spec.get("subset")
    if sub:
        dataset = subset_classes(dataset, sub.get("n_classes"), sub.get("n_per_class"), seed=seed)
    split = spec.get("split")
    cohorts = dict(spec.get("cohorts") or {"kind": "given"})
    predicted = cohorts.get("kind") == "predicted"
    labelled = gold_labels = None
    if predicted:
        if split:
            raise ValueError("inputs: cohorts kind 'predicted' cannot be combined with a split")
        if (spec.get("features") or {}).get("kind") == "compacted":
            raise ValueError("inputs: cohorts kind 'predicted' needs features that do not use labels "
                             "(raw or pca), not 'compacted'")
        X, facts = transform_features(dataset, spec.get("features"), labels=dataset.labels, seed=seed)
        gold_labels = dataset.labels
        labels, labelled = predict_cohorts(X, gold_labels, int(cohorts["labelled_per_class"]), seed=seed)
        names = list(dataset.label_names)
        facts = dict(facts, labelled=int(labelled.sum()),
                     predicted_accuracy=float(np.mean(labels[~labelled] == gold_labels[~labelled]))
                     if np.any(~labelled) else 1.0)
    else:
        labels, names = assign_cohorts(dataset, spec.get("cohorts"), seed=seed)
    c = len(names)
    counts = np.bincount(labels, minlength=c)
    if np.any(counts < 2):
        empty = [names[j] for j in np.flatnonzero(counts < 2)]
        raise ValueError(f"cohorts {empty} have fewer than 2 samples; COVA's scores and Eq. 10 need at least 2")
    train = stratified_split(labels, split["train_fraction"], seed=seed) if split else None
    if not predicted:
        X, facts = transform_features(dataset, spec.get("features"), labels=labels, seed=seed, fit_rows=train)
    rows = np.arange(labels.shape[0]) if train is None else np.flatnonzero(train)
    Xt, yt = X[rows], labels[rows]
    w = dict(spec.get("weights", {"kind": "euclidean_max"}))
    W = build_weights(Xt, w.pop("kind"), labels=yt, random_state=seed, **w)
    r = dict(spec.get("confidence", {"kind": "eq12"}))
    R = confidence_matrix(yt, kind=r.pop("kind"), X=Xt, W=W, n_cohorts=c, **r)
    p = dict(spec.get("prototypes", {"kind": "tsne"}))
    given = p.pop("given", None)
    space = p.pop("space", "features")
    kind = p.pop("kind")
    Xp = (dataset.X if space == "raw" else X)[rows]
    relations = dataset.relations if train is None or dataset.relations is None else \
        dataset.relations[rows][:, rows]
    common = dict(n_cohorts=c, random_state=seed, given=None if given is None else np.asarray(given, float), **p)
    if predicted:
        L = np.flatnonzero(labelled)
        prototypes = make_prototypes(kind, X=Xp[L], W=W[L][:, L], labels=gold_labels[L], relations=None, **common)
        gold = make_prototypes(kind, X=Xp, W=W, labels=gold_labels, relations=relations,
                               **{**common, "random_fraction": 0.0})
    else:
        prototypes = make_prototypes(kind, X=Xp, W=W, labels=yt, relations=relations, **common)
        gold = None
    if train is not None:
        facts = dict(facts, n_train=int(train.sum()), n_test=int((~train).sum()))
    if sub:
        facts = dict(facts, n_samples=int(labels.shape[0]), n_cohorts=c)
    return Inputs(X=X, labels=labels, label_names=names, W=W, R=R,
                  prototypes=np.asarray(prototypes, dtype=np.float64), spec=dict(spec, seed=seed, **facts),
                  train=train, gold_labels=gold_labels,
                  gold_prototypes=None if gold is None else np.asarray(gold, dtype=np.float64), labelled=labelled)
