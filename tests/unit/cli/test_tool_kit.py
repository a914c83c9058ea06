"""The command line's permission questions (`cli.tool_kit.TerminalAsker`)."""

from __future__ import annotations

import io

import pytest

from qodeassist_lsp.cli.tool_kit import TerminalAsker
from qodeassist_lsp.tools.permissions import ACTIONS, ALLOW_FOR_CHAT, ALLOW_ONCE, DENY


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("o\n", ALLOW_ONCE),
        ("C\n", ALLOW_FOR_CHAT),
        ("d\n", DENY),
        ("\n", DENY),  # Enter alone: the default
        ("yes\n", DENY),  # not one of the keys: the default, never an allowance
        ("", None),  # end of input: nobody answered
    ],
)
async def test_the_key_typed_picks_the_answer(typed: str, answer: str | None) -> None:
    shown = io.StringIO()
    asker = TerminalAsker(io.StringIO(typed), shown)
    assert await asker.ask("Run it?", ACTIONS) == answer
    assert shown.getvalue() == (
        "Run it?\n  [o] Allow once  [c] Allow for this chat  [d] Deny (default: Deny): "
    )
