"""The ``generic`` loader on the files users hold: delimited text with any separator, with or without a header,
``.npz``, AnnData ``.h5ad``; and its refusals, each naming the file and the column, row, token or array."""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from cova.cli import cmd_dataset, cmd_fetch
from cova.config import ConfigError, Plan, validate_config
from cova.datasets import Dataset, load
from cova.datasets.fetch import MANIFEST, ChecksumError, fetch_file, verify_manifest
from cova.datasets.sources import source_file_name

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def iris_like(n: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=n).round(4), "b": rng.normal(size=n).round(4),
                         "kind": np.array(["x", "y", "z"])[np.arange(n) % 3]})


def base_config(datasets: dict) -> dict:
    config = yaml.safe_load((ROOT / "tests" / "configs" / "core.yaml").read_text())
    config = copy.deepcopy(config)
    config["datasets"].update(datasets)
    return config


# ------------------------------------------------------------------------------------------- text formats


def test_headerless_whitespace_file_with_labels_last_by_config_alone(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 3)).round(5)
    y = np.arange(20) % 4
    lines = ["   ".join(f"{v:.5f}" for v in row) + f"\t {c}" for row, c in zip(X, y)]
    (tmp_path / "points.dat").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    config = base_config({"points": {"loader": "generic",
                                     "params": {"path": "points.dat", "sep": "whitespace", "header": False,
                                                "label": -1}}})
    validate_config(config)
    plan = Plan(config)
    assert plan.dataset_inputs("points") == ["points.dat"]
    cmd_dataset(argparse.Namespace(name="points", loader="generic", raw=None, out=str(tmp_path / "points.npz"),
                                   params=json.dumps(plan.loader_params("points"))))
    ds = Dataset.load(tmp_path / "points.npz")
    np.testing.assert_array_equal(ds.X, X)
    assert ds.labels.tolist() == y.tolist() and ds.label_names == ["0", "1", "2", "3"]
    assert ds.meta["features"] == [0, 1, 2]


def test_separators_and_column_indices(tmp_path):
    df = iris_like()
    df.to_csv(tmp_path / "d.tsv", sep="\t", index=False)
    tsv = load("generic", path=tmp_path / "d.tsv", label="kind")  # .tsv: tab by default
    np.testing.assert_array_equal(tsv.X, df[["a", "b"]].to_numpy())
    df.to_csv(tmp_path / "semi.csv", sep=";", index=False)
    semi = load("generic", path=tmp_path / "semi.csv", label=2, features=[1], sep="semicolon")
    np.testing.assert_array_equal(semi.X[:, 0], df["b"].to_numpy())
    assert semi.label_names == ["x", "y", "z"]
    df.to_csv(tmp_path / "nohead.csv", index=False, header=False)
    nohead = load("generic", path=tmp_path / "nohead.csv", header=False, label=2)
    np.testing.assert_array_equal(nohead.X, tsv.X)
    with pytest.raises(ValueError, match=r"nohead.csv: the file has no header row .* by its 0-based index"):
        load("generic", path=tmp_path / "nohead.csv", header=False, label="kind")
    with pytest.raises(ValueError, match=r"label column index 3 is out of range: the file has 3 columns"):
        load("generic", path=tmp_path / "nohead.csv", header=False, label=3)
    with pytest.raises(ValueError, match="The 'sep' parameter of generic must be a str among .* or None. Got 'pipe'"):
        load("generic", path=tmp_path / "d.tsv", label="kind", sep="pipe")
    (tmp_path / "ragged.tsv").write_text("a,b,kind\n1,2,x\n1,2,3,4,x\n")
    with pytest.raises(ValueError, match=r"ragged.tsv: cannot be read as comma-separated text \(.*line 3, saw 5\); "
                                         "check sep"):
        load("generic", path=tmp_path / "ragged.tsv", label="kind", sep="comma")


def test_non_numeric_token_is_refused_naming_column_row_and_token(tmp_path):
    df = iris_like().astype({"a": object})
    df.loc[5, "a"] = "?"
    df["note"] = "text"  # a column without any number is left out, as before
    df.to_csv(tmp_path / "q.csv", index=False)
    with pytest.raises(ValueError) as err:
        load("generic", path=tmp_path / "q.csv", label="kind")
    msg = str(err.value)
    assert str(tmp_path / "q.csv") in msg and "column 'a'" in msg and "data row 5 (file line 7)" in msg
    assert "token '?'" in msg and "na_values: ['?']" in msg
    with pytest.raises(ValueError, match=r"feature column 'a' is not numeric: data row 5 .* token '\?'"):
        load("generic", path=tmp_path / "q.csv", label="kind", features=["a", "b"])
    with pytest.raises(ValueError) as err:
        load("generic", path=tmp_path / "q.csv", label="kind", na_values=["?"])
    msg = str(err.value)
    assert "q.csv: 1 of 12 rows have NaN or missing values" in msg
    assert "data rows [5] (file lines [7])" in msg and "missing in ['a']" in msg
    ok = load("generic", path=tmp_path / "q.csv", label="kind", features=["b"])
    assert ok.meta["features"] == ["b"]
    full = load("generic", path=tmp_path / "q.csv", label="kind", features=["b"], na_values=["?"])
    np.testing.assert_array_equal(full.X, ok.X)
    clean = iris_like().assign(note="text")
    clean.to_csv(tmp_path / "clean.csv", index=False)
    assert load("generic", path=tmp_path / "clean.csv", label="kind").meta["non_numeric_ignored"] == ["note"]


