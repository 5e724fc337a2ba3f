"""The plan: every output path a configuration asks for, and the parameters behind each wildcard value. The
Snakefile asks a :class:`Plan` for every path, so the rules stay thin and the naming logic is tested without
Snakemake."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .files import ConfigError, resolve_overlay
from .studies import expand_experiment_datasets, expand_studies


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
        if "datasets" in e:
            e["datasets"] = [missing.get(d, d) for d in e["datasets"]]
        if used:
            e["fallbacks"] = {k: missing[k] for k in sorted(used)}
    fig1 = config.get("paper", {}).get("cova", {}).get("fig1")
    if fig1 and fig1["dataset"] in missing:
        fig1["dataset"] = missing[fig1["dataset"]]
    return config, notices



def make_id(name: str, payload: Any) -> str:
    """Readable slug plus a hash of the exact parameters: a changed parameter gives a new path."""
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return f"{name}-{digest[:8]}"


#: Where every job's Snakemake ``benchmark:`` file goes: ``{BENCHMARK_DIR}/{rule}/...{wildcards}.tsv``.
BENCHMARK_DIR = "results/benchmarks/jobs"
#: The table of our numbers far from the papers' and their causes (rule ``paper_gaps``).
PAPER_GAPS_OUTPUTS = {"csv": "results/tables/paper_gaps.csv", "html": "results/tables/paper_gaps.html"}
#: Every claim of the papers with its verdict (rule ``scorecard``).
SCORECARD_OUTPUTS = {"csv": "results/paper/scorecard.csv", "html": "results/paper/scorecard.html"}
#: The per-rule / per-experiment time table of the whole run (rule ``timings``).
TIMINGS_OUTPUTS = {"csv": "results/tables/timings.csv", "html": "results/tables/timings.html",
                   "png": "results/tables/timings.png"}


#: The jobs of one run (dataset, inputs block, method entry): its ``embed`` and its ``score``.
JOBS_PER_RUN = 2
#: More jobs than this from one method entry (its grid points × the dataset and inputs pairs it runs on ×
#: :data:`JOBS_PER_RUN`) is far more than usual: the plan says so before any job starts (:attr:`Plan.notices`).
LARGE_ENTRY_JOBS = 2000


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
    base = dict(spec.get("params", {}))  # the entry's structure (schema); values are checked by the method
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
    from ..methods import METHODS, make_method

    if not hasattr(METHODS[method], "class_posterior_settings"):
        return None
    return make_method(method, params, seed=seed).class_posterior_settings()


def _renderer_needs(name: str, experiment: dict[str, Any]) -> dict[str, Any]:
    """What experiment ``name``'s renderer needs in the scores of its runs (``measures``: metric groups,
    ``settings``: group -> settings), from the renderer's declaration (``run_metrics`` of
    :func:`cova.constraints.declare`) and the experiment's options."""
    from ..constraints import option_defaults, parameter_constraints
    from ..experiments.registry import RENDERERS

    renderer = RENDERERS[experiment["renderer"]]
    needs = getattr(renderer, "_run_metrics", None)
    if needs is None:
        return {}
    options = {**option_defaults(renderer),
               **{k: v for k, v in experiment.items() if k in parameter_constraints(renderer)}}
    return needs(options)


#: How the settings of a metric group that several experiments ask of one run combine: the largest k, any joint
#: measure, the longest curve; the relevant-set size and the input space must agree.
_SETTING_MERGE = {"k_max": max, "joint": lambda a, b: bool(a or b), "pr_k_max": max}


def _merge_settings(have: dict[str, Any] | None, new: dict[str, Any], where: str, entry: str) -> dict[str, Any]:
    if have is None:
        return dict(new)
    out = dict(have)
    for key, value in new.items():
        if key not in out or out[key] is None:
            out[key] = value
        elif value is None or value == out[key]:
            continue
        elif key in _SETTING_MERGE:
            out[key] = _SETTING_MERGE[key](out[key], value)
        else:
            raise ConfigError(f"config key {where}: asks for {key} = {value!r} in the scores of run {entry!r}, which "
                              f"another experiment asks for with {key} = {out[key]!r}; a run's scores have one")
    return out


