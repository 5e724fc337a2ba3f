"""DOSNES (Lu, Yang & Corander 2016) Figs. 1-4: t-SNE 2-D and 3-D maps beside the DOSNES sphere, with our measures.

- ``radial_panels`` (Fig. 1): t-SNE of a random matrix as given and made doubly stochastic (Sec. 3, Eqs. 1-2), in
  2-D and 3-D; a raw matrix fills a disk (a ball), a doubly stochastic one a ring (a sphere). One panel and one
  table row per run group, with its radial coefficient of variation.
- ``sphere_panels`` (Figs. 2-4): per dataset, every 2-D map as one panel, every 3-D map from one viewpoint and every
  spherical embedding (Sec. 4, Eqs. 5-8) from two opposite viewpoints; point sizes grow with the degree, names are
  written next to the points with ``annotate: true``. The table gives the mean and standard deviation of each
  measure over the runs of a method entry (its grid over ``random_state``), and with a ``reference`` our measures
  of the authors' released embeddings beside them (``authors_*`` columns).

The paper reports no numbers; every measure in the tables is ours. Both renderers also write the embeddings as
one interactive page (the HTML output, :mod:`cova.viz.sphere_page`) with the table under it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import declare
from ...datasets.base import Dataset
from ...embedding import Embedding
from ...inputs import Inputs
from ...viz.embedding_panels import EmbeddingPanel, degree_sizes, embedding_panels_figure
from ...viz.figures import save_figure
from ...viz.names import method_name
from ...viz.scatter import VIEWS_3D
from ...viz.sphere_page import SphereView, write_sphere_page
from ...viz.tables import write_csv_atomic
from ..common import MappingOf, about, findings_note, run_scores
from ..page import page_parts
from ..reference import REFERENCE

__all__ = ["MEASURES", "INPUTS_LABELS", "radial_panels", "sphere_panels", "group_table"]

#: The measures of the tables (keys of ``scores.json``), in column order.
MEASURES = ("knn_accuracy", "degree_radius_rho", "kl", "radial_cv", "centre_fraction", "graph_precision")
#: The constraint of ``inputs_labels``: inputs block -> how the panels and tables name its input.
INPUTS_LABELS = [MappingOf([str], "a mapping of inputs blocks to labels (str)"), None]
#: The options of both renderers (:func:`_panels`).
PANEL_OPTIONS: dict[str, list[Any]] = {"inputs_labels": INPUTS_LABELS, "size_by_degree": ["boolean"],
                                       "annotate": ["boolean"]}


def _loaded(spec: dict[str, Any]) -> list[tuple[dict[str, Any], Embedding, dict[str, Any]]]:
    return [(run, Embedding.load(run["embedding"]), run_scores(run)) for run in spec["runs"]]


def _groups(loaded: list[tuple[dict[str, Any], Embedding, dict[str, Any]]]) -> dict[tuple[str, str, str], list]:
    """Runs keyed (dataset, inputs, configured method entry), in configuration order."""
    groups: dict[tuple[str, str, str], list] = {}
    for item in loaded:
        run = item[0]
        groups.setdefault((run["dataset"], run["inputs"], run["group"]), []).append(item)
    return groups


def group_table(loaded: list[tuple[dict[str, Any], Embedding, dict[str, Any]]], measures: tuple[str, ...] = MEASURES,
                labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per (dataset, inputs, method entry): the number of runs, the embedding's dimension and geometry,
    the input's label (``labels``: inputs block -> label, default the block's name) and the mean (and, over several
    runs, the standard deviation) of every measure; NaN where no run has it."""
    labels = labels or {}
    rows = []
    for (dataset, inputs, group), items in _groups(loaded).items():
        run, emb, _ = items[0]
        row: dict[str, Any] = {"dataset": dataset, "inputs": inputs, "input": labels.get(inputs, inputs),
                               "method_entry": group, "method": run["method"], "dimension": emb.n_components,
                               "geometry": emb.geometry, "n_runs": len(items),
                               "n_ok": sum(s.get("status", "ok") == "ok" for _, _, s in items)}
        for key in measures:
            values = np.array([s.get(key, np.nan) for _, _, s in items], dtype=np.float64)
            row[key] = float(np.nanmean(values)) if np.any(np.isfinite(values)) else np.nan
            if len(items) > 1:
                row[f"{key}_std"] = float(np.nanstd(values)) if np.any(np.isfinite(values)) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _with_authors(table: pd.DataFrame, key: str | None) -> pd.DataFrame:
    """``authors_<measure>`` columns: our measures of the authors' released embeddings, keyed (dataset, method,
    dimension) in :data:`cova.experiments.reference.REFERENCE`."""
    if not key or table.empty:
        return table
    rows = REFERENCE[key]["rows"]
    found = [rows.get((d, m, int(k)), {}) for d, m, k in zip(table.dataset, table.method, table.dimension)]
    for measure in sorted({m for r in rows.values() for m in r}):
        table[f"authors_{measure}"] = [r.get(measure, np.nan) for r in found]
    return table


def _row_names(ds: Dataset, inp: Inputs) -> list[str] | None:
    """The names of the inputs' rows (the dataset's, restricted to the rows a block kept), ``None`` if they do not
    line up with the rows or a ``subset`` block chose the rows (its rows are not recorded)."""
    if inp.spec.get("subset"):  # the block and facts the inputs step recorded (inputs.npz), not an option
        return None
    names = ds.sample_names
    kept = inp.spec.get("kept_rows")  # a fact the inputs step recorded when it dropped rows
    names = [names[i] for i in kept] if kept is not None else names
    return names if len(names) == inp.n_samples else None


