"""One contract for every registered method (scikit-learn's estimator conventions).

For each name of ``cova.methods.METHODS``: ``clone`` and ``get_params``/``set_params`` round trips, a fit on tiny
inputs, the same seed giving the same embedding, every ``__init__`` parameter declared in
``_parameter_constraints``, and a refused value naming the parameter and what is allowed, both at ``fit`` and
when the configuration is validated.
"""

from __future__ import annotations

import ast
import copy
import inspect
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from cova.config import ConfigError, validate_config
from cova.datasets import load
from cova.inputs import Inputs, Relation, build_inputs
from cova.methods import METHODS, Embedder, make_method, method_parameters

NAMES = sorted(METHODS)

#: Settings that keep every fit on the tiny inputs to a fraction of a second (fewer iterations, small
#: neighbourhoods); everything else is the method's default.
FAST: dict[str, dict[str, Any]] = {
    "cova_e2": {"max_iter": 5}, "cova_e3": {"max_iter": 5}, "cova_e4": {"max_iter": 5},
    **{f"cova_p{i}": {"n_sample_prototypes": 20, "inner_iter": 3, "cycles": 1} for i in range(1, 5)},
    "eigen_cova": {"n_sample_prototypes": 20, "eta": 0.3},
    "nerv": {"n_neighbors": 5, "anneal_rounds": 1, "cg_steps": 1, "cg_steps_final": 2},
    "tnerv": {"n_neighbors": 5, "anneal_rounds": 1, "cg_steps": 1, "cg_steps_final": 2},
    "snerv": {"n_mixture": 4, "sigma_mixture": 1.0, "posterior_max_iter": 10, "anneal_rounds": 1, "cg_steps": 1,
              "cg_steps_final": 2},
    "lmds": {"n_neighbors": 5, "n_iter_per_point": 5},
    "pe": {"n_mixture": 4, "sigma_mixture": 1.0, "posterior_max_iter": 10, "max_iter": 20},
    "s_isomap": {"n_neighbors": 5},
    "lmvu": {"n_landmarks": 10},
    "mre": {"perplexity": 5, "max_iter": 10},
    "deep_embedding": {"hidden_sizes": (16, 8), "n_epochs": 2},
    "tsne": {"perplexity": 5, "max_iter": 10, "early_exaggeration_iter": 10},
    "tsne_exact": {"perplexity": 5, "max_iter": 10},
    "tsne_affinity": {"max_iter": 10},
    "dosnes": {"max_iter": 10},
    "sne": {"perplexity": 5, "max_iter": 10},
    "nse": {"perplexity": 5},
    "supervised_sne": {"perplexity": 5, "max_iter": 10},
    "supervised_tsne": {"perplexity": 5, "max_iter": 10, "early_exaggeration_iter": 10},
    "supervised_nse": {"perplexity": 5},
    "lle": {"n_neighbors": 10},
    "llc": {"n_mixtures": 4, "max_iter": 20},
    "isomap": {"n_neighbors": 10},
    "mds": {"max_iter": 10},
    "nca": {"max_iter": 5},
    "mcml": {"max_iter": 5},
    "mma": {"n_eigenvectors": 6, "max_iter": 10},
    "umap": {"n_neighbors": 5, "n_epochs": 10},
    "densmap": {"n_neighbors": 5, "n_epochs": 10},
    "tsne_sklearn": {"perplexity": 5, "max_iter": 250},
    "trimap": {"n_iters": 10},
    "pacmap": {"num_iters": 10},
    "featmap": {"n_neighbors": 5, "n_epochs": 10, "tangent_embed": "identity"},
}

#: Values tried as wrong settings: each is used for every parameter whose constraints all refuse it.
BAD_VALUES: list[Any] = [object(), "__not_an_option__", "0.1", -1, -0.5, 1.5, 0, True, None]


@pytest.fixture(scope="module")
def vector_inputs() -> Inputs:
    """60 swiss-roll samples in 4 cohorts with W, R and prototypes (COVA's synthetic-data construction)."""
    spec = {"weights": {"kind": "euclidean_max", "n_neighbors": 10},
            "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
            "prototypes": {"kind": "means"}}
    return build_inputs(load("swiss_roll", n_samples=60, n_cohorts=4), spec)


@pytest.fixture(scope="module")
def relation_inputs() -> Inputs:
    """A random 30×20 relation (rows and columns without empty lines) with row labels."""
    rng = np.random.default_rng(0)
    R = sp.csr_matrix(rng.uniform(0.0, 1.0, (30, 20)) * (rng.uniform(size=(30, 20)) < 0.4) + 0.01)
    rel = Relation(R, [f"r{i}" for i in range(30)], [f"c{j}" for j in range(20)],
                   row_labels=np.arange(30) % 3, row_label_names=["a", "b", "c"])
    return Inputs(labels=np.arange(30) % 3, label_names=["a", "b", "c"], relation=rel)


