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
    for c in (3, 15, 40):
        colours = cohort_colours(c)
        assert colours.shape == (c, 4) and len({tuple(x) for x in colours}) == c


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
