"""The estimator contract shared by every method (scikit-learn style)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from ..inputs import Inputs


def check_size(l: int, max_samples: int | None, name: str, why: str = "dense l×l matrices",
               alternative: str = "") -> None:
    """Raise ``ValueError`` when an O(l²) method is asked to embed more than ``max_samples`` samples: the size
    guard every inherently quadratic method puts before its dense l×l arrays (developers' guide, "Scale")."""
    if max_samples is not None and l > int(max_samples):
        raise ValueError(
            f"{name} is O(l²) in time and memory ({why}); l = {l} exceeds max_samples = {int(max_samples)}. "
            f"Subsample the data{alternative}, or raise max_samples deliberately if the memory (≈ "
            f"{8 * l * l / 2**20:.0f} MB per l×l array) is available."
        )


def relation_matrix(inputs: Inputs, name: str) -> Any:
    """The run's relation matrix (sparse m×n), or a ``ValueError`` saying that method ``name`` needs a relation
    inputs block."""
    if inputs.relation is None:
        raise ValueError(f"{name} needs a relation (an inputs block with 'relation')")
    return inputs.relation.matrix


def supervised_arrays(inputs: Inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X (float64, 2-D, finite), the labels and the mask of the rows whose labels a supervised method may read
    (``inputs.labelled`` when given, else every row), with a ``ValueError`` for a bad X or a label count that does
    not match X's rows."""
    X = np.asarray(inputs.X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array; got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("the input contains NaN or infinite values")
    y = np.asarray(inputs.labels).ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"labels has {y.shape[0]} entries but X has {X.shape[0]} rows")
    mask = getattr(inputs, "labelled", None)
    rows = np.ones(X.shape[0], dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    return X, y, rows


class Embedder(BaseEstimator):
    """Base class: parameters in ``__init__``, ``fit(inputs)`` sets ``embedding_`` (l, k).

    Every estimator declares, as class attributes:

    - ``_parameter_constraints``: scikit-learn's declarative table (``sklearn.utils._param_validation``), checked
      by ``self._validate_params()`` at the start of ``fit`` and by the config validation before any job runs;
    - ``required_inputs``: the fields of :class:`cova.inputs.Inputs` the method reads (``"X"``, ``"labels"``,
      ``"W"``, ``"R"``, ``"prototypes"``, ``"relation"``); :meth:`requires` refines it when a parameter changes
      what is read (e.g. ``affinity="inputs"`` reads W instead of X). The configuration is refused before any
      job runs when a method entry's inputs block does not provide these (:func:`cova.inputs.provided_inputs`);
    - ``geometry``: ``"plane"`` (points in R^k) or ``"sphere"`` (points on a sphere in R^k);
    - ``semi_supervised``: ``True`` for a method that takes unlabelled samples (it reads the labels of the rows
      of ``inputs.labelled`` only, when given). On inputs with a train/test split it is fitted on every row with
      the test labels hidden (:meth:`cova.inputs.Inputs.semi_supervised`, NeRV Sec. 5.3) instead of on the
      training rows plus ``transform``;
    - ``extra_outputs``: names of fitted array attributes (ending in ``_``) that the embed step saves beside the
      embedding in ``embedding.npz`` (as ``extra_<name without the underscore>``) and that renderers read back
      without refitting (:class:`cova.embedding.Embedding`).

    ``prototypes_`` is set by methods that place cohorts at given positions (the points S_c compares with,
    COVA Appendix G); methods that do not (t-SNE, PCA, ...) leave it ``None``.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}
    required_inputs: ClassVar[tuple[str, ...]] = ("X",)
    geometry: ClassVar[str] = "plane"
    semi_supervised: ClassVar[bool] = False
    extra_outputs: ClassVar[tuple[str, ...]] = ()
    prototypes_: np.ndarray | None = None

    def requires(self) -> tuple[str, ...]:
        """The inputs this configured estimator reads (``required_inputs`` unless a parameter changes it)."""
        return self.required_inputs

    def _affinity_requires(self, *always: str) -> tuple[str, ...]:
        """``requires()`` of a method whose ``affinity`` parameter picks its graph: ``"inputs"`` reads the run's
        W, anything else builds the graph from X; ``always`` are read either way."""
        graph = ("W",) if getattr(self, "affinity", None) == "inputs" else ("X",)
        return tuple(dict.fromkeys(graph + always))

    def fit(self, inputs: Inputs) -> "Embedder":  # pragma: no cover - interface
        raise NotImplementedError

    def fit_transform(self, inputs: Inputs) -> np.ndarray:
        """Fit to ``inputs`` and return the embedding ``embedding_``."""
        return self.fit(inputs).embedding_
