"""Smart suppression, eager triggers, the character threshold and the multi-line policy."""

from __future__ import annotations

import pytest

from qodeassist_lsp.features.completion.settings import CompletionSettings
from qodeassist_lsp.features.completion.triggers import (
    TypingCounter,
    evaluate_trigger,
    is_eager,
    single_line_mode,
    suppression_reason,
)


@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [
        ("    foo", "bar()", "inside an identifier"),
        ("self.", "", "right after a member access"),
        ("self.na", "", "right after a member access"),
        ("ptr->", "", "right after a member access"),
        ("std::vec", "", "right after a member access"),
        ("    .filter(", "", None),
        ("    .fil", "", "right after a member access"),
        (r"    \.", "", None),  # a regex escape, not a member access
        ("x = 1.", "", None),
        ("x = 1.5", "", None),
        ("foo", "", None),
        ("foo ", "bar", None),
        ("", "", None),
    ],
)
def test_suppression(before: str, after: str, reason: str | None) -> None:
    assert suppression_reason(before, after) == reason


@pytest.mark.parametrize(
    ("before", "eager"),
    [
        ("    ", True),
        ("", False),
        ("if (", True),
        ("x = ", True),
        ("call(a,", True),
        ("case 1:", True),
        ("a->b >", True),
        ("foo", False),
    ],
)
def test_eager(before: str, eager: bool) -> None:
    assert is_eager(before) is eager


def test_single_line_policy() -> None:
    assert single_line_mode("never", "")
    assert not single_line_mode("always", "code()")
    assert single_line_mode("smart", " + b")
    assert not single_line_mode("smart", "")
    assert not single_line_mode("smart", ")")  # only an auto-closed bracket
    assert not single_line_mode("smart", '");  ')
    # At the end of a line: finishing a started line is single-line; a blank line or an
    # opener may start a block.
    assert single_line_mode("smart", "", "    re")
    assert single_line_mode("smart", ")", "print(va")
    assert not single_line_mode("smart", "", "    ")
    assert not single_line_mode("smart", "", "def f(x):")
    assert not single_line_mode("smart", "", "x = {  ")
    assert not single_line_mode("always", "", "    re")


def test_evaluate_trigger() -> None:
    settings = CompletionSettings(char_threshold=2)
    assert not evaluate_trigger(settings, "ab", "", 1).allowed
    assert evaluate_trigger(settings, "ab", "", 2).allowed
    eager = evaluate_trigger(settings, "x = ", "", 0)
    assert eager.allowed and eager.eager
    assert evaluate_trigger(settings, "a.", "", 5).reason == "right after a member access"
    dumb = CompletionSettings(smart_context_trigger=False, char_threshold=0)
    assert evaluate_trigger(dumb, "a.", "", 0).allowed


def test_typing_counter_windows_resets_and_whitespace() -> None:
    now = [0.0]
    counter = TypingCounter(lambda: now[0])
    counter.note_insert("u", "a b", 1.2)
    assert counter.count("u") == 2
    assert counter.count("u", ignore_whitespace=False) == 3
    now[0] = 1.0
    counter.note_insert("u", "c", 1.2)
    assert counter.count("u") == 3
    now[0] = 3.0
    counter.note_insert("u", "d", 1.2)  # window expired: restarts with this insertion
    assert counter.count("u") == 1
    counter.note_insert("u", "\n", 1.2)
    assert counter.count("u") == 0
    counter.note_insert("u", "x", 1.2)
    counter.note_insert("u", "", 1.2)  # a deletion
    assert counter.count("u") == 0
    assert counter.count("other") == 0
