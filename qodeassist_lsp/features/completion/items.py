"""The suggestion items a completion answers with, and which agent each came from.

Items get a process-unique id; the agent behind each of the latest ones is remembered so that
``qodeassist.accepted`` can credit the right agent's acceptance count.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Final

from qodeassist_lsp.core.request import new_request_id
from qodeassist_lsp.features.completion.context_builder import Cursor
from qodeassist_lsp.features.completion.overlap import replace_length
from qodeassist_lsp.features.completion.requests import CompletionItem

ISSUED_CAPACITY: Final = 512
"""How many recent items are remembered for acceptance."""


class IssuedItems:
    """Makes the items of an answer and remembers the agent of the latest ones."""

    def __init__(self) -> None:
        self._agents: OrderedDict[str, str] = OrderedDict()

    def issue(
        self, texts: Sequence[str], cursor: Cursor, limit: int, agent: str
    ) -> tuple[CompletionItem, ...]:
        """Return items for the first ``limit`` of ``texts`` at ``cursor``, from ``agent``."""
        items: list[CompletionItem] = []
        for text in texts[:limit]:
            item_id = new_request_id()  # unique per process is all an item id needs
            end = cursor.character + replace_length(text, cursor.line_after)
            items.append(CompletionItem(item_id, text, cursor.line, cursor.character, end))
            self._agents[item_id] = agent
            if len(self._agents) > ISSUED_CAPACITY:
                self._agents.popitem(last=False)
        return tuple(items)

    def accepted(self, item_id: str) -> str | None:
        """Return (and forget) the agent of item ``item_id``; None for an unknown item."""
        return self._agents.pop(item_id, None)
