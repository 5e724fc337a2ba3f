"""``build_inputs``: one inputs block of the configuration turned into :class:`~.types.Inputs` (the package
docstring describes the blocks)."""

from __future__ import annotations

from typing import Any

from ..datasets.base import Dataset
from .blocks import block_kind, check_inputs_block
from .graph import build_graph_inputs
from .relation import build_relation_inputs
from .subsets import subset_classes
from .types import Inputs
from .vectors import build_points_inputs, build_vector_inputs


def build_inputs(dataset: Dataset, spec: dict[str, Any], seed: int = 0) -> Inputs:
    """Build the inputs for ``dataset`` from one config ``inputs`` block (see the package docstring): the block is
    checked against its declaration, the ``subset`` applied, and the block's kind builds the rest
    (:func:`~.graph.build_graph_inputs`, :func:`~.relation.build_relation_inputs`,
    :func:`~.vectors.build_vector_inputs`, or X and the labels only). ``seed`` seeds every random step (kNN
    descent, t-SNE prototypes, spectral clustering, subsets, splits, labelled samples, random prototypes)."""
    block = check_inputs_block(spec)
    sub = block["subset"]
    if sub is not None:
        dataset = subset_classes(dataset, seed=seed, **sub)
    kind = block_kind(block)
    if kind == "graph":
        return build_graph_inputs(dataset, spec, block, seed)
    if kind == "relation":
        return build_relation_inputs(dataset, spec, block, seed)
    if block["weights"] is None:
        return build_points_inputs(dataset, spec, block, seed)
    return build_vector_inputs(dataset, spec, block, seed)
