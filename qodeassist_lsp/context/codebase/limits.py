"""The index's caps and switches: the one place their defaults live.

The codebase feature builds an `IndexLimits` from the ``[codebase]`` settings; whatever it does
not set keeps the default here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_LIMITS", "IndexLimits", "limits_from_json", "limits_to_json"]


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexLimits:
    """What the codebase index reads and how it cuts files into chunks."""

    enabled: bool = True
    """Off: no database is created or read; the index reports ``off``."""
    max_file_bytes: int = 512 * 1024
    """Files larger than this are left out (``too_large``) without being read."""
    max_files: int = 20_000
    """At most this many files of one folder are indexed (the rest count as ``too_many``)."""
    window_lines: int = 40
    """Lines per chunk of a file without a grammar (and per piece of a very long definition)."""
    window_overlap: int = 10
    """Lines two consecutive windows share, so a passage cut at a border is found whole once."""
    max_chunk_lines: int = 200
    """A definition longer than this is indexed as several pieces of at most this many lines."""
    languages: frozenset[str] | None = None
    """Grammars (``python``, ``cpp`` … as in ``context.syntax.GRAMMARS``) whose files are cut
    into definitions; ``None``: every installed grammar. Other files get line windows."""
    text_files: bool = True
    """Index files without a grammar (docs, configs, other languages) as line windows."""
    exclude_dirs: frozenset[str] = field(default_factory=frozenset)
    """Folder names skipped anywhere in the tree, on top of the built-in ones (``.git``,
    ``node_modules``, ``.venv``, ``__pycache__`` …)."""


DEFAULT_LIMITS = IndexLimits()
"""The defaults the ``[codebase]`` settings start from."""


def limits_to_json(limits: IndexLimits) -> dict[str, Any]:
    """Return ``limits`` as JSON values (sets as sorted lists)."""
    return {
        "enabled": limits.enabled,
        "max_file_bytes": limits.max_file_bytes,
        "max_files": limits.max_files,
        "window_lines": limits.window_lines,
        "window_overlap": limits.window_overlap,
        "max_chunk_lines": limits.max_chunk_lines,
        "languages": None if limits.languages is None else sorted(limits.languages),
        "text_files": limits.text_files,
        "exclude_dirs": sorted(limits.exclude_dirs),
    }


def limits_from_json(data: dict[str, Any]) -> IndexLimits:
    """Return the `IndexLimits` of `limits_to_json`'s output."""
    languages = data.get("languages")
    return IndexLimits(
        enabled=bool(data["enabled"]),
        max_file_bytes=int(data["max_file_bytes"]),
        max_files=int(data["max_files"]),
        window_lines=int(data["window_lines"]),
        window_overlap=int(data["window_overlap"]),
        max_chunk_lines=int(data["max_chunk_lines"]),
        languages=None if languages is None else frozenset(languages),
        text_files=bool(data["text_files"]),
        exclude_dirs=frozenset(data["exclude_dirs"]),
    )
