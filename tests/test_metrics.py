"""Tests of cova.metrics: S_s, S_c, S_c^(r) (Eq. G.1), S_n (Eq. G.2), trustworthiness and continuity.

Every metric is checked against a plain brute-force reference (full distance matrices, explicit loops, n <= 150)
that follows COVA App. G literally, with the tie rule of docs/papers.md ("Scores"): a stable sort on (distance,
index). Integer lattice data with duplicated points exercise the ties.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from sklearn.manifold import trustworthiness as sk_trustworthiness

from cova.metrics import continuity, s_c, s_c_r, s_n, s_s, trustworthiness, trustworthiness_continuity
from cova.metrics.cohort import s_n_readings
from cova.metrics.neighborhood import EXACT_MAX_DIM, KDTREE_MAX_DIM, knn_indices, target_ranks

# --------------------------------------------------------------------------------------------------------
# brute-force references (deliberately plain)
# --------------------------------------------------------------------------------------------------------


def full_sqdist(A: np.ndarray) -> np.ndarray:
    return ((A[:, None, :] - A[None, :, :]) ** 2).sum(axis=-1)


def neighbours_sorted(D: np.ndarray, i: int, candidates) -> list[int]:
    """candidates (excluding i) sorted by (distance to i, index)."""
    return sorted((m for m in candidates if m != i), key=lambda m: (D[i, m], m))


def ref_knn(A: np.ndarray, k: int) -> np.ndarray:
    D = full_sqdist(A)
    return np.array([neighbours_sorted(D, i, range(len(A)))[:k] for i in range(len(A))])


def ref_trustworthiness(X: np.ndarray, Z: np.ndarray, k: int) -> float:
    n = len(X)
    DX, DZ = full_sqdist(X), full_sqdist(Z)
    total = 0
    for i in range(n):
        order_x = neighbours_sorted(DX, i, range(n))
        rank = {m: r + 1 for r, m in enumerate(order_x)}
        for j in neighbours_sorted(DZ, i, range(n))[:k]:
            total += max(0, rank[j] - k)
    return 1.0 - 2.0 * total / (n * k * (2.0 * n - 3.0 * k - 1.0))


def ref_s_s(Z: np.ndarray, y: np.ndarray) -> float:
    D = full_sqdist(Z)
    hits = [y[neighbours_sorted(D, i, range(len(Z)))[0]] == y[i] for i in range(len(Z))]
    return float(np.mean(hits))


def ref_s_c(Z: np.ndarray, y: np.ndarray, P: np.ndarray) -> float:
    hits = 0
    for i in range(len(Z)):
        d = [((Z[i] - P[j]) ** 2).sum() for j in range(len(P))]
        best = min(range(len(P)), key=lambda j: (d[j], j))
        hits += best == y[i]
    return hits / len(Z)


def ref_graph(points: np.ndarray, kappa: int) -> set[frozenset]:
    D = full_sqdist(points)
    edges = set()
    for i in range(len(points)):
        for j in neighbours_sorted(D, i, range(len(points)))[:kappa]:
            edges.add(frozenset((i, j)))
    return edges


def ref_s_c_r(Z: np.ndarray, y: np.ndarray, P: np.ndarray, kappa: int = 2) -> float:
    present = [j for j in range(len(P)) if np.any(y == j)]
    if len(present) <= kappa + 1:
        return 1.0
    centres = np.array([Z[y == j].mean(axis=0) for j in present])
    ev, ed = ref_graph(centres, kappa), ref_graph(P[present], kappa)
    return len(ev & ed) / len(ed)  # each undirected link counts twice in both sums of Eq. G.1


def ref_s_n(X: np.ndarray, Z: np.ndarray, y: np.ndarray, kappa_max: int | None = None) -> float:
    """Eq. G.2 written out literally, with sets."""
    l = len(X)
    sizes = [int(np.sum(y == j)) for j in np.unique(y)]
    kbar = int(np.floor(0.9 * min(sizes) + 1e-9)) if kappa_max is None else kappa_max
    if kbar == 0:
        return float("nan")
    DX, DZ = full_sqdist(X), full_sqdist(Z)
    total = 0.0
    for kappa in range(1, kbar + 1):
        s = 0
        for j in np.unique(y):
            members = np.flatnonzero(y == j)
            for i in members:
                NX = neighbours_sorted(DX, i, members)
                NZ = neighbours_sorted(DZ, i, members)
                s += len(set(NX[:kappa]) & set(NZ[:kappa]))
        total += s / (l * kappa)
    return total / kbar


def ref_s_n_per_cohort(X: np.ndarray, Z: np.ndarray, y: np.ndarray) -> float:
    """S_n with κ̄_j = ⌊0.9 n_j⌋ for the members of cohort j, written out with sets."""
    DX, DZ = full_sqdist(X), full_sqdist(Z)
    total = 0.0
    for j in np.unique(y):
        members = np.flatnonzero(y == j)
        kbar = (9 * members.size) // 10
        for i in members:
            NX = neighbours_sorted(DX, i, members)
            NZ = neighbours_sorted(DZ, i, members)
            total += sum(len(set(NX[:k]) & set(NZ[:k])) / k for k in range(1, kbar + 1)) / kbar
    return total / len(X)


# --------------------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------------------

SIZES = [40, 23, 55, 12, 20]  # unequal cohorts, n = 150


def cohort_data(seed: int, d: int = 6, k: int = 2, lattice: bool = False):
    """Labels with unequal cohort sizes (shuffled), X (l, d), Z (l, k), prototypes (c, k).

    ``lattice``: small integer coordinates, so that there are many exact distance ties and duplicates."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.repeat(np.arange(len(SIZES)), SIZES))
    if lattice:
        X = rng.integers(0, 3, size=(y.size, d)).astype(float)
        Z = rng.integers(0, 3, size=(y.size, k)).astype(float)
        P = rng.integers(0, 3, size=(len(SIZES), k)).astype(float)
    else:
        X = rng.normal(size=(y.size, d)) + 2.0 * rng.normal(size=(len(SIZES), d))[y]
        Z = rng.normal(size=(y.size, k)) + 1.5 * rng.normal(size=(len(SIZES), k))[y]
        P = rng.normal(size=(len(SIZES), k))
    return X, Z, y, P


