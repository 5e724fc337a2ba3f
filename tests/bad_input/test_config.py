"""Bad input, class "config": everything a config gets wrong is refused before any job, naming the key, the value
and what is allowed (or what to set). Each case checks the message and that nothing is written outside ``tmp_path``
(the checks write nothing at all)."""

from __future__ import annotations

import copy
import logging
from pathlib import Path

import pytest
import yaml

from cova.config import ConfigError, Plan, read_config_file, validate_config
from cova.config.checks import MAX_NAME_BYTES, RESERVED_DATASET_NAMES
from cova.config.plan import LARGE_ENTRY_JOBS

ROOT = Path(__file__).resolve().parents[2]

BASE = {"seed": 0, "datasets": {"sinusoid": {"loader": "sinusoid", "params": {"n_samples": 60}}},
        "inputs": {"means": {"weights": {"kind": "euclidean_max", "n_neighbors": 10},
                             "confidence": {"kind": "eq12"}, "prototypes": {"kind": "means"}}},
        "methods": {"pca": {"method": "pca"}},
        "runs": [{"dataset": "sinusoid", "inputs": "means", "methods": ["pca"]}]}


def config(**methods: dict) -> dict:
    out = copy.deepcopy(BASE)
    if methods:
        out["methods"] = methods
        out["runs"][0]["methods"] = list(methods)
    return out


def refused(cfg: dict) -> str:
    with pytest.raises(ConfigError) as err:
        validate_config(cfg)
    return str(err.value)


def test_base_config_is_valid():
    validate_config(config())


# ------------------------------------------------------------------------------------- generated names collide
def test_entry_named_like_a_grid_point_is_refused():
    cfg = config(e1={"method": "cova_e1", "grid": {"alpha": [0.1, 0.9]}},
                 **{"e1-alpha0.1": {"method": "cova_e1", "params": {"alpha": 0.9}}})
    message = refused(cfg)
    assert message.startswith("config key methods.e1-alpha0.1: ")
    assert "grid point alpha=0.1 of methods.e1" in message and "rename methods.e1-alpha0.1" in message


def test_grid_points_sharing_a_file_name_are_refused():
    # '10%' becomes 'k_r10pct' in a file name, as '10pct' does
    cfg = config(x={"method": "coembed", "params": {"search": "grid"}, "grid": {"k_r": ["10%", "10pct"]}})
    assert refused(cfg).startswith("config key methods.x.grid: the grid point k_r='10pct' gets the name "
                                   "'x-k_r10pct', which the grid point k_r='10%' of methods.x also gets")


# ------------------------------------------------------------------------------- names the file system refuses
@pytest.mark.parametrize("section", ["datasets", "inputs", "methods"])
def test_over_long_names_are_refused(section):
    cfg = config()
    name = "n" * (MAX_NAME_BYTES + 1)
    cfg[section][name] = cfg[section].pop(next(iter(cfg[section])))
    key = {"datasets": "dataset", "inputs": "inputs"}.get(section)
    if key:
        cfg["runs"][0][key] = name
    else:
        cfg["runs"][0]["methods"] = [name]
    message = refused(cfg)
    assert message.startswith(f"config key {section}: the name 'nnnn")
    assert f"has {MAX_NAME_BYTES + 1} bytes; allowed: at most {MAX_NAME_BYTES}" in message


def test_grid_names_too_long_are_refused():
    cfg = config(e={"method": "cova_e1", "grid": {"alpha": [0.5]}})
    long_name = "e" * (MAX_NAME_BYTES - 5)
    cfg["methods"][long_name] = cfg["methods"].pop("e")
    cfg["runs"][0]["methods"] = [long_name]
    message = refused(cfg)
    assert message.startswith(f"config key methods.{long_name}.grid: the generated name ")
    assert "-alpha0.5' has" in message


@pytest.mark.parametrize("name", ["CON", "nul", "Com1.x", "lpt9"])
def test_device_names_are_refused(name):
    cfg = config()
    cfg["inputs"][name] = cfg["inputs"].pop("means")
    cfg["runs"][0]["inputs"] = name
    message = refused(cfg)
    assert message.startswith(f"config key inputs: {name!r} is not allowed; names before a '.' must not be one")


