"""A user's own data set from one file: how a data set is added from the config alone, e.g.
``datasets: {mine: {loader: generic, params: {path: data/mine.csv, label: species}}}``; without ``label`` the data
have no labels (one cohort, ``unlabelled``): the methods and scores that need none run on them.

Formats: delimited text (``.csv``, ``.tsv``, ``.txt``, ``.dat``; comma, tab or whitespace separated, with or
without a header row), ``.npz``, MATLAB ``.mat`` and AnnData ``.h5ad``. Every refusal names the file and what in
it is wrong (column, row, token or array) and how to fix it.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..constraints import NON_EMPTY_STR, ListOf, StrOptions, declare, integer
from ..errors import UserError
from .base import Dataset
from .fetch import verify_listed

FORMATS = ("npz", "csv", "mat", "h5ad")
#: File suffix -> (format, default separator) for delimited text.
TEXT_SUFFIXES = {"csv": "comma", "tsv": "tab", "txt": "whitespace", "dat": "whitespace"}
#: ``sep`` names -> the separator pandas reads.
SEPARATORS = {"comma": ",", "tab": "\t", "whitespace": r"\s+", "semicolon": ";"}

Column = str | int
#: The one cohort name of data read without a label column.
UNLABELLED = "unlabelled"


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
            raise UserError("label_names is only for integer labels; string labels name themselves")
        names, labels = np.unique(_as_strings(values.ravel()), return_inverse=True)
        return labels.astype(np.int64), [str(n) for n in names]
    values = values.ravel()
    uniq, labels = np.unique(values, return_inverse=True)
    integral = bool(np.all(uniq == np.round(uniq)))
    if label_names is not None:
        label_names = [str(n) for n in label_names]
        if not integral or uniq.min() < 0 or uniq.max() >= len(label_names):
            raise UserError(f"with label_names ({len(label_names)} names) labels must be integers in "
                             f"0..{len(label_names) - 1}; got values from {uniq.min()} to {uniq.max()}")
        names = [label_names[int(u)] for u in uniq]
    else:
        names = [str(int(u)) if integral else str(u) for u in uniq]
    return labels.astype(np.int64), names


def _nan_rows(X: np.ndarray, label_missing: np.ndarray, where: str, rows: str = "rows",
              first_line: int | None = None, columns: Sequence[Any] | None = None) -> None:
    """Refuse rows with a NaN or infinite feature or a missing label, naming the first few (and, for text, their
    lines and the columns that have gaps or infinities)."""
    nan, inf = np.isnan(X), np.isinf(X)
    bad = nan.any(axis=1) | inf.any(axis=1) | label_missing
    if not bad.any():
        return
    idx = np.flatnonzero(bad)[:5].tolist()
    at = f"e.g. {rows} {idx}"
    if first_line is not None:
        at += f" (file lines {[i + first_line for i in idx]})"
    if columns is not None:
        gaps = [str(columns[j]) for j in np.flatnonzero(nan.any(axis=0))]
        if label_missing.any():
            gaps.append("the label")
        if gaps:
            at += f"; missing in {gaps}"
        infinite = [str(columns[j]) for j in np.flatnonzero(inf.any(axis=0))]
        if infinite:
            at += f"; infinite (inf or -inf) in {infinite}"
    what = "NaN or missing values (features or label)" if not inf.any() else (
        "NaN, infinite or missing values (features or label)")
    raise UserError(f"{where}: {int(bad.sum())} of {len(bad)} rows have {what}, {at}; clean or impute them first "
                     "(an infinite value is no coordinate: replace it or drop the row)")


# ------------------------------------------------------------------------------------------ delimited text


def _read_text(path: Path, sep: str, header: bool, na_values: Sequence[str] | None) -> Any:
    import pandas as pd

    try:
        df = pd.read_csv(path, sep=SEPARATORS[sep], header=0 if header else None,
                         na_values=list(na_values) if na_values else None)
    except pd.errors.EmptyDataError:
        raise UserError(f"{path}: the file is empty (no header and no data rows)") from None
    except pd.errors.ParserError as e:
        raise UserError(f"{path}: cannot be read as {sep}-separated text ({str(e).strip()}); check sep "
                         f"({', '.join(SEPARATORS)}) and header") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not a UTF-8 text file ({e}); is the format right?") from None
    if len(df) == 0:
        raise UserError(f"{path}: the file has a header row ({_columns(df)}) but no data rows" if header else f"{path}: the file has no data rows")
    return df


#: Longest column name or token a message quotes from a data file.
MAX_QUOTED = 32


def _columns(df: Any) -> str:
    """The columns of ``df`` as a message may show them. A message quotes nothing else of a data file (a config
    may point at any file, and its log may be shared): the names only when they look like a table's header (at least
    two columns, none longer than :data:`MAX_QUOTED` characters), else their number and what to check."""
    names = [str(c) for c in df.columns]
    if len(names) >= 2 and all(len(c) <= MAX_QUOTED for c in names):
        return f"{len(names)} columns: {names[:20]}" + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return (f"{len(names)} column(s), whose header is not shown since it does not look like column names; is this "
            "a table, and are sep and header right?")


def _resolve(df: Any, key: Any, header: bool, what: str, path: Path) -> Any:
    """The column of ``df`` that ``key`` names: an int is a 0-based position (-1 is the last), a str a name."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        n = df.shape[1]
        if not -n <= key < n:
            raise UserError(f"{path}: {what} column index {key} is out of range: the file has {n} columns "
                             f"(0..{n - 1}, or -1 for the last)")
        return df.columns[int(key)]
    if not isinstance(key, str):
        raise UserError(f"{path}: a {what} column is given by name (str) or 0-based index (int), got {key!r}")
    if not header:
        raise UserError(f"{path}: the file has no header row (header: false), so give the {what} column by its "
                         f"0-based index (-1 for the last), not by name {key!r}")
    if key not in df.columns:
        raise UserError(f"{path}: no {what} column {key!r}; {_columns(df)}")
    return key


