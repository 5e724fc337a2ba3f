"""Visualization methods as estimators with ``fit(inputs)`` / ``fit_transform(inputs)``."""

from ..manifolds import DegenerateSolution
from .base import MAX_DISPLAY_DIMENSIONS, Embedder, check_prototype_dimension
from .baselines.sklearn_baselines import PCA
from .cova import CovaE1, CovaE2, CovaE3, CovaE4, CovaP1, CovaP2, CovaP3, CovaP4, EigenCova
from .registry import METHODS, make_method, method_parameters, split_capable
from .sne.tsne import TSNE

__all__ = ["METHODS", "PCA", "TSNE", "DegenerateSolution", "CovaE1", "CovaE2", "CovaE3", "CovaE4", "CovaP1",
           "CovaP2", "CovaP3", "CovaP4", "EigenCova", "Embedder", "make_method", "method_parameters",
           "split_capable", "MAX_DISPLAY_DIMENSIONS", "check_prototype_dimension"]
