"""DOSNES experiments: the random-matrix dataset and the renderers on tiny synthetic runs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from cova.datasets import BUILTIN, Dataset, load
from cova.embedding import Embedding
from cova.experiments.dosnes.figures import group_table, sphere_panels
from cova.experiments.reference import REFERENCE
from cova.experiments.registry import RENDERERS, render
from cova.inputs import Inputs
from cova.viz.sphere_page import SphereView, sphere_page


def test_random_matrix_is_seeded_symmetric_uniform():
    ds = load("random_matrix", n_samples=60, random_state=3)
    S = ds.relations.toarray()
    assert "random_matrix" in BUILTIN
    assert ds.X.shape == (60, 0) and ds.n_cohorts == 1
    np.testing.assert_array_equal(S, S.T)
    assert np.all(np.diag(S) == 0)
    off = S[~np.eye(60, dtype=bool)]
    assert off.min() > 0 and off.max() < 1 and abs(off.mean() - 0.5) < 0.05
    np.testing.assert_array_equal(S, load("random_matrix", n_samples=60, random_state=3).relations.toarray())
    assert not np.array_equal(S, load("random_matrix", n_samples=60, random_state=4).relations.toarray())
    with pytest.raises(ValueError, match=r"n_samples.* must be an int in the range \[3, inf\)"):
        load("random_matrix", n_samples=2)


def _graph_run(tmp_path, name, n=24, names=None):
    """A dataset with a relation matrix and names, and graph inputs (labels, W) for it."""
    rng = np.random.default_rng(0)
    A = sp.random(n, n, density=0.3, random_state=0, format="csr")
    A = A + A.T
    labels = np.arange(n) % 3
    meta = {"vertex_names": names} if names else {}
    data = tmp_path / f"{name}.npz"
    Dataset(rng.normal(size=(n, 2)), labels, ["a", "b", "c"], relations=A, meta=meta).save(data)
    inputs = tmp_path / f"{name}_inputs.npz"
    Inputs(labels=labels, label_names=["a", "b", "c"], W=(A / A.sum()).tocsr(), spec={}).save(inputs)
    return str(data), str(inputs)


def _run(tmp_path, dataset, inputs, files, entry, group, method, Z, geometry, scores):
    emb = tmp_path / f"{entry}_embedding.npz"
    Embedding(Z, geometry=geometry, method=method).save(emb)
    sc = tmp_path / f"{entry}_scores.json"
    sc.write_text(json.dumps({"status": "ok", **scores}))
    return {"dataset": dataset, "inputs": inputs, "entry": entry, "group": group, "method": method, "grid": {},
            "data": files[0], "inputs_file": files[1], "embedding": str(emb), "scores": str(sc)}


def _sphere(n, seed):
    Z = np.random.default_rng(seed).normal(size=(n, 3))
    return 5.0 * Z / np.linalg.norm(Z, axis=1, keepdims=True)


def test_sphere_panels_aggregate_seeds_and_add_authors_columns(tmp_path):
    n = 24
    files = _graph_run(tmp_path, "wt", n, names=[f"country{i}" for i in range(n)])
    rng = np.random.default_rng(1)
    runs = []
    for seed in range(3):
        runs.append(_run(tmp_path, "worldtrade", "trade", files, f"t2-rs{seed}", "tsne2", "tsne_affinity",
                         rng.normal(size=(n, 2)), "plane",
                         {"knn_accuracy": 0.4 + 0.1 * seed, "degree_radius_rho": -0.9, "kl": 0.7}))
        runs.append(_run(tmp_path, "worldtrade", "trade", files, f"t3-rs{seed}", "tsne3", "tsne_affinity",
                         rng.normal(size=(n, 3)), "plane", {"knn_accuracy": 0.6, "kl": 0.5}))
        runs.append(_run(tmp_path, "worldtrade", "trade_ds", files, f"d-rs{seed}", "dosnes", "dosnes",
                         _sphere(n, seed), "sphere", {"knn_accuracy": 0.7, "degree_radius_rho": -0.2, "kl": 0.64}))
    spec = {"name": "dosnes_fig3", "renderer": "sphere_panels", "title": "WorldTrade", "caption": "cap.",
            "notes": "measures are ours", "annotate": True, "reference": "dosnes_worldtrade_authors",
            "inputs_labels": {"trade": "raw", "trade_ds": "doubly stochastic"}, "runs": runs}
    out = {k: str(tmp_path / f"fig3.{k}") for k in ("png", "csv", "html")}
    render(spec, out)
    table = pd.read_csv(out["csv"])
    assert list(table.method_entry) == ["tsne2", "tsne3", "dosnes"]
    assert list(table.n_runs) == [3, 3, 3] and list(table.dimension) == [2, 3, 3]
    assert list(table.input) == ["raw", "raw", "doubly stochastic"]
    np.testing.assert_allclose(table.knn_accuracy, [0.5, 0.6, 0.7])
    np.testing.assert_allclose(table.knn_accuracy_std[0], np.std([0.4, 0.5, 0.6]), atol=1e-6)
    assert np.isnan(table.degree_radius_rho[1]) and np.isnan(table.graph_precision).all()
    ref = REFERENCE["dosnes_worldtrade_authors"]["rows"]
    np.testing.assert_allclose(table.authors_knn_accuracy,
                               [ref[("worldtrade", "tsne_affinity", 2)]["knn_accuracy"],
                                ref[("worldtrade", "tsne_affinity", 3)]["knn_accuracy"],
                                ref[("worldtrade", "dosnes", 3)]["knn_accuracy"]])
    page = open(out["html"]).read()
    assert page.count("<canvas") == 2  # the 3-D t-SNE and the sphere
    assert "country7" in page and "authors_kl" in page and "measures are ours" in page
    assert "<script src" not in page and "http" not in page.split("<script>")[1]  # offline
    assert open(out["png"], "rb").read(4) == b"\x89PNG"


def test_radial_panels_one_row_per_group(tmp_path):
    n = 30
    files = _graph_run(tmp_path, "rand", n)
    rng = np.random.default_rng(2)
    runs = [_run(tmp_path, "random_matrix", inputs, files, f"{inputs}-{k}", f"tsne{k}", "tsne_affinity",
                 rng.normal(size=(n, k)), "plane", {"radial_cv": cv})
            for inputs, cv0 in (("rand_raw", 0.3), ("rand_ds", 0.1)) for k, cv in ((2, cv0), (3, cv0 / 2))]
    spec = {"name": "dosnes_fig1", "renderer": "radial_panels", "title": "Fig. 1",
            "inputs_labels": {"rand_raw": "raw", "rand_ds": "doubly stochastic"}, "runs": runs}
    out = {k: str(tmp_path / f"fig1.{k}") for k in ("png", "csv", "html")}
    render(spec, out)
    table = pd.read_csv(out["csv"])
    assert list(table.columns) == ["dataset", "inputs", "input", "method_entry", "method", "dimension", "geometry",
                                   "n_runs", "n_ok", "radial_cv"]
    np.testing.assert_allclose(table.radial_cv, [0.3, 0.15, 0.1, 0.05])
    assert list(table.input) == ["raw", "raw", "doubly stochastic", "doubly stochastic"]
    assert open(out["html"]).read().count("<canvas") == 2


def test_group_table_marks_missing_measures_nan(tmp_path):
    files = _graph_run(tmp_path, "g", 10)
    runs = [_run(tmp_path, "g", "i", files, "e", "e", "dosnes", _sphere(10, 0), "sphere", {})]
    loaded = [(r, Embedding.load(r["embedding"]), {}) for r in runs]
    table = group_table(loaded)
    assert table.n_runs.tolist() == [1] and table.knn_accuracy.isna().all()
    assert sphere_panels is RENDERERS["sphere_panels"]


def test_sphere_page_degenerate_and_escaping():
    page = sphere_page([SphereView("a </script> b", np.full((4, 3), np.nan), None, [])], "t<")
    assert "</script> b" not in page.split("<script>")[1].split("</script>")[0]
    assert "t&lt;" in page and '"finite":false' in page


def test_score_step_skips_prototypes_of_another_dimension():
    from cova.metrics.score import score_run

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    labels = np.arange(40) % 2
    W = sp.csr_matrix(np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)) * (1 - np.eye(40)))
    inputs = Inputs(X=X, labels=labels, label_names=["a", "b"], W=W / W.sum(), R=np.eye(2)[labels],
                    prototypes=rng.normal(size=(2, 5)))
    scores = score_run(inputs, Embedding(rng.normal(size=(40, 3))))
    assert "s_c" not in scores and "s_n" in scores
