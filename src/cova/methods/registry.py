"""Config name -> estimator class. The parameters a config may set are the classes' ``__init__`` arguments; the
values each accepts are declared in the class's ``_parameter_constraints`` (:mod:`cova.constraints`)."""

from __future__ import annotations

import inspect
from typing import Any

from ..errors import UserError
from .base import Embedder
from .baselines.deep_embedding import DeepEmbedding
from .baselines.ldmgi import LDMGI
from .baselines.library_baselines import HNNE, DensMAP, PaCMAP, SklearnTSNE, TriMap
from .baselines.llc import LLC
from .baselines.mcml import MCML
from .baselines.mma import MMA
from .baselines.mvu import LMVU, MUHSIC
from .baselines.pe import ParametricEmbedding
from .baselines.sklearn_baselines import HLLE, LDA, LLE, MDS, NCA, PCA, UMAP, Isomap
from .baselines.supervised_isomap import SupervisedIsomap
from .coembed.acas import ACAS
from .coembed.ca import CA
from .coembed.code import CODE
from .coembed.coembed import CoEmbedding
from .coembed.mkpe import MKPE
from .cova import CovaE1, CovaE2, CovaE3, CovaE4, CovaP1, CovaP2, CovaP3, CovaP4, EigenCova
from .dosnes import DOSNES, TSNEAffinity
from .featmap import FeatMAP
from .nerv.lmds import CCA, CDA, LMDS
from .nerv.nerv import NeRV, TNeRV
from .nerv.snerv import SNeRV
from .sne.mre import MRE
from .sne.nse import NSE, LaplacianEigenmaps
from .sne.sne import SNE, ExactTSNE
from .sne.supervised import SupervisedNSE, SupervisedSNE, SupervisedTSNE
from .sne.tsne import TSNE

METHODS: dict[str, type[Embedder]] = {
    "cova_e1": CovaE1,
    "cova_e2": CovaE2,
    "cova_e3": CovaE3,
    "cova_e4": CovaE4,
    "cova_p1": CovaP1,
    "cova_p2": CovaP2,
    "cova_p3": CovaP3,
    "cova_p4": CovaP4,
    "eigen_cova": EigenCova,
    "nerv": NeRV,
    "tnerv": TNeRV,
    "snerv": SNeRV,
    "pe": ParametricEmbedding,
    "mre": MRE,
    "deep_embedding": DeepEmbedding,
    "s_isomap": SupervisedIsomap,
    "lmds": LMDS,
    "cca": CCA,
    "cda": CDA,
    "tsne": TSNE,
    "tsne_exact": ExactTSNE,
    "tsne_affinity": TSNEAffinity,
    "dosnes": DOSNES,
    "sne": SNE,
    "nse": NSE,
    "supervised_sne": SupervisedSNE,
    "supervised_tsne": SupervisedTSNE,
    "supervised_nse": SupervisedNSE,
    "laplacian_eigenmaps": LaplacianEigenmaps,
    "lle": LLE,
    "hlle": HLLE,
    "llc": LLC,
    "isomap": Isomap,
    "lmvu": LMVU,
    "muhsic": MUHSIC,
    "mds": MDS,
    "lda": LDA,
    "nca": NCA,
    "mcml": MCML,
    "ldmgi": LDMGI,
    "mma": MMA,
    "umap": UMAP,
    "densmap": DensMAP,
    "tsne_sklearn": SklearnTSNE,
    "trimap": TriMap,
    "pacmap": PaCMAP,
    "hnne": HNNE,
    "pca": PCA,
    "ca": CA,
    "coembed": CoEmbedding,
    "acas": ACAS,
    "code": CODE,
    "mkpe": MKPE,
    "featmap": FeatMAP,
}


def split_capable() -> str:
    """The methods that can run on inputs with a train/test split, for error messages: those with a ``transform``
    for the test rows and those that take unlabelled samples (fitted on every row with the test labels hidden)."""
    mapped = sorted(n for n, cls in METHODS.items() if callable(getattr(cls, "transform", None)))
    hidden = sorted(n for n, cls in METHODS.items() if cls.semi_supervised)
    return f"a method with a transform ({', '.join(mapped)}) or one that takes unlabelled samples ({', '.join(hidden)})"


def method_parameters(name: str) -> list[str]:
    """The parameter names method ``name`` accepts."""
    return [p for p in inspect.signature(METHODS[name].__init__).parameters if p != "self"]


def make_method(name: str, params: dict[str, Any] | None = None, seed: int | None = None) -> Embedder:
    """Instantiate method ``name`` with ``params``; ``seed`` fills ``random_state`` when the method has one
    and the config did not set it. Unknown names or parameters raise ``ValueError`` naming the allowed ones; the
    values are checked against the constraints by ``_validate_params()``, which ``fit`` calls first."""
    if name not in METHODS:
        raise UserError(f"unknown method {name!r}; allowed: {sorted(METHODS)}")
    params = dict(params or {})
    allowed = method_parameters(name)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise UserError(f"method {name!r} got unknown parameters {unknown}; allowed: {allowed}")
    if seed is not None and "random_state" in allowed:
        params.setdefault("random_state", seed)
    return METHODS[name](**params)
