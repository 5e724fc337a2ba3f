"""Workflow configuration: JSON-Schema validation with messages that name the key, and the plan of outputs.

The Snakefile calls :func:`validate_config` before building the DAG and asks a :class:`Plan` for every path,
so the rules stay thin and the naming logic is tested without Snakemake.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
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
    if not isinstance(config, dict):
        raise ConfigError(f"config file {path}: expected a mapping of config keys (seed, datasets, ...) at the top "
                          f"level, got {type(config).__name__}")
    return config


def check_config_file(path: str | Path, base_dir: str | Path | None = None) -> dict[str, Any]:
    """Read ``path`` (:func:`read_config_file`), resolve it if it is an overlay (its base looked up in
    ``base_dir``, by default the project root) and validate it (:func:`validate_config`). Returns the full
    configuration; raises :class:`ConfigError` naming the file, line, or key."""
    config = resolve_overlay(read_config_file(path), base_dir)
    validate_config(config)
    return config


def load_schema(path: str | Path | None = None) -> dict[str, Any]:
    with open(path or SCHEMA_PATH) as f:
        return yaml.safe_load(f)


#: JSON Schema counts 2.0 as an integer; a step given 2.0 for a count or an index would fail inside numpy or
#: scikit-learn after jobs have run, so the configuration check refuses it.
_StrictIntegers = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)))


def validate_config(config: dict[str, Any], schema_path: str | Path | None = None) -> None:
    """Validate ``config`` against the JSON schema, then the cross-references between its sections.

    Raises :class:`ConfigError` whose message names the offending key and the allowed values. An overlay is
    validated as the full configuration it stands for (:func:`resolve_overlay`, base looked up in the project root).
    """
    config = resolve_overlay(config)
    schema = load_schema(schema_path)
    validator = _StrictIntegers(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        raise ConfigError(_describe(best))
    _check_references(config, schema)


def _check_loader_params(name: str, ds: dict[str, Any], schema: dict[str, Any]) -> None:
    """Validate a dataset's ``params`` against its loader's schema (``$defs/loader_params``): types and ranges."""
    params_schema = schema["$defs"].get("loader_params", {}).get("properties", {}).get(ds["loader"])
    if params_schema is None:
        return
    validator = _StrictIntegers({**params_schema, "$defs": schema["$defs"]})
    errors = list(validator.iter_errors(ds.get("params", {})))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        where = _key(("datasets", name, "params", *best.absolute_path))
        message = _describe(best).split(": ", 1)[1]
        raise ConfigError(f"config key {where}: {message} (loader {ds['loader']!r})")


def _check_references(config: dict[str, Any], schema: dict[str, Any]) -> None:
    from .constraints import InvalidParameterError, explain
    from .datasets import LOADERS
    from .methods import METHODS, make_method, method_parameters

    for name, ds in config["datasets"].items():
        if ds["loader"] not in LOADERS:
            raise ConfigError(f"config key datasets.{name}.loader: {ds['loader']!r} is not allowed; "
                              f"allowed values: {sorted(LOADERS)}")
        allowed = set(inspect.signature(LOADERS[ds["loader"]]).parameters) - {"raw_dir"}
        unknown = sorted(set(ds.get("params", {})) - allowed)
        if unknown:
            raise ConfigError(f"config key datasets.{name}.params: unknown parameters {unknown}; "
                              f"allowed for loader {ds['loader']!r}: {sorted(allowed)}")
        _check_loader_params(name, ds, schema)
        if "source" in ds and ds["loader"] != "generic":
            raise ConfigError(f"config key datasets.{name}.source: only the 'generic' loader takes a source; "
                              f"loader {ds['loader']!r} knows its own")
        if "fallback" in ds:
            if ds["fallback"] == name or ds["fallback"] not in config["datasets"]:
                raise ConfigError(f"config key datasets.{name}.fallback: {ds['fallback']!r} must name another "
                                  f"defined dataset; defined: {sorted(config['datasets'])}")
            if not _local_file(ds):
                raise ConfigError(f"config key datasets.{name}.fallback: only a dataset read from a local file "
                                  f"(params.features or params.path) can fall back")
        if ds["loader"] == "generic" and "source" not in ds and "path" not in ds.get("params", {}):
            raise ConfigError(f"config key datasets.{name}: the generic loader needs params.path (a local file) "
                              f"or source: {{url, sha256}}")
    for name, m in config["methods"].items():
        if m["method"] not in METHODS:
            raise ConfigError(f"config key methods.{name}.method: {m['method']!r} is not allowed; "
                              f"allowed values: {sorted(METHODS)}")
        allowed = method_parameters(m["method"])
        for key in ("params", "grid"):
            unknown = sorted(set(m.get(key, {})) - set(allowed))
            if unknown:
                raise ConfigError(f"config key methods.{name}.{key}: unknown parameters {unknown}; "
                                  f"allowed for method {m['method']!r}: {allowed}")
        for _, params, chosen in expand_grid(name, m):
            try:
                make_method(m["method"], params)._validate_params()
            except InvalidParameterError as err:
                param, allowed_values = explain(err)
                key = "grid" if param in chosen else "params"
                raise ConfigError(f"config key methods.{name}.{key}.{param}: {params[param]!r} is not allowed; "
                                  f"allowed: {allowed_values}") from None
    experiments = config.get("paper", {}).get("experiments", {})
    blocks = [("runs", config["runs"])] + [(f"paper.experiments.{n}.runs", e["runs"]) for n, e in experiments.items()]
    for where, runs in blocks:
        for i, run in enumerate(runs):
            _ref(config, "datasets", run["dataset"], f"{where}[{i}].dataset")
            _ref(config, "inputs", run["inputs"], f"{where}[{i}].inputs")
            for j, m in enumerate(run["methods"]):
                _ref(config, "methods", m, f"{where}[{i}].methods[{j}]")
            _check_required_inputs(config, run, f"{where}[{i}]")
            _check_cohort_count(config, run, f"{where}[{i}]")
    for name, e in experiments.items():
        for axis in {"sweep": ("x",), "reference_sweep": ("x",), "heatmap": ("x", "y")}.get(e["renderer"], ()):
            if axis not in e:
                raise ConfigError(f"config key paper.experiments.{name}.{axis}: required by renderer "
                                  f"{e['renderer']!r} (the swept parameter)")
        if e.get("examples"):
            chosen = [c for run in e["runs"] for entry in run["methods"]
                      for _, _, c in expand_grid(entry, config["methods"][entry])]
            if not any(all(c.get(k) == v for k, v in e["examples"].items()) for c in chosen):
                raise ConfigError(f"config key paper.experiments.{name}.examples: {e['examples']!r} matches no "
                                  f"run's grid values; allowed: the grid values of the experiment's method entries")
        if e["renderer"] in ("link_graphs", "link_panels"):
            from .metrics.cohort_graphs import REFERENCE_GRAPHS

            if e.get("reference", REFERENCE_GRAPHS[0]) not in REFERENCE_GRAPHS:
                raise ConfigError(f"config key paper.experiments.{name}.reference: {e['reference']!r} is not a "
                                  f"reference cohort graph; allowed values: {list(REFERENCE_GRAPHS)}")
        elif "reference" in e:
            from .experiments.reference import REFERENCE

            if e["reference"] not in REFERENCE:
                raise ConfigError(f"config key paper.experiments.{name}.reference: {e['reference']!r} is not "
                                  f"allowed; allowed values: {sorted(REFERENCE)}")
        if e.get("measure_space", "inputs") == "ground_truth":
            from .datasets import GROUND_TRUTH_LOADERS

            if e["renderer"] != "nerv_panels":
                raise ConfigError(f"config key paper.experiments.{name}.measure_space: 'ground_truth' is read by "
                                  f"renderer 'nerv_panels' only, not {e['renderer']!r}")
            for i, run in enumerate(e["runs"]):
                loader = config["datasets"][run["dataset"]]["loader"]
                if loader not in GROUND_TRUTH_LOADERS:
                    raise ConfigError(f"config key paper.experiments.{name}.runs[{i}].dataset: {run['dataset']!r} "
                                      f"(loader {loader!r}) has no ground-truth coordinates, which measure_space: "
                                      f"ground_truth needs; allowed loaders: {list(GROUND_TRUTH_LOADERS)}")
    fig1 = config.get("paper", {}).get("cova", {}).get("fig1")
    if fig1:
        _ref(config, "datasets", fig1["dataset"], "paper.cova.fig1.dataset")
        _ref(config, "inputs", fig1["inputs"], "paper.cova.fig1.inputs")
        for role, method in (("cova", "cova_e1"), ("tsne", "tsne")):
            _ref(config, "methods", fig1[role], f"paper.cova.fig1.{role}")
            if config["methods"][fig1[role]]["method"] != method:
                raise ConfigError(f"config key paper.cova.fig1.{role}: {fig1[role]!r} must name a {method!r} "
                                  f"method entry")


def _check_required_inputs(config: dict[str, Any], run: dict[str, Any], where: str) -> None:
    """Refuse a run whose inputs block does not provide what one of its methods requires
    (:meth:`cova.methods.Embedder.requires` against :func:`cova.inputs.provided_inputs`)."""
    from .inputs import provided_inputs
    from .methods import METHODS, split_capable

    try:
        block = {k: v for k, v in config["inputs"][run["inputs"]].items() if k != "resources"}
        provided = provided_inputs(block)
    except ValueError as err:
        raise ConfigError(f"config key inputs.{run['inputs']}: {err}") from None
    for entry in run["methods"]:
        m = config["methods"][entry]
        cls = METHODS[m["method"]]
        if "split" in block and not cls.semi_supervised and not callable(getattr(cls, "transform", None)):
            raise ConfigError(f"config key {where}: method entry {entry!r} ({m['method']}) has no transform for the "
                              f"test rows of inputs block {run['inputs']!r}'s split and does not take unlabelled "
                              f"samples; use {split_capable()}, or inputs without a split")
        for _, params, _ in expand_grid(entry, m):
            missing = [name for name in cls(**params).requires() if name not in provided]
            if missing:
                raise ConfigError(f"config key {where}: method entry {entry!r} ({m['method']}) needs "
                                  f"{', '.join(missing)}, which inputs block {run['inputs']!r} does not provide "
                                  f"(it provides {', '.join(sorted(provided))})")


#: Loader -> the parameters whose product is its number of cohorts (a loader's default when not set); loaders not
#: listed read their classes from a file. ``random_matrix`` has one cohort by design (no parameters).
COHORT_PARAMETERS: dict[str, tuple[str, ...]] = {
    "sinusoid": ("n_cohorts",), "swiss_roll": ("n_cohorts",), "cylinder1": ("n_sectors",),
    "cylinder2": ("n_sectors", "n_bands"), "s_curve": ("n_t_bins", "n_h_bins"), "sphere": ("n_lon_bins", "n_lat_bins"),
    "places_shaped": ("n_classes",), "places2": ("n_classes",), "random_matrix": (),
}


def known_cohort_count(ds: dict[str, Any]) -> tuple[int, str] | None:
    """(number of cohorts, how it follows from the params) of a dataset entry whose loader fixes it
    (:data:`COHORT_PARAMETERS`; ``places2`` only with ``n_classes`` set), else ``None``."""
    from .datasets import LOADERS

    if ds["loader"] not in COHORT_PARAMETERS:
        return None
    defaults = {k: p.default for k, p in inspect.signature(LOADERS[ds["loader"]]).parameters.items()}
    values = {k: ds.get("params", {}).get(k, defaults[k]) for k in COHORT_PARAMETERS[ds["loader"]]}
    if None in values.values():
        return None
    how = ", ".join(f"{k}={v}" for k, v in values.items()) or "one cohort by design"
    return int(math.prod(values.values())), f"loader {ds['loader']!r}: {how}"


def _check_cohort_count(config: dict[str, Any], run: dict[str, Any], where: str) -> None:
    """Refuse a run that arranges cohorts (an inputs block building R or prototypes, or a method requiring labels,
    R or prototypes) on a dataset known to have fewer than 2 cohorts (:func:`cova.inputs.require_cohorts`)."""
    from .inputs import COHORT_INPUTS, require_cohorts
    from .methods import METHODS

    block = config["inputs"][run["inputs"]]
    known = known_cohort_count(config["datasets"][run["dataset"]])
    subset = block.get("subset", {}).get("n_classes")
    if known is not None and subset is not None and subset > known[0]:
        raise ConfigError(f"config key {where}: inputs block {run['inputs']!r} keeps subset.n_classes={subset} "
                          f"classes, but dataset {run['dataset']!r} has {known[0]} ({known[1]})")
    if block.get("cohorts", {}).get("kind") == "spectral" or known is None or known[0] >= 2:
        return
    who = []
    if {"confidence", "prototypes"} & set(block) or not {"graph", "relation"} & set(block):
        who.append(f"inputs block {run['inputs']!r} (cohort confidences R, prototypes)")
    for entry in run["methods"]:
        m = config["methods"][entry]
        if any(COHORT_INPUTS & set(METHODS[m["method"]](**params).requires()) for _, params, _ in expand_grid(entry, m)):
            who.append(f"method entry {entry!r} ({m['method']})")
    if who:
        try:
            require_cohorts(known[0], " and ".join(who))
        except ValueError as err:
            raise ConfigError(f"config key {where}: dataset {run['dataset']!r} has {known[0]} cohort "
                              f"({known[1]}); {err}") from None


def _local_file(ds: dict[str, Any]) -> str | None:
    """The user-supplied local file a dataset reads (``places2``: params.features; ``generic``: params.path)."""
    params = ds.get("params", {})
    return params.get("features") or (params.get("path") if "source" not in ds else None)


def resolve_fallbacks(config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Replace every dataset with a ``fallback`` whose local file is missing by that fallback, in ``runs`` and in
    every experiment's runs, and drop it from ``datasets`` (so nothing tries to build it). Returns the resolved
    config (a copy when anything changed) and one notice per replaced dataset. Used for the user-supplied Places2
    features: without them the Places2 experiments run on the configured stand-in and say so."""
    missing = {name: ds["fallback"] for name, ds in config["datasets"].items()
               if "fallback" in ds and not Path(_local_file(ds)).is_file()}
    if not missing:
        return config, []
    import copy

    config = copy.deepcopy(config)
    notices = []
    for name, fb in missing.items():
        about = config["datasets"][fb].get("description")
        notices.append(f"NOTICE: dataset {name!r}: {_local_file(config['datasets'][name])} not found; its runs use "
                       f"the fallback dataset {fb!r} instead{f' ({about})' if about else ''}. "
                       f"Supply the file to run them on {name!r}.")
        del config["datasets"][name]

    def fix(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(r, dataset=missing.get(r["dataset"], r["dataset"])) for r in runs]

    config["runs"] = fix(config["runs"])
    for e in config.get("paper", {}).get("experiments", {}).values():
        used = {r["dataset"] for r in e["runs"]} & set(missing)
        e["runs"] = fix(e["runs"])
        if used:
            e["fallbacks"] = {k: missing[k] for k in sorted(used)}
    fig1 = config.get("paper", {}).get("cova", {}).get("fig1")
    if fig1 and fig1["dataset"] in missing:
        fig1["dataset"] = missing[fig1["dataset"]]
    return config, notices


