"""Every step at 200,000 and 1,000,000 points against the library a user would pick instead, in one run, alternating.

    python benchmarks/scale.py                                       # 200k and 1M, cohort_manifold (hours)
    python benchmarks/scale.py --sizes 200000 --rounds 2             # 200k only (≈ 30 min on 2 cores)
    python benchmarks/scale.py --sizes 20000 --rounds 1 --e1-sizes 20000   # smoke run (≈ 3 min)

Data: the first n rows of ``cova.datasets.synthetic.cohort_manifold`` (64 features, 10 cohorts of known sizes and
structure: the data set of ``config/scale.yaml``), used as they are (``--pca 0``); ``--dataset synthetic`` /
``fashion_mnist`` as in ``benchmarks/scaling.py``.

Pairs (``--pairs``; ours : theirs, the steps of ``benchmarks/scaling.py``), with the issue's targets:

==========================  ========================================================================  ============
inputs : tsne_affinity      kNN + W + R + Υ (``cova.inputs.build_inputs``) vs openTSNE's                ≤ 1.0×
                            ``PerplexityBasedNN`` (perplexity 30, 90 neighbours) on the same X
e2 : tsne, e3 : tsne        COVA-E2 / E3 per iteration vs openTSNE per iteration (same P, ``--iters``)   ≤ 1.0×
dosnes : tsne               DOSNES (sphere, octree) per iteration vs openTSNE 2-D per iteration          ≤ 3× at 1M
featmap : umap_paper        featMAP vs umap-learn at featMAP's settings (500 epochs, seeded: one thread)  ≤ 2× at 1M
featmap : umap_threads      featMAP vs umap-learn at its defaults, unseeded on ``--threads`` threads
==========================  ========================================================================  ============

plus ``e1_end_to_end`` at ``--e1-sizes``: inputs, COVA-E1 and its figure in one child process (data generation
excluded), target < 30 minutes and < 16 GiB at 1,000,000. Scores are not timed here: at this size they come from
the subsampled scores of ``cova.metrics`` (``benchmarks/subsampled_scores.py`` measures them).

Every measurement is a fresh child process (``benchmarks/scaling.py --worker``: an untimed warm-up on 300 samples,
so JIT compilation is excluded; wall time and the peak RSS of the step, ``VmHWM``); the rounds alternate ours,
theirs, ours, ... (:func:`versus.run_pairs`), so the machine's load hits both sides alike. Per iteration = time /
``--iters`` for the iterative steps (their set-up included). The table gives medians (minimum in brackets), the
ratio of the medians, the target and whether it is met; then the log–log slope of each step between the smallest
and the largest n, next to n log n's. The CSV (``--out``) holds one row per measurement.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scaling  # noqa: E402  (the sibling scripts: worker, data, steps and the alternating loop)
import versus  # noqa: E402

DEFAULT_PAIRS = "inputs:tsne_affinity,e2:tsne,e3:tsne,dosnes:tsne,featmap:umap_paper"
#: Steps timed per iteration (``--iters`` iterations each).
ITERATIVE = {"e2", "e3", "dosnes", "tsne"}
#: (pair, n or None for every n) → the issue's target ratio ours / theirs.
TARGETS = {("inputs:tsne_affinity", None): 1.0, ("e2:tsne", None): 1.0, ("e3:tsne", None): 1.0,
           ("dosnes:tsne", 1_000_000): 3.0, ("featmap:umap_paper", 1_000_000): 2.0}
E1_TARGET_S, MEMORY_TARGET_MB = 30 * 60.0, 16 * 1024.0


def target(pair: str, n: int) -> float | None:
    return TARGETS.get((pair, n), TARGETS.get((pair, None)))


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def summary_rows(records: list[dict], pairs: list[tuple[str, str]], iters: int) -> list[dict]:
    """One row per (pair, n): medians and minima of both sides (per iteration where iterative), ratio, target."""
    rows = []
    for a, b in pairs:
        pair = f"{a}:{b}"
        for n in sorted({r["n"] for r in records if r["pair"] == pair}):
            ta, tb = versus.side_times(records, pair, n, a), versus.side_times(records, pair, n, b)
            per = iters if a in ITERATIVE else 1
            per_b = iters if b in ITERATIVE else 1
            ma, mb = _median(ta), _median(tb)
            peak_a = max((r["peak_rss_mb"] for r in records if r["pair"] == pair and r["n"] == n and r["step"] == a
                          and r.get("status", "ok") == "ok"), default=None)
            ratio = (ma / per) / (mb / per_b) if ma and mb else None
            goal = target(pair, n)
            met = "-" if goal is None or ratio is None else ("yes" if ratio <= goal else "no")
            if a == "featmap" and peak_a is not None and peak_a > MEMORY_TARGET_MB:
                met = "no (memory)"
            rows.append({"ours": a, "theirs": b, "n": n, "unit": "s / iteration" if per > 1 else "s",
                         "ours_median": None if ma is None else ma / per, "ours_min": min(ta) / per if ta else None,
                         "theirs_median": None if mb is None else mb / per_b,
                         "theirs_min": min(tb) / per_b if tb else None, "ratio": ratio,
                         "target": goal, "met": met, "ours_peak_mb": peak_a, "rounds": len(ta)})
    return rows


def slopes(records: list[dict], steps: list[str]) -> list[tuple[str, int, int, float, float]]:
    """(step, n_lo, n_hi, measured log–log slope of the median times, n log n's slope) between the extreme n."""
    out = []
    for step in steps:
        by_n: dict[int, list[float]] = {}
        for r in records:
            if r["step"] == step and r.get("status", "ok") == "ok":
                by_n.setdefault(r["n"], []).append(r["seconds"])
        if len(by_n) < 2:
            continue
        lo, hi = min(by_n), max(by_n)
        s = math.log(statistics.median(by_n[hi]) / statistics.median(by_n[lo])) / math.log(hi / lo)
        ref = math.log(hi * math.log(hi) / (lo * math.log(lo))) / math.log(hi / lo)
        out.append((step, lo, hi, s, ref))
    return out


def _parse(row: dict) -> dict:
    """A CSV row back to a record (numbers as numbers, empty fields as None)."""
    out: dict = {}
    for key, value in row.items():
        if value in ("", None):
            out[key] = None
        elif key in ("n", "round", "threads"):
            out[key] = int(float(value))
        elif key in ("seconds", "peak_rss_mb"):
            out[key] = float(value)
        else:
            out[key] = value
    return out


def fmt(v, digits: int = 3) -> str:
    return scaling.fmt(v, digits)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="200000,1000000", help="comma-separated n")
    p.add_argument("--pairs", default=DEFAULT_PAIRS, help="comma-separated ours:theirs step pairs")
    p.add_argument("--max-n", default="", help="per-pair size caps, e.g. 'featmap=200000' (the pair's first step)")
    p.add_argument("--rounds", type=int, default=2, help="alternating rounds per (pair, n)")
    p.add_argument("--e1-sizes", default="1000000", help="sizes of the E1 end-to-end run ('' = none)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=100, help="iterations of E2/E3, DOSNES and openTSNE")
    p.add_argument("--dataset", default="cohort_manifold", choices=scaling.DATASETS)
    p.add_argument("--pca", type=int, default=0, help="PCA dimensions before everything (0 = none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--knn-jobs", type=int, default=1,
                   help="threads of the inputs' kNN search (weights n_jobs; 1 = the default of a config)")
    p.add_argument("--fft-grid", default="",
                   help="width:points of our FFT repulsion's grid instead of cova.objectives.kl.FFT_DEFAULTS "
                        "(openTSNE's is 1.0:3)")
    p.add_argument("--step-timeout", type=float, default=7200.0, help="seconds before a measurement is abandoned")
    p.add_argument("--out", default="results/benchmarks/scale.csv")
    p.add_argument("--cache", default="results/benchmarks/cache", help="cached inputs per n (shared with scaling.py)")
    p.add_argument("--append", action="store_true",
                   help="keep the measurements of an existing --out CSV whose (pair, n) this run does not measure, "
                        "and make the table and slopes over all of them (e.g. 1M added to a 200k run)")
    args = p.parse_args(argv)
    pairs = versus.parse_pairs(args.pairs, p)
    caps = {k: int(v) for k, v in (kv.split("=") for kv in args.max_n.split(",") if kv)}
    child = versus.child_args(args.dataset, args.pca, args.iters, args.threads, args.seed, args.cache,
                              args.step_timeout, args.knn_jobs, args.fft_grid)
    host = scaling.machine()
    scaling.log(f"machine: {host}; sizes {args.sizes}; pairs {args.pairs}; {args.rounds} rounds; "
                f"{args.threads} thread(s); data {args.dataset}")
    out = Path(args.out)
    records: list[dict] = []
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    e1_sizes = sorted(int(s) for s in args.e1_sizes.split(",") if s)
    if args.append and out.is_file():
        with open(out, newline="") as f:
            old = [_parse(r) for r in csv.DictReader(f)]
        redo = {(f"{a}:{b}", n) for a, b in pairs for n in sizes} | {("e1_end_to_end:-", n) for n in e1_sizes}
        records = [r for r in old if (r["pair"], r["n"]) not in redo]
    for n in sizes:
        todo = [(a, b) for a, b in pairs if n <= caps.get(a, n)]
        records += versus.run_pairs(todo, n, args.rounds, child, on_error="record")
        versus.write_csv(records, out)
    for n in e1_sizes:
        res = scaling.run_child("e1_end_to_end", n, child)
        scaling.log(f"n = {n:>7}  e1_end_to_end {res['status']} {res.get('seconds', float('nan')):.1f} s")
        records.append({"pair": "e1_end_to_end:-", "n": n, "round": 1, "step": "e1_end_to_end",
                        "threads": args.threads, "status": res["status"], "seconds": res.get("seconds"),
                        "peak_rss_mb": res.get("peak_rss_mb"),
                        **{k: res[k] for k in scaling.E1_SCORES if k in res}})
        scaling.log("  its scores: " + ", ".join(f"{k} {res[k]:.4g}" for k in scaling.E1_SCORES if k in res))
        versus.write_csv(records, out)

    print(f"# {host}; {args.threads} thread(s) on both sides; {args.rounds} alternating rounds; data {args.dataset}; "
          f"{args.iters} iterations")
    print("| ours | theirs | n | unit | ours median (min) | theirs median (min) | ours / theirs | target | met "
          "| ours peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    shown = pairs + [tuple(pair.split(":")) for pair in dict.fromkeys(r["pair"] for r in records)  # appended ones
                     if tuple(pair.split(":")) not in pairs and not pair.startswith("e1_end_to_end")]
    for r in summary_rows(records, shown, args.iters):
        goal = "-" if r["target"] is None else f"≤ {r['target']:g}×"
        print(f"| {r['ours']} | {r['theirs']} | {r['n']:,} | {r['unit']} | {fmt(r['ours_median'])} "
              f"({fmt(r['ours_min'])}) | {fmt(r['theirs_median'])} ({fmt(r['theirs_min'])}) | {fmt(r['ratio'])} "
              f"| {goal} | {r['met']} | {fmt(r['ours_peak_mb'])} |")
    for r in (r for r in records if r["step"] == "e1_end_to_end"):
        ok = r["status"] == "ok"
        met = ok and r["seconds"] < E1_TARGET_S and r["peak_rss_mb"] < MEMORY_TARGET_MB
        print(f"| e1_end_to_end | - | {r['n']:,} | s | {fmt(r['seconds']) if ok else r['status']} | - | - "
              f"| < 1800 s, < 16 GiB | {'yes' if met else 'no'} | {fmt(r['peak_rss_mb'])} |")
    steps = list(dict.fromkeys(r["step"] for r in records))
    print()
    print("log-log slope of the median time between the smallest and the largest n (n log n's in brackets):")
    for step, lo, hi, s, ref in slopes(records, steps):
        print(f"  {step:<14} {s:.2f}  ({ref:.2f})  {lo:,} -> {hi:,}")
    scaling.log(f"wrote {out}")


if __name__ == "__main__":
    main()
