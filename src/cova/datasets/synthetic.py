"""Synthetic data sets of the COVA paper (Sec. 4.1, Table 3, H.1).

The paper defines none of its generators; these are ours (``docs/papers.md``, COVA, "Synthetic data"). Our
cylinders give LLE S_n values close to the paper's Table 3. Every generator is seeded and returns a
:class:`Dataset`.
"""

from __future__ import annotations

import numpy as np

from ..constraints import NON_NEGATIVE, POSITIVE_INT, SEED, declare, integer, real
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


#: The columns of X of each generator above: a number, or the option that sets it. The configuration check reads
#: them to know a dataset's d before any job (:func:`cova.config.checks.known_feature_count`); the tests check each
#: against the generator's output.
COLUMNS: dict[str, int | str] = {"sinusoid": 2, "swiss_roll": 3, "cylinder1": 3, "cylinder2": 3, "s_curve": 3,
                                 "sphere": 3, "places_shaped": "n_features"}
