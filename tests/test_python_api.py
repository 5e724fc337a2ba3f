"""Every registered method as a scikit-learn estimator on plain arrays: ``fit(X, y)`` / ``fit_transform(X, y)``,
``transform`` of new points, the same fit as the workflow's ``Inputs`` path, ``check_estimator`` on the methods
declared compatible, and README's "Use from Python" example."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from cova.datasets import Dataset
from cova.inputs import build_inputs
from cova.inputs.defaults import VECTOR_BLOCK
from cova.methods import METHODS

#: Small iteration counts and neighbourhoods for 90 points (the defaults are for thousands).
FAST: dict[str, dict] = {
    "cova_e2": {"max_iter": 20}, "cova_e3": {"max_iter": 20}, "cova_e4": {"max_iter": 20},
    "cova_p1": {"inner_iter": 3}, "cova_p2": {"inner_iter": 3}, "cova_p3": {"inner_iter": 3},
    "cova_p4": {"inner_iter": 3}, "eigen_cova": {"eta": 0.3},
    "pe": {"max_iter": 30, "posterior_max_iter": 20}, "snerv": {"posterior_max_iter": 20},
    "mre": {"max_iter": 30, "perplexity": 10.0}, "deep_embedding": {"n_epochs": 2},
    "lmds": {"n_iter_per_point": 5}, "cca": {"n_iter_per_point": 5}, "cda": {"n_iter_per_point": 5, "n_neighbors": 5},
    "tsne": {"max_iter": 30, "early_exaggeration_iter": 10, "perplexity": 10.0},
    "tsne_exact": {"max_iter": 30, "early_exaggeration_iter": 10, "perplexity": 2.0, "momentum_switch_iter": 10},
    "tsne_affinity": {"max_iter": 30, "early_exaggeration_iter": 10, "momentum_switch_iter": 10},
    "dosnes": {"max_iter": 30, "momentum_switch_iter": 10},
    "sne": {"max_iter": 30, "early_exaggeration_iter": 10, "perplexity": 2.0, "momentum_switch_iter": 10},
    "nse": {"perplexity": 2.0}, "supervised_nse": {"perplexity": 10.0},
    "supervised_sne": {"max_iter": 30, "early_exaggeration_iter": 10, "perplexity": 10.0, "momentum_switch_iter": 10},
    "supervised_tsne": {"max_iter": 30, "early_exaggeration_iter": 10, "perplexity": 10.0},
    "llc": {"max_iter": 10}, "muhsic": {"max_iters": 200}, "mds": {"max_iter": 30}, "nca": {"max_iter": 5},
    "mcml": {"max_iter": 10}, "mma": {"max_iter": 20, "perplexity": 10.0}, "umap": {"n_epochs": 20},
    "densmap": {"n_epochs": 20}, "tsne_sklearn": {"max_iter": 250, "perplexity": 2.0}, "trimap": {"n_iters": 20},
    "pacmap": {"num_iters": 20}, "code": {"max_iter": 20}, "mkpe": {"max_iter": 10}, "featmap": {"n_epochs": 20},
    "lle": {"n_neighbors": 5}, "isomap": {"n_neighbors": 5}, "hlle": {"n_neighbors": 8},
}
#: The Places2 protocol at a perplexity 90 points can carry (3·perplexity neighbours).
BLOCK = {**VECTOR_BLOCK, "weights": {"kind": "gaussian_perplexity", "perplexity": 10}}

_rng = np.random.default_rng(0)
X = np.vstack([_rng.normal(3.0 * c, 1.0, (30, 8)) for c in range(3)])
Y = np.repeat(np.array(["setosa", "versicolor", "virginica"], dtype=object), 30)
X_NEW = X[::9] + 0.05
RELATION = _rng.poisson(1.0, (40, 25)).astype(float) + 0.1


def _make(name: str):
    return METHODS[name](**FAST.get(name, {}))


def _graph_block(est) -> dict | None:
    return BLOCK if set(est.requires()) & {"W", "R", "prototypes"} else None


def test_the_table_covers_only_registered_methods():
    assert set(FAST) <= set(METHODS)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_fit_on_arrays(name):
    est = _make(name)
    if "relation" in est.requires():
        assert est.fit(sp.csr_matrix(RELATION)) is est
        assert est.embedding_.shape == (RELATION.shape[0], getattr(est, "n_components", 2))
    else:
        assert est.fit(X, Y, inputs=_graph_block(est)) is est
        k = 3 if est.geometry == "sphere" else est.embedding_.shape[1]
        assert est.embedding_.shape == (X.shape[0], k) and k >= 2
    assert np.all(np.isfinite(est.embedding_))
    if callable(getattr(est, "transform", None)) and "relation" not in est.requires():
        Z_new = est.transform(X_NEW)
        assert Z_new.shape == (X_NEW.shape[0], est.embedding_.shape[1]) and np.all(np.isfinite(Z_new))


@pytest.mark.parametrize("name", ["cova_e1", "tsne", "lmds", "ca"])
def test_arrays_give_the_same_fit_as_the_inputs_path(name):
    """The arrays path builds its inputs with ``build_inputs``: same block, same seed, same embedding."""
    est = _make(name)
    if name == "ca":
        data, labels, block = RELATION, np.zeros(RELATION.shape[0], dtype=int), {"relation": {"source": "X"}}
    else:
        data, labels, block = X, np.repeat([0, 1, 2], 30), (BLOCK if name == "cova_e1" else {})
    inputs = build_inputs(Dataset(data, labels, ["setosa", "versicolor", "virginica"][: labels.max() + 1]), block,
                          seed=0)
    from_inputs = est.fit_transform(inputs)
    from_arrays = _make(name).fit_transform(data, Y if name != "ca" else None, inputs=block)
    np.testing.assert_array_equal(from_arrays, from_inputs)
    # and the seed matters where something is random, so the comparison is not vacuous
    if name == "tsne":
        assert not np.array_equal(METHODS[name](**FAST[name], random_state=1).fit_transform(X), from_inputs)


def test_labels_of_any_type_are_kept_in_order():
    est = _make("cova_e1").fit(X, Y, inputs=BLOCK)
    assert list(est.classes_) == ["setosa", "versicolor", "virginica"]
    as_ints = _make("cova_e1").fit_transform(X, np.repeat([10, 20, 30], 30), inputs=BLOCK)
    np.testing.assert_array_equal(as_ints, est.embedding_)


@pytest.mark.parametrize("name", ["cova_e1", "cova_e2", "lda", "supervised_tsne"])
def test_a_method_that_reads_labels_says_it_needs_y(name):
    with pytest.raises(ValueError, match=rf"{METHODS[name].__name__} needs labels y"):
        _make(name).fit(X)


def test_a_graph_method_runs_without_labels():
    Z = _make("tsne_affinity").fit_transform(X, inputs=BLOCK)
    assert Z.shape == (90, 2) and np.all(np.isfinite(Z))


def test_bad_arrays_are_refused_clearly():
    with pytest.raises(ValueError, match="y has 89 labels but X has 90 rows"):
        _make("cova_e1").fit(X, Y[:-1])
    with pytest.raises(ValueError, match="all-zero rows"):
        _make("ca").fit(np.vstack([RELATION, np.zeros(25)]))
    with pytest.raises(ValueError, match="NaN"):
        _make("pca").fit(np.where(X > 8, np.nan, X))
    with pytest.raises(ValueError, match="inputs.weights"):
        _make("cova_e1").fit(X, Y, inputs={**BLOCK, "weights": {"kind": "no_such_kind"}})


def test_interpolated_transform_reproduces_fitted_points():
    """E1's transform of a fitted point is that point's coordinates (distance 0 takes its own z)."""
    est = _make("cova_e1").fit(X, Y, inputs=BLOCK)
    np.testing.assert_allclose(est.transform(X[:7]), est.embedding_[:7])


@pytest.mark.parametrize("name", sorted(n for n, cls in METHODS.items() if cls.sklearn_compatible))
def test_check_estimator(name):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(_make(name))


def test_readme_example_runs():
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = text.split("### Use from Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["Z_e1"].shape[1] == 2 and namespace["Z_new"].shape[1] == 2
