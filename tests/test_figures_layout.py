"""Figures for reading: the names the papers use, grids that wrap to page width, nothing clipped, SVG beside PNG.

The checks of every figure of config/ci.yaml (:func:`check_ci_figures`) read the outputs of the CI run of
tests/test_workflow.py, which calls them from its own module (``test_figures_of_the_ci_run``): the run is a module
fixture there and ``make test`` spreads test files over two processes, so a second module asking for it would
run the workflow a second time. The layout itself is checked where every figure is drawn, by
:func:`cova.viz.figures.save_figure`, which logs each problem (:data:`~cova.viz.figures.LAYOUT_WARNING`) into the
experiment job's log; the checks here read those logs, the PNG's size and the SVG.
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from cova.viz.figures import (  # noqa: E402
    ASPECT_RANGE,
    LAYOUT_WARNING,
    grid_columns,
    layout_problems,
    save_figure,
    wrap_rows,
)
from cova.viz.names import entry_names, run_name, run_names  # noqa: E402
from cova.viz.panels import ScatterPanel, scatter_grid_figure  # noqa: E402


def png_size(path: Path) -> tuple[int, int]:
    """Width and height of a PNG, from its IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def experiment_log(png: str) -> str:
    """The log of the experiment job that wrote ``png`` (rules ``experiment`` and ``study_experiment``)."""
    return "results/logs/" + png.removeprefix("results/").removesuffix(".png") + ".log"


def check_ci_figures(workdir: Path, plan) -> list[str]:
    """Every experiment of ``plan`` as the run in ``workdir`` wrote it: an SVG beside its PNG, the PNG's aspect
    ratio within :data:`ASPECT_RANGE`, and no layout warning of :func:`save_figure` in the job's log (no text beyond
    the canvas, no title over a panel). Returns the failures."""
    failures = []
    for name in plan.experiments:
        png = plan.experiment_outputs(name)["png"]
        svg = workdir / (png.removesuffix(".png") + ".svg")
        if not svg.is_file() or b"<svg" not in svg.read_bytes()[:2000]:
            failures.append(f"{name}: no SVG at {svg.relative_to(workdir)}")
        width, height = png_size(workdir / png)
        if not ASPECT_RANGE[0] <= width / height <= ASPECT_RANGE[1]:
            failures.append(f"{name}: {width} × {height} px, aspect {width / height:.2f} outside {ASPECT_RANGE}")
        log = (workdir / experiment_log(png)).read_text(encoding="utf-8", errors="replace")
        failures += [f"{name}: {line.strip()}" for line in log.splitlines() if LAYOUT_WARNING in line]
    return failures


# ----------------------------------------------------------------------------------------------------------------
# the naming table
# ----------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("run", "name"), [
    ({"method": "cova_e1", "grid": {}}, "E1"),
    ({"method": "cova_p1", "grid": {}}, "P1"),
    ({"method": "eigen_cova", "grid": {"alpha": 0.5, "eta": 0.9}}, "eigen-COVA α = 0.5, η = 0.9"),
    ({"method": "nerv", "grid": {"lam": 0.1}}, "NeRV λ = 0.1"),
    ({"method": "tnerv", "grid": {"lam": 0.1}}, "t-NeRV λ = 0.1"),
    ({"method": "tsne", "grid": {}}, "t-SNE"),
    ({"method": "umap"}, "UMAP"),
    ({"method": "featmap", "grid": {}}, "featMAP"),
    ({"method": "dosnes", "grid": {"random_state": 2}}, "DOSNES seed = 2"),
])
def test_run_names_are_the_papers(run, name):
    assert run_name(run) == name


def test_grid_values_alone_and_clashes_told_apart():
    assert run_name({"method": "cova_e1", "grid": {"alpha": 0.3}}, method=False) == "α = 0.3"
    assert run_name({"method": "cova_e1", "grid": {}}, method=False) == "E1"
    runs = [{"method": "tsne_affinity", "grid": {}, "dataset": "cora", "inputs": "raw", "group": "tsne2"},
            {"method": "tsne_affinity", "grid": {}, "dataset": "cora", "inputs": "raw", "group": "tsne3"},
            {"method": "cova_e1", "grid": {}, "dataset": "cora", "inputs": "raw", "group": "e1"}]
    assert run_names(runs) == ["t-SNE (tsne2)", "t-SNE (tsne3)", "E1"]
    rows = [{"method_entry": "nerv_lam-lam0.1", "method": "nerv", "lam": 0.1},
            {"method_entry": "pca", "method": "pca", "lam": float("nan")}]
    assert entry_names(rows, ["lam"]) == {"nerv_lam-lam0.1": "NeRV λ = 0.1", "pca": "PCA"}


# ----------------------------------------------------------------------------------------------------------------
# wrapping and the layout check
# ----------------------------------------------------------------------------------------------------------------
def test_rows_wrap_evenly_and_grids_stay_within_the_aspect_range():
    assert wrap_rows([list(range(7))], 4) == [[0, 1, 2, 3], [4, 5, 6]]
    assert wrap_rows([list(range(5)), [9]], 4) == [[0, 1, 2], [3, 4], [9]]
    for n in range(1, 13):
        cols = grid_columns([n], 3.2, 3.3)
        rows = len(wrap_rows([list(range(n))], cols))
        assert cols <= 4 and max(map(len, wrap_rows([list(range(n))], cols))) * 3.2 / (rows * 3.3) <= ASPECT_RANGE[1]


def test_layout_problems_finds_clipped_text_overlapping_titles_and_strips():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.95, 0.5, "a label running far past the right edge", transform=ax.transAxes)
    problems = layout_problems(fig)
    assert any("right" in p and "a label running" in p for p in problems), problems
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(6, 3))
    fig.subplots_adjust(top=0.99)
    fig.suptitle("a title drawn over the panels")
    assert any("overlaps a panel" in p for p in layout_problems(fig))
    plt.close(fig)

    fig, axes = plt.subplots(1, 8, figsize=(20, 3))
    assert any("aspect ratio" in p for p in layout_problems(fig))
    plt.close(fig)


def test_save_figure_wraps_long_titles_logs_problems_and_writes_svg(tmp_path, caplog):
    import numpy as np

    rng = np.random.default_rng(0)
    labels = np.arange(40) % 3
    panels = [[ScatterPanel(rng.normal(size=(40, 2)), labels, 3, None, f"E{i} α = 0.{i}",
                            label_names=("red", "green", "blue")) for i in range(1, 8)]]
    title = "A long experiment title that would run off both sides of the canvas if nothing wrapped it " * 3
    fig = scatter_grid_figure(panels, title)
    assert fig.get_size_inches()[0] / fig.get_size_inches()[1] <= ASPECT_RANGE[1]  # 7 panels wrapped
    assert any(ax.get_legend() is not None for ax in fig.axes)  # the cohorts named
    out = {"png": str(tmp_path / "f.png"), "svg": str(tmp_path / "f.svg")}
    with caplog.at_level(logging.WARNING):
        assert save_figure(fig, out) == []
    assert LAYOUT_WARNING not in caplog.text
    assert png_size(Path(out["png"]))[0] > 0 and b"<svg" in Path(out["svg"]).read_bytes()[:2000]

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.annotate("clipped", (1.0, 0.5), xytext=(200, 0), textcoords="offset points", xycoords="axes fraction")
    with caplog.at_level(logging.WARNING):
        assert save_figure(fig, tmp_path / "g.png", tight=False)  # laid out by the caller: as drawn
    assert LAYOUT_WARNING in caplog.text and not (tmp_path / "g.svg").exists()
