"""``search_text``: a regular expression over the workspace's text files, line by line.

Ignored files and folders (``.qodeassistignore``, ``.gitignore``) are skipped, as are binary
files and files over `MAX_FILE_BYTES`; results stop at `MAX_MATCHES`, and each shown line is
cut to `MAX_LINE_CHARS`, so a search never floods the model's context.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Final

from pathspec import GitIgnoreSpec
from pydantic import Field

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments, ToolInputError
from qodeassist_lsp.tools.workspace import ToolWorkspace

MAX_MATCHES: Final = 100
MAX_FILE_BYTES: Final = 1024 * 1024
MAX_LINE_CHARS: Final = 200


class SearchTextArgs(ToolArguments):
    """Arguments of ``search_text``."""

    pattern: str = Field(
        min_length=1,
        description="Regular expression (Python syntax) to look for, e.g. 'def main' or "
        "'TODO|FIXME'. Escape regex characters for a literal search.",
    )
    path: str = Field(default=".", description="Folder (or file) to search; '.' is the root.")
    glob: str = Field(
        default="", description="Only search files matching this glob, e.g. '*.py'. Optional."
    )
    case_sensitive: bool = Field(default=False, description="Match case. Default: false.")


class SearchTextTool(KitTool[SearchTextArgs]):
    """Search the workspace's text."""

    name = "search_text"
    description = (
        "Search the project's text files for a regular expression, line by line. Returns "
        "'path:line: text' for each match (at most 100). Narrow it with `path` and `glob`."
    )
    permission = "read"
    arguments = SearchTextArgs

    async def call(self, args: SearchTextArgs, context: ToolContext) -> ToolOutput:
        """Return the matching lines."""
        flags = 0 if args.case_sensitive else re.IGNORECASE
        try:
            regex = re.compile(args.pattern, flags)
        except re.error as exc:
            raise ToolInputError(f"invalid regular expression {args.pattern!r}: {exc}") from None
        try:
            glob = GitIgnoreSpec.from_lines([args.glob]) if args.glob.strip() else None
        except ValueError as exc:
            raise ToolInputError(f"invalid glob {args.glob!r}: {exc}") from None
        workspace = self._workspace()
        start = workspace.resolve(args.path)
        matches, more = await asyncio.to_thread(_search, workspace, start, regex, glob)
        if not matches:
            return ToolOutput(f"No match for {args.pattern!r} under {workspace.shown(start)}.")
        head = f"{len(matches)}{'+' if more else ''} matches for {args.pattern!r}:"
        tail = [f"[stopped at {MAX_MATCHES} matches; narrow the search]"] if more else []
        return ToolOutput("\n".join([head, *matches, *tail]))


def _search(
    workspace: ToolWorkspace, start: Path, regex: re.Pattern[str], glob: GitIgnoreSpec | None
) -> tuple[list[str], bool]:
    single = start.is_file()
    files = [start] if single else workspace.walk(start)
    base = start.parent if single else start
    matches: list[str] = []
    for path in files:
        if glob is not None and not glob.match_file(path.relative_to(base).as_posix()):
            continue
        text = _text_of(workspace, path)
        if text is None:
            continue
        shown = workspace.shown(path)
        for number, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                if len(matches) == MAX_MATCHES:
                    return matches, True
                cut = line.strip()
                if len(cut) > MAX_LINE_CHARS:
                    cut = cut[: MAX_LINE_CHARS - 1] + "…"
                matches.append(f"{shown}:{number}: {cut}")
    return matches, False


def _text_of(workspace: ToolWorkspace, path: Path) -> str | None:
    """Return the searchable text of ``path``: its open buffer, else the file unless binary."""
    buffer = workspace.buffers.text_of(path)
    if buffer is not None:
        return buffer
    try:
        if path.stat().st_size > MAX_FILE_BYTES or not path.is_file():
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")
