"""Dataset fetching: mirrors, downloads (per file and archives), resume, verification, messages, real sources.

Every HTTP request goes to a server started here on 127.0.0.1; nothing leaves the machine.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import re
import socket
import tarfile
import threading
import urllib.parse
import zipfile
from pathlib import Path

import pytest

from cova.datasets import fetch as fetch_mod
from cova.datasets.fetch import (
    ENV_MIRROR,
    MANIFEST,
    ChecksumError,
    FetchError,
    default_mirrors,
    fetch,
    fetch_file,
    sha256sum,
)
from cova.datasets.sources import SOURCES, Source, read_sha256sums, source_file_name

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"  # shared/ beside the clone
DEBIAN = Path("/usr/share/datasets")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


A = b"alpha line\n" * 300
B = bytes(range(256)) * 40
BIG = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(8000))  # 256 kB, not compressible
TOY = {"a.txt": A, "sub/b.bin": B}


def toy_source(urls: tuple[str, ...] = (), archive: str | None = None, files: dict[str, bytes] = TOY) -> Source:
    return Source(name="toy", files={n: sha(b) for n, b in files.items()}, mirror_subdirs=("toy",), urls=urls,
                  archive=archive, description="test data")


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)


def listing(folder: Path) -> set[str]:
    """Every file below ``folder`` (hidden temp/.part files included), as relative POSIX paths."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()


# ----------------------------------------------------------------------------------------- fixtures


class _State:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[tuple[str, str | None]] = []
        self.cut: dict[str, int] = {}  # path -> bytes to send before dropping the connection (once)
        self.ranges = True
        self.lock = threading.Lock()


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves files under ``server.state.root``; honours ``Range: bytes=N-``; can cut a body short."""

    def do_GET(self) -> None:  # noqa: N802
        st: _State = self.server.state  # type: ignore[attr-defined]
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        rng = self.headers.get("Range")
        with st.lock:
            st.requests.append((rel, rng))
            cut = st.cut.pop(rel, None)
        path = st.root / rel
        if not rel or not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start, status = 0, 200
        if rng and st.ranges:
            start = int(re.fullmatch(r"bytes=(\d+)-", rng)[1])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        body = data[start:]
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes" if st.ranges else "none")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        self.wfile.write(body if cut is None else body[:cut])

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch):
    """No proxy for 127.0.0.1 and no mirror from the caller's environment."""
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv(ENV_MIRROR, raising=False)


