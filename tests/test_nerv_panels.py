"""The NeRV Figs. 4-7 / Table 2 renderer (cova.experiments.nerv.panels) and the MDS baseline."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from cova.config import Plan
from cova.constraints import option_defaults
from cova.datasets.base import Dataset
from cova.embedding import Embedding
from cova.experiments.nerv.panels import label_of, nerv_panels, select_by_f, table2
from cova.experiments.nerv.retrieval import retrieval
from cova.experiments.reference import REFERENCE
from cova.experiments.registry import RENDERERS, render
from cova.inputs import Inputs
from cova.io import save_npz_atomic
from cova.methods import make_method
from cova.metrics.retrieval import f_measure, nerv_measures
from cova.metrics.score import score_run


def _blobs(n: int = 80, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 5)) + 1.5 * y[:, None]
    return X, y


def test_knn5_error_equals_brute_force_leave_one_out_sklearn():
    from sklearn.neighbors import KNeighborsClassifier

    X, y = _blobs(60, seed=1)
    Z = np.random.default_rng(2).normal(size=(60, 2)) + 0.8 * y[:, None]  # continuous: no distance ties
    wrong = 0
    for i in range(len(y)):  # two classes and 5 votes: no vote ties, so the tie rules cannot differ
        keep = np.arange(len(y)) != i
        clf = KNeighborsClassifier(n_neighbors=5, algorithm="brute").fit(Z[keep], y[keep])
        wrong += int(clf.predict(Z[i:i + 1])[0] != y[i])
    m, _ = nerv_measures(X, Z, y, k_max=25)
    assert m["knn5_error"] == pytest.approx(wrong / len(y), abs=0)
    assert 0 < m["knn5_error"] < 0.5


def test_identity_display_is_perfect_on_every_measure():
    X, y = _blobs(70)
    Z = X[:, :2].copy()
    m, curves = nerv_measures(Z, Z, y, k_max=30)
    assert m["trustworthiness_20"] == pytest.approx(1.0)
    assert m["continuity_20"] == pytest.approx(1.0)
    assert m["rank_precision_error"] == pytest.approx(0.0, abs=1e-12)
    assert m["rank_recall_error"] == pytest.approx(0.0, abs=1e-12)
    assert m["smoothed_precision_error"] == pytest.approx(0.0, abs=1e-9)
    assert m["smoothed_recall_error"] == pytest.approx(0.0, abs=1e-9)
    assert m["precision_20"] == pytest.approx(1.0) and m["recall_20"] == pytest.approx(1.0)
    assert len(curves["t_curve"]) == 30 and curves["pr_k"][-1] == 69
    # a random display is worse on all of them
    r, _ = nerv_measures(Z, np.random.default_rng(0).normal(size=Z.shape), y, k_max=30)
    f = f_measure(1 - m["rank_precision_error"], 1 - m["rank_recall_error"])
    assert r["trustworthiness_20"] < 0.8 and f_measure(1 - r["rank_precision_error"], 1 - r["rank_recall_error"]) < f
    assert r["precision_20"] < 0.5
    assert r["smoothed_precision_error"] > 0.1 and r["pr_auc"] < m["pr_auc"]


def test_plan_names_the_method_entry_of_every_grid_run():
    methods = {"nerv_lam": {"method": "nerv", "grid": {"lam": [0.1, 0.5]}},
               "my-entry": {"method": "isomap", "grid": {"n_neighbors": [5]}},
               "eig": {"method": "eigen_cova", "grid": {"alpha": [0.5], "eta": [0.9]}},
               "tsne": {"method": "tsne"}}
    plan = Plan({"seed": 0, "datasets": {"d": {"loader": "sinusoid"}}, "inputs": {"i": {}}, "methods": methods,
                 "runs": [], "paper": {"experiments": {"x": {"paper": "nerv", "renderer": "nerv_panels", "runs": [
                     {"dataset": "d", "inputs": "i", "methods": list(methods)}]}}}})
    groups = {r["entry"]: r["group"] for r in plan.experiment_spec("x")["runs"]}
    assert groups == {"nerv_lam-lam0.1": "nerv_lam", "nerv_lam-lam0.5": "nerv_lam",
                      "my-entry-n_neighbors5": "my-entry", "eig-alpha0.5-eta0.9": "eig", "tsne": "tsne"}


def test_select_by_f_picks_the_largest_f_per_dataset_and_entry():
    t = pd.DataFrame({"dataset": ["a", "a", "a", "b", "b", "a"],
                      "group": ["nerv", "nerv", "nerv", "nerv", "nerv", "pca"],
                      "rank_f": [0.5, 0.9, np.nan, np.nan, np.nan, 0.1]})
    assert select_by_f(t).tolist() == [False, True, False, False, False, True]


def test_restarts_keep_the_best_f_per_data_set_entry_and_grid_value():
    """NeRV Sec. 4.3.2's "5 random restarts, keep the best by F": runs differing only in random_state compete; the
    F-selection then runs on the kept ones, and entries without restarts are untouched."""
    from cova.experiments.nerv.panels import keep_best_restart

    t = pd.DataFrame({"dataset": ["a"] * 6 + ["a"], "group": ["nerv"] * 6 + ["pca"],
                      "lam": [0.1, 0.1, 0.1, 0.5, 0.5, 0.5, np.nan],
                      "random_state": [0, 1, 2, 0, 1, 2, np.nan],
                      "rank_f": [0.4, 0.6, 0.5, 0.7, np.nan, 0.65, 0.3]})
    assert keep_best_restart(t).tolist() == [False, True, False, True, False, False, True]
    assert keep_best_restart(t.drop(columns="random_state")).all()


def test_label_of_shows_grid_values():
    assert label_of({"method": "nerv", "lam": 0.3}, ["lam"]) == "NeRV λ = 0.3"
    assert label_of({"method": "isomap", "lam": np.nan, "n_neighbors": 10.0}, ["lam", "n_neighbors"]) == "Isomap k = 10"
    assert label_of({"method": "pca"}, ["lam"]) == "PCA"


def test_table2_uses_selected_runs_and_the_papers_numbers():
    t = pd.DataFrame({"dataset": ["d1", "d1", "d1", "d2", "d2"],
                      "group": ["nerv_lam", "nerv_lam", "pca", "nerv_lam", "pca"],
                      "method": ["nerv", "nerv", "pca", "nerv", "pca"], "knn5_error": [0.3, 0.2, 0.5, 0.1, 0.6],
                      "selected": [False, True, True, True, True]})
    t2 = table2(t, "nerv_table2").set_index("entry")
    assert t2.loc["nerv_lam", "d1"] == 0.2 and t2.loc["nerv_lam", "d2"] == 0.1 and t2.loc["pca", "d1"] == 0.5
    ref = REFERENCE["nerv_table2"]["rows"]
    assert t2.loc["nerv_lam", "paper: phoneme"] == ref[("phoneme", "nerv")]["knn5_error"] == 0.079
    assert t2.loc["nerv_lam", "paper: faces"] == 0.394
    assert np.isnan(t2.loc["pca", "paper: letter"])  # PCA is not in the paper's Table 2
    # paper rows without a method of ours are listed, with empty columns of ours
    assert t2.loc["paper:MVU", "paper: letter"] == 0.763 and np.isnan(t2.loc["paper:MVU", "d1"])
    assert t2.loc["paper:cda", "method"] == "CDA" and t2.loc["paper:cda", "paper: letter"] == 0.336
    assert t2.loc["paper:lle", "method"] == "LLE" and np.isnan(t2.loc["paper:lle", "paper: letter"])
    # our lmds is the paper's LocalMDS row: matched, not appended as a paper-only row
    t = pd.concat([t, pd.DataFrame({"dataset": ["d1"], "group": ["lmds_lam"], "method": ["lmds"],
                                    "knn5_error": [0.4], "selected": [True]})], ignore_index=True)
    t2 = table2(t, "nerv_table2").set_index("entry")
    assert t2.loc["lmds_lam", "paper_row"] == "LocalMDS" and t2.loc["lmds_lam", "d1"] == 0.4
    assert t2.loc["lmds_lam", "paper: letter"] == 0.499 and t2.loc["lmds_lam", "paper: timit"] == 0.637
    assert not any(e.startswith("paper:") and "mds" in e.lower() and e != "paper:mds" for e in t2.index)
    # our cca / cda are the paper's CCA / CDA rows
    t = pd.concat([t, pd.DataFrame({"dataset": ["d1", "d1"], "group": ["cca", "cda_k"], "method": ["cca", "cda"],
                                    "knn5_error": [0.45, 0.35], "selected": [True, True]})], ignore_index=True)
    t2 = table2(t, "nerv_table2").set_index("entry")
    assert t2.loc["cda_k", "paper_row"] == "CDA" and t2.loc["cda_k", "paper: letter"] == 0.336
    assert t2.loc["cca", "paper_row"] == "CCA" and t2.loc["cca", "paper: phoneme"] == 0.098
    assert "paper:cda" not in t2.index and "paper:cca" not in t2.index


def test_mds_is_metric_smacof_and_size_guarded():
    X, y = _blobs(40)
    inp = Inputs(X=X)
    Z = make_method("mds", {}, seed=0).fit_transform(inp)
    from scipy.spatial.distance import pdist

    D, d = pdist(X), pdist(Z)
    stress = make_method("mds", {}, seed=0).fit(inp).stress_
    assert Z.shape == (40, 2) and stress == pytest.approx(float(np.sum((D - d) ** 2)), rel=1e-3)  # pairs i < j
    # SMACOF from the classical-MDS start never increases the raw stress of that start (PCA here)
    from sklearn.decomposition import PCA

    P = PCA(2).fit_transform(X)
    assert np.sum((D - d) ** 2) <= np.sum((D - pdist(P)) ** 2) + 1e-9
    with pytest.raises(ValueError, match="max_samples"):
        make_method("mds", {"max_samples": 10}).fit(inp)


def _write_run(tmp, name, Z, renderer, options, status="ok"):
    """A run's embedding, and its scores and per-point measures as the score step writes them, with the NeRV
    settings the renderer's declaration asks the plan for."""
    path = tmp / f"{name}.npz"
    Embedding(Z=Z, placed_prototypes=np.zeros((0, 2)), runtime_s=0.5, status=status).save(path)
    fn = RENDERERS[renderer]
    needs = fn._run_metrics({**option_defaults(fn), **options})
    per_point: dict = {}
    scores = {}
    if status == "ok" and np.all(np.isfinite(Z)):  # the renderers read no measure of a run without a display
        scores = score_run(Inputs.load(tmp / "d.npz", tmp / "i.npz"), Embedding.load(path),
                           measures=needs["measures"], nerv=needs["settings"]["nerv"], per_point=per_point)
    (tmp / f"{name}.json").write_text(json.dumps({"status": status, **scores}))
    save_npz_atomic(tmp / f"{name}.pp.npz", **per_point)
    return {"embedding": str(path), "scores": str(tmp / f"{name}.json"), "per_point": str(tmp / f"{name}.pp.npz")}


