"""Compare the tables of two workflow runs: every score of ``results/tables/scores.csv`` and every number of every
experiment CSV (``results/paper/*/*.csv``), to check that a change that should leave the arithmetic alone did.

    git worktree add /tmp/before <commit>                          # the checkout before the change
    (cd /tmp/before && snakemake --cores 2 --configfile config/ci.yaml)
    snakemake --cores 2 --configfile config/ci.yaml                 # this checkout
    python benchmarks/same_results.py /tmp/before/results results --tol 1e-9

Rows are matched on their text columns (run ids, names, labels); time columns (``*runtime*``, ``*seconds*``,
``*_s``) are left out. Prints one line per table (rows, numbers compared, the largest absolute difference, the
columns over the tolerance) and writes them to ``--csv``; exits 1 when a number differs by more than ``--tol``, a
table or a column is missing on one side, or rows do not match.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

#: Columns that measure time (or count what fitted in a time budget), not results: they differ from run to run.
TIME_MARKERS = ("runtime", "seconds", "time_s", "timed", "wall", "cpu")


def _is_time(column: str) -> bool:
    return any(m in column for m in TIME_MARKERS) or column.endswith("_s")


def compare_table(before: Path, after: Path, tol: float) -> dict[str, object]:
    """One table: rows matched on the text columns, every numeric column compared."""
    a, b = pd.read_csv(before), pd.read_csv(after)
    row: dict[str, object] = {"table": str(after), "rows": len(b)}
    missing = sorted(set(a.columns) ^ set(b.columns))
    if missing:
        row["problem"] = f"columns on one side only: {missing}"
    columns = [c for c in a.columns if c in b.columns and not _is_time(c)]
    numeric = [c for c in columns if pd.api.types.is_numeric_dtype(a[c]) and pd.api.types.is_numeric_dtype(b[c])]
    keys = [c for c in columns if c not in numeric]
    if len(a) != len(b):
        row["problem"] = f"{len(a)} rows before, {len(b)} after"
        return row
    a = a.sort_values(keys, kind="stable").reset_index(drop=True) if keys else a
    b = b.sort_values(keys, kind="stable").reset_index(drop=True) if keys else b
    if keys and not a[keys].astype(str).equals(b[keys].astype(str)):
        row["problem"] = f"rows do not match on {keys}"
        return row
    worst, over = 0.0, []
    for c in numeric:
        x, y = a[c].to_numpy(float), b[c].to_numpy(float)
        same_nan = np.isnan(x) == np.isnan(y)
        diff = np.where(np.isnan(x) & np.isnan(y), 0.0, np.abs(x - y))
        diff = np.where(same_nan, diff, np.inf)
        d = float(np.max(diff)) if diff.size else 0.0
        worst = max(worst, d)
        if d > tol:
            over.append(f"{c} ({d:.3g})")
    row.update(numbers=int(len(b) * len(numeric)), max_abs_diff=worst, over_tolerance="; ".join(over))
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path, help="results folder of the run before the change")
    p.add_argument("after", type=Path, help="results folder of the run after it")
    p.add_argument("--tol", type=float, default=1e-9)
    p.add_argument("--csv", type=Path, default=Path("results/benchmarks/same_results.csv"))
    args = p.parse_args(argv)
    tables = ["tables/scores.csv"] + sorted(str(f.relative_to(args.after))
                                            for f in args.after.glob("paper/*/*.csv"))
    before_tables = {"tables/scores.csv"} | {str(f.relative_to(args.before)) for f in args.before.glob("paper/*/*.csv")}
    rows = []
    for name in sorted(set(tables) | before_tables):
        if not (args.before / name).is_file() or not (args.after / name).is_file():
            rows.append({"table": name, "problem": "on one side only"})
            continue
        rows.append(compare_table(args.before / name, args.after / name, args.tol))
    report = pd.DataFrame(rows)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    report.to_csv(args.csv, index=False)
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_colwidth", 80):
        print(report.fillna("").to_string(index=False))
    bad = report["problem"].notna() if "problem" in report else pd.Series(False, index=report.index)
    bad |= report.get("over_tolerance", pd.Series("", index=report.index)).fillna("").astype(bool)
    print(f"{len(report)} tables, {int(report.get('numbers', pd.Series(dtype=float)).fillna(0).sum())} numbers; "
          f"{int(bad.sum())} differ by more than {args.tol:g} or do not match")
    return 1 if bad.any() else 0


if __name__ == "__main__":
    sys.exit(main())