@pytest.mark.parametrize("name", RESERVED_DATASET_NAMES)
def test_dataset_named_like_a_results_folder_is_refused(name):
    cfg = config()
    cfg["datasets"][name] = cfg["datasets"].pop("sinusoid")
    cfg["runs"][0]["dataset"] = name
    assert refused(cfg).startswith(f"config key datasets: {name!r} is not allowed; results/{name}/ holds")


# ------------------------------------------------------------------------------------- self-referring configs
@pytest.mark.parametrize("text,key,outer", [
    ("seed: 0\nmethods: &m\n  x: {method: pca, params: *m}\n", "methods.x.params", "methods"),
    ("seed: 0\na: &l [1, *l]\n", "a[1]", "a"),
    ("&top\nseed: 0\nself: *top\n", "self", "<top level>"),
])
def test_self_referring_yaml_is_refused(tmp_path, text, key, outer):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_config_file(path)
    assert str(err.value).startswith(f"config file {path}: config key {key}: refers to its enclosing block {outer}")


def test_shared_aliases_that_do_not_recurse_are_fine(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(BASE) + "metrics: &m {n_neighbors: 5}\nother: [*m, *m]\n")
    assert read_config_file(path)["other"][0] == {"n_neighbors": 5}


def test_self_referring_dict_is_refused_by_validate_config():
    cfg = config()
    cfg["methods"]["pca"]["params"] = cfg["methods"]["pca"]
    assert refused(cfg).startswith("config key methods.pca.params: refers to its enclosing block methods.pca")


# --------------------------------------------------------------------------- sizes known from the loader's n
def test_default_graph_size_on_small_generated_data_names_what_to_set():
    cfg = config()
    del cfg["inputs"]["means"]["weights"]["n_neighbors"]  # the default, 50
    cfg["datasets"]["sinusoid"]["params"]["n_samples"] = 40
    assert refused(cfg) == (
        "config key inputs.means.weights.n_neighbors: 50 (the default of weights kind 'euclidean_max') is not "
        "allowed for runs[0]: dataset 'sinusoid' has 40 samples (params.n_samples=40), and the weight graph needs "
        "n_neighbors < n (each sample's own row excluded); set inputs.means.weights.n_neighbors to at most 39")
    cfg["inputs"]["means"]["weights"]["n_neighbors"] = 39
    validate_config(cfg)


def test_default_score_neighbourhood_on_small_generated_data_names_what_to_set():
    cfg = config()
    cfg["datasets"]["sinusoid"]["params"] = {"n_samples": 24, "n_cohorts": 2}
    message = refused(cfg)
    assert message.startswith("config key metrics.n_neighbors: 12 (the default) is not allowed for runs[0]: dataset "
                              "'sinusoid' has 24 samples (params.n_samples=24)")
    assert "set metrics.n_neighbors to at most 11 or give datasets.sinusoid.params.n_samples at least 25" in message
    cfg["metrics"] = {"n_neighbors": 11}
    validate_config(cfg)


def test_loader_default_sample_count_is_used():
    cfg = config()
    cfg["datasets"]["sinusoid"]["params"] = {}  # the loader's default n_samples, 1000
    cfg["metrics"] = {"n_neighbors": 500}
    assert "has 1000 samples (loader 'sinusoid''s default n_samples=1000)" in refused(cfg)
    cfg["metrics"] = {"n_neighbors": 499}
    validate_config(cfg)


# ------------------------------------------------------------------------------------------- very large plans
def test_a_plan_far_larger_than_usual_says_so(caplog, tmp_path):
    points = LARGE_ENTRY_JOBS // 2 + 1
    cfg = config(e1={"method": "cova_e1", "grid": {"alpha": [round(i / points, 6) for i in range(1, points + 1)]}})
    notices = [n for n in Plan(cfg).notices if "methods.e1" in n]
    assert notices == [f"NOTICE: config key methods.e1: {points} grid point(s) on 1 dataset and inputs pair(s) "
                       f"give {points} runs, {2 * points} jobs (embed and score each), more than {LARGE_ENTRY_JOBS}; "
                       f"shorten the grid's lists if that is not meant."]
    cfg["methods"]["e1"]["grid"]["alpha"] = cfg["methods"]["e1"]["grid"]["alpha"][:-1]
    assert not [n for n in Plan(cfg).notices if "methods.e1" in n]
    from cova.cli import main
    path = tmp_path / "big.yaml"
    cfg["methods"]["e1"]["grid"]["alpha"].append(1.0)
    path.write_text(yaml.safe_dump(cfg))
    with caplog.at_level(logging.WARNING, logger="cova"):
        assert main(["check-config", "--configfile", str(path), "--workdir", str(tmp_path)]) in (0, None)
    assert f"{2 * points} jobs" in caplog.text


# ------------------------------------------------------------------------ cross-parameter rules (_option_rules)
def test_fft_repulsion_in_three_dimensions_is_refused_before_any_job():
    cfg = config(t={"method": "tsne_affinity", "params": {"n_components": 3, "kl_method": "fft"}})
    assert refused(cfg) == (
        "config key methods.t.params.kl_method: 'fft' is not allowed: the 'fft' repulsion works in 1 or 2 "
        "dimension(s) only, and n_components = 3; allowed for k = 3: ['auto', 'bh', 'exact', 'octree']")
    cfg["methods"]["t"]["params"]["kl_method"] = "octree"
    validate_config(cfg)


def test_fft_repulsion_with_a_grid_of_dimensions_names_the_point():
    cfg = config(t={"method": "tsne_affinity", "params": {"kl_method": "octree"}, "grid": {"n_components": [3, 2]}})
    message = refused(cfg)
    assert message.startswith("config key methods.t.params.kl_method: 'octree' is not allowed: the 'octree' "
                              "repulsion works in 3 dimension(s) only, and n_components = 2")


def test_fft_repulsion_on_prototypes_of_three_columns_is_refused_before_any_job():
    cfg = config(e2={"method": "cova_e2", "params": {"kl_method": "fft"}})
    cfg["inputs"]["means"]["prototypes"] = {"kind": "given", "given": [[0, 0, 0], [1, 1, 1]]}
    assert refused(cfg) == (
        "config key methods.e2.params.kl_method: 'fft' is not allowed for runs[0]: the 'fft' repulsion works in 1 or "
        "2 dimension(s) only, and the prototypes of inputs block 'means' have k = 3 columns "
        "(inputs.means.prototypes.given (rows of that many coordinates)); allowed for k = 3: ['auto', 'bh', "
        "'exact', 'octree']")
    cfg["inputs"]["means"]["prototypes"]["given"] = [[0, 0], [1, 1]]
    validate_config(cfg)


def test_the_estimator_refuses_by_the_same_rule():
    import numpy as np

    from cova.methods import make_method

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    labels = np.repeat([0, 1], 15)
    with pytest.raises(ValueError) as err:  # k = 3 known only from the data it is fitted on
        make_method("cova_e2", {"kl_method": "fft", "max_iter": 1}).fit(X, labels, inputs={
            "weights": {"kind": "euclidean_max", "n_neighbors": 5}, "confidence": {"kind": "eq12"},
            "prototypes": {"kind": "given", "given": [[0, 0, 0], [1, 1, 1]]}})
    assert str(err.value).startswith("CovaE2 parameter kl_method (a method entry's params.kl_method): 'fft' is not "
                                     "allowed: the 'fft' repulsion works in 1 or 2 dimension(s) only, and the "
                                     "inputs' prototypes have k = 3 columns")
    with pytest.raises(ValueError, match="feasible_set = 'stiefel' runs the Armijo optimiser only"):
        make_method("cova_e2", {"feasible_set": "stiefel", "optimizer": "momentum"}).fit(X, labels)


def test_constrained_feasible_set_with_momentum_is_refused_before_any_job():
    cfg = config(e2={"method": "cova_e2", "params": {"feasible_set": "b_orthogonal", "optimizer": "momentum"}})
    assert refused(cfg).startswith("config key methods.e2.params.optimizer: 'momentum' is not allowed: "
                                   "feasible_set = 'b_orthogonal' runs the Armijo optimiser only; allowed: 'armijo' "
                                   "or 'auto'")


