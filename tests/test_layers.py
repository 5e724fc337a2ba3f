"""The package's layers run one way and its modules import each other without cycles (the import-linter contracts
in pyproject.toml; docs/layers.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe is not None, "lint-imports is missing: install the test extra (pip install -e '.[test]')"
    done = subprocess.run([exe, "--no-logo", "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_experiments_import_without_cycles_in_a_fresh_interpreter():
    """Every renderer module imports on its own (no import that works only after another module was loaded)."""
    from cova.experiments.registry import MODULES

    modules = sorted({f"cova.experiments.{m}" for m in MODULES.values()}) + [
        "cova.experiments.registry", "cova.experiments.cova.fig1", "cova.metrics.score", "cova.viz.links"]
    procs = {m: subprocess.Popen([sys.executable, "-c", f"import {m}"], cwd=ROOT, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for m in modules}  # independent: run together
    for m, proc in procs.items():
        _, err = proc.communicate()
        assert proc.returncode == 0, f"import {m}: {err}"


def test_a_score_job_starts_without_the_heavy_libraries():
    """What `python -m cova score` imports (the most frequent job of a workflow) leaves out scikit-learn,
    scipy.stats, pandas and umap-learn: each would add up to a second to every one of hundreds of job starts. They
    are imported where a score needs them."""
    modules = "cova.cli, cova.datasets.fetch, cova.embedding, cova.inputs, cova.io, cova.metrics.score, cova.viz.scatter"
    heavy = ("sklearn", "scipy.stats", "pandas", "umap", "pynndescent")
    done = subprocess.run([sys.executable, "-c", f"import sys, {modules}; print(*(m for m in {heavy!r} "
                           "if m in sys.modules))"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []
