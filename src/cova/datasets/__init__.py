"""Dataset registry: ``load(name, raw_dir=None, **params)`` returns a :class:`Dataset` for every known loader.

Loaders of real data sets read their upstream files from a folder ``raw_dir`` laid out like the project's
offline mirror sub-folder of their fetch source (``RAW_SOURCES`` / :func:`raw_source` name that source).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

from .adversarial import mnist_fgsm
from .base import Dataset
from .coembedding import coembed_points
from .coil20 import coil20
from .compound import compound
from .cora import cora
from .digits import digits
from .faces import sculpt_faces
from .fetch import verify_manifest
from .generic import generic
from .mnist import fashion_mnist, mnist, read_idx
from .places2 import places2
from .random_matrix import random_matrix
from .synthetic import cylinder1, cylinder2, places_shaped, s_curve, sinusoid, sphere, swiss_roll
from .worldtrade import worldtrade

LOADERS: dict[str, Callable[..., Dataset]] = {
    "sinusoid": sinusoid,
    "swiss_roll": swiss_roll,
    "cylinder1": cylinder1,
    "cylinder2": cylinder2,
    "s_curve": s_curve,
    "sphere": sphere,
    "sculpt_faces": sculpt_faces,
    "places_shaped": places_shaped,
    "random_matrix": random_matrix,
    "digits": digits,
    "cora": cora,
    "mnist": mnist,
    "fashion_mnist": fashion_mnist,
    "mnist_fgsm": mnist_fgsm,
    "coil20": coil20,
    "compound": compound,
    "worldtrade": worldtrade,
    "coembed_points": coembed_points,
    "places2": places2,
    "generic": generic,
}

#: Loader name -> fetch source key of the raw files it reads (loaders absent here read no fetched files).
#: ``mnist`` with a split that needs the training files uses ``mnist_train`` instead (see :func:`raw_source`).
RAW_SOURCES: dict[str, str] = {
    "cora": "cora",
    "mnist": "mnist",
    "mnist_fgsm": "mnist",
    "fashion_mnist": "fashion_mnist",
    "coil20": "coil20",
    "compound": "compound",
    "worldtrade": "worldtrade",
}

#: Loaders whose datasets carry known latent coordinates (:attr:`Dataset.ground_truth`), against which the NeRV
#: measures can be computed instead of X (NeRV Fig. 8).
GROUND_TRUTH_LOADERS: tuple[str, ...] = ("sculpt_faces",)

#: Loaders that need no file at all (seeded generators and sklearn's bundled digits).
BUILTIN: tuple[str, ...] = tuple(n for n in LOADERS if n not in RAW_SOURCES and n not in ("places2", "generic"))


def raw_source(loader: str, params: Mapping[str, Any] | None = None) -> str | None:
    """The fetch source whose files ``loader`` with ``params`` reads, or ``None`` (no fetched files).

    ``mnist`` with ``split`` ``"train"`` or ``"all"`` → ``"mnist_train"`` (the training files, absent from the
    offline mirror); every other known loader → ``RAW_SOURCES.get(loader)``. ``places2`` and ``generic`` read
    user-supplied paths given in their parameters, not fetched files.
    """
    if loader not in LOADERS:
        raise ValueError(f"unknown dataset loader {loader!r}; allowed: {sorted(LOADERS)}")
    if loader == "mnist" and (params or {}).get("split", "test") in ("train", "all"):
        return "mnist_train"
    return RAW_SOURCES.get(loader)


def load(name: str, raw_dir: str | os.PathLike | None = None, **params: Any) -> Dataset:
    """Build the dataset ``name`` with loader parameters ``params``.

    Loaders that read fetched files (those with a ``raw_dir`` parameter) get ``raw_dir``, which is then
    required, after its files are checked against the sha256 in its ``manifest.json``
    (:func:`cova.datasets.fetch.verify_manifest`); other loaders ignore it. Unknown names and parameters raise ``ValueError`` naming the allowed
    values.
    """
    if name not in LOADERS:
        raise ValueError(f"unknown dataset loader {name!r}; allowed: {sorted(LOADERS)}")
    loader = LOADERS[name]
    allowed = set(inspect.signature(loader).parameters) - {"raw_dir"}
    unknown = set(params) - allowed
    if unknown:
        raise ValueError(f"dataset loader {name!r} got unknown parameters {sorted(unknown)}; allowed: {sorted(allowed)}")
    if "raw_dir" in inspect.signature(loader).parameters:
        if raw_dir is None:
            raise ValueError(f"dataset loader {name!r} reads fetched files: give raw_dir (the folder of fetch "
                             f"source {raw_source(name, params)!r})")
        verify_manifest(raw_dir)
        return loader(raw_dir, **params)
    return loader(**params)


__all__ = ["BUILTIN", "Dataset", "GROUND_TRUTH_LOADERS", "LOADERS", "RAW_SOURCES", "load", "raw_source", "read_idx"]
