"""Edit blocks: what ``edit_file`` carries, in either of the two shapes models produce.

The structured shape is a JSON list ``[{"search": …, "replace": …}, …]``. Small models often
write the SEARCH/REPLACE text format instead (aider's, which many were trained on)::

    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE

so a string holding such blocks is accepted as well. Anything else is refused with an
`EditRefused` that says what shape is expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from qodeassist_lsp.wire.errors import QodeAssistError

FORMAT_HINT = (
    'give "edits" as a list of {"search": "<exact current lines>", "replace": "<new lines>"} '
    "objects, or as text of <<<<<<< SEARCH / ======= / >>>>>>> REPLACE blocks"
)

_TEXT_BLOCK = re.compile(
    r"^<{5,9} ?SEARCH[^\n]*\n(?P<search>.*?)^={5,9}[ \t]*\n(?P<replace>.*?)^>{5,9} ?REPLACE[^\n]*$",
    re.DOTALL | re.MULTILINE,
)


class EditRefused(QodeAssistError, ValueError):
    """A file change the model asked for cannot be made; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class EditBlock:
    """One change: replace the text matching ``search`` with ``replace``."""

    search: str
    replace: str


def parse_blocks(value: Any) -> list[EditBlock]:
    """Return the edit blocks of ``value`` (a list of objects or SEARCH/REPLACE text)."""
    if isinstance(value, str):
        return _parse_text(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not value:
        raise EditRefused(f"no edit blocks: {FORMAT_HINT}")
    blocks = []
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise EditRefused(f"edit block {number} is not an object: {FORMAT_HINT}")
        search = item.get("search", item.get("old_content"))
        replace = item.get("replace", item.get("new_content"))
        if not isinstance(search, str) or not isinstance(replace, str):
            raise EditRefused(
                f'edit block {number} needs string "search" and "replace" fields: {FORMAT_HINT}'
            )
        blocks.append(EditBlock(_lf(search), _lf(replace)))
    return blocks


def blocks_of(arguments: dict[str, Any]) -> list[EditBlock]:
    """Return the blocks of ``edit_file``'s arguments: ``edits``, or the original's flat shape."""
    edits = arguments.get("edits")
    if edits is None and "old_content" in arguments:  # the original QodeAssist's shape
        edits = [arguments]
    return parse_blocks(edits)


def _parse_text(text: str) -> list[EditBlock]:
    text = _lf(text)
    blocks = [EditBlock(match["search"], match["replace"]) for match in _TEXT_BLOCK.finditer(text)]
    if not blocks:
        raise EditRefused(f"no SEARCH/REPLACE block found in the edits text: {FORMAT_HINT}")
    return blocks


def _lf(text: str) -> str:
    """Return ``text`` with Windows and old-Mac line breaks made plain line feeds."""
    return text.replace("\r\n", "\n").replace("\r", "\n")
