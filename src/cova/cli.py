"""``python -m cova <step> ...``: one entry point per workflow step, also usable without Snakemake.

Every step reads its declared inputs, writes exactly its declared output (atomically) and logs progress to
stderr, which the Snakemake rules send to their ``log:`` file.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from .errors import UserError
from .threads import limit_threads, write_report

log = logging.getLogger("cova")


def _json(text: str) -> Any:
    """A JSON option's value: the text of the option (or of its @FILE, which argparse reads)."""
    return json.loads(text) if text else {}


def cmd_fetch(a: argparse.Namespace) -> None:
    from .datasets.fetch import default_mirrors, fetch, fetch_file

    spec = _json(a.spec)
    mirrors = default_mirrors(_json(a.mirrors) or [])
    log.info("fetching %s into %s (mirrors: %s)", spec, a.dest, [str(m) for m in mirrors] or "none")
    if "source" in spec:
        fetch(spec["source"], a.dest, mirrors=mirrors)
    else:
        # a fetch spec's filename is optional (the URL's last segment otherwise)
        fetch_file(spec["url"], spec["sha256"], a.dest, mirrors=mirrors, filename=spec.get("filename"))


def cmd_dataset(a: argparse.Namespace) -> None:
    from .datasets import load

    log.info("building dataset %s with loader %s, params %s", a.name, a.loader, a.params)
    extra = {"raw_dir": a.raw} if a.raw else {}
    ds = load(a.loader, **extra, **_json(a.params))
    ds.meta.setdefault("name", a.name)
    log.info("%s: %d samples x %d features, %d cohorts", a.name, ds.X.shape[0], ds.X.shape[1], ds.n_cohorts)
    ds.save(a.out)


def cmd_inputs(a: argparse.Namespace) -> None:
    from .datasets import Dataset
    from .inputs import build_inputs

    ds = Dataset.load(a.dataset)
    t0 = time.perf_counter()
    log.info("building the inputs for %d samples: %s", ds.n_samples, a.spec)
    inputs = build_inputs(ds, _json(a.spec), seed=a.seed)
    shapes = {name: getattr(getattr(inputs, name), "shape", None) for name in sorted(inputs.available())}
    log.info("done in %.1f s: %s", time.perf_counter() - t0, shapes)
    inputs.save(a.out, with_X=inputs.X is not ds.X, with_labels=inputs.labels is not ds.labels)


def cmd_posterior(a: argparse.Namespace) -> None:
    from .inputs import Inputs
    from .io import save_npz_atomic
    from .methods.base import fit_class_posterior

    settings = _json(a.settings)
    inputs = Inputs.load(a.dataset, a.inputs).semi_supervised()
    rows = inputs.n_samples if inputs.labelled is None else int(inputs.labelled.sum())
    log.info("fitting the class posterior %s on the %d labelled rows of %s", settings, rows, a.inputs)
    t0 = time.perf_counter()
    arrays = fit_class_posterior(inputs, settings)
    log.info("done in %.1f s: K = %d, sigma = %.4g", time.perf_counter() - t0, arrays["means"].shape[0],
             float(arrays["sigma"]))
    save_npz_atomic(a.out, **arrays)


