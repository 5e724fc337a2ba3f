"""NeRV Sec. 5.3's supervised protocol: k-fold inputs, semi-supervised fits with hidden test labels, the held-out
5-NN error, and the baselines S-Isomap and PE."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

from cova.cli import main
from cova.config import ConfigError, validate_config
from cova.datasets.base import Dataset
from cova.inputs import Inputs, build_inputs, stratified_fold
from cova.methods import METHODS, make_method
from cova.methods.baselines.pe import ParametricEmbedding, pe_cost_and_grad
from cova.methods.baselines.supervised_isomap import SupervisedIsomap, supervised_dissimilarity
from cova.metrics.retrieval import heldout_knn_error


def _blobs(c: int = 3, n: int = 20, d: int = 4, seed: int = 0, spread: float = 4.0) -> Dataset:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=spread, size=(c, d))
    X = np.vstack([centres[j] + rng.normal(size=(n, d)) for j in range(c)])
    return Dataset(X, np.repeat(np.arange(c), n), [f"c{j}" for j in range(c)])


# --------------------------------------------------------------------------------------------- folds and inputs

def test_folds_partition_the_rows_and_are_stratified():
    y = np.repeat(np.arange(3), [10, 20, 30])
    tests = [~stratified_fold(y, 5, f, seed=3) for f in range(5)]
    assert np.array_equal(np.sum(tests, axis=0), np.ones(60))  # every row held out exactly once
    for t in tests:
        assert np.array_equal(np.bincount(y[t]), [2, 4, 6])
    assert np.array_equal(stratified_fold(y, 5, 2, seed=3), stratified_fold(y, 5, 2, seed=3))
    assert not np.array_equal(stratified_fold(y, 5, 2, seed=3), stratified_fold(y, 5, 2, seed=4))
    with pytest.raises(ValueError, match="at least 12 samples"):
        stratified_fold(y, 12, 0)


def test_points_block_with_a_fold_and_hidden_labels():
    ds = _blobs()
    inp = build_inputs(ds, {"split": {"n_folds": 4, "fold": 1}}, seed=0)
    assert inp.available() == {"X", "labels"} and inp.train.sum() == 45
    semi = inp.semi_supervised()
    assert np.array_equal(semi.labelled, inp.train) and semi.X is inp.X
    assert np.all(semi.labels[~inp.train] == -1) and np.array_equal(semi.labels[inp.train], ds.labels[inp.train])


def test_config_refuses_a_fold_out_of_range_and_a_method_without_transform():
    base = {"seed": 0, "datasets": {"d": {"loader": "digits"}}, "methods": {"m": {"method": "nca"}},
            "inputs": {"f": {"split": {"n_folds": 10, "fold": 10}}},
            "runs": [{"dataset": "d", "inputs": "f", "methods": ["m"]}]}
    with pytest.raises(ConfigError, match=r"inputs\.f\.split\.fold: 10 is not allowed: must be in 0 … n_folds − 1 = 0 … 9"):
        validate_config(base)
    base["inputs"]["f"]["split"]["fold"] = 3
    validate_config(base)
    base["methods"]["m"] = {"method": "sne"}
    with pytest.raises(ConfigError, match="'m' \\(sne\\) has no transform"):
        validate_config(base)
    base["methods"]["m"] = {"method": "pe"}
    validate_config(base)  # takes unlabelled samples


def test_embed_fits_semi_supervised_methods_on_every_row_without_test_labels(tmp_path):
    ds = _blobs(c=3, n=40)
    ds.save(tmp_path / "data.npz")
    inp = build_inputs(ds, {"split": {"n_folds": 4, "fold": 0}}, seed=0)
    inp.save(tmp_path / "inputs.npz")
    params = {"n_mixture": 3, "sigma_mixture": 2.0, "posterior_max_iter": 50, "max_iter": 200}
    args = ["embed", "--dataset", str(tmp_path / "data.npz"), "--inputs", str(tmp_path / "inputs.npz"),
            "--method", "pe", "--params", json.dumps(params)]
    assert main(args + ["--out", str(tmp_path / "a.npz")]) == 0
    # the same inputs with the test rows' labels scrambled give the same embedding: they are never read
    scrambled = Dataset(ds.X, np.where(inp.train, ds.labels, (ds.labels + 1) % 3), ds.label_names)
    scrambled.save(tmp_path / "data2.npz")
    args[2] = str(tmp_path / "data2.npz")
    assert main(args + ["--out", str(tmp_path / "b.npz")]) == 0
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        assert a["Z"].shape == (120, 2) and np.array_equal(a["Z"], b["Z"])
    assert main(["score", "--dataset", str(tmp_path / "data.npz"), "--inputs", str(tmp_path / "inputs.npz"),
                 "--embedding", str(tmp_path / "a.npz"), "--out", str(tmp_path / "s.json")]) == 0
    scores = json.loads((tmp_path / "s.json").read_text())
    with np.load(tmp_path / "a.npz") as a:
        assert scores["heldout_knn_error"] == pytest.approx(heldout_knn_error(a["Z"], ds.labels, inp.train))
    assert scores["n_test"] == 30


def test_one_shared_class_posterior_gives_the_embeddings_of_fitting_it_in_each_run(tmp_path, caplog):
    """The workflow fits the class posterior once per inputs block (``posterior`` step) and passes it to SNeRV
    and PE; their embeddings equal those of fitting it themselves, and a posterior fitted with other settings or
    on another fold is refused."""
    ds = _blobs(c=3, n=40)
    ds.save(tmp_path / "data.npz")
    for fold in (0, 1):
        build_inputs(ds, {"split": {"n_folds": 4, "fold": fold}}, seed=0).save(tmp_path / f"in{fold}.npz")
    mixture = {"n_mixture": 3, "sigma_mixture": 2.0, "posterior_max_iter": 50}
    runs = {"pe": {**mixture, "max_iter": 200}, "snerv": {**mixture, "anneal_rounds": 2, "cg_steps_final": 5}}
    settings = make_method("pe", runs["pe"], seed=0).class_posterior_settings()
    assert settings == make_method("snerv", runs["snerv"], seed=0).class_posterior_settings()
    for fold in (0, 1):
        assert main(["posterior", "--dataset", str(tmp_path / "data.npz"), "--inputs", str(tmp_path / f"in{fold}.npz"),
                     "--settings", json.dumps(settings), "--out", str(tmp_path / f"post{fold}.npz")]) == 0

    def embed(method, params, out, posterior=None, status=0):
        args = ["embed", "--dataset", str(tmp_path / "data.npz"), "--inputs", str(tmp_path / "in0.npz"),
                "--method", method, "--params", json.dumps(params), "--out", str(tmp_path / out)]
        caplog.clear()
        assert main(args + (["--posterior", str(tmp_path / posterior)] if posterior else [])) == status
        if status:  # refused: one line, the file not written
            assert not (tmp_path / out).exists()
            return caplog.text
        with np.load(tmp_path / out) as f:
            return f["Z"]

    for method, params in runs.items():
        own = embed(method, params, f"{method}_own.npz")
        shared = embed(method, params, f"{method}_shared.npz", "post0.npz")
        assert own.shape == (120, 2) and np.array_equal(own, shared)
    assert re.search("fitted with .* asks for", embed("pe", {**runs["pe"], "n_mixture": 4}, "x.npz", "post0.npz", 1))
    assert "other training rows" in embed("pe", runs["pe"], "x.npz", "post1.npz", 1)
    assert "does not use a class posterior" in embed("mre", {}, "x.npz", "post0.npz", 1)


# --------------------------------------------------------------------------------------------- held-out 5-NN error

def test_heldout_knn_error_matches_scikit_learn():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 2))
    y = (Z[:, 0] + 0.7 * rng.normal(size=200) > 0).astype(int) + 2 * (rng.random(200) < 0.2)
    train = rng.random(200) < 0.7
    knn = KNeighborsClassifier(n_neighbors=5).fit(Z[train], y[train])
    expected = np.mean(knn.predict(Z[~train]) != y[~train])
    assert heldout_knn_error(Z, y, train, 5) == pytest.approx(expected)
    assert 0 < expected < 1  # neither all right nor all wrong
    with pytest.raises(ValueError, match="one test row"):
        heldout_knn_error(Z, y, np.ones(200, dtype=bool))


# --------------------------------------------------------------------------------------------- PE

def test_pe_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    n, C, d = 7, 4, 2
    P = rng.dirichlet(np.ones(C), size=n)
    log_prior = np.log(rng.dirichlet(np.ones(C)))
    Y, Phi = rng.normal(size=(n, d)), rng.normal(size=(C, d))
    _, gY, gPhi = pe_cost_and_grad(Y, Phi, P, log_prior)
    h = 1e-6
    for A, g in ((Y, gY), (Phi, gPhi)):
        num = np.zeros_like(A)
        for idx in np.ndindex(A.shape):
            old = A[idx]
            A[idx] = old + h
            up = pe_cost_and_grad(Y, Phi, P, log_prior)[0]
            A[idx] = old - h
            down = pe_cost_and_grad(Y, Phi, P, log_prior)[0]
            A[idx] = old
            num[idx] = (up - down) / (2 * h)
        assert np.allclose(num, g, atol=1e-7, rtol=1e-6)


def test_pe_recovers_a_posterior_it_can_represent():
    """Posteriors generated by the model itself are a stationary point with E = 0, and the fit reaches E ~ 0."""
    rng = np.random.default_rng(2)
    Y, Phi = rng.normal(scale=1.5, size=(40, 2)), rng.normal(scale=2.0, size=(3, 2))
    logits = -0.5 * ((Y[:, None, :] - Phi[None]) ** 2).sum(-1)
    P = np.exp(logits - logits.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    # with p(c) = the mean posterior the generating Y, Phi are exact only for a uniform prior: fold it in
    log_prior = np.log(P.mean(0))
    shifted = logits - log_prior
    P2 = np.exp(shifted - shifted.max(1, keepdims=True))
    P2 /= P2.sum(1, keepdims=True)
    cost, gY, gPhi = pe_cost_and_grad(Y, Phi, P, np.zeros(3))
    assert cost == pytest.approx(0.0, abs=1e-12) and np.abs(gY).max() < 1e-12 and np.abs(gPhi).max() < 1e-12
    fitted = ParametricEmbedding(max_iter=2000, tol=1e-9, random_state=0).fit_posteriors(P2)
    assert fitted.cost_ < 1e-5 * 40
    with pytest.raises(ValueError, match="rows summing to 1"):
        ParametricEmbedding().fit_posteriors(P[:, :2])


def test_pe_separates_classes_and_is_seeded():
    ds = _blobs(c=3, n=30, d=5)
    inp = Inputs(X=ds.X, labels=ds.labels, label_names=ds.label_names)
    params = {"n_mixture": 3, "sigma_mixture": 2.0, "posterior_max_iter": 50}
    a = make_method("pe", params, seed=4).fit_transform(inp)
    b = make_method("pe", params, seed=4).fit_transform(inp)
    assert np.array_equal(a, b)
    from cova.metrics.retrieval import knn_error

    assert knn_error(a, ds.labels) < 0.05
    assert METHODS["pe"] is ParametricEmbedding


# --------------------------------------------------------------------------------------------- S-Isomap

def test_supervised_dissimilarity_equals_the_formula_pair_by_pair():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(12, 3)), rng.integers(0, 3, 12)
    D = supervised_dissimilarity(X, y, alpha=0.3)
    pairs = [(i, j) for i in range(12) for j in range(i + 1, 12)]
    beta = np.mean([np.linalg.norm(X[i] - X[j]) for i, j in pairs])
    for i, j in pairs:
        d2 = np.sum((X[i] - X[j]) ** 2)
        want = np.sqrt(1 - np.exp(-d2 / beta)) if y[i] == y[j] else np.sqrt(np.exp(d2 / beta)) - 0.3
        assert D[i, j] == pytest.approx(want) and D[j, i] == pytest.approx(want)
    assert np.all(np.diag(D) == 0)


def test_s_isomap_separates_classes_better_than_isomap_and_maps_new_points():
    ds = _blobs(c=3, n=40, d=5, spread=1.2, seed=5)
    train = stratified_fold(ds.labels, 4, 0, seed=0)
    fit_on = Inputs(X=ds.X[train], labels=ds.labels[train], label_names=ds.label_names)
    est = SupervisedIsomap(n_neighbors=8).fit(fit_on)
    plain = make_method("isomap", {"n_neighbors": 8}).fit_transform(fit_on)
    from cova.metrics.retrieval import knn_error

    assert knn_error(est.embedding_, fit_on.labels) < knn_error(plain, fit_on.labels) - 0.1
    # the regression network: a new point lands at the kernel-weighted mean of the training places; with a tiny
    # width, at its nearest training point
    new = ds.X[~train]
    w = np.exp(-((new[:, None] - fit_on.X[None]) ** 2).sum(-1) / (2 * est.kernel_width_ ** 2))
    assert np.allclose(est.transform(new), (w @ est.embedding_) / w.sum(1, keepdims=True))
    est.kernel_width_ = 1e-3
    nearest = np.argmin(((new[:, None] - fit_on.X[None]) ** 2).sum(-1), axis=1)
    assert np.allclose(est.transform(new), est.embedding_[nearest])


# --------------------------------------------------------------------------------------------- MRE

def test_mre_gradient_matches_finite_differences_in_y_and_the_class_scales():
    from cova.methods.sne.mre import class_relation, mre_cost_and_grad

    rng = np.random.default_rng(6)
    l, k = 9, 2
    P = rng.random((l, l))
    np.fill_diagonal(P, 0)
    P /= P.sum(1, keepdims=True)
    labelled = np.array([1, 1, 0, 1, 1, 0, 1, 1, 1], dtype=bool)
    Pc = class_relation(rng.integers(0, 2, labelled.sum()))
    Y, r = rng.normal(size=(l, k)), np.array([0.7, 1.6])
    _, gY, gr = mre_cost_and_grad(Y.copy(), r, P, Pc, labelled)
    h = 1e-6

    def cost(Y_, r_):
        return mre_cost_and_grad(Y_, r_, P, Pc, labelled)[0]

    num = np.zeros_like(Y)
    for idx in np.ndindex(Y.shape):
        e = np.zeros_like(Y)
        e[idx] = h
        num[idx] = (cost(Y + e, r) - cost(Y - e, r)) / (2 * h)
    assert np.allclose(num, gY, atol=1e-6, rtol=1e-5)
    num_r = [(cost(Y, r + h * np.eye(k)[a]) - cost(Y, r - h * np.eye(k)[a])) / (2 * h) for a in range(k)]
    assert np.allclose(num_r, gr, atol=1e-6, rtol=1e-5)


def test_class_relation_rows_and_mre_ignores_hidden_labels():
    from cova.methods.sne.mre import class_relation

    P = class_relation(np.array([0, 0, 1, 1, 1, 2]))
    assert np.allclose(P[0], [0, 1, 0, 0, 0, 0]) and np.allclose(P[2], [0, 0, 0, 0.5, 0.5, 0])
    assert np.all(P[5] == 0)  # a class of one: no neighbours
    ds = _blobs(c=3, n=30, d=5)
    train = stratified_fold(ds.labels, 3, 0, seed=0)
    params = {"perplexity": 10, "max_iter": 60}
    a = make_method("mre", params).fit_transform(Inputs(X=ds.X, labels=np.where(train, ds.labels, -1),
                                                        labelled=train))
    b = make_method("mre", params).fit_transform(Inputs(X=ds.X, labels=np.where(train, ds.labels, 0),
                                                        labelled=train))
    assert np.array_equal(a, b)
    from cova.metrics.retrieval import knn_error

    assert knn_error(a, ds.labels) < 0.1


# --------------------------------------------------------------------------------------------- renderer

def test_cv_error_table_and_paired_t_test(tmp_path):
    from scipy.stats import ttest_rel

    from cova.experiments.registry import render

    ds = _blobs(c=3, n=20)
    ds.save(tmp_path / "data.npz")
    rng = np.random.default_rng(8)
    errors = {"a": rng.uniform(0.1, 0.2, 4), "b": rng.uniform(0.15, 0.3, 4), "c": rng.uniform(0.3, 0.4, 4)}
    runs = []
    for f in range(4):
        build_inputs(ds, {"split": {"n_folds": 4, "fold": f}}, seed=0).save(tmp_path / f"in{f}.npz")
        for entry, e in errors.items():
            (tmp_path / f"{entry}{f}.json").write_text(json.dumps({"heldout_knn_error": e[f], "status": "ok"}))
            runs.append({"dataset": "blobs", "inputs": f"cv_f{f}", "entry": entry, "group": entry, "method": "pe",
                         "data": str(tmp_path / "data.npz"), "inputs_file": str(tmp_path / f"in{f}.npz"),
                         "scores": str(tmp_path / f"{entry}{f}.json")})
    out = {k: str(tmp_path / f"out.{k}") for k in ("png", "csv", "html")}
    render({"name": "t", "paper": "nerv", "renderer": "cv_error", "runs": runs}, out)
    import pandas as pd

    per_fold = pd.read_csv(out["csv"])
    assert len(per_fold) == 12 and set(per_fold["inputs"]) == {f"cv_f{f}" for f in range(4)}
    for entry, e in errors.items():
        np.testing.assert_allclose(per_fold[per_fold.method_entry == entry].sort_values("fold")["error"], e, atol=1e-6)
    table = per_fold.drop_duplicates("method_entry").set_index("method_entry")
    for entry, e in errors.items():
        assert table.loc[entry, "mean_error"] == pytest.approx(e.mean(), abs=1e-6)  # the CSV keeps 6 decimals
        assert table.loc[entry, "std_error"] == pytest.approx(e.std(ddof=1), abs=1e-6)
    assert list(table["rank"]) == [1, 2, 3]
    assert table.loc["a", "versus"] == "b"
    assert table.loc["a", "p_value"] == pytest.approx(ttest_rel(errors["a"], errors["b"]).pvalue, rel=1e-4)
    assert not table["significant_winner"].any()  # a beats b by p = 0.12 over the 4 folds: not significant
    assert (tmp_path / "out.png").stat().st_size > 10_000
    runs[0] = dict(runs[0], inputs_file=str(tmp_path / "plain.npz"))
    build_inputs(ds, {}, seed=0).save(tmp_path / "plain.npz")
    with pytest.raises(ValueError, match="hold out no fold"):
        render({"name": "t", "paper": "nerv", "renderer": "cv_error", "runs": runs}, out)


def test_cv_error_marks_the_significant_winners_of_table_3(tmp_path):
    """``significant_winner``: true on the rows of a data set's best entry when its paired t-test against the second
    rejects at 5 % (the paper's boldfaced Table 3 winners), false on every other row and where the test does not
    reject or cannot run (identical differences)."""
    from cova.experiments.registry import render

    ds = _blobs(c=3, n=20)
    ds.save(tmp_path / "data.npz")
    rng = np.random.default_rng(3)
    b = rng.uniform(0.2, 0.3, 5)
    errors = {"clear": {"a": b - 0.1 + rng.normal(0, 0.005, 5), "b": b},  # a significantly better
              "close": {"a": b - 0.01 * np.array([1, -1, 1, -1, 1]), "b": b},  # a better on average, p = 0.70
              "even": {"a": b - 0.05, "b": b}}  # every difference the same: no test, no winner
    runs = []
    for f in range(5):
        build_inputs(ds, {"split": {"n_folds": 5, "fold": f}}, seed=0).save(tmp_path / f"in{f}.npz")
        for dataset, entries in errors.items():
            for entry, e in entries.items():
                (tmp_path / f"{dataset}{entry}{f}.json").write_text(json.dumps({"heldout_knn_error": e[f],
                                                                                  "status": "ok"}))
                runs.append({"dataset": dataset, "inputs": f"cv_f{f}", "entry": entry, "group": entry,
                             "method": "pe", "data": str(tmp_path / "data.npz"),
                             "inputs_file": str(tmp_path / f"in{f}.npz"),
                             "scores": str(tmp_path / f"{dataset}{entry}{f}.json")})
    out = {k: str(tmp_path / f"out.{k}") for k in ("png", "csv", "html")}
    render({"name": "t", "paper": "nerv", "renderer": "cv_error", "runs": runs}, out)
    import pandas as pd

    table = pd.read_csv(out["csv"]).drop_duplicates(["dataset", "method_entry"]).set_index(["dataset", "method_entry"])
    assert table.loc[("clear", "a"), "p_value"] < 0.05 and table.loc[("close", "a"), "p_value"] > 0.05
    assert table["significant_winner"].to_dict() == {("clear", "a"): True, ("clear", "b"): False,
                                                    ("close", "a"): False, ("close", "b"): False,
                                                    ("even", "a"): False, ("even", "b"): False}
