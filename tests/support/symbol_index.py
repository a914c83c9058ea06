"""A fake `CodebaseIndex` over a fixed symbol table, for the features that read definitions.

Completion's codebase context and next edits' definitions ask an index only for
``definitions_of`` (names to definitions), ``search`` (callers of a changed signature) and
``generation`` (whether another file was written since). This one answers from what the test
gives it and records what it was asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from qodeassist_lsp.context.codebase.model import Snippet, SymbolDefinition


class SymbolIndex:
    """``definitions`` by name, ``found`` by search query, under ``root``."""

    def __init__(
        self,
        *definitions: SymbolDefinition,
        root: Path,
        found: Mapping[str, Sequence[Snippet]] | None = None,
    ) -> None:
        """Answer from ``definitions`` and ``found`` (a query not in it finds nothing)."""
        self.root = root
        self.table = definitions
        self.found = dict(found or {})
        self.asked: list[list[str]] = []
        """The names of every ``definitions_of`` call, in order."""
        self.searched: list[str] = []
        """Every ``search`` query, in order."""
        self.changes: list[str | None] = []
        """The files written, in order (None: a build), as `generation` counts them."""

    def definitions_of(self, names: Sequence[str], limit: int = 8) -> list[SymbolDefinition]:
        """The table's definitions of ``names`` (in the table's order)."""
        self.asked.append(list(names))
        return [d for d in self.table if d.name in names][:limit]

    def search(self, query: str, limit: int = 10) -> list[Snippet]:
        """What ``found`` holds for ``query``."""
        self.searched.append(query)
        return list(self.found.get(query, ()))[:limit]

    def generation(self, excluding: str | None = None) -> int:
        """The writes so far, less the trailing run of ``excluding``'s own."""
        count = len(self.changes)
        while count and excluding is not None and self.changes[count - 1] == excluding:
            count -= 1
        return count
