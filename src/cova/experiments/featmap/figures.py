"""featMAP (Yang, Sun, Gong & Yu 2022): Table 1, Figs. 1 and 4-7, Supp. Figs. 8-10 and the λ study of Supp. 6.5.

- ``featmap_table`` (Table 1 and the "overall plot" of the supplement): one row per (dataset, method) with the
  measures of Table 1 (the experiment's ``scores``); the paper's Table 1 is an image without numbers, so the page
  states its one claim ("comparable results on local and global metrics") as checks computed from our rows:
  featMAP's trustworthiness and continuity within :data:`COMPARABLE` of UMAP's on every dataset.
- ``featmap_saliency`` (Figs. 4-5): one random image per class beside its feature-importance map (Eq. 3), for each
  featMAP run; the table measures the paper's reading "the map detects the edges": Pearson correlation of each map
  with the image's gradient magnitude and with the image itself. Data whose features are named columns, not pixels
  (:func:`cova.viz.saliency.feature_layout`), get per class its top features by mean importance and, at one random
  point per class, the loading arrows of its top features on the embedding; the table lists the top features.
- ``featmap_frame`` (Fig. 1): the digit-1 group; one random point in red, its embedded frame with every pixel's
  loading arrow (top ten annotated) and its feature-importance map (for named features: its top ten features by
  importance as bars).
- ``featmap_adversarial`` (Fig. 6, Supp. Fig. 8): the FGSM set's accuracy and predicted-label histogram, featMAP
  of the adversarial set coloured by true and by adversarial label, five adversarial 1s with their maps, and the
  average maps of adversarial 1 → t against clean 1 and clean t with their similarities.
- ``featmap_density`` (Fig. 7, Supp. Figs. 9-10): local-radius scatters of featMAP and UMAP on the digit-1 group
  with their correlations, subgroups by k-means (ours: the paper does not say how it clustered) and ten images of
  the subgroup that is sparsest in featMAP relative to UMAP.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import NON_NEGATIVE_INT, SEED, declare, integer
from ...datasets.base import Dataset
from ...embedding import Embedding
from ...errors import UserError
from ...inputs import Inputs
from ...viz.figures import save_figure
from ...viz.names import method_name
from ...viz.panels import ScatterPanel, scatter_grid_figure
from ...viz.saliency import (
    NamedFeatureMap,
    adversarial_figure,
    density_figure,
    feature_layout,
    frame_figure,
    image_pairs_figure,
    image_shape,
    named_features_figure,
    top_features,
)
from ...viz.scatter import cohort_colours
from ...viz.tables import write_csv_atomic
from ..common import SCORES, MappingOf, about, findings_note, run_scores
from ..page import write_page
from ..reference import REFERENCE

__all__ = ["COMPARABLE", "featmap_table", "featmap_saliency", "featmap_frame", "featmap_adversarial",
           "featmap_density", "edge_correlations"]

#: "Comparable" in the claim check of Table 1: featMAP's T and C at most this far below UMAP's.
COMPARABLE = 0.05
#: The constraint of ``method_labels``: registered method -> the name shown for it (e.g. tsne -> FIt-SNE).
METHOD_LABELS = [MappingOf([str], "a mapping of registered methods to names (str)"), None]


def _load(run: dict[str, Any]) -> tuple[Inputs, Embedding, dict[str, Any]]:
    return Inputs.load(run["data"], run["inputs_file"]), Embedding.load(run["embedding"]), run_scores(run)


def _runs_of(spec: dict[str, Any], method: str) -> list[dict[str, Any]]:
    return [r for r in spec["runs"] if r["method"] == method]


def _pretty(method: str, labels: Mapping[str, str] | None) -> str:
    """The name of ``method`` in the figures: the experiment's ``method_labels`` for it, else the papers' name
    (:func:`cova.viz.names.method_name`)."""
    return (labels or {}).get(method, method_name(method))


def _shape(run: dict[str, Any], n_features: int) -> tuple[int, int]:
    return image_shape(n_features, Dataset.load(run["data"]).meta)


def _layout(run: dict[str, Any], inputs: Inputs, n_features: int) -> tuple[tuple[int, int] | None, list[str]]:
    """How a run's features are drawn (:func:`cova.viz.saliency.feature_layout`: an image shape, or ``None`` for
    named features) and their names (pixel coordinates of an image, else the inputs' feature names)."""
    dataset = Dataset.load(run["data"])
    shape = feature_layout(n_features, dataset.meta)
    if shape is not None:
        return shape, [f"({h // shape[1]},{h % shape[1]})" for h in range(n_features)]
    return None, inputs.feature_names(dataset)


# ------------------------------------------------------------------------------------------------------------------
# Table 1 and the overall plot
# ------------------------------------------------------------------------------------------------------------------
def _claims(table: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: featMAP minus UMAP on trustworthiness, continuity and the local-radius correlation."""
    rows = []
    for dataset, group in table.groupby("dataset", sort=False):
        fm, um = group[group.method == "featmap"], group[group.method == "umap"]
        if fm.empty or um.empty:
            continue
        row: dict[str, Any] = {"dataset": dataset}
        for key in ("trustworthiness_k7", "continuity_k7", "radius_correlation"):
            if key in group:
                row[f"{key}_featmap"] = float(fm[key].iloc[0])
                row[f"{key}_umap"] = float(um[key].iloc[0])
        row["t_and_c_within"] = bool(all(row.get(f"{k}_featmap", np.nan) >= row.get(f"{k}_umap", np.nan) - COMPARABLE
                                         for k in ("trustworthiness_k7", "continuity_k7")))
        if "radius_correlation_featmap" in row:
            row["radius_correlation_above_umap"] = bool(row["radius_correlation_featmap"]
                                                        > row["radius_correlation_umap"])
        rows.append(row)
    return pd.DataFrame(rows)


@declare({"scores": SCORES, "method_labels": METHOD_LABELS})
def featmap_table(spec: dict[str, Any], out: dict[str, str], *, scores: list[str],
                  method_labels: Mapping[str, str] | None = None) -> None:
    """Table 1: one row per (dataset, method) with the experiment's ``scores``; the claim checks in the HTML page;
    the PNG is the grid of every map (datasets as rows, methods as columns; methods named by ``method_labels``)."""
    scores = list(scores)
    rows, panels = [], {}
    for run in spec["runs"]:
        inputs, emb, rec = _load(run)
        rows.append({"dataset": run["dataset"], "method_entry": run["entry"], "method": run["method"],
                     "n_samples": int(emb.Z.shape[0]), "status": rec.get("status", "ok"),
                     "runtime_s": float(emb.runtime_s) if emb.runtime_s is not None else np.nan,
                     **{k: rec.get(k, np.nan) for k in scores}})
        panels.setdefault(run["dataset"], []).append(
            ScatterPanel(emb.Z, inputs.labels, inputs.n_cohorts, None,
                         f"{run['dataset']}: {_pretty(run['method'], method_labels)}\n"
                         f"T {rec.get('trustworthiness_k7', np.nan):.3f}  C {rec.get('continuity_k7', np.nan):.3f}",
                         label_names=tuple(inputs.label_names)))
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out["csv"])
    claims = _claims(table)
    verdict = ""
    if not claims.empty:
        ok = claims["t_and_c_within"].all()
        verdict = (f" Claim check (computed from these rows): featMAP's trustworthiness and continuity (k = 7) are "
                   f"{'within' if ok else 'NOT within'} {COMPARABLE} of UMAP's on every dataset "
                   f"({', '.join(f'{d}: {v}' for d, v in zip(claims.dataset, claims.t_and_c_within))}).")
    title = about(spec).title
    sections = [("", table)] + ([("Claim check: featMAP − UMAP per dataset", claims)] if not claims.empty else [])
    write_page(spec, out, sections, title=title, note=findings_note(spec, verdict))
    save_figure(scatter_grid_figure(list(panels.values()), title, width=2.6, height=2.8, point_size=1), out)


# ------------------------------------------------------------------------------------------------------------------
# Figs. 4-5: saliency maps
# ------------------------------------------------------------------------------------------------------------------
def edge_correlations(x: np.ndarray, importance: np.ndarray, shape: tuple[int, int]) -> tuple[float, float]:
    """Pearson correlation of a feature-importance map with the image's gradient magnitude (central differences)
    and with the image itself: our measure of the paper's "the map detects the edge of each digit"."""
    img = np.asarray(x, dtype=np.float64).reshape(shape)
    gy, gx = np.gradient(img)
    edges = np.hypot(gx, gy).ravel()
    fi = np.asarray(importance, dtype=np.float64).ravel()

    def corr(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")

    return corr(fi, edges), corr(fi, img.ravel())


@declare({"random_state": SEED})
def featmap_saliency(spec: dict[str, Any], out: dict[str, str], *, random_state: int = 0) -> None:
    """Figs. 4-5: for every featMAP run, one random image per class (seeded by ``random_state``) beside its
    feature-importance map; the table holds every drawn image's edge and ink correlations. Runs on named features
    (:func:`_layout`) instead get per class its top features by mean importance as bars and, at the same random
    point per class, the loading arrows of its top features on the embedding; the table lists the top features."""
    rng = np.random.default_rng(random_state)
    figure_rows, rows, named, named_rows = [], [], [], []
    for run in _runs_of(spec, "featmap"):
        inputs, emb, _ = _load(run)
        FI = emb.extras["feature_importance"]
        shape, names = _layout(run, inputs, FI.shape[1])
        picks = [int(rng.choice(np.flatnonzero(inputs.labels == c))) for c in range(inputs.n_cohorts)]
        if shape is None:
            means = np.stack([FI[inputs.labels == c].mean(axis=0) for c in range(inputs.n_cohorts)])
            for c, name in enumerate(inputs.label_names):
                named_rows += [{"dataset": run["dataset"], "class": name, "rank": rank, "feature": names[h],
                                "mean_importance": float(means[c, h])}
                               for rank, h in enumerate(top_features(means[c]), start=1)]
            named.append(NamedFeatureMap(emb.Z, inputs.labels, inputs.label_names, means,
                                         emb.extras["feature_loadings"], names, picks,
                                         f"featMAP of {run['dataset']} ({inputs.n_samples} points)"))
            continue
        X = Dataset.load(run["data"]).X if inputs.X.shape[1] != FI.shape[1] else inputs.X
        pairs = []
        for i, name in zip(picks, inputs.label_names):
            e, ink = edge_correlations(X[i], FI[i], shape)
            rows.append({"dataset": run["dataset"], "class": name, "sample": i, "edge_correlation": e,
                         "ink_correlation": ink})
            pairs.append((X[i], FI[i], f"{run['dataset']} {name}"[:22], shape))
        for k in range(0, len(pairs), 10):
            figure_rows.append(pairs[k:k + 10])
    if figure_rows and named:
        raise UserError(f"featmap_saliency of experiment {spec.get('name', '')!r}: its featMAP runs mix image data "
                         f"and named features ({sorted({r['dataset'] for r in _runs_of(spec, 'featmap')})}); give "
                         "each kind its own experiment")
    title = about(spec).title
    if named:
        table = pd.DataFrame(named_rows)
        write_csv_atomic(table, out["csv"])
        write_page(spec, out, [("", table)], title=title, note=findings_note(
            spec, " Per class, its features of largest mean importance (featMAP Eq. 3)."))
        save_figure(named_features_figure(named, title), out)
        return
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out["csv"])
    summary = table.groupby("dataset")[["edge_correlation", "ink_correlation"]].mean().round(3)
    extra = " Mean correlations per dataset: " + "; ".join(
        f"{d}: edge {r.edge_correlation}, ink {r.ink_correlation}" for d, r in summary.iterrows()) + "."
    write_page(spec, out, [("", table)], title=title, note=findings_note(spec, extra))
    save_figure(image_pairs_figure(figure_rows, title), out)


# ------------------------------------------------------------------------------------------------------------------
# Fig. 1: frame and loading arrows
# ------------------------------------------------------------------------------------------------------------------
@declare({"random_state": SEED})
def featmap_frame(spec: dict[str, Any], out: dict[str, str], *, random_state: int = 0) -> None:
    """Fig. 1 for the first featMAP run of the experiment: embedding with one random point (seed ``random_state``) in
    red, its frame and loading arrows (top ten pixels annotated), the image and its feature-importance map; on named
    features (:func:`_layout`) the arrows carry the feature names and the importance is drawn as bars."""
    run = _runs_of(spec, "featmap")[0]
    inputs, emb, rec = _load(run)
    rng = np.random.default_rng(random_state)
    i = int(rng.integers(emb.Z.shape[0]))
    FI, L, frames = emb.extras["feature_importance"], emb.extras["feature_loadings"], emb.extras["frame_embedding"]
    X = Dataset.load(run["data"]).X if inputs.X.shape[1] != FI.shape[1] else inputs.X
    shape, names = _layout(run, inputs, FI.shape[1])
    title = about(spec).title
    fig, top = frame_figure(emb.Z, i, f"featMAP of {run['dataset']} ({inputs.n_samples} points)", L[i], frames[i],
                            names, X[i], FI[i], shape, title)
    save_figure(fig, out)
    lengths = np.linalg.norm(L[i], axis=1)
    trust = f" Trustworthiness (k = 7) of the map: {rec.get('trustworthiness_k7', float('nan')):.3f}."
    if shape is None:
        table = pd.DataFrame({"rank": np.arange(1, top.size + 1), "feature": [names[h] for h in top],
                              "arrow_length": lengths[top], "importance": FI[i][top], "value": X[i][top]})
        write_csv_atomic(table, out["csv"])
        write_page(spec, out, [("", table)], title=title, note=findings_note(
            spec, f" Point {i}: its features of longest loading arrow.{trust}"))
        return
    img = X[i].reshape(shape)
    table = pd.DataFrame({"rank": np.arange(1, top.size + 1), "pixel": [names[h] for h in top],
                          "row": top // shape[1], "column": top % shape[1], "arrow_length": lengths[top],
                          "importance": FI[i][top], "intensity": img.ravel()[top]})
    write_csv_atomic(table, out["csv"])
    e, ink = edge_correlations(X[i], FI[i], shape)
    write_page(spec, out, [("", table)], title=title, note=findings_note(
        spec, f" Point {i}: correlation of its importance map with the image's edges {e:.3f}, with the ink {ink:.3f}."
              f"{trust}"))


# ------------------------------------------------------------------------------------------------------------------
# Fig. 6 and Supp. Fig. 8: adversarial examples
# ------------------------------------------------------------------------------------------------------------------
def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))) if np.linalg.norm(a) * np.linalg.norm(b) > 0 \
        else float("nan")


