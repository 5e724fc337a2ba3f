"""Numba's file cache for the jitted kernels of umap-learn.

umap-learn compiles most of its numba functions without ``cache=True``, so every process that calls it compiles
them again: UMAP on 300 points takes about 11 s in a fresh process, of which about 9 s is compilation, and a
featMAP score job (umap-learn's fuzzy graph) about 12 s, of which 10 s is compilation. The workflow runs one
process per job, so each such job paid it in full. :func:`cache_library_kernels` turns numba's own on-disk
cache on (``Dispatcher.enable_caching``, what ``cache=True`` does at decoration) for every jitted function of a
library's loaded modules that has no cache yet, before their first call. The compiled code is the one numba
would build anyway, only kept: numba keys each entry on the function's source file, its signature and numba's
version, stores it beside the library (or under ``NUMBA_CACHE_DIR`` where that is read-only), and recompiles
when any of them changes. pynndescent caches its own kernels where it can (its NN-descent loop cannot be: numba
refuses to cache a function with dynamic globals), so only umap-learn gets this.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["cache_library_kernels"]

_DONE: set[str] = set()


def cache_library_kernels(package: str) -> None:
    """Import ``package`` and give every numba function of its loaded modules a file cache (once per process).

    Functions that already have one (``cache=True``) are left as they are. Where numba finds no writable place
    for a cache (neither beside the library, nor ``NUMBA_CACHE_DIR``, nor the user's cache folder) the functions
    stay as they were: compiled in each process, as before.
    """
    if package in _DONE:
        return
    importlib.import_module(package)
    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    for name, module in list(sys.modules.items()):
        if module is None or not (name == package or name.startswith(package + ".")):
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, Dispatcher) and isinstance(obj._cache, NullCache):
                try:
                    obj.enable_caching()
                except RuntimeError:  # numba: "cannot cache function …: no locator available"
                    return
    _DONE.add(package)
