"""Scores of COVA-E2 and E3 on the benchmark data, to check that a speed change left the results alone.

    python benchmarks/e2e3_scores.py --n 20000                      # this checkout (≈ 1 min on 2 cores)
    git worktree add /tmp/before <commit> && PYTHONPATH=/tmp/before/src python benchmarks/e2e3_scores.py --n 20000

Same data and inputs as ``benchmarks/scaling.py`` (Fashion-MNIST per-class subset, PCA-50, perplexity-30 W, R by
Eq. 12, ring prototypes); E2 and E3 at α = 0.5 with their default settings (FFT repulsion and momentum optimiser
above 5,000 samples), seed 0. Prints one JSON object: per model S_n, S_s, S_c, S_c^(r), trustworthiness T and
continuity C (k = 12) in percent, and the fit's seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--dataset", default="fashion_mnist", choices=["fashion_mnist", "synthetic"])
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    from cova.threads import limit_threads

    limit_threads(args.threads)
    import scaling
    from cova.datasets.base import Dataset
    from cova.inputs import build_inputs
    from cova.methods.registry import make_method
    from cova.metrics.cohort import s_c, s_c_r, s_n, s_s
    from cova.metrics.neighborhood import trustworthiness_continuity

    X, y, names, source = scaling.load_data(args.dataset, args.n, 50, args.seed)
    inputs = build_inputs(Dataset(X, y, names), scaling.INPUTS_SPEC, seed=args.seed)
    out: dict = {"data": source, "n": args.n}
    for model in ("cova_e2", "cova_e3"):
        t0 = time.perf_counter()
        Z = make_method(model, {"alpha": 0.5, "random_state": args.seed}).fit(inputs).embedding_
        seconds = time.perf_counter() - t0
        P = inputs.prototypes
        T, C = trustworthiness_continuity(X, Z, 12)
        out[model] = {"s_n": 100 * s_n(X, Z, y), "s_s": 100 * s_s(Z, y), "s_c": 100 * s_c(Z, y, P),
                      "s_c_r": 100 * s_c_r(Z, y, P), "T": 100 * T, "C": 100 * C, "seconds": seconds}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
