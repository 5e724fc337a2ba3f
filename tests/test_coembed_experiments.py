"""Co-embedding experiments: the renderers on tiny relation runs fitted here, and their computed claim checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cova.datasets import load
from cova.embedding import Embedding
from cova.experiments.coembedding.figures import claim_findings
from cova.experiments.coembedding.map_measures import MAP_MEASURES, map_measures
from cova.experiments.coembedding.timing import synthetic_relation, timing_findings
from cova.experiments.registry import render
from cova.inputs import build_inputs
from cova.methods.registry import make_method
from cova.metrics.score import score_run
from cova.viz.coembedding import minmax_scale_pair


def _runs(tmp_path, entries, dataset="co_dots", kind="dots", relation=None, inputs_name="rel"):
    """Relation inputs of a generated point set and one fitted, scored run per (entry, method, params)."""
    ds = load("coembed_points", kind=kind)
    data = tmp_path / f"{dataset}.npz"
    ds.save(data)
    relation = relation or {"source": "points", "groups": {"rows": [0, 1], "columns": [2, 3], "shared": [4, 5]}}
    inputs = build_inputs(ds, {"relation": relation}, seed=0)
    inputs_file = tmp_path / f"{dataset}_{inputs_name}.npz"
    inputs.save(inputs_file)
    runs = []
    for entry, group, method, params, grid in entries:
        est = make_method(method, params).fit(inputs)
        emb = Embedding(est.embedding_, method=method, params=params,
                        extras={"column_embedding": est.column_embedding_})
        path = tmp_path / f"{dataset}_{inputs_name}_{entry}.npz"
        emb.save(path)
        scores = tmp_path / f"{dataset}_{inputs_name}_{entry}.json"
        scores.write_text(pd.Series({"status": "ok", **score_run(inputs, Embedding.load(path))}).to_json())
        runs.append({"dataset": dataset, "inputs": inputs_name, "entry": entry, "group": group, "method": method,
                     "grid": grid, "data": str(data), "inputs_file": str(inputs_file), "embedding": str(path),
                     "scores": str(scores)})
    return runs


def _out(tmp_path, name):
    return {k: str(tmp_path / f"{name}.{k}") for k in ("png", "csv", "html")}


def test_minmax_scale_pair_maps_the_union_onto_the_unit_square():
    a, b = np.array([[0.0, 1.0], [2.0, 3.0]]), np.array([[4.0, 1.0]])
    sa, sb = minmax_scale_pair(a, b)
    both = np.vstack([sa, sb])
    np.testing.assert_allclose(both.min(axis=0), 0.0)
    np.testing.assert_allclose(both.max(axis=0), 1.0)
    np.testing.assert_allclose(sa[1], [0.5, 1.0])


def test_maps_render_every_run_with_its_measures(tmp_path):
    runs = _runs(tmp_path, [("ca", "ca", "ca", {}, {}), ("ca3", "ca3", "ca", {"n_components": 3}, {})])
    out = _out(tmp_path, "maps")
    render({"renderer": "coembed_maps", "name": "maps", "title": "t", "caption": "c", "original": True, "runs": runs}, out)
    table = pd.read_csv(out["csv"])
    assert list(table.method_entry) == ["ca", "ca3"] and list(table.n_components) == [2, 3]
    assert table.mean_rank.between(5.5, 10_000).all() and table.pooled_1nn_error.between(0, 1).all()
    assert set(MAP_MEASURES) <= set(table) and table[list(MAP_MEASURES)].notna().all().all()
    assert table.cocluster_mixing.between(0, 2).all() and table.min_class_spread.between(0, 2).all()
    assert "c" in open(out["html"]).read()


def test_map_measures_read_spread_class_shrinking_co_cluster_mixing_and_column_distance():
    rng = np.random.default_rng(0)
    # one co-cluster (label 0) of 100 row and 100 column objects: mixed uniformly, or each group on its own side
    mixed = rng.uniform(0, 1, (200, 2))
    split = np.vstack([rng.uniform([0, 0], [0.4, 1], (100, 2)), rng.uniform([0.6, 0], [1, 1], (100, 2))])
    zeros = np.zeros(100, dtype=int)
    uniform = map_measures(mixed[:100], mixed[100:], zeros, zeros)
    apart = map_measures(split[:100], split[100:], zeros, zeros)
    assert 0.85 < uniform["cocluster_mixing"] < 1.15 and apart["cocluster_mixing"] < 0.05
    # the spread of the map as drawn (scaled to the unit square), and a class shrunk to a point
    square = np.array([[0.0, 0.0], [1.0, 1.0]])
    m = map_measures(square, np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0, 0]), np.array([1, 1]))
    np.testing.assert_allclose(m["map_spread"], np.sqrt(0.5))
    np.testing.assert_allclose(m["min_class_spread"], 1.0)  # every class spans the square as much as the map
    shrunk = map_measures(np.array([[0.5, 0.5], [0.5, 0.5], [0.0, 0.0]]), np.array([[1.0, 1.0]]),
                          np.array([0, 0, 1]), np.array([1]))
    assert shrunk["min_class_spread"] == 0.0
    assert np.isnan(m["cocluster_mixing"])  # no cluster has objects of both groups
    # the column objects' distance to the nearest class centre of the rows, in the scaled map
    far = map_measures(np.array([[0.0, 0.0], [0.0, 0.2]]), np.array([[0.0, 0.1], [1.0, 0.1]]), np.array([0, 0]))
    np.testing.assert_allclose(far["column_class_distance"], 0.5)
    assert np.isnan(far["cocluster_mixing"]) and not np.isnan(far["min_class_spread"])
    # unlabelled, or a failed run: only what applies
    bare = map_measures(mixed[:100], mixed[100:])
    assert np.isfinite(bare["map_spread"]) and all(np.isnan(bare[k]) for k in MAP_MEASURES[1:])
    assert all(np.isnan(v) for v in map_measures(np.full((3, 2), np.nan), mixed[:3]).values())


def test_sweep_averages_repeats_and_reports_the_claim(tmp_path):
    entries = [(f"ca-n{k}", "co_ca", "ca", {"n_components": k}, {"n_components": k}) for k in (2, 3)]
    runs = _runs(tmp_path, entries, inputs_name="s0") + _runs(
        tmp_path, entries, inputs_name="s1",
        relation={"source": "points", "groups": {"rows": [0, 1], "columns": [2, 3], "shared": [4, 5]},
                  "split_seed": 1})
    out = _out(tmp_path, "sweep")
    spec = {"name": "sweep", "x": "n_components", "measures": ["mean_rank", "pooled_1nn_error"], "runs": runs}
    render({**spec, "renderer": "coembed_sweep"}, out)
    table = pd.read_csv(out["csv"])
    assert len(table) == 4 and set(table.inputs) == {"s0", "s1"}
    assert "lowest at co_ca 2/2" in open(out["html"]).read()


def test_sweep_text_error_over_words_per_class(tmp_path):
    ds = load("digits", n_per_class=15)
    data = tmp_path / "digits.npz"
    ds.save(data)
    inputs = build_inputs(ds, {"relation": {"source": "X"}}, seed=0)
    inputs.save(tmp_path / "digits_words.npz")
    est = make_method("ca", {}).fit(inputs)
    Embedding(est.embedding_, method="ca", extras={"column_embedding": est.column_embedding_}).save(
        tmp_path / "e.npz")
    (tmp_path / "s.json").write_text('{"status": "ok"}')
    run = {"dataset": "digits", "inputs": "words", "entry": "ca", "group": "ca", "method": "ca", "grid": {},
           "data": str(data), "inputs_file": str(tmp_path / "digits_words.npz"), "embedding": str(tmp_path / "e.npz"),
           "scores": str(tmp_path / "s.json")}
    out = _out(tmp_path, "words")
    n_cols = inputs.relation.shape[1]
    render({"renderer": "coembed_sweep", "name": "w", "x": "n_words", "n_words": [2, 4, n_cols + 1], "n_folds": 3,
                   "measures": ["text_error"], "maps": True, "runs": [run]}, out)
    table = pd.read_csv(out["csv"])
    assert list(table.n_words) == [2, 4]  # more words per class than the relation has: left out, and said so
    assert f"digits has {n_cols} words" in open(out["html"]).read()
    assert table.text_error.between(0, 1).all() and (table.n_selected_words >= table.n_words).all()
    render({"renderer": "coembed_sweep", "name": "w", "x": "n_words", "n_words": [2, n_cols], "n_folds": 3,
                   "measures": ["text_error"], "runs": [run]}, out)
    assert list(pd.read_csv(out["csv"]).n_words) == [2, n_cols] and "words per class are left out" not in open(
        out["html"]).read()
    with pytest.raises(ValueError, match="one n_words"):
        render({"renderer": "coembed_sweep", "name": "w", "x": "n_components", "n_words": [2, 4], "measures": ["text_error"],
                       "runs": [run]}, out)


def test_claim_findings_counts_wins_and_the_proposed_minus_reference_gap():
    table = pd.DataFrame({"dataset": ["d"] * 4, "n_components": [2, 2, 3, 3], "group": ["p", "c", "p", "c"],
                          "method": ["coembed", "ca"] * 2, "mean_rank": [6.0, 7.0, 9.0, 8.0]})
    text = claim_findings(table, "n_components", ["mean_rank"])
    assert "p 1/2" in text and "c 1/2" in text and "mean +0" in text and "largest |·| 1" in text


def test_timing_times_each_entry_and_checks_the_claim(tmp_path):
    runs = _runs(tmp_path, [("ca", "ca", "ca", {}, {})])
    out = _out(tmp_path, "timing")
    render({"renderer": "coembed_timing", "name": "timing", "sizes": [30, 60], "dims": [2], "runs": runs,
                    "claim": {"proposed": "ca", "fast": ["ca"], "slow": []}}, out)
    table = pd.read_csv(out["csv"])
    assert list(table.m) == [30, 60] and (table.wall_s > 0).all() and (table.cpu_s >= 0).all()
    inputs = synthetic_relation(20, 30, random_state=1)
    assert inputs.relation.shape == (20, 30) and inputs.relation.matrix.min() > 0
    slow = pd.DataFrame({"method_entry": ["f", "s", "f", "s"], "m": [10, 10, 20, 20], "k": [2] * 4,
                         "wall_s": [0.1, 1.0, 0.5, 0.4]})
    assert "at 1 of 2" in timing_findings(slow, "f", ["f"], ["s"])
    assert "0.5 s (within 1 s)" in timing_findings(slow, "f", ["f"], ["s"])
