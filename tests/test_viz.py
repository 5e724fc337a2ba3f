"""Figures and tables are written completely and atomically, with the documented formats."""

from __future__ import annotations

import numpy as np
import pytest

from cova.viz.scatter import cohort_colours, format_scores, save_scatter_figure
from cova.viz.tables import ID_COLUMNS, SCORE_COLUMNS, scores_table, write_csv_atomic, write_html_atomic


def record(dataset, entry, value):
    ids = {"dataset": dataset, "inputs": "in", "method_entry": entry, "method": "pca", "inputs_id": "in-1",
           "params_id": f"{entry}-2", "n_samples": 10, "n_cohorts": 2, "status": "ok"}
    return {**ids, **{c: value for c in SCORE_COLUMNS}}


def test_scores_table_sorted_and_formatted(tmp_path):
    table = scores_table([record("b", "x", 0.5), record("a", "y", 1 / 3), record("a", "x", 1.0)])
    assert list(table.columns) == ID_COLUMNS + SCORE_COLUMNS
    assert list(zip(table.dataset, table.method_entry)) == [("a", "x"), ("a", "y"), ("b", "x")]
    write_csv_atomic(table, tmp_path / "s.csv")
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[2].endswith("0.333333")
    write_html_atomic(table, tmp_path / "s.html")
    assert "33.3" in (tmp_path / "s.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv", "s.html"]


def test_scores_table_rejects_records_without_ids_and_fills_missing_scores():
    bad = record("a", "x", 0.5)
    del bad["method_entry"]
    with pytest.raises(ValueError, match="method_entry"):
        scores_table([bad])
    partial = record("a", "x", 0.5)
    del partial["s_n"]  # a score that applies to none of the runs (e.g. S_n without input vectors)
    table = scores_table([partial])
    assert list(table.columns) == ID_COLUMNS + SCORE_COLUMNS and np.isnan(table.s_n.iloc[0])


def test_scatter_png_and_colours(tmp_path):
    rng = np.random.default_rng(0)
    Z, labels = rng.normal(size=(50, 2)), np.arange(50) % 3
    save_scatter_figure(tmp_path / "f.png", Z, labels, ["a", "b", "c"], prototypes=np.eye(3, 2),
                        scores={"s_n": 0.5, "s_s": 1.0}, title="t")
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(list(tmp_path.iterdir())) == 1
    assert format_scores({"s_n": 0.8123, "s_c": 1.0}) == "S_n 81.2  S_c 100.0"
    assert format_scores({"s_n": 0.5, "s_c": float("nan")}) == "S_n 50.0"  # a score that does not apply
    for c in (3, 15, 40):
        colours = cohort_colours(c)
        assert colours.shape == (c, 4) and len({tuple(x) for x in colours}) == c


def test_a_far_point_does_not_set_the_scale():
    """One held-out point a linear map throws 100 times further out than the rest: the view keeps the bulk's
    scale, and the point is drawn on the border with a note; without such a point the view is the usual one."""
    import matplotlib.pyplot as plt

    from cova.viz.scatter import far_points, plot_cohorts

    rng = np.random.default_rng(0)
    Z, labels = rng.normal(size=(500, 2)), np.arange(500) % 3
    assert not far_points(Z).any()
    Z[7] = [300.0, -200.0]
    assert np.flatnonzero(far_points(Z)).tolist() == [7]
    fig, (ax, plain) = plt.subplots(1, 2)
    plot_cohorts(ax, Z, labels, 3)
    fig.canvas.draw()
    bulk = np.abs(np.delete(Z, 7, axis=0)).max()
    assert max(map(abs, (*ax.get_xlim(), *ax.get_ylim()))) < 2 * bulk
    assert any("1 point outside" in t.get_text() for t in ax.texts)
    plot_cohorts(plain, np.delete(Z, 7, axis=0), np.delete(labels, 7), 3)
    assert not plain.texts
    plt.close(fig)


