"""The renderer registry: the name an experiment block gives as ``renderer`` -> the function that draws it.

Every renderer takes the experiment spec (:meth:`cova.config.Plan.experiment_spec`, described in
:mod:`.common`) and the output paths ``{"png", "csv", "html"}``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["RENDERERS", "render"]

Renderer = Callable[[dict[str, Any], dict[str, str]], None]

#: Renderer name -> the module (under cova.experiments) that defines the function of that name.
MODULES: dict[str, str] = {
    # any paper
    "score_table": "generic", "scatter_grid": "generic", "sweep": "generic", "heatmap": "generic",
    "fit_times": "generic",
    # NeRV (Venna et al. 2010)
    "retrieval": "nerv.retrieval", "nerv_panels": "nerv.panels", "cv_error": "nerv.supervised",
    # COVA: Tables 1-2, the Cora figures (Sec. 4.3, H.3), the image-cohort figures (Sec. 4.2, H.2)
    "highlight_grid": "cova.links", "link_graphs": "cova.links",
    "link_panels": "cova.cora", "reference_sweep": "cova.cora",
    "img_links": "cova.images", "img_sweep": "cova.images",
    # DOSNES (Lu, Yang & Corander 2016): Fig. 1, Figs. 2-4
    "radial_panels": "dosnes.figures", "sphere_panels": "dosnes.figures",
    # co-embeddings (Wu, Mu, Liatsis & Goulermas): Figs. 2-11 maps and curves, Fig. 12 timing
    "coembed_maps": "coembedding.figures", "coembed_sweep": "coembedding.figures",
    "coembed_timing": "coembedding.timing",
    # featMAP (Yang, Sun, Gong & Yu 2022): Table 1, Figs. 1, 4-7, Supp. Figs. 8-10
    "featmap_table": "featmap.figures", "featmap_saliency": "featmap.figures", "featmap_frame": "featmap.figures",
    "featmap_adversarial": "featmap.figures", "featmap_density": "featmap.figures",
}


class _Renderers(Mapping[str, Renderer]):
    """Name -> renderer, importing a renderer's module on first use: an experiment job loads only its own
    renderer's module (some of them import every method, and with them scikit-learn)."""

    def __getitem__(self, name: str) -> Renderer:
        module = importlib.import_module(f"{__package__}.{MODULES[name]}")
        return getattr(module, name)

    def __iter__(self) -> Iterator[str]:
        return iter(MODULES)

    def __len__(self) -> int:
        return len(MODULES)


RENDERERS: Mapping[str, Renderer] = _Renderers()


def render(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Render experiment ``spec`` into ``out`` (keys png, csv, html)."""
    RENDERERS[spec["renderer"]](spec, out)
