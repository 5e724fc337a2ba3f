"""WorldTrade: the Pajek network ``metalWT`` (de Nooy, Mrvar & Batagelj, *Exploratory Social Network Analysis
with Pajek*), as shipped with the DOSNES demo (Zhou, Yang et al.) as ``world_trade.paj``.

80 countries; ``*Arcs i j w``: weighted trade arcs in miscellaneous manufactures of metal (1994, per de Nooy et
al.; the file's network is named ``Imports_manufactures``), 1,000 arc lines; an empty ``*Edges`` block; partitions
``World_system_1980``, ``Continent``, ``World_system``; vectors ``x_coordinates``, ``y_coordinates.vec``,
``GDP_1995.vec``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..constraints import NON_EMPTY_STR, declare
from ..errors import UserError
from .base import Dataset

#: Pajek's code for a missing partition/vector value.
PAJEK_MISSING = 9999998


def read_pajek(path: str | os.PathLike) -> dict[str, Any]:
    """Parse a Pajek project/network file with ``*Network``, ``*Vertices``, ``*Arcs``, ``*Edges``,
    ``*Partition`` and ``*Vector`` blocks (``*Arcslist``/``*Edgeslist``/``*Matrix`` are refused).

    Returns ``{"network", "names" (n), "coords" (n×k, NaN where absent), "arcs" (m×3 i, j, w, 0-based),
    "edges" (m×3), "partitions" {name: int array}, "vectors" {name: float array}}``. A missing arc weight is 1.
    Lines starting with ``%`` are comments.
    """
    path = Path(path)
    lines = [ln.strip() for ln in path.read_text(encoding="latin-1").splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("%")]
    out: dict[str, Any] = {"network": None, "names": None, "coords": None, "arcs": [], "edges": [],
                           "partitions": {}, "vectors": {}}
    i, pending = 0, None  # pending = ("partition" | "vector", name) waiting for its *Vertices block
    while i < len(lines):
        head = lines[i]
        if not head.startswith("*"):
            raise UserError(f"{path}: unexpected line outside a block: {head!r}")
        key, _, rest = head[1:].partition(" ")
        key, rest = key.lower(), rest.strip()
        j = i + 1
        while j < len(lines) and not lines[j].startswith("*"):
            j += 1
        body = lines[i + 1:j]
        if key == "network":
            out["network"] = rest
        elif key in ("partition", "vector"):
            pending = (key, rest)
        elif key == "vertices":
            n = int(rest.split()[0])
            if pending is not None:
                kind, name = pending
                if len(body) != n:
                    raise UserError(f"{path}: {kind} {name!r} has {len(body)} values for {n} vertices")
                values = np.array([float(v.split()[0]) for v in body])
                out["partitions" if kind == "partition" else "vectors"][name] = (
                    values.astype(np.int64) if kind == "partition" else values)
                pending = None
            else:
                names = [str(k + 1) for k in range(n)]
                coords = np.full((n, 3), np.nan)
                for ln in body:
                    tok = shlex.split(ln)
                    v = int(tok[0]) - 1
                    if len(tok) > 1:
                        names[v] = tok[1]
                    nums = []
                    for t in tok[2:5]:
                        try:
                            nums.append(float(t))
                        except ValueError:
                            break
                    coords[v, :len(nums)] = nums
                out["names"], out["coords"] = names, coords
        elif key in ("arcs", "edges"):
            rows = []
            for ln in body:
                tok = ln.split()
                rows.append((int(tok[0]) - 1, int(tok[1]) - 1, float(tok[2]) if len(tok) > 2 else 1.0))
            out[key] = rows
        else:
            raise UserError(f"{path}: unsupported Pajek block *{key}")
        i = j
    if out["names"] is None:
        raise UserError(f"{path}: no *Vertices block")
    out["arcs"] = np.array(out["arcs"], dtype=np.float64).reshape(-1, 3)
    out["edges"] = np.array(out["edges"], dtype=np.float64).reshape(-1, 3)
    return out


@declare({"partition": NON_EMPTY_STR})
def worldtrade(raw_dir: str | os.PathLike, partition: str = "Continent") -> Dataset:
    """Load ``raw_dir/world_trade.paj``.

    - ``X``: the two layout coordinates written after each vertex name in the ``*Vertices`` block (80×2).
      DOSNES embeds the **graph** (``relations``), not ``X``; ``X`` is only the file's drawing. (The file's
      ``x_coordinates``/``y_coordinates.vec`` vectors are a different layout; their names are in ``meta``.)
    - ``relations``: the weighted directed arc matrix, ``relations[i, j] = w`` for ``*Arcs i j w`` (80×80 sparse).
      Two (i, j) pairs occur twice in the file with different weights; repeated arcs are **summed**. ``*Edges``
      (empty here) would be added in both directions.
    - ``labels``: the distinct values of the chosen ``*Partition`` in ascending order, named
      ``"partition value k"`` (the file has no value names; 9999998 is Pajek's missing-value code and is kept as
      its own cohort, named ``"partition value 9999998 (missing)"``).
    - ``meta``: vertex names, available partitions and vectors, arc counts.
    """
    path = Path(raw_dir) / "world_trade.paj"
    net = read_pajek(path)
    n = len(net["names"])
    if partition not in net["partitions"]:
        raise UserError(f"{path}: no partition {partition!r}; available: {sorted(net['partitions'])}")
    coords = net["coords"][:, :2]
    if np.isnan(coords).any():
        raise UserError(f"{path}: {int(np.isnan(coords).any(axis=1).sum())} vertices lack layout coordinates")
    arcs, edges = net["arcs"], net["edges"]
    rows = np.concatenate([arcs[:, 0], edges[:, 0], edges[:, 1]]).astype(np.int64)
    cols = np.concatenate([arcs[:, 1], edges[:, 1], edges[:, 0]]).astype(np.int64)
    w = np.concatenate([arcs[:, 2], edges[:, 2], edges[:, 2]])
    rel = sp.coo_matrix((w, (rows, cols)), shape=(n, n)).tocsr()  # duplicates summed
    rel.sum_duplicates()
    values, labels = np.unique(net["partitions"][partition], return_inverse=True)
    names = [f"partition value {v}" + (" (missing)" if v == PAJEK_MISSING else "") for v in values]
    n_unique_arcs = len(np.unique(arcs[:, 0] * n + arcs[:, 1]))
    return Dataset(coords, labels, names, relations=rel, meta={
        "source": "Pajek metalWT (world_trade.paj, DOSNES demo)", "network": net["network"],
        "partition": partition, "partitions": list(net["partitions"]), "vectors": list(net["vectors"]),
        "vertex_names": net["names"], "n_arc_lines": int(len(arcs)), "n_unique_arcs": int(n_unique_arcs),
        "n_edge_lines": int(len(edges)), "duplicate_arcs": "summed", "n_self_loops": int((rows == cols).sum()),
        "X": "vertex layout coordinates from the *Vertices block (DOSNES uses the graph, not X)"})
