"""Inputs blocks without weights, confidence and prototypes: X and the labels only (featMAP and its baselines build
their own graphs), and the ``subset.classes`` selection (featMAP's digit-1 group)."""

from __future__ import annotations

import numpy as np
import pytest

from cova.datasets.digits import digits
from cova.inputs import Inputs, build_inputs, provided_inputs


@pytest.fixture(scope="module")
def ds():
    return digits()


def test_points_block_provides_x_and_labels_only(ds, tmp_path):
    assert provided_inputs({}) == {"X", "labels"}
    assert provided_inputs({"features": {"kind": "pca", "n_components": 10}}) == {"X", "labels"}
    inputs = build_inputs(ds, {"features": {"kind": "pca", "n_components": 10}}, seed=0)
    assert inputs.available() == {"X", "labels"}
    assert inputs.X.shape == (ds.n_samples, 10) and inputs.W is None and inputs.R is None
    ds.save(tmp_path / "d.npz")
    inputs.save(tmp_path / "i.npz", with_X=True)
    back = Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz")
    assert back.available() == {"X", "labels"}
    np.testing.assert_array_equal(back.X, inputs.X)


@pytest.mark.parametrize("spec, words", [
    ({"weights": {"kind": "euclidean_max"}}, "missing ['confidence', 'prototypes']"),
    ({"split": {"n_folds": 5, "fold": 5}}, "inputs.split.fold: 5 is not allowed: must be in 0 … n_folds − 1 = 0 … 4"),
    ({"cohorts": {"kind": "predicted", "labelled_per_class": 5}}, "does not take cohorts kind 'predicted'"),
])
def test_incomplete_or_unsupported_blocks_are_refused(spec, words):
    with pytest.raises(ValueError) as e:
        provided_inputs(spec)
    assert words in str(e.value)


def test_subset_classes_by_name_and_index(ds):
    by_name = build_inputs(ds, {"subset": {"classes": ["1"]}}, seed=0)
    by_index = build_inputs(ds, {"subset": {"classes": [1]}}, seed=0)
    ones = np.flatnonzero(ds.labels == 1)
    np.testing.assert_array_equal(by_name.X, ds.X[ones])
    np.testing.assert_array_equal(by_index.X, by_name.X)
    assert by_name.label_names == ["1"] and set(by_name.labels) == {0}
    two = build_inputs(ds, {"subset": {"classes": ["3", 7]}}, seed=0)
    assert two.label_names == ["3", "7"] and two.X.shape[0] == np.isin(ds.labels, [3, 7]).sum()


@pytest.mark.parametrize("sub, words", [({"classes": ["x"]}, "'x' is neither a class name"),
                                        ({"classes": [10]}, "class index in 0..9"),
                                        ({"classes": [1], "n_classes": 2}, "either 'classes' or 'n_classes'")])
def test_subset_classes_errors(ds, sub, words):
    with pytest.raises(ValueError) as e:
        build_inputs(ds, {"subset": sub}, seed=0)
    assert words in str(e.value)


def test_config_refuses_a_method_that_needs_w_on_a_points_block():
    from cova.config import ConfigError, validate_config
    from test_data_model import core_config

    config = core_config()
    config["inputs"]["trade"] = {"features": {"kind": "pca", "n_components": 2}}
    with pytest.raises(ConfigError, match=r"needs W, which inputs block 'trade' does not provide \(it provides X, "
                                          r"labels\)"):
        validate_config(config)
