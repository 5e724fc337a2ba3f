"""Configuration files: YAML reading that names the file and line, overlays (a file stating only what differs
from a base configuration), and the schema they are validated against (:mod:`.checks`)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from ..errors import UserError

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"
#: where an overlay's ``overlay.base`` is looked up when the caller names no directory: the project root
PROJECT_ROOT = Path(__file__).resolve().parents[3]
_SECTIONS_PRUNED = ("datasets", "inputs", "methods")


class ConfigError(UserError):
    """An invalid configuration; the message names the key and what is allowed."""


def _key(path: Any) -> str:
    parts = [str(p) if not isinstance(p, int) else f"[{p}]" for p in path]
    return ".".join(parts).replace(".[", "[") or "<top level>"


def _describe(error: jsonschema.ValidationError) -> str:
    where = _key(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "enum":
        return f"config key {where}: {error.instance!r} is not allowed; allowed values: {schema['enum']}"
    if error.validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        return f"config key {where}: {error.message}; allowed keys: {allowed}"
    if error.validator == "required":
        return f"config key {where}: {error.message}"
    if error.validator == "pattern" and "description" in schema:
        return f"config key {where}: {error.instance!r} is not allowed; {schema['description']}"
    return f"config key {where}: {error.message}"


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (PyYAML would keep the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in first:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first given on line {first[key]})", key_node.start_mark)
            first.setdefault(key, key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep=deep)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The configuration in the YAML (or JSON) file ``path``.

    Raises :class:`ConfigError` naming the file, and the line and column of a syntax error or of a key given twice
    in one mapping, for a file that is missing, is not YAML, or does not hold a mapping of config keys at its top
    level.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"config file {path}: cannot be read ({err.strerror or err})") from None
    try:
        config = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = ": ".join(str(p) for p in (getattr(err, "context", None), getattr(err, "problem", None)) if p)
        raise ConfigError(f"config file {path}{where}: not valid YAML: {problem or err}") from None
    try:
        check_acyclic(config)
    except ConfigError as err:
        raise ConfigError(f"config file {path}: {err}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"config file {path}: expected a mapping of config keys (seed, datasets, ...) at the top "
                          f"level, got {type(config).__name__}")
    return config



def check_acyclic(config: Any) -> None:
    """Refuse a configuration that contains itself: a YAML alias (``*name``) inside the mapping or list its anchor
    (``&name``) marks. Such a structure has no end, so every later step would recurse until Python gives up.
    Raises :class:`ConfigError` naming the key whose value refers back to one of its enclosing blocks."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(config, 0, ())]
    enclosing: list[int] = []  # ids of the containers on the path to the current value
    while stack:
        value, depth, path = stack.pop()
        del enclosing[depth:]
        if not isinstance(value, (dict, list)):
            continue
        if id(value) in enclosing:
            outer = _key(path[:enclosing.index(id(value))])
            raise ConfigError(f"config key {_key(path)}: refers to its enclosing block {outer} (a YAML alias inside "
                              f"its own anchor), so the configuration never ends; write the values out or use an "
                              f"alias outside the anchored block")
        enclosing.append(id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend((child, depth + 1, path + (key,)) for key, child in items)


def load_schema(path: str | Path | None = None) -> dict[str, Any]:
    with open(path or SCHEMA_PATH) as f:
        return yaml.safe_load(f)


#: JSON Schema counts 2.0 as an integer; a step given 2.0 for a count or an index would fail inside numpy or
#: scikit-learn after jobs have run, so the configuration check refuses it.
_StrictIntegers = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)))



