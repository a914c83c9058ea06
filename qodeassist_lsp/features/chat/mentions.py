"""``@file`` and ``@file:N-M`` mentions in a chat message, expanded before it is sent.

A mention is ``@`` at the start of the message or after white space, followed by a path
relative to the workspace or a file name (``@parser.py``, ``@src/app/main.py:10-20``). A name
resolves to an open document first, then to the workspace file with that path or name (the
shortest path wins). Resolved mentions become a markdown link to the file and, with a line
range, a fenced snippet of those lines; anything that does not resolve stays as typed (e-mail
addresses, decorators, handles). A mention that resolves outside the workspace (``@../x``, a
symlink leading out) is refused by ``FileAccess.check``, like an ignored file.

``@codebase`` attaches the codebase index's best snippets for the rest of the message (the
`CodebaseSearch` port the workbench gives the chat, within ``[codebase]``'s snippet count and
budget); a snippet of a file the message could not mention (ignored, outside the roots) is left
out. Without an index (``[codebase] enabled = false``) ``@codebase`` stays as typed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.context.codebase.model import Snippet
from qodeassist_lsp.features.chat.files import ChatInputError, FileAccess

MENTION = re.compile(r"(?<!\S)@((?:[\w.\-]+/)*[\w.\-]*\w)(?::(\d+)(?:-(\d+))?)?")
_SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".cache", "build"}
)
MAX_SCANNED_FILES = 50_000
CODEBASE = re.compile(r"(?<!\S)@codebase(?![\w./:-])")
"""The ``@codebase`` mention."""

CodebaseSearch = Callable[[str], Awaitable[Sequence[tuple[Path, Snippet]]]]
"""The index's snippets for a query, best first, within the budget: (the file, the snippet)."""


@dataclass(frozen=True)
class Mention:
    """One resolved mention: the file and an optional 1-based inclusive line range."""

    token: str
    path: Path
    first_line: int | None = None
    last_line: int | None = None


def _find_in_workspace(root: Path, name: str) -> Path | None:
    """Return the shortest workspace path whose tail is ``name`` (bounded scan)."""
    wanted = name.replace("\\", "/")
    best: Path | None = None
    scanned = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for file_name in files:
            scanned += 1
            full = Path(directory) / file_name
            relative = full.relative_to(root).as_posix()
            if (relative == wanted or relative.endswith("/" + wanted)) and (
                best is None or len(relative) < len(best.relative_to(root).as_posix())
            ):
                best = full
        if scanned > MAX_SCANNED_FILES:
            break
    return best


def resolve(access: FileAccess, name: str) -> Path | None:
    """Return the file a mention names, or ``None``."""
    for document in access.documents:
        if document.path and Path(document.path).as_posix().endswith("/" + name):
            return Path(document.path)
    root = access.workspace
    if root is None:
        return None
    direct = root / name
    if direct.exists() and not direct.is_dir():  # FIFOs too: refused by name, not skipped
        return direct
    return _find_in_workspace(root, name)


def find_mentions(access: FileAccess, message: str) -> list[Mention]:
    """Return the mentions of ``message`` that name a file, in order."""
    mentions = []
    for match in MENTION.finditer(message):
        if CODEBASE.fullmatch(match.group(0)):
            continue
        path = resolve(access, match.group(1))
        if path is None:
            continue
        first = int(match.group(2)) if match.group(2) else None
        last = int(match.group(3)) if match.group(3) else first
        mentions.append(Mention(match.group(0), path, first, last))
    return mentions


async def expand_all(access: FileAccess, message: str, codebase: CodebaseSearch | None) -> str:
    """Return ``message`` with its file mentions and ``@codebase`` expanded."""
    if codebase is None or not CODEBASE.search(message):
        return expand(access, message)
    rest = CODEBASE.sub("", message)
    query = " ".join(rest.split())
    found = await codebase(query) if query else ()
    return _with_codebase(access, rest, found)


def _with_codebase(access: FileAccess, rest: str, found: Sequence[tuple[Path, Snippet]]) -> str:
    """Expand the file mentions of ``rest`` and attach the snippets ``found`` for it."""
    text = expand(access, rest).strip()
    shown = []
    for path, snippet in found:
        try:
            access.check(path)
        except ChatInputError:
            continue  # ignored or outside the roots: never attached
        first, last = snippet.start_line + 1, snippet.end_line + 1
        fence = "````" if "```" in snippet.text else "```"
        language = path.suffix.lstrip(".")
        shown.append(
            f"[{snippet.path}:{first}-{last}]({path.as_uri()}):\n"
            f"{fence}{language}\n{snippet.text.rstrip()}\n{fence}"
        )
    if not shown:
        return f"{text}\n\n(@codebase: no snippet of the codebase index matches this message.)"
    head = "Snippets of the codebase that may be relevant (@codebase), best first:"
    return "\n\n".join([text, head, *shown])


def expand(access: FileAccess, message: str) -> str:
    """Return ``message`` with every resolvable file mention expanded (ignored files refused)."""
    mentions = {m.token: m for m in find_mentions(access, message)}
    if not mentions:
        return message

    def replace(match: re.Match[str]) -> str:
        mention = mentions.get(match.group(0))
        if mention is None:
            return match.group(0)
        access.check(mention.path)
        name = match.group(1)
        link = f"[@{name}]({mention.path.as_uri()})"
        if mention.first_line is None or mention.last_line is None:
            return link
        lines = access.read_text(mention.path).splitlines()
        first, last = sorted((mention.first_line, mention.last_line))
        snippet = "\n".join(lines[max(first - 1, 0) : last])
        fence = "````" if "```" in snippet else "```"
        language = mention.path.suffix.lstrip(".")
        return f"{link} (lines {first}-{last}):\n{fence}{language}\n{snippet}\n{fence}\n"

    return MENTION.sub(replace, message)
