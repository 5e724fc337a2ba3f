"""Fetch the raw files of a real dataset into ``data/raw/{dataset}/``, verified by sha256, atomically.

Order of sources, per file: a verified copy already in the destination is kept; otherwise each **mirror
directory** is tried (``<mirror>/<subdir>/<file>``, then ``<mirror>/<file>``), then each canonical URL
(one URL per file, or one archive holding every file). Every file is written to a temporary name in the
destination folder, verified, and only then renamed into place; a file whose sha256 differs is deleted and
the next mirror or URL is tried. Interrupted downloads are kept as ``.<file>.part`` and resumed with an
HTTP ``Range`` request. ``manifest.json`` (file -> sha256, size, origin) is written last: its presence
proves the folder is complete.

Only the standard library is used (``urllib.request`` for HTTP and ``file://`` URLs); nothing is ever unpickled,
and archive members with absolute paths or ``..`` make the whole archive rejected. The loaders check the files
of a fetched folder against its manifest before reading them (:func:`verify_manifest`), so a file changed after
it was fetched is refused.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from ..errors import UserError
from ..io import file_mode
from .sources import SOURCES, Source, check_relative_name, source_file_name

ENV_MIRROR = "COVA_DATA_MIRROR"
MANIFEST = "manifest.json"
USER_AGENT = "cova-fetch/0.1 (Python-urllib)"
_CHUNK = 1 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MAX_NAMES = 5


class FetchError(RuntimeError):
    """The files of a dataset could not all be obtained and verified (the message says what was tried)."""


class ChecksumError(FetchError):
    """A file's sha256 differs from the expected one; ``mismatches`` lists every failed verification."""

    def __init__(self, message: str, mismatches: Iterable[Mismatch] = ()) -> None:
        super().__init__(message)
        self.mismatches: list[Mismatch] = list(mismatches)


@dataclass(frozen=True)
class Mismatch:
    """One failed verification: ``file`` from ``origin`` hashed to ``actual`` instead of ``expected``."""

    file: str
    expected: str
    actual: str
    origin: str

    def __str__(self) -> str:
        return f"{self.file} from {self.origin}: sha256 {self.actual}, expected {self.expected}"


# --------------------------------------------------------------------------------------------- helpers


