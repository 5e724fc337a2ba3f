"""Protocols: a paper experiment over the data sets it lists (:func:`expand_experiment_datasets`), and studies: a
user's data sets through the papers' protocols (:mod:`cova.experiments.protocols`), in a few lines::

    datasets:
      cells: {loader: generic, params: {path: my_data/cells.h5ad, label: cell_type}}
    studies:
      cells: {datasets: [cells], protocols: [compare, {protocol: alpha_sweep, alphas: [0.2, 0.8]}]}

:func:`expand_studies` turns every study into the inputs blocks, method entries and experiments the rest of the
configuration uses (method entries ``<study>.<protocol>.<method>``, inputs blocks ``<study>.<block>``, shared by
the study's protocols, and experiments ``<study>.<protocol>``), so a config
that holds only studies runs only what they name. A data set without labels (a ``generic`` dataset without
``label``) goes through the protocols that need none; a protocol that needs labels is refused for it, naming the
study, the protocol and the data set; in a mixed protocol the method entries that need cohorts are dropped with a
notice naming them.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from .files import ConfigError

#: A study's protocols when it names none.
DEFAULT_PROTOCOLS = ("compare",)
#: The sections a study adds entries to.
_SECTIONS = ("inputs", "methods")


def is_unlabelled(ds: dict[str, Any]) -> bool:
    """Whether dataset entry ``ds`` has no labels: a ``generic`` file read without a ``label`` column."""
    return ds.get("loader") == "generic" and ds.get("params", {}).get("label") is None


def _protocol_blocks(study: str, spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    from ..constraints import OptionError, check_options
    from ..experiments.protocols import PROTOCOLS

    items = spec.get("protocols", list(DEFAULT_PROTOCOLS))
    out, seen = [], set()
    for i, item in enumerate(items):
        block = {"protocol": item} if isinstance(item, str) else dict(item)
        where = f"studies.{study}.protocols[{i}]"
        try:
            options = check_options(PROTOCOLS, block, where)
        except OptionError as err:
            raise ConfigError(str(err)) from None
        name = options.pop("protocol")
        key = options.get("experiment", name)  # `paper` once per experiment it reuses
        if key in seen:
            raise ConfigError(f"config key {where}: protocol {key!r} is named twice in study {study!r}; a study runs "
                              f"each protocol once")
        seen.add(key)
        out.append((name, options))
    return out


def _cohort_entries(methods: dict[str, dict[str, Any]]) -> set[str]:
    """The method entries whose method reads cohorts (labels, R or prototypes)."""
    from ..inputs import COHORT_INPUTS
    from ..methods import METHODS

    return {name for name, m in methods.items()
            if COHORT_INPUTS & set(METHODS[m["method"]](**m.get("params", {})).requires())}


def block_arranges_cohorts(block: dict[str, Any]) -> bool:
    """Whether an inputs block builds cohort confidences R or prototypes from the data's labels (a weights block
    builds both; spectral cohorts make their own labels)."""
    return bool({"weights", "confidence", "prototypes"} & set(block)) and \
        (block.get("cohorts") or {}).get("kind") != "spectral"


@functools.lru_cache(maxsize=4)
def _shipped(path: str, mtime: float) -> dict[str, Any]:
    from .files import read_config_file, resolve_overlay

    return expand_experiment_datasets(resolve_overlay(read_config_file(path)))


def _reused(experiment: str, where: str) -> Any:
    """Protocol ``paper``: experiment ``experiment`` of the shipped ``config.yaml`` as a protocol, under the
    configuration's own names (so the renderer's options that name inputs blocks or entries stay true)."""
    from ..experiments.protocols import Protocol
    from .files import PROJECT_ROOT

    path = PROJECT_ROOT / "config.yaml"
    base = _shipped(str(path), path.stat().st_mtime)
    shipped = base.get("paper", {}).get("experiments", {})
    if experiment not in shipped:
        raise ConfigError(f"config key {where}.experiment: {experiment!r} is not an experiment of {path.name}; "
                          f"allowed: {sorted(shipped)}")
    e = shipped[experiment]
    runs: list[tuple[str, list[str], dict[str, Any]]] = []
    for r in e["runs"]:
        extra = {k: v for k, v in r.items() if k not in ("dataset", "inputs", "methods")}
        item = (r["inputs"], list(r["methods"]), extra)
        if item not in runs:
            runs.append(item)
    inputs = {b: base["inputs"][b] for b, _, _ in runs}
    methods = {m: base["methods"][m] for _, ms, _ in runs for m in ms}
    kept = {k: v for k, v in e.items() if k not in _PAPER_ONLY}
    kept["title"] = f"The protocol of paper experiment {experiment} ({e['paper']})"  # its own title names its data
    kept["caption"] = f"The runs and figure of paper experiment {experiment} on this study's data sets."
    return Protocol(e["paper"], inputs, methods, runs, kept, frozenset(), experiment)


#: What a paper experiment keeps to itself when it is a study's protocol: its data and the paper's numbers and words.
_PAPER_ONLY = ("paper", "runs", "datasets", "claims", "paper_data", "reference", "notes", "fallbacks", "title",
               "caption", "study")


def expand_studies(config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The configuration with every study's inputs blocks, method entries and experiments added, and one notice per
    method entry dropped for a data set without labels. Idempotent: a config already expanded is returned as is
    (with the same notices). Raises :class:`ConfigError` naming the key for an unknown data set or protocol, bad
    protocol options, a generated name the config already uses for something else, or a protocol that needs labels
    on a data set without them."""
    from ..experiments.protocols import PROTOCOLS

    studies = config.get("studies") or {}
    if not studies:
        return config, []
    out = copy.deepcopy(config)
    for section in _SECTIONS:
        out[section] = dict(out.get(section) or {})
    out.setdefault("runs", [])
    out["paper"] = dict(out.get("paper") or {})
    experiments = out["paper"]["experiments"] = dict(out["paper"].get("experiments") or {})
    datasets = out.get("datasets") or {}
    notices: list[str] = []

    def add(section: str, name: str, value: dict[str, Any], where: str) -> None:
        have = section_of(section).get(name)
        if have is not None and have != value:
            raise ConfigError(f"config key {where}: study generates {section} entry {name!r}, which the config "
                              f"already defines otherwise; rename that entry (names <study>.<...> "
                              f"are the studies')")
        section_of(section)[name] = value

    def section_of(section: str) -> dict[str, Any]:
        return experiments if section == "experiments" else out[section]

    for study, spec in studies.items():
        for i, dataset in enumerate(spec["datasets"]):
            if dataset not in datasets:
                raise ConfigError(f"config key studies.{study}.datasets[{i}]: {dataset!r} is not defined in "
                                  f"datasets; defined: {sorted(datasets)}")
        for i, (name, options) in enumerate(_protocol_blocks(study, spec)):
            protocol = PROTOCOLS[name](**options)
            prefix = f"{study}.{name}"
            block_name, entry_name = f"{study}.{{}}".format, f"{prefix}.{{}}".format
            if protocol.reuses is not None:  # a paper experiment: its own names
                protocol = _reused(protocol.reuses, f"studies.{study}.protocols[{i}]")
                prefix = f"{study}.{protocol.reuses}"
                block_name = entry_name = str
            cohort_entries = _cohort_entries(protocol.methods)
            runs = []
            for dataset in spec["datasets"]:
                unlabelled = is_unlabelled(datasets[dataset])
                if unlabelled and "labels" in protocol.needs:
                    raise ConfigError(
                        f"config key studies.{study}.protocols: protocol {name!r} needs cohort labels, but dataset "
                        f"{dataset!r} has none (datasets.{dataset}.params has no label); give the label column "
                        f"(params.label) or remove {name!r} from this study; the protocols that need no labels: "
                        f"{', '.join(sorted(p for p in PROTOCOLS if not _needs_labels(p)))}")
                for block, entries, *extra in protocol.runs:
                    arranges = unlabelled and block_arranges_cohorts(protocol.inputs[block])
                    kept = [e for e in entries if not (unlabelled and (arranges or e in cohort_entries))]
                    dropped = [e for e in entries if e not in kept]
                    if dropped:
                        notices.append(
                            f"NOTICE: study {study!r}, protocol {name!r}: dataset {dataset!r} has no labels, so "
                            f"the runs that arrange cohorts ({', '.join(protocol.methods[e]['method'] for e in dropped)}"
                            f"{f' on inputs {block!r}' if arranges else ''}) do not run on it; give "
                            f"datasets.{dataset}.params.label to run them")
                    if kept:
                        runs.append({"dataset": dataset, "inputs": block_name(block),
                                     "methods": [entry_name(e) for e in kept], **(extra[0] if extra else {})})
            used_blocks = {r["inputs"] for r in runs}
            used_entries = {m for r in runs for m in r["methods"]}
            for block, value in protocol.inputs.items():
                if block_name(block) in used_blocks:  # shared by the study's protocols
                    add("inputs", block_name(block), value, f"studies.{study}")
            for entry, value in protocol.methods.items():
                if entry_name(entry) in used_entries:
                    add("methods", entry_name(entry), value, f"studies.{study}")
            if runs:
                block = {**protocol.experiment, "paper": protocol.paper, "study": study, "runs": runs}
                if protocol.reuses is not None:
                    block["title"] += f" on {', '.join(dict.fromkeys(r['dataset'] for r in runs))}"
                add("experiments", prefix, block, f"studies.{study}")
    return out, notices


