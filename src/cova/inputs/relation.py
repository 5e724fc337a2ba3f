"""Relation inputs blocks (co-embedding paper Sec. 4): the dataset's X as samples × features (``source: X``), Eq. 44
between two groups of its points (``source: points``) or the hop-distance relation of its link graph
(``source: hop_distances``). Each source declares its options here, beside the builder that reads them."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..constraints import SEED, Block, Declaration, Kinds, ListOf, StrOptions, real
from ..datasets.base import Dataset
from ..errors import UserError
from .subsets import largest_component
from .types import Inputs, Relation

#: ``relation.groups`` (source ``points``): cluster ids or names of the row group, the column group, and the
#: clusters shared by both (split 50/50).
GROUPS = Declaration({side: [ListOf([Integral, str], min_items=0, description="a list of cluster ids or names")]
                      for side in ("rows", "columns", "shared")},
                     defaults={"rows": [], "columns": [], "shared": []})
#: The ``relation`` sub-block of an inputs block, by ``source``.
RELATION_SOURCES = Kinds("relation source", {
    "X": Declaration({}),
    "points": Declaration(
        {"groups": [Block(GROUPS, "a mapping {rows: [...], columns: [...], shared: [...]} of cluster ids or names")],
         "width": [StrOptions({"mean", "median", "max"}), real(0.0, None, closed="neither")],
         "split_seed": [*SEED, None]},
        defaults={"width": "mean", "split_seed": None}),
    "hop_distances": Declaration(
        {"row_fraction": [real(0.0, 1.0, closed="neither")], "rounding": [StrOptions({"round", "floor"})],
         "split_seed": [*SEED, None]},
        defaults={"row_fraction": 0.4, "rounding": "round", "split_seed": None}),
}, key="source")


def nonempty(R: Any) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns of R with a positive sum (the co-embedding normalisations divide by them)."""
    return (np.flatnonzero(np.asarray(R.sum(axis=1)).ravel() > 0),
            np.flatnonzero(np.asarray(R.sum(axis=0)).ravel() > 0))



def build_relation_inputs(dataset: Dataset, spec: dict[str, Any], block: dict[str, Any], seed: int) -> Inputs:
    """A relation block: the dataset's X as samples × features (``source: X``), Eq. 44 between two groups of its
    points (``source: points``) or the hop-distance relation of its link graph (``source: hop_distances``).
    All-zero rows and columns are dropped (the co-embedding normalisations divide by the row and column sums);
    their counts are recorded in the spec facts, and ``labels`` are those of the kept rows. ``spec`` is the
    block as configured (recorded with the facts), ``block`` the same with its declared defaults filled in."""
    source = block["relation"]["source"]
    if source == "points":
        return _point_relation_inputs(dataset, spec, block["relation"], seed)
    if source == "hop_distances":
        return _hop_relation_inputs(dataset, spec, block["relation"], seed)
    if np.any(dataset.X < 0):
        raise UserError("inputs relation: {source: X} needs a non-negative X")
    M = sp.csr_matrix(dataset.X)
    rows, cols = nonempty(M)
    present, y = np.unique(dataset.labels[rows], return_inverse=True)
    names = [dataset.label_names[k] for k in present]
    sample_names, feature_names = dataset.sample_names, dataset.feature_names
    relation = Relation(M[rows][:, cols], [sample_names[i] for i in rows], [feature_names[j] for j in cols],
                        row_labels=y, row_label_names=names)
    facts = {"n_rows": int(rows.size), "n_columns": int(cols.size),
             "n_empty_rows_dropped": int(dataset.n_samples - rows.size),
             "n_empty_columns_dropped": int(dataset.X.shape[1] - cols.size)}
    if rows.size < dataset.n_samples:
        facts["kept_rows"] = rows.tolist()
    return Inputs(labels=y, label_names=names, relation=relation, spec=dict(spec, seed=seed, **facts))



