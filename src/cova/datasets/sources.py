"""Registry of the real datasets the project can fetch: file names, sha256, mirrors, canonical URLs, licences.

Every checksum below is the sha256 of the upstream file (see the project's ``shared/datasets/README.md``); no
upstream publishes sha256 for Cora, COIL-20, Compound or WorldTrade, so those are the sha256 of the files
as distributed at the time the registry was written. :func:`cova.datasets.fetch.fetch` uses this registry.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePosixPath

from ..errors import UserError

_SHA256 = re.compile(r"[0-9a-f]{64}")
ARCHIVE_KINDS = (None, "tar.gz", "zip")


def check_relative_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is a safe relative POSIX path (no absolute path, no ``..``)."""
    p = PurePosixPath(name)
    if not name or "\\" in name or p.is_absolute() or any(part in ("..", ".", "") for part in name.split("/")):
        raise UserError(f"unsafe file name {name!r}: must be a relative path without '..' or '.' components")


URL_SCHEMES = ("http", "https", "file")


def source_file_name(url: str, filename: str | None = None) -> str:
    """The local name of the file a user-supplied ``source: {url, sha256, filename}`` downloads.

    ``filename`` if given, else the last segment of the URL's path, %-decoded, without query or fragment
    (``https://zenodo.org/records/1/files/my%20data.csv?download=1`` -> ``my data.csv``). The fetch step saves
    the file under this name and the dataset step reads it, so both derive it here. Raises ``ValueError`` for a
    URL that is not ``http(s)://`` or ``file://``, a URL whose path names no file, or an unsafe name.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in URL_SCHEMES:
        raise UserError(f"source url {url!r} must be an http(s):// or file:// URL (a local file is given as "
                         "params.path instead)")
    name = filename if filename is not None else PurePosixPath(urllib.parse.unquote(parts.path)).name
    if not name:
        raise UserError(f"cannot tell a file name from the URL {url!r} (its path names no file): give "
                         "source.filename, e.g. filename: data.csv")
    if "/" in name:
        raise UserError(f"source filename {name!r} must be a plain file name, without '/'")
    check_relative_name(name)
    return name


@dataclass(frozen=True)
class Source:
    """Where and how to obtain the raw files of one dataset.

    Attributes
    ----------
    name : dataset key (``data/raw/{name}/``).
    files : relative file name under the dataset folder -> lowercase hex sha256.
    mirror_subdirs : sub-folders of a mirror directory to look in (the mirror root is searched last).
    urls : canonical URLs, tried in order. With ``archive=None`` each is a base and file ``f`` is
        fetched from ``url + f``; otherwise each is the URL of one archive holding every file.
    archive : ``None``, ``"tar.gz"`` or ``"zip"``. Archive members are matched after stripping the
        archive's top folder (``cora/cora.content`` -> ``cora.content``).
    description, licence, notes : human-readable facts, copied into error messages and the manifest.
    """

    name: str
    files: dict[str, str]
    mirror_subdirs: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    archive: str | None = None
    description: str = ""
    licence: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        if not self.files:
            raise UserError(f"source {self.name!r} lists no files")
        for fname, digest in self.files.items():
            check_relative_name(fname)
            if not _SHA256.fullmatch(digest):
                raise UserError(f"source {self.name!r}: sha256 of {fname!r} must be 64 lowercase hex digits, "
                                 f"got {digest!r}")
        for sub in self.mirror_subdirs:
            check_relative_name(sub)
        if self.archive not in ARCHIVE_KINDS:
            raise UserError(f"source {self.name!r}: archive must be one of {ARCHIVE_KINDS}, got {self.archive!r}")
        # Tuples even if lists were passed: the dataclass is frozen, so bypass __setattr__.
        object.__setattr__(self, "mirror_subdirs", tuple(self.mirror_subdirs))
        object.__setattr__(self, "urls", tuple(self.urls))
        object.__setattr__(self, "files", dict(self.files))


def read_sha256sums(text: str) -> dict[str, str]:
    """Parse ``sha256sum`` output (``<hex>  <name>`` or ``<hex> *<name>`` per line) into name -> sha256."""
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.fullmatch(r"([0-9a-fA-F]{64}) [ *](.+)", line.rstrip("\r\n"))
        if m is None:
            raise UserError(f"line {lineno} is not '<sha256>  <file>': {line!r}")
        out[m[2]] = m[1].lower()
    return out


def _packaged_sha256sums(filename: str) -> dict[str, str]:
    """Checksums shipped as package data in ``cova/datasets/checksums/``."""
    text = resources.files("cova.datasets").joinpath("checksums", filename).read_text(encoding="utf-8")
    return read_sha256sums(text)


_MNIST_URLS = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/")
_MNIST_LICENCE = "CC BY-SA 3.0 (LeCun & Cortes)"

SOURCES: dict[str, Source] = {
    s.name: s
    for s in [
        Source(
            name="cora",
            files={
                "README": "ecfcfcdc830c6fe49a148c318044cd65d8335c9442c6ba5d9fba1bcee9bc7a0d",
                "cora.cites": "ec1a372391b7f0f60a6aff0084e8abd8f19f0faa7e1f2441a41c492042d5945e",
                "cora.content": "b8ebed0fd45e53995abafd1b70cf6a9fcc8f86abc5826d69b97fe6ca46e9c8ee",
            },
            mirror_subdirs=("cora",),
            urls=("https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz",),
            archive="tar.gz",
            description="Cora citation network (LINQS): 2708 papers x 1433 binary words, 7 classes, "
                        "5429 citation lines",
            licence="LINQS, research use",
            notes="No upstream checksum is published; sha256 of the LINQS files. cora.cites is "
                  "'<cited>\\t<citing>'.",
        ),
        Source(
            name="coil20",
            files=_packaged_sha256sums("coil20.sha256"),
            mirror_subdirs=("coil-20-proc",),
            urls=("https://www.cs.columbia.edu/CAVE/databases/SLAM_coil-20_coil-100/coil-20/coil-20-proc.zip",),
            archive="zip",
            description="COIL-20 processed: 1440 grayscale 128x128 PNGs, 20 objects x 72 poses",
            licence="Columbia CAVE, research use, cite Nene et al. 1996",
            notes="No upstream checksum is published; per-image sha256 in cova/datasets/checksums/coil20.sha256.",
        ),
        Source(
            name="mnist",
            files={
                "t10k-images-idx3-ubyte.gz": "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                "t10k-labels-idx1-ubyte.gz": "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
            },
            mirror_subdirs=("mnist",),
            urls=_MNIST_URLS,
            description="MNIST test set: 10,000 28x28 handwritten digits (IDX format)",
            licence=_MNIST_LICENCE,
            notes="Only the t10k test set: offline runs use it and must say so. The 60k training set is "
                  "the separate source 'mnist_train'.",
        ),
        Source(
            name="mnist_train",
            files={
                "train-images-idx3-ubyte.gz": "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
                "train-labels-idx1-ubyte.gz": "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
            },
            mirror_subdirs=("mnist",),
            urls=_MNIST_URLS,
            description="MNIST training set: 60,000 28x28 handwritten digits (IDX format)",
            licence=_MNIST_LICENCE,
            notes="Not in the project's offline mirror; train-images-idx3-ubyte.gz is 9,912,422 bytes "
                  "(md5 f68b3c2dcbeaaa9fbdd348bbdeb94873).",
        ),
        Source(
            name="fashion_mnist",
            files={
                "t10k-images-idx3-ubyte.gz": "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa",
                "t10k-labels-idx1-ubyte.gz": "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05",
                "train-images-idx3-ubyte.gz": "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7",
                "train-labels-idx1-ubyte.gz": "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056",
            },
            mirror_subdirs=("fashion-mnist", "fashion_mnist"),
            urls=("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",),
            description="Fashion-MNIST: 70,000 28x28 Zalando article images, 10 classes (IDX format)",
            licence="MIT (Zalando)",
            notes="The Debian package dataset-fashion-mnist installs the four files in "
                  "/usr/share/datasets/fashion-mnist/: list /usr/share/datasets as a mirror.",
        ),
        Source(
            name="compound",
            files={"Compound.txt": "da3c68948d1a00f27e213c69f1a247e796dd44d70b30da4ca58e9567393ecf6a"},
            mirror_subdirs=("compound",),
            urls=("http://cs.joensuu.fi/sipu/datasets/",),
            description="Compound (Zahn 1971): 399 2-D points, 6 clusters; columns x, y, label",
            licence="SIPU clustering benchmark, cite Zahn 1971",
        ),
        Source(
            name="worldtrade",
            files={"world_trade.paj": "c53b28dae098205b77cd35ef026fb63c661b73560c4995ddd3f45c48a2af93de"},
            mirror_subdirs=("worldtrade",),
            urls=(),
            description="WorldTrade (DOSNES): 80 countries, directed trade arcs, partitions incl. Continent",
            licence="Pajek data (de Nooy, Mrvar & Batagelj), research use",
            notes="Pajek 'metalWT'; copy it from the DOSNES authors' demo. No public canonical URL is known.",
        ),
    ]
}

__all__ = ["ARCHIVE_KINDS", "SOURCES", "Source", "URL_SCHEMES", "check_relative_name", "read_sha256sums",
           "source_file_name"]
