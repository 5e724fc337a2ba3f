"""Results back to users' tools: the embeddings of runs as a table (CSV, parquet) and as AnnData's ``.h5ad``.

**Tables.** One row per embedded row: ``id`` (the dataset's row name, :attr:`cova.embedding.Embedding.ids`),
``label`` (the cohort name), the coordinates ``<name>_1 … <name>_k`` and every per-row extra output the estimator
declares in ``extra_outputs`` (an array whose first axis has one entry per row), flattened: ``<name>_<extra>``
for one value per row, ``<name>_<extra>_<j>`` (j = 1, 2, …) per further axis; the axis of the input features of
an output named ``feature_*`` (featMAP's ``feature_importance`` (m, n) and ``feature_loadings`` (m, n, 2)) is
labelled by the feature names instead. Several runs go into one table only when they embed the same rows.
Parquet is written by pandas through pyarrow.

**AnnData.** For a dataset loaded from an ``.h5ad`` file (the ``generic`` loader records its path as
``meta["source"]``), the file is copied and every run is added to it; other data get a minimal AnnData file:
``X``, ``obs`` (index: the row names; column ``label``: the cohorts, categorical), ``var`` (index: the feature
names). Each run adds ``obsm["X_<name>"]`` (n_obs, k), its other per-row outputs ``obsm["<name>_<extra>"]``,
outputs over the input features (``feature_*``) re-indexed to the file's variables (``obsm["<name>_feature_importance"]``
(n_obs, n_vars), ``obsm["<name>_feature_loadings"]`` (n_obs, n_vars, 2) for featMAP, Eq. 3 and Sec. 3.2 of its
paper) when the run's input features are variables of the file, and a ``components`` output (scikit-learn's
``components_`` (p, n_features): PCA's and featMAP's truncated SVD) as the per-feature loadings
``varm["<name>_components"]`` (n_vars, p), as scanpy's ``varm["PCs"]``. Rows a run did not embed (a class
subset, a largest component) are NaN; variables a run did not use (constant columns the loader dropped) are NaN.
Everything is written with h5py in anndata's on-disk encoding (arrays: ``encoding-type`` ``array``,
``encoding-version`` ``0.2.0``), so ``anndata.read_h5ad`` opens the file; anndata itself is not needed.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..datasets.base import Dataset
from ..embedding import Embedding
from ..errors import UserError
from ..io import atomic_path

log = logging.getLogger(__name__)

#: Output formats by file suffix.
FORMATS = {".csv": "csv", ".parquet": "parquet", ".h5ad": "h5ad"}
#: Prefix of the extra outputs whose second axis holds the input features (featMAP's importance and loadings).
FEATURE_PREFIX = "feature_"
#: The extra output holding per-feature loadings in rows (scikit-learn's ``components_``).
COMPONENTS = "components"
ARRAY = {"encoding-type": "array", "encoding-version": "0.2.0"}
STRINGS = {"encoding-type": "string-array", "encoding-version": "0.2.0"}
DICT = {"encoding-type": "dict", "encoding-version": "0.1.0"}


class ExportError(UserError):
    """An export that cannot be written as asked (a user error: the message says what to change)."""


@dataclass
class ExportRun:
    """One run to export: its ``name`` (the prefix of its columns and keys), its embedding, the row names
    (``ids``), the cohort name of every row (``labels``) and the names of its input features (``None`` when the
    run had no feature matrix)."""

    name: str
    embedding: Embedding
    ids: list[str]
    labels: list[str]
    feature_names: list[str] | None = None

    def __post_init__(self) -> None:
        n = self.embedding.Z.shape[0]
        if len(self.ids) != n or len(self.labels) != n:
            raise ExportError(f"run {self.name!r}: {n} embedded rows but {len(self.ids)} ids and {len(self.labels)} "
                              "labels")

    def row_extras(self) -> dict[str, np.ndarray]:
        """The extra outputs with one entry per embedded row."""
        n = self.embedding.Z.shape[0]
        return {key: np.asarray(a) for key, a in self.embedding.extras.items()
                if np.ndim(a) >= 1 and np.shape(a)[0] == n}

    def on_features(self, key: str, array: np.ndarray, axis: int) -> bool:
        """Whether axis ``axis`` of the extra output ``key`` holds the run's input features."""
        return (self.feature_names is not None and array.ndim > axis
                and array.shape[axis] == len(self.feature_names)
                and (key.startswith(FEATURE_PREFIX) or key == COMPONENTS))


