"""Renderers of COVA's image-cohort experiments (Sec. 4.2, H.2: Figs. 3-8, H.5-H.10).

The paper ran them on Places2 CNN features, which are not public. The configured runs use the user's Places2
features when supplied (dataset ``places2``) and otherwise a labelled stand-in (``fallback``), plus COIL-20 and an
MNIST subset; every output names the data it ran on (from the dataset files' metadata), so no stand-in result can
pass for a Places2 result.

- ``img_links`` (Fig. 3): κ-NN cohort graphs (κ = 2). Per dataset: the prototypes Υ against the "original"
  cohort graph (Eq. 6 similarity S_D = (YᵀWY) ⊘ (nnᵀ) of the inputs' W, neighbours = largest similarities), then
  each run's embedded cohort centres against Υ's graph (COVA models, which place cohorts at Υ) or against the
  original graph (methods without prototypes, e.g. t-SNE); TP links solid, FP dotted, FN dashed. The table gives
  every run's link accuracy against both graphs (the "X vs Y" accuracies of Fig. 3 = S_c^(r) with Y as the
  desired graph).
- ``img_sweep`` (Figs. 4-7, H.5, H.10): scores against ``x``, where ``x`` is a method grid parameter
  (``alpha``), ``n_cohorts`` (the inputs' class count), or a dotted path into the inputs block
  (``inputs.prototypes.random_fraction``, ``inputs.cohorts.labelled_per_class``, ``inputs.split.train_fraction``);
  ``x_default`` fills inputs blocks without the key (e.g. 0 random prototypes); a method parameter outside the grid
  is read from the run's fitted parameters. Lines are grouped by the registered method (so ``e1`` at α = 0.6 and a
  grid ``e1_alpha`` share one line); runs without any x (e.g. t-SNE in an α sweep) are drawn as horizontal
  dotted baselines. ``panels: method`` draws one panel per method with the scores as lines (Figs. 4, 6);
  ``panels: score`` one panel per score with the methods as lines (Figs. 5, 7). Scores may be any key of
  ``scores.json``, including ``*_test`` (held-out rows of a split) and ``s_c_r_gold`` / ``s_s_gold`` (Fig. 5's
  gold-standard comparisons).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import POSITIVE_INT, StrOptions, declare, real
from ...datasets.base import Dataset
from ...errors import UserError
from ...inputs import Inputs
from ...metrics.centres import cohort_centres
from ...metrics.cohort import cohort_graph
from ...metrics.cohort_graphs import link_accuracy, original_graph
from ...viz.figures import save_figure
from ...viz.links import ImageLinkPanel, PrototypeLinkPanel, image_links_figure
from ...viz.names import run_names
from ...viz.sweeps import score_lines_figure
from ...viz.tables import write_csv_atomic
from ..common import SCORES, RunLoader, about, run_scores
from ..page import write_page

__all__ = ["data_note", "img_links", "img_sweep"]


def data_note(spec: dict[str, Any]) -> str:
    """Which data every dataset of the experiment is (from the processed files' metadata), and any fallback."""
    parts = []
    for run in {r["dataset"]: r for r in spec["runs"]}.values():
        meta = Dataset.load(run["data"]).meta
        what = meta.get("description") or meta.get("source", "")
        if meta.get("stand_in"):
            what = f"SYNTHETIC STAND-IN, NOT Places2 ({what})"
        size = meta.get("n_samples")
        parts.append(f"{run['dataset']}: {what}" + (f", {size} samples" if size else ""))
    note = "Data - " + "; ".join(parts) + "."
    for name, fb in spec["fallbacks"].items():
        note += (f" The configured dataset {name!r} (user-supplied Places2 features) was not found, so these runs "
                 f"use {fb!r} instead.")
    return note


def _write(spec: dict[str, Any], table: pd.DataFrame, out: dict[str, str], note: str) -> None:
    write_csv_atomic(table, out["csv"])
    about_it = about(spec)
    text = " ".join(t for t in (about_it.caption, note, about_it.notes) if t)
    write_page(spec, out, [("", table)], title=about_it.title, note=text)


@declare({"kappa": POSITIVE_INT})
def img_links(spec: dict[str, Any], out: dict[str, str], *, kappa: int = 2) -> None:
    """COVA Fig. 3: cohort link graphs of the prototypes and of every run, ``kappa`` effective neighbours per cohort
    (module docstring)."""
    datasets = list(dict.fromkeys(r["dataset"] for r in spec["runs"]))
    load = RunLoader()
    rows, figure_rows = [], []
    for d in datasets:
        runs = [r for r in spec["runs"] if r["dataset"] == d]
        inp = load.run_inputs(runs[0])
        g_orig = original_graph(inp, kappa)
        g_proto = cohort_graph(inp.prototypes, kappa)
        acc = link_accuracy(g_orig, g_proto)
        rows.append({"dataset": d, "inputs": runs[0]["inputs"], "shown": "prototypes", "method": "",
                     "acc_vs_original": acc, "acc_vs_prototypes": 1.0})
        proto = PrototypeLinkPanel(inp.prototypes, g_orig, [str(j + 1) for j in range(inp.n_cohorts)],
                                   f"{d}: prototypes vs original\n{100 * acc:.1f}% of the original links")
        panels = []
        for run, name in zip(runs, run_names(runs)):
            if run["inputs"] != runs[0]["inputs"]:
                raise UserError(f"img_links: runs of dataset {d} must share one inputs block")
            emb = load.embedding(run)
            Z = emb.Z
            if not np.all(np.isfinite(Z)):
                panels.append(ImageLinkPanel(None, inp.labels, inp.n_cohorts, None, g_orig,
                                             f"{d}: {name}\n(no embedding)"))
                continue
            g_shown = cohort_graph(cohort_centres(Z, inp.labels, inp.n_cohorts), kappa)
            vs_orig, vs_proto = link_accuracy(g_orig, g_shown), link_accuracy(g_proto, g_shown)
            cova = emb.placed_prototypes.size > 0
            rows.append({"dataset": d, "inputs": run["inputs"], "shown": run["entry"], "method": run["method"],
                         "acc_vs_original": vs_orig, "acc_vs_prototypes": vs_proto,
                         **{k: run_scores(run).get(k) for k in ("s_n", "s_s", "s_c_r")}})
            ref = "prototypes" if cova else "original"
            panels.append(ImageLinkPanel(
                Z, inp.labels, inp.n_cohorts, emb.placed_prototypes if cova else None, g_proto if cova else g_orig,
                f"{d}: {name} vs {ref}\n{100 * (vs_proto if cova else vs_orig):.1f}% of the {ref} links "
                f"(vs {'original' if cova else 'prototypes'}: {100 * (vs_orig if cova else vs_proto):.1f}%)"))
        figure_rows.append((proto, panels))
    note = data_note(spec)
    save_figure(image_links_figure(figure_rows, kappa, about(spec).title + "\n" + note), out)
    _write(spec, pd.DataFrame(rows), out, note + f" κ = {kappa}; accuracies are fractions of the reference graph's "
           "links kept (TP / (TP + FN)); the 'original' graph is the κ-NN graph of the Eq. 6 cohort similarity.")


def _x_value(x: str, x_default: float | None, run: dict[str, Any], cache: dict[str, dict[str, Any]]) -> Any:
    if x in run.get("grid", {}):
        return run["grid"][x]
    if not x.startswith("inputs.") and x != "n_cohorts":
        return RunLoader.embedding(run).params.get(x)   # None: a baseline without this parameter
    if run["inputs_file"] not in cache:
        inp = Inputs.load(run["data"], run["inputs_file"])
        cache[run["inputs_file"]] = {"spec": inp.spec, "n_cohorts": inp.n_cohorts}
    if x == "n_cohorts":
        return cache[run["inputs_file"]]["n_cohorts"]
    if x.startswith("inputs."):
        value: Any = cache[run["inputs_file"]]["spec"]
        for key in x.split(".")[1:]:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            return value
        if x_default is not None:
            return x_default
    raise UserError(f"img_sweep: run {run['dataset']}/{run['inputs']}/{run['entry']} has no value of x = {x!r} "
                     f"(a method grid parameter, n_cohorts or inputs.<path>; x_default fills missing inputs keys)")


@declare({"x": [str], "x_default": [real(), None], "panels": [StrOptions({"method", "score"})],
          "xscale": [StrOptions({"linear", "log"})], "scores": SCORES})
def img_sweep(spec: dict[str, Any], out: dict[str, str], *, x: str, x_default: float | None = None,
              panels: str = "method", xscale: str = "linear", scores: Sequence[str] = ("s_n", "s_c_r", "s_s")) -> None:
    """Scores (``scores``) against ``x`` (a method grid parameter, ``n_cohorts`` or ``inputs.<path>``;
    ``x_default`` for inputs blocks without the key), one panel per method or per score (``panels``), on a
    ``linear`` or ``log`` x axis (``xscale``); see the module docstring."""
    scores = list(scores)
    cache: dict[str, dict[str, Any]] = {}
    rows = []
    for run in spec["runs"]:
        rec = run_scores(run)
        rows.append({"dataset": run["dataset"], "inputs": run["inputs"], "method": run["method"],
                     "run": run["entry"], x: _x_value(x, x_default, run, cache),
                     "status": rec.get("status", "ok"), **{s: rec.get(s, np.nan) for s in scores},
                     **{k: rec[k] for k in ("n_train", "n_test") if k in rec}})
    table = pd.DataFrame(rows).sort_values(["dataset", "method", x], kind="stable", ignore_index=True)
    note = data_note(spec)
    _write(spec, table, out, note)
    by_method = panels == "method"
    fig = score_lines_figure(table[table[x].notna()], table[table[x].isna()], x, scores, by_method,
                             about(spec).title + "\n" + note, xscale,
                             dict(zip((r["entry"] for r in spec["runs"]), run_names(spec["runs"]))))
    save_figure(fig, out)
