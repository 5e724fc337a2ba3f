"""Synthetic data sets of the COVA paper (Sec. 4.1, Table 3, H.1).

The paper defines none of its generators; these are ours (``docs/papers.md``, COVA, "Synthetic data"). Our
cylinders give LLE S_n values close to the paper's Table 3. :func:`cohort_manifold` is the data set of the scale
configuration (``config/scale.yaml``): cohorts on a known manifold at any size. Every generator is seeded and
returns a :class:`Dataset`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..constraints import NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE, POSITIVE_INT, SEED, declare, integer, real
from ..errors import UserError
from .base import Dataset

#: ``n_samples``: at least two points (a cohort split and every embedding need two).
_N_SAMPLES = [integer(2, None)]


@declare({"n_samples": _N_SAMPLES, "n_cohorts": POSITIVE_INT, "noise": NON_NEGATIVE, "random_state": SEED})
def sinusoid(n_samples: int = 1000, n_cohorts: int = 6, noise: float = 0.15, random_state: int = 0) -> Dataset:
    """Sinusoid (COVA Fig. 1, Table H.1/H.2; generator [ours]).

    ``t ~ U[0, 4π]`` (sorted), ``x = t``, ``y = 2 sin t``, plus ``N(0, noise²)`` on both coordinates;
    cohorts are ``n_cohorts`` segments of equal length in ``t`` (≈167 points each for the defaults).
    """
    rng = np.random.default_rng(random_state)
    t = np.sort(rng.uniform(0.0, 4.0 * np.pi, n_samples))
    X = np.column_stack([t, 2.0 * np.sin(t)]) + rng.normal(0.0, noise, (n_samples, 2))
    labels = np.minimum((t / (4.0 * np.pi) * n_cohorts).astype(np.int64), n_cohorts - 1)
    return Dataset(X, labels, [f"segment {j + 1}" for j in range(n_cohorts)],
                   meta={"source": "synthetic", "generator": "sinusoid", "n_samples": n_samples,
                         "n_cohorts": n_cohorts, "noise": noise, "random_state": random_state})


@declare({"n_samples": _N_SAMPLES, "n_cohorts": POSITIVE_INT, "noise": NON_NEGATIVE, "random_state": SEED})
def swiss_roll(n_samples: int = 2000, n_cohorts: int = 4, noise: float = 0.05, random_state: int = 0) -> Dataset:
    """Swiss roll (COVA Table 3; generator [ours]).

    ``t = 1.5π(1 + 2u)``, ``u ~ U[0,1]``, height ``h ~ U[0, 21]``, ``X = (t cos t, h, t sin t) + N(0, noise²)``;
    cohorts are the ``n_cohorts`` quantile groups of ``t`` (500 each for the defaults).
    """
    rng = np.random.default_rng(random_state)
    t = 1.5 * np.pi * (1.0 + 2.0 * rng.uniform(0.0, 1.0, n_samples))
    h = rng.uniform(0.0, 21.0, n_samples)
    X = np.column_stack([t * np.cos(t), h, t * np.sin(t)]) + rng.normal(0.0, noise, (n_samples, 3))
    ranks = np.argsort(np.argsort(t, kind="stable"), kind="stable")
    labels = (ranks * n_cohorts // n_samples).astype(np.int64)
    return Dataset(X, labels, [f"quartile {j + 1}" if n_cohorts == 4 else f"group {j + 1}" for j in range(n_cohorts)],
                   meta={"source": "synthetic", "generator": "swiss_roll", "n_samples": n_samples,
                         "n_cohorts": n_cohorts, "noise": noise, "random_state": random_state})


def _cylinder_surface(n_samples: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    theta = rng.uniform(0.0, 2.0 * np.pi, n_samples)
    h = rng.uniform(0.0, 3.0, n_samples)
    X = np.column_stack([np.cos(theta), np.sin(theta), h]) + rng.normal(0.0, noise, (n_samples, 3))
    return X, theta, h


@declare({"n_samples": _N_SAMPLES, "n_sectors": POSITIVE_INT, "noise": NON_NEGATIVE, "random_state": SEED})
def cylinder1(n_samples: int = 2000, n_sectors: int = 6, noise: float = 0.02, random_state: int = 0) -> Dataset:
    """Cylinder1 (COVA Table 3; generator [ours]): lateral surface of radius 1 and height 3, cohorts = angular sectors.

    ``θ ~ U[0, 2π)``, ``h ~ U[0, 3]``, ``X = (cos θ, sin θ, h) + N(0, noise²)``; ``n_sectors`` sectors of 360°/n.
    """
    rng = np.random.default_rng(random_state)
    X, theta, _ = _cylinder_surface(n_samples, noise, rng)
    labels = np.minimum((theta / (2.0 * np.pi) * n_sectors).astype(np.int64), n_sectors - 1)
    return Dataset(X, labels, [f"sector {j + 1}" for j in range(n_sectors)],
                   meta={"source": "synthetic", "generator": "cylinder1", "n_samples": n_samples,
                         "n_sectors": n_sectors, "noise": noise, "random_state": random_state})


@declare({"n_samples": _N_SAMPLES, "n_sectors": POSITIVE_INT, "n_bands": POSITIVE_INT, "noise": NON_NEGATIVE,
          "random_state": SEED})
def cylinder2(n_samples: int = 2000, n_sectors: int = 4, n_bands: int = 3, noise: float = 0.02,
              random_state: int = 0) -> Dataset:
    """Cylinder2 (COVA Table 3/4, Fig. 2; generator [ours]): the Cylinder1 surface cut into sectors × height bands.

    Defaults give ``c = 12`` cohorts (4 angular sectors × 3 height bands); cohort ``j = band·n_sectors + sector``.
    """
    rng = np.random.default_rng(random_state)
    X, theta, h = _cylinder_surface(n_samples, noise, rng)
    sector = np.minimum((theta / (2.0 * np.pi) * n_sectors).astype(np.int64), n_sectors - 1)
    band = np.minimum((h / 3.0 * n_bands).astype(np.int64), n_bands - 1)
    labels = band * n_sectors + sector
    names = [f"band {b + 1} sector {s + 1}" for b in range(n_bands) for s in range(n_sectors)]
    return Dataset(X, labels, names,
                   meta={"source": "synthetic", "generator": "cylinder2", "n_samples": n_samples,
                         "n_sectors": n_sectors, "n_bands": n_bands, "noise": noise, "random_state": random_state})


def _grid_labels(u: np.ndarray, v: np.ndarray, n_u: int, n_v: int) -> np.ndarray:
    """Cohort ``band·n_u + bin`` of the ``n_u × n_v`` grid over intrinsic coordinates ``u, v`` scaled to [0, 1]."""
    bu = np.minimum((u * n_u).astype(np.int64), n_u - 1)
    bv = np.minimum((v * n_v).astype(np.int64), n_v - 1)
    return bv * n_u + bu


@declare({"n_samples": _N_SAMPLES, "n_t_bins": POSITIVE_INT, "n_h_bins": POSITIVE_INT, "noise": NON_NEGATIVE,
          "random_state": SEED})
def s_curve(n_samples: int = 1000, n_t_bins: int = 4, n_h_bins: int = 2, noise: float = 0.0,
            random_state: int = 0) -> Dataset:
    """S-curve (NeRV paper, Venna et al. 2010, Figs. 3–7): a 2-D S-shaped surface in 3-D.

    As scikit-learn's ``make_s_curve``: ``t = 3π(u − ½)``, ``u ~ U[0,1]``, height ``h ~ U[0, 2]``,
    ``X = (sin t, h, sign(t)(cos t − 1)) + N(0, noise²)`` (``noise > 0`` gives the paper's "noisy S-curve"; its
    σ is not given). [assumption] N = 1,000 (not given). Cohorts are a coarse grid of the intrinsic coordinates:
    ``n_t_bins`` equal-width bins of ``t`` × ``n_h_bins`` bins of ``h``, cohort ``h_bin·n_t_bins + t_bin``.
    ``meta`` does not hold ``(t, h)``; regenerate with the same seed to recover them.
    """
    rng = np.random.default_rng(random_state)
    u = rng.uniform(0.0, 1.0, n_samples)
    t = 3.0 * np.pi * (u - 0.5)
    h = rng.uniform(0.0, 2.0, n_samples)
    X = np.column_stack([np.sin(t), h, np.sign(t) * (np.cos(t) - 1.0)])
    if noise > 0:
        X = X + rng.normal(0.0, noise, X.shape)
    labels = _grid_labels(u, h / 2.0, n_t_bins, n_h_bins)
    names = [f"t bin {a + 1} h bin {b + 1}" for b in range(n_h_bins) for a in range(n_t_bins)]
    return Dataset(X, labels, names,
                   meta={"source": "synthetic", "generator": "s_curve", "n_samples": n_samples,
                         "n_t_bins": n_t_bins, "n_h_bins": n_h_bins, "noise": noise, "random_state": random_state})


@declare({"n_samples": _N_SAMPLES, "n_lon_bins": POSITIVE_INT, "n_lat_bins": POSITIVE_INT, "noise": NON_NEGATIVE,
          "random_state": SEED})
def sphere(n_samples: int = 1000, n_lon_bins: int = 4, n_lat_bins: int = 2, noise: float = 0.0,
           random_state: int = 0) -> Dataset:
    """Unit sphere surface in 3-D (NeRV paper Fig. 2; the authors' toolbox dredviz ships 1,000
    such points).

    Points are uniform on the sphere: normalised standard-normal 3-vectors, plus ``N(0, noise²)`` if
    ``noise > 0``. Cohorts are a coarse grid of the intrinsic coordinates: ``n_lon_bins`` equal sectors of the
    longitude ``atan2(y, x)`` × ``n_lat_bins`` bands of equal **area** (equal-width bins of ``z``), cohort
    ``band·n_lon_bins + sector`` (bands from the south pole up).
    """
    rng = np.random.default_rng(random_state)
    P = rng.normal(size=(n_samples, 3))
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    lon = (np.arctan2(P[:, 1], P[:, 0]) + np.pi) / (2.0 * np.pi)
    labels = _grid_labels(lon, (P[:, 2] + 1.0) / 2.0, n_lon_bins, n_lat_bins)
    X = P + rng.normal(0.0, noise, P.shape) if noise > 0 else P
    names = [f"band {b + 1} sector {a + 1}" for b in range(n_lat_bins) for a in range(n_lon_bins)]
    return Dataset(X, labels, names,
                   meta={"source": "synthetic", "generator": "sphere", "n_samples": n_samples,
                         "n_lon_bins": n_lon_bins, "n_lat_bins": n_lat_bins, "noise": noise,
                         "random_state": random_state})


@declare({"n_classes": POSITIVE_INT, "n_per_class": POSITIVE_INT, "n_features": POSITIVE_INT,
          "density": [real(0.0, 1.0, closed="right")], "random_state": SEED})
def places_shaped(n_classes: int = 365, n_per_class: int = 100, n_features: int = 4096, density: float = 0.1,
                  random_state: int = 0) -> Dataset:
    """A synthetic **stand-in** shaped like Places2 CNN features. It is NOT Places2 and gives no Places2 results.

    Shape as COVA's Places2 data (default 36,500 × 4,096, 365 classes × 100; the dense float64 matrix is then
    1.2 GB). Entries are non-negative (like post-ReLU fc7 activations) and sparse: about ``density`` of the
    entries of a row are non-zero, half from a class-specific pattern and half from shared background
    [assumption: all sizes and distributions below are ours, chosen only to give that shape]:

    - class ``j`` owns an active set ``A_j`` of ``m = ceil(density·d / (2·0.7))`` features (drawn at random, so
      classes overlap by chance) with magnitudes ``μ_j ~ Gamma(2, 1)``; each sample of class ``j`` fires each
      feature of ``A_j`` with probability 0.7 at value ``μ_j · LogNormal(0, 0.5)``;
    - shared background: every feature fires with probability ``density/2`` at value ``Exponential(0.5)``;
      it is added to the class part.

    Rows are ordered by class (class 0's ``n_per_class`` rows first). ``meta["stand_in"]`` is ``True``.
    """
    rng = np.random.default_rng(random_state)
    p_on = 0.7
    m = min(n_features, int(np.ceil(density * n_features / (2.0 * p_on))))
    X = np.zeros((n_classes * n_per_class, n_features))
    for j in range(n_classes):
        rows = X[j * n_per_class:(j + 1) * n_per_class]
        active = rng.choice(n_features, m, replace=False)
        mu = rng.gamma(2.0, 1.0, m)
        fire = rng.random((n_per_class, m)) < p_on
        rows[:, active] = fire * mu * rng.lognormal(0.0, 0.5, (n_per_class, m))
        bg = rng.random((n_per_class, n_features)) < density / 2.0
        rows += bg * rng.exponential(0.5, (n_per_class, n_features))
    labels = np.repeat(np.arange(n_classes), n_per_class)
    return Dataset(X, labels, [f"stand-in class {j + 1}" for j in range(n_classes)], meta={
        "source": "synthetic", "generator": "places_shaped", "stand_in": True,
        "description": "synthetic stand-in shaped like Places2 CNN features; NOT Places2",
        "n_classes": n_classes, "n_per_class": n_per_class, "n_features": n_features, "density": density,
        "random_state": random_state, "nonzero_fraction": float(np.count_nonzero(X) / max(X.size, 1))})


#: Rows per block of :func:`cohort_manifold`: each block draws from its own stream, seeded by ``(seed, block)``.
COHORT_MANIFOLD_BLOCK = 8192
#: Latent distance between neighbouring sites of :func:`cohort_manifold`'s layout (a site holds one cohort, or the
#: two cohorts of a close pair); with radii ≤ 1.5 and gaps ≤ 0.5 a site spans at most 6.5, so distinct sites keep
#: ≥ 1.5 apart.
_SITE_SPACING = 8.0


def _manifold_rule(options: Mapping[str, Any], context: Mapping[str, Any] | None = None) -> tuple[str, str] | None:
    """Rule of :func:`cohort_manifold`: the curved embedding needs ``n_features - n_noise_features ≥ 2·intrinsic_dim
    + 1`` signal features (Whitney: a generic smooth map of a d-manifold into 2d + 1 dimensions is an embedding), and
    ``2·close_pairs ≤ n_cohorts``."""
    d = options.get("intrinsic_dim", 2)
    signal = options.get("n_features", 64) - options.get("n_noise_features", 8)
    if signal < 2 * d + 1:
        return "n_noise_features", (f"n_features - n_noise_features = {signal} signal features are too few: the "
                                    f"{d}-dimensional manifold needs at least 2·intrinsic_dim + 1 = {2 * d + 1}; "
                                    f"raise n_features or lower n_noise_features")
    if 2 * options.get("close_pairs", 2) > options.get("n_cohorts", 10):
        return "close_pairs", (f"{options.get('close_pairs')} pairs need 2·close_pairs ≤ n_cohorts = "
                               f"{options.get('n_cohorts', 10)} cohorts; lower close_pairs or raise n_cohorts")
    return None


class _Structure(NamedTuple):
    """The fixed part of :func:`cohort_manifold`: cohort shares, centres and radii in latent space, and the map."""

    weights: np.ndarray  # (c,) cohort probabilities
    centres: np.ndarray  # (c, d) latent centres
    radii: np.ndarray  # (c,) latent radii
    pairs: list[tuple[int, int]]  # the close pairs
    omega: np.ndarray  # (d, m) frequencies of the map
    phase: np.ndarray  # (m,) phases of the map


def _cohort_manifold_structure(n_features: int, n_cohorts: int, intrinsic_dim: int, n_noise_features: int,
                               close_pairs: int, length_scale: float, size_ratio: float, seed: int) -> _Structure:
    rng = np.random.default_rng([seed, 0])
    c, d, m = n_cohorts, intrinsic_dim, n_features - n_noise_features
    weights = np.geomspace(1.0, 1.0 / size_ratio, c)[rng.permutation(c)]
    weights /= weights.sum()
    radii = rng.uniform(0.5, 1.5, c)
    gaps = rng.uniform(0.05, 0.5, close_pairs)
    pairs = [(2 * i, 2 * i + 1) for i in range(close_pairs)]
    members = [[a, b] for a, b in pairs] + [[j] for j in range(2 * close_pairs, c)]
    cols = int(np.ceil(np.sqrt(len(members)))) if d >= 2 else len(members)
    centres = np.zeros((c, d))
    for s, group in enumerate(members):
        site = np.zeros(d)
        site[0] = _SITE_SPACING * (s % cols)
        if d >= 2:
            site[1] = _SITE_SPACING * (s // cols)
        if len(group) == 1:
            centres[group[0]] = site
        else:  # the two discs of a pair, touching up to the pair's gap, along the first axis
            a, b = group
            gap = gaps[s]
            centres[a], centres[b] = site, site
            centres[a, 0] -= radii[a] + gap / 2.0
            centres[b, 0] += radii[b] + gap / 2.0
    omega = rng.normal(0.0, 1.0 / length_scale, (d, m))
    phase = rng.uniform(0.0, 2.0 * np.pi, m)
    return _Structure(weights, centres, radii, pairs, omega, phase)


def _cohort_manifold_block(block: int, s: _Structure, n_features: int, noise: float, seed: int
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All :data:`COHORT_MANIFOLD_BLOCK` rows of block ``block``: (X, labels, latent coordinates)."""
    rng = np.random.default_rng([seed, 1, block])
    rows, (d, m) = COHORT_MANIFOLD_BLOCK, s.omega.shape
    labels = rng.choice(len(s.weights), size=rows, p=s.weights)
    direction = rng.standard_normal((rows, d))
    direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), np.finfo(float).tiny)
    radius = s.radii[labels] * rng.random(rows) ** (1.0 / d)  # uniform in the d-ball
    latent = s.centres[labels] + radius[:, None] * direction
    X = rng.standard_normal((rows, n_features))
    X *= noise
    X[:, :m] += np.cos(latent @ s.omega + s.phase)
    return X, labels, latent


