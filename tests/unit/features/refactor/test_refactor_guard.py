"""ResultGuard: the answers of issue 15 are refused, ordinary refactors pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.features.refactor.guard import RESTRUCTURING, ResultGuard

FIB = (Path(__file__).parents[4] / "examples" / "fibonacci.py").read_text(encoding="utf-8")
"""The issue's file; its lines 1–5 are the selection."""
NUMBERS = ", ".join(f"{i}.0" for i in range(1, 88))
"""What Gemma 3 270M answered to "Add type hints" on it (issue 15)."""
TYPED = (
    "def fibonacci(n: int) -> int:\n"
    '    """Return the n-th Fibonacci number."""\n'
    "    if n < 2:\n"
    "        return n\n"
    "    return fibonacci(n - 1) + fibonacci(n - 2)\n"
)
C_FILE = "#include <stdio.h>\n\nint add(int a, int b) {\n    return a + b;\n}\n"


def check(new_text: str, text: str = FIB, start: int = 0, end: int | None = None, **kw):
    end = len(text.rstrip("\n")) if end is None else end
    kw.setdefault("language_id", "python")
    return ResultGuard().check(text, start, end, new_text, **kw)


def test_the_issue_answer_is_refused() -> None:
    verdict = check(NUMBERS)
    assert verdict is not None
    assert verdict.kind == "repetition"
    assert "repeats itself" in verdict.reason


def test_a_good_refactor_passes() -> None:
    assert check(TYPED.rstrip("\n")) is None


def test_write_tests_growth_passes() -> None:
    tests = "\n\n".join(
        f"def test_fibonacci_{i}() -> None:\n    assert fibonacci({i}) == {i * 3 % 17}"
        for i in range(12)
    )
    assert check(TYPED + "\n\n" + tests) is None


def test_prose_instead_of_code_is_refused() -> None:
    prose = (
        "This function computes the Fibonacci number for the given input.\n"
        "It uses recursion and returns early for small values.\n"
        "You could add type hints to make it clearer"
    )
    verdict = check(prose, language_id="plaintext", path="")  # no grammar: the prose rule
    assert verdict is not None and verdict.kind == "prose"


def test_comments_are_not_prose() -> None:
    commented = (
        "# Returns the n-th Fibonacci number using recursion for the general case.\n" + TYPED
    )
    assert check(commented.rstrip("\n")) is None


def test_prose_selection_may_stay_prose() -> None:
    text = (
        "This is a long sentence about nothing in particular.\nAnother sentence follows here now.\n"
    )
    assert check("This is a shorter sentence about nothing at all.", text, language_id="") is None


def test_repeated_lines_are_refused() -> None:
    runaway = "def fibonacci(n):\n" + "    return fibonacci(n - 1)\n" * 40
    verdict = check(runaway)
    assert verdict is not None and verdict.kind == "repetition"


def test_a_table_selection_may_stay_a_table() -> None:
    table = "TABLE = [\n" + "".join(f"    {i}, {i * 7}, {i * 13},\n" for i in range(60)) + "]\n"
    new = table.replace("TABLE", "LOOKUP")
    assert check(new, table, language_id="python", instruction="Rename it to LOOKUP") is None


def test_losing_most_of_a_large_selection_is_refused() -> None:
    big = TYPED * 4
    verdict = check("pass", big)
    assert verdict is not None and verdict.kind == "size"


def test_huge_growth_is_refused() -> None:
    body = "\n".join(f"x{i} = compute_value({i}, 'label {i}', factor={i % 7})" for i in range(400))
    verdict = check(body, language_id="", path="")
    assert verdict is not None and verdict.kind == "size"


def test_code_that_no_longer_parses_is_refused() -> None:
    broken = TYPED.replace("def fibonacci(n: int) -> int:", "def fibonacci(n: int) -> int")
    verdict = check(broken)
    assert verdict is not None and verdict.kind == "syntax"
    assert "python" in verdict.reason


def test_lost_definitions_are_refused() -> None:
    verdict = check("fib = lambda n: n if n < 2 else fib(n - 1) + fib(n - 2)")
    assert verdict is not None and verdict.kind == "definitions"
    assert "`fibonacci`" in verdict.reason
    # The name is still defined, by an assignment: nothing is lost.
    assert (
        check("fibonacci = lambda n: n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)") is None
    )


