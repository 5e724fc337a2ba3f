"""Synthetic data sets of the COVA paper (Sec. 4.1, Table 3, H.1).

The paper defines none of its generators; these follow ``shared/specs/000-cova.md`` §7, which checked them
against the paper's LLE numbers (Table 3). Every generator is seeded and returns a :class:`Dataset`.
"""

from __future__ import annotations

import numpy as np

from .base import Dataset


def sinusoid(n_samples: int = 1000, n_cohorts: int = 6, noise: float = 0.15, random_state: int = 0) -> Dataset:
    """Sinusoid (COVA Fig. 1, Table H.1/H.2; spec §7).

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


def swiss_roll(n_samples: int = 2000, n_cohorts: int = 4, noise: float = 0.05, random_state: int = 0) -> Dataset:
    """Swiss roll (COVA Table 3; spec §7).

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


def cylinder1(n_samples: int = 2000, n_sectors: int = 6, noise: float = 0.02, random_state: int = 0) -> Dataset:
    """Cylinder1 (COVA Table 3; spec §7): lateral surface of radius 1 and height 3, cohorts = angular sectors.

    ``θ ~ U[0, 2π)``, ``h ~ U[0, 3]``, ``X = (cos θ, sin θ, h) + N(0, noise²)``; ``n_sectors`` sectors of 360°/n.
    """
    rng = np.random.default_rng(random_state)
    X, theta, _ = _cylinder_surface(n_samples, noise, rng)
    labels = np.minimum((theta / (2.0 * np.pi) * n_sectors).astype(np.int64), n_sectors - 1)
    return Dataset(X, labels, [f"sector {j + 1}" for j in range(n_sectors)],
                   meta={"source": "synthetic", "generator": "cylinder1", "n_samples": n_samples,
                         "n_sectors": n_sectors, "noise": noise, "random_state": random_state})


def cylinder2(n_samples: int = 2000, n_sectors: int = 4, n_bands: int = 3, noise: float = 0.02,
              random_state: int = 0) -> Dataset:
    """Cylinder2 (COVA Table 3/4, Fig. 2; spec §7): the Cylinder1 surface cut into sectors × height bands.

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
