"""The inputs every method receives: data X, cohort labels, an affinity graph W, confidences R, prototypes Υ, and
a rectangular relation between two kinds of objects. Each is optional: an inputs block produces what it describes,
and each method declares what it reads (:meth:`cova.methods.Embedder.requires`).

``build_inputs`` turns one ``inputs`` block of the config into these arrays. A **vector** block builds W, R and Υ
from X (COVA Sec. 3.1.1-3.1.3):

```yaml
weights:    {kind: euclidean_max, n_neighbors: 50}          # W, COVA Sec. 3.1.1 (sparse kNN graph)
confidence: {kind: eq12, source: eq9, lambda_p: 0.01}        # R, Eqs. 9-12
prototypes: {kind: tsne, proximity: centres_gaussian, rho: 3} # Υ from D (Eqs. 4-6)
features:   {kind: pca, n_components: 30}                    # optional, cova.features (default raw)
cohorts:    {kind: spectral, n_clusters: 20}                 # optional, cova.features (default: dataset labels)
subset:     {n_classes: 10, n_per_class: 100}                # optional: nested seeded class subset (Fig. 7)
split:      {train_fraction: 0.3}                            # optional: stratified train/test split (Fig. 7, H.10)
```

``split: {n_folds: 10, fold: 3}`` instead holds out fold 3 of a seeded stratified 10-fold partition (NeRV Sec. 5.3):
the blocks ``fold: 0 … 9`` of one configuration share the seed, so their test rows partition the data. A block
without weights, confidence and prototypes (X and the labels only) takes a split too.

With ``split``, W, R, Υ (and a PCA) are built from the training rows only; ``Inputs.train`` marks them, ``W`` and
``R`` cover the training rows in their original order, and the embed step fits on :meth:`Inputs.training` and maps
the test rows with the method's ``transform`` (out-of-sample, Sec. 3.2); a method that takes unlabelled samples
(``Embedder.semi_supervised``) is fitted on :meth:`Inputs.semi_supervised` instead: every row, the test rows'
labels hidden (NeRV Sec. 5.3: test locations are known during training, their labels are not). With ``cohorts: {kind: predicted}`` the
inputs also carry the true labels and the gold-standard prototypes built from them (Fig. 5).

When ``features`` or ``cohorts`` change X or the labels, the changed arrays are stored in ``inputs.npz`` and
:meth:`Inputs.load` returns them, so every method and score downstream sees the same X and cohorts.

A **graph** block takes the dataset's relation matrix as W itself (e.g. DOSNES's trade network), a **relation**
block takes the dataset's X as a samples × features relation (e.g. the co-embedding paper's documents × words):

```yaml
graph:    {source: relations}   # W = (A + Aᵀ)/2, zero diagonal, unit sum; X, R, Υ only when configured
relation: {source: X}           # rows = samples (with their labels), columns = features; empty rows/columns dropped
relation: {source: points, groups: {rows: [0], columns: [1], shared: [2]}, width: mean}  # Eq. 44 between groups
relation: {source: hop_distances, row_fraction: 0.4, rounding: round}  # link data: exp(-D/t), Sec. 4.3
```

``graph.largest_component: true`` keeps the largest connected component of A; ``normalize`` (under ``graph`` or
``weights``) makes W doubly stochastic (DOSNES Sec. 3, :func:`cova.affinity.normalize_affinity`), and the inputs
then carry every row's ``degree`` before the normalisation (graph blocks always carry it).

:func:`provided_inputs` says which fields a block produces without building it (the configuration check).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .datasets.base import SAMPLE_NAME_KEYS, Dataset
from .io import save_npz_atomic

#: The names :meth:`Inputs.available` may return, in a fixed order.
INPUT_FIELDS = ("X", "labels", "W", "R", "prototypes", "relation", "degree")
#: The inputs that describe cohorts: a method that requires one of them arranges cohorts.
COHORT_INPUTS = frozenset({"labels", "R", "prototypes"})


def require_cohorts(n_cohorts: int, who: str) -> None:
    """Refuse fewer than two cohorts for ``who`` (a method or an inputs block that arranges cohorts).

    With one cohort, R (COVA Eqs. 9-12) is a column of ones, there is one prototype and nothing to arrange, and
    every cohort score is 1 whatever the embedding.
    """
    if n_cohorts < 2:
        raise ValueError(f"{who}: at least 2 cohorts are needed, but the data has {n_cohorts}; with one cohort there "
                         f"is nothing to arrange and every cohort score would be 1. Use data with at least 2 classes "
                         f"(or cohorts: {{kind: spectral, n_clusters: k}}), or a method that needs none of "
                         f"{', '.join(sorted(COHORT_INPUTS))}")


@dataclass
class Relation:
    """A rectangular relation between two kinds of objects (co-embedding paper Sec. 2): a sparse non-negative
    m×n matrix R, rows = objects of the first kind (e.g. documents), columns = objects of the second kind (e.g.
    words). Each side has names and optionally cohort labels with their names, and optionally the coordinates of
    its objects when the relation was computed from points (``row_points`` (m, d), ``column_points`` (n, d), the
    2-D sets of the paper's Sec. 4.1), so that a figure can draw the original data."""

    matrix: sp.csr_matrix
    row_names: list[str]
    column_names: list[str]
    row_labels: np.ndarray | None = None
    row_label_names: list[str] = field(default_factory=list)
    column_labels: np.ndarray | None = None
    column_label_names: list[str] = field(default_factory=list)
    row_points: np.ndarray | None = None
    column_points: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.matrix = sp.csr_matrix(self.matrix, dtype=np.float64)
        m, n = self.matrix.shape
        if self.matrix.nnz and (not np.all(np.isfinite(self.matrix.data)) or self.matrix.data.min() < 0):
            raise ValueError("a relation matrix must have finite, non-negative entries")
        self.row_names = [str(v) for v in self.row_names]
        self.column_names = [str(v) for v in self.column_names]
        if len(self.row_names) != m or len(self.column_names) != n:
            raise ValueError(f"a {m}×{n} relation needs {m} row names and {n} column names, got "
                             f"{len(self.row_names)} and {len(self.column_names)}")
        for side, size in (("row", m), ("column", n)):
            labels = getattr(self, f"{side}_labels")
            if labels is not None:
                labels = np.asarray(labels, dtype=np.int64)
                setattr(self, f"{side}_labels", labels)
                names = getattr(self, f"{side}_label_names")
                if labels.shape != (size,) or (size and (labels.min() < 0 or labels.max() >= len(names))):
                    raise ValueError(f"{side} labels must be {size} indices into the {len(names)} {side} label names")
            points = getattr(self, f"{side}_points")
            if points is not None:
                points = np.asarray(points, dtype=np.float64)
                setattr(self, f"{side}_points", points)
                if points.ndim != 2 or points.shape[0] != size:
                    raise ValueError(f"{side} points must be a 2-D array with {size} rows, got shape {points.shape}")

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.matrix.shape)  # type: ignore[return-value]

    def _arrays(self) -> dict[str, np.ndarray]:
        R = self.matrix
        out = {"relation_data": R.data, "relation_indices": R.indices, "relation_indptr": R.indptr,
               "relation_shape": np.array(R.shape), "relation_row_names": np.array(self.row_names, dtype=str),
               "relation_column_names": np.array(self.column_names, dtype=str)}
        for side in ("row", "column"):
            labels = getattr(self, f"{side}_labels")
            if labels is not None:
                out[f"relation_{side}_labels"] = labels
                out[f"relation_{side}_label_names"] = np.array(getattr(self, f"{side}_label_names"), dtype=str)
            if getattr(self, f"{side}_points") is not None:
                out[f"relation_{side}_points"] = getattr(self, f"{side}_points")
        return out

    @classmethod
    def _from_arrays(cls, f: Any) -> "Relation":
        R = sp.csr_matrix((f["relation_data"], f["relation_indices"], f["relation_indptr"]),
                          shape=tuple(f["relation_shape"]))
        sides: dict[str, Any] = {}
        for side in ("row", "column"):
            if f"relation_{side}_labels" in f:
                sides[f"{side}_labels"] = f[f"relation_{side}_labels"]
                sides[f"{side}_label_names"] = [str(v) for v in f[f"relation_{side}_label_names"]]
            if f"relation_{side}_points" in f:
                sides[f"{side}_points"] = f[f"relation_{side}_points"]
        return cls(R, [str(v) for v in f["relation_row_names"]], [str(v) for v in f["relation_column_names"]],
                   **sides)


