"""Read the arrays a data set needs from an AnnData ``.h5ad`` file with h5py.

An ``.h5ad`` file is HDF5 laid out by AnnData's on-disk format (encoding version 0.1/0.2, written by anndata
0.7 and later): ``X`` is a dense dataset or a ``csr_matrix``/``csc_matrix`` group (``data``, ``indices``,
``indptr``, attribute ``shape``); ``obs`` and ``var`` are ``dataframe`` groups whose attribute ``_index`` names
the dataset of row names, and whose columns are datasets (numbers, ``string-array``), ``categorical`` groups
(``categories``, ``codes``; code -1 is missing) or ``nullable-*`` groups (``values``, ``mask``); ``layers`` and
``obsm`` hold further matrices. Only what the ``generic`` loader needs is read: one matrix, one ``obs`` column
and the row and column names. A sparse matrix is made dense (for many cells × genes, use a reduced ``obsm``
matrix such as ``X_pca``). anndata itself is not needed to read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import UserError

SPARSE = {"csr_matrix": sp.csr_matrix, "csc_matrix": sp.csc_matrix}


@dataclass
class H5adArrays:
    """What the loader takes from an ``.h5ad`` file: features, raw label values (``missing`` marks absent ones),
    and the names of the rows (``obs_names``) and of the feature columns (``None`` for an ``obsm`` matrix)."""

    X: np.ndarray
    labels: np.ndarray
    missing: np.ndarray
    sample_names: list[str]
    feature_names: list[str] | None


def _attr(node: Any, key: str, default: str = "") -> str:
    value = node.attrs.get(key, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def _strings(dataset: Any) -> np.ndarray:
    import h5py

    if h5py.check_string_dtype(dataset.dtype) is not None:
        return np.asarray(dataset.asstr()[()], dtype=str)
    return np.asarray(dataset[()])


def _matrix(node: Any, where: str, path: Path) -> np.ndarray:
    import h5py

    if isinstance(node, h5py.Dataset):
        return np.asarray(node[()], dtype=np.float64)
    kind = _attr(node, "encoding-type")
    if kind not in SPARSE:
        raise UserError(f"{path}: {where} has encoding {kind!r}; expected a dense array, csr_matrix or csc_matrix")
    shape = tuple(int(s) for s in node.attrs["shape"])
    matrix = SPARSE[kind]((node["data"][()], node["indices"][()], node["indptr"][()]), shape=shape)
    return matrix.toarray().astype(np.float64)


def _column(node: Any, name: str, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Values of one ``obs`` column and a mask of the missing ones."""
    import h5py

    if isinstance(node, h5py.Dataset):
        values = _strings(node)
        missing = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)
        return values, missing
    kind = _attr(node, "encoding-type")
    if kind == "categorical":
        categories = _strings(node["categories"])
        codes = np.asarray(node["codes"][()], dtype=np.int64)
        missing = codes < 0
        values = categories[np.where(missing, 0, codes)] if len(categories) else np.full(len(codes), "")
        return values, missing
    if kind.startswith("nullable-"):
        values = np.asarray(node["values"][()])
        return values, np.asarray(node["mask"][()], dtype=bool)
    raise UserError(f"{path}: obs column {name!r} has encoding {kind!r}, which cannot be read as labels")


def read_h5ad(path: Path, label: str | None, features: str | None) -> H5adArrays:
    """Features ``X`` (or the ``layers``/``obsm`` matrix named ``features``) and the ``obs`` column ``label`` (zeros
    when ``label`` is ``None``: data without labels)."""
    try:
        import h5py
    except ImportError as e:
        raise ImportError(f"{path}: reading .h5ad files needs h5py; install it with pip install h5py (or "
                          f"pip install '.[h5ad]' in this repository)") from e
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise UserError(f"{path}: not an HDF5 (.h5ad) file ({e})") from e
    try:
        with f:
            if "obs" not in f or "var" not in f or _attr(f["obs"], "encoding-type") != "dataframe":
                raise UserError(f"{path}: not an AnnData file of anndata 0.7 or later (needs obs and var dataframes); "
                                 "re-save it with a current anndata (adata.write_h5ad)")
            obs = f["obs"]
            index = _attr(obs, "_index", "_index")
            columns = [str(c) for c in obs.attrs.get("column-order", [])]
            if label is not None and label not in columns:
                raise UserError(f"{path}: no obs column {label!r} for the labels; obs columns: {columns}")
            sample_names = [str(s) for s in _strings(obs[index])]
            if label is None:
                labels, missing = np.zeros(len(sample_names), dtype=np.int64), np.zeros(len(sample_names), dtype=bool)
            else:
                labels, missing = _column(obs[label], label, path)
            var_names = [str(s) for s in _strings(f["var"][_attr(f["var"], "_index", "_index")])]
            if (features is None or features == "X") and "X" in f:
                X, names, where = _matrix(f["X"], "X", path), var_names, "X"
            elif "layers" in f and features in f["layers"]:
                X, names, where = _matrix(f["layers"][features], f"layers/{features}", path), var_names, features
            elif "obsm" in f and features in f["obsm"]:
                X, names, where = _matrix(f["obsm"][features], f"obsm/{features}", path), None, features
            else:
                found = sorted(f["layers"]) if "layers" in f else []
                found += sorted(f["obsm"]) if "obsm" in f else []
                raise UserError(f"{path}: no matrix {features or 'X'!r}; features may be 'X' or one of the layers "
                                 f"and obsm matrices {found}")
    except (KeyError, OSError, TypeError, IndexError, AttributeError) as err:  # h5py on damaged or odd internals
        reason = str(err).split("\n")[0][:200] or type(err).__name__
        raise UserError(f"{path}: the .h5ad file is damaged or not laid out as anndata writes it ({reason}); "
                         "re-save it with a current anndata (adata.write_h5ad) or restore it from its source") from None
    if X.ndim != 2 or X.shape[0] != len(labels):
        raise UserError(f"{path}: {where} has shape {X.shape}, but obs has {len(labels)} rows")
    return H5adArrays(X, labels, missing, sample_names, names)


__all__ = ["H5adArrays", "read_h5ad"]
