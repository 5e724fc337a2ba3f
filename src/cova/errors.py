"""The package's refusal: the one exception class a job ends with as one message instead of a traceback."""

from __future__ import annotations


class UserError(ValueError):
    """A refusal meant for the user: the input (a config value, a file, a parameter for these data) cannot be used,
    and the message names it and what to do. A job that raises one ends with that one message, never a traceback
    (:func:`cova.cli.main`; docs/decisions.md, "Refusals at job time"). Every validation ``raise`` of the package
    raises it or a subclass (:class:`cova.constraints.OptionError`, :class:`cova.config.ConfigError`,
    :class:`cova.manifolds.DegenerateSolution`, :class:`cova.viz.export.ExportError`); a ``ValueError`` of any
    other class, e.g. from numpy or an unpacking in our code, is a bug and keeps its traceback. It derives from
    ``ValueError`` so that callers catching scikit-learn's convention keep working."""