@dataclass
class Inputs:
    """What a method may use; every field is ``None`` when the inputs block does not produce it.

    ``X`` (l, d) features; ``labels`` (l,) cohort indices with ``label_names``; ``W`` a sparse, symmetric,
    unit-sum affinity graph (a kNN graph built from X, or a given graph); ``R`` dense (l, c) cohort confidences;
    ``prototypes`` (c, k) cohort positions Υ; ``relation`` a rectangular :class:`Relation` (its rows are the
    l samples); ``degree`` (l,) every row's weighted degree in the affinity graph *before* its normalisation (a
    doubly stochastic W has equal degrees; docs/dosnes.md says which sums). :meth:`available` names the fields
    that are present.

    ``class_posterior`` is not built by an inputs block: it is the arrays of a class-posterior model that the
    workflow fitted once on these inputs' labelled rows and attaches for every run whose method would fit the same
    model (SNeRV and PE, :class:`cova.methods.snerv.UsesClassPosterior`). The views below keep it.
    """

    X: np.ndarray | None = None
    labels: np.ndarray | None = None
    label_names: list[str] = field(default_factory=list)
    W: sp.csr_matrix | None = None
    R: np.ndarray | None = None
    prototypes: np.ndarray | None = None
    spec: dict[str, Any] = field(default_factory=dict)
    train: np.ndarray | None = None            # (l,) bool: training rows of a split (W, R cover these only)
    gold_labels: np.ndarray | None = None      # true labels when the cohorts are predicted (Fig. 5)
    gold_prototypes: np.ndarray | None = None  # prototypes from all true labels (Fig. 5 "gold standard")
    labelled: np.ndarray | None = None         # (l,) bool: the samples whose labels were given (Fig. 5)
    relation: Relation | None = None
    degree: np.ndarray | None = None           # (rows of W,) weighted degree before the normalisation of W
    class_posterior: dict[str, np.ndarray] | None = None  # a fitted class-posterior model shared by runs (below)

    @property
    def n_cohorts(self) -> int:
        return len(self.label_names)

    @property
    def n_samples(self) -> int:
        """The number of samples (rows of X, of the labels, of W or of the relation, whichever is present)."""
        if self.X is not None:
            return int(self.X.shape[0])
        if self.labels is not None:
            return int(self.labels.shape[0])
        if self.W is not None:
            return int(self.W.shape[0])
        if self.relation is not None:
            return int(self.relation.shape[0])
        raise ValueError("these inputs hold no per-sample data")

    def available(self) -> set[str]:
        """The names of the fields that are present (a subset of :data:`INPUT_FIELDS`)."""
        return {name for name in INPUT_FIELDS if getattr(self, name) is not None}

    def training(self) -> "Inputs":
        """The inputs restricted to the training rows (what a method is fitted on); ``self`` without a split."""
        if self.train is None:
            return self
        return Inputs(X=None if self.X is None else self.X[self.train],
                      labels=None if self.labels is None else self.labels[self.train], label_names=self.label_names,
                      W=self.W, R=self.R, prototypes=self.prototypes, spec=self.spec, degree=self.degree,
                      class_posterior=self.class_posterior)

    def semi_supervised(self) -> "Inputs":
        """Every row with the labels of a split's test rows hidden: they are set to -1 and ``labelled`` marks the
        training rows (what a method that takes unlabelled samples is fitted on, NeRV Sec. 5.3); ``self`` without
        a split. W, R and Υ are left out: on a split they cover the training rows only."""
        if self.train is None:
            return self
        labels = None
        if self.labels is not None:
            labels = np.where(self.train, self.labels, -1)
        return Inputs(X=self.X, labels=labels, label_names=self.label_names, spec=self.spec,
                      labelled=self.train.copy(), class_posterior=self.class_posterior)

    def save(self, path: str | os.PathLike, *, with_X: bool = False, with_labels: bool = False) -> None:
        """Write every present field and the spec atomically (no pickles). X and the labels are written only
        when the inputs block changed them (otherwise they stay in the dataset file); ``provides`` records which
        fields are present so that :meth:`load` returns ``None`` for the others."""
        extra: dict[str, np.ndarray] = {}
        if self.W is not None:
            W = self.W.tocsr()
            extra.update(W_data=W.data, W_indices=W.indices, W_indptr=W.indptr, W_shape=np.array(W.shape))
        for key in ("R", "prototypes", "degree"):
            if getattr(self, key) is not None:
                extra[key] = getattr(self, key)
        extra["spec"] = np.array(json.dumps(self.spec, sort_keys=True))
        if with_X and self.X is not None:
            extra["X"] = self.X
        if with_labels and self.labels is not None:
            extra.update(labels=self.labels, label_names=np.array(self.label_names, dtype=str))
        for key in ("train", "gold_labels", "gold_prototypes", "labelled"):
            if getattr(self, key) is not None:
                extra[key] = getattr(self, key)
        if self.relation is not None:
            extra.update(self.relation._arrays())
        provided = self.available()
        if provided != {"X", "labels", "W", "R", "prototypes"}:
            extra["provides"] = np.array(sorted(provided), dtype=str)
        save_npz_atomic(path, **extra)

    @classmethod
    def load(cls, dataset_path: str | os.PathLike, inputs_path: str | os.PathLike) -> "Inputs":
        """Read inputs written by :meth:`save`; X and the labels come from the dataset file unless stored."""
        ds = Dataset.load(dataset_path)
        with np.load(inputs_path, allow_pickle=False) as f:
            provided = ({str(v) for v in f["provides"]} if "provides" in f
                        else {"X", "labels", "W", "R", "prototypes"})
            W = (sp.csr_matrix((f["W_data"], f["W_indices"], f["W_indptr"]), shape=tuple(f["W_shape"]))
                 if "W_data" in f else None)
            X = f["X"] if "X" in f else (ds.X if "X" in provided else None)
            if "labels" in f:
                labels, names = f["labels"], [str(n) for n in f["label_names"]]
            elif "labels" in provided:
                labels, names = ds.labels, ds.label_names
            else:
                labels, names = None, []
            optional = {key: f[key] for key in ("train", "gold_labels", "gold_prototypes", "labelled", "R",
                                                "prototypes", "degree") if key in f}
            relation = Relation._from_arrays(f) if "relation_data" in f else None
            return cls(X=X, labels=labels, label_names=names, W=W, spec=json.loads(str(f["spec"])),
                       relation=relation, **optional)


