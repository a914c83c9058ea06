"""Session-wide test settings shared by every test directory."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Give the servers the tests start a startup cache and a bytecode cache of their own."""
    if "QODEASSIST_CACHE_DIR" not in os.environ:
        path = tempfile.mkdtemp(prefix="qodeassist-cache-")
        os.environ["QODEASSIST_CACHE_DIR"] = path
        config.add_cleanup(lambda: shutil.rmtree(path, ignore_errors=True))
    # Every server and CLI the tests start is a new Python process. In a fresh clone the
    # package has no bytecode yet, and under PYTHONDONTWRITEBYTECODE none is ever written: each
    # process would compile what it imports from source again (about 0.2-0.5 s of CPU each, a
    # few hundred processes a run). One bytecode cache for the session, outside the checkout.
    if "PYTHONPYCACHEPREFIX" not in os.environ:
        pycache = tempfile.mkdtemp(prefix="qodeassist-pycache-")
        os.environ["PYTHONPYCACHEPREFIX"] = pycache
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        config.add_cleanup(lambda: shutil.rmtree(pycache, ignore_errors=True))
