"""Dataset registry: ``load(name, raw_dir=None, **params)`` returns a :class:`Dataset` for every known loader.

Loaders of real data sets read their upstream files from a folder ``raw_dir`` laid out like the project's
offline mirror sub-folder of their fetch source (``RAW_SOURCES`` / :func:`raw_source` name that source).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import UserError
from ..lazy import LazyNames
from .base import Dataset
from .fetch import verify_manifest

#: Loader name -> the module of this package that defines the loader function of that name.
_LOADER_MODULES: dict[str, str] = {
    "sinusoid": "synthetic", "swiss_roll": "synthetic", "cylinder1": "synthetic", "cylinder2": "synthetic",
    "s_curve": "synthetic", "sphere": "synthetic", "cohort_manifold": "synthetic", "sculpt_faces": "faces",
    "places_shaped": "synthetic",
    "random_matrix": "random_matrix", "digits": "digits", "cora": "cora", "mnist": "mnist",
    "fashion_mnist": "mnist", "mnist_fgsm": "adversarial", "coil20": "coil20", "compound": "compound",
    "worldtrade": "worldtrade", "coembed_points": "coembedding", "places2": "places2", "generic": "generic",
}


#: Loader name -> loader function, importing a loader's module on first use: the loaders declare their options
#: (:mod:`cova.constraints`, which imports scikit-learn), and a job that only reads processed datasets (every score
#: job) should not pay for that import.
LOADERS: Mapping[str, Callable[..., Dataset]] = LazyNames(__name__, _LOADER_MODULES)

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
GROUND_TRUTH_LOADERS: tuple[str, ...] = ("sculpt_faces", "cohort_manifold")

#: Loaders whose datasets carry a relation (graph) matrix between their samples (:attr:`Dataset.relations`), which
#: an inputs block with ``graph: {source: relations}`` or ``relation: {source: hop_distances}`` reads.
GRAPH_LOADERS: tuple[str, ...] = ("cora", "random_matrix", "worldtrade")

#: Loaders that need no file at all (seeded generators and sklearn's bundled digits).
BUILTIN: tuple[str, ...] = tuple(n for n in LOADERS if n not in RAW_SOURCES and n not in ("places2", "generic"))


def raw_source(loader: str, params: Mapping[str, Any] | None = None) -> str | None:
    """The fetch source whose files ``loader`` with ``params`` reads, or ``None`` (no fetched files).

    ``mnist`` with ``split`` ``"train"`` or ``"all"`` → ``"mnist_train"`` (the training files, absent from the
    offline mirror); every other known loader → ``RAW_SOURCES.get(loader)``. ``places2`` and ``generic`` read
    user-supplied paths given in their parameters, not fetched files.
    """
    if loader not in LOADERS:
        raise UserError(f"unknown dataset loader {loader!r}; allowed: {sorted(LOADERS)}")
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
        raise UserError(f"unknown dataset loader {name!r}; allowed: {sorted(LOADERS)}")
    loader = LOADERS[name]
    allowed = set(inspect.signature(loader).parameters) - {"raw_dir"}
    unknown = set(params) - allowed
    if unknown:
        raise UserError(f"dataset loader {name!r} got unknown parameters {sorted(unknown)}; allowed: {sorted(allowed)}")
    if "raw_dir" in inspect.signature(loader).parameters:
        if raw_dir is None:
            raise UserError(f"dataset loader {name!r} reads fetched files: give raw_dir (the folder of fetch "
                             f"source {raw_source(name, params)!r})")
        verify_manifest(raw_dir)
        return loader(raw_dir, **params)
    return loader(**params)


__all__ = ["BUILTIN", "Dataset", "GRAPH_LOADERS", "GROUND_TRUTH_LOADERS", "LOADERS", "RAW_SOURCES", "load", "raw_source", "read_idx"]


def __getattr__(name: str) -> object:
    if name == "read_idx":  # MNIST's file reader, imported with its module on first use
        from .mnist import read_idx

        return read_idx
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
