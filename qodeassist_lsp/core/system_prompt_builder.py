"""``SystemPromptBuilder``: the system prompt as named, prioritised layers.

Features own their layers (``agent.system`` at priority 0, ``completion.context``,
``refactor``, ``chat.context`` …); composing sorts by priority (stable), skips empty layers and
joins the rest with a blank line.
"""

from __future__ import annotations

from dataclasses import dataclass

AGENT_LAYER = "agent.system"
DEFAULT_PRIORITY = 100


@dataclass(frozen=True)
class _Layer:
    text: str
    priority: int
    order: int


class SystemPromptBuilder:
    """Named system-prompt layers composed in priority order."""

    def __init__(self) -> None:
        self._layers: dict[str, _Layer] = {}
        self._counter = 0

    def set_layer(self, name: str, text: str, priority: int = DEFAULT_PRIORITY) -> None:
        """Add or replace the layer ``name``; an empty text removes it."""
        if not text.strip():
            self._layers.pop(name, None)
            return
        existing = self._layers.get(name)
        order = existing.order if existing else self._counter
        self._counter += 1
        self._layers[name] = _Layer(text, priority, order)

    def clear(self) -> None:
        """Drop every layer."""
        self._layers.clear()

    def names(self) -> list[str]:
        """Return the layer names in composition order."""
        ordered = sorted(self._layers.items(), key=lambda kv: (kv[1].priority, kv[1].order))
        return [name for name, _ in ordered]

    def compose(self) -> str:
        """Return the full system prompt."""
        return "\n\n".join(self._layers[name].text.strip() for name in self.names())
