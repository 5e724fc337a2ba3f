"""Results back to users' tools: row ids in embedding.npz, `cova export` to CSV, parquet and AnnData .h5ad (from an
.h5ad source and from other data), and featMAP's figures on named features."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from cova.cli import main
from cova.datasets import Dataset
from cova.embedding import Embedding
from cova.inputs import Inputs

anndata = pytest.importorskip("anndata")
h5py = pytest.importorskip("h5py")

FEATURES = ["sepal length", "sepal width", "petal length", "petal width", "stem", "leaf"]


def _blobs(n_per: int = 30, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(3.0 * c, 1.0, (n_per, len(FEATURES))) for c in range(3)])
    return X, np.repeat(np.arange(3), n_per)


def _named_dataset(path, seed: int = 0) -> Dataset:
    X, y = _blobs(seed=seed)
    names = [f"cell-{i:03d}" for i in range(len(y))][::-1]  # not in index order: a row keeps its own name
    ds = Dataset(X, y, ["setosa", "versicolor", "virginica"],
                 meta={"sample_names": names, "feature_names": FEATURES, "name": "blobs"})
    ds.save(path)
    return ds


def _run(tmp_path, dataset: str, spec: dict, method: str = "pca", params: dict | None = None, tag: str = "r"):
    inputs, emb = tmp_path / f"{tag}_inputs.npz", tmp_path / f"{tag}_embedding.npz"
    assert main(["inputs", "--dataset", dataset, "--spec", json.dumps(spec), "--out", str(inputs)]) == 0
    assert main(["embed", "--dataset", dataset, "--inputs", str(inputs), "--method", method,
                 "--params", json.dumps(params or {}), "--out", str(emb)]) == 0
    return str(inputs), str(emb)


def test_ids_saved_loaded_and_old_files_still_load(tmp_path):
    Z = np.arange(6.0).reshape(3, 2)
    Embedding(Z=Z, ids=["a", "b", "c"]).save(tmp_path / "e.npz")
    assert Embedding.load(tmp_path / "e.npz").ids == ["a", "b", "c"]
    with np.load(tmp_path / "e.npz") as f:  # a file written before the ids were recorded
        np.savez(tmp_path / "old.npz", **{k: f[k] for k in f.files if k != "ids"})
    old = Embedding.load(tmp_path / "old.npz")
    assert old.ids is None and np.array_equal(old.Z, Z)
    with pytest.raises(ValueError, match="2 ids for 3 rows"):
        Embedding(Z=Z, ids=["a", "b"])


def test_embed_records_the_names_of_the_subset_rows_and_exports_tables(tmp_path):
    data = tmp_path / "blobs.npz"
    ds = _named_dataset(data)
    inputs_path, emb_path = _run(tmp_path, str(data), {"subset": {"classes": ["versicolor", "virginica"]}})
    emb, inputs = Embedding.load(emb_path), Inputs.load(data, inputs_path)
    assert len(emb.ids) == 60
    row = {name: i for i, name in enumerate(ds.sample_names)}
    # every id names the dataset row whose features the method embedded
    assert np.array_equal(ds.X[[row[i] for i in emb.ids]], inputs.X)

    csv, parquet = tmp_path / "run.csv", tmp_path / "run.parquet"
    assert main(["export", "--dataset", str(data), "--inputs", inputs_path, "--embedding", emb_path,
                 "--name", "pca", "--out", str(csv), str(parquet)]) == 0
    table = pd.read_csv(csv, dtype={"id": str, "label": str})
    assert list(table.columns) == ["id", "label", "pca_1", "pca_2"]
    assert table["id"].tolist() == emb.ids
    assert table["label"].tolist() == [inputs.label_names[c] for c in inputs.labels]
    assert np.array_equal(table[["pca_1", "pca_2"]].to_numpy(), emb.Z)
    back = pd.read_parquet(parquet)
    assert back["id"].tolist() == emb.ids and np.array_equal(back[["pca_1", "pca_2"]].to_numpy(), emb.Z)


def test_h5ad_from_other_data_aligns_runs_by_row_name(tmp_path):
    data = tmp_path / "blobs.npz"
    ds = _named_dataset(data)
    full = _run(tmp_path, str(data), {}, tag="full")
    part = _run(tmp_path, str(data), {"subset": {"classes": ["setosa", "virginica"]}}, tag="part")
    out = tmp_path / "blobs.h5ad"
    assert main(["export", "--dataset", str(data), "--inputs", full[0], part[0], "--embedding", full[1], part[1],
                 "--name", "pca_all", "pca_two", "--out", str(out)]) == 0
    adata = anndata.read_h5ad(out)
    Z_full, Z_part = Embedding.load(full[1]), Embedding.load(part[1])
    assert adata.obs_names.tolist() == ds.sample_names == Z_full.ids
    assert list(adata.var_names) == FEATURES and np.array_equal(adata.X, ds.X)
    assert adata.obs["label"].astype(str).tolist() == [ds.label_names[c] for c in ds.labels]
    assert np.array_equal(adata.obsm["X_pca_all"], Z_full.Z)
    rows = [adata.obs_names.get_loc(i) for i in Z_part.ids]
    assert np.array_equal(adata.obsm["X_pca_two"][rows], Z_part.Z)
    assert np.isnan(np.delete(adata.obsm["X_pca_two"], rows, axis=0)).all()  # versicolor was not embedded
    assert adata.varm["pca_all_components"].shape == (len(FEATURES), 2)


def test_h5ad_source_is_copied_with_the_runs_added(tmp_path):
    X, y = _blobs()
    X[:, 4] = 1.0  # a constant feature: the loader drops it, the copy keeps it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anndata 0.12 writes no pandas-3 (arrow) strings: a file of older tools
        with pd.option_context("future.infer_string", False):
            obs = pd.DataFrame({"kind": pd.Categorical(np.array(["a", "b", "c"], dtype=object)[y]),
                                "depth": np.arange(len(y), dtype=float)}, index=[f"bc{i}" for i in range(len(y))])
            source = anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=FEATURES))
            source.obsm["X_umap"] = np.ones((len(y), 2))
            source.write_h5ad(tmp_path / "cells.h5ad")
    data = tmp_path / "cells.npz"
    assert main(["dataset", "--name", "cells", "--loader", "generic", "--out", str(data),
                 "--params", json.dumps({"path": str(tmp_path / "cells.h5ad"), "label": "kind"})]) == 0
    inputs_path, emb_path = _run(tmp_path, str(data), {})
    out = tmp_path / "export" / "cells.h5ad"
    assert main(["export", "--dataset", str(data), "--inputs", inputs_path, "--embedding", emb_path,
                 "--name", "pca_points", "--out", str(out)]) == 0
    adata, emb = anndata.read_h5ad(out), Embedding.load(emb_path)
    assert adata.obs_names.tolist() == emb.ids == obs.index.tolist()
    assert np.array_equal(adata.obsm["X_pca_points"], emb.Z)
    assert np.array_equal(adata.obsm["X_umap"], source.obsm["X_umap"]) and np.array_equal(adata.X, X)
    assert np.array_equal(adata.obs["depth"].to_numpy(), obs["depth"].to_numpy())
    components = adata.varm["pca_points_components"]
    assert np.isnan(components[4]).all() and np.isfinite(np.delete(components, 4, axis=0)).all()


def test_export_refuses_an_unknown_format_and_repeated_names(tmp_path, caplog):
    data = tmp_path / "blobs.npz"
    _named_dataset(data)
    inputs_path, emb_path = _run(tmp_path, str(data), {})
    with pytest.raises(SystemExit):
        main(["export", "--dataset", str(data), "--inputs", inputs_path, "--embedding", emb_path,
              "--name", "pca", "--out", str(tmp_path / "run.xlsx")])
    assert "'.xlsx'" in caplog.text and ".parquet" in caplog.text
    with pytest.raises(SystemExit):
        main(["export", "--dataset", str(data), "--inputs", inputs_path, "--embedding", emb_path, emb_path,
              "--name", "a", "a", "--out", str(tmp_path / "both.h5ad")])
    assert "repeated: ['a']" in caplog.text


def test_featmap_on_named_features_exports_and_draws_by_name(tmp_path):
    from matplotlib.text import Text

    from cova.experiments.featmap.figures import featmap_frame, featmap_saliency
    from cova.viz import saliency

    data = tmp_path / "blobs.npz"
    ds = _named_dataset(data)
    inputs_path, emb_path = _run(tmp_path, str(data), {}, method="featmap",
                                 params={"n_epochs": 50, "n_neighbors": 10, "tangent_embed": "identity"})
    emb = Embedding.load(emb_path)
    table_path, h5ad = tmp_path / "fm.csv", tmp_path / "fm.h5ad"
    assert main(["export", "--dataset", str(data), "--inputs", inputs_path, "--embedding", emb_path,
                 "--name", "fm", "--out", str(table_path), str(h5ad)]) == 0
    table = pd.read_csv(table_path)
    FI, L = emb.extras["feature_importance"], emb.extras["feature_loadings"]
    # featMAP's float32 outputs are written as float32 values
    assert np.array_equal(table[[f"fm_feature_importance_{f}" for f in FEATURES]].to_numpy(np.float32), FI)
    assert np.array_equal(table["fm_feature_loadings_petal width_2"].to_numpy(np.float32), L[:, 3, 1])
    assert "fm_intrinsic_dim" in table and "fm_radius_correlation_1" not in table  # (2,) is no per-row output
    adata = anndata.read_h5ad(h5ad)
    assert np.array_equal(adata.obsm["fm_feature_importance"], FI.astype(float))
    assert adata.obsm["fm_feature_loadings"].shape == (ds.n_samples, len(FEATURES), 2)

    assert saliency.feature_layout(len(FEATURES), ds.meta) is None
    assert saliency.feature_layout(64, {}) == (8, 8)  # unnamed square features stay images (digits)
    drawn = []
    saved = saliency.plt.Figure.savefig

    def keep_texts(fig, *args, **kwargs):
        drawn.append({t.get_text() for t in fig.findobj(Text)})
        return saved(fig, *args, **kwargs)

    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"trustworthiness_k7": 0.9}))
    run = {"dataset": "blobs", "method": "featmap", "entry": "featmap", "data": str(data),
           "inputs_file": inputs_path, "embedding": emb_path, "scores": str(scores)}
    spec = {"name": "fm", "title": "named", "caption": "", "notes": "", "runs": [run]}
    out = {k: str(tmp_path / f"sal.{k}") for k in ("png", "csv", "html")}
    saliency.plt.Figure.savefig = keep_texts
    try:
        featmap_saliency(spec, out)
        featmap_frame(spec, {k: str(tmp_path / f"frame.{k}") for k in ("png", "csv", "html")})
    finally:
        saliency.plt.Figure.savefig = saved
    top = pd.read_csv(out["csv"])
    means = FI[ds.labels == 0].mean(axis=0)
    setosa = top[top["class"] == "setosa"]
    assert setosa["feature"].tolist() == [FEATURES[h] for h in np.argsort(-means, kind="stable")]
    assert set(FEATURES) <= drawn[0]  # the bars name every feature (6 < 10 drawn per class)
    assert set(FEATURES) & drawn[1] and not any(t.startswith("(") for t in drawn[1])  # names, no pixel coordinates
    assert (tmp_path / "sal.png").stat().st_size > 0 and (tmp_path / "frame.png").stat().st_size > 0
