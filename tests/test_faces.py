"""The rendered faces of the NeRV Fig. 8 analogue (cova.datasets.faces), the datasets' ground-truth coordinates
and the measures taken against them (renderer nerv_panels with ``measure_space: ground_truth``), and the image
thumbnails of scatter_grid."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from cova.cli import main
from cova.config import ConfigError, validate_config
from cova.datasets import GROUND_TRUTH_LOADERS, load
from cova.datasets.base import Dataset
from cova.datasets.faces import LATENT_RANGES, render_head
from cova.embedding import Embedding
from cova.experiments.registry import render
from cova.inputs import Inputs
from cova.io import save_npz_atomic
from cova.metrics.retrieval import f_measure, nerv_measures
from cova.metrics.score import score_run
from cova.viz.panels import spread_points


def test_a_mirrored_pose_and_light_give_the_mirrored_image():
    """The head is left-right symmetric and the pixel grid is centred, so turning the head and the light the other
    way (yaw → −yaw, light → −light) mirrors the image: a check of the rotation, the ray casting and the shading."""
    one = render_head(40.0, 7.0, -30.0, size=48)
    two = render_head(-40.0, 7.0, 30.0, size=48)
    differ = ~np.isclose(one, two[:, ::-1], atol=1e-9)
    assert differ.mean() < 0.005  # at most a few silhouette pixels, hit or missed by rounding
    assert not np.allclose(one, one[:, ::-1], atol=1e-3)  # and the image itself is not symmetric


def test_the_light_side_is_brighter_and_the_background_is_dark():
    left = render_head(0.0, 0.0, -70.0, size=48)
    right = render_head(0.0, 0.0, 70.0, size=48)
    assert right[:, 24:].mean() > 2 * right[:, :24].mean()
    assert left[:, :24].mean() > 2 * left[:, 24:].mean()
    assert left[0, 0] == 0.0 and 0.0 <= left.min() and left.max() <= 1.0


def test_faces_lie_on_their_known_manifold():
    """The images are a smooth function of the latent coordinates: a point's nearest image is near it in (pose,
    lighting) space, far nearer than a random point."""
    data = load("sculpt_faces", n_samples=200, image_size=20, random_state=1)
    X, T = data.X, data.ground_truth
    D = (X * X).sum(1)[:, None] + (X * X).sum(1)[None, :] - 2.0 * X @ X.T
    np.fill_diagonal(D, np.inf)
    nearest = np.linalg.norm(T - T[D.argmin(axis=1)], axis=1)
    random = np.linalg.norm(T - T[np.random.default_rng(0).permutation(200)], axis=1)
    assert np.median(nearest) < 0.3 * np.median(random)


def test_dataset_shape_ranges_determinism_and_file_round_trip(tmp_path):
    data = load("sculpt_faces", n_samples=40, image_size=16, random_state=3)
    assert data.X.shape == (40, 256) and data.ground_truth.shape == (40, 3)
    for j, (lo, hi) in enumerate(LATENT_RANGES.values()):
        assert lo <= data.ground_truth[:, j].min() and data.ground_truth[:, j].max() <= hi
    assert data.meta["ground_truth_names"] == ["yaw", "pitch", "light"] and data.meta["image_shape"] == [16, 16]
    assert set(np.unique(data.labels)) <= set(range(8))
    again = load("sculpt_faces", n_samples=40, image_size=16, random_state=3)
    assert np.array_equal(data.X, again.X) and np.array_equal(data.ground_truth, again.ground_truth)
    data.save(tmp_path / "d.npz")
    back = Dataset.load(tmp_path / "d.npz")
    assert np.array_equal(back.ground_truth, data.ground_truth)
    assert Dataset.load(_plain(tmp_path)).ground_truth is None
    assert "sculpt_faces" in GROUND_TRUTH_LOADERS


def _plain(tmp_path):
    Dataset(np.zeros((3, 2)), np.zeros(3, dtype=int), ["a"]).save(tmp_path / "plain.npz")
    return tmp_path / "plain.npz"


def test_bad_ground_truth_is_refused():
    with pytest.raises(ValueError, match="ground_truth must have shape"):
        Dataset(np.zeros((3, 2)), np.zeros(3, dtype=int), ["a"], ground_truth=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        Dataset(np.zeros((3, 2)), np.zeros(3, dtype=int), ["a"], ground_truth=np.full((3, 1), np.nan))


def _run(tmp, name, Z, truth):
    """A run's embedding, and its scores and per-point measures as the score step writes them for an experiment
    with ``measure_space: ground_truth`` (the settings nerv_panels asks the plan for)."""
    path = tmp / f"{name}.npz"
    Embedding(Z=Z, placed_prototypes=np.zeros((0, 2)), runtime_s=0.1).save(path)
    per_point: dict = {}
    scores = score_run(Inputs.load(tmp / "d.npz", tmp / "i.npz"), Embedding.load(path), measures=["nerv"],
                       nerv={"k_max": 25, "space": "ground_truth"}, ground_truth=truth, per_point=per_point)
    (tmp / f"{name}.json").write_text(json.dumps({"status": "ok", **scores}))
    save_npz_atomic(tmp / f"{name}.pp.npz", **per_point)
    return {"embedding": str(path), "scores": str(tmp / f"{name}.json"), "per_point": str(tmp / f"{name}.pp.npz")}


def test_panels_measure_against_the_ground_truth(tmp_path):
    """With ``measure_space: ground_truth`` every measure is that of the latent coordinates, not of X: a display
    equal to the latent coordinates is perfect, whatever X is. The score step takes them from the dataset and
    refuses, by name, a dataset that has none."""
    rng = np.random.default_rng(0)
    T = rng.uniform(size=(60, 2))
    X = rng.normal(size=(60, 5))  # unrelated to T
    y = (T[:, 0] > 0.5).astype(int)
    Dataset(X, y, ["a", "b"], ground_truth=T).save(tmp_path / "d.npz")
    Inputs(X=X, labels=y, label_names=["a", "b"], W=sp.identity(60, format="csr"), R=np.zeros((60, 2)),
           prototypes=np.zeros((2, 2))).save(tmp_path / "i.npz")
    runs = [{"dataset": "toy", "inputs": "x", "entry": e, "group": e, "method": "pca", "grid": {},
             "data": str(tmp_path / "d.npz"), "inputs_file": str(tmp_path / "i.npz"), **_run(tmp_path, e, Z, T)}
            for e, Z in [("truth", T), ("pixels", X[:, :2])]]
    out = {k: str(tmp_path / f"o.{k}") for k in ("png", "csv", "html")}
    spec = {"name": "f8", "renderer": "nerv_panels", "measure_space": "ground_truth", "k_max": 25, "runs": runs}
    render(spec, out)
    table = pd.read_csv(out["csv"]).set_index("method_entry")
    assert table.loc["truth", "trustworthiness_20"] == pytest.approx(1.0)
    assert table.loc["truth", "precision_20"] == pytest.approx(1.0)
    expected, _ = nerv_measures(T, X[:, :2], y, k_max=25)
    rank_f = f_measure(1 - expected["rank_precision_error"], 1 - expected["rank_recall_error"])
    assert table.loc["pixels", "rank_f"] == pytest.approx(rank_f)
    assert table.loc["pixels", "smoothed_precision_error"] == pytest.approx(expected["smoothed_precision_error"])
    assert "ground truth" in open(out["html"], encoding="utf-8").read()
    with pytest.raises(ValueError, match="ground-truth space need the dataset's latent coordinates"):
        _run(tmp_path, "none", X[:, :2], None)
    out_scores = tmp_path / "cli.json"
    main(["score", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz"), "--embedding",
          str(tmp_path / "pixels.npz"), "--metrics", json.dumps({"measures": ["nerv"], "nerv": {
              "k_max": 25, "space": "ground_truth"}}), "--out", str(out_scores)])
    assert json.loads(out_scores.read_text())["smoothed_precision_error"] == pytest.approx(
        expected["smoothed_precision_error"])


def _config(dataset: str, renderer: str) -> dict:
    """One experiment with ground-truth measures on ``dataset`` drawn by ``renderer``."""
    return {"seed": 0,
            "datasets": {"faces": {"loader": "sculpt_faces", "params": {"n_samples": 30, "image_size": 16}},
                         "curve": {"loader": "s_curve", "params": {"n_samples": 30}}},
            "inputs": {"x": {"weights": {"kind": "euclidean_max", "n_neighbors": 10}, "confidence": {"kind": "eq12"},
                             "prototypes": {"kind": "means"}}},
            "methods": {"pca": {"method": "pca"}},
            "runs": [{"dataset": "faces", "inputs": "x", "methods": ["pca"]}],
            "paper": {"experiments": {"f8": {"paper": "nerv", "renderer": renderer, "measure_space": "ground_truth",
                                             "runs": [{"dataset": dataset, "inputs": "x", "methods": ["pca"]}]}}}}


def test_config_refuses_ground_truth_measures_where_there_is_none():
    validate_config(_config("faces", "nerv_panels"))
    with pytest.raises(ConfigError, match=r"paper\.experiments\.f8\.measure_space: 'ground_truth' is not allowed: dataset "
                                          r"'curve' \(loader 's_curve'\) has no ground-truth coordinates"):
        validate_config(_config("curve", "nerv_panels"))
    with pytest.raises(ConfigError, match=r"paper\.experiments\.f8: unknown parameters \['measure_space'\]; allowed "
                                          r"for renderer 'scatter_grid'"):
        validate_config(_config("faces", "scatter_grid"))


def test_spread_points_takes_the_point_nearest_each_occupied_cell():
    Z = np.array([[0.0, 0.0], [0.4, 0.6], [0.9, 0.9], [1.0, 1.0], [0.05, 0.9]])
    # 2 x 2 cells of the box [0, 1]²: centres (0.25, 0.25), (0.25, 0.75), (0.75, 0.25), (0.75, 0.75)
    assert spread_points(Z, 2).tolist() == [0, 1, 2]
    assert spread_points(Z, 1).tolist() == [1]
    assert spread_points(np.zeros((3, 2)), 4).tolist() == [0]
