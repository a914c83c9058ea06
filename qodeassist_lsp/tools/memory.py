"""``memory_read`` and ``memory_write``: the persistent memory as tools a chat model may call.

``memory_read`` (class ``read``) searches the entries, or lists the newest without a query;
``memory_write`` (class ``write``, so the ``[tools.permissions]`` policy may ask first) stores a
note, refusing text that looks like a secret like every other way into memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

from pydantic import Field

from qodeassist_lsp.core.memory import Memory, MemoryEntry, MemoryRefused
from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments, ToolInputError

MAX_LISTED = 20


class MemoryReadArgs(ToolArguments):
    """Arguments of ``memory_read``."""

    query: str = Field(default="", description="Words to search for; empty lists the newest.")
    limit: int = Field(default=10, ge=1, le=MAX_LISTED, description="Most entries to return.")


class MemoryWriteArgs(ToolArguments):
    """Arguments of ``memory_write``."""

    text: str = Field(description="The note to keep, one or two sentences.")
    scope: Literal["global", "project"] = Field(
        default="project", description="'project' for this workspace only, 'global' for all."
    )


def _lines(entries: list[MemoryEntry]) -> str:
    return "\n".join(f"[{e.id}] ({e.scope}) {e.text}" for e in entries)


class MemoryReadTool(KitTool[MemoryReadArgs]):
    """Search the persistent memory."""

    name = "memory_read"
    description = (
        "Search the user's persistent memory (notes kept across chats) for entries similar to "
        "`query`; without a query, list the newest entries."
    )
    permission = "read"
    arguments = MemoryReadArgs

    def __init__(self, memory: Callable[[], Memory]) -> None:
        self._memory = memory

    async def call(self, args: MemoryReadArgs, context: ToolContext) -> ToolOutput:
        """Return the matching entries, one a line."""
        memory = self._memory()
        if args.query.strip():
            found = await asyncio.to_thread(memory.search, args.query, args.limit)
        else:
            found = (await asyncio.to_thread(memory.entries))[-args.limit :][::-1]
        return ToolOutput(_lines(found) if found else "No memory entries match.")


class MemoryWriteTool(KitTool[MemoryWriteArgs]):
    """Add an entry to the persistent memory."""

    name = "memory_write"
    description = (
        "Keep a short note in the user's persistent memory, offered to later chats: a "
        "preference, a convention of the project, a decision. Never store secrets."
    )
    permission = "write"
    arguments = MemoryWriteArgs

    def __init__(self, memory: Callable[[], Memory]) -> None:
        self._memory = memory

    async def call(self, args: MemoryWriteArgs, context: ToolContext) -> ToolOutput:
        """Store the note; say its id."""
        memory = self._memory()
        scope = args.scope if args.scope in memory.files else "global"
        try:
            entry = await asyncio.to_thread(memory.add, args.text, "tool", scope)
        except MemoryRefused as exc:
            raise ToolInputError(str(exc)) from None
        return ToolOutput(f"Remembered [{entry.id}] ({entry.scope}): {entry.text}")