def _ref(config: dict[str, Any], section: str, name: str, where: str) -> None:
    if name not in config[section]:
        raise ConfigError(f"config key {where}: {name!r} is not defined in {section}; "
                          f"defined: {sorted(config[section])}")


#: where an overlay's ``overlay.base`` is looked up when the caller names no directory: the project root
PROJECT_ROOT = Path(__file__).resolve().parents[2]
_SECTIONS_PRUNED = ("datasets", "inputs", "methods")


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
    the base's value; ``null`` removes the base's key. Then the excluded experiments are removed and, with
    ``prune``, every dataset, inputs block and method entry that no run, experiment or ``paper.cova.fig1`` uses
    (a dataset used stays with its ``fallback``). A base may itself be an overlay. Raises :class:`ConfigError`
    naming the key for a malformed overlay block, a missing base, ``null`` for a key the base lacks, or an
    excluded experiment the base does not have or the overlay also configures.
    """
    if "overlay" not in config:
        return config
    import copy

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
    experiments = merged.get("paper", {}).get("experiments", {})
    configured = config.get("paper", {}).get("experiments", {})
    for name in excluded:
        if name not in base.get("paper", {}).get("experiments", {}):
            raise ConfigError(f"config key overlay.exclude_experiments.{name}: the base {block['base']!r} has no "
                              f"experiment {name!r}")
        if name in configured:
            raise ConfigError(f"config key overlay.exclude_experiments.{name}: the overlay also configures "
                              f"paper.experiments.{name}; remove one of the two")
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
    runs = list(config.get("runs", [])) + [r for e in paper.get("experiments", {}).values() for r in e["runs"]]
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


def make_id(name: str, payload: Any) -> str:
    """Readable slug plus a hash of the exact parameters: a changed parameter gives a new path."""
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return f"{name}-{digest[:8]}"


#: Where every job's Snakemake ``benchmark:`` file goes: ``{BENCHMARK_DIR}/{rule}/...{wildcards}.tsv``.
BENCHMARK_DIR = "results/benchmarks/jobs"
#: The table of our numbers far from the papers' and their causes (rule ``paper_gaps``).
PAPER_GAPS_OUTPUTS = {"csv": "results/tables/paper_gaps.csv", "html": "results/tables/paper_gaps.html"}
#: The per-rule / per-experiment time table of the whole run (rule ``timings``).
TIMINGS_OUTPUTS = {"csv": "results/tables/timings.csv", "html": "results/tables/timings.html",
                   "png": "results/tables/timings.png"}


@dataclass(frozen=True)
class MethodJob:
    entry: str
    method: str
    params_id: str
    params: dict[str, Any]
    resources: dict[str, int]
    grid_values: dict[str, Any]


def _name_part(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", str(value).replace("%", "pct"))


def expand_grid(entry: str, spec: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, params, grid values) for every combination of a method entry's ``grid`` (or the entry itself).

    Names are ``{entry}-{param}{value}-...`` in the grid's key order, e.g. ``eig-alpha0.9-eta0.5``; characters a
    path component should not hold become ``pct`` (for ``%``) or ``_`` (``k_r: "10%"`` → ``k_r10pct``).
    """
    base = dict(spec.get("params", {}))
    grid = spec.get("grid")
    if not grid:
        return [(entry, base, {})]
    keys = list(grid)
    out = []
    for values in itertools.product(*(grid[k] for k in keys)):
        chosen = dict(zip(keys, values))
        name = "-".join([entry] + [f"{k}{_name_part(v)}" for k, v in chosen.items()])
        out.append((name, {**base, **chosen}, chosen))
    return out


