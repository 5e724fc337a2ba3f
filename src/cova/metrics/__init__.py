"""Scores of an embedding (COVA paper, Appendix G, plus trustworthiness / continuity).

All scores are fractions in [0, 1]; Euclidean distances; ties go to the lower index (stable sort on
(distance, index)); no n x n array is ever formed.

* :func:`s_s` - cohort separation (leave-one-out 1-NN accuracy);
* :func:`s_c` - prototype positioning (nearest-prototype accuracy);
* :func:`s_c_r` - relative cohort positioning, Eq. G.1;
* :func:`s_n` - intra-cohort neighbour preservation, Eq. G.2;
* :func:`cohort_graph`, :func:`link_comparison` - the κ-NN cohort graphs behind S_c^(r) and their TP/FP/FN links;
* :func:`trustworthiness`, :func:`continuity` - Venna & Kaski, as :func:`sklearn.manifold.trustworthiness`;
  :func:`trustworthiness_continuity` - both in one pass;
* :func:`cohort_centres` - the embedded cohort centres every cohort-graph comparison starts from.

:mod:`.registry` names every metric with what it needs and the keys it writes; :func:`.score.score_run` is the
score step of the pipeline; :mod:`.cohort_graphs` holds the reference cohort graphs and link counts of the
figures; :mod:`.retrieval` the NeRV paper's information-retrieval measures; :mod:`.crowding` and
:mod:`.display_neighbours` the measures of graph embeddings in a plane or on a sphere (DOSNES).
"""

from .centres import cohort_centres
from .cohort import cohort_graph, link_comparison, s_c, s_c_r, s_n, s_s
from .neighborhood import continuity, trustworthiness, trustworthiness_continuity

__all__ = ["s_n", "s_s", "s_c", "s_c_r", "trustworthiness", "continuity", "trustworthiness_continuity",
           "cohort_graph", "link_comparison", "cohort_centres"]
