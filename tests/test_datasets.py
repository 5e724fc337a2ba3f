"""Synthetic generators, the digits loader, the registry and the Dataset file format."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cova.datasets import BUILTIN, Dataset, load

SMALL = {"places_shaped": {"n_classes": 5, "n_per_class": 4, "n_features": 64}}


@pytest.mark.parametrize("name,shape,c", [("sinusoid", (1000, 2), 6), ("swiss_roll", (2000, 3), 4),
                                          ("cylinder1", (2000, 3), 6), ("cylinder2", (2000, 3), 12),
                                          ("digits", (1797, 64), 10)])
def test_loaders_give_documented_shapes(name, shape, c):
    ds = load(name)
    assert ds.X.shape == shape
    assert ds.n_cohorts == c
    assert np.all(np.bincount(ds.labels, minlength=c) > 0)


def test_generators_are_seeded():
    for name in BUILTIN:
        a, b = load(name, **SMALL.get(name, {})), load(name, **SMALL.get(name, {}))
        np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(load("sinusoid", random_state=1).X, load("sinusoid").X)


def test_sinusoid_geometry():
    ds = load("sinusoid", noise=0.0)
    np.testing.assert_allclose(ds.X[:, 1], 2 * np.sin(ds.X[:, 0]), atol=1e-12)
    # cohorts are consecutive segments along the curve
    assert np.all(np.diff(ds.labels) >= 0)


def test_swiss_roll_quartiles_and_cylinder_radius():
    sr = load("swiss_roll")
    assert np.all(np.bincount(sr.labels) == 500)
    cyl = load("cylinder2", noise=0.0)
    np.testing.assert_allclose(np.hypot(cyl.X[:, 0], cyl.X[:, 1]), 1.0, atol=1e-12)
    band = cyl.labels // 4
    assert np.all(np.diff(np.sort(cyl.X[band == 0, 2])[-1:]) <= 1.0 + 1e-12)
    assert cyl.X[band == 0, 2].max() <= cyl.X[band == 2, 2].min()


def test_digits_subset():
    ds = load("digits", n_per_class=20)
    assert ds.X.shape == (200, 64)
    assert np.all(np.bincount(ds.labels) == 20)


def test_unknown_loader_and_parameter_are_named():
    with pytest.raises(ValueError, match="allowed"):
        load("nope")
    with pytest.raises(ValueError, match="n_sample"):
        load("sinusoid", n_sample=3)


def test_dataset_round_trip(tmp_path):
    rel = sp.random(5, 5, density=0.4, format="csr", random_state=0)
    ds = Dataset(np.arange(10.0).reshape(5, 2), [0, 1, 0, 1, 1], ["a", "b"], relations=rel, meta={"k": 1})
    ds.save(tmp_path / "d.npz")
    back = Dataset.load(tmp_path / "d.npz")
    np.testing.assert_array_equal(back.X, ds.X)
    np.testing.assert_array_equal(back.labels, ds.labels)
    assert back.label_names == ["a", "b"] and back.meta == {"k": 1}
    assert (back.relations != rel).nnz == 0
    assert [p.name for p in tmp_path.iterdir()] == ["d.npz"]  # no temporary file left behind


def test_dataset_rejects_nan_and_bad_labels():
    with pytest.raises(ValueError, match="NaN"):
        Dataset(np.array([[0.0, np.nan], [1.0, 2.0]]), [0, 1], ["a", "b"])
    with pytest.raises(ValueError, match="labels"):
        Dataset(np.zeros((2, 2)), [0, 2], ["a", "b"])
