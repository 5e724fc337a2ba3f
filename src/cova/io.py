"""File input and output shared by every step.

Output is atomic: every file is written to a hidden temporary name in its folder (``.NAME.XXXX.SUFFIX``), then
renamed into place, so that an interrupted step never leaves a partial result behind; a temporary file that a
killed step left is removed by the next write of the same file. Files get the permissions the umask gives (as
``open`` would), not the private mode of a temporary file. A folder or disk that refuses the write (read-only,
no permission, full) raises :class:`FileError` naming the file and what to do.

Input of the pipeline's own ``.npz`` files goes through :func:`read_npz`: a missing, truncated or damaged file
raises :class:`FileError` naming it and how to have it written again. Messages name files and arrays, never
their content.

Scores files are strict JSON (:func:`dumps_json`): NaN and infinite values are written as ``null``, which
:func:`read_scores` reads back as NaN.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np


class FileError(RuntimeError):
    """A file that cannot be read or written; the message names it and what to do."""


#: What to do when the operating system refuses a write, by errno.
_WRITE_ADVICE = {
    errno.EACCES: "no permission to write there; make the folder writable or run from a copy of the project "
                  "where it is",
    errno.EPERM: "the operation is not permitted there; make the folder writable",
    errno.EROFS: "the file system is read-only; run from a copy of the project on a writable disk",
    errno.ENOSPC: "the disk is full; free some space (e.g. remove old results/) and run again",
    errno.EDQUOT: "the disk quota is exceeded; free some space and run again",
}


def file_mode() -> int:
    """The permissions a new file gets from the current umask (``0o666 & ~umask``, as ``open`` gives)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # no /proc: read the umask by setting it, and set it back at once
    os.umask(mask)
    return 0o666 & ~mask


def write_error(path: str | os.PathLike, err: OSError) -> FileError:
    """The :class:`FileError` for an ``OSError`` met writing ``path``: the file, the reason and what to do."""
    advice = _WRITE_ADVICE.get(err.errno or 0, "check that the folder exists and can be written")
    return FileError(f"cannot write {path}: {err.strerror or err}; {advice}")


#: The folders the workflow writes into, relative to its working directory: every rule's output, log and benchmark
#: file is under ``results/``, processed datasets under ``data/processed/``, fetched files under ``data/raw/``.
OUTPUT_FOLDERS = ("results", "data/processed", "data/raw")
#: The folder of the workflow's temporary folders (the job server's socket, :func:`cova.jobserver.start`): inside
#: the outputs, so that nothing is left in the system's temporary folder; a next run removes stale ones.
TEMP_DIR = "results/.tmp"


def require_writable(folders: Iterable[str | os.PathLike], root: str | os.PathLike = ".") -> None:
    """Create each of ``folders`` (below ``root``) if missing and refuse one that this user cannot write into, before
    any job starts (the Snakefile calls it at parse time): :class:`FileError` names the folder, why (no permission,
    a read-only file system) and what to do, instead of the first job failing deep in the scheduler."""
    for folder in folders:
        path = Path(root, folder)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            advice = _WRITE_ADVICE.get(err.errno or 0, "check that the folder can be created")
            raise FileError(f"cannot create the output folder {path}: {err.strerror or err}; {advice}") from None
        if os.access(path, os.W_OK | os.X_OK):
            continue
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            raise FileError(f"the output folder {path} is on a read-only file system; run from a copy of the "
                            f"project on a writable disk")
        raise FileError(f"the output folder {path} cannot be written by this user (no write permission); make it "
                        f"writable (e.g. chmod -R u+w {path}) or run from a copy of the project where it is")


def _remove_leftovers(target: Path, suffix: str) -> None:
    """Remove temporary files of ``target`` that an interrupted write left (``.NAME.XXXXXXXX{suffix}``)."""
    leftover = re.compile(re.escape(f".{target.name}.") + "[a-z0-9_]{8}" + re.escape(suffix))
    for old in target.parent.glob(f".{glob_escape(target.name)}.*"):
        if leftover.fullmatch(old.name) and old.is_file():
            old.unlink(missing_ok=True)


def glob_escape(name: str) -> str:
    """``name`` with glob's special characters (``*?[``) matched literally."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (suffix ``suffix``, by default that of ``path``); rename it to
    ``path``, with the umask's permissions, if the block succeeds. Temporary files of ``path`` left by a killed
    step are removed first (one job writes a given file at a time). An ``OSError`` of a refused write (permission,
    read-only or full disk) becomes a :class:`FileError` naming ``path``."""
    target = Path(path)
    suffix = target.suffix if suffix is None else suffix
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(target, suffix)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=suffix)
        os.close(fd)
    except OSError as err:
        raise write_error(target, err) from None
    try:
        yield Path(tmp)
        os.chmod(tmp, file_mode())
        os.replace(tmp, target)
    except OSError as err:
        if err.errno in _WRITE_ADVICE:
            raise write_error(target, err) from None
        raise
    finally:
        Path(tmp).unlink(missing_ok=True)


def save_npz_atomic(path: str | os.PathLike, **arrays: Any) -> None:
    """``np.savez_compressed`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        np.savez_compressed(tmp, **arrays)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


@contextmanager
def read_npz(path: str | os.PathLike, what: str) -> Iterator[Any]:
    """``np.load(path)`` (never pickles) for the block. A missing file, one that is not a complete ``.npz``
    (truncated, damaged: zip's CRC check) or one that lacks an array the block reads raises :class:`FileError`
    naming ``path`` (``what`` says which file it is: "processed dataset", "embedding", ...) and what to do."""
    redo = "delete it and run the workflow again, which writes it anew"
    if not Path(path).is_file():
        raise FileError(f"{what} {path} not found; run the workflow step that writes it")
    try:
        with np.load(path, allow_pickle=False) as f:
            yield f
    except KeyError as err:
        raise FileError(f"{what} {path} lacks the array {err.args[0]!r} (written by another version, or damaged); "
                        f"{redo}") from None
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error) as err:
        if isinstance(err, OSError) and err.errno in _WRITE_ADVICE:
            raise
        reason = type(err).__name__ if isinstance(err, (EOFError, zlib.error)) else str(err).split("\n")[0][:200]
        raise FileError(f"{what} {path} is damaged or truncated ({reason}); {redo}") from None


def arrays_digest(arrays: Mapping[str, Any]) -> str:
    """SHA-256 of named arrays (names, dtypes, shapes and bytes, in name order): the checksum a processed file
    stores of its content and is verified against when read, as raw files are against their manifest."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _strict(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value


def dumps_json(obj: Any) -> str:
    """``obj`` as strict JSON (indented, keys sorted, a final newline): NaN and ±inf become ``null``, so that any
    JSON reader (a browser's ``JSON.parse``) accepts it."""
    return json.dumps(_strict(obj), indent=2, sort_keys=True, allow_nan=False) + "\n"


def read_scores(path: str | os.PathLike) -> dict[str, Any]:
    """A ``scores.json`` written with :func:`dumps_json`: its top-level ``null`` scores read as NaN (not a number:
    undefined for this embedding, or a measure that does not apply)."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise FileError(f"scores file {path} cannot be read ({err.strerror or err}); run the workflow step that "
                        "writes it") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise FileError(f"scores file {path} is not valid JSON (damaged or truncated); delete it and run the "
                        "workflow again, which writes it anew") from None
    if not isinstance(record, dict):
        raise FileError(f"scores file {path} does not hold a JSON object; delete it and run the workflow again")
    return {k: math.nan if v is None else v for k, v in record.items()}