def cmd_embed(a: argparse.Namespace) -> None:
    from .datasets import Dataset
    from .embedding import Embedding
    from .inputs import COHORT_INPUTS, Inputs, require_cohorts
    from .methods import DegenerateSolution, make_method, split_capable

    inputs = Inputs.load(a.dataset, a.inputs)
    ids = inputs.row_names(Dataset.load(a.dataset))
    est = make_method(a.method, _json(a.params), seed=a.seed)
    if a.posterior:
        if not callable(getattr(est, "class_posterior_settings", None)):
            raise UserError(f"method {a.method!r} does not use a class posterior; drop --posterior")
        with np.load(a.posterior, allow_pickle=False) as f:
            inputs.class_posterior = {key: f[key] for key in f.files}
    missing = sorted(set(est.requires()) - inputs.available())
    if missing:
        raise UserError(f"method {a.method!r} needs {', '.join(missing)}, which the inputs {a.inputs} do not "
                         f"provide (they provide {', '.join(sorted(inputs.available()))})")
    if COHORT_INPUTS & set(est.requires()) and inputs.labels is not None:
        require_cohorts(np.unique(inputs.labels).size, f"method {a.method!r} (it uses the cohorts of inputs "
                        f"{a.inputs})")
    train, hidden = inputs.train, ""
    if train is not None and est.semi_supervised:
        hidden = f" ({int((~train).sum())} test samples without their labels)"
        inputs, train = inputs.semi_supervised(), None
    if train is not None and not callable(getattr(est, "transform", None)):
        raise UserError(f"method {a.method!r} has no transform for out-of-sample samples, so it cannot run on "
                         f"inputs with a train/test split (inputs {a.inputs}); use {split_capable()}, or remove "
                         f"the split")
    fit_on = inputs.training()
    log.info("fitting %r on %d samples%s", est, fit_on.n_samples,
             hidden if train is None else f" (training split; {int((~train).sum())} test samples by transform)")
    t0 = time.perf_counter()
    status = "ok"
    extras: dict[str, np.ndarray] = {}
    try:
        Z = est.fit_transform(fit_on)
        if train is not None:
            full = np.empty((inputs.n_samples, Z.shape[1]))
            full[train] = Z
            full[~train] = est.transform(inputs.X[~train])
            Z = full
        placed = est.prototypes_ if est.prototypes_ is not None else np.zeros((0, Z.shape[1]))
        extras = {name.rstrip("_"): np.asarray(getattr(est, name)) for name in est.extra_outputs}
    except DegenerateSolution as err:
        # an honest outcome of these parameters, recorded as such (NaN embedding and scores)
        log.warning("%s", err)
        status = "degenerate"
        k = int(getattr(est, "n_components", 2))
        Z = np.full((inputs.n_samples, k), np.nan)
        placed = np.zeros((0, k))
    runtime = time.perf_counter() - t0
    log.info("done in %.2f s (%s)", runtime, status)
    Embedding(Z=Z, placed_prototypes=placed, geometry=est.geometry, extras=extras, status=status,
              runtime_s=runtime, method=a.method, params=est.get_params(), ids=ids).save(a.out)


def cmd_score(a: argparse.Namespace) -> None:
    from .embedding import Embedding
    from .io import dumps_json, save_npz_atomic, write_text_atomic
    from .metrics.score import score_files

    files = {"embedding": a.embedding, "out": a.out, "scatter": a.scatter, "per_point": a.per_point}
    if a.run:  # a workflow run directory: its files by their fixed names, unless given one by one
        run = Path(a.run)
        defaults = {"embedding": "embedding.npz", "out": "scores.json", "scatter": "scatter.png",
                    "per_point": "per_point.npz"}
        files = {key: value or str(run / defaults[key]) for key, value in files.items()}
    if not files["embedding"] or not files["out"]:
        raise SystemExit("cova score: give --run RUN (a run directory), or --embedding and --out")
    ids = _json(a.ids)
    embedding = Embedding.load(files["embedding"])
    t0 = time.perf_counter()
    per_point: dict[str, Any] = {}
    inputs, scores = score_files(a.dataset, a.inputs, embedding, _json(a.metrics), per_point)
    log.info("scores in %.2f s: %s", time.perf_counter() - t0, scores)
    if files["per_point"]:
        save_npz_atomic(files["per_point"], **per_point)
    record = {**ids, "n_samples": int(embedding.Z.shape[0]), "n_cohorts": inputs.n_cohorts,
              "status": embedding.status, **scores}
    write_text_atomic(files["out"], dumps_json(record))
    if files["scatter"]:  # the run's figure from the same process: one job start instead of two
        title = a.title
        if not title and {"dataset", "method_entry", "method"} <= set(ids):
            title = f"{ids['dataset']}: {ids['method_entry']} ({ids['method']})"
        _draw_scatter(inputs, embedding, record, title, files["scatter"])


