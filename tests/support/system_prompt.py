"""The system prompt of a recorded provider request, whichever wire shape carried it."""

from __future__ import annotations

from typing import Any


def system_prompt(body: dict[str, Any]) -> str:
    """Return the system text of ``body``: Anthropic's ``system``, or the ``system`` messages."""
    parts: list[str] = []
    top = body.get("system")
    if isinstance(top, str):
        parts.append(top)
    elif isinstance(top, list):
        parts += [str(block.get("text", "")) for block in top if isinstance(block, dict)]
    for message in body.get("messages", []):
        if message.get("role") in ("system", "developer"):
            content = message.get("content")
            if isinstance(content, list):
                parts += [str(b.get("text", "")) for b in content if isinstance(b, dict)]
            else:
                parts.append(str(content))
    return "\n".join(parts)
