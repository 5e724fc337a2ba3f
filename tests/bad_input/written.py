"""What a step wrote: snapshots of a folder's tree and the check that nothing new, changed or removed lies outside
the folders a step may write (``results/`` and ``data/`` for a run; nothing at all for a refused config)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import Path

#: folders no step of the project writes and a snapshot skips: version control, environments and the caches of
#: Python, pytest and the linters (each tool's own, written while the tests run)
SKIPPED = frozenset({".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".import_linter_cache",
                     ".mypy_cache"})


def snapshot(root: Path) -> dict[str, tuple[int, int] | None]:
    """Every file under ``root`` as its path relative to ``root`` -> (size, mtime in ns), and every folder as its
    path with a trailing '/' -> None (so that a new empty folder counts); the :data:`SKIPPED` folders left out."""
    out: dict[str, tuple[int, int] | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel + "/"
        for d in dirs:
            out[prefix + d + "/"] = None
        for name in files:
            st = os.lstat(os.path.join(folder, name))
            out[prefix + name] = (st.st_size, st.st_mtime_ns)
    return out


def changes(before: dict[str, tuple[int, int] | None], after: dict[str, tuple[int, int] | None]) -> list[str]:
    """Paths new in ``after``, changed between the two or removed from ``before``, sorted."""
    return sorted({p for p in after if before.get(p, ()) != after[p]} | (before.keys() - after.keys()))


def assert_nothing_outside(root: Path, before: dict[str, tuple[int, int] | None], inside: Iterable[str] = (),
                           own: Iterable[str] = ()) -> list[str]:
    """Assert that since ``before`` (a :func:`snapshot` of ``root``) nothing under ``root`` was written, changed or
    removed except under the top-level folders ``inside`` (e.g. ``("results", "data")``; none: nothing at all)
    and the top-level files matching a pattern of ``own`` (what the test wrote itself, e.g. its config file).
    Returns the paths written inside the allowed folders."""
    inside, own = tuple(inside), tuple(own)
    changed = changes(before, snapshot(root))
    allowed = [p for p in changed if p.split("/", 1)[0] in inside
               or ("/" not in p and any(fnmatch(p, pattern) for pattern in own))]
    stray = [p for p in changed if p not in allowed]
    where = f"outside {', '.join(f'{d}/' for d in inside)}" if inside else "where nothing may be written"
    assert not stray, f"{root}: {len(stray)} path(s) written {where}: {stray[:20]}"
    return allowed