def test_headerless_token_error_names_the_column_index(tmp_path):
    (tmp_path / "p.txt").write_text("1.0 2.0 a\n1.5 n/a? b\n2.0 3.5 a\n")
    with pytest.raises(ValueError, match=r"p.txt: feature column 1 \(0-based\) is not numeric: data row 1 "
                                         r"\(file line 2\) holds the token 'n/a\?'"):
        load("generic", path=tmp_path / "p.txt", header=False, label=-1)


def test_empty_and_header_only_files(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match=r"empty.csv: the file is empty \(no header and no data rows\)"):
        load("generic", path=tmp_path / "empty.csv", label="kind")
    (tmp_path / "blank.txt").write_text("\n  \n")
    with pytest.raises(ValueError, match="blank.txt: the file is empty"):
        load("generic", path=tmp_path / "blank.txt", label=0, header=False)
    (tmp_path / "head.csv").write_text("a,b,kind\n")
    with pytest.raises(ValueError, match=r"head.csv: the file has a header row \(3 columns: \['a', 'b', 'kind'\]\) "
                                         "but no data rows"):
        load("generic", path=tmp_path / "head.csv", label="kind")
    (tmp_path / "one.csv").write_text("a,b,kind\n1,2,x\n")
    with pytest.raises(ValueError, match="one.csv: 1 data rows; a data set needs at least 2"):
        load("generic", path=tmp_path / "one.csv", label="kind")


# ------------------------------------------------------------------------------------------- arrays


def test_pickled_npz_is_refused_naming_file_and_fix(tmp_path):
    X = np.arange(12.0).reshape(6, 2)
    np.savez(tmp_path / "p.npz", X=X, y=np.array(["a", 1, None, "b", "a", "b"], dtype=object))
    with pytest.raises(ValueError) as err:
        load("generic", path=tmp_path / "p.npz", label="y")
    msg = str(err.value)
    assert str(tmp_path / "p.npz") in msg and "array 'y' holds pickled Python objects" in msg
    assert "np.savez('p.npz', X=np.asarray(X, dtype=float), y=np.asarray(labels, dtype=str))" in msg
    np.savez(tmp_path / "ok.npz", X=X, y=np.array(["a", "b"] * 3), junk=np.array([{}], dtype=object))
    assert load("generic", path=tmp_path / "ok.npz", label="y").X.shape == (6, 2)  # unused arrays are not read
    (tmp_path / "bad.npz").write_text("not a zip")
    with pytest.raises(ValueError, match="bad.npz: not an .npz archive"):
        load("generic", path=tmp_path / "bad.npz", label="y")


def test_h5ad_written_by_anndata(tmp_path):
    pytest.importorskip("h5py")
    expected = np.loadtxt(DATA / "h5ad_X.txt")
    ds = load("generic", path=DATA / "dense.h5ad", label="cell_type")
    np.testing.assert_array_equal(ds.X, expected)
    assert ds.label_names == ["a", "b", "c"] and [ds.label_names[k] for k in ds.labels] == ["b", "a", "c"] * 4
    assert ds.sample_names == [f"cell{i}" for i in range(12)]
    assert ds.feature_names == [f"gene{j}" for j in range(4)]
    batch = load("generic", path=DATA / "dense.h5ad", label="batch")
    assert batch.labels.tolist() == [0, 1] * 6 and batch.label_names == ["0", "1"]
    pca = load("generic", path=DATA / "dense.h5ad", label="cell_type", features="X_pca")
    np.testing.assert_array_equal(pca.X, expected[:, :2] * 2)
    assert pca.feature_names == ["feature 0", "feature 1"]
    counts = load("generic", path=DATA / "dense.h5ad", label="name", features="counts")
    np.testing.assert_array_equal(counts.X, np.abs(expected) * 10)
    assert counts.n_cohorts == 12
    with pytest.raises(ValueError, match=r"dense.h5ad: no obs column 'species' .*\['cell_type', 'batch', 'name'\]"):
        load("generic", path=DATA / "dense.h5ad", label="species")
    with pytest.raises(ValueError, match=r"no matrix 'umap'; .* \['counts', 'X_pca'\]"):
        load("generic", path=DATA / "dense.h5ad", label="cell_type", features="umap")
    with pytest.raises(ValueError, match=r"sparse.h5ad: 1 of 12 rows have NaN or missing values .*rows \[3\]"):
        load("generic", path=DATA / "sparse.h5ad", label="cell_type")
    sparse = load("generic", path=DATA / "sparse.h5ad", label="batch")
    np.testing.assert_array_equal(sparse.X, np.where(expected > 0, expected, 0))
    (tmp_path / "x.h5ad").write_text("no hdf5")
    with pytest.raises(ValueError, match="x.h5ad: not an HDF5"):
        load("generic", path=tmp_path / "x.h5ad", label="cell_type")