def test_image_pairs_of_different_sizes_in_one_figure():
    """featMAP Figs. 4-5 put MNIST (28 × 28) and COIL-20 (128 × 128) images in one figure: each pair is drawn
    with its own shape."""
    import matplotlib.pyplot as plt

    from cova.viz.saliency import image_pairs_figure

    rng = np.random.default_rng(0)
    small, large = rng.random(28 * 28), rng.random(128 * 128)
    fig = image_pairs_figure([[(small, small, "mnist 1", (28, 28))], [(large, large, "coil 1", (128, 128))]], "t")
    shapes = [ax.images[0].get_array().shape for ax in fig.axes if ax.images]
    assert shapes == [(28, 28), (28, 28), (128, 128), (128, 128)]
    plt.close(fig)


def test_panel_marks_neighbour_groups_and_boxes():
    """COVA Fig. H.1's marks: each neighbour group is one example (large) and its neighbours (small) in the same
    marker with a line to each; boxed points get open squares; a degenerate panel draws no marks."""
    import matplotlib.pyplot as plt

    from cova.viz.panels import ScatterPanel, draw_panel

    rng = np.random.default_rng(1)
    Z, labels = rng.normal(size=(30, 2)), np.arange(30) % 3
    groups = (np.array([0, 5, 6, 7, 8]), np.array([1, 9, 10, 11, 12]))
    fig, (a, b) = plt.subplots(1, 2)
    draw_panel(a, ScatterPanel(Z, labels, 3, None, "t", groups=groups, boxed=np.array([2, 3])))
    offsets = [c.get_offsets() for c in a.collections]
    assert len(offsets) == 1 + 2 * len(groups) + 1  # the cohorts, a (neighbours, example) pair per group, boxes
    np.testing.assert_allclose(offsets[2], Z[[0]])
    np.testing.assert_allclose(offsets[1], Z[[5, 6, 7, 8]])
    np.testing.assert_allclose(offsets[-1], Z[[2, 3]])
    assert len(a.lines) == 8
    draw_panel(b, ScatterPanel(np.full((30, 2), np.nan), labels, 3, None, "t", groups=groups, boxed=np.array([2])))
    assert not b.collections and not b.lines
    plt.close(fig)


def test_heatmap_with_example_outputs_below():
    import pandas as pd

    from cova.viz.panels import ScatterPanel
    from cova.viz.sweeps import heatmap_figure

    table = pd.DataFrame([{"alpha": a, "eta": e, "s_n": 0.5, "s_c": 0.9} for a in (0.1, 0.9) for e in (0.2, 0.8)])
    Z, labels = np.random.default_rng(0).normal(size=(20, 2)), np.arange(20) % 2
    panels = [ScatterPanel(Z, labels, 2, None, f"eta {e}") for e in (0.2, 0.8, 0.5, 0.6, 0.7, 0.9, 0.1)]
    fig = heatmap_figure(table, "alpha", "eta", ["s_n", "s_c"], "t", panels, examples_per_row=5)
    titles = [ax.get_title() for ax in fig.axes]
    assert [t for t in titles if t.startswith("eta")] == [p.title for p in panels]
    assert sum(t.endswith("(%)") for t in titles) == 2
    assert len(heatmap_figure(table, "alpha", "eta", ["s_n"], "t").axes) == 2  # one heat map and its colour bar


