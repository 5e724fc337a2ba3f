"""The ``inputs`` block: its declaration (each sub-block declared beside the code that reads it, composed here),
the rules that say which sub-blocks go together, and which :class:`~.types.Inputs` fields a block provides without
building it (the configuration check)."""

from __future__ import annotations

from typing import Any

from ..cohorts import confidence_matrix
from ..constraints import Block, Declaration, check_options
from ..features import COHORT_KINDS, FEATURE_KINDS
from .graph import GRAPH
from .relation import RELATION_SOURCES
from .steps import PROTOTYPES, WEIGHTS
from .subsets import SPLIT, subset_classes

#: Keys an inputs block may combine with ``graph`` / ``relation`` (the rest belong to vector blocks only).
GRAPH_KEYS = frozenset({"graph", "features", "cohorts", "confidence", "prototypes", "subset"})
RELATION_KEYS = frozenset({"relation", "subset"})
#: A vector block builds W, R and Υ from these sub-blocks; without any of them it provides only X and the labels
#: (methods that build their own graph from X, e.g. featMAP and its baselines).
VECTOR_BUILT_KEYS = frozenset({"weights", "confidence", "prototypes"})


def block_kind(block: dict[str, Any]) -> str:
    """``"graph"``, ``"relation"`` or ``"vectors"`` (W built from X): what an inputs block describes."""
    return next((k for k in ("graph", "relation") if block.get(k) is not None), "vectors")


def _present(options: Any) -> set[str]:
    return {key for key, value in options.items() if value is not None}


def _predicted(options: Any) -> bool:
    return options["cohorts"] is not None and options["cohorts"]["kind"] == "predicted"


def _combination(options: Any, context: Any) -> tuple[str, str] | None:
    """Which sub-blocks an inputs block may combine (docs/data-model.md)."""
    present = _present(options)
    if {"graph", "relation"} <= present:
        return "relation", "an inputs block takes either 'graph' or 'relation', not both"
    kind = block_kind(options)
    if kind != "vectors":
        if "weights" in present:
            return "weights", f"an inputs block with '{kind}' takes its affinity from the data; remove 'weights'"
        allowed = GRAPH_KEYS if kind == "graph" else RELATION_KEYS
        extra = sorted(present - allowed)
        if extra:
            return extra[0], f"an inputs block with '{kind}' does not take {extra}; allowed keys: {sorted(allowed)}"
        if _predicted(options):
            return "cohorts", f"an inputs block with '{kind}' does not take cohorts kind 'predicted'"
        return None
    built = present & VECTOR_BUILT_KEYS
    if built and built != VECTOR_BUILT_KEYS:
        missing = sorted(VECTOR_BUILT_KEYS - built)
        return missing[0], (f"an inputs block that builds W, R and prototypes needs all of weights, confidence and "
                            f"prototypes; missing {missing} (or remove all three for X and labels only)")
    if _predicted(options):
        if not built:
            return "cohorts", ("an inputs block without weights, confidence and prototypes does not take cohorts "
                               "kind 'predicted'")
        if options["split"] is not None:
            return "split", "cohorts kind 'predicted' cannot be combined with a split"
        if options["features"] is not None and options["features"]["kind"] == "compacted":
            return "features", "cohorts kind 'predicted' needs features that do not use labels (raw or pca)"
    return None


#: One ``inputs`` block. Its job ``resources`` are the workflow's (not part of the block, checked by the schema).
INPUTS_BLOCK = Declaration({
    "graph": [Block(GRAPH, "a graph block {source: relations, ...}"), None],
    "relation": [Block(RELATION_SOURCES, "a relation block {source: X | points | hop_distances, ...}"), None],
    "weights": [Block(WEIGHTS, "a weights block {kind: ...}"), None],
    "confidence": [Block(confidence_matrix, "a confidence block {kind: eq10 | eq11 | eq12, ...}"), None],
    "prototypes": [Block(PROTOTYPES, "a prototypes block {kind: ...}"), None],
    "features": [Block(FEATURE_KINDS, "a features block {kind: ...}"), None],
    "cohorts": [Block(COHORT_KINDS, "a cohorts block {kind: ...}"), None],
    "subset": [Block(subset_classes, "a subset block {n_classes | classes, n_per_class}"), None],
    "split": [Block(SPLIT, "a split block {train_fraction} or {n_folds, fold}"), None],
}, defaults=dict.fromkeys(("graph", "relation", "weights", "confidence", "prototypes", "features", "cohorts",
                           "subset", "split")), rules=[_combination])


def check_inputs_block(spec: dict[str, Any], where: str = "inputs") -> dict[str, Any]:
    """The inputs block ``spec`` checked against :data:`INPUTS_BLOCK` (every sub-block against its declaration),
    with the declared defaults filled in; an :class:`~cova.constraints.OptionError` names the key at ``where``."""
    return check_options(INPUTS_BLOCK, spec, where, "an inputs block")


def provided_inputs(spec: dict[str, Any]) -> set[str]:
    """The :class:`~.types.Inputs` fields that :func:`cova.inputs.build_inputs` produces for one ``inputs`` block
    (without building them), so that the configuration can be checked against what each method requires before any
    job runs. Raises :class:`~cova.constraints.OptionError` for a block its declaration refuses."""
    block = check_inputs_block(spec)
    kind = block_kind(block)
    if kind == "relation":
        return {"relation", "labels"}
    if kind == "graph":
        return {"W", "labels", "degree"} | {name for key, name in (("features", "X"), ("confidence", "R"),
                                                                    ("prototypes", "prototypes"))
                                            if block[key] is not None}
    if block["weights"] is None:
        return {"X", "labels"}
    degree = {"degree"} if block["weights"]["normalize"] is not None else set()
    return {"X", "labels", "W", "R", "prototypes"} | degree
