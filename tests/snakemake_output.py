"""Reading Snakemake's console output in the workflow tests."""

from __future__ import annotations

import re


def job_stats(output: str) -> dict[str, int]:
    """Rule -> job count from the 'Job stats' table Snakemake prints before running (or in a dry run)."""
    counts: dict[str, int] = {}
    block = output.split("Job stats:", 1)[1] if "Job stats:" in output else ""
    for line in block.splitlines():
        m = re.match(r"^(\w+)\s+(\d+)\s*$", line.strip())
        if m and m.group(1) != "total":
            counts[m.group(1)] = int(m.group(2))
        elif counts and not line.strip():
            break
    return counts