# ------------------------------------------------------------------------------------- dict-valued parameters
GRID = {"eta1": [0.5, 1], "eta2": [1], "xi": [1], "gamma": [0, 0.5]}


@pytest.mark.parametrize("grid,key,message", [
    ({**GRID, "zeta": [1]}, "methods.c.params.grid",
     "unknown parameters ['zeta']; allowed for method 'coembed''s grid: ['eta1', 'eta2', 'gamma', 'xi']"),
    ({k: v for k, v in GRID.items() if k != "xi"}, "methods.c.params.grid.xi",
     "required by method 'coembed''s grid; allowed: a list of at least 1 of a float in the range (0.0, 3.0]"),
    ({**GRID, "xi": [0, 1]}, "methods.c.params.grid.xi",
     "[0, 1] is not allowed; allowed: a list of at least 1 of a float in the range (0.0, 3.0]"),
    ({**GRID, "eta2": []}, "methods.c.params.grid.eta2",
     "[] is not allowed; allowed: a list of at least 1 of a float in the range [0.0, 10.0]"),
    ({**GRID, "gamma": ["0.5"]}, "methods.c.params.grid.gamma",
     "['0.5'] is not allowed; allowed: a list of at least 1 of a float in the range [0.0, 3.0]"),
])
def test_coembed_grid_dict_is_checked_before_any_job(grid, key, message):
    cfg = config(c={"method": "coembed", "params": {"search": "grid", "grid": grid}})
    assert refused(cfg) == f"config key {key}: {message}"


def test_coembed_grid_dict_is_checked_by_the_estimator():
    from cova.methods import make_method

    make_method("coembed", {"grid": GRID})._validate_params()
    with pytest.raises(ValueError, match=r"CoEmbedding parameter grid.xi \(a method entry's params.grid.xi\): "
                                         r"\[4\] is not allowed"):
        make_method("coembed", {"grid": {**GRID, "xi": [4]}})._validate_params()


# ----------------------------------------------------------- method sizes known from the loader (n) or features (d)
def test_method_neighbourhood_larger_than_a_generated_dataset_is_refused_before_any_job():
    cfg = config(iso={"method": "isomap", "params": {"n_neighbors": 60}})
    assert refused(cfg) == (
        "config key methods.iso.params.n_neighbors: 60 is not allowed for runs[0]: dataset 'sinusoid' has 60 "
        "samples (params.n_samples=60), and the neighbourhood graph needs n_neighbors < n (a sample is not its own "
        "neighbour); allowed: at most 59")
    cfg["methods"]["iso"]["params"]["n_neighbors"] = 59
    validate_config(cfg)


def test_method_size_guard_on_a_generated_dataset_names_the_default():
    cfg = config(mds={"method": "mds", "params": {"n_init": 1}})
    cfg["datasets"]["sinusoid"]["params"]["n_samples"] = 6000  # over MDS's default guard, 5,000
    message = refused(cfg)
    assert message.startswith("config key methods.mds.params.max_samples: 5000 (the default) is not allowed for "
                              "runs[0]: dataset 'sinusoid' has 6000 samples (params.n_samples=6000); MDS is O(l²)")
    assert "raise max_samples deliberately" in message
    cfg["inputs"]["means"]["subset"] = {"n_per_class": 100}  # fewer samples: the guard is the job's to check
    validate_config(cfg)


def test_perplexity_against_n_in_a_grid_names_the_grid_point():
    cfg = config(t={"method": "tsne_sklearn", "grid": {"perplexity": [10, 60]}})
    assert refused(cfg).startswith(
        "config key methods.t.grid.perplexity: 60 is not allowed for runs[0]: dataset 'sinusoid' has 60 samples")


def test_n_components_above_the_known_columns_is_refused_before_any_job():
    cfg = config(nca={"method": "nca", "params": {"n_components": 3}})
    cfg["inputs"]["means"]["features"] = {"kind": "pca", "n_components": 2}
    assert refused(cfg) == (
        "config key methods.nca.params.n_components: 3 is not allowed for runs[0]: inputs block 'means' gives X of "
        "2 columns (inputs.means.features.n_components), and NCA's directions lie in the data space; allowed: at "
        "most 2")


