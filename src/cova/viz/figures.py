"""Writing figures: every PNG goes through :func:`save_figure`, which writes it atomically and frees the figure."""

from __future__ import annotations

import os

import matplotlib.pyplot as plt

from ..io import atomic_path


def save_figure(fig: plt.Figure, path: str | os.PathLike, *, tight: bool = True) -> None:
    """Lay ``fig`` out tightly (unless ``tight`` is false: the caller laid it out), write it to ``path`` as PNG
    through a temporary file renamed into place, and close it."""
    if tight:
        fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
