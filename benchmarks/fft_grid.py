"""Accuracy and cost of the FFT repulsion's grid on maps that have spread out: interval width × interpolation points.

    python benchmarks/fft_grid.py                                  # Fashion-MNIST 70k: final E2 and openTSNE maps
    python benchmarks/fft_grid.py --n 20000                        # 20k (a few minutes)
    python benchmarks/fft_grid.py --map results/manifold_1m/scale_points-7e4525a8/tsne/scale_tsne-c5490096/embedding.npz

The FFT back end (``cova.objectives.kl``, openTSNE's FIt-SNE kernels) interpolates the Student-t kernel on a grid
of ``max(min_num_intervals, span / ints_in_interval)`` intervals per axis with ``n_interpolation_points`` points
each, so its cost per evaluation grows with the square of the map's span once that passes 50 intervals, which a
t-SNE-like map does after its early exaggeration. This script measures, on whole-run maps, what each setting
costs and how far it is from the exact values:

* the maps: the final COVA-E2 and openTSNE embeddings of ``--dataset`` (``--n`` samples; the inputs of
  ``benchmarks/scaling.py``, each method at its defaults), or the ``Z`` of embedding files given by ``--map``;
* the reference: the exact ΣQ over all pairs (up to ``--exact-max`` samples; above it only the rows are exact) and
  the exact repulsion Σ_j q_ij²(z_i − z_j) on ``--rows`` seeded rows (``_repulsion_exact(rows=...)``, every j);
* per setting ``width:points``: CPU seconds of one evaluation (process time of all threads, best of
  ``--repeats``), the grid's intervals per axis, the relative error of ΣQ and that of the repulsion on the rows
  (‖r − r₀‖ / ‖r₀‖ over the rows).

With ``--whole-run INPUTS`` (an ``inputs.npz`` of the workflow, e.g. ``config/scale.yaml``'s Fashion-MNIST 70k
cohort block) it fits COVA-E2 at its defaults once per setting instead, in this process (the setting put into
``cova.objectives.kl.FFT_DEFAULTS``), and openTSNE at its defaults (its own grid, 1.0:3) on the same W, and gives
each run's wall time, seconds per iteration, the final map's span and its S_n, trustworthiness and continuity on
the 10,000 query rows of the workflow's subsampled scores (``cova.metrics.subsample.pairwise_subsample``).

    python benchmarks/fft_grid.py --whole-run results/fashion_mnist_70k/scale_cohorts-32434135/inputs.npz \
        --dataset-file data/processed/fashion_mnist_70k.npz --settings 0.5:3,1.0:5,1.0:3

The table is printed and written as CSV (``--out``).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_SETTINGS = "0.5:3,1.0:3,1.0:4,1.0:5,1.5:5,2.0:5"
FIELDS = ["map", "n", "span", "setting", "ints_in_interval", "n_interpolation_points", "intervals", "cpu_s",
          "sum_q_rel_err", "repulsion_rel_err"]


def whole_run_maps(dataset: str, n: int, seed: int, threads: int) -> dict[str, np.ndarray]:
    """The final maps of COVA-E2 and openTSNE (each at its defaults) on the same inputs."""
    import scaling
    from cova.datasets.base import Dataset
    from cova.inputs import build_inputs
    from cova.methods.registry import make_method

    X, y, names, source = scaling.load_data(dataset, n, 0, seed)
    print(f"{source}: {X.shape[0]} × {X.shape[1]}; building the inputs", flush=True)
    inputs = build_inputs(Dataset(X, y, names), scaling.INPUTS_SPEC, seed=seed)
    maps = {}
    for name, method, params in (("cova_e2", "cova_e2", {"random_state": seed}),
                                 ("tsne", "tsne", {"affinity": "inputs", "n_jobs": threads, "random_state": seed})):
        t0 = time.perf_counter()
        maps[f"{dataset}_{n}_{name}"] = np.asarray(make_method(method, params).fit(inputs).embedding_)
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    return maps


def measure(name: str, Z: np.ndarray, settings: list[tuple[float, int]], rows: int, exact_max: int, repeats: int,
            seed: int) -> list[dict]:
    from cova.objectives.kl import _repulsion_exact, _repulsion_fft

    Z = np.ascontiguousarray(Z, dtype=np.float64)
    n = Z.shape[0]
    span = float((Z.max(axis=0) - Z.min(axis=0)).max())
    picked = np.sort(np.random.default_rng(seed).choice(n, min(rows, n), replace=False))
    t0 = time.perf_counter()
    sum_q0 = _repulsion_exact(Z)[0] if n <= exact_max else None
    _, rep0 = _repulsion_exact(Z, rows=picked)
    print(f"{name}: n = {n}, span {span:.1f}; exact reference {time.perf_counter() - t0:.1f} s", flush=True)
    out = []
    for width, points in settings:
        best = math.inf
        for _ in range(repeats):
            c0 = time.process_time()
            sum_q, rep = _repulsion_fft(Z, ints_in_interval=width, n_interpolation_points=points)
            best = min(best, time.process_time() - c0)
        err = float(np.linalg.norm(rep[picked] - rep0) / np.linalg.norm(rep0))
        out.append({"map": name, "n": n, "span": round(span, 1), "setting": f"{width}:{points}",
                    "ints_in_interval": width, "n_interpolation_points": points,
                    "intervals": max(50, int(math.ceil(span / width))), "cpu_s": round(best, 3),
                    "sum_q_rel_err": "-" if sum_q0 is None else f"{abs(sum_q - sum_q0) / sum_q0:.1e}",
                    "repulsion_rel_err": f"{err:.1e}"})
        print("  " + "  ".join(f"{k}={out[-1][k]}" for k in ("setting", "intervals", "cpu_s", "sum_q_rel_err",
                                                              "repulsion_rel_err")), flush=True)
    return out


WHOLE_FIELDS = ["run", "setting", "seconds", "n_iter", "s_per_iter", "span", "s_n", "trustworthiness", "continuity"]


def whole_runs(dataset_file: str, inputs_file: str, settings: list[tuple[float, int]], seed: int,
               threads: int) -> list[dict]:
    """COVA-E2 once per FFT setting and openTSNE once, on the inputs of a workflow run, with their scores."""
    from cova.inputs import Inputs
    from cova.methods.registry import make_method
    from cova.metrics.cohort import s_n_readings_per_row
    from cova.metrics.neighborhood import trustworthiness_continuity_per_row
    from cova.metrics.subsample import pairwise_subsample
    from cova.objectives.kl import FFT_DEFAULTS

    inputs = Inputs.load(dataset_file, inputs_file)
    X = np.asarray(inputs.X, dtype=np.float64)
    rows = pairwise_subsample(X.shape[0], max_points=10_000)
    default = dict(FFT_DEFAULTS)
    runs = [("cova_e2", f"{w}:{k}", {"random_state": seed}, (w, k)) for w, k in settings]
    runs.append(("tsne", "openTSNE 1.0:3", {"affinity": "inputs", "n_jobs": threads, "random_state": seed}, None))
    out = []
    for method, label, params, grid in runs:
        FFT_DEFAULTS.update(default)
        if grid is not None:
            FFT_DEFAULTS.update(ints_in_interval=grid[0], n_interpolation_points=grid[1])
        model = make_method(method, params)
        t0 = time.perf_counter()
        model.fit(inputs)
        seconds = time.perf_counter() - t0
        Z = np.asarray(model.embedding_)
        n_iter = int(getattr(model, "n_iter_", 0)) or model.max_iter + model.early_exaggeration_iter
        t, c = trustworthiness_continuity_per_row(X, Z, 12, rows)
        s_n = s_n_readings_per_row(X, Z, inputs.labels, rows)[0]
        out.append({"run": method, "setting": label, "seconds": round(seconds, 1), "n_iter": n_iter,
                    "s_per_iter": round(seconds / n_iter, 4),
                    "span": round(float((Z.max(axis=0) - Z.min(axis=0)).max()), 1),
                    "s_n": round(float(np.mean(s_n)), 4), "trustworthiness": round(float(np.mean(t)), 4),
                    "continuity": round(float(np.mean(c)), 4)})
        print("  ".join(f"{k}={out[-1][k]}" for k in WHOLE_FIELDS), flush=True)
    FFT_DEFAULTS.update(default)
    return out


def write_table(rows: list[dict], fields: list[str], path: str) -> None:
    print()
    print("| " + " | ".join(fields) + " |")
    print("|" + "---|" * len(fields))
    for r in rows:
        print("| " + " | ".join(str(r[f]) for f in fields) + " |")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    print(f"\nwritten: {out}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="fashion_mnist", help="as in benchmarks/scaling.py")
    p.add_argument("--n", type=int, default=70000)
    p.add_argument("--map", action="append", default=[], help="embedding.npz (key Z) instead of new runs")
    p.add_argument("--settings", default=DEFAULT_SETTINGS, help="width:points,... (default %(default)s)")
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--exact-max", type=int, default=200_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--whole-run", metavar="INPUTS", help="inputs.npz of a workflow run: whole E2 runs per setting")
    p.add_argument("--dataset-file", help="the data set .npz of --whole-run's inputs")
    p.add_argument("--out", default="results/benchmarks/fft_grid.csv")
    args = p.parse_args(argv)

    import numba

    numba.set_num_threads(args.threads)
    settings = [(float(w), int(k)) for w, k in (s.split(":") for s in args.settings.split(","))]
    if args.whole_run:
        write_table(whole_runs(args.dataset_file, args.whole_run, settings, args.seed, args.threads), WHOLE_FIELDS,
                    args.out)
        return
    if args.map:
        maps = {str(Path(m).parent) if Path(m).name == "embedding.npz" else Path(m).stem: np.load(m)["Z"]
                for m in args.map}
    else:
        maps = whole_run_maps(args.dataset, args.n, args.seed, args.threads)
    rows = [r for name, Z in maps.items()
            for r in measure(name, Z, settings, args.rows, args.exact_max, args.repeats, args.seed)]
    write_table(rows, FIELDS, args.out)


if __name__ == "__main__":
    main()
