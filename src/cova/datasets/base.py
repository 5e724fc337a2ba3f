"""The one type every dataset loader returns, and its on-disk form (``data/processed/{dataset}.npz``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..io import save_npz_atomic


@dataclass
class Dataset:
    """A labelled data set.

    Attributes
    ----------
    X : (l, d) float64 array of input features.
    labels : (l,) int64 array of cohort indices in ``0..c-1``.
    label_names : c names, ``label_names[j]`` names cohort ``j``.
    relations : optional sparse (l, l) relation matrix (e.g. Cora's citations), ``None`` if absent.
    meta : JSON-serialisable facts about the data (source, generator parameters, subset used, ...).
    """

    X: np.ndarray
    labels: np.ndarray
    label_names: list[str]
    relations: sp.csr_matrix | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.X = np.ascontiguousarray(self.X, dtype=np.float64)
        self.labels = np.asarray(self.labels, dtype=np.int64)
        self.label_names = [str(n) for n in self.label_names]
        if self.X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {self.X.shape}")
        if self.labels.shape != (self.X.shape[0],):
            raise ValueError(f"labels must have shape ({self.X.shape[0]},), got {self.labels.shape}")
        if not np.all(np.isfinite(self.X)):
            bad = int((~np.isfinite(self.X)).any(axis=1).sum())
            raise ValueError(f"X has {bad} rows with NaN or infinite values; clean or impute them first")
        c = len(self.label_names)
        if self.labels.size and (self.labels.min() < 0 or self.labels.max() >= c):
            raise ValueError(f"labels must lie in 0..{c - 1} (one name per cohort)")
        if self.relations is not None:
            self.relations = sp.csr_matrix(self.relations)

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_cohorts(self) -> int:
        return len(self.label_names)

    def save(self, path: str | os.PathLike) -> None:
        """Write the dataset to ``path`` (an ``.npz``) atomically: temporary file, then rename."""
        arrays: dict[str, Any] = {
            "X": self.X,
            "labels": self.labels,
            "label_names": np.array(self.label_names, dtype=str),
            "meta": np.array(json.dumps(self.meta, sort_keys=True)),
        }
        if self.relations is not None:
            rel = self.relations.tocsr()
            arrays.update(rel_data=rel.data, rel_indices=rel.indices, rel_indptr=rel.indptr,
                          rel_shape=np.array(rel.shape))
        save_npz_atomic(path, **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Dataset":
        """Read a dataset written by :meth:`save` (no pickles are ever loaded)."""
        with np.load(path, allow_pickle=False) as f:
            relations = None
            if "rel_data" in f:
                relations = sp.csr_matrix((f["rel_data"], f["rel_indices"], f["rel_indptr"]),
                                          shape=tuple(f["rel_shape"]))
            return cls(X=f["X"], labels=f["labels"], label_names=list(f["label_names"]),
                       relations=relations, meta=json.loads(str(f["meta"])))
