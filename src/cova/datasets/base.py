"""The one type every dataset loader returns, and its on-disk form (``data/processed/{dataset}.npz``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import UserError
from ..io import FileError, arrays_digest, read_npz, save_npz_atomic

#: ``meta`` keys that may hold one name per sample, in order of preference.
SAMPLE_NAME_KEYS = ("sample_names", "paper_ids", "vertex_names")


@dataclass
class Dataset:
    """A labelled data set.

    Attributes
    ----------
    X : (l, d) float64 array of input features.
    labels : (l,) int64 array of cohort indices in ``0..c-1``.
    label_names : c names, ``label_names[j]`` names cohort ``j``.
    relations : optional sparse (l, l) relation matrix (e.g. Cora's citations), ``None`` if absent.
    meta : JSON-serialisable facts about the data (source, generator parameters, subset used, ...); optional
        ``sample_names`` / ``feature_names`` lists name the rows / columns of X (see :attr:`sample_names`).
    ground_truth : optional (l, q) float64 array of known latent coordinates (e.g. the pose and lighting of
        rendered faces, NeRV Fig. 8), against which neighbourhood measures can be computed instead of X;
        ``meta["ground_truth_names"]`` may name its columns. ``None`` if the data have none.
    """

    X: np.ndarray
    labels: np.ndarray
    label_names: list[str]
    relations: sp.csr_matrix | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    ground_truth: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.X = np.ascontiguousarray(self.X, dtype=np.float64)
        self.labels = np.asarray(self.labels, dtype=np.int64)
        self.label_names = [str(n) for n in self.label_names]
        if self.X.ndim != 2:
            raise UserError(f"X must be 2-D, got shape {self.X.shape}")
        if self.labels.shape != (self.X.shape[0],):
            raise UserError(f"labels must have shape ({self.X.shape[0]},), got {self.labels.shape}")
        if not np.all(np.isfinite(self.X)):
            bad = int((~np.isfinite(self.X)).any(axis=1).sum())
            raise UserError(f"X has {bad} rows with NaN or infinite values; clean or impute them first")
        c = len(self.label_names)
        if self.labels.size and (self.labels.min() < 0 or self.labels.max() >= c):
            raise UserError(f"labels must lie in 0..{c - 1} (one name per cohort)")
        if self.relations is not None:
            self.relations = sp.csr_matrix(self.relations)
        if self.ground_truth is not None:
            self.ground_truth = np.ascontiguousarray(self.ground_truth, dtype=np.float64)
            if self.ground_truth.ndim != 2 or self.ground_truth.shape[0] != self.X.shape[0]:
                raise UserError(f"ground_truth must have shape ({self.X.shape[0]}, q), got {self.ground_truth.shape}")
            if not np.all(np.isfinite(self.ground_truth)):
                raise UserError("ground_truth has NaN or infinite values")

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_cohorts(self) -> int:
        return len(self.label_names)

    @property
    def sample_names(self) -> list[str]:
        """One name per sample: ``meta["sample_names"]``, else the identifiers a loader recorded
        (``paper_ids``, ``vertex_names``), else ``"sample i"``."""
        for key in SAMPLE_NAME_KEYS:
            names = self.meta.get(key)
            if isinstance(names, list) and len(names) == self.n_samples:
                return [str(v) for v in names]
        return [f"sample {i}" for i in range(self.n_samples)]

    @property
    def feature_names(self) -> list[str]:
        """One name per column of X: ``meta["feature_names"]`` if a loader recorded it, else the feature columns of
        a delimited text file (``meta["features"]``, the ``generic`` loader), else ``"feature j"``."""
        for key in ("feature_names", "features"):
            names = self.meta.get(key)
            if isinstance(names, list) and len(names) == self.X.shape[1]:
                return [str(v) for v in names]
        return [f"feature {j}" for j in range(self.X.shape[1])]

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
        if self.ground_truth is not None:
            arrays["ground_truth"] = self.ground_truth
        save_npz_atomic(path, **arrays, sha256=np.array(arrays_digest(arrays)))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Dataset":
        """Read a dataset written by :meth:`save` (no pickles are ever loaded), verified against the SHA-256 of its
        arrays that :meth:`save` stored, as raw files are against their manifest. A missing, truncated, damaged or
        altered file raises :class:`~cova.io.FileError` naming it and what to do."""
        with read_npz(path, "processed dataset") as f:
            arrays = {key: f[key] for key in f.files}
        stored = arrays.pop("sha256", None)
        if stored is not None and str(stored) != arrays_digest(arrays):
            raise FileError(f"processed dataset {path} does not match the checksum stored with it (damaged or "
                            "altered since it was written); delete it and run the workflow again, which writes it "
                            "anew")
        try:
            relations = None
            if "rel_data" in arrays:
                relations = sp.csr_matrix((arrays["rel_data"], arrays["rel_indices"], arrays["rel_indptr"]),
                                          shape=tuple(arrays["rel_shape"]))
            return cls(X=arrays["X"], labels=arrays["labels"], label_names=list(arrays["label_names"]),
                       relations=relations, meta=json.loads(str(arrays["meta"])),
                       ground_truth=arrays.get("ground_truth"))
        except KeyError as err:
            raise FileError(f"processed dataset {path} lacks the array {err.args[0]!r} (written by another version, "
                            "or damaged); delete it and run the workflow again, which writes it anew") from None
        except ValueError as err:
            raise FileError(f"processed dataset {path} is not a dataset this version can read ({err}); delete it "
                            "and run the workflow again, which writes it anew") from None
