"""Pipelines: which agents serve completion, chat, compression, quick refactor and next edit.

The defaults are the bundled ``agents/pipelines.toml``; the user's ``pipelines.toml`` and then the
project's ``.qodeassist/pipelines.toml`` replace them key by key. Parsing follows the original:
names are trimmed and capped at 256 characters, duplicates and non-strings are dropped with a
warning, a single slot given as an array takes its first non-empty string, and a file that is
missing or broken leaves the defaults in place. An empty slot switches the feature off.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.problems import ConfigProblem, did_you_mean
from qodeassist_lsp.config.toml_source import TomlFile, read_toml

MAX_NAME_LENGTH = 256
LIST_SLOTS = ("code_completion", "chat_assistant", "next_edit")
SINGLE_SLOTS = ("chat_compression", "quick_refactor", "chat_router")


class PipelinesStatus(enum.StrEnum):
    """How the last pipelines file read went."""

    OK = "ok"
    FILE_MISSING = "file_missing"
    PARSE_ERROR = "parse_error"
    SCHEMA_ERROR = "schema_error"


@dataclass(frozen=True)
class Pipelines:
    """The agent names configured for each pipeline."""

    code_completion: tuple[str, ...] = ()
    """Ordered: the first agent whose ``[match]`` accepts the file serves it."""
    chat_assistant: tuple[str, ...] = ()
    """Allow-list for the chat agent picker."""
    chat_compression: str = ""
    quick_refactor: str = ""
    next_edit: tuple[str, ...] = ()
    """Ordered like ``code_completion``: the first agent whose ``[match]`` accepts the file."""
    chat_router: str = ""
    """Picks the chat agent for ``agent: "auto"`` (empty: no "auto")."""
    status: PipelinesStatus = PipelinesStatus.FILE_MISSING

    def agent_names(self) -> set[str]:
        """Every agent name any pipeline mentions."""
        singles = {self.chat_compression, self.quick_refactor, self.chat_router} - {""}
        return {*self.code_completion, *self.chat_assistant, *self.next_edit, *singles}

    def pipelines_of(self, agent: str) -> list[str]:
        """Return the pipeline slots that name ``agent``."""
        lists = [slot for slot in LIST_SLOTS if agent in getattr(self, slot)]
        return lists + [slot for slot in SINGLE_SLOTS if getattr(self, slot) == agent]


def _clean_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    name = value.strip()[:MAX_NAME_LENGTH]
    return name or None


def parse_pipelines(source: TomlFile, base: Pipelines, problems: list[ConfigProblem]) -> Pipelines:
    """Overlay the ``[pipelines]`` table of ``source`` on ``base``."""
    table = source.data.get("pipelines")
    if not isinstance(table, dict):
        problems.append(
            source.problem("error", "no [pipelines] table; the defaults are used", "pipelines")
        )
        return replace(base, status=PipelinesStatus.SCHEMA_ERROR)
    changes: dict[str, Any] = {"status": PipelinesStatus.OK}
    for key, value in table.items():
        if key in LIST_SLOTS:
            changes[key] = _list_slot(source, key, value, problems)
        elif key in SINGLE_SLOTS:
            changes[key] = _single_slot(source, key, value, problems)
        else:
            hint = did_you_mean(key, [*LIST_SLOTS, *SINGLE_SLOTS])
            problems.append(
                source.problem(
                    "warning", f"unknown pipeline {key!r} is ignored{hint}", "pipelines", key
                )
            )
    return replace(base, **changes)


def _list_slot(
    source: TomlFile, key: str, value: Any, problems: list[ConfigProblem]
) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        name = _clean_name(item)
        if name is None:
            if not (isinstance(item, str) and not item.strip()):
                problems.append(
                    source.problem(
                        "warning",
                        f"{key}: {item!r} is not an agent name; dropped",
                        "pipelines",
                        key,
                    )
                )
        elif name in names:
            problems.append(
                source.problem(
                    "warning", f"{key}: {name!r} is listed twice; dropped", "pipelines", key
                )
            )
        else:
            names.append(name)
    return tuple(names)


def _single_slot(source: TomlFile, key: str, value: Any, problems: list[ConfigProblem]) -> str:
    if isinstance(value, list):
        names = [n for n in (_clean_name(v) for v in value) if n]
        return names[0] if names else ""
    name = _clean_name(value)
    if name is None and not (isinstance(value, str) and not value.strip()):
        problems.append(
            source.problem(
                "warning", f"{key} must be one agent name; the default is kept", "pipelines", key
            )
        )
        return ""
    return name or ""


def load_pipelines(files: list[Path | None], problems: list[ConfigProblem]) -> Pipelines:
    """Read the pipelines files in order (bundled defaults first), each overlaying the last."""
    pipelines = Pipelines()
    for path in files:
        if path is None or not path.is_file():
            continue
        parsed = read_toml(path)
        if isinstance(parsed, ConfigProblem):
            problems.append(parsed)
            pipelines = replace(pipelines, status=PipelinesStatus.PARSE_ERROR)
            continue
        pipelines = parse_pipelines(parsed, pipelines, problems)
    return pipelines
