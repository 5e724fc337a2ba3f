"""The renderer registry: the name an experiment block gives as ``renderer`` -> the function that draws it.

Every renderer takes the experiment spec (:meth:`cova.config.Plan.experiment_spec`, described in
:mod:`.common`) and the output paths ``{"png", "csv", "html"}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .coembedding.figures import coembed_maps, coembed_sweep
from .coembedding.timing import coembed_timing
from .cova.cora import link_panels, reference_sweep
from .cova.images import img_links, img_sweep
from .cova.links import highlight_grid, link_graphs
from .dosnes.figures import radial_panels, sphere_panels
from .featmap.figures import (
    featmap_adversarial,
    featmap_density,
    featmap_frame,
    featmap_saliency,
    featmap_table,
)
from .generic import fit_times, heatmap, scatter_grid, score_table, sweep
from .nerv.panels import nerv_panels
from .nerv.retrieval import retrieval
from .nerv.supervised import cv_error

__all__ = ["RENDERERS", "render"]

Renderer = Callable[[dict[str, Any], dict[str, str]], None]

RENDERERS: dict[str, Renderer] = {
    # any paper
    "score_table": score_table, "scatter_grid": scatter_grid, "sweep": sweep, "heatmap": heatmap, "fit_times": fit_times,
    # NeRV (Venna et al. 2010)
    "retrieval": retrieval, "nerv_panels": nerv_panels, "cv_error": cv_error,
    # COVA: Tables 1-2, the Cora figures (Sec. 4.3, H.3), the image-cohort figures (Sec. 4.2, H.2)
    "highlight_grid": highlight_grid, "link_graphs": link_graphs,
    "link_panels": link_panels, "reference_sweep": reference_sweep,
    "img_links": img_links, "img_sweep": img_sweep,
    # DOSNES (Lu, Yang & Corander 2016): Fig. 1, Figs. 2-4
    "radial_panels": radial_panels, "sphere_panels": sphere_panels,
    # co-embeddings (Wu, Mu, Liatsis & Goulermas): Figs. 2-11 maps and curves, Fig. 12 timing
    "coembed_maps": coembed_maps, "coembed_sweep": coembed_sweep, "coembed_timing": coembed_timing,
    # featMAP (Yang, Sun, Gong & Yu 2022): Table 1, Figs. 1, 4-7, Supp. Figs. 8-10
    "featmap_table": featmap_table, "featmap_saliency": featmap_saliency, "featmap_frame": featmap_frame,
    "featmap_adversarial": featmap_adversarial, "featmap_density": featmap_density,
}


def render(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Render experiment ``spec`` into ``out`` (keys png, csv, html)."""
    RENDERERS[spec["renderer"]](spec, out)
