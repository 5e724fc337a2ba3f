"""One fitted embedding as the embed step writes it (``embedding.npz``) and every later step reads it back."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import UserError
from .io import read_npz, save_npz_atomic

#: Prefix of the estimator's extra fitted arrays in ``embedding.npz`` (e.g. ``extra_column_embedding``).
EXTRA_PREFIX = "extra_"
GEOMETRIES = ("plane", "sphere")


@dataclass
class Embedding:
    """The embedding Z (l, k) of one run, the prototypes the method placed (0, k when none), its geometry
    (``"plane"``: points in R^k; ``"sphere"``: points on a sphere in R^k), the extra fitted arrays the estimator
    declares in ``extra_outputs`` (name without the trailing underscore -> array), the run status (``"ok"`` or
    ``"degenerate"``, then Z is NaN), the fit time in seconds, the method name and its parameters, and ``ids``: one
    name per row of Z (the dataset's names of the rows the method embedded; ``None`` in files written before the
    embed step recorded them)."""

    Z: np.ndarray
    placed_prototypes: np.ndarray | None = None
    geometry: str = "plane"
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    status: str = "ok"
    runtime_s: float = 0.0
    method: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    ids: list[str] | None = None

    def __post_init__(self) -> None:
        self.Z = np.asarray(self.Z, dtype=np.float64)
        if self.Z.ndim != 2:
            raise UserError(f"an embedding must be 2-D (samples × components), got shape {self.Z.shape}")
        if self.geometry not in GEOMETRIES:
            raise UserError(f"geometry must be one of {list(GEOMETRIES)}, got {self.geometry!r}")
        if self.placed_prototypes is None:
            self.placed_prototypes = np.zeros((0, self.Z.shape[1]))
        if self.ids is not None:
            self.ids = [str(v) for v in self.ids]
            if len(self.ids) != self.Z.shape[0]:
                raise UserError(f"ids must name every row of Z: {len(self.ids)} ids for {self.Z.shape[0]} rows")

    @property
    def n_components(self) -> int:
        return int(self.Z.shape[1])

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def placed_or_none(self) -> np.ndarray | None:
        """The placed prototypes, or ``None`` when the method placed none."""
        return self.placed_prototypes if self.placed_prototypes.size else None

    def save(self, path: str | os.PathLike) -> None:
        """Write ``embedding.npz`` atomically (no pickles)."""
        extras = {f"{EXTRA_PREFIX}{name}": np.asarray(a) for name, a in self.extras.items()}
        if self.ids is not None:
            extras["ids"] = np.array(self.ids, dtype=str)
        save_npz_atomic(path, Z=self.Z, placed_prototypes=self.placed_prototypes,
                        runtime_s=np.array(self.runtime_s), status=np.array(self.status),
                        method=np.array(self.method), params=np.array(json.dumps(self.params, sort_keys=True)),
                        n_components=np.array(self.n_components), geometry=np.array(self.geometry), **extras)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Embedding":
        """Read an ``embedding.npz``; files written before geometry was recorded read as ``"plane"``, those written
        before the row ids were recorded have ``ids = None``."""
        with read_npz(path, "embedding") as f:
            Z = f["Z"]
            k = int(f["n_components"]) if "n_components" in f else Z.shape[1]
            if Z.shape[1] != k:
                raise UserError(f"{path}: Z has {Z.shape[1]} columns but n_components = {k}")
            extras = {key[len(EXTRA_PREFIX):]: f[key] for key in f.files if key.startswith(EXTRA_PREFIX)}
            return cls(Z=Z, placed_prototypes=f["placed_prototypes"],
                       geometry=str(f["geometry"]) if "geometry" in f else "plane", extras=extras,
                       status=str(f["status"]), runtime_s=float(f["runtime_s"]),
                       method=str(f["method"]) if "method" in f else "",
                       params=json.loads(str(f["params"])) if "params" in f else {},
                       ids=[str(v) for v in f["ids"]] if "ids" in f else None)