def cohort_manifold_rows(start: int, stop: int, n_features: int = 64, n_cohorts: int = 10, seed: int = 0,
                         intrinsic_dim: int = 2, n_noise_features: int = 8, close_pairs: int = 2,
                         noise: float = 0.05, length_scale: float = 2.0, size_ratio: float = 10.0
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``start..stop`` of :func:`cohort_manifold` with the same options: (X, labels, latent coordinates), for
    callers that stream the data in chunks. Row i depends on the seed, the options and i only, so any chunking gives
    the same rows; time and memory O((stop − start)·n_features) plus one block."""
    if not 0 <= start <= stop:
        raise UserError(f"rows {start}..{stop}: need 0 ≤ start ≤ stop")
    s = _cohort_manifold_structure(n_features, n_cohorts, intrinsic_dim, n_noise_features, close_pairs,
                                   length_scale, size_ratio, seed)
    return _cohort_manifold_rows(start, stop, s, n_features, noise, seed)


def _cohort_manifold_rows(start: int, stop: int, s: _Structure, n_features: int, noise: float, seed: int
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, d = stop - start, s.omega.shape[0]
    X, labels, latent = np.empty((n, n_features)), np.empty(n, dtype=np.int64), np.empty((n, d))
    B = COHORT_MANIFOLD_BLOCK
    for block in range(start // B, -(-stop // B)):
        lo, hi = max(start, block * B), min(stop, (block + 1) * B)
        Xb, yb, ub = _cohort_manifold_block(block, s, n_features, noise, seed)
        X[lo - start:hi - start], labels[lo - start:hi - start], latent[lo - start:hi - start] = \
            Xb[lo - block * B:hi - block * B], yb[lo - block * B:hi - block * B], ub[lo - block * B:hi - block * B]
    return X, labels, latent


@declare({"n_samples": _N_SAMPLES, "n_features": [integer(3, None)], "n_cohorts": [integer(2, None)],
          "seed": SEED, "intrinsic_dim": POSITIVE_INT, "n_noise_features": NON_NEGATIVE_INT,
          "close_pairs": NON_NEGATIVE_INT, "noise": NON_NEGATIVE, "length_scale": POSITIVE,
          "size_ratio": [real(1.0, None, closed="left")]}, rules=[_manifold_rule])
def cohort_manifold(n_samples: int = 10_000, n_features: int = 64, n_cohorts: int = 10, seed: int = 0,
                    intrinsic_dim: int = 2, n_noise_features: int = 8, close_pairs: int = 2, noise: float = 0.05,
                    length_scale: float = 2.0, size_ratio: float = 10.0) -> Dataset:
    """Cohorts on a known curved manifold, at any size (a stand-in for atlases of 10⁵–10⁶ points; generator [ours]).

    **Structure** (everything below is fixed by ``seed`` and stored in ``meta``: cohort shares, centres, radii, the
    close pairs, the map's ``Ω`` and ``φ``; ``ground_truth`` holds every point's latent coordinates ``u``):

    - Latent space ``R^d``, ``d = intrinsic_dim``. Cohort ``j`` is a ball ``B(c_j, r_j)``, radius
      ``r_j ~ U[0.5, 1.5]``; a point's cohort is drawn with probability ``π_j``, the shares ``π`` spaced
      geometrically from 1 to ``1/size_ratio`` (then normalised, in a seeded order), and its ``u`` uniformly in
      the ball. Sizes and radii are independent, so the cohorts' densities ``π_j / r_j^d`` differ too (up to
      ``size_ratio · 3^d``).
    - Layout: cohorts ``(0, 1), (2, 3), …`` (``close_pairs`` pairs) share a site and touch but for a gap
      ``~ U[0.05, 0.5]`` along the first axis; every other cohort has a site of its own. Sites lie on a square
      grid of spacing 8 in the first two latent axes (on a line for ``d = 1``), so the balls of distinct sites are
      ≥ 1.5 apart.
    - Map: the first ``m = n_features − n_noise_features`` features are ``cos(u·Ω + φ)``, ``Ω ~ N(0, ℓ⁻²)``
      (``d × m``, ``ℓ = length_scale``), ``φ ~ U[0, 2π)``: random Fourier features, a smooth curved embedding of
      the latent space whose squared feature distance is ≈ ``m(1 − exp(−‖u − v‖² / 2ℓ²))``; near points keep
      their latent geometry (scaled by ≈ ``√(m/2)/ℓ``), far ones saturate at ≈ ``√m``, as distances between
      unrelated groups do in high-dimensional data. The last ``n_noise_features`` features carry noise only.
    - Noise: ``N(0, noise²)`` on every feature (isotropic). Rows come in blocks of 8,192, each from its own
      stream seeded by ``(seed, block)``, so the data are the same however they are chunked
      (:func:`cohort_manifold_rows`) and the first n rows of a larger set are the set of size n: a scaled-down
      run sees a prefix of the large one.

    **Why a fair stand-in** for single-cell atlases and image collections: cohorts (cell types, classes) of
    different sizes (10× by default) and densities, a few touching cohorts (closely related cell states, similar
    classes) that a map may merge, each cohort a curved low-dimensional patch (continuous variation within a type:
    cell cycle, pose, lighting), far groups at nearly equal distances, features without signal, and isotropic
    measurement noise; the truth (labels, ``u``) is known, so a map's neighbourhoods and cohort arrangement can be
    checked against it at any n. Time and memory are O(n · n_features).

    **What it does not model**: counts and their overdispersion and dropout (single-cell), sparse or non-negative
    features, batch effects, hierarchies of types, trajectories that connect cohorts, heavy-tailed or
    feature-dependent noise, duplicates, outliers, or a manifold whose dimension varies between cohorts.
    """
    problem = _manifold_rule({"n_features": n_features, "n_cohorts": n_cohorts, "intrinsic_dim": intrinsic_dim,
                              "n_noise_features": n_noise_features, "close_pairs": close_pairs})
    if problem is not None:
        raise UserError(f"cohort_manifold option {problem[0]}: {problem[1]}")
    s = _cohort_manifold_structure(n_features, n_cohorts, intrinsic_dim, n_noise_features, close_pairs,
                                   length_scale, size_ratio, seed)
    X, labels, latent = _cohort_manifold_rows(0, n_samples, s, n_features, noise, seed)
    return Dataset(X, labels, [f"cohort {j + 1}" for j in range(n_cohorts)], ground_truth=latent, meta={
        "source": "synthetic", "generator": "cohort_manifold", "n_samples": n_samples, "n_features": n_features,
        "n_cohorts": n_cohorts, "seed": seed, "intrinsic_dim": intrinsic_dim, "n_noise_features": n_noise_features,
        "close_pairs": [list(p) for p in s.pairs], "noise": noise, "length_scale": length_scale,
        "size_ratio": size_ratio, "cohort_shares": s.weights.tolist(), "cohort_centres": s.centres.tolist(),
        "cohort_radii": s.radii.tolist(), "map_frequencies": s.omega.tolist(), "map_phases": s.phase.tolist(),
        "ground_truth_names": [f"u{i + 1}" for i in range(intrinsic_dim)]})


#: The columns of X of each generator above: a number, or the option that sets it. The configuration check reads
#: them to know a dataset's d before any job (:func:`cova.config.checks.known_feature_count`); the tests check each
#: against the generator's output.
COLUMNS: dict[str, int | str] = {"sinusoid": 2, "swiss_roll": 3, "cylinder1": 3, "cylinder2": 3, "s_curve": 3,
                                 "sphere": 3, "places_shaped": "n_features",
                                 "cohort_manifold": "n_features"}
