"""Places2 CNN features, supplied by the user (they are not available anywhere public).

COVA (Sec. 4, Figs. 3–8) used 36,500 Places2 images (365 classes × 100, from the Places365 validation set
``val_256.tar``) described by 4,096-d CNN features (a Places CNN's fc7 layer). To use real features, extract them
yourself and save one of:

- ``.npz`` with arrays ``X`` (l×d float) and ``labels`` (l,) (integer class ids or strings), optionally
  ``label_names`` (one per integer class id, ``label_names[k]`` names class ``k``);
- ``.npy`` holding ``X``, plus a separate ``labels`` ``.npy`` (pass its path as ``labels``);
- ``.h5``/``.hdf5`` with datasets ``X``, ``labels`` and optionally ``label_names`` (needs ``h5py``).

Nothing is unpickled (``allow_pickle=False``). Without real features, use the clearly labelled synthetic
stand-in :func:`cova.datasets.synthetic.places_shaped`, or MNIST / Fashion-MNIST / COIL-20 (see
``docs/papers.md``, COVA, for how the Places2 protocols are run on stand-ins).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..constraints import NON_EMPTY_STR, SEED, declare, integer
from ..errors import UserError
from .base import Dataset
from .generic import encode_labels
from .mnist import per_class_subset

PAPER_SHAPE = (36500, 4096)


def _read(features: Path, labels: str | os.PathLike | None) -> tuple[np.ndarray, np.ndarray, list[str] | None]:
    suffix = features.suffix.lower()
    if suffix == ".npy":
        if labels is None:
            raise UserError(f"{features}: .npy features need a separate labels .npy (pass labels=PATH)")
        return (np.load(features, allow_pickle=False), np.load(labels, allow_pickle=False), None)
    if labels is not None:
        raise UserError(f"{features}: labels=PATH is only for .npy features; {suffix} files carry their labels")
    if suffix == ".npz":
        with np.load(features, allow_pickle=False) as f:
            missing = [k for k in ("X", "labels") if k not in f.files]
            if missing:
                raise UserError(f"{features}: missing arrays {missing}; found {f.files}")
            names = [str(n) for n in f["label_names"]] if "label_names" in f.files else None
            return f["X"], f["labels"], names
    if suffix in (".h5", ".hdf5"):
        try:
            import h5py
        except ImportError as e:
            raise ImportError(f"reading {features} needs the optional package h5py (pip install h5py), or save "
                              "the features as .npz with arrays X and labels") from e
        with h5py.File(features, "r") as f:
            missing = [k for k in ("X", "labels") if k not in f]
            if missing:
                raise UserError(f"{features}: missing datasets {missing}; found {list(f)}")
            names = None
            if "label_names" in f:
                names = [n.decode() if isinstance(n, bytes) else str(n) for n in f["label_names"][()]]
            return f["X"][()], f["labels"][()], names
    raise UserError(f"{features}: unsupported features file {suffix!r}; use .npz, .npy (+ labels .npy) or .h5")


@declare({"features": [*NON_EMPTY_STR, os.PathLike], "labels": [*NON_EMPTY_STR, os.PathLike, None],
          "n_classes": [integer(1, None), None], "n_per_class": [integer(1, None), None], "random_state": SEED})
def places2(features: str | os.PathLike, labels: str | os.PathLike | None = None, n_classes: int | None = None,
            n_per_class: int | None = None, random_state: int = 0) -> Dataset:
    """Load user-supplied Places2 CNN features (format in the module docstring; paper: 36,500×4,096, 365 × 100).

    Labels are encoded by :func:`cova.datasets.generic.encode_labels` (integer ids named by ``label_names``
    when the file has them). Optional subset, both parts seeded by ``random_state``:
    ``n_classes`` classes drawn at random (kept in ascending class order), then ``n_per_class`` rows of each
    (:func:`cova.datasets.mnist.per_class_subset`, original row order). Cohorts are renumbered 0..c'-1.
    ``X`` is converted to float64 (the paper-sized matrix is then 1.2 GB).
    """
    path = Path(features)
    if not path.is_file():
        raise FileNotFoundError(f"Places2 features file {path} not found (see cova.datasets.places2 for the format)")
    X, y_raw, names = _read(path, labels)
    X = np.asarray(X)
    if X.ndim != 2:
        raise UserError(f"{path}: X must be 2-D (samples × features), got shape {X.shape}")
    y_raw = np.asarray(y_raw).ravel()
    if len(y_raw) != len(X):
        raise UserError(f"{path}: {len(X)} feature rows but {len(y_raw)} labels")
    y, label_names = encode_labels(y_raw, names)
    keep = np.arange(len(y))
    if n_classes is not None:
        c = len(label_names)
        if not 1 <= n_classes <= c:
            raise UserError(f"n_classes must be in 1..{c}, got {n_classes}")
        chosen = np.sort(np.random.default_rng(random_state).permutation(c)[:n_classes])
        keep = np.flatnonzero(np.isin(y, chosen))
    if n_per_class is not None:
        keep = keep[per_class_subset(y[keep], n_per_class, random_state)]
    present, y = np.unique(y[keep], return_inverse=True)
    return Dataset(X[keep], y, [label_names[k] for k in present], meta={
        "source": f"Places2 CNN features supplied by the user: {path}", "stand_in": False,
        "n_classes": n_classes, "n_per_class": n_per_class, "random_state": random_state,
        "n_samples": int(len(keep)), "file_shape": list(X.shape), "paper_shape": list(PAPER_SHAPE),
        "matches_paper_shape": tuple(X.shape) == PAPER_SHAPE and len(label_names) == 365})
