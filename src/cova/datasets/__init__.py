"""Dataset registry: ``load(name, **params)`` returns a :class:`Dataset` for every known loader."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .base import Dataset
from .digits import digits
from .synthetic import cylinder1, cylinder2, sinusoid, swiss_roll

LOADERS: dict[str, Callable[..., Dataset]] = {
    "sinusoid": sinusoid,
    "swiss_roll": swiss_roll,
    "cylinder1": cylinder1,
    "cylinder2": cylinder2,
    "digits": digits,
}


def load(name: str, **params: Any) -> Dataset:
    """Build the dataset ``name`` with loader parameters ``params``.

    Unknown names and parameters raise ``ValueError`` naming the allowed values.
    """
    if name not in LOADERS:
        raise ValueError(f"unknown dataset loader {name!r}; allowed: {sorted(LOADERS)}")
    loader = LOADERS[name]
    allowed = set(inspect.signature(loader).parameters)
    unknown = set(params) - allowed
    if unknown:
        raise ValueError(f"dataset loader {name!r} got unknown parameters {sorted(unknown)}; allowed: {sorted(allowed)}")
    return loader(**params)


__all__ = ["Dataset", "LOADERS", "load"]