def _draw_scatter(inputs: Any, emb: Any, scores: dict[str, Any], title: str, out: str) -> None:
    from .viz.scatter import save_scatter_figure

    if scores.get("status", "ok") != "ok":
        title += f"\n{scores['status']}"
    save_scatter_figure(out, emb.Z, inputs.labels, inputs.label_names, prototypes=emb.placed_or_none,
                        scores=scores, title=title, geometry=emb.geometry,
                        columns=emb.extras.get("column_embedding"), kinds=("row objects", "column objects"))


def cmd_scatter(a: argparse.Namespace) -> None:
    from .embedding import Embedding
    from .inputs import Inputs
    from .io import read_scores

    _draw_scatter(Inputs.load(a.dataset, a.inputs), Embedding.load(a.embedding), read_scores(a.scores), a.title,
                  a.out)


def cmd_export(a: argparse.Namespace) -> None:
    from .datasets import Dataset
    from .embedding import Embedding
    from .inputs import Inputs
    from .viz.export import ExportError, ExportRun, export

    try:
        if len(a.inputs) not in (1, len(a.embedding)) or len(a.name) != len(a.embedding):
            raise ExportError(f"give one --name per --embedding ({len(a.embedding)} embeddings, {len(a.name)} names) "
                              f"and one --inputs for all of them or one per embedding ({len(a.inputs)} given)")
        dataset = Dataset.load(a.dataset)
        runs: list[ExportRun] = []
        loaded: dict[str, Inputs] = {}
        for name, embedding_path, inputs_path in zip(a.name, a.embedding, a.inputs * len(a.embedding)
                                                     if len(a.inputs) == 1 else a.inputs):
            if inputs_path not in loaded:  # runs of one inputs block share it
                loaded[inputs_path] = Inputs.load(a.dataset, inputs_path)
            inputs = loaded[inputs_path]
            emb = Embedding.load(embedding_path)
            ids = emb.ids if emb.ids is not None else inputs.row_names(dataset)
            labels = ([inputs.label_names[c] for c in inputs.labels] if inputs.labels is not None
                      else [""] * len(ids))
            runs.append(ExportRun(name, emb, ids, labels,
                                  inputs.feature_names(dataset) if inputs.X is not None else None))
        for out in a.out:
            export(dataset, runs, out)
            log.info("%d runs of %d rows -> %s", len(runs), dataset.n_samples, out)
    except ExportError as err:
        log.error("%s", err)
        raise SystemExit(1) from None


def cmd_timings(a: argparse.Namespace) -> None:
    from .viz.timings import render_timings

    render_timings(a.jobs, a.plan, {"csv": a.csv, "html": a.html, "png": a.png})


def cmd_table(a: argparse.Namespace) -> None:
    from .io import read_scores
    from .viz.tables import scores_table, write_csv_atomic, write_scores_html

    records = [read_scores(p) for p in a.scores]
    table = scores_table(records)
    write_csv_atomic(table, a.csv)
    write_scores_html(table, a.html)
    log.info("%d rows -> %s, %s", len(table), a.csv, a.html)


def cmd_datasets_table(a: argparse.Namespace) -> None:
    import pandas as pd

    from .datasets import Dataset
    from .viz.tables import dataset_summary, write_csv_atomic, write_html_atomic

    info = _json(a.info)
    rows = []
    for path, (name, loader, description) in zip(a.datasets, info):
        ds = Dataset.load(path)
        rows.append(dataset_summary(name, loader, description, ds.meta, ds.n_samples, ds.X.shape[1], ds.n_cohorts))
    table = pd.DataFrame(rows)
    write_csv_atomic(table, a.csv)
    write_html_atomic(table, a.html, title="Datasets",
                      note="What each run used: source, split or subset, and whether it is a synthetic stand-in.")


def cmd_experiment(a: argparse.Namespace) -> None:
    from .experiments.registry import render

    spec = _json(a.spec)
    log.info("rendering %s (%s) from %d runs", spec["name"], spec["renderer"], len(spec["runs"]))
    render(spec, {"png": a.png, "csv": a.csv, "html": a.html, **({"svg": a.svg} if a.svg else {})})


