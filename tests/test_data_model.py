"""The data model: optional inputs, graph and relation inputs blocks, required inputs, embeddings with geometry
and extra outputs, and the scatter renderer for 3-D, spherical and row+column embeddings."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp

from cova.config import ConfigError, validate_config
from cova.datasets import Dataset
from cova.embedding import Embedding
from cova.inputs import Inputs, Relation, build_inputs, provided_inputs
from cova.methods import make_method
from cova.viz.scatter import save_scatter_figure


def graph_dataset(l: int = 40, seed: int = 0) -> Dataset:
    """Vectors, three cohorts and a directed weighted relation with self-loops (like a trade network)."""
    rng = np.random.default_rng(seed)
    labels = np.arange(l) % 3
    X = rng.normal(size=(l, 4)) + labels[:, None]
    A = sp.random(l, l, density=0.2, random_state=seed, format="csr") * 10.0
    A = A + sp.eye(l, format="csr")
    return Dataset(X, labels, ["a", "b", "c"], relations=A, meta={"vertex_names": [f"v{i}" for i in range(l)]})


def count_dataset(seed: int = 0) -> Dataset:
    """A non-negative count matrix with one all-zero row and one all-zero column."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, size=(30, 12)).astype(float)
    X[:, 5] = 0.0
    X[7] = 0.0
    return Dataset(X, np.arange(30) % 2, ["even", "odd"])


def full_inputs(l: int = 12, c: int = 3) -> Inputs:
    rng = np.random.default_rng(1)
    labels = np.arange(l) % c
    W = sp.random(l, l, density=0.3, random_state=1, format="csr")
    relation = Relation(sp.random(l, 5, density=0.5, random_state=2, format="csr"), [f"r{i}" for i in range(l)],
                        [f"c{j}" for j in range(5)], row_labels=labels, row_label_names=["x", "y", "z"],
                        column_labels=np.array([0, 1, 0, 1, 1]), column_label_names=["p", "q"])
    return Inputs(X=rng.normal(size=(l, 3)), labels=labels, label_names=["x", "y", "z"], W=(W + W.T).tocsr(),
                  R=rng.random((l, c)), prototypes=rng.normal(size=(c, 2)), spec={"seed": 0, "note": "é"},
                  train=np.arange(l) % 2 == 0, gold_labels=labels[::-1].copy(),
                  gold_prototypes=rng.normal(size=(c, 2)), labelled=np.arange(l) < 6, relation=relation)


# ---------------------------------------------------------------------------------------------------------------
# Inputs: optional fields, save / load


def test_inputs_round_trip_every_optional_field(tmp_path):
    inputs = full_inputs()
    ds = Dataset(np.zeros((12, 3)), np.zeros(12, dtype=int), ["only"])
    ds.save(tmp_path / "d.npz")
    inputs.save(tmp_path / "i.npz", with_X=True, with_labels=True)
    back = Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz")
    assert back.available() == inputs.available() == {"X", "labels", "W", "R", "prototypes", "relation"}
    for key in ("X", "labels", "R", "prototypes", "train", "gold_labels", "gold_prototypes", "labelled"):
        np.testing.assert_array_equal(getattr(back, key), getattr(inputs, key))
    assert (back.W != inputs.W).nnz == 0 and back.label_names == inputs.label_names and back.spec == inputs.spec
    r, s = back.relation, inputs.relation
    assert (r.matrix != s.matrix).nnz == 0 and r.shape == s.shape
    assert (r.row_names, r.column_names, r.row_label_names, r.column_label_names) == \
        (s.row_names, s.column_names, s.row_label_names, s.column_label_names)
    np.testing.assert_array_equal(r.row_labels, s.row_labels)
    np.testing.assert_array_equal(r.column_labels, s.column_labels)
    with np.load(tmp_path / "i.npz", allow_pickle=False) as f:  # every array loads without pickles
        assert all(f[k].dtype != object for k in f.files)


def test_missing_fields_stay_missing_after_load(tmp_path):
    ds = graph_dataset()
    ds.save(tmp_path / "d.npz")
    inputs = build_inputs(ds, {"graph": {"source": "relations"}})
    inputs.save(tmp_path / "i.npz", with_X=inputs.X is not ds.X, with_labels=inputs.labels is not ds.labels)
    back = Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz")
    assert back.available() == {"W", "labels", "degree"}
    assert back.X is None and back.R is None and back.prototypes is None and back.relation is None
    np.testing.assert_array_equal(back.labels, ds.labels)
    assert back.n_samples == ds.n_samples and back.training() is back


