"""umap-learn's numba kernels are compiled once and then loaded from numba's file cache by the next process
(cova.jit): the same numbers, no second compilation."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import numba

from cova.jit import cache_library_kernels

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import json
import numpy as np
import umap.umap_ as u
from cova.affinity.fuzzy import fuzzy_graph
P = fuzzy_graph(np.random.default_rng(0).normal(size=(80, 5)), 10)
kernels = (u.smooth_knn_dist, u.compute_membership_strengths)
print(json.dumps({"hits": sum(sum(k.stats.cache_hits.values()) for k in kernels),
                  "misses": sum(sum(k.stats.cache_misses.values()) for k in kernels),
                  "data": P.P.data.tolist()}))
"""


def fresh_process() -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_umap_kernel_gets_a_file_cache():
    cache_library_kernels("umap")
    import umap.layouts
    import umap.umap_

    kernels = [f for m in (umap.umap_, umap.layouts) for f in vars(m).values()
               if isinstance(f, numba.core.dispatcher.Dispatcher)]
    assert len(kernels) > 10
    assert not any(isinstance(f._cache, numba.core.caching.NullCache) for f in kernels)


def test_the_second_process_loads_the_compiled_kernels_and_gets_the_same_graph():
    first, second = fresh_process(), fresh_process()
    assert second["misses"] == 0 and second["hits"] >= 2
    assert second["data"] == first["data"]


def test_no_writable_cache_place_leaves_the_kernels_compiled_per_process(monkeypatch):
    """Numba raises when it finds nowhere to write a cache; the library then runs as it would without us."""
    from cova import jit

    library = types.ModuleType("a_jitted_library")
    library.kernel = numba.njit(lambda x: x + 1)
    monkeypatch.setitem(sys.modules, "a_jitted_library", library)

    def refuse(self):
        raise RuntimeError("cannot cache function: no locator available")

    monkeypatch.setattr(numba.core.dispatcher.Dispatcher, "enable_caching", refuse)
    jit.cache_library_kernels("a_jitted_library")
    assert "a_jitted_library" not in jit._DONE
    assert isinstance(library.kernel._cache, numba.core.caching.NullCache) and library.kernel(1) == 2
