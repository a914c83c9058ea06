"""What chat does with skills: a system layer per session and ``/name`` in a message.

The ``chat.skills`` layer holds the whole bodies of always-on skills, then the catalog (names and
descriptions within ``[skills] catalog_budget_tokens``); the catalog tells the model to call
``load_skill`` when the session has that tool, else to ask the user for ``/name``. A message
that starts with ``/name`` gets the skill's body as a user block after its text, kept in the
history like any block; an unknown name refuses the message with the names that exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qodeassist_lsp.core.content import Block, TextBlock
from qodeassist_lsp.features.chat.files import ChatInputError
from qodeassist_lsp.skills.library import SkillLibrary, UnknownSkill, literal
from qodeassist_lsp.skills.load_skill_tool import TOOL_NAME

if TYPE_CHECKING:
    from qodeassist_lsp.core.session import Session

SKILLS_LAYER = "chat.skills"
SKILLS_PRIORITY = 55
"""Right after the project context layer (50)."""


def invoked(library: SkillLibrary | None, message: str) -> list[Block]:
    """Return the block of the skill ``message`` invokes (none when it invokes none)."""
    if library is None:
        return []
    try:
        invocation = library.invocation(message.lstrip())
    except UnknownSkill as exc:
        raise ChatInputError(str(exc)) from None
    return [TextBlock(invocation.text)] if invocation is not None else []


def message_text(library: SkillLibrary | None, message: str) -> str:
    """Return the message as sent to the model (a leading ``//`` stands for ``/``)."""
    return literal(message.lstrip()) if library is not None else message


def add_layer(session: Session, library: SkillLibrary | None, budget_tokens: int) -> None:
    """Set the ``chat.skills`` layer of ``session`` (after its tools were contributed)."""
    if library is None:
        return
    tool = bool(session.tools.permission_of(TOOL_NAME)) and session.agent.enable_tools
    parts = [library.always_on(), library.catalog(budget_tokens, tool=tool)]
    session.system_prompt.set_layer(
        SKILLS_LAYER, "\n\n".join(p for p in parts if p), priority=SKILLS_PRIORITY
    )