def test_hessian_eigenmaps_neighbourhood_is_refused_before_any_job():
    cfg = config(h={"method": "hlle", "params": {"n_neighbors": 9, "n_components": 3}})
    assert refused(cfg).startswith("config key methods.h.params.n_neighbors: 9 is not allowed: Hessian eigenmaps "
                                   "need n_neighbors greater than n_components (n_components + 3) / 2 = 9")


def test_check_config_command_exits_non_zero_naming_the_key(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config(t={"method": "tsne_affinity",
                                             "params": {"n_components": 3, "kl_method": "fft"}})))
    done = subprocess.run([sys.executable, "-m", "cova", "check-config", "--configfile", str(path), "--workdir",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "config key methods.t.params.kl_method: 'fft' is not allowed" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


# ------------------------- every size rule a method states (n, d, a relation's m × n), before any job, one case each
# sinusoid: n = 60 samples (params.n_samples), d = 2 columns (its generator's declared COLUMNS)
N60 = "is not allowed for runs[0]: dataset 'sinusoid' has 60 samples (params.n_samples=60)"
D2 = "is not allowed for runs[0]: inputs block 'means' gives X of 2 columns (loader 'sinusoid' of dataset 'sinusoid' " \
     "generates 2 columns)"


@pytest.mark.parametrize("method,params,key,start", [
    ("nerv", {"n_neighbors": 59}, "n_neighbors", f"59 {N60}, and NeRV's effective number of neighbours"),
    ("tnerv", {"max_samples": 59}, "max_samples", f"59 {N60}; TNeRV is O(l²)"),
    ("lmds", {"n_neighbors": 60}, "n_neighbors", f"60 {N60}, and the minimum neighbourhood radius"),
    ("cca", {"max_samples": 59}, "max_samples", f"59 {N60}; CCA is O(l²)"),
    ("cda", {"n_neighbors": 60}, "n_neighbors", f"60 {N60}, and the geodesic distances follow"),
    ("snerv", {"max_samples": 30}, "max_samples", f"30 {N60}; SNeRV is O(l²)"),
    ("featmap", {"n_neighbors": 60}, "n_neighbors", f"60 {N60}, and FeatMAP's neighbour search"),
    ("trimap", {"n_inliers": 59}, "n_inliers", f"59 {N60}, and TriMap's triplets"),
    ("llc", {"n_mixtures": 61}, "n_mixtures", f"61 {N60}, and each of the n_mixtures factor analysers"),
    ("llc", {"n_factors": 3}, "n_factors", f"3 {D2}, and each factor analyser has d = 3 factors"),
    ("ldmgi", {"n_components": 59}, "n_components", f"59 {N60}, and LDMGI takes the n_components + 1 smallest"),
    ("lmvu", {"n_landmarks": 61}, "n_landmarks", f"61 {N60}, and the landmarks are drawn from the samples"),
    ("muhsic", {"n_eigenvectors": 60}, "n_eigenvectors", f"60 {N60}, and the Laplacian of the n-node"),
    ("mma", {"n_eigenvectors": 60}, "n_eigenvectors", f"60 {N60}, and MMA takes the n_eigenvectors smallest"),
    ("mcml", {"n_components": 3}, "n_components", f"3 {D2}, and MCML projects the data it works in"),
    ("tsne", {"perplexity": 59}, "perplexity", f"59 {N60}, and the perplexity is calibrated over each point's "
                                               f"min(n − 1, ⌊3·perplexity⌋) nearest neighbours (openTSNE's"),
])
def test_method_size_rules_are_checked_before_any_job(method, params, key, start):
    message = refused(config(x={"method": method, "params": params}))
    assert message.startswith(f"config key methods.x.params.{key}: {start}"), message


@pytest.mark.parametrize("method,params,key,reason", [
    ("nerv", {"init": "pca", "metric": "precomputed"}, "init", "init='pca' needs feature vectors"),
    ("featmap", {"min_dist": 2.0}, "min_dist", "UMAP's curve needs min_dist ≤ spread; allowed: at most spread = 1.0"),
    ("llc", {"n_mixtures": 1, "n_factors": 1}, "n_components",
     "n_mixtures = 1 analysers of d = 1 factors give K(d + 1) − 1 = 1 non-constant directions; allowed: at most 1"),
    ("lmvu", {"n_landmarks": 1}, "n_landmarks", "allowed: at least n_components = 2"),
    ("mma", {"n_eigenvectors": 2}, "n_eigenvectors", "allowed: at least n_components + 1 = 3"),
    ("mcml", {"n_components": 3, "n_pca": 2}, "n_components", "n_pca = 2 (the PCA before the metric), and MCML "
                                                              "projects the data it works in; allowed: at most 2"),
])
def test_method_cross_parameter_rules_are_checked_before_any_job(method, params, key, reason):
    message = refused(config(x={"method": method, "params": params}))
    assert message.startswith(f"config key methods.x.params.{key}: ") and reason in message, message


def test_opentsne_perplexity_rule_is_the_perplexity_affinity_only():
    cfg = config(x={"method": "tsne", "params": {"perplexity": 59, "affinity": "inputs"}})
    validate_config(cfg)  # P is the run's W: the perplexity is not used
    cfg["methods"]["x"]["params"] = {"perplexity": 58}
    validate_config(cfg)


def test_the_estimator_refuses_what_the_config_check_refuses():
    import numpy as np

    from cova.methods import make_method

    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match=r"NeRV parameter n_neighbors \(a method entry's params.n_neighbors\): 29 is "
                                         r"not allowed: the inputs' X has 30 rows, and NeRV's effective number"):
        make_method("nerv", {"n_neighbors": 29}).fit(X)
    with pytest.raises(ValueError, match=r"LLC parameter n_factors .*: 3 is not allowed: the inputs' X has 2 columns"):
        make_method("llc", {"n_factors": 3, "n_mixtures": 2}).fit(X)
    with pytest.raises(ValueError, match=r"MKPE parameter n_components .*: 4 is not allowed: the inputs' relation has "
                                         r"n = 3 columns"):
        make_method("mkpe", {"n_components": 4}).fit(np.ones((5, 3)))


def test_generated_column_counts_are_the_generators():
    from cova.config.checks import _dataset_columns
    from cova.datasets import LOADERS
    from cova.datasets.coembedding import COLUMNS as COEMBED_COLUMNS
    from cova.datasets.synthetic import COLUMNS

    for loader, columns in COLUMNS.items():
        params = {"n_classes": 2, "n_per_class": 2, "n_features": 7} if loader == "places_shaped" else {"n_samples": 8}
        expected = _dataset_columns({"loader": loader, "params": params}, "d")[0]  # a given or a default option
        assert expected == (params.get(columns, expected) if isinstance(columns, str) else columns), loader
        assert LOADERS[loader](**params).X.shape[1] == expected, loader
    assert LOADERS["coembed_points"](kind="ring").X.shape[1] == COEMBED_COLUMNS


def test_columns_of_a_generated_dataset_are_known_before_any_job():
    cfg = config(x={"method": "nca", "params": {"n_components": 4}})
    cfg["datasets"]["sinusoid"] = {"loader": "s_curve", "params": {"n_samples": 60}}
    assert refused(cfg) == (
        "config key methods.x.params.n_components: 4 is not allowed for runs[0]: inputs block 'means' gives X of 3 "
        "columns (loader 's_curve' of dataset 'sinusoid' generates 3 columns), and NCA's directions lie in the data "
        "space; allowed: at most 3")
    cfg["methods"]["x"]["params"]["n_components"] = 3
    validate_config(cfg)


def test_lda_components_beyond_the_known_cohorts_are_refused_before_any_job():
    cfg = config(x={"method": "lda"})
    cfg["datasets"]["sinusoid"]["params"]["n_cohorts"] = 2
    assert refused(cfg) == (
        "config key methods.x.params.n_components: 2 (the default) is not allowed for runs[0]: dataset 'sinusoid' has "
        "2 cohorts (loader 'sinusoid': n_cohorts=2), and LDA finds at most c − 1 directions between c classes; allowed: at most "
        "c − 1 = 1")
    cfg["inputs"]["means"]["cohorts"] = {"kind": "spectral", "n_clusters": 3}  # the cohorts LDA then separates
    validate_config(cfg)


def test_lda_refuses_the_same_components_on_arrays():
    import numpy as np
    from sklearn.utils._param_validation import InvalidParameterError

    from cova.methods import METHODS

    X = np.random.default_rng(0).normal(size=(40, 5))
    with pytest.raises(InvalidParameterError, match="the inputs' labels hold 2 cohorts, and LDA finds at most c"):
        METHODS["lda"]().fit(X, np.arange(40) % 2)
    assert METHODS["lda"](n_components=2).fit(X, np.arange(40) % 3).embedding_.shape == (40, 2)


def test_cova_e1_dense_solver_on_known_large_data_is_refused_before_any_job():
    cfg = config(x={"method": "cova_e1", "params": {"solver": "dense"}})
    cfg["datasets"]["sinusoid"]["params"]["n_samples"] = 6000
    assert refused(cfg).startswith(
        "config key methods.x.params.solver: 'dense' is not allowed for runs[0]: dataset 'sinusoid' has 6000 samples")
    assert "refused above l = 5,000; allowed: 'auto', 'direct' or 'cg'" in refused(cfg)
    cfg["datasets"]["sinusoid"]["params"]["n_samples"] = 5000
    validate_config(cfg)


@pytest.mark.parametrize("value", [1, 0.02])  # an int, and 2 % of 60 samples: k̃ = 1 either way
def test_cova_projection_with_fewer_sample_prototypes_than_k_is_refused_before_any_job(value):
    cfg = config(x={"method": "cova_p1", "params": {"n_sample_prototypes": value}})
    message = refused(cfg)
    assert message.startswith(f"config key methods.x.params.n_sample_prototypes: {value} is not allowed for runs[0]: "
                              "dataset 'sinusoid' has 60 samples (params.n_samples=60), so k̃ = 1, and the prototypes")
    assert message.endswith("the projection needs k̃ ≥ k; allowed: k̃ of at least 2")
    cfg["methods"]["x"]["params"]["n_sample_prototypes"] = 2
    validate_config(cfg)


def relation_config(method: str, params: dict, groups: dict | None = None) -> dict:
    cfg = config(x={"method": method, "params": params})
    cfg["datasets"] = {"dots": {"loader": "coembed_points", "params": {"kind": "dots"}}}  # 6 clusters of 60 points
    cfg["inputs"] = {"rel": {"relation": {"source": "points",
                                          "groups": groups or {"rows": [0, 1, 2], "shared": [3], "columns": [4, 5]}}}}
    cfg["runs"] = [{"dataset": "dots", "inputs": "rel", "methods": ["x"]}]
    return cfg


@pytest.mark.parametrize("method", ["acas", "code", "mkpe"])
def test_relation_size_guard_is_checked_before_any_job(method):
    # rows: 3 clusters and half of cluster 3 = 210; columns: 2 clusters and the other half = 150
    message = refused(relation_config(method, {"max_samples": 200}))
    assert message.startswith("config key methods.x.params.max_samples: 200 is not allowed for runs[0]: the relation "
                              f"of inputs block 'rel' on dataset 'dots' has m = 210 rows; {method.upper()} is O(l²)")
    validate_config(relation_config(method, {"max_samples": 210}))


@pytest.mark.parametrize("method, why", [
    ("mkpe", "E_x (m × k) and E_z (n × k) have orthonormal columns"),
    ("acas", "Z_x and Z_y take k singular vectors of the scaled m×n relation"),
])
def test_relation_columns_bound_the_components_before_any_job(method, why):
    assert refused(relation_config(method, {"n_components": 151})) == (
        "config key methods.x.params.n_components: 151 is not allowed for runs[0]: the relation of inputs block 'rel' "
        f"on dataset 'dots' has n = 150 columns, and {why}; allowed: at most 150")


def test_relation_block_the_builder_refuses_is_refused_before_any_job():
    assert refused(relation_config("code", {}, {"rows": [0, 1, 2], "columns": [3, 4]})) == (
        "config key inputs.rel: on dataset 'dots', inputs relation.groups: clusters ['dot 6'] are not listed; list "
        "every cluster exactly once under rows, columns or shared")
