"""A tiny in-memory `CodebaseIndex` for the feature's unit tests: one chunk per file."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from qodeassist_lsp.context.codebase.model import (
    IndexStatus,
    ProgressCallback,
    Snippet,
    SymbolDefinition,
)
from qodeassist_lsp.features.codebase.settings import CodebaseSettings


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


class FakeIndex:
    """Files' texts by relative path; a search hit is a file containing every query word."""

    def __init__(self, root: Path, ignored: Callable[[Path], str | None]) -> None:
        self.root = root
        self.ignored = ignored
        self.files: dict[str, str] = {}
        self.updates: list[tuple[Path, str | None]] = []
        self.builds = 0
        self.closed = False
        self.gate: asyncio.Event | None = None
        """When set, a build waits for it (a long build)."""

    async def build(self, progress: ProgressCallback | None = None) -> IndexStatus:
        self.builds += 1
        paths = sorted(p for p in self.root.rglob("*.py") if self.ignored(p) is None)
        if self.gate is not None:
            await self.gate.wait()
        self.files = {}
        for done, path in enumerate(paths, start=1):
            self.files[path.relative_to(self.root).as_posix()] = path.read_text()
            if progress is not None:
                progress(done, len(paths))
        return self.status()

    async def update(self, path: Path, text: str | None = None) -> None:
        self.updates.append((path, text))
        relative = path.relative_to(self.root).as_posix()
        text = _read(path) if text is None else text
        if text is None:
            self.files.pop(relative, None)
        else:
            self.files[relative] = text

    def search(self, query: str, limit: int = 10) -> list[Snippet]:
        words = query.lower().split()
        hits = []
        for path, text in sorted(self.files.items()):
            if all(w in text.lower() for w in words):
                lines = text.splitlines()
                hits.append(
                    Snippet(
                        path=path,
                        start_line=0,
                        end_line=max(len(lines) - 1, 0),
                        kind="lines",
                        name=None,
                        text=text,
                        rank=-float(len(path)),
                    )
                )
        return hits[:limit]

    def definitions(self, name: str, limit: int = 5) -> list[SymbolDefinition]:
        found = []
        for path, text in sorted(self.files.items()):
            for number, line in enumerate(text.splitlines()):
                if line.startswith(f"def {name}("):
                    found.append(
                        SymbolDefinition(
                            name=name,
                            kind="function",
                            path=path,
                            start_line=number,
                            end_line=number + 1,
                            signature=line,
                            summary=line,
                        )
                    )
        return found[:limit]

    def definitions_of(self, names: Sequence[str], limit: int = 8) -> list[SymbolDefinition]:
        return [d for n in names for d in self.definitions(n)][:limit]

    def status(self) -> IndexStatus:
        return IndexStatus(
            state="ready" if self.builds else "waiting",
            root=str(self.root),
            files=len(self.files),
            chunks=len(self.files),
            done=len(self.files),
            total=len(self.files),
        )

    def generation(self, excluding: str | None = None) -> int:
        return self.builds + len(self.updates)

    async def aclose(self) -> None:
        self.closed = True


class FakeFactory:
    """Makes `FakeIndex`es and keeps them by folder."""

    def __init__(self) -> None:
        self.made: dict[Path, FakeIndex] = {}

    def __call__(
        self,
        root: Path,
        data_root: Path,
        ignored: Callable[[Path], str | None],
        settings: CodebaseSettings,
    ) -> FakeIndex:
        index = self.made[root] = FakeIndex(root, ignored)
        return index
