"""Real-data loaders (against the facts in shared/datasets/README.md), the IDX reader, places2 / generic files,
the extra synthetic generators and the registry's raw_dir / raw_source plumbing."""

from __future__ import annotations

import gzip
import inspect
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from PIL import Image

from cova.datasets import BUILTIN, LOADERS, RAW_SOURCES, load, raw_source, read_idx
from cova.datasets.mnist import FASHION_MNIST_CLASSES, per_class_subset

MIRROR = Path(__file__).resolve().parents[2] / "shared" / "datasets"  # shared/ beside the clone
CORA, MNIST, COIL = MIRROR / "cora", MIRROR / "mnist", MIRROR / "coil-20-proc"
COMPOUND, WORLDTRADE = MIRROR / "compound", MIRROR / "worldtrade"
FASHION = Path("/usr/share/datasets/fashion-mnist")


def need(folder: Path, *files: str) -> Path:
    for f in files:
        if (folder / f).is_file():
            continue
        # the project's mirror is always beside the clone (CI has it): its absence is a failure; Debian's
        # optional dataset-fashion-mnist package (installed by .ci/run) may be missing on a developer machine
        assert not folder.is_relative_to(MIRROR), f"raw file {folder / f} is missing from the project's mirror"
        pytest.skip(f"raw file {folder / f} absent (Debian package dataset-fashion-mnist not installed)")
    return folder


@pytest.fixture(scope="module")
def cora_ds():
    return load("cora", raw_dir=need(CORA, "cora.content", "cora.cites"))