def test_vector_inputs_file_has_no_provides_key(tmp_path):
    """A vector block provides everything, so its inputs.npz keeps the keys it always had."""
    inputs = full_inputs()
    inputs.relation = None
    inputs.save(tmp_path / "i.npz")
    with np.load(tmp_path / "i.npz") as f:
        assert "provides" not in f.files and {"W_data", "R", "prototypes", "spec"} <= set(f.files)


def test_relation_validates_its_parts():
    with pytest.raises(ValueError, match="non-negative"):
        Relation(-sp.eye(2, format="csr"), ["a", "b"], ["x", "y"])
    with pytest.raises(ValueError, match="row names"):
        Relation(sp.eye(2, format="csr"), ["a"], ["x", "y"])
    with pytest.raises(ValueError, match="row labels"):
        Relation(sp.eye(2, format="csr"), ["a", "b"], ["x", "y"], row_labels=[0, 2], row_label_names=["u", "v"])


# ---------------------------------------------------------------------------------------------------------------
# build_inputs: graph and relation blocks


def test_graph_block_is_the_symmetrised_unit_sum_relation():
    ds = graph_dataset()
    inputs = build_inputs(ds, {"graph": {"source": "relations"}}, seed=3)
    A = ds.relations.toarray()
    np.fill_diagonal(A, 0.0)
    expected = (A + A.T) / 2
    np.testing.assert_allclose(inputs.W.toarray(), expected / expected.sum(), rtol=1e-14, atol=0)
    assert sp.issparse(inputs.W) and inputs.W.diagonal().max() == 0.0
    assert inputs.available() == {"W", "labels", "degree"} == provided_inputs({"graph": {"source": "relations"}})
    assert inputs.spec["seed"] == 3 and inputs.spec["n_edges"] == sp.triu(inputs.W, k=1).nnz


def test_graph_block_with_features_and_cohort_inputs():
    ds = graph_dataset()
    spec = {"graph": {"source": "relations"}, "features": {"kind": "pca", "n_components": 2},
            "confidence": {"kind": "eq11", "lambda_p": 0.01}, "prototypes": {"kind": "means"}}
    inputs = build_inputs(ds, spec)
    assert inputs.available() == provided_inputs(spec) == {"X", "labels", "W", "R", "prototypes", "degree"}
    assert inputs.X.shape == (40, 2) and inputs.R.shape == (40, 3) and inputs.prototypes.shape == (3, 2)


def test_graph_block_refusals():
    with pytest.raises(ValueError, match="relation matrix"):
        build_inputs(Dataset(np.zeros((5, 2)), np.zeros(5, dtype=int), ["a"]), {"graph": {"source": "relations"}})
    with pytest.raises(ValueError, match="remove 'weights'"):
        provided_inputs({"graph": {"source": "relations"}, "weights": {"kind": "euclidean_max"}})
    with pytest.raises(ValueError, match="does not take \\['split'\\]"):
        provided_inputs({"graph": {"source": "relations"}, "split": {"train_fraction": 0.5}})


def test_relation_block_drops_empty_rows_and_columns():
    ds = count_dataset()
    inputs = build_inputs(ds, {"relation": {"source": "X"}})
    rel = inputs.relation
    assert inputs.available() == {"relation", "labels"} == provided_inputs({"relation": {"source": "X"}})
    assert rel.shape == (29, 11)
    assert inputs.spec["n_empty_rows_dropped"] == 1 and inputs.spec["n_empty_columns_dropped"] == 1
    assert "feature 5" not in rel.column_names and rel.column_names[5] == "feature 6"
    assert "sample 7" not in rel.row_names
    keep = np.delete(np.arange(30), 7)
    np.testing.assert_array_equal(rel.matrix.toarray(), np.delete(ds.X[keep], 5, axis=1))
    np.testing.assert_array_equal(inputs.labels, ds.labels[keep])
    np.testing.assert_array_equal(rel.row_labels, inputs.labels)
    assert inputs.X is None and inputs.n_samples == 29


def test_relation_block_takes_names_from_the_dataset():
    ds = count_dataset()
    ds.meta.update(sample_names=[f"doc{i}" for i in range(30)], feature_names=[f"w{j}" for j in range(12)])
    rel = build_inputs(ds, {"relation": {"source": "X"}}).relation
    assert rel.row_names[:3] == ["doc0", "doc1", "doc2"] and rel.column_names[:6] == ["w0", "w1", "w2", "w3", "w4",
                                                                                       "w6"]