def test_renderer_end_to_end(tmp_path):
    assert RENDERERS["nerv_panels"] is nerv_panels
    X, y = _blobs(60)
    X = X[:, :2]  # the "good" display below is the data itself
    Dataset(X, y, ["a", "b"]).save(tmp_path / "d.npz")
    Inputs(X=X, labels=y, label_names=["a", "b"], W=sp.identity(60, format="csr"), R=np.zeros((60, 2)),
           prototypes=np.zeros((2, 2))).save(tmp_path / "i.npz")
    rng = np.random.default_rng(0)
    good, bad = X[:, :2], rng.normal(size=(60, 2))
    runs = []
    for entry, method, grid, Z, status in [("nerv_lam-lam0.1", "nerv", {"lam": 0.1}, bad, "ok"),
                                           ("nerv_lam-lam0.5", "nerv", {"lam": 0.5}, good, "ok"),
                                           ("nerv_lam-lam1.0", "nerv", {"lam": 1.0}, np.full((60, 2), np.nan), "ok"),
                                           ("pca", "pca", {}, good + 0.1 * bad, "ok"),
                                           ("eig", "eigen_cova", {}, np.zeros((60, 2)), "degenerate")]:
        runs.append({"dataset": "toy", "inputs": "x", "entry": entry, "group": entry.split("-")[0], "method": method,
                     "grid": grid,
                     "data": str(tmp_path / "d.npz"), "inputs_file": str(tmp_path / "i.npz"),
                     **_write_run(tmp_path, entry, Z, "nerv_panels", {"k_max": 25}, status)})
    spec = {"name": "t", "paper": "nerv", "renderer": "nerv_panels", "reference": "nerv_table2", "k_max": 25,
            "caption": "The paper's data sets are not available.", "notes": "NeRV wins.", "runs": runs}
    out = {k: str(tmp_path / f"o.{k}") for k in ("png", "csv", "html")}
    render(spec, out)
    table = pd.read_csv(out["csv"])
    assert table.method_entry.tolist() == [r["entry"] for r in runs]
    assert table.selected.tolist() == [False, True, False, True, False]  # λ = 0.5 (good display) wins by F
    assert table.loc[2, ["rank_f", "knn5_error"]].isna().all() and table.loc[4, "status"] == "degenerate"
    assert table.loc[1, "trustworthiness_20"] == pytest.approx(1.0)
    page = open(out["html"], encoding="utf-8").read()
    assert "not available" in page and "NeRV wins." in page and "paper: letter" in page and "Table 2" in page
    assert open(out["png"], "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_panel_runs_are_the_papers_curves_and_every_other_entrys_f_selected_run(tmp_path):
    """``panel_run``: the runs the paper's Figs. 4, 6-8 draw: every λ of NeRV and local MDS (its curves) and the
    F-selected run of every other entry (here the Laplacian eigenmap's better k), so a claim can compare each
    method's best panel run ("NeRV's curve beats the other methods' points")."""
    X, y = _blobs(60)
    X = X[:, :2]
    Dataset(X, y, ["a", "b"]).save(tmp_path / "d.npz")
    Inputs(X=X, labels=y, label_names=["a", "b"], W=sp.identity(60, format="csr"), R=np.zeros((60, 2)),
           prototypes=np.zeros((2, 2))).save(tmp_path / "i.npz")
    good, bad = X, np.random.default_rng(0).normal(size=(60, 2))
    runs = []
    for entry, method, grid, Z in [("nerv_lam-lam0.0", "nerv", {"lam": 0.0}, bad),
                                   ("nerv_lam-lam1.0", "nerv", {"lam": 1.0}, good),
                                   ("lmds_lam-lam0.0", "lmds", {"lam": 0.0}, bad),
                                   ("lmds_lam-lam0.9", "lmds", {"lam": 0.9}, good),
                                   ("le_k-n_neighbors10", "laplacian_eigenmaps", {"n_neighbors": 10}, bad),
                                   ("le_k-n_neighbors20", "laplacian_eigenmaps", {"n_neighbors": 20}, good),
                                   ("pca", "pca", {}, bad)]:
        runs.append({"dataset": "toy", "inputs": "x", "entry": entry, "group": entry.split("-")[0], "method": method,
                     "grid": grid, "data": str(tmp_path / "d.npz"), "inputs_file": str(tmp_path / "i.npz"),
                     **_write_run(tmp_path, entry, Z, "nerv_panels", {"k_max": 25})})
    out = {k: str(tmp_path / f"o.{k}") for k in ("png", "csv", "html")}
    render({"name": "t", "paper": "nerv", "renderer": "nerv_panels", "reference": None, "k_max": 25, "runs": runs},
           out)
    table = pd.read_csv(out["csv"])
    assert table.selected.tolist() == [False, True, False, True, False, True, True]
    assert table.panel_run.tolist() == [True, True, True, True, False, True, True]
    assert "panel_run=" not in open(out["html"], encoding="utf-8").read()  # a flag, not a grid value of the labels


def test_retrieval_renderer_adds_the_precision_recall_curve_of_fig_2(tmp_path):
    """``pr_relevant: r``: mean precision-recall curves for r relevant neighbours; at k = r precision = recall,
    1 for the data itself and lower for a noisy display."""
    assert RENDERERS["retrieval"] is retrieval
    X, y = _blobs(60)
    X = X[:, :2]
    Dataset(X, y, ["a", "b"]).save(tmp_path / "d.npz")
    Inputs(X=X, labels=y, label_names=["a", "b"], W=sp.identity(60, format="csr"), R=np.zeros((60, 2)),
           prototypes=np.zeros((2, 2))).save(tmp_path / "i.npz")
    noisy = X + np.random.default_rng(1).normal(0, 1.0, X.shape)
    runs = [{"dataset": "toy", "inputs": "x", "entry": e, "group": e, "method": "pca", "grid": {},
             "data": str(tmp_path / "d.npz"), "inputs_file": str(tmp_path / "i.npz"),
             **_write_run(tmp_path, e, Z, "retrieval", {"pr_relevant": 10, "joint": True})}
            for e, Z in [("same", X), ("noisy", noisy)]]
    out = {k: str(tmp_path / f"r.{k}") for k in ("png", "csv", "html")}
    render({"name": "fig2", "renderer": "retrieval", "pr_relevant": 10, "joint": True, "notes": "A trade-off.",
               "runs": runs}, out)
    table = pd.read_csv(out["csv"]).set_index("method_entry")
    # Fig. 9E's joint measures: the same as the metric called directly, and worse for the noisy display
    from cova.metrics.retrieval import joint_smoothed_precision_recall
    jp = joint_smoothed_precision_recall(X, noisy)
    assert table.loc["noisy", "joint_smoothed_precision_error"] == pytest.approx(jp.precision)
    assert table.loc["noisy", "joint_smoothed_recall_error"] == pytest.approx(jp.recall)
    assert table.loc["same", "precision_recall_at_r"] == pytest.approx(1.0)
    assert table.loc["noisy", "precision_recall_at_r"] < 0.9
    # the curves' ends: k = 1 and the last k retrieved (r = 20: k = 100, here n - 1 = 59; r = 10: k = 2r = 20)
    from cova.metrics.retrieval import precision_recall_curve
    curve = precision_recall_curve(X, noisy, 20, 59)
    assert table.loc["noisy", ["pr_precision_left", "pr_precision_right"]].tolist() == pytest.approx(
        [curve.precision[0], curve.precision[-1]])
    assert table.loc["same", ["pr_precision_left", "pr_r_precision_left", "pr_r_precision_right"]].tolist() == \
        pytest.approx([1.0, 1.0, 0.5])  # every one of the 10 relevant neighbours among the 20 retrieved
    assert table.loc["noisy", "pr_r_precision_left"] < 1.0 and table.loc["noisy", "pr_r_precision_right"] < 0.5
    assert "10 relevant" in open(out["html"], encoding="utf-8").read()
    assert open(out["png"], "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_the_plan_asks_the_score_step_for_what_the_renderers_draw():
    """A NeRV renderer's declaration tells the plan which measures its runs' scores must hold: the runs of a
    `retrieval` and a `nerv_panels` experiment get the group `nerv` with the largest k and any joint measure of
    the two; a run two experiments ask for different relevant-set sizes is refused, naming the experiment."""
    from cova.config import ConfigError

    config = {"seed": 0, "datasets": {"s": {"loader": "sinusoid", "params": {"n_samples": 60}}},
              "inputs": {"x": {}}, "methods": {"pca": {"method": "pca"}, "mds": {"method": "mds"}},
              "runs": [{"dataset": "s", "inputs": "x", "methods": ["pca", "mds"]}],
              "paper": {"experiments": {
                  "a": {"paper": "nerv", "renderer": "retrieval", "k_max": 20, "joint": True, "pr_relevant": 10,
                        "runs": [{"dataset": "s", "inputs": "x", "methods": ["pca"]}]},
                  "b": {"paper": "nerv", "renderer": "nerv_panels", "k_max": 30,
                        "runs": [{"dataset": "s", "inputs": "x", "methods": ["pca", "mds"]}]}}}}
    plan = Plan(config)
    settings = {}
    for dataset, inputs, entry in plan.runs():
        job = plan.method_jobs[entry]
        settings[entry] = plan.run_metrics(dataset, plan.inputs_ids[inputs], job.method, job.params_id)
    assert settings["pca"]["measures"] == ["nerv"] and settings["mds"]["measures"] == ["nerv"]
    assert settings["pca"]["nerv"] == {"k_max": 30, "joint": True, "pr_relevant": 10, "pr_k_max": 20,
                                       "space": "inputs"}
    assert settings["mds"]["nerv"] == {"k_max": 30, "space": "inputs"}
    config["paper"]["experiments"]["c"] = {"paper": "nerv", "renderer": "retrieval", "pr_relevant": 15,
                                           "runs": [{"dataset": "s", "inputs": "x", "methods": ["pca"]}]}
    with pytest.raises(ConfigError, match=r"config key paper\.experiments\.c: asks for pr_relevant = 15 in the "
                                          r"scores of run 'pca', which another experiment asks for with "
                                          r"pr_relevant = 10"):
        Plan(config)
