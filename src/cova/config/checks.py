"""The configuration check run before any job: the JSON schema (structure, names), then every declared option
(methods, loaders, inputs blocks, renderers: :mod:`cova.constraints`) and the cross-references between sections.
Every refusal is a :class:`~.files.ConfigError` naming the key, the value and what is allowed."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any

import jsonschema

from .files import ConfigError, _describe, _StrictIntegers, check_acyclic, load_schema, read_config_file
from .plan import _local_file, expand_grid
from .studies import block_arranges_cohorts, is_unlabelled, resolve_config


def check_config_file(path: str | Path, base_dir: str | Path | None = None) -> dict[str, Any]:
    """Read ``path`` (:func:`read_config_file`), resolve it if it is an overlay (its base looked up in
    ``base_dir``, by default the project root) and validate it (:func:`validate_config`). Returns the full
    configuration; raises :class:`ConfigError` naming the file, line, or key."""
    config = resolve_config(read_config_file(path), base_dir)
    validate_config(config)
    return config



def validate_config(config: dict[str, Any], schema_path: str | Path | None = None) -> None:
    """Validate ``config`` against the JSON schema, then the cross-references between its sections.

    Raises :class:`ConfigError` whose message names the offending key and the allowed values. An overlay is
    validated as the full configuration it stands for (:func:`~.studies.resolve_config`: base looked up in the project
    root, studies expanded).
    """
    check_acyclic(config)
    config = resolve_config(config)
    schema = load_schema(schema_path)
    validator = _StrictIntegers(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        raise ConfigError(_describe(best))
    _check_references(config, schema)


def _check_references(config: dict[str, Any], schema: dict[str, Any]) -> None:
    from ..constraints import OptionError, check_options
    from ..datasets import LOADERS
    from ..experiments.claims import check_claims
    from ..experiments.reference import REFERENCE
    from ..experiments.registry import check_experiment
    from ..inputs import check_inputs_block
    from ..methods import METHODS, method_parameters

    _check_names(config)
    for name, ds in config["datasets"].items():
        if ds["loader"] not in LOADERS:
            raise ConfigError(f"config key datasets.{name}.loader: {ds['loader']!r} is not allowed; "
                              f"allowed values: {sorted(LOADERS)}")
        if ds["loader"] == "generic" and "source" not in ds and "path" not in ds.get("params", {}):
            raise ConfigError(f"config key datasets.{name}: the generic loader needs params.path (a local file) "
                              f"or source: {{url, sha256}}")
        params = dict(ds.get("params", {}))
        if ds["loader"] == "generic" and "source" in ds:
            params.setdefault("path", f"data/raw/{name}/")  # the download's file (Plan.loader_params)
        try:
            check_options(LOADERS[ds["loader"]], params, f"datasets.{name}.params", f"loader {ds['loader']!r}")
        except OptionError as err:
            raise ConfigError(str(err)) from None
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
    for name, m in config["methods"].items():
        if m["method"] not in METHODS:
            raise ConfigError(f"config key methods.{name}.method: {m['method']!r} is not allowed; "
                              f"allowed values: {sorted(METHODS)}")
        cls = METHODS[m["method"]]
        allowed = method_parameters(m["method"])
        for key in ("params", "grid"):
            unknown = sorted(set(m.get(key, {})) - set(allowed))
            if unknown:
                raise ConfigError(f"config key methods.{name}.{key}: unknown parameters {unknown}; "
                                  f"allowed for method {m['method']!r}: {allowed}")
        for _, params, chosen in expand_grid(name, m):
            try:
                check_options(cls, params, f"methods.{name}.params", f"method {m['method']!r}")
            except OptionError as err:
                param = err.key.rsplit(".", 1)[1]
                raise ConfigError(str(err).replace(f"methods.{name}.params.", f"methods.{name}.grid.", 1)
                                  if param in chosen else str(err)) from None
    for name, block in config["inputs"].items():
        try:
            check_inputs_block({k: v for k, v in block.items() if k != "resources"}, f"inputs.{name}")
        except OptionError as err:
            raise ConfigError(str(err)) from None
    experiments = config.get("paper", {}).get("experiments", {})
    for name, e in experiments.items():
        for j, dataset in enumerate(e.get("datasets", [])):
            _ref(config, "datasets", dataset, f"paper.experiments.{name}.datasets[{j}]")
    blocks = [("runs", config["runs"], [], None)] + [
        (f"paper.experiments.{n}.runs", e["runs"], e.get("datasets", []), e.get("study")) for n, e in experiments.items()]
    for where, runs, listed, study in blocks:
        if study is not None:  # generated by a study: name the study, which the user wrote
            where = f"studies.{study} (its {where[len('paper.experiments.'):-len('.runs')]} runs)"
        for i, run in enumerate(runs):
            _ref(config, "datasets", run["dataset"], f"{where}[{i}].dataset")
            _ref(config, "inputs", run["inputs"], f"{where}[{i}].inputs")
            for j, m in enumerate(run["methods"]):
                _ref(config, "methods", m, f"{where}[{i}].methods[{j}]")
            # a run of an experiment's listed data sets: say which entry of `datasets` it comes from
            at = where if study is not None else f"{where}[{i}]" + (
                f" (from {where[:-5]}.datasets[{listed.index(run['dataset'])}])" if run["dataset"] in listed else "")
            _check_required_inputs(config, run, at)
            _check_dataset_graph(config, run, at)
            _check_cohort_count(config, run, at)
            _check_sample_count(config, run, at)
            _check_prototype_dimension(config, run, at)
    for name, e in experiments.items():
        if "reference" in e and e["reference"] not in REFERENCE:
            raise ConfigError(f"config key paper.experiments.{name}.reference: {e['reference']!r} is not "
                              f"allowed; allowed values: {sorted(REFERENCE)}")
        try:
            check_experiment(name, e, experiment_context(config, e))
        except OptionError as err:
            raise ConfigError(str(err)) from None
    try:
        check_claims(experiments, config.get("paper", {}).get("excluded"))
    except OptionError as err:
        raise ConfigError(str(err)) from None
    fig1 = config.get("paper", {}).get("cova", {}).get("fig1")
    if fig1:
        _ref(config, "datasets", fig1["dataset"], "paper.cova.fig1.dataset")
        _ref(config, "inputs", fig1["inputs"], "paper.cova.fig1.inputs")
        for role, method in (("cova", "cova_e1"), ("tsne", "tsne")):
            _ref(config, "methods", fig1[role], f"paper.cova.fig1.{role}")
            if config["methods"][fig1[role]]["method"] != method:
                raise ConfigError(f"config key paper.cova.fig1.{role}: {fig1[role]!r} must name a {method!r} "
                                  f"method entry")


#: Longest name (in bytes) of a dataset, inputs block, method entry (with its grid values), experiment or study. A
#: name becomes a file or folder name with a suffix of up to 30 bytes (``-{hash}``, ``.npz``, the atomic writer's
#: ``.{name}.npz.{random}.npz``), and file systems refuse a name longer than 255 bytes.
MAX_NAME_BYTES = 200
#: The folders of ``results/`` that are not a dataset's: a dataset of one of these names would write its runs among
#: the tables, pages, logs or benchmark files.
RESERVED_DATASET_NAMES = ("benchmarks", "logs", "paper", "params", "studies", "tables")
#: Names that Windows (and file systems shared with it) reserve for devices, whatever the suffix or case.
RESERVED_DEVICE_NAMES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
                                   *(f"lpt{i}" for i in range(1, 10))})


def _check_names(config: dict[str, Any]) -> None:
    """Refuse names that cannot become file names (longer than :data:`MAX_NAME_BYTES`, a device name of
    :data:`RESERVED_DEVICE_NAMES`, a dataset named like a folder of :data:`RESERVED_DATASET_NAMES`) and a method
    entry whose name another entry's grid also generates (:func:`~.plan.expand_grid`): one of the two runs would
    silently replace the other under its name."""
    named = [(section, name) for section in ("datasets", "inputs") for name in config[section]]
    named += [("paper.experiments", name) for name in config.get("paper", {}).get("experiments", {})]
    named += [("studies", name) for name in config.get("studies") or {}]
    generated: dict[str, tuple[str, dict[str, Any]]] = {}
    for entry, m in config["methods"].items():
        named.append(("methods", entry))
        for name, _, chosen in expand_grid(entry, m):
            if not chosen:
                continue
            point = ", ".join(f"{k}={v!r}" for k, v in chosen.items())
            if name in config["methods"]:
                raise ConfigError(f"config key methods.{name}: this entry's name is also the name of the grid point "
                                  f"{point} of methods.{entry} (a grid names its points {{entry}}-{{param}}{{value}}), "
                                  f"so one run would replace the other; rename methods.{name}")
            if name in generated:
                other, values = generated[name]
                first = ", ".join(f"{k}={v!r}" for k, v in values.items())
                raise ConfigError(f"config key methods.{entry}.grid: the grid point {point} gets the name {name!r}, "
                                  f"which the grid point {first} of methods.{other} also gets, so one run would "
                                  f"replace the other; give the grid different values or rename an entry")
            generated[name] = (entry, chosen)
            named.append((f"methods.{entry}.grid", name))
    for where, name in named:
        size = len(name.encode("utf-8"))
        shown = name if size <= 60 else f"{name[:40]}...{name[-12:]}"
        if size > MAX_NAME_BYTES:
            what = "the generated name" if where.endswith(".grid") else "the name"
            raise ConfigError(f"config key {where}: {what} {shown!r} has {size} bytes; allowed: at most "
                              f"{MAX_NAME_BYTES} (it becomes a file name, and file systems refuse names over 255 "
                              f"bytes); use a shorter name")
        if name.split(".", 1)[0].lower() in RESERVED_DEVICE_NAMES:
            raise ConfigError(f"config key {where}: {name!r} is not allowed; names before a '.' must not be one of "
                              f"the device names {sorted(RESERVED_DEVICE_NAMES)} (any case), which some file "
                              f"systems refuse as file names; rename it")
        if where == "datasets" and name in RESERVED_DATASET_NAMES:
            raise ConfigError(f"config key datasets: {name!r} is not allowed; results/{name}/ holds the workflow's "
                              f"own files, so a dataset must not be named {list(RESERVED_DATASET_NAMES)}; rename it")


def experiment_context(config: dict[str, Any], experiment: dict[str, Any]) -> dict[str, Any]:
    """What a renderer's rules check its options against (:func:`cova.experiments.registry.check_experiment`): one
    dict per expanded run of the experiment, with its dataset's loader and its grid values."""
    runs = []
    for run in experiment["runs"]:
        loader = config["datasets"][run["dataset"]]["loader"]
        for group in run["methods"]:
            m = config["methods"][group]
            for entry, _, chosen in expand_grid(group, m):
                runs.append({"dataset": run["dataset"], "loader": loader, "inputs": run["inputs"], "entry": entry,
                             "group": group, "method": m["method"], "grid": chosen})
    return {"runs": runs}


