"""Cohort centres of an embedding and the similarity transform that carries them onto the prototypes."""

from __future__ import annotations

import numpy as np


def cohort_centres(Z: np.ndarray, labels: np.ndarray, n_cohorts: int) -> np.ndarray:
    """(c, k) mean of the embedded samples of each cohort (NaN rows for empty cohorts)."""
    sums = np.zeros((n_cohorts, Z.shape[1]))
    np.add.at(sums, labels, Z)
    counts = np.bincount(labels, minlength=n_cohorts).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


def procrustes_align(Z: np.ndarray, labels: np.ndarray, prototypes: np.ndarray) -> np.ndarray:
    """Map Z by the similarity transform (rotation or reflection, isotropic scale, shift) that best carries
    its cohort centres onto the prototypes in least squares.

    Used for the *aligned* S_c (COVA App. G, S_c with the prototypes Υ as targets) of methods whose coordinates
    are arbitrary: raw S_c is not invariant to a global similarity transform, the aligned one is.
    """
    C = cohort_centres(Z, labels, prototypes.shape[0])
    ok = np.all(np.isfinite(C), axis=1)
    C, P = C[ok], prototypes[ok]
    mc, mp = C.mean(axis=0), P.mean(axis=0)
    Cc, Pc = C - mc, P - mp
    U, S, Vt = np.linalg.svd(Cc.T @ Pc)
    Q = U @ Vt
    norm = float(np.sum(Cc * Cc))
    scale = float(S.sum()) / norm if norm > 0 else 1.0
    return scale * (Z - mc) @ Q + mp
