"""COVA's models (COVA Sec. 3): E1 in closed form (:mod:`.closed_form`), E2–E4 on the noncompact Stiefel manifold
(:mod:`.manifold`), and the projection models P1–P4 and eigen-COVA (:mod:`.projection`)."""

from .closed_form import CovaE1
from .manifold import CovaE2, CovaE3, CovaE4
from .projection import CovaP1, CovaP2, CovaP3, CovaP4, EigenCova

__all__ = ["CovaE1", "CovaE2", "CovaE3", "CovaE4", "CovaP1", "CovaP2", "CovaP3", "CovaP4", "EigenCova"]