def _inputs(est: Embedder, request: pytest.FixtureRequest) -> Inputs:
    return request.getfixturevalue("relation_inputs" if "relation" in est.requires() else "vector_inputs")


def _fit(name: str, inputs: Inputs, **params: Any) -> Embedder:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_method(name, {**FAST.get(name, {}), **params}).fit(inputs)


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_is_constrained(name: str) -> None:
    cls = METHODS[name]
    assert set(cls._parameter_constraints) == set(method_parameters(name)), name


@pytest.mark.parametrize("name", NAMES)
def test_clone_and_params_round_trip(name: str) -> None:
    est = make_method(name, FAST.get(name, {}))
    params = est.get_params()
    twin = clone(est)
    assert type(twin) is type(est) and twin is not est
    assert twin.get_params() == params
    assert est.set_params(**params).get_params() == params
    defaults = {p.name: p.default for p in inspect.signature(type(est).__init__).parameters.values()
                if p.name != "self"}
    assert set(make_method(name).get_params()) == set(defaults)


@pytest.mark.parametrize("name", NAMES)
def test_fit_is_deterministic(name: str, request: pytest.FixtureRequest) -> None:
    inputs = _inputs(make_method(name), request)
    a = _fit(name, inputs)
    b = _fit(name, inputs)
    Z = a.embedding_
    assert Z.ndim == 2 and Z.shape[0] == inputs.n_samples and np.all(np.isfinite(Z))
    np.testing.assert_array_equal(Z, b.embedding_)


def _refusing(constraints: list[Any], value: Any) -> bool:
    from sklearn.utils._param_validation import make_constraint

    return not any(make_constraint(c).is_satisfied_by(value) for c in constraints)


@pytest.mark.parametrize("name", NAMES)
def test_bad_values_name_the_parameter(name: str, request: pytest.FixtureRequest) -> None:
    cls = METHODS[name]
    inputs = _inputs(make_method(name), request)
    checked = 0
    for param, constraints in cls._parameter_constraints.items():
        bad = [v for v in BAD_VALUES if _refusing(constraints, v)]
        assert bad, f"{name}.{param}: no wrong value to try"
        for value in bad:
            est = make_method(name, {**FAST.get(name, {}), param: value})
            with pytest.raises(ValueError, match=rf"^The '{param}' parameter of {cls.__name__} must be .+\. Got "):
                est.fit(inputs)
            checked += 1
    assert checked >= len(cls._parameter_constraints)


@pytest.fixture(scope="module")
def base_config() -> dict[str, Any]:
    import yaml

    with open(Path(__file__).resolve().parents[1] / "config.yaml") as f:
        return yaml.safe_load(f)


def _config_error(config: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    return str(err.value)


def test_config_accepts_exactly_the_registry(base_config: dict[str, Any]) -> None:
    """The names config validation accepts are the registry's: each registered name with its defaults passes the
    method checks, and an unknown one is refused with the registry as the allowed list."""
    config = copy.deepcopy(base_config)
    config["methods"]["nope"] = {"method": "no_such_method"}
    message = _config_error(config)
    allowed = re.search(r"allowed values: (\[.*\])", message)
    assert allowed and ast.literal_eval(allowed.group(1)) == sorted(METHODS)
    config = copy.deepcopy(base_config)
    config["methods"].update({f"contract_{name}": {"method": name} for name in NAMES})
    validate_config(config)


@pytest.mark.parametrize("params, key, shown", [
    ({"params": {"alpha": 1.5}}, "params.alpha", "1.5"),
    ({"params": {"alpha": "0.1"}}, "params.alpha", "'0.1'"),
    ({"params": {"alpha": True}}, "params.alpha", "True"),
    ({"grid": {"alpha": [0.5, -0.1]}}, "grid.alpha", "-0.1"),
    ({"params": {"solver": "qr"}}, "params.solver", "'qr'"),
])
def test_config_refuses_bad_values_naming_the_key(base_config: dict[str, Any], params: dict[str, Any], key: str,
                                                  shown: str) -> None:
    config = copy.deepcopy(base_config)
    config["methods"]["e1_bad"] = {"method": "cova_e1", **params}
    message = _config_error(config)
    assert message.startswith(f"config key methods.e1_bad.{key}: {shown} is not allowed; allowed: "), message


def test_config_names_the_allowed_range(base_config: dict[str, Any]) -> None:
    config = copy.deepcopy(base_config)
    config["methods"]["tsne_bad"] = {"method": "tsne", "params": {"perplexity": -3}}
    assert _config_error(config) == ("config key methods.tsne_bad.params.perplexity: -3 is not allowed; allowed: "
                                     "a float in the range (0.0, inf)")
