"""Anthropic prompt-cache breakpoints, applied to a rendered request body.

Active only for Claude agents with ``cache_prompt = true``. The marker is
``{"type": "ephemeral"}`` (plus ``"ttl": "1h"`` when ``cache_ttl = "1h"``). Breakpoints:
``system`` marks the system prompt, ``tools`` the last tool definition, ``history`` the last
content block of the second-to-last message, so everything before the newest turn is reused.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

ALL_BREAKPOINTS = ("system", "tools", "history")


def cache_marker(ttl: str) -> dict[str, str]:
    """Return the ``cache_control`` object for ``ttl``."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def apply_cache_control(
    body: dict[str, Any], breakpoints: Sequence[str], ttl: str = ""
) -> dict[str, Any]:
    """Return a copy of ``body`` with cache markers at the requested breakpoints."""
    points = set(breakpoints) & set(ALL_BREAKPOINTS) or set(ALL_BREAKPOINTS)
    marker = cache_marker(ttl)
    out = copy.deepcopy(body)
    system = out.get("system")
    if "system" in points and system:
        if isinstance(system, str):
            out["system"] = [{"type": "text", "text": system, "cache_control": dict(marker)}]
        elif isinstance(system, list) and isinstance(system[-1], dict):
            system[-1]["cache_control"] = dict(marker)
    tools = out.get("tools")
    if "tools" in points and isinstance(tools, list) and tools and isinstance(tools[-1], dict):
        tools[-1]["cache_control"] = dict(marker)
    messages = out.get("messages")
    if "history" in points and isinstance(messages, list) and len(messages) >= 2:
        target = messages[-2]
        if isinstance(target, dict):
            content = target.get("content")
            if isinstance(content, str):
                target["content"] = [{"type": "text", "text": content}]
                content = target["content"]
            if isinstance(content, list) and content and isinstance(content[-1], dict):
                content[-1]["cache_control"] = dict(marker)
    return out
