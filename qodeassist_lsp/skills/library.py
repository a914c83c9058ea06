"""``SkillLibrary``: the skills one scan found, and what chat makes of them.

It renders the two system-prompt layers (the catalog of names and descriptions, kept under a
token budget, and the whole bodies of always-on skills), recognises ``/skill-name`` at the start
of a chat message, and lists itself for ``qodeassist/skills/list``. Immutable: a rescan builds
a new library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from qodeassist_lsp.config.problems import ConfigProblem, did_you_mean
from qodeassist_lsp.skills.skill import Skill
from qodeassist_lsp.wire.errors import QodeAssistError

CHARS_PER_TOKEN: Final = 4
"""The estimate the budget uses (about four characters a token of English prose)."""
SLASH: Final = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_.-]*)(?=\s|$)")
"""``/name`` at the very start of a message, followed by white space or the end."""
CATALOG_HEADING: Final = "# Available Skills"
ALWAYS_ON_HEADING: Final = "# Always-on Skill"
INVOKED_HEADING: Final = "# Invoked Skill"


class UnknownSkill(QodeAssistError, LookupError):
    """A message invoked ``/name`` and no skill has that name; ``str()`` says what exists."""


@dataclass(frozen=True)
class Shadowed:
    """A skill hidden by a higher-priority one of the same name."""

    skill: Skill
    by: Skill


@dataclass(frozen=True)
class Invocation:
    """A ``/name`` at the start of a message: the skill and the text to inject."""

    skill: Skill

    @property
    def text(self) -> str:
        """The user block sent with the message (QodeAssist's ``skill_invocation`` text)."""
        return f"{INVOKED_HEADING}: {self.skill.name}\n\n{self.skill.body}"


@dataclass(frozen=True)
class SkillLibrary:
    """Valid skills by name (priority order), the shadowed ones and every load problem."""

    skills: dict[str, Skill] = field(default_factory=dict)
    shadowed: list[Shadowed] = field(default_factory=list)
    problems: list[ConfigProblem] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        """Return the skill ``name`` (None when there is none)."""
        return self.skills.get(name)

    def catalog(self, budget_tokens: int, *, tool: bool = True) -> str:
        """Return the catalog layer: every non-always-on skill, within ``budget_tokens``.

        With ``tool`` the model is told to call ``load_skill``; without (the agent has no
        tools) to suggest that the user type ``/name``. Entries that do not fit are left out
        and counted in a closing note.
        """
        listed = [s for s in self.skills.values() if not s.always_on]
        if not listed:
            return ""
        how = (
            "When a task matches one, call the load_skill tool with that skill's name before "
            "you start, and follow its instructions."
            if tool
            else "When a task matches one, ask the user to start their message with /<name> "
            "so that its instructions are sent to you."
        )
        head = f"{CATALOG_HEADING}\nSpecialized skills are available. {how}\n"
        budget = budget_tokens * CHARS_PER_TOKEN - len(head)
        lines: list[str] = []
        for index, skill in enumerate(listed):
            line = f"- {skill.name}: {skill.description}"
            left = len(listed) - index
            note = f"\n({left} more skills not listed: the catalog budget is spent.)"
            if len(line) + 1 + (len(note) if left > 1 else 0) > budget:
                lines.append(note.strip())
                break
            lines.append(line)
            budget -= len(line) + 1
        return head + "\n" + "\n".join(lines)

    def always_on(self) -> str:
        """Return the always-on layer: the whole body of every always-on skill."""
        return "\n\n".join(
            f"{ALWAYS_ON_HEADING}: {s.name}\n\n{s.body}"
            for s in self.skills.values()
            if s.always_on and s.body.strip()
        )

    def invocation(self, message: str) -> Invocation | None:
        """Return the skill ``message`` invokes with a leading ``/name``, if it does.

        Raise `UnknownSkill` for a name no skill has. A message starting with ``//`` is not an
        invocation (see `literal`).
        """
        if message.startswith("//"):
            return None
        match = SLASH.match(message)
        if match is None:
            return None
        name = match.group(1)
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(f"/{n}" for n in self.skills) or "none (see docs/skills.md)"
            hint = did_you_mean(name, self.skills)
            raise UnknownSkill(
                f"there is no skill {name!r}{hint} (available: {known}); to send a message "
                "that starts with '/', start it with '//'"
            )
        return Invocation(skill)

    def summaries(self) -> list[dict[str, Any]]:
        """Return the ``qodeassist/skills/list`` entries (winners, each with what it shadows)."""
        return [
            {
                "name": skill.name,
                "description": skill.description,
                "source": skill.source,
                "alwaysOn": skill.always_on,
                "path": str(skill.file),
                "shadows": [
                    {"source": s.skill.source, "path": str(s.skill.file)}
                    for s in self.shadowed
                    if s.by is skill
                ],
            }
            for skill in self.skills.values()
        ]


def literal(message: str) -> str:
    """Return ``message`` with the ``//`` escape of a leading slash undone."""
    return message[1:] if message.startswith("//") else message
