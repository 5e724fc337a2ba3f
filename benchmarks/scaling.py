"""Time and peak memory of every pipeline step against the number of samples n.

    python benchmarks/scaling.py --sizes 1000,5000 --repeats 1            # quick (≈ 1–2 min on 2 cores)
    python benchmarks/scaling.py                                          # 1k, 5k, 10k, 20k, 70k

Data: Fashion-MNIST (70,000 × 784, 10 classes; ``cova.datasets.load("fashion_mnist", raw_dir, split="all")``),
a seeded per-class subset of n/10 images per class, PCA to 50 dimensions (``--pca``), or with ``--dataset
synthetic`` ten Gaussian blobs of the same shape (when the IDX files are missing it falls back to it and says so),
or with ``--dataset cohort_manifold`` the first n rows of ``cova.datasets.synthetic.cohort_manifold`` (64 features,
10 cohorts of known structure, generated in blocks: the 1,000,000-point set of ``config/scale.yaml`` and its
prefixes; use ``--pca 0`` to keep its 64 features as that config does).

Inputs (one build per n, timed as step ``inputs``): W = perplexity-calibrated Gaussian kNN graph (perplexity 30,
90 neighbours, pynndescent above 5,000 samples), R by Eq. 12 from Eq. 9 (λ_p = 0.01), ring prototypes (ρ = 3).
The same W is openTSNE's P (``affinity="inputs"``), so t-SNE and COVA optimise against the very same graph.

Steps (``--methods``, comma-separated, or ``all``):

===========  ======================================================================================================
inputs       kNN search + W + R + Υ (``cova.inputs.build_inputs``)
tsne_affinity
             openTSNE's ``PerplexityBasedNN`` on the same X (perplexity 30, its 90 neighbours, ``n_jobs = --threads``):
             what a t-SNE user builds instead of the inputs
e1           COVA-E1 (α = 0.5), sparse SPD solve, after W is built
e2, e3, e4   COVA-E2/E3/E4 (α = 0.5), exactly ``--iters`` Riemannian steps (gtol = 0), repulsion ``--repulsion``,
             optimiser ``--optimizer``
p1           COVA-P1 (defaults: k̃ = 500, batches of 1,000, N·T = 300)
eigen        eigen-COVA (α = 0.5, η = 0.5, k̃ = 500; η = 0.8 is degenerate with ring prototypes)
tsne         openTSNE on the same P, ``--iters`` iterations in total (a quarter of them early exaggeration),
             ``n_jobs = --threads``
sinkhorn     symmetric Sinkhorn–Knopp scaling of W to a doubly stochastic matrix (DOSNES Sec. 3; tolerance 1e-12,
             at most 1,000 updates; ``cova.affinity.doubly_stochastic.sinkhorn_knopp``)
dosnes       DOSNES on W, exactly ``--iters`` iterations on the sphere; repulsion ``--repulsion`` ("fft" means
             the Barnes–Hut octree here, the 3-D back end; "auto" is exact up to 5,000 samples). The cost of an iteration
             does not depend on whether W was scaled first, so W is used as it is
umap         umap-learn (project defaults: 15 neighbours, seeded, single-threaded)
umap_threads umap-learn itself, 15 neighbours, unseeded so that it runs on ``--threads`` threads (``n_jobs``): what a
             user who wants speed runs (its NN-descent search forced, as umap-learn chooses it above 4,096 samples)
umap_paper   umap-learn at featMAP's settings (15 neighbours, min_dist 0.1, 500 epochs), seeded, so single-threaded
             like featMAP's layout: the like-for-like reference of ``benchmarks/featmap_speed.py``
featmap      featMAP (``cova.methods.featmap.FeatMAP``, its defaults, ``n_jobs = --threads``)
e1_end_to_end
             the inputs (as ``inputs``), COVA-E1 on them, its scores (``cova.metrics.score.score_run``: subsampled
             above the size threshold) and its figure (``cova.viz.scatter.save_scatter_figure``, a PNG beside the
             cache), in one process: a user's whole E1 run but for generating the data
s_n, s_s, s_c, s_c_r, tc
             the scores on the E1 embedding (E1 itself not timed): S_n, S_s, S_c, S_c^(r), and
             trustworthiness + continuity at k = 20
===========  ======================================================================================================

Every (step, n, repeat) runs in a fresh child process (``--worker``), which loads the cached inputs, runs the
step once untimed on 300 samples (so one-off JIT compilation of numba code is not timed; ``--no-warmup``), resets the
kernel's peak-RSS counter (``/proc/self/clear_refs`` ← 5), runs the step and reports wall time, the peak RSS of
the process during the step (``VmHWM``: the loaded inputs included) and the step's own increment over the RSS
before it. Where ``clear_refs`` is not writable the peak falls back to ``ru_maxrss`` (whole child lifetime).
The reported time is the minimum over ``--repeats``; ``ratio_tsne`` divides by openTSNE's time at the same n
measured in the same run. A step exceeding ``--step-timeout`` seconds is recorded as ``timeout`` and skipped at
larger n. Progress goes to stderr; the table to stdout; ``--out`` (CSV) and a log–log plot (PNG, same stem)
are written, and the slope log(t_max/t_min)/log(n_max/n_min) between the smallest and the largest n ≥ 10,000
(10k and 70k in the full run) is printed per step.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ALL_STEPS = ["inputs", "tsne_affinity", "e1", "e2", "e3", "e4", "p1", "eigen", "tsne", "sinkhorn", "dosnes", "umap",
             "umap_threads", "umap_paper", "featmap", "e1_end_to_end", "s_n", "s_s", "s_c", "s_c_r", "tc"]
DEFAULT_SIZES = [1000, 5000, 10000, 20000, 70000]
DATASETS = ["fashion_mnist", "synthetic", "cohort_manifold"]
FMNIST_DIRS = ["data/raw/fashion_mnist", "/usr/share/datasets/fashion-mnist", "../shared/datasets/fashion-mnist"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------------------
# child process: one step
# ------------------------------------------------------------------------------------------------------------

def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def load_data(dataset: str, n: int, pca: int, seed: int):
    """(X, labels, label_names, source) for n samples: Fashion-MNIST per-class subset (or blobs), PCA-``pca``."""
    import numpy as np

    X = y = names = None
    source = dataset
    if dataset == "fashion_mnist":
        from cova.datasets import load

        for d in FMNIST_DIRS:
            if Path(d, "train-images-idx3-ubyte.gz").is_file():
                ds = load("fashion_mnist", raw_dir=d, split="all", n_per_class=None if n >= 70000 else n // 10,
                          random_state=seed)
                X, y, names = ds.X, ds.labels, ds.label_names
                source = f"fashion_mnist ({d})"
                break
        else:
            log("Fashion-MNIST files not found in " + ", ".join(FMNIST_DIRS) + "; using synthetic blobs")
    if dataset == "cohort_manifold":
        from cova.datasets.synthetic import cohort_manifold

        ds = cohort_manifold(n_samples=n, seed=seed)
        X, y, names = ds.X, ds.labels, ds.label_names
        source = f"cohort_manifold ({ds.X.shape[1]} features)"
    if X is None:
        rng = np.random.default_rng(seed)
        centres = rng.normal(0.0, 1.0, (10, 784))
        y = np.repeat(np.arange(10), n // 10)
        X = centres[y] + rng.normal(0.0, 1.0, (len(y), 784)) * 0.7
        names = [f"blob {j}" for j in range(10)]
        source = "synthetic blobs 10 × 784-d"
    X = np.asarray(X, dtype=np.float64)
    if pca and X.shape[1] > pca:
        from sklearn.decomposition import PCA

        X = PCA(n_components=pca, random_state=seed).fit_transform(X)
    return np.ascontiguousarray(X), np.asarray(y, dtype=np.int64), list(names), source


INPUTS_SPEC = {"weights": {"kind": "gaussian_perplexity", "perplexity": 30},
               "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
               "prototypes": {"kind": "ring", "rho": 3}}


def _cache_path(cache: Path, dataset: str, n: int) -> Path:
    return cache / f"{dataset}_{n}.npz"


#: Steps whose method reads X alone (it builds its own neighbours): they get the cached X and labels only, so that
#: the cached W (≈ 2 GB at 10^6 points) does not count in their peak memory.
X_ONLY_STEPS = frozenset({"umap", "umap_threads", "umap_paper", "featmap"})


def _load_cached(cache: Path, dataset: str, n: int, x_only: bool = False):
    import numpy as np
    import scipy.sparse as sp

    from cova.inputs import Inputs

    with np.load(_cache_path(cache, dataset, n), allow_pickle=False) as f:
        if x_only:
            return Inputs(X=f["X"], labels=f["labels"], label_names=[str(s) for s in f["label_names"]])
        W = sp.csr_matrix((f["W_data"], f["W_indices"], f["W_indptr"]), shape=tuple(f["W_shape"]))
        return Inputs(X=f["X"], labels=f["labels"], label_names=[str(s) for s in f["label_names"]], W=W,
                      R=f["R"], prototypes=f["prototypes"], spec=INPUTS_SPEC)


def run_step(step: str, n: int, args) -> dict:
    """Run one step in this process and return its measurements."""
    import numpy as np

    cache = Path(args.cache)
    info: dict = {}
    if step in ("inputs", "e1_end_to_end"):
        from cova.datasets.base import Dataset
        from cova.inputs import build_inputs

        X, y, names, source = load_data(args.dataset, n, args.pca, args.seed)
        ds = Dataset(X, y, names)
        if args.warmup:  # on 300 samples, with the kNN back end the timed run uses (pynndescent's JIT included)
            small = np.sort(np.concatenate([np.flatnonzero(y == j)[:30] for j in np.unique(y)]))
            from cova.affinity.knn import resolve_knn_method

            method = resolve_knn_method("auto", *X.shape)
            warm = dict(INPUTS_SPEC, weights=dict(INPUTS_SPEC["weights"], method=method))
            build_inputs(Dataset(X[small], y[small], names), warm, seed=args.seed)
        work = lambda: build_inputs(ds, INPUTS_SPEC, seed=args.seed)  # noqa: E731
        if step == "e1_end_to_end":
            work = _end_to_end(ds, cache / f"{args.dataset}_{n}_e1.png", args.seed)
        info["data"] = source
    else:
        inputs = _load_cached(cache, args.dataset, n, x_only=step in X_ONLY_STEPS)
        if args.warmup:
            _warm_up(step, inputs, args)
        work, info = _make_work(step, inputs, args)

    import gc

    gc.collect()
    rss_before = _status_kb("VmRSS")
    exact_peak = _reset_peak()
    t0 = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - t0
    peak = _status_kb("VmHWM") if exact_peak else None
    if peak is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"seconds": seconds, "peak_rss_mb": peak / 1024.0,
           "step_mem_mb": (peak - rss_before) / 1024.0 if exact_peak and rss_before else float("nan"),
           "peak_method": "VmHWM after clear_refs" if exact_peak else "ru_maxrss (child lifetime)"}
    if step == "inputs":
        cache.mkdir(parents=True, exist_ok=True)
        W = result.W.tocsr()
        tmp = _cache_path(cache, args.dataset, n).with_suffix(".tmp.npz")
        np.savez(tmp, X=result.X, labels=result.labels, label_names=np.array(result.label_names),
                 W_data=W.data, W_indices=W.indices, W_indptr=W.indptr, W_shape=np.array(W.shape), R=result.R,
                 prototypes=result.prototypes)
        os.replace(tmp, _cache_path(cache, args.dataset, n))
        info["nnz_W"] = int(W.nnz)
    else:
        model = result if hasattr(result, "embedding_") else None
        if model is not None:
            for attr in ("n_iter_", "message_"):
                if hasattr(model, attr):
                    info[attr.rstrip("_")] = getattr(model, attr)
    if step == "e1_end_to_end":  # the scores of the run (the ones of config/scale.yaml, with their errors)
        info.update({k: result[k] for k in E1_SCORES if k in result})
    if "counter" in info:
        info["evaluations"] = info.pop("counter")[0]
    out.update(info)
    return out


E1_SCORES = ("s_n", "s_n_se", "s_c", "s_s", "trustworthiness", "trustworthiness_se", "continuity", "continuity_se",
             "n_queries")


def _end_to_end(ds, png: Path, seed: int):
    """A zero-argument callable: inputs, COVA-E1 (α = 0.5), its scores as the score step computes them (above
    the size threshold on the fixed subsample of query rows) and its figure with the scores; returns the scores."""
    from cova.embedding import Embedding
    from cova.inputs import build_inputs
    from cova.methods.registry import make_method
    from cova.metrics.score import score_run
    from cova.viz.scatter import save_scatter_figure

    def run():
        inputs = build_inputs(ds, INPUTS_SPEC, seed=seed)
        model = make_method("cova_e1", {"alpha": 0.5}).fit(inputs)
        embedding = Embedding(Z=model.embedding_, placed_prototypes=model.prototypes_, geometry=model.geometry)
        scores = score_run(inputs, embedding)
        png.parent.mkdir(parents=True, exist_ok=True)
        save_scatter_figure(png, embedding.Z, inputs.labels, inputs.label_names, prototypes=embedding.placed_or_none,
                            scores=scores, title=f"COVA-E1, {len(inputs.labels):,} points")
        return scores

    return run


def _make_work(step: str, inputs, args):
    """(zero-argument callable, info dict) of one non-input step."""
    from cova.methods.cova import manifold as cova_mod
    from cova.methods.registry import make_method

    info: dict = {}
    iters = args.iters
    if step == "e1":
        model = make_method("cova_e1", {"alpha": 0.5})
        return (lambda: model.fit(inputs)), info
    if step in ("e2", "e3", "e4"):
        if not hasattr(cova_mod.cova_objective, "counter"):
            original = cova_mod.cova_objective

            def counting(*a, **kw):
                counting.counter[0] += 1
                return original(*a, **kw)

            counting.counter = [0]
            cova_mod.cova_objective = counting
        cova_mod.cova_objective.counter[0] = 0
        info["counter"] = cova_mod.cova_objective.counter
        model = make_method(f"cova_{step}", {"alpha": 0.5, "max_iter": iters, "gtol": 0.0,
                                             "kl_method": args.repulsion, "optimizer": args.optimizer,
                                             "random_state": args.seed})
        from cova.objectives import resolve_repulsion_method

        optimizer = model._resolve_optimizer(inputs.W.shape[0])
        info["repulsion"] = ("-" if step == "e4" else
                             resolve_repulsion_method(args.repulsion, inputs.W.shape[0], inputs.prototypes.shape[1]))
        info["repulsion"] += f" / {optimizer}"
        return (lambda: model.fit(inputs)), info
    if step == "p1":
        model = make_method("cova_p1", {"alpha": 0.5, "random_state": args.seed})
        return (lambda: model.fit(inputs)), info
    if step == "eigen":
        model = make_method("eigen_cova", {"alpha": 0.5, "eta": 0.5, "random_state": args.seed})
        return (lambda: model.fit(inputs)), info
    if step == "tsne":
        ee = iters // 4
        model = make_method("tsne", {"affinity": "inputs", "max_iter": iters - ee, "early_exaggeration_iter": ee,
                                     "n_jobs": args.threads, "random_state": args.seed})
        info["n_iter"] = iters
        return (lambda: model.fit(inputs)), info
    if step == "tsne_affinity":
        from openTSNE.affinity import PerplexityBasedNN

        perplexity = INPUTS_SPEC["weights"]["perplexity"]
        return (lambda: PerplexityBasedNN(inputs.X, perplexity=perplexity, n_jobs=args.threads,
                                          random_state=args.seed)), info
    if step == "sinkhorn":
        from cova.affinity.doubly_stochastic import sinkhorn_knopp

        def scale():
            res = sinkhorn_knopp(inputs.W, on_failure="warn")
            info["message"] = f"{res.n_iter} updates, max row-sum error {res.max_error:.1e}"
            return res

        return scale, info
    if step == "dosnes":
        method = "octree" if args.repulsion == "fft" else args.repulsion
        model = make_method("dosnes", {"max_iter": iters, "kl_method": method, "n_jobs": args.threads,
                                       "random_state": args.seed})
        from cova.objectives import resolve_repulsion_method

        info["repulsion"] = resolve_repulsion_method(method, inputs.W.shape[0], 3)
        info["n_iter"] = iters
        return (lambda: model.fit(inputs)), info
    if step == "umap":
        model = make_method("umap", {"random_state": args.seed})
        return (lambda: model.fit(inputs)), info
    if step == "umap_threads":
        import umap

        def fit_umap():
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # NN-descent forced: what umap-learn does anyway above 4,096 samples, and so the warm-up on 300
                # samples compiles it too (umap-learn searches exactly below that size)
                return umap.UMAP(n_neighbors=15, n_jobs=args.threads, force_approximation_algorithm=True).fit(inputs.X)

        return fit_umap, info
    if step == "umap_paper":
        from cova.methods.featmap import FeatMAP

        paper = FeatMAP()
        model = make_method("umap", {"random_state": args.seed, "n_epochs": paper.n_epochs,
                                     "n_neighbors": paper.n_neighbors, "min_dist": paper.min_dist})
        return (lambda: model.fit(inputs)), info
    if step == "featmap":
        model = make_method("featmap", {"random_state": args.seed, "n_jobs": args.threads})
        return (lambda: model.fit(inputs)), info
    # scores on the E1 embedding (computed here, untimed)
    from cova.metrics.cohort import s_c, s_c_r, s_n, s_s
    from cova.metrics.neighborhood import trustworthiness_continuity

    Z = make_method("cova_e1", {"alpha": 0.5}).fit(inputs).embedding_
    X, y, P = inputs.X, inputs.labels, inputs.prototypes
    fns = {"s_n": lambda: s_n(X, Z, y), "s_s": lambda: s_s(Z, y), "s_c": lambda: s_c(Z, y, P),
           "s_c_r": lambda: s_c_r(Z, y, P), "tc": lambda: trustworthiness_continuity(X, Z, 20)}
    if step not in fns:
        raise ValueError(f"unknown step {step!r}; allowed: {ALL_STEPS}")
    return fns[step], info


def _warm_up(step: str, inputs, args) -> None:
    """Run ``step`` once, untimed, on fresh inputs of 30 samples per cohort, so that one-off JIT compilation
    (numba in umap-learn, pynndescent, our kernels) is not timed."""
    import numpy as np

    from cova.datasets.base import Dataset
    from cova.inputs import build_inputs

    idx = np.sort(np.concatenate([np.flatnonzero(inputs.labels == j)[:30] for j in np.unique(inputs.labels)]))
    ds = Dataset(inputs.X[idx], inputs.labels[idx], inputs.label_names)
    small = build_inputs(ds, INPUTS_SPEC, seed=args.seed)
    old = args.iters
    args.iters = 8
    try:
        _make_work(step, small, args)[0]()
    finally:
        args.iters = old


def worker_main(args) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        import numba

        numba.set_num_threads(max(1, min(args.threads, numba.config.NUMBA_NUM_THREADS)))
    except ImportError:
        pass
    if args.knn_jobs != 1:  # the weights' kNN search on that many threads (pynndescent; part of its seed)
        INPUTS_SPEC["weights"]["n_jobs"] = args.knn_jobs
    if args.fft_grid:  # the FFT repulsion's grid of our side (cova.objectives.kl.FFT_DEFAULTS), width:points
        from cova.objectives.kl import FFT_DEFAULTS

        width, points = args.fft_grid.split(":")
        FFT_DEFAULTS.update(ints_in_interval=float(width), n_interpolation_points=int(points))
    out = run_step(args.worker, args.n, args)
    print("RESULT " + json.dumps(out, default=str), flush=True)


# ------------------------------------------------------------------------------------------------------------
# parent: schedule children, collect, report
# ------------------------------------------------------------------------------------------------------------

def run_child(step: str, n: int, args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", step, "--n", str(n), "--dataset", args.dataset,
           "--pca", str(args.pca), "--iters", str(args.iters), "--threads", str(args.threads),
           "--repulsion", args.repulsion, "--optimizer", args.optimizer, "--seed", str(args.seed), "--cache", args.cache,
           "--knn-jobs", str(getattr(args, "knn_jobs", 1)), "--fft-grid", getattr(args, "fft_grid", "")]
    if not args.warmup:
        cmd.append("--no-warmup")
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = str(args.threads)
    # the child's log (the package's progress and phase lines) goes to a file beside the cache, one per step and n
    log_path = Path(args.cache).parent / "logs" / f"{step}_{n}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(log_path, "w") as err:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, timeout=args.step_timeout,
                                  env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "log": str(log_path)}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
            res["status"] = "ok"
            return res
    tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
    return {"status": "error", "error": " | ".join(tail), "log": str(log_path)}


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({model}), Python {platform.python_version()}"


FIELDS = ["step", "n", "status", "seconds", "ratio_tsne", "peak_rss_mb", "step_mem_mb", "n_iter", "evaluations",
          "repulsion", "repeats", "note"]


def fmt(v, digits=3) -> str:
    if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def _parse_row(r: dict) -> dict:
    out: dict = {}
    for key, value in r.items():
        if key in ("step", "status", "repulsion", "note"):
            out[key] = value
        elif value in ("", None):
            out[key] = None
        else:
            num = float(value)
            out[key] = int(num) if key in ("n", "n_iter", "evaluations", "repeats") else num
    return out


def slope(rows: list[dict], step: str) -> tuple[float, int, int] | None:
    pts = {r["n"]: r["seconds"] for r in rows if r["step"] == step and r["status"] == "ok" and r["seconds"]}
    big = sorted(n for n in pts if n >= 10000)
    if len(big) < 2:
        return None
    lo, hi = big[0], big[-1]
    return math.log(pts[hi] / pts[lo]) / math.log(hi / lo), lo, hi


def plot(rows: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    for i, step in enumerate(dict.fromkeys(r["step"] for r in rows)):
        pts = sorted((r["n"], r["seconds"]) for r in rows if r["step"] == step and r["status"] == "ok")
        if pts:
            ax.loglog(*zip(*pts), marker="os^"[i // 10 % 3], linestyle=["-", "--", ":"][i // 10 % 3], label=step)
    ax.set_xlabel("n (samples)")
    ax.set_ylabel("wall time (s)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated n (multiples of 10)")
    p.add_argument("--methods", default="all", help=f"comma-separated steps or 'all': {','.join(ALL_STEPS)}")
    p.add_argument("--out", default="results/benchmarks/scaling.csv", help="CSV; the plot goes beside it (.png)")
    p.add_argument("--repeats", type=int, default=1, help="runs per (step, n); the minimum time is reported")
    p.add_argument("--dataset", default="fashion_mnist", choices=DATASETS)
    p.add_argument("--pca", type=int, default=50, help="PCA dimensions before everything (0 = none)")
    p.add_argument("--iters", type=int, default=100, help="iterations of E2-E4 and of openTSNE")
    p.add_argument("--repulsion", default="auto", choices=["auto", "exact", "fft", "bh"],
                   help="kl_method of E2/E3")
    p.add_argument("--optimizer", default="auto", choices=["auto", "armijo", "momentum"],
                   help="optimizer of E2-E4 (auto: momentum above 5,000 samples for E2/E3); the 'repulsion' column "
                        "reports 'back end / optimizer'")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--step-timeout", type=float, default=600.0, help="seconds before a step is abandoned")
    p.add_argument("--append", action="store_true",
                   help="merge into an existing --out CSV (rows of the same step and n are replaced), then redo the "
                        "table, plot and slopes over all rows")
    p.add_argument("--max-n", default="", help="per-step size caps, e.g. 'p1=20000,umap=20000'")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--knn-jobs", type=int, default=1,
                   help="threads of the weights' kNN search (pynndescent's n_jobs, part of its seed; the cache does "
                        "not record it: use another --cache)")
    p.add_argument("--fft-grid", default="",
                   help="width:points of our FFT repulsion's grid instead of cova.objectives.kl.FFT_DEFAULTS "
                        "(openTSNE's is 1.0:3)")
    p.add_argument("--no-warmup", dest="warmup", action="store_false",
                   help="time one-off JIT compilation too (default: an untimed warm-up on 300 samples first)")
    p.add_argument("--cache", default="results/benchmarks/cache", help="cached inputs per n")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker_main(args)
        return

    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    steps = ALL_STEPS if args.methods == "all" else [s for s in args.methods.split(",") if s]
    unknown = sorted(set(steps) - set(ALL_STEPS))
    if unknown:
        p.error(f"unknown steps {unknown}; allowed: {ALL_STEPS}")
    if "inputs" not in steps:
        steps = ["inputs"] + steps  # every other step reads the inputs it caches (recorded anyway)
    steps = ["inputs"] + [s for s in steps if s != "inputs"]
    if "tsne" not in steps and any(s in steps for s in ("e2", "e3")):
        log("note: without 'tsne' in --methods no ratio to openTSNE is computed")
    caps = {k: int(v) for k, v in (kv.split("=") for kv in args.max_n.split(",") if kv)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    host = machine()
    log(f"machine: {host}; sizes {sizes}; steps {steps}; {args.repeats} repeat(s); {args.threads} thread(s)")

    rows: list[dict] = []
    failed: set[str] = set()
    for n in sizes:
        for step in steps:
            if step in failed or n > caps.get(step, n):
                rows.append({"step": step, "n": n, "status": "skipped", "repeats": 0})
                continue
            best: dict | None = None
            for rep in range(args.repeats if step != "inputs" else 1):
                log(f"n = {n:>6}  {step:<7} repeat {rep + 1} ...")
                res = run_child(step, n, args)
                if res["status"] != "ok":
                    log(f"n = {n:>6}  {step:<7} {res['status']} {res.get('error', '')}")
                    best = res
                    break
                log(f"n = {n:>6}  {step:<7} {res['seconds']:.3f} s, peak RSS {res['peak_rss_mb']:.0f} MB")
                if best is None or res["seconds"] < best["seconds"]:
                    peak = max(res["peak_rss_mb"], (best or {}).get("peak_rss_mb", 0.0))
                    best = dict(res, peak_rss_mb=peak)
            row = {"step": step, "n": n, "repeats": args.repeats if step != "inputs" else 1, **best}
            rows.append(row)
            if row["status"] != "ok":
                failed.add(step)
                if step == "inputs":
                    break
    for row in rows:
        t = next((r.get("seconds") for r in rows if r["step"] == "tsne" and r["n"] == row["n"]
                  and r.get("status") == "ok"), None)
        if t and row.get("status") == "ok" and row["step"] not in ("tsne", "inputs"):
            row["ratio_tsne"] = row["seconds"] / t
        if row.get("message"):
            row["note"] = row["message"]
        elif row.get("data"):
            row["note"] = f"{row['data']}; nnz(W) = {row.get('nnz_W')}"
        elif row.get("error"):
            row["note"] = row["error"]

    if args.append and out.is_file():
        new_keys = {(r["step"], r["n"]) for r in rows}
        with open(out, newline="") as f:
            old_rows = [_parse_row(r) for r in csv.DictReader(f)]
        rows = [r for r in old_rows if (r["step"], r["n"]) not in new_keys] + rows
        order = {s: i for i, s in enumerate(ALL_STEPS)}
        rows.sort(key=lambda r: (r["n"], order.get(r["step"], 99)))
        steps = [s for s in ALL_STEPS if any(r["step"] == s for r in rows)]

    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    png = out.with_suffix(".png")
    title = f"{args.dataset}, PCA-{args.pca}, {args.iters} iterations; {host}"
    plot(rows, png, title)

    cols = ["step", "n", "status", "seconds", "ratio_tsne", "peak_rss_mb", "step_mem_mb", "n_iter", "evaluations",
            "repulsion"]
    print(f"# {host}")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(fmt(row.get(c)) for c in cols) + " |")
    print()
    print("log-log slope of time vs n (between the smallest and largest n >= 10,000):")
    for step in steps:
        s = slope(rows, step)
        if s:
            print(f"  {step:<7} {s[0]:.2f}  ({s[1]:,} -> {s[2]:,})")
    log(f"wrote {out} and {png}")


if __name__ == "__main__":
    main()