# --------------------------------------------------------------------------------------------------------
# trustworthiness / continuity
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,d,k,nn",
    [(200, 5, 2, 1), (200, 5, 2, 5), (180, 12, 3, 12), (190, EXACT_MAX_DIM + 8, 2, 5), (150, 3, 10, 7)],
)
def test_trustworthiness_and_continuity_equal_sklearn(n, d, k, nn):
    rng = np.random.default_rng(n + d + k + nn)
    X = rng.normal(size=(n, d))
    Z = X @ rng.normal(size=(d, k)) + 0.5 * rng.normal(size=(n, k))
    t = trustworthiness(X, Z, n_neighbors=nn)
    c = continuity(X, Z, n_neighbors=nn)
    assert isinstance(t, float) and isinstance(c, float)
    assert abs(t - sk_trustworthiness(X, Z, n_neighbors=nn)) < 1e-10
    assert abs(c - sk_trustworthiness(Z, X, n_neighbors=nn)) < 1e-10
    assert 0.0 <= t <= 1.0 and 0.0 <= c <= 1.0


def test_trustworthiness_perfect_embedding_and_bad_embedding():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 2))
    assert trustworthiness(X, 3.0 * X + 1.0, 5) == pytest.approx(1.0, abs=1e-12)
    assert trustworthiness(X, rng.normal(size=(120, 2)), 5) < 0.8


@pytest.mark.parametrize("seed", [0, 1])
def test_trustworthiness_and_continuity_with_ties_match_reference(seed):
    X, Z, _, _ = cohort_data(seed, d=4, k=2, lattice=True)  # many exact ties and duplicates
    for nn in (1, 4, 9):
        assert trustworthiness(X, Z, nn) == pytest.approx(ref_trustworthiness(X, Z, nn), abs=1e-12)
        assert continuity(X, Z, nn) == pytest.approx(ref_trustworthiness(Z, X, nn), abs=1e-12)


@pytest.mark.parametrize("d", [1, 2, KDTREE_MAX_DIM, KDTREE_MAX_DIM + 3, EXACT_MAX_DIM + 5])
@pytest.mark.parametrize("lattice", [False, True])
def test_knn_indices_is_stable_on_distance_then_index(d, lattice):
    rng = np.random.default_rng(d)
    A = rng.integers(0, 3, size=(130, d)).astype(float) if lattice else rng.normal(size=(130, d))
    if lattice and d > EXACT_MAX_DIM:
        A = rng.normal(size=(130, d))  # BLAS distances are not exact: ties are only guaranteed below
    for k in (1, 3, 17):
        np.testing.assert_array_equal(knn_indices(A, k), ref_knn(A, k))