def _needs_labels(protocol: str) -> bool:
    """Whether protocol ``protocol`` needs labels whatever its options (``paper``: the experiment it reuses says)."""
    from ..constraints import REQUIRED, option_defaults
    from ..experiments.protocols import PROTOCOLS

    if any(v is REQUIRED for v in option_defaults(PROTOCOLS[protocol]).values()):
        return False
    return "labels" in PROTOCOLS[protocol]().needs


def study_experiments(config: dict[str, Any], study: str) -> list[str]:
    """The experiments study ``study`` rendered (in an expanded config), in protocol order."""
    return [name for name, e in (config.get("paper", {}).get("experiments") or {}).items() if e.get("study") == study]


def expand_experiment_datasets(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration with every paper experiment that lists its ``datasets`` given one run per data set for each
    of its runs that names no ``dataset`` (in place of that run, in the order of ``datasets``), so that an experiment
    is a protocol and adding a data set to it is one line::

        table_h2:
          datasets: [sinusoid, compound]
          runs:
            - {inputs: ring, methods: [e1_h2, e2_h2]}

    Runs that name their dataset stay as they are. Raises :class:`ConfigError` naming the run for a run without a
    dataset in an experiment without ``datasets``. Idempotent."""
    experiments = (config.get("paper") or {}).get("experiments") or {}
    if not any(isinstance(e, dict) and isinstance(e.get("runs"), list)
               and any(isinstance(r, dict) and "dataset" not in r for r in e["runs"]) for e in experiments.values()):
        return config
    out = copy.deepcopy(config)
    for name, e in out["paper"]["experiments"].items():
        if not isinstance(e, dict) or not isinstance(e.get("runs"), list):
            continue  # the schema names what is wrong
        datasets = e.get("datasets")
        runs = []
        for i, run in enumerate(e["runs"]):
            if not isinstance(run, dict) or "dataset" in run:
                runs.append(run)
            elif isinstance(datasets, list) and datasets:
                runs.extend({"dataset": d, **run} for d in datasets)
            else:
                raise ConfigError(f"config key paper.experiments.{name}.runs[{i}]: names no dataset; give it "
                                  f"dataset: <name>, or list the experiment's data sets (paper.experiments.{name}."
                                  f"datasets: [...]) to run it on each")
        e["runs"] = runs
    return out


def resolve_config(config: dict[str, Any], base_dir: Any = None) -> dict[str, Any]:
    """The full configuration ``config`` stands for: its overlay resolved (:func:`~.files.resolve_overlay`), its
    experiments' ``datasets`` (:func:`expand_experiment_datasets`) and its studies expanded
    (:func:`expand_studies`)."""
    from .files import resolve_overlay

    return expand_studies(expand_experiment_datasets(resolve_overlay(config, base_dir)))[0]
