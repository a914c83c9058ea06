"""Fixtures for the launcher tests: a ``Tiny`` server folder and launchers closed afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from qodeassist_lsp.core.launcher.supervisor import ProviderLauncher
from tests.support.tiny_launch import Tiny


@pytest.fixture
def tiny(tmp_path: Path) -> Tiny:
    return Tiny(tmp_path)


@pytest.fixture
async def launchers() -> AsyncIterator[list[ProviderLauncher]]:
    """Launchers a test creates; every one is closed (attached servers stopped) afterwards."""
    created: list[ProviderLauncher] = []
    yield created
    for launcher in created:
        await launcher.aclose()
