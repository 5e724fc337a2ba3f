"""Subsampled scores against the exact ones: error, stated confidence interval and time.

    python benchmarks/subsampled_scores.py                       # Fashion-MNIST, all 70,000 images, PCA-50
    python benchmarks/subsampled_scores.py --n 5000 --exact-max-points 2000 --n-queries 1000   # quick

Data and inputs as ``benchmarks/scaling.py`` (its cached inputs ``results/benchmarks/cache/{dataset}_{n}.npz`` are
read when present, else built and cached by its ``inputs`` step): X = PCA-50 of the images, W the perplexity-30 kNN
graph, ring prototypes. Embeddings: COVA-E1 (α = 0.5) and PCA-2 (the first two principal components of X).

For each embedding the score step's metrics (:mod:`cova.metrics.registry`: ``s_n`` (both readings of κ̄), ``s_s``,
``trustworthiness_continuity`` at k = ``--k``) are evaluated twice on the same arrays: exactly (``exact_max_points``
= n) and with the defaults of the score step (``exact_max_points``, ``n_queries``; the seeded query rows of
:func:`cova.metrics.registry.query_rows`). Per score the table gives the exact value, the subsampled one, the error
(subsampled − exact), the 95 % confidence interval the record states (± half-width), whether the exact value lies in
it, and the wall time of both evaluations (trustworthiness and continuity are computed together: one time for both).
S_s of a 2-D map stays exact at every size (KD-tree, O(n log n)): its row says so.
JIT compilation is excluded (a warm-up on 2,000 rows first). The table goes to stdout (Markdown), the rows to
``--out`` (CSV).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import scaling  # noqa: E402
from cova.methods.registry import make_method  # noqa: E402
from cova.metrics.registry import ScoreData, evaluate  # noqa: E402
from cova.metrics.subsample import EXACT_MAX_POINTS, N_QUERIES  # noqa: E402

METRICS = ("s_n", "s_s", "trustworthiness_continuity")
SCORES = {"s_n": ("s_n", "s_n_cohort_kbar"), "s_s": ("s_s",),
          "trustworthiness_continuity": ("trustworthiness", "continuity")}


def load_inputs(args: argparse.Namespace):
    """The cached inputs of ``benchmarks/scaling.py`` at n, built by its ``inputs`` step when missing."""
    cache = Path(args.cache)
    if not scaling._cache_path(cache, args.dataset, args.n).is_file():
        scaling.log(f"building the inputs at n = {args.n} (benchmarks/scaling.py's inputs step)")
        ns = argparse.Namespace(cache=args.cache, dataset=args.dataset, pca=args.pca, seed=args.seed, warmup=False)
        scaling.run_step("inputs", args.n, ns)
    return scaling._load_cached(cache, args.dataset, args.n)


def timed(data: ScoreData, metric: str) -> tuple[dict, float]:
    t0 = time.perf_counter()
    out = evaluate(data, names=[metric])
    return out, time.perf_counter() - t0


def warm_up(X: np.ndarray, Z: np.ndarray, y: np.ndarray, k: int) -> None:
    """Compile every kernel of both paths (numba caches them) on 2,000 rows."""
    rows = np.sort(np.random.default_rng(0).choice(X.shape[0], size=2000, replace=False))
    for exact_max, queries in ((2000, 500), (1000, 500)):
        data = ScoreData(Z=Z[rows], n_cohorts=int(y.max()) + 1, X=X[rows], labels=y[rows], n_neighbors=k,
                         exact_max_points=exact_max, n_queries=queries)
        evaluate(data, names=list(METRICS))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=70_000, help="samples (70,000: all Fashion-MNIST images)")
    p.add_argument("--dataset", default="fashion_mnist", choices=["fashion_mnist", "synthetic"])
    p.add_argument("--pca", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=12, help="n_neighbors of trustworthiness / continuity (the default)")
    p.add_argument("--exact-max-points", type=int, default=EXACT_MAX_POINTS)
    p.add_argument("--n-queries", type=int, default=N_QUERIES)
    p.add_argument("--embeddings", default="e1,pca2", help="comma-separated: e1, pca2")
    p.add_argument("--cache", default="results/benchmarks/cache", help="benchmarks/scaling.py's cached inputs")
    p.add_argument("--out", default="results/benchmarks/subsampled_scores.csv")
    args = p.parse_args(argv)

    inputs = load_inputs(args)
    X, y = inputs.X, inputs.labels
    n = X.shape[0]
    embeddings = {}
    for name in args.embeddings.split(","):
        if name == "e1":
            embeddings["COVA-E1"] = make_method("cova_e1", {"alpha": 0.5}).fit(inputs).embedding_
        elif name == "pca2":
            embeddings["PCA-2"] = np.ascontiguousarray(X[:, :2])
        else:
            raise SystemExit(f"--embeddings: unknown {name!r}; allowed: e1, pca2")
    warm_up(X, next(iter(embeddings.values())), y, args.k)

    rows = []
    for method, Z in embeddings.items():
        common = dict(Z=Z, n_cohorts=int(y.max()) + 1, X=X, labels=y, n_neighbors=args.k)
        exact_data = ScoreData(**common, exact_max_points=n)
        sub_data = ScoreData(**common, exact_max_points=args.exact_max_points, n_queries=args.n_queries)
        for metric in METRICS:
            scaling.log(f"{method}: {metric} exact")
            exact, t_exact = timed(exact_data, metric)
            scaling.log(f"{method}: {metric} subsampled")
            sub, t_sub = timed(sub_data, metric)
            for key in SCORES[metric]:
                ci = sub.get(f"{key}_ci95", 0.0)
                err = sub[key] - exact[key]
                rows.append({"n": n, "embedding": method, "score": key, "is_subsampled": f"{key}_ci95" in sub,
                             "exact": exact[key], "subsampled": sub[key],
                             "error": err, "ci95": ci, "se": sub.get(f"{key}_se", 0.0),
                             "exact_in_ci": bool(abs(err) <= ci), "n_queries": sub.get("n_queries", n),
                             "seconds_exact": t_exact, "seconds_subsampled": t_sub})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"n = {n} ({args.dataset}, PCA-{args.pca}), k = {args.k}, {rows[0]['n_queries']} queries; points: "
          "fractions × 100")
    print("| embedding | score | exact | subsampled | error | 95 % CI (±) | exact in CI | seconds exact | "
          "seconds subsampled |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ci = (f"{100 * r['ci95']:.2f} | {'yes' if r['exact_in_ci'] else 'no'}" if r["is_subsampled"]
              else "exact at every n | –")
        print(f"| {r['embedding']} | {r['score']} | {100 * r['exact']:.2f} | {100 * r['subsampled']:.2f} | "
              f"{100 * r['error']:+.2f} | {ci} | {r['seconds_exact']:.2f} | {r['seconds_subsampled']:.2f} |")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
