"""FileParseCheck: the whole file is judged before vs after, tree-sitter and Python's compiler."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.context.parse_check import (
    FileParseCheck,
    file_parse_check,
    python_compile_error,
)

CLASS = "class Box:\n    def area(self):\n        return 1\n\n    def grow(self):\n        pass\n"


def compare(before: str | None, after: str, **kw: str):
    kw.setdefault("language_id", "python")
    return FileParseCheck().compare(before, after, **kw)


def test_an_indentation_error_tree_sitter_lets_through_is_broken() -> None:
    after = CLASS.replace(
        "    def area(self):\n        return 1\n", "def f(x):\n        return x\n"
    )
    verdict = compare(CLASS, after)
    assert verdict.status == "broken"
    assert "IndentationError" in verdict.reason and "(line 2)" in verdict.reason


def test_tree_sitter_errors_are_counted_over_the_whole_file() -> None:
    verdict = compare(CLASS, CLASS.replace("def grow(self):", "def grow(self"))
    assert (
        verdict.status == "broken" and "syntax error(s) after the change (python)" in verdict.reason
    )


def test_a_good_change_is_ok_and_a_broken_file_is_not_held_against_it() -> None:
    assert compare(CLASS, CLASS.replace("return 1", "return 2")).status == "ok"
    broken = "def f(:\n    pass\n" + CLASS
    assert compare(broken, broken.replace("return 1", "return 2")).status == "ok"


def test_a_new_file_is_judged_on_its_own() -> None:
    assert compare(None, "x = 1\n").status == "ok"
    assert compare(None, "  x = 1\n").status == "broken"


def test_other_grammars_and_languages_without_one() -> None:
    c = "int f(void) { return 1; }\n"
    assert compare(c, c.replace(";", ""), language_id="c").status == "broken"
    assert compare(c, c.replace("1", "2"), language_id="c").status == "ok"
    assert compare("x", "(((", language_id="lua").status == "unchecked"


def test_newer_syntax_than_this_python_fails_before_and_is_not_judged() -> None:
    assert python_compile_error("x = (\n") is not None
    assert python_compile_error("def f():\n    return 1\n") is None
    assert python_compile_error("s = '\\d'\n") is None  # a SyntaxWarning is not an error


@pytest.mark.parametrize(
    ("name", "after", "status"),
    [("a.py", "def f(:\n", "broken"), ("a.py", "x = 2\n", "ok"), ("a.txt", "(", "unchecked")],
)
def test_the_check_of_chat_edits_goes_by_extension(name: str, after: str, status: str) -> None:
    assert file_parse_check()(Path("/p") / name, "x = 1\n", after)[0] == status
