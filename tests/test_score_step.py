"""The metric registry and the score step (cova.metrics.registry, cova.metrics.score): the same numbers as the
metric functions called directly, split and degenerate records, and metrics skipped for what the inputs lack."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cova.embedding import Embedding
from cova.metrics import cohort_centres, cohort_graph, s_c, s_c_r, s_n, s_s, trustworthiness_continuity
from cova.metrics.centres import procrustes_align
from cova.metrics.cohort_graphs import original_graph
from cova.metrics.registry import METRICS, ScoreData, evaluate, nan_scores, register
from cova.metrics.score import score_run
from cova.metrics.summary import SCORE_KEYS, compute_scores


def _embedding(inputs, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return inputs.prototypes[inputs.labels] + rng.normal(0, 0.8, (inputs.labels.size, 2))


def test_compute_scores_equal_the_metric_functions(toy_inputs):
    inp = toy_inputs
    Z = _embedding(inp)
    got = compute_scores(inp.X, Z, inp.labels, inp.prototypes, n_neighbors=5, kappa=1)
    t, c = trustworthiness_continuity(inp.X, Z, 5)
    assert got == {"s_n": s_n(inp.X, Z, inp.labels), "s_n_cohort_kbar": s_n(inp.X, Z, inp.labels, per_cohort=True),
                   "s_s": s_s(Z, inp.labels),
                   "s_c": s_c(Z, inp.labels, inp.prototypes),
                   "s_c_aligned": s_c(procrustes_align(Z, inp.labels, inp.prototypes), inp.labels, inp.prototypes),
                   "s_c_r": s_c_r(Z, inp.labels, inp.prototypes, kappa=1), "trustworthiness": t, "continuity": c}
    assert list(got) == SCORE_KEYS


def test_score_run_adds_the_original_graph_recall(toy_inputs):
    inp = toy_inputs
    Z = _embedding(inp)
    scores = score_run(inp, Embedding(Z=Z), n_neighbors=5, kappa=1)
    assert {k: scores[k] for k in SCORE_KEYS} == compute_scores(inp.X, Z, inp.labels, inp.prototypes,
                                                                n_neighbors=5, kappa=1)
    g = original_graph(inp, 1)
    shown = cohort_graph(cohort_centres(Z, inp.labels, inp.n_cohorts), 1)
    assert scores["s_c_r_orig"] == np.sum(g & shown) / np.sum(g)
    assert set(scores) == set(SCORE_KEYS) | {"s_c_r_orig"}


def test_score_run_scores_train_and_test_rows_separately(toy_inputs):
    train = np.arange(toy_inputs.labels.size) % 2 == 0
    inp = dataclasses.replace(toy_inputs, train=train, W=toy_inputs.W[train][:, train])
    Z = _embedding(inp)
    scores = score_run(inp, Embedding(Z=Z), n_neighbors=3, kappa=1)
    for rows, suffix in ((train, ""), (~train, "_test")):
        ref = compute_scores(inp.X[rows], Z[rows], inp.labels[rows], inp.prototypes, n_neighbors=3, kappa=1)
        assert {k: scores[k + suffix] for k in SCORE_KEYS} == ref
        assert f"s_c_r_orig{suffix}" in scores
    assert scores["n_train"] == train.sum() and scores["n_test"] == (~train).sum()


def test_degenerate_runs_get_nan_for_every_table_score(toy_inputs):
    Z = np.full((toy_inputs.labels.size, 2), np.nan)
    scores = score_run(toy_inputs, Embedding(Z=Z, status="degenerate"))
    assert set(scores) == set(SCORE_KEYS) and all(np.isnan(v) for v in scores.values())


def test_metrics_without_their_inputs_are_skipped(toy_inputs):
    inp = toy_inputs
    Z = _embedding(inp)
    data = ScoreData(Z=Z, n_cohorts=inp.n_cohorts, labels=inp.labels)
    assert set(evaluate(data)) == {"s_s"}
    assert set(nan_scores(data)) == {"s_s"}
    with_prototypes = dataclasses.replace(data, prototypes=inp.prototypes)
    assert set(evaluate(with_prototypes)) == {"s_s", "s_c", "s_c_aligned", "s_c_r"}


def test_every_metric_declares_needs_that_score_data_has():
    fields = {f.name for f in dataclasses.fields(ScoreData)}
    for m in METRICS.values():
        assert m.needs <= fields, m.name
        assert m.keys and m.scope in ("rows", "all")
    with pytest.raises(ValueError, match="already registered"):
        register("s_n", needs=(), keys=("x",))(lambda d: {})