def _check_required_inputs(config: dict[str, Any], run: dict[str, Any], where: str) -> None:
    """Refuse a run whose inputs block does not provide what one of its methods requires
    (:meth:`cova.methods.Embedder.requires` against :func:`cova.inputs.provided_inputs`)."""
    from ..inputs import provided_inputs
    from ..methods import METHODS, split_capable

    block = {k: v for k, v in config["inputs"][run["inputs"]].items() if k != "resources"}
    provided = provided_inputs(block)
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


def _check_dataset_graph(config: dict[str, Any], run: dict[str, Any], where: str) -> None:
    """Refuse a run whose inputs block reads the dataset's own graph (``graph: {source: relations}``, ``relation:
    {source: hop_distances}``) on a dataset whose loader gives none (:data:`cova.datasets.GRAPH_LOADERS`)."""
    from ..datasets import GRAPH_LOADERS

    block = config["inputs"][run["inputs"]]
    reads = ("graph" in block and "graph: {source: relations}") or (
        (block.get("relation") or {}).get("source") == "hop_distances" and "relation: {source: hop_distances}")
    loader = config["datasets"][run["dataset"]]["loader"]
    if reads and loader not in GRAPH_LOADERS:
        raise ConfigError(f"config key {where}: inputs block {run['inputs']!r} reads the dataset's graph ({reads}), "
                          f"but dataset {run['dataset']!r} (loader {loader!r}) has none; the loaders that give a "
                          f"graph: {', '.join(GRAPH_LOADERS)}; for vector data use weights: {{kind: ...}} instead")