def subset_classes(dataset: Dataset, n_classes: int | None = None, n_per_class: int | None = None,
                   seed: int = 0, classes: list[int | str] | None = None) -> Dataset:
    """A seeded class subset (``inputs.subset``): the given ``classes`` (names or indices, e.g. MNIST's digit-1
    group of featMAP Figs. 1 and 7), or the first ``n_classes`` classes of one random permutation of the classes (so
    5 ⊂ 10 ⊂ 20 for the same seed), kept in ascending class order and renumbered 0..k−1, then at most
    ``n_per_class`` rows of each (:func:`cova.datasets.mnist.per_class_subset`). Rows keep their order."""
    from .datasets.mnist import per_class_subset

    c = dataset.n_cohorts
    keep = np.arange(dataset.n_samples)
    if classes is not None and n_classes is not None:
        raise ValueError("subset takes either 'classes' or 'n_classes', not both")
    if classes is not None:
        names = [str(n) for n in dataset.label_names]
        chosen = []
        for k in classes:
            if isinstance(k, str) and k in names:
                chosen.append(names.index(k))
            elif isinstance(k, int) and not isinstance(k, bool) and 0 <= k < c:
                chosen.append(k)
            else:
                raise ValueError(f"subset.classes: {k!r} is neither a class name of the dataset {names[:20]} nor a "
                                 f"class index in 0..{c - 1}")
        keep = np.flatnonzero(np.isin(dataset.labels, chosen))
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


