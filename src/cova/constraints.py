"""The one declaration form of everything a config may set: scikit-learn's ``_parameter_constraints`` tables
(``sklearn.utils._param_validation``), their building blocks, and the check the config validation runs on them.

Every configurable thing declares its options beside its code in the same form:

- a **method** (an estimator class) lists, for every ``__init__`` argument, the constraints one of which the value
  must satisfy in its ``_parameter_constraints``; defaults are the ``__init__`` defaults;
- a **loader**, an **inputs-block kind** (a weight graph, a normalisation, a confidence, a prototype recipe, ...)
  or a **renderer** is a function decorated with :func:`declare`: the table is its ``_parameter_constraints`` and
  the defaults are its keyword defaults; the decorator also checks every call (scikit-learn's ``validate_params``);
- cross-field rules (e.g. "``kl_method='fft'`` needs ``n_components=2``") and rules against the sizes of the
  data (``n_neighbors`` < n, a size guard, :class:`Known`) sit beside the table as ``_option_rules``
  (:data:`Rule`); a method's rules are checked by the configuration check with the sizes the configuration fixes
  and by the estimator itself on the data it is fitted on;
- a choice among declared things by a ``kind`` key is a :class:`Kinds` registry.

:func:`check_options` validates a config block against any of them with the same messages (``config key
<where>.<option>: <value> is not allowed; allowed: <what>``), before any job runs. Numbers are typed: an int is
accepted where a float is allowed, a string such as ``'0.1'`` or a bool is not.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from numbers import Integral, Real
from typing import Any, Literal, NamedTuple, TypeVar

import numpy as np
from sklearn.utils._param_validation import Interval as _Interval
from sklearn.utils._param_validation import (
    InvalidParameterError,
    Options,
    RealNotInt,
    make_constraint,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils._param_validation import StrOptions as _StrOptions

from .errors import UserError

__all__ = ["InvalidParameterError", "Interval", "Options", "RealNotInt", "StrOptions", "StrPattern", "real",
           "integer", "UNIT",
           "POSITIVE", "NON_NEGATIVE", "POSITIVE_INT", "NON_NEGATIVE_INT", "SEED", "SEED_OR_NONE", "MAX_SAMPLES",
           "IntOptions", "NON_EMPTY_STR", "explain", "Block", "ListOf", "Declaration", "Kinds", "Rule", "Known",
           "OptionError", "declare", "parameter_constraints", "broken_rule",
           "option_defaults", "check_options", "REQUIRED", "describe"]

Closed = Literal["left", "right", "both", "neither"]


class Interval(_Interval):
    """scikit-learn's ``Interval`` that also refuses booleans (``True`` is an ``int`` to Python, not a count or a
    weight to us)."""

    def is_satisfied_by(self, val: Any) -> bool:
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


class StrOptions(_StrOptions):
    """scikit-learn's ``StrOptions`` whose description lists the options sorted (a set's order changes from run to
    run, and so would every message that names them)."""

    def __str__(self) -> str:
        return f"a str among {{{', '.join(repr(o) for o in sorted(self.options))}}}"


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


class IntOptions(Options):
    """One of the ints ``options`` (e.g. the image sides that divide 128). scikit-learn's ``Options(Integral, ...)``
    takes ``True`` for ``1``; this one refuses booleans, like :class:`Interval`."""

    def __init__(self, options: Sequence[int]):
        super().__init__(Integral, set(options))

    def is_satisfied_by(self, val: Any) -> bool:
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)

    def __str__(self) -> str:
        return f"an int among {{{', '.join(str(v) for v in sorted(self.options, reverse=True))}}}"


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
#: A string with at least one character that is not blank (a file path, a name).
NON_EMPTY_STR = [StrPattern(r"(?s).+", "a non-empty string")]
#: The size guard of an O(l²) method: an int ≥ 2, or ``None`` (no guard).
MAX_SAMPLES = [integer(2, None), None]

_MESSAGE = re.compile(r"^The '(?P<name>[^']+)' parameter of \w+ must be (?P<allowed>.*)\. Got .* instead\.$",
                      re.DOTALL)


def explain(error: InvalidParameterError) -> tuple[str, str]:
    """(parameter name, what is allowed) of the error ``_validate_params()`` raised, in scikit-learn's words,
    e.g. ``("alpha", "a float in the range [0.0, 1.0]")``."""
    match = _MESSAGE.match(str(error))
    if match is None:
        raise RuntimeError(f"not a parameter-constraint error: {error}") from error
    return match.group("name"), match.group("allowed")


# ----------------------------------------------------------------------------------------------------------------
# The declaration form of loaders, inputs-block kinds and renderers, and the one check of a config block
# ----------------------------------------------------------------------------------------------------------------
#: A cross-field rule: ``rule(options, context)`` returns ``(option, what is wrong)`` or ``None``. ``options`` are the
#: block's values with the defaults filled in; ``context`` is what the caller knows beyond the block (e.g. an
#: experiment's runs), empty when it knows nothing. A rule checks what it can from what the context holds and passes
#: when the context lacks what it needs, so the same rule runs before any job (context: what the configuration
#: fixes) and in the estimator (context: the data it is fitted on).
Rule = Callable[[Mapping[str, Any], Mapping[str, Any]], "tuple[str, str] | None"]


class Known(NamedTuple):
    """A size a method's rules check its options against (the ``context`` of a method's :data:`Rule` s):
    ``value``, where it comes from in words (``"dataset 'sinusoid' has 60 samples (params.n_samples=60)"``, named
    in the message) and whether it is ``exact`` (``False``: an upper bound, e.g. the samples of a dataset of which
    an inputs block keeps a subset). The keys of a method's context: ``"n_samples"`` (the rows it is fitted on),
    ``"n_features"`` (the columns of its X), ``"prototype_dimension"`` (k of the prototypes Υ), ``"n_cohorts"`` (the
    cohorts of its labels), ``"relation_rows"`` and ``"relation_columns"`` (m and n of its relation)."""

    value: int
    source: str
    exact: bool = True

F = TypeVar("F", bound=Callable[..., Any])


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of an option that has none: the config must set it.
REQUIRED: Any = _Required()


class Block(Options):
    """A nested mapping of options, validated against a declaration (a declared function or class, or a
    :class:`Kinds` registry) by :func:`check_options`, which names the nested key of a bad value. scikit-learn
    accepts only its own constraint classes, so this is an ``Options`` whose test is "a mapping"."""

    def __init__(self, declaration: Any, description: str = "a mapping of options"):
        super().__init__(Mapping, set())
        self.declaration = declaration
        self.description = description

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, Mapping)

    def __str__(self) -> str:
        return self.description


class ListOf(Options):
    """A list (of at least ``min_items`` items) each of whose items satisfies one of ``constraints``."""

    def __init__(self, constraints: Sequence[Any], min_items: int = 1, description: str | None = None):
        super().__init__(list, set())
        self.items = [make_constraint(c) for c in constraints]
        self.min_items = min_items
        self.description = description

    def is_satisfied_by(self, val: Any) -> bool:
        if isinstance(val, np.ndarray):
            val = val.tolist()
        return (isinstance(val, (list, tuple)) and len(val) >= self.min_items
                and all(any(c.is_satisfied_by(v) for c in self.items) for v in val))

    def __str__(self) -> str:
        if self.description:
            return self.description
        return f"a list of at least {self.min_items} of {' or '.join(str(c) for c in self.items)}"


class Declaration:
    """The declaration of a config block that is not one function's keywords (e.g. an inputs block's ``split``, or
    an option that a builder reads beside a declared function's): the same table, defaults (:data:`REQUIRED` where
    there is none) and rules, given explicitly. Compose it from declared functions with :func:`parameter_constraints`
    and :func:`option_defaults` rather than restating their options."""

    def __init__(self, constraints: Mapping[str, list[Any]], defaults: Mapping[str, Any] | None = None,
                 rules: Sequence[Rule] = ()):
        self._parameter_constraints = dict(constraints)
        self.defaults = {name: (defaults or {}).get(name, REQUIRED) for name in constraints}
        self._option_rules = tuple(rules)

    def __repr__(self) -> str:
        return f"Declaration({sorted(self._parameter_constraints)})"


class Kinds(Mapping[str, Any]):
    """A registry of declared things chosen by a ``kind`` key (``{kind: name, **options}``): name -> the declared
    function, class or :class:`Declaration`. ``what`` names the block in messages ("weights kind"); ``common``
    declares the options every kind takes besides its own (e.g. a weight graph's ``normalize``)."""

    def __init__(self, what: str, kinds: Mapping[str, Any], key: str = "kind", common: Declaration | None = None):
        self.what = what
        self.key = key
        self.common = common
        self._kinds = dict(kinds)

    def register(self, name: str, declaration: Any) -> None:
        """Add kind ``name`` (for a kind whose options refer to the registry itself, e.g. nested features)."""
        self._kinds[name] = declaration

    def __getitem__(self, name: str) -> Any:
        return self._kinds[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)


def declare(constraints: Mapping[str, list[Any]], *, rules: Sequence[Rule] = (), check_calls: bool = True,
            run_metrics: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None) -> Callable[[F], F]:
    """Declare a function's options: ``constraints`` is its ``_parameter_constraints`` table (one list of allowed
    constraints per keyword), the defaults are its keyword defaults, ``rules`` its cross-field :data:`Rule` s. With
    ``check_calls`` every call is checked against the table too (scikit-learn's ``validate_params``), so a value is
    declared once and checked both before any job runs and where it is used. A renderer states with
    ``run_metrics(options)`` what the scores of its runs must hold (``{"measures": [group, ...], "settings":
    {group: {...}}}``), so that the plan asks the score step for it."""

    def decorator(func: F) -> F:
        wrapped = validate_params(dict(constraints), prefer_skip_nested_validation=True)(func) if check_calls \
            else func
        wrapped._parameter_constraints = dict(constraints)  # type: ignore[attr-defined]
        wrapped._option_rules = tuple(rules)  # type: ignore[attr-defined]
        if run_metrics is not None:
            wrapped._run_metrics = run_metrics  # type: ignore[attr-defined]
        return wrapped  # type: ignore[return-value]

    return decorator


def parameter_constraints(obj: Any) -> dict[str, list[Any]]:
    """The declared table of a method class or a declared function (``{}`` when it declares nothing)."""
    return dict(getattr(obj, "_parameter_constraints", {}))


def option_defaults(obj: Any) -> dict[str, Any]:
    """Option -> default of a declared class (its ``__init__``) or function; :data:`REQUIRED` where there is
    none."""
    if isinstance(obj, Declaration):
        return dict(obj.defaults)
    signature = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    out = {}
    for name in parameter_constraints(obj):
        param = signature.parameters.get(name)
        out[name] = REQUIRED if param is None or param.default is inspect.Parameter.empty else param.default
    return out


class OptionError(UserError):
    """A config value its declaration refuses; the message names the key, the value and what is allowed."""

    def __init__(self, key: str, message: str):
        super().__init__(f"config key {key}: {message}")
        self.key = key
        self.reason = message


def describe(constraints: Sequence[Any]) -> str:
    """What ``constraints`` allow, in scikit-learn's words (``"a float in the range [0.0, 1.0] or None"``)."""
    parts = [str(make_constraint(c)) for c in constraints]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"


def check_options(declaration: Any, values: Any, where: str, what: str = "",
                  context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Check the config block ``values`` at config key ``where`` against ``declaration`` (a declared function or
    class, or a :class:`Kinds` registry) and return it with the declared defaults filled in (nested blocks too).

    ``what`` names the declared thing in messages (``"loader 'sinusoid'"``); a :class:`Kinds` registry names the
    chosen kind itself. Raises :class:`OptionError` for an unknown option, a value its constraints refuse (nested
    blocks name the nested key), a missing required option or a broken cross-field rule.
    """
    if isinstance(declaration, Kinds):
        if not isinstance(values, Mapping):
            raise OptionError(where, f"{values!r} is not allowed; allowed: a mapping with {declaration.key!r} "
                                     f"(one of {sorted(declaration)}) and that kind's options")
        kind = values.get(declaration.key, REQUIRED)
        if kind is REQUIRED:
            raise OptionError(f"{where}.{declaration.key}", f"required; allowed values: {sorted(declaration)}")
        if not isinstance(kind, str) or kind not in declaration:
            raise OptionError(f"{where}.{declaration.key}",
                              f"{kind!r} is not allowed; allowed values: {sorted(declaration)}")
        rest = {k: v for k, v in values.items() if k != declaration.key}
        what = f"{declaration.what} {kind!r}"
        if declaration.common is None:
            return {declaration.key: kind, **check_options(declaration[kind], rest, where, what, context)}
        shared = parameter_constraints(declaration.common)
        allowed = set(parameter_constraints(declaration[kind])) | set(shared)
        unknown = sorted(str(k) for k in set(rest) - allowed)
        if unknown:
            raise OptionError(where, f"unknown parameters {unknown}; allowed for {what}: {sorted(allowed)}")
        own = check_options(declaration[kind], {k: v for k, v in rest.items() if k not in shared}, where, what,
                            context)
        common = check_options(declaration.common, {k: v for k, v in rest.items() if k in shared}, where, what,
                               context)
        return {declaration.key: kind, **own, **common}
    if not isinstance(values, Mapping):
        raise OptionError(where, f"{values!r} is not allowed; allowed: a mapping of the options of {what}")
    table = parameter_constraints(declaration)
    defaults = option_defaults(declaration)
    unknown = sorted(str(k) for k in set(values) - set(table))
    if unknown:
        raise OptionError(where, f"unknown parameters {unknown}; allowed for {what}: {sorted(table)}")
    out = dict(defaults)
    for name, value in values.items():
        key = f"{where}.{name}"
        try:
            validate_parameter_constraints({name: table[name]}, {name: value}, caller_name="config")
        except InvalidParameterError:
            raise OptionError(key, f"{value!r} is not allowed; allowed: {describe(table[name])}") from None
        block = next((c for c in table[name] if isinstance(c, Block)), None)
        if block is not None and isinstance(value, Mapping):
            value = check_options(block.declaration, value, key, f"{what}'s {name}", context)
        out[name] = value
    missing = [name for name, value in out.items() if value is REQUIRED]
    if missing:
        raise OptionError(f"{where}.{missing[0]}", f"required by {what}; allowed: {describe(table[missing[0]])}")
    broken = broken_rule(declaration, out, context)
    if broken is not None:
        name, reason = broken
        value = values.get(name)  # as configured, not with the defaults filled in
        shown = "" if value is None else f"{value!r} is not allowed: "
        raise OptionError(f"{where}.{name}", f"{shown}{reason}")
    return out


def broken_rule(declaration: Any, options: Mapping[str, Any],
                context: Mapping[str, Any] | None = None) -> tuple[str, str] | None:
    """``(option, what is wrong)`` of the first cross-field :data:`Rule` of ``declaration`` (its ``_option_rules``)
    that ``options`` (defaults filled in) break in ``context``, else ``None``."""
    for rule in getattr(declaration, "_option_rules", ()):
        broken = rule(options, context or {})
        if broken is not None:
            return broken
    return None