def _describe(col: Any, header: bool) -> str:
    return f"column {col!r}" if header else f"column {col} (0-based)"


def _bad_token(df: Any, col: Any) -> tuple[int, str, int] | None:
    """The first entry of a non-numeric column that is not a number: (row, token, count of such entries)."""
    import pandas as pd

    raw = df[col]
    coerced = pd.to_numeric(raw, errors="coerce")
    bad = (coerced.isna() & raw.notna()).to_numpy()
    if not bad.any():
        return None
    first = int(np.flatnonzero(bad)[0])
    return first, str(raw.iloc[first]), int(bad.sum())


def _token_error(path: Path, df: Any, col: Any, header: bool, found: tuple[int, str, int]) -> ValueError:
    row, token, count = found
    line = row + 1 + int(header)
    more = f" and {count - 1} more such entries" if count > 1 else ""
    if len(token) > MAX_QUOTED or "columns: [" not in _columns(df):  # not a table's typo: quote nothing
        return ValueError(f"{path}: feature {_describe(col, header)} is not numeric: data row {row} (file line "
                          f"{line}) holds text{more}; correct the file or leave the column out of features")
    return ValueError(f"{path}: feature {_describe(col, header)} is not numeric: data row {row} (file line {line}) "
                      f"holds the token {token!r}{more}. If {token!r} marks a missing value, give "
                      f"na_values: [{token!r}] (rows with missing values are then refused, naming them); otherwise "
                      "correct the file or leave the column out of features")


def _text_features(df: Any, label_col: Any, features: Any, header: bool, path: Path) -> tuple[list[Any], list[Any]]:
    """Feature columns (in file order unless listed) and the columns left out as not numeric."""
    import pandas as pd

    if features is None:
        cols, ignored = [], []
        for col in df.columns:
            if col == label_col:
                continue
            if pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col]):
                cols.append(col)
                continue
            found = _bad_token(df, col)
            if found is not None and found[2] < df[col].notna().sum():  # some entries are numbers: a typo, not text
                raise _token_error(path, df, col, header, found)
            ignored.append(col)
        if not cols:
            raise UserError(f"{path}: no numeric feature columns besides the label {_describe(label_col, header)}"
                             + (f" (not numeric: {[str(c) for c in ignored]})" if ignored else ""))
        return cols, ignored
    listed = [features] if isinstance(features, (str, int)) else list(features)
    absent = [c for c in listed if isinstance(c, str) and header and c not in df.columns]
    if absent:
        raise UserError(f"{path}: feature columns {absent} not found; {_columns(df)}")
    cols = [_resolve(df, c, header, "feature", path) for c in listed]
    for col in cols:
        if not pd.api.types.is_numeric_dtype(df[col]) or pd.api.types.is_bool_dtype(df[col]):
            found = _bad_token(df, col)
            if found is None:
                raise UserError(f"{path}: feature {_describe(col, header)} is not numeric")
            raise _token_error(path, df, col, header, found)
    return cols, []


def _from_text(path: Path, label: Any, features: Any, sep: str, header: bool,
               na_values: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray, list[Any], dict[str, Any]]:
    df = _read_text(path, sep, header, na_values)
    label_col = None if label is None else _resolve(df, label, header, "label", path)
    cols, ignored = _text_features(df, label_col, features, header, path)
    X = df[cols].to_numpy(dtype=np.float64)
    y_missing = np.zeros(len(df), dtype=bool) if label_col is None else df[label_col].isna().to_numpy()
    _nan_rows(X, y_missing, str(path), "data rows", 1 + int(header), [str(c) for c in cols])
    if label_col is None:
        y_raw = np.zeros(len(df), dtype=np.int64)
    else:
        y_raw = df[label_col].to_numpy()
        if df[label_col].dtype.kind not in "iufb":
            y_raw = y_raw.astype(str)
    names: list[Any] = [str(c) for c in cols] if header else [int(c) for c in cols]
    extra: dict[str, Any] = {}
    if ignored:
        extra["non_numeric_ignored"] = [str(c) if header else int(c) for c in ignored]
    return X, y_raw, names, extra