class Plan:
    """Every output path the configuration asks for, and the parameters behind each wildcard value.

    Method jobs that fit the same class-posterior model (SNeRV and PE with the same mixture settings and seed)
    share one ``posterior`` job per inputs block (:meth:`posterior_file`); the model is the expensive part of
    each, and fitting it once gives the same embeddings."""

    def __init__(self, config: dict[str, Any]):
        config, study_notices = expand_studies(expand_experiment_datasets(resolve_overlay(config)))
        config, self.notices = resolve_fallbacks(config)
        self.notices = study_notices + self.notices
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
        self.notices += self._large_entries()
        self._run_settings: dict[tuple[str, str, str, str], dict[str, dict[str, Any]]] = {}
        for name, e in self.experiments.items():
            needs = _renderer_needs(name, e)
            for dataset, inputs, entry in self.expand_runs(e["runs"]):
                job = self.method_jobs[entry]
                key = (dataset, self.inputs_ids[inputs], job.method, job.params_id)
                for group in needs.get("measures", []):
                    chosen = self._run_measures.setdefault(key, [])
                    if group not in chosen:
                        chosen.append(group)
                for group, settings in needs.get("settings", {}).items():
                    have = self._run_settings.setdefault(key, {})
                    have[group] = _merge_settings(have.get(group), settings, f"paper.experiments.{name}", entry)

    def _large_entries(self) -> list[str]:
        """One notice per method entry that expands into more than :data:`LARGE_ENTRY_JOBS` jobs."""
        group_of = {name: entry for entry, names in self.entry_groups.items() for name in names}
        runs: dict[str, int] = {}
        for _, _, name in self.runs():
            runs[group_of[name]] = runs.get(group_of[name], 0) + 1
        notices = []
        for entry, n in runs.items():
            if n * JOBS_PER_RUN > LARGE_ENTRY_JOBS:
                points = len(self.entry_groups[entry])
                notices.append(f"NOTICE: config key methods.{entry}: {points} grid point(s) on {n // points} dataset "
                               f"and inputs pair(s) give {n} runs, {n * JOBS_PER_RUN} jobs (embed and score each), "
                               f"more than {LARGE_ENTRY_JOBS}; shorten the grid's lists if that is not meant.")
        return notices

    def run_metrics(self, dataset: str, inputs_id: str, method: str, params_id: str) -> dict[str, Any]:
        """The score settings of one run (the score rule's ``--metrics``): the ``metrics`` block, with
        ``measures`` extended by the opt-in groups of every ``runs`` item naming the run. A run that opts into
        nothing gets :attr:`metrics` itself, so its command line (and Snakemake's parameter record) is unchanged."""
        extra = self._run_measures.get((dataset, inputs_id, method, params_id), [])
        settings = self._run_settings.get((dataset, inputs_id, method, params_id), {})
        own = list(self.metrics.get("measures", []))
        if not [g for g in extra if g not in own] and not settings:
            return self.metrics
        return {**self.metrics, "measures": sorted({*own, *extra}), **settings}

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
        from ..datasets import raw_source

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
        from ..datasets.sources import source_file_name

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
        """What the renderer gets: the experiment block (its ``claims`` too, which its page evaluates) plus, per
        run, its names (``entry``: the run's method entry with its grid values; ``group``: the configured method
        entry it was expanded from), registered method, grid values and files."""
        e = self.experiments[name]
        group_of = {run: group for group, runs in self.entry_groups.items() for run in runs}
        runs = []
        for dataset, inputs, entry in self.experiment_runs(name):
            job = self.method_jobs[entry]
            runs.append({"dataset": dataset, "inputs": inputs, "entry": entry, "group": group_of[entry],
                         "method": job.method, "grid": job.grid_values, "data": self.dataset_path(dataset),
                         "inputs_file": self.inputs_file(dataset, inputs),
                         "embedding": self.run_file(dataset, inputs, entry, "embedding.npz"),
                         "scores": self.run_file(dataset, inputs, entry, "scores.json"),
                         "per_point": self.run_file(dataset, inputs, entry, "per_point.npz")})
        return {**{k: v for k, v in e.items() if k != "runs"}, "name": name, "runs": runs}

    def experiment_inputs(self, name: str) -> list[str]:
        files: dict[str, None] = {}
        for run in self.experiment_spec(name)["runs"]:
            for key in ("data", "inputs_file", "embedding", "scores", "per_point"):
                files[run[key]] = None
        return list(files)

    def experiment_outputs(self, name: str) -> dict[str, str]:
        """The figure, table and page of experiment ``name``: ``results/paper/{paper}/{name}.*``, or
        ``results/studies/{study}/{name}.*`` for an experiment a study generated."""
        e = self.experiments[name]
        stem = f"results/studies/{e['study']}/{name}" if "study" in e else f"results/paper/{e['paper']}/{name}"
        return {"png": f"{stem}.png", "csv": f"{stem}.csv", "html": f"{stem}.html"}

    def experiment_benchmark(self, name: str) -> str:
        """The benchmark file of experiment ``name``'s rendering job."""
        e = self.experiments[name]
        group = f"studies/{e['study']}" if "study" in e else e["paper"]
        return f"{BENCHMARK_DIR}/experiment/{group}/{name}.tsv"

    @property
    def studies(self) -> list[str]:
        """The configured studies, in config order."""
        return list(self.config.get("studies") or {})

    def study_experiments(self, study: str) -> list[str]:
        """The experiments study ``study`` generated, one per protocol it runs."""
        return [n for n, e in self.experiments.items() if e.get("study") == study]

    def study_runs(self, study: str) -> list[tuple[str, str, str]]:
        """Every run of study ``study``'s experiments, in order, no repeats."""
        return self.expand_runs([r for n in self.study_experiments(study) for r in self.experiments[n]["runs"]])

    @staticmethod
    def study_page(study: str) -> dict[str, str]:
        """The page and the scores table of study ``study`` (rule ``study``)."""
        return {"html": f"results/studies/{study}/index.html", "csv": f"results/studies/{study}/scores.csv"}

    def study_spec(self, study: str) -> dict[str, Any]:
        """What the study page gets: its name, data sets, experiments (name, protocol, title, files) and runs (as in
        :meth:`experiment_spec`, with each run's scatter)."""
        experiments = [{"name": n, "protocol": n[len(study) + 1:], "title": self.experiments[n].get("title") or n,
                        **self.experiment_outputs(n)} for n in self.study_experiments(study)]
        group_of = {run: group for group, runs in self.entry_groups.items() for run in runs}
        runs = []
        for dataset, inputs, entry in self.study_runs(study):
            job = self.method_jobs[entry]
            runs.append({"dataset": dataset, "inputs": inputs, "entry": entry, "group": group_of[entry],
                         "method": job.method, "grid": job.grid_values,
                         "scores": self.run_file(dataset, inputs, entry, "scores.json"),
                         "scatter": self.run_file(dataset, inputs, entry, "scatter.png")})
        datasets = list(dict.fromkeys(r["dataset"] for r in runs))
        return {"name": study, "datasets": list(self.config["studies"][study]["datasets"]),
                "experiments": experiments, "runs": runs, "exports": [self.export_h5ad(d) for d in datasets]}

    @staticmethod
    def export_h5ad(dataset: str) -> str:
        """The AnnData file with every run of ``dataset`` in ``obsm`` (rule ``export_h5ad``)."""
        return f"results/{dataset}/export/{dataset}.h5ad"

    def study_inputs(self, study: str) -> list[str]:
        """The files the study page reads: its experiments' outputs, every run's scores and scatter, and the AnnData
        export of each of its data sets."""
        spec = self.study_spec(study)
        files = [e[k] for e in spec["experiments"] for k in ("png", "csv", "html")]
        files += [f for r in spec["runs"] for f in (r["scores"], r["scatter"])] + spec["exports"]
        return list(dict.fromkeys(files))

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
        if self.claims():
            targets.extend(SCORECARD_OUTPUTS.values())
        for study in self.studies:
            targets.extend(self.study_page(study).values())
        return targets

    def reference_experiments(self) -> dict[str, dict[str, str]]:
        """The experiments that compare with numbers printed in a paper (``reference:``): their reference key
        and table, what the table of flagged numbers (rule ``paper_gaps``) reads."""
        from ..experiments.reference import REFERENCE

        return {name: {"reference": e["reference"], "csv": self.experiment_outputs(name)["csv"]}
                for name, e in self.experiments.items() if e.get("reference") in REFERENCE}

    def claims(self) -> list[dict[str, Any]]:
        """Every claim of the experiments (:func:`cova.experiments.claims.check_claims`), each with what the
        scorecard reads: its experiment's table (``csv``; ``None`` for an experiment the config excludes), the
        ``reference`` of the paper's numbers and the ``fallbacks`` in effect."""
        from ..experiments.claims import check_claims

        out = []
        for claim in check_claims(self.experiments, self.config.get("paper", {}).get("excluded")):
            e = self.experiments.get(claim["experiment"])
            out.append({**claim, "csv": self.experiment_outputs(claim["experiment"])["csv"] if e else None,
                        "reference": (e or {}).get("reference"), "fallbacks": (e or {}).get("fallbacks", {})})
        return out

    def claim_tables(self) -> list[str]:
        """The experiment tables the scorecard reads."""
        return sorted({c["csv"] for c in self.claims() if c["csv"]})

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
        experiments = {name: {"paper": e["paper"], "own": self.experiment_benchmark(name),
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