def cmd_study(a: argparse.Namespace) -> None:
    from .experiments.study_page import write_study_page

    spec = _json(a.spec)
    log.info("study %s: %d protocols, %d runs", spec["name"], len(spec["experiments"]), len(spec["runs"]))
    write_study_page(spec, a.html, a.csv)


def cmd_gaps(a: argparse.Namespace) -> None:
    from .experiments.gaps import UNEXPLAINED, write_paper_gaps

    experiments = _json(a.experiments)
    table = write_paper_gaps(experiments, a.csv, a.html)
    log.info("%d numbers more than the threshold from the papers' in %d experiments; %d unexplained", len(table),
             len(experiments), int((table["cause"] == UNEXPLAINED).sum()))


def cmd_scorecard(a: argparse.Namespace) -> None:
    from .experiments.claims import VERDICTS
    from .experiments.scorecard import write_scorecard

    claims = json.loads(Path(a.claims).read_text(encoding="utf-8"))
    card = write_scorecard(claims, a.csv, a.html, about=a.about)
    counts = card["verdict"].value_counts()
    log.info("%d claims: %s", len(card), ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS))


def cmd_record(a: argparse.Namespace) -> None:
    from .experiments.scorecard import write_record

    write_record(a.scorecard, a.out, a.repo, a.jobs, a.date, a.config)
    log.info("wrote %s", a.out)


def cmd_fig1(a: argparse.Namespace) -> None:
    from .experiments.cova.fig1 import render_fig1

    def scores(option: str, embedding: str) -> str:  # the run's scores.json beside its embedding by default
        return option or str(Path(embedding).with_name("scores.json"))

    render_fig1(a.dataset, a.inputs, a.cova, scores(a.cova_scores, a.cova), a.tsne, scores(a.tsne_scores, a.tsne),
                a.out)


def cmd_check_config(a: argparse.Namespace) -> None:
    from .config import ConfigError, Plan, check_config_file

    try:
        plan = Plan(check_config_file(a.configfile, a.workdir))
    except ConfigError as err:
        log.error("%s", err)
        raise SystemExit(1) from None
    for notice in plan.notices:
        log.warning("%s", notice)
    log.info("%s is valid: %d datasets, %d runs", a.configfile, len(plan.config["datasets"]), len(plan.runs()))


#: Marks an option without a default: the step needs it.
REQUIRED = object()

#: The help of the options that mean the same in every step that has them.
COMMON_OPTIONS: dict[str, str] = {
    "dataset": "the processed dataset (data/processed/{dataset}.npz, written by the dataset step)",
    "inputs": "the inputs file of the dataset (results/{dataset}/{inputs_id}/inputs.npz, written by the inputs step)",
    "csv": "the CSV table to write",
    "html": "the HTML table to write",
    "png": "the PNG figure to write",
    "seed": "the random seed (an integer; default 0)",
}

