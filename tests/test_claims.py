"""Claims as data (cova.experiments.claims) and the scorecard (cova.experiments.scorecard): every predicate kind
flips its verdict when the table is perturbed so that its statement stops being true, the verdicts combine parts as
documented, bad claims are refused naming the key, and the committed record names only claims that still exist."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import spearmanr, ttest_rel

from cova.config import ConfigError, Plan, read_config_file, resolve_overlay, validate_config
from cova.constraints import OptionError, check_options
from cova.experiments.claims import TESTS, VERDICTS, Part, check_claims, evaluate, verdict
from cova.experiments.run_history import head, run_history
from cova.experiments.scorecard import COLUMNS, reproduction_record, scorecard, write_record, write_scorecard

ROOT = Path(__file__).resolve().parents[1]


def _claim(**options):
    return check_options(TESTS, {"id": "cova:t:x", "figure": "Fig. 0", "claim": "a claim", **options}, "claim")


def _verdict(claim, table):
    return verdict(claim, evaluate(claim, table)).verdict


def _methods(values: dict[str, list[float]], **extra) -> pd.DataFrame:
    rows = [{"dataset": "d", "method": m, "status": "ok", "s": v, **{k: e[i] for k, e in extra.items()}}
            for m, vs in values.items() for i, v in enumerate(vs)]
    return pd.DataFrame(rows)


def _folds(a: list[float], b: list[float]) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": "d", "inputs": f"f{i}", "method": m, "status": "ok", "s": v}
                         for m, vs in (("a", a), ("b", b)) for i, v in enumerate(vs)])


# Each predicate kind: (claim options, a table where the claim holds, the same table perturbed so that it does not)
CASES = {
    "value": ({"test": "value", "scores": ["s"], "tol": 10},
              pd.DataFrame({"dataset": ["d"], "method": ["a"], "status": ["ok"], "s": [0.52], "paper_s": [50.0]}),
              pd.DataFrame({"dataset": ["d"], "method": ["a"], "status": ["ok"], "s": [0.75], "paper_s": [50.0]})),
    "order": ({"test": "order", "order": ["a", "b", "c"], "score": "s"},
              _methods({"a": [0.9, 0.8], "b": [0.6], "c": [0.2]}),
              _methods({"a": [0.1, 0.2], "b": [0.6], "c": [0.7]})),
    "best": ({"test": "best", "winner": "b", "score": "s", "higher": False},
             _methods({"a": [0.9], "b": [0.1], "c": [0.3]}),
             _methods({"a": [0.9], "b": [0.4], "c": [0.3]})),
    "trend": ({"test": "trend", "x": "alpha", "score": "s", "sign": -1},
              _methods({"a": [0.9, 0.7, 0.4]}, alpha=[0.1, 0.5, 0.9]),
              _methods({"a": [0.4, 0.7, 0.9]}, alpha=[0.1, 0.5, 0.9])),
    "comparable": ({"test": "comparable", "a": "a", "b": "b", "score": "s", "tol": 5},
                   _methods({"a": [0.80], "b": [0.78]}),
                   _methods({"a": [0.80], "b": [0.70]})),
    "not_worse": ({"test": "not_worse", "a": "a", "score": "s", "higher": False, "tol": 5},
                  _methods({"a": [0.22], "b": [0.20], "c": [0.40]}),
                  _methods({"a": [0.30], "b": [0.20], "c": [0.24]})),
    "bound": ({"test": "bound", "score": "s", "below": 20, "where": {"method": "a"}},
              _methods({"a": [0.10, 0.12], "b": [0.9]}),
              _methods({"a": [0.10, 0.40], "b": [0.9]})),
    "paired": ({"test": "paired", "a": "a", "b": "b", "score": "s", "pair": "inputs", "higher": False},
               _folds([0.10, 0.12, 0.11, 0.09, 0.10], [0.20, 0.21, 0.19, 0.22, 0.20]),
               _folds([0.10, 0.30, 0.11, 0.29, 0.10], [0.20, 0.21, 0.19, 0.22, 0.20])),
}


def test_every_predicate_kind_has_a_flip_case():
    assert set(CASES) == set(TESTS) - {"not_testable"}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_perturbing_the_table_flips_the_verdict(kind):
    options, holds, fails = CASES[kind]
    claim = _claim(**options)
    assert _verdict(claim, holds) == "holds"
    assert _verdict(claim, fails) == "does not hold"


def test_order_fails_when_every_pair_is_reversed_and_names_the_failing_pairs():
    claim = _claim(test="order", order=["a", "b", "c"], score="s")
    assert _verdict(claim, _methods({"a": [0.1], "b": [0.5], "c": [0.9]})) == "does not hold"
    v = verdict(claim, evaluate(claim, _methods({"a": [0.9], "b": [0.3], "c": [0.5]})))
    assert v.verdict == "partly" and v.detail == "does not hold for b > c"


def test_order_tiers_and_comparable_lists():
    """A tier ("A and B ahead of C and D") compares every member with every member of the next tier; comparable
    with a list compares A with each."""
    claim = _claim(test="order", order=[["a", "b"], ["c", "d"]], score="s")
    table = _methods({"a": [0.9], "b": [0.7], "c": [0.6], "d": [0.75]})
    v = verdict(claim, evaluate(claim, table))
    assert v.verdict == "partly" and v.detail == "does not hold for b > d"
    assert len(evaluate(claim, table)) == 4
    with pytest.raises(OptionError, match="twice"):
        _claim(test="order", order=[["a", "b"], ["b"]], score="s")
    close = _claim(test="comparable", a="a", b=["b", "c"], score="s", tol=5)
    assert _verdict(close, _methods({"a": [0.5], "b": [0.52], "c": [0.47]})) == "holds"
    assert _verdict(close, _methods({"a": [0.5], "b": [0.52], "c": [0.30]})) == "partly"


def test_aggregate_best_compares_each_values_best_row():
    """NeRV's curve over its λ grid against the others' points: A's best row beats B although A's mean does not."""
    table = _methods({"a": [0.9, 0.1, 0.2], "b": [0.5]})
    assert _verdict(_claim(test="best", winner="a", score="s"), table) == "does not hold"
    assert _verdict(_claim(test="best", winner="a", score="s", aggregate="best"), table) == "holds"
    assert _verdict(_claim(test="order", order=["b", "a"], score="s", aggregate="best", higher=False),
                    table) == "does not hold"


def test_a_list_of_scores_gives_one_part_per_score():
    table = _methods({"a": [0.9], "b": [0.5]}, t=[0.2, 0.6])
    claim = _claim(test="best", winner="a", score=["s", "t"])
    v = verdict(claim, evaluate(claim, table))
    assert v.verdict == "partly" and v.detail == "does not hold for t: a best"
    assert _verdict({**claim, "score": ["s"]}, table) == "holds"


def test_best_top_k_is_among_the_first_k():
    table = _methods({"a": [0.9], "b": [0.7], "c": [0.6], "d": [0.5]})
    assert _verdict(_claim(test="best", winner="c", score="s", top=3), table) == "holds"
    assert _verdict(_claim(test="best", winner="c", score="s", top=2), table) == "does not hold"
    assert _verdict(_claim(test="best", winner="c", score="s"), table) == "does not hold"


def test_paired_no_difference_flips_with_a_clear_difference():
    claim = _claim(test="paired", a="a", b="b", score="s", pair="inputs", expect="no_difference")
    assert _verdict(claim, _folds([0.10, 0.22, 0.15, 0.18], [0.12, 0.19, 0.17, 0.16])) == "holds"
    assert _verdict(claim, _folds([0.10, 0.12, 0.11, 0.09], [0.20, 0.21, 0.19, 0.22])) == "does not hold"


def test_trend_agrees_with_scipy_and_monotone_is_stricter():
    table = _methods({"a": [0.9, 0.5, 0.6, 0.2]}, alpha=[0.1, 0.3, 0.6, 0.9])
    parts = evaluate(_claim(test="trend", x="alpha", score="s", sign=-1), table)
    rho = spearmanr(table["alpha"], table["s"]).statistic
    assert parts[0].holds and f"rho {rho:.2f}" in parts[0].ours
    assert _verdict(_claim(test="trend", x="alpha", score="s", sign=-1, monotone=True), table) == "does not hold"


def test_paired_test_matches_scipy_and_needs_the_better_mean():
    a, b = [0.10, 0.14, 0.11, 0.13], [0.12, 0.15, 0.14, 0.15]
    p = ttest_rel(a, b).pvalue
    part = evaluate(_claim(test="paired", a="a", b="b", score="s", pair="inputs", higher=False), _folds(a, b))[0]
    assert part.holds == (p < 0.05) and f"p = {p:.3g}" in part.ours
    # the same p-value with A worse: does not hold
    assert not evaluate(_claim(test="paired", a="a", b="b", score="s", pair="inputs"), _folds(a, b))[0].holds


def test_per_groups_give_parts_and_most_needs_more_than_half():
    table = pd.concat([_methods({"a": [0.9], "b": [0.1]}).assign(dataset=d) for d in ("x", "y", "z")]
                      + [_methods({"a": [0.1], "b": [0.9]}).assign(dataset="w")])
    claim = _claim(test="order", order=["a", "b"], score="s", per=["dataset"])
    v = verdict(claim, evaluate(claim, table))
    assert v.verdict == "partly" and "dataset = w" in v.detail
    assert _verdict(_claim(test="order", order=["a", "b"], score="s", per=["dataset"], most=True), table) == "holds"
    half = table[table["dataset"].isin(["x", "w"])]
    assert _verdict(_claim(test="order", order=["a", "b"], score="s", per=["dataset"], most=True), half) == "partly"


def test_rows_that_failed_or_are_missing_make_a_claim_not_testable():
    claim = _claim(test="order", order=["a", "b"], score="s")
    table = _methods({"a": [0.9], "b": [0.1]})
    table.loc[table["method"] == "b", "status"] = "degenerate"
    assert _verdict(claim, table) == "not testable here"
    assert _verdict(_claim(test="order", order=["a", "b"], score="missing"), table) == "not testable here"
    assert verdict(_claim(test="not_testable", reason="no data"), []).detail == "no data"


def test_where_selects_rows_with_numbers_compared_by_value():
    table = _methods({"a": [0.9, 0.1]}, alpha=[0.1, 0.30000000000000004])
    claim = _claim(test="bound", score="s", above=50, where={"alpha": 0.1})
    assert _verdict(claim, table) == "holds"
    assert _verdict({**claim, "where": {"alpha": [0.3]}}, table) == "does not hold"


@pytest.mark.parametrize("options, key, words", [
    ({"test": "bound", "score": "s"}, "claim.above", "exactly one"),
    ({"test": "trend", "x": "a", "score": "s", "sign": 2}, "claim.sign", "allowed"),
    ({"test": "order", "order": ["a"], "score": "s"}, "claim.order", "at least 2"),
    ({"test": "order", "order": ["a", "a"], "score": "s"}, "claim.order", "twice"),
    ({"test": "frobnicate"}, "claim.test", "allowed values"),
    ({"test": "best", "winner": "a"}, "claim.score", "required"),
])
def test_bad_claims_are_refused_naming_the_key(options, key, words):
    with pytest.raises(OptionError) as err:
        _claim(**options)
    assert err.value.key == key and words in str(err.value)


def test_claim_ids_are_unique_and_start_with_their_paper():
    claim = {"id": "cova:t:x", "figure": "F", "claim": "c", "test": "not_testable", "reason": "r"}
    with pytest.raises(OptionError, match="same id"):
        check_claims({"e1": {"paper": "cova", "claims": [claim]}, "e2": {"paper": "cova", "claims": [claim]}})
    with pytest.raises(OptionError, match="starts with its paper"):
        check_claims({"e1": {"paper": "nerv", "claims": [claim]}})


def test_overlay_keeps_the_claims_of_excluded_experiments(tmp_path):
    base = read_config_file(ROOT / "config.yaml")
    name = next(n for n, e in base["paper"]["experiments"].items() if e["paper"] == "cova")
    base["paper"]["experiments"][name]["claims"] = [
        {"id": "cova:t:x", "figure": "F", "claim": "c", "test": "bound", "score": "s_n", "above": 50}]
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    overlay = {"overlay": {"base": str(tmp_path / "base.yaml"), "exclude_experiments": {name: "not today"}}}
    config = resolve_overlay(overlay, ROOT)
    validate_config(config)
    claims = [c for c in Plan(config).claims() if c["experiment"] == name]
    assert claims and all(c["csv"] is None and c["excluded"] == "not today" for c in claims)
    card = scorecard(claims)
    assert set(card["verdict"]) == {"not testable here"} and card["detail"].str.contains("not today").all()


def test_scorecard_rows_causes_and_record(tmp_path):
    csv = tmp_path / "t.csv"
    _methods({"a": [0.9], "b": [0.1]}).to_csv(csv, index=False)
    claims = [{**_claim(test="order", order=["a", "b"], score="s"), "id": "cova:t:holds"},
              {**_claim(test="order", order=["b", "a"], score="s"), "id": "cova:t:fails"},
              {**_claim(test="order", order=["b", "a"], score="s", cause="measured cause", evidence="a test"),
               "id": "cova:t:fails-with-cause"},
              {**_claim(test="not_testable", reason="data not offline"), "id": "cova:t:untestable"}]
    claims = [{**c, "experiment": "t", "paper": "cova", "csv": str(csv), "paper_data": ["d"]} for c in claims]
    card = write_scorecard(claims, tmp_path / "s.csv", tmp_path / "s.html", about="<b>x</b>")
    assert list(card.columns) == COLUMNS and set(card["verdict"]) <= set(VERDICTS)
    assert list(card["verdict"]) == ["holds", "does not hold", "does not hold", "not testable here"]
    assert list(card["cause"]) == ["", "unexplained", "measured cause", ""]
    assert card["data"].iloc[0] == "paper's: d"
    page = (tmp_path / "s.html").read_text()
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page  # config text reaches HTML escaped
    repo, jobs = _repo_with_a_run(tmp_path)
    text = write_record(tmp_path / "s.csv", tmp_path / "r.md", repo, jobs, "2026-11-28", "config.yaml")
    assert "| COVA | 4 | 1 | 0 | 2 | 1 |" in text
    assert "This is the first record" in text
    changed = card.assign(verdict=["does not hold", *card["verdict"][1:]])
    changed.to_csv(tmp_path / "s.csv", index=False)
    text = write_record(tmp_path / "s.csv", tmp_path / "r.md", repo, jobs, "2026-11-29", "config.yaml")
    assert "- `cova:t:holds`: holds → does not hold" in text and "This is the first record" not in text


def _git(repo, *args, at=1_700_000_000):
    """git in ``repo`` with the reflog entry it writes dated at unix time ``at``."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": f"@{at} +0000", "GIT_COMMITTER_DATE": f"@{at} +0000"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def _repo_with_a_run(tmp_path):
    """A checkout made at its third commit, moved back to the first, where 2 jobs ran, then forward to the third
    (the second touches src/, the third only the docs), where 3 jobs ran; it has uncommitted changes now."""
    t = 1_700_000_000
    repo, jobs = tmp_path / "repo", tmp_path / "repo" / "results" / "benchmarks" / "jobs"
    (repo / "src").mkdir(parents=True)
    jobs.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "src" / "a.py").write_text("x = 1\n")
    _git(repo, "add", "src")
    _git(repo, "commit", "-q", "-m", "first", at=t)
    first = _git(repo, "rev-parse", "--short", "HEAD")
    (repo / "src" / "a.py").write_text("x = 2\n")
    _git(repo, "commit", "-q", "-am", "step clip changes x", at=t + 100)
    (repo / "README.md").write_text("docs\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "docs only", at=t + 200)
    _git(repo, "checkout", "-q", first, at=t + 300)
    _git(repo, "checkout", "-q", "main", at=t + 400)
    for name, end in [("early0", t + 301), ("early1", t + 302), ("late0", t + 410), ("late1", t + 411),
                      ("late2", t + 412)]:
        (jobs / f"{name}.tsv").write_text("s\n")
        os.utime(jobs / f"{name}.tsv", (end, end))
    (repo / "src" / "a.py").write_text("x = 3\n")
    return repo, jobs


def test_the_record_names_every_commit_the_run_ran_at_and_the_changes_between_them(tmp_path):
    repo, jobs = _repo_with_a_run(tmp_path)
    commits = _git(repo, "log", "--reverse", "--format=%h").splitlines()
    history = run_history(repo, jobs)
    # only the checkouts under which jobs ended; the changes skip the commits that touch nothing the jobs compute
    assert [(s.commit, s.jobs) for s in history] == [(commits[0], 2), (commits[2], 3)]
    assert [c.split(" ", 1)[1] for c in history[1].changes] == ["step clip changes x"]  # not the docs-only commit
    assert head(repo) == f"{commits[2]} with uncommitted changes"
    card = pd.DataFrame([{**dict.fromkeys(COLUMNS, ""), "paper": "cova", "claim_id": "cova:t:x", "verdict": "holds"}])
    text = reproduction_record(card, history, head(repo), "2026-11-28", "config.yaml")
    assert f"commits `{commits[0]}`, `{commits[2]}`" in text and f"at commit `{commits[2]} with uncommitted" in text
    assert f"| `{commits[2]}` |" in text and "| 3 | 1 |" in text and "step clip changes x" in text


def test_a_claim_that_does_not_fit_its_table_is_not_testable_and_the_others_still_get_verdicts(tmp_path):
    csv = tmp_path / "t.csv"
    _methods({"a": [0.9, 0.7], "b": [0.1, 0.2]}, alpha=["low", "high"]).to_csv(csv, index=False)
    claims = [{**_claim(test="trend", x="alpha", score="s", sign=-1), "id": "cova:t:text-x"},
              {**_claim(test="order", order=["a", "b"], score="s"), "id": "cova:t:fine"}]
    card = scorecard([{**c, "experiment": "t", "paper": "cova", "csv": str(csv)} for c in claims])
    assert list(card["verdict"]) == ["not testable here", "holds"]
    assert "does not fit the claim" in card["detail"].iloc[0]


def test_part_names_carry_the_group():
    parts = evaluate(_claim(test="best", winner="a", score="s", per=["dataset"]),
                     _methods({"a": [0.9], "b": [0.1]}))
    assert parts == [Part("dataset = d: a best", True, "a 90, best other b 10")]


def test_config_claims_are_valid_and_the_record_names_only_existing_claims():
    plan = Plan(read_config_file(ROOT / "config.yaml"))
    ids = {c["id"] for c in plan.claims()}
    record = ROOT / "docs" / "reproduction.md"
    if record.is_file():
        # a claim row starts with its id, paper:figure:name (the run table's rows start with a commit)
        named = set(re.findall(r"^\| `([a-z0-9_]+:[^`]+)` \|", record.read_text(encoding="utf-8"), flags=re.M))
        assert len(named) >= 200
        assert named and named <= ids, sorted(named - ids)


#: A reference to the papers' figures, tables, sections, equations or appendices ("Fig. H.14", "Figs. 4-7").
_REFERENCE = re.compile(r"\b(?:Figs?|Tables?|Secs?|Eqs?|App|Appendix|Supp)\.?\s*[A-Z]?\.?\d+(?:\.\d+)*"
                        r"(?:\s*(?:-|–|,|and)\s*[A-Z]?\.?\d+(?:\.\d+)*)*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")


def test_notes_hold_no_number_the_dag_does_not_compute():
    """Our choice: a note keeps the reading and the reasons, and its numbers are settings the experiment states
    (its title or caption) or references to the paper's figures and sections; measured numbers live in the tables
    and the scorecard."""
    config = read_config_file(ROOT / "config.yaml")
    offending = {}
    for name, e in config["paper"]["experiments"].items():
        stated = set(_NUMBER.findall(f"{e.get('title', '')} {e.get('caption', '')}"))
        numbers = set(_NUMBER.findall(_REFERENCE.sub(" ", e.get("notes", "")))) - stated
        if numbers:
            offending[name] = sorted(numbers)
    assert not offending, offending


def test_config_rejects_a_bad_claim_before_any_job(tmp_path):
    config = read_config_file(ROOT / "config.yaml")
    name = next(iter(config["paper"]["experiments"]))
    config["paper"]["experiments"][name]["claims"] = [{"id": "cova:x:y", "figure": "F", "claim": "c",
                                                       "test": "trend", "x": "alpha", "score": "s_n", "sign": 0}]
    with pytest.raises(ConfigError, match=rf"paper\.experiments\.{name}\.claims\[0\]\.sign"):
        validate_config(config)


def test_scale_one_compares_raw_units():
    table = _methods({"a": [3.0], "b": [5.0]})
    claim = _claim(test="bound", score="s", below=4, scale=1, where={"method": "a"})
    assert _verdict(claim, table) == "holds"
    assert np.isclose(float(evaluate(claim, table)[0].ours.split()[-1]), 3.0)


def test_claims_name_only_runs_their_experiment_has():
    """A typo in a claim (a method, dataset, inputs block or method entry its experiment does not run) would make it
    'not testable' at every scale: every name a tested claim of config.yaml selects or compares is one of its
    experiment's runs (a renderer that pools a grid names the configured entry; the link renderers add 'prototypes'
    rows)."""
    plan = Plan(read_config_file(ROOT / "config.yaml"))
    groups = {run: group for group, runs in plan.entry_groups.items() for run in runs}
    bad = []
    for c in plan.claims():
        if c["test"] == "not_testable":
            continue
        runs = plan.experiment_runs(c["experiment"])
        values = {"dataset": {d for d, _, _ in runs}, "inputs": {i for _, i, _ in runs},
                  "method": {plan.method_jobs[e].method for _, _, e in runs},
                  "method_entry": {e for _, _, e in runs} | {groups[e] for _, _, e in runs} | {"prototypes"},
                  "group": {groups[e] for _, _, e in runs}}
        named = [(col, v) for col, wanted in (c.get("where") or {}).items()
                 for v in (wanted if isinstance(wanted, list) else [wanted])]
        by = c.get("by", "method")
        for key in ("order", "winner", "a", "b", "others"):
            for item in c.get(key) if isinstance(c.get(key), list) else [c.get(key)]:
                named += [(by, v) for v in (item if isinstance(item, list) else [item]) if v is not None]
        bad += [(c["id"], col, v) for col, v in named if col in values and v not in values[col]]
    assert not bad, bad
