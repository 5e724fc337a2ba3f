"""Names of a package whose modules are imported on first use.

Several packages hold modules that are costly to import (they declare their options with scikit-learn's validation,
or import every method) beside modules a short job needs alone (a score job reads cohort labels, graphs and
``Inputs``). :class:`LazyNames` maps each name to the module that defines it and imports that module only when the
name is used, both as a registry (``LOADERS``, ``RENDERERS``) and as the package's own ``__getattr__`` (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["LazyNames"]


class LazyNames(Mapping[str, Any]):
    """Name -> the attribute of that name in module ``{package}.{homes[name]}``, imported on first use."""

    def __init__(self, package: str, homes: Mapping[str, str]):
        self.package = package
        self.homes = dict(homes)

    def __getitem__(self, name: str) -> Any:
        return getattr(importlib.import_module(f"{self.package}.{self.homes[name]}"), name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.homes)

    def __len__(self) -> int:
        return len(self.homes)

    def module_getattr(self, name: str) -> Any:
        """The package's ``__getattr__``: the name's attribute, or the ``AttributeError`` Python expects."""
        if name in self.homes:
            return self[name]
        raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
