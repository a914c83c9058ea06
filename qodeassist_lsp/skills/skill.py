"""One skill: a folder with a ``SKILL.md``, loaded and validated against the Agent Skills format.

The front matter must give ``name`` (1-64 characters of ``a-z``, ``0-9`` and single hyphens,
equal to the folder's name) and ``description`` (1-1024 characters); ``license``,
``compatibility`` (at most 500 characters), ``allowed-tools`` (recorded, not enforced) and
``metadata`` (a map of strings) are optional. ``metadata.always-on: "true"`` makes the skill
always-on (its whole body joins every chat's system prompt), as in QodeAssist. Keys Claude Code
adds (``model``, ``argument-hint`` …) are accepted silently so shared ``~/.claude/skills`` load
clean; any other key is a warning with a "did you mean". A problem that leaves the skill
unusable is an error and the skill is not loaded; every problem names ``SKILL.md:LINE``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from qodeassist_lsp.config.problems import ConfigProblem, did_you_mean
from qodeassist_lsp.skills.frontmatter import FrontMatter, FrontMatterError, parse

SKILL_FILE: Final = "SKILL.md"
NAME_MAX: Final = 64
DESCRIPTION_MAX: Final = 1024
COMPATIBILITY_MAX: Final = 500
BODY_MAX_CHARS: Final = 64 * 1024
"""A larger body is cut here (with a note): it is injected whole into prompts."""
ALWAYS_ON_KEY: Final = "always-on"
"""The ``metadata`` key whose value ``"true"`` makes a skill always-on."""

NAME_PATTERN: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
KNOWN_KEYS: Final = frozenset(
    {"name", "description", "license", "compatibility", "allowed-tools", "metadata"}
)
CLAUDE_CODE_KEYS: Final = frozenset(
    {
        "argument-hint",
        "disable-model-invocation",
        "user-invocable",
        "model",
        "context",
        "agent",
        "hooks",
        "version",
        "when_to_use",
    }
)
"""Keys Claude Code reads: no effect here, but not a mistake in a shared skill either."""


@dataclass(frozen=True)
class Skill:
    """A loaded, valid skill."""

    name: str
    description: str
    folder: Path
    source: str
    """Which discovery root it came from (``project``, ``config``, ``user``, or a path)."""
    body: str
    always_on: bool = False
    license: str = ""
    compatibility: str = ""
    allowed_tools: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def file(self) -> Path:
        """The skill's ``SKILL.md``."""
        return self.folder / SKILL_FILE

    def resources(self, limit: int = 200) -> list[str]:
        """Return the skill's other files, relative to its folder (``/``-separated, sorted)."""
        found: list[str] = []
        for path in sorted(self.folder.rglob("*")):
            if len(found) >= limit:
                break
            relative = path.relative_to(self.folder)
            if path.is_file() and relative.as_posix() != SKILL_FILE and not _hidden(relative):
                found.append(relative.as_posix())
        return found


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def load_skill(folder: Path, source: str) -> tuple[Skill | None, list[ConfigProblem]]:
    """Load the skill in ``folder``; return it (None when unusable) and the problems found."""
    file = folder / SKILL_FILE
    where = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None, [ConfigProblem("error", "SKILL.md is not UTF-8 text", where, 1)]
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return None, [ConfigProblem("error", f"cannot read SKILL.md: {reason}", where)]
    try:
        front = parse(text)
    except FrontMatterError as exc:
        return None, [ConfigProblem("error", exc.message, where, exc.line)]
    return _validate(front, folder, source, where)


def _validate(
    front: FrontMatter, folder: Path, source: str, where: str
) -> tuple[Skill | None, list[ConfigProblem]]:
    problems: list[ConfigProblem] = []

    def problem(severity: Any, key: str, message: str) -> None:
        problems.append(ConfigProblem(severity, message, where, front.line_of(key), key))

    data = front.data
    name = _text(data.get("name"))
    if name is None:
        problem("error", "name", "the front matter needs `name:` (the skill folder's name)")
    elif not (0 < len(name) <= NAME_MAX and NAME_PATTERN.fullmatch(name)):
        problem(
            "error",
            "name",
            f"`name: {name}` is not a skill name: use 1-{NAME_MAX} lowercase letters, digits "
            "and single hyphens, not at the start or end (like `code-review`)",
        )
    elif name != folder.name.lower():
        problem(
            "error",
            "name",
            f"`name: {name}` must equal the skill's folder name {folder.name!r}: rename one",
        )
    description = _text(data.get("description"))
    if description is None or not description.strip():
        problem("error", "description", "the front matter needs a non-empty `description:`")
    elif len(description) > DESCRIPTION_MAX:
        problem(
            "error",
            "description",
            f"`description` has {len(description)} characters; at most {DESCRIPTION_MAX}",
        )
    compatibility = _text(data.get("compatibility")) or ""
    if len(compatibility) > COMPATIBILITY_MAX:
        problem(
            "warning",
            "compatibility",
            f"`compatibility` has {len(compatibility)} characters; at most {COMPATIBILITY_MAX}",
        )
    metadata = _metadata(data.get("metadata"), lambda m: problem("warning", "metadata", m))
    for key in data:
        if key not in KNOWN_KEYS and key not in CLAUDE_CODE_KEYS:
            hint = did_you_mean(key, KNOWN_KEYS)
            problem("warning", key, f"unknown front matter key {key!r} is ignored{hint}")
    if name is None or description is None or any(p.severity == "error" for p in problems):
        return None, problems
    body = front.body
    if len(body) > BODY_MAX_CHARS:
        body = body[:BODY_MAX_CHARS] + "\n\n[skill body truncated]"
        problem("warning", "name", f"the body is longer than {BODY_MAX_CHARS} characters: cut")
    skill = Skill(
        name=name,
        description=" ".join(description.split()),
        folder=folder,
        source=source,
        body=body,
        always_on=metadata.get(ALWAYS_ON_KEY, "").strip().lower() == "true",
        license=_text(data.get("license")) or "",
        compatibility=compatibility,
        allowed_tools=tuple((_text(data.get("allowed-tools")) or "").split()),
        metadata=metadata,
    )
    return skill, problems


def _text(value: Any) -> str | None:
    """Return a scalar as text (YAML reads ``version: 1.0`` as a float), None for others."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _metadata(value: Any, warn: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        warn("`metadata` must be a map of `key: value` lines; ignored")
        return {}
    found: dict[str, str] = {}
    for key, item in value.items():
        text = _text(item)
        if text is None:
            warn(f"`metadata.{key}` must be a string; ignored")
        else:
            found[str(key)] = text
    return found