# ------------------------------------------------------------------------------------------ arrays


def _npz_array(arrays: Any, name: str, what: str, path: Path, label: str) -> np.ndarray:
    if name not in arrays.files:
        raise UserError(f"{path}: no {what} array {name!r}; available: {sorted(arrays.files)}")
    try:
        return np.asarray(arrays[name])
    except ValueError as e:
        if "allow_pickle" not in str(e):
            raise
        raise UserError(f"{path}: array {name!r} holds pickled Python objects (dtype object), which are never "
                         f"loaded (unpickling can run code). Re-save it with plain arrays, e.g. "
                         f"np.savez('{path.name}', X=np.asarray(X, dtype=float), "
                         f"{label}=np.asarray(labels, dtype=str))") from None


def _from_arrays(path: Path, fmt: str, label: str | None, fname: str) -> tuple[np.ndarray, np.ndarray]:
    """Features ``fname`` and labels ``label`` (zeros when ``None``: data without labels) of an npz or mat file."""
    if fmt == "npz":
        try:
            arrays = np.load(path, allow_pickle=False)
        except (zipfile.BadZipFile, OSError, ValueError) as e:
            raise UserError(f"{path}: not an .npz archive ({e}); write it with np.savez") from None
        with arrays:
            X = _npz_array(arrays, fname, "features", path, label or "labels")
            y = (np.zeros(len(X), dtype=np.int64) if label is None
                 else _npz_array(arrays, label, "label", path, label))
        return X, y
    import scipy.io

    try:
        mat = scipy.io.loadmat(path)
    except NotImplementedError as e:  # v7.3 files are HDF5
        raise UserError(f"{path}: MATLAB v7.3 (HDF5) files are not supported; save with -v7 or use .npz") from e
    for name, what in ((fname, "features"), (label, "label")):
        if name is not None and name not in mat:
            avail = sorted(k for k in mat if not k.startswith("__"))
            raise UserError(f"{path}: no {what} array {name!r}; available: {avail}")
    X = np.asarray(mat[fname])
    return X, np.zeros(len(X), dtype=np.int64) if label is None else np.asarray(mat[label])


def _format(path: Path, format: str | None, sep: str | None) -> tuple[str, str | None]:
    suffix = path.suffix.lstrip(".").lower()
    fmt = (format or ("csv" if suffix in TEXT_SUFFIXES else suffix)).lower()
    if fmt not in FORMATS:
        raise UserError(f"{path}: unknown format {fmt!r}; allowed: {list(FORMATS)} (give format= or a suffix: "
                         f"{sorted(set(FORMATS) - {'csv'} | set(TEXT_SUFFIXES))})")
    if fmt != "csv":
        if sep is not None:
            raise UserError(f"{path}: sep is only for delimited text (format csv), not {fmt}")
        return fmt, None
    return fmt, sep or TEXT_SUFFIXES.get(suffix, "comma")


#: A column: a name, or a 0-based index (negative from the end).
_COLUMN = [str, integer()]
#: A list of strings (possibly empty).
_STRINGS = ListOf([str], min_items=0, description="a list of strings")


@declare({"path": [*NON_EMPTY_STR, os.PathLike], "label": [*_COLUMN, None],
          "features": [*_COLUMN, None, ListOf(_COLUMN, description="a non-empty list of column names or indices")],
          "label_names": [_STRINGS, None], "format": [StrOptions(set(FORMATS)), None],
          "sep": [StrOptions(set(SEPARATORS)), None], "header": ["boolean"], "na_values": [_STRINGS, None]})
