"""Studies: a user's data sets through the papers' protocols (:mod:`cova.experiments.protocols`), in a few lines::

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
        if name in seen:
            raise ConfigError(f"config key {where}: protocol {name!r} is named twice in study {study!r}; a study runs "
                              f"each protocol once")
        seen.add(name)
        out.append((name, options))
    return out


def _cohort_entries(methods: dict[str, dict[str, Any]]) -> set[str]:
    """The method entries whose method reads cohorts (labels, R or prototypes)."""
    from ..inputs import COHORT_INPUTS
    from ..methods import METHODS

    return {name for name, m in methods.items()
            if COHORT_INPUTS & set(METHODS[m["method"]](**m.get("params", {})).requires())}


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
        for name, options in _protocol_blocks(study, spec):
            protocol = PROTOCOLS[name](**options)
            prefix = f"{study}.{name}"
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
                for block, entries in protocol.runs:
                    kept = [e for e in entries if not (unlabelled and e in cohort_entries)]
                    dropped = [e for e in entries if e not in kept]
                    if dropped:
                        notices.append(
                            f"NOTICE: study {study!r}, protocol {name!r}: dataset {dataset!r} has no labels, so "
                            f"the methods that arrange cohorts ({', '.join(protocol.methods[e]['method'] for e in dropped)})"
                            f" do not run on it; give datasets.{dataset}.params.label to run them")
                    if kept:
                        runs.append({"dataset": dataset, "inputs": f"{study}.{block}",
                                     "methods": [f"{prefix}.{e}" for e in kept]})
            used_blocks = {r["inputs"] for r in runs}
            used_entries = {m for r in runs for m in r["methods"]}
            for block, value in protocol.inputs.items():
                if f"{study}.{block}" in used_blocks:  # shared by the study's protocols
                    add("inputs", f"{study}.{block}", value, f"studies.{study}")
            for entry, value in protocol.methods.items():
                if f"{prefix}.{entry}" in used_entries:
                    add("methods", f"{prefix}.{entry}", value, f"studies.{study}")
            if runs:
                add("experiments", prefix, {**protocol.experiment, "paper": protocol.paper, "study": study,
                                            "runs": runs}, f"studies.{study}")
    return out, notices


def _needs_labels(protocol: str) -> bool:
    from ..experiments.protocols import PROTOCOLS

    return "labels" in PROTOCOLS[protocol]().needs


def study_experiments(config: dict[str, Any], study: str) -> list[str]:
    """The experiments study ``study`` rendered (in an expanded config), in protocol order."""
    return [name for name, e in (config.get("paper", {}).get("experiments") or {}).items() if e.get("study") == study]


def resolve_config(config: dict[str, Any], base_dir: Any = None) -> dict[str, Any]:
    """The full configuration ``config`` stands for: its overlay resolved (:func:`~.files.resolve_overlay`) and its
    studies expanded (:func:`expand_studies`)."""
    from .files import resolve_overlay

    return expand_studies(resolve_overlay(config, base_dir))[0]
