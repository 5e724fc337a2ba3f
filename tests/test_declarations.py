"""One declaration form for everything a config may set (cova.constraints): every registered method, loader,
inputs-block kind, normalisation and renderer declares its options beside its code, its defaults satisfy its own
declaration, and the schema leaves those options to the declarations (so the two cannot drift)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest
from sklearn.utils._param_validation import validate_parameter_constraints

from cova.affinity.doubly_stochastic import NORMALIZATIONS
from cova.config import ConfigError, load_schema, validate_config
from cova.constraints import (
    REQUIRED,
    Block,
    Declaration,
    Kinds,
    OptionError,
    check_options,
    option_defaults,
    parameter_constraints,
)
from cova.datasets import LOADERS
from cova.experiments.registry import COMMON_KEYS, RENDERERS
from cova.inputs import INPUTS_BLOCK
from cova.methods import METHODS


def walk(declaration: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every declaration reachable from ``declaration`` (kinds of a registry, nested blocks), with a readable path."""
    if isinstance(declaration, Kinds):
        if declaration.common is not None:
            yield from walk(declaration.common, f"{path}[common]")
        for name in declaration:
            yield from walk(declaration[name], f"{path}[{declaration.key}={name}]")
        return
    yield path, declaration
    for option, constraints in parameter_constraints(declaration).items():
        for constraint in constraints:
            if isinstance(constraint, Block) and constraint.declaration is not declaration:
                if path.count(".") < 4:  # features.base refers to the features kinds again
                    yield from walk(constraint.declaration, f"{path}.{option}")


DECLARED = (
    [(f"inputs{path[len('inputs'):]}", d) for path, d in walk(INPUTS_BLOCK, "inputs")]
    + [(f"normalize{path[len('normalize'):]}", d) for path, d in walk(NORMALIZATIONS, "normalize")]
    + [(f"loader {name}", loader) for name, loader in LOADERS.items()]
    + [(f"renderer {name}", RENDERERS[name]) for name in RENDERERS]
    + [(f"method {name}", cls) for name, cls in METHODS.items()]
)


@pytest.mark.parametrize("path, declaration", DECLARED, ids=[p for p, _ in DECLARED])
def test_every_configurable_thing_declares_its_options(path, declaration):
    table = parameter_constraints(declaration)
    assert hasattr(declaration, "_parameter_constraints"), f"{path} declares nothing"
    defaults = option_defaults(declaration)
    if not isinstance(declaration, Declaration):
        signature = inspect.signature(declaration.__init__ if inspect.isclass(declaration) else declaration)
        keyword = {n for n, p in signature.parameters.items()
                   if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and n != "self"}
        assert set(table) <= keyword, f"{path} declares options it does not take: {sorted(set(table) - keyword)}"
    for option, value in defaults.items():
        if value is REQUIRED:
            continue
        try:
            validate_parameter_constraints({option: table[option]}, {option: value}, caller_name=path)
        except Exception as err:  # a default its own declaration refuses
            pytest.fail(f"{path}: the default {option}={value!r} breaks its declaration: {err}")


def test_renderers_declare_exactly_their_keyword_options():
    for name in RENDERERS:
        fn = RENDERERS[name]
        keyword = {n for n, p in inspect.signature(fn).parameters.items() if p.kind is p.KEYWORD_ONLY}
        assert keyword == set(parameter_constraints(fn)), name
        assert not keyword & set(COMMON_KEYS), name


def test_loaders_declare_every_parameter_a_config_may_set():
    for name, loader in LOADERS.items():
        params = set(inspect.signature(loader).parameters) - {"raw_dir"}
        assert params == set(parameter_constraints(loader)), name


def test_the_schema_leaves_declared_options_to_the_declarations():
    schema = load_schema()
    props = schema["properties"]
    experiment = props["paper"]["properties"]["experiments"]["additionalProperties"]
    assert set(experiment["properties"]) == set(COMMON_KEYS) - {"name", "fallbacks"}
    assert sorted(experiment["properties"]["renderer"]["enum"]) == sorted(RENDERERS)
    assert set(props["inputs"]["additionalProperties"]["properties"]) == {"resources"}
    assert "loader_params" not in schema["$defs"]
    assert set(props["datasets"]["additionalProperties"]["properties"]["params"]) == {"type", "description"}


def test_a_bad_option_names_its_key_the_value_and_what_is_allowed():
    with pytest.raises(OptionError, match=r"config key inputs\.x\.weights\.normalize\.max_iter: 0 is not allowed; "
                                          r"allowed: an int in the range \[1, inf\)"):
        check_options(INPUTS_BLOCK, {"weights": {"kind": "gaussian_perplexity",
                                                 "normalize": {"kind": "doubly_stochastic", "max_iter": 0}},
                                     "confidence": {"kind": "eq12"}, "prototypes": {"kind": "tsne"}},
                      "inputs.x", "an inputs block")
    with pytest.raises(OptionError, match=r"config key inputs\.x\.features\.kind: 'ica' is not allowed; allowed "
                                          r"values: \['compacted', 'pca', 'raw'\]"):
        check_options(INPUTS_BLOCK, {"features": {"kind": "ica"}}, "inputs.x", "an inputs block")
    filled = check_options(INPUTS_BLOCK, {"features": {"kind": "compacted", "base": {"kind": "pca",
                                                                                     "n_components": 5},
                                                       "similarity": "weights"}}, "inputs.x", "an inputs block")
    assert filled["features"]["base"] == {"kind": "pca", "n_components": 5}
    assert filled["split"] is None and filled["features"]["weights"] is None


def small_config(**experiment: Any) -> dict[str, Any]:
    return {"seed": 0, "datasets": {"s": {"loader": "sinusoid", "params": {"n_samples": 60}}},
            "inputs": {"means": {"weights": {"kind": "euclidean_max", "n_neighbors": 10},
                                 "confidence": {"kind": "eq12"}, "prototypes": {"kind": "means"}}},
            "methods": {"pca": {"method": "pca"}},
            "runs": [{"dataset": "s", "inputs": "means", "methods": ["pca"]}],
            "paper": {"experiments": {"t": {"paper": "cova", "renderer": "score_table",
                                            "runs": [{"dataset": "s", "inputs": "means", "methods": ["pca"]}],
                                            **experiment}}}}


def test_bad_renderer_and_loader_options_are_refused_before_any_job_like_method_parameters():
    validate_config(small_config(n_cols=2))
    with pytest.raises(ConfigError, match=r"^config key paper\.experiments\.t\.n_cols: 0 is not allowed; allowed: "
                                          r"an int in the range \[1, inf\) or None$"):
        validate_config(small_config(n_cols=0))
    with pytest.raises(ConfigError, match=r"^config key paper\.experiments\.t: unknown parameters \['x_default'\]; "
                                          r"allowed for renderer 'score_table': \["):
        validate_config(small_config(x_default=1.0))
    config = small_config()
    config["datasets"]["s"]["params"]["n_samples"] = 1
    with pytest.raises(ConfigError, match=r"^config key datasets\.s\.params\.n_samples: 1 is not allowed; allowed: "
                                          r"an int in the range \[2, inf\)$"):
        validate_config(config)
