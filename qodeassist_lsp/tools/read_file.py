"""``read_file``: a text file of the workspace, whole or a range of lines, open buffers first.

A file the editor has open is read from its buffer (what the user sees, saved or not). Binary
files (a NUL byte in the first 8 KiB) are refused; other undecodable bytes are replaced. A file
larger than `MAX_READ_BYTES` must be read by line range, and a range stops at that size too, so
one call never floods the model's context.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import Field

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments, ToolInputError

MAX_READ_BYTES: Final = 256 * 1024
"""The most text one ``read_file`` call returns."""
BINARY_SNIFF_BYTES: Final = 8192


class ReadFileArgs(ToolArguments):
    """Arguments of ``read_file``."""

    path: str = Field(description="File path, relative to the workspace root (e.g. src/main.py).")
    start_line: int = Field(
        default=1, ge=1, description="First line to return (1-based). Default: 1."
    )
    end_line: int = Field(
        default=0, ge=0, description="Last line to return (inclusive); 0 = to the end. Default: 0."
    )


class ReadFileTool(KitTool[ReadFileArgs]):
    """Read a file of the workspace."""

    name = "read_file"
    description = (
        "Read a text file of the project. Give `path` relative to the project root. For a large "
        "file, read a part with `start_line` and `end_line` (1-based, inclusive). The answer "
        "starts with a header line naming the file and the lines returned, then the text."
    )
    permission = "read"
    arguments = ReadFileArgs

    async def call(self, args: ReadFileArgs, context: ToolContext) -> ToolOutput:
        """Return the header and the requested lines."""
        if args.end_line and args.end_line < args.start_line:
            raise ToolInputError(f"end_line {args.end_line} is before start_line {args.start_line}")
        workspace = self._workspace()
        path = workspace.resolve(args.path, "file")
        shown = workspace.shown(path)
        buffer = workspace.buffers.text_of(path)
        if buffer is None and workspace.editor is not None:
            buffer = await workspace.editor.read_text(path)
        if buffer is not None:
            lines = buffer.splitlines(keepends=True)
            selected = lines[args.start_line - 1 : args.end_line or None]
            part = _Part(*_capped(line.encode() for line in selected), total=len(lines))
            return ToolOutput(_render(shown + " (open buffer)", part, args))
        return ToolOutput(_render(shown, await asyncio.to_thread(_read, path, shown, args), args))


@dataclass(frozen=True)
class _Part:
    """Selected lines of a file, whether the size cap cut them, and the file's line count."""

    lines: list[str]
    truncated: bool
    total: int | None = None


def _read(path: Path, shown: str, args: ReadFileArgs) -> _Part:
    size = path.stat().st_size
    with path.open("rb") as handle:
        if b"\0" in handle.read(BINARY_SNIFF_BYTES):
            raise ToolInputError(f"{shown} is a binary file ({size} bytes); read_file reads text")
        handle.seek(0)
        whole = args.start_line == 1 and args.end_line == 0
        if whole and size > MAX_READ_BYTES:
            raise ToolInputError(
                f"{shown} is {size} bytes, more than read_file returns at once "
                f"({MAX_READ_BYTES} bytes); read part of it with start_line and end_line"
            )
        selected = itertools.islice(handle, args.start_line - 1, args.end_line or None)
        lines, truncated = _capped(selected)
    return _Part(lines, truncated, len(lines) if whole else None)


def _capped(lines: Iterable[bytes]) -> tuple[list[str], bool]:
    """Decode ``lines`` until `MAX_READ_BYTES`; say whether that cut them."""
    kept: list[str] = []
    total = 0
    for line in lines:
        total += len(line)
        if total > MAX_READ_BYTES:
            return kept, True
        kept.append(line.decode("utf-8", errors="replace"))
    return kept, False


def _render(shown: str, part: _Part, args: ReadFileArgs) -> str:
    if not part.lines:
        if part.total == 0:
            return f"File: {shown} (empty)"
        where = f"it has {part.total} lines" if part.total is not None else "the file is shorter"
        raise ToolInputError(f"{shown}: line {args.start_line} is past the end ({where})")
    first, last = args.start_line, args.start_line + len(part.lines) - 1
    of = f" of {part.total}" if part.total is not None else ""
    text = "".join(part.lines)
    if part.truncated:
        text += f"\n[cut at {MAX_READ_BYTES} bytes; continue with start_line={last + 1}]"
    return f"File: {shown} (lines {first}-{last}{of})\n\n{text}"
