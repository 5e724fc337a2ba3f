"""Wall time and peak memory of featMAP: ours against umap-learn and the authors' package on Fashion-MNIST.

    python benchmarks/featmap_speed.py --sizes 10000 --rounds 1      # quick (≈ 7 min on 2 cores)
    python benchmarks/featmap_speed.py                               # 10k and 70k, 3 rounds (≈ 1 h)

Data: Fashion-MNIST, all 70,000 images (``cova.datasets.mnist.fashion_mnist(--data-dir, split="all")``, pixels as
loaded: 784 features scaled to [0, 1]), the first n rows of a permutation seeded by ``--seed``. Every side gets these
784-dimensional rows.

Sides (``--sides``), all at k = 15, min_dist = 0.1, 500 epochs, seed ``--seed``:

===========  =======================================================================================================
featmap      ours, ``make_method("featmap", ...)`` with the paper's settings (λ = 0.5, q = 0.3, t-SNE tangent
             embedding); its truncated SVD to 100 features happens inside ``fit`` and is timed; n_jobs = --threads
             (neighbour search and t-SNE; the layout SGD is serial)
umap         umap-learn ``UMAP(n_neighbors=15, min_dist=0.1, n_epochs=500, random_state=seed)``. With a seed
             umap-learn overrides n_jobs to 1: it runs single-threaded whatever --threads says
featuremap   the authors' package (featuremap 0.0.5) ``FeatureMAP`` at the same k / min_dist / epochs / λ / seed,
             init "spectral" as ours (its default is its variation embedding), n_jobs = --threads (its neighbour
             search; with a seed its layout and its inner umap-learn runs are serial). Its estimator works on all
             784 features (it does not reduce them)
===========  =======================================================================================================

Memory guard for the authors' package. Its ``fit`` keeps every point's full local frame, the k − 1 = 14 right
singular vectors over all n features, as dense (m, k − 1, n) tensors: the local SVD returns them as a list of m
small float64 arrays, stacks them (float64) and stores a float32 copy (20 bytes per entry at once); the frame
smoothing then holds the stored float32 tensor, two float32 work buffers, the first-iteration copy and float32
temporaries of the sparse product (≈ 23 bytes per entry), while the heap freed by the m small arrays is mostly not
returned to the system (≈ 8 bytes per entry more), plus gather buffers of the smoothing. The estimate is 34 bytes ×
m·(k − 1)·n, plus the data (its float64 and float32 copies), plus 0.65 GiB of interpreter and libraries (umap-learn's
measured peak at 10,000 rows),
plus any dense m×m array: the estimator's exact path below 1,000 points (three m×m float64 arrays) and
``graph.toarray()``, counted (m² × 8 bytes) when the installed package's source calls it on a graph (its GitHub
head does; 0.0.5 does not). Estimated 1.4 GiB at 2,000 rows (measured 1.25), 4.2 GiB at 10,000 (measured 4.2) and
25.6 GiB at 70,000, more than this 23 GiB machine has. A size whose estimate exceeds ``--max-dense-gb`` (GiB) is skipped for
that side with the reason printed. As a second line of defence every child is polled and killed (by its pid) once
its resident memory exceeds ``--max-rss-gb`` (GiB; default: 80% of the memory available at start), and recorded as
``killed (memory)``.

Every measurement is a fresh child process of this script (``--worker``): it loads the data, runs its side once
untimed on 300 rows with 20 epochs and with the approximate neighbour search forced (so one-off numba compilation,
pynndescent's included, is not timed), resets the kernel's peak-RSS counter, then runs the timed ``fit``. Thread
limits (OMP / OpenBLAS / MKL / numba) are set to --threads in the child's environment, as in
``benchmarks/scaling.py``, whose helpers (log, machine, peak-RSS probe) this script uses. Rounds alternate the sides
(featmap, umap, featuremap, featmap, ...) so that drift in the machine's load hits all alike. The table gives the
median and minimum wall time, the peak RSS during ``fit`` (``VmHWM`` after ``clear_refs``: the loaded data
included; the maximum over rounds) and the ratio of medians to umap-learn; the CSV (``--csv``) has one row per
measurement or skip. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import csv
import gc
import inspect
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scaling  # noqa: E402  (the sibling script: log, machine, fmt and its peak-RSS probe)

SIDES = ["featmap", "umap", "featuremap"]
DATA_DIR = "/usr/share/datasets/fashion-mnist"
N_FEATURES = 784
K = 15
MIN_DIST = 0.1
EPOCHS = 500
LAMBDA = 0.5
WARMUP_ROWS = 300
WARMUP_EPOCHS = 20
#: Resident memory of the interpreter and the libraries (umap-learn's peak at 10,000 rows, GiB).
BASELINE_GB = 0.65
GIB = 1024.0 ** 3
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
FIELDS = ["side", "n", "round", "status", "seconds", "peak_rss_mb", "step_mem_mb", "lifetime_rss_mb", "threads",
          "estimate_gb", "note"]


# ------------------------------------------------------------------------------------------------------------
# memory estimate of the authors' package
# ------------------------------------------------------------------------------------------------------------

def _densifies_graph() -> bool:
    """Whether the installed featuremap package calls ``.toarray()`` / ``.todense()`` on its graph (comments
    ignored)."""
    try:
        from featuremap import featuremap_
    except ImportError:
        return False
    code = "\n".join(line.split("#", 1)[0] for line in inspect.getsource(featuremap_).splitlines())
    return re.search(r"\w*graph\w*\.(toarray|todense)\(", code) is not None


def featuremap_memory_gb(m: int, n_features: int, k: int = K, densifies: bool = False) -> dict:
    """Estimated peak resident memory of the authors' ``FeatureMAP.fit`` (GiB) and its parts; see the module
    docstring."""
    frames = 34.0 * m * (k - 1) * n_features
    data = 12.0 * m * n_features
    dense = (3 * 8.0 * m * m if m < 1000 else 0.0) + (8.0 * m * m if densifies else 0.0)
    return {"total": (frames + data + dense) / GIB + BASELINE_GB, "frames": frames / GIB, "data": data / GIB,
            "dense": dense / GIB}


def _meminfo_gb(field: str) -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0 ** 2
    except OSError:
        pass
    return None


def _rss_gb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0 ** 2
    except OSError:
        pass
    return 0.0


# ------------------------------------------------------------------------------------------------------------
# child process: one side, one size
# ------------------------------------------------------------------------------------------------------------

def load_rows(data_dir: str, n: int, seed: int):
    """The first ``n`` rows of a ``seed``-permutation of Fashion-MNIST (70,000 × 784, pixels / 255, float64)."""
    import numpy as np

    from cova.datasets.mnist import fashion_mnist

    ds = fashion_mnist(data_dir, split="all")
    if n > ds.X.shape[0]:
        raise ValueError(f"--sizes: n = {n} exceeds the {ds.X.shape[0]:,} Fashion-MNIST images")
    rows = np.random.default_rng(seed).permutation(ds.X.shape[0])[:n]
    X = np.ascontiguousarray(ds.X[rows], dtype=np.float64)
    del ds
    gc.collect()
    return X


def _make_fit(side: str, X, threads: int, seed: int, epochs: int, warmup: bool):
    """A zero-argument callable running ``side`` on ``X`` and returning a dict of notes."""
    import warnings

    if side == "featmap":
        from cova.inputs import Inputs
        from cova.methods.registry import make_method

        model = make_method("featmap", {"n_neighbors": K, "min_dist": MIN_DIST, "n_epochs": epochs,
                                        "feat_lambda": LAMBDA, "random_state": seed, "n_jobs": threads})

        def run() -> dict:
            if warmup:  # the large-n neighbour search is pynndescent's; compile it too
                from cova.affinity.knn import nearest_neighbors

                nearest_neighbors(X, K - 1, method="pynndescent", random_state=seed, n_jobs=threads)
            model.fit(Inputs(X=X))
            return {"note": f"{model.smooth_iter_} smoothing iterations"}

        return run
    if side == "umap":
        import umap

        est = umap.UMAP(n_neighbors=K, min_dist=MIN_DIST, n_epochs=epochs, random_state=seed, n_jobs=threads,
                        force_approximation_algorithm=warmup)

        def run() -> dict:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*n_jobs.*overridden.*")
                est.fit(X)
            return {"note": f"n_jobs {est.n_jobs} (seeded)"}

        return run
    if side == "featuremap":
        from featuremap import FeatureMAP

        est = FeatureMAP(n_neighbors=K, min_dist=MIN_DIST, n_epochs=epochs, feat_lambda=LAMBDA, random_state=seed,
                         init="spectral", n_jobs=threads, force_approximation_algorithm=warmup)

        def run() -> dict:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X)
            return {"note": f"{est._featuremap_kwds.get('gcn_chosen_iteration')} smoothing iterations"}

        return run
    raise ValueError(f"unknown side {side!r}; allowed: {SIDES}")


def worker_main(args) -> None:
    import numba

    numba.set_num_threads(max(1, min(args.threads, numba.config.NUMBA_NUM_THREADS)))
    X = load_rows(args.data_dir, args.n, args.seed)
    if not args.no_warmup:
        _make_fit(args.worker, X[:WARMUP_ROWS].copy(), args.threads, args.seed, WARMUP_EPOCHS, warmup=True)()
    work = _make_fit(args.worker, X, args.threads, args.seed, EPOCHS, warmup=False)
    gc.collect()
    rss_before = scaling._status_kb("VmRSS")
    exact_peak = scaling._reset_peak()
    t0 = time.perf_counter()
    info = work()
    seconds = time.perf_counter() - t0
    lifetime = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak = scaling._status_kb("VmHWM") if exact_peak else None
    if peak is None:
        peak = lifetime
    out = {"seconds": seconds, "peak_rss_mb": peak / 1024.0, "lifetime_rss_mb": lifetime / 1024.0,
           "step_mem_mb": (peak - rss_before) / 1024.0 if exact_peak and rss_before else float("nan"),
           "peak_method": "VmHWM after clear_refs" if exact_peak else "ru_maxrss (child lifetime)", **info}
    print("RESULT " + json.dumps(out, default=str), flush=True)


# ------------------------------------------------------------------------------------------------------------
# parent
# ------------------------------------------------------------------------------------------------------------

def run_child(side: str, n: int, args) -> dict:
    """One fresh child for (side, n); killed by its pid on timeout or when its RSS exceeds ``--max-rss-gb``."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", side, "--n", str(n), "--threads",
           str(args.threads), "--seed", str(args.seed), "--data-dir", args.data_dir]
    if args.no_warmup:
        cmd.append("--no-warmup")
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = str(args.threads)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    started = time.monotonic()
    status = None
    peak_seen = 0.0
    while True:
        try:
            stdout, stderr = proc.communicate(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            rss = _rss_gb(proc.pid)
            peak_seen = max(peak_seen, rss)
            if rss > args.max_rss_gb:
                status = f"killed (memory: RSS {rss:.1f} GiB > --max-rss-gb {args.max_rss_gb:.1f})"
            elif time.monotonic() - started > args.step_timeout:
                status = f"timeout ({args.step_timeout:.0f} s)"
            if status:
                proc.kill()
                stdout, stderr = proc.communicate()
                return {"status": status, "peak_rss_mb": peak_seen * 1024.0}
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
            res["status"] = "ok"
            return res
    tail = (stderr or "").strip().splitlines()[-3:]
    return {"status": "error", "note": " | ".join(tail)}


def _summary(records: list[dict], sides: list[str], sizes: list[int]) -> list[dict]:
    rows = []
    for n in sizes:
        med: dict[str, float] = {}
        for side in sides:
            recs = [r for r in records if r["side"] == side and r["n"] == n]
            ok = [r for r in recs if r["status"] == "ok"]
            row = {"side": side, "n": n, "rounds": len(ok)}
            if ok:
                times = [r["seconds"] for r in ok]
                med[side] = statistics.median(times)
                row.update(status="ok", median=med[side], min=min(times),
                           peak_rss_mb=max(r["peak_rss_mb"] for r in ok), note=ok[-1].get("note", ""))
            else:
                row.update(status=recs[0]["status"] if recs else "-", note=recs[0].get("note", "") if recs else "")
            rows.append(row)
        for row in rows:
            if row["n"] == n and row.get("median") and med.get("umap"):
                row["ratio_umap"] = row["median"] / med["umap"]
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,70000", help="comma-separated n (≤ 70,000)")
    p.add_argument("--sides", default=",".join(SIDES), help=f"comma-separated, from {','.join(SIDES)}")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds per n")
    p.add_argument("--threads", type=int, default=2, help="threads of every side (umap-learn: 1 when seeded)")
    p.add_argument("--max-dense-gb", type=float, default=8.0,
                   help="skip the authors' package at sizes whose estimated peak memory (its dense frame tensors, any "
                        "m×m array) exceeds this (GiB)")
    p.add_argument("--max-rss-gb", type=float, default=None,
                   help="kill a child whose RSS exceeds this (GiB); default 80%% of MemAvailable at start")
    p.add_argument("--step-timeout", type=float, default=3600.0, help="seconds before a child is killed")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", default=DATA_DIR)
    p.add_argument("--csv", default="results/benchmarks/featmap_speed.csv")
    p.add_argument("--no-warmup", action="store_true", help="time one-off JIT compilation too")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker_main(args)
        return

    sides = [s for s in args.sides.split(",") if s]
    bad = sorted(set(sides) - set(SIDES))
    if bad:
        p.error(f"unknown sides {bad}; allowed: {SIDES}")
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    if args.max_rss_gb is None:
        available = _meminfo_gb("MemAvailable") or 8.0
        args.max_rss_gb = 0.8 * available
    host = scaling.machine()
    densifies = _densifies_graph()
    scaling.log(f"machine: {host}; sizes {sizes}; sides {sides}; {args.rounds} round(s); {args.threads} thread(s); "
                f"children killed above {args.max_rss_gb:.1f} GiB RSS")
    estimates = {n: featuremap_memory_gb(n, N_FEATURES, K, densifies) for n in sizes}
    skip: dict[int, str] = {}
    if "featuremap" in sides:
        for n, est in estimates.items():
            parts = (f"frames {est['frames']:.1f} + data {est['data']:.1f} + dense m×m {est['dense']:.1f} + "
                     f"libraries {BASELINE_GB:g} GiB"
                     f"{' (graph.toarray())' if densifies else ''}")
            if est["total"] > args.max_dense_gb:
                skip[n] = (f"estimated {est['total']:.1f} GiB ({parts}) > --max-dense-gb {args.max_dense_gb:g}")
                scaling.log(f"n = {n:>6}  featuremap skipped: {skip[n]}")
            else:
                scaling.log(f"n = {n:>6}  featuremap estimate {est['total']:.1f} GiB ({parts})")

    records: list[dict] = []
    for n in sizes:
        for side in sides:
            if side == "featuremap" and n in skip:
                records.append({"side": side, "n": n, "round": 0, "status": "skipped", "threads": args.threads,
                                "estimate_gb": estimates[n]["total"], "note": skip[n]})
        for rnd in range(args.rounds):
            for side in sides:
                if side == "featuremap" and n in skip:
                    continue
                scaling.log(f"n = {n:>6}  round {rnd + 1}  {side} ...")
                res = run_child(side, n, args)
                rec = {"side": side, "n": n, "round": rnd + 1, "threads": args.threads,
                       "estimate_gb": estimates[n]["total"] if side == "featuremap" else None, **res}
                records.append(rec)
                if res["status"] == "ok":
                    scaling.log(f"n = {n:>6}  round {rnd + 1}  {side:<10} {res['seconds']:.1f} s, "
                                f"peak RSS {res['peak_rss_mb']:.0f} MB  ({res.get('note', '')})")
                else:
                    scaling.log(f"n = {n:>6}  round {rnd + 1}  {side:<10} {res['status']} {res.get('note', '')}")

    out = Path(args.csv)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(records)
    os.replace(tmp, out)

    print(f"# {host}; --threads {args.threads}; {args.rounds} alternating round(s); Fashion-MNIST rows, 784 "
          f"features; k = {K}, min_dist = {MIN_DIST}, {EPOCHS} epochs, λ = {LAMBDA}, seed {args.seed}")
    print("# umap-learn runs single-threaded: with a random_state it overrides n_jobs to 1")
    print("| side | n | status | median s (min) | rounds | peak RSS MiB | / umap-learn | note |")
    print("|---|---|---|---|---|---|---|---|")
    for row in _summary(records, sides, sizes):
        time_s = (f"{row['median']:.1f} ({row['min']:.1f})" if row.get("median") is not None else "-")
        print(f"| {row['side']} | {row['n']:,} | {row['status']} | {time_s} | {row['rounds']} | "
              f"{scaling.fmt(row.get('peak_rss_mb'))} | {scaling.fmt(row.get('ratio_umap'))} | {row['note']} |")
    scaling.log(f"wrote {out}")


if __name__ == "__main__":
    main()
