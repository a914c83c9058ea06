"""Session-wide test settings shared by every test directory."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Give every server the tests start one startup cache of their own, not the user's."""
    if "QODEASSIST_CACHE_DIR" not in os.environ:
        path = tempfile.mkdtemp(prefix="qodeassist-cache-")
        os.environ["QODEASSIST_CACHE_DIR"] = path
        config.add_cleanup(lambda: shutil.rmtree(path, ignore_errors=True))
