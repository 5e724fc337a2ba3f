"""Nothing leaks: around every test of a bad input, nothing may be written in the project (but for the folders a
concurrent run writes) or in the temporary folder, and the folder the test runs in may only gain ``results/`` and
``data/``. A refused config (every test of test_config.py) writes nothing at all: not even there, nor beside the
test's own config files in ``tmp_path``. test_run.py checks its whole workflow run itself."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from .written import assert_nothing_outside, snapshot

ROOT = Path(__file__).resolve().parents[2]

#: test modules whose every test is a config check (validate_config, read_config_file, Plan, check-config)
CONFIG_CHECK_MODULES = frozenset({"test_config.py"})

#: test modules that check what they write themselves
OWN_CHECK_MODULES = frozenset({"test_run.py"})

#: the folders a step may write, relative to the folder it runs in; also the project's folders a workflow writes
#: while these tests run (other pytest-xdist workers, a run started in the checkout)
RUN_FOLDERS = ("results", "data", ".snakemake")

#: what the config-check tests write themselves into their tmp_path: the config files they check
OWN_FILES = ("*.yaml", "*.yml")


@pytest.fixture(autouse=True)
def nothing_leaks(request, tmp_path, tmp_path_factory, monkeypatch):
    """Run the test in a fresh working folder with a fresh temporary folder (``tempfile`` and ``TMPDIR``), then
    assert that the project and the temporary folder hold nothing new, changed or removed, and the working folder
    nothing outside its run folders; for a config check, nothing at all and nothing in ``tmp_path`` but the test's
    own config files."""
    module = request.node.path.name
    if module in OWN_CHECK_MODULES:
        yield
        return
    work, temp = tmp_path_factory.mktemp("cwd"), tmp_path_factory.mktemp("tempdir")
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TMPDIR", str(temp))
    project = snapshot(ROOT)
    yield
    # A step writes its outputs relative to the folder it runs in, which is the fresh ``work`` folder checked below;
    # the project's own run folders are left to concurrent runs.
    assert_nothing_outside(ROOT, project, inside=RUN_FOLDERS)
    assert_nothing_outside(temp, {})
    if module in CONFIG_CHECK_MODULES:
        assert_nothing_outside(work, {})
        assert_nothing_outside(tmp_path, {}, own=OWN_FILES)
    else:
        assert_nothing_outside(work, {}, inside=RUN_FOLDERS)
