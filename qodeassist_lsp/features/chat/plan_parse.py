"""Reading a plan out of a model's answer: numbered, checkbox or bulleted lists, leniently.

Small local models are sloppy: they number with ``1.``, ``1)``, ``Step 1:`` or ``**1.**``, wrap
the list in a code fence, add a preamble, sub-bullets and bold, or repeat a line. The steps are
the top-level items of the first kind found (numbered, else checkboxes, else bullets), without
markdown emphasis; an answer with no list at all is a `PlanInvalid` that says so (the answer
itself stays in the chat).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.wire.errors import QodeAssistError

PROMPT_FILE = "chat-plan.md"
MAX_STEPS = 20
"""More steps than this are cut: a runaway list is a repetition, not a plan."""
MAX_TITLE = 200

_NUMBERED = re.compile(
    r"^(?P<indent>\s*)(?:#{1,6}\s*)?(?:\*\*|__)?(?:step\s*)?\d{1,3}\s*[.):\-]\s*(?:\*\*|__)?\s*"
    r"(?P<title>\S.*)$",
    re.IGNORECASE,
)
_CHECKBOX = re.compile(r"^(?P<indent>\s*)[-*+]\s+\[[ xX]?\]\s*(?P<title>\S.*)$")
_BULLET = re.compile(r"^(?P<indent>\s*)[-*+\u2022]\s+(?P<title>\S.*)$")
_EMPHASIS = re.compile(r"(\*\*|__|`)")


class PlanInvalid(QodeAssistError, ValueError):
    """The model's answer holds no plan of steps."""


@dataclass(frozen=True)
class _Item:
    indent: int
    title: str


def prompt(personas: Path) -> str:
    """Return the bundled plan-mode instructions (a system-prompt layer of the planning turn)."""
    text = (personas / PROMPT_FILE).read_text(encoding="utf-8")
    return text.replace("{max_steps}", str(MAX_STEPS))


def parse_steps(answer: str) -> list[str]:
    """Return the step titles of ``answer`` (raise `PlanInvalid` when it has no list)."""
    lines = [line for line in answer.splitlines() if not line.lstrip().startswith("```")]
    for pattern in (_NUMBERED, _CHECKBOX, _BULLET):
        items = [_item(m) for m in map(pattern.match, lines) if m is not None]
        items = [i for i in items if i.title]
        if items:
            top = min(i.indent for i in items)
            titles: list[str] = []
            for item in items:
                if item.indent <= top + 1 and (not titles or titles[-1] != item.title):
                    titles.append(item.title)
            return titles[:MAX_STEPS]
    shown = " ".join(answer.split())[:120] or "an empty answer"
    raise PlanInvalid(
        f"the model's answer is not a plan (no numbered or bulleted list of steps): {shown!r}; "
        "the answer is kept in the chat: send the task again in plan mode, or add the steps "
        "yourself with qodeassist/chat/plan/update"
    )


def _item(match: re.Match[str]) -> _Item:
    indent = len(match["indent"].expandtabs(4))
    title = " ".join(_EMPHASIS.sub("", match["title"]).split()).rstrip(":").strip()
    return _Item(indent, title[:MAX_TITLE])
