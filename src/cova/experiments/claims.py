"""A paper's claims about its own results, as data: each a predicate over one experiment's table, and its verdict.

A claim sits in the config beside the experiment that tests it (``paper.experiments.<name>.claims``)::

    - id: cova:fig2:e1-sn-falls          # <paper>:<figure or table>:<short name>, unique over the config
      figure: Fig. 2
      claim: E1's neighbourhood preservation S_n falls as alpha grows
      test: trend                        # the predicate kind (:data:`TESTS`)
      score: s_n
      x: alpha
      sign: -1
      where: {method: cova_e1}           # the table rows it speaks of (column -> value or list of values)
      per: [dataset]                     # one part per group of rows; the verdict combines the parts

Every kind takes the :data:`COMMON` options; its own options are declared beside its predicate below, in the
form every configurable thing uses (:mod:`cova.constraints`). A predicate sees the rows of the table that
``where`` selects (runs with status ``ok``), one group of ``per`` at a time, and returns its **parts**: a name,
whether it holds (``None`` when the table lacks what it needs), and our numbers. The verdict
(:func:`verdict`) is ``holds`` when every part holds, ``does not hold`` when none does, ``partly`` otherwise
(naming the parts that do not hold); with ``most: true`` ("on most data sets") more than half of the parts
suffice. A claim without a test here is ``test: not_testable`` with its ``reason``.

Thresholds (``tol``, ``margin``, ``above``, ``below``) are in points of ``scale`` × the table's value (percent
for the scores, which the tables hold as fractions; ``scale: 1`` for measures in their own units); they come
from the paper's wording, fixed before looking at our numbers (docs/claims.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..constraints import (
    NON_EMPTY_STR,
    REQUIRED,
    Declaration,
    IntOptions,
    Kinds,
    ListOf,
    OptionError,
    StrOptions,
    StrPattern,
    check_options,
    declare,
    integer,
    real,
)
from .common import DEVIATION_POINTS

__all__ = ["TESTS", "COMMON", "VERDICTS", "Part", "Verdict", "check_claims", "select", "evaluate", "verdict"]

HOLDS, PARTLY, FAILS, UNTESTABLE = "holds", "partly", "does not hold", "not testable here"
#: The four verdicts, in the order the scorecard counts them.
VERDICTS = (HOLDS, PARTLY, FAILS, UNTESTABLE)

_SELECTOR = [dict, None]
_VALUE = [str, int, float]
_AGGREGATE = [StrOptions({"mean", "best"})]
#: A score column, or a list of them: "A is best in both precision and recall" is one part per score.
_SCORE = NON_EMPTY_STR + [ListOf([str])]
_COLUMNS = [ListOf([str]), None]
_POINTS = [real(0, None)]


@dataclass(frozen=True)
class Part:
    """One part of a claim: ``name`` (e.g. ``"cova_e1 > cova_e4"`` or ``"dataset = cora"``), whether it holds
    (``None``: the table lacks what it needs) and our numbers, as text."""

    name: str
    holds: bool | None
    ours: str
    paper: str = ""


@dataclass(frozen=True)
class Verdict:
    verdict: str
    detail: str
    ours: str
    paper_value: str


def _f(v: float, scale: float) -> str:
    return "nan" if not np.isfinite(v) else f"{v * scale:.3g}"


def _means(rows: pd.DataFrame, by: str, score: str, aggregate: str = "mean", higher: bool = True) -> pd.Series:
    """The ``score`` of each value of ``by`` over its rows: their mean, or with ``aggregate: best`` the best of
    them (the highest, or the lowest with ``higher: false``), as "A's curve over its parameter grid beats B"."""
    if by not in rows or score not in rows:
        return pd.Series(dtype=float)
    groups = rows.groupby(by, sort=False)[score]
    if aggregate == "best":
        return groups.max() if higher else groups.min()
    return groups.mean()


def _value_of(means: pd.Series, key: Any) -> float:
    for k, v in means.items():
        if _same(k, key):
            return float(v)
    return np.nan


# --- the predicate kinds -------------------------------------------------------------------------------------


@declare({"scores": [ListOf([str])], "tol": _POINTS, "paper_column": NON_EMPTY_STR + [None]}, check_calls=False)
def value(rows: pd.DataFrame, *, scores: list[str], tol: float = DEVIATION_POINTS, paper_column: str | None = None,
          scale: float = 100.0) -> list[Part]:
    """A printed number: every selected cell of ``scores`` within ``tol`` points of the paper's value (the
    table's ``paper_<score>`` column, which the experiment's ``reference`` fills, or ``paper_column`` where a
    renderer writes the paper's numbers in a column of their own, in the units of ``scale`` × ours). One part
    per row and score."""
    parts = []
    for _, row in rows.iterrows():
        name = " ".join(str(row[c]) for c in ("dataset", "method_entry", "quantity") if c in row)
        for s in scores:
            ours, paper = float(row.get(s, np.nan)), float(row.get(paper_column or f"paper_{s}", np.nan))
            ok = bool(abs(ours * scale - paper) <= tol) if np.isfinite(ours) and np.isfinite(paper) else None
            parts.append(Part(f"{name} {s}", ok, f"{s} {_f(ours, scale)}",
                              f"{s} {paper:g}" if np.isfinite(paper) else ""))
    return parts


def _tier(item: Any) -> list[Any]:
    return list(item) if isinstance(item, (list, tuple)) else [item]


def _order_rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    names = [str(v) for item in options["order"] for v in _tier(item)]
    if len(set(names)) != len(names):
        return "order", "names a value twice"
    return None


@declare({"order": [ListOf(_VALUE + [ListOf(_VALUE)], min_items=2)], "score": _SCORE, "by": NON_EMPTY_STR,
          "higher": ["boolean"], "margin": _POINTS, "aggregate": _AGGREGATE}, rules=[_order_rule], check_calls=False)
def order(rows: pd.DataFrame, *, order: list[Any], score: str, by: str = "method", higher: bool = True,
          margin: float = 0.0, aggregate: str = "mean", scale: float = 100.0) -> list[Part]:
    """An ordering, "A > B > C" (``higher: false``: "A < B < C"): the mean ``score`` of each value of ``by`` over
    the selected rows, each consecutive pair apart by more than ``margin`` points in the stated direction. One
    part per consecutive pair; two names make "A beats B". An item may be a list, a tier ("A, B and C are the top
    performers, ahead of D and E"): every member of a tier is ahead of every member of the next. ``aggregate:
    best`` compares each value's best row instead of the mean (:func:`_means`)."""
    means = _means(rows, by, score, aggregate, higher)
    sign = 1.0 if higher else -1.0
    parts = []
    for upper, lower in zip(order, order[1:]):
        for a in _tier(upper):
            for b in _tier(lower):
                va, vb = _value_of(means, a), _value_of(means, b)
                ok = bool(sign * (va - vb) * scale > margin) if np.isfinite(va) and np.isfinite(vb) else None
                parts.append(Part(f"{a} {'>' if higher else '<'} {b}", ok,
                                  f"{a} {_f(va, scale)}, {b} {_f(vb, scale)}"))
    return parts


@declare({"winner": _VALUE, "score": _SCORE, "by": NON_EMPTY_STR, "higher": ["boolean"],
          "aggregate": _AGGREGATE, "top": [integer(1, None)]}, check_calls=False)
def best(rows: pd.DataFrame, *, winner: Any, score: str, by: str = "method", higher: bool = True,
         aggregate: str = "mean", top: int = 1, scale: float = 100.0) -> list[Part]:
    """"A is best" (``top: k``: "A is among the top k"): fewer than ``top`` other values of ``by`` in the selected
    rows have a mean ``score`` (``aggregate: best``: best row) at least as good as ``winner``'s."""
    means = _means(rows, by, score, aggregate, higher).dropna()
    mine = _value_of(means, winner)
    others = means[[not _same(k, winner) for k in means.index]]
    name = f"{winner} best" if top == 1 else f"{winner} among the top {top}"
    if not np.isfinite(mine) or others.empty:
        return [Part(name, None, f"{winner} {_f(mine, scale)}")]
    runner = others.idxmax() if higher else others.idxmin()
    ahead = int((others >= mine).sum()) if higher else int((others <= mine).sum())
    return [Part(name, ahead < top, f"{winner} {_f(mine, scale)}, best other {runner} {_f(others[runner], scale)}"
                                    + (f", {ahead} at least as good" if top > 1 else ""))]


@declare({"x": NON_EMPTY_STR, "score": _SCORE, "sign": [IntOptions([1, -1])], "monotone": ["boolean"]},
         check_calls=False)
def trend(rows: pd.DataFrame, *, x: str, score: str, sign: int, monotone: bool = False,
          scale: float = 100.0) -> list[Part]:
    """A trend, "S rises (``sign: 1``) or falls (``sign: -1``) as x grows": the Spearman correlation of the mean
    ``score`` per value of ``x`` with x has that sign; with ``monotone`` every step between consecutive values of
    x moves that way. Also a correlation between two columns (``x`` any numeric column)."""
    means = _means(rows, x, score).dropna()
    means = means.sort_index() if len(means) else means
    if len(means) < 2:
        return [Part(f"{score} vs {x}", None, f"{len(means)} values of {x}")]
    steps = np.diff(means.to_numpy())
    rho = float(pd.Series(np.asarray(means.index, dtype=float)).corr(pd.Series(means.to_numpy()), method="spearman"))
    ok = bool(np.all(sign * steps > 0)) if monotone else bool(np.isfinite(rho) and sign * rho > 0)
    shown = ", ".join(f"{k:g}: {_f(v, scale)}" if isinstance(k, float) else f"{k}: {_f(v, scale)}"
                      for k, v in means.items())
    return [Part(f"{score} {'rises' if sign > 0 else 'falls'} with {x}", ok, f"rho {rho:.2f} ({shown})")]


@declare({"a": _VALUE, "b": _VALUE + [ListOf(_VALUE)], "score": _SCORE, "by": NON_EMPTY_STR,
          "tol": _POINTS}, check_calls=False)
def comparable(rows: pd.DataFrame, *, a: Any, b: Any, score: str, tol: float, by: str = "method",
               scale: float = 100.0) -> list[Part]:
    """"A is comparable to B" (``b`` a list: to each of them): their mean ``score`` within ``tol`` points. One part
    per B."""
    means = _means(rows, by, score)
    va = _value_of(means, a)
    parts = []
    for other in _tier(b):
        vb = _value_of(means, other)
        ok = bool(abs(va - vb) * scale <= tol) if np.isfinite(va) and np.isfinite(vb) else None
        parts.append(Part(f"{a} ~ {other}", ok, f"{a} {_f(va, scale)}, {other} {_f(vb, scale)}"))
    return parts


@declare({"a": _VALUE, "others": [ListOf(_VALUE), None], "score": _SCORE,
          "by": NON_EMPTY_STR, "higher": ["boolean"], "tol": _POINTS}, check_calls=False)
def not_worse(rows: pd.DataFrame, *, a: Any, score: str, tol: float, others: list[Any] | None = None,
              by: str = "method", higher: bool = True, scale: float = 100.0) -> list[Part]:
    """"A is better than or comparable to the others" (non-inferiority): A's mean ``score`` is not worse than
    each other value of ``by`` (``others``, or every other value in the rows) by more than ``tol`` points. One part
    per other value."""
    means = _means(rows, by, score)
    mine = _value_of(means, a)
    rest = others if others is not None else [k for k in means.index if not _same(k, a)]
    sign = 1.0 if higher else -1.0
    parts = []
    for b in rest:
        vb = _value_of(means, b)
        ok = bool(sign * (mine - vb) * scale >= -tol) if np.isfinite(mine) and np.isfinite(vb) else None
        parts.append(Part(f"{a} not worse than {b}", ok, f"{a} {_f(mine, scale)}, {b} {_f(vb, scale)}"))
    return parts or [Part(f"{a} not worse", None, "no other values")]


def _bound_rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
    if (options["above"] is None) == (options["below"] is None):
        return "above", "give exactly one of 'above' and 'below'"
    return None


@declare({"score": _SCORE, "above": [real(None, None), None], "below": [real(None, None), None],
          "by": NON_EMPTY_STR}, rules=[_bound_rule], check_calls=False)
def bound(rows: pd.DataFrame, *, score: str, above: float | None = None, below: float | None = None,
          by: str = "method", scale: float = 100.0) -> list[Part]:
    """A level, "A fails" or "near-perfect": the mean ``score`` of each value of ``by`` in the selected rows above
    ``above`` (or below ``below``) points. One part per value of ``by``."""
    means = _means(rows, by, score)
    parts = []
    for key, v in means.items():
        v = float(v)
        ok = None if not np.isfinite(v) else bool(v * scale > above) if above is not None else bool(v * scale < below)
        parts.append(Part(f"{key} {'>' if above is not None else '<'} {above if above is not None else below:g}",
                          ok, f"{key} {_f(v, scale)}"))
    return parts or [Part(score, None, "no rows")]


@declare({"a": _VALUE, "b": _VALUE, "score": _SCORE, "by": NON_EMPTY_STR, "pair": NON_EMPTY_STR,
          "higher": ["boolean"], "alpha": [real(0, 1, "neither")], "expect": [StrOptions({"better", "no_difference"})]},
         check_calls=False)
def paired(rows: pd.DataFrame, *, a: Any, b: Any, score: str, pair: str, by: str = "method", higher: bool = True,
           alpha: float = 0.05, expect: str = "better", scale: float = 100.0) -> list[Part]:
    """"A is significantly better than B": a paired t-test over the values of ``pair`` (e.g. the folds' inputs)
    rejects equal means at level ``alpha`` (two-sided) and A's mean is the better one; with ``expect:
    no_difference``, "the difference is not significant": the test does not reject at ``alpha``."""
    from scipy.stats import ttest_rel

    if not {by, pair, score} <= set(rows):
        return [Part(f"{a} vs {b}", None, "columns missing")]
    wide = rows.pivot_table(index=pair, columns=by, values=score, aggfunc="mean")
    cols = {c: c for c in wide.columns}
    ca = next((c for c in cols if _same(c, a)), None)
    cb = next((c for c in cols if _same(c, b)), None)
    if ca is None or cb is None:
        return [Part(f"{a} vs {b}", None, "no paired rows")]
    both = wide[[ca, cb]].dropna()
    if len(both) < 2:
        return [Part(f"{a} vs {b}", None, f"{len(both)} pairs")]
    diff = both[ca] - both[cb]
    p = float(ttest_rel(both[ca], both[cb]).pvalue) if np.any(diff != diff.iloc[0]) else (
        0.0 if diff.iloc[0] != 0 else 1.0)
    better = bool(diff.mean() > 0) if higher else bool(diff.mean() < 0)
    if expect == "no_difference":
        return [Part(f"{a} ~ {b} (paired, p >= {alpha:g})", bool(p >= alpha),
                     f"{a} {_f(both[ca].mean(), scale)}, {b} {_f(both[cb].mean(), scale)}, p = {p:.3g} over "
                     f"{len(both)} pairs")]
    return [Part(f"{a} {'>' if higher else '<'} {b} (paired, p < {alpha:g})", bool(better and p < alpha),
                 f"{a} {_f(both[ca].mean(), scale)}, {b} {_f(both[cb].mean(), scale)}, p = {p:.3g} over "
                 f"{len(both)} pairs")]


@declare({"reason": NON_EMPTY_STR}, check_calls=False)
def not_testable(rows: pd.DataFrame, *, reason: str) -> list[Part]:
    """Not a predicate: a claim this reproduction cannot test, with the ``reason`` (data not available offline,
    setting not printed, figure missing from our copy)."""
    return []


#: What every claim states besides its test's options.
COMMON = Declaration({
    "id": [StrPattern(r"[a-z]+:[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+", "an id <paper>:<figure>:<name>")],
    "figure": NON_EMPTY_STR, "claim": NON_EMPTY_STR, "where": _SELECTOR, "per": _COLUMNS,
    "most": ["boolean"], "scale": [real(0, None, "neither")], "cause": NON_EMPTY_STR + [None],
    "evidence": NON_EMPTY_STR + [None],
}, defaults={"id": REQUIRED, "figure": REQUIRED, "claim": REQUIRED, "where": None, "per": None, "most": False,
             "scale": 100.0, "cause": None, "evidence": None})

#: The predicate kinds a claim's ``test`` names.
TESTS = Kinds("claim test", {"value": value, "order": order, "best": best, "trend": trend,
                             "comparable": comparable, "not_worse": not_worse, "bound": bound, "paired": paired,
                             "not_testable": not_testable}, key="test", common=COMMON)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(np.isclose(float(a), float(b)))
    except (TypeError, ValueError):
        return str(a) == str(b)


def select(table: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.DataFrame:
    """The rows of ``table`` a claim speaks of: status ``ok`` (where the table has a status) and, for each column
    of ``where``, a value equal to the one given or to one of a list (numbers compared with a tolerance). A column
    the table lacks selects no row."""
    keep = np.ones(len(table), dtype=bool)
    if "status" in table:
        keep &= (table["status"] == "ok").to_numpy()
    for column, wanted in (where or {}).items():
        if column not in table:
            return table.iloc[:0]
        values = wanted if isinstance(wanted, list) else [wanted]
        keep &= np.array([any(_same(v, w) for w in values) for v in table[column]], dtype=bool)
    return table[keep]


def evaluate(claim: Mapping[str, Any], table: pd.DataFrame) -> list[Part]:
    """The parts of ``claim`` (checked and filled by :func:`cova.constraints.check_options` with :data:`TESTS`)
    on ``table``: its predicate on each group of ``per`` of the selected rows, parts named by their group; with a
    list of scores, on each score."""
    test: Callable[..., list[Part]] = TESTS[claim["test"]]
    own = {k: claim[k] for k in getattr(test, "_parameter_constraints", {}) if k in claim}
    if "scale" in claim and "scale" in test.__kwdefaults__:
        own["scale"] = claim["scale"]
    if isinstance(own.get("score"), list):  # one statement about several scores: its parts, score by score
        return [Part(f"{s}: {p.name}", p.holds, p.ours, p.paper) for s in own["score"]
                for p in evaluate({**claim, "score": s}, table)]
    rows = select(table, claim.get("where"))
    per = claim.get("per") or []
    if not per:
        return test(rows, **own)
    if not set(per) <= set(rows.columns) or rows.empty:
        return [Part(f"per {', '.join(per)}", None, "no rows")]
    parts = []
    for key, group in rows.groupby(per, sort=True):
        label = ", ".join(f"{c} = {k}" for c, k in zip(per, key if isinstance(key, tuple) else (key,)))
        parts += [Part(f"{label}: {p.name}", p.holds, p.ours, p.paper) for p in test(group, **own)]
    return parts


def verdict(claim: Mapping[str, Any], parts: list[Part]) -> Verdict:
    """The verdict of ``claim`` from its ``parts`` (:func:`evaluate`)."""
    if claim["test"] == "not_testable":
        return Verdict(UNTESTABLE, claim["reason"], "", "")
    ours = "; ".join(f"{p.name}: {p.ours}" if len(parts) > 1 else p.ours for p in parts)
    known = [p for p in parts if p.holds is not None]
    if not known:
        return Verdict(UNTESTABLE, "this run's table lacks the rows or columns the claim needs: "
                                   + "; ".join(f"{p.name} ({p.ours})" for p in parts), ours, "")
    held = [p for p in known if p.holds]
    failed = [p for p in known if not p.holds]
    missing = [p for p in parts if p.holds is None]
    if claim.get("most"):
        outcome = HOLDS if len(held) > len(known) / 2 else PARTLY if held else FAILS
    else:
        outcome = HOLDS if not failed and not missing else PARTLY if held else FAILS
    detail = "does not hold for " + "; ".join(p.name for p in failed) if failed else ""
    if missing:
        detail = (detail + "; " if detail else "") + "not testable for " + "; ".join(p.name for p in missing)
    paper = "; ".join(f"{p.name}: {p.paper}" if len(parts) > 1 else p.paper for p in parts if p.paper)
    return Verdict(outcome, detail, ours, paper)


def check_claims(experiments: Mapping[str, Mapping[str, Any]],
                 excluded: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Every claim of ``experiments`` (and of the experiments an overlay ``excluded``, which keep their claims to
    say why they are not tested), checked against :data:`TESTS` with the defaults filled in and the experiment's
    name, paper and ``paper_data`` added. Raises :class:`~cova.constraints.OptionError` naming the key for a bad
    claim, an id used twice, or an id whose paper is not its experiment's."""
    out: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    blocks = [("experiments", n, e) for n, e in experiments.items()]
    blocks += [("excluded", n, e) for n, e in (excluded or {}).items()]
    for section, name, e in blocks:
        for i, claim in enumerate(e.get("claims") or []):
            where = f"paper.{section}.{name}.claims[{i}]"
            checked = check_options(TESTS, claim, where)
            if checked["id"] in seen:
                raise OptionError(f"{where}.id", f"{checked['id']!r} is not allowed: {seen[checked['id']]} has "
                                                 "the same id; claim ids are unique")
            if checked["id"].split(":")[0] != e["paper"]:
                raise OptionError(f"{where}.id", f"{checked['id']!r} is not allowed: a claim of experiment {name} "
                                                 f"starts with its paper, {e['paper']!r}:")
            seen[checked["id"]] = where
            out.append({**checked, "experiment": name, "paper": e["paper"],
                        "paper_data": list(e.get("paper_data") or []),
                        "excluded": e.get("reason") if section == "excluded" else None})
    return out
