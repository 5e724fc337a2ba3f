"""A user's own labelled data set from one file (``.npz``, ``.csv`` or ``.mat``): how a data set is added from the
config alone, e.g. ``datasets: {mine: {loader: generic, params: {path: data/mine.csv, label: species}}}``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .base import Dataset

FORMATS = ("npz", "csv", "mat")


def _as_strings(values: np.ndarray) -> np.ndarray:
    out = []
    for v in values:
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.ndarray):  # a MATLAB cell holding a char array
            v = v.ravel()[0] if v.size else ""
        out.append(str(v).strip())
    return np.array(out, dtype=str)


def encode_labels(values: Any, label_names: Sequence[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """Cohort indices ``0..c-1`` and names for raw label values.

    - String (or bytes, or MATLAB char/cell) labels: cohorts are the sorted unique strings; ``label_names`` must
      then be ``None``.
    - Numeric labels: cohorts are the sorted unique values. Names are ``label_names[value]`` when ``label_names``
      is given (values must then be integers in ``0..len(label_names)-1``), else the value itself (``"3"``
      for 3 or 3.0).
    """
    values = np.asarray(values)
    if values.dtype.kind in "OUSb":
        if label_names is not None:
            raise ValueError("label_names is only for integer labels; string labels name themselves")
        names, labels = np.unique(_as_strings(values.ravel()), return_inverse=True)
        return labels.astype(np.int64), [str(n) for n in names]
    values = values.ravel()
    uniq, labels = np.unique(values, return_inverse=True)
    integral = bool(np.all(uniq == np.round(uniq)))
    if label_names is not None:
        label_names = [str(n) for n in label_names]
        if not integral or uniq.min() < 0 or uniq.max() >= len(label_names):
            raise ValueError(f"with label_names ({len(label_names)} names) labels must be integers in "
                             f"0..{len(label_names) - 1}; got values from {uniq.min()} to {uniq.max()}")
        names = [label_names[int(u)] for u in uniq]
    else:
        names = [str(int(u)) if integral else str(u) for u in uniq]
    return labels.astype(np.int64), names


def _nan_rows(X: np.ndarray, label_missing: np.ndarray, where: str) -> None:
    bad = np.isnan(X).any(axis=1) | label_missing
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(f"{where}: {int(bad.sum())} of {len(bad)} rows have NaN or missing values (features or "
                         f"label), e.g. rows {rows[:5].tolist()}; clean or impute them first")


def _pick(arrays: dict[str, Any], name: str, what: str, path: Path) -> np.ndarray:
    if name not in arrays:
        avail = sorted(k for k in arrays if not k.startswith("__"))
        raise ValueError(f"{path}: no {what} array {name!r}; available: {avail}")
    return np.asarray(arrays[name])


def generic(path: str | os.PathLike, label: str, features: str | Sequence[str] | None = None,
            label_names: Sequence[str] | None = None, format: str | None = None) -> Dataset:
    """Load a labelled data set from ``path``.

    Formats (``format`` or, if ``None``, the file suffix):

    - ``npz``: array ``features`` (default ``"X"``, 2-D; 1-D is one feature) and array ``label``; read with
      ``allow_pickle=False``.
    - ``csv``: read with pandas (header row). ``label`` is the label column; ``features`` a list of columns
      (default: every other **numeric** column, in file order); non-numeric feature columns are refused.
    - ``mat``: ``scipy.io.loadmat`` (MATLAB ≤ v7.2); variables named as for ``npz``; label vectors of shape
      (n, 1) or (1, n) are flattened; char/cell labels are strings.

    Labels: see :func:`encode_labels` (string labels → sorted unique names; numeric labels → sorted unique
    values, named by ``label_names[value]`` if given). Rows with a NaN feature or a missing label raise
    ``ValueError`` naming how many rows. Constant features (zero range) carry no information and are
    **dropped**; ``meta["n_constant_dropped"]`` and ``meta["constant_dropped"]`` (column names, or indices for
    arrays) record them. If every feature is constant, ``ValueError``.
    """
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"{path}: unknown format {fmt!r}; allowed: {list(FORMATS)} (give format= or a suffix)")
    if not path.is_file():
        raise FileNotFoundError(f"generic dataset file {path} not found")
    if fmt == "csv":
        import pandas as pd

        df = pd.read_csv(path)
        if label not in df.columns:
            raise ValueError(f"{path}: no label column {label!r}; columns: {list(df.columns)}")
        if features is None:
            cols = [c for c in df.drop(columns=[label]).select_dtypes(include="number").columns]
        else:
            cols = [features] if isinstance(features, str) else list(features)
            absent = [c for c in cols if c not in df.columns]
            if absent:
                raise ValueError(f"{path}: feature columns {absent} not found; columns: {list(df.columns)}")
            non_num = [c for c in cols if not pd.api.types.is_numeric_dtype(df[c])]
            if non_num:
                raise ValueError(f"{path}: feature columns {non_num} are not numeric")
        if not cols:
            raise ValueError(f"{path}: no numeric feature columns besides {label!r}")
        X = df[cols].to_numpy(dtype=np.float64)
        y_missing = df[label].isna().to_numpy()
        _nan_rows(X, y_missing, str(path))
        y_raw = df[label].to_numpy()
        if df[label].dtype.kind not in "iufb":
            y_raw = y_raw.astype(str)
        feature_names: list[Any] = [str(c) for c in cols]
    else:
        if features is not None and not isinstance(features, str):
            raise ValueError(f"{fmt}: features must be the name of one 2-D array, got {features!r}")
        fname = features or "X"
        if fmt == "npz":
            with np.load(path, allow_pickle=False) as f:
                arrays = {k: f[k] for k in f.files}
        else:
            import scipy.io

            try:
                arrays = scipy.io.loadmat(path)
            except NotImplementedError as e:  # v7.3 files are HDF5
                raise ValueError(f"{path}: MATLAB v7.3 (HDF5) files are not supported; save with -v7 or use .npz"
                                 ) from e
        X = _pick(arrays, fname, "features", path).astype(np.float64)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2:
            raise ValueError(f"{path}: features {fname!r} must be 2-D, got shape {X.shape}")
        y_raw = _pick(arrays, label, "label", path)
        # (n,1)/(1,n) vectors and cells are flattened; a MATLAB char matrix arrives as n space-padded strings
        y_raw = np.char.strip(y_raw.ravel()) if y_raw.dtype.kind == "U" else y_raw.ravel()
        if len(y_raw) != X.shape[0]:
            raise ValueError(f"{path}: {X.shape[0]} feature rows but {len(y_raw)} labels")
        y_missing = np.isnan(y_raw) if y_raw.dtype.kind == "f" else np.zeros(len(y_raw), dtype=bool)
        _nan_rows(X, y_missing, str(path))
        feature_names = list(range(X.shape[1]))
    labels, names = encode_labels(y_raw, label_names)
    constant = np.ptp(X, axis=0) == 0 if len(X) else np.zeros(X.shape[1], dtype=bool)
    if constant.all():
        raise ValueError(f"{path}: all {X.shape[1]} features are constant")
    dropped = [feature_names[k] for k in np.flatnonzero(constant)]
    X = X[:, ~constant]
    return Dataset(X, labels, names, meta={
        "source": str(path), "format": fmt, "label": label,
        "features": [feature_names[k] for k in np.flatnonzero(~constant)] if fmt == "csv" else (features or "X"),
        "n_constant_dropped": len(dropped), "constant_dropped": dropped, "n_samples": int(len(labels))})
