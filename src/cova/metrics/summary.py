"""All scores of one embedding, as the pipeline writes them to ``scores.json``."""

from __future__ import annotations

import numpy as np

from .cohort import s_c, s_c_r, s_n, s_s
from .neighborhood import trustworthiness_continuity


def cohort_centres(Z: np.ndarray, labels: np.ndarray, n_cohorts: int) -> np.ndarray:
    """Mean of the embedded samples of each cohort (NaN rows for empty cohorts)."""
    sums = np.zeros((n_cohorts, Z.shape[1]))
    np.add.at(sums, labels, Z)
    counts = np.bincount(labels, minlength=n_cohorts).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


def procrustes_align(Z: np.ndarray, labels: np.ndarray, prototypes: np.ndarray) -> np.ndarray:
    """Map Z by the similarity transform (rotation or reflection, isotropic scale, shift) that best carries
    its cohort centres onto the prototypes in least squares.

    Used to report an *aligned* S_c for methods whose coordinates are arbitrary (spec §5, S_c bullet):
    raw S_c is not invariant to a global similarity transform, the aligned one is.
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


def compute_scores(X: np.ndarray, Z: np.ndarray, labels: np.ndarray, prototypes: np.ndarray,
                   placed_prototypes: np.ndarray | None = None, n_neighbors: int = 12,
                   kappa: int = 2) -> dict[str, float]:
    """S_n, S_s, S_c (raw and aligned), S_c^(r), trustworthiness and continuity of embedding ``Z``.

    ``prototypes`` are the run's Υ (the desired arrangement for S_c^(r) and for the aligned S_c);
    ``placed_prototypes`` are the points the method itself placed cohorts at (Υ for E1-E4 and P1-P4, E for
    eigen-COVA); for methods without them the raw S_c compares Z with Υ in Z's arbitrary coordinates.
    """
    P = prototypes if placed_prototypes is None else placed_prototypes
    t, c = trustworthiness_continuity(X, Z, n_neighbors)
    return {
        "s_n": s_n(X, Z, labels),
        "s_s": s_s(Z, labels),
        "s_c": s_c(Z, labels, P),
        "s_c_aligned": s_c(procrustes_align(Z, labels, prototypes), labels, prototypes),
        "s_c_r": s_c_r(Z, labels, prototypes, kappa=kappa),
        "trustworthiness": t,
        "continuity": c,
    }