@declare({"source_class": NON_NEGATIVE_INT, "random_state": SEED})
def featmap_adversarial(spec: dict[str, Any], out: dict[str, str], *, source_class: int = 1,
                        random_state: int = 0) -> None:
    """Fig. 6 / Supp. Fig. 8 from two featMAP runs: on the adversarial set (the dataset with ``adversarial_labels``
    in its meta) and on clean MNIST images (the clean maps of digit d average the featMAP importance maps of the
    clean run's images labelled d). The digit ``source_class`` is followed to every adversarial label t it was
    turned into; five of its adversarial images are drawn (seed ``random_state``)."""
    source = source_class
    runs = _runs_of(spec, "featmap")
    adv_run = next(r for r in runs if "adversarial_labels" in Dataset.load(r["data"]).meta)
    clean_run = next(r for r in runs if r is not adv_run)
    ds = Dataset.load(adv_run["data"])
    meta = ds.meta
    adv_labels = np.asarray(meta["adversarial_labels"], dtype=int)
    _, emb, _ = _load(adv_run)
    clean_inputs, clean_emb, _ = _load(clean_run)
    clean_labels = np.asarray([int(clean_inputs.label_names[c]) for c in clean_inputs.labels])
    FI, cFI = emb.extras["feature_importance"], clean_emb.extras["feature_importance"]
    shape = _shape(adv_run, FI.shape[1])
    rng = np.random.default_rng(random_state)

    hist = np.bincount(adv_labels, minlength=10) / adv_labels.size
    rows = [{"quantity": "clean accuracy (held-out images)", "value": float(meta["clean_accuracy"])},
            {"quantity": "accuracy after the attack", "value": float(meta["adversarial_accuracy"])},
            {"quantity": "epsilon", "value": float(meta["epsilon"])},
            *({"quantity": f"fraction predicted as {d}", "value": float(hist[d])} for d in range(10))]
    from_source = np.flatnonzero((ds.labels == source) & (adv_labels != source))
    clean_src = np.flatnonzero(clean_labels == source)
    mean_src = cFI[clean_src].mean(axis=0)
    targets = [t for t in range(10) if t != source and np.any(adv_labels[from_source] == t)]
    triples = []
    for t in targets:
        adv_t = from_source[adv_labels[from_source] == t]
        clean_t = np.flatnonzero(clean_labels == t)
        m_adv, m_t = FI[adv_t].mean(axis=0), cFI[clean_t].mean(axis=0)
        triples.append((t, mean_src, m_adv, m_t))
        rows.append({"quantity": f"{source}->{t}: images", "value": float(adv_t.size)})
        rows.append({"quantity": f"{source}->{t}: cosine(adversarial map, clean {t} map)", "value": _cosine(m_adv, m_t)})
        rows.append({"quantity": f"{source}->{t}: cosine(adversarial map, clean {source} map)",
                     "value": _cosine(m_adv, mean_src)})
    table = pd.DataFrame(rows)
    if spec["reference"]:
        printed = REFERENCE[spec["reference"]]["rows"]
        table["paper"] = [printed.get(q, np.nan) for q in table.quantity]
    write_csv_atomic(table, out["csv"])
    closer = [t for t, s, a, c in triples if _cosine(a, c) > _cosine(a, s)]
    paper = f" Column paper: {REFERENCE[spec['reference']]['source']}." if spec["reference"] else ""
    title = about(spec).title
    write_page(spec, out, [("", table)], title=title, note=findings_note(
        spec, paper + f" The average adversarial map of {source} -> t is closer (cosine) to clean t's than to clean "
              f"{source}'s for t in {closer} of {[t for t, *_ in triples]}."))
    picks = rng.choice(from_source, size=min(5, from_source.size), replace=False) if from_source.size else []
    save_figure(adversarial_figure(emb.Z, ds.labels, adv_labels, hist, float(meta["adversarial_accuracy"]),
                                   [(ds.X[i], int(adv_labels[i])) for i in picks],
                                   FI[picks[0]] if len(picks) else None, shape, source, triples, title), out)


