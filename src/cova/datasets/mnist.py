"""MNIST and Fashion-MNIST from their IDX files, through one IDX reader (:func:`read_idx`).

Sources
-------
- MNIST: LeCun, Cortes & Burges, http://yann.lecun.com/exdb/mnist/ (mirror
  https://ossci-datasets.s3.amazonaws.com/mnist/). The project's offline mirror holds only the 10k **test** set
  (``t10k-*``); the 60k training files are fetched separately (fetch source ``mnist_train``).
- Fashion-MNIST: Xiao, Rasul & Vollgraf 2017, http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/
  (offline: Debian package ``dataset-fashion-mnist``, all four files in ``/usr/share/datasets/fashion-mnist/``).

Both use the same file names: ``{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz`` (an uncompressed file without
``.gz`` is accepted too).
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import numpy as np

from ..constraints import SEED, StrOptions, declare, integer
from ..errors import UserError
from .base import Dataset

#: IDX type code (third magic byte) -> big-endian numpy dtype.
IDX_DTYPES: dict[int, str] = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

FASHION_MNIST_CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
                         "Bag", "Ankle boot"]

_PREFIX = {"test": ("t10k",), "train": ("train",), "all": ("train", "t10k")}


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read one IDX file (optionally gzip-compressed, by the ``.gz`` suffix) into a native-endian array.

    The header is two zero bytes, a type code (0x08 ubyte, 0x09 byte, 0x0B int16, 0x0C int32, 0x0D float32,
    0x0E float64), the number of dimensions ``n``, then ``n`` big-endian uint32 sizes. The data must hold
    exactly ``prod(sizes)`` items: a bad magic number, a truncated or over-long file, or a corrupt gzip stream
    raise ``ValueError`` naming the file.
    """
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as f:
                raw = f.read()
        else:
            raw = path.read_bytes()
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise UserError(f"IDX file {path}: corrupt or truncated gzip stream ({e})") from e
    if len(raw) < 4:
        raise UserError(f"IDX file {path}: only {len(raw)} bytes, too short for the 4-byte magic number")
    if raw[0] != 0 or raw[1] != 0 or raw[2] not in IDX_DTYPES:
        raise UserError(f"IDX file {path}: bad magic number 0x{raw[:4].hex()} (expected 0x0000TTNN with type code "
                         f"TT in {[hex(t) for t in IDX_DTYPES]}); not an IDX file?")
    dtype, ndim = np.dtype(IDX_DTYPES[raw[2]]), raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise UserError(f"IDX file {path}: truncated header ({len(raw)} bytes, {header} needed for {ndim} dims)")
    shape = tuple(int(s) for s in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    found = len(raw) - header
    if found != expected:
        kind = "truncated" if found < expected else "has trailing bytes"
        raise UserError(f"IDX file {path}: {kind}: shape {shape} of {dtype} needs {expected} data bytes, "
                         f"found {found}")
    return np.frombuffer(raw, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def _idx_file(dirs: list[Path], name: str) -> Path | None:
    for d in dirs:
        for candidate in (d / f"{name}.gz", d / name):
            if candidate.is_file():
                return candidate
    return None


def _read_pair(dirs: list[Path], prefix: str) -> tuple[np.ndarray, np.ndarray]:
    raw_dir = dirs[0]
    images = read_idx(_idx_file(dirs, f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(_idx_file(dirs, f"{prefix}-labels-idx1-ubyte"))
    if images.ndim != 3 or images.dtype != np.uint8:
        raise UserError(f"{raw_dir}/{prefix}-images: expected a 3-D ubyte IDX (magic 2051), got {images.dtype} "
                         f"{images.shape}")
    if labels.ndim != 1 or labels.dtype != np.uint8:
        raise UserError(f"{raw_dir}/{prefix}-labels: expected a 1-D ubyte IDX (magic 2049), got {labels.dtype} "
                         f"{labels.shape}")
    if images.shape[0] != labels.shape[0]:
        raise UserError(f"{raw_dir}/{prefix}: {images.shape[0]} images but {labels.shape[0]} labels")
    return images, labels


def per_class_subset(y: np.ndarray, n_per_class: int, random_state: int) -> np.ndarray:
    """Indices of a seeded subset of ``n_per_class`` rows of every class, in the original row order.

    For each class in label order, a permutation of its rows from ``np.random.default_rng(random_state)`` is
    cut to ``n_per_class`` (all rows if the class is smaller); the kept indices are then sorted.
    """
    if n_per_class < 1:
        raise UserError(f"n_per_class must be >= 1, got {n_per_class}")
    rng = np.random.default_rng(random_state)
    keep = np.concatenate([rng.permutation(np.flatnonzero(y == j))[:n_per_class] for j in np.unique(y)])
    return np.sort(keep)


def _load_idx_dataset(title: str, raw_dir: str | os.PathLike, split: str, n_per_class: int | None,
                      random_state: int, normalize: bool, class_names: list[str], note: str) -> Dataset:
    raw_dir = Path(raw_dir)
    dirs = [raw_dir]
    if title == "MNIST":  # the fetch step keeps MNIST's test and training files in data/raw/{mnist,mnist_train}/
        dirs += [raw_dir.parent / s for s in ("mnist", "mnist_train") if raw_dir.parent / s != raw_dir]
    files = [f"{p}-{kind}-ubyte" for p in _PREFIX[split] for kind in ("images-idx3", "labels-idx1")]
    missing = [f"{f}.gz" for f in files if _idx_file(dirs, f) is None]
    if missing:
        hint = (" The offline MNIST mirror holds only the 10k test set (t10k-*): use split='test', or fetch the "
                "training files (fetch source 'mnist_train').") if title == "MNIST" else ""
        raise FileNotFoundError(f"{title} split={split!r} needs {missing} in {', '.join(map(str, dirs))}, which "
                                f"are missing.{hint}")
    parts = [_read_pair(dirs, p) for p in _PREFIX[split]]
    images = np.concatenate([im for im, _ in parts])
    y = np.concatenate([lab for _, lab in parts]).astype(np.int64)
    n_total = int(len(y))
    if n_per_class is not None:
        keep = per_class_subset(y, n_per_class, random_state)
        images, y = images[keep], y[keep]
    X = images.reshape(len(images), -1).astype(np.float64)
    if normalize:
        X /= 255.0
    subset = "all rows" if n_per_class is None else f"seeded subset of {n_per_class} per class (original order)"
    return Dataset(X, y, class_names, meta={
        "source": title, "split": split, "files": [f"{f}.gz" for f in files], "n_in_split": n_total,
        "n_per_class": n_per_class, "random_state": random_state, "normalize": normalize,
        "pixel_scale": "x/255" if normalize else "0..255", "subset": subset, "n_samples": int(len(y)),
        "image_shape": list(images.shape[1:]), "note": note})


#: The options of :func:`mnist` and :func:`fashion_mnist`.
_IDX_OPTIONS = {"split": [StrOptions(set(_PREFIX))], "n_per_class": [integer(1, None), None], "random_state": SEED,
                "normalize": ["boolean"]}


@declare(_IDX_OPTIONS)
def mnist(raw_dir: str | os.PathLike, split: str = "test", n_per_class: int | None = None, random_state: int = 0,
          normalize: bool = True) -> Dataset:
    """MNIST digits (28×28, 10 classes ``"0".."9"``) from the IDX files in ``raw_dir``.

    ``split``: ``"test"`` (10,000, ``t10k-*``), ``"train"`` (60,000) or ``"all"`` (70,000: train rows first, then
    test). The offline mirror holds only the test set; a split needing the missing training files raises
    ``FileNotFoundError`` naming them. A file absent from ``raw_dir`` is also looked for in the sibling folders
    ``mnist/`` and ``mnist_train/`` (the fetch step's ``data/raw/{source}/`` layout keeps the two sources apart,
    so ``split="all"`` reads both). ``X`` = pixels row-major, divided by 255 if ``normalize`` (else 0..255),
    float64. ``n_per_class``: seeded subset (:func:`per_class_subset`), rows kept in their original order.
    """
    note = ("offline MNIST is the 10k test set only" if split == "test"
            else "uses the 60k MNIST training files (not in the offline mirror)")
    return _load_idx_dataset("MNIST", raw_dir, split, n_per_class, random_state, normalize,
                             [str(j) for j in range(10)], note)


@declare(_IDX_OPTIONS)
def fashion_mnist(raw_dir: str | os.PathLike, split: str = "test", n_per_class: int | None = None,
                  random_state: int = 0, normalize: bool = True) -> Dataset:
    """Fashion-MNIST (28×28, 10 classes, names as in Xiao et al. 2017) from the IDX files in ``raw_dir``.

    Same splits, scaling and subset as :func:`mnist` (test 10,000; train 60,000; all 70,000 = train then test).
    Class names, by label 0..9: T-shirt/top, Trouser, Pullover, Dress, Coat, Sandal, Shirt, Sneaker, Bag,
    Ankle boot.
    """
    return _load_idx_dataset("Fashion-MNIST", raw_dir, split, n_per_class, random_state, normalize,
                             FASHION_MNIST_CLASSES, f"Fashion-MNIST {split} split")
