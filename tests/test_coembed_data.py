"""Data of the co-embedding paper: the synthetic 2-D sets (Sec. 4.1, Fig. 1, in kind), the Eq. 44 relation between
two point groups, and the hop-distance relation of link data (Sec. 4.3), with Cora's facts on the real files."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from cova.affinity.relation import (
    MAX_DENSE_ENTRIES,
    gaussian_relation,
    hop_distance_relation,
    hop_distances,
    symmetric_adjacency,
)
from cova.datasets import Dataset, load
from cova.datasets.coembedding import COEMBED_KINDS, coembed_points
from cova.inputs import Inputs, Relation, build_inputs, provided_inputs

ROOT = Path(__file__).resolve().parents[1]
CORA = ROOT.parent / "shared" / "datasets" / "cora"  # the project's mirror beside the clone

# ---------------------------------------------------------------------------------------------------------------
# synthetic sets

SIZES = {"dots": (360, 6), "circles": (480, 3), "r15": (600, 15), "target": (770, 6), "rface": (600, 6),
         "2dnormals": (600, 6), "ring": (480, 2)}


@pytest.mark.parametrize("kind", COEMBED_KINDS)
def test_point_sets_have_their_sizes_and_are_seeded(kind):
    a, b, c = coembed_points(kind), coembed_points(kind), coembed_points(kind, random_state=1)
    n, k = SIZES[kind]
    assert a.X.shape == (n, 2) and a.n_cohorts == k and np.unique(a.labels).size == k
    assert np.array_equal(a.X, b.X) and np.array_equal(a.labels, b.labels) and not np.array_equal(a.X, c.X)
    assert a.meta["description"] == "in kind, not the paper's points" and sum(a.meta["cluster_sizes"]) == n


def test_point_set_shapes():
    r15 = coembed_points("r15")
    centres = np.vstack([r15.X[r15.labels == j].mean(axis=0) for j in range(15)])
    radius = np.linalg.norm(centres - [10.0, 10.0], axis=1)
    assert radius[0] < 0.2 and np.allclose(radius[1:8], 2.0, atol=0.2) and np.allclose(radius[8:], 6.4, atol=0.2)
    face = coembed_points("rface")  # fpc::rFace(600): m = 596 // 5 = 119
    assert face.meta["cluster_sizes"] == [119, 179, 119, 119, 60, 4]
    tips = face.X[face.labels == 5]
    assert np.array_equal(tips, [[-4.5, 25], [4.5, 25], [0, 32], [0, 32]])
    chin = face.X[face.labels == 0]
    assert np.abs(chin[:, 1] - chin[:, 0] ** 2).max() < 0.6  # parabola + N(0, 0.1²)
    normals = coembed_points("2dnormals")
    centres = np.vstack([normals.X[normals.labels == j].mean(axis=0) for j in range(6)])
    assert np.allclose(np.linalg.norm(centres, axis=1), np.sqrt(6), atol=0.35)
    target = coembed_points("target")
    r = np.linalg.norm(target.X, axis=1)
    assert r[target.labels == 0].max() < r[target.labels == 1].min() and r[target.labels >= 2].min() > 4.5
    with pytest.raises(ValueError, match="The 'kind' parameter of coembed_points must be a str among .*Got 'moons'"):
        coembed_points("moons")


# ---------------------------------------------------------------------------------------------------------------
# Eq. 44


def test_gaussian_relation_is_eq44():
    rng = np.random.default_rng(0)
    Xr, Xc = rng.normal(size=(7, 2)), rng.normal(size=(5, 2))
    R, s = gaussian_relation(Xr, Xc)
    m, n = 7, 5
    total = sum(np.sum((Xr[i] - Xc[j]) ** 2) for i in range(m) for j in range(n))
    for i in range(m):
        for j in range(n):
            assert R[i, j] == pytest.approx(np.exp(-m * n * np.sum((Xr[i] - Xc[j]) ** 2) / total), rel=1e-12)
    assert s == pytest.approx(total / (m * n))
    d2 = ((Xr[:, None] - Xc[None]) ** 2).sum(-1)
    assert gaussian_relation(Xr, Xc, "median")[1] == pytest.approx(np.median(d2))
    assert gaussian_relation(Xr, Xc, "max")[1] == pytest.approx(d2.max())
    assert np.allclose(gaussian_relation(Xr, Xc, 2.0)[0], np.exp(-d2 / 2.0))
    with pytest.raises(ValueError, match="width must be one of"):
        gaussian_relation(Xr, Xc, "mode")
    with pytest.raises(ValueError, match="width must be one of"):
        gaussian_relation(Xr, Xc, -1.0)
    with pytest.raises(ValueError, match="same number of columns"):
        gaussian_relation(Xr, Xc[:, :1])


def _blobs() -> Dataset:
    rng = np.random.default_rng(3)
    labels = np.repeat([0, 1, 2], [10, 11, 12])
    X = rng.normal(size=(33, 2)) + 5.0 * labels[:, None]
    return Dataset(X, labels, ["a", "b", "c"])


POINTS = {"relation": {"source": "points", "groups": {"rows": [0], "columns": ["b"], "shared": [2]}}}


def test_point_relation_groups_and_eq44():
    ds = _blobs()
    inputs = build_inputs(ds, POINTS, seed=4)
    rel = inputs.relation
    assert inputs.available() == {"relation", "labels"} == provided_inputs(POINTS)
    assert rel.shape == (10 + 6, 11 + 6)  # shared cluster of 12: 6 rows, 6 columns
    assert np.array_equal(np.bincount(rel.row_labels, minlength=3), [10, 0, 6])
    assert np.array_equal(np.bincount(rel.column_labels, minlength=3), [0, 11, 6])
    assert rel.row_label_names == rel.column_label_names == ["a", "b", "c"]
    assert np.array_equal(inputs.labels, rel.row_labels)
    rows, cols = inputs.spec["row_samples"], inputs.spec["column_samples"]
    assert not set(rows) & set(cols) and len(rows) + len(cols) == 33
    assert np.array_equal(rel.row_points, ds.X[rows]) and np.array_equal(rel.column_points, ds.X[cols])
    assert rel.row_names == [f"sample {i}" for i in rows]
    assert np.allclose(rel.matrix.toarray(), gaussian_relation(ds.X[rows], ds.X[cols])[0])
    assert inputs.spec["rows_per_cluster"] == {"a": 10, "b": 0, "c": 6}
    assert inputs.spec["group_of_cluster"] == {"a": "rows", "b": "columns", "c": "shared"}


def test_point_relation_split_is_seeded():
    ds = _blobs()
    a, b = build_inputs(ds, POINTS, seed=4), build_inputs(ds, POINTS, seed=4)
    assert a.spec["row_samples"] == b.spec["row_samples"]
    seeds = {tuple(build_inputs(ds, POINTS, seed=s).spec["row_samples"]) for s in range(5)}
    assert len(seeds) > 1
    fixed = {"relation": dict(POINTS["relation"], split_seed=7)}
    assert build_inputs(ds, fixed, seed=0).spec["row_samples"] == build_inputs(ds, fixed, seed=9).spec["row_samples"]


@pytest.mark.parametrize("groups, message", [
    ({"rows": [0], "columns": [1]}, r"clusters \['c'\] are not listed"),
    ({"rows": [0, 2], "columns": [1], "shared": [2]}, "listed more than once"),
    ({"rows": [0], "columns": [1], "shared": ["z"]}, "unknown cluster 'z'"),
    ({"rows": [0], "columns": [1], "shared": [5]}, r"cluster id 5 is not in 0..2"),
])
def test_point_relation_refuses_bad_groups(groups, message):
    with pytest.raises(ValueError, match=message):
        build_inputs(_blobs(), {"relation": {"source": "points", "groups": groups}})


@pytest.mark.parametrize("block, message", [
    ({"source": "points", "groups": {"rows": [0]}, "sigma": 1},
     r"inputs\.relation: unknown parameters \['sigma'\]; allowed for relation source 'points'"),
    ({"source": "points"}, r"inputs\.relation\.groups: required by relation source 'points'"),
    ({"source": "points", "groups": {"rows": [0], "both": [1]}}, r"inputs\.relation\.groups: unknown parameters \['both'\]"),
    ({"source": "points", "groups": {"rows": [0]}, "width": "mode"}, r"inputs\.relation\.width: 'mode' is not allowed"),
    ({"source": "hop_distances", "rounding": "ceil"}, r"inputs\.relation\.rounding: 'ceil' is not allowed"),
    ({"source": "hop_distances", "row_fraction": 1.5}, r"inputs\.relation\.row_fraction: 1\.5 is not allowed"),
    ({"source": "hop_distances", "groups": {}}, r"inputs\.relation: unknown parameters \['groups'\]"),
    ({"source": "X", "split_seed": 1}, r"inputs\.relation: unknown parameters \['split_seed'\]"),
    ({"source": "edges"}, r"inputs\.relation\.source: 'edges' is not allowed; allowed values: \['X', 'hop_distances', "
                          r"'points'\]"),
])
def test_relation_blocks_refuse_unknown_keys_and_values(block, message):
    with pytest.raises(ValueError, match=message):
        provided_inputs({"relation": block})


def test_relation_points_round_trip_and_old_files(tmp_path):
    ds = _blobs()
    ds.save(tmp_path / "d.npz")
    inputs = build_inputs(ds, POINTS, seed=1)
    inputs.save(tmp_path / "i.npz", with_labels=True)
    back = Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz").relation
    assert np.array_equal(back.row_points, inputs.relation.row_points)
    assert np.array_equal(back.column_labels, inputs.relation.column_labels)
    plain = Inputs(relation=Relation(sp.eye(3, format="csr"), list("abc"), list("xyz")))
    plain.save(tmp_path / "p.npz")
    with np.load(tmp_path / "p.npz") as f:
        assert "relation_row_points" not in f.files
    old = Inputs.load(tmp_path / "d.npz", tmp_path / "p.npz").relation
    assert old.row_points is None and old.column_points is None
    with pytest.raises(ValueError, match="row points must be a 2-D array with 3 rows"):
        Relation(sp.eye(3, format="csr"), list("abc"), list("xyz"), row_points=np.zeros((2, 2)))


# ---------------------------------------------------------------------------------------------------------------
# hop distances


def _bfs(adj: list[set[int]], source: int) -> np.ndarray:
    dist = np.full(len(adj), np.inf)
    dist[source] = 0
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if dist[v] == np.inf:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def test_hop_distances_equal_breadth_first_search():
    rng = np.random.default_rng(5)
    N = 40
    A = sp.random(N, N, density=0.05, random_state=6, format="csr")  # directed, with self loops
    A.setdiag(1.0)
    adj = [set() for _ in range(N)]
    for i, j in zip(*A.nonzero()):
        if i != j:
            adj[i].add(j)
            adj[j].add(i)
    rows, cols = rng.choice(N, 8, replace=False), rng.choice(N, 11, replace=False)
    D = hop_distances(A, rows, cols)
    brute = np.vstack([_bfs(adj, r)[cols] for r in rows])
    assert np.array_equal(D, brute)
    S = symmetric_adjacency(A)
    assert S.diagonal().sum() == 0 and (S != S.T).nnz == 0 and set(np.unique(S.data)) == {1.0}


def test_hop_distance_relation_and_inputs_on_a_path_with_an_island():
    # path 0-1-2-3-4-5 (labels alternate) plus an isolated edge 6-7: the component 6-7 is dropped
    edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (6, 7)]
    A = sp.csr_matrix((np.ones(len(edges)), tuple(np.array(edges).T)), shape=(8, 8))
    R, D, t = hop_distance_relation(A, [0, 1], [2, 5])
    assert np.array_equal(D, [[2, 5], [1, 4]]) and t == 3.0 and np.allclose(R, np.exp(-D / 3.0))
    with pytest.raises(ValueError, match="connected component"):
        hop_distance_relation(A, [0], [7])
    labels = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    ds = Dataset(np.zeros((8, 1)), labels, ["even", "odd"], relations=A,
                 meta={"sample_names": [f"v{i}" for i in range(8)]})
    block = {"relation": {"source": "hop_distances", "row_fraction": 0.4, "split_seed": 2}}
    inputs = build_inputs(ds, block, seed=0)
    spec = inputs.spec
    assert spec["lcc_size"] == 6 and spec["lcc_edges"] == 5 and spec["largest_component_dropped"] == 2
    assert spec["rows_per_class"] == [1, 1] and inputs.relation.shape == (2, 4)  # round(0.4·3) = 1 per class
    assert set(spec["row_samples"]) | set(spec["column_samples"]) == set(range(6))
    assert inputs.relation.row_names == [f"v{i}" for i in spec["row_samples"]]
    assert inputs.relation.row_points is None
    with pytest.raises(ValueError, match="needs a dataset with a relation"):
        build_inputs(Dataset(np.zeros((4, 1)), np.zeros(4, int), ["a"]), block)


def test_dense_size_guard():
    with pytest.raises(ValueError, match="limit is 25,000,000 entries"):
        gaussian_relation(np.zeros((6000, 1)), np.ones((5000, 1)))
    assert MAX_DENSE_ENTRIES == 25_000_000


# ---------------------------------------------------------------------------------------------------------------
# Cora (the project's mirror)


@pytest.fixture(scope="module")
def cora():
    if not (CORA / "cora.content").is_file():
        pytest.skip(f"the project's Cora mirror {CORA} is absent")
    return load("cora", raw_dir=CORA)


LCC_CLASSES = {"Case_Based": 285, "Genetic_Algorithms": 406, "Neural_Networks": 726, "Probabilistic_Methods": 379,
               "Reinforcement_Learning": 214, "Rule_Learning": 131, "Theory": 344}


@pytest.mark.parametrize("rounding, m, n", [("round", 994, 1491), ("floor", 991, 1494)])
def test_cora_hop_relation(cora, rounding, m, n):
    inputs = build_inputs(cora, {"relation": {"source": "hop_distances", "rounding": rounding}}, seed=0)
    spec, rel = inputs.spec, inputs.relation
    assert spec["lcc_size"] == 2485 and spec["lcc_edges"] == 5069 and spec["n_components"] == 78
    per_class = np.add(spec["rows_per_class"], spec["columns_per_class"])
    assert dict(zip(rel.row_label_names, per_class.tolist())) == LCC_CLASSES
    assert rel.shape == (m, n) and spec["n_rows"] == m and spec["n_columns"] == n
    assert rel.matrix.nnz == m * n and rel.matrix.data.min() > 0  # strictly positive, no empty row/column
    assert spec["t"] == pytest.approx(6.31, abs=0.05) and spec["max_hop_distance"] <= 19
    ids = cora.meta["paper_ids"]
    assert rel.row_names[:3] == [ids[i] for i in spec["row_samples"][:3]]
    assert np.array_equal(rel.row_labels, cora.labels[spec["row_samples"]])