def output_format(path: str | os.PathLike) -> str:
    """The format a path's suffix picks (:data:`FORMATS`)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ExportError(f"{path}: unknown export format {suffix or '(no suffix)'!r}; the suffix picks the format, "
                          f"one of {list(FORMATS)}")
    return FORMATS[suffix]


def _axis_labels(run: ExportRun, key: str, array: np.ndarray) -> list[list[str]]:
    labels = []
    for axis in range(1, array.ndim):
        names = run.feature_names if run.on_features(key, array, axis) else None
        if names is None or len(set(names)) < len(names):
            names = [str(j + 1) for j in range(array.shape[axis])]
        labels.append(names)
    return labels


def run_table(run: ExportRun) -> pd.DataFrame:
    """The table of one run: ``id``, ``label``, coordinates ``<name>_1..k`` and the per-row extra outputs
    flattened (module docstring)."""
    Z = run.embedding.Z
    columns: dict[str, Any] = {"id": run.ids, "label": run.labels}
    columns.update({f"{run.name}_{j + 1}": Z[:, j] for j in range(Z.shape[1])})
    for key, array in run.row_extras().items():
        if array.ndim == 1:
            columns[f"{run.name}_{key}"] = array
            continue
        flat = array.reshape(array.shape[0], -1)
        names = pd.MultiIndex.from_product(_axis_labels(run, key, array)).map("_".join)
        columns.update({f"{run.name}_{key}_{name}": flat[:, j] for j, name in enumerate(names)})
    return pd.DataFrame(columns)


def runs_table(runs: Sequence[ExportRun]) -> pd.DataFrame:
    """One table for runs that embed the same rows (same ids in the same order): the first run's ``id`` and
    ``label``, a run's own ``<name>_label`` where its cohorts differ, then every run's columns."""
    if not runs:
        raise ExportError("nothing to export: give at least one embedding")
    _unique_names(runs)
    first = runs[0]
    tables = [run_table(first)]
    for run in runs[1:]:
        if run.ids != first.ids:
            raise ExportError(f"runs {first.name!r} and {run.name!r} embed different rows; a table holds runs of the "
                              "same rows: export them to separate files (an .h5ad file aligns them by row name)")
        table = run_table(run).drop(columns="id")
        if run.labels == first.labels:
            table = table.drop(columns="label")
        else:
            table = table.rename(columns={"label": f"{run.name}_label"})
        tables.append(table)
    table = pd.concat(tables, axis=1)
    duplicated = table.columns[table.columns.duplicated()].tolist()
    if duplicated:
        raise ExportError(f"the runs' names give the same column twice: {duplicated[:5]}; choose other names")
    return table


def write_table(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """``table`` as CSV (floats written exactly, NaN as ``nan``) or parquet (pyarrow), by ``path``'s suffix."""
    fmt = output_format(path)
    if fmt == "parquet" and find_spec("pyarrow") is None:
        raise ExportError(f"{path}: writing parquet needs pyarrow; install it with pip install pyarrow")
    with atomic_path(path) as tmp:
        if fmt == "csv":
            table.to_csv(tmp, index=False, lineterminator="\n", na_rep="nan")
        elif fmt == "parquet":
            table.to_parquet(tmp, index=False)
        else:
            raise ExportError(f"{path}: a table is written as .csv or .parquet, not {fmt}")


