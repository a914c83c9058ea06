"""What the codebase index answers: snippets, symbol definitions and its own status.

Every user of the index (completion context, the chat's ``search_codebase`` and
``find_definition`` tools, ``@codebase``, next edits) reads these types and the `CodebaseIndex`
protocol only, so the engine behind it can change without touching them. Paths are
workspace-relative POSIX strings; lines are 0-based and ``end_line`` is inclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

ChunkKind = Literal["function", "method", "class", "lines", "variable", "type"]
"""What a chunk or symbol is: a definition found by tree-sitter, or a window of lines.

``variable`` (a top-level assignment or constant) and ``type`` (a type alias) are symbols only:
their text is in the module's ``lines`` chunks."""

IndexState = Literal["off", "waiting", "building", "ready", "failed"]
"""Where the index of one workspace is: ``waiting`` until its build starts after ``initialize``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Snippet:
    """One search hit: a chunk of a file, ranked (a lower ``rank`` is better, FTS5's BM25)."""

    path: str
    start_line: int
    end_line: int
    kind: ChunkKind
    name: str | None
    text: str
    rank: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SymbolDefinition:
    """Where a name is defined and what a reader needs of it without opening the file.

    ``summary`` is what a prompt shows: a function's signature and first lines, a class's
    header and its members' signatures (after ``Segment.`` the model sees ``Segment``'s methods).
    """

    name: str
    kind: ChunkKind
    path: str
    start_line: int
    end_line: int
    signature: str
    summary: str
    container: str | None = None
    """The enclosing class of a method, else None."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexStatus:
    """The index of one workspace as ``qodeassist/status`` and ``doctor`` show it."""

    state: IndexState
    root: str
    files: int = 0
    chunks: int = 0
    symbols: int = 0
    done: int = 0
    """Files looked at by the running build (``done`` of ``total``)."""
    total: int = 0
    database: str = ""
    error: str | None = None
    skipped: dict[str, int] = field(default_factory=dict)
    """Files left out, by reason (``ignored``, ``too_large``, ``binary``, ``generated``)."""


ProgressCallback = Callable[[int, int], None]
"""Called with (files done, files in all) while a build runs."""


class CodebaseIndex(Protocol):
    """The index of one workspace folder; every method is safe while a build runs."""

    root: Path

    async def build(self, progress: ProgressCallback | None = None) -> IndexStatus:
        """Bring the index up to date with the folder (a stat scan: only changed files re-read)."""
        ...

    async def update(self, path: Path, text: str | None = None) -> None:
        """Re-index one file from ``text`` (an open buffer), from disk, or drop it if gone."""
        ...

    def search(self, query: str, limit: int = 10) -> list[Snippet]:
        """Return the chunks best matching ``query`` (BM25), best first."""
        ...

    def definitions(self, name: str, limit: int = 5) -> list[SymbolDefinition]:
        """Return where ``name`` (``Class``, ``func``, or ``Class.method``) is defined."""
        ...

    def definitions_of(self, names: Sequence[str], limit: int = 8) -> list[SymbolDefinition]:
        """Return definitions of several names at once (one query; completion's hot path)."""
        ...

    def status(self) -> IndexStatus:
        """Return the index's state and counts now."""
        ...

    def generation(self, excluding: str | None = None) -> int:
        """Return a number that grows whenever this index writes what it holds.

        A cache of the index's answers stays valid while it is unchanged. ``excluding``: an
        absolute path whose own updates do not count (the file being typed in, whose
        definitions a cache of *other* files' definitions leaves out anyway). A plain read of
        two attributes: callers may ask on every request.
        """
        ...

    async def aclose(self) -> None:
        """Stop a running build and close the database."""
        ...