#: Loader -> the parameters whose product is its number of cohorts (a loader's default when not set); loaders not
#: listed read their classes from a file. ``random_matrix`` has one cohort by design (no parameters).
COHORT_PARAMETERS: dict[str, tuple[str, ...]] = {
    "sinusoid": ("n_cohorts",), "swiss_roll": ("n_cohorts",), "cylinder1": ("n_sectors",),
    "cylinder2": ("n_sectors", "n_bands"), "s_curve": ("n_t_bins", "n_h_bins"), "sphere": ("n_lon_bins", "n_lat_bins"),
    "places_shaped": ("n_classes",), "places2": ("n_classes",), "random_matrix": (), "cohort_manifold": ("n_cohorts",),
}


def loader_param(ds: dict[str, Any], key: str) -> Any:
    """Parameter ``key`` of dataset entry ``ds``: its configured value, else its loader's default."""
    from ..datasets import LOADERS

    params = ds.get("params", {})
    return params[key] if key in params else inspect.signature(LOADERS[ds["loader"]]).parameters[key].default


def known_cohort_count(ds: dict[str, Any]) -> tuple[int, str] | None:
    """(number of cohorts, how it follows from the params) of a dataset entry whose loader fixes it
    (:data:`COHORT_PARAMETERS`; ``places2`` only with ``n_classes`` set; one for a ``generic`` file without a
    label column), else ``None``."""
    if is_unlabelled(ds):
        return 1, "a generic file read without a label column (params.label)"
    if ds["loader"] not in COHORT_PARAMETERS:
        return None
    values = {k: loader_param(ds, k) for k in COHORT_PARAMETERS[ds["loader"]]}
    if None in values.values():
        return None
    how = ", ".join(f"{k}={v}" for k, v in values.items()) or "one cohort by design"
    return int(math.prod(values.values())), f"loader {ds['loader']!r}: {how}"


