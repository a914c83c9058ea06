"""The original's ResponseCleaner rules, one by one, in order."""

from __future__ import annotations

import pytest

from qodeassist_lsp.features.refactor.cleaner import (
    clean_response,
    extract_fenced,
    remove_explanations,
)


def test_plain_code_is_unchanged() -> None:
    code = "int main() {\n    return 0;\n}"
    assert clean_response(code) == code


def test_empty_stays_empty() -> None:
    assert clean_response("") == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```cpp\nint main() {}\n```", "int main() {}"),
        ("```\nfoo\nbar\n```", "foo\nbar"),
        ("Sure:\n```py\na = 1\n```\nThat's it.\n```\nb\n```", "a = 1"),
    ],
)
def test_rule1_first_fenced_block(text: str, expected: str) -> None:
    assert clean_response(text) == expected


def test_rule1_unmatched_fences_take_first_line_after_to_last_fence() -> None:
    # "``` x" on the opening line defeats the regex (a space after the tag).
    body, fenced = extract_fenced("``` c++\nint a;\n```")
    assert fenced and body == "int a;\n"


def test_rule1_single_fence_leaves_text() -> None:
    assert extract_fenced("a ``` b") == ("a ``` b", False)


def test_rule2_strips_only_line_breaks_keeping_indentation() -> None:
    assert clean_response("\r\n\n    x = 1\n\n") == "    x = 1"


@pytest.mark.parametrize(
    "line",
    [
        "Here's the refactored code:",
        "Here is the code:",
        "here's what changed",
        "The refactored function",
        "Refactored code:",
        "code:",
        "I've refactored it",
        "I refactored the loop",
        "I've changed two names",
        "I changed one thing",
        "Below is the improved here is code",
    ],
)
def test_rule3_explanation_prefixes(line: str) -> None:
    assert clean_response(f"{line}\nint x = 1;") == "int x = 1;"


def test_rule3_short_prose_header_outside_fence() -> None:
    assert clean_response("Updated function:\n    def f(): pass") == "    def f(): pass"


def test_rule3_prose_header_not_dropped_inside_fence() -> None:
    assert clean_response("```\nUpdated function:\nx\n```") == "Updated function:\nx"


def test_rule3_code_ending_in_colon_is_kept() -> None:
    code = "else:\n    pass"
    assert clean_response(code) == code
    assert clean_response("if a > 1:\n    b()") == "if a > 1:\n    b()"


def test_rule3_only_first_three_lines_are_scanned() -> None:
    text = "x = 1\nHere is the code:\ny"
    assert clean_response(text) == text


def test_rule3_skips_to_the_last_explanation_before_code() -> None:
    text = "Here's the code:\n\nCode:\n    y = 2"
    assert clean_response(text) == "    y = 2"


def test_rule3_all_explanation_is_kept() -> None:
    assert remove_explanations("Here is the code:") == "Here is the code:"


def test_blank_line_after_explanation_is_stripped() -> None:
    assert clean_response("Here's the code:\n\n    z = 3\n") == "    z = 3"