def generic(path: str | os.PathLike, label: Column | None = None, features: Column | Sequence[Column] | None = None,
            label_names: Sequence[str] | None = None, format: str | None = None, sep: str | None = None,
            header: bool = True, na_values: Sequence[str] | None = None) -> Dataset:
    """Load a labelled data set from ``path``.

    Formats (``format`` or, if ``None``, the file suffix):

    - ``csv``: delimited text read with pandas (suffixes ``.csv``, ``.tsv``, ``.txt``, ``.dat``). ``sep`` is
      ``comma``, ``tab``, ``whitespace`` (any run of blanks) or ``semicolon``; by default ``tab`` for ``.tsv``,
      ``whitespace`` for ``.txt``/``.dat``, else ``comma``. With ``header: false`` the file has no header row and
      columns are given by 0-based index (``-1`` is the last); with a header, by name or index. ``label`` is the
      label column; ``features`` a list of columns (default: every other numeric column, in file order; a column
      with no number at all, e.g. sample names, is left out and listed in ``meta["non_numeric_ignored"]``). A
      feature column with a token that is not a number (``?``) is refused, naming the column, row and token;
      ``na_values`` lists tokens read as missing values (besides pandas' defaults: empty, ``NA``, ``nan``, ...).
    - ``npz``: array ``features`` (default ``"X"``, 2-D; 1-D is one feature) and array ``label``; read with
      ``allow_pickle=False`` (an object array is refused, saying how to re-save it).
    - ``mat``: ``scipy.io.loadmat`` (MATLAB ≤ v7.2); variables named as for ``npz``; label vectors of shape
      (n, 1) or (1, n) are flattened; char/cell labels are strings.
    - ``h5ad``: AnnData (needs h5py): features ``X`` or the ``layers``/``obsm`` matrix named by ``features``;
      ``label`` an ``obs`` column (categorical, string or numeric); row and column names are recorded as
      ``meta["sample_names"]`` / ``meta["feature_names"]``.

    A file in a fetched folder (one with ``manifest.json``) is verified against its recorded sha256 first.
    Labels: see :func:`encode_labels`. Rows with a NaN feature or a missing label raise ``ValueError`` naming
    them. Constant features (zero range) carry no information and are **dropped**; ``meta["n_constant_dropped"]``
    and ``meta["constant_dropped"]`` (column names, or indices) record them. If every feature is constant, or
    there are fewer than 2 rows, ``ValueError``.
    """
    path = Path(path)
    fmt, sep = _format(path, format, sep)
    if not path.is_file():
        raise FileNotFoundError(f"generic dataset file {path} not found")
    if fmt != "csv" and (not header or na_values):
        raise UserError(f"{path}: header and na_values are only for delimited text (format csv), not {fmt}")
    verify_listed(path)
    extra: dict[str, Any] = {}
    if fmt == "csv":
        X, y_raw, feature_names, extra = _from_text(path, label, features, sep or "comma", header, na_values)
    else:
        if label is not None and not isinstance(label, str):
            raise UserError(f"{path}: for {fmt} files label is the name of an array (obs column for h5ad), "
                             f"got {label!r}")
        if features is not None and not isinstance(features, str):
            raise UserError(f"{fmt}: features must be the name of one 2-D array, got {features!r}")
        if fmt == "h5ad":
            from .h5ad import read_h5ad

            got = read_h5ad(path, label, features)
            X, y_raw, y_missing = got.X, got.labels, got.missing
            extra = {"sample_names": got.sample_names}
            if got.feature_names is not None:
                extra["feature_names"] = got.feature_names
        else:
            X, y_raw = _from_arrays(path, fmt, label, features or "X")
            X = X.astype(np.float64)
            # (n,1)/(1,n) vectors and cells are flattened; a MATLAB char matrix arrives as n space-padded strings
            y_raw = np.char.strip(y_raw.ravel()) if y_raw.dtype.kind == "U" else y_raw.ravel()
            y_missing = np.isnan(y_raw) if y_raw.dtype.kind == "f" else np.zeros(len(y_raw), dtype=bool)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2:
            raise UserError(f"{path}: features {features or 'X'!r} must be 2-D, got shape {X.shape}")
        if len(y_raw) != X.shape[0]:
            raise UserError(f"{path}: {X.shape[0]} feature rows but {len(y_raw)} labels")
        _nan_rows(X, y_missing, str(path))
        feature_names = list(range(X.shape[1]))
    if X.shape[0] < 2:
        raise UserError(f"{path}: {X.shape[0]} data rows; a data set needs at least 2")
    if label is None:  # data without labels: one cohort, which the config check and the scores know
        if label_names is not None:
            raise UserError(f"{path}: label_names names the classes of a label column, but no label is given")
        labels, names = np.zeros(X.shape[0], dtype=np.int64), [UNLABELLED]
    else:
        labels, names = encode_labels(y_raw, label_names)
    constant = np.ptp(X, axis=0) == 0
    if constant.all():
        raise UserError(f"{path}: all {X.shape[1]} features are constant")
    dropped = [feature_names[k] for k in np.flatnonzero(constant)]
    X = X[:, ~constant]
    if "feature_names" in extra:
        extra["feature_names"] = [extra["feature_names"][k] for k in np.flatnonzero(~constant)]
    return Dataset(X, labels, names, meta={
        "source": str(path), "format": fmt, "label": label, "unlabelled": label is None,
        "features": [feature_names[k] for k in np.flatnonzero(~constant)] if fmt == "csv" else (features or "X"),
        "n_constant_dropped": len(dropped), "constant_dropped": dropped, "n_samples": int(len(labels)), **extra})