def test_fragment_selection_is_judged_in_its_file() -> None:
    # Only the body of the `if` is selected: alone it would not parse, spliced into the file it does.
    start = FIB.index("return n\n")
    end = start + len("return n")
    assert check("return int(n)", FIB, start, end) is None
    verdict = check("return int(n", FIB, start, end)
    assert verdict is not None and verdict.kind == "syntax"


def test_c_file_by_extension() -> None:
    start = C_FILE.index("int add")
    verdict = check(
        "int add(int a, int b) {\n    return a + b;\n",
        C_FILE,
        start,
        len(C_FILE) - 1,
        language_id="",
        path="/p/add.c",
    )
    assert verdict is not None and verdict.kind == "syntax"


def test_a_file_that_was_broken_is_not_held_against_the_answer() -> None:
    text = "def broken(:\n    pass\n\ndef f(x):\n    return x\n"
    start = text.index("def f")
    assert check("def f(x: int) -> int:\n    return x", text, start, len(text) - 1) is None


@pytest.mark.parametrize("language_id", ["lua", "markdown"])
def test_language_without_grammar_skips_the_parse_check(language_id: str) -> None:
    assert check("end end (((", "x = 1\n", 0, 5, language_id=language_id) is None


def test_insert_is_parse_checked() -> None:
    text = "def f(x):\n    return x\n"
    assert check("def g(y):\n    return y\n", text, len(text), len(text)) is None
    verdict = check("def g(y:\n", text, len(text), len(text))
    assert verdict is not None and verdict.kind == "syntax"


def test_an_unclosed_fence_is_refused_and_a_closed_one_in_markdown_is_not() -> None:
    verdict = check("```python\n" + TYPED)
    assert verdict is not None and verdict.kind == "fence"
    text = "# Usage\n\nCall it.\n"
    example = "# Usage\n\nCall it:\n\n```python\nfibonacci(3)\n```"
    assert check(example, text, language_id="markdown") is None


@pytest.mark.parametrize(
    ("instruction", "restructuring"),
    [
        ("Rename the method to _push", True),
        ("renaming, please", True),
        ("Inline this helper", True),
        ("Extract the loop into a function", True),
        ("Deletion of dead code", True),
        ("Move it into the class", True),
        ("Add type hints", False),
        ("Improve the names of the variables", False),
        ("Refactor the code to improve its quality and maintainability.", False),
        ("Add a docstring; removal of nothing", True),
    ],
)
def test_which_instructions_may_change_definitions(instruction: str, restructuring: bool) -> None:
    assert bool(RESTRUCTURING.search(instruction)) is restructuring
    verdict = check(TYPED.replace("def fibonacci", "def fib"), instruction=instruction)
    assert (verdict is None) is restructuring


WRAP = (
    "def wrap(text, width=70, **kwargs):\n"
    "    w = TextWrapper(width=width, **kwargs)\n"
    "    return w.wrap(text)\n"
)


def test_a_name_the_answer_no_longer_binds_is_refused() -> None:
    # SmolLM2 answered "Add type hints" on textwrap.wrap by dropping **kwargs from the signature.
    dropped = WRAP.replace(", **kwargs):", "):")
    verdict = check(dropped, WRAP, 0, len(WRAP))
    assert verdict is not None and verdict.kind == "dangling" and "`kwargs`" in verdict.reason


def test_names_the_file_never_bound_are_left_to_the_linter() -> None:
    assert check(WRAP.replace("TextWrapper", "textwrap.TextWrapper"), WRAP, 0, len(WRAP)) is None
    starred = "from textwrap import *\n" + WRAP
    dropped = starred.replace(", **kwargs):", "):")
    assert check(dropped, starred, 0, len(starred)) is None  # a star import binds unknown names


def test_example_usage_after_a_definition_is_a_new_program() -> None:
    example = TYPED + "\n\n# Example usage:\nprint(fibonacci(10))\n"
    verdict = check(example)
    assert (
        verdict is not None
        and verdict.kind == "program"
        and "print(fibonacci(10))" in verdict.reason
    )
    main_guard = TYPED + '\n\nif __name__ == "__main__":\n    print(fibonacci(10))\n'
    assert check(main_guard) is None  # runs only as a script: "write tests" may add one
    script = "import sys\n\nprint(sys.argv)\n"
    assert check("print(sys.argv[1:])", script, script.index("print"), len(script) - 1) is None
