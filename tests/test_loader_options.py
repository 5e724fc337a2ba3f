"""Every dataset loader declares its config options (``datasets.<name>.params``) beside its code, in the one
declaration form of :mod:`cova.constraints`; the declaration refuses what the loader cannot take, with a message
naming the key. The config schema states no loader parameter (tests/test_declarations.py), so the two cannot
drift."""

from __future__ import annotations

import inspect
import math
import pickle
from typing import Any

import pytest

from cova.constraints import (
    REQUIRED,
    InvalidParameterError,
    OptionError,
    check_options,
    option_defaults,
    parameter_constraints,
)
from cova.datasets import LOADERS

#: Values a config must give because the loader has no default for them (a path to the user's own file).
REQUIRED_VALUES: dict[str, dict[str, Any]] = {
    "generic": {"path": "data/mine.csv"},
    "places2": {"features": "data/places2.npz"},
}

#: Per loader: option -> (valid values, invalid values) beyond the defaults.
CASES: dict[str, dict[str, tuple[list[Any], list[Any]]]] = {
    "sinusoid": {"n_samples": ([2, 500], [1, 0, -3, 2.0, True, "100", None]),
                 "n_cohorts": ([1, 6], [0, 1.5, None]), "noise": ([0, 0.0, 0.3], [-0.1, math.inf, "0.1", True]),
                 "random_state": ([0, 7], [-1, 0.5, None, True])},
    "swiss_roll": {"n_samples": ([2, 2000], [1, None]), "noise": ([0.05], [-1])},
    "cylinder1": {"n_sectors": ([1, 6], [0, "6"])},
    "cylinder2": {"n_bands": ([1, 3], [0, 2.5])},
    "s_curve": {"n_t_bins": ([1], [0]), "n_h_bins": ([2], [-2])},
    "sphere": {"n_lon_bins": ([4], [0]), "n_lat_bins": ([2], [None])},
    "cohort_manifold": {"n_samples": ([2, 1000], [1, None]), "n_features": ([50, 100], [2, 64.0]),
                        "n_cohorts": ([4], [1]), "intrinsic_dim": ([1, 3], [0]), "close_pairs": ([0, 5], [-1]),
                        "noise": ([0, 0.1], [-0.1]), "size_ratio": ([1, 4.0], [0.5]), "seed": ([3], [-1])},
    "sculpt_faces": {"image_size": ([8, 64], [7, 64.0]), "n_yaw_bins": ([1], [0])},
    "places_shaped": {"density": ([1, 0.5, 1.0], [0, 0.0, 1.5, -0.1]), "n_features": ([1], [0])},
    "random_matrix": {"n_samples": ([3, 100], [2, 1, None])},
    "digits": {"n_per_class": ([None, 1, 50], [0, 1.0, "all"])},
    "cora": {},
    "compound": {},
    "mnist": {"split": (["test", "train", "all"], ["Test", "validation", None, 1]),
              "n_per_class": ([None, 10], [0]), "normalize": ([True, False], [1, "yes", None])},
    "fashion_mnist": {"split": (["all"], ["x"]), "normalize": ([False], [0])},
    "mnist_fgsm": {"epsilon": ([0, 0.3, 1], [-0.1, 1.5, math.nan, "0.3", True]),
                   "n_train": ([10, 5000], [9, 2.5, True]),
                   "hidden": ([[128], [64, 32], (128,)], [[], 128, "128", [64, 0], [True], None]),
                   "seed": ([0, 3], [-1, 1.5]), "max_iter": ([1], [0]), "n_attack": ([None, 1, 100], [0, 1.0])},
    "coil20": {"size": ([128, 32, 1], [30, 0, 256, 2.0, True, "32"])},
    "worldtrade": {"partition": (["Continent", "World_system"], ["", 3, None])},
    "coembed_points": {"kind": (["dots", "2dnormals", "ring"], ["moons", "Dots", None, 1]),
                       "random_state": ([5], [-5])},
    "places2": {"features": (["f.h5"], ["", None, 3]), "labels": ([None, "y.npy"], ["", 1]),
                "n_classes": ([None, 1, 365], [0, 1.5]), "n_per_class": ([None, 100], [0])},
    "generic": {"path": (["d.tsv"], ["", None, 1]), "label": (["species", 0, -1, None], [1.5, True, ["a"]]),
                "features": ([None, "X", 2, ["a", 1], [-1]], [[], 1.5, True, [None], {"a": 1}]),
                "label_names": ([None, [], ["a", "b"]], ["a", [1], [None]]),
                "format": ([None, "npz", "csv", "mat", "h5ad"], ["xlsx", "CSV", 1]),
                "sep": ([None, "comma", "tab", "whitespace", "semicolon"], ["pipe", ",", 1]),
                "header": ([True, False], [None, 1, "false"]), "na_values": ([None, [], ["?", "NA"]], ["?", [1]])},
}