def test_vector_block_provides_everything():
    assert provided_inputs({"weights": {"kind": "euclidean_max"}, "confidence": {"kind": "eq12"},
                            "prototypes": {"kind": "means"}}) == {"X", "labels", "W", "R", "prototypes"}


# ---------------------------------------------------------------------------------------------------------------
# required inputs and the configuration check


@pytest.mark.parametrize("name, params, needs", [
    ("tsne_exact", {}, ("X",)),
    ("tsne_exact", {"affinity": "inputs"}, ("W",)),
    ("tsne", {"affinity": "inputs"}, ("W", "X")),
    ("nse", {"affinity": "inputs"}, ("W",)),
    ("laplacian_eigenmaps", {}, ("W",)),
    ("cova_e1", {}, ("W", "R", "prototypes")),
    ("cova_p1", {}, ("X", "W", "R", "prototypes")),
    ("lda", {}, ("X", "labels")),
    ("ca", {}, ("relation",)),
])
def test_methods_declare_what_they_read(name, params, needs):
    assert make_method(name, params).requires() == needs


def core_config() -> dict:
    return {
        "seed": 0,
        "datasets": {"wt": {"loader": "worldtrade"}},
        "inputs": {"trade": {"graph": {"source": "relations"}}},
        "methods": {"t3": {"method": "tsne_exact", "params": {"n_components": 3, "affinity": "inputs"}},
                    "e1": {"method": "cova_e1"}, "tx": {"method": "tsne_exact"}},
        "runs": [{"dataset": "wt", "inputs": "trade", "methods": ["t3"]}],
    }


def test_config_accepts_a_graph_run():
    validate_config(core_config())


def test_config_refuses_a_method_whose_inputs_are_missing():
    config = core_config()
    config["runs"].append({"dataset": "wt", "inputs": "trade", "methods": ["t3"]})
    config["runs"].append({"dataset": "wt", "inputs": "trade", "methods": ["t3", "e1"]})
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    assert str(err.value).startswith("config key runs[2]: method entry 'e1' (cova_e1) needs R, prototypes, which "
                                     "inputs block 'trade' does not provide")


def test_config_refusal_follows_the_method_parameters():
    config = core_config()
    config["runs"] = [{"dataset": "wt", "inputs": "trade", "methods": ["tx"]}]
    with pytest.raises(ConfigError, match="'tx' \\(tsne_exact\\) needs X"):
        validate_config(config)
    config["methods"]["tx"]["grid"] = {"affinity": ["inputs", "perplexity"]}
    with pytest.raises(ConfigError, match="'tx' \\(tsne_exact\\) needs X"):
        validate_config(config)
    config["methods"]["tx"]["grid"] = {"affinity": ["inputs"]}
    validate_config(config)


def test_config_schema_requires_the_vector_keys_without_graph_or_relation():
    config = core_config()
    config["inputs"]["trade"] = {"weights": {"kind": "euclidean_max"}}
    with pytest.raises(ConfigError, match=r"config key inputs.trade.confidence: an inputs block that builds W, R and "
                                          r"prototypes needs all of weights, confidence and prototypes; missing "
                                          r"\['confidence', 'prototypes'\]"):
        validate_config(config)
    config["inputs"]["trade"] = {"graph": {"source": "relations"}, "weights": {"kind": "euclidean_max"}}
    with pytest.raises(ConfigError, match="config key inputs.trade.weights: .*remove 'weights'"):
        validate_config(config)


# ---------------------------------------------------------------------------------------------------------------
# methods on graph inputs; embeddings with geometry and extras


def test_exact_tsne_uses_the_given_graph_as_p():
    inputs = build_inputs(graph_dataset(), {"graph": {"source": "relations"}})
    est = make_method("tsne_exact", {"affinity": "inputs", "n_components": 3}, seed=0)
    np.testing.assert_array_equal(est._affinities(inputs, None), inputs.W.toarray())
    Z = est.fit_transform(inputs)
    assert Z.shape == (40, 3) and np.all(np.isfinite(Z))
    np.testing.assert_array_equal(Z, make_method("tsne_exact", {"affinity": "inputs", "n_components": 3},
                                                 seed=0).fit_transform(copy.deepcopy(inputs)))