#: step: (help, function, {option: (default or REQUIRED, help; empty for the COMMON_OPTIONS one)}). A JSON option
#: takes the JSON text or @FILE, a file holding it on one line (what the Snakemake rules pass).
STEPS: dict[str, tuple[str, Any, dict[str, tuple[Any, str]]]] = {
    "fetch": ("fetch and verify raw files into data/raw/{source}", cmd_fetch, {
        "spec": (REQUIRED, "JSON: a named source ({\"source\": ...}) or one file ({\"url\", \"sha256\"[, "
                           "\"filename\"]})"),
        "dest": (REQUIRED, "the directory to fetch into (data/raw/{source})"),
        "mirrors": ("[]", "JSON list of local mirror directories searched before the URL (COVA_DATA_MIRROR adds "
                          "one)")}),
    "dataset": ("build data/processed/{dataset}.npz", cmd_dataset, {
        "name": (REQUIRED, "the dataset's name in the configuration"),
        "loader": (REQUIRED, "the loader (cova.datasets.LOADERS), e.g. digits, generic, h5ad"),
        "out": (REQUIRED, "the processed dataset .npz to write"),
        "params": ("{}", "JSON object of the loader's parameters"),
        "raw": ("", "the directory of the fetched raw files, for loaders that read them")}),
    "inputs": ("build W, R and prototypes", cmd_inputs, {
        "dataset": (REQUIRED, ""),
        "spec": (REQUIRED, "JSON: the inputs block of the configuration (features, W, cohorts, prototypes)"),
        "out": (REQUIRED, "the inputs .npz to write"),
        "seed": ("0", "")}),
    "posterior": ("fit the class-posterior model that SNeRV and PE share, on the labelled rows of the inputs",
                  cmd_posterior, {
        "dataset": (REQUIRED, ""), "inputs": (REQUIRED, ""),
        "settings": (REQUIRED, "JSON object of the mixture settings (cova.cohorts.posterior)"),
        "out": (REQUIRED, "the class posterior .npz to write")}),
    "embed": ("run one method (with the class posterior of --posterior, if it uses one)", cmd_embed, {
        "dataset": (REQUIRED, ""), "inputs": (REQUIRED, ""),
        "method": (REQUIRED, "the method's registered name (cova.methods.METHODS), e.g. cova_e2, tsne, nerv"),
        "out": (REQUIRED, "the embedding .npz to write"),
        "params": ("{}", "JSON object of the method's parameters"),
        "seed": ("0", ""),
        "posterior": ("", "the class posterior .npz of the posterior step (SNeRV and PE only)")}),
    "score": ("score one embedding and draw its scatter plot; --run RUN stands for the files of a workflow run "
              "directory", cmd_score, {
        "dataset": (REQUIRED, ""), "inputs": (REQUIRED, ""),
        "run": ("", "a run directory: reads RUN/embedding.npz and writes RUN/scores.json, RUN/scatter.png and "
                    "RUN/per_point.npz (the options below override each)"),
        "embedding": ("", "the embedding .npz to score (required without --run)"),
        "out": ("", "the scores .json to write (required without --run)"),
        "metrics": ("{}", "JSON object of the measures and their settings (the configuration's metrics)"),
        "ids": ("{}", "JSON object of the run's names copied into the scores record (dataset, inputs, method, ...)"),
        "scatter": ("", "the scatter plot .png to write (none if empty)"),
        "title": ("", "the scatter plot's title (default from --ids: 'dataset: entry (method)')"),
        "per-point": ("", "the .npz of per-point scores to write (none if empty)")}),
    "scatter": ("cohort scatter plot of one embedding", cmd_scatter, {
        "dataset": (REQUIRED, ""), "inputs": (REQUIRED, ""),
        "embedding": (REQUIRED, "the embedding .npz to draw"),
        "scores": (REQUIRED, "its scores .json (the score step's), printed in the figure"),
        "out": (REQUIRED, "the .png to write"),
        "title": ("", "the figure's title")}),
    "table": ("aggregate scores.json files", cmd_table, {"csv": (REQUIRED, ""), "html": (REQUIRED, "")}),
    "datasets-table": ("summarise the processed datasets", cmd_datasets_table, {
        "info": (REQUIRED, "JSON list of [name, loader, description], one per --datasets file"),
        "csv": (REQUIRED, ""), "html": (REQUIRED, "")}),
    "experiment": ("render a paper figure/table from scored runs (and the figure as SVG too with --svg)",
                   cmd_experiment, {
        "spec": (REQUIRED, "JSON: the experiment's spec from the plan (name, renderer, runs, caption, ...)"),
        "png": (REQUIRED, ""), "csv": (REQUIRED, ""), "html": (REQUIRED, ""),
        "svg": ("", "the figure as SVG too (none if empty)")}),
    "study": ("the page of a study: its runs' scores and scatters, its protocols' figures", cmd_study, {
        "spec": (REQUIRED, "JSON: the study's spec from the plan (name, experiments, runs)"),
        "html": (REQUIRED, "the study page to write"), "csv": (REQUIRED, "the study's scores table to write")}),
    "gaps": ("table of our numbers far from the papers' and their causes", cmd_gaps, {
        "experiments": (REQUIRED, "JSON object: each reference experiment's name and its output files"),
        "csv": (REQUIRED, ""), "html": (REQUIRED, "")}),
    "scorecard": ("every claim of the papers with its verdict on the experiment tables", cmd_scorecard, {
        "claims": (REQUIRED, "the claims .json (rule claims: every claim of the configured experiments)"),
        "csv": (REQUIRED, ""), "html": (REQUIRED, ""),
        "about": ("", "a sentence on the page's top, e.g. the configuration files of the run")}),
    "record": ("the Markdown record of a scorecard (docs/reproduction.md)", cmd_record, {
        "scorecard": (REQUIRED, "the scorecard .csv"),
        "out": (REQUIRED, "the Markdown file to write"),
        "repo": (".", "the run's git checkout: its reflog says which commits the run's jobs ran at"),
        "jobs": (REQUIRED, "the folder of the run's per-job benchmark files (their end times place each job)"),
        "date": (REQUIRED, "the date of the record (YYYY-MM-DD)"),
        "config": (REQUIRED, "the configuration file of the run")}),
    "fig1": ("COVA Fig. 1 analogue", cmd_fig1, {
        "dataset": (REQUIRED, ""), "inputs": (REQUIRED, ""),
        "cova": (REQUIRED, "the COVA run's embedding .npz"),
        "cova-scores": ("", "the COVA run's scores .json (default: scores.json beside --cova)"),
        "tsne": (REQUIRED, "the t-SNE run's embedding .npz"),
        "tsne-scores": ("", "the t-SNE run's scores .json (default: scores.json beside --tsne)"),
        "out": (REQUIRED, "the .png to write")}),
    "export": ("write embeddings with their row ids for other tools; each --out's suffix picks the format: .csv, "
               ".parquet (needs pyarrow), .h5ad (AnnData: a copy of an .h5ad source with obsm added)", cmd_export,
               {"dataset": (REQUIRED, "")}),
    "timings": ("per-rule and per-experiment time table and plot from the jobs' benchmark files", cmd_timings, {
        "jobs": (REQUIRED, "the directory of the jobs' benchmark files (results/benchmarks/jobs)"),
        "plan": (REQUIRED, "the timing plan .json (rule timing_plan: which jobs make each experiment)"),
        "csv": (REQUIRED, ""), "html": (REQUIRED, ""), "png": (REQUIRED, "")}),
    "check-config": ("check a configuration file (YAML syntax, overlay, schema, cross-references) without "
                     "Snakemake; an overlay's base is looked up in --workdir", cmd_check_config, {
        "configfile": (REQUIRED, "the configuration file to check"),
        "workdir": (".", "the directory the configuration's relative paths start from")}),
}


