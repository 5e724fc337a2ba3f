"""COVA's rule-specific objectives (COVA Sec. 3.1, Appendix A), each returning (value, Euclidean gradient)."""

from .cohort import o_dist_c
from .local import o_dist_l

__all__ = ["o_dist_c", "o_dist_l"]
