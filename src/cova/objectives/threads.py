"""Thread policy of the package's parallel numba kernels."""

from __future__ import annotations

import contextlib
from typing import Iterator

import numba

__all__ = ["PARALLEL_MIN_WORK", "kernel_threads", "one_numba_thread"]

#: Compiled kernels with less inner-loop work than this (edges or sample–prototype pairs) run on one thread: a
#: parallel region costs microseconds on an idle machine but about one scheduler time slice (~10 ms) when the
#: cores are oversubscribed, which made E4 at l = 1,000 ten times slower with 2 threads than with 1.
PARALLEL_MIN_WORK = 1 << 20


@contextlib.contextmanager
def one_numba_thread() -> Iterator[None]:
    """Run the enclosed numba code on one thread (the previous count restored afterwards)."""
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(old)


@contextlib.contextmanager
def kernel_threads(work: int) -> Iterator[None]:
    """Run the enclosed numba kernels single-threaded when ``work`` < :data:`PARALLEL_MIN_WORK`."""
    if work >= PARALLEL_MIN_WORK:
        yield
        return
    with one_numba_thread():
        yield
