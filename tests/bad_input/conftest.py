"""A refused config writes nothing: around every test of the config checks (test_config.py) nothing may be written
in the project (but for the folders a concurrent run writes), in the folder the check runs in, in the temporary folder, or
beside the test's own config files in ``tmp_path``."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from .written import assert_nothing_outside, snapshot

ROOT = Path(__file__).resolve().parents[2]

#: test modules whose every test is a config check (validate_config, read_config_file, Plan, check-config)
CONFIG_CHECK_MODULES = frozenset({"test_config.py"})

#: the project's folders a workflow writes while these tests run (see below)
RUN_FOLDERS = ("results", "data", ".snakemake")

#: what those tests write themselves into their tmp_path: the config files they check
OWN_FILES = ("*.yaml", "*.yml")


@pytest.fixture(autouse=True)
def config_checks_write_nothing(request, tmp_path, tmp_path_factory, monkeypatch):
    """Run a config-check test in a fresh working folder with a fresh temporary folder (``tempfile`` and
    ``TMPDIR``), then assert that the project, both folders and ``tmp_path`` (but for the test's own config
    files) hold nothing new, changed or removed."""
    if request.node.path.name not in CONFIG_CHECK_MODULES:
        yield
        return
    work, temp = tmp_path_factory.mktemp("cwd"), tmp_path_factory.mktemp("tempdir")
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TMPDIR", str(temp))
    project = snapshot(ROOT)
    yield
    # The project's own results/, data/ and .snakemake/ are left out: other tests (other pytest-xdist workers) and a
    # workflow started in the checkout write there meanwhile. A check writes its outputs relative to the folder it
    # runs in, which is the fresh ``work`` folder checked below.
    assert_nothing_outside(ROOT, project, inside=RUN_FOLDERS)
    for folder in (work, temp):
        assert_nothing_outside(folder, {})
    assert_nothing_outside(tmp_path, {}, own=OWN_FILES)
