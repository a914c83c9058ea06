"""``resolve_name``: a typed agent or provider name means the loaded one (dashes, case, spaces)."""

from __future__ import annotations

import pytest

from qodeassist_lsp.config.problems import UnknownName, resolve_name

NAMES = ["Claude Chat — Sonnet", "Claude Chat — Opus Max", "Ollama Completion — Chat-style"]


@pytest.mark.parametrize(
    "typed",
    [
        "Claude Chat — Sonnet",
        "Claude Chat - Sonnet",
        "Claude Chat -- Sonnet",
        "claude chat-sonnet",
        "  CLAUDE   chat –  sonnet ",
    ],
)
def test_dashes_case_and_spaces_are_forgiven(typed: str) -> None:
    assert resolve_name(typed, NAMES, "usable agent") == "Claude Chat — Sonnet"


def test_a_hyphen_inside_a_name_still_matches() -> None:
    typed = "ollama completion - chat-style"
    assert resolve_name(typed, NAMES, "usable agent") == "Ollama Completion — Chat-style"


def test_an_exact_name_wins_over_a_lookalike() -> None:
    names = ["A — B", "a - b"]
    assert resolve_name("a - b", names, "usable agent") == "a - b"


def test_several_lookalikes_are_an_ambiguity_that_lists_them() -> None:
    with pytest.raises(UnknownName) as raised:
        resolve_name("a-b", ["A — B", "a -- b"], "usable agent")
    assert (
        str(raised.value) == "'a-b' matches 2 usable agents ('A — B', 'a -- b'): give the full name"
    )


def test_no_match_suggests_the_closest() -> None:
    with pytest.raises(UnknownName) as raised:
        resolve_name("Claude Chat Sonet", NAMES, "usable agent")
    message = str(raised.value)
    assert (
        message == "no usable agent named 'Claude Chat Sonet'; did you mean 'Claude Chat — Sonnet'?"
    )