def stratified_fold(labels: np.ndarray, n_folds: int, fold: int, seed: int = 0) -> np.ndarray:
    """Boolean training mask holding out fold ``fold`` of a seeded stratified ``n_folds``-fold partition
    (scikit-learn's ``StratifiedKFold`` with shuffling): for one seed the test rows of folds 0 … n_folds − 1
    partition the rows."""
    from sklearn.model_selection import StratifiedKFold

    k, f = int(n_folds), int(fold)
    if k < 2:
        raise ValueError(f"split.n_folds must be at least 2, got {k}")
    if not 0 <= f < k:
        raise ValueError(f"split.fold must be in 0 … n_folds − 1 = 0 … {k - 1}, got {f}")
    counts = np.bincount(np.unique(labels, return_inverse=True)[1])
    if counts.min() < k:
        raise ValueError(f"a stratified {k}-fold split needs at least {k} samples in every cohort; the smallest "
                         f"has {int(counts.min())}")
    folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=int(seed)).split(np.zeros(labels.shape[0]), labels)
    test = next(t for i, (_, t) in enumerate(folds) if i == f)
    train = np.ones(labels.shape[0], dtype=bool)
    train[test] = False
    return train


def split_mask(labels: np.ndarray, split: dict[str, Any], seed: int = 0) -> np.ndarray:
    """The training mask of an inputs block's ``split``: ``{train_fraction}`` (:func:`stratified_split`) or
    ``{n_folds, fold}`` (:func:`stratified_fold`)."""
    if "train_fraction" in split:
        return stratified_split(labels, split["train_fraction"], seed=seed)
    return stratified_fold(labels, split["n_folds"], split["fold"], seed=seed)


#: Keys an inputs block may combine with ``graph`` / ``relation`` (the rest belong to vector blocks only).
GRAPH_KEYS = {"graph", "features", "cohorts", "confidence", "prototypes", "subset"}
RELATION_KEYS = {"relation", "subset"}
#: A vector block builds W, R and Υ from these sub-blocks; without any of them it provides only X and the labels
#: (methods that build their own graph from X, e.g. featMAP and its baselines).
VECTOR_BUILT_KEYS = {"weights", "confidence", "prototypes"}
POINTS_KEYS = {"features", "cohorts", "subset", "split"}
#: The keys of the ``relation`` sub-block for each of its sources (co-embedding paper Sec. 4: documents × words,
#: Eq. 44 between two point groups, hop distances of link data).
RELATION_SOURCE_KEYS: dict[str, frozenset[str]] = {
    "X": frozenset({"source"}),
    "points": frozenset({"source", "groups", "width", "split_seed"}),
    "hop_distances": frozenset({"source", "row_fraction", "rounding", "split_seed"}),
}
#: The keys of ``relation.groups`` (source ``points``).
RELATION_GROUP_KEYS = ("rows", "columns", "shared")
#: How ``relation.row_fraction`` of each class is rounded (source ``hop_distances``).
ROUNDINGS = ("round", "floor")


def _check_relation_block(block: Any) -> str:
    """Validate the ``relation`` sub-block's keys and simple values without data; returns its source."""
    if not isinstance(block, dict):
        raise ValueError(f"inputs relation must be a mapping like {{source: X}}, got {block!r}")
    source = block.get("source", "X")
    if source not in RELATION_SOURCE_KEYS:
        raise ValueError(f"inputs relation.source must be one of {sorted(RELATION_SOURCE_KEYS)}, got {source!r}")
    extra = sorted(set(block) - RELATION_SOURCE_KEYS[source])
    if extra:
        raise ValueError(f"inputs relation with source {source!r} does not take {extra}; allowed keys: "
                         f"{sorted(RELATION_SOURCE_KEYS[source])}")
    if "split_seed" in block and (isinstance(block["split_seed"], bool) or not isinstance(block["split_seed"], int)
                                  or block["split_seed"] < 0):
        raise ValueError(f"inputs relation.split_seed must be a non-negative integer, got {block['split_seed']!r}")
    if source == "points":
        groups = block.get("groups")
        if not isinstance(groups, dict) or not groups:
            raise ValueError("inputs relation with source 'points' needs relation.groups: {rows: [...], columns: "
                             "[...], shared: [...]} (cluster ids or names)")
        bad = sorted(set(groups) - set(RELATION_GROUP_KEYS))
        if bad:
            raise ValueError(f"inputs relation.groups does not take {bad}; allowed keys: {list(RELATION_GROUP_KEYS)}")
        for key, ids in groups.items():
            if not isinstance(ids, list) or any(isinstance(v, bool) or not isinstance(v, (int, str)) for v in ids):
                raise ValueError(f"inputs relation.groups.{key} must be a list of cluster ids (integers) or "
                                 f"names, got {ids!r}")
        width = block.get("width", "mean")
        if not (width in ("mean", "median", "max") or (isinstance(width, (int, float)) and not isinstance(width, bool)
                                                       and width > 0)):
            raise ValueError(f"inputs relation.width must be 'mean', 'median', 'max' or a positive number, "
                             f"got {width!r}")
    if source == "hop_distances":
        frac = block.get("row_fraction", 0.4)
        if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac < 1:
            raise ValueError(f"inputs relation.row_fraction must be a number in (0, 1), got {frac!r}")
        if block.get("rounding", "round") not in ROUNDINGS:
            raise ValueError(f"inputs relation.rounding must be one of {list(ROUNDINGS)}, "
                             f"got {block.get('rounding')!r}")
    return source


def block_kind(spec: dict[str, Any]) -> str:
    """``"graph"``, ``"relation"`` or ``"vectors"`` (W built from X): what an inputs block describes."""
    kinds = [k for k in ("graph", "relation") if k in spec]
    if len(kinds) > 1:
        raise ValueError("an inputs block takes either 'graph' or 'relation', not both")
    if kinds and "weights" in spec:
        raise ValueError(f"an inputs block with '{kinds[0]}' takes its affinity from the data; remove 'weights'")
    return kinds[0] if kinds else "vectors"


