"""Building blocks of the estimators' ``_parameter_constraints`` tables (scikit-learn's declarative validation,
``sklearn.utils._param_validation``), and the per-parameter check the config validation uses.

Each estimator lists, for every ``__init__`` argument, the constraints one of which the value must satisfy;
``Embedder._validate_params()`` (scikit-learn's ``BaseEstimator``) checks them at the start of ``fit`` and the
configuration check (:mod:`cova.config`) before any job runs. Numbers are typed: an int is accepted where a float
is allowed, a string such as ``'0.1'`` or a bool is not.
"""

from __future__ import annotations

import re
from numbers import Integral, Real
from typing import Any, Literal

import numpy as np
from sklearn.utils._param_validation import Interval as _Interval
from sklearn.utils._param_validation import InvalidParameterError, Options, RealNotInt, StrOptions

__all__ = ["InvalidParameterError", "Interval", "Options", "RealNotInt", "StrOptions", "StrPattern", "real",
           "integer", "UNIT",
           "POSITIVE", "NON_NEGATIVE", "POSITIVE_INT", "NON_NEGATIVE_INT", "SEED", "SEED_OR_NONE", "MAX_SAMPLES",
           "explain"]

Closed = Literal["left", "right", "both", "neither"]


class Interval(_Interval):
    """scikit-learn's ``Interval`` that also refuses booleans (``True`` is an ``int`` to Python, not a count or a
    weight to us)."""

    def is_satisfied_by(self, val: Any) -> bool:
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


class StrPattern(StrOptions):
    """A string matching ``pattern`` (whole, case-insensitive), described to the user as ``description`` (e.g. the
    co-embedding's neighbourhood sizes ``"10%"``, ``"all-10"``). scikit-learn has no pattern constraint and accepts
    only its own constraint classes, so this is a ``StrOptions`` whose test is the pattern."""

    def __init__(self, pattern: str, description: str):
        super().__init__(set())
        self.pattern = re.compile(pattern, re.IGNORECASE)
        self.description = description

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, str) and self.pattern.fullmatch(val.strip()) is not None

    def __str__(self) -> str:
        return self.description


def real(left: float | None = None, right: float | None = None, closed: Closed = "both") -> Interval:
    """A float (or int) in the interval from ``left`` to ``right`` (``None``: unbounded)."""
    return Interval(Real, left, right, closed=closed)


def integer(left: int | None = None, right: int | None = None, closed: Closed = "both") -> Interval:
    """An int in the interval from ``left`` to ``right`` (``None``: unbounded)."""
    if left is None and closed in ("left", "both"):
        closed = "neither" if closed == "left" else "right"
    if right is None and closed in ("right", "both"):
        closed = "neither" if closed == "right" else "left"
    return Interval(Integral, left, right, closed=closed)


#: A weight in [0, 1] (COVA's α and η, NeRV's λ).
UNIT = [real(0.0, 1.0)]
#: A float > 0.
POSITIVE = [real(0.0, None, closed="neither")]
#: A float ≥ 0.
NON_NEGATIVE = [real(0.0, None, closed="left")]
#: An int ≥ 1.
POSITIVE_INT = [integer(1, None)]
#: An int ≥ 0.
NON_NEGATIVE_INT = [integer(0, None)]
#: A seed: a non-negative int (numpy's ``default_rng`` refuses negative seeds).
SEED = [integer(0, None)]
#: A seed or ``None`` (fresh entropy).
SEED_OR_NONE = [integer(0, None), None]
#: The size guard of an O(l²) method: an int ≥ 2, or ``None`` (no guard).
MAX_SAMPLES = [integer(2, None), None]

_MESSAGE = re.compile(r"^The '(?P<name>[^']+)' parameter of \w+ must be (?P<allowed>.*)\. Got .* instead\.$",
                      re.DOTALL)


def explain(error: InvalidParameterError) -> tuple[str, str]:
    """(parameter name, what is allowed) of the error ``_validate_params()`` raised, in scikit-learn's words,
    e.g. ``("alpha", "a float in the range [0.0, 1.0]")``."""
    match = _MESSAGE.match(str(error))
    if match is None:
        raise ValueError(f"not a parameter-constraint error: {error}") from error
    return match.group("name"), match.group("allowed")
