"""The papers' experiments as protocols that any data set can go through, and what each needs of a data set.

A study (config key ``studies``, :mod:`cova.config.studies`) names data sets and protocols::

    studies:
      cells: {datasets: [cells], protocols: [compare, alpha_sweep]}

Each protocol is a declared function (:mod:`cova.constraints`, the form every configurable thing uses) whose
options are the protocol's settings and whose result, a :class:`Protocol`, says which inputs blocks, method entries
and runs it adds for every data set and how its figure is rendered (an experiment of :mod:`.registry`). The
defaults are the papers' settings where a paper fixes them and otherwise what the papers' experiments use on real
data (the Places2 protocol of COVA Sec. 4.2: a perplexity-30 affinity graph, R by Eqs. 10-11, prototypes by
t-SNE of the cohort proximity of Eq. 6).

Protocols whose every run needs cohorts say so in ``needs``; in a protocol that mixes methods, a method entry that
needs cohorts (its method reads labels, R or prototypes) is dropped on a data set without labels, with a notice
naming it, and the rest run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ..constraints import NON_EMPTY_STR, Kinds, ListOf, StrOptions, declare, integer, real
from ..methods import METHODS
from .common import SCORES

__all__ = ["PROTOCOLS", "Protocol", "COHORT_BLOCK", "POINTS_BLOCK"]

#: The inputs block of a protocol's COVA runs: the Places2 protocol of COVA Sec. 4.2 (W of perplexity 30, R by
#: Eqs. 10-11 with λ_p = 0.01, Υ by t-SNE of the graph proximity of Eq. 6 at scale ρ = 3), which needs no
#: choice that depends on the data's dimension.
COHORT_BLOCK: dict[str, Any] = {
    "weights": {"kind": "gaussian_perplexity", "perplexity": 30},
    "confidence": {"kind": "eq11", "lambda_p": 0.01},
    "prototypes": {"kind": "tsne", "proximity": "graph", "rho": 3},
}
#: The inputs block of the methods that read X only (t-SNE, UMAP, PCA, ...): the data and their labels, if any.
POINTS_BLOCK: dict[str, Any] = {}


class Protocol(NamedTuple):
    """What a protocol adds for each data set: inputs blocks and method entries (local names), the runs
    ``(inputs block, [method entries])``, the experiment that renders them (renderer, its options, title, caption)
    and the paper it comes from, ``needs``: what every run needs of the data (``"labels"``), and ``reuses``: the
    paper experiment of the shipped configuration whose runs and rendering the protocol takes (filled in by
    :func:`cova.config.studies.expand_studies`, which reads the configuration)."""

    paper: str
    inputs: dict[str, dict[str, Any]]
    methods: dict[str, dict[str, Any]]
    runs: list[tuple[str, list[str]]]
    experiment: dict[str, Any]
    needs: frozenset[str] = frozenset()
    reuses: str | None = None


_METHOD_NAMES = [ListOf([StrOptions(set(METHODS))],
                        description=f"a list of registered method names (cova.methods.METHODS: {sorted(METHODS)})")]
_SCORE_LIST = SCORES


def _block_for(method: str) -> str:
    """The protocol block a registered method runs on: the cohort block if it reads W, R or prototypes."""
    return "cohorts" if {"W", "R", "prototypes"} & set(METHODS[method]().requires()) else "points"


def _entries(methods: Sequence[str]) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]],
                                              list[tuple[str, list[str]]]]:
    entries = {m: {"method": m} for m in dict.fromkeys(methods)}
    blocks = {"points": POINTS_BLOCK, "cohorts": COHORT_BLOCK}
    runs = [(b, [m for m in entries if _block_for(m) == b]) for b in blocks]
    runs = [(b, ms) for b, ms in runs if ms]
    return {b: dict(blocks[b]) for b, _ in runs}, entries, runs


@declare({"methods": _METHOD_NAMES, "scores": _SCORE_LIST})
def compare(*, methods: Sequence[str] = ("cova_e1", "tsne", "umap", "pca"),
            scores: Sequence[str] = ("s_n", "s_c", "s_s", "trustworthiness", "continuity")) -> Protocol:
    """Every method in ``methods`` at its defaults on the same data: one scatter per method and a table of
    ``scores`` (COVA Sec. 4's comparison: S_n, S_c, S_s of App. G; trustworthiness and continuity, the scores that
    need no labels). Methods that read W, R or prototypes run
    on :data:`COHORT_BLOCK`, the rest on the data alone."""
    inputs, entries, runs = _entries(methods)
    return Protocol("cova", inputs, entries, runs,
                    {"renderer": "score_table", "scores": list(scores), "n_cols": 4,
                     "title": "Every method on the same data",
                     "caption": f"Methods {', '.join(entries)} at their defaults; scores {', '.join(scores)}."})


@declare({"alphas": [ListOf([real(0.0, 1.0, closed="neither")], min_items=2)], "method": [StrOptions(
    {"cova_e1", "cova_e2", "cova_e3", "cova_e4", "cova_p1", "cova_p2", "cova_p3", "cova_p4"})],
    "scores": _SCORE_LIST})
def alpha_sweep(*, alphas: Sequence[float] = (0.1, 0.3, 0.5, 0.7, 0.9), method: str = "cova_e1",
                scores: Sequence[str] = ("s_n", "s_c", "s_s")) -> Protocol:
    """COVA's trade-off between the data's neighbourhoods and the cohort arrangement: ``method`` over the weight α
    of the cohort term (COVA Eq. 13; Fig. 2 and Table 3 sweep it) and its ``scores`` against α."""
    return Protocol("cova", {"cohorts": dict(COHORT_BLOCK)},
                    {method: {"method": method, "grid": {"alpha": [float(a) for a in alphas]}}},
                    [("cohorts", [method])],
                    {"renderer": "sweep", "x": "alpha", "scores": list(scores),
                     "title": f"{method} against the cohort weight alpha",
                     "caption": f"{method} at alpha = {', '.join(f'{a:g}' for a in alphas)}."},
                    frozenset({"labels"}))


@declare({"methods": _METHOD_NAMES, "scores": _SCORE_LIST})
def cohort_control(*, methods: Sequence[str] = ("cova_e1", "cova_e2", "cova_e3", "cova_e4", "cova_p1", "cova_p2",
                                                 "cova_p3", "cova_p4"),
                   scores: Sequence[str] = ("s_n", "s_c", "s_s")) -> Protocol:
    """The cohort-control table (COVA Tables 3 and H.2): the embedding models E1-E4 and the projection models
    P1-P4 on one inputs block, with their ``scores``."""
    inputs, entries, runs = _entries(methods)
    return Protocol("cova", inputs, entries, runs,
                    {"renderer": "score_table", "scores": list(scores), "n_cols": 4,
                     "title": "Cohort control: the COVA models",
                     "caption": f"{', '.join(entries)} on the Places2-protocol inputs; scores {', '.join(scores)}."},
                    frozenset({"labels"}))


@declare({"seeds": [ListOf([integer(0, None)])], "max_iter": [integer(1, None)]})
def crowding(*, seeds: Sequence[int] = (0, 1, 2), max_iter: int = 1000) -> Protocol:
    """DOSNES's crowding panels (DOSNES Figs. 2-4): t-SNE in 2-D and 3-D on the sum-normalised perplexity-30 graph
    and DOSNES (Eqs. 5-8) on its doubly stochastic form (Sec. 3), each over the random starts ``seeds``."""
    graph = {"kind": "gaussian_perplexity", "perplexity": 30}
    inputs = {"raw": {"weights": {**graph, "normalize": {"kind": "sum"}}, "confidence": {"kind": "eq11"},
                      "prototypes": {"kind": "means"}},
              "ds": {"weights": {**graph, "normalize": {"kind": "random_walk", "rebalance": True}},
                     "confidence": {"kind": "eq11"}, "prototypes": {"kind": "means"}}}
    grid = {"random_state": [int(s) for s in seeds]}
    methods = {"tsne2": {"method": "tsne_affinity", "params": {"n_components": 2, "max_iter": max_iter}, "grid": grid},
               "tsne3": {"method": "tsne_affinity", "params": {"n_components": 3, "max_iter": max_iter}, "grid": grid},
               "dosnes": {"method": "dosnes", "params": {"max_iter": max_iter}, "grid": grid}}
    return Protocol("dosnes", inputs, methods, [("raw", ["tsne2", "tsne3"]), ("ds", ["dosnes"])],
                    {"renderer": "sphere_panels", "title": "Crowding: t-SNE against DOSNES on the sphere",
                     "caption": "t-SNE (2-D, 3-D) on the sum-normalised graph and DOSNES on its doubly stochastic "
                                "form; mean and standard deviation over the random starts."},
                    frozenset({"labels"}))


@declare({"experiment": NON_EMPTY_STR})
def paper(*, experiment: str) -> Protocol:
    """Any paper experiment of the shipped configuration (``config.yaml``) as a protocol: its runs (each distinct
    inputs block and method entries, under the configuration's own names) on the study's data sets, and its
    renderer with the experiment's options; the paper's printed numbers, claims and notes stay with the paper."""
    return Protocol("", {}, {}, [], {}, frozenset(), experiment)


#: Protocol name -> its declaration; a study names them (``protocols: [compare, {protocol: alpha_sweep, ...}]``).
PROTOCOLS = Kinds("protocol", {"compare": compare, "alpha_sweep": alpha_sweep, "cohort_control": cohort_control,
                               "crowding": crowding, "paper": paper}, key="protocol")