#: Loader -> the parameter that fixes its number of samples (a loader's default when not set): the generated
#: data sets. Loaders not listed read their samples from files.
SAMPLE_PARAMETERS: dict[str, str] = {
    "sinusoid": "n_samples", "swiss_roll": "n_samples", "cylinder1": "n_samples", "cylinder2": "n_samples",
    "s_curve": "n_samples", "sphere": "n_samples", "random_matrix": "n_samples", "cohort_manifold": "n_samples",
}


def known_sample_count(ds: dict[str, Any]) -> tuple[int, str] | None:
    """(number of samples, the parameter that sets it) of a dataset entry whose loader fixes it
    (:data:`SAMPLE_PARAMETERS`), else ``None``. A run's inputs block may keep fewer (a subset), never more."""
    key = SAMPLE_PARAMETERS.get(ds["loader"])
    if key is None:
        return None
    n = loader_param(ds, key)
    return int(n), (f"params.{key}={n}" if key in ds.get("params", {})
                    else f"loader {ds['loader']!r}'s default {key}={n}")


def _check_sample_count(config: dict[str, Any], run: dict[str, Any], where: str) -> None:
    """Refuse a run on a dataset of known size n whose weight graph or score settings do not fit it: the graph's
    ``weights.n_neighbors`` must be < n (:func:`cova.affinity.knn.nearest_neighbors`); trustworthiness and continuity
    need ``metrics.n_neighbors`` < n / 2 (:func:`cova.metrics.neighborhood.trustworthiness`); the message says
    whether a value is the declared default (:func:`cova.metrics.score.score_run`), which the user can set."""
    from ..inputs import check_inputs_block
    from ..metrics.score import score_run

    known = known_sample_count(config["datasets"][run["dataset"]])
    if known is None:
        return
    n, how = known
    name = run["inputs"]
    block = {k: v for k, v in config["inputs"][name].items() if k != "resources"}
    weights = check_inputs_block(block, f"inputs.{name}")["weights"] or {}
    k = weights.get("n_neighbors")
    if isinstance(k, int) and k >= n:
        set_by_user = "n_neighbors" in block.get("weights", {})
        shown = f"{k}" if set_by_user else f"{k} (the default of weights kind {weights['kind']!r})"
        raise ConfigError(f"config key inputs.{name}.weights.n_neighbors: {shown} is not allowed for {where}: "
                          f"dataset {run['dataset']!r} has {n} samples ({how}), and the weight graph needs "
                          f"n_neighbors < n (each sample's own row excluded); set inputs.{name}.weights.n_neighbors "
                          f"to at most {n - 1}")
    given = config.get("metrics", {})
    k = given.get("n_neighbors", inspect.signature(score_run).parameters["n_neighbors"].default)
    if k >= n / 2:
        shown = f"{k}" if "n_neighbors" in given else f"{k} (the default)"
        raise ConfigError(f"config key metrics.n_neighbors: {shown} is not allowed for {where}: dataset "
                          f"{run['dataset']!r} has {n} samples ({how}), and trustworthiness and continuity need "
                          f"n_neighbors < n / 2 = {n / 2:g}; set metrics.n_neighbors to at most {math.ceil(n / 2) - 1}"
                          f" or give datasets.{run['dataset']}.params.{SAMPLE_PARAMETERS[config['datasets'][run['dataset']]['loader']]}"
                          f" at least {2 * k + 1}")