@pytest.fixture(scope="module")
def mnist_test():
    return load("mnist", raw_dir=need(MNIST, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"))


@pytest.fixture(scope="module")
def coil128():
    return load("coil20", raw_dir=need(COIL, "obj1__0.png", "obj20__71.png"))


# ----------------------------------------------------------------------------------------------------- Cora
def test_cora_matches_readme(cora_ds):
    ds = cora_ds
    assert ds.X.shape == (2708, 1433)
    assert set(np.unique(ds.X)) == {0.0, 1.0}
    assert ds.label_names == sorted(ds.label_names) == [
        "Case_Based", "Genetic_Algorithms", "Neural_Networks", "Probabilistic_Methods", "Reinforcement_Learning",
        "Rule_Learning", "Theory"]
    readme = {"Neural_Networks": 818, "Probabilistic_Methods": 426, "Genetic_Algorithms": 418, "Theory": 351,
              "Case_Based": 298, "Reinforcement_Learning": 217, "Rule_Learning": 180}
    counts = np.bincount(ds.labels, minlength=7)
    assert {n: int(counts[j]) for j, n in enumerate(ds.label_names)} == readme


def test_cora_citations_directed_and_in_file_order(cora_ds):
    ds = cora_ds
    theta = ds.relations
    assert theta.shape == (2708, 2708)
    assert theta.nnz == 5429  # every one of the 5,429 lines is a distinct directed pair
    assert ds.meta["n_citation_lines"] == 5429 and ds.meta["n_duplicate_lines"] == 0
    assert theta.diagonal().sum() == 0 and ds.meta["n_self_loops_dropped"] == 0
    assert set(np.unique(theta.data)) == {1.0}
    und = ((theta + theta.T) > 0).astype(np.int8)
    assert sp.triu(und, k=1).nnz == 5278 == ds.meta["n_undirected_edges"]
    # rows follow cora.content; direction: a line "<cited>\t<citing>" sets theta[citing, cited]
    ids = ds.meta["paper_ids"]
    first_content = (CORA / "cora.content").read_text().split("\n", 1)[0].split("\t")
    assert ids[0] == first_content[0]
    np.testing.assert_array_equal(ds.X[0], np.array(first_content[1:-1], dtype=float))
    pos = {p: i for i, p in enumerate(ids)}
    lines = [tuple(ln.split()) for ln in (CORA / "cora.cites").read_text().splitlines() if ln.strip()]
    pairs = set(lines)
    cited, citing = next(p for p in lines if (p[1], p[0]) not in pairs)  # a one-way citation
    assert theta[pos[citing], pos[cited]] == 1
    assert theta[pos[cited], pos[citing]] == 0


# --------------------------------------------------------------------------------------------- IDX / MNIST
def _idx_bytes(arr: np.ndarray, code: int = 0x08) -> bytes:
    return bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.astype(">u1").tobytes()


def test_read_idx_round_trip_and_errors(tmp_path):
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    (tmp_path / "ok").write_bytes(_idx_bytes(arr))
    with gzip.open(tmp_path / "ok.gz", "wb") as f:
        f.write(_idx_bytes(arr))
    np.testing.assert_array_equal(read_idx(tmp_path / "ok"), arr)
    np.testing.assert_array_equal(read_idx(tmp_path / "ok.gz"), arr)
    i32 = np.array([1, -2, 70000], dtype=">i4")
    (tmp_path / "i32").write_bytes(bytes([0, 0, 0x0C, 1]) + struct.pack(">I", 3) + i32.tobytes())
    np.testing.assert_array_equal(read_idx(tmp_path / "i32"), [1, -2, 70000])

    bad = bytearray(_idx_bytes(arr))
    bad[0] = 0x1F
    (tmp_path / "magic").write_bytes(bytes(bad))
    with pytest.raises(ValueError, match="bad magic number"):
        read_idx(tmp_path / "magic")
    bad = bytearray(_idx_bytes(arr))
    bad[2] = 0x07  # unknown type code
    (tmp_path / "type").write_bytes(bytes(bad))
    with pytest.raises(ValueError, match="bad magic number"):
        read_idx(tmp_path / "type")
    (tmp_path / "short").write_bytes(_idx_bytes(arr)[:-5])
    with pytest.raises(ValueError, match=r"truncated.*needs 24 data bytes, found 19"):
        read_idx(tmp_path / "short")
    (tmp_path / "long").write_bytes(_idx_bytes(arr) + b"\0")
    with pytest.raises(ValueError, match="trailing bytes"):
        read_idx(tmp_path / "long")
    (tmp_path / "hdr").write_bytes(_idx_bytes(arr)[:9])
    with pytest.raises(ValueError, match="truncated header"):
        read_idx(tmp_path / "hdr")
    (tmp_path / "cut.gz").write_bytes((tmp_path / "ok.gz").read_bytes()[:-12])
    with pytest.raises(ValueError, match="gzip"):
        read_idx(tmp_path / "cut.gz")


def test_mnist_test_split(mnist_test):
    ds = mnist_test
    assert ds.X.shape == (10000, 784)
    assert ds.label_names == [str(j) for j in range(10)]
    assert np.bincount(ds.labels).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert ds.X.min() == 0.0 and ds.X.max() == 1.0
    assert ds.meta["split"] == "test" and "test set only" in ds.meta["note"]
    raw = load("mnist", raw_dir=MNIST, normalize=False, n_per_class=2)
    assert raw.X.max() > 1 and set(np.unique(raw.X)) <= set(range(256))


def test_mnist_train_missing_names_files(tmp_path):
    src = need(MNIST, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    for f in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        (tmp_path / f).symlink_to(src / f)
    for split in ("train", "all"):
        with pytest.raises(FileNotFoundError, match=r"train-images-idx3-ubyte\.gz.*train-labels-idx1-ubyte\.gz"
                                                    r".*only the 10k test set"):
            load("mnist", raw_dir=tmp_path, split=split)
    with pytest.raises(ValueError, match="split"):
        load("mnist", raw_dir=tmp_path, split="validation")
    assert load("mnist", raw_dir=tmp_path, n_per_class=1).X.shape == (10, 784)


def test_mnist_labels_images_mismatch(tmp_path):
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(_idx_bytes(np.zeros((3, 2, 2), np.uint8)))
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(_idx_bytes(np.zeros(2, np.uint8)))
    with pytest.raises(ValueError, match="3 images but 2 labels"):
        load("mnist", raw_dir=tmp_path)


def test_mnist_all_from_separate_fetch_folders(tmp_path):
    """data/raw/mnist_train/ (train) + sibling data/raw/mnist/ (t10k): split="all" reads both, train first."""
    for folder, prefix, n, value in (("mnist", "t10k", 2, 7), ("mnist_train", "train", 3, 9)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{prefix}-images-idx3-ubyte").write_bytes(
            _idx_bytes(np.full((n, 2, 2), 51 * value // 3, np.uint8)))
        (tmp_path / folder / f"{prefix}-labels-idx1-ubyte").write_bytes(_idx_bytes(np.full(n, value, np.uint8)))
    ds = load("mnist", raw_dir=tmp_path / "mnist_train", split="all")
    assert ds.X.shape == (5, 4) and ds.labels.tolist() == [9, 9, 9, 7, 7]
    assert load("mnist", raw_dir=tmp_path / "mnist_train", split="train").X.shape == (3, 4)
    assert load("mnist", raw_dir=tmp_path / "mnist", split="test").X.shape == (2, 4)


def test_fashion_mnist_splits():
    raw = need(FASHION, *(f"{p}-{k}-ubyte.gz" for p in ("train", "t10k") for k in ("images-idx3", "labels-idx1")))
    test = load("fashion_mnist", raw_dir=raw)
    assert test.X.shape == (10000, 784)
    assert test.label_names == FASHION_MNIST_CLASSES and test.label_names[0] == "T-shirt/top"
    assert np.all(np.bincount(test.labels) == 1000)
    full = load("fashion_mnist", raw_dir=raw, split="all")
    assert full.X.shape == (70000, 784)
    assert np.all(np.bincount(full.labels) == 7000)
    np.testing.assert_array_equal(full.X[60000:], test.X)  # "all" = train rows, then test rows


def test_per_class_subset_counts_determinism_order(mnist_test):
    full = mnist_test
    a = load("mnist", raw_dir=MNIST, n_per_class=30, random_state=3)
    b = load("mnist", raw_dir=MNIST, n_per_class=30, random_state=3)
    c = load("mnist", raw_dir=MNIST, n_per_class=30, random_state=4)
    assert a.X.shape == (300, 784) and np.all(np.bincount(a.labels) == 30)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)
    keep = per_class_subset(full.labels, 30, 3)
    assert np.all(np.diff(keep) > 0)  # original row order
    np.testing.assert_array_equal(a.X, full.X[keep])
    np.testing.assert_array_equal(a.labels, full.labels[keep])
    assert a.meta["n_per_class"] == 30 and "per class" in a.meta["subset"]
    # a class smaller than n_per_class keeps all its rows
    y = np.array([0, 1, 1, 1, 0, 1])
    small = per_class_subset(y, 3, 0)
    assert len(small) == 5 and {0, 4} <= set(small.tolist()) and np.all(np.diff(small) > 0)


# ----------------------------------------------------------------------------------------------- COIL-20
def test_coil20_full_and_downsampled(coil128):
    ds = coil128
    assert ds.X.shape == (1440, 16384)
    assert np.all(np.bincount(ds.labels) == 72)
    assert ds.label_names == [f"obj{o}" for o in range(1, 21)]
    assert ds.X.min() >= 0 and ds.X.max() <= 1
    # rows ordered by (object, pose): row 72 + 5 is obj2__5.png
    img = np.asarray(Image.open(COIL / "obj2__5.png"), dtype=float) / 255
    np.testing.assert_array_equal(ds.X[72 + 5], img.ravel())
    assert ds.labels[72 + 5] == 1 and ds.meta["pose"][72 + 5] == 5
    small = load("coil20", raw_dir=COIL, size=32)
    assert small.X.shape == (1440, 1024)
    np.testing.assert_array_equal(small.labels, ds.labels)
    for row in (0, 77, 1439):  # block means by explicit loops
        big = ds.X[row].reshape(128, 128)
        want = np.array([[big[4 * r:4 * r + 4, 4 * c:4 * c + 4].mean() for c in range(32)] for r in range(32)])
        np.testing.assert_allclose(small.X[row].reshape(32, 32), want, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"size.* must be an int among \{128, 64, 32, 16, 8, 4, 2, 1\}"):
        load("coil20", raw_dir=COIL, size=30)


def test_coil20_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="1440 of 1440 images missing"):
        load("coil20", raw_dir=tmp_path)


# ------------------------------------------------------------------------------------- Compound, WorldTrade
def test_compound():
    ds = load("compound", raw_dir=need(COMPOUND, "Compound.txt"))
    assert ds.X.shape == (399, 2)
    assert np.bincount(ds.labels).tolist() == [50, 92, 38, 45, 158, 16]
    assert ds.label_names == [f"cluster {k}" for k in range(1, 7)]
    np.testing.assert_allclose(ds.X[0], [26.75, 22.15])


def test_worldtrade():
    ds = load("worldtrade", raw_dir=need(WORLDTRADE, "world_trade.paj"))
    assert ds.X.shape == (80, 2)
    np.testing.assert_allclose(ds.X[0], [0.7842, 0.6742])  # Algeria's layout coordinates
    assert ds.meta["vertex_names"][0] == "Algeria" and ds.meta["vertex_names"][-1] == "Venezuela"
    assert ds.meta["partitions"] == ["World_system_1980", "Continent", "World_system"]
    assert ds.meta["vectors"] == ["x_coordinates", "y_coordinates.vec", "GDP_1995.vec"]
    # continent codes 1..6, with 9, 17, 27, 9, 3 and 15 countries
    assert ds.label_names == [f"partition value {k}" for k in range(1, 7)]
    assert np.bincount(ds.labels).tolist() == [9, 17, 27, 9, 3, 15]
    # 1,000 arc lines, 998 distinct (i, j); the two repeated pairs are summed; no self-loops, no *Edges
    W = ds.relations
    assert W.shape == (80, 80) and W.nnz == 998
    assert ds.meta["n_arc_lines"] == 1000 and ds.meta["n_unique_arcs"] == 998 and ds.meta["n_edge_lines"] == 0
    assert W.diagonal().sum() == 0 and W.data.min() > 0
    assert W[49, 52] == 42223 + 18272  # "50 53" appears twice in the file
    A = (W + W.T) / 2  # the symmetric A that DOSNES embeds: 1,750 nonzeros, degrees 1,448.5 .. 10,035,521
    assert A.nnz == 1750
    deg = np.asarray(A.sum(axis=1)).ravel()
    assert deg.min() == 1448.5 and deg.max() == 10035521
    ws = load("worldtrade", raw_dir=WORLDTRADE, partition="World_system_1980")
    assert ws.label_names[-1] == "partition value 9999998 (missing)"
    assert np.bincount(ws.labels).tolist() == [11, 17, 15, 9, 28]
    with pytest.raises(ValueError, match="available"):
        load("worldtrade", raw_dir=WORLDTRADE, partition="Nope")


# ----------------------------------------------------------------------------------------------- Places2
def _features(rng, l=60, d=8, c=4):
    y = np.arange(l) % c
    return rng.random((l, d)) + y[:, None], y


def test_places2_npz_and_npy(tmp_path):
    rng = np.random.default_rng(0)
    X, y = _features(rng)
    names = np.array(["airfield", "bakery", "canyon", "dock"])
    np.savez(tmp_path / "f.npz", X=X, labels=y, label_names=names)
    ds = load("places2", features=str(tmp_path / "f.npz"))
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.labels, y)
    assert ds.label_names == list(names) and ds.meta["stand_in"] is False
    assert ds.meta["matches_paper_shape"] is False
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", names[y])  # string labels
    ds2 = load("places2", features=tmp_path / "X.npy", labels=tmp_path / "y.npy")
    np.testing.assert_array_equal(ds2.labels, y)
    assert ds2.label_names == list(names)
    sub = load("places2", features=tmp_path / "f.npz", n_classes=2, n_per_class=5, random_state=1)
    assert sub.X.shape == (10, 8) and sub.n_cohorts == 2 and np.all(np.bincount(sub.labels) == 5)
    assert set(sub.label_names) < set(names)
    again = load("places2", features=tmp_path / "f.npz", n_classes=2, n_per_class=5, random_state=1)
    np.testing.assert_array_equal(sub.X, again.X)
    with pytest.raises(ValueError, match="labels"):
        load("places2", features=tmp_path / "X.npy")
    with pytest.raises(ValueError, match="only for .npy"):
        load("places2", features=tmp_path / "f.npz", labels=tmp_path / "y.npy")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError):  # never unpickled
        load("places2", features=tmp_path / "obj.npy", labels=tmp_path / "y.npy")
    np.savez(tmp_path / "bad.npz", X=X)
    with pytest.raises(ValueError, match="missing arrays"):
        load("places2", features=tmp_path / "bad.npz")


def test_places2_h5_without_h5py(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)  # as if h5py were not installed
    (tmp_path / "f.h5").write_bytes(b"")
    with pytest.raises(ImportError, match=r"h5py.*\.npz"):
        load("places2", features=tmp_path / "f.h5")


def test_places2_h5(tmp_path):
    h5py = pytest.importorskip("h5py", reason="h5py (optional) not installed")
    rng = np.random.default_rng(0)
    X, y = _features(rng)
    with h5py.File(tmp_path / "g.h5", "w") as f:
        f["X"], f["labels"] = X, y
    ds = load("places2", features=tmp_path / "g.h5")
    np.testing.assert_array_equal(ds.X, X)


def test_places_shaped_stand_in():
    ds = load("places_shaped", n_classes=10, n_per_class=20, n_features=512, density=0.1, random_state=0)
    assert ds.X.shape == (200, 512) and ds.n_cohorts == 10
    assert np.all(np.bincount(ds.labels) == 20)
    assert ds.X.min() >= 0
    nz = np.count_nonzero(ds.X) / ds.X.size
    assert 0.05 < nz < 0.15 and ds.meta["nonzero_fraction"] == pytest.approx(nz)
    assert ds.meta["stand_in"] is True and "NOT Places2" in ds.meta["description"]
    D = ((ds.X[:, None, :] - ds.X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    acc = np.mean(ds.labels[D.argmin(1)] == ds.labels)  # leave-one-out 1-NN
    assert acc > 0.8  # chance is 0.1
    np.testing.assert_array_equal(ds.X, load("places_shaped", n_classes=10, n_per_class=20, n_features=512).X)


# ----------------------------------------------------------------------------------------------- generic
def test_generic_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 30
    species = np.array(["virginica", "setosa", "versicolor"])[np.arange(n) % 3]
    import pandas as pd

    df = pd.DataFrame({"a": rng.normal(size=n), "const": 1.0, "species": species, "b": rng.normal(size=n),
                       "note": "x"})
    df.to_csv(tmp_path / "d.csv", index=False)
    ds = load("generic", path=str(tmp_path / "d.csv"), label="species")
    assert ds.X.shape == (n, 2)
    np.testing.assert_allclose(ds.X, df[["a", "b"]].to_numpy())
    assert ds.label_names == ["setosa", "versicolor", "virginica"]
    assert [ds.label_names[k] for k in ds.labels] == list(species)
    assert ds.meta["n_constant_dropped"] == 1 and ds.meta["constant_dropped"] == ["const"]
    assert ds.meta["features"] == ["a", "b"]
    one = load("generic", path=tmp_path / "d.csv", label="species", features=["b"])
    np.testing.assert_allclose(one.X[:, 0], df["b"])
    with pytest.raises(ValueError, match="not numeric"):
        load("generic", path=tmp_path / "d.csv", label="species", features=["a", "note"])
    with pytest.raises(ValueError, match="no label column"):
        load("generic", path=tmp_path / "d.csv", label="kind")
    df.loc[[3, 7], "a"] = np.nan
    df.loc[11, "species"] = None
    df.to_csv(tmp_path / "nan.csv", index=False)
    with pytest.raises(ValueError, match="3 of 30 rows have NaN"):
        load("generic", path=tmp_path / "nan.csv", label="species")


def test_generic_npz_and_mat(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    X[:, 1] = 5.0
    y = np.array([2, 0, 1] * 4)
    np.savez(tmp_path / "d.npz", feats=X, y=y)
    ds = load("generic", path=tmp_path / "d.npz", label="y", features="feats", label_names=["a", "b", "c"])
    np.testing.assert_array_equal(ds.X, X[:, [0, 2]])
    assert ds.label_names == ["a", "b", "c"] and ds.labels.tolist() == y.tolist()
    assert ds.meta["constant_dropped"] == [1]
    with pytest.raises(ValueError, match="no features array 'X'"):
        load("generic", path=tmp_path / "d.npz", label="y")
    scipy.io.savemat(tmp_path / "d.mat", {"X": X, "y": y[:, None] + 1})
    m = load("generic", path=tmp_path / "d.mat", label="y")
    np.testing.assert_array_equal(m.X, X[:, [0, 2]])
    assert m.label_names == ["1", "2", "3"] and m.labels.tolist() == y.tolist()
    scipy.io.savemat(tmp_path / "s.mat", {"X": X, "cls": np.array(["dog", "cat", "emu"] * 4)})
    s = load("generic", path=tmp_path / "s.mat", label="cls")
    assert s.label_names == ["cat", "dog", "emu"] and s.labels.tolist() == [1, 0, 2] * 4
    Xn = X.copy()
    Xn[4, 0] = np.nan
    scipy.io.savemat(tmp_path / "n.mat", {"X": Xn, "y": y})
    with pytest.raises(ValueError, match="1 of 12 rows"):
        load("generic", path=tmp_path / "n.mat", label="y")
    with pytest.raises(ValueError, match="The 'format' parameter of generic must be"):
        load("generic", path=tmp_path / "d.npz", label="y", format="xlsx")


# --------------------------------------------------------------------------------------- S-curve, sphere
def test_s_curve_and_sphere():
    sc = load("s_curve")
    assert sc.X.shape == (1000, 3) and sc.n_cohorts == 8 and np.all(np.bincount(sc.labels) > 0)
    x, h, z = sc.X.T
    np.testing.assert_allclose(x ** 2 + (1 - np.abs(z)) ** 2, 1.0, atol=1e-12)  # on the S
    np.testing.assert_array_equal(sc.labels // 4, (h >= 1.0).astype(int))  # height bins
    np.testing.assert_array_equal(sc.X, load("s_curve").X)
    assert not np.array_equal(sc.X, load("s_curve", random_state=1).X)
    assert not np.array_equal(sc.X, load("s_curve", noise=0.1).X)
    sph = load("sphere")
    assert sph.X.shape == (1000, 3) and sph.n_cohorts == 8
    np.testing.assert_allclose(np.linalg.norm(sph.X, axis=1), 1.0)
    np.testing.assert_array_equal(sph.labels // 4, (sph.X[:, 2] >= 0).astype(int))  # equal-area z bands
    np.testing.assert_array_equal(sph.X, load("sphere").X)
    assert not np.array_equal(sph.X, load("sphere", random_state=1).X)
    counts = np.bincount(sph.labels)
    assert counts.min() > 80  # equal-area cells of ~125 points


# ---------------------------------------------------------------------------------------------- registry
def test_load_rejects_unknown_and_needs_raw_dir(tmp_path):
    with pytest.raises(ValueError, match="allowed"):
        load("nope")
    with pytest.raises(ValueError, match="n_sample"):
        load("sinusoid", n_sample=3)
    with pytest.raises(ValueError, match="unknown parameters"):
        load("cora", raw_dir=tmp_path, split="test")
    with pytest.raises(ValueError, match="raw_dir"):
        load("cora")
    assert load("sinusoid", raw_dir=tmp_path).X.shape == (1000, 2)  # ignored by generators
    for name in BUILTIN:
        assert "raw_dir" not in inspect.signature(LOADERS[name]).parameters


def test_raw_source_mapping():
    assert RAW_SOURCES == {"cora": "cora", "mnist": "mnist", "fashion_mnist": "fashion_mnist", "mnist_fgsm": "mnist",
                           "coil20": "coil20", "compound": "compound", "worldtrade": "worldtrade"}
    assert raw_source("mnist") == raw_source("mnist", {"split": "test"}) == "mnist"
    assert raw_source("mnist", {"split": "train"}) == raw_source("mnist", {"split": "all"}) == "mnist_train"
    assert raw_source("fashion_mnist", {"split": "all"}) == "fashion_mnist"
    for name in ("sinusoid", "digits", "places2", "generic", "places_shaped", "s_curve", "sphere"):
        assert raw_source(name, {}) is None
    for name in RAW_SOURCES:
        assert raw_source(name) is not None
        assert "raw_dir" in inspect.signature(LOADERS[name]).parameters
    with pytest.raises(ValueError, match="unknown"):
        raw_source("nope")


def test_real_dataset_round_trip(tmp_path, cora_ds):
    cora_ds.save(tmp_path / "cora.npz")
    back = type(cora_ds).load(tmp_path / "cora.npz")
    assert (back.relations != cora_ds.relations).nnz == 0
    assert back.meta["paper_ids"] == cora_ds.meta["paper_ids"]