def _two_group_inputs(dataset: Dataset, spec: dict[str, Any], seed: int, R: np.ndarray, row_idx: np.ndarray,
                      col_idx: np.ndarray, facts: dict[str, Any], points: bool,
                      origin: np.ndarray | None = None) -> Inputs:
    """Inputs of a relation between two groups of the dataset's samples (rows ``row_idx``, columns ``col_idx``):
    empty rows and columns dropped, both sides labelled with the dataset's classes and named by its samples. The
    facts ``row_samples`` / ``column_samples`` give each side's samples as indices of the loaded dataset
    (``origin`` maps the indices of a cut dataset back to them)."""
    rows, cols = nonempty(R)
    ri, ci = row_idx[rows], col_idx[cols]
    names = list(dataset.label_names)
    sample_names = dataset.sample_names
    relation = Relation(sp.csr_matrix(R[np.ix_(rows, cols)]), [sample_names[i] for i in ri],
                        [sample_names[j] for j in ci], row_labels=dataset.labels[ri], row_label_names=names,
                        column_labels=dataset.labels[ci], column_label_names=names,
                        row_points=dataset.X[ri] if points else None, column_points=dataset.X[ci] if points else None)
    facts = dict(facts, n_rows=int(rows.size), n_columns=int(cols.size),
                 n_empty_rows_dropped=int(row_idx.size - rows.size),
                 n_empty_columns_dropped=int(col_idx.size - cols.size),
                 row_samples=(ri if origin is None else origin[ri]).tolist(),
                 column_samples=(ci if origin is None else origin[ci]).tolist())
    return Inputs(labels=dataset.labels[ri], label_names=names, relation=relation,
                  spec=dict(spec, seed=seed, **facts))



def _cluster_index(dataset: Dataset, value: int | str, key: str) -> int:
    if isinstance(value, str):
        if value not in dataset.label_names:
            raise UserError(f"inputs relation.groups.{key}: unknown cluster {value!r}; the clusters are "
                             f"{dataset.label_names}")
        return dataset.label_names.index(value)
    if not 0 <= value < dataset.n_cohorts:
        raise UserError(f"inputs relation.groups.{key}: cluster id {value} is not in 0..{dataset.n_cohorts - 1} "
                         f"(clusters {dataset.label_names})")
    return int(value)


