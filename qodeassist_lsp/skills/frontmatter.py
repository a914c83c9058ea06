"""Split a ``SKILL.md`` into its YAML front matter and its Markdown body, keeping line numbers.

The Agent Skills format puts a YAML mapping between two ``---`` lines at the very top of the
file. PyYAML parses it (safe loader: no tags, no objects); what the validator needs beyond the
values is where each top-level key sits, so a problem can be reported as ``SKILL.md:LINE``.
Line numbers here are 1-based lines of the whole file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from qodeassist_lsp.wire.errors import QodeAssistError

DELIMITER = "---"


class FrontMatterError(QodeAssistError, ValueError):
    """The front matter is missing or is not a YAML mapping; ``line`` locates it (1-based)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class FrontMatter:
    """The parsed front matter of a skill file and the body after it."""

    data: dict[str, Any]
    body: str
    key_lines: dict[str, int] = field(default_factory=dict)
    """The 1-based file line of every top-level key."""
    start_line: int = 1
    """The line of the opening ``---``."""

    def line_of(self, key: str) -> int:
        """Return the line of ``key``, or the opening line when the key is absent."""
        return self.key_lines.get(key, self.start_line)


def parse(text: str) -> FrontMatter:
    """Parse ``text`` (a whole ``SKILL.md``); raise `FrontMatterError` when it is unusable."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff").split("\n")
    if not lines or lines[0].rstrip() != DELIMITER:
        raise FrontMatterError(
            "SKILL.md must start with YAML front matter: a '---' line, `name: …` and "
            "`description: …`, then a closing '---' line",
            1,
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() == DELIMITER)
    except StopIteration:
        raise FrontMatterError(
            "the front matter is not closed: add a '---' line after its last key", 1
        ) from None
    source = "\n".join(lines[1:end])
    try:
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 2) if mark is not None else 1
        reason = exc.problem or exc.context or "invalid YAML"
        raise FrontMatterError(f"the front matter is not valid YAML: {reason}", line) from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"the front matter is not valid YAML: {exc}", 1) from None
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise FrontMatterError(
            "the front matter must be a mapping of `key: value` lines (name, description, …)", 1
        )
    key_lines = {
        str(key.value): key.start_mark.line + 2
        for key, _ in node.value
        if isinstance(key, yaml.ScalarNode)
    }
    body = "\n".join(lines[end + 1 :]).strip("\n")
    return FrontMatter({str(k): v for k, v in data.items()}, body, key_lines)