#: Options that take one or more values, by step, with their help.
LISTS: dict[str, dict[str, str]] = {
    "table": {"scores": "the scores .json files of the runs"},
    "datasets-table": {"datasets": "the processed dataset .npz files"},
    "export": {"inputs": "the inputs .npz: one for all embeddings or one per embedding",
               "embedding": "the embedding .npz files", "name": "one name per embedding (obsm X_{name} in .h5ad)",
               "out": "the files to write (.csv, .parquet or .h5ad)"},
}


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def version() -> str:
    """The installed package's version (importlib.metadata), or "unknown" when cova runs from a source tree that
    was never installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("cova")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cova", description=__doc__, fromfile_prefix_chars="@",
                                epilog="Any argument @FILE is replaced by the lines of FILE, one argument per line.")
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    p.add_argument("--threads", type=_positive_int, default=1,
                   help="threads of numba, BLAS and OpenMP (a Snakemake rule passes its {threads}; default 1)")
    sub = p.add_subparsers(dest="step", required=True)
    for step, (help_text, func, options) in STEPS.items():
        s = sub.add_parser(step, help=help_text, description=help_text)
        for name, (default, option_help) in options.items():
            option_help = option_help or COMMON_OPTIONS[name]
            if default is REQUIRED:
                s.add_argument(f"--{name}", required=True, help=option_help)
            else:
                s.add_argument(f"--{name}", default=default, type=int if name == "seed" else str,
                               help=option_help if "default" in option_help or not default
                               else f"{option_help} (default {default})")
        for name, option_help in LISTS.get(step, {}).items():
            s.add_argument(f"--{name}", nargs="+", required=True, help=f"{option_help} (@FILE: one per line)")
        s.set_defaults(func=func)
    return p


#: A job's output file in the workflow's layout: ``results/{dataset}/{inputs_id}/...`` with ``{inputs_id}`` and
#: ``{params_id}`` the config name plus ``-`` and 8 hex digits (:func:`cova.config.plan.make_id`).
_RUN_PATH = re.compile(r"(?:^|/)results/(?P<dataset>[^/]+)/(?P<inputs>[^/]+)-[0-9a-f]{8}/"
                       r"(?:inputs\.npz/|class_posterior/|(?P<method>[^/]+)/(?P<entry>[^/]+)-[0-9a-f]{8}/)")


def is_refusal(err: BaseException) -> bool:
    """Whether ``err`` is a refusal meant for the user (one message in the job's log) rather than a bug (its
    traceback): a :class:`cova.errors.UserError` (every validation ``raise`` of the package) or scikit-learn's
    ``InvalidParameterError`` (a value our declared ``_parameter_constraints`` refuse, checked by scikit-learn's
    validator). A ``ValueError`` of any other class, from numpy, scipy or the interpreter, is a bug."""
    from sklearn.utils._param_validation import InvalidParameterError

    return isinstance(err, (UserError, InvalidParameterError))


def job_context(a: argparse.Namespace) -> str:
    """What a job of step ``a.step`` works on, in the config's words where its arguments tell: the dataset entry,
    the inputs block and the method entry of its run (from the workflow's output paths), an experiment's name."""
    run = None
    for path in (getattr(a, "out", None), getattr(a, "inputs", None), getattr(a, "run", None)):
        if isinstance(path, str) and (run := _RUN_PATH.search(Path(path).as_posix() + "/")):
            break
    if a.step == "dataset":
        return f"config key datasets.{a.name} (loader {a.loader})"
    ids = _json(a.ids) if a.step == "score" else {}
    if {"dataset", "inputs", "method_entry"} <= set(ids):
        return (f"scores of method entry {ids['method_entry']} on dataset {ids['dataset']} with inputs "
                f"{ids['inputs']} (config key metrics)")
    if a.step == "embed":
        entry = f"method entry {run['entry']}" if run and run["entry"] else "method"
        where = f" on dataset {run['dataset']} ({a.dataset}) with inputs {run['inputs']}" if run else ""
        return f"{entry} (method {a.method}, params {a.params}){where}"
    if a.step in ("inputs", "posterior") and run:
        return f"config key inputs.{run['inputs']} on dataset {run['dataset']} ({a.dataset})"
    if a.step in ("experiment", "study"):
        return f"{a.step} {_json(a.spec).get('name')}"
    return f"cova {a.step}"


def main(argv: list[str] | None = None) -> int:
    """Run one step (``python -m cova <step> ...``) and return its exit status. A refusal meant for the user
    (:func:`is_refusal`) or a file that cannot be fetched, read or written ends the step with one message naming
    what the job works on and what to do (status 1); any other exception is a bug and keeps its traceback."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    args = build_parser().parse_args(argv)
    limit_threads(args.threads)
    from .datasets.fetch import FetchError
    from .io import FileError

    try:
        args.func(args)
    except (FetchError, FileError, FileNotFoundError) as err:
        log.error("%s", err)
        return 1
    except ValueError as err:
        if not is_refusal(err):
            raise
        log.error("%s refused: %s", job_context(args), err)
        return 1
    write_report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
