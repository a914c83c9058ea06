"""The one merge rule of ``extends``: tables merge key by key, arrays and scalars replace."""

from __future__ import annotations

from typing import Any


def deep_merge(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Return ``parent`` overlaid with ``child``; neither input is modified."""
    merged = dict(parent)
    for key, value in child.items():
        inherited = merged.get(key)
        if isinstance(value, dict) and isinstance(inherited, dict):
            merged[key] = deep_merge(inherited, value)
        else:
            merged[key] = value
    return merged
