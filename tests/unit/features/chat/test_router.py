"""The router's answer, read leniently: the first JSON object naming a chat agent."""

from __future__ import annotations

import pytest

from qodeassist_lsp.features.chat.router import Choice, parse

ROSTER = ["Embedded Chat", "Claude Chat — Sonnet"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"agent": "Embedded Chat", "reason": "simple"}', Choice("Embedded Chat", "simple")),
        (
            'Sure!\n```json\n{"agent": "claude  chat — SONNET",\n "reason": "deep\\nthought"}\n```',
            Choice("Claude Chat — Sonnet", "deep thought"),
        ),
        ('{"agent": "Embedded Chat"}', Choice("Embedded Chat", "chosen by the router")),
        (
            '{"x": {"agent": "nope"}} then {"agent": "Embedded Chat", "reason": "r"}',
            Choice("Embedded Chat", "r"),
        ),
    ],
)
def test_a_usable_answer_names_a_chat_agent(answer: str, expected: Choice) -> None:
    assert parse(answer, ROSTER) == expected


@pytest.mark.parametrize(
    "answer",
    ["", "Claude", '{"agent": "GPT-9"}', '{"agent": 3}', '{"agent": "Embedded Chat"', "[1, 2]"],
)
def test_an_unusable_answer_is_none(answer: str) -> None:
    assert parse(answer, ROSTER) is None
