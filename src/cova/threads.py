"""The thread pools of one workflow step, sized to the step's thread count.

A Snakemake rule reserves ``threads`` cores for a job, but numba and the BLAS/OpenMP libraries size their pools to
every core of the machine. :func:`limit_threads` makes a step use what its rule reserved:

* numba: ``NUMBA_NUM_THREADS`` before numba is imported (the pool size of every thread), or
  ``numba.set_num_threads`` if it already is;
* BLAS and OpenMP libraries already loaded (numpy's OpenBLAS): ``threadpoolctl.threadpool_limits``;
* libraries loaded later (scipy's OpenBLAS, scikit-learn's OpenMP, ...): the environment variables they read
  when they load (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``, ...).

Thread counts passed to a library as a parameter (pynndescent's and openTSNE's ``n_jobs``) stay method or inputs
parameters: pynndescent's graph depends on its ``n_jobs``, so changing it with the job would change results.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from .errors import UserError

#: environment variables read by BLAS / OpenMP libraries when they load
ENV_VARS: tuple[str, ...] = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: when set, :func:`write_report` dumps the step's thread pools to this path (JSON) after the step
REPORT_ENV = "COVA_THREADS_REPORT"


def limit_threads(n: int) -> None:
    """Limit numba, BLAS and OpenMP of this process (and of the processes it starts) to ``n`` threads."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UserError(f"the number of threads must be a positive integer, got {n!r}")
    for var in ENV_VARS:
        os.environ[var] = str(n)
    if "numba" in sys.modules:
        import numba

        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    else:
        os.environ["NUMBA_NUM_THREADS"] = str(n)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n)


def job_threads() -> int:
    """The thread count of this process's job: ``$OMP_NUM_THREADS`` when set (:func:`limit_threads` sets it), else
    the number of CPUs (at least 1)."""
    value = os.environ.get("OMP_NUM_THREADS")
    if value:
        return max(1, int(value))
    return os.cpu_count() or 1


def thread_report() -> dict[str, Any]:
    """numba's thread count (None if numba was not used) and every loaded BLAS/OpenMP pool with its size."""
    from threadpoolctl import threadpool_info

    numba_threads = None
    if "numba" in sys.modules:
        import numba

        numba_threads = int(numba.get_num_threads())
    pools = [{"user_api": p["user_api"], "internal_api": p["internal_api"], "filepath": p["filepath"],
              "num_threads": int(p["num_threads"])} for p in threadpool_info()]
    return {"numba": numba_threads, "pools": pools}


def write_report() -> None:
    """Write :func:`thread_report` to the file named by ``$COVA_THREADS_REPORT``, if it is set."""
    path = os.environ.get(REPORT_ENV)
    if path:
        Path(path).write_text(json.dumps(thread_report(), indent=2) + "\n")
