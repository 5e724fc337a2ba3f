"""The estimator contract shared by every method (scikit-learn style), and what several estimators of different
families share as estimators: the size guard, the relation and supervised views of the inputs, and the fitting of
the class posterior that SNeRV and PE both use (:class:`UsesClassPosterior`, :func:`fit_class_posterior`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.neighbors import KNeighborsRegressor
from sklearn.utils import Tags, TransformerTags
from sklearn.utils.validation import check_is_fitted, validate_data

from ..cohorts.posterior import ClassPosterior, posterior_arrays, posterior_from_arrays, training_fingerprint
from ..constraints import (
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    InvalidParameterError,
    Known,
    OptionError,
    Rule,
    StrOptions,
    check_options,
    parameter_constraints,
    real,
)
from ..errors import UserError
from ..inputs import Inputs
from ..objectives.kl import REPULSION_DIMENSIONS

#: The values the settings of the t-SNE schedule (:mod:`cova.manifolds.schedule`) accept, merged into the tables of
#: SNE, exact t-SNE, supervised SNE, DOSNES and t-SNE on a graph. ``max_iter`` ≥ 1: a run of no step returns the
#: random start (a noise cloud of standard deviation 10⁻² or less; DOSNES's start is not even on the sphere yet).
TSNE_SCHEDULE_CONSTRAINTS: dict[str, list] = {
    "max_iter": POSITIVE_INT,
    "learning_rate": [StrOptions({"auto"}), *POSITIVE],
    "momentum": [real(0.0, 1.0, closed="left")],
    "final_momentum": [real(0.0, 1.0, closed="left")],
    "momentum_switch_iter": NON_NEGATIVE_INT,
    "early_exaggeration": POSITIVE,
    "early_exaggeration_iter": NON_NEGATIVE_INT,
    "min_gain": POSITIVE,
}


def check_size(l: int, max_samples: int | None, name: str, why: str = "dense l×l matrices",
               alternative: str = "") -> None:
    """Raise ``ValueError`` when an O(l²) method is asked to embed more than ``max_samples`` samples: the size
    guard every inherently quadratic method puts before its dense l×l arrays (developers' guide, "Scale")."""
    if max_samples is not None and l > int(max_samples):
        raise UserError(
            f"{name} is O(l²) in time and memory ({why}); l = {l} exceeds max_samples = {int(max_samples)}. "
            f"Subsample the data{alternative}, or raise max_samples deliberately if the memory (≈ "
            f"{8 * l * l / 2**20:.0f} MB per l×l array) is available."
        )


# ----------------------------------------------------------------------------------------------------------------
# The rules a method declares beside its table (``_option_rules``, :data:`cova.constraints.Rule`): checked before
# any job with the sizes the configuration fixes (:mod:`cova.config.checks`) and by :meth:`Embedder.fit` with the
# sizes of the data (:func:`inputs_sizes`).
# ----------------------------------------------------------------------------------------------------------------
def inputs_sizes(inputs: Inputs) -> dict[str, Known]:
    """The sizes a method's rules check its options against (:class:`cova.constraints.Known`): the rows it is fitted
    on and the columns of X (or the nodes of W for inputs without X), the cohorts of the labels, the k of the
    prototypes Υ, and the m rows and n columns of a relation (``"relation_rows"``, ``"relation_columns"``)."""
    sizes: dict[str, Known] = {}
    if inputs.X is not None and np.ndim(inputs.X) == 2:
        l, d = np.shape(inputs.X)
        sizes["n_samples"] = Known(int(l), f"the inputs' X has {l} rows")
        sizes["n_features"] = Known(int(d), f"the inputs' X has {d} columns")
    elif inputs.W is not None:
        sizes["n_samples"] = Known(int(inputs.W.shape[0]), f"the inputs' graph W has {inputs.W.shape[0]} nodes")
    if inputs.labels is not None:
        c = np.unique(np.asarray(inputs.labels).ravel()).size
        sizes["n_cohorts"] = Known(int(c), f"the inputs' labels hold {c} cohorts")
    if inputs.prototypes is not None and np.ndim(inputs.prototypes) == 2:
        k = np.shape(inputs.prototypes)[1]
        sizes["prototype_dimension"] = Known(int(k), f"the inputs' prototypes have k = {k} columns")
    if inputs.relation is not None:
        m, n = inputs.relation.matrix.shape
        sizes["relation_rows"] = Known(int(m), f"the inputs' relation has m = {m} rows")
        sizes["relation_columns"] = Known(int(n), f"the inputs' relation has n = {n} columns")
    return sizes


def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


def repulsion_fits(declared: set[str] | frozenset[str],
                   dimension: Callable[[Mapping[str, Any], Mapping[str, Any]], Known | None]) -> Rule:
    """The rule of a ``kl_method`` option (one of ``declared``): a repulsion back end that works in some embedding
    dimensions only (:data:`cova.objectives.kl.REPULSION_DIMENSIONS`: ``"fft"`` 1-D or 2-D, ``"octree"`` 3-D) must
    fit the embedding's k, which ``dimension(options, context)`` gives (``None``: not known here)."""

    def rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        method, k = options.get("kl_method"), dimension(options, context)
        dims = REPULSION_DIMENSIONS.get(str(method))
        if k is None or dims is None or k.value in dims:
            return None
        fits = sorted(m for m in declared if k.value in REPULSION_DIMENSIONS.get(m, (k.value,)))
        return "kl_method", (f"the {method!r} repulsion works in {' or '.join(map(str, dims))} dimension(s) only, "
                             f"and {k.source}; allowed for k = {k.value}: {fits}")

    return rule


def fits_samples(option: str, ok: Callable[[Any, int], bool], allowed: Callable[[int], str], why: str) -> Rule:
    """The rule of a numeric ``option`` that must fit the number n of samples (context ``"n_samples"``):
    ``ok(value, n)``; ``allowed(n)`` says what is allowed at that n, ``why`` what needs it. An upper bound of n
    (a subset may keep fewer) is enough to refuse, since fewer samples only make it worse."""

    def rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        n, value = context.get("n_samples"), options.get(option)
        if n is None or not _number(value) or ok(value, n.value):
            return None
        return option, f"{n.source}, and {why}; allowed: {allowed(n.value)}"

    return rule


def neighbours_below_samples(why: str = "the neighbourhood graph needs n_neighbors < n (a sample is not its own "
                                        "neighbour)", option: str = "n_neighbors", margin: int = 1) -> Rule:
    """``option`` (a neighbourhood size) ≤ n − ``margin`` (:func:`fits_samples`)."""
    return fits_samples(option, lambda k, n: k <= n - margin, lambda n: f"at most {n - margin}", why)


#: Why a perplexity must be below n − 1 (:func:`perplexity_fits_samples`).
PERPLEXITY_CANDIDATES = ("the perplexity is calibrated over each point's min(n − 1, ⌊3·perplexity⌋) nearest neighbours "
                         "(openTSNE's candidate set) and must be below their number (openTSNE would lower it "
                         "silently)")


def perplexity_fits_samples(why: str = PERPLEXITY_CANDIDATES, affinity: str | None = None) -> Rule:
    """``perplexity`` < n − 1 (:func:`fits_samples`; ``why`` what needs it), for a method that calibrates its
    affinities to it; with ``affinity``, only when the method's ``affinity`` option is that value (the others read
    a given graph)."""
    rule = fits_samples("perplexity", lambda p, n: p < n - 1, lambda n: f"below n − 1 = {n - 1}", why)

    def when(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        return rule(options, context) if affinity is None or options.get("affinity") == affinity else None

    return when


def size_guard(name: str, why: str = "dense l×l matrices", alternative: str = "") -> Rule:
    """The rule of ``max_samples``, the size guard of an O(l²) method (:func:`check_size`, its message): refused
    when the exact number of samples (context ``"n_samples"``) is known to exceed it."""

    def rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        n = context.get("n_samples")
        if n is None or not n.exact:
            return None
        try:
            check_size(n.value, options.get("max_samples"), name, why, alternative)
        except ValueError as err:
            return "max_samples", f"{n.source}; {err}"
        return None

    return rule


def components_fit_features(why: str, option: str = "n_components") -> Rule:
    """``option`` ≤ d, the columns of X (context ``"n_features"``), for a method whose embedding directions lie in
    the data space (``why``)."""

    def rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        d, value = context.get("n_features"), options.get(option)
        if d is None or not _number(value) or value <= d.value:
            return None
        return option, f"{d.source}, and {why}; allowed: at most {d.value}"

    return rule


def components_fit_cohorts(why: str) -> Rule:
    """``n_components`` ≤ c − 1 for c cohorts (context ``"n_cohorts"``; an upper bound is enough to refuse), for a
    method that finds at most c − 1 directions between its cohorts (``why``)."""

    def rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        c, k = context.get("n_cohorts"), options.get("n_components")
        if c is None or not _number(k) or k <= c.value - 1:
            return None
        return "n_components", f"{c.source}, and {why}; allowed: at most c − 1 = {c.value - 1}"

    return rule


def at_least_components(option: str, why: str, extra: int = 0) -> Rule:
    """``option`` (a count of directions the embedding is taken from) ≥ ``n_components`` + ``extra``: a
    cross-parameter rule, whatever the data (``why``)."""

    def rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        value, k = options.get(option), options.get("n_components")
        if not _number(value) or not _number(k) or value >= k + extra:
            return None
        least = f"n_components + {extra} = {k + extra}" if extra else f"n_components = {k}"
        return option, f"{why}; allowed: at least {least}"

    return rule


def relation_size_guard(name: str, why: str) -> Rule:
    """The rule of ``max_samples``, the size guard on max(m, n) of a method on an m×n relation (context
    ``"relation_rows"`` and ``"relation_columns"``, :func:`check_size`'s message): refused when both are known
    exactly and the larger exceeds it (the message names that side)."""

    def rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        m, n = context.get("relation_rows"), context.get("relation_columns")
        if m is None or n is None or not (m.exact and n.exact):
            return None
        larger = max(m, n, key=lambda s: s.value)
        try:
            check_size(larger.value, options.get("max_samples"), name, why)
        except ValueError as err:
            return "max_samples", f"{larger.source}; {err}"
        return None

    return rule


def components_fit_relation(why: str) -> Rule:
    """``n_components`` ≤ min(m, n) of the relation (context ``"relation_rows"``, ``"relation_columns"``; upper
    bounds are enough to refuse) for a method whose row and column embeddings have orthonormal columns (``why``)."""

    def rule(options: Mapping[str, Any], context: Mapping[str, Any]) -> tuple[str, str] | None:
        k = options.get("n_components")
        known = [s for s in (context.get("relation_rows"), context.get("relation_columns")) if s is not None]
        if not known or not _number(k):
            return None
        least = min(known, key=lambda s: s.value)
        if k <= least.value:
            return None
        return "n_components", f"{least.source}, and {why}; allowed: at most {least.value}"

    return rule


#: The most columns an embedding may have: a visualisation is drawn on a line, in the plane or in 3-D.
MAX_DISPLAY_DIMENSIONS = 3
#: What to write instead of prototypes of too many columns (the message of :func:`check_prototype_dimension`).
PROTOTYPE_DIMENSION_HELP = ("use a prototypes kind that places the cohorts in the plane (mds, tsne, sne, laplacian, "
                            "loe, spe, ldmgi, ring), 'given' rows of 2 or 3 coordinates, or kind 'means' on features "
                            "of at most 3 columns (e.g. features: {kind: pca, n_components: 2})")


def check_prototype_dimension(k: int, method: str, source: str) -> None:
    """Refuse prototypes Υ of ``k`` columns for ``method``, which embeds in their dimension (COVA Eqs. 5-8: Z is
    l × k with the k of Υ), unless 1 ≤ k ≤ :data:`MAX_DISPLAY_DIMENSIONS`: the cohort means of 10,000-column data
    would give a 10,000-dimensional "visualisation" (and an l × 10,000 score step). ``source`` says where Υ comes
    from (an inputs block and its prototypes kind). The configuration check calls it when k is known from the
    configuration (:mod:`cova.config.checks`), the COVA estimators on the prototypes they get
    (:func:`embedding_prototypes`)."""
    if not 1 <= k <= MAX_DISPLAY_DIMENSIONS:
        raise UserError(f"{method} embeds in the dimension of its prototypes, and {source} has k = {k} columns: the "
                         f"result would be a {k}-dimensional embedding, not a visualisation (1 to "
                         f"{MAX_DISPLAY_DIMENSIONS} columns); {PROTOTYPE_DIMENSION_HELP}")


def embedding_prototypes(inputs: Inputs, method: str) -> np.ndarray:
    """The prototypes Υ (c, k) of ``inputs`` as float64, for a method whose embedding has their k columns, after
    :func:`check_prototype_dimension` (the inputs block's prototypes kind named in the message)."""
    P = np.asarray(inputs.prototypes, dtype=np.float64)
    if P.ndim != 2:
        raise UserError(f"{method}: the prototypes must be a (cohorts × k) array; got shape {P.shape}")
    recipe = inputs.spec.get("prototypes")
    kind = f" (prototypes kind {recipe['kind']!r})" if isinstance(recipe, dict) and "kind" in recipe else ""
    check_prototype_dimension(P.shape[1], method, f"the inputs' prototypes{kind}")
    return P


def relation_matrix(inputs: Inputs, name: str) -> Any:
    """The run's relation matrix (sparse m×n), or a ``ValueError`` saying that method ``name`` needs a relation
    inputs block."""
    if inputs.relation is None:
        raise UserError(f"{name} needs a relation (an inputs block with 'relation')")
    return inputs.relation.matrix


def supervised_arrays(inputs: Inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X (float64, 2-D, finite), the labels and the mask of the rows whose labels a supervised method may read
    (``inputs.labelled`` when given, else every row), with a ``ValueError`` for a bad X or a label count that does
    not match X's rows."""
    X = np.asarray(inputs.X, dtype=np.float64)
    if X.ndim != 2:
        raise UserError(f"X must be a 2-D array; got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise UserError("the input contains NaN or infinite values")
    y = np.asarray(inputs.labels).ravel()
    if y.shape[0] != X.shape[0]:
        raise UserError(f"labels has {y.shape[0]} entries but X has {X.shape[0]} rows")
    mask = getattr(inputs, "labelled", None)
    rows = np.ones(X.shape[0], dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    return X, y, rows


class Embedder(BaseEstimator):
    """Base class: parameters in ``__init__``; ``fit`` sets ``embedding_`` (l, k) and returns the estimator,
    ``fit_transform`` returns ``embedding_``. Both take either the workflow's :class:`cova.inputs.Inputs` or plain
    arrays ``(X, y=None)`` (:meth:`fit`, the one place that tells them apart); a subclass implements
    :meth:`_fit` on :class:`~cova.inputs.Inputs` only.

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
      without refitting (:class:`cova.embedding.Embedding`);
    - ``sklearn_compatible``: ``True`` for the estimators that pass scikit-learn's ``check_estimator`` on arrays
      (``tests/test_python_api.py`` runs it on each); ``False`` for the others, for the reason their class
      docstring or ``docs/decisions.md`` ("Python API on arrays") gives.

    ``prototypes_`` is set by methods that place cohorts at given positions (the points S_c compares with,
    COVA Appendix G); methods that do not (t-SNE, PCA, ...) leave it ``None``.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}
    required_inputs: ClassVar[tuple[str, ...]] = ("X",)
    geometry: ClassVar[str] = "plane"
    semi_supervised: ClassVar[bool] = False
    extra_outputs: ClassVar[tuple[str, ...]] = ()
    sklearn_compatible: ClassVar[bool] = False
    prototypes_: np.ndarray | None = None

    def requires(self) -> tuple[str, ...]:
        """The inputs this configured estimator reads (``required_inputs`` unless a parameter changes it)."""
        return self.required_inputs

    def _affinity_requires(self, *always: str) -> tuple[str, ...]:
        """``requires()`` of a method whose ``affinity`` parameter picks its graph: ``"inputs"`` reads the run's
        W, anything else builds the graph from X; ``always`` are read either way."""
        graph = ("W",) if getattr(self, "affinity", None) == "inputs" else ("X",)
        return tuple(dict.fromkeys(graph + always))

    def fit(self, X: Any, y: Any = None, *, inputs: dict[str, Any] | None = None) -> "Embedder":
        """Fit to the workflow's :class:`~cova.inputs.Inputs`, or to arrays: X (l, d) array-like (for a method
        that reads a relation, the m×n non-negative relation matrix, dense or scipy sparse) and the optional labels
        ``y`` (any hashable values, mapped to cohorts 0..c-1; ``classes_`` keeps them in that order).

        On arrays, the inputs the method reads (W, R, Υ, a relation, ...) are built from X and y by
        :func:`cova.inputs.build_inputs` with ``inputs``, an inputs block of the configuration's form, by default
        the block of :func:`cova.inputs.default_block` (the Places2 protocol for W, R and Υ;
        :mod:`cova.inputs.defaults` says why), seeded with ``random_state`` (0 when the method has none or it is
        ``None``). A method that reads the cohorts refuses ``y=None``. Returns ``self``."""
        self._validate_params()  # the parameters first, whatever the data (scikit-learn's order)
        if isinstance(X, Inputs):
            if y is not None or inputs is not None:
                raise UserError(f"{type(self).__name__}.fit: y and inputs= are for arrays; an Inputs object "
                                 f"already carries its labels and graphs")
            self._check_declaration(inputs_sizes(X))
            return self._fit(X)._check_columns()
        from ..inputs.defaults import array_inputs

        need = self.requires()
        X = validate_data(self, X, accept_sparse="csr" if "relation" in need else False, dtype=np.float64,
                          ensure_min_samples=2)
        seed = getattr(self, "random_state", None)
        seed = int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else 0
        built, classes = array_inputs(X, y, need, type(self).__name__, block=inputs, seed=seed)
        if y is not None:
            self.classes_ = np.asarray(classes, dtype=object)
        self._check_declaration(inputs_sizes(built))
        return self._fit(built)._check_columns()

    def _validate_params(self) -> None:
        """scikit-learn's check of every parameter against ``_parameter_constraints``, then what a table cannot
        say (:meth:`_check_declaration`: nested blocks such as a dict-valued parameter, the cross-parameter rules)."""
        super()._validate_params()
        self._check_declaration()

    def _check_declaration(self, sizes: Mapping[str, Known] | None = None) -> None:
        """Check the parameters against the class's declaration as the configuration check does
        (:func:`cova.constraints.check_options`: table, nested blocks, ``_option_rules``), with the rules that
        need them seeing ``sizes`` (:func:`inputs_sizes`); raises scikit-learn's ``InvalidParameterError`` naming
        the parameter, its value and what is allowed."""
        cls = type(self)
        table = parameter_constraints(cls)
        params = {k: v for k, v in self.get_params(deep=False).items() if k in table}
        try:
            check_options(cls, params, "params", f"method {cls.__name__}", sizes)
        except OptionError as err:
            key = err.key.removeprefix("params.")
            raise InvalidParameterError(f"{cls.__name__} parameter {key} (a method entry's params.{key}): "
                                        f"{err.reason}") from None

    def _fit(self, inputs: Inputs) -> "Embedder":  # pragma: no cover - interface
        raise NotImplementedError

    def _check_columns(self) -> "Embedder":
        """Refuse a fitted embedding with more columns than the declared ``n_components`` (for an estimator that
        declares one): the scores and figures would read columns the configuration never asked for."""
        declared = getattr(self, "n_components", None)
        Z = getattr(self, "embedding_", None)
        if isinstance(declared, (int, np.integer)) and Z is not None and np.ndim(Z) == 2 and Z.shape[1] > declared:
            raise UserError(f"{type(self).__name__} returned an embedding of {Z.shape[1]} columns, more than its "
                             f"n_components = {int(declared)}; the parameter n_components sets the columns of the "
                             f"embedding (a method entry's params.n_components)")
        return self

    def fit_transform(self, X: Any, y: Any = None, *, inputs: dict[str, Any] | None = None) -> np.ndarray:
        """Fit (:meth:`fit`, on :class:`~cova.inputs.Inputs` or on arrays) and return the embedding ``embedding_``."""
        return self.fit(X, y, inputs=inputs).embedding_

    def __sklearn_tags__(self) -> Tags:
        """A transformer to scikit-learn (it maps X to an embedding); labels are required by the methods that read
        the cohorts; a relation may be sparse."""
        tags = super().__sklearn_tags__()
        need = set(self.requires())
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64"])
        tags.target_tags.required = bool(need & {"labels", "R", "prototypes"})
        tags.input_tags.sparse = "relation" in need
        tags.input_tags.positive_only = "relation" in need
        return tags


#: The fitted points a new point's coordinates are interpolated from (:class:`InterpolatesNewPoints`).
INTERPOLATION_NEIGHBORS = 10


class InterpolatesNewPoints:
    """``transform`` for a method whose embedding is free coordinates per sample (COVA-E1–E4), which the papers
    give no out-of-sample rule for: a new point x goes to Σ_j w_j z_j / Σ_j w_j over its
    :data:`INTERPOLATION_NEIGHBORS` = 10 nearest fitted points in X (Euclidean), w_j = 1 / ‖x − x_j‖ (a fitted
    point at distance 0 takes its own z_j), by scikit-learn's ``KNeighborsRegressor(weights="distance")``. It is the
    minimiser over z of the distance local rule Σ_j w_j ‖z − z_j‖² (COVA Eq. 13's O_dist^(L)) with the fitted
    points fixed and these weights; the cohort rule is left out, since a new point has no label. It needs the
    fitted X (``fit_X_``): inputs without X (a graph block) leave the method without a transform. X_new lives in the
    space of the fitted X (after an inputs block's ``features``)."""

    embedding_: np.ndarray

    def _keep_fitted_points(self, inputs: Inputs) -> None:
        self.fit_X_ = None if inputs.X is None else np.asarray(inputs.X, dtype=np.float64)

    def transform(self, X: Any) -> np.ndarray:
        """New points interpolated from their nearest fitted points (class docstring)."""
        check_is_fitted(self, "embedding_")
        if getattr(self, "fit_X_", None) is None:
            raise UserError(f"{type(self).__name__} was fitted on inputs without X (a graph block), so it has no "
                             f"points to interpolate new ones from")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if X.shape[1] != self.fit_X_.shape[1]:
            raise UserError(f"X has {X.shape[1]} features, but {type(self).__name__} was fitted on "
                             f"{self.fit_X_.shape[1]}")
        k = min(INTERPOLATION_NEIGHBORS, self.fit_X_.shape[0])
        knn = KNeighborsRegressor(n_neighbors=k, weights="distance").fit(self.fit_X_, self.embedding_)
        return np.ascontiguousarray(knn.predict(X), dtype=np.float64)


def fit_class_posterior(inputs: Any, settings: dict[str, Any]) -> dict[str, np.ndarray]:
    """Fit ``ClassPosterior(**settings)`` on the rows of ``inputs`` whose labels may be read (those of
    ``inputs.labelled`` when given, as SNeRV and PE select them) and return it as
    :func:`cova.cohorts.posterior.posterior_arrays`: the model the workflow fits once per inputs block and passes to
    every run that uses the same settings."""
    X, y, rows = supervised_arrays(inputs)
    post = ClassPosterior(**settings).fit(X[rows], y[rows])
    return posterior_arrays(post, training_fingerprint(X[rows], y[rows]))


class UsesClassPosterior:
    """What SNeRV and PE share: a :class:`cova.cohorts.posterior.ClassPosterior` with their ``n_mixture``,
    ``sigma_mixture``, ``posterior_max_iter`` and ``random_state``, fitted on the labelled rows, or taken from
    ``inputs.class_posterior`` when the workflow has fitted it once for all the runs of an inputs block that ask for
    the same model (the same settings give the same fit, so the embedding is the same either way)."""

    n_mixture: Any
    sigma_mixture: Any
    posterior_max_iter: int
    random_state: int | None

    def _posterior_model(self) -> ClassPosterior:
        """The unfitted :class:`cova.cohorts.posterior.ClassPosterior` this method's parameters describe."""
        seed = None if self.random_state is None else int(self.random_state)
        return ClassPosterior(n_components=self.n_mixture, sigma=self.sigma_mixture, random_state=seed,
                              max_iter=int(self.posterior_max_iter))

    def class_posterior_settings(self) -> dict[str, Any] | None:
        """The :class:`cova.cohorts.posterior.ClassPosterior` parameters this method fits with; ``None`` without a
        seed (an unseeded fit cannot be shared)."""
        if self.random_state is None:
            return None
        return self._posterior_model().get_params()

    def _class_posterior(self, inputs: Any, X: np.ndarray, y: np.ndarray, rows: np.ndarray) -> ClassPosterior:
        shared = getattr(inputs, "class_posterior", None)
        if shared is None:
            return self._posterior_model().fit(X[rows], y[rows])
        settings = self.class_posterior_settings()
        name = type(self).__name__
        post = posterior_from_arrays(shared)
        if settings is None or post.get_params() != settings:
            raise UserError(f"{name}: the class posterior passed with the inputs was fitted with {post.get_params()}, "
                             f"but this {name} asks for {settings}")
        if str(shared["fingerprint"]) != training_fingerprint(X[rows], y[rows]):
            raise UserError(f"{name}: the class posterior passed with the inputs was fitted on other training rows "
                             f"than the {int(np.sum(rows))} labelled rows of these inputs")
        return post
