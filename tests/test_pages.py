"""Experiment pages stand alone: built from small synthetic runs (score files only) in a temporary directory, no
workflow run. A page shows its title, the line generated from its runs, the figure, the caption, a compact
sortable table in percent, its claims with the scorecard's verdicts and links to its runs; the results table holds
every measure of every run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from cova.experiments.common import records
from cova.experiments.page import claim_card, page_parts, runs_line, unrun_datasets, write_page, write_tables
from cova.experiments.scorecard import scorecard
from cova.metrics.registry import METRICS
from cova.viz.sphere_page import SphereView, sphere_page
from cova.viz.tables import (
    MISSING,
    PERCENT_STEMS,
    family_tables,
    format_value,
    html_table,
    is_percent,
    scores_table,
    write_scores_html,
)


def _run(root: Path, dataset: str, method: str, n: int, **scores: float) -> dict:
    folder = root / "results" / dataset / "in-1" / method / f"{method}-2"
    folder.mkdir(parents=True, exist_ok=True)
    record = {"dataset": dataset, "inputs": "in", "inputs_id": "in-1", "method": method, "method_entry": method,
              "params_id": f"{method}-2", "n_samples": n, "n_cohorts": 3, "status": "ok", **scores}
    (folder / "scores.json").write_text(json.dumps(record))
    return {"dataset": dataset, "inputs": "in", "entry": method, "group": method, "method": method, "grid": {},
            "data": str(root / f"data/{dataset}.npz"), "inputs_file": str(root / "in.npz"),
            "embedding": str(folder / "embedding.npz"), "scores": str(folder / "scores.json"),
            "per_point": str(folder / "per_point.npz")}


CLAIMS = [{"id": "cova:t9:pca-best", "figure": "Table 9", "claim": "PCA <beats> t-SNE on S_n", "test": "best",
           "winner": "pca", "score": "s_n"},
          {"id": "cova:t9:tsne-best", "figure": "Table 9", "claim": "t-SNE is best on S_s", "test": "best",
           "winner": "tsne", "score": "s_s"}]


def _spec(root: Path, title: str = "Table 9 <b>&</b> digits", datasets=("digits",)) -> tuple[dict, dict]:
    runs = []
    for i, d in enumerate(datasets):
        runs.append(_run(root, d, "pca", 1797 - i, s_n=0.8123, s_s=0.5, s_c=np.nan, s_c_aligned=0.25,
                         s_c_r=1.0, trustworthiness=0.9, continuity=0.91))
        runs.append(_run(root, d, "tsne", 1797 - i, s_n=0.7, s_s=0.4, s_c=0.3, s_c_aligned=0.2, s_c_r=1.0,
                         trustworthiness=0.95, continuity=0.9))
    spec = {"name": "t9", "paper": "cova", "renderer": "score_table", "title": title,
            "caption": "Caption <i>with</i> markup & more.", "notes": "", "reference": None, "fallbacks": {},
            "claims": CLAIMS, "runs": runs}
    stem = root / "results/paper/cova/t9"
    stem.parent.mkdir(parents=True, exist_ok=True)
    return spec, {"png": f"{stem}.png", "csv": f"{stem}.csv", "html": f"{stem}.html"}


def test_experiment_page_stands_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec, out = _spec(Path("."))
    table = records(spec)
    table["trustworthiness_test"] = np.nan  # a measure no run has: dropped, and said so
    write_tables(spec, table, out)
    page = Path(out["html"]).read_text()
    assert "<h1>Table 9 &lt;b&gt;&amp;&lt;/b&gt; digits</h1>" in page  # every config text escaped
    assert "Caption &lt;i&gt;with&lt;/i&gt; markup &amp; more." in page and "<i>with" not in page
    assert "PCA &lt;beats&gt; t-SNE" in page
    assert "<img class='figure' src='t9.png'" in page
    assert "Runs: digits (1,797 points); methods: pca, tsne." in page
    # percent with one decimal, the run without S_c shows the missing mark and the note says why
    assert ">81.2</td>" in page and ">25.0</td>" in page and f">{MISSING}</td>" in page
    assert re.search(r"Not computed for any row: [a-z_, ]*trustworthiness_test\.", page)
    # columns the same on every row go into a line above the table, except scores (S_c^(r) = 100 % on both)
    assert "Every row: dataset = digits; inputs = in; status = ok" in page and ">100.0</td>" in page
    assert "inputs_id" not in page and "nan" not in page.lower().replace("nanosec", "")
    # sortable offline: the inline script, numbers carry their value, no external file
    assert "table.sortable th" in page and "data-v='0.8123'" in page
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", page)
    # the claims, with the verdicts the scorecard gives on the same table
    card = scorecard([{**c, "experiment": "t9", "paper": "cova", "paper_data": [], "csv": out["csv"],
                       "reference": None, "fallbacks": {}} for c in CLAIMS])
    assert list(card["verdict"]) == ["holds", "does not hold"]
    rows = re.findall(r"<tr class='([a-z-]+)'><td>(cova:t9:[a-z-]+)</td>", page)
    assert rows == [("holds", "cova:t9:pca-best"), ("does-not-hold", "cova:t9:tsne-best")]
    # links to every run's scatter plot and scores, relative to the page
    for run in spec["runs"]:
        folder = Path(run["scores"]).parent
        assert f"href='../../{folder.relative_to('results').as_posix()}/scatter.png'" in page
        assert (Path(out["html"]).parent / f"../../{folder.relative_to('results').as_posix()}/scores.json").is_file()


def test_claim_card_follows_the_table(tmp_path):
    spec, out = _spec(tmp_path)
    table = records(spec)
    table.loc[table.method == "tsne", "s_s"] = 0.9  # now t-SNE is best on S_s
    table.to_csv(out["csv"], index=False)
    assert list(claim_card(spec, out["csv"])["verdict"]) == ["holds", "holds"]
    assert claim_card({**spec, "claims": []}, out["csv"]).empty


def test_generated_line_and_title_flag(tmp_path):
    spec, out = _spec(tmp_path, title="NeRV Fig. 9: COIL-20 and the S-curve on a sphere", datasets=("digits",))
    assert unrun_datasets(spec["title"], ["digits"]) == ["coil20", "s_curve"]  # "sphere" names the display
    assert unrun_datasets(spec["title"], ["coil20_full", "s_curve"]) == []
    assert unrun_datasets("featMAP on MNIST-1500 and a random matrix", ["mnist1500"]) == ["random_matrix"]
    Path(out["csv"]).write_text("dataset\n")
    intro, _ = page_parts({**spec, "claims": []}, out, [])
    assert "it names coil20, s_curve, which none of these runs uses (their data: digits)" in intro
    spec2, out2 = _spec(tmp_path, title="COIL-20 and digits", datasets=("digits", "coil20"))
    assert runs_line(spec2) == "Runs: digits (1,797 points), coil20 (1,796 points); methods: pca, tsne."
    intro2, _ = page_parts({**spec2, "claims": []}, out2, [])
    assert "class='flag'" not in intro2


def test_sections_and_interactive_page(tmp_path):
    spec, out = _spec(tmp_path)
    table = records(spec)
    table.to_csv(out["csv"], index=False)
    write_page(spec, out, [("Per run", table), ("About the measures", "<p>built <b>here</b></p>")],
               note="A <note>.", title="Own title")
    page = Path(out["html"]).read_text()
    assert "<h1>Own title</h1>" in page and "<h2>Per run</h2>" in page and "<b>here</b>" in page
    assert "A &lt;note&gt;." in page
    intro, rest = page_parts(spec, out, [("Measures (ours)", table)])
    views = [SphereView("v", np.eye(3), np.arange(3), ["a", "b", "c"])]
    html = sphere_page(views, "DOSNES <x>", intro, rest)
    assert html.index("Runs: digits") < html.index("<canvas") < html.index("Measures (ours)")
    assert "<h1>DOSNES &lt;x&gt;</h1>" in html and "holds" in html and "table.sortable th" in html


def test_cell_formats():
    assert format_value("s_c_r_orig", 0.8123) == "81.2" and format_value("knn_accuracy_k10", 1.0) == "100.0"
    assert format_value("paper_s_n", 85.25) == "85.2" and format_value("n_samples", 1797.0) == "1,797"
    assert format_value("kl", 0.52695) == "0.527" and format_value("gamma_objective", 115.0) == "115"
    assert format_value("mean_rank", 12345.6) == "12,346" and format_value("s_n", float("nan")) == MISSING
    assert not is_percent("smoothed_precision_error") and not is_percent("authors_kl") and is_percent("s_n_test")
    # a one-row table keeps its constant columns; a several-row one moves them above
    one = html_table(pd.DataFrame({"dataset": ["a"], "s_n": [0.5]}))
    assert "<th>dataset</th>" in one and "Every row" not in one


def test_every_percent_stem_is_a_registered_measure():
    keys = [k for m in METRICS.values() for k in m.keys]
    for stem in PERCENT_STEMS:
        assert any(k == stem or k.startswith(stem + "_") for k in keys), stem


def test_results_table_holds_every_measure(tmp_path):
    ids = {"inputs_id": "i-1", "params_id": "p-1", "n_cohorts": 3, "status": "ok"}
    runs = [{"dataset": "digits", "inputs": "points", "method": "featmap", "method_entry": "featmap",
             "n_samples": 300, "s_n": 0.6, "trustworthiness_k7": 0.95, "knn_accuracy_k10": 0.9, **ids},
            {"dataset": "digits", "inputs": "graph", "method": "dosnes", "method_entry": "dosnes", "n_samples": 300,
             "s_n": 0.8, "kl": 0.53, "radial_cv": 0.33, "centre_fraction": 0.08, **ids},
            {"dataset": "digits", "inputs": "co", "method": "coembed", "method_entry": "coembed_k20",
             "n_samples": 300, "s_s": 0.52, "gamma_objective": 115.0, "mean_rank": 12.97, **ids},
            {"dataset": "digits", "inputs": "co", "method": "coembed", "method_entry": "coembed_k5",
             "n_samples": 300, "s_s": np.nan, "gamma_objective": np.nan, "mean_rank": np.nan,
             **{**ids, "status": "degenerate"}}]
    table = scores_table(runs)
    for key in ("trustworthiness_k7", "knn_accuracy_k10", "kl", "radial_cv", "gamma_objective", "mean_rank"):
        assert key in table.columns
    assert table.loc[table.method == "dosnes", "kl"].item() == 0.53 and table.kl.isna().sum() == 3
    families = family_tables(table)
    assert [len(part) for _, part in families] == [2, 1, 1]  # the degenerate run stays with its kind
    coembed = families[0][1]
    assert "gamma_objective" in coembed and "radial_cv" not in coembed and "s_n" not in coembed
    write_scores_html(table, tmp_path / "scores.html")
    page = (tmp_path / "scores.html").read_text()
    assert page.count("<table class='sortable'>") == 3 and "nan" not in page and ">52.0</td>" in page


def test_every_renderer_writes_its_page_through_the_page_module():
    """One writer of experiment pages: every renderer module imports :mod:`cova.experiments.page` and builds no
    HTML table of its own."""
    import cova.experiments as experiments
    from cova.experiments.registry import MODULES

    root = Path(experiments.__file__).parent
    for module in sorted(set(MODULES.values())):
        source = (root / (module.replace(".", "/") + ".py")).read_text()
        assert re.search(r"^from \.+page import", source, re.M), module
        assert "write_html_atomic" not in source and ".to_html(" not in source, module
