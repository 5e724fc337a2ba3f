"""Inputs construction, the method registry, the t-SNE and PCA wrappers, and score aggregation."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA as SkPCA

from cova.datasets import load
from cova.inputs import Inputs, build_inputs
from cova.methods import METHODS, PCA, TSNE, CovaE1, make_method, method_parameters
from cova.metrics import s_c
from cova.metrics.summary import compute_scores, procrustes_align

SPECS = {
    "means": {"weights": {"kind": "euclidean_max", "n_neighbors": 20},
              "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
              "prototypes": {"kind": "means"}},
    "graph_tsne": {"weights": {"kind": "gaussian_perplexity", "perplexity": 10},
                   "confidence": {"kind": "eq11", "lambda_p": 0.01},
                   "prototypes": {"kind": "tsne", "proximity": "graph", "rho": 3}},
    "centre_mds": {"weights": {"kind": "cosine_knn", "n_neighbors": 10},
                   "confidence": {"kind": "eq10"},
                   "prototypes": {"kind": "mds", "proximity": "centres", "rho": 2}},
}


@pytest.fixture(scope="module")
def sinusoid():
    return load("sinusoid", n_samples=240)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_build_inputs_invariants(sinusoid, name, tmp_path):
    inp = build_inputs(sinusoid, SPECS[name], seed=3)
    l, c = sinusoid.n_samples, sinusoid.n_cohorts
    assert inp.W.shape == (l, l) and abs(inp.W.sum() - 1) < 1e-12 and (inp.W != inp.W.T).nnz == 0
    assert inp.R.shape == (l, c) and abs(inp.R.sum() - 1) < 1e-12 and np.all(inp.R >= 0)
    assert inp.prototypes.shape == (c, 2)
    if name != "means":
        np.testing.assert_allclose(inp.prototypes.mean(axis=0), 0, atol=1e-12)
        rho = SPECS[name]["prototypes"]["rho"]
        assert np.sqrt(np.mean(np.sum(inp.prototypes**2, axis=1))) == pytest.approx(rho)
    sinusoid.save(tmp_path / "d.npz")
    inp.save(tmp_path / "i.npz")
    back = Inputs.load(tmp_path / "d.npz", tmp_path / "i.npz")
    assert (back.W != inp.W).nnz == 0
    np.testing.assert_array_equal(back.R, inp.R)
    np.testing.assert_array_equal(back.prototypes, inp.prototypes)
    assert back.spec["seed"] == 3


def test_build_inputs_is_deterministic(sinusoid):
    a = build_inputs(sinusoid, SPECS["graph_tsne"], seed=0)
    b = build_inputs(sinusoid, SPECS["graph_tsne"], seed=0)
    np.testing.assert_array_equal(a.prototypes, b.prototypes)
    np.testing.assert_array_equal(a.R, b.R)


def test_build_inputs_rejects_tiny_cohorts(sinusoid):
    from cova.datasets import Dataset

    labels = sinusoid.labels.copy()
    labels[0] = 6
    ds = Dataset(sinusoid.X, labels, sinusoid.label_names + ["lonely"])
    with pytest.raises(ValueError, match="lonely"):
        build_inputs(ds, SPECS["means"])


def test_registry_validates_names_and_parameters():
    assert {"cova_e1", "tsne", "pca"} <= set(METHODS)
    assert "alpha" in method_parameters("cova_e1")
    with pytest.raises(ValueError, match="allowed"):
        make_method("cova_e9")
    with pytest.raises(ValueError, match="alpha"):
        make_method("cova_e1", {"alfa": 0.1})
    assert make_method("tsne", seed=7).random_state == 7
    assert make_method("tsne", {"random_state": 1}, seed=7).random_state == 1
    assert isinstance(make_method("cova_e1", {"alpha": 0.2}), CovaE1)


def test_tsne_is_deterministic_and_uses_the_given_graph(sinusoid):
    inp = build_inputs(sinusoid, SPECS["means"])
    a = TSNE(perplexity=10, max_iter=100, early_exaggeration_iter=50, random_state=0).fit_transform(inp)
    b = TSNE(perplexity=10, max_iter=100, early_exaggeration_iter=50, random_state=0).fit_transform(inp)
    np.testing.assert_array_equal(a, b)
    c = TSNE(affinity="inputs", max_iter=100, early_exaggeration_iter=50, random_state=0).fit_transform(inp)
    assert a.shape == c.shape == (sinusoid.n_samples, 2) and not np.allclose(a, c)
    with pytest.raises(ValueError, match="affinity"):
        TSNE(affinity="other").fit(inp)


@pytest.mark.parametrize("gradient", ["bh", "fft"])
def test_tsne_sharing_threads_gives_the_fixed_thread_embedding(sinusoid, caplog, gradient):
    """A run that moves from one thread to two, in the early exaggeration or after it (interrupted between a
    gradient and its step, then resumed), ends where the run on one thread does, bit for bit; so does a run that
    never grows. (The KL divergence is a threaded sum: equal to rounding.)"""
    kw = dict(perplexity=10, max_iter=120, early_exaggeration_iter=130, random_state=0, n_jobs=2,
              negative_gradient_method=gradient)
    fixed = TSNE(**{**kw, "n_jobs": 1}).fit(sinusoid.X)
    # checks at the start, then every 50 iterations of a call: at 50 and 100 of the 130 exaggerated ones, at 50 of
    # the rest; the growing check's iteration is recomputed, so 130 − 49 = 81 or 120 − 49 = 71 are left
    for one_thread_checks, left_expected in [(1, 81), (3, 71)]:
        calls = []

        def threads() -> int:  # one thread for the first checks, then two
            calls.append(1)
            return 1 if len(calls) <= one_thread_checks else 2

        caplog.clear()
        with caplog.at_level("INFO", logger="cova"):
            grown = TSNE(**kw).fit_sharing(sinusoid.X, threads)
        assert f"t-SNE: {left_expected} iterations left, now on 2 threads" in caplog.text
        assert "done after 250 iterations" in caplog.text
        kl = [float(x.split()[0]) for x in caplog.text.split("kl = ")[1:]]
        assert 0 < kl[0] < 10 and kl[-1] < kl[0]  # the exaggerated phase reports the KL of the plain P, as openTSNE
        np.testing.assert_array_equal(grown.embedding_, fixed.embedding_)
        assert grown.kl_divergence_ == pytest.approx(fixed.kl_divergence_, rel=1e-12)
    same = TSNE(**kw).fit_sharing(sinusoid.X, lambda: 1)
    np.testing.assert_array_equal(same.embedding_, fixed.embedding_)


def test_pca_equals_scikit_learn(sinusoid):
    inp = build_inputs(sinusoid, SPECS["means"])
    np.testing.assert_allclose(PCA().fit_transform(inp), SkPCA(2, svd_solver="full").fit_transform(sinusoid.X))


def test_aligned_s_c_is_invariant_to_similarity_transforms(sinusoid):
    inp = build_inputs(sinusoid, SPECS["graph_tsne"])
    Z = CovaE1(alpha=0.7).fit_transform(inp)
    A = 0.3 * np.array([[np.cos(1.0), -np.sin(1.0)], [np.sin(1.0), np.cos(1.0)]]) @ np.diag([1.0, -1.0])
    moved = Z @ A + np.array([10.0, -4.0])
    raw = s_c(moved, inp.labels, inp.prototypes)
    aligned = s_c(procrustes_align(moved, inp.labels, inp.prototypes), inp.labels, inp.prototypes)
    assert aligned == pytest.approx(s_c(Z, inp.labels, inp.prototypes))
    assert raw < aligned
    np.testing.assert_allclose(procrustes_align(moved, inp.labels, inp.prototypes),
                               procrustes_align(Z, inp.labels, inp.prototypes), atol=1e-10)


def test_compute_scores_of_e1_follow_alpha(sinusoid):
    """COVA's trade-off (Sec. 4.1): more cohort weight → prototypes followed better, neighbours kept less."""
    inp = build_inputs(sinusoid, SPECS["means"])
    low, high = (compute_scores(inp.X, CovaE1(alpha=a).fit_transform(inp), inp.labels, inp.prototypes,
                                inp.prototypes, n_neighbors=10) for a in (0.1, 0.9))
    assert high["s_c"] > low["s_c"] and high["s_n"] < low["s_n"]
    assert set(low) == {"s_n", "s_n_cohort_kbar", "s_s", "s_c", "s_c_aligned", "s_c_r", "trustworthiness", "continuity"}


def test_readme_method_table_lists_every_registered_method():
    """README's method table names every method of the registry (ranges like `cova_p1` … `cova_p4` count)."""
    import re
    from pathlib import Path

    from cova.methods.registry import METHODS

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    named: set[str] = set()
    for row in rows:
        first = row.split("|")[1]
        names = re.findall(r"`([a-z0-9_]+)`", first)
        named.update(names)
        if "…" in first and len(names) == 2:  # `x_p1` … `x_p4`
            stem, a, b = re.match(r"(.*?)(\d+)$", names[0]).group(1), int(names[0][-1]), int(names[1][-1])
            named.update(f"{stem}{i}" for i in range(a, b + 1))
    assert sorted(set(METHODS) - named) == []
