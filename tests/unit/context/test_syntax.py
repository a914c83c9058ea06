"""SyntaxChecker: grammar lookup, error and definition counts, a missing grammar skips."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from qodeassist_lsp.context.syntax import GRAMMARS, SyntaxChecker, grammar_name


@pytest.mark.parametrize(
    ("language_id", "path", "grammar"),
    [
        ("python", "", "python"),
        ("", "/p/a.hpp", "cpp"),
        ("typescriptreact", "/p/a.txt", "tsx"),
        ("", "/p/a.lua", None),
        ("plaintext", "", None),
    ],
)
def test_grammar_name_by_language_id_then_extension(language_id, path, grammar) -> None:
    assert grammar_name(language_id, path) == grammar


@pytest.mark.parametrize("grammar", sorted(GRAMMARS))
def test_every_listed_grammar_is_installed(grammar: str) -> None:
    # The grammar wheels are dependencies: a missing one would silently skip the parse check.
    assert SyntaxChecker().parser_for(grammar) is not None


@pytest.mark.parametrize(
    ("grammar", "text", "errors", "definitions"),
    [
        ("python", "def f(x):\n    return x\n", 0, 1),
        ("python", "def f(x)\n    return x\n", 1, None),
        ("python", "1.0, 2.0, 3.0\n", 0, 0),
        ("cpp", "int f(int x) { return x; }\nclass A {};\n", 0, 2),
        ("cpp", "int f(int x) { return x;\n", 1, None),
        ("rust", "fn f() {}\nstruct S;\n", 0, 2),
        ("go", "package m\nfunc f() {}\n", 0, 1),
        ("javascript", "function f() {}\nclass A { m() {} }\n", 0, 3),
        ("java", "class A { void m() {} }\n", 0, 2),
        ("typescript", "function f(): number { return 1 }\n", 0, 1),
    ],
)
def test_summarise_counts_errors_and_definitions(grammar, text, errors, definitions) -> None:
    summary = SyntaxChecker().summarise(grammar, text)
    assert summary is not None
    assert summary.errors >= 1 if errors else summary.errors == 0
    if definitions is not None:  # a broken text's definitions depend on error recovery
        assert summary.definitions == definitions


def test_missing_grammar_wheel_gives_none_and_is_asked_once() -> None:
    asked: list[str] = []

    def loader(name: str) -> Any:
        asked.append(name)
        if name == "tree_sitter_python":
            raise ImportError("No module named 'tree_sitter_python'")
        return importlib.import_module(name)

    checker = SyntaxChecker(loader)
    assert checker.summarise("python", "x = 1\n") is None
    assert checker.summarise("python", "y = 2\n") is None
    assert asked.count("tree_sitter_python") == 1
    assert checker.summarise("no-such-language", "x") is None


@pytest.mark.parametrize(
    ("grammar", "text", "names"),
    [
        (
            "python",
            "X = 1\nclass A:\n    y = 2\n    def m(self):\n        z = 3\n        def h(): pass\n",
            [("X", False), ("A", False), ("A.y", False), ("A.m", False), ("A.m.h", True)],
        ),
        (
            "cpp",
            "int *f(int x) { return x; }\nstruct S { int a; };\nstruct S s;\n",
            [("f", False), ("S", False)],
        ),
        ("rust", "impl Foo { fn m(&self) {} }\n", [("Foo", False), ("Foo.m", False)]),
        (
            "javascript",
            "class A { m() {} }\nfunction g() { function h() {} }\n",
            [("A", False), ("A.m", False), ("g", False), ("g.h", True)],
        ),
    ],
)
def test_definitions_are_named_and_qualified(grammar, text, names) -> None:
    found = SyntaxChecker().definitions(grammar, text)
    assert found is not None
    assert [(d.name, d.local) for d in found] == names


def test_definitions_without_a_grammar_is_none() -> None:
    assert SyntaxChecker(loader=_no_grammar).definitions("python", "x = 1") is None


def _no_grammar(name: str) -> Any:
    raise ImportError(name)
