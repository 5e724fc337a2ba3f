"""Writing figures: every figure goes through :func:`save_figure`, which lays it out, checks that a reader sees all
of it (:func:`layout_problems`), writes it atomically as PNG (and SVG beside it when asked) and frees it."""

from __future__ import annotations

import logging
import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import TypeVar

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from ..io import atomic_path

__all__ = ["ASPECT_RANGE", "LAYOUT_WARNING", "MAX_GRID_ASPECT", "MAX_PANELS_PER_ROW", "grid_columns",
           "layout_problems", "save_figure", "wrap_rows", "wrap_title", "wrap_titles"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The range of width / height a figure read at page width stays in: wider strips shrink every panel to a line,
#: taller ones do not fit a screen.
ASPECT_RANGE = (0.5, 3.5)
#: At most this many panels per row in the shared grids (:func:`wrap_rows`): a row stays readable at page width.
MAX_PANELS_PER_ROW = 4
#: The words that start every warning :func:`save_figure` logs about a figure's layout.
LAYOUT_WARNING = "figure layout:"
#: Text reaching less than this many pixels beyond the canvas counts as inside (anti-aliasing, rounding).
_TOLERANCE_PX = 1.0


#: The widest a grid of panels may be laid out (width / height), below :data:`ASPECT_RANGE`'s bound to leave room
#: for titles and legends.
MAX_GRID_ASPECT = 3.0


def _split(n: int, n_cols: int) -> list[int]:
    """Sizes of the rows ``n`` panels wrap into at most ``n_cols`` per row, as even as they go (7 in 4: 4, 3)."""
    pieces = -(-n // n_cols) if n else 1
    size = -(-n // pieces) if n else 0
    return [min(size, n - i * size) for i in range(pieces)]


def grid_columns(lengths: Sequence[int], width: float, height: float, max_cols: int = MAX_PANELS_PER_ROW) -> int:
    """How many panels per row a grid of rows of ``lengths`` panels (each ``width`` × ``height`` inches) gets: at
    most ``max_cols`` and, when the rows wrap (:func:`wrap_rows`), few enough that the grid is at most
    :data:`MAX_GRID_ASPECT` times as wide as high (one panel per row when nothing else fits)."""
    longest = max(list(lengths) or [1])
    for n_cols in range(min(longest, max_cols), 0, -1):
        shape = [max(_split(n, n_cols)) for n in lengths]
        n_rows = sum(len(_split(n, n_cols)) for n in lengths)
        if max(shape) * width <= MAX_GRID_ASPECT * n_rows * height:
            return max(shape)
    return 1


def wrap_rows(rows: Sequence[Sequence[T]], n_cols: int = MAX_PANELS_PER_ROW) -> list[list[T]]:
    """``rows`` with every row longer than ``n_cols`` split, in order, into rows of at most ``n_cols`` panels,
    as even as they go (:func:`grid_columns` picks ``n_cols``)."""
    out = []
    for row in rows:
        start = 0
        for size in _split(len(row), n_cols):
            out.append(list(row[start:start + size]))
            start += size
    return out


def wrap_title(title: str, width_in: float, fontsize: float = 10.0) -> str:
    """``title`` wrapped, line by line, to the width of ``width_in`` inches at ``fontsize`` points (about 0.55 em
    per character)."""
    chars = max(20, int(width_in * 72.0 / (0.55 * fontsize)))
    return "\n".join(textwrap.fill(line, chars) if line else line for line in title.split("\n"))


def wrap_titles(fig: plt.Figure) -> None:
    """Wrap ``fig``'s suptitle to the figure's width and every panel's title to its panel's width
    (:func:`wrap_title`), so that no title runs off the canvas or into its neighbours."""
    width = fig.get_size_inches()[0]
    title = fig._suptitle  # the only handle matplotlib gives to a figure's suptitle
    if title is not None:
        title.set_text(wrap_title(title.get_text(), 0.95 * width, title.get_fontsize()))
    for ax in fig.axes:
        box = ax.get_position()
        for t in (ax.title, ax._left_title, ax._right_title):
            if t.get_text():
                t.set_text(wrap_title(t.get_text(), 1.15 * box.width * width, t.get_fontsize()))


def _texts(fig: plt.Figure) -> list[Text]:
    """The texts of ``fig`` a reader sees: visible, not empty, and, for tick labels, those of the ticks matplotlib
    draws (it keeps labels of ticks outside the view, and of switched-off panels, undrawn)."""
    ticks, drawn = set(), set()
    for ax in fig.axes:
        for axis in ax._axis_map.values():  # no public handle on the ticks an axis draws
            for tick in axis.majorTicks + axis.minorTicks:
                ticks.update((id(tick.label1), id(tick.label2)))
            if ax.get_visible() and ax.axison and axis.get_visible():  # a switched-off panel draws none
                for tick in axis._update_ticks():
                    drawn.update((id(tick.label1), id(tick.label2)))
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and (id(t) not in ticks or id(t) in drawn)]


def layout_problems(fig: plt.Figure, aspect_range: tuple[float, float] = ASPECT_RANGE) -> list[str]:
    """What keeps a reader from seeing all of ``fig`` as drawn: every visible text whose extent reaches beyond the
    canvas, a suptitle overlapping a panel, and an aspect ratio (width / height) outside ``aspect_range``. Draws
    the figure; an empty list when all is well."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox.padded(_TOLERANCE_PX)
    problems = []
    for t in _texts(fig):
        box = t.get_tightbbox(renderer)  # a 3-D text's is projected, its window extent is not
        if box is None:
            continue
        if not (canvas.contains(box.x0, box.y0) and canvas.contains(box.x1, box.y1)):
            sides = [side for side, out in (("left", box.x0 < canvas.x0), ("right", box.x1 > canvas.x1),
                                           ("bottom", box.y0 < canvas.y0), ("top", box.y1 > canvas.y1)) if out]
            problems.append(f"text {t.get_text()[:60]!r} reaches beyond the canvas at the {', '.join(sides)}")
    title = fig._suptitle  # the only handle matplotlib gives to a figure's suptitle
    if title is not None and title.get_visible() and title.get_text().strip():
        box = title.get_window_extent(renderer)
        for ax in fig.axes:
            if ax.get_visible() and ax.axison and Bbox.intersection(box, ax.get_window_extent(renderer)) is not None:
                problems.append(f"the title {title.get_text()[:60]!r} overlaps a panel")
                break
    width, height = fig.get_size_inches()
    if not aspect_range[0] <= width / height <= aspect_range[1]:
        problems.append(f"aspect ratio {width / height:.2f} (width / height) outside {aspect_range[0]:g}-"
                        f"{aspect_range[1]:g}")
    return problems


def save_figure(fig: plt.Figure, path: str | os.PathLike | Mapping[str, str], *, tight: bool = True) -> list[str]:
    """Lay ``fig`` out (unless ``tight`` is false: the caller laid it out), log every :func:`layout_problems` as a
    warning starting with :data:`LAYOUT_WARNING`, write it through a temporary file renamed into place and close
    it. ``path``: the PNG's path, or the mapping of an experiment's outputs, whose ``png`` is written and, when it
    has one, ``svg`` as well (text as paths, ids and date fixed, so that one figure always gives the same file).
    Returns the problems."""
    files = dict(path) if isinstance(path, Mapping) else {"png": os.fspath(path)}
    if tight:
        wrap_titles(fig)
        fig.tight_layout()
    problems = layout_problems(fig)
    for problem in problems:
        log.warning("%s %s: %s", LAYOUT_WARNING, files["png"], problem)
    with atomic_path(files["png"]) as tmp:
        fig.savefig(tmp, format="png")
    if files.get("svg"):
        with mpl.rc_context({"svg.hashsalt": "cova", "svg.fonttype": "path"}), atomic_path(files["svg"]) as tmp:
            fig.savefig(tmp, format="svg", metadata={"Date": None})
    plt.close(fig)
    return problems
