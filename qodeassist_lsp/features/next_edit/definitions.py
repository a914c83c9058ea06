"""What the codebase index adds to a next-edit prompt: the code behind the user's last change.

From the newest edit (issue 45, item 4):

* the definitions of the names it changed or uses, from other files (a call whose arguments
  changed → the called function's signature and first lines; a renamed class → its members);
* when it changed a signature (a ``def``/``function`` line), the places that call that
  function in other files (a search of the index for its name, the chunks with ``name(`` in
  them; an import is not a call): the callers that must change with it.

Each becomes a snippet of the prompt (``Recently viewed code``), before the recently viewed
files' snippets and within ``max_snippets`` in all. Nothing is added without an index.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Final

from qodeassist_lsp.context.codebase.model import CodebaseIndex
from qodeassist_lsp.context.edit_history import Hunk
from qodeassist_lsp.features.next_edit.prompts import Snippet

__all__ = ["MAX_CALLERS", "CodebaseLookup", "changed_names", "snippets_for_edit"]

CodebaseLookup = Callable[[Path], "CodebaseIndex | None"]
"""The index of the workspace holding a file, or None while it is off or not built."""

MAX_CALLERS: Final = 2
"""Most call sites of a changed signature in a prompt."""
SUMMARY_LINES: Final = 12
"""Most lines of one definition's summary."""
_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIGNATURE: Final = re.compile(r"^\s*(?:async\s+)?(?:def|function|fn|func)\s+([A-Za-z_]\w*)")
_COMMON: Final = frozenset(
    """
    self cls this def class return if else elif for while in not and or is None True False
    import from as with try except finally raise pass lambda function const let var new
    async await yield null undefined true false
    """.split()  # noqa: SIM905 (a word list reads better than 40 quoted strings)
)


def _names(lines: tuple[str, ...]) -> list[str]:
    found = _IDENT.findall("\n".join(lines))
    return [name for name in dict.fromkeys(found) if len(name) > 1 and name not in _COMMON]


def changed_names(hunk: Hunk) -> tuple[list[str], list[str]]:
    """Return (names to define, functions whose signature changed) of ``hunk``.

    Names to define: those the edit added or removed first (a rename), then the others its
    new lines use.
    """
    before, after = _names(hunk.original), _names(hunk.updated)
    changed = [n for n in after if n not in before] + [n for n in before if n not in after]
    signatures = [
        match.group(1)
        for line in (*hunk.updated, *hunk.original)
        if (match := _SIGNATURE.match(line)) is not None
    ]
    return list(dict.fromkeys([*changed, *after])), list(dict.fromkeys(signatures))


def snippets_for_edit(index: CodebaseIndex, path: Path, hunk: Hunk, limit: int) -> list[Snippet]:
    """Return up to ``limit`` snippets about ``hunk`` of the file at ``path`` (see module)."""
    if limit <= 0:
        return []
    try:
        own = path.resolve().relative_to(index.root.resolve()).as_posix()
    except ValueError:
        own = ""
    names, signatures = changed_names(hunk)
    found: list[Snippet] = []
    if names:
        defined = index.definitions_of(names[:16], limit=16)
        local = {item.name for item in defined if item.path == own}
        seen: set[str] = set()
        for name in names:
            for item in defined:
                if item.name != name or name in local or name in seen or item.path == own:
                    continue
                seen.add(name)
                lines = (item.summary or item.signature).strip("\n").split("\n")
                found.append(Snippet(item.path, "\n".join(lines[:SUMMARY_LINES])))
    for name in signatures:
        call = re.compile(rf"\b{re.escape(name)}\s*\(")
        callers = [
            s
            for s in index.search(name, limit=8)
            if s.path != own and s.name != name and call.search(s.text) is not None
        ]
        for snippet in callers[:MAX_CALLERS]:
            found.append(Snippet(snippet.path, snippet.text.strip("\n")))
    return found[:limit]