def test_knn_indices_with_many_duplicates_of_each_point():
    rng = np.random.default_rng(5)
    A = np.repeat(rng.normal(size=(10, 2)), 15, axis=0)[rng.permutation(150)]
    np.testing.assert_array_equal(knn_indices(A, 4), ref_knn(A, 4))
    np.testing.assert_array_equal(knn_indices(A, 20), ref_knn(A, 20))


def test_target_ranks_match_reference():
    X, _, _, _ = cohort_data(3, d=3, lattice=True)
    T = np.random.default_rng(0).integers(0, len(X), size=(len(X), 6))
    T[T == np.arange(len(X))[:, None]] = 0
    T[0] = 1
    D = full_sqdist(X)
    expected = np.empty_like(T)
    for i in range(len(X)):
        order = neighbours_sorted(D, i, range(len(X)))
        expected[i] = [order.index(t) + 1 for t in T[i]]
    np.testing.assert_array_equal(target_ranks(X, T), expected)


@pytest.mark.parametrize("n,d,k,nn", [(200, 5, 2, 5), (190, EXACT_MAX_DIM + 8, 2, 5), (150, 3, 10, 7)])
def test_trustworthiness_continuity_in_one_pass_equals_sklearn(n, d, k, nn):
    rng = np.random.default_rng(7 * n + d)
    X = rng.normal(size=(n, d))
    Z = X @ rng.normal(size=(d, k)) + 0.5 * rng.normal(size=(n, k))
    t, c = trustworthiness_continuity(X, Z, nn)
    assert t == trustworthiness(X, Z, nn) and c == continuity(X, Z, nn)
    assert abs(t - sk_trustworthiness(X, Z, n_neighbors=nn)) < 1e-10
    assert abs(c - sk_trustworthiness(Z, X, n_neighbors=nn)) < 1e-10


@pytest.mark.parametrize("seed", [0, 1])
def test_trustworthiness_continuity_in_one_pass_with_ties_match_reference(seed):
    X, Z, _, _ = cohort_data(seed, d=4, k=2, lattice=True)
    for nn in (1, 4, 9):
        t, c = trustworthiness_continuity(X, Z, nn)
        assert t == pytest.approx(ref_trustworthiness(X, Z, nn), abs=1e-12)
        assert c == pytest.approx(ref_trustworthiness(Z, X, nn), abs=1e-12)


def test_target_ranks_when_targets_are_duplicates_or_spread_through_the_row():
    """The histogram ranks (one pass, buckets up to the farthest target) against the plain count: targets
    all at distance 0 (duplicates: the farthest target is 0, every element goes to bucket 0), targets far
    out (deep in the row), and a subnormal farthest distance."""
    rng = np.random.default_rng(11)
    base = rng.integers(0, 4, size=(40, 2)).astype(float)
    X = np.repeat(base, 6, axis=0)[rng.permutation(240)]  # every point has 5 exact duplicates
    D = full_sqdist(X)
    dup = np.array([[m for m in neighbours_sorted(D, i, range(len(X))) if D[i, m] == 0][:5] for i in range(len(X))])
    far = np.array([neighbours_sorted(D, i, range(len(X)))[-7:] for i in range(len(X))])
    rand = (np.arange(len(X))[:, None] + rng.integers(1, len(X), size=(len(X), 9))) % len(X)  # never the row
    for T in (dup, far, rand):
        expected = np.array([[neighbours_sorted(D, i, range(len(X))).index(t) + 1 for t in T[i]]
                             for i in range(len(X))])
        np.testing.assert_array_equal(target_ranks(X, T), expected)
    tiny = np.array([[0.0], [1e-160], [2e-160], [0.0], [1.0]])  # squared distances 1e-320 are subnormal
    Dt = full_sqdist(tiny)
    Tt = np.array([[1, 3], [0, 2], [1, 0], [0, 1], [0, 2]])
    expected = np.array([[neighbours_sorted(Dt, i, range(5)).index(t) + 1 for t in Tt[i]] for i in range(5)])
    np.testing.assert_array_equal(target_ranks(tiny, Tt), expected)