# ------------------------------------------------------------------------------------------------------------------
# Fig. 7 and Supp. Figs. 9-10: density on the digit-1 group
# ------------------------------------------------------------------------------------------------------------------
def _radii_needed(options: Mapping[str, Any]) -> dict[str, Any]:
    """The runs' scores hold the local radii (the score step's group ``featmap``)."""
    return {"measures": ["featmap"]}


@declare({"n_subgroups": [integer(2, None)], "random_state": SEED, "method_labels": METHOD_LABELS},
         run_metrics=_radii_needed)
def featmap_density(spec: dict[str, Any], out: dict[str, str], *, n_subgroups: int = 6,
                    random_state: int = 0, method_labels: Mapping[str, str] | None = None) -> None:
    """Fig. 7 / Supp. Figs. 9-10: for each run (featMAP and UMAP on one data set), embedded against original local
    radius (isotropic, densMAP's definition on each space's own fuzzy graph; the per-run radii and their correlation
    that the score step's ``featmap`` group saved, :func:`cova.metrics.density.local_radius_pair`) with the
    regression line; k-means subgroups (``n_subgroups``, on the inputs' X, seeded by ``random_state``) and, for the
    subgroup whose embedded radius rises most from UMAP to featMAP (radii standardised per map), ten random
    images; methods named by ``method_labels``."""
    from sklearn.cluster import KMeans

    k = n_subgroups
    seed = random_state
    runs = spec["runs"]
    loaded = [(run, *_load(run)) for run in runs]
    X = loaded[0][1].X
    groups = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(X)
    radii = {}
    for run, _, _, _ in loaded:
        with np.load(run["per_point"]) as f:
            radii[run["entry"]] = (f["radius_original"], f["radius_embedded"])
    rows = []
    z = {e: (r_e - r_e.mean()) / r_e.std() for e, (_, r_e) in radii.items()}
    for g in range(k):
        members = groups == g
        row: dict[str, Any] = {"subgroup": g, "size": int(members.sum()),
                               "mean_original_radius": float(next(iter(radii.values()))[0][members].mean())}
        for e in radii:
            row[f"mean_std_embedded_radius_{e}"] = float(z[e][members].mean())
        rows.append(row)
    table = pd.DataFrame(rows)
    entries = list(radii)
    fm = next((r["entry"] for r in runs if r["method"] == "featmap"), entries[0])
    um = next((r["entry"] for r in runs if r["method"] == "umap"), entries[-1])
    table["featmap_minus_umap"] = table[f"mean_std_embedded_radius_{fm}"] - table[f"mean_std_embedded_radius_{um}"]
    sparse = int(table.sort_values("featmap_minus_umap", ascending=False).subgroup.iloc[0])
    corr = {run["entry"]: float(run_scores(run)["radius_correlation"]) for run in runs}
    write_csv_atomic(table, out["csv"])
    title = about(spec).title
    write_page(spec, out, [("", table)], title=title, note=findings_note(
        spec, " Local-radius correlations: " + ", ".join(f"{e} {c:.3f}" for e, c in corr.items())
              + f". Subgroup {sparse} is the one whose embedded radius rises most from UMAP to featMAP (subgroups: "
                f"k-means with k = {k} on the inputs' X, our choice)."))
    colours = cohort_colours(k)[groups]
    members = np.flatnonzero(groups == sparse)
    pick = np.random.default_rng(seed).choice(members, size=min(10, members.size), replace=False)
    raw = Dataset.load(runs[0]["data"]).X
    Xi = raw if raw.shape[0] == X.shape[0] else X
    shape = _shape(runs[0], Xi.shape[1])
    maps = [(emb.Z, f"{_pretty(run['method'], method_labels)}, k-means subgroups",
             _pretty(run["method"], method_labels), radii[run["entry"]]) for run, _, emb, _ in loaded]
    save_figure(density_figure(maps, groups, sparse, colours, [(int(i), Xi[i]) for i in pick], shape, title),
                out)
