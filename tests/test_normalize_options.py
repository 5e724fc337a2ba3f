"""The ``normalize`` kinds of an inputs block's ``weights`` or ``graph`` are declared functions in the registry
:data:`cova.affinity.doubly_stochastic.NORMALIZATIONS`: a block is checked against it with the standard messages
naming the key. The config schema states none of these options (tests/test_declarations.py)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.sparse as sp

from cova.affinity.doubly_stochastic import (
    NORMALIZATIONS,
    NORMALIZE_KINDS,
    SINKHORN_OPTIONS,
    normalize_affinity,
    sinkhorn_knopp,
)
from cova.constraints import Kinds, OptionError, check_options, option_defaults, parameter_constraints

WHERE = "inputs.x.weights.normalize"


def test_every_kind_is_declared():
    assert isinstance(NORMALIZATIONS, Kinds) and NORMALIZATIONS.what == "normalize kind"
    assert NORMALIZE_KINDS == tuple(NORMALIZATIONS) == ("sum", "doubly_stochastic", "random_walk")
    for kind, function in NORMALIZATIONS.items():
        signature = list(inspect.signature(function).parameters)
        assert signature[0] == "W"
        assert set(parameter_constraints(function)) == set(signature[1:]), kind
    assert parameter_constraints(NORMALIZATIONS["sum"]) == {}
    assert set(parameter_constraints(NORMALIZATIONS["doubly_stochastic"])) == set(SINKHORN_OPTIONS)
    assert set(parameter_constraints(NORMALIZATIONS["random_walk"])) == {"rebalance", *SINKHORN_OPTIONS}
    sinkhorn = option_defaults(sinkhorn_knopp)
    for kind in ("doubly_stochastic", "random_walk"):
        assert {k: option_defaults(NORMALIZATIONS[kind])[k] for k in SINKHORN_OPTIONS} == sinkhorn


@pytest.mark.parametrize("block,filled", [
    ({"kind": "sum"}, {"kind": "sum"}),
    ({"kind": "doubly_stochastic"}, {"kind": "doubly_stochastic", "tol": 1e-12, "max_iter": 1000,
                                     "on_failure": "raise"}),
    ({"kind": "doubly_stochastic", "tol": 1e-9, "max_iter": 5, "on_failure": "warn"},
     {"kind": "doubly_stochastic", "tol": 1e-9, "max_iter": 5, "on_failure": "warn"}),
    ({"kind": "random_walk"}, {"kind": "random_walk", "rebalance": False, "tol": 1e-12, "max_iter": 1000,
                               "on_failure": "raise"}),
    ({"kind": "random_walk", "rebalance": True, "tol": 1, "max_iter": 10},
     {"kind": "random_walk", "rebalance": True, "tol": 1, "max_iter": 10, "on_failure": "raise"}),
])
def test_valid_blocks_get_their_defaults(block, filled):
    assert check_options(NORMALIZATIONS, block, WHERE) == filled


@pytest.mark.parametrize("block,key,message", [
    ({}, "kind", r"required; allowed values: \['doubly_stochastic', 'random_walk', 'sum'\]"),
    ({"kind": "ds"}, "kind", r"'ds' is not allowed; allowed values: \['doubly_stochastic', 'random_walk', 'sum'\]"),
    ({"kind": None}, "kind", "None is not allowed"),
    ({"kind": "sum", "tol": 1e-3}, None, r"unknown parameters \['tol'\]; allowed for normalize kind 'sum': \[\]"),
    ({"kind": "sum", "rebalance": False}, None, r"unknown parameters \['rebalance'\]"),
    ({"kind": "doubly_stochastic", "rebalance": True}, None, r"unknown parameters \['rebalance'\]"),
    ({"kind": "doubly_stochastic", "tol": 0}, "tol", r"0 is not allowed; allowed: a float in the range \(0.0, inf\)"),
    ({"kind": "doubly_stochastic", "tol": -1e-3}, "tol", "is not allowed"),
    ({"kind": "doubly_stochastic", "tol": "1e-9"}, "tol", "'1e-9' is not allowed"),
    ({"kind": "doubly_stochastic", "tol": True}, "tol", "True is not allowed"),
    ({"kind": "doubly_stochastic", "max_iter": 0}, "max_iter", r"allowed: an int in the range \[1, inf\)"),
    ({"kind": "doubly_stochastic", "max_iter": 10.0}, "max_iter", "10.0 is not allowed"),
    ({"kind": "doubly_stochastic", "on_failure": "ignore"}, "on_failure", "'ignore' is not allowed; allowed: a str "
                                                                          "among"),
    ({"kind": "random_walk", "rebalance": "yes"}, "rebalance", "'yes' is not allowed"),
    ({"kind": "random_walk", "rebalance": 1}, "rebalance", "1 is not allowed"),
    ({"kind": "random_walk", "max_iter": 5}, "max_iter", "5 is not allowed: the Sinkhorn options of kind "
                                                         "'random_walk' apply only with rebalance: true"),
    ({"kind": "random_walk", "rebalance": False, "on_failure": "warn"}, "on_failure", "only with rebalance"),
])
def test_bad_blocks_are_refused_naming_the_key(block, key, message):
    with pytest.raises(OptionError, match=message) as err:
        check_options(NORMALIZATIONS, block, WHERE)
    assert err.value.key == (f"{WHERE}.{key}" if key else WHERE)
    assert str(err.value).startswith(f"config key {err.value.key}: ")


def test_normalize_affinity_checks_and_dispatches_through_the_registry():
    W = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]], dtype=float) / 6)
    with pytest.raises(OptionError, match="config key normalize.on_failure: 'ignore' is not allowed"):
        normalize_affinity(W, kind="doubly_stochastic", on_failure="ignore")
    with pytest.raises(OptionError, match="config key normalize.tol: 1e-06 is not allowed: the Sinkhorn options"):
        normalize_affinity(W, kind="random_walk", tol=1e-6)
    for kind, function in NORMALIZATIONS.items():
        P, facts = normalize_affinity(W, kind=kind)
        Q, same = function(W)
        assert (P != Q).nnz == 0 and facts == same
