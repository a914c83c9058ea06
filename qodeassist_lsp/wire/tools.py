"""Tool definitions, tool calls and tool results as the wire layer sees them.

These are protocol-neutral: each protocol module turns `ToolSpec` into its API's tool list
and `ToolCall` + `ToolResult` into its continuation messages.
"""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass, field
from typing import Any

_ID_ALPHABET = string.ascii_letters + string.digits
SYNTHETIC_ID_PREFIX = "qa"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)

    def schema(self) -> dict[str, Any]:
        """Return the parameters schema, defaulting to an object without properties."""
        return self.parameters or {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete tool call the model made."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    signature: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of running one tool call, sent back to the model."""

    tool_use_id: str
    name: str
    content: str
    is_error: bool = False

    def text(self) -> str:
        """Return the content, marked as an error for APIs without an error flag."""
        if self.is_error and not self.content.startswith("Error"):
            return f"Error: {self.content}"
        return self.content


def new_tool_call_id() -> str:
    """Make an id for a tool call the provider sent without one.

    Nine alphanumerics, because Mistral rejects any other id shape when it comes back.
    """
    return SYNTHETIC_ID_PREFIX + "".join(secrets.choice(_ID_ALPHABET) for _ in range(7))


def is_synthetic_id(call_id: str) -> bool:
    """Whether ``call_id`` was made by `new_tool_call_id` rather than by the provider."""
    return len(call_id) == 9 and call_id.startswith(SYNTHETIC_ID_PREFIX) and call_id.isalnum()


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """Parse streamed tool arguments; empty means ``{}``, anything but an object is None."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
