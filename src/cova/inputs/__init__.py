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

:func:`array_inputs` builds the inputs of a method fitted on plain arrays (``Est().fit(X, y)``) with the default
block of what the method reads (:mod:`.defaults`: the Places2 protocol for W, R and Υ).

The package: :mod:`.types` (:class:`Inputs`, :class:`Relation`), :mod:`.blocks` (the block's declaration and
combination rules), one builder per block kind (:mod:`.vectors`, :mod:`.graph`, :mod:`.relation`), the steps they
share (:mod:`.steps`) and the data restrictions (:mod:`.subsets`: class subsets, splits, the largest component).
Every sub-block declares its options beside the code that reads it (:mod:`cova.constraints`).
"""
from __future__ import annotations

from ..lazy import LazyNames
from .types import COHORT_INPUTS, INPUT_FIELDS, Inputs, Relation, require_cohorts

#: The builders and the block's declaration, imported on first use: they declare their options
#: (:mod:`cova.constraints`, which imports scikit-learn), and a job that only reads inputs (every score job) should
#: not pay for that import.
_LAZY = {"INPUTS_BLOCK": "blocks", "block_kind": "blocks", "check_inputs_block": "blocks",
         "provided_inputs": "blocks", "build_inputs": "build", "largest_component": "subsets",
         "split_mask": "subsets", "stratified_fold": "subsets", "stratified_split": "subsets",
         "subset_classes": "subsets",
         "array_inputs": "defaults", "default_block": "defaults"}

__all__ = ["COHORT_INPUTS", "INPUT_FIELDS", "Inputs", "Relation", "require_cohorts", *_LAZY]
__getattr__ = LazyNames(__name__, _LAZY).module_getattr
