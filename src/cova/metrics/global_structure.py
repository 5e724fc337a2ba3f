"""Global-structure measures of featMAP Table 1 (Sec. 4.1): Shepard goodness M_s, normalized stress M_σ and the
centroid-triplet accuracy M_ct.

The paper defers their definitions to Espadoto et al. (2019, "Toward a quantitative survey of dimension reduction
techniques", M_s and M_σ) and Wang et al. (2021, PaCMAP, ``evaluation.centroid_triplet_eval``). Conventions:

* distances are Euclidean, between the rows of X and between the rows of Z (no rescaling of the data);
* M_s and M_σ compare the C(m, 2) pairwise distances, held as condensed vectors in the order of
  :func:`scipy.spatial.distance.pdist`. They cost O(m²) time and memory, so above :data:`MAX_PAIRWISE_POINTS`
  points they are evaluated on the rows :func:`pairwise_subsample` picks, a function of m and the seed alone (the
  same rows for every method run on a dataset); :func:`condensed_distances` refuses more than
  :data:`MAX_CONDENSED_POINTS` points;
* the sums run in a fixed order in compiled loops (no parallel reduction), so the values are reproducible.

Memory at the cap of 10,000 points: the two condensed distance vectors are 50 M float64 each (400 MB each); the
Spearman ranks overwrite the distances in place and need one int64 sort order (400 MB) at a time, so the peak is
about 1.2 GB.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from ..errors import UserError
from .neighborhood import _as_matrix, _block_rows, _same_rows, sqdist_block
from .subsample import MAX_PAIRWISE_POINTS, SUBSAMPLE_SEED, pairwise_subsample

__all__ = ["MAX_PAIRWISE_POINTS", "MAX_CONDENSED_POINTS", "SUBSAMPLE_SEED", "pairwise_subsample",
           "condensed_distances", "shepard_goodness", "normalized_stress", "shepard_goodness_and_stress",
           "centroid_triplet_accuracy"]

#: Size guard of :func:`condensed_distances`: C(20,000, 2) float64 distances are 1.6 GB.
MAX_CONDENSED_POINTS = 20_000
#: Terms per partial sum of the compiled reductions (a partial sum per chunk keeps the rounding error of sums
#: over 50 M terms small without depending on thread counts).
_CHUNK = 4096


def condensed_distances(A: np.ndarray) -> np.ndarray:
    """The C(n, 2) Euclidean distances between the rows of ``A`` (n, d) in :func:`scipy.spatial.distance.pdist`
    order (pairs (i, j), i < j, row by row), float64.

    Built in row blocks from :func:`cova.metrics.neighborhood.sqdist_block` (exact differences for at most 32
    columns, else the BLAS expansion clipped at 0), each block only against the rows after it. Raises for more
    than :data:`MAX_CONDENSED_POINTS` rows (subsample first, :func:`pairwise_subsample`)."""
    A = _as_matrix("A", A)
    n = A.shape[0]
    if n < 2:
        raise UserError(f"pairwise distances need at least 2 rows; got {n}")
    if n > MAX_CONDENSED_POINTS:
        raise UserError(f"condensed distances of {n} points would need {n * (n - 1) // 2 * 8 / 1e9:.1f} GB; at "
                         f"most MAX_CONDENSED_POINTS = {MAX_CONDENSED_POINTS} points are allowed (subsample with "
                         "pairwise_subsample)")
    out = np.empty(n * (n - 1) // 2, dtype=np.float64)
    step = _block_rows(n)
    for s in range(0, n - 1, step):
        e = min(n - 1, s + step)
        D = sqdist_block(A[s:e], A[s:])
        np.sqrt(D, out=D)
        for i in range(s, e):
            start = i * n - i * (i + 1) // 2  # pdist offset of the pair (i, i + 1)
            out[start:start + n - 1 - i] = D[i - s, i - s + 1:]
    return out


# --------------------------------------------------------------------------------------------------------
# compiled reductions
# --------------------------------------------------------------------------------------------------------

@numba.njit(cache=True)
def _average_ranks_inplace(v: np.ndarray, order: np.ndarray) -> None:  # pragma: no cover - jit
    """Overwrite ``v`` with its 1-based average ranks (ties share the mean of their ranks, as
    :func:`scipy.stats.rankdata`), ``order`` an argsort of ``v``. A group of equal values is found before any
    of it is overwritten, and later groups are untouched, so the in-place update is safe."""
    n = order.shape[0]
    p = 0
    while p < n:
        val = v[order[p]]
        q = p + 1
        while q < n and v[order[q]] == val:
            q += 1
        r = 0.5 * (p + q + 1)  # mean of the ranks p + 1 .. q
        for t in range(p, q):
            v[order[t]] = r
        p = q


@numba.njit(cache=True)
def _centred_moments(a: np.ndarray, b: np.ndarray, ca: float, cb: float) -> tuple:  # pragma: no cover - jit
    """(Σ (a - ca)(b - cb), Σ (a - ca)², Σ (b - cb)²), summed in chunks of _CHUNK terms."""
    n = a.shape[0]
    sab = 0.0
    saa = 0.0
    sbb = 0.0
    for s in range(0, n, _CHUNK):
        pab = 0.0
        paa = 0.0
        pbb = 0.0
        for t in range(s, min(n, s + _CHUNK)):
            x = a[t] - ca
            y = b[t] - cb
            pab += x * y
            paa += x * x
            pbb += y * y
        sab += pab
        saa += paa
        sbb += pbb
    return sab, saa, sbb


@numba.njit(cache=True)
def _scaled_stress_sums(a: np.ndarray, b: np.ndarray, amin: float, arange: float, bmin: float,
                        brange: float) -> tuple:  # pragma: no cover - jit
    """(Σ (a' - b')², Σ a'²) of the min-max scaled a' = (a - amin) / arange, b' = (b - bmin) / brange, in chunks."""
    n = a.shape[0]
    num = 0.0
    den = 0.0
    for s in range(0, n, _CHUNK):
        pn = 0.0
        pd = 0.0
        for t in range(s, min(n, s + _CHUNK)):
            x = (a[t] - amin) / arange
            y = (b[t] - bmin) / brange
            pn += (x - y) * (x - y)
            pd += x * x
        num += pn
        den += pd
    return num, den


@numba.njit(cache=True)
def _ordered_pair_agreement(a: np.ndarray, b: np.ndarray) -> int:  # pragma: no cover - jit
    """#{(i, j), i < j : (a_i > a_j and b_i > b_j) or (a_i <= a_j and b_i <= b_j)}."""
    n = a.shape[0]
    agree = 0
    for i in range(n):
        for j in range(i + 1, n):
            if (a[i] > a[j]) == (b[i] > b[j]):
                agree += 1
    return agree


# --------------------------------------------------------------------------------------------------------
# Shepard goodness and normalized stress
# --------------------------------------------------------------------------------------------------------

def _pair(X: object, Z: object) -> tuple[np.ndarray, np.ndarray]:
    X = _as_matrix("X", X)
    Z = _as_matrix("Z", Z)
    _same_rows("X", X, "Z", Z)
    return X, Z


def _stress_of(dX: np.ndarray, dZ: np.ndarray) -> float:
    """M_σ of two condensed distance vectors (see :func:`normalized_stress`)."""
    xmin, xmax = float(dX.min()), float(dX.max())
    zmin, zmax = float(dZ.min()), float(dZ.max())
    if xmax == xmin or zmax == zmin:
        return float("nan")  # all distances equal: the min-max scaling is undefined
    num, den = _scaled_stress_sums(dX, dZ, xmin, xmax - xmin, zmin, zmax - zmin)
    return float(np.sqrt(num / den))


def _spearman_inplace(dX: np.ndarray, dZ: np.ndarray) -> float:
    """Spearman ρ of two vectors, overwriting both with their average ranks."""
    for v in (dX, dZ):
        _average_ranks_inplace(v, np.argsort(v))  # tied values form one group whatever their order
    centre = 0.5 * (dX.size + 1)  # the mean of average ranks, exactly
    sab, saa, sbb = _centred_moments(dX, dZ, centre, centre)
    if saa == 0.0 or sbb == 0.0:
        return float("nan")  # a constant distance vector has no ranking
    return float(sab / np.sqrt(saa * sbb))


def shepard_goodness_and_stress(X: np.ndarray, Z: np.ndarray) -> tuple[float, float]:
    """``(shepard_goodness(X, Z), normalized_stress(X, Z))`` from one pair of condensed distance vectors.

    All rows are used (subsample first for more than :data:`MAX_PAIRWISE_POINTS`). NaN for a measure that is
    undefined because every distance of X or of Z is the same."""
    X, Z = _pair(X, Z)
    dX, dZ = condensed_distances(X), condensed_distances(Z)
    stress = _stress_of(dX, dZ)
    return _spearman_inplace(dX, dZ), stress


def shepard_goodness(X: np.ndarray, Z: np.ndarray) -> float:
    """Shepard goodness M_s (Espadoto et al. 2019; featMAP Table 1): Spearman's ρ between the pairwise Euclidean
    distances of X and those of Z over all pairs i < j, ties sharing average ranks (as
    ``scipy.stats.spearmanr(pdist(X), pdist(Z))``). 1 is a perfect monotone fit; higher is better."""
    return shepard_goodness_and_stress(X, Z)[0]


def normalized_stress(X: np.ndarray, Z: np.ndarray) -> float:
    """Normalized stress M_σ (Espadoto et al. 2019; featMAP Table 1), min-max form: with the pairwise distance
    vectors d_X and d_Z each rescaled to [0, 1], ``sqrt(Σ (d_X - d_Z)² / Σ d_X²)`` over all pairs i < j.

    The rescaling makes the value independent of the embedding's scale (the raw ratio is not; the stress of an
    embedding multiplied by a constant changes). Lower is better; 0 for an embedding whose distances are an
    affine function of the input distances."""
    return shepard_goodness_and_stress(X, Z)[1]


# --------------------------------------------------------------------------------------------------------
# centroid triplets
# --------------------------------------------------------------------------------------------------------

def _class_means(A: np.ndarray, codes: np.ndarray, c: int) -> np.ndarray:
    counts = np.bincount(codes, minlength=c).astype(np.float64)
    indicator = sp.csr_matrix((np.ones(codes.size), (codes, np.arange(codes.size))), shape=(c, codes.size))
    return np.asarray(indicator @ A) / counts[:, None]


def centroid_triplet_accuracy(X: np.ndarray, Z: np.ndarray, labels: np.ndarray) -> float:
    """Centroid-triplet accuracy M_ct (Wang et al. 2021, PaCMAP ``centroid_triplet_eval``; featMAP Table 1).

    The class centroids (means) are taken in X and in Z, and the C(c, 2) distances between them listed in the
    order of the strict lower triangle, row by row ((1, 0), (2, 0), (2, 1), ...; classes in sorted label order).
    Over all pairs i < j of these distances, the fraction whose order agrees: ``d^X_i > d^X_j`` and
    ``d^Z_i > d^Z_j``, or ``d^X_i <= d^X_j`` and ``d^Z_i <= d^Z_j`` (PaCMAP's rule, including its treatment of
    equal distances). All points are used. NaN with fewer than 3 classes (no pair of distances to compare).
    O(c⁴) comparisons: 990 for 10 classes.
    """
    X, Z = _pair(X, Z)
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise UserError(f"labels must be 1-D with {X.shape[0]} entries; got shape {y.shape}")
    _, codes = np.unique(y, return_inverse=True)
    codes = codes.astype(np.int64).ravel()
    c = int(codes.max()) + 1
    if c < 3:
        return float("nan")
    rows, cols = np.tril_indices(c, -1)
    dists = []
    for A in (X, Z):
        centres = _class_means(A, codes, c)
        diff = centres[rows] - centres[cols]
        dists.append(np.sqrt(np.einsum("ij,ij->i", diff, diff)))
    n_pairs = rows.size * (rows.size - 1) // 2
    return _ordered_pair_agreement(dists[0], dists[1]) / n_pairs