def _degree(ds: Dataset, inp: Inputs) -> np.ndarray | None:
    """Raw degree of every row: the inputs' own, else the row sums of the symmetrised relation matrix."""
    degree = getattr(inp, "degree", None)
    if degree is not None:
        return np.asarray(degree, dtype=np.float64)
    if ds.relations is None or ds.relations.shape[0] != inp.n_samples:
        return None
    A = abs(ds.relations)
    return 0.5 * (np.asarray(A.sum(axis=1)).ravel() + np.asarray(A.sum(axis=0)).ravel())


def _panels(loaded: list, measure: str | None, labels_of: Mapping[str, str], size_by_degree: bool, annotate: bool,
            row_by_inputs: bool = False) -> tuple[list, list, list]:
    """Panels of the first run of every group (one row per dataset, or per inputs block with ``row_by_inputs``),
    the legend names per row and the interactive views of the 3-D embeddings; marker sizes grow with the degree
    with ``size_by_degree``, every point's name is written with ``annotate``."""
    rows: dict[tuple[str, str], list[EmbeddingPanel]] = {}
    legends: dict[tuple[str, str], list[str]] = {}
    views: list[SphereView] = []
    cache: dict[tuple[str, str], tuple[Dataset, Inputs]] = {}
    for (dataset, inputs, group), items in _groups(loaded).items():
        run, emb, scores = items[0]
        key = (run["data"], run["inputs_file"])
        if key not in cache:
            cache[key] = (Dataset.load(run["data"]), Inputs.load(*key))
        ds, inp = cache[key]
        degree = _degree(ds, inp)
        largest = max(6.0, min(40.0, 24000.0 / max(inp.n_samples, 1)))
        sizes = (degree_sizes(degree, largest) if degree is not None and size_by_degree
                 else None)
        names = _row_names(ds, inp) if annotate else None
        shown = method_name(run["method"]) + ("" if emb.geometry == "sphere" else f" {emb.n_components}-D")
        title = f"{dataset}: {shown} ({labels_of.get(inputs, inputs)})"
        if measure and np.isfinite(scores.get(measure, np.nan)):
            title += f"\n{measure} {scores[measure]:.3f}"
        common = {"labels": inp.labels, "n_cohorts": max(inp.n_cohorts, 1), "sizes": sizes, "names": names}
        row = (dataset, inputs if row_by_inputs else "")
        panels = rows.setdefault(row, [])
        legends[row] = list(inp.label_names) if inp.n_cohorts > 1 else []
        sphere = emb.geometry == "sphere"
        if emb.n_components == 3:
            for view in VIEWS_3D if sphere else VIEWS_3D[:1]:
                panels.append(EmbeddingPanel(emb.Z, title=f"{title}\nview: elev. {view[0]:g}°, azim. {view[1]:g}°",
                                             view=view, sphere=sphere, **common))
            views.append(SphereView(f"{dataset}: {shown} ({labels_of.get(inputs, inputs)})", emb.Z, inp.labels,
                                    inp.label_names, names=_row_names(ds, inp),
                                    sizes=None if degree is None else np.cbrt(degree / max(degree.max(), 1e-300)),
                                    on_sphere=sphere, show_names=annotate))
        else:
            panels.append(EmbeddingPanel(emb.Z, title=title, **common))
    return list(rows.values()), [legends[d] for d in rows], views


def _write(spec: dict[str, Any], out: dict[str, str], table: pd.DataFrame, rows: list, legends: list,
           views: list, extra: str = "") -> None:
    write_csv_atomic(table, out["csv"])
    title = about(spec).title
    save_figure(embedding_panels_figure(rows, title, legends if any(legends) else None), out)
    intro, rest = page_parts(spec, out, [("Measures (ours)", table)], note=findings_note(spec, extra))
    write_sphere_page(out["html"], views, title, intro, rest)


@declare(PANEL_OPTIONS)
def radial_panels(spec: dict[str, Any], out: dict[str, str], *, inputs_labels: Mapping[str, str] | None = None,
                  size_by_degree: bool = True, annotate: bool = False) -> None:
    """DOSNES Fig. 1: one panel per run group with its radial coefficient of variation (options: :func:`_panels`;
    ``inputs_labels`` names the inputs blocks in the panels and the table)."""
    loaded = _loaded(spec)
    labels = dict(inputs_labels or {})
    table = group_table(loaded, ("radial_cv",), labels)
    rows, legends, views = _panels(loaded, "radial_cv", labels, size_by_degree, annotate, row_by_inputs=True)
    _write(spec, out, table, rows, legends, views,
           " radial_cv: standard deviation over mean of the distances to the centroid (a uniform disk has 0.354, "
           "a ring 0).")


@declare(PANEL_OPTIONS)
def sphere_panels(spec: dict[str, Any], out: dict[str, str], *, inputs_labels: Mapping[str, str] | None = None,
                  size_by_degree: bool = True, annotate: bool = False) -> None:
    """DOSNES Figs. 2-4: t-SNE maps and the DOSNES sphere from two viewpoints, and the measures table (options as
    :func:`radial_panels`)."""
    loaded = _loaded(spec)
    labels = dict(inputs_labels or {})
    table = _with_authors(group_table(loaded, MEASURES, labels), spec["reference"])
    rows, legends, views = _panels(loaded, None, labels, size_by_degree, annotate)
    extra = ""
    if spec["reference"]:
        extra = f" Columns authors_* are {REFERENCE[spec['reference']]['source']}."
    _write(spec, out, table, rows, legends, views, extra)
