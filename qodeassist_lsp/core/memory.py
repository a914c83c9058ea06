"""Persistent memory: short notes the user (or a model) asked to keep, global or per project.

Global entries live in ``<data root>/memory.json``, a project's in
``<workspace>/.qodeassist/memory.json``: ``{"entries": [{id, text, created, source}]}``. Every
change is a read-modify-write under the lock of the file's folder (`folder_lock`: no lock file
left beside it), so several writers (two editors, the CLI, a tool call) lose nothing. Text that
looks like a credential (the shapes ``wire.errors.redact`` blanks out in logs) is refused, never
stored. ``relevant`` picks the entries for a chat's system prompt: rapidfuzz similarity to the
message plus recency, within a token budget (about four characters a token).
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from qodeassist_lsp.config.atomic import write_text_atomically
from qodeassist_lsp.config.folder_lock import FolderLockTimeout, folder_lock
from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.wire.errors import QodeAssistError, redact

Scope = Literal["global", "project"]
Source = Literal["cli", "chat", "tool"]
FILE_NAME = "memory.json"
MAX_TEXT = 2000
LOCK_TIMEOUT_S = 10.0
CHARS_PER_TOKEN = 4
MIN_SIMILARITY = 50.0
"""The rapidfuzz ``token_set_ratio`` (0-100) a ``search`` hit needs."""


class MemoryRefused(QodeAssistError, ValueError):
    """A memory entry cannot be stored or found; ``str()`` says what to do instead."""


@dataclass(frozen=True)
class MemoryEntry:
    """One remembered note."""

    id: str
    text: str
    created: str
    source: str
    scope: str = "global"

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (with its scope)."""
        return asdict(self)


class MemoryFile:
    """The entries of one scope, in one JSON file guarded by its folder's lock."""

    def __init__(self, path: Path, scope: Scope) -> None:
        self.path = path
        self.scope = scope

    def entries(self) -> list[MemoryEntry]:
        """Return the stored entries, oldest first (a missing or broken file has none)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        raw = data.get("entries", []) if isinstance(data, dict) else []
        found = []
        for item in raw if isinstance(raw, list) else []:
            if isinstance(item, dict) and isinstance(item.get("text"), str) and item.get("id"):
                found.append(
                    MemoryEntry(
                        str(item["id"]),
                        item["text"],
                        str(item.get("created", "")),
                        str(item.get("source", "")),
                        self.scope,
                    )
                )
        return found

    def _write(self, entries: list[MemoryEntry]) -> None:
        rows = [{k: v for k, v in e.to_json().items() if k != "scope"} for e in entries]
        text = json.dumps({"entries": rows}, ensure_ascii=False, indent=1) + "\n"
        write_text_atomically(self.path, text)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        try:
            with folder_lock(self.path.parent, LOCK_TIMEOUT_S):
                yield
        except FolderLockTimeout as exc:
            raise MemoryRefused(f"{exc}; nothing was changed") from exc

    def add(self, entry: MemoryEntry) -> None:
        """Append ``entry``, keeping what other writers stored meanwhile."""
        with self._lock():
            self._write([*self.entries(), entry])

    def forget(self, entry_id: str) -> bool:
        """Remove the entry ``entry_id``; return whether it was there."""
        if not self.path.is_file():
            return False
        with self._lock():
            entries = self.entries()
            kept = [e for e in entries if e.id != entry_id]
            if len(kept) == len(entries):
                return False
            self._write(kept)
            return True


class Memory:
    """The global and (with a workspace) project memory."""

    def __init__(self, global_dir: Path, project_dir: Path | None) -> None:
        self.files: dict[Scope, MemoryFile] = {
            "global": MemoryFile(global_dir / FILE_NAME, "global")
        }
        if project_dir is not None:
            self.files["project"] = MemoryFile(project_dir / FILE_NAME, "project")

    @classmethod
    def of(cls, paths: ConfigPaths) -> Memory:
        """Return the memory of ``paths``: the data root, and the project's ``.qodeassist/``."""
        return cls(paths.data_root, paths.project_config)

    def file(self, scope: Scope) -> MemoryFile:
        """Return the file of ``scope`` (project memory needs a workspace)."""
        found = self.files.get(scope)
        if found is None:
            raise MemoryRefused("no workspace folder is open, so there is no project memory")
        return found

    def add(self, text: str, source: Source, scope: Scope = "global") -> MemoryEntry:
        """Store ``text``; refuse empty, overlong or secret-looking text."""
        text = " ".join(text.split())
        if not text:
            raise MemoryRefused("nothing to remember: the text is empty")
        if len(text) > MAX_TEXT:
            raise MemoryRefused(f"a memory entry holds at most {MAX_TEXT} characters; shorten it")
        if redact(text) != text:
            raise MemoryRefused(
                "refused: the text looks like a secret (an API key or token); memory is plain "
                "text on disk, so store keys with `qodeassist-lsp secrets set` instead"
            )
        created = datetime.now(UTC).isoformat(timespec="seconds")
        entry = MemoryEntry(secrets.token_hex(4), text, created, source, scope)
        self.file(scope).add(entry)
        return entry

    def entries(self, scope: Scope | None = None) -> list[MemoryEntry]:
        """Return the entries of ``scope`` (both when None), oldest first."""
        files = [self.file(scope)] if scope else list(self.files.values())
        found = [e for f in files for e in f.entries()]
        return sorted(found, key=lambda e: e.created)

    def forget(self, entry_id: str) -> MemoryEntry:
        """Remove the entry ``entry_id`` from whichever scope holds it; return it."""
        for memory_file in self.files.values():
            entry = next((e for e in memory_file.entries() if e.id == entry_id), None)
            if entry is not None and memory_file.forget(entry_id):
                return entry
        raise MemoryRefused(f"no memory entry {entry_id!r}; list them with `memory list`")

    def search(self, query: str, limit: int = 10) -> list[MemoryEntry]:
        """Return the entries most similar to ``query`` (best first)."""
        scored = _scored(self.entries(), query)
        return [e for _, similarity, e in scored if similarity >= MIN_SIMILARITY][:limit]

    def relevant(self, message: str, budget_tokens: int) -> list[MemoryEntry]:
        """Return the entries for a chat about ``message``, best first, within the budget."""
        budget = budget_tokens * CHARS_PER_TOKEN
        chosen = []
        for _, _, entry in _scored(self.entries(), message):
            cost = len(entry.text) + 3
            if cost <= budget:
                chosen.append(entry)
                budget -= cost
        return chosen


def _scored(entries: list[MemoryEntry], query: str) -> list[tuple[float, float, MemoryEntry]]:
    """Score ``entries`` (oldest first): similarity to ``query`` (0.8) and recency (0.2)."""
    # Imported on first use: rapidfuzz took 80-120 ms to import, more than start-up may spend.
    from rapidfuzz import fuzz, utils

    count = len(entries)
    scored = []
    for index, entry in enumerate(entries):
        similarity = fuzz.token_set_ratio(query, entry.text, processor=utils.default_process)
        recency = (index + 1) / count
        scored.append((0.8 * similarity / 100 + 0.2 * recency, similarity, entry))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return scored


def layer_text(entries: list[MemoryEntry]) -> str:
    """Return the system-prompt layer for ``entries`` (empty when there are none)."""
    if not entries:
        return ""
    lines = "\n".join(f"- {e.text}" for e in entries)
    return f"# Memory\nNotes the user asked you to remember:\n{lines}"
