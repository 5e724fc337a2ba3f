"""The renderer registry: the name an experiment block gives as ``renderer`` -> the function that draws it.

Every renderer takes the experiment spec (:meth:`cova.config.Plan.experiment_spec`, described in
:mod:`.common`) and the output paths ``{"png", "csv", "html"}`` (and ``"svg"``, the figure's vector copy, when
the caller asks for one: :func:`cova.viz.figures.save_figure` writes both from one figure), and its own options as keyword-only arguments:
it is declared with :func:`cova.constraints.declare`, whose table (``_parameter_constraints``) lists what each
option allows, whose rules (``_option_rules``) check what involves several options or the experiment's runs, and
whose keyword defaults are the options' defaults. An experiment block holds :data:`COMMON_KEYS` (read from the
spec by any renderer) and the options of its renderer, nothing else: :func:`check_experiment` checks a block before
any job runs, :func:`render` splits the spec and calls the renderer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..constraints import OptionError, check_options, parameter_constraints
from ..lazy import LazyNames

__all__ = ["COMMON_KEYS", "COMMON_DEFAULTS", "MODULES", "RENDERERS", "render", "renderer_options", "check_experiment"]

#: The keys every experiment block (or spec) may hold whatever its renderer: which paper and renderer, the runs,
#: the texts (``title``, ``caption``, ``notes``), ``reference`` (the key of the paper's printed numbers in
#: :data:`cova.experiments.reference.REFERENCE`), the job's ``resources``, the ``fallbacks`` the plan resolved
#: (:func:`cova.config.resolve_fallbacks`), the ``claims`` it tests and its ``paper_data`` (:mod:`.claims`; the
#: experiment's page shows its claims' verdicts, :mod:`.page`), the ``study`` that generated it or the ``datasets`` its runs go through (:mod:`cova.config.studies`) and, in a
#: spec, the experiment's ``name``. Every other key is an option
#: of the renderer.
COMMON_KEYS = frozenset({"paper", "renderer", "runs", "title", "caption", "notes", "reference", "resources",
                         "fallbacks", "name", "claims", "paper_data", "study",
                         "datasets"})

#: The defaults of the optional common keys, filled into every spec before its renderer sees it, so that no renderer
#: spells a default of its own (``title`` None: the experiment's name).
COMMON_DEFAULTS: dict[str, Any] = {"title": None, "caption": "", "notes": "", "reference": None, "fallbacks": {}}

Renderer = Callable[..., None]

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


#: Name -> renderer, importing a renderer's module on first use: an experiment job loads only its own renderer's
#: module (some of them import every method, and with them scikit-learn).
RENDERERS: Mapping[str, Renderer] = LazyNames(__package__, MODULES)


def renderer_options(name: str) -> Renderer:
    """The declared function of renderer ``name``: its ``_parameter_constraints`` table, its ``_option_rules`` and
    its keyword defaults are the options an experiment block of that renderer may set."""
    return RENDERERS[name]


def check_experiment(name: str, block: Mapping[str, Any], context: Mapping[str, Any] | None = None
                     ) -> dict[str, Any]:
    """Check the options of experiment block ``block`` (configured as ``paper.experiments.<name>``) against its
    renderer's declaration and return them with the defaults filled in; :class:`cova.constraints.OptionError`
    names the key and what is allowed. ``context["runs"]``: one dict per expanded run of the experiment (keys
    ``dataset``, ``loader``, ``inputs``, ``entry``, ``group``, ``method``, ``grid``), what the renderers' rules
    check the options against (e.g. ``examples`` against the runs' grid values)."""
    renderer = block.get("renderer")
    if renderer not in MODULES:
        raise OptionError(f"paper.experiments.{name}.renderer",
                          f"{renderer!r} is not allowed; allowed values: {sorted(MODULES)}")
    options = {k: v for k, v in block.items() if k not in COMMON_KEYS}
    return check_options(RENDERERS[renderer], options, f"paper.experiments.{name}", f"renderer {renderer!r}",
                         context)


def render(spec: dict[str, Any], out: dict[str, str]) -> None:
    """Render experiment ``spec`` into ``out`` (keys png, csv, html, optionally svg): the renderer gets the spec's common keys
    (and its runs) and, as keyword arguments, the options of its declaration the spec sets (the declaration checks
    them); a key that is neither common nor declared is an error."""
    renderer = RENDERERS[spec["renderer"]]
    declared = parameter_constraints(renderer)
    unknown = sorted(set(spec) - COMMON_KEYS - set(declared))
    if unknown:
        raise OptionError(f"paper.experiments.{spec['name']}",
                          f"unknown parameters {unknown}; allowed for renderer {spec['renderer']!r}: "
                          f"{sorted(declared)}")
    common = {**COMMON_DEFAULTS, **{k: v for k, v in spec.items() if k not in declared}}
    renderer(common, out, **{k: spec[k] for k in declared if k in spec})