def _point_relation_inputs(dataset: Dataset, spec: dict[str, Any], block: dict[str, Any], seed: int) -> Inputs:
    """``relation: {source: points, groups: {rows, columns, shared}, width: mean}``: the dataset's points split
    into the row group (clusters in ``rows``, and a random half of each cluster in ``shared``) and the column group
    (``columns``, the other half of ``shared``: the co-clusters), and r_ij = exp(−‖x_i − y_j‖² / s) with s the mean
    squared distance (co-embedding paper Eq. 44; :func:`cova.affinity.relation.gaussian_relation`). Each shared
    cluster of size n_c gives ⌊n_c/2⌋ rows, drawn with ``split_seed`` (default: the inputs seed)."""
    from ..affinity.relation import gaussian_relation

    groups = block["groups"]
    side: dict[int, str] = {}
    for key in ("rows", "columns", "shared"):
        for value in groups[key]:
            j = _cluster_index(dataset, value, key)
            if j in side:
                raise UserError(f"inputs relation.groups: cluster {dataset.label_names[j]!r} (id {j}) is listed "
                                 f"more than once (in {side[j]!r} and {key!r}); list every cluster exactly once")
            side[j] = key
    missing = [dataset.label_names[j] for j in range(dataset.n_cohorts) if j not in side]
    if missing:
        raise UserError(f"inputs relation.groups: clusters {missing} are not listed; list every cluster exactly "
                         f"once under rows, columns or shared")
    split_seed = seed if block["split_seed"] is None else int(block["split_seed"])
    rng = np.random.default_rng(split_seed)
    in_rows = np.zeros(dataset.n_samples, dtype=bool)
    in_cols = np.zeros(dataset.n_samples, dtype=bool)
    for j in range(dataset.n_cohorts):
        members = np.flatnonzero(dataset.labels == j)
        if side[j] == "rows":
            in_rows[members] = True
        elif side[j] == "columns":
            in_cols[members] = True
        else:
            chosen = rng.permutation(members)[: members.size // 2]
            in_rows[chosen] = True
            in_cols[np.setdiff1d(members, chosen)] = True
    row_idx, col_idx = np.flatnonzero(in_rows), np.flatnonzero(in_cols)
    if row_idx.size == 0 or col_idx.size == 0:
        raise UserError("inputs relation.groups leaves the row or the column group empty; put at least one "
                         "cluster (or a shared cluster of 2 or more points) on each side")
    R, scale = gaussian_relation(dataset.X[row_idx], dataset.X[col_idx], block["width"])
    names = dataset.label_names
    facts = {"split_seed": split_seed, "relation_scale": scale,
             "group_of_cluster": {names[j]: side[j] for j in range(dataset.n_cohorts)},
             "rows_per_cluster": {names[j]: int(np.sum(dataset.labels[row_idx] == j)) for j in range(len(names))},
             "columns_per_cluster": {names[j]: int(np.sum(dataset.labels[col_idx] == j)) for j in range(len(names))}}
    return _two_group_inputs(dataset, spec, seed, R, row_idx, col_idx, facts, points=True)


def _hop_relation_inputs(dataset: Dataset, spec: dict[str, Any], block: dict[str, Any], seed: int) -> Inputs:
    """``relation: {source: hop_distances, row_fraction: 0.4, rounding: round, split_seed: s}``: link data as in
    the co-embedding paper's Sec. 4.3. The dataset's relation graph is made undirected (A + Aᵀ > 0, no self loops)
    and cut to its largest connected component; per class, round(row_fraction·n_c) (``rounding: floor``:
    ⌊row_fraction·n_c⌋) random members, drawn with ``split_seed`` (default: the inputs seed), form the row group,
    the rest the column group; D holds the hop counts between the groups, t = mean(D) and R = exp(−D/t)
    (:func:`cova.affinity.relation.hop_distance_relation`)."""
    from ..affinity.relation import hop_distance_relation, symmetric_adjacency

    if dataset.relations is None:
        raise UserError("inputs relation: {source: hop_distances} needs a dataset with a relation (link) matrix "
                         f"({dataset.meta.get('name', 'this dataset')} has none)")
    if dataset.relations.shape != (dataset.n_samples,) * 2:
        raise UserError(f"inputs relation: {{source: hop_distances}} needs an l×l relation matrix "
                         f"(l = {dataset.n_samples}), got {dataset.relations.shape}")
    dataset, component = largest_component(dataset)
    A = symmetric_adjacency(dataset.relations)
    fraction = float(block["row_fraction"])
    rounding = block["rounding"]
    split_seed = seed if block["split_seed"] is None else int(block["split_seed"])
    rng = np.random.default_rng(split_seed)
    in_rows = np.zeros(dataset.n_samples, dtype=bool)
    for j in range(dataset.n_cohorts):
        members = np.flatnonzero(dataset.labels == j)
        k = int(np.floor(fraction * members.size + (0.5 if rounding == "round" else 0.0)))
        in_rows[rng.choice(members, size=k, replace=False)] = True
    row_idx, col_idx = np.flatnonzero(in_rows), np.flatnonzero(~in_rows)
    if row_idx.size == 0 or col_idx.size == 0:
        raise UserError(f"inputs relation.row_fraction={fraction} leaves the row or the column group empty")
    R, D, t = hop_distance_relation(A, row_idx, col_idx)
    facts = {"split_seed": split_seed, "row_fraction": fraction, "rounding": rounding, "t": t,
             "max_hop_distance": int(D.max()), "lcc_size": int(dataset.n_samples),
             "lcc_edges": int(sp.triu(A, k=1).nnz), **component,
             "rows_per_class": np.bincount(dataset.labels[row_idx], minlength=dataset.n_cohorts).tolist(),
             "columns_per_class": np.bincount(dataset.labels[col_idx], minlength=dataset.n_cohorts).tolist()}
    origin = np.asarray(facts.pop("kept_rows")) if "kept_rows" in facts else None
    return _two_group_inputs(dataset, spec, seed, R, row_idx, col_idx, facts, points=False, origin=origin)