def provided_inputs(spec: dict[str, Any]) -> set[str]:
    """The :class:`Inputs` fields that :func:`build_inputs` produces for one ``inputs`` block (without building
    them), so that the configuration can be checked against what each method requires before any job runs.

    Raises ``ValueError`` for a combination of keys the block kind does not accept."""
    kind = block_kind(spec)
    split = spec.get("split") or {}
    if "n_folds" in split and not 0 <= int(split.get("fold", -1)) < int(split["n_folds"]):
        raise ValueError(f"split.fold = {split.get('fold')!r} must be in 0 … n_folds − 1 = 0 … "
                         f"{int(split['n_folds']) - 1}")
    if kind == "vectors" and not set(spec) & VECTOR_BUILT_KEYS:
        extra = sorted(set(spec) - POINTS_KEYS)
        if extra:
            raise ValueError(f"an inputs block without weights, confidence and prototypes provides only X and the "
                             f"labels and does not take {extra}; allowed keys: {sorted(POINTS_KEYS)}")
        if (spec.get("cohorts") or {}).get("kind") == "predicted":
            raise ValueError("an inputs block without weights, confidence and prototypes does not take cohorts "
                             "kind 'predicted'")
        return {"X", "labels"}
    if kind == "vectors":
        missing = sorted(VECTOR_BUILT_KEYS - set(spec))
        if missing:
            raise ValueError(f"an inputs block that builds W, R and prototypes needs all of weights, confidence and "
                             f"prototypes; missing {missing} (or remove all three for X and labels only)")
        degree = {"degree"} if "normalize" in (spec.get("weights") or {}) else set()
        return {"X", "labels", "W", "R", "prototypes"} | degree
    allowed = GRAPH_KEYS if kind == "graph" else RELATION_KEYS
    extra = sorted(set(spec) - allowed)
    if extra:
        raise ValueError(f"an inputs block with '{kind}' does not take {extra}; allowed keys: {sorted(allowed)}")
    if kind == "relation":
        _check_relation_block(spec["relation"])
        return {"relation", "labels"}
    if (spec.get("cohorts") or {}).get("kind") == "predicted":
        raise ValueError("an inputs block with 'graph' does not take cohorts kind 'predicted'")
    return {"W", "labels", "degree"} | {name for key, name in (("features", "X"), ("confidence", "R"),
                                                                ("prototypes", "prototypes")) if key in spec}


def _prototype_recipe(block: dict[str, Any], n_cohorts: int, seed: int) -> tuple[str, str, dict[str, Any]]:
    """The generator kind, the feature space (``features`` or ``raw``) and the keyword arguments of
    :func:`cova.cohorts.make_prototypes` for one ``prototypes`` sub-block."""
    p = dict(block)
    given = p.pop("given", None)
    space = p.pop("space", "features")
    kind = p.pop("kind")
    return kind, space, dict(n_cohorts=n_cohorts, random_state=seed,
                             given=None if given is None else np.asarray(given, float), **p)


def _largest_component(dataset: Dataset) -> tuple[Dataset, dict[str, Any]]:
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
    meta = {key: ([value[i] for i in keep] if key in SAMPLE_NAME_KEYS and isinstance(value, list)
                  and len(value) == dataset.n_samples else value) for key, value in dataset.meta.items()}
    kept = Dataset(dataset.X[keep], y, [dataset.label_names[k] for k in present],
                   relations=dataset.relations[keep][:, keep], meta=meta)
    return kept, dict(facts, kept_rows=keep.tolist())


def _graph_degree(A: sp.spmatrix) -> np.ndarray:
    """Σ_{j≠i} (a_ij + a_ji)/2: the row sums of the symmetrised relation matrix with zero diagonal, before any
    normalisation (the weighted degree of every vertex)."""
    A = sp.csr_matrix(A, dtype=np.float64)
    diag = A.diagonal()
    return 0.5 * (np.asarray(A.sum(axis=1)).ravel() + np.asarray(A.sum(axis=0)).ravel()) - diag


def _normalized(W: sp.csr_matrix, normalize: dict[str, Any] | None) -> tuple[sp.csr_matrix, dict[str, Any]]:
    """The ``normalize`` post-step of a unit-sum W (:func:`cova.affinity.normalize_affinity`) and its facts; kind
    ``sum`` (the default) returns W itself, so inputs without ``normalize`` are unchanged."""
    from .affinity import normalize_affinity

    normalize = dict(normalize or {"kind": "sum"})
    if normalize.get("kind", "sum") == "sum":
        if set(normalize) - {"kind"}:
            raise ValueError(f"normalize kind 'sum' takes no parameters, got {sorted(set(normalize) - {'kind'})}")
        return W, {}
    return normalize_affinity(W, **normalize)