def _class_posterior_settings(method: str, params: dict[str, Any], seed: int) -> dict[str, Any] | None:
    """The class-posterior model a method job fits (SNeRV, PE: ``class_posterior_settings``), or ``None``."""
    from .methods import METHODS, make_method

    if not hasattr(METHODS[method], "class_posterior_settings"):
        return None
    return make_method(method, params, seed=seed).class_posterior_settings()


class Plan:
    """Every output path the configuration asks for, and the parameters behind each wildcard value.

    Method jobs that fit the same class-posterior model (SNeRV and PE with the same mixture settings and seed)
    share one ``posterior`` job per inputs block (:meth:`posterior_file`); the model is the expensive part of
    each, and fitting it once gives the same embeddings."""

    def __init__(self, config: dict[str, Any]):
        config, self.notices = resolve_fallbacks(resolve_overlay(config))
        self.config = config
        self.seed = int(config["seed"])
        self.metrics = {"n_neighbors": 12, "kappa": 2, **config.get("metrics", {})}
        self.inputs_ids = {name: make_id(name, {"spec": self.inputs_block(name), "seed": self.seed})
                           for name in config["inputs"]}
        self._inputs_by_id = {v: k for k, v in self.inputs_ids.items()}
        self.method_jobs: dict[str, MethodJob] = {}
        self.entry_groups: dict[str, list[str]] = {}
        for entry, m in config["methods"].items():
            self.entry_groups[entry] = []
            for name, params, values in expand_grid(entry, m):
                pid = make_id(name, {"method": m["method"], "params": params, "seed": self.seed})
                self.method_jobs[name] = MethodJob(name, m["method"], pid, params, dict(m.get("resources", {})),
                                                   values)
                self.entry_groups[entry].append(name)
        self.experiments: dict[str, dict[str, Any]] = dict(config.get("paper", {}).get("experiments", {}))
        self._method_by_id = {(j.method, j.params_id): j for j in self.method_jobs.values()}
        self.posterior_settings: dict[str, dict[str, Any]] = {}
        self._posterior_of: dict[tuple[str, str], str] = {}
        for job in self.method_jobs.values():
            settings = _class_posterior_settings(job.method, job.params, self.seed)
            if settings is not None:
                posterior_id = make_id("class_posterior", settings)
                self.posterior_settings[posterior_id] = settings
                self._posterior_of[(job.method, job.params_id)] = posterior_id
        self._run_measures: dict[tuple[str, str, str, str], list[str]] = {}
        for item in config["runs"] + [r for e in self.experiments.values() for r in e["runs"]]:
            for group in item.get("metrics", {}).get("measures", []):
                for dataset, inputs, entry in self.expand_runs([item]):
                    job = self.method_jobs[entry]
                    chosen = self._run_measures.setdefault((dataset, self.inputs_ids[inputs], job.method,
                                                            job.params_id), [])
                    if group not in chosen:
                        chosen.append(group)

    def run_metrics(self, dataset: str, inputs_id: str, method: str, params_id: str) -> dict[str, Any]:
        """The score settings of one run (the score rule's ``--metrics``): the ``metrics`` block, with
        ``measures`` extended by the opt-in groups of every ``runs`` item naming the run. A run that opts into
        nothing gets :attr:`metrics` itself, so its command line (and Snakemake's parameter record) is unchanged."""
        extra = self._run_measures.get((dataset, inputs_id, method, params_id), [])
        own = list(self.metrics.get("measures", []))
        if not [g for g in extra if g not in own]:
            return self.metrics
        return {**self.metrics, "measures": sorted({*own, *extra})}

    # wildcard value -> parameters
    def dataset(self, name: str) -> dict[str, Any]:
        return self.config["datasets"][name]

    @property
    def mirrors(self) -> list[str]:
        return list(self.config.get("data", {}).get("mirrors", []))

    def raw_keys_for(self, dataset: str) -> list[str]:
        """The folders under ``data/raw/`` that ``dataset`` reads, the loader's own first: a registered source
        (``cora``, ``mnist``, ...), the dataset's own name for a ``generic`` file given by URL, or none
        (generated or local data). MNIST's training files are a source of their own (``mnist_train``); with
        ``split: all`` the loader also reads the test files from the sibling ``mnist`` folder."""
        from .datasets import raw_source

        ds = self.dataset(dataset)
        if ds["loader"] == "generic":
            return [dataset] if "source" in ds else []
        params = ds.get("params", {})
        key = raw_source(ds["loader"], params)
        if key is None:
            return []
        if key == "mnist_train" and params.get("split") == "all":
            return [key, "mnist"]
        return [key]

    def generic_file_name(self, dataset: str) -> str:
        """The name a ``generic`` dataset's downloaded file has in ``data/raw/{dataset}/``: ``source.filename``, or
        the URL's last path segment without query, %-decoded (``cova.datasets.sources.source_file_name``)."""
        from .datasets.sources import source_file_name

        src = self.dataset(dataset)["source"]
        try:
            return source_file_name(src["url"], src.get("filename"))
        except ValueError as err:
            raise ConfigError(f"config key datasets.{dataset}.source: {err}") from None

    def fetch_spec(self, raw_key: str) -> dict[str, Any]:
        """What the fetch step gets for ``data/raw/{raw_key}``: a registered source name, or a URL + sha256 and
        the file name it is saved under (the one :meth:`loader_params` reads)."""
        ds = self.config["datasets"].get(raw_key, {})
        if ds.get("loader") == "generic" and "source" in ds:
            return {**ds["source"], "filename": self.generic_file_name(raw_key)}
        return {"source": raw_key}

    def raw_dir_arg(self, dataset: str) -> str:
        """``--raw data/raw/{key}`` for the dataset step, or nothing for datasets without raw files."""
        keys = self.raw_keys_for(dataset)
        return f"--raw data/raw/{keys[0]}" if keys else ""

    def dataset_inputs(self, dataset: str) -> list[str]:
        """Files the dataset step reads: the raw folders' manifests, or a generic loader's local file."""
        keys = self.raw_keys_for(dataset)
        if keys:
            return [f"data/raw/{k}/manifest.json" for k in keys]
        ds = self.dataset(dataset)
        if ds["loader"] == "generic":
            return [ds.get("params", {})["path"]]
        return []

    def loader_params(self, dataset: str) -> dict[str, Any]:
        """The loader's parameters, with the downloaded file's path filled in for a generic URL source."""
        ds = self.dataset(dataset)
        params = dict(ds.get("params", {}))
        if ds["loader"] == "generic" and "source" in ds:
            params["path"] = f"data/raw/{dataset}/{self.generic_file_name(dataset)}"
        return params

    def inputs_name(self, inputs_id: str) -> str:
        return self._inputs_by_id[inputs_id]

    def inputs_block(self, name: str) -> dict[str, Any]:
        """Inputs block ``name`` as build_inputs takes it: without its job ``resources`` (not part of the id)."""
        return {k: v for k, v in self.config["inputs"][name].items() if k != "resources"}

    def inputs_spec(self, inputs_id: str) -> dict[str, Any]:
        return self.inputs_block(self._inputs_by_id[inputs_id])

    def inputs_resources(self, inputs_id: str) -> dict[str, int]:
        """``threads``, ``mem_mb``, ``runtime`` an inputs block asks for its job (``resources:``; rule defaults)."""
        return dict(self.config["inputs"][self._inputs_by_id[inputs_id]].get("resources", {}))

    def experiment_resources(self, name: str) -> dict[str, int]:
        """``threads``, ``mem_mb``, ``runtime`` an experiment asks for its rendering job (``resources:``; rule
        defaults otherwise), e.g. the timing figure that fits methods with the job's threads."""
        return dict(self.experiments[name].get("resources", {}))

    def method_job(self, method: str, params_id: str) -> MethodJob:
        return self._method_by_id[(method, params_id)]

    def posterior_id(self, method: str, params_id: str) -> str | None:
        """The shared class-posterior job of a method job (``None`` for a method without one)."""
        return self._posterior_of.get((method, params_id))

    @staticmethod
    def posterior_file(dataset: str, inputs_id: str, posterior_id: str) -> str:
        return f"results/{dataset}/{inputs_id}/class_posterior/{posterior_id}.npz"

    # paths
    @staticmethod
    def dataset_path(dataset: str) -> str:
        return f"data/processed/{dataset}.npz"

    def run_dir(self, dataset: str, inputs: str, entry: str) -> str:
        job = self.method_jobs[entry]
        return f"results/{dataset}/{self.inputs_ids[inputs]}/{job.method}/{job.params_id}"

    def expand_runs(self, runs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        """(dataset, inputs, method entry) triples of a ``runs`` list, grids expanded, in order, no repeats."""
        seen: dict[tuple[str, str, str], None] = {}
        for run in runs:
            for entry in run["methods"]:
                for name in self.entry_groups[entry]:
                    seen[(run["dataset"], run["inputs"], name)] = None
        return list(seen)

    def runs(self) -> list[tuple[str, str, str]]:
        """Every run: those of ``runs`` and those the paper experiments need."""
        return self.expand_runs(self.config["runs"] + [r for e in self.experiments.values() for r in e["runs"]])

    def experiment_runs(self, name: str) -> list[tuple[str, str, str]]:
        return self.expand_runs(self.experiments[name]["runs"])

    def experiment_spec(self, name: str) -> dict[str, Any]:
        """What the renderer gets: the experiment block plus, per run, its names (``entry``: the run's method
        entry with its grid values; ``group``: the configured method entry it was expanded from), registered
        method, grid values and files."""
        e = self.experiments[name]
        group_of = {run: group for group, runs in self.entry_groups.items() for run in runs}
        runs = []
        for dataset, inputs, entry in self.experiment_runs(name):
            job = self.method_jobs[entry]
            runs.append({"dataset": dataset, "inputs": inputs, "entry": entry, "group": group_of[entry],
                         "method": job.method, "grid": job.grid_values, "data": self.dataset_path(dataset),
                         "inputs_file": self.inputs_file(dataset, inputs),
                         "embedding": self.run_file(dataset, inputs, entry, "embedding.npz"),
                         "scores": self.run_file(dataset, inputs, entry, "scores.json")})
        return {**{k: v for k, v in e.items() if k != "runs"}, "name": name, "runs": runs}

    def experiment_inputs(self, name: str) -> list[str]:
        files: dict[str, None] = {}
        for run in self.experiment_spec(name)["runs"]:
            for key in ("data", "inputs_file", "embedding", "scores"):
                files[run[key]] = None
        return list(files)

    def experiment_outputs(self, name: str) -> dict[str, str]:
        stem = f"results/paper/{self.experiments[name]['paper']}/{name}"
        return {"png": f"{stem}.png", "csv": f"{stem}.csv", "html": f"{stem}.html"}

    def run_dirs(self) -> list[str]:
        return [self.run_dir(*r) for r in self.runs()]

    def run_file(self, dataset: str, inputs: str, entry: str, filename: str) -> str:
        return f"{self.run_dir(dataset, inputs, entry)}/{filename}"

    def run_files(self, filename: str) -> list[str]:
        """``filename`` (``scores.json``, ``scatter.png``, ...) in every run directory."""
        return [self.run_file(*r, filename) for r in self.runs()]

    def inputs_file(self, dataset: str, inputs: str) -> str:
        return f"results/{dataset}/{self.inputs_ids[inputs]}/inputs.npz"

    def paper_targets(self) -> list[str]:
        targets = []
        if self.config.get("paper", {}).get("cova", {}).get("fig1"):
            targets.append("results/paper/cova/fig1.png")
        for name in self.experiments:
            targets.extend(self.experiment_outputs(name).values())
        if self.reference_experiments():
            targets.extend(PAPER_GAPS_OUTPUTS.values())
        return targets

    def reference_experiments(self) -> dict[str, dict[str, str]]:
        """The experiments that compare with numbers printed in a paper (``reference:``): their reference key
        and table, what the table of flagged numbers (rule ``paper_gaps``) reads."""
        from .experiments.reference import REFERENCE

        return {name: {"reference": e["reference"], "csv": self.experiment_outputs(name)["csv"]}
                for name, e in self.experiments.items() if e.get("reference") in REFERENCE}

    def all_targets(self, timings: bool = True) -> list[str]:
        """Everything ``snakemake all`` builds; with ``timings`` also the per-rule time table, which reads the
        benchmark files of all the others."""
        return ([self.dataset_path(d) for d in self.config["datasets"]] + self.run_files("scatter.png")
                + ["results/tables/scores.csv", "results/tables/scores.html", "results/tables/datasets.csv",
                   "results/tables/datasets.html"] + self.paper_targets()
                + (list(TIMINGS_OUTPUTS.values()) if timings else []))

    # benchmark files (one per job: wall and CPU seconds, peak memory; Snakemake's ``benchmark:``)
    def run_chain(self, dataset: str, inputs: str, entry: str) -> list[str]:
        """Benchmark files of the jobs one run waits for, in order: fetch(es), dataset, inputs, the shared class
        posterior (SNeRV, PE), embed, score."""
        job = self.method_jobs[entry]
        inputs_id = self.inputs_ids[inputs]
        run = f"{dataset}/{inputs_id}/{job.method}/{job.params_id}"
        posterior_id = self.posterior_id(job.method, job.params_id)
        posterior = [] if posterior_id is None else [f"{BENCHMARK_DIR}/posterior/{dataset}/{inputs_id}/{posterior_id}.tsv"]
        return ([f"{BENCHMARK_DIR}/fetch/{k}.tsv" for k in self.raw_keys_for(dataset)]
                + [f"{BENCHMARK_DIR}/dataset/{dataset}.tsv", f"{BENCHMARK_DIR}/inputs/{dataset}/{inputs_id}.tsv"]
                + posterior + [f"{BENCHMARK_DIR}/embed/{run}.tsv", f"{BENCHMARK_DIR}/score/{run}.tsv"])

    def timing_plan(self) -> dict[str, Any]:
        """What the timings renderer needs: every run's chain of benchmark files (:meth:`run_chain`), per
        experiment its own benchmark file and the indices of the runs it uses, and ``threads``: the benchmark
        files of the jobs that declare more than one thread, with their count (the cores Snakemake holds for them)."""
        runs = self.runs()
        index = {r: i for i, r in enumerate(runs)}
        experiments = {name: {"paper": e["paper"], "own": f"{BENCHMARK_DIR}/experiment/{e['paper']}/{name}.tsv",
                              "runs": [index[r] for r in self.experiment_runs(name)]}
                       for name, e in self.experiments.items()}
        chains = [self.run_chain(*r) for r in runs]
        threads: dict[str, int] = {}
        for (dataset, inputs, entry), chain in zip(runs, chains):
            for embed_or_score in chain[-2:]:
                threads[embed_or_score] = int(self.method_jobs[entry].resources.get("threads", 1))
            inputs_id = self.inputs_ids[inputs]
            threads[f"{BENCHMARK_DIR}/inputs/{dataset}/{inputs_id}.tsv"] = int(
                self.inputs_resources(inputs_id).get("threads", 1))
        for name, e in experiments.items():
            threads[e["own"]] = int(self.experiment_resources(name).get("threads", 1))
        return {"runs": chains, "experiments": experiments,
                "threads": {f: t for f, t in sorted(threads.items()) if t > 1}}

    def datasets_info(self) -> list[tuple[str, str, str]]:
        """(name, loader, description) of every configured dataset, sorted by name (so that reordering the
        config does not re-run the table)."""
        return [(n, d["loader"], d.get("description", "")) for n, d in sorted(self.config["datasets"].items())]
