"""Cora (LINQS): 2,708 machine-learning papers, 1,433 binary word features, 7 classes, citation graph.

Source: https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz (McCallum et al. 2000; Sen et al. 2008), files
``cora.content`` (``<paper_id> <1433 binary words> <class_label>``, tab-separated) and ``cora.cites``
(``<cited paper id>\\t<citing paper id>``: the link is right-to-left, see the upstream README).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..constraints import declare
from ..errors import UserError
from .base import Dataset


@declare({})
def cora(raw_dir: str | os.PathLike) -> Dataset:
    """Load Cora from ``raw_dir/cora.content`` and ``raw_dir/cora.cites``.

    - ``X``: the 2,708×1,433 binary word matrix, rows in the order of ``cora.content`` (the word vectors
      of COVA App. H.3).
    - ``labels``: class indices in **alphabetical** order of the class names (Case_Based=0, Genetic_Algorithms,
      Neural_Networks, Probabilistic_Methods, Reinforcement_Learning, Rule_Learning, Theory=6).
    - ``relations``: the **directed** binary citation matrix Θ with ``θ[citing, cited] = 1`` (a ``cora.cites``
      line ``a\\tb`` sets ``θ[b, a]``). Repeated lines count once; self-citations are dropped (the upstream file
      has neither; their counts are in ``meta``). Symmetrise (Θ + Θᵀ > 0) for the undirected adjacency.
    - ``meta``: ``paper_ids`` (as strings, row order), the citation-line, directed-pair, undirected-edge,
      duplicate and self-loop counts.

    Citations naming a paper that is not in ``cora.content`` raise ``ValueError``.
    """
    import pandas as pd  # here, not at the top: every job imports the loaders' package

    raw_dir = Path(raw_dir)
    content = pd.read_csv(raw_dir / "cora.content", sep="\t", header=None, dtype=str)
    ids = content.iloc[:, 0].to_numpy()
    words = content.iloc[:, 1:-1].to_numpy(dtype=np.int8)
    classes = content.iloc[:, -1].to_numpy()
    if not np.isin(words, (0, 1)).all():
        raise UserError(f"{raw_dir / 'cora.content'}: word features must be 0/1")
    if len(set(ids)) != len(ids):
        raise UserError(f"{raw_dir / 'cora.content'}: repeated paper ids")
    names, labels = np.unique(classes, return_inverse=True)  # sorted names -> alphabetical class order

    cites = pd.read_csv(raw_dir / "cora.cites", sep="\t", header=None, dtype=str).to_numpy()
    if cites.ndim != 2 or cites.shape[1] != 2:
        raise UserError(f"{raw_dir / 'cora.cites'}: expected two tab-separated ids per line")
    index = pd.Index(ids)
    cited, citing = index.get_indexer(cites[:, 0]), index.get_indexer(cites[:, 1])
    unknown = (cited < 0) | (citing < 0)
    if unknown.any():
        raise UserError(f"{raw_dir / 'cora.cites'}: {int(unknown.sum())} lines name papers not in cora.content")
    l = len(ids)
    self_loops = citing == cited
    pairs = np.unique(citing.astype(np.int64) * l + cited)
    n_dup = len(cites) - len(pairs)
    keep = pairs[pairs // l != pairs % l]
    theta = sp.csr_matrix((np.ones(len(keep)), (keep // l, keep % l)), shape=(l, l))
    undirected = int(sp.triu(((theta + theta.T) > 0).astype(np.int8), k=1).nnz)
    return Dataset(words, labels, list(names), relations=theta, meta={
        "source": "Cora (LINQS cora.tgz: cora.content, cora.cites)", "paper_ids": [str(i) for i in ids],
        "relations": "directed citations, theta[citing, cited] = 1 (cora.cites lines are <cited>\\t<citing>)",
        "n_citation_lines": int(len(cites)), "n_duplicate_lines": int(n_dup),
        "n_self_loops_dropped": int(self_loops.sum()), "n_directed_pairs": int(theta.nnz),
        "n_undirected_edges": undirected, "class_order": "alphabetical"})
