"""Gather the context of one next-edit request from the open documents.

The window around the cursor, the recent edits of this file and of the other open files
(oldest first, the newest ``MAX_EDITS``), snippets of recently viewed files (led, with a
codebase index, by the code behind the newest edit: ``definitions``), and the diagnostics the
client sent. Files ``.qodeassistignore`` excludes contribute nothing; the
caller refuses a request for an ignored file before it gets here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from qodeassist_lsp.context.codebase.model import CodebaseIndex
from qodeassist_lsp.context.documents import Document, DocumentStore
from qodeassist_lsp.features.next_edit.definitions import snippets_for_edit
from qodeassist_lsp.features.next_edit.prompts import (
    DiagnosticNote,
    EditEntry,
    NextEditContext,
    Snippet,
)
from qodeassist_lsp.features.next_edit.recent import RecentFiles
from qodeassist_lsp.features.next_edit.settings import NextEditSettings
from qodeassist_lsp.features.next_edit.window import window_around

__all__ = ["MAX_EDITS", "display_path", "gather"]

MAX_EDITS: Final = 8
"""Recent edits in a prompt, across files."""


def display_path(document: Document, project: Path | None) -> str:
    """Return how prompts name ``document``: relative to the project when inside it."""
    if not document.path:
        return document.name
    if project is not None:
        try:
            return Path(os.path.relpath(document.path, project)).as_posix()
        except ValueError:  # another drive on Windows
            pass
    return os.path.basename(document.path)


def gather(
    documents: DocumentStore,
    document: Document,
    cursor: tuple[int, int],
    settings: NextEditSettings,
    recent: RecentFiles,
    name: Callable[[Document], str],
    is_ignored: Callable[[Document], bool],
    diagnostics: tuple[DiagnosticNote, ...] = (),
    index: CodebaseIndex | None = None,
) -> NextEditContext:
    """Return the context of a next edit at ``cursor`` (line, code-point column).

    ``index``: the codebase index of the document's workspace (None: no definitions).
    """
    window = window_around(document, *cursor, settings.lines_above, settings.lines_below)
    history = documents.edit_history
    own = history.hunks(document.uri)
    path = name(document)
    entries = [EditEntry(path, hunk) for hunk in own]
    for other in documents:
        hunks = history.hunks(other.uri) if other.uri != document.uri else []
        if hunks and not is_ignored(other):
            other_path = name(other)
            entries.extend(EditEntry(other_path, hunk) for hunk in hunks)
    entries.sort(key=lambda entry: entry.hunk.at)
    near = tuple(d for d in diagnostics if window.first - 5 <= d.line <= window.last + 5)
    defined: list[Snippet] = []
    if index is not None and entries and document.path:
        newest = max(own, key=lambda hunk: hunk.at) if own else entries[-1].hunk
        # Half the snippets at most: the recently viewed files keep the rest.
        share = max(settings.max_snippets // 2, 1) if settings.max_snippets > 0 else 0
        defined = snippets_for_edit(index, Path(document.path), newest, share)
    viewed = recent.snippets(document.uri, settings.max_snippets - len(defined))
    return NextEditContext(
        path=path,
        language=document.language_id,
        window=window,
        edits=tuple(entries[-MAX_EDITS:]),
        snippets=(*defined, *viewed),
        diagnostics=near,
        window_before=window.before_edits(own),
    )
