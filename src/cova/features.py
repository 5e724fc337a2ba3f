"""Input feature transforms and cohort assignments that an ``inputs`` block may apply before W, R and Υ are built.

```yaml
features: {kind: pca, n_components: 30}            # Table 1 footnote 1: PCA to 30 dims
features: {kind: compacted, n_neighbors: 30}        # Cora H.3: X = [S̃YM⁻¹, ΘYM⁻¹] (footnote 5)
cohorts:  {kind: spectral, n_clusters: 20}          # Cora's 20 clusters (H.3, Table 2)
cohorts:  {kind: predicted, labelled_per_class: 5}  # Fig. 5: 1-NN labels from 5 labelled samples per class
```

The transformed X is "the matrix the model was given", so it is also the space S_n is measured in (COVA App. G,
"original features"). Both blocks are optional: ``raw`` features and the dataset's own labels are the defaults.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .affinity.weights import KINDS as WEIGHT_KINDS
from .constraints import POSITIVE_INT, Block, Declaration, Kinds, StrOptions, check_options, integer
from .datasets.base import Dataset
from .errors import UserError
from .permutations import inverse_permutation


def _compacted_similarity(options: Any, context: Any) -> tuple[str, str] | None:
    """``similarity: weights`` takes its neighbours from ``weights`` and has no relation block."""
    if options["similarity"] == "weights":
        if options["n_neighbors"] is not None:
            return "n_neighbors", "similarity 'weights' takes its neighbours from 'weights'"
        if options["relations"]:
            return "relations", "similarity 'weights' takes no relation block; set relations: false"
    elif options["base"] is not None or options["weights"] is not None:
        return "similarity", "'base' and 'weights' apply to similarity 'weights' only"
    return None


#: The ``features`` block of an inputs block, by kind (:func:`transform_features`).
FEATURE_KINDS = Kinds("features kind", {
    "raw": Declaration({}),
    "pca": Declaration({"n_components": POSITIVE_INT}),
})
FEATURE_KINDS.register("compacted", Declaration(
    {"n_neighbors": [*POSITIVE_INT, None], "relations": ["boolean", None],
     "similarity": [StrOptions({"cosine", "weights"})],
     "base": [Block(FEATURE_KINDS, "a features block {kind: ...}"), None],
     "weights": [Block(WEIGHT_KINDS, "a weights block {kind: ...}"), None]},
    defaults={"n_neighbors": None, "relations": None, "similarity": "cosine", "base": None, "weights": None},
    rules=[_compacted_similarity]))
#: ``compacted`` features' defaults: cosine h-NN with h = 30 and the relation block; with ``similarity: weights``
#: the perplexity-30 Gaussian graph (COVA Sec. 4.2, Fig. 8).
COMPACTED_NEIGHBOURS = 30
COMPACTED_WEIGHTS = {"kind": "gaussian_perplexity", "perplexity": 30}

#: The ``cohorts`` block of an inputs block, by kind (:func:`assign_cohorts`).
COHORT_KINDS = Kinds("cohorts kind", {
    "given": Declaration({}),
    "spectral": Declaration({"n_clusters": [integer(2, None)], "n_neighbors": POSITIVE_INT},
                            defaults={"n_neighbors": 30}),
    "predicted": Declaration({"labelled_per_class": POSITIVE_INT}),
})


def cosine_knn_similarity(X: np.ndarray, n_neighbors: int, *, seed: int = 0) -> sp.csr_matrix:
    """S̃ = S ∘ N(S, h) with S the cosine similarity (COVA H.3): the union of every sample's h most cosine-similar
    other samples, similarities clipped at 0, zero diagonal (:func:`cova.affinity.weights.cosine_knn_similarity`).
    Every sample must be a non-zero vector. Sparse, O(l·h) memory."""
    from .affinity.weights import cosine_knn_similarity as knn_similarity

    norms = np.linalg.norm(X, axis=1)
    if np.any(norms == 0):
        raise UserError(f"{int((norms == 0).sum())} samples are all-zero vectors; their cosine similarity is "
                         "undefined (remove them or use features kind 'pca')")
    return knn_similarity(X, n_neighbors, random_state=seed)


def transform_features(dataset: Dataset, spec: dict[str, Any] | None, *, labels: np.ndarray,
                       seed: int = 0, fit_rows: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """The features every method and score sees, from one ``features`` block; returns ``(X, facts)``.

    kind
        ``"raw"``: the dataset's X unchanged.
        ``"pca"``: scikit-learn PCA to ``n_components`` (centred, not whitened; ``svd_solver="full"`` so the
        result does not depend on a random state). Table 1's footnote 1 and the stand-in image protocol (PCA-50).
        With ``fit_rows`` (a boolean mask, e.g. the training split) the PCA is fitted on those rows only and
        applied to all; ``n_components`` is capped at the number of those rows.
        ``"compacted"``: Cora's X = [S̃YM⁻¹, ΘYM⁻¹] (H.3, footnote 5): S is the cosine between samples, S̃ keeps the
        ``n_neighbors`` (default 30) nearest in either direction with zero diagonal, Y is the label indicator of
        ``labels`` (every sample is a representative), M = diag(cohort sizes), and Θ the **undirected** relation
        matrix of the dataset (our reading: the directed one leaves papers without outgoing citations all-zero).
        ``relations: false`` drops the Θ block (the S̃YM⁻¹ of the 20-cluster projections).
        ``similarity: weights`` (COVA Sec. 4.2, Fig. 8: "all the training samples as the representative samples",
        S̃ "copied from W") builds S̃ instead from an affinity graph ``weights`` (default the perplexity-30 Gaussian
        graph) on the ``base`` features (e.g. ``{kind: pca, n_components: 50}``, fitted on ``fit_rows``) of all
        samples, scaled by l (unit mean row sum; the compacted features are defined up to that factor) and
        restricted to the columns of the training rows (``fit_rows``; all rows without a split): X = S̃ Y M⁻¹ with
        Y the training rows' labels, so a test row's features use its similarities to training rows and never its
        own label. ``n_neighbors`` does not apply, and ``relations`` must be false.
    """
    from .cohorts import compacted_features

    spec = check_options(FEATURE_KINDS, spec or {"kind": "raw"}, "features")
    kind = spec["kind"]
    if kind == "raw":
        return dataset.X, {}
    if kind == "pca":
        from sklearn.decomposition import PCA

        n = int(spec["n_components"])
        if not 1 <= n <= min(dataset.X.shape):
            raise UserError(f"features.n_components must be in 1..{min(dataset.X.shape)}, got {n}")
        rows = slice(None) if fit_rows is None else np.asarray(fit_rows, dtype=bool)
        fitted = ""
        if fit_rows is not None:
            n_fit = int(np.sum(rows))
            fitted = f", fitted on {n_fit} training rows"
            if n > n_fit:  # a tiny training split (Fig. H.10, 5 %) cannot span n components
                n, fitted = n_fit, fitted + f" (capped at the {n_fit} training rows)"
        Z = PCA(n_components=n, svd_solver="full").fit(dataset.X[rows]).transform(dataset.X)
        return np.ascontiguousarray(Z), {"features_used": f"PCA to {n} dimensions{fitted}"}
    c = int(labels.max()) + 1
    if spec["similarity"] == "weights":
        return _weights_compacted(dataset, spec, labels, c, seed, fit_rows)
    h = COMPACTED_NEIGHBOURS if spec["n_neighbors"] is None else int(spec["n_neighbors"])
    use_relations = spec["relations"] is not False
    S = cosine_knn_similarity(dataset.X, h, seed=seed)
    blocks = [compacted_features(S, labels, None, n_cohorts=c)]
    if use_relations:
        if dataset.relations is None:
            raise UserError("features kind 'compacted' with relations: true needs a dataset with a relation matrix "
                             "(e.g. Cora's citations); set relations: false otherwise")
        T = dataset.relations
        theta = ((T + T.T) > 0).astype(np.float64).tocsr()
        theta.setdiag(0.0)
        theta.eliminate_zeros()
        blocks.append(compacted_features(theta, labels, None, n_cohorts=c))
    X = np.hstack(blocks)
    return X, {"features_used": f"compacted [S~YM^-1{', ThetaYM^-1' if use_relations else ''}], cosine {h}-NN "
                           f"({X.shape[1]} dims)"}


def _weights_compacted(dataset: Dataset, spec: dict[str, Any], labels: np.ndarray, c: int, seed: int,
                       fit_rows: np.ndarray | None) -> tuple[np.ndarray, dict[str, Any]]:
    """``compacted`` with ``similarity: weights`` (see :func:`transform_features`)."""
    from .affinity import build_weights
    from .cohorts import compacted_features

    Xb, base_facts = transform_features(dataset, spec["base"], labels=labels, seed=seed, fit_rows=fit_rows)
    w = check_options(WEIGHT_KINDS, spec["weights"] or COMPACTED_WEIGHTS, "features.weights")
    kind = w.pop("kind")
    W = build_weights(Xb, kind, random_state=seed, **w).tocsr()
    reps = np.arange(labels.shape[0]) if fit_rows is None else np.flatnonzero(fit_rows)
    S = (W.shape[0] * W)[:, reps]
    X = compacted_features(S, labels[reps], None, n_cohorts=c)
    base = base_facts.get("features_used", "the dataset's X")
    return X, {"features_used": f"compacted [S~YM^-1], S~ = l x W ({kind}) of {base}, columns of the "
                                f"{reps.size} training rows ({X.shape[1]} dims)"}


def predict_cohorts(X: np.ndarray, labels: np.ndarray, labelled_per_class: int, *,
                    seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Partially labelled cohorts (COVA Sec. 3 and Fig. 5): ``labelled_per_class`` samples of every
    class keep their true label (drawn uniformly without replacement, seeded; a class with no more samples than
    that is labelled entirely), and every other sample takes the label of its nearest labelled sample in X
    (1-NN, Euclidean, ties to the lower sample index). Returns ``(predicted labels, labelled mask)``."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(labels)
    n = int(labelled_per_class)
    if n < 1:
        raise UserError(f"cohorts.labelled_per_class must be >= 1, got {n}")
    rng = np.random.default_rng([int(seed), 0x4C4142])
    labelled = np.zeros(y.shape[0], dtype=bool)
    for j in np.unique(y):
        members = np.flatnonzero(y == j)
        labelled[members if members.size <= n else rng.choice(members, n, replace=False)] = True
    L = np.flatnonzero(labelled)
    pred = y.copy()
    XL = X[L]
    sqL = np.sum(XL * XL, axis=1)
    unl = np.flatnonzero(~labelled)
    step = max(1, 2 ** 22 // max(1, L.size))
    for start in range(0, unl.size, step):
        rows = unl[start:start + step]
        d2 = sqL[None, :] - 2.0 * (X[rows] @ XL.T)   # + ||x||², constant per row
        pred[rows] = y[L[np.argmin(d2, axis=1)]]      # argmin: first minimum, i.e. the lower index
    return pred, labelled


def assign_cohorts(dataset: Dataset, spec: dict[str, Any] | None, *,
                   seed: int = 0, X: np.ndarray | None = None) -> tuple[np.ndarray, list[str]]:
    """Cohort labels from one ``cohorts`` block; returns ``(labels, names)``.

    kind
        ``"given"``: the dataset's labels.
        ``"spectral"``: scikit-learn ``SpectralClustering(n_clusters, affinity="precomputed")`` on the cosine
        ``n_neighbors``-NN similarity S̃ of the raw X (default 30; the paper does not give h for Table 2), seeded by the
        inputs seed. Clusters are renumbered by decreasing size (ties: lower first sample index) so that the
        numbering does not depend on the solver's arbitrary label order. Names are ``cluster 1 .. cluster c``.
        ``"predicted"``: the dataset's classes, with ``labelled_per_class`` true labels per class and the rest
        predicted by 1-NN in ``X`` (default the dataset's X; :func:`predict_cohorts`). Names are the class names.
    """
    spec = check_options(COHORT_KINDS, spec or {"kind": "given"}, "cohorts")
    kind = spec["kind"]
    if kind == "given":
        return dataset.labels, list(dataset.label_names)
    if kind == "predicted":
        pred, _ = predict_cohorts(dataset.X if X is None else X, dataset.labels, int(spec["labelled_per_class"]),
                                  seed=seed)
        return pred, list(dataset.label_names)
    from sklearn.cluster import SpectralClustering

    k = int(spec["n_clusters"])
    h = int(spec["n_neighbors"])
    if not 2 <= k < dataset.n_samples:
        raise UserError(f"cohorts.n_clusters must be in 2..{dataset.n_samples - 1}, got {k}")
    S = cosine_knn_similarity(dataset.X, h, seed=seed)
    raw = SpectralClustering(n_clusters=k, affinity="precomputed", random_state=seed,
                             assign_labels="kmeans").fit_predict(S)
    sizes = np.bincount(raw, minlength=k)
    first = np.array([np.flatnonzero(raw == j)[0] if sizes[j] else dataset.n_samples for j in range(k)])
    order = np.lexsort((first, -sizes))
    return inverse_permutation(order)[raw], [f"cluster {j + 1}" for j in range(k)]
