"""No dense n×n array for n = 20,000 in W, COVA-E1 or the scores.

Runs the whole chain (W by the max-subtracted Euclidean kNN graph, R by Eq. 12, E1, every score) in a fresh
process and checks two memory facts: the peak of numpy/Python allocations (tracemalloc) and the peak resident
size of the process (which also counts C allocations such as SuperLU's factors and numba's arrays). A dense
20,000×20,000 float64 matrix alone would take 3.2 GB.
"""

from __future__ import annotations

import json
import subprocess
import sys

N = 20_000
DENSE_BYTES = N * N * 8

SCRIPT = """
import json, resource, sys, tracemalloc
from cova.datasets import load
from cova.inputs import build_inputs
from cova.methods import CovaE1
from cova.metrics.summary import compute_scores

ds = load("sinusoid", n_samples=int(sys.argv[1]))
tracemalloc.start()
inputs = build_inputs(ds, {"weights": {"kind": "euclidean_max", "n_neighbors": 50},
                           "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
                           "prototypes": {"kind": "means"}})
Z = CovaE1(alpha=0.1).fit_transform(inputs)
scores = compute_scores(inputs.X, Z, inputs.labels, inputs.prototypes, inputs.prototypes, n_neighbors=12)
_, peak = tracemalloc.get_traced_memory()
print(json.dumps({"traced_peak": peak, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "nnz": inputs.W.nnz, "scores": scores}))
"""


def test_no_dense_n_by_n_at_20000_samples():
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(N)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["nnz"] <= N * 2 * 50
    assert out["traced_peak"] < 0.1 * DENSE_BYTES, out
    # the resident peak also counts numba/LLVM compilation and the libraries' arenas: 0.6 GB alone, 2.4 GB inside
    # the whole suite (unexplained); one dense n×n float64 matrix would exceed this bound on its own
    assert out["maxrss_kb"] * 1024 < DENSE_BYTES, out
    # the scores are real numbers in [0, 1], not placeholders
    assert all(0.0 <= v <= 1.0 for v in out["scores"].values())
    assert out["scores"]["s_c"] > 0.8  # E1 places the cohorts at their prototypes