def test_neighbour_groups_are_seeded_examples_with_their_nearest_neighbours():
    from scipy.spatial.distance import cdist

    from cova.experiments.generic import neighbour_groups

    rng = np.random.default_rng(3)
    X, labels = rng.normal(size=(40, 5)), np.repeat([0, 1, 2, 3], 10)
    groups = neighbour_groups(X, labels, per_cohort=2, k=4, random_state=5)
    assert len(groups) == 8 and [int(labels[g[0]]) for g in groups] == [0, 0, 1, 1, 2, 2, 3, 3]
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    for g in groups:
        np.testing.assert_array_equal(g[1:], np.argsort(D[g[0]], kind="stable")[:4])
    again = neighbour_groups(X, labels, per_cohort=2, k=4, random_state=5)
    assert all(np.array_equal(a, b) for a, b in zip(groups, again))
    other = neighbour_groups(X, labels, per_cohort=2, k=4, random_state=6)
    assert any(not np.array_equal(a, b) for a, b in zip(groups, other))


def test_fit_times_reads_each_runs_own_time_and_orders_the_entries(tmp_path):
    """COVA Fig. H.11's renderer: one row per run with l = the samples fitted (the training rows on a split) and
    the embed job's runtime_s; a degenerate run has no time; the order statement is computed at the largest l
    every entry ran at."""
    import pandas as pd

    from cova.datasets import Dataset
    from cova.embedding import Embedding
    from cova.experiments.registry import render
    from cova.inputs import Inputs

    rng = np.random.default_rng(0)
    runs = []
    for l in (40, 80):
        labels = np.arange(l) % 2
        ds = Dataset(rng.normal(size=(l, 3)), labels, ["a", "b"])
        ds.save(tmp_path / f"d{l}.npz")
        train = None if l == 40 else np.arange(l) < 60
        Inputs(X=ds.X, labels=labels, label_names=ds.label_names, spec={}, train=train).save(tmp_path / f"i{l}.npz")
        for entry, t in (("fast", 0.01 * l), ("slow", 0.1 * l)):
            status = "degenerate" if (entry, l) == ("fast", 80) else "ok"
            Embedding(np.zeros((l, 2)), runtime_s=t, status=status, method=entry).save(tmp_path / f"{entry}{l}.npz")
            runs.append({"dataset": "d", "inputs": f"i{l}", "entry": entry, "group": entry, "method": entry,
                         "data": str(tmp_path / f"d{l}.npz"), "inputs_file": str(tmp_path / f"i{l}.npz"),
                         "embedding": str(tmp_path / f"{entry}{l}.npz")})
    out = {k: str(tmp_path / f"t.{k}") for k in ("png", "csv", "html")}
    render({"name": "t", "paper": "cova", "renderer": "fit_times", "runs": runs}, out)
    t = pd.read_csv(out["csv"])
    assert t[["method_entry", "n_samples"]].values.tolist() == [["fast", 40], ["fast", 60], ["slow", 40], ["slow", 60]]
    np.testing.assert_allclose(t.runtime_s, [0.4, np.nan, 4.0, 8.0])
    assert "d at l = 40: fast 0.4 s, slow 4 s" in open(out["html"]).read()


def test_cohort_tightness_is_the_between_cohort_share_of_the_variance():
    from cova.experiments.generic import cohort_tightness

    rng = np.random.default_rng(1)
    labels = np.repeat([0, 1, 2], [5, 7, 8])
    Z = rng.normal(size=(20, 2)) + 4.0 * labels[:, None]
    centres = np.array([Z[labels == j].mean(axis=0) for j in range(3)])
    within = sum(np.sum((Z[labels == j] - centres[j]) ** 2) for j in range(3))
    assert cohort_tightness(Z, labels) == pytest.approx(1.0 - within / np.sum((Z - Z.mean(axis=0)) ** 2))
    # the display's scale, rotation and translation do not matter; the cohorts' names do not either
    c, s = np.cos(0.7), np.sin(0.7)
    moved = 3.5 * Z @ np.array([[c, -s], [s, c]]) + [10.0, -2.0]
    assert cohort_tightness(moved, np.array(["b", "c", "a"])[labels]) == pytest.approx(cohort_tightness(Z, labels))
    # pulling every point toward its cohort's centre tightens the cohorts; points on their centres give 1
    assert cohort_tightness(centres[labels] + 0.3 * (Z - centres[labels]), labels) > cohort_tightness(Z, labels)
    assert cohort_tightness(centres[labels], labels) == pytest.approx(1.0)
    # cohorts sharing one centre give 0; a non-finite or a collapsed display gives NaN
    assert cohort_tightness(np.r_[Z[:4] - Z[:4].mean(0), Z[:4] - Z[:4].mean(0)], np.repeat([0, 1], 4)) == \
        pytest.approx(0.0, abs=1e-12)
    assert np.isnan(cohort_tightness(np.where(labels[:, None] == 0, np.nan, Z), labels))
    assert np.isnan(cohort_tightness(np.ones((20, 2)), labels))