@pytest.fixture
def server(tmp_path):
    """A threaded HTTP server on a free 127.0.0.1 port; ``server.url`` is its base URL."""
    root = tmp_path / "www"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.state = _State(root)  # type: ignore[attr-defined]
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}/"  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.fixture
def closed_url():
    """A URL on a 127.0.0.1 port nobody listens on (connection refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def make_archive(path: Path, kind: str, members: dict[str, bytes]) -> None:
    """A tar.gz or zip holding ``members`` (name -> bytes), plus a directory entry for tar."""
    if kind == "tar.gz":
        with tarfile.open(path, "w:gz") as tf:
            tops = {n.split("/", 1)[0] for n in members if "/" in n and not n.startswith("..")}
            for top in sorted(tops):
                info = tarfile.TarInfo(top)
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    else:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in members.items():
                zf.writestr(name, data)


# ------------------------------------------------------------------------------------------ basics


def test_sha256sum_streams_large_files(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_mod, "_CHUNK", 1000)
    (tmp_path / "f").write_bytes(BIG)
    assert sha256sum(tmp_path / "f") == sha(BIG)


def test_source_rejects_unsafe_names_and_bad_checksums():
    with pytest.raises(ValueError, match="unsafe"):
        Source(name="x", files={"../etc/passwd": sha(b"")})
    with pytest.raises(ValueError, match="unsafe"):
        Source(name="x", files={"/abs": sha(b"")})
    with pytest.raises(ValueError, match="64 lowercase hex"):
        Source(name="x", files={"f": "abc"})
    with pytest.raises(ValueError, match="archive"):
        Source(name="x", files={"f": sha(b"")}, archive="rar")


def test_default_mirrors_config_then_env_existing_unique(tmp_path, monkeypatch):
    a, b, c = (tmp_path / n for n in "abc")
    for d in (a, b, c):
        d.mkdir()
    assert default_mirrors() == []
    monkeypatch.setenv(ENV_MIRROR, os.pathsep.join([str(b), str(tmp_path / "nope"), str(a), ""]))
    got = default_mirrors([str(a), str(tmp_path / "missing"), c])
    assert got == [a.resolve(), c.resolve(), b.resolve()]


# ------------------------------------------------------------------------------------------- URLs


def test_per_file_download_writes_manifest_and_is_not_repeated(server, tmp_path):
    write_tree(server.state.root / "ds", TOY)
    src = toy_source(urls=(server.url + "ds/",))
    dest = tmp_path / "raw" / "toy"
    assert fetch(src, dest, mirrors=[]) == dest
    assert listing(dest) == {"a.txt", "sub/b.bin", MANIFEST}
    for name, data in TOY.items():
        assert (dest / name).read_bytes() == data
    man = json.loads((dest / MANIFEST).read_text())
    assert man["dataset"] == "toy" and man["n_files"] == 2
    assert man["files"]["sub/b.bin"] == {"sha256": sha(B), "size": len(B), "source": server.url + "ds/sub/b.bin"}
    assert sorted(r[0] for r in server.state.requests) == ["ds/a.txt", "ds/sub/b.bin"]

    mtime = (dest / MANIFEST).stat().st_mtime_ns
    fetch(src, dest, mirrors=[])
    assert len(server.state.requests) == 2, "verified files must not be downloaded again"
    assert (dest / MANIFEST).stat().st_mtime_ns == mtime, "an unchanged manifest is not rewritten"

    (dest / "a.txt").unlink()
    fetch(src, dest, mirrors=[])
    assert server.state.requests[2:] == [("ds/a.txt", None)]
    assert json.loads((dest / MANIFEST).read_text())["files"]["sub/b.bin"]["source"] == server.url + "ds/sub/b.bin"


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_archive_download_strips_top_folder(server, tmp_path, kind):
    members = {f"toy-1.0/{n}": d for n, d in TOY.items()} | {"toy-1.0/unwanted.txt": b"ignored"}
    make_archive(server.state.root / f"toy.{kind}", kind, members)
    src = toy_source(urls=(server.url + "nothing-here." + kind, server.url + f"toy.{kind}"), archive=kind)
    dest = tmp_path / "toy"
    fetch(src, dest, mirrors=[])
    assert listing(dest) == {"a.txt", "sub/b.bin", MANIFEST}, "no archive or .part may remain"
    assert (dest / "sub/b.bin").read_bytes() == B
    entry = json.loads((dest / MANIFEST).read_text())["files"]["a.txt"]
    assert entry["source"] == server.url + f"toy.{kind}" and entry["member"] == "toy-1.0/a.txt"
    n = len(server.state.requests)
    assert n == 2  # the 404 then the archive
    fetch(src, dest, mirrors=[])
    assert len(server.state.requests) == n


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_unsafe_archive_is_rejected(server, tmp_path, kind):
    make_archive(server.state.root / f"evil.{kind}", kind, {"a.txt": A, "../evil.txt": b"gotcha"})
    src = toy_source(urls=(server.url + f"evil.{kind}",), archive=kind, files={"a.txt": A})
    dest = tmp_path / "deep" / "toy"
    with pytest.raises(FetchError, match="unsafe archive member '../evil.txt'"):
        fetch(src, dest, mirrors=[])
    assert listing(dest) == set()
    assert not (tmp_path / "deep" / "evil.txt").exists()


def test_archive_link_member_is_rejected(server, tmp_path):
    with tarfile.open(server.state.root / "link.tar.gz", "w:gz") as tf:
        info = tarfile.TarInfo("toy/real.txt")
        info.size = len(A)
        tf.addfile(info, io.BytesIO(A))
        link = tarfile.TarInfo("toy/a.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "real.txt"
        tf.addfile(link)
    src = toy_source(urls=(server.url + "link.tar.gz",), archive="tar.gz", files={"a.txt": A})
    with pytest.raises(FetchError, match="'toy/a.txt' is not a regular file"):
        fetch(src, tmp_path / "toy", mirrors=[])
    assert listing(tmp_path / "toy") == set()


def test_interrupted_download_is_resumed_with_range(server, tmp_path):
    write_tree(server.state.root, {"big.bin": BIG})
    src = toy_source(urls=(server.url,), files={"big.bin": BIG})
    dest = tmp_path / "toy"
    server.state.cut["big.bin"] = 100_000
    with pytest.raises(FetchError, match="interrupted after 100000 of 256000 bytes") as err:
        fetch(src, dest, mirrors=[])
    assert not isinstance(err.value, ChecksumError)
    assert listing(dest) == {".big.bin.part"}
    assert (dest / ".big.bin.part").read_bytes() == BIG[:100_000]

    fetch(src, dest, mirrors=[])
    assert server.state.requests == [("big.bin", None), ("big.bin", "bytes=100000-")]
    assert (dest / "big.bin").read_bytes() == BIG
    assert listing(dest) == {"big.bin", MANIFEST}


def test_resume_of_an_archive(server, tmp_path):
    make_archive(server.state.root / "toy.zip", "zip", {f"toy/{n}": d for n, d in {"big.bin": BIG}.items()})
    size = (server.state.root / "toy.zip").stat().st_size
    src = toy_source(urls=(server.url + "toy.zip",), archive="zip", files={"big.bin": BIG})
    dest = tmp_path / "toy"
    server.state.cut["toy.zip"] = size // 2
    with pytest.raises(FetchError, match="kept .toy.zip.part to resume"):
        fetch(src, dest, mirrors=[])
    fetch(src, dest, mirrors=[])
    assert server.state.requests[-1] == ("toy.zip", f"bytes={size // 2}-")
    assert (dest / "big.bin").read_bytes() == BIG
    assert listing(dest) == {"big.bin", MANIFEST}


def test_stale_part_is_redownloaded_from_scratch(server, tmp_path):
    write_tree(server.state.root, {"big.bin": BIG})
    src = toy_source(urls=(server.url,), files={"big.bin": BIG})
    dest = tmp_path / "toy"
    dest.mkdir()
    (dest / ".big.bin.part").write_bytes(b"x" * 1000)  # left by some other, wrong download
    fetch(src, dest, mirrors=[])
    assert server.state.requests == [("big.bin", "bytes=1000-"), ("big.bin", None)]
    assert (dest / "big.bin").read_bytes() == BIG


def test_complete_part_is_verified_after_416(server, tmp_path):
    write_tree(server.state.root, {"big.bin": BIG})
    src = toy_source(urls=(server.url,), files={"big.bin": BIG})
    dest = tmp_path / "toy"
    dest.mkdir()
    (dest / ".big.bin.part").write_bytes(BIG)  # killed after the download, before the rename
    fetch(src, dest, mirrors=[])
    assert server.state.requests == [("big.bin", f"bytes={len(BIG)}-")]
    assert listing(dest) == {"big.bin", MANIFEST}


def test_server_ignoring_range_restarts_cleanly(server, tmp_path):
    write_tree(server.state.root, {"big.bin": BIG})
    server.state.ranges = False
    src = toy_source(urls=(server.url,), files={"big.bin": BIG})
    dest = tmp_path / "toy"
    dest.mkdir()
    (dest / ".big.bin.part").write_bytes(BIG[:5000])
    fetch(src, dest, mirrors=[])
    assert server.state.requests == [("big.bin", "bytes=5000-")]  # answered 200 with the whole file
    assert (dest / "big.bin").read_bytes() == BIG


@pytest.mark.parametrize("kind", [None, "zip"])
def test_corrupted_download_raises_and_leaves_nothing(server, tmp_path, kind):
    bad = b"tampered\n" * 300
    if kind is None:
        write_tree(server.state.root, {"a.txt": bad})
        url = server.url + "a.txt"
    else:
        make_archive(server.state.root / "toy.zip", "zip", {"toy/a.txt": bad})
        url = server.url + "toy.zip"
    src = toy_source(urls=(server.url if kind is None else url,), archive=kind, files={"a.txt": A})
    dest = tmp_path / "toy"
    dest.mkdir()
    if kind is None:
        (dest / ".a.txt.part").write_bytes(bad[:100])  # an earlier partial download of the same bad file
    with pytest.raises(ChecksumError) as err:
        fetch(src, dest, mirrors=[])
    msg = str(err.value)
    assert "a.txt" in msg and sha(A) in msg and sha(bad) in msg and url in msg
    assert err.value.mismatches and err.value.mismatches[-1].actual == sha(bad)
    assert listing(dest) == set(), "neither the file nor a .part of a complete wrong download may remain"


def test_progress_lines_are_throttled(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fetch_mod, "_CHUNK", 1024)  # 250 reads
    write_tree(server.state.root, {"big.bin": BIG})
    fetch(toy_source(urls=(server.url,), files={"big.bin": BIG}), tmp_path / "toy", mirrors=[])
    pct = [line for line in capsys.readouterr().err.splitlines() if "%" in line]
    assert 10 <= len(pct) <= 21
    assert pct[-1].endswith("100% (256.0 kB of 256.0 kB)")
    fetch(toy_source(urls=(server.url,), files={"big.bin": BIG}), tmp_path / "quiet", mirrors=[], progress=False)
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------------------------- mirrors


def test_mirror_is_used_without_any_request(server, tmp_path, capsys):
    mirror = tmp_path / "mirror"
    write_tree(mirror / "toy", TOY)
    write_tree(server.state.root / "ds", TOY)
    dest = tmp_path / "toy"
    dest.mkdir()
    (dest / "a.txt").write_bytes(b"stale")  # does not verify: replaced by the mirror copy
    fetch(toy_source(urls=(server.url + "ds/",)), dest, mirrors=[tmp_path / "absent", mirror])
    assert server.state.requests == []
    assert (dest / "a.txt").read_bytes() == A
    assert listing(dest) == {"a.txt", "sub/b.bin", MANIFEST}
    files = json.loads((dest / MANIFEST).read_text())["files"]
    assert files["sub/b.bin"]["source"] == str(mirror / "toy" / "sub" / "b.bin")
    assert oct((dest / "a.txt").stat().st_mode & 0o777) == oct(0o644)
    assert f"copied 2 files from {mirror}" in capsys.readouterr().err


def test_corrupted_mirror_copy_is_skipped_for_next_mirror_and_url(server, tmp_path, capsys):
    bad_mirror, good_mirror = tmp_path / "m1", tmp_path / "m2"
    write_tree(bad_mirror / "toy", {"a.txt": b"corrupt", "sub/b.bin": b"corrupt too"})
    write_tree(good_mirror, {"a.txt": A})  # in the mirror root: also searched
    write_tree(server.state.root / "ds", TOY)
    dest = tmp_path / "toy"
    fetch(toy_source(urls=(server.url + "ds/",)), dest, mirrors=[bad_mirror, good_mirror])
    assert (dest / "a.txt").read_bytes() == A and (dest / "sub/b.bin").read_bytes() == B
    files = json.loads((dest / MANIFEST).read_text())["files"]
    assert files["a.txt"]["source"] == str(good_mirror / "a.txt")
    assert files["sub/b.bin"]["source"] == server.url + "ds/sub/b.bin"
    assert server.state.requests == [("ds/sub/b.bin", None)]
    err = capsys.readouterr().err
    assert f"skipping corrupted mirror copy {bad_mirror / 'toy' / 'a.txt'}" in err and sha(b"corrupt") in err
    assert listing(dest) == {"a.txt", "sub/b.bin", MANIFEST}


def test_corrupted_mirror_only_gives_checksum_error(tmp_path):
    mirror = tmp_path / "m"
    write_tree(mirror / "toy", {"a.txt": b"corrupt"})
    dest = tmp_path / "toy"
    with pytest.raises(ChecksumError, match=re.escape(str(mirror / "toy" / "a.txt"))):
        fetch(toy_source(files={"a.txt": A}), dest, mirrors=[mirror])
    assert listing(dest) == set()


def test_env_mirror_is_honoured(tmp_path, monkeypatch, closed_url):
    mirror = tmp_path / "envmirror"
    write_tree(mirror / "toy", TOY)
    monkeypatch.setenv(ENV_MIRROR, os.pathsep.join([str(tmp_path / "missing"), str(mirror)]))
    dest = fetch(toy_source(urls=(closed_url,)), tmp_path / "toy")
    files = json.loads((dest / MANIFEST).read_text())["files"]
    assert files["a.txt"]["source"] == str(mirror.resolve() / "toy" / "a.txt")


# ----------------------------------------------------------------------------------------- errors


def test_nothing_reachable_lists_everything_tried(tmp_path, closed_url):
    empty = tmp_path / "empty"
    empty.mkdir()
    dest = tmp_path / "toy"
    with pytest.raises(FetchError) as err:
        fetch(toy_source(urls=(closed_url,)), dest, mirrors=[empty, tmp_path / "absent"], timeout=5)
    assert not isinstance(err.value, ChecksumError)
    msg = str(err.value)
    for needle in ["dataset 'toy'", f"mirror {empty}: a.txt, sub/b.bin not found", f"mirror {tmp_path / 'absent'}: "
                   "not a directory", f"{closed_url}a.txt: unreachable", f"{closed_url}sub/b.bin: skipped",
                   "<mirror>/toy/", "data.mirrors", ENV_MIRROR]:
        assert needle in msg, needle
    assert listing(dest) == set()


def test_worldtrade_without_mirror_says_no_url_is_known(tmp_path):
    with pytest.raises(FetchError) as err:
        fetch("worldtrade", tmp_path / "wt")  # mirrors=None and $COVA_DATA_MIRROR unset
    msg = str(err.value)
    assert "no public canonical URL is known for 'worldtrade'" in msg
    assert "no mirror directory configured" in msg and "<mirror>/worldtrade/world_trade.paj" in msg
    with pytest.raises(ValueError, match="unknown dataset source 'nope'"):
        fetch("nope", tmp_path / "x")


# ------------------------------------------------------------------------------------- fetch_file


def test_fetch_file_local_path_verified_in_place(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_bytes(A)
    assert fetch_file(str(path), sha(A), tmp_path / "raw") == path
    assert fetch_file(str(path), None, tmp_path / "raw") == path
    assert not (tmp_path / "raw").exists(), "a local file is used in place, not copied"
    with pytest.raises(ChecksumError, match=sha(B)):
        fetch_file(str(path), sha(B), tmp_path / "raw")
    assert path.read_bytes() == A
    with pytest.raises(FetchError, match="does not exist"):
        fetch_file(str(tmp_path / "absent.csv"), None, tmp_path / "raw")
    mirror = tmp_path / "m"
    write_tree(mirror, {"absent.csv": B})
    got = fetch_file(str(tmp_path / "absent.csv"), sha(B), tmp_path / "raw", mirrors=[mirror], progress=False)
    assert got == tmp_path / "raw" / "absent.csv" and got.read_bytes() == B


def test_fetch_file_url_and_mirror(server, tmp_path, closed_url):
    write_tree(server.state.root, {"data file.csv": A})
    url = server.url + "data%20file.csv"
    with pytest.raises(ValueError, match="sha256 is required"):
        fetch_file(url, "", tmp_path / "raw")
    got = fetch_file(url, sha(A), tmp_path / "raw", mirrors=[])
    assert got == tmp_path / "raw" / "data file.csv" and got.read_bytes() == A
    fetch_file(url, sha(A), tmp_path / "raw", mirrors=[])
    assert len(server.state.requests) == 1
    man = json.loads((tmp_path / "raw" / MANIFEST).read_text())
    assert man["files"] == {"data file.csv": {"sha256": sha(A), "size": len(A), "source": url}}

    mirror = tmp_path / "m"
    write_tree(mirror, {"other.csv": B})
    assert fetch_file(closed_url + "other.csv", sha(B), tmp_path / "raw2", mirrors=[mirror]).read_bytes() == B
    with pytest.raises(FetchError, match="other.csv: unreachable"):
        fetch_file(closed_url + "other.csv", sha(B), tmp_path / "raw3", mirrors=[])


def test_fetch_file_url_with_query_saves_the_name_the_loader_reads(server, tmp_path):
    """Zenodo/figshare-style URLs: the query is not part of the name, %-escapes are decoded."""
    write_tree(server.state.root, {"records/7/files/my data.csv": A})
    url = server.url + "records/7/files/my%20data.csv?download=1"
    got = fetch_file(url, sha(A), tmp_path / "raw", mirrors=[], progress=False)
    assert got == tmp_path / "raw" / source_file_name(url) == tmp_path / "raw" / "my data.csv"
    assert got.read_bytes() == A and server.state.requests == [("records/7/files/my data.csv", None)]
    named = fetch_file(server.url + "records/7/files/my%20data.csv?download=1", sha(A), tmp_path / "named",
                       mirrors=[], progress=False, filename="iris.csv")
    assert named == tmp_path / "named" / "iris.csv" and named.read_bytes() == A
    assert json.loads((tmp_path / "named" / MANIFEST).read_text())["files"]["iris.csv"]["sha256"] == sha(A)


def test_fetch_file_file_url_is_copied_and_listed(tmp_path):
    write_tree(tmp_path / "src", {"d.csv": B})
    got = fetch_file((tmp_path / "src" / "d.csv").as_uri(), sha(B), tmp_path / "raw", mirrors=[], progress=False)
    assert got == tmp_path / "raw" / "d.csv" and got.read_bytes() == B
    assert set(json.loads((tmp_path / "raw" / MANIFEST).read_text())["files"]) == {"d.csv"}
    with pytest.raises(ChecksumError, match=sha(B)):
        fetch_file((tmp_path / "src" / "d.csv").as_uri(), sha(A), tmp_path / "raw2", mirrors=[], progress=False)
    assert listing(tmp_path / "raw2") == set()


# ------------------------------------------------------------------------------------ real sources


def _readme_sha256() -> dict[str, str]:
    text = (SHARED / "README.md").read_text()
    return {name: digest for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+)$", text, flags=re.M)}


def test_registry_matches_the_mirror_readme():
    assert SHARED.is_dir(), f"the project's offline datasets are expected beside the clone: {SHARED}"
    for rel, digest in _readme_sha256().items():
        sub, fname = rel.split("/", 1)
        owners = [s for s in SOURCES.values() if sub in s.mirror_subdirs and fname in s.files]
        assert owners and all(s.files[fname] == digest for s in owners), rel
    text = (SHARED / "README.md").read_text()
    for digest in SOURCES["mnist_train"].files.values():
        assert digest in text
    assert SOURCES["coil20"].files == read_sha256sums((SHARED / "coil-20-proc" / "SHA256SUMS").read_text())
    assert len(SOURCES["coil20"].files) == 1440
    assert SOURCES["worldtrade"].urls == ()


@pytest.mark.parametrize("name,n_files", [("cora", 3), ("mnist", 2), ("compound", 1), ("worldtrade", 1),
                                          ("coil20", 1440)])
def test_real_source_from_project_mirror(tmp_path, name, n_files):
    assert SHARED.is_dir(), f"the project's offline datasets are expected beside the clone: {SHARED}"
    dest = fetch(name, tmp_path / name, mirrors=[SHARED], urls=(), progress=False)
    man = json.loads((dest / MANIFEST).read_text())
    assert man["dataset"] == name and man["n_files"] == n_files
    assert set(man["files"]) == set(SOURCES[name].files)
    assert all(e["source"].startswith(str(SHARED) + "/") for e in man["files"].values())
    assert listing(dest) == set(SOURCES[name].files) | {MANIFEST}
    if name == "coil20":
        assert len(list(dest.glob("obj*__*.png"))) == 1440


def test_fashion_mnist_from_debian_package(tmp_path):
    if not (DEBIAN / "fashion-mnist").is_dir():
        pytest.skip(f"{DEBIAN}/fashion-mnist is absent (Debian package dataset-fashion-mnist not installed)")
    dest = fetch("fashion_mnist", tmp_path / "fashion_mnist", mirrors=[DEBIAN], urls=(), progress=False)
    man = json.loads((dest / MANIFEST).read_text())
    assert man["n_files"] == 4 and man["licence"] == "MIT (Zalando)"
    assert {e["source"] for e in man["files"].values()} == {str(DEBIAN / "fashion-mnist" / f)
                                                             for f in SOURCES["fashion_mnist"].files}