@pytest.mark.parametrize("kind", ["clusters", "one_axis_constant", "far_from_origin", "lattice"])
def test_target_ranks_in_2d_grid_match_reference(kind):
    """2-D points go through the grid (only cells within the farthest target are visited): same ranks as
    the plain count for clustered data, a constant axis, coordinates far from the origin and many ties."""
    rng = np.random.default_rng(len(kind))
    n = 260
    A = rng.normal(size=(n, 2)) * 0.05 + 3.0 * rng.normal(size=(5, 2))[rng.integers(0, 5, n)]
    if kind == "one_axis_constant":
        A[:, 1] = 7.0
    elif kind == "far_from_origin":
        A = A + 1e6
    elif kind == "lattice":
        A = rng.integers(0, 4, size=(n, 2)).astype(float)
    D = full_sqdist(A)
    near = np.array([neighbours_sorted(D, i, range(n))[:6] for i in range(n)])
    spread = (np.arange(n)[:, None] + rng.integers(1, n, size=(n, 6))) % n
    for T in (near, spread, np.hstack([near[:, :3], spread[:, :3]])):
        expected = np.array([[neighbours_sorted(D, i, range(n)).index(t) + 1 for t in T[i]] for i in range(n)])
        np.testing.assert_array_equal(target_ranks(A, T), expected)


# --------------------------------------------------------------------------------------------------------
# cohort scores vs brute force
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed,lattice", [(0, False), (1, False), (2, True), (3, True)])
def test_s_s_matches_reference(seed, lattice):
    _, Z, y, _ = cohort_data(seed, lattice=lattice)
    assert s_s(Z, y) == pytest.approx(ref_s_s(Z, y), abs=1e-15)


def test_s_s_ties_go_to_lower_index():
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [10.0, 10.0]])
    # nearest neighbours: 0 -> 1 (tied with 2 at distance 1; the lower index wins), 1 -> 0, 2 -> 0, 3 -> 1
    y = np.array([0, 1, 0, 1])
    assert s_s(Z, y) == 0.5  # misses 0 -> 1 and 1 -> 0; would be 0.75 if the tie went to sample 2
    assert s_s(Z, y) == ref_s_s(Z, y)
    assert s_s(Z, np.array([0, 0, 1, 1])) == 0.5


@pytest.mark.parametrize("seed,lattice", [(0, False), (1, False), (2, True), (3, True)])
def test_s_c_matches_reference(seed, lattice):
    _, Z, y, P = cohort_data(seed, lattice=lattice)
    assert s_c(Z, y, P) == pytest.approx(ref_s_c(Z, y, P), abs=1e-15)


def test_s_c_ties_go_to_lower_prototype():
    P = np.array([[1.0, 0.0], [-1.0, 0.0]])
    Z = np.zeros((3, 2))  # equidistant from both prototypes
    assert s_c(Z, np.array([0, 0, 0]), P) == 1.0
    assert s_c(Z, np.array([1, 1, 1]), P) == 0.0


@pytest.mark.parametrize("seed,lattice", [(0, False), (1, False), (2, True), (3, True), (4, False)])
@pytest.mark.parametrize("kappa", [1, 2, 3])
def test_s_c_r_matches_reference(seed, lattice, kappa):
    rng = np.random.default_rng(seed)
    c = 9
    y = rng.integers(0, c, size=140)
    if lattice:
        Z = rng.integers(0, 3, size=(140, 2)).astype(float)
        P = rng.integers(0, 3, size=(c, 2)).astype(float)
    else:
        P = rng.normal(size=(c, 2))
        Z = P[y] + 0.8 * rng.normal(size=(140, 2))
    assert s_c_r(Z, y, P, kappa=kappa) == pytest.approx(ref_s_c_r(Z, y, P, kappa), abs=1e-15)


def test_s_c_r_drops_empty_cohorts_and_small_c():
    rng = np.random.default_rng(0)
    P = rng.normal(size=(8, 2))
    y = rng.choice([0, 1, 3, 4, 6, 7], size=100)  # cohorts 2 and 5 are empty
    Z = rng.normal(size=(100, 2))
    assert s_c_r(Z, y, P) == pytest.approx(ref_s_c_r(Z, y, P))
    # the empty cohorts' prototypes must not influence the score
    P2 = P.copy()
    P2[[2, 5]] = [[100.0, 100.0], [-100.0, 50.0]]
    assert s_c_r(Z, y, P2) == s_c_r(Z, y, P)
    # c <= kappa + 1 -> 1.0
    assert s_c_r(Z, rng.integers(0, 3, size=100), P[:3]) == 1.0
    assert s_c_r(Z, np.zeros(100, dtype=int), P[:5]) == 1.0


