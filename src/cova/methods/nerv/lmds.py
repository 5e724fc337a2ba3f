"""Local MDS (LMDS; Venna & Kaski 2006), the NeRV paper's baseline (Venna et al. 2010, Sec. 4.1,
"LocalMDS"; the paper gives no formula, so the cost and optimiser follow the authors' toolbox dredviz 1.0.2).

Cost (dredviz ``lmdscostfunction.cc``)::

    E = 1/2 sum_i sum_{j != i} (d_x(i,j) - d_y(i,j))^2 w_ij,
    w_ij = (1 - lam) 1{d_y(i,j) < max(r, rho_i)} + lam 1{d_x(i,j) < max(r, rho_i)},

with rho_i the input distance from i to its k-th nearest neighbour (k = ``n_neighbors``, 20), input distances
rescaled to mean 1 over the pairs i != j, and r a radius annealed linearly from ``1.5 max D_x`` to 0 over the
run. ``lam = 0`` (dredviz default) is CCA with a per-point minimum neighbourhood rho_i; ``r = inf, lam = 0`` is
plain raw stress (every pair counted twice, hence the 1/2).

Optimiser: CCA-style stochastic updates (Demartines & Herault 1997; dredviz ``ccaoptimization.cc``). For
t = 0..T-1 (T = ``n_iter_per_point * n``, default 400 n) a point i is drawn uniformly (seeded numpy Generator)
and every other point j moves by minus the gradient of the i-th term of E with respect to y_j (y_i held fixed)::

    y_j <- y_j + alpha(t) w_ij(t) (d_x(i,j) - d_y(i,j)) / d_y(i,j) (y_j - y_i),

with alpha(t) = alpha0 (1 - t/T) (alpha0 = 0.25) and r(t) = 1.5 max(D_x) (1 - t/T) (both linear to 0,
evaluated per step); w_ij(t) uses the current d_y(i,j), r(t) and rho_i exactly as in the cost. Pairs with
d_y(i,j) = 0 are skipped (dredviz). Each step is O(n); the dense n x n input distance matrix makes the
method O(n^2) in memory, so ``fit`` refuses more than ``max_samples`` points (default 5,000).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import pdist

from ...affinity.distances import mean_scaled_distances
from ...constraints import (
    MAX_SAMPLES,
    NON_NEGATIVE,
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    SEED_OR_NONE,
    UNIT,
    StrOptions,
)
from ...errors import UserError
from ...objectives.lmds import lmds_cost, lmds_updates, neighbourhood_radii
from ...progress import Progress
from ..base import Embedder, neighbours_below_samples, size_guard
from .nerv import pca_needs_features

__all__ = ["LMDS", "CCA", "CDA", "DEFAULT_MAX_SAMPLES"]

#: Largest n an LMDS fit accepts by default (dense n x n float64 input distances).
DEFAULT_MAX_SAMPLES = 5000
#: Why LMDS, CCA and CDA are O(n²) (the message of their size guards).
_QUADRATIC = "dense n x n input distances; n_iter_per_point n^2 pair updates"


class LMDS(Embedder):
    """Local MDS (Venna & Kaski 2006), CCA-style stochastic optimisation (module docstring).

    Parameters
    ----------
    n_components : output dimension.
    lam : trade-off lambda in [0, 1] (dredviz default 0; the NeRV paper's figures use 0..0.9).
    n_neighbors : k of the minimum neighbourhood radius rho_i (20).
    n_iter_per_point : T = n_iter_per_point * n stochastic steps (400).
    alpha0 : initial learning rate, annealed linearly to 0 (0.25).
    radius_factor : initial radius r_0 = radius_factor * max(D) (1.5), annealed linearly to 0.
    init : ``"pca"`` (PCA of the data, rescaled to mean pairwise distance 1; seeded uniform random when the
        data have fewer features than ``n_components``), ``"random"`` (uniform in the unit square) or an array.
    metric : ``"euclidean"`` or ``"precomputed"`` (then ``init`` must be ``"random"`` or an array).
    max_samples : size guard; more points are refused (dense n x n input distances; ``_option_rules``).
    random_state : seed of the point order and of a random initialisation.
    """

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "lam": UNIT,
        "n_neighbors": POSITIVE_INT,
        "n_iter_per_point": NON_NEGATIVE_INT,
        "alpha0": POSITIVE,
        "radius_factor": NON_NEGATIVE,
        "init": [StrOptions({"pca", "random"}), "array-like"],
        "metric": [StrOptions({"euclidean", "precomputed"})],
        "max_samples": MAX_SAMPLES,
        "random_state": SEED_OR_NONE,
    }

    _option_rules = (size_guard("LMDS", _QUADRATIC), pca_needs_features,
                     neighbours_below_samples("the minimum neighbourhood radius rho_i is the distance to the k-th "
                                              "nearest of the n − 1 other points"))

    def __init__(self, n_components: int = 2, lam: float = 0.0, n_neighbors: int = 20, n_iter_per_point: int = 400,
                 alpha0: float = 0.25, radius_factor: float = 1.5, init: Any = "pca", metric: str = "euclidean",
                 max_samples: int = DEFAULT_MAX_SAMPLES, random_state: int | None = 0):
        self.n_components = n_components
        self.lam = lam
        self.n_neighbors = n_neighbors
        self.n_iter_per_point = n_iter_per_point
        self.alpha0 = alpha0
        self.radius_factor = radius_factor
        self.init = init
        self.metric = metric
        self.max_samples = max_samples
        self.random_state = random_state

    def _initial(self, X: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        d = int(self.n_components)
        init = self.init
        if isinstance(init, str):
            if init == "pca":  # with feature vectors: _option_rules
                if X.shape[1] < d:
                    Y = rng.uniform(0.0, 1.0, size=(n, d))
                else:
                    Xc = X - X.mean(axis=0)
                    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
                    Y = Xc @ Vt[:d].T
                m = float(pdist(Y).mean())
                if not m > 0:
                    Y = rng.uniform(0.0, 1.0, size=(n, d))
                    m = float(pdist(Y).mean())
                return np.ascontiguousarray(Y / m)  # mean pairwise display distance 1, like the input
            return rng.uniform(0.0, 1.0, size=(n, d))
        Y = np.array(init, dtype=np.float64)
        if Y.shape != (n, d) or not np.all(np.isfinite(Y)):
            raise UserError(f"an init array must be finite with shape ({n}, {d}); got {Y.shape}")
        return np.ascontiguousarray(Y)

    def _distances(self, inputs: Any) -> tuple[np.ndarray, np.ndarray, float]:
        """(X, input distances scaled to mean 1, the scale divided out)."""
        return mean_scaled_distances(inputs, self.metric)

    def _radii(self, D: np.ndarray) -> np.ndarray:
        return neighbourhood_radii(D, int(self.n_neighbors))

    def _lam(self) -> float:
        return float(self.lam)

    def _fit(self, inputs: Any) -> "LMDS":
        """Embed ``inputs.X``; sets ``embedding_`` (n, n_components, in mean-1 input units), ``rho_``,
        ``distance_scale_`` (mean input distance divided out), ``n_iter_`` (T) and ``cost_`` (final cost,
        r = 0)."""
        self._validate_params()
        X, D, scale = self._distances(inputs)
        n = X.shape[0]
        rho = self._radii(D)
        rng = np.random.default_rng(self.random_state)
        Y = self._initial(X, n, rng)
        T = int(self.n_iter_per_point) * n
        r0 = float(self.radius_factor) * float(D.max())
        lam = self._lam()
        # the point order in chunks: O(chunk) memory whatever T, and a progress tick per n point updates (one sweep)
        chunk = min(1 << 20, max(n, 1))
        with Progress(f"{type(self).__name__} stochastic pair updates, sweeps of {n} points", -(-T // chunk)) \
                as progress:
            for t0 in range(0, T, chunk):
                order = rng.integers(0, n, size=min(chunk, T - t0))
                lmds_updates(Y, D, rho, order, t0, T, float(self.alpha0), r0, lam)
                progress.tick()
        self.embedding_ = np.ascontiguousarray(Y)
        self.rho_ = rho
        self.distance_scale_ = scale
        self.n_iter_ = T
        self.cost_ = lmds_cost(Y, D, rho, 0.0, lam)
        return self


class CCA(LMDS):
    """Curvilinear component analysis (Demartines & Hérault 1997), a baseline of NeRV Sec. 4.1: the raw-stress
    terms of the pairs whose **display** distance is below a radius r annealed to 0,

    ``E = 1/2 sum_i sum_{j != i} (d_x(i,j) - d_y(i,j))^2 1{d_y(i,j) < r}``,

    i.e. the local MDS cost above with λ = 0 and no minimum neighbourhood (ρ_i = 0), optimised by the same
    stochastic pair updates (the authors' toolbox runs CCA and local MDS through one optimiser,
    ``ccaoptimization.cc``). Parameters as :class:`LMDS` without ``lam`` and ``n_neighbors``.
    """

    sklearn_compatible = True

    _parameter_constraints = {k: v for k, v in LMDS._parameter_constraints.items()
                              if k not in ("lam", "n_neighbors")}

    _option_rules = (size_guard("CCA", _QUADRATIC), pca_needs_features)

    def __init__(self, n_components: int = 2, n_iter_per_point: int = 400, alpha0: float = 0.25,
                 radius_factor: float = 1.5, init: Any = "pca", metric: str = "euclidean",
                 max_samples: int = DEFAULT_MAX_SAMPLES, random_state: int | None = 0):
        self.n_components = n_components
        self.n_iter_per_point = n_iter_per_point
        self.alpha0 = alpha0
        self.radius_factor = radius_factor
        self.init = init
        self.metric = metric
        self.max_samples = max_samples
        self.random_state = random_state

    def _radii(self, D: np.ndarray) -> np.ndarray:
        return np.zeros(D.shape[0])

    def _lam(self) -> float:
        return 0.0


class CDA(CCA):
    """Curvilinear distance analysis (Lee, Lendasse & Verleysen 2004), a baseline of NeRV Sec. 4.1: :class:`CCA`
    on geodesic input distances, the shortest paths over the Euclidean k-NN graph of ``inputs.X``
    (:func:`cova.affinity.graphs.geodesic_distances`; ``n_neighbors`` = k, tuned in the paper), scaled to mean 1
    like the Euclidean ones. Parameters as :class:`CCA`, with ``n_neighbors`` in place of ``metric``.
    """

    _parameter_constraints = {**{k: v for k, v in CCA._parameter_constraints.items() if k != "metric"},
                              "n_neighbors": POSITIVE_INT}

    _option_rules = (size_guard("CDA", _QUADRATIC),
                     neighbours_below_samples("the geodesic distances follow the k-nearest-neighbour graph of the "
                                              "n points"))

    def __init__(self, n_components: int = 2, n_neighbors: int = 10, n_iter_per_point: int = 400,
                 alpha0: float = 0.25, radius_factor: float = 1.5, init: Any = "pca",
                 max_samples: int = DEFAULT_MAX_SAMPLES, random_state: int | None = 0):
        # metric stays "euclidean" (the k-NN graph and the PCA start); it is not a CDA parameter
        super().__init__(n_components=n_components, n_iter_per_point=n_iter_per_point, alpha0=alpha0,
                         radius_factor=radius_factor, init=init, max_samples=max_samples, random_state=random_state)
        self.n_neighbors = n_neighbors

    def _distances(self, inputs: Any) -> tuple[np.ndarray, np.ndarray, float]:
        return mean_scaled_distances(inputs, "geodesic", int(self.n_neighbors))
