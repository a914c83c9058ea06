"""Tool definitions and tool-call ids and arguments as the wire layer sees them.

Protocol-neutral: each protocol module turns `ToolSpec` into its API's tool list, and the
parsers give calls without an id a `new_tool_call_id` and parse their arguments.
"""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass, field
from typing import Any

_ID_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)

    def schema(self) -> dict[str, Any]:
        """Return the parameters schema, defaulting to an object without properties."""
        return self.parameters or {"type": "object", "properties": {}}


def new_tool_call_id() -> str:
    """Make an id for a tool call the provider sent without one.

    Nine alphanumerics, because Mistral rejects any other id shape when it comes back.
    """
    return "qa" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(7))


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """Parse streamed tool arguments; empty means ``{}``, anything but an object is None."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