def resolve_overlay(config: dict[str, Any], base_dir: str | Path | None = None) -> dict[str, Any]:
    """The full configuration an overlay stands for; a configuration without an ``overlay`` block unchanged.

    An overlay (e.g. ``config/ci.yaml``) states only what differs from a base configuration::

        overlay:
          base: config.yaml            # relative to base_dir (the workflow directory)
          prune: true                  # drop datasets, inputs and methods that no run uses
          exclude_experiments:         # experiment -> why the overlay does not run it
            nerv_fig4_7_synthetic: ...
        datasets: {sinusoid: {params: {n_samples: 300}}}

    Every other section is merged into the base: mappings key by key, at any depth; a list or a scalar replaces
    the base's value; ``null`` removes the base's key. Then the excluded experiments are removed (their paper,
    reason and claims stay under ``paper.excluded``, so that the scorecard says why they are not tested) and, with
    ``prune``, every dataset, inputs block and method entry that no run, experiment or ``paper.cova.fig1`` uses
    (a dataset used stays with its ``fallback``). A base may itself be an overlay. Raises :class:`ConfigError`
    naming the key for a malformed overlay block, a missing base, ``null`` for a key the base lacks, or an
    excluded experiment the base does not have or the overlay also configures.
    """
    if "overlay" not in config:
        return config
    base_dir = Path(PROJECT_ROOT if base_dir is None else base_dir)
    block = config["overlay"]
    schema = load_schema()
    validator = jsonschema.Draft202012Validator({**schema["properties"]["overlay"], "$defs": schema["$defs"]})
    errors = list(validator.iter_errors(block))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        raise ConfigError(_describe(best).replace("config key ", "config key overlay.", 1).replace(
            "overlay.<top level>", "overlay"))
    path = Path(block["base"])
    path = path if path.is_absolute() else base_dir / path
    if not path.is_file():
        raise ConfigError(f"config key overlay.base: {block['base']!r} not found (looked for {path})")
    base = resolve_overlay(read_config_file(path), base_dir)
    merged = copy.deepcopy(_merge(base, {k: v for k, v in config.items() if k != "overlay"}, ()))
    excluded = block.get("exclude_experiments", {})
    # `paper: null` (or `experiments: null`) in the overlay removes the base's experiments altogether
    experiments = (merged.get("paper") or {}).get("experiments") or {}
    configured = (config.get("paper") or {}).get("experiments") or {}
    for name in excluded:
        if name not in (base.get("paper") or {}).get("experiments", {}):
            raise ConfigError(f"config key overlay.exclude_experiments.{name}: the base {block['base']!r} has no "
                              f"experiment {name!r}")
        if name in configured:
            raise ConfigError(f"config key overlay.exclude_experiments.{name}: the overlay also configures "
                              f"paper.experiments.{name}; remove one of the two")
        if name not in experiments:  # the overlay removed it with the rest of paper.experiments
            continue
        merged.setdefault("paper", {}).setdefault("excluded", {})[name] = {
            "paper": experiments[name]["paper"], "reason": excluded[name],
            "paper_data": experiments[name].get("paper_data", []), "claims": experiments[name].get("claims", [])}
        del experiments[name]
    if block.get("prune", False):
        _prune_unused(merged)
    return merged


def _merge(base: Any, over: Any, where: tuple[str, ...]) -> Any:
    if not (isinstance(base, dict) and isinstance(over, dict)):
        return over
    out = dict(base)
    for key, value in over.items():
        if value is None:
            if key not in out:
                raise ConfigError(f"config key {_key(where + (key,))}: null removes a key of the base config, "
                                  f"which has none here")
            del out[key]
        else:
            out[key] = _merge(out.get(key), value, where + (key,))
    return out


def _prune_unused(config: dict[str, Any]) -> None:
    """Drop (in place) the datasets, inputs blocks and method entries that nothing runs."""
    paper = config.get("paper", {})
    runs = list(config.get("runs", []))
    for e in paper.get("experiments", {}).values():  # a run without dataset goes through the experiment's datasets
        runs += [r if "dataset" in r else {**r, "dataset": d} for r in e["runs"]
                 for d in ([r.get("dataset")] if "dataset" in r else e.get("datasets", []))]
    fig1 = paper.get("cova", {}).get("fig1")
    if fig1:
        runs.append({"dataset": fig1["dataset"], "inputs": fig1["inputs"], "methods": [fig1["cova"], fig1["tsne"]]})
    used = {"datasets": {r["dataset"] for r in runs}, "inputs": {r["inputs"] for r in runs},
            "methods": {m for r in runs for m in r["methods"]}}
    datasets = config.get("datasets", {})
    todo = list(used["datasets"])
    while todo:  # a used dataset keeps its fallback, and that one its own
        fallback = datasets.get(todo.pop(), {}).get("fallback")
        if fallback is not None and fallback not in used["datasets"]:
            used["datasets"].add(fallback)
            todo.append(fallback)
    for section in _SECTIONS_PRUNED:
        if section in config:
            config[section] = {k: v for k, v in config[section].items() if k in used[section]}

