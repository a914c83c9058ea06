"""Replace length over the text right of the cursor (the original's unit cases and more)."""

from __future__ import annotations

import pytest

from qodeassist_lsp.features.completion.overlap import replace_length


@pytest.mark.parametrize(
    ("suggestion", "right", "expected"),
    [
        ("foo", "", 0),
        ("foo", "bar", 0),
        ("a", "b", 0),
        ("myVar", "myVariable", 5),
        ("engine.load()", "engine.rootContext()", 7),
        ('colors << "red"', "colors{};", 9),
        ("x;", ";", 1),
        ("arg1, arg2)", ")", 1),
        ("[0]", "];", 2),
        ('= {"red"}', "{};", 3),
        (' = {"red"}', "{};", 3),
        ("= 5;", ";", 1),
        ('"red", "green"', "};", 0),
        ("myVar", " = 5;", 0),
        ("code", "   ", 0),
        # beyond the original: the first line re-types the whole rest of the line
        ("x, y):", "):", 2),
        ("x, y):\n    pass", "):", 2),
        # only the first line counts
        ("a\n)", ")", 0),
    ],
)
def test_replace_length(suggestion: str, right: str, expected: int) -> None:
    assert replace_length(suggestion, right) == expected