def _graph_inputs(dataset: Dataset, spec: dict[str, Any], seed: int) -> Inputs:
    """``graph: {source: relations}``: the dataset's relation matrix A is the affinity itself,
    W = (A + Aᵀ)/2 with zero diagonal and unit sum (:func:`cova.affinity.symmetrize_normalize`), or its doubly
    stochastic form divided by l with ``normalize`` (:func:`cova.affinity.normalize_affinity`). With
    ``largest_component: true`` only the largest connected component of A is kept (DOSNES Sec. 6 does this for
    the NIPS graph). ``degree`` holds the weighted degrees of (A + Aᵀ)/2 before normalisation. X is provided
    only with a ``features`` block, R and Υ only with ``confidence`` / ``prototypes`` blocks (built on this W and
    on the features, the dataset's X by default)."""
    from .affinity import symmetrize_normalize
    from .cohorts import confidence_matrix, make_prototypes
    from .features import assign_cohorts, transform_features

    provided = provided_inputs(spec)
    sub = spec.get("subset")
    source = spec["graph"].get("source", "relations")
    if source != "relations":
        raise ValueError(f"inputs graph.source must be 'relations', got {source!r}")
    A = dataset.relations
    if A is None:
        raise ValueError("inputs graph: {source: relations} needs a dataset with a relation matrix "
                         f"({dataset.meta.get('name', 'this dataset')} has none)")
    if A.shape != (dataset.n_samples,) * 2:
        raise ValueError(f"inputs graph: the relation matrix must be l×l (l = {dataset.n_samples}), got {A.shape}")
    component: dict[str, Any] = {}
    if spec["graph"].get("largest_component", False):
        dataset, component = _largest_component(dataset)
        A = dataset.relations
    W, norm_facts = _normalized(symmetrize_normalize(A), spec["graph"].get("normalize"))
    graph_degree = _graph_degree(A)
    labels, names = assign_cohorts(dataset, spec.get("cohorts"), seed=seed)
    Xf, facts = transform_features(dataset, spec.get("features"), labels=labels, seed=seed)
    degree = np.asarray(W.sum(axis=1)).ravel()
    facts = dict(facts, n_edges=int(sp.triu(W, k=1).nnz), n_isolated=int(np.sum(degree == 0)), **component,
                 **norm_facts)
    R = prototypes = None
    c = len(names)
    if "confidence" in spec or "prototypes" in spec:
        require_cohorts(np.unique(labels).size, "an inputs block with cohort confidences R or prototypes")
    if "confidence" in spec:
        r = dict(spec["confidence"])
        R = confidence_matrix(labels, kind=r.pop("kind"), X=Xf, W=W, n_cohorts=c, **r)
    if "prototypes" in spec:
        kind, space, common = _prototype_recipe(spec["prototypes"], c, seed)
        prototypes = np.asarray(make_prototypes(kind, X=dataset.X if space == "raw" else Xf, W=W, labels=labels,
                                                relations=dataset.relations, **common), dtype=np.float64)
    if sub:
        facts = dict(facts, n_samples=int(labels.shape[0]), n_cohorts=c)
    return Inputs(X=Xf if "X" in provided else None, labels=labels, label_names=names, W=W, R=R,
                  prototypes=prototypes, spec=dict(spec, seed=seed, **facts), degree=graph_degree)


