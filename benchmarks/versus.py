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
measurement. ``benchmarks/scale.py`` runs the same loop (:func:`run_pairs`) at 200,000 and 1,000,000 points.
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


def parse_pairs(text: str, parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """``"A:B,C:D"`` as step pairs; unknown steps are a parser error."""
    pairs = [tuple(s.split(":")) for s in text.split(",") if s]
    bad = [a for pair in pairs for a in pair if a not in scaling.ALL_STEPS] + [s for s in pairs if len(s) != 2]
    if bad:
        parser.error(f"bad pairs {bad}; steps: {scaling.ALL_STEPS}")
    return pairs  # type: ignore[return-value]


def child_args(dataset: str, pca: int, iters: int, threads: int, seed: int, cache: str,
               step_timeout: float = 1800.0, knn_jobs: int = 1, fft_grid: str = "") -> argparse.Namespace:
    """The options every ``scaling.py --worker`` child of a head-to-head run gets."""
    return argparse.Namespace(dataset=dataset, pca=pca, iters=iters, threads=threads, repulsion="auto",
                              optimizer="auto", seed=seed, cache=cache, warmup=True, step_timeout=step_timeout,
                              knn_jobs=knn_jobs, fft_grid=fft_grid)


def run_pairs(pairs: list[tuple[str, str]], n: int, rounds: int, child: argparse.Namespace,
              on_error: str = "raise") -> list[dict]:
    """``rounds`` alternating rounds A, B of every pair at n samples, each measurement a fresh child process.

    The cached inputs are built first when missing (an ``inputs`` side of a pair builds them anyway, so a pair
    ``inputs:…`` listed first is then not run twice). ``on_error``: ``"raise"`` stops at a failed or timed-out
    step, ``"record"`` records it (``status``) and leaves the pair's later rounds out."""
    records: list[dict] = []
    cache = scaling._cache_path(Path(child.cache), child.dataset, n)
    if not cache.is_file() and not (pairs and pairs[0][0] == "inputs"):
        scaling.log(f"n = {n}: building the cached inputs")
        res = scaling.run_child("inputs", n, child)
        if res["status"] != "ok":
            raise SystemExit(f"inputs at n = {n} failed: {res.get('error', res['status'])}")
    for a, b in pairs:
        failed = False
        for rnd in range(rounds):
            for step in (a, b):
                res = scaling.run_child(step, n, child)
                if res["status"] != "ok":
                    if on_error == "raise":
                        raise SystemExit(f"{step} at n = {n} failed: {res.get('error', res['status'])}")
                    scaling.log(f"n = {n:>7}  round {rnd + 1}  {step:<14} {res['status']} {res.get('error', '')}")
                    records.append({"pair": f"{a}:{b}", "n": n, "round": rnd + 1, "step": step,
                                    "threads": child.threads, "status": res["status"]})
                    failed = True
                    continue
                scaling.log(f"n = {n:>7}  round {rnd + 1}  {step:<14} {res['seconds']:.2f} s, "
                            f"peak RSS {res['peak_rss_mb']:.0f} MB")
                records.append({"pair": f"{a}:{b}", "n": n, "round": rnd + 1, "step": step, "threads": child.threads,
                                "status": "ok", "seconds": res["seconds"], "peak_rss_mb": res["peak_rss_mb"]})
            if failed:
                break
    return records


def write_csv(records: list[dict], out: Path) -> None:
    """One row per record (atomic replace)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fields = list(dict.fromkeys(k for r in records for k in r))
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(records)
    os.replace(tmp, out)


def side_times(records: list[dict], pair: str, n: int, step: str) -> list[float]:
    """The successful times of ``step`` within ``pair`` at n."""
    return [r["seconds"] for r in records if r["pair"] == pair and r["n"] == n and r["step"] == step
            and r.get("status", "ok") == "ok"]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="20000,70000", help="comma-separated n (multiples of 10)")
    p.add_argument("--pairs", default=DEFAULT_PAIRS, help="comma-separated A:B step pairs")
    p.add_argument("--rounds", type=int, default=3, help="A/B rounds per (pair, n)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=100, help="iterations of E2/E3 and of openTSNE")
    p.add_argument("--dataset", default="fashion_mnist", choices=scaling.DATASETS)
    p.add_argument("--pca", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/benchmarks/versus.csv")
    p.add_argument("--cache", default="results/benchmarks/cache", help="cached inputs per n (shared with scaling.py)")
    args = p.parse_args(argv)
    pairs = parse_pairs(args.pairs, p)
    child = child_args(args.dataset, args.pca, args.iters, args.threads, args.seed, args.cache)
    host = scaling.machine()
    scaling.log(f"machine: {host}; sizes {args.sizes}; pairs {args.pairs}; {args.rounds} rounds; "
                f"{args.threads} thread(s)")
    records: list[dict] = []
    for n in sorted(int(s) for s in args.sizes.split(",") if s):
        records += run_pairs(pairs, n, args.rounds, child)
    write_csv(records, Path(args.out))

    print(f"# {host}; {args.threads} thread(s); {args.rounds} alternating rounds; seconds")
    print("| A | B | n | A median (min) | B median (min) | A / B (medians) |")
    print("|---|---|---|---|---|---|")
    for a, b in pairs:
        for n in sorted({r["n"] for r in records}):
            ta, tb = side_times(records, f"{a}:{b}", n, a), side_times(records, f"{a}:{b}", n, b)
            ma, mb = statistics.median(ta), statistics.median(tb)
            print(f"| {a} | {b} | {n:,} | {ma:.2f} ({min(ta):.2f}) | {mb:.2f} ({min(tb):.2f}) | {ma / mb:.2f} |")


if __name__ == "__main__":
    main()
