"""Which commits a long run was made from, read from its checkout.

A paper-scale run takes hours and is resumed across sessions; its checkout may move forward between two resumes
(a fix lands, the run goes on at the new commit). Snakemake then reruns a job only when its inputs change
(``--rerun-triggers mtime input``), so the outputs of one run can come from several commits. The record of such a
run names every commit with the jobs that finished under it, and the commits between them that touch what the
jobs compute. Everything here is read from git (the checkout's reflog: when HEAD moved to which commit) and from
the end times of the jobs' benchmark files, so the record is generated, not written by hand.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError

# What a job's numbers depend on: the code, the workflow, the configuration and the pinned library versions.
COMPUTING_PATHS = ("src", "workflow", "config", "config.yaml", "constraints.txt", "pyproject.toml")


@dataclass(frozen=True)
class Checkout:
    """The checkout at ``commit`` from unix time ``since`` until the next checkout."""

    commit: str
    since: float


@dataclass(frozen=True)
class Stretch:
    """The jobs that finished while the checkout was at ``commit``, and the commits since the previous stretch that
    touch :data:`COMPUTING_PATHS` (``"hash subject"`` lines, oldest first)."""

    commit: str
    since: float
    jobs: int
    changes: tuple[str, ...]


def _git(repo: str | Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode:
        raise UserError(f"git {' '.join(args)} in {repo} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def checkouts(repo: str | Path) -> list[Checkout]:
    """The commits HEAD was at, oldest first, each with the time it was checked out (from the reflog)."""
    out = _git(repo, "log", "--walk-reflogs", "--date=unix", "--format=%h %gd", "HEAD")
    result: list[Checkout] = []
    for line in reversed(out.splitlines()):
        commit, ref = line.split(" ", 1)
        since = float(ref[ref.index("{") + 1:ref.index("}")])
        if not result or result[-1].commit != commit:
            result.append(Checkout(commit, since))
    return result


def head(repo: str | Path) -> str:
    """The commit checked out now, and whether tracked files differ from it."""
    commit = _git(repo, "rev-parse", "--short", "HEAD")
    return commit + (" with uncommitted changes" if _git(repo, "status", "--porcelain", "--untracked-files=no")
                     else "")


def changes(repo: str | Path, old: str, new: str) -> tuple[str, ...]:
    """The commits after ``old`` up to ``new`` that touch :data:`COMPUTING_PATHS`, oldest first."""
    out = _git(repo, "log", "--reverse", "--format=%h %s", f"{old}..{new}", "--", *COMPUTING_PATHS)
    return tuple(out.splitlines())


def stretches(repo: str | Path, job_files: list[Path]) -> list[Stretch]:
    """The checkouts under which jobs finished (a job's benchmark file is written when it ends), with their job
    counts and the changes since the previous such checkout. Jobs that ended before the first checkout of the
    reflog count towards it."""
    history = checkouts(repo)
    if not history:
        raise UserError(f"{repo}: no checkout history (git reflog is empty)")
    counts = [0] * len(history)
    for f in job_files:
        t = f.stat().st_mtime
        i = max([j for j, c in enumerate(history) if c.since <= t], default=0)
        counts[i] += 1
    kept = [j for j, n in enumerate(counts) if n] or [len(history) - 1]
    result, previous = [], None
    for j in kept:
        c = history[j]
        result.append(Stretch(c.commit, c.since, counts[j], changes(repo, previous, c.commit) if previous else ()))
        previous = c.commit
    return result


def run_history(repo: str | Path, jobs_dir: str | Path) -> list[Stretch]:
    """:func:`stretches` of the benchmark files (``*.tsv``) under ``jobs_dir``."""
    return stretches(repo, sorted(Path(jobs_dir).rglob("*.tsv")))
