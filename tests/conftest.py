"""Session-wide test settings shared by every test directory."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator

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


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """Give the ``qodeassist`` loggers back as they were (a CLI test's ``main`` sets them)."""
    from qodeassist_lsp.core.logs import BODY_LOGGER

    loggers = [logging.getLogger("qodeassist"), logging.getLogger(BODY_LOGGER)]
    saved = [(lg.level, list(lg.handlers), lg.propagate) for lg in loggers]
    yield
    for logger, (level, handlers, propagate) in zip(loggers, saved, strict=True):
        logger.setLevel(level)
        logger.handlers = handlers
        logger.propagate = propagate