@pytest.mark.parametrize("renderer", ["score_table", "scatter_grid"])
def test_score_table_and_scatter_grid_add_the_display_measures(tmp_path, renderer):
    """The tables end with each run's cohort tightness and, with the misplaced boxes, the number of boxed points (a
    run's k-NN vote in its display for another cohort); a degenerate run has neither; the scores are kept as
    read."""
    import json

    import pandas as pd

    from cova.datasets import Dataset
    from cova.embedding import Embedding
    from cova.experiments.generic import cohort_tightness
    from cova.experiments.registry import render
    from cova.inputs import Inputs
    from cova.metrics.retrieval import knn_misclassified

    rng = np.random.default_rng(2)
    labels = np.repeat([0, 1, 2], 12)
    ds = Dataset(rng.normal(size=(36, 3)), labels, ["a", "b", "c"])
    ds.save(tmp_path / "d.npz")
    Inputs(X=ds.X, labels=labels, label_names=ds.label_names, spec={}).save(tmp_path / "i.npz")
    displays = {"tight": rng.normal(size=(36, 2)) * 0.2 + 3.0 * labels[:, None],
                "loose": rng.normal(size=(36, 2)) * 2.0 + 3.0 * labels[:, None],
                "broken": np.full((36, 2), np.nan)}
    runs = []
    for entry, Z in displays.items():
        status = "degenerate" if entry == "broken" else "ok"
        Embedding(Z, status=status, method=entry).save(tmp_path / f"{entry}.npz")
        (tmp_path / f"{entry}.json").write_text(json.dumps({"status": status, "s_n": 0.25}))
        runs.append({"dataset": "d", "inputs": "i", "entry": entry, "group": entry, "method": entry,
                     "data": str(tmp_path / "d.npz"), "inputs_file": str(tmp_path / "i.npz"),
                     "embedding": str(tmp_path / f"{entry}.npz"), "scores": str(tmp_path / f"{entry}.json")})
    out = {k: str(tmp_path / f"t.{k}") for k in ("png", "csv", "html")}
    render({"name": "t", "paper": "cova", "renderer": renderer, "runs": runs, "misplaced": {"k": 5}}, out)
    t = pd.read_csv(out["csv"])
    assert list(t.columns[-2:]) == ["cohort_tightness", "n_misplaced"]
    assert t.method_entry.tolist() == ["tight", "loose", "broken"] and t.s_n.tolist() == [0.25] * 3
    expected = [cohort_tightness(displays[e], labels) for e in ("tight", "loose")]
    np.testing.assert_allclose(t.cohort_tightness[:2], expected, rtol=1e-5)  # the CSV keeps 6 digits
    assert expected[0] > expected[1]
    assert t.n_misplaced[:2].tolist() == [int(knn_misclassified(displays[e], labels, 5).sum())
                                          for e in ("tight", "loose")]
    assert t.cohort_tightness.isna().tolist() == [False, False, True] and np.isnan(t.n_misplaced[2])
    render({"name": "t", "paper": "cova", "renderer": renderer, "runs": runs}, out)
    assert "n_misplaced" not in pd.read_csv(out["csv"]) and pd.read_csv(out["csv"]).columns[-1] == "cohort_tightness"