def test_embedding_round_trip_with_extras(tmp_path):
    rng = np.random.default_rng(0)
    emb = Embedding(Z=rng.normal(size=(10, 3)), geometry="sphere", extras={"column_embedding": np.ones((4, 3))},
                    status="ok", runtime_s=1.5, method="ca", params={"n_components": 3})
    emb.save(tmp_path / "e.npz")
    back = Embedding.load(tmp_path / "e.npz")
    np.testing.assert_array_equal(back.Z, emb.Z)
    assert back.n_components == 3 and back.geometry == "sphere" and back.placed_or_none is None
    assert list(back.extras) == ["column_embedding"] and back.extras["column_embedding"].shape == (4, 3)
    assert (back.status, back.runtime_s, back.method, back.params) == ("ok", 1.5, "ca", {"n_components": 3})


def test_embedding_reads_files_without_geometry(tmp_path):
    np.savez(tmp_path / "old.npz", Z=np.zeros((5, 2)), placed_prototypes=np.zeros((0, 2)),
             runtime_s=np.array(0.1), status=np.array("degenerate"))
    back = Embedding.load(tmp_path / "old.npz")
    assert back.geometry == "plane" and back.n_components == 2 and not back.ok and back.extras == {}


def test_embed_step_saves_geometry_and_extras(tmp_path):
    from cova.cli import main

    ds = count_dataset()
    ds.save(tmp_path / "d.npz")
    build_inputs(ds, {"relation": {"source": "X"}}).save(tmp_path / "i.npz", with_labels=True)
    assert main(["embed", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz"),
                 "--method", "ca", "--params", '{"n_components": 3}', "--out", str(tmp_path / "e.npz")]) == 0
    emb = Embedding.load(tmp_path / "e.npz")
    assert emb.Z.shape == (29, 3) and emb.geometry == "plane" and emb.extras["column_embedding"].shape == (11, 3)


def test_embed_step_refuses_missing_inputs(tmp_path, caplog):
    from cova.cli import main

    ds = graph_dataset()
    ds.save(tmp_path / "d.npz")
    build_inputs(ds, {"graph": {"source": "relations"}}).save(tmp_path / "i.npz")
    assert main(["embed", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz"),
                 "--method", "cova_e1", "--out", str(tmp_path / "e.npz")]) == 1
    assert "'cova_e1' needs R, prototypes" in caplog.text and "Traceback" not in caplog.text


# ---------------------------------------------------------------------------------------------------------------
# scatter renderer


def test_scatter_draws_3d_sphere_and_row_column_figures(tmp_path):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(60, 3))
    labels = np.arange(60) % 4
    save_scatter_figure(tmp_path / "3d.png", Z, labels, list("abcd"), scores={"s_s": 0.5}, title="3-D")
    S = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    save_scatter_figure(tmp_path / "sphere.png", S, labels, list("abcd"), geometry="sphere", title="sphere")
    save_scatter_figure(tmp_path / "rel.png", Z[:, :2], labels, list("abcd"), columns=rng.normal(size=(20, 2)),
                        kinds=("documents", "words"), title="relation")
    save_scatter_figure(tmp_path / "rel3.png", Z, None, [], columns=rng.normal(size=(20, 3)), title="relation 3-D")
    save_scatter_figure(tmp_path / "nolabels.png", Z[:, :2], None, [], title="no labels")
    save_scatter_figure(tmp_path / "degenerate.png", np.full((60, 3), np.nan), labels, list("abcd"))
    for name in ("3d", "sphere", "rel", "rel3", "nolabels", "degenerate"):
        assert (tmp_path / f"{name}.png").stat().st_size > 5_000, name


def test_degenerate_run_keeps_the_embedding_width(tmp_path, monkeypatch):
    from cova.cli import main
    from cova.methods import DegenerateSolution, Embedder, registry

    class NoSolution(Embedder):
        required_inputs = ("W",)
        extra_outputs = ("frames_",)

        def __init__(self, n_components: int = 3):
            self.n_components = n_components

        def _fit(self, inputs: Inputs) -> "NoSolution":
            raise DegenerateSolution("no solution for these parameters")

    monkeypatch.setitem(registry.METHODS, "no_solution", NoSolution)
    ds = graph_dataset()
    ds.save(tmp_path / "d.npz")
    build_inputs(ds, {"graph": {"source": "relations"}}).save(tmp_path / "i.npz")
    assert main(["embed", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz"),
                 "--method", "no_solution", "--out", str(tmp_path / "e.npz")]) == 0
    emb = Embedding.load(tmp_path / "e.npz")
    assert emb.status == "degenerate" and emb.Z.shape == (40, 3) and np.all(np.isnan(emb.Z)) and emb.extras == {}
