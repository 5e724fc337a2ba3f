"""A workflow with and without the job server (``job_server: true / false``), A and B alternating.

    python benchmarks/job_server.py                                    # config/demo.yaml, 3 rounds (≈ 10 min)
    python benchmarks/job_server.py --configfile config/ci.yaml --rounds 1

Each round runs the whole configuration from scratch in two fresh copies of the workflow (the Snakefile,
``workflow/``, ``config/`` and ``config.yaml``), one with the job server and one with a fresh interpreter per job,
on ``--cores`` cores, the sides alternating so that drift in the machine's load hits both alike. Fetched raw files
come from the project's offline mirror. The table gives each side's median and minimum wall seconds and the ratio
of the medians (server / fresh), and checks that both sides wrote the same embeddings (bit for bit) and scores; the
CSV (``--out``) has one row per measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from cova.viz.tables import write_csv_atomic

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
MIRROR = ROOT.parent / "shared" / "datasets"


def workdir(path: Path) -> Path:
    """A fresh copy of the workflow at ``path``."""
    path.mkdir(parents=True)
    for name in ("Snakefile", "config.yaml", "environment.yml"):
        shutil.copy(ROOT / name, path / name)
    for name in ("workflow", "config", "benchmarks"):
        shutil.copytree(ROOT / name, path / name)
    return path


def run(path: Path, configfile: str, server: bool, cores: int) -> float:
    """Wall seconds of ``snakemake --cores`` on ``configfile`` in ``path``; raises if it fails."""
    env = {**os.environ, "COVA_DATA_MIRROR": str(MIRROR)}
    env.pop("COVA_JOB_SERVER", None)
    start = time.perf_counter()
    proc = subprocess.run([SNAKEMAKE, "--cores", str(cores), "--configfile", configfile, "--config",
                           f"job_server={server}"], cwd=path, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"snakemake failed in {path}:\n{proc.stderr[-3000:]}")
    return seconds


def same_results(a: Path, b: Path) -> tuple[int, int]:
    """(files compared, files that differ): every embedding bit for bit (its run time aside) and every score."""
    compared = differ = 0
    for first in sorted(a.glob("results/**/embedding.npz")):
        other = b / first.relative_to(a)
        with np.load(first) as x, np.load(other) as y:
            keys = [k for k in x.files if k != "runtime_s"]
            compared += 1
            differ += int(keys != [k for k in y.files if k != "runtime_s"]
                          or not all(np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind in "fc") for k in keys))
    for first in sorted(a.glob("results/**/scores.json")):
        x, y = (json.loads(p.read_text()) for p in (first, b / first.relative_to(a)))
        compared += 1
        differ += int(json.dumps(x, sort_keys=True) != json.dumps(y, sort_keys=True))
    return compared, differ


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--configfile", default="config/demo.yaml")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--out", default="results/benchmarks/job_server.csv")
    a = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cova-jobserver-bench-") as tmp:
        for r in range(a.rounds):
            paths = {}
            for server in ((True, False) if r % 2 == 0 else (False, True)):
                paths[server] = workdir(Path(tmp) / f"round{r}-{'server' if server else 'fresh'}")
                seconds = run(paths[server], a.configfile, server, a.cores)
                rows.append({"config": a.configfile, "round": r, "side": "server" if server else "fresh",
                             "wall_s": round(seconds, 2)})
                print(f"round {r}: {'server' if server else 'fresh '} {seconds:8.1f} s", flush=True)
            compared, differ = same_results(paths[True], paths[False])
            print(f"round {r}: {compared} embedding and score files compared, {differ} differ", flush=True)
            if differ:
                raise SystemExit("the job server changed results")
            for path in paths.values():
                shutil.rmtree(path)
    server = [row["wall_s"] for row in rows if row["side"] == "server"]
    fresh = [row["wall_s"] for row in rows if row["side"] == "fresh"]
    print(f"\n| {a.configfile} on {a.cores} cores | median s | min s |\n|---|---|---|")
    print(f"| job server | {statistics.median(server):.1f} | {min(server):.1f} |")
    print(f"| fresh interpreter per job | {statistics.median(fresh):.1f} | {min(fresh):.1f} |")
    print(f"| ratio (server / fresh, medians) | {statistics.median(server) / statistics.median(fresh):.2f} | |")
    out = ROOT / a.out if not os.path.isabs(a.out) else Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(pd.DataFrame(rows), out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
