"""Reading TOML configuration files with enough position information for good errors.

``tomllib`` gives no positions, so `find_key_line` (behind ``TomlFile.line_of``, and the one
locator the settings loader uses too) finds the line of a key path by scanning the text (table
headers, dotted keys, quoted keys, arrays of tables). It is best effort: when a key cannot be
found, the line of the closest enclosing table is used, and failing that no line at all.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.problems import ConfigProblem

_DECODE_POSITION = re.compile(r"at line (?P<line>\d+)")


@dataclass(frozen=True)
class TomlFile:
    """A parsed TOML file: its path, raw text and data."""

    path: Path
    text: str
    data: dict[str, Any] = field(default_factory=dict)

    def line_of(self, *key_path: str) -> int | None:
        """Return the 1-based line that defines ``key_path`` (or its nearest enclosing table)."""
        return find_key_line(self.text, key_path) if key_path else None

    def problem(
        self, severity: str, message: str, *key_path: str, line: int | None = None
    ) -> ConfigProblem:
        """Build a problem anchored at ``key_path`` in this file."""
        return ConfigProblem(
            severity,  # type: ignore[arg-type]
            message,
            file=str(self.path),
            line=line if line is not None else self.line_of(*key_path),
            key=".".join(key_path) or None,
        )


def read_toml(path: Path) -> TomlFile | ConfigProblem:
    """Read and parse ``path``; a decode or I/O failure comes back as one error problem."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return ConfigProblem("error", f"cannot read file: {exc.strerror}", file=str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ConfigProblem(
            "error",
            f"file is not valid UTF-8 (byte {exc.start}); save it as UTF-8",
            file=str(path),
            line=raw[: exc.start].count(b"\n") + 1,
        )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _DECODE_POSITION.search(str(exc))
        return ConfigProblem(
            "error",
            f"invalid TOML: {exc}; fix the syntax at that position",
            file=str(path),
            line=int(match.group("line")) if match else None,
        )
    return TomlFile(path=path, text=text, data=data)


# --------------------------------------------------------------------------------------------
# Locating keys in TOML text: table headers and key/value lines (dotted and quoted keys, arrays
# of tables, multi-line strings skipped), for settings files and agent profiles alike.

_BARE_OR_QUOTED = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_DOTTED = rf"{_BARE_OR_QUOTED}(?:\s*\.\s*{_BARE_OR_QUOTED})*"
_HEADER_RE = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_KEY_RE = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART_RE = re.compile(_BARE_OR_QUOTED)


def _split_dotted(text: str) -> tuple[str, ...]:
    parts = []
    for match in _PART_RE.finditer(text):
        part = match.group(0)
        if part[0] in "\"'":
            part = part[1:-1]
        parts.append(part)
    return tuple(parts)


def find_key_line(text: str, path: Iterable[str | int]) -> int | None:
    """Return the 1-based line where ``path`` (section, key, …) is set, or None.

    Integers in ``path`` index arrays of tables; when the exact key is not found, the line of the
    closest enclosing table or key is returned instead.
    """
    wanted = tuple(path)
    lines = _index_lines(text)
    for length in range(len(wanted), 0, -1):
        prefix = wanted[:length]
        for line_number, location in lines:
            if location == prefix:
                return line_number
        # A dotted key or inline table may set the prefix and more in one line.
        for line_number, location in lines:
            if location[:length] == prefix and all(isinstance(p, str) for p in prefix):
                return line_number
    return None


def _index_lines(text: str) -> list[tuple[int, tuple[str | int, ...]]]:
    """Map each header or key line to the full path it defines."""
    result: list[tuple[int, tuple[str | int, ...]]] = []
    table: tuple[str | int, ...] = ()
    array_counts: dict[tuple[str, ...], int] = {}
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _HEADER_RE.match(line)
        if header:
            names = _split_dotted(header.group(2))
            if header.group(1) == "[[":
                index = array_counts.get(names, 0)
                array_counts[names] = index + 1
                table = (*names, index)
                result.append((number, table))
                result.append((number, names))
            else:
                table = names
                result.append((number, table))
            continue
        key = _KEY_RE.match(line)
        if key:
            result.append((number, (*table, *_split_dotted(key.group(1)))))
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    in_multiline = quote
                    break
    return result
