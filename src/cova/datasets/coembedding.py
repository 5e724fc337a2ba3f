"""Synthetic 2-D point sets of the co-embedding paper (Wu, Mu, Liatsis, Goulermas; Sec. 4.1, Fig. 1).

The paper shows eight 2-D sets (Dots, Circles, R15, Target, Rface, 2dnormals, Compound, ring) but neither their
points nor their sizes are recoverable from the text. These generators make seeded sets **in kind** (the same
shapes and cluster structure, not the paper's points); Compound is the public file (:func:`cova.datasets.compound`).

| kind | points | clusters | shape |
|---|---|---|---|
| ``dots`` | 360 | 6 | six small, well separated Gaussian blobs (60 each, sd 0.35) on a 3 × 2 grid of spacing 4 |
| ``circles`` | 480 | 3 | three concentric rings of radius 1, 2, 3 (80, 160, 240 points: equal density), radial sd 0.08 |
| ``r15`` | 600 | 15 | R15 as in Veenman et al. 2002: one centre, 7 inner and 7 outer Gaussians, 40 points each |
| ``target`` | 770 | 6 | FCPS Target: central blob (363), ring around it (395), four groups of 3 outliers in the corners |
| ``rface`` | 600 | 6 | fpc ``rFace(600, p = 2)``: chin 119, mouth 179, nose 119, right eye 119, left eye 60, hair tips 4 |
| ``2dnormals`` | 600 | 6 | mlbench ``2dnormals(600, cl = 6)``: sd-1 Gaussians with centres on a circle of radius √6 |
| ``ring`` | 480 | 2 | a ring (radius 3, 360 points, radial sd 0.15) around a central Gaussian blob (120 points, sd 0.5) |

Every set is a :class:`Dataset` with labels = clusters; which clusters go to the row group, the column group or
both is chosen by the relation inputs block (``relation: {source: points, groups: ...}``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..constraints import SEED, StrOptions, declare
from .base import Dataset

__all__ = ["COEMBED_KINDS", "coembed_points"]

_DESCRIPTION = "in kind, not the paper's points"


def _dots(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str], dict]:
    centres = np.array([[x, y] for y in (0.0, 4.0) for x in (0.0, 4.0, 8.0)])
    size, sd = 60, 0.35
    X = np.repeat(centres, size, axis=0) + rng.normal(0.0, sd, (size * len(centres), 2))
    labels = np.repeat(np.arange(len(centres)), size)
    return X, labels, [f"dot {j + 1}" for j in range(len(centres))], {"per_cluster": size, "sd": sd, "spacing": 4.0}


def _circles(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str], dict]:
    radii, sizes, sd = (1.0, 2.0, 3.0), (80, 160, 240), 0.08
    parts, labels = [], []
    for j, (r, size) in enumerate(zip(radii, sizes)):
        angle = rng.uniform(0.0, 2.0 * np.pi, size)
        radius = r + rng.normal(0.0, sd, size)
        parts.append(np.column_stack([radius * np.cos(angle), radius * np.sin(angle)]))
        labels.append(np.full(size, j))
    return (np.vstack(parts), np.concatenate(labels), [f"circle r={r:g}" for r in radii],
            {"radii": list(radii), "sizes": list(sizes), "radial_sd": sd})


def _r15(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str], dict]:
    angles = 2.0 * np.pi * np.arange(7) / 7.0
    ring = np.column_stack([np.cos(angles), np.sin(angles)])
    centres = np.vstack([[[10.0, 10.0]], 10.0 + 2.0 * ring, 10.0 + 6.4 * ring])
    size, sd = 40, 0.3
    X = np.repeat(centres, size, axis=0) + rng.normal(0.0, sd, (size * 15, 2))
    labels = np.repeat(np.arange(15), size)
    names = ["centre"] + [f"inner {j + 1}" for j in range(7)] + [f"outer {j + 1}" for j in range(7)]
    return X, labels, names, {"centre": [10.0, 10.0], "inner_radius": 2.0, "outer_radius": 6.4, "sd": sd,
                              "per_cluster": size}


def _target(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str], dict]:
    n_blob, n_ring, n_out = 363, 395, 3
    blob = rng.normal(0.0, 0.3, (n_blob, 2))
    angle = rng.uniform(0.0, 2.0 * np.pi, n_ring)
    radius = rng.uniform(1.8, 2.4, n_ring)
    ring = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    corners = np.array([[-3.5, 3.5], [3.5, 3.5], [-3.5, -3.5], [3.5, -3.5]])
    outliers = np.repeat(corners, n_out, axis=0) + rng.normal(0.0, 0.15, (4 * n_out, 2))
    X = np.vstack([blob, ring, outliers])
    labels = np.concatenate([np.zeros(n_blob), np.ones(n_ring), np.repeat(np.arange(2, 6), n_out)]).astype(int)
    names = ["centre", "ring", "outliers top left", "outliers top right", "outliers bottom left",
             "outliers bottom right"]
    return X, labels, names, {"blob_sd": 0.3, "ring_radius": [1.8, 2.4], "corners": corners.tolist(),
                              "outlier_sd": 0.15, "sizes": [n_blob, n_ring] + [n_out] * 4}


def _rface(rng: np.random.Generator, n: int = 600, nrep_top: int = 2, smile_coef: float = 0.6,
           d_mo_no: float = 1.2, d_no_ey: float = 1.0) -> tuple[np.ndarray, np.ndarray, list[str], dict]:
    """fpc::rFace (Hennig & Maechler 2002), its first two coordinates: group sizes m = n0 // 5 with
    n0 = n − (nrep_top + 2), as in the R source."""
    n_tips = nrep_top + 2
    n0 = n - n_tips
    m = n0 // 5
    n5 = n0 // 2
    n7, n9 = n5 + m, n5 + 2 * m
    X = np.empty((n, 2))
    u = rng.uniform(-3.0, 3.0, m)                                            # chin: parabola + noise
    X[:m] = np.column_stack([u, rng.normal(u ** 2, 0.1)])
    m0m, y_eye = 3.0, 17.0
    z = rng.normal(0.0, 0.5, n5 - m)                                         # mouth
    X[m:n5] = np.column_stack([z, rng.normal(m0m + smile_coef * z ** 2, 0.2)])
    X[n5:n7, 0] = rng.normal(0.0, 0.2, m)                                    # nose: Gaussian / gamma
    X[n5:n7, 1] = np.minimum(y_eye - d_no_ey, m0m + d_mo_no + rng.gamma(0.8, 2.5, m))
    angle, pos = rng.uniform(0.0, 2.0 * np.pi, m), rng.uniform(0.0, 1.0, m)  # right eye: uniform on a disc
    X[n7:n9] = np.column_stack([pos * np.cos(angle) + 2.0, pos * np.sin(angle) + y_eye])
    X[n9:n0] = np.column_stack([rng.normal(-2.0, 0.5, n0 - n9), rng.normal(y_eye, 0.5, n0 - n9)])  # left eye
    X[n0] = (-4.5, 25.0)                                                     # hair tips, the top one repeated
    X[n0 + 1] = (4.5, 25.0)
    X[n0 + 2:] = (0.0, 32.0)
    bounds = [0, m, n5, n7, n9, n0, n]
    labels = np.concatenate([np.full(bounds[j + 1] - bounds[j], j) for j in range(6)])
    return X, labels, ["chin", "mouth", "nose", "right eye", "left eye", "hair tips"], {
        "n": n, "p": 2, "nrep_top": nrep_top, "smile_coef": smile_coef, "dMoNo": d_mo_no, "dNoEy": d_no_ey,
        "sizes": np.diff(bounds).tolist()}


def _2dnormals(rng: np.random.Generator, n: int = 600, cl: int = 6, sd: float = 1.0,
               ) -> tuple[np.ndarray, np.ndarray, list[str], dict]:
    """mlbench.2dnormals: class e ~ U{0..cl−1}, centre r·(cos(π/4 + 2πe/cl), sin(π/4 + 2πe/cl)), r = √cl."""
    r = np.sqrt(cl)
    e = rng.integers(0, cl, n)
    phase = np.pi / 4 + 2.0 * np.pi * e / cl
    X = r * np.column_stack([np.cos(phase), np.sin(phase)]) + rng.normal(0.0, sd, (n, 2))
    return X, e, [f"normal {j + 1}" for j in range(cl)], {"n": n, "cl": cl, "r": float(r), "sd": sd}


def _ring(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str], dict]:
    n_ring, n_blob, radius, radial_sd, blob_sd = 360, 120, 3.0, 0.15, 0.5
    angle = rng.uniform(0.0, 2.0 * np.pi, n_ring)
    rad = radius + rng.normal(0.0, radial_sd, n_ring)
    X = np.vstack([np.column_stack([rad * np.cos(angle), rad * np.sin(angle)]),
                   rng.normal(0.0, blob_sd, (n_blob, 2))])
    labels = np.concatenate([np.zeros(n_ring, int), np.ones(n_blob, int)])
    return X, labels, ["ring", "blob"], {"ring_radius": radius, "radial_sd": radial_sd, "blob_sd": blob_sd,
                                         "sizes": [n_ring, n_blob]}


_GENERATORS: dict[str, Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray, list[str], dict]]] = {
    "dots": _dots, "circles": _circles, "r15": _r15, "target": _target, "rface": _rface,
    "2dnormals": _2dnormals, "ring": _ring,
}
#: The kinds :func:`coembed_points` generates.
COEMBED_KINDS: tuple[str, ...] = tuple(_GENERATORS)
#: The columns of X of every kind (2-D point sets), which the configuration check reads to know a dataset's d
#: before any job (:func:`cova.config.checks.known_feature_count`).
COLUMNS = 2


@declare({"kind": [StrOptions(set(COEMBED_KINDS))], "random_state": SEED})
def coembed_points(kind: str = "dots", random_state: int = 0) -> Dataset:
    """A seeded synthetic 2-D point set of the co-embedding paper's Fig. 1, in kind (see the module table for
    sizes and clusters): ``kind`` ∈ ``dots`` (the default, so that every built-in loader runs without
    parameters), ``circles``, ``r15``, ``target``, ``rface``, ``2dnormals``, ``ring``. ``X`` holds the points, ``labels`` the clusters; ``meta`` records the generator and its
    parameters."""
    rng = np.random.default_rng(random_state)
    X, labels, names, params = _GENERATORS[kind](rng)
    labels = np.asarray(labels, dtype=np.int64)
    return Dataset(X, labels, names, meta={
        "source": "synthetic", "generator": f"coembed_points/{kind}", "kind": kind, "parameters": params,
        "random_state": random_state, "description": _DESCRIPTION, "n_samples": int(len(X)),
        "cluster_sizes": np.bincount(labels, minlength=len(names)).tolist()})
