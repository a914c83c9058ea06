"""The permission question about one tool call, as people read it (issue 47).

Every door asks the same text (``window/showMessageRequest`` in an editor, the web chat's
question, the terminal of ``chat``): a title line naming the tool, what it does and the file,
then what will happen — for the file tools the change as diff lines with their indentation
(``edit_file``'s blocks, ``create_file``'s content), for ``terminal`` the command line, for any
other tool one ``key: value`` line per argument. Long details are cut with a line saying how
much was left out. Nothing here reads a file: the question shows what the model asked for.
"""

from __future__ import annotations

import json
from typing import Any, Final

from qodeassist_lsp.tools.edits.blocks import EditRefused, blocks_of

MAX_DETAIL_LINES: Final = 40
"""Lines of detail shown under the title; the rest is counted in a last line."""
MAX_LINE_CHARS: Final = 200
"""Characters shown of one detail line."""
MAX_VALUE_CHARS: Final = 400
"""Characters shown of one argument of a tool without a dedicated layout."""

_VERBS: Final = {"read": "read", "write": "change files with", "execute": "run a program with"}


def describe_call(name: str, permission: str, arguments: dict[str, Any]) -> str:
    """Return the question about calling ``name`` with ``arguments``: a title, then details."""
    path = _path_of(arguments)
    what = ""
    if name == "edit_file" and path:
        what, detail = f" on {path}", _edit_lines(arguments)
    elif name == "create_file" and path:
        content = arguments.get("content", "")
        lines = _split(content.replace("\r\n", "\n")) if isinstance(content, str) else []
        what, detail = f" to create {path}", ["+" + line for line in lines]
    elif name == "delete_file" and path:
        what, detail = f" to delete {path}", []
    elif name == "terminal" and isinstance(arguments.get("command"), str):
        detail = _command_lines(arguments)
    elif name == "build":
        what, detail = " (the command of [tools] build_command)", []
    else:
        detail = _argument_lines(arguments)
    verb = _VERBS.get(permission, "use")
    text = f"QodeAssist: the model wants to {verb} the tool {name}{what}. Allow it?"
    shown = _cut(detail)
    return text + ("\n" + "\n".join(shown) if shown else "")


def _path_of(arguments: dict[str, Any]) -> str:
    for key in ("path", "filepath", "filename"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _edit_lines(arguments: dict[str, Any]) -> list[str]:
    """``edit_file``'s blocks as diff lines: ``-`` what is searched, ``+`` what replaces it."""
    try:
        blocks = blocks_of(arguments)
    except EditRefused:
        return _argument_lines({k: v for k, v in arguments.items() if k != "path"})
    lines: list[str] = []
    for number, block in enumerate(blocks, start=1):
        if len(blocks) > 1:
            lines.append(f"@@ block {number} of {len(blocks)} @@")
        if not block.search:
            lines.append("@@ appended at the end of the file @@")
        lines += ["-" + line for line in _split(block.search)]
        lines += ["+" + line for line in _split(block.replace)]
    return lines


def _command_lines(arguments: dict[str, Any]) -> list[str]:
    lines = [f"$ {arguments['command']}"]
    cwd = arguments.get("cwd")
    if isinstance(cwd, str) and cwd.strip() not in ("", "."):
        lines.append(f"(in {cwd})")
    return lines


def _argument_lines(arguments: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        first, *rest = text[:MAX_VALUE_CHARS].split("\n")
        lines.append(f"{key}: {first}")
        lines += ["    " + line for line in rest]
        if len(text) > MAX_VALUE_CHARS:
            lines.append(f"    … ({MAX_VALUE_CHARS} of {len(text)} characters shown)")
    return lines


def _split(text: str) -> list[str]:
    return text.removesuffix("\n").split("\n") if text else []


def _cut(lines: list[str]) -> list[str]:
    shown = [
        line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"
        for line in lines[:MAX_DETAIL_LINES]
    ]
    if len(lines) > MAX_DETAIL_LINES:
        shown.append(f"… ({len(lines) - MAX_DETAIL_LINES} more lines not shown)")
    return shown
