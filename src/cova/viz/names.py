"""The names a reader sees: every figure's legends and panel titles name a run as the papers do ("E1", "t-SNE",
"NeRV λ = 0.1", "α = 0.3"), never by its configuration id (``e1_fig2-alpha0.3``, ``nerv_lam-lam0.1``).

One table per kind of name: :data:`METHOD_NAMES` (registered method -> the papers' name), :data:`GRID_SYMBOLS`
(grid parameter -> the papers' symbol). :func:`run_name` and :func:`run_names` turn a run of an experiment spec
(keys ``method``, ``entry``, ``group``, ``grid``, ``dataset``, ``inputs``; :mod:`cova.experiments.common`) into its
name; :func:`entry_names` does the same for the rows of a score table (``method_entry``, ``method`` and the grid
columns).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["METHOD_NAMES", "GRID_SYMBOLS", "method_name", "grid_symbol", "grid_text", "run_name", "run_names", "entry_names"]

#: Registered method -> the name the papers print (COVA's models as in its tables: E1-E4, P1-P4, eigen-COVA; the
#: co-embedding paper's own model is "proposed" there).
METHOD_NAMES: dict[str, str] = {
    "cova_e1": "E1", "cova_e2": "E2", "cova_e3": "E3", "cova_e4": "E4",
    "cova_p1": "P1", "cova_p2": "P2", "cova_p3": "P3", "cova_p4": "P4", "eigen_cova": "eigen-COVA",
    "nerv": "NeRV", "tnerv": "t-NeRV", "snerv": "SNeRV", "lmds": "local MDS", "cca": "CCA", "cda": "CDA",
    "sne": "SNE", "tsne": "t-SNE", "tsne_exact": "t-SNE (exact)", "tsne_sklearn": "t-SNE", "tsne_affinity": "t-SNE",
    "nse": "NSE", "supervised_sne": "supervised SNE", "supervised_tsne": "supervised t-SNE",
    "supervised_nse": "supervised NSE", "mre": "MRE",
    "coembed": "proposed", "ca": "CA", "acas": "ACAS", "code": "CODE", "mkpe": "MKPE",
    "dosnes": "DOSNES", "featmap": "featMAP", "umap": "UMAP", "densmap": "densMAP", "pacmap": "PaCMAP",
    "trimap": "TriMap", "hnne": "h-NNE",
    "pca": "PCA", "mds": "MDS", "lda": "LDA", "nca": "NCA", "lle": "LLE", "hlle": "HLLE", "isomap": "Isomap",
    "laplacian_eigenmaps": "LE", "s_isomap": "S-Isomap", "lmvu": "LMVU", "muhsic": "MUHSIC", "llc": "LLC",
    "ldmgi": "LDMGI", "mma": "MMA", "mcml": "MCML", "pe": "PE", "deep_embedding": "deep embedding",
}

#: Grid parameter -> the symbol the papers give it (λ of NeRV Eq. 5, α and η of COVA Eqs. 9 and 25, κ of COVA's
#: neighbour graphs, k_r of the co-embedding's neighbour reduction, λ of featMAP's feature term).
GRID_SYMBOLS: dict[str, str] = {
    "lam": "λ", "alpha": "α", "eta": "η", "kappa": "κ", "beta": "β", "gamma": "γ", "mu": "μ", "sigma": "σ",
    "feat_lambda": "λ", "n_neighbors": "k", "k_r": "k_r", "n_components": "d", "perplexity": "perplexity",
    "random_state": "seed", "learning_rate": "learning rate", "max_iter": "iterations",
}


def method_name(method: str) -> str:
    """The papers' name of registered method ``method`` (:data:`METHOD_NAMES`; the registry name when it has
    none)."""
    return METHOD_NAMES.get(method, method)


def grid_symbol(key: str) -> str:
    """The papers' symbol of grid parameter ``key`` (:data:`GRID_SYMBOLS`; the key itself when it has none), e.g.
    for an axis label."""
    return GRID_SYMBOLS.get(key, key)


def _value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def grid_text(grid: Mapping[str, Any], keys: Iterable[str] | None = None) -> str:
    """Grid values as the papers write them, ``"α = 0.3, η = 0.9"`` (:data:`GRID_SYMBOLS`), in ``grid``'s order
    (only ``keys`` when given)."""
    shown = list(grid) if keys is None else [k for k in keys if k in grid]
    return ", ".join(f"{GRID_SYMBOLS.get(k, k)} = {_value(grid[k])}" for k in shown)


def run_name(run: Mapping[str, Any], *, method: bool = True, grid: bool = True) -> str:
    """One run's name: the method's (:func:`method_name`) followed by its grid values (:func:`grid_text`),
    ``"NeRV λ = 0.1"``; ``method=False``: the grid values alone (``"α = 0.3"``, the method's name when it has
    none); ``grid=False``: the method's name alone."""
    values = grid_text(run.get("grid") or {}) if grid else ""
    name = method_name(run["method"])
    if not method:
        return values or name
    return f"{name} {values}" if values else name


def run_names(runs: Sequence[Mapping[str, Any]], *, method: bool = True, grid: bool = True) -> list[str]:
    """:func:`run_name` of every run, distinct wherever the runs are: runs that share a name but differ in their
    data set, inputs block or configured entry get, in that order, the first of these that tells them apart in
    parentheses (``"E1 (graph_tsne)"``, ``"t-SNE (dosnes_tsne3_small)"``)."""
    names = [run_name(r, method=method, grid=grid) for r in runs]
    out = list(names)
    for name in set(names):
        idx = [i for i, n in enumerate(names) if n == name]
        for key in ("dataset", "inputs", "group"):
            values = [runs[i].get(key) for i in idx]
            if len(set(values)) > 1:
                for i, v in zip(idx, values):
                    out[i] = f"{name} ({v})"
                break
    return out


def entry_names(rows: Iterable[Mapping[str, Any]], grid_keys: Sequence[str] = ()) -> dict[str, str]:
    """Method entry -> name for the rows of a score table (``method_entry``, ``method`` and the grid columns
    ``grid_keys``; a row's missing or NaN grid value is left out): :func:`run_names` of one run per entry."""
    runs: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = row["method_entry"]
        if entry not in runs:
            grid = {k: row[k] for k in grid_keys if k in row and row[k] == row[k] and row[k] is not None}
            runs[entry] = {"method": row["method"], "grid": grid, "group": entry}
    return dict(zip(runs, run_names(list(runs.values()))))
