"""The inputs every method receives: data X, cohort labels, local weights W, confidences R, prototypes Υ.

``build_inputs`` turns one ``inputs`` block of the config into these arrays (COVA Sec. 3.1.1-3.1.3):

```yaml
weights:    {kind: euclidean_max, n_neighbors: 50}          # W, spec §2.1 (sparse kNN graph)
confidence: {kind: eq12, source: eq9, lambda_p: 0.01}        # R, Eqs. 9-12
prototypes: {kind: tsne, proximity: centres_gaussian, rho: 3} # Υ from D (Eqs. 4-6)
features:   {kind: pca, n_components: 30}                    # optional, cova.features (default raw)
cohorts:    {kind: spectral, n_clusters: 20}                 # optional, cova.features (default: dataset labels)
```

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

    @property
    def n_cohorts(self) -> int:
        return len(self.label_names)

    def save(self, path: str | os.PathLike, *, with_X: bool = False, with_labels: bool = False) -> None:
        """Write W, R, Υ and the spec atomically; X and the labels only when the inputs block changed them
        (otherwise they stay in the dataset file)."""
        W = self.W.tocsr()
        extra: dict[str, np.ndarray] = {}
        if with_X:
            extra["X"] = self.X
        if with_labels:
            extra.update(labels=self.labels, label_names=np.array(self.label_names, dtype=str))
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
            return cls(X=X, labels=labels, label_names=names, W=W, R=f["R"], prototypes=f["prototypes"],
                       spec=json.loads(str(f["spec"])))


def build_inputs(dataset: Dataset, spec: dict[str, Any], seed: int = 0) -> Inputs:
    """Build W, R and Υ for ``dataset`` from one config ``inputs`` block (see the module docstring).

    Each sub-block is ``{kind: ..., **parameters}``; ``seed`` seeds every random step (kNN descent, t-SNE
    prototypes, spectral clustering). ``prototypes.space`` is ``features`` (default: cohort proximity from the
    transformed X) or ``raw`` (from the dataset's X, e.g. Cora's cluster centres in word space, H.3).
    """
    from .affinity import build_weights
    from .cohorts import confidence_matrix, make_prototypes
    from .features import assign_cohorts, transform_features

    labels, names = assign_cohorts(dataset, spec.get("cohorts"), seed=seed)
    c = len(names)
    counts = np.bincount(labels, minlength=c)
    if np.any(counts < 2):
        empty = [names[j] for j in np.flatnonzero(counts < 2)]
        raise ValueError(f"cohorts {empty} have fewer than 2 samples; COVA's scores and Eq. 10 need at least 2")
    X, facts = transform_features(dataset, spec.get("features"), labels=labels, seed=seed)
    w = dict(spec.get("weights", {"kind": "euclidean_max"}))
    W = build_weights(X, w.pop("kind"), labels=labels, random_state=seed, **w)
    r = dict(spec.get("confidence", {"kind": "eq12"}))
    R = confidence_matrix(labels, kind=r.pop("kind"), X=X, W=W, n_cohorts=c, **r)
    p = dict(spec.get("prototypes", {"kind": "tsne"}))
    given = p.pop("given", None)
    space = p.pop("space", "features")
    prototypes = make_prototypes(p.pop("kind"), X=dataset.X if space == "raw" else X, W=W, labels=labels,
                                 n_cohorts=c, random_state=seed, relations=dataset.relations,
                                 given=None if given is None else np.asarray(given, float), **p)
    return Inputs(X=X, labels=labels, label_names=names, W=W, R=R,
                  prototypes=np.asarray(prototypes, dtype=np.float64), spec=dict(spec, seed=seed, **facts))
