"""Versions: pyproject.toml declares ranges, constraints.txt is the one lock, and environment.yml, the Makefile and
the running environment agree with it (docs/decisions.md, "Versions: ranges and one lock"). No network."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
SELF = canonicalize_name(PYPROJECT["name"])
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")


@cache
def _lock() -> dict[str, Version]:
    """constraints.txt as {canonical name: version}; every line other than a comment is one `name==version`."""
    lock: dict[str, Version] = {}
    for number, line in enumerate((ROOT / "constraints.txt").read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pin = _PIN.match(line)
        assert pin, f"constraints.txt line {number}: {line!r} is not `name==version`"
        name = canonicalize_name(pin[1])
        assert name not in lock, f"constraints.txt line {number}: {pin[1]} is locked twice"
        lock[name] = Version(pin[2])
    return lock



def _requirements() -> dict[str, list[Requirement]]:
    """pyproject's requirements by where they are declared ("core" or the extra's name), without the self-references
    of an extra to another (cova[workflow])."""
    groups = {"core": PYPROJECT["dependencies"], **PYPROJECT["optional-dependencies"]}
    return {group: [r for r in map(Requirement, reqs) if canonicalize_name(r.name) != SELF]
            for group, reqs in groups.items()}


REQUIREMENTS = _requirements()
DIRECT = {canonicalize_name(r.name) for reqs in REQUIREMENTS.values() for r in reqs}


def test_the_lock_holds_every_direct_requirement_and_not_the_package_itself():
    lock = _lock()
    assert SELF not in lock
    assert DIRECT <= set(lock), f"not in constraints.txt: {sorted(DIRECT - set(lock))}"


@pytest.mark.parametrize("group", sorted(REQUIREMENTS))
def test_every_requirement_is_locked_inside_its_range(group):
    lock = _lock()
    outside = [f"{r} (locked {lock[canonicalize_name(r.name)]})" for r in REQUIREMENTS[group]
               if not r.specifier.contains(lock[canonicalize_name(r.name)], prereleases=True)]
    assert not outside, f"{group}: constraints.txt lies outside the declared range of {outside}"


@pytest.mark.parametrize("group", sorted(REQUIREMENTS))
def test_requirements_are_ranges_with_a_lower_bound_not_pins(group):
    pinned = [str(r) for r in REQUIREMENTS[group] if any(s.operator in ("==", "===") for s in r.specifier)]
    unbounded = [str(r) for r in REQUIREMENTS[group] if not any(s.operator in (">=", "~=") for s in r.specifier)]
    assert not pinned, f"{group}: exact pins belong in constraints.txt, not pyproject.toml: {pinned}"
    assert not unbounded, f"{group}: no lower bound (the oldest version known to work): {unbounded}"


def test_extras_refer_only_to_extras_that_exist():
    extras = set(PYPROJECT["optional-dependencies"])
    for group, reqs in PYPROJECT["optional-dependencies"].items():
        for r in map(Requirement, reqs):
            if canonicalize_name(r.name) == SELF:
                assert r.extras <= extras, f"extra {group}: {r} names an extra pyproject.toml does not declare"


def _make_extras() -> set[str]:
    """The extras the Makefile installs with the lock."""
    install = re.search(r"-c constraints\.txt\b.*?-e \"\.\[([^\]]*)\]\"", (ROOT / "Makefile").read_text())
    assert install, "the Makefile does not install with `-c constraints.txt -e \".[...]\"`"
    return {e.strip() for e in install[1].split(",")}


def test_make_installs_the_lock_with_extras_that_exist():
    """pip only warns on an extra a package lacks, so a renamed extra would silently drop its packages."""
    wanted = _make_extras()
    assert wanted <= set(PYPROJECT["optional-dependencies"]), sorted(wanted - set(PYPROJECT["optional-dependencies"]))
    assert {"test", "workflow"} <= wanted
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^\$\(STAMP\):.*\bconstraints\.txt\b", makefile, re.M), "the install stamp ignores the lock"


def _with_included(extras: set[str]) -> set[str]:
    """extras and the extras they include by naming the package itself (slurm includes cova[workflow])."""
    todo, found = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in found:
            continue
        found.add(extra)
        todo.extend(e for r in map(Requirement, PYPROJECT["optional-dependencies"][extra])
                    if canonicalize_name(r.name) == SELF for e in r.extras)
    return found


def _environment_yml() -> dict[str, Version]:
    """environment.yml's packages (conda's `name=version` and the pip section's `name==version`), without python
    and pip themselves."""
    spec = yaml.safe_load((ROOT / "environment.yml").read_text())
    entries: list[str] = []
    for dep in spec["dependencies"]:
        entries.extend(dep["pip"] if isinstance(dep, dict) else [dep])
    found: dict[str, Version] = {}
    for entry in entries:
        name, _, version = str(entry).partition("=")
        if name in ("python", "pip"):
            continue
        assert version, f"environment.yml: {entry!r} has no version"
        found[canonicalize_name(name)] = Version(version.lstrip("="))
    return found


def test_environment_yml_has_the_locked_versions_of_every_direct_requirement():
    env, lock = _environment_yml(), _lock()
    differ = {n: (str(v), str(lock.get(n))) for n, v in env.items() if lock.get(n) != v}
    assert not differ, f"environment.yml differs from constraints.txt (environment.yml, constraints.txt): {differ}"
    assert set(env) == DIRECT, (f"environment.yml lacks {sorted(DIRECT - set(env))}, "
                                f"has beyond pyproject's requirements {sorted(set(env) - DIRECT)}")


def _installed() -> dict[str, metadata.Distribution]:
    """The running environment's distributions by canonical name, the first on sys.path (the one imported)."""
    installed: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        installed.setdefault(canonicalize_name(dist.metadata["Name"]), dist)
    return installed


def test_the_running_environment_has_the_locked_versions():
    """`make test` installs with constraints.txt, so every locked package present here has the locked version;
    the core requirements must all be present (the package imports them)."""
    installed, lock = _installed(), _lock()
    missing = sorted(canonicalize_name(r.name) for r in REQUIREMENTS["core"]
                     if canonicalize_name(r.name) not in installed)
    assert not missing, f"core requirements not installed: {missing}"
    differ = {n: (d.version, str(lock[n])) for n, d in installed.items() if n in lock and lock[n] != Version(d.version)}
    assert not differ, (f"installed versions differ from constraints.txt (installed, locked): {differ}; "
                        "install with `pip install -c constraints.txt -e \".[test,h5,slurm,workflow]\"`")


def test_the_lock_holds_everything_make_installs():
    """The lock is complete: every distribution that `make`'s install pulls in (the requirements of the core and of
    the Makefile's extras, followed through the installed packages' own requirements) has a line in constraints.txt,
    so no version is left to the resolver."""
    installed, lock = _installed(), _lock()
    groups = ("core", *sorted(_with_included(_make_extras() & set(REQUIREMENTS))))
    todo = [(r, frozenset()) for g in groups for r in REQUIREMENTS[g]]
    expanded: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req, asked = todo.pop()  # asked: the extras asked of the distribution that declares req
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in (*asked, "")):
            continue
        name = canonicalize_name(req.name)
        if (name, frozenset(req.extras)) in expanded:
            continue
        expanded.add((name, frozenset(req.extras)))
        assert name in installed, f"{req} is required but not installed"
        todo.extend((Requirement(r), frozenset(req.extras)) for r in installed[name].requires or ())
    unlocked = {name for name, _ in expanded} - set(lock)
    assert not unlocked, f"installed by make but not locked in constraints.txt: {sorted(unlocked)}"
