"""COVA's motivating Tables 1-2: the link-graph and highlight renderers (cova.experiments.cova.links) on constructed
cases whose answers are known, and the supervised distance shrink raising class separation (Table 1's finding)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from cova.config import load_schema
from cova.datasets.base import Dataset
from cova.embedding import Embedding
from cova.experiments.registry import RENDERERS, render
from cova.inputs import Inputs
from cova.metrics.cohort import cohort_graph, link_comparison, s_c_r, s_s
from cova.metrics.cohort_graphs import link_counts, nearest_cohorts, reference_graph

# Five cohorts on a line at distinct gaps: the 1-NN graph is 0-1, 1-2, 2-3, 3-4.
LINE = np.array([0.0, 1.0, 3.0, 6.0, 10.0])
# The embedding swaps cohorts 3 and 4: its 1-NN graph is 0-1, 1-2, 2-4, 3-4.
SWAPPED = np.array([0.0, 1.0, 3.0, 10.0, 6.0])
EXPECTED = {"tp": [(0, 1), (1, 2), (3, 4)], "fp": [(2, 4)], "fn": [(2, 3)]}
# Raw-space directions whose centre cosines give the same 1-NN graph (angles grow like LINE).
ANGLES = np.deg2rad(LINE * 8.0)


def _points(centres_x: np.ndarray, per: int = 4, spread: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(len(centres_x)), per)
    offsets = rng.normal(0, spread, (labels.size, 2))
    offsets -= np.array([offsets[labels == j].mean(axis=0) for j in labels])  # centres exactly at centres_x
    return np.column_stack([centres_x[labels], np.zeros(labels.size)]) + offsets, labels


def _write_run(tmp_path, name: str, Z: np.ndarray, inputs: Inputs, raw_X: np.ndarray, names: list[str],
               placed: np.ndarray | None = None) -> dict:
    data = tmp_path / "data.npz"
    if not data.exists():
        Dataset(X=raw_X, labels=inputs.labels, label_names=names, meta={}).save(data)
        inputs.save(tmp_path / "inputs.npz", with_X=True)
    emb = tmp_path / f"{name}.npz"
    Embedding(Z=Z, placed_prototypes=placed).save(emb)
    scores = {"status": "ok", "s_n": 0.5, "s_s": s_s(Z, inputs.labels), "s_c": 0.5,
              "s_c_aligned": 0.5, "s_c_r": s_c_r(Z, inputs.labels, inputs.prototypes, 1),
              "trustworthiness": 0.9, "continuity": 0.9}
    (tmp_path / f"{name}.json").write_text(json.dumps(scores))
    return {"dataset": "toy", "inputs": "toy_inputs", "entry": name, "group": name, "method": name.split("-")[0],
            "grid": {}, "data": str(data), "inputs_file": str(tmp_path / "inputs.npz"), "embedding": str(emb),
            "scores": str(tmp_path / f"{name}.json")}


@pytest.fixture
def toy(tmp_path):
    X, labels = _points(LINE)
    raw = np.column_stack([np.cos(ANGLES[labels]), np.sin(ANGLES[labels])]) * (1 + 0.1 * np.arange(labels.size))[:, None]
    names = [f"c{j}" for j in range(5)]
    inputs = Inputs(X=X, labels=labels, label_names=names, W=sp.identity(labels.size, format="csr") / labels.size,
                    R=np.zeros((labels.size, 5)), prototypes=np.column_stack([LINE, np.zeros(5)]))
    return inputs, raw, names


def test_link_comparison_counts_known_case():
    links = link_comparison(cohort_graph(np.column_stack([LINE, np.zeros(5)]), 1),
                            cohort_graph(np.column_stack([SWAPPED, np.zeros(5)]), 1))
    assert links == EXPECTED
    row = link_counts(links)
    assert (row["tp"], row["fp"], row["fn"]) == (3, 1, 1)
    assert (row["n_reference_links"], row["n_shown_links"]) == (4, 4)
    assert row["link_recall"] == pytest.approx(0.75) and row["link_precision"] == pytest.approx(0.75)
    assert row["fp_links"] == "3-5" and row["fn_links"] == "3-4"  # numbered from 1


def test_reference_graphs_agree_on_constructed_data(toy):
    inputs, raw, _ = toy
    line_graph = cohort_graph(np.column_stack([LINE, np.zeros(5)]), 1)
    assert np.array_equal(reference_graph("prototypes", inputs, raw, 1), line_graph)
    assert np.array_equal(reference_graph("raw_centroid_cosine", inputs, raw, 1), line_graph)
    # in the (line-shaped) features the cosine of centres on the x axis is 1 everywhere except cohort 0 (at 0):
    # a different graph, so the two kinds are really read from different spaces
    assert not np.array_equal(reference_graph("centroid_cosine", inputs, raw, 1), line_graph)
    with pytest.raises(ValueError, match="reference must be one of"):
        reference_graph("words", inputs, raw, 1)


@pytest.mark.parametrize("reference", ["raw_centroid_cosine", "prototypes"])
def test_link_graphs_renderer_counts_links(tmp_path, toy, reference):
    inputs, raw, names = toy
    Z_same, _ = _points(LINE)
    Z_swapped, _ = _points(SWAPPED)
    runs = [_write_run(tmp_path, "same", Z_same, inputs, raw, names),
            _write_run(tmp_path, "swapped", Z_swapped, inputs, raw, names, placed=inputs.prototypes)]
    out = {k: str(tmp_path / f"t2.{k}") for k in ("png", "csv", "html")}
    render({"name": "t2", "renderer": "link_graphs", "reference_graph": reference, "kappa": 1, "show_prototypes": True,
            "runs": runs}, out)
    table = pd.read_csv(out["csv"]).set_index("method_entry")
    assert table.loc["same", ["tp", "fp", "fn"]].tolist() == [4, 0, 0]
    assert table.loc["swapped", ["tp", "fp", "fn"]].tolist() == [3, 1, 1]
    assert table.loc["swapped", "fp_links"] == "3-5" and table.loc["swapped", "fn_links"] == "3-4"
    # against the prototypes, link recall is S_c^(r) (Eq. G.1)
    assert table.loc["swapped", "link_recall"] == pytest.approx(s_c_r(Z_swapped, inputs.labels, inputs.prototypes, 1))
    assert (tmp_path / "t2.png").stat().st_size > 0


def test_nearest_cohorts_and_highlight_grid(tmp_path, toy):
    inputs, raw, names = toy
    assert nearest_cohorts(np.column_stack([SWAPPED, np.zeros(5)]), 4, 2) == [2, 3]
    assert nearest_cohorts(np.column_stack([LINE, np.zeros(5)]), 4, 2) == [3, 2]
    assert nearest_cohorts(np.column_stack([LINE, np.zeros(5)]), 2, 4) == [1, 0, 3, 4]  # tie 0/3 to the lower
    runs = [_write_run(tmp_path, "m-a", _points(LINE)[0], inputs, raw, names),
            _write_run(tmp_path, "m-b", _points(SWAPPED)[0], inputs, raw, names)]
    out = {k: str(tmp_path / f"t1.{k}") for k in ("png", "csv", "html")}
    render({"name": "t1", "renderer": "highlight_grid", "highlight": "c4", "highlight_neighbors": 1,
            "scores": ["s_s", "s_n"], "runs": runs}, out)
    table = pd.read_csv(out["csv"]).set_index("method_entry")
    assert table.loc["m-a", "nearest_1_in_embedding"] == "c3"
    assert table.loc["m-b", "nearest_1_in_embedding"] == "c2"
    assert (table["nearest_1_in_original"] == "c3").all()
    assert table["n_agree"].tolist() == [1, 0]
    with pytest.raises(ValueError, match="no cohort named"):
        render({"name": "t1", "renderer": "highlight_grid", "highlight": "nope", "runs": runs}, out)


def test_supervised_shrink_raises_class_separation():
    """Table 1's finding on a small overlapping set: λ-shrinking same-class distances separates the classes
    (S_s up by ≥ 20 points at λ = 0.1), while neighbours within classes stay about as well preserved."""
    from cova.methods.sne.supervised import SupervisedTSNE
    from cova.metrics.cohort import s_n

    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(3), 80)
    X = rng.normal(0, 1, (labels.size, 10)) + 0.8 * np.eye(10)[labels]  # heavily overlapping classes
    inputs = Inputs(X=X, labels=labels, label_names=["a", "b", "c"], W=sp.csr_matrix((labels.size,) * 2),
                    R=np.zeros((labels.size, 3)), prototypes=np.zeros((3, 2)))
    kw = {"perplexity": 15, "max_iter": 200, "early_exaggeration_iter": 100}
    Z1 = SupervisedTSNE(lam=1.0, **kw).fit_transform(inputs)
    Z01 = SupervisedTSNE(lam=0.1, **kw).fit_transform(inputs)
    assert s_s(Z01, labels) >= s_s(Z1, labels) + 0.2, (s_s(Z1, labels), s_s(Z01, labels))
    assert s_s(Z01, labels) >= 0.9
    assert abs(s_n(X, Z01, labels) - s_n(X, Z1, labels)) <= 0.15


def test_the_link_graph_reference_is_a_declared_option():
    """In a ``link_graphs`` block, ``reference_graph`` names a cohort graph; anything else (e.g. a key of the paper's
    printed numbers, which ``reference`` names) is refused by name."""
    from cova.constraints import OptionError
    from cova.experiments.registry import check_experiment

    assert check_experiment("table2", {"renderer": "link_graphs"})["reference_graph"] == "raw_centroid_cosine"
    assert check_experiment("table2", {"renderer": "link_graphs", "reference": "cova_table1",
                                       "reference_graph": "prototypes"})["reference_graph"] == "prototypes"
    with pytest.raises(OptionError, match=r"config key paper\.experiments\.table2\.reference_graph: 'cova_table1' "
                                          r"is not allowed; allowed: a str among"):
        check_experiment("table2", {"renderer": "link_graphs", "reference_graph": "cova_table1"})


def test_every_renderer_of_the_schema_is_registered():
    def find(node):
        if isinstance(node, dict):
            if "renderer" in node and isinstance(node["renderer"], dict) and "enum" in node["renderer"]:
                return node["renderer"]["enum"]
            for v in node.values():
                if (found := find(v)) is not None:
                    return found
        return None

    assert set(find(load_schema())) == set(RENDERERS)