@pytest.mark.parametrize("seed,lattice,d", [(0, False, 6), (1, False, 2), (2, True, 3), (3, True, 5),
                                            (4, False, EXACT_MAX_DIM + 4)])
def test_s_n_matches_reference(seed, lattice, d):
    X, Z, y, _ = cohort_data(seed, d=d, lattice=lattice)
    if lattice:
        assert len({tuple(r) for r in Z}) < len(Z)  # the data really have duplicates
    assert s_n(X, Z, y) == pytest.approx(ref_s_n(X, Z, y), abs=1e-12)
    assert s_n(X, Z, y, kappa_max=3) == pytest.approx(ref_s_n(X, Z, y, kappa_max=3), abs=1e-12)


@pytest.mark.parametrize("seed,lattice,d", [(0, False, 6), (2, True, 3), (4, False, EXACT_MAX_DIM + 4)])
def test_s_n_per_cohort_kappa_bar_matches_reference(seed, lattice, d):
    X, Z, y, _ = cohort_data(seed, d=d, lattice=lattice)
    assert len(set(np.bincount(y).tolist())) > 1  # unequal cohorts: the two readings differ
    assert s_n(X, Z, y, per_cohort=True) == pytest.approx(ref_s_n_per_cohort(X, Z, y), abs=1e-12)
    assert s_n(X, Z, y, per_cohort=True) != pytest.approx(s_n(X, Z, y), abs=1e-6)
    # equal cohorts: one κ̄ for all, the same number
    rng = np.random.default_rng(seed)
    ye = np.repeat([0, 1, 2], 15)
    Xe, Ze = rng.normal(size=(45, 3)), rng.normal(size=(45, 2))
    assert s_n(Xe, Ze, ye, per_cohort=True) == pytest.approx(s_n(Xe, Ze, ye), abs=1e-12)
    with pytest.raises(ValueError, match="one"):
        s_n(X, Z, y, kappa_max=3, per_cohort=True)
    # both readings from one pass, bit-identical to the two calls
    assert s_n_readings(X, Z, y) == (s_n(X, Z, y), s_n(X, Z, y, per_cohort=True))


def test_s_n_default_kappa_bar_is_floor_of_90_percent():
    X, Z, y, _ = cohort_data(7)
    kbar = (9 * min(SIZES)) // 10  # = 10 for the smallest cohort of 12
    assert kbar == 10
    assert s_n(X, Z, y) == pytest.approx(s_n(X, Z, y, kappa_max=kbar), abs=0)
    assert s_n(X, Z, y) != s_n(X, Z, y, kappa_max=kbar - 1)
    # cohort of size 10: 0.9 * 10 = 9 exactly
    y10 = np.repeat([0, 1], [10, 30])
    rng = np.random.default_rng(0)
    X10, Z10 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    assert s_n(X10, Z10, y10) == pytest.approx(ref_s_n(X10, Z10, y10, kappa_max=9), abs=1e-12)


def test_s_n_is_nan_for_a_singleton_cohort_and_ignores_empty_cohorts():
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(30, 3)), rng.normal(size=(30, 2))
    y = np.repeat([0, 1], [29, 1])
    assert np.isnan(s_n(X, Z, y))
    y2 = np.repeat([0, 2], [15, 15])  # cohort 1 is empty: not a cohort of size 0
    assert s_n(X, Z, y2) == pytest.approx(ref_s_n(X, Z, y2), abs=1e-12)


# --------------------------------------------------------------------------------------------------------
# toy facts: values the definitions of App. G fix exactly
# --------------------------------------------------------------------------------------------------------


def test_toy_s_s_is_one_for_well_separated_blobs():
    rng = np.random.default_rng(0)
    centres = 50.0 * rng.normal(size=(6, 2))
    y = rng.integers(0, 6, size=600)
    Z = centres[y] + 0.1 * rng.normal(size=(600, 2))
    assert s_s(Z, y) == 1.0


def test_toy_s_c_is_one_for_prototypes_plus_tiny_noise():
    rng = np.random.default_rng(1)
    P = rng.normal(size=(7, 2))
    y = rng.integers(0, 7, size=500)
    assert s_c(P[y] + 1e-6 * rng.normal(size=(500, 2)), y, P) == 1.0
    # and a permuted assignment is not
    assert s_c(P[(y + 1) % 7], y, P) == 0.0


