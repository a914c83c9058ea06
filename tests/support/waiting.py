"""Waiting for a condition with a deadline that catches a hang, never a slow machine."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

HANG_S = 60.0
"""How long a condition that should come true may take before the test calls it a hang."""


async def until(check: Callable[[], object], within: float = HANG_S, step: float = 0.05) -> bool:
    """Poll ``check`` until it is truthy (True) or ``within`` seconds passed (False)."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(step)
    return True
