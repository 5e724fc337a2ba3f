"""Trustworthiness and continuity at k = 20 for 10,000 points: our implementations against scikit-learn.

    python benchmarks/trustworthiness.py                         # S-curve, 10,000 points (generated, no files)
    python benchmarks/trustworthiness.py --data mnist            # MNIST test set, 10,000 x 784 (offline mirror)
    python benchmarks/trustworthiness.py --n 5000 --no-sklearn   # smaller, without scikit-learn's dense version

Data: ``s_curve`` (scikit-learn's S-curve formula, ``cova.datasets.synthetic.s_curve``, seeded; 3-D) or ``mnist``
(the 10k test set, pixels / 255, read from ``data/raw/mnist``, ``$COVA_DATA_MIRROR`` or ``../shared/datasets/mnist``;
``--n`` < 10,000 keeps a seeded subset). Display: PCA to 2 dimensions (deterministic, imperfect, so T and C are
well below 1).

Implementations timed (each once, after a warm-up call on 300 points so numba's one-off compilation is not
timed; wall time and process CPU time of the call (numba threads included; on a shared machine the CPU time is
the steadier number); T(20) and C(20) with the paper's definition, Venna et al. 2010 / Kaski et al. 2003):

=====================  ================================================================================================
``neighborhood``       ``cova.metrics.neighborhood.trustworthiness`` / ``continuity`` (row-blocked exact kNN and ranks;
                       memory O(block n), never n x n)
``one_pass``           ``cova.metrics.neighborhood.trustworthiness_continuity`` (both scores, each X distance row
                       built once)
``retrieval_exact``    ``cova.metrics.retrieval.trustworthiness_curve`` / ``continuity_curve`` with
                       ``max_samples=None`` (exact, the whole curve k = 1..20)
``retrieval_default``  the same with the default ``max_samples=5000``: a seeded subsample of 5,000 **query** points,
                       each compared with all n (what the ``nerv_panels`` renderer uses above 5,000 points)
``sklearn``            ``sklearn.manifold.trustworthiness`` (continuity = the call with arguments swapped); dense
                       n x n distances and a full argsort (about 2 GB at n = 10,000); ``--no-sklearn`` skips it
=====================  ================================================================================================

Prints a table (value, time, absolute difference to ``neighborhood``) and writes it as CSV to
``results/benchmarks/trustworthiness.csv`` (``--out``).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
K = 20


def load(data: str, n: int, seed: int) -> tuple[np.ndarray, str]:
    if data == "s_curve":
        from cova.datasets.synthetic import s_curve

        return s_curve(n_samples=n, random_state=seed).X, f"S-curve, {n} points, 3-D (seed {seed})"
    if data == "mnist":
        from cova.datasets.mnist import mnist

        dirs = [ROOT / "data/raw/mnist", *[Path(p) / "mnist" for p in os.environ.get("COVA_DATA_MIRROR", "").split(":")
                                          if p], ROOT.parent / "shared/datasets/mnist"]
        for d in dirs:
            if (d / "t10k-images-idx3-ubyte.gz").is_file() or (d / "t10k-images-idx3-ubyte").is_file():
                X = mnist(d, split="test").X
                if n < X.shape[0]:
                    X = X[np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))]
                return X, f"MNIST test set, {X.shape[0]} x {X.shape[1]} (from {d})"
        sys.exit(f"MNIST test files not found in {[str(d) for d in dirs]}; use --data s_curve")
    raise ValueError(data)


def implementations(no_sklearn: bool):
    from cova.metrics import neighborhood as nb
    from cova.metrics import retrieval as ir

    impl = {
        "neighborhood": lambda X, Z: (nb.trustworthiness(X, Z, K), nb.continuity(X, Z, K)),
        "one_pass": lambda X, Z: nb.trustworthiness_continuity(X, Z, K),
        "retrieval_exact": lambda X, Z: (ir.trustworthiness_curve(X, Z, K, max_samples=None)[K - 1],
                                         ir.continuity_curve(X, Z, K, max_samples=None)[K - 1]),
        "retrieval_default": lambda X, Z: (ir.trustworthiness_curve(X, Z, K)[K - 1],
                                           ir.continuity_curve(X, Z, K)[K - 1]),
    }
    if not no_sklearn:
        from sklearn.manifold import trustworthiness

        impl["sklearn"] = lambda X, Z: (trustworthiness(X, Z, n_neighbors=K), trustworthiness(Z, X, n_neighbors=K))
    return impl


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", choices=["s_curve", "mnist"], default="s_curve")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "results/benchmarks/trustworthiness.csv"))
    a = ap.parse_args(argv)

    from sklearn.decomposition import PCA

    X, what = load(a.data, a.n, a.seed)
    Z = PCA(n_components=2, svd_solver="full").fit_transform(X)
    impl = implementations(a.no_sklearn)
    warm = np.random.default_rng(1).normal(size=(300, 3))
    for f in impl.values():
        f(warm, warm[:, :2])
    rows = []
    print(f"# {what}; display: PCA-2; k = {K}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs", file=sys.stderr)
    for name, f in impl.items():
        t0, c0 = time.perf_counter(), time.process_time()
        T, C = f(X, Z)
        rows.append({"implementation": name, "data": a.data, "n": X.shape[0], "d": X.shape[1], "k": K,
                     "trustworthiness": float(T), "continuity": float(C), "seconds": time.perf_counter() - t0,
                     "cpu_seconds": time.process_time() - c0})
        print(f"  {name}: {rows[-1]['seconds']:.2f} s", file=sys.stderr)
    ref = rows[0]
    for r in rows:
        r["abs_diff_T"] = abs(r["trustworthiness"] - ref["trustworthiness"])
        r["abs_diff_C"] = abs(r["continuity"] - ref["continuity"])
    head = f"{'implementation':<19} {'T(20)':>9} {'C(20)':>9} {'seconds':>9} {'cpu s':>9} {'|dT|':>9} {'|dC|':>9}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['implementation']:<19} {r['trustworthiness']:9.6f} {r['continuity']:9.6f} {r['seconds']:9.2f} "
              f"{r['cpu_seconds']:9.2f} {r['abs_diff_T']:9.2e} {r['abs_diff_C']:9.2e}")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
