"""The cold window: a file the local model has not read yet gets a short prefix that then grows.

Runs on the completion service's harness (``test_completion_service``), whose provider is at a
loopback URL: a model on this machine.
"""

from __future__ import annotations

from qodeassist_lsp.features.completion.cold_window import statement_start, window_start
from tests.unit.features.completion.test_completion_service import (
    Harness,
    completer_agent,
    harness,
)

__all__ = ["completer_agent", "harness"]  # the fixtures, imported for the tests below

LINES = [f"value_{i} = {i}" for i in range(120)]


def at(line: int) -> str:
    """The document with the cursor at the start of ``line`` (its text typed on from there)."""
    return "\n".join([*LINES[:line], "|" + LINES[line], *LINES[line + 1 :]]) + "\n"


def first_line(prompt: str) -> str:
    return prompt.split("\n", 1)[0]


async def test_the_first_request_reads_a_short_window_that_stays_put(harness: Harness) -> None:
    harness.use(lines_before=50)
    for line in (40, 41, 45, 52):
        harness.answer("x\n")
        await harness.complete(at(line))
    # 16 lines above line 40, kept while the cursor works down: each prompt extends the last.
    assert [first_line(b["prompt"]) for b in harness.bodies] == ["value_24 = 24"] * 4
    harness.answer("x\n")
    await harness.complete(at(100))  # a jump: a new cold window
    harness.answer("x\n")
    await harness.complete(at(10))  # above the window: a new one
    assert [first_line(b["prompt"]) for b in harness.bodies[4:]] == ["value_84 = 84", "value_0 = 0"]


async def test_the_usual_window_takes_over_once_it_starts_lower(harness: Harness) -> None:
    harness.use(lines_before=30)  # stepped by 7: at line 62 it starts at line 28
    for line in (40, 50, 56, 62):
        harness.answer("x\n")
        await harness.complete(at(line))
    assert [first_line(b["prompt"]) for b in harness.bodies] == [
        "value_24 = 24",
        "value_24 = 24",
        "value_24 = 24",
        "value_28 = 28",
    ]


async def test_zero_turns_it_off(harness: Harness) -> None:
    harness.use(lines_before=50, local_cold_lines_before=0)
    harness.answer("x\n")
    await harness.complete(at(60))
    assert first_line(harness.bodies[0]["prompt"]) == "value_0 = 0"  # 50 lines and a step more


FUNCTION = [
    "import math",
    "LIMIT = 10",  # not only the file's head above: see test_the_window_takes_in_a_short_head
    "",
    "def long_function(numbers):",
    '    """Sum the numbers."""',
    *[f"    total_{i} = {i}" for i in range(30)],
    "    return total_29",
]


async def test_the_window_starts_at_the_function_it_cuts_into(harness: Harness) -> None:
    # Issue 46.3: a window cut 16 lines above the cursor started inside the function, below
    # its signature; the model then wrote code for another function. It now starts at the
    # top-level statement its first line is in (within the usual window).
    harness.use(lines_before=50)
    line = FUNCTION.index("    total_25 = 25")
    text = "\n".join([*FUNCTION[:line], "|" + FUNCTION[line], *FUNCTION[line + 1 :]]) + "\n"
    harness.answer("x\n")
    await harness.complete(text)
    assert first_line(harness.bodies[0]["prompt"]) == "def long_function(numbers):"


def test_statement_start_finds_the_column_0_line_above() -> None:
    python = "\n".join(FUNCTION)
    assert statement_start(python, 20, 0) == 3  # the def, not the import
    assert statement_start(python, 20, 10) == 20  # not within the usual window: left alone
    assert statement_start(python, 0, 0) == 0


def test_statement_start_skips_a_lone_brace_and_stops_after_a_closed_statement() -> None:
    c = "int f(void)\n{\n    return 0;\n}\n\nint g(void)\n{\n    int a = 1;\n    int b = 2;\n"
    assert statement_start(c, 8, 0) == 5  # g's signature, above its lone "{"
    assert statement_start(c, 4, 0) == 4  # between f's "}" and g: already between statements
    lua = "local function f()\n  return 1\nend\n  \nlocal x = 1\n"
    assert statement_start(lua, 3, 0) == 3
    assert statement_start(lua, 1, 0) == 0


HELPER = [
    "import math",
    "LIMIT = 10",  # not only the file's head above: see test_the_window_takes_in_a_short_head
    "",
    "def is_small(value):",
    '    """Whether value is small."""',
    "    return value < 10",
    "",
    "",
    "def count_small(numbers):",
    '    """Count the small numbers.',
    *[f"    line {i} of the docstring" for i in range(20)],
    '    """',
    "    count = 0",
    "    for number in numbers:",
    "        if is_small(number):",
    "            count += 1",
    "    return count",
]


async def test_the_window_keeps_the_function_called_right_above(harness: Harness) -> None:
    # Issue 46.3 (seed 17's one loss to the raw model): cut at the cursor's function, the
    # window left out the helper defined right above it, which the function calls.
    harness.use(lines_before=50)
    line = HELPER.index("    count = 0")
    text = "\n".join([*HELPER[:line], "|" + HELPER[line], *HELPER[line + 1 :]]) + "\n"
    harness.answer("x\n")
    await harness.complete(text)
    assert first_line(harness.bodies[0]["prompt"]) == "def is_small(value):"


def test_window_start_adds_a_definition_only_when_the_statement_uses_it() -> None:
    text = "\n".join(HELPER)
    line = HELPER.index("    count = 0")
    assert window_start(text, line - 16, 0, line) == 3  # is_small, called below the cursor
    unused = text.replace("if is_small(number):", "if number < 10:")
    assert window_start(unused, line - 16, 0, line) == 8  # the cursor's function only
    assert window_start(text, line - 16, 5, line) == 8  # above the usual window: left out
    decorated = text.replace("def is_small", "@cache\ndef is_small")
    assert window_start(decorated, line - 15, 0, line + 1) == 3  # from the decorator
    js = (
        "function isSmall(v) {\n  return v < 10;\n}\n\nfunction count(xs) {\n"
        + "\n".join(f"  // {i}" for i in range(20))
        + "\n  return xs.filter(isSmall).length;\n}\n"
    )
    assert window_start(js, 6, 0, 24) == 0


def test_the_window_takes_in_a_short_head() -> None:
    # Issue 46.3: the raw model on the whole file answered better than the server on a window
    # that left out the one to three import and blank lines above the cursor's function
    # (HumanEval seeds 268551 and 913407: 5 tasks lost, 1 won); a prompt now starts where the
    # file does when only its head is above.
    text = "\n".join(HELPER).replace("LIMIT = 10", "# counting")
    line = HELPER.index("    count = 0")
    assert window_start(text, line - 16, 0, line) == 0
    c = "#include <stdio.h>\n\nint f(void)\n{\n" + "    x();\n" * 20
    assert window_start(c, 6, 0, 22) == 0
    lua = "local util = require('util')\n\nlocal function f()\n" + "  x()\n" * 20
    assert window_start(lua, 6, 0, 22) == 0
    assert window_start(text, line - 16, 1, line) == 3  # the file's top outside the window
    long_head = "\n".join(["import os"] * 13) + "\n" + text
    assert window_start(long_head, line - 3, 0, line + 13) == 16  # a head of 16 lines: kept out
