"""Reading TOML configuration files with enough position information for good errors.

``tomllib`` gives no positions, so ``TomlFile.line_of`` finds the line of a key path by scanning
the text (table headers, dotted keys, quoted keys). It is best effort: when a key cannot be
found, the line of the closest enclosing table is used, and failing that no line at all.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.problems import ConfigProblem

_HEADER = re.compile(r"^\s*\[\[?\s*(?P<name>[^\]]+?)\s*\]\]?\s*(#.*)?$")
_BARE_OR_QUOTED = r'(?:"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)'
_KEY = re.compile(rf"^\s*(?P<key>{_BARE_OR_QUOTED}(?:\s*\.\s*{_BARE_OR_QUOTED})*)\s*=")
_PART = re.compile(_BARE_OR_QUOTED)
_DECODE_POSITION = re.compile(r"at line (?P<line>\d+)")


def _split_key(dotted: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in _PART.findall(dotted))


@dataclass(frozen=True)
class TomlFile:
    """A parsed TOML file: its path, raw text and data."""

    path: Path
    text: str
    data: dict[str, Any] = field(default_factory=dict)

    def line_of(self, *key_path: str) -> int | None:
        """Return the 1-based line that defines ``key_path`` (or its nearest enclosing table)."""
        if not key_path:
            return None
        table: tuple[str, ...] = ()
        best_line: int | None = None
        best_depth = 0
        in_multiline: str | None = None
        for number, line in enumerate(self.text.splitlines(), start=1):
            if in_multiline:
                if line.count(in_multiline) % 2 == 1:
                    in_multiline = None
                continue
            if header := _HEADER.match(line):
                table = _split_key(header.group("name"))
                full = table
            elif key := _KEY.match(line):
                full = table + _split_key(key.group("key"))
                for quote in ('"""', "'''"):
                    if line.count(quote) % 2 == 1:
                        in_multiline = quote
            else:
                continue
            depth = _shared_prefix(full, key_path)
            if depth == len(key_path) == len(full):
                return number
            if depth > best_depth and depth == len(full):
                best_line, best_depth = number, depth
        return best_line

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


def _shared_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    size = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        size += 1
    return size


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