def _unique_names(runs: Sequence[ExportRun]) -> None:
    names = [run.name for run in runs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ExportError(f"every exported run needs its own name; repeated: {repeated}")


# ------------------------------------------------------------------------------------------------------------------
# .h5ad
# ------------------------------------------------------------------------------------------------------------------
def h5ad_source(dataset: Dataset) -> Path | None:
    """The ``.h5ad`` file a dataset was loaded from (``meta["source"]`` of the ``generic`` loader), else ``None``."""
    if dataset.meta.get("format") != "h5ad":
        return None
    path = Path(str(dataset.meta.get("source", "")))
    if not path.is_file():
        raise ExportError(f"the dataset was loaded from {path}, which is gone; the .h5ad export copies it, so put it "
                          "back (or rebuild the dataset from where it is now)")
    return path


def _set(node: Any, attrs: dict[str, Any]) -> None:
    for key, value in attrs.items():
        node.attrs[key] = value


def _write_array(group: Any, key: str, value: np.ndarray) -> None:
    if key in group:
        log.warning("replacing %s/%s of the source file", group.name, key)
        del group[key]
    _set(group.create_dataset(key, data=value), ARRAY)


def _write_strings(group: Any, key: str, values: Sequence[str]) -> None:
    import h5py

    _set(group.create_dataset(key, data=np.array(list(values), dtype=object), dtype=h5py.string_dtype()), STRINGS)


def _dict_group(parent: Any, key: str) -> Any:
    group = parent.require_group(key)
    if "encoding-type" not in group.attrs:
        _set(group, DICT)
    return group


def _dataframe(parent: Any, key: str, index: Sequence[str], categorical: dict[str, Sequence[str]]) -> None:
    """A ``dataframe`` group: string index ``_index`` and categorical columns (value per row)."""
    group = parent.create_group(key)
    _set(group, {"encoding-type": "dataframe", "encoding-version": "0.2.0", "_index": "_index",
                 "column-order": np.array(list(categorical), dtype=object) if categorical else np.array([])})
    _write_strings(group, "_index", index)
    for column, values in categorical.items():
        categories, codes = np.unique(np.asarray(list(values), dtype=str), return_inverse=True)
        node = group.create_group(column)
        _set(node, {"encoding-type": "categorical", "encoding-version": "0.2.0", "ordered": False})
        _write_strings(node, "categories", categories.tolist())
        _set(node.create_dataset("codes", data=codes.astype(np.int32)), ARRAY)


def _write_minimal(f: Any, dataset: Dataset) -> None:
    """The AnnData skeleton of a dataset that did not come from an ``.h5ad`` file."""
    _set(f, {"encoding-type": "anndata", "encoding-version": "0.1.0"})
    _set(f.create_dataset("X", data=dataset.X), ARRAY)
    _dataframe(f, "obs", dataset.sample_names, {"label": [dataset.label_names[c] for c in dataset.labels]})
    _dataframe(f, "var", dataset.feature_names, {})
    for key in ("obsm", "varm", "obsp", "varp", "layers", "uns"):
        _dict_group(f, key)


def _index(f: Any, key: str, path: Path) -> list[str]:
    frame = f[key]
    name = frame.attrs.get("_index", "_index")
    name = name.decode() if isinstance(name, bytes) else str(name)
    if name not in frame:
        raise ExportError(f"{path}: {key} has no index {name!r}; re-save it with a current anndata")
    return [v.decode() if isinstance(v, bytes) else str(v) for v in frame[name][()]]


def _positions(names: list[str], wanted: list[str], what: str, run: str) -> np.ndarray:
    """Positions of ``wanted`` among ``names`` (the same list gives the identity)."""
    if wanted == names:
        return np.arange(len(names))
    where: dict[str, int] = {}
    for i, name in enumerate(names):
        where.setdefault(name, i)
    if len(where) < len(names):
        raise ExportError(f"run {run!r} holds other {what}s than the file, and the file's {what} names are not "
                          "unique, so they cannot be matched; give the rows unique names")
    missing = [w for w in wanted if w not in where]
    if missing:
        raise ExportError(f"run {run!r}: {len(missing)} {what}s are not in the file, e.g. {missing[:3]}; was it "
                          "run on another dataset?")
    return np.array([where[w] for w in wanted], dtype=np.int64)


def _scatter(positions: np.ndarray, values: np.ndarray, size: int, axis: int = 0) -> np.ndarray:
    """``values`` placed at ``positions`` along ``axis`` of a NaN array with ``size`` entries on that axis."""
    shape = list(values.shape)
    shape[axis] = size
    out = np.full(shape, np.nan)
    index: list[Any] = [slice(None)] * values.ndim
    index[axis] = positions
    out[tuple(index)] = values
    return out


def _add_run(f: Any, run: ExportRun, obs: list[str], var: list[str], path: Path) -> None:
    rows = _positions(obs, run.ids, "row", run.name)
    obsm, varm = _dict_group(f, "obsm"), _dict_group(f, "varm")
    _write_array(obsm, f"X_{run.name}", _scatter(rows, run.embedding.Z, len(obs)))
    columns = None
    if run.feature_names is not None and set(run.feature_names) <= set(var):
        columns = _positions(var, run.feature_names, "variable", run.name)
    for key, array in run.row_extras().items():
        if run.on_features(key, array, 1):
            if columns is None:
                log.info("run %s: %s not written (its %d input features are not the file's variables)", run.name,
                         key, array.shape[1])
                continue
            array = _scatter(columns, array.astype(np.float64), len(var), axis=1)
        _write_array(obsm, f"{run.name}_{key}", _scatter(rows, array.astype(np.float64), len(obs)))
    loadings = run.embedding.extras.get(COMPONENTS)
    if loadings is not None and loadings.shape[0] and run.on_features(COMPONENTS, loadings, 1):
        if columns is None:
            log.info("run %s: components not written (its input features are not the file's variables)", run.name)
        else:
            _write_array(varm, f"{run.name}_{COMPONENTS}", _scatter(columns, np.asarray(loadings, dtype=np.float64).T,
                                                                    len(var)))


def write_h5ad(dataset: Dataset, runs: Sequence[ExportRun], path: str | os.PathLike) -> None:
    """The dataset's ``.h5ad`` (a copy of its source file, or a minimal AnnData file) with every run added
    (module docstring)."""
    import h5py

    if output_format(path) != "h5ad":
        raise ExportError(f"{path}: an AnnData file is written as .h5ad")
    _unique_names(runs)
    source = h5ad_source(dataset)
    with atomic_path(path) as tmp:
        if source is not None:
            shutil.copyfile(source, tmp)
        with h5py.File(tmp, "r+" if source is not None else "w") as f:
            if source is None:
                _write_minimal(f, dataset)
            elif "obs" not in f or "var" not in f:
                raise ExportError(f"{source}: not an AnnData file (no obs and var); re-save it with anndata")
            obs, var = _index(f, "obs", Path(path)), _index(f, "var", Path(path))
            for run in runs:
                _add_run(f, run, obs, var, Path(path))


def export(dataset: Dataset, runs: Sequence[ExportRun], path: str | os.PathLike) -> None:
    """Write the runs to ``path``; its suffix picks the format: ``.csv`` / ``.parquet`` (:func:`runs_table`) or
    ``.h5ad`` (:func:`write_h5ad`)."""
    if output_format(path) == "h5ad":
        write_h5ad(dataset, runs, path)
    else:
        write_table(runs_table(runs), path)


__all__ = ["ExportError", "ExportRun", "FORMATS", "export", "h5ad_source", "output_format", "run_table",
           "runs_table", "write_h5ad", "write_table"]
