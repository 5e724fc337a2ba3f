"""Head-to-head timings: a step of ours against the library a user would pick instead, A and B alternating.

    python benchmarks/versus.py                                   # 20k and 70k, 3 rounds, 2 threads (≈ 10 min)
    python benchmarks/versus.py --sizes 5000 --rounds 2           # quick

Pairs (``--pairs``, comma-separated ``A:B``; steps as in ``benchmarks/scaling.py``):

=====================  ============================================================================================
inputs:tsne_affinity   kNN search + perplexity graph W + R + Υ (``cova.inputs.build_inputs``) against openTSNE's
                       ``PerplexityBasedNN`` (the same perplexity 30 and 90 neighbours) on the same X
e2:tsne, e3:tsne       COVA-E2 / E3 (FFT repulsion, momentum optimiser), ``--iters`` iterations, against openTSNE's
                       optimisation of the same P for the same number of iterations
=====================  ============================================================================================

Each measurement is a fresh child process of ``benchmarks/scaling.py`` (``--worker``): the same Fashion-MNIST
per-class subset, PCA-50, an untimed warm-up on 300 samples (JIT compilation excluded), then the timed step. The
rounds alternate A, B, A, B, ... so that drift in the machine's load hits both sides alike. The table gives the
median and the minimum of each side and the ratio of the medians (A / B); the CSV (``--out``) has one row per
measurement.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scaling  # noqa: E402  (the sibling script: its worker, data and step definitions)

DEFAULT_PAIRS = "inputs:tsne_affinity,e2:tsne,e3:tsne"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="20000,70000", help="comma-separated n (multiples of 10)")
    p.add_argument("--pairs", default=DEFAULT_PAIRS, help="comma-separated A:B step pairs")
    p.add_argument("--rounds", type=int, default=3, help="A/B rounds per (pair, n)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=100, help="iterations of E2/E3 and of openTSNE")
    p.add_argument("--dataset", default="fashion_mnist", choices=["fashion_mnist", "synthetic"])
    p.add_argument("--pca", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/benchmarks/versus.csv")
    p.add_argument("--cache", default="results/benchmarks/cache", help="cached inputs per n (shared with scaling.py)")
    args = p.parse_args(argv)
    pairs = [tuple(s.split(":")) for s in args.pairs.split(",") if s]
    bad = [a for pair in pairs for a in pair if a not in scaling.ALL_STEPS] + [s for s in pairs if len(s) != 2]
    if bad:
        p.error(f"bad pairs {bad}; steps: {scaling.ALL_STEPS}")
    child = argparse.Namespace(dataset=args.dataset, pca=args.pca, iters=args.iters, threads=args.threads,
                               repulsion="auto", optimizer="auto", seed=args.seed, cache=args.cache, warmup=True,
                               step_timeout=1800.0)
    host = scaling.machine()
    scaling.log(f"machine: {host}; sizes {args.sizes}; pairs {args.pairs}; {args.rounds} rounds; "
                f"{args.threads} thread(s)")
    records: list[dict] = []
    for n in sorted(int(s) for s in args.sizes.split(",") if s):
        if not scaling._cache_path(Path(args.cache), args.dataset, n).is_file():
            scaling.log(f"n = {n}: building the cached inputs")
            res = scaling.run_child("inputs", n, child)
            if res["status"] != "ok":
                raise SystemExit(f"inputs at n = {n} failed: {res.get('error')}")
        for a, b in pairs:
            for rnd in range(args.rounds):
                for step in (a, b):
                    res = scaling.run_child(step, n, child)
                    if res["status"] != "ok":
                        raise SystemExit(f"{step} at n = {n} failed: {res.get('error')}")
                    scaling.log(f"n = {n:>6}  round {rnd + 1}  {step:<14} {res['seconds']:.2f} s")
                    records.append({"pair": f"{a}:{b}", "n": n, "round": rnd + 1, "step": step,
                                    "threads": args.threads, "seconds": res["seconds"],
                                    "peak_rss_mb": res["peak_rss_mb"]})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0]))
        w.writeheader()
        w.writerows(records)
    os.replace(tmp, out)

    print(f"# {host}; {args.threads} thread(s); {args.rounds} alternating rounds; seconds")
    print("| A | B | n | A median (min) | B median (min) | A / B (medians) |")
    print("|---|---|---|---|---|---|")
    for a, b in pairs:
        for n in sorted({r["n"] for r in records}):
            ta = [r["seconds"] for r in records if r["pair"] == f"{a}:{b}" and r["n"] == n and r["step"] == a]
            tb = [r["seconds"] for r in records if r["pair"] == f"{a}:{b}" and r["n"] == n and r["step"] == b]
            ma, mb = statistics.median(ta), statistics.median(tb)
            print(f"| {a} | {b} | {n:,} | {ma:.2f} ({min(ta):.2f}) | {mb:.2f} ({min(tb):.2f}) | {ma / mb:.2f} |")


if __name__ == "__main__":
    main()
