"""The types every method receives: :class:`Inputs` (data X, cohort labels, an affinity graph W, confidences R,
prototypes Υ, a rectangular :class:`Relation`), and the cohort requirement shared by the builders and the config
check."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..datasets.base import Dataset
from ..errors import UserError
from ..io import read_npz, save_npz_atomic

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
        raise UserError(f"{who}: at least 2 cohorts are needed, but the data has {n_cohorts}; with one cohort there "
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
            raise UserError("a relation matrix must have finite, non-negative entries")
        self.row_names = [str(v) for v in self.row_names]
        self.column_names = [str(v) for v in self.column_names]
        if len(self.row_names) != m or len(self.column_names) != n:
            raise UserError(f"a {m}×{n} relation needs {m} row names and {n} column names, got "
                             f"{len(self.row_names)} and {len(self.column_names)}")
        for side, size in (("row", m), ("column", n)):
            labels = getattr(self, f"{side}_labels")
            if labels is not None:
                labels = np.asarray(labels, dtype=np.int64)
                setattr(self, f"{side}_labels", labels)
                names = getattr(self, f"{side}_label_names")
                if labels.shape != (size,) or (size and (labels.min() < 0 or labels.max() >= len(names))):
                    raise UserError(f"{side} labels must be {size} indices into the {len(names)} {side} label names")
            points = getattr(self, f"{side}_points")
            if points is not None:
                points = np.asarray(points, dtype=np.float64)
                setattr(self, f"{side}_points", points)
                if points.ndim != 2 or points.shape[0] != size:
                    raise UserError(f"{side} points must be a 2-D array with {size} rows, got shape {points.shape}")

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
    model (SNeRV and PE, :class:`cova.methods.base.UsesClassPosterior`). The views below keep it.
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
        raise UserError("these inputs hold no per-sample data")

    def available(self) -> set[str]:
        """The names of the fields that are present (a subset of :data:`INPUT_FIELDS`)."""
        return {name for name in INPUT_FIELDS if getattr(self, name) is not None}

    def row_names(self, dataset: Dataset) -> list[str]:
        """The names of the rows these inputs hold (the rows a method embeds), built from ``dataset`` (the one
        they were built from): a relation's row names; otherwise the dataset's :attr:`~Dataset.sample_names` of
        the rows the block kept, its class ``subset`` (replayed with the recorded seed) and then the ``kept_rows``
        of a largest component."""
        from .subsets import subset_classes

        if self.relation is not None:
            return list(self.relation.row_names)
        if self.spec.get("subset") is not None:
            dataset = subset_classes(dataset, seed=int(self.spec.get("seed", 0)), **self.spec["subset"])
        names = dataset.sample_names
        if self.spec.get("kept_rows") is not None:
            names = [names[i] for i in self.spec["kept_rows"]]
        if len(names) != self.n_samples:
            raise UserError(f"the inputs hold {self.n_samples} rows but {len(names)} names follow from the dataset "
                             f"{dataset.meta.get('name', '')!r}: were they built from another dataset file?")
        return names

    def feature_names(self, dataset: Dataset) -> list[str]:
        """One name per column of X: the dataset's :attr:`~Dataset.feature_names` when the block kept its features
        (``features`` absent or ``raw``), else ``"<kind> j"`` (j = 1, 2, ...) for the columns a transform made."""
        if self.X is None:
            raise UserError("these inputs hold no features X")
        kind = (self.spec.get("features") or {}).get("kind", "raw")
        if kind == "raw" and self.X.shape[1] == dataset.X.shape[1]:
            return dataset.feature_names
        return [f"{kind} {j + 1}" for j in range(self.X.shape[1])]

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
        with read_npz(inputs_path, "inputs file") as f:
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