def _nonempty(R: Any) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns of R with a positive sum (the co-embedding normalisations divide by them)."""
    return (np.flatnonzero(np.asarray(R.sum(axis=1)).ravel() > 0),
            np.flatnonzero(np.asarray(R.sum(axis=0)).ravel() > 0))


def _relation_inputs(dataset: Dataset, spec: dict[str, Any], seed: int) -> Inputs:
    """A relation block: the dataset's X as samples × features (``source: X``), Eq. 44 between two groups of its
    points (``source: points``) or the hop-distance relation of its link graph (``source: hop_distances``).
    All-zero rows and columns are dropped (the co-embedding normalisations divide by the row and column sums);
    their counts are recorded in the spec facts, and ``labels`` are those of the kept rows."""
    provided_inputs(spec)
    source = spec["relation"].get("source", "X")
    if source == "points":
        return _point_relation_inputs(dataset, spec, seed)
    if source == "hop_distances":
        return _hop_relation_inputs(dataset, spec, seed)
    if np.any(dataset.X < 0):
        raise ValueError("inputs relation: {source: X} needs a non-negative X")
    M = sp.csr_matrix(dataset.X)
    rows, cols = _nonempty(M)
    present, y = np.unique(dataset.labels[rows], return_inverse=True)
    names = [dataset.label_names[k] for k in present]
    sample_names, feature_names = dataset.sample_names, dataset.feature_names
    relation = Relation(M[rows][:, cols], [sample_names[i] for i in rows], [feature_names[j] for j in cols],
                        row_labels=y, row_label_names=names)
    facts = {"n_rows": int(rows.size), "n_columns": int(cols.size),
             "n_empty_rows_dropped": int(dataset.n_samples - rows.size),
             "n_empty_columns_dropped": int(dataset.X.shape[1] - cols.size)}
    if rows.size < dataset.n_samples:
        facts["kept_rows"] = rows.tolist()
    return Inputs(labels=y, label_names=names, relation=relation, spec=dict(spec, seed=seed, **facts))


def _two_group_inputs(dataset: Dataset, spec: dict[str, Any], seed: int, R: np.ndarray, row_idx: np.ndarray,
                      col_idx: np.ndarray, facts: dict[str, Any], points: bool,
                      origin: np.ndarray | None = None) -> Inputs:
    """Inputs of a relation between two groups of the dataset's samples (rows ``row_idx``, columns ``col_idx``):
    empty rows and columns dropped, both sides labelled with the dataset's classes and named by its samples. The
    facts ``row_samples`` / ``column_samples`` give each side's samples as indices of the loaded dataset
    (``origin`` maps the indices of a cut dataset back to them)."""
    rows, cols = _nonempty(R)
    ri, ci = row_idx[rows], col_idx[cols]
    names = list(dataset.label_names)
    sample_names = dataset.sample_names
    relation = Relation(sp.csr_matrix(R[np.ix_(rows, cols)]), [sample_names[i] for i in ri],
                        [sample_names[j] for j in ci], row_labels=dataset.labels[ri], row_label_names=names,
                        column_labels=dataset.labels[ci], column_label_names=names,
                        row_points=dataset.X[ri] if points else None, column_points=dataset.X[ci] if points else None)
    facts = dict(facts, n_rows=int(rows.size), n_columns=int(cols.size),
                 n_empty_rows_dropped=int(row_idx.size - rows.size),
                 n_empty_columns_dropped=int(col_idx.size - cols.size),
                 row_samples=(ri if origin is None else origin[ri]).tolist(),
                 column_samples=(ci if origin is None else origin[ci]).tolist())
    return Inputs(labels=dataset.labels[ri], label_names=names, relation=relation,
                  spec=dict(spec, seed=seed, **facts))


def _cluster_index(dataset: Dataset, value: int | str, key: str) -> int:
    if isinstance(value, str):
        if value not in dataset.label_names:
            raise ValueError(f"inputs relation.groups.{key}: unknown cluster {value!r}; the clusters are "
                             f"{dataset.label_names}")
        return dataset.label_names.index(value)
    if not 0 <= value < dataset.n_cohorts:
        raise ValueError(f"inputs relation.groups.{key}: cluster id {value} is not in 0..{dataset.n_cohorts - 1} "
                         f"(clusters {dataset.label_names})")
    return int(value)


def _point_relation_inputs(dataset: Dataset, spec: dict[str, Any], seed: int) -> Inputs:
    """``relation: {source: points, groups: {rows, columns, shared}, width: mean}``: the dataset's points split
    into the row group (clusters in ``rows``, and a random half of each cluster in ``shared``) and the column group
    (``columns``, the other half of ``shared``: the co-clusters), and r_ij = exp(−‖x_i − y_j‖² / s) with s the mean
    squared distance (co-embedding paper Eq. 44; :func:`cova.affinity.relation.gaussian_relation`). Each shared
    cluster of size n_c gives ⌊n_c/2⌋ rows, drawn with ``split_seed`` (default: the inputs seed)."""
    from .affinity.relation import gaussian_relation

    block = spec["relation"]
    groups = block["groups"]
    side: dict[int, str] = {}
    for key in RELATION_GROUP_KEYS:
        for value in groups.get(key, []):
            j = _cluster_index(dataset, value, key)
            if j in side:
                raise ValueError(f"inputs relation.groups: cluster {dataset.label_names[j]!r} (id {j}) is listed "
                                 f"more than once (in {side[j]!r} and {key!r}); list every cluster exactly once")
            side[j] = key
    missing = [dataset.label_names[j] for j in range(dataset.n_cohorts) if j not in side]
    if missing:
        raise ValueError(f"inputs relation.groups: clusters {missing} are not listed; list every cluster exactly "
                         f"once under rows, columns or shared")
    split_seed = int(block.get("split_seed", seed))
    rng = np.random.default_rng(split_seed)
    in_rows = np.zeros(dataset.n_samples, dtype=bool)
    in_cols = np.zeros(dataset.n_samples, dtype=bool)
    for j in range(dataset.n_cohorts):
        members = np.flatnonzero(dataset.labels == j)
        if side[j] == "rows":
            in_rows[members] = True
        elif side[j] == "columns":
            in_cols[members] = True
        else:
            chosen = rng.permutation(members)[: members.size // 2]
            in_rows[chosen] = True
            in_cols[np.setdiff1d(members, chosen)] = True
    row_idx, col_idx = np.flatnonzero(in_rows), np.flatnonzero(in_cols)
    if row_idx.size == 0 or col_idx.size == 0:
        raise ValueError("inputs relation.groups leaves the row or the column group empty; put at least one "
                         "cluster (or a shared cluster of 2 or more points) on each side")
    R, scale = gaussian_relation(dataset.X[row_idx], dataset.X[col_idx], block.get("width", "mean"))
    names = dataset.label_names
    facts = {"split_seed": split_seed, "relation_scale": scale,
             "group_of_cluster": {names[j]: side[j] for j in range(dataset.n_cohorts)},
             "rows_per_cluster": {names[j]: int(np.sum(dataset.labels[row_idx] == j)) for j in range(len(names))},
             "columns_per_cluster": {names[j]: int(np.sum(dataset.labels[col_idx] == j)) for j in range(len(names))}}
    return _two_group_inputs(dataset, spec, seed, R, row_idx, col_idx, facts, points=True)


def _hop_relation_inputs(dataset: Dataset, spec: dict[str, Any], seed: int) -> Inputs:
    """``relation: {source: hop_distances, row_fraction: 0.4, rounding: round, split_seed: s}``: link data as in
    the co-embedding paper's Sec. 4.3. The dataset's relation graph is made undirected (A + Aᵀ > 0, no self loops)
    and cut to its largest connected component; per class, round(row_fraction·n_c) (``rounding: floor``:
    ⌊row_fraction·n_c⌋) random members, drawn with ``split_seed`` (default: the inputs seed), form the row group,
    the rest the column group; D holds the hop counts between the groups, t = mean(D) and R = exp(−D/t)
    (:func:`cova.affinity.relation.hop_distance_relation`)."""
    from .affinity.relation import hop_distance_relation, symmetric_adjacency

    block = spec["relation"]
    if dataset.relations is None:
        raise ValueError("inputs relation: {source: hop_distances} needs a dataset with a relation (link) matrix "
                         f"({dataset.meta.get('name', 'this dataset')} has none)")
    if dataset.relations.shape != (dataset.n_samples,) * 2:
        raise ValueError(f"inputs relation: {{source: hop_distances}} needs an l×l relation matrix "
                         f"(l = {dataset.n_samples}), got {dataset.relations.shape}")
    dataset, component = _largest_component(dataset)
    A = symmetric_adjacency(dataset.relations)
    fraction = float(block.get("row_fraction", 0.4))
    rounding = block.get("rounding", "round")
    split_seed = int(block.get("split_seed", seed))
    rng = np.random.default_rng(split_seed)
    in_rows = np.zeros(dataset.n_samples, dtype=bool)
    for j in range(dataset.n_cohorts):
        members = np.flatnonzero(dataset.labels == j)
        k = int(np.floor(fraction * members.size + (0.5 if rounding == "round" else 0.0)))
        in_rows[rng.choice(members, size=k, replace=False)] = True
    row_idx, col_idx = np.flatnonzero(in_rows), np.flatnonzero(~in_rows)
    if row_idx.size == 0 or col_idx.size == 0:
        raise ValueError(f"inputs relation.row_fraction={fraction} leaves the row or the column group empty")
    R, D, t = hop_distance_relation(A, row_idx, col_idx)
    facts = {"split_seed": split_seed, "row_fraction": fraction, "rounding": rounding, "t": t,
             "max_hop_distance": int(D.max()), "lcc_size": int(dataset.n_samples),
             "lcc_edges": int(sp.triu(A, k=1).nnz), **component,
             "rows_per_class": np.bincount(dataset.labels[row_idx], minlength=dataset.n_cohorts).tolist(),
             "columns_per_class": np.bincount(dataset.labels[col_idx], minlength=dataset.n_cohorts).tolist()}
    origin = np.asarray(facts.pop("kept_rows")) if "kept_rows" in facts else None
    return _two_group_inputs(dataset, spec, seed, R, row_idx, col_idx, facts, points=False, origin=origin)


def build_inputs(dataset: Dataset, spec: dict[str, Any], seed: int = 0) -> Inputs:
    """Build the inputs for ``dataset`` from one config ``inputs`` block (see the module docstring); graph and
    relation blocks go to their own builders, a vector block builds W, R and Υ from X as follows.

    Each sub-block is ``{kind: ..., **parameters}``; ``seed`` seeds every random step (kNN descent, t-SNE
    prototypes, spectral clustering, subsets, splits, labelled samples, random prototypes). ``prototypes.space``
    is ``features`` (default: cohort proximity from the transformed X) or ``raw`` (from the dataset's X, e.g.
    Cora's cluster centres in word space, H.3).

    ``cohorts: {kind: predicted, labelled_per_class: n}`` (COVA Fig. 5): the features are computed first
    (they must not use labels, so ``compacted`` is refused), the unlabelled samples take the 1-NN label of the
    labelled ones in that space, R is built from these input labels, and the **input prototypes** from the
    labelled samples only (Eq. 6 on W restricted to them, their true labels); the **gold-standard prototypes**
    use every sample's true label on the full W.
    """
    from .affinity import build_weights
    from .cohorts import confidence_matrix, make_prototypes
    from .features import assign_cohorts, predict_cohorts, transform_features

    kind = block_kind(spec)
    sub = spec.get("subset")
    if sub:
        dataset = subset_classes(dataset, sub.get("n_classes"), sub.get("n_per_class"), seed=seed,
                                 classes=sub.get("classes"))
    if kind == "graph":
        return _graph_inputs(dataset, spec, seed)
    if kind == "relation":
        return _relation_inputs(dataset, spec, seed)
    if provided_inputs(spec) == {"X", "labels"}:
        labels, names = assign_cohorts(dataset, spec.get("cohorts"), seed=seed)
        train = split_mask(labels, spec["split"], seed=seed) if spec.get("split") else None
        X, facts = transform_features(dataset, spec.get("features"), labels=labels, seed=seed, fit_rows=train)
        if sub:
            facts = dict(facts, n_samples=int(labels.shape[0]), n_cohorts=len(names))
        if train is not None:
            facts = dict(facts, n_train=int(train.sum()), n_test=int((~train).sum()))
        return Inputs(X=X, labels=labels, label_names=names, spec=dict(spec, seed=seed, **facts), train=train)
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
    require_cohorts(c, "an inputs block with cohort confidences R and prototypes")
    counts = np.bincount(labels, minlength=c)
    if np.any(counts < 2):
        empty = [names[j] for j in np.flatnonzero(counts < 2)]
        raise ValueError(f"cohorts {empty} have fewer than 2 samples; COVA's scores and Eq. 10 need at least 2")
    train = split_mask(labels, split, seed=seed) if split else None
    if not predicted:
        X, facts = transform_features(dataset, spec.get("features"), labels=labels, seed=seed, fit_rows=train)
    rows = np.arange(labels.shape[0]) if train is None else np.flatnonzero(train)
    Xt, yt = X[rows], labels[rows]
    w = dict(spec.get("weights", {"kind": "euclidean_max"}))
    normalize = w.pop("normalize", None)
    W = build_weights(Xt, w.pop("kind"), labels=yt, random_state=seed, **w)
    degree = None
    if normalize is not None:
        degree = W.shape[0] * np.asarray(W.sum(axis=1)).ravel()
        W, norm_facts = _normalized(W, normalize)
        facts = dict(facts, **norm_facts)
    r = dict(spec.get("confidence", {"kind": "eq12"}))
    R = confidence_matrix(yt, kind=r.pop("kind"), X=Xt, W=W, n_cohorts=c, **r)
    kind, space, common = _prototype_recipe(spec.get("prototypes", {"kind": "tsne"}), c, seed)
    Xp = (dataset.X if space == "raw" else X)[rows]
    relations = dataset.relations if train is None or dataset.relations is None else \
        dataset.relations[rows][:, rows]
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
                  gold_prototypes=None if gold is None else np.asarray(gold, dtype=np.float64), labelled=labelled,
                  degree=degree)