def sha256sum(path: str | os.PathLike) -> str:
    """Lowercase hex sha256 of the file at ``path``, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def default_mirrors(config_mirrors: Sequence[str | os.PathLike] | None = None) -> list[Path]:
    """Mirror directories to search: ``config_mirrors`` (the config's ``data.mirrors``), then the
    ``os.pathsep``-separated directories of ``$COVA_DATA_MIRROR``.

    ``~`` is expanded; entries that are not existing directories are dropped; order is preserved and a
    directory listed twice (after resolving symlinks) is kept once. Paths are returned resolved.
    """
    raw: list[str | os.PathLike] = list(config_mirrors or [])
    raw += [p for p in os.environ.get(ENV_MIRROR, "").split(os.pathsep) if p.strip()]
    out: list[Path] = []
    for entry in raw:
        path = Path(entry).expanduser()
        if not path.is_dir():
            continue
        path = path.resolve()
        if path not in out:
            out.append(path)
    return out


def _names(names: Sequence[str]) -> str:
    """``a, b, c`` or ``a, b, c, d, e, ... (1440 files)`` for long lists."""
    if len(names) <= _MAX_NAMES:
        return ", ".join(names)
    return ", ".join(names[:_MAX_NAMES]) + f", ... ({len(names)} files)"


def _size(n: float) -> str:
    """Bytes in decimal units: ``512 B``, ``256.0 kB``, ``9.9 MB``."""
    if n < 1000:
        return f"{n:.0f} B"
    for unit in ("kB", "MB", "GB"):
        n /= 1000
        if n < 1000 or unit == "GB":
            break
    return f"{n:.1f} {unit}"


def _new_temp(target: Path) -> Path:
    """An empty private temporary file beside ``target`` (same folder, so ``os.replace`` is atomic)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    return Path(tmp)


def _stream_to_temp(src: IO[bytes], target: Path) -> tuple[Path, str]:
    """Copy ``src`` into a temporary file beside ``target``; return (temporary path, sha256 of the bytes)."""
    tmp = _new_temp(target)
    h = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            while chunk := src.read(_CHUNK):
                h.update(chunk)
                out.write(chunk)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, h.hexdigest()


def _install(tmp: Path, target: Path) -> None:
    """Give ``tmp`` the permissions the umask gives and rename it to ``target`` atomically."""
    os.chmod(tmp, file_mode())
    os.replace(tmp, target)


def _write_text_atomic(path: Path, text: str) -> None:
    tmp = _new_temp(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        _install(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _host(url: str) -> str:
    p = urllib.parse.urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


def _is_url(text: str) -> bool:
    return urllib.parse.urlsplit(text).scheme.lower() in ("http", "https", "file")


class _Log:
    """Messages on stderr: progress only if enabled, warnings always."""

    def __init__(self, label: str, progress: bool) -> None:
        self.label = label
        self.progress = progress

    def info(self, msg: str) -> None:
        if self.progress:
            print(f"[cova.fetch] {self.label}: {msg}", file=sys.stderr, flush=True)

    def warn(self, msg: str) -> None:
        print(f"[cova.fetch] {self.label}: WARNING: {msg}", file=sys.stderr, flush=True)


@dataclass
class _Report:
    """What was tried, for the final error message."""

    tried: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)


class _AttemptFailed(Exception):
    """One mirror/URL attempt failed; ``host_down`` marks the host as not worth contacting again."""

    def __init__(self, reason: str, host_down: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.host_down = host_down


# ------------------------------------------------------------------------------------------ download


class _Progress:
    """Download progress on stderr: one line per ~5 % (or per 10 MB when the size is unknown)."""

    def __init__(self, log: _Log, what: str, total: int | None, start: int) -> None:
        self.log, self.what, self.total = log, what, total
        step = max(total // 20, 1) if total else 10_000_000
        self.step = step
        self.next = (start // step + 1) * step

    def update(self, done: int) -> None:
        if done < self.next:
            return
        self.next = (done // self.step + 1) * self.step
        if self.total:
            self.log.info(f"{self.what}: {100 * done // self.total:3d}% ({_size(done)} of {_size(self.total)})")
        else:
            self.log.info(f"{self.what}: {_size(done)}")


def _content_range_start(value: str | None) -> int | None:
    m = re.fullmatch(r"\s*bytes\s+(\d+)-\d+/(\d+|\*)\s*", value or "")
    return int(m[1]) if m else None


def _download_to_part(url: str, part: Path, *, what: str, timeout: float, log: _Log) -> bool:
    """Make ``part`` hold the complete body of ``url``, resuming from the bytes already in ``part``.

    Returns True if existing bytes were reused (a resumed download), so a failed verification can be
    retried from scratch. Raises :class:`_AttemptFailed`; an interrupted transfer keeps ``part``.
    """
    part.parent.mkdir(parents=True, exist_ok=True)
    offset = part.stat().st_size if part.is_file() else 0
    headers = {"User-Agent": USER_AGENT}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    opener = urllib.request.build_opener()  # reads the *_proxy variables now, not at import
    try:
        resp = opener.open(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as e:
        e.close()
        if e.code == 416 and offset:
            log.info(f"{what}: server has nothing past byte {offset}; verifying the partial file as complete")
            return True
        raise _AttemptFailed(f"HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        reason = e.reason if isinstance(e, urllib.error.URLError) else e
        raise _AttemptFailed(f"unreachable ({reason})", host_down=True) from None
    except ValueError as e:
        raise _AttemptFailed(f"invalid URL ({e})") from None

    with resp:
        status = resp.status
        if offset and status == 206:
            start = _content_range_start(resp.headers.get("Content-Range"))
            if start != offset:
                log.info(f"{what}: server answered Range bytes={offset}- with Content-Range "
                         f"{resp.headers.get('Content-Range')!r}; downloading from scratch")
                resp.close()
                part.unlink()
                return _download_to_part(url, part, what=what, timeout=timeout, log=log)
            mode = "ab"
            log.info(f"{what}: resuming {url} at byte {offset}")
        elif status == 200 or (status is None and url.lower().startswith("file:")):
            if offset:
                log.info(f"{what}: server ignored the Range request; downloading {url} from scratch")
            offset, mode = 0, "wb"
        else:
            raise _AttemptFailed(f"unexpected HTTP status {status}")
        length = resp.headers.get("Content-Length")
        total = offset + int(length) if length and length.isdigit() else None
        if mode == "wb":
            log.info(f"downloading {url}" + (f" ({_size(total)})" if total else ""))
        bar = _Progress(log, what, total, offset)
        done = offset
        try:
            with open(part, mode) as f:
                while chunk := resp.read(_CHUNK):
                    f.write(chunk)
                    done += len(chunk)
                    bar.update(done)
        except (OSError, http.client.HTTPException) as e:
            raise _AttemptFailed(f"interrupted after {done} bytes ({e!r}); kept {part.name} to resume",
                                 host_down=isinstance(e, TimeoutError)) from None
    if total is not None and done < total:
        raise _AttemptFailed(f"interrupted after {done} of {total} bytes; kept {part.name} to resume")
    return offset > 0


# ------------------------------------------------------------------------------------------ archives


def _member_name(name: str) -> str:
    """``name`` without leading ``./``; raise :class:`_AttemptFailed` for absolute paths or ``..``."""
    norm = name.replace("\\", "/")
    if norm.startswith("/") or re.match(r"[A-Za-z]:", norm) or ".." in norm.split("/"):
        raise _AttemptFailed(f"unsafe archive member {name!r} (absolute path or '..'); archive rejected")
    while norm.startswith("./"):
        norm = norm[2:]
    return norm


def _member_targets(all_names: Sequence[str], file_names: Sequence[str], wanted: Iterable[str]) -> dict[str, str]:
    """Map archive member name -> wanted file name, after stripping the archive's single top folder.

    Every name in ``all_names`` (directories and links included) must be safe, else the archive is
    rejected. ``file_names`` are the non-directory members; ``__MACOSX/`` entries are ignored.
    """
    for n in all_names:
        _member_name(n)
    content = {n: _member_name(n) for n in file_names}
    content = {n: norm for n, norm in content.items() if norm and not norm.startswith("__MACOSX/")}
    tops = {norm.split("/", 1)[0] for norm in content.values()}
    strip = len(tops) == 1 and all("/" in norm for norm in content.values())
    wanted_set = set(wanted)
    out: dict[str, str] = {}
    taken: set[str] = set()
    for n, norm in content.items():
        rel = norm.split("/", 1)[1] if strip else norm
        if rel in wanted_set and rel not in taken:  # a duplicated member: the first one counts
            out[n] = rel
            taken.add(rel)
    return out


def _extract(archive: Path, kind: str, wanted: dict[str, str], dest: Path, url: str,
             report: _Report, log: _Log) -> dict[str, dict[str, Any]]:
    """Extract and verify the ``wanted`` members (file -> sha256) of ``archive`` into ``dest``.

    Returns manifest entries of the installed files; records mismatches in ``report``. Raises
    :class:`_AttemptFailed` if the archive cannot be read or holds an unsafe member name.
    """
    got: dict[str, dict[str, Any]] = {}

    def take(member: str, fname: str, fobj: IO[bytes]) -> None:
        target = dest / fname
        tmp, actual = _stream_to_temp(fobj, target)
        origin = f"{url} [{member}]"
        if actual != wanted[fname]:
            tmp.unlink(missing_ok=True)
            report.mismatches.append(Mismatch(fname, wanted[fname], actual, origin))
            log.warn(f"rejected {fname} from {origin}: sha256 {actual}, expected {wanted[fname]}")
            return
        _install(tmp, target)
        got[fname] = {"sha256": actual, "size": target.stat().st_size, "source": url, "member": member}

    try:
        if kind == "tar.gz":
            with tarfile.open(archive, "r:gz") as tf:
                members = tf.getmembers()
                targets = _member_targets([m.name for m in members], [m.name for m in members if not m.isdir()],
                                          wanted)
                for m in members:
                    if m.name not in targets:
                        continue
                    if not m.isfile():
                        raise _AttemptFailed(f"archive member {m.name!r} is not a regular file; archive rejected")
                    fobj = tf.extractfile(m)
                    assert fobj is not None
                    with fobj:
                        take(m.name, targets[m.name], fobj)
        elif kind == "zip":
            with zipfile.ZipFile(archive) as zf:
                every = zf.infolist()
                infos = [i for i in every if not i.is_dir()]
                targets = _member_targets([i.filename for i in every], [i.filename for i in infos], wanted)
                for info in infos:
                    if info.filename in targets:
                        with zf.open(info) as fobj:
                            take(info.filename, targets[info.filename], fobj)
        else:
            raise UserError(f"unknown archive kind {kind!r}")
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise _AttemptFailed(f"cannot read the {kind} archive ({e!r}); {len(got)} files were installed "
                             "before the error") from None
    missing = [f for f in wanted if f not in got and not any(m.file == f for m in report.mismatches)]
    if missing:
        report.tried.append(f"{url}: archive has no member for {_names(sorted(missing))}")
    return got


# ------------------------------------------------------------------------------------------- engine


def _from_mirrors(files: dict[str, str], missing: list[str], dest: Path, subdirs: Sequence[str],
                  mirrors: Sequence[Path], report: _Report, log: _Log) -> dict[str, dict[str, Any]]:
    """Copy the ``missing`` files from the first mirror holding a verified copy."""
    got: dict[str, dict[str, Any]] = {}
    if not mirrors:
        report.tried.append(f"no mirror directory configured (data.mirrors in the config, or ${ENV_MIRROR})")
    for mirror in mirrors:
        todo = [f for f in missing if f not in got]
        if not todo:
            break
        if not mirror.is_dir():
            report.tried.append(f"mirror {mirror}: not a directory")
            continue
        places = [mirror / sub for sub in subdirs] + [mirror]
        absent: list[str] = []
        copied = 0
        for fname in todo:
            candidates = [place / fname for place in places if (place / fname).is_file()]
            if not candidates:
                absent.append(fname)
            for cand in candidates:
                target = dest / fname
                with open(cand, "rb") as src:
                    tmp, actual = _stream_to_temp(src, target)
                if actual != files[fname]:
                    tmp.unlink(missing_ok=True)
                    report.mismatches.append(Mismatch(fname, files[fname], actual, str(cand)))
                    report.tried.append(f"mirror {mirror}: {cand} has sha256 {actual}, expected {files[fname]}")
                    log.warn(f"skipping corrupted mirror copy {cand}: sha256 {actual}, expected {files[fname]}")
                    continue
                _install(tmp, target)
                got[fname] = {"sha256": actual, "size": target.stat().st_size, "source": str(cand)}
                copied += 1
                break
        if copied:
            log.info(f"copied {copied} file{'s' if copied != 1 else ''} from {mirror}")
        if absent:
            where = " or ".join(str(p) for p in places)
            report.tried.append(f"mirror {mirror}: {_names(absent)} not found in {where}")
    return got


def _from_file_urls(files: dict[str, str], missing: list[str], dest: Path, urls: dict[str, list[str]],
                    timeout: float, report: _Report, log: _Log) -> dict[str, dict[str, Any]]:
    """Download each missing file from its URLs in order (``.part`` + resume), verify, install."""
    got: dict[str, dict[str, Any]] = {}
    down: dict[str, str] = {}  # host -> reason: do not wait for an unreachable host once per file
    for fname in missing:
        target = dest / fname
        part = target.with_name(f".{target.name}.part")
        for url in urls.get(fname, []):
            if _host(url) in down:
                report.tried.append(f"{url}: skipped, {_host(url)} was {down[_host(url)]}")
                continue
            try:
                for attempt in (1, 2):
                    resumed = _download_to_part(url, part, what=fname, timeout=timeout, log=log)
                    actual = sha256sum(part)
                    if actual == files[fname]:
                        _install(part, target)
                        got[fname] = {"sha256": actual, "size": target.stat().st_size, "source": url}
                        break
                    part.unlink(missing_ok=True)
                    if resumed and attempt == 1:
                        log.info(f"{fname}: resumed download failed verification; downloading again from scratch")
                        continue
                    report.mismatches.append(Mismatch(fname, files[fname], actual, url))
                    report.tried.append(f"{url}: downloaded file has sha256 {actual}, expected {files[fname]}")
                    log.warn(f"rejected {fname} from {url}: sha256 {actual}, expected {files[fname]}")
                    break
            except _AttemptFailed as e:
                report.tried.append(f"{url}: {e.reason}")
                if e.host_down:
                    down[_host(url)] = e.reason
            if fname in got:
                break
    return got


def _archive_part(dest: Path, url: str, name: str, kind: str) -> Path:
    base = PurePosixPath(urllib.parse.unquote(urllib.parse.urlsplit(url).path)).name or f"{name}.{kind}"
    return dest / f".{base}.part"


def _from_archives(files: dict[str, str], missing: list[str], dest: Path, urls: Sequence[str], kind: str,
                   name: str, timeout: float, report: _Report, log: _Log) -> dict[str, dict[str, Any]]:
    """Download each archive URL in turn until every missing file is extracted and verified."""
    got: dict[str, dict[str, Any]] = {}
    for url in urls:
        todo = {f: files[f] for f in missing if f not in got}
        if not todo:
            break
        part = _archive_part(dest, url, name, kind)
        try:
            for attempt in (1, 2):
                resumed = _download_to_part(url, part, what=part.name[1:-len(".part")], timeout=timeout, log=log)
                retry = resumed and attempt == 1  # a resumed download may have stale bytes: one fresh try
                n_bad = len(report.mismatches)
                try:
                    new = _extract(part, kind, todo, dest, url, report, log)
                except _AttemptFailed:
                    if retry:
                        log.info(f"resumed archive {url} is unreadable; downloading again from scratch")
                        continue
                    raise
                finally:
                    part.unlink(missing_ok=True)  # extracted or rejected: the archive itself is not kept
                got.update(new)
                todo = {f: h for f, h in todo.items() if f not in new}
                if new:
                    log.info(f"extracted {len(new)} verified file{'s' if len(new) != 1 else ''} from {url}")
                if todo and retry and len(report.mismatches) > n_bad:
                    log.info(f"resumed archive {url} failed verification; downloading again from scratch")
                    continue
                break
        except _AttemptFailed as e:
            report.tried.append(f"{url}: {e.reason}")
    return got


def _read_manifest(dest: Path) -> dict[str, dict[str, Any]]:
    try:
        files = json.loads((dest / MANIFEST).read_text(encoding="utf-8")).get("files", {})
        return files if isinstance(files, dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def _obtain(*, label: str, files: dict[str, str], dest: Path, mirror_subdirs: Sequence[str],
            mirrors: Sequence[Path], file_urls: dict[str, list[str]], archive_urls: Sequence[str],
            archive: str | None, timeout: float, progress: bool,
            no_url_reason: str, hint: str) -> dict[str, dict[str, Any]]:
    """Make ``dest`` hold every file of ``files`` (name -> sha256); return the manifest entries."""
    log = _Log(label, progress)
    report = _Report()
    dest.mkdir(parents=True, exist_ok=True)
    previous = _read_manifest(dest)
    got: dict[str, dict[str, Any]] = {}
    for fname, digest in files.items():
        path = dest / fname
        if not path.is_file():
            continue
        actual = sha256sum(path)
        if actual == digest:
            prev = previous.get(fname)
            if isinstance(prev, dict) and prev.get("sha256") == digest:
                got[fname] = prev
            else:
                got[fname] = {"sha256": digest, "size": path.stat().st_size, "source": f"already in {dest}"}
        else:
            report.tried.append(f"{path}: present but sha256 {actual}, expected {digest} (left in place until a "
                                "verified copy replaces it)")
            log.warn(f"{path} does not verify (sha256 {actual}, expected {digest}); fetching it again")

    missing = [f for f in files if f not in got]
    if missing:
        got.update(_from_mirrors(files, missing, dest, mirror_subdirs, mirrors, report, log))
        missing = [f for f in files if f not in got]
    if missing:
        if archive is not None and archive_urls:
            got.update(_from_archives(files, missing, dest, archive_urls, archive, label, timeout, report, log))
        elif archive is None and any(file_urls.get(f) for f in missing):
            got.update(_from_file_urls(files, missing, dest, file_urls, timeout, report, log))
        else:
            report.tried.append(no_url_reason)
        missing = [f for f in files if f not in got]
    if missing:
        raise _failure(label, dest, files, missing, report, hint)
    return {f: got[f] for f in sorted(files)}


def _failure(label: str, dest: Path, files: dict[str, str], missing: list[str], report: _Report,
             hint: str) -> FetchError:
    lines = [f"cannot fetch {label} into {dest}: {len(missing)} of {len(files)} files missing or unverified "
             f"({_names(missing)})."]
    lines.append("Tried:")
    lines += [f"  - {t}" for t in report.tried]
    relevant = [m for m in report.mismatches if m.file in missing]
    if report.mismatches:
        lines.append("Checksum mismatches (the rejected copies were deleted):")
        lines += [f"  - {m}" for m in report.mismatches]
    lines.append(hint)
    message = "\n".join(lines)
    if relevant:
        return ChecksumError(message, report.mismatches)
    return FetchError(message)


def _hint(source: Source) -> str:
    sub = source.mirror_subdirs[0] if source.mirror_subdirs else ""
    where = f"<mirror>/{sub}/" if sub else "<mirror>/"
    names = _names(sorted(source.files))
    text = (f"To provide the files: obtain the upstream files ({names})"
            + (f" from {' or '.join(source.urls)}" if source.urls else "")
            + (f" and unpack the {source.archive} archive" if source.archive else "")
            + f", put them in {where} (e.g. {where}{sorted(source.files)[0]}), and list <mirror> under "
            f"data.mirrors in the config or in ${ENV_MIRROR} (directories separated by {os.pathsep!r}). "
            "Every file is verified by sha256.")
    if source.licence:
        text += f" Licence: {source.licence}."
    if source.notes:
        text += f" Notes: {source.notes}"
    return text


def _write_manifest(dest: Path, meta: dict[str, Any], entries: dict[str, dict[str, Any]]) -> None:
    """Write ``dest/manifest.json`` atomically; an identical manifest is left untouched (same mtime)."""
    manifest = {**meta, "n_files": len(entries), "files": entries}
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    path = dest / MANIFEST
    try:
        unchanged = path.read_text(encoding="utf-8") == text
    except OSError:
        unchanged = False
    if not unchanged:  # so that Snakemake sees no new output when nothing changed
        _write_text_atomic(path, text)


def _resolve(source: Source | str) -> Source:
    if isinstance(source, Source):
        return source
    if source not in SOURCES:
        raise UserError(f"unknown dataset source {source!r}; known: {sorted(SOURCES)}")
    return SOURCES[source]


def _mirror_list(mirrors: Sequence[str | os.PathLike] | None) -> list[Path]:
    if mirrors is None:
        return default_mirrors()
    out: list[Path] = []
    for m in mirrors:
        p = Path(m).expanduser()
        if p not in out:
            out.append(p)
    return out


# ----------------------------------------------------------------------------------------------- API


def fetch(source: Source | str, dest: str | os.PathLike, *, mirrors: Sequence[str | os.PathLike] | None = None,
          urls: Sequence[str] | None = None, progress: bool = True, timeout: float = 60) -> Path:
    """Make ``dest`` (e.g. ``data/raw/cora``) hold every file of ``source``, each verified by sha256.

    Parameters
    ----------
    source : a :class:`~cova.datasets.sources.Source` or a key of ``SOURCES``.
    dest : destination folder, created if needed.
    mirrors : mirror directories, searched in order; ``None`` means :func:`default_mirrors` (only
        ``$COVA_DATA_MIRROR``; pass ``default_mirrors(config["data"]["mirrors"])`` to include the config's).
    urls : replaces ``source.urls`` (``()`` disables downloads); ``None`` uses the source's URLs.
    progress : print progress lines on stderr (warnings about rejected copies are always printed).
    timeout : seconds for connecting and for each read.

    Returns ``dest``. Raises :class:`ChecksumError` if a file is still missing and some copy of it failed
    verification, :class:`FetchError` if it could not be found at all; both messages list every mirror and
    URL tried, with the reason, and how to provide the files. ``dest/manifest.json`` is written last.
    """
    src = _resolve(source)
    dest = Path(dest)
    url_list = tuple(src.urls if urls is None else urls)
    if not url_list:
        no_url = (f"no public canonical URL is known for {src.name!r}: only a mirror can provide it"
                  if not src.urls else f"downloads disabled for {src.name!r} (no URL given)")
    else:
        no_url = f"no URL to try for {src.name!r}"
    file_urls = {} if src.archive else {f: [u + urllib.parse.quote(f) for u in url_list] for f in src.files}
    entries = _obtain(label=f"dataset {src.name!r}", files=src.files, dest=dest,
                      mirror_subdirs=src.mirror_subdirs, mirrors=_mirror_list(mirrors), file_urls=file_urls,
                      archive_urls=url_list, archive=src.archive, timeout=timeout, progress=progress,
                      no_url_reason=no_url, hint=_hint(src))
    _write_manifest(dest, {"dataset": src.name, "description": src.description, "licence": src.licence}, entries)
    return dest


def fetch_file(url_or_path: str | os.PathLike, sha256: str | None, dest_dir: str | os.PathLike, *,
               mirrors: Sequence[str | os.PathLike] | None = None, progress: bool = True,
               timeout: float = 60, filename: str | None = None) -> Path:
    """Obtain one user-supplied file (the ``generic`` loader's input) and return its verified path.

    * An existing local path is verified in place (if ``sha256`` is given) and returned as is.
    * An ``http(s)://`` or ``file://`` URL requires ``sha256``: the file ``dest_dir/<name>`` is kept if it
      verifies, otherwise copied from a mirror (``<mirror>/<name>``) or downloaded like :func:`fetch` does
      (``.part`` + resume, verification, atomic rename); ``dest_dir/manifest.json`` then describes
      exactly this file (one user-supplied file per folder, as the workflow's ``fetch`` rule expects).
      ``<name>`` is ``filename`` if given, else :func:`~cova.datasets.sources.source_file_name` of the URL
      (its last path segment, %-decoded, without the query), the name the workflow's dataset step reads.
    * A local path that does not exist is looked up by its base name in the mirrors (needs ``sha256``).
    """
    digest = (sha256 or "").strip().lower()
    if digest and not _SHA256.fullmatch(digest):
        raise UserError(f"sha256 must be 64 hex digits, got {sha256!r}")
    text = os.fspath(url_or_path)
    if _is_url(text):
        name = source_file_name(text, filename)
        parts = urllib.parse.urlsplit(text)
        # a local file has no query: urllib would read "?download=1" as part of its name
        urls = [parts._replace(query="", fragment="").geturl() if parts.scheme.lower() == "file" else text]
    else:
        path = Path(text).expanduser()
        if path.is_file():
            if digest:
                actual = sha256sum(path)
                if actual != digest:
                    m = Mismatch(str(path), digest, actual, str(path))
                    raise ChecksumError(f"{path}: sha256 {actual}, expected {digest}; the file was left in place "
                                        "but will not be used", [m])
            return path
        if not digest:
            raise FetchError(f"{path} does not exist (give its sha256 to look it up by name in the mirror "
                             "directories, or correct the path)")
        name, urls = path.name, []
    if not name:
        raise UserError(f"cannot tell a file name from {text!r}")
    check_relative_name(name)
    if not digest:
        raise UserError(f"a sha256 is required to download {text!r}; compute it with `sha256sum <file>` on a "
                         "trusted copy and give it in the config")
    dest = Path(dest_dir)
    hint = (f"To provide the file: put {name} in a mirror directory listed under data.mirrors in the config or in "
            f"${ENV_MIRROR}, or give its local path. It is verified by sha256 {digest}.")
    entries = _obtain(label=f"file {name!r}", files={name: digest}, dest=dest, mirror_subdirs=(),
                      mirrors=_mirror_list(mirrors), file_urls={name: urls}, archive_urls=(), archive=None,
                      timeout=timeout, progress=progress,
                      no_url_reason=f"{text}: not an existing file and not an http(s) or file URL", hint=hint)
    _write_manifest(dest, {"dataset": dest.name, "description": f"user-supplied file {text}", "licence": ""},
                    entries)
    return dest / name


def verify_manifest(folder: str | os.PathLike, names: Iterable[str] | None = None) -> None:
    """Check the files of a fetched ``folder`` against the sha256 its ``manifest.json`` recorded.

    ``names`` limits the check to those files (a name the manifest does not list is not checked). A folder
    without a manifest was not fetched (a mirror or a folder laid out by hand) and is read as it is. Raises
    :class:`ChecksumError` naming every file that changed or went missing since it was fetched, with both
    hashes, and how to fetch it again.
    """
    folder = Path(folder)
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        expected = {str(f): str(e["sha256"]) for f, e in listed.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise FetchError(f"{manifest}: unreadable manifest ({e!r}); delete it and run the fetch step again") from None
    wanted = list(expected) if names is None else [n for n in names if n in expected]
    bad: list[Mismatch] = []
    lines: list[str] = []
    for fname in wanted:
        path = folder / fname
        if not path.is_file():
            lines.append(f"  - {path}: missing (fetched with sha256 {expected[fname]})")
            bad.append(Mismatch(str(path), expected[fname], "", str(manifest)))
            continue
        actual = sha256sum(path)
        if actual != expected[fname]:
            lines.append(f"  - {path}: sha256 {actual}, but {MANIFEST} recorded {expected[fname]} when it was fetched")
            bad.append(Mismatch(str(path), expected[fname], actual, str(manifest)))
    if bad:
        raise ChecksumError("\n".join([f"{folder}: {len(bad)} raw file{'s' if len(bad) != 1 else ''} changed since "
                                        "they were fetched; they are not used:", *lines,
                                        f"To fetch them again, delete {manifest} and re-run the workflow (or "
                                        "`python -m cova fetch`): the fetch step replaces every file that does "
                                        "not verify."]), bad)


def verify_listed(path: str | os.PathLike) -> None:
    """:func:`verify_manifest` for one file: checked if its folder's ``manifest.json`` lists it."""
    path = Path(path)
    verify_manifest(path.parent, [path.name])


__all__ = ["ChecksumError", "ENV_MIRROR", "FetchError", "MANIFEST", "Mismatch", "default_mirrors", "fetch",
           "fetch_file", "sha256sum", "verify_listed", "verify_manifest"]
