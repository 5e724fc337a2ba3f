"""Visualization methods as estimators with ``fit(inputs)`` / ``fit_transform(inputs)``."""

from .base import Embedder
from .cova import CovaE1
from .registry import METHODS, make_method, method_parameters
from .sklearn_baselines import PCA
from .tsne import TSNE

__all__ = ["METHODS", "PCA", "TSNE", "CovaE1", "Embedder", "make_method", "method_parameters"]
