"""The ``refactor`` system-prompt layer: where the selection is and what to generate.

The text follows the original plugin's ``QuickRefactorHandler::buildContextLayer``: a file
information block, the code around the selection with ``<selection_start>``/``<selection_end>``
and ``<cursor>`` markers (``lines_before``/``lines_after`` lines of context from
``[refactor]``, or the whole file), a "What to Generate" section that differs for a replacement
and an insertion, and indentation notes, because models otherwise drop the selection's base
indentation and the edit lands misaligned. Positions are code points, as ``Document`` stores.
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from qodeassist_lsp.context.documents import (
    Document,
    line_end_offset,
    line_start_offset,
    offset_at,
    position_at,
)
from qodeassist_lsp.features.refactor.settings import RefactorSettings

__all__ = [
    "CURSOR",
    "SELECTION_END",
    "SELECTION_START",
    "Selection",
    "build_refactor_layer",
    "file_information",
    "indentation_width",
    "refactor_mime_type",
]

CURSOR: Final = "<cursor>"
SELECTION_START: Final = "<selection_start>"
SELECTION_END: Final = "<selection_end>"
TAB_WIDTH: Final = 4
"""A tab counts as four spaces in the indentation notes (as in the original)."""

_MIME_OVERRIDES: Final = {
    "c": "text/x-csrc",
    "h": "text/x-chdr",
    "cpp": "text/x-c++src",
    "cc": "text/x-c++src",
    "cxx": "text/x-c++src",
    "hpp": "text/x-c++hdr",
    "hh": "text/x-c++hdr",
    "py": "text/x-python",
    "qml": "text/x-qml",
    "ts": "application/typescript",
    "rs": "text/rust",
    "go": "text/x-go",
    "toml": "application/toml",
    "md": "text/markdown",
}


@dataclass(frozen=True, slots=True)
class Selection:
    """A range of a document in code-point offsets; ``start == end`` is an insertion point."""

    start: int
    end: int
    cursor_at_start: bool = False

    @property
    def empty(self) -> bool:
        """Whether nothing is selected (insert at the cursor)."""
        return self.start == self.end

    @classmethod
    def of(
        cls,
        document: Document,
        start_line: int,
        start_character: int,
        end_line: int,
        end_character: int,
        cursor_at_start: bool = False,
    ) -> Selection:
        """Return the selection of a (line, character) range, clamped to the document."""
        start = offset_at(document.text, start_line, start_character)
        end = offset_at(document.text, end_line, end_character)
        return cls(min(start, end), max(start, end), cursor_at_start)


def refactor_mime_type(path: str) -> str:
    """Return the MIME type the file information block reports for ``path``."""
    name = os.path.basename(path)
    if name == "CMakeLists.txt":
        return "text/x-cmake"
    extension = os.path.splitext(name)[1][1:].lower()
    if extension in _MIME_OVERRIDES:
        return _MIME_OVERRIDES[extension]
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or "text/plain"


def file_information(document: Document) -> str:
    """Return the ``File information:`` block (language id, MIME type, path)."""
    path = document.path or document.uri
    language = document.language_id or "plaintext"
    mime = refactor_mime_type(path)
    return f"File information:\nLanguage: {language} (MIME: {mime})\nFile path: {path}\n"


def indentation_width(line: str) -> int:
    """Return the leading indentation of ``line`` in spaces (a tab counts four)."""
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += TAB_WIDTH
        else:
            break
    return width


def _line_at(text: str, offset: int) -> str:
    start = line_start_offset(text, position_at(text, offset)[0])
    return text[start : line_end_offset(text, start)]


def _tagged_content(text: str, selection: Selection, settings: RefactorSettings) -> str:
    if settings.read_full_file:
        before = text[: selection.start]
        after = text[selection.end :]
    else:
        first = position_at(text, selection.start)[0] - settings.lines_before
        before = text[line_start_offset(text, max(0, first)) : selection.start]
        last = position_at(text, selection.end)[0] + settings.lines_after
        after_end = line_end_offset(text, line_start_offset(text, last))
        after = text[selection.end : max(after_end, selection.end)]
    if selection.empty:
        return before + CURSOR + after
    marked = SELECTION_START + text[selection.start : selection.end] + SELECTION_END
    marked = CURSOR + marked if selection.cursor_at_start else marked + CURSOR
    return before + marked + after


def _what_to_generate(selection: Selection) -> str:
    if selection.empty:
        return (
            "\n- Generate ONLY the code that should be INSERTED at the <cursor> position"
            "\n- Your output will be inserted at the cursor location"
        )
    return (
        "\n- Generate ONLY the code that should REPLACE the selected text between "
        "<selection_start> and <selection_end> markers"
        "\n- Your output will completely replace the selected code"
    )


def _indentation_note(text: str, selection: Selection) -> str:
    spaces = indentation_width(_line_at(text, selection.start))
    if not selection.empty:
        note = ""
        if spaces > 0:
            note = (
                f"\n- CRITICAL: The code to replace starts with {spaces} spaces of indentation"
                f"\n- Your output MUST start with exactly {spaces} spaces (or equivalent tabs)"
                "\n- Each line in your output must maintain this base indentation"
            )
        return note + "\n- PRESERVE all indentation from the original code"
    if spaces == 0:
        return ""
    return (
        f"\n- CRITICAL: Current line has {spaces} spaces of indentation"
        f"\n- If generating multiline code, EVERY line must start with at least {spaces} spaces"
        "\n- If generating single-line code, it will be inserted inline (no indentation needed)"
    )


def _open_files_context(open_files: Sequence[Document]) -> str:
    files = "".join(f"File: {d.path or d.uri}\n{d.text}\n\n" for d in open_files)
    return "User files context:\n" + files


def build_refactor_layer(
    document: Document,
    selection: Selection,
    settings: RefactorSettings,
    open_files: Sequence[Document] = (),
) -> str:
    """Return the ``refactor`` layer text for ``selection`` of ``document``."""
    text = document.text
    layer = file_information(document)
    layer += "\n# Code Context with Position Markers\n" + _tagged_content(text, selection, settings)
    layer += "\n\n# What to Generate:" + _what_to_generate(selection)
    note = _indentation_note(text, selection)
    if note:
        layer += "\n\n## Indentation:" + note
    if settings.use_open_files and open_files:
        layer += "\n\n" + _open_files_context(open_files)
    return layer
