"""Bad input, class "files and outputs": damaged, truncated or altered files the pipeline reads, outputs that
cannot be written, permissions, leftovers of a killed step and strict JSON scores. Each case shows the one
message (naming the file and what to do) or the correct result, and that nothing is written beside it."""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import stat
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cova.datasets import Dataset, load
from cova.embedding import Embedding
from cova.io import FileError, atomic_path, dumps_json, read_scores, save_npz_atomic, write_text_atomic

DATA = Path(__file__).resolve().parents[1] / "data"
SECRET = "SECRET-TOKEN-4711"


def small_dataset() -> Dataset:
    rng = np.random.default_rng(0)
    return Dataset(X=rng.normal(size=(20, 3)), labels=np.arange(20) % 2, label_names=["a", "b"],
                   meta={"source": "test"})


@pytest.fixture
def umask():
    """Set the process umask for one test, restoring it afterwards."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ------------------------------------------------------------------------------------ permissions

@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_get_the_permissions_of_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    write_text_atomic(tmp_path / "a.json", "{}\n")
    save_npz_atomic(tmp_path / "b.npz", x=np.zeros(2))
    small_dataset().save(tmp_path / "c.npz")
    assert [mode(tmp_path / f) for f in ("a.json", "b.npz", "c.npz")] == [expected] * 3


# ------------------------------------------------------------------------------------ leftovers

def test_a_killed_write_leaves_nothing_and_its_leftovers_are_removed_by_the_next(tmp_path):
    target = tmp_path / "processed" / "d.npz"
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"partial")
            raise KeyboardInterrupt
    assert list(target.parent.iterdir()) == []
    # what a SIGKILL leaves (no finally block runs): a hidden partial file of mkstemp's form
    stale = target.parent / ".d.npz.k1ll3d_x.npz"
    stale.write_bytes(b"partial")
    other = target.parent / ".e.npz.abcdefgh.npz"  # another file's temporary: not this write's business
    other.write_bytes(b"other")
    small_dataset().save(target)
    assert sorted(p.name for p in target.parent.iterdir()) == [".e.npz.abcdefgh.npz", "d.npz"]
    assert Dataset.load(target).n_samples == 20


# ------------------------------------------------------------------------------------ refused writes

@pytest.mark.parametrize("code, advice", [(errno.EACCES, "make the folder writable"),
                                          (errno.EROFS, "read-only"), (errno.ENOSPC, "disk is full")])
def test_a_refused_write_names_the_file_and_what_to_do(tmp_path, monkeypatch, code, advice):
    target = tmp_path / "results" / "scores.json"

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    with pytest.raises(FileError, match=rf"cannot write {target}: .*{advice}"):
        write_text_atomic(target, "{}")
    monkeypatch.undo()

    def full(self, data, *args, **kwargs):  # the disk fills up while the file is written
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(FileError, match=rf"cannot write {target}: .*{advice}"):
        write_text_atomic(target, "{}")
    assert list(target.parent.iterdir()) == []


def test_cli_reports_a_refused_write_in_one_line(tmp_path, monkeypatch, caplog):
    from cova import cli

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    small_dataset().save(tmp_path / "d.npz")
    monkeypatch.setattr("tempfile.mkstemp", refuse)
    assert cli.main(["datasets-table", "--datasets", str(tmp_path / "d.npz"), "--info", '[["d", "generic", ""]]',
                     "--csv", str(tmp_path / "t.csv"), "--html", str(tmp_path / "t.html")]) == 1
    assert f"cannot write {tmp_path / 't.csv'}" in caplog.text and "read-only" in caplog.text
    assert "Traceback" not in caplog.text


# ------------------------------------------------------------------------------------ damaged files

def damaged(tmp_path: Path, how: str) -> Path:
    path = tmp_path / "data" / "processed" / "d.npz"
    small_dataset().save(path)
    raw = path.read_bytes()
    if how == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif how == "flipped":  # one byte inside X's compressed data: zip's CRC (or zlib) notices
        with zipfile.ZipFile(path) as z:
            info = z.getinfo("X.npy")
        at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 20
        path.write_bytes(raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1:])
    elif how == "altered":  # a valid archive whose X was changed after it was written
        with np.load(path) as f:
            arrays = {k: f[k] for k in f.files}
        arrays["X"] = arrays["X"] + 1.0
        np.savez_compressed(path, **arrays)
    elif how == "not npz":
        path.write_text(f"password: {SECRET}\n")
    elif how == "missing array":
        with np.load(path) as f:
            arrays = {k: f[k] for k in f.files if k not in ("X", "sha256")}
        np.savez_compressed(path, **arrays)
    return path


@pytest.mark.parametrize("how, says", [("truncated", "damaged or truncated"), ("flipped", "damaged or truncated"),
                                       ("altered", "does not match the checksum stored with it"),
                                       ("not npz", "damaged or truncated"), ("missing array", "lacks the array 'X'")])
def test_a_damaged_processed_dataset_is_named_with_what_to_do(tmp_path, how, says):
    path = damaged(tmp_path, how)
    with pytest.raises(FileError) as info:
        Dataset.load(path)
    msg = str(info.value)
    assert msg.startswith(f"processed dataset {path}") and says in msg
    assert "delete it and run the workflow again" in msg
    assert SECRET not in msg and "\n" not in msg


def test_a_missing_processed_dataset_is_named(tmp_path):
    with pytest.raises(FileError, match=rf"processed dataset {tmp_path / 'nope.npz'} not found; run the workflow"):
        Dataset.load(tmp_path / "nope.npz")


def test_a_truncated_embedding_is_named(tmp_path):
    path = tmp_path / "embedding.npz"
    Embedding(Z=np.zeros((5, 2)), placed_prototypes=np.zeros((0, 2)), geometry="plane", extras={}, status="ok",
              runtime_s=0.1, method="pca", params={}).save(path)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(FileError, match=rf"embedding {path} is damaged or truncated .*delete it and run"):
        Embedding.load(path)


def test_damaged_h5ad_internals_name_the_file(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "cells.h5ad"
    shutil.copy(DATA / "dense.h5ad", path)
    with h5py.File(path, "r+") as f:
        del f["obs"]["cell_type"]["codes"]
    with pytest.raises(ValueError, match=rf"{path}: the .h5ad file is damaged or not laid out as anndata writes it"):
        load("generic", path=path, label="cell_type")


def test_inf_in_a_csv_names_file_row_line_and_column(tmp_path):
    path = tmp_path / "q.csv"
    rows = ["x,y,label"] + [f"{i},{i % 3},{'ab'[i % 2]}" for i in range(8)]
    rows[4] = "3,inf,b"
    rows[6] = "-inf,2,b"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError) as info:
        load("generic", path=path, label="label")
    msg = str(info.value)
    assert msg.startswith(f"{path}: 2 of 8 rows have NaN, infinite or missing values")
    assert "data rows [3, 5] (file lines [5, 7])" in msg and "infinite (inf or -inf) in ['x', 'y']" in msg


# ------------------------------------------------------------------------------------ strict JSON scores

def test_scores_are_strict_json_and_read_back_as_nan(tmp_path):
    record = {"status": "degenerate", "s_n": math.nan, "s_s": math.inf, "s_c": 0.5, "n_samples": 3}
    text = dumps_json(record)

    def refuse(name):
        raise AssertionError(f"not strict JSON: {name}")

    assert json.loads(text, parse_constant=refuse) == {**record, "s_n": None, "s_s": None}
    (tmp_path / "scores.json").write_text(text)
    back = read_scores(tmp_path / "scores.json")
    assert math.isnan(back["s_n"]) and math.isnan(back["s_s"]) and back["s_c"] == 0.5
    (tmp_path / "cut.json").write_text(text[:20])
    with pytest.raises(FileError, match=r"scores file .*cut.json is not valid JSON"):
        read_scores(tmp_path / "cut.json")


@pytest.mark.parametrize("text, label", [
    ("root:x:0:0:SECRET-ONE:/root:/bin/bash\nuser:x:1000:1000:SECRET-TWO:/home/user:/bin/sh\n", "label"),
    ("a,b,label\n1,2,x\n3,SECRET-ONE-THAT-IS-LONGER-THAN-A-TYPO,y\n5,6,x\n", "label"),
    ("-----BEGIN KEY SECRET-ONE-----,b\n1,2\n", "b"),
])
def test_a_config_pointed_at_a_file_that_is_no_table_never_prints_its_content(tmp_path, text, label):
    from cova.datasets import LOADERS

    path = tmp_path / "private.csv"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        LOADERS["generic"](path=str(path), label=label)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "SECRET" not in message, message