# ---------------------------------------------------------------------------------- fetched files


def test_source_file_name_drops_query_and_decodes():
    assert source_file_name("https://zenodo.org/records/1/files/my%20data.csv?download=1") == "my data.csv"
    assert source_file_name("https://figshare.com/ndownloader/files/123?private_link=x", "cells.h5ad") == "cells.h5ad"
    assert source_file_name("file:///srv/d/a.tsv#frag") == "a.tsv"
    with pytest.raises(ValueError, match=r"names no file\): give source.filename"):
        source_file_name("https://example.org/")
    with pytest.raises(ValueError, match="must be an http"):
        source_file_name("data/mine.csv")
    with pytest.raises(ValueError, match="plain file name"):
        source_file_name("https://example.org/x", "sub/x.csv")


def test_url_with_query_is_fetched_and_loaded_under_one_name(tmp_path, monkeypatch):
    """The fetch step saves the file, and the dataset step reads it, under the same derived name."""
    www = tmp_path / "www"
    www.mkdir()
    iris_like().to_csv(www / "my data.csv", index=False)
    url = (www / "my data.csv").as_uri() + "?download=1"
    assert "%20" in url
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    config = base_config({"mine": {"loader": "generic", "params": {"label": "kind"},
                                   "source": {"url": url, "sha256": sha(www / "my data.csv")}}})
    validate_config(config)
    plan = Plan(config)
    assert plan.raw_keys_for("mine") == ["mine"]
    assert plan.loader_params("mine")["path"] == "data/raw/mine/my data.csv"
    cmd_fetch(argparse.Namespace(spec=json.dumps(plan.fetch_spec("mine")), mirrors="[]", dest="data/raw/mine"))
    assert sorted(p.name for p in (work / "data/raw/mine").iterdir()) == [MANIFEST, "my data.csv"]
    cmd_dataset(argparse.Namespace(name="mine", loader="generic", raw=None, out="mine.npz",
                                   params=json.dumps(plan.loader_params("mine"))))
    assert Dataset.load("mine.npz").X.shape == (12, 2)

    named = copy.deepcopy(config)
    named["datasets"]["mine"]["source"]["filename"] = "iris.csv"
    assert Plan(named).loader_params("mine")["path"] == "data/raw/mine/iris.csv"
    assert Plan(named).fetch_spec("mine")["filename"] == "iris.csv"
    bad = copy.deepcopy(config)
    bad["datasets"]["mine"]["source"]["url"] = "https://example.org/"
    with pytest.raises(ConfigError, match="config key datasets.mine.source: cannot tell a file name"):
        Plan(bad).loader_params("mine")
    bad["datasets"]["mine"]["source"]["url"] = "data/mine.csv"
    with pytest.raises(ConfigError, match="url"):
        validate_config(bad)


def test_raw_file_changed_after_download_is_refused(tmp_path):
    src = tmp_path / "d.csv"
    iris_like().to_csv(src, index=False)
    before = sha(src)
    got = fetch_file(src.as_uri(), before, tmp_path / "raw", mirrors=[], progress=False)
    assert load("generic", path=got, label="kind").n_samples == 12
    got.write_text(got.read_text().replace("x", "w", 1))
    after = sha(got)
    with pytest.raises(ChecksumError) as err:
        load("generic", path=got, label="kind")
    msg = str(err.value)
    assert str(got) in msg and before in msg and after in msg and f"delete {tmp_path / 'raw' / MANIFEST}" in msg


def test_loader_raw_dir_is_verified_against_its_manifest(tmp_path):
    raw = tmp_path / "compound"
    raw.mkdir()
    text = "".join(f"{i}.0\t{i % 3}.5\t{1 + i % 2}\n" for i in range(10))
    (raw / "Compound.txt").write_text(text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    (raw / MANIFEST).write_text(json.dumps({"files": {"Compound.txt": {"sha256": digest, "size": len(text)}}}))
    assert load("compound", raw_dir=raw).n_samples == 10
    (raw / "Compound.txt").write_text(text.replace("0.5", "0.6", 1))
    with pytest.raises(ChecksumError, match=rf"Compound.txt: sha256 [0-9a-f]{{64}}, but manifest.json recorded "
                                            rf"{digest}"):
        load("compound", raw_dir=raw)
    (raw / "Compound.txt").unlink()
    with pytest.raises(ChecksumError, match=r"Compound.txt: missing \(fetched with sha256"):
        verify_manifest(raw)
    (raw / MANIFEST).write_text("{")
    with pytest.raises(Exception, match="unreadable manifest"):
        verify_manifest(raw)