def test_toy_s_c_r_is_one_when_centres_equal_prototypes():
    rng = np.random.default_rng(2)
    c = 12
    P = rng.normal(size=(c, 2))
    y = rng.permutation(np.arange(400) % c)
    noise = rng.normal(size=(400, 2))
    for j in range(c):
        noise[y == j] -= noise[y == j].mean(axis=0)
    Z = P[y] + noise  # cohort centres equal P
    assert s_c_r(Z, y, P) == 1.0
    assert s_c_r(Z, y, P[rng.permutation(c)]) < 1.0


def test_toy_s_n_is_one_for_identity_embedding():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    y = rng.integers(0, 4, size=300)
    assert s_n(X, X.copy(), y) == pytest.approx(1.0, abs=1e-15)


def test_toy_s_n_random_embedding_is_chance_level():
    rng = np.random.default_rng(4)
    n = 1000
    X, Z = rng.normal(size=(n, 5)), rng.normal(size=(n, 2))
    y = np.zeros(n, dtype=int)
    kbar = (9 * n) // 10
    chance = np.mean(np.arange(1, kbar + 1) / (n - 1))
    assert abs(s_n(X, Z, y) - chance) < 0.02


# --------------------------------------------------------------------------------------------------------
# memory: nothing n x n
# --------------------------------------------------------------------------------------------------------


def test_memory_at_n_20000_stays_far_below_an_n_by_n_matrix():
    rng = np.random.default_rng(0)
    n, d, k, c = 20_000, 10, 2, 10
    X = rng.normal(size=(n, d))
    Z = X[:, :k] + 0.5 * rng.normal(size=(n, k))
    y = rng.integers(0, c, size=n)
    P = rng.normal(size=(c, k))
    # compile the kernels outside the measurement
    trustworthiness(X[:50], Z[:50], 3), continuity(X[:50], Z[:50], 3), s_n(X[:50], Z[:50], y[:50] % 2)
    tracemalloc.start()
    try:
        values = [trustworthiness(X, Z, n_neighbors=10), continuity(X, Z, n_neighbors=10), s_s(Z, y),
                  s_c(Z, y, P), s_c_r(Z, y, P), s_n(X, Z, y)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert all(0.0 <= v <= 1.0 for v in values)
    assert peak < 0.2 * n * n * 8, f"peak {peak / 1e6:.0f} MB"
    print(f"peak traced memory {peak / 1e6:.0f} MB")


# --------------------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------------------


def test_shape_errors_name_the_argument():
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(30, 4)), rng.normal(size=(30, 2))
    y = np.repeat([0, 1, 2], 10)
    P = rng.normal(size=(3, 2))
    with pytest.raises(ValueError, match="Z"):
        trustworthiness(X, Z[:-1], 3)
    with pytest.raises(ValueError, match="Z"):
        continuity(X, Z[:-1], 3)
    with pytest.raises(ValueError, match="X"):
        trustworthiness(X[:, 0], Z, 3)
    with pytest.raises(ValueError, match="n_neighbors"):
        trustworthiness(X, Z, 15)
    with pytest.raises(ValueError, match="n_neighbors"):
        trustworthiness(X, Z, 0)
    with pytest.raises(ValueError, match="labels"):
        s_s(Z, y[:-1])
    with pytest.raises(ValueError, match="labels"):
        s_s(Z, y.reshape(3, 10))
    with pytest.raises(ValueError, match="labels"):
        s_s(Z, y - 1)
    with pytest.raises(ValueError, match="labels"):
        s_s(Z, y + 0.5)
    with pytest.raises(ValueError, match="prototypes"):
        s_c(Z, y, rng.normal(size=(3, 3)))
    with pytest.raises(ValueError, match="labels"):
        s_c(Z, y, P[:2])
    with pytest.raises(ValueError, match="prototypes"):
        s_c_r(Z, y, P[:, 0])
    with pytest.raises(ValueError, match="kappa"):
        s_c_r(Z, y, P, kappa=0)
    with pytest.raises(ValueError, match="Z"):
        s_n(X, Z[:-1], y)
    with pytest.raises(ValueError, match="labels"):
        s_n(X, Z, y[:-1])
    with pytest.raises(ValueError, match="kappa_max"):
        s_n(X, Z, y, kappa_max=10)
    with pytest.raises(ValueError, match="Z"):
        s_s(np.where(np.eye(30, 2) > 0, np.nan, Z), y)