def where(name: str) -> str:
    return f"datasets.{name}.params"


def check(name: str, params: dict[str, Any]) -> dict[str, Any]:
    return check_options(LOADERS[name], {**REQUIRED_VALUES.get(name, {}), **params}, where(name), f"loader {name!r}")


def test_every_loader_has_cases():
    assert set(CASES) == set(LOADERS)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_every_loader_declares_its_parameters(name):
    loader = LOADERS[name]
    signature = set(inspect.signature(loader).parameters) - {"raw_dir"}
    assert set(parameter_constraints(loader)) == signature
    required = {k for k, v in option_defaults(loader).items() if v is REQUIRED}
    assert required == set(REQUIRED_VALUES.get(name, {}))


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_declared_loaders_stay_introspectable_and_picklable(name):
    loader = LOADERS[name]
    assert pickle.loads(pickle.dumps(loader)) is loader
    assert loader.__name__ == name and loader.__doc__
    assert ("raw_dir" in inspect.signature(loader).parameters) == (name in ("cora", "mnist", "fashion_mnist",
                                                                            "mnist_fgsm", "coil20", "compound",
                                                                            "worldtrade"))


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_defaults_and_valid_values_are_accepted(name):
    defaults = {k: v for k, v in option_defaults(LOADERS[name]).items() if v is not REQUIRED}
    assert check(name, {}) == {**defaults, **REQUIRED_VALUES.get(name, {})}
    assert check(name, defaults) == check(name, {})
    for option, (valid, _) in CASES[name].items():
        for value in valid:
            assert check(name, {option: value})[option] == value


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_invalid_values_are_refused_naming_the_key(name):
    for option, (_, invalid) in CASES[name].items():
        for value in invalid:
            with pytest.raises(OptionError, match="is not allowed; allowed: ") as err:
                check(name, {option: value})
            assert err.value.key == f"{where(name)}.{option}", (option, value)
            assert str(err.value).startswith(f"config key {where(name)}.{option}: {value!r} is not allowed")


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_unknown_and_missing_options_are_refused(name):
    with pytest.raises(OptionError, match=rf"config key {where(name)}: unknown parameters \['raw_dir'\]"):
        check(name, {"raw_dir": "data/raw/x"})
    for option in REQUIRED_VALUES.get(name, {}):
        values = {k: v for k, v in REQUIRED_VALUES[name].items() if k != option}
        with pytest.raises(OptionError, match=f"config key {where(name)}.{option}: required by loader {name!r}"):
            check_options(LOADERS[name], values, where(name), f"loader {name!r}")


def test_the_call_checks_the_declaration_too(tmp_path):
    with pytest.raises(InvalidParameterError, match=r"The 'n_samples' parameter of sinusoid must be an int in the "
                                                    r"range \[2, inf\)\. Got 1 instead"):
        LOADERS["sinusoid"](n_samples=1)
    with pytest.raises(InvalidParameterError, match="The 'size' parameter of coil20 must be an int among"):
        LOADERS["coil20"](tmp_path, size=True)  # refused before any file is read
    assert LOADERS["sinusoid"](n_samples=2, n_cohorts=1).X.shape == (2, 2)
