"""What a test needs from the machine: without it the test is skipped, or fails under ``CI=true``, where
``.ci/run`` installs it."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(what: str, reason: str) -> NoReturn:
    """Skip the test because ``what`` cannot run here (``reason``), or fail it when ``CI=true``."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {what} cannot run: {reason}")
    pytest.skip(reason)
