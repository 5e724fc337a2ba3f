"""Every renderer declares its options beside its code (``cova.constraints.declare``), and an experiment block is
checked against that declaration (``cova.experiments.registry.check_experiment``) with the standard messages."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
import yaml

from cova.constraints import REQUIRED, OptionError, option_defaults, parameter_constraints
from cova.experiments.registry import COMMON_KEYS, MODULES, RENDERERS, check_experiment, render, renderer_options

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "src" / "cova" / "experiments"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_renderer_is_declared(name):
    """The table of a renderer lists exactly its keyword-only parameters; it takes (spec, out) positionally and
    declares no common key."""
    renderer = renderer_options(name)
    assert renderer is RENDERERS[name]
    assert hasattr(renderer, "_parameter_constraints") and hasattr(renderer, "_option_rules")
    params = inspect.signature(renderer).parameters.values()
    keyword_only = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert keyword_only == set(parameter_constraints(renderer)), name
    assert [p.name for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY] == ["spec", "out"], name
    assert not keyword_only & COMMON_KEYS, name


@pytest.mark.parametrize("path", ["config.yaml", "config/ci.yaml", "config/demo.yaml"])
def test_every_configured_experiment_passes_its_renderer_check(path):
    from cova.config import resolve_config
    from cova.config.checks import experiment_context

    config = resolve_config(yaml.safe_load((ROOT / path).read_text()))
    experiments = config.get("paper", {}).get("experiments", {})
    for name, block in experiments.items():
        options = check_experiment(name, block, experiment_context(config, block))
        assert set(options) == set(parameter_constraints(RENDERERS[block["renderer"]]))


def test_defaults_are_filled_in():
    options = check_experiment("grid", {"renderer": "scatter_grid", "title": "t", "neighbours": {"k": 3}})
    assert options == {"n_cols": None, "original": False, "show_prototypes": True, "misplaced": None,
                       "thumbnails": None, "neighbours": {"per_cohort": 1, "k": 3, "random_state": 0}}
    assert check_experiment("panels", {"renderer": "link_panels"})["reference_graph"] == "prototypes"
    assert check_experiment("timing", {"renderer": "coembed_timing", "claim": {"proposed": "p"}})["claim"] == {
        "proposed": "p", "fast": (), "slow": ()}
    assert option_defaults(RENDERERS["sweep"])["x"] is REQUIRED


@pytest.mark.parametrize("block, key, message", [
    ({"renderer": "scatter_grid", "n_cols": 0}, "n_cols",
     r"0 is not allowed; allowed: an int in the range \[1, inf\) or None"),
    ({"renderer": "scatter_grid", "measure_space": "inputs"}, None,
     r"unknown parameters \['measure_space'\]; allowed for renderer 'scatter_grid': \['misplaced', 'n_cols'"),
    ({"renderer": "sweep"}, "x", r"required by renderer 'sweep'; allowed: "),
    ({"renderer": "heatmap", "x": "alpha"}, "y", r"required by renderer 'heatmap'"),
    ({"renderer": "score_table", "scores": ["s_n", "S_c"]}, "scores", r"allowed: a list of score keys"),
    ({"renderer": "score_table", "neighbours": {"k": 0}}, "neighbours.k",
     r"0 is not allowed; allowed: an int in the range \[1, inf\)"),
    ({"renderer": "score_table", "thumbnails": {"size": 3}}, "thumbnails",
     r"unknown parameters \['size'\]; allowed for renderer 'score_table''s thumbnails: \['grid', 'zoom'\]"),
    ({"renderer": "link_graphs", "reference_graph": "cova_table1"}, "reference_graph",
     r"'cova_table1' is not allowed; allowed: a str among"),
    ({"renderer": "img_sweep", "x": "alpha", "xscale": "symlog"}, "xscale", r"allowed: a str among"),
    ({"renderer": "coembed_sweep", "x": "n_components", "n_words": [2, 4]}, "n_words",
     r"with x = n_components give one n_words"),
    ({"renderer": "coembed_timing", "sizes": [5]}, "sizes", r"allowed: a list of ints ≥ 10"),
    ({"renderer": "radial_panels", "inputs_labels": {"raw": 1}}, "inputs_labels",
     r"allowed: a mapping of inputs blocks to labels \(str\)"),
    ({"renderer": "retrieval", "joint": "yes"}, "joint", r"'yes' is not allowed; allowed: an instance of 'bool'"),
    ({"renderer": "nope"}, "renderer", r"'nope' is not allowed; allowed values: \['coembed_maps'"),
])
def test_a_bad_option_is_refused_by_key_with_what_is_allowed(block, key, message):
    where = r"paper\.experiments\.e" + (r"\." + key.replace(".", r"\.") if key else "")
    with pytest.raises(OptionError, match=rf"^config key {where}: .*{message}"):
        check_experiment("e", {"paper": "cova", "runs": [], **block})


def _runs(*grids: dict, loader: str = "sculpt_faces") -> dict:
    return {"runs": [{"dataset": f"d{i}", "loader": loader, "inputs": "i", "entry": "m", "group": "m",
                      "method": "cova_e1", "grid": grid} for i, grid in enumerate(grids)]}


def test_examples_must_match_a_runs_grid_values():
    block = {"renderer": "heatmap", "x": "alpha", "y": "eta", "examples": {"alpha": 0.9}}
    assert check_experiment("h2", block, _runs({"alpha": 0.9, "eta": 0.1}))["examples"] == {"alpha": 0.9}
    assert check_experiment("h2", block)["examples"] == {"alpha": 0.9}  # nothing known about the runs
    with pytest.raises(OptionError, match=r"^config key paper\.experiments\.h2\.examples: \{'alpha': 0\.9\} is not "
                                          r"allowed: it matches no run's grid values; allowed: the grid values"):
        check_experiment("h2", block, _runs({"alpha": 0.5, "eta": 0.1}))
    with pytest.raises(OptionError, match=r"examples: \{\} is not allowed; allowed: a mapping of grid parameters "
                                          r"to numbers \(at least one\) or None"):
        check_experiment("h2", {**block, "examples": {}})


def test_ground_truth_measures_need_a_loader_with_ground_truth():
    block = {"renderer": "nerv_panels", "measure_space": "ground_truth"}
    assert check_experiment("f8", block, _runs({}))["measure_space"] == "ground_truth"
    with pytest.raises(OptionError, match=r"^config key paper\.experiments\.f8\.measure_space: 'ground_truth' is not "
                                          r"allowed: dataset 'd1' \(loader 's_curve'\) has no ground-truth "
                                          r"coordinates; allowed loaders: \['sculpt_faces', 'cohort_manifold'\]"):
        check_experiment("f8", block, {"runs": [*_runs({})["runs"], *_runs({}, {}, loader="s_curve")["runs"][1:]]})
    assert check_experiment("f8", {"renderer": "nerv_panels"}, _runs({}, loader="s_curve"))["measure_space"] == \
        "inputs"
    with pytest.raises(OptionError, match=r"unknown parameters \['measure_space'\]"):
        check_experiment("f8", {"renderer": "retrieval", "measure_space": "ground_truth"})


def test_render_refuses_a_key_that_is_neither_common_nor_declared(tmp_path):
    out = {k: str(tmp_path / f"o.{k}") for k in ("png", "csv", "html")}
    with pytest.raises(OptionError, match=r"paper\.experiments\.t: unknown parameters \['kappa'\]; allowed for "
                                          r"renderer 'sweep'"):
        render({"name": "t", "renderer": "sweep", "x": "alpha", "kappa": 2, "runs": []}, out)


def test_the_declared_call_checks_the_options(tmp_path):
    from cova.constraints import InvalidParameterError

    out = {k: str(tmp_path / f"o.{k}") for k in ("png", "csv", "html")}
    with pytest.raises(InvalidParameterError, match="'n_cols' parameter of scatter_grid must be"):
        render({"name": "t", "renderer": "scatter_grid", "n_cols": 0, "runs": []}, out)


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports (absolute names; relative imports resolved against the package)."""
    package = ["cova", *path.relative_to(ROOT / "src" / "cova").parent.parts]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_experiments_draw_only_through_viz():
    """No module under cova.experiments imports matplotlib: the renderers assemble data, cova.viz draws it."""
    modules = sorted(EXPERIMENTS.rglob("*.py"))
    assert len(modules) > 10
    drawing = {str(p.relative_to(ROOT)): sorted(n for n in _imports(p) if n.split(".")[0] == "matplotlib")
               for p in modules}
    assert not {k: v for k, v in drawing.items() if v}
    assert "matplotlib.pyplot" in _imports(ROOT / "src" / "cova" / "viz" / "runtimes.py")  # the check sees imports