def _check_cohort_count(config: dict[str, Any], run: dict[str, Any], where: str) -> None:
    """Refuse a run that arranges cohorts (an inputs block building R or prototypes, or a method requiring labels,
    R or prototypes) on a dataset known to have fewer than 2 cohorts (:func:`cova.inputs.require_cohorts`)."""
    from ..inputs import COHORT_INPUTS, require_cohorts
    from ..methods import METHODS

    block = config["inputs"][run["inputs"]]
    known = known_cohort_count(config["datasets"][run["dataset"]])
    subset = block.get("subset", {}).get("n_classes")
    if known is not None and subset is not None and subset > known[0]:
        raise ConfigError(f"config key {where}: inputs block {run['inputs']!r} keeps subset.n_classes={subset} "
                          f"classes, but dataset {run['dataset']!r} has {known[0]} ({known[1]})")
    if block.get("cohorts", {}).get("kind") == "spectral" or known is None or known[0] >= 2:
        return
    who = []
    if block_arranges_cohorts(block):
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




def known_prototype_dimension(config: dict[str, Any], run: dict[str, Any]) -> tuple[int, str] | None:
    """(k, where it comes from) of the prototypes Υ that run's inputs block builds, when the configuration fixes
    it: ``given`` rows (their length), the generated kinds (2), ``means`` on PCA features (their ``n_components``)
    or on a dataset whose loader fixes its columns (``places_shaped``'s ``n_features``, a ``generic`` loader's
    ``features`` list); else ``None`` (the embed step checks the built Υ)."""
    from ..inputs import check_inputs_block

    name = run["inputs"]
    raw = config["inputs"][name]
    if "prototypes" not in raw:
        return None
    block = check_inputs_block({k: v for k, v in raw.items() if k != "resources"}, f"inputs.{name}")
    recipe, key = block["prototypes"], f"inputs.{name}.prototypes"
    if recipe["kind"] == "given" and recipe.get("given"):
        return max(len(row) for row in recipe["given"]), f"{key}.given (rows of that many coordinates)"
    if recipe["kind"] != "means":
        return 2, f"{key}.kind {recipe['kind']!r}"
    features = block.get("features") or {"kind": "raw"}
    if recipe["space"] == "features" and features["kind"] == "pca":
        return int(features["n_components"]), f"{key}.kind 'means' on inputs.{name}.features.n_components"
    if recipe["space"] == "features" and features["kind"] != "raw":
        return None
    ds = config["datasets"][run["dataset"]]
    params = ds.get("params", {})
    if ds["loader"] == "places_shaped":
        d = loader_param(ds, "n_features")
        return int(d), f"{key}.kind 'means' on the n_features = {d} columns of dataset {run['dataset']!r}"
    if ds["loader"] == "generic" and isinstance(params.get("features"), list):
        return len(params["features"]), (f"{key}.kind 'means' on the {len(params['features'])} columns of "
                                         f"datasets.{run['dataset']}.params.features")
    return None


def _check_prototype_dimension(config: dict[str, Any], run: dict[str, Any], where: str) -> None:
    """Refuse a run whose method embeds in the dimension of its prototypes (reads ``prototypes``) when the
    configuration fixes that dimension outside 1-3 (:func:`known_prototype_dimension`,
    :func:`cova.methods.check_prototype_dimension`)."""
    from ..methods import METHODS, check_prototype_dimension

    known = known_prototype_dimension(config, run)
    if known is None:
        return
    for entry in run["methods"]:
        m = config["methods"][entry]
        if any("prototypes" in METHODS[m["method"]](**params).requires() for _, params, _ in expand_grid(entry, m)):
            try:
                check_prototype_dimension(known[0], f"method entry {entry!r} ({m['method']})", known[1])
            except ValueError as err:
                raise ConfigError(f"config key {where}: {err}") from None


def _ref(config: dict[str, Any], section: str, name: str, where: str) -> None:
    if name not in config[section]:
        raise ConfigError(f"config key {where}: {name!r} is not defined in {section}; "
                          f"defined: {sorted(config[section])}")

