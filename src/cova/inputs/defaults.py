"""The inputs of a method fitted on plain arrays (``Est().fit(X, y)``, :class:`cova.methods.Embedder`): the default
inputs blocks, and the arrays turned into :class:`~.types.Inputs` through :func:`~.build.build_inputs`, the same
builder the workflow runs, so that a fit on arrays and a fit on the workflow's inputs of the same block and seed are
the same fit.

Which block is used depends on what the method reads (:meth:`cova.methods.Embedder.requires`):

- a **relation** (the co-embedding methods): :data:`RELATION_BLOCK`, X is the m×n non-negative relation;
- **W, R, prototypes or degree** (COVA, t-SNE on a graph, DOSNES, Laplacian eigenmaps, MMA): :data:`VECTOR_BLOCK`,
  the Places2 protocol of COVA Sec. 4.2 (``graph_tsne`` in ``config.yaml``): W the perplexity-30 Gaussian kNN graph
  (Sec. 3.1.1), R by Eqs. 10-11 with λ_p = 0.01, prototypes Υ by t-SNE of the cohort graph of Eq. 6 at RMS radius
  ρ = 3. It is the default because it needs nothing but X and the labels (no hand-placed prototypes, no citation
  graph, no dataset-specific features) and it is the protocol the paper uses on its largest real data; its W is the
  graph t-SNE itself calibrates, so that COVA and t-SNE compare on one graph;
- **X and labels only** (every other method, which builds its own graph from X): :data:`POINTS_BLOCK`.

Any other inputs block of the configuration's form may be passed instead (``fit(X, y, inputs={...})``); it is
checked against its declaration (:func:`~.blocks.check_inputs_block`) like a configured one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..datasets.base import Dataset
from ..errors import UserError
from .types import COHORT_INPUTS, Inputs

#: The Places2 protocol (COVA Sec. 4.2; ``config.yaml``'s ``graph_tsne``): the default for methods that read W, R or Υ.
VECTOR_BLOCK: dict[str, Any] = {
    "weights": {"kind": "gaussian_perplexity", "perplexity": 30},
    "confidence": {"kind": "eq11", "lambda_p": 0.01},
    "prototypes": {"kind": "tsne", "proximity": "graph", "rho": 3},
}
#: X and the labels only: the default for methods that build their own graph from X.
POINTS_BLOCK: dict[str, Any] = {}
#: X itself is the relation (rows = samples, columns = features): the default for the co-embedding methods.
RELATION_BLOCK: dict[str, Any] = {"relation": {"source": "X"}}
#: The inputs that only the vector block builds from X.
GRAPH_INPUTS = frozenset({"W", "R", "prototypes", "degree"})


def default_block(requires: tuple[str, ...] | set[str]) -> dict[str, Any]:
    """The default inputs block of a method that reads ``requires`` (the module docstring says which and why)."""
    need = set(requires)
    if "relation" in need:
        return RELATION_BLOCK
    if need & GRAPH_INPUTS:
        return VECTOR_BLOCK
    return POINTS_BLOCK


def encode_labels(y: Any, n_samples: int) -> tuple[np.ndarray, list[Any]]:
    """Labels of any hashable type as indices 0..c-1 and the c original values (sorted when they can be compared,
    else in order of appearance); a ``ValueError`` for a length other than ``n_samples`` or a missing label."""
    values = pd.Series(np.asarray(y, dtype=object).ravel().tolist(), dtype=object)
    if len(values) != n_samples:
        raise UserError(f"y has {len(values)} labels but X has {n_samples} rows")
    if values.isna().any():
        raise UserError(f"y has {int(values.isna().sum())} missing labels (None or NaN); every row needs one")
    try:
        codes, classes = pd.factorize(values, sort=True)
    except TypeError:  # labels of types that cannot be ordered
        codes, classes = pd.factorize(values, sort=False)
    return np.asarray(codes, dtype=np.int64), list(classes)


def array_inputs(X: Any, y: Any, requires: tuple[str, ...] | set[str], who: str,
                 block: dict[str, Any] | None = None, seed: int = 0) -> tuple[Inputs, list[Any]]:
    """The :class:`~.types.Inputs` a method reading ``requires`` is fitted on, built from the arrays X (l, d) (for a
    relation method: the m×n non-negative relation, dense or scipy sparse) and the optional labels ``y`` by
    :func:`~.build.build_inputs` with ``block`` (default :func:`default_block`) and ``seed``.

    ``who`` names the method in the errors: a method that reads the cohorts (labels, R or Υ) refuses ``y=None``;
    without labels, a method that reads W alone gets the block's W (with its ``features``), built by the same step as
    in a vector block (:func:`~.steps.weights_graph`); a relation with an all-zero row or column is refused (the
    block would drop it, and the embedding would not have a row per row of X). Returns the inputs and the original
    label values of the cohorts 0..c-1 (empty without ``y``)."""
    from .blocks import check_inputs_block
    from .build import build_inputs
    from .relation import nonempty
    from .steps import weights_graph

    need = set(requires)
    block = dict(default_block(need) if block is None else block)
    if y is None and need & (COHORT_INPUTS | {"labels"}):
        raise UserError(f"{who} needs labels y (it reads {', '.join(sorted(need & (COHORT_INPUTS | {'labels'})))}); "
                         f"call fit(X, y) with one label per row of X")
    if sp.issparse(X):
        X = X.toarray()
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    labels, classes = (np.zeros(n, dtype=np.int64), []) if y is None else encode_labels(y, n)
    if "relation" in need:
        rows, cols = nonempty(sp.csr_matrix(X))
        if rows.size < X.shape[0] or cols.size < X.shape[1]:
            raise UserError(f"{who}: the relation X has {X.shape[0] - rows.size} all-zero rows and "
                             f"{X.shape[1] - cols.size} all-zero columns; the co-embedding normalisations divide by "
                             f"the row and column sums, so drop them first")
    dataset = Dataset(X=X, labels=labels, label_names=[str(c) for c in classes] or ["all"])
    checked = check_inputs_block(block)
    if y is None and checked["weights"] is not None:
        points = {key: value for key, value in block.items() if key not in ("weights", "confidence", "prototypes")}
        inputs = build_inputs(dataset, points, seed)
        inputs.W, inputs.degree, facts = weights_graph(inputs.X, checked["weights"], None, seed)
        inputs.spec = dict(block, seed=seed, **facts)
    else:
        inputs = build_inputs(dataset, block, seed)
    if y is None:
        inputs.labels, inputs.label_names = None, []
        if inputs.relation is not None:
            inputs.relation.row_labels, inputs.relation.row_label_names = None, []
    missing = sorted(need - inputs.available())
    if missing:
        raise UserError(f"{who} needs {', '.join(missing)}, which the inputs block {block} does not provide (it "
                         f"provides {', '.join(sorted(inputs.available()))})")
    return inputs, classes
